//! `kvsim packkv`: PackKV on a KV set (docs/spec.md §14.11). Every token
//! is quantized by the quantizer model, every full block of K and V is
//! encoded without and with median repacking, decoded again by the
//! decoder model (codes must come back exactly), dequantized, and run
//! through the replica of the authors' FP16 chain.

use super::authors::{authors_decode, authors_token};
use super::codec::{decode_block, encode_pair, pack_width, BlockBits, TokenBlock};
use super::params::{PackKvParams, Repack};
use super::quantizer::{bound_x2, dequantize_token, quantize_token, TokenGrid, ZERO_MAX};
use crate::fp16;
use crate::kvset::{At, KvSet};
use crate::oaken::thresholds::Kv;
use serde::{Deserialize, Serialize};

const UNIT: f64 = 16_777_216.0;

/// Stored bits per quantized element, by kind (spec §14.9).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bits {
    pub payload: f64,
    /// Per-pack minimum and width fields.
    pub pack_fields: f64,
    pub block_headers: f64,
    pub permutation: f64,
    /// The per-token step and min (the authors' scale and zero).
    pub token_meta: f64,
    pub padding: f64,
    /// Everything stored.
    pub total: f64,
    /// The authors' count: payload and pack fields only.
    pub authors_count: f64,
    /// `16 / total` and `16 / authors_count`.
    pub ratio: f64,
    pub ratio_authors_count: f64,
}

