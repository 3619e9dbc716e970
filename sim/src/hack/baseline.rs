//! Bit-exact model of `hack-deq-dot`, the dequantize-first baseline of
//! `hack-qk-dot` (docs/spec.md §15.10, §15.16.2): each K code dequantized to
//! FP16 as KIVI's dequantizer does it, `RNE16(min + q step)`; Q in FP16
//! (sanitised); per partition the `Pi` FP16 x FP16 products (exact in
//! binary32) summed by a binary32 adder tree, nearest even, in a fixed
//! order; the token's partition sums added exactly (units of 2^-48) and
//! rounded once to binary32.

use super::dot::round_f32;
use super::quantizer::Part;
use super::reference::dequantize16;
use crate::fp16;

/// The tree of one partition: level by level, `y_i = x_2i + x_2i+1` in
/// binary32 (nearest even); at an odd count the last value passes to the
/// next level unchanged.
pub fn tree_f32(x: &[f32]) -> f32 {
    let mut v = x.to_vec();
    while v.len() > 1 {
        v = v.chunks(2).map(|c| if c.len() == 2 { c[0] + c[1] } else { c[0] }).collect();
    }
    v[0]
}

/// A binary32 value of the tree in units of 2^-48, exactly (every product
/// is a multiple of 2^-48, and so is every sum rounded to 24 bits).
pub fn units48(x: f32) -> i128 {
    let u = x as f64 * 2f64.powi(48);
    debug_assert_eq!(u.fract(), 0.0, "{x} is a multiple of 2^-48");
    u as i128
}

/// `hack-deq-dot`: holds one FP16 Q head and turns each streamed K token
/// (its quantized partitions) into a score.
#[derive(Clone, Debug)]
pub struct DeqDot {
    /// Q, sanitised (spec §2.2.1).
    pub q: Vec<u16>,
    pub q_nonfinite: bool,
    pub partition: usize,
}

impl DeqDot {
    pub fn new(q: &[u16], partition: usize) -> DeqDot {
        assert_eq!(q.len() % partition, 0);
        let mut q_nonfinite = false;
        let q = q
            .iter()
            .map(|&x| {
                let (s, f) = fp16::sanitize(x);
                q_nonfinite |= f;
                s
            })
            .collect();
        DeqDot { q, q_nonfinite, partition }
    }

    /// The binary32 sum of one partition's products.
    pub fn partition_sum(&self, idx: usize, k: &Part) -> f32 {
        let kd = dequantize16(k);
        let q = &self.q[idx * self.partition..(idx + 1) * self.partition];
        let prods: Vec<f32> = q.iter().zip(&kd).map(|(&a, &b)| fp16::to_f32(a) * fp16::to_f32(b)).collect();
        tree_f32(&prods)
    }

    /// The exact sum of the token's partition sums, in units of 2^-48.
    pub fn score_exact(&self, k: &[Part]) -> i128 {
        assert_eq!(k.len() * self.partition, self.q.len());
        k.iter().enumerate().map(|(i, p)| units48(self.partition_sum(i, p))).sum()
    }

    pub fn score(&self, k: &[Part]) -> f32 {
        round_f32(self.score_exact(k))
    }

    /// `nonfinite`: a NaN or infinity in Q or in a metadata word of `k`.
    pub fn nonfinite(&self, k: &[Part]) -> bool {
        self.q_nonfinite || k.iter().any(Part::meta_nonfinite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_order_and_odd_levels() {
        // (1 + 2^-24) + (2^-24 + 0): each 1 + 2^-24 ties to even, 1
        let e = 2f32.powi(-24);
        assert_eq!(tree_f32(&[1.0, e, e, 0.0]), 1.0);
        // a tree pairs the two small ones first: 1 + 2^-23
        assert_eq!(tree_f32(&[e, e, 1.0, 0.0]), 1.0 + 2.0 * e);
        // three values: (a + b) + c
        assert_eq!(tree_f32(&[1.0, 2.0, 4.0]), 7.0);
        assert_eq!(units48(2f32.powi(-48)), 1);
        assert_eq!(units48(-1.5), -(3i128 << 47));
    }

    #[test]
    fn equals_the_reference_on_a_small_token() {
        use crate::hack::params::Rounding;
        use crate::hack::quantizer::Quantizer;
        let k: Vec<u16> = (0..32).map(|i| fp16::from_f32(i as f32 * 0.25 - 3.0)).collect();
        let q: Vec<u16> = (0..32).map(|i| fp16::from_f32(1.0 - i as f32 * 0.0625)).collect();
        let (parts, _) = Quantizer::new(2, 16, Rounding::Nearest, 1).quantize_vector(&k);
        let unit = DeqDot::new(&q, 16);
        // small integers and halves: every product and sum exact
        let exact: f64 = parts
            .iter()
            .enumerate()
            .flat_map(|(i, p)| dequantize16(p).into_iter().enumerate().map(move |(j, x)| (i * 16 + j, x)))
            .map(|(z, x)| fp16::to_f32(q[z]) as f64 * fp16::to_f32(x) as f64)
            .sum();
        assert_eq!(unit.score(&parts) as f64, exact);
        assert!(!unit.nonfinite(&parts));
    }
}
