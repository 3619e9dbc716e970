//! Bit layouts of the Oaken streams and records (docs/spec.md §2.8, §2.9).
//! All layouts are little-endian in bits: field bit 0 is the word's lowest
//! bit, and element i of a vector occupies the i-th slot from bit 0 upward.

use super::params::{OakenParams, META_BITS, SEGMENT};
use bitvec::prelude::*;

/// One COO entry: `{idx[5:0], grp, hi}` packed as bit 0 = hi, bit 1 = grp
/// (1 = outer group, 0 = inner group), bits 7..2 = idx.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooEntry {
    /// Position within the entry's 64-element segment.
    pub idx: u8,
    /// Outer group (true) or inner group (false).
    pub outer: bool,
    /// Outer: side (1 = above hi_outer). Inner: code bit `inlier_bits`.
    pub hi: bool,
}

impl CooEntry {
    pub fn encode(&self) -> u8 {
        debug_assert!(self.idx < SEGMENT as u8);
        (self.idx << 2) | (self.outer as u8) << 1 | self.hi as u8
    }

    pub fn decode(b: u8) -> Self {
        CooEntry { idx: b >> 2, outer: b & 2 != 0, hi: b & 1 != 0 }
    }
}

/// Per-group metadata: FP16 patterns of the group's minimum and step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GroupMeta {
    pub min: u16,
    pub step: u16,
}

/// The per-token metadata word (spec §2.9): each group's min and step, one
/// word for the whole `heads * head_dim` vector. The segment counts are not
/// part of it (they go to the MMU, spec §10.2).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Meta {
    /// Outer, middle, inner.
    pub groups: [GroupMeta; 3],
}

impl Meta {
    pub fn pack(&self) -> BitVec<u64, Lsb0> {
        let mut w = bitvec![u64, Lsb0; 0; META_BITS];
        for (g, gm) in self.groups.iter().enumerate() {
            w[32 * g..32 * g + 16].store_le(gm.min);
            w[32 * g + 16..32 * g + 32].store_le(gm.step);
        }
        w
    }

    pub fn unpack(w: &BitSlice<u64, Lsb0>) -> Self {
        assert_eq!(w.len(), META_BITS);
        let groups = [0, 1, 2].map(|g| GroupMeta {
            min: w[32 * g..32 * g + 16].load_le(),
            step: w[32 * g + 16..32 * g + 32].load_le(),
        });
        Meta { groups }
    }

    /// The word as stored in the metadata stream: 12 bytes, byte 0 = bits 7..0.
    pub fn to_bytes(&self) -> [u8; 12] {
        let w = self.pack();
        std::array::from_fn(|i| w[8 * i..8 * i + 8].load_le())
    }

    pub fn from_bytes(b: &[u8]) -> Self {
        assert_eq!(b.len(), 12);
        Meta::unpack(&pack_bytes(b))
    }
}

/// Packs `codes` (each < 2^bits) into consecutive `bits`-wide slots.
pub fn pack_codes(codes: &[u8], bits: u32) -> BitVec<u64, Lsb0> {
    let b = bits as usize;
    let mut w = bitvec![u64, Lsb0; 0; codes.len() * b];
    for (i, &c) in codes.iter().enumerate() {
        debug_assert!((c as u32) < (1 << bits));
        w[i * b..(i + 1) * b].store_le(c);
    }
    w
}

pub fn unpack_codes(w: &BitSlice<u64, Lsb0>, bits: u32) -> Vec<u8> {
    w.chunks_exact(bits as usize).map(|c| c.load_le::<u8>()).collect()
}

/// Packs bytes (COO entries) little-endian into a bit vector.
pub fn pack_bytes(bytes: &[u8]) -> BitVec<u64, Lsb0> {
    pack_codes(bytes, 8)
}

/// One head's dense record as stored in memory: its `head_dim` slots packed
/// from bit 0 of byte 0, the last byte zero-padded (spec §2.9).
pub fn dense_record(p: &OakenParams, dense: &[u8]) -> Vec<u8> {
    assert_eq!(dense.len(), p.head_dim);
    let mut w = pack_codes(dense, p.inlier_bits);
    w.resize(8 * p.dense_bytes(), false);
    w.chunks(8).map(|c| c.load_le::<u8>()).collect()
}

/// The slots of a stored dense record.
pub fn dense_slots(p: &OakenParams, bytes: &[u8]) -> Vec<u8> {
    assert_eq!(bytes.len(), p.dense_bytes());
    let w = pack_bytes(bytes);
    unpack_codes(&w[..p.head_dim * p.inlier_bits as usize], p.inlier_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coo_layout_matches_spec_example() {
        // spec §2.8 example: idx 37, outer, upper side -> 0b100101_1_1 = 0x97
        let e = CooEntry { idx: 37, outer: true, hi: true };
        assert_eq!(e.encode(), 0x97);
        assert_eq!(CooEntry::decode(0x97), e);
        // idx 5, inner, hi = 0 -> 0b000101_0_0 = 0x14
        assert_eq!(CooEntry { idx: 5, outer: false, hi: false }.encode(), 0x14);
    }

    #[test]
    fn meta_layout_matches_spec_example() {
        let m = Meta {
            groups: [
                GroupMeta { min: 0x1111, step: 0x2222 },
                GroupMeta { min: 0x3333, step: 0x4444 },
                GroupMeta { min: 0x5555, step: 0x6666 },
            ],
        };
        let w = m.pack();
        assert_eq!(w.len(), 96);
        // Word 0 holds bits 63..0: middle.step, middle.min, outer.step, outer.min.
        assert_eq!(w[0..64].load_le::<u64>(), 0x4444_3333_2222_1111);
        assert_eq!(w[64..96].load_le::<u64>(), 0x6666_5555);
        assert_eq!(Meta::unpack(&w), m);
        // spec §2.9: byte 0 is outer.min's low byte
        assert_eq!(m.to_bytes(), [0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66]);
        assert_eq!(Meta::from_bytes(&m.to_bytes()), m);
    }

    #[test]
    fn dense_record_pads_the_last_byte() {
        // head_dim 4, inlier_bits 3: 12 bits in 2 bytes, slots 5, 1, 7, 2 ->
        // bits 101 001 111 010 from bit 0: 0b11_001_101 = 0xCD, then 0b0000_0101
        let p = OakenParams { head_dim: 4, lanes: 4, inlier_bits: 3, outlier_bits: 4, ..Default::default() };
        assert_eq!(p.dense_bytes(), 2);
        assert_eq!(dense_record(&p, &[5, 1, 7, 2]), vec![0xCD, 0x05]);
        assert_eq!(dense_slots(&p, &[0xCD, 0x05]), vec![5, 1, 7, 2]);
    }

    #[test]
    fn codes_pack_lsb_first() {
        let w = pack_codes(&[0x1, 0x2, 0xF, 0x0], 4);
        assert_eq!(w.load_le::<u16>(), 0x0F21);
        assert_eq!(unpack_codes(&w, 4), vec![1, 2, 15, 0]);
    }
}
