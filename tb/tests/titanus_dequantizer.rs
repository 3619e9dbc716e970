//! Co-simulation of the Titanus dequantization unit
//! (hdl/src/titanus/dequantizer.rs) against `sim::titanus::dequantizer`,
//! beat for beat and counter for counter, at every `titanus-dequantizer`
//! model of tb/models.toml, on RTL and on the OSU018 netlists. Spec:
//! docs/spec.md §11.8, §11.13, §11.14.3.
//!
//! Cases: scale-zero loads (channel or level out of range now and then,
//! scales from 256 to 65535, zero points over the whole 9-bit range, starts
//! so that several levels of a channel apply at different positions), table
//! clears, tokens at positions before, at and past the starts, all-pruned
//! tokens, random codes (so some equal the zero point), random, bursty and
//! blocking stalls; loads offered while the last beats of a token still wait
//! for the output (the unit holds the load until they have read the table).
//! Every coverage point must be reached.

use tb::coverage::Coverage;
use tb::stalls::Stall;
use tb::titanus_dequantizer::{self as td, case, case_of, cover, params_of, run, LOAD_CYCLES, POINTS};
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "titanus-dequantizer";

fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..10), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
    // the directed cases, once each (their rare points whatever the seed)
    for (k, c) in td::directed_cases(&p).into_iter().enumerate() {
        run_property(&format!("{name}_directed{k}"), info, proptest::strategy::Just(c), 1, |m, c| {
            let r = run(m, &p, c)?;
            cover(cov, &r);
            Ok(())
        });
    }
}

/// Points only the hardware's timing decides (the directed cases' blocked
/// and stalled output and their loads right after tokens reach them).
const HW_POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "load while records in flight",
    "load held for record beats ahead",
];

/// The directed cases alone, on `sim` (no hardware): at every parameter set
/// of tb/models.toml it reaches every point the model decides (a level
/// above 0 needs two levels), so that no run's coverage hangs on the
/// random seed.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    let specs: Vec<_> = tb::models::specs().iter().filter(|s| s.unit == UNIT).collect();
    assert!(specs.len() >= 3, "tb/models.toml has {} dequantizer entries", specs.len());
    for s in &specs {
        let p = td::params_of_spec(&s.params);
        let cov = Coverage::new(&format!("titanus_dequantizer directed case ({})", s.name), POINTS);
        for c in td::directed_cases(&p) {
            cover(&cov, &td::model_run(&p, &c));
        }
        let required: Vec<&str> = POINTS
            .iter()
            .copied()
            .filter(|q| !HW_POINTS.contains(q) && (p.max_levels > 1 || *q != "level above 0 used"))
            .collect();
        cov.check_points(&required);
    }
}

#[test]
fn rtl_matches_model() {
    models::sweep_closed(UNIT, false, 3, POINTS, POINTS, |info, cov| check(info, prop::cases(200), cov));
}

/// Points of `reset_with_traffic_in_flight`: what a reset found in flight.
const RESET_POINTS: &[&str] =
    &["reset with a token partly taken", "reset with output beats owed", "reset during a load"];

/// Spec §11.13: a reset at a random cycle of a random case (mostly past
/// its first loads, among the tokens: beats taken in part, output beats
/// owed, a load in progress), on every RTL model: the beats out before it
/// are the model's, and afterwards the unit behaves as fresh out of reset:
/// a case that starts with a token before any load (the table is empty)
/// matches a fresh model, its skip counters included.
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let any = || proptest::prelude::any::<u64>();
        let strategy = (case(p, 1..10), any(), 0u64..1000, 0u8..4);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(12), |m, (c, seed, at, early)| {
            // the case's cycles without stalls: loads, then beats
            let beats = p.channels / p.lanes;
            let loads = c.ops.iter().filter(|o| !matches!(o, td::Op::Token { .. })).count() as u64;
            let tokens = c.ops.len() as u64 - loads;
            let (lo, hi) = (
                if *early == 0 { 0 } else { LOAD_CYCLES * loads * 3 / 4 },
                LOAD_CYCLES * loads + 2 * tokens * beats as u64 + 20,
            );
            let r = td::run_until(m, &p, c, 2 + lo + at * (hi - lo) / 1000)?;
            match r.cut {
                Some(f) => {
                    cov.hit_if("reset with a token partly taken", f.partial_token);
                    cov.hit_if("reset with output beats owed", f.owed > 0);
                    cov.hit_if("reset during a load", f.load);
                }
                None => m.reset(1),
            }
            let after = td::after_reset_case(&p, 3, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, POINTS, |info, cov| check(info, prop::cases(60), cov));
}

/// Full rate and latency: with no stalls and no loads between them, one
/// record beat (lanes elements) per cycle.
#[test]
fn full_rate_and_latency() {
    let info = models::get("titanus_dequantizer_l16");
    let mut m = Model::new(info);
    m.reset(1);
    let p = params_of(&m);
    let mut c = case_of(&p, 12, 11, Stall::Never, Stall::Never);
    // loads first, then the tokens back to back
    c.ops.sort_by_key(|o| matches!(o, tb::titanus_dequantizer::Op::Token { .. }));
    let r = run(&mut m, &p, &c).unwrap();
    let lat = r.first_latency.unwrap();
    let loads = c.ops.len() as u64 - 12;
    println!(
        "titanus_dequantizer_l16: {} loads ({LOAD_CYCLES} cycles each), then {} beats; {} cycles in all, latency {lat} cycles, {} elements per cycle",
        loads, r.beats, r.cycles, p.lanes
    );
    assert_eq!(r.cycles, LOAD_CYCLES * loads + r.beats as u64 + lat, "one beat per cycle after the loads");
    assert_eq!(lat, info.latency().expect("manifest latency"), "manifest latency");
}
