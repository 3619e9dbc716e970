//! The worked examples of docs/spec.md §2.12, checked against the model.
//! Every expected value here was computed by hand from the spec's rules (the
//! derivations are in the spec), not taken from the model's output.

use super::dequantizer::dequantize_token;
use super::format::{CooEntry, GroupMeta};
use super::params::{MiddleMode, OakenParams};
use super::quantizer::quantize_token;
use super::thresholds::{ThresholdError, ThresholdSet};

fn small() -> OakenParams {
    OakenParams { head_dim: 8, lanes: 4, layers: 1, middle_mode: MiddleMode::Plain, ..Default::default() }
}

/// -2.0, -0.25, 0.25, 2.0
fn thr() -> ThresholdSet {
    ThresholdSet::new([0xC000, 0xB400, 0x3400, 0x4000]).unwrap()
}

#[test]
fn example_1_mixed_token() {
    // 3.0, -0.5, 0.125, 1.0, -4.0, 0.0, 2.0, -0.25
    let x = [0x4200, 0xB800, 0x3000, 0x3C00, 0xC400, 0x0000, 0x4000, 0xB400];
    let q = quantize_token(&small(), &thr(), &x);
    assert_eq!(q.dense, vec![0, 0, 15, 9, 15, 5, 15, 0]);
    assert_eq!(q.coo, vec![vec![0x03, 0x09, 0x12, 0x15, 0x1C]]);
    assert_eq!(q.counts, vec![5]);
    assert_eq!(q.meta.groups[0], GroupMeta { min: 0x3C00, step: 0x2C45 });
    assert_eq!(q.meta.groups[1], GroupMeta { min: 0xB800, step: 0x3156 });
    assert_eq!(q.meta.groups[2], GroupMeta { min: 0xB400, step: 0x2232 });
    assert!(!q.status.nonfinite);
    let y = dequantize_token(&small(), &thr(), &q.dense, &q.coo[0], &q.counts, &q.meta).unwrap();
    assert_eq!(y, vec![0x4200, 0xB800, 0x3001, 0x3C01, 0xC400, 0x1C34, 0x4001, 0xB400]);
}

/// Example 4: example 1's vector as two heads of four elements. The groups
/// span the whole vector, so the metadata and the dense slots are example
/// 1's; the COO lists and counts are per head, with positions within the
/// head: head 0 keeps 0x03, 0x09 (positions 0, 2); head 1 gets positions
/// 4, 5, 7 as 0, 1, 3: 0x12 - 0x10, 0x15 - 0x10, 0x1C - 0x10.
#[test]
fn example_4_two_heads() {
    let p = OakenParams { head_dim: 4, heads: 2, ..small() };
    let x = [0x4200, 0xB800, 0x3000, 0x3C00, 0xC400, 0x0000, 0x4000, 0xB400];
    let q = quantize_token(&p, &thr(), &x);
    let q1 = quantize_token(&small(), &thr(), &x);
    assert_eq!((&q.dense, &q.meta), (&q1.dense, &q1.meta));
    assert_eq!(q.coo, vec![vec![0x03, 0x09], vec![0x02, 0x05, 0x0C]]);
    assert_eq!(q.counts, vec![2, 3]);
    let mut y = Vec::new();
    for h in 0..2 {
        y.extend(dequantize_token(&p, &thr(), q.head_dense(&p, h), &q.coo[h], q.head_counts(&p, h), &q.meta).unwrap());
    }
    assert_eq!(y, vec![0x4200, 0xB800, 0x3001, 0x3C01, 0xC400, 0x1C34, 0x4001, 0xB400]);
}

/// Example 5: `paper` mode. Element 5 (-0.28125, middle-lower) has its
/// nearest code on the upper side of zero and is moved one step down.
#[test]
fn example_5_paper_mode() {
    let p = OakenParams { middle_mode: MiddleMode::Paper, ..small() };
    let x = [0x4200, 0xB800, 0x3000, 0x3C00, 0xC400, 0xB480, 0x4000, 0xB400];
    let q = quantize_token(&p, &thr(), &x);
    assert_eq!(q.dense, vec![15, 0, 15, 7, 0, 1, 15, 0]);
    assert_eq!(q.coo, vec![vec![0x03, 0x09, 0x12, 0x1C]]);
    assert_eq!(q.counts, vec![4]);
    assert_eq!(q.meta.groups[0], GroupMeta { min: 0xC000, step: 0x2E32 });
    assert_eq!(q.meta.groups[1], GroupMeta { min: 0xB400, step: 0x3045 });
    assert_eq!(q.meta.groups[2], GroupMeta { min: 0xB400, step: 0x2232 });
    let y = dequantize_token(&p, &thr(), &q.dense, &q.coo[0], &q.counts, &q.meta).unwrap();
    assert_eq!(y, vec![0x4200, 0xB800, 0x3001, 0x3B79, 0xC400, 0xB5DE, 0x4001, 0xB400]);
}

#[test]
fn example_2_all_equal_with_reset_thresholds() {
    let t = ThresholdSet::default();
    let x = [0x3C00; 8];
    let q = quantize_token(&small(), &t, &x);
    assert_eq!(q.dense, vec![0; 8]);
    assert_eq!(q.coo, vec![vec![0x03, 0x07, 0x0B, 0x0F, 0x13, 0x17, 0x1B, 0x1F]]);
    assert_eq!(q.meta.groups[0], GroupMeta { min: 0x3C00, step: 0 });
    assert_eq!(q.meta.groups[1], GroupMeta::default());
    assert_eq!(q.meta.groups[2], GroupMeta::default());
    let y = dequantize_token(&small(), &t, &q.dense, &q.coo[0], &q.counts, &q.meta).unwrap();
    assert_eq!(y, x.to_vec());
}

#[test]
fn example_3_non_finite_and_subnormal() {
    let x = [0x7E00, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x0001, 0x0001, 0x0001];
    let q = quantize_token(&small(), &thr(), &x);
    assert!(q.status.nonfinite);
    assert_eq!(q.meta.groups[0], GroupMeta { min: 0x7BFE, step: 0x4000 });
    assert_eq!(q.meta.groups[1], GroupMeta::default());
    assert_eq!(q.meta.groups[2], GroupMeta { min: 0x0000, step: 0x0001 });
    assert_eq!(q.dense, vec![0, 15, 15, 0, 1, 1, 1, 1]);
    let e = |idx, outer, hi| CooEntry { idx, outer, hi }.encode();
    assert_eq!(
        q.coo[0],
        vec![e(0, false, false), e(1, true, true), e(2, true, false), e(3, false, false), e(4, false, false), e(5, false, false), e(6, false, false), e(7, false, false)]
    );
    let y = dequantize_token(&small(), &thr(), &q.dense, &q.coo[0], &q.counts, &q.meta).unwrap();
    assert_eq!(y, vec![0, 0x7BFF, 0xFBFF, 0, 1, 1, 1, 1]);
}

#[test]
fn threshold_validation() {
    assert_eq!(ThresholdSet::new([0x4000, 0xB400, 0x3400, 0xC000]), Err(ThresholdError::OutOfOrder));
    assert_eq!(ThresholdSet::new([0xC000, 0xB400, 0x7E00, 0x4000]), Err(ThresholdError::NonFinite));
    assert_eq!(ThresholdSet::new([0xC000, 0x8000, 0x0000, 0x4000]).unwrap().lo_inner, 0);
    // Equal thresholds are legal: the middle group is then empty.
    ThresholdSet::new([0x3C00, 0x3C00, 0x3C00, 0x3C00]).unwrap();
}
