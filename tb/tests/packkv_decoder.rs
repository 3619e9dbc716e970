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
    models::sweep_closed(UNIT, false, 5, POINTS, POINTS, |info, cov| check(info, prop::cases(48), cov));
}

#[test]
fn netlists_match_model() {
    let f = |info: &'static ModelInfo, cov: &tb::coverage::Coverage| check(info, prop::cases(32), cov);
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
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
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
}

/// Spec §14.14.2: with full input beats and no stalls, good blocks (with
/// and without a permutation, of every width) take no more cycles than
/// the sustained-rate rule gives them, 1% aside for the gearbox's refills,
/// and at `burst = 2` leave without a gap; prints elements per cycle over
/// whole blocks beside the rule's.
#[test]
fn full_rate() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        // good blocks only; the first seed with a permutation
        let c = (7..)
            .map(|seed| pd::Case { full_beats: true, ..pd::good_case_of(&p, 4, seed, Stall::Never, Stall::Never) })
            .find(|c| c.facts.perm_blocks > 0)
            .unwrap();
        assert!(c.facts.spoils.iter().all(|&s| s == pd::Spoil::None));
        let blocks: Vec<&[u32]> = c.transfers.iter().flat_map(|t| pd::blocks_of(t)).collect();
        let rule = p.rule_cycles(&blocks);
        let r = run(&mut m, &p, &c).unwrap();
        let (first, last) = (r.first_data.unwrap(), r.last_data.unwrap());
        // from the first word in to the last data beat out, less the
        // pipeline's latency
        let span = last - r.first_in.unwrap() + 1 - m.info().latency().unwrap();
        let elems = (c.facts.blocks as usize * p.block * p.c()) as f64;
        println!(
            "{}: {} blocks ({} with a permutation), {} data beats; {} cycles to the last ({:.2} elements per cycle), rule {} ({:.2}); first to last data beat {} cycles",
            info.name,
            c.facts.blocks,
            c.facts.perm_blocks,
            r.data_beats,
            span,
            elems / span as f64,
            rule,
            elems / rule as f64,
            last - first + 1
        );
        assert_eq!(r.data_beats as usize, c.facts.blocks as usize * p.beats());
        assert!(span * 100 <= rule * 101, "{}: {span} cycles, the rule gives {rule}", info.name);
        if p.burst == 2 {
            // the queue never runs dry once the first data beat is out: a
            // beat every cycle, one end beat between blocks
            let n = c.facts.blocks as u64;
            assert_eq!(last - first + 1, n * p.beats() as u64 + n - 1, "{}: a gap in the output", info.name);
        }
    }
}
