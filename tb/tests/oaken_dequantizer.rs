//! Co-simulation of the Oaken dequantization engine
//! (hdl/src/oaken/dequantizer.rs) against its model
//! (sim/src/oaken/dequantizer.rs), bit for bit, on the RTL and on the Yosys
//! netlist: random tables and tokens, well-formed and corrupted sparse
//! records cut into beats of any size, random stalls on the dense input, the
//! sparse input and the output. Spec: docs/spec.md §4.

use proptest::prelude::*;
use sim::oaken::dequantizer::{pack_sparse, split_sparse, SparseBeat};
use sim::oaken::params::{OakenParams, SEGMENT};
use sim::oaken::thresholds::Kv;
use sim::testgen;
use tb::models;
use tb::oaken::{expected_table, params_of, TableWrite, Token};
use tb::oaken_dequantizer::{
    compare_dequantizer, drive_dequantizer, expected_dequantizer, records_of, DStalls, Record,
};
use tb::{run_property, Model, ModelInfo};

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

#[derive(Clone, Debug)]
struct Tok {
    token: Token,
    damage: Damage,
    /// Beat sizes pattern for the sparse record (empty = packed).
    split: Vec<usize>,
}

#[derive(Clone, Debug)]
struct Case {
    writes: Vec<TableWrite>,
    toks: Vec<Tok>,
    stalls: DStalls,
}

fn params(info: &'static ModelInfo) -> OakenParams {
    params_of(&Model::new(info))
}

fn layer(p: &OakenParams) -> impl Strategy<Value = u8> {
    let real = p.layers.min(4) as u8;
    prop_oneof![8 => 0..real, 1 => Just(p.layers.min(255) as u8), 1 => any::<u8>()]
}

fn raw_set() -> impl Strategy<Value = [u16; 4]> {
    prop_oneof![
        6 => testgen::threshold_set().prop_map(|t| [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]),
        2 => (0.05f32..4.0).prop_map(|s| {
            let t = testgen::realistic_thresholds(s);
            [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]
        }),
        1 => any::<[u16; 4]>(),
    ]
}

fn stalls() -> impl Strategy<Value = DStalls> {
    let idle = prop_oneof![3 => Just(0u8), 3 => 0u8..200];
    (any::<u64>(), idle.clone(), idle.clone(), idle)
        .prop_map(|(seed, d_idle, s_idle, out_idle)| DStalls { seed, d_idle, s_idle, out_idle })
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        12 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Drop),
        1 => any::<usize>().prop_map(Damage::Duplicate),
        1 => any::<usize>().prop_map(Damage::Swap),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Damage::SetIdx(i, v)),
        1 => any::<u8>().prop_map(Damage::Extra),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(s, c)| Damage::Count(s, c)),
        1 => (any::<usize>(), 1u8..=255).prop_map(|(b, c)| Damage::BeatCount(b, c)),
    ]
}

fn split(lanes: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![3 => Just(Vec::new()), 1 => testgen::beat_pattern(lanes)]
}

fn case(p: OakenParams, max_tokens: usize) -> impl Strategy<Value = Case> {
    let writes = proptest::collection::vec((layer(&p), any::<bool>(), raw_set()), 0..5)
        .prop_map(|w| w.into_iter().map(|(layer, v, raw)| TableWrite { layer, v, raw }).collect::<Vec<_>>());
    let lanes = p.lanes;
    (writes, stalls(), proptest::collection::vec((layer(&p), any::<bool>(), damage(), split(lanes)), 1..=max_tokens))
        .prop_flat_map(move |(writes, stalls, picks)| {
            let (table, _) = expected_table(&p, &writes);
            let toks: Vec<_> = picks
                .into_iter()
                .map(|(layer, v, damage, split)| {
                    let (set, _) = table.lookup(layer as usize, if v { Kv::V } else { Kv::K });
                    testgen::token(p.head_dim, set).prop_map(move |x| Tok {
                        token: Token { layer, v, x },
                        damage: damage.clone(),
                        split: split.clone(),
                    })
                })
                .collect();
            (Just(writes), toks, Just(stalls.clone())).prop_map(|(writes, toks, stalls)| Case { writes, toks, stalls })
        })
}

