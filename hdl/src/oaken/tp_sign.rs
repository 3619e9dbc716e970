//! One sign test of the per-token unit's U2, for a shifted group: is
//! `a + b - lo - hi < 0`, with every operand held as `x1` and a sign
//! (`x = x1 + neg`). Four signed terms and their four +1s in three
//! carry-save levels, then one add; the sign of the sum is the answer.
//! Paper: Oaken (ISCA 2025) §4.4 (the shifted groups' values x - hi and
//! lo - x). Spec: docs/spec.md §2.5, §2.14 (stage U2).
//!
//! Combinational. Which side candidate is a shifted group's v_min (and
//! which its v_max) is a compare of two differences: `xmin_U - hi < lo -
//! xmax_L` iff `xmin_U + xmax_L - lo - hi < 0`; testing the operands
//! directly keeps the compare off the subtracts' path.

use crate::prim::fp16::FX;
use rust_hdl::prelude::*;

/// Width of the carry-save sign tests: four terms below 2^40 each.
pub const SW: usize = FX + 2;

#[derive(LogicBlock)]
pub struct TpSignTest {
    /// first added term, x1
    pub a: Signal<In, Bits<FX>>,
    /// first term is negative
    pub a_neg: Signal<In, Bit>,
    /// second added term, x1
    pub b: Signal<In, Bits<FX>>,
    /// second term is negative
    pub b_neg: Signal<In, Bit>,
    /// the group's lower threshold (subtracted), x1
    pub lo: Signal<In, Bits<FX>>,
    /// lower threshold is negative
    pub lo_neg: Signal<In, Bit>,
    /// the group's upper threshold (subtracted), x1
    pub hi: Signal<In, Bits<FX>>,
    /// upper threshold is negative
    pub hi_neg: Signal<In, Bit>,
    /// a + b - lo - hi < 0
    pub lt: Signal<Out, Bit>,
    // the four terms (x1 sign-extended, the subtracted ones inverted) and
    // their +1s: a_neg, b_neg, !lo_neg, !hi_neg
    w: Vec<Signal<Local, Bits<SW>>>,
    wk: Signal<Local, Bits<SW>>,
    /// (inverted into 1-bit locals: rust-hdl writes a cast of `!b` as
    /// `N'(~b)`, which Verilog inverts at N bits)
    nlo: Signal<Local, Bit>,
    nhi: Signal<Local, Bit>,
    /// (a cast, then its inversion: Yosys 0.23 cannot parse `~44'(x)`)
    wx: Signal<Local, Bits<SW>>,
    ws: Signal<Local, Bits<SW>>,
    wc: Signal<Local, Bits<SW>>,
    wsum: Signal<Local, Bits<SW>>,
    one_sw: Constant<Bits<SW>>,
    /// The bits of SW above FX: a negative x1's sign extension.
    ext_sw: Constant<Bits<SW>>,
    msb_sw: Constant<Bits<32>>,
}

impl Default for TpSignTest {
    fn default() -> Self {
        TpSignTest {
            a: Default::default(),
            a_neg: Default::default(),
            b: Default::default(),
            b_neg: Default::default(),
            lo: Default::default(),
            lo_neg: Default::default(),
            hi: Default::default(),
            hi_neg: Default::default(),
            lt: Default::default(),
            w: (0..4).map(|_| Default::default()).collect(),
            wk: Default::default(),
            nlo: Default::default(),
            nhi: Default::default(),
            wx: Default::default(),
            ws: Default::default(),
            wc: Default::default(),
            wsum: Default::default(),
            one_sw: Constant::new(1u64.into()),
            ext_sw: Constant::new((((1u64 << SW) - 1) ^ ((1u64 << FX) - 1)).into()),
            msb_sw: Constant::new((SW as u64 - 1).into()),
        }
    }
}

impl Logic for TpSignTest {
    #[hdl_gen]
    fn update(&mut self) {
        self.nlo.next = !self.lo_neg.val();
        self.nhi.next = !self.hi_neg.val();
        // -lo, -hi
        self.wx.next = bit_cast::<SW, FX>(self.lo.val());
        if self.lo_neg.val() {
            self.wx.next = bit_cast::<SW, FX>(self.lo.val()) | self.ext_sw.val();
        }
        self.w[2].next = !self.wx.val();
        self.wx.next = bit_cast::<SW, FX>(self.hi.val());
        if self.hi_neg.val() {
            self.wx.next = bit_cast::<SW, FX>(self.hi.val()) | self.ext_sw.val();
        }
        self.w[3].next = !self.wx.val();
        // a + b
        self.w[0].next = bit_cast::<SW, FX>(self.a.val());
        if self.a_neg.val() {
            self.w[0].next = bit_cast::<SW, FX>(self.a.val()) | self.ext_sw.val();
        }
        self.w[1].next = bit_cast::<SW, FX>(self.b.val());
        if self.b_neg.val() {
            self.w[1].next = bit_cast::<SW, FX>(self.b.val()) | self.ext_sw.val();
        }
        self.wk.next = bit_cast::<SW, 1>(self.a_neg.val().into())
            + bit_cast::<SW, 1>(self.b_neg.val().into())
            + bit_cast::<SW, 1>(self.nlo.val().into())
            + bit_cast::<SW, 1>(self.nhi.val().into());
        self.ws.next = self.w[0].val() ^ self.w[1].val() ^ self.w[2].val();
        self.wc.next = ((self.w[0].val() & self.w[1].val())
            | (self.w[0].val() & self.w[2].val())
            | (self.w[1].val() & self.w[2].val()))
            << self.one_sw.val();
        self.wsum.next = self.ws.val() ^ self.wc.val() ^ self.w[3].val();
        self.wc.next = ((self.ws.val() & self.wc.val())
            | (self.ws.val() & self.w[3].val())
            | (self.wc.val() & self.w[3].val()))
            << self.one_sw.val();
        self.ws.next = self.wsum.val() ^ self.wc.val() ^ self.wk.val();
        self.wc.next = ((self.wsum.val() & self.wc.val())
            | (self.wsum.val() & self.wk.val())
            | (self.wc.val() & self.wk.val()))
            << self.one_sw.val();
        self.wsum.next = self.ws.val() + self.wc.val();
        self.lt.next = self.wsum.val().get_bit(self.msb_sw.val().index());
    }
}
