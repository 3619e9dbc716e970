//! Co-simulation of the Titanus pruning unit (hdl/src/titanus/pruner.rs)
//! against `sim::titanus::pruner` and `sim::titanus::params::ConfigTable`,
//! beat for beat, at every `titanus-pruner` model of tb/models.toml, on RTL
//! and on the OSU018 netlists. Spec: docs/spec.md §11.3, §11.4, §11.13,
//! §11.14.
//!
//! Cases: tokens with thresholds from the edges (0, 1, 127, 128, 129, 255)
//! and the paper's small range, elements at the threshold, -128, 127, 0,
//! all-pruned tokens, layers out of range, legal and rejected table writes
//! before and during the stream, random, bursty and blocking stalls on both
//! sides. Every coverage point must be reached.

use tb::coverage::Coverage;
use tb::stalls::Stall;
use tb::titanus_pruner::{self as tp, case, case_of, cover, params_of, run, POINTS};
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "titanus-pruner";

fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..7), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &p, &r);
        Ok(())
    });
    // the directed case, once (its rare points whatever the seed)
    run_property(&format!("{name}_directed"), info, proptest::strategy::Just(tp::directed_case(&p)), 1, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &p, &r);
        Ok(())
    });
}

/// Points only the hardware's timing decides (the directed case's blocked
/// output and its write during the stream reach them).
const HW_POINTS: &[&str] = &[
    "input blocked (pipeline full)",
    "output held (backpressure)",
    "back-to-back output beats",
    "write while beats in flight",
];

/// The directed case alone, on `sim` (no hardware): at every parameter set
/// of tb/models.toml it reaches every point the model decides (with 256
/// layers no 8-bit layer is out of range), so that no run's coverage hangs
/// on the random seed.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    let specs: Vec<_> = models::specs().iter().filter(|s| s.unit == UNIT).collect();
    assert!(specs.len() >= 3, "tb/models.toml has {} pruner entries", specs.len());
    let oob = ["write rejected: layer out of range", "beat of a layer out of range"];
    for s in &specs {
        let p = tp::params_of_spec(&s.params);
        let cov = Coverage::new(&format!("titanus_pruner directed case ({})", s.name), POINTS);
        cover(&cov, &p, &tp::model_run(&p, &tp::directed_case(&p)));
        let required: Vec<&str> =
            POINTS.iter().copied().filter(|q| !HW_POINTS.contains(q) && (p.layers < 256 || !oob.contains(q))).collect();
        cov.check_points(&required);
    }
}

#[test]
fn rtl_matches_model() {
    models::sweep_closed(UNIT, false, 3, POINTS, POINTS, |info, cov| check(info, prop::cases(200), cov));
}

#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, POINTS, |info, cov| check(info, prop::cases(40), cov));
}

/// Full rate and latency at the defaults: with no stalls a beat (2 x lanes
/// elements, K and V) is taken and shown every cycle.
#[test]
fn full_rate_and_latency() {
    let info = models::get("titanus_pruner");
    let mut m = Model::new(info);
    m.reset(1);
    let p = params_of(&m);
    let c = case_of(&p, 16, 7, Stall::Never, Stall::Never);
    let c = tp::Case { live: vec![], ..c };
    let r = run(&mut m, &p, &c).unwrap();
    let lat = r.first_latency.unwrap();
    println!(
        "titanus_pruner: {} beats in {} cycles after the writes ({} elements per cycle, K and V), latency {lat} cycles",
        r.beats,
        r.cycles,
        2 * p.lanes
    );
    assert_eq!(r.cycles, r.beats as u64 + lat, "one beat per cycle after the first");
    assert_eq!(lat as u32, info.latency().expect("manifest latency") as u32, "manifest latency");
}

/// A reset with beats in the skid and the pipeline (output stalled) and
/// thresholds written: afterwards nothing stale comes out and every
/// threshold is back to 0 (the case after it is predicted from a fresh
/// table), on every model, RTL and netlists.
#[test]
fn reset_with_beats_in_flight() {
    let mut infos = models::of_unit(UNIT, false);
    infos.extend(models::of_unit(UNIT, true));
    let cov = Coverage::new("titanus_pruner (reset)", &["beats in flight at reset"]);
    for info in infos {
        let p = params_of(&Model::new(info));
        let name = format!("{}_reset", info.name);
        run_property(&name, info, case(p, 1..3), prop::cases(12), |m, c| {
            let inflight = tp::fill_then_reset(m, &p, c.seed);
            cov.add("beats in flight at reset", inflight as u64);
            let c = tp::Case { writes: vec![], ..c.clone() };
            run(m, &p, &c).map(|_| ())
        });
    }
    cov.check();
}
