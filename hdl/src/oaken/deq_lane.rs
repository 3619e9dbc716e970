//! One lane of the dequantizer's arithmetic, K2 to R2: the lane's base,
//! step and direction chosen from the record's six (K2), y = B + q |step|
//! as a carry-save pair (K3), y = s + c with its sign and saturation (K4),
//! the magnitude normalised (R1), rounded to nearest even and encoded as
//! FP16 (R2). The engine instantiates one per lane; all advance together.
//! Paper: Oaken (ISCA 2025) §5.2, inlier and outlier dequantizers. Spec:
//! docs/spec.md §4.4 (decoding), §4.5 (K2..R2), on §2.9-§2.10.
//!
//! Decode selections (base, step, direction): 0 outer upper, 1 outer
//! lower, 2 middle plain, 3 middle upper, 4 middle lower, 5 inner.
//! In `paper` mode the outer code is `{hi, slot}` and the middle code the
//! whole slot, and each side is `(q >= z) ^ inv` with the record's z word
//! of its group (deq_zero) instead of a stored bit. Selection 2 is unused
//! then, and its base port `bq2` carries the z words at K1 instead.

use crate::prim::fp16::FX;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, sigs};
use rust_hdl::prelude::*;

/// `IB` inlier bits; `W` = `sum_width(IB)`, the carry-save sum's width.
#[derive(LogicBlock)]
pub struct DeqLane<const IB: usize, const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the pipeline after K0 advances (every stage register loads)
    pub adv: Signal<In, Bit>,
    /// K1: a COO entry landed in this lane (the lane is an outlier)
    pub has: Signal<In, Bit>,
    /// K1: that entry (its two low bits: group, upper side)
    pub ent: Signal<In, Bits<8>>,
    /// K1: the lane's dense slot
    pub dense: Signal<In, Bits<IB>>,
    /// K2: the record's base for selection 0 (~B where `sig0` is set)
    pub bq0: Signal<In, Bits<FX>>,
    /// K2: the record's base for selection 1 (~B where `sig1` is set)
    pub bq1: Signal<In, Bits<FX>>,
    /// K2: the record's base for selection 2 (~B where `sig2` is set)
    pub bq2: Signal<In, Bits<FX>>,
    /// K2: the record's base for selection 3 (~B where `sig3` is set)
    pub bq3: Signal<In, Bits<FX>>,
    /// K2: the record's base for selection 4 (~B where `sig4` is set)
    pub bq4: Signal<In, Bits<FX>>,
    /// K2: the record's base for selection 5 (~B where `sig5` is set)
    pub bq5: Signal<In, Bits<FX>>,
    /// K2: the record's step magnitude outer
    pub stp0: Signal<In, Bits<FX>>,
    /// K2: the record's step magnitude middle
    pub stp1: Signal<In, Bits<FX>>,
    /// K2: the record's step magnitude inner
    pub stp2: Signal<In, Bits<FX>>,
    /// K2: selection 0 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig0: Signal<In, Bit>,
    /// K2: selection 1 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig1: Signal<In, Bit>,
    /// K2: selection 2 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig2: Signal<In, Bit>,
    /// K2: selection 3 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig3: Signal<In, Bit>,
    /// K2: selection 4 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig4: Signal<In, Bit>,
    /// K2: selection 5 computes x' = B - q |step| (as ~(~B + q |step|))
    pub sig5: Signal<In, Bit>,
    /// R2: the lane's FP16 result
    pub y: Signal<Out, Bits<16>>,

    // ---- K2: selection and code ----
    k2_sel: Reg<Bits<3>>,
    k2_q: Reg<Bits<16>>,
    sel_d: Signal<Local, Bits<3>>,
    q_d: Signal<Local, Bits<16>>,
    slot16: Signal<Local, Bits<16>>,
    dtmp: Signal<Local, Bits<IB>>,
    ent_grp: Signal<Local, Bit>,
    ent_hi: Signal<Local, Bit>,
    // paper: the outer code {hi, slot}; the two sides (outer, middle)
    qo: Vec<Signal<Local, Bits<16>>>,
    up: Vec<Signal<Local, Bit>>,
    zl: Vec<Signal<Local, Bits<16>>>,
    zmask: Vec<Constant<Bits<16>>>,
    // ---- K3: base + q * step as a carry-save pair ----
    selv: Signal<Local, Bits<3>>,
    bsel: Signal<Local, Bits<FX>>,
    ssel: Signal<Local, Bits<FX>>,
    sgl: Signal<Local, Bit>,
    bext: Signal<Local, Bits<W>>,
    sw: Signal<Local, Bits<W>>,
    qv: Signal<Local, Bits<16>>,
    // operands of the carry-save tree's levels
    o0: Vec<Signal<Local, Bits<W>>>,
    o1: Vec<Signal<Local, Bits<W>>>,
    o2: Vec<Signal<Local, Bits<W>>>,
    o3: Vec<Signal<Local, Bits<W>>>,
    o4: Vec<Signal<Local, Bits<W>>>,
    o5: Vec<Signal<Local, Bits<W>>>,
    k3_s: Reg<Bits<W>>,
    k3_c: Reg<Bits<W>>,
    k3_sig: Reg<Bit>,
    // ---- K4: y = s + c: its low 40 bits and sign, the sign of x', saturation ----
    ysum: Signal<Local, Bits<W>>,
    yhi: Signal<Local, Bits<W>>,
    ysg: Signal<Local, Bit>,
    k4_m: Reg<Bits<40>>,
    k4_ys: Reg<Bit>,
    k4_neg: Reg<Bit>,
    k4_sat: Reg<Bit>,
    // ---- R1: normalised magnitude ----
    mm: Signal<Local, Bits<40>>,
    fillm: Signal<Local, Bits<40>>,
    n1: Signal<Local, Bits<40>>,
    n2: Signal<Local, Bits<40>>,
    top8: Signal<Local, Bits<8>>,
    lzc: Signal<Local, Bits<8>>,
    lzf: Signal<Local, Bits<8>>,
    // zero tests of m's top bytes and of m >> 11, on both polarities of
    // the stored y (m = y ^ sign), the sign selecting last
    mz: Vec<Signal<Local, Bit>>,
    msmall: Signal<Local, Bit>,
    r1_n: Reg<Bits<40>>,
    r1_lz: Reg<Bits<8>>,
    r1_neg: Reg<Bit>,
    r1_sat: Reg<Bit>,
    r1_small: Reg<Bit>,
    // ---- R2: round to nearest even and encode ----
    nn: Signal<Local, Bits<40>>,
    field: Signal<Local, Bits<12>>,
    low: Signal<Local, Bits<28>>,
    allones: Signal<Local, Bit>,
    anyb: Signal<Local, Bit>,
    ngv: Signal<Local, Bit>,
    cin: Signal<Local, Bit>,
    sticky: Signal<Local, Bit>,
    inc: Signal<Local, Bit>,
    aval: Signal<Local, Bits<12>>,
    res: Signal<Local, Bits<12>>,
    ex: Signal<Local, Bits<8>>,
    pat: Signal<Local, Bits<16>>,
    r2_y: Reg<Bits<16>>,

    // constants (bit indices, shift amounts, masks)
    bit_c: Vec<Constant<Bits<32>>>,
    shw: Vec<Constant<Bits<W>>>,
    sel_c: Vec<Constant<Bits<3>>>,
    hi_bit16: Constant<Bits<16>>,
    mid_mask: Constant<Bits<16>>,
    mid_sel_lo: Constant<Bits<3>>,
    mid_sel_hi: Constant<Bits<3>>,
    mid_top: Constant<Bits<32>>,
    one_w: Constant<Bits<W>>,
    zero_w: Constant<Bits<W>>,
    sext_w: Constant<Bits<W>>,
    hi_ones_w: Constant<Bits<W>>,
    sh40_w: Constant<Bits<W>>,
    msb_w: Constant<Bits<32>>,
    msb_fx: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    ones8: Constant<Bits<8>>,
    byte_off: Vec<Constant<Bits<32>>>,
    fsh: Vec<Constant<Bits<8>>>,
    fmask: Vec<Constant<Bits<40>>>,
    fsh40: Vec<Constant<Bits<40>>>,
    fcnt: Vec<Constant<Bits<8>>>,
    lo11_40: Constant<Bits<40>>,
    zero40: Constant<Bits<40>>,
    ones40: Constant<Bits<40>>,
    c8_8: Constant<Bits<8>>,
    c16_8: Constant<Bits<8>>,
    c24_8: Constant<Bits<8>>,
    c30_8: Constant<Bits<8>>,
    sh8_40: Constant<Bits<40>>,
    sh16_40: Constant<Bits<40>>,
    sh24_40: Constant<Bits<40>>,
    sh11_40: Constant<Bits<40>>,
    m8_40: Constant<Bits<40>>,
    m16_40: Constant<Bits<40>>,
    m24_40: Constant<Bits<40>>,
    ones28: Constant<Bits<28>>,
    zero28: Constant<Bits<28>>,
    one12: Constant<Bits<12>>,
    sh10_16: Constant<Bits<16>>,
    sh15_16: Constant<Bits<16>>,
    max16: Constant<Bits<16>>,

    // code bits (IB + 1: the outliers' extra upper bit)
    _np: usize,
    _paper: usize,
    // carry-save tree: 3:2 groups and pass-through operands per level
    _g1: usize,
    _r1: usize,
    _g2: usize,
    _r2: usize,
    _g3: usize,
    _r3: usize,
    _g4: usize,
    _r4: usize,
    _g5: usize,
    _r5: usize,
}

