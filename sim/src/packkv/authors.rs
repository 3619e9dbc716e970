//! A replica of the authors' token quantizer (BoJiang03/PackKV,
//! `utils/compute.py::quant_ints`, the default `high_precision_zero_point
//! = False` path) in FP16 arithmetic, and of its decode
//! `(q + min_int) * scale`. Used only to measure the departures of
//! docs/spec.md §14.10; no hardware implements it.
//!
//! Each FP16 tensor operation is computed in f32 and rounded to FP16
//! (nearest, ties to even), which for +, -, *, / is the correctly rounded
//! FP16 result; `rel` is the Python float, which PyTorch applies in f32.

use crate::fp16;

/// One token as the authors' chain leaves it: FP16 scale and integer zero
/// (`min_int`, an FP16 tensor), and codes (f32: NaN when `max = min`).
#[derive(Clone, Debug, PartialEq)]
pub struct AuthorsToken {
    pub scale: u16,
    pub zero: u16,
    pub codes: Vec<f32>,
}

fn h(v: f32) -> u16 {
    fp16::from_f32(v)
}

fn f(x: u16) -> f32 {
    fp16::to_f32(x)
}

/// `scale = (max - min) * rel; min_int = round(min / scale);
/// q = round(x / scale) - min_int`, each an FP16 operation, round half to
/// even. `x` must be sanitised.
pub fn authors_token(levels: u32, x: &[u16]) -> AuthorsToken {
    let rel = (1.0f64 / levels as f64) as f32;
    let mn = *x.iter().min_by_key(|&&e| fp16::key(e)).expect("empty vector");
    let mx = *x.iter().max_by_key(|&&e| fp16::key(e)).unwrap();
    let d = h(f(mx) - f(mn));
    let scale = h(f(d) * rel);
    let zero = h(f(h(f(mn) / f(scale))).round_ties_even());
    let codes = x.iter().map(|&e| f(h(f(h(f(e) / f(scale))).round_ties_even() - f(zero)))).collect();
    AuthorsToken { scale, zero, codes }
}

/// `(q + min_int) * scale` in FP16, exact as f64; NaN for a NaN code.
pub fn authors_decode(t: &AuthorsToken, q: f32) -> f64 {
    fp16::to_f64(h(f(h(q + f(t.zero))) * f(t.scale))) + if q.is_nan() { f64::NAN } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(v: &[f32]) -> Vec<u16> {
        v.iter().map(|&e| fp16::from_f32(e)).collect()
    }

    #[test]
    fn grid_is_anchored_at_zero() {
        // min -1.05, max 0.95: scale 0.2, min_int round(-5.25) = -5; the grid
        // is the multiples of 0.2, and -1.05 decodes to -1.0
        let t = authors_token(10, &x(&[-1.05, 0.95, 0.0, 0.3]));
        assert_eq!(f(t.zero), -5.0);
        assert_eq!(t.codes, vec![0.0, 10.0, 5.0, 7.0]); // 0.3 / 0.2 = 1.5 -> 2 (even)
        assert!((authors_decode(&t, 0.0) + 1.0).abs() < 1e-3);
    }

    #[test]
    fn max_equal_min_gives_nan() {
        let t = authors_token(10, &x(&[0.5; 4]));
        assert_eq!(t.scale, 0);
        assert!(t.codes.iter().all(|q| q.is_nan()));
        assert!(authors_decode(&t, t.codes[0]).is_nan());
    }
}
