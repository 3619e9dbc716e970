//! Driving the Titanus pruning unit and predicting its output from `sim`.
//! Paper: Titanus §3.1, §4.3. Spec: docs/spec.md §11.3, §11.4, §11.13,
//! §11.14.
//!
//! A case is a stream of tokens (K and V side by side, `channels/lanes`
//! beats each) with table writes before and during it. Each accepted beat is
//! predicted with `sim::titanus::pruner::prune_beats` and the table as
//! `sim`'s `ConfigTable` holds it at the accepting edge (writes at earlier
//! edges). Inputs whose valid is low carry noise.

use crate::coverage::Coverage;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use crate::titanus_table::{threshold, write, TwPort};
use proptest::prelude::*;
use serde::Deserialize;
use sim::oaken::thresholds::Kv;
use sim::titanus::params::ConfigTable;
use sim::titanus::pruner::prune_beats;

pub use crate::titanus_table::{tw_code, Write};

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PrunerParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub pipeline: usize,
}

pub fn params_of(m: &Model) -> PrunerParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are titanus-pruner's")
}

/// The parameters of a tb/models.toml entry without building its model
/// (spec §11.1's defaults; `pipeline` is the hardware's alone, so any).
pub fn params_of_spec(params: &toml::Table) -> PrunerParams {
    let d = sim::titanus::params::TitanusParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    PrunerParams {
        channels: get("channels", d.channels),
        lanes: get("lanes", d.lanes),
        layers: get("layers", d.layers),
        pipeline: get("pipeline", 0),
    }
}

#[derive(Clone, Debug)]
pub struct Token {
    pub layer: u8,
    pub k: Vec<i8>,
    pub v: Vec<i8>,
}

#[derive(Clone, Debug)]
struct InBeat {
    layer: u8,
    k: Vec<i8>,
    v: Vec<i8>,
    last: bool,
}

/// What the output shows while `out_valid` is high.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub k_mask: u128,
    pub v_mask: u128,
    pub k_data: Vec<u64>,
    pub v_data: Vec<u64>,
    pub k_count: u64,
    pub v_count: u64,
    pub last: bool,
    pub oob: bool,
}

fn mask_of(bits: &[bool]) -> u128 {
    bits.iter().enumerate().fold(0, |a, (i, &b)| a | (b as u128) << i)
}

/// `sim`'s prediction for one beat under `table`.
fn expect(p: &PrunerParams, table: &ConfigTable, b: &InBeat) -> OutBeat {
    let (ck, oob) = table.lookup(b.layer as usize, Kv::K);
    let (cv, _) = table.lookup(b.layer as usize, Kv::V);
    let k = &prune_beats(&b.k, ck.threshold, p.lanes)[0];
    let v = &prune_beats(&b.v, cv.threshold, p.lanes)[0];
    OutBeat {
        k_mask: mask_of(&k.mask),
        v_mask: mask_of(&v.mask),
        k_data: k.data.iter().map(|&x| x as u8 as u64).collect(),
        v_data: v.data.iter().map(|&x| x as u8 as u64).collect(),
        k_count: k.count as u64,
        v_count: v.count as u64,
        last: b.last,
        oob,
    }
}

