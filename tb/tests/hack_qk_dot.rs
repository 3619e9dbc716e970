//! Co-simulation of `hack-qk-dot` (hdl/src/hack/qk_dot.rs) against
//! `sim::hack::dot::QkDot`, score for score, at every `hack-qk-dot` model
//! of tb/models.toml, on RTL and on the OSU018 netlists. Spec: docs/spec.md
//! §15.6, §15.8, §15.11, §15.16.1.
//!
//! Cases: Q loads and K tokens quantized by `sim` from the real slice and
//! synthetic values in both rounding modes, zero-range partitions, extreme
//! codes, random finite metadata and sums, non-finite metadata (flagged),
//! noise in unused bits; Q reloaded between tokens; random, bursty and
//! blocking stalls on all three streams; a reset at a random cycle with
//! tokens in flight. Every coverage point must be reached.

use tb::hack_qk_dot::{self as hq, case, case_of, cover, params_of, run, Kind, KINDS, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "hack-qk-dot";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..4, 10), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    let (cov, _) = models::sweep(UNIT, false, 3, POINTS, |info, cov| check(info, prop::cases(60), cov));
    cov.check();
}

#[test]
fn netlists_match_model() {
    let (cov, _) = models::sweep(UNIT, true, 1, POINTS, |info, cov| check(info, prop::cases(20), cov));
    cov.check();
}

const RESET_POINTS: &[&str] = &["reset with scores owed", "reset with nothing owed"];

/// Spec §1, §15.16.1: a reset at a random cycle of a random case; the
/// scores out before it are a prefix of the model's, and afterwards the
/// unit behaves as fresh out of reset (a second case matches the model).
#[test]
fn reset_with_traffic_in_flight() {
    let (cov, _) = models::sweep_as(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..3, 8), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(20), |m, (c, seed, at)| {
            let beats: usize = c.groups.iter().map(|g| g.q.len() + g.tokens.len() * p.parts()).sum();
            let r = hq::run_until(m, &p, c, at * (beats as u64 + 30) / 1000)?;
            match r.cut_owed {
                Some(n) => cov.hit(if n > 0 { "reset with scores owed" } else { "reset with nothing owed" }),
                None => m.reset(1),
            }
            let after = case_of(&p, 2, 4, *seed, [c.q_stall.clone(), c.k_stall.clone(), c.out_stall.clone()]);
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
    cov.check();
}

/// Spec §15.16.1: with no stalls, one K partition taken every cycle after
/// the load, one score every `head_dim / Pi` cycles, and the manifest's
/// latency from a token's last K beat to its score.
#[test]
fn full_rate_and_latency() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 1, 1, 9, [Stall::Never, Stall::Never, Stall::Never]);
        // one group of 40 tokens
        let mut c = c;
        let t = c.groups[0].tokens[0].clone();
        c.groups[0].tokens = (0..40).map(|_| t.clone()).collect();
        let r = run(&mut m, &p, &c).unwrap();
        let lat = r.first_latency.unwrap();
        println!("{}: {} scores, {} K beats in {} cycles, latency {lat}", info.name, r.scores, r.k_cycles.len(), r.cycles);
        assert_eq!(lat, info.latency().expect("manifest latency"), "{}: manifest latency", info.name);
        let k0 = r.k_cycles[0];
        for (i, &t) in r.k_cycles.iter().enumerate() {
            assert_eq!(t, k0 + i as u64, "{}: K beat {i} not on consecutive cycles", info.name);
        }
        let o0 = r.out_cycles[0];
        for (i, &t) in r.out_cycles.iter().enumerate() {
            assert_eq!(t, o0 + (i * p.parts()) as u64, "{}: score {i} not every {} cycles", info.name, p.parts());
        }
    }
}

/// Every partition kind is drawn at every parameter set (the case
/// generator alone, no hardware).
#[test]
fn case_generator_draws_every_kind() {
    for s in models::specs().iter().filter(|s| s.unit == UNIT) {
        let get = |k: &str, d: i64| s.params.get(k).and_then(|v| v.as_integer()).unwrap_or(d) as usize;
        let p = hq::DotParams {
            head_dim: get("head-dim", 128),
            partition: get("partition", 64),
            kv_bits: get("kv-bits", 2) as u32,
            qp_bits: get("qp-bits", 8) as u32,
        };
        let c = case_of(&p, 8, 30, 1, [Stall::Never, Stall::Never, Stall::Never]);
        let kinds: Vec<Kind> = c.groups.iter().flat_map(|g| g.q.iter().chain(g.tokens.iter().flatten())).map(|b| b.kind).collect();
        for k in KINDS {
            assert!(kinds.contains(&k), "{}: no {k:?} partition", s.name);
        }
    }
}
