//! The pages a stream takes for more bytes, for the Oaken MMU's
//! out-of-pages check: `ceil((f + b) / pb) - ceil(f / pb)`, which is
//! `ceil((r + b) / pb) - (r != 0)` with `r = f mod pb` (only the offset in
//! the last page matters). One instance per stream kind.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (address and
//! transfer-size management). Spec: docs/spec.md §10.5 (pages a write
//! needs), §10.8 (OutOfPages), §10.12.

use super::mmu::D;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MmuPageNeed {
    /// The stream's fill before the token, bytes.
    pub fill: Signal<In, Bits<D>>,
    /// The token's bytes in the stream.
    pub bytes: Signal<In, Bits<D>>,
    /// The pages the stream takes for them.
    pub need: Signal<Out, Bits<D>>,
    off: Signal<Local, Bits<D>>,
    k_pb1: Constant<Bits<D>>,
    k_lpb: Constant<Bits<D>>,
    k_zero: Constant<Bits<D>>,
    k_one: Constant<Bits<D>>,
}

impl MmuPageNeed {
    /// Pages of `pb` bytes (a power of two).
    pub fn new(pb: u64) -> Self {
        MmuPageNeed {
            fill: Default::default(),
            bytes: Default::default(),
            need: Default::default(),
            off: Default::default(),
            k_pb1: Constant::new((pb - 1).into()),
            k_lpb: Constant::new((pb.trailing_zeros() as u64).into()),
            k_zero: Constant::new(0u64.into()),
            k_one: Constant::new(1u64.into()),
        }
    }
}

impl Logic for MmuPageNeed {
    #[hdl_gen]
    fn update(&mut self) {
        self.off.next = self.fill.val() & self.k_pb1.val();
        self.need.next = (self.off.val() + self.bytes.val() + self.k_pb1.val()) >> self.k_lpb.val();
        if self.off.val() != self.k_zero.val() {
            self.need.next = self.need.val() - self.k_one.val();
        }
    }
}
