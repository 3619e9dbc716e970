//! Test cases shared by the Oaken engines' tests (quantizer, dequantizer,
//! round trip): how tokens, table writes and segments of traffic are drawn.
//!
//! The main stimulus is realistic: tokens from the synthetic KV generator
//! (`sim::testgen::kv_pool`, spec §7), with the thresholds profiled from
//! another run of the same structure written to the table first, as a real
//! system would load them. Minorities: tokens built to hit exact rounding
//! ties (spec §2.7), edge-case tokens (NaN, +-Inf, +-65504, subnormals,
//! constant and all-outlier vectors), and arbitrary, illegal or misdirected
//! table writes. Segments are long enough, with sinks stalled long enough,
//! to fill every buffer; some end in a reset mid-stream, and some carry
//! table writes during traffic.

use crate::oaken::{TableWrite, Token};
use crate::stalls::{self, Stall};
use proptest::prelude::*;
use sim::fp16;
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::{Kv, ThresholdSet, ThresholdTable};
use sim::testgen::{self, KvPool};

/// Where a token's values come from.
#[derive(Clone, Debug)]
pub enum TokKind {
    /// The pool's token with this index (its layer and K/V).
    Real(usize),
    /// `testgen::tie_token` with this seed, for the set in the table.
    Tie(u64),
    /// `testgen::edge_token_seeded` with this seed.
    Edge(u64),
    /// The pool's token with this index, head 0's elements all in the
    /// middle of the set's upper middle range: a head with no outliers
    /// beside heads with some (directed cases only; counted as edge-case).
    QuietHead(usize),
    /// Every element +0 (a padding token: one value, all in the inner
    /// group; directed cases only, counted as edge-case).
    Zeros,
    /// `paper` mode (spec §2.5): elements in the middle of the inner range,
    /// every fifth at -65504 and every fifth but one at `lo_outer - 65504`
    /// plus 0, 1 or 2 grid steps of 32: with `lo_outer` well above zero the
    /// first are held at -65504, far more than a step below the group's
    /// narrow range (directed cases only, counted as edge-case).
    NearHeld,
}

#[derive(Clone, Debug)]
pub struct TokPlan {
    pub layer: u8,
    pub v: bool,
    pub kind: TokKind,
}

/// What a table write writes.
#[derive(Clone, Debug)]
pub enum WriteKind {
    /// The pool's profiled set for the layer (a reload).
    Profiled,
    /// `realistic_thresholds(scale)`.
    Scaled(f32),
    /// A legal set of arbitrary values (`testgen::threshold_set`).
    Legal([u16; 4]),
    /// Any 64 bits: mostly illegal (non-finite, out of order).
    Raw([u16; 4]),
}

#[derive(Clone, Debug)]
pub struct WritePlan {
    pub layer: u8,
    pub v: bool,
    pub kind: WriteKind,
}

#[derive(Clone, Debug)]
pub struct SegPlan {
    /// Write the pool's profiled sets of every used layer first.
    pub load: bool,
    pub writes: Vec<WritePlan>,
    pub tokens: Vec<TokPlan>,
    pub live: Vec<(u32, WritePlan)>,
    pub reset_at: Option<u32>,
    pub reset_cycles: u32,
    /// Stall patterns of up to three stream ends (input(s), then output).
    pub stalls: [Stall; 3],
    pub seed: u64,
}

#[derive(Clone, Debug)]
pub struct CasePlan {
    pub pool_seed: u64,
    pub segments: Vec<SegPlan>,
}

/// Every parameter set tb/models.toml lists for the Oaken `unit`, with its
/// model name, for a test that runs on `sim` alone; panics if there are
/// fewer than `min` (so that such a test never loops over nothing).
pub fn param_sets(unit: &str, min: usize) -> Vec<(&'static str, OakenParams)> {
    let v: Vec<_> = crate::models::specs()
        .iter()
        .filter(|s| s.unit == unit)
        .map(|s| (s.name.as_str(), toml::Value::Table(s.params.clone()).try_into().expect("Oaken parameters")))
        .collect();
    assert!(v.len() >= min, "tb/models.toml has {} {unit} entries", v.len());
    v
}

