//! Pass 2 of the Oaken quantization engine, its token values: at a token's
//! first read, its record (thresholds, each group's min and step) turned
//! into what the coding lanes take, each aligned with the token's first
//! beat as it moves down the lanes.
//! Paper: Oaken (ISCA 2025) §4.4 (quantize as (x - min) / step), §5.2
//! "Quantization engine" (inlier and outlier quantizers). Spec:
//! docs/spec.md §2.5 (the value coded per subgroup and its offset), §5.3
//! (step FP16 to divisor fields), §2.14 (pass 2).
//!
//! - P0: the threshold keys; lo_outer, hi_outer, the three minima (and
//!   lo_inner, hi_inner when the middle group is shifted) as magnitude and
//!   sign; each group's divisor fields (m = 1024 + mantissa, or the
//!   mantissa for E = 0; right shift E - 2, or left by one for E <= 1) and
//!   step = 0. These load with the token's first beat and hold.
//! - P1: the five subgroup offsets (n = v - min with v = x - hi_T, lo_T - x
//!   or x: off = lo_T - min, -hi_T - min or -min), each one add of two
//!   complemented magnitudes and their two carries; they reach the lanes'
//!   L2.
//! - The divisor fields travel with the first beat, stage s group g at
//!   3s + g: P2's reach the lanes' L3, step = 0 the last step stage, and
//!   with it (`paper` mode) the folded groups' z.
//! - `paper` mode: both middle sides have offsets of their own, and no side
//!   is negated: v = x - T_side on both sides (spec §2.5), so off =
//!   -lo_T - min or -hi_T - min.

use super::classify::Key;
use super::encode_lane::{NORMW, OFFW};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QTokenValues {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pass 2 advances this cycle
    pub en2: Signal<In, Bit>,
    /// a token's first beat is read this cycle: its record loads P0
    pub load: Signal<In, Bit>,
    /// the token's record {z, step2, min2, step1, min1, step0, min0, thr}
    pub rec: Signal<In, Bits<192>>,
    /// order keys of lo_outer, lo_inner, hi_inner, hi_outer (with P0)
    pub key: Vec<Signal<Out, Bits<16>>>,
    /// the five offsets, FX bits each (with P1)
    pub off: Signal<Out, Bits<OFFW>>,
    /// the groups' divisor fields, 18 bits each (with P2)
    pub norm: Signal<Out, Bits<NORMW>>,
    /// step = 0 per group (with the lanes' last step stage)
    pub dz: Signal<Out, Bits<3>>,
    /// {z middle, z outer} (`paper` mode; 0 otherwise), with `dz`
    pub zc: Signal<Out, Bits<32>>,
    p0_thr: Reg<Bits<64>>,
    p0_key: Vec<Key>,
    p0_conv: Vec<Fp16ToUnits>,
    p0_mag: Vec<Reg<Bits<FX>>>,
    p0_neg: Vec<Reg<Bit>>,
    p1_off: Vec<Reg<Bits<FX>>>,
    cval: Vec<Signal<Local, Bits<FX>>>,
    cneg: Vec<Signal<Local, Bit>>,
    ccar: Vec<Signal<Local, Bits<FX>>>,
    cb: Signal<Local, Bit>,
    wantn: Signal<Local, Bit>,
    /// Divisor fields, stage s group g at 3s + g.
    pnorm: Vec<Reg<Bits<18>>>,
    pdz: Vec<Reg<Bit>>,
    /// z along the same stages as step = 0
    pz: Vec<Reg<Bits<32>>>,
    // step FP16 -> divisor fields (spec §5.3)
    sfp: Signal<Local, Bits<16>>,
    sexp: Signal<Local, Bits<16>>,
    smant: Signal<Local, Bits<16>>,
    shv: Signal<Local, Bits<16>>,
    nfield: Signal<Local, Bits<18>>,
    ntmp: Signal<Local, Bits<18>>,
    dztmp: Signal<Local, Bit>,
    stmp: Signal<Local, Bits<FX>>,
    exp_lo: Constant<Bits<16>>,
    x1f: Constant<Bits<16>>,
    mant_mask: Constant<Bits<16>>,
    imp_bit: Constant<Bits<16>>,
    two16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    f_sh18: Constant<Bits<18>>,
    left18: Constant<Bits<18>>,
    zero3: Constant<Bits<3>>,
    /// Record fields: thresholds, each group's step, the fields converted
    /// at P0 and whether P1 negates each.
    thr_off: Vec<Constant<Bits<32>>>,
    step_off: Vec<Constant<Bits<32>>>,
    cvt_off: Vec<Constant<Bits<32>>>,
    want_neg: Vec<Constant<Bit>>,
    /// Field positions in the lane buses.
    off_sh: Vec<Constant<Bits<OFFW>>>,
    norm_sh: Vec<Constant<Bits<NORMW>>>,
    dz_sh: Vec<Constant<Bits<3>>>,
    _mid_shifted: usize,
    _mid_plain: usize,
    /// Fields converted at P0: 5, or 7 with the inner thresholds.
    _p1n: usize,
    /// The last divisor-field stage (2) and the number of step = 0 stages
    /// (3 + the lanes' step stages).
    _pn: usize,
    _pd: usize,
}

