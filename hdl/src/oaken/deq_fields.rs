//! The dequantizer's token fields, K0 to K2: the record's metadata word
//! and threshold set held in K0 with its beat, their FP16 fields
//! converted at K1 (steps as magnitude and sign; mins and thresholds as
//! two's complement fixed point, the two mins also negated), and the
//! record's six bases and three steps formed at K2 from its first beat,
//! which every lane (deq_lane) then selects from.
//! Paper: Oaken (ISCA 2025) §5.2 (inlier and outlier dequantizers: the
//! scale and offset of each group). Spec: docs/spec.md §4.4 (decoding;
//! sanitised metadata), §4.5 (K0..K2), §2.9 (the metadata word).
//!
//! Token fields: 0 out.min, 1 out.step, 2 mid.min, 3 mid.step, 4 in.min,
//! 5 in.step (metadata), 6 lo_outer, 7 lo_inner, 8 hi_inner, 9 hi_outer
//! (threshold set). Bases and their selections: 0 outer upper, 1 outer
//! lower, 2 middle plain, 3 middle upper, 4 middle lower, 5 inner.
//!
//! `paper` mode (folded outer and middle groups, spec §4.4): the lower
//! bases are `lo_T + min` with the step's own sign, like the upper ones,
//! and the record's z words (deq_zero) ride K0..K2 beside the fields.

use super::classify::Sanitize;
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DeqFields {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the aligner takes a dense beat into K0
    pub fire: Signal<In, Bit>,
    /// the pipeline after K0 advances
    pub adv: Signal<In, Bit>,
    /// K1 holds a record's first beat and the pipeline advances: the
    /// record's bases and steps load
    pub rec_en: Signal<In, Bit>,
    /// the dense FIFO head's metadata word, byte i
    pub meta: Vec<Signal<In, Bits<8>>>,
    /// the dense FIFO head's threshold set {hi_outer, hi_inner, lo_inner, lo_outer}
    pub thr: Signal<In, Bits<64>>,
    /// the dense FIFO head's layer is out of range
    pub oob: Signal<In, Bit>,
    /// K2: the record's six bases, each ~B where its `sig_q` is set
    pub bq_q: Vec<Signal<Out, Bits<FX>>>,
    /// K2: the record's three step magnitudes (outer, middle, inner)
    pub stp_q: Vec<Signal<Out, Bits<FX>>>,
    /// K2: per selection, x' = B - q |step|
    pub sig_q: Vec<Signal<Out, Bit>>,
    /// K1: the beat's layer was out of range
    pub k1_oob_q: Signal<Out, Bit>,
    /// K2: the record's layer was out of range
    pub tok_oob_q: Signal<Out, Bit>,
    /// paper mode only: the dense FIFO head's z words (deq_zero: outer at
    /// bits 15..0, middle at 31..16)
    pub zin: Vec<Signal<In, Bits<FX>>>,
    /// paper mode only: K1 holds a record's first beat
    pub k1_first: Vec<Signal<In, Bit>>,
    /// paper mode only: the z words for the beat in K1 (its record's)
    pub zc: Vec<Signal<Out, Bits<FX>>>,

    k0_oob: Reg<Bit>,
    k0_meta: Vec<Reg<Bits<8>>>,
    k0_thr: Reg<Bits<64>>,
    san: Vec<Sanitize>,
    cvt: Vec<Fp16ToUnits>,
    fld: Vec<Signal<Local, Bits<16>>>,
    mlo: Signal<Local, Bits<8>>,
    mhi: Signal<Local, Bits<8>>,
    eight16: Constant<Bits<16>>,
    // the three steps as magnitude and sign; the mins and thresholds as
    // two's complement values, the two mins also negated
    k1_mag: Vec<Reg<Bits<FX>>>,
    k1_neg: Vec<Reg<Bit>>,
    k1_v: Vec<Reg<Bits<FX>>>,
    k1_nv: Vec<Reg<Bits<FX>>>,
    sf: Vec<Signal<Local, Bits<16>>>,
    sfi: Signal<Local, Bits<16>>,
    ex5: Signal<Local, Bits<5>>,
    sgp: Signal<Local, Bits<12>>,
    sgn: Signal<Local, Bits<12>>,
    pvv: Vec<Signal<Local, Bits<FX>>>,
    nvv: Vec<Signal<Local, Bits<FX>>>,
    shv: Vec<Signal<Local, Bits<5>>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    c1024_12: Constant<Bits<12>>,
    zero12: Constant<Bits<12>>,
    sext12: Constant<Bits<FX>>,
    k1_oob: Reg<Bit>,
    bsum: Signal<Local, Bits<FX>>,
    bq: Vec<Reg<Bits<FX>>>,
    stp: Vec<Reg<Bits<FX>>>,
    sig: Vec<Reg<Bit>>,
    tok_oob: Reg<Bit>,
    thr_off: Vec<Constant<Bits<32>>>,
    // paper mode: the z words at K0, K1 and the record's
    k0_z: Vec<Reg<Bits<FX>>>,
    k1_z: Vec<Reg<Bits<FX>>>,
    rec_z: Vec<Reg<Bits<FX>>>,
    _paper: usize,
}

