//! Driving `packkv-encoder` and predicting its output from
//! `sim::packkv::codec::encode_pair`. Spec: docs/spec.md §14.4, §14.6,
//! §14.8, §14.14.3.
//!
//! A case is a list of block pairs (K and V codes of the same `B` tokens,
//! with metadata words and `nonfinite` flags), streamed on the two inputs
//! under their own stall patterns while the word beats are taken under a
//! third. Beats are split as the unit likes (at most its `out_words` each);
//! each block's words, joined, must equal the model's block, with `last`
//! on its final beat; a refused pair is two word-less beats flagged
//! `overflow`. Inputs whose valid is low carry noise.

use crate::coverage::Coverage;
use crate::lanes;
use crate::model::{Model, PortId};
use crate::stalls::{self, Stall};
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use proptest::prelude::*;
use sim::packkv::codec::{encode_pair, lower_median, median_order, pack_fields, BlockError, TokenBlock};
use sim::packkv::params::{raw_bits, width_bits, Repack};
use sim::packkv::quantizer::{quantize_token, TokenMeta};

/// The encoder's parameters, as `rtl-gen` reads them.
pub use rtl_gen::units::PackKvEncParams as EncParams;

pub fn params_of(m: &Model) -> EncParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are packkv-encoder's")
}

/// What a block of a pair is made of (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Uniform codes in 0..=N: widths near r.
    Uniform,
    /// Each channel's codes near a per-channel level: narrow packs.
    Narrow,
    /// Every code of a pack equal: width 0 everywhere.
    Equal,
    /// Codes 0 and N in every pack: width r everywhere.
    Widest,
    /// Tokens quantized from flat vectors (`max = min`): all codes 0.
    Flat,
    /// Some tokens flagged nonfinite.
    NonFinite,
    /// One code above N (only where `N < 2^r - 1`; in K, else in V): the
    /// pair is refused.
    Overflow,
    /// Each V token near its own level, distinct while `N_V + 1 >= B`:
    /// many different medians (median repacking reorders).
    Medians,
}

pub const KINDS: [Kind; 8] = [
    Kind::Uniform,
    Kind::Narrow,
    Kind::Equal,
    Kind::Widest,
    Kind::Flat,
    Kind::NonFinite,
    Kind::Overflow,
    Kind::Medians,
];

