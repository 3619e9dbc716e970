//! `kvsim compare`: the five schemes and a per-token INTn baseline on one
//! KV set, side by side (docs/spec.md §16). Every scheme runs through its
//! own `measure_with` (the code behind its `kvsim` command), which hands
//! over each element it stores, decoded; here those become SQNR and the
//! attention error of decode steps, and the schemes' own reports give the
//! stored bits. HACK's attention is its own datapath (§15.9).

pub mod hardware;
pub mod intn;
pub mod report;

use crate::attention::{attend, positions, queries, sequences, top1, val, QSet, Step};
use crate::kvset::{At, KvSet};
use crate::oaken::thresholds::{Kv, ThresholdTable};
use serde::Serialize;

/// The schemes, in the order the table lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Scheme {
    Oaken,
    Kivi,
    Titanus,
    PackKv,
    Hack,
    Intn,
}

pub const SCHEMES: [Scheme; 6] = [Scheme::Oaken, Scheme::Kivi, Scheme::Titanus, Scheme::PackKv, Scheme::Hack, Scheme::Intn];

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Oaken => "Oaken",
            Scheme::Kivi => "KIVI",
            Scheme::Titanus => "Titanus",
            Scheme::PackKv => "PackKV",
            Scheme::Hack => "HACK",
            Scheme::Intn => "INTn per token",
        }
    }
}

/// One part of the stored bits, per quantized element.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BitPart {
    pub part: &'static str,
    pub bits: f64,
}

/// Stored bits of one setting (spec §16.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bits {
    /// Every stored bit over the quantized elements.
    pub per_quantized: f64,
    /// The same by part; they sum to `per_quantized`.
    pub parts: Vec<BitPart>,
    pub quantized_elements: u64,
    /// Elements still in FP16 at the end of the set (the scheme's window).
    pub full_precision_elements: u64,
    /// Over every element, the full-precision ones at 16 bits.
    pub all_in: f64,
}

impl Bits {
    /// From totals in bits; `quantized` elements, `fp` more in FP16.
    pub fn from_totals(parts: &[(&'static str, f64)], quantized: u64, fp: u64) -> Bits {
        let per = |b: f64| if quantized == 0 { 0.0 } else { b / quantized as f64 };
        let total: f64 = parts.iter().map(|p| p.1).sum();
        let all = quantized + fp;
        Bits {
            per_quantized: per(total),
            parts: parts.iter().map(|&(part, b)| BitPart { part, bits: per(b) }).collect(),
            quantized_elements: quantized,
            full_precision_elements: fp,
            all_in: if all == 0 { 0.0 } else { (total + 16.0 * fp as f64) / all as f64 },
        }
    }
}

/// One setting of one scheme on the set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub scheme: Scheme,
    pub setting: String,
    /// The scheme's default parameters (its point on the area chart).
    pub default: bool,
    /// Why the setting did not run (an illegal parameter for this shape).
    pub not_run: Option<String>,
    /// What stays in full precision, and until when.
    pub window: String,
    pub bits: Option<Bits>,
    /// Over the quantized elements; None when exact or not run.
    pub sqnr_k_db: Option<f64>,
    pub sqnr_v_db: Option<f64>,
    /// `sqrt(sum |o^ - o|^2 / sum |o|^2)` over every query (§16.3).
    pub attention_rel_error: Option<f64>,
    /// Queries whose largest score falls on the same key as FP16's.
    pub top1_agreement: Option<f64>,
    pub queries: u64,
}

impl Row {
    fn not_run(scheme: Scheme, setting: String, default: bool, why: String) -> Row {
        Row { scheme, setting, default, not_run: Some(why), window: String::new(), bits: None, sqnr_k_db: None, sqnr_v_db: None, attention_rel_error: None, top1_agreement: None, queries: 0 }
    }
}

/// Which stored tokens are still in full precision at a context of `ctx`
/// tokens: a query sees those exact (§16.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Every token is quantized when it arrives (Oaken, INTn).
    None,
    /// KIVI (§13.7): K after the last multiple of R, V the last R tokens.
    Kivi { residual: usize },
    /// PackKV (§14.9): the tokens after the last full block.
    Blocks { block: usize },
    /// Titanus (§11.7): the prefill is quantized once it is complete.
    Prefill { prefill: usize },
}