impl DeqFields {
    /// The token-field stages (the metadata word and the threshold set have
    /// fixed layouts); `paper`: the outer and middle groups are folded.
    pub fn new(paper: bool) -> Self {
        let zn = paper as usize;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let ones = |b: usize| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        DeqFields {
            clock: Default::default(),
            reset: Default::default(),
            fire: Default::default(),
            adv: Default::default(),
            rec_en: Default::default(),
            meta: sigs(12),
            thr: Default::default(),
            oob: Default::default(),
            bq_q: sigs(6),
            stp_q: sigs(3),
            sig_q: sigs(6),
            k1_oob_q: Default::default(),
            tok_oob_q: Default::default(),
            k0_oob: Reg::default(),
            k0_meta: regs(12),
            k0_thr: Reg::default(),
            san: (0..6).map(|_| Sanitize::default()).collect(),
            cvt: (0..3).map(|_| Fp16ToUnits::default()).collect(),
            fld: sigs(10),
            mlo: Default::default(),
            mhi: Default::default(),
            eight16: c(8),
            k1_mag: regs(3),
            k1_neg: regs(3),
            k1_v: regs(7),
            k1_nv: regs(2),
            sf: sigs(7),
            sfi: Default::default(),
            ex5: Default::default(),
            sgp: Default::default(),
            sgn: Default::default(),
            pvv: sigs(7),
            nvv: sigs(7),
            shv: sigs(7),
            zero5: c(0),
            one5: c(1),
            c1024_12: c(1024),
            zero12: c(0),
            sext12: c(ones(FX) - ones(12)),
            k1_oob: Reg::default(),
            bsum: Default::default(),
            bq: regs(6),
            stp: regs(3),
            sig: regs(6),
            tok_oob: Reg::default(),
            thr_off: (0..4).map(|i| c(16 * i as u64)).collect(),
            zin: sigs(zn),
            k1_first: sigs(paper as usize),
            zc: sigs(zn),
            k0_z: regs(zn),
            k1_z: regs(zn),
            rec_z: regs(zn),
            _paper: paper as usize,
        }
    }
}

impl Default for DeqFields {
    fn default() -> Self {
        Self::new(false)
    }
}

