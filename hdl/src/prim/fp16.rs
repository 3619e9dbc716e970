//! FP16 conversions of spec §2.2: exact FP16 -> units (2^-24) and the
//! saturating rounder units -> FP16 (RD, RU, RNE of §2.2.4).
//! Units are 42-bit two's complement (every difference of two FP16 values
//! fits).

use super::reg::Reg;
use rust_hdl::prelude::*;

pub const FX: usize = 42;

/// FP16 -> units, combinational, as magnitude and sign: `(1024 + m) <<
/// (E - 1)`, or `m` when E = 0. Input must be finite (sanitised). The
/// negation, where a caller needs it, belongs in the next pipeline stage: a
/// 42-bit shift and a 42-bit negation do not fit one 4 ns cycle on OSU018.
#[derive(LogicBlock)]
pub struct Fp16ToUnits {
    /// FP16 pattern.
    pub x: Signal<In, Bits<16>>,
    /// |value| in units (below 2^40).
    pub mag: Signal<Out, Bits<FX>>,
    /// The sign bit.
    pub neg: Signal<Out, Bit>,
    one_k: Constant<Bits<FX>>,
    one: Constant<Bits<5>>,
    zero_e: Constant<Bits<5>>,
}

impl Default for Fp16ToUnits {
    fn default() -> Self {
        Fp16ToUnits {
            x: Default::default(),
            mag: Default::default(),
            neg: Default::default(),
            one_k: Constant::new(1024u64.into()),
            one: Constant::new(1u64.into()),
            zero_e: Constant::new(0u64.into()),
        }
    }
}

impl Logic for Fp16ToUnits {
    #[hdl_gen]
    fn update(&mut self) {
        if self.x.val().get_bits::<5>(10) == self.zero_e.val() {
            self.mag.next = bit_cast::<FX, 10>(self.x.val().get_bits::<10>(0));
        } else {
            self.mag.next = (self.one_k.val() + bit_cast::<FX, 10>(self.x.val().get_bits::<10>(0)))
                << (self.x.val().get_bits::<5>(10) - self.one.val());
        }
        self.neg.next = self.x.val().get_bit(15);
    }
}

/// Rounding directions for [`UnitsToFp16`], applied to the value (not the
/// magnitude).
pub const RD: u64 = 0;
pub const RU: u64 = 1;
pub const RNE: u64 = 2;

