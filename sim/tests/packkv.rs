//! PackKV golden models (docs/spec.md §14): round trip, error bound,
//! degenerate inputs, malformed streams, repack order, interleave.

use sim::fp16;
use sim::kvgen::Rng;
use sim::packkv::codec::*;
use sim::packkv::params::*;
use sim::packkv::quantizer::*;

/// A random FP16 vector: a normal bulk, scaled by a random power of two,
/// with a few outliers, occasional exact repeats and subnormals.
fn vector(rng: &mut Rng, n: usize) -> Vec<u16> {
    let scale = 2f64.powi(rng.below(30) as i32 - 20);
    let off = if rng.below(4) == 0 { rng.normal() * 8.0 * scale } else { 0.0 };
    (0..n)
        .map(|_| {
            let v = match rng.below(20) {
                0 => rng.normal() * 40.0 * scale,
                1 => 0.0,
                2 => 3e-6 * rng.normal(),
                _ => rng.normal() * scale + off,
            };
            fp16::sanitize(fp16::from_f32(v.clamp(-65504.0, 65504.0) as f32)).0
        })
        .collect()
}

fn block(p: &PackKvParams, rng: &mut Rng) -> (TokenBlock, Vec<Vec<u16>>) {
    let xs: Vec<Vec<u16>> = (0..p.block).map(|_| vector(rng, p.vector_len())).collect();
    let q: Vec<QuantToken> = xs.iter().map(|x| quantize_token(p, x)).collect();
    (TokenBlock { meta: q.iter().map(|t| t.meta).collect(), rows: q.iter().map(|t| t.codes.clone()).collect(), nonfinite: false }, xs)
}

fn sets() -> Vec<PackKvParams> {
    let d = PackKvParams::default();
    vec![
        d.clone(),
        PackKvParams { repack: Repack::Median, ..d.clone() },
        PackKvParams { levels: 5, block: 128, pack: 16, repack: Repack::Median, ..d.clone() },
        PackKvParams { levels: 255, block: 16, pack: 2, head_dim: 8, lanes: 8, ..d.clone() },
        PackKvParams { levels: 2, block: 32, pack: 32, heads: 3, head_dim: 64, repack: Repack::Median, ..d.clone() },
        PackKvParams { levels: 15, block: 64, pack: 8, heads: 2, interleave: Interleave::Gpu, ..d.clone() },
        PackKvParams { levels: 7, block: 16, pack: 4, head_dim: 3, lanes: 1, repack: Repack::Median, ..d },
    ]
}

/// encoder -> decoder gives back every code and metadata word, in arrival
/// order, with and without repacking, at seven parameter sets.
#[test]
fn encode_decode_round_trip_is_exact_on_codes() {
    let mut rng = Rng::new(37);
    let mut blocks = 0;
    for p in sets() {
        p.validate().unwrap();
        let pv = PackKvParams { levels: (p.levels / 2).max(2), ..p.clone() };
        for _ in 0..4 {
            let (k, _) = block(&p, &mut rng);
            let (v, _) = block(&pv, &mut rng);
            let [(kw, kb), (vw, vb)] = encode_pair(&p, &pv, &k, &v).unwrap();
            assert_eq!((kb.total(), vb.total()), (32 * kw.len(), 32 * vw.len()));
            assert_eq!(kb.perm, p.perm_bits());
            assert_eq!(vb.perm, 0);
            let dk = decode_block(&p, &kw).unwrap();
            let mut dv = decode_block(&pv, &vw).unwrap();
            assert_eq!(dk.arrival_rows(), (k.meta.clone(), k.rows.clone()), "{p:?}");
            dv.perm = dk.perm.clone();
            assert_eq!(dv.arrival_rows(), (v.meta.clone(), v.rows.clone()), "{p:?}");
            // a stream of both blocks decodes to both
            let s: Vec<u32> = kw.iter().chain(&vw).copied().collect();
            let r = decode_stream(&p, &s);
            assert_eq!(r.len(), 2);
            assert!(r[0].is_ok());
            blocks += 1;
        }
    }
    assert_eq!(blocks, 28);
}

/// |output - x| <= step/2 + ulp(|output|)/2 and codes in 0..=N for every
/// element of random vectors, N from 2 to 255.
#[test]
fn error_bound_holds_on_random_vectors() {
    let mut rng = Rng::new(14);
    let mut tight = 0;
    for levels in [2u32, 3, 5, 10, 15, 16, 63, 100, 255] {
        let p = PackKvParams { levels, head_dim: 256, ..Default::default() };
        for _ in 0..200 {
            let x = vector(&mut rng, 256);
            let q = quantize_token(&p, &x);
            assert!(q.codes.iter().all(|&c| c as u32 <= levels));
            let g = TokenGrid::from_meta(q.meta);
            let out = dequantize_token(q.meta, &q.codes);
            for (j, &o) in out.iter().enumerate() {
                let (ou, xu) = (fp16::to_units(o), fp16::to_units(x[j]));
                let e2 = 2 * (ou - xu).abs();
                assert!(e2 <= bound_x2(g.step_units, ou), "N {levels}: x {:#06x} -> {o:#06x}, step {:#06x}", x[j], q.meta.step);
                tight += (e2 >= g.step_units) as u32;
            }
        }
    }
    assert!(tight > 0, "no element reached step/2: the bound is not exercised");
}

