//! The figures of docs/spec.md §8.1, recomputed from the default synthetic
//! set: a change to the generator, the profiler or the engine model that
//! moves them must update the spec too.
use sim::kvgen::{generate, KvGenConfig};
use sim::metrics::measure;
use sim::oaken::params::{MiddleMode, OakenParams};
use sim::oaken::profile::{profile, Ratios};

#[test]
fn section_8_1_figures() {
    let set = generate(&KvGenConfig::default()).unwrap();
    let file = profile(&set, &Ratios::default()).unwrap();
    let table = file.table().unwrap();
    // layer 0 K thresholds as printed in §8.1
    assert_eq!(file.entries[0].values, [-4.3671875, -0.0199737548828125, 0.0199737548828125, 3.109375]);
    for (mode, sqnr, sqnr_k, sqnr_v) in [
        (MiddleMode::Plain, 25.858646322863116, 25.79772979546583, 27.545612510813463),
        (MiddleMode::Shifted, 23.280540591889256, 23.18372628616524, 26.411453829933546),
    ] {
        let p = OakenParams { layers: 8, middle_mode: mode, ..Default::default() };
        let r = measure(&set, &table, &p).unwrap();
        assert_eq!(r.elements, 2_097_152);
        assert_eq!(
            (r.groups.outer.elements, r.groups.middle.elements, r.groups.inner.elements),
            (83_837, 1_887_440, 125_875)
        );
        assert_eq!(r.payload_bits_per_element, 4.0 + 8.0 * 209_712.0 / 2_097_152.0);
        assert_eq!(r.bits_per_element, r.payload_bits_per_element + 0.75);
        assert_eq!(r.mmu_count_bits_per_element, 0.125);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(
            close(r.sqnr_db, sqnr) && close(r.sqnr_k_db, sqnr_k) && close(r.sqnr_v_db, sqnr_v),
            "{mode}: {r:?}"
        );
        assert_eq!(r.max_bound_ratio, 1.0);
    }
}
