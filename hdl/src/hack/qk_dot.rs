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
//! - the dot product: `Pi b` leaves `k'_z[j] ? a'_z << j : 0`, four summed
//!   per stage (two adder levels), `S` stages down to `D`;
//! - beside it, the metadata: 1 sanitised and decoded (`Fp16Sig`); 2 the
//!   pieces of `s_a s_b`, `m_a s_b`, `s_a Sa` (16x8 multiplies) and `Pi
//!   m_a`; 3 their sums, the four shifts and signs; 4 the pieces of `(s_a
//!   Sa) m_b`, `(m_a s_b) Sb`, `(Pi m_a) m_b`; 5 their sums, then delayed
//!   to stage `S + 2`;
//! - `S + 1`: the six pieces of `(s_a s_b) D`; `S + 2`: their sums, as
//!   two terms (the low and the high 16 bits of `s_a s_b`);
//! - `acc::ExactAcc`: the five terms into the token's exact accumulator,
//!   and its rounding (12 stages).
//!
//! `units(x) = sig 2^e` for every FP16 factor, so a term is a product of
//! significands and integers (below 2^46) shifted by a sum of two `e`.

use super::acc::{self, ExactAcc, TERM_W};
use super::load::LoadCtl;
use super::sig::Fp16Sig;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Tree stages, each summing four nodes: at most 6 (`Pi b <= 2048`).
fn tree_sizes(leaves: usize) -> Vec<usize> {
    let mut n = vec![leaves];
    while *n.last().unwrap() > 1 {
        n.push(n.last().unwrap().div_ceil(4));
    }
    n
}

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
        x.next_power_of_two().trailing_zeros() as usize
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
        tree_sizes(self.partition * self.kv_bits).len() - 1
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
    // ---- the dot product ----
    qz: Signal<Local, Bits<32>>,
    kz: Signal<Local, Bits<32>>,
    leaf: Vec<Signal<Local, Bits<32>>>,
    t1: Vec<Reg<Bits<32>>>,
    t2: Vec<Reg<Bits<32>>>,
    t3: Vec<Reg<Bits<32>>>,
    t4: Vec<Reg<Bits<32>>>,
    t5: Vec<Reg<Bits<32>>>,
    t6: Vec<Reg<Bits<32>>>,
    dval: Signal<Local, Bits<24>>,
    dcur: Signal<Local, Bits<32>>,
    ylo: Signal<Local, Bits<16>>,
    yhi: Signal<Local, Bits<16>>,
    // ---- metadata, stage 1: s_a, m_a, s_b, m_b decoded ----
    dec: Vec<Fp16Sig>,
    m1_sig: Vec<Reg<Bits<16>>>,
    m1_e: Vec<Reg<Bits<8>>>,
    m1_neg: Vec<Reg<Bit>>,
    m1_suma: Reg<Bits<16>>,
    m1_sumb: Reg<Bits<16>>,
    // ---- stage 2: pieces of s_a s_b, m_a s_b, s_a Sa; Pi m_a ----
    x16: Signal<Local, Bits<16>>,
    y16: Signal<Local, Bits<16>>,
    g_p: Vec<Reg<Bits<32>>>,
    m2_e: Vec<Reg<Bits<8>>>,
    m2_neg: Vec<Reg<Bit>>,
    m2_sigmb: Reg<Bits<16>>,
    m2_sumb: Reg<Bits<16>>,
    // ---- stage 3: G1 = s_a s_b (delayed to S), G2 = s_a Sa, G3 = m_a s_b, G4 = Pi m_a ----
    d_g1: Vec<Reg<Bits<32>>>,
    m3_g: Vec<Reg<Bits<32>>>,
    m3_sigmb: Reg<Bits<16>>,
    m3_sumb: Reg<Bits<16>>,
    /// per stage 3 .. S + 2: the shifts of T1 .. T4 and of T1's high part,
    /// and the signs of T1 .. T4
    d_e: Vec<Reg<Bits<8>>>,
    d_n: Vec<Reg<Bit>>,
    // ---- stage 4: pieces of G2 m_b, G3 Sb, G4 m_b; stage 5: sums, delayed ----
    p_t: Vec<Reg<Bits<32>>>,
    d_t: Vec<Reg<Bits<TERM_W>>>,
    pc0: Signal<Local, Bits<TERM_W>>,
    pc1: Signal<Local, Bits<TERM_W>>,
    pc2: Signal<Local, Bits<TERM_W>>,
    pc3: Signal<Local, Bits<TERM_W>>,
    pc4: Signal<Local, Bits<TERM_W>>,
    pc5: Signal<Local, Bits<TERM_W>>,
    pcur: Signal<Local, Bits<32>>,
    g1cur: Signal<Local, Bits<32>>,
    // ---- S + 1, S + 2: (s_a s_b) D ----
    p_t1: Vec<Reg<Bits<32>>>,
    r_t1a: Reg<Bits<TERM_W>>,
    r_t1b: Reg<Bits<TERM_W>>,
    // ---- control, stages 1 .. S + 2 ----
    vld: Vec<Reg<Bit>>,
    fst: Vec<Reg<Bit>>,
    lst: Vec<Reg<Bit>>,
    flg: Vec<Reg<Bit>>,
    acc: ExactAcc,
    // ---- constants ----
    kc: Vec<Constant<Bits<8>>>,
    shq: Vec<Constant<Bits<32>>>,
    shk: Vec<Constant<Bits<32>>>,
    kbit: Vec<Constant<Bits<32>>>,
    kj: Vec<Constant<Bits<32>>>,
    k_qmask: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    /// value mask of tree stage s (index s - 1)
    km: Vec<Constant<Bits<32>>>,
    k_ff16: Constant<Bits<16>>,
    k_s8: Constant<Bits<32>>,
    k_s16: Constant<Bits<32>>,
    k_s24: Constant<Bits<32>>,
    k_pi: Constant<Bits<16>>,
    k_s8h: Constant<Bits<16>>,
    k_s16e: Constant<Bits<8>>,
    _p: usize,
    _wq: usize,
    _wk: usize,
    _pi: usize,
    _b: usize,
    _cq: usize,
    _ck: usize,
    _s: usize,
    _n0: usize,
    _pad0: usize,
    _n1: usize,
    _n2: usize,
    _n3: usize,
    _n4: usize,
    _n5: usize,
    _n6: usize,
    _l1: usize,
    _l2: usize,
    _l3: usize,
    _l4: usize,
    _l5: usize,
    _l6: usize,
    _is3: usize,
    _is4: usize,
    _is5: usize,
    _is6: usize,
    _ctl: usize,
    _dg: usize,
    _de: usize,
    _dt: usize,
    _dn: usize,
}

