//! KIVI (ICML 2024): per-group asymmetric min-max codes (docs/spec.md §13).
//! `kivi-dequantizer`: packed words and a metadata word to FP16 values
//! (§13.6, §13.14).
pub mod dequantizer;
pub mod quantizer;
pub mod split_diff;
