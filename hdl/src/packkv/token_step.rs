//! The per-token unit of `packkv-quantizer`: from a token's least and
//! greatest order key (spec §2.2.2) to its metadata word and the constants
//! its lanes code with. Paper: PackKV §III-B1 (one scale per layer vector).
//! Spec: docs/spec.md §14.2 (numbers), §14.14.1 (this block).
//!
//! - `c = max(ceil(D / N), ceil(|x_min| / 32767))`, `step = RU(c)`: `RU` is
//!   monotone, so `step = max(RU(ceil(D / N)), RU(ceil(|x_min| / 32767)))`:
//!   the restoring constant divider (§5.4) and a three-digit long division
//!   in radix 2^15 (`2^15 = 1 mod 32767`), each followed by the rounder
//!   (§5.6), side by side.
//! - `z = floor((2 x_min + s) / (2 s))`, `s = m 2^e`: with `x2 = 2 x_min`,
//!   `X = floor(x2 / 2^e)` (an arithmetic shift) and `A2 = X + (2^16 + 1) m`
//!   (no overlap, `m < 2^16`), `z + 2^15 = floor(floor(A2 / 2) / m)`, whose
//!   dividend is non-negative because `|x_min| <= 32767 s`: sixteen
//!   restoring steps (`DivStep`) on at most 28 bits, no wide divider.
//! - The lanes code `q = floor((2 x + K) / (2 s))` with `K = s (1 - 2z)`;
//!   from the division's remainder `R'`, `K = (2 R' + (A2 mod 2) - X) 2^e`,
//!   so no multiply either.
//!
//! One token per cycle, never stalls; `LATENCY` cycles from `in_valid` to
//! `out_valid`. A zero step (all elements +0) gives `z = 0`, `K = 0`, `sz`.

use crate::prim::div_const::DivConstCeil;
use crate::prim::div_round::DivStep;
use crate::prim::fp16::{Fp16ToUnits, UnitsToFp16, FX, RU};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs};
use rust_hdl::prelude::*;

/// Width of `K` and of a lane's `2 x + K` (two's complement; `0 <= 2x + K
/// < 2^44`).
pub const KW: usize = 45;
/// Restoring steps per stage of the `ceil(D / N)` divider (at 9-bit
/// remainders, five missed 4 ns on OSU018, spec §5.4).
const PER_STAGE: usize = 4;
/// Quotient bits of `z + 2^15`.
const ZQ: usize = 16;
/// The floor of `|x_min| / step` that keeps `|z| <= 32767` (spec §14.2).
const ZERO_MAX: u64 = 32767;
/// Width of the `z` division's signals.
const ZW: usize = 32;

