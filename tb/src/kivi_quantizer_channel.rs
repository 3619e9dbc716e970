//! Driving `kivi-quantizer` with `axis = channel` (K) and predicting its
//! output from `sim::kivi::quantizer::quantize_block`. Spec: docs/spec.md
//! §13.2-§13.5, §13.8, §13.14.3.
//!
//! A case is a list of blocks of `G` token vectors. Each block is streamed
//! twice (pass 1, pass 2), `lanes` channels per beat, under an input stall
//! pattern; the output beats are taken under another. A block is expected
//! as its metadata rows, then its code-word rows word by word, each output
//! beat released once the input beat that completes it is in. Blocks are
//! real K rows of the committed slice (outlier channels and all), synthetic
//! K with per-channel offsets and a few outlier channels, blocks with flat
//! channels, NaN and infinities, random finite patterns, and a channel
//! spanning more than 65504. Inputs whose valid is low carry noise.

use crate::coverage::Coverage;
use crate::kivi_quantizer::{real_slice, QuantParams};
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::{finite_fp16 as finite, uniform_pm1 as uniform, Xorshift};
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use sim::fp16;
use sim::kivi::quantizer::{quantize_block, GroupParams};

/// Rows (beats) per token.
pub fn rows(p: &QuantParams) -> usize {
    p.vector() / p.lanes
}

/// Code words per channel group, `W = ceil(G / c)`.
pub fn words(p: &QuantParams) -> usize {
    p.group.div_ceil(32 / p.bits as usize)
}

/// What a block is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `G` consecutive K rows of one layer of the real slice.
    Real,
    /// Channel offsets and scales, a few channels far larger (K outliers).
    Outlier,
    /// Some channels constant over the block.
    Flat,
    NonFinite,
    /// Any finite FP16 patterns (subnormals, extremes, -0).
    Random,
    /// A channel holding both -65504 and 65504.
    WideRange,
}

pub const KINDS: [Kind; 6] = [Kind::Real, Kind::Outlier, Kind::Flat, Kind::NonFinite, Kind::Random, Kind::WideRange];

