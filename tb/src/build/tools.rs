//! The external tools from Verilog to a loadable model: Yosys (the OSU018
//! netlist `make synth` times, and its simulation form), Verilator and the
//! C++ compiler. Each run takes a job slot; its output goes to a log file
//! in the build folder and is shown only when the step fails.

use super::jobs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The Liberty file of the standard cells: `$KVFORGE_LIBERTY`, else the
/// Debian `qflow-tech-osu018` package's OSU 0.18 um library.
pub fn liberty() -> PathBuf {
    std::env::var_os("KVFORGE_LIBERTY")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/qflow/tech/osu018/osu018_stdcells.lib"))
}

/// Where `make` installs tools it fetches: `$KVFORGE_TOOLS`, else
/// `kvforge/tools` in the user's cache folder.
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("KVFORGE_TOOLS").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    super::store::cache_base().join("kvforge").join("tools")
}

/// The Verilator in use: `$KVFORGE_VERILATOR_ROOT` (a Verilator install
/// tree holding `bin/verilator` and `include/`), else the one `make`
/// installs (the PyPI wheel, whose package folder `<tools>/verilator-root`
/// names), else the `verilator` on PATH.
#[derive(Debug)]
pub struct Verilator {
    pub exe: PathBuf,
    /// VERILATOR_ROOT to set when running it (a relocated install).
    pub root: Option<PathBuf>,
    pub include: PathBuf,
    /// `verilator --version`, part of every model key.
    pub version: String,
}

pub fn verilator() -> Result<&'static Verilator, String> {
    static V: OnceLock<Result<Verilator, String>> = OnceLock::new();
    V.get_or_init(find_verilator).as_ref().map_err(|e| e.clone())
}

fn find_verilator() -> Result<Verilator, String> {
    let root = std::env::var_os("KVFORGE_VERILATOR_ROOT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let p = std::fs::read_to_string(tools_dir().join("verilator-root")).ok()?;
            Some(PathBuf::from(p.trim())).filter(|r| r.join("bin").join("verilator").exists())
        });
    let exe = match &root {
        Some(r) => r.join("bin").join("verilator"),
        None => PathBuf::from("verilator"),
    };
    let mut cmd = Command::new(&exe);
    if let Some(r) = &root {
        cmd.env("VERILATOR_ROOT", r);
    }
    let out = cmd.arg("--version").output().map_err(|e| {
        format!("cannot run {} ({e}); run `make` to install the tools, or see shared/notes/toolchain.md", exe.display())
    })?;
    let version = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string();
    let include = match &root {
        Some(r) => r.join("include"),
        None => {
            let out = Command::new(&exe)
                .args(["--getenv", "VERILATOR_ROOT"])
                .output()
                .map_err(|e| format!("cannot run verilator --getenv ({e})"))?;
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("include")
        }
    };
    if !include.join("verilated.h").exists() {
        return Err(format!("verilated.h not found under {}", include.display()));
    }
    Ok(Verilator { exe, root, include, version })
}

impl Verilator {
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.exe);
        if let Some(r) = &self.root {
            c.env("VERILATOR_ROOT", r);
        }
        c
    }
}

/// First line of `tool flag` (a version string for cache keys).
pub fn version(tool: &str, flag: &str) -> Result<String, String> {
    let out = Command::new(tool)
        .arg(flag)
        .output()
        .map_err(|e| format!("cannot run `{tool} {flag}` ({e}); run `make` to install the tools"))?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string())
}

