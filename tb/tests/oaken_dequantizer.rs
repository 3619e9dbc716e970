//! Co-simulation of the Oaken dequantization engine
//! (hdl/src/oaken/dequantizer.rs) against its model
//! (sim/src/oaken/dequantizer.rs), bit for bit, at every parameter set of
//! tb/models.toml, on the RTL and on the OSU018 netlist. Spec: docs/spec.md §4.
//!
//! Records are what the quantizer writes for `tb::oaken_cases` tokens
//! (realistic, tie, edge-case), some damaged in each way spec §4.3 defines
//! and cut into sparse beats of any size; sparse lanes at and past
//! `s_count` carry noise; segments end in resets and carry table writes
//! during traffic, under stalls on the dense input, the sparse input and the
//! output.

use proptest::prelude::*;
use sim::oaken::dequantizer::{pack_sparse, split_sparse, SparseBeat};
use sim::oaken::params::{OakenParams, SEGMENT};
use sim::oaken::thresholds::Kv;
use sim::testgen;
use tb::coverage::Coverage;
use tb::oaken::{params_of, pulse_reset, sets_in_effect, TableWrite, Token};
use tb::oaken_cases::{self, CasePlan};
use tb::oaken_dequantizer::{
    check_dequantizer_segment, drive_dequantizer, expected_dequantizer, malformed, records_of, run_dequantizer_segment,
    DSegRun, DSegment, DStalls, Record,
};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const POINTS: &[&str] = &[
    "tokens",
    "realistic tokens",
    "tie tokens",
    "edge-case tokens",
    "well-formed record",
    "malformed: entry never taken",
    "malformed: list shorter than the counts",
    "malformed: count over segment length",
    "malformed: beat count over lanes",
    "token with no outliers",
    "all-outlier token",
    "unpacked sparse record",
    "sparse beat with ignored lanes (noise)",
    "layer out of range",
    "d_ready low",
    "s_ready low",
    "input held off behind a stalled output",
    "table write ok",
    "table write non-finite",
    "table write out of order",
    "table write layer out of range",
    "table write during traffic",
    "reset in flight",
];

/// How a token's sparse record is damaged (spec §4.3's malformed cases).
#[derive(Clone, Debug)]
enum Damage {
    None,
    Drop(usize),
    Duplicate(usize),
    Swap(usize),
    SetIdx(usize, u8),
    Extra(u8),
    Count(usize, u8),
    BeatCount(usize, u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        14 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Drop),
        1 => any::<usize>().prop_map(Damage::Duplicate),
        1 => any::<usize>().prop_map(Damage::Swap),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Damage::SetIdx(i, v)),
        1 => any::<u8>().prop_map(Damage::Extra),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(s, c)| Damage::Count(s, c)),
        1 => (any::<usize>(), 1u8..=255).prop_map(|(b, c)| Damage::BeatCount(b, c)),
    ]
}

/// Sparse beat sizes: packed (the memory layout) or any pattern.
fn split(lanes: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![3 => Just(Vec::new()), 1 => testgen::beat_pattern(lanes)]
}

#[derive(Clone, Debug)]
struct Case {
    plan: CasePlan,
    /// Per token (cyclically): damage and sparse beat sizes.
    records: Vec<(Damage, Vec<usize>)>,
}

fn case(p: &OakenParams, segments: usize) -> impl Strategy<Value = Case> {
    (oaken_cases::case(p, segments, true), proptest::collection::vec((damage(), split(p.lanes)), 1..16))
        .prop_map(|(plan, records)| Case { plan, records })
}

