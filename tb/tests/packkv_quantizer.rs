//! Co-simulation of `packkv-quantizer` (hdl/src/packkv/quantizer.rs)
//! against `sim::packkv::quantizer::quantize_token`, code beat for code
//! beat, at every `packkv-quantizer` model of tb/models.toml, on RTL and on
//! the OSU018 netlists. Spec: docs/spec.md §14.2, §14.3, §14.8, §14.14.1.
//!
//! Cases: tokens of the real slice, synthetic tokens, half-step grids
//! (ties), flat vectors (`max = min`, zero and not), NaN and infinities,
//! random finite patterns, ranges above 65504; random, bursty and blocking
//! stalls on both sides; a reset at a random cycle; full rate and latency;
//! the real slice streamed whole, decoded within the §14.8 bound. Every
//! coverage point must be reached.

use tb::packkv_quantizer::{self as pq, case, case_of, cover, params_of, run, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "packkv-quantizer";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, case(p, 1..pq::filling(&p)), cases, |m, c| {
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

const RESET_POINTS: &[&str] = &["reset with code beats owed", "reset with nothing owed"];

/// Spec §1, §14.14.1: a reset at a random cycle (a token partly in, tokens
/// in the buffer, in the step unit, in the FIFO, in the lanes or held at
/// the output): the beats out before it are a prefix of the model's, and
/// afterwards the unit behaves as fresh out of reset.
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
        let p = params_of(&Model::new(info));
        let strategy = (case(p, 1..5), proptest::prelude::any::<u64>(), 0u64..1000);
        run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(24), |m, (c, seed, at)| {
            let span = (c.tokens.len() * p.beats()) as u64 + 80;
            let r = pq::run_until(m, &p, c, at * span / 1000)?;
            match r.cut_owed {
                Some(n) => cov.hit(if n > 0 { "reset with code beats owed" } else { "reset with nothing owed" }),
                None => m.reset(1),
            }
            let after = case_of(&p, 2, *seed, c.in_stall.clone(), c.out_stall.clone());
            run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
        });
    });
}

/// Spec §14.14.1: with no stalls the input is never refused (`lanes`
/// elements every cycle, tokens back to back), the output carries a beat
/// every cycle once it starts, and the first code beat comes the
/// manifest's latency after the first input beat.
#[test]
fn full_rate_and_latency() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 24, 5, Stall::Never, Stall::Never);
        let r = run(&mut m, &p, &c).unwrap();
        let lat = r.first_latency.unwrap();
        println!(
            "{}: {} tokens, {} beats in and out in {} cycles, latency {lat}",
            info.name,
            c.tokens.len(),
            r.beats,
            r.cycles
        );
        assert_eq!(r.in_blocked, 0, "{}: input refused at full rate", info.name);
        let first = r.in_cycles[0];
        for (i, &t) in r.in_cycles.iter().enumerate() {
            assert_eq!(t, first + i as u64, "{}: input beat {i} not on consecutive cycles", info.name);
        }
        let o = r.out_cycles[0];
        for (i, &t) in r.out_cycles.iter().enumerate() {
            assert_eq!(t, o + i as u64, "{}: output beat {i} not on consecutive cycles", info.name);
        }
        assert_eq!(lat, info.latency().expect("manifest latency"), "{}: manifest latency", info.name);
    }
}

/// Spec §14.8, §12.3: the committed real slice, streamed token after token
/// under stalls (each token `heads * head_dim` consecutive values), matches
/// the model, and every element decoded from the hardware's codes and
/// metadata word lies within `s/2 + ulp/2` of its input.
#[test]
fn real_slice_within_the_bound() {
    use sim::fp16;
    use sim::packkv::quantizer::{bound_x2, dequantize_token, TokenMeta};
    let slice = tb::kivi_quantizer::real_slice();
    let mut checked = 0usize;
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let n = p.vector();
        let tokens: Vec<pq::Token> =
            slice.chunks_exact(n).take(48).map(|x| pq::Token { kind: pq::Kind::Real, x: x.to_vec() }).collect();
        let c = pq::Case { tokens, in_stall: Stall::Random { p: 60 }, out_stall: Stall::Bursty { enter: 20, leave: 30 }, seed: 11 };
        run(&mut m, &p, &c).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        // run checked the beats equal to the model's, so decode the model's
        let mut f = pq::Facts::default();
        for t in &c.tokens {
            let beats = pq::expected(&p, t, &mut f);
            let meta = TokenMeta::from_word(beats[0].meta);
            let codes: Vec<u8> = beats.iter().flat_map(|b| b.codes.iter().map(|&q| q as u8)).collect();
            let y = dequantize_token(meta, &codes);
            let s = fp16::to_units(meta.step);
            for (j, (&yj, &xj)) in y.iter().zip(&t.x).enumerate() {
                let (xu, yu) = (fp16::to_units(fp16::sanitize(xj).0), fp16::to_units(yj));
                assert!(2 * (yu - xu).abs() <= bound_x2(s, yu), "{}: element {j}: {xj:#06x} -> {yj:#06x}", info.name);
            }
            checked += n;
        }
    }
    println!("{checked} real-slice elements through the quantizer RTL, all within the §14.8 bound");
    assert!(checked > 0);
}

/// Every token kind, and every point the data decides, is drawn at every
/// parameter set (the case generator and the model alone).
#[test]
fn case_generator_reaches_the_data_points() {
    for s in models::specs().iter().filter(|s| s.unit == UNIT) {
        let p = pq::params_of_spec(&s.params);
        let c = case_of(&p, 160, 3, Stall::Never, Stall::Never);
        for k in pq::KINDS {
            assert!(c.tokens.iter().any(|t| t.kind == k), "{}: no {k:?} token", s.name);
        }
        let mut f = pq::Facts::default();
        let mut nf = 0;
        for t in &c.tokens {
            nf += pq::expected(&p, t, &mut f).iter().filter(|b| b.nonfinite).count();
        }
        assert!(
            f.zero_floor > 0
                && f.zero_steps > 0
                && f.subnormal_steps > 0
                && f.z_neg > 0
                && f.z_pos > 0
                && f.wide > 0
                && f.ties_up > 0
                && f.top_codes > 0
                && nf > 0,
            "{}: {f:?}",
            s.name
        );
    }
}
