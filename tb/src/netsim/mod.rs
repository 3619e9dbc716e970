//! A two-state, cycle-based simulator for the OSU018 gate-level netlists
//! that `make synth` produces and OpenSTA times.
//!
//! Verilator takes minutes (and gigabytes) to turn a netlist of a hundred
//! thousand cells into C++ and g++ minutes more to compile it, which made
//! netlist co-simulation the dominant cost of a cold test run. This reads
//! the mapped netlist directly: every combinational cell output becomes a
//! truth table of its Liberty `function` (`liberty.rs`), evaluated in
//! topological order; every flip-flop captures its Liberty `next_state` when
//! its `clocked_on` rises, and every latch follows its `data_in` while its
//! `enable` is 1 (the clock gates of constraints/clock_gate.v: a latch
//! open while the clock is low, whose output gates the clock of the
//! flip-flops behind an AND). Loading a netlist takes about a second.
//!
//! It is a second implementation of the cell library's semantics, so it is
//! checked against two independent simulators: Verilator on the same
//! netlist with Yosys's Verilog of the same Liberty functions, and Icarus
//! with the OSU018 package's own Verilog cell models, four-state
//! (`tb/tests/netlist_sim.rs`).
//!
//! Like the Verilator models, state starts random (registers and inputs,
//! from a seed), so logic that relies on initial values rather than reset
//! shows up.

pub mod liberty;
pub mod verilog;

use liberty::{Cell, Expr};
use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use verilog::{Bit, Netlist};

/// Net numbers 0 and 1 hold the constants.
const ZERO: u32 = 0;
const ONE: u32 = 1;
const MAX_INPUTS: usize = 6;

/// One combinational output: `out = table[inputs]`.
#[derive(Clone, Debug)]
struct Lut {
    ins: [u32; MAX_INPUTS],
    n: u8,
    table: u64,
    out: u32,
}

impl Lut {
    #[inline(always)]
    fn index(&self, v: &[u8]) -> usize {
        let mut k = 0usize;
        for i in 0..self.n as usize {
            k |= (v[self.ins[i] as usize] as usize) << i;
        }
        k
    }
}

/// One flip-flop: state nets, and tables of its next state and clock over
/// the cell's input pins.
#[derive(Clone, Debug)]
struct Dff {
    ins: [u32; MAX_INPUTS],
    n: u8,
    next: u64,
    clk: u64,
    iq: u32,
    iqn: u32,
}

impl Dff {
    fn index(&self, v: &[u8]) -> usize {
        let mut k = 0usize;
        for i in 0..self.n as usize {
            k |= (v[self.ins[i] as usize] as usize) << i;
        }
        k
    }
}

