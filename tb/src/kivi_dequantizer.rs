//! Driving `kivi-dequantizer` and predicting its output from
//! `sim::kivi::dequantizer`. Spec: docs/spec.md §13.4-§13.6, §13.14.
//!
//! A case is a list of groups, each one input beat (metadata word and `W`
//! packed words), offered under an input stall pattern while the output is
//! taken under another. Each group is expected as `G / lanes` output beats
//! of `dequantize_group`. Groups come from real KV values (the committed
//! slice, spec §12.3) and synthetic ones quantized by `sim`'s quantizer,
//! groups with `max = min`, groups with NaN and infinities, and random
//! metadata words with random codes (saturation, subnormals, negative
//! steps). Inputs whose valid is low, and the unused bits of words at
//! `b = 3` and of a last partial word in some groups, carry noise.

use crate::coverage::Coverage;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::fp16;
use sim::kivi::dequantizer::dequantize_group;
use sim::kivi::format::{pack, Meta};
use sim::kivi::params::{codes_per_word, words_per_group};
use sim::kivi::quantizer::quantize_group;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DeqParams {
    pub head_dim: usize,
    pub group: usize,
    pub bits: u32,
    pub lanes: usize,
}

impl DeqParams {
    pub fn words(&self) -> usize {
        words_per_group(self.bits, self.group)
    }
    pub fn beats(&self) -> usize {
        self.group / self.lanes
    }
}

pub fn params_of(m: &Model) -> DeqParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are kivi-dequantizer's")
}

/// What a group is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Quantized by `sim` from the real slice (spec §12.3).
    Real,
    /// Quantized by `sim` from normal draws with an outlier now and then.
    Synthetic,
    /// All elements equal: step +0, codes 0.
    Flat,
    /// NaN and infinities among the elements (sanitised by the quantizer).
    NonFinite,
    /// Any finite metadata word and random codes.
    RandomMeta,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub kind: Kind,
    pub meta: u32,
    pub words: Vec<u32>,
    /// Noise was put in bits no code uses.
    pub noisy: bool,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub groups: Vec<Group>,
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

fn finite(r: &mut Xorshift) -> u16 {
    loop {
        let x = r.next_u64() as u16;
        if fp16::is_finite(x) {
            return x;
        }
    }
}

