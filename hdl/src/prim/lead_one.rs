//! Leading one of an unsigned value, combinational (spec §5.7).
//! `smear` has every bit at and below the leading one set (the value OR-ed
//! with itself shifted right by 1, 2, 4, 8, 16 and 32: six OR levels, no
//! priority chain); `pos` is the leading one's bit position, encoded from
//! the smear's one-hot edge by one OR-reduction per output bit. For FP16
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
    onehot: Signal<Local, Bits<FX>>,
    p: Signal<Local, Bits<6>>,
    /// Shift amounts 1, 2, 4, 8, 16, 32.
    sh: Vec<Constant<Bits<6>>>,
    /// Output bit k of `pos` is set by the edge at any position with bit k
    /// set: `sel[k]` has those positions.
    sel: Vec<Constant<Bits<FX>>>,
    bit: Vec<Constant<Bits<6>>>,
    zero: Constant<Bits<FX>>,
    zero6: Constant<Bits<6>>,
    one: Constant<Bits<6>>,
}

impl Default for LeadOne {
    fn default() -> Self {
        let sel = (0..6)
            .map(|k| Constant::new((0..FX).filter(|i| i >> k & 1 == 1).fold(0u64, |m, i| m | 1 << i).into()))
            .collect();
        LeadOne {
            v: Default::default(),
            smear: Default::default(),
            pos: Default::default(),
            s: Default::default(),
            onehot: Default::default(),
            p: Default::default(),
            sh: (0..6).map(|k| Constant::new((1u64 << k).into())).collect(),
            sel,
            bit: (0..6).map(|k| Constant::new((1u64 << k).into())).collect(),
            zero: Constant::new(0u64.into()),
            zero6: Constant::new(0u64.into()),
            one: Constant::new(1u64.into()),
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
        self.onehot.next = self.s.val() & !(self.s.val() >> self.one.val());
        self.p.next = self.zero6.val();
        for k in 0..6 {
            if (self.onehot.val() & self.sel[k].val()) != self.zero.val() {
                self.p.next = self.p.val() | self.bit[k].val();
            }
        }
        self.pos.next = self.p.val();
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
