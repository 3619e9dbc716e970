//! Driving `packkv-quantizer` and predicting its output from
//! `sim::packkv::quantizer::quantize_token`. Spec: docs/spec.md §14.2,
//! §14.3, §14.8, §14.14.1.
//!
//! A case is a list of token vectors, streamed `lanes` elements per beat
//! under an input stall pattern, while the code beats are taken under
//! another. Every beat of a token is expected with its codes, the token's
//! metadata word and `nonfinite` flag, the last one flagged. Tokens come
//! from the real slice (spec §12.3), synthetic values of several scales,
//! half-step grids (ties), flat vectors (`max = min`, zero or not), NaN and
//! infinities, random finite patterns and ranges above 65504. Inputs whose
//! valid is low carry noise.

use crate::coverage::Coverage;
use crate::kivi_quantizer::real_slice;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::{finite_fp16, uniform_pm1, Xorshift};
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::fp16;
use sim::packkv::params::PackKvParams;
use sim::packkv::quantizer::{quantize_token, sanitized_units, TokenGrid, ZERO_MAX};

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct QuantParams {
    pub head_dim: usize,
    pub heads: usize,
    pub levels: u32,
    pub lanes: usize,
}

impl QuantParams {
    pub fn packkv(&self) -> PackKvParams {
        PackKvParams { head_dim: self.head_dim, heads: self.heads, levels: self.levels, lanes: self.lanes, ..Default::default() }
    }
    pub fn vector(&self) -> usize {
        self.heads * self.head_dim
    }
    pub fn beats(&self) -> usize {
        self.vector() / self.lanes
    }
}

pub fn params_of(m: &Model) -> QuantParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are packkv-quantizer's")
}

/// The parameters of a tb/models.toml entry without building its model.
pub fn params_of_spec(params: &toml::Table) -> QuantParams {
    let d = PackKvParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    QuantParams {
        head_dim: get("head-dim", d.head_dim),
        heads: get("heads", d.heads),
        levels: get("levels", d.levels as usize) as u32,
        lanes: get("lanes", d.lanes),
    }
}

/// What a token is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    Synthetic,
    /// On a grid of half steps with `D = N s` exactly: many ties.
    Grid,
    /// Every element the same non-zero value (`max = min != 0`).
    Flat,
    /// Every element +0 or -0 (`max = min = 0`, step +0).
    Zero,
    NonFinite,
    /// Any finite FP16 patterns (subnormals, extremes, -0).
    Random,
    /// Both -65504 and 65504 (D above 65504).
    WideRange,
}

pub const KINDS: [Kind; 8] =
    [Kind::Real, Kind::Synthetic, Kind::Grid, Kind::Flat, Kind::Zero, Kind::NonFinite, Kind::Random, Kind::WideRange];

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    pub x: Vec<u16>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub tokens: Vec<Token>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

pub fn token_of(r: &mut Xorshift, p: &QuantParams, kind: Kind) -> Token {
    let n = p.vector();
    let pick = |r: &mut Xorshift| (r.next_u64() as usize) % n;
    let mut x: Vec<u16> = match kind {
        Kind::Real => {
            let s = real_slice();
            let at = (r.next_u64() as usize) % (s.len() - n);
            s[at..at + n].to_vec()
        }
        Kind::Random => (0..n).map(|_| finite_fp16(r)).collect(),
        Kind::Flat => vec![loop {
            let v = finite_fp16(r);
            if v & 0x7FFF != 0 {
                break v;
            }
        }; n],
        Kind::Zero => (0..n).map(|_| if r.next_u64() % 3 == 0 { 0x8000 } else { 0 }).collect(),
        Kind::Grid => {
            // s = 2^-8 exactly; values k s / 2 between -a s and (N - a) s
            let nl = p.levels as i64;
            let a = (r.next_u64() % (nl as u64 + 1)) as i64;
            let mut v: Vec<u16> = (0..n)
                .map(|_| fp16::from_f32(((r.next_u64() % (2 * nl as u64 + 1)) as i64 - 2 * a) as f32 / 512.0))
                .collect();
            if n >= 2 {
                let (i, j) = (pick(r), pick(r));
                v[i] = fp16::from_f32(-(a as f32) / 256.0);
                v[if j == i { (i + 1) % n } else { j }] = fp16::from_f32((nl - a) as f32 / 256.0);
            }
            v
        }
        _ => {
            let scale = [0.00002f32, 0.001, 0.3, 1.0, 20.0, 3000.0][(r.next_u64() % 6) as usize];
            let off = if r.next_u64() % 3 == 0 { uniform_pm1(r) * scale * 4.0 } else { 0.0 };
            (0..n)
                .map(|_| {
                    let v = if r.next_u64() % 32 == 0 { uniform_pm1(r) * scale * 12.0 } else { uniform_pm1(r) * scale };
                    fp16::from_f32(v + off)
                })
                .collect()
        }
    };
    match kind {
        Kind::NonFinite => {
            for _ in 0..1 + r.next_u64() % 3 {
                let j = pick(r);
                x[j] = [0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01][(r.next_u64() % 5) as usize];
            }
        }
        Kind::WideRange if n >= 2 => {
            let (a, b) = (pick(r), pick(r));
            x[a] = 0xFBFF;
            x[if a == b { (a + 1) % n } else { b }] = 0x7BFF;
        }
        _ => {}
    }
    Token { kind, x }
}

