//! The dequantizer's folded zero index for `paper` mode (spec §4.4,
//! §4.5): per dense beat, from its metadata word's outer or middle group,
//! while the beat waits in the engine's front pipe (dequantizer.rs).
//! Paper: Oaken (ISCA 2025) §4.4 (group shift), §5.2 (dequantization
//! engine). Spec: docs/spec.md §2.7, §4.4, §4.5, §5.8.
//!
//! `DeqZero` is `FoldZero` (spec §5.8) extended to any sanitised metadata
//! word, since the engine decodes every word (§4.4): with a negative step
//! the grid falls, so an element is on the upper side when `q <=
//! floor(|min| / |step|)` (min >= 0) or never (min < 0). It gives `z` and
//! `inv` such that the side is upper exactly when `(q >= z) ^ inv`.

use super::classify::Sanitize;
use crate::prim::div_round::DivStep;
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use crate::prim::vecs::regs;
use rust_hdl::prelude::*;

/// A z word: `z` in bits 14..0 and `inv` in bit 15 of the group's half
/// (outer: bits 15..0, middle: bits 31..16) of an `FX`-bit word, which
/// the lanes read on their selection-2 base port (unused in paper mode).
pub const Z_INV: u64 = 1 << 15;

/// The side rule's `(z, inv)` of one folded group from its raw metadata
/// fields, `M + 2` cycles of `en` later: a set-up stage (sanitise, units,
/// signs), then `M + 1` restoring steps as in `FoldZero`.
///
/// - step >= 0: `inv = 0`, `z` = 0 when min >= 0, else `min(ceil(A / S), 2^M)`
///   (`2^M` when S = 0);
/// - step < 0, min >= 0: `inv = 1`, `z = min(floor(A / S) + 1, 2^M)`;
/// - step < 0, min < 0: `inv = 0`, `z = 2^M` (no code is upper).
#[derive(LogicBlock)]
pub struct DeqZero<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// group minimum, raw FP16 pattern (sanitised here): low byte
    pub min_lo: Signal<In, Bits<8>>,
    /// group minimum: high byte
    pub min_hi: Signal<In, Bits<8>>,
    /// group step, raw FP16 pattern (sanitised here): low byte
    pub step_lo: Signal<In, Bits<8>>,
    /// group step: high byte
    pub step_hi: Signal<In, Bits<8>>,
    /// the z word `{inv, z[14:0]} << shift` (z: first code of the side
    /// read as `(q >= z) ^ inv`; inv: a falling grid from min >= 0)
    pub zw: Signal<Out, Bits<FX>>,
    // min, step (named as deq_fields' cells: their flag is unused)
    san: Vec<Sanitize>,
    cvt_min: Fp16ToUnits,
    cvt_step: Fp16ToUnits,
    steps: Vec<DivStep<W>>,
    rrem: Vec<Reg<Bits<W>>>,
    rs: Vec<Reg<Bits<W>>>,
    rq: Vec<Reg<Bits<16>>>,
    rpos: Vec<Reg<Bit>>,
    rsn: Vec<Reg<Bit>>,
    rnz: Reg<Bit>,
    min: Signal<Local, Bits<16>>,
    step: Signal<Local, Bits<16>>,
    z: Signal<Local, Bits<16>>,
    inv16: Constant<Bits<16>>,
    eight16: Constant<Bits<16>>,
    shift: Constant<Bits<FX>>,
    sh: Vec<Constant<Bits<W>>>,
    units: Constant<Bits<W>>,
    top: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero: Constant<Bits<W>>,
    zero15: Constant<Bits<15>>,
    zero16: Constant<Bits<16>>,
    _m: usize,
}