/// A top-level port as the model's manifest lists it.
#[derive(Clone, Debug)]
pub struct PortSpec {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

/// A netlist compiled for simulation.
#[derive(Debug)]
pub struct Program {
    pub module: String,
    nets: usize,
    luts: Vec<Lut>,
    dffs: Vec<Dff>,
    /// Latches: `next` is their data, `clk` their enable.
    latches: Vec<Dff>,
    /// Per manifest port: its nets, LSB first.
    ports: Vec<(PortSpec, Vec<u32>)>,
    /// Named signals for waveforms (ports first), nets LSB first.
    traced: Vec<(String, Vec<u32>)>,
    /// Readers of each net (indices into `luts`), as compressed rows:
    /// the readers of net `n` are `readers[reader_at[n]..reader_at[n + 1]]`.
    reader_at: Vec<u32>,
    readers: Vec<u32>,
    pub cells: usize,
}

/// Truth table of `e` over `vars` (bit `k` of the index is `vars[k]`).
fn table(e: &Expr, vars: &[String]) -> Result<u64, String> {
    if vars.len() > MAX_INPUTS {
        return Err(format!("a function of {} inputs (at most {MAX_INPUTS})", vars.len()));
    }
    let mut t = 0u64;
    for k in 0..1usize << vars.len() {
        let val = |v: &str| vars.iter().position(|x| x == v).map(|i| k >> i & 1 == 1).unwrap_or(false);
        if e.eval(&val) {
            t |= 1 << k;
        }
    }
    Ok(t)
}

impl Program {
    /// Compiles `netlist` with the cells of `cells`, exposing `ports`.
    pub fn compile(nl: &Netlist, cells: &HashMap<String, Cell>, ports: &[PortSpec]) -> Result<Program, String> {
        // net numbering: 0 and 1 constants, then the netlist's, then flop state
        let base = 2u32;
        let mut nets = base as usize + nl.nets as usize;
        let net = |b: Bit| -> u32 {
            match b {
                Bit::Const(false) => ZERO,
                Bit::Const(true) => ONE,
                Bit::Net(n) => n + base,
            }
        };
        let mut luts = Vec::new();
        let mut dffs = Vec::new();
        let mut latches = Vec::new();
        let mut used: HashMap<&str, usize> = HashMap::new();
        for inst in &nl.instances {
            let cell = cells.get(&inst.cell).ok_or_else(|| format!("netlist: unknown cell {} ({})", inst.cell, inst.name))?;
            if let Some(u) = &cell.unsupported {
                return Err(format!("netlist: cell {} ({}) is not supported: {u}", inst.cell, inst.name));
            }
            *used.entry(inst.cell.as_str()).or_default() += 1;
            let pin = |p: &str| -> Option<u32> { inst.pins.iter().find(|(n, _)| n == p).map(|(_, b)| net(*b)) };
            // internal state of a flip-flop: two fresh nets
            let mut state: Vec<(String, u32)> = Vec::new();
            if let Some(ff) = &cell.ff {
                let (iq, iqn) = (nets as u32, nets as u32 + 1);
                nets += 2;
                let mut vars = Vec::new();
                ff.next_state.vars(&mut vars);
                ff.clocked_on.vars(&mut vars);
                let mut ins = [ZERO; MAX_INPUTS];
                for (i, v) in vars.iter().enumerate().take(MAX_INPUTS) {
                    ins[i] = pin(v).ok_or_else(|| format!("netlist: {} pin {v} is not connected", inst.name))?;
                }
                let d = Dff {
                    ins,
                    n: vars.len() as u8,
                    next: table(&ff.next_state, &vars)?,
                    clk: table(&ff.clocked_on, &vars)?,
                    iq,
                    iqn,
                };
                if ff.latch { latches.push(d) } else { dffs.push(d) }
                state.push((ff.iq.clone(), iq));
                state.push((ff.iqn.clone(), iqn));
            }
            for (out, f) in &cell.outputs {
                let Some(o) = pin(out) else { continue }; // unconnected output
                let mut vars = Vec::new();
                f.vars(&mut vars);
                let mut ins = [ZERO; MAX_INPUTS];
                for (i, v) in vars.iter().enumerate().take(MAX_INPUTS) {
                    ins[i] = match state.iter().find(|(s, _)| s == v) {
                        Some((_, n)) => *n,
                        None => pin(v).ok_or_else(|| format!("netlist: {} pin {v} is not connected", inst.name))?,
                    };
                }
                luts.push(Lut { ins, n: vars.len() as u8, table: table(f, &vars)?, out: o });
            }
        }
        for &(l, r) in &nl.assigns {
            luts.push(Lut { ins: [net(r), 0, 0, 0, 0, 0], n: 1, table: 0b10, out: net(Bit::Net(l)) });
        }

        // drivers: each net at most one; every net read must be driven
        #[derive(Clone, Copy, PartialEq)]
        enum Drv {
            None,
            Input,
            State,
            Lut(usize),
        }
        let mut drv = vec![Drv::None; nets];
        drv[ZERO as usize] = Drv::Input;
        drv[ONE as usize] = Drv::Input;
        for f in dffs.iter().chain(&latches) {
            drv[f.iq as usize] = Drv::State;
            drv[f.iqn as usize] = Drv::State;
        }
        let mut port_nets = Vec::new();
        for p in ports {
            let s = nl.signals.get(&p.name).ok_or_else(|| format!("netlist: no port {}", p.name))?;
            if s.nets.len() != p.width || (p.input && !s.input) || (!p.input && !s.output) {
                return Err(format!("netlist: port {} differs from the manifest's", p.name));
            }
            let ns: Vec<u32> = s.nets.iter().map(|&n| n + base).collect();
            if p.input {
                for &n in &ns {
                    drv[n as usize] = Drv::Input;
                }
            }
            port_nets.push((p.clone(), ns));
        }
        for (i, l) in luts.iter().enumerate() {
            if drv[l.out as usize] != Drv::None {
                return Err(format!("netlist: net {} has more than one driver", l.out));
            }
            drv[l.out as usize] = Drv::Lut(i);
        }
        let name_of = |n: u32| -> String {
            for (name, s) in &nl.signals {
                if let Some(k) = s.nets.iter().position(|&x| x + base == n) {
                    return format!("{name}[{k}]");
                }
            }
            format!("net {n}")
        };
        for l in &luts {
            for &i in &l.ins[..l.n as usize] {
                if drv[i as usize] == Drv::None {
                    return Err(format!("netlist: {} is read but never driven", name_of(i)));
                }
            }
        }
        for f in dffs.iter().chain(&latches) {
            for &i in &f.ins[..f.n as usize] {
                if drv[i as usize] == Drv::None {
                    return Err(format!("netlist: {} is read but never driven", name_of(i)));
                }
            }
        }
        for (p, ns) in &port_nets {
            if !p.input && ns.iter().any(|&n| drv[n as usize] == Drv::None) {
                return Err(format!("netlist: output {} is not driven", p.name));
            }
        }

        // topological order of the luts (Kahn)
        let mut indeg = vec![0u32; luts.len()];
        let mut readers: Vec<Vec<u32>> = vec![Vec::new(); nets];
        for (i, l) in luts.iter().enumerate() {
            for &x in &l.ins[..l.n as usize] {
                if let Drv::Lut(_) = drv[x as usize] {
                    indeg[i] += 1;
                }
                readers[x as usize].push(i as u32);
            }
        }
        let mut order: Vec<usize> = (0..luts.len()).filter(|&i| indeg[i] == 0).collect();
        let mut k = 0;
        while k < order.len() {
            let i = order[k];
            k += 1;
            for &r in &readers[luts[i].out as usize] {
                indeg[r as usize] -= 1;
                if indeg[r as usize] == 0 {
                    order.push(r as usize);
                }
            }
        }
        if order.len() != luts.len() {
            let stuck = (0..luts.len()).find(|&i| indeg[i] > 0).unwrap();
            return Err(format!("netlist: a combinational loop through {}", name_of(luts[stuck].out)));
        }
        let luts: Vec<Lut> = order.into_iter().map(|i| luts[i].clone()).collect();
        // readers in topological order: a reader always comes after its driver
        let mut count = vec![0u32; nets + 1];
        for l in &luts {
            for &x in &l.ins[..l.n as usize] {
                count[x as usize + 1] += 1;
            }
        }
        for n in 0..nets {
            count[n + 1] += count[n];
        }
        let reader_at = count.clone();
        let mut fill = count;
        let mut readers = vec![0u32; *reader_at.last().unwrap() as usize];
        for (i, l) in luts.iter().enumerate() {
            for &x in &l.ins[..l.n as usize] {
                readers[fill[x as usize] as usize] = i as u32;
                fill[x as usize] += 1;
            }
        }

        let mut traced: Vec<(String, Vec<u32>)> =
            port_nets.iter().map(|(p, ns)| (p.name.clone(), ns.clone())).collect();
        for name in &nl.order {
            if name.starts_with('_') || ports.iter().any(|p| &p.name == name) {
                continue;
            }
            traced.push((name.clone(), nl.signals[name].nets.iter().map(|&n| n + base).collect()));
        }
        Ok(Program {
            module: nl.module.clone(),
            nets,
            luts,
            dffs,
            latches,
            ports: port_nets,
            traced,
            reader_at,
            readers,
            cells: nl.instances.len(),
        })
    }

