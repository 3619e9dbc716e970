//! KIVI (ICML 2024): per-group asymmetric min-max codes (docs/spec.md §13).
//! `kivi-quantizer`: `quantizer` (axis token, V, §13.14.2) and
//! `quantizer_channel` (axis channel, K, §13.14.3); `kivi-dequantizer`:
//! packed words and a metadata word to FP16 values (§13.6, §13.14.1);
//! `split_diff`: a 42-bit difference over two stages.
pub mod dequantizer;
pub mod quantizer;
pub mod quantizer_channel;
pub mod split_diff;
