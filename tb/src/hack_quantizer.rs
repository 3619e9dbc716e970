//! Driving `hack-quantizer` (axis token) and predicting its output from
//! `sim::hack::quantizer::Quantizer::quantize_vector`. Spec: docs/spec.md
//! §15.2-§15.5, §15.7, §15.11, §15.16.4.
//!
//! A case is a list of vectors (K or Q heads of `head_dim` elements, or P
//! rows of 1 to 4 partitions), streamed `lanes` elements per beat with
//! `in_last` on each vector's last beat, under an input stall pattern,
//! while the partition beats are taken under another. One `Quantizer`
//! codes the whole case in order, so in stochastic mode the LFSR state
//! carries from vector to vector as the RTL's does. The element values are
//! `kivi_quantizer`'s token kinds (real slice, synthetic, flat, NaN and
//! infinities, random finite, wide range) plus partitions of two values
//! only, whose codes are all 0 or 2^b - 1 (extreme sums).

use crate::coverage::Coverage;
use crate::info::ModelInfo;
use crate::kivi_quantizer::{self as kq, QuantParams};
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::{finite_fp16, Xorshift};
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::fp16;
use sim::hack::params::Rounding;
use sim::hack::quantizer::Quantizer;
use sim::kivi::params::Axis;

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Manifest {
    head_dim: usize,
    partition: usize,
    kv_bits: u32,
    qp_bits: u32,
    lanes: usize,
    rounding: Rounding,
    seed: u16,
    operand: String,
}

/// A model's parameters, with its code width resolved from `operand`.
#[derive(Clone, Copy, Debug)]
pub struct HqParams {
    pub head_dim: usize,
    pub partition: usize,
    pub bits: u32,
    pub lanes: usize,
    pub rounding: Rounding,
    pub seed: u16,
}

impl HqParams {
    pub fn quantizer(&self) -> Quantizer {
        Quantizer::new(self.bits, self.partition, self.rounding, self.seed)
    }
    /// `kivi_quantizer`'s view of a vector of `n` elements, for its value kinds.
    fn kivi(&self, n: usize) -> QuantParams {
        QuantParams { head_dim: n, heads: 1, group: self.partition, bits: self.bits, lanes: self.lanes, axis: Axis::Token }
    }
}

pub fn params_of_info(info: &ModelInfo) -> HqParams {
    let m: Manifest = serde_json::from_str(info.params_json).expect("model parameters are hack-quantizer's");
    let bits = if m.operand == "qp" { m.qp_bits } else { m.kv_bits };
    HqParams { head_dim: m.head_dim, partition: m.partition, bits, lanes: m.lanes, rounding: m.rounding, seed: m.seed }
}

pub fn params_of(m: &Model) -> HqParams {
    params_of_info(m.info())
}

/// What a vector is made of (for coverage): `kivi_quantizer`'s kinds, or
/// partitions of two values (codes 0 and 2^b - 1 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Token(kq::Kind),
    Extreme,
}

