//! Replays a `Recording` under Icarus Verilog: a third simulator, written
//! by other people, checks Verilator and `netsim` on the very stimulus they
//! ran, and, being four-state, shows any output bit that is X or Z after
//! reset (spec: the engines never produce X after reset), which neither of
//! the two-state simulators can.
//!
//! Netlists run on the OSU018 cells' own Verilog models (Qflow's, with UDP
//! flip-flops that start at X), not on Yosys's Verilog of the Liberty
//! functions that Verilator and `netsim` use, so the cell library is
//! checked too. They run at zero delay, which is the recording's cycle
//! semantics: no `-gspecify`, so no path delays and no timing checks (whose
//! notifier would inject X). The file has no `ifdef`, so `-DFUNCTIONAL`
//! means nothing to it; `-Ttyp` only silences its min:typ:max warnings.
//! Gated clocks reach their flip-flops a delta after the clock, so the
//! flip-flop's output is moved to a non-blocking update (`nba_flip_flop`),
//! the only change made to the package's models.
//!
//! The replay folder is kept for reading and rerunning (`iverilog.log`
//! starts with the command; then `vvp -n replay.vvp`). `vectors.hex` has a
//! line per recorded cycle: every port but `clock`, in manifest order, as
//! `_`-separated hex fields of `ceil(width/4)` digits, so a line reads
//! against the port list in its header. `replay.v` applies a line's inputs,
//! lets them settle, checks the outputs against the same line, then gives
//! the rising edge (the recording's order), and prints `mismatch` and `xz`
//! lines for the first few failures, an `at` line every few cycles (a
//! replay that stops printing them is killed: Icarus can spin forever at
//! one time step where two always blocks keep re-waking each other), and a
//! `done` line with the counts. Its own names start with `kvf_`, clear of
//! the ports'.

use crate::info::{Dir, ModelInfo, PortInfo};
use crate::model::Recording;
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Failures of each kind the testbench prints (all are counted).
pub const SHOW: usize = 8;

/// The testbench prints `at <cycle>` every `PROGRESS` cycles; a replay
/// that prints nothing for `STALL_LIMIT` is killed. The slowest replays
/// (engine netlists) run about 100 cycles/s, so a 64-cycle line comes well
/// within the limit, and loading the largest netlist takes seconds.
const PROGRESS: usize = 64;
const STALL_LIMIT: Duration = Duration::from_secs(120);

/// One output port at one cycle that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub cycle: u64,
    pub port: &'static str,
    /// Recorded value, hex.
    pub expected: String,
    /// Icarus's value, hex (`x`/`X`, `z`/`Z` digits for unknown bits).
    pub got: String,
}

/// The outcome of one replay.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Cycles simulated (the whole recording).
    pub cycles: u64,
    /// First cycle compared: the one after the first cycle with `reset` high.
    pub from: u64,
    /// Cycles whose outputs were compared.
    pub compared: u64,
    /// Output values (port-cycles) that differ from the recording, all
    /// bits known.
    pub mismatches: u64,
    /// Output values with an X or Z bit.
    pub xz: u64,
    /// The first `SHOW` of each kind.
    pub first_mismatches: Vec<Failure>,
    pub first_xz: Vec<Failure>,
    /// `iverilog`, the whole `vvp` run, and its cycle loop alone (without
    /// loading the design and the vectors).
    pub compile_secs: f64,
    pub run_secs: f64,
    pub sim_secs: f64,
    pub dir: PathBuf,
}

impl Replay {
    pub fn ok(&self) -> bool {
        self.mismatches == 0 && self.xz == 0
    }

    /// Icarus speed over the cycle loop.
    pub fn cycles_per_sec(&self) -> f64 {
        self.cycles as f64 / self.sim_secs.max(1e-9)
    }
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cycles ({} compared from cycle {}): {} mismatches, {} X/Z; iverilog {:.2} s, vvp {:.2} s ({:.0} cycles/s)",
            self.cycles,
            self.compared,
            self.from,
            self.mismatches,
            self.xz,
            self.compile_secs,
            self.run_secs,
            self.cycles_per_sec()
        )?;
        for (kind, list) in [("mismatch", &self.first_mismatches), ("X/Z", &self.first_xz)] {
            for m in list {
                write!(f, "\n  {kind} at cycle {} on {}: expected {}, got {}", m.cycle, m.port, m.expected, m.got)?;
            }
        }
        write!(f, "\n  files: {}", self.dir.display())
    }
}