impl<const IB: usize, const W: usize> DeqLane<IB, W> {
    /// A lane for `IB`-bit dense slots; `mid_shifted`: the middle group is
    /// coded shifted (side bit on top, selections 3 and 4) rather than
    /// plain (selection 2, the whole slot); `paper`: the outer and middle
    /// groups are folded, their sides read from the z words.
    pub fn new(mid_shifted: bool, paper: bool) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let ones = |b: usize| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        let np = IB + 1;
        // carry-save levels: n operands -> 2 (n/3) + n%3
        let mut n = [0usize; 6];
        let (mut g, mut r) = ([0usize; 5], [0usize; 5]);
        n[0] = np + 1;
        for k in 0..5 {
            g[k] = if n[k] > 2 { n[k] / 3 } else { 0 };
            r[k] = n[k] - 3 * g[k];
            n[k + 1] = 2 * g[k] + r[k];
        }
        assert_eq!(n[5], 2, "carry-save tree too shallow");
        DeqLane {
            clock: Default::default(),
            reset: Default::default(),
            adv: Default::default(),
            has: Default::default(),
            ent: Default::default(),
            dense: Default::default(),
            bq0: Default::default(),
            bq1: Default::default(),
            bq2: Default::default(),
            bq3: Default::default(),
            bq4: Default::default(),
            bq5: Default::default(),
            stp0: Default::default(),
            stp1: Default::default(),
            stp2: Default::default(),
            sig0: Default::default(),
            sig1: Default::default(),
            sig2: Default::default(),
            sig3: Default::default(),
            sig4: Default::default(),
            sig5: Default::default(),
            y: Default::default(),
            qo: sigs(paper as usize),
            up: sigs(2 * paper as usize),
            zl: sigs(2 * paper as usize),
            zmask: consts((0..paper as u64).map(|_| 0x7FFF)),
            k2_sel: Reg::default(),
            k2_q: Reg::default(),
            sel_d: Default::default(),
            q_d: Default::default(),
            slot16: Default::default(),
            dtmp: Default::default(),
            ent_grp: Default::default(),
            ent_hi: Default::default(),
            selv: Default::default(),
            bsel: Default::default(),
            ssel: Default::default(),
            sgl: Default::default(),
            bext: Default::default(),
            sw: Default::default(),
            qv: Default::default(),
            o0: sigs(n[0]),
            o1: sigs(n[1]),
            o2: sigs(n[2]),
            o3: sigs(n[3]),
            o4: sigs(n[4]),
            o5: sigs(n[5]),
            k3_s: Reg::default(),
            k3_c: Reg::default(),
            k3_sig: Reg::default(),
            ysum: Default::default(),
            yhi: Default::default(),
            ysg: Default::default(),
            k4_m: Reg::default(),
            k4_ys: Reg::default(),
            k4_neg: Reg::default(),
            k4_sat: Reg::default(),
            mm: Default::default(),
            fillm: Default::default(),
            n1: Default::default(),
            n2: Default::default(),
            top8: Default::default(),
            lzc: Default::default(),
            lzf: Default::default(),
            mz: sigs(3),
            msmall: Default::default(),
            r1_n: Reg::default(),
            r1_lz: Reg::default(),
            r1_neg: Reg::default(),
            r1_sat: Reg::default(),
            r1_small: Reg::default(),
            nn: Default::default(),
            field: Default::default(),
            low: Default::default(),
            allones: Default::default(),
            anyb: Default::default(),
            ngv: Default::default(),
            cin: Default::default(),
            sticky: Default::default(),
            inc: Default::default(),
            aval: Default::default(),
            res: Default::default(),
            ex: Default::default(),
            pat: Default::default(),
            r2_y: Reg::default(),
            bit_c: consts(0..np.max(2) as u64),
            shw: consts(0..np as u64),
            sel_c: consts(0..6),
            hi_bit16: c(1u64 << IB),
            mid_mask: c(if mid_shifted { (1u64 << (IB - 1)) - 1 } else { 0xFFFF }),
            mid_sel_lo: c(if mid_shifted { 4 } else { 2 }),
            mid_sel_hi: c(if mid_shifted { 3 } else { 2 }),
            mid_top: c((IB - 1) as u64),
            one_w: c(1),
            zero_w: c(0),
            sext_w: c(ones(W) - ones(FX)),
            hi_ones_w: c(ones(W - 40)),
            sh40_w: c(40),
            msb_w: c((W - 1) as u64),
            msb_fx: c((FX - 1) as u64),
            zero8: c(0),
            one8: c(1),
            ones8: c(0xFF),
            byte_off: consts((0..3).map(|b| 16 + 8 * b)),
            fsh: consts((0..8).map(|f| 7 - f)),
            fmask: consts((0..8).map(|f| ones(f as usize))),
            fsh40: consts(0..8),
            fcnt: consts(0..8),
            lo11_40: c(ones(11)),
            zero40: c(0),
            ones40: c(ones(40)),
            c8_8: c(8),
            c16_8: c(16),
            c24_8: c(24),
            c30_8: c(30),
            sh8_40: c(8),
            sh16_40: c(16),
            sh24_40: c(24),
            sh11_40: c(11),
            m8_40: c(ones(8)),
            m16_40: c(ones(16)),
            m24_40: c(ones(24)),
            ones28: c(ones(28)),
            zero28: c(0),
            one12: c(1),
            sh10_16: c(10),
            sh15_16: c(15),
            max16: c(0x7BFF),
            _np: np,
            _paper: paper as usize,
            _g1: g[0],
            _r1: r[0],
            _g2: g[1],
            _r2: r[1],
            _g3: g[2],
            _r3: r[2],
            _g4: g[3],
            _r4: r[3],
            _g5: g[4],
            _r5: r[4],
        }
    }
}

