//! Co-simulation of the Oaken quantization engine (hdl/src/oaken/quantizer.rs)
//! against its golden model (sim/src/oaken/quantizer.rs), bit for bit, at
//! every parameter set of tb/models.toml, on the RTL and on the OSU018
//! netlist. Spec: docs/spec.md §2.
//!
//! Cases come from `tb::oaken_cases`: realistic KV tokens with profiled
//! thresholds, tie and edge-case tokens, segments cut by resets, table writes
//! during traffic, stalls long enough to fill the token buffer. The coverage
//! points below are counted on every run and must all be reached.

use proptest::strategy::Just;
use sim::oaken::params::{CodeKind, Group, MiddleMode, OakenParams};
use sim::oaken::quantizer::{coded_value, folded_clamped, quantize_token_detail, ElementCode, GroupParams};
use sim::oaken::thresholds::ThresholdSet;
use sim::testgen;
use tb::coverage::Coverage;
use tb::oaken::{
    check_quantizer_segment, drive_quantizer, params_of, pulse_reset, run_quantizer_segment, sets_in_effect, QSegRun,
    QSegment, TableWrite,
};
use tb::oaken_cases::{self, CasePlan};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const POINTS: &[&str] = &[
    "tokens",
    "realistic tokens",
    "tie tokens",
    "edge-case tokens",
    "outer group empty",
    "outer group non-empty",
    "middle group empty",
    "middle group non-empty",
    "inner group empty",
    "inner group non-empty",
    "all-outlier token",
    "full COO segment (count = segment length)",
    "exact tie, outer",
    "exact tie, middle",
    "exact tie, inner",
    "zero step (max == min)",
    "nonfinite token",
    "layer out of range",
    "in_ready low",
    "buffer full behind a stalled output",
    "table write ok",
    "table write non-finite",
    "table write out of order",
    "table write layer out of range",
    "table write during traffic",
    "reset in flight",
];

/// Points only parameter sets with `heads > 1` reach.
const HEAD_POINTS: &[&str] =
    &["multi-head token", "head without outliers beside one with", "head with a short last segment"];

/// Points only `middle_mode = paper` sets reach (spec §2.5, §2.7): codes
/// the side rule moved, on either side and in either folded group, and a
/// lower value held at -65504.
const PAPER_POINTS: &[&str] = &[
    "paper: lower code clamped to z - 1",
    "paper: upper code clamped to z",
    "paper: outer code on the lower side",
    "paper: outer code on the upper side",
    "paper: middle code on the lower side",
    "paper: middle code on the upper side",
    "paper: folded value held at -65504",
    "paper: held value more than a step below the group minimum",
];

fn all_points() -> Vec<&'static str> {
    POINTS.iter().chain(HEAD_POINTS).chain(PAPER_POINTS).copied().collect()
}

/// A folded group's codes against the nearest code (spec §2.7).
fn paper_coverage(cov: &Coverage, p: &OakenParams, set: &ThresholdSet, x: &[u16], meta: &sim::oaken::format::Meta, detail: &[ElementCode]) {
    for (&e, d) in x.iter().zip(detail) {
        let c = d.class;
        if p.coding(c.group).kind != CodeKind::Folded {
            continue;
        }
        let units = sim::fp16::to_units(sim::fp16::sanitize(e).0);
        let v = coded_value(p, set, c, units);
        let near = GroupParams::from_meta(meta.groups[c.group as usize]).code(v);
        let side = if c.upper { "upper" } else { "lower" };
        let g = if c.group == Group::Outer { "outer" } else { "middle" };
        cov.hit(&format!("paper: {g} code on the {side} side"));
        if d.code != near {
            cov.hit(if c.upper { "paper: upper code clamped to z" } else { "paper: lower code clamped to z - 1" });
        }
        let held = folded_clamped(p, set, c, units);
        cov.hit_if("paper: folded value held at -65504", held);
        // the unheld n = (x - lo) - min is more than a step below zero: the
        // lane must code it as n = 0 (spec §2.14), which only such a value
        // tells apart from dividing n itself
        let gp = GroupParams::from_meta(meta.groups[c.group as usize]);
        let raw_n = units - set.units()[if c.group == Group::Outer { 0 } else { 1 }] - gp.min_units;
        cov.hit_if("paper: held value more than a step below the group minimum", held && -raw_n > gp.step_units);
    }
}

