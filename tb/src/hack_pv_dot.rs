//! Driving `hack-pv-dot` and predicting its outputs from
//! `sim::hack::dot::pv_dot`. Spec: docs/spec.md §15.6, §15.9, §15.11,
//! §15.16.5.
//!
//! A case is a list of queries. Each is its lengths (`len` beat), its
//! closed blocks (a P partition on `p`, then `head_dim` V partitions on
//! `v`) and its open partition (`len_tail` tokens, `head_dim / lanes` beats
//! each on `t`). All four input streams are offered at once, each under its
//! own stall pattern, and the unit takes them in its own order; the outputs
//! (`head_dim` per query) are taken under a fifth. Partitions are of the
//! kinds of `hack_qk_dot` (quantized by `sim` from the real slice and
//! synthetic values, zero range, extreme codes, random and non-finite
//! metadata and sums) or quantized host softmax probabilities (P); the
//! tail holds softmax probabilities, any finite FP16 or NaN and infinities,
//! and real, synthetic or non-finite V.

use crate::coverage::Coverage;
use crate::hack_qk_dot::{beat_of, draw_kind, kind_point, set_beat, set_noise, Beat, DotParams, Kind};
use crate::kivi_dequantizer::{values, Kind as VKind};
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::{finite_fp16, Xorshift};
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use serde::Deserialize;
use sim::hack::dot::pv_dot;
use sim::hack::params::Rounding;
use sim::hack::quantizer::{Part, Quantizer};
use sim::hack::reference::softmax_host;
use sim::kivi::format::pack;

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PvParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    pub qp_bits: u32,
    pub lanes: usize,
}

impl PvParams {
    pub fn dot(&self) -> DotParams {
        DotParams {
            head_dim: self.head_dim,
            partition: self.partition,
            kv_bits: self.kv_bits,
            qp_bits: self.qp_bits,
            deq: false,
        }
    }
    /// Tail beats per token.
    pub fn rows(&self) -> usize {
        self.head_dim / self.lanes
    }
}

pub fn params_of(m: &Model) -> PvParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are hack-pv-dot's")
}

/// What a tail token's probability is (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TailKind {
    /// A host softmax probability (spec §15.9).
    Prob,
    /// Any finite FP16 pattern: negative, subnormal, +-65504.
    Finite,
    /// NaN or an infinity (flagged), or V with them.
    NonFinite,
}

#[derive(Clone, Debug)]
pub struct Query {
    pub p: Vec<Beat>,
    /// `v[b][j]`: block `b`, channel `j`.
    pub v: Vec<Vec<Beat>>,
    pub tail_p: Vec<u16>,
    pub tail_v: Vec<Vec<u16>>,
    pub tail_kinds: Vec<TailKind>,
    /// P of a block quantized from softmax probabilities.
    pub prob_p: usize,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub queries: Vec<Query>,
    /// len, p, v, t, out
    pub stalls: [Stall; 5],
    pub seed: u64,
}

/// Softmax probabilities of `n` random scores (the host's, spec §15.9).
fn probs(r: &mut Xorshift, n: usize) -> Vec<u16> {
    let spread = [0.5, 4.0, 40.0][(r.next_u64() % 3) as usize];
    let s: Vec<f64> = (0..n)
        .map(|_| ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * spread)
        .collect();
    softmax_host(&s, 1.0)
}

