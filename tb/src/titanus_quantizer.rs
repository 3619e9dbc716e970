//! Driving one half of the Titanus quantization unit and predicting it from
//! `sim::titanus::quantizer::Quantizer`. Paper: Titanus §2.3, §3.2, §4.4.
//! Spec: docs/spec.md §11.5-§11.7, §11.9, §11.13.
//!
//! A case is a list of operations done in order: table writes, `start`,
//! `flush`, prefill and decode tokens. Input operations are offered back to
//! back as beats under a stall pattern; a write waits until every earlier
//! beat has been accepted and is then driven alone, so the table a `start`
//! latches is the one written at earlier edges. Each operation is applied to
//! the model when its last beat is accepted. Every record beat, every `sz`
//! word and every response code is compared in order, the status port at
//! the end. Ignored inputs (lanes past a beat's popcount, a token's command
//! fields, the mask and data of a command) and every input whose valid is
//! low carry fresh noise each cycle.
//!
//! Tokens are INT8 vectors drawn like a KV cache (per-channel offsets and
//! scales, a few outlier channels, drift during decode so that levels open
//! and reach the limit), pruned by `sim::titanus::pruner` with the threshold
//! the table holds for the sequence's (layer, K/V), as the PU in front of
//! the QU would.

use crate::coverage::Coverage;
use crate::lanes;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use crate::titanus_table::{self as tt, TwPort, Write};
use proptest::prelude::*;
use serde::Deserialize;
use sim::oaken::thresholds::Kv;
use sim::titanus::params::{ConfigTable, LayerConfig, TitanusParams, MAX_POSITIONS};
use sim::titanus::pruner::{prune, Pruned};
use sim::titanus::quantizer::{Phase, QuantError, Quantizer, TokenOut};
use std::fmt;

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct QuantParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub max_levels: usize,
    pub max_prefill: usize,
}

impl QuantParams {
    pub fn titanus(&self) -> TitanusParams {
        TitanusParams {
            channels: self.channels,
            lanes: self.lanes,
            layers: self.layers,
            max_levels: self.max_levels,
            max_prefill: self.max_prefill,
        }
    }

    pub fn beats(&self) -> usize {
        self.channels / self.lanes
    }
}

pub fn params_of(m: &Model) -> QuantParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are titanus-quantizer's")
}

/// One operation of a case; tokens are raw INT8 vectors of the sequence's
/// K or V, pruned on the way in (`lower`).
#[derive(Clone, PartialEq, Eq)]
pub enum Op {
    Write(Write),
    Start { layer: u8, v: bool },
    Flush,
    Prefill(Vec<i8>),
    Decode(Vec<i8>),
}

/// What the unit is given: operations with pruned tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Write(Write),
    Start { layer: u8, v: bool },
    Flush,
    Prefill(Pruned),
    Decode(Pruned),
}

#[derive(Clone)]
pub struct Case {
    pub ops: Vec<Op>,
    pub in_stall: Stall,
    pub rec_stall: Stall,
    pub sz_stall: Stall,
    pub seed: u64,
}

fn hex(x: &[i8]) -> String {
    x.iter().map(|&v| format!("{:02x}", v as u8)).collect()
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Write(w) => write!(f, "{w:?}"),
            Op::Start { layer, v } => write!(f, "Start {{ layer: {layer}, v: {v} }}"),
            Op::Flush => f.write_str("Flush"),
            Op::Prefill(x) => write!(f, "Prefill({})", hex(x)),
            Op::Decode(x) => write!(f, "Decode({})", hex(x)),
        }
    }
}

/// Short enough to print the 65,536-token case: the first and last ops.
impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Case {{ in_stall: {:?}, rec_stall: {:?}, sz_stall: {:?}, seed: {:#x}, {} ops:",
            self.in_stall,
            self.rec_stall,
            self.sz_stall,
            self.seed,
            self.ops.len()
        )?;
        let n = self.ops.len();
        for (i, o) in self.ops.iter().enumerate() {
            if n > 300 && (150..n - 100).contains(&i) {
                if i == 150 {
                    writeln!(f, "  ... {} ops ...", n - 250)?;
                }
                continue;
            }
            writeln!(f, "  {i}: {o:?}")?;
        }
        f.write_str("}")
    }
}

/// Prunes each token with the threshold the table holds, in operation
/// order, for the current sequence's (layer, K/V) (layer 0's for a layer out
/// of range; layer 0 K before any `start`).
pub fn lower(p: &QuantParams, ops: &[Op]) -> Vec<Input> {
    let mut table = ConfigTable::new(p.layers);
    let (mut layer, mut side) = (0usize, Kv::K);
    ops.iter()
        .map(|o| match o {
            Op::Write(w) => {
                tt::apply(&mut table, w);
                Input::Write(*w)
            }
            Op::Start { layer: l, v } => {
                (layer, side) = (*l as usize, tt::kv(*v));
                Input::Start { layer: *l, v: *v }
            }
            Op::Flush => Input::Flush,
            Op::Prefill(x) => Input::Prefill(prune(x, table.lookup(layer, side).0.threshold)),
            Op::Decode(x) => Input::Decode(prune(x, table.lookup(layer, side).0.threshold)),
        })
        .collect()
}

// ---------------------------------------------------------------- stimulus

/// How a sequence's values are drawn: per channel an offset, a scale and a
/// drift per decode token (a KV cache in INT8, spec §11.2: the bulk spans a
/// few steps, outlier channels many), plus channels pruned or constant
/// through the prefill and values only at the INT8 extremes.
struct Profile {
    off: Vec<f64>,
    sc: Vec<f64>,
    drift: Vec<f64>,
    zero: Vec<bool>,
    constant: Vec<Option<i8>>,
    extremes: bool,
    spikes: u64,
}

