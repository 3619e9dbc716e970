//! HACK models against docs/spec.md §15: Eq. 4 against dequantize-then-
//! multiply, code sums, the LFSR, zero-range partitions, non-finite input,
//! the open V partition at every length, extreme codes, bad parameters and
//! the committed real slice within the derived bound of §15.11.

use sim::fp16;
use sim::hack::dot::{combine, pv_dot, round_f32, QkDot};
use sim::hack::lfsr::Lfsr;
use sim::hack::metrics::{measure, SplitMix};
use sim::hack::params::{sum_bits, HackParams, Rounding};
use sim::hack::quantizer::{Part, Quantizer};
use sim::hack::reference::grid_dot;
use sim::kvset::KvSet;
use std::process::Command;

/// A finite FP16 value: mostly moderate, sometimes anywhere in the range.
fn value(r: &mut SplitMix) -> u16 {
    let u = r.next_u64();
    if u.is_multiple_of(16) {
        let x = (u >> 8) as u16;
        fp16::sanitize(x).0
    } else {
        fp16::from_f32(((r.uniform() - 0.5) * 8.0) as f32)
    }
}

fn vector(r: &mut SplitMix, n: usize) -> Vec<u16> {
    (0..n).map(|_| value(r)).collect()
}

/// `|round_f32(v) - v| <= ulp/2`, compared exactly in units of 2^-48.
fn within_half_ulp(v: i128) -> bool {
    let f = round_f32(v) as f64;
    let back = (f * 2f64.powi(48)) as i128;
    let ulp = if f == 0.0 { 0.0 } else { 2f64.powi(f.abs().log2().floor() as i32 - 23) };
    (back - v).abs() as f64 <= ulp * 2f64.powi(48) / 2.0
}

