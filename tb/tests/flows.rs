//! The design folders of `rtl-gen emit --flow` (rtl-gen/src/flow.rs), for
//! every unit of `rtl-gen list`:
//! - ORFS: config.mk read by make as ORFS includes it (from flow/, through
//!   designs/<platform>/<module>/config.mk); its VERILOG_FILES are exactly the
//!   folder's Verilog; each memory of the manifest is named as a black-box
//!   candidate and fits SYNTH_MEMORY_MAX_BITS. At the parameters of the
//!   unit's first netlist model of this run (tb/models.toml), the folder's
//!   VERILOG_FILES elaborate in Yosys (`hierarchy -check`) and its
//!   constraint.sdc loads in OpenSTA against that OSU018 netlist with no
//!   warning, and its clock times the netlist's paths.
//! - FuseSoC: `core show` passes at the defaults, and `run --target lint`
//!   (Verilator, `-Wall` with the waivers of `make lint`) at the first
//!   netlist model's parameters.
//! Default parameters where not noted. The Yosys, OpenSTA
//! and FuseSoC runs are kept by `tb::build::memo`, keyed by the tools and
//! every file they read: a run with no hardware change repeats none.

use rtl_gen::flow::{self, Flow, PLATFORMS};
use rtl_gen::units::UNITS;
use rtl_gen::Emission;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tb::build::tools;
use tb::coverage::Coverage;
use tb::models;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvforge-flows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, files: &[(String, String)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (n, t) in files {
        std::fs::write(dir.join(n), t).unwrap();
    }
}

/// Runs `cmd`; panics with its output unless it succeeds.
fn run(what: &str, cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// Identities of the tools whose runs are kept (`tb::build::memo`).
struct Ids {
    yosys: String,
    sta: String,
    fusesoc: String,
}

impl Ids {
    fn get() -> Ids {
        let v = |tool: &str, flag: &str| tools::version(tool, flag).unwrap_or_else(|e| panic!("{e}"));
        let fusesoc = fusesoc();
        Ids { yosys: v("yosys", "-V"), sta: v("sta", "-version"), fusesoc: v(&fusesoc.to_string_lossy(), "--version") }
    }
}

/// `cmd`'s output, from the cache if this exact run (tools, arguments,
/// `inputs`) passed before; panics with the output if it fails. `n` counts
/// runs and cache hits.
fn memo(n: &mut [usize; 2], what: String, cmd: Command, tools: Vec<String>, inputs: Vec<PathBuf>, root: &Path) -> String {
    let run = tb::build::memo::Run { what, cmd, tools, inputs, root };
    let (text, outcome) = run.output(models::store()).unwrap_or_else(|e| panic!("{e}"));
    n[0] += 1;
    n[1] += (outcome == tb::build::Outcome::Hit) as usize;
    text
}

/// rtl-gen's emission (kept in the model cache, keyed by the generator's
/// sources: `tb::build::emit`).
fn emit_unit(unit: &str, params: &toml::Table, clock_ns: f64) -> Emission {
    tb::build::emit::emission(models::store(), unit, params, clock_ns).unwrap_or_else(|e| panic!("emit {unit}: {e}"))
}

/// The first netlist model of `unit` in this run (tb/models.toml order).
fn netlist_spec(unit: &str) -> &'static models::Spec {
    models::specs()
        .iter()
        .find(|s| s.unit == unit && s.netlist && (!s.extended || models::extended()))
        .unwrap_or_else(|| panic!("tb/models.toml has no netlist model of {unit}"))
}

