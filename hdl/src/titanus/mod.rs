//! Titanus (GLSVLSI 2025) units: pruning unit, quantization unit (with its
//! non-zero quantizer) and dequantization unit. Spec: docs/spec.md §11.
pub mod dequantizer;
pub mod nzq;
pub mod pruner;
pub mod quantizer;
