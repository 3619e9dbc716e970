//! The worked examples (docs/spec.md §11.12) and degenerate cases (§11.9),
//! with the values computed by hand in the spec, plus property tests of the
//! PU -> QU -> DQU chain (§11.8.4).

use super::dequantizer::Dequantizer;
use super::params::{ConfigTable, LayerConfig, TitanusParams};
use super::pruner::{prune, Pruned};
use super::quantizer::{reconstruct, Level, Phase, QuantError, Quantizer, Record, SzEntry, TokenOut};
use crate::oaken::thresholds::Kv;
use proptest::prelude::*;

fn params(channels: usize, max_levels: usize) -> TitanusParams {
    TitanusParams { channels, lanes: channels.min(4), layers: 1, max_levels, max_prefill: 8 }
}

fn table(threshold: u8, bits: u8) -> ConfigTable {
    let mut t = ConfigTable::new(1);
    t.write(0, Kv::K, LayerConfig { threshold, bits }).unwrap();
    t
}

fn rec(index: [u8; 4], label: [u8; 4], codes: &[u8]) -> Record {
    Record {
        index: index.map(|b| b == 1).to_vec(),
        label: label.map(|b| b == 1).to_vec(),
        codes: codes.to_vec(),
    }
}

fn e(channel: u16, level: u8, scale: u16, zero: i16, start: u16) -> SzEntry {
    SzEntry { channel, level, scale, zero, start }
}

/// Example 1 (spec §11.12): 4 channels, 2 bits, threshold 3, max_levels 2.
#[test]
fn example_1_prefill_decode_and_level_limit() {
    let p = params(4, 2);
    let tokens: [[i8; 4]; 5] =
        [[10, 1, 5, -128], [-3, -2, 5, 4], [2, 0, -1, 20], [12, 7, 5, -50], [-20, 0, 2, 30]];
    let pruned: Vec<Pruned> = tokens.iter().map(|t| prune(t, 3)).collect();
    assert_eq!(pruned[0], Pruned { index: vec![true, false, true, true], values: vec![10, 5, -128] });
    assert_eq!(pruned[1].values, vec![-3, 5, 4], "|-3| = threshold is kept");
    assert_eq!(pruned[2].values, vec![20]);
    assert_eq!(pruned[4].values, vec![-20, 30]);

    let mut q = Quantizer::new(p, Kv::K);
    assert_eq!(q.phase(), Phase::Idle);
    assert!(q.start(0, &table(3, 2)).is_empty());
    for t in &pruned[..3] {
        q.prefill(t).unwrap();
    }
    assert_eq!(q.mmf(0), (10, -3));
    assert_eq!(q.mmf(1), (-128, 127), "all pruned: MMF keeps its initial values");
    assert_eq!(q.mmf(2), (5, 5));
    assert_eq!(q.mmf(3), (20, -128));

    let mut outs = q.decode(&pruned[3]).unwrap();
    outs.extend(q.decode(&pruned[4]).unwrap());
    let lv = |c: usize, l: usize| {
        let v = q.levels(c)[l];
        (v.scale, v.zero, v.tl, v.th, v.start)
    };
    assert_eq!(lv(0, 0), (1110, 1, -6, 10, 0));
    assert_eq!(lv(2, 0), (256, -4, 4, 7, 0));
    assert_eq!(lv(3, 0), (12630, 3, -128, 24, 0));
    assert_eq!(lv(0, 1), (1280, 1, -7, 12, 3));
    assert_eq!(lv(1, 0), (256, -6, 6, 9, 3));
    assert_eq!(lv(3, 1), (13483, 2, -128, 79, 4));
    assert_eq!(q.level_counts(), vec![2, 1, 1, 2]);

    let want = [
        TokenOut {
            pos: 0,
            record: rec([1, 0, 1, 1], [1, 0, 1, 0], &[3, 1]),
            entries: vec![e(0, 0, 1110, 1, 0), e(2, 0, 256, -4, 0), e(3, 0, 12630, 3, 0)],
            saturated: 0,
        },
        TokenOut { pos: 1, record: rec([1, 0, 1, 1], [0, 0, 1, 1], &[1, 3]), entries: vec![], saturated: 0 },
        TokenOut { pos: 2, record: rec([0, 0, 0, 1], [0, 0, 0, 1], &[3]), entries: vec![], saturated: 0 },
        TokenOut {
            pos: 3,
            record: rec([1, 1, 1, 1], [1, 1, 1, 1], &[3, 1, 1, 2]),
            entries: vec![e(0, 1, 1280, 1, 3), e(1, 0, 256, -6, 3)],
            saturated: 0,
        },
        TokenOut {
            pos: 4,
            record: rec([1, 0, 0, 1], [0, 0, 0, 1], &[3]),
            entries: vec![e(3, 1, 13483, 2, 4)],
            saturated: 1,
        },
    ];
    assert_eq!(outs, want);
    assert_eq!(q.status.levels_opened, 6);
    assert_eq!((q.status.saturated, q.status.limit_hit), (1, true));
    assert_eq!((q.status.empty_channels, q.status.single_value_channels, q.status.no_prefill), (1, 1, false));

    // stored bits and layouts
    let bits: Vec<usize> = outs.iter().map(|o| o.record.stored_bits(2)).collect();
    assert_eq!(bits, vec![11, 11, 7, 16, 8]);
    let s = outs[0].record.pack(2);
    assert_eq!(s.iter().enumerate().fold(0u32, |a, (i, &b)| a | (b as u32) << i), 0x3BD);
    assert_eq!(e(3, 1, 13483, 2, 4).word(), 0x0031_0004_0002_34AB);
    assert_eq!(e(1, 0, 256, -6, 3).word(), 0x0010_0003_01FA_0100);

    // DQU
    let mut d = Dequantizer::new(&p);
    let got: Vec<Vec<i8>> = outs
        .iter()
        .map(|o| {
            o.entries.iter().for_each(|x| d.table.load(x).unwrap());
            let r = Record::unpack(&o.record.pack(2), 4, 2).unwrap();
            d.dequantize(o.pos, &r)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            vec![9, 0, 5, -128],
            vec![-4, 0, 5, 0],
            vec![0, 0, 0, 0],
            vec![10, 7, 5, -49],
            vec![-5, 0, 0, 53]
        ]
    );
    let c = d.counters;
    assert_eq!((c.pruned, c.label_zero, c.zero_point, c.multiplies, c.missing_level), (7, 3, 2, 8, 0));
}