fn unit(r: &mut Xorshift) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn profile(r: &mut Xorshift, c: usize, force_degenerate: bool) -> Profile {
    let mut pr = Profile {
        off: (0..c).map(|_| (r.next_u64() % 21) as f64 * 0.5 - 5.0).collect(),
        sc: (0..c).map(|_| 0.5 + (r.next_u64() % 8) as f64).collect(),
        drift: (0..c)
            .map(|_| match r.next_u64() % 3 {
                0 => (0.1 + 1.4 * unit(r)) * if r.next_u64() & 1 == 1 { 1.0 } else { -1.0 },
                _ => 0.0,
            })
            .collect(),
        zero: (0..c).map(|_| r.next_u64() % 12 == 0).collect(),
        constant: vec![None; c],
        extremes: r.next_u64() % 10 == 0,
        spikes: 24 + r.next_u64() % 200,
    };
    for _ in 0..r.next_u64() % 3 {
        let k = (r.next_u64() % c as u64) as usize;
        pr.sc[k] = 20.0 + 30.0 * unit(r);
        pr.off[k] = (20.0 + 50.0 * unit(r)) * if r.next_u64() & 1 == 1 { 1.0 } else { -1.0 };
    }
    for k in 0..c {
        if r.next_u64() % 12 == 0 {
            pr.constant[k] = Some(match r.next_u64() % 4 {
                0 => [-128i8, 127, 1, -1][(r.next_u64() % 4) as usize],
                _ => (r.next_u64() % 61) as i8 - 30,
            });
        }
    }
    if force_degenerate && c >= 2 {
        let (a, b) = ((r.next_u64() % c as u64) as usize, (r.next_u64() % c as u64) as usize);
        pr.zero[a] = true;
        if b != a {
            pr.zero[b] = false;
            pr.constant[b] = Some((r.next_u64() % 41) as i8 - 20 | 1);
        }
    }
    pr
}

/// One INT8 value of channel `k`, `t` decode tokens into the sequence
/// (`None`: a prefill token).
fn value(r: &mut Xorshift, pr: &Profile, k: usize, t: Option<usize>) -> i8 {
    if pr.extremes {
        return [-128i8, 127, -128, 127, 0][(r.next_u64() % 5) as usize];
    }
    match t {
        None if pr.zero[k] => return 0,
        None if pr.constant[k].is_some() => return pr.constant[k].unwrap(),
        Some(_) if r.next_u64() % pr.spikes == 0 => {
            return [-128i8, 127, -100, 100, -128][(r.next_u64() % 5) as usize];
        }
        _ => {}
    }
    let g = (0..4).map(|_| 2.0 * unit(r) - 1.0).sum::<f64>() * 0.87;
    let d = t.map_or(0.0, |t| pr.drift[k] * t as f64);
    let grow = t.map_or(1.0, |t| 1.0 + t as f64 / 400.0);
    (pr.off[k] + d + pr.sc[k] * grow * g).round().clamp(-128.0, 127.0) as i8
}

/// How a case is drawn.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Decode tokens per sequence.
    pub decode: (usize, usize),
    /// Edge-case sequences, IDLE tokens, and writes between and within
    /// sequences (off for the chain test, whose writes all come first).
    pub edges: bool,
}

pub const DEFAULT_STYLE: Style = Style { decode: (2, 24), edges: true };

fn span(r: &mut Xorshift, (lo, hi): (usize, usize)) -> usize {
    lo + (r.next_u64() % (hi - lo + 1) as u64) as usize
}

