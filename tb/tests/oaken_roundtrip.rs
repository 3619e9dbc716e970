//! The Oaken round trip in co-simulation: the quantization engine feeds the
//! dequantization engine through two FIFOs standing for the dense and sparse
//! memory regions (the COO list re-packed into full beats, as memory holds
//! it), with random stalls at the quantizer's input, on both FIFOs' read
//! side and at the output. Every output beat matches `sim` bit for bit and
//! every element meets the error bound of docs/spec.md §2.10. RTL and
//! netlists.

use proptest::prelude::*;
use sim::fp16;
use sim::oaken::params::OakenParams;
use sim::oaken::quantizer::quantize_token_detail;
use sim::oaken::thresholds::Kv;
use sim::testgen;
use tb::models;
use tb::oaken::{expected_quantizer, expected_table, params_of, TableWrite, Token};
use tb::oaken_dequantizer::{drive_round_trip, expected_dequantizer, records_of, DStalls, RtStalls};
use tb::{run_property, Model, ModelInfo};

#[derive(Clone, Debug)]
struct Case {
    writes: Vec<TableWrite>,
    tokens: Vec<Token>,
    stalls: RtStalls,
}

fn layer(p: &OakenParams) -> impl Strategy<Value = u8> {
    let real = p.layers.min(4) as u8;
    prop_oneof![8 => 0..real, 1 => Just(p.layers.min(255) as u8)]
}

fn raw_set() -> impl Strategy<Value = [u16; 4]> {
    prop_oneof![
        3 => testgen::threshold_set().prop_map(|t| [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]),
        2 => (0.05f32..4.0).prop_map(|s| {
            let t = testgen::realistic_thresholds(s);
            [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]
        }),
    ]
}

fn stalls() -> impl Strategy<Value = RtStalls> {
    let idle = prop_oneof![2 => Just(0u8), 3 => 0u8..200];
    (any::<u64>(), idle.clone(), idle.clone(), idle.clone(), idle).prop_map(|(seed, in_idle, d_idle, s_idle, out_idle)| {
        RtStalls { seed, in_idle, mid: DStalls { seed: seed ^ 0x5555, d_idle, s_idle, out_idle } }
    })
}