#[derive(Clone, Debug)]
pub struct Pair {
    pub kind: Kind,
    pub k: TokenBlock,
    pub v: TokenBlock,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub pairs: Vec<Pair>,
    pub k_stall: Stall,
    pub v_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

/// Whether a code above N fits K's (`v` false) or V's raw width.
fn overflows(p: &EncParams, v: bool) -> bool {
    let n = p.model(v).levels;
    n < (1u32 << raw_bits(n)) - 1
}

fn block_of(r: &mut Xorshift, p: &EncParams, v: bool, kind: Kind) -> TokenBlock {
    let (b, c, n) = (p.block, p.vector(), p.model(v).levels);
    let top = (1u32 << raw_bits(n)) - 1;
    let rnd = |r: &mut Xorshift, m: u32| (r.next_u64() % (m as u64 + 1)) as u8;
    let base: Vec<u8> = (0..c).map(|_| rnd(r, n)).collect();
    // Medians: a shuffle of 0..=N, one level per token (repeating past N + 1)
    let mut lv: Vec<u8> = (0..=n).map(|x| x as u8).collect();
    for i in (1..lv.len()).rev() {
        lv.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
    }
    let mut rows: Vec<Vec<u8>> = (0..b)
        .map(|t| {
            (0..c)
                .map(|ch| match kind {
                    Kind::Narrow => (base[ch] as u32 + rnd(r, 2) as u32).min(n) as u8,
                    Kind::Equal => base[ch],
                    Kind::Widest => {
                        if t % 2 == ch % 2 {
                            n as u8
                        } else {
                            0
                        }
                    }
                    Kind::Flat => 0,
                    // one noisy channel does not move a median of C >= 3 codes
                    Kind::Medians if v && ch > 0 => lv[t % lv.len()],
                    _ => rnd(r, n),
                })
                .collect()
        })
        .collect();
    let mut meta: Vec<TokenMeta> = (0..b)
        .map(|_| TokenMeta::from_word(r.next_u64() as u32))
        .collect();
    let mut nonfinite = false;
    match kind {
        Kind::Flat => {
            // a flat token's real word and codes (spec §14.8)
            for m in meta.iter_mut() {
                let x =
                    (r.next_u64() & 0x7BFF) as u16 | if r.next_u64() % 2 == 0 { 0x8000 } else { 0 };
                let q = quantize_token(&p.model(v), &vec![x; c]);
                assert!(q.codes.iter().all(|&c| c == 0));
                *m = q.meta;
            }
        }
        Kind::NonFinite => nonfinite = r.next_u64() % 2 == 0 || v,
        // in K, or in V where K's codes fill their r bits (N_K = 2^r - 1)
        Kind::Overflow if overflows(p, v) && (!v || !overflows(p, false)) => {
            let (t, ch) = ((r.next_u64() as usize) % b, (r.next_u64() as usize) % c);
            rows[t][ch] = (n + 1 + (r.next_u64() % (top - n) as u64) as u32) as u8;
        }
        _ => {}
    }
    TokenBlock {
        meta,
        rows,
        nonfinite,
    }
}

pub fn pair_of(r: &mut Xorshift, p: &EncParams, kind: Kind) -> Pair {
    Pair {
        kind,
        k: block_of(r, p, false, kind),
        v: block_of(r, p, true, kind),
    }
}

pub fn case_of(
    p: &EncParams,
    n: usize,
    seed: u64,
    k_stall: Stall,
    v_stall: Stall,
    out_stall: Stall,
) -> Case {
    let mut r = Xorshift::new(seed);
    let pairs = (0..n)
        .map(|_| {
            let k = KINDS[(r.next_u64() % KINDS.len() as u64) as usize];
            pair_of(&mut r, p, k)
        })
        .collect();
    Case {
        pairs,
        k_stall,
        v_stall,
        out_stall,
        seed: r.next_u64(),
    }
}

/// `n` pairs of uniform codes (none refused), for throughput.
pub fn uniform_case(p: &EncParams, n: usize, seed: u64, out_stall: Stall) -> Case {
    let mut r = Xorshift::new(seed);
    let pairs = (0..n).map(|_| pair_of(&mut r, p, Kind::Uniform)).collect();
    Case {
        pairs,
        k_stall: Stall::Never,
        v_stall: Stall::Never,
        out_stall,
        seed: r.next_u64(),
    }
}

pub fn case(p: EncParams, pairs: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (
        pairs,
        any::<u64>(),
        stalls::stall(),
        stalls::stall(),
        prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()],
    )
        .prop_map(move |(n, seed, k, v, o)| case_of(&p, n, seed, k, v, o))
}

/// One block as the unit must send it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBlock {
    pub words: Vec<u32>,
    pub overflow: bool,
    pub nonfinite: bool,
}

/// Facts about the expected output (for coverage).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub width0: u64,
    pub width_r: u64,
    pub refused: u64,
    pub nonfinite: u64,
    /// A refused pair followed by one that is sent.
    pub after_refused: u64,
    /// Median repacking: every V median equal (every row a tie).
    pub med_all_tie: u64,
    /// The sorted order is not arrival order.
    pub med_reordered: u64,
    /// Reordered, with ties left in arrival order.
    pub med_ties: u64,
    /// All `B` medians distinct.
    pub med_distinct: u64,
    /// A refused pair, repacked.
    pub med_refused: u64,
}