/// Layers tokens use: `min(layers, 4)` real ones.
pub fn real_layers(p: &OakenParams) -> u8 {
    p.layers.min(4) as u8
}

fn layer(p: &OakenParams) -> impl Strategy<Value = u8> {
    let real = real_layers(p);
    prop_oneof![12 => 0..real, 1 => Just(p.layers.min(255) as u8), 1 => any::<u8>()]
}

fn write_plan(p: &OakenParams) -> impl Strategy<Value = WritePlan> {
    let kind = prop_oneof![
        4 => Just(WriteKind::Profiled),
        2 => (0.05f32..4.0).prop_map(WriteKind::Scaled),
        2 => testgen::threshold_set().prop_map(|t| WriteKind::Legal([t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer])),
        1 => any::<[u16; 4]>().prop_map(WriteKind::Raw),
        1 => testgen::threshold_set().prop_map(|t| WriteKind::Raw([t.hi_outer, t.lo_inner, t.hi_inner, t.lo_outer])),
    ];
    (layer(p), any::<bool>(), kind).prop_map(|(layer, v, kind)| WritePlan { layer, v, kind })
}

fn tok_plan(p: &OakenParams) -> impl Strategy<Value = TokPlan> {
    let real = real_layers(p);
    let layer = prop_oneof![20 => 0..real, 1 => Just(p.layers.min(255) as u8)];
    let kind = prop_oneof![
        16 => any::<usize>().prop_map(TokKind::Real),
        3 => any::<u64>().prop_map(TokKind::Tie),
        3 => any::<u64>().prop_map(TokKind::Edge),
    ];
    (layer, any::<bool>(), kind).prop_map(|(layer, v, kind)| TokPlan { layer, v, kind })
}

/// Tokens per segment: mostly a few, often enough to fill the engine's
/// buffers (the quantizer's holds about `2 beats + 30` beats).
fn token_count(p: &OakenParams) -> impl Strategy<Value = usize> {
    let fill = (2 * p.beats() + 40).div_ceil(p.beats()) + 2;
    prop_oneof![6 => 1..=8usize, 3 => 8..=fill.max(9), 1 => fill..=2 * fill]
}

fn segment(p: &OakenParams, three_ends: bool) -> impl Strategy<Value = SegPlan> {
    let ends = if three_ends { 2 } else { 1 };
    let input = proptest::collection::vec(stalls::stall(), ends);
    let output = prop_oneof![3 => stalls::stall(), 2 => stalls::long_stall()];
    let beats = p.beats() as u32;
    let pp = p.clone();
    (
        prop_oneof![9 => Just(true), 1 => Just(false)],
        proptest::collection::vec(write_plan(p), 0..4),
        token_count(p),
        prop_oneof![3 => Just(0usize), 1 => 1..6usize],
        prop_oneof![4 => Just(None), 1 => (0u32..400).prop_map(Some)],
        1u32..=3,
        input,
        output,
        any::<u64>(),
    )
        .prop_flat_map(move |(load, writes, n, n_live, reset_at, reset_cycles, input, output, seed)| {
            let tokens = proptest::collection::vec(tok_plan(&pp), n);
            let horizon = (n as u32 * beats * 3).max(8);
            let live = proptest::collection::vec((0..horizon, write_plan(&pp)), n_live).prop_map(|mut l| {
                l.sort_by_key(|(c, _)| *c);
                l.dedup_by_key(|(c, _)| *c);
                l
            });
            let reset_at = reset_at.map(|r| r % horizon);
            let mut st = [Stall::Never, Stall::Never, Stall::Never];
            for (i, s) in input.into_iter().enumerate() {
                st[i] = s;
            }
            st[2] = output;
            (tokens, live).prop_map(move |(tokens, live)| SegPlan {
                load,
                writes: writes.clone(),
                tokens,
                live,
                reset_at,
                reset_cycles,
                stalls: st.clone(),
                seed,
            })
        })
}