/// A random case from `seed`: `seqs` sequences.
pub fn case_of(p: &QuantParams, seqs: usize, seed: u64, style: Style, stalls: [Stall; 3]) -> Case {
    let mut r = Xorshift::new(seed);
    let mut ops = Vec::new();
    let c = p.channels;
    let token =
        |r: &mut Xorshift, pr: &Profile, t: Option<usize>| (0..c).map(|k| value(r, pr, k, t)).collect::<Vec<i8>>();
    // writes first
    for _ in 0..r.next_u64() % 5 {
        ops.push(Op::Write(tt::write(&mut r, p.layers)));
    }
    // a token or flush before any start: NoStart
    if style.edges && r.next_u64() % 5 == 0 {
        let pr = profile(&mut r, c, false);
        for _ in 0..1 + r.next_u64() % 2 {
            ops.push(match r.next_u64() % 3 {
                0 => Op::Flush,
                1 => Op::Prefill(token(&mut r, &pr, None)),
                _ => Op::Decode(token(&mut r, &pr, Some(0))),
            });
        }
    }
    for s in 0..seqs {
        let kind = if style.edges { r.next_u64() % 20 } else { 19 };
        let layer = if kind == 15 && p.layers < 256 {
            (p.layers + (r.next_u64() % 3) as usize).min(255) as u8
        } else {
            (r.next_u64() % p.layers as u64) as u8
        };
        let v = r.next_u64() & 1 == 1;
        // this sequence's table entry: mostly a small threshold; 2 bits for
        // the extremes; a high threshold now and then (most values pruned)
        let entry = match kind {
            16 => Some(LayerConfig { threshold: (r.next_u64() % 2) as u8, bits: 2 }),
            17 => Some(LayerConfig { threshold: 20 + (r.next_u64() % 236) as u8, bits: 2 + (r.next_u64() % 3) as u8 }),
            _ if r.next_u64() % 2 == 0 => {
                Some(LayerConfig { threshold: (r.next_u64() % 6) as u8, bits: 2 + (r.next_u64() % 3) as u8 })
            }
            _ => None,
        };
        if let Some(e) = entry {
            let wl = if (layer as usize) < p.layers { layer } else { 0 };
            ops.push(Op::Write(Write { layer: wl, v, threshold: e.threshold, bits: e.bits }));
        }
        if style.edges && r.next_u64() % 3 == 0 {
            for _ in 0..1 + r.next_u64() % 3 {
                ops.push(Op::Write(tt::write(&mut r, p.layers)));
            }
        }
        let degenerate = !style.edges || r.next_u64() % 3 == 0;
        let mut pr = profile(&mut r, c, degenerate);
        pr.extremes |= kind == 16;
        let cap = p.max_prefill.min(24);
        let (mut npre, mut flush, mut ndec) =
            (1 + (r.next_u64() % cap as u64) as usize, r.next_u64() % 2 == 0, span(&mut r, style.decode));
        let mut pre_after_dec = false;
        match kind {
            10 => (npre, flush) = (0, true),
            11 => (npre, flush) = (0, false),
            12 => {
                npre = (r.next_u64() % 4) as usize;
                (flush, ndec) = (false, 0);
            }
            13 => pre_after_dec = true,
            14 if p.max_prefill <= 32 || r.next_u64() % 4 == 0 => {
                npre = p.max_prefill + 1 + (r.next_u64() % 3) as usize
            }
            _ => {}
        }
        if kind == 12 && s + 1 == seqs && r.next_u64() % 2 == 0 {
            // the case ends in PREFILL: nothing of it comes out
            npre = npre.max(1);
        }
        ops.push(Op::Start { layer, v });
        for _ in 0..npre {
            ops.push(Op::Prefill(token(&mut r, &pr, None)));
        }
        if flush {
            ops.push(Op::Flush);
        }
        let odd = if pre_after_dec { (r.next_u64() % ndec.max(1) as u64) as usize } else { usize::MAX };
        for t in 0..ndec {
            ops.push(Op::Decode(token(&mut r, &pr, Some(t))));
            if t == odd {
                ops.push(Op::Prefill(token(&mut r, &pr, None)));
            }
            if style.edges && r.next_u64() % 16 == 0 {
                ops.push(if r.next_u64() % 2 == 0 { Op::Flush } else { Op::Write(tt::write(&mut r, p.layers)) });
            }
        }
    }
    let [in_stall, rec_stall, sz_stall] = stalls;
    Case { ops, in_stall, rec_stall, sz_stall, seed: r.next_u64() }
}

pub fn case(p: QuantParams, seqs: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    let out = || prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()];
    (seqs, any::<u64>(), stalls::stall(), out(), out())
        .prop_map(move |(n, seed, i, rs, ss)| case_of(&p, n, seed, DEFAULT_STYLE, [i, rs, ss]))
}

/// A case to run right after a reset: before its own table writes, a
/// decode and a flush with no sequence started (NoStart, and no output),
/// then a sequence on layer 0 with the reset table (threshold 0, 4 bits):
/// two prefill tokens and a decode. Then a random case (`case_of`).
pub fn after_reset_case(p: &QuantParams, seed: u64, stalls: [Stall; 3]) -> Case {
    let mut c = case_of(p, 1, seed, DEFAULT_STYLE, stalls);
    let mut r = Xorshift::new(seed ^ 0x5eed);
    let pr = profile(&mut r, p.channels, false);
    let mut tok = |t: Option<usize>| (0..p.channels).map(|k| value(&mut r, &pr, k, t)).collect::<Vec<i8>>();
    let first = vec![
        Op::Decode(tok(Some(0))),
        Op::Flush,
        Op::Start { layer: 0, v: false },
        Op::Prefill(tok(None)),
        Op::Prefill(tok(None)),
        Op::Decode(tok(Some(0))),
    ];
    c.ops.splice(0..0, first);
    c
}

/// One short directed case that reaches every coverage point except
/// SequenceFull and the backpressure counts' need for long stalls: every
/// rejection (a flush and a decode before any start, a prefill past
/// `max_prefill`, a prefill after decode), legal and rejected table writes,
/// an empty prefill, a decode before any prefill, a start during a prefill,
/// a layer out of range, a drifting channel that opens levels up to the
/// limit, a constant and an all-pruned channel, and a 2-bit sequence at the
/// INT8 extremes. Few random cases (the netlist runs) may miss the rare
/// ones; this case makes their coverage independent of the seed.
pub fn directed_case(p: &QuantParams, seed: u64) -> Case {
    let mut r = Xorshift::new(seed);
    let pr = profile(&mut r, p.channels, true);
    let c = p.channels;
    let mut tok = |t: Option<usize>| (0..c).map(|k| value(&mut r, &pr, k, t)).collect::<Vec<i8>>();
    let w = |layer: usize, threshold: u8, bits: u8| {
        Op::Write(Write { layer: layer.min(255) as u8, v: false, threshold, bits })
    };
    let mut ops = vec![
        w(0, 1, 4),
        w(p.layers, 3, 3),
        w(0, 2, 5),
        Op::Flush,
        Op::Decode(tok(Some(0))),
        Op::Start { layer: 0, v: false },
    ];
    for _ in 0..=p.max_prefill {
        ops.push(Op::Prefill(tok(None)));
    }
    ops.extend([Op::Decode(tok(Some(0))), Op::Prefill(tok(None)), Op::Flush, Op::Decode(tok(Some(1)))]);
    // an empty prefill; a decode before any prefill; a start during a prefill
    ops.extend([Op::Start { layer: 0, v: false }, Op::Flush]);
    ops.extend([Op::Start { layer: 0, v: false }, Op::Decode(tok(Some(0)))]);
    ops.extend([Op::Start { layer: 0, v: false }, Op::Prefill(tok(None))]);
    if p.layers < 256 {
        ops.extend([Op::Start { layer: p.layers.min(255) as u8, v: false }, Op::Prefill(tok(None)), Op::Flush]);
    }
    // channel 0 drifts upward past every level (threshold 0 keeps it all);
    // channel 1 stays constant and channel 2 (if any) is pruned throughout
    let drift = |x: i8, len: usize| -> Vec<i8> {
        (0..len)
            .map(|k| match k {
                0 => x,
                1 => 5,
                2 => 0,
                _ => (k as i8 % 7) - 3,
            })
            .collect()
    };
    ops.extend([w(0, 0, 3), Op::Start { layer: 0, v: false }]);
    ops.extend([-4i8, 4].map(|x| Op::Prefill(drift(x, c))));
    ops.push(Op::Flush);
    // each decode value one step past the last: a level each, then the limit
    let steps = (p.max_levels + 3).min(40) as i8;
    ops.extend((0..steps).map(|k| Op::Decode(drift(5 + 3 * k, c))));
    ops.extend([127i8, -128, 90].map(|x| Op::Decode(drift(x, c))));
    // a 2-bit sequence at the INT8 extremes
    ops.extend([w(0, 0, 2), Op::Start { layer: 0, v: false }]);
    ops.extend([-128i8, 127].map(|x| Op::Prefill(vec![x; c])));
    ops.push(Op::Flush);
    ops.extend([127i8, -128, 0, -128].map(|x| Op::Decode(vec![x; c])));
    let stall = Stall::Random { p: 30 };
    Case { ops, in_stall: stall.clone(), rec_stall: stall.clone(), sz_stall: stall, seed: r.next_u64() }
}