/// The records of a case: the quantizer's, then damaged and re-cut.
fn records(p: &OakenParams, c: &Case) -> Vec<Record> {
    let tokens: Vec<Token> = c.toks.iter().map(|t| t.token.clone()).collect();
    records_of(p, &c.writes, &tokens)
        .into_iter()
        .zip(&c.toks)
        .map(|((mut rec, sparse), t)| {
            let mut coo: Vec<u8> =
                sparse.iter().flat_map(|b| b.lanes[..b.count as usize].iter().copied()).collect();
            let n = coo.len();
            match t.damage {
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
            let mut beats: Vec<SparseBeat> = if t.split.is_empty() {
                pack_sparse(&coo, p.lanes)
            } else {
                split_sparse(&coo, p.lanes, &testgen::fit_beat_sizes(&t.split, coo.len(), p.lanes))
            };
            if let Damage::BeatCount(b, c) = t.damage {
                let k = b % beats.len();
                beats[k].count = (p.lanes as u8).saturating_add(c).max(p.lanes as u8 + 1);
            }
            (rec, beats)
        })
        .collect()
}

fn check(info: &'static ModelInfo, test: &str, cases: u32, max_tokens: usize) {
    let p = params(info);
    run_property(test, info, case(p.clone(), max_tokens), cases, |m, c| {
        let recs = records(&p, c);
        let (codes, want) = expected_dequantizer(&p, &c.writes, &recs);
        let timeout = 4000 + 60 * (want.len() as u64 + recs.iter().map(|r| r.1.len() as u64).sum::<u64>());
        let run = drive_dequantizer(m, &c.writes, &recs, &c.stalls, timeout)?;
        compare_dequantizer(&run, &codes, &want, p.beats())
    });
}

#[test]
fn rtl_matches_model() {
    check(&models::OAKEN_DEQUANTIZER, "oaken_dequantizer_rtl", testgen::cases(96), 5);
}

#[test]
fn netlist_matches_model() {
    check(&models::OAKEN_DEQUANTIZER_NET, "oaken_dequantizer_net", testgen::cases(12), 3);
}

/// Every other parameter variant in tb/models.toml, RTL and gate level.
#[test]
fn parameter_variants_match_model() {
    for info in models::ALL.iter().filter(|m| m.unit == "oaken-dequantizer") {
        if info.name == "oaken_dequantizer" || info.name == "oaken_dequantizer_net" {
            continue;
        }
        let cases = if info.gate_level { testgen::cases(24) } else { testgen::cases(64) };
        check(info, &format!("{}_check", info.name), cases, 6);
    }
}

/// The malformed cases of spec §4.3 each raise `out_err` on the token's last
/// beat, and the token after a bad one decodes exactly.
#[test]
fn malformed_records_are_flagged_and_recovered_from() {
    let info = &models::OAKEN_DEQUANTIZER;
    let p = params(info);
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
        let (codes, want) = expected_dequantizer(&p, &writes, &recs);
        let b = p.beats();
        assert!(!want[b - 1].err && want[2 * b - 1].err && !want[3 * b - 1].err, "{what}: the model flags it");
        assert_eq!(want[..b], want[2 * b..], "{what}: the model recovers");
        let mut m = Model::new(info);
        m.reset(1);
        let run = drive_dequantizer(&mut m, &writes, &recs, &DStalls::NONE, 5000).unwrap();
        compare_dequantizer(&run, &codes, &want, b).unwrap_or_else(|e| panic!("{what}: {e}"));
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
    for info in models::ALL.iter().filter(|m| m.unit == "oaken-dequantizer" && !m.gate_level) {
        let mut m = Model::new(info);
        let p = params_of(&m);
        m.reset(1);
        let writes = realistic_writes();
        let mut tokens = outlier_sweep(&p);
        tokens.extend(outlier_sweep(&p));
        let recs = records_of(&p, &writes, &tokens);
        let counts: Vec<usize> = recs.iter().map(|r| r.1.iter().map(|b| b.count as usize).sum()).collect();
        assert!(counts.contains(&0) && counts.contains(&p.head_dim), "{}: outlier counts {counts:?}", info.name);
        let run = drive_dequantizer(&mut m, &writes, &recs, &DStalls::NONE, 20_000).unwrap();
        let (codes, want) = expected_dequantizer(&p, &writes, &recs);
        compare_dequantizer(&run, &codes, &want, p.beats()).unwrap();
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
    let info = &models::OAKEN_DEQUANTIZER;
    let p = params(info);
    let set = |s: f32| {
        let t = testgen::realistic_thresholds(s);
        TableWrite { layer: 0, v: false, raw: [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer] }
    };
    let (old, new) = (set(1.0), set(0.25));
    let tok = outlier_sweep(&p)[3].clone();
    let tok = Token { v: false, ..tok };
    let rec = records_of(&p, std::slice::from_ref(&old), std::slice::from_ref(&tok)).remove(0);
    // the first dense beat is accepted at the edge ending cycle 1; the write
    // is sampled at the edge ending cycle `w`
    for (w, uses_new) in [(0u64, true), (1, false), (2, false)] {
        let mut m = Model::new(info);
        m.reset(1);
        let (tw_valid, tw_data) = (m.port("tw_valid"), m.port("tw_data"));
        tb::oaken::write_table(&mut m, std::slice::from_ref(&old)).unwrap();
        let (d_valid, d_ready, d_dense, d_meta) = (m.port("d_valid"), m.port("d_ready"), m.port("d_dense"), m.port("d_meta"));
        let (s_valid, s_coo, s_count, s_last) = (m.port("s_valid"), m.port("s_coo"), m.port("s_count"), m.port("s_last"));
        let (out_valid, out_data) = (m.port("out_valid"), m.port("out_data"));
        m.set(m.port("out_ready"), 1);
        m.set(tw_data, new.data());
        let meta = tb::oaken::meta_bytes(&p, &rec.0.meta);
        let mut got = Vec::new();
        let mut sent = 0usize;
        let mut s_sent = 0usize;
        for cyc in 0..400u64 {
            let offer = cyc >= 1 && sent < p.beats();
            m.set(d_valid, offer as u64);
            if offer {
                m.set_lanes(d_dense, &rec.0.dense[sent * p.lanes..(sent + 1) * p.lanes].iter().map(|&d| d as u64).collect::<Vec<_>>());
                m.set_lanes(d_meta, &meta);
            }
            let s_offer = s_sent < rec.1.len();
            m.set(s_valid, s_offer as u64);
            if s_offer {
                let b = &rec.1[s_sent];
                m.set_lanes(s_coo, &b.lanes.iter().map(|&e| e as u64).collect::<Vec<_>>());
                m.set(s_count, b.count as u64);
                m.set(s_last, b.last as u64);
            }
            m.set(tw_valid, (cyc == w) as u64);
            m.eval();
            if offer && m.get(d_ready) == 1 {
                sent += 1;
            }
            if s_offer && m.get(m.port("s_ready")) == 1 {
                s_sent += 1;
            }
            if m.get(out_valid) == 1 {
                got.extend(m.get_lanes(out_data));
            }
            m.tick();
        }
        let table_writes = if uses_new { vec![old.clone(), new.clone()] } else { vec![old.clone()] };
        let (_, want) = expected_dequantizer(&p, &table_writes, std::slice::from_ref(&rec));
        let want: Vec<u64> = want.iter().flat_map(|b| b.data.clone()).collect();
        assert_eq!(got, want, "write at the edge ending cycle {w}, first beat accepted at the edge ending cycle 1");
    }
}

#[test]
fn model_list_has_the_default_engine() {
    let m = models::get("oaken_dequantizer");
    assert!(!m.gate_level);
    assert_eq!(params(m), OakenParams::default());
    assert!(models::get("oaken_dequantizer_net").gate_level);
}
