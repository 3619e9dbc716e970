//! Titanus (GLSVLSI 2025) units: pruning unit, and (to come) the
//! quantization and dequantization units. Spec: docs/spec.md §11.
pub mod pruner;
