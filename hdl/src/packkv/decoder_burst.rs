//! `packkv-decoder` at `burst = 2`: a decoder core of `2 lanes` lanes
//! whose double beats wait in an output queue and leave as two beats of
//! `lanes`, so the header, metadata, permutation and fields of a block are
//! parsed while the queue still feeds the output, and whole blocks come
//! out at `lanes` elements a cycle (one cycle more per block, its end beat).
//!
//! Paper: PackKV §III-B, §III-C (decoding inverts packing and
//! quantization). Spec: docs/spec.md §14.14.2 ("Burst"). Model:
//! `sim::packkv::codec::decode_stream` (the beats are the same as at
//! `burst = 1`; only their timing differs).
//!
//! - Core (`decoder.rs`, `2 lanes` lanes, `wi` words a beat by the spec's
//!   sizing rule): its output register is the queue's input; it stalls
//!   only when the queue is full (a register, so no output port reaches
//!   the core's pipeline enable).
//! - Queue: a simple dual-port RAM (`<module>_queue_ram`, one cycle of read
//!   latency) of `depth` entries, the layout of §14.14.2: side bits in
//!   [31:0], a double beat's `2 lanes` FP16 values or an end beat's
//!   permutation from bit 32.
//! - R: the RAM's read register, read again only when it is free or taken
//!   this cycle. O: the entry on the output, its low half first, then its
//!   high half (rows or channels advanced); an end entry leaves in one beat.

use super::decoder::{Geometry, PackKvDecoder};
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::{consts, sigs};
use rust_hdl::prelude::*;

/// Queue word bits at most: 32 side bits and 1024 data bits (`32 lanes`
/// with `lanes <= 32`, or a permutation of `B log2 B <= 896` bits).
pub const QW: usize = 1056; // written out in the kernel: `hdl_gen` needs literal widths

/// A burst decoder's sizes (spec §14.14.2).
#[derive(Clone, Debug)]
pub struct BurstGeometry {
    /// The core, at `2 lanes` lanes.
    pub core: Geometry,
    /// Output lanes.
    pub lanes: usize,
    /// Queue entries.
    pub depth: usize,
    /// Queue word bits: 32 + max(32 lanes, B log2 B).
    pub width: usize,
    /// The high half of a double beat: rows `+ row_step`, channels `+ ch_step`.
    pub row_step: usize,
    pub ch_step: usize,
    pub latency: usize,
}

impl BurstGeometry {
    /// The least `wi` (from `ceil(2 lanes r / 32)`) with which the core's
    /// worst block (every width `r`, a permutation) takes no more parser
    /// cycles than its `B C / lanes + 1` output beats; the queue covers the
    /// parser's longest gap between data beats (§14.14.2).
    pub fn new(c: usize, b: usize, p: usize, levels: u32, lanes: usize) -> Result<BurstGeometry, String> {
        let l2 = 2 * lanes;
        let r = (32 - levels.leading_zeros()) as usize;
        if l2 * r > 128 {
            return Err(format!(
                "burst 2 needs 2 x lanes x r ({l2} x {r}) at most 128 (the zero-insert shifter's one-bit lanes); use burst 1"
            ));
        }
        if c % l2 != 0 {
            return Err(format!("burst 2 needs 2 x lanes ({l2}) to divide heads x head-dim ({c}); use burst 1"));
        }
        let out = b * c / lanes + 1;
        let mut why = String::new();
        for wi in (l2 * r).div_ceil(32).. {
            let g = match Geometry::with_words(c, b, p, levels, l2, wi) {
                Ok(g) => g,
                Err(e) => {
                    why = e;
                    break;
                }
            };
            if g.block_cycles(r * c, true) <= out {
                let depth = (g.block_gap().div_ceil(2) + 8).next_power_of_two();
                let lb = g.lb;
                return Ok(BurstGeometry {
                    lanes,
                    depth,
                    width: 32 + (32 * lanes).max(b * lb),
                    row_step: if p > lanes { lanes } else { 0 },
                    ch_step: if p > lanes { 0 } else { lanes / p },
                    latency: g.latency + 3,
                    core: g,
                });
            }
        }
        Err(format!("burst 2 cannot keep {lanes} lanes busy at these parameters ({why}); use burst 1"))
    }

