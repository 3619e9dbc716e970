//! The configuration-table write port every Titanus unit takes (spec §11.3,
//! §11.13): random writes (legal and rejected), the expected `tw_error`
//! code from `sim`'s `ConfigTable`, and the port itself, driven with noise
//! while `tw_valid` is low and checked one cycle after each write.

use crate::model::{Model, PortId};
use crate::stim::Xorshift;
use sim::oaken::thresholds::Kv;
use sim::titanus::params::{ConfigTable, LayerConfig, TableError};

/// One table write (spec §11.3); `bits` may be illegal and `layer` out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub layer: u8,
    pub v: bool,
    pub threshold: u8,
    pub bits: u8,
}

pub fn tw_code(r: Result<(), TableError>) -> u64 {
    match r {
        Ok(()) => 0,
        Err(TableError::LayerOutOfRange) => 1,
        Err(TableError::BadBits) => 2,
    }
}

pub fn kv(v: bool) -> Kv {
    if v {
        Kv::V
    } else {
        Kv::K
    }
}

/// Applies `w` to `table` as every unit does; returns the `tw_error` code.
pub fn apply(table: &mut ConfigTable, w: &Write) -> u64 {
    tw_code(table.write(w.layer as usize, kv(w.v), LayerConfig { threshold: w.threshold, bits: w.bits }))
}

/// Draws a threshold: mostly small (the paper's pruning ratios), with the
/// edges 0, 1, 127, 128, 129 and 255.
pub fn threshold(r: &mut Xorshift) -> u8 {
    match r.next_u64() % 10 {
        0 => [0u8, 1, 127, 128, 129, 255][(r.next_u64() % 6) as usize],
        1 => r.next_u64() as u8,
        _ => (r.next_u64() % 24) as u8,
    }
}

/// A random write: now and then a layer out of range or an illegal width.
pub fn write(r: &mut Xorshift, layers: usize) -> Write {
    let layer = match r.next_u64() % 12 {
        0 => (layers + (r.next_u64() % 4) as usize).min(255) as u8,
        1 => r.next_u64() as u8,
        _ => (r.next_u64() % layers as u64) as u8,
    };
    let bits = if r.next_u64() % 10 == 0 {
        [0u8, 1, 5, 7][(r.next_u64() % 4) as usize]
    } else {
        2 + (r.next_u64() % 3) as u8
    };
    Write { layer, v: r.next_u64() & 1 == 1, threshold: threshold(r), bits }
}

/// The `tw_*` ports of a model and the response owed for the last write.
pub struct TwPort {
    valid: PortId,
    layer: PortId,
    kv: PortId,
    threshold: PortId,
    bits: PortId,
    done: PortId,
    error: PortId,
    pending: Option<u64>,
    /// The codes answered so far, in order.
    pub codes: Vec<u64>,
}

impl TwPort {
    pub fn of(m: &Model) -> TwPort {
        let g = |n: &str| m.port(n);
        TwPort {
            valid: g("tw_valid"),
            layer: g("tw_layer"),
            kv: g("tw_kv"),
            threshold: g("tw_threshold"),
            bits: g("tw_bits"),
            done: g("tw_done"),
            error: g("tw_error"),
            pending: None,
            codes: Vec::new(),
        }
    }

    /// Drives this cycle's write, or noise with `tw_valid` low.
    pub fn drive(&self, m: &mut Model, w: Option<&Write>, rng: &mut Xorshift) {
        let (valid, layer, v, t, b) = match w {
            Some(w) => (1, w.layer as u64, w.v as u64, w.threshold as u64, w.bits as u64),
            None => (0, rng.next_u64() & 0xFF, rng.next_u64() & 1, rng.next_u64() & 0xFF, rng.next_u64() & 7),
        };
        m.set(self.valid, valid);
        m.set(self.layer, layer);
        m.set(self.kv, v);
        m.set(self.threshold, t);
        m.set(self.bits, b);
    }

    /// The write driven this cycle is taken at the coming edge: applies it
    /// to `table` and expects its code after the edge.
    pub fn taken(&mut self, table: &mut ConfigTable, w: &Write) {
        self.pending = Some(apply(table, w));
    }

    /// After the edge: `tw_done` high with the expected `tw_error` exactly
    /// one cycle after each write, low otherwise.
    pub fn check(&mut self, m: &Model) -> Result<(), String> {
        let done = m.get(self.done) == 1;
        match (self.pending.take(), done) {
            (Some(code), true) => {
                let got = m.get(self.error);
                if got != code {
                    return Err(format!("cycle {}: tw_error {got}, expected {code}", m.cycle()));
                }
                self.codes.push(code);
                Ok(())
            }
            (Some(_), false) => Err(format!("cycle {}: tw_done low after a write", m.cycle())),
            (None, true) => Err(format!("cycle {}: tw_done without a write", m.cycle())),
            (None, false) => Ok(()),
        }
    }
}