fn case(p: OakenParams, max_tokens: usize) -> impl Strategy<Value = Case> {
    let writes = proptest::collection::vec((layer(&p), any::<bool>(), raw_set()), 1..5)
        .prop_map(|w| w.into_iter().map(|(layer, v, raw)| TableWrite { layer, v, raw }).collect::<Vec<_>>());
    (writes, stalls(), proptest::collection::vec((layer(&p), any::<bool>()), 1..=max_tokens)).prop_flat_map(
        move |(writes, stalls, picks)| {
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

/// §2.10: |out - x| <= step/2 + ulp(|out|)/2 for every element, in integers.
fn check_bound(p: &OakenParams, writes: &[TableWrite], tokens: &[Token], out: &[u64]) -> Result<(), String> {
    let (table, _) = expected_table(p, writes);
    for (k, t) in tokens.iter().enumerate() {
        let (set, _) = table.lookup(t.layer as usize, if t.v { Kv::V } else { Kv::K });
        let (q, detail) = quantize_token_detail(p, &set, &t.x);
        for i in 0..p.head_dim {
            let x = fp16::to_units(fp16::sanitize(t.x[i]).0);
            let o = fp16::to_units(out[k * p.head_dim + i] as u16);
            let step = fp16::to_units(q.meta.groups[detail[i].class.group as usize].step);
            let ulp = fp16::grid_ulp(o.unsigned_abs()) as i64;
            if 2 * (o - x).abs() > step + ulp {
                return Err(format!("token {k} element {i}: x={:#06x} out={:#06x} step={step}", t.x[i], o));
            }
        }
    }
    Ok(())
}

fn check(q_info: &'static ModelInfo, d_info: &'static ModelInfo, test: &str, cases: u32, max_tokens: usize) {
    let p = params_of(&Model::new(d_info));
    run_property(test, d_info, case(p.clone(), max_tokens), cases, |d, c| {
        let mut q = Model::new(q_info);
        q.reset(1);
        let timeout = 6000 + 80 * (c.tokens.len() * p.beats()) as u64;
        let run = drive_round_trip(&mut q, d, &c.writes, &c.tokens, &c.stalls, timeout)?;
        // the quantizer's half is what sim says it is...
        let (_, want_q) = expected_quantizer(&p, &c.writes, &c.tokens);
        if run.q_beats != want_q {
            let i = run.q_beats.iter().zip(&want_q).position(|(a, b)| a != b).unwrap_or(want_q.len());
            return Err(format!("quantizer beat {i} differs from sim"));
        }
        // ... the dequantizer's too ...
        let recs = records_of(&p, &c.writes, &c.tokens);
        let (_, want) = expected_dequantizer(&p, &c.writes, &recs);
        for (i, (got, exp)) in run.beats.iter().zip(&want).enumerate() {
            if got != exp {
                return Err(format!("round-trip beat {i}: got {got:?}\n expected {exp:?}"));
            }
            if got.err {
                return Err(format!("round-trip beat {i}: out_err on a record the quantizer wrote"));
            }
        }
        // ... and the error bound holds
        let out: Vec<u64> = run.beats.iter().flat_map(|b| b.data.clone()).collect();
        check_bound(&p, &c.writes, &c.tokens, &out)
    });
}

#[test]
fn rtl_round_trip_matches_model_and_bound() {
    check(&models::OAKEN_QUANTIZER, &models::OAKEN_DEQUANTIZER, "oaken_roundtrip_rtl", testgen::cases(48), 5);
}

#[test]
fn netlist_round_trip_matches_model_and_bound() {
    check(&models::OAKEN_QUANTIZER_NET, &models::OAKEN_DEQUANTIZER_NET, "oaken_roundtrip_net", testgen::cases(6), 3);
}

/// With every stall off the pair streams. The dequantizer here chases the
/// writer: a token's sparse record is complete only when the quantizer emits
/// the token's last beat, so the reader may wait at a token boundary (spec
/// §4.2's one-beat-per-cycle figure is for records already in memory, tested
/// in oaken_dequantizer.rs). Over many tokens the pair still averages close to
/// one beat per cycle: at most one token's worth of extra cycles in total.
#[test]
fn round_trip_streams_back_to_back() {
    let p = params_of(&Model::new(&models::OAKEN_DEQUANTIZER));
    let t = testgen::realistic_thresholds(1.0);
    let raw = [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer];
    let writes = vec![TableWrite { layer: 0, v: false, raw }];
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[9; 32]));
    let tokens: Vec<Token> = (0..16)
        .map(|_| Token { layer: 0, v: false, x: testgen::token(p.head_dim, t).new_tree(&mut runner).unwrap().current() })
        .collect();
    let mut q = Model::new(&models::OAKEN_QUANTIZER);
    let mut d = Model::new(&models::OAKEN_DEQUANTIZER);
    q.reset(1);
    d.reset(1);
    let none = RtStalls { seed: 1, in_idle: 0, mid: DStalls::NONE };
    let run = drive_round_trip(&mut q, &mut d, &writes, &tokens, &none, 20_000).unwrap();
    let n = run.out_cycles.len() as u64;
    assert_eq!(n as usize, tokens.len() * p.beats());
    let span = run.out_cycles.last().unwrap() - run.out_cycles[0] + 1;
    assert!(span <= n + p.beats() as u64, "{span} cycles for {n} output beats");
    let recs = records_of(&p, &writes, &tokens);
    let (_, want) = expected_dequantizer(&p, &writes, &recs);
    assert_eq!(run.beats, want);
    check_bound(&p, &writes, &tokens, &run.beats.iter().flat_map(|b| b.data.clone()).collect::<Vec<_>>()).unwrap();
    println!(
        "round trip: {} tokens, {n} output beats in {span} cycles ({:.3} elements/cycle), first output at cycle {}",
        tokens.len(),
        (n as f64 * p.lanes as f64) / span as f64,
        run.out_cycles[0]
    );
}
