//! The per-token INTn baseline of `kvsim compare` (docs/spec.md §16.1): each
//! head of each token, K and V alike, is one group of KIVI's min-max rule
//! (§13.2) at `n` bits, its codes packed densely into 32-bit words, with
//! one 32-bit metadata word. Not a unit: the plain scheme every other one
//! should beat at equal bits.

use crate::kivi::dequantizer::decode;
use crate::kivi::quantizer::quantize_group;
use crate::kvset::{At, KvSet, KVS};

/// Stored bits of the whole set.
pub struct IntnBits {
    pub elements: u64,
    pub code_bits: u64,
    pub meta_bits: u64,
}

/// Quantizes every head of every token of `set` at `bits` (1..=8) and
/// hands every element, decoded (`RNE16(min + q step)`), to `sink`.
pub fn measure_with(set: &KvSet, head_dim: usize, bits: u32, sink: &mut dyn FnMut(At, f64)) -> IntnBits {
    assert!((1..=8).contains(&bits) && set.head_dim.is_multiple_of(head_dim));
    let mut r = IntnBits { elements: 0, code_bits: 0, meta_bits: 0 };
    for run in 0..set.runs {
        for layer in 0..set.layers {
            for kv in KVS {
                for (c, x) in set.sample(run, layer, kv).chunks_exact(head_dim).enumerate() {
                    let (g, _) = quantize_group(bits, x);
                    let (token, first) = (c * head_dim / set.head_dim, c * head_dim % set.head_dim);
                    for (i, &q) in g.codes.iter().enumerate() {
                        sink(At { run, layer, kv, token, channel: first + i }, crate::fp16::to_f64(decode(g.meta, q)));
                    }
                    r.elements += head_dim as u64;
                    r.code_bits += (bits as usize * head_dim).div_ceil(32) as u64 * 32;
                    r.meta_bits += 32;
                }
            }
        }
    }
    r
}
