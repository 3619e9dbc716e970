//! Co-simulation of `packkv-encoder` (hdl/src/packkv/encoder.rs) against
//! `sim::packkv::codec::encode_pair`, block for block and word for word, at
//! every `packkv-encoder` model of tb/models.toml, on RTL and on the OSU018
//! netlists. Spec: docs/spec.md §14.4, §14.6, §14.8, §14.14.3.
//!
//! Cases: pairs of uniform, narrow, all-equal (width 0) and widest (width
//! r) packs, tokens quantized from flat vectors, nonfinite tokens, a code
//! above N (the pair refused, the stream going on); random, bursty and
//! blocking stalls on all three streams; a reset at a random cycle; full
//! rate. Every coverage point must be reached. Models with `repack =
//! median` (spec §14.5) add their own points: blocks whose rows all tie,
//! reordered blocks with and without ties, `B` distinct medians, refused
//! repacked pairs.

use sim::packkv::params::Repack;
use tb::packkv_encoder::{self as pe, case, case_of, cover, cover_median, params_of, run, MEDIAN_POINTS, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "packkv-encoder";

fn check(info: &'static ModelInfo, cases: u32, cov: &tb::coverage::Coverage, med: &tb::coverage::Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level {
        info.name.to_string()
    } else {
        format!("{}_rtl", info.name)
    };
    run_property(&name, info, case(p, 1..6), cases, |m, c| {
        let r = run(m, &p, c)?;
        cover(cov, &r);
        if p.repack == Repack::Median {
            cover_median(med, &r);
        }
        Ok(())
    });
}

#[test]
fn rtl_matches_model() {
    let med = tb::coverage::Coverage::new("packkv_encoder median (RTL)", MEDIAN_POINTS);
    models::sweep_closed(UNIT, false, 5, POINTS, POINTS, |info, cov| check(info, prop::cases(48), cov, &med));
    med.check();
}

#[test]
fn netlists_match_model() {
    let med = tb::coverage::Coverage::new("packkv_encoder median (netlists)", MEDIAN_POINTS);
    let f = |info: &'static ModelInfo, cov: &tb::coverage::Coverage| check(info, prop::cases(16), cov, &med);
    let required: Vec<&str> = POINTS.iter().copied().filter(|&x| x != pe::MERGE_MORE_POINT).collect();
    models::sweep_closed(UNIT, true, 1, POINTS, &required, f);
    med.check_points(&[]);
}

const RESET_POINTS: &[&str] = &["reset with blocks owed", "reset before any block out"];

/// Spec §1, §14.14.3: a reset at a random cycle (blocks filling, a block
/// draining, words in the shifter or held at the output): what came out
/// before it is a prefix of the model's stream, and afterwards the unit
/// behaves as fresh out of reset.
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(
        UNIT,
        Some("reset in flight"),
        false,
        5,
        RESET_POINTS,
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
}

/// Spec §14.14.3: with no stalls, after the first pair, a block pair takes
/// `cycles_per_pair` cycles: the tile reader's `2 B BT` (`lanes` codes a
/// cycle) where the output's items and the median pass keep up, else
/// theirs.
#[test]
fn full_rate() {
    for info in models::of_unit_nonempty(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let c = case_of(&p, 8, 5, Stall::Never, Stall::Never, Stall::Never);
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
        let n = c.pairs.len();
        let e = &r.block_ends;
        assert_eq!(e.len(), 2 * n, "{}: block ends", info.name);
        // from the end of the second pair to the end of the last
        let per_pair = (e[2 * n - 1] - e[3]) as f64 / (n - 2) as f64;
        let want = pe::cycles_per_pair(&p);
        println!(
            "{}: {per_pair:.1} cycles per pair after the second (rule {want:.1}; items {}, reader {}), {:.2} codes per cycle of {} lanes",
            info.name,
            pe::items_per_pair(&p),
            2 * p.block * p.beats(),
            (2 * p.block * p.vector()) as f64 / per_pair,
            p.lanes
        );
        assert!(
            per_pair <= want * 1.01 + 2.0,
            "{}: {per_pair} cycles per pair, the rule gives {want}",
            info.name
        );
    }
}

/// Spec §14.5: the `repack = median` models on chosen pairs, each kind
/// once per stall pattern: every row tying (equal and flat blocks), many
/// medians (distinct where `N_V + 1 >= B`), uniform codes, a refused pair
/// between two sent ones.
#[test]
fn median_repack_cases() {
    use tb::stim::Xorshift;
    let med = tb::coverage::Coverage::new("packkv_encoder median cases (RTL)", MEDIAN_POINTS);
    let infos: Vec<_> = models::of_unit_nonempty(UNIT, false)
        .into_iter()
        .filter(|i| params_of(&Model::new(i)).repack == Repack::Median)
        .collect();
    assert!(infos.len() >= 2, "{} median models", infos.len());
    tb::build::jobs::map(&infos, |&info| {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let kinds = [pe::Kind::Equal, pe::Kind::Medians, pe::Kind::Overflow, pe::Kind::Medians, pe::Kind::Flat, pe::Kind::Uniform];
        for (si, st) in [Stall::Never, Stall::Random { p: 80 }, Stall::Bursty { enter: 20, leave: 40 }].into_iter().enumerate() {
            let mut r = Xorshift::new(77 + si as u64);
            let c = pe::Case {
                pairs: kinds.iter().map(|&k| pe::pair_of(&mut r, &p, k)).collect(),
                k_stall: st.clone(),
                v_stall: st.clone(),
                out_stall: st.clone(),
                seed: r.next_u64(),
            };
            let res = run(&mut m, &p, &c).unwrap_or_else(|e| panic!("{} ({st:?}): {e}", info.name));
            cover_median(&med, &res);
        }
    });
    med.check();
}