/// A case of 1 to `max_segments` segments (the first always loads the
/// profiled thresholds). `three_ends`: two inputs and an output (the
/// dequantizer) rather than one input and an output.
pub fn case(p: &OakenParams, max_segments: usize, three_ends: bool) -> impl Strategy<Value = CasePlan> {
    (any::<u64>(), proptest::collection::vec(segment(p, three_ends), 1..=max_segments)).prop_map(
        |(pool_seed, mut segments)| {
            segments[0].load = true;
            CasePlan { pool_seed, segments }
        },
    )
}

/// A plan turned into writes and tokens.
#[derive(Clone, Debug)]
pub struct Segment {
    pub writes: Vec<TableWrite>,
    pub tokens: Vec<Token>,
    /// What each token is (for coverage): 0 realistic, 1 tie, 2 edge.
    pub kinds: Vec<u8>,
    pub live: Vec<(u32, TableWrite)>,
    pub reset_at: Option<u32>,
    pub reset_cycles: u32,
    pub stalls: [Stall; 3],
    pub seed: u64,
}

/// The realistic pool of a case (64 tokens per layer and K/V).
pub fn pool(p: &OakenParams, seed: u64) -> KvPool {
    testgen::kv_pool(p.vector_len(), real_layers(p) as usize, 32, seed)
}

fn write_of(pool: &KvPool, w: &WritePlan) -> TableWrite {
    let kv = if w.v { Kv::V } else { Kv::K };
    let raw = match &w.kind {
        WriteKind::Profiled => {
            let t = pool.set(w.layer as usize, kv);
            [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]
        }
        WriteKind::Scaled(s) => {
            let t = testgen::realistic_thresholds(*s);
            [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer]
        }
        WriteKind::Legal(r) | WriteKind::Raw(r) => *r,
    };
    TableWrite { layer: w.layer, v: w.v, raw }
}

/// A segment's writes before its stream, and the table after them (from
/// reset).
fn writes_of(p: &OakenParams, pool: &KvPool, sp: &SegPlan) -> (Vec<TableWrite>, ThresholdTable) {
    let mut writes = Vec::new();
    if sp.load {
        for l in 0..real_layers(p) {
            for v in [false, true] {
                writes.push(write_of(pool, &WritePlan { layer: l, v, kind: WriteKind::Profiled }));
            }
        }
    }
    writes.extend(sp.writes.iter().map(|w| write_of(pool, w)));
    let mut table = ThresholdTable::new(p.layers);
    for w in &writes {
        let _ = table.write(w.layer as usize, if w.v { Kv::V } else { Kv::K }, w.raw);
    }
    (writes, table)
}