/// The Verilog models of the standard cells: next to the Liberty file
/// (`crate::build::tools::liberty`), same name, `.v` (for the default
/// library, Qflow's `osu018_stdcells.v`).
pub fn cell_models() -> PathBuf {
    crate::build::tools::liberty().with_extension("v")
}

/// The one change to the package's cells: DFFPOSX1's output follows its
/// UDP's state through a non-blocking assignment. At zero delay a gated
/// clock (constraints/clock_gate.v: the AND of the clock and a latch)
/// rises a delta after the clock, and the package's flip-flop, whose UDP
/// output changes in the same (active) region, would already show the
/// new state of the ungated flip-flops to the gated ones; with the update
/// in the NBA region every flip-flop samples the values from before the
/// edge, as the hardware does. The UDP, and so the four-state behaviour,
/// is the package's own.
fn nba_flip_flop(cells: &str) -> Result<String, String> {
    const OLD: &str = "buf (Q, DS0000);";
    let start = cells.find("module DFFPOSX1").ok_or("cell models: no module DFFPOSX1")?;
    let end = start + cells[start..].find("endmodule").ok_or("cell models: DFFPOSX1 has no endmodule")?;
    let at = start + cells[start..end].find(OLD).ok_or("cell models: DFFPOSX1 without `buf (Q, DS0000);`")?;
    Ok(format!(
        "{}reg kvf_q; always @(DS0000) kvf_q <= DS0000; assign Q = kvf_q;{}",
        &cells[..at],
        &cells[at + OLD.len()..]
    ))
}

/// The cell models without their `specify` blocks: Icarus ignores them
/// without `-gspecify` but still elaborates every specparam of every cell
/// instance, which makes the compiled engine netlists 60% bigger and
/// slower to load.
fn without_specify(cells: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in cells.lines() {
        let t = line.trim_start();
        if t.starts_with("specify") {
            inside = true;
        }
        if !inside {
            out += line;
            out.push('\n');
        }
        if t.starts_with("endspecify") {
            inside = false;
        }
    }
    out
}

/// A port's field in the vectors: `digits` hex digits, bits `[lo + width - 1 : lo]`
/// of a vector line.
struct Field {
    port: usize,
    info: &'static PortInfo,
    digits: usize,
    lo: usize,
}

fn hex(words: &[u32], digits: usize) -> String {
    let s: String = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    s[s.len() - digits..].to_string()
}