impl HackQkDot {
    pub fn new(g: &QkGeometry) -> Self {
        let (pi, b, a) = (g.partition, g.kv_bits, g.qp_bits);
        assert!(pi.is_multiple_of(16) && (16..=256).contains(&pi) && g.head_dim.is_multiple_of(pi));
        assert!([2, 3, 4, 8].contains(&b) && [4, 8].contains(&a));
        let p = g.parts();
        assert!(p <= 64);
        let (cq, ck) = (32 / a, 32 / b);
        let (wq, wk) = (g.words(a), g.words(b));
        let sizes = tree_sizes(pi * b);
        let s = sizes.len() - 1;
        assert!((3..=6).contains(&s));
        // n[s]: nodes of stage s; l[s]: registers of stage s (padded to
        // four times the next stage's nodes, zeros past n[s])
        let mut n = [0usize; 7];
        let mut l = [0usize; 7];
        for (i, &x) in sizes.iter().enumerate() {
            n[i] = x;
        }
        for i in 1..=6 {
            l[i] = if i < s { 4 * n[i + 1] } else if i == s { 1 } else { 0 };
        }
        let pad0 = 4 * n[1];
        let w = g.acc_width();
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let km = (1..=s).map(|i| c32((1u64 << (a + b - 1 + 2 * i).min(a + b + QkGeometry::clog2(pi))) - 1)).collect();
        let ctl = s + 2;
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
            qz: Default::default(),
            kz: Default::default(),
            leaf: sigs(pad0),
            t1: regs(l[1]),
            t2: regs(l[2]),
            t3: regs(l[3]),
            t4: regs(l[4]),
            t5: regs(l[5]),
            t6: regs(l[6]),
            dval: Default::default(),
            dcur: Default::default(),
            ylo: Default::default(),
            yhi: Default::default(),
            dec: (0..4).map(|_| Fp16Sig::default()).collect(),
            m1_sig: regs(4),
            m1_e: regs(4),
            m1_neg: regs(4),
            m1_suma: Reg::default(),
            m1_sumb: Reg::default(),
            x16: Default::default(),
            y16: Default::default(),
            g_p: regs(7),
            m2_e: regs(4),
            m2_neg: regs(4),
            m2_sigmb: Reg::default(),
            m2_sumb: Reg::default(),
            d_g1: regs(s - 2),
            m3_g: regs(3),
            m3_sigmb: Reg::default(),
            m3_sumb: Reg::default(),
            d_e: regs(5 * s),
            d_n: regs(4 * s),
            p_t: regs(12),
            d_t: regs(3 * (s - 2)),
            pc0: Default::default(),
            pc1: Default::default(),
            pc2: Default::default(),
            pc3: Default::default(),
            pc4: Default::default(),
            pc5: Default::default(),
            pcur: Default::default(),
            g1cur: Default::default(),
            p_t1: regs(6),
            r_t1a: Reg::default(),
            r_t1b: Reg::default(),
            vld: regs(ctl),
            fst: regs(ctl),
            lst: regs(ctl),
            flg: regs(ctl),
            acc: ExactAcc::new(5, w),
            kc: consts((0..p as u64).collect::<Vec<_>>()),
            shq: consts((0..pi).map(|z| (a * (z % cq)) as u64)),
            shk: consts((0..pi).map(|z| (b * (z % ck)) as u64)),
            kbit: consts((0..b).map(|j| 1u64 << j)),
            kj: consts((0..b).map(|j| j as u64)),
            k_qmask: c32((1u64 << a) - 1),
            k_zero32: c32(0),
            km,
            k_ff16: Constant::new(0xFFu64.into()),
            k_s8: c32(8),
            k_s16: c32(16),
            k_s24: c32(24),
            k_pi: Constant::new((pi as u64).into()),
            k_s8h: Constant::new(8u64.into()),
            k_s16e: Constant::new(16u64.into()),
            _p: p,
            _wq: wq,
            _wk: wk,
            _pi: pi,
            _b: b,
            _cq: cq,
            _ck: ck,
            _s: s,
            _n0: pi * b,
            _pad0: pad0,
            _n1: n[1],
            _n2: n[2],
            _n3: n[3],
            _n4: n[4],
            _n5: n[5],
            _n6: n[6],
            _l1: l[1],
            _l2: l[2],
            _l3: l[3],
            _l4: l[4],
            _l5: l[5],
            _l6: l[6],
            _is3: (s == 3) as usize,
            _is4: (s == 4) as usize,
            _is5: (s == 5) as usize,
            _is6: (s == 6) as usize,
            _ctl: ctl,
            _dg: s - 2,
            _de: 5 * s,
            _dt: 3 * (s - 2),
            _dn: 4 * s,
        }
    }
}

