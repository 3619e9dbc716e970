//! Titanus (GLSVLSI 2025) models: cascade pruning-quantization (CPQ) of an
//! INT8 KV cache with the hierarchical quantization extension (HQE).
//! Spec: docs/spec.md §11.
pub mod dequantizer;
pub mod int8;
pub mod metrics;
pub mod params;
pub mod profile;
pub mod pruner;
pub mod quantizer;

#[cfg(test)]
mod spec_examples;
