//! `kivi-dequantizer`: one group per input beat (its metadata word and its
//! `W` packed code words), `lanes` FP16 values per output beat,
//! `output_j = RNE(units(min) + q_j * units(step))`, saturating.
//!
//! Paper: KIVI (ICML 2024), dequantization `scale * q + mn`. Spec:
//! docs/spec.md §13.4 (packing), §13.5 (metadata), §13.6 (arithmetic),
//! §13.14 (ports, beats, stages).
//!
//! Stages (all but the front advance together, `adv = !out_valid |
//! out_ready`):
//! - front: two group slots, `a` (the group being issued) and `b`;
//!   `in_ready` is the register "slot b free". Beat `k` of slot `a` picks
//!   codes `k * lanes + l` out of its words by constant shifts;
//! - P1: codes, `|min|` and its sign (`Fp16ToUnits`), the step's
//!   significand, shift and sign;
//! - P2: `q * significand` as two pieces, `q[3:0] s` and `q[7:4] s` (each
//!   a 16x16 multiply of a 4-bit and an 11-bit operand);
//! - P3: the pieces' sum shifted by the step's exponent (`p = |q *
//!   units(step)|`);
//! - P4, P5: `units(min) +- q * units(step)` exact, as magnitude and sign,
//!   with `m = |units(min)|`: `m + p` when the signs agree, else `m - p`
//!   or (when that is negative) `p - m`; each 50-bit add split in two
//!   25-bit halves, the low ones (and their carries) in P4, the high ones
//!   and the choice in P5, so no carry runs more than 25 bits in a stage;
//! - P6: the magnitude clamped to 2^40 (beyond 65504, so RNE saturates
//!   the same);
//! - R0..R2: `UnitsToFp16` in magnitude mode, RNE (spec §5.6).

use crate::prim::fp16::{Fp16ToUnits, UnitsToFp16, FX, RNE};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Width of the exact sum: `|units(min)| < 2^40`, `q * units(step) <
/// 2^8 * 2^11 * 2^29 = 2^48`, so the sum and its sign fit 50 bits.
pub const SUM_W: usize = 50;

/// Pipeline registers from slot `a` to the output: P1-P6 and R0-R2.
const STAGES: usize = 9;

/// Width of each half of the split sums.
const HW: usize = SUM_W / 2;