/// One case: writes before the stream, the tokens, writes at stream cycles.
#[derive(Clone, Debug)]
pub struct Case {
    pub writes: Vec<Write>,
    pub tokens: Vec<Token>,
    pub live: Vec<(u32, Write)>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

/// An element: mostly small magnitudes, some at the token's thresholds, some
/// -128 and 127, some 0.
fn element(r: &mut Xorshift, t: u8) -> i8 {
    match r.next_u64() % 16 {
        0 => 0,
        1 => -128,
        2 => 127,
        3 | 4 => {
            let m = t.min(127) as i8;
            if r.next_u64() & 1 == 1 {
                m
            } else {
                -m
            }
        }
        5 => r.next_u64() as i8,
        _ => ((r.next_u64() % 49) as i8) - 24,
    }
}

/// A random case from `seed`: `n` tokens, table writes before and during.
pub fn case_of(p: &PrunerParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let writes: Vec<Write> = (0..r.next_u64() % 8).map(|_| write(&mut r, p.layers)).collect();
    let tokens = (0..n)
        .map(|_| {
            // a layer out of range now and then (when there is room for one)
            let layer = if r.next_u64() % 8 == 0 && p.layers < 256 {
                (p.layers + (r.next_u64() % 3) as usize).min(255) as u8
            } else {
                (r.next_u64() % p.layers as u64) as u8
            };
            let (tk, tv) = (threshold(&mut r), threshold(&mut r));
            let all_pruned = r.next_u64() % 10 == 0;
            let mut k: Vec<i8> = (0..p.channels).map(|_| element(&mut r, tk)).collect();
            let v: Vec<i8> = (0..p.channels).map(|_| element(&mut r, tv)).collect();
            if all_pruned {
                k.iter_mut().for_each(|x| *x = 0);
            }
            Token { layer, k, v }
        })
        .collect();
    let span = (n * p.channels / p.lanes * 3) as u64 + 8;
    let mut live: Vec<(u32, Write)> =
        (0..r.next_u64() % 6).map(|_| ((r.next_u64() % span) as u32, write(&mut r, p.layers))).collect();
    live.sort_by_key(|w| w.0);
    Case { writes, tokens, live, in_stall, out_stall, seed: r.next_u64() }
}

/// One short directed case that reaches every coverage point the
/// parameters allow, whatever the seed (few random cases, as on netlists,
/// may miss the rare ones): writes accepted, one of a layer out of range,
/// one of a bad width; K kept above a threshold of 5 (elements at it, at
/// -128 and 127), V under 200 (everything pruned); a token of a layer out
/// of range; the output blocked while the input keeps offering, and a
/// rejected write while beats are in flight (rejected, so the table each
/// beat sees does not hang on when it lands).
pub fn directed_case(p: &PrunerParams) -> Case {
    let w = |layer: usize, v: bool, threshold: u8, bits: u8| Write { layer: layer.min(255) as u8, v, threshold, bits };
    let writes = vec![w(0, false, 5, 4), w(0, true, 200, 4), w(p.layers, false, 1, 4), w(0, false, 9, 1)];
    let ks = [5i8, -5, -128, 127, 6, -40, 64, -6];
    let vs = [-128i8, 127, 0, 3, -100, 50, 1, -1];
    let token = |layer: u8, s: usize| Token {
        layer,
        k: (0..p.channels).map(|i| ks[(i + s) % ks.len()]).collect(),
        v: (0..p.channels).map(|i| vs[(i + s) % vs.len()]).collect(),
    };
    let mut tokens: Vec<Token> = (0..6).map(|s| token(0, s)).collect();
    if p.layers < 256 {
        tokens.push(token(p.layers as u8, 0));
    }
    Case {
        writes,
        tokens,
        live: vec![(4, w(0, true, 3, 0))],
        in_stall: Stall::Never,
        out_stall: Stall::Block { start: 2, len: 40 },
        seed: 0x9e,
    }
}

/// What `sim` alone says a case does: the table-write codes in order and,
/// for every beat, the points read off the model with the table after the
/// writes before the stream (so only for cases whose live writes are all
/// rejected, as the directed case's; panics otherwise).
pub fn model_run(p: &PrunerParams, c: &Case) -> Run {
    let mut table = ConfigTable::new(p.layers);
    let mut run = Run::default();
    for w in &c.writes {
        run.tw_codes.push(crate::titanus_table::apply(&mut table, w));
    }
    let n = p.channels / p.lanes;
    for t in &c.tokens {
        for b in 0..n {
            let beat = InBeat {
                layer: t.layer,
                k: t.k[b * p.lanes..(b + 1) * p.lanes].to_vec(),
                v: t.v[b * p.lanes..(b + 1) * p.lanes].to_vec(),
                last: b + 1 == n,
            };
            count_beat(&table, &beat, &mut run);
            run.expected.push(expect(p, &table, &beat));
        }
    }
    for (_, w) in &c.live {
        let code = crate::titanus_table::apply(&mut table, w);
        assert_ne!(code, 0, "model_run: a live write that changes the table");
        run.tw_codes.push(code);
    }
    run.beats = run.expected.len();
    run
}

/// The points of an accepted beat, with the thresholds in effect.
fn count_beat(table: &ConfigTable, b: &InBeat, run: &mut Run) {
    for (side, xs) in [(Kv::K, &b.k), (Kv::V, &b.v)] {
        let t = table.lookup(b.layer as usize, side).0.threshold;
        run.eq_threshold += xs.iter().filter(|&&x| t > 0 && x.unsigned_abs() == t).count() as u64;
        run.m128_kept += xs.iter().filter(|&&x| x == -128 && t <= 128).count() as u64;
        run.m128_pruned += xs.iter().filter(|&&x| x == -128 && t > 128).count() as u64;
        run.prune_all += (t >= 129) as u64;
    }
}

pub fn case(p: PrunerParams, tokens: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (tokens, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

struct Ports {
    tw_valid: PortId,
    tw_layer: PortId,
    tw_kv: PortId,
    tw_threshold: PortId,
    tw_bits: PortId,
    in_valid: PortId,
    in_ready: PortId,
    in_layer: PortId,
    in_k: PortId,
    in_v: PortId,
    in_last: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_k_mask: PortId,
    out_v_mask: PortId,
    out_k_data: PortId,
    out_v_data: PortId,
    out_k_count: PortId,
    out_v_count: PortId,
    out_last: PortId,
    out_oob: PortId,
}

impl Ports {
    fn of(m: &Model) -> Ports {
        let g = |n: &str| m.port(n);
        Ports {
            tw_valid: g("tw_valid"),
            tw_layer: g("tw_layer"),
            tw_kv: g("tw_kv"),
            tw_threshold: g("tw_threshold"),
            tw_bits: g("tw_bits"),
            in_valid: g("in_valid"),
            in_ready: g("in_ready"),
            in_layer: g("in_layer"),
            in_k: g("in_k"),
            in_v: g("in_v"),
            in_last: g("in_last"),
            out_valid: g("out_valid"),
            out_ready: g("out_ready"),
            out_k_mask: g("out_k_mask"),
            out_v_mask: g("out_v_mask"),
            out_k_data: g("out_k_data"),
            out_v_data: g("out_v_data"),
            out_k_count: g("out_k_count"),
            out_v_count: g("out_v_count"),
            out_last: g("out_last"),
            out_oob: g("out_layer_oob"),
        }
    }

    fn read(&self, m: &Model) -> OutBeat {
        OutBeat {
            k_mask: m.get_u128(self.out_k_mask),
            v_mask: m.get_u128(self.out_v_mask),
            k_data: m.get_lanes(self.out_k_data),
            v_data: m.get_lanes(self.out_v_data),
            k_count: m.get(self.out_k_count),
            v_count: m.get(self.out_v_count),
            last: m.get(self.out_last) == 1,
            oob: m.get(self.out_oob) == 1,
        }
    }
}

/// What a run saw, for coverage and throughput.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub cycles: u64,
    pub beats: usize,
    /// Cycles with a beat offered and `in_ready` low.
    pub in_blocked: u64,
    /// Cycles with `out_valid` high and `out_ready` low.
    pub out_held: u64,
    /// Output beats taken on consecutive cycles.
    pub back_to_back: u64,
    /// Cycles from the first acceptance to the first output beat.
    pub first_latency: Option<u64>,
    /// Model cycle of each accepted input beat and of each output beat
    /// taken (for throughput).
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub tw_codes: Vec<u64>,
    /// Live writes that landed while beats were in flight.
    pub writes_in_flight: u64,
    pub expected: Vec<OutBeat>,
    /// Per accepted beat, with the thresholds in effect: elements with
    /// |x| = T > 0, -128 kept / pruned, sides with T >= 129.
    pub eq_threshold: u64,
    pub m128_kept: u64,
    pub m128_pruned: u64,
    pub prune_all: u64,
}

fn lanes8(x: &[i8]) -> Vec<u64> {
    x.iter().map(|&v| v as u8 as u64).collect()
}

/// Runs `c` on `m` (fresh out of reset), checking every output beat, the
/// table-write responses and that `in_ready` does not depend on `out_ready`.
pub fn run(m: &mut Model, p: &PrunerParams, c: &Case) -> Result<Run, String> {
    let io = Ports::of(m);
    let mut rng = Xorshift::new(c.seed ^ 0x5eed);
    let mut table = ConfigTable::new(p.layers);
    let mut run = Run::default();
    // writes before the stream, one per cycle
    let mut tw = TwPort::of(m);
    for w in &c.writes {
        tw.drive(m, Some(w), &mut rng);
        tw.taken(&mut table, w);
        m.tick();
        tw.check(m)?;
    }
    tw.drive(m, None, &mut rng);

    let beats: Vec<InBeat> = c
        .tokens
        .iter()
        .flat_map(|t| {
            let n = p.channels / p.lanes;
            (0..n).map(move |b| InBeat {
                layer: t.layer,
                k: t.k[b * p.lanes..(b + 1) * p.lanes].to_vec(),
                v: t.v[b * p.lanes..(b + 1) * p.lanes].to_vec(),
                last: b + 1 == n,
            })
        })
        .collect();
    let total = beats.len();
    let mut src = Source::new(beats, &c.in_stall, c.seed ^ 1);
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let mut live = c.live.iter().peekable();
    let mut first_accept: Option<u64> = None;
    let mut last_out: Option<u64> = None;
    // generous: a bursty sink may stall 97% of the time in bursts of hundreds of cycles
    let timeout = 5000 + 400 * total as u64;
    let mut cyc = 0u64;
    while sink.beats.len() < total {
        if cyc > timeout {
            return Err(format!("timeout: {} of {total} beats out after {cyc} cycles", sink.beats.len()));
        }
        let w = match live.peek() {
            Some((at, _)) if *at as u64 <= cyc => live.next().map(|x| x.1),
            _ => None,
        };
        tw.drive(m, w.as_ref(), &mut rng);
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => {
                m.set(io.in_layer, b.layer as u64);
                m.set_lanes(io.in_k, &lanes8(&b.k));
                m.set_lanes(io.in_v, &lanes8(&b.v));
                m.set(io.in_last, b.last as u64);
            }
            None => {
                m.set(io.in_layer, rng.next_u64() & 0xFF);
                m.set_lanes(io.in_k, &(0..p.lanes).map(|_| rng.next_u64() & 0xFF).collect::<Vec<_>>());
                m.set_lanes(io.in_v, &(0..p.lanes).map(|_| rng.next_u64() & 0xFF).collect::<Vec<_>>());
                m.set(io.in_last, rng.next_u64() & 1);
            }
        }
        let ready = sink.ready();
        let in_ready = stream::settle_ready(m, io.in_ready, io.out_ready, ready)?;
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        let valid = m.get(io.out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        if sink.sample(cycle, valid, ready, || io.read(m))?.is_some() {
            if last_out == Some(cycle.wrapping_sub(1)) {
                run.back_to_back += 1;
            }
            last_out = Some(cycle);
            if run.first_latency.is_none() {
                run.first_latency = first_accept.map(|a| cycle - a);
            }
        }
        if let Some(b) = offer {
            if in_ready {
                src.take();
                first_accept.get_or_insert(cycle);
                run.in_cycles.push(cycle);
                count_beat(&table, &b, &mut run);
                run.expected.push(expect(p, &table, &b));
            }
        }
        if let Some(w) = &w {
            if run.expected.len() > sink.beats.len() {
                run.writes_in_flight += 1;
            }
            tw.taken(&mut table, w);
        }
        m.tick();
        tw.check(m)?;
        cyc += 1;
    }
    // nothing more may come out
    tw.drive(m, None, &mut rng);
    m.set(io.in_valid, 0);
    m.set(io.out_ready, 1);
    for _ in 0..8 {
        m.eval();
        if m.get(io.out_valid) == 1 {
            return Err(format!("cycle {}: an extra output beat after the stream", m.cycle()));
        }
        m.tick();
        tw.check(m)?;
    }
    stream::compare(&sink.beats, &run.expected, false, |i| format!("output beat {i}"))?;
    run.cycles = cyc;
    run.tw_codes = tw.codes;
    run.beats = total;
    run.out_cycles = sink.cycles;
    Ok(run)
}

pub const POINTS: &[&str] = &[
    "input blocked (pipeline full)",
    "output held (backpressure)",
    "back-to-back output beats",
    "write accepted",
    "write rejected: layer out of range",
    "write rejected: bad bit width",
    "write while beats in flight",
    "beat of a layer out of range",
    "-128 kept",
    "-128 pruned",
    "|x| equal to a threshold > 0, kept",
    "all-pruned beat",
    "all-kept beat",
    "threshold >= 129 (prunes all)",
];

/// Counts the points a run reached.
pub fn cover(cov: &Coverage, p: &PrunerParams, r: &Run) {
    cov.add("input blocked (pipeline full)", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("back-to-back output beats", r.back_to_back);
    cov.add("write accepted", r.tw_codes.iter().filter(|&&x| x == 0).count() as u64);
    cov.add("write rejected: layer out of range", r.tw_codes.iter().filter(|&&x| x == 1).count() as u64);
    cov.add("write rejected: bad bit width", r.tw_codes.iter().filter(|&&x| x == 2).count() as u64);
    cov.add("write while beats in flight", r.writes_in_flight);
    cov.add("-128 kept", r.m128_kept);
    cov.add("-128 pruned", r.m128_pruned);
    cov.add("|x| equal to a threshold > 0, kept", r.eq_threshold);
    cov.add("threshold >= 129 (prunes all)", r.prune_all);
    for e in &r.expected {
        cov.hit_if("beat of a layer out of range", e.oob);
        for cnt in [e.k_count, e.v_count] {
            cov.hit_if("all-pruned beat", cnt == 0);
            cov.hit_if("all-kept beat", cnt as usize == p.lanes);
        }
    }
}

/// Writes thresholds, fills the pipeline and the skid with the output
/// stalled, then resets (1 cycle) with beats in flight: afterwards the unit
/// must behave as fresh out of reset (thresholds 0, nothing left to show),
/// which the caller checks by running a case from a fresh `ConfigTable`.
/// Returns the beats that were in flight.
pub fn fill_then_reset(m: &mut Model, p: &PrunerParams, seed: u64) -> usize {
    let io = Ports::of(m);
    let mut r = Xorshift::new(seed);
    for layer in 0..p.layers.min(4) {
        for v in [0, 1] {
            m.set(io.tw_valid, 1);
            m.set(io.tw_layer, layer as u64);
            m.set(io.tw_kv, v);
            m.set(io.tw_threshold, 1 + (r.next_u64() % 100));
            m.set(io.tw_bits, 4);
            m.tick();
        }
    }
    m.set(io.tw_valid, 0);
    m.set(io.out_ready, 0);
    let mut taken = 0;
    for _ in 0..16 {
        m.set(io.in_valid, 1);
        m.set(io.in_layer, 0);
        m.set_lanes(io.in_k, &(0..p.lanes).map(|_| r.next_u64() & 0xFF).collect::<Vec<_>>());
        m.set_lanes(io.in_v, &(0..p.lanes).map(|_| r.next_u64() & 0xFF).collect::<Vec<_>>());
        m.set(io.in_last, 0);
        m.eval();
        taken += m.get(io.in_ready) as usize;
        m.tick();
    }
    m.reset(1);
    taken
}
