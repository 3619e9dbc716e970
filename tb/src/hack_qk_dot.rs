//! Driving `hack-qk-dot` and its dequantize-first baseline `hack-deq-dot`
//! and predicting their scores from `sim::hack::dot::QkDot` and
//! `sim::hack::baseline::DeqDot`. Spec: docs/spec.md §15.6, §15.8, §15.10,
//! §15.16.
//!
//! The two units share the K stream (the baseline has no sum port) and the
//! score stream; the baseline's Q partitions are FP16 values (`x16`).
//! A case is a list of groups, each a Q load (`head_dim / Pi` partitions)
//! and the K tokens scored against it. The Q beats of a group are offered
//! once the previous group's K beats are all taken, its K beats once its
//! first Q beat is taken (so they also wait on an open load), each stream
//! under its own stall pattern while the scores are taken under a third.
//! Partitions are quantized by `sim`'s `hack-quantizer` model from the real
//! slice and synthetic values (both rounding modes), or flat (step 0), or
//! built with extreme codes, random finite metadata and sums, or a NaN or
//! infinity in a metadata word. Unused code bits and idle inputs carry
//! noise.

use crate::coverage::Coverage;
use crate::kivi_dequantizer::{values, Kind as VKind};
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::fp16;
use sim::hack::baseline::DeqDot;
use sim::hack::dot::QkDot;
use sim::hack::params::Rounding;
use sim::hack::quantizer::{Part, Quantizer};
use sim::kivi::format::{pack, Meta};

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DotParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    /// `hack-qk-dot` only
    #[serde(default)]
    pub qp_bits: u32,
    /// The unit is `hack-deq-dot` (FP16 Q, no sums).
    #[serde(skip)]
    pub deq: bool,
}

impl DotParams {
    pub fn parts(&self) -> usize {
        self.head_dim / self.partition
    }
    /// Bits of a code sum port (spec §15.5).
    pub fn sum_bits(&self, bits: u32) -> u32 {
        sim::hack::params::sum_bits(bits, self.partition)
    }
}

pub fn params_of(m: &Model) -> DotParams {
    let mut p: DotParams = serde_json::from_str(m.info().params_json).expect("model parameters are a HACK dot unit's");
    p.deq = m.info().unit == "hack-deq-dot";
    p
}

/// What a partition is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Quantized by `sim` from the real slice (spec §12.3).
    Real,
    /// Quantized by `sim` from synthetic values.
    Synthetic,
    /// All elements equal: step +0, codes 0 (a zero-range partition).
    Flat,
    /// NaN and infinities among the values (sanitised by the quantizer).
    NonFiniteValues,
    /// Every code 0 or every code 2^b - 1, random finite metadata.
    Extreme,
    /// Random finite metadata, codes and sums (any value the port carries).
    RandomMeta,
    /// A NaN or an infinity in the metadata word.
    NonFiniteMeta,
}

pub const KINDS: [Kind; 7] =
    [Kind::Real, Kind::Synthetic, Kind::Flat, Kind::NonFiniteValues, Kind::Extreme, Kind::RandomMeta, Kind::NonFiniteMeta];

