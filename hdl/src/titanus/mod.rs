//! Titanus (GLSVLSI 2025) units: pruning and dequantization units (the
//! quantization unit is to come). Spec: docs/spec.md §11.
pub mod dequantizer;
pub mod pruner;
