//! Titanus compression metrics over a KV set: bytes moved against an INT8
//! baseline, reconstruction SQNR, HQE level counts against decode length.
//! Paper: Titanus (GLSVLSI 2025) §5.2, Figure 9 (levels per channel),
//! Figure 11 (KV movement of pruning alone and of CPQ).
//! Spec: docs/spec.md §11.11.

use super::dequantizer::{Dequantizer, SkipCounters};
use super::int8::Int8Set;
use super::params::{ConfigTable, TitanusParams};
use super::pruner::prune;
use super::quantizer::{raw_code, rounds_to_zero, Quantizer, Record, TokenOut, SZ_STORED_BITS};
use crate::fp16;
use crate::kvset::{At, KvSet, KVS};
use serde::Serialize;

/// Bits moved off chip by one scheme, by kind (spec §11.11). The
/// scale-zero entries stay on chip, in the SZ buffer ([Titanus] §4.1):
/// `Report::sz_bits`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Bits {
    pub index: u64,
    pub label: u64,
    pub values: u64,
}

impl Bits {
    pub fn total(&self) -> u64 {
        self.index + self.label + self.values
    }
}

/// Fractions of all elements that are zero at three points of CPQ (spec
/// §11.11): the quantity of the authors' `sparsity` figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sparsity {
    /// Pruned (index 0): zero before quantization.
    pub before_quant: f64,
    /// Pruned, or kept with code 0 (label 0): zero after quantization.
    pub after_quant: f64,
    /// Rebuilt as 0 by the DQU.
    pub after_dequant: f64,
}

/// Levels per channel after `decode` decode tokens, over every channel of
/// every (run, layer, K/V).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelPoint {
    pub decode: usize,
    pub mean: f64,
    pub max: usize,
    /// Fraction of channels holding `max_levels` levels.
    pub at_limit: f64,
    /// Saturated elements (level limit) so far, over kept decode elements so far.
    pub saturated: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub elements: u64,
    pub tokens: u64,
    pub prefill: usize,
    pub pruned_fraction: f64,
    /// Kept elements whose code is 0 (label 0), over kept elements.
    pub label_zero_fraction: f64,
    pub baseline_bits: u64,
    pub pruning: Bits,
    pub cpq: Bits,
    pub sz_entries: u64,
    /// The SZ buffer's contents over the set: 41 bits per entry (on chip).
    pub sz_bits: u64,
    /// The most entries one (run, layer, K/V) sequence created, times 41:
    /// the SZ buffer one sequence of one layer needs.
    pub sz_peak_bits: u64,
    pub sparsity: Sparsity,
    /// Kept elements rebuilt as 0 although they do not round to 0 at their
    /// level's scale (only clamped elements can: spec §11.8.2).
    pub zero_not_rounding: u64,
    /// Largest `|y - x| / (S/512 + 1/2)` over kept elements coded without
    /// clamping (spec §11.8.4: at most 1), and how many were checked.
    pub max_bound_ratio: f64,
    pub bound_checked: u64,
    /// SQNR in dB against the INT8 input (None = no error).
    pub sqnr_int8_pruning: Option<f64>,
    pub sqnr_int8_cpq: Option<f64>,
    /// Against the FP16 source, when the set was converted from one.
    pub sqnr_fp16_int8: Option<f64>,
    pub sqnr_fp16_pruning: Option<f64>,
    pub sqnr_fp16_cpq: Option<f64>,
    pub levels: Vec<LevelPoint>,
    pub skips: SkipCounters,
    pub saturated: u64,
}

impl Report {
    pub fn reduction_pruning(&self) -> f64 {
        1.0 - self.pruning.total() as f64 / self.baseline_bits as f64
    }

    pub fn reduction_cpq(&self) -> f64 {
        1.0 - self.cpq.total() as f64 / self.baseline_bits as f64
    }

