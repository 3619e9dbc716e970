//! Builds the co-simulation models listed in `models.toml`:
//! rtl-gen emission -> (Yosys generic-gate netlist) -> Verilator C++ ->
//! g++ objects -> one static library, plus the Rust `ModelInfo` bindings
//! (`$OUT_DIR/models.rs`, included by `src/models.rs`).
//!
//! `$OUT_DIR/<model>/` holds the emitted files, and `rtl/` and `net/` the
//! two variants (RTL, and gate-level netlist `<model>_net`). Each variant is
//! cached under a hash of everything that shapes it, so editing one unit
//! rebuilds only the models of that unit.

#[path = "build/cxx.rs"]
mod cxx;
#[path = "build/list.rs"]
mod list;
#[path = "build/pool.rs"]
mod pool;
#[path = "build/shim.rs"]
mod shim;
#[path = "build/tools.rs"]
mod tools;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// One model after rtl-gen emission.
struct Emitted {
    unit: String,
    module: String,
    verilog: PathBuf,
    verilog_text: String,
    manifest_json: String,
    params_json: String,
    ports: Vec<shim::ShimPort>,
}

/// One Verilator model: the RTL, or the gate-level netlist of the RTL.
struct Variant<'a> {
    prefix: String,
    m: &'a Emitted,
    gate_level: bool,
    opt: String,
    slow_opt: String,
    dir: PathBuf,
}

impl Variant<'_> {
    fn mdir(&self) -> PathBuf {
        self.dir.join("vl")
    }
    fn objdir(&self) -> PathBuf {
        self.dir.join("o")
    }
    fn netlist(&self) -> PathBuf {
        self.dir.join(format!("{}.net.v", self.m.module))
    }
    /// The Verilog that Verilator reads.
    fn source(&self) -> PathBuf {
        if self.gate_level {
            self.netlist()
        } else {
            self.m.verilog.clone()
        }
    }
}

fn hash_hex(parts: &[&str]) -> String {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    format!("{:016x}\n", h.finish())
}

fn up_to_date(dir: &Path, stamp: &str) -> bool {
    std::fs::read_to_string(dir.join("stamp")).map(|s| s == stamp).unwrap_or(false)
}