#[derive(LogicBlock)]
pub struct KiviDequantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: both group slots and the pipeline empty
    pub reset: Signal<In, Bit>,
    /// group beat valid
    pub in_valid: Signal<In, Bit>,
    /// group beat accepted when in_valid and in_ready (a register: low only while both group slots are full)
    pub in_ready: Signal<Out, Bit>,
    /// the group's metadata word (spec §13.5): min [15:0], step [31:16], both FP16 and finite
    pub in_meta: Signal<In, Bits<32>>,
    /// the group's W packed code words (spec §13.4), word i at [32i+31:32i]
    pub in_words: Vec<Signal<In, Bits<32>>>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// FP16 values, RNE(min + q step) saturating; at a group's beat k, lane l at [16l+15:16l] holds element k*lanes + l
    pub out_y: Vec<Signal<Out, Bits<16>>>,
    /// the beat is its group's last ({latency} cycles from the input beat to its group's first output beat)
    pub out_last: Signal<Out, Bit>,
    // ---- front: slot a (issuing) and slot b ----
    a_words: Vec<Reg<Bits<32>>>,
    b_words: Vec<Reg<Bits<32>>>,
    a_meta: Reg<Bits<32>>,
    b_meta: Reg<Bits<32>>,
    a_v: Reg<Bit>,
    b_free: Reg<Bit>,
    rk: Reg<Bits<8>>,
    adv: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    lastb: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    cvt_min: Fp16ToUnits,
    ex: Signal<Local, Bits<5>>,
    cw: Signal<Local, Bits<32>>,
    // ---- P1 ----
    p1_q: Vec<Reg<Bits<16>>>,
    p1_minmag: Reg<Bits<FX>>,
    p1_minneg: Reg<Bit>,
    p1_sig: Reg<Bits<16>>,
    p1_e: Reg<Bits<8>>,
    p1_sneg: Reg<Bit>,
    // ---- P2 ----
    // q s as two pieces, q[3:0] s and q[7:4] s (each below 2^15)
    p2_pl: Vec<Reg<Bits<32>>>,
    p2_ph: Vec<Reg<Bits<32>>>,
    qpart: Signal<Local, Bits<16>>,
    ppart: Signal<Local, Bits<32>>,
    p2_min: Reg<Bits<FX>>,
    p2_minneg: Reg<Bit>,
    p2_e: Reg<Bits<8>>,
    p2_sneg: Reg<Bit>,
    // ---- P3 ----
    prodl: Signal<Local, Bits<32>>,
    p3_sh: Vec<Reg<Bits<SUM_W>>>,
    p3_min: Reg<Bits<FX>>,
    p3_minneg: Reg<Bit>,
    p3_sneg: Reg<Bit>,
    // ---- P4: low halves ----
    min_w: Signal<Local, Bits<SUM_W>>,
    eff: Signal<Local, Bit>,
    effm: Signal<Local, Bits<HW>>,
    lo_m: Signal<Local, Bits<HW>>,
    lo_p: Signal<Local, Bits<HW>>,
    lo_a: Signal<Local, Bits<26>>,
    lo_b: Signal<Local, Bits<26>>,
    // a = m +- p, b = p - m: low 25 bits and the carry out (bit 25)
    p4_al: Vec<Reg<Bits<26>>>,
    p4_bl: Vec<Reg<Bits<26>>>,
    p4_ph: Vec<Reg<Bits<HW>>>,
    p4_mh: Reg<Bits<HW>>,
    p4_eff: Reg<Bit>,
    p4_minneg: Reg<Bit>,
    // ---- P5: high halves, the choice ----
    hi_p: Signal<Local, Bits<HW>>,
    al: Signal<Local, Bits<26>>,
    bl: Signal<Local, Bits<26>>,
    ca: Signal<Local, Bits<HW>>,
    cb: Signal<Local, Bits<HW>>,
    ha: Signal<Local, Bits<HW>>,
    hb: Signal<Local, Bits<HW>>,
    p5_mag: Vec<Reg<Bits<SUM_W>>>,
    p5_neg: Vec<Reg<Bit>>,
    // ---- P6: clamp ----
    top: Signal<Local, Bits<10>>,
    sumq: Signal<Local, Bits<SUM_W>>,
    p6_v: Vec<Reg<Bits<FX>>>,
    p6_neg: Vec<Reg<Bit>>,
    // ---- R0..R2 ----
    rnd: Vec<UnitsToFp16>,
    vld: Vec<Reg<Bit>>,
    lst: Vec<Reg<Bit>>,
    // ---- constants ----
    /// beat index k
    kc: Vec<Constant<Bits<8>>>,
    /// bit offset of code j in its word
    shj: Vec<Constant<Bits<32>>>,
    k_last: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_cmask: Constant<Bits<32>>,
    k_zero5: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_imp: Constant<Bits<16>>,
    k_zero_hw: Constant<Bits<HW>>,
    k_ones_hw: Constant<Bits<HW>>,
    k_one_hw: Constant<Bits<HW>>,
    k_one26: Constant<Bits<26>>,
    k_hw: Constant<Bits<32>>,
    k_hw1: Constant<Bits<32>>,
    k_zero10: Constant<Bits<10>>,
    k_posmax: Constant<Bits<FX>>,
    k_rne: Constant<Bits<2>>,
    k_nib: Constant<Bits<16>>,
    k_four16: Constant<Bits<16>>,
    k_four32: Constant<Bits<32>>,
    _lanes: usize,
    _nb: usize,
    _c: usize,
    _w: usize,
}

