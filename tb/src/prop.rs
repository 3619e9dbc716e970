//! Property tests on one or more models, with waveforms of the failing case.
//!
//! Every case runs on fresh models, each reset for `RESET_CYCLES`. On
//! failure proptest shrinks the input; the minimal case is then run once
//! more on the same models built with VCD tracing (built on demand, so the
//! passing runs pay nothing for it), one waveform per model, written to
//! `<target>/vcd/<test>-<model>.vcd`.

use crate::info::ModelInfo;
use crate::model::Model;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// Reset cycles before each case (spec §1: one cycle resets every register).
pub const RESET_CYCLES: u32 = 1;

/// Where failing-case waveforms go: `$KVFORGE_VCD_DIR`, else `vcd/` in the
/// cargo target folder this crate was built in.
pub fn vcd_dir() -> PathBuf {
    match std::env::var_os("KVFORGE_VCD_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("KVFORGE_TARGET_DIR")).join("vcd"),
    }
}

pub fn vcd_path(test: &str, model: &ModelInfo) -> PathBuf {
    vcd_dir().join(format!("{test}-{}.vcd", model.name))
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(v.trim().parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

pub use sim::testgen::{cases, depth, full_depth};

/// Whether the RNG seed is fixed (`$KVFORGE_SEED` or `PROPTEST_RNG_SEED`),
/// so that a run replays another exactly.
pub fn seed_is_fixed() -> bool {
    env_u64("KVFORGE_SEED").is_some() || matches!(Config::default().rng_seed, RngSeed::Fixed(_))
}

/// RNG seed: `$KVFORGE_SEED`, else proptest's (`PROPTEST_RNG_SEED`, else
/// random); printed on failure.
fn config(cases: u32) -> (Config, u64) {
    let mut c = Config { failure_persistence: None, cases, ..Config::default() };
    let seed = match (env_u64("KVFORGE_SEED"), c.rng_seed) {
        (Some(s), _) => s,
        (None, RngSeed::Fixed(s)) => s,
        (None, RngSeed::Random) => {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
            );
            h.finish()
        }
    };
    c.rng_seed = RngSeed::Fixed(seed);
    (c, seed)
}

fn fresh(infos: &[&'static ModelInfo], seed: u32) -> Vec<Model> {
    infos
        .iter()
        .enumerate()
        .map(|(k, info)| {
            let mut m = Model::with_seed(info, seed.wrapping_add(k as u32));
            m.reset(RESET_CYCLES);
            m
        })
        .collect()
}

/// Runs `f` on `cases` random inputs from `strategy`, each on a fresh model
/// just out of reset. `f` returns `Err(message)` (or panics) on a mismatch.
/// The model's random initial state is part of the case and shrinks too.
///
/// On failure: prints the minimal input and the seed, re-runs it with a
/// VCD trace, prints "waveform of the failing case: <path>", and panics.
pub fn run_property<S>(
    test: &str,
    info: &'static ModelInfo,
    strategy: S,
    cases: u32,
    f: impl Fn(&mut Model, &S::Value) -> Result<(), String>,
) where
    S: Strategy,
    S::Value: Debug,
{
    run_property_on(test, &[info], strategy, cases, |m: &mut [Model], v| f(&mut m[0], v))
}

/// `cases` times the smallest `cases` scale of `infos` in tb/models.toml,
/// and times `PROVEN_NETLIST_SCALE` when every one of them is a netlist
/// that `make prove` proves (at least 1), unless `KVFORGE_CASES` fixes the
/// count.
fn scaled(cases: u32, infos: &[&'static ModelInfo]) -> u32 {
    if std::env::var_os("KVFORGE_CASES").is_some() {
        return cases;
    }
    let mut s = infos.iter().map(|i| crate::models::case_scale(i.name)).fold(1.0, f64::min);
    if infos.iter().all(|i| crate::models::is_proven_netlist(i.name)) {
        s *= crate::models::PROVEN_NETLIST_SCALE;
    }
    ((cases as f64 * s).ceil() as u32).max(1)
}

/// `run_property` over several models at once (a unit and what it feeds,
/// say): each case gets fresh instances of all of them, in the order of
/// `infos`, and a failure leaves one waveform per model.
pub fn run_property_on<S>(
    test: &str,
    infos: &[&'static ModelInfo],
    strategy: S,
    cases: u32,
    f: impl Fn(&mut [Model], &S::Value) -> Result<(), String>,
) where
    S: Strategy,
    S::Value: Debug,
{
    assert!(
        !test.is_empty() && test.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "test name '{test}' must be usable as a file name"
    );
    assert!(!infos.is_empty(), "{test}: no models to run on");
    let names: Vec<&str> = infos.iter().map(|i| i.name).collect();
    let on = names.join(" + ");
    let cases = scaled(cases, infos);
    let (config, rng_seed) = config(cases);
    let mut runner = TestRunner::new(config);
    let start = std::time::Instant::now();
    let result = runner.run(&(any::<u32>(), strategy), |(seed, input)| {
        let mut ms = fresh(infos, seed);
        f(&mut ms, &input).map_err(TestCaseError::fail)
    });
    let (reason, (seed, input)) = match result {
        Ok(()) => {
            // where a test's time goes (shown with --nocapture)
            println!("{test} on {on}: {cases} cases passed in {:.1} s", start.elapsed().as_secs_f64());
            return;
        }
        Err(TestError::Fail(reason, value)) => (reason, value),
        Err(TestError::Abort(reason)) => panic!("{test} on {on}: aborted: {reason}"),
    };
    eprintln!("{test} on {on}: failed: {reason}");
    eprintln!("minimal failing input (model seed {seed}): {input:#?}");
    eprintln!("reproduce with KVFORGE_SEED={rng_seed}");
    let rerun = match trace_rerun(test, infos, seed, |ms| f(ms, &input)) {
        Ok((paths, passed)) => {
            let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            for p in &list {
                eprintln!("waveform of the failing case: {p}");
            }
            if passed {
                format!(" (note: the traced re-run passed; traces {})", list.join(", "))
            } else {
                format!("\nwaveform of the failing case: {}", list.join(", "))
            }
        }
        Err(e) => format!(" (no waveform: {e})"),
    };
    panic!("{test} on {on}: {reason}{rerun}\nminimal failing input (model seed {seed}): {input:?}");
}

/// Re-runs a case on traced builds of `infos` (same names, same seeds);
/// returns the VCD paths and whether the re-run passed.
fn trace_rerun(
    test: &str,
    infos: &[&'static ModelInfo],
    seed: u32,
    f: impl Fn(&mut [Model]) -> Result<(), String>,
) -> Result<(Vec<PathBuf>, bool), String> {
    let mut ms = Vec::new();
    let mut paths = Vec::new();
    for (k, info) in infos.iter().enumerate() {
        let traced = info.with_trace()?;
        let path = vcd_path(test, info);
        let mut m = Model::with_seed(traced, seed.wrapping_add(k as u32));
        m.trace_to(&path).map_err(|e| e.to_string())?;
        m.reset(RESET_CYCLES);
        ms.push(m);
        paths.push(path);
    }
    let r = catch_unwind(AssertUnwindSafe(|| f(&mut ms)));
    drop(ms); // closes the VCDs
    Ok((paths, matches!(r, Ok(Ok(())))))
}
