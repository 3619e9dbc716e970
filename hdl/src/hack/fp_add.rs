//! One binary32 addition of the dequantize-first baseline's adder tree
//! (spec §15.10, §15.16.2), on unpacked operands: sign, exponent `e` and a
//! 24-bit significand `m` (bit 23 set, or `m = 0` for zero) with value `m
//! 2^(e - 71)`, so every product of two FP16 values has `e >= 0` and no
//! subnormal or overflow can occur. Round to nearest even; an exact zero is
//! `+0` (`e = m = 0`). Five stages, each loading on `en`:
//!
//! 1. compare `{e, m}` and order the operands (the larger is `big`);
//! 2. align the smaller, three extra bits (guard, round, sticky);
//! 3. add or subtract (`big - small >= 0`);
//! 4. normalise: a carry shifts right by one, otherwise the leading zeros
//!    are shifted out (16, 8, 4, 2, 1) and their count subtracted once;
//! 5. round and renormalise a carry.

use crate::prim::reg::{reg_logic, Reg};
use rust_hdl::prelude::*;

pub const LATENCY: usize = 5;

#[derive(LogicBlock)]
pub struct FpAdd {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset
    pub reset: Signal<In, Bit>,
    /// pipeline advance
    pub en: Signal<In, Bit>,
    /// operand a: sign
    pub a_neg: Signal<In, Bit>,
    /// operand a: exponent
    pub a_e: Signal<In, Bits<8>>,
    /// operand a: significand
    pub a_m: Signal<In, Bits<24>>,
    /// operand b: sign
    pub b_neg: Signal<In, Bit>,
    /// operand b: exponent
    pub b_e: Signal<In, Bits<8>>,
    /// operand b: significand
    pub b_m: Signal<In, Bits<24>>,
    /// the sum: sign
    pub y_neg: Signal<Out, Bit>,
    /// the sum: exponent
    pub y_e: Signal<Out, Bits<8>>,
    /// the sum: significand
    pub y_m: Signal<Out, Bits<24>>,
    s1_bm: Reg<Bits<24>>,
    s1_be: Reg<Bits<8>>,
    s1_bn: Reg<Bit>,
    s1_sm: Reg<Bits<24>>,
    s1_d: Reg<Bits<8>>,
    s1_sub: Reg<Bit>,
    s2_big: Reg<Bits<28>>,
    s2_small: Reg<Bits<28>>,
    s2_e: Reg<Bits<8>>,
    s2_n: Reg<Bit>,
    s2_sub: Reg<Bit>,
    s3_r: Reg<Bits<28>>,
    s3_e: Reg<Bits<8>>,
    s3_n: Reg<Bit>,
    s4_m: Reg<Bits<27>>,
    s4_e: Reg<Bits<8>>,
    s4_n: Reg<Bit>,
    s4_zero: Reg<Bit>,
    s5_m: Reg<Bits<24>>,
    s5_e: Reg<Bits<8>>,
    s5_n: Reg<Bit>,
    ka: Signal<Local, Bits<32>>,
    kb: Signal<Local, Bits<32>>,
    x: Signal<Local, Bits<59>>,
    dc: Signal<Local, Bits<8>>,
    al: Signal<Local, Bits<28>>,
    norm: Signal<Local, Bits<27>>,
    ex: Signal<Local, Bits<8>>,
    lz: Signal<Local, Bits<8>>,
    mr: Signal<Local, Bits<25>>,
    k_sh24: Constant<Bits<32>>,
    k_sh35: Constant<Bits<32>>,
    k_sh3: Constant<Bits<32>>,
    k_d31: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_one28: Constant<Bits<28>>,
    k_one25: Constant<Bits<25>>,
    k_c16: Constant<Bits<32>>,
    k_c8: Constant<Bits<32>>,
    k_c4: Constant<Bits<32>>,
    k_c2: Constant<Bits<32>>,
    k_c1: Constant<Bits<32>>,
    k_l16: Constant<Bits<8>>,
    k_l8: Constant<Bits<8>>,
    k_l4: Constant<Bits<8>>,
    k_l2: Constant<Bits<8>>,
    k_z32: Constant<Bits<32>>,
    k_z16: Constant<Bits<16>>,
    k_z8: Constant<Bits<8>>,
    k_z4: Constant<Bits<4>>,
    k_z2: Constant<Bits<2>>,
    k_z28: Constant<Bits<28>>,
    k_z24: Constant<Bits<24>>,
}

