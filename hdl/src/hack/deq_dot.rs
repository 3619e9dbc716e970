//! `hack-deq-dot`: the dequantize-first baseline of `hack-qk-dot` at the
//! same throughput (one K partition per cycle). Q is held in FP16; each K
//! partition is dequantized to FP16 by KIVI's dequantizer (`RNE16(min + q
//! step)`, one group of `Pi` lanes per cycle), multiplied by Q lane by lane
//! (FP16 x FP16, exact), summed by a binary32 adder tree, and the token's
//! partition sums are added exactly and rounded once (`acc::ExactAcc`).
//!
//! Paper: HACK §7 (the FP16 attention it is measured against). Spec:
//! docs/spec.md §15.10 (the construction), §15.16.2 (ports, stages).
//!
//! Stages (all advance together, `adv = !out_valid | out_ready`):
//! - the K port feeds `kivi::dequantizer::KiviDequantizer` (`G = lanes =
//!   Pi`, its metadata word sanitised in front of it; the `nonfinite` bit of
//!   each beat waits in a 16-entry queue beside it);
//! - M1: the beat's Q partition picked from the bank; Q and K decoded to
//!   significand, shift and sign (`Fp16Sig`); M2: `sig_q sig_k` as two
//!   16x8 pieces; M3: their sum (22 bits); M4: normalised to the adders'
//!   operand (`m 2^(e - 71)`);
//! - `ceil(log2 Pi)` levels of `FpAdd` (5 stages each), a zero in place
//!   of a missing right operand;
//! - C: the root as magnitude and shift in units of 2^-48;
//! - `ExactAcc` with one term (12 stages).

use super::acc::{self, ExactAcc, TERM_W};
use super::fp_add::{self, FpAdd};
use super::load::LoadCtl;
use super::sig::Fp16Sig;
use crate::kivi::dequantizer::KiviDequantizer;
use crate::oaken::classify::Sanitize;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// The generator's view of one `hack-deq-dot`.
#[derive(Clone, Copy, Debug)]
pub struct DeqGeometry {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: usize,
}

fn clog2(x: usize) -> usize {
    x.next_power_of_two().trailing_zeros() as usize
}

impl DeqGeometry {
    pub fn parts(&self) -> usize {
        self.head_dim / self.partition
    }
    pub fn words(&self) -> usize {
        self.partition.div_ceil(32 / self.kv_bits)
    }
    /// Levels of the adder tree.
    pub fn levels(&self) -> usize {
        clog2(self.partition)
    }
    /// The accumulator width of spec §15.16.2.
    pub fn acc_width(&self) -> usize {
        83 + clog2(self.partition) + clog2(self.parts())
    }
    /// Control stages from M1 to C.
    fn ctl(&self) -> usize {
        4 + fp_add::LATENCY * self.levels() + 1
    }
    /// Cycles from a token's last K beat (its transfer) to its score.
    pub fn latency(&self) -> usize {
        KiviDequantizer::LATENCY + self.ctl() + acc::LATENCY
    }
}