pub fn case_of(p: &QuantParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let tokens = (0..n)
        .map(|_| {
            let kind = match r.next_u64() % 16 {
                0..=4 => Kind::Real,
                5..=6 => Kind::Synthetic,
                7..=8 => Kind::Grid,
                9 => Kind::Flat,
                10 => Kind::Zero,
                11 => Kind::NonFinite,
                12..=13 => Kind::Random,
                _ => Kind::WideRange,
            };
            token_of(&mut r, p, kind)
        })
        .collect();
    Case { tokens, in_stall, out_stall, seed: r.next_u64() }
}

/// Tokens enough for a case to fill the token buffer (about 80 beats
/// beyond a token, spec §14.14.1) when the output stalls.
pub fn filling(p: &QuantParams) -> usize {
    8.max(2 + 80 / p.beats())
}

pub fn case(p: QuantParams, tokens: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (tokens, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One code beat out of the unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub codes: Vec<u64>,
    pub meta: u32,
    pub last: bool,
    pub nonfinite: bool,
}

/// Facts about the expected output (for coverage).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// `ceil(|x_min| / 32767)` decides the step (spec §14.2's second term).
    pub zero_floor: u64,
    pub zero_steps: u64,
    pub subnormal_steps: u64,
    pub z_neg: u64,
    pub z_pos: u64,
    pub wide: u64,
    pub ties_up: u64,
    /// Codes equal to `N`, the largest (never above: spec §14.2).
    pub top_codes: u64,
}

/// The code beats of one token, and what they exercise.
pub fn expected(p: &QuantParams, t: &Token, f: &mut Facts) -> Vec<OutBeat> {
    let q = quantize_token(&p.packkv(), &t.x);
    let (u, _) = sanitized_units(&t.x);
    let (lo, hi) = u.iter().fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let n = p.levels as i64;
    let g = TokenGrid::from_meta(q.meta);
    f.zero_floor += ((lo.abs() + ZERO_MAX - 1) / ZERO_MAX > (hi - lo + n - 1) / n) as u64;
    f.zero_steps += (q.meta.step == 0) as u64;
    f.subnormal_steps += (q.meta.step != 0 && q.meta.step & 0x7C00 == 0) as u64;
    f.z_neg += (q.meta.zero < 0) as u64;
    f.z_pos += (q.meta.zero > 0) as u64;
    f.wide += (hi - lo > fp16::MAX_UNITS) as u64;
    f.top_codes += q.codes.iter().filter(|&&c| c as u32 == p.levels).count() as u64;
    if g.step_units > 0 {
        f.ties_up += u.iter().filter(|&&v| (2 * v + g.step_units).rem_euclid(2 * g.step_units) == 0).count() as u64;
    }
    let nb = p.beats();
    q.codes
        .chunks(p.lanes)
        .enumerate()
        .map(|(k, c)| OutBeat {
            codes: c.iter().map(|&v| v as u64).collect(),
            meta: q.meta.word(),
            last: k + 1 == nb,
            nonfinite: q.nonfinite,
        })
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub beats: usize,
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    pub kinds: Vec<Kind>,
    pub facts: Facts,
    pub nonfinite_beats: u64,
    /// Cycles from the first input beat to the first code beat.
    pub first_latency: Option<u64>,
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    /// A token's first input beat the cycle after the previous token's last.
    pub b2b_tokens: u64,
    /// Cycles with the token buffer full (in_ready low).
    pub full_cycles: u64,
    /// A reset cut the run: code beats still owed at that moment.
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "input blocked (buffer full)",
    "output held (backpressure)",
    "token: real values",
    "token: synthetic values",
    "token: half-step grid",
    "token: max = min != 0",
    "token: max = min = 0",
    "token: non-finite input",
    "token: random patterns",
    "token: range above 65504",
    "step from |min| / 32767",
    "step +0",
    "step subnormal",
    "z < 0",
    "z > 0",
    "code: tie rounded up",
    "code: N (largest, none above)",
    "nonfinite flag out",
    "back-to-back tokens",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked (buffer full)", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    for k in &r.kinds {
        cov.hit(match k {
            Kind::Real => "token: real values",
            Kind::Synthetic => "token: synthetic values",
            Kind::Grid => "token: half-step grid",
            Kind::Flat => "token: max = min != 0",
            Kind::Zero => "token: max = min = 0",
            Kind::NonFinite => "token: non-finite input",
            Kind::Random => "token: random patterns",
            Kind::WideRange => "token: range above 65504",
        });
    }
    let f = &r.facts;
    cov.add("step from |min| / 32767", f.zero_floor);
    cov.add("step +0", f.zero_steps);
    cov.add("step subnormal", f.subnormal_steps);
    cov.add("z < 0", f.z_neg);
    cov.add("z > 0", f.z_pos);
    cov.add("code: tie rounded up", f.ties_up);
    cov.add("code: N (largest, none above)", f.top_codes);
    cov.add("nonfinite flag out", r.nonfinite_beats);
    cov.add("back-to-back tokens", r.b2b_tokens);
}

