//! Compression and error metrics of the Oaken engine on a KV set
//! (docs/spec.md §8): every token is quantized by the golden model and decoded
//! by the dequantization engine model (§4) from its packed records.

use crate::fp16;
use crate::kvset::{At, KvSet, KVS};
use crate::oaken::dequantizer::{dequantize_record, DenseRecord};
use crate::oaken::params::{Group, MiddleMode, OakenParams, GROUPS};
use crate::oaken::quantizer::{bound_x2, folded_clamped, quantize_token_detail};
use crate::oaken::thresholds::{Kv, ThresholdTable};
use serde::{Deserialize, Serialize};

const UNIT: f64 = 16_777_216.0; // units per 1.0

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    pub elements: u64,
    pub fraction: f64,
    /// Largest |decoded - input| over the group's elements.
    pub max_abs_error: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupsReport {
    pub outer: GroupReport,
    pub middle: GroupReport,
    pub inner: GroupReport,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsReport {
    pub head_dim: usize,
    pub heads: usize,
    pub inlier_bits: u32,
    pub outlier_bits: u32,
    pub middle_mode: MiddleMode,
    pub meta_bits: usize,
    /// Token vectors (`heads * head_dim` elements each).
    pub tokens: u64,
    pub elements: u64,
    /// Bits stored in memory (dense records, COO entries, metadata words)
    /// per element (§2.9).
    pub bits_per_element: f64,
    /// The same without the metadata word: the paper's convention.
    pub payload_bits_per_element: f64,
    /// The MMU's on-chip segment counts per element (§10.9), not in memory.
    pub mmu_count_bits_per_element: f64,
    /// Outer + inner elements over all elements.
    pub outlier_fraction: f64,
    pub groups: GroupsReport,
    /// SQNR in dB; null when the decoded set is exact (infinite SQNR).
    pub sqnr_db: Option<f64>,
    pub sqnr_k_db: Option<f64>,
    pub sqnr_v_db: Option<f64>,
    /// max over elements of |err| / (step/2 + ulp(|out|)/2); <= 1 by §2.10.
    pub max_bound_ratio: f64,
    /// Tokens with a NaN or infinity (sanitised, §2.2.1).
    pub nonfinite_tokens: u64,
}

fn sqnr(signal: f64, noise: f64) -> Option<f64> {
    (noise > 0.0 && signal > 0.0).then(|| 10.0 * (signal / noise).log10())
}

#[derive(Default)]
struct GroupAcc {
    elements: u64,
    max_err: i64,
}

/// Runs every token vector of `set` through the engine with the table's
/// set for its layer and K/V: each (run, layer, K/V, token) row is cut into
/// vectors of `heads * head_dim` elements (one when the row is that long).
pub fn measure(set: &KvSet, table: &ThresholdTable, p: &OakenParams) -> Result<MetricsReport, String> {
    measure_with(set, table, p, &mut |_, _| {})
}

/// `measure`, also handing every decoded element to `sink` (spec §16).
pub fn measure_with(set: &KvSet, table: &ThresholdTable, p: &OakenParams, sink: &mut dyn FnMut(At, f64)) -> Result<MetricsReport, String> {
    p.validate().map_err(|e| e.to_string())?;
    let n = p.vector_len();
    if set.head_dim % n != 0 {
        return Err(format!(
            "the KV set's rows have {} elements, not a multiple of heads x head-dim = {} x {} = {n}",
            set.head_dim, p.heads, p.head_dim
        ));
    }
    if p.layers != table.layers() {
        return Err(format!(
            "layers is {} but the threshold table has {} layers",
            p.layers,
            table.layers()
        ));
    }
    if set.layers > table.layers() {
        return Err(format!(
            "the KV set has {} layers but the threshold table only {}",
            set.layers,
            table.layers()
        ));
    }
    let mut groups: [GroupAcc; 3] = Default::default();
    let mut sig = [0.0f64; 2];
    let mut noise = [0.0f64; 2];
    let (mut tokens, mut bits, mut coo_entries, mut nonfinite) = (0u64, 0u64, 0u64, 0u64);
    let mut max_ratio = 0.0f64;
    for run in 0..set.runs {
        for layer in 0..set.layers {
            for kv in KVS {
                let (t, _) = table.lookup(layer, kv);
                for (c, row) in set.sample(run, layer, kv).chunks_exact(n).enumerate() {
                    let (q, detail) = quantize_token_detail(p, &t, row);
                    // each head through the engine model; layer < table.layers() <= 256
                    let mut y = Vec::with_capacity(n);
                    for h in 0..p.heads {
                        let rec = DenseRecord::new(p, layer as u8, kv, &q, h);
                        let d = dequantize_record(p, table, &rec, &q.coo[h], false);
                        if d.err || d.layer_oob {
                            return Err(format!("internal: the dequantizer rejected a record (run {run}, layer {layer}, {kv:?})"));
                        }
                        y.extend(d.x);
                    }
                    let (token, first) = (c * n / set.head_dim, c * n % set.head_dim);
                    for (i, &yi) in y.iter().enumerate() {
                        sink(At { run, layer, kv, token, channel: first + i }, fp16::to_f64(yi));
                    }
                    tokens += 1;
                    nonfinite += q.status.nonfinite as u64;
                    coo_entries += q.outliers() as u64;
                    bits += (8 * p.dense_bytes() * p.heads + 8 * q.outliers() + p.meta_bits()) as u64;
                    for ((&xi, &yi), d) in row.iter().zip(&y).zip(&detail) {
                        let x = fp16::to_units(fp16::sanitize(xi).0);
                        let out = fp16::to_units(yi);
                        let err = (out - x).abs();
                        let g = d.class.group as usize;
                        let step = fp16::to_units(q.meta.groups[g].step);
                        // |err| over the §2.10 bound, exact integers up to the division
                        if !folded_clamped(p, &t, d.class, x) {
                            let b2 = bound_x2(p.coding(d.class.group), step, out);
                            max_ratio = max_ratio.max((2 * err) as f64 / b2 as f64);
                        }
                        groups[g].elements += 1;
                        groups[g].max_err = groups[g].max_err.max(err);
                        let (xf, ef) = (x as f64 / UNIT, err as f64 / UNIT);
                        sig[kv as usize] += xf * xf;
                        noise[kv as usize] += ef * ef;
                    }
                }
            }
        }
    }
    let elements = tokens * n as u64;
    let per = |v: u64| if elements == 0 { 0.0 } else { v as f64 / elements as f64 };
    let group = |g: Group| GroupReport {
        elements: groups[g as usize].elements,
        fraction: per(groups[g as usize].elements),
        max_abs_error: groups[g as usize].max_err as f64 / UNIT,
    };
    debug_assert_eq!(GROUPS.iter().map(|&g| groups[g as usize].elements).sum::<u64>(), elements);
    let meta_total = tokens * p.meta_bits() as u64;
    Ok(MetricsReport {
        head_dim: p.head_dim,
        heads: p.heads,
        inlier_bits: p.inlier_bits,
        outlier_bits: p.outlier_bits,
        middle_mode: p.middle_mode,
        meta_bits: p.meta_bits(),
        tokens,
        elements,
        bits_per_element: per(bits),
        payload_bits_per_element: per(bits - meta_total),
        mmu_count_bits_per_element: (p.heads * p.count_bits()) as f64 / n as f64,
        outlier_fraction: per(coo_entries),
        groups: GroupsReport {
            outer: group(Group::Outer),
            middle: group(Group::Middle),
            inner: group(Group::Inner),
        },
        sqnr_db: sqnr(sig[0] + sig[1], noise[0] + noise[1]),
        sqnr_k_db: sqnr(sig[Kv::K as usize], noise[Kv::K as usize]),
        sqnr_v_db: sqnr(sig[Kv::V as usize], noise[Kv::V as usize]),
        max_bound_ratio: max_ratio,
        nonfinite_tokens: nonfinite,
    })
}

fn db(v: Option<f64>) -> String {
    v.map_or("inf (exact)".into(), |d| format!("{d:.2} dB"))
}

impl MetricsReport {
    /// Human-readable summary, one fact per line.
    pub fn summary(&self) -> String {
        let g = &self.groups;
        let pct = |x: f64| format!("{:.3}%", 100.0 * x);
        format!(
            "tokens {} x heads {} x head_dim {} = {} elements; inlier_bits {}, middle_mode {}, metadata {} bits/token\n\
             effective bits/element in memory: {:.4} with metadata, {:.4} payload only\n\
             MMU on-chip segment counts: {:.4} bits/element\n\
             outlier fraction: {} (outer {}, middle {}, inner {})\n\
             SQNR: {} (K {}, V {})\n\
             max |error|: outer {:.6}, middle {:.6}, inner {:.6}\n\
             max error / bound: {:.4}\n\
             tokens with NaN/Inf: {}\n",
            self.tokens,
            self.heads,
            self.head_dim,
            self.elements,
            self.inlier_bits,
            self.middle_mode,
            self.meta_bits,
            self.bits_per_element,
            self.payload_bits_per_element,
            self.mmu_count_bits_per_element,
            pct(self.outlier_fraction),
            pct(g.outer.fraction),
            pct(g.middle.fraction),
            pct(g.inner.fraction),
            db(self.sqnr_db),
            db(self.sqnr_k_db),
            db(self.sqnr_v_db),
            g.outer.max_abs_error,
            g.middle.max_abs_error,
            g.inner.max_abs_error,
            self.max_bound_ratio,
            self.nonfinite_tokens,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kvgen::{generate, KvGenConfig};
    use crate::oaken::profile::{profile, Ratios};

    fn f(v: f64) -> u16 {
        fp16::from_f32(v as f32)
    }

    fn p8() -> OakenParams {
        OakenParams { head_dim: 8, lanes: 4, layers: 1, ..Default::default() }
    }

    /// K: the token of spec §2.12 example 1; V: example 2 (eight 1.0s against
    /// the all-zero reset set).
    fn examples() -> (KvSet, ThresholdTable) {
        let k = [3.0, -0.5, 0.125, 1.0, -4.0, 0.0, 2.0, -0.25].map(f);
        let v = [f(1.0); 8];
        let set = KvSet { runs: 1, layers: 1, tokens: 1, head_dim: 8, data: [k, v].concat() };
        let mut table = ThresholdTable::new(1);
        table.write(0, Kv::K, [0xC000, 0xB400, 0x3400, 0x4000]).unwrap();
        (set, table)
    }

    #[test]
    fn spec_examples_by_hand() {
        let (set, table) = examples();
        let r = measure(&set, &table, &p8()).unwrap();
        assert_eq!((r.tokens, r.elements, r.meta_bits), (2, 16, 96));
        // K: 4*8 + 5 entries*8 + 96 = 168 bits; V: 32 + 8*8 + 96 = 192
        assert_eq!(r.bits_per_element, 360.0 / 16.0);
        assert_eq!(r.payload_bits_per_element, 168.0 / 16.0);
        // one 8-bit count per 8-element token
        assert_eq!(r.mmu_count_bits_per_element, 1.0);
        assert_eq!(r.outlier_fraction, 13.0 / 16.0);
        assert_eq!((r.groups.outer.elements, r.groups.middle.elements, r.groups.inner.elements), (10, 3, 3));
        assert_eq!(r.groups.middle.fraction, 3.0 / 16.0);
        // decoded (§2.12): outer exact; middle 2.0 -> 2.001953125; inner 0.0 -> 0.0041046142578125
        assert_eq!(r.groups.outer.max_abs_error, 0.0);
        assert_eq!(r.groups.middle.max_abs_error, 0.001953125);
        assert_eq!(r.groups.inner.max_abs_error, 0.0041046142578125);
        // errors 2^-13 (0.125), 2^-10 (1.0), 0.0041046142578125 (0.0), 2^-9 (2.0)
        let noise = 2f64.powi(-26) + 2f64.powi(-20) + 0.0041046142578125f64.powi(2) + 2f64.powi(-18);
        let sig_k = 9.0 + 0.25 + 0.015625 + 1.0 + 16.0 + 4.0 + 0.0625;
        assert!((r.sqnr_k_db.unwrap() - 10.0 * (sig_k / noise).log10()).abs() < 1e-9);
        assert!((r.sqnr_db.unwrap() - 10.0 * ((sig_k + 8.0) / noise).log10()).abs() < 1e-9);
        assert_eq!(r.sqnr_v_db, None); // exact
                                       // worst element: 0.0 in the inner group, err 68864 units, step 203008,
                                       // ulp(0x1C34) = 64 units
        assert_eq!(r.max_bound_ratio, 137728.0 / 203072.0);
        assert_eq!(r.nonfinite_tokens, 0);
        let s = r.summary();
        assert!(s.contains("22.5000 with metadata") && s.contains("V inf (exact)"), "{s}");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<MetricsReport>(&json).unwrap(), r);
    }

    /// The example rows cut two ways: two 4-element vectors per row (heads
    /// 1, head_dim 4), or one vector of two 4-element heads, whose metadata
    /// spans both heads (§2.12 example 5).
    #[test]
    fn rows_cut_into_vectors_and_heads() {
        let (set, table) = examples();
        let four = measure(&set, &table, &OakenParams { head_dim: 4, ..p8() }).unwrap();
        assert_eq!((four.tokens, four.elements), (4, 16));
        // 4 metadata words instead of 2
        assert_eq!(four.bits_per_element - four.payload_bits_per_element, 4.0 * 96.0 / 16.0);
        let two = measure(&set, &table, &OakenParams { head_dim: 4, heads: 2, ..p8() }).unwrap();
        assert_eq!((two.tokens, two.elements, two.heads), (2, 16, 2));
        let one = measure(&set, &table, &p8()).unwrap();
        // same groups, same codes, same decoded values as heads = 1, head_dim 8
        assert_eq!((two.bits_per_element, two.sqnr_db, two.max_bound_ratio), (one.bits_per_element, one.sqnr_db, one.max_bound_ratio));
        // but two counts per token
        assert_eq!(two.mmu_count_bits_per_element, 2.0);
    }

    #[test]
    fn nonfinite_tokens_are_counted() {
        let (mut set, table) = examples();
        set.data[9] = 0x7C00;
        let r = measure(&set, &table, &p8()).unwrap();
        assert_eq!(r.nonfinite_tokens, 1);
        assert!(r.max_bound_ratio <= 1.0);
    }

    #[test]
    fn rejects_mismatches() {
        let (set, table) = examples();
        let e = measure(&set, &table, &OakenParams { layers: 1, ..Default::default() }).unwrap_err();
        assert!(e.contains("not a multiple of heads x head-dim = 1 x 128"), "{e}");
        let e = measure(&set, &table, &OakenParams { inlier_bits: 9, ..p8() }).unwrap_err();
        assert!(e.contains("inlier-bits"), "{e}");
        let e = measure(&set, &table, &OakenParams { layers: 2, ..p8() }).unwrap_err();
        assert!(e.contains("threshold table has 1 layers"), "{e}");
        let two = KvSet { layers: 2, data: [set.data.clone(), set.data.clone()].concat(), ..set };
        assert!(measure(&two, &table, &p8()).unwrap_err().contains("only 1"));
    }

    #[test]
    fn synthetic_set_is_sane() {
        let cfg = KvGenConfig { runs: 2, layers: 2, tokens: 64, ..Default::default() };
        let set = generate(&cfg).unwrap();
        let table = profile(&set, &Ratios::default()).unwrap().table().unwrap();
        for mode in [MiddleMode::Plain, MiddleMode::Shifted, MiddleMode::Paper] {
            let p = OakenParams { layers: 2, middle_mode: mode, ..Default::default() };
            let r = measure(&set, &table, &p).unwrap();
            assert!((0.08..0.12).contains(&r.outlier_fraction), "{}", r.outlier_fraction);
            let payload = 4.0 + 8.0 * r.outlier_fraction;
            assert!((r.payload_bits_per_element - payload).abs() < 1e-12);
            assert!((r.bits_per_element - payload - 96.0 / 128.0).abs() < 1e-12);
            assert!(r.sqnr_db.unwrap() > 15.0, "{:?}", r.sqnr_db);
            assert!(r.max_bound_ratio <= 1.0);
        }
    }
}
