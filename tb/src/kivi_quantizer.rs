//! Driving `kivi-quantizer` (axis token) and predicting its output from
//! `sim::kivi::quantizer::quantize_token`. Spec: docs/spec.md §13.2-§13.5,
//! §13.8, §13.14.2.
//!
//! A case is a list of token vectors, streamed `lanes` elements per beat
//! under an input stall pattern, while the group beats are taken under
//! another. Each token is expected as its groups' (metadata, words) beats,
//! the last one flagged and carrying the token's `nonfinite` flag. Tokens
//! come from the real slice (spec §12.3), synthetic values of several
//! scales (down to subnormal steps), groups with `max = min`, NaN and
//! infinities, random finite patterns, and groups spanning more than 65504.
//! Inputs whose valid is low carry noise.

use crate::coverage::Coverage;
use crate::info::ModelInfo;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
pub use crate::stim::{finite_fp16 as finite, uniform_pm1 as uniform};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::fp16;
use sim::kivi::params::{Axis, KiviParams};
use sim::kivi::quantizer::quantize_token;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct QuantParams {
    pub head_dim: usize,
    pub heads: usize,
    pub group: usize,
    pub bits: u32,
    pub lanes: usize,
    /// Which of the two drivers runs the model: this one (token) or
    /// `kivi_quantizer_channel`.
    pub axis: Axis,
}

impl QuantParams {
    pub fn kivi(&self) -> KiviParams {
        KiviParams {
            head_dim: self.head_dim,
            heads: self.heads,
            group: self.group,
            bits: self.bits,
            lanes: self.lanes,
            axis: self.axis,
        }
    }
    pub fn vector(&self) -> usize {
        self.heads * self.head_dim
    }
    pub fn groups(&self) -> usize {
        self.vector() / self.group
    }
    pub fn beats(&self) -> usize {
        self.vector() / self.lanes
    }
}

pub fn params_of(m: &Model) -> QuantParams {
    params_of_info(m.info())
}

/// The parameters of a built model, from its manifest (no model instance).
pub fn params_of_info(info: &ModelInfo) -> QuantParams {
    serde_json::from_str(info.params_json).expect("model parameters are kivi-quantizer's")
}

/// The parameters of a tb/models.toml entry without building its model.
pub fn params_of_spec(params: &toml::Table) -> QuantParams {
    let d = KiviParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    QuantParams {
        head_dim: get("head-dim", d.head_dim),
        heads: get("heads", d.heads),
        group: get("group", d.group),
        bits: get("bits", d.bits as usize) as u32,
        lanes: get("lanes", d.lanes),
        axis: params.get("axis").and_then(|x| x.as_str()).map_or(d.axis, |a| a.parse().expect("axis is token or channel")),
    }
}

/// What a token is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    Synthetic,
    /// Some groups with all elements equal.
    Flat,
    NonFinite,
    /// Any finite FP16 patterns (subnormals, extremes, -0).
    Random,
    /// A group holding both -65504 and 65504 (D above 65504).
    WideRange,
}

pub const KINDS: [Kind; 6] = [Kind::Real, Kind::Synthetic, Kind::Flat, Kind::NonFinite, Kind::Random, Kind::WideRange];

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

/// The committed real slice, flattened (spec §12.3).
pub fn real_slice() -> &'static [u16] {
    static S: OnceLock<Vec<u16>> = OnceLock::new();
    S.get_or_init(|| {
        let p = sim::workspace_root().join("sim/data/realkv-slice.kv.npy");
        sim::kvset::KvSet::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).data
    })
}