/// One query with `closed` blocks and `tail` open tokens.
pub fn query_of(r: &mut Xorshift, p: &PvParams, closed: usize, tail: usize) -> Query {
    let d = p.dot();
    let n = p.partition;
    // half the queries carry no NaN or infinity at all, so that the flag
    // is seen low as well as high
    let clean = r.next_u64().is_multiple_of(2);
    let draw = |r: &mut Xorshift| match draw_kind(r) {
        Kind::NonFiniteMeta if clean => Kind::RandomMeta,
        k => k,
    };
    let mut prob_p = 0;
    let mut pb = Vec::new();
    let mut vb = Vec::new();
    let pr = probs(r, closed * n + tail);
    for b in 0..closed {
        let beat = if r.next_u64().is_multiple_of(2) {
            // quantized softmax probabilities, as the host would send
            prob_p += 1;
            let rounding = if r.next_u64().is_multiple_of(3) {
                Rounding::Stochastic
            } else {
                Rounding::Nearest
            };
            let (parts, _) =
                Quantizer::new(p.qp_bits, n, rounding, 1 + (r.next_u64() % 65535) as u16)
                    .quantize_vector(&pr[b * n..(b + 1) * n]);
            let part: Part = parts.into_iter().next().unwrap();
            let words = pack(&part.codes, p.qp_bits);
            Beat {
                kind: Kind::Real,
                part,
                words,
                noisy: false,
                x16: Vec::new(),
            }
        } else {
            let k = draw(r);
            beat_of(r, &d, p.qp_bits, k)
        };
        pb.push(beat);
        vb.push(
            (0..p.head_dim)
                .map(|_| {
                    let k = draw(r);
                    beat_of(r, &d, p.kv_bits, k)
                })
                .collect(),
        );
    }
    let mut tail_p = Vec::new();
    let mut tail_v = Vec::new();
    let mut tail_kinds = Vec::new();
    for t in 0..tail {
        let kind = match r.next_u64() % 16 {
            0..=10 => TailKind::Prob,
            11..=14 => TailKind::Finite,
            _ if clean => TailKind::Finite,
            _ => TailKind::NonFinite,
        };
        let pt = match kind {
            TailKind::Prob => pr[closed * n + t],
            TailKind::Finite => match r.next_u64() % 4 {
                0 => [0x7BFF, 0xFBFF, 0x0001, 0x8000, 0x0000][(r.next_u64() % 5) as usize],
                _ => finite_fp16(r),
            },
            TailKind::NonFinite => [0x7C00, 0xFC00, 0x7E00, 0x3C00][(r.next_u64() % 4) as usize],
        };
        let vk = match kind {
            TailKind::NonFinite => VKind::NonFinite,
            _ if r.next_u64().is_multiple_of(3) => VKind::Synthetic,
            _ => VKind::Real,
        };
        let mut v = values(r, vk, p.head_dim);
        if kind == TailKind::Finite && r.next_u64().is_multiple_of(4) {
            v.iter_mut()
                .for_each(|x| *x = [0x7BFF, 0xFBFF, 0x0000, 0x8000][(r.next_u64() % 4) as usize]);
        }
        tail_p.push(pt);
        tail_v.push(v);
        tail_kinds.push(kind);
    }
    Query {
        p: pb,
        v: vb,
        tail_p,
        tail_v,
        tail_kinds,
        prob_p,
    }
}

pub fn case_of(p: &PvParams, queries: usize, seed: u64, stalls: [Stall; 5]) -> Case {
    let mut r = Xorshift::new(seed);
    let queries = (0..queries)
        .map(|_| {
            let closed = [0, 1, 1, 2, 3][(r.next_u64() % 5) as usize];
            let tail = match r.next_u64() % 4 {
                0 => 0,
                1 => p.partition - 1,
                _ => (r.next_u64() % p.partition as u64) as usize,
            };
            query_of(&mut r, p, closed, tail)
        })
        .collect();
    Case {
        queries,
        stalls,
        seed: r.next_u64(),
    }
}

pub fn case(p: PvParams, queries: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (
        queries,
        any::<u64>(),
        [
            stalls::stall(),
            stalls::stall(),
            stalls::stall(),
            stalls::stall(),
        ],
        prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()],
    )
        .prop_map(move |(n, seed, [a, b, c, d], o)| case_of(&p, n, seed, [a, b, c, d, o]))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Out {
    pub bits: u32,
    pub nonfinite: bool,
    pub last: bool,
}