/// Units -> FP16, three pipeline stages: magnitude; normalisation; round
/// and encode. Saturates at +-65504; a zero result is +0.
///
/// [`UnitsToFp16::magnitude`] takes the magnitude and the sign instead of a
/// signed value: with no negation to make, the normalisation is split over
/// stages 1 and 2 (shifts by 32, 16, 8, then 4, 2, 1), which keeps each
/// under 4 ns on OSU018 where the six levels in one stage took 4.2 ns.
///
/// With the magnitude's leading one at bit e, the FP16 exponent field is
/// e - 9; after normalising to bit 41, e = 41 - lz, so E = 32 - lz. Below
/// 2048 units the grid spacing is one unit and the FP16 pattern of the
/// magnitude is the magnitude itself.
#[derive(LogicBlock)]
pub struct UnitsToFp16 {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance.
    pub en: Signal<In, Bit>,
    /// Value in units, 42-bit two's complement (|v| < 2^41); in magnitude
    /// mode, |value| (below 2^41).
    pub v: Signal<In, Bits<FX>>,
    /// Negate the value: the result is the rounding of `-v` (of `-|value|`
    /// in magnitude mode).
    pub neg: Signal<In, Bit>,
    /// RD, RU or RNE.
    pub mode: Signal<In, Bits<2>>,
    /// FP16 result, three advancing cycles later.
    pub y: Signal<Out, Bits<16>>,
    // stage 1: sign, magnitude, rounding direction on the magnitude
    s0_neg: Reg<Bit>,
    s0_up: Reg<Bit>,
    s0_near: Reg<Bit>,
    s0_mag: Reg<Bits<FX>>,
    // magnitude mode: s0_mag is normalised by 32, 16 and 8 (lz so far);
    // a small magnitude is kept as it is
    s0_lz: Vec<Reg<Bits<6>>>,
    s0_small: Vec<Reg<Bit>>,
    // stage 2: magnitude normalised to bit 41 (small ones kept as they are)
    s1_neg: Reg<Bit>,
    s1_up: Reg<Bit>,
    s1_near: Reg<Bit>,
    s1_small: Reg<Bit>,
    s1_norm: Reg<Bits<FX>>,
    s1_lz: Reg<Bits<6>>,
    s2_y: Reg<Bits<16>>,
    norm: Signal<Local, Bits<FX>>,
    lz: Signal<Local, Bits<6>>,
    mant: Signal<Local, Bits<12>>,
    exp: Signal<Local, Bits<6>>,
    half: Signal<Local, Bit>,
    sticky: Signal<Local, Bit>,
    inc: Signal<Local, Bit>,
    res: Signal<Local, Bits<16>>,
    // signed mode only
    k_zero: Vec<Constant<Bits<FX>>>,
    k_zero6: Constant<Bits<6>>,
    k_zero32: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_zero8: Constant<Bits<8>>,
    k_zero4: Constant<Bits<4>>,
    k_zero2: Constant<Bits<2>>,
    k_zero30: Constant<Bits<30>>,
    k_small_lim: Constant<Bits<FX>>,
    k_c32: Constant<Bits<6>>,
    k_c16: Constant<Bits<6>>,
    k_c8: Constant<Bits<6>>,
    k_c4: Constant<Bits<6>>,
    k_c2: Constant<Bits<6>>,
    k_c1: Constant<Bits<6>>,
    k_c30: Constant<Bits<6>>,
    k_sh10: Constant<Bits<32>>,
    k_sh15: Constant<Bits<32>>,
    k_msb: Constant<Bits<32>>,
    k_top32: Constant<Bits<32>>,
    k_top16: Constant<Bits<32>>,
    k_top8: Constant<Bits<32>>,
    k_top4: Constant<Bits<32>>,
    k_top2: Constant<Bits<32>>,
    k_mant_lo: Constant<Bits<32>>,
    k_half: Constant<Bits<32>>,
    k_mode_ru: Constant<Bits<2>>,
    k_mode_rne: Constant<Bits<2>>,
    k_m_one: Constant<Bits<12>>,
    k_m_top: Constant<Bits<12>>,
    k_m_imp: Constant<Bits<12>>,
    k_max_pos: Constant<Bits<16>>,
    /// Signed input (1) or magnitude and sign (`_mag` = 1).
    _signed: usize,
    _mag: usize,
}

impl Default for UnitsToFp16 {
    fn default() -> Self {
        Self::build(false)
    }
}

impl UnitsToFp16 {
    /// The rounder of a value known as magnitude and sign.
    pub fn magnitude() -> Self {
        Self::build(true)
    }

    fn build(mag: bool) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let m = mag as usize;
        UnitsToFp16 {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            v: Default::default(),
            neg: Default::default(),
            mode: Default::default(),
            y: Default::default(),
            s0_neg: Reg::default(),
            s0_up: Reg::default(),
            s0_near: Reg::default(),
            s0_mag: Reg::default(),
            s0_lz: (0..m).map(|_| Reg::default()).collect(),
            s0_small: (0..m).map(|_| Reg::default()).collect(),
            s1_neg: Reg::default(),
            s1_up: Reg::default(),
            s1_near: Reg::default(),
            s1_small: Reg::default(),
            s1_norm: Reg::default(),
            s1_lz: Reg::default(),
            s2_y: Reg::default(),
            norm: Default::default(),
            lz: Default::default(),
            mant: Default::default(),
            exp: Default::default(),
            half: Default::default(),
            sticky: Default::default(),
            inc: Default::default(),
            res: Default::default(),
            k_zero: (0..1 - m).map(|_| c(0)).collect(),
            k_zero6: c(0),
            k_zero32: c(0),
            k_zero16: c(0),
            k_zero8: c(0),
            k_zero4: c(0),
            k_zero2: c(0),
            k_zero30: c(0),
            k_small_lim: c(2048),
            k_c32: c(32),
            k_c16: c(16),
            k_c8: c(8),
            k_c4: c(4),
            k_c2: c(2),
            k_c1: c(1),
            k_c30: c(30),
            k_sh10: c(10),
            k_sh15: c(15),
            k_msb: c(FX as u64 - 1),
            k_top32: c(FX as u64 - 32),
            k_top16: c(FX as u64 - 16),
            k_top8: c(FX as u64 - 8),
            k_top4: c(FX as u64 - 4),
            k_top2: c(FX as u64 - 2),
            k_mant_lo: c(FX as u64 - 11),
            k_half: c(FX as u64 - 12),
            k_mode_ru: c(RU),
            k_mode_rne: c(RNE),
            k_m_one: c(1),
            k_m_top: c(2048),
            k_m_imp: c(1024),
            k_max_pos: c(0x7BFF),
            _signed: 1 - m,
            _mag: m,
        }
    }
}

