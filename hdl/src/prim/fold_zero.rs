//! Folded zero index: `z`, the first index of a folded group's grid
//! `min + q * step` at or above zero, from the FP16 `min` and `step`:
//! `z = 0` when `min >= 0`, `2^M` when `step = 0`, else
//! `min(ceil(units(|min|) / units(step)), 2^M)`. The Oaken engines' paper
//! mode needs it once per token (quantizer) or record (dequantizer)
//! instead of a sign per element.
//!
//! Paper: Oaken (ISCA 2025) §4.4 (group shift).
//! Spec: docs/spec.md §2.7, §5.8.
//!
//! A ceiling divider by restoring division, one quotient bit per stage,
//! weights 2^M down to 2^0, reusing `DivStep`; the ceiling is the floor
//! plus one when the remainder is not zero.

use super::div_round::DivStep;
use super::fp16::{Fp16ToUnits, FX};
use super::reg::Reg;
use rust_hdl::prelude::*;

/// Datapath width: every FP16 magnitude is below 2^40 units (spec §2.2.3),
/// so the remainder (at most A) and the largest shifted divisor, S * 2^9 at
/// M = 9, both fit 49 bits.
pub const FOLD_ZERO_WIDTH: usize = 49;

const _: () = assert!((65504u64 << 24) << 9 < 1 << FOLD_ZERO_WIDTH && FX <= FOLD_ZERO_WIDTH);

/// `z` of `(min, step)` as a stand-alone pipeline: patterns in, `z` M + 2
/// advancing cycles later (a set-up stage, then M + 1 step stages).
#[derive(LogicBlock)]
pub struct FoldZero<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// group minimum, FP16 pattern (finite)
    pub min: Signal<In, Bits<16>>,
    /// group step, FP16 pattern (finite, sign bit 0)
    pub step: Signal<In, Bits<16>>,
    /// operands valid
    pub in_valid: Signal<In, Bit>,
    /// first grid index at or above zero: 0 when min >= 0, else min(ceil(|min|/step), 2^M) (2^M when step = 0)
    pub z: Signal<Out, Bits<16>>,
    /// z valid
    pub out_valid: Signal<Out, Bit>,
    cvt_min: Fp16ToUnits,
    cvt_step: Fp16ToUnits,
    /// Step j takes weight 2^(M-j).
    steps: Vec<DivStep<W>>,
    // remainder and S after the set-up stage (0) and after step j < M (j+1)
    rrem: Vec<Reg<Bits<W>>>,
    rs: Vec<Reg<Bits<W>>>,
    // quotient so far, min >= 0 and valid after set-up (0) and after step j (j+1)
    rq: Vec<Reg<Bits<16>>>,
    rpos: Vec<Reg<Bit>>,
    rv: Vec<Reg<Bit>>,
    /// The last remainder is needed only as "not zero" (the ceiling), so
    /// that is all the last stage keeps.
    rnz: Reg<Bit>,
    /// Shift of S for step j: M - j.
    sh: Vec<Constant<Bits<W>>>,
    /// Units of a finite FP16 value are below 2^40, and a remainder never
    /// exceeds A: masking A, S and every remainder to 40 bits lets
    /// synthesis drop their top register bits and narrow each step's
    /// subtraction (only its compare needs S * 2^j's top bits).
    units: Constant<Bits<W>>,
    top: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero: Constant<Bits<W>>,
    zero15: Constant<Bits<15>>,
    zero16: Constant<Bits<16>>,
    _m: usize,
}

impl<const W: usize> FoldZero<W> {
    /// `m`: the folded group's code bits, M.
    pub fn new(m: usize) -> Self {
        assert!((2..=9).contains(&m));
        FoldZero {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            min: Default::default(),
            step: Default::default(),
            in_valid: Default::default(),
            z: Default::default(),
            out_valid: Default::default(),
            cvt_min: Fp16ToUnits::default(),
            cvt_step: Fp16ToUnits::default(),
            steps: (0..=m).map(|_| DivStep::default()).collect(),
            rrem: (0..=m).map(|_| Reg::default()).collect(),
            rs: (0..=m).map(|_| Reg::default()).collect(),
            rq: (0..m + 2).map(|_| Reg::default()).collect(),
            rpos: (0..m + 2).map(|_| Reg::default()).collect(),
            rv: (0..m + 2).map(|_| Reg::default()).collect(),
            rnz: Reg::default(),
            sh: (0..=m).map(|j| Constant::new(((m - j) as u64).into())).collect(),
            units: Constant::new(((1u64 << 40) - 1).into()),
            top: Constant::new((1u64 << m).into()),
            one16: Constant::new(1u64.into()),
            zero: Constant::new(0u64.into()),
            zero15: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            _m: m,
        }
    }

