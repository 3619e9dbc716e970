//! Co-simulation of `packkv-decoder` (hdl/src/packkv/decoder.rs) against
//! `sim::packkv::codec::decode_stream` and the token grid's `decode`, beat
//! for beat, at every `packkv-decoder` model of tb/models.toml, on RTL and
//! on the OSU018 netlists. Spec: docs/spec.md §14.4, §14.6-§14.8, §14.14.2.
//!
//! Cases: K/V pairs of blocks from quantized tokens (real slice, synthetic,
//! flat, zero, non-finite, random patterns), with and without median
//! repacking, in transfers of up to four blocks whose middle block may be
//! spoiled each way of §14.7; random, bursty and blocking stalls on both
//! sides; a reset at a random cycle; full rate. Every coverage point must
//! be reached.

use tb::packkv_decoder::{self as pd, case, case_of, cover, params_of, run, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "packkv-decoder";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..4), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    let (cov, _) = models::sweep(UNIT, false, 5, POINTS, |info, cov| check(info, prop::cases(48), cov));
    cov.check();
}

#[test]
fn netlists_match_model() {
    let f = |info: &'static ModelInfo, cov: &tb::coverage::Coverage| check(info, prop::cases(16), cov);
    // every point but multi-word beats (both netlist sets take one word a
    // beat) and long blocks (their blocks stay below 2^16 bits)
    let need: Vec<&str> = POINTS.iter().copied().filter(|&p| p != "beat of several words" && p != pd::LONG_BLOCK).collect();
    models::sweep_closed(UNIT, true, 1, POINTS, &need, f);
}

const RESET_POINTS: &[&str] = &["reset in flight"];

/// Spec §1, §14.14.2: a reset at a random cycle: the beats out before it
/// agree with the model, and afterwards the unit decodes a fresh stream.
#[test]
fn reset_with_traffic_in_flight() {
    let (cov, _) = models::sweep_as(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..3), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(16), |m, (c, seed, at)| {
            let words: usize = c.transfers.iter().map(|t| t.len()).sum();
            let span = (words + 2 * c.facts.blocks as usize * p.beats()) as u64;
            let r = pd::run_until(m, &p, c, at * span / 1000)?;
            if r.cut_owed {
                cov.hit("reset in flight");
            } else {
                m.reset(1);
            }
            let after = case_of(&p, 1, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
    cov.check();
}

/// Spec §14.14.2: with no stalls, a good block's data beats come out one
/// per cycle once its fields are in, at most `fields` cycles apart per pack
/// row; prints elements per cycle over whole blocks.
#[test]
fn full_rate() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = pd::Case { full_beats: true, ..case_of(&p, 4, 7, Stall::Never, Stall::Never) };
        let r = run(&mut m, &p, &c).unwrap();
        let span = r.last_data.unwrap() - r.first_data.unwrap() + 1;
        println!(
            "{}: {} blocks, {} data beats in {} cycles ({:.2} elements per cycle), {} cycles in all",
            info.name,
            c.facts.blocks,
            r.data_beats,
            span,
            (r.data_beats * p.lanes as u64) as f64 / span as f64,
            r.cycles
        );
        assert!(r.data_beats > 0);
    }
}
