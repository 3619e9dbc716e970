//! One decode step of attention three ways over the same cache (docs/spec.md
//! §15.9, §15.10): HACK (the three unit models chained), the dequantize-first
//! FP16 baseline, and exact attention.

use super::baseline::DeqDot;
use super::dot::{combine_f16, combine_f32, pv_dot, QkDot};
use super::params::HackParams;
use super::quantizer::{Part, Quantizer};
use super::reference::{dequantize16, softmax_host, val};
use crate::attention::attend;
use crate::fp16;

/// One head's sequence of `T` tokens, quantized once: every K token and
/// every V block of `partition` tokens that is closed at `T`.
pub struct SeqCache<'a> {
    pub k: Vec<&'a [u16]>,
    pub v: Vec<&'a [u16]>,
    pub k_parts: Vec<Vec<Part>>,
    /// `v_parts[b][j]`: block `b`, channel `j`.
    pub v_parts: Vec<Vec<Part>>,
    /// K and V dequantized to FP16 as a dequantize-first datapath reads them
    /// (V: the blocks closed at `T`; `baseline_step` reads the partition
    /// still open at its step from `v`).
    pub k_deq: Vec<Vec<u16>>,
    pub v_deq: Vec<Vec<u16>>,
    pub nonfinite_k: bool,
    pub nonfinite_v: bool,
}

impl<'a> SeqCache<'a> {
    /// K with one quantizer instance (token axis), V with another (channel
    /// axis), both reset to `p.seed` here.
    pub fn new(p: &HackParams, k: Vec<&'a [u16]>, v: Vec<&'a [u16]>) -> SeqCache<'a> {
        let mut kq = Quantizer::new(p.kv_bits, p.partition, p.rounding, p.seed);
        let mut vq = Quantizer::new(p.kv_bits, p.partition, p.rounding, p.seed);
        let mut nonfinite_k = false;
        let k_parts: Vec<Vec<Part>> = k
            .iter()
            .map(|t| {
                let (parts, f) = kq.quantize_vector(t);
                nonfinite_k |= f;
                parts
            })
            .collect();
        let mut nonfinite_v = false;
        let v_parts: Vec<Vec<Part>> = v
            .chunks_exact(p.partition)
            .map(|b| {
                let (parts, f) = vq.quantize_block(b);
                nonfinite_v |= f;
                parts
            })
            .collect();
        let k_deq = k_parts.iter().map(|ps| ps.iter().flat_map(dequantize16).collect()).collect();
        let mut v_deq: Vec<Vec<u16>> = v.iter().map(|t| t.iter().map(|&x| fp16::sanitize(x).0).collect()).collect();
        for (b, ps) in v_parts.iter().enumerate() {
            for (j, part) in ps.iter().enumerate() {
                for (i, x) in dequantize16(part).into_iter().enumerate() {
                    v_deq[b * p.partition + i][j] = x;
                }
            }
        }
        SeqCache { k, v, k_parts, v_parts, k_deq, v_deq, nonfinite_k, nonfinite_v }
    }
}

pub use crate::attention::Step;

/// HACK at decode position `ctx - 1` (context `ctx` tokens): Q quantized
/// by `qq`, scores by `hack-qk-dot`, P by the host softmax, quantized by
/// `pq` over the closed partitions, outputs by `hack-pv-dot`.
pub struct HackStep {
    pub step: Step,
    /// Scores with Eq. 4 in binary32 and in FP16 (authors' order).
    pub scores_f32: Vec<f64>,
    pub scores_f16: Vec<f64>,
    pub nonfinite: bool,
    /// What the units got: Q's partitions, the FP16 probabilities, P's
    /// closed partitions.
    pub q_parts: Vec<Part>,
    pub probs: Vec<u16>,
    pub p_parts: Vec<Part>,
}

pub fn hack_step(p: &HackParams, c: &SeqCache, q: &[u16], ctx: usize, qq: &mut Quantizer, pq: &mut Quantizer) -> HackStep {
    let (qparts, fq) = qq.quantize_vector(q);
    let unit = QkDot::new(qparts);
    let mut scores = Vec::with_capacity(ctx);
    let mut scores_f32 = Vec::with_capacity(ctx);
    let mut scores_f16 = Vec::with_capacity(ctx);
    for k in &c.k_parts[..ctx] {
        scores.push(unit.score(k) as f64);
        scores_f32.push(unit.q.iter().zip(k).map(|(a, b)| combine_f32(a, b)).fold(0f32, |s, x| s + x) as f64);
        let h = |x: f32| fp16::to_f32(fp16::from_f32(x));
        scores_f16.push(unit.q.iter().zip(k).map(|(a, b)| combine_f16(a, b)).fold(0f32, |s, x| h(s + x)) as f64);
    }
    let probs = softmax_host(&scores, 1.0 / (p.head_dim as f64).sqrt());
    let closed = ctx / p.partition;
    let (pparts, fp) = pq.quantize_vector(&probs[..closed * p.partition]);
    let tail = closed * p.partition..ctx;
    let r = pv_dot(p.head_dim, &pparts, &c.v_parts[..closed], &probs[tail.clone()], &c.v[tail]);
    HackStep {
        step: Step { scores, out: r.out.iter().map(|&x| x as f64).collect() },
        scores_f32,
        scores_f16,
        nonfinite: fq || fp || r.nonfinite,
        q_parts: unit.q,
        probs,
        p_parts: pparts,
    }
}

