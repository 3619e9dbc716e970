//! C++ compilation of the Verilated models. Each file gets its own -O level
//! (hot per-cycle code vs. run-once code, RTL vs. gate level), the files run
//! longest-first across all cores, and the objects go into one static
//! library. The compiler and base flags come from the `cc` crate, so CXX,
//! CXXFLAGS and cross targets work as usual.

use crate::pool;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One translation unit.
pub struct Unit {
    pub src: PathBuf,
    pub obj: PathBuf,
    pub opt: String,
    pub includes: Vec<PathBuf>,
    /// Bytes of source, bundled files included (for scheduling).
    pub size: u64,
}

pub struct Compiler {
    tool: cc::Tool,
    flags: Vec<String>,
}

impl Compiler {
    pub fn new(vl_include: &Path) -> Self {
        let tool = cc::Build::new()
            .cpp(true)
            .opt_level(0)
            // Debug info for multi-megabyte generated files costs minutes.
            .debug(false)
            .warnings(false)
            .get_compiler();
        // Verilator's own flags (verilated.mk) for a --trace VCD build.
        let mut flags: Vec<String> = [
            "-std=gnu++17",
            "-faligned-new",
            "-fcf-protection=none",
            "-w",
            "-DVM_COVERAGE=0",
            "-DVM_SC=0",
            "-DVM_TRACE=1",
            "-DVM_TRACE_FST=0",
            "-DVM_TRACE_VCD=1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        flags.push(format!("-I{}", vl_include.display()));
        flags.push(format!("-I{}", vl_include.join("vltstd").display()));
        Compiler { tool, flags }
    }

    /// Everything that changes an object besides its source (cache key part).
    pub fn identity(&self) -> String {
        let v = Command::new(self.tool.path()).arg("--version").output().map(|o| o.stdout).unwrap_or_default();
        format!(
            "{} {:?} {:?} {}",
            self.tool.path().display(),
            self.tool.args(),
            self.flags,
            String::from_utf8_lossy(&v).lines().next().unwrap_or("")
        )
    }

    /// Compiles one unit; returns the seconds it took.
    fn compile(&self, u: &Unit) -> f64 {
        let t = std::time::Instant::now();
        let mut cmd = self.tool.to_command();
        cmd.args(&self.flags);
        for i in &u.includes {
            cmd.arg(format!("-I{}", i.display()));
        }
        cmd.arg(format!("-O{}", u.opt)).arg("-c").arg(&u.src).arg("-o").arg(&u.obj);
        let out = cmd.output().unwrap_or_else(|e| panic!("cannot start the C++ compiler: {e}"));
        if !out.status.success() {
            panic!(
                "C++ compile of {} failed ({}); command {cmd:?}\n{}{}",
                u.src.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        t.elapsed().as_secs_f64()
    }

    /// Compiles `units` on all cores, biggest source first; returns a
    /// report line per unit (seconds, -O level, size, file).
    pub fn compile_all(&self, mut units: Vec<Unit>) -> Vec<String> {
        units.sort_by_key(|u| std::cmp::Reverse(u.size));
        let secs = pool::map(&units, |u| self.compile(u));
        units
            .iter()
            .zip(secs)
            .map(|(u, s)| format!("{s:6.2} s  -O{}  {:>8} B  {}", u.opt, u.size, u.src.display()))
            .collect()
    }

    /// Archives `objs` into `<dir>/lib<name>.a` and tells cargo to link it
    /// with the C++ runtime and the threading libraries Verilator needs.
    pub fn archive(&self, dir: &Path, name: &str, objs: &[PathBuf]) {
        let lib = dir.join(format!("lib{name}.a"));
        let _ = std::fs::remove_file(&lib);
        let mut ar = cc::Build::new().get_archiver();
        ar.arg("crs").arg(&lib).args(objs);
        let st = ar.status().unwrap_or_else(|e| panic!("cannot start the archiver: {e}"));
        assert!(st.success(), "archiving {} failed: {st}", lib.display());
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={name}");
        println!("cargo:rustc-link-lib=dylib=stdc++");
        println!("cargo:rustc-link-lib=dylib=pthread");
        println!("cargo:rustc-link-lib=dylib=atomic");
    }
}
