//! Eq. 4 of one pair of partitions as five exact terms (spec §15.6,
//! §15.16.1): `a` (Q or P: `qp_bits` codes) and `b` (K or V: `kv_bits`
//! codes), each with its metadata word and code sum, enter together; `S + 2`
//! stages later come the terms `T1 = s_a s_b D` (as two pieces, the low and
//! the high 16 bits of `s_a s_b`), `T2 = s_a m_b Sa`, `T3 = m_a s_b Sb` and
//! `T4 = Pi m_a m_b`, each as magnitude, left shift and sign in units of
//! 2^-48, with the beat's tag and its `nonfinite` flag. Shared by
//! `hack-qk-dot` and `hack-pv-dot`. Paper: HACK §5.2 (Eq. 4).
//!
//! Stages, all advancing on `en`:
//! - the dot product: `Pi b` leaves `b'_z[j] ? a'_z << j : 0`, four summed
//!   per stage (two adder levels), `S` stages down to `D`;
//! - beside it, the metadata: 1 sanitised and decoded (`Fp16Sig`); 2 the
//!   pieces of `s_a s_b`, `m_a s_b`, `s_a Sa` (16x8 multiplies) and `Pi
//!   m_a`; 3 their sums, the four shifts and signs; 4 the pieces of `(s_a
//!   Sa) m_b`, `(m_a s_b) Sb`, `(Pi m_a) m_b`; 5 their sums, then delayed
//!   to stage `S + 2`;
//! - `S + 1`: the six pieces of `(s_a s_b) D`; `S + 2`: their sums, as
//!   two terms (the low and the high 16 bits of `s_a s_b`).
//!
//! `units(x) = sig 2^e` for every FP16 factor, so a term is a product of
//! significands and integers (below 2^46) shifted by a sum of two `e`.

use super::acc::TERM_W;
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

/// `ceil(log2 x)`.
pub fn clog2(x: usize) -> usize {
    x.next_power_of_two().trailing_zeros() as usize
}

/// Dot-product tree stages `S` of `partition` codes of `kv_bits`.
pub fn tree_stages(partition: usize, kv_bits: usize) -> usize {
    tree_sizes(partition * kv_bits).len() - 1
}

/// Cycles from a beat at the inputs to its terms at the outputs.
pub fn latency(partition: usize, kv_bits: usize) -> usize {
    tree_stages(partition, kv_bits) + 2
}

/// Terms per beat.
pub const TERMS: usize = 5;