/// `G` input values of one kind (before quantization).
pub fn values(r: &mut Xorshift, kind: Kind, g: usize) -> Vec<u16> {
    match kind {
        Kind::Real => {
            let s = real_slice();
            let at = (r.next_u64() as usize) % (s.len() - g);
            s[at..at + g].to_vec()
        }
        Kind::Synthetic => {
            let scale = [0.001f32, 0.3, 1.0, 20.0, 3000.0][(r.next_u64() % 5) as usize];
            (0..g)
                .map(|_| {
                    let u = (r.next_u64() >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0;
                    let v = if r.next_u64() % 32 == 0 { u * scale * 12.0 } else { u * scale };
                    fp16::from_f32(v)
                })
                .collect()
        }
        Kind::Flat => vec![finite(r); g],
        Kind::NonFinite => {
            let mut v: Vec<u16> = (0..g).map(|_| fp16::from_f32((r.next_u64() % 200) as f32 * 0.01 - 1.0)).collect();
            for _ in 0..1 + r.next_u64() % 3 {
                let j = (r.next_u64() as usize) % g;
                v[j] = [0x7C00, 0xFC00, 0x7E00, 0xFE01][(r.next_u64() % 4) as usize];
            }
            v
        }
        Kind::RandomMeta => unreachable!("no values"),
    }
}

pub fn group_of(r: &mut Xorshift, p: &DeqParams, kind: Kind) -> Group {
    let (meta, codes) = match kind {
        Kind::RandomMeta => {
            // finite min and step of any size and either sign: saturation
            // both ways, subnormal grids, -0
            let pick = |r: &mut Xorshift| match r.next_u64() % 6 {
                0 => 0x7BFF,
                1 => 0xFBFF,
                2 => (r.next_u64() % 0x400) as u16 | (r.next_u64() as u16 & 0x8000),
                3 => 0x8000,
                _ => finite(r),
            };
            let min = pick(r);
            let mut step = pick(r);
            if r.next_u64() % 4 != 0 {
                step &= 0x7FFF;
            }
            let codes: Vec<u8> = (0..p.group).map(|_| (r.next_u64() % (1 << p.bits)) as u8).collect();
            (Meta { scale: step, min }.word(), codes)
        }
        _ => {
            let (q, _) = quantize_group(p.bits, &values(r, kind, p.group));
            (q.meta.word(), q.codes)
        }
    };
    let mut words = pack(&codes, p.bits);
    let c = codes_per_word(p.bits);
    let used = |w: usize| -> u32 {
        let n = (p.group - w * c).min(c) * p.bits as usize;
        if n >= 32 {
            u32::MAX
        } else {
            (1u32 << n) - 1
        }
    };
    let noisy = r.next_u64() % 4 == 0 && (0..words.len()).any(|w| used(w) != u32::MAX);
    if noisy {
        for (w, x) in words.iter_mut().enumerate() {
            *x |= r.next_u64() as u32 & !used(w);
        }
    }
    Group { kind, meta, words, noisy }
}

pub fn case_of(p: &DeqParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let groups = (0..n)
        .map(|_| {
            let kind = match r.next_u64() % 10 {
                0..=3 => Kind::Real,
                4..=5 => Kind::Synthetic,
                6 => Kind::Flat,
                7 => Kind::NonFinite,
                _ => Kind::RandomMeta,
            };
            group_of(&mut r, p, kind)
        })
        .collect();
    Case { groups, in_stall, out_stall, seed: r.next_u64() }
}

pub fn case(p: DeqParams, groups: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (groups, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub y: Vec<u64>,
    pub last: bool,
}

/// The output beats of one group.
pub fn expected(p: &DeqParams, g: &Group) -> Vec<OutBeat> {
    let y = dequantize_group(p.bits, &g.words, Meta::from_word(g.meta), p.group);
    y.chunks(p.lanes)
        .enumerate()
        .map(|(k, c)| OutBeat { y: c.iter().map(|&v| v as u64).collect(), last: k + 1 == p.beats() })
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub beats: usize,
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    pub first_latency: Option<u64>,
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    /// Outputs at +-65504 (saturated or exact) and exact zeros.
    pub sat: u64,
    pub zeros: u64,
    pub subnormal_out: u64,
    pub kinds: Vec<Kind>,
    pub noisy: u64,
    /// A group's first beat taken the cycle after the previous group's last.
    pub b2b_groups: u64,
    /// A reset cut the run: output beats still owed at that moment.
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "group: real values",
    "group: synthetic values",
    "group: max = min (step 0)",
    "group: non-finite input",
    "group: random metadata",
    "noise in unused bits",
    "output at +-65504",
    "output zero",
    "output subnormal",
    "back-to-back groups",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    for k in &r.kinds {
        cov.hit(match k {
            Kind::Real => "group: real values",
            Kind::Synthetic => "group: synthetic values",
            Kind::Flat => "group: max = min (step 0)",
            Kind::NonFinite => "group: non-finite input",
            Kind::RandomMeta => "group: random metadata",
        });
    }
    cov.add("noise in unused bits", r.noisy);
    cov.add("output at +-65504", r.sat);
    cov.add("output zero", r.zeros);
    cov.add("output subnormal", r.subnormal_out);
    cov.add("back-to-back groups", r.b2b_groups);
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_meta: PortId,
    in_words: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_y: PortId,
    out_last: PortId,
}

pub fn run(m: &mut Model, p: &DeqParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at model cycle `reset_at` (relative to the
/// case's start): the beats out before it must be a prefix of the
/// expected ones.
pub fn run_until(m: &mut Model, p: &DeqParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &DeqParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_meta: g("in_meta"),
        in_words: g("in_words"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_y: g("out_y"),
        out_last: g("out_last"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x6b);
    let mut run = Run::default();
    let mut want: Vec<OutBeat> = Vec::new();
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let mut src: Source<&Group> = Source::new(c.groups.iter(), &c.in_stall, c.seed ^ 1);
    let total = c.groups.len() * p.beats();
    let timeout = 5000 + 600 * total as u64;
    let mut first_accept: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("output beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if src.is_empty() && sink.beats.len() == want.len() {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {} beats out", sink.beats.len(), total));
        }
        let offer = src.offer().copied();
        m.set(io.in_valid, offer.is_some() as u64);
        match offer {
            Some(gr) => {
                m.set(io.in_meta, gr.meta as u64);
                m.set_words(io.in_words, &gr.words);
            }
            None => {
                m.set(io.in_meta, rng.next_u64() & 0xFFFF_FFFF);
                let w: Vec<u32> = (0..p.words()).map(|_| rng.next_u64() as u32).collect();
                m.set_words(io.in_words, &w);
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
            .sample(cycle, valid, ready, || OutBeat { y: m.get_lanes(io.out_y), last: m.get(io.out_last) == 1 })?
            .cloned();
        if let Some(b) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!("cycle {cycle}: output beat {i} before its group was accepted"));
            }
            if b != want[i] {
                return Err(format!(
                    "cycle {cycle}: output beat {i} (group {}, beat {}): got {b:?}\n expected {:?}",
                    i / p.beats(),
                    i % p.beats(),
                    want[i]
                ));
            }
            run.first_latency.get_or_insert_with(|| cycle - first_accept.unwrap());
            if i > 0 && i % p.beats() == 0 && run.out_cycles.last() == Some(&(cycle - 1)) {
                run.b2b_groups += 1;
            }
            run.out_cycles.push(cycle);
            for &y in &b.y {
                let y = y as u16;
                run.sat += (y & 0x7FFF == 0x7BFF) as u64;
                run.zeros += (y == 0) as u64;
                run.subnormal_out += (y & 0x7C00 == 0 && y & 0x3FF != 0) as u64;
            }
        }
        if offer.is_some() && in_ready {
            let gr = src.take();
            first_accept.get_or_insert(cycle);
            run.in_cycles.push(cycle);
            want.extend(expected(p, gr));
            run.kinds.push(gr.kind);
            run.noisy += gr.noisy as u64;
        }
        m.tick();
        cyc += 1;
    }
    run.beats = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("output beat {i}"))?;
    Ok(run)
}
