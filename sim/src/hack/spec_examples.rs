//! The worked examples of docs/spec.md §15.14.

use super::dot::{code_dot, combine, combine_f16, combine_f32, pv_dot, round_f32, QkDot};
use super::lfsr::Lfsr;
use super::params::Rounding;
use super::quantizer::Quantizer;
use crate::fp16;

fn h(v: &[f32]) -> Vec<u16> {
    v.iter().map(|&x| fp16::from_f32(x)).collect()
}

const K1: [f32; 16] = [-1., 2., 0., 0.5, -0.5, 1., 1.5, 0.25, -0.75, 0.125, 1.75, -0.25, 0.75, 1.25, 0., 2.];
const Q1: [f32; 16] = [0.5, -0.25, 1., 0., 0.75, -1., 0.125, 0.5, 0.25, -0.5, 1., 0.375, -0.125, 0.625, 0.25, 0.];
const P48: i128 = 1 << 48;

/// Example 1: a K partition, nearest and stochastic; the LFSR's words.
#[test]
fn example_1_k_partition() {
    let mut l = Lfsr::new(0xACE1);
    let w: Vec<u16> = (0..8).map(|_| l.next_word()).collect();
    assert_eq!(w, [0xEB62, 0x330D, 0x8777, 0x1BBF, 0xED3A, 0xDA3A, 0xE7A2, 0x3D03]);
    let mut kq = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1);
    let (k, f) = kq.quantize_vector(&h(&K1));
    assert!(!f);
    assert_eq!((k[0].meta.scale, k[0].meta.min), (0x3C00, 0xBC00));
    assert_eq!(k[0].codes, [0, 3, 1, 2, 1, 2, 3, 1, 0, 1, 3, 1, 2, 2, 1, 3]);
    assert_eq!(k[0].sum, 26);
    assert_eq!(kq.lfsr.state, 0xACE1, "nearest mode leaves the LFSR alone");
    let mut ks = Quantizer::new(2, 16, Rounding::Stochastic, 0xACE1);
    let (k2, _) = ks.quantize_vector(&h(&K1));
    assert_eq!(k2[0].codes, [0, 3, 1, 2, 0, 2, 2, 2, 0, 1, 3, 0, 2, 2, 1, 3]);
    assert_eq!(k2[0].sum, 24);
}

/// Example 2: Q (8 bits) against Example 1's K, the four terms and their
/// cancellation; Eq. 4 in FP16 and in binary32 for comparison.
#[test]
fn example_2_qk_dot() {
    let (k, _) = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_vector(&h(&K1));
    let (q, _) = Quantizer::new(8, 16, Rounding::Nearest, 0xACE1).quantize_vector(&h(&Q1));
    assert_eq!((q[0].meta.scale, q[0].meta.min, q[0].params().step_units), (0x2005, 0xBC00, 131_712));
    assert_eq!(q[0].codes, [191, 96, 255, 127, 223, 0, 143, 191, 159, 64, 255, 175, 111, 207, 159, 127]);
    assert_eq!(q[0].sum, 2483);
    assert_eq!(code_dot(&q[0], &k[0]), 3820);
    let sa = 131_712i128;
    let one = 1i128 << 24;
    let terms = [sa * one * 3820, -one * sa * 2483, -one * one * 26, 16 * one * one];
    assert_eq!(terms, [8_441_285_773_885_440, -5_486_835_753_025_536, -7_318_349_394_477_056, 4_503_599_627_370_496]);
    let s = combine(&q[0], &k[0]);
    assert_eq!(s, terms.iter().sum::<i128>());
    assert_eq!(s, 139_700_253_753_344);
    assert_eq!(s as f64 / P48 as f64, 0.49631500244140625);
    let unit = QkDot::new(q.clone());
    assert_eq!(unit.score(&k).to_bits(), 0x3EFE_1D00);
    assert_eq!(round_f32(s), 0.496_315_f32);
    // FP16 keeps 11 bits of terms near 30 (spacing 2^-6): 0.484375, 2.4% off
    assert_eq!(combine_f16(&q[0], &k[0]), 0.484375);
    assert_eq!(combine_f32(&q[0], &k[0]), 0.496_315_f32);
}

/// Example 3: P over one closed partition of 16 tokens and an open tail of
/// 3 tokens, one V channel.
#[test]
fn example_3_pv_dot() {
    let p: Vec<f32> = (0..19).map(|i| [0.02, 0.05, 0.1, 0.03][i % 4]).collect();
    let (pp, _) = Quantizer::new(8, 16, Rounding::Nearest, 0xACE1).quantize_vector(&h(&p[..16]));
    assert_eq!((pp[0].meta.scale, pp[0].meta.min), (0x0D24, 0x251F));
    assert_eq!(&pp[0].codes[..4], [0, 96, 255, 32]);
    assert_eq!(pp[0].sum, 1532);
    let vt: Vec<Vec<u16>> = K1.iter().map(|&x| h(&[x])).collect();
    let vrefs: Vec<&[u16]> = vt.iter().map(|v| v.as_slice()).collect();
    let (vp, _) = Quantizer::new(2, 16, Rounding::Nearest, 0xACE1).quantize_block(&vrefs);
    assert_eq!(vp[0].codes, [0, 3, 1, 2, 1, 2, 3, 1, 0, 1, 3, 1, 2, 2, 1, 3]);
    let tail = [h(&[3.0]), h(&[-2.0]), h(&[0.5])];
    let trefs: Vec<&[u16]> = tail.iter().map(|v| v.as_slice()).collect();
    let r = pv_dot(1, &pp, std::slice::from_ref(&vp), &h(&p[16..19]), &trefs);
    assert_eq!(combine(&pp[0], &vp[0]), 188_779_918_786_560);
    assert_eq!(r.exact[0], 191_601_712_300_032);
    // the tail: fp16(0.02) 3 + fp16(0.05) (-2) + fp16(0.1) 0.5, exact
    let t: i128 = [(0.02f32, 3i128), (0.05, -2), (0.1, 1)]
        .iter()
        .map(|&(pv, v)| fp16::to_units(fp16::from_f32(pv)) as i128 * v * (1 << 24) / if v == 1 { 2 } else { 1 })
        .sum();
    assert_eq!(r.exact[0] - 188_779_918_786_560, t);
    assert_eq!(r.out[0].to_bits(), 0x3F2E_42C0);
    assert!(!r.nonfinite);
}
