//! Co-simulation of `hack-deq-dot` (hdl/src/hack/deq_dot.rs), the
//! dequantize-first baseline, against `sim::hack::baseline::DeqDot`, score
//! for score, at every `hack-deq-dot` model of tb/models.toml, on RTL and on
//! the OSU018 netlists. Spec: docs/spec.md §15.10, §15.11, §15.16.2. The
//! tests are `tb::hack_qk_dot::tests`, shared with `hack-qk-dot`.
//!
//! Cases: FP16 Q (real, synthetic, flat, +-65504 and 0, random patterns,
//! NaN and infinities: flagged); K tokens quantized by `sim` from the real
//! slice and synthetic values in both rounding modes, zero-range partitions, extreme
//! codes, random finite metadata and sums, non-finite metadata (flagged),
//! noise in unused bits; Q reloaded between tokens; random, bursty and
//! blocking stalls on all three streams; a reset at a random cycle with
//! tokens in flight. Every coverage point must be reached.

tb::hack_dot_tests!("hack-deq-dot");