#[derive(Clone, Debug)]
pub struct Block {
    pub kind: Kind,
    /// `G` token vectors.
    pub tokens: Vec<Vec<u16>>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub blocks: Vec<Block>,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

pub fn block_of(r: &mut Xorshift, p: &QuantParams, kind: Kind) -> Block {
    let (n, g) = (p.vector(), p.group);
    let mut t: Vec<Vec<u16>> = match kind {
        Kind::Real => {
            // shape (1, layers, 2, tokens, channels); K is index 0
            let s = real_slice();
            let (layers, tokens, ch) = (5, 1024, 192);
            assert_eq!(s.len(), layers * 2 * tokens * ch, "the real slice's shape changed");
            let layer = (r.next_u64() as usize) % layers;
            let t0 = (r.next_u64() as usize) % (tokens - g);
            let c0 = (r.next_u64() as usize) % ch;
            let base = layer * 2 * tokens * ch;
            (0..g).map(|j| (0..n).map(|c| s[base + (t0 + j) * ch + (c0 + c) % ch]).collect()).collect()
        }
        Kind::Random => (0..g).map(|_| (0..n).map(|_| finite(r)).collect()).collect(),
        _ => {
            let scale = [0.00002f32, 0.001, 0.3, 1.0, 20.0, 3000.0][(r.next_u64() % 6) as usize];
            let chan: Vec<(f32, f32)> = (0..n)
                .map(|_| {
                    let big = if r.next_u64() % 16 == 0 { 12.0 } else { 1.0 };
                    (uniform(r) * scale * 2.0 * big, scale * big)
                })
                .collect();
            (0..g).map(|_| chan.iter().map(|&(o, s)| fp16::from_f32(o + uniform(r) * s)).collect()).collect()
        }
    };
    match kind {
        Kind::Flat => {
            for c in 0..n {
                if r.next_u64() % 3 == 0 || c == 0 {
                    let v = if r.next_u64() % 4 == 0 { 0x8000 } else { finite(r) };
                    for row in t.iter_mut() {
                        row[c] = v;
                    }
                    if v == 0x8000 {
                        // -0 and +0 sanitise alike: still flat
                        t[(r.next_u64() as usize) % g][c] = 0;
                    }
                }
            }
        }
        Kind::Outlier if r.next_u64() % 3 == 0 => {
            // on a grid with step 1.0 exactly: every other element a tie
            let top = (1u64 << p.bits) - 1;
            for c in 0..n {
                for row in t.iter_mut() {
                    row[c] = fp16::from_f32(-1.0 + (r.next_u64() % (2 * top + 1)) as f32 * 0.5);
                }
                t[0][c] = fp16::from_f32(-1.0);
                t[1][c] = fp16::from_f32(top as f32 - 1.0);
            }
        }
        Kind::NonFinite => {
            for _ in 0..1 + r.next_u64() % 3 {
                let (j, c) = ((r.next_u64() as usize) % g, (r.next_u64() as usize) % n);
                t[j][c] = [0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01][(r.next_u64() % 5) as usize];
            }
        }
        Kind::WideRange => {
            let c = (r.next_u64() as usize) % n;
            let (a, b) = ((r.next_u64() as usize) % g, (r.next_u64() as usize) % g);
            t[a][c] = 0xFBFF;
            t[(b + (a == b) as usize) % g][c] = 0x7BFF;
        }
        _ => {}
    }
    Block { kind, tokens: t }
}

pub fn case_of(p: &QuantParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let blocks = (0..n)
        .map(|_| {
            let kind = match r.next_u64() % 12 {
                0..=4 => Kind::Real,
                5..=6 => Kind::Outlier,
                7..=8 => Kind::Flat,
                9 => Kind::NonFinite,
                10 => Kind::Random,
                _ => Kind::WideRange,
            };
            block_of(&mut r, p, kind)
        })
        .collect();
    Case { blocks, in_stall, out_stall, seed: r.next_u64() }
}

pub fn case(p: QuantParams, blocks: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (blocks, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// One output beat: `lanes` metadata words or code words of one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub data: Vec<u32>,
    pub meta: bool,
    pub word: u32,
    pub last: bool,
    pub nonfinite: bool,
    /// `hack-quantizer` only (empty in KIVI): the lanes' code sums.
    pub sum: Vec<u32>,
}

/// Facts about the expected output (for coverage).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub flat_channels: u64,
    pub ties_up: u64,
    pub top_codes: u64,
    pub subnormal_steps: u64,
    pub wide_channels: u64,
    /// `hack-quantizer` only: stochastic codes rounded up, sums at 0 and
    /// at their top `Pi (2^b - 1)`.
    pub rounded_up: u64,
    pub sum_zero: u64,
    pub sum_top: u64,
}

impl Facts {
    pub fn add(&mut self, o: &Facts) {
        self.flat_channels += o.flat_channels;
        self.ties_up += o.ties_up;
        self.top_codes += o.top_codes;
        self.subnormal_steps += o.subnormal_steps;
        self.wide_channels += o.wide_channels;
        self.rounded_up += o.rounded_up;
        self.sum_zero += o.sum_zero;
        self.sum_top += o.sum_top;
    }
}

/// An expected output beat and the block input beat (0 .. 2 G rows) after
/// which it may come out.
pub struct Expect {
    pub beat: OutBeat,
    pub after: usize,
}

/// The output beats of one block, in order, and what they exercise.
pub fn expected(p: &QuantParams, b: &Block, f: &mut Facts) -> Vec<Expect> {
    let refs: Vec<&[u16]> = b.tokens.iter().map(|t| t.as_slice()).collect();
    let q = quantize_block(&p.kivi(), &refs);
    let (nb, l, g) = (rows(p), p.lanes, p.group);
    let c = 32 / p.bits as usize;
    for (ch, grp) in q.groups.iter().enumerate() {
        let gp = GroupParams::from_meta(grp.meta);
        f.flat_channels += (grp.meta.scale == 0) as u64;
        f.subnormal_steps += (grp.meta.scale != 0 && grp.meta.scale & 0x7C00 == 0) as u64;
        f.top_codes += grp.codes.iter().filter(|&&x| x as u32 == (1 << p.bits) - 1).count() as u64;
        let xs: Vec<i64> = b.tokens.iter().map(|t| fp16::to_units(fp16::sanitize(t[ch]).0)).collect();
        let (lo, hi) = (*xs.iter().min().unwrap(), *xs.iter().max().unwrap());
        f.wide_channels += (hi - lo > fp16::MAX_UNITS) as u64;
        if gp.step_units > 0 {
            f.ties_up += xs.iter().filter(|&&x| (2 * (x - gp.min_units) + gp.step_units) % (2 * gp.step_units) == 0).count() as u64;
        }
    }
    let words: Vec<Vec<u32>> = q.groups.iter().map(|grp| grp.words(p.bits)).collect();
    let mut out = Vec::new();
    for k in 0..nb {
        let data = (0..l).map(|i| q.groups[k * l + i].meta.word()).collect();
        out.push(Expect { beat: OutBeat { data, meta: true, word: 0, last: false, nonfinite: false, sum: vec![] }, after: g * nb + k });
    }
    let w = words.first().map_or(0, |v| v.len());
    for wi in 0..w {
        let j = (wi * c + c - 1).min(g - 1);
        for k in 0..nb {
            let last = wi + 1 == w && k + 1 == nb;
            let data = (0..l).map(|i| words[k * l + i][wi]).collect();
            let beat = OutBeat { data, meta: false, word: wi as u32, last, nonfinite: last && q.nonfinite, sum: vec![] };
            out.push(Expect { beat, after: (g + j) * nb + k });
        }
    }
    out
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub beats: usize,
    pub cycles: u64,
    pub in_blocked: u64,
    pub out_held: u64,
    /// Cycles with no input offered while beats were left (noise on the inputs).
    pub idle_in: u64,
    pub kinds: Vec<Kind>,
    pub facts: Facts,
    pub nonfinite_blocks: u64,
    /// Cycles from the first metadata beat's input beat to it, and from the
    /// first code beat's input beat to it.
    pub meta_latency: Option<u64>,
    pub word_latency: Option<u64>,
    pub in_cycles: Vec<u64>,
    /// A block's first input beat the cycle after the previous block's last.
    pub b2b_blocks: u64,
    /// A reset cut the run: output beats still owed at that moment.
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "block: real K rows",
    "block: outlier channels",
    "block: flat channels",
    "block: non-finite input",
    "block: random patterns",
    "block: range above 65504",
    "channel: max = min (step 0)",
    "channel: subnormal step",
    "channel: D above 65504",
    "code: tie rounded up",
    "code: 2^b - 1",
    "nonfinite flag out",
    "back-to-back blocks",
];

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    for k in &r.kinds {
        cov.hit(match k {
            Kind::Real => "block: real K rows",
            Kind::Outlier => "block: outlier channels",
            Kind::Flat => "block: flat channels",
            Kind::NonFinite => "block: non-finite input",
            Kind::Random => "block: random patterns",
            Kind::WideRange => "block: range above 65504",
        });
    }
    cov.add("channel: max = min (step 0)", r.facts.flat_channels);
    cov.add("channel: subnormal step", r.facts.subnormal_steps);
    cov.add("channel: D above 65504", r.facts.wide_channels);
    cov.add("code: tie rounded up", r.facts.ties_up);
    cov.add("code: 2^b - 1", r.facts.top_codes);
    cov.add("nonfinite flag out", r.nonfinite_blocks);
    cov.add("back-to-back blocks", r.b2b_blocks);
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_x: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
    out_meta: PortId,
    out_word: PortId,
    out_last: PortId,
    out_nonfinite: PortId,
    out_sum: Option<PortId>,
}

