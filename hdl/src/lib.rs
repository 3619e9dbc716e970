//! kvforge hardware library, described with rust-hdl.
//!
//! Conventions (docs/spec.md §1): every register is a [`prim::reg::Reg`]
//! with synchronous reset; multi-lane datapaths are `Vec`s of per-lane
//! signals so that the lane count is a run-time generator parameter; the
//! generator (`rtl-gen`) packs those into buses in a thin top-level wrapper.
//! rust-hdl's own simulator is not used: Verilator is the simulator of
//! record, checked against the `sim` golden models.
pub mod prim;
pub mod oaken;
pub mod titanus;
pub mod kivi;
pub mod packkv;
pub mod hack;
