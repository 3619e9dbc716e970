//! One stage of the dequantizer's expansion network (K1): each taken COO
//! entry moves up to its own lane in log2(L) such stages, by a power of two
//! each, the largest first.
//! Paper: Oaken (ISCA 2025) §5.2, zero-insert of the COO entries. Spec:
//! docs/spec.md §4.5 (K1), the network of §3.1 with its shifts known from
//! the indices.
//!
//! A lane word packs the entry (bits 0-7), the move still to make (its
//! lane less its position, bits 8-15) and "taken" (bit 16), so that one
//! port carries a position from stage to stage.

use rust_hdl::prelude::*;

/// Width of a lane word.
pub const XW: usize = 17;
/// Bit of a lane word: the entry is taken.
pub const X_TAKEN: usize = 16;
/// First bit of a lane word's remaining move.
pub const X_MOVE: usize = 8;

#[derive(LogicBlock)]
pub struct DeqExpandStage {
    /// Per position, the lane words before this stage.
    pub x_in: Vec<Signal<In, Bits<XW>>>,
    /// Per position, the lane words after the moves of `sh` positions.
    pub x_out: Vec<Signal<Out, Bits<XW>>>,
    // the word's bit of the move this stage makes (bit log2 sh of the move)
    mbit: Constant<Bits<5>>,
    taken: Constant<Bits<XW>>,
    _lanes: usize,
    _sh: usize,
}

impl DeqExpandStage {
    /// A stage of `lanes` positions moving entries by `sh` (a power of two).
    pub fn new(lanes: usize, sh: usize) -> Self {
        assert!(sh.is_power_of_two());
        Self {
            x_in: (0..lanes).map(|_| Default::default()).collect(),
            x_out: (0..lanes).map(|_| Default::default()).collect(),
            mbit: Constant::new(((X_MOVE + sh.trailing_zeros() as usize) as u64).into()),
            taken: Constant::new((1u64 << X_TAKEN).into()),
            _lanes: lanes,
            _sh: sh,
        }
    }
}

impl Logic for DeqExpandStage {
    #[hdl_gen]
    fn update(&mut self) {
        // an entry whose move has this stage's bit leaves its position ...
        for i in 0..self._lanes {
            self.x_out[i].next = self.x_in[i].val();
            if self.x_in[i].val().get_bit(self.mbit.val().index()) {
                self.x_out[i].next = self.x_in[i].val() & !self.taken.val();
            }
        }
        // ... and takes the one sh positions up (sh as a one-value loop
        // variable: an index may only name loop variables or constants; the taken bit
        // is tested through its mask)
        for i in self._sh..self._lanes {
            for sh in self._sh..(self._sh + 1) {
                if (self.x_in[i - sh].val() & self.taken.val()).any() & self.x_in[i - sh].val().get_bit(self.mbit.val().index()) {
                    self.x_out[i].next = self.x_in[i - sh].val();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The six stages in a row put every taken entry of a prefix in its
    /// own lane (increasing lanes, each at or above its position) and
    /// leave every other lane untaken, whatever the untaken words hold.
    #[test]
    fn chain_puts_entries_in_their_lanes() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for lanes in [1usize, 2, 4, 8, 16, 32, 64] {
            let mut st: Vec<DeqExpandStage> = [32, 16, 8, 4, 2, 1].iter().map(|&s| DeqExpandStage::new(lanes, s)).collect();
            for s in st.iter_mut() {
                s.connect_all();
            }
            for _ in 0..200 {
                // k taken entries, lanes drawn as a sorted sample of 0..lanes
                let k = (rnd() % (lanes as u64 + 1)) as usize;
                let mut lane: Vec<usize> = (0..lanes).collect();
                for i in 0..lanes {
                    let j = i + (rnd() % (lanes - i) as u64) as usize;
                    lane.swap(i, j);
                }
                let mut tgt = lane[..k].to_vec();
                tgt.sort();
                let ent: Vec<u64> = (0..lanes).map(|_| rnd() & 0xFF).collect();
                let mut w: Vec<u64> = (0..lanes)
                    .map(|p| {
                        if p < k {
                            1 << X_TAKEN | ((tgt[p] - p) as u64) << X_MOVE | ent[p]
                        } else {
                            rnd() & 0xFFFF
                        }
                    })
                    .collect();
                for s in st.iter_mut() {
                    for p in 0..lanes {
                        s.x_in[p].next = w[p].into();
                    }
                    assert!(simulate(s, 100));
                    w = (0..lanes).map(|p| s.x_out[p].val().to_u64()).collect();
                }
                let mut want = vec![None; lanes];
                for p in 0..k {
                    want[tgt[p]] = Some(ent[p]);
                }
                for t in 0..lanes {
                    let got = (w[t] >> X_TAKEN & 1 == 1).then_some(w[t] & 0xFF);
                    assert_eq!(got, want[t], "lanes {lanes} lane {t} targets {tgt:?}");
                }
            }
        }
    }
}
