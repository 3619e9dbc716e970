//! Co-simulation of `kivi-quantizer`, axis token (hdl/src/kivi/quantizer.rs),
//! against `sim::kivi::quantizer::quantize_token`, group beat for group
//! beat, at every `kivi-quantizer` model of tb/models.toml, on RTL and on the
//! OSU018 netlists; and the round trip through `kivi-dequantizer` with the
//! error bound of spec §13.9. Spec: docs/spec.md §13.2-§13.9, §13.14.
//!
//! Cases: tokens of the real slice, synthetic tokens (scales down to
//! subnormal steps), flat groups (`max = min`, `-0` among them), NaN and
//! infinities, random finite patterns, groups spanning more than 65504;
//! random, bursty and blocking stalls on both sides; a reset at a random
//! cycle. Every coverage point must be reached.

use tb::kivi_quantizer::{self as kq, case, case_of, cover, params_of, run, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

/// The token-axis models (tb/tests/kivi_quantizer_channel.rs has the others).
const UNIT: &str = "kivi-quantizer:axis=token";

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
    models::sweep_closed(UNIT, false, 3, POINTS, POINTS, |info, cov| check(info, prop::cases(120), cov));
}

#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, POINTS, |info, cov| check(info, prop::cases(40), cov));
}

const RESET_POINTS: &[&str] = &["reset with group beats owed", "reset with nothing owed"];

/// Spec §1, §13.14.2: a reset at a random cycle (a token partly in, groups
/// in the slots, in the pipeline or held at the output): the beats out
/// before it are a prefix of the model's, and afterwards the unit behaves
/// as fresh out of reset (a new token starts at channel 0).
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..5), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(24), |m, (c, seed, at)| {
            let span = (c.tokens.len() * p.beats()) as u64 + 40;
            let r = kq::run_until(m, &p, c, at * span / 1000)?;
            match r.cut_owed {
                Some(n) => cov.hit(if n > 0 { "reset with group beats owed" } else { "reset with nothing owed" }),
                None => m.reset(1),
            }
            let after = case_of(&p, 2, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

/// Spec §13.14.2: with no stalls the input is never refused (`lanes`
/// elements every cycle, tokens back to back), and the first group's beat
/// comes the manifest's latency after its first input beat.
#[test]
fn full_rate_and_latency() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 12, 5, Stall::Never, Stall::Never);
        let r = run(&mut m, &p, &c).unwrap();
        let lat = r.first_latency.unwrap();
        println!(
            "{}: {} tokens, {} input beats, {} group beats in {} cycles, latency {lat}",
            info.name,
            c.tokens.len(),
            c.tokens.len() * p.beats(),
            r.beats,
            r.cycles
        );
        assert_eq!(r.in_blocked, 0, "{}: input refused at full rate", info.name);
        let first = r.in_cycles[0];
        for (i, &t) in r.in_cycles.iter().enumerate() {
            assert_eq!(t, first + i as u64, "{}: input beat {i} not on consecutive cycles", info.name);
        }
        assert_eq!(lat, info.latency().expect("manifest latency"), "{}: manifest latency", info.name);
    }
}

