//! `hack-qk-dot`: a quantized Q head held, quantized K partitions streamed
//! one per cycle, one binary32 score per K token: Eq. 4 per partition,
//! `s_a s_b D + m_b s_a Sa + m_a s_b Sb + Pi m_a m_b` with the integer dot
//! product `D = sum a'b'` and the code sums exact, summed over the token's
//! partitions exactly and rounded once.
//!
//! Paper: HACK §5.2 (Eq. 4), §5.3 (orientation), §6 (summation
//! elimination). Spec: docs/spec.md §15.6, §15.8, §15.16.1 (ports, beats,
//! stages).
//!
//! Stages after the two K slots (all advance together, `adv = !out_valid |
//! out_ready`): the Q partition of the beat is picked from the bank; then
//! `eq4::Eq4` forms the five exact terms of Eq. 4 (`S + 2` stages, shared
//! with `hack-pv-dot`) and `acc::ExactAcc` adds them into the token's
//! exact accumulator and rounds it (12 stages).

use super::acc::{self, ExactAcc};
use super::eq4::{self, Eq4};
use super::load::LoadCtl;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// The generator's view of one `hack-qk-dot`.
#[derive(Clone, Copy, Debug)]
pub struct QkGeometry {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: usize,
    pub qp_bits: usize,
}

impl QkGeometry {
    pub fn parts(&self) -> usize {
        self.head_dim / self.partition
    }
    /// `ceil(log2 x)`.
    fn clog2(x: usize) -> usize {
        eq4::clog2(x)
    }
    /// Bits of a code sum: `bits + ceil(log2 Pi)` (spec §15.5).
    pub fn sum_bits(&self, bits: usize) -> usize {
        bits + Self::clog2(self.partition)
    }
    /// Packed words of a partition of `bits`-bit codes (spec §13.4).
    pub fn words(&self, bits: usize) -> usize {
        self.partition.div_ceil(32 / bits)
    }
    /// The accumulator width of spec §15.16.1: every finite metadata word
    /// and every sum its port can carry.
    pub fn acc_width(&self) -> usize {
        82 + self.qp_bits + self.kv_bits + Self::clog2(self.partition) + Self::clog2(self.parts())
    }
    /// Dot-product tree stages `S`.
    pub fn tree_stages(&self) -> usize {
        eq4::tree_stages(self.partition, self.kv_bits)
    }
    /// Cycles from a token's last K beat (its transfer) to its score.
    pub fn latency(&self) -> usize {
        1 + self.tree_stages() + 2 + acc::LATENCY
    }
}

#[derive(LogicBlock)]
pub struct HackQkDot {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: Q bank empty (loading), K slots and pipeline empty
    pub reset: Signal<In, Bit>,
    /// a Q partition is offered
    pub q_valid: Signal<In, Bit>,
    /// Q partition accepted when q_valid and q_ready (from registers: a load is open and no K beat waits in the slots)
    pub q_ready: Signal<Out, Bit>,
    /// the Q partition's metadata word (spec §13.5): min [15:0], step [31:16]
    pub q_meta: Signal<In, Bits<32>>,
    /// the Q partition's packed qp-bits codes (spec §13.4), word i at [32i+31:32i]
    pub q_words: Vec<Signal<In, Bits<32>>>,
    /// the Q partition's code sum (spec §15.5), qp-bits + ceil(log2 partition) bits
    pub q_sum: Signal<In, Bits<16>>,
    /// a K partition is offered
    pub k_valid: Signal<In, Bit>,
    /// K partition accepted when k_valid and k_ready (a register: low while a Q load is open or both slots are full)
    pub k_ready: Signal<Out, Bit>,
    /// the K partition's metadata word (spec §13.5)
    pub k_meta: Signal<In, Bits<32>>,
    /// the K partition's packed kv-bits codes (spec §13.4), word i at [32i+31:32i]
    pub k_words: Vec<Signal<In, Bits<32>>>,
    /// the K partition's code sum (spec §15.5), kv-bits + ceil(log2 partition) bits
    pub k_sum: Signal<In, Bits<16>>,
    /// a score is offered
    pub out_valid: Signal<Out, Bit>,
    /// score taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// binary32 score of one K token, RNE of the exact sum of Eq. 4 over its partitions ({latency} cycles after its last K beat)
    pub out_score: Signal<Out, Bits<32>>,
    /// a metadata word of the token or of the held Q was a NaN or an infinity (sanitised, spec §15.2)
    pub out_nonfinite: Signal<Out, Bit>,
    // ---- front: Q bank, K slots a (issuing) and b ----
    ctl: LoadCtl,
    qb_words: Vec<Reg<Bits<32>>>,
    qb_meta: Vec<Reg<Bits<32>>>,
    qb_sum: Vec<Reg<Bits<16>>>,
    a_words: Vec<Reg<Bits<32>>>,
    b_words: Vec<Reg<Bits<32>>>,
    a_meta: Reg<Bits<32>>,
    b_meta: Reg<Bits<32>>,
    a_sum: Reg<Bits<16>>,
    b_sum: Reg<Bits<16>>,
    a_v: Reg<Bit>,
    b_free: Reg<Bit>,
    adv: Signal<Local, Bit>,
    q_take: Signal<Local, Bit>,
    k_take: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    sel_words: Vec<Signal<Local, Bits<32>>>,
    sel_meta: Signal<Local, Bits<32>>,
    sel_sum: Signal<Local, Bits<16>>,
    // ---- Eq. 4, five terms per beat (hack/eq4.rs) ----
    eq: Eq4,
    acc: ExactAcc,
    // ---- constants ----
    kc: Vec<Constant<Bits<8>>>,
    _p: usize,
    _wq: usize,
    _wk: usize,
}