/// The K and V blocks of a pair.
pub fn expected(p: &EncParams, pair: &Pair, f: &mut Facts) -> [OutBlock; 2] {
    let (pk, pv) = (p.model(false), p.model(true));
    f.nonfinite += pair.k.nonfinite as u64 + pair.v.nonfinite as u64;
    if p.repack == Repack::Median {
        let mut med: Vec<u8> = pair.v.rows.iter().map(|r| lower_median(r)).collect();
        let reordered = median_order(&pair.v.rows) != (0..p.block).collect::<Vec<_>>();
        med.sort_unstable();
        let distinct = med.windows(2).filter(|w| w[0] != w[1]).count() + 1;
        f.med_all_tie += (distinct == 1) as u64;
        f.med_reordered += reordered as u64;
        f.med_ties += (reordered && distinct < p.block) as u64;
        f.med_distinct += (distinct == p.block) as u64;
    }
    match encode_pair(&pk, &pv, &pair.k, &pair.v) {
        Ok([(kw, _), (vw, _)]) => {
            for (pp, b) in [(&pk, &pair.k), (&pv, &pair.v)] {
                for row in pack_fields(pp, &b.rows) {
                    f.width0 += row.iter().filter(|x| x.1 == 0).count() as u64;
                    f.width_r += row.iter().filter(|x| x.1 == pp.raw_bits()).count() as u64;
                }
            }
            [
                OutBlock {
                    words: kw,
                    overflow: false,
                    nonfinite: pair.k.nonfinite,
                },
                OutBlock {
                    words: vw,
                    overflow: false,
                    nonfinite: pair.v.nonfinite,
                },
            ]
        }
        Err(BlockError::Overflow) => {
            f.refused += 1;
            f.med_refused += (p.repack == Repack::Median) as u64;
            [
                OutBlock {
                    words: vec![],
                    overflow: true,
                    nonfinite: pair.k.nonfinite,
                },
                OutBlock {
                    words: vec![],
                    overflow: true,
                    nonfinite: pair.v.nonfinite,
                },
            ]
        }
        Err(e) => panic!("encode_pair: {e:?}"),
    }
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub cycles: u64,
    pub k_blocked: u64,
    pub v_blocked: u64,
    pub out_held: u64,
    pub kinds: Vec<Kind>,
    pub facts: Facts,
    pub blocks: usize,
    pub words: usize,
    /// Beats with the most words the port can carry.
    pub full_beats: u64,
    /// Cycles from the first input beat to the last word.
    pub span: u64,
    /// Cycles in which a word beat transferred.
    pub out_cycles: Vec<u64>,
    /// The cycle of each block's last beat.
    pub block_ends: Vec<u64>,
    /// Codes of the pairs sent (not refused).
    pub codes: usize,
    /// Blocks out with several token words an item (`Items::tw > 1`).
    pub tw_blocks: u64,
    /// Blocks out with four payload beats an item, and of those with a
    /// queue row of two tiles (`P = 2`).
    pub pb4_blocks: u64,
    pub two_tile_blocks: u64,
    /// Blocks out whose pack rows' last fields beat carried the first
    /// payload item, the row's only one or with more after it.
    pub merge_blocks: u64,
    pub merge_more_blocks: u64,
    /// A reset cut the run: whole blocks out before it.
    pub cut_blocks: Option<usize>,
}

pub const POINTS: &[&str] = &[
    "K input blocked (both banks full)",
    "V input blocked (both banks full)",
    "output held (backpressure)",
    "pair: uniform codes",
    "pair: narrow packs",
    "pair: equal packs",
    "pair: widest packs",
    "pair: max = min tokens",
    "pair: nonfinite tokens",
    "pack width 0",
    "pack width r (maximum)",
    "pair refused (code above N)",
    "pair sent after a refused one",
    "nonfinite block",
    "beat of out_words words",
    TW_POINT,
    PB4_POINT,
    TWO_TILE_POINT,
    MERGE_POINT,
    MERGE_MORE_POINT,
];

