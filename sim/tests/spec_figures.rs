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
    for (mode, sqnr, sqnr_k, sqnr_v, bound) in [
        (MiddleMode::Plain, 25.858646322863116, 25.79772979546583, 27.545612510813463, 1.0),
        (MiddleMode::Shifted, 23.280540591889256, 23.18372628616524, 26.411453829933546, 1.0),
        (MiddleMode::Paper, 24.84753114807525, 24.77813384109041, 26.833883649775885, 0.9994242947610823),
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
        assert_eq!(r.max_bound_ratio, bound);
    }
}

/// §8.1.1: the Llama-2-7B shape (4,096-element vectors), quantized whole
/// (`heads = 32`) and per 128-element head (`heads = 1`).
#[test]
fn section_8_1_1_llama_shape() {
    let cfg = KvGenConfig { runs: 2, layers: 8, tokens: 128, head_dim: 4096, outlier_channels: 96, seed: 1, ..Default::default() };
    let set = generate(&cfg).unwrap();
    let table = profile(&set, &Ratios::default()).unwrap().table().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    for (heads, bits, sqnr) in [(32usize, 4.823365211486816, 25.14014190898881), (1, 5.549927711486816, 27.341157954864826)] {
        let p = OakenParams { heads, layers: 8, ..Default::default() };
        let r = measure(&set, &table, &p).unwrap();
        assert_eq!((r.elements, r.tokens), (16_777_216, 131_072 / heads as u64));
        // 96 metadata bits per 128 * heads elements on top of the payload
        assert!(close(r.bits_per_element, r.payload_bits_per_element + 96.0 / (128.0 * heads as f64)));
        assert!(close(r.bits_per_element, bits) && close(r.sqnr_db.unwrap(), sqnr), "heads {heads}: {r:?}");
        assert_eq!(r.mmu_count_bits_per_element, 0.125);
        assert_eq!(r.max_bound_ratio, 1.0);
    }
    // the bound: 4.83 bits or less in memory at about 10% outliers
    let r = measure(&set, &table, &OakenParams { heads: 32, layers: 8, ..Default::default() }).unwrap();
    assert!(r.bits_per_element <= 4.83 && (0.099..0.101).contains(&r.outlier_fraction));
}