/// One input beat: its values, and where it is in the case.
struct InBeat {
    x: Vec<u64>,
    block: usize,
    /// Row of the block's stream, 0 .. 2 G rows.
    at: usize,
}

pub fn run(m: &mut Model, p: &QuantParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None, &mut kivi_expect(p), false)
}

/// `expected` as `run_with` takes it.
fn kivi_expect(p: &QuantParams) -> impl FnMut(&Block) -> (Vec<Expect>, Facts) + '_ {
    move |b| {
        let mut f = Facts::default();
        (expected(p, b, &mut f), f)
    }
}

/// `run` with another unit's expected beats (`exp`, called once per block
/// in order, so it may carry state such as an LFSR from block to block),
/// and with `sums` the `out_sum` lanes sampled too (`hack-quantizer`,
/// axis channel); `reset_at` as `run_until`.
pub fn run_with(
    m: &mut Model,
    p: &QuantParams,
    c: &Case,
    reset_at: Option<u64>,
    exp: &mut dyn FnMut(&Block) -> (Vec<Expect>, Facts),
    sums: bool,
) -> Result<Run, String> {
    run_inner(m, p, c, reset_at, exp, sums)
}

/// `run`, with a one-cycle reset at cycle `reset_at` of the case: the
/// beats out before it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &QuantParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at), &mut kivi_expect(p), false)
}

