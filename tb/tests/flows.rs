//! The design folders of `rtl-gen emit --flow` (rtl-gen/src/flow.rs), for
//! every unit of `rtl-gen list`:
//! - ORFS: config.mk read by make as ORFS includes it (from flow/, through
//!   designs/<platform>/<module>/config.mk); its VERILOG_FILES are exactly the
//!   folder's Verilog and elaborate in Yosys (`hierarchy -check`); each
//!   memory of the manifest is named as a black-box candidate and fits
//!   SYNTH_MEMORY_MAX_BITS; constraint.sdc loads in OpenSTA against the
//!   unit's OSU018 netlist (the smallest netlist model of tb/models.toml)
//!   with no warning, and its clock times the netlist's paths.
//! - FuseSoC: `core show` and `run --target lint` (Verilator 5.049,
//!   `-Wall` with the waivers of `make lint`) pass.
//! Default parameters everywhere except where noted.

use rtl_gen::flow::{self, Flow, PLATFORMS};
use rtl_gen::units::UNITS;
use rtl_gen::{emit, Emission, EmitOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tb::build::tools;
use tb::coverage::Coverage;
use tb::models;

/// Units whose default-parameter lint takes long (about 10 s each): their
/// cores are linted at the parameters of their smallest netlist model.
const SMALL_FOR_LINT: &[&str] = &["oaken-quantizer", "oaken-dequantizer"];

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

fn emit_unit(unit: &str, params: &toml::Table, clock_ns: f64) -> Emission {
    emit(unit, params, &EmitOptions { clock_ns }).unwrap_or_else(|e| panic!("emit {unit}: {e}"))
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
        &["unit", "platform folder", "yosys hierarchy", "memory as macro", "unit without memories", "sta netlist"],
    );
    let root = scratch("orfs");
    let liberty = tools::liberty();
    let clock_ns = models::clock_ns();
    assert!(UNITS.len() >= 10, "rtl-gen lists {} units", UNITS.len());
    for u in UNITS {
        let e = emit_unit(u.name, &toml::Table::new(), clock_ns);
        let m = &e.module;
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
            let mut listed: Vec<PathBuf> = var(&vars, "VERILOG_FILES").split_whitespace().map(PathBuf::from).collect();
            listed.sort();
            assert_eq!(listed, verilog_in(&dir), "{m} on {pname}: VERILOG_FILES");
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
            if *p == PLATFORMS[0].1 {
                let files: Vec<String> = listed.iter().map(|f| f.display().to_string()).collect();
                let script = format!("read_verilog -sv {}; hierarchy -check -top {m}", files.join(" "));
                run(&format!("yosys on {m}'s VERILOG_FILES"), Command::new("yosys").args(["-q", "-p", &script]));
                cov.hit("yosys hierarchy");
            }
            cov.hit("platform folder");
        }

        // constraint.sdc against the OSU018 netlist of the same parameters
        let spec = netlist_spec(u.name);
        let src = models::source(spec).unwrap();
        let net = tb::build::netlist(models::store(), src, (clock_ns * 1000.0).round() as u64).unwrap();
        let e = emit_unit(u.name, &spec.params, clock_ns);
        let dir = root.join("sta").join(&spec.name);
        write(&dir, &flow::files(&e, Flow::Orfs(PLATFORMS[0].1)).unwrap());
        let tcl = format!(
            "read_liberty {}\nread_verilog {}\nlink_design {m}\nread_sdc {}\nreport_checks -path_delay max -digits 3\n",
            liberty.display(),
            net.verilog().display(),
            dir.join("constraint.sdc").display()
        );
        std::fs::write(dir.join("sta.tcl"), tcl).unwrap();
        let out = run("OpenSTA", Command::new("sta").current_dir(&dir).args(["-no_splash", "-exit", "sta.tcl"]));
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
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
        &["core show", "lint at defaults", "lint at small parameters", "memories fileset"],
    );
    let fusesoc = fusesoc();
    let v = tools::verilator().unwrap();
    let vbin = v.exe.parent().unwrap().to_path_buf();
    let path = format!("{}:{}", vbin.display(), std::env::var("PATH").unwrap_or_default());
    let root = scratch("fusesoc");
    let cores = root.join("cores");
    let mut names = Vec::new();
    for u in UNITS {
        let small = SMALL_FOR_LINT.contains(&u.name);
        let params = if small { netlist_spec(u.name).params.clone() } else { toml::Table::new() };
        let e = emit_unit(u.name, &params, models::clock_ns());
        let files = flow::files(&e, Flow::Fusesoc).unwrap();
        let core = files.iter().find(|(n, _)| n.ends_with(".core")).map(|(_, t)| t.clone()).unwrap();
        assert_eq!(core.contains("  memories:\n"), !e.manifest.memories.is_empty(), "{}: memories fileset", u.name);
        cov.hit_if("memories fileset", !e.manifest.memories.is_empty());
        write(&cores.join(u.name), &files);
        names.push((format!("kvforge:kvforge:{}:{}", u.name, env!("CARGO_PKG_VERSION")), small));
    }
    for (name, small) in &names {
        let fs = || {
            let mut c = Command::new(&fusesoc);
            c.current_dir(&root).env("PATH", &path).arg("--cores-root").arg(&cores);
            if let Some(r) = &v.root {
                c.env("VERILATOR_ROOT", r);
            }
            c
        };
        let out = run(&format!("fusesoc core show {name}"), fs().args(["core", "show", name]));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("Name:        {name}")) && text.contains("lint"), "core show {name}:\n{text}");
        cov.hit("core show");
        let out = run(
            &format!("fusesoc run --target lint {name}"),
            fs().args(["run", "--build-root"])
                .arg(root.join("build").join(name.replace(':', "_")))
                .args(["--target", "lint", name]),
        );
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // Verilator did run, in lint-only mode, and said nothing
        assert!(text.contains("verilator -f"), "{name}: Verilator did not run:\n{text}");
        assert!(!text.contains("%Warning") && !text.contains("%Error"), "{name}:\n{text}");
        cov.hit(if *small { "lint at small parameters" } else { "lint at defaults" });
    }
    cov.check();
    let _ = std::fs::remove_dir_all(&root);
}