/// One sequence that reaches 65,536 positions (`SequenceFull`), then a
/// decode, a prefill and a flush past the end, and a new sequence. Meant for
/// a model with one beat per token.
pub fn sequence_full_case(p: &QuantParams, seed: u64) -> Case {
    let mut r = Xorshift::new(seed);
    let pr = profile(&mut r, p.channels, true);
    let pool: Vec<Vec<i8>> =
        (0..64).map(|t| (0..p.channels).map(|k| value(&mut r, &pr, k, Some(t))).collect()).collect();
    let mut ops = vec![Op::Start { layer: 0, v: false }];
    let npre = p.max_prefill.min(4);
    for t in 0..npre {
        ops.push(Op::Prefill(pool[t].clone()));
    }
    for t in npre..MAX_POSITIONS {
        ops.push(Op::Decode(pool[t % 64].clone()));
    }
    ops.extend([Op::Decode(pool[1].clone()), Op::Prefill(pool[2].clone()), Op::Flush, Op::Decode(pool[3].clone())]);
    ops.push(Op::Start { layer: 0, v: true });
    ops.push(Op::Prefill(pool[4].clone()));
    ops.push(Op::Decode(pool[5].clone()));
    Case {
        ops,
        in_stall: Stall::Random { p: 20 },
        rec_stall: Stall::Random { p: 20 },
        sz_stall: Stall::Never,
        seed: r.next_u64(),
    }
}

// ---------------------------------------------------------------- model side

/// One record beat as the unit shows it (spec §11.13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecBeat {
    pub pos: u64,
    pub index: u128,
    pub label: u128,
    /// All `lanes` code lanes: the non-zero codes compacted, other lanes 0.
    pub codes: Vec<u64>,
    pub count: u64,
    pub last: bool,
    pub saturated: u64,
}

pub fn rsp_code(r: Result<(), QuantError>) -> u64 {
    match r {
        Ok(()) => 0,
        Err(QuantError::NoStart) => 1,
        Err(QuantError::PrefillAfterDecode) => 2,
        Err(QuantError::PrefillFull) => 3,
        Err(QuantError::SequenceFull) => 4,
        Err(QuantError::BadVector) => 7, // cannot be driven; never expected
    }
}

/// The table as a half started with `v` reads it: the model's `Quantizer`
/// has a fixed K/V, the hardware half takes it with `start`.
fn kv_view(t: &ConfigTable, v: bool) -> ConfigTable {
    if !v {
        return t.clone();
    }
    let mut k = ConfigTable::new(t.layers());
    for l in 0..t.layers() {
        k.write(l, Kv::K, t.lookup(l, Kv::V).0).expect("a table entry is legal");
    }
    k
}

/// Record beats of one token; `sat` per beat.
pub fn rec_beats(p: &QuantParams, t: &TokenOut, sat: &[u64]) -> Vec<RecBeat> {
    let mut codes = t.record.codes.iter();
    (0..p.beats())
        .map(|j| {
            let ch = j * p.lanes..(j + 1) * p.lanes;
            let bits = |v: &[bool]| v[ch.clone()].iter().enumerate().fold(0u128, |a, (i, &x)| a | (x as u128) << i);
            let mut cs: Vec<u64> = ch
                .clone()
                .filter(|&c| t.record.label[c])
                .map(|_| *codes.next().expect("a code per label bit") as u64)
                .collect();
            let count = cs.len() as u64;
            cs.resize(p.lanes, 0);
            RecBeat {
                pos: t.pos as u64,
                index: bits(&t.record.index),
                label: bits(&t.record.label),
                codes: cs,
                count,
                last: j + 1 == p.beats(),
                saturated: sat[j],
            }
        })
        .collect()
}

/// Events read off the model, for coverage.
#[derive(Clone, Debug, Default)]
pub struct Events {
    pub decode_levels: u64,
    pub saturated: u64,
    pub empty_channels: u64,
    pub single_value: u64,
    pub rsp: [u64; 5],
    pub empty_prefill: u64,
    pub decode_before_prefill: u64,
    pub start_in_prefill: u64,
    pub layer_oob: u64,
    pub two_bit_extremes: u64,
    pub m128: u64,
}