#[derive(LogicBlock)]
pub struct HackDeqDot {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: Q bank empty (loading), the dequantizer and the pipeline empty
    pub reset: Signal<In, Bit>,
    /// a Q partition is offered
    pub q_valid: Signal<In, Bit>,
    /// Q partition accepted when q_valid and q_ready (from registers: a load is open and no K beat is inside the unit before its Q is picked)
    pub q_ready: Signal<Out, Bit>,
    /// the Q partition's FP16 values; lane z at [16z+15:16z]
    pub q_x: Vec<Signal<In, Bits<16>>>,
    /// a K partition is offered
    pub k_valid: Signal<In, Bit>,
    /// K partition accepted when k_valid and k_ready (a register: low while a Q load is open or the dequantizer's slots are full)
    pub k_ready: Signal<Out, Bit>,
    /// the K partition's metadata word (spec §13.5)
    pub k_meta: Signal<In, Bits<32>>,
    /// the K partition's packed kv-bits codes (spec §13.4), word i at [32i+31:32i]
    pub k_words: Vec<Signal<In, Bits<32>>>,
    /// a score is offered
    pub out_valid: Signal<Out, Bit>,
    /// score taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// binary32 score of one K token: RNE of the exact sum of its partitions' binary32 tree sums ({latency} cycles after its last K beat)
    pub out_score: Signal<Out, Bits<32>>,
    /// a Q element or a metadata word of the token was a NaN or an infinity (sanitised, spec §15.2)
    pub out_nonfinite: Signal<Out, Bit>,
    // ---- front ----
    ctl: LoadCtl,
    inflight: Reg<Bits<8>>,
    qb: Vec<Reg<Bits<16>>>,
    fq: Reg<Bits<16>>,
    fq_wr: Reg<Bits<4>>,
    fq_rd: Reg<Bits<4>>,
    adv: Signal<Local, Bit>,
    q_take: Signal<Local, Bit>,
    k_take: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    san_s: Sanitize,
    san_m: Sanitize,
    deq: KiviDequantizer,
    // ---- M1 .. M4 ----
    dq: Vec<Fp16Sig>,
    dk: Vec<Fp16Sig>,
    qsel: Signal<Local, Bits<16>>,
    nfq: Signal<Local, Bit>,
    m1_sq: Vec<Reg<Bits<16>>>,
    m1_sk: Vec<Reg<Bits<16>>>,
    m1_e: Vec<Reg<Bits<8>>>,
    m1_n: Vec<Reg<Bit>>,
    ylo: Signal<Local, Bits<16>>,
    yhi: Signal<Local, Bits<16>>,
    m2_lo: Vec<Reg<Bits<32>>>,
    m2_hi: Vec<Reg<Bits<32>>>,
    m2_e: Vec<Reg<Bits<8>>>,
    m2_n: Vec<Reg<Bit>>,
    m3_p: Vec<Reg<Bits<32>>>,
    m3_e: Vec<Reg<Bits<8>>>,
    m3_n: Vec<Reg<Bit>>,
    nv: Signal<Local, Bits<32>>,
    ne: Signal<Local, Bits<8>>,
    m4_m: Vec<Reg<Bits<24>>>,
    m4_e: Vec<Reg<Bits<8>>>,
    m4_n: Vec<Reg<Bit>>,
    // ---- the tree, one field per level ----
    lv1: Vec<FpAdd>,
    lv2: Vec<FpAdd>,
    lv3: Vec<FpAdd>,
    lv4: Vec<FpAdd>,
    lv5: Vec<FpAdd>,
    lv6: Vec<FpAdd>,
    lv7: Vec<FpAdd>,
    lv8: Vec<FpAdd>,
    // ---- C: the root in units of 2^-48 ----
    rn: Signal<Local, Bit>,
    re: Signal<Local, Bits<8>>,
    rm: Signal<Local, Bits<24>>,
    c_mag: Reg<Bits<TERM_W>>,
    c_sh: Reg<Bits<8>>,
    c_n: Reg<Bit>,
    vld: Vec<Reg<Bit>>,
    fst: Vec<Reg<Bit>>,
    lst: Vec<Reg<Bit>>,
    flg: Vec<Reg<Bit>>,
    acc: ExactAcc,
    // ---- constants ----
    kc: Vec<Constant<Bits<8>>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_one4: Constant<Bits<4>>,
    k_one16: Constant<Bits<16>>,
    k_ff16: Constant<Bits<16>>,
    k_s8h: Constant<Bits<16>>,
    k_s8: Constant<Bits<32>>,
    k_s2: Constant<Bits<32>>,
    k_c16: Constant<Bits<32>>,
    k_c8: Constant<Bits<32>>,
    k_c4: Constant<Bits<32>>,
    k_c2: Constant<Bits<32>>,
    k_c1: Constant<Bits<32>>,
    k_l21: Constant<Bits<8>>,
    k_l16: Constant<Bits<8>>,
    k_l8: Constant<Bits<8>>,
    k_l4: Constant<Bits<8>>,
    k_l2: Constant<Bits<8>>,
    k_e23: Constant<Bits<8>>,
    k_z32: Constant<Bits<32>>,
    k_z16: Constant<Bits<16>>,
    k_z8: Constant<Bits<8>>,
    k_z4: Constant<Bits<4>>,
    k_z2: Constant<Bits<2>>,
    k_z24: Constant<Bits<24>>,
    _p: usize,
    _pi: usize,
    _w: usize,
    _ctl: usize,
    _f2: usize,
    _f3: usize,
    _f4: usize,
    _f5: usize,
    _f6: usize,
    _f7: usize,
    _f8: usize,
    _h1: usize,
    _h2: usize,
    _h3: usize,
    _h4: usize,
    _h5: usize,
    _h6: usize,
    _h7: usize,
    _h8: usize,
    _is4: usize,
    _is5: usize,
    _is6: usize,
    _is7: usize,
    _is8: usize,
}

