//! Co-simulation of the Oaken quantization engine (hdl/src/oaken/quantizer.rs)
//! against its golden model (sim/src/oaken/quantizer.rs), bit for bit, on the
//! RTL and on the Yosys netlist. Spec: docs/spec.md §2.

use proptest::prelude::*;
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::Kv;
use sim::testgen;
use tb::models::{self, get};
use tb::oaken::{compare, drive_quantizer, expected_quantizer, expected_table, params_of, Stalls, TableWrite, Token};
use tb::{run_property, Model, ModelInfo};

#[derive(Clone, Debug)]
struct Case {
    writes: Vec<TableWrite>,
    tokens: Vec<Token>,
    stalls: Stalls,
}

fn params(info: &'static ModelInfo) -> OakenParams {
    params_of(&Model::new(info))
}

/// Layers a case uses: a few real ones, sometimes one past the table.
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
        // out of order, non-finite, -0: rejected or canonicalised by the table
        1 => any::<[u16; 4]>(),
        1 => testgen::threshold_set().prop_map(|t| [t.hi_outer, t.lo_inner, t.hi_inner, t.lo_outer]),
    ]
}

fn stalls() -> impl Strategy<Value = Stalls> {
    let idle = prop_oneof![2 => Just(0u8), 3 => 0u8..200];
    (any::<u64>(), idle.clone(), idle).prop_map(|(seed, in_idle, out_idle)| Stalls { seed, in_idle, out_idle })
}

fn case(p: OakenParams, max_tokens: usize) -> impl Strategy<Value = Case> {
    let writes = proptest::collection::vec((layer(&p), any::<bool>(), raw_set()), 0..6)
        .prop_map(|w| w.into_iter().map(|(layer, v, raw)| TableWrite { layer, v, raw }).collect::<Vec<_>>());
    (writes, stalls(), proptest::collection::vec((layer(&p), any::<bool>()), 1..=max_tokens)).prop_flat_map(
        move |(writes, stalls, picks)| {
            // each token's values are drawn around the set it will really use
            let (table, _) = expected_table(&p, &writes);
            let tokens: Vec<_> = picks
                .into_iter()
                .map(|(layer, v)| {
                    let (set, _) = table.lookup(layer as usize, if v { Kv::V } else { Kv::K });
                    testgen::token(p.head_dim, set).prop_map(move |x| Token { layer, v, x })
                })
                .collect();
            (Just(writes), tokens, Just(stalls.clone()))
                .prop_map(|(writes, tokens, stalls)| Case { writes, tokens, stalls })
        },
    )
}

fn check(info: &'static ModelInfo, test: &str, cases: u32, max_tokens: usize) {
    let p = params(info);
    run_property(test, info, case(p.clone(), max_tokens), cases, |m, c| {
        let (codes, want) = expected_quantizer(&p, &c.writes, &c.tokens);
        let timeout = 5000 + 40 * want.len() as u64;
        let run = drive_quantizer(m, &c.writes, &c.tokens, &c.stalls, timeout)?;
        compare(&run, &codes, &want, p.beats())
    });
}

#[test]
fn rtl_matches_model() {
    check(&models::OAKEN_QUANTIZER, "oaken_quantizer_rtl", testgen::cases(96), 4);
}

#[test]
fn netlist_matches_model() {
    check(&models::OAKEN_QUANTIZER_NET, "oaken_quantizer_net", testgen::cases(16), 3);
}

/// Every parameter variant in tb/models.toml named oaken_quantizer_*.
#[test]
fn parameter_variants_match_model() {
    for info in models::ALL.iter().filter(|m| m.unit == "oaken-quantizer" && !m.gate_level) {
        if info.name == "oaken_quantizer" {
            continue;
        }
        check(info, &format!("{}_rtl", info.name), testgen::cases(32), 4);
    }
}

fn tokens_for(p: &OakenParams, n: usize, seed: u64) -> Vec<Token> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner =
        TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[seed as u8; 32]));
    let set = testgen::realistic_thresholds(1.0);
    (0..n)
        .map(|i| Token {
            layer: 0,
            v: i % 2 == 1,
            x: testgen::token(p.head_dim, set).new_tree(&mut runner).unwrap().current(),
        })
        .collect()
}

