//! `sim`'s Oaken model on the committed slice of the real KV set (spec
//! §12.3): every element of a real decoder's cache is rebuilt within the
//! error bound of spec §2.10, at every inlier width and middle mode, and no
//! token is lost to non-finite values.

use sim::kvset::KvSet;
use sim::metrics::measure;
use sim::oaken::params::{MiddleMode, OakenParams};
use sim::oaken::profile::{profile, Ratios};

fn slice() -> KvSet {
    let p = sim::workspace_root().join("sim/data/realkv-slice.kv.npy");
    KvSet::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn slice_has_the_spec_shape() {
    assert_eq!(slice().shape(), [1, 5, 2, 1024, 192]);
}

#[test]
fn oaken_rebuilds_real_kv_within_the_bound() {
    let set = slice();
    let table = profile(&set, &Ratios::default()).unwrap().table().unwrap();
    let mut n = 0;
    // shifted spends one middle bit on the side, so it starts at 3 bits (spec §2)
    for (mode, lowest) in [(MiddleMode::Plain, 2), (MiddleMode::Shifted, 3), (MiddleMode::Paper, 2)] {
        for ib in lowest..=8 {
            let p = OakenParams { layers: 5, heads: 3, head_dim: 64, inlier_bits: ib, outlier_bits: ib + 1, middle_mode: mode, ..Default::default() };
            let r = measure(&set, &table, &p).unwrap();
            println!("{mode:?} inlier_bits {ib}: SQNR {:.2} dB, bits/element {:.4}, max error/bound {:.4}",
                r.sqnr_db.unwrap_or(f64::INFINITY), r.bits_per_element, r.max_bound_ratio);
            assert!(r.max_bound_ratio <= 1.0, "{mode:?} {ib}: an element beyond the §2.10 bound ({})", r.max_bound_ratio);
            assert_eq!(r.nonfinite_tokens, 0);
            assert_eq!(r.elements, 1024 * 5 * 2 * 192);
            n += 1;
        }
    }
    assert_eq!(n, 20);
}

/// Titanus CPQ on the slice (spec §11): the slice converted to INT8
/// (§11.2), thresholds profiled on it at the 0.35 target, K and V at 2 to 4
/// bits, prefill 64 then 960 decode tokens. Every kept element coded without
/// clamping is rebuilt within §11.8.4's `S/512 + 1/2`, and a kept element is
/// rebuilt as 0 only when it rounds to 0 at its level's scale (§11.8.2).
#[test]
fn titanus_rebuilds_real_kv_within_the_bound() {
    use sim::titanus::{int8::Int8Set, metrics, params::TitanusParams, profile};
    let fp = slice();
    let set = Int8Set::from_fp16(&fp);
    for bits in [2u8, 3, 4] {
        let file = profile::profile(&set, [0.35, 0.35], [bits, bits]).unwrap();
        let p = TitanusParams { channels: 192, layers: 5, max_levels: 16, max_prefill: 64, ..Default::default() };
        let r = metrics::measure(&set, Some(&fp), &file.table().unwrap(), &p, 64, &[960]).unwrap();
        println!("Titanus {bits} bits: CPQ {:.2}% less, SQNR vs FP16 {:.2} dB, levels at 960 decode {:.3}, max error/bound {:.4} over {}",
            100.0 * r.reduction_cpq(), r.sqnr_fp16_cpq.unwrap(), r.levels[0].mean, r.max_bound_ratio, r.bound_checked);
        assert!(r.bound_checked > r.elements / 2, "{bits}: only {} elements checked", r.bound_checked);
        assert!(r.max_bound_ratio <= 1.0, "{bits}: an element beyond the §11.8.4 bound ({})", r.max_bound_ratio);
        assert_eq!(r.zero_not_rounding, 0, "{bits}: a kept element rebuilt as 0 without rounding to 0");
        assert_eq!(r.elements, 1024 * 5 * 2 * 192);
    }
}

/// KIVI on the slice (spec §13.11): K per channel over 32-token blocks, V
/// per token over 32-channel groups, R = 128, at 2, 3, 4 and 8 bits. Every
/// quantized element is rebuilt within §13.9's bound, and the SQNR is at
/// least the floor that bound gives from the groups' ranges alone (§13.11),
/// for K, V and both.
#[test]
fn kivi_rebuilds_real_kv_within_the_bound() {
    use sim::kivi::{metrics::measure, params::KiviCacheParams};
    let set = slice();
    // spec §13.10's table: bits, SQNR ours, SQNR authors' chain (dB), codes differing (%)
    let table = [(2u32, 11.736, 11.739, 0.068), (3, 19.145, 19.148, 0.159), (4, 25.777, 25.780, 0.356), (8, 50.340, 50.207, 6.340)];
    for (bits, ours, theirs, differ) in table {
        let p = KiviCacheParams { head_dim: 64, heads: 3, group: 32, bits_k: bits, bits_v: bits, residual: 128 };
        let r = measure(&set, &p).unwrap();
        println!(
            "KIVI {bits} bits: {:.4} bits/element, SQNR {:.2} dB (K {:.2}, V {:.2}), floor {:.2} dB; authors' chain {:.2} dB, codes differing {:.3}%",
            r.bits_per_element,
            r.sqnr_db.unwrap(),
            r.k.sqnr_db.unwrap(),
            r.v.sqnr_db.unwrap(),
            r.sqnr_floor_db.unwrap(),
            r.authors_sqnr_db.unwrap(),
            100.0 * r.codes_differ
        );
        assert!(r.max_bound_ratio <= 1.0, "{bits}: an element beyond the §13.9 bound ({})", r.max_bound_ratio);
        assert_eq!((r.nonfinite, r.authors_nan), (0, 0));
        // K: 1,024 = 8 x 128 tokens, all flushed; V: all but the last 128
        assert_eq!((r.k.quantized_elements, r.k.residual_elements), (5 * 1024 * 192, 0));
        assert_eq!((r.v.quantized_elements, r.v.residual_elements), (5 * 896 * 192, 5 * 128 * 192));
        let words = 32usize.div_ceil(32 / bits as usize);
        assert_eq!(r.bits_per_element, (32 * words + 32) as f64 / 32.0);
        for (name, got, floor) in [("all", r.sqnr_db, r.sqnr_floor_db), ("K", r.k.sqnr_db, r.k.sqnr_floor_db), ("V", r.v.sqnr_db, r.v.sqnr_floor_db)] {
            assert!(got.unwrap() >= floor.unwrap(), "{bits} bits, {name}: SQNR {got:?} below the floor {floor:?}");
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 0.0005;
        assert!(close(r.sqnr_db.unwrap(), ours) && close(r.authors_sqnr_db.unwrap(), theirs), "{bits}: spec §13.10's SQNR figures");
        assert!(close(100.0 * r.codes_differ, differ), "{bits}: spec §13.10's codes differing");
    }
}

/// PackKV on the slice (spec §14.11): N = 10 for K and 5 for V, blocks of
/// 64, packs of 16, one min and max over the 3 x 64 channels. Every element
/// is rebuilt within §14.8's bound, the SQNR is at least the floor that
/// bound gives from the tokens' ranges alone (derived, not tuned), codes
/// survive encoder -> decoder (`measure` fails otherwise), and the figures
/// of spec §14.11 hold.
#[test]
fn packkv_rebuilds_real_kv_within_the_bound() {
    use sim::packkv::{metrics::measure, params::PackKvParams};
    let set = slice();
    let p = PackKvParams { head_dim: 64, heads: 3, levels: 10, ..Default::default() };
    let r = measure(&set, &p, 5).unwrap();
    print!("{}", r.summary());
    assert!(r.max_bound_ratio <= 1.0, "an element beyond the §14.8 bound ({})", r.max_bound_ratio);
    assert_eq!(r.nonfinite_tokens, 0);
    assert_eq!((r.k.quantized_elements, r.v.quantized_elements), (5 * 1024 * 192, 5 * 1024 * 192));
    for (name, got, floor) in [("all", r.sqnr_db, r.sqnr_floor_db), ("K", r.k.sqnr_db, r.k.sqnr_floor_db), ("V", r.v.sqnr_db, r.v.sqnr_floor_db)] {
        assert!(got.unwrap() >= floor.unwrap(), "{name}: SQNR {got:?} below the floor {floor:?}");
    }
    // the per-token step and zero: 32 bits per 192-element token; one
    // 32-bit header per 64 x 192 block; the permutation 64 x 6 bits per K block
    assert_eq!(r.k.bits_none.token_meta, 32.0 / 192.0);
    assert_eq!(r.k.bits_none.block_headers, 32.0 / (64.0 * 192.0));
    assert_eq!(r.k.bits_median.permutation, 384.0 / (64.0 * 192.0));
    assert_eq!(r.v.bits_median.permutation, 0.0);
    // pack fields: (4 + 3) bits per 16 K codes, (3 + 2) per 16 V codes
    assert_eq!((r.k.bits_none.pack_fields, r.v.bits_none.pack_fields), (7.0 / 16.0, 5.0 / 16.0));
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    // spec §14.11: SQNR K, V; bits none, median (everything stored); codes differing
    assert!(close(r.k.sqnr_db.unwrap(), 11.63, 0.005) && close(r.v.sqnr_db.unwrap(), 9.19, 0.005), "spec §14.11's SQNR");
    assert!(close(r.bits_none.total, 2.6646, 0.00005) && close(r.bits_median.total, 2.5528, 0.00005), "spec §14.11's bits");
    assert!(close(100.0 * r.codes_differ, 0.178, 0.0005), "spec §14.11's codes differing");
}
