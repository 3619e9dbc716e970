//! `rtl-gen params`: the table of every unit lists exactly the keys its
//! parameter struct accepts, with the struct's defaults, and every range in
//! it is enforced, by `rtl-gen emit` for the small units and by the checks
//! that `emit` runs first (`units::validate`) for all of them.

use rtl_gen::units::{self, DivConstParams, MulParams, NoParams, PrunerParams, ShifterParams};
use rtl_gen::units::{
    DivRoundParams, FoldZeroParams, HackDeqParams, HackDotParams, HackPvParams, HackQuantParams, KiviDeqParams, PackKvDecParams, PackKvEncParams, PackKvQuantParams, TitanusDeqParams,
    TitanusQuantParams,
};
use serde_json::Value as Json;
use sim::param_def::{Allowed, ParamDef};
use std::collections::BTreeSet;
use std::process::{Command, Output};

fn rtl_gen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtl-gen")).args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = rtl_gen(args);
    assert!(out.status.success(), "rtl-gen {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Unit names, from `rtl-gen list`.
fn units_listed() -> Vec<String> {
    let text = stdout(&["list"]);
    text.lines().skip(1).map(|l| l.split_whitespace().next().unwrap().to_string()).collect()
}

/// The serialised parameter struct of `unit`: its default, and one with
/// every optional field set (so that its key shows).
fn structs(unit: &str) -> (Json, Json) {
    fn j<T: serde::Serialize>(v: &T) -> Json {
        serde_json::to_value(v).unwrap()
    }
    match unit {
        "oaken-quantizer" | "oaken-dequantizer" => {
            let d = j(&sim::oaken::params::OakenParams::default());
            (d.clone(), d)
        }
        "oaken-mmu" => {
            let d = j(&sim::oaken::mmu::MmuParams::default());
            (d.clone(), d)
        }
        "titanus-pruner" => (j(&PrunerParams::default()), j(&PrunerParams::default())),
        "titanus-dequantizer" => (j(&TitanusDeqParams::default()), j(&TitanusDeqParams::default())),
        "titanus-quantizer" => (j(&TitanusQuantParams::default()), j(&TitanusQuantParams::default())),
        "zero-remove-shifter" | "zero-insert-shifter" => (j(&ShifterParams::default()), j(&ShifterParams::default())),
        "mul-pipe" => (j(&MulParams::default()), j(&MulParams::default())),
        "div-round" => (j(&DivRoundParams::default()), j(&DivRoundParams::default())),
        "fold-zero" => (j(&FoldZeroParams::default()), j(&FoldZeroParams::default())),
        "kivi-dequantizer" => (j(&KiviDeqParams::default()), j(&KiviDeqParams::default())),
        "hack-qk-dot" => (j(&HackDotParams::default()), j(&HackDotParams::default())),
        "hack-deq-dot" => (j(&HackDeqParams::default()), j(&HackDeqParams::default())),
        "hack-pv-dot" => (j(&HackPvParams::default()), j(&HackPvParams::default())),
        "hack-quantizer" => (j(&HackQuantParams::default()), j(&HackQuantParams::default())),
        "kivi-quantizer" => {
            let d = j(&sim::kivi::params::KiviParams::default());
            (d.clone(), d)
        }
        "div-const" => {
            (j(&DivConstParams::default()), j(&DivConstParams { per_stage: Some(6), ..Default::default() }))
        }
        "packkv-encoder" => (j(&PackKvEncParams::default()), j(&PackKvEncParams::default())),
        "packkv-quantizer" => (j(&PackKvQuantParams::default()), j(&PackKvQuantParams::default())),
        "packkv-decoder" => (j(&PackKvDecParams::default()), j(&PackKvDecParams::default())),
        "fp16-convert" => (j(&NoParams::default()), j(&NoParams::default())),
        _ => panic!("unit {unit} is not known to this test: add its parameter struct"),
    }
}

/// (name, default) rows of `rtl-gen params UNIT`.
fn printed(unit: &str) -> Vec<(String, String)> {
    let text = stdout(&["params", unit]);
    let mut lines = text.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with(&format!("{unit} (spec ")), "{text}");
    let mut rows = Vec::new();
    for l in lines.take_while(|l| *l != "rules:") {
        let mut w = l.split_whitespace();
        let (name, default) = (w.next().unwrap().to_string(), w.next().unwrap().to_string());
        if name != "parameter" {
            rows.push((name, default));
        }
    }
    rows
}

#[test]
fn params_lists_the_struct_keys_and_defaults() {
    let units = units_listed();
    assert_eq!(units.len(), units::UNITS.len());
    for u in &units {
        let (default, full) = structs(u);
        let rows = printed(u);
        let keys: BTreeSet<&str> = full.as_object().unwrap().keys().map(String::as_str).collect();
        let names: BTreeSet<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, keys, "{u}: rtl-gen params against the struct's keys");
        assert_eq!(names.len(), rows.len(), "{u}: a parameter listed twice");
        for (name, d) in &rows {
            let want = match default.get(name) {
                None => "unset".to_string(),
                Some(Json::String(s)) => s.clone(),
                Some(v) => v.to_string(),
            };
            assert_eq!(d, &want, "{u}: default of {name}");
        }
    }
    let out = rtl_gen(&["params", "no-such-unit"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("rtl-gen: error: unknown unit 'no-such-unit'"));
}