#[derive(LogicBlock)]
pub struct TokenStep {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A token's extremes are offered (one per cycle at most).
    pub in_valid: Signal<In, Bit>,
    /// Its least and greatest order key (sanitised values).
    pub kmin: Signal<In, Bits<16>>,
    pub kmax: Signal<In, Bits<16>>,
    /// Its `nonfinite` flag, passed along.
    pub in_nf: Signal<In, Bit>,
    /// `LATENCY` cycles after `in_valid`.
    pub out_valid: Signal<Out, Bit>,
    /// The metadata word: step [31:16], z [15:0].
    pub meta: Signal<Out, Bits<32>>,
    /// `K = s (1 - 2z)`, two's complement.
    pub kk: Signal<Out, Bits<KW>>,
    /// The step's significand `m` and `e + 1`, `s = m 2^e`.
    pub m: Signal<Out, Bits<16>>,
    pub esh: Signal<Out, Bits<8>>,
    /// The step is +0 (every code 0).
    pub sz: Signal<Out, Bit>,
    pub nf: Signal<Out, Bit>,
    // A: the extremes as magnitude and sign
    fmin: Signal<Local, Bits<16>>,
    fmax: Signal<Local, Bits<16>>,
    cvt_min: Fp16ToUnits,
    cvt_max: Fp16ToUnits,
    a_v: Reg<Bit>,
    a_nf: Reg<Bit>,
    a_min16: Reg<Bits<16>>,
    a_minmag: Reg<Bits<FX>>,
    a_minneg: Reg<Bit>,
    a_maxmag: Reg<Bits<FX>>,
    a_maxneg: Reg<Bit>,
    // B: D and |x_min|
    b_v: Reg<Bit>,
    b_nf: Reg<Bit>,
    b_min16: Reg<Bits<16>>,
    b_minmag: Reg<Bits<FX>>,
    // D's operands (the subtrahend inverted, with its carry in) and its low
    // half; C: D whole (a 42-bit carry chain in one stage missed 4 ns)
    opa: Signal<Local, Bits<FX>>,
    opb: Signal<Local, Bits<FX>>,
    cin: Signal<Local, Bit>,
    b_lo: Reg<Bits<24>>,
    b_ahi: Reg<Bits<FX>>,
    b_bhi: Reg<Bits<FX>>,
    c_v: Reg<Bit>,
    c_nf: Reg<Bit>,
    c_min16: Reg<Bits<16>>,
    c_d: Reg<Bits<FX>>,
    c_minmag: Reg<Bits<FX>>,
    // the two ceilings and their rounding up; what rides alongside
    div_n: DivConstCeil<FX>,
    // ceil(|x_min| / 32767) by long division in radix 2^15 (2^15 = 1 mod
    // 32767): digits d2 d1 d0 of 12, 15, 15 bits; M1 quotient digit 1 and
    // its remainder, M2 digit 0 and the final remainder, M3 the ceiling
    zd: Signal<Local, Bits<16>>,
    zs: Signal<Local, Bits<16>>,
    m1_q: Reg<Bits<16>>,
    m1_r: Reg<Bits<16>>,
    m1_d0: Reg<Bits<16>>,
    m2_q: Reg<Bits<FX>>,
    m2_nz: Reg<Bit>,
    m3_c: Reg<Bits<FX>>,
    ru_n: UnitsToFp16,
    ru_z: UnitsToFp16,
    dl_v: Vec<Reg<Bit>>,
    dl_nf: Vec<Reg<Bit>>,
    dl_min16: Vec<Reg<Bits<16>>>,
    dl_sz: Vec<Reg<Bits<16>>>,
    // S1: the step, m, e; x_min again as magnitude and sign
    st: Signal<Local, Bits<16>>,
    cvt_x: Fp16ToUnits,
    s1_v: Reg<Bit>,
    s1_nf: Reg<Bit>,
    s1_step: Reg<Bits<16>>,
    s1_m: Reg<Bits<16>>,
    s1_e: Reg<Bits<8>>,
    s1_mag: Reg<Bits<FX>>,
    s1_neg: Reg<Bit>,
    // S2: x2 = 2 x_min; S3: X = x2 >> e (arithmetic); S4: A2
    s2_v: Reg<Bit>,
    s2_nf: Reg<Bit>,
    s2_step: Reg<Bits<16>>,
    s2_m: Reg<Bits<16>>,
    s2_e: Reg<Bits<8>>,
    s2_x2: Reg<Bits<48>>,
    s3_v: Reg<Bit>,
    s3_nf: Reg<Bit>,
    s3_step: Reg<Bits<16>>,
    s3_m: Reg<Bits<16>>,
    s3_e: Reg<Bits<8>>,
    s3_x: Reg<Bits<ZW>>,
    a2: Signal<Local, Bits<ZW>>,
    zm: Signal<Local, Bits<16>>,
    zb: Signal<Local, Bit>,
    // the z division: step i's registers at i; X, b, m, e, step ride along
    zstep: Vec<DivStep<ZW>>,
    z_v: Vec<Reg<Bit>>,
    z_nf: Vec<Reg<Bit>>,
    z_step: Vec<Reg<Bits<16>>>,
    z_m: Vec<Reg<Bits<16>>>,
    z_e: Vec<Reg<Bits<8>>>,
    z_x: Vec<Reg<Bits<ZW>>>,
    z_b: Vec<Reg<Bit>>,
    z_rem: Vec<Reg<Bits<ZW>>>,
    z_q: Vec<Reg<Bits<16>>>,
    // E1: u = 2R' + b - X, z; E2: K = u << e, the outputs
    e1_v: Reg<Bit>,
    e1_nf: Reg<Bit>,
    e1_step: Reg<Bits<16>>,
    e1_m: Reg<Bits<16>>,
    e1_e: Reg<Bits<8>>,
    e1_u: Reg<Bits<ZW>>,
    e1_z: Reg<Bits<16>>,
    uk: Signal<Local, Bits<KW>>,
    o_v: Reg<Bit>,
    o_nf: Reg<Bit>,
    o_meta: Reg<Bits<32>>,
    o_kk: Reg<Bits<KW>>,
    o_m: Reg<Bits<16>>,
    o_esh: Reg<Bits<8>>,
    o_sz: Reg<Bit>,
    // constants
    k_low15: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_imp: Constant<Bits<16>>,
    k_mant: Constant<Bits<16>>,
    k_zero_e: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_one48: Constant<Bits<48>>,
    k_zero48: Constant<Bits<48>>,
    k_sh16: Constant<Bits<ZW>>,
    k_one_zw: Constant<Bits<ZW>>,
    k_zsign: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_sext: Constant<Bits<KW>>,
    k_zero_kw: Constant<Bits<KW>>,
    k_mode_ru: Constant<Bits<2>>,
    /// Step i of the z division compares against `m << (15 - i)`.
    zsh: Vec<Constant<Bits<ZW>>>,
    /// The remainder after step i is below m 2^(15 - i) < 2^(26 - i).
    zmask: Vec<Constant<Bits<ZW>>>,
    k_amask: Constant<Bits<ZW>>,
    k_lo21: Constant<Bits<FX>>,
    k_sh21: Constant<Bits<FX>>,
    k_fxmask: Constant<Bits<FX>>,
    k_kz: Constant<Bits<16>>,
    k_sh15: Constant<Bits<FX>>,
    k_sh30: Constant<Bits<FX>>,
    k_one_fx: Constant<Bits<FX>>,
    k_lo15fx: Constant<Bits<FX>>,
    _dl: usize,
    _dz: usize,
    _zq: usize,
}