/// Blocks whose token words go several an item (`Items::tw > 1`; the
/// netlist of `c2_l2` among them).
pub const TW_POINT: &str = "block of several token words an item";
/// Blocks sent four payload beats an item (`pay_beats` 4: `b16_l4`, `n255_l1`).
pub const PB4_POINT: &str = "block of four payload beats an item";
/// Blocks whose queue rows each hold two tiles (`pay_beats` 4 with `P = 2`:
/// `n255_l1`).
pub const TWO_TILE_POINT: &str = "block of queue rows of two tiles";
/// Blocks whose pack rows send their last fields beat and first payload
/// item as one item: the row's only payload item (`c2_l2`), or with more
/// to follow (`p2_l8`, RTL only).
pub const MERGE_POINT: &str = "block of fields and payload merged";
pub const MERGE_MORE_POINT: &str = "block of fields and payload merged, more payload after";

/// Median repacking (spec §14.5), over the `repack = median` models.
pub const MEDIAN_POINTS: &[&str] = &[
    "median: every row ties",
    "median: rows reordered",
    "median: reordered with ties",
    "median: B distinct medians",
    "median: pair refused",
    "median: pair with many medians",
];

pub fn cover_median(cov: &Coverage, r: &Run) {
    let f = &r.facts;
    cov.add("median: every row ties", f.med_all_tie);
    cov.add("median: rows reordered", f.med_reordered);
    cov.add("median: reordered with ties", f.med_ties);
    cov.add("median: B distinct medians", f.med_distinct);
    cov.add("median: pair refused", f.med_refused);
    cov.add("median: pair with many medians", r.kinds.iter().filter(|k| **k == Kind::Medians).count() as u64);
}

/// How a block pair's items are formed (spec §14.14.3, Timing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Items {
    /// Payload beats an item.
    pub pb: usize,
    /// A pack row's last fields beat goes out with its first payload item.
    pub merge: bool,
    /// Token words an item.
    pub tw: usize,
    /// `F`, the widest item's bits.
    pub f: usize,
}

/// The spec's choices in its order: payload beats two where two fit the
/// shifter, else one; four with `repack = none` where four fit, 4 divides
/// a pack row's `P BT` beats and the items at two outnumber the reader's
/// `2 B BT` cycles; then, with `none` and still behind, the merged fields
/// and payload item where it fits, and `F` grown to `32 tw` for the least
/// `tw` of 2 and 4 that keeps up, if one does.
pub fn items_of(p: &EncParams) -> Items {
    let rmax = raw_bits(p.k_levels).max(raw_bits(p.v_levels)) as usize;
    let side = |n: u32| p.lanes * (raw_bits(n) + width_bits(raw_bits(n))) as usize;
    let fields = side(p.k_levels).max(side(p.v_levels));
    let reader = 2 * p.block * p.beats();
    let none = p.repack == Repack::None;
    let at = |pb: usize, merge: bool, grow: usize| {
        let f = [32, fields, pb * p.lanes * rmax, if merge { fields + pb * p.lanes * rmax } else { 0 }, grow]
            .into_iter()
            .max()
            .unwrap();
        let mut it = Items { pb, merge, tw: 1, f };
        if !none || count(p, &it) <= reader {
            return it;
        }
        it.tw = 1 << (f / 32).ilog2();
        it
    };
    let mut it = at(if 2 * p.lanes * rmax <= 128 { 2 } else { 1 }, false, 0);
    if none && 4 * p.lanes * rmax <= 128 && (p.pack * p.beats()) % 4 == 0 && count(p, &it) > reader {
        it = at(4, false, 0);
    }
    if none && count(p, &it) > reader && fields + it.pb * p.lanes * rmax <= 128 {
        it = at(it.pb, true, 0);
        for tw in [2, 4] {
            let h = at(it.pb, true, 32 * tw);
            if count(p, &it) > reader && 32 * tw > it.f && count(p, &h) <= reader {
                it = h;
            }
        }
    }
    it
}

/// Payload beats per output item (`items_of`).
pub fn pay_beats(p: &EncParams) -> usize {
    items_of(p).pb
}

/// Beat positions the `median` fields pass reads a cycle (spec §14.14.3):
/// 2 when a token has an even number of beats and two beats fit a copy
/// row (`pay_beats` is 2), else 1.
pub fn pass_width(p: &EncParams) -> usize {
    if p.beats() % 2 == 0 {
        pay_beats(p)
    } else {
        1
    }
}

