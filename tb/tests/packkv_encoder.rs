//! Co-simulation of `packkv-encoder` (hdl/src/packkv/encoder.rs) against
//! `sim::packkv::codec::encode_pair`, block for block and word for word, at
//! every `packkv-encoder` model of tb/models.toml, on RTL and on the OSU018
//! netlists. Spec: docs/spec.md §14.4, §14.6, §14.8, §14.14.3.
//!
//! Cases: pairs of uniform, narrow, all-equal (width 0) and widest (width
//! r) packs, tokens quantized from flat vectors, nonfinite tokens, a code
//! above N (the pair refused, the stream going on); random, bursty and
//! blocking stalls on all three streams; a reset at a random cycle; full
//! rate. Every coverage point must be reached.

use tb::packkv_encoder::{self as pe, case, case_of, cover, params_of, run, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "packkv-encoder";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level {
        info.name.to_string()
    } else {
        format!("{}_rtl", info.name)
    };
    run_property(&name, info, case(p, 1..6), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    let (cov, _) = models::sweep(UNIT, false, 5, POINTS, |info, cov| {
        check(info, prop::cases(48), cov)
    });
    cov.check();
}

#[test]
fn netlists_match_model() {
    let (cov, _) = models::sweep(UNIT, true, 1, POINTS, |info, cov| {
        check(info, prop::cases(16), cov)
    });
    cov.check();
}

const RESET_POINTS: &[&str] = &["reset with blocks owed", "reset before any block out"];

/// Spec §1, §14.14.3: a reset at a random cycle (blocks filling, a block
/// draining, words in the shifter or held at the output): what came out
/// before it is a prefix of the model's stream, and afterwards the unit
/// behaves as fresh out of reset.
#[test]
fn reset_with_traffic_in_flight() {
    let (cov, _) = models::sweep_as(
        UNIT,
        Some("reset in flight"),
        false,
        5,
        RESET_POINTS,
        |info, cov| {
            let p = params_of(&Model::new(info));
            let strategy = (case(p, 1..4), proptest::prelude::any::<u64>(), 0u64..1000);
            run_property(
                &format!("{}_reset", info.name),
                info,
                strategy,
                prop::cases(16),
                |m, (c, seed, at)| {
                    let span = (c.pairs.len() * p.block * p.beats()) as u64 * 3 + 100;
                    let r = pe::run_until(m, &p, c, at * span / 1000)?;
                    match r.cut_blocks {
                        Some(n) => cov.hit(if n > 0 {
                            "reset with blocks owed"
                        } else {
                            "reset before any block out"
                        }),
                        None => m.reset(1),
                    }
                    let after = case_of(
                        &p,
                        2,
                        *seed,
                        c.k_stall.clone(),
                        c.v_stall.clone(),
                        c.out_stall.clone(),
                    );
                    run(m, &p, &after)
                        .map(|_| ())
                        .map_err(|e| format!("after the reset: {e}"))
                },
            );
        },
    );
    cov.check();
}

/// Spec §14.14.3: with no stalls, the payload goes out at `lanes` codes per
/// cycle; the beats per block pair are the header, `B` token words, per
/// pack row `C / lanes` fields beats and `P C / lanes` payload beats, for
/// K and V, and the inputs wait only while both banks are full.
#[test]
fn full_rate() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let mut c = case_of(&p, 6, 5, Stall::Never, Stall::Never, Stall::Never);
        c.pairs.iter_mut().for_each(|x| x.kind = pe::Kind::Uniform);
        let c = pe::Case {
            pairs: c
                .pairs
                .iter()
                .map(|x| {
                    pe::pair_of(
                        &mut tb::stim::Xorshift::new(x.k.meta[0].word() as u64 + 1),
                        &p,
                        pe::Kind::Uniform,
                    )
                })
                .collect(),
            ..c
        };
        let r = run(&mut m, &p, &c).unwrap();
        let items = 2 * (1 + p.block + (p.block / p.pack) * (p.beats() + p.pack * p.beats()));
        let n = c.pairs.len() as u64;
        let per_pair = r.cycles as f64 / n as f64;
        println!(
            "{}: {n} pairs in {} cycles, {per_pair:.1} cycles per pair, {items} items per pair ({:.3} of the item rate), {:.2} codes per cycle",
            info.name,
            r.cycles,
            items as f64 / per_pair,
            (2 * p.block * p.vector()) as f64 / per_pair
        );
        // after the first pair fills, one item per cycle but for the pipeline's start
        assert!(
            per_pair <= items as f64 * 1.02 + (p.block * p.beats()) as f64 / n as f64 + 40.0,
            "{per_pair} cycles per pair for {items} items"
        );
    }
}
