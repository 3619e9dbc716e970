//! The generator fingerprint: a hash of every source that shapes what
//! rtl-gen emits (`hdl`, `rtl-gen`, `sim`, the constraint templates, the
//! lock file and the compiler version). It keys the emission cache of
//! `src/build/emit.rs`; the models themselves are keyed by their Verilog.
//! Co-simulation models are not built here but on demand, at run time.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let tb = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = tb.parent().unwrap().to_path_buf();
    let mut list = Vec::new();
    for d in ["hdl/src", "rtl-gen/src", "sim/src", "constraints"] {
        files(&root.join(d), &mut list);
    }
    // Of constraints/, only the files rtl-gen embeds (`*.in`, the lint
    // waivers, the clock gate's Verilog) shape its output; the scripts
    // beside them (synthesis, proofs, PPA) run on that output and must not
    // re-key it.
    list.retain(|p| {
        !p.starts_with(root.join("constraints"))
            || p.extension().is_some_and(|e| e == "in" || e == "vlt" || e == "v")
    });
    // relative to this package, as rtl-gen/build.rs says why
    let rel = |p: &Path| Path::new("..").join(p.strip_prefix(&root).unwrap_or(p));
    for p in &list {
        println!("cargo:rerun-if-changed={}", rel(p).display());
    }
    // (a new source file takes an edit of a listed one to be used: a `mod`
    // or an `include_str!`; a folder here would rerun this for any script)
    for f in ["Cargo.lock", "hdl/Cargo.toml", "rtl-gen/Cargo.toml", "rtl-gen/build.rs", "sim/Cargo.toml"] {
        println!("cargo:rerun-if-changed=../{f}");
        list.push(root.join(f));
    }
    list.sort();
    // FNV-1a over (path relative to the workspace, length, bytes) per file:
    // no dependency needed, and a clash only costs a missed re-elaboration
    // in a 128-bit space.
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u128;
            h = h.wrapping_mul(0x0000000001000000000000000000013B);
        }
    };
    for p in &list {
        let rel = p.strip_prefix(&root).unwrap_or(p).to_string_lossy().into_owned();
        let bytes = std::fs::read(p).unwrap_or_default();
        eat(rel.as_bytes());
        eat(&(bytes.len() as u64).to_le_bytes());
        eat(&bytes);
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc).arg("-vV").output().map(|o| o.stdout).unwrap_or_default();
    eat(&version);
    let profile = std::env::var("PROFILE").unwrap_or_default();
    eat(profile.as_bytes());
    println!("cargo:rustc-env=KVFORGE_GEN_FINGERPRINT={h:032x}");

    // $OUT_DIR is <target>/<profile>/build/tb-<hash>/out; waveforms of failing
    // property tests go under <target>/vcd.
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let target = out.ancestors().nth(4).unwrap_or(&out);
    println!("cargo:rustc-env=KVFORGE_TARGET_DIR={}", target.display());
    println!("cargo:rerun-if-changed=build.rs");
}
