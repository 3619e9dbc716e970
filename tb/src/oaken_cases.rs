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

/// Turns a plan into segments. Tokens are drawn for the set their (layer,
/// K/V) holds after the segment's writes (from reset for each segment: a
/// reset clears the table, spec §2.13).
pub fn materialize(p: &OakenParams, plan: &CasePlan) -> Vec<Segment> {
    let pool = pool(p, plan.pool_seed);
    plan.segments
        .iter()
        .map(|sp| {
            let mut writes = Vec::new();
            if sp.load {
                for l in 0..real_layers(p) {
                    for v in [false, true] {
                        writes.push(write_of(&pool, &WritePlan { layer: l, v, kind: WriteKind::Profiled }));
                    }
                }
            }
            writes.extend(sp.writes.iter().map(|w| write_of(&pool, w)));
            let mut table = ThresholdTable::new(p.layers);
            for w in &writes {
                let _ = table.write(w.layer as usize, if w.v { Kv::V } else { Kv::K }, w.raw);
            }
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
