//! Driving `hack-quantizer` with `axis = channel` (V) and predicting its
//! output from `sim::hack::quantizer::Quantizer::quantize_block`. Spec:
//! docs/spec.md §15.2-§15.5, §15.7, §15.11, §15.16.6.
//!
//! The unit is KIVI's channel engine, so this driver is
//! `kivi_quantizer_channel`'s (`run_with`): the same blocks (real rows,
//! synthetic channels with outliers, flat channels, NaN and infinities,
//! random finite, a channel above 65504), streamed twice under stalls,
//! and the same beat order, with each channel's code sum on the beats of
//! its last word. One `Quantizer` codes the blocks of a case in order, so
//! in stochastic mode the LFSR carries from block to block as the RTL's
//! does. On top of KIVI's kinds, a block may get channels of two values
//! only (codes 0 and 2^b - 1, sums near 0 and near their top).

use crate::coverage::Coverage;
use crate::hack_quantizer::HqParams;
use crate::kivi_quantizer::QuantParams;
use crate::kivi_quantizer_channel::{self as kc, Block, Case, Expect, Facts, OutBeat, Run};
use crate::model::Model;
use crate::stalls::{self, Stall};
use crate::stim::{finite_fp16, Xorshift};
use proptest::prelude::*;
use sim::fp16;
use sim::hack::params::Rounding;
use sim::hack::quantizer::{Part, Quantizer};
use sim::kivi::params::Axis;

/// The model is a `hack-quantizer` with `axis = channel`.
pub fn is_channel(info: &crate::info::ModelInfo) -> bool {
    let v: serde_json::Value = serde_json::from_str(info.params_json).unwrap_or_default();
    v.get("axis").and_then(|a| a.as_str()) == Some("channel")
}

/// KIVI's view of the set: `head_dim` channels in groups of `Pi` tokens.
pub fn kivi_view(p: &HqParams) -> QuantParams {
    QuantParams { head_dim: p.head_dim, heads: 1, group: p.partition, bits: p.bits, lanes: p.lanes, axis: Axis::Channel }
}

/// Channels of two values only: all at the top but one, or all at the
/// bottom but one (sums `(Pi - 1)(2^b - 1)` and `2^b - 1`).
fn extreme_channels(r: &mut Xorshift, b: &mut Block) {
    let (g, n) = (b.tokens.len(), b.tokens[0].len());
    for _ in 0..1 + r.next_u64() % 4 {
        let c = (r.next_u64() as usize) % n;
        let (x, y) = (finite_fp16(r), finite_fp16(r));
        let (lo, hi) = if fp16::to_units(x) <= fp16::to_units(y) { (x, y) } else { (y, x) };
        let (most, one) = if r.next_u64().is_multiple_of(2) { (hi, lo) } else { (lo, hi) };
        for t in b.tokens.iter_mut() {
            t[c] = most;
        }
        b.tokens[(r.next_u64() as usize) % g][c] = one;
    }
}

pub fn case_of(p: &HqParams, n: usize, seed: u64, in_stall: Stall, out_stall: Stall) -> Case {
    let mut c = kc::case_of(&kivi_view(p), n, seed, in_stall, out_stall);
    let mut r = Xorshift::new(seed ^ 0x5A5A);
    for b in c.blocks.iter_mut() {
        if r.next_u64().is_multiple_of(3) {
            extreme_channels(&mut r, b);
        }
    }
    c
}

pub fn case(p: HqParams, blocks: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (blocks, any::<u64>(), stalls::stall(), prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()])
        .prop_map(move |(n, seed, i, o)| case_of(&p, n, seed, i, o))
}

/// A block coded by `q` (its LFSR moves on): the partitions, one per
/// channel, and the `nonfinite` flag.
pub fn quantize(q: &mut Quantizer, b: &Block) -> (Vec<Part>, bool) {
    let refs: Vec<&[u16]> = b.tokens.iter().map(|t| t.as_slice()).collect();
    q.quantize_block(&refs)
}