/// The dequantize-first FP16 baseline on the same cache: K and closed V
/// dequantized to FP16, Q and P in FP16, binary32 multiply-accumulate.
pub fn baseline_step(p: &HackParams, c: &SeqCache, q: &[u16], ctx: usize) -> Step {
    // scores as `hack-deq-dot` forms them (spec §15.10)
    let unit = DeqDot::new(q, p.partition);
    let scores: Vec<f64> = c.k_parts[..ctx].iter().map(|k| unit.score(k) as f64).collect();
    let probs = softmax_host(&scores, 1.0 / (p.head_dim as f64).sqrt());
    // V of partitions closed at this step dequantized, the open one FP16
    let open = ctx / p.partition * p.partition;
    let out = (0..p.head_dim)
        .map(|j| {
            let mut acc = 0f32;
            for (t, &pt) in probs.iter().enumerate() {
                let v = if t < open { c.v_deq[t][j] } else { fp16::sanitize(c.v[t][j]).0 };
                acc += fp16::to_f32(pt) * fp16::to_f32(v);
            }
            acc as f64
        })
        .collect();
    Step { scores, out }
}

/// Exact attention (f64) on the FP16 inputs.
pub fn exact_step(c: &SeqCache, q: &[u16], ctx: usize) -> Step {
    let f = |r: &[u16]| r.iter().map(|&x| val(x)).collect::<Vec<f64>>();
    let (k, v): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (c.k[..ctx].iter().map(|r| f(r)).collect(), c.v[..ctx].iter().map(|r| f(r)).collect());
    attend(&f(q), &k.iter().map(|r| &r[..]).collect::<Vec<_>>(), &v.iter().map(|r| &r[..]).collect::<Vec<_>>())
}

const UNIT: f64 = 16_777_216.0;

/// Largest `|hack - reference| / bound` of one step, the bound of §15.11
/// derived from the steps alone: per product `e s_a |b^| + e |a| s_b`
/// (`e` = 1/2 nearest, 1 stochastic) plus the final rounding, `|out| 2^-24`.
/// Scores against exact `q . k`; outputs against `sum p_t v_t` with the
/// same FP16 `p` that `hack-pv-dot` got.
pub fn bound_ratios(p: &HackParams, c: &SeqCache, q: &[u16], ctx: usize, h: &HackStep) -> (f64, f64) {
    let e = match p.rounding {
        super::params::Rounding::Nearest => 0.5,
        super::params::Rounding::Stochastic => 1.0,
    };
    let qv: Vec<f64> = q.iter().map(|&x| val(x)).collect();
    let mut worst_s = 0f64;
    for t in 0..ctx {
        let exact: f64 = c.k[t].iter().zip(&qv).map(|(&x, &y)| val(x) * y).sum();
        let mut bound = h.step.scores[t].abs() / UNIT;
        for (pi, (qa, kb)) in h.q_parts.iter().zip(&c.k_parts[t]).enumerate() {
            let (sa, sb) = (qa.params().step_units as f64 / UNIT, kb.params().step_units as f64 / UNIT);
            for j in 0..qa.codes.len() {
                bound += e * sa * (kb.grid(j) as f64 / UNIT).abs() + e * qv[pi * p.partition + j].abs() * sb;
            }
        }
        let err = (h.step.scores[t] - exact).abs();
        if err > 0.0 {
            worst_s = worst_s.max(err / bound);
        }
    }
    let closed = ctx / p.partition;
    let mut worst_o = 0f64;
    for j in 0..p.head_dim {
        let exact: f64 = h.probs.iter().zip(&c.v[..ctx]).map(|(&pt, v)| val(pt) * val(v[j])).sum();
        let mut bound = h.step.out[j].abs() / UNIT;
        for b in 0..closed {
            let (pp, vp) = (&h.p_parts[b], &c.v_parts[b][j]);
            let (sp, sv) = (pp.params().step_units as f64 / UNIT, vp.params().step_units as f64 / UNIT);
            for i in 0..p.partition {
                bound += e * sp * (vp.grid(i) as f64 / UNIT).abs() + e * val(h.probs[b * p.partition + i]).abs() * sv;
            }
        }
        let err = (h.step.out[j] - exact).abs();
        if err > 0.0 {
            worst_o = worst_o.max(err / bound);
        }
    }
    (worst_s, worst_o)
}
