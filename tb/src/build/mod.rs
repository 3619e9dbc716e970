//! Verilator models built on demand and kept in a content-addressed cache
//! outside the clone (`store`), shared by every checkout, test binary and
//! process on the machine.
//!
//! A model is one rtl-gen unit with fixed parameters, at one of two levels:
//! its RTL, or the OSU018 netlist that `make synth` produces and OpenSTA
//! times (the emitted Yosys script at the same clock), turned into plain
//! Verilog with each cell's Liberty function. Either may be built with VCD
//! tracing; the tests build without it and rebuild a model with it only to
//! record a failing case.
//!
//! A model's key is the SHA-256 of the exact Verilog it is built from, the
//! versions of Verilator, Yosys and the C++ compiler, the Liberty file's
//! content, and every flag and script involved. Changing one unit's Verilog
//! therefore rebuilds exactly that unit's models, and a second checkout of
//! the same hardware rebuilds nothing. The generated Verilog itself is
//! cached too (`emit`), keyed by the generator's sources, so that a run with
//! no hardware change does not even elaborate.

pub mod cxx;
pub mod emit;
pub mod jobs;
pub mod memo;
pub mod shim;
pub mod store;
pub mod tools;

pub use emit::Source;
pub use store::{Outcome, Store};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which view of a unit a model simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Level {
    /// The emitted RTL.
    Rtl,
    /// The OSU018 netlist of `make synth`, with Liberty cell functions.
    Netlist,
}

/// One model to build.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub source: &'a Source,
    pub level: Level,
    pub trace: bool,
    /// g++ -O levels for per-cycle and run-once code.
    pub opt: String,
    pub slow_opt: String,
    /// Synthesis clock period for netlists (the `make synth` default).
    pub period_ps: u64,
}

/// What the cache holds for a model, besides the shared object.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BuildInfo {
    pub key: String,
    pub unit: String,
    pub module: String,
    pub level: Level,
    pub trace: bool,
    /// The unit's Verilog Verilator read: the RTL (a copy in the entry
    /// folder), or the OSU018 netlist in its own cache entry (read with
    /// that entry's `osu018_cells.v`).
    pub sim_source: String,
    /// The netlist entry's key, for netlist models.
    pub netlist: Option<String>,
    /// Seconds spent per step when it was built.
    pub seconds: Vec<(String, f64)>,
    /// Per C++ file: seconds, -O level, bytes, file.
    pub compile: Vec<String>,
}

/// A model in the cache.
#[derive(Clone, Debug)]
pub struct Built {
    pub dir: PathBuf,
    pub info: BuildInfo,
    pub outcome: Outcome,
}

impl Built {
    pub fn shared_object(&self) -> PathBuf {
        self.dir.join("model.so")
    }
    pub fn sim_source(&self) -> PathBuf {
        let p = PathBuf::from(&self.info.sim_source);
        if p.is_absolute() {
            p
        } else {
            self.dir.join(p)
        }
    }
}


fn file_hash(p: &Path) -> Result<String, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    Ok(store::key(&[&bytes]))
}

/// An OSU018 netlist in the cache, as `make synth` makes it.
#[derive(Clone, Debug)]
pub struct Netlist {
    pub dir: PathBuf,
    pub key: String,
    pub module: String,
    pub outcome: Outcome,
}

impl Netlist {
    /// The mapped netlist OpenSTA times.
    pub fn verilog(&self) -> PathBuf {
        self.dir.join(format!("{}.osu018.v", self.module))
    }
    /// Yosys `stat -liberty` of it.
    pub fn area_report(&self) -> PathBuf {
        self.dir.join(format!("{}.area.txt", self.module))
    }
    /// The standard cells as Verilog modules with their Liberty functions.
    pub fn cells(&self) -> PathBuf {
        self.dir.join("osu018_cells.v")
    }
}

/// The key of the OSU018 netlist of `s` at `period_ps`.
pub fn netlist_key(s: &Source, period_ps: u64) -> Result<String, String> {
    let parts = [
        "kvforge-netlist".to_string(),
        tools::version("yosys", "-V")?,
        file_hash(&tools::liberty())?,
        s.synth_script.clone(),
        format!("period {period_ps} ps"),
        tools::cell_library_script(Path::new("@LIB@"), Path::new("@OUT@")),
    ];
    let mut refs: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    refs.push(s.verilog.as_bytes());
    Ok(store::key(&refs))
}

/// The OSU018 netlist of `s`: the emitted Yosys script (the one `make
/// synth` runs) at `period_ps`, from the cache or synthesized into it.
pub fn netlist(store: &Store, s: &Source, period_ps: u64) -> Result<Netlist, String> {
    let key = netlist_key(s, period_ps)?;
    let m = &s.module;
    let (dir, outcome) = store.get_or_build("netlist", &key, |dir| {
        let write = |name: String, text: &str| {
            std::fs::write(dir.join(&name), text).map_err(|e| format!("cannot write {name}: {e}"))
        };
        write(format!("{m}.v"), &s.verilog)?;
        write(format!("{m}.yosys.tcl"), &s.synth_script)?;
        let t = Instant::now();
        tools::synthesize(dir, m, period_ps)?;
        tools::cell_library(dir)?;
        write("seconds.txt".into(), &format!("{:.1}\n", t.elapsed().as_secs_f64()))
    })?;
    Ok(Netlist { dir, key, module: m.clone(), outcome })
}