/// Settings that keep the rules between parameters when `name` is `v`.
fn companions(unit: &str, name: &str, v: &toml::Value) -> Vec<(&'static str, toml::Value)> {
    let i = |x: i64| toml::Value::Integer(x);
    let n = v.as_integer().unwrap_or(0);
    match (unit, name, n) {
        ("oaken-quantizer" | "oaken-dequantizer", "head-dim", 1) => vec![("lanes", i(1))],
        ("oaken-quantizer" | "oaken-dequantizer", "inlier-bits", _) => vec![("outlier-bits", i(n + 1))],
        ("oaken-quantizer" | "oaken-dequantizer", "outlier-bits", _) => vec![("inlier-bits", i(n - 1))],
        ("oaken-mmu", "addr-bits", 7) => vec![("phys-pages", i(2)), ("page-bytes", i(64))],
        (_, "channels", 1) => vec![("lanes", i(1))],
        // KIVI: axis token needs group | head-dim, and a beat never spans two groups
        ("kivi-dequantizer", "head-dim", 1) => vec![("axis", toml::Value::String("channel".into())), ("lanes", i(1))],
        ("kivi-dequantizer" | "kivi-quantizer", "lanes", 64) => vec![("group", i(64))],
        ("kivi-quantizer", "head-dim", 16) => vec![("group", i(16))],
        // the encoder: lanes (r + wb) <= 128 for K and V
        ("packkv-encoder", "head-dim", _) => vec![("lanes", i(1))],
        ("packkv-encoder", "k-levels" | "v-levels", 255) => vec![("lanes", i(8))],
        ("packkv-encoder", "lanes", 32) => vec![("k-levels", i(2)), ("v-levels", i(2))],
        // PackKV: lanes divides head-dim
        ("packkv-quantizer", "head-dim", _) => vec![("lanes", i(1))],
        ("packkv-quantizer", "lanes", _) => vec![("head-dim", i(2 * n.max(1)))],
        // packkv-decoder: also lanes x r <= 128 (r = 2 at levels 3); its
        // other parameters at burst 1, whose rules they alone decide (burst
        // 2's own rules: tests/packkv_decoder.rs)
        ("packkv-decoder", "head-dim", _) => vec![("lanes", i(1)), ("burst", i(1))],
        ("packkv-decoder", "lanes", _) => vec![("head-dim", i(2 * n.max(1))), ("levels", i(3)), ("burst", i(1))],
        ("packkv-decoder", "burst", _) => vec![],
        ("packkv-decoder", _, _) => vec![("burst", i(1))],
        // HACK: a partition is at most head-dim and divides it
        ("hack-qk-dot" | "hack-deq-dot", "head-dim", 16) => vec![("partition", i(16))],
        // hack-pv-dot: the same, and lanes divides partition
        ("hack-pv-dot", "head-dim", 16) => vec![("partition", i(16))],
        ("hack-pv-dot", "partition", 256) => vec![("head-dim", i(256))],
        ("hack-pv-dot", "lanes", 256) => vec![("partition", i(256)), ("head-dim", i(256))],
        ("hack-qk-dot" | "hack-deq-dot", "partition", 256) => vec![("head-dim", i(256))],
        ("hack-quantizer", "head-dim", 16) => vec![("partition", i(16)), ("lanes", i(16))],
        ("hack-quantizer", "partition", 256) => vec![("head-dim", i(256))],
        ("hack-quantizer", "lanes", 256) => vec![("partition", i(256)), ("head-dim", i(256))],
        _ => vec![],
    }
}

/// `name = v`, with its companions when `v` is in range (out of range,
/// `v` alone must be what fails).
fn table(unit: &str, name: &str, v: &toml::Value, good: bool) -> toml::Table {
    let mut t = toml::Table::new();
    if good {
        for (k, x) in companions(unit, name, v) {
            t.insert(k.into(), x);
        }
    }
    t.insert(name.into(), v.clone());
    t
}