impl KiviDequantizer {
    /// `group` elements per group of `bits`-bit codes, `lanes` per output
    /// beat (`lanes` divides `group`).
    pub fn new(group: usize, bits: usize, lanes: usize) -> Self {
        assert!(group % lanes == 0 && group <= 256 && [2, 3, 4, 8].contains(&bits));
        let c = 32 / bits;
        let w = group.div_ceil(c);
        let nb = group / lanes;
        let ones = |n: usize| (1u64 << n) - 1;
        KiviDequantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_meta: Default::default(),
            in_words: sigs(w),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_y: sigs(lanes),
            out_last: Default::default(),
            a_words: regs(w),
            b_words: regs(w),
            a_meta: Reg::default(),
            b_meta: Reg::default(),
            a_v: Reg::default(),
            b_free: Reg::new(true),
            rk: Reg::default(),
            adv: Default::default(),
            push: Default::default(),
            issue: Default::default(),
            lastb: Default::default(),
            pop: Default::default(),
            cvt_min: Fp16ToUnits::default(),
            ex: Default::default(),
            cw: Default::default(),
            p1_q: regs(lanes),
            p1_minmag: Reg::default(),
            p1_minneg: Reg::default(),
            p1_sig: Reg::default(),
            p1_e: Reg::default(),
            p1_sneg: Reg::default(),
            p2_pl: regs(lanes),
            p2_ph: regs(lanes),
            qpart: Default::default(),
            ppart: Default::default(),
            p2_min: Reg::default(),
            p2_minneg: Reg::default(),
            p2_e: Reg::default(),
            p2_sneg: Reg::default(),
            prodl: Default::default(),
            p3_sh: regs(lanes),
            p3_min: Reg::default(),
            p3_minneg: Reg::default(),
            p3_sneg: Reg::default(),
            min_w: Default::default(),
            eff: Default::default(),
            effm: Default::default(),
            lo_m: Default::default(),
            lo_p: Default::default(),
            lo_a: Default::default(),
            lo_b: Default::default(),
            p4_al: regs(lanes),
            p4_bl: regs(lanes),
            p4_ph: regs(lanes),
            p4_mh: Reg::default(),
            p4_eff: Reg::default(),
            p4_minneg: Reg::default(),
            hi_p: Default::default(),
            al: Default::default(),
            bl: Default::default(),
            ca: Default::default(),
            cb: Default::default(),
            ha: Default::default(),
            hb: Default::default(),
            p5_mag: regs(lanes),
            p5_neg: regs(lanes),
            top: Default::default(),
            sumq: Default::default(),
            p6_v: regs(lanes),
            p6_neg: regs(lanes),
            rnd: (0..lanes).map(|_| UnitsToFp16::magnitude()).collect(),
            vld: regs(STAGES),
            lst: regs(STAGES),
            kc: consts((0..nb as u64).collect::<Vec<_>>()),
            shj: consts((0..group).map(|j| (bits * (j % c)) as u64)),
            k_last: Constant::new(((nb - 1) as u64).into()),
            k_one8: Constant::new(1u64.into()),
            k_zero8: Constant::new(0u64.into()),
            k_cmask: Constant::new(ones(bits).into()),
            k_zero5: Constant::new(0u64.into()),
            k_one5: Constant::new(1u64.into()),
            k_imp: Constant::new(1024u64.into()),
            k_zero_hw: Constant::new(0u64.into()),
            k_ones_hw: Constant::new(ones(HW).into()),
            k_one_hw: Constant::new(1u64.into()),
            k_one26: Constant::new(1u64.into()),
            k_hw: Constant::new((HW as u64).into()),
            k_hw1: Constant::new((HW as u64 - 1).into()),
            k_zero10: Constant::new(0u64.into()),
            k_posmax: Constant::new((1u64 << 40).into()),
            k_rne: Constant::new(RNE.into()),
            k_nib: Constant::new(15u64.into()),
            k_four16: Constant::new(4u64.into()),
            k_four32: Constant::new(4u64.into()),
            _lanes: lanes,
            _nb: nb,
            _c: c,
            _w: w,
        }
    }

    /// Cycles from an input beat's transfer to its group's first output
    /// beat, with the output ready: slot a, then P1-P6 and R0-R2.
    pub const LATENCY: usize = STAGES + 1;
}