/// The model of one half and everything it predicts.
#[derive(Clone)]
pub struct Expect {
    p: QuantParams,
    pub q: Quantizer,
    pub table: ConfigTable,
    pub rec: Vec<RecBeat>,
    pub sz: Vec<u64>,
    pub rsp: Vec<u64>,
    /// Every token output with its sequence number (starts so far - 1).
    pub tokens: Vec<(usize, TokenOut)>,
    seq: usize,
    pub ev: Events,
}

impl Expect {
    pub fn new(p: &QuantParams) -> Expect {
        Expect {
            p: *p,
            q: Quantizer::new(p.titanus(), Kv::K),
            table: ConfigTable::new(p.layers),
            rec: Vec::new(),
            sz: Vec::new(),
            rsp: Vec::new(),
            tokens: Vec::new(),
            seq: 0,
            ev: Events::default(),
        }
    }

    fn emit(&mut self, outs: Vec<TokenOut>, last_sat: Option<Vec<u64>>) -> Result<(), String> {
        let n = outs.len();
        for (i, t) in outs.into_iter().enumerate() {
            let sat = match &last_sat {
                Some(s) if i + 1 == n => s.clone(),
                _ => vec![0; self.p.beats()],
            };
            if sat.iter().sum::<u64>() != t.saturated as u64 {
                return Err(format!(
                    "testbench: per-beat saturated {sat:?} does not add up to the model's {}",
                    t.saturated
                ));
            }
            self.rec.extend(rec_beats(&self.p, &t, &sat));
            self.sz.extend(t.entries.iter().map(|e| e.word()));
            self.tokens.push((self.seq.saturating_sub(1), t));
        }
        Ok(())
    }

    fn ended_prefill(&mut self, before: Phase) -> bool {
        if before != Phase::Prefill {
            return false;
        }
        let s = &self.q.status;
        if !s.no_prefill {
            self.ev.empty_channels += s.empty_channels as u64;
        }
        self.ev.single_value += s.single_value_channels as u64;
        true
    }

    /// Applies one input operation; its response code goes to `rsp`.
    pub fn apply(&mut self, inp: &Input) -> Result<(), String> {
        let before = self.q.phase();
        let code = match inp {
            Input::Write(_) => unreachable!("writes go through the tw port"),
            Input::Start { layer, v } => {
                let view = kv_view(&self.table, *v);
                let outs = self.q.start(*layer as usize, &view);
                if self.ended_prefill(before) {
                    self.ev.start_in_prefill += 1;
                }
                self.ev.layer_oob += (*layer as usize >= self.p.layers) as u64;
                self.emit(outs, None)?;
                self.seq += 1;
                0
            }
            Input::Flush => match self.q.flush() {
                Ok(outs) => {
                    if self.ended_prefill(before) && self.q.status.no_prefill {
                        self.ev.empty_prefill += 1;
                    }
                    self.emit(outs, None)?;
                    0
                }
                Err(e) => rsp_code(Err(e)),
            },
            Input::Prefill(t) => rsp_code(self.q.prefill(t)),
            Input::Decode(t) => match self.q.decode(t) {
                Ok(outs) => {
                    if self.ended_prefill(before) && self.q.status.no_prefill {
                        self.ev.decode_before_prefill += 1;
                    }
                    // clamped iff outside the TR of the level it was coded
                    // with (one element per channel per token: a level
                    // opened by this token holds its value)
                    let mut sat = vec![0u64; self.p.beats()];
                    let bits = self.q.bits();
                    let mut vals = t.values.iter();
                    for c in (0..self.p.channels).filter(|&c| t.index[c]) {
                        let x = *vals.next().expect("a value per kept channel") as i32;
                        let l = self.q.levels(c).last().expect("a kept channel has a level");
                        sat[c / self.p.lanes] += !l.contains(x) as u64;
                        self.ev.m128 += (x == -128) as u64;
                        self.ev.two_bit_extremes += (bits == 2 && l.lo == -128 && l.hi == 127) as u64;
                    }
                    let last = outs.last().expect("a decode token's output");
                    self.ev.decode_levels += last.entries.len() as u64;
                    self.ev.saturated += last.saturated as u64;
                    self.emit(outs, Some(sat))?;
                    0
                }
                Err(e) => rsp_code(Err(e)),
            },
        };
        if code < 5 {
            self.ev.rsp[code as usize] += 1;
        }
        self.rsp.push(code);
        Ok(())
    }
}

// ---------------------------------------------------------------- driver

/// One input beat; `None` fields are ignored by the unit and get noise.
#[derive(Clone, Debug)]
struct InBeat {
    op: usize,
    cmd: Option<u64>,
    layer_kv: Option<(u64, u64)>,
    mask: Option<u128>,
    /// The beat's kept values (lanes past them get noise).
    data: Vec<i8>,
    last: bool,
}

fn beats_of(p: &QuantParams, op: usize, inp: &Input) -> Vec<InBeat> {
    let cmd = |c, lk| InBeat { op, cmd: Some(c), layer_kv: lk, mask: None, data: vec![], last: true };
    let token = |c: u64, t: &Pruned| {
        let mut vals = t.values.iter();
        (0..p.beats())
            .map(|j| {
                let ch = j * p.lanes..(j + 1) * p.lanes;
                let mask = t.index[ch.clone()].iter().enumerate().fold(0u128, |a, (i, &k)| a | (k as u128) << i);
                let data = ch.filter(|&c| t.index[c]).map(|_| *vals.next().expect("value")).collect();
                InBeat {
                    op,
                    cmd: (j == 0).then_some(c),
                    layer_kv: None,
                    mask: Some(mask),
                    data,
                    last: j + 1 == p.beats(),
                }
            })
            .collect()
    };
    match inp {
        Input::Write(_) => vec![],
        Input::Start { layer, v } => vec![cmd(0, Some((*layer as u64, *v as u64)))],
        Input::Flush => vec![cmd(2, None)],
        Input::Prefill(t) => token(1, t),
        Input::Decode(t) => token(3, t),
    }
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_cmd: PortId,
    in_layer: PortId,
    in_kv: PortId,
    in_mask: PortId,
    in_data: PortId,
    rec_valid: PortId,
    rec_ready: PortId,
    rec_pos: PortId,
    rec_index: PortId,
    rec_label: PortId,
    rec_codes: PortId,
    rec_count: PortId,
    rec_last: PortId,
    rec_saturated: PortId,
    sz_valid: PortId,
    sz_ready: PortId,
    sz_word: PortId,
    rsp_valid: PortId,
    rsp_err: PortId,
}