/// Output items of a block pair with no stall (spec §14.14.3): header,
/// token words (`tw` an item), the permutation's items (median), per pack
/// row the fields beats and the payload items (`pb` beats each), one fewer
/// where the last fields beat carries the first payload item.
fn count(p: &EncParams, it: &Items) -> usize {
    let perm = if p.repack == Repack::Median {
        // as many log2(B)-bit entries as fit 32 bits per item
        p.block.div_ceil(32 / p.block.trailing_zeros() as usize)
    } else {
        0
    };
    let row = p.beats() + p.pack * p.beats() / it.pb - it.merge as usize;
    2 * (1 + p.block / it.tw + (p.block / p.pack) * row) + perm
}

pub fn items_per_pair(p: &EncParams) -> usize {
    count(p, &items_of(p))
}

/// Cycles per block pair with no stall once the pipeline is full (spec
/// §14.14.3): the tile reader's one code word a cycle (`2 B BT`), the
/// output's items, and a bank's turn, two pairs a turn. A pair's banks go
/// back to the fill once the reader has read them and the output has sent
/// their fields. With `none` the turn is `3 B BT + log2 lanes + 5`: the
/// fill (`B BT`), the widths' tree and header, the reader's `2 B BT`, its
/// done flag and the release; with `median` the reader's `2 B BT`, the
/// fill (`B BT`), the sort (`2^r_V + B + 5`), the fields pass (`B BT /
/// pass_width + 6`) and 3 cycles of hand-over.
pub fn cycles_per_pair(p: &EncParams) -> f64 {
    let bbt = p.block * p.beats();
    let reader = (2 * bbt) as f64;
    let turn = if p.repack == Repack::Median {
        2 * bbt + bbt + (1 << raw_bits(p.v_levels)) + p.block + 5 + bbt / pass_width(p) + 6 + 3
    } else {
        3 * bbt + p.lanes.trailing_zeros() as usize + 5
    };
    reader.max(items_per_pair(p) as f64).max(turn as f64 / 2.0)
}

pub fn cover(cov: &Coverage, r: &Run) {
    cov.add("K input blocked (both banks full)", r.k_blocked);
    cov.add("V input blocked (both banks full)", r.v_blocked);
    cov.add("output held (backpressure)", r.out_held);
    for k in &r.kinds {
        match k {
            Kind::Uniform => cov.hit("pair: uniform codes"),
            Kind::Narrow => cov.hit("pair: narrow packs"),
            Kind::Equal => cov.hit("pair: equal packs"),
            Kind::Widest => cov.hit("pair: widest packs"),
            Kind::Flat => cov.hit("pair: max = min tokens"),
            Kind::NonFinite => cov.hit("pair: nonfinite tokens"),
            Kind::Overflow | Kind::Medians => {}
        }
    }
    let f = &r.facts;
    cov.add("pack width 0", f.width0);
    cov.add("pack width r (maximum)", f.width_r);
    cov.add("pair refused (code above N)", f.refused);
    cov.add("pair sent after a refused one", f.after_refused);
    cov.add("nonfinite block", f.nonfinite);
    cov.add("beat of out_words words", r.full_beats);
    cov.add(TW_POINT, r.tw_blocks);
    cov.add(PB4_POINT, r.pb4_blocks);
    cov.add(TWO_TILE_POINT, r.two_tile_blocks);
    cov.add(MERGE_POINT, r.merge_blocks);
    cov.add(MERGE_MORE_POINT, r.merge_more_blocks);
}

#[derive(Clone, Debug)]
struct InBeat {
    codes: Vec<u64>,
    meta: u32,
    nf: bool,
}

fn beats_of(p: &EncParams, pairs: &[Pair], v: bool) -> Vec<InBeat> {
    let mut out = vec![];
    for pr in pairs {
        let b = if v { &pr.v } else { &pr.k };
        for (t, row) in b.rows.iter().enumerate() {
            for ch in row.chunks(p.lanes) {
                out.push(InBeat {
                    codes: ch.iter().map(|&c| c as u64).collect(),
                    meta: b.meta[t].word(),
                    nf: b.nonfinite && t % 3 == 1 || b.nonfinite && t == 0,
                });
            }
        }
    }
    out
}