impl Logic for KiviDequantizer {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- register wiring: clock, reset; the pipeline loads on adv ----
        self.adv.next = !self.vld[8].q.val() | self.out_ready.val();
        for i in 0..self._w {
            self.a_words[i].clock.next = self.clock.val();
            self.a_words[i].reset.next = self.reset.val();
            self.a_words[i].en.next = false;
            self.a_words[i].d.next = self.in_words[i].val();
            self.b_words[i].clock.next = self.clock.val();
            self.b_words[i].reset.next = self.reset.val();
            self.b_words[i].en.next = false;
            self.b_words[i].d.next = self.in_words[i].val();
        }
        clock!(self, clock, a_meta, b_meta, a_v, b_free, rk, p1_minmag, p1_minneg, p1_sig, p1_e, p1_sneg);
        clock!(self, clock, p2_min, p2_minneg, p2_e, p2_sneg, p3_min, p3_minneg, p3_sneg);
        clock!(self, clock, p4_mh, p4_eff, p4_minneg);
        self.p2_minneg.reset.next = self.reset.val();
        self.p3_minneg.reset.next = self.reset.val();
        self.p4_mh.reset.next = self.reset.val();
        self.p4_eff.reset.next = self.reset.val();
        self.p4_minneg.reset.next = self.reset.val();
        self.p2_minneg.en.next = self.adv.val();
        self.p3_minneg.en.next = self.adv.val();
        self.p4_mh.en.next = self.adv.val();
        self.p4_eff.en.next = self.adv.val();
        self.p4_minneg.en.next = self.adv.val();
        self.a_meta.reset.next = self.reset.val();
        self.b_meta.reset.next = self.reset.val();
        self.a_v.reset.next = self.reset.val();
        self.b_free.reset.next = self.reset.val();
        self.rk.reset.next = self.reset.val();
        self.p1_minmag.reset.next = self.reset.val();
        self.p1_minneg.reset.next = self.reset.val();
        self.p1_sig.reset.next = self.reset.val();
        self.p1_e.reset.next = self.reset.val();
        self.p1_sneg.reset.next = self.reset.val();
        self.p2_min.reset.next = self.reset.val();
        self.p2_e.reset.next = self.reset.val();
        self.p2_sneg.reset.next = self.reset.val();
        self.p3_min.reset.next = self.reset.val();
        self.p3_sneg.reset.next = self.reset.val();
        self.p1_minmag.en.next = self.adv.val();
        self.p1_minneg.en.next = self.adv.val();
        self.p1_sig.en.next = self.adv.val();
        self.p1_e.en.next = self.adv.val();
        self.p1_sneg.en.next = self.adv.val();
        self.p2_min.en.next = self.adv.val();
        self.p2_e.en.next = self.adv.val();
        self.p2_sneg.en.next = self.adv.val();
        self.p3_min.en.next = self.adv.val();
        self.p3_sneg.en.next = self.adv.val();
        for l in 0..self._lanes {
            self.p1_q[l].clock.next = self.clock.val();
            self.p1_q[l].reset.next = self.reset.val();
            self.p1_q[l].en.next = self.adv.val();
            self.p2_pl[l].clock.next = self.clock.val();
            self.p2_pl[l].reset.next = self.reset.val();
            self.p2_pl[l].en.next = self.adv.val();
            self.p2_ph[l].clock.next = self.clock.val();
            self.p2_ph[l].reset.next = self.reset.val();
            self.p2_ph[l].en.next = self.adv.val();
            self.p3_sh[l].clock.next = self.clock.val();
            self.p3_sh[l].reset.next = self.reset.val();
            self.p3_sh[l].en.next = self.adv.val();
            self.p4_al[l].clock.next = self.clock.val();
            self.p4_al[l].reset.next = self.reset.val();
            self.p4_al[l].en.next = self.adv.val();
            self.p4_bl[l].clock.next = self.clock.val();
            self.p4_bl[l].reset.next = self.reset.val();
            self.p4_bl[l].en.next = self.adv.val();
            self.p4_ph[l].clock.next = self.clock.val();
            self.p4_ph[l].reset.next = self.reset.val();
            self.p4_ph[l].en.next = self.adv.val();
            self.p5_mag[l].clock.next = self.clock.val();
            self.p5_mag[l].reset.next = self.reset.val();
            self.p5_mag[l].en.next = self.adv.val();
            self.p5_neg[l].clock.next = self.clock.val();
            self.p5_neg[l].reset.next = self.reset.val();
            self.p5_neg[l].en.next = self.adv.val();
            self.p6_v[l].clock.next = self.clock.val();
            self.p6_v[l].reset.next = self.reset.val();
            self.p6_v[l].en.next = self.adv.val();
            self.p6_neg[l].clock.next = self.clock.val();
            self.p6_neg[l].reset.next = self.reset.val();
            self.p6_neg[l].en.next = self.adv.val();
            self.rnd[l].clock.next = self.clock.val();
            self.rnd[l].reset.next = self.reset.val();
            self.rnd[l].en.next = self.adv.val();
            self.rnd[l].mode.next = self.k_rne.val();
        }
        for s in 0..9 {
            self.vld[s].clock.next = self.clock.val();
            self.vld[s].reset.next = self.reset.val();
            self.vld[s].en.next = self.adv.val();
            self.lst[s].clock.next = self.clock.val();
            self.lst[s].reset.next = self.reset.val();
            self.lst[s].en.next = self.adv.val();
        }

