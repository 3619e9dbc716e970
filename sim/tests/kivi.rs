//! KIVI models (docs/spec.md §13): the error bound on random vectors of
//! both axes at every code width and group size, max = min, non-finite
//! inputs, the packing round trip, the flush rules of the reference cache
//! model, and the replica of the authors' FP16 chain on exact grids.

use sim::fp16;
use sim::kivi::authors::authors_group;
use sim::kivi::cache::KiviCache;
use sim::kivi::dequantizer::{bound_x2, dequantize, dequantize_group};
use sim::kivi::format::unpack;
use sim::kivi::params::{Axis, KiviCacheParams, KiviParams};
use sim::kivi::quantizer::{quantize_block, quantize_group, quantize_token, QuantOut};
use sim::kvgen::Rng;

/// A random finite FP16 value: mostly normal values at a random scale, with
/// subnormals, zeros, the extremes and repeats mixed in.
fn value(rng: &mut Rng, scale: f64) -> u16 {
    match rng.below(40) {
        0 => fp16::MAX_POS,
        1 => fp16::MAX_NEG,
        2 => 0,
        3 => rng.below(1024) as u16 | (rng.below(2) as u16) << 15, // subnormal
        4 => (rng.below(0x7C00) as u16) | (rng.below(2) as u16) << 15, // any finite pattern
        _ => {
            let v = fp16::from_f32((rng.normal() * scale) as f32);
            if fp16::is_finite(v) { fp16::sanitize(v).0 } else { 0 }
        }
    }
}

fn vector(rng: &mut Rng, n: usize) -> Vec<u16> {
    let scale = [1e-6, 1e-3, 0.1, 1.0, 10.0, 1000.0][rng.below(6)];
    let mut v: Vec<u16> = (0..n).map(|_| value(rng, scale)).collect();
    if rng.below(4) == 0 {
        // a narrow group: a few distinct values
        let a = v[0];
        for e in v.iter_mut().step_by(2) {
            *e = a;
        }
    }
    v
}

/// Every element of `x` (sanitised) against its decoded output: `2|err| <=
/// s + ulp(|out|)` (spec §13.9). Returns the number of elements checked.
fn check_bound(bits: u32, x: &[u16], q: &QuantOut, p: &KiviParams) -> usize {
    let y = dequantize(p, q);
    let mut n = 0;
    for (gi, g) in q.groups.iter().enumerate() {
        assert!(g.codes.iter().all(|&c| (c as u32) < 1 << bits));
        let s = fp16::to_units(g.meta.scale);
        for (j, _) in g.codes.iter().enumerate() {
            let (xi, yi) = match p.axis {
                Axis::Token => (gi * p.group + j, y[0][gi * p.group + j]),
                Axis::Channel => (j * p.vector_len() + gi, y[j][gi]),
            };
            let xu = fp16::to_units(fp16::sanitize(x[xi]).0);
            assert!(fp16::is_finite(yi) && yi != 0x8000, "output {yi:#06x}");
            let yu = fp16::to_units(yi);
            assert!(2 * (yu - xu).abs() <= bound_x2(s, yu), "b {bits} x {:#06x} -> {yi:#06x}, step {:#06x}", x[xi], g.meta.scale);
            n += 1;
        }
    }
    n
}