    pub fn summary(&self) -> String {
        let db = |v: Option<f64>| v.map_or("inf".to_string(), |v| format!("{v:.2} dB"));
        let mb = |b: u64| b as f64 / 8.0;
        let mut s = String::new();
        s += &format!(
            "{} elements, {} tokens, prefill {}; pruned {:.4}, label-zero {:.4} of kept\n",
            self.elements, self.tokens, self.prefill, self.pruned_fraction, self.label_zero_fraction
        );
        s += &format!("bytes moved, INT8 baseline: {}\n", mb(self.baseline_bits));
        s += &format!(
            "  pruning alone: {} ({:.2}% less): index {}, values {}\n",
            mb(self.pruning.total()),
            100.0 * self.reduction_pruning(),
            mb(self.pruning.index),
            mb(self.pruning.values)
        );
        s += &format!(
            "  CPQ:           {} ({:.2}% less): index {}, label {}, values {}\n",
            mb(self.cpq.total()),
            100.0 * self.reduction_cpq(),
            mb(self.cpq.index),
            mb(self.cpq.label),
            mb(self.cpq.values)
        );
        s += &format!(
            "SZ buffer (on chip, not moved): {} entries, {} bytes; largest one sequence of one layer: {} bytes\n",
            self.sz_entries,
            mb(self.sz_bits),
            mb(self.sz_peak_bits)
        );
        s += &format!(
            "sparsity: before quantization {:.4}, after quantization {:.4}, after dequantization {:.4}; kept rebuilt as 0 without rounding to 0: {}\n",
            self.sparsity.before_quant, self.sparsity.after_quant, self.sparsity.after_dequant, self.zero_not_rounding
        );
        s += &format!(
            "max error / bound (§11.8.4) over {} unclamped kept elements: {:.4}\n",
            self.bound_checked, self.max_bound_ratio
        );
        s += &format!(
            "SQNR vs INT8: pruning {}, CPQ {}\n",
            db(self.sqnr_int8_pruning),
            db(self.sqnr_int8_cpq)
        );
        if self.sqnr_fp16_int8.is_some() || self.sqnr_fp16_cpq.is_some() {
            s += &format!(
                "SQNR vs FP16: INT8 {}, pruning {}, CPQ {}\n",
                db(self.sqnr_fp16_int8),
                db(self.sqnr_fp16_pruning),
                db(self.sqnr_fp16_cpq)
            );
        }
        s += "levels per channel: decode tokens, mean, max, at limit, saturated\n";
        for p in &self.levels {
            s += &format!(
                "  {:>5} {:>7.3} {:>3} {:.5} {:.6}\n",
                p.decode, p.mean, p.max, p.at_limit, p.saturated
            );
        }
        s += &format!(
            "DQU skips: pruned {}, label zero {}, zero point {}, multiplies {}; saturated {}\n",
            self.skips.pruned,
            self.skips.label_zero,
            self.skips.zero_point,
            self.skips.multiplies,
            self.saturated
        );
        s
    }
}

fn sqnr(signal: f64, noise: f64) -> Option<f64> {
    (noise > 0.0).then(|| 10.0 * (signal / noise).log10())
}

#[derive(Default)]
struct Acc {
    sig: f64,
    pruning: f64,
    cpq: f64,
    fsig: f64,
    f_int8: f64,
    f_pruning: f64,
    f_cpq: f64,
}

/// Runs PU -> QU -> stored records -> DQU over every (run, layer, K/V) of
/// `set`: the first `prefill` tokens are the prefill, the rest decode.
/// Level counts are taken after each decode length in `checkpoints` that the
/// set reaches.
pub fn measure(set: &Int8Set, source: Option<&KvSet>, table: &ConfigTable, p: &TitanusParams, prefill: usize, checkpoints: &[usize]) -> Result<Report, String> {
    measure_with(set, source, table, p, prefill, checkpoints, &mut |_, _| {})
}