/// A partition as the unit takes it: the model's `Part` and its packed
/// words (noise, when asked, in bits no code uses).
#[derive(Clone, Debug)]
pub struct Beat {
    pub kind: Kind,
    pub part: Part,
    pub words: Vec<u32>,
    pub noisy: bool,
    /// `hack-deq-dot`'s Q partition: FP16 values.
    pub x16: Vec<u16>,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub q: Vec<Beat>,
    pub tokens: Vec<Vec<Beat>>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub groups: Vec<Group>,
    pub q_stall: Stall,
    pub k_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

fn finite(r: &mut Xorshift) -> u16 {
    loop {
        let x = r.next_u64() as u16;
        if fp16::is_finite(x) {
            return x;
        }
    }
}

/// Any finite FP16 metadata value: extremes, subnormals, -0, either sign.
fn pick(r: &mut Xorshift) -> u16 {
    match r.next_u64() % 6 {
        0 => 0x7BFF,
        1 => 0xFBFF,
        2 => (r.next_u64() % 0x400) as u16 | (r.next_u64() as u16 & 0x8000),
        3 => 0x8000,
        _ => finite(r),
    }
}

/// One partition of `bits`-bit codes.
pub fn beat_of(r: &mut Xorshift, p: &DotParams, bits: u32, kind: Kind) -> Beat {
    let n = p.partition;
    let top = (1u32 << bits) - 1;
    let part = match kind {
        Kind::Real | Kind::Synthetic | Kind::Flat | Kind::NonFiniteValues => {
            let vk = match kind {
                Kind::Real => VKind::Real,
                Kind::Synthetic => VKind::Synthetic,
                Kind::Flat => VKind::Flat,
                _ => VKind::NonFinite,
            };
            let x = values(r, vk, n);
            let rounding = if r.next_u64().is_multiple_of(3) { Rounding::Stochastic } else { Rounding::Nearest };
            let seed = 1 + (r.next_u64() % 65535) as u16;
            let (parts, _) = Quantizer::new(bits, n, rounding, seed).quantize_vector(&x);
            parts.into_iter().next().unwrap()
        }
        Kind::Extreme => {
            let q = if r.next_u64().is_multiple_of(2) { 0 } else { top as u8 };
            Part::from_codes(Meta { scale: pick(r) & 0x7FFF, min: pick(r) }, vec![q; n])
        }
        Kind::RandomMeta | Kind::NonFiniteMeta => {
            let mut meta = Meta { scale: pick(r), min: pick(r) };
            if kind == Kind::NonFiniteMeta {
                let bad = [0x7C00, 0xFC00, 0x7E00, 0xFE01][(r.next_u64() % 4) as usize];
                match r.next_u64() % 3 {
                    0 => meta.scale = bad,
                    1 => meta.min = bad,
                    _ => (meta.scale, meta.min) = (bad, bad ^ 0x8000),
                }
            }
            let codes: Vec<u8> = (0..n).map(|_| (r.next_u64() % (top as u64 + 1)) as u8).collect();
            let mut part = Part::from_codes(meta, codes);
            // any sum the port carries, the largest among them
            match r.next_u64() % 4 {
                0 => part.sum = (1 << p.sum_bits(bits)) - 1,
                1 => part.sum = (r.next_u64() % (1 << p.sum_bits(bits))) as u32,
                _ => {}
            }
            part
        }
    };
    let mut words = pack(&part.codes, bits);
    let c = (32 / bits) as usize;
    let used = |w: usize| -> u32 {
        let k = (n - w * c).min(c) * bits as usize;
        if k >= 32 {
            u32::MAX
        } else {
            (1u32 << k) - 1
        }
    };
    let noisy = r.next_u64().is_multiple_of(4) && (0..words.len()).any(|w| used(w) != u32::MAX);
    if noisy {
        for (w, x) in words.iter_mut().enumerate() {
            *x |= r.next_u64() as u32 & !used(w);
        }
    }
    Beat { kind, part, words, noisy, x16: Vec::new() }
}

/// A Q partition of FP16 values for `hack-deq-dot`, of the same kinds:
/// extremes are +-65504 and 0, random ones any finite pattern, the last
/// kind with NaN and infinities among them.
pub fn q16_of(r: &mut Xorshift, p: &DotParams, kind: Kind) -> Beat {
    let n = p.partition;
    let x16: Vec<u16> = match kind {
        Kind::Real => values(r, VKind::Real, n),
        Kind::Synthetic => values(r, VKind::Synthetic, n),
        Kind::Flat => values(r, VKind::Flat, n),
        Kind::NonFiniteValues | Kind::NonFiniteMeta => values(r, VKind::NonFinite, n),
        Kind::Extreme => (0..n).map(|_| [0x7BFF, 0xFBFF, 0x0000, 0x8000][(r.next_u64() % 4) as usize]).collect(),
        Kind::RandomMeta => (0..n).map(|_| pick(r)).collect(),
    };
    Beat { kind, part: Part::from_codes(Meta::default(), vec![0; n]), words: Vec::new(), noisy: false, x16 }
}

pub fn draw_kind(r: &mut Xorshift) -> Kind {
    match r.next_u64() % 16 {
        0..=4 => Kind::Real,
        5..=7 => Kind::Synthetic,
        8 => Kind::Flat,
        9 => Kind::NonFiniteValues,
        10..=11 => Kind::Extreme,
        12..=14 => Kind::RandomMeta,
        _ => Kind::NonFiniteMeta,
    }
}

pub fn case_of(p: &DotParams, groups: usize, tokens: usize, seed: u64, stalls: [Stall; 3]) -> Case {
    let mut r = Xorshift::new(seed);
    let np = p.parts();
    let groups = (0..groups)
        .map(|_| {
            // now and then a Q of zeros (zero-range partitions at 0): every
            // score is exactly +0
            let zero_q = r.next_u64().is_multiple_of(8);
            let q = (0..np)
                .map(|_| {
                    let k = if zero_q { Kind::Flat } else { draw_kind(&mut r) };
                    let mut b = if p.deq { q16_of(&mut r, p, k) } else { beat_of(&mut r, p, p.qp_bits, k) };
                    if zero_q {
                        b.x16.iter_mut().for_each(|x| *x = 0);
                        b.part = Part::from_codes(Meta::default(), vec![0; p.partition]);
                        b.words = pack(&b.part.codes, p.qp_bits.max(2));
                    }
                    b
                })
                .collect();
            let nt = 1 + (r.next_u64() as usize) % tokens.max(1);
            let tokens = (0..nt)
                .map(|_| (0..np).map(|_| { let k = draw_kind(&mut r); beat_of(&mut r, p, p.kv_bits, k) }).collect())
                .collect();
            Group { q, tokens }
        })
        .collect();
    let [q_stall, k_stall, out_stall] = stalls;
    Case { groups, q_stall, k_stall, out_stall, seed: r.next_u64() }
}

/// The activity bench's stimulus (`make bench`, energy proxy): one Q and
/// `tokens` K tokens, every value from the real slice (§12.3), quantized by
/// `sim` with nearest rounding. K depends on the seed alone, so `hack-qk-dot`
/// and `hack-deq-dot` see the same K beats; the Q values are the same too,
/// FP16 for the baseline and their `qp_bits` codes for HACK.
pub fn real_case(p: &DotParams, tokens: usize, seed: u64) -> Case {
    let mut r = Xorshift::new(seed);
    let quantize = |x: &[u16], bits: u32| {
        let (parts, _) = Quantizer::new(bits, p.partition, Rounding::Nearest, 1).quantize_vector(x);
        parts.into_iter().next().unwrap()
    };
    let beat = |part: Part, bits: u32, x16: Vec<u16>| Beat {
        kind: Kind::Real,
        words: pack(&part.codes, bits),
        part,
        noisy: false,
        x16,
    };
    let q = (0..p.parts())
        .map(|_| {
            let x = values(&mut r, VKind::Real, p.partition);
            if p.deq {
                Beat { kind: Kind::Real, part: Part::from_codes(Meta::default(), vec![0; p.partition]), words: Vec::new(), noisy: false, x16: x }
            } else {
                beat(quantize(&x, p.qp_bits), p.qp_bits, Vec::new())
            }
        })
        .collect();
    let mut r = Xorshift::new(seed ^ 0x6b);
    let tokens = (0..tokens)
        .map(|_| (0..p.parts()).map(|_| beat(quantize(&values(&mut r, VKind::Real, p.partition), p.kv_bits), p.kv_bits, Vec::new())).collect())
        .collect();
    Case { groups: vec![Group { q, tokens }], q_stall: Stall::Never, k_stall: Stall::Never, out_stall: Stall::Never, seed }
}

pub fn case(p: DotParams, groups: std::ops::Range<usize>, tokens: usize) -> impl Strategy<Value = Case> {
    (groups, any::<u64>(), stalls::stall(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, q, k, o)| case_of(&p, n, tokens, seed, [q, k, o]))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Score {
    pub bits: u32,
    pub nonfinite: bool,
}

/// The model's score of one token against a group's Q.
pub fn expected(p: &DotParams, q: &[Beat], k: &[Beat]) -> Score {
    let kp: Vec<Part> = k.iter().map(|b| b.part.clone()).collect();
    if p.deq {
        let q16: Vec<u16> = q.iter().flat_map(|b| b.x16.iter().copied()).collect();
        let unit = DeqDot::new(&q16, p.partition);
        return Score { bits: unit.score(&kp).to_bits(), nonfinite: unit.nonfinite(&kp) };
    }
    let unit = QkDot::new(q.iter().map(|b| b.part.clone()).collect());
    Score { bits: unit.score(&kp).to_bits(), nonfinite: unit.nonfinite(&kp) }
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub scores: usize,
    pub cycles: u64,
    pub q_blocked: u64,
    pub k_blocked: u64,
    /// K beats offered while their group's Q load was still open.
    pub k_waited_load: u64,
    pub out_held: u64,
    pub first_latency: Option<u64>,
    pub k_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub kinds: Vec<Kind>,
    pub noisy: u64,
    pub flagged: u64,
    pub negative: u64,
    pub zero: u64,
    pub reloads: u64,
    pub b2b: u64,
    /// A reset cut the run: scores still owed at that moment.
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "q input blocked",
    "k input blocked",
    "k waited for a Q load",
    "output held (backpressure)",
    "partition: real values",
    "partition: synthetic values",
    "partition: zero range (step 0)",
    "partition: non-finite values (sanitised by the quantizer)",
    "partition: extreme codes",
    "partition: random metadata and sums",
    "partition: non-finite metadata",
    "noise in unused bits",
    "score flagged non-finite",
    "score negative",
    "score zero",
    "Q reloaded",
    "scores on consecutive cycles",
];

/// The coverage point of a partition kind (shared with `hack_pv_dot`).
pub fn kind_point(k: Kind) -> &'static str {
    match k {
        Kind::Real => "partition: real values",
        Kind::Synthetic => "partition: synthetic values",
        Kind::Flat => "partition: zero range (step 0)",
        Kind::NonFiniteValues => "partition: non-finite values (sanitised by the quantizer)",
        Kind::Extreme => "partition: extreme codes",
        Kind::RandomMeta => "partition: random metadata and sums",
        Kind::NonFiniteMeta => "partition: non-finite metadata",
    }
}

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("q input blocked", r.q_blocked);
    cov.add("k input blocked", r.k_blocked);
    cov.add("k waited for a Q load", r.k_waited_load);
    cov.add("output held (backpressure)", r.out_held);
    for &k in &r.kinds {
        cov.hit(kind_point(k));
    }
    cov.add("noise in unused bits", r.noisy);
    cov.add("score flagged non-finite", r.flagged);
    cov.add("score negative", r.negative);
    cov.add("score zero", r.zero);
    cov.add("Q reloaded", r.reloads);
    cov.add("scores on consecutive cycles", r.b2b);
}

