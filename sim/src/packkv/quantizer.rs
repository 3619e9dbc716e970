//! Bit-exact model of `packkv-quantizer` (docs/spec.md §14.2, §14.3):
//! one min and max over the whole token vector, `step = RU(ceil(D / N))`,
//! a grid of the multiples of the step, codes `round(x / step) - z` in
//! `0..=N` with ties up, no clamp.

use super::params::PackKvParams;
use crate::fp16;

/// A token's metadata word (spec §14.4): the FP16 step in bits [31:16],
/// the integer zero `z = round(min / step)` in bits [15:0], two's complement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenMeta {
    pub step: u16,
    pub zero: i16,
}

impl TokenMeta {
    pub fn word(&self) -> u32 {
        (self.step as u32) << 16 | self.zero as u16 as u32
    }

    pub fn from_word(w: u32) -> TokenMeta {
        TokenMeta { step: (w >> 16) as u16, zero: w as u16 as i16 }
    }
}

/// Largest `|z|` kept by the step's floor, `2^15 - 1`.
pub const ZERO_MAX: i64 = 32767;

/// `round(a / s)` with ties up, `floor((2a + s) / (2s))`, for `s > 0`.
pub fn round_half_up_div(a: i64, s: i64) -> i64 {
    (2 * a + s).div_euclid(2 * s)
}

/// A token's grid, in units of 2^-24 (spec §14.2): the multiples of `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenGrid {
    pub meta: TokenMeta,
    pub step_units: i64,
    pub zero: i64,
}

impl TokenGrid {
    /// `D = x_max - x_min` exact; `c = max(ceil(D / N), ceil(|x_min| / 32767))`;
    /// `step = RU(c)`; `z = round(x_min / step)` (ties up), 0 when `step = 0`.
    pub fn derive(levels: u32, x_min: i64, x_max: i64) -> TokenGrid {
        let d = x_max - x_min;
        assert!(d >= 0);
        let n = levels as i64;
        let c = ((d + n - 1) / n).max((x_min.abs() + ZERO_MAX - 1) / ZERO_MAX);
        let step = fp16::round_up(c);
        let step_units = fp16::to_units(step);
        assert!(step_units >= c, "step saturated: levels >= 2 keeps c <= 65504");
        let zero = if step_units == 0 { 0 } else { round_half_up_div(x_min, step_units) };
        assert!(zero.abs() <= ZERO_MAX);
        TokenGrid { meta: TokenMeta { step, zero: zero as i16 }, step_units, zero }
    }

    pub fn from_meta(m: TokenMeta) -> TokenGrid {
        TokenGrid { meta: m, step_units: fp16::to_units(m.step), zero: m.zero as i64 }
    }

    /// `q = round(x / step) - z`, ties up; 0 when `step = 0`.
    pub fn code(&self, x: i64) -> u8 {
        if self.step_units == 0 {
            return 0;
        }
        let q = round_half_up_div(x, self.step_units) - self.zero;
        assert!((0..=255).contains(&q), "code {q} out of range");
        q as u8
    }

    /// `(q + z) * step`, exact.
    pub fn reconstruct(&self, q: u8) -> i64 {
        (q as i64 + self.zero) * self.step_units
    }

    /// `RNE((q + z) * step)`, saturating (spec §14.7).
    pub fn decode(&self, q: u8) -> u16 {
        fp16::round_nearest_even(self.reconstruct(q))
    }
}

/// One quantized token vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantToken {
    pub meta: TokenMeta,
    /// `heads * head_dim` codes in channel order, each in `0..=N`.
    pub codes: Vec<u8>,
    /// A NaN or infinity was replaced (spec §2.2.1).
    pub nonfinite: bool,
}

/// Sanitised values in units, and the `nonfinite` flag.
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

/// Quantizes sanitised values (units) with `N = levels`.
pub fn quantize_units(levels: u32, u: &[i64]) -> (TokenGrid, Vec<u8>) {
    let lo = *u.iter().min().expect("empty vector");
    let hi = *u.iter().max().unwrap();
    let g = TokenGrid::derive(levels, lo, hi);
    let codes: Vec<u8> = u.iter().map(|&x| g.code(x)).collect();
    debug_assert!(codes.iter().all(|&q| q as u32 <= levels));
    (g, codes)
}

/// `packkv-quantizer`: one FP16 token vector of `heads * head_dim` elements.
pub fn quantize_token(p: &PackKvParams, x: &[u16]) -> QuantToken {
    assert_eq!(x.len(), p.vector_len());
    let (u, nonfinite) = sanitized_units(x);
    let (g, codes) = quantize_units(p.levels, &u);
    QuantToken { meta: g.meta, codes, nonfinite }
}

/// The dequantization half of `packkv-decoder`: codes and a token's
/// metadata word to FP16.
pub fn dequantize_token(meta: TokenMeta, codes: &[u8]) -> Vec<u16> {
    let g = TokenGrid::from_meta(meta);
    codes.iter().map(|&q| g.decode(q)).collect()
}

/// Twice the §14.8 bound on `|output - x|`: `step + ulp(|output|)`.
pub fn bound_x2(step_units: i64, out_units: i64) -> i64 {
    step_units + fp16::grid_ulp(out_units.unsigned_abs()) as i64
}