/// `measure`, also handing every rebuilt element to `out` (spec §16): in
/// the INT8 domain, times `amax / 127` for a set converted from FP16.
pub fn measure_with(
    set: &Int8Set,
    source: Option<&KvSet>,
    table: &ConfigTable,
    p: &TitanusParams,
    prefill: usize,
    checkpoints: &[usize],
    out: &mut dyn FnMut(At, f64),
) -> Result<Report, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.channels != set.channels {
        return Err(format!(
            "channels ({}) must equal the set's last dimension ({})",
            p.channels, set.channels
        ));
    }
    if table.layers() < set.layers {
        return Err(format!(
            "the configuration covers {} layers, the set has {}",
            table.layers(),
            set.layers
        ));
    }
    if prefill > p.max_prefill {
        return Err(format!("prefill ({prefill}) exceeds max-prefill ({})", p.max_prefill));
    }
    if set.tokens > super::params::MAX_POSITIONS {
        return Err(format!("{} tokens exceed the 65536 positions of a sequence", set.tokens));
    }
    let decode_len = set.tokens.saturating_sub(prefill);
    let points: Vec<usize> = checkpoints.iter().copied().filter(|&d| d >= 1 && d <= decode_len).collect();
    let mut level_sum = vec![0u64; points.len()];
    let mut level_max = vec![0usize; points.len()];
    let mut at_limit = vec![0u64; points.len()];
    let mut sat_at = vec![0u64; points.len()];
    let mut kept_decode_at = vec![0u64; points.len()];
    let c = set.channels;
    let mut r = Report {
        elements: (set.data.len()) as u64,
        tokens: (set.runs * set.layers * 2 * set.tokens) as u64,
        prefill,
        pruned_fraction: 0.0,
        label_zero_fraction: 0.0,
        baseline_bits: 8 * set.data.len() as u64,
        pruning: Bits::default(),
        cpq: Bits::default(),
        sz_entries: 0,
        sz_bits: 0,
        sz_peak_bits: 0,
        sparsity: Sparsity::default(),
        zero_not_rounding: 0,
        max_bound_ratio: 0.0,
        bound_checked: 0,
        sqnr_int8_pruning: None,
        sqnr_int8_cpq: None,
        sqnr_fp16_int8: None,
        sqnr_fp16_pruning: None,
        sqnr_fp16_cpq: None,
        levels: Vec::new(),
        skips: SkipCounters::default(),
        saturated: 0,
    };
    let mut acc = Acc::default();
    let (mut kept, mut label_zero, mut zeros_out) = (0u64, 0u64, 0u64);
    for run in 0..set.runs {
        for layer in 0..set.layers {
            for kv in KVS {
                let cfg = table.lookup(layer, kv).0;
                let mut q = Quantizer::new(*p, kv);
                let mut d = Dequantizer::new(p);
                q.start(layer, table);
                let scale = set.scale_units(run, layer, kv).map(|a| a as f64 / 127.0 / 16_777_216.0);
                let src = source.map(|s| s.sample(run, layer, kv));
                let mut kept_decode = 0u64;
                let entries_before = r.sz_entries;
                let mut sink = |outs: Vec<TokenOut>, d: &mut Dequantizer, acc: &mut Acc, r: &mut Report, zeros: &mut u64| {
                    for o in outs {
                        for e in &o.entries {
                            d.table.load(e).expect("QU entries fit the table");
                        }
                        r.sz_entries += o.entries.len() as u64;
                        let k = o.record.index.iter().filter(|&&b| b).count() as u64;
                        r.cpq.index += c as u64;
                        r.cpq.label += k;
                        r.cpq.values += cfg.bits as u64 * o.record.codes.len() as u64;
                        let stored = o.record.pack(cfg.bits);
                        let back = Record::unpack(&stored, c, cfg.bits).expect("own record");
                        let y = d.dequantize(o.pos, &back);
                        let x = set.token(run, layer, kv, o.pos as usize);
                        for ch in 0..c {
                            *zeros += (y[ch] == 0) as u64;
                            // kept and rebuilt as 0: it must round to 0 at its
                            // level's scale, -s/2 <= x < s/2, i.e. -S <= 512 x < S
                            let level = if o.record.index[ch] { d.table.lookup(ch, o.pos) } else { None };
                            if let Some(e) = level {
                                let xi = x[ch] as i32;
                                if y[ch] == 0 {
                                    r.zero_not_rounding += !rounds_to_zero(e.scale as u32, xi) as u64;
                                }
                                // coded without clamping: 0 <= raw code <= Q (§11.5.3)
                                if (0..(1i64 << cfg.bits)).contains(&raw_code(e.scale as u32, e.zero as i32, xi)) {
                                    let err = (y[ch] as i64 - xi as i64).abs();
                                    r.max_bound_ratio = r.max_bound_ratio.max((512 * err) as f64 / (e.scale as i64 + 256) as f64);
                                    r.bound_checked += 1;
                                }
                            }
                            let (xv, yv) = (x[ch] as f64, y[ch] as f64);
                            out(At { run, layer, kv, token: o.pos as usize, channel: ch }, yv * scale.unwrap_or(1.0));
                            let pv = if o.record.index[ch] { xv } else { 0.0 };
                            acc.sig += xv * xv;
                            acc.pruning += (xv - pv) * (xv - pv);
                            acc.cpq += (xv - yv) * (xv - yv);
                            if let (Some(s), Some(src)) = (scale, src) {
                                let u = fp16::to_units(fp16::sanitize(src[o.pos as usize * c + ch]).0);
                                let f = u as f64 / 16_777_216.0;
                                acc.fsig += f * f;
                                acc.f_int8 += (f - xv * s).powi(2);
                                acc.f_pruning += (f - pv * s).powi(2);
                                acc.f_cpq += (f - yv * s).powi(2);
                            }
                        }
                    }
                };
                for t in 0..set.tokens {
                    let pr = prune(set.token(run, layer, kv, t), cfg.threshold);
                    let k = pr.values.len() as u64;
                    kept += k;
                    r.pruning.index += c as u64;
                    r.pruning.values += 8 * k;
                    if t < prefill {
                        q.prefill(&pr).map_err(|e| format!("run {run} layer {layer}: {e}"))?;
                        if t + 1 == set.tokens {
                            let outs = q.flush().map_err(|e| e.to_string())?;
                            sink(outs, &mut d, &mut acc, &mut r, &mut zeros_out);
                        }
                        continue;
                    }
                    let outs = q.decode(&pr).map_err(|e| format!("run {run} layer {layer}: {e}"))?;
                    kept_decode += k;
                    sink(outs, &mut d, &mut acc, &mut r, &mut zeros_out);
                    let dl = t + 1 - prefill;
                    for (i, &pt) in points.iter().enumerate() {
                        if pt == dl {
                            let counts = q.level_counts();
                            level_sum[i] += counts.iter().sum::<usize>() as u64;
                            level_max[i] = level_max[i].max(*counts.iter().max().unwrap_or(&0));
                            at_limit[i] += counts.iter().filter(|&&n| n == p.max_levels).count() as u64;
                            sat_at[i] += q.status.saturated;
                            kept_decode_at[i] += kept_decode;
                        }
                    }
                }
                r.saturated += q.status.saturated;
                r.sz_peak_bits = r.sz_peak_bits.max((r.sz_entries - entries_before) * SZ_STORED_BITS as u64);
                let s = d.counters;
                r.skips.pruned += s.pruned;
                r.skips.label_zero += s.label_zero;
                r.skips.zero_point += s.zero_point;
                r.skips.multiplies += s.multiplies;
                r.skips.missing_level += s.missing_level;
                label_zero += s.label_zero;
            }
        }
    }
    let tensors = (set.runs * set.layers * 2 * c) as f64;
    r.levels = points
        .iter()
        .enumerate()
        .map(|(i, &pt)| LevelPoint {
            decode: pt,
            mean: level_sum[i] as f64 / tensors,
            max: level_max[i],
            at_limit: at_limit[i] as f64 / tensors,
            saturated: if kept_decode_at[i] > 0 { sat_at[i] as f64 / kept_decode_at[i] as f64 } else { 0.0 },
        })
        .collect();
    r.pruned_fraction = 1.0 - kept as f64 / r.elements as f64;
    r.label_zero_fraction = if kept > 0 { label_zero as f64 / kept as f64 } else { 0.0 };
    r.sz_bits = r.sz_entries * SZ_STORED_BITS as u64;
    let frac = |n: u64| n as f64 / r.elements as f64;
    r.sparsity = Sparsity {
        before_quant: r.pruned_fraction,
        after_quant: frac(r.elements - kept + label_zero),
        after_dequant: frac(zeros_out),
    };
    r.sqnr_int8_pruning = sqnr(acc.sig, acc.pruning);
    r.sqnr_int8_cpq = sqnr(acc.sig, acc.cpq);
    if set.amax.is_some() && source.is_some() {
        r.sqnr_fp16_int8 = sqnr(acc.fsig, acc.f_int8);
        r.sqnr_fp16_pruning = sqnr(acc.fsig, acc.f_pruning);
        r.sqnr_fp16_cpq = sqnr(acc.fsig, acc.f_cpq);
    }
    Ok(r)
}