/// The variables of `config` as ORFS sees them: make includes it by a
/// path relative to flow/ (`root`), as `make DESIGN_CONFIG=...` does.
fn orfs_vars(root: &Path, config: &str) -> Vec<(String, String)> {
    const VARS: &[&str] =
        &["DESIGN_NAME", "PLATFORM", "VERILOG_FILES", "SDC_FILE", "ABC_CLOCK_PERIOD_IN_PS", "SYNTH_MEMORY_MAX_BITS"];
    let probe = root.join("probe.mk");
    let mut mk = String::from("include $(DESIGN_CONFIG)\nshow:\n");
    for v in VARS {
        mk.push_str(&format!("\t@echo '{v}=$({v})'\n"));
    }
    std::fs::write(&probe, mk).unwrap();
    let out = run(
        "make (reading config.mk)",
        Command::new("make").current_dir(root).args([
            "-s",
            "-f",
            "probe.mk",
            &format!("DESIGN_CONFIG={config}"),
            "show",
        ]),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.trim().to_string())))
        .collect()
}

fn var<'a>(vars: &'a [(String, String)], k: &str) -> &'a str {
    vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str()).unwrap_or("")
}

/// VERILOG_FILES of `vars`, sorted (as `verilog_in`).
fn verilog_files(vars: &[(String, String)]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = var(vars, "VERILOG_FILES").split_whitespace().map(PathBuf::from).collect();
    v.sort();
    v
}

fn verilog_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    v.sort();
    v
}