/// Writes the testbench and vectors of `rec` (a recording of a model of
/// `info`, or of any model with the same ports) into `dir`, runs them under
/// Icarus and compares every output at every cycle after the first reset
/// cycle. Err: the recording does not fit the ports or has no reset cycle,
/// or Icarus failed to compile or run (its log is quoted).
pub fn replay(info: &ModelInfo, rec: &Recording, dir: &Path) -> Result<Replay, String> {
    let clock = info.port_index("clock");
    let reset = info.port_index("reset").ok_or_else(|| format!("{}: no port 'reset'", info.name))?;
    for (c, row) in rec.cycles.iter().enumerate() {
        if row.len() != info.ports.len() || row.iter().zip(info.ports).any(|(w, p)| w.len() != p.words()) {
            return Err(format!("{}: recorded cycle {c} does not match the model's ports", info.name));
        }
    }
    let first_reset = rec
        .cycles
        .iter()
        .position(|row| row[reset][0] & 1 == 1)
        .ok_or_else(|| format!("{}: the recording has no cycle with reset high (record before resetting)", info.name))?;
    let from = first_reset + 1;

    // fields, first port leftmost
    let mut fields: Vec<Field> = info
        .ports
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != clock)
        .map(|(port, p)| Field { port, info: p, digits: p.width.div_ceil(4), lo: 0 })
        .collect();
    let mut lo = 0;
    for f in fields.iter_mut().rev() {
        f.lo = lo;
        lo += 4 * f.digits;
    }
    let width = lo;

    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;

    let mut vec = String::new();
    let names: Vec<&str> = fields.iter().map(|f| f.info.name).collect();
    vec += &format!("// {}: one line per cycle, fields: {}\n", info.name, names.join(" "));
    for row in &rec.cycles {
        let line: Vec<String> = fields.iter().map(|f| hex(&row[f.port], f.digits)).collect();
        vec += &line.join("_");
        vec.push('\n');
    }
    write(&dir.join("vectors.hex"), &vec)?;
    write(&dir.join("replay.v"), &testbench(info, &fields, width, rec.cycles.len(), from))?;

    // compile
    let mut sources: Vec<PathBuf> = vec![PathBuf::from("replay.v")];
    match (info.gate_level, info.netlist) {
        (true, Some(net)) => {
            let cells = cell_models();
            if !cells.exists() {
                return Err(format!(
                    "no Verilog models of the cells at {} (Debian package qflow-tech-osu018)",
                    cells.display()
                ));
            }
            let text = std::fs::read_to_string(&cells).map_err(|e| format!("cannot read {}: {e}", cells.display()))?;
            write(&dir.join("cells.v"), &nba_flip_flop(&without_specify(&text))?)?;
            sources.push(PathBuf::from(net));
            sources.push(PathBuf::from("cells.v"));
        }
        _ => sources.push(PathBuf::from(info.source)),
    }
    let start = Instant::now();
    let out = Command::new("iverilog")
        .args(["-g2012", "-Ttyp", "-s", "kvf_replay", "-o", "replay.vvp"])
        .args(&sources)
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cannot run iverilog ({e}); install Icarus Verilog (Debian package iverilog)"))?;
    let compile_secs = start.elapsed().as_secs_f64();
    let cmd: Vec<String> = sources.iter().map(|s| s.display().to_string()).collect();
    let log = format!(
        "$ iverilog -g2012 -Ttyp -s kvf_replay -o replay.vvp {}\n{}{}",
        cmd.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    write(&dir.join("iverilog.log"), &log)?;
    // iverilog only warns when a port's width differs from the manifest's
    if !out.status.success() || log.contains("warning: Port") {
        return Err(format!("{}: iverilog failed in {}:\n{}", info.name, dir.display(), tail(&log)));
    }

    // run, timing the cycle loop from the testbench's `start` line
    let start = Instant::now();
    let stderr = std::fs::File::create(dir.join("vvp.stderr")).map_err(|e| e.to_string())?;
    let mut child = Command::new("vvp")
        .args(["-n", "replay.vvp"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot run vvp ({e})"))?;
    // lines come through a thread, so that a replay that stops making
    // progress (a zero-delay loop: time never advances) is killed, not waited on
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = String::new();
    let (mut loop_start, mut done, mut at) = (None, None, None::<String>);
    loop {
        let line = match rx.recv_timeout(STALL_LIMIT) {
            Ok(line) => line.map_err(|e| e.to_string())?,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                write(&dir.join("vvp.log"), &log)?;
                let at = at.map_or_else(|| "before the first cycle".to_string(), |c| format!("after cycle {c}"));
                return Err(format!(
                    "{}: vvp made no progress for {} s ({at}; a zero-delay loop between always blocks?) and was killed, in {}",
                    info.name,
                    STALL_LIMIT.as_secs(),
                    dir.display()
                ));
            }
        };
        if line == "start" {
            loop_start = Some(Instant::now());
        } else if line.starts_with("done ") {
            done = Some(Instant::now());
        } else if let Some(c) = line.strip_prefix("at ") {
            at = Some(c.to_string());
            continue;
        }
        log += &line;
        log.push('\n');
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let run_secs = start.elapsed().as_secs_f64();
    write(&dir.join("vvp.log"), &log)?;
    let (Some(a), Some(b), true) = (loop_start, done, status.success()) else {
        let err = std::fs::read_to_string(dir.join("vvp.stderr")).unwrap_or_default();
        return Err(format!("{}: vvp did not finish ({status}) in {}:\n{}{}", info.name, dir.display(), tail(&log), tail(&err)));
    };
    let mut r = Replay {
        cycles: rec.cycles.len() as u64,
        from: from as u64,
        compile_secs,
        run_secs,
        sim_secs: (b - a).as_secs_f64(),
        dir: dir.clone(),
        ..Default::default()
    };
    for line in log.lines() {
        let bad = || format!("{}: unexpected vvp output '{line}' in {}", info.name, dir.display());
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let failure = |c: &str, p: &str, want: &str, got: &str| -> Result<Failure, String> {
            let f = p.parse::<usize>().ok().and_then(|i| fields.iter().find(|f| f.port == i)).ok_or_else(bad)?;
            Ok(Failure { cycle: num(c)?, port: f.info.name, expected: trim(want, f.digits), got: trim(got, f.digits) })
        };
        match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["mismatch", c, p, want, got] => r.first_mismatches.push(failure(c, p, want, got)?),
            ["xz", c, p, want, got] => r.first_xz.push(failure(c, p, want, got)?),
            ["done", c, m, x] => (r.compared, r.mismatches, r.xz) = (num(c)?, num(m)?, num(x)?),
            _ => {}
        }
    }
    Ok(r)
}

/// The last `digits` hex digits of a value the testbench printed at the
/// widest port's width.
fn trim(s: &str, digits: usize) -> String {
    s[s.len().saturating_sub(digits)..].to_string()
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n") + "\n"
}

fn range(width: usize) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

fn testbench(info: &ModelInfo, fields: &[Field], width: usize, cycles: usize, from: usize) -> String {
    let wmax = fields.iter().map(|f| f.info.width).max().unwrap_or(1);
    let slice = |f: &Field| format!("kvf_v[{}:{}]", f.lo + f.info.width - 1, f.lo);
    let mut decl = String::new();
    let mut conn = vec![".clock(clock)".to_string()];
    let mut apply = String::new();
    let mut check = String::new();
    for f in fields {
        let (name, w) = (f.info.name, f.info.width);
        conn.push(format!(".{name}({name})"));
        match f.info.dir {
            Dir::In => {
                decl += &format!("  reg {}{name};\n", range(w));
                apply += &format!("      {name} = {};\n", slice(f));
            }
            Dir::Out => {
                decl += &format!("  wire {}{name};\n", range(w));
                check += &format!("        kvf_check({}, {name}, {});\n", f.port, slice(f));
            }
        }
    }
    format!(
        "// Replay of {name} ({sim}) by tb::icarus: {cycles} recorded cycles from vectors.hex,\n\
         // outputs checked from cycle {from} on (the cycle after the first with reset high).\n\
         `timescale 1ns/1ps\n\
         module kvf_replay;\n\
         \x20 localparam KVF_CYCLES = {cycles}, KVF_FROM = {from}, KVF_SHOW = {SHOW};\n\
         \x20 reg [{wv}:0] kvf_vec [0:KVF_CYCLES-1];\n\
         \x20 reg [{wv}:0] kvf_v;\n\
         \x20 reg clock = 0;\n\
         {decl}\
         \x20 integer kvf_c, kvf_compared = 0, kvf_mismatches = 0, kvf_xz = 0;\n\
         \n\
         \x20 {module} kvf_dut({conn});\n\
         \n\
         \x20 // Prints failures as `<kind> <cycle> <port index> <expected> <got>`.\n\
         \x20 task kvf_check(input integer port, input [{wm}:0] got, input [{wm}:0] want);\n\
         \x20   if (^got === 1'bx) begin\n\
         \x20     kvf_xz = kvf_xz + 1;\n\
         \x20     if (kvf_xz <= KVF_SHOW) $display(\"xz %0d %0d %h %h\", kvf_c, port, want, got);\n\
         \x20   end else if (got !== want) begin\n\
         \x20     kvf_mismatches = kvf_mismatches + 1;\n\
         \x20     if (kvf_mismatches <= KVF_SHOW) $display(\"mismatch %0d %0d %h %h\", kvf_c, port, want, got);\n\
         \x20   end\n\
         \x20 endtask\n\
         \n\
         \x20 initial begin\n\
         \x20   $readmemh(\"vectors.hex\", kvf_vec);\n\
         \x20   $display(\"start\");\n\
         \x20   $fflush;\n\
         \x20   for (kvf_c = 0; kvf_c < KVF_CYCLES; kvf_c = kvf_c + 1) begin\n\
         \x20     if (kvf_c % {PROGRESS} == 0) begin\n\
         \x20       $display(\"at %0d\", kvf_c);\n\
         \x20       $fflush;\n\
         \x20     end\n\
         \x20     kvf_v = kvf_vec[kvf_c];\n\
         {apply}\
         \x20     #1;\n\
         \x20     if (kvf_c >= KVF_FROM) begin\n\
         \x20       kvf_compared = kvf_compared + 1;\n\
         {check}\
         \x20     end\n\
         \x20     clock = 1;\n\
         \x20     #1 clock = 0;\n\
         \x20     #1;\n\
         \x20   end\n\
         \x20   $display(\"done %0d %0d %0d\", kvf_compared, kvf_mismatches, kvf_xz);\n\
         \x20   $fflush;\n\
         \x20   $finish;\n\
         \x20 end\n\
         endmodule\n",
        name = info.name,
        sim = info.simulator,
        wv = width - 1,
        wm = wmax - 1,
        module = info.module,
        conn = conn.join(", "),
    )
}