fn realistic_writes() -> Vec<TableWrite> {
    let t = testgen::realistic_thresholds(1.0);
    let raw = [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer];
    vec![TableWrite { layer: 0, v: false, raw }, TableWrite { layer: 0, v: true, raw }]
}

/// Spec §2.13 throughput and latency: with the input always valid and the
/// output always ready, a beat goes in and a beat comes out every cycle, with
/// no bubble between tokens, and the first output follows the first input by
/// the latency the manifest states.
#[test]
fn sustains_one_beat_per_cycle() {
    for info in models::ALL.iter().filter(|m| m.unit == "oaken-quantizer" && !m.gate_level) {
        let mut m = Model::new(info);
        let p = params_of(&m);
        m.reset(1);
        let tokens = tokens_for(&p, 12, 7);
        let writes = realistic_writes();
        let run = drive_quantizer(&mut m, &writes, &tokens, &Stalls::NONE, 20_000).unwrap();
        let (codes, want) = expected_quantizer(&p, &writes, &tokens);
        compare(&run, &codes, &want, p.beats()).unwrap();
        let n = run.in_cycles.len() as u64;
        assert_eq!(run.in_cycles.last().unwrap() - run.in_cycles[0], n - 1, "{}: input bubbles", info.name);
        assert_eq!(run.out_cycles.last().unwrap() - run.out_cycles[0], n - 1, "{}: output bubbles", info.name);
        let manifest: serde_json::Value = serde_json::from_str(info.manifest_json).unwrap();
        let latency = run.out_cycles[0] - run.in_cycles[0];
        assert_eq!(Some(latency), manifest["latency"].as_u64(), "{}: latency", info.name);
        println!(
            "{}: {} tokens, {} elements/cycle sustained, latency {} cycles",
            info.name,
            tokens.len(),
            p.lanes,
            latency
        );
    }
}

/// Spec §2.13: a table write sampled at the edge where a token's first beat
/// is accepted applies to that token; one sampled a cycle later does not.
#[test]
fn table_write_takes_effect_at_the_first_beat() {
    let info = &models::OAKEN_QUANTIZER;
    let p = params(info);
    let set = |s: f32| {
        let t = testgen::realistic_thresholds(s);
        TableWrite { layer: 0, v: false, raw: [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer] }
    };
    let (old, new) = (set(1.0), set(0.25));
    let tok = &tokens_for(&p, 1, 3)[0];
    for delay in 0..3u64 {
        let mut m = Model::new(info);
        m.reset(1);
        let (tw_valid, tw_data) = (m.port("tw_valid"), m.port("tw_data"));
        let (in_valid, in_ready, in_data) = (m.port("in_valid"), m.port("in_ready"), m.port("in_data"));
        let (out_valid, out_meta) = (m.port("out_valid"), m.port("out_meta"));
        m.set(m.port("out_ready"), 1);
        m.set(tw_valid, 1);
        m.set(tw_data, old.data());
        m.tick();
        m.set(tw_valid, 0);
        m.set(tw_data, new.data());
        m.eval();
        assert_eq!(m.get(in_ready), 1, "the engine is ready after reset and one idle cycle");
        let mut meta = None;
        for cyc in 0..2000u64 {
            let b = cyc as usize;
            if b < p.beats() {
                let lanes: Vec<u64> = tok.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect();
                m.set(in_valid, 1);
                m.set_lanes(in_data, &lanes);
            } else {
                m.set(in_valid, 0);
            }
            m.set(tw_valid, (cyc == delay) as u64);
            m.eval();
            if b < p.beats() {
                assert_eq!(m.get(in_ready), 1, "an empty engine accepts a whole token at once");
            }
            if m.get(out_valid) == 1 {
                meta = Some(m.get_lanes(out_meta));
                break;
            }
            m.tick();
        }
        let used = if delay == 0 { &new } else { &old };
        let t = sim::oaken::thresholds::ThresholdSet::new(used.raw).unwrap();
        let q = sim::oaken::quantizer::quantize_token(&p, &t, &tok.x);
        let want = tb::oaken::meta_bytes(&p, &q.meta);
        assert_eq!(meta, Some(want), "write {delay} cycles after the first beat");
    }
}

#[test]
fn model_list_has_the_default_engine() {
    let m = get("oaken_quantizer");
    assert!(!m.gate_level);
    assert_eq!(params(m), OakenParams::default());
    assert!(get("oaken_quantizer_net").gate_level);
}
