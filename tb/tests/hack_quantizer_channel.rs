//! Co-simulation of `hack-quantizer`, axis channel (V;
//! hdl/src/hack/quantizer_channel.rs on KIVI's channel engine), against
//! `sim::hack::quantizer::Quantizer::quantize_block`, output beat for
//! output beat (metadata words, code words, code sums), at every
//! axis-channel model of tb/models.toml, on RTL and on the OSU018
//! netlists. Spec: docs/spec.md §15.2-§15.5, §15.7, §15.11, §15.16.6.
//!
//! Cases: KIVI's channel-axis blocks (real rows, outlier channels, flat
//! channels with `-0`, NaN and infinities, random finite, a channel above
//! 65504) and channels of two values (extreme codes and sums); random,
//! bursty and blocking stalls on both sides, idle cycles with noise on
//! the inputs; a reset at a random cycle (the LFSR restarts at its seed);
//! full rate and the manifest's latencies. Every coverage point must be
//! reached.

use tb::hack_quantizer::params_of;
use tb::hack_quantizer_channel::{case, case_of, cover, expected, points, run, run_until, POINTS};
use tb::kivi_quantizer_channel as kc;
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "hack-quantizer:axis=channel";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    // the 1-lane set takes 2 Pi rows x 128 beats per block
    let most = if p.partition * p.head_dim / p.lanes > 8192 { 2 } else { 4 };
    run_property(&name, info, case(p, 1..most), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    models::sweep_closed(UNIT, false, 5, POINTS, POINTS, |info, cov| check(info, prop::cases(32), cov));
}

#[test]
fn netlists_match_model() {
    // p16_l16 every run; p16_b3_st (stochastic) too in extended runs
    let points = points(&models::of_unit(UNIT, true));
    models::sweep_closed(UNIT, true, 1, &points, &points, |info, cov| check(info, prop::cases(48), cov));
}

const RESET_POINTS: &[&str] = &["reset in pass 1", "reset in pass 2 with beats owed", "reset with nothing owed"];

/// Spec §1, §15.16.6: a reset at a random cycle: the beats out before it
/// are a prefix of the model's, and afterwards the unit codes as fresh out
/// of reset, its LFSR back at the seed (a new `Quantizer`).
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 5, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..3), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(12), |m, (c, seed, at)| {
            let per = 2 * p.partition * (p.head_dim / p.lanes);
            let span = (c.blocks.len() * per) as u64 + 40;
            let r = run_until(m, &p, c, at * span / 1000)?;
            match r.cut_owed {
                Some(n) if n > 0 => cov.hit("reset in pass 2 with beats owed"),
                Some(_) if (r.in_cycles.len() % per) < per / 2 && !r.in_cycles.is_empty() => cov.hit("reset in pass 1"),
                Some(_) => cov.hit("reset with nothing owed"),
                None => m.reset(1),
            }
            let after = case_of(&p, 2, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

/// Spec §15.16.6: with no stalls the input is never refused, blocks back
/// to back, and the first metadata and code beats come the manifest's
/// latencies after the input beats that complete them.
#[test]
fn full_rate_and_latency() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let n = if p.lanes == 1 { 2 } else { 4 };
        let c = case_of(&p, n, 5, Stall::Never, Stall::Never);
        let r = run(&mut m, &p, &c).unwrap();
        let lat = info.latency().expect("manifest latency");
        println!(
            "{}: {n} blocks, {} input beats, {} output beats in {} cycles, latency meta {:?} words {:?}",
            info.name,
            r.in_cycles.len(),
            r.beats,
            r.cycles,
            r.meta_latency,
            r.word_latency
        );
        assert_eq!(r.in_blocked, 0, "{}: input refused at full rate", info.name);
        let first = r.in_cycles[0];
        for (i, &t) in r.in_cycles.iter().enumerate() {
            assert_eq!(t, first + i as u64, "{}: input beat {i} not on consecutive cycles", info.name);
        }
        assert_eq!(r.b2b_blocks, n as u64 - 1, "{}: blocks not back to back", info.name);
        assert_eq!(r.word_latency, Some(lat), "{}: manifest latency", info.name);
        let st = 2 * (p.rounding == sim::hack::params::Rounding::Stochastic) as u64;
        assert_eq!(r.meta_latency, Some(lat - 4 - p.bits as u64 - st), "{}: meta latency", info.name);
    }
}

/// Every block kind and every point the data decides is drawn at every
/// parameter set (the case generator and the model alone).
#[test]
fn case_generator_reaches_the_data_points() {
    for s in models::specs().iter().filter(|s| models::selects(s, UNIT)) {
        let info = models::get(&s.name);
        let p = tb::hack_quantizer::params_of_info(info);
        let c = case_of(&p, 60, 3, Stall::Never, Stall::Never);
        for k in kc::KINDS {
            assert!(c.blocks.iter().any(|b| b.kind == k), "{}: no {k:?} block", s.name);
        }
        let (mut f, mut nf) = (kc::Facts::default(), 0);
        let mut q = p.quantizer();
        for b in &c.blocks {
            let (e, fb) = expected(&p, &mut q, b);
            nf += e.iter().filter(|e| e.beat.nonfinite).count();
            f.add(&fb);
        }
        let rounded = if p.rounding == sim::hack::params::Rounding::Nearest { f.ties_up } else { f.rounded_up };
        assert!(
            f.flat_channels > 0 && f.subnormal_steps > 0 && f.wide_channels > 0 && rounded > 0 && f.top_codes > 0
                && f.sum_zero > 0 && f.sum_top > 0 && nf > 0,
            "{}: {f:?}",
            s.name
        );
    }
}