impl HackDeqDot {
    pub fn new(g: &DeqGeometry) -> Self {
        let (pi, b) = (g.partition, g.kv_bits);
        assert!(pi.is_multiple_of(16) && (16..=256).contains(&pi) && g.head_dim.is_multiple_of(pi) && [2, 3, 4, 8].contains(&b));
        let p = g.parts();
        assert!(p <= 64);
        // h[l]: adders of level l (h[0] = lanes); f[l]: those with two operands
        let mut h = [0usize; 9];
        let mut f = [0usize; 9];
        h[0] = pi;
        let levels = g.levels();
        for l in 1..=levels {
            h[l] = h[l - 1].div_ceil(2);
            f[l] = h[l - 1] / 2;
        }
        assert_eq!(h[levels], 1);
        let fa = |n: usize| (0..n).map(|_| FpAdd::default()).collect::<Vec<_>>();
        let ctl = g.ctl();
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        HackDeqDot {
            clock: Default::default(),
            reset: Default::default(),
            q_valid: Default::default(),
            q_ready: Default::default(),
            q_x: sigs(pi),
            k_valid: Default::default(),
            k_ready: Default::default(),
            k_meta: Default::default(),
            k_words: sigs(g.words()),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_score: Default::default(),
            out_nonfinite: Default::default(),
            ctl: LoadCtl::new(p),
            inflight: Reg::default(),
            qb: regs(p * pi),
            fq: Reg::default(),
            fq_wr: Reg::default(),
            fq_rd: Reg::default(),
            adv: Default::default(),
            q_take: Default::default(),
            k_take: Default::default(),
            pop: Default::default(),
            san_s: Sanitize::default(),
            san_m: Sanitize::default(),
            deq: KiviDequantizer::new(pi, b, pi),
            dq: (0..pi).map(|_| Fp16Sig::default()).collect(),
            dk: (0..pi).map(|_| Fp16Sig::default()).collect(),
            qsel: Default::default(),
            nfq: Default::default(),
            m1_sq: regs(pi),
            m1_sk: regs(pi),
            m1_e: regs(pi),
            m1_n: regs(pi),
            ylo: Default::default(),
            yhi: Default::default(),
            m2_lo: regs(pi),
            m2_hi: regs(pi),
            m2_e: regs(pi),
            m2_n: regs(pi),
            m3_p: regs(pi),
            m3_e: regs(pi),
            m3_n: regs(pi),
            nv: Default::default(),
            ne: Default::default(),
            m4_m: regs(pi),
            m4_e: regs(pi),
            m4_n: regs(pi),
            lv1: fa(h[1]),
            lv2: fa(h[2]),
            lv3: fa(h[3]),
            lv4: fa(h[4]),
            lv5: fa(h[5]),
            lv6: fa(h[6]),
            lv7: fa(h[7]),
            lv8: fa(h[8]),
            rn: Default::default(),
            re: Default::default(),
            rm: Default::default(),
            c_mag: Reg::default(),
            c_sh: Reg::default(),
            c_n: Reg::default(),
            vld: regs(ctl),
            fst: regs(ctl),
            lst: regs(ctl),
            flg: regs(ctl),
            acc: ExactAcc::new(1, g.acc_width()),
            kc: consts((0..p as u64).collect::<Vec<_>>()),
            k_one8: c8(1),
            k_zero8: c8(0),
            k_one4: Constant::new(1u64.into()),
            k_one16: Constant::new(1u64.into()),
            k_ff16: Constant::new(0xFFu64.into()),
            k_s8h: Constant::new(8u64.into()),
            k_s8: c32(8),
            k_s2: c32(2),
            k_c16: c32(16),
            k_c8: c32(8),
            k_c4: c32(4),
            k_c2: c32(2),
            k_c1: c32(1),
            k_l21: c8(21),
            k_l16: c8(16),
            k_l8: c8(8),
            k_l4: c8(4),
            k_l2: c8(2),
            k_e23: c8(23),
            k_z32: c32(0),
            k_z16: Constant::new(0u64.into()),
            k_z8: c8(0),
            k_z4: Constant::new(0u64.into()),
            k_z2: Constant::new(0u64.into()),
            k_z24: Constant::new(0u64.into()),
            _p: p,
            _pi: pi,
            _w: g.words(),
            _ctl: ctl,
            _f2: f[2],
            _f3: f[3],
            _f4: f[4],
            _f5: f[5],
            _f6: f[6],
            _f7: f[7],
            _f8: f[8],
            _h1: h[1],
            _h2: h[2],
            _h3: h[3],
            _h4: h[4],
            _h5: h[5],
            _h6: h[6],
            _h7: h[7],
            _h8: h[8],
            _is4: (levels == 4) as usize,
            _is5: (levels == 5) as usize,
            _is6: (levels == 6) as usize,
            _is7: (levels == 7) as usize,
            _is8: (levels == 8) as usize,
        }
    }
}

