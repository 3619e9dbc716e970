//! Oaken (ISCA 2025) models: online-offline hybrid KV quantization.
pub mod dequantizer;
pub mod format;
pub mod mmu;
pub mod mmu_metrics;
pub mod params;
pub mod profile;
pub mod quantizer;
pub mod thresholds;

#[cfg(test)]
mod spec_examples;
