//! The pieces every streaming unit's test uses: a source that offers a
//! queue of beats under a stall pattern, a sink that checks the valid/ready
//! rules of spec §1 as it takes beats, and a scoreboard comparison that
//! names the first beat lost, duplicated, invented, reordered or wrong.

use crate::model::{Model, PortId};
use crate::stalls::{Stall, StallGen};
use std::collections::VecDeque;
use std::fmt::Debug;

/// A queue of beats offered under a stall pattern. Once offered, a beat
/// stays offered until it is taken (the usual AXI-style source; spec §1
/// also allows withdrawing, which the shifter tests exercise).
pub struct Source<T> {
    pub queue: VecDeque<T>,
    stall: StallGen,
    offered: bool,
    /// Beats taken so far.
    pub taken: usize,
}

impl<T> Source<T> {
    pub fn new(beats: impl IntoIterator<Item = T>, stall: &Stall, seed: u64) -> Source<T> {
        Source { queue: beats.into_iter().collect(), stall: StallGen::new(stall, seed), offered: false, taken: 0 }
    }

    /// This cycle's offer: the head beat, unless the source idles.
    pub fn offer(&mut self) -> Option<&T> {
        let idle = self.stall.next();
        if !self.offered && !self.queue.is_empty() && !idle {
            self.offered = true;
        }
        if self.offered {
            self.queue.front()
        } else {
            None
        }
    }

    /// The offered beat was taken this cycle.
    pub fn take(&mut self) -> T {
        assert!(self.offered, "Source::take without an offer");
        self.offered = false;
        self.taken += 1;
        self.queue.pop_front().expect("offered beat")
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Drops everything (a reset cut the stream).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.offered = false;
    }
}

/// The receiving end of a stream: every cycle, `ready` from a stall
/// pattern; beats that transfer are kept with their cycle.
pub struct Sink<T> {
    stall: StallGen,
    held: Option<T>,
    pub beats: Vec<T>,
    pub cycles: Vec<u64>,
}

impl<T: Clone + PartialEq + Debug> Sink<T> {
    pub fn new(stall: &Stall, seed: u64) -> Sink<T> {
        Sink { stall: StallGen::new(stall, seed), held: None, beats: Vec::new(), cycles: Vec::new() }
    }

    /// `ready` for this cycle.
    pub fn ready(&mut self) -> bool {
        !self.stall.next()
    }

    /// After the inputs settle: checks that a beat held last cycle is still
    /// valid and unchanged, and takes the beat if it transfers. `beat` reads
    /// the bus; it is called only when `valid`.
    pub fn sample(
        &mut self,
        cycle: u64,
        valid: bool,
        ready: bool,
        beat: impl FnOnce() -> T,
    ) -> Result<Option<&T>, String> {
        let shown = if valid { Some(beat()) } else { None };
        if let Some(h) = &self.held {
            match &shown {
                None => return Err(format!("cycle {cycle}: out_valid dropped while a beat was held")),
                Some(b) if b != h => {
                    return Err(format!("cycle {cycle}: a held output beat changed\n from {h:?}\n   to {b:?}"))
                }
                _ => {}
            }
        }
        self.held = None;
        match shown {
            Some(b) if ready => {
                self.beats.push(b);
                self.cycles.push(cycle);
                Ok(self.beats.last())
            }
            Some(b) => {
                self.held = Some(b);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// A reset: nothing is held any more.
    pub fn reset(&mut self) {
        self.held = None;
    }
}

/// Sets `out_ready` to `ready` and settles the model, checking on the way
/// that `in_ready` does not follow `out_ready` in the same cycle (spec §1:
/// it comes from registers). Returns `in_ready`.
pub fn settle_ready(m: &mut Model, in_ready: PortId, out_ready: PortId, ready: bool) -> Result<bool, String> {
    m.set(out_ready, !ready as u64);
    m.eval();
    let other = m.get(in_ready);
    m.set(out_ready, ready as u64);
    m.eval();
    let r = m.get(in_ready) == 1;
    if other != r as u64 {
        return Err(format!("cycle {}: in_ready follows out_ready combinationally", m.cycle()));
    }
    Ok(r)
}

/// Compares the beats a unit produced with the ones expected: equal, or,
/// when `cut` (a reset ended the stream), a prefix of them. The message
/// names the first difference with `label(i)` for beat `i`.
pub fn compare<T: PartialEq + Debug>(
    got: &[T],
    want: &[T],
    cut: bool,
    label: impl Fn(usize) -> String,
) -> Result<(), String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return Err(format!("{}: got {g:?}\n expected {w:?}", label(i)));
        }
    }
    if got.len() > want.len() {
        return Err(format!("{} beats, expected {}: {} extra (duplicated or invented)", got.len(), want.len(), got.len() - want.len()));
    }
    if got.len() < want.len() && !cut {
        return Err(format!("{} beats, expected {}: {} lost", got.len(), want.len(), want.len() - got.len()));
    }
    Ok(())
}