/// The quantizer's record of a token, damaged and re-cut.
fn damaged(p: &OakenParams, (mut rec, sparse): Record, d: &Damage, split: &[usize]) -> Record {
    let mut coo: Vec<u8> = sparse.iter().flat_map(|b| b.lanes[..b.count as usize].iter().copied()).collect();
    let n = coo.len();
    match *d {
        Damage::None => {}
        Damage::Drop(i) if n > 0 => {
            coo.remove(i % n);
        }
        Damage::Duplicate(i) if n > 0 => coo.insert(i % n, coo[i % n]),
        Damage::Swap(i) if n > 1 => coo.swap(i % (n - 1), i % (n - 1) + 1),
        Damage::SetIdx(i, v) if n > 0 => coo[i % n] = v,
        Damage::Extra(v) => coo.push(v),
        Damage::Count(s, v) => {
            let k = s % rec.meta.seg_counts.len();
            rec.meta.seg_counts[k] = v % (SEGMENT as u8 + 8);
        }
        _ => {}
    }
    let mut beats: Vec<SparseBeat> = if split.is_empty() {
        pack_sparse(&coo, p.lanes)
    } else {
        split_sparse(&coo, p.lanes, &testgen::fit_beat_sizes(split, coo.len(), p.lanes))
    };
    if let Damage::BeatCount(b, c) = *d {
        let k = b % beats.len();
        beats[k].count = (p.lanes as u8).saturating_add(c).max(p.lanes as u8 + 1);
    }
    (rec, beats)
}

fn count_writes(cov: &Coverage, codes: impl IntoIterator<Item = u64>) {
    for c in codes {
        cov.hit(["table write ok", "table write non-finite", "table write out of order", "table write layer out of range"][c as usize]);
    }
}

fn count(cov: &Coverage, p: &OakenParams, seg: &DSegment, run: &DSegRun, kinds: &[u8], tokens: &[Token]) {
    let picks: Vec<(u8, bool)> = seg.records.iter().map(|r| (r.0.layer, r.0.kv == Kv::V)).collect();
    let (codes, live_codes, sets) = sets_in_effect(p, &[], &seg.writes, &run.live, &run.first_edges, 1, &picks);
    count_writes(cov, codes.into_iter().chain(live_codes));
    let done = run.beats.len() / p.beats();
    for (k, rec) in seg.records.iter().take(done).enumerate() {
        cov.hit("tokens");
        cov.hit(["realistic tokens", "tie tokens", "edge-case tokens"][kinds[k] as usize]);
        let m = malformed(p, rec);
        cov.hit_if("well-formed record", !m.any());
        cov.hit_if("malformed: entry never taken", m.untaken);
        cov.hit_if("malformed: list shorter than the counts", m.short);
        cov.hit_if("malformed: count over segment length", m.count_over_len);
        cov.hit_if("malformed: beat count over lanes", m.beat_over_lanes);
        let entries: usize = rec.1.iter().map(|b| (b.count as usize).min(p.lanes)).sum();
        let total: usize = rec.0.meta.seg_counts.iter().map(|&c| c as usize).sum();
        cov.hit_if("token with no outliers", total == 0 && entries == 0);
        let q = sim::oaken::quantizer::quantize_token(p, &sets[k].0, &tokens[k].x);
        cov.hit_if("all-outlier token", q.coo.len() == p.head_dim);
        cov.hit_if("unpacked sparse record", rec.1.iter().rev().skip(1).any(|b| (b.count as usize) < p.lanes));
        cov.hit_if("layer out of range", sets[k].1);
    }
    cov.add("d_ready low", run.events.d_ready_low);
    cov.add("s_ready low", run.events.s_ready_low);
    cov.add("sparse beat with ignored lanes (noise)", run.events.noisy_sparse);
    cov.add("input held off behind a stalled output", run.events.full_behind_stall);
    cov.add("table write during traffic", run.events.live_between_tokens);
    cov.hit_if("reset in flight", run.events.reset_in_flight);
}

