//! A replica of the authors' quantizer chain (jy-yuan/KIVI,
//! `quant/new_pack.py`, `triton_quantize_and_pack_along_last_dim`) in FP16
//! arithmetic, and of their decoder (`quant/csrc/gemv_cuda.cu`,
//! `scale * q + mn` in float32). Used only to measure the departures of
//! docs/spec.md §13.10; no hardware implements it.
//!
//! Every FP16 operation of the chain is computed in f32 and rounded to FP16
//! (nearest, ties to even), which is what PyTorch does on half tensors. With
//! 24 bits in f32 against 11 in FP16 (24 >= 2 * 11 + 2), that double
//! rounding gives the correctly rounded FP16 result of each +, -, *, /.

use crate::fp16;

/// One group as the authors' chain leaves it: FP16 scale (may be +Inf
/// when `max - min` overflows FP16) and min, and integer codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorsGroup {
    pub scale: u16,
    pub min: u16,
    pub codes: Vec<i32>,
}

fn h(v: f32) -> u16 {
    fp16::from_f32(v)
}

fn f(x: u16) -> f32 {
    fp16::to_f32(x)
}

/// `mn, mx = min, max; scale = (mx - mn) / (2^b - 1);
/// q = ((x - mn) / scale).clamp(0, 2^b - 1).round().to(int32)`, each step
/// an FP16 operation; round is half to even; NaN (from `0 / 0` when
/// `max = min`) converts to 0, as CUDA's float-to-integer conversion does.
/// `x` must be sanitised (finite, no -0).
pub fn authors_group(bits: u32, x: &[u16]) -> AuthorsGroup {
    let max_int = ((1u32 << bits) - 1) as f32;
    let mn = *x.iter().min_by_key(|&&e| fp16::key(e)).expect("empty group");
    let mx = *x.iter().max_by_key(|&&e| fp16::key(e)).unwrap();
    let d = h(f(mx) - f(mn));
    let scale = h(f(d) / max_int);
    let codes = x
        .iter()
        .map(|&e| {
            let t = h(f(e) - f(mn));
            let u = f(h(f(t) / f(scale)));
            if u.is_nan() {
                0
            } else {
                u.clamp(0.0, max_int).round_ties_even() as i32
            }
        })
        .collect();
    AuthorsGroup { scale, min: mn, codes }
}

/// The authors' decoder in their CUDA GEMV kernels: `scale * q + mn` in
/// float32 (exact product, one rounding of the sum), returned exactly as
/// f64. NaN when the scale is infinite.
pub fn authors_decode(scale: u16, min: u16, q: i32) -> f64 {
    let exact = fp16::to_f64(scale) * q as f64 + fp16::to_f64(min);
    if fp16::is_inf(scale) {
        return if q == 0 { f64::NAN } else { exact };
    }
    exact as f32 as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(v: &[f32]) -> Vec<u16> {
        v.iter().map(|&e| fp16::from_f32(e)).collect()
    }

    #[test]
    fn ties_go_to_even_and_the_scale_to_nearest() {
        // min -1, max 2: scale 1.0; -0.5 and 1.5 are ties (n = 0.5, 2.5)
        let g = authors_group(2, &x(&[-1.0, 2.0, -0.5, 1.5, 0.5]));
        assert_eq!((g.scale, g.min), (0x3C00, 0xBC00));
        assert_eq!(g.codes, vec![0, 3, 0, 2, 2]);
        // 1/3 rounds to nearest, below 1/3: the grid's top code falls short
        // of the maximum, and the clamp is needed
        let g = authors_group(2, &x(&[0.0, 1.0]));
        assert_eq!(g.scale, 0x3555);
        assert_eq!(g.codes, vec![0, 3]);
        assert!(authors_decode(g.scale, g.min, 3) < 1.0);
    }

    #[test]
    fn max_equal_min_gives_nan_codes_then_zero() {
        let g = authors_group(2, &x(&[0.75; 4]));
        assert_eq!(g.scale, 0);
        assert_eq!(g.codes, vec![0; 4]);
        assert_eq!(authors_decode(g.scale, g.min, 0), 0.75);
    }

    #[test]
    fn range_past_65504_overflows_the_scale() {
        let g = authors_group(2, &x(&[-40000.0, 40000.0]));
        assert_eq!(g.scale, 0x7C00); // (mx - mn) = 80000 -> +Inf
        assert_eq!(g.codes, vec![0, 0]); // x / Inf = 0
        assert!(authors_decode(g.scale, g.min, 0).is_nan());
    }
}
