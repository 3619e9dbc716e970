//! Bit-exact models of `hack-qk-dot` and `hack-pv-dot` (docs/spec.md §15.6,
//! §15.8, §15.9): Eq. 4 per partition with exact integer dot products and
//! code sums, the four-term combine exact in fixed point (units of 2^-48),
//! and one rounding, to binary32 nearest-even, per output.

use super::quantizer::Part;
use crate::fp16;

/// Fixed-point units of the combine: 2^-48, the product of two FP16 units.
pub const ACC_LSB_LOG2: i32 = -48;

/// Eq. 4 for one pair of partitions, exact, in units of 2^-48:
/// `s_a s_b D + m_b s_a A + m_a s_b B + Pi m_a m_b`.
pub fn combine(a: &Part, b: &Part) -> i128 {
    assert_eq!(a.codes.len(), b.codes.len());
    let pi = a.codes.len() as i128;
    let (ga, gb) = (a.params(), b.params());
    let (sa, ma, sb, mb) = (ga.step_units as i128, ga.min_units as i128, gb.step_units as i128, gb.min_units as i128);
    let d: i128 = a.codes.iter().zip(&b.codes).map(|(&x, &y)| x as i128 * y as i128).sum();
    sa * sb * d + mb * sa * a.sum as i128 + ma * sb * b.sum as i128 + pi * ma * mb
}

/// The integer dot product `D = sum a' b'` of a pair of partitions.
pub fn code_dot(a: &Part, b: &Part) -> u32 {
    a.codes.iter().zip(&b.codes).map(|(&x, &y)| x as u32 * y as u32).sum()
}

/// Round-to-nearest-even of `v * 2^-48` to binary32. Exact inputs of the
/// accumulator widths of §15.6 never overflow or reach subnormals.
pub fn round_f32(v: i128) -> f32 {
    if v == 0 {
        return 0.0;
    }
    let m = v.unsigned_abs();
    let len = 128 - m.leading_zeros() as i32;
    let (q, shift) = if len <= 24 {
        (m, 0)
    } else {
        let sh = (len - 24) as u32;
        let mut q = m >> sh;
        let rem = m & ((1u128 << sh) - 1);
        let half = 1u128 << (sh - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q += 1;
        }
        (q, sh as i32)
    };
    let mag = q as f64 * 2f64.powi(shift + ACC_LSB_LOG2);
    let r = mag as f32;
    debug_assert_eq!(r as f64, mag, "binary32 rounding is exact here");
    if v < 0 {
        -r
    } else {
        r
    }
}

/// `hack-qk-dot`: holds one quantized Q head (its partitions) and turns
/// each streamed K token (the same number of partitions) into a score.
#[derive(Clone, Debug)]
pub struct QkDot {
    pub q: Vec<Part>,
}

impl QkDot {
    pub fn new(q: Vec<Part>) -> QkDot {
        QkDot { q }
    }

    /// The exact accumulator after one K token.
    pub fn score_exact(&self, k: &[Part]) -> i128 {
        assert_eq!(k.len(), self.q.len());
        self.q.iter().zip(k).map(|(a, b)| combine(a, b)).sum()
    }

    /// The `nonfinite` status of one K token: a NaN or infinity in its or
    /// the held Q's metadata (replaced as in spec §2.2.1).
    pub fn nonfinite(&self, k: &[Part]) -> bool {
        self.q.iter().chain(k).any(Part::meta_nonfinite)
    }

    /// The emitted score: RNE32 of the exact sum over partitions.
    pub fn score(&self, k: &[Part]) -> f32 {
        round_f32(self.score_exact(k))
    }
}

/// What `hack-pv-dot` emits for one query: the output vector and the
/// `nonfinite` flag of its FP16 tail inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct PvOut {
    pub out: Vec<f32>,
    pub exact: Vec<i128>,
    pub nonfinite: bool,
}

/// `hack-pv-dot`: closed partitions `p_closed[k]` (P, `partition` tokens)
/// times `v_closed[k][j]` (V channel `j` over the same tokens), then the
/// open partition in FP16: `p_tail[t] * v_tail[t][j]`, exact; one RNE32
/// per channel at the end.
pub fn pv_dot(head_dim: usize, p_closed: &[Part], v_closed: &[Vec<Part>], p_tail: &[u16], v_tail: &[&[u16]]) -> PvOut {
    assert_eq!(p_closed.len(), v_closed.len());
    assert_eq!(p_tail.len(), v_tail.len());
    let mut acc = vec![0i128; head_dim];
    for (p, vs) in p_closed.iter().zip(v_closed) {
        assert_eq!(vs.len(), head_dim);
        for (j, v) in vs.iter().enumerate() {
            acc[j] += combine(p, v);
        }
    }
    let mut nonfinite = p_closed.iter().chain(v_closed.iter().flatten()).any(Part::meta_nonfinite);
    for (&p, v) in p_tail.iter().zip(v_tail) {
        let (p, f) = fp16::sanitize(p);
        nonfinite |= f;
        let pu = fp16::to_units(p) as i128;
        assert_eq!(v.len(), head_dim);
        for (j, &x) in v.iter().enumerate() {
            let (x, f) = fp16::sanitize(x);
            nonfinite |= f;
            acc[j] += pu * fp16::to_units(x) as i128;
        }
    }
    PvOut { out: acc.iter().map(|&a| round_f32(a)).collect(), exact: acc, nonfinite }
}

/// Eq. 4 in binary32, in the authors' order (HKVQ `homomorphic.py`), every
/// operation rounded to nearest even: for measuring §15.6's choice.
pub fn combine_f32(a: &Part, b: &Part) -> f32 {
    let f = fp16::to_f32;
    let (sa, ma, sb, mb) = (f(a.meta.scale), f(a.meta.min), f(b.meta.scale), f(b.meta.min));
    let pi = a.codes.len() as f32;
    let d = code_dot(a, b) as f32;
    let mut r = sa * sb * d;
    r += mb * sa * a.sum as f32;
    r += ma * sb * b.sum as f32;
    r + pi * ma * mb
}

/// The same with every operation rounded to FP16 (the older HKVQ tree's
/// half-precision accumulators); integers above 65504 become infinite.
pub fn combine_f16(a: &Part, b: &Part) -> f32 {
    let h = |x: f32| fp16::to_f32(fp16::from_f32(x));
    let f = fp16::to_f32;
    let (sa, ma, sb, mb) = (f(a.meta.scale), f(a.meta.min), f(b.meta.scale), f(b.meta.min));
    let pi = h(a.codes.len() as f32);
    let d = h(code_dot(a, b) as f32);
    let t1 = h(h(sa * sb) * d);
    let t2 = h(h(mb * sa) * h(a.sum as f32));
    let t3 = h(h(ma * sb) * h(b.sum as f32));
    let t4 = h(h(pi * ma) * mb);
    h(h(h(t1 + t2) + t3) + t4)
}