impl Window {
    pub fn quantized_at(self, kv: Kv, t: usize, ctx: usize) -> bool {
        match self {
            Window::None => true,
            Window::Kivi { residual: r } => match kv {
                Kv::K => t < ctx - ctx % r,
                Kv::V => t + r < ctx,
            },
            Window::Blocks { block } => t < ctx / block * block,
            Window::Prefill { prefill } => ctx >= prefill,
        }
    }
}

/// What a setting's elements decode to, in the set's layout; NaN where
/// the scheme did not quantize (never a decoded value: no scheme outputs
/// a NaN).
pub struct Decoded {
    pub data: Vec<f64>,
    layers: usize,
    tokens: usize,
    row: usize,
}

impl Decoded {
    pub fn new(set: &KvSet) -> Decoded {
        Decoded { data: vec![f64::NAN; set.data.len()], layers: set.layers, tokens: set.tokens, row: set.head_dim }
    }

    pub fn index(&self, a: At) -> usize {
        (((a.run * self.layers + a.layer) * 2 + a.kv as usize) * self.tokens + a.token) * self.row + a.channel
    }

    pub fn put(&mut self, a: At, y: f64) {
        let i = self.index(a);
        self.data[i] = y;
    }
}

fn sqnr(signal: f64, noise: f64) -> Option<f64> {
    (noise > 0.0 && signal > 0.0).then(|| 10.0 * (signal / noise).log10())
}

/// SQNR of K and of V over the quantized elements (§8's definition).
pub fn sqnr_kv(set: &KvSet, d: &Decoded) -> [Option<f64>; 2] {
    let mut acc = [(0f64, 0f64); 2];
    let n = set.tokens * set.head_dim;
    for (chunk, (xs, ys)) in set.data.chunks(n).zip(d.data.chunks(n)).enumerate() {
        let a = &mut acc[chunk % 2];
        for (&x, &y) in xs.iter().zip(ys) {
            if !y.is_nan() {
                let x = val(x);
                a.0 += x * x;
                a.1 += (y - x) * (y - x);
            }
        }
    }
    [sqnr(acc[0].0, acc[0].1), sqnr(acc[1].0, acc[1].1)]
}

/// The attention error of one setting: output error against FP16 and
/// top-1 agreement, summed over queries.
#[derive(Default)]
pub struct AttnAcc {
    sig: f64,
    err: f64,
    same_top1: u64,
    pub queries: u64,
}

impl AttnAcc {
    pub fn add(&mut self, exact: &Step, approx: &Step) {
        for (&e, &a) in exact.out.iter().zip(&approx.out) {
            self.sig += e * e;
            self.err += (a - e) * (a - e);
        }
        self.same_top1 += (top1(&exact.scores) == top1(&approx.scores)) as u64;
        self.queries += 1;
    }

    pub fn rel_error(&self) -> Option<f64> {
        (self.sig > 0.0).then(|| (self.err / self.sig).sqrt())
    }

    pub fn top1(&self) -> Option<f64> {
        (self.queries > 0).then(|| self.same_top1 as f64 / self.queries as f64)
    }
}

/// The set, its queries and what every run shares.
pub struct Input<'a> {
    pub set: &'a KvSet,
    pub q: Option<&'a QSet>,
    /// KV heads per row and elements per head.
    pub heads: usize,
    pub head_dim: usize,
    /// Queries per sequence (§15.13's positions).
    pub queries: usize,
    /// Oaken's thresholds (profiled elsewhere, or on the set itself).
    pub thresholds: &'a ThresholdTable,
}

