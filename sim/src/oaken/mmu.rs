//! Bit-exact model of the Oaken memory management unit.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit", (1) address and
//! transfer-size management, (2) read-write granularity and order.
//! Spec: docs/spec.md §10.
//!
//! Transaction level: each command (`write`, `read`, `free`, `reset`) either
//! returns its full response or one error and leaves the state untouched.
//! The RTL must produce the same descriptors, in the same order, for the
//! same command sequence, so every choice below follows the spec's text.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

use super::params::SEGMENT;
use crate::param_def::{check, def, Allowed::*, ParamDef, Value::*};

/// AXI4: a burst never crosses a 4 KB boundary and has at most 256 beats.
pub const AXI_BOUNDARY: u64 = 4096;
pub const AXI_MAX_BEATS: u64 = 256;
/// Width of a sequence id held by a slot (spec §10.3).
pub const SEQ_ID_BITS: u64 = 16;
/// Width of one stored segment count (spec §10.9).
pub const COUNT_BITS: u64 = 8;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct MmuParams {
    pub page_bytes: usize,
    pub phys_pages: usize,
    pub max_seqs: usize,
    pub layers: usize,
    pub heads: usize,
    pub max_seq_len: usize,
    pub addr_bits: u32,
    pub bus_bytes: usize,
    pub head_dim: usize,
    pub dense_bytes: usize,
    pub meta_bytes: usize,
}

impl Default for MmuParams {
    /// Small enough that the on-chip tables stay at 69,429 bits (spec §10.1).
    fn default() -> Self {
        MmuParams {
            page_bytes: 4096,
            phys_pages: 256,
            max_seqs: 4,
            layers: 1,
            heads: 1,
            max_seq_len: 1024,
            addr_bits: 32,
            bus_bytes: 32,
            head_dim: 128,
            dense_bytes: 64,
            meta_bytes: 12,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmuParamError(pub String);

impl fmt::Display for MmuParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MmuParamError {}

/// Least `w` with `2^w >= n` (spec §10.1).
pub fn clog2(n: u64) -> u64 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros() as u64
    }
}

/// The parameters of spec §10.1, in table order: `check` reads its ranges
/// from here.
pub const MMU_PARAMS: &[ParamDef] = &[
    ParamDef { name: "page-bytes", default: Int(4096), allowed: Pow2(64, 4096), doc: "bytes per physical page" },
    ParamDef { name: "phys-pages", default: Int(256), allowed: Range(2, 65536), doc: "physical pages in the free list" },
    ParamDef { name: "max-seqs", default: Int(4), allowed: Range(1, 256), doc: "sequence slots" },
    ParamDef { name: "layers", default: Int(1), allowed: Range(1, 256), doc: "decoder layers per sequence" },
    ParamDef { name: "heads", default: Int(1), allowed: Range(1, 256), doc: "KV heads per layer" },
    ParamDef { name: "max-seq-len", default: Int(1024), allowed: Range(1, 65536), doc: "tokens a sequence may hold" },
    ParamDef { name: "addr-bits", default: Int(32), allowed: Range(7, 48), doc: "physical byte address width" },
    ParamDef { name: "bus-bytes", default: Int(32), allowed: Pow2(1, 128), doc: "AXI data bus width in bytes (burst beats)" },
    ParamDef { name: "head-dim", default: Int(128), allowed: Range(1, 4096), doc: "elements per head: a token's sparse bytes at most" },
    ParamDef { name: "dense-bytes", default: Int(64), allowed: Range(1, 4096), doc: "bytes of one head's dense slots per token" },
    ParamDef { name: "meta-bytes", default: Int(12), allowed: Range(1, 64), doc: "bytes of one token's metadata" },
];

/// The rules between parameters that `check` holds in code.
pub const MMU_RULES: &[&str] =
    &["addr-bits >= clog2(phys-pages x page-bytes), to address every page", "bus-bytes <= page-bytes"];

/// On-chip table bits (spec §10.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableBits {
    pub dense: u64,
    pub sparse_pages: u64,
    pub sparse_fills: u64,
    pub sparse_counts: u64,
    pub free_list: u64,
    pub slots: u64,
}

impl TableBits {
    pub fn total(&self) -> u64 {
        self.dense + self.sparse_pages + self.sparse_fills + self.sparse_counts + self.free_list + self.slots
    }
}

impl MmuParams {
    /// Checks every rule of spec §10.1, in table order; the message is one line.
    pub fn check(&self) -> Result<(), MmuParamError> {
        let c = |name: &str, v: usize| check(MMU_PARAMS, name, v).map_err(MmuParamError);
        c("page-bytes", self.page_bytes)?;
        c("phys-pages", self.phys_pages)?;
        c("max-seqs", self.max_seqs)?;
        c("layers", self.layers)?;
        c("heads", self.heads)?;
        c("max-seq-len", self.max_seq_len)?;
        let need = clog2(self.phys_bytes());
        if (self.addr_bits as u64) < need {
            let hi = match def(MMU_PARAMS, "addr-bits").allowed {
                Range(_, hi) => hi,
                a => unreachable!("addr-bits is a range, not {a}"),
            };
            return Err(MmuParamError(format!(
                "addr-bits must be in {need}..={hi} to address phys-pages * page-bytes = {} bytes, got {}",
                self.phys_bytes(),
                self.addr_bits
            )));
        }
        c("addr-bits", self.addr_bits as usize)?;
        c("bus-bytes", self.bus_bytes)?;
        if self.bus_bytes > self.page_bytes {
            return Err(MmuParamError(format!(
                "bus-bytes must be a power of two in 1..={}, got {}",
                self.page_bytes, self.bus_bytes
            )));
        }
        c("head-dim", self.head_dim)?;
        c("dense-bytes", self.dense_bytes)?;
        c("meta-bytes", self.meta_bytes)?;
        Ok(())
    }

    pub fn phys_bytes(&self) -> u64 {
        self.phys_pages as u64 * self.page_bytes as u64
    }

    pub fn segments(&self) -> usize {
        self.head_dim.div_ceil(SEGMENT)
    }

    /// Elements in segment `s`: the largest legal count (the last may be short).
    pub fn segment_len(&self, s: usize) -> usize {
        (self.head_dim - s * SEGMENT).min(SEGMENT)
    }

    /// Streams per (slot, layer): metadata, then dense h and sparse h per head.
    pub fn streams(&self) -> usize {
        1 + 2 * self.heads
    }

    /// Largest token of stream `i` (spec §10.2).
    pub fn max_token_bytes(&self, i: usize) -> usize {
        match Stream::from_index(i) {
            Stream::Meta => self.meta_bytes,
            Stream::Dense(_) => self.dense_bytes,
            Stream::Sparse(_) => self.head_dim,
        }
    }

    /// Pages a stream may hold: ceil(max_seq_len * B / page_bytes).
    pub fn capacity(&self, i: usize) -> u64 {
        (self.max_seq_len as u64 * self.max_token_bytes(i) as u64).div_ceil(self.page_bytes as u64)
    }