        // ---- front: two group slots; slot a issues one beat per advance ----
        self.in_ready.next = self.b_free.q.val();
        self.push.next = self.in_valid.val() & self.b_free.q.val();
        self.issue.next = self.a_v.q.val() & self.adv.val();
        self.lastb.next = self.rk.q.val() == self.k_last.val();
        self.pop.next = self.issue.val() & self.lastb.val();
        self.a_meta.d.next = self.in_meta.val();
        self.b_meta.d.next = self.in_meta.val();
        self.a_meta.en.next = false;
        self.b_meta.en.next = false;
        self.a_v.d.next = self.a_v.q.val();
        self.a_v.en.next = true;
        self.b_free.d.next = self.b_free.q.val();
        self.b_free.en.next = true;
        self.rk.d.next = self.rk.q.val();
        self.rk.en.next = true;
        if self.issue.val() {
            if self.lastb.val() {
                self.rk.d.next = self.k_zero8.val();
            } else {
                self.rk.d.next = self.rk.q.val() + self.k_one8.val();
            }
        }
        if self.pop.val() {
            if !self.b_free.q.val() {
                // b moves to a (no push: in_ready was low)
                self.a_meta.d.next = self.b_meta.q.val();
                self.a_meta.en.next = true;
                for i in 0..self._w {
                    self.a_words[i].d.next = self.b_words[i].q.val();
                    self.a_words[i].en.next = true;
                }
                self.b_free.d.next = true;
            } else {
                self.a_v.d.next = self.push.val();
                self.a_meta.en.next = self.push.val();
                for i in 0..self._w {
                    self.a_words[i].en.next = self.push.val();
                }
            }
        } else if self.push.val() {
            if self.a_v.q.val() {
                self.b_meta.en.next = true;
                for i in 0..self._w {
                    self.b_words[i].en.next = true;
                }
                self.b_free.d.next = false;
            } else {
                self.a_meta.en.next = true;
                for i in 0..self._w {
                    self.a_words[i].en.next = true;
                }
                self.a_v.d.next = true;
            }
        }

