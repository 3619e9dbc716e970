//! Oaken dequantizer models. Paper: Oaken (ISCA 2025) §4.4 Eq. 4 inverted,
//! §5.2 "Dequantization engine".
//!
//! - The **reference dequantizer** (`outlier_map`, `dequantize_token`): the
//!   decode rule of docs/spec.md §2.10 for well-formed records only.
//! - The **engine model** (`dequantize_stream`, `dequantize_record`,
//!   `align`): the transaction-level, bit-exact model of the dequantization
//!   engine of docs/spec.md §4, whose streams are the RTL ports of §4.2. It
//!   defines an output for every input, malformed sparse records included
//!   (§4.3), and equals the reference on every well-formed record.

use super::format::{CooEntry, GroupMeta, Meta};
use super::params::{CodeKind, Group, OakenParams, GROUPS, SEGMENT};
use super::quantizer::{Class, GroupParams, QuantToken};
use super::thresholds::{Kv, ThresholdSet, ThresholdTable};
use crate::fp16;

/// Where each element's outlier entry sits: None for middle-group elements.
/// Fails on a list that breaks spec §2.8 (the RTL engine's recovery rules for
/// such lists belong to the dequantization engine model).
pub fn outlier_map(p: &OakenParams, coo: &[u8], counts: &[u8]) -> Result<Vec<Option<CooEntry>>, String> {
    assert_eq!(counts.len(), p.segments(), "outlier_map: one count per segment");
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    if total != coo.len() {
        return Err(format!("segment counts sum to {total} but the list has {} entries", coo.len()));
    }
    let mut map = vec![None; p.head_dim];
    let mut k = 0;
    for (s, &count) in counts.iter().enumerate() {
        let mut prev: Option<u8> = None;
        for _ in 0..count {
            let e = CooEntry::decode(coo[k]);
            k += 1;
            if e.idx as usize >= p.segment_len(s) {
                return Err(format!("index {} out of range in segment {s}", e.idx));
            }
            if prev.is_some_and(|pi| e.idx <= pi) {
                return Err(format!("index {} not increasing in segment {s}", e.idx));
            }
            prev = Some(e.idx);
            map[s * SEGMENT + e.idx as usize] = Some(e);
        }
    }
    Ok(map)
}

/// Decodes one element: the group's full code and its class are recovered
/// from the dense slot and, for outliers, the COO entry.
pub fn decode_code(p: &OakenParams, dense: u8, entry: Option<CooEntry>) -> (Group, u64) {
    match entry {
        None => (Group::Middle, dense as u64),
        Some(e) => {
            let g = if e.outer { Group::Outer } else { Group::Inner };
            (g, (e.hi as u64) << p.inlier_bits | dense as u64)
        }
    }
}

/// Exact reconstruction in units (before the FP16 output rounding).
pub fn reconstruct_units(
    p: &OakenParams,
    t: &ThresholdSet,
    params: &[GroupParams; 3],
    group: Group,
    code: u64,
) -> (Class, i64) {
    let coding = p.coding(group);
    let gp = &params[group as usize];
    let [lo_o, lo_i, hi_i, hi_o] = t.units();
    let (lo, hi) = if group == Group::Outer { (lo_o, hi_o) } else { (lo_i, hi_i) };
    match coding.kind {
        CodeKind::SideMagnitude => {
            let upper = (code >> coding.mag_bits) & 1 == 1;
            let v = gp.reconstruct(code & coding.levels_minus_one());
            (Class { group, upper }, if upper { hi + v } else { lo - v })
        }
        CodeKind::Folded => {
            // the side is the sign of the decoded folded value (spec §2.10)
            let v = gp.reconstruct(code);
            let upper = v >= 0;
            (Class { group, upper }, if upper { hi + v } else { lo + v })
        }
        CodeKind::Plain => (Class { group, upper: false }, gp.reconstruct(code)),
    }
}

pub fn group_params(meta: &Meta) -> [GroupParams; 3] {
    GROUPS.map(|g| GroupParams::from_meta(meta.groups[g as usize]))
}

/// Decodes one head of a token to FP16 (round to nearest even, saturating):
/// its `head_dim` dense slots, its COO list and segment counts, and the
/// token's metadata word.
pub fn dequantize_token(
    p: &OakenParams,
    t: &ThresholdSet,
    dense: &[u8],
    coo: &[u8],
    counts: &[u8],
    meta: &Meta,
) -> Result<Vec<u16>, String> {
    assert_eq!(dense.len(), p.head_dim, "dequantize_token: one head's slots");
    let map = outlier_map(p, coo, counts)?;
    let params = group_params(meta);
    Ok(dense
        .iter()
        .zip(&map)
        .map(|(&d, &e)| {
            let (g, code) = decode_code(p, d, e);
            fp16::round_nearest_even(reconstruct_units(p, t, &params, g, code).1)
        })
        .collect())
}

