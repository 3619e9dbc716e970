//! KIVI (ICML 2024; jy-yuan/KIVI) models: asymmetric min-max KV codes, K per
//! channel over blocks of tokens, V per token over groups of channels, with a
//! full-precision residual (docs/spec.md §13).
pub mod authors;
pub mod cache;
pub mod dequantizer;
pub mod format;
pub mod metrics;
pub mod params;
pub mod quantizer;

#[cfg(test)]
mod spec_examples;
