//! Zero-remove shifter and its inverse, behavioural models (docs/spec.md §3).
//! Paper: [Oaken] §5.2 (refs [57, 67]).
//!
//! `zero_remove` is the function of the hardware network
//! (`hdl/src/prim/zero_remove.rs`, unit `zero-remove-shifter`): the kept
//! elements, in their original order, occupy lanes `0 .. count-1`; all other
//! lanes are 0; `count = popcount(keep)`. `zero_insert` is its inverse, the
//! expansion a decoder uses: the `i`-th compacted element goes back to the
//! `i`-th set lane of the mask.
//!
//! These are written from the function, not from the network: the stage-by-
//! stage movement of §3 is a property of the hardware, checked against these
//! by co-simulation (`tb/tests/zero_remove_shifter.rs`).

/// Compacts the kept lanes of `data` to lanes `0 .. count-1`, in order.
/// Returns the `N`-lane output (other lanes 0) and `count`.
///
/// Panics if `data` and `keep` differ in length.
pub fn zero_remove(data: &[u64], keep: &[bool]) -> (Vec<u64>, usize) {
    assert_eq!(data.len(), keep.len(), "zero_remove: {} data lanes but {} keep flags", data.len(), keep.len());
    let mut out: Vec<u64> = data.iter().zip(keep).filter(|(_, &k)| k).map(|(&d, _)| d).collect();
    let count = out.len();
    out.resize(data.len(), 0);
    (out, count)
}

/// Expands `compacted` onto the set lanes of `mask`: the `i`-th element goes
/// to the `i`-th lane whose mask bit is set; the other lanes are 0. Elements
/// of `compacted` past `popcount(mask)` are ignored (the zero lanes of a
/// `zero_remove` output).
///
/// Panics if `compacted` has fewer than `popcount(mask)` elements.
pub fn zero_insert(compacted: &[u64], mask: &[bool]) -> Vec<u64> {
    let count = mask.iter().filter(|&&k| k).count();
    assert!(
        compacted.len() >= count,
        "zero_insert: mask sets {count} lanes but only {} compacted elements",
        compacted.len()
    );
    let mut next = compacted.iter();
    mask.iter().map(|&k| if k { *next.next().expect("counted above") } else { 0 }).collect()
}

/// The keep flags of an `n`-lane mask given as bits (lane `i` = bit `i`).
pub fn mask_bits(mask: u128, n: usize) -> Vec<bool> {
    assert!(n <= 128, "mask_bits: {n} lanes do not fit a u128");
    (0..n).map(|i| mask >> i & 1 == 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacts_in_order() {
        let data = [10, 11, 12, 13, 14, 15, 16, 17];
        let keep = mask_bits(0b1010_0110, 8);
        assert_eq!(zero_remove(&data, &keep), (vec![11, 12, 15, 17, 0, 0, 0, 0], 4));
    }

    #[test]
    fn all_and_none_kept() {
        let data = [5, 6, 7, 8];
        assert_eq!(zero_remove(&data, &[true; 4]), (data.to_vec(), 4));
        assert_eq!(zero_remove(&data, &[false; 4]), (vec![0; 4], 0));
        assert_eq!(zero_remove(&[9], &[true]), (vec![9], 1));
        assert_eq!(zero_remove(&[9], &[false]), (vec![0], 0));
        assert_eq!(zero_remove(&[], &[]), (vec![], 0));
    }

    #[test]
    fn kept_zero_values_count() {
        // a kept element whose value is 0 is still counted
        assert_eq!(zero_remove(&[0, 3, 0], &[true, false, true]), (vec![0, 0, 0], 2));
    }

    #[test]
    fn insert_spreads_onto_mask() {
        let mask = mask_bits(0b1010_0110, 8);
        assert_eq!(zero_insert(&[11, 12, 15, 17, 0, 0, 0, 0], &mask), vec![0, 11, 12, 0, 0, 15, 0, 17]);
        // surplus compacted elements are ignored, short input is fine if it covers the mask
        assert_eq!(zero_insert(&[1, 2], &mask_bits(0b101, 3)), vec![1, 0, 2]);
        assert_eq!(zero_insert(&[1, 2, 3, 4], &mask_bits(0b001, 3)), vec![1, 0, 0]);
    }

    #[test]
    #[should_panic(expected = "only 1 compacted elements")]
    fn insert_rejects_short_input() {
        zero_insert(&[1], &mask_bits(0b11, 2));
    }

    /// The §3 network, stage by stage: the element at lane p moves down by
    /// z(p), bit s of it at stage s, and no two kept elements meet.
    fn network(data: &[u64], keep: &[bool]) -> Vec<u64> {
        let n = data.len();
        let mut lanes: Vec<Option<(u64, usize)>> =
            (0..n).map(|p| keep[p].then(|| (data[p], keep[..p].iter().filter(|&&k| !k).count()))).collect();
        let mut s = 0;
        while 1 << s < n {
            let mut next = vec![None; n];
            for (p, e) in lanes.iter().enumerate() {
                if let Some((v, z)) = *e {
                    let to = if z >> s & 1 == 1 { p - (1 << s) } else { p };
                    assert!(next[to].is_none(), "two kept elements meet at lane {to}, stage {s}");
                    next[to] = Some((v, z));
                }
            }
            lanes = next;
            s += 1;
        }
        lanes.iter().map(|e| e.map_or(0, |(v, _)| v)).collect()
    }

    /// Exhaustive over every 8-lane mask with distinct data: the function
    /// matches the §3 network, and zero_insert undoes zero_remove on the
    /// kept lanes (the others come back 0).
    #[test]
    fn round_trip_and_network_exhaustive_n8() {
        let data: Vec<u64> = (0..8).map(|i| 0xa0 + i).collect();
        for m in 0..256u128 {
            let keep = mask_bits(m, 8);
            let (out, count) = zero_remove(&data, &keep);
            assert_eq!(count, m.count_ones() as usize);
            assert!(out[count..].iter().all(|&v| v == 0), "mask {m:#010b}: lanes past count");
            assert_eq!(out, network(&data, &keep), "mask {m:#010b}: network");
            let back = zero_insert(&out, &keep);
            for p in 0..8 {
                assert_eq!(back[p], if keep[p] { data[p] } else { 0 }, "mask {m:#010b} lane {p}");
            }
            // and the other way round: compacting an expansion gives the compacted input back
            assert_eq!(zero_remove(&back, &keep), (out, count), "mask {m:#010b}: remove(insert)");
        }
    }

    /// Every lane count the hardware supports, exhaustive masks up to 16
    /// lanes, strided masks above.
    #[test]
    fn network_agrees_for_all_lane_counts() {
        for n in [1usize, 2, 4, 8, 16, 32, 64, 128] {
            let data: Vec<u64> = (0..n as u64).map(|i| 1000 + i).collect();
            let masks: Vec<u128> = if n <= 16 {
                (0..1u128 << n).collect()
            } else {
                let full = if n == 128 { u128::MAX } else { (1u128 << n) - 1 };
                (0..4096u128)
                    .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) & full)
                    .chain([0, full])
                    .collect()
            };
            for m in masks {
                let keep = mask_bits(m, n);
                assert_eq!(zero_remove(&data, &keep).0, network(&data, &keep), "n {n} mask {m:#x}");
            }
        }
    }
}
