//! `kvsim kivi`: KIVI on a KV set (docs/spec.md §13.11). Every sequence
//! goes through the reference cache model (§13.7); every quantized group
//! is decoded from its packed words by the dequantizer model (§13.6) and
//! also run through the replica of the authors' FP16 chain (§13.10).

use super::authors::{authors_decode, authors_group};
use super::cache::KiviCache;
use super::dequantizer::{bound_x2, dequantize_group};
use super::params::{KiviCacheParams, META_BITS};
use super::quantizer::QuantGroup;
use crate::fp16;
use crate::kvset::{At, KvSet};
use crate::oaken::thresholds::Kv;
use serde::{Deserialize, Serialize};

const UNIT: f64 = 16_777_216.0;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KvPart {
    /// Elements quantized (codes) and kept in full precision (residual).
    pub quantized_elements: u64,
    pub residual_elements: u64,
    pub groups: u64,
    /// Bits in memory of the quantized elements (packed words and
    /// metadata words) per quantized element.
    pub bits_per_element: f64,
    /// The same, codes only.
    pub code_bits_per_element: f64,
    /// Over the quantized elements; null when exact.
    pub sqnr_db: Option<f64>,
    /// The authors' chain (FP16 codes, float32 decode) on the same groups.
    pub authors_sqnr_db: Option<f64>,
    /// The authors' codes and metadata through our decoder (RNE to FP16).
    pub authors_codes_our_decoder_sqnr_db: Option<f64>,
    /// The SQNR that the §13.9 bound guarantees from the groups' ranges
    /// alone (§13.11): a floor every correct model meets.
    pub sqnr_floor_db: Option<f64>,
    /// Fraction of quantized elements whose code differs from the authors'.
    pub codes_differ: f64,
    /// Fraction of groups whose scale differs from the authors'.
    pub scale_differs: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KiviReport {
    pub head_dim: usize,
    pub heads: usize,
    pub group: usize,
    pub bits_k: u32,
    pub bits_v: u32,
    pub residual: usize,
    /// Sequences (run, layer, vector of the row) and tokens per sequence.
    pub sequences: u64,
    pub tokens: usize,
    pub elements: u64,
    pub quantized_elements: u64,
    /// Codes and metadata over the quantized elements.
    pub bits_per_element: f64,
    /// Every element, the residual counted at 16 bits.
    pub bits_per_element_with_residual: f64,
    /// Over the quantized elements, K and V.
    pub sqnr_db: Option<f64>,
    /// Over every element, the residual exact.
    pub sqnr_with_residual_db: Option<f64>,
    pub authors_sqnr_db: Option<f64>,
    pub authors_codes_our_decoder_sqnr_db: Option<f64>,
    pub sqnr_floor_db: Option<f64>,
    pub codes_differ: f64,
    pub k: KvPart,
    pub v: KvPart,
    /// max over quantized elements of |err| / (step/2 + ulp(|out|)/2).
    pub max_bound_ratio: f64,
    /// Quantized tokens (V) or blocks (K) with a NaN or infinity.
    pub nonfinite: u64,
    /// Elements the authors' chain decodes to NaN (FP16 range overflow).
    pub authors_nan: u64,
}

#[derive(Default)]
struct Acc {
    quantized: u64,
    residual: u64,
    groups: u64,
    bits: u64,
    code_bits: u64,
    sig: f64,
    sig_residual: f64,
    noise: f64,
    noise_auth: f64,
    noise_auth_rne: f64,
    noise_floor: f64,
    codes_differ: u64,
    scale_differs: u64,
    nan: u64,
}

fn sqnr(signal: f64, noise: f64) -> Option<f64> {
    (noise > 0.0 && signal > 0.0).then(|| 10.0 * (signal / noise).log10())
}

impl Acc {
    fn part(&self) -> KvPart {
        let per = |v: u64| if self.quantized == 0 { 0.0 } else { v as f64 / self.quantized as f64 };
        KvPart {
            quantized_elements: self.quantized,
            residual_elements: self.residual,
            groups: self.groups,
            bits_per_element: per(self.bits),
            code_bits_per_element: per(self.code_bits),
            sqnr_db: sqnr(self.sig, self.noise),
            authors_sqnr_db: sqnr(self.sig, self.noise_auth),
            authors_codes_our_decoder_sqnr_db: sqnr(self.sig, self.noise_auth_rne),
            sqnr_floor_db: sqnr(self.sig, self.noise_floor),
            codes_differ: per(self.codes_differ),
            scale_differs: if self.groups == 0 { 0.0 } else { self.scale_differs as f64 / self.groups as f64 },
        }
    }

    /// One quantized group: `x` the inputs, `q` what the quantizer made.
    /// `out(j, value)` receives the decoded element `j`.
    fn group(&mut self, bits: u32, x: &[u16], q: &QuantGroup, max_ratio: &mut f64, out_to: &mut dyn FnMut(usize, f64)) {
        let words = q.words(bits);
        let out = dequantize_group(bits, &words, q.meta, x.len());
        let xs: Vec<u16> = x.iter().map(|&e| fp16::sanitize(e).0).collect();
        let a = authors_group(bits, &xs);
        let step = fp16::to_units(q.meta.scale);
        self.groups += 1;
        self.bits += (32 * words.len() + META_BITS) as u64;
        self.code_bits += (32 * words.len()) as u64;
        self.scale_differs += (a.scale != q.meta.scale) as u64;
        // a priori: s = RU(ceil(D / k)) <= (D / k + 1)(1 + 2^-10), and the
        // output lies within M + k s of zero, M the group's largest magnitude
        let us: Vec<i64> = xs.iter().map(|&e| fp16::to_units(e)).collect();
        let (lo, hi) = (*us.iter().min().unwrap(), *us.iter().max().unwrap());
        let k = ((1u64 << bits) - 1) as f64;
        let s_bar = ((hi - lo) as f64 / k + 1.0) * (1.0 + 1.0 / 1024.0);
        let m = lo.abs().max(hi.abs()) as f64;
        let ulp_bar = fp16::grid_ulp((2.0 * (m + k * s_bar)).ceil() as u64) as f64;
        let b_i = (s_bar + ulp_bar) / 2.0 / UNIT;
        self.noise_floor += b_i * b_i * x.len() as f64;
        for (j, &xi) in xs.iter().enumerate() {
            let xu = fp16::to_units(xi);
            let ou = fp16::to_units(out[j]);
            out_to(j, fp16::to_f64(out[j]));
            let err = (ou - xu).abs();
            *max_ratio = max_ratio.max((2 * err) as f64 / bound_x2(step, ou) as f64);
            let xf = xu as f64 / UNIT;
            self.sig += xf * xf;
            self.noise += (err as f64 / UNIT).powi(2);
            self.codes_differ += (a.codes[j] != q.codes[j] as i32) as u64;
            let ad = authors_decode(a.scale, a.min, a.codes[j]);
            if ad.is_nan() {
                self.nan += 1;
            } else {
                self.noise_auth += (ad - xf).powi(2);
            }
            if fp16::is_finite(a.scale) {
                let r = fp16::to_units(a.min) + a.codes[j] as i64 * fp16::to_units(a.scale);
                self.noise_auth_rne += (fp16::to_f64(fp16::round_nearest_even(r)) - xf).powi(2);
            }
        }
        self.quantized += x.len() as u64;
    }

    fn residual_tokens(&mut self, tokens: &[Vec<u16>]) {
        for t in tokens {
            for &e in t {
                let xf = fp16::to_f64(fp16::sanitize(e).0);
                self.sig_residual += xf * xf;
            }
            self.residual += t.len() as u64;
        }
    }
}

/// Each (run, layer, K/V) sample's rows are cut into vectors of
/// `heads * head_dim` elements; vector `j` of every row forms one sequence
/// of `tokens` tokens, prefilled at once into a reference cache (the state
/// equals that of any prefill/decode split, §13.7).
pub fn measure(set: &KvSet, p: &KiviCacheParams) -> Result<KiviReport, String> {
    measure_with(set, p, &mut |_, _| {})
}

/// `measure`, also handing every quantized element, decoded, to `sink`
/// (spec §16); the residual is not handed over.
pub fn measure_with(set: &KvSet, p: &KiviCacheParams, sink: &mut dyn FnMut(At, f64)) -> Result<KiviReport, String> {
    p.validate().map_err(|e| e.to_string())?;
    let n = p.vector_len();
    if set.head_dim % n != 0 {
        return Err(format!(
            "the KV set's rows have {} elements, not a multiple of heads x head-dim = {} x {} = {n}",
            set.head_dim, p.heads, p.head_dim
        ));
    }
    let per_row = set.head_dim / n;
    let g = p.group;
    let (mut k, mut v) = (Acc::default(), Acc::default());
    let mut max_ratio = 0.0f64;
    let (mut nonfinite, mut sequences) = (0u64, 0u64);
    for run in 0..set.runs {
        for layer in 0..set.layers {
            let ks = set.sample(run, layer, Kv::K);
            let vs = set.sample(run, layer, Kv::V);
            for j in 0..per_row {
                let rows = |s: &'_ [u16]| -> Vec<Vec<u16>> {
                    s.chunks_exact(set.head_dim).map(|r| r[j * n..(j + 1) * n].to_vec()).collect()
                };
                let (kt, vt) = (rows(ks), rows(vs));
                let mut c = KiviCache::new(p).map_err(|e| e.to_string())?;
                let kr: Vec<&[u16]> = kt.iter().map(|t| &t[..]).collect();
                let vr: Vec<&[u16]> = vt.iter().map(|t| &t[..]).collect();
                c.prefill(&kr, &vr);
                sequences += 1;
                for (b, blk) in c.k_blocks.iter().enumerate() {
                    nonfinite += blk.nonfinite as u64;
                    for (ch, grp) in blk.groups.iter().enumerate() {
                        let x: Vec<u16> = (0..g).map(|t| kt[b * g + t][ch]).collect();
                        let at = |t: usize| At { run, layer, kv: Kv::K, token: b * g + t, channel: j * n + ch };
                        k.group(p.bits_k, &x, grp, &mut max_ratio, &mut |t, y| sink(at(t), y));
                    }
                }
                k.residual_tokens(&c.k_residual);
                for (t, tok) in c.v_quant.iter().enumerate() {
                    nonfinite += tok.nonfinite as u64;
                    for (gi, grp) in tok.groups.iter().enumerate() {
                        let at = |c: usize| At { run, layer, kv: Kv::V, token: t, channel: j * n + gi * g + c };
                        v.group(p.bits_v, &vt[t][gi * g..(gi + 1) * g], grp, &mut max_ratio, &mut |c, y| sink(at(c), y));
                    }
                }
                v.residual_tokens(&c.v_window.iter().cloned().collect::<Vec<_>>());
            }
        }
    }
    let q = k.quantized + v.quantized;
    let all = q + k.residual + v.residual;
    let per = |x: u64, d: u64| if d == 0 { 0.0 } else { x as f64 / d as f64 };
    Ok(KiviReport {
        head_dim: p.head_dim,
        heads: p.heads,
        group: p.group,
        bits_k: p.bits_k,
        bits_v: p.bits_v,
        residual: p.residual,
        sequences,
        tokens: set.tokens,
        elements: all,
        quantized_elements: q,
        bits_per_element: per(k.bits + v.bits, q),
        bits_per_element_with_residual: per(k.bits + v.bits + 16 * (k.residual + v.residual), all),
        sqnr_db: sqnr(k.sig + v.sig, k.noise + v.noise),
        sqnr_with_residual_db: sqnr(k.sig + v.sig + k.sig_residual + v.sig_residual, k.noise + v.noise),
        authors_sqnr_db: sqnr(k.sig + v.sig, k.noise_auth + v.noise_auth),
        authors_codes_our_decoder_sqnr_db: sqnr(k.sig + v.sig, k.noise_auth_rne + v.noise_auth_rne),
        sqnr_floor_db: sqnr(k.sig + v.sig, k.noise_floor + v.noise_floor),
        codes_differ: per(k.codes_differ + v.codes_differ, q),
        k: k.part(),
        v: v.part(),
        max_bound_ratio: max_ratio,
        nonfinite,
        authors_nan: k.nan + v.nan,
    })
}

