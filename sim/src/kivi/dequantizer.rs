//! Bit-exact model of `kivi-dequantizer` (docs/spec.md §13.6, §13.9):
//! packed codes and a (scale, min) word to FP16, `RNE(min + q * scale)`.

use super::format::{unpack, Meta};
use super::params::{Axis, KiviParams};
use super::quantizer::{GroupParams, QuantOut};
use crate::fp16;

/// One code: `RNE(units(min) + q * units(scale))`, saturating at +-65504.
pub fn decode(meta: Meta, q: u8) -> u16 {
    fp16::round_nearest_even(GroupParams::from_meta(meta).reconstruct(q))
}

/// One group of `n` codes from its packed words, in code order.
pub fn dequantize_group(bits: u32, words: &[u32], meta: Meta, n: usize) -> Vec<u16> {
    let g = GroupParams::from_meta(meta);
    unpack(words, bits, n).into_iter().map(|q| fp16::round_nearest_even(g.reconstruct(q))).collect()
}

/// Twice the §13.9 bound on `|output - x|`: `step + ulp(|output|)`.
pub fn bound_x2(step_units: i64, out_units: i64) -> i64 {
    step_units + fp16::grid_ulp(out_units.unsigned_abs()) as i64
}

/// Rebuilds what `quantize_token` or `quantize_block` took, from packed
/// words: one token vector (axis token) or `group` token vectors (axis
/// channel).
pub fn dequantize(p: &KiviParams, q: &QuantOut) -> Vec<Vec<u16>> {
    let decoded: Vec<Vec<u16>> =
        q.groups.iter().map(|g| dequantize_group(p.bits, &g.words(p.bits), g.meta, p.group)).collect();
    match p.axis {
        Axis::Token => vec![decoded.concat()],
        Axis::Channel => (0..p.group).map(|t| decoded.iter().map(|ch| ch[t]).collect()).collect(),
    }
}
