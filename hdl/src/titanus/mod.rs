//! Titanus (GLSVLSI 2025) units: pruning unit, quantization unit (with its
//! non-zero quantizer), and (on its branch) the dequantization unit.
//! Spec: docs/spec.md §11.
pub mod nzq;
pub mod pruner;
pub mod quantizer;