    /// Reads and compiles the netlist in `path` with the Liberty cells of
    /// `liberty`.
    pub fn load(path: &Path, liberty: &Path, ports: &[PortSpec]) -> Result<Program, String> {
        let lib = std::fs::read_to_string(liberty).map_err(|e| format!("{}: {e}", liberty.display()))?;
        let cells = liberty::parse(&lib)?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let nl = verilog::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Program::compile(&nl, &cells, ports).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn flops(&self) -> usize {
        self.dffs.len()
    }
}

/// One running instance of a netlist.
pub struct NetSim {
    prog: Arc<Program>,
    v: Vec<u8>,
    clk_prev: Vec<u8>,
    fire: Vec<u32>,
    /// Gates to evaluate (bit per gate, in topological order): only the
    /// readers of nets that changed since they were last evaluated.
    dirty: Vec<u64>,
    any_dirty: bool,
    vcd: Option<Vcd>,
    activity: Activity,
}

/// Switching activity since the instance was made or last cleared: the
/// energy proxy of `make bench` (dynamic power follows the nets that
/// toggle; a flip-flop's clock pin toggles every cycle and is not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    /// Flip-flop outputs that changed at a clock edge.
    pub flop_toggles: u64,
    /// Gate outputs that changed while settling (each settled value
    /// counts once, glitches inside one settle are not seen).
    pub gate_toggles: u64,
}

struct Vcd {
    out: std::io::BufWriter<std::fs::File>,
    last: Vec<Vec<u8>>,
    ids: Vec<String>,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

impl NetSim {
    /// An instance with random flip-flop states and inputs (from `seed`).
    pub fn new(prog: Arc<Program>, seed: u32) -> NetSim {
        let mut v = vec![0u8; prog.nets];
        v[ONE as usize] = 1;
        let mut r = (seed as u64) << 1 | 0x9e37_79b9_7f4a_7c15;
        for f in prog.dffs.iter().chain(&prog.latches) {
            let b = (xorshift(&mut r) >> 17 & 1) as u8;
            v[f.iq as usize] = b;
            v[f.iqn as usize] = b ^ 1;
        }
        for (p, ns) in &prog.ports {
            if p.input {
                for &n in ns {
                    v[n as usize] = (xorshift(&mut r) >> 17 & 1) as u8;
                }
            }
        }
        let n = prog.dffs.len();
        let g = prog.luts.len();
        let mut dirty = vec![u64::MAX; g.div_ceil(64)];
        if g % 64 != 0 {
            *dirty.last_mut().unwrap() = (1u64 << (g % 64)) - 1;
        }
        let mut s = NetSim {
            prog,
            v,
            clk_prev: vec![0; n],
            fire: Vec::new(),
            dirty,
            any_dirty: true,
            vcd: None,
            activity: Activity::default(),
        };
        s.settle();
        for (k, f) in s.prog.dffs.iter().enumerate() {
            s.clk_prev[k] = (f.clk >> f.index(&s.v) & 1) as u8;
        }
        s
    }