impl HackQkDot {
    pub fn new(g: &QkGeometry) -> Self {
        let (pi, b, a) = (g.partition, g.kv_bits, g.qp_bits);
        assert!(pi.is_multiple_of(16) && (16..=256).contains(&pi) && g.head_dim.is_multiple_of(pi));
        assert!([2, 3, 4, 8].contains(&b) && [4, 8].contains(&a));
        let p = g.parts();
        assert!(p <= 64);
        let (wq, wk) = (g.words(a), g.words(b));
        let w = g.acc_width();
        HackQkDot {
            clock: Default::default(),
            reset: Default::default(),
            q_valid: Default::default(),
            q_ready: Default::default(),
            q_meta: Default::default(),
            q_words: sigs(wq),
            q_sum: Default::default(),
            k_valid: Default::default(),
            k_ready: Default::default(),
            k_meta: Default::default(),
            k_words: sigs(wk),
            k_sum: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_score: Default::default(),
            out_nonfinite: Default::default(),
            ctl: LoadCtl::new(p),
            qb_words: regs(p * wq),
            qb_meta: regs(p),
            qb_sum: regs(p),
            a_words: regs(wk),
            b_words: regs(wk),
            a_meta: Reg::default(),
            b_meta: Reg::default(),
            a_sum: Reg::default(),
            b_sum: Reg::default(),
            a_v: Reg::default(),
            b_free: Reg::new(true),
            adv: Default::default(),
            q_take: Default::default(),
            k_take: Default::default(),
            issue: Default::default(),
            sel_words: sigs(wq),
            sel_meta: Default::default(),
            sel_sum: Default::default(),
            eq: Eq4::new(pi, b, a),
            acc: ExactAcc::new(5, w),
            kc: consts((0..p as u64).collect::<Vec<_>>()),
            _p: p,
            _wq: wq,
            _wk: wk,
        }
    }
}

impl Logic for HackQkDot {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- register wiring ----
        self.adv.next = !self.acc.out_valid.val() | self.out_ready.val();
        clock!(self, clock, ctl, a_meta, b_meta, a_sum, b_sum, a_v, b_free, eq, acc);
        self.ctl.reset.next = self.reset.val();
        self.a_meta.reset.next = self.reset.val();
        self.b_meta.reset.next = self.reset.val();
        self.a_sum.reset.next = self.reset.val();
        self.b_sum.reset.next = self.reset.val();
        self.a_v.reset.next = self.reset.val();
        self.b_free.reset.next = self.reset.val();
        self.eq.reset.next = self.reset.val();
        self.eq.en.next = self.adv.val();
        self.acc.reset.next = self.reset.val();
        self.acc.en.next = self.adv.val();
        for i in 0..self._wk {
            self.a_words[i].clock.next = self.clock.val();
            self.a_words[i].reset.next = self.reset.val();
            self.a_words[i].en.next = false;
            self.a_words[i].d.next = self.k_words[i].val();
            self.b_words[i].clock.next = self.clock.val();
            self.b_words[i].reset.next = self.reset.val();
            self.b_words[i].en.next = false;
            self.b_words[i].d.next = self.k_words[i].val();
        }