/// The code beat the outputs show (meaningful while `out_valid`).
pub fn read_out(m: &Model) -> OutBeat {
    OutBeat {
        codes: m.get_lanes(m.port("out_codes")),
        meta: m.get(m.port("out_meta")) as u32,
        last: m.get(m.port("out_last")) == 1,
        nonfinite: m.get(m.port("out_nonfinite")) == 1,
    }
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_x: PortId,
    out_valid: PortId,
    out_ready: PortId,
}

/// One input beat; `token` is its token's index in the case.
#[derive(Clone, Debug)]
struct InBeat {
    x: Vec<u64>,
    first: bool,
    last: bool,
    token: usize,
}

pub fn run(m: &mut Model, p: &QuantParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at cycle `reset_at` of the case: the
/// code beats out before it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &QuantParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &QuantParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_x: g("in_x"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x5a);
    let mut run = Run::default();
    let nb = p.beats();
    let beats: Vec<InBeat> = c
        .tokens
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            t.x.chunks(p.lanes).enumerate().map(move |(k, ch)| InBeat {
                x: ch.iter().map(|&v| v as u64).collect(),
                first: k == 0,
                last: k + 1 == nb,
                token: ti,
            })
        })
        .collect();
    let mut src: Source<InBeat> = Source::new(beats, &c.in_stall, c.seed ^ 1);
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    // a token's beats are owed once its last beat is in
    let all: Vec<Vec<OutBeat>> = c.tokens.iter().map(|t| expected(p, t, &mut Facts::default())).collect();
    let mut want: Vec<OutBeat> = Vec::new();
    let total = c.tokens.len() * nb;
    let timeout = 5000 + 600 * total as u64;
    let mut first_accept: Option<u64> = None;
    let mut last_in: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("code beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if src.is_empty() && sink.beats.len() == total {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} code beats out", sink.beats.len()));
        }
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => m.set_lanes(io.in_x, &b.x),
            None => m.set_lanes(io.in_x, &(0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>()),
        }
        let ready = sink.ready();
        let in_ready = stream::settle_ready(m, io.in_ready, io.out_ready, ready)?;
        run.full_cycles += !in_ready as u64;
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        let valid = m.get(io.out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || read_out(m))?
            .cloned();
        if let Some(b) = took {
            let i = sink.beats.len() - 1;
            if let Some(q) = b.codes.iter().find(|&&q| q > p.levels as u64) {
                return Err(format!("cycle {cycle}: code beat {i} holds code {q}, above N = {}", p.levels));
            }
            if i >= want.len() {
                return Err(format!("cycle {cycle}: code beat {i} before its token's last input beat"));
            }
            if b != want[i] {
                return Err(format!(
                    "cycle {cycle}: code beat {i} (token {}, beat {}): got {b:x?}\n expected {:x?}",
                    i / nb,
                    i % nb,
                    want[i]
                ));
            }
            run.first_latency.get_or_insert_with(|| cycle - first_accept.unwrap());
            run.out_cycles.push(cycle);
            run.nonfinite_beats += b.nonfinite as u64;
        }
        if offer.is_some() && in_ready {
            let b = src.take();
            first_accept.get_or_insert(cycle);
            run.in_cycles.push(cycle);
            if b.first && last_in == Some(cycle - 1) {
                run.b2b_tokens += 1;
            }
            if b.last {
                last_in = Some(cycle);
                want.extend(all[b.token].iter().cloned());
                let t = &c.tokens[b.token];
                expected(p, t, &mut run.facts);
                run.kinds.push(t.kind);
            }
        }
        m.tick();
        cyc += 1;
    }
    run.beats = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("code beat {i}"))?;
    Ok(run)
}