#[test]
fn orfs_designs() {
    let cov = Coverage::new(
        "flows_orfs",
        &[
            "unit",
            "platform folder",
            "yosys hierarchy",
            "yosys hierarchy with a memories file",
            "memory as macro",
            "unit without memories",
            "sta netlist",
        ],
    );
    let root = scratch("orfs");
    let (ids, mut n) = (Ids::get(), [0; 2]);
    let liberty = tools::liberty();
    let clock_ns = models::clock_ns();
    assert!(UNITS.len() >= 10, "rtl-gen lists {} units", UNITS.len());
    for u in UNITS {
        let e = emit_unit(u.name, &toml::Table::new(), clock_ns);
        let m = &e.module;
        // every port documented (a port field without a `///` comment fails
        // the emission; a placeholder in a doc is filled)
        assert!(!e.manifest.ports.is_empty(), "{m}: no ports");
        for p in &e.manifest.ports {
            let unfilled = p.doc.split('{').skip(1).any(|t| t.split_once('}').is_some_and(|(v, _)| !v.is_empty() && v.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
            assert!(!p.doc.trim().is_empty() && !unfilled, "{m}.{}: '{}'", p.name, p.doc);
        }
        for (pname, p) in PLATFORMS {
            let rel = format!("designs/{pname}/{m}");
            let dir = root.join(&rel);
            write(&dir, &flow::files(&e, Flow::Orfs(*p)).unwrap());
            let vars = orfs_vars(&root, &format!("./{rel}/config.mk"));
            assert_eq!(var(&vars, "DESIGN_NAME"), m);
            assert_eq!(var(&vars, "PLATFORM"), *pname);
            assert_eq!(var(&vars, "ABC_CLOCK_PERIOD_IN_PS"), format!("{}", (clock_ns * 1000.0).round() as u64));
            let sdc = PathBuf::from(var(&vars, "SDC_FILE"));
            assert_eq!(sdc, dir.join("constraint.sdc"), "{m}: SDC_FILE");
            assert!(sdc.exists());
            // exactly the folder's Verilog, each once
            assert_eq!(verilog_files(&vars), verilog_in(&dir), "{m} on {pname}: VERILOG_FILES");
            let config = std::fs::read_to_string(dir.join("config.mk")).unwrap();
            let blackboxes: Vec<&str> = config
                .lines()
                .find_map(|l| l.strip_prefix("# export SYNTH_BLACKBOXES = "))
                .map(|l| l.split_whitespace().collect())
                .unwrap_or_default();
            let mems = &e.manifest.memories;
            let mem_file = dir.join(format!("{m}_memories.v"));
            assert_eq!(mem_file.exists(), !mems.is_empty(), "{m}: memories file");
            let mem_text = std::fs::read_to_string(&mem_file).unwrap_or_default();
            for x in mems {
                assert!(blackboxes.contains(&x.module.as_str()), "{m}: memory {} not named in config.mk", x.module);
                assert_eq!(mem_text.matches(&format!("\nmodule {}(", x.module)).count(), 1, "{}", x.module);
                let max: u64 = var(&vars, "SYNTH_MEMORY_MAX_BITS").parse().unwrap();
                assert!(max >= x.bits, "{m}: SYNTH_MEMORY_MAX_BITS {max} < {} bits of {}", x.bits, x.module);
                cov.hit("memory as macro");
            }
            assert_eq!(blackboxes.len(), mems.len(), "{m}: black-box candidates {blackboxes:?}");
            cov.hit_if("unit without memories", mems.is_empty());
            cov.hit("platform folder");
        }

        // The folder at the parameters of the unit's first netlist model:
        // its VERILOG_FILES elaborate in Yosys, and its constraint.sdc times
        // that OSU018 netlist. (Yosys reads the packkv-decoder defaults'
        // 5 MB in 46 s; every default emission goes through Verilator's
        // -Wall in `make lint` and through Yosys in `make synth`.)
        let spec = netlist_spec(u.name);
        let src = models::source(spec).unwrap();
        let net = tb::build::netlist(models::store(), src, (clock_ns * 1000.0).round() as u64).unwrap();
        let e = emit_unit(u.name, &spec.params, clock_ns);
        let dir = root.join("sta").join(&spec.name);
        write(&dir, &flow::files(&e, Flow::Orfs(PLATFORMS[0].1)).unwrap());
        let rel = dir.strip_prefix(&root).unwrap().display().to_string();
        let listed = verilog_files(&orfs_vars(&root, &format!("./{rel}/config.mk")));
        assert_eq!(listed, verilog_in(&dir), "{m} at {}: VERILOG_FILES", spec.name);
        let files: Vec<String> = listed.iter().map(|f| f.display().to_string()).collect();
        let script = format!("read_verilog -sv {}; hierarchy -check -top {m}", files.join(" "));
        let mut cmd = Command::new("yosys");
        cmd.args(["-q", "-p", &script]);
        memo(&mut n, format!("yosys on {}'s VERILOG_FILES", spec.name), cmd, vec![ids.yosys.clone()], listed.clone(), &root);
        cov.hit("yosys hierarchy");
        cov.hit_if("yosys hierarchy with a memories file", !e.manifest.memories.is_empty());
        let tcl = format!(
            "read_liberty {}\nread_verilog {}\nlink_design {m}\nread_sdc {}\nreport_checks -path_delay max -digits 3\n",
            liberty.display(),
            net.verilog().display(),
            dir.join("constraint.sdc").display()
        );
        std::fs::write(dir.join("sta.tcl"), tcl).unwrap();
        let mut cmd = Command::new("sta");
        cmd.current_dir(&dir).args(["-no_splash", "-exit", "sta.tcl"]);
        let inputs = vec![liberty.clone(), net.verilog(), dir.join("constraint.sdc"), dir.join("sta.tcl")];
        let text = memo(&mut n, format!("OpenSTA on {}", spec.name), cmd, vec![ids.sta.clone()], inputs, &root);
        assert!(
            !text.contains("Warning") && !text.contains("Error"),
            "OpenSTA on {} with the ORFS constraint.sdc:\n{text}",
            spec.name
        );
        // a timed path: launched or captured by the clock, or IO to IO
        assert!(text.contains("clock core_clock"), "{}: no path timed by core_clock:\n{text}", spec.name);
        assert!(text.contains("slack"), "{}: no slack reported:\n{text}", spec.name);
        cov.hit("sta netlist");
        cov.hit("unit");
    }
    println!("{} tool runs, {} of them kept from an earlier run (tb/src/build/memo.rs)", n[0], n[1]);
    cov.check();
    let _ = std::fs::remove_dir_all(&root);
}

/// FuseSoC: `$KVFORGE_FUSESOC` (set by the Makefile), else the newest
/// `make deps` install under the tools folder. Missing is a failure.
fn fusesoc() -> PathBuf {
    if let Some(f) = std::env::var_os("KVFORGE_FUSESOC").filter(|f| !f.is_empty()) {
        return PathBuf::from(f);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(tools::tools_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fusesoc-")))
        .map(|p| p.join("bin").join("fusesoc"))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| panic!("FuseSoC not found in {}: run `make deps`", tools::tools_dir().display()))
}

#[test]
fn fusesoc_cores() {
    let cov = Coverage::new(
        "flows_fusesoc",
        &["core show at defaults", "memories fileset", "lint at small parameters", "lint with a memories fileset"],
    );
    let fusesoc = fusesoc();
    let v = tools::verilator().unwrap();
    let vbin = v.exe.parent().unwrap().to_path_buf();
    let path = format!("{}:{}", vbin.display(), std::env::var("PATH").unwrap_or_default());
    let root = scratch("fusesoc");
    // Two cores roots of the same core names: every unit at its defaults
    // (`core show`), and at the parameters of its first netlist model
    // (`run --target lint`: what is checked is the core's lint target, its
    // files and flags; the defaults' RTL gets Verilator's -Wall, with the
    // same waivers, in `make lint`, which ran it a second time here)
    let (defaults, small) = (root.join("cores"), root.join("cores-small"));
    let mut names = Vec::new();
    for u in UNITS {
        let mut mems = [false; 2];
        for (k, (dir, params)) in [(&defaults, toml::Table::new()), (&small, netlist_spec(u.name).params.clone())].into_iter().enumerate() {
            let e = emit_unit(u.name, &params, models::clock_ns());
            let files = flow::files(&e, Flow::Fusesoc).unwrap();
            let core = files.iter().find(|(n, _)| n.ends_with(".core")).map(|(_, t)| t.clone()).unwrap();
            assert_eq!(core.contains("  memories:\n"), !e.manifest.memories.is_empty(), "{}: memories fileset", u.name);
            mems[k] = !e.manifest.memories.is_empty();
            write(&dir.join(u.name), &files);
        }
        names.push((format!("kvforge:kvforge:{}:{}", u.name, env!("CARGO_PKG_VERSION")), u.name, mems));
    }
    let (ids, mut n) = (Ids::get(), [0; 2]);
    for (name, unit, mems) in &names {
        let fs = |cores: &Path| {
            let mut c = Command::new(&fusesoc);
            c.current_dir(&root).env("PATH", &path).arg("--cores-root").arg(cores);
            if let Some(r) = &v.root {
                c.env("VERILATOR_ROOT", r);
            }
            c
        };
        let tools = vec![ids.fusesoc.clone(), v.version.clone()];
        let mut cmd = fs(&defaults);
        cmd.args(["core", "show", name]);
        let text = memo(&mut n, format!("fusesoc core show {name}"), cmd, tools.clone(), vec![defaults.join(unit)], &root);
        assert!(text.contains(&format!("Name:        {name}")) && text.contains("lint"), "core show {name}:\n{text}");
        cov.hit("core show at defaults");
        cov.hit_if("memories fileset", mems[0]);
        let mut cmd = fs(&small);
        cmd.args(["run", "--build-root"]).arg(root.join("build").join(name.replace(':', "_"))).args(["--target", "lint", name]);
        let text = memo(&mut n, format!("fusesoc run --target lint {name}"), cmd, tools, vec![small.join(unit)], &root);
        // Verilator did run, in lint-only mode, and said nothing
        assert!(text.contains("verilator -f"), "{name}: Verilator did not run:\n{text}");
        assert!(!text.contains("%Warning") && !text.contains("%Error"), "{name}:\n{text}");
        cov.hit("lint at small parameters");
        cov.hit_if("lint with a memories fileset", mems[1]);
    }
    println!("{} tool runs, {} of them kept from an earlier run (tb/src/build/memo.rs)", n[0], n[1]);
    cov.check();
    let _ = std::fs::remove_dir_all(&root);
}
