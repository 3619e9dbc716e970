//! KIVI bit layout: packed code words and the metadata word
//! (docs/spec.md §13.4, §13.5).

use super::params::{codes_per_word, words_per_group};

/// One group's metadata: FP16 scale (the step) and FP16 min.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub scale: u16,
    pub min: u16,
}

impl Meta {
    /// `{scale, min}`: min in bits [15:0], scale in bits [31:16].
    pub fn word(&self) -> u32 {
        (self.scale as u32) << 16 | self.min as u32
    }

    pub fn from_word(w: u32) -> Meta {
        Meta { scale: (w >> 16) as u16, min: w as u16 }
    }
}

/// Packs a group's codes, least significant first: code `j` at bits
/// `[b*(j mod c) + b-1 : b*(j mod c)]` of word `j div c`, `c = floor(32/b)`;
/// unused bits are 0.
pub fn pack(codes: &[u8], bits: u32) -> Vec<u32> {
    let c = codes_per_word(bits);
    let mut w = vec![0u32; words_per_group(bits, codes.len())];
    for (j, &q) in codes.iter().enumerate() {
        assert!((q as u32) < 1 << bits, "code {q} wider than {bits} bits");
        w[j / c] |= (q as u32) << (bits as usize * (j % c));
    }
    w
}

/// The first `n` codes of `words` (the inverse of `pack`).
pub fn unpack(words: &[u32], bits: u32, n: usize) -> Vec<u8> {
    let c = codes_per_word(bits);
    assert!(words.len() >= n.div_ceil(c));
    let mask = (1u32 << bits) - 1;
    (0..n).map(|j| ((words[j / c] >> (bits as usize * (j % c))) & mask) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kvgen::Rng;

    #[test]
    fn bit_order_is_least_significant_first() {
        // 2 bits: codes 1, 2, 3 -> 0b11_10_01
        assert_eq!(pack(&[1, 2, 3], 2), vec![0b11_10_01]);
        // the 17th two-bit code opens the second word
        let mut c = vec![0u8; 17];
        c[15] = 3;
        c[16] = 1;
        assert_eq!(pack(&c, 2), vec![0xC000_0000, 1]);
        // 3 bits: ten codes per word, bits 31:30 unused
        let c: Vec<u8> = (0..11).map(|j| 7 - (j % 8) as u8).collect();
        let w = pack(&c, 3);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0] >> 30, 0);
        assert_eq!(w[0] & 7, 7);
        assert_eq!((w[0] >> 27) & 7, 7 - 9 % 8);
        assert_eq!(w[1], 7 - 10 % 8);
        // 8 bits: bytes in little-endian order
        assert_eq!(pack(&[0x12, 0x34, 0x56, 0x78], 8), vec![0x7856_3412]);
        assert_eq!(Meta { scale: 0x3C00, min: 0xBC00 }.word(), 0x3C00_BC00);
        assert_eq!(Meta::from_word(0x3C00_BC00), Meta { scale: 0x3C00, min: 0xBC00 });
    }

    #[test]
    fn round_trip() {
        let mut rng = Rng::new(5);
        for bits in [2u32, 3, 4, 8] {
            for n in [1usize, 9, 16, 32, 33, 100, 128] {
                let codes: Vec<u8> = (0..n).map(|_| rng.below(1 << bits) as u8).collect();
                let w = pack(&codes, bits);
                assert_eq!(w.len(), n.div_ceil(32 / bits as usize));
                assert_eq!(unpack(&w, bits, n), codes);
            }
        }
    }
}
