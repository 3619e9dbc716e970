//! `x - y` of two values in units given as magnitude and sign (below 2^40,
//! `Fp16ToUnits`), known to be `>= 0`, over two pipeline stages of 21 bits
//! each: no carry runs more than 22 bits in a 4 ns cycle on OSU018 (one
//! 42-bit add after a select took 4.6 ns there).
//! Paper: KIVI (ICML 2024), the group's range and each code's offset from
//! the minimum. Spec: docs/spec.md §13.14.2 (F2/F3 and C2/C3).
//!
//! Both are one add of the magnitudes, `a + (b or ~b) + sub`: `|x| - |y|`
//! when `y >= 0` (then `x >= 0` too, or `x = -0`), `|x| + |y|` when `y < 0
//! <= x`, `|y| - |x|` when both are negative: `swap` (`a = |y|`, `b =
//! |x|`) is `x < 0 and y < 0`, `sub` is `y >= 0 or x < 0` ([`ops`]). The
//! caller registers `swap` and `sub` a stage ahead, one pair per
//! difference, so that the operand select fans out from its own flip-flops
//! (from one shared sign bit, through the AND and its buffers, the 32-lane
//! select took 1.4 ns of the stage). `DiffLo` gives the low half and its
//! carry; the caller registers it with the high halves and the two flags,
//! and `DiffHi` chooses the same operands and adds the high half.

use crate::prim::fp16::FX;
use rust_hdl::prelude::*;

/// Bits per half.
pub const FH: usize = 21;

/// `(swap, sub)` for signs `xneg`, `yneg` (software form, for tests).
pub fn ops(xneg: bool, yneg: bool) -> (bool, bool) {
    (xneg && yneg, !yneg || xneg)
}

/// The low half of `x - y` and its carry out (bit 21), from the low
/// halves of the magnitudes and the two flags.
#[derive(LogicBlock)]
pub struct DiffLo {
    pub xl: Signal<In, Bits<FH>>,
    pub yl: Signal<In, Bits<FH>>,
    pub swap: Signal<In, Bit>,
    pub sub: Signal<In, Bit>,
    pub lo: Signal<Out, Bits<22>>,
    a: Signal<Local, Bits<FH>>,
    b: Signal<Local, Bits<FH>>,
    one: Constant<Bits<22>>,
}

impl Default for DiffLo {
    fn default() -> Self {
        Self::new()
    }
}

impl DiffLo {
    pub fn new() -> Self {
        DiffLo {
            xl: Default::default(),
            yl: Default::default(),
            swap: Default::default(),
            sub: Default::default(),
            lo: Default::default(),
            a: Default::default(),
            b: Default::default(),
            one: Constant::new(1u64.into()),
        }
    }
}

impl Logic for DiffLo {
    #[hdl_gen]
    fn update(&mut self) {
        self.a.next = self.xl.val();
        self.b.next = self.yl.val();
        if self.swap.val() {
            self.a.next = self.yl.val();
            self.b.next = self.xl.val();
        }
        if self.sub.val() {
            self.b.next = !self.b.val();
        }
        self.lo.next = bit_cast::<22, FH>(self.a.val()) + bit_cast::<22, FH>(self.b.val());
        if self.sub.val() {
            self.lo.next = bit_cast::<22, FH>(self.a.val()) + bit_cast::<22, FH>(self.b.val()) + self.one.val();
        }
    }
}

/// `x - y` from the high halves, the flags and `DiffLo`'s result.
#[derive(LogicBlock)]
pub struct DiffHi {
    pub xh: Signal<In, Bits<FH>>,
    pub yh: Signal<In, Bits<FH>>,
    pub swap: Signal<In, Bit>,
    pub sub: Signal<In, Bit>,
    pub lo: Signal<In, Bits<22>>,
    pub d: Signal<Out, Bits<FX>>,
    a: Signal<Local, Bits<FH>>,
    b: Signal<Local, Bits<FH>>,
    h: Signal<Local, Bits<FH>>,
    l: Signal<Local, Bits<FH>>,
    one: Constant<Bits<FH>>,
    sh: Constant<Bits<FX>>,
    top: Constant<Bits<32>>,
}

impl Default for DiffHi {
    fn default() -> Self {
        Self::new()
    }
}

impl DiffHi {
    pub fn new() -> Self {
        DiffHi {
            xh: Default::default(),
            yh: Default::default(),
            swap: Default::default(),
            sub: Default::default(),
            lo: Default::default(),
            d: Default::default(),
            a: Default::default(),
            b: Default::default(),
            h: Default::default(),
            l: Default::default(),
            one: Constant::new(1u64.into()),
            sh: Constant::new((FH as u64).into()),
            top: Constant::new((FH as u64).into()),
        }
    }
}

impl Logic for DiffHi {
    #[hdl_gen]
    fn update(&mut self) {
        self.a.next = self.xh.val();
        self.b.next = self.yh.val();
        if self.swap.val() {
            self.a.next = self.yh.val();
            self.b.next = self.xh.val();
        }
        if self.sub.val() {
            self.b.next = !self.b.val();
        }
        self.h.next = self.a.val() + self.b.val();
        if self.lo.val().get_bit(self.top.val().index()) {
            self.h.next = self.a.val() + self.b.val() + self.one.val();
        }
        self.l.next = self.lo.val().get_bits::<FH>(0);
        self.d.next = (bit_cast::<FX, FH>(self.h.val()) << self.sh.val()) | bit_cast::<FX, FH>(self.l.val());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(x: i64, y: i64) -> Bits<FX> {
        let mut lo = DiffLo::new();
        let mut hi = DiffHi::new();
        lo.connect_all();
        hi.connect_all();
        let low = (1u64 << FH) - 1;
        let (swap, sub) = ops(x < 0, y < 0);
        lo.xl.next = (x.unsigned_abs() & low).into();
        lo.yl.next = (y.unsigned_abs() & low).into();
        lo.swap.next = swap;
        lo.sub.next = sub;
        assert!(simulate(&mut lo, 100));
        hi.xh.next = (x.unsigned_abs() >> FH).into();
        hi.yh.next = (y.unsigned_abs() >> FH).into();
        hi.swap.next = swap;
        hi.sub.next = sub;
        hi.lo.next = lo.lo.val();
        assert!(simulate(&mut hi, 100));
        hi.d.val()
    }

    /// Every sign case, carries across the halves, the extremes.
    #[test]
    fn exact_difference() {
        let top = (1i64 << 40) - 1;
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        let mut cases =
            vec![(0, 0), (top, -top), (top, 0), (0, -top), (-5, -top), (1 << 21, (1 << 21) - 1), (-(1 << 21), -(1 << 22))];
        for _ in 0..3000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let a = (r % (2 * top as u64 + 1)) as i64 - top;
            let b = ((r >> 20) % (2 * top as u64 + 1)) as i64 - top;
            cases.push((a.max(b), a.min(b)));
        }
        for (x, y) in cases {
            assert_eq!(diff(x, y), Bits::<FX>::from((x - y) as u64), "{x} - {y}");
        }
    }
}