/// max = min: every code 0, width-0 packs, decoded exactly, at extremes.
#[test]
fn max_equal_min_decodes_exactly() {
    let p = PackKvParams { head_dim: 16, block: 16, pack: 16, ..Default::default() };
    for v in [0x0000u16, 0x3A00, 0xBC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x5555] {
        let q = quantize_token(&p, &[v; 16]);
        assert_eq!(q.codes, vec![0; 16]);
        assert!(dequantize_token(q.meta, &q.codes).iter().all(|&o| o == v), "{v:#06x}: {:?}", q.meta);
        let b = TokenBlock { meta: vec![q.meta; 16], rows: vec![q.codes.clone(); 16], nonfinite: false };
        let [(w, bits), _] = encode_pair(&p, &p, &b, &b).unwrap();
        assert_eq!(bits.payload, 0);
        assert_eq!(decode_block(&p, &w).unwrap().rows, b.rows);
    }
}

/// NaN and infinities are replaced and flagged, in the token and in the
/// block header (bit 25).
#[test]
fn non_finite_input_is_flagged() {
    let p = PackKvParams { head_dim: 16, block: 16, ..Default::default() };
    let mut x = vec![fp16::from_f32(1.0); 16];
    x[0] = 0x7E00; // NaN
    x[1] = 0xFC00; // -Inf
    let q = quantize_token(&p, &x);
    assert!(q.nonfinite);
    let out = dequantize_token(q.meta, &q.codes);
    assert!(out.iter().all(|&o| fp16::is_finite(o)));
    assert_eq!(fp16::to_f64(out[1]), -65504.0);
    let clean = quantize_token(&p, &[fp16::from_f32(1.0); 16]);
    assert!(!clean.nonfinite);
    let mut b = TokenBlock { meta: vec![clean.meta; 16], rows: vec![clean.codes.clone(); 16], nonfinite: false };
    b.meta[3] = q.meta;
    b.rows[3] = q.codes.clone();
    b.nonfinite = true;
    let [(w, _), _] = encode_pair(&p, &p, &b, &b).unwrap();
    assert_eq!(w[0] >> 25 & 1, 1);
    assert!(decode_block(&p, &w).unwrap().nonfinite);
}

/// A code above N is refused by the encoder (never wrapped); the decoder
/// flags a width past r, a code past N, a wrong length, a repeated
/// permutation index, a truncated block and a bad header, and resumes at
/// the next block.
#[test]
fn overflow_and_malformed_streams_are_flagged() {
    let p = PackKvParams { head_dim: 4, lanes: 4, block: 16, pack: 8, ..Default::default() };
    let meta = vec![TokenMeta { step: 0x3C00, zero: 0 }; 16];
    let mut rows = vec![vec![1u8, 2, 3, 4]; 16];
    rows[5][2] = 11;
    assert_eq!(encode_block(&p, &meta, &rows, None, false), Err(BlockError::Overflow));
    rows[5][2] = 10;
    let (good, _) = encode_block(&p, &meta, &rows, None, false).unwrap();
    let stream = |bad: &[u32]| -> Vec<u32> { good.iter().chain(bad).chain(&good).copied().collect() };
    let field_bit = 32 * 17; // first pack field: min in bits 3:0, width in 6:4
    let with = |f: &dyn Fn(&mut Vec<u32>)| {
        let mut b = good.clone();
        f(&mut b);
        b
    };
    // ch0's pack: min 1, width 0 -> width 5 > r = 4
    let wide = with(&|b| b[field_bit / 32] |= 5 << 4);
    // ch0's pack: min 1 -> min 15, codes 15 > N = 10
    let big = with(&|b| b[field_bit / 32] |= 14);
    let long = with(&|b| b[0] += 1);
    let reserved = with(&|b| b[0] |= 1 << 30);
    let wrong_r = with(&|b| b[0] ^= 1 << 20);
    for (bad, e) in [(&wide, BlockError::BadWidth), (&big, BlockError::BadCode), (&reserved, BlockError::BadHeader), (&wrong_r, BlockError::BadHeader)] {
        let r = decode_stream(&p, &stream(bad));
        assert_eq!(r.len(), 3, "{e:?}");
        assert_eq!(r[1], Err(e));
        assert_eq!(r[2].as_ref().unwrap().rows, rows, "{e:?}: the next block is shifted");
    }
    // one word longer than its contents: flagged, and the next block starts one word later
    let mut s = stream(&long);
    s.insert(2 * good.len(), 0);
    let r = decode_stream(&p, &s);
    assert_eq!((r.len(), &r[1]), (3, &Err(BlockError::BadLength)));
    assert_eq!(r[2].as_ref().unwrap().rows, rows);
    // a permutation repeating an index, between two blocks with a good one
    // (identity; entries of 4 bits from bit 32 * 17, after the metadata)
    let ident: Vec<usize> = (0..16).collect();
    let (pgood, _) = encode_block(&p, &meta, &rows, Some(&ident), false).unwrap();
    let mut pbad = pgood.clone();
    pbad[17] ^= 1 << 4; // entry 1: 1 -> 0, a second 0
    let s: Vec<u32> = pgood.iter().chain(&pbad).chain(&pgood).copied().collect();
    let r = decode_stream(&p, &s);
    assert_eq!((r.len(), &r[1]), (3, &Err(BlockError::BadPermutation)));
    assert_eq!(r[2], r[0], "bad permutation: the next block is shifted");
    assert_eq!(r[2].as_ref().unwrap().rows, rows);
    // truncated: the stream ends inside the second block
    let r = decode_stream(&p, &good.iter().chain(&good[..10]).copied().collect::<Vec<_>>());
    assert_eq!((r.len(), &r[1]), (2, &Err(BlockError::Truncated)));
}

