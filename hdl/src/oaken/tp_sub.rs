//! One subtract of the per-token unit's U2: `a - b` for operands held as
//! `x1` and a sign, `x = x1 + neg` (x1 the magnitude, inverted when
//! negative), written as P + Q + K with one carry-save level: P = x1(a),
//! Q = !x1(b), K = (a < 0) + (b >= 0).
//! Paper: Oaken (ISCA 2025) §4.3 Eq. 2 (the group's range), §4.4 (the
//! shifted groups' values x - hi and lo - x). Spec: docs/spec.md §2.5 (what
//! v is per group), §2.6 (D = v_max - v_min), §2.14 (stage U2).
//!
//! Combinational. U1 stores operands in this form so that no inversion by
//! the sign (a fan-out to every bit) sits on U2's path; the token_params
//! instances take: a plain group's D, and a shifted group's four side
//! candidates.

use crate::prim::fp16::FX;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct TpSub {
    /// minuend: x1 (magnitude, inverted when negative)
    pub a: Signal<In, Bits<FX>>,
    /// minuend is negative
    pub a_neg: Signal<In, Bit>,
    /// subtrahend: x1
    pub b: Signal<In, Bits<FX>>,
    /// subtrahend is negative
    pub b_neg: Signal<In, Bit>,
    /// a - b, FX bits (two's complement)
    pub d: Signal<Out, Bits<FX>>,
    /// (inverted into a 1-bit local: rust-hdl writes a cast of `!b` as
    /// `N'(~b)`, which Verilog inverts at N bits)
    nb: Signal<Local, Bit>,
    db: Signal<Local, Bits<FX>>,
    dk: Signal<Local, Bits<FX>>,
    ds: Signal<Local, Bits<FX>>,
    dc: Signal<Local, Bits<FX>>,
    one_fx: Constant<Bits<FX>>,
}

impl Default for TpSub {
    fn default() -> Self {
        TpSub {
            a: Default::default(),
            a_neg: Default::default(),
            b: Default::default(),
            b_neg: Default::default(),
            d: Default::default(),
            nb: Default::default(),
            db: Default::default(),
            dk: Default::default(),
            ds: Default::default(),
            dc: Default::default(),
            one_fx: Constant::new(1u64.into()),
        }
    }
}

impl Logic for TpSub {
    #[hdl_gen]
    fn update(&mut self) {
        self.nb.next = !self.b_neg.val();
        self.db.next = !self.b.val();
        self.dk.next = bit_cast::<FX, 1>(self.a_neg.val().into()) + bit_cast::<FX, 1>(self.nb.val().into());
        self.ds.next = self.a.val() ^ self.db.val() ^ self.dk.val();
        self.dc.next = ((self.a.val() & self.db.val()) | (self.a.val() & self.dk.val()) | (self.db.val() & self.dk.val()))
            << self.one_fx.val();
        self.d.next = self.ds.val() + self.dc.val();
    }
}