    /// Marks the readers of net `n` for evaluation.
    #[inline]
    fn touch(dirty: &mut [u64], prog: &Program, n: u32) {
        let (a, b) = (prog.reader_at[n as usize] as usize, prog.reader_at[n as usize + 1] as usize);
        for &r in &prog.readers[a..b] {
            dirty[r as usize / 64] |= 1 << (r % 64);
        }
    }

    /// Sets net `n`, marking its readers if it changed.
    #[inline]
    fn put(&mut self, n: u32, b: u8) {
        if self.v[n as usize] != b {
            self.v[n as usize] = b;
            Self::touch(&mut self.dirty, &self.prog, n);
            self.any_dirty = true;
        }
    }

    /// Evaluates the marked gates in topological order; a gate whose
    /// output changes marks its readers, which all come later.
    fn settle(&mut self) {
        if !self.any_dirty {
            return;
        }
        self.any_dirty = false;
        let prog = &*self.prog;
        let (v, dirty) = (&mut self.v, &mut self.dirty);
        let mut toggles = 0u64;
        let mut w = 0;
        while w < dirty.len() {
            let bits = dirty[w];
            if bits == 0 {
                w += 1;
                continue;
            }
            let i = w * 64 + bits.trailing_zeros() as usize;
            dirty[w] &= bits - 1;
            let l = &prog.luts[i];
            let o = (l.table >> l.index(v) & 1) as u8;
            if v[l.out as usize] != o {
                v[l.out as usize] = o;
                toggles += 1;
                Self::touch(dirty, prog, l.out);
            }
        }
        self.activity.gate_toggles += toggles;
    }