/// Median repacking is a stable counting sort: equal medians keep their
/// arrival order, for any block of equal medians and for random ones.
#[test]
fn repack_tie_order_is_stable() {
    let mut rng = Rng::new(5);
    let same: Vec<Vec<u8>> = (0..64).map(|t| vec![(t % 3) as u8, 2, 2, 7]).collect();
    assert_eq!(median_order(&same), (0..64).collect::<Vec<_>>());
    for _ in 0..50 {
        let rows: Vec<Vec<u8>> = (0..64).map(|_| (0..9).map(|_| rng.below(4) as u8).collect()).collect();
        let o = median_order(&rows);
        let m: Vec<u8> = o.iter().map(|&i| lower_median(&rows[i])).collect();
        for i in 1..64 {
            assert!(m[i - 1] > m[i] || (m[i - 1] == m[i] && o[i - 1] < o[i]));
        }
    }
}

/// The Fig. 9 interleave stores the payload of channels 0, 4, .., 124, 1,
/// 5, .. in each 128 channels, and leaves the pack fields in channel order.
#[test]
fn gpu_interleave_order() {
    let p = PackKvParams { head_dim: 256, interleave: Interleave::Gpu, ..Default::default() };
    let order: Vec<usize> = (0..256).map(|i| payload_channel(&p, i)).collect();
    assert_eq!(order[..3], [0, 4, 8]);
    assert_eq!((order[31], order[32], order[127], order[128], order[129]), (124, 1, 127, 128, 132));
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..256).collect::<Vec<_>>());
    // same bits as the canonical layout
    let mut rng = Rng::new(9);
    let (b, _) = block(&p, &mut rng);
    let canon = PackKvParams { interleave: Interleave::None, ..p.clone() };
    let [(wi, bi), _] = encode_pair(&p, &p, &b, &b).unwrap();
    let [(wc, bc), _] = encode_pair(&canon, &canon, &b, &b).unwrap();
    assert_eq!(bi, bc);
    assert_ne!(wi, wc);
    assert_eq!(decode_block(&p, &wi).unwrap().rows, b.rows);
}

/// The synthetic row of spec §14.11's table, recomputed from the default
/// synthetic set (`kvsim gen` defaults): a change that moves it must
/// update the spec too. The SQNR is at least the §14.8 floor.
#[test]
fn section_14_11_synthetic_figures() {
    use sim::kvgen::{generate, KvGenConfig};
    use sim::packkv::metrics::measure;
    let set = generate(&KvGenConfig::default()).unwrap();
    let r = measure(&set, &PackKvParams::default(), 5).unwrap();
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    assert!(r.max_bound_ratio <= 1.0);
    assert!(r.sqnr_db.unwrap() >= r.sqnr_floor_db.unwrap());
    assert!(close(r.bits_none.total, 2.6013, 5e-5) && close(r.bits_median.total, 2.2653, 5e-5));
    assert!(close(r.bits_none.authors_count, 2.3463, 5e-5) && close(r.bits_median.authors_count, 1.9870, 5e-5));
    assert!(close(r.v.bits_median.authors_count, 1.0819, 5e-5) && close(r.k.bits_none.authors_count, 2.8902, 5e-5));
    assert!(close(r.k.sqnr_db.unwrap(), 10.85, 0.005) && close(r.v.sqnr_db.unwrap(), 7.50, 0.005));
    assert!(close(r.sqnr_floor_db.unwrap(), 4.44, 0.005));
}