/// Runs `cmd` in a job slot, logging to `log`.
pub fn run(mut cmd: Command, log: &Path, what: &str) -> Result<(), String> {
    let _slot = jobs::acquire();
    let out = cmd.output().map_err(|e| format!("{what}: cannot start {:?}: {e}", cmd.get_program()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    std::fs::write(log, &text).map_err(|e| format!("{what}: cannot write {}: {e}", log.display()))?;
    if !out.status.success() {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{what} failed ({}); log {}\n{}", out.status, log.display(), tail.join("\n")));
    }
    Ok(())
}

/// The OSU018 netlist of `module`, exactly as `make synth` makes it: the
/// emitted `<module>.yosys.tcl` run in `dir` (which holds `<module>.v` and
/// the script) at clock period `period_ps`. Writes `<module>.osu018.v`.
pub fn synthesize(dir: &Path, module: &str, period_ps: u64) -> Result<PathBuf, String> {
    let mut cmd = Command::new("yosys");
    cmd.current_dir(dir)
        .env("LIBERTY", liberty())
        .env("PERIOD_PS", period_ps.to_string())
        .args(["-q", "-c"])
        .arg(format!("{module}.yosys.tcl"));
    run(cmd, &dir.join("synth.log"), &format!("yosys synthesis of {module} onto OSU018"))?;
    Ok(dir.join(format!("{module}.osu018.v")))
}

/// The Yosys script writing the standard cells as Verilog modules, each
/// with the logic function of its Liberty entry (a flip-flop becomes a plain
/// edge-triggered register with no initial value, so a model starts from
/// random state as silicon does). Verilator reads the OSU018 netlist with
/// these modules: it simulates the very netlist OpenSTA times.
pub fn cell_library_script(lib: &Path, out: &Path) -> String {
    format!("read_liberty -ignore_miss_func {}; write_verilog -noattr {}", lib.display(), out.display())
}

pub fn cell_library(dir: &Path) -> Result<PathBuf, String> {
    let out = dir.join("osu018_cells.v");
    let mut cmd = Command::new("yosys");
    cmd.arg("-q").arg("-p").arg(cell_library_script(&liberty(), &out));
    run(cmd, &dir.join("cells.log"), "yosys cell library from the Liberty file")?;
    Ok(out)
}

/// Verilator arguments that shape the generated C++ (part of the key).
pub fn verilator_args(module: &str, trace: bool) -> Vec<String> {
    let mut a: Vec<&str> = vec![
        "--cc",
        "-O3",
        // The DFG optimiser costs most of the verilation time of the wide
        // engines (367 s of 390 s for a 64-lane dequantizer with 5.049;
        // 64 s without it, and a smaller model) and gave wrong models of
        // some netlists in 5.006. Statement reordering in rust-hdl's large
        // always blocks took most of the rest (88 of 129 s): both are
        // optimisations, off.
        "-fno-dfg",
        "-fno-reorder",
        "--x-assign",
        "unique",
        "--x-initial",
        "unique",
        // Build on warnings; lint runs separately with -Wall (`make lint`).
        "-Wno-fatal",
        // Gate-level models are flat: one function per netlist cone. g++'s
        // RTL combiner is superlinear in function size.
        "--output-split-cfuncs",
        "1000",
        // VCD times in ns; the testbench clock has a 10 ns period.
        "--timescale",
        "1ns/1ns",
        "--prefix",
        "Vtop",
        "--top-module",
        module,
    ];
    if trace {
        a.push("--trace");
    }
    a.iter().map(|s| s.to_string()).collect()
}

/// Verilates `srcs` into `mdir` (read as SystemVerilog: the RTL uses size casts).
pub fn verilate(srcs: &[PathBuf], module: &str, trace: bool, mdir: &Path, log: &Path) -> Result<(), String> {
    let v = verilator()?;
    std::fs::create_dir_all(mdir).map_err(|e| format!("cannot create {}: {e}", mdir.display()))?;
    let mut cmd = v.command();
    cmd.args(verilator_args(module, trace)).arg("-Mdir").arg(mdir).arg("-sv").args(srcs);
    run(cmd, log, &format!("verilator on {}", srcs[0].display()))
}

/// A top-level port as declared in Verilator's model header.
#[derive(Debug, PartialEq, Eq)]
pub struct HeaderPort {
    pub name: String,
    pub dir_in: bool,
    pub width: usize,
}

/// Reads the `VL_IN8(&clock,0,0);`-style declarations of `Vtop.h`.
pub fn header_ports(header: &Path) -> Result<Vec<HeaderPort>, String> {
    let text = std::fs::read_to_string(header).map_err(|e| format!("read {}: {e}", header.display()))?;
    let mut ports = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let (dir_in, rest) = if let Some(r) = t.strip_prefix("VL_IN") {
            (true, r)
        } else if let Some(r) = t.strip_prefix("VL_OUT") {
            (false, r)
        } else {
            continue;
        };
        let (Some(open), Some(close)) = (rest.find("(&"), rest.find(')')) else { continue };
        let fields: Vec<&str> = rest[open + 2..close].split(',').collect();
        let msb: usize = fields[1].trim().parse().map_err(|_| format!("{}: bad port line {t}", header.display()))?;
        let lsb: usize = fields[2].trim().parse().map_err(|_| format!("{}: bad port line {t}", header.display()))?;
        ports.push(HeaderPort { name: fields[0].to_string(), dir_in, width: msb - lsb + 1 });
    }
    Ok(ports)
}