/// Example 2 (spec §11.12): bit width 2, every value at an extreme.
#[test]
fn example_2_two_bits_at_the_extremes() {
    let l = Level::new(-128, 127, 2, 0);
    assert_eq!((l.scale, l.zero, l.tl, l.th), (21760, 2, -128, 127));
    assert_eq!((l.code(-128, 2), l.code(127, 2)), (0, 3));
    assert_eq!((reconstruct(l.scale, l.zero, 0), reconstruct(l.scale, l.zero, 3)), (-128, 85));
    let lo = Level::new(-128, -128, 2, 0);
    assert_eq!((lo.scale, lo.zero, lo.tl, lo.th, lo.code(-128, 2)), (256, 129, -128, -126, 1));
    assert_eq!(reconstruct(lo.scale, lo.zero, 1), -128);
    let hi = Level::new(127, 127, 2, 0);
    assert_eq!((hi.scale, hi.zero, hi.tl, hi.th, hi.code(127, 2)), (256, -126, 126, 127, 1));
    assert_eq!(reconstruct(hi.scale, hi.zero, 1), 127);
}

#[test]
fn decode_before_any_prefill_opens_single_value_levels() {
    let p = params(4, 4);
    let mut q = Quantizer::new(p, Kv::K);
    q.start(0, &table(0, 3));
    let outs = q.decode(&prune(&[7, 0, -128, 127], 0)).unwrap();
    assert_eq!(outs.len(), 1, "the empty prefill emits nothing");
    assert!(q.status.no_prefill);
    assert_eq!(q.status.empty_channels, 4);
    assert_eq!(q.level_counts(), vec![1, 0, 1, 1]);
    let mut d = Dequantizer::new(&p);
    outs[0].entries.iter().for_each(|x| d.table.load(x).unwrap());
    assert_eq!(d.dequantize(0, &outs[0].record), vec![7, 0, -128, 127], "a single-value level is exact");
}

#[test]
fn empty_prefill_then_flush() {
    let mut q = Quantizer::new(params(4, 4), Kv::K);
    q.start(0, &table(0, 4));
    assert_eq!(q.flush().unwrap(), vec![]);
    assert_eq!(q.phase(), Phase::Decode);
    assert!(q.status.no_prefill && q.status.empty_channels == 4);
    assert_eq!(q.flush().unwrap(), vec![], "flush in DECODE does nothing");
}

#[test]
fn all_pruned_channel_never_gets_a_level() {
    let p = params(4, 4);
    let mut q = Quantizer::new(p, Kv::K);
    q.start(0, &table(10, 2));
    for _ in 0..3 {
        q.prefill(&prune(&[50, 9, -9, 0], 10)).unwrap();
    }
    let outs = q.flush().unwrap();
    assert_eq!(q.status.empty_channels, 3);
    assert_eq!(outs[0].entries.len(), 1);
    let mut d = Dequantizer::new(&p);
    outs[0].entries.iter().for_each(|x| d.table.load(x).unwrap());
    for o in &outs {
        assert_eq!(d.dequantize(o.pos, &o.record), vec![50, 0, 0, 0]);
    }
    assert_eq!(d.counters.missing_level, 0, "pruned elements never look up a level");
}

