//! The split multiply and the INT8 rounding of the Titanus dequantization
//! unit, shared by its table's load path (rec(0) = clamp(round(-z S))) and
//! by every lane (clamp(round((q - z) S))): `|d| S` as three partial
//! products of 3-bit slices of `|d|` (the project's multiplies are 16x16,
//! toolchain note 2, and one 16x16 product does not meet timing), their
//! sum one stage later, and the signed round-half-up to INT8 after that.
//! Three combinational blocks, so each stage's registers stay with their
//! owner. Paper: Titanus (GLSVLSI 2025) §3.1 (reconstruction), §4.4.
//! Spec: docs/spec.md §11.8.1 (rec(0)), §11.8.2 (reconstruction and its
//! rounding), §11.14.3 (stages).

use rust_hdl::prelude::*;

/// `|d| S` in three pieces: `p0 = d[2:0] S`, `p1 = d[5:3] S`,
/// `p2 = d[8:6] S` (`|d| < 2^9`). Combinational.
#[derive(LogicBlock)]
pub struct SplitMul {
    /// `|d|` (bits 8:0 used; the rest are 0).
    pub abs: Signal<In, Bits<16>>,
    /// The scale `S`.
    pub scale: Signal<In, Bits<16>>,
    /// The partial products, each below 2^19.
    pub p0: Signal<Out, Bits<20>>,
    pub p1: Signal<Out, Bits<20>>,
    pub p2: Signal<Out, Bits<20>>,
    ma: Signal<Local, Bits<16>>,
    prod: Signal<Local, Bits<32>>,
    lo3: Constant<Bits<16>>,
    three16: Constant<Bits<16>>,
    six16: Constant<Bits<16>>,
}

impl Default for SplitMul {
    fn default() -> Self {
        SplitMul {
            abs: Default::default(),
            scale: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            p2: Default::default(),
            ma: Default::default(),
            prod: Default::default(),
            lo3: Constant::new(7u64.into()),
            three16: Constant::new(3u64.into()),
            six16: Constant::new(6u64.into()),
        }
    }
}

impl Logic for SplitMul {
    #[hdl_gen]
    fn update(&mut self) {
        self.ma.next = self.abs.val() & self.lo3.val();
        self.prod.next = self.ma.val() * self.scale.val();
        self.p0.next = self.prod.val().get_bits::<20>(0);
        self.ma.next = (self.abs.val() >> self.three16.val()) & self.lo3.val();
        self.prod.next = self.ma.val() * self.scale.val();
        self.p1.next = self.prod.val().get_bits::<20>(0);
        self.ma.next = (self.abs.val() >> self.six16.val()) & self.lo3.val();
        self.prod.next = self.ma.val() * self.scale.val();
        self.p2.next = self.prod.val().get_bits::<20>(0);
    }
}

/// The split product's sum, `P = p0 + p1 2^3 + p2 2^6` (< 2^25).
/// Combinational.
#[derive(LogicBlock)]
pub struct SplitSum {
    /// The partial products of [`SplitMul`], registered.
    pub p0: Signal<In, Bits<20>>,
    pub p1: Signal<In, Bits<20>>,
    pub p2: Signal<In, Bits<20>>,
    /// `P`.
    pub psum: Signal<Out, Bits<25>>,
    three32: Constant<Bits<32>>,
    six32: Constant<Bits<32>>,
}

impl Default for SplitSum {
    fn default() -> Self {
        SplitSum {
            p0: Default::default(),
            p1: Default::default(),
            p2: Default::default(),
            psum: Default::default(),
            three32: Constant::new(3u64.into()),
            six32: Constant::new(6u64.into()),
        }
    }
}

impl Logic for SplitSum {
    #[hdl_gen]
    fn update(&mut self) {
        self.psum.next = bit_cast::<25, 20>(self.p0.val())
            + (bit_cast::<25, 20>(self.p1.val()) << self.three32.val())
            + (bit_cast::<25, 20>(self.p2.val()) << self.six32.val());
    }
}

/// `clamp(floor((+-P + 128) / 256))` to INT8: `floor((P + 128) / 256)`,
/// or `-floor((P + 127) / 256)` when negative (spec §11.8.2).
/// Combinational.
#[derive(LogicBlock)]
pub struct RoundI8 {
    /// `P = |d| S`, and the sign of `d`.
    pub p: Signal<In, Bits<25>>,
    pub neg: Signal<In, Bit>,
    /// The INT8 result.
    pub ro: Signal<Out, Bits<8>>,
    rp: Signal<Local, Bits<32>>,
    rt: Signal<Local, Bits<32>>,
    ru: Signal<Local, Bits<32>>,
    c127: Constant<Bits<32>>,
    c128: Constant<Bits<32>>,
    eight32: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
    min8: Constant<Bits<8>>,
    max8: Constant<Bits<8>>,
}

impl Default for RoundI8 {
    fn default() -> Self {
        RoundI8 {
            p: Default::default(),
            neg: Default::default(),
            ro: Default::default(),
            rp: Default::default(),
            rt: Default::default(),
            ru: Default::default(),
            c127: Constant::new(127u64.into()),
            c128: Constant::new(128u64.into()),
            eight32: Constant::new(8u64.into()),
            zero8: Constant::new(0u64.into()),
            min8: Constant::new(0x80u64.into()),
            max8: Constant::new(0x7Fu64.into()),
        }
    }
}

impl Logic for RoundI8 {
    #[hdl_gen]
    fn update(&mut self) {
        self.rp.next = bit_cast::<32, 25>(self.p.val());
        self.rt.next = self.rp.val() + self.c128.val();
        if self.neg.val() {
            self.rt.next = self.rp.val() + self.c127.val();
        }
        self.ru.next = self.rt.val() >> self.eight32.val();
        self.ro.next = self.ru.val().get_bits::<8>(0);
        if self.ru.val() > self.c127.val() {
            self.ro.next = self.max8.val();
        }
        if self.neg.val() {
            self.ro.next = self.zero8.val() - self.ru.val().get_bits::<8>(0);
            if self.ru.val() > self.c128.val() {
                self.ro.next = self.min8.val();
            }
        }
    }
}
