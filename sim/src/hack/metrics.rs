//! `kvsim hack`: HACK against exact attention and against the
//! dequantize-first FP16 baseline on a KV set (docs/spec.md §15.13).

use super::attention::{baseline_step, bound_ratios, exact_step, hack_step, SeqCache, Step};
use super::params::{HackParams, Rounding};
use super::quantizer::Quantizer;
use crate::attention::{positions, queries, sequences, Sequence};
use crate::fp16;
use crate::kvset::{At, KvSet};
use crate::oaken::thresholds::Kv;
use serde::{Deserialize, Serialize};

pub use crate::attention::{draw_q, QSet, SplitMix, QUERY_STRIDE};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PiRow {
    pub partition: usize,
    /// Set when the partition is illegal for this head_dim (spec §15.1).
    pub error: Option<String>,
    pub queries: u64,
    pub scores: u64,
    /// SQNR (dB) of the scores: HACK vs exact, baseline vs exact, HACK vs baseline.
    pub score_hack_exact_db: Option<f64>,
    pub score_base_exact_db: Option<f64>,
    pub score_hack_base_db: Option<f64>,
    /// The same for the output vectors.
    pub out_hack_exact_db: Option<f64>,
    pub out_base_exact_db: Option<f64>,
    pub out_hack_base_db: Option<f64>,
    /// Scores with Eq. 4 in binary32 / FP16 against the exact combine (dB).
    pub combine_f32_db: Option<f64>,
    pub combine_f16_db: Option<f64>,
    pub combine_f16_nonfinite: u64,
    /// Memory bits per K or closed-V element, with and without code sums.
    pub bits_with_sums: f64,
    pub bits_without_sums: f64,
    /// Over every K and V element, the open V partition at 16 bits.
    pub bits_with_tail: f64,
    pub max_score_bound_ratio: f64,
    pub max_out_bound_ratio: f64,
    pub nonfinite_sequences: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HackReport {
    pub head_dim: usize,
    pub kv_heads: usize,
    pub tokens: usize,
    pub sequences: u64,
    pub q_source: String,
    pub rounding: Rounding,
    pub rows: Vec<PiRow>,
}

fn sqnr(s: f64, n: f64) -> Option<f64> {
    (n > 0.0 && s > 0.0).then(|| 10.0 * (s / n).log10())
}

#[derive(Default)]
struct Acc {
    sig: f64,
    hack: f64,
    base: f64,
    hb: f64,
}

impl Acc {
    fn add(&mut self, exact: &[f64], hack: &[f64], base: &[f64]) {
        for ((&e, &h), &b) in exact.iter().zip(hack).zip(base) {
            self.sig += e * e;
            self.hack += (h - e) * (h - e);
            self.base += (b - e) * (b - e);
            self.hb += (h - b) * (h - b);
        }
    }
}

/// Runs every legal partition of `partitions` over the set (spec §15.13).
pub fn measure(set: &KvSet, head_dim: usize, q: Option<&QSet>, partitions: &[usize], base: &HackParams, queries: usize) -> Result<HackReport, String> {
    measure_with(set, head_dim, q, partitions, base, queries, &mut |_, _| {}, &mut |_, _, _, _| {})
}

/// `measure`, also handing every stored K and closed-V element, as the
/// dequantize-first datapath reads it (`RNE16(min + q step)`), to
/// `element`, and every query's exact and HACK attention to `query`
/// (sequence, position): what `kvsim compare` measures (spec §16).
#[allow(clippy::too_many_arguments)]
pub fn measure_with(
    set: &KvSet,
    head_dim: usize,
    q: Option<&QSet>,
    partitions: &[usize],
    base: &HackParams,
    queries_per_seq: usize,
    element: &mut dyn FnMut(At, f64),
    query: &mut dyn FnMut(Sequence, usize, &Step, &Step),
) -> Result<HackReport, String> {
    if head_dim == 0 || !set.head_dim.is_multiple_of(head_dim) {
        return Err(format!("head-dim ({head_dim}) must divide the set's row length ({})", set.head_dim));
    }
    let kv_heads = set.head_dim / head_dim;
    let t_len = set.tokens;
    let positions = positions(t_len, queries_per_seq);
    let mut rows = Vec::new();
    let mut n_seq = 0;
    for &pi in partitions {
        let p = HackParams { head_dim, partition: pi, lanes: 16.min(pi), ..base.clone() };
        let mut row = PiRow { partition: pi, ..Default::default() };
        if let Err(e) = p.validate() {
            row.error = Some(e.0);
            rows.push(row);
            continue;
        }
        let (mut sc, mut out) = (Acc::default(), Acc::default());
        let (mut c32, mut c16) = (0f64, 0f64);
        n_seq = 0;
        for s in sequences(set, head_dim) {
            let (ks, vs) = (set.sample(s.run, s.layer, Kv::K), set.sample(s.run, s.layer, Kv::V));
            let o = |t: usize| t * set.head_dim + s.head * head_dim;
            let k: Vec<&[u16]> = (0..t_len).map(|t| &ks[o(t)..o(t) + head_dim]).collect();
            let v: Vec<&[u16]> = (0..t_len).map(|t| &vs[o(t)..o(t) + head_dim]).collect();
            let qs = queries(q, s, kv_heads, head_dim, &k, &positions);
            let cache = SeqCache::new(&p, k, v);
            let closed = t_len / pi * pi;
            for (kv, rows_deq, n) in [(Kv::K, &cache.k_deq, t_len), (Kv::V, &cache.v_deq, closed)] {
                for (t, r) in rows_deq[..n].iter().enumerate() {
                    for (j, &x) in r.iter().enumerate() {
                        element(At { run: s.run, layer: s.layer, kv, token: t, channel: s.head * head_dim + j }, fp16::to_f64(x));
                    }
                }
            }
            let mut qq = Quantizer::new(p.qp_bits, p.partition, p.rounding, p.seed);
            let mut pq = Quantizer::new(p.qp_bits, p.partition, p.rounding, p.seed);
            let mut nonfinite = cache.nonfinite_k || cache.nonfinite_v;
            for (t, qv_all) in &qs {
                for qv in qv_all {
                    let ctx = t + 1;
                    let hs = hack_step(&p, &cache, qv, ctx, &mut qq, &mut pq);
                    let b = baseline_step(&p, &cache, qv, ctx);
                    let e = exact_step(&cache, qv, ctx);
                    query(s, *t, &e, &hs.step);
                    sc.add(&e.scores, &hs.step.scores, &b.scores);
                    out.add(&e.out, &hs.step.out, &b.out);
                    for i in 0..ctx {
                        c32 += (hs.scores_f32[i] - hs.step.scores[i]).powi(2);
                        if hs.scores_f16[i].is_finite() {
                            c16 += (hs.scores_f16[i] - hs.step.scores[i]).powi(2);
                        } else {
                            row.combine_f16_nonfinite += 1;
                        }
                    }
                    let (rs, ro) = bound_ratios(&p, &cache, qv, ctx, &hs);
                    row.max_score_bound_ratio = row.max_score_bound_ratio.max(rs);
                    row.max_out_bound_ratio = row.max_out_bound_ratio.max(ro);
                    nonfinite |= hs.nonfinite;
                    row.queries += 1;
                    row.scores += ctx as u64;
                }
            }
            row.nonfinite_sequences += nonfinite as u64;
            n_seq += 1;
        }
        row.score_hack_exact_db = sqnr(sc.sig, sc.hack);
        row.score_base_exact_db = sqnr(sc.sig, sc.base);
        row.score_hack_base_db = sqnr(sc.sig, sc.hb);
        row.out_hack_exact_db = sqnr(out.sig, out.hack);
        row.out_base_exact_db = sqnr(out.sig, out.base);
        row.out_hack_base_db = sqnr(out.sig, out.hb);
        row.combine_f32_db = sqnr(sc.sig, c32);
        row.combine_f16_db = sqnr(sc.sig, c16);
        row.bits_with_sums = p.bits_per_element(true);
        row.bits_without_sums = p.bits_per_element(false);
        let closed = (t_len / pi * pi) as f64;
        let tail = (t_len % pi) as f64;
        row.bits_with_tail = (t_len as f64 * row.bits_with_sums + closed * row.bits_with_sums + tail * 16.0) / (2.0 * t_len as f64);
        rows.push(row);
    }
    Ok(HackReport {
        head_dim,
        kv_heads,
        tokens: t_len,
        sequences: n_seq,
        q_source: match q {
            None => "drawn (spec §15.13)".into(),
            Some(s) => format!("file, {} query heads", s.q_heads),
        },
        rounding: base.rounding,
        rows,
    })
}

fn db(x: Option<f64>) -> String {
    x.map_or("exact".into(), |v| format!("{v:.2} dB"))
}

impl HackReport {
    pub fn summary(&self) -> String {
        let mut s = format!(
            "HACK: head_dim {}, {} KV heads, {} tokens, {} sequences, Q {}, rounding {}; queries every {} tokens back from the last\n",
            self.head_dim, self.kv_heads, self.tokens, self.sequences, self.q_source, self.rounding, QUERY_STRIDE
        );
        for r in &self.rows {
            if let Some(e) = &r.error {
                s += &format!("  Pi = {}: not run: {e}\n", r.partition);
                continue;
            }
            s += &format!("  Pi = {} ({} queries, {} scores):\n", r.partition, r.queries, r.scores);
            s += &format!(
                "    score SQNR: HACK vs exact {}, dequantize-first vs exact {}, HACK vs dequantize-first {}\n",
                db(r.score_hack_exact_db), db(r.score_base_exact_db), db(r.score_hack_base_db)
            );
            s += &format!(
                "    output SQNR: HACK vs exact {}, dequantize-first vs exact {}, HACK vs dequantize-first {}\n",
                db(r.out_hack_exact_db), db(r.out_base_exact_db), db(r.out_hack_base_db)
            );
            s += &format!(
                "    Eq. 4 combine against exact: binary32 {}, FP16 {} ({} non-finite scores)\n",
                db(r.combine_f32_db), db(r.combine_f16_db), r.combine_f16_nonfinite
            );
            s += &format!(
                "    bits per K / closed-V element: {:.4} with code sums, {:.4} without ({:.1}% / {:.1}% of FP16; paper §7.2: about 15%); with the open V partition in FP16: {:.4}\n",
                r.bits_with_sums, r.bits_without_sums, 100.0 * r.bits_with_sums / 16.0, 100.0 * r.bits_without_sums / 16.0, r.bits_with_tail
            );
            s += &format!(
                "    largest error / bound (spec §15.11, at most 1): scores {:.4}, outputs {:.4}; sequences with a non-finite input: {}\n",
                r.max_score_bound_ratio, r.max_out_bound_ratio, r.nonfinite_sequences
            );
        }
        s
    }
}