fn run_case(m: &mut Model, p: &OakenParams, c: &Case, cov: &Coverage) -> Result<(), String> {
    let mut i = 0;
    for (k, s) in oaken_cases::materialize(p, &c.plan).into_iter().enumerate() {
        let records: Vec<Record> = records_of(p, &s.writes, &s.tokens)
            .into_iter()
            .map(|r| {
                let (d, sp) = &c.records[i % c.records.len()];
                i += 1;
                damaged(p, r, d, sp)
            })
            .collect();
        let seg = DSegment {
            prior: vec![],
            writes: s.writes,
            records,
            live: s.live,
            reset_at: s.reset_at,
            reset_cycles: s.reset_cycles,
            stalls: DStalls { d: s.stalls[0].clone(), s: s.stalls[1].clone(), out: s.stalls[2].clone() },
            seed: s.seed,
        };
        let sparse: usize = seg.records.iter().map(|r| r.1.len()).sum();
        let timeout = 20_000 + 400 * (seg.records.len() * p.beats() + sparse) as u64;
        let run = run_dequantizer_segment(m, &seg, timeout).map_err(|e| format!("segment {k}: {e}"))?;
        check_dequantizer_segment(p, &seg, &run).map_err(|e| format!("segment {k}: {e}"))?;
        count(cov, p, &seg, &run, &s.kinds, &s.tokens);
        if !run.cut {
            pulse_reset(m, 1);
        }
    }
    Ok(())
}

fn check(info: &'static ModelInfo, test: &str, cases: u32, segments: usize, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    run_property(test, info, case(&p, segments), cases, |m, c| run_case(m, &p, c, cov));
}

#[test]
fn rtl_matches_model() {
    let cov = Coverage::new("oaken_dequantizer (default parameters, RTL)", POINTS);
    check(models::get("oaken_dequantizer"), "oaken_dequantizer_rtl", prop::cases(96), 3, &cov);
    cov.check();
}

/// Every other parameter set of tb/models.toml, on RTL.
#[test]
fn parameter_sets_match_model() {
    let sets: Vec<_> =
        models::of_unit("oaken-dequantizer", false).into_iter().filter(|m| m.name != "oaken_dequantizer").collect();
    assert!(sets.len() >= 6, "tb/models.toml has {} non-default dequantizer sets", sets.len());
    let cov = Coverage::new("oaken_dequantizer (6 parameter sets, RTL)", POINTS);
    for info in sets {
        check(info, &format!("{}_rtl", info.name), prop::cases(24), 3, &cov);
    }
    cov.check();
}

/// The OSU018 netlists of this run.
#[test]
fn netlists_match_model() {
    let nets = models::of_unit("oaken-dequantizer", true);
    assert!(nets.len() >= 2, "{} dequantizer netlists in this run", nets.len());
    let cov = Coverage::new("oaken_dequantizer (netlists)", POINTS);
    for info in nets {
        check(info, &info.name.to_string(), prop::cases(20), 2, &cov);
    }
    cov.check_points(&["tokens", "d_ready low", "s_ready low", "malformed: entry never taken", "reset in flight"]);
    assert!(!prop::full_depth() || cov.count("tokens") >= 200, "at least 200 tokens on netlists");
}