    pub fn table_bits(&self) -> TableBits {
        let u = |x: usize| x as u64;
        let pn = clog2(u(self.phys_pages));
        let s = u(self.max_seqs) * u(self.layers);
        let (cm, cd, cs) = (self.capacity(0), self.capacity(1), self.capacity(2));
        TableBits {
            dense: s * (cm + u(self.heads) * cd) * pn,
            sparse_pages: s * u(self.heads) * cs * pn,
            sparse_fills: s * u(self.heads) * clog2(u(self.max_seq_len) * u(self.head_dim) + 1),
            sparse_counts: s * u(self.heads) * u(self.max_seq_len) * u(self.segments()) * COUNT_BITS,
            free_list: u(self.phys_pages) * pn + 2 * pn + clog2(u(self.phys_pages) + 1),
            slots: u(self.max_seqs) * (SEQ_ID_BITS + 2) + s * clog2(u(self.max_seq_len) + 1),
        }
    }

    /// Elements the tables can describe when every slot is full.
    pub fn capacity_elements(&self) -> u64 {
        [self.max_seqs, self.layers, self.heads, self.max_seq_len, self.head_dim]
            .iter()
            .map(|&x| x as u64)
            .product()
    }

    /// On-chip bits per stored element at full capacity (spec §10.9).
    pub fn table_bits_per_element(&self) -> f64 {
        self.table_bits().total() as f64 / self.capacity_elements() as f64
    }

    /// Beats of a burst (spec §10.7).
    pub fn beats(&self, d: Desc) -> u64 {
        (d.addr % self.bus_bytes as u64 + d.len as u64).div_ceil(self.bus_bytes as u64)
    }

    /// Legal AXI4 burst inside physical memory (spec §10.7).
    pub fn legal(&self, d: Desc) -> bool {
        d.len >= 1
            && self.beats(d) <= AXI_MAX_BEATS
            && d.addr / AXI_BOUNDARY == (d.addr + d.len as u64 - 1) / AXI_BOUNDARY
            && d.addr + d.len as u64 <= self.phys_bytes()
    }
}

/// One burst: physical byte address and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Desc {
    pub addr: u64,
    pub len: u32,
}

impl Desc {
    pub fn end(&self) -> u64 {
        self.addr + self.len as u64
    }
}

/// A stream of one (slot, layer), spec §10.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    Meta,
    Dense(u16),
    Sparse(u16),
}

impl Stream {
    /// Position in stream order: 0 metadata, 1 + 2h dense h, 2 + 2h sparse h.
    pub fn index(self) -> usize {
        match self {
            Stream::Meta => 0,
            Stream::Dense(h) => 1 + 2 * h as usize,
            Stream::Sparse(h) => 2 + 2 * h as usize,
        }
    }

