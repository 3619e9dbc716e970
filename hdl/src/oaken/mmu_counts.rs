//! The Oaken MMU's segment-count sums: per head, the bytes a token adds to
//! its sparse stream, and the head's counts word for the counts table.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (the sparse
//! management table's transfer sizes). Spec: docs/spec.md §10.5 (a write's
//! sparse bytes), §10.9 (counts table), §10.12.
//!
//! A running sum over each head's segments, restarted at each head: the head
//! of a count is a constant, so no adder waits for a head select.

use super::mmu::{CW, D};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MmuCounts {
    /// The latched segment counts, head-major.
    pub counts: Vec<Signal<In, Bits<8>>>,
    /// The head whose sum and word are wanted (W_NEED, W_COUNTS).
    pub hsel: Signal<In, Bits<D>>,
    /// The head of the next stream (NEXT).
    pub hs_nx: Signal<In, Bits<D>>,
    /// Head hsel's count sum.
    pub nsum: Signal<Out, Bits<D>>,
    /// Head hs_nx's count sum.
    pub nsum_s: Signal<Out, Bits<D>>,
    /// Head hsel's counts, one byte per segment.
    pub cw: Signal<Out, Bits<CW>>,

    run: Signal<Local, Bits<D>>,
    ctmp: Signal<Local, Bits<8>>,
    k_head_of: Vec<Constant<Bits<D>>>,
    k_first: Vec<Constant<Bit>>,
    k_last: Vec<Constant<Bit>>,
    k_byte_sh: Vec<Constant<Bits<D>>>,
    k_zero: Constant<Bits<D>>,
    k_zero_cw: Constant<Bits<CW>>,
    _nc: usize,
}

impl MmuCounts {
    /// `heads` heads of `seg` segments each.
    pub fn new(heads: usize, seg: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let nc = heads * seg;
        MmuCounts {
            counts: (0..nc).map(|_| Default::default()).collect(),
            hsel: Default::default(),
            hs_nx: Default::default(),
            nsum: Default::default(),
            nsum_s: Default::default(),
            cw: Default::default(),
            run: Default::default(),
            ctmp: Default::default(),
            k_head_of: (0..nc).map(|i| c((i / seg) as u64)).collect(),
            k_first: (0..nc).map(|i| Constant::new(i % seg == 0)).collect(),
            k_last: (0..nc).map(|i| Constant::new(i % seg == seg - 1)).collect(),
            k_byte_sh: (0..nc).map(|i| c(8 * (i % seg) as u64)).collect(),
            k_zero: c(0),
            k_zero_cw: Constant::new(Bits::<CW>::default()),
            _nc: nc,
        }
    }
}

impl Logic for MmuCounts {
    #[hdl_gen]
    fn update(&mut self) {
        self.nsum.next = self.k_zero.val();
        self.nsum_s.next = self.k_zero.val();
        self.run.next = self.k_zero.val();
        self.cw.next = self.k_zero_cw.val();
        self.ctmp.next = bit_cast::<8, D>(self.k_zero.val());
        for i in 0..self._nc {
            // casts cannot name the loop index: go through a temporary
            self.ctmp.next = self.counts[i].val();
            if self.k_first[i].val() {
                self.run.next = bit_cast::<D, 8>(self.ctmp.val());
            } else {
                self.run.next = self.run.val() + bit_cast::<D, 8>(self.ctmp.val());
            }
            if self.k_last[i].val() & (self.k_head_of[i].val() == self.hsel.val()) {
                self.nsum.next = self.run.val();
            }
            if self.k_last[i].val() & (self.k_head_of[i].val() == self.hs_nx.val()) {
                self.nsum_s.next = self.run.val();
            }
            if self.k_head_of[i].val() == self.hsel.val() {
                self.cw.next = self.cw.val() | (bit_cast::<CW, 8>(self.ctmp.val()) << self.k_byte_sh[i].val());
            }
        }
    }
}
