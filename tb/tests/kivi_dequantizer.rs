//! Co-simulation of `kivi-dequantizer` (hdl/src/kivi/dequantizer.rs)
//! against `sim::kivi::dequantizer`, beat for beat, at every
//! `kivi-dequantizer` model of tb/models.toml, on RTL and on the OSU018
//! netlists. Spec: docs/spec.md §13.4-§13.6, §13.9, §13.14.
//!
//! Cases: groups quantized by `sim` from the real slice and from synthetic
//! values, groups with `max = min`, with NaN and infinities, random finite
//! metadata words (saturation both ways, subnormal grids, negative
//! steps), noise in unused bits; random, bursty and blocking stalls on both
//! sides; a reset at a random cycle with groups in flight. Every coverage
//! point must be reached.

use tb::kivi_dequantizer::{self as kd, case, case_of, cover, params_of, run, Kind, POINTS};
use tb::stalls::Stall;
use tb::stim::Xorshift;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "kivi-dequantizer";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..24), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    models::sweep_closed(UNIT, false, 3, POINTS, POINTS, |info, cov| check(info, prop::cases(150), cov));
}

#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, POINTS, |info, cov| check(info, prop::cases(40), cov));
}

const RESET_POINTS: &[&str] = &["reset with output beats owed", "reset with nothing owed"];

/// Spec §1, §13.14: a reset at a random cycle of a random case; the beats
/// out before it are a prefix of the model's, and afterwards the unit
/// behaves as fresh out of reset (a second case matches the model).
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 2..12), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(24), |m, (c, seed, at)| {
            let span = (c.groups.len() * p.beats()) as u64 + 12;
            let r = kd::run_until(m, &p, c, at * span / 1000)?;
            match r.cut_owed {
                Some(n) => cov.hit(if n > 0 { "reset with output beats owed" } else { "reset with nothing owed" }),
                None => m.reset(1),
            }
            let after = case_of(&p, 4, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

/// Spec §13.14: with no stalls, `lanes` elements every cycle, no bubble
/// between groups, and the manifest's latency to the first beat.
#[test]
fn full_rate_and_latency() {
    let names =
        ["kivi_dequantizer_g16_b8_l16", "kivi_dequantizer", "kivi_dequantizer_g16_b3_l4", "kivi_dequantizer_g64_b4_l32"];
    for name in names {
        let info = models::get(name);
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 40, 7, Stall::Never, Stall::Never);
        let r = run(&mut m, &p, &c).unwrap();
        let lat = r.first_latency.unwrap();
        println!("{name}: {} groups, {} beats in {} cycles, latency {lat}", c.groups.len(), r.beats, r.cycles);
        assert_eq!(lat, info.latency().expect("manifest latency"), "{name}: manifest latency");
        let first = r.out_cycles[0];
        for (i, &t) in r.out_cycles.iter().enumerate() {
            assert_eq!(t, first + i as u64, "{name}: output beat {i} not on consecutive cycles");
        }
    }
}

/// Spec §13.9: groups of the real slice quantized by `sim` and decoded by
/// the RTL stay within `|output - x| <= s/2 + ulp(|output|)/2` on every
/// element (the bound on the hardware's own outputs).
#[test]
fn real_slice_within_the_bound() {
    use sim::fp16;
    use sim::kivi::quantizer::quantize_group;
    let mut n = 0usize;
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let mut r = Xorshift::new(11);
        let mut xs = Vec::new();
        let groups: Vec<kd::Group> = (0..64)
            .map(|_| {
                let x = kd::values(&mut r, Kind::Real, p.group);
                let (q, _) = quantize_group(p.bits, &x);
                xs.push((x, q.meta));
                kd::Group { kind: Kind::Real, meta: q.meta.word(), words: q.words(p.bits), noisy: false }
            })
            .collect();
        let c = kd::Case { groups, in_stall: Stall::Random { p: 60 }, out_stall: Stall::Random { p: 60 }, seed: 3 };
        let out = kd::run(&mut m, &p, &c).unwrap();
        assert_eq!(out.beats, 64 * p.beats());
        // the outputs equal the model's (run checks), so the bound on the
        // model's decode of these groups is the bound on the hardware's
        for (x, meta) in &xs {
            let y = sim::kivi::dequantizer::dequantize_group(p.bits, &pack_of(&p, x, *meta), *meta, p.group);
            let s = fp16::to_units(meta.scale);
            for (&xi, &yi) in x.iter().zip(&y) {
                let (xu, yu) = (fp16::to_units(fp16::sanitize(xi).0), fp16::to_units(yi));
                assert!(2 * (yu - xu).abs() <= sim::kivi::dequantizer::bound_x2(s, yu), "{}: {xi:#06x} -> {yi:#06x}", info.name);
                n += 1;
            }
        }
    }
    println!("{n} real elements within the §13.9 bound");
}

fn pack_of(p: &kd::DeqParams, x: &[u16], meta: sim::kivi::format::Meta) -> Vec<u32> {
    let (q, _) = sim::kivi::quantizer::quantize_group(p.bits, x);
    assert_eq!(q.meta, meta);
    q.words(p.bits)
}

/// Every group kind is drawn at every parameter set (the case generator
/// alone, no hardware).
#[test]
fn case_generator_draws_every_kind() {
    for s in models::specs().iter().filter(|s| s.unit == UNIT) {
        let get = |k: &str, d: i64| s.params.get(k).and_then(|v| v.as_integer()).unwrap_or(d) as usize;
        let p = kd::DeqParams { head_dim: get("head-dim", 128), group: get("group", 32), bits: get("bits", 2) as u32, lanes: get("lanes", 16) };
        let c = case_of(&p, 200, 1, Stall::Never, Stall::Never);
        for k in [Kind::Real, Kind::Synthetic, Kind::Flat, Kind::NonFinite, Kind::RandomMeta] {
            assert!(c.groups.iter().any(|g| g.kind == k), "{}: no {k:?} group", s.name);
        }
    }
}