/// Counts what one token exercises, with the set it used.
fn token_coverage(cov: &Coverage, p: &OakenParams, set: &ThresholdSet, oob: bool, x: &[u16]) {
    let (q, detail) = quantize_token_detail(p, set, x);
    if p.middle_mode == MiddleMode::Paper {
        paper_coverage(cov, p, set, x, &q.meta, &detail);
    }
    let mut n = [0usize; 3];
    for d in &detail {
        n[d.class.group as usize] += 1;
    }
    for (g, name) in [(Group::Outer, "outer"), (Group::Middle, "middle"), (Group::Inner, "inner")] {
        let k = n[g as usize];
        cov.hit(&format!("{name} group {}", if k == 0 { "empty" } else { "non-empty" }));
        if k > 0 && q.meta.groups[g as usize].step == 0 {
            cov.hit("zero step (max == min)");
        }
    }
    cov.hit_if("all-outlier token", n[Group::Middle as usize] == 0);
    let full = (0..p.heads * p.segments()).any(|i| q.counts[i] as usize == p.segment_len(i % p.segments()));
    cov.hit_if("full COO segment (count = segment length)", full);
    if p.heads > 1 {
        cov.hit("multi-head token");
        let empty = q.coo.iter().any(Vec::is_empty);
        cov.hit_if("head without outliers beside one with", empty && q.coo.iter().any(|c| !c.is_empty()));
        cov.hit_if("head with a short last segment", p.head_dim % 64 != 0);
    }
    let ties = testgen::rounding_ties(p, set, x);
    cov.add("exact tie, outer", ties[0] as u64);
    cov.add("exact tie, middle", ties[1] as u64);
    cov.add("exact tie, inner", ties[2] as u64);
    cov.hit_if("nonfinite token", q.status.nonfinite);
    cov.hit_if("layer out of range", oob);
}

fn count_writes(cov: &Coverage, codes: impl IntoIterator<Item = u64>) {
    for c in codes {
        cov.hit(
            ["table write ok", "table write non-finite", "table write out of order", "table write layer out of range"]
                [c as usize],
        );
    }
}

/// Runs every segment of a case on `m` (a reset between segments), checks
/// each against `sim` and counts coverage.
fn run_case(m: &mut Model, p: &OakenParams, plan: &CasePlan, cov: &Coverage) -> Result<(), String> {
    for (k, s) in oaken_cases::materialize(p, plan).into_iter().enumerate() {
        let seg = segment_of(&s);
        let timeout = 20_000 + 400 * (seg.tokens.len() * p.beats()) as u64;
        let run = run_quantizer_segment(m, &seg, timeout).map_err(|e| format!("segment {k}: {e}"))?;
        check_quantizer_segment(p, &seg, &run).map_err(|e| format!("segment {k}: {e}"))?;
        count(cov, p, &seg, &run, &s.kinds);
        if !run.cut {
            pulse_reset(m, 1); // each segment starts from reset
        }
    }
    Ok(())
}

fn segment_of(s: &oaken_cases::Segment) -> QSegment {
    QSegment {
        prior: vec![],
        writes: s.writes.clone(),
        tokens: s.tokens.clone(),
        live: s.live.clone(),
        reset_at: s.reset_at,
        reset_cycles: s.reset_cycles,
        in_stall: s.stalls[0].clone(),
        out_stall: s.stalls[2].clone(),
        seed: s.seed,
    }
}

fn count(cov: &Coverage, p: &OakenParams, seg: &QSegment, run: &QSegRun, kinds: &[u8]) {
    let picks: Vec<(u8, bool)> = seg.tokens.iter().map(|t| (t.layer, t.v)).collect();
    let (codes, live_codes, sets) = sets_in_effect(p, &[], &seg.writes, &run.live, &run.first_edges, 0, &picks);
    count_writes(cov, codes.into_iter().chain(live_codes));
    // tokens whose every beat came out and was checked
    let done = run.beats.len() / p.beats();
    for (k, ((set, oob), t)) in sets.iter().zip(&seg.tokens).take(done).enumerate() {
        cov.hit("tokens");
        cov.hit(["realistic tokens", "tie tokens", "edge-case tokens"][kinds[k] as usize]);
        token_coverage(cov, p, set, *oob, &t.x);
    }
    cov.add("in_ready low", run.events.in_ready_low);
    cov.add("buffer full behind a stalled output", run.events.full_behind_stall);
    cov.add("table write during traffic", run.events.live_between_tokens);
    cov.hit_if("reset in flight", run.events.reset_in_flight);
}

fn check(info: &'static ModelInfo, test: &str, cases: u32, segments: usize, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    run_property(test, info, oaken_cases::case(&p, segments, false), cases, |m, plan| run_case(m, &p, plan, cov));
    let plan = oaken_cases::directed_case(&p, false);
    run_property(&format!("{test}_directed"), info, Just(plan), 1, |m, plan| run_case(m, &p, plan, cov));
}

/// Points only the hardware's timing decides (the directed case's stalls,
/// live write and reset reach them).
const HW_POINTS: &[&str] =
    &["in_ready low", "buffer full behind a stalled output", "table write during traffic", "reset in flight"];