#[derive(LogicBlock)]
pub struct Eq4 {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset: every stage empty
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// a pair of partitions is at the inputs
    pub in_valid: Signal<In, Bit>,
    /// the beat's tag, carried to the outputs
    pub in_tag: Signal<In, Bits<16>>,
    /// `a`'s packed codes (spec §13.4), metadata word and code sum
    pub a_words: Vec<Signal<In, Bits<32>>>,
    pub a_meta: Signal<In, Bits<32>>,
    pub a_sum: Signal<In, Bits<16>>,
    /// `b`'s packed codes, metadata word and code sum
    pub b_words: Vec<Signal<In, Bits<32>>>,
    pub b_meta: Signal<In, Bits<32>>,
    pub b_sum: Signal<In, Bits<16>>,
    /// the beat's terms are at the outputs
    pub out_valid: Signal<Out, Bit>,
    pub out_tag: Signal<Out, Bits<16>>,
    /// a metadata word of the beat was a NaN or an infinity
    pub out_flag: Signal<Out, Bit>,
    /// terms T1 (low piece), T2, T3, T4, T1 (high piece): magnitude, left shift, sign
    pub out_mag: Vec<Signal<Out, Bits<TERM_W>>>,
    pub out_sh: Vec<Signal<Out, Bits<8>>>,
    pub out_neg: Vec<Signal<Out, Bit>>,

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
    tag: Vec<Reg<Bits<16>>>,
    flg: Vec<Reg<Bit>>,
    // ---- constants ----
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

impl Eq4 {
    pub fn new(partition: usize, kv_bits: usize, qp_bits: usize) -> Self {
        let (pi, b, a) = (partition, kv_bits, qp_bits);
        let (cq, ck) = (32 / a, 32 / b);
        let (wq, wk) = (pi.div_ceil(cq), pi.div_ceil(ck));
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
            l[i] = if i < s {
                4 * n[i + 1]
            } else if i == s {
                1
            } else {
                0
            };
        }
        let pad0 = 4 * n[1];
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let km = (1..=s)
            .map(|i| c32((1u64 << (a + b - 1 + 2 * i).min(a + b + clog2(pi))) - 1))
            .collect();
        let ctl = s + 2;
        Eq4 {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            in_tag: Default::default(),
            a_words: sigs(wq),
            a_meta: Default::default(),
            a_sum: Default::default(),
            b_words: sigs(wk),
            b_meta: Default::default(),
            b_sum: Default::default(),
            out_valid: Default::default(),
            out_tag: Default::default(),
            out_flag: Default::default(),
            out_mag: sigs(TERMS),
            out_sh: sigs(TERMS),
            out_neg: sigs(TERMS),
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
            tag: regs(ctl),
            flg: regs(ctl),
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

impl Logic for Eq4 {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, m1_suma, m1_sumb, m2_sigmb, m2_sumb, m3_sigmb, m3_sumb, r_t1a, r_t1b);
        self.m1_suma.reset.next = self.reset.val();
        self.m1_sumb.reset.next = self.reset.val();
        self.m2_sigmb.reset.next = self.reset.val();
        self.m2_sumb.reset.next = self.reset.val();
        self.m3_sigmb.reset.next = self.reset.val();
        self.m3_sumb.reset.next = self.reset.val();
        self.r_t1a.reset.next = self.reset.val();
        self.r_t1b.reset.next = self.reset.val();
        self.m1_suma.en.next = self.en.val();
        self.m1_sumb.en.next = self.en.val();
        self.m2_sigmb.en.next = self.en.val();
        self.m2_sumb.en.next = self.en.val();
        self.m3_sigmb.en.next = self.en.val();
        self.m3_sumb.en.next = self.en.val();
        self.r_t1a.en.next = self.en.val();
        self.r_t1b.en.next = self.en.val();
        for i in 0..self._l1 {
            self.t1[i].clock.next = self.clock.val();
            self.t1[i].reset.next = self.reset.val();
            self.t1[i].en.next = self.en.val();
        }
        for i in 0..self._l2 {
            self.t2[i].clock.next = self.clock.val();
            self.t2[i].reset.next = self.reset.val();
            self.t2[i].en.next = self.en.val();
        }
        for i in 0..self._l3 {
            self.t3[i].clock.next = self.clock.val();
            self.t3[i].reset.next = self.reset.val();
            self.t3[i].en.next = self.en.val();
        }
        for i in 0..self._l4 {
            self.t4[i].clock.next = self.clock.val();
            self.t4[i].reset.next = self.reset.val();
            self.t4[i].en.next = self.en.val();
        }
        for i in 0..self._l5 {
            self.t5[i].clock.next = self.clock.val();
            self.t5[i].reset.next = self.reset.val();
            self.t5[i].en.next = self.en.val();
        }
        for i in 0..self._l6 {
            self.t6[i].clock.next = self.clock.val();
            self.t6[i].reset.next = self.reset.val();
            self.t6[i].en.next = self.en.val();
        }
        for i in 0..4 {
            self.m1_sig[i].clock.next = self.clock.val();
            self.m1_sig[i].reset.next = self.reset.val();
            self.m1_sig[i].en.next = self.en.val();
            self.m1_e[i].clock.next = self.clock.val();
            self.m1_e[i].reset.next = self.reset.val();
            self.m1_e[i].en.next = self.en.val();
            self.m1_neg[i].clock.next = self.clock.val();
            self.m1_neg[i].reset.next = self.reset.val();
            self.m1_neg[i].en.next = self.en.val();
            self.m2_e[i].clock.next = self.clock.val();
            self.m2_e[i].reset.next = self.reset.val();
            self.m2_e[i].en.next = self.en.val();
            self.m2_neg[i].clock.next = self.clock.val();
            self.m2_neg[i].reset.next = self.reset.val();
            self.m2_neg[i].en.next = self.en.val();
        }
        for i in 0..7 {
            self.g_p[i].clock.next = self.clock.val();
            self.g_p[i].reset.next = self.reset.val();
            self.g_p[i].en.next = self.en.val();
        }
        for i in 0..3 {
            self.m3_g[i].clock.next = self.clock.val();
            self.m3_g[i].reset.next = self.reset.val();
            self.m3_g[i].en.next = self.en.val();
        }
        for i in 0..12 {
            self.p_t[i].clock.next = self.clock.val();
            self.p_t[i].reset.next = self.reset.val();
            self.p_t[i].en.next = self.en.val();
        }
        for i in 0..6 {
            self.p_t1[i].clock.next = self.clock.val();
            self.p_t1[i].reset.next = self.reset.val();
            self.p_t1[i].en.next = self.en.val();
        }
        for i in 0..self._dg {
            self.d_g1[i].clock.next = self.clock.val();
            self.d_g1[i].reset.next = self.reset.val();
            self.d_g1[i].en.next = self.en.val();
        }
        for i in 0..self._de {
            self.d_e[i].clock.next = self.clock.val();
            self.d_e[i].reset.next = self.reset.val();
            self.d_e[i].en.next = self.en.val();
        }
        for i in 0..self._dn {
            self.d_n[i].clock.next = self.clock.val();
            self.d_n[i].reset.next = self.reset.val();
            self.d_n[i].en.next = self.en.val();
        }
        for i in 0..self._dt {
            self.d_t[i].clock.next = self.clock.val();
            self.d_t[i].reset.next = self.reset.val();
            self.d_t[i].en.next = self.en.val();
        }
        for i in 0..self._ctl {
            self.vld[i].clock.next = self.clock.val();
            self.vld[i].reset.next = self.reset.val();
            self.vld[i].en.next = self.en.val();
            self.tag[i].clock.next = self.clock.val();
            self.tag[i].reset.next = self.reset.val();
            self.tag[i].en.next = self.en.val();
            self.flg[i].clock.next = self.clock.val();
            self.flg[i].reset.next = self.reset.val();
            self.flg[i].en.next = self.en.val();
        }

        // ---- stage 1 of the dot product: leaves, two adder levels ----
        for cq in self._cq..(self._cq + 1) {
            for ck in self._ck..(self._ck + 1) {
                for bb in self._b..(self._b + 1) {
                    for z in 0..self._pi {
                        self.qz.next =
                            (self.a_words[z / cq].val() >> self.shq[z].val()) & self.k_qmask.val();
                        self.kz.next = self.b_words[z / ck].val() >> self.shk[z].val();
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
        self.dec[0].x.next = self.a_meta.val().get_bits::<16>(16);
        self.dec[1].x.next = self.a_meta.val().get_bits::<16>(0);
        self.dec[2].x.next = self.b_meta.val().get_bits::<16>(16);
        self.dec[3].x.next = self.b_meta.val().get_bits::<16>(0);
        for i in 0..4 {
            self.m1_sig[i].d.next = self.dec[i].sig.val();
            self.m1_e[i].d.next = self.dec[i].e.val();
            self.m1_neg[i].d.next = self.dec[i].neg.val();
        }
        self.m1_suma.d.next = self.a_sum.val();
        self.m1_sumb.d.next = self.b_sum.val();
        self.vld[0].d.next = self.in_valid.val();
        self.tag[0].d.next = self.in_tag.val();
        self.flg[0].d.next = self.dec[0].nonfinite.val()
            | self.dec[1].nonfinite.val()
            | self.dec[2].nonfinite.val()
            | self.dec[3].nonfinite.val();
        for i in 1..self._ctl {
            self.vld[i].d.next = self.vld[i - 1].q.val();
            self.tag[i].d.next = self.tag[i - 1].q.val();
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
            self.d_t[u].d.next =
                (self.pc0.val() + self.pc1.val()) + (self.pc2.val() + self.pc3.val());
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

        // ---- the outputs: T1 .. T4 at stage S + 2 ----
        for s in self._s..(self._s + 1) {
            self.out_valid.next = self.vld[s + 1].q.val();
            self.out_tag.next = self.tag[s + 1].q.val();
            self.out_flag.next = self.flg[s + 1].q.val();
            self.out_mag[0].next = self.r_t1a.q.val();
            self.out_mag[1].next = self.d_t[3 * s - 9].q.val();
            self.out_mag[2].next = self.d_t[3 * s - 8].q.val();
            self.out_mag[3].next = self.d_t[3 * s - 7].q.val();
            self.out_mag[4].next = self.r_t1b.q.val();
            self.out_sh[0].next = self.d_e[5 * s - 5].q.val();
            self.out_sh[1].next = self.d_e[5 * s - 4].q.val();
            self.out_sh[2].next = self.d_e[5 * s - 3].q.val();
            self.out_sh[3].next = self.d_e[5 * s - 2].q.val();
            self.out_sh[4].next = self.d_e[5 * s - 1].q.val();
            self.out_neg[0].next = self.d_n[4 * s - 4].q.val();
            self.out_neg[1].next = self.d_n[4 * s - 3].q.val();
            self.out_neg[2].next = self.d_n[4 * s - 2].q.val();
            self.out_neg[3].next = self.d_n[4 * s - 1].q.val();
            self.out_neg[4].next = self.d_n[4 * s - 4].q.val();
        }
    }
}