impl Input<'_> {
    pub fn q_source(&self) -> String {
        match self.q {
            Some(q) => format!("recorded, {} query heads", q.q_heads),
            None => "drawn (spec §15.13)".into(),
        }
    }
}

/// Decode-step attention on a setting's decoded K and V, the
/// full-precision window exact: every query of every sequence.
pub fn attention(inp: &Input, d: &Decoded, w: Window) -> AttnAcc {
    let set = inp.set;
    let hd = inp.head_dim;
    let pos = positions(set.tokens, inp.queries);
    let mut acc = AttnAcc::default();
    for s in sequences(set, hd) {
        // per token: the input row, it exact, it decoded (NaN: not quantized)
        let rows = |kv: Kv| {
            let raw = set.sample(s.run, s.layer, kv);
            let mut r = SeqRows { raw: vec![], exact: vec![], decoded: vec![] };
            for t in 0..set.tokens {
                let o = t * set.head_dim + s.head * hd;
                r.raw.push(&raw[o..o + hd]);
                r.exact.push(raw[o..o + hd].iter().map(|&e| val(e)).collect());
                let i = d.index(At { run: s.run, layer: s.layer, kv, token: t, channel: s.head * hd });
                r.decoded.push(d.data[i..i + hd].to_vec());
            }
            r
        };
        let (kr, SeqRows { exact: vx, decoded: vy, .. }) = (rows(Kv::K), rows(Kv::V));
        let (kx, ky) = (&kr.exact, &kr.decoded);
        for (t, qs) in queries(inp.q, s, inp.heads, hd, &kr.raw, &pos) {
            let ctx = t + 1;
            let k = chosen(Kv::K, w, ctx, kx, ky);
            let v = chosen(Kv::V, w, ctx, &vx, &vy);
            for q in qs {
                let qf: Vec<f64> = q.iter().map(|&e| val(e)).collect();
                let exact = attend(&qf, &rows_of(&kx[..ctx]), &rows_of(&vx[..ctx]));
                acc.add(&exact, &attend(&qf, &k, &v));
            }
        }
    }
    acc
}

struct SeqRows<'a> {
    raw: Vec<&'a [u16]>,
    exact: Vec<Vec<f64>>,
    decoded: Vec<Vec<f64>>,
}

fn rows_of(m: &[Vec<f64>]) -> Vec<&[f64]> {
    m.iter().map(|r| &r[..]).collect()
}

/// The rows a query at context `ctx` reads: decoded where the token is
/// quantized by then, the input otherwise.
fn chosen<'a>(kv: Kv, w: Window, ctx: usize, x: &'a [Vec<f64>], y: &'a [Vec<f64>]) -> Vec<&'a [f64]> {
    (0..ctx).map(|i| if !y[i][0].is_nan() && w.quantized_at(kv, i, ctx) { &y[i][..] } else { &x[i][..] }).collect()
}

/// Fills a row from a decoded set.
fn finish(inp: &Input, scheme: Scheme, setting: String, default: bool, window: (Window, String), bits: Bits, d: &Decoded) -> Row {
    let [k, v] = sqnr_kv(inp.set, d);
    let a = attention(inp, d, window.0);
    Row {
        scheme,
        setting,
        default,
        not_run: None,
        window: window.1,
        bits: Some(bits),
        sqnr_k_db: k,
        sqnr_v_db: v,
        attention_rel_error: a.rel_error(),
        top1_agreement: a.top1(),
        queries: a.queries,
    }
}