// ---------------------------------------------------------------------------
// Dequantization engine model (docs/spec.md §4)
// ---------------------------------------------------------------------------

/// One (token, head)'s dense input as the engine receives it (spec §4.2:
/// `d_layer`, `d_kv`, `d_meta`, `d_counts`, and the `d_dense` slots of all
/// `head_beats` dense beats, element 0 first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseRecord {
    /// `d_layer`; a layer `>= layers` reads layer 0 (spec §2.3).
    pub layer: u8,
    /// `d_kv`.
    pub kv: Kv,
    /// `d_meta`: the token's metadata word (§2.9). Not checked; its FP16
    /// fields are sanitised on use (§4.4).
    pub meta: Meta,
    /// `d_counts`: the head's `segments` segment counts (from the MMU).
    pub counts: Vec<u8>,
    /// `head_dim` dense slots; only the low `inlier_bits` bits of each are
    /// read (the port is `inlier_bits` wide per lane).
    pub dense: Vec<u8>,
}

impl DenseRecord {
    /// Head `h` of a quantizer output (spec §2.9).
    pub fn new(p: &OakenParams, layer: u8, kv: Kv, q: &QuantToken, h: usize) -> Self {
        DenseRecord {
            layer,
            kv,
            meta: q.meta.clone(),
            counts: q.head_counts(p, h).to_vec(),
            dense: q.head_dense(p, h).to_vec(),
        }
    }

    /// Entries of the sparse stream this record takes: the sum of its counts.
    pub fn list_len(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }
}

/// One beat of the sparse input (spec §4.2: `s_coo`, `s_count`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseBeat {
    /// `L = lanes` raw COO entries; entry `j` is valid for `j < count`, the
    /// other lanes are ignored and may hold anything.
    pub lanes: Vec<u8>,
    /// `s_count`: 0..=L for a well-formed beat; above L is malformed and
    /// counts as L (§4.3 condition 3).
    pub count: u8,
}

/// The memory layout of a sparse stream (spec §4.2 "packed"): full beats of
/// `lanes` entries, the last one partial; no beat for an empty list. Unused
/// lanes are 0.
pub fn pack_sparse(entries: &[u8], lanes: usize) -> Vec<SparseBeat> {
    assert!((1..=255).contains(&lanes), "pack_sparse: lanes {lanes} out of range");
    let sizes: Vec<usize> = entries.chunks(lanes).map(<[u8]>::len).collect();
    split_sparse(entries, lanes, &sizes)
}

/// Cuts a list into sparse beats of the given sizes (each `0..=lanes`,
/// summing to `entries.len()`; empty beats are allowed anywhere). Unused
/// lanes are 0. For tests of unpacked streams (spec §4.2: a beat may carry
/// any count from 0 to L).
pub fn split_sparse(entries: &[u8], lanes: usize, sizes: &[usize]) -> Vec<SparseBeat> {
    assert!((1..=255).contains(&lanes), "split_sparse: lanes {lanes} out of range");
    assert_eq!(sizes.iter().sum::<usize>(), entries.len(), "split_sparse: sizes do not cover the list");
    let mut beats = Vec::with_capacity(sizes.len());
    let mut rest = entries;
    for &n in sizes {
        assert!(n <= lanes, "split_sparse: beat of {n} entries with {lanes} lanes");
        let (now, later) = rest.split_at(n);
        rest = later;
        let mut l = now.to_vec();
        l.resize(lanes, 0);
        beats.push(SparseBeat { lanes: l, count: n as u8 });
    }
    beats
}

/// Which of the malformed-list conditions of spec §4.3 hold for a token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Malformed {
    /// 1. an entry of the token's list is never taken.
    pub untaken: bool,
    /// 2. a segment count exceeds its segment's length.
    pub count_over_len: bool,
    /// 3. an entry of the token's list came from a beat with `s_count > L`.
    pub beat_over_lanes: bool,
}

impl Malformed {
    /// `out_err`.
    pub fn any(&self) -> bool {
        self.untaken || self.count_over_len || self.beat_over_lanes
    }
}