#[test]
fn eq4_equals_dequantize_then_multiply() {
    let mut r = SplitMix(7);
    let mut n = 0;
    for &(pi, hd) in &[(16, 16), (32, 64), (48, 96), (64, 128), (128, 256), (256, 256)] {
        for &(ba, bb) in &[(8u32, 2u32), (8, 3), (4, 4), (8, 8)] {
            for rounding in [Rounding::Nearest, Rounding::Stochastic] {
                for _ in 0..6 {
                    let (a, _) = Quantizer::new(ba, pi, rounding, 0xACE1).quantize_vector(&vector(&mut r, hd));
                    let (b, _) = Quantizer::new(bb, pi, rounding, 0x1234).quantize_vector(&vector(&mut r, hd));
                    let unit = QkDot::new(a.clone());
                    let exact = unit.score_exact(&b);
                    assert_eq!(exact, grid_dot(&a, &b), "Eq. 4 is exact on the grid");
                    assert!(within_half_ulp(exact), "one RNE32 rounding");
                    assert_eq!(unit.score(&b), round_f32(grid_dot(&a, &b)));
                    // §15.6 accumulator width: |acc| < 2^(84 + log2 head_dim)
                    assert!(exact.unsigned_abs() < 1u128 << (84 + hd.trailing_zeros() + 1));
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 6 * 4 * 2 * 6);
}

#[test]
fn code_sums_are_exact_and_fit() {
    let mut r = SplitMix(11);
    for &pi in &[16usize, 48, 64, 128, 256] {
        for &b in &[2u32, 3, 4, 8] {
            let mut q = Quantizer::new(b, pi, Rounding::Nearest, 0xACE1);
            let (parts, _) = q.quantize_vector(&vector(&mut r, 4 * pi));
            for p in &parts {
                assert_eq!(p.sum, p.codes.iter().map(|&c| c as u32).sum::<u32>());
                assert!(p.sum < 1 << sum_bits(b, pi));
            }
            // extreme codes: every element at the maximum but one at the minimum
            let mut x = vec![fp16::from_f32(3.0); pi];
            x[0] = fp16::from_f32(-3.0);
            let (p, _) = q.quantize_vector(&x);
            let top = (1u32 << b) - 1;
            assert_eq!(p[0].codes[0], 0);
            assert!(p[0].codes[1..].iter().all(|&c| c as u32 == top));
            assert_eq!(p[0].sum, (pi as u32 - 1) * top);
            assert!(pi as u32 * top < 1 << sum_bits(b, pi), "the largest sum fits");
        }
    }
}

#[test]
fn lfsr_sequence_and_reproducibility() {
    let mut l = Lfsr::new(0xACE1);
    let mut states = Vec::new();
    for _ in 0..4 {
        l.step();
        states.push(l.state);
    }
    assert_eq!(states, [0xE270, 0x7138, 0x389C, 0x1C4E], "one step shifts right, feedback 0xB400");
    let mut l = Lfsr::new(0xACE1);
    let words: Vec<u16> = (0..4).map(|_| l.next_word()).collect();
    assert_eq!(words, [0xEB62, 0x330D, 0x8777, 0x1BBF]);
    // reproducible: same seed, same codes; another seed, other codes
    let x = vector(&mut SplitMix(3), 1024);
    let run = |seed| Quantizer::new(2, 64, Rounding::Stochastic, seed).quantize_vector(&x).0;
    assert_eq!(run(0xACE1), run(0xACE1));
    assert_ne!(run(0xACE1), run(0xBEEF));
    // each stochastic code is the floor or the floor plus one of n / step
    let near = Quantizer::new(2, 64, Rounding::Nearest, 0xACE1).quantize_vector(&x).0;
    for (i, (s, n)) in run(0xACE1).iter().zip(&near).enumerate() {
        let g = n.params();
        assert_eq!(s.meta, n.meta, "the rounding changes codes only");
        for (j, &c) in s.codes.iter().enumerate() {
            let v = fp16::to_units(fp16::sanitize(x[64 * i + j]).0);
            let fl = if g.step_units == 0 { 0 } else { (v - g.min_units) / g.step_units };
            assert!(c as i64 == fl || c as i64 == fl + 1);
        }
    }
}

#[test]
fn stochastic_rounding_is_unbiased() {
    // a partition with min 0 and max 3 (step 1) and 62 copies of 1.25
    let mut x = vec![fp16::from_f32(1.25); 64];
    x[0] = 0;
    x[1] = fp16::from_f32(3.0);
    let mut q = Quantizer::new(2, 64, Rounding::Stochastic, 0xACE1);
    let (mut ups, mut n) = (0u32, 0u32);
    for _ in 0..200 {
        let (p, _) = q.quantize_vector(&x);
        for &c in &p[0].codes[2..] {
            assert!(c == 1 || c == 2);
            ups += (c == 2) as u32;
            n += 1;
        }
    }
    // P(up) = 0.25 (within 2^-16); 12,400 draws: 6 sigma is 0.023
    let f = ups as f64 / n as f64;
    assert!((f - 0.25).abs() < 6.0 * (0.25f64 * 0.75 / n as f64).sqrt(), "{f}");
}

#[test]
fn zero_range_partitions() {
    let q = vec![fp16::from_f32(0.75); 32];
    let k = vec![fp16::from_f32(-2.0); 32];
    for rounding in [Rounding::Nearest, Rounding::Stochastic] {
        let (qp, _) = Quantizer::new(8, 32, rounding, 0xACE1).quantize_vector(&q);
        let (kp, _) = Quantizer::new(2, 32, rounding, 0xACE1).quantize_vector(&k);
        for p in qp.iter().chain(&kp) {
            assert_eq!(p.meta.scale, 0);
            assert!(p.codes.iter().all(|&c| c == 0));
            assert_eq!(p.sum, 0);
        }
        assert_eq!(QkDot::new(qp).score(&kp), -48.0, "Pi m_a m_b alone, exact");
    }
    // a V block whose channel 1 is constant
    let toks: Vec<Vec<u16>> = (0..16).map(|t| vec![fp16::from_f32(t as f32 / 4.0), fp16::from_f32(-1.5)]).collect();
    let refs: Vec<&[u16]> = toks.iter().map(|v| v.as_slice()).collect();
    let (vp, _) = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_block(&refs);
    assert_eq!((vp[1].meta.scale, vp[1].sum), (0, 0));
    let (pp, _) = Quantizer::new(8, 16, Rounding::Nearest, 0xACE1).quantize_vector(&[fp16::from_f32(1.0 / 16.0); 16]);
    let r = pv_dot(2, &pp, &[vp], &[], &[]);
    assert_eq!(r.out[1], -1.5);
}

#[test]
fn nonfinite_input_is_flagged() {
    let mut x = vec![fp16::from_f32(1.0); 64];
    x[5] = 0x7E00; // NaN
    let (p, f) = Quantizer::new(2, 64, Rounding::Nearest, 0xACE1).quantize_vector(&x);
    assert!(f, "K or Q with a NaN");
    assert_eq!(p[0].params().min_units, 0, "NaN became +0, flagged");
    let mut toks: Vec<Vec<u16>> = (0..16).map(|_| vec![fp16::from_f32(0.5); 4]).collect();
    toks[3][2] = 0xFC00; // -Inf
    let refs: Vec<&[u16]> = toks.iter().map(|v| v.as_slice()).collect();
    let (vp, f) = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_block(&refs);
    assert!(f, "V block with -Inf");
    assert_eq!(vp[2].meta.min, fp16::MAX_NEG);
    let good = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_vector(&[0; 16]);
    assert!(!good.1);
    // the FP16 tail of hack-pv-dot: P or V non-finite
    let v = [fp16::from_f32(1.0), 0x7C00];
    let r = pv_dot(2, &[], &[], &[fp16::from_f32(0.5)], &[&v]);
    assert!(r.nonfinite);
    assert!(r.out.iter().all(|o| o.is_finite()));
    let r = pv_dot(2, &[], &[], &[0x7E01], &[&[0, 0]]);
    assert!(r.nonfinite);
    let r = pv_dot(2, &[], &[], &[fp16::from_f32(0.5)], &[&[0, 0]]);
    assert!(!r.nonfinite);
    // a metadata word with a NaN step reaching hack-qk-dot or hack-pv-dot
    let (q, _) = Quantizer::new(8, 16, Rounding::Nearest, 0xACE1).quantize_vector(&[fp16::from_f32(0.5); 16]);
    let (mut k, _) = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_vector(&[fp16::from_f32(1.0); 16]);
    let unit = QkDot::new(q.clone());
    assert!(!unit.nonfinite(&k));
    k[0].meta.scale = 0x7E00;
    assert!(unit.nonfinite(&k));
    assert_eq!(unit.score(&k), 8.0, "the NaN step read as +0");
    assert!(pv_dot(1, &q, &[vec![k[0].clone()]], &[], &[]).nonfinite);
}

/// Every open length 0..Pi-1 behind two closed partitions: the exact
/// accumulator is Eq. 4 on the closed ones plus the FP16 products.
#[test]
fn open_v_partition_at_every_length() {
    let mut r = SplitMix(5);
    for &pi in &[16usize, 64] {
        let hd = 16;
        let toks: Vec<Vec<u16>> = (0..3 * pi).map(|_| vector(&mut r, hd)).collect();
        let refs: Vec<&[u16]> = toks.iter().map(|v| v.as_slice()).collect();
        let mut vq = Quantizer::new(2, pi, Rounding::Nearest, 0xACE1);
        let blocks: Vec<Vec<Part>> = refs[..2 * pi].chunks(pi).map(|b| vq.quantize_block(b).0).collect();
        for tail in 0..pi {
            let ctx = 2 * pi + tail;
            let probs: Vec<u16> = (0..ctx).map(|_| fp16::from_f32(r.uniform() as f32 / ctx as f32)).collect();
            let (pp, _) = Quantizer::new(8, pi, Rounding::Nearest, 0xACE1).quantize_vector(&probs[..2 * pi]);
            let out = pv_dot(hd, &pp, &blocks, &probs[2 * pi..], &refs[2 * pi..ctx]);
            for j in 0..hd {
                let mut want: i128 = 0;
                for b in 0..2 {
                    for i in 0..pi {
                        want += pp[b].grid(i) as i128 * blocks[b][j].grid(i) as i128;
                    }
                    assert_eq!(combine(&pp[b], &blocks[b][j]), (0..pi).map(|i| pp[b].grid(i) as i128 * blocks[b][j].grid(i) as i128).sum::<i128>());
                }
                for t in 2 * pi..ctx {
                    want += fp16::to_units(probs[t]) as i128 * fp16::to_units(toks[t][j]) as i128;
                }
                assert_eq!(out.exact[j], want, "Pi {pi}, tail {tail}, channel {j}");
                assert_eq!(out.out[j], round_f32(want));
            }
        }
    }
}

#[test]
fn extreme_values_and_codes() {
    // +-65504 everywhere: range 131008, the largest step; every code 0 or top
    for &(pi, hd) in &[(16usize, 16usize), (256, 1024)] {
        let x: Vec<u16> = (0..hd).map(|i| if i % 3 == 0 { fp16::MAX_NEG } else { fp16::MAX_POS }).collect();
        for b in [2u32, 8] {
            let (a, _) = Quantizer::new(8, pi, Rounding::Nearest, 0xACE1).quantize_vector(&x);
            for rounding in [Rounding::Nearest, Rounding::Stochastic] {
                let (k, _) = Quantizer::new(b, pi, rounding, 0xACE1).quantize_vector(&x);
                if rounding == Rounding::Nearest {
                    assert!(k.iter().all(|p| p.codes.iter().all(|&c| c == 0 || c as u32 == (1 << b) - 1)));
                }
                let s = QkDot::new(a.clone()).score_exact(&k);
                assert_eq!(s, grid_dot(&a, &k));
                assert!(s.unsigned_abs() < 1u128 << (84 + hd.trailing_zeros() + 1));
                let f = round_f32(s);
                assert!(f.is_finite() && f > 0.0);
            }
        }
    }
}

fn kvsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kvsim")).args(args).output().unwrap()
}

#[test]
fn bad_parameters_exit_2_in_one_line() {
    let slice = sim::workspace_root().join("sim/data/realkv-slice.kv.npy");
    let s = slice.to_str().unwrap();
    for (args, want) in [
        (vec!["hack", "--input", s, "--heads", "3", "--partition", "40"], "partition must be a multiple of 16 (paper §5.3), got 40"),
        (vec!["hack", "--input", s, "--heads", "3", "--partition", "128"], "partition (128) must be at most head-dim (64) on the K axis"),
        (vec!["hack", "--input", s, "--heads", "3", "--rounding", "up"], "rounding must be one of nearest, stochastic"),
        (vec!["hack", "--input", s, "--heads", "3", "--seed", "0"], "seed must be in 1..=65535, got 0"),
    ] {
        let o = kvsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    HackParams { head_dim: 64, partition: 64, ..Default::default() }.validate().unwrap();
}

/// The committed real slice (spec §12.3): every score and output of HACK
/// within the §15.11 bound derived from the steps; Pi = 128 refused at
/// head_dim 64; the error grows with Pi as in the paper's Table 6.
#[test]
fn real_slice_within_the_derived_bound() {
    let p = sim::workspace_root().join("sim/data/realkv-slice.kv.npy");
    let set = KvSet::read(&p).unwrap();
    for rounding in [Rounding::Nearest, Rounding::Stochastic] {
        let base = HackParams { rounding, ..Default::default() };
        let r = measure(&set, 64, None, &[32, 64, 128], &base, 3).unwrap();
        print!("{}", r.summary());
        assert_eq!(r.sequences, 15);
        assert!(r.rows[2].error.as_deref().unwrap().starts_with("partition (128) must be at most head-dim (64)"));
        for row in &r.rows[..2] {
            assert!(row.max_score_bound_ratio <= 1.0 && row.max_out_bound_ratio <= 1.0, "{row:?}");
            assert!(row.max_score_bound_ratio > 0.0);
            assert_eq!(row.nonfinite_sequences, 0);
            assert_eq!(row.queries, 15 * 3);
        }
        assert!(r.rows[0].score_hack_exact_db.unwrap() > r.rows[1].score_hack_exact_db.unwrap(), "Pi 32 beats 64");
    }
}
