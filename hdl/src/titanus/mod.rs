//! Titanus (GLSVLSI 2025) units: pruning unit, quantization unit (with its
//! non-zero quantizer) and dequantization unit. Spec: docs/spec.md §11.
pub mod dequantizer;
pub mod dq_arith;
pub mod dq_config;
pub mod dq_counters;
pub mod dq_lane;
pub mod nzq;
pub mod pruner;
pub mod qu_channel;
pub mod qu_config;
pub mod qu_input;
pub mod qu_lane;
pub mod qu_monitor;
pub mod qu_output;
pub mod qu_prefill;
pub mod qu_scheduler;
pub mod qu_sequence;
pub mod quantizer;
