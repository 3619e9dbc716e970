//! The decode-step queries and the f64 attention that `kvsim hack` (spec
//! §15.13) and `kvsim compare` (§16) measure every scheme with: where the
//! queries sit, their Q (recorded, or drawn reproducibly), and attention on
//! given K and V.

use crate::fp16;
use crate::kvset::KvSet;

/// Distance between two query positions: coprime with every partition and
/// block size, so the full-precision tails take many lengths.
pub const QUERY_STRIDE: usize = 37;

/// A Q set: shape `(runs, layers, 1, tokens, q_heads * head_dim)` (§12.2).
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

    pub fn read(path: &std::path::Path, set: &KvSet, head_dim: usize) -> Result<QSet, String> {
        let arr = crate::npy::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        QSet::from_array(arr, set, head_dim).map_err(|e| format!("{}: {e}", path.display()))
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

/// Sanitised FP16 as f64 (spec §2.2.1).
pub fn val(x: u16) -> f64 {
    fp16::to_f64(fp16::sanitize(x).0)
}

/// Query positions `T - 1 - 37 i`, `i = 0 .. queries - 1`, while `>= 0`.
pub fn positions(tokens: usize, queries: usize) -> Vec<usize> {
    (0..queries).map(|i| i * QUERY_STRIDE).take_while(|&d| d < tokens).map(|d| tokens - 1 - d).collect()
}

/// One KV head's sequence of a set: `(run, layer, head)`, numbered from 1
/// in that order (`seq`), which seeds its drawn Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sequence {
    pub run: usize,
    pub layer: usize,
    pub head: usize,
    pub seq: u64,
}

/// Every KV head of every (run, layer), in order.
pub fn sequences(set: &KvSet, head_dim: usize) -> Vec<Sequence> {
    let heads = set.head_dim / head_dim;
    let mut out = Vec::new();
    for run in 0..set.runs {
        for layer in 0..set.layers {
            for head in 0..heads {
                out.push(Sequence { run, layer, head, seq: out.len() as u64 + 1 });
            }
        }
    }
    out
}

/// The queries of one sequence, per position of `positions`: every query
/// head of the KV head's group from `q`, or one query drawn from a
/// splitmix64 stream seeded with the sequence number (spec §15.13), `k`
/// being the sequence's K rows (which set the drawn channel scales).
pub fn queries(q: Option<&QSet>, s: Sequence, kv_heads: usize, head_dim: usize, k: &[&[u16]], positions: &[usize]) -> Vec<(usize, Vec<Vec<u16>>)> {
    let sigma: Vec<f64> = match q {
        Some(_) => vec![],
        None => (0..head_dim).map(|c| (k.iter().map(|t| val(t[c]).powi(2)).sum::<f64>() / k.len() as f64).sqrt()).collect(),
    };
    let mut rng = SplitMix(s.seq);
    positions
        .iter()
        .map(|&t| {
            let qs = match q {
                None => vec![draw_q(&mut rng, &sigma)],
                Some(qset) => {
                    let g = qset.q_heads / kv_heads;
                    (s.head * g..(s.head + 1) * g).map(|qh| qset.row(s.run, s.layer, t, qh, head_dim).to_vec()).collect()
                }
            };
            (t, qs)
        })
        .collect()
}

/// Scores (unscaled `q . k`) and the output vector of one query.
#[derive(Clone, Debug, Default)]
pub struct Step {
    pub scores: Vec<f64>,
    pub out: Vec<f64>,
}

/// Softmax in f64.
pub fn softmax_f64(scores: &[f64], scale: f64) -> Vec<f64> {
    let max = scores.iter().map(|&s| s * scale).fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|&s| (s * scale - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|&v| v / sum).collect()
}

/// Attention in f64 over the rows `k[t]`, `v[t]`: scores `q . k_t`,
/// output `softmax(scores / sqrt(head_dim)) . V`.
pub fn attend(q: &[f64], k: &[&[f64]], v: &[&[f64]]) -> Step {
    let d = q.len();
    let scores: Vec<f64> = k.iter().map(|kt| kt.iter().zip(q).map(|(&x, &y)| x * y).sum()).collect();
    let probs = softmax_f64(&scores, 1.0 / (d as f64).sqrt());
    let out = (0..d).map(|j| probs.iter().zip(v).map(|(&p, vt)| p * vt[j]).sum()).collect();
    Step { scores, out }
}

/// Index of the largest score, the first on a tie.
pub fn top1(scores: &[f64]) -> usize {
    let mut best = 0;
    for (i, &s) in scores.iter().enumerate() {
        if s > scores[best] {
            best = i;
        }
    }
    best
}