impl Logic for HackDeqDot {
    #[hdl_gen]
    fn update(&mut self) {
        self.adv.next = !self.acc.out_valid.val() | self.out_ready.val();
        clock!(self, clock, ctl, inflight, fq, fq_wr, fq_rd, deq, c_mag, c_sh, c_n, acc);
        self.ctl.reset.next = self.reset.val();
        self.inflight.reset.next = self.reset.val();
        self.fq.reset.next = self.reset.val();
        self.fq_wr.reset.next = self.reset.val();
        self.fq_rd.reset.next = self.reset.val();
        self.deq.reset.next = self.reset.val();
        self.c_mag.reset.next = self.reset.val();
        self.c_sh.reset.next = self.reset.val();
        self.c_n.reset.next = self.reset.val();
        self.acc.reset.next = self.reset.val();
        self.c_mag.en.next = self.adv.val();
        self.c_sh.en.next = self.adv.val();
        self.c_n.en.next = self.adv.val();
        self.acc.en.next = self.adv.val();
        for z in 0..self._pi {
            self.m1_sq[z].clock.next = self.clock.val();
            self.m1_sq[z].reset.next = self.reset.val();
            self.m1_sq[z].en.next = self.adv.val();
            self.m1_sk[z].clock.next = self.clock.val();
            self.m1_sk[z].reset.next = self.reset.val();
            self.m1_sk[z].en.next = self.adv.val();
            self.m1_e[z].clock.next = self.clock.val();
            self.m1_e[z].reset.next = self.reset.val();
            self.m1_e[z].en.next = self.adv.val();
            self.m1_n[z].clock.next = self.clock.val();
            self.m1_n[z].reset.next = self.reset.val();
            self.m1_n[z].en.next = self.adv.val();
            self.m2_lo[z].clock.next = self.clock.val();
            self.m2_lo[z].reset.next = self.reset.val();
            self.m2_lo[z].en.next = self.adv.val();
            self.m2_hi[z].clock.next = self.clock.val();
            self.m2_hi[z].reset.next = self.reset.val();
            self.m2_hi[z].en.next = self.adv.val();
            self.m2_e[z].clock.next = self.clock.val();
            self.m2_e[z].reset.next = self.reset.val();
            self.m2_e[z].en.next = self.adv.val();
            self.m2_n[z].clock.next = self.clock.val();
            self.m2_n[z].reset.next = self.reset.val();
            self.m2_n[z].en.next = self.adv.val();
            self.m3_p[z].clock.next = self.clock.val();
            self.m3_p[z].reset.next = self.reset.val();
            self.m3_p[z].en.next = self.adv.val();
            self.m3_e[z].clock.next = self.clock.val();
            self.m3_e[z].reset.next = self.reset.val();
            self.m3_e[z].en.next = self.adv.val();
            self.m3_n[z].clock.next = self.clock.val();
            self.m3_n[z].reset.next = self.reset.val();
            self.m3_n[z].en.next = self.adv.val();
            self.m4_m[z].clock.next = self.clock.val();
            self.m4_m[z].reset.next = self.reset.val();
            self.m4_m[z].en.next = self.adv.val();
            self.m4_e[z].clock.next = self.clock.val();
            self.m4_e[z].reset.next = self.reset.val();
            self.m4_e[z].en.next = self.adv.val();
            self.m4_n[z].clock.next = self.clock.val();
            self.m4_n[z].reset.next = self.reset.val();
            self.m4_n[z].en.next = self.adv.val();
        }
        for i in 0..self._ctl {
            self.vld[i].clock.next = self.clock.val();
            self.vld[i].reset.next = self.reset.val();
            self.vld[i].en.next = self.adv.val();
            self.fst[i].clock.next = self.clock.val();
            self.fst[i].reset.next = self.reset.val();
            self.fst[i].en.next = self.adv.val();
            self.lst[i].clock.next = self.clock.val();
            self.lst[i].reset.next = self.reset.val();
            self.lst[i].en.next = self.adv.val();
            self.flg[i].clock.next = self.clock.val();
            self.flg[i].reset.next = self.reset.val();
            self.flg[i].en.next = self.adv.val();
        }

        // ---- front: the K port into the dequantizer, its metadata sanitised ----
        self.ctl.q_valid.next = self.q_valid.val();
        self.ctl.k_valid.next = self.k_valid.val();
        self.ctl.q_room.next = self.inflight.q.val() == self.k_zero8.val();
        self.ctl.k_room.next = self.deq.in_ready.val();
        self.q_ready.next = self.ctl.q_ready.val();
        self.k_ready.next = self.ctl.k_ready.val();
        self.q_take.next = self.ctl.q_take.val();
        self.k_take.next = self.ctl.k_take.val();
        self.san_s.x.next = self.k_meta.val().get_bits::<16>(16);
        self.san_m.x.next = self.k_meta.val().get_bits::<16>(0);
        self.deq.in_valid.next = self.k_take.val();
        self.deq.in_meta.next =
            (bit_cast::<32, 16>(self.san_s.y.val()) << self.k_c16.val()) | bit_cast::<32, 16>(self.san_m.y.val());
        for i in 0..self._w {
            self.deq.in_words[i].next = self.k_words[i].val();
        }
        self.deq.out_ready.next = self.adv.val();
        self.pop.next = self.deq.out_valid.val() & self.adv.val();
        self.ctl.issue.next = self.pop.val();
        // the flag of each beat in the dequantizer, in order
        self.fq.d.next = self.fq.q.val();
        self.fq.en.next = self.k_take.val();
        if self.san_s.nonfinite.val() | self.san_m.nonfinite.val() {
            self.fq.d.next = self.fq.q.val() | (self.k_one16.val() << self.fq_wr.q.val());
        } else {
            self.fq.d.next = self.fq.q.val() & !(self.k_one16.val() << self.fq_wr.q.val());
        }
        self.fq_wr.d.next = self.fq_wr.q.val() + self.k_one4.val();
        self.fq_wr.en.next = self.k_take.val();
        self.fq_rd.d.next = self.fq_rd.q.val() + self.k_one4.val();
        self.fq_rd.en.next = self.pop.val();
        self.inflight.en.next = true;
        self.inflight.d.next = self.inflight.q.val();
        if self.k_take.val() & !self.pop.val() {
            self.inflight.d.next = self.inflight.q.val() + self.k_one8.val();
        }
        if self.pop.val() & !self.k_take.val() {
            self.inflight.d.next = self.inflight.q.val() - self.k_one8.val();
        }
        for pi in self._pi..(self._pi + 1) {
            for p in 0..self._p {
                for z in 0..self._pi {
                    self.qb[p * pi + z].clock.next = self.clock.val();
                    self.qb[p * pi + z].reset.next = self.reset.val();
                    self.qb[p * pi + z].d.next = self.q_x[z].val();
                    self.qb[p * pi + z].en.next = self.q_take.val() & (self.ctl.qcnt.val() == self.kc[p].val());
                }
            }
        }

        // ---- M1: Q picked, both decoded ----
        self.nfq.next = false;
        for pi in self._pi..(self._pi + 1) {
            for z in 0..self._pi {
                self.qsel.next = self.qb[z].q.val();
                for p in 1..self._p {
                    if self.ctl.kout.val() == self.kc[p].val() {
                        self.qsel.next = self.qb[p * pi + z].q.val();
                    }
                }
                self.dq[z].x.next = self.qsel.val();
                self.dk[z].x.next = self.deq.out_y[z].val();
                self.m1_sq[z].d.next = self.dq[z].sig.val();
                self.m1_sk[z].d.next = self.dk[z].sig.val();
                self.m1_e[z].d.next = self.dq[z].e.val() + self.dk[z].e.val();
                self.m1_n[z].d.next = self.dq[z].neg.val() ^ self.dk[z].neg.val();
                // (the dequantizer's outputs are finite: dk's flag is 0)
                self.nfq.next = self.nfq.val() | self.dq[z].nonfinite.val() | self.dk[z].nonfinite.val();
            }
        }
        self.vld[0].d.next = self.pop.val() & self.deq.out_last.val();
        self.fst[0].d.next = self.ctl.first.val();
        self.lst[0].d.next = self.ctl.last.val();
        self.flg[0].d.next =
            self.nfq.val() | (((self.fq.q.val() >> self.fq_rd.q.val()) & self.k_one16.val()) != self.k_z16.val());
        for i in 1..self._ctl {
            self.vld[i].d.next = self.vld[i - 1].q.val();
            self.fst[i].d.next = self.fst[i - 1].q.val();
            self.lst[i].d.next = self.lst[i - 1].q.val();
            self.flg[i].d.next = self.flg[i - 1].q.val();
        }

        // ---- M2: sig_q sig_k as two pieces; M3: their sum ----
        for z in 0..self._pi {
            self.ylo.next = self.m1_sk[z].q.val() & self.k_ff16.val();
            self.yhi.next = self.m1_sk[z].q.val() >> self.k_s8h.val();
            self.m2_lo[z].d.next = self.m1_sq[z].q.val() * self.ylo.val();
            self.m2_hi[z].d.next = self.m1_sq[z].q.val() * self.yhi.val();
            self.m2_e[z].d.next = self.m1_e[z].q.val();
            self.m2_n[z].d.next = self.m1_n[z].q.val();
            self.m3_p[z].d.next = self.m2_lo[z].q.val() + (self.m2_hi[z].q.val() << self.k_s8.val());
            self.m3_e[z].d.next = self.m2_e[z].q.val();
            self.m3_n[z].d.next = self.m2_n[z].q.val();
        }

        // ---- M4: the product as m 2^(e - 71), bit 23 of m set ----
        for z in 0..self._pi {
            self.nv.next = self.m3_p[z].q.val() << self.k_s2.val();
            self.ne.next = self.m3_e[z].q.val() + self.k_l21.val();
            if self.nv.val().get_bits::<16>(8) == self.k_z16.val() {
                self.nv.next = self.nv.val() << self.k_c16.val();
                self.ne.next = self.ne.val() - self.k_l16.val();
            }
            if self.nv.val().get_bits::<8>(16) == self.k_z8.val() {
                self.nv.next = self.nv.val() << self.k_c8.val();
                self.ne.next = self.ne.val() - self.k_l8.val();
            }
            if self.nv.val().get_bits::<4>(20) == self.k_z4.val() {
                self.nv.next = self.nv.val() << self.k_c4.val();
                self.ne.next = self.ne.val() - self.k_l4.val();
            }
            if self.nv.val().get_bits::<2>(22) == self.k_z2.val() {
                self.nv.next = self.nv.val() << self.k_c2.val();
                self.ne.next = self.ne.val() - self.k_l2.val();
            }
            if !self.nv.val().get_bit(23) {
                self.nv.next = self.nv.val() << self.k_c1.val();
                self.ne.next = self.ne.val() - self.k_one8.val();
            }
            self.m4_m[z].d.next = self.nv.val().get_bits::<24>(0);
            self.m4_e[z].d.next = self.ne.val();
            if self.m3_p[z].q.val() == self.k_z32.val() {
                self.m4_e[z].d.next = self.k_z8.val();
            }
            self.m4_n[z].d.next = self.m3_n[z].q.val();
        }

        // ---- the tree ----
        for i in 0..self._h1 {
            self.lv1[i].clock.next = self.clock.val();
            self.lv1[i].reset.next = self.reset.val();
            self.lv1[i].en.next = self.adv.val();
            self.lv1[i].a_neg.next = self.m4_n[2 * i].q.val();
            self.lv1[i].a_e.next = self.m4_e[2 * i].q.val();
            self.lv1[i].a_m.next = self.m4_m[2 * i].q.val();
            self.lv1[i].b_neg.next = self.m4_n[2 * i + 1].q.val();
            self.lv1[i].b_e.next = self.m4_e[2 * i + 1].q.val();
            self.lv1[i].b_m.next = self.m4_m[2 * i + 1].q.val();
        }
        for i in 0..self._h2 {
            self.lv2[i].clock.next = self.clock.val();
            self.lv2[i].reset.next = self.reset.val();
            self.lv2[i].en.next = self.adv.val();
            self.lv2[i].a_neg.next = self.lv1[2 * i].y_neg.val();
            self.lv2[i].a_e.next = self.lv1[2 * i].y_e.val();
            self.lv2[i].a_m.next = self.lv1[2 * i].y_m.val();
            self.lv2[i].b_neg.next = false;
            self.lv2[i].b_e.next = self.k_z8.val();
            self.lv2[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f2 {
            self.lv2[i].b_neg.next = self.lv1[2 * i + 1].y_neg.val();
            self.lv2[i].b_e.next = self.lv1[2 * i + 1].y_e.val();
            self.lv2[i].b_m.next = self.lv1[2 * i + 1].y_m.val();
        }
        for i in 0..self._h3 {
            self.lv3[i].clock.next = self.clock.val();
            self.lv3[i].reset.next = self.reset.val();
            self.lv3[i].en.next = self.adv.val();
            self.lv3[i].a_neg.next = self.lv2[2 * i].y_neg.val();
            self.lv3[i].a_e.next = self.lv2[2 * i].y_e.val();
            self.lv3[i].a_m.next = self.lv2[2 * i].y_m.val();
            self.lv3[i].b_neg.next = false;
            self.lv3[i].b_e.next = self.k_z8.val();
            self.lv3[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f3 {
            self.lv3[i].b_neg.next = self.lv2[2 * i + 1].y_neg.val();
            self.lv3[i].b_e.next = self.lv2[2 * i + 1].y_e.val();
            self.lv3[i].b_m.next = self.lv2[2 * i + 1].y_m.val();
        }
        for i in 0..self._h4 {
            self.lv4[i].clock.next = self.clock.val();
            self.lv4[i].reset.next = self.reset.val();
            self.lv4[i].en.next = self.adv.val();
            self.lv4[i].a_neg.next = self.lv3[2 * i].y_neg.val();
            self.lv4[i].a_e.next = self.lv3[2 * i].y_e.val();
            self.lv4[i].a_m.next = self.lv3[2 * i].y_m.val();
            self.lv4[i].b_neg.next = false;
            self.lv4[i].b_e.next = self.k_z8.val();
            self.lv4[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f4 {
            self.lv4[i].b_neg.next = self.lv3[2 * i + 1].y_neg.val();
            self.lv4[i].b_e.next = self.lv3[2 * i + 1].y_e.val();
            self.lv4[i].b_m.next = self.lv3[2 * i + 1].y_m.val();
        }
        for i in 0..self._h5 {
            self.lv5[i].clock.next = self.clock.val();
            self.lv5[i].reset.next = self.reset.val();
            self.lv5[i].en.next = self.adv.val();
            self.lv5[i].a_neg.next = self.lv4[2 * i].y_neg.val();
            self.lv5[i].a_e.next = self.lv4[2 * i].y_e.val();
            self.lv5[i].a_m.next = self.lv4[2 * i].y_m.val();
            self.lv5[i].b_neg.next = false;
            self.lv5[i].b_e.next = self.k_z8.val();
            self.lv5[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f5 {
            self.lv5[i].b_neg.next = self.lv4[2 * i + 1].y_neg.val();
            self.lv5[i].b_e.next = self.lv4[2 * i + 1].y_e.val();
            self.lv5[i].b_m.next = self.lv4[2 * i + 1].y_m.val();
        }
        for i in 0..self._h6 {
            self.lv6[i].clock.next = self.clock.val();
            self.lv6[i].reset.next = self.reset.val();
            self.lv6[i].en.next = self.adv.val();
            self.lv6[i].a_neg.next = self.lv5[2 * i].y_neg.val();
            self.lv6[i].a_e.next = self.lv5[2 * i].y_e.val();
            self.lv6[i].a_m.next = self.lv5[2 * i].y_m.val();
            self.lv6[i].b_neg.next = false;
            self.lv6[i].b_e.next = self.k_z8.val();
            self.lv6[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f6 {
            self.lv6[i].b_neg.next = self.lv5[2 * i + 1].y_neg.val();
            self.lv6[i].b_e.next = self.lv5[2 * i + 1].y_e.val();
            self.lv6[i].b_m.next = self.lv5[2 * i + 1].y_m.val();
        }
        for i in 0..self._h7 {
            self.lv7[i].clock.next = self.clock.val();
            self.lv7[i].reset.next = self.reset.val();
            self.lv7[i].en.next = self.adv.val();
            self.lv7[i].a_neg.next = self.lv6[2 * i].y_neg.val();
            self.lv7[i].a_e.next = self.lv6[2 * i].y_e.val();
            self.lv7[i].a_m.next = self.lv6[2 * i].y_m.val();
            self.lv7[i].b_neg.next = false;
            self.lv7[i].b_e.next = self.k_z8.val();
            self.lv7[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f7 {
            self.lv7[i].b_neg.next = self.lv6[2 * i + 1].y_neg.val();
            self.lv7[i].b_e.next = self.lv6[2 * i + 1].y_e.val();
            self.lv7[i].b_m.next = self.lv6[2 * i + 1].y_m.val();
        }
        for i in 0..self._h8 {
            self.lv8[i].clock.next = self.clock.val();
            self.lv8[i].reset.next = self.reset.val();
            self.lv8[i].en.next = self.adv.val();
            self.lv8[i].a_neg.next = self.lv7[2 * i].y_neg.val();
            self.lv8[i].a_e.next = self.lv7[2 * i].y_e.val();
            self.lv8[i].a_m.next = self.lv7[2 * i].y_m.val();
            self.lv8[i].b_neg.next = false;
            self.lv8[i].b_e.next = self.k_z8.val();
            self.lv8[i].b_m.next = self.k_z24.val();
        }
        for i in 0..self._f8 {
            self.lv8[i].b_neg.next = self.lv7[2 * i + 1].y_neg.val();
            self.lv8[i].b_e.next = self.lv7[2 * i + 1].y_e.val();
            self.lv8[i].b_m.next = self.lv7[2 * i + 1].y_m.val();
        }
        // the root
        self.rn.next = false;
        self.re.next = self.k_z8.val();
        self.rm.next = self.k_z24.val();
        for _u in 0..self._is4 {
            self.rn.next = self.lv4[0].y_neg.val();
            self.re.next = self.lv4[0].y_e.val();
            self.rm.next = self.lv4[0].y_m.val();
        }
        for _u in 0..self._is5 {
            self.rn.next = self.lv5[0].y_neg.val();
            self.re.next = self.lv5[0].y_e.val();
            self.rm.next = self.lv5[0].y_m.val();
        }
        for _u in 0..self._is6 {
            self.rn.next = self.lv6[0].y_neg.val();
            self.re.next = self.lv6[0].y_e.val();
            self.rm.next = self.lv6[0].y_m.val();
        }
        for _u in 0..self._is7 {
            self.rn.next = self.lv7[0].y_neg.val();
            self.re.next = self.lv7[0].y_e.val();
            self.rm.next = self.lv7[0].y_m.val();
        }
        for _u in 0..self._is8 {
            self.rn.next = self.lv8[0].y_neg.val();
            self.re.next = self.lv8[0].y_e.val();
            self.rm.next = self.lv8[0].y_m.val();
        }

        // ---- C: m 2^(e - 71) = (m 2^(e - 23)) 2^-48; below e = 23 the
        // bits shifted out are 0 (every value is a multiple of 2^-48) ----
        self.c_mag.d.next = bit_cast::<TERM_W, 24>(self.rm.val());
        self.c_sh.d.next = self.re.val() - self.k_e23.val();
        if self.re.val() < self.k_e23.val() {
            self.c_mag.d.next = bit_cast::<TERM_W, 24>(self.rm.val()) >> (self.k_e23.val() - self.re.val());
            self.c_sh.d.next = self.k_z8.val();
        }
        self.c_n.d.next = self.rn.val();
        for ctl in self._ctl..(self._ctl + 1) {
            self.acc.in_valid.next = self.vld[ctl - 1].q.val();
            self.acc.in_first.next = self.fst[ctl - 1].q.val();
            self.acc.in_last.next = self.lst[ctl - 1].q.val();
            self.acc.in_flag.next = self.flg[ctl - 1].q.val();
        }
        self.acc.in_mag[0].next = self.c_mag.q.val();
        self.acc.in_sh[0].next = self.c_sh.q.val();
        self.acc.in_neg[0].next = self.c_n.q.val();
        self.out_valid.next = self.acc.out_valid.val();
        self.out_score.next = self.acc.out_y.val();
        self.out_nonfinite.next = self.acc.out_flag.val();
    }
}