#[test]
fn error_bound_on_random_vectors_both_axes() {
    let mut rng = Rng::new(36);
    let mut checked = 0;
    for bits in [2u32, 3, 4, 8] {
        for group in [16usize, 32, 64, 128] {
            for round in 0..6 {
                let head_dim = group * (1 + round % 2);
                let heads = 1 + round % 3;
                let tp = KiviParams { head_dim, heads, group, bits, lanes: 16, axis: Axis::Token };
                tp.validate().unwrap();
                let x = vector(&mut rng, tp.vector_len());
                let q = quantize_token(&tp, &x);
                assert!(!q.nonfinite);
                assert_eq!(q.groups.len(), tp.vector_len() / group);
                checked += check_bound(bits, &x, &q, &tp);

                let cp = KiviParams { head_dim: 16, heads: 1, group, bits, lanes: 16, axis: Axis::Channel };
                let block: Vec<u16> = (0..group).flat_map(|_| vector(&mut rng, 16)).collect();
                let rows: Vec<&[u16]> = block.chunks(16).collect();
                let q = quantize_block(&cp, &rows);
                assert_eq!(q.groups.len(), 16);
                checked += check_bound(bits, &block, &q, &cp);
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// The bound is reached: a tie rounded up, then an RNE tie at the output.
#[test]
fn bound_is_tight() {
    let mut best = 0.0f64;
    let mut rng = Rng::new(7);
    for _ in 0..3000 {
        let x = vector(&mut rng, 16);
        let (g, _) = quantize_group(2, &x);
        let y = dequantize_group(2, &g.words(2), g.meta, 16);
        let s = fp16::to_units(g.meta.scale);
        for (xi, yi) in x.iter().zip(&y) {
            let (xu, yu) = (fp16::to_units(*xi), fp16::to_units(*yi));
            best = best.max((2 * (yu - xu).abs()) as f64 / bound_x2(s, yu) as f64);
        }
    }
    assert!(best > 0.99 && best <= 1.0, "{best}");
}

#[test]
fn max_equal_min_is_exact() {
    for v in [0u16, 0x0001, 0x03FF, 0x3C00, 0xBC00, fp16::MAX_POS, fp16::MAX_NEG, 0x8000] {
        for bits in [2u32, 3, 4, 8] {
            let (g, nf) = quantize_group(bits, &[v; 32]);
            assert!(!nf);
            let s = fp16::sanitize(v).0;
            assert_eq!((g.meta.scale, g.meta.min), (0, s), "{v:#06x}");
            assert!(g.codes.iter().all(|&c| c == 0));
            assert!(g.words(bits).iter().all(|&w| w == 0));
            assert_eq!(dequantize_group(bits, &g.words(bits), g.meta, 32), vec![s; 32]);
        }
    }
}

#[test]
fn nonfinite_inputs_are_flagged_and_replaced() {
    let mut rng = Rng::new(11);
    let specials = [0x7C00u16, 0xFC00, 0x7E00, 0xFE01, 0x7C01];
    for bits in [2u32, 4] {
        for _ in 0..200 {
            let p = KiviParams { head_dim: 64, group: 32, bits, ..Default::default() };
            let mut x = vector(&mut rng, 64);
            let clean = quantize_token(&p, &x);
            assert!(!clean.nonfinite);
            let at = rng.below(64);
            x[at] = specials[rng.below(specials.len())];
            let q = quantize_token(&p, &x);
            assert!(q.nonfinite);
            check_bound(bits, &x, &q, &p);
            // the same as quantizing the sanitised vector, but flagged
            let xs: Vec<u16> = x.iter().map(|&e| fp16::sanitize(e).0).collect();
            assert_eq!(quantize_token(&p, &xs).groups, q.groups);
            // K: one bad element flags its whole block
            let cp = KiviParams { head_dim: 16, group: 16, bits, axis: Axis::Channel, ..Default::default() };
            let mut block: Vec<u16> = vector(&mut rng, 256);
            block[rng.below(256)] = specials[rng.below(specials.len())];
            let q = quantize_block(&cp, &block.chunks(16).collect::<Vec<_>>());
            assert!(q.nonfinite);
            check_bound(bits, &block, &q, &cp);
        }
    }
}

#[test]
fn packing_round_trip_in_code_order() {
    let mut rng = Rng::new(3);
    for bits in [2u32, 3, 4, 8] {
        for group in [16usize, 32, 64, 128] {
            let x = vector(&mut rng, group);
            let (g, _) = quantize_group(bits, &x);
            let w = g.words(bits);
            let c = 32 / bits as usize;
            assert_eq!(w.len(), group.div_ceil(c));
            assert_eq!(unpack(&w, bits, group), g.codes);
            // code j sits at bits b*(j mod c) of word j div c; unused bits 0
            for (j, &q) in g.codes.iter().enumerate() {
                assert_eq!((w[j / c] >> (bits as usize * (j % c))) & ((1 << bits) - 1), q as u32);
            }
            if bits == 3 {
                assert!(w.iter().all(|&x| x >> 30 == 0));
            }
            let tail = group % c;
            if tail != 0 {
                assert_eq!(w[w.len() - 1] >> (bits as usize * tail), 0);
            }
        }
    }
}

fn tokens(rng: &mut Rng, t: usize, n: usize) -> Vec<Vec<u16>> {
    (0..t).map(|_| vector(rng, n)).collect()
}

/// After T tokens, however split between prefill and decode: K holds
/// `T - T mod R` quantized tokens and `T mod R` in full precision, V
/// `max(0, T - R)` and `min(T, R)`; K flushes exactly when the residual
/// reaches R; the state is the same as a prefill of all T tokens.
#[test]
fn flush_rules_of_the_cache_model() {
    let mut rng = Rng::new(21);
    for (group, residual) in [(16usize, 16usize), (16, 48), (32, 128)] {
        let p = KiviCacheParams { head_dim: 32, heads: 1, group, bits_k: 2, bits_v: 3, residual };
        let total = 2 * residual + 7;
        let k = tokens(&mut rng, total, 32);
        let v = tokens(&mut rng, total, 32);
        let refs = |s: &[Vec<u16>]| -> Vec<Vec<u16>> { s.to_vec() };
        let mut whole = KiviCache::new(&p).unwrap();
        let kr: Vec<&[u16]> = k.iter().map(|t| &t[..]).collect();
        let vr: Vec<&[u16]> = v.iter().map(|t| &t[..]).collect();
        whole.prefill(&kr, &vr);
        for pre in [0usize, 1, residual - 1, residual, residual + 1, total] {
            let mut c = KiviCache::new(&p).unwrap();
            let s = c.prefill(&kr[..pre], &vr[..pre]);
            assert_eq!(s.k_blocks * group, pre - pre % residual);
            assert_eq!(s.v_tokens, pre.saturating_sub(residual));
            for t in pre..total {
                let before = c.k_residual.len();
                let s = c.push(&k[t], &v[t]);
                let n = t + 1;
                assert_eq!(s.k_blocks, if before + 1 == residual { residual / group } else { 0 }, "t {t}");
                assert_eq!(s.v_tokens, (n > residual) as usize);
                assert_eq!((c.k_quantized_tokens(), c.k_residual.len()), (n - n % residual, n % residual));
                assert_eq!((c.v_quantized_tokens(), c.v_window.len()), (n.saturating_sub(residual), n.min(residual)));
                assert!(c.k_residual.len() < residual && c.v_window.len() <= residual);
            }
            assert_eq!(c.k_blocks, whole.k_blocks, "prefill {pre}");
            assert_eq!(c.v_quant, whole.v_quant);
            assert_eq!(c.k_rebuilt(), whole.k_rebuilt());
            assert_eq!(c.v_rebuilt(), whole.v_rebuilt());
        }
        // the residual is kept as given; quantized tokens decode within the bound
        let kb = whole.k_rebuilt();
        assert_eq!(kb.len(), total);
        assert_eq!(kb[total - total % residual..], refs(&k)[total - total % residual..]);
        assert_eq!(whole.v_rebuilt()[total - residual..], refs(&v)[total - residual..]);
        for (b, blk) in whole.k_blocks.iter().enumerate() {
            let flat: Vec<u16> = k[b * group..(b + 1) * group].concat();
            check_bound(2, &flat, blk, &whole.k_unit);
        }
    }
}

/// On groups whose step the authors' FP16 chain computes exactly (range
/// 3 * 2^e, values on the half-step grid), the replica and the model code
/// every element alike except at ties, which the authors round to even.
#[test]
fn authors_chain_differs_only_at_ties_on_exact_grids() {
    let mut rng = Rng::new(8);
    let mut ties = 0;
    for _ in 0..500 {
        let e = rng.below(12) as i32 - 8; // step 2^-8 .. 2^3
        let s = 2f64.powi(e);
        let lo = (rng.below(64) as f64 - 32.0) * s;
        let mut halves: Vec<usize> = (0..16).map(|_| rng.below(7)).collect(); // 0 ..= 6 half steps
        halves[0] = 0;
        halves[1] = 6;
        let x: Vec<u16> = halves.iter().map(|&h| fp16::from_f32((lo + h as f64 * s / 2.0) as f32)).collect();
        let (g, _) = quantize_group(2, &x);
        let a = authors_group(2, &x);
        assert_eq!(g.meta.scale, a.scale);
        assert_eq!(g.meta.min, a.min);
        for (j, &h) in halves.iter().enumerate() {
            let ours = g.codes[j] as i32;
            let (half_up, even) = if h % 2 == 1 {
                ties += 1;
                let (d, u) = ((h / 2) as i32, (h / 2 + 1) as i32);
                (u, if d % 2 == 0 { d } else { u })
            } else {
                ((h / 2) as i32, (h / 2) as i32)
            };
            assert_eq!(ours, half_up);
            assert_eq!(a.codes[j], even);
        }
    }
    assert!(ties > 1000);
}

/// On random data with a normal (not subnormal) step the two chains code
/// at most one level apart, and the authors' scale is never above ours by
/// more than its own rounding. With a subnormal step the authors' scale
/// is rounded to a grid as coarse as the step itself (spec §13.10).
#[test]
fn authors_chain_is_within_one_level() {
    let mut rng = Rng::new(9);
    let mut normal = 0;
    for bits in [2u32, 3, 4, 8] {
        for _ in 0..1500 {
            let x = vector(&mut rng, 32);
            if x.iter().any(|&e| fp16::to_units(e).abs() > fp16::MAX_UNITS / 2) {
                continue; // the authors' max - min may overflow FP16
            }
            let (g, _) = quantize_group(bits, &x);
            let a = authors_group(bits, &x);
            assert_eq!(g.meta.min, a.min);
            if fp16::to_units(g.meta.scale) < 1024 {
                continue;
            }
            normal += 1;
            // ours is RU of the exact quotient, theirs RNE of a rounded one
            assert!(fp16::to_units(a.scale) <= fp16::to_units(g.meta.scale) + fp16::grid_ulp(fp16::to_units(g.meta.scale) as u64) as i64);
            for (q, &qa) in g.codes.iter().zip(&a.codes) {
                assert!((*q as i32 - qa).abs() <= 1, "bits {bits}: {q} vs {qa}");
            }
        }
    }
    assert!(normal > 1000, "{normal}");
}