impl Logic for UnitsToFp16 {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, s0_neg, s0_up, s0_near, s0_mag, s1_neg, s1_up, s1_near, s1_small, s1_norm, s1_lz, s2_y);
        self.s0_neg.reset.next = self.reset.val();
        self.s0_up.reset.next = self.reset.val();
        self.s0_near.reset.next = self.reset.val();
        self.s0_mag.reset.next = self.reset.val();
        self.s1_neg.reset.next = self.reset.val();
        self.s1_up.reset.next = self.reset.val();
        self.s1_near.reset.next = self.reset.val();
        self.s1_small.reset.next = self.reset.val();
        self.s1_norm.reset.next = self.reset.val();
        self.s1_lz.reset.next = self.reset.val();
        self.s2_y.reset.next = self.reset.val();
        self.s0_neg.en.next = self.en.val();
        self.s0_up.en.next = self.en.val();
        self.s0_near.en.next = self.en.val();
        self.s0_mag.en.next = self.en.val();
        self.s1_neg.en.next = self.en.val();
        self.s1_up.en.next = self.en.val();
        self.s1_near.en.next = self.en.val();
        self.s1_small.en.next = self.en.val();
        self.s1_norm.en.next = self.en.val();
        self.s1_lz.en.next = self.en.val();
        self.s2_y.en.next = self.en.val();

        // Stage 1: magnitude; the magnitude rounds up for RU of a positive
        // or RD of a negative value.
        for _s in 0..self._signed {
            if self.v.val().get_bit(self.k_msb.val().index()) {
                self.s0_mag.d.next = self.k_zero[0].val() - self.v.val();
            } else {
                self.s0_mag.d.next = self.v.val();
            }
            self.s0_neg.d.next = self.v.val().get_bit(self.k_msb.val().index()) ^ self.neg.val();
            self.s0_up.d.next = (self.mode.val() == self.k_mode_ru.val())
                ^ self.v.val().get_bit(self.k_msb.val().index())
                ^ self.neg.val();
        }
        // ... or, given the magnitude, its first three normalisation levels
        for _m in 0..self._mag {
            self.s0_lz[0].clock.next = self.clock.val();
            self.s0_lz[0].reset.next = self.reset.val();
            self.s0_lz[0].en.next = self.en.val();
            self.s0_small[0].clock.next = self.clock.val();
            self.s0_small[0].reset.next = self.reset.val();
            self.s0_small[0].en.next = self.en.val();
            self.norm.next = self.v.val();
            self.lz.next = self.k_zero6.val();
            if self.norm.val().get_bits::<32>(self.k_top32.val().index()) == self.k_zero32.val() {
                self.norm.next = self.norm.val() << self.k_c32.val();
                self.lz.next = self.lz.val() + self.k_c32.val();
            }
            if self.norm.val().get_bits::<16>(self.k_top16.val().index()) == self.k_zero16.val() {
                self.norm.next = self.norm.val() << self.k_c16.val();
                self.lz.next = self.lz.val() + self.k_c16.val();
            }
            if self.norm.val().get_bits::<8>(self.k_top8.val().index()) == self.k_zero8.val() {
                self.norm.next = self.norm.val() << self.k_c8.val();
                self.lz.next = self.lz.val() + self.k_c8.val();
            }
            self.s0_small[0].d.next = self.v.val() < self.k_small_lim.val();
            self.s0_mag.d.next = self.norm.val();
            if self.v.val() < self.k_small_lim.val() {
                self.s0_mag.d.next = self.v.val();
            }
            self.s0_lz[0].d.next = self.lz.val();
            self.s0_neg.d.next = self.neg.val();
            self.s0_up.d.next = (self.mode.val() == self.k_mode_ru.val()) ^ self.neg.val();
        }
        if self.mode.val() == self.k_mode_rne.val() {
            self.s0_up.d.next = false;
        }
        self.s0_near.d.next = self.mode.val() == self.k_mode_rne.val();

        // Stage 2: log-depth leading-zero normalisation (the rest of it).
        self.norm.next = self.s0_mag.q.val();
        self.lz.next = self.k_zero6.val();
        for _s in 0..self._signed {
            if self.norm.val().get_bits::<32>(self.k_top32.val().index()) == self.k_zero32.val() {
                self.norm.next = self.norm.val() << self.k_c32.val();
                self.lz.next = self.lz.val() + self.k_c32.val();
            }
            if self.norm.val().get_bits::<16>(self.k_top16.val().index()) == self.k_zero16.val() {
                self.norm.next = self.norm.val() << self.k_c16.val();
                self.lz.next = self.lz.val() + self.k_c16.val();
            }
            if self.norm.val().get_bits::<8>(self.k_top8.val().index()) == self.k_zero8.val() {
                self.norm.next = self.norm.val() << self.k_c8.val();
                self.lz.next = self.lz.val() + self.k_c8.val();
            }
        }
        for _m in 0..self._mag {
            self.lz.next = self.s0_lz[0].q.val();
        }
        if self.norm.val().get_bits::<4>(self.k_top4.val().index()) == self.k_zero4.val() {
            self.norm.next = self.norm.val() << self.k_c4.val();
            self.lz.next = self.lz.val() + self.k_c4.val();
        }
        if self.norm.val().get_bits::<2>(self.k_top2.val().index()) == self.k_zero2.val() {
            self.norm.next = self.norm.val() << self.k_c2.val();
            self.lz.next = self.lz.val() + self.k_c2.val();
        }
        if !self.norm.val().get_bit(self.k_msb.val().index()) {
            self.norm.next = self.norm.val() << self.k_c1.val();
            self.lz.next = self.lz.val() + self.k_c1.val();
        }
        self.s1_neg.d.next = self.s0_neg.q.val();
        self.s1_up.d.next = self.s0_up.q.val();
        self.s1_near.d.next = self.s0_near.q.val();
        // a small magnitude is kept unnormalised: its pattern is itself
        for _s in 0..self._signed {
            self.s1_small.d.next = self.s0_mag.q.val() < self.k_small_lim.val();
            if self.s0_mag.q.val() < self.k_small_lim.val() {
                self.s1_norm.d.next = self.s0_mag.q.val();
            } else {
                self.s1_norm.d.next = self.norm.val();
            }
        }
        for _m in 0..self._mag {
            self.s1_small.d.next = self.s0_small[0].q.val();
            if self.s0_small[0].q.val() {
                self.s1_norm.d.next = self.s0_mag.q.val();
            } else {
                self.s1_norm.d.next = self.norm.val();
            }
        }
        self.s1_lz.d.next = self.lz.val();

        // Stage 3: 11-bit mantissa (bits 41..31), round from the bits below,
        // renormalise a carry out, encode, saturate, apply the sign.
        self.mant.next = bit_cast::<12, 11>(self.s1_norm.q.val().get_bits::<11>(self.k_mant_lo.val().index()));
        self.half.next = self.s1_norm.q.val().get_bit(self.k_half.val().index());
        self.sticky.next = self.s1_norm.q.val().get_bits::<30>(0) != self.k_zero30.val();
        self.inc.next = (self.s1_up.q.val() & (self.half.val() | self.sticky.val()))
            | (self.s1_near.q.val() & self.half.val() & (self.sticky.val() | self.mant.val().get_bit(0)));
        self.exp.next = self.k_c32.val() - self.s1_lz.q.val();
        if self.inc.val() {
            self.mant.next = self.mant.val() + self.k_m_one.val();
        }
        if self.mant.val() == self.k_m_top.val() {
            self.mant.next = self.k_m_imp.val();
            self.exp.next = self.exp.val() + self.k_c1.val();
        }
        self.res.next = bit_cast::<16, 10>(self.mant.val().get_bits::<10>(0))
            | (bit_cast::<16, 6>(self.exp.val()) << self.k_sh10.val());
        if self.exp.val() > self.k_c30.val() {
            self.res.next = self.k_max_pos.val();
        }
        if self.s1_small.q.val() {
            self.res.next = bit_cast::<16, 11>(self.s1_norm.q.val().get_bits::<11>(0));
        }
        if self.res.val() != self.k_zero16.val() {
            self.res.next = self.res.val() | (bit_cast::<16, 1>(self.s1_neg.q.val().into()) << self.k_sh15.val());
        }
        self.s2_y.d.next = self.res.val();
        self.y.next = self.s2_y.q.val();
    }
}

