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
    models::sweep_closed(UNIT, false, 5, POINTS, POINTS, |info, cov| check(info, prop::cases(100), cov));
}

#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, POINTS, |info, cov| check(info, prop::cases(40), cov));
}

const RESET_POINTS: &[&str] = &["reset with partition beats owed", "reset with nothing owed"];

/// Spec §1, §15.4, §15.16.4: a reset at a random cycle (a vector partly in,
/// partitions in the slots, the pipeline or held at the output): the beats
/// out before it are a prefix of the model's, and afterwards the unit
/// behaves as fresh out of reset (a new partition at element 0, the LFSR
/// at its seed).
#[test]
fn reset_with_traffic_in_flight() {
    models::sweep_as_closed(UNIT, Some("reset in flight"), false, 5, RESET_POINTS, RESET_POINTS, |info, cov| {
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

/// The whole HACK attention step through RTL (spec §15.7-§15.9, issue 38's
/// chain): Q (`qp` quantizer, 8 bits, stochastic) and K (`kv` quantizer,
/// token axis) into `hack-qk-dot`; its scores, equal to `sim`'s, through
/// the host softmax (§15.9, in `sim`); the closed partitions' P through a
/// second `qp` quantizer instance (token axis); V's closed blocks through
/// the channel-axis quantizer (§15.16.6), its rows gathered per channel;
/// those and the FP16 open tail (0 to `Π - 1` tokens) into `hack-pv-dot`.
/// Every unit is RTL under stalls and checked beat for beat against `sim`
/// on what it got; the chain's scores, probabilities and output vector are
/// then bit for bit those of `sim::hack::attention::hack_step` on the same
/// FP16 Q, K and V.
#[test]
fn chain_to_attention() {
    use sim::hack::attention::{hack_step, SeqCache};
    use sim::hack::params::HackParams;
    use sim::hack::quantizer::Part;
    use sim::hack::reference::softmax_host;
    use sim::kivi::format::Meta;
    use tb::hack_pv_dot as pv;
    use tb::hack_qk_dot as qd;
    use tb::hack_quantizer_channel as hc;
    let names = ["hack_quantizer_q8_st", "hack_quantizer", "hack_quantizer_ch", "hack_quantizer_q8_st", "hack_qk_dot", "hack_pv_dot"];
    let infos: Vec<&'static ModelInfo> = names.iter().map(|n| models::get(n)).collect();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let cov = tb::coverage::Coverage::new(
        "hack chain to attention",
        &["no closed partition", "closed partitions", "no open tail", "open tail", "V channel flat (step 0)", "nonfinite input"],
    );
    let strategy = (0u64..u64::MAX, tb::stalls::stall(), tb::stalls::stall(), tb::stalls::stall(), 1usize..3, 0usize..1000);
    tb::prop::run_property_on("hack_chain_attention", &infos, strategy, prop::cases(8), |ms, (seed, s1, s2, s3, closed, frac)| {
        let [qm, km, vm, pm, dm, em] = ms else { unreachable!("six models") };
        let (qp, kp, vp, pp) = (params_of(qm), params_of(km), params_of(vm), params_of(pm));
        let (dp, ep) = (qd::params_of(dm), pv::params_of(em));
        let (d, pi) = (dp.head_dim, dp.partition);
        for p in [&qp, &kp, &vp, &pp] {
            assert_eq!((p.head_dim, p.partition), (d, pi));
        }
        assert_eq!((kp.bits, vp.bits, qp.bits, pp.bits), (dp.kv_bits, dp.kv_bits, dp.qp_bits, dp.qp_bits));
        assert_eq!((ep.head_dim, ep.partition, ep.kv_bits, ep.qp_bits), (d, pi, dp.kv_bits, dp.qp_bits));
        // sim's SeqCache codes K and V with one rounding and seed
        assert_eq!((kp.rounding, kp.seed), (vp.rounding, vp.seed));
        // three context shapes a case, so that each coverage point is
        // reached by construction: a tail alone, closed partitions alone,
        // and both; the models are reset between shapes
        let tail = (frac * pi / 1000).max(1);
        for (closed, tail) in [(0, tail), (*closed, 0), (*closed, tail)] {
            for m in [&mut *qm, &mut *km, &mut *vm, &mut *pm, &mut *dm, &mut *em] {
                m.reset(tb::prop::RESET_CYCLES);
            }
            let ctx = closed * pi + tail;
            // FP16 Q, K (heads of head_dim) and V (blocks, then the open tail)
            let heads = |p: &hq::HqParams, n: usize, seed: u64| {
                let mut c = case_of(p, 4 * n + 4, seed, s1.clone(), s2.clone());
                c.vectors.retain(|v| v.x.len() == p.head_dim);
                c.vectors.truncate(n);
                assert_eq!(c.vectors.len(), n);
                c
            };
            let (qc, kc) = (heads(&qp, 1, *seed), heads(&kp, ctx, *seed ^ 5));
            let mut vc = hc::case_of(&vp, closed, *seed ^ 7, s1.clone(), s3.clone());
            // one flat channel per block (step 0: Eq. 4 with s_b = 0)
            for b in vc.blocks.iter_mut() {
                let (ch, x) = ((*seed as usize) % d, b.tokens[0][(*seed as usize) % d]);
                b.tokens.iter_mut().for_each(|t| t[ch] = x);
            }
            let tail_v: Vec<Vec<u16>> = hc::case_of(&vp, 1, *seed ^ 9, Stall::Never, Stall::Never).blocks[0].tokens[..tail].to_vec();
            let v: Vec<&[u16]> = vc.blocks.iter().flat_map(|b| b.tokens.iter().map(|t| &t[..])).chain(tail_v.iter().map(|t| &t[..])).collect();
            let k: Vec<&[u16]> = kc.vectors.iter().map(|t| &t.x[..]).collect();
            // sim's attention step on the FP16 inputs
            let hp = HackParams { head_dim: d, partition: pi, kv_bits: kp.bits, qp_bits: qp.bits, lanes: kp.lanes, rounding: kp.rounding, seed: kp.seed };
            let cache = SeqCache::new(&hp, k, v);
            let want = hack_step(&hp, &cache, &qc.vectors[0].x, ctx, &mut qp.quantizer(), &mut pp.quantizer());
            let flat_v = cache.v_parts.iter().flatten().filter(|p| p.meta.scale == 0).count() as u64;
            let nonfinite_kv = cache.nonfinite_k || cache.nonfinite_v;
            // Q, K through the quantizer RTL into hack-qk-dot's RTL
            let (qr, kr) = (run(qm, &qp, &qc)?, run(km, &kp, &kc)?);
            let beat = |meta: u32, words: Vec<u32>, sum: u32, bits: u32| {
                let c = (32 / bits) as usize;
                let codes = (0..pi).map(|j| ((words[j / c] >> (bits as usize * (j % c))) & ((1 << bits) - 1)) as u8).collect();
                let part = Part { meta: Meta::from_word(meta), codes, sum };
                qd::Beat { kind: qd::Kind::Real, part, words, noisy: false, x16: Vec::new() }
            };
            let qbeats: Vec<qd::Beat> = qr.out.iter().map(|b| beat(b.meta, b.words.clone(), b.sum, qp.bits)).collect();
            let kbeats: Vec<qd::Beat> = kr.out.iter().map(|b| beat(b.meta, b.words.clone(), b.sum, kp.bits)).collect();
            let g = qd::Group { q: qbeats, tokens: kbeats.chunks(dp.parts()).map(|t| t.to_vec()).collect() };
            let c = qd::Case { groups: vec![g.clone()], q_stall: s3.clone(), k_stall: s2.clone(), out_stall: s1.clone(), seed: *seed };
            qd::run(dm, &dp, &c)?;
            // the RTL's scores (qd::run checked them against these) are sim's
            let scores: Vec<f64> = g.tokens.iter().map(|t| f32::from_bits(qd::expected(&dp, &g.q, t).bits) as f64).collect();
            for (t, (a, b)) in scores.iter().zip(&want.step.scores).enumerate() {
                if a.to_bits() != b.to_bits() {
                    return Err(format!("score {t}: chain {a} against sim's attention {b}"));
                }
            }
            // host softmax (spec §15.9), then P's closed partitions through the RTL
            let probs = softmax_host(&scores, 1.0 / (d as f64).sqrt());
            assert_eq!(probs, want.probs);
            let mut pbeats = Vec::new();
            if closed > 0 {
                let x = probs[..closed * pi].to_vec();
                let c = hq::Case {
                    vectors: vec![hq::Vector { kind: hq::Kind::Token(tb::kivi_quantizer::Kind::Real), x }],
                    in_stall: s2.clone(),
                    out_stall: s3.clone(),
                    seed: *seed ^ 3,
                };
                pbeats = run(pm, &pp, &c)?.out.iter().map(|b| beat(b.meta, b.words.clone(), b.sum, pp.bits)).collect();
            }
            // V's closed blocks through the channel-axis RTL (hc::run checked
            // its rows against these), gathered per channel
            hc::run(vm, &vp, &vc)?;
            let mut vq = vp.quantizer();
            let (nb, w) = (d / vp.lanes, (pi).div_ceil(32 / vp.bits as usize));
            let vbeats: Vec<Vec<qd::Beat>> = vc
                .blocks
                .iter()
                .map(|b| {
                    let rows = hc::expected(&vp, &mut vq, b).0;
                    (0..d)
                        .map(|ch| {
                            let (k, l) = (ch / vp.lanes, ch % vp.lanes);
                            let words = (0..w).map(|i| rows[nb + i * nb + k].beat.data[l]).collect();
                            beat(rows[k].beat.data[l], words, rows[nb + (w - 1) * nb + k].beat.sum[l], vp.bits)
                        })
                        .collect()
                })
                .collect();
            let query = pv::Query {
                p: pbeats,
                v: vbeats,
                tail_p: probs[closed * pi..ctx].to_vec(),
                tail_v,
                tail_kinds: vec![pv::TailKind::Prob; tail],
                prob_p: closed,
            };
            let out = pv::expected(&ep, &query);
            let pc = pv::Case { queries: vec![query], stalls: [s1.clone(), s2.clone(), s3.clone(), s1.clone(), s2.clone()], seed: *seed };
            pv::run(em, &ep, &pc)?;
            for (j, (o, y)) in out.iter().zip(&want.step.out).enumerate() {
                if o.bits != (*y as f32).to_bits() {
                    return Err(format!("channel {j}: chain {:#010x} against sim's attention {:#010x}", o.bits, (*y as f32).to_bits()));
                }
            }
            n.fetch_add(d, std::sync::atomic::Ordering::Relaxed);
            cov.hit(if closed == 0 { "no closed partition" } else { "closed partitions" });
            cov.hit(if tail == 0 { "no open tail" } else { "open tail" });
            cov.add("V channel flat (step 0)", flat_v);
    cov.hit_if("nonfinite input", want.nonfinite || nonfinite_kv);
        }
        Ok(())
    });
    cov.check();
    let n = n.into_inner();
    assert!(n > 0);
    println!("{n} outputs of Q, K, P (token axis) and V (channel axis) through the quantizer RTL, hack-qk-dot and hack-pv-dot RTL, all equal to sim's attention");
}
