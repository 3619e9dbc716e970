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

const UNIT: &str = "hack-quantizer:axis=token";

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

/// The quantizer's partition beats are `hack-qk-dot`'s `q` and `k` beats
/// (spec §15.16.4): Q heads through the `qp` quantizer RTL (8 bits,
/// stochastic), K heads through the `kv` one (2 bits, nearest), their
/// beats, as the RTL gave them, into the `hack-qk-dot` RTL at the same
/// `head_dim` and `Π` (all three under stalls): every score is `QkDot`'s
/// on `sim`'s partitions of the same FP16 inputs.
#[test]
fn chain_into_qk_dot() {
    use sim::hack::quantizer::Part;
    use sim::kivi::format::Meta;
    use tb::hack_qk_dot as qd;
    let (qi, ki, di) = (models::get("hack_quantizer_q8_st"), models::get("hack_quantizer"), models::get("hack_qk_dot"));
    let n = std::sync::atomic::AtomicUsize::new(0);
    let strategy = (0u64..u64::MAX, tb::stalls::stall(), tb::stalls::stall(), tb::stalls::stall());
    tb::prop::run_property_on("hack_quantizer_chain_qk_dot", &[qi, ki, di], strategy, prop::cases(12), |ms, (seed, s1, s2, s3)| {
        let (qm, rest) = ms.split_at_mut(1);
        let (km, dm) = rest.split_at_mut(1);
        let (qm, km, dm) = (&mut qm[0], &mut km[0], &mut dm[0]);
        let (qp, kp, dp) = (params_of(qm), params_of(km), qd::params_of(dm));
        assert_eq!((qp.head_dim, qp.partition, qp.bits, kp.head_dim, kp.partition, kp.bits), (dp.head_dim, dp.partition, dp.qp_bits, dp.head_dim, dp.partition, dp.kv_bits));
        // K and Q heads only (`head_dim` elements): re-draw P rows
        let heads = |p: &hq::HqParams, n: usize, seed: u64| {
            let mut c = case_of(p, 4 * n, seed, s1.clone(), s2.clone());
            c.vectors.retain(|v| v.x.len() == p.head_dim);
            c.vectors.truncate(n);
            c
        };
        let (qc, kc) = (heads(&qp, 2, *seed), heads(&kp, 6, *seed ^ 5));
        let (qr, kr) = (run(qm, &qp, &qc)?, run(km, &kp, &kc)?);
        let beat = |b: &hq::OutBeat, bits: u32, partition: usize| {
            let c = (32 / bits) as usize;
            let codes = (0..partition).map(|j| ((b.words[j / c] >> (bits as usize * (j % c))) & ((1 << bits) - 1)) as u8).collect();
            let part = Part { meta: Meta::from_word(b.meta), codes, sum: b.sum };
            qd::Beat { kind: qd::Kind::Real, part, words: b.words.clone(), noisy: false, x16: Vec::new() }
        };
        let np = dp.parts();
        let qbeats: Vec<qd::Beat> = qr.out.iter().map(|b| beat(b, qp.bits, qp.partition)).collect();
        let kbeats: Vec<qd::Beat> = kr.out.iter().map(|b| beat(b, kp.bits, kp.partition)).collect();
        let groups = qbeats
            .chunks(np)
            .map(|q| qd::Group { q: q.to_vec(), tokens: kbeats.chunks(np).map(|t| t.to_vec()).collect() })
            .collect();
        let c = qd::Case { groups, q_stall: s3.clone(), k_stall: s2.clone(), out_stall: s1.clone(), seed: *seed };
        let r = qd::run(dm, &dp, &c)?;
        // the scores checked are sim's from the FP16 heads alone
        let (mut sq, mut sk) = (qp.quantizer(), kp.quantizer());
        let sk_parts: Vec<Vec<Part>> = kc.vectors.iter().map(|v| sk.quantize_vector(&v.x).0).collect();
        for (g, v) in c.groups.iter().zip(&qc.vectors) {
            let unit = sim::hack::dot::QkDot::new(sq.quantize_vector(&v.x).0);
            for (t, k) in sk_parts.iter().enumerate() {
                if qd::expected(&dp, &g.q, &g.tokens[t]).bits != unit.score(k).to_bits() {
                    return Err(format!("token {t}: the RTL chain's partitions score differently from sim's"));
                }
            }
        }
        n.fetch_add(r.scores, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    let n = n.into_inner();
    assert!(n > 0);
    println!("{n} scores through quantizer RTL (Q, K) and hack-qk-dot RTL, all equal to sim's");
}