impl<const IB: usize, const W: usize> Logic for DeqLane<IB, W> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, k2_sel, k2_q, k3_s, k3_c, k3_sig, k4_m, k4_ys, k4_neg, k4_sat, r1_n, r1_lz, r1_neg, r1_sat, r1_small,
            r2_y
        );
        self.k2_sel.reset.next = self.reset.val();
        self.k2_q.reset.next = self.reset.val();
        self.k3_s.reset.next = self.reset.val();
        self.k3_c.reset.next = self.reset.val();
        self.k3_sig.reset.next = self.reset.val();
        self.k4_m.reset.next = self.reset.val();
        self.k4_ys.reset.next = self.reset.val();
        self.k4_neg.reset.next = self.reset.val();
        self.k4_sat.reset.next = self.reset.val();
        self.r1_n.reset.next = self.reset.val();
        self.r1_lz.reset.next = self.reset.val();
        self.r1_neg.reset.next = self.reset.val();
        self.r1_sat.reset.next = self.reset.val();
        self.r1_small.reset.next = self.reset.val();
        self.r2_y.reset.next = self.reset.val();
        self.k2_sel.en.next = self.adv.val();
        self.k2_q.en.next = self.adv.val();
        self.k3_s.en.next = self.adv.val();
        self.k3_c.en.next = self.adv.val();
        self.k3_sig.en.next = self.adv.val();
        self.k4_m.en.next = self.adv.val();
        self.k4_ys.en.next = self.adv.val();
        self.k4_neg.en.next = self.adv.val();
        self.k4_sat.en.next = self.adv.val();
        self.r1_n.en.next = self.adv.val();
        self.r1_lz.en.next = self.adv.val();
        self.r1_neg.en.next = self.adv.val();
        self.r1_sat.en.next = self.adv.val();
        self.r1_small.en.next = self.adv.val();
        self.r2_y.en.next = self.adv.val();

        // ---------------- K2: selection and code ----------------
        self.dtmp.next = self.dense.val();
        self.slot16.next = bit_cast::<16, IB>(self.dtmp.val());
        self.ent_grp.next = self.ent.val().get_bit(self.bit_c[1].val().index());
        self.ent_hi.next = self.ent.val().get_bit(self.bit_c[0].val().index());
        // middle: plain (sel 2, whole slot) or shifted (side bit on
        // top, sel 3 upper / 4 lower); the constants make one code path
        self.sel_d.next = self.mid_sel_lo.val();
        if self.slot16.val().get_bit(self.mid_top.val().index()) {
            self.sel_d.next = self.mid_sel_hi.val();
        }
        self.q_d.next = self.slot16.val() & self.mid_mask.val();
        if self.has.val() {
            if self.ent_grp.val() {
                self.sel_d.next = self.sel_c[1].val();
                if self.ent_hi.val() {
                    self.sel_d.next = self.sel_c[0].val();
                }
                self.q_d.next = self.slot16.val();
            } else {
                self.sel_d.next = self.sel_c[5].val();
                self.q_d.next = self.slot16.val();
                if self.ent_hi.val() {
                    self.q_d.next = self.slot16.val() | self.hi_bit16.val();
                }
            }
        }
        // paper: the outer code is {hi, slot} and the middle code the
        // whole slot; each side is (q >= z) ^ inv
        for _p in 0..self._paper {
            self.qo[0].next = self.slot16.val();
            if self.ent_hi.val() {
                self.qo[0].next = self.slot16.val() | self.hi_bit16.val();
            }
            self.zl[0].next = self.bq2.val().get_bits::<16>(0) & self.zmask[0].val();
            self.zl[1].next = self.bq2.val().get_bits::<16>(16) & self.zmask[0].val();
            self.up[0].next = self.qo[0].val() >= self.zl[0].val();
            if self.bq2.val().get_bit(15) {
                self.up[0].next = !(self.qo[0].val() >= self.zl[0].val());
            }
            self.up[1].next = self.slot16.val() >= self.zl[1].val();
            if self.bq2.val().get_bit(31) {
                self.up[1].next = !(self.slot16.val() >= self.zl[1].val());
            }
            self.sel_d.next = self.sel_c[4].val();
            if self.up[1].val() {
                self.sel_d.next = self.sel_c[3].val();
            }
            self.q_d.next = self.slot16.val();
            if self.has.val() {
                if self.ent_grp.val() {
                    self.sel_d.next = self.sel_c[1].val();
                    if self.up[0].val() {
                        self.sel_d.next = self.sel_c[0].val();
                    }
                    self.q_d.next = self.qo[0].val();
                } else {
                    self.sel_d.next = self.sel_c[5].val();
                    self.q_d.next = self.qo[0].val();
                }
            }
        }
        self.k2_sel.d.next = self.sel_d.val();
        self.k2_q.d.next = self.q_d.val();

        // ---------------- K3: y = B + q |step| as a carry-save pair ----------------
        self.selv.next = self.k2_sel.q.val();
        self.bsel.next = self.bq5.val();
        self.ssel.next = self.stp2.val();
        self.sgl.next = self.sig5.val();
        if self.selv.val() == self.sel_c[0].val() {
            self.bsel.next = self.bq0.val();
            self.ssel.next = self.stp0.val();
            self.sgl.next = self.sig0.val();
        }
        if self.selv.val() == self.sel_c[1].val() {
            self.bsel.next = self.bq1.val();
            self.ssel.next = self.stp0.val();
            self.sgl.next = self.sig1.val();
        }
        if self.selv.val() == self.sel_c[2].val() {
            self.bsel.next = self.bq2.val();
            self.ssel.next = self.stp1.val();
            self.sgl.next = self.sig2.val();
        }
        if self.selv.val() == self.sel_c[3].val() {
            self.bsel.next = self.bq3.val();
            self.ssel.next = self.stp1.val();
            self.sgl.next = self.sig3.val();
        }
        if self.selv.val() == self.sel_c[4].val() {
            self.bsel.next = self.bq4.val();
            self.ssel.next = self.stp1.val();
            self.sgl.next = self.sig4.val();
        }
        // operands: B sign-extended, then step << i for each set code bit
        self.bext.next = bit_cast::<W, FX>(self.bsel.val());
        if self.bsel.val().get_bit(self.msb_fx.val().index()) {
            self.bext.next = self.bext.val() | self.sext_w.val();
        }
        self.sw.next = bit_cast::<W, FX>(self.ssel.val());
        self.qv.next = self.k2_q.q.val();
        self.o0[0].next = self.bext.val();
        for i in 0..self._np {
            self.o0[i + 1].next = self.zero_w.val();
            if self.qv.val().get_bit(self.bit_c[i].val().index()) {
                self.o0[i + 1].next = self.sw.val() << self.shw[i].val();
            }
        }
        // 3:2 compressor levels (sum, carry << 1); untouched operands
        // pass to the next level
        for t in 0..self._g1 {
            self.o1[2 * t].next = self.o0[3 * t].val() ^ self.o0[3 * t + 1].val() ^ self.o0[3 * t + 2].val();
            self.o1[2 * t + 1].next = ((self.o0[3 * t].val() & self.o0[3 * t + 1].val())
                | (self.o0[3 * t].val() & self.o0[3 * t + 2].val())
                | (self.o0[3 * t + 1].val() & self.o0[3 * t + 2].val()))
                << self.one_w.val();
        }
        for g in self._g1..(self._g1 + 1) {
            for r in 0..self._r1 {
                self.o1[2 * g + r].next = self.o0[3 * g + r].val();
            }
        }
        for t in 0..self._g2 {
            self.o2[2 * t].next = self.o1[3 * t].val() ^ self.o1[3 * t + 1].val() ^ self.o1[3 * t + 2].val();
            self.o2[2 * t + 1].next = ((self.o1[3 * t].val() & self.o1[3 * t + 1].val())
                | (self.o1[3 * t].val() & self.o1[3 * t + 2].val())
                | (self.o1[3 * t + 1].val() & self.o1[3 * t + 2].val()))
                << self.one_w.val();
        }
        for g in self._g2..(self._g2 + 1) {
            for r in 0..self._r2 {
                self.o2[2 * g + r].next = self.o1[3 * g + r].val();
            }
        }
        for t in 0..self._g3 {
            self.o3[2 * t].next = self.o2[3 * t].val() ^ self.o2[3 * t + 1].val() ^ self.o2[3 * t + 2].val();
            self.o3[2 * t + 1].next = ((self.o2[3 * t].val() & self.o2[3 * t + 1].val())
                | (self.o2[3 * t].val() & self.o2[3 * t + 2].val())
                | (self.o2[3 * t + 1].val() & self.o2[3 * t + 2].val()))
                << self.one_w.val();
        }
        for g in self._g3..(self._g3 + 1) {
            for r in 0..self._r3 {
                self.o3[2 * g + r].next = self.o2[3 * g + r].val();
            }
        }
        for t in 0..self._g4 {
            self.o4[2 * t].next = self.o3[3 * t].val() ^ self.o3[3 * t + 1].val() ^ self.o3[3 * t + 2].val();
            self.o4[2 * t + 1].next = ((self.o3[3 * t].val() & self.o3[3 * t + 1].val())
                | (self.o3[3 * t].val() & self.o3[3 * t + 2].val())
                | (self.o3[3 * t + 1].val() & self.o3[3 * t + 2].val()))
                << self.one_w.val();
        }
        for g in self._g4..(self._g4 + 1) {
            for r in 0..self._r4 {
                self.o4[2 * g + r].next = self.o3[3 * g + r].val();
            }
        }
        for t in 0..self._g5 {
            self.o5[2 * t].next = self.o4[3 * t].val() ^ self.o4[3 * t + 1].val() ^ self.o4[3 * t + 2].val();
            self.o5[2 * t + 1].next = ((self.o4[3 * t].val() & self.o4[3 * t + 1].val())
                | (self.o4[3 * t].val() & self.o4[3 * t + 2].val())
                | (self.o4[3 * t + 1].val() & self.o4[3 * t + 2].val()))
                << self.one_w.val();
        }
        for g in self._g5..(self._g5 + 1) {
            for r in 0..self._r5 {
                self.o5[2 * g + r].next = self.o4[3 * g + r].val();
            }
        }
        self.k3_s.d.next = self.o5[0].val();
        self.k3_c.d.next = self.o5[1].val();
        self.k3_sig.d.next = self.sgl.val();

        // ---------------- K4: y = s + c; x' = y or ~y ----------------
        // |x'| >= 2^40 saturates (bits W-1..40 of y not all equal); below
        // that, m = |x'| - [x' < 0] = y[39:0] ^ sign(y) (applied in R1), so
        // the rounder never negates (it adds the 1 back where it rounds)
        self.ysum.next = self.k3_s.q.val() + self.k3_c.q.val();
        self.yhi.next = self.ysum.val() >> self.sh40_w.val();
        self.ysg.next = self.ysum.val().get_bit(self.msb_w.val().index());
        self.k4_m.d.next = self.ysum.val().get_bits::<40>(0);
        self.k4_ys.d.next = self.ysg.val();
        self.k4_neg.d.next = self.ysg.val() ^ self.k3_sig.q.val();
        self.k4_sat.d.next = (self.yhi.val() != self.zero_w.val()) & (self.yhi.val() != self.hi_ones_w.val());

        // ---------------- R1: normalise m (bytes, then bits) ----------------
        // Shifted-in bits are the sign: for x' < 0 the bits below m's
        // leading one then read as those of |x'| - 1 all the way down.
        // Below 2048 units m is kept as it is (its pattern is itself).
        self.mm.next = self.k4_m.q.val();
        if self.k4_ys.q.val() {
            self.mm.next = !self.k4_m.q.val();
        }
        self.fillm.next = self.zero40.val();
        if self.k4_neg.q.val() {
            self.fillm.next = self.ones40.val();
        }
        for b in 0..3 {
            self.mz[b].next = self.k4_m.q.val().get_bits::<8>(self.byte_off[b].val().index()) == self.zero8.val();
            if self.k4_ys.q.val() {
                self.mz[b].next = self.k4_m.q.val().get_bits::<8>(self.byte_off[b].val().index()) == self.ones8.val();
            }
        }
        self.msmall.next = (self.k4_m.q.val() >> self.sh11_40.val()) == self.zero40.val();
        if self.k4_ys.q.val() {
            self.msmall.next = (self.k4_m.q.val() | self.lo11_40.val()) == self.ones40.val();
        }
        self.n1.next = self.mm.val();
        self.lzc.next = self.zero8.val();
        if self.mz[2].val() {
            if !self.mz[1].val() {
                self.n1.next = (self.mm.val() << self.sh8_40.val()) | (self.fillm.val() & self.m8_40.val());
                self.lzc.next = self.c8_8.val();
            } else if !self.mz[0].val() {
                self.n1.next = (self.mm.val() << self.sh16_40.val()) | (self.fillm.val() & self.m16_40.val());
                self.lzc.next = self.c16_8.val();
            } else {
                self.n1.next = (self.mm.val() << self.sh24_40.val()) | (self.fillm.val() & self.m24_40.val());
                self.lzc.next = self.c24_8.val();
            }
        }
        self.top8.next = self.n1.val().get_bits::<8>(32);
        self.n2.next = self.n1.val();
        self.lzf.next = self.zero8.val();
        for f in 0..8 {
            if (self.top8.val() >> self.fsh[f].val()) == self.one8.val() {
                self.n2.next = (self.n1.val() << self.fsh40[f].val()) | (self.fillm.val() & self.fmask[f].val());
                self.lzf.next = self.fcnt[f].val();
            }
        }
        self.r1_n.d.next = self.n2.val();
        if self.msmall.val() {
            self.r1_n.d.next = self.mm.val();
        }
        self.r1_lz.d.next = self.lzc.val() + self.lzf.val();
        self.r1_small.d.next = self.msmall.val();
        self.r1_neg.d.next = self.k4_neg.q.val();
        self.r1_sat.d.next = self.k4_sat.q.val();

        // ---------------- R2: round to nearest even, saturate, encode ----------------
        // n[39:29] is the significand, n[28] the round bit. For x' < 0,
        // |x'| = m + 1: the 1 carries into the round bit when n[27:0] is
        // all ones (then nothing is left below it), else it leaves a sticky
        // bit. So one increment rounds: RNE of the rounded-off value becomes
        // field[0] | field[1] after a carry-in, field[0] & (sticky |
        // field[1]) without.
        self.nn.next = self.r1_n.q.val();
        self.ngv.next = self.r1_neg.q.val();
        self.field.next = self.nn.val().get_bits::<12>(28);
        self.low.next = self.nn.val().get_bits::<28>(0);
        self.allones.next = self.low.val() == self.ones28.val();
        self.anyb.next = self.low.val() != self.zero28.val();
        self.cin.next = self.ngv.val() & self.allones.val();
        self.sticky.next = (self.ngv.val() & !self.allones.val()) | (!self.ngv.val() & self.anyb.val());
        self.inc.next = self.field.val().get_bit(0) & (self.sticky.val() | self.field.val().get_bit(1));
        if self.cin.val() {
            self.inc.next = self.field.val().get_bit(0) | self.field.val().get_bit(1);
        }
        self.aval.next = self.field.val() >> self.one12.val();
        if self.r1_small.q.val() {
            self.aval.next = self.nn.val().get_bits::<12>(0);
            self.inc.next = self.ngv.val();
        }
        self.res.next = self.aval.val() + bit_cast::<12, 1>(self.inc.val().into());
        // exponent field 30 - lz, one more when rounding carries out
        self.ex.next = self.c30_8.val() - self.r1_lz.q.val();
        if self.res.val().get_bit(11) {
            self.ex.next = self.ex.val() + self.one8.val();
        }
        self.pat.next = (bit_cast::<16, 8>(self.ex.val()) << self.sh10_16.val())
            | bit_cast::<16, 10>(self.res.val().get_bits::<10>(0));
        if self.ex.val() > self.c30_8.val() {
            self.pat.next = self.max16.val();
        }
        if self.r1_small.q.val() {
            self.pat.next = bit_cast::<16, 12>(self.res.val());
        }
        if self.r1_sat.q.val() {
            self.pat.next = self.max16.val();
        }
        self.r2_y.d.next = self.pat.val() | (bit_cast::<16, 1>(self.ngv.val().into()) << self.sh15_16.val());
        self.y.next = self.r2_y.q.val();
    }
}