#[test]
fn rejected_inputs_change_nothing() {
    let p = TitanusParams { max_prefill: 2, ..params(4, 4) };
    let t = prune(&[1, 2, 3, 4], 0);
    let mut q = Quantizer::new(p, Kv::V);
    assert_eq!(q.prefill(&t), Err(QuantError::NoStart));
    assert_eq!(q.decode(&t), Err(QuantError::NoStart));
    assert_eq!(q.flush(), Err(QuantError::NoStart));
    q.start(0, &table(0, 4));
    q.prefill(&t).unwrap();
    q.prefill(&t).unwrap();
    assert_eq!(q.prefill(&t), Err(QuantError::PrefillFull));
    assert_eq!(q.prefill(&Pruned { index: vec![true; 3], values: vec![1; 3] }), Err(QuantError::BadVector));
    assert_eq!(q.decode(&t).unwrap().len(), 3);
    assert_eq!(q.prefill(&t), Err(QuantError::PrefillAfterDecode));
    assert_eq!(q.status.rejected, 6);
    // V reads its own table entry (reset value: 4 bits); layer 5 is past the table
    let outs = q.start(5, &table(0, 2));
    assert!(outs.is_empty() && q.status.layer_oob && q.bits() == 4);
}

#[test]
fn start_during_prefill_flushes_first() {
    let mut q = Quantizer::new(params(4, 4), Kv::K);
    q.start(0, &table(0, 4));
    q.prefill(&prune(&[1, 2, 3, 4], 0)).unwrap();
    let outs = q.start(0, &table(0, 4));
    assert_eq!(outs.len(), 1);
    assert_eq!(q.phase(), Phase::Prefill);
    assert_eq!(q.level_counts(), vec![0; 4]);
}

/// A drifting random sequence through PU -> QU -> packed record -> DQU.
fn chain(channels: usize, bits: u8, threshold: u8, max_levels: usize, prefill: usize, seed: u64, n: usize) {
    let p = TitanusParams { channels, lanes: 1, layers: 1, max_levels, max_prefill: 64 };
    let mut s = seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut centre: Vec<i64> = (0..channels).map(|_| (rnd() % 41) as i64 - 20).collect();
    let mut q = Quantizer::new(p, Kv::K);
    let mut d = Dequantizer::new(&p);
    q.start(0, &table(threshold, bits));
    let mut xs = Vec::new();
    let mut outs = Vec::new();
    for t in 0..n {
        let x: Vec<i8> = centre
            .iter_mut()
            .map(|c| {
                *c += (rnd() % 5) as i64 - 2; // drift: new levels open
                (*c + (rnd() % 21) as i64 - 10).clamp(-128, 127) as i8
            })
            .collect();
        let pr = prune(&x, threshold);
        if t < prefill {
            q.prefill(&pr).unwrap();
        } else {
            outs.extend(q.decode(&pr).unwrap());
        }
        xs.push(x);
        assert!(q.level_counts().iter().all(|&l| l <= max_levels));
    }
    outs.extend(q.flush().unwrap());
    assert_eq!(outs.len(), n);
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.pos as usize, i);
        o.entries.iter().for_each(|x| d.table.load(x).unwrap());
        let r = Record::unpack(&o.record.pack(bits), channels, bits).unwrap();
        let y = d.dequantize(o.pos, &r);
        for c in 0..channels {
            let x = xs[i][c];
            if !r.index[c] {
                assert_eq!(y[c], 0, "pruned reconstructs to 0");
                continue;
            }
            let lvl = q.levels(c).iter().rev().find(|l| l.start <= o.pos).expect("kept element has a level");
            if lvl.contains(x as i32) {
                let err = (y[c] as i64 - x as i64).abs();
                assert!(512 * err <= lvl.scale as i64 + 256, "bound: x={x} y={} {lvl:?}", y[c]);
            }
        }
    }
    let c = d.counters;
    assert_eq!(c.missing_level, 0);
    assert_eq!(c.pruned + c.label_zero + c.zero_point + c.multiplies, (n * channels) as u64);
    let out_of_range: u64 = outs.iter().map(|o| o.saturated as u64).sum();
    assert_eq!(out_of_range, q.status.saturated);
    if max_levels == 16 {
        assert!(q.level_counts().iter().all(|&l| l <= 16));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn chain_properties(
        channels in 1usize..24,
        bits in 2u8..=4,
        threshold in 0u8..40,
        max_levels in 1usize..=16,
        prefill in 0usize..12,
        seed in any::<u64>(),
        n in 1usize..60,
    ) {
        chain(channels, bits, threshold, max_levels, prefill, seed, n);
    }
}

#[test]
fn long_drift_reaches_the_level_limit_flagged() {
    let p = TitanusParams { channels: 1, lanes: 1, layers: 1, max_levels: 3, max_prefill: 4 };
    let mut q = Quantizer::new(p, Kv::K);
    q.start(0, &table(0, 2));
    q.prefill(&prune(&[1], 0)).unwrap();
    let mut sat = 0;
    for x in [10i8, 40, 90, 127, -128, 5] {
        sat += q.decode(&prune(&[x], 0)).unwrap().iter().map(|o| o.saturated).sum::<u32>();
    }
    assert_eq!(q.level_counts(), vec![3]);
    assert!(q.status.limit_hit && sat == q.status.saturated as u32 && sat >= 2);
    chain(8, 3, 0, 16, 4, 7, 2000);
}