/// Both converters side by side, as one unit for testing (`fp16-convert`).
/// `u` (the signed value of `x`) is pipelined like `y`, three stages:
/// `x`; magnitude and sign; the signed value. Combinational from port to
/// port, the shift and the negation took 4.9 ns on OSU018 with the ports'
/// external delays.
#[derive(LogicBlock)]
pub struct Fp16Convert {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// FP16 pattern (finite)
    pub x: Signal<In, Bits<16>>,
    /// units(x), 42-bit two's complement; three advancing cycles later
    pub u: Signal<Out, Bits<FX>>,
    /// value in units, 42-bit two's complement
    pub v: Signal<In, Bits<FX>>,
    /// 0 RD, 1 RU, 2 RNE
    pub mode: Signal<In, Bits<2>>,
    /// FP16 of v rounded by mode, saturating; three advancing cycles later
    pub y: Signal<Out, Bits<16>>,
    to_units: Fp16ToUnits,
    round: UnitsToFp16,
    s0_x: Reg<Bits<16>>,
    s1_mag: Reg<Bits<FX>>,
    s1_neg: Reg<Bit>,
    s2_u: Reg<Bits<FX>>,
    zero: Constant<Bits<FX>>,
}

impl Fp16Convert {
    /// Advancing cycles from `x` to `u` and from `v` to `y`.
    pub const LATENCY: usize = 3;
}