impl Bits {
    fn from(b: &BlockBits, n: u64) -> Bits {
        let per = |x: usize| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let (total, ac) = (per(b.total()), per(b.payload + b.fields));
        Bits {
            payload: per(b.payload),
            pack_fields: per(b.fields),
            block_headers: per(b.header),
            permutation: per(b.perm),
            token_meta: per(b.meta),
            padding: per(b.pad),
            total,
            authors_count: ac,
            ratio: 16.0 / total,
            ratio_authors_count: 16.0 / ac,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub quantized_elements: u64,
    /// Tokens after the last full block, left in FP16 (not counted above).
    pub residual_elements: u64,
    pub blocks: u64,
    pub bits_none: Bits,
    pub bits_median: Bits,
    pub sqnr_db: Option<f64>,
    /// The SQNR the §14.8 bound guarantees from the tokens' ranges alone.
    pub sqnr_floor_db: Option<f64>,
    /// Packs of width 0 and of width r, over all packs (no repack).
    pub packs_width0: f64,
    pub packs_full_width: f64,
    pub authors_sqnr_db: Option<f64>,
    /// The authors' codes, packed as ours (their count), no repack.
    pub authors_codes_bits: f64,
    pub codes_differ: f64,
    /// Authors' codes above N, and above 2^r - 1 (their raw width).
    pub authors_above_levels: u64,
    pub authors_above_raw: u64,
    pub authors_nan: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackKvReport {
    pub head_dim: usize,
    pub heads: usize,
    pub levels_k: u32,
    pub levels_v: u32,
    pub block: usize,
    pub pack: usize,
    pub sequences: u64,
    pub tokens: usize,
    pub bits_none: Bits,
    pub bits_median: Bits,
    pub sqnr_db: Option<f64>,
    pub sqnr_floor_db: Option<f64>,
    pub authors_sqnr_db: Option<f64>,
    pub codes_differ: f64,
    pub k: Part,
    pub v: Part,
    /// max |err| / (step/2 + ulp(|out|)/2) over quantized elements.
    pub max_bound_ratio: f64,
    pub nonfinite_tokens: u64,
}

#[derive(Default)]
struct Acc {
    quantized: u64,
    residual: u64,
    blocks: u64,
    none: BlockBits,
    median: BlockBits,
    packs: u64,
    w0: u64,
    wfull: u64,
    sig: f64,
    noise: f64,
    floor: f64,
    noise_auth: f64,
    auth_bits: u64,
    differ: u64,
    above_n: u64,
    above_raw: u64,
    nan: u64,
}

fn sqnr(signal: f64, noise: f64) -> Option<f64> {
    (noise > 0.0 && signal > 0.0).then(|| 10.0 * (signal / noise).log10())
}

impl Acc {
    fn part(&self) -> Part {
        let n = self.quantized;
        let per = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let pk = |x: u64| if self.packs == 0 { 0.0 } else { x as f64 / self.packs as f64 };
        Part {
            quantized_elements: n,
            residual_elements: self.residual,
            blocks: self.blocks,
            bits_none: Bits::from(&self.none, n),
            bits_median: Bits::from(&self.median, n),
            sqnr_db: sqnr(self.sig, self.noise),
            sqnr_floor_db: sqnr(self.sig, self.floor),
            packs_width0: pk(self.w0),
            packs_full_width: pk(self.wfull),
            authors_sqnr_db: sqnr(self.sig, self.noise_auth),
            authors_codes_bits: per(self.auth_bits),
            codes_differ: per(self.differ),
            authors_above_levels: self.above_n,
            authors_above_raw: self.above_raw,
            authors_nan: self.nan,
        }
    }

    /// One quantized token: error, floor and the authors' chain.
    fn token(&mut self, p: &PackKvParams, x: &[u16], grid: &TokenGrid, codes: &[u8], out: &[u16], max_ratio: &mut f64) -> Vec<u32> {
        let xs: Vec<u16> = x.iter().map(|&e| fp16::sanitize(e).0).collect();
        let us: Vec<i64> = xs.iter().map(|&e| fp16::to_units(e)).collect();
        let (lo, hi) = (*us.iter().min().unwrap(), *us.iter().max().unwrap());
        // a priori: s = RU(c) <= (c' + 1)(1 + 2^-10), c' = max(D / N, |x_min| / 32767);
        // the output lies within M + N s of zero, M the largest magnitude
        let nl = p.levels as f64;
        let c_bar = ((hi - lo) as f64 / nl).max(lo.abs() as f64 / ZERO_MAX as f64);
        let s_bar = (c_bar + 1.0) * (1.0 + 1.0 / 1024.0);
        let m = lo.abs().max(hi.abs()) as f64;
        let u_bar = fp16::grid_ulp((2.0 * (m + nl * s_bar)).ceil() as u64) as f64;
        let e = (s_bar + u_bar) / 2.0 / UNIT;
        self.floor += e * e * x.len() as f64;
        let a = authors_token(p.levels, &xs);
        let raw_max = (1u32 << p.raw_bits()) - 1;
        let mut auth_codes = Vec::with_capacity(x.len());
        for j in 0..x.len() {
            let xf = us[j] as f64 / UNIT;
            let ou = fp16::to_units(out[j]);
            let err = (ou - us[j]).abs();
            *max_ratio = max_ratio.max((2 * err) as f64 / bound_x2(grid.step_units, ou) as f64);
            self.sig += xf * xf;
            self.noise += (err as f64 / UNIT).powi(2);
            let q = a.codes[j];
            if q.is_nan() {
                self.nan += 1;
                auth_codes.push(0);
            } else {
                self.noise_auth += (authors_decode(&a, q) - xf).powi(2);
                self.above_n += (q > nl as f32) as u64;
                self.above_raw += (q > raw_max as f32) as u64;
                auth_codes.push(q.max(0.0) as u32);
            }
            self.differ += (q != codes[j] as f32) as u64;
        }
        self.quantized += x.len() as u64;
        auth_codes
    }
}

fn block_of(toks: &[(TokenGrid, Vec<u8>, bool)]) -> TokenBlock {
    TokenBlock { meta: toks.iter().map(|t| t.0.meta).collect(), rows: toks.iter().map(|t| t.1.clone()).collect(), nonfinite: toks.iter().any(|t| t.2) }
}

/// Each (run, layer) sample's rows are cut into vectors of
/// `heads * head_dim`; vector `j` of every row is one sequence, K and V.
/// Its first `floor(T / B) * B` tokens are quantized and encoded in blocks
/// of `B`; the rest stays in FP16 (reported, not counted in the bits).
pub fn measure(set: &KvSet, p: &PackKvParams, levels_v: u32) -> Result<PackKvReport, String> {
    measure_with(set, p, levels_v, &mut |_, _| {})
}

/// `measure`, also handing every quantized element, decoded, to `sink`
/// (spec §16); the tokens after the last full block are not handed over.
pub fn measure_with(set: &KvSet, p: &PackKvParams, levels_v: u32, sink: &mut dyn FnMut(At, f64)) -> Result<PackKvReport, String> {
    let pk = PackKvParams { repack: Repack::None, ..p.clone() };
    let pv = PackKvParams { levels: levels_v, ..pk.clone() };
    pk.validate().map_err(|e| e.to_string())?;
    pv.validate().map_err(|e| e.to_string())?;
    let n = p.vector_len();
    if set.head_dim % n != 0 {
        return Err(format!(
            "the KV set's rows have {} elements, not a multiple of heads x head-dim = {} x {} = {n}",
            set.head_dim, p.heads, p.head_dim
        ));
    }
    let b = p.block;
    let full = set.tokens / b * b;
    let (mut k, mut v) = (Acc::default(), Acc::default());
    let (mut max_ratio, mut nonfinite, mut sequences) = (0.0f64, 0u64, 0u64);
    for run in 0..set.runs {
        for layer in 0..set.layers {
            let (ks, vs) = (set.sample(run, layer, Kv::K), set.sample(run, layer, Kv::V));
            for j in 0..set.head_dim / n {
                sequences += 1;
                let row = |s: &[u16], t: usize| s[t * set.head_dim + j * n..t * set.head_dim + (j + 1) * n].to_vec();
                for blk in 0..full / b {
                    let mut parts = vec![];
                    let mut auth = vec![];
                    for (s, acc, pp, kv) in [(ks, &mut k, &pk, Kv::K), (vs, &mut v, &pv, Kv::V)] {
                        let mut toks = vec![];
                        let mut ac = vec![];
                        for t in blk * b..(blk + 1) * b {
                            let x = row(s, t);
                            let q = quantize_token(pp, &x);
                            nonfinite += q.nonfinite as u64;
                            let g = TokenGrid::from_meta(q.meta);
                            let out = dequantize_token(q.meta, &q.codes);
                            for (i, &y) in out.iter().enumerate() {
                                sink(At { run, layer, kv, token: t, channel: j * n + i }, fp16::to_f64(y));
                            }
                            ac.push(acc.token(pp, &x, &g, &q.codes, &out, &mut max_ratio));
                            toks.push((g, q.codes, q.nonfinite));
                        }
                        parts.push(block_of(&toks));
                        auth.push(ac);
                    }
                    for (mode, pm) in [(Repack::None, &pk), (Repack::Median, &PackKvParams { repack: Repack::Median, ..pk.clone() })] {
                        let pvm = PackKvParams { levels: levels_v, ..pm.clone() };
                        let enc = encode_pair(pm, &pvm, &parts[0], &parts[1]).map_err(|e| format!("encoder: {e:?}"))?;
                        let [ek, ev] = enc;
                        let mut kperm = None;
                        for (i, ((words, bits), pp, acc)) in [(ek, pm, &mut k), (ev, &pvm, &mut v)].into_iter().enumerate() {
                            let mut d = decode_block(pp, &words).map_err(|(e, _)| format!("decoder: {e:?} on a block the encoder made"))?;
                            // the V block is stored in the K block's order (spec §14.5)
                            if i == 0 {
                                kperm = d.perm.clone();
                            } else {
                                d.perm = kperm.clone();
                            }
                            let (meta, rows) = d.arrival_rows();
                            if rows != parts[i].rows || meta != parts[i].meta {
                                return Err(format!("decoder: codes differ from the encoder's input ({mode:?} repack, {})", ["K", "V"][i]));
                            }
                            match mode {
                                Repack::None => acc.none.add(&bits),
                                Repack::Median => acc.median.add(&bits),
                            }
                        }
                    }
                    for (i, (acc, pp)) in [(&mut k, &pk), (&mut v, &pv)].into_iter().enumerate() {
                        acc.blocks += 1;
                        let (r, wb) = (pp.raw_bits(), pp.width_bits());
                        for rho in 0..pp.rows() {
                            for ch in 0..n {
                                let col = || (0..pp.pack).map(|t| parts[i].rows[rho * pp.pack + t][ch]);
                                let w = pack_width((col().max().unwrap() - col().min().unwrap()) as u32);
                                acc.packs += 1;
                                acc.w0 += (w == 0) as u64;
                                acc.wfull += (w == r) as u64;
                                let acol = || (0..pp.pack).map(|t| auth[i][rho * pp.pack + t][ch]);
                                let aw = pack_width(acol().max().unwrap() - acol().min().unwrap());
                                acc.auth_bits += (pp.pack as u32 * aw + r + wb) as u64;
                            }
                        }
                    }
                }
                k.residual += ((set.tokens - full) * n) as u64;
                v.residual += ((set.tokens - full) * n) as u64;
            }
        }
    }
    let (kp, vp) = (k.part(), v.part());
    let nq = k.quantized + v.quantized;
    let mut none = k.none;
    none.add(&v.none);
    let mut median = k.median;
    median.add(&v.median);
    Ok(PackKvReport {
        head_dim: p.head_dim,
        heads: p.heads,
        levels_k: p.levels,
        levels_v,
        block: p.block,
        pack: p.pack,
        sequences,
        tokens: set.tokens,
        bits_none: Bits::from(&none, nq),
        bits_median: Bits::from(&median, nq),
        sqnr_db: sqnr(k.sig + v.sig, k.noise + v.noise),
        sqnr_floor_db: sqnr(k.sig + v.sig, k.floor + v.floor),
        authors_sqnr_db: sqnr(k.sig + v.sig, k.noise_auth + v.noise_auth),
        codes_differ: if nq == 0 { 0.0 } else { (k.differ + v.differ) as f64 / nq as f64 },
        k: kp,
        v: vp,
        max_bound_ratio: max_ratio,
        nonfinite_tokens: nonfinite,
    })
}

fn db(v: Option<f64>) -> String {
    v.map_or("inf (exact)".into(), |d| format!("{d:.2} dB"))
}

fn bits_line(name: &str, b: &Bits) -> String {
    format!(
        "  {name}: {:.4} bits/element = payload {:.4} + pack fields {:.4} + block headers {:.4} + permutation {:.4} + token step/zero {:.4} + padding {:.4}; ratio vs FP16 {:.2}x; authors' count (payload + pack fields) {:.4}, ratio {:.2}x\n",
        b.total, b.payload, b.pack_fields, b.block_headers, b.permutation, b.token_meta, b.padding, b.ratio, b.authors_count, b.ratio_authors_count
    )
}

impl PackKvReport {
    /// Human-readable summary.
    pub fn summary(&self) -> String {
        let pct = |x: f64| format!("{:.3}%", 100.0 * x);
        let mut s = format!(
            "PackKV: levels K {} / V {} (rel 1/N), block {}, pack {}; {} sequences x {} tokens, heads {} x head_dim {}\n\
             quantized elements: K {}, V {}; left in FP16 after the last full block: K {}, V {}\n",
            self.levels_k, self.levels_v, self.block, self.pack, self.sequences, self.tokens, self.heads, self.head_dim,
            self.k.quantized_elements, self.v.quantized_elements, self.k.residual_elements, self.v.residual_elements
        );
        for (name, none, med) in [("K and V", &self.bits_none, &self.bits_median), ("K", &self.k.bits_none, &self.k.bits_median), ("V", &self.v.bits_none, &self.v.bits_median)] {
            s += &format!("{name}:\n");
            s += &bits_line("no repack", none);
            s += &bits_line("median repack", med);
        }
        s += &format!(
            "packs of width 0: K {}, V {}; of full width r: K {}, V {}\n\
             SQNR: {} (K {}, V {}); floor from the error bound: {} (K {}, V {})\n\
             authors' FP16 chain: SQNR {} (K {}, V {}); codes differing {} (K {}, V {}); their codes packed as ours, authors' count: K {:.4}, V {:.4} bits/element\n\
             authors' codes above N: K {}, V {}; above 2^r - 1: K {}, V {}; NaN: K {}, V {}\n\
             max error / bound: {:.4}; tokens with NaN/Inf: {}\n",
            pct(self.k.packs_width0), pct(self.v.packs_width0), pct(self.k.packs_full_width), pct(self.v.packs_full_width),
            db(self.sqnr_db), db(self.k.sqnr_db), db(self.v.sqnr_db), db(self.sqnr_floor_db), db(self.k.sqnr_floor_db), db(self.v.sqnr_floor_db),
            db(self.authors_sqnr_db), db(self.k.authors_sqnr_db), db(self.v.authors_sqnr_db), pct(self.codes_differ), pct(self.k.codes_differ), pct(self.v.codes_differ),
            self.k.authors_codes_bits, self.v.authors_codes_bits,
            self.k.authors_above_levels, self.v.authors_above_levels, self.k.authors_above_raw, self.v.authors_above_raw, self.k.authors_nan, self.v.authors_nan,
            self.max_bound_ratio, self.nonfinite_tokens
        );
        s
    }
}