#[derive(Clone, Debug)]
pub struct Vector {
    pub kind: Kind,
    pub x: Vec<u16>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub vectors: Vec<Vector>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

fn extreme(r: &mut Xorshift, p: &HqParams, n: usize) -> Vec<u16> {
    let pi = p.partition;
    let mut x = Vec::with_capacity(n);
    for k in 0..n / pi {
        let (a, b) = (finite_fp16(r), finite_fp16(r));
        let (lo, hi) = if fp16::to_units(a) <= fp16::to_units(b) { (a, b) } else { (b, a) };
        // partition 0: all at the top but one; 1: all at the bottom but
        // one; others mixed
        let mut c: Vec<u16> = (0..pi).map(|_| if r.next_u64().is_multiple_of(2) { lo } else { hi }).collect();
        match k % 3 {
            0 => c.fill(hi),
            1 => c.fill(lo),
            _ => {}
        }
        c[(r.next_u64() as usize) % pi] = if k % 3 == 0 { lo } else { hi };
        x.extend(c);
    }
    x
}

/// A vector of `kind`: `head_dim` elements (K, Q), or, one time in four, a
/// P row of 1 to 4 partitions.
pub fn vector_of(r: &mut Xorshift, p: &HqParams, kind: Kind) -> Vector {
    let n = if r.next_u64().is_multiple_of(4) { p.partition * (1 + (r.next_u64() % 4) as usize) } else { p.head_dim };
    let x = match kind {
        Kind::Token(k) => kq::token_of(r, &p.kivi(n), k).x,
        Kind::Extreme => extreme(r, p, n),
    };
    Vector { kind, x }
}

pub fn case_of(p: &HqParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let vectors = (0..n)
        .map(|_| {
            let i = (r.next_u64() % 14) as usize;
            let kind = if i < 12 { Kind::Token(kq::KINDS[i / 2]) } else { Kind::Extreme };
            vector_of(&mut r, p, kind)
        })
        .collect();
    Case { vectors, in_stall, out_stall, seed: r.next_u64() }
}

pub fn case(p: HqParams, vectors: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (vectors, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One partition beat out of the unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub meta: u32,
    pub words: Vec<u32>,
    pub sum: u32,
    pub last: bool,
    pub nonfinite: bool,
}

/// Facts about the expected output (for coverage).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub flat_parts: u64,
    pub subnormal_steps: u64,
    pub zero_sums: u64,
    pub full_sums: u64,
    pub top_codes: u64,
    pub ties_up: u64,
    pub rounded_up: u64,
    pub rounded_down: u64,
    pub short_vectors: u64,
}

/// The partition beats of the vectors of a case, coded in order by one
/// quantizer, and what they exercise.
pub fn expected(p: &HqParams, q: &mut Quantizer, v: &Vector, f: &mut Facts) -> Vec<OutBeat> {
    let (parts, nf) = q.quantize_vector(&v.x);
    let top = (1u32 << p.bits) - 1;
    f.short_vectors += (v.x.len() != p.head_dim) as u64;
    let n = parts.len();
    for (k, part) in parts.iter().enumerate() {
        let g = part.params();
        f.flat_parts += (part.meta.scale == 0) as u64;
        f.subnormal_steps += (part.meta.scale != 0 && part.meta.scale & 0x7C00 == 0) as u64;
        f.zero_sums += (part.sum == 0) as u64;
        f.full_sums += (part.sum >= (p.partition as u32 - 1) * top) as u64;
        f.top_codes += part.codes.iter().filter(|&&c| c as u32 == top).count() as u64;
        if g.step_units > 0 {
            let xs = &v.x[k * p.partition..(k + 1) * p.partition];
            for (&x, &c) in xs.iter().zip(&part.codes) {
                let nn = fp16::to_units(fp16::sanitize(x).0) - g.min_units;
                let (q0, rem) = (nn / g.step_units, nn % g.step_units);
                if rem == 0 {
                    continue;
                }
                match p.rounding {
                    Rounding::Nearest => f.ties_up += (2 * rem == g.step_units) as u64,
                    Rounding::Stochastic if c as i64 > q0 => f.rounded_up += 1,
                    Rounding::Stochastic => f.rounded_down += 1,
                }
            }
        }
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| OutBeat {
            meta: part.meta.word(),
            words: sim::kivi::format::pack(&part.codes, p.bits),
            sum: part.sum,
            last: i + 1 == n,
            nonfinite: i + 1 == n && nf,
        })
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub beats: usize,
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    pub idle_in: u64,
    pub kinds: Vec<Kind>,
    pub facts: Facts,
    pub nonfinite_vectors: u64,
    /// Cycles from the first partition's first input beat to its output beat.
    pub first_latency: Option<u64>,
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub b2b_vectors: u64,
    /// A reset cut the run: partition beats still owed at that moment.
    pub cut_owed: Option<usize>,
    /// The partition beats the RTL gave, in order.
    pub out: Vec<OutBeat>,
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "input idle",
    "vector: real values",
    "vector: synthetic values",
    "vector: flat partitions",
    "vector: non-finite input",
    "vector: random patterns",
    "vector: range above 65504",
    "vector: two values (extreme codes)",
    "vector: P row (not head_dim)",
    "partition: max = min (step 0)",
    "partition: subnormal step",
    "sum: 0",
    "sum: at least (Pi - 1)(2^b - 1)",
    "code: 2^b - 1",
    "code: rounded (tie up, or stochastic up and down)",
    "nonfinite flag out",
    "back-to-back vectors",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("input idle", r.idle_in);
    for k in &r.kinds {
        cov.hit(match k {
            Kind::Token(kq::Kind::Real) => "vector: real values",
            Kind::Token(kq::Kind::Synthetic) => "vector: synthetic values",
            Kind::Token(kq::Kind::Flat) => "vector: flat partitions",
            Kind::Token(kq::Kind::NonFinite) => "vector: non-finite input",
            Kind::Token(kq::Kind::Random) => "vector: random patterns",
            Kind::Token(kq::Kind::WideRange) => "vector: range above 65504",
            Kind::Extreme => "vector: two values (extreme codes)",
        });
    }
    let f = &r.facts;
    cov.add("vector: P row (not head_dim)", f.short_vectors);
    cov.add("partition: max = min (step 0)", f.flat_parts);
    cov.add("partition: subnormal step", f.subnormal_steps);
    cov.add("sum: 0", f.zero_sums);
    cov.add("sum: at least (Pi - 1)(2^b - 1)", f.full_sums);
    cov.add("code: 2^b - 1", f.top_codes);
    // stochastic runs must round both ways; nearest runs must meet ties
    let rounded = if f.rounded_up + f.rounded_down > 0 { f.rounded_up.min(f.rounded_down) } else { f.ties_up };
    cov.add("code: rounded (tie up, or stochastic up and down)", rounded);
    cov.add("nonfinite flag out", r.nonfinite_vectors);
    cov.add("back-to-back vectors", r.b2b_vectors);
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_x: PortId,
    in_last: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_meta: PortId,
    out_words: PortId,
    out_sum: PortId,
    out_last: PortId,
    out_nonfinite: PortId,
}

/// One input beat: its values, whether it closes its vector or a partition.
#[derive(Clone, Debug)]
struct InBeat {
    x: Vec<u64>,
    first: bool,
    last: bool,
    closes: bool,
    vector: usize,
}

pub fn run(m: &mut Model, p: &HqParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at cycle `reset_at` of the case: the
/// partition beats out before it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &HqParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &HqParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_x: g("in_x"),
        in_last: g("in_last"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_meta: g("out_meta"),
        out_words: g("out_words"),
        out_sum: g("out_sum"),
        out_last: g("out_last"),
        out_nonfinite: g("out_nonfinite"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x71);
    let mut run = Run::default();
    let per = p.partition / p.lanes;
    let beats: Vec<InBeat> = c
        .vectors
        .iter()
        .enumerate()
        .flat_map(|(vi, v)| {
            let nb = v.x.len() / p.lanes;
            v.x.chunks(p.lanes).enumerate().map(move |(k, ch)| InBeat {
                x: ch.iter().map(|&e| e as u64).collect(),
                first: k == 0,
                last: k + 1 == nb,
                closes: (k + 1) % per == 0,
                vector: vi,
            })
        })
        .collect();
    let mut src: Source<InBeat> = Source::new(beats, &c.in_stall, c.seed ^ 1);
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let mut q = p.quantizer();
    let all: Vec<OutBeat> = c.vectors.iter().flat_map(|v| expected(p, &mut q, v, &mut run.facts)).collect();
    let mut want: Vec<OutBeat> = Vec::new();
    let total = all.len();
    let timeout = 5000 + 600 * src.queue.len() as u64;
    let mut first_accept: Option<u64> = None;
    let mut last_in: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("partition beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if src.is_empty() && sink.beats.len() == total {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} partition beats out", sink.beats.len()));
        }
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(b) => {
                m.set_lanes(io.in_x, &b.x);
                m.set(io.in_last, b.last as u64);
            }
            None => {
                // noise on an idle input, `in_last` included
                m.set_lanes(io.in_x, &(0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>());
                m.set(io.in_last, rng.next_u64() & 1);
                run.idle_in += !src.is_empty() as u64;
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
        let took = sink
            .sample(cycle, valid, ready, || OutBeat {
                meta: m.get(io.out_meta) as u32,
                words: m.get_words(io.out_words),
                sum: m.get(io.out_sum) as u32,
                last: m.get(io.out_last) == 1,
                nonfinite: m.get(io.out_nonfinite) == 1,
            })?
            .cloned();
        if let Some(b) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!("cycle {cycle}: partition beat {i} before its partition's last input beat"));
            }
            if b != want[i] {
                return Err(format!("cycle {cycle}: partition beat {i}: got {b:x?}\n expected {:x?}", want[i]));
            }
            run.first_latency.get_or_insert_with(|| cycle - first_accept.unwrap());
            run.out_cycles.push(cycle);
            run.nonfinite_vectors += b.nonfinite as u64;
        }
        if offer.is_some() && in_ready {
            let b = src.take();
            first_accept.get_or_insert(cycle);
            run.in_cycles.push(cycle);
            if b.first && last_in == Some(cycle - 1) {
                run.b2b_vectors += 1;
            }
            if b.closes {
                want.push(all[want.len()].clone());
            }
            if b.last {
                last_in = Some(cycle);
                run.kinds.push(c.vectors[b.vector].kind);
            }
        }
        m.tick();
        cyc += 1;
    }
    run.beats = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("partition beat {i}"))?;
    run.out = sink.beats.clone();
    Ok(run)
}