impl Ports {
    fn of(m: &Model) -> Ports {
        let g = |n: &str| m.port(n);
        Ports {
            in_valid: g("in_valid"),
            in_ready: g("in_ready"),
            in_cmd: g("in_cmd"),
            in_layer: g("in_layer"),
            in_kv: g("in_kv"),
            in_mask: g("in_mask"),
            in_data: g("in_data"),
            rec_valid: g("rec_valid"),
            rec_ready: g("rec_ready"),
            rec_pos: g("rec_pos"),
            rec_index: g("rec_index"),
            rec_label: g("rec_label"),
            rec_codes: g("rec_codes"),
            rec_count: g("rec_count"),
            rec_last: g("rec_last"),
            rec_saturated: g("rec_saturated"),
            sz_valid: g("sz_valid"),
            sz_ready: g("sz_ready"),
            sz_word: g("sz_word"),
            rsp_valid: g("rsp_valid"),
            rsp_err: g("rsp_err"),
        }
    }

    fn rec(&self, m: &Model, lanes: usize) -> RecBeat {
        RecBeat {
            pos: m.get(self.rec_pos),
            index: m.get_u128(self.rec_index),
            label: m.get_u128(self.rec_label),
            codes: lanes::unpack(&m.get_words(self.rec_codes), lanes, 4),
            count: m.get(self.rec_count),
            last: m.get(self.rec_last) == 1,
            saturated: m.get(self.rec_saturated),
        }
    }
}

/// What a run saw.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub cycles: u64,
    pub in_beats: usize,
    pub in_blocked: u64,
    pub rec_held: u64,
    pub sz_held: u64,
    pub tw_codes: Vec<u64>,
    pub ev: Events,
    /// The record beats and `sz` words the unit produced (equal to the
    /// model's when the run passes), and the model's token outputs with
    /// their sequence numbers.
    pub rec: Vec<RecBeat>,
    pub sz: Vec<u64>,
    pub tokens: Vec<(usize, TokenOut)>,
    /// Model cycle of each accepted input beat, of each record beat and of
    /// each `sz` word taken (for throughput).
    pub in_cycles: Vec<u64>,
    pub rec_cycles: Vec<u64>,
    pub sz_cycles: Vec<u64>,
    /// A reset cut the run (`run_until`), with this in flight.
    pub cut: Option<InFlight>,
}

/// What was in flight when a reset cut a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct InFlight {
    /// Some but not all beats of a token accepted.
    pub partial_token: bool,
    /// Record beats and `sz` words of accepted operations not yet taken.
    pub rec_owed: usize,
    pub sz_owed: usize,
    /// A sequence in its prefill phase (tokens buffered, none output).
    pub prefill: bool,
}

fn mask_bits(lanes: usize) -> u128 {
    if lanes >= 128 {
        u128::MAX
    } else {
        (1u128 << lanes) - 1
    }
}

/// Runs case `c` (fresh out of reset).
pub fn run(m: &mut Model, p: &QuantParams, c: &Case) -> Result<Run, String> {
    run_inputs(m, p, &lower(p, &c.ops), [&c.in_stall, &c.rec_stall, &c.sz_stall], c.seed)
}

/// Runs case `c` (fresh out of reset) until a one-cycle reset at cycle
/// `reset_at` (if it is still running then): what came out before the
/// reset must be a prefix of the model's; `cut` says what was in flight.
pub fn run_until(m: &mut Model, p: &QuantParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inputs_until(m, p, &lower(p, &c.ops), [&c.in_stall, &c.rec_stall, &c.sz_stall], c.seed, Some(reset_at))
}

/// Runs `inputs` on `m` (fresh out of reset), checking every output, every
/// response, `in_ready` against both readies, and the status port at the end.
pub fn run_inputs(
    m: &mut Model,
    p: &QuantParams,
    inputs: &[Input],
    stall: [&Stall; 3],
    seed: u64,
) -> Result<Run, String> {
    run_inputs_until(m, p, inputs, stall, seed, None)
}

