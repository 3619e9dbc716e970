//! `kvsim compare` (spec §16) on a cut of the committed real slice: every
//! scheme's rows are there, the bits per element of every row equal an
//! independent count from the stored format (formulas of the spec over the
//! words and records each scheme stores, not the accounting the table
//! uses), SQNR and attention error agree with each scheme's own report, and
//! the hardware table names no unit `rtl-gen` does not generate.

use sim::compare::{self, hardware, report::CompareReport, Input, Row, Scheme, Window, SCHEMES};
use sim::kvset::{KvSet, KVS};
use sim::oaken::profile::{profile, Ratios};
use sim::oaken::thresholds::{Kv, ThresholdTable};
use std::sync::OnceLock;

const HEADS: usize = 3;
const HEAD_DIM: usize = 64;
/// Not a multiple of 32, 64 or 128: every window and tail is non-empty.
const TOKENS: usize = 330;

/// This package's folder (see `sim::workspace_root`).
fn root() -> std::path::PathBuf {
    sim::workspace_root().join("sim")
}

/// Layers 0 and 1 of the slice (its layers 0 and 7), first 330 tokens.
fn set() -> &'static KvSet {
    static SET: OnceLock<KvSet> = OnceLock::new();
    SET.get_or_init(|| {
        let full = KvSet::read(&root().join("data/realkv-slice.kv.npy")).unwrap();
        let mut data = vec![];
        for layer in 0..2 {
            for kv in KVS {
                data.extend_from_slice(&full.sample(0, layer, kv)[..TOKENS * full.head_dim]);
            }
        }
        KvSet { runs: 1, layers: 2, tokens: TOKENS, head_dim: full.head_dim, data }
    })
}

fn table() -> &'static ThresholdTable {
    static T: OnceLock<ThresholdTable> = OnceLock::new();
    T.get_or_init(|| profile(set(), &Ratios::default()).unwrap().table().unwrap())
}

fn input() -> Input<'static> {
    Input { set: set(), q: None, heads: HEADS, head_dim: HEAD_DIM, queries: 4, thresholds: table() }
}

fn rows() -> &'static [Row] {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    ROWS.get_or_init(|| compare::run_all(&input()))
}

fn ran(s: Scheme) -> Vec<&'static Row> {
    rows().iter().filter(|r| r.scheme == s && r.not_run.is_none()).collect()
}

fn report() -> CompareReport {
    let ppa: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root().join("../docs/ppa.json")).unwrap()).unwrap();
    CompareReport {
        input: "slice cut".into(),
        shape: set().shape(),
        heads: HEADS,
        head_dim: HEAD_DIM,
        q_source: "drawn".into(),
        queries_per_sequence: 4,
        queries: 24,
        thresholds: "profiled".into(),
        ppa: "docs/ppa.json".into(),
        rows: rows().to_vec(),
        hardware: hardware::costs(Some(&ppa), "docs/ppa.json"),
    }
}

