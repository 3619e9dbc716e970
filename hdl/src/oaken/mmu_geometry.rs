//! Oaken MMU sizes and encodings: the datapath and port widths, the
//! response kinds and command opcodes (spec §10.11), and the geometry of one
//! instance derived from its parameters (stream capacities, table sizes and
//! the memories of spec §10.9), shared by the MMU's blocks (`mmu.rs`,
//! `mmu_*.rs`), `rtl-gen` and the testbench. No logic here.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (dense and sparse
//! management tables). Spec: docs/spec.md §10.9, §10.11.

use crate::prim::ram::MemInfo;
use sim::oaken::mmu::MmuParams;

/// Datapath width: byte offsets, fills, physical addresses (all < 2^28
/// because phys_pages * page_bytes <= 2^28), counters.
pub const D: usize = 32;
/// Memory address width (the largest table has fewer than 2^47 words).
pub const MA: usize = 48;
/// Counts-memory port: up to 64 segments of 8 bits.
pub const CW: usize = 512;
/// Response field widths (spec §10.11).
pub const STREAM_BITS: usize = 10;
pub const LEN_BITS: usize = 13;
pub const TOKEN_BITS: usize = 17;
pub const PAGES_BITS: usize = 17;

/// Response beat kinds (`rsp_kind`).
pub const KIND_DESC: u64 = 0;
pub const KIND_COUNTS: u64 = 1;
pub const KIND_STATUS: u64 = 2;

/// Command opcodes (`cmd_op`); 3 is malformed (`BadCommand`).
pub const OP_WRITE: u64 = 0;
pub const OP_READ: u64 = 1;
pub const OP_FREE: u64 = 2;

/// Sizes of one MMU instance, derived from its parameters.
#[derive(Clone, Debug)]
pub struct MmuGeometry {
    pub p: MmuParams,
    pub segments: usize,
    /// Sequence slots times layers: (slot, layer) rows.
    pub rows: usize,
    pub streams: usize,
    /// Page-list capacities of the metadata, dense and sparse streams.
    pub cap_m: u64,
    pub cap_d: u64,
    pub cap_s: u64,
    /// Page-table words per (slot, layer).
    pub row_words: u64,
    pub page_bits: usize,
    pub fill_bits: usize,
    pub token_bits: usize,
}

fn clog2(n: u64) -> usize {
    sim::oaken::mmu::clog2(n) as usize
}

/// The value mask of a register whose largest value is `v`: ones up to
/// v's top bit (see the `k_m_*` constants).
pub fn mask(v: u64) -> u64 {
    let w = (64 - v.leading_zeros() as usize).max(1);
    (1u64 << w) - 1
}

impl MmuGeometry {
    pub fn new(p: &MmuParams) -> MmuGeometry {
        p.check().expect("parameters are checked by the generator");
        let (cap_m, cap_d, cap_s) = (p.capacity(0), p.capacity(1), p.capacity(2));
        MmuGeometry {
            p: p.clone(),
            segments: p.segments(),
            rows: p.max_seqs * p.layers,
            streams: p.streams(),
            cap_m,
            cap_d,
            cap_s,
            row_words: cap_m + p.heads as u64 * (cap_d + cap_s),
            page_bits: clog2(p.phys_pages as u64).max(1),
            fill_bits: clog2(p.max_seq_len as u64 * p.head_dim as u64 + 1),
            token_bits: clog2(p.max_seq_len as u64 + 1),
        }
    }

    /// The largest fill of any stream, bytes.
    pub fn fill_max(&self) -> u64 {
        let p = &self.p;
        p.max_seq_len as u64 * p.meta_bytes.max(p.dense_bytes).max(p.head_dim) as u64
    }

    /// The memories of an instance named `module` (spec §10.9 tables).
    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        let p = &self.p;
        let m = |name: &str, depth: u64, width: usize| MemInfo {
            module: format!("{module}_{name}_ram"),
            name: name.to_string(),
            depth: depth as usize,
            width,
        };
        let rows = self.rows as u64;
        let heads = p.heads as u64;
        vec![
            m("pages", rows * self.row_words, self.page_bits),
            m("fills", rows * heads, self.fill_bits),
            m("counts", rows * heads * p.max_seq_len as u64, 8 * self.segments),
            m("free_list", p.phys_pages as u64, self.page_bits),
            m("tokens", rows, self.token_bits),
        ]
    }
}