/// One word beat out of the unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBeat {
    pub words: Vec<u32>,
    pub last: bool,
    pub overflow: bool,
    pub nonfinite: bool,
}

/// The word beat the outputs show (meaningful while `out_valid`): its
/// first `out_count` words.
pub fn read_out(m: &Model) -> OutBeat {
    let n = m.get(m.port("out_count")) as usize;
    let mut w = m.get_words(m.port("out_words"));
    w.truncate(n.min(w.len()));
    OutBeat {
        words: w,
        last: m.get(m.port("out_last")) == 1,
        overflow: m.get(m.port("out_overflow")) == 1,
        nonfinite: m.get(m.port("out_nonfinite")) == 1,
    }
}

struct Side {
    valid: PortId,
    ready: PortId,
    codes: PortId,
    meta: PortId,
    nf: PortId,
}

pub fn run(m: &mut Model, p: &EncParams, c: &Case) -> Result<Run, String> {
    run_inner(m, p, c, None)
}

/// `run`, with a one-cycle reset at cycle `reset_at`: the blocks out
/// before it must be a prefix of the expected ones (a partial block a
/// prefix of its words).
pub fn run_until(m: &mut Model, p: &EncParams, c: &Case, reset_at: u64) -> Result<Run, String> {
    run_inner(m, p, c, Some(reset_at))
}