        // ---- P1: codes of beat k, the metadata decoded ----
        for ln in self._lanes..(self._lanes + 1) {
            for c in self._c..(self._c + 1) {
                for l in 0..self._lanes {
                    self.cw.next = self.a_words[l / c].q.val() >> self.shj[l].val();
                    for k in 0..self._nb {
                        if self.rk.q.val() == self.kc[k].val() {
                            self.cw.next = self.a_words[(k * ln + l) / c].q.val() >> self.shj[k * ln + l].val();
                        }
                    }
                    self.p1_q[l].d.next = bit_cast::<16, 32>(self.cw.val() & self.k_cmask.val());
                }
            }
        }
        self.cvt_min.x.next = self.a_meta.q.val().get_bits::<16>(0);
        self.p1_minmag.d.next = self.cvt_min.mag.val();
        self.p1_minneg.d.next = self.cvt_min.neg.val();
        self.ex.next = self.a_meta.q.val().get_bits::<5>(26);
        self.p1_sig.d.next = bit_cast::<16, 10>(self.a_meta.q.val().get_bits::<10>(16));
        self.p1_e.d.next = self.k_zero8.val();
        if self.ex.val() != self.k_zero5.val() {
            self.p1_sig.d.next = bit_cast::<16, 10>(self.a_meta.q.val().get_bits::<10>(16)) | self.k_imp.val();
            self.p1_e.d.next = bit_cast::<8, 5>(self.ex.val() - self.k_one5.val());
        }
        self.p1_sneg.d.next = self.a_meta.q.val().get_bit(31);
        self.vld[0].d.next = self.issue.val();
        self.lst[0].d.next = self.lastb.val();

        // ---- P2: q * significand; units(min) signed ----
        for l in 0..self._lanes {
            self.qpart.next = self.p1_q[l].q.val() & self.k_nib.val();
            self.ppart.next = self.qpart.val() * self.p1_sig.q.val();
            self.p2_pl[l].d.next = self.ppart.val();
            self.qpart.next = (self.p1_q[l].q.val() >> self.k_four16.val()) & self.k_nib.val();
            self.ppart.next = self.qpart.val() * self.p1_sig.q.val();
            self.p2_ph[l].d.next = self.ppart.val();
        }
        self.p2_min.d.next = self.p1_minmag.q.val();
        self.p2_minneg.d.next = self.p1_minneg.q.val();
        self.p2_e.d.next = self.p1_e.q.val();
        self.p2_sneg.d.next = self.p1_sneg.q.val();
        self.vld[1].d.next = self.vld[0].q.val();
        self.lst[1].d.next = self.lst[0].q.val();

        // ---- P3: q * units(step) ----
        for l in 0..self._lanes {
            self.prodl.next = self.p2_pl[l].q.val() + (self.p2_ph[l].q.val() << self.k_four32.val());
            self.p3_sh[l].d.next = bit_cast::<SUM_W, 32>(self.prodl.val()) << self.p2_e.q.val();
        }
        self.p3_min.d.next = self.p2_min.q.val();
        self.p3_minneg.d.next = self.p2_minneg.q.val();
        self.p3_sneg.d.next = self.p2_sneg.q.val();
        self.vld[2].d.next = self.vld[1].q.val();
        self.lst[2].d.next = self.lst[1].q.val();

        // ---- P4: low halves of a = m +- p and b = p - m ----
        self.eff.next = self.p3_minneg.q.val() ^ self.p3_sneg.q.val();
        self.effm.next = self.k_zero_hw.val();
        if self.eff.val() {
            self.effm.next = self.k_ones_hw.val();
        }
        self.min_w.next = bit_cast::<SUM_W, FX>(self.p3_min.q.val());
        self.lo_m.next = self.min_w.val().get_bits::<HW>(0);
        for l in 0..self._lanes {
            self.lo_p.next = self.p3_sh[l].q.val().get_bits::<HW>(0);
            self.lo_a.next = bit_cast::<26, HW>(self.lo_m.val())
                + bit_cast::<26, HW>(self.lo_p.val() ^ self.effm.val())
                + bit_cast::<26, HW>(self.effm.val() & self.k_one_hw.val());
            self.lo_b.next = bit_cast::<26, HW>(self.lo_p.val())
                + bit_cast::<26, HW>(self.lo_m.val() ^ self.k_ones_hw.val())
                + self.k_one26.val();
            self.p4_al[l].d.next = self.lo_a.val();
            self.p4_bl[l].d.next = self.lo_b.val();
            // The high half leaves P4 already XORed with the sign mask, so P5's
            // adders need no mask: at 64 lanes (hack-deq-dot) P5 spent 0.9 ns
            // buffering one bit out to every lane.
            self.p4_ph[l].d.next =
                self.p3_sh[l].q.val().get_bits::<HW>(self.k_hw.val().index()) ^ self.effm.val();
        }
        self.p4_mh.d.next = self.min_w.val().get_bits::<HW>(self.k_hw.val().index());
        self.p4_eff.d.next = self.eff.val();
        self.p4_minneg.d.next = self.p3_minneg.q.val();
        self.vld[3].d.next = self.vld[2].q.val();
        self.lst[3].d.next = self.lst[2].q.val();