/// Oaken (§2, §8): every middle mode, inlier bits 2 to 4, the whole
/// `heads * head_dim` vector per metadata word.
pub fn oaken(inp: &Input) -> Vec<Row> {
    use crate::oaken::params::{MiddleMode, OakenParams};
    let mut rows = vec![];
    for mode in [MiddleMode::Plain, MiddleMode::Shifted, MiddleMode::Paper] {
        for ib in 2..=4u32 {
            let setting = format!("{mode}, inlier {ib} bits");
            let default = mode == MiddleMode::Plain && ib == 4;
            let p = OakenParams {
                head_dim: inp.head_dim,
                heads: inp.heads,
                lanes: 1 << inp.head_dim.trailing_zeros().min(4),
                inlier_bits: ib,
                outlier_bits: ib + 1,
                layers: inp.thresholds.layers(),
                middle_mode: mode,
            };
            let mut d = Decoded::new(inp.set);
            match crate::metrics::measure_with(inp.set, inp.thresholds, &p, &mut |a, y| d.put(a, y)) {
                Err(e) => rows.push(Row::not_run(Scheme::Oaken, setting, default, e)),
                Ok(r) => {
                    let n = r.elements as f64;
                    let coo = 8.0 * r.outlier_fraction * n;
                    let payload = r.payload_bits_per_element * n;
                    let bits = Bits::from_totals(
                        &[
                            ("dense codes", payload - coo),
                            ("COO entries", coo),
                            ("metadata words", r.bits_per_element * n - payload),
                            ("segment counts (MMU, on chip)", r.mmu_count_bits_per_element * n),
                        ],
                        r.elements,
                        0,
                    );
                    rows.push(finish(inp, Scheme::Oaken, setting, default, (Window::None, "none".into()), bits, &d));
                }
            }
        }
    }
    rows
}

/// KIVI (§13): 2 to 4 bits, G = 32, R = 128.
pub fn kivi(inp: &Input) -> Vec<Row> {
    use crate::kivi::params::KiviCacheParams;
    let mut rows = vec![];
    for b in 2..=4u32 {
        let p = KiviCacheParams { head_dim: inp.head_dim, heads: inp.heads, group: 32, bits_k: b, bits_v: b, residual: 128 };
        let setting = format!("{b} bits, G = {}, R = {}", p.group, p.residual);
        let mut d = Decoded::new(inp.set);
        match crate::kivi::metrics::measure_with(inp.set, &p, &mut |a, y| d.put(a, y)) {
            Err(e) => rows.push(Row::not_run(Scheme::Kivi, setting, b == 2, e)),
            Ok(r) => {
                let codes = r.k.code_bits_per_element * r.k.quantized_elements as f64 + r.v.code_bits_per_element * r.v.quantized_elements as f64;
                let all = r.bits_per_element * r.quantized_elements as f64;
                let bits = Bits::from_totals(&[("codes (32-bit words)", codes), ("metadata words", all - codes)], r.quantized_elements, r.elements - r.quantized_elements);
                let w = (Window::Kivi { residual: p.residual }, format!("K after the last multiple of {0} tokens, V the last {0} tokens", p.residual));
                rows.push(finish(inp, Scheme::Kivi, setting, b == 2, w, bits, &d));
            }
        }
    }
    rows
}

/// Titanus's prefill: the `kvsim titanus` default.
pub const TITANUS_PREFILL: usize = 64;