struct Ports {
    q_valid: PortId,
    q_ready: PortId,
    /// `hack-qk-dot`: meta, words, sum; `hack-deq-dot`: the FP16 lanes
    q_meta: Option<PortId>,
    q_words: Option<PortId>,
    q_sum: Option<PortId>,
    q_x: Option<PortId>,
    k_valid: PortId,
    k_ready: PortId,
    k_meta: PortId,
    k_words: PortId,
    k_sum: Option<PortId>,
    out_valid: PortId,
    out_ready: PortId,
    out_score: PortId,
    out_nonfinite: PortId,
}

/// One beat of either input stream: its group, and for K whether it ends
/// its token.
struct InBeat<'a> {
    group: usize,
    beat: &'a Beat,
    /// K: the token's expected score, on its last beat.
    score: Option<Score>,
}

pub fn run(m: &mut Model, p: &DotParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at model cycle `reset_at`: the scores out
/// before it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &DotParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

pub fn set_beat(m: &mut Model, meta: Option<PortId>, words: Option<PortId>, sum: Option<PortId>, x: Option<PortId>, b: &Beat) {
    if let (Some(meta), Some(words)) = (meta, words) {
        m.set(meta, b.part.meta.word() as u64);
        m.set_words(words, &b.words);
    }
    if let Some(sum) = sum {
        m.set(sum, b.part.sum as u64);
    }
    if let Some(x) = x {
        m.set_lanes(x, &b.x16.iter().map(|&v| v as u64).collect::<Vec<_>>());
    }
}

pub fn set_noise(m: &mut Model, rng: &mut Xorshift, ports: [Option<PortId>; 4], sum_bits: u32) {
    let [meta, words, sum, x] = ports;
    if let (Some(meta), Some(words)) = (meta, words) {
        m.set(meta, rng.next_u64() & 0xFFFF_FFFF);
        let w: Vec<u32> = (0..m.port_info(words).words()).map(|_| rng.next_u64() as u32).collect();
        m.set_words(words, &w);
    }
    if let Some(sum) = sum {
        m.set(sum, rng.next_u64() & ((1 << sum_bits) - 1));
    }
    if let Some(x) = x {
        let w: Vec<u32> = (0..m.port_info(x).words()).map(|_| rng.next_u64() as u32).collect();
        m.set_words(x, &w);
    }
}

fn run_inner(m: &mut Model, p: &DotParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let o = |n: &str| m.try_port(n);
    let io = Ports {
        q_valid: g("q_valid"),
        q_ready: g("q_ready"),
        q_meta: o("q_meta"),
        q_words: o("q_words"),
        q_sum: o("q_sum"),
        q_x: o("q_x"),
        k_valid: g("k_valid"),
        k_ready: g("k_ready"),
        k_meta: g("k_meta"),
        k_words: g("k_words"),
        k_sum: o("k_sum"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_score: g("out_score"),
        out_nonfinite: g("out_nonfinite"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x71);
    let mut run = Run::default();
    let np = p.parts();
    // the streams, and per group the K beats before it and its first Q beat
    let mut qs = Vec::new();
    let mut ks = Vec::new();
    let mut k_before = Vec::new();
    for (gi, gr) in c.groups.iter().enumerate() {
        k_before.push(ks.len());
        for b in &gr.q {
            qs.push(InBeat { group: gi, beat: b, score: None });
        }
        for t in &gr.tokens {
            let s = expected(p, &gr.q, t);
            for (i, b) in t.iter().enumerate() {
                ks.push(InBeat { group: gi, beat: b, score: (i + 1 == np).then(|| s.clone()) });
            }
        }
    }
    let total: usize = c.groups.iter().map(|g| g.tokens.len()).sum();
    let mut qsrc: Source<InBeat> = Source::new(qs, &c.q_stall, c.seed ^ 1);
    let mut ksrc: Source<InBeat> = Source::new(ks, &c.k_stall, c.seed ^ 3);
    let mut sink: Sink<Score> = Sink::new(&c.out_stall, c.seed ^ 2);
    let mut want: Vec<Score> = Vec::new();
    let (mut q_taken, mut k_taken) = (0usize, 0usize);
    let timeout = 5000 + 200 * (qsrc.queue.len() + ksrc.queue.len()) as u64 + 400 * total as u64;
    let mut first_done: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("score {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if qsrc.is_empty() && ksrc.is_empty() && sink.beats.len() == total {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} scores out", sink.beats.len()));
        }
        // gating: a group's Q after the K beats before it, its K after its first Q beat
        let q_ok = qsrc.queue.front().is_some_and(|b| k_taken >= k_before[b.group]);
        let k_ok = ksrc.queue.front().is_some_and(|b| q_taken > b.group * np);
        let q_offer = if q_ok { qsrc.offer().map(|b| (b.group, b.beat)) } else { None };
        let k_offer = if k_ok { ksrc.offer().map(|b| (b.group, b.beat)) } else { None };
        m.set(io.q_valid, q_offer.is_some() as u64);
        match q_offer {
            Some((_, b)) => set_beat(m, io.q_meta, io.q_words, io.q_sum, io.q_x, b),
            None => set_noise(m, &mut rng, [io.q_meta, io.q_words, io.q_sum, io.q_x], p.sum_bits(p.qp_bits.max(2))),
        }
        m.set(io.k_valid, k_offer.is_some() as u64);
        match k_offer {
            Some((_, b)) => set_beat(m, Some(io.k_meta), Some(io.k_words), io.k_sum, None, b),
            None => set_noise(m, &mut rng, [Some(io.k_meta), Some(io.k_words), io.k_sum, None], p.sum_bits(p.kv_bits)),
        }
        let ready = sink.ready();
        m.set(io.out_ready, !ready as u64);
        m.eval();
        let other = (m.get(io.q_ready), m.get(io.k_ready));
        m.set(io.out_ready, ready as u64);
        m.eval();
        let (q_ready, k_ready) = (m.get(io.q_ready) == 1, m.get(io.k_ready) == 1);
        if other != (q_ready as u64, k_ready as u64) {
            return Err(format!("cycle {}: q_ready or k_ready follows out_ready combinationally", m.cycle()));
        }
        if q_offer.is_some() && !q_ready {
            run.q_blocked += 1;
        }
        if let Some((gi, _)) = k_offer {
            if !k_ready {
                run.k_blocked += 1;
                run.k_waited_load += (q_taken < (gi + 1) * np) as u64;
            }
        }
        let valid = m.get(io.out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || Score { bits: m.get(io.out_score) as u32, nonfinite: m.get(io.out_nonfinite) == 1 })?
            .cloned();
        if let Some(s) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!("cycle {cycle}: score {i} before its token's last K beat was taken"));
            }
            if s != want[i] {
                return Err(format!(
                    "cycle {cycle}: score {i}: got {:#010x} ({}) nonfinite {}\n expected {:#010x} ({}) nonfinite {}",
                    s.bits,
                    f32::from_bits(s.bits),
                    s.nonfinite,
                    want[i].bits,
                    f32::from_bits(want[i].bits),
                    want[i].nonfinite
                ));
            }
            if i == 0 {
                run.first_latency = first_done.map(|t| cycle - t);
            }
            if run.out_cycles.last() == Some(&(cycle - 1)) {
                run.b2b += 1;
            }
            run.out_cycles.push(cycle);
            run.flagged += s.nonfinite as u64;
            run.negative += (s.bits >> 31) as u64;
            run.zero += (s.bits == 0) as u64;
        }
        if q_offer.is_some() && q_ready {
            let b = qsrc.take();
            if b.group > 0 && q_taken == b.group * np {
                run.reloads += 1;
            }
            q_taken += 1;
            run.kinds.push(b.beat.kind);
            run.noisy += b.beat.noisy as u64;
        }
        if k_offer.is_some() && k_ready {
            let b = ksrc.take();
            k_taken += 1;
            run.k_cycles.push(cycle);
            run.kinds.push(b.beat.kind);
            run.noisy += b.beat.noisy as u64;
            if let Some(s) = b.score {
                first_done.get_or_insert(cycle);
                want.push(s);
            }
        }
        m.tick();
        cyc += 1;
    }
    run.scores = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("score {i}"))?;
    Ok(run)
}

