//! An FP16 metadata value or operand as significand, shift and sign, after
//! the sanitising of spec §2.2.1 (NaN to +0, +-Inf to +-65504): `units(x) =
//! sig 2^e`, `sig = 1024 + m` (`m` when the exponent field is 0), `e =
//! max(E - 1, 0)`. Combinational. Spec: docs/spec.md §15.2, §15.16.1.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Fp16Sig {
    /// FP16 pattern, any (NaN and infinities included).
    pub x: Signal<In, Bits<16>>,
    /// Significand of the sanitised value, below 2^11.
    pub sig: Signal<Out, Bits<16>>,
    /// Shift, 0 to 29.
    pub e: Signal<Out, Bits<8>>,
    /// Sign of the sanitised value.
    pub neg: Signal<Out, Bit>,
    /// `x` was a NaN or an infinity.
    pub nonfinite: Signal<Out, Bit>,
    k_e31: Constant<Bits<5>>,
    k_e0: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_m0: Constant<Bits<10>>,
    k_imp: Constant<Bits<16>>,
    k_max: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_zero8: Constant<Bits<8>>,
    k_e29: Constant<Bits<8>>,
}

impl Default for Fp16Sig {
    fn default() -> Self {
        Fp16Sig {
            x: Default::default(),
            sig: Default::default(),
            e: Default::default(),
            neg: Default::default(),
            nonfinite: Default::default(),
            k_e31: Constant::new(31u64.into()),
            k_e0: Constant::new(0u64.into()),
            k_one5: Constant::new(1u64.into()),
            k_m0: Constant::new(0u64.into()),
            k_imp: Constant::new(1024u64.into()),
            k_max: Constant::new(2047u64.into()),
            k_zero16: Constant::new(0u64.into()),
            k_zero8: Constant::new(0u64.into()),
            k_e29: Constant::new(29u64.into()),
        }
    }
}

impl Logic for Fp16Sig {
    #[hdl_gen]
    fn update(&mut self) {
        self.sig.next = bit_cast::<16, 10>(self.x.val().get_bits::<10>(0));
        self.e.next = self.k_zero8.val();
        self.neg.next = self.x.val().get_bit(15);
        self.nonfinite.next = false;
        if self.x.val().get_bits::<5>(10) != self.k_e0.val() {
            self.sig.next = bit_cast::<16, 10>(self.x.val().get_bits::<10>(0)) | self.k_imp.val();
            self.e.next = bit_cast::<8, 5>(self.x.val().get_bits::<5>(10) - self.k_one5.val());
        }
        if self.x.val().get_bits::<5>(10) == self.k_e31.val() {
            self.nonfinite.next = true;
            if self.x.val().get_bits::<10>(0) != self.k_m0.val() {
                // NaN: +0
                self.sig.next = self.k_zero16.val();
                self.e.next = self.k_zero8.val();
                self.neg.next = false;
            } else {
                // infinity: +-65504 = 2047 * 2^29 units
                self.sig.next = self.k_max.val();
                self.e.next = self.k_e29.val();
            }
        }
    }
}