/// The output beats of one block coded by `q`, in order (KIVI's rows with
/// the sums on word W - 1's beats), and what they exercise.
pub fn expected(p: &HqParams, q: &mut Quantizer, b: &Block) -> (Vec<Expect>, Facts) {
    let (parts, nf) = quantize(q, b);
    let (l, g, nb) = (p.lanes, p.partition, p.head_dim / p.lanes);
    let c = 32 / p.bits as usize;
    let top = (1u32 << p.bits) - 1;
    let mut f = Facts::default();
    for (ch, part) in parts.iter().enumerate() {
        let gp = part.params();
        f.flat_channels += (part.meta.scale == 0) as u64;
        f.subnormal_steps += (part.meta.scale != 0 && part.meta.scale & 0x7C00 == 0) as u64;
        f.top_codes += part.codes.iter().filter(|&&x| x as u32 == top).count() as u64;
        f.sum_zero += (part.sum == 0) as u64;
        f.sum_top += (part.sum >= (g as u32 - 1) * top) as u64;
        let xs: Vec<i64> = b.tokens.iter().map(|t| fp16::to_units(fp16::sanitize(t[ch]).0)).collect();
        let (lo, hi) = (*xs.iter().min().unwrap(), *xs.iter().max().unwrap());
        f.wide_channels += (hi - lo > fp16::MAX_UNITS) as u64;
        if gp.step_units > 0 {
            for (&x, &code) in xs.iter().zip(&part.codes) {
                let n = x - gp.min_units;
                let (q0, rem) = (n / gp.step_units, n % gp.step_units);
                match p.rounding {
                    Rounding::Nearest => f.ties_up += (rem != 0 && 2 * rem == gp.step_units) as u64,
                    Rounding::Stochastic => f.rounded_up += (code as i64 > q0) as u64,
                }
            }
        }
    }
    let words: Vec<Vec<u32>> = parts.iter().map(|pt| sim::kivi::format::pack(&pt.codes, p.bits)).collect();
    let w = words[0].len();
    let zero = vec![0u32; l];
    let mut out = Vec::new();
    for k in 0..nb {
        let data = (0..l).map(|i| parts[k * l + i].meta.word()).collect();
        let beat = OutBeat { data, meta: true, word: 0, last: false, nonfinite: false, sum: zero.clone() };
        out.push(Expect { beat, after: g * nb + k });
    }
    for wi in 0..w {
        let j = (wi * c + c - 1).min(g - 1);
        for k in 0..nb {
            let last = wi + 1 == w && k + 1 == nb;
            let data = (0..l).map(|i| words[k * l + i][wi]).collect();
            let sum = if wi + 1 == w { (0..l).map(|i| parts[k * l + i].sum).collect() } else { zero.clone() };
            let beat = OutBeat { data, meta: false, word: wi as u32, last, nonfinite: last && nf, sum };
            out.push(Expect { beat, after: (g + j) * nb + k });
        }
    }
    (out, f)
}

/// Runs case `c` from reset state: one quantizer, seeded as the model.
pub fn run(m: &mut Model, p: &HqParams, c: &Case) -> Result<Run, String> {
    let mut q = p.quantizer();
    kc::run_with(m, &kivi_view(p), c, None, &mut |b| expected(p, &mut q, b), true)
}

/// `run` with a one-cycle reset at cycle `reset_at`.
pub fn run_until(m: &mut Model, p: &HqParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    let mut q = p.quantizer();
    kc::run_with(m, &kivi_view(p), c, Some(reset_at), &mut |b| expected(p, &mut q, b), true)
}

pub const POINTS: &[&str] = &[
    "input blocked",
    "output held (backpressure)",
    "input idle",
    "block: real rows",
    "block: outlier channels",
    "block: flat channels",
    "block: non-finite input",
    "block: random patterns",
    "block: range above 65504",
    "channel: max = min (step 0)",
    "channel: subnormal step",
    "channel: D above 65504",
    "sum: 0",
    "sum: at least (Pi - 1)(2^b - 1)",
    "code: 2^b - 1",
    "code: tie rounded up (nearest)",
    "code: rounded up (stochastic)",
    "nonfinite flag out",
    "back-to-back blocks",
];

/// `POINTS` less the rounding point of a mode no model in `infos` has.
pub fn points(infos: &[&crate::info::ModelInfo]) -> Vec<&'static str> {
    let has = |m: Rounding| infos.iter().any(|i| crate::hack_quantizer::params_of_info(i).rounding == m);
    let (near, st) = (has(Rounding::Nearest), has(Rounding::Stochastic));
    POINTS
        .iter()
        .copied()
        .filter(|p| (near || *p != "code: tie rounded up (nearest)") && (st || *p != "code: rounded up (stochastic)"))
        .collect()
}

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("input blocked", r.in_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("input idle", r.idle_in);
    for k in &r.kinds {
        cov.hit(match k {
            kc::Kind::Real => "block: real rows",
            kc::Kind::Outlier => "block: outlier channels",
            kc::Kind::Flat => "block: flat channels",
            kc::Kind::NonFinite => "block: non-finite input",
            kc::Kind::Random => "block: random patterns",
            kc::Kind::WideRange => "block: range above 65504",
        });
    }
    let f = &r.facts;
    cov.add("channel: max = min (step 0)", f.flat_channels);
    cov.add("channel: subnormal step", f.subnormal_steps);
    cov.add("channel: D above 65504", f.wide_channels);
    cov.add("sum: 0", f.sum_zero);
    cov.add("sum: at least (Pi - 1)(2^b - 1)", f.sum_top);
    cov.add("code: 2^b - 1", f.top_codes);
    // a mode's point is declared only when a model of that mode runs
    // (`points`); a run of the other mode adds nothing to it
    if f.ties_up > 0 {
        cov.add("code: tie rounded up (nearest)", f.ties_up);
    }
    if f.rounded_up > 0 {
        cov.add("code: rounded up (stochastic)", f.rounded_up);
    }
    cov.add("nonfinite flag out", r.nonfinite_blocks);
    cov.add("back-to-back blocks", r.b2b_blocks);
}
