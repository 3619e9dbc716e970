//! `kvsim hack`: HACK against exact attention and against the
//! dequantize-first FP16 baseline on a KV set (docs/spec.md §15.13).

use super::attention::{baseline_step, bound_ratios, exact_step, hack_step, SeqCache};
use super::params::{HackParams, Rounding};
use super::quantizer::Quantizer;
use crate::fp16;
use crate::kvset::KvSet;
use crate::oaken::thresholds::Kv;
use serde::{Deserialize, Serialize};

/// Distance between two query positions: coprime with every partition, so
/// the open V partition takes many lengths.
pub const QUERY_STRIDE: usize = 37;

/// A Q set: shape `(runs, layers, 1, tokens, q_heads * head_dim)`.
pub struct QSet {
    pub q_heads: usize,
    pub shape: Vec<usize>,
    pub data: Vec<u16>,
}

impl QSet {
    pub fn from_array(a: crate::npy::NpyArray, set: &KvSet, head_dim: usize) -> Result<QSet, String> {
        let kv_heads = set.head_dim / head_dim;
        match a.shape[..] {
            [r, l, 1, t, d] if r == set.runs && l == set.layers && t == set.tokens && d % head_dim == 0 && (d / head_dim).is_multiple_of(kv_heads) => {
                Ok(QSet { q_heads: d / head_dim, shape: a.shape.clone(), data: a.data })
            }
            _ => Err(format!(
                "Q set must have shape ({}, {}, 1, {}, q_heads x {head_dim}) with q_heads a multiple of {kv_heads}, got {:?}",
                set.runs, set.layers, set.tokens, a.shape
            )),
        }
    }

    fn row(&self, run: usize, layer: usize, t: usize, head: usize, head_dim: usize) -> &[u16] {
        let d = self.shape[4];
        let start = ((run * self.shape[1] + layer) * self.shape[3] + t) * d + head * head_dim;
        &self.data[start..start + head_dim]
    }
}

/// splitmix64, for drawing Q reproducibly (spec §15.13).
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1) with 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// A drawn query for one sequence: `q_c = RNE16(sigma_c z)`, `sigma_c` the
/// RMS of K channel `c` over the sequence, `z = (u1 + u2 + u3 + u4 - 2) sqrt 3`.
pub fn draw_q(rng: &mut SplitMix, sigma: &[f64]) -> Vec<u16> {
    sigma
        .iter()
        .map(|&s| {
            let z = (rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - 2.0) * 3f64.sqrt();
            fp16::from_f32((s * z) as f32)
        })
        .collect()
}

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
    if head_dim == 0 || !set.head_dim.is_multiple_of(head_dim) {
        return Err(format!("head-dim ({head_dim}) must divide the set's row length ({})", set.head_dim));
    }
    let kv_heads = set.head_dim / head_dim;
    let t_len = set.tokens;
    let positions: Vec<usize> = (0..queries).map(|i| i * QUERY_STRIDE).take_while(|&d| d < t_len).map(|d| t_len - 1 - d).collect();
    let mut rows = Vec::new();
    let mut sequences = 0;
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
        sequences = 0;
        let mut seq_index = 0u64;
        for run in 0..set.runs {
            for layer in 0..set.layers {
                let ks = set.sample(run, layer, Kv::K);
                let vs = set.sample(run, layer, Kv::V);
                for h in 0..kv_heads {
                    seq_index += 1;
                    let o = |t: usize| t * set.head_dim + h * head_dim;
                    let k: Vec<&[u16]> = (0..t_len).map(|t| &ks[o(t)..o(t) + head_dim]).collect();
                    let v: Vec<&[u16]> = (0..t_len).map(|t| &vs[o(t)..o(t) + head_dim]).collect();
                    let cache = SeqCache::new(&p, k, v);
                    let mut qq = Quantizer::new(p.qp_bits, p.partition, p.rounding, p.seed);
                    let mut pq = Quantizer::new(p.qp_bits, p.partition, p.rounding, p.seed);
                    let sigma: Vec<f64> = (0..head_dim)
                        .map(|c| (cache.k.iter().map(|t| super::reference::val(t[c]).powi(2)).sum::<f64>() / t_len as f64).sqrt())
                        .collect();
                    let mut rng = SplitMix(seq_index);
                    let mut nonfinite = cache.nonfinite_k || cache.nonfinite_v;
                    for &t in &positions {
                        let qs: Vec<Vec<u16>> = match q {
                            None => vec![draw_q(&mut rng, &sigma)],
                            Some(qset) => {
                                let g = qset.q_heads / kv_heads;
                                (h * g..(h + 1) * g).map(|qh| qset.row(run, layer, t, qh, head_dim).to_vec()).collect()
                            }
                        };
                        for qv in &qs {
                            let ctx = t + 1;
                            let hs = hack_step(&p, &cache, qv, ctx, &mut qq, &mut pq);
                            let b = baseline_step(&p, &cache, qv, ctx);
                            let e = exact_step(&p, &cache, qv, ctx);
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
                    sequences += 1;
                }
            }
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
        sequences,
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