impl Default for FpAdd {
    fn default() -> Self {
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        FpAdd {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            a_neg: Default::default(),
            a_e: Default::default(),
            a_m: Default::default(),
            b_neg: Default::default(),
            b_e: Default::default(),
            b_m: Default::default(),
            y_neg: Default::default(),
            y_e: Default::default(),
            y_m: Default::default(),
            s1_bm: Reg::default(),
            s1_be: Reg::default(),
            s1_bn: Reg::default(),
            s1_sm: Reg::default(),
            s1_d: Reg::default(),
            s1_sub: Reg::default(),
            s2_big: Reg::default(),
            s2_small: Reg::default(),
            s2_e: Reg::default(),
            s2_n: Reg::default(),
            s2_sub: Reg::default(),
            s3_r: Reg::default(),
            s3_e: Reg::default(),
            s3_n: Reg::default(),
            s4_m: Reg::default(),
            s4_e: Reg::default(),
            s4_n: Reg::default(),
            s4_zero: Reg::default(),
            s5_m: Reg::default(),
            s5_e: Reg::default(),
            s5_n: Reg::default(),
            ka: Default::default(),
            kb: Default::default(),
            x: Default::default(),
            dc: Default::default(),
            al: Default::default(),
            norm: Default::default(),
            ex: Default::default(),
            lz: Default::default(),
            mr: Default::default(),
            k_sh24: c32(24),
            k_sh35: c32(35),
            k_sh3: c32(3),
            k_d31: c8(31),
            k_one8: c8(1),
            k_one28: Constant::new(1u64.into()),
            k_one25: Constant::new(1u64.into()),
            k_c16: c32(16),
            k_c8: c32(8),
            k_c4: c32(4),
            k_c2: c32(2),
            k_c1: c32(1),
            k_l16: c8(16),
            k_l8: c8(8),
            k_l4: c8(4),
            k_l2: c8(2),
            k_z32: c32(0),
            k_z16: Constant::new(0u64.into()),
            k_z8: c8(0),
            k_z4: Constant::new(0u64.into()),
            k_z2: Constant::new(0u64.into()),
            k_z28: Constant::new(0u64.into()),
            k_z24: Constant::new(0u64.into()),
        }
    }
}