/// The quantizer's group beats fed straight into the dequantizer with the
/// same group, bits and lanes (both RTL, both under stalls): the values out
/// are `sim`'s decode of `sim`'s codes, and every element is within the
/// §13.9 bound of its sanitised input.
#[test]
fn round_trip_through_the_dequantizer_within_the_bound() {
    use sim::fp16;
    let pairs: Vec<(&str, &str)> = vec![
        ("kivi_quantizer", "kivi_dequantizer"),
        ("kivi_quantizer_g16_b3_l4", "kivi_dequantizer_g16_b3_l4"),
        ("kivi_quantizer_g16_b8_l16", "kivi_dequantizer_g16_b8_l16"),
        ("kivi_quantizer_h2_g64_b4_l16", "kivi_dequantizer_g64_b4_l16"),
        ("kivi_quantizer_g128_b8_l1", "kivi_dequantizer_g128_b8_l1"),
        ("kivi_quantizer_h2_g64_b4_l32", "kivi_dequantizer_g64_b4_l32"),
        ("kivi_quantizer_g64_b2_l64", "kivi_dequantizer_g64_b2_l64"),
    ];
    let mut checked = 0usize;
    for (qn, dn) in pairs {
        let (qi, di) = (models::get(qn), models::get(dn));
        let strategy = (0u64..u64::MAX, tb::stalls::stall(), tb::stalls::stall(), tb::stalls::stall());
        let n = std::sync::atomic::AtomicUsize::new(0);
        tb::prop::run_property_on(&format!("{qn}_roundtrip"), &[qi, di], strategy, prop::cases(16), |ms, (seed, s1, s2, s3)| {
            let (qm, dm) = ms.split_at_mut(1);
            let (qm, dm) = (&mut qm[0], &mut dm[0]);
            let p = params_of(qm);
            let dp = tb::kivi_dequantizer::params_of(dm);
            assert_eq!((p.group, p.bits, p.lanes), (dp.group, dp.bits, dp.lanes));
            let c = case_of(&p, 4, *seed, s1.clone(), s2.clone());
            // quantizer: its group beats as the dequantizer's input groups
            let beats = capture(qm, &p, &c)?;
            let groups: Vec<tb::kivi_dequantizer::Group> = beats
                .iter()
                .map(|b| tb::kivi_dequantizer::Group {
                    kind: tb::kivi_dequantizer::Kind::Real,
                    meta: b.meta,
                    words: b.words.clone(),
                    noisy: false,
                })
                .collect();
            let dc = tb::kivi_dequantizer::Case { groups, in_stall: s3.clone(), out_stall: s2.clone(), seed: *seed ^ 9 };
            let dr = tb::kivi_dequantizer::run(dm, &dp, &dc)?;
            assert_eq!(dr.beats * dp.lanes, c.tokens.len() * p.vector());
            // the bound, on the decode run checked equal to sim's
            for (ti, t) in c.tokens.iter().enumerate() {
                for gi in 0..p.groups() {
                    let b = &beats[ti * p.groups() + gi];
                    let meta = sim::kivi::format::Meta::from_word(b.meta);
                    let y = sim::kivi::dequantizer::dequantize_group(p.bits, &b.words, meta, p.group);
                    let s = fp16::to_units(meta.scale);
                    for (j, &yj) in y.iter().enumerate() {
                        let x = fp16::to_units(fp16::sanitize(t.x[gi * p.group + j]).0);
                        let yu = fp16::to_units(yj);
                        if 2 * (yu - x).abs() > sim::kivi::dequantizer::bound_x2(s, yu) {
                            return Err(format!("token {ti} group {gi} element {j}: {:#06x} -> {yj:#06x} beyond the bound", t.x[gi * p.group + j]));
                        }
                    }
                }
            }
            n.fetch_add(c.tokens.len() * p.vector(), std::sync::atomic::Ordering::Relaxed);
            Ok(())
        });
        checked += n.into_inner();
    }
    println!("{checked} elements through quantizer and dequantizer RTL, all within the §13.9 bound");
}

/// Runs a case on the quantizer and returns its group beats (`run` checks
/// them equal to the model's, so they are the model's).
fn capture(m: &mut Model, p: &kq::QuantParams, c: &kq::Case) -> Result<Vec<kq::OutBeat>, String> {
    run(m, p, c)?;
    let mut f = kq::Facts::default();
    Ok(c.tokens.iter().flat_map(|t| kq::expected(p, t, &mut f)).collect())
}

/// Every token kind, and every point the data decides, is drawn at every
/// parameter set (the case generator and the model alone).
#[test]
fn case_generator_reaches_the_data_points() {
    for s in models::specs().iter().filter(|s| models::selects(s, UNIT)) {
        let p = kq::params_of_spec(&s.params);
        let c = case_of(&p, 120, 3, Stall::Never, Stall::Never);
        for k in kq::KINDS {
            assert!(c.tokens.iter().any(|t| t.kind == k), "{}: no {k:?} token", s.name);
        }
        let mut f = kq::Facts::default();
        let mut nf = 0;
        for t in &c.tokens {
            nf += kq::expected(&p, t, &mut f).iter().filter(|b| b.nonfinite).count();
        }
        assert!(f.flat_groups > 0 && f.subnormal_steps > 0 && f.wide_groups > 0 && f.ties_up > 0 && f.top_codes > 0 && nf > 0, "{}: {f:?}", s.name);
    }
}
