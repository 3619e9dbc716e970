//! `sim`'s Oaken model on the committed slice of the real KV set (spec
//! §12.3): every element of a real decoder's cache is rebuilt within the
//! error bound of spec §2.10, at every inlier width and middle mode, and no
//! token is lost to non-finite values.

use sim::kvset::KvSet;
use sim::metrics::measure;
use sim::oaken::params::{MiddleMode, OakenParams};
use sim::oaken::profile::{profile, Ratios};
use std::path::Path;

fn slice() -> KvSet {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/realkv-slice.kv.npy");
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
    for (mode, lowest) in [(MiddleMode::Plain, 2), (MiddleMode::Shifted, 3)] {
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
    assert_eq!(n, 13);
}
