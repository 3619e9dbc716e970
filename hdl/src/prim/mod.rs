//! Reusable primitives (spec §3, §5). Each is usable on its own as an
//! `rtl-gen` unit, so that its test can drive it directly.
pub mod div_const;
pub mod div_round;
pub mod fifo;
pub mod fold_zero;
pub mod fp16;
pub mod lead_one;
pub mod mul;
pub mod counter;
pub mod ram;
pub mod reg;
pub mod zero_insert;
pub mod zero_remove;
pub mod vecs;
