//! Constructors for the `Vec` fields of blocks whose lane or channel count
//! is a parameter: rust-hdl needs every signal and register built before
//! `connect_all`, and these keep that one line per field.
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// `k` signals at their defaults.
pub fn sigs<D: Direction, T: Synth>(k: usize) -> Vec<Signal<D, T>> {
    (0..k).map(|_| Default::default()).collect()
}

/// `k` registers with synchronous reset (spec §5.1).
pub fn regs<T: Synth>(k: usize) -> Vec<Reg<T>> {
    (0..k).map(|_| Reg::default()).collect()
}

/// One constant per value, in order.
pub fn consts<const W: usize>(vals: impl IntoIterator<Item = u64>) -> Vec<Constant<Bits<W>>> {
    vals.into_iter().map(|v| Constant::new(v.into())).collect()
}
