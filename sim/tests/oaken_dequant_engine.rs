//! Properties of the dequantization engine model (docs/spec.md §4) on random
//! threshold tables, tokens, beat splits and corrupted sparse records.
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use sim::fp16;
use sim::oaken::dequantizer::{
    align, dequantize_stream, dequantize_token, outlier_map, pack_sparse, split_sparse, DenseRecord,
    DequantToken, SparseBeat,
};
use sim::oaken::format::GroupMeta;
use sim::oaken::params::{MiddleMode, OakenParams};
use sim::oaken::quantizer::{bound_x2, folded_clamped, quantize_token_detail, QuantEngine};
use sim::oaken::thresholds::{Kv, ThresholdTable};
use sim::testgen;

/// Legal parameters (spec §2.1): head_dim from tiny to several segments,
/// with a short last segment in some; every legal lane count for it.
fn params() -> impl Strategy<Value = OakenParams> {
    let hd = prop_oneof![
        Just(1usize),
        Just(4),
        Just(8),
        Just(16),
        Just(24),
        Just(64),
        Just(96),
        Just(128),
        Just(192),
        Just(256)
    ];
    let heads = prop_oneof![3 => Just(1usize), 1 => 2usize..=3];
    let mode = prop_oneof![Just(MiddleMode::Plain), Just(MiddleMode::Shifted), Just(MiddleMode::Paper)];
    (hd, heads, 0u32..=6, 2u32..=8, mode, 1usize..=3).prop_map(|(head_dim, heads, lk, ib, mode, layers)| {
        let p = OakenParams {
            head_dim,
            heads,
            lanes: 1 << lk.min(head_dim.trailing_zeros()),
            inlier_bits: ib,
            outlier_bits: ib + 1,
            layers,
            middle_mode: if mode == MiddleMode::Shifted && ib < 3 { MiddleMode::Plain } else { mode },
        };
        p.validate().unwrap();
        p
    })
}

fn kv() -> impl Strategy<Value = Kv> {
    prop_oneof![Just(Kv::K), Just(Kv::V)]
}

type Tok = (u8, Kv, Vec<u16>);

/// Parameters, a random table and 1..=4 token vectors, each with its layer
/// (past the table now and then), K/V, and values drawn for that layer's set.
fn case() -> impl Strategy<Value = (OakenParams, ThresholdTable, Vec<Tok>)> {
    params()
        .prop_flat_map(|p| {
            let layer = prop_oneof![6 => 0..p.layers as u8 + 2, 1 => Just(255u8)];
            let heads = proptest::collection::vec((layer, kv()), 1..=4);
            (Just(p.clone()), testgen::threshold_table(p.layers), heads)
        })
        .prop_flat_map(|(p, table, heads)| {
            let toks: Vec<_> = heads
                .into_iter()
                .map(|(l, k)| (Just(l), Just(k), testgen::token(p.vector_len(), table.lookup(l as usize, k).0)))
                .collect();
            (Just(p), Just(table), toks)
        })
}

/// The quantizer's records for a token vector: per head, its dense input
/// and its COO list.
fn quantize(p: &OakenParams, table: &ThresholdTable, (layer, kv, x): &Tok) -> Vec<(DenseRecord, Vec<u8>)> {
    let q = QuantEngine { params: p.clone(), table: table.clone() }.token(*layer as usize, *kv, x);
    (0..p.heads).map(|h| (DenseRecord::new(p, *layer, *kv, &q, h), q.coo[h].clone())).collect()
}

/// The reference decode (§2.10) of a well-formed record.
fn reference(p: &OakenParams, table: &ThresholdTable, rec: &DenseRecord, coo: &[u8]) -> Vec<u16> {
    let (t, _) = table.lookup(rec.layer as usize, rec.kv);
    dequantize_token(p, &t, &rec.dense, coo, &rec.counts, &rec.meta).expect("well-formed record")
}

/// Unused lanes filled with `g`-derived bytes, which must not be read.
fn with_garbage(mut beats: Vec<SparseBeat>, g: u8) -> Vec<SparseBeat> {
    for (k, b) in beats.iter_mut().enumerate() {
        for j in (b.count as usize).min(b.lanes.len())..b.lanes.len() {
            b.lanes[j] = g.wrapping_add((7 * j + 13 * k) as u8);
        }
    }
    beats
}