fn run_inputs_until(
    m: &mut Model,
    p: &QuantParams,
    inputs: &[Input],
    stall: [&Stall; 3],
    seed: u64,
    reset_at: Option<u64>,
) -> Result<Run, String> {
    let io = Ports::of(m);
    let mut tw = TwPort::of(m);
    let mut rng = Xorshift::new(seed ^ 0x9a);
    let mut ex = Expect::new(p);
    let mut run = Run::default();
    let mut src: Source<InBeat> = Source::new([], stall[0], seed ^ 1);
    let mut rec: Sink<RecBeat> = Sink::new(stall[1], seed ^ 2);
    let mut sz: Sink<u64> = Sink::new(stall[2], seed ^ 3);
    let mut rsp: Vec<u64> = Vec::new();
    let n_in: usize = inputs.iter().filter(|i| !matches!(i, Input::Write(_))).count();
    let total_beats: usize = inputs.iter().enumerate().map(|(k, i)| beats_of(p, k, i).len()).sum();
    let mut done = 0usize; // input operations fully accepted
    let mut next = 0usize; // next operation to queue
    let timeout = 50_000 + 400 * (total_beats as u64 + inputs.len() as u64) * (1 + p.max_levels as u64 / 4);
    let mut cyc = 0u64;
    let (lanes, beats) = (p.lanes, p.beats());
    let mut partial = None; // a token whose first beats are taken, not its last
    loop {
        if reset_at == Some(cyc) {
            run.cut = Some(InFlight {
                partial_token: partial.is_some(),
                rec_owed: ex.rec.len().saturating_sub(rec.beats.len()),
                sz_owed: ex.sz.len().saturating_sub(sz.beats.len()),
                prefill: ex.q.phase() == Phase::Prefill,
            });
            let before = |what: &'static str| move |e: String| format!("{what} before the reset at cycle {cyc}: {e}");
            // a token taken in part may have shown some of its outputs
            let mut ex = ex.clone();
            if let Some(op) = partial {
                ex.apply(&inputs[op])?;
                ex.rsp.pop();
            }
            stream::compare(&rsp, &ex.rsp, true, |i| format!("{i}")).map_err(before("responses"))?;
            stream::compare(&sz.beats, &ex.sz, true, |i| format!("{i}")).map_err(before("sz words"))?;
            stream::compare(&rec.beats, &ex.rec, true, |i| format!("{i}")).map_err(before("record beats"))?;
            m.reset(1);
            run.cycles = cyc;
            run.tw_codes = tw.codes;
            return Ok(run);
        }
        // queue input operations up to the next write; a write goes alone
        let mut write = None;
        while next < inputs.len() {
            match &inputs[next] {
                Input::Write(w) => {
                    if src.is_empty() {
                        write = Some(*w);
                        next += 1;
                    }
                    break;
                }
                i => src.queue.extend(beats_of(p, next, i)),
            }
            next += 1;
        }
        if next == inputs.len()
            && src.is_empty()
            && write.is_none()
            && rec.beats.len() >= ex.rec.len()
            && sz.beats.len() >= ex.sz.len()
            && rsp.len() >= ex.rsp.len()
        {
            break;
        }
        if cyc > timeout {
            return Err(format!(
                "timeout after {cyc} cycles: {done} of {n_in} input operations taken, {} of {} record beats, {} of {} sz words, {} of {} responses",
                rec.beats.len(),
                ex.rec.len(),
                sz.beats.len(),
                ex.sz.len(),
                rsp.len(),
                ex.rsp.len()
            ));
        }
        tw.drive(m, write.as_ref(), &mut rng);
        let offer = src.offer().cloned();
        m.set(io.in_valid, offer.is_some() as u64);
        let b = offer.as_ref();
        let (l, k) = b.and_then(|b| b.layer_kv).unwrap_or((rng.next_u64() & 0xFF, rng.next_u64() & 1));
        m.set(io.in_cmd, b.and_then(|b| b.cmd).unwrap_or(rng.next_u64() & 3));
        m.set(io.in_layer, l);
        m.set(io.in_kv, k);
        m.set_u128(io.in_mask, b.and_then(|b| b.mask).unwrap_or((rng.next_u64() as u128) & mask_bits(lanes)));
        let data: Vec<u64> = (0..lanes)
            .map(|i| match b.and_then(|b| b.data.get(i)) {
                Some(&x) => x as u8 as u64,
                None => rng.next_u64() & 0xFF,
            })
            .collect();
        m.set_words(io.in_data, &lanes::pack(&data, 8));
        let (rr, sr) = (rec.ready(), sz.ready());
        // in_ready is a register: it must not follow either ready
        m.set(io.rec_ready, !rr as u64);
        m.set(io.sz_ready, !sr as u64);
        m.eval();
        let other = m.get(io.in_ready);
        m.set(io.rec_ready, rr as u64);
        m.set(io.sz_ready, sr as u64);
        m.eval();
        let in_ready = m.get(io.in_ready) == 1;
        if other != in_ready as u64 {
            return Err(format!("cycle {}: in_ready follows rec_ready/sz_ready combinationally", m.cycle()));
        }
        let cycle = m.cycle();
        if offer.is_some() && !in_ready {
            run.in_blocked += 1;
        }
        let rv = m.get(io.rec_valid) == 1;
        run.rec_held += (rv && !rr) as u64;
        rec.sample(cycle, rv, rr, || io.rec(m, lanes)).map_err(|e| format!("rec: {e}"))?;
        let sv = m.get(io.sz_valid) == 1;
        run.sz_held += (sv && !sr) as u64;
        sz.sample(cycle, sv, sr, || m.get(io.sz_word)).map_err(|e| format!("sz: {e}"))?;
        if let Some(b) = offer {
            if in_ready {
                src.take();
                run.in_cycles.push(cycle);
                partial = (!b.last).then_some(b.op);
                if b.last {
                    ex.apply(&inputs[b.op])?;
                    done += 1;
                }
            }
        }
        if m.get(io.rsp_valid) == 1 {
            rsp.push(m.get(io.rsp_err));
            if rsp.len() > done {
                return Err(format!(
                    "cycle {cycle}: response {} before its operation's last beat was accepted ({done} taken)",
                    rsp.len()
                ));
            }
        }
        if let Some(w) = &write {
            tw.taken(&mut ex.table, w);
        }
        m.tick();
        tw.check(m)?;
        cyc += 1;
    }
    // nothing more may come out
    tw.drive(m, None, &mut rng);
    m.set(io.in_valid, 0);
    m.set(io.rec_ready, 1);
    m.set(io.sz_ready, 1);
    for _ in 0..16 {
        m.eval();
        for (port, what) in [(io.rec_valid, "record beat"), (io.sz_valid, "sz word"), (io.rsp_valid, "response")] {
            if m.get(port) == 1 {
                return Err(format!("cycle {}: an extra {what} after the stream", m.cycle()));
            }
        }
        m.tick();
        tw.check(m)?;
    }
    // every stream's first difference, and the status, in one message
    let errs: Vec<String> = [
        stream::compare(&rsp, &ex.rsp, false, |i| {
            let op = inputs.iter().filter(|x| !matches!(x, Input::Write(_))).nth(i);
            format!("response {i} (to {})", op.map_or("?".into(), describe))
        }),
        stream::compare(&sz.beats, &ex.sz, false, |i| {
            format!("sz word {i} ({:?})", sim::titanus::quantizer::SzEntry::from_word(ex.sz[i]))
        }),
        stream::compare(&rec.beats, &ex.rec, false, |i| {
            format!("record beat {i} (token {} at position {}, beat {})", i / beats, ex.rec[i].pos, i % beats)
        }),
        check_status(m, &ex.q.status),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    if !errs.is_empty() {
        return Err(errs.join("\n"));
    }
    run.cycles = cyc;
    run.in_beats = total_beats;
    run.tw_codes = tw.codes;
    run.ev = ex.ev;
    run.rec = rec.beats;
    run.rec_cycles = rec.cycles;
    run.sz = sz.beats;
    run.sz_cycles = sz.cycles;
    run.tokens = ex.tokens;
    Ok(run)
}

fn describe(i: &Input) -> String {
    match i {
        Input::Write(w) => format!("{w:?}"),
        Input::Start { layer, v } => format!("start layer {layer} {}", if *v { "V" } else { "K" }),
        Input::Flush => "flush".into(),
        Input::Prefill(t) => format!("a prefill token of {} kept", t.values.len()),
        Input::Decode(t) => format!("a decode token of {} kept", t.values.len()),
    }
}

fn check_status(m: &Model, s: &sim::titanus::quantizer::QuantStatus) -> Result<(), String> {
    let w = 0xFFFF_FFFFu64;
    let want = [
        ("st_levels_opened", s.levels_opened & w),
        ("st_saturated", s.saturated & w),
        ("st_rejected", s.rejected & w),
        ("st_limit_hit", s.limit_hit as u64),
        ("st_layer_oob", s.layer_oob as u64),
        ("st_no_prefill", s.no_prefill as u64),
        ("st_empty_channels", s.empty_channels as u64),
        ("st_single_value_channels", s.single_value_channels as u64),
    ];
    for (name, v) in want {
        let got = m.get(m.port(name));
        if got != v {
            return Err(format!("{name} = {got}, expected {v} (model status {s:?})"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- coverage

pub const POINTS: &[&str] = &[
    "level opened in decode",
    "level limit reached (saturated element)",
    "all-pruned (empty) channel",
    "single-value range",
    "rsp ok",
    "rsp NoStart",
    "rsp PrefillAfterDecode",
    "rsp PrefillFull",
    "rsp SequenceFull",
    "tw accepted",
    "tw rejected: layer out of range",
    "tw rejected: bad bit width",
    "rec output held (backpressure)",
    "sz output held (backpressure)",
    "input blocked",
    "empty prefill",
    "decode before prefill",
    "start during prefill",
    "layer_oob",
    "2-bit range [-128, 127]",
    "-128 quantized in decode",
];

pub fn cover(cov: &Coverage, r: &Run) {
    let e = &r.ev;
    cov.add("level opened in decode", e.decode_levels);
    cov.add("level limit reached (saturated element)", e.saturated);
    cov.add("all-pruned (empty) channel", e.empty_channels);
    cov.add("single-value range", e.single_value);
    for (k, name) in
        ["rsp ok", "rsp NoStart", "rsp PrefillAfterDecode", "rsp PrefillFull", "rsp SequenceFull"].iter().enumerate()
    {
        cov.add(name, e.rsp[k]);
    }
    for (k, name) in ["tw accepted", "tw rejected: layer out of range", "tw rejected: bad bit width"].iter().enumerate()
    {
        cov.add(name, r.tw_codes.iter().filter(|&&x| x == k as u64).count() as u64);
    }
    cov.add("rec output held (backpressure)", r.rec_held);
    cov.add("sz output held (backpressure)", r.sz_held);
    cov.add("input blocked", r.in_blocked);
    cov.add("empty prefill", e.empty_prefill);
    cov.add("decode before prefill", e.decode_before_prefill);
    cov.add("start during prefill", e.start_in_prefill);
    cov.add("layer_oob", e.layer_oob);
    cov.add("2-bit range [-128, 127]", e.two_bit_extremes);
    cov.add("-128 quantized in decode", e.m128);
}

/// Runs a case on the model alone (no RTL): the events the stimulus
/// reaches, for checking the generator before the hardware exists.
pub fn model_events(p: &QuantParams, c: &Case) -> Result<Events, String> {
    let mut ex = Expect::new(p);
    for i in lower(p, &c.ops) {
        match &i {
            Input::Write(w) => {
                tt::apply(&mut ex.table, w);
            }
            _ => ex.apply(&i)?,
        }
    }
    Ok(ex.ev)
}

/// The parameters of a tb/models.toml entry without building it (keys
/// left out take the §11.1 defaults): for checking the stimulus on the
/// model alone.
pub fn params_of_spec(params: &toml::Table) -> QuantParams {
    let d = TitanusParams::default();
    let get = |k: &str, v: usize| params.get(k).and_then(|x| x.as_integer()).map_or(v, |x| x as usize);
    QuantParams {
        channels: get("channels", d.channels),
        lanes: get("lanes", d.lanes),
        layers: get("layers", d.layers),
        max_levels: get("max-levels", d.max_levels),
        max_prefill: get("max-prefill", d.max_prefill),
    }
}
