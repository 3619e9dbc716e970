//! Stall patterns for one end of a stream: when a source has nothing to
//! offer, or a sink is not ready. Independent per-cycle coin flips rarely
//! hold a sink off long enough to fill a unit's buffers, so patterns also
//! come in bursts (a two-state chain with long mean bursts) and as single
//! long blocks.

use crate::stim::Xorshift;
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Never stalls.
    Never,
    /// Each cycle independently, with probability `p/256`.
    Random { p: u8 },
    /// A two-state chain: from running, a burst starts with probability
    /// `enter/256` per cycle; a burst ends with probability `leave/256` per
    /// cycle (mean length `256/leave` cycles).
    Bursty { enter: u8, leave: u8 },
    /// One block of `len` stalled cycles starting at cycle `start`.
    Block { start: u32, len: u32 },
}

/// The cycle-by-cycle draw of a `Stall`.
#[derive(Clone, Debug)]
pub struct StallGen {
    kind: Stall,
    rng: Xorshift,
    in_burst: bool,
    cycle: u64,
}

impl StallGen {
    pub fn new(kind: &Stall, seed: u64) -> StallGen {
        StallGen { kind: kind.clone(), rng: Xorshift::new(seed), in_burst: false, cycle: 0 }
    }

    fn chance(&mut self, p256: u8) -> bool {
        ((self.rng.next_u64() >> 24) & 0xFF) < p256 as u64
    }

    /// Whether this cycle is stalled; advances one cycle.
    pub fn next(&mut self) -> bool {
        let c = self.cycle;
        self.cycle += 1;
        match self.kind {
            Stall::Never => false,
            Stall::Random { p } => self.chance(p),
            Stall::Bursty { enter, leave } => {
                self.in_burst = if self.in_burst { !self.chance(leave) } else { self.chance(enter) };
                self.in_burst
            }
            Stall::Block { start, len } => c >= start as u64 && c < start as u64 + len as u64,
        }
    }
}

/// A mix of patterns: never, light or heavy random, bursts of a few to a
/// few hundred cycles, and single long blocks.
pub fn stall() -> impl Strategy<Value = Stall> {
    prop_oneof![
        2 => Just(Stall::Never),
        2 => (1u8..=200).prop_map(|p| Stall::Random { p }),
        3 => (1u8..=40, 1u8..=64).prop_map(|(enter, leave)| Stall::Bursty { enter, leave }),
        1 => (0u32..200, 20u32..400).prop_map(|(start, len)| Stall::Block { start, len }),
    ]
}

/// Patterns for a sink that should fill the unit in front of it: bursts
/// with mean lengths of 32 to 256 cycles, or long blocks.
pub fn long_stall() -> impl Strategy<Value = Stall> {
    prop_oneof![
        3 => (4u8..=40, 1u8..=8).prop_map(|(enter, leave)| Stall::Bursty { enter, leave }),
        1 => (0u32..100, 100u32..600).prop_map(|(start, len)| Stall::Block { start, len }),
    ]
}
