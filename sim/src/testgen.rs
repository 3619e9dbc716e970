//! proptest strategies shared by `sim`'s own tests and the `tb` co-simulation
//! tests: FP16 token vectors and threshold sets with realistic distributions
//! and the edge cases of docs/spec.md §2.11.

use crate::fp16;
use crate::oaken::thresholds::{Kv, ThresholdSet, ThresholdTable};
use proptest::prelude::*;

/// Number of proptest cases: `KVFORGE_CASES` overrides the default.
pub fn cases(default: u32) -> u32 {
    std::env::var("KVFORGE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Any finite FP16 value except -0.
pub fn finite() -> impl Strategy<Value = u16> {
    any::<u16>().prop_filter("finite", |&x| fp16::is_finite(x) && x != 0x8000)
}

/// FP16 values that exercise sanitisation and range limits.
pub fn special() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(0x7E00u16), // quiet NaN
        Just(0xFD01u16), // negative signalling NaN
        Just(0x7C00u16), // +Inf
        Just(0xFC00u16), // -Inf
        Just(0x8000u16), // -0
        Just(0x0000u16),
        Just(0x0001u16), // smallest subnormal
        Just(0x83FFu16), // largest negative subnormal
        Just(fp16::MAX_POS),
        Just(fp16::MAX_NEG),
    ]
}

/// A value drawn like KV data: Gaussian-ish bulk of scale `s`, with heavy
/// tails and values near zero.
fn realistic(scale: f32) -> impl Strategy<Value = u16> {
    (-1.0f32..1.0, -1.0f32..1.0, 0u8..20).prop_map(move |(a, b, kind)| {
        let g = (a + b) * 0.7; // triangular, a cheap bell shape
        let v = match kind {
            0 => g * scale * 12.0, // outlier
            1 | 2 => g * scale * 0.02, // near zero
            _ => g * scale,
        };
        fp16::from_f32(v)
    })
}

/// Values at and next to each threshold: T, T +- one FP16 step.
fn near(t: ThresholdSet) -> impl Strategy<Value = u16> {
    let ts = [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer];
    (0usize..4, -1i32..=1).prop_map(move |(i, d)| {
        let u = fp16::to_units(ts[i]);
        let step = fp16::grid_ulp(u.unsigned_abs()) as i64;
        fp16::round_nearest_even(u + d as i64 * step)
    })
}

/// A legal threshold set: four values sorted, from a scale-dependent mix.
pub fn threshold_set() -> impl Strategy<Value = ThresholdSet> {
    let v = prop_oneof![
        4 => (-4.0f32..4.0).prop_map(fp16::from_f32),
        1 => finite(),
        1 => Just(0u16),
    ];
    proptest::array::uniform4(v).prop_map(|mut a| {
        a.sort_by_key(|&x| fp16::to_units(x));
        ThresholdSet::new(a).expect("sorted finite set is legal")
    })
}

/// Realistic thresholds for a bulk of scale `s` (about 2% tails, 6% inner).
pub fn realistic_thresholds(s: f32) -> ThresholdSet {
    let f = fp16::from_f32;
    ThresholdSet::new([f(-2.3 * s), f(-0.075 * s), f(0.075 * s), f(2.3 * s)]).unwrap()
}

/// A threshold table of depth `layers`, every (layer, K/V) set drawn from a
/// mix of realistic sets, arbitrary legal sets and the all-zero reset set.
pub fn threshold_table(layers: usize) -> impl Strategy<Value = ThresholdTable> {
    let set = prop_oneof![
        3 => (0.25f32..4.0).prop_map(realistic_thresholds),
        3 => threshold_set(),
        1 => Just(ThresholdSet::default()),
    ];
    proptest::collection::vec((set.clone(), set), layers).prop_map(move |sets| {
        let mut t = ThresholdTable::new(layers);
        for (l, (k, v)) in sets.into_iter().enumerate() {
            let raw = |s: ThresholdSet| [s.lo_outer, s.lo_inner, s.hi_inner, s.hi_outer];
            t.write(l, Kv::K, raw(k)).expect("legal set");
            t.write(l, Kv::V, raw(v)).expect("legal set");
        }
        t
    })
}

/// A raw pattern of sparse beat sizes for [`fit_beat_sizes`]: each size in
/// `0..=lanes`, empty and full beats frequent.
pub fn beat_pattern(lanes: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(prop_oneof![2 => Just(0usize), 3 => 0..=lanes, 1 => Just(lanes)], 0..24)
}

/// Fits a raw beat-size pattern to a list of `n` entries, for
/// `oaken::dequantizer::split_sparse`: the pattern's sizes are used in
/// order, each cut to the entries left (so once the list is used up the
/// pattern's remaining beats are empty, and the last beat can be empty);
/// if the pattern runs out first, full beats and one partial beat follow.
/// The sizes sum to `n`.
pub fn fit_beat_sizes(pattern: &[usize], n: usize, lanes: usize) -> Vec<usize> {
    assert!(lanes >= 1);
    let mut left = n;
    let mut sizes: Vec<usize> = pattern
        .iter()
        .map(|&s| {
            let k = s.min(lanes).min(left);
            left -= k;
            k
        })
        .collect();
    while left > 0 {
        let k = left.min(lanes);
        sizes.push(k);
        left -= k;
    }
    sizes
}

/// A token of `n` elements for thresholds `t`: mostly realistic values, with
/// any mix of threshold-adjacent values, specials, arbitrary finite values,
/// constant runs and all-outlier tokens.
pub fn token(n: usize, t: ThresholdSet) -> impl Strategy<Value = Vec<u16>> {
    let elem = prop_oneof![
        12 => realistic(1.0),
        3 => near(t),
        1 => special(),
        1 => finite(),
    ];
    prop_oneof![
        8 => proptest::collection::vec(elem, n),
        1 => finite().prop_map(move |x| vec![x; n]),
        1 => proptest::collection::vec(prop_oneof![Just(t.hi_outer), finite()], n)
            .prop_map(move |v| v.into_iter().map(|x| bigger_than(x, t)).collect()),
    ]
}

/// Maps x into the outer group (for all-outlier tokens).
fn bigger_than(x: u16, t: ThresholdSet) -> u16 {
    let u = fp16::to_units(x);
    let [lo, _, _, hi] = t.units();
    if u > hi || u < lo {
        x
    } else if hi < fp16::MAX_UNITS {
        fp16::MAX_POS
    } else {
        fp16::MAX_NEG // hi = 65504 leaves only the lower tail (if lo > -65504)
    }
}