fn emit(s: &list::ModelSpec, out: &Path) -> Emitted {
    let e = rtl_gen::emit(&s.unit, &s.params, &rtl_gen::EmitOptions::default())
        .unwrap_or_else(|err| panic!("models.toml, model {}: {err}", s.name));
    let dir = out.join(&s.name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in &e.files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let ports = e
        .manifest
        .ports
        .iter()
        .map(|p| shim::ShimPort {
            name: p.name.clone(),
            dir_in: p.dir == rtl_gen::elaborate::Dir::In,
            width: p.width,
            elements: p.elements,
            element_width: p.element_width,
        })
        .collect();
    Emitted {
        unit: s.unit.clone(),
        module: e.module.clone(),
        verilog: dir.join(format!("{}.v", e.module)),
        verilog_text: e.verilog.clone(),
        manifest_json: serde_json::to_string(&e.manifest).unwrap(),
        params_json: serde_json::to_string(&e.manifest.params).unwrap(),
        ports,
    }
}

/// Runs Yosys and Verilator for a stale variant; returns its C++ units.
fn generate(v: &Variant, shim_text: &str) -> Vec<cxx::Unit> {
    if v.gate_level {
        tools::yosys(&v.m.verilog, &v.m.module, &v.netlist(), &v.dir.join("yosys.log"));
    }
    let mdir = v.mdir();
    tools::verilate(&v.source(), &v.prefix, &v.m.module, &mdir, &v.dir.join("verilator.log"));

    // The shim indexes ports in manifest order: check Verilator agrees.
    let mut found = tools::header_ports(&mdir.join(format!("V{}.h", v.prefix)));
    let mut want: Vec<tools::HeaderPort> =
        v.m.ports
            .iter()
            .map(|p| tools::HeaderPort { name: p.name.clone(), dir_in: p.dir_in, width: p.width })
            .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    want.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(found, want, "{}: Verilator's ports differ from the rtl-gen manifest", v.prefix);

    let shim_path = mdir.join(format!("{}_shim.cpp", v.prefix));
    std::fs::write(&shim_path, shim_text).unwrap();

    let _ = std::fs::remove_dir_all(v.objdir());
    std::fs::create_dir_all(v.objdir()).unwrap();
    // Verilator's split of hot (per-cycle) and run-once code.
    let classes = std::fs::read_to_string(mdir.join(format!("V{}_classes.mk", v.prefix))).unwrap();
    let mut files: Vec<(String, String)> = Vec::new();
    let mut section = "";
    for line in classes.lines() {
        let t = line.trim().trim_end_matches('\\').trim();
        if let Some((var, _)) = t.split_once("+=") {
            section = var.trim();
            continue;
        }
        let opt = match section {
            "VM_CLASSES_FAST" | "VM_SUPPORT_FAST" => v.opt.clone(),
            "VM_CLASSES_SLOW" | "VM_SUPPORT_SLOW" => v.slow_opt.clone(),
            _ => continue,
        };
        if !t.is_empty() && !t.starts_with('#') {
            files.push((format!("{t}.cpp"), opt));
        }
    }
    files.push((shim_path.file_name().unwrap().to_string_lossy().into_owned(), v.opt.clone()));
    bundle(&mdir, &v.objdir(), files)
}

/// Groups the generated files into translation units. Every file includes
/// verilated.h (about 1 s of parsing), so small files of one -O level are
/// compiled together, as Verilator's own `__ALL.cpp` does; big ones alone,
/// to spread them over the cores.
fn bundle(mdir: &Path, objdir: &Path, files: Vec<(String, String)>) -> Vec<cxx::Unit> {
    const ALONE: u64 = 128 * 1024;
    const BUNDLE: u64 = 512 * 1024;
    let unit = |src: PathBuf, obj: &str, opt: String, size: u64| cxx::Unit {
        src,
        obj: objdir.join(obj),
        opt,
        includes: vec![mdir.to_path_buf()],
        size,
    };
    let mut units = Vec::new();
    let mut open: Vec<(String, Vec<String>, u64)> = Vec::new(); // per -O level: files, bytes
    let mut n = 0;
    let mut flush = |opt: String, group: Vec<String>, size: u64, units: &mut Vec<cxx::Unit>| {
        let name = format!("kvf_bundle{n}_O{opt}.cpp");
        n += 1;
        let text: String = group.iter().map(|f| format!("#include \"{f}\"\n")).collect();
        std::fs::write(mdir.join(&name), text).unwrap();
        units.push(unit(mdir.join(&name), &name.replace(".cpp", ".o"), opt, size));
    };
    for (file, opt) in files {
        let size = std::fs::metadata(mdir.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}")).len();
        if size >= ALONE {
            units.push(unit(mdir.join(&file), &file.replace(".cpp", ".o"), opt, size));
            continue;
        }
        let i = match open.iter().position(|g| g.0 == opt) {
            Some(i) => i,
            None => {
                open.push((opt, Vec::new(), 0));
                open.len() - 1
            }
        };
        open[i].1.push(file);
        open[i].2 += size;
        if open[i].2 >= BUNDLE {
            let (opt, group, size) = open.swap_remove(i);
            flush(opt, group, size, &mut units);
        }
    }
    for (opt, group, size) in open {
        flush(opt, group, size, &mut units);
    }
    units
}

fn objects(dir: &Path) -> Vec<PathBuf> {
    let mut objs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "o"))
        .collect();
    objs.sort();
    objs
}

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let list_path = crate_dir.join("models.toml");
    println!("cargo:rerun-if-changed={}", list_path.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build");
    let started = std::time::Instant::now();
    // $OUT_DIR is <target>/<profile>/build/tb-<hash>/out; waveforms of failing
    // property tests go under <target>/vcd.
    let target = out.ancestors().nth(4).unwrap_or(&out);
    println!("cargo:rustc-env=KVFORGE_TARGET_DIR={}", target.display());

    let specs = list::read(&list_path);
    let emitted = pool::map(&specs, |s| emit(s, &out));

    let vl_include = tools::verilator_include();
    let compiler = cxx::Compiler::new(&vl_include);
    let any_net = specs.iter().any(|s| s.netlist);
    let identity = format!(
        "{}\n{}\n{}",
        tools::version("verilator", "--version"),
        if any_net { tools::version("yosys", "-V") } else { String::new() },
        compiler.identity()
    );

    let mut variants: Vec<Variant> = Vec::new();
    for (s, m) in specs.iter().zip(&emitted) {
        let dir = out.join(&s.name);
        if s.netlist {
            let prefix = format!("{}_net", s.name);
            variants.push(Variant {
                prefix,
                m,
                gate_level: true,
                opt: s.net_opt.clone(),
                slow_opt: s.slow_opt.clone(),
                dir: dir.join("net"),
            });
        }
        variants.push(Variant {
            prefix: s.name.clone(),
            m,
            gate_level: false,
            opt: s.opt.clone(),
            slow_opt: s.slow_opt.clone(),
            dir: dir.join("rtl"),
        });
    }

    // Which variants changed, and their C++ (Yosys and Verilator in parallel,
    // gate-level ones first since they take longest).
    let shims: Vec<String> = variants.iter().map(|v| shim::cpp(&v.prefix, &v.m.ports)).collect();
    let stamps: Vec<String> = variants
        .iter()
        .zip(&shims)
        .map(|(v, sh)| {
            let args = tools::verilator_args(&v.prefix, &v.m.module).join(" ");
            let yosys =
                if v.gate_level { tools::yosys_script(&v.m.verilog, &v.m.module, &v.netlist()) } else { String::new() };
            let opts = format!("{} {}", v.opt, v.slow_opt);
            hash_hex(&[&identity, &args, &yosys, &opts, sh, &v.m.verilog_text])
        })
        .collect();
    let mut work: Vec<usize> = (0..variants.len()).filter(|&i| !up_to_date(&variants[i].dir, &stamps[i])).collect();
    work.sort_by_key(|&i| !variants[i].gate_level);
    let mut units: Vec<cxx::Unit> = pool::map(&work, |&i| {
        let v = &variants[i];
        std::fs::create_dir_all(&v.dir).unwrap();
        let _ = std::fs::remove_file(v.dir.join("stamp"));
        generate(v, &shims[i])
    })
    .into_iter()
    .flatten()
    .collect();

    // Verilator's runtime, shared by all models.
    let rt_dir = out.join("verilated");
    let rt_stamp = hash_hex(&[&identity, "runtime -Os"]);
    let rt_fresh = up_to_date(&rt_dir, &rt_stamp);
    if !rt_fresh {
        let _ = std::fs::remove_dir_all(&rt_dir);
        std::fs::create_dir_all(&rt_dir).unwrap();
        for f in ["verilated", "verilated_vcd_c", "verilated_threads"] {
            let src = vl_include.join(format!("{f}.cpp"));
            units.push(cxx::Unit {
                // verilated.cpp is 120 kB but compiles like a 1 MB generated file.
                size: 8 * std::fs::metadata(&src).map(|m| m.len()).unwrap_or(0),
                src,
                obj: rt_dir.join(format!("{f}.o")),
                opt: "s".into(), // as verilated.mk (OPT_GLOBAL)
                includes: vec![],
            });
        }
    }
    let n_units = units.len();
    let t_tools = started.elapsed().as_secs_f64();
    let compiled = compiler.compile_all(units);
    for &i in &work {
        std::fs::write(variants[i].dir.join("stamp"), &stamps[i]).unwrap();
    }
    if !rt_fresh {
        std::fs::write(rt_dir.join("stamp"), &rt_stamp).unwrap();
    }

    // Drop the folders of models and netlists no longer listed.
    let keep: Vec<PathBuf> = specs.iter().map(|s| out.join(&s.name)).chain([rt_dir.clone()]).collect();
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        if e.path().is_dir() && !keep.contains(&e.path()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    for s in specs.iter().filter(|s| !s.netlist) {
        let _ = std::fs::remove_dir_all(out.join(&s.name).join("net"));
    }

    let mut objs = objects(&rt_dir);
    for v in &variants {
        objs.extend(objects(&v.objdir()));
    }
    compiler.archive(&out, "kvforge_models", &objs);

    let rust_models: Vec<shim::RustModel> = variants
        .iter()
        .map(|v| shim::RustModel {
            prefix: &v.prefix,
            unit: &v.m.unit,
            module: &v.m.module,
            gate_level: v.gate_level,
            source: v.source().display().to_string(),
            params_json: v.m.params_json.clone(),
            manifest_json: v.m.manifest_json.clone(),
            ports: &v.m.ports,
        })
        .collect();
    std::fs::write(out.join("models.rs"), shim::rust(&rust_models)).unwrap();

    // What was rebuilt and where the time went.
    let summary = format!(
        "tb models: {} variants, {} rebuilt ({}), {} C++ files compiled, {:.1} s ({:.1} s elaboration, Yosys and Verilator)\n{}\n",
        variants.len(),
        work.len(),
        work.iter().map(|&i| variants[i].prefix.as_str()).collect::<Vec<_>>().join(" "),
        n_units,
        started.elapsed().as_secs_f64(),
        t_tools,
        compiled.join("\n")
    );
    std::fs::write(out.join("build-summary.txt"), summary).unwrap();
}