#[test]
fn every_scheme_has_its_rows() {
    // settings per scheme, and those not legal at head_dim 64
    let want = [(Scheme::Oaken, 9, 1), (Scheme::Kivi, 3, 0), (Scheme::Titanus, 4, 0), (Scheme::PackKv, 8, 0), (Scheme::Hack, 3, 1), (Scheme::Intn, 6, 0)];
    for (s, n, not_run) in want {
        let all: Vec<&Row> = rows().iter().filter(|r| r.scheme == s).collect();
        assert_eq!(all.len(), n, "{s:?}: {} rows", all.len());
        assert_eq!(all.iter().filter(|r| r.not_run.is_some()).count(), not_run, "{s:?}");
        assert_eq!(all.iter().filter(|r| r.default).count(), 1, "{s:?}: one default");
        for r in all.iter().filter(|r| r.not_run.is_none()) {
            let b = r.bits.as_ref().unwrap();
            assert!(b.per_quantized > 1.0 && b.per_quantized < 10.0, "{s:?} {}: {} bits", r.setting, b.per_quantized);
            let parts: f64 = b.parts.iter().map(|p| p.bits).sum();
            assert!((parts - b.per_quantized).abs() < 1e-9, "{s:?} {}: parts add to {parts}", r.setting);
            let e = r.attention_rel_error.unwrap();
            assert!(e > 0.0 && e < 1.5, "{s:?} {}: error {e}", r.setting);
            assert!(r.sqnr_k_db.unwrap() > 0.0 && r.sqnr_v_db.unwrap() > 0.0, "{s:?} {}", r.setting);
            let a = r.top1_agreement.unwrap();
            assert!((0.0..=1.0).contains(&a));
            // 2 layers x 3 heads, 4 positions, one drawn query each
            assert_eq!(r.queries, 24, "{s:?} {}", r.setting);
        }
    }
    // more bits, less error, where the scheme has one knob
    let err = |s: Scheme| ran(s).iter().map(|r| r.attention_rel_error.unwrap()).collect::<Vec<f64>>();
    for s in [Scheme::Kivi, Scheme::Intn] {
        let e = err(s);
        assert!(e.windows(2).all(|w| w[1] < w[0]), "{s:?}: {e:?}");
    }
    // repacking moves bits, never error
    let pk = ran(Scheme::PackKv);
    for pair in pk.chunks(2) {
        assert_eq!(pair[0].attention_rel_error, pair[1].attention_rel_error);
        assert!(pair[1].bits.as_ref().unwrap().per_quantized != pair[0].bits.as_ref().unwrap().per_quantized);
    }
    let r = report();
    let md = r.markdown();
    for s in SCHEMES {
        assert!(md.contains(&format!("| {} |", s.name())), "{} missing from the table", s.name());
    }
    assert!(md.contains("`packkv-encoder` | bit-pack, repack none (the compared setting) | packkv_encoder, memories as macros |"));
    let dir = std::env::temp_dir().join(format!("kvforge-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    r.plot_bits(&dir.join("bits.svg")).unwrap();
    r.plot_area(&dir.join("area.svg")).unwrap();
    for f in ["bits.svg", "area.svg"] {
        let svg = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Oaken") && svg.contains("Titanus"), "{f}");
    }
    // every scheme with units has a hardware total: only INTn is left out
    let area = std::fs::read_to_string(dir.join("area.svg")).unwrap();
    assert!(["KIVI", "PackKV", "HACK"].iter().all(|n| area.contains(n)) && !area.contains("not plotted: PackKV") && !area.contains("not plotted: HACK"), "area.svg");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Asserts `row`'s bits equal `total` stored bits over `quantized`
/// elements, `fp` more elements in FP16.
fn check_bits(row: &Row, total: f64, quantized: u64, fp: u64) {
    let b = row.bits.as_ref().unwrap();
    assert_eq!((b.quantized_elements, b.full_precision_elements), (quantized, fp), "{:?} {}", row.scheme, row.setting);
    let want = total / quantized as f64;
    assert!((b.per_quantized - want).abs() < 1e-9 * want, "{:?} {}: table {} bits/element, stored format {want}", row.scheme, row.setting, b.per_quantized);
    let all = (total + 16.0 * fp as f64) / (quantized + fp) as f64;
    assert!((b.all_in - all).abs() < 1e-9 * all, "{:?} {}: all in {} against {all}", row.scheme, row.setting, b.all_in);
    println!("{:?} {}: {want:.4} bits/element, {all:.4} all in", row.scheme, row.setting);
}

fn per_head_rows(s: &KvSet, kv: Kv) -> impl Iterator<Item = (usize, usize, &[u16])> + '_ {
    (0..s.layers).flat_map(move |l| s.sample(0, l, kv).chunks_exact(HEAD_DIM).enumerate().map(move |(i, x)| (l, i, x)))
}

#[test]
fn oaken_bits_equal_the_record_sizes() {
    let s = set();
    let elements = (s.data.len()) as u64;
    // outliers by §2.4 (strict outer bounds, inner inclusive), counted here
    let mut outliers = 0u64;
    for l in 0..s.layers {
        for kv in KVS {
            let [lo_o, lo_i, hi_i, hi_o] = table().lookup(l, kv).0.units();
            for &x in s.sample(0, l, kv) {
                let u = sim::fp16::to_units(sim::fp16::sanitize(x).0);
                outliers += (u < lo_o || u > hi_o || (lo_i <= u && u <= hi_i)) as u64;
            }
        }
    }
    let tokens = elements / (HEADS * HEAD_DIM) as u64;
    for r in ran(Scheme::Oaken) {
        let ib: u64 = r.setting.split("inlier ").nth(1).unwrap()[..1].parse().unwrap();
        // §2.9: per token, per head ceil(head_dim ib / 8) dense bytes, an
        // 8-bit COO entry per outlier, the 12-byte metadata record, and
        // (§10.9) a byte per 64-element segment of each head
        let dense = tokens * HEADS as u64 * 8 * (HEAD_DIM as u64 * ib).div_ceil(8);
        let total = dense + 8 * outliers + tokens * 8 * 12 + tokens * HEADS as u64 * 8 * (HEAD_DIM as u64).div_ceil(64);
        check_bits(r, total as f64, elements, 0);
    }
}

#[test]
fn kivi_bits_equal_the_word_counts() {
    let s = set();
    let c = (HEADS * HEAD_DIM) as u64;
    let seqs = s.layers as u64;
    for (r, b) in ran(Scheme::Kivi).into_iter().zip([2u64, 3, 4]) {
        // §13.7: K flushed per R = 128 tokens, V all but the last 128
        let (kq, vq) = ((TOKENS - TOKENS % 128) as u64, (TOKENS - 128) as u64);
        // §13.4: floor(32 / b) codes per word, ceil(32 / that) words per group
        // of 32, and one metadata word per group
        let words = 32u64.div_ceil(32 / b) + 1;
        let total = seqs * c * (kq + vq) / 32 * words * 32;
        check_bits(r, total as f64, seqs * c * (kq + vq), seqs * c * (2 * TOKENS as u64 - kq - vq));
    }
}

#[test]
fn titanus_bits_equal_the_stored_records() {
    use sim::titanus::{int8::Int8Set, params::TitanusParams, profile, pruner::prune, quantizer::Quantizer};
    let s = set();
    let int8 = Int8Set::from_fp16(s);
    let settings = [(0.35, 2u8, 2u8), (0.35, 3, 2), (0.35, 3, 3), (0.0, 3, 2)];
    for (r, (ratio, bk, bv)) in ran(Scheme::Titanus).into_iter().zip(settings) {
        let table = profile::profile(&int8, [ratio; 2], [bk, bv]).unwrap().table().unwrap();
        let p = TitanusParams { channels: s.head_dim, lanes: 16, layers: s.layers, max_levels: 16, max_prefill: 64 };
        let (mut record_bits, mut entries) = (0u64, 0u64);
        for l in 0..s.layers {
            for kv in KVS {
                let mut q = Quantizer::new(p, kv);
                q.start(l, &table);
                let th = table.lookup(l, kv).0;
                let mut outs = vec![];
                for t in 0..TOKENS {
                    let pr = prune(int8.token(0, l, kv, t), th.threshold);
                    if t < 64 {
                        q.prefill(&pr).unwrap();
                    } else {
                        outs.extend(q.decode(&pr).unwrap());
                    }
                }
                assert_eq!(outs.len(), TOKENS);
                for o in &outs {
                    // §11.7.1: the stored record's bit string; §11.7.2: 41 bits per entry
                    record_bits += o.record.pack(th.bits).len() as u64;
                    entries += o.entries.len() as u64;
                }
            }
        }
        // and the INT8 conversion's FP16 scale per tensor (§11.2)
        let total = record_bits + 41 * entries + 16 * 2 * s.layers as u64;
        check_bits(r, total as f64, s.data.len() as u64, 0);
    }
}

#[test]
fn packkv_bits_equal_the_block_headers() {
    use sim::packkv::codec::{encode_pair, TokenBlock};
    use sim::packkv::params::{PackKvParams, Repack};
    use sim::packkv::quantizer::quantize_token;
    let s = set();
    let c = HEADS * HEAD_DIM;
    let levels = [(10u32, 5u32), (15, 7), (21, 10), (31, 15)];
    let pk_rows = ran(Scheme::PackKv);
    for (i, (nk, nv)) in levels.into_iter().enumerate() {
        for (j, repack) in [Repack::None, Repack::Median].into_iter().enumerate() {
            let pk = PackKvParams { head_dim: HEAD_DIM, heads: HEADS, levels: nk, repack, ..Default::default() };
            let pv = PackKvParams { levels: nv, ..pk.clone() };
            let mut words = 0u64;
            for l in 0..s.layers {
                for blk in 0..TOKENS / 64 {
                    let block = |kv: Kv, pp: &PackKvParams| {
                        let toks: Vec<_> = (blk * 64..blk * 64 + 64).map(|t| quantize_token(pp, &s.sample(0, l, kv)[t * c..(t + 1) * c])).collect();
                        TokenBlock { meta: toks.iter().map(|q| q.meta).collect(), rows: toks.iter().map(|q| q.codes.clone()).collect(), nonfinite: false }
                    };
                    let enc = encode_pair(&pk, &pv, &block(Kv::K, &pk), &block(Kv::V, &pv)).unwrap();
                    for (w, _) in enc {
                        // §14.4: the header's bits [19:0] are the block's length in words
                        assert_eq!(w.len() as u32, w[0] & 0xF_FFFF);
                        words += (w[0] & 0xF_FFFF) as u64;
                    }
                }
            }
            let q = (s.layers * 2 * (TOKENS / 64 * 64) * c) as u64;
            check_bits(pk_rows[2 * i + j], 32.0 * words as f64, q, s.data.len() as u64 - q);
        }
    }
}

#[test]
fn hack_bits_equal_the_stored_partitions() {
    use sim::hack::params::{sum_bits, Rounding};
    use sim::hack::quantizer::Quantizer;
    use sim::kivi::format::pack;
    let s = set();
    for (r, pi) in ran(Scheme::Hack).into_iter().zip([32usize, 64]) {
        let sb = sum_bits(2, pi) as u64;
        let (mut bits, mut q, mut fp) = (0u64, 0u64, 0u64);
        // each stored partition: its code words, its metadata word; the sums
        // of a K token or a V block packed into whole 32-bit words (§15.5)
        let part_bits = |parts: &[sim::hack::quantizer::Part]| -> u64 { parts.iter().map(|p| 32 * pack(&p.codes, 2).len() as u64 + 32).sum::<u64>() + (parts.len() as u64 * sb).div_ceil(32) * 32 };
        for l in 0..s.layers {
            for h in 0..HEADS {
                let row = |kv: Kv, t: usize| &s.sample(0, l, kv)[t * s.head_dim + h * HEAD_DIM..t * s.head_dim + (h + 1) * HEAD_DIM];
                let mut kq = Quantizer::new(2, pi, Rounding::Nearest, 0xACE1);
                for t in 0..TOKENS {
                    let (parts, _) = kq.quantize_vector(row(Kv::K, t));
                    q += parts.iter().map(|p| p.codes.len() as u64).sum::<u64>();
                    bits += part_bits(&parts);
                }
                let mut vq = Quantizer::new(2, pi, Rounding::Nearest, 0xACE1);
                for b in 0..TOKENS / pi {
                    let toks: Vec<&[u16]> = (b * pi..(b + 1) * pi).map(|t| row(Kv::V, t)).collect();
                    let (parts, _) = vq.quantize_block(&toks);
                    q += parts.iter().map(|p| p.codes.len() as u64).sum::<u64>();
                    bits += part_bits(&parts);
                }
                fp += ((TOKENS % pi) * HEAD_DIM) as u64;
            }
        }
        check_bits(r, bits as f64, q, fp);
    }
}

#[test]
fn intn_bits_equal_the_formula() {
    let s = set();
    for (r, n) in ran(Scheme::Intn).into_iter().zip([2u64, 3, 4, 5, 6, 8]) {
        let vectors = per_head_rows(s, Kv::K).count() as u64 * 2;
        // §16.1: n bits per element packed into whole 32-bit words, one 32-bit metadata word
        check_bits(r, (vectors * ((n * HEAD_DIM as u64).div_ceil(32) * 32 + 32)) as f64, s.data.len() as u64, 0);
    }
}

/// The rows' SQNR and attention error are those of each scheme's own
/// `kvsim` report, from the same elements.
#[test]
fn figures_agree_with_each_schemes_own_report() {
    let s = set();
    let close = |a: Option<f64>, b: Option<f64>, what: &str| assert!((a.unwrap() - b.unwrap()).abs() < 1e-9, "{what}: {a:?} against {b:?}");
    let p = sim::oaken::params::OakenParams { head_dim: HEAD_DIM, heads: HEADS, layers: 2, ..Default::default() };
    let o = sim::metrics::measure(s, table(), &p).unwrap();
    let row = ran(Scheme::Oaken).into_iter().find(|r| r.default).unwrap();
    close(row.sqnr_k_db, o.sqnr_k_db, "Oaken K");
    close(row.sqnr_v_db, o.sqnr_v_db, "Oaken V");
    let k = sim::kivi::metrics::measure(s, &sim::kivi::params::KiviCacheParams { head_dim: HEAD_DIM, heads: HEADS, group: 32, bits_k: 2, bits_v: 2, residual: 128 }).unwrap();
    let row = ran(Scheme::Kivi)[0];
    close(row.sqnr_k_db, k.k.sqnr_db, "KIVI K");
    close(row.sqnr_v_db, k.v.sqnr_db, "KIVI V");
    let pk = sim::packkv::params::PackKvParams { head_dim: HEAD_DIM, heads: HEADS, ..Default::default() };
    let r = sim::packkv::metrics::measure(s, &pk, 5).unwrap();
    let row = ran(Scheme::PackKv)[0];
    close(row.sqnr_k_db, r.k.sqnr_db, "PackKV K");
    close(row.sqnr_v_db, r.v.sqnr_db, "PackKV V");
    let h = sim::hack::metrics::measure(s, HEAD_DIM, None, &[64], &sim::hack::params::HackParams { head_dim: HEAD_DIM, ..Default::default() }, 4).unwrap();
    let row = ran(Scheme::Hack).into_iter().find(|r| r.default).unwrap();
    let from_db = 10f64.powf(-h.rows[0].out_hack_exact_db.unwrap() / 20.0);
    close(row.attention_rel_error, Some(from_db), "HACK output error");
}

#[test]
fn windows_follow_each_schemes_flush_rules() {
    // spec §13.12 example 4 (G = 16, R = 32): after 70 tokens K holds 64
    // quantized tokens, V 38
    let w = Window::Kivi { residual: 32 };
    assert_eq!((0..70).filter(|&t| w.quantized_at(Kv::K, t, 70)).count(), 64);
    assert_eq!((0..70).filter(|&t| w.quantized_at(Kv::V, t, 70)).count(), 38);
    let w = Window::Blocks { block: 64 };
    assert_eq!((0..330).filter(|&t| w.quantized_at(Kv::V, t, 330)).count(), 320);
    let w = Window::Prefill { prefill: 64 };
    assert!(!w.quantized_at(Kv::K, 0, 63) && w.quantized_at(Kv::K, 0, 64));
    assert!((0..9).all(|t| Window::None.quantized_at(Kv::V, t, 9)));
}

/// The hardware table's `rtl` flags follow `rtl-gen`: a unit it generates
/// is marked so, a unit it does not would be "no RTL yet", and KIVI's channel
/// axis is the `KiviChannelQuantizer` of `kivi-quantizer`.
#[test]
fn hardware_units_follow_rtl_gen() {
    let units = std::fs::read_to_string(root().join("../rtl-gen/src/units.rs")).unwrap();
    let mut checked = 0;
    for s in SCHEMES {
        for n in hardware::needs(s) {
            let named = units.contains(&format!("name: \"{}\"", n.unit));
            if n.role.starts_with("axis channel") {
                assert!(n.rtl && units.contains("KiviChannelQuantizer"), "{}: rtl-gen no longer generates axis channel", n.unit);
            } else {
                assert_eq!(n.rtl, named, "{}: rtl-gen {} it", n.unit, if named { "generates" } else { "does not generate" });
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
    // from docs/ppa.json: a unit without RTL has no figure, a unit with one
    // synthesized with memories as macros takes that run's logic area
    let r = report();
    let find = |u: &str| r.hardware.iter().flat_map(|h| h.units.iter()).find(|c| c.unit == u).unwrap().clone();
    assert_eq!(find("hack-pv-dot").source, "hack_pv_dot, memories as macros");
    assert_eq!(find("packkv-decoder").source, "packkv_decoder, memories as macros");
    assert!(find("packkv-decoder").nand2_eq.is_some());
    let tq = find("titanus-quantizer");
    assert_eq!((tq.nand2_eq.map(f64::round), tq.memory_bits, tq.elements_per_cycle), (Some(137899.0), Some(1179648), Some(16.0)));
    assert_eq!(find("titanus-pruner").elements_per_cycle, Some(32.0));
    let oaken = r.hardware.iter().find(|h| h.scheme == Scheme::Oaken).unwrap();
    let total = |s: Scheme| r.hardware.iter().find(|h| h.scheme == s).unwrap().total();
    assert!(oaken.total().is_some() && total(Scheme::Hack).is_some() && total(Scheme::PackKv).is_some());
}