impl<const W: usize> DeqZero<W> {
    /// `m`: the folded group's code bits, M (2 to 9); `shift`: the z
    /// word's place (0 or 16).
    pub fn new(m: usize, shift: usize) -> Self {
        assert!((2..=9).contains(&m));
        DeqZero {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            min_lo: Default::default(),
            min_hi: Default::default(),
            step_lo: Default::default(),
            step_hi: Default::default(),
            zw: Default::default(),
            min: Default::default(),
            step: Default::default(),
            z: Default::default(),
            inv16: Constant::new(Z_INV.into()),
            eight16: Constant::new(8u64.into()),
            shift: Constant::new((shift as u64).into()),
            san: (0..2).map(|_| Sanitize::default()).collect(),
            cvt_min: Fp16ToUnits::default(),
            cvt_step: Fp16ToUnits::default(),
            steps: (0..=m).map(|_| DivStep::default()).collect(),
            rrem: regs(m + 1),
            rs: regs(m + 1),
            rq: regs(m + 2),
            rpos: regs(m + 2),
            rsn: regs(m + 2),
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

    /// Advancing cycles from the fields to `z`.
    pub fn latency(m: usize) -> usize {
        m + 2
    }
}

impl<const W: usize> Logic for DeqZero<W> {
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
            self.rsn[i].clock.next = self.clock.val();
            self.rsn[i].reset.next = self.reset.val();
            self.rsn[i].en.next = self.en.val();
        }
        self.rnz.clock.next = self.clock.val();
        self.rnz.reset.next = self.reset.val();
        self.rnz.en.next = self.en.val();
        // set-up: the fields sanitised as §4.4 reads them (-0 becomes +0,
        // so a set sign bit is a value below zero)
        self.min.next =
            (bit_cast::<16, 8>(self.min_hi.val()) << self.eight16.val()) | bit_cast::<16, 8>(self.min_lo.val());
        self.step.next =
            (bit_cast::<16, 8>(self.step_hi.val()) << self.eight16.val()) | bit_cast::<16, 8>(self.step_lo.val());
        self.san[0].x.next = self.min.val();
        self.san[1].x.next = self.step.val();
        self.cvt_min.x.next = self.san[0].y.val();
        self.cvt_step.x.next = self.san[1].y.val();
        self.rrem[0].d.next = bit_cast::<W, FX>(self.cvt_min.mag.val()) & self.units.val();
        self.rs[0].d.next = bit_cast::<W, FX>(self.cvt_step.mag.val()) & self.units.val();
        self.rq[0].d.next = self.zero16.val();
        self.rpos[0].d.next =
            !self.cvt_min.neg.val() | (self.san[0].y.val().get_bits::<15>(0) == self.zero15.val());
        self.rsn[0].d.next =
            self.cvt_step.neg.val() & (self.san[1].y.val().get_bits::<15>(0) != self.zero15.val());
        // restoring steps of weights 2^M .. 2^0 (FoldZero's)
        for j in 0..(self._m + 1) {
            self.steps[j].rem.next = self.rrem[j].q.val();
            self.steps[j].dsh.next = self.rs[j].q.val() << self.sh[j].val();
            self.rq[j + 1].d.next = self.rq[j].q.val() << self.one16.val();
            if self.steps[j].take.val() {
                self.rq[j + 1].d.next = (self.rq[j].q.val() << self.one16.val()) | self.one16.val();
            }
            self.rpos[j + 1].d.next = self.rpos[j].q.val();
            self.rsn[j + 1].d.next = self.rsn[j].q.val();
        }
        for j in 0..self._m {
            self.rrem[j + 1].d.next = self.steps[j].rem_out.val() & self.units.val();
            self.rs[j + 1].d.next = self.rs[j].q.val();
        }
        for j in self._m..(self._m + 1) {
            self.rnz.d.next = self.steps[j].rem_out.val() != self.zero.val();
        }
        // output: quotient bit M set clamps to 2^M; else the ceiling
        // (rising grid) or the floor plus one (falling grid)
        for l in (self._m + 1)..(self._m + 2) {
            if self.rq[l].q.val() >= self.top.val() {
                self.z.next = self.top.val();
            } else if self.rsn[l].q.val() | self.rnz.q.val() {
                self.z.next = self.rq[l].q.val() + self.one16.val();
            } else {
                self.z.next = self.rq[l].q.val();
            }
            if self.rsn[l].q.val() {
                if !self.rpos[l].q.val() {
                    self.z.next = self.top.val();
                }
            } else if self.rpos[l].q.val() {
                self.z.next = self.zero16.val();
            }
            if self.rsn[l].q.val() & self.rpos[l].q.val() {
                self.z.next = self.z.val() | self.inv16.val();
            }
        }
        self.zw.next = bit_cast::<FX, 16>(self.z.val()) << self.shift.val();
    }
}
