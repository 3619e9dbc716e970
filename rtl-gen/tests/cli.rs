//! `rtl-gen emit` on the command line: the files each form writes, and
//! one-line errors for bad flow flags. The folders' contents are checked
//! with the tools in tb/tests/flows.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rtl_gen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtl-gen")).args(args).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvforge-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn emit_into(dir: &Path, unit: &str, extra: &[&str]) -> Vec<String> {
    let d = dir.to_str().unwrap();
    let mut args = vec!["emit", unit, "-o", d];
    args.extend_from_slice(extra);
    let out = rtl_gen(&args);
    assert!(out.status.success(), "rtl-gen {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    listing(dir)
}

#[test]
fn files_per_flow() {
    let root = scratch("files");
    let m = "oaken_mmu";
    let plain = emit_into(&root.join("plain"), "oaken-mmu", &[]);
    let want: Vec<String> =
        ["f", "json", "sdc", "sta.tcl", "v", "yosys.tcl"].iter().map(|x| format!("{m}.{x}")).collect();
    assert_eq!(plain, want);
    for p in ["sky130hd", "nangate45"] {
        let orfs = emit_into(&root.join(p), "oaken-mmu", &["--flow", "orfs", "--platform", p]);
        assert_eq!(orfs, ["config.mk", "constraint.sdc", "oaken_mmu.json", "oaken_mmu.v", "oaken_mmu_memories.v"]);
        let config = std::fs::read_to_string(root.join(p).join("config.mk")).unwrap();
        assert!(config.contains(&format!("export PLATFORM      = {p}\n")), "{config}");
    }
    // no --platform: sky130hd
    emit_into(&root.join("default"), "oaken-mmu", &["--flow", "orfs", "--clock-ns", "2.5"]);
    let config = std::fs::read_to_string(root.join("default").join("config.mk")).unwrap();
    assert!(config.contains("export PLATFORM      = sky130hd\n") && config.contains("ABC_CLOCK_PERIOD_IN_PS = 2500\n"));
    let sdc = std::fs::read_to_string(root.join("default").join("constraint.sdc")).unwrap();
    assert!(sdc.contains("set clk_period    2.500\n") && sdc.contains("set clk_port_name clock\n"), "{sdc}");
    // a unit without memories has no memories file
    let orfs = emit_into(&root.join("mul"), "mul-pipe", &["--flow", "orfs"]);
    assert_eq!(orfs, ["config.mk", "constraint.sdc", "mul_pipe.json", "mul_pipe.v"]);
    let core = emit_into(&root.join("core"), "oaken-mmu", &["--flow", "fusesoc"]);
    assert_eq!(core, ["lint_waivers.vlt", "oaken-mmu.core", "oaken_mmu.json", "oaken_mmu.v", "oaken_mmu_memories.v"]);
    let text = std::fs::read_to_string(root.join("core").join("oaken-mmu.core")).unwrap();
    assert!(text.starts_with("CAPI=2:\n"));
    assert!(text.contains(&format!("\nname: kvforge:kvforge:oaken-mmu:{}\n", env!("CARGO_PKG_VERSION"))));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn bad_flags_one_line() {
    let root = scratch("bad");
    let d = root.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--flow", "orfs", "--platform", "asap7"],
            "unknown ORFS platform 'asap7' (platforms: sky130hd, nangate45)",
        ),
        (vec!["--platform", "nangate45"], "--platform applies to --flow orfs only"),
        (vec!["--flow", "fusesoc", "--platform", "sky130hd"], "--platform applies to --flow orfs only"),
        (vec!["--flow", "yosys"], "unknown flow 'yosys' (flows: orfs, fusesoc)"),
        (vec!["--flow", "orfs", "--width", "0"], "mul-pipe"),
    ] {
        let mut a = vec!["emit", "mul-pipe", "-o", d];
        a.extend_from_slice(&args);
        let out = rtl_gen(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.starts_with("rtl-gen: error: ") && err.contains(want), "{a:?}: {err}");
        assert!(!root.exists(), "{a:?} wrote files");
    }
}

/// `paper` mode (spec §2.5) is emitted by both Oaken engines, and its
/// manifest says so; `shifted` at two inlier bits is still refused (one
/// bit for the side would leave one for the magnitude), in one line.
#[test]
fn paper_mode_emits_and_shifted_needs_three_bits() {
    let root = scratch("paper");
    let d = root.to_str().unwrap();
    for unit in ["oaken-quantizer", "oaken-dequantizer"] {
        let out = rtl_gen(&["emit", unit, "-o", d, "--middle-mode", "paper", "--lanes", "4", "--head-dim", "32"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{unit}: {err}");
        let stem = unit.replace('-', "_");
        let manifest = std::fs::read_to_string(root.join(format!("{stem}.json"))).unwrap();
        assert!(manifest.contains("\"paper\""), "{unit}: {manifest}");
        let _ = std::fs::remove_dir_all(&root);
        let out = rtl_gen(&["emit", unit, "-o", d, "--middle-mode", "shifted", "--inlier-bits", "2", "--outlier-bits", "3"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{unit}: {err}");
        assert_eq!(err.lines().count(), 1, "{unit}: {err}");
        assert!(err.contains(">= 3"), "{unit}: {err}");
        assert!(!root.exists(), "{unit} wrote files");
    }
}

/// `hack-quantizer` with `axis = channel` (spec §15.16.6): the engine's
/// two limits are one-line errors with exit 2, and nothing is written.
#[test]
fn hack_quantizer_channel_limits_one_line() {
    let root = scratch("hack-ch");
    let d = root.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--set", "partition=256", "--head-dim", "256"],
            "hack-quantizer: partition must be at most 128 with axis channel (KIVI's channel engine), got 256",
        ),
        (vec!["--lanes", "64"], "hack-quantizer: lanes must be at most 32 with axis channel (sums beside the words), got 64"),
        (vec!["--set", "partition=40"], "partition must be a multiple of 16"),
    ] {
        let mut a = vec!["emit", "hack-quantizer", "--set", "axis=\"channel\"", "-o", d];
        a.extend_from_slice(&args);
        let out = rtl_gen(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.starts_with("rtl-gen: error: ") && err.contains(want), "{a:?}: {err}");
        assert!(!root.exists(), "{a:?} wrote files");
    }
}