/// The directed case alone, on `sim` (no hardware): at every parameter set
/// of tb/models.toml it reaches every point the model decides (the head
/// points where the set has them), so that no run's coverage hangs on the
/// random seed. Segments cut by a reset are left out (where they are cut
/// is the hardware's timing); the live write reloads the value already
/// there, so it counts wherever it lands.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    for (name, p) in oaken_cases::param_sets("oaken-quantizer", 7) {
        let cov = Coverage::new(&format!("oaken_quantizer directed case ({name})"), &all_points());
        for seg in oaken_cases::materialize(&p, &oaken_cases::directed_case(&p, false)) {
            if seg.reset_at.is_some() {
                continue;
            }
            let q = segment_of(&seg);
            let (_, beats) = tb::oaken::expected_quantizer(&p, &q.writes, &q.tokens);
            let run = QSegRun {
                live: q.live.iter().map(|(c, w)| (*c as u64, w.clone(), 0)).collect(),
                first_edges: (0..q.tokens.len() as u64).map(|k| 1_000_000 + k).collect(),
                beats,
                ..Default::default()
            };
            count(&cov, &p, &q, &run, &seg.kinds);
        }
        let heads = |q: &&str| match *q {
            "head with a short last segment" => p.heads > 1 && p.head_dim % 64 != 0,
            _ => p.heads > 1,
        };
        let paper = p.middle_mode == MiddleMode::Paper;
        let required: Vec<&str> = all_points()
            .into_iter()
            .filter(|q| !HW_POINTS.contains(q) && (!HEAD_POINTS.contains(q) || heads(q)))
            .filter(|q| paper || !PAPER_POINTS.contains(q))
            .collect();
        cov.check_points(&required);
    }
}

#[test]
fn rtl_matches_model() {
    let cov = Coverage::new("oaken_quantizer (default parameters, RTL)", &all_points());
    let run = || check(models::get("oaken_quantizer"), "oaken_quantizer_rtl", prop::cases(160), 3, &cov);
    run();
    cov.close(POINTS, run);
    cov.check_points(POINTS);
}

/// Every other parameter set of tb/models.toml, on RTL.
#[test]
fn parameter_sets_match_model() {
    let sets: Vec<_> =
        models::of_unit("oaken-quantizer", false).into_iter().filter(|m| m.name != "oaken_quantizer").collect();
    assert!(sets.len() >= 9, "tb/models.toml has {} non-default quantizer sets", sets.len());
    assert!(sets.iter().filter(|m| params_of(&Model::new(m)).middle_mode == MiddleMode::Paper).count() >= 3);
    let cov = Coverage::new(&format!("oaken_quantizer ({} parameter sets, RTL)", sets.len()), &all_points());
    // side by side: the sets are independent models
    tb::build::jobs::map(&sets, |&info| check(info, &format!("{}_rtl", info.name), prop::cases(64), 3, &cov));
    cov.check();
}

/// The OSU018 netlists of this run (`make synth`'s, at 4 ns): fewer cases,
/// so only the points every run must reach on a netlist are required.
#[test]
fn netlists_match_model() {
    let nets = models::of_unit("oaken-quantizer", true);
    assert!(nets.len() >= 2, "{} quantizer netlists in this run", nets.len());
    let cov = Coverage::new("oaken_quantizer (netlists)", &all_points());
    // 32 cases: with the l1 netlist proved (a quarter of them) and p4 the
    // only other netlist of every run, 20 gave 194 to 265 tokens, at the
    // floor below
    for info in nets {
        check(info, &info.name.to_string(), prop::cases(32), 2, &cov);
    }
    cov.check_points(&["tokens", "in_ready low", "buffer full behind a stalled output", "reset in flight"]);
    assert!(!prop::full_depth() || cov.count("tokens") >= 200, "at least 200 tokens on netlists");
}

fn realistic_writes(p: &OakenParams) -> Vec<TableWrite> {
    let pool = oaken_cases::pool(p, 7);
    pool.writes()
        .into_iter()
        .map(|(l, kv, raw)| TableWrite { layer: l as u8, v: kv == sim::oaken::thresholds::Kv::V, raw })
        .collect()
}

fn realistic_tokens(p: &OakenParams, n: usize) -> Vec<tb::oaken::Token> {
    let pool = oaken_cases::pool(p, 7);
    (0..n)
        .map(|i| {
            let (layer, v) = ((i / 2) % oaken_cases::real_layers(p) as usize, i % 2 == 1);
            let kv = if v { sim::oaken::thresholds::Kv::V } else { sim::oaken::thresholds::Kv::K };
            tb::oaken::Token { layer: layer as u8, v, x: pool.token(layer, kv, i).to_vec() }
        })
        .collect()
}

