//! Bit-exact model of the Titanus pruning unit (`titanus-pruner`).
//! Paper: Titanus (GLSVLSI 2025) §3.1 (fine-grained magnitude pruning),
//! §4.3 and Figure 6 (comparators, mask generator, non-zero extraction).
//! Spec: docs/spec.md §11.4.

use crate::shifter::zero_remove;

/// A pruned token vector: the index mask (bit per channel, 1 = kept) and the
/// kept values in increasing channel order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub index: Vec<bool>,
    pub values: Vec<i8>,
}

/// The comparator of one lane: kept iff `x != 0` and `|x| >= threshold`,
/// with `|x|` taken in 8 unsigned bits so that `|-128| = 128`.
pub fn keep(x: i8, threshold: u8) -> bool {
    x != 0 && x.unsigned_abs() >= threshold
}

/// Prunes one token vector with its (layer, K/V) threshold.
pub fn prune(x: &[i8], threshold: u8) -> Pruned {
    let index: Vec<bool> = x.iter().map(|&v| keep(v, threshold)).collect();
    let values = x.iter().zip(&index).filter(|(_, &k)| k).map(|(&v, _)| v).collect();
    Pruned { index, values }
}

/// One output beat: `lanes` mask bits, the kept elements compacted to lanes
/// `0 .. count-1` by the zero-remove shifter (spec §3), other lanes 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beat {
    pub mask: Vec<bool>,
    pub data: Vec<i8>,
    pub count: usize,
}

/// The beat stream of one token: beat `j` carries channels
/// `j*lanes .. (j+1)*lanes`. `lanes` must divide `x.len()` (checked by
/// `TitanusParams::validate`).
pub fn prune_beats(x: &[i8], threshold: u8, lanes: usize) -> Vec<Beat> {
    x.chunks(lanes)
        .map(|chunk| {
            let mask: Vec<bool> = chunk.iter().map(|&v| keep(v, threshold)).collect();
            let raw: Vec<u64> = chunk.iter().map(|&v| v as u8 as u64).collect();
            let (out, count) = zero_remove(&raw, &mask);
            Beat { mask, data: out.iter().map(|&v| v as u8 as i8).collect(), count }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_is_kept_and_minus_128_has_magnitude_128() {
        assert!(keep(3, 3) && keep(-3, 3) && !keep(2, 3) && !keep(-2, 3));
        assert!(!keep(0, 0), "zero is never kept");
        assert!(keep(1, 0) && keep(-1, 1));
        assert!(keep(-128, 128) && !keep(-128, 129) && !keep(127, 128));
        assert!((i8::MIN..=i8::MAX).all(|x| !keep(x, 129)), "129 and above prune everything");
    }

    #[test]
    fn beats_concatenate_to_the_token() {
        let mut s = 0x9e37_79b9u32;
        for t in [0u8, 1, 3, 17, 64, 128, 200] {
            let x: Vec<i8> = (0..64)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 17;
                    s ^= s << 5;
                    s as u8 as i8
                })
                .collect();
            let p = prune(&x, t);
            for lanes in [1, 4, 16, 64] {
                let beats = prune_beats(&x, t, lanes);
                let values: Vec<i8> = beats.iter().flat_map(|b| b.data[..b.count].to_vec()).collect();
                let mask: Vec<bool> = beats.iter().flat_map(|b| b.mask.clone()).collect();
                assert_eq!((mask, values), (p.index.clone(), p.values.clone()));
                assert!(beats.iter().all(|b| b.data[b.count..].iter().all(|&v| v == 0)));
            }
        }
    }
}