/// A token's list cut back into beats (spec §4.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// Per element (`head_dim`): the entry taken into its lane, if any.
    pub map: Vec<Option<CooEntry>>,
    /// Entries taken; the taken entries are always `entries[..taken]`.
    pub taken: usize,
    /// Conditions 1 and 2 (condition 3 is the stream's, [`dequantize_stream`]).
    pub malformed: Malformed,
}

/// Spec §4.3, literally, on one token's list `E_0 .. E_(n-1)` (`n` is the
/// sum of `counts` when the stream cuts it; any length is accepted here).
pub fn align(p: &OakenParams, counts: &[u8], entries: &[u8]) -> Alignment {
    let l = p.lanes;
    assert_eq!(counts.len(), p.segments(), "align: one count per segment");
    let mut malformed = Malformed::default();
    // P[s] = cnt[0] + ... + cnt[s-1]
    let mut prefix = vec![0usize; p.segments() + 1];
    for s in 0..p.segments() {
        prefix[s + 1] = prefix[s] + counts[s] as usize;
        malformed.count_over_len |= counts[s] as usize > p.segment_len(s);
    }
    let mut map = vec![None; p.head_dim];
    let mut g = 0; // the first entry not yet taken
    for b in 0..p.head_beats() {
        let sb = b * l / SEGMENT;
        let i0 = b * l % SEGMENT;
        let mut prev: Option<u8> = None;
        while g < entries.len() {
            let e = CooEntry::decode(entries[g]);
            let idx = e.idx as usize;
            let take = prefix[sb] <= g
                && g < prefix[sb + 1]
                && i0 <= idx
                && idx < i0 + l
                && prev.is_none_or(|pi| e.idx > pi);
            if !take {
                break; // it and everything after it wait for later beats
            }
            map[b * l + idx - i0] = Some(e);
            prev = Some(e.idx);
            g += 1;
        }
    }
    malformed.untaken = g < entries.len();
    Alignment { map, taken: g, malformed }
}

/// An FP16 field of the metadata word in units, spec §4.4: sanitised first
/// (§2.2.1: NaN -> +0, +-Inf -> +-65504), so any pattern is accepted.
pub fn meta_field_units(x: u16) -> i64 {
    fp16::to_units(fp16::sanitize(x).0)
}

/// The per-group decode constants of a metadata word as the engine reads it
/// (spec §4.4; any pattern).
pub fn engine_group_params(meta: &Meta) -> [GroupParams; 3] {
    GROUPS.map(|g| {
        let m: GroupMeta = meta.groups[g as usize];
        GroupParams { meta: m, min_units: meta_field_units(m.min), step_units: meta_field_units(m.step) }
    })
}

/// The engine's output for one token (spec §4.2: `out_data` of all beats,
/// `out_err`, `out_layer_oob`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DequantToken {
    /// `head_dim` FP16 patterns, element 0 first.
    pub x: Vec<u16>,
    /// The sparse record is malformed (spec §4.3).
    pub err: bool,
    /// The layer was `>= layers`; layer 0's thresholds were used.
    pub layer_oob: bool,
}

/// Decodes one (token, head) from its dense input and its list (the
/// `rec.list_len()` entries the stream gives it; `bad_beat`: one of them came
/// from a beat with `s_count > L`). Spec §4.3 (alignment) and §4.4 (decoding).
pub fn dequantize_record(
    p: &OakenParams,
    table: &ThresholdTable,
    rec: &DenseRecord,
    entries: &[u8],
    bad_beat: bool,
) -> DequantToken {
    p.validate().expect("invalid Oaken parameters");
    assert_eq!(table.layers(), p.layers, "threshold table depth differs from the parameters' layers");
    assert_eq!(rec.dense.len(), p.head_dim, "dense record has {} slots, not head_dim", rec.dense.len());
    let (t, layer_oob) = table.lookup(rec.layer as usize, rec.kv);
    let a = align(p, &rec.counts, entries);
    let params = engine_group_params(&rec.meta);
    let mask = (1u16 << p.inlier_bits) - 1;
    let x = rec
        .dense
        .iter()
        .zip(&a.map)
        .map(|(&d, &e)| {
            let (g, code) = decode_code(p, (d as u16 & mask) as u8, e);
            fp16::round_nearest_even(reconstruct_units(p, &t, &params, g, code).1)
        })
        .collect();
    DequantToken { x, err: a.malformed.any() || bad_beat, layer_oob }
}

