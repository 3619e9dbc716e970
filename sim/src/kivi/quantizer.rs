//! Bit-exact model of `kivi-quantizer` (docs/spec.md §13.2, §13.3).
//! KIVI (ICML 2024; jy-yuan/KIVI `quant/new_pack.py`): asymmetric min-max
//! codes per group, in exact fixed point with the step rounded up so that
//! no code needs clamping.

use super::format::{pack, Meta};
use super::params::{Axis, KiviParams};
use crate::fp16;

/// A group's decoder parameters, in units of 2^-24 (spec §13.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupParams {
    pub meta: Meta,
    pub min_units: i64,
    pub step_units: i64,
}

impl GroupParams {
    /// `min = x_min` (an FP16 value: RD is the identity);
    /// `step = RU(ceil((x_max - min) / (2^b - 1)))`.
    pub fn derive(bits: u32, x_min: i64, x_max: i64) -> GroupParams {
        let min = fp16::round_down(x_min);
        let min_units = fp16::to_units(min);
        debug_assert_eq!(min_units, x_min, "x_min is an FP16 value");
        let d = x_max - min_units;
        assert!(d >= 0);
        let k = (1i64 << bits) - 1;
        let c = (d + k - 1) / k;
        let scale = fp16::round_up(c);
        let step_units = fp16::to_units(scale);
        assert!(step_units >= c && c < fp16::MAX_UNITS, "step saturated");
        GroupParams { meta: Meta { scale, min }, min_units, step_units }
    }

    pub fn from_meta(m: Meta) -> GroupParams {
        GroupParams { meta: m, min_units: fp16::to_units(m.min), step_units: fp16::to_units(m.scale) }
    }

    /// `q = floor((2n + s) / (2s))`, `n = x - min`: round half up; 0 when
    /// `s = 0`. Never above `2^b - 1` (spec §13.2).
    pub fn code(&self, x: i64) -> u8 {
        let n = x - self.min_units;
        assert!(n >= 0, "value below the group minimum");
        if self.step_units == 0 {
            0
        } else {
            ((2 * n + self.step_units) / (2 * self.step_units)) as u8
        }
    }

    /// `min + q * step`, exact.
    pub fn reconstruct(&self, q: u8) -> i64 {
        self.min_units + q as i64 * self.step_units
    }
}

/// One quantized group: its codes (element order) and metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantGroup {
    pub meta: Meta,
    pub codes: Vec<u8>,
}

impl QuantGroup {
    /// The packed code words (spec §13.4).
    pub fn words(&self, bits: u32) -> Vec<u32> {
        pack(&self.codes, bits)
    }
}

/// Sanitises (spec §2.2.1) and converts to units; the flag is true when a
/// NaN or infinity was replaced.
pub fn sanitized_units(x: &[u16]) -> (Vec<i64>, bool) {
    let mut flag = false;
    let u = x
        .iter()
        .map(|&e| {
            let (s, f) = fp16::sanitize(e);
            flag |= f;
            fp16::to_units(s)
        })
        .collect();
    (u, flag)
}

/// Quantizes one group of sanitised values (units).
pub fn quantize_group_units(bits: u32, v: &[i64]) -> (GroupParams, Vec<u8>) {
    let lo = *v.iter().min().expect("empty group");
    let hi = *v.iter().max().unwrap();
    let g = GroupParams::derive(bits, lo, hi);
    let codes: Vec<u8> = v.iter().map(|&x| g.code(x)).collect();
    debug_assert!(codes.iter().all(|&q| (q as u32) < 1 << bits));
    (g, codes)
}

/// Quantizes one group of FP16 inputs; the flag is `nonfinite`.
pub fn quantize_group(bits: u32, x: &[u16]) -> (QuantGroup, bool) {
    let (u, flag) = sanitized_units(x);
    let (g, codes) = quantize_group_units(bits, &u);
    (QuantGroup { meta: g.meta, codes }, flag)
}

/// What the quantizer emits for one token (axis token) or one block of
/// `group` tokens (axis channel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantOut {
    /// Axis token: group `g` holds channels `g*G .. g*G + G - 1` of the
    /// vector (heads in order). Axis channel: group `c` holds channel `c`
    /// of the block's tokens, in token order.
    pub groups: Vec<QuantGroup>,
    /// A NaN or infinity was replaced in the token or block (spec §13.8).
    pub nonfinite: bool,
}

/// Axis token (V): one token vector of `heads * head_dim` elements.
pub fn quantize_token(p: &KiviParams, x: &[u16]) -> QuantOut {
    assert_eq!(p.axis, Axis::Token);
    assert_eq!(x.len(), p.vector_len());
    let mut nonfinite = false;
    let groups = x
        .chunks_exact(p.group)
        .map(|c| {
            let (g, f) = quantize_group(p.bits, c);
            nonfinite |= f;
            g
        })
        .collect();
    QuantOut { groups, nonfinite }
}

/// Axis channel (K): a block of `group` token vectors; one group per
/// channel, its codes in token order.
pub fn quantize_block(p: &KiviParams, tokens: &[&[u16]]) -> QuantOut {
    assert_eq!(p.axis, Axis::Channel);
    assert_eq!(tokens.len(), p.group);
    let n = p.vector_len();
    assert!(tokens.iter().all(|t| t.len() == n));
    let mut nonfinite = false;
    let groups = (0..n)
        .map(|c| {
            let col: Vec<u16> = tokens.iter().map(|t| t[c]).collect();
            let (g, f) = quantize_group(p.bits, &col);
            nonfinite |= f;
            g
        })
        .collect();
    QuantOut { groups, nonfinite }
}
