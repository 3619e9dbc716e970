//! The references HACK is measured against (docs/spec.md §15.9, §15.10): the exact
//! dequantize-then-multiply of the same codes, the dequantize-first FP16
//! baseline, exact attention, and the host softmax that makes P.

use super::quantizer::Part;
use crate::fp16;

pub use crate::attention::{softmax_f64, val};

/// Dequantize-then-multiply, exact: `sum (min_a + a' s_a)(min_b + b' s_b)`
/// over the partitions, in units of 2^-48. Equal to `dot::combine` summed
/// (Eq. 4 is an identity on the grid values).
pub fn grid_dot(a: &[Part], b: &[Part]) -> i128 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (0..x.codes.len()).map(|j| x.grid(j) as i128 * y.grid(j) as i128).sum::<i128>())
        .sum()
}

/// A partition dequantized to FP16 as a dequantize-first datapath does it:
/// `RNE(min + q step)` (the KIVI dequantizer, spec §13.6).
pub fn dequantize16(p: &Part) -> Vec<u16> {
    (0..p.codes.len()).map(|j| fp16::round_nearest_even(p.grid(j))).collect()
}

/// The host softmax (outside the units, spec §15.9): `x_t = scale s_t` in
/// f64, `p_t = exp(x_t - max) / sum`, rounded to binary32 then to FP16,
/// both nearest even.
pub fn softmax_host(scores: &[f64], scale: f64) -> Vec<u16> {
    let p = softmax_f64(scores, scale);
    p.iter().map(|&v| fp16::from_f32(v as f32)).collect()
}