    pub fn memory(&self, module: &str) -> MemInfo {
        MemInfo { module: format!("{module}_queue_ram"), name: "queue".into(), depth: self.depth, width: self.width }
    }
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

#[derive(LogicBlock)]
pub struct PackKvDecoderBurst {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: core, queue and output empty
    pub reset: Signal<In, Bit>,
    /// a word beat is offered
    pub in_valid: Signal<In, Bit>,
    /// from registers only: high while the input register is empty or drains this cycle
    pub in_ready: Signal<Out, Bit>,
    /// stream words (spec §14.4), word i at [32i+31:32i], the first word in the lowest lanes
    pub in_words: Vec<Signal<In, Bits<32>>>,
    /// words in the beat, 1..={wi}; lanes at and above the count are ignored
    pub in_count: Signal<In, Bits<8>>,
    /// the beat ends a transfer
    pub in_last: Signal<In, Bit>,
    /// an output beat is valid (a register)
    pub out_valid: Signal<Out, Bit>,
    /// the beat transfers when both are high
    pub out_ready: Signal<In, Bit>,
    /// data beat: FP16 values RNE((q + z) step), lane l at [16l+15:16l]
    pub out_x: Vec<Signal<Out, Bits<16>>>,
    /// data beat: stored row of lane 0 (lane l: row + l mod min(pack, lanes))
    pub out_row: Signal<Out, Bits<8>>,
    /// data beat: channel of lane 0 (lane l: channel + l / min(pack, lanes))
    pub out_ch: Signal<Out, Bits<16>>,
    /// the beat is a block's end beat (no data), carrying its status
    pub out_end: Signal<Out, Bit>,
    /// end beat: 0 ok, 1 bad_header, 2 bad_width, 3 bad_code, 4 bad_permutation, 5 bad_length, 6 truncated
    pub out_status: Signal<Out, Bits<3>>,
    /// end beat: the header's nonfinite bit (0 unless ok)
    pub out_nonfinite: Signal<Out, Bit>,
    /// end beat: a permutation was stored and the block is ok
    pub out_has_perm: Signal<Out, Bit>,
    /// end beat: arrival index of stored row i at [lb i + lb - 1 : lb i] (0 unless out_has_perm)
    pub out_perm: Signal<Out, Bits<1024>>,
    core: PackKvDecoder,
    ram: DpRam<8, QW>,
    /// entries in the RAM (not counting R and O)
    cnt: Reg<Bits<8>>,
    wp: Reg<Bits<8>>,
    rp: Reg<Bits<8>>,
    /// R holds an entry (the RAM's read register)
    rvld: Reg<Bit>,
    /// O: an entry on the output, its high half next (`h`), and the high
    /// half's row and channel
    ov: Reg<Bit>,
    h: Reg<Bit>,
    e: Reg<Bits<QW>>,
    rowh: Reg<Bits<8>>,
    chh: Reg<Bits<16>>,
    full: Signal<Local, Bit>,
    we: Signal<Local, Bit>,
    re: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    wd: Signal<Local, Bits<QW>>,
    side: Signal<Local, Bits<32>>,
    rd: Signal<Local, Bits<QW>>,
    x16: Signal<Local, Bits<16>>,
    sh: Signal<Local, Bits<QW>>,
    k_depth: Constant<Bits<8>>,
    k_amask: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_zero: Constant<Bits<QW>>,
    k_zero1024: Constant<Bits<1024>>,
    k_sh1: Constant<Bits<16>>,
    k_sh6: Constant<Bits<16>>,
    k_sh22: Constant<Bits<16>>,
    k_sh32: Constant<Bits<16>>,
    k_s0: Constant<Bits<32>>,
    k_s4: Constant<Bits<32>>,
    k_s5: Constant<Bits<32>>,
    k_rstep: Constant<Bits<8>>,
    k_cstep: Constant<Bits<16>>,
    /// data lane l of a double beat at bit 32 + 16 l
    k_xoff: Vec<Constant<Bits<16>>>,
    k_xhi: Vec<Constant<Bits<16>>>,
    k_pmask: Constant<Bits<1024>>,
    _lanes: usize,
    _l2: usize,
    _wi: usize,
}

impl PackKvDecoderBurst {
    pub fn new(g: &BurstGeometry, module: &str) -> Self {
        let l = g.lanes;
        let m = g.memory(module);
        let pbits = g.core.b * g.core.lb;
        PackKvDecoderBurst {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_words: sigs(g.core.wi),
            in_count: Default::default(),
            in_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_x: sigs(l),
            out_row: Default::default(),
            out_ch: Default::default(),
            out_end: Default::default(),
            out_status: Default::default(),
            out_nonfinite: Default::default(),
            out_has_perm: Default::default(),
            out_perm: Default::default(),
            core: PackKvDecoder::new(&g.core),
            ram: DpRam::new(&m.module, &m.name, m.depth, m.width),
            cnt: Reg::default(),
            wp: Reg::default(),
            rp: Reg::default(),
            rvld: Reg::default(),
            ov: Reg::default(),
            h: Reg::default(),
            e: Reg::default(),
            rowh: Reg::default(),
            chh: Reg::default(),
            full: Default::default(),
            we: Default::default(),
            re: Default::default(),
            take: Default::default(),
            done: Default::default(),
            wd: Default::default(),
            side: Default::default(),
            rd: Default::default(),
            x16: Default::default(),
            sh: Default::default(),
            k_depth: k(g.depth as u64),
            k_amask: k((g.depth - 1) as u64),
            k_one8: k(1),
            k_zero8: k(0),
            k_zero: k(0),
            k_zero1024: k(0),
            k_sh1: k(1),
            k_sh6: k(6),
            k_sh22: k(22),
            k_sh32: k(32),
            k_s0: k(1),
            k_s4: k(1 << 4),
            k_s5: k(1 << 5),
            k_rstep: k(g.row_step as u64),
            k_cstep: k(g.ch_step as u64),
            k_xoff: consts((0..2 * l).map(|j| 32 + 16 * j as u64)),
            k_xhi: consts((0..l).map(|j| 32 + 16 * (l + j) as u64)),
            k_pmask: Constant::new((0..pbits).fold(Bits::<1024>::default(), |m, i| m.replace_bit(i, true))),
            _lanes: l,
            _l2: 2 * l,
            _wi: g.core.wi,
        }
    }
}

reg_logic!(PackKvDecoderBurst;
    regs [cnt, wp, rp, rvld, ov, h, e, rowh, chh];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- core ----------------
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.core.in_ready.val();
        for j in 0..self._wi {
            self.core.in_words[j].next = self.in_words[j].val();
        }
        self.core.in_count.next = self.in_count.val();
        self.core.in_last.next = self.in_last.val();
        // the core waits only for a full queue (a register)
        self.full.next = self.cnt.q.val() == self.k_depth.val();
        self.core.out_ready.next = !self.full.val();
        self.we.next = self.core.out_valid.val() & !self.full.val();

        // ---------------- queue word ----------------
        self.side.next = (bit_cast::<32, 3>(self.core.out_status.val()) << self.k_sh1.val())
            | (bit_cast::<32, 16>(self.core.out_ch.val()) << self.k_sh6.val())
            | (bit_cast::<32, 8>(self.core.out_row.val()) << self.k_sh22.val());
        if self.core.out_end.val() {
            self.side.next = self.side.val() | self.k_s0.val();
        }
        if self.core.out_nonfinite.val() {
            self.side.next = self.side.val() | self.k_s4.val();
        }
        if self.core.out_has_perm.val() {
            self.side.next = self.side.val() | self.k_s5.val();
        }
        self.wd.next = self.k_zero.val();
        for j in 0..self._l2 {
            self.x16.next = self.core.out_x[j].val();
            self.wd.next = self.wd.val() | (bit_cast::<1056, 16>(self.x16.val()) << self.k_xoff[j].val());
        }
        if self.core.out_end.val() {
            self.wd.next = bit_cast::<1056, 1024>(self.core.out_perm.val()) << self.k_sh32.val();
        }
        self.wd.next = self.wd.val() | bit_cast::<1056, 32>(self.side.val());

        // ---------------- RAM, R and O ----------------
        // O is done with its entry this cycle: an end entry, or the high half
        self.done.next = self.ov.q.val() & self.out_ready.val() & (self.e.q.val().get_bit(0) | self.h.q.val());
        self.take.next = self.rvld.q.val() & (!self.ov.q.val() | self.done.val());
        // read the next entry into R when R is free next cycle
        self.re.next = (self.cnt.q.val() != self.k_zero8.val()) & (!self.rvld.q.val() | self.take.val());
        self.ram.clock.next = self.clock.val();
        self.ram.we.next = self.we.val();
        self.ram.waddr.next = self.wp.q.val();
        self.ram.wdata.next = self.wd.val();
        self.ram.re.next = self.re.val();
        self.ram.raddr.next = self.rp.q.val();
        self.rd.next = self.ram.rdata.val();
        if self.we.val() {
            self.wp.en.next = true;
            self.wp.d.next = (self.wp.q.val() + self.k_one8.val()) & self.k_amask.val();
        }
        if self.re.val() {
            self.rp.en.next = true;
            self.rp.d.next = (self.rp.q.val() + self.k_one8.val()) & self.k_amask.val();
        }
        if self.we.val() != self.re.val() {
            self.cnt.en.next = true;
            if self.we.val() {
                self.cnt.d.next = self.cnt.q.val() + self.k_one8.val();
            } else {
                self.cnt.d.next = self.cnt.q.val() - self.k_one8.val();
            }
        }
        if self.re.val() {
            self.rvld.en.next = true;
            self.rvld.d.next = true;
        } else if self.take.val() {
            self.rvld.en.next = true;
            self.rvld.d.next = false;
        }
        if self.take.val() {
            self.ov.en.next = true;
            self.ov.d.next = true;
            self.h.en.next = true;
            self.h.d.next = false;
            self.e.en.next = true;
            self.e.d.next = self.rd.val();
            self.rowh.en.next = true;
            self.rowh.d.next = self.rd.val().get_bits::<8>(22) + self.k_rstep.val();
            self.chh.en.next = true;
            self.chh.d.next = self.rd.val().get_bits::<16>(6) + self.k_cstep.val();
        } else if self.done.val() {
            self.ov.en.next = true;
            self.ov.d.next = false;
        } else if self.ov.q.val() & self.out_ready.val() {
            // the low half of a data entry went out
            self.h.en.next = true;
            self.h.d.next = true;
        }

        // ---------------- outputs ----------------
        self.out_valid.next = self.ov.q.val();
        self.out_end.next = self.e.q.val().get_bit(0);
        self.out_status.next = self.e.q.val().get_bits::<3>(1);
        self.out_nonfinite.next = self.e.q.val().get_bit(4);
        self.out_has_perm.next = self.e.q.val().get_bit(5);
        self.out_row.next = self.e.q.val().get_bits::<8>(22);
        self.out_ch.next = self.e.q.val().get_bits::<16>(6);
        if self.h.q.val() {
            self.out_row.next = self.rowh.q.val();
            self.out_ch.next = self.chh.q.val();
        }
        for j in 0..self._lanes {
            self.sh.next = self.e.q.val() >> self.k_xoff[j].val();
            if self.h.q.val() {
                self.sh.next = self.e.q.val() >> self.k_xhi[j].val();
            }
            self.out_x[j].next = bit_cast::<16, 1056>(self.sh.val());
        }
        self.out_perm.next = self.k_zero1024.val();
        if self.e.q.val().get_bit(0) {
            self.out_perm.next = bit_cast::<1024, 1056>(self.e.q.val() >> self.k_sh32.val()) & self.k_pmask.val();
        }
    }
);