        // ---- front: a Q load, then K beats (hack/load.rs) ----
        self.ctl.q_valid.next = self.q_valid.val();
        self.ctl.k_valid.next = self.k_valid.val();
        self.ctl.q_room.next = !self.a_v.q.val() & self.b_free.q.val();
        self.ctl.k_room.next = self.b_free.q.val();
        self.issue.next = self.a_v.q.val() & self.adv.val();
        self.ctl.issue.next = self.issue.val();
        self.q_ready.next = self.ctl.q_ready.val();
        self.k_ready.next = self.ctl.k_ready.val();
        self.q_take.next = self.ctl.q_take.val();
        self.k_take.next = self.ctl.k_take.val();
        // the two slots (each beat issues in one cycle)
        self.a_meta.d.next = self.k_meta.val();
        self.b_meta.d.next = self.k_meta.val();
        self.a_sum.d.next = self.k_sum.val();
        self.b_sum.d.next = self.k_sum.val();
        self.a_meta.en.next = false;
        self.b_meta.en.next = false;
        self.a_sum.en.next = false;
        self.b_sum.en.next = false;
        self.a_v.d.next = self.a_v.q.val();
        self.a_v.en.next = true;
        self.b_free.d.next = self.b_free.q.val();
        self.b_free.en.next = true;
        if self.issue.val() {
            if !self.b_free.q.val() {
                // b moves to a (no take: k_ready was low)
                self.a_meta.d.next = self.b_meta.q.val();
                self.a_sum.d.next = self.b_sum.q.val();
                self.a_meta.en.next = true;
                self.a_sum.en.next = true;
                for i in 0..self._wk {
                    self.a_words[i].d.next = self.b_words[i].q.val();
                    self.a_words[i].en.next = true;
                }
                self.b_free.d.next = true;
            } else {
                self.a_v.d.next = self.k_take.val();
                self.a_meta.en.next = self.k_take.val();
                self.a_sum.en.next = self.k_take.val();
                for i in 0..self._wk {
                    self.a_words[i].en.next = self.k_take.val();
                }
            }
        } else if self.k_take.val() {
            if self.a_v.q.val() {
                self.b_meta.en.next = true;
                self.b_sum.en.next = true;
                for i in 0..self._wk {
                    self.b_words[i].en.next = true;
                }
                self.b_free.d.next = false;
            } else {
                self.a_meta.en.next = true;
                self.a_sum.en.next = true;
                for i in 0..self._wk {
                    self.a_words[i].en.next = true;
                }
                self.a_v.d.next = true;
            }
        }

        // ---- the Q bank: partition qcnt of an open load ----
        for wq in self._wq..(self._wq + 1) {
            for p in 0..self._p {
                self.qb_meta[p].clock.next = self.clock.val();
                self.qb_meta[p].reset.next = self.reset.val();
                self.qb_meta[p].d.next = self.q_meta.val();
                self.qb_meta[p].en.next = self.q_take.val() & (self.ctl.qcnt.val() == self.kc[p].val());
                self.qb_sum[p].clock.next = self.clock.val();
                self.qb_sum[p].reset.next = self.reset.val();
                self.qb_sum[p].d.next = self.q_sum.val();
                self.qb_sum[p].en.next = self.q_take.val() & (self.ctl.qcnt.val() == self.kc[p].val());
                for w in 0..self._wq {
                    self.qb_words[p * wq + w].clock.next = self.clock.val();
                    self.qb_words[p * wq + w].reset.next = self.reset.val();
                    self.qb_words[p * wq + w].d.next = self.q_words[w].val();
                    self.qb_words[p * wq + w].en.next = self.q_take.val() & (self.ctl.qcnt.val() == self.kc[p].val());
                }
            }
        }
        // ---- the beat's Q partition, picked by its index ----
        for wq in self._wq..(self._wq + 1) {
            for w in 0..self._wq {
                self.sel_words[w].next = self.qb_words[w].q.val();
                for p in 1..self._p {
                    if self.ctl.kout.val() == self.kc[p].val() {
                        self.sel_words[w].next = self.qb_words[p * wq + w].q.val();
                    }
                }
            }
        }
        self.sel_meta.next = self.qb_meta[0].q.val();
        self.sel_sum.next = self.qb_sum[0].q.val();
        for p in 1..self._p {
            if self.ctl.kout.val() == self.kc[p].val() {
                self.sel_meta.next = self.qb_meta[p].q.val();
                self.sel_sum.next = self.qb_sum[p].q.val();
            }
        }

        // ---- Eq. 4 of the beat's pair (hack/eq4.rs), then the accumulator ----
        for w in 0..self._wq {
            self.eq.a_words[w].next = self.sel_words[w].val();
        }
        for w in 0..self._wk {
            self.eq.b_words[w].next = self.a_words[w].q.val();
        }
        self.eq.a_meta.next = self.sel_meta.val();
        self.eq.a_sum.next = self.sel_sum.val();
        self.eq.b_meta.next = self.a_meta.q.val();
        self.eq.b_sum.next = self.a_sum.q.val();
        self.eq.in_valid.next = self.issue.val();
        self.eq.in_tag.next = bit_cast::<16, 1>(self.ctl.first.val().into())
            | (bit_cast::<16, 1>(self.ctl.last.val().into()) << 1);
        self.acc.in_valid.next = self.eq.out_valid.val();
        self.acc.in_first.next = self.eq.out_tag.val().get_bit(0);
        self.acc.in_last.next = self.eq.out_tag.val().get_bit(1);
        self.acc.in_flag.next = self.eq.out_flag.val();
        for i in 0..5 {
            self.acc.in_mag[i].next = self.eq.out_mag[i].val();
            self.acc.in_sh[i].next = self.eq.out_sh[i].val();
            self.acc.in_neg[i].next = self.eq.out_neg[i].val();
        }
        self.out_valid.next = self.acc.out_valid.val();
        self.out_score.next = self.acc.out_y.val();
        self.out_nonfinite.next = self.acc.out_flag.val();
    }
}