impl Default for Fp16Convert {
    fn default() -> Self {
        Fp16Convert {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            x: Default::default(),
            u: Default::default(),
            v: Default::default(),
            mode: Default::default(),
            y: Default::default(),
            to_units: Fp16ToUnits::default(),
            round: UnitsToFp16::default(),
            s0_x: Reg::default(),
            s1_mag: Reg::default(),
            s1_neg: Reg::default(),
            s2_u: Reg::default(),
            zero: Constant::new(0u64.into()),
        }
    }
}

impl Logic for Fp16Convert {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, s0_x, s1_mag, s1_neg, s2_u);
        self.s0_x.reset.next = self.reset.val();
        self.s1_mag.reset.next = self.reset.val();
        self.s1_neg.reset.next = self.reset.val();
        self.s2_u.reset.next = self.reset.val();
        self.s0_x.en.next = self.en.val();
        self.s1_mag.en.next = self.en.val();
        self.s1_neg.en.next = self.en.val();
        self.s2_u.en.next = self.en.val();
        self.s0_x.d.next = self.x.val();
        self.to_units.x.next = self.s0_x.q.val();
        self.s1_mag.d.next = self.to_units.mag.val();
        self.s1_neg.d.next = self.to_units.neg.val();
        self.s2_u.d.next = self.s1_mag.q.val();
        if self.s1_neg.q.val() {
            self.s2_u.d.next = self.zero.val() - self.s1_mag.q.val();
        }
        self.u.next = self.s2_u.q.val();
        self.round.clock.next = self.clock.val();
        self.round.reset.next = self.reset.val();
        self.round.en.next = self.en.val();
        self.round.v.next = self.v.val();
        self.round.mode.next = self.mode.val();
        self.round.neg.next = false;
        self.y.next = self.round.y.val();
    }
}