        // ---- P5: high halves; |sum| is a (a >= 0) or b, with its sign ----
        for l in 0..self._lanes {
            self.hi_p.next = self.p4_ph[l].q.val();
            self.al.next = self.p4_al[l].q.val();
            self.bl.next = self.p4_bl[l].q.val();
            self.ca.next = self.k_zero_hw.val();
            if self.al.val().get_bit(self.k_hw.val().index()) {
                self.ca.next = self.k_one_hw.val();
            }
            self.cb.next = self.k_zero_hw.val();
            if self.bl.val().get_bit(self.k_hw.val().index()) {
                self.cb.next = self.k_one_hw.val();
            }
            // hi_p is p ^ mask; b = p - m is only chosen when the signs differ
            // (mask all ones), where p = !hi_p.
            self.ha.next = self.p4_mh.q.val() + self.hi_p.val() + self.ca.val();
            self.hb.next = (self.hi_p.val() ^ self.k_ones_hw.val())
                + (self.p4_mh.q.val() ^ self.k_ones_hw.val())
                + self.cb.val();
            self.p5_mag[l].d.next = (bit_cast::<SUM_W, HW>(self.ha.val()) << self.k_hw.val())
                | bit_cast::<SUM_W, HW>(self.al.val().get_bits::<HW>(0));
            self.p5_neg[l].d.next = self.p4_minneg.q.val();
            if self.p4_eff.q.val() & self.ha.val().get_bit(self.k_hw1.val().index()) {
                self.p5_mag[l].d.next = (bit_cast::<SUM_W, HW>(self.hb.val()) << self.k_hw.val())
                    | bit_cast::<SUM_W, HW>(self.bl.val().get_bits::<HW>(0));
                self.p5_neg[l].d.next = !self.p4_minneg.q.val();
            }
        }
        self.vld[4].d.next = self.vld[3].q.val();
        self.lst[4].d.next = self.lst[3].q.val();

        // ---- P6: the magnitude clamped to 2^40 ----
        for l in 0..self._lanes {
            self.sumq.next = self.p5_mag[l].q.val();
            self.top.next = self.sumq.val().get_bits::<10>(40);
            self.p6_v[l].d.next = self.sumq.val().get_bits::<FX>(0);
            if self.top.val() != self.k_zero10.val() {
                self.p6_v[l].d.next = self.k_posmax.val();
            }
            self.p6_neg[l].d.next = self.p5_neg[l].q.val();
        }
        self.vld[5].d.next = self.vld[4].q.val();
        self.lst[5].d.next = self.lst[4].q.val();

        // ---- R0..R2: RNE onto FP16 ----
        for l in 0..self._lanes {
            self.rnd[l].v.next = self.p6_v[l].q.val();
            self.rnd[l].neg.next = self.p6_neg[l].q.val();
            self.out_y[l].next = self.rnd[l].y.val();
        }
        for s in 6..9 {
            self.vld[s].d.next = self.vld[s - 1].q.val();
            self.lst[s].d.next = self.lst[s - 1].q.val();
        }
        self.out_valid.next = self.vld[8].q.val();
        self.out_last.next = self.lst[8].q.val();
    }
}