/// The co-simulation tests of both HACK dot units (tb/tests/hack_qk_dot.rs,
/// tb/tests/hack_deq_dot.rs), written once: each takes the unit's name.
pub mod tests {
    use super::*;
    use crate::{models, prop, run_property, ModelInfo};

    fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
        let p = params_of(&Model::new(info));
        let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
        run_property(&name, info, case(p, 1..4, 10), cases, |m, c| {
            let r = run(m, &p, c)?;
            cover(cov, &r);
            Ok(())
        });
    }

    /// Every model of `unit`, RTL or netlists, against the model. The
    /// netlist set has two partitions per token, so its scores are never on
    /// consecutive cycles: that point is required of the RTL sweep only.
    pub fn matches_model(unit: &str, gate_level: bool) {
        let (threads, cases) = if gate_level { (1, 20) } else { (3, 60) };
        let f = |info: &'static ModelInfo, cov: &Coverage| check(info, prop::cases(cases), cov);
        let required: Vec<&str> =
            POINTS.iter().copied().filter(|p| !gate_level || *p != "scores on consecutive cycles").collect();
        models::sweep_closed(unit, gate_level, threads, POINTS, &required, f);
    }

    pub const RESET_POINTS: &[&str] = &["reset with scores owed", "reset with nothing owed"];

    /// A reset at a random cycle of a random case: the scores out before
    /// it are a prefix of the model's, and afterwards the unit behaves as
    /// fresh out of reset (a second case matches the model).
    pub fn reset_in_flight(unit: &str) {
        models::sweep_as_closed(unit, Some("reset in flight"), false, 3, RESET_POINTS, RESET_POINTS, |info, cov| {
            let p = params_of(&Model::new(info));
            let strategy = (case(p, 1..3, 8), any::<u64>(), 0u64..1000);
            run_property(&format!("{}_reset", info.name), info, strategy, prop::cases(20), |m, (c, seed, at)| {
                let beats: usize = c.groups.iter().map(|g| g.q.len() + g.tokens.len() * p.parts()).sum();
                let r = run_until(m, &p, c, at * (beats as u64 + 60) / 1000)?;
                match r.cut_owed {
                    Some(n) => cov.hit(if n > 0 { "reset with scores owed" } else { "reset with nothing owed" }),
                    None => m.reset(1),
                }
                let after = case_of(&p, 2, 4, *seed, [c.q_stall.clone(), c.k_stall.clone(), c.out_stall.clone()]);
                run(m, &p, &after).map(|_| ()).map_err(|e| format!("after the reset: {e}"))
            });
        });
    }

    /// With no stalls: one K partition taken every cycle after the load,
    /// one score every `head_dim / Pi` cycles, and the manifest's latency
    /// from a token's last K beat to its score.
    pub fn full_rate_and_latency(unit: &str) {
        for info in models::of_unit_nonempty(unit, false) {
            let mut m = Model::new(info);
            m.reset(1);
            let p = params_of(&m);
            let mut c = case_of(&p, 1, 1, 9, [Stall::Never, Stall::Never, Stall::Never]);
            let t = c.groups[0].tokens[0].clone();
            c.groups[0].tokens = (0..40).map(|_| t.clone()).collect();
            let r = run(&mut m, &p, &c).unwrap();
            let lat = r.first_latency.unwrap();
            println!("{}: {} scores, {} K beats in {} cycles, latency {lat}", info.name, r.scores, r.k_cycles.len(), r.cycles);
            assert_eq!(lat, info.latency().expect("manifest latency"), "{}: manifest latency", info.name);
            let k0 = r.k_cycles[0];
            for (i, &t) in r.k_cycles.iter().enumerate() {
                assert_eq!(t, k0 + i as u64, "{}: K beat {i} not on consecutive cycles", info.name);
            }
            let o0 = r.out_cycles[0];
            for (i, &t) in r.out_cycles.iter().enumerate() {
                assert_eq!(t, o0 + (i * p.parts()) as u64, "{}: score {i} not every {} cycles", info.name, p.parts());
            }
        }
    }

    /// Every partition kind is drawn at every parameter set of `unit` (the
    /// case generator alone, no hardware).
    pub fn draws_every_kind(unit: &str) {
        for s in models::specs().iter().filter(|s| s.unit == unit) {
            let get = |k: &str, d: i64| s.params.get(k).and_then(|v| v.as_integer()).unwrap_or(d) as usize;
            let p = DotParams {
                head_dim: get("head-dim", 128),
                partition: get("partition", 64),
                kv_bits: get("kv-bits", 2) as u32,
                qp_bits: get("qp-bits", 8) as u32,
                deq: unit == "hack-deq-dot",
            };
            let c = case_of(&p, 8, 30, 1, [Stall::Never, Stall::Never, Stall::Never]);
            let kinds: Vec<Kind> =
                c.groups.iter().flat_map(|g| g.q.iter().chain(g.tokens.iter().flatten())).map(|b| b.kind).collect();
            for k in KINDS {
                assert!(kinds.contains(&k), "{}: no {k:?} partition", s.name);
            }
        }
    }
}

/// The test functions of a HACK dot unit's test file, for `$unit`.
#[macro_export]
macro_rules! hack_dot_tests {
    ($unit:expr) => {
        #[test]
        fn rtl_matches_model() {
            tb::hack_qk_dot::tests::matches_model($unit, false);
        }

        #[test]
        fn netlists_match_model() {
            tb::hack_qk_dot::tests::matches_model($unit, true);
        }

        /// Spec §1, §15.16.
        #[test]
        fn reset_with_traffic_in_flight() {
            tb::hack_qk_dot::tests::reset_in_flight($unit);
        }

        /// Spec §15.16: full rate, a score every `head_dim / Pi` cycles,
        /// the manifest's latency.
        #[test]
        fn full_rate_and_latency() {
            tb::hack_qk_dot::tests::full_rate_and_latency($unit);
        }

        #[test]
        fn case_generator_draws_every_kind() {
            tb::hack_qk_dot::tests::draws_every_kind($unit);
        }
    };
}