/// The engine on a stream of (token, head) records and one continuous sparse
/// stream (spec §4.2, §4.3): the entries of all beats in order (each beat's
/// first `min(s_count, L)` lanes) are cut by the records' counts, record `i`
/// taking the next `list_len()` entries. If the stream ends before a
/// record's list is complete, that record and the ones after it produce no
/// output (the engine would wait for more sparse beats).
pub fn dequantize_stream(
    p: &OakenParams,
    table: &ThresholdTable,
    recs: &[DenseRecord],
    sparse: &[SparseBeat],
) -> Vec<DequantToken> {
    let l = p.lanes;
    let mut entries = Vec::new();
    let mut bad = Vec::new();
    for b in sparse {
        assert_eq!(b.lanes.len(), l, "a sparse beat has {} lanes, not {l}", b.lanes.len());
        let c = b.count as usize;
        entries.extend_from_slice(&b.lanes[..c.min(l)]);
        bad.extend(std::iter::repeat_n(c > l, c.min(l)));
    }
    let mut out = Vec::with_capacity(recs.len());
    let mut pos = 0;
    for rec in recs {
        let n = rec.list_len();
        if pos + n > entries.len() {
            break;
        }
        let any_bad = bad[pos..pos + n].iter().any(|&b| b);
        out.push(dequantize_record(p, table, rec, &entries[pos..pos + n], any_bad));
        pos += n;
    }
    out
}