/// Titanus (§11): K/V widths 2/2, 3/2 (its default) and 3/3 at the 0.35
/// pruning target, and 3/2 with zeros pruned only.
pub fn titanus(inp: &Input) -> Vec<Row> {
    use crate::titanus::{int8::Int8Set, metrics, params::TitanusParams, profile};
    let int8 = Int8Set::from_fp16(inp.set);
    let mut rows = vec![];
    for (ratio, bk, bv) in [(0.35, 2u8, 2u8), (0.35, 3, 2), (0.35, 3, 3), (0.0, 3, 2)] {
        let setting = format!("K {bk} / V {bv} bits, pruning target {ratio}");
        let default = (ratio, bk, bv) == (0.35, 3, 2);
        let prefill = TITANUS_PREFILL.min(inp.set.tokens);
        let run = || -> Result<(metrics::Report, Decoded), String> {
            let table = profile::profile(&int8, [ratio; 2], [bk, bv])?.table()?;
            let p = TitanusParams { channels: inp.set.head_dim, lanes: 1 << inp.set.head_dim.trailing_zeros().min(4), layers: inp.set.layers, max_levels: 16, max_prefill: prefill };
            p.validate().map_err(|e| e.to_string())?;
            let mut d = Decoded::new(inp.set);
            let r = metrics::measure_with(&int8, Some(inp.set), &table, &p, prefill, &[], &mut |a, y| d.put(a, y))?;
            Ok((r, d))
        };
        match run() {
            Err(e) => rows.push(Row::not_run(Scheme::Titanus, setting, default, e)),
            Ok((r, d)) => {
                let tensors = (inp.set.runs * inp.set.layers * 2) as f64;
                let bits = Bits::from_totals(
                    &[
                        ("index mask", r.cpq.index as f64),
                        ("labels", r.cpq.label as f64),
                        ("non-zero codes", r.cpq.values as f64),
                        ("scale-zero entries (on chip)", r.sz_bits as f64),
                        ("INT8 conversion scale", 16.0 * tensors),
                    ],
                    r.elements,
                    0,
                );
                let w = (Window::Prefill { prefill }, format!("the first {prefill} tokens until the prefill ends"));
                rows.push(finish(inp, Scheme::Titanus, setting, default, w, bits, &d));
            }
        }
    }
    rows
}

/// PackKV (§14): N (K / V) of 10 / 5 (the paper's), 15 / 7, 21 / 10 and
/// 31 / 15, each without and with median repacking (which moves no error).
pub fn packkv(inp: &Input) -> Vec<Row> {
    use crate::packkv::params::PackKvParams;
    let mut rows = vec![];
    for (nk, nv) in [(10u32, 5u32), (15, 7), (21, 10), (31, 15)] {
        let p = PackKvParams { head_dim: inp.head_dim, heads: inp.heads, levels: nk, lanes: 1 << inp.head_dim.trailing_zeros().min(4), ..Default::default() };
        let mut d = Decoded::new(inp.set);
        let name = |rep: &str| format!("N {nk} / {nv}, B = {}, P = {}, repack {rep}", p.block, p.pack);
        let default = (nk, nv) == (10, 5);
        match crate::packkv::metrics::measure_with(inp.set, &p, nv, &mut |a, y| d.put(a, y)) {
            Err(e) => rows.push(Row::not_run(Scheme::PackKv, name("none"), default, e)),
            Ok(r) => {
                let n = r.k.quantized_elements + r.v.quantized_elements;
                let fp = r.k.residual_elements + r.v.residual_elements;
                let w = format!("the tokens after the last full block of {}", p.block);
                let first = finish(inp, Scheme::PackKv, name("none"), default, (Window::Blocks { block: p.block }, w), packkv_bits(&r.bits_none, n, fp), &d);
                let second = Row { setting: name("median"), default: false, bits: Some(packkv_bits(&r.bits_median, n, fp)), ..first.clone() };
                rows.push(first);
                rows.push(second);
            }
        }
    }
    rows
}

fn packkv_bits(b: &crate::packkv::metrics::Bits, n: u64, fp: u64) -> Bits {
    let t = |x: f64| x * n as f64;
    Bits::from_totals(
        &[
            ("payload", t(b.payload)),
            ("pack fields", t(b.pack_fields)),
            ("block headers", t(b.block_headers)),
            ("permutation", t(b.permutation)),
            ("token step and zero", t(b.token_meta)),
            ("padding", t(b.padding)),
        ],
        n,
        fp,
    )
}