proptest! {
    #![proptest_config(Config { cases: testgen::cases(1000), failure_persistence: None, ..Config::default() })]

    /// (a) Round trip: quantizer output, packed, through the engine equals the
    /// reference dequantizer bit for bit, err = 0, and meets the §2.10 bound.
    #[test]
    fn round_trip_matches_reference_and_bound((p, table, toks) in case()) {
        // every head of every token, and one sparse stream packed across them
        let recs: Vec<(DenseRecord, Vec<u8>)> = toks.iter().flat_map(|t| quantize(&p, &table, t)).collect();
        let all: Vec<u8> = recs.iter().flat_map(|(_, c)| c.clone()).collect();
        let dense: Vec<DenseRecord> = recs.iter().map(|(r, _)| r.clone()).collect();
        let out = dequantize_stream(&p, &table, &dense, &pack_sparse(&all, p.lanes));
        prop_assert_eq!(out.len(), recs.len());
        for (k, (layer, kv, x)) in toks.iter().enumerate() {
            let (t, oob) = table.lookup(*layer as usize, *kv);
            prop_assert_eq!(oob, *layer as usize >= p.layers);
            let mut y = Vec::new();
            for h in 0..p.heads {
                let (rec, coo) = &recs[k * p.heads + h];
                let o = &out[k * p.heads + h];
                prop_assert_eq!(&o.x, &reference(&p, &table, rec, coo));
                prop_assert!(!o.err);
                prop_assert_eq!(o.layer_oob, oob);
                y.extend(o.x.iter().copied());
            }
            let (q, detail) = quantize_token_detail(&p, &t, x);
            for i in 0..p.vector_len() {
                let xs = fp16::to_units(fp16::sanitize(x[i]).0);
                let o = fp16::to_units(y[i]);
                let c = detail[i].class;
                let step = fp16::to_units(q.meta.groups[c.group as usize].step);
                // the §2.10 bound, in integers
                prop_assert!(folded_clamped(&p, &t, c, xs) || 2 * (o - xs).abs() <= bound_x2(p.coding(c.group), step, o),
                    "element {}: x={:#06x} out={:#06x} step={}", i, x[i], y[i], step);
            }
        }
    }

    /// (b) How the sparse stream is cut into beats does not change the
    /// output: packed across tokens, one entry per beat, each token's list
    /// packed on its own, and random splits with empty beats (and garbage in
    /// the unused lanes).
    #[test]
    fn beat_split_does_not_matter(
        (p, table, toks) in case(),
        pattern in testgen::beat_pattern(64),
        garbage in any::<u8>(),
    ) {
        let recs: Vec<(DenseRecord, Vec<u8>)> = toks.iter().flat_map(|t| quantize(&p, &table, t)).collect();
        let dense: Vec<DenseRecord> = recs.iter().map(|(r, _)| r.clone()).collect();
        let all: Vec<u8> = recs.iter().flat_map(|(_, c)| c.clone()).collect();
        let want: Vec<DequantToken> = recs
            .iter()
            .map(|(rec, coo)| DequantToken {
                x: reference(&p, &table, rec, coo),
                err: false,
                layer_oob: rec.layer as usize >= p.layers,
            })
            .collect();
        let packed = pack_sparse(&all, p.lanes);
        prop_assert!(packed.iter().rev().skip(1).all(|b| b.count as usize == p.lanes));
        let sizes = testgen::fit_beat_sizes(&pattern, all.len(), p.lanes);
        let splits = [
            packed,
            split_sparse(&all, p.lanes, &vec![1; all.len()]),
            recs.iter().flat_map(|(_, c)| pack_sparse(c, p.lanes)).collect(),
            with_garbage(split_sparse(&all, p.lanes, &sizes), garbage),
        ];
        for beats in splits {
            prop_assert_eq!(&dequantize_stream(&p, &table, &dense, &beats), &want, "sizes {:?}", sizes);
        }
    }
}

/// One corruption of a well-formed sparse record.
#[derive(Clone, Debug)]
enum Op {
    Drop(Index),
    Duplicate(Index),
    Swap(Index, Index),
    /// Replace the 6-bit index of an entry.
    SetIdx(Index, u8),
    /// Replace an entry by any byte.
    SetByte(Index, u8),
    /// Replace a segment count by any byte.
    SetCount(Index, u8),
    /// Insert random entries at a position.
    Extra(Index, Vec<u8>),
    /// Cut the list short.
    Truncate(Index),
    /// Give a beat a count above L (`s_count > L`).
    BeatOverLanes(Index, u8),
    /// Replace one group's metadata fields (any pattern, NaN and Inf too).
    Meta(Index, u16, u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<Index>().prop_map(Op::Drop),
        any::<Index>().prop_map(Op::Duplicate),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Op::Swap(a, b)),
        (any::<Index>(), 0u8..64).prop_map(|(a, i)| Op::SetIdx(a, i)),
        (any::<Index>(), any::<u8>()).prop_map(|(a, b)| Op::SetByte(a, b)),
        (any::<Index>(), prop_oneof![any::<u8>(), 0u8..=66]).prop_map(|(a, c)| Op::SetCount(a, c)),
        (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..6)).prop_map(|(a, v)| Op::Extra(a, v)),
        any::<Index>().prop_map(Op::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(a, c)| Op::BeatOverLanes(a, c)),
        (any::<Index>(), any::<u16>(), any::<u16>()).prop_map(|(g, m, s)| Op::Meta(g, m, s)),
    ]
}

