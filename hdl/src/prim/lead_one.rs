//! Leading one of an unsigned value, combinational (spec §5.7).
//! `smear` has every bit at and below the leading one set (the value OR-ed
//! with itself shifted right by 1, 2, 4, 8, 16 and 32: six OR levels, no
//! priority chain); `pos` is the leading one's bit position, from a tree of
//! (any bit set, position) pairs over `v` itself, six levels of one 2:1
//! select each: found from the smear's edge instead, ABC mapped the smear's
//! OR prefix as a serial chain on the way to `pos` (the per-token unit's R1,
//! 3.99 ns at the quantizer's defaults). For FP16
//! rounding (spec §2.2.4) `smear >> 11` is the mask of the bits below the
//! grid spacing, so rounding needs no normalising shift.

use super::fp16::FX;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LeadOne {
    /// Unsigned value, below 2^42.
    pub v: Signal<In, Bits<FX>>,
    /// Bits 0..=pos set; 0 when `v` = 0.
    pub smear: Signal<Out, Bits<FX>>,
    /// floor(log2 v); 0 when `v` = 0.
    pub pos: Signal<Out, Bits<6>>,
    s: Signal<Local, Bits<FX>>,
    w: Signal<Local, Bits<64>>,
    /// Tree level k (1..=6): node i covers bits [i 2^k, (i + 1) 2^k) of
    /// `w`; `qk[i]` is the highest one's position, `ak[i - 1]` says one is
    /// set (node 0's flag is never read).
    a1: Vec<Signal<Local, Bit>>,
    q1: Vec<Signal<Local, Bits<6>>>,
    a2: Vec<Signal<Local, Bit>>,
    q2: Vec<Signal<Local, Bits<6>>>,
    a3: Vec<Signal<Local, Bit>>,
    q3: Vec<Signal<Local, Bits<6>>>,
    a4: Vec<Signal<Local, Bit>>,
    q4: Vec<Signal<Local, Bits<6>>>,
    /// (only the upper node's `a5` is read)
    a5: Signal<Local, Bit>,
    q5: Vec<Signal<Local, Bits<6>>>,
    q6: Signal<Local, Bits<6>>,
    /// Shift amounts 1, 2, 4, 8, 16, 32.
    sh: Vec<Constant<Bits<6>>>,
    bit: Vec<Constant<Bits<6>>>,
    zero6: Constant<Bits<6>>,
}

impl Default for LeadOne {
    fn default() -> Self {
        fn sigs<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
            (0..n).map(|_| Default::default()).collect()
        }
        LeadOne {
            v: Default::default(),
            smear: Default::default(),
            pos: Default::default(),
            s: Default::default(),
            w: Default::default(),
            a1: sigs(31),
            q1: sigs(32),
            a2: sigs(15),
            q2: sigs(16),
            a3: sigs(7),
            q3: sigs(8),
            a4: sigs(3),
            q4: sigs(4),
            a5: Default::default(),
            q5: sigs(2),
            q6: Default::default(),
            sh: (0..6).map(|k| Constant::new((1u64 << k).into())).collect(),
            bit: (0..6).map(|k| Constant::new((1u64 << k).into())).collect(),
            zero6: Constant::new(0u64.into()),
        }
    }
}

impl Logic for LeadOne {
    #[hdl_gen]
    fn update(&mut self) {
        self.s.next = self.v.val();
        for k in 0..6 {
            self.s.next = self.s.val() | (self.s.val() >> self.sh[k].val());
        }
        self.smear.next = self.s.val();
        self.w.next = bit_cast::<64, FX>(self.v.val());
        // a node's flag is read only by its parent's flag and select, and
        // the lowest node's by nothing: ak[i - 1] holds node i's (i >= 1)
        for i in 0..32 {
            self.q1[i].next = self.zero6.val();
            if self.w.val().get_bit(2 * i + 1) {
                self.q1[i].next = self.bit[0].val();
            }
        }
        for i in 1..32 {
            self.a1[i - 1].next = self.w.val().get_bit(2 * i + 1) | self.w.val().get_bit(2 * i);
        }
        for i in 0..16 {
            self.q2[i].next = self.q1[2 * i].val();
            if self.a1[2 * i].val() {
                self.q2[i].next = self.q1[2 * i + 1].val() | self.bit[1].val();
            }
        }
        for i in 1..16 {
            self.a2[i - 1].next = self.a1[2 * i].val() | self.a1[2 * i - 1].val();
        }
        for i in 0..8 {
            self.q3[i].next = self.q2[2 * i].val();
            if self.a2[2 * i].val() {
                self.q3[i].next = self.q2[2 * i + 1].val() | self.bit[2].val();
            }
        }
        for i in 1..8 {
            self.a3[i - 1].next = self.a2[2 * i].val() | self.a2[2 * i - 1].val();
        }
        for i in 0..4 {
            self.q4[i].next = self.q3[2 * i].val();
            if self.a3[2 * i].val() {
                self.q4[i].next = self.q3[2 * i + 1].val() | self.bit[3].val();
            }
        }
        for i in 1..4 {
            self.a4[i - 1].next = self.a3[2 * i].val() | self.a3[2 * i - 1].val();
        }
        for i in 0..2 {
            self.q5[i].next = self.q4[2 * i].val();
            if self.a4[2 * i].val() {
                self.q5[i].next = self.q4[2 * i + 1].val() | self.bit[4].val();
            }
        }
        self.a5.next = self.a4[2].val() | self.a4[1].val();
        self.q6.next = self.q5[0].val();
        if self.a5.val() {
            self.q6.next = self.q5[1].val() | self.bit[5].val();
        }
        self.pos.next = self.q6.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_leading_zeros() {
        let mut b = LeadOne::default();
        b.connect_all();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut values: Vec<u64> = (0..FX).map(|i| 1u64 << i).chain([0, (1 << FX) - 1]).collect();
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x >> (x % 40)) & ((1 << FX) - 1));
        }
        for v in values {
            b.v.next = v.into();
            assert!(simulate(&mut b, 100));
            let pos = if v == 0 { 0 } else { 63 - v.leading_zeros() as u64 };
            let smear = if v == 0 { 0 } else { (2u64 << pos) - 1 };
            assert_eq!(b.pos.val().index() as u64, pos, "v = {v:#x}");
            assert_eq!(b.smear.val().to_u64(), smear, "v = {v:#x}");
        }
    }
}