pub fn token_of(r: &mut Xorshift, p: &QuantParams, kind: Kind) -> Token {
    let n = p.vector();
    let g = p.group;
    let mut x: Vec<u16> = match kind {
        Kind::Real => {
            let s = real_slice();
            let at = (r.next_u64() as usize) % (s.len() - n);
            s[at..at + n].to_vec()
        }
        Kind::Random => (0..n).map(|_| finite(r)).collect(),
        _ => {
            let scale = [0.00002f32, 0.001, 0.3, 1.0, 20.0, 3000.0][(r.next_u64() % 6) as usize];
            (0..n)
                .map(|_| {
                    let v = if r.next_u64() % 32 == 0 { uniform(r) * scale * 12.0 } else { uniform(r) * scale };
                    fp16::from_f32(v)
                })
                .collect()
        }
    };
    match kind {
        Kind::Flat => {
            for c in x.chunks_mut(g) {
                if r.next_u64() % 2 == 0 {
                    let v = if r.next_u64() % 4 == 0 { 0x8000 } else { finite(r) };
                    c.fill(v);
                }
            }
            // at least one flat group
            let v = finite(r);
            let k = (r.next_u64() as usize) % p.groups();
            x[k * g..(k + 1) * g].fill(v);
        }
        Kind::Synthetic if r.next_u64() % 3 == 0 => {
            // on a grid with step 1.0 exactly (min -1, max 2^b - 2): every
            // other element a tie (spec §13.12, example 1)
            let top = (1u64 << p.bits) - 1;
            for c in x.chunks_mut(g) {
                for v in c.iter_mut() {
                    *v = fp16::from_f32(-1.0 + (r.next_u64() % (2 * top + 1)) as f32 * 0.5);
                }
                c[0] = fp16::from_f32(-1.0);
                c[1] = fp16::from_f32(top as f32 - 1.0);
            }
        }
        Kind::NonFinite => {
            for _ in 0..1 + r.next_u64() % 3 {
                let j = (r.next_u64() as usize) % n;
                x[j] = [0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01][(r.next_u64() % 5) as usize];
            }
        }
        Kind::WideRange => {
            let k = (r.next_u64() as usize) % p.groups();
            let (a, b) = (r.next_u64() as usize % g, r.next_u64() as usize % g);
            x[k * g + a] = 0xFBFF;
            x[k * g + (b + (a == b) as usize) % g] = 0x7BFF;
        }
        _ => {}
    }
    Token { kind, x }
}

pub fn case_of(p: &QuantParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let tokens = (0..n)
        .map(|_| {
            let kind = match r.next_u64() % 12 {
                0..=3 => Kind::Real,
                4..=5 => Kind::Synthetic,
                6..=7 => Kind::Flat,
                8 => Kind::NonFinite,
                9..=10 => Kind::Random,
                _ => Kind::WideRange,
            };
            token_of(&mut r, p, kind)
        })
        .collect();
    Case { tokens, in_stall, out_stall, seed: r.next_u64() }
}

pub fn case(p: QuantParams, tokens: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (tokens, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One group beat out of the unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub meta: u32,
    pub words: Vec<u32>,
    pub last: bool,
    pub nonfinite: bool,
}

/// Facts about the expected output (for coverage).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub flat_groups: u64,
    pub ties_up: u64,
    pub top_codes: u64,
    pub subnormal_steps: u64,
    pub wide_groups: u64,
}