impl Logic for HackQkDot {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- register wiring ----
        self.adv.next = !self.acc.out_valid.val() | self.out_ready.val();
        clock!(self, clock, ctl, a_meta, b_meta, a_sum, b_sum, a_v, b_free);
        clock!(self, clock, m1_suma, m1_sumb, m2_sigmb, m2_sumb, m3_sigmb, m3_sumb, r_t1a, r_t1b, acc);
        self.ctl.reset.next = self.reset.val();
        self.a_meta.reset.next = self.reset.val();
        self.b_meta.reset.next = self.reset.val();
        self.a_sum.reset.next = self.reset.val();
        self.b_sum.reset.next = self.reset.val();
        self.a_v.reset.next = self.reset.val();
        self.b_free.reset.next = self.reset.val();
        self.m1_suma.reset.next = self.reset.val();
        self.m1_sumb.reset.next = self.reset.val();
        self.m2_sigmb.reset.next = self.reset.val();
        self.m2_sumb.reset.next = self.reset.val();
        self.m3_sigmb.reset.next = self.reset.val();
        self.m3_sumb.reset.next = self.reset.val();
        self.r_t1a.reset.next = self.reset.val();
        self.r_t1b.reset.next = self.reset.val();
        self.acc.reset.next = self.reset.val();
        self.acc.en.next = self.adv.val();
        self.m1_suma.en.next = self.adv.val();
        self.m1_sumb.en.next = self.adv.val();
        self.m2_sigmb.en.next = self.adv.val();
        self.m2_sumb.en.next = self.adv.val();
        self.m3_sigmb.en.next = self.adv.val();
        self.m3_sumb.en.next = self.adv.val();
        self.r_t1a.en.next = self.adv.val();
        self.r_t1b.en.next = self.adv.val();
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
        for i in 0..self._l1 {
            self.t1[i].clock.next = self.clock.val();
            self.t1[i].reset.next = self.reset.val();
            self.t1[i].en.next = self.adv.val();
        }
        for i in 0..self._l2 {
            self.t2[i].clock.next = self.clock.val();
            self.t2[i].reset.next = self.reset.val();
            self.t2[i].en.next = self.adv.val();
        }
        for i in 0..self._l3 {
            self.t3[i].clock.next = self.clock.val();
            self.t3[i].reset.next = self.reset.val();
            self.t3[i].en.next = self.adv.val();
        }
        for i in 0..self._l4 {
            self.t4[i].clock.next = self.clock.val();
            self.t4[i].reset.next = self.reset.val();
            self.t4[i].en.next = self.adv.val();
        }
        for i in 0..self._l5 {
            self.t5[i].clock.next = self.clock.val();
            self.t5[i].reset.next = self.reset.val();
            self.t5[i].en.next = self.adv.val();
        }
        for i in 0..self._l6 {
            self.t6[i].clock.next = self.clock.val();
            self.t6[i].reset.next = self.reset.val();
            self.t6[i].en.next = self.adv.val();
        }
        for i in 0..4 {
            self.m1_sig[i].clock.next = self.clock.val();
            self.m1_sig[i].reset.next = self.reset.val();
            self.m1_sig[i].en.next = self.adv.val();
            self.m1_e[i].clock.next = self.clock.val();
            self.m1_e[i].reset.next = self.reset.val();
            self.m1_e[i].en.next = self.adv.val();
            self.m1_neg[i].clock.next = self.clock.val();
            self.m1_neg[i].reset.next = self.reset.val();
            self.m1_neg[i].en.next = self.adv.val();
            self.m2_e[i].clock.next = self.clock.val();
            self.m2_e[i].reset.next = self.reset.val();
            self.m2_e[i].en.next = self.adv.val();
            self.m2_neg[i].clock.next = self.clock.val();
            self.m2_neg[i].reset.next = self.reset.val();
            self.m2_neg[i].en.next = self.adv.val();
        }
        for i in 0..7 {
            self.g_p[i].clock.next = self.clock.val();
            self.g_p[i].reset.next = self.reset.val();
            self.g_p[i].en.next = self.adv.val();
        }
        for i in 0..3 {
            self.m3_g[i].clock.next = self.clock.val();
            self.m3_g[i].reset.next = self.reset.val();
            self.m3_g[i].en.next = self.adv.val();
        }
        for i in 0..12 {
            self.p_t[i].clock.next = self.clock.val();
            self.p_t[i].reset.next = self.reset.val();
            self.p_t[i].en.next = self.adv.val();
        }
        for i in 0..6 {
            self.p_t1[i].clock.next = self.clock.val();
            self.p_t1[i].reset.next = self.reset.val();
            self.p_t1[i].en.next = self.adv.val();
        }
        for i in 0..self._dg {
            self.d_g1[i].clock.next = self.clock.val();
            self.d_g1[i].reset.next = self.reset.val();
            self.d_g1[i].en.next = self.adv.val();
        }
        for i in 0..self._de {
            self.d_e[i].clock.next = self.clock.val();
            self.d_e[i].reset.next = self.reset.val();
            self.d_e[i].en.next = self.adv.val();
        }
        for i in 0..self._dn {
            self.d_n[i].clock.next = self.clock.val();
            self.d_n[i].reset.next = self.reset.val();
            self.d_n[i].en.next = self.adv.val();
        }
        for i in 0..self._dt {
            self.d_t[i].clock.next = self.clock.val();
            self.d_t[i].reset.next = self.reset.val();
            self.d_t[i].en.next = self.adv.val();
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

        // ---- stage 1 of the dot product: leaves, two adder levels ----
        for cq in self._cq..(self._cq + 1) {
            for ck in self._ck..(self._ck + 1) {
                for bb in self._b..(self._b + 1) {
                    for z in 0..self._pi {
                        self.qz.next = (self.sel_words[z / cq].val() >> self.shq[z].val()) & self.k_qmask.val();
                        self.kz.next = self.a_words[z / ck].q.val() >> self.shk[z].val();
                        for j in 0..self._b {
                            self.leaf[z * bb + j].next = self.k_zero32.val();
                            if (self.kz.val() & self.kbit[j].val()) != self.k_zero32.val() {
                                self.leaf[z * bb + j].next = self.qz.val() << self.kj[j].val();
                            }
                        }
                    }
                }
            }
        }
        for i in self._n0..self._pad0 {
            self.leaf[i].next = self.k_zero32.val();
        }
        for i in 0..self._n1 {
            self.t1[i].d.next = ((self.leaf[4 * i].val() + self.leaf[4 * i + 1].val())
                + (self.leaf[4 * i + 2].val() + self.leaf[4 * i + 3].val()))
                & self.km[0].val();
        }
        for i in self._n1..self._l1 {
            self.t1[i].d.next = self.k_zero32.val();
        }
        // ---- stages 2 .. S ----
        for i in 0..self._n2 {
            self.t2[i].d.next = ((self.t1[4 * i].q.val() + self.t1[4 * i + 1].q.val())
                + (self.t1[4 * i + 2].q.val() + self.t1[4 * i + 3].q.val()))
                & self.km[1].val();
        }
        for i in self._n2..self._l2 {
            self.t2[i].d.next = self.k_zero32.val();
        }
        for i in 0..self._n3 {
            self.t3[i].d.next = ((self.t2[4 * i].q.val() + self.t2[4 * i + 1].q.val())
                + (self.t2[4 * i + 2].q.val() + self.t2[4 * i + 3].q.val()))
                & self.km[2].val();
        }
        for i in self._n3..self._l3 {
            self.t3[i].d.next = self.k_zero32.val();
        }
        for i in 0..self._n4 {
            self.t4[i].d.next = ((self.t3[4 * i].q.val() + self.t3[4 * i + 1].q.val())
                + (self.t3[4 * i + 2].q.val() + self.t3[4 * i + 3].q.val()))
                & self.km[3].val();
        }
        for i in self._n4..self._l4 {
            self.t4[i].d.next = self.k_zero32.val();
        }
        for i in 0..self._n5 {
            self.t5[i].d.next = ((self.t4[4 * i].q.val() + self.t4[4 * i + 1].q.val())
                + (self.t4[4 * i + 2].q.val() + self.t4[4 * i + 3].q.val()))
                & self.km[4].val();
        }
        for i in self._n5..self._l5 {
            self.t5[i].d.next = self.k_zero32.val();
        }
        for i in 0..self._n6 {
            self.t6[i].d.next = ((self.t5[4 * i].q.val() + self.t5[4 * i + 1].q.val())
                + (self.t5[4 * i + 2].q.val() + self.t5[4 * i + 3].q.val()))
                & self.km[5].val();
        }
        for i in self._n6..self._l6 {
            self.t6[i].d.next = self.k_zero32.val();
        }
        self.dcur.next = self.k_zero32.val();
        for _u in 0..self._is3 {
            self.dcur.next = self.t3[0].q.val();
        }
        for _u in 0..self._is4 {
            self.dcur.next = self.t4[0].q.val();
        }
        for _u in 0..self._is5 {
            self.dcur.next = self.t5[0].q.val();
        }
        for _u in 0..self._is6 {
            self.dcur.next = self.t6[0].q.val();
        }
        self.dval.next = bit_cast::<24, 32>(self.dcur.val());

        // ---- metadata stage 1: s_a, m_a (the Q partition), s_b, m_b (the beat) ----
        self.dec[0].x.next = self.sel_meta.val().get_bits::<16>(16);
        self.dec[1].x.next = self.sel_meta.val().get_bits::<16>(0);
        self.dec[2].x.next = self.a_meta.q.val().get_bits::<16>(16);
        self.dec[3].x.next = self.a_meta.q.val().get_bits::<16>(0);
        for i in 0..4 {
            self.m1_sig[i].d.next = self.dec[i].sig.val();
            self.m1_e[i].d.next = self.dec[i].e.val();
            self.m1_neg[i].d.next = self.dec[i].neg.val();
        }
        self.m1_suma.d.next = self.sel_sum.val();
        self.m1_sumb.d.next = self.a_sum.q.val();
        self.vld[0].d.next = self.issue.val();
        self.fst[0].d.next = self.ctl.first.val();
        self.lst[0].d.next = self.ctl.last.val();
        self.flg[0].d.next = self.dec[0].nonfinite.val()
            | self.dec[1].nonfinite.val()
            | self.dec[2].nonfinite.val()
            | self.dec[3].nonfinite.val();
        for i in 1..self._ctl {
            self.vld[i].d.next = self.vld[i - 1].q.val();
            self.fst[i].d.next = self.fst[i - 1].q.val();
            self.lst[i].d.next = self.lst[i - 1].q.val();
            self.flg[i].d.next = self.flg[i - 1].q.val();
        }

        // ---- stage 2: pieces (16 x 8 multiplies); sig order s_a, m_a, s_b, m_b ----
        // g_p: 0, 1 = s_a * s_b[7:0], s_a * s_b[15:8]; 2, 3 = m_a * s_b[7:0],
        // m_a * s_b[15:8]; 4, 5 = s_a * Sa[7:0], s_a * Sa[15:8]; 6 = m_a * Pi
        self.x16.next = self.m1_sig[0].q.val();
        self.y16.next = self.m1_sig[2].q.val() & self.k_ff16.val();
        self.g_p[0].d.next = self.x16.val() * self.y16.val();
        self.y16.next = self.m1_sig[2].q.val() >> self.k_s8h.val();
        self.g_p[1].d.next = self.x16.val() * self.y16.val();
        self.x16.next = self.m1_sig[1].q.val();
        self.y16.next = self.m1_sig[2].q.val() & self.k_ff16.val();
        self.g_p[2].d.next = self.x16.val() * self.y16.val();
        self.y16.next = self.m1_sig[2].q.val() >> self.k_s8h.val();
        self.g_p[3].d.next = self.x16.val() * self.y16.val();
        self.x16.next = self.m1_sig[0].q.val();
        self.y16.next = self.m1_suma.q.val() & self.k_ff16.val();
        self.g_p[4].d.next = self.x16.val() * self.y16.val();
        self.y16.next = self.m1_suma.q.val() >> self.k_s8h.val();
        self.g_p[5].d.next = self.x16.val() * self.y16.val();
        self.x16.next = self.m1_sig[1].q.val();
        self.g_p[6].d.next = self.x16.val() * self.k_pi.val();
        for i in 0..4 {
            self.m2_e[i].d.next = self.m1_e[i].q.val();
            self.m2_neg[i].d.next = self.m1_neg[i].q.val();
        }
        self.m2_sigmb.d.next = self.m1_sig[3].q.val();
        self.m2_sumb.d.next = self.m1_sumb.q.val();

        // ---- stage 3: G1 .. G4; shifts and signs of T1 .. T4 ----
        // T1 = s_a s_b D, T2 = s_a m_b Sa, T3 = m_a s_b Sb, T4 = Pi m_a m_b
        self.d_g1[0].d.next = self.g_p[0].q.val() + (self.g_p[1].q.val() << self.k_s8.val());
        self.m3_g[0].d.next = self.g_p[4].q.val() + (self.g_p[5].q.val() << self.k_s8.val());
        self.m3_g[1].d.next = self.g_p[2].q.val() + (self.g_p[3].q.val() << self.k_s8.val());
        self.m3_g[2].d.next = self.g_p[6].q.val();
        self.d_e[0].d.next = self.m2_e[0].q.val() + self.m2_e[2].q.val();
        self.d_e[1].d.next = self.m2_e[0].q.val() + self.m2_e[3].q.val();
        self.d_e[2].d.next = self.m2_e[1].q.val() + self.m2_e[2].q.val();
        self.d_e[3].d.next = self.m2_e[1].q.val() + self.m2_e[3].q.val();
        self.d_e[4].d.next = self.m2_e[0].q.val() + self.m2_e[2].q.val() + self.k_s16e.val();
        self.d_n[0].d.next = self.m2_neg[0].q.val() ^ self.m2_neg[2].q.val();
        self.d_n[1].d.next = self.m2_neg[0].q.val() ^ self.m2_neg[3].q.val();
        self.d_n[2].d.next = self.m2_neg[1].q.val() ^ self.m2_neg[2].q.val();
        self.d_n[3].d.next = self.m2_neg[1].q.val() ^ self.m2_neg[3].q.val();
        for i in 5..self._de {
            self.d_e[i].d.next = self.d_e[i - 5].q.val();
        }
        for i in 4..self._dn {
            self.d_n[i].d.next = self.d_n[i - 4].q.val();
        }
        for i in 1..self._dg {
            self.d_g1[i].d.next = self.d_g1[i - 1].q.val();
        }
        self.m3_sigmb.d.next = self.m2_sigmb.q.val();
        self.m3_sumb.d.next = self.m2_sumb.q.val();

        // ---- stage 4: pieces of G2 m_b, G3 Sb, G4 m_b (lo/hi 16 x lo/hi 8) ----
        self.pcur.next = self.m3_g[0].q.val();
        self.y16.next = self.m3_sigmb.q.val();
        self.ylo.next = self.y16.val() & self.k_ff16.val();
        self.yhi.next = self.y16.val() >> self.k_s8h.val();
        self.x16.next = self.pcur.val().get_bits::<16>(0);
        self.p_t[0].d.next = self.x16.val() * self.ylo.val();
        self.p_t[2].d.next = self.x16.val() * self.yhi.val();
        self.x16.next = self.pcur.val().get_bits::<16>(16);
        self.p_t[1].d.next = self.x16.val() * self.ylo.val();
        self.p_t[3].d.next = self.x16.val() * self.yhi.val();
        self.pcur.next = self.m3_g[1].q.val();
        self.y16.next = self.m3_sumb.q.val();
        self.ylo.next = self.y16.val() & self.k_ff16.val();
        self.yhi.next = self.y16.val() >> self.k_s8h.val();
        self.x16.next = self.pcur.val().get_bits::<16>(0);
        self.p_t[4].d.next = self.x16.val() * self.ylo.val();
        self.p_t[6].d.next = self.x16.val() * self.yhi.val();
        self.x16.next = self.pcur.val().get_bits::<16>(16);
        self.p_t[5].d.next = self.x16.val() * self.ylo.val();
        self.p_t[7].d.next = self.x16.val() * self.yhi.val();
        self.pcur.next = self.m3_g[2].q.val();
        self.y16.next = self.m3_sigmb.q.val();
        self.ylo.next = self.y16.val() & self.k_ff16.val();
        self.yhi.next = self.y16.val() >> self.k_s8h.val();
        self.x16.next = self.pcur.val().get_bits::<16>(0);
        self.p_t[8].d.next = self.x16.val() * self.ylo.val();
        self.p_t[10].d.next = self.x16.val() * self.yhi.val();
        self.x16.next = self.pcur.val().get_bits::<16>(16);
        self.p_t[9].d.next = self.x16.val() * self.ylo.val();
        self.p_t[11].d.next = self.x16.val() * self.yhi.val();

        // ---- stage 5: T2 .. T4; delayed to stage S + 2 ----
        for u in 0..3 {
            self.pcur.next = self.p_t[4 * u].q.val();
            self.pc0.next = bit_cast::<TERM_W, 32>(self.pcur.val());
            self.pcur.next = self.p_t[4 * u + 1].q.val();
            self.pc1.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s16.val();
            self.pcur.next = self.p_t[4 * u + 2].q.val();
            self.pc2.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s8.val();
            self.pcur.next = self.p_t[4 * u + 3].q.val();
            self.pc3.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s24.val();
            self.d_t[u].d.next = (self.pc0.val() + self.pc1.val()) + (self.pc2.val() + self.pc3.val());
        }
        for i in 3..self._dt {
            self.d_t[i].d.next = self.d_t[i - 3].q.val();
        }

        // ---- S + 1: pieces of G1 D; S + 2: their sum, T1 ----
        for dg in self._dg..(self._dg + 1) {
            self.g1cur.next = self.d_g1[dg - 1].q.val();
        }
        self.x16.next = self.g1cur.val().get_bits::<16>(0);
        self.p_t1[0].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(0));
        self.p_t1[1].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(8));
        self.p_t1[2].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(16));
        self.x16.next = self.g1cur.val().get_bits::<16>(16);
        self.p_t1[3].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(0));
        self.p_t1[4].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(8));
        self.p_t1[5].d.next = self.x16.val() * bit_cast::<16, 8>(self.dval.val().get_bits::<8>(16));
        // (two terms, the pieces of G1's low and high 16 bits, so that no
        // stage adds more than three rows; the high one's shift is e1 + 16)
        self.pcur.next = self.p_t1[0].q.val();
        self.pc0.next = bit_cast::<TERM_W, 32>(self.pcur.val());
        self.pcur.next = self.p_t1[1].q.val();
        self.pc1.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s8.val();
        self.pcur.next = self.p_t1[2].q.val();
        self.pc2.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s16.val();
        self.pcur.next = self.p_t1[3].q.val();
        self.pc3.next = bit_cast::<TERM_W, 32>(self.pcur.val());
        self.pcur.next = self.p_t1[4].q.val();
        self.pc4.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s8.val();
        self.pcur.next = self.p_t1[5].q.val();
        self.pc5.next = bit_cast::<TERM_W, 32>(self.pcur.val()) << self.k_s16.val();
        self.r_t1a.d.next = (self.pc0.val() + self.pc1.val()) + self.pc2.val();
        self.r_t1b.d.next = (self.pc3.val() + self.pc4.val()) + self.pc5.val();

        // ---- the accumulator: T1 .. T4 at stage S + 2 ----
        for s in self._s..(self._s + 1) {
            self.acc.in_valid.next = self.vld[s + 1].q.val();
            self.acc.in_first.next = self.fst[s + 1].q.val();
            self.acc.in_last.next = self.lst[s + 1].q.val();
            self.acc.in_flag.next = self.flg[s + 1].q.val();
            self.acc.in_mag[0].next = self.r_t1a.q.val();
            self.acc.in_mag[1].next = self.d_t[3 * s - 9].q.val();
            self.acc.in_mag[2].next = self.d_t[3 * s - 8].q.val();
            self.acc.in_mag[3].next = self.d_t[3 * s - 7].q.val();
            self.acc.in_mag[4].next = self.r_t1b.q.val();
            self.acc.in_sh[0].next = self.d_e[5 * s - 5].q.val();
            self.acc.in_sh[1].next = self.d_e[5 * s - 4].q.val();
            self.acc.in_sh[2].next = self.d_e[5 * s - 3].q.val();
            self.acc.in_sh[3].next = self.d_e[5 * s - 2].q.val();
            self.acc.in_sh[4].next = self.d_e[5 * s - 1].q.val();
            self.acc.in_neg[0].next = self.d_n[4 * s - 4].q.val();
            self.acc.in_neg[1].next = self.d_n[4 * s - 3].q.val();
            self.acc.in_neg[2].next = self.d_n[4 * s - 2].q.val();
            self.acc.in_neg[3].next = self.d_n[4 * s - 1].q.val();
            self.acc.in_neg[4].next = self.d_n[4 * s - 4].q.val();
        }
        self.out_valid.next = self.acc.out_valid.val();
        self.out_score.next = self.acc.out_y.val();
        self.out_nonfinite.next = self.acc.out_flag.val();
    }
}