/// The malformed cases of spec §4.3 each raise `out_err` on the token's last
/// beat, and the token after a bad one decodes exactly.
#[test]
fn malformed_records_are_flagged_and_recovered_from() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let t = testgen::realistic_thresholds(1.0);
    let writes = vec![TableWrite { layer: 0, v: false, raw: [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer] }];
    // a token with outliers in both segments
    let x: Vec<u16> = (0..p.head_dim)
        .map(|i| match i % 9 {
            0 => 0x4800,         // 8.0: outer upper
            4 => 0xC800,         // -8.0: outer lower
            7 => 0x0001,         // tiny: inner
            _ => 0x3C00 + i as u16, // ~1: middle
        })
        .collect();
    let good = Token { layer: 0, v: false, x };
    let base = &records_of(&p, &writes, std::slice::from_ref(&good))[0];
    let coo: Vec<u8> = base.1.iter().flat_map(|b| b.lanes[..b.count as usize].iter().copied()).collect();
    assert!(coo.len() > 4 && base.0.meta.seg_counts.iter().all(|&c| c > 0));
    let mut bad: Vec<(&str, Record)> = Vec::new();
    let mut swap = coo.clone();
    swap.swap(1, 2);
    bad.push(("out of order", (base.0.clone(), pack_sparse(&swap, p.lanes))));
    let mut dup = coo.clone();
    dup.insert(3, coo[3]);
    bad.push(("duplicate", (base.0.clone(), pack_sparse(&dup, p.lanes))));
    bad.push(("short list", (base.0.clone(), pack_sparse(&coo[..coo.len() - 1], p.lanes))));
    let mut extra = coo.clone();
    extra.push(0xFC);
    bad.push(("extra entry", (base.0.clone(), pack_sparse(&extra, p.lanes))));
    let mut big = base.0.clone();
    big.meta.seg_counts[0] = 65;
    bad.push(("count over segment length", (big, base.1.clone())));
    let mut over = base.1.clone();
    over[0].count = p.lanes as u8 + 1;
    bad.push(("beat count over lanes", (base.0.clone(), over)));
    for (what, rec) in bad {
        let recs = vec![base.clone(), rec, base.clone()];
        let (_, want) = expected_dequantizer(&p, &writes, &recs);
        let b = p.beats();
        assert!(!want[b - 1].err && want[2 * b - 1].err && !want[3 * b - 1].err, "{what}: the model flags it");
        assert_eq!(want[..b], want[2 * b..], "{what}: the model recovers");
        let mut m = Model::new(info);
        m.reset(1);
        let run = drive_dequantizer(&mut m, &writes, &recs, &DStalls::none(), 1).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(run.beats, want, "{what}");
    }
}

fn realistic_writes() -> Vec<TableWrite> {
    let t = testgen::realistic_thresholds(1.0);
    let raw = [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer];
    vec![TableWrite { layer: 0, v: false, raw }, TableWrite { layer: 0, v: true, raw }]
}

/// Tokens with no outliers, with every element an outlier, and in between.
fn outlier_sweep(p: &OakenParams) -> Vec<Token> {
    let t = testgen::realistic_thresholds(1.0);
    let hi = sim::fp16::to_units(t.hi_outer);
    let above = sim::fp16::from_f32(sim::fp16::to_f32(t.hi_outer) * 2.0 + 1.0);
    assert!(sim::fp16::to_units(above) > hi);
    (0..8)
        .map(|k| Token {
            layer: 0,
            v: k % 2 == 1,
            // k = 0: none; k = 7: all; otherwise every (8-k)-th element
            x: (0..p.head_dim)
                .map(|i| {
                    let out = k == 7 || (k > 0 && i % (8 - k) == 0);
                    if out {
                        above
                    } else {
                        0x3C00 + (i % 64) as u16
                    }
                })
                .collect(),
        })
        .collect()
}

/// Spec §4.2 throughput and latency: with packed records, both inputs always
/// valid and the output always ready, one beat per cycle with no bubble,
/// for tokens with 0 to head_dim outliers; the first output follows the
/// first dense beat by the manifest's latency.
#[test]
fn sustains_one_beat_per_cycle() {
    for info in models::of_unit("oaken-dequantizer", false).into_iter() {
        let mut m = Model::new(info);
        let p = params_of(&m);
        m.reset(1);
        let writes = realistic_writes();
        let mut tokens = outlier_sweep(&p);
        tokens.extend(outlier_sweep(&p));
        let recs = records_of(&p, &writes, &tokens);
        let counts: Vec<usize> = recs.iter().map(|r| r.1.iter().map(|b| b.count as usize).sum()).collect();
        assert!(counts.contains(&0) && counts.contains(&p.head_dim), "{}: outlier counts {counts:?}", info.name);
        let run = drive_dequantizer(&mut m, &writes, &recs, &DStalls::none(), 1).unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let n = run.out_cycles.len() as u64;
        assert_eq!(run.d_cycles.last().unwrap() - run.d_cycles[0], n - 1, "{}: dense input bubbles", info.name);
        assert_eq!(run.out_cycles.last().unwrap() - run.out_cycles[0], n - 1, "{}: output bubbles", info.name);
        let latency = run.out_cycles[0] - run.d_cycles[0];
        assert_eq!(Some(latency), info.latency(), "{}: latency", info.name);
        println!(
            "{}: {} tokens ({:?} outliers), {} elements/cycle sustained, latency {} cycles",
            info.name,
            tokens.len(),
            counts,
            p.lanes,
            latency
        );
    }
}

