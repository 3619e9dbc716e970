//! A running Verilated model: port access, clocking, reset and VCD tracing.

use crate::info::{Backend, Dir, ModelInfo, PortInfo};
use crate::netsim::NetSim;
use crate::lanes;
use std::ffi::{c_void, CString};
use std::io;
use std::path::Path;

/// A port of a model, by index. Valid for every model with the same port
/// list, such as a unit's RTL model and its `_net` netlist model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(u32);

/// Seed used by `Model::new` for the random initial state.
pub const DEFAULT_SEED: u32 = 0x5eed;

/// Half a clock period in VCD time units (ns): cycle `n` has its rising edge at `10n + 5`.
const HALF_PERIOD: u64 = 5;

/// The running instance behind a `Model`.
enum Inst {
    /// A Verilator model (its shim's handle).
    V(*mut c_void),
    N(Box<NetSim>),
}

/// One instance of a model: a Verilator model with its own
/// `VerilatedContext`, or a netlist simulation.
/// Inputs and registers start from random values (Verilator
/// `--x-initial unique` with `randReset(2)`), so a design that relies on
/// initial values rather than reset shows it.
pub struct Model {
    info: &'static ModelInfo,
    inst: Inst,
    clock: Option<PortId>,
    reset: Option<PortId>,
    cycle: u64,
    tracing: bool,
    recording: Option<Recording>,
}

/// Every port's value at every clock cycle of a run (see `Model::record`):
/// enough to replay the run on another simulator and compare.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Per cycle: every port's words (manifest order), the inputs as
    /// sampled at the cycle's rising edge and the outputs just before it.
    pub cycles: Vec<Vec<Vec<u32>>>,
}

// The instance is only touched through &mut self or &self of this one owner,
// and its VerilatedContext belongs to it alone.
unsafe impl Send for Model {}

impl Model {
    pub fn new(info: &'static ModelInfo) -> Model {
        Model::with_seed(info, DEFAULT_SEED)
    }

    /// `seed` picks the random initial state (0 is replaced by a fixed seed:
    /// Verilator would read 0 as "seed from the system"). Verilator keeps
    /// one RNG per thread, reseeded whenever any context sets a seed, so the
    /// exact values repeat only while no other thread is creating a model.
    pub fn with_seed(info: &'static ModelInfo, seed: u32) -> Model {
        let seed = if seed == 0 { DEFAULT_SEED } else { seed };
        let inst = match &info.backend {
            Backend::Verilated(ffi) => {
                let p = unsafe { (ffi.new)(seed) };
                assert!(!p.is_null(), "{}: model construction failed", info.name);
                Inst::V(p)
            }
            Backend::Netlist(prog) => Inst::N(Box::new(NetSim::new(prog.clone(), seed))),
        };
        let find = |n: &str| info.port_index(n).map(|i| PortId(i as u32));
        Model { info, inst, clock: find("clock"), reset: find("reset"), cycle: 0, tracing: false, recording: None }
    }

