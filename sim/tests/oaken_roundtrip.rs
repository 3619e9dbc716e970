//! The round-trip error bound of docs/spec.md §2.10, on random tokens.
use proptest::prelude::*;
use proptest::test_runner::Config;
use sim::fp16;
use sim::oaken::dequantizer::dequantize_token;
use sim::oaken::params::{CodeKind, Group, MiddleMode, OakenParams};
use sim::oaken::quantizer::quantize_token_detail;
use sim::oaken::thresholds::ThresholdSet;
use sim::testgen;

fn params() -> impl Strategy<Value = OakenParams> {
    let mode = prop_oneof![Just(MiddleMode::Plain), Just(MiddleMode::Shifted), Just(MiddleMode::Paper)];
    (prop_oneof![Just(8usize), Just(64), Just(96), Just(128), Just(256)], prop_oneof![3 => Just(1usize), 1 => 2usize..=5], 2u32..=8, mode)
        .prop_map(|(head_dim, heads, ib, mode)| OakenParams {
            head_dim,
            heads,
            lanes: 8,
            inlier_bits: ib,
            outlier_bits: ib + 1,
            layers: 1,
            middle_mode: if mode == MiddleMode::Shifted && ib < 3 { MiddleMode::Plain } else { mode },
        })
}

fn case() -> impl Strategy<Value = (OakenParams, ThresholdSet, Vec<u16>)> {
    (params(), testgen::threshold_set())
        .prop_flat_map(|(p, t)| (Just(p.clone()), Just(t), testgen::token(p.vector_len(), t)))
}

proptest! {
    #![proptest_config(Config { cases: testgen::cases(2000), failure_persistence: None, ..Config::default() })]

    #[test]
    fn decoded_values_meet_the_bound((p, t, x) in case()) {
        let (q, detail) = quantize_token_detail(&p, &t, &x);
        let mut y = Vec::new();
        for h in 0..p.heads {
            y.extend(dequantize_token(&p, &t, q.head_dense(&p, h), &q.coo[h], q.head_counts(&p, h), &q.meta).unwrap());
        }
        let [lo_o, lo_i, hi_i, hi_o] = t.units();
        for i in 0..p.vector_len() {
            let xs = fp16::to_units(fp16::sanitize(x[i]).0);
            let out = fp16::to_units(y[i]);
            let c = detail[i].class;
            let g = c.group as usize;
            let step = fp16::to_units(q.meta.groups[g].step);
            let ulp = fp16::grid_ulp(out.unsigned_abs()) as i64;
            let coding = p.coding(c.group);
            let folded = coding.kind == CodeKind::Folded;
            let (lo, hi) = if c.group == Group::Outer { (lo_o, hi_o) } else { (lo_i, hi_i) };
            // |out - x| <= step/2 + ulp/2 (a folded group: step + ulp/2, its
            // code may move one step to keep its side), compared in integers;
            // a folded value held at -65504 is exempt
            let clamped = folded && !c.upper && xs - lo < -fp16::MAX_UNITS;
            let bound = if folded { 2 * step + ulp } else { step + ulp };
            prop_assert!(clamped || 2 * (out - xs).abs() <= bound,
                "element {i}: x={:#06x} out={:#06x} group {g} step={:#06x}", x[i], y[i], q.meta.groups[g].step);
            // a shifted group's decoded value stays on its side of the threshold
            if coding.shifted() {
                if c.upper {
                    prop_assert!(out >= hi, "element {i} decoded below its upper threshold");
                } else {
                    prop_assert!(out <= lo, "element {i} decoded above its lower threshold");
                }
            }
        }
        for h in 0..p.heads {
            prop_assert_eq!(q.coo[h].len(), q.head_counts(&p, h).iter().map(|&c| c as usize).sum::<usize>());
        }
    }
}
