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
    mbit: Constant<Bits<8>>,
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
        // variable: an index may only name loop variables; bit 16 = taken)
        for i in self._sh..self._lanes {
            for sh in self._sh..(self._sh + 1) {
                if self.x_in[i - sh].val().get_bit(16) & self.x_in[i - sh].val().get_bit(self.mbit.val().index()) {
                    self.x_out[i].next = self.x_in[i - sh].val();
                }
            }
        }
    }
}
