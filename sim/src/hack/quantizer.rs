//! Bit-exact model of `hack-quantizer` (docs/spec.md §15.3-§15.5):
//! partitions of `partition` elements, min-max asymmetric codes with the
//! step rounded up (the KIVI grouped engine, `kivi::quantizer::GroupParams`,
//! shared), rounding to nearest (ties up) or stochastic with the LFSR of
//! §15.4, and each partition's code sum.

use super::lfsr::Lfsr;
use super::params::Rounding;
use crate::kivi::format::Meta;
use crate::kivi::quantizer::{sanitized_units, GroupParams};

/// One quantized partition: what a unit stores or holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub meta: Meta,
    pub codes: Vec<u8>,
    /// Sum of the codes, exact: at most `partition (2^b - 1)`.
    pub sum: u32,
}

impl Part {
    /// The decoder parameters, the metadata sanitised (spec §15.2): a
    /// NaN or infinity that reaches a dot unit is replaced and flagged.
    pub fn params(&self) -> GroupParams {
        let (scale, _) = crate::fp16::sanitize(self.meta.scale);
        let (min, _) = crate::fp16::sanitize(self.meta.min);
        GroupParams::from_meta(Meta { scale, min })
    }

    /// The metadata holds a NaN or an infinity (the dot units' `nonfinite`).
    pub fn meta_nonfinite(&self) -> bool {
        !crate::fp16::is_finite(self.meta.scale) || !crate::fp16::is_finite(self.meta.min)
    }

    /// Builds a partition from codes and metadata (the sum recomputed).
    pub fn from_codes(meta: Meta, codes: Vec<u8>) -> Part {
        let sum = codes.iter().map(|&q| q as u32).sum();
        Part { meta, codes, sum }
    }

    /// The exact grid value of code `j` in units of 2^-24: `min + q step`.
    pub fn grid(&self, j: usize) -> i64 {
        self.params().reconstruct(self.codes[j])
    }
}

/// A `hack-quantizer` instance: its rounding mode and its LFSR (spec §15.4).
#[derive(Clone, Debug)]
pub struct Quantizer {
    pub bits: u32,
    pub partition: usize,
    pub rounding: Rounding,
    pub lfsr: Lfsr,
}

impl Quantizer {
    pub fn new(bits: u32, partition: usize, rounding: Rounding, seed: u16) -> Quantizer {
        Quantizer { bits, partition, rounding, lfsr: Lfsr::new(seed) }
    }

    /// The code of one sanitised element (units); in stochastic mode the
    /// LFSR advances once per element, whatever its value.
    pub fn code(&mut self, g: &GroupParams, x: i64) -> u8 {
        match self.rounding {
            Rounding::Nearest => g.code(x),
            Rounding::Stochastic => {
                let r = self.lfsr.next_word() as i128;
                let n = x - g.min_units;
                assert!(n >= 0);
                if g.step_units == 0 {
                    return 0;
                }
                let s = g.step_units;
                let (q0, rem) = (n / s, n % s);
                // up with probability rem / s: when r * s < rem * 2^16
                let up = r * (s as i128) < (rem as i128) << 16;
                let q = q0 + up as i64;
                debug_assert!(q < 1 << self.bits);
                q as u8
            }
        }
    }

    /// Axis token (K, Q, P): `x` is cut into partitions of consecutive
    /// elements; its length is a multiple of the partition. Returns the
    /// partitions and the `nonfinite` flag.
    pub fn quantize_vector(&mut self, x: &[u16]) -> (Vec<Part>, bool) {
        assert_eq!(x.len() % self.partition, 0, "a vector of whole partitions");
        let (u, flag) = sanitized_units(x);
        let parts = u
            .chunks_exact(self.partition)
            .map(|c| {
                let g = GroupParams::derive(self.bits, *c.iter().min().unwrap(), *c.iter().max().unwrap());
                let codes: Vec<u8> = c.iter().map(|&v| self.code(&g, v)).collect();
                Part::from_codes(g.meta, codes)
            })
            .collect();
        (parts, flag)
    }

    /// Axis channel (V): a block of `partition` tokens of `n` channels;
    /// partition `c` is channel `c`, codes in token order. Elements are
    /// coded (and the LFSR advanced) token by token, channels in order.
    pub fn quantize_block(&mut self, tokens: &[&[u16]]) -> (Vec<Part>, bool) {
        assert_eq!(tokens.len(), self.partition);
        let n = tokens[0].len();
        let mut flag = false;
        let u: Vec<Vec<i64>> = tokens
            .iter()
            .map(|t| {
                assert_eq!(t.len(), n);
                let (u, f) = sanitized_units(t);
                flag |= f;
                u
            })
            .collect();
        let gs: Vec<GroupParams> = (0..n)
            .map(|c| {
                let col = u.iter().map(|t| t[c]);
                GroupParams::derive(self.bits, col.clone().min().unwrap(), col.max().unwrap())
            })
            .collect();
        let mut codes = vec![vec![0u8; self.partition]; n];
        for (t, row) in u.iter().enumerate() {
            for c in 0..n {
                codes[c][t] = self.code(&gs[c], row[c]);
            }
        }
        let parts = gs.iter().zip(codes).map(|(g, q)| Part::from_codes(g.meta, q)).collect();
        (parts, flag)
    }
}
