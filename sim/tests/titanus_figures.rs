//! The figures of docs/spec.md §11.11.1 on the default synthetic set,
//! recomputed: a change to the generator, the conversion, the profiler or
//! the Titanus models that moves them must update the spec too.
use sim::kvgen::{generate, KvGenConfig};
use sim::titanus::int8::Int8Set;
use sim::titanus::metrics::measure;
use sim::titanus::params::TitanusParams;
use sim::titanus::profile::profile;

#[test]
fn section_11_11_1_figures() {
    let fp = generate(&KvGenConfig::default()).unwrap();
    let set = Int8Set::from_fp16(&fp);
    let file = profile(&set, [0.35, 0.35], [3, 2]).unwrap();
    // thresholds in layer order, K before V, as printed in §11.11.1
    let t: Vec<u8> = file.entries.iter().map(|e| e.threshold).collect();
    assert_eq!(t, [3, 3, 3, 3, 3, 2, 3, 3, 3, 3, 3, 2, 3, 2, 3, 2]);
    let p = TitanusParams { layers: 8, max_levels: 16, max_prefill: 64, ..Default::default() };
    let r = measure(&set, Some(&fp), &file.table().unwrap(), &p, 64, &[128]).unwrap();
    assert_eq!(r.baseline_bits, 16_777_216);
    assert_eq!((r.pruning.index, r.pruning.values), (2_097_152, 10_655_424));
    assert_eq!((r.cpq.index, r.cpq.label, r.cpq.values), (2_097_152, 1_331_928, 3_034_145));
    // the scale-zero entries stay on chip: 41 bits each, not in the bytes moved
    assert_eq!((r.sz_entries, r.sz_bits), (20_639, 20_639 * 41));
    assert_eq!(r.cpq.total(), r.cpq.index + r.cpq.label + r.cpq.values);
    let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
    assert!(close(r.sqnr_int8_pruning, 25.029298046789314));
    assert!(close(r.sqnr_int8_cpq, 11.712013342617363));
    assert!(close(r.sqnr_fp16_int8, 33.19642161092912));
    assert!(close(r.sqnr_fp16_cpq, 14.510014808846261));
    assert_eq!((r.levels[0].decode, r.levels[0].max), (128, 7));
    assert_eq!(r.levels[0].mean, 2.1744384765625);
    let s = r.skips;
    assert_eq!(
        (s.pruned, s.label_zero, s.zero_point, s.multiplies, s.missing_level),
        (765_224, 121_503, 532_203, 678_222, 0)
    );
    // sparsity at the three points, from the DQU's own counts: pruned;
    // pruned or label 0; and at least pruned or zero point (a label-0
    // element whose level has z = 0 rebuilds as 0 too)
    let n = r.elements as f64;
    assert_eq!(r.sparsity.before_quant, r.pruned_fraction);
    assert!((r.sparsity.after_quant - (s.pruned + s.label_zero) as f64 / n).abs() < 1e-12);
    assert!(r.sparsity.after_dequant >= (s.pruned + s.zero_point) as f64 / n);
    assert!(r.sparsity.after_dequant <= (s.pruned + s.zero_point + s.label_zero) as f64 / n);
    // no kept element is rebuilt as 0 unless it rounds to 0 at its scale
    assert_eq!(r.zero_not_rounding, 0);
}