/// The model's outputs of one query.
pub fn expected(p: &PvParams, q: &Query) -> Vec<Out> {
    let pp: Vec<Part> = q.p.iter().map(|b| b.part.clone()).collect();
    let vp: Vec<Vec<Part>> =
        q.v.iter()
            .map(|bs| bs.iter().map(|b| b.part.clone()).collect())
            .collect();
    let tv: Vec<&[u16]> = q.tail_v.iter().map(|v| &v[..]).collect();
    let r = pv_dot(p.head_dim, &pp, &vp, &q.tail_p, &tv);
    r.out
        .iter()
        .enumerate()
        .map(|(j, y)| Out {
            bits: y.to_bits(),
            nonfinite: r.nonfinite,
            last: j + 1 == p.head_dim,
        })
        .collect()
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub outs: usize,
    pub cycles: u64,
    pub len_blocked: u64,
    pub p_blocked: u64,
    pub v_blocked: u64,
    pub t_blocked: u64,
    pub out_held: u64,
    pub idle_in: u64,
    pub kinds: Vec<Kind>,
    pub tails: Vec<TailKind>,
    pub tail_lens: Vec<usize>,
    pub closed_zero: u64,
    pub empty: u64,
    pub prob_p: u64,
    pub noisy: u64,
    pub flagged: u64,
    pub negative: u64,
    pub zero: u64,
    pub v_b2b: u64,
    pub t_b2b: u64,
    pub first_latency: Option<u64>,
    pub v_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub cut_owed: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "len input blocked",
    "p input blocked",
    "v input blocked",
    "t input blocked",
    "output held (backpressure)",
    "idle input cycles",
    "partition: real values",
    "partition: synthetic values",
    "partition: zero range (step 0)",
    "partition: non-finite values (sanitised by the quantizer)",
    "partition: extreme codes",
    "partition: random metadata and sums",
    "partition: non-finite metadata",
    "P quantized from softmax probabilities",
    "noise in unused bits",
    "tail: softmax probability",
    "tail: any finite FP16",
    "tail: NaN or infinity",
    "tail length 0",
    "tail length partition - 1",
    "tail length in between",
    "query with no closed partition",
    "query with no token",
    "output flagged non-finite",
    "output not flagged",
    "output negative",
    "output zero",
    "V beats on consecutive cycles",
    "tail beats on consecutive cycles",
];

pub fn cover(cov: &Coverage, p: &PvParams, r: &Run) {
    cov.add("len input blocked", r.len_blocked);
    cov.add("p input blocked", r.p_blocked);
    cov.add("v input blocked", r.v_blocked);
    cov.add("t input blocked", r.t_blocked);
    cov.add("output held (backpressure)", r.out_held);
    cov.add("idle input cycles", r.idle_in);
    for &k in &r.kinds {
        cov.hit(kind_point(k));
    }
    cov.add("P quantized from softmax probabilities", r.prob_p);
    cov.add("noise in unused bits", r.noisy);
    for k in &r.tails {
        cov.hit(match k {
            TailKind::Prob => "tail: softmax probability",
            TailKind::Finite => "tail: any finite FP16",
            TailKind::NonFinite => "tail: NaN or infinity",
        });
    }
    for &n in &r.tail_lens {
        cov.hit(if n == 0 {
            "tail length 0"
        } else if n + 1 == p.partition {
            "tail length partition - 1"
        } else {
            "tail length in between"
        });
    }
    cov.add("query with no closed partition", r.closed_zero);
    cov.add("query with no token", r.empty);
    cov.add("output flagged non-finite", r.flagged);
    cov.add("output not flagged", r.outs as u64 - r.flagged);
    cov.add("output negative", r.negative);
    cov.add("output zero", r.zero);
    cov.add("V beats on consecutive cycles", r.v_b2b);
    cov.add("tail beats on consecutive cycles", r.t_b2b);
}

struct Ports {
    len_valid: PortId,
    len_ready: PortId,
    len_closed: PortId,
    len_tail: PortId,
    p_valid: PortId,
    p_ready: PortId,
    p_meta: PortId,
    p_words: PortId,
    p_sum: PortId,
    v_valid: PortId,
    v_ready: PortId,
    v_meta: PortId,
    v_words: PortId,
    v_sum: PortId,
    t_valid: PortId,
    t_ready: PortId,
    t_p: PortId,
    t_x: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_y: PortId,
    out_nonfinite: PortId,
    out_last: PortId,
}