/// Spec §4.2: a table write sampled at edge t applies to tokens whose first
/// dense beat is accepted at t + 1 or later, not to one accepted at t.
#[test]
fn table_write_takes_effect_after_the_first_beat() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let set = |s: f32| TableWrite::of(0, false, testgen::realistic_thresholds(s));
    let (old, new) = (set(1.0), set(0.25));
    let tok = Token { v: false, ..outlier_sweep(&p)[3].clone() };
    let rec = records_of(&p, std::slice::from_ref(&old), std::slice::from_ref(&tok)).remove(0);
    // the dense input idles one cycle: the first beat is taken at edge 1
    let stalls = DStalls { d: Stall::Block { start: 0, len: 1 }, ..DStalls::none() };
    for (w, uses_new) in [(0u32, true), (1, false), (2, false)] {
        let mut m = Model::new(info);
        m.reset(1);
        let seg = DSegment {
            live: vec![(w, new.clone())],
            ..DSegment::plain(vec![old.clone()], vec![rec.clone()], stalls.clone(), 9)
        };
        let run = run_dequantizer_segment(&mut m, &seg, 5000).unwrap();
        assert_eq!(run.first_edges, vec![1]);
        check_dequantizer_segment(&p, &seg, &run).unwrap_or_else(|e| panic!("write at edge {w}: {e}"));
        // the rule, stated directly
        let table = if uses_new { vec![old.clone(), new.clone()] } else { vec![old.clone()] };
        let (_, want) = expected_dequantizer(&p, &table, std::slice::from_ref(&rec));
        assert_eq!(run.beats, want, "write at edge {w}, first dense beat at edge 1");
    }
}

/// Spec §4.2 reset: a reset with records in flight loses them and clears
/// the table; the engine then decodes as from power-up.
#[test]
fn reset_mid_token_restarts_cleanly() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let writes = realistic_writes();
    let recs = records_of(&p, &writes, &outlier_sweep(&p));
    for at in [1u32, 4, p.beats() as u32 + 3, 30] {
        let mut m = Model::new(info);
        m.reset(1);
        let out = DStalls { out: Stall::Random { p: 100 }, ..DStalls::none() };
        let cut = DSegment { reset_at: Some(at), ..DSegment::plain(writes.clone(), recs.clone(), out, 5) };
        let run = run_dequantizer_segment(&mut m, &cut, 5000).unwrap();
        assert!(run.cut);
        check_dequantizer_segment(&p, &cut, &run).unwrap_or_else(|e| panic!("reset at {at}: {e}"));
        let after = DSegment::plain(vec![], recs[..2].to_vec(), DStalls::none(), 6);
        let run2 = run_dequantizer_segment(&mut m, &after, 5000).unwrap();
        check_dequantizer_segment(&p, &after, &run2).unwrap_or_else(|e| panic!("after a reset at {at}: {e}"));
        let again = DSegment::plain(writes.clone(), recs.clone(), DStalls::none(), 7);
        let run3 = run_dequantizer_segment(&mut m, &again, 5000).unwrap();
        check_dequantizer_segment(&p, &again, &run3).unwrap_or_else(|e| panic!("after a reset at {at}: {e}"));
    }
}

#[test]
fn model_list_has_the_default_engine() {
    let m = models::get("oaken_dequantizer");
    assert!(!m.gate_level);
    assert_eq!(params_of(&Model::new(m)), OakenParams::default());
}