reg_logic!(FpAdd;
    regs [s1_bm, s1_be, s1_bn, s1_sm, s1_d, s1_sub, s2_big, s2_small, s2_e, s2_n, s2_sub,
          s3_r, s3_e, s3_n, s4_m, s4_e, s4_n, s4_zero, s5_m, s5_e, s5_n];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        self.s1_bm.en.next = self.en.val();
        self.s1_be.en.next = self.en.val();
        self.s1_bn.en.next = self.en.val();
        self.s1_sm.en.next = self.en.val();
        self.s1_d.en.next = self.en.val();
        self.s1_sub.en.next = self.en.val();
        self.s2_big.en.next = self.en.val();
        self.s2_small.en.next = self.en.val();
        self.s2_e.en.next = self.en.val();
        self.s2_n.en.next = self.en.val();
        self.s2_sub.en.next = self.en.val();
        self.s3_r.en.next = self.en.val();
        self.s3_e.en.next = self.en.val();
        self.s3_n.en.next = self.en.val();
        self.s4_m.en.next = self.en.val();
        self.s4_e.en.next = self.en.val();
        self.s4_n.en.next = self.en.val();
        self.s4_zero.en.next = self.en.val();
        self.s5_m.en.next = self.en.val();
        self.s5_e.en.next = self.en.val();
        self.s5_n.en.next = self.en.val();

        // 1: the larger magnitude first
        self.ka.next = (bit_cast::<32, 8>(self.a_e.val()) << self.k_sh24.val()) | bit_cast::<32, 24>(self.a_m.val());
        self.kb.next = (bit_cast::<32, 8>(self.b_e.val()) << self.k_sh24.val()) | bit_cast::<32, 24>(self.b_m.val());
        self.s1_sub.d.next = self.a_neg.val() ^ self.b_neg.val();
        if self.kb.val() > self.ka.val() {
            self.s1_bm.d.next = self.b_m.val();
            self.s1_be.d.next = self.b_e.val();
            self.s1_bn.d.next = self.b_neg.val();
            self.s1_sm.d.next = self.a_m.val();
            self.s1_d.d.next = self.b_e.val() - self.a_e.val();
        } else {
            self.s1_bm.d.next = self.a_m.val();
            self.s1_be.d.next = self.a_e.val();
            self.s1_bn.d.next = self.a_neg.val();
            self.s1_sm.d.next = self.b_m.val();
            self.s1_d.d.next = self.a_e.val() - self.b_e.val();
        }

        // 2: the smaller aligned, bits [26:3] against the larger's; what
        // falls below bit 0 is ORed into it (sticky); from d = 27 on only the
        // sticky bit is left, so d is capped at 31
        self.dc.next = self.s1_d.q.val();
        if self.s1_d.q.val() > self.k_d31.val() {
            self.dc.next = self.k_d31.val();
        }
        self.x.next = (bit_cast::<59, 24>(self.s1_sm.q.val()) << self.k_sh35.val()) >> self.dc.val();
        self.al.next = bit_cast::<28, 27>(self.x.val().get_bits::<27>(32));
        if self.x.val().get_bits::<32>(0) != self.k_z32.val() {
            self.al.next = self.al.val() | self.k_one28.val();
        }
        self.s2_small.d.next = self.al.val();
        self.s2_big.d.next = bit_cast::<28, 24>(self.s1_bm.q.val()) << self.k_sh3.val();
        self.s2_e.d.next = self.s1_be.q.val();
        self.s2_n.d.next = self.s1_bn.q.val();
        self.s2_sub.d.next = self.s1_sub.q.val();

        // 3: add or subtract
        self.s3_r.d.next = self.s2_big.q.val() + self.s2_small.q.val();
        if self.s2_sub.q.val() {
            self.s3_r.d.next = self.s2_big.q.val() - self.s2_small.q.val();
        }
        self.s3_e.d.next = self.s2_e.q.val();
        self.s3_n.d.next = self.s2_n.q.val();

        // 4: normalise to bit 26
        self.norm.next = self.s3_r.q.val().get_bits::<27>(0);
        self.ex.next = self.s3_e.q.val();
        self.lz.next = self.k_z8.val();
        if self.s3_r.q.val().get_bit(27) {
            self.norm.next = self.s3_r.q.val().get_bits::<27>(1);
            if self.s3_r.q.val().get_bit(0) {
                self.norm.next = self.s3_r.q.val().get_bits::<27>(1) | bit_cast::<27, 28>(self.k_one28.val());
            }
            self.ex.next = self.s3_e.q.val() + self.k_one8.val();
        } else {
            // The shift amount is gathered bit by bit and subtracted once:
            // five 8-bit subtractions in series missed 4 ns (hack-deq-dot).
            if self.norm.val().get_bits::<16>(11) == self.k_z16.val() {
                self.norm.next = self.norm.val() << self.k_c16.val();
                self.lz.next = self.lz.val() | self.k_l16.val();
            }
            if self.norm.val().get_bits::<8>(19) == self.k_z8.val() {
                self.norm.next = self.norm.val() << self.k_c8.val();
                self.lz.next = self.lz.val() | self.k_l8.val();
            }
            if self.norm.val().get_bits::<4>(23) == self.k_z4.val() {
                self.norm.next = self.norm.val() << self.k_c4.val();
                self.lz.next = self.lz.val() | self.k_l4.val();
            }
            if self.norm.val().get_bits::<2>(25) == self.k_z2.val() {
                self.norm.next = self.norm.val() << self.k_c2.val();
                self.lz.next = self.lz.val() | self.k_l2.val();
            }
            if !self.norm.val().get_bit(26) {
                self.norm.next = self.norm.val() << self.k_c1.val();
                self.lz.next = self.lz.val() | self.k_one8.val();
            }
            self.ex.next = self.s3_e.q.val() - self.lz.val();
        }
        self.s4_m.d.next = self.norm.val();
        self.s4_e.d.next = self.ex.val();
        self.s4_n.d.next = self.s3_n.q.val();
        self.s4_zero.d.next = self.s3_r.q.val() == self.k_z28.val();

        // 5: round to nearest even on guard and sticky
        self.mr.next = bit_cast::<25, 24>(self.s4_m.q.val().get_bits::<24>(3));
        if self.s4_m.q.val().get_bit(2) & (self.s4_m.q.val().get_bit(1) | self.s4_m.q.val().get_bit(0) | self.mr.val().get_bit(0)) {
            self.mr.next = self.mr.val() + self.k_one25.val();
        }
        self.s5_m.d.next = self.mr.val().get_bits::<24>(0);
        self.s5_e.d.next = self.s4_e.q.val();
        if self.mr.val().get_bit(24) {
            self.s5_m.d.next = self.mr.val().get_bits::<24>(1);
            self.s5_e.d.next = self.s4_e.q.val() + self.k_one8.val();
        }
        self.s5_n.d.next = self.s4_n.q.val();
        if self.s4_zero.q.val() {
            self.s5_m.d.next = self.k_z24.val();
            self.s5_e.d.next = self.k_z8.val();
            self.s5_n.d.next = false;
        }
        self.y_neg.next = self.s5_n.q.val();
        self.y_e.next = self.s5_e.q.val();
        self.y_m.next = self.s5_m.q.val();
    }
);
