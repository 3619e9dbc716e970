//! Stimulus shared by the tests and the `waves` and `bench` binaries:
//! pseudo-random driving of any model's inputs and co-simulation speed.
//! Part of the unit-independent harness: unit stimulus (Oaken tokens:
//! `crate::oaken_stim`) lives beside its unit's driver.

use crate::info::{Dir, ModelInfo};
use crate::model::{Model, PortId};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// A random finite FP16 pattern (subnormals, extremes and -0 included).
pub fn finite_fp16(r: &mut Xorshift) -> u16 {
    loop {
        let x = r.next_u64() as u16;
        if sim::fp16::is_finite(x) {
            return x;
        }
    }
}

/// A uniform value in [-1, 1).
pub fn uniform_pm1(r: &mut Xorshift) -> f32 {
    (r.next_u64() >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0
}

/// xorshift64: cheap, deterministic, never 0 from a non-zero seed.
#[derive(Clone, Debug)]
pub struct Xorshift(u64);

impl Xorshift {
    pub fn new(seed: u64) -> Xorshift {
        Xorshift(if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// One input port driven by `RandomInputs`.
#[derive(Clone, Copy, Debug)]
pub struct DrivenPort {
    pub id: PortId,
    pub name: &'static str,
    pub width: usize,
    pub words: usize,
}

/// Drives every input except `clock` and `reset` with fresh pseudo-random
/// values each cycle (as the property tests do: handshake inputs toggle at
/// random too). Values are drawn as one flat word vector per cycle: each
/// port's `ceil(width/32)` little-endian words, in manifest order.
#[derive(Clone, Debug)]
pub struct RandomInputs {
    pub ports: Vec<DrivenPort>,
    rng: Xorshift,
    buf: Vec<u32>,
}

impl RandomInputs {
    /// For `m`'s model (and any model with the same ports).
    pub fn new(m: &Model, seed: u64) -> RandomInputs {
        let ports: Vec<DrivenPort> = m
            .info()
            .ports
            .iter()
            .filter(|p| p.dir == Dir::In && p.name != "clock" && p.name != "reset")
            .map(|p| DrivenPort { id: m.port(p.name), name: p.name, width: p.width, words: p.words() })
            .collect();
        RandomInputs { ports, rng: Xorshift::new(seed), buf: Vec::new() }
    }

    /// Words per cycle of all driven ports together.
    pub fn words_per_cycle(&self) -> usize {
        self.ports.iter().map(|p| p.words).sum()
    }

    /// Appends the next cycle's values to `out` (unused top bits are 0).
    pub fn draw_into(&mut self, out: &mut Vec<u32>) {
        for p in &self.ports {
            for i in 0..p.words {
                let mut w = (self.rng.next_u64() >> 16) as u32;
                let top = p.width - 32 * i;
                if top < 32 {
                    w &= (1u32 << top) - 1;
                }
                out.push(w);
            }
        }
    }

    /// Drives one cycle's values, as drawn by `draw_into`.
    pub fn set(&self, m: &mut Model, values: &[u32]) {
        let mut at = 0;
        for p in &self.ports {
            m.set_words(p.id, &values[at..at + p.words]);
            at += p.words;
        }
    }

    /// Draws and drives the next cycle's values.
    pub fn apply(&mut self, m: &mut Model) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.draw_into(&mut buf);
        self.set(m, &buf);
        self.buf = buf;
    }
}

/// Clock cycles run in a measured time.
#[derive(Clone, Copy, Debug)]
pub struct Speed {
    pub cycles: u64,
    pub secs: f64,
}

impl Speed {
    pub fn per_sec(&self) -> f64 {
        self.cycles as f64 / self.secs.max(1e-9)
    }
}

/// Co-simulation speed of `info` out of reset under `RandomInputs`: runs
/// until `budget` has passed or `max_cycles` cycles (at least 64 cycles),
/// writing a VCD to `vcd` if given. Model construction and reset are not
/// timed; the VCD file is left in place.
pub fn random_speed(
    info: &'static ModelInfo,
    budget: Duration,
    max_cycles: u64,
    vcd: Option<&Path>,
) -> io::Result<Speed> {
    let mut m = Model::new(info);
    if let Some(path) = vcd {
        m.trace_to(path)?;
    }
    m.reset(1);
    let mut inputs = RandomInputs::new(&m, 0x9e37_79b9_7f4a_7c15);
    let start = Instant::now();
    let mut cycles = 0u64;
    loop {
        for _ in 0..64 {
            inputs.apply(&mut m);
            m.tick();
        }
        cycles += 64;
        if cycles >= max_cycles || start.elapsed() >= budget {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    m.trace_close();
    Ok(Speed { cycles, secs })
}