    /// Settles the logic, with every open latch following its data until
    /// none changes; then every flip-flop whose clock rose since the last
    /// call takes its next state (all at once), and it all settles again.
    pub fn eval(&mut self) {
        self.settle();
        loop {
            let prog = self.prog.clone();
            let mut passes = 0;
            loop {
                let mut changed = false;
                for l in &prog.latches {
                    let idx = l.index(&self.v);
                    if l.clk >> idx & 1 == 1 {
                        let q = (l.next >> idx & 1) as u8;
                        if self.v[l.iq as usize] != q {
                            self.put(l.iq, q);
                            self.put(l.iqn, q ^ 1);
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
                self.settle();
                passes += 1;
                assert!(passes < 1000, "netsim {}: the latches do not settle (a loop through open latches)", prog.module);
            }
            self.fire.clear();
            for (k, f) in prog.dffs.iter().enumerate() {
                let idx = f.index(&self.v);
                let clk = (f.clk >> idx & 1) as u8;
                if clk == 1 && self.clk_prev[k] == 0 {
                    self.fire.push(k as u32 | ((f.next >> idx & 1) as u32) << 31);
                }
                self.clk_prev[k] = clk;
            }
            if self.fire.is_empty() {
                return;
            }
            for k in 0..self.fire.len() {
                let e = self.fire[k];
                let f = &prog.dffs[(e & 0x7fff_ffff) as usize];
                let q = (e >> 31) as u8;
                self.activity.flop_toggles += (self.v[f.iq as usize] != q) as u64;
                self.put(f.iq, q);
                self.put(f.iqn, q ^ 1);
            }
            self.settle();
        }
    }

    pub fn activity(&self) -> Activity {
        self.activity
    }

    pub fn clear_activity(&mut self) {
        self.activity = Activity::default();
    }

    /// Every flip-flop's output, in netlist order.
    pub fn flop_bits(&self) -> Vec<u8> {
        self.prog.dffs.iter().map(|f| self.v[f.iq as usize]).collect()
    }

    /// Drives input port `port` (manifest index) from little-endian words.
    pub fn set(&mut self, port: usize, words: &[u32]) {
        let prog = self.prog.clone();
        let (p, ns) = &prog.ports[port];
        if !p.input {
            return;
        }
        for (i, &n) in ns.iter().enumerate() {
            self.put(n, (words[i / 32] >> (i % 32) & 1) as u8);
        }
    }

    pub fn get(&self, port: usize, words: &mut [u32]) {
        let (_, ns) = &self.prog.ports[port];
        for w in words.iter_mut() {
            *w = 0;
        }
        for (i, &n) in ns.iter().enumerate() {
            words[i / 32] |= (self.v[n as usize] as u32) << (i % 32);
        }
    }

    /// Starts a VCD of the ports and the netlist's named signals.
    pub fn trace_open(&mut self, path: &Path) -> std::io::Result<()> {
        let f = std::fs::File::create(path)?;
        let mut out = std::io::BufWriter::new(f);
        writeln!(out, "$timescale 1ns $end\n$scope module {} $end", self.prog.module)?;
        let mut ids = Vec::new();
        for (k, (name, ns)) in self.prog.traced.iter().enumerate() {
            // VCD identifier codes: printable characters 33..126
            let mut id = String::new();
            let mut x = k;
            loop {
                id.push((33 + x % 94) as u8 as char);
                x /= 94;
                if x == 0 {
                    break;
                }
            }
            let clean: String = name.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
            writeln!(out, "$var wire {} {id} {clean} $end", ns.len())?;
            ids.push(id);
        }
        writeln!(out, "$upscope $end\n$enddefinitions $end")?;
        self.vcd = Some(Vcd { out, last: vec![Vec::new(); ids.len()], ids });
        Ok(())
    }

    /// Records every traced signal that changed, at `time`.
    pub fn trace_dump(&mut self, time: u64) {
        let Some(vcd) = self.vcd.as_mut() else { return };
        let mut head = false;
        for (k, (_, ns)) in self.prog.traced.iter().enumerate() {
            let bits: Vec<u8> = ns.iter().map(|&n| self.v[n as usize]).collect();
            if vcd.last[k] == bits {
                continue;
            }
            if !head {
                let _ = writeln!(vcd.out, "#{time}");
                head = true;
            }
            if bits.len() == 1 {
                let _ = writeln!(vcd.out, "{}{}", bits[0], vcd.ids[k]);
            } else {
                let s: String = bits.iter().rev().map(|&b| (b'0' + b) as char).collect();
                let _ = writeln!(vcd.out, "b{s} {}", vcd.ids[k]);
            }
            vcd.last[k] = bits;
        }
    }

    pub fn trace_close(&mut self) {
        if let Some(mut v) = self.vcd.take() {
            let _ = v.out.flush();
        }
    }
}
