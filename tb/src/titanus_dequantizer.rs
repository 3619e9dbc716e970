//! Driving the Titanus dequantization unit and predicting its output from
//! `sim::titanus::dequantizer`. Paper: Titanus §3.1, §4.4. Spec:
//! docs/spec.md §11.8, §11.13, §11.14.3.
//!
//! A case is a list of operations done in order: scale-zero loads (some
//! rejected), table clears, and tokens (record beats at a position). An
//! operation starts when the previous one has been fully accepted, so a
//! token's beats all see one table; loads still land while earlier tokens
//! are in the pipeline or held by backpressure. Each token is predicted with
//! `Dequantizer::dequantize` on the table as loaded when its first beat is
//! accepted. The skip counters are compared (modulo 2^32) at the end.
//! Code lanes at and past a beat's code count, and every input whose valid
//! is low, carry noise.

use crate::coverage::Coverage;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::titanus::dequantizer::{Dequantizer, SzError};
use sim::titanus::params::TitanusParams;
use sim::titanus::quantizer::{reconstruct, Record, SzEntry};

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DeqParams {
    pub channels: usize,
    pub lanes: usize,
    pub max_levels: usize,
}

impl DeqParams {
    pub fn titanus(&self) -> TitanusParams {
        TitanusParams { channels: self.channels, lanes: self.lanes, max_levels: self.max_levels, ..Default::default() }
    }
}

pub fn params_of(m: &Model) -> DeqParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are titanus-dequantizer's")
}

/// The parameters of a tb/models.toml entry without building its model
/// (spec §11.1's defaults).
pub fn params_of_spec(params: &toml::Table) -> DeqParams {
    let d = TitanusParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    DeqParams {
        channels: get("channels", d.channels),
        lanes: get("lanes", d.lanes),
        max_levels: get("max-levels", d.max_levels),
    }
}

#[derive(Clone, Debug)]
pub enum Op {
    Load(SzEntry),
    Clear,
    Token { pos: u16, rec: Record },
}