impl TokenStep {
    /// Cycles of the `ceil(D / N)` divider.
    fn div_latency() -> usize {
        DivConstCeil::<FX>::latency(PER_STAGE)
    }

    /// Cycles from `in_valid` to `out_valid`: A, B, C, the divider and
    /// the rounder, S1-S4, sixteen steps, E1, E2.
    pub fn latency() -> usize {
        3 + Self::div_latency() + 3 + 4 + ZQ + 2
    }

    /// `levels`: `N` (2..=255).
    pub fn new(levels: u32) -> Self {
        assert!((2..=255).contains(&levels));
        let dl = Self::div_latency() + 3;
        // the |x_min| / 32767 path: M1-M3 and its rounder
        let dz = dl - 3 - 3;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        TokenStep {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            kmin: Default::default(),
            kmax: Default::default(),
            in_nf: Default::default(),
            out_valid: Default::default(),
            meta: Default::default(),
            kk: Default::default(),
            m: Default::default(),
            esh: Default::default(),
            sz: Default::default(),
            nf: Default::default(),
            fmin: Default::default(),
            fmax: Default::default(),
            cvt_min: Fp16ToUnits::default(),
            cvt_max: Fp16ToUnits::default(),
            a_v: Reg::default(),
            a_nf: Reg::default(),
            a_min16: Reg::default(),
            a_minmag: Reg::default(),
            a_minneg: Reg::default(),
            a_maxmag: Reg::default(),
            a_maxneg: Reg::default(),
            b_v: Reg::default(),
            b_nf: Reg::default(),
            b_min16: Reg::default(),
            b_minmag: Reg::default(),
            opa: Default::default(),
            opb: Default::default(),
            cin: Default::default(),
            b_lo: Reg::default(),
            b_ahi: Reg::default(),
            b_bhi: Reg::default(),
            c_v: Reg::default(),
            c_nf: Reg::default(),
            c_min16: Reg::default(),
            c_d: Reg::default(),
            c_minmag: Reg::default(),
            div_n: DivConstCeil::new(levels as u64, PER_STAGE),
            zd: Default::default(),
            zs: Default::default(),
            m1_q: Reg::default(),
            m1_r: Reg::default(),
            m1_d0: Reg::default(),
            m2_q: Reg::default(),
            m2_nz: Reg::default(),
            m3_c: Reg::default(),
            ru_n: UnitsToFp16::magnitude(),
            ru_z: UnitsToFp16::magnitude(),
            dl_v: regs(dl),
            dl_nf: regs(dl),
            dl_min16: regs(dl),
            dl_sz: regs(dz),
            st: Default::default(),
            cvt_x: Fp16ToUnits::default(),
            s1_v: Reg::default(),
            s1_nf: Reg::default(),
            s1_step: Reg::default(),
            s1_m: Reg::default(),
            s1_e: Reg::default(),
            s1_mag: Reg::default(),
            s1_neg: Reg::default(),
            s2_v: Reg::default(),
            s2_nf: Reg::default(),
            s2_step: Reg::default(),
            s2_m: Reg::default(),
            s2_e: Reg::default(),
            s2_x2: Reg::default(),
            s3_v: Reg::default(),
            s3_nf: Reg::default(),
            s3_step: Reg::default(),
            s3_m: Reg::default(),
            s3_e: Reg::default(),
            s3_x: Reg::default(),
            a2: Default::default(),
            zm: Default::default(),
            zb: Default::default(),
            zstep: (0..ZQ).map(|_| DivStep::default()).collect(),
            z_v: regs(ZQ + 1),
            z_nf: regs(ZQ + 1),
            z_step: regs(ZQ + 1),
            z_m: regs(ZQ + 1),
            z_e: regs(ZQ + 1),
            z_x: regs(ZQ + 1),
            z_b: regs(ZQ + 1),
            z_rem: regs(ZQ + 1),
            z_q: regs(ZQ + 1),
            e1_v: Reg::default(),
            e1_nf: Reg::default(),
            e1_step: Reg::default(),
            e1_m: Reg::default(),
            e1_e: Reg::default(),
            e1_u: Reg::default(),
            e1_z: Reg::default(),
            uk: Default::default(),
            o_v: Reg::default(),
            o_nf: Reg::default(),
            o_meta: Reg::default(),
            o_kk: Reg::default(),
            o_m: Reg::default(),
            o_esh: Reg::default(),
            o_sz: Reg::default(),
            k_low15: c(0x7FFF),
            k_zero16: c(0),
            k_one8: c(1),
            k_zero8: c(0),
            k_imp: c(1024),
            k_mant: c(0x3FF),
            k_zero_e: c(0),
            k_one5: c(1),
            k_one48: c(1),
            k_zero48: c(0),
            k_sh16: c(16),
            k_one_zw: c(1),
            k_zsign: c(0x8000),
            k_one16: c(1),
            k_sext: c(((1u64 << KW) - 1) & !((1u64 << ZW) - 1)),
            k_zero_kw: c(0),
            k_mode_ru: c(RU),
            zsh: consts((0..ZQ).map(|i| (ZQ - 1 - i) as u64)),
            zmask: consts((0..ZQ).map(|i| (1u64 << (26 - i)) - 1)),
            k_amask: c((1 << 27) - 1),
            k_lo21: c((1 << 21) - 1),
            k_sh21: c(21),
            k_fxmask: c((1 << FX) - 1),
            k_kz: c(ZERO_MAX),
            k_sh15: c(15),
            k_sh30: c(30),
            k_one_fx: c(1),
            k_lo15fx: c(0x7FFF),
            _dl: dl,
            _dz: dz,
            _zq: ZQ,
        }
    }
}