/// Turns a plan into segments. Tokens are drawn for the set their (layer,
/// K/V) holds after the segment's writes (from reset for each segment: a
/// reset clears the table, spec §2.13).
pub fn materialize(p: &OakenParams, plan: &CasePlan) -> Vec<Segment> {
    let pool = pool(p, plan.pool_seed);
    plan.segments
        .iter()
        .map(|sp| {
            let (writes, table) = writes_of(p, &pool, sp);
            let mut kinds = Vec::new();
            let tokens = sp
                .tokens
                .iter()
                .map(|t| {
                    let kv = if t.v { Kv::V } else { Kv::K };
                    let (set, _): (ThresholdSet, bool) = table.lookup(t.layer as usize, kv);
                    let (kind, x) = match t.kind {
                        TokKind::Real(i) => (0, pool.token(t.layer as usize, kv, i).to_vec()),
                        TokKind::Tie(s) => match testgen::tie_token(p, &set, s) {
                            Some(x) => (1, x),
                            None => (0, pool.token(t.layer as usize, kv, s as usize).to_vec()),
                        },
                        TokKind::Edge(s) => (2, testgen::edge_token_seeded(p.vector_len(), set, s).1),
                        TokKind::QuietHead(i) => {
                            let mut x = pool.token(t.layer as usize, kv, i).to_vec();
                            let mid = (fp16::to_f32(set.hi_inner) + fp16::to_f32(set.hi_outer)) / 2.0;
                            x[..p.head_dim].fill(fp16::from_f32(mid));
                            (2, x)
                        }
                        TokKind::Zeros => (2, vec![0; p.vector_len()]),
                        TokKind::NearHeld => {
                            let f = |u: u16| fp16::to_f32(u);
                            let mid = fp16::from_f32((f(set.lo_inner) + f(set.hi_inner)) / 2.0);
                            let x = (0..p.vector_len())
                                .map(|i| match i % 5 {
                                    0 => fp16::MAX_NEG,
                                    1 => fp16::from_f32(f(set.lo_outer) - 65504.0 + 32.0 * (i / 5 % 3) as f32),
                                    _ => mid,
                                })
                                .collect();
                            (2, x)
                        }
                    };
                    kinds.push(kind);
                    Token { layer: t.layer, v: t.v, x }
                })
                .collect();
            Segment {
                writes,
                tokens,
                kinds,
                live: sp.live.iter().map(|(c, w)| (*c, write_of(&pool, w))).collect(),
                reset_at: sp.reset_at,
                reset_cycles: sp.reset_cycles,
                stalls: sp.stalls.clone(),
                seed: sp.seed,
            }
        })
        .collect()
}

/// One short directed case that reaches the rare coverage points of the
/// engines' tests whatever the seed (few random cases, as on netlists, may
/// miss them). A segment cut by a reset while tokens are inside (the
/// output blocked from the start); then, from reset, the profiled sets
/// loaded and a non-finite, an out-of-order and an out-of-range write and a
/// legal one; realistic tokens of every used layer and K/V, tie tokens
/// with a rounding tie in each group, edge-case tokens of every kind, a
/// token with one head free of outliers, a token of zeros and a token of a
/// layer out of range, the output blocked long enough to fill the buffers,
/// the inputs stalled at random, and during the traffic a reload of a
/// profiled set (the same values, so each token's set does not hang on
/// when the write lands). `three_ends` as for `case`.
pub fn directed_case(p: &OakenParams, three_ends: bool) -> CasePlan {
    let real = real_layers(p);
    let oob = p.layers.min(255) as u8;
    let tok = |k: usize, kind: TokKind| TokPlan { layer: (k / 2 % real as usize) as u8, v: k % 2 == 1, kind };
    let input = if three_ends { Stall::Random { p: 60 } } else { Stall::Never };
    let cut = SegPlan {
        load: true,
        writes: vec![],
        tokens: (0..4).map(|k| tok(k, TokKind::Real(k))).collect(),
        live: vec![],
        reset_at: Some(24),
        reset_cycles: 2,
        stalls: [Stall::Never, Stall::Never, Stall::Block { start: 0, len: 100_000 }],
        seed: 0x0a4e_0001,
    };
    let t = testgen::realistic_thresholds(1.0);
    let swapped = [t.hi_outer, t.lo_inner, t.hi_inner, t.lo_outer];
    let mut tokens: Vec<TokPlan> = (0..2 * real as usize).map(|k| tok(k, TokKind::Real(3 * k))).collect();
    // edge-case tokens of each kind (mixed, constant, all outliers: the
    // kind hangs on the seed alone), three in a row of the last
    let kind = |s: u64| testgen::edge_token_seeded(1, t, s).0;
    let seeds = |k: u8, n: usize| (0u64..4096).filter(move |&s| kind(s) == k).take(n);
    let edge: Vec<u64> = seeds(0, 3).chain(seeds(1, 2)).chain(seeds(2, 3)).collect();
    tokens.extend(edge.iter().enumerate().map(|(k, &s)| tok(k, TokKind::Edge(s))));
    tokens.extend([tok(0, TokKind::QuietHead(5)), tok(1, TokKind::Zeros)]);
    tokens.push(TokPlan { layer: oob, v: false, kind: TokKind::Real(1) });
    let mut traffic = SegPlan {
        load: true,
        writes: vec![
            WritePlan { layer: 0, v: false, kind: WriteKind::Raw([0x7E00, t.lo_inner, t.hi_inner, t.hi_outer]) },
            WritePlan { layer: 0, v: true, kind: WriteKind::Raw(swapped) },
            WritePlan { layer: oob, v: false, kind: WriteKind::Scaled(1.0) },
            WritePlan { layer: real - 1, v: true, kind: WriteKind::Scaled(0.5) },
        ],
        tokens,
        live: vec![(120, WritePlan { layer: 0, v: false, kind: WriteKind::Profiled })],
        reset_at: None,
        reset_cycles: 1,
        stalls: [Stall::Random { p: 40 }, input, Stall::Block { start: 16, len: 300 }],
        seed: 0x0a4e_0002,
    };
    // tie tokens of layer 0's K set: the first seeds whose token has a
    // rounding tie in each group (searched here, as the set is known)
    let pool_seed = 0x0a4e;
    let (_, table) = writes_of(p, &pool(p, pool_seed), &traffic);
    let (set, _) = table.lookup(0, Kv::K);
    let mut ties: Vec<u64> = (0..3)
        .filter_map(|g| {
            (0..256u64)
                .find(|&s| testgen::tie_token(p, &set, s).is_some_and(|x| testgen::rounding_ties(p, &set, &x)[g] > 0))
        })
        .collect();
    ties.sort_unstable();
    ties.dedup();
    let at = 2 * real as usize;
    traffic.tokens.splice(at..at, ties.into_iter().map(|s| TokPlan { layer: 0, v: false, kind: TokKind::Tie(s) }));
    let mut segments = vec![cut, traffic];
    if p.middle_mode == sim::oaken::params::MiddleMode::Paper {
        segments.push(held_segment(p));
    }
    CasePlan { pool_seed, segments }
}