impl QTokenValues {
    /// `mid_shifted`: the middle group is shifted (side-magnitude or, with
    /// `paper`, folded); `ts`: the lanes' step stages
    /// (EncodeLane::step_stages).
    pub fn new(mid_shifted: bool, paper: bool, ts: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        // lo_outer, hi_outer, 3 minima, and the inner thresholds when the
        // middle group is shifted
        let p1n = if mid_shifted { 7 } else { 5 };
        QTokenValues {
            clock: Default::default(),
            reset: Default::default(),
            en2: Default::default(),
            load: Default::default(),
            rec: Default::default(),
            key: sigs(4),
            off: Default::default(),
            norm: Default::default(),
            dz: Default::default(),
            zc: Default::default(),
            p0_thr: Reg::default(),
            p0_key: (0..4).map(|_| Key::default()).collect(),
            p0_conv: (0..p1n).map(|_| Fp16ToUnits::default()).collect(),
            p0_mag: regs(p1n),
            p0_neg: regs(p1n),
            p1_off: regs(5),
            cval: sigs(p1n),
            cneg: sigs(p1n),
            ccar: sigs(p1n),
            cb: Default::default(),
            wantn: Default::default(),
            pnorm: regs(9),
            pdz: regs(3 * (3 + ts)),
            pz: regs(3 + ts),
            sfp: Default::default(),
            sexp: Default::default(),
            smant: Default::default(),
            shv: Default::default(),
            nfield: Default::default(),
            ntmp: Default::default(),
            dztmp: Default::default(),
            stmp: Default::default(),
            exp_lo: c(10),
            x1f: c(0x1F),
            mant_mask: c(0x3FF),
            imp_bit: c(0x400),
            two16: c(2),
            one16: c(1),
            zero16: c(0),
            f_sh18: c(11),
            left18: c(1 << 17),
            zero3: c(0),
            thr_off: consts((0..4).map(|i| 16 * i)),
            step_off: consts((0..3).map(|g| 80 + 32 * g)),
            cvt_off: consts([0u64, 48, 64, 96, 128, 16, 32][..p1n].iter().copied()),
            // lo_outer and lo_inner enter negated only when folded
            want_neg: [paper, true, true, true, true, paper, true][..p1n].iter().map(|&b| Constant::new(b)).collect(),
            off_sh: consts((0..5).map(|i| (FX * i) as u64)),
            norm_sh: consts((0..3).map(|i| 18 * i)),
            dz_sh: consts(0..3),
            _mid_shifted: mid_shifted as usize,
            _mid_plain: !mid_shifted as usize,
            _p1n: p1n,
            _pn: 2,
            _pd: 3 + ts,
        }
    }
}