/// One tail beat: the token's probability and `lanes` V values.
struct TBeat {
    p: u16,
    x: Vec<u16>,
}

pub fn run(m: &mut Model, p: &PvParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at model cycle `reset_at`: the outputs
/// before it must be a prefix of the expected ones.
pub fn run_until(m: &mut Model, p: &PvParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &PvParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let g = |n: &str| m.port(n);
    let io = Ports {
        len_valid: g("len_valid"),
        len_ready: g("len_ready"),
        len_closed: g("len_closed"),
        len_tail: g("len_tail"),
        p_valid: g("p_valid"),
        p_ready: g("p_ready"),
        p_meta: g("p_meta"),
        p_words: g("p_words"),
        p_sum: g("p_sum"),
        v_valid: g("v_valid"),
        v_ready: g("v_ready"),
        v_meta: g("v_meta"),
        v_words: g("v_words"),
        v_sum: g("v_sum"),
        t_valid: g("t_valid"),
        t_ready: g("t_ready"),
        t_p: g("t_p"),
        t_x: g("t_x"),
        out_valid: g("out_valid"),
        out_ready: g("out_ready"),
        out_y: g("out_y"),
        out_nonfinite: g("out_nonfinite"),
        out_last: g("out_last"),
    };
    let mut rng = Xorshift::new(c.seed ^ 0x5A);
    let mut run = Run::default();
    let d = p.dot();
    let mut lens = Vec::new();
    let mut ps = Vec::new();
    let mut vs = Vec::new();
    let mut ts = Vec::new();
    // per query: the input beats it is made of (its outputs are owed once they are all in)
    let mut beats_of = Vec::new();
    let mut want_of = Vec::new();
    for q in &c.queries {
        lens.push((q.p.len(), q.tail_p.len()));
        ps.extend(q.p.iter());
        vs.extend(q.v.iter().flatten());
        for (t, &pt) in q.tail_p.iter().enumerate() {
            for w in 0..p.rows() {
                ts.push(TBeat {
                    p: pt,
                    x: q.tail_v[t][w * p.lanes..(w + 1) * p.lanes].to_vec(),
                });
            }
        }
        beats_of.push(1 + q.p.len() * (1 + p.head_dim) + q.tail_p.len() * p.rows());
        want_of.push(expected(p, q));
    }
    let total: usize = want_of.iter().map(|w| w.len()).sum();
    let [ls, pst, vst, tst, ost] = &c.stalls;
    let mut lsrc: Source<(usize, usize)> = Source::new(lens, ls, c.seed ^ 1);
    let mut psrc: Source<&Beat> = Source::new(ps, pst, c.seed ^ 2);
    let mut vsrc: Source<&Beat> = Source::new(vs, vst, c.seed ^ 3);
    let mut tsrc: Source<TBeat> = Source::new(ts, tst, c.seed ^ 4);
    let mut sink: Sink<Out> = Sink::new(ost, c.seed ^ 5);
    let mut want: Vec<Out> = Vec::new();
    let (mut taken, mut queries_in) = (0usize, 0usize);
    let mut last_in: Option<u64> = None;
    let (mut last_v, mut last_t) = (None, None);
    let inputs: usize = beats_of.iter().sum();
    let timeout = 5000 + 40 * inputs as u64 + 60 * total as u64;
    let mut cyc = 0u64;
    loop {
        if reset_at == Some(cyc) {
            run.cut_owed = Some(want.len() - sink.beats.len());
            stream::compare(&sink.beats, &want, true, |i| {
                format!("output {i} before the reset")
            })?;
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if lsrc.is_empty()
            && psrc.is_empty()
            && vsrc.is_empty()
            && tsrc.is_empty()
            && sink.beats.len() == total
        {
            break;
        }
        if cyc > timeout {
            return Err(format!("timeout after {cyc} cycles: {} of {total} outputs, {taken} of {inputs} input beats", sink.beats.len()));
        }
        let lo = lsrc.offer().copied();
        m.set(io.len_valid, lo.is_some() as u64);
        match lo {
            Some((a, b)) => {
                m.set(io.len_closed, a as u64);
                m.set(io.len_tail, b as u64);
            }
            None => {
                let (wc, wt) = (
                    m.port_info(io.len_closed).width,
                    m.port_info(io.len_tail).width,
                );
                m.set(io.len_closed, rng.next_u64() & ((1 << wc) - 1));
                m.set(io.len_tail, rng.next_u64() & ((1 << wt) - 1));
            }
        }
        let po = psrc.offer().copied();
        m.set(io.p_valid, po.is_some() as u64);
        match po {
            Some(b) => set_beat(
                m,
                Some(io.p_meta),
                Some(io.p_words),
                Some(io.p_sum),
                None,
                b,
            ),
            None => set_noise(
                m,
                &mut rng,
                [Some(io.p_meta), Some(io.p_words), Some(io.p_sum), None],
                d.sum_bits(p.qp_bits),
            ),
        }
        let vo = vsrc.offer().copied();
        m.set(io.v_valid, vo.is_some() as u64);
        match vo {
            Some(b) => set_beat(
                m,
                Some(io.v_meta),
                Some(io.v_words),
                Some(io.v_sum),
                None,
                b,
            ),
            None => set_noise(
                m,
                &mut rng,
                [Some(io.v_meta), Some(io.v_words), Some(io.v_sum), None],
                d.sum_bits(p.kv_bits),
            ),
        }
        let to = tsrc.offer().map(|b| (b.p, b.x.clone()));
        m.set(io.t_valid, to.is_some() as u64);
        match &to {
            Some((pt, x)) => {
                m.set(io.t_p, *pt as u64);
                m.set_lanes(io.t_x, &x.iter().map(|&v| v as u64).collect::<Vec<_>>());
            }
            None => {
                m.set(io.t_p, rng.next_u64() & 0xFFFF);
                let x: Vec<u64> = (0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect();
                m.set_lanes(io.t_x, &x);
            }
        }
        let ready = sink.ready();
        let readies = [io.len_ready, io.p_ready, io.v_ready, io.t_ready];
        m.set(io.out_ready, !ready as u64);
        m.eval();
        let other: Vec<u64> = readies.iter().map(|&r| m.get(r)).collect();
        m.set(io.out_ready, ready as u64);
        m.eval();
        let now: Vec<u64> = readies.iter().map(|&r| m.get(r)).collect();
        if other != now {
            return Err(format!(
                "cycle {}: an input ready follows out_ready combinationally",
                m.cycle()
            ));
        }
        let [lr, pr, vr, tr] = [now[0] == 1, now[1] == 1, now[2] == 1, now[3] == 1];
        run.len_blocked += (lo.is_some() && !lr) as u64;
        run.p_blocked += (po.is_some() && !pr) as u64;
        run.v_blocked += (vo.is_some() && !vr) as u64;
        run.t_blocked += (to.is_some() && !tr) as u64;
        let any_taken = (lo.is_some() && lr)
            || (po.is_some() && pr)
            || (vo.is_some() && vr)
            || (to.is_some() && tr);
        run.idle_in += (!any_taken && taken < inputs) as u64;
        let valid = m.get(io.out_valid) == 1;
        run.out_held += (valid && !ready) as u64;
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || Out {
                bits: m.get(io.out_y) as u32,
                nonfinite: m.get(io.out_nonfinite) == 1,
                last: m.get(io.out_last) == 1,
            })?
            .cloned();
        if let Some(o) = took {
            let i = sink.beats.len() - 1;
            if i >= want.len() {
                return Err(format!(
                    "cycle {cycle}: output {i} before its query's last input beat was taken"
                ));
            }
            if o != want[i] {
                return Err(format!(
                    "cycle {cycle}: output {i} (channel {}): got {:#010x} ({}) nonfinite {} last {}\n expected {:#010x} ({}) nonfinite {} last {}",
                    i % p.head_dim,
                    o.bits,
                    f32::from_bits(o.bits),
                    o.nonfinite,
                    o.last,
                    want[i].bits,
                    f32::from_bits(want[i].bits),
                    want[i].nonfinite,
                    want[i].last
                ));
            }
            if i == 0 {
                run.first_latency = last_in.map(|t| cycle - t);
            }
            run.out_cycles.push(cycle);
            run.flagged += o.nonfinite as u64;
            run.negative += (o.bits >> 31) as u64;
            run.zero += (o.bits == 0) as u64;
        }
        let mut took_in = 0;
        if lo.is_some() && lr {
            let (a, b) = lsrc.take();
            run.tail_lens.push(b);
            run.closed_zero += (a == 0) as u64;
            run.empty += (a == 0 && b == 0) as u64;
            took_in += 1;
        }
        if po.is_some() && pr {
            let b = psrc.take();
            run.kinds.push(b.kind);
            run.noisy += b.noisy as u64;
            took_in += 1;
        }
        if vo.is_some() && vr {
            let b = vsrc.take();
            run.kinds.push(b.kind);
            run.noisy += b.noisy as u64;
            run.v_cycles.push(cycle);
            run.v_b2b += (last_v == Some(cycle.wrapping_sub(1))) as u64;
            last_v = Some(cycle);
            took_in += 1;
        }
        if to.is_some() && tr {
            tsrc.take();
            run.t_b2b += (last_t == Some(cycle.wrapping_sub(1))) as u64;
            last_t = Some(cycle);
            took_in += 1;
        }
        taken += took_in;
        // a query's outputs are owed once all its beats are in
        while queries_in < c.queries.len() && taken >= beats_of[..=queries_in].iter().sum::<usize>()
        {
            if queries_in == 0 {
                last_in = Some(cycle);
            }
            want.extend(want_of[queries_in].iter().cloned());
            queries_in += 1;
        }
        m.tick();
        cyc += 1;
    }
    for q in &c.queries {
        run.tails.extend(q.tail_kinds.iter().copied());
        run.prob_p += q.prob_p as u64;
    }
    run.outs = sink.beats.len();
    run.cycles = cyc;
    stream::compare(&sink.beats, &want, false, |i| format!("output {i}"))?;
    Ok(run)
}

/// The co-simulation tests of `hack-pv-dot` (tb/tests/hack_pv_dot.rs).
pub mod tests {
    use super::*;
    use crate::{models, prop, run_property, ModelInfo};

    const UNIT: &str = "hack-pv-dot";

    fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
        let p = params_of(&Model::new(info));
        let name = if info.gate_level {
            info.name.to_string()
        } else {
            format!("{}_rtl", info.name)
        };
        run_property(&name, info, case(p, 1..4), cases, |m, c| {
            let r = run(m, &p, c)?;
            cover(cov, &p, &r);
            Ok(())
        });
    }

    /// Every model, RTL or netlists, against the model.
    pub fn matches_model(gate_level: bool) {
        let (threads, cases) = if gate_level { (1, 12) } else { (3, 40) };
        let f = |info: &'static ModelInfo, cov: &Coverage| check(info, prop::cases(cases), cov);
        models::sweep_closed(UNIT, gate_level, threads, POINTS, POINTS, f);
    }

    pub const RESET_POINTS: &[&str] = &["reset with outputs owed", "reset with nothing owed"];

    /// A reset at a random cycle of a random case: the outputs before it are
    /// a prefix of the model's; afterwards a second case matches.
    pub fn reset_in_flight() {
        models::sweep_as_closed(
            UNIT,
            Some("reset in flight"),
            false,
            3,
            RESET_POINTS,
            RESET_POINTS,
            |info, cov| {
                let p = params_of(&Model::new(info));
                let strategy = (case(p, 1..3), any::<u64>(), 0u64..1000);
                run_property(
                    &format!("{}_reset", info.name),
                    info,
                    strategy,
                    prop::cases(16),
                    |m, (c, seed, at)| {
                        let beats: usize = c
                            .queries
                            .iter()
                            .map(|q| 1 + q.p.len() * (1 + p.head_dim) + q.tail_p.len() * p.rows())
                            .sum();
                        let r = run_until(
                            m,
                            &p,
                            c,
                            at * (beats as u64 + 2 * p.head_dim as u64 + 60) / 1000,
                        )?;
                        match r.cut_owed {
                            Some(n) => cov.hit(if n > 0 {
                                "reset with outputs owed"
                            } else {
                                "reset with nothing owed"
                            }),
                            None => m.reset(1),
                        }
                        let after = case_of(&p, 2, *seed, c.stalls.clone());
                        run(m, &p, &after)
                            .map(|_| ())
                            .map_err(|e| format!("after the reset: {e}"))
                    },
                );
            },
        );
    }

    /// Every open-partition length 0 .. Pi - 1 at every set, with and
    /// without closed blocks before it: each length counted, all required.
    pub fn every_tail_length() {
        let never = || Stall::Never;
        for info in models::of_unit_nonempty(UNIT, false) {
            let mut m = Model::new(info);
            m.reset(1);
            let p = params_of(&m);
            let mut r = Xorshift::new(77);
            let mut seen = vec![0u64; p.partition];
            for len in 0..p.partition {
                let closed = len % 2;
                let queries = vec![query_of(&mut r, &p, closed, len)];
                let stalls = [
                    never(),
                    never(),
                    never(),
                    Stall::Random { p: 40 },
                    Stall::Random { p: 40 },
                ];
                let c = Case {
                    queries,
                    stalls,
                    seed: len as u64,
                };
                let run = run(&mut m, &p, &c)
                    .unwrap_or_else(|e| panic!("{}: tail length {len}: {e}", info.name));
                for &n in &run.tail_lens {
                    seen[n] += 1;
                }
            }
            let missing: Vec<usize> = (0..p.partition).filter(|&n| seen[n] == 0).collect();
            println!(
                "{}: tail lengths 0..{} each run {:?} times",
                info.name,
                p.partition - 1,
                seen.iter().min()
            );
            assert!(
                missing.is_empty(),
                "{}: tail lengths never run: {missing:?}",
                info.name
            );
        }
    }

    /// With no stalls: V beats of a block on consecutive cycles (one P beat
    /// between blocks), tail beats on consecutive cycles, outputs on
    /// consecutive cycles, and the manifest's latency from a query's last
    /// input beat to its first output.
    pub fn full_rate_and_latency() {
        for info in models::of_unit_nonempty(UNIT, false) {
            let mut m = Model::new(info);
            m.reset(1);
            let p = params_of(&m);
            let mut r = Xorshift::new(5);
            let queries = vec![query_of(&mut r, &p, 4, p.partition - 1)];
            let never = || Stall::Never;
            let c = Case {
                queries,
                stalls: [never(), never(), never(), never(), never()],
                seed: 1,
            };
            let run = run(&mut m, &p, &c).unwrap();
            let lat = run.first_latency.unwrap();
            println!(
                "{}: {} V beats, {} outputs in {} cycles, latency {lat}",
                info.name,
                run.v_cycles.len(),
                run.outs,
                run.cycles
            );
            assert_eq!(
                lat,
                info.latency().expect("manifest latency"),
                "{}: manifest latency",
                info.name
            );
            for (b, blk) in run.v_cycles.chunks(p.head_dim).enumerate() {
                for (i, &t) in blk.iter().enumerate() {
                    assert_eq!(
                        t,
                        blk[0] + i as u64,
                        "{}: block {b}: V beat {i} not on consecutive cycles",
                        info.name
                    );
                }
            }
            for w in run.v_cycles.windows(2) {
                assert!(
                    w[1] - w[0] <= 2,
                    "{}: more than one cycle between blocks",
                    info.name
                );
            }
            let o0 = run.out_cycles[0];
            for (i, &t) in run.out_cycles.iter().enumerate() {
                assert_eq!(
                    t,
                    o0 + i as u64,
                    "{}: output {i} not on consecutive cycles",
                    info.name
                );
            }
            assert_eq!(
                run.t_b2b as usize,
                (p.partition - 1) * p.rows() - 1,
                "{}: tail beats",
                info.name
            );
        }
    }
}