fn run_inner(
    m: &mut Model,
    p: &QuantParams,
    c: &Case,
    reset_at: Option<u64>,
    exp: &mut dyn FnMut(&Block) -> (Vec<Expect>, Facts),
    sums: bool,
) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        in_valid: g("in_valid"),
        in_ready: g("in_ready"),
        in_x: g("in_x"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_data: g("out_data"),
        out_meta: g("out_meta"),
        out_word: g("out_word"),
        out_last: g("out_last"),
        out_nonfinite: g("out_nonfinite"),
        out_sum: sums.then(|| g("out_sum")),
    };
    let (nb, per) = (rows(p), 2 * p.group * rows(p));
    let mut rng = Xorshift::new(c.seed ^ 0x73);
    let mut run = Run::default();
    let beats: Vec<InBeat> = c
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(bi, b)| {
            (0..2 * p.group).flat_map(move |j| {
                b.tokens[j % p.group].chunks(p.lanes).enumerate().map(move |(k, ch)| InBeat {
                    x: ch.iter().map(|&v| v as u64).collect(),
                    block: bi,
                    at: j * nb + k,
                })
            })
        })
        .collect();
    let mut src: Source<InBeat> = Source::new(beats, &c.in_stall, c.seed ^ 1);
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    // every output beat of the case, in order, with the input it waits for
    let mut facts: Vec<Facts> = Vec::new();
    let mut all: Vec<(usize, Expect)> = Vec::new();
    for (bi, b) in c.blocks.iter().enumerate() {
        let (e, f) = exp(b);
        all.extend(e.into_iter().map(|e| (bi, e)));
        facts.push(f);
    }
    let mut want: Vec<OutBeat> = Vec::new();
    let mut released_at: Vec<u64> = Vec::new();
    let total = all.len();
    let timeout = 5000 + 600 * (c.blocks.len() * per) as u64;
    let mut last_in: Option<u64> = None;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| format!("output beat {i} before the reset"))?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if src.is_empty() && sink.beats.len() == total {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} output beats out", sink.beats.len()));
        }
        let offer = src.offer().map(|b| b.x.clone());
        m.set(io.in_valid, offer.is_some() as u64);
        match &offer {
            Some(x) => m.set_lanes(io.in_x, x),
            None => m.set_lanes(io.in_x, &(0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>()),
        }
        let ready = sink.ready();
        let in_ready = stream::settle_ready(m, io.in_ready, io.out_ready, ready)?;
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        run.idle_in += (offer.is_none() && !src.is_empty()) as u64;
        let valid = m.get(io.out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || OutBeat {
                data: m.get_words(io.out_data),
                meta: m.get(io.out_meta) == 1,
                word: m.get(io.out_word) as u32,
                last: m.get(io.out_last) == 1,
                nonfinite: m.get(io.out_nonfinite) == 1,
                sum: io.out_sum.map_or(vec![], |s| m.get_lanes(s).into_iter().map(|v| v as u32).collect()),
            })?
            .cloned();
        if let Some(b) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!("cycle {cycle}: output beat {i} before the input beat that completes it"));
            }
            if b != want[i] {
                return Err(format!("cycle {cycle}: output beat {i}: got {b:x?}\n expected {:x?}", want[i]));
            }
            let lat = cycle - released_at[i];
            if b.meta {
                run.meta_latency.get_or_insert(lat);
            } else {
                run.word_latency.get_or_insert(lat);
            }
            run.nonfinite_blocks += b.nonfinite as u64;
        }
        if offer.is_some() && in_ready {
            let b = src.take();
            run.in_cycles.push(cycle);
            if b.at == 0 && last_in == Some(cycle - 1) {
                run.b2b_blocks += 1;
            }
            while want.len() < total && all[want.len()].0 == b.block && all[want.len()].1.after == b.at {
                want.push(all[want.len()].1.beat.clone());
                released_at.push(cycle);
            }
            if b.at + 1 == per {
                last_in = Some(cycle);
                run.facts.add(&facts[b.block]);
                run.kinds.push(c.blocks[b.block].kind);
            }
        }
        m.tick();
        cyc += 1;
    }
    run.beats = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("output beat {i}"))?;
    Ok(run)
}