impl Logic for TokenStep {
    #[hdl_gen]
    fn update(&mut self) {
        // every register is free-running: loaded each cycle, reset to 0
        clock!(self, clock, a_v, a_nf, a_min16, a_minmag, a_minneg, a_maxmag, a_maxneg);
        clock!(self, clock, b_lo, b_ahi, b_bhi, c_v, c_nf, c_min16, c_d, c_minmag, m1_q, m1_r, m1_d0, m2_q, m2_nz, m3_c);
        clock!(self, clock, b_v, b_nf, b_min16, b_minmag, s1_v, s1_nf, s1_step, s1_m, s1_e, s1_mag, s1_neg);
        clock!(self, clock, s2_v, s2_nf, s2_step, s2_m, s2_e, s2_x2, s3_v, s3_nf, s3_step, s3_m, s3_e, s3_x);
        clock!(self, clock, e1_v, e1_nf, e1_step, e1_m, e1_e, e1_u, e1_z);
        clock!(self, clock, o_v, o_nf, o_meta, o_kk, o_m, o_esh, o_sz);
        self.a_v.reset.next = self.reset.val();
        self.a_nf.reset.next = self.reset.val();
        self.a_min16.reset.next = self.reset.val();
        self.a_minmag.reset.next = self.reset.val();
        self.a_minneg.reset.next = self.reset.val();
        self.a_maxmag.reset.next = self.reset.val();
        self.a_maxneg.reset.next = self.reset.val();
        self.b_v.reset.next = self.reset.val();
        self.b_nf.reset.next = self.reset.val();
        self.b_min16.reset.next = self.reset.val();
        self.b_lo.reset.next = self.reset.val();
        self.b_ahi.reset.next = self.reset.val();
        self.b_bhi.reset.next = self.reset.val();
        self.c_v.reset.next = self.reset.val();
        self.c_nf.reset.next = self.reset.val();
        self.c_min16.reset.next = self.reset.val();
        self.c_d.reset.next = self.reset.val();
        self.c_minmag.reset.next = self.reset.val();
        self.m1_q.reset.next = self.reset.val();
        self.m1_r.reset.next = self.reset.val();
        self.m1_d0.reset.next = self.reset.val();
        self.m2_q.reset.next = self.reset.val();
        self.m2_nz.reset.next = self.reset.val();
        self.m3_c.reset.next = self.reset.val();
        self.b_minmag.reset.next = self.reset.val();
        self.s1_v.reset.next = self.reset.val();
        self.s1_nf.reset.next = self.reset.val();
        self.s1_step.reset.next = self.reset.val();
        self.s1_m.reset.next = self.reset.val();
        self.s1_e.reset.next = self.reset.val();
        self.s1_mag.reset.next = self.reset.val();
        self.s1_neg.reset.next = self.reset.val();
        self.s2_v.reset.next = self.reset.val();
        self.s2_nf.reset.next = self.reset.val();
        self.s2_step.reset.next = self.reset.val();
        self.s2_m.reset.next = self.reset.val();
        self.s2_e.reset.next = self.reset.val();
        self.s2_x2.reset.next = self.reset.val();
        self.s3_v.reset.next = self.reset.val();
        self.s3_nf.reset.next = self.reset.val();
        self.s3_step.reset.next = self.reset.val();
        self.s3_m.reset.next = self.reset.val();
        self.s3_e.reset.next = self.reset.val();
        self.s3_x.reset.next = self.reset.val();
        self.e1_v.reset.next = self.reset.val();
        self.e1_nf.reset.next = self.reset.val();
        self.e1_step.reset.next = self.reset.val();
        self.e1_m.reset.next = self.reset.val();
        self.e1_e.reset.next = self.reset.val();
        self.e1_u.reset.next = self.reset.val();
        self.e1_z.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_nf.reset.next = self.reset.val();
        self.o_meta.reset.next = self.reset.val();
        self.o_kk.reset.next = self.reset.val();
        self.o_m.reset.next = self.reset.val();
        self.o_esh.reset.next = self.reset.val();
        self.o_sz.reset.next = self.reset.val();
        self.a_v.en.next = true;
        self.a_nf.en.next = true;
        self.a_min16.en.next = true;
        self.a_minmag.en.next = true;
        self.a_minneg.en.next = true;
        self.a_maxmag.en.next = true;
        self.a_maxneg.en.next = true;
        self.b_v.en.next = true;
        self.b_nf.en.next = true;
        self.b_min16.en.next = true;
        self.b_lo.en.next = true;
        self.b_ahi.en.next = true;
        self.b_bhi.en.next = true;
        self.c_v.en.next = true;
        self.c_nf.en.next = true;
        self.c_min16.en.next = true;
        self.c_d.en.next = true;
        self.c_minmag.en.next = true;
        self.m1_q.en.next = true;
        self.m1_r.en.next = true;
        self.m1_d0.en.next = true;
        self.m2_q.en.next = true;
        self.m2_nz.en.next = true;
        self.m3_c.en.next = true;
        self.b_minmag.en.next = true;
        self.s1_v.en.next = true;
        self.s1_nf.en.next = true;
        self.s1_step.en.next = true;
        self.s1_m.en.next = true;
        self.s1_e.en.next = true;
        self.s1_mag.en.next = true;
        self.s1_neg.en.next = true;
        self.s2_v.en.next = true;
        self.s2_nf.en.next = true;
        self.s2_step.en.next = true;
        self.s2_m.en.next = true;
        self.s2_e.en.next = true;
        self.s2_x2.en.next = true;
        self.s3_v.en.next = true;
        self.s3_nf.en.next = true;
        self.s3_step.en.next = true;
        self.s3_m.en.next = true;
        self.s3_e.en.next = true;
        self.s3_x.en.next = true;
        self.e1_v.en.next = true;
        self.e1_nf.en.next = true;
        self.e1_step.en.next = true;
        self.e1_m.en.next = true;
        self.e1_e.en.next = true;
        self.e1_u.en.next = true;
        self.e1_z.en.next = true;
        self.o_v.en.next = true;
        self.o_nf.en.next = true;
        self.o_meta.en.next = true;
        self.o_kk.en.next = true;
        self.o_m.en.next = true;
        self.o_esh.en.next = true;
        self.o_sz.en.next = true;
        for i in 0..self._dl {
            self.dl_v[i].clock.next = self.clock.val();
            self.dl_v[i].reset.next = self.reset.val();
            self.dl_v[i].en.next = true;
            self.dl_nf[i].clock.next = self.clock.val();
            self.dl_nf[i].reset.next = self.reset.val();
            self.dl_nf[i].en.next = true;
            self.dl_min16[i].clock.next = self.clock.val();
            self.dl_min16[i].reset.next = self.reset.val();
            self.dl_min16[i].en.next = true;
        }
        for i in 0..self._dz {
            self.dl_sz[i].clock.next = self.clock.val();
            self.dl_sz[i].reset.next = self.reset.val();
            self.dl_sz[i].en.next = true;
        }
        for i in 0..(self._zq + 1) {
            self.z_v[i].clock.next = self.clock.val();
            self.z_v[i].reset.next = self.reset.val();
            self.z_v[i].en.next = true;
            self.z_nf[i].clock.next = self.clock.val();
            self.z_nf[i].reset.next = self.reset.val();
            self.z_nf[i].en.next = true;
            self.z_step[i].clock.next = self.clock.val();
            self.z_step[i].reset.next = self.reset.val();
            self.z_step[i].en.next = true;
            self.z_m[i].clock.next = self.clock.val();
            self.z_m[i].reset.next = self.reset.val();
            self.z_m[i].en.next = true;
            self.z_e[i].clock.next = self.clock.val();
            self.z_e[i].reset.next = self.reset.val();
            self.z_e[i].en.next = true;
            self.z_x[i].clock.next = self.clock.val();
            self.z_x[i].reset.next = self.reset.val();
            self.z_x[i].en.next = true;
            self.z_b[i].clock.next = self.clock.val();
            self.z_b[i].reset.next = self.reset.val();
            self.z_b[i].en.next = true;
            self.z_rem[i].clock.next = self.clock.val();
            self.z_rem[i].reset.next = self.reset.val();
            self.z_rem[i].en.next = true;
            self.z_q[i].clock.next = self.clock.val();
            self.z_q[i].reset.next = self.reset.val();
            self.z_q[i].en.next = true;
        }

        // A: keys back to FP16 (spec §2.2.2), then magnitude and sign
        self.fmin.next = self.kmin.val() & self.k_low15.val();
        if !self.kmin.val().get_bit(15) {
            self.fmin.next = !self.kmin.val();
        }
        self.fmax.next = self.kmax.val() & self.k_low15.val();
        if !self.kmax.val().get_bit(15) {
            self.fmax.next = !self.kmax.val();
        }
        self.cvt_min.x.next = self.fmin.val();
        self.cvt_max.x.next = self.fmax.val();
        self.a_v.d.next = self.in_valid.val();
        self.a_nf.d.next = self.in_nf.val();
        self.a_min16.d.next = self.fmin.val();
        self.a_minmag.d.next = self.cvt_min.mag.val();
        self.a_minneg.d.next = self.cvt_min.neg.val();
        self.a_maxmag.d.next = self.cvt_max.mag.val();
        self.a_maxneg.d.next = self.cvt_max.neg.val();

        // B: D = x_max - x_min >= 0 as one add of magnitudes, or a
        // subtract by inversion and carry in; its low 21 bits
        self.opa.next = self.a_maxmag.q.val();
        self.opb.next = !self.a_minmag.q.val();
        self.cin.next = true;
        if self.a_minneg.q.val() {
            self.opb.next = self.a_minmag.q.val();
            self.cin.next = false;
            if self.a_maxneg.q.val() {
                self.opa.next = self.a_minmag.q.val();
                self.opb.next = !self.a_maxmag.q.val();
                self.cin.next = true;
            }
        }
        self.b_lo.d.next = bit_cast::<24, FX>((self.opa.val() & self.k_lo21.val()) + (self.opb.val() & self.k_lo21.val()))
            + bit_cast::<24, 1>(self.cin.val().into());
        self.b_ahi.d.next = self.opa.val() >> self.k_sh21.val();
        self.b_bhi.d.next = self.opb.val() >> self.k_sh21.val();
        self.b_minmag.d.next = self.a_minmag.q.val();
        self.b_min16.d.next = self.a_min16.q.val();
        self.b_v.d.next = self.a_v.q.val();
        self.b_nf.d.next = self.a_nf.q.val();
        // C: the high half with the low half's carry
        self.c_d.d.next = ((((self.b_ahi.q.val() + self.b_bhi.q.val()) + bit_cast::<FX, 1>(self.b_lo.q.val().get_bit(21).into()))
            << self.k_sh21.val())
            | (bit_cast::<FX, 24>(self.b_lo.q.val()) & self.k_lo21.val()))
            & self.k_fxmask.val();
        self.c_minmag.d.next = self.b_minmag.q.val();
        self.c_min16.d.next = self.b_min16.q.val();
        self.c_v.d.next = self.b_v.q.val();
        self.c_nf.d.next = self.b_nf.q.val();

        // M1: quotient digit 1 = d2 + (d2 + d1 >= K), remainder (d2 + d1) mod K
        self.zd.next = bit_cast::<16, FX>(self.c_minmag.q.val() >> self.k_sh30.val());
        self.zs.next = self.zd.val() + bit_cast::<16, FX>((self.c_minmag.q.val() >> self.k_sh15.val()) & self.k_lo15fx.val());
        self.m1_q.d.next = self.zd.val();
        self.m1_r.d.next = self.zs.val();
        if self.zs.val() >= self.k_kz.val() {
            self.m1_q.d.next = self.zd.val() + self.k_one16.val();
            self.m1_r.d.next = self.zs.val() - self.k_kz.val();
        }
        self.m1_d0.d.next = bit_cast::<16, FX>(self.c_minmag.q.val() & self.k_lo15fx.val());
        // M2: digit 0 = r1 + (r1 + d0 >= K); the remainder's being non-zero
        self.zs.next = self.m1_r.q.val() + self.m1_d0.q.val();
        self.m2_q.d.next = (bit_cast::<FX, 16>(self.m1_q.q.val()) << self.k_sh15.val()) | bit_cast::<FX, 16>(self.m1_r.q.val());
        self.m2_nz.d.next = self.zs.val() != self.k_zero16.val();
        if self.zs.val() >= self.k_kz.val() {
            self.m2_q.d.next =
                (bit_cast::<FX, 16>(self.m1_q.q.val()) << self.k_sh15.val()) | bit_cast::<FX, 16>(self.m1_r.q.val() + self.k_one16.val());
            self.m2_nz.d.next = self.zs.val() != self.k_kz.val();
        }
        // M3: the ceiling
        self.m3_c.d.next = self.m2_q.q.val();
        if self.m2_nz.q.val() {
            self.m3_c.d.next = self.m2_q.q.val() + self.k_one_fx.val();
        }

        // the two ceilings, each rounded up to FP16
        self.div_n.clock.next = self.clock.val();
        self.div_n.reset.next = self.reset.val();
        self.div_n.en.next = true;
        self.div_n.d.next = self.c_d.q.val();
        self.div_n.in_valid.next = self.c_v.q.val();
        self.ru_n.clock.next = self.clock.val();
        self.ru_n.reset.next = self.reset.val();
        self.ru_n.en.next = true;
        self.ru_n.v.next = self.div_n.c.val();
        self.ru_n.neg.next = false;
        self.ru_n.mode.next = self.k_mode_ru.val();
        self.ru_z.clock.next = self.clock.val();
        self.ru_z.reset.next = self.reset.val();
        self.ru_z.en.next = true;
        self.ru_z.v.next = self.m3_c.q.val();
        self.ru_z.neg.next = false;
        self.ru_z.mode.next = self.k_mode_ru.val();
        self.dl_v[0].d.next = self.c_v.q.val();
        self.dl_nf[0].d.next = self.c_nf.q.val();
        self.dl_min16[0].d.next = self.c_min16.q.val();
        for i in 1..self._dl {
            self.dl_v[i].d.next = self.dl_v[i - 1].q.val();
            self.dl_nf[i].d.next = self.dl_nf[i - 1].q.val();
            self.dl_min16[i].d.next = self.dl_min16[i - 1].q.val();
        }
        self.dl_sz[0].d.next = self.ru_z.y.val();
        for i in 1..self._dz {
            self.dl_sz[i].d.next = self.dl_sz[i - 1].q.val();
        }

        // S1: step = the larger (both are +0 or positive), m and e of
        // s = m 2^e (e = max(E - 1, 0)); x_min as magnitude and sign
        for l in self._dl..(self._dl + 1) {
            for k in self._dz..(self._dz + 1) {
                self.st.next = self.ru_n.y.val();
                if self.dl_sz[k - 1].q.val() > self.ru_n.y.val() {
                    self.st.next = self.dl_sz[k - 1].q.val();
                }
                self.s1_v.d.next = self.dl_v[l - 1].q.val();
                self.s1_nf.d.next = self.dl_nf[l - 1].q.val();
                self.cvt_x.x.next = self.dl_min16[l - 1].q.val();
            }
        }
        self.s1_step.d.next = self.st.val();
        self.s1_m.d.next = self.st.val() & self.k_mant.val();
        self.s1_e.d.next = self.k_zero8.val();
        if self.st.val().get_bits::<5>(10) != self.k_zero_e.val() {
            self.s1_m.d.next = (self.st.val() & self.k_mant.val()) | self.k_imp.val();
            self.s1_e.d.next = bit_cast::<8, 5>(self.st.val().get_bits::<5>(10) - self.k_one5.val());
        }
        self.s1_mag.d.next = self.cvt_x.mag.val();
        self.s1_neg.d.next = self.cvt_x.neg.val();

        // S2: x2 = 2 x_min, two's complement
        self.s2_x2.d.next = bit_cast::<48, FX>(self.s1_mag.q.val()) << self.k_one48.val();
        if self.s1_neg.q.val() {
            self.s2_x2.d.next = self.k_zero48.val() - (bit_cast::<48, FX>(self.s1_mag.q.val()) << self.k_one48.val());
        }
        self.s2_v.d.next = self.s1_v.q.val();
        self.s2_nf.d.next = self.s1_nf.q.val();
        self.s2_step.d.next = self.s1_step.q.val();
        self.s2_m.d.next = self.s1_m.q.val();
        self.s2_e.d.next = self.s1_e.q.val();

        // S3: X = floor(x2 / 2^e), an arithmetic shift (|X| < 2^27)
        self.s3_x.d.next = bit_cast::<ZW, 48>(self.s2_x2.q.val() >> self.s2_e.q.val());
        if self.s2_x2.q.val().get_bit(47) {
            self.s3_x.d.next = bit_cast::<ZW, 48>(!((!self.s2_x2.q.val()) >> self.s2_e.q.val()));
        }
        self.s3_v.d.next = self.s2_v.q.val();
        self.s3_nf.d.next = self.s2_nf.q.val();
        self.s3_step.d.next = self.s2_step.q.val();
        self.s3_m.d.next = self.s2_m.q.val();
        self.s3_e.d.next = self.s2_e.q.val();

        // S4: A2 = X + (2^16 + 1) m >= 0; the dividend floor(A2 / 2), its low bit
        self.a2.next = self.s3_x.q.val()
            + ((bit_cast::<ZW, 16>(self.s3_m.q.val()) << self.k_sh16.val()) | bit_cast::<ZW, 16>(self.s3_m.q.val()));
        self.z_rem[0].d.next = (self.a2.val() >> self.k_one_zw.val()) & self.k_amask.val();
        self.z_b[0].d.next = self.a2.val().get_bit(0);
        self.z_q[0].d.next = self.k_zero16.val();
        self.z_v[0].d.next = self.s3_v.q.val();
        self.z_nf[0].d.next = self.s3_nf.q.val();
        self.z_step[0].d.next = self.s3_step.q.val();
        self.z_m[0].d.next = self.s3_m.q.val();
        self.z_e[0].d.next = self.s3_e.q.val();
        self.z_x[0].d.next = self.s3_x.q.val();

        // sixteen restoring steps: step i takes weight 2^(15 - i) of z + 2^15
        for i in 0..self._zq {
            self.zstep[i].rem.next = self.z_rem[i].q.val();
            self.zm.next = self.z_m[i].q.val();
            self.zstep[i].dsh.next = bit_cast::<ZW, 16>(self.zm.val()) << self.zsh[i].val();
            self.z_rem[i + 1].d.next = self.zstep[i].rem_out.val() & self.zmask[i].val();
            self.z_q[i + 1].d.next = self.z_q[i].q.val() << self.k_one16.val();
            if self.zstep[i].take.val() {
                self.z_q[i + 1].d.next = (self.z_q[i].q.val() << self.k_one16.val()) | self.k_one16.val();
            }
            self.z_v[i + 1].d.next = self.z_v[i].q.val();
            self.z_nf[i + 1].d.next = self.z_nf[i].q.val();
            self.z_step[i + 1].d.next = self.z_step[i].q.val();
            self.z_m[i + 1].d.next = self.z_m[i].q.val();
            self.z_e[i + 1].d.next = self.z_e[i].q.val();
            self.z_x[i + 1].d.next = self.z_x[i].q.val();
            self.z_b[i + 1].d.next = self.z_b[i].q.val();
        }

        // E1: u = 2 R' + b - X (K = u 2^e), z = (z + 2^15) - 2^15
        for t in self._zq..(self._zq + 1) {
            self.zb.next = self.z_b[t].q.val();
            self.e1_u.d.next = (self.z_rem[t].q.val() << self.k_one_zw.val())
                + bit_cast::<ZW, 1>(self.zb.val().into())
                - self.z_x[t].q.val();
            self.e1_z.d.next = self.z_q[t].q.val() ^ self.k_zsign.val();
            self.e1_v.d.next = self.z_v[t].q.val();
            self.e1_nf.d.next = self.z_nf[t].q.val();
            self.e1_step.d.next = self.z_step[t].q.val();
            self.e1_m.d.next = self.z_m[t].q.val();
            self.e1_e.d.next = self.z_e[t].q.val();
        }

        // E2: K = u 2^e (u sign-extended); a zero step codes with z = K = 0
        self.uk.next = bit_cast::<KW, ZW>(self.e1_u.q.val());
        if self.e1_u.q.val().get_bit(31) {
            self.uk.next = bit_cast::<KW, ZW>(self.e1_u.q.val()) | self.k_sext.val();
        }
        self.o_kk.d.next = self.uk.val() << self.e1_e.q.val();
        self.o_meta.d.next = (bit_cast::<32, 16>(self.e1_step.q.val()) << self.k_sh16.val()) | bit_cast::<32, 16>(self.e1_z.q.val());
        self.o_sz.d.next = self.e1_step.q.val() == self.k_zero16.val();
        if self.e1_step.q.val() == self.k_zero16.val() {
            self.o_kk.d.next = self.k_zero_kw.val();
            self.o_meta.d.next = bit_cast::<32, 16>(self.k_zero16.val());
        }
        self.o_m.d.next = self.e1_m.q.val();
        self.o_esh.d.next = self.e1_e.q.val() + self.k_one8.val();
        self.o_v.d.next = self.e1_v.q.val();
        self.o_nf.d.next = self.e1_nf.q.val();
        self.out_valid.next = self.o_v.q.val();
        self.meta.next = self.o_meta.q.val();
        self.kk.next = self.o_kk.q.val();
        self.m.next = self.o_m.q.val();
        self.esh.next = self.o_esh.q.val();
        self.sz.next = self.o_sz.q.val();
        self.nf.next = self.o_nf.q.val();
    }
}
