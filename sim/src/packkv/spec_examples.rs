//! The worked examples of docs/spec.md §14.12, figure for figure.

use super::authors::authors_token;
use super::codec::*;
use super::params::*;
use super::quantizer::*;
use crate::fp16;

fn f(v: f64) -> u16 {
    fp16::from_f32(v as f32)
}

/// Example 1: N = 10 on 16 elements; step RU(0.3) = 0x34CD, z = -3; one
/// tie rounded up where the authors' chain rounds to even.
#[test]
fn example_1_quantizer() {
    let p = PackKvParams { head_dim: 16, lanes: 16, ..Default::default() };
    let x = [-1.0, 2.0, 0.0, 0.1500244140625, 0.5, -0.5, 1.0, 1.5, 0.25, -0.25, 0.75, -0.75, 1.25, 0.125, 1.75, 0.0].map(f);
    let q = quantize_token(&p, &x);
    assert!(!q.nonfinite);
    // ceil(3 * 2^24 / 10) = 5033165 units; RU on a grid of 4096: 1229 * 4096
    assert_eq!(fp16::to_units(q.meta.step), 5_033_984);
    assert_eq!(q.meta, TokenMeta { step: 0x34CD, zero: -3 });
    assert_eq!(q.meta.word(), 0x34CD_FFFD);
    assert_eq!(q.codes, vec![0, 10, 3, 4, 5, 1, 6, 8, 4, 2, 5, 1, 7, 3, 9, 3]);
    let out: Vec<f64> = dequantize_token(q.meta, &q.codes).iter().map(|&o| fp16::to_f64(o)).collect();
    assert_eq!(out[..4], [-0.900390625, 2.099609375, 0.0, 0.300048828125]);
    assert_eq!(out[7], 1.5); // 5 * step = 1.50024..., RNE to 1.5
    // the authors' chain: the same scale and zero, the tie (x / scale = 0.5) to even
    let a = authors_token(10, &x);
    assert_eq!((a.scale, fp16::to_f32(a.zero)), (0x34CD, -3.0));
    assert_eq!(a.codes[3], 3.0);
    assert!((0..16).filter(|&j| j != 3).all(|j| a.codes[j] == q.codes[j] as f32));
}

/// Example 2: the bit layout of one block (B = 16, P = 8, four channels,
/// N = 10: r = 4, width fields of 3 bits).
#[test]
fn example_2_block_layout() {
    let c = [
        [7u8, 0, 5, 3], [7, 10, 6, 4], [7, 1, 5, 5], [7, 2, 6, 6], [7, 3, 5, 3], [7, 4, 6, 4], [7, 5, 5, 5], [7, 6, 6, 6],
        [7, 9, 2, 10], [7, 9, 3, 10], [7, 9, 4, 10], [7, 9, 5, 10], [7, 9, 2, 10], [7, 9, 3, 10], [7, 9, 4, 10], [7, 9, 5, 10],
    ];
    let p = PackKvParams { head_dim: 4, lanes: 4, block: 16, pack: 8, ..Default::default() };
    p.validate().unwrap();
    let rows: Vec<Vec<u8>> = c.iter().map(|r| r.to_vec()).collect();
    let meta = vec![TokenMeta { step: 0x3C00, zero: 0 }; 16];
    let (w, b) = encode_block(&p, &meta, &rows, None, false).unwrap();
    assert_eq!(b, BlockBits { header: 32, meta: 512, perm: 0, fields: 56, payload: 72, pad: 0 });
    assert_eq!(w.len(), 21);
    assert_eq!(w[0], 0x0040_0015); // 21 words, r = 4, no permutation, finite
    assert!(w[1..17].iter().all(|&m| m == 0x3C00_0000));
    assert_eq!(w[17..], [0x0465_6007, 0xA654_321A, 0x487E_4E4A, 0xE4E4_1488]);
    assert_eq!(pack_fields(&p, &rows), vec![vec![(7, 0), (0, 4), (5, 1), (3, 2)], vec![(7, 0), (9, 0), (2, 2), (10, 0)]]);
    let d = decode_block(&p, &w).unwrap();
    assert_eq!((d.rows, d.meta, d.perm, d.words), (rows, meta, None, 21));
}

/// Example 3: median repacking, ties in arrival order.
#[test]
fn example_3_median_order() {
    assert_eq!(lower_median(&[3, 0, 2, 1]), 1);
    assert_eq!(lower_median(&[4, 4, 0]), 4);
    let med = [1u8, 3, 1, 0, 3, 2, 2, 1, 0, 3, 1, 1, 2, 0, 0, 3];
    let rows: Vec<Vec<u8>> = med.iter().map(|&m| vec![m, m, 0, 5]).collect();
    assert!(rows.iter().zip(med).all(|(r, m)| lower_median(r) == m));
    assert_eq!(median_order(&rows), vec![1, 4, 9, 15, 5, 6, 12, 0, 2, 7, 10, 11, 3, 8, 13, 14]);
}

/// Example 4: max = min. 0.75 everywhere: c = ceil(|min| / 32767) = 385
/// units, z = 32683, decoded exactly; all zeros: step 0.
#[test]
fn example_4_max_equals_min() {
    let p = PackKvParams { head_dim: 16, lanes: 16, ..Default::default() };
    let q = quantize_token(&p, &[f(0.75); 16]);
    assert_eq!(q.meta, TokenMeta { step: 0x0181, zero: 32683 });
    assert_eq!(q.codes, vec![0; 16]);
    assert!(dequantize_token(q.meta, &q.codes).iter().all(|&o| o == 0x3A00));
    let q = quantize_token(&p, &[0; 16]);
    assert_eq!((q.meta.word(), &q.codes[..]), (0, &[0u8; 16][..]));
}