#[derive(Clone, Debug)]
pub struct Case {
    pub ops: Vec<Op>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

fn entry(r: &mut Xorshift, p: &DeqParams) -> SzEntry {
    let channel = if r.next_u64() % 16 == 0 {
        (p.channels as u64 + r.next_u64() % (1024 - p.channels as u64).max(1)).min(1023) as u16
    } else {
        (r.next_u64() % p.channels as u64) as u16
    };
    let level =
        if r.next_u64() % 16 == 0 { (r.next_u64() % 16) as u8 } else { (r.next_u64() % p.max_levels as u64) as u8 };
    let scale = match r.next_u64() % 8 {
        0 => 256,
        1 => r.next_u64() as u16,
        2 => 21760,
        _ => 256 + (r.next_u64() % 8000) as u16,
    };
    let zero = match r.next_u64() % 4 {
        0 => (r.next_u64() % 512) as i16 - 256,
        1 => -126 + (r.next_u64() % 262) as i16,
        _ => (r.next_u64() % 16) as i16,
    };
    let start = [0u16, 0, 1, 3, 7, 20, 100, 65535][(r.next_u64() % 8) as usize];
    SzEntry { channel, level, scale, zero, start }
}

fn token(r: &mut Xorshift, p: &DeqParams) -> Op {
    let pos = [0u16, 1, 2, 5, 8, 30, 150, 65535][(r.next_u64() % 8) as usize];
    let density = r.next_u64() % 5; // 0: all pruned
    let index: Vec<bool> = (0..p.channels).map(|_| density > 0 && r.next_u64() % 4 < density).collect();
    let label: Vec<bool> = index.iter().map(|&k| k && r.next_u64() % 4 != 0).collect();
    let codes = label.iter().filter(|&&l| l).map(|_| (r.next_u64() % 16) as u8).collect();
    Op::Token { pos, rec: Record { index, label, codes } }
}

pub fn case_of(p: &DeqParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let mut ops: Vec<Op> = (0..p.channels * p.max_levels / 2 + 2).map(|_| Op::Load(entry(&mut r, p))).collect();
    for _ in 0..n {
        match r.next_u64() % 10 {
            0..=2 => ops.push(Op::Load(entry(&mut r, p))),
            3 if r.next_u64() % 4 == 0 => ops.push(Op::Clear),
            _ => {}
        }
        ops.push(token(&mut r, p));
    }
    Case { ops, in_stall, out_stall, seed: r.next_u64() }
}

pub fn case(p: DeqParams, tokens: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (tokens, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One record beat as driven.
#[derive(Clone, Debug)]
struct InBeat {
    pos: u16,
    index: u128,
    label: u128,
    codes: Vec<u64>,
    count: usize,
    last: bool,
}

fn beats_of(p: &DeqParams, pos: u16, rec: &Record) -> Vec<InBeat> {
    let mut codes = rec.codes.iter();
    let n = p.channels / p.lanes;
    (0..n)
        .map(|b| {
            let ch = b * p.lanes..(b + 1) * p.lanes;
            let mut cs = Vec::new();
            for c in ch.clone() {
                if rec.label[c] {
                    cs.push(*codes.next().unwrap() as u64);
                }
            }
            let bits = |v: &[bool]| v[ch.clone()].iter().enumerate().fold(0u128, |a, (i, &x)| a | (x as u128) << i);
            InBeat {
                pos,
                index: bits(&rec.index),
                label: bits(&rec.label),
                count: cs.len(),
                codes: cs,
                last: b + 1 == n,
            }
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub data: Vec<u64>,
    pub last: bool,
}

/// What a run saw.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub beats: usize,
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    pub sz_codes: Vec<u64>,
    pub clears: u64,
    pub loads_in_flight: u64,
    /// Loads accepted while the last beat accepted before them had not yet
    /// left S1 (the unit holds such a load until the beat has read the table).
    pub load_held: u64,
    pub counters: [u64; 5],
    /// Kept elements decoded with a level above 0; rebuilt at -128 / 127
    /// through the multiplier.
    pub upper_level: u64,
    pub sat_low: u64,
    pub sat_high: u64,
    pub all_pruned_tokens: u64,
    pub first_latency: Option<u64>,
    /// A reset cut the run (`run_until`), with this in flight.
    pub cut: Option<InFlight>,
    /// Model cycle of each accepted record beat and of each output beat
    /// taken (for throughput).
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "load accepted",
    "load rejected: channel out of range",
    "load rejected: level out of range",
    "table clear",
    "load while records in flight",
    "load held for record beats ahead",
    "skip: pruned",
    "skip: label zero (rec(0))",
    "skip: zero point",
    "multiply",
    "missing level",
    "level above 0 used",
    "rebuilt value saturated at -128",
    "rebuilt value saturated at 127",
    "all-pruned token",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("load accepted", r.sz_codes.iter().filter(|&&c| c == 0).count() as u64 - r.clears);
    cov.add("load rejected: channel out of range", r.sz_codes.iter().filter(|&&c| c == 1).count() as u64);
    cov.add("load rejected: level out of range", r.sz_codes.iter().filter(|&&c| c == 2).count() as u64);
    cov.add("table clear", r.clears);
    cov.add("load while records in flight", r.loads_in_flight);
    cov.add("load held for record beats ahead", r.load_held);
    cov.add("skip: pruned", r.counters[0]);
    cov.add("skip: label zero (rec(0))", r.counters[1]);
    cov.add("skip: zero point", r.counters[2]);
    cov.add("multiply", r.counters[3]);
    cov.add("missing level", r.counters[4]);
    cov.add("level above 0 used", r.upper_level);
    cov.add("rebuilt value saturated at -128", r.sat_low);
    cov.add("rebuilt value saturated at 127", r.sat_high);
    cov.add("all-pruned token", r.all_pruned_tokens);
}

struct Ports {
    sz_valid: PortId,
    sz_ready: PortId,
    sz_word: PortId,
    sz_clear: PortId,
    sz_done: PortId,
    sz_error: PortId,
    in_valid: PortId,
    in_ready: PortId,
    in_pos: PortId,
    in_index: PortId,
    in_label: PortId,
    in_codes: PortId,
    in_last: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
    out_last: PortId,
    st: [PortId; 5],
}

fn sz_code(r: Result<(), SzError>) -> u64 {
    match r {
        Ok(()) => 0,
        Err(SzError::ChannelOutOfRange) => 1,
        Err(SzError::LevelOutOfRange) => 2,
    }
}

/// `dq`'s output for a token, with the coverage read off the model.
fn dequantize(p: &DeqParams, dq: &mut Dequantizer, pos: u16, rec: &Record, run: &mut Run) -> Vec<i8> {
    let x = dq.dequantize(pos as u32, rec);
    run.all_pruned_tokens += rec.index.iter().all(|&k| !k) as u64;
    let mut codes = rec.codes.iter();
    for ch in 0..p.channels {
        if !rec.index[ch] {
            continue;
        }
        let code = if rec.label[ch] { *codes.next().unwrap() } else { 0 };
        if let Some(e) = dq.table.lookup(ch, pos as u32) {
            run.upper_level += (e.level > 0) as u64;
            if code != 0 && code as i32 != e.zero as i32 {
                let v = reconstruct(e.scale as u32, e.zero as i32, code);
                run.sat_low += (v == -128) as u64;
                run.sat_high += (v == 127) as u64;
            }
        }
    }
    x
}

/// What `sim` alone says a case does (the points the model decides; an
/// operation starts when the previous one is accepted, so these do not hang
/// on the hardware's timing).
pub fn model_run(p: &DeqParams, c: &Case) -> Run {
    let mut dq = Dequantizer::new(&p.titanus());
    let mut run = Run::default();
    for op in &c.ops {
        match op {
            Op::Load(e) => run.sz_codes.push(sz_code(dq.table.load(e))),
            Op::Clear => {
                dq.table.clear();
                run.clears += 1;
                run.sz_codes.push(0);
            }
            Op::Token { pos, rec } => {
                dequantize(p, &mut dq, *pos, rec, &mut run);
                run.beats += p.channels / p.lanes;
            }
        }
    }
    let k = dq.counters;
    run.counters = [k.pruned, k.label_zero, k.zero_point, k.multiplies, k.missing_level];
    run
}

/// One short directed case that reaches every coverage point the
/// parameters allow, whatever the seed (few random cases, as on netlists,
/// may miss the rare ones): loads rejected for the channel and for the
/// level, a zero point a code meets, scales that saturate both ways, a
/// second level from position 4, a channel with no entry, tokens with
/// pruned, label-zero and coded channels, an all-pruned token, a clear;
/// a load after each token while its beats wait behind a blocked output.
fn directed_case(p: &DeqParams) -> Case {
    let c = p.channels;
    let load = |channel: usize, level: usize, scale: u16, zero: i16, start: u16| {
        Op::Load(SzEntry { channel: channel.min(1023) as u16, level: level.min(15) as u8, scale, zero, start })
    };
    let mut ops = vec![
        load(c, 0, 256, 0, 0),
        load(0, p.max_levels, 256, 0, 0),
        load(0, 0, 256, 3, 0),
        load(1, 0, 65535, -256, 0),
        load(2, 0, 65535, 255, 0),
        load(4, 0, 300, 2, 0),
    ];
    if p.max_levels > 1 {
        ops.push(load(0, 1, 512, 1, 4));
    }
    // channel 0 codes its zero point, 1 and 2 saturate, 3 has no entry,
    // 4 is kept with label 0, 5 pruned; the rest kept and coded (those
    // past 5 have no entry either)
    let token = |pos: u16, code0: u8| {
        let index: Vec<bool> = (0..c).map(|ch| ch != 5).collect();
        let label: Vec<bool> = (0..c).map(|ch| ch != 5 && ch != 4).collect();
        let codes = (0..c)
            .filter(|&ch| label[ch])
            .map(|ch| match ch {
                0 => code0,
                1 => 15,
                2 => 1,
                _ => 1 + (ch % 15) as u8,
            })
            .collect();
        Op::Token { pos, rec: Record { index, label, codes } }
    };
    let pruned = Op::Token { pos: 2, rec: Record { index: vec![false; c], label: vec![false; c], codes: vec![] } };
    let again = load(1, 0, 65535, -256, 0);
    ops.extend([token(0, 3), again.clone(), token(10, 7), again.clone(), pruned, again.clone(), token(20, 9)]);
    ops.extend([Op::Clear, token(1, 3), again]);
    Case { ops, in_stall: Stall::Never, out_stall: Stall::Block { start: 2, len: 60 }, seed: 0x7d0 }
}

/// The directed case twice: its output blocked, then stalled at random
/// (loads then land at every distance behind the last beat of a token).
pub fn directed_cases(p: &DeqParams) -> Vec<Case> {
    let c = directed_case(p);
    let random = Case { out_stall: Stall::Random { p: 90 }, seed: 0x7d1, ..c.clone() };
    vec![c, random]
}

/// What was in flight when a reset cut a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct InFlight {
    /// Some but not all beats of a token accepted.
    pub partial_token: bool,
    /// Output beats of accepted tokens not yet taken.
    pub owed: usize,
    /// A load accepted fewer than `LOAD_CYCLES` cycles before.
    pub load: bool,
}

/// A case to run right after a reset: a token before any load (every
/// kept, coded channel has no level: the table is empty after reset),
/// then a random case (`case_of`).
pub fn after_reset_case(p: &DeqParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut c = case_of(p, n, seed, in_stall, out_stall);
    let mut r = Xorshift::new(seed ^ 0x5eed);
    c.ops.insert(0, token(&mut r, p));
    c
}

/// Cycles a load keeps the table port (and record input) busy, its own
/// cycle included, when no record beat accepted before it waits.
pub const LOAD_CYCLES: u64 = 4;

/// Runs `c` on `m` (fresh out of reset); checks every output beat, every
/// load response, `in_ready` against `out_ready`, and the final counters.
pub fn run(m: &mut Model, p: &DeqParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run` until a one-cycle reset at cycle `reset_at` (if the case is still
/// running then): the beats out before it must be a prefix of the model's;
/// `cut` says what was in flight.
pub fn run_until(m: &mut Model, p: &DeqParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &DeqParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        sz_valid: g("sz_valid"),
        sz_ready: g("sz_ready"),
        sz_word: g("sz_word"),
        sz_clear: g("sz_clear"),
        sz_done: g("sz_done"),
        sz_error: g("sz_error"),
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_pos: g("in_pos"),
        in_index: g("in_index"),
        in_label: g("in_label"),
        in_codes: g("in_codes"),
        in_last: g("in_last"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_data: g("out_data"),
        out_last: g("out_last"),
        st: ["st_pruned", "st_label_zero", "st_zero_point", "st_multiplies", "st_missing_level"].map(g),
    };
    let mut rng = Xorshift::new(c.seed ^ 0xd0);
    let mut dq = Dequantizer::new(&p.titanus());
    let mut run = Run::default();
    let mut expected: Vec<OutBeat> = Vec::new();
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    // the record beats of the current token, offered under the input stall
    let mut src: Source<InBeat> = Source::new([], &c.in_stall, c.seed ^ 1);
    let mut ops = c.ops.iter();
    let mut cur: Option<&Op> = None;
    let mut first_accept: Option<u64> = None;
    // pipeline advances since the last beat was accepted, that cycle
    // included: below 2, that beat is still in the skid or S1
    let mut advances = u64::MAX / 2;
    let total: usize = c.ops.iter().filter(|o| matches!(o, Op::Token { .. })).count() * (p.channels / p.lanes);
    // generous: a bursty sink may stall 97% of the time in bursts of hundreds of cycles
    let timeout = 5000 + 100 * (c.ops.len() as u64) + 400 * total as u64;
    let mut cyc = 0u64;
    let mut since_load = u64::MAX / 2; // cycles since a load was accepted
    loop {
        if reset_at == Some(cyc) {
            let owed = expected.len().saturating_sub(sink.beats.len());
            let partial_token = !src.is_empty() && src.queue.len() < p.channels / p.lanes;
            run.cut = Some(InFlight { partial_token, owed, load: since_load < LOAD_CYCLES });
            stream::compare(&sink.beats, &expected, true, |i| format!("output beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        since_load += 1;
        if cur.is_none() {
            cur = ops.next();
            if let Some(Op::Token { pos, rec }) = cur {
                src.queue.extend(beats_of(p, *pos, rec));
            }
        }
        if cur.is_none() && sink.beats.len() == expected.len() {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {} beats out", sink.beats.len(), expected.len()));
        }
        // drive
        let load = match cur {
            Some(Op::Load(e)) => Some((e.word(), false)),
            Some(Op::Clear) => Some((rng.next_u64() & !(3 << 62) & !(0x7F << 25), true)),
            _ => None,
        };
        m.set(io.sz_valid, load.is_some() as u64);
        let (w, clr) = load.unwrap_or((rng.next_u64(), rng.next_u64() & 1 == 1));
        m.set(io.sz_word, w);
        m.set(io.sz_clear, clr as u64);
        let offer = if matches!(cur, Some(Op::Token { .. })) { src.offer().cloned() } else { None };
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => {
                m.set(io.in_pos, b.pos as u64);
                m.set_u128(io.in_index, b.index);
                m.set_u128(io.in_label, b.label);
                let lanes: Vec<u64> =
                    (0..p.lanes).map(|i| if i < b.count { b.codes[i] } else { rng.next_u64() & 0xF }).collect();
                m.set_lanes(io.in_codes, &lanes);
                m.set(io.in_last, b.last as u64);
            }
            None => {
                m.set(io.in_pos, rng.next_u64() & 0xFFFF);
                let mask = if p.lanes >= 128 { u128::MAX } else { (1u128 << p.lanes) - 1 };
                m.set_u128(io.in_index, (rng.next_u64() as u128) & mask);
                m.set_u128(io.in_label, (rng.next_u64() as u128) & mask);
                m.set_lanes(io.in_codes, &(0..p.lanes).map(|_| rng.next_u64() & 0xF).collect::<Vec<_>>());
                m.set(io.in_last, rng.next_u64() & 1);
            }
        }
        let ready = sink.ready();
        let in_ready = stream::settle_ready(m, io.in_ready, io.out_ready, ready)?;
        let sz_ready = m.get(io.sz_ready) == 1;
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        let valid = m.get(io.out_valid) == 1;
        advances += !(valid && !ready) as u64;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        if sink
            .sample(cycle, valid, ready, || OutBeat { data: m.get_lanes(io.out_data), last: m.get(io.out_last) == 1 })?
            .is_some()
            && run.first_latency.is_none()
        {
            run.first_latency = first_accept.map(|a| cycle - a);
        }
        // acceptances at this edge
        if let Some(b) = offer {
            if in_ready {
                let first = src.queue.len() == p.channels / p.lanes;
                advances = !(valid && !ready) as u64;
                src.take();
                first_accept.get_or_insert(cycle);
                run.in_cycles.push(cycle);
                if first {
                    let Some(Op::Token { pos, rec }) = cur else { unreachable!() };
                    let x = dequantize(p, &mut dq, *pos, rec, &mut run);
                    for (k, chunk) in x.chunks(p.lanes).enumerate() {
                        expected.push(OutBeat {
                            data: chunk.iter().map(|&v| v as u8 as u64).collect(),
                            last: k + 1 == p.channels / p.lanes,
                        });
                    }
                }
                if b.last {
                    cur = None;
                }
            }
        }
        let mut sz_now = None;
        if load.is_some() && sz_ready {
            run.load_held += (advances < 2) as u64;
            if expected.len() > sink.beats.len() {
                run.loads_in_flight += 1;
            }
            let code = match cur {
                Some(Op::Load(e)) => sz_code(dq.table.load(e)),
                _ => {
                    dq.table.clear();
                    run.clears += 1;
                    0
                }
            };
            sz_now = Some(code);
            since_load = 0;
            cur = None;
        }
        m.tick();
        // load response, the cycle after
        let done = m.get(io.sz_done) == 1;
        match (sz_now, done) {
            (Some(code), true) => {
                let got = m.get(io.sz_error);
                if got != code {
                    return Err(format!("cycle {}: sz_error {got}, expected {code}", m.cycle()));
                }
                run.sz_codes.push(code);
            }
            (Some(_), false) => return Err(format!("cycle {}: sz_done low after a load", m.cycle())),
            (None, true) => return Err(format!("cycle {}: sz_done without a load", m.cycle())),
            _ => {}
        }
        cyc += 1;
    }
    m.set(io.in_valid, 0);
    m.set(io.sz_valid, 0);
    m.set(io.out_ready, 1);
    for _ in 0..8 {
        m.eval();
        if m.get(io.out_valid) == 1 {
            return Err(format!("cycle {}: an extra output beat", m.cycle()));
        }
        m.tick();
    }
    stream::compare(&sink.beats, &expected, false, |i| {
        format!("output beat {i} (token {}, beat {})", i / (p.channels / p.lanes), i % (p.channels / p.lanes))
    })?;
    let k = dq.counters;
    let want = [k.pruned, k.label_zero, k.zero_point, k.multiplies, k.missing_level];
    let names = ["st_pruned", "st_label_zero", "st_zero_point", "st_multiplies", "st_missing_level"];
    for j in 0..5 {
        let got = m.get(io.st[j]);
        if got != want[j] & 0xFFFF_FFFF {
            return Err(format!("{} = {got}, expected {}", names[j], want[j]));
        }
    }
    run.counters = want;
    run.beats = expected.len();
    run.cycles = cyc;
    run.out_cycles = sink.cycles;
    Ok(run)
}