    pub fn from_index(i: usize) -> Stream {
        match i {
            0 => Stream::Meta,
            _ if i % 2 == 1 => Stream::Dense(((i - 1) / 2) as u16),
            _ => Stream::Sparse(((i - 2) / 2) as u16),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamDesc {
    pub stream: Stream,
    pub desc: Desc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteResp {
    pub slot: usize,
    /// Token index of the write: tokens already written to (seq, layer).
    pub token: u32,
    /// The write opened the id in `slot`.
    pub opened: bool,
    pub pages_taken: u32,
    /// Placement descriptors, in stream order.
    pub places: Vec<StreamDesc>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadResp {
    pub tokens: u32,
    /// Metadata, then dense `head`, then sparse `head`.
    pub descs: Vec<StreamDesc>,
    /// Segment counts of `head`, token-major: `tokens * segments` bytes.
    pub counts: Vec<u8>,
}

/// What makes a command malformed (all report code 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadField {
    Layer(usize),
    Head(usize),
    CountsLen(usize),
    Count { head: usize, segment: usize, count: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmuError {
    BadCommand(BadField),
    NoSlot { seq: u16 },
    SeqTooLong { seq: u16, layer: usize },
    OutOfPages { need: u64, free: u64 },
    UnknownSeq { seq: u16 },
    DoubleFree { seq: u16 },
}

impl MmuError {
    /// Response status code; also the precedence, lowest first (spec §10.8).
    pub fn code(&self) -> u8 {
        match self {
            MmuError::BadCommand(_) => 1,
            MmuError::NoSlot { .. } => 2,
            MmuError::SeqTooLong { .. } => 3,
            MmuError::OutOfPages { .. } => 4,
            MmuError::UnknownSeq { .. } => 5,
            MmuError::DoubleFree { .. } => 6,
        }
    }
}

impl fmt::Display for MmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MmuError::BadCommand(BadField::Layer(l)) => write!(f, "bad command: layer {l} out of range"),
            MmuError::BadCommand(BadField::Head(h)) => write!(f, "bad command: head {h} out of range"),
            MmuError::BadCommand(BadField::CountsLen(n)) => {
                write!(f, "bad command: {n} segment counts, expected heads * segments")
            }
            MmuError::BadCommand(BadField::Count { head, segment, count }) => write!(
                f,
                "bad command: count {count} of head {head} segment {segment} exceeds the segment's elements"
            ),
            MmuError::NoSlot { seq } => write!(f, "no free sequence slot to open sequence {seq}"),
            MmuError::SeqTooLong { seq, layer } => {
                write!(f, "sequence {seq} layer {layer} already holds max-seq-len tokens")
            }
            MmuError::OutOfPages { need, free } => write!(f, "out of pages: need {need}, {free} free"),
            MmuError::UnknownSeq { seq } => write!(f, "sequence {seq} is not open"),
            MmuError::DoubleFree { seq } => write!(f, "sequence {seq} is already freed"),
        }
    }
}

impl std::error::Error for MmuError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    Empty,
    Open,
    Freed,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct StreamState {
    pages: Vec<u32>,
    fill: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct LayerState {
    tokens: u32,
    streams: Vec<StreamState>,
    /// Per head, token-major segment counts.
    counts: Vec<Vec<u8>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Slot {
    id: u16,
    state: SlotState,
    /// Empty unless open: the tables' content for a slot that is not open
    /// is never read, so the model does not keep it.
    layers: Vec<LayerState>,
}

impl Slot {
    fn reset() -> Slot {
        Slot { id: 0, state: SlotState::Empty, layers: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mmu {
    p: MmuParams,
    slots: Vec<Slot>,
    free: VecDeque<u32>,
    /// Checker state, not MMU state: descriptors handed out and the first
    /// illegal one. Kept across `reset` ("every descriptor ever returned").
    issued: u64,
    first_illegal: Option<Desc>,
}

/// Cuts one contiguous range into legal bursts, greedily (spec §10.7).
pub fn axi_bursts(addr: u64, len: u64, bus_bytes: u64) -> Vec<Desc> {
    let mut out = Vec::new();
    let (mut a, mut rest) = (addr, len);
    while rest > 0 {
        let n = rest
            .min(AXI_BOUNDARY - a % AXI_BOUNDARY)
            .min(AXI_MAX_BEATS * bus_bytes - a % bus_bytes);
        out.push(Desc { addr: a, len: n as u32 });
        a += n;
        rest -= n;
    }
    out
}

impl Mmu {
    pub fn new(p: MmuParams) -> Result<Mmu, MmuParamError> {
        p.check()?;
        let mut m = Mmu { p, slots: Vec::new(), free: VecDeque::new(), issued: 0, first_illegal: None };
        m.reset();
        Ok(m)
    }

    pub fn params(&self) -> &MmuParams {
        &self.p
    }

    /// All slots empty, the free list back to 0, 1, ..., phys_pages - 1.
    pub fn reset(&mut self) {
        self.slots = vec![Slot::reset(); self.p.max_seqs];
        self.free = (0..self.p.phys_pages as u32).collect();
    }

    pub fn free_pages(&self) -> usize {
        self.free.len()
    }

    /// The free list, head first.
    pub fn free_list(&self) -> Vec<u32> {
        self.free.iter().copied().collect()
    }

    fn open_slot(&self, seq: u16) -> Option<usize> {
        self.slots.iter().position(|s| s.state == SlotState::Open && s.id == seq)
    }

    pub fn slot(&self, i: usize) -> (u16, SlotState) {
        (self.slots[i].id, self.slots[i].state)
    }

    /// Pages owned by an open id, None if it is not open.
    pub fn owned_pages(&self, seq: u16) -> Option<usize> {
        let s = &self.slots[self.open_slot(seq)?];
        Some(s.layers.iter().flat_map(|l| &l.streams).map(|st| st.pages.len()).sum())
    }

    /// Tokens written to (seq, layer), None if the id is not open.
    pub fn tokens(&self, seq: u16, layer: usize) -> Option<u32> {
        let s = &self.slots[self.open_slot(seq)?];
        s.layers.get(layer).map(|l| l.tokens)
    }

    /// Descriptors handed out so far (reads and writes).
    pub fn issued(&self) -> u64 {
        self.issued
    }

    fn fresh_layer(&self) -> LayerState {
        LayerState {
            tokens: 0,
            streams: vec![StreamState::default(); self.p.streams()],
            counts: vec![Vec::new(); self.p.heads],
        }
    }

    /// Pages a stream must take to grow by `b` bytes (spec §10.5 step 1).
    fn need(&self, fill: u64, b: u64) -> u64 {
        let pb = self.p.page_bytes as u64;
        (fill + b).div_ceil(pb) - fill.div_ceil(pb)
    }

    /// Merged, cut descriptors of virtual range [v0, v1) (spec §10.7).
    fn descs(&mut self, stream: Stream, pages: &[u32], v0: u64, v1: u64, out: &mut Vec<StreamDesc>) {
        let pb = self.p.page_bytes as u64;
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let mut v = v0;
        while v < v1 {
            let off = v % pb;
            let n = (pb - off).min(v1 - v);
            let phys = pages[(v / pb) as usize] as u64 * pb + off;
            match ranges.last_mut() {
                Some((a, l)) if *a + *l == phys => *l += n,
                _ => ranges.push((phys, n)),
            }
            v += n;
        }
        for (a, l) in ranges {
            for d in axi_bursts(a, l, self.p.bus_bytes as u64) {
                self.issued += 1;
                if self.first_illegal.is_none() && !self.p.legal(d) {
                    self.first_illegal = Some(d);
                }
                out.push(StreamDesc { stream, desc: d });
            }
        }
    }

    fn bytes_of(&self, i: usize, counts: &[u8]) -> u64 {
        let seg = self.p.segments();
        match Stream::from_index(i) {
            Stream::Meta => self.p.meta_bytes as u64,
            Stream::Dense(_) => self.p.dense_bytes as u64,
            Stream::Sparse(h) => {
                counts[h as usize * seg..(h as usize + 1) * seg].iter().map(|&c| c as u64).sum()
            }
        }
    }

    /// Stores one token of one layer (spec §10.5); checks in the order of §10.8.
    pub fn write(&mut self, seq: u16, layer: usize, counts: &[u8]) -> Result<WriteResp, MmuError> {
        let seg = self.p.segments();
        if layer >= self.p.layers {
            return Err(MmuError::BadCommand(BadField::Layer(layer)));
        }
        if counts.len() != self.p.heads * seg {
            return Err(MmuError::BadCommand(BadField::CountsLen(counts.len())));
        }
        for (i, &c) in counts.iter().enumerate() {
            if c as usize > self.p.segment_len(i % seg) {
                return Err(MmuError::BadCommand(BadField::Count { head: i / seg, segment: i % seg, count: c }));
            }
        }
        let (slot, opened) = match self.open_slot(seq) {
            Some(i) => (i, false),
            None => {
                let pick = |st| self.slots.iter().position(|s| s.state == st);
                match pick(SlotState::Empty).or_else(|| pick(SlotState::Freed)) {
                    Some(i) => (i, true),
                    None => return Err(MmuError::NoSlot { seq }),
                }
            }
        };
        let token = if opened { 0 } else { self.slots[slot].layers[layer].tokens };
        if token as usize >= self.p.max_seq_len {
            return Err(MmuError::SeqTooLong { seq, layer });
        }
        let fills: Vec<u64> = if opened {
            vec![0; self.p.streams()]
        } else {
            self.slots[slot].layers[layer].streams.iter().map(|s| s.fill).collect()
        };
        let need: u64 = (0..self.p.streams()).map(|i| self.need(fills[i], self.bytes_of(i, counts))).sum();
        if need > self.free.len() as u64 {
            return Err(MmuError::OutOfPages { need, free: self.free.len() as u64 });
        }

        // Every check passed: from here on the write cannot fail.
        if opened {
            let layers = (0..self.p.layers).map(|_| self.fresh_layer()).collect();
            self.slots[slot] = Slot { id: seq, state: SlotState::Open, layers };
        }
        let mut places = Vec::new();
        for i in 0..self.p.streams() {
            let b = self.bytes_of(i, counts);
            let fill = fills[i];
            let mut pages = std::mem::take(&mut self.slots[slot].layers[layer].streams[i].pages);
            for _ in 0..self.need(fill, b) {
                pages.push(self.free.pop_front().expect("need checked against the free list"));
            }
            self.descs(Stream::from_index(i), &pages, fill, fill + b, &mut places);
            let st = &mut self.slots[slot].layers[layer].streams[i];
            st.pages = pages;
            st.fill = fill + b;
        }
        let l = &mut self.slots[slot].layers[layer];
        for (h, c) in l.counts.iter_mut().enumerate() {
            c.extend_from_slice(&counts[h * seg..(h + 1) * seg]);
        }
        l.tokens += 1;
        Ok(WriteResp { slot, token, opened, pages_taken: need as u32, places })
    }

    /// Descriptors and counts of all past tokens of (seq, layer, head) (spec §10.6).
    pub fn read(&mut self, seq: u16, layer: usize, head: usize) -> Result<ReadResp, MmuError> {
        if layer >= self.p.layers {
            return Err(MmuError::BadCommand(BadField::Layer(layer)));
        }
        if head >= self.p.heads {
            return Err(MmuError::BadCommand(BadField::Head(head)));
        }
        let slot = self.open_slot(seq).ok_or(MmuError::UnknownSeq { seq })?;
        let l = self.slots[slot].layers[layer].clone();
        let mut descs = Vec::new();
        for st in [Stream::Meta, Stream::Dense(head as u16), Stream::Sparse(head as u16)] {
            let s = &l.streams[st.index()];
            self.descs(st, &s.pages, 0, s.fill, &mut descs);
        }
        Ok(ReadResp { tokens: l.tokens, descs, counts: l.counts[head].clone() })
    }

    /// Returns every page of an open id to the free list's tail (spec §10.9).
    pub fn free(&mut self, seq: u16) -> Result<(), MmuError> {
        let Some(slot) = self.open_slot(seq) else {
            let freed = self.slots.iter().any(|s| s.state == SlotState::Freed && s.id == seq);
            return Err(if freed { MmuError::DoubleFree { seq } } else { MmuError::UnknownSeq { seq } });
        };
        let s = &mut self.slots[slot];
        for l in s.layers.drain(..) {
            for st in l.streams {
                self.free.extend(st.pages);
            }
        }
        s.state = SlotState::Freed;
        Ok(())
    }

    /// The invariants of spec §10.9; the message names the first one broken.
    pub fn check_invariants(&self) -> Result<(), String> {
        let p = &self.p;
        let pb = p.page_bytes as u64;
        let mut owner = vec![0u8; p.phys_pages]; // 1 free, 2 owned
        let mut mark = |pg: u32, what: u8| -> Result<(), String> {
            let o = owner.get_mut(pg as usize).ok_or(format!("page {pg} out of range"))?;
            if *o != 0 {
                return Err(format!("page {pg} held twice"));
            }
            *o = what;
            Ok(())
        };
        for &pg in &self.free {
            mark(pg, 1)?;
        }
        let mut owned = 0usize;
        for (i, s) in self.slots.iter().enumerate() {
            if s.state != SlotState::Open {
                if !s.layers.is_empty() {
                    return Err(format!("slot {i} is not open but keeps tables"));
                }
                continue;
            }
            if self.slots[..i].iter().any(|o| o.state == SlotState::Open && o.id == s.id) {
                return Err(format!("id {} open in two slots", s.id));
            }
            for (li, l) in s.layers.iter().enumerate() {
                if l.tokens as usize > p.max_seq_len {
                    return Err(format!("slot {i} layer {li}: {} tokens", l.tokens));
                }
                for (k, st) in l.streams.iter().enumerate() {
                    let want = match Stream::from_index(k) {
                        Stream::Meta => l.tokens as u64 * p.meta_bytes as u64,
                        Stream::Dense(_) => l.tokens as u64 * p.dense_bytes as u64,
                        Stream::Sparse(h) => l.counts[h as usize].iter().map(|&c| c as u64).sum(),
                    };
                    if st.fill != want {
                        return Err(format!("slot {i} layer {li} stream {k}: fill {} != {want}", st.fill));
                    }
                    if st.pages.len() as u64 != st.fill.div_ceil(pb) || st.pages.len() as u64 > p.capacity(k) {
                        return Err(format!(
                            "slot {i} layer {li} stream {k}: {} pages for fill {}",
                            st.pages.len(),
                            st.fill
                        ));
                    }
                    for &pg in &st.pages {
                        mark(pg, 2)?;
                    }
                    owned += st.pages.len();
                }
                if l.counts.iter().any(|c| c.len() != l.tokens as usize * p.segments()) {
                    return Err(format!("slot {i} layer {li}: counts do not match the token count"));
                }
            }
        }
        if self.free.len() + owned != p.phys_pages {
            return Err(format!("{} free + {owned} owned != {} pages", self.free.len(), p.phys_pages));
        }
        if let Some(d) = self.first_illegal {
            return Err(format!("illegal descriptor handed out: {d:?}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Memory;
    use std::collections::HashMap;

    fn d(addr: u64, len: u32) -> Desc {
        Desc { addr, len }
    }

    /// Descriptors of one stream, as (addr, len).
    fn of(v: &[StreamDesc], s: Stream) -> Vec<Desc> {
        v.iter().filter(|x| x.stream == s).map(|x| x.desc).collect()
    }

    fn ex1() -> MmuParams {
        MmuParams {
            page_bytes: 64,
            phys_pages: 8,
            max_seqs: 2,
            layers: 1,
            heads: 1,
            max_seq_len: 8,
            addr_bits: 9,
            bus_bytes: 4,
            head_dim: 128,
            dense_bytes: 40,
            meta_bytes: 12,
        }
    }

    #[test]
    fn mmu_default_params_and_table_bits() {
        let p = MmuParams::default();
        p.check().unwrap();
        assert_eq!((p.capacity(0), p.capacity(1), p.capacity(2)), (3, 16, 32));
        // spec §10.9, computed by hand from the formulas
        let t = p.table_bits();
        assert_eq!(
            t,
            TableBits {
                dense: 608,
                sparse_pages: 1024,
                sparse_fills: 72,
                sparse_counts: 65536,
                free_list: 2073,
                slots: 116
            }
        );
        assert_eq!(t.total(), 69_429);
        assert_eq!(p.capacity_elements(), 524_288);
        assert!((p.table_bits_per_element() - 0.1324).abs() < 5e-5);
        assert_eq!((clog2(1), clog2(2), clog2(256), clog2(257), clog2(131_073)), (0, 1, 8, 9, 18));
    }

    #[test]
    fn mmu_params_rejects_each_rule() {
        let bad = |f: &dyn Fn(&mut MmuParams)| {
            let mut p = MmuParams::default();
            f(&mut p);
            let e = p.check().unwrap_err();
            assert!(!e.0.contains('\n'));
            assert!(Mmu::new(p).is_err());
            e.0
        };
        assert!(bad(&|p| p.page_bytes = 32).starts_with("page-bytes must be a power of two in 64..=4096"));
        assert!(bad(&|p| p.page_bytes = 8192).starts_with("page-bytes"));
        assert!(bad(&|p| p.page_bytes = 96).starts_with("page-bytes"));
        assert!(bad(&|p| p.phys_pages = 1).starts_with("phys-pages must be in 2..=65536"));
        assert!(bad(&|p| p.phys_pages = 65537).starts_with("phys-pages"));
        assert!(bad(&|p| p.max_seqs = 0).starts_with("max-seqs must be in 1..=256"));
        assert!(bad(&|p| p.max_seqs = 257).starts_with("max-seqs"));
        assert!(bad(&|p| p.layers = 0).starts_with("layers must be in 1..=256"));
        assert!(bad(&|p| p.heads = 257).starts_with("heads must be in 1..=256"));
        assert!(bad(&|p| p.max_seq_len = 0).starts_with("max-seq-len must be in 1..=65536"));
        // 256 pages of 4096 bytes need 20 address bits
        assert!(bad(&|p| p.addr_bits = 19).starts_with("addr-bits must be in 20..=48"));
        assert!(bad(&|p| p.addr_bits = 49).starts_with("addr-bits"));
        assert!(bad(&|p| p.bus_bytes = 256).starts_with("bus-bytes must be a power of two in 1..=128"));
        assert!(bad(&|p| p.bus_bytes = 24).starts_with("bus-bytes"));
        assert!(bad(&|p| { p.page_bytes = 64; p.bus_bytes = 128 }).starts_with("bus-bytes must be a power of two in 1..=64"));
        assert!(bad(&|p| p.head_dim = 0).starts_with("head-dim must be in 1..=4096"));
        assert!(bad(&|p| p.dense_bytes = 4097).starts_with("dense-bytes must be in 1..=4096"));
        assert!(bad(&|p| p.meta_bytes = 65).starts_with("meta-bytes must be in 1..=64"));
        // non-power-of-two page count: 3 * 64 = 192 bytes need 8 bits
        let p = MmuParams { page_bytes: 64, phys_pages: 3, addr_bits: 8, bus_bytes: 4, ..Default::default() };
        p.check().unwrap();
        assert!(MmuParams { addr_bits: 7, ..p }.check().unwrap_err().0.starts_with("addr-bits must be in 8..=48"));
    }

    #[test]
    fn mmu_spec_example_1() {
        let mut m = Mmu::new(ex1()).unwrap();
        assert_eq!((m.params().capacity(0), m.params().capacity(1), m.params().capacity(2)), (2, 5, 16));
        let (me, de, sp) = (Stream::Meta, Stream::Dense(0), Stream::Sparse(0));

        let w = m.write(7, 0, &[3, 2]).unwrap();
        assert_eq!((w.slot, w.token, w.opened, w.pages_taken), (0, 0, true, 3));
        assert_eq!(
            w.places,
            vec![
                StreamDesc { stream: me, desc: d(0, 12) },
                StreamDesc { stream: de, desc: d(64, 40) },
                StreamDesc { stream: sp, desc: d(128, 5) },
            ]
        );
        assert_eq!(m.free_list(), vec![3, 4, 5, 6, 7]);

        let w = m.write(7, 0, &[0, 0]).unwrap();
        assert_eq!((w.slot, w.token, w.opened, w.pages_taken), (0, 1, false, 1));
        assert_eq!(of(&w.places, me), vec![d(12, 12)]);
        assert_eq!(of(&w.places, de), vec![d(104, 24), d(192, 16)]);
        assert_eq!(of(&w.places, sp), vec![]);
        assert_eq!(w.places.len(), 3);
        assert_eq!(m.free_list(), vec![4, 5, 6, 7]);

        let w = m.write(7, 0, &[64, 64]).unwrap();
        assert_eq!((w.token, w.pages_taken), (2, 2));
        assert_eq!(of(&w.places, me), vec![d(24, 12)]);
        assert_eq!(of(&w.places, de), vec![d(208, 40)]);
        assert_eq!(of(&w.places, sp), vec![d(133, 59), d(256, 69)]);
        assert_eq!(m.params().beats(d(256, 69)), 18);
        assert_eq!(m.free_list(), vec![6, 7]);

        let w = m.write(7, 0, &[1, 0]).unwrap();
        assert_eq!((w.token, w.pages_taken), (3, 1));
        assert_eq!(of(&w.places, me), vec![d(36, 12)]);
        assert_eq!(of(&w.places, de), vec![d(248, 8), d(384, 32)]);
        assert_eq!(of(&w.places, sp), vec![d(325, 1)]);
        assert_eq!(m.free_list(), vec![7]);

        let before = m.clone();
        assert_eq!(m.write(9, 0, &[0, 0]), Err(MmuError::OutOfPages { need: 2, free: 1 }));
        assert_eq!(m, before);
        assert_eq!(m.slot(1), (0, SlotState::Empty));

        let r = m.read(7, 0, 0).unwrap();
        assert_eq!(r.tokens, 4);
        assert_eq!(of(&r.descs, me), vec![d(0, 48)]);
        assert_eq!(of(&r.descs, de), vec![d(64, 64), d(192, 64), d(384, 32)]);
        assert_eq!(of(&r.descs, sp), vec![d(128, 64), d(256, 70)]);
        assert_eq!(r.descs.iter().map(|x| x.stream).collect::<Vec<_>>(), vec![me, de, de, de, sp, sp]);
        assert_eq!(r.counts, vec![3, 2, 0, 0, 64, 64, 1, 0]);
        assert_eq!(m.owned_pages(7), Some(7));

        m.free(7).unwrap();
        assert_eq!(m.free_list(), vec![7, 0, 1, 3, 6, 2, 4, 5]);
        assert_eq!(m.slot(0), (7, SlotState::Freed));
        assert_eq!(m.free(7), Err(MmuError::DoubleFree { seq: 7 }));
        assert_eq!(m.read(7, 0, 0), Err(MmuError::UnknownSeq { seq: 7 }));
        assert_eq!(m.free(8), Err(MmuError::UnknownSeq { seq: 8 }));

        let w = m.write(9, 0, &[0, 0]).unwrap();
        assert_eq!((w.slot, w.token, w.opened), (1, 0, true));
        assert_eq!(of(&w.places, me), vec![d(448, 12)]);
        assert_eq!(of(&w.places, de), vec![d(0, 40)]);
        assert_eq!(w.places.len(), 2);
        m.check_invariants().unwrap();
    }

    #[test]
    fn mmu_spec_example_2_burst_cutting() {
        assert_eq!(axi_bursts(4082, 2000, 4), vec![d(4082, 14), d(4096, 1024), d(5120, 962)]);
        assert_eq!(axi_bursts(4098, 1100, 4), vec![d(4098, 1022), d(5120, 78)]);
        assert_eq!(axi_bursts(7950, 300, 32), vec![d(7950, 242), d(8192, 58)]);
        let p = MmuParams { bus_bytes: 4, addr_bits: 32, ..Default::default() };
        assert_eq!(p.beats(d(4082, 14)), 4);
        assert_eq!(p.beats(d(4098, 1022)), 256);
        assert_eq!(p.beats(d(4098, 1023)), 257);
        assert!(p.legal(d(4096, 1024)) && !p.legal(d(4096, 1025)) && !p.legal(d(4095, 2)));
        assert!(!p.legal(d(p.phys_bytes() - 1, 2)) && p.legal(d(p.phys_bytes() - 1, 1)));
        assert!(axi_bursts(100, 0, 4).is_empty());
    }

    /// One token larger than 64 pages that are all adjacent: merged into one
    /// range, then cut at 4 KB (bus 32) or at 4 KB and 256 beats (bus 4).
    #[test]
    fn mmu_merge_then_cut_at_4k_and_256_beats() {
        for (bus, want) in [
            (32, vec![d(64, 4032), d(4096, 64)]),
            (4, vec![d(64, 1024), d(1088, 1024), d(2112, 1024), d(3136, 960), d(4096, 64)]),
        ] {
            let p = MmuParams {
                page_bytes: 64,
                phys_pages: 128,
                addr_bits: 13,
                bus_bytes: bus,
                head_dim: 64,
                dense_bytes: 4096,
                max_seq_len: 1,
                ..Default::default()
            };
            let mut m = Mmu::new(p).unwrap();
            let w = m.write(1, 0, &[0]).unwrap();
            assert_eq!(w.pages_taken, 65);
            assert_eq!(of(&w.places, Stream::Meta), vec![d(0, 12)]);
            assert_eq!(of(&w.places, Stream::Dense(0)), want);
            let r = m.read(1, 0, 0).unwrap();
            assert_eq!(of(&r.descs, Stream::Dense(0)), want);
            assert_eq!(m.write(1, 0, &[0]), Err(MmuError::SeqTooLong { seq: 1, layer: 0 }));
            m.check_invariants().unwrap();
        }
        assert_eq!(MmuParams { bus_bytes: 4, ..Default::default() }.beats(d(3136, 960)), 240);
    }

    /// Page-sized records fill pages exactly; records that do not divide the
    /// page span a boundary every few tokens; zero-byte lists take nothing.
    #[test]
    fn mmu_page_fill_and_spanning() {
        let p = MmuParams {
            page_bytes: 64,
            phys_pages: 64,
            addr_bits: 12,
            bus_bytes: 8,
            head_dim: 64,
            dense_bytes: 64,
            meta_bytes: 24,
            max_seq_len: 16,
            ..Default::default()
        };
        let mut m = Mmu::new(p).unwrap();
        let mut spans = 0;
        for t in 0..16u32 {
            let before = m.free_pages();
            let w = m.write(3, 0, &[0]).unwrap();
            assert_eq!(w.token, t);
            let meta = of(&w.places, Stream::Meta);
            let dense = of(&w.places, Stream::Dense(0));
            // dense: one whole new page per token, page-aligned
            assert_eq!(dense.len(), 1);
            assert_eq!((dense[0].addr % 64, dense[0].len), (0, 64));
            // metadata: 24-byte words over 64-byte pages; fill 24t
            let (f0, f1) = (24 * t as u64, 24 * (t as u64 + 1));
            let meta_pages = f1.div_ceil(64) - f0.div_ceil(64);
            assert_eq!(before - m.free_pages(), 1 + meta_pages as usize);
            assert_eq!(meta.iter().map(|x| x.len).sum::<u32>(), 24);
            // a word that crosses a page boundary onto a page taken now
            // lands on a non-adjacent page (the dense page was taken between)
            let crosses = f0 / 64 != (f1 - 1) / 64 && f0 % 64 != 0;
            assert_eq!(meta.len(), 1 + crosses as usize, "token {t}");
            spans += crosses as usize;
            if crosses {
                assert_eq!(meta[0].end() % 64, 0);
                assert_eq!(meta[1].addr % 64, 0);
            }
            assert!(of(&w.places, Stream::Sparse(0)).is_empty());
        }
        // every 8 tokens fill 3 pages; tokens 2 (48..72) and 5 (120..144)
        // cross a boundary, 7 (168..192) ends on one, 8 starts on one
        assert_eq!(spans, 4);
        assert_eq!(m.owned_pages(3), Some(6 + 16));
        m.check_invariants().unwrap();
    }

    /// Runs a command that must fail with `e`, and checks that nothing changed.
    fn fails(m: &mut Mmu, e: MmuError, cmd: impl FnOnce(&mut Mmu) -> Result<(), MmuError>) {
        let before = m.clone();
        assert_eq!(cmd(m), Err(e));
        assert!(!e.to_string().contains('\n'));
        assert_eq!(*m, before, "{e} changed the state");
        m.check_invariants().unwrap();
    }

    fn wr(seq: u16, layer: usize, c: &[u8]) -> impl FnOnce(&mut Mmu) -> Result<(), MmuError> + '_ {
        move |m| m.write(seq, layer, c).map(|_| ())
    }

    fn rd(seq: u16, layer: usize, head: usize) -> impl FnOnce(&mut Mmu) -> Result<(), MmuError> {
        move |m| m.read(seq, layer, head).map(|_| ())
    }

    fn fr(seq: u16) -> impl FnOnce(&mut Mmu) -> Result<(), MmuError> {
        move |m| m.free(seq)
    }

    #[test]
    fn mmu_every_error_leaves_state_unchanged() {
        let p = MmuParams {
            page_bytes: 64,
            phys_pages: 6,
            max_seqs: 1,
            layers: 2,
            heads: 2,
            max_seq_len: 2,
            addr_bits: 9,
            bus_bytes: 4,
            head_dim: 96, // segments of 64 and 32
            dense_bytes: 16,
            meta_bytes: 8,
        };
        let mut m = Mmu::new(p).unwrap();
        let bad = |f| MmuError::BadCommand(f);
        fails(&mut m, bad(BadField::Layer(2)), wr(1, 2, &[0; 4]));
        fails(&mut m, bad(BadField::CountsLen(3)), wr(1, 0, &[0; 3]));
        fails(&mut m, bad(BadField::Count { head: 1, segment: 0, count: 65 }), wr(1, 0, &[0, 0, 65, 0]));
        fails(&mut m, bad(BadField::Count { head: 0, segment: 1, count: 33 }), wr(1, 0, &[0, 33, 0, 0]));
        // full counts are legal: 64 + 32 = 96 bytes in sparse 0 (two pages);
        // metadata, dense 0 and dense 1 take one page each
        m.write(1, 0, &[64, 32, 0, 0]).unwrap();
        assert_eq!(m.owned_pages(1), Some(5));
        // one slot, held by 1: a new id finds none; a bad layer wins over that
        fails(&mut m, MmuError::NoSlot { seq: 2 }, wr(2, 0, &[0; 4]));
        fails(&mut m, bad(BadField::Layer(5)), wr(2, 5, &[0; 4]));
        // token 1 fits in the pages held: 1 page stays free
        m.write(1, 0, &[0, 0, 0, 0]).unwrap();
        assert_eq!(m.free_pages(), 1);
        // layer 0 is full: SeqTooLong wins over OutOfPages
        fails(&mut m, MmuError::SeqTooLong { seq: 1, layer: 0 }, wr(1, 0, &[64, 32, 64, 32]));
        fails(&mut m, bad(BadField::Count { head: 1, segment: 1, count: 40 }), wr(1, 0, &[0, 0, 0, 40]));
        // layer 1 needs a metadata page and two dense pages, 3 > 1
        fails(&mut m, MmuError::OutOfPages { need: 3, free: 1 }, wr(1, 1, &[0; 4]));
        fails(&mut m, bad(BadField::Layer(2)), rd(1, 2, 0));
        fails(&mut m, bad(BadField::Head(2)), rd(1, 0, 2));
        fails(&mut m, bad(BadField::Head(9)), rd(4, 0, 9));
        fails(&mut m, MmuError::UnknownSeq { seq: 4 }, rd(4, 0, 0));
        fails(&mut m, MmuError::UnknownSeq { seq: 4 }, fr(4));
        let r = m.read(1, 1, 0).unwrap();
        assert_eq!((r.tokens, r.descs.len(), r.counts.len()), (0, 0, 0));
        m.free(1).unwrap();
        fails(&mut m, MmuError::DoubleFree { seq: 1 }, fr(1));
        fails(&mut m, MmuError::UnknownSeq { seq: 1 }, rd(1, 0, 0));
        // the freed slot is reused by 2; 1 is then unknown, not double-freed
        assert!(m.write(2, 0, &[0; 4]).unwrap().opened);
        fails(&mut m, MmuError::UnknownSeq { seq: 1 }, fr(1));
        let codes: Vec<u8> = [
            bad(BadField::Layer(0)),
            MmuError::NoSlot { seq: 0 },
            MmuError::SeqTooLong { seq: 0, layer: 0 },
            MmuError::OutOfPages { need: 0, free: 0 },
            MmuError::UnknownSeq { seq: 0 },
            MmuError::DoubleFree { seq: 0 },
        ]
        .iter()
        .map(|e| e.code())
        .collect();
        assert_eq!(codes, vec![1, 2, 3, 4, 5, 6]);
    }

    /// A failed first write does not open the id, whichever check fails.
    #[test]
    fn mmu_failed_open_leaves_id_closed() {
        let mut m = Mmu::new(ex1()).unwrap();
        m.write(0, 0, &[0, 0]).unwrap();
        m.write(1, 0, &[0, 0]).unwrap();
        fails(&mut m, MmuError::NoSlot { seq: 9 }, wr(9, 0, &[0, 0]));
        fails(&mut m, MmuError::UnknownSeq { seq: 9 }, rd(9, 0, 0));
        fails(&mut m, MmuError::UnknownSeq { seq: 9 }, fr(9));

        let mut full = Mmu::new(ex1()).unwrap();
        full.write(5, 0, &[64, 64]).unwrap(); // 1 + 1 + 2 pages
        full.write(5, 0, &[64, 64]).unwrap(); // 0 + 1 + 2 pages
        assert_eq!(full.free_pages(), 1);
        fails(&mut full, MmuError::OutOfPages { need: 2, free: 1 }, wr(6, 0, &[0, 0]));
        fails(&mut full, MmuError::UnknownSeq { seq: 6 }, rd(6, 0, 0));
        fails(&mut full, MmuError::UnknownSeq { seq: 6 }, fr(6));
        assert_eq!(full.slot(1), (0, SlotState::Empty));
    }

    /// Slot choice: lowest empty slot first, then lowest freed slot.
    #[test]
    fn mmu_slot_choice() {
        let p = MmuParams { max_seqs: 3, ..ex1() };
        let mut m = Mmu::new(MmuParams { phys_pages: 64, addr_bits: 12, ..p }).unwrap();
        assert_eq!(m.write(10, 0, &[0, 0]).unwrap().slot, 0);
        assert_eq!(m.write(11, 0, &[0, 0]).unwrap().slot, 1);
        m.free(10).unwrap();
        assert_eq!(m.write(12, 0, &[0, 0]).unwrap().slot, 2); // empty before freed
        m.free(12).unwrap();
        assert_eq!(m.write(13, 0, &[0, 0]).unwrap().slot, 0); // lowest freed
        assert_eq!(m.slot(2), (12, SlotState::Freed));
        // a freed id written again is a new sequence at token 0
        let w = m.write(12, 0, &[0, 0]).unwrap();
        assert_eq!((w.slot, w.token, w.opened), (2, 0, true));
        assert_eq!(m.write(12, 0, &[0, 0]).unwrap().token, 1);
        assert_eq!(m.write(13, 0, &[0, 0]).unwrap().slot, 0);
        m.check_invariants().unwrap();
    }

    /// Pages return layer-major, then in stream order, each stream in virtual
    /// page order; then exhaustion, free and recovery.
    #[test]
    fn mmu_free_order_exhaustion_and_recovery() {
        let p = MmuParams { layers: 2, phys_pages: 16, addr_bits: 10, ..ex1() };
        let mut m = Mmu::new(p).unwrap();
        m.write(1, 1, &[1, 0]).unwrap(); // layer 1: meta 0, dense 1, sparse 2
        m.write(1, 0, &[0, 0]).unwrap(); // layer 0: meta 3, dense 4
        m.write(1, 1, &[64, 0]).unwrap(); // layer 1: dense 5, sparse 6
        m.free(1).unwrap();
        assert_eq!(m.free_list(), (7..16).chain([3, 4, 0, 1, 5, 2, 6]).collect::<Vec<u32>>());

        m.reset();
        assert_eq!(m.free_list(), (0..16).collect::<Vec<u32>>());
        assert!((0..2).all(|i| m.slot(i) == (0, SlotState::Empty)));
        // exhaust with one sequence, 8 tokens per layer of the largest size
        let mut written = 0;
        let err = loop {
            match m.write(1, written % 2, &[64, 64]) {
                Ok(_) => written += 1,
                Err(e) => break e,
            }
            m.check_invariants().unwrap();
        };
        assert!(matches!(err, MmuError::OutOfPages { .. }), "{err}");
        let held = m.owned_pages(1).unwrap();
        assert_eq!(held + m.free_pages(), 16);
        let stuck = m.clone();
        assert_eq!(m.write(2, 0, &[64, 64]).unwrap_err().code(), 4);
        assert_eq!(m, stuck);
        m.free(1).unwrap();
        assert_eq!(m.free_pages(), 16);
        // the same work fits again, now on recycled pages
        for i in 0..written {
            m.write(2, i % 2, &[64, 64]).unwrap();
        }
        assert_eq!(m.owned_pages(2), Some(held));
        m.check_invariants().unwrap();
    }

    // ---- randomized interleaving against an independent shadow ----

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[derive(Default)]
    struct Shadow {
        /// (id, layer, stream index) -> bytes written, in token order
        bytes: HashMap<(u16, usize, usize), Vec<u8>>,
        /// (id, layer, head) -> counts, token-major
        counts: HashMap<(u16, usize, usize), Vec<u8>>,
    }

    /// The status a write must give, from the spec's rules alone (§10.8).
    fn oracle_write(m: &Mmu, sh: &Shadow, seq: u16, layer: usize, counts: &[u8]) -> (u8, u64) {
        let p = m.params();
        let seg = p.segments();
        if layer >= p.layers
            || counts.len() != p.heads * seg
            || counts.iter().enumerate().any(|(i, &c)| c as usize > p.segment_len(i % seg))
        {
            return (1, 0);
        }
        let states: Vec<_> = (0..p.max_seqs).map(|i| m.slot(i)).collect();
        let open = states.iter().any(|&(id, st)| id == seq && st == SlotState::Open);
        if !open && !states.iter().any(|&(_, st)| st != SlotState::Open) {
            return (2, 0);
        }
        let tokens = sh.counts.get(&(seq, layer, 0)).map_or(0, |c| c.len() / seg);
        if tokens >= p.max_seq_len {
            return (3, 0);
        }
        let pb = p.page_bytes as u64;
        let mut need = 0;
        for i in 0..p.streams() {
            let fill = sh.bytes.get(&(seq, layer, i)).map_or(0, |v| v.len()) as u64;
            let b = match Stream::from_index(i) {
                Stream::Meta => p.meta_bytes as u64,
                Stream::Dense(_) => p.dense_bytes as u64,
                Stream::Sparse(h) => counts[h as usize * seg..][..seg].iter().map(|&c| c as u64).sum(),
            };
            need += (fill + b).div_ceil(pb) - fill.div_ceil(pb);
        }
        if need > m.free_pages() as u64 {
            return (4, need);
        }
        (0, need)
    }

    fn random_counts(r: &mut Rng, p: &MmuParams) -> Vec<u8> {
        let seg = p.segments();
        let mode = r.below(8);
        let mut c: Vec<u8> = (0..p.heads * seg)
            .map(|i| {
                let n = p.segment_len(i % seg) as u64;
                (match mode {
                    0 => 0,
                    1 => n,
                    2 => r.below(n + 1),
                    _ => r.below(n / 8 + 2).min(n), // about 10% outliers
                }) as u8
            })
            .collect();
        match r.below(40) {
            0 => {
                let i = r.below(c.len() as u64) as usize;
                c[i] = (p.segment_len(i % seg) + 1 + r.below(3) as usize).min(255) as u8;
            }
            1 => {
                c.pop();
            }
            _ => {}
        }
        c
    }

    fn assert_maximal(p: &MmuParams, ds: &[StreamDesc]) {
        for w in ds.windows(2) {
            let (a, b) = (w[0].desc, w[1].desc);
            if w[0].stream == w[1].stream && a.end() == b.addr {
                let at_4k = a.end() % AXI_BOUNDARY == 0;
                let at_beats = a.addr % p.bus_bytes as u64 + a.len as u64 == AXI_MAX_BEATS * p.bus_bytes as u64;
                assert!(at_4k || at_beats, "{a:?} then {b:?} could have been one burst");
            }
        }
    }

    fn run_random(p: MmuParams, seed: u64, steps: usize) -> [usize; 10] {
        let mut m = Mmu::new(p.clone()).unwrap();
        let mut mem = Memory::new(p.addr_bits).unwrap();
        let mut sh = Shadow::default();
        let mut r = Rng(seed);
        let ids = (p.max_seqs + 2) as u64;
        // writes ok, each error code 1..=6, reads ok, frees ok, resets
        let mut seen = [0usize; 10];
        for _ in 0..steps {
            let seq = r.below(ids) as u16;
            let op = r.below(100);
            if op < 60 {
                let layer = if r.below(50) == 0 { p.layers } else { r.below(p.layers as u64) as usize };
                let counts = random_counts(&mut r, &p);
                let (want, need) = oracle_write(&m, &sh, seq, layer, &counts);
                let before = m.clone();
                match m.write(seq, layer, &counts) {
                    Ok(w) => {
                        assert_eq!(want, 0);
                        seen[0] += 1;
                        assert_eq!(w.pages_taken as u64, need);
                        assert_eq!(before.free_pages() - m.free_pages(), need as usize);
                        let seg = p.segments();
                        for i in 0..p.streams() {
                            let st = Stream::from_index(i);
                            let b = match st {
                                Stream::Meta => p.meta_bytes,
                                Stream::Dense(_) => p.dense_bytes,
                                Stream::Sparse(h) => {
                                    counts[h as usize * seg..][..seg].iter().map(|&c| c as usize).sum()
                                }
                            };
                            let data: Vec<u8> = (0..b).map(|_| r.next() as u8).collect();
                            let ds = of(&w.places, st);
                            assert_eq!(ds.iter().map(|x| x.len as usize).sum::<usize>(), b);
                            let mut off = 0;
                            for x in ds {
                                assert!(p.legal(x), "{x:?}");
                                mem.write(x.addr, &data[off..off + x.len as usize]).unwrap();
                                off += x.len as usize;
                            }
                            sh.bytes.entry((seq, layer, i)).or_default().extend(&data);
                        }
                        let idx: Vec<usize> = w.places.iter().map(|x| x.stream.index()).collect();
                        assert!(idx.windows(2).all(|v| v[0] <= v[1]), "placements out of stream order");
                        assert_maximal(&p, &w.places);
                        for h in 0..p.heads {
                            sh.counts.entry((seq, layer, h)).or_default().extend(&counts[h * seg..][..seg]);
                        }
                    }
                    Err(e) => {
                        assert_eq!(e.code(), want, "{e}");
                        seen[e.code() as usize] += 1;
                        assert_eq!(m, before, "{e} changed the state");
                    }
                }
            } else if op < 85 {
                let layer = r.below(p.layers as u64) as usize;
                let head = if r.below(50) == 0 { p.heads } else { r.below(p.heads as u64) as usize };
                let open = m.owned_pages(seq).is_some();
                match m.read(seq, layer, head) {
                    Ok(rd) => {
                        assert!(open && head < p.heads);
                        seen[7] += 1;
                        for st in [Stream::Meta, Stream::Dense(head as u16), Stream::Sparse(head as u16)] {
                            let mut got = Vec::new();
                            for x in of(&rd.descs, st) {
                                assert!(p.legal(x), "{x:?}");
                                got.extend(mem.read(x.addr, x.len as usize).unwrap());
                            }
                            let want = sh.bytes.get(&(seq, layer, st.index())).cloned().unwrap_or_default();
                            assert_eq!(got, want, "{st:?} of seq {seq} layer {layer}");
                        }
                        assert_maximal(&p, &rd.descs);
                        let want = sh.counts.get(&(seq, layer, head)).cloned().unwrap_or_default();
                        assert_eq!(rd.counts, want);
                        assert_eq!(rd.tokens as usize * p.segments(), want.len());
                    }
                    Err(e) => {
                        let code = if head >= p.heads { 1 } else { 5 };
                        assert!(head >= p.heads || !open);
                        assert_eq!(e.code(), code, "{e}");
                        seen[code as usize] += 1;
                    }
                }
            } else if op < 99 {
                let owned = m.owned_pages(seq);
                let freed = (0..p.max_seqs).any(|i| m.slot(i) == (seq, SlotState::Freed));
                let before = m.clone();
                match m.free(seq) {
                    Ok(()) => {
                        seen[8] += 1;
                        assert_eq!(m.free_pages(), before.free_pages() + owned.unwrap());
                        sh.bytes.retain(|k, _| k.0 != seq);
                        sh.counts.retain(|k, _| k.0 != seq);
                    }
                    Err(e) => {
                        assert!(owned.is_none());
                        assert_eq!(e.code(), if freed { 6 } else { 5 }, "{e}");
                        seen[e.code() as usize] += 1;
                        assert_eq!(m, before);
                    }
                }
            } else {
                seen[9] += 1;
                m.reset();
                sh = Shadow::default();
                assert_eq!(m.free_list(), (0..p.phys_pages as u32).collect::<Vec<_>>());
            }
            m.check_invariants().unwrap();
        }
        seen
    }

    #[test]
    fn mmu_random_interleaving() {
        let small = MmuParams {
            page_bytes: 64,
            phys_pages: 40,
            max_seqs: 3,
            layers: 2,
            heads: 2,
            max_seq_len: 12,
            addr_bits: 12,
            bus_bytes: 4,
            head_dim: 96,
            dense_bytes: 40,
            meta_bytes: 12,
        };
        let sets = [
            small.clone(),
            // bus of 1 byte: 256 beats = 256 bytes binds before 4 KB
            MmuParams {
                page_bytes: 512,
                phys_pages: 24,
                max_seqs: 2,
                layers: 1,
                heads: 3,
                max_seq_len: 40,
                addr_bits: 14,
                bus_bytes: 1,
                head_dim: 200,
                dense_bytes: 100,
                meta_bytes: 64,
            },
            // 4 KB pages, wide bus, records larger than half a page
            MmuParams {
                phys_pages: 12,
                max_seqs: 2,
                heads: 2,
                max_seq_len: 20,
                addr_bits: 16,
                bus_bytes: 128,
                dense_bytes: 3000,
                meta_bytes: 5,
                ..Default::default()
            },
            // records of many pages, so pages of one token are often adjacent
            MmuParams {
                page_bytes: 64,
                phys_pages: 300,
                max_seqs: 2,
                max_seq_len: 6,
                addr_bits: 15,
                bus_bytes: 2,
                head_dim: 1000,
                dense_bytes: 700,
                meta_bytes: 1,
                ..Default::default()
            },
            MmuParams { max_seq_len: 3, phys_pages: 4, addr_bits: 8, ..small },
        ];
        let mut total = [0usize; 10];
        for (k, p) in sets.into_iter().enumerate() {
            for seed in 0..4 {
                let seen = run_random(p.clone(), 1000 * k as u64 + seed, 1500);
                for (t, s) in total.iter_mut().zip(seen) {
                    *t += s;
                }
            }
        }
        // every outcome is reached: writes, each error code, reads, frees, resets
        assert!(total.iter().all(|&n| n > 0), "{total:?}");
    }
}