/// HACK (§15): Π = 32, 64, 128, nearest rounding, its own attention
/// datapath (8-bit Q and P, Eq. 4, the open V partition in FP16).
pub fn hack(inp: &Input) -> Vec<Row> {
    use crate::hack::params::{sum_bits, HackParams};
    use crate::kivi::params::words_per_group;
    let mut rows = vec![];
    let set = inp.set;
    for pi in [32usize, 64, 128] {
        let base = HackParams { head_dim: inp.head_dim, ..Default::default() };
        let setting = format!("Π = {pi}, 2-bit K and V, 8-bit Q and P");
        let mut d = Decoded::new(set);
        let mut acc = AttnAcc::default();
        let r = crate::hack::metrics::measure_with(set, inp.head_dim, inp.q, &[pi], &base, inp.queries, &mut |a, y| d.put(a, y), &mut |_, _, e, h| acc.add(e, h));
        let r = match r {
            Err(e) => {
                rows.push(Row::not_run(Scheme::Hack, setting, pi == 64, e));
                continue;
            }
            Ok(r) => r,
        };
        if let Some(e) = &r.rows[0].error {
            rows.push(Row::not_run(Scheme::Hack, setting, pi == 64, e.clone()));
            continue;
        }
        // per sequence: T K tokens, floor(T / Π) closed V blocks; the sums
        // of a K token or a V block packed into whole 32-bit words (§15.5)
        let (b, hd, t) = (base.kv_bits, inp.head_dim, set.tokens);
        let seqs = (set.runs * set.layers * inp.heads) as f64;
        let closed = t / pi * pi;
        let k_parts = (t * hd / pi) as f64;
        let v_parts = (closed * hd / pi) as f64;
        let sb = sum_bits(b, pi) as usize;
        let sums_k = hd / pi * sb;
        let sums_v = hd * sb;
        let words = |bits: usize| bits.div_ceil(32) * 32;
        let parts = [
            ("codes (32-bit words)", seqs * (k_parts + v_parts) * (32 * words_per_group(b, pi)) as f64),
            ("metadata words", seqs * (k_parts + v_parts) * 32.0),
            ("code sums", seqs * (t * sums_k + closed / pi * sums_v) as f64),
            ("sum word padding", seqs * (t * (words(sums_k) - sums_k) + closed / pi * (words(sums_v) - sums_v)) as f64),
        ];
        let quantized = seqs as u64 * ((t + closed) * hd) as u64;
        let bits = Bits::from_totals(&parts, quantized, seqs as u64 * ((t - closed) * hd) as u64);
        let [k, v] = sqnr_kv(set, &d);
        rows.push(Row {
            scheme: Scheme::Hack,
            setting,
            default: pi == 64,
            not_run: None,
            window: format!("V's open partition (the tokens after the last multiple of {pi})"),
            bits: Some(bits),
            sqnr_k_db: k,
            sqnr_v_db: v,
            attention_rel_error: acc.rel_error(),
            top1_agreement: acc.top1(),
            queries: acc.queries,
        });
    }
    rows
}

/// The INTn baseline (§16.1): n = 2, 3, 4, 5, 6, 8.
pub fn intn(inp: &Input) -> Vec<Row> {
    let mut rows = vec![];
    for n in [2u32, 3, 4, 5, 6, 8] {
        let mut d = Decoded::new(inp.set);
        let r = intn::measure_with(inp.set, inp.head_dim, n, &mut |a, y| d.put(a, y));
        let bits = Bits::from_totals(&[("codes", r.code_bits as f64), ("metadata words", r.meta_bits as f64)], r.elements, 0);
        rows.push(finish(inp, Scheme::Intn, format!("{n} bits, one step and minimum per token and head"), n == 4, (Window::None, "none".into()), bits, &d));
    }
    rows
}

/// Every scheme's rows, in table order.
pub fn run_all(inp: &Input) -> Vec<Row> {
    let mut rows = oaken(inp);
    rows.extend(kivi(inp));
    rows.extend(titanus(inp));
    rows.extend(packkv(inp));
    rows.extend(hack(inp));
    rows.extend(intn(inp));
    rows
}

/// Checks the shape before any scheme runs.
pub fn check_shape(set: &KvSet, heads: usize, head_dim: usize) -> Result<(), String> {
    if heads == 0 || head_dim == 0 || heads * head_dim != set.head_dim {
        return Err(format!("heads x head-dim ({heads} x {head_dim}) must equal the set's row length ({}): compare runs every scheme on whole rows", set.head_dim));
    }
    Ok(())
}