/// Hand-worked examples of docs/spec.md §4.3, §4.4 and §4.6. Every expected
/// value is derived from the spec's rules (derivations in the comments and
/// in §4.6), not taken from the model's output.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::oaken::params::MiddleMode;

    const THR: [u16; 4] = [0xC000, 0xB400, 0x3400, 0x4000]; // -2, -0.25, 0.25, 2

    fn p16() -> OakenParams {
        OakenParams { head_dim: 16, lanes: 4, layers: 1, middle_mode: MiddleMode::Plain, ..Default::default() }
    }

    fn table(p: &OakenParams) -> ThresholdTable {
        let mut t = ThresholdTable::new(p.layers);
        t.write(0, Kv::K, THR).unwrap();
        t
    }

    /// §4.6 metadata: outer (1.0, 0.5), middle (-1.0, 0.125), inner (-0.25, 2^-6).
    fn meta() -> Meta {
        Meta {
            groups: [
                GroupMeta { min: 0x3C00, step: 0x3800 },
                GroupMeta { min: 0xBC00, step: 0x3000 },
                GroupMeta { min: 0xB400, step: 0x2400 },
            ],
        }
    }

    /// §4.6 dense record: slot i = i (mod 16).
    fn rec(p: &OakenParams, counts: &[u8]) -> DenseRecord {
        DenseRecord {
            layer: 0,
            kv: Kv::K,
            meta: meta(),
            counts: counts.to_vec(),
            dense: (0..p.head_dim).map(|i| (i % 16) as u8).collect(),
        }
    }

    /// §4.6: element i as a middle element, -1 + i/8.
    const MIDDLE: [u16; 16] = [
        0xBC00, 0xBB00, 0xBA00, 0xB900, 0xB800, 0xB600, 0xB400, 0xB000, //
        0x0000, 0x3000, 0x3400, 0x3600, 0x3800, 0x3900, 0x3A00, 0x3B00,
    ];

    /// §4.6 well-formed decode: 1 -> -0.234375, 6 -> 6.0, 9 -> 0.140625.
    fn good16() -> Vec<u16> {
        let mut y = MIDDLE.to_vec();
        y[1] = 0xB380;
        y[6] = 0x4600;
        y[9] = 0x3080;
        y
    }

    const GOOD_LIST: [u8; 3] = [0x04, 0x1B, 0x25];
    const BAD_LIST: [u8; 4] = [0x04, 0x1B, 0x16, 0x25];

    /// One record on its own stream; None when the stream is too short.
    fn try_run(p: &OakenParams, r: &DenseRecord, beats: &[SparseBeat]) -> Option<DequantToken> {
        dequantize_stream(p, &table(p), std::slice::from_ref(r), beats).pop()
    }

    fn run(p: &OakenParams, r: &DenseRecord, beats: &[SparseBeat]) -> DequantToken {
        try_run(p, r, beats).expect("the stream holds the record's list")
    }

    fn f(v: f32) -> u16 {
        fp16::from_f32(v)
    }

    #[test]
    fn hex_patterns_of_the_worked_example() {
        for (i, &h) in MIDDLE.iter().enumerate() {
            assert_eq!(h, f(-1.0 + i as f32 / 8.0), "element {i}");
        }
        assert_eq!(0xB380, f(-0.234375));
        assert_eq!(0x4600, f(6.0));
        assert_eq!(0x3080, f(0.140625));
        assert_eq!(0xB600, f(-0.375));
        let e = |idx: u8, outer: bool, hi: bool| CooEntry { idx, outer, hi }.encode();
        assert_eq!(GOOD_LIST, [e(1, false, false), e(6, true, true), e(9, false, true)]);
        assert_eq!(BAD_LIST[2], e(5, true, false));
        assert_eq!(meta().groups[2].step, f(1.0 / 64.0));
    }

    #[test]
    fn packing() {
        assert_eq!(pack_sparse(&[], 4), vec![]);
        let b = pack_sparse(&[1, 2, 3, 4, 5, 6], 4);
        assert_eq!(
            b,
            vec![SparseBeat { lanes: vec![1, 2, 3, 4], count: 4 }, SparseBeat { lanes: vec![5, 6, 0, 0], count: 2 }]
        );
        // a multiple of L ends with a full beat, no extra empty one
        assert_eq!(pack_sparse(&[1, 2, 3, 4], 4).len(), 1);
        let s = split_sparse(&[7, 8, 9], 4, &[0, 1, 0, 2]);
        assert_eq!(s.iter().map(|b| b.count).collect::<Vec<_>>(), [0, 1, 0, 2]);
        assert_eq!((s[1].lanes[0], &s[3].lanes[..2]), (7, &[8u8, 9][..]));
    }

    #[test]
    fn spec_4_6_well_formed() {
        let p = p16();
        let a = align(&p, &[3], &GOOD_LIST);
        assert_eq!((a.taken, a.malformed), (3, Malformed::default()));
        assert_eq!(a.map.iter().enumerate().filter_map(|(i, e)| e.map(|e| (i, e.encode()))).collect::<Vec<_>>(), [(1, 0x04), (6, 0x1B), (9, 0x25)]);
        let y = run(&p, &rec(&p, &[3]), &pack_sparse(&GOOD_LIST, 4));
        assert_eq!(y, DequantToken { x: good16(), err: false, layer_oob: false });
        // beats of 1, 0 and 2 entries, with garbage in the unused lanes
        let mut beats = split_sparse(&GOOD_LIST, 4, &[1, 0, 2]);
        for b in &mut beats {
            for l in b.count as usize..4 {
                b.lanes[l] = 0x3F; // idx 15, outer, upper: would change element 15 if read
            }
        }
        assert_eq!(run(&p, &rec(&p, &[3]), &beats), y);
    }

    #[test]
    fn spec_4_6_malformed_out_of_order() {
        let p = p16();
        let a = align(&p, &[4], &BAD_LIST);
        assert_eq!(a.taken, 2);
        assert_eq!(a.malformed, Malformed { untaken: true, ..Default::default() });
        let mut want = MIDDLE.to_vec();
        want[1] = 0xB380;
        want[6] = 0x4600;
        let y = run(&p, &rec(&p, &[4]), &pack_sparse(&BAD_LIST, 4));
        assert_eq!(y, DequantToken { x: want, err: true, layer_oob: false });
    }

    /// Condition 1: a duplicate blocks the rest of the list.
    #[test]
    fn err_1_duplicate() {
        let p = p16();
        // 0x04, 0x04, 0x25 (count 3): beat 0 takes the first 0x04 and stops at
        // the second (idx 1 not > 1); it fits no later beat, and blocks 0x25.
        let a = align(&p, &[3], &[0x04, 0x04, 0x25]);
        assert_eq!((a.taken, a.malformed), (1, Malformed { untaken: true, ..Default::default() }));
        let mut want = MIDDLE.to_vec();
        want[1] = 0xB380;
        assert_eq!(run(&p, &rec(&p, &[3]), &pack_sparse(&[0x04, 0x04, 0x25], 4)).x, want);
    }

    /// The counts cut the stream: GOOD_LIST in one beat, records with counts
    /// 2 and 1. Record 0 takes 0x04, 0x1B (elements 1, 6); record 1 takes
    /// 0x25 (element 9); both well-formed.
    #[test]
    fn counts_cut_the_stream() {
        let p = p16();
        let out = dequantize_stream(&p, &table(&p), &[rec(&p, &[2]), rec(&p, &[1])], &pack_sparse(&GOOD_LIST, 4));
        let (mut w0, mut w1) = (MIDDLE.to_vec(), MIDDLE.to_vec());
        (w0[1], w0[6], w1[9]) = (0xB380, 0x4600, 0x3080);
        assert_eq!(out, [DequantToken { x: w0, err: false, layer_oob: false }, DequantToken { x: w1, err: false, layer_oob: false }]);
        // a list longer than the stream: no output, the engine waits
        assert_eq!(try_run(&p, &rec(&p, &[4]), &pack_sparse(&GOOD_LIST, 4)), None);
    }

    /// All sixteen elements outer, entry i = {idx i, outer, hi = i odd}; slot
    /// i: lower -2 - (1 + i/2), upper 2 + 1 + i/2.
    fn all_outer() -> (Vec<u8>, Vec<u16>) {
        let list = (0..16u8).map(|i| (i << 2) | 2 | (i & 1)).collect();
        let vals = [-3.0, 3.5, -4.0, 4.5, -5.0, 5.5, -6.0, 6.5, -7.0, 7.5, -8.0, 8.5, -9.0, 9.5, -10.0, 10.5];
        (list, vals.map(f).to_vec())
    }

    #[test]
    fn all_outlier_token() {
        let p = p16();
        let (list, want) = all_outer();
        assert_eq!(list[..4], [0x02, 0x07, 0x0A, 0x0F]);
        let y = run(&p, &rec(&p, &[16]), &pack_sparse(&list, 4));
        assert_eq!(y, DequantToken { x: want.clone(), err: false, layer_oob: false });
        // one entry per beat, then an empty beat
        let mut sizes = vec![1; 16];
        sizes.push(0);
        assert_eq!(run(&p, &rec(&p, &[16]), &split_sparse(&list, 4, &sizes)).x, want);
    }

    /// Condition 2: count 17 > 16 elements. The record takes 17 entries:
    /// with only the 16 in the stream it waits; with a 17th (idx 15 again)
    /// that one is never taken (condition 1 too), since beat 3 took idx 15
    /// just before it.
    #[test]
    fn err_2_count_over_segment_length() {
        let p = p16();
        let (mut list, want) = all_outer();
        assert_eq!(try_run(&p, &rec(&p, &[17]), &pack_sparse(&list, 4)), None);
        list.push(0x3C);
        let a = align(&p, &[17], &list);
        assert_eq!((a.taken, a.malformed), (16, Malformed { untaken: true, count_over_len: true, ..Default::default() }));
        assert_eq!(run(&p, &rec(&p, &[17]), &pack_sparse(&list, 4)), DequantToken { x: want, err: true, layer_oob: false });
        // a count over the length with a list that is otherwise fine
        let a = align(&p, &[17], &list[..16]);
        assert_eq!((a.taken, a.malformed), (16, Malformed { count_over_len: true, ..Default::default() }));
    }

    /// Condition 3: s_count = 200 > L = 4 reads the four lanes, here a
    /// well-formed list; 0x3A is idx 14, outer, lower: -2 - (1 + 14/2) = -10.
    /// Only records that take an entry of that beat are flagged.
    #[test]
    fn err_3_beat_count_over_lanes() {
        let p = p16();
        let beats = vec![SparseBeat { lanes: vec![0x04, 0x1B, 0x25, 0x3A], count: 200 }];
        let mut want = good16();
        want[14] = 0xC900;
        assert_eq!(want[14], f(-10.0));
        assert_eq!(run(&p, &rec(&p, &[4]), &beats), DequantToken { x: want.clone(), err: true, layer_oob: false });
        // the same list with its true count is well-formed
        let ok = vec![SparseBeat { count: 4, ..beats[0].clone() }];
        assert_eq!(run(&p, &rec(&p, &[4]), &ok), DequantToken { x: want, err: false, layer_oob: false });
        // a record with no entries before the bad beat, one after it
        let mut two = vec![SparseBeat { lanes: vec![0x04, 0, 0, 0], count: 1 }];
        two.extend(beats);
        let out = dequantize_stream(&p, &table(&p), &[rec(&p, &[1]), rec(&p, &[0]), rec(&p, &[4])], &two);
        assert_eq!(out.iter().map(|t| t.err).collect::<Vec<_>>(), [false, false, true]);
    }

    #[test]
    fn zero_outliers() {
        let p = p16();
        let y = run(&p, &rec(&p, &[0]), &pack_sparse(&[], 4));
        assert_eq!(y, DequantToken { x: MIDDLE.to_vec(), err: false, layer_oob: false });
        // shifted middle mode: slot {side, q[2:0]}; with min 0, step 1/8:
        // lower -0.25 - q/8 (slots 0..7), upper 0.25 + q/8 (slots 8..15)
        let ps = OakenParams { middle_mode: MiddleMode::Shifted, ..p16() };
        let mut r = rec(&ps, &[0]);
        r.meta.groups[1] = GroupMeta { min: 0x0000, step: 0x3000 };
        let want: Vec<u16> = (0..16).map(|i| if i < 8 { f(-0.25 - i as f32 / 8.0) } else { f(0.25 + (i - 8) as f32 / 8.0) }).collect();
        assert_eq!(run(&ps, &r, &pack_sparse(&[], 4)).x, want);
    }

    /// A malformed token never shifts the next one: the counts alone cut
    /// the stream. Stream [bad, good, bad, good], the good ones decode as
    /// §4.6: BAD_LIST (count 4), a junk list of 40 entries (count 40, over
    /// the 16 elements) with one beat of count 255 (condition 3).
    #[test]
    fn recovery_after_malformed_tokens() {
        let p = p16();
        let junk: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
        let mut list = BAD_LIST.to_vec();
        list.extend(GOOD_LIST);
        list.extend(&junk);
        list.extend(GOOD_LIST);
        let mut beats = pack_sparse(&list, 4);
        // beat 5 holds list entries 20..23, all in the junk
        beats[5].count = 255;
        let recs = [rec(&p, &[4]), rec(&p, &[3]), rec(&p, &[40]), rec(&p, &[3])];
        let out = dequantize_stream(&p, &table(&p), &recs, &beats);
        assert_eq!(out.len(), 4);
        assert!(out[0].err && out[2].err);
        for t in [&out[1], &out[3]] {
            assert_eq!(*t, DequantToken { x: good16(), err: false, layer_oob: false });
        }
        assert!(out.iter().all(|t| t.x.len() == 16));
    }

    /// Segment condition (head_dim 128, lanes 16, two segments, dense all 0
    /// so a middle element is -1.0): E0 = 0x0D (idx 3, inner, hi 1: code 16,
    /// -0.25 + 16/64 = 0.0), E1 = 0x17 (idx 5, outer, upper, q 0: 3.0).
    #[test]
    fn segment_counts_place_entries() {
        let p = OakenParams { head_dim: 128, lanes: 16, ..p16() };
        let list = [0x0D, 0x17];
        // the record takes the first sum(counts) entries of the list
        let case = |counts: &[u8]| {
            let mut r = rec(&p, counts);
            r.dense = vec![0; 128];
            run(&p, &r, &pack_sparse(&list[..r.list_len()], 16))
        };
        let with = |pairs: &[(usize, u16)]| {
            let mut v = vec![0xBC00u16; 128];
            for &(i, x) in pairs {
                v[i] = x;
            }
            v
        };
        // [1, 1]: beat 0 takes E0, stops at E1 (g = 1 is past P[0] + cnt[0]
        // although idx 5 fits); beat 4 (segment 1, i0 0) takes E1: element 69
        let y = case(&[1, 1]);
        assert_eq!((y.x, y.err), (with(&[(3, 0x0000), (69, 0x4200)]), false));
        // [2, 0]: both in beat 0
        let y = case(&[2, 0]);
        assert_eq!((y.x, y.err), (with(&[(3, 0x0000), (5, 0x4200)]), false));
        // [1, 0]: E0 only
        let y = case(&[1, 0]);
        assert_eq!((y.x, y.err), (with(&[(3, 0x0000)]), false));
        // [0, 1]: E0 belongs to segment 1 (element 67)
        let y = case(&[0, 1]);
        assert_eq!((y.x, y.err), (with(&[(67, 0x0000)]), false));
        // [0, 2]: both in segment 1
        let y = case(&[0, 2]);
        assert_eq!((y.x, y.err), (with(&[(67, 0x0000), (69, 0x4200)]), false));
    }

    /// A short last segment (head_dim 96: segment 1 has 32 elements): idx 40
    /// of segment 1 is in no beat; a count of 33 exceeds the length.
    #[test]
    fn short_last_segment() {
        let p = OakenParams { head_dim: 96, lanes: 16, ..p16() };
        let e40 = CooEntry { idx: 40, outer: true, hi: true }.encode();
        let a = align(&p, &[0, 1], &[e40]);
        assert_eq!((a.taken, a.malformed), (0, Malformed { untaken: true, ..Default::default() }));
        let e31 = CooEntry { idx: 31, outer: true, hi: true }.encode();
        let a = align(&p, &[0, 1], &[e31]);
        assert_eq!((a.taken, a.malformed), (1, Malformed::default()));
        assert_eq!(a.map[95], Some(CooEntry::decode(e31)));
        let a = align(&p, &[0, 33], &[e31]);
        assert_eq!(a.malformed, Malformed { count_over_len: true, ..Default::default() });
    }

    /// Thresholds come from (layer, kv); a layer past the table reads layer
    /// 0. Element 6 is outer upper with q = 6: hi_outer + 1 + 3.
    #[test]
    fn table_selection_and_layer_oob() {
        let p = OakenParams { layers: 2, ..p16() };
        let mut t = ThresholdTable::new(2);
        t.write(0, Kv::K, THR).unwrap(); // hi_outer 2 -> 6.0
        t.write(0, Kv::V, [0xC000, 0xB400, 0x3400, 0x4400]).unwrap(); // hi_outer 4 -> 8.0
        t.write(1, Kv::K, [0xC000, 0xB400, 0x3400, 0x3C00]).unwrap(); // hi_outer 1 -> 5.0
        for (layer, kv, want, oob) in [
            (0u8, Kv::K, 6.0, false),
            (0, Kv::V, 8.0, false),
            (1, Kv::K, 5.0, false),
            (1, Kv::V, 4.0, false), // reset set: hi_outer 0
            (2, Kv::K, 6.0, true),
            (255, Kv::V, 8.0, true),
        ] {
            let mut r = rec(&p, &[3]);
            (r.layer, r.kv) = (layer, kv);
            let y = dequantize_record(&p, &t, &r, &GOOD_LIST, false);
            assert_eq!((y.x[6], y.layer_oob, y.err), (f(want), oob, false), "layer {layer} {kv:?}");
        }
    }

    /// §4.4: metadata fields are sanitised, then used as they are.
    /// Outer (min -Inf -> -65504, step +Inf -> 65504): element 1 = 0x07
    /// (idx 1, outer, upper), slot 1: 2 + (-65504 + 65504) = 2.0.
    /// Middle (min NaN -> 0, step 1.0): slot s decodes to s; element 0's slot
    /// 0xF1 reads as 1 (the port has inlier_bits = 4 bits). Inner (min NaN ->
    /// 0, step -Inf -> -65504): element 3 = 0x0D (idx 3, inner, hi 1), code
    /// {1, 0001} = 17: 17 * -65504 saturates to -65504.
    #[test]
    fn metadata_fields_are_sanitised() {
        let p = p16();
        let mut r = rec(&p, &[2]);
        r.meta.groups = [
            GroupMeta { min: 0xFC00, step: 0x7C00 },
            GroupMeta { min: 0x7E00, step: 0x3C00 },
            GroupMeta { min: 0x7C01, step: 0xFC00 },
        ];
        r.dense = vec![0xF1, 0x01, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0F];
        let y = run(&p, &r, &pack_sparse(&[0x07, 0x0D], 4));
        let mut want = vec![0x0000; 16];
        want[0] = 0x3C00;
        want[1] = 0x4000;
        want[3] = 0xFBFF;
        want[15] = 0x4B80;
        assert_eq!(want[15], f(15.0));
        assert_eq!(meta_field_units(0x7C00), fp16::MAX_UNITS);
        assert_eq!(meta_field_units(0xFD01), 0);
        assert_eq!(y, DequantToken { x: want, err: false, layer_oob: false });
    }

    /// §2.12 example 1 through the engine (head_dim 8, lanes 4: beats of 4
    /// and 1 entries).
    #[test]
    fn spec_2_12_example_1() {
        let p = OakenParams { head_dim: 8, ..p16() };
        let r = DenseRecord {
            layer: 0,
            kv: Kv::K,
            meta: Meta {
                groups: [
                    GroupMeta { min: 0x3C00, step: 0x2C45 },
                    GroupMeta { min: 0xB800, step: 0x3156 },
                    GroupMeta { min: 0xB400, step: 0x2232 },
                ],
            },
            counts: vec![5],
            dense: vec![0, 0, 15, 9, 15, 5, 15, 0],
        };
        let beats = pack_sparse(&[0x03, 0x09, 0x12, 0x15, 0x1C], 4);
        assert_eq!(beats.iter().map(|b| b.count).collect::<Vec<_>>(), [4, 1]);
        let y = run(&p, &r, &beats);
        assert_eq!(
            y,
            DequantToken { x: vec![0x4200, 0xB800, 0x3001, 0x3C01, 0xC400, 0x1C34, 0x4001, 0xB400], err: false, layer_oob: false }
        );
    }
}