fn db(v: Option<f64>) -> String {
    v.map_or("inf (exact)".into(), |d| format!("{d:.2} dB"))
}

impl KiviReport {
    /// Human-readable summary, one fact per line.
    pub fn summary(&self) -> String {
        let pct = |x: f64| format!("{:.3}%", 100.0 * x);
        let delta = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:+.3} dB", a - b),
            _ => "n/a".into(),
        };
        format!(
            "KIVI: group {}, bits K {} / V {}, residual {}; {} sequences x {} tokens, heads {} x head_dim {}\n\
             quantized elements: {} of {} (K {}, V {}; residual in FP16: K {}, V {})\n\
             bits/element, quantized (codes + metadata): {:.4} (K {:.4}, V {:.4}; codes only K {:.4}, V {:.4})\n\
             bits/element, with the residual at 16 bits: {:.4}\n\
             SQNR, quantized elements: {} (K {}, V {})\n\
             SQNR, every element (residual exact): {}\n\
             SQNR floor from the error bound and the groups' ranges: {} (K {}, V {})\n\
             authors' FP16 chain: SQNR {} (K {}, V {}); ours minus theirs {}\n\
             authors' codes through our decoder: SQNR {}\n\
             codes differing from the authors': {} (K {}, V {}); scales differing: K {}, V {}\n\
             max error / bound: {:.4}\n\
             blocks/tokens with NaN/Inf: {}; authors' NaN outputs: {}\n",
            self.group,
            self.bits_k,
            self.bits_v,
            self.residual,
            self.sequences,
            self.tokens,
            self.heads,
            self.head_dim,
            self.quantized_elements,
            self.elements,
            self.k.quantized_elements,
            self.v.quantized_elements,
            self.k.residual_elements,
            self.v.residual_elements,
            self.bits_per_element,
            self.k.bits_per_element,
            self.v.bits_per_element,
            self.k.code_bits_per_element,
            self.v.code_bits_per_element,
            self.bits_per_element_with_residual,
            db(self.sqnr_db),
            db(self.k.sqnr_db),
            db(self.v.sqnr_db),
            db(self.sqnr_with_residual_db),
            db(self.sqnr_floor_db),
            db(self.k.sqnr_floor_db),
            db(self.v.sqnr_floor_db),
            db(self.authors_sqnr_db),
            db(self.k.authors_sqnr_db),
            db(self.v.authors_sqnr_db),
            delta(self.sqnr_db, self.authors_sqnr_db),
            db(self.authors_codes_our_decoder_sqnr_db),
            pct(self.codes_differ),
            pct(self.k.codes_differ),
            pct(self.v.codes_differ),
            pct(self.k.scale_differs),
            pct(self.v.scale_differs),
            self.max_bound_ratio,
            self.nonfinite,
            self.authors_nan,
        )
    }
}