/// In-range edge values and out-of-range values of a parameter.
fn edges(d: &ParamDef) -> (Vec<toml::Value>, Vec<toml::Value>) {
    let i = |x: u64| toml::Value::Integer(x as i64);
    match d.allowed {
        Allowed::Range(lo, hi) => {
            let mut bad = vec![i(hi + 1)];
            if lo > 0 {
                bad.push(i(lo - 1));
            }
            (vec![i(lo), i(hi)], bad)
        }
        Allowed::Pow2(lo, hi) => {
            let mut bad = vec![i(hi * 2), i(hi + 1)];
            if lo > 1 {
                bad.push(i(lo / 2));
            }
            if lo < 3 && hi > 3 {
                bad.push(i(3));
            }
            (vec![i(lo), i(hi)], bad)
        }
        Allowed::Ints(s) => {
            let max = *s.iter().max().unwrap();
            let gap = (1..max).find(|x| !s.contains(x)).unwrap();
            (vec![i(s[0]), i(max)], vec![i(max + 1), i(gap)])
        }
        Allowed::Names(s) => {
            (s.iter().map(|x| toml::Value::String(x.to_string())).collect(), vec![toml::Value::String("bogus".into())])
        }
    }
}

/// Units whose emission takes well under a second: checked through
/// `rtl-gen emit` too.
const SMALL: &[&str] =
    &["mul-pipe", "div-round", "fold-zero", "div-const", "zero-remove-shifter", "zero-insert-shifter"];

fn cli_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("\"{s}\""),
        v => v.to_string(),
    }
}

#[test]
fn every_range_is_enforced() {
    let scratch = std::env::temp_dir().join(format!("kvforge-params-{}", std::process::id()));
    let mut checked = 0;
    for u in units::UNITS.iter().map(|u| u.name) {
        for d in units::param_table(u).unwrap().defs {
            let (good, bad) = edges(&d);
            for v in &bad {
                let e = units::validate(u, &table(u, d.name, v, false)).expect_err(&format!("{u}: {} = {v} accepted", d.name)).0;
                let named = e.strip_prefix(&format!("{u}: ")).unwrap_or("");
                let named = named.split_once("`: ").map_or(named, |(_, rest)| rest);
                assert!(named.starts_with(&format!("{} must be ", d.name)), "{u} {} = {v}: {e}", d.name);
                assert!(!e.contains('\n'), "{e}");
                checked += 1;
            }
            // the upper edge's error names the table's range
            let e = units::validate(u, &table(u, d.name, &bad[0], false)).unwrap_err().0;
            assert!(e.contains(&format!("{} must be {}", d.name, d.allowed)), "{u}: {e}");
            for v in &good {
                units::validate(u, &table(u, d.name, v, true)).unwrap_or_else(|e| panic!("{u}: {} = {v}: {e}", d.name));
                checked += 1;
            }
            if !SMALL.contains(&u) {
                continue;
            }
            // through the command line: exit 2, one line, no files
            let set = |v: &toml::Value, good: bool| {
                let mut a: Vec<String> = vec!["emit".into(), u.into(), "-o".into(), scratch.display().to_string()];
                for (k, x) in companions(u, d.name, v).into_iter().filter(|_| good) {
                    a.extend(["--set".into(), format!("{k}={}", cli_value(&x))]);
                }
                a.extend(["--set".into(), format!("{}={}", d.name, cli_value(v))]);
                a
            };
            let args = set(&bad[0], false);
            let out = rtl_gen(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.starts_with(&format!("rtl-gen: error: {u}: ")), "{err}");
            assert!(err.contains(&format!("{} must be {}", d.name, d.allowed)), "{err}");
            assert!(!scratch.exists(), "{args:?} wrote files");
            let args = set(&good[0], true);
            let out = rtl_gen(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    // every table has entries to check (fp16-convert has none)
    assert!(checked > 100, "{checked} values checked");
}

#[test]
fn emit_flags_have_help() {
    let help = stdout(&["emit", "--help"]);
    let flags = ["head-dim", "lanes", "inlier-bits", "outlier-bits", "layers", "middle-mode", "width", "pipeline", "code-bits"];
    for flag in flags {
        let line = help.lines().find(|l| l.trim_start().starts_with(&format!("--{flag} "))).unwrap();
        // the help names the units that have the parameter, from their tables
        for u in units::UNITS.iter().map(|u| u.name) {
            let has = units::param_table(u).unwrap().defs.iter().any(|d| d.name == flag);
            assert_eq!(line.contains(&format!(" {u}")), has, "--{flag} and {u}: {line}");
        }
    }
}

/// `hack-pv-dot`'s rules between parameters: one line naming them, exit 2.
#[test]
fn hack_pv_dot_rules() {
    for (sets, want) in [
        (&["partition=16", "lanes=32"][..], "hack-pv-dot: lanes (32) must divide partition (16)"),
        (&["partition=40"][..], "hack-pv-dot: partition must be a multiple of 16 (paper §5.3), got 40"),
        (&["head-dim=64", "partition=128"][..], "hack-pv-dot: partition (128) must be at most head-dim (64)"),
        (&["head-dim=96", "partition=64"][..], "hack-pv-dot: partition (64) must divide head-dim (96)"),
    ] {
        let mut args = vec!["emit", "hack-pv-dot", "-o", "/nonexistent/kvforge-pv"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let out = rtl_gen(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("rtl-gen: error: {want}")), "{err}");
    }
}