impl Logic for QTokenValues {
    #[hdl_gen]
    fn update(&mut self) {
        self.p0_thr.clock.next = self.clock.val();
        self.p0_thr.reset.next = self.reset.val();
        // P0: the thresholds, loaded with the token's first beat
        self.p0_thr.en.next = self.load.val();
        self.p0_thr.d.next = self.rec.val().get_bits::<64>(0);
        for t in 0..4 {
            self.p0_key[t].x.next = self.p0_thr.q.val().get_bits::<16>(self.thr_off[t].val().index());
            self.key[t].next = self.p0_key[t].key.val();
        }
        // P0: thresholds and minima as magnitude and sign
        for i in 0..self._p1n {
            self.p0_conv[i].x.next = self.rec.val().get_bits::<16>(self.cvt_off[i].val().index());
            self.p0_mag[i].clock.next = self.clock.val();
            self.p0_mag[i].reset.next = self.reset.val();
            self.p0_mag[i].en.next = self.load.val();
            self.p0_mag[i].d.next = self.p0_conv[i].mag.val();
            self.p0_neg[i].clock.next = self.clock.val();
            self.p0_neg[i].reset.next = self.reset.val();
            self.p0_neg[i].en.next = self.load.val();
            self.p0_neg[i].d.next = self.p0_conv[i].neg.val();
        }
        for i in 0..(3 * (self._pn + 1)) {
            self.pnorm[i].clock.next = self.clock.val();
            self.pnorm[i].reset.next = self.reset.val();
            self.pnorm[i].en.next = self.en2.val();
        }
        for i in 0..(3 * self._pd) {
            self.pdz[i].clock.next = self.clock.val();
            self.pdz[i].reset.next = self.reset.val();
            self.pdz[i].en.next = self.en2.val();
        }
        // P0: each group's divisor fields and step = 0 (spec §5.3)
        for g in 0..3 {
            self.sfp.next = self.rec.val().get_bits::<16>(self.step_off[g].val().index());
            self.sexp.next = (self.sfp.val() >> self.exp_lo.val()) & self.x1f.val();
            self.smant.next = self.sfp.val() & self.mant_mask.val();
            if self.sexp.val() != self.zero16.val() {
                self.smant.next = self.smant.val() | self.imp_bit.val();
            }
            self.shv.next = self.sexp.val() - self.two16.val();
            self.nfield.next = bit_cast::<18, 16>(self.smant.val());
            if self.sexp.val() <= self.one16.val() {
                self.nfield.next = self.nfield.val() | self.left18.val();
            } else {
                self.nfield.next = self.nfield.val() | (bit_cast::<18, 16>(self.shv.val()) << self.f_sh18.val());
            }
            self.pnorm[g].en.next = self.load.val();
            self.pnorm[g].d.next = self.nfield.val();
            self.pdz[g].en.next = self.load.val();
            self.pdz[g].d.next = self.sfp.val() == self.zero16.val();
        }
        // P1 .. : the fields travel with the token's first beat (P2's reach
        // the lanes' L3, P3 .. their step stages, m only)
        for i in 3..(3 * (self._pn + 1)) {
            self.pnorm[i].d.next = self.pnorm[i - 3].q.val();
        }
        for i in 3..(3 * self._pd) {
            self.pdz[i].d.next = self.pdz[i - 3].q.val();
        }
        for i in 0..self._pd {
            self.pz[i].clock.next = self.clock.val();
            self.pz[i].reset.next = self.reset.val();
            self.pz[i].en.next = self.en2.val();
        }
        self.pz[0].en.next = self.load.val();
        self.pz[0].d.next = self.rec.val().get_bits::<32>(160);
        for i in 1..self._pd {
            self.pz[i].d.next = self.pz[i - 1].q.val();
        }
        // P1: offsets per subgroup (spec §2.5): n = v - min with v = x - hi_T,
        // lo_T - x or x, so off = lo_T - min, -hi_T - min or -min; each is
        // one add of two complemented magnitudes and their two carries
        for i in 0..5 {
            self.p1_off[i].clock.next = self.clock.val();
            self.p1_off[i].reset.next = self.reset.val();
            self.p1_off[i].en.next = self.en2.val();
        }
        for i in 0..self._p1n {
            // v_i with the sign it enters with: +lo, -hi, -min
            self.wantn.next = self.want_neg[i].val();
            self.cneg[i].next = self.p0_neg[i].q.val() ^ self.wantn.val();
            self.cval[i].next = self.p0_mag[i].q.val();
            if self.cneg[i].val() {
                self.cval[i].next = !self.p0_mag[i].q.val();
            }
            self.cb.next = self.cneg[i].val();
            self.ccar[i].next = bit_cast::<FX, 1>(self.cb.val().into());
        }
        // (slots: 0 lo_o, 1 hi_o, 2 min_o, 3 min_m, 4 min_i, 5 lo_i, 6 hi_i)
        self.p1_off[0].d.next = self.cval[0].val() + self.cval[2].val()
            + self.ccar[0].val() + self.ccar[2].val();
        self.p1_off[4].d.next = self.cval[1].val() + self.cval[2].val()
            + self.ccar[1].val() + self.ccar[2].val();
        self.p1_off[2].d.next = self.cval[4].val() + self.ccar[4].val();
        for _p in 0..self._mid_plain {
            self.p1_off[1].d.next = self.cval[3].val() + self.ccar[3].val();
            self.p1_off[3].d.next = self.cval[3].val() + self.ccar[3].val();
        }
        for z in self._p1n..(self._p1n + 1) {
            for _s in 0..self._mid_shifted {
                self.p1_off[1].d.next = self.cval[z - 2].val() + self.cval[3].val()
                    + self.ccar[z - 2].val() + self.ccar[3].val();
                self.p1_off[3].d.next = self.cval[z - 1].val() + self.cval[3].val()
                    + self.ccar[z - 1].val() + self.ccar[3].val();
            }
        }
        // the values reach the lanes as packed buses: offsets from P1,
        // fields from P2, step = 0 from the last stage
        self.off.next = bit_cast::<OFFW, 1>(false.into());
        for i in 0..5 {
            self.stmp.next = self.p1_off[i].q.val();
            self.off.next = self.off.val() | (bit_cast::<OFFW, FX>(self.stmp.val()) << self.off_sh[i].val());
        }
        self.norm.next = bit_cast::<NORMW, 1>(false.into());
        for g in 0..3 {
            self.ntmp.next = self.pnorm[6 + g].q.val();
            self.norm.next = self.norm.val() | (bit_cast::<NORMW, 18>(self.ntmp.val()) << self.norm_sh[g].val());
        }
        self.dz.next = self.zero3.val();
        for z in self._pd..(self._pd + 1) {
            self.zc.next = self.pz[z - 1].q.val();
            for g in 0..3 {
                self.dztmp.next = self.pdz[3 * z - 3 + g].q.val();
                self.dz.next = self.dz.val() | (bit_cast::<3, 1>(self.dztmp.val().into()) << self.dz_sh[g].val());
            }
        }
    }
}