/// The key of a request: everything that shapes the model.
pub fn model_key(req: &Request) -> Result<String, String> {
    let v = tools::verilator()?;
    let s = req.source;
    let args = tools::verilator_args(&s.module, req.trace).join(" ");
    let shim = shim::cpp(&s.ports, req.trace);
    let cxx = cxx::identity(v)?;
    let mut parts: Vec<String> = vec![
        "kvforge-model".into(),
        format!("{:?} trace={}", req.level, req.trace),
        v.version.clone(),
        args,
        cxx,
        format!("-O{} slow -O{}", req.opt, req.slow_opt),
        shim,
    ];
    match req.level {
        // the netlist's key covers the RTL, the script, Yosys and the cells
        Level::Netlist => parts.push(netlist_key(s, req.period_ps)?),
        Level::Rtl => parts.push(s.verilog.clone()),
    }
    let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    Ok(store::key(&refs))
}

/// The Verilator runtime archive for the current toolchain.
pub fn runtime(store: &Store) -> Result<PathBuf, String> {
    let v = tools::verilator()?;
    let key = store::key(&[b"kvforge-verilated-runtime", v.version.as_bytes(), cxx::identity(v)?.as_bytes()]);
    store.get_or_build("runtime", &key, |dir| cxx::build_runtime(v, dir)).map(|(d, _)| d)
}

/// The precompiled runtime headers for -O`opt` (`cxx::PCH` in the
/// folder), or none when the compiler does not take them.
pub fn pch(store: &Store, opt: &str) -> Result<Option<PathBuf>, String> {
    let v = tools::verilator()?;
    let key = store::key(&[b"kvforge-verilated-pch", v.version.as_bytes(), cxx::identity(v)?.as_bytes(), opt.as_bytes()]);
    let (dir, _) = store.get_or_build("pch", &key, |dir| cxx::build_pch(v, dir, opt))?;
    Ok(dir.join("used").exists().then(|| dir.join(cxx::PCH)))
}

/// The model of `req`, from the cache or built into it.
pub fn ensure(store: &Store, req: &Request) -> Result<Built, String> {
    let key = model_key(req)?;
    let rt = runtime(store)?;
    let net = match req.level {
        Level::Netlist => Some(netlist(store, req.source, req.period_ps)?),
        Level::Rtl => None,
    };
    let (dir, outcome) = store.get_or_build("model", &key, |dir| build(store, req, &key, &rt, net.as_ref(), dir))?;
    let path = dir.join("info.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("model cache: {}: {e}", path.display()))?;
    let info: BuildInfo =
        serde_json::from_str(&text).map_err(|e| format!("model cache: {}: {e}", path.display()))?;
    Ok(Built { dir, info, outcome })
}

fn build(store: &Store, req: &Request, key: &str, runtime: &Path, net: Option<&Netlist>, dir: &Path) -> Result<(), String> {
    let s = req.source;
    let m = &s.module;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name} in {}: {e}", dir.display()))
    };
    let mut seconds = Vec::new();
    let mut step = |name: &str, t: Instant| seconds.push((name.to_string(), t.elapsed().as_secs_f64()));
    let srcs = match net {
        None => {
            write(&format!("{m}.v"), &s.verilog)?;
            vec![dir.join(format!("{m}.v"))]
        }
        Some(n) => vec![n.verilog(), n.cells()],
    };
    let src = srcs[0].clone();
    let t = Instant::now();
    let mdir = dir.join("vl");
    tools::verilate(&srcs, m, req.trace, &mdir, &dir.join("verilator.log"))?;
    step("verilator", t);

    // The shim indexes ports in manifest order: check that Verilator agrees.
    let mut found = tools::header_ports(&mdir.join("Vtop.h"))?;
    let mut want: Vec<tools::HeaderPort> = s
        .ports
        .iter()
        .map(|p| tools::HeaderPort { name: p.name.clone(), dir_in: p.dir_in, width: p.width })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    want.sort_by(|a, b| a.name.cmp(&b.name));
    if found != want {
        return Err(format!("{m}: Verilator's ports {found:?} differ from the rtl-gen manifest's {want:?}"));
    }
    let v = tools::verilator()?;
    std::fs::write(mdir.join("kvf_shim.cpp"), shim::cpp(&s.ports, req.trace)).map_err(|e| e.to_string())?;
    let mut files = cxx::generated_files(&mdir, &req.opt, &req.slow_opt)?;
    files.push(("kvf_shim.cpp".into(), req.opt.clone()));
    let odir = dir.join("o");
    std::fs::create_dir_all(&odir).map_err(|e| e.to_string())?;
    let mut units = cxx::bundle(&mdir, &odir, files)?;
    // one lookup per -O level the units use (the per-cycle and the run-once one)
    let mut pchs: Vec<(String, Option<PathBuf>)> = Vec::new();
    for u in &mut units {
        if !pchs.iter().any(|(o, _)| *o == u.opt) {
            pchs.push((u.opt.clone(), pch(store, &u.opt)?));
        }
        u.pch = pchs.iter().find(|(o, _)| *o == u.opt).and_then(|(_, p)| p.clone());
    }
    let objs: Vec<PathBuf> = units.iter().map(|u| u.obj.clone()).collect();
    let t = Instant::now();
    let compile = cxx::compile_all(v, units)?;
    step("c++", t);
    let t = Instant::now();
    cxx::link(&objs, runtime, &dir.join("model.so"), &dir.join("link.log"))?;
    step("link", t);
    // The generated C++ and objects are large and not needed to run.
    let _ = std::fs::remove_dir_all(&mdir);
    let _ = std::fs::remove_dir_all(&odir);

    let info = BuildInfo {
        key: key.to_string(),
        unit: s.unit.clone(),
        module: m.clone(),
        level: req.level,
        trace: req.trace,
        // RTL: the copy in this entry (relative, as the folder moves when published)
        sim_source: if net.is_some() { src.display().to_string() } else { format!("{m}.v") },
        netlist: net.map(|n| n.key.clone()),
        seconds,
        compile,
    };
    write("info.json", &serde_json::to_string_pretty(&info).unwrap())
}