fn run_inner(m: &mut Model, p: &EncParams, c: &Case, reset_at: Option<u64>) -> Result<Run, String> {
    let side = |m: &Model, s: &str| Side {
        valid: m.port(&format!("{s}_valid")),
        ready: m.port(&format!("{s}_ready")),
        codes: m.port(&format!("{s}_codes")),
        meta: m.port(&format!("{s}_meta")),
        nf: m.port(&format!("{s}_nonfinite")),
    };
    let (ks, vs) = (side(m, "k"), side(m, "v"));
    let (out_valid, out_ready, out_words, out_count) = (
        m.port("out_valid"),
        m.port("out_ready"),
        m.port("out_words"),
        m.port("out_count"),
    );
    let cap = m.port_info(out_words).width / 32;
    let mut rng = Xorshift::new(c.seed ^ 0x5a);
    let mut run = Run::default();
    let mut srcs = [
        Source::new(beats_of(p, &c.pairs, false), &c.k_stall, c.seed ^ 1),
        Source::new(beats_of(p, &c.pairs, true), &c.v_stall, c.seed ^ 3),
    ];
    let mut sink: Sink<OutBeat> = Sink::new(&c.out_stall, c.seed ^ 2);
    let mut want: Vec<OutBlock> = vec![];
    let mut refused_before = false;
    for pr in &c.pairs {
        let e = expected(p, pr, &mut run.facts);
        if e[0].overflow {
            refused_before = true;
        } else if refused_before {
            run.facts.after_refused += 1;
            refused_before = false;
        }
        run.codes += if e[0].overflow {
            0
        } else {
            2 * p.block * p.vector()
        };
        want.extend(e);
        run.kinds.push(pr.kind);
    }
    let rk = [raw_bits(p.k_levels) as usize, raw_bits(p.v_levels) as usize];
    let total = want.len();
    let mut got: Vec<OutBlock> = vec![];
    let mut cur: Vec<u32> = vec![];
    // long output bursts (a mean of 256 cycles) may stall 95% of cycles
    let items = items_per_pair(p);
    let timeout = 20_000 + 300 * (c.pairs.len() * items) as u64;
    let mut cyc = 0u64;
    let check_prefix = |got: &[OutBlock], cur: &[u32]| -> Result<(), String> {
        stream::compare(got, &want, true, |i| {
            format!("block {i} ({})", if i % 2 == 0 { "K" } else { "V" })
        })?;
        if let Some(w) = want.get(got.len()) {
            if cur.len() > w.words.len() || cur != &w.words[..cur.len()] {
                let at = cur
                    .iter()
                    .zip(&w.words)
                    .position(|(a, b)| a != b)
                    .unwrap_or(w.words.len());
                return Err(format!(
                    "block {} word {at}: got {:08x?}, expected {:08x?} ({} words)",
                    got.len(),
                    cur.get(at),
                    w.words.get(at),
                    w.words.len()
                ));
            }
        }
        Ok(())
    };
    loop {
        if reset_at == Some(cyc) {
            check_prefix(&got, &cur)?;
            run.cut_blocks = Some(got.len());
            m.reset(1);
            run.cycles = cyc;
            return Ok(run);
        }
        if got.len() == total && srcs.iter().all(|s| s.is_empty()) {
            break;
        }
        if cyc > timeout {
            return Err(format!(
                "timeout after {cyc} cycles: {} of {total} blocks out, {} words of the next",
                got.len(),
                cur.len()
            ));
        }
        let mut offers = [false, false];
        for (i, (s, io)) in srcs.iter_mut().zip([&ks, &vs]).enumerate() {
            let o = s.offer().cloned();
            m.set(io.valid, o.is_some() as u64);
            let (codes, meta, nf) = match &o {
                Some(b) => (b.codes.clone(), b.meta, b.nf),
                None => (
                    (0..p.lanes)
                        .map(|_| rng.next_u64() & ((1 << rk[i]) - 1))
                        .collect(),
                    rng.next_u64() as u32,
                    rng.next_u64() & 1 == 1,
                ),
            };
            m.set_words(io.codes, &lanes::pack(&codes, rk[i]));
            m.set(io.meta, meta as u64);
            m.set(io.nf, nf as u64);
            offers[i] = o.is_some();
        }
        let ready = sink.ready();
        let k_ready = stream::settle_ready(m, ks.ready, out_ready, ready)?;
        let v_ready = m.get(vs.ready) == 1;
        if offers[0] && !k_ready {
            run.k_blocked += 1;
        }
        if offers[1] && !v_ready {
            run.v_blocked += 1;
        }
        let valid = m.get(out_valid) == 1;
        if valid && !ready {
            run.out_held += 1;
        }
        let cycle = m.cycle();
        let took = sink
            .sample(cycle, valid, ready, || read_out(m))?
            .cloned();
        if let Some(b) = took {
            let n = m.get(out_count) as usize;
            if n > cap {
                return Err(format!(
                    "cycle {cycle}: a beat of {n} words, the port holds {cap}"
                ));
            }
            if n == 0 && !b.last {
                return Err(format!("cycle {cycle}: a beat with no words and no last"));
            }
            run.full_beats += (n == cap) as u64;
            run.out_cycles.push(cycle);
            run.words += n;
            cur.extend(&b.words);
            if b.last {
                run.block_ends.push(cycle);
                got.push(OutBlock {
                    words: std::mem::take(&mut cur),
                    overflow: b.overflow,
                    nonfinite: b.nonfinite,
                });
            }
            check_prefix(&got, &cur).map_err(|e| format!("cycle {cycle}: {e}"))?;
        }
        for (i, io) in [&ks, &vs].iter().enumerate() {
            let r = if i == 0 { k_ready } else { v_ready };
            let _ = io;
            if offers[i] && r {
                srcs[i].take();
            }
        }
        m.tick();
        cyc += 1;
    }
    run.cycles = cyc;
    run.blocks = got.len();
    let it = items_of(p);
    if it.tw > 1 {
        run.tw_blocks = got.len() as u64;
    }
    if it.merge && p.pack * p.beats() == it.pb {
        run.merge_blocks = got.len() as u64;
    }
    if it.merge && p.pack * p.beats() > it.pb {
        run.merge_more_blocks = got.len() as u64;
    }
    if it.pb == 4 {
        run.pb4_blocks = got.len() as u64;
        if p.pack == 2 {
            run.two_tile_blocks = got.len() as u64;
        }
    }
    stream::compare(&got, &want, false, |i| format!("block {i}"))?;
    Ok(run)
}