    pub fn info(&self) -> &'static ModelInfo {
        self.info
    }

    fn raw_set(&mut self, p: u32, words: &[u32]) {
        match (&mut self.inst, &self.info.backend) {
            (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.set)(*i, p, words.as_ptr()) },
            (Inst::N(n), _) => n.set(p as usize, words),
            _ => unreachable!(),
        }
    }

    fn raw_get(&self, p: u32, words: &mut [u32]) {
        match (&self.inst, &self.info.backend) {
            (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.get)(*i, p, words.as_mut_ptr()) },
            (Inst::N(n), _) => n.get(p as usize, words),
            _ => unreachable!(),
        }
    }

    fn raw_eval(&mut self) {
        match (&mut self.inst, &self.info.backend) {
            (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.eval)(*i) },
            (Inst::N(n), _) => n.eval(),
            _ => unreachable!(),
        }
    }

    fn raw_dump(&mut self, t: u64) {
        match (&mut self.inst, &self.info.backend) {
            (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.trace_dump)(*i, t) },
            (Inst::N(n), _) => n.trace_dump(t),
            _ => unreachable!(),
        }
    }

    /// The netlist simulator behind a netlist model (its switching
    /// activity, `crate::netsim::Activity`); None under Verilator.
    pub fn netsim(&self) -> Option<&crate::netsim::NetSim> {
        match &self.inst {
            Inst::N(n) => Some(n),
            Inst::V(_) => None,
        }
    }

    pub fn netsim_mut(&mut self) -> Option<&mut crate::netsim::NetSim> {
        match &mut self.inst {
            Inst::N(n) => Some(n),
            Inst::V(_) => None,
        }
    }

    pub fn try_port(&self, name: &str) -> Option<PortId> {
        self.info.port_index(name).map(|i| PortId(i as u32))
    }

    /// Panics, listing the ports, if `name` is not one.
    pub fn port(&self, name: &str) -> PortId {
        self.try_port(name).unwrap_or_else(|| {
            let list: Vec<String> = self
                .info
                .ports
                .iter()
                .map(|p| format!("{} {}[{}]", if p.dir == Dir::In { "in" } else { "out" }, p.name, p.width))
                .collect();
            panic!("model {} has no port '{name}'; its ports: {}", self.info.name, list.join(", "))
        })
    }

    pub fn port_info(&self, p: PortId) -> &'static PortInfo {
        self.info.ports.get(p.0 as usize).unwrap_or_else(|| panic!("{p:?} is not a port of model {}", self.info.name))
    }

    fn input(&self, p: PortId) -> &'static PortInfo {
        let pi = self.port_info(p);
        assert!(pi.dir == Dir::In, "model {}: port {} is an output and cannot be driven", self.info.name, pi.name);
        pi
    }

    /// Drives input `p`; panics if `v` does not fit its width.
    pub fn set(&mut self, p: PortId, v: u64) {
        let pi = self.input(p);
        assert!(
            pi.width >= 64 || v >> pi.width == 0,
            "model {}: value {v:#x} does not fit port {}[{}:0]",
            self.info.name,
            pi.name,
            pi.width - 1
        );
        if pi.width <= 64 {
            let w = [v as u32, (v >> 32) as u32];
            self.raw_set(p.0, &w[..pi.words().max(1)]);
        } else {
            self.set_words(p, &lanes::from_u128(v as u128, pi.words()));
        }
    }

    /// Drives input `p` from exactly `ceil(width/32)` little-endian words.
    pub fn set_words(&mut self, p: PortId, words: &[u32]) {
        let pi = self.input(p);
        assert_eq!(
            words.len(),
            pi.words(),
            "model {}: port {}[{}] takes {} words",
            self.info.name,
            pi.name,
            pi.width,
            pi.words()
        );
        let top_bits = pi.width - 32 * (pi.words() - 1);
        assert!(
            top_bits == 32 || words[words.len() - 1] >> top_bits == 0,
            "model {}: value does not fit port {}[{}:0]",
            self.info.name,
            pi.name,
            pi.width - 1
        );
        self.raw_set(p.0, words);
    }

    pub fn set_u128(&mut self, p: PortId, v: u128) {
        let pi = self.input(p);
        assert!(
            pi.width >= 128 || v >> pi.width == 0,
            "model {}: value {v:#x} does not fit port {}[{}:0]",
            self.info.name,
            pi.name,
            pi.width - 1
        );
        self.set_words(p, &lanes::from_u128(v, pi.words()));
    }

    /// Drives a lane bus: one value per element, element `i` at bits `[w*i+w-1 : w*i]`.
    pub fn set_lanes(&mut self, p: PortId, values: &[u64]) {
        let pi = self.input(p);
        assert_eq!(values.len(), pi.elements, "model {}: port {} has {} lanes", self.info.name, pi.name, pi.elements);
        self.set_words(p, &lanes::pack(values, pi.element_width));
    }

    /// Value of port `p` (input or output), for ports up to 64 bits.
    pub fn get(&self, p: PortId) -> u64 {
        let pi = self.port_info(p);
        assert!(
            pi.width <= 64,
            "model {}: port {}[{}] is wider than 64 bits; use get_words",
            self.info.name,
            pi.name,
            pi.width
        );
        let mut w = [0u32; 2];
        self.raw_get(p.0, &mut w[..pi.words()]);
        w[0] as u64 | (w[1] as u64) << 32
    }

    pub fn get_words(&self, p: PortId) -> Vec<u32> {
        let pi = self.port_info(p);
        let mut w = vec![0u32; pi.words()];
        self.raw_get(p.0, &mut w);
        w
    }

    pub fn get_u128(&self, p: PortId) -> u128 {
        lanes::to_u128(&self.get_words(p))
    }

    pub fn get_lanes(&self, p: PortId) -> Vec<u64> {
        let pi = self.port_info(p);
        lanes::unpack(&self.get_words(p), pi.elements, pi.element_width)
    }

    /// Settles combinational logic after input changes.
    pub fn eval(&mut self) {
        self.raw_eval();
    }

    /// One clock cycle on port `clock`: low, eval, high, eval. Inputs set
    /// before the call are sampled at its rising edge; outputs read after it
    /// show the state after that edge. Dumps both phases when tracing.
    pub fn tick(&mut self) {
        let clock = self.clock.unwrap_or_else(|| panic!("model {} has no port 'clock'", self.info.name));
        let t = 2 * HALF_PERIOD * self.cycle;
        self.raw_set(clock.0, &[0]);
        self.raw_eval();
        if self.tracing {
            self.raw_dump(t);
        }
        if self.recording.is_some() {
            let row: Vec<Vec<u32>> = (0..self.info.ports.len()).map(|i| self.get_words(PortId(i as u32))).collect();
            self.recording.as_mut().unwrap().cycles.push(row);
        }
        self.raw_set(clock.0, &[1]);
        self.raw_eval();
        if self.tracing {
            self.raw_dump(t + HALF_PERIOD);
        }
        self.cycle += 1;
    }

    pub fn ticks(&mut self, n: u64) {
        for _ in 0..n {
            self.tick();
        }
    }

    /// Drives every other input to 0 and holds `reset` high for `cycles`
    /// cycles, then releases it (still 0 on the other inputs).
    pub fn reset(&mut self, cycles: u32) {
        let reset = self.reset.unwrap_or_else(|| panic!("model {} has no port 'reset'", self.info.name));
        for (i, pi) in self.info.ports.iter().enumerate() {
            let p = PortId(i as u32);
            if pi.dir == Dir::In && Some(p) != self.clock && p != reset {
                self.set_words(p, &vec![0; pi.words()]);
            }
        }
        self.set(reset, 1);
        self.ticks(cycles as u64);
        self.set(reset, 0);
        self.eval();
    }

    /// Starts recording every port at every cycle (from the next `tick`).
    pub fn record(&mut self) {
        self.recording = Some(Recording::default());
    }

    /// The recording so far (recording stops).
    pub fn take_recording(&mut self) -> Option<Recording> {
        self.recording.take()
    }

    /// Clock cycles run so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Starts dumping every `tick` to a VCD file (parent folders are
    /// created). Call it before the first tick to see the whole run.
    pub fn trace_to(&mut self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        if self.tracing {
            return Err(io::Error::other(format!("model {} is already tracing", self.info.name)));
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(io::Error::other)?;
        let code = match (&mut self.inst, &self.info.backend) {
            (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.trace_open)(*i, c.as_ptr()) },
            (Inst::N(n), _) => n.trace_open(path).map(|_| 0).unwrap_or(2),
            _ => unreachable!(),
        };
        match code {
            0 => {
                self.tracing = true;
                Ok(())
            }
            3 => Err(io::Error::other(format!(
                "model {} was built without tracing; use ModelInfo::with_trace",
                self.info.name
            ))),
            _ => Err(io::Error::other(format!("cannot open {} for the VCD trace", path.display()))),
        }
    }

    /// Flushes and closes the VCD file, if tracing.
    pub fn trace_close(&mut self) {
        if self.tracing {
            match (&mut self.inst, &self.info.backend) {
                (Inst::V(i), Backend::Verilated(f)) => unsafe { (f.trace_close)(*i) },
                (Inst::N(n), _) => n.trace_close(),
                _ => unreachable!(),
            }
            self.tracing = false;
        }
    }

    /// Runs the design's `final` blocks (also done on drop).
    pub fn finish(&mut self) {
        if let (Inst::V(i), Backend::Verilated(f)) = (&self.inst, &self.info.backend) {
            unsafe { (f.final_)(*i) }
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.trace_close();
        if let (Inst::V(i), Backend::Verilated(f)) = (&self.inst, &self.info.backend) {
            unsafe { (f.delete)(*i) }
        }
    }
}
