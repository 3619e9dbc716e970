//! Co-simulation of `hack-qk-dot` (hdl/src/hack/qk_dot.rs) against
//! `sim::hack::dot::QkDot`, score for score, at every `hack-qk-dot` model
//! of tb/models.toml, on RTL and on the OSU018 netlists. Spec: docs/spec.md
//! §15.6, §15.8, §15.11, §15.16.1. The tests are `tb::hack_qk_dot::tests`,
//! shared with the baseline (tb/tests/hack_deq_dot.rs).
//!
//! Cases: Q loads and K tokens quantized by `sim` from the real slice and
//! synthetic values in both rounding modes, zero-range partitions, extreme
//! codes, random finite metadata and sums, non-finite metadata (flagged),
//! noise in unused bits; Q reloaded between tokens; random, bursty and
//! blocking stalls on all three streams; a reset at a random cycle with
//! tokens in flight. Every coverage point must be reached.

tb::hack_dot_tests!("hack-qk-dot");