/// `paper` mode (spec §2.5): a threshold set above zero (1, 2, 3, 4) and
/// edge-case tokens holding -65504 or -Inf, whose folded lower value
/// `x - lo_outer` is below -65504 and is held there; and V's set at (1034,
/// 2048, 3072, 4096) with a `NearHeld` token, whose held values lie 1034
/// below a group range of a few steps. 1034 is not a multiple of that
/// range's 64: the unheld `n` keeps bits inside the lane divider's window,
/// so a lane that divided it instead of 0 would code 2^M - 1, not 0.
fn held_segment(p: &OakenParams) -> SegPlan {
    let raw = [0x3C00, 0x4000, 0x4200, 0x4400];
    let set = sim::oaken::thresholds::ThresholdSet::new(raw).expect("an ordered set");
    let low = |x: &[u16]| x.iter().any(|&e| e == 0xFBFF || e == 0xFC00);
    let seeds = (0u64..100_000).filter(|&s| low(&testgen::edge_token_seeded(p.vector_len(), set, s).1)).take(3);
    SegPlan {
        load: true,
        writes: vec![
            WritePlan { layer: 0, v: false, kind: WriteKind::Raw(raw) },
            WritePlan { layer: 0, v: true, kind: WriteKind::Raw([0x640A, 0x6800, 0x6A00, 0x6C00]) },
        ],
        tokens: seeds
            .map(|s| TokPlan { layer: 0, v: false, kind: TokKind::Edge(s) })
            .chain([TokPlan { layer: 0, v: true, kind: TokKind::NearHeld }])
            .collect(),
        live: vec![],
        reset_at: None,
        reset_cycles: 1,
        stalls: [Stall::Never, Stall::Never, Stall::Random { p: 30 }],
        seed: 0x0a4e_0003,
    }
}
