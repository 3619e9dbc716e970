//! The worked examples of docs/spec.md §13.12, figure for figure.

use super::cache::KiviCache;
use super::dequantizer::{dequantize, dequantize_group};
use super::format::Meta;
use super::params::{Axis, KiviCacheParams, KiviParams};
use super::quantizer::{quantize_block, quantize_token};
use crate::fp16;

fn f(v: f64) -> u16 {
    fp16::from_f32(v as f32)
}

/// Example 1: axis token, b = 2, G = 16; min -1, max 2, step 1; two ties
/// rounded up.
#[test]
fn example_1_token_axis() {
    let p = KiviParams { head_dim: 16, group: 16, bits: 2, lanes: 16, ..Default::default() };
    let x = [-1.0, 2.0, 0.0, 0.5, -0.5, 1.0, 1.5, 0.25, -0.75, 0.125, 1.75, -0.25, 0.75, 1.25, 0.0, 2.0].map(f);
    let q = quantize_token(&p, &x);
    assert!(!q.nonfinite);
    assert_eq!(q.groups.len(), 1);
    let g = &q.groups[0];
    assert_eq!(g.meta, Meta { scale: 0x3C00, min: 0xBC00 });
    assert_eq!(g.meta.word(), 0x3C00_BC00);
    assert_eq!(g.codes, vec![0, 3, 1, 2, 1, 2, 3, 1, 0, 1, 3, 1, 2, 2, 1, 3]);
    assert_eq!(g.words(2), vec![0xDA74_799C]);
    let y = dequantize(&p, &q);
    let want = [-1.0, 2.0, 0.0, 1.0, 0.0, 1.0, 2.0, 0.0, -1.0, 0.0, 2.0, 0.0, 1.0, 1.0, 0.0, 2.0].map(f);
    assert_eq!(y, vec![want.to_vec()]);
}

/// Example 2: axis channel, b = 2, G = 16, two channels: the step 1/3
/// rounded up to 0x3556; channel 1 constant (max = min).
#[test]
fn example_2_channel_axis() {
    let p = KiviParams { head_dim: 2, group: 16, bits: 2, lanes: 2, axis: Axis::Channel, ..Default::default() };
    p.validate().unwrap();
    let c0 = [0.0, 1.0, 0.5, 0.25, 0.75, 0.125, 0.875, 0.375, 0.625, 0.0625, 0.9375, 0.1875, 0.8125, 0.3125, 0.6875, 0.4375];
    let tokens: Vec<[u16; 2]> = c0.iter().map(|&v| [f(v), f(0.75)]).collect();
    let rows: Vec<&[u16]> = tokens.iter().map(|t| &t[..]).collect();
    let q = quantize_block(&p, &rows);
    assert_eq!(q.groups.len(), 2);
    let (g0, g1) = (&q.groups[0], &q.groups[1]);
    // ceil(2^24 / 3) = 5592406 units; RU -> 1366 * 4096 = 5595136 = 0.33349609375
    assert_eq!(g0.meta, Meta { scale: 0x3556, min: 0x0000 });
    assert_eq!(fp16::to_units(0x3556), 5_595_136);
    assert_eq!(g0.codes, vec![0, 3, 1, 1, 2, 0, 3, 1, 2, 0, 3, 1, 2, 1, 2, 1]);
    assert_eq!(g0.words(2), vec![0x6672_725C]);
    assert_eq!(g1.meta, Meta { scale: 0x0000, min: 0x3A00 });
    assert_eq!(g1.codes, vec![0; 16]);
    assert_eq!(g1.words(2), vec![0]);
    let y0 = dequantize_group(2, &g0.words(2), g0.meta, 16);
    // 3 * step = 1 + 2^-11, a tie, to even: 1.0 (0x3C00)
    assert_eq!(y0, [0x0000, 0x3C00, 0x3556, 0x3556, 0x3956, 0x0000, 0x3C00, 0x3556, 0x3956, 0x0000, 0x3C00, 0x3556, 0x3956, 0x3556, 0x3956, 0x3556]);
    let y = dequantize(&p, &q);
    assert!(y.iter().all(|t| t[1] == f(0.75)));
    // the authors' chain codes 0.5 as 2: see authors.rs and spec §13.10
    let a = super::authors::authors_group(2, &tokens.iter().map(|t| t[0]).collect::<Vec<_>>());
    assert_eq!((a.scale, a.codes[2]), (0x3555, 2));
}

/// Example 3: a NaN and an infinity are replaced before min and max.
#[test]
fn example_3_nonfinite() {
    let p = KiviParams { head_dim: 16, group: 16, bits: 2, lanes: 16, ..Default::default() };
    let mut x = [f(1.0); 16];
    x[0] = 0x7E00; // NaN -> +0
    x[1] = 0xFC00; // -Inf -> -65504
    let q = quantize_token(&p, &x);
    assert!(q.nonfinite);
    let g = &q.groups[0];
    // D = 65505, c = 21835 exactly, RU -> 21840 (0x7555)
    assert_eq!(g.meta, Meta { scale: 0x7555, min: 0xFBFF });
    assert_eq!(g.codes[..3], [3, 0, 3]);
    let y = dequantize(&p, &q);
    assert_eq!(y[0][..3], [f(16.0), 0xFBFF, f(16.0)]);
}

/// Example 4: the flush rules with G = 16, R = 32 on 40 prefill tokens
/// and 30 decode steps.
#[test]
fn example_4_flush_rules() {
    let p = KiviCacheParams { head_dim: 16, heads: 1, group: 16, bits_k: 2, bits_v: 2, residual: 32 };
    let mut c = KiviCache::new(&p).unwrap();
    let tok = |t: usize| -> Vec<u16> { (0..16).map(|i| f(((t * 16 + i) % 7) as f64 - 3.0)).collect() };
    let toks: Vec<Vec<u16>> = (0..70).map(tok).collect();
    let r: Vec<&[u16]> = toks[..40].iter().map(|t| &t[..]).collect();
    let s = c.prefill(&r, &r);
    // K: 40 - 40 mod 32 = 32 tokens, 2 blocks; 8 wait. V: 40 - 32 = 8 tokens.
    assert_eq!((s.k_blocks, s.v_tokens), (2, 8));
    assert_eq!((c.k_residual.len(), c.v_window.len()), (8, 32));
    let mut flushes = vec![];
    for t in 40..70 {
        let s = c.push(&toks[t], &toks[t]);
        assert_eq!(s.v_tokens, 1, "every decode step quantizes the oldest V token");
        if s.k_blocks > 0 {
            flushes.push((t, s.k_blocks));
        }
    }
    // the residual reaches 32 after token 63 (tokens 32..=63)
    assert_eq!(flushes, vec![(63, 2)]);
    assert_eq!((c.k_quantized_tokens(), c.k_residual.len()), (64, 6));
    assert_eq!((c.v_quantized_tokens(), c.v_window.len()), (38, 32));
}
