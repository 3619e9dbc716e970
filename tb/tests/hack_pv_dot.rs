//! Co-simulation of `hack-pv-dot` (hdl/src/hack/pv_dot.rs) against
//! `sim::hack::dot::pv_dot`, output for output, at every `hack-pv-dot`
//! model of tb/models.toml, on RTL and on the OSU018 netlists. Spec:
//! docs/spec.md §15.6, §15.9, §15.11, §15.16.5. The tests are
//! `tb::hack_pv_dot::tests`.
//!
//! Cases: queries of 0 to 3 closed blocks and open partitions of 0 to
//! `Pi - 1` tokens; P and V partitions quantized by `sim` from the real
//! slice, synthetic values and host softmax probabilities (both rounding
//! modes), zero-range partitions, extreme codes, random finite metadata and
//! sums, non-finite metadata (flagged); tail probabilities from the softmax,
//! any finite FP16 and NaN or infinities; random, bursty and blocking
//! stalls on all five streams and idle cycles; a reset at a random cycle;
//! every tail length at every set; full rate and the manifest's latency.

#[test]
fn rtl_matches_model() {
    tb::hack_pv_dot::tests::matches_model(false);
}

#[test]
fn netlists_match_model() {
    tb::hack_pv_dot::tests::matches_model(true);
}

/// Spec §1, §15.16.5.
#[test]
fn reset_with_traffic_in_flight() {
    tb::hack_pv_dot::tests::reset_in_flight();
}

/// Spec §15.9: the open partition at every length 0 .. Pi - 1.
#[test]
fn every_tail_length() {
    tb::hack_pv_dot::tests::every_tail_length();
}

/// Spec §15.16.5: V beats at full rate, outputs every cycle, the
/// manifest's latency.
#[test]
fn full_rate_and_latency() {
    tb::hack_pv_dot::tests::full_rate_and_latency();
}