/// Spec §2.13 throughput and latency, at every parameter set: with the
/// input always valid and the output always ready, a beat goes in and a
/// beat comes out every cycle, with no bubble between tokens, and the first
/// output follows the first input by the latency the manifest states.
#[test]
fn sustains_one_beat_per_cycle() {
    for info in models::of_unit("oaken-quantizer", false) {
        let mut m = Model::new(info);
        let p = params_of(&m);
        m.reset(1);
        let tokens = realistic_tokens(&p, 12);
        let run = drive_quantizer(&mut m, &realistic_writes(&p), &tokens, &Stall::Never, &Stall::Never, 1)
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let n = run.in_cycles.len() as u64;
        assert_eq!(run.in_cycles.last().unwrap() - run.in_cycles[0], n - 1, "{}: input bubbles", info.name);
        assert_eq!(run.out_cycles.last().unwrap() - run.out_cycles[0], n - 1, "{}: output bubbles", info.name);
        let latency = run.out_cycles[0] - run.in_cycles[0];
        assert_eq!(Some(latency), info.latency(), "{}: latency", info.name);
        println!(
            "{}: {} tokens, {} elements/cycle sustained, latency {latency} cycles",
            info.name,
            tokens.len(),
            p.lanes
        );
    }
}

/// Spec §2.13: a table write sampled at the edge where a token's first beat
/// is accepted applies to that token; one sampled a cycle later does not.
#[test]
fn table_write_takes_effect_at_the_first_beat() {
    let info = models::get("oaken_quantizer");
    let p = params_of(&Model::new(info));
    let set = |s: f32| TableWrite::of(0, false, testgen::realistic_thresholds(s));
    let (old, new) = (set(1.0), set(0.25));
    let tok = &realistic_tokens(&p, 1)[0];
    for delay in 0..3u32 {
        let mut m = Model::new(info);
        m.reset(1);
        let seg = QSegment {
            live: vec![(delay, new.clone())],
            ..QSegment::plain(vec![old.clone()], vec![tok.clone()], Stall::Never, Stall::Never, 3)
        };
        let run = run_quantizer_segment(&mut m, &seg, 5000).unwrap();
        check_quantizer_segment(&p, &seg, &run).unwrap();
        // the rule check_quantizer_segment applied, stated directly
        assert_eq!(run.first_edges, vec![0], "the first beat is taken in the first stream cycle");
        let used = if delay == 0 { &new } else { &old };
        let t = ThresholdSet::new(used.raw).unwrap();
        let q = sim::oaken::quantizer::quantize_token(&p, &t, &tok.x);
        assert_eq!(run.beats[0].meta, tb::oaken::meta_bytes(&q.meta), "write {delay} cycles after the first beat");
    }
}

/// Spec §2.13 reset: a reset in the middle of a token loses what is in
/// flight, clears the table, and the engine then streams as from power-up.
#[test]
fn reset_mid_token_restarts_cleanly() {
    let info = models::get("oaken_quantizer");
    let p = params_of(&Model::new(info));
    let writes = realistic_writes(&p);
    let tokens = realistic_tokens(&p, 6);
    for at in [1u32, 3, p.beats() as u32 + 2, 40] {
        let mut m = Model::new(info);
        m.reset(1);
        let cut = QSegment {
            reset_at: Some(at),
            ..QSegment::plain(writes.clone(), tokens.clone(), Stall::Never, Stall::Random { p: 100 }, 5)
        };
        let run = run_quantizer_segment(&mut m, &cut, 5000).unwrap();
        assert!(run.cut);
        check_quantizer_segment(&p, &cut, &run).unwrap();
        // after the reset: the table is back to all zeros (no writes) ...
        let after = QSegment::plain(vec![], tokens[..2].to_vec(), Stall::Never, Stall::Never, 6);
        let run2 = run_quantizer_segment(&mut m, &after, 5000).unwrap();
        check_quantizer_segment(&p, &after, &run2).unwrap_or_else(|e| panic!("reset at {at}: {e}"));
        // ... and with the thresholds written again, the stream is as before
        let again = QSegment::plain(writes.clone(), tokens.clone(), Stall::Never, Stall::Never, 7);
        let run3 = run_quantizer_segment(&mut m, &again, 5000).unwrap();
        check_quantizer_segment(&p, &again, &run3).unwrap_or_else(|e| panic!("reset at {at}: {e}"));
    }
}

#[test]
fn model_list_has_the_default_engine() {
    let m = models::get("oaken_quantizer");
    assert!(!m.gate_level);
    assert_eq!(params_of(&Model::new(m)), OakenParams::default());
}