/// The group beats of one token, and what they exercise.
pub fn expected(p: &QuantParams, t: &Token, f: &mut Facts) -> Vec<OutBeat> {
    let q = quantize_token(&p.kivi(), &t.x);
    let n = q.groups.len();
    for (gi, g) in q.groups.iter().enumerate() {
        let gp = sim::kivi::quantizer::GroupParams::from_meta(g.meta);
        f.flat_groups += (g.meta.scale == 0) as u64;
        f.subnormal_steps += (g.meta.scale != 0 && g.meta.scale & 0x7C00 == 0) as u64;
        f.top_codes += g.codes.iter().filter(|&&c| c as u32 == (1 << p.bits) - 1).count() as u64;
        let xs = &t.x[gi * p.group..(gi + 1) * p.group];
        let (lo, hi) = xs.iter().map(|&v| fp16::to_units(fp16::sanitize(v).0)).fold((i64::MAX, i64::MIN), |(a, b), u| (a.min(u), b.max(u)));
        f.wide_groups += (hi - lo > fp16::MAX_UNITS) as u64;
        if gp.step_units > 0 {
            for &v in xs {
                let nn = fp16::to_units(fp16::sanitize(v).0) - gp.min_units;
                f.ties_up += ((2 * nn + gp.step_units) % (2 * gp.step_units) == 0) as u64;
            }
        }
    }
    q.groups
        .iter()
        .enumerate()
        .map(|(i, g)| OutBeat {
            meta: g.meta.word(),
            words: g.words(p.bits),
            last: i + 1 == n,
            nonfinite: i + 1 == n && q.nonfinite,
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
    pub nonfinite_tokens: u64,
    /// Cycles from the first group's first input beat to its output beat.
    pub first_latency: Option<u64>,
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    /// A token's first input beat the cycle after the previous token's last.
    pub b2b_tokens: u64,
    /// A reset cut the run: group beats still owed at that moment.
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "token: real values",
    "token: synthetic values",
    "token: flat groups",
    "token: non-finite input",
    "token: random patterns",
    "token: range above 65504",
    "group: max = min (step 0)",
    "group: subnormal step",
    "group: D above 65504",
    "code: tie rounded up",
    "code: 2^b - 1",
    "nonfinite flag out",
    "back-to-back tokens",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    for k in &r.kinds {
        cov.hit(match k {
            Kind::Real => "token: real values",
            Kind::Synthetic => "token: synthetic values",
            Kind::Flat => "token: flat groups",
            Kind::NonFinite => "token: non-finite input",
            Kind::Random => "token: random patterns",
            Kind::WideRange => "token: range above 65504",
        });
    }
    cov.add("group: max = min (step 0)", r.facts.flat_groups);
    cov.add("group: subnormal step", r.facts.subnormal_steps);
    cov.add("group: D above 65504", r.facts.wide_groups);
    cov.add("code: tie rounded up", r.facts.ties_up);
    cov.add("code: 2^b - 1", r.facts.top_codes);
    cov.add("nonfinite flag out", r.nonfinite_tokens);
    cov.add("back-to-back tokens", r.b2b_tokens);
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_x: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_meta: PortId,
    out_words: PortId,
    out_last: PortId,
    out_nonfinite: PortId,
}

/// One input beat: its values, and whether it opens or closes a token.
#[derive(Clone, Debug)]
struct InBeat {
    x: Vec<u64>,
    first: bool,
    last: bool,
    /// The beat closes a group: its group beat may come out from now on.
    closes: bool,
    token: usize,
}

pub fn run(m: &mut Model, p: &QuantParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at cycle `reset_at` of the case: the
/// group beats out before it must be a prefix of the expected ones.
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
        out_meta: g("out_meta"),
        out_words: g("out_words"),
        out_last: g("out_last"),
        out_nonfinite: g("out_nonfinite"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x71);
    let mut run = Run::default();
    let mut want: Vec<OutBeat> = Vec::new();
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let beats: Vec<InBeat> = c
        .tokens
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            let nb = p.beats();
            let per = p.group / p.lanes;
            t.x.chunks(p.lanes).enumerate().map(move |(k, ch)| InBeat {
                x: ch.iter().map(|&v| v as u64).collect(),
                first: k == 0,
                last: k + 1 == nb,
                closes: (k + 1) % per == 0,
                token: ti,
            })
        })
        .collect();
    let mut src: Source<InBeat> = Source::new(beats, &c.in_stall, c.seed ^ 1);
    // every group beat of the case, released as the input closes each group
    let all: Vec<OutBeat> = c.tokens.iter().flat_map(|t| expected(p, t, &mut Facts::default())).collect();
    let total = c.tokens.len() * p.groups();
    let timeout = 5000 + 600 * (c.tokens.len() * p.beats()) as u64;
    let mut first_accept: Option<u64> = None;
    let mut last_in: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("group beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if src.is_empty() && sink.beats.len() == total {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} group beats out", sink.beats.len()));
        }
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => m.set_lanes(io.in_x, &b.x),
            None => m.set_lanes(io.in_x, &(0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>()),
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
        let took = sink
            .sample(cycle, valid, ready, || OutBeat {
                meta: m.get(io.out_meta) as u32,
                words: m.get_words(io.out_words),
                last: m.get(io.out_last) == 1,
                nonfinite: m.get(io.out_nonfinite) == 1,
            })?
            .cloned();
        if let Some(b) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!("cycle {cycle}: group beat {i} before its group's last input beat"));
            }
            if b != want[i] {
                return Err(format!(
                    "cycle {cycle}: group beat {i} (token {}, group {}): got {b:x?}\n expected {:x?}",
                    i / p.groups(),
                    i % p.groups(),
                    want[i]
                ));
            }
            run.first_latency.get_or_insert_with(|| cycle - first_accept.unwrap());
            run.out_cycles.push(cycle);
            run.nonfinite_tokens += b.nonfinite as u64;
        }
        if offer.is_some() && in_ready {
            let b = src.take();
            first_accept.get_or_insert(cycle);
            run.in_cycles.push(cycle);
            if b.first && last_in == Some(cycle - 1) {
                run.b2b_tokens += 1;
            }
            if b.closes {
                want.push(all[want.len()].clone());
            }
            if b.last {
                last_in = Some(cycle);
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
    stream::compare(&sink.beats, &want, false, |i| format!("group beat {i}"))?;
    Ok(run)
}
