//! Co-simulation of `hack-quantizer`, axis token (hdl/src/hack/quantizer.rs
//! on KIVI's engine, hdl/src/kivi/quantizer.rs), against
//! `sim::hack::quantizer::Quantizer::quantize_vector`, partition beat for
//! partition beat (packed codes, metadata word, code sum, last,
//! nonfinite), at every `hack-quantizer` model of tb/models.toml, on RTL
//! and on the OSU018 netlists. Spec: docs/spec.md §15.2-§15.5, §15.7,
//! §15.11, §15.16.4.
//!
//! Both rounding modes: one `Quantizer` codes a whole case, so the LFSR
//! words of the stochastic sets are checked across vectors, and a reset
//! must reload the seed. Cases: K/Q heads and P rows of 1 to 4
//! partitions; real, synthetic, flat, non-finite, random and wide-range
//! values; partitions of two values (extreme codes and sums); random,
//! bursty and blocking stalls on both sides, idle cycles with noise on the
//! inputs; a reset at a random cycle. Every coverage point must be reached.

use tb::hack_quantizer::{self as hq, case, case_of, cover, params_of, run, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "hack-quantizer";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..8), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    let (cov, _) = models::sweep(UNIT, false, 5, POINTS, |info, cov| check(info, prop::cases(100), cov));
    cov.check();
}

#[test]
fn netlists_match_model() {
    let (cov, _) = models::sweep(UNIT, true, 1, POINTS, |info, cov| check(info, prop::cases(40), cov));
    cov.check();
}

const RESET_POINTS: &[&str] = &["reset with partition beats owed", "reset with nothing owed"];

/// Spec §1, §15.4, §15.16.4: a reset at a random cycle (a vector partly in,
/// partitions in the slots, the pipeline or held at the output): the beats
/// out before it are a prefix of the model's, and afterwards the unit
/// behaves as fresh out of reset (a new partition at element 0, the LFSR
/// at its seed).
#[test]
fn reset_with_traffic_in_flight() {
    let (cov, _) = models::sweep_as(UNIT, Some("reset in flight"), false, 5, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..5), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(24), |m, (c, seed, at)| {
            let beats: usize = c.vectors.iter().map(|v| v.x.len() / p.lanes).sum();
            let r = hq::run_until(m, &p, c, at * (beats as u64 + 40) / 1000)?;
            match r.cut_owed {
                Some(n) => cov.hit(if n > 0 { "reset with partition beats owed" } else { "reset with nothing owed" }),
                None => m.reset(1),
            }
            let after = case_of(&p, 2, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
    cov.check();
}

/// Spec §15.16.4: with no stalls the input is never refused (`lanes`
/// elements every cycle, vectors back to back), a partition beat leaves
/// per `Pi / lanes` cycles, and the first comes the manifest's latency
/// after its first input beat.
#[test]
fn full_rate_and_latency() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 12, 5, Stall::Never, Stall::Never);
        let r = run(&mut m, &p, &c).unwrap();
        let lat = r.first_latency.unwrap();
        let beats: usize = c.vectors.iter().map(|v| v.x.len() / p.lanes).sum();
        println!("{}: {} vectors, {beats} input beats, {} partition beats in {} cycles, latency {lat}", info.name, c.vectors.len(), r.beats, r.cycles);
        assert_eq!(r.in_blocked, 0, "{}: input refused at full rate", info.name);
        let first = r.in_cycles[0];
        for (i, &t) in r.in_cycles.iter().enumerate() {
            assert_eq!(t, first + i as u64, "{}: input beat {i} not on consecutive cycles", info.name);
        }
        assert_eq!(lat, info.latency().expect("manifest latency"), "{}: manifest latency", info.name);
    }
}

/// Every vector kind, and every point the data decides, is drawn at every
/// parameter set (the case generator and the model alone).
#[test]
fn case_generator_reaches_the_data_points() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let p = hq::params_of_info(info);
        let c = case_of(&p, 150, 3, Stall::Never, Stall::Never);
        let mut f = hq::Facts::default();
        let mut q = p.quantizer();
        let mut nf = 0;
        for v in &c.vectors {
            nf += hq::expected(&p, &mut q, v, &mut f).iter().filter(|b| b.nonfinite).count();
        }
        let rounded = f.ties_up.max(f.rounded_up.min(f.rounded_down));
        assert!(
            f.flat_parts > 0 && f.subnormal_steps > 0 && f.zero_sums > 0 && f.full_sums > 0 && f.top_codes > 0 && rounded > 0 && nf > 0 && f.short_vectors > 0,
            "{}: {f:?}",
            info.name
        );
    }
}
