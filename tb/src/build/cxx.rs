//! C++ compilation of a Verilated model into a shared object: each
//! generated file at its own -O level (per-cycle code vs. run-once code),
//! the files spread over the job slots, the Verilator runtime built once per
//! toolchain into a static archive, the runtime's headers precompiled once
//! per toolchain and -O level, and everything linked with only the shim's
//! `kvf_*` symbols exported.

use super::jobs;
use super::tools::{self, Verilator};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `$CXX`, else `g++`.
pub fn compiler() -> String {
    std::env::var("CXX").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "g++".into())
}

/// Flags for every translation unit (Verilator's own, from verilated.mk,
/// for a VCD-capable build), plus position-independent code.
pub fn flags(v: &Verilator) -> Vec<String> {
    let mut f: Vec<String> = [
        "-std=gnu++17",
        "-faligned-new",
        "-fcf-protection=none",
        "-fPIC",
        "-fvisibility=hidden",
        "-w",
        "-DVM_COVERAGE=0",
        "-DVM_SC=0",
        "-DVM_TRACE=1",
        "-DVM_TRACE_FST=0",
        "-DVM_TRACE_VCD=1",
        "-DVM_TRACE_SAIF=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    f.push(format!("-I{}", v.include.display()));
    f.push(format!("-I{}", v.include.join("vltstd").display()));
    f
}

/// Everything that changes an object besides its source (key part).
pub fn identity(v: &Verilator) -> Result<String, String> {
    let cxx = compiler();
    Ok(format!("{cxx} {} {:?}", tools::version(&cxx, "--version")?, flags(v)))
}

/// One translation unit.
pub struct Unit {
    pub src: PathBuf,
    pub obj: PathBuf,
    /// g++ -O level: "0".."3" or "s".
    pub opt: String,
    pub includes: Vec<PathBuf>,
    /// The precompiled runtime headers (`kvf_pch.h`, its `.gch` beside it)
    /// built at this unit's -O level and flags, or none.
    pub pch: Option<PathBuf>,
    /// Bytes of source (for scheduling: biggest first).
    pub size: u64,
}

fn compile(v: &Verilator, u: &Unit) -> Result<f64, String> {
    let t = std::time::Instant::now();
    let mut cmd = Command::new(compiler());
    cmd.args(flags(v));
    for i in &u.includes {
        cmd.arg(format!("-I{}", i.display()));
    }
    if let Some(p) = &u.pch {
        cmd.arg("-include").arg(p);
    }
    cmd.arg(format!("-O{}", u.opt)).arg("-c").arg(&u.src).arg("-o").arg(&u.obj);
    let log = u.obj.with_extension("log");
    tools::run(cmd, &log, &format!("C++ compile of {}", u.src.display()))?;
    Ok(t.elapsed().as_secs_f64())
}

/// Compiles `units` over the job slots, biggest first; returns one report
/// line per unit.
pub fn compile_all(v: &Verilator, mut units: Vec<Unit>) -> Result<Vec<String>, String> {
    units.sort_by_key(|u| std::cmp::Reverse(u.size));
    let secs = jobs::map(&units, |u| compile(v, u));
    let mut lines = Vec::new();
    for (u, s) in units.iter().zip(secs) {
        lines.push(format!("{:6.2} s  -O{}  {:>8} B  {}", s?, u.opt, u.size, u.src.display()));
    }
    Ok(lines)
}

/// Builds the Verilator runtime archive `libverilated.a` into `dir`.
pub fn build_runtime(v: &Verilator, dir: &Path) -> Result<(), String> {
    let units: Vec<Unit> = ["verilated", "verilated_vcd_c", "verilated_threads"]
        .iter()
        .map(|f| {
            let src = v.include.join(format!("{f}.cpp"));
            Unit {
                size: std::fs::metadata(&src).map(|m| m.len()).unwrap_or(0),
                src,
                obj: dir.join(format!("{f}.o")),
                opt: "s".into(), // as verilated.mk (OPT_GLOBAL)
                includes: vec![],
                pch: None,
            }
        })
        .collect();
    let objs: Vec<PathBuf> = units.iter().map(|u| u.obj.clone()).collect();
    compile_all(v, units)?;
    let mut ar = Command::new("ar");
    ar.arg("crs").arg(dir.join("libverilated.a")).args(&objs);
    tools::run(ar, &dir.join("ar.log"), "archiving the Verilator runtime")?;
    for o in objs {
        let _ = std::fs::remove_file(o);
    }
    Ok(())
}

/// The header every generated file starts with (through its `Vtop__pch.h`)
/// and the tracing one; precompiled, they save about 0.4 s of g++ per
/// translation unit, a third of the average unit. g++ takes a `.gch` only
/// when it was built with the same -O level and defines (else it parses
/// the text, with the same result), so there is one per -O level.
pub const PCH: &str = "kvf_pch.h";

/// Precompiles the runtime headers into `dir` (`kvf_pch.h` and
/// `kvf_pch.h.gch`) for units at -O`opt`, and marks the folder `used` when
/// the compiler takes the result.
pub fn build_pch(v: &Verilator, dir: &Path, opt: &str) -> Result<(), String> {
    let h = dir.join(PCH);
    std::fs::write(&h, "#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n")
        .map_err(|e| format!("write {}: {e}", h.display()))?;
    let gch = dir.join(format!("{PCH}.gch"));
    // the flags and -O level of the units that will include it
    let cxx = || {
        let mut c = Command::new(compiler());
        c.args(flags(v)).arg(format!("-O{opt}"));
        c
    };
    let mut cmd = cxx();
    cmd.args(["-x", "c++-header"]).arg(&h).arg("-o").arg(&gch);
    tools::run(cmd, &dir.join("pch.log"), "precompiling the Verilator headers")?;
    // g++ -H marks a precompiled header it uses with "!"; one it rejects
    // (another compiler's, say) is dropped, and the units parse the text
    let out = cxx()
        .args(["-H", "-fsyntax-only", "-x", "c++", "-include"])
        .arg(&h)
        .arg("/dev/null")
        .output()
        .map_err(|e| format!("{}: {e}", compiler()))?;
    let used = String::from_utf8_lossy(&out.stderr).lines().any(|l| l.starts_with("! ") && l.ends_with(".gch"));
    if used {
        std::fs::write(dir.join("used"), b"").map_err(|e| e.to_string())?;
    } else {
        let _ = std::fs::remove_file(&gch);
    }
    Ok(())
}

/// Links `objs` and the runtime into `out` (a shared object exporting only
/// the shim's default-visibility symbols).
pub fn link(objs: &[PathBuf], runtime: &Path, out: &Path, log: &Path) -> Result<(), String> {
    let mut cmd = Command::new(compiler());
    cmd.arg("-shared")
        .arg("-o")
        .arg(out)
        .args(objs)
        .arg(runtime.join("libverilated.a"))
        .args(["-Wl,-Bsymbolic", "-Wl,--exclude-libs,ALL", "-lpthread", "-latomic"]);
    tools::run(cmd, log, &format!("linking {}", out.display()))
}

/// Groups the generated files into translation units. Every file includes
/// verilated.h (about 1 s of parsing), so small files of one -O level are
/// compiled together, as Verilator's own `__ALL.cpp` does; big ones alone,
/// to spread them over the cores.
pub fn bundle(mdir: &Path, objdir: &Path, files: Vec<(String, String)>) -> Result<Vec<Unit>, String> {
    const ALONE: u64 = 128 * 1024;
    const BUNDLE: u64 = 512 * 1024;
    let unit = |src: PathBuf, obj: &str, opt: String, size: u64| Unit {
        src,
        obj: objdir.join(obj),
        opt,
        includes: vec![mdir.to_path_buf()],
        pch: None,
        size,
    };
    let mut units = Vec::new();
    let mut open: Vec<(String, Vec<String>, u64)> = Vec::new(); // per -O level: files, bytes
    let mut n = 0;
    let mut flush = |opt: String, group: Vec<String>, size: u64, units: &mut Vec<Unit>| -> Result<(), String> {
        let name = format!("kvf_bundle{n}_O{opt}.cpp");
        n += 1;
        let text: String = group.iter().map(|f| format!("#include \"{f}\"\n")).collect();
        std::fs::write(mdir.join(&name), text).map_err(|e| format!("write {name}: {e}"))?;
        units.push(unit(mdir.join(&name), &name.replace(".cpp", ".o"), opt, size));
        Ok(())
    };
    for (file, opt) in files {
        let size = std::fs::metadata(mdir.join(&file)).map_err(|e| format!("{file}: {e}"))?.len();
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
            flush(opt, group, size, &mut units)?;
        }
    }
    for (opt, group, size) in open {
        flush(opt, group, size, &mut units)?;
    }
    Ok(units)
}

/// The generated C++ files of a Verilated model in `mdir`, each with the
/// -O level of its kind (Verilator's split of per-cycle and run-once code).
pub fn generated_files(mdir: &Path, opt: &str, slow_opt: &str) -> Result<Vec<(String, String)>, String> {
    let mk = mdir.join("Vtop_classes.mk");
    let classes = std::fs::read_to_string(&mk).map_err(|e| format!("read {}: {e}", mk.display()))?;
    let mut files = Vec::new();
    let mut section = "";
    for line in classes.lines() {
        let t = line.trim().trim_end_matches('\\').trim();
        if let Some((var, _)) = t.split_once("+=") {
            section = var.trim();
            continue;
        }
        let o = match section {
            "VM_CLASSES_FAST" | "VM_SUPPORT_FAST" => opt,
            "VM_CLASSES_SLOW" | "VM_SUPPORT_SLOW" => slow_opt,
            _ => continue,
        };
        if !t.is_empty() && !t.starts_with('#') {
            files.push((format!("{t}.cpp"), o.to_string()));
        }
    }
    Ok(files)
}