    /// Advancing cycles from the operands to `z`.
    pub fn latency(m: usize) -> usize {
        m + 2
    }
}

impl<const W: usize> Logic for FoldZero<W> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..(self._m + 1) {
            self.rrem[i].clock.next = self.clock.val();
            self.rrem[i].reset.next = self.reset.val();
            self.rrem[i].en.next = self.en.val();
            self.rs[i].clock.next = self.clock.val();
            self.rs[i].reset.next = self.reset.val();
            self.rs[i].en.next = self.en.val();
        }
        for i in 0..(self._m + 2) {
            self.rq[i].clock.next = self.clock.val();
            self.rq[i].reset.next = self.reset.val();
            self.rq[i].en.next = self.en.val();
            self.rpos[i].clock.next = self.clock.val();
            self.rpos[i].reset.next = self.reset.val();
            self.rpos[i].en.next = self.en.val();
            self.rv[i].clock.next = self.clock.val();
            self.rv[i].reset.next = self.reset.val();
            self.rv[i].en.next = self.en.val();
        }
        self.rnz.clock.next = self.clock.val();
        self.rnz.reset.next = self.reset.val();
        self.rnz.en.next = self.en.val();
        // set-up stage. -0 counts as min >= 0: its grid starts at zero.
        // A is |min| whatever the sign: when min >= 0 the output ignores it.
        self.cvt_min.x.next = self.min.val();
        self.cvt_step.x.next = self.step.val();
        self.rrem[0].d.next = bit_cast::<W, FX>(self.cvt_min.mag.val()) & self.units.val();
        self.rs[0].d.next = bit_cast::<W, FX>(self.cvt_step.mag.val()) & self.units.val();
        self.rq[0].d.next = self.zero16.val();
        self.rpos[0].d.next = !self.cvt_min.neg.val() | (self.min.val().get_bits::<15>(0) == self.zero15.val());
        self.rv[0].d.next = self.in_valid.val();
        // Step j compares against S * 2^(M-j). With A < 2^M S the first
        // step does not take and the other M divide exactly (floor and
        // remainder). With A >= 2^M S it takes, and the quotient's bit M
        // alone decides z = 2^M (the true ceiling is at least 2^M then),
        // which also covers A >= 2^(M+1) S, where the later bits are not a
        // quotient at all. S = 0 needs no flag: every step takes (rem >= 0),
        // so bit M is set and z is 2^M.
        for j in 0..(self._m + 1) {
            self.steps[j].rem.next = self.rrem[j].q.val();
            self.steps[j].dsh.next = self.rs[j].q.val() << self.sh[j].val();
            self.rq[j + 1].d.next = self.rq[j].q.val() << self.one16.val();
            if self.steps[j].take.val() {
                self.rq[j + 1].d.next = (self.rq[j].q.val() << self.one16.val()) | self.one16.val();
            }
            self.rpos[j + 1].d.next = self.rpos[j].q.val();
            self.rv[j + 1].d.next = self.rv[j].q.val();
        }
        for j in 0..self._m {
            self.rrem[j + 1].d.next = self.steps[j].rem_out.val() & self.units.val();
            self.rs[j + 1].d.next = self.rs[j].q.val();
        }
        for j in self._m..(self._m + 1) {
            self.rnz.d.next = self.steps[j].rem_out.val() != self.zero.val();
        }
        // output, from the last stage's registers
        for l in (self._m + 1)..(self._m + 2) {
            if self.rpos[l].q.val() {
                self.z.next = self.zero16.val();
            } else if self.rq[l].q.val() >= self.top.val() {
                self.z.next = self.top.val();
            } else if self.rnz.q.val() {
                self.z.next = self.rq[l].q.val() + self.one16.val();
            } else {
                self.z.next = self.rq[l].q.val();
            }
            self.out_valid.next = self.rv[l].q.val();
        }
    }
}