proptest! {
    #![proptest_config(Config { cases: testgen::cases(1000), failure_persistence: None, ..Config::default() })]

    /// (c) Corrupted lists: the engine never panics, gives head_dim outputs,
    /// flags err exactly when the list is not well-formed (the reference's
    /// §2.8 check, or a beat count above L), decodes exactly when it is,
    /// takes a prefix of the list into increasing positions, and the good
    /// token after it decodes exactly. The stream is cut by the counts, so
    /// the corrupted list is padded or cut to its counts' sum (the MMU keeps
    /// that invariant; a list of another length shifts the next token).
    #[test]
    fn corrupted_records_are_contained(
        (p, table, toks) in case(),
        ops in proptest::collection::vec(op(), 1..4),
        pattern in testgen::beat_pattern(64),
        garbage in any::<u8>(),
    ) {
        let (mut bad, mut list) = quantize(&p, &table, &toks[0]).swap_remove(0);
        let (good, good_coo) = quantize(&p, &table, toks.last().unwrap()).pop().unwrap();
        let mut meta_changed = false;
        for o in ops.iter().filter(|o| !matches!(o, Op::BeatOverLanes(..))) {
            let n = list.len();
            match o {
                Op::Drop(i) if n > 0 => { list.remove(i.index(n)); }
                Op::Duplicate(i) if n > 0 => { let k = i.index(n); list.insert(k, list[k]); }
                Op::Swap(a, b) if n > 0 => list.swap(a.index(n), b.index(n)),
                Op::SetIdx(i, v) if n > 0 => { let k = i.index(n); list[k] = (v << 2) | (list[k] & 3); }
                Op::SetByte(i, v) if n > 0 => list[i.index(n)] = *v,
                Op::SetCount(s, c) => { let k = s.index(bad.counts.len()); bad.counts[k] = *c; }
                Op::Extra(i, v) => { let k = i.index(n + 1); list.splice(k..k, v.iter().copied()); }
                Op::Truncate(i) => list.truncate(i.index(n + 1)),
                Op::Meta(g, m, s) => {
                    bad.meta.groups[g.index(3)] = GroupMeta { min: *m, step: *s };
                    meta_changed = true;
                }
                _ => {}
            }
        }
        // the list the counts frame: padded with garbage or cut
        let n = bad.list_len();
        list.extend((list.len()..n).map(|j| garbage.wrapping_mul(j as u8 | 1)));
        list.truncate(n);
        let sizes = testgen::fit_beat_sizes(&pattern, list.len(), p.lanes);
        let mut beats = with_garbage(split_sparse(&list, p.lanes, &sizes), garbage);
        let mut over = false;
        for o in &ops {
            if let Op::BeatOverLanes(b, c) = o {
                // a full beat, so the list stays as sent
                let full: Vec<usize> = (0..beats.len()).filter(|&k| beats[k].count as usize == p.lanes).collect();
                if full.is_empty() {
                    continue;
                }
                let k = full[b.index(full.len())];
                // s_count in L+1 ..= 255: the beat's L lanes all count
                beats[k].count = (p.lanes + 1 + *c as usize % (255 - p.lanes)) as u8;
                over = true;
            }
        }
        let well_formed = outlier_map(&p, &list, &bad.counts).is_ok() && !over;

        beats.extend(pack_sparse(&good_coo, p.lanes));
        let out = dequantize_stream(&p, &table, &[bad.clone(), good.clone()], &beats);
        prop_assert_eq!(out.len(), 2);
        prop_assert!(out.iter().all(|t| t.x.len() == p.head_dim));
        prop_assert_eq!(out[0].err, !well_formed);
        if well_formed && !meta_changed {
            prop_assert_eq!(&out[0].x, &reference(&p, &table, &bad, &list));
        }
        // the taken entries are a prefix of the list, in increasing position
        let a = align(&p, &bad.counts, &list);
        let placed: Vec<u8> = a.map.iter().flatten().map(|e| e.encode()).collect();
        prop_assert_eq!(&placed[..], &list[..a.taken]);
        prop_assert_eq!(a.malformed.any() || over, out[0].err);
        // the next token is untouched
        let want_good = DequantToken {
            x: reference(&p, &table, &good, &good_coo),
            err: false,
            layer_oob: toks.last().unwrap().0 as usize >= p.layers,
        };
        prop_assert_eq!(&out[1], &want_good);
    }
}