impl Logic for DeqFields {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, k0_oob, k0_thr, k1_oob, tok_oob);
        self.k0_oob.reset.next = self.reset.val();
        self.k0_thr.reset.next = self.reset.val();
        self.k1_oob.reset.next = self.reset.val();
        self.tok_oob.reset.next = self.reset.val();

        // ---------------- K0: the token fields of a record's beat ----------------
        self.k0_oob.en.next = self.fire.val();
        self.k0_oob.d.next = self.oob.val();
        self.k0_thr.en.next = self.fire.val();
        self.k0_thr.d.next = self.thr.val();
        for i in 0..12 {
            self.k0_meta[i].clock.next = self.clock.val();
            self.k0_meta[i].reset.next = self.reset.val();
            self.k0_meta[i].en.next = self.fire.val();
            self.k0_meta[i].d.next = self.meta[i].val();
        }

        // ---------------- K1: token fields converted ----------------
        // metadata min/step fields are sanitised (a corrupted word still
        // decodes to defined values, spec §4.4); table thresholds are legal
        for i in 0..6 {
            self.mlo.next = self.k0_meta[2 * i].q.val();
            self.mhi.next = self.k0_meta[2 * i + 1].q.val();
            self.san[i].x.next =
                (bit_cast::<16, 8>(self.mhi.val()) << self.eight16.val()) | bit_cast::<16, 8>(self.mlo.val());
            self.fld[i].next = self.san[i].y.val();
        }
        for t in 0..4 {
            self.fld[6 + t].next = self.k0_thr.q.val().get_bits::<16>(self.thr_off[t].val().index());
        }
        // steps: magnitude and sign (K3 adds q |step|)
        for g in 0..3 {
            self.cvt[g].x.next = self.fld[2 * g + 1].val();
            self.k1_mag[g].clock.next = self.clock.val();
            self.k1_mag[g].reset.next = self.reset.val();
            self.k1_mag[g].en.next = self.adv.val();
            self.k1_mag[g].d.next = self.cvt[g].mag.val();
            self.k1_neg[g].clock.next = self.clock.val();
            self.k1_neg[g].reset.next = self.reset.val();
            self.k1_neg[g].en.next = self.adv.val();
            self.k1_neg[g].d.next = self.cvt[g].neg.val();
        }
        // mins and thresholds as two's complement values: the significand
        // (at most 11 bits) is negated before the shift, which leaves K2's
        // bases plain two-operand adds. sf: out.min, mid.min, in.min,
        // lo_outer, lo_inner, hi_inner, hi_outer
        for g in 0..3 {
            self.sf[g].next = self.fld[2 * g].val();
        }
        for t in 0..4 {
            self.sf[3 + t].next = self.fld[6 + t].val();
        }
        for i in 0..7 {
            self.sfi.next = self.sf[i].val();
            self.ex5.next = self.sfi.val().get_bits::<5>(10);
            self.sgp.next = bit_cast::<12, 10>(self.sfi.val().get_bits::<10>(0));
            self.shv[i].next = self.zero5.val();
            if self.ex5.val() != self.zero5.val() {
                self.sgp.next = self.sgp.val() | self.c1024_12.val();
                self.shv[i].next = self.ex5.val() - self.one5.val();
            }
            self.sgn.next = self.zero12.val() - self.sgp.val();
            self.pvv[i].next = bit_cast::<FX, 12>(self.sgp.val());
            self.nvv[i].next = bit_cast::<FX, 12>(self.sgn.val());
            if self.sgn.val().get_bit(11) {
                self.nvv[i].next = self.nvv[i].val() | self.sext12.val();
            }
            self.k1_v[i].clock.next = self.clock.val();
            self.k1_v[i].reset.next = self.reset.val();
            self.k1_v[i].en.next = self.adv.val();
            self.k1_v[i].d.next = self.pvv[i].val() << self.shv[i].val();
            if self.sfi.val().get_bit(15) {
                self.k1_v[i].d.next = self.nvv[i].val() << self.shv[i].val();
            }
        }
        for i in 0..2 {
            self.k1_nv[i].clock.next = self.clock.val();
            self.k1_nv[i].reset.next = self.reset.val();
            self.k1_nv[i].en.next = self.adv.val();
            self.k1_nv[i].d.next = self.nvv[i].val() << self.shv[i].val();
            if self.sf[i].val().get_bit(15) {
                self.k1_nv[i].d.next = self.pvv[i].val() << self.shv[i].val();
            }
        }
        self.k1_oob.en.next = self.adv.val();
        self.k1_oob.d.next = self.k0_oob.q.val();

        // ---------------- K2: the record's bases and steps; lane selection and code ----------------
        // tok: 0 out.min, 1 out.step, 2 mid.min, 3 mid.step, 4 in.min,
        // 5 in.step, 6 lo_outer, 7 lo_inner, 8 hi_inner, 9 hi_outer.
        // A base is one or two of K1's two's complement values (the mins
        // also negated), so at most one carry-propagate add.
        // With the step's sign and the selection's direction, sig says x' =
        // B - q |step|, computed as ~(~B + q |step|): bq holds ~B then.
        for k in 0..6 {
            self.bq[k].clock.next = self.clock.val();
            self.bq[k].reset.next = self.reset.val();
            self.bq[k].en.next = self.rec_en.val();
            self.sig[k].clock.next = self.clock.val();
            self.sig[k].reset.next = self.reset.val();
            self.sig[k].en.next = self.rec_en.val();
        }
        for g in 0..3 {
            self.stp[g].clock.next = self.clock.val();
            self.stp[g].reset.next = self.reset.val();
            self.stp[g].en.next = self.rec_en.val();
            self.stp[g].d.next = self.k1_mag[g].q.val();
        }
        // 0: hi_outer + out.min, step +out.step
        self.bsum.next = self.k1_v[6].q.val() + self.k1_v[0].q.val();
        self.sig[0].d.next = self.k1_neg[0].q.val();
        self.bq[0].d.next = self.bsum.val();
        if self.k1_neg[0].q.val() {
            self.bq[0].d.next = !self.bsum.val();
        }
        // 1: lo_outer - out.min, step -out.step
        self.bsum.next = self.k1_v[3].q.val() + self.k1_nv[0].q.val();
        self.sig[1].d.next = !self.k1_neg[0].q.val();
        self.bq[1].d.next = self.bsum.val();
        if !self.k1_neg[0].q.val() {
            self.bq[1].d.next = !self.bsum.val();
        }
        // 2: mid.min, step +mid.step
        self.sig[2].d.next = self.k1_neg[1].q.val();
        self.bq[2].d.next = self.k1_v[1].q.val();
        if self.k1_neg[1].q.val() {
            self.bq[2].d.next = !self.k1_v[1].q.val();
        }
        // 3: hi_inner + mid.min, step +mid.step
        self.bsum.next = self.k1_v[5].q.val() + self.k1_v[1].q.val();
        self.sig[3].d.next = self.k1_neg[1].q.val();
        self.bq[3].d.next = self.bsum.val();
        if self.k1_neg[1].q.val() {
            self.bq[3].d.next = !self.bsum.val();
        }
        // 4: lo_inner - mid.min, step -mid.step
        self.bsum.next = self.k1_v[4].q.val() + self.k1_nv[1].q.val();
        self.sig[4].d.next = !self.k1_neg[1].q.val();
        self.bq[4].d.next = self.bsum.val();
        if !self.k1_neg[1].q.val() {
            self.bq[4].d.next = !self.bsum.val();
        }
        // 5: in.min, step +in.step
        self.sig[5].d.next = self.k1_neg[2].q.val();
        self.bq[5].d.next = self.k1_v[2].q.val();
        if self.k1_neg[2].q.val() {
            self.bq[5].d.next = !self.k1_v[2].q.val();
        }
        // paper: folded lower sides, x' = lo_T + min + q step, the step's
        // own sign as for the upper sides
        for _p in 0..self._paper {
            // 1: lo_outer + out.min, step +out.step
            self.bsum.next = self.k1_v[3].q.val() + self.k1_v[0].q.val();
            self.sig[1].d.next = self.k1_neg[0].q.val();
            self.bq[1].d.next = self.bsum.val();
            if self.k1_neg[0].q.val() {
                self.bq[1].d.next = !self.bsum.val();
            }
            // 4: lo_inner + mid.min, step +mid.step
            self.bsum.next = self.k1_v[4].q.val() + self.k1_v[1].q.val();
            self.sig[4].d.next = self.k1_neg[1].q.val();
            self.bq[4].d.next = self.bsum.val();
            if self.k1_neg[1].q.val() {
                self.bq[4].d.next = !self.bsum.val();
            }
        }
        // paper: the z words follow the beat (K0 at fire, K1 with the
        // pipeline) and load for the record with its bases; a record's
        // first beat in K1 reads K1's own
        for g in 0..self._paper {
            self.k0_z[g].clock.next = self.clock.val();
            self.k0_z[g].reset.next = self.reset.val();
            self.k0_z[g].en.next = self.fire.val();
            self.k0_z[g].d.next = self.zin[g].val();
            self.k1_z[g].clock.next = self.clock.val();
            self.k1_z[g].reset.next = self.reset.val();
            self.k1_z[g].en.next = self.adv.val();
            self.k1_z[g].d.next = self.k0_z[g].q.val();
            self.rec_z[g].clock.next = self.clock.val();
            self.rec_z[g].reset.next = self.reset.val();
            self.rec_z[g].en.next = self.rec_en.val();
            self.rec_z[g].d.next = self.k1_z[g].q.val();
            self.zc[g].next = self.rec_z[g].q.val();
            if self.k1_first[g].val() {
                self.zc[g].next = self.k1_z[g].q.val();
            }
        }
        self.tok_oob.en.next = self.rec_en.val();
        self.tok_oob.d.next = self.k1_oob.q.val();

        for k in 0..6 {
            self.bq_q[k].next = self.bq[k].q.val();
            self.sig_q[k].next = self.sig[k].q.val();
        }
        for g in 0..3 {
            self.stp_q[g].next = self.stp[g].q.val();
        }
        self.k1_oob_q.next = self.k1_oob.q.val();
        self.tok_oob_q.next = self.tok_oob.q.val();
    }
}
