//! The longest AXI4 burst the Oaken MMU may start at an address:
//! `min(4096 - a mod 4096, 256 * bus_bytes - a mod bus_bytes)`. One instance
//! per place a pending range can start (a piece, the end of a burst).
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (reads as maximal
//! bursts). Spec: docs/spec.md §10.7 (cutting a range into bursts), §10.12.

use super::mmu::D;
use rust_hdl::prelude::*;
use sim::oaken::mmu::{AXI_BOUNDARY, AXI_MAX_BEATS};

#[derive(LogicBlock)]
pub struct MmuBurstCap {
    /// The burst's start address.
    pub addr: Signal<In, Bits<D>>,
    /// Its largest length, bytes.
    pub cap: Signal<Out, Bits<D>>,
    cap4k: Signal<Local, Bits<D>>,
    capb: Signal<Local, Bits<D>>,
    k_4k: Constant<Bits<D>>,
    k_4k1: Constant<Bits<D>>,
    k_maxb: Constant<Bits<D>>,
    k_bus1: Constant<Bits<D>>,
}

impl MmuBurstCap {
    /// A bus of `bus_bytes` bytes a beat.
    pub fn new(bus_bytes: u64) -> Self {
        MmuBurstCap {
            addr: Default::default(),
            cap: Default::default(),
            cap4k: Default::default(),
            capb: Default::default(),
            k_4k: Constant::new(AXI_BOUNDARY.into()),
            k_4k1: Constant::new((AXI_BOUNDARY - 1).into()),
            k_maxb: Constant::new((AXI_MAX_BEATS * bus_bytes).into()),
            k_bus1: Constant::new((bus_bytes - 1).into()),
        }
    }
}

impl Logic for MmuBurstCap {
    #[hdl_gen]
    fn update(&mut self) {
        self.cap4k.next = self.k_4k.val() - (self.addr.val() & self.k_4k1.val());
        self.capb.next = self.k_maxb.val() - (self.addr.val() & self.k_bus1.val());
        self.cap.next = self.cap4k.val();
        if self.capb.val() < self.cap4k.val() {
            self.cap.next = self.capb.val();
        }
    }
}
