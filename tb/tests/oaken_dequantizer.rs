//! Co-simulation of the Oaken dequantization engine
//! (hdl/src/oaken/dequantizer.rs) against its model
//! (sim/src/oaken/dequantizer.rs, `dequantize_stream`), bit for bit, at
//! every parameter set of tb/models.toml, on the RTL and on the OSU018
//! netlist. Spec: docs/spec.md §4.
//!
//! Records are what the quantizer writes for `tb::oaken_cases` tokens
//! (realistic, tie, edge-case), one per (token, head); their COO lists form
//! one continuous sparse stream that the records' counts cut (§4.2). Some
//! lists are damaged in each way spec §4.3 defines, always keeping a list's
//! length equal to its counts' sum (so the counts still frame the stream);
//! the stream is cut into packed beats or random ones (empty beats, beats
//! that end one list and start the next), some beats carry `s_count > L`;
//! sparse lanes at and past `s_count` carry noise; segments end in resets
//! and carry table writes during traffic, under stalls on the dense input,
//! the sparse input and the output.

use proptest::prelude::*;
use sim::fp16;
use sim::oaken::dequantizer::{align, engine_group_params, pack_sparse, split_sparse, DenseRecord, SparseBeat};
use sim::oaken::params::{Group, MiddleMode, OakenParams, SEGMENT};
use sim::oaken::thresholds::Kv;
use sim::testgen;
use tb::coverage::Coverage;
use tb::oaken::{params_of, pulse_reset, sets_in_effect, TableWrite, Token};
use tb::oaken_cases::{self, CasePlan};
use tb::oaken_dequantizer::{
    check_dequantizer_segment, drive_dequantizer, expected_dequantizer, records_of, run_dequantizer_segment,
    timeout_of, DSegRun, DSegment, DStalls, DStream,
};
use tb::stalls::Stall;
use tb::stim::Xorshift;
use tb::{models, prop, run_property, Model, ModelInfo};

const POINTS: &[&str] = &[
    "records",
    "realistic tokens",
    "tie tokens",
    "edge-case tokens",
    "well-formed record",
    "malformed: entry never taken",
    "malformed: count over segment length",
    "malformed: bad-beat entry flagged",
    "metadata field sanitised (NaN, Inf, -0)",
    "metadata field malformed (finite junk)",
    "untaken remainder over L entries dropped",
    "record with no outliers",
    "all-outlier record",
    "beat ends one record's list and starts the next's",
    "unpacked sparse stream",
    "empty sparse beat",
    "sparse beat with ignored lanes (noise)",
    "record waiting for its list",
    "layer out of range",
    "d_ready low",
    "s_ready low",
    "input held off behind a stalled output",
    "table write ok",
    "table write non-finite",
    "table write out of order",
    "table write layer out of range",
    "table write during traffic",
    "reset in flight",
];

/// Points only `middle-mode = paper` sets reach (spec §4.4: the folded
/// outer and middle groups, each side read as `q >= z` with the record's
/// folded zero index; a falling grid, from a junk negative step, reads it
/// inverted).
const PAPER_POINTS: &[&str] = &[
    "paper: outer code on the upper side (q >= z)",
    "paper: outer code on the lower side",
    "paper: middle code on the upper side (q >= z)",
    "paper: middle code on the lower side",
    "paper: z = 0 (min >= 0)",
    "paper: z = 2^M (step = 0 or clamp)",
    "paper: 0 < z < 2^M",
    "paper: falling grid (negative step)",
];

fn all_points() -> Vec<&'static str> {
    POINTS.iter().chain(PAPER_POINTS).copied().collect()
}

/// The paper points of one record's elements: each outer and middle
/// element's side (the sign of its decoded folded value, spec §2.10) and
/// each folded group's z (§2.7, from the sanitised metadata).
fn count_paper(cov: &Coverage, p: &OakenParams, rec: &DenseRecord, map: &[Option<sim::oaken::format::CooEntry>]) {
    if p.middle_mode != MiddleMode::Paper {
        return;
    }
    let gp = engine_group_params(&rec.meta);
    let mask = (1u64 << p.inlier_bits) - 1;
    let mut present = [false; 2];
    for (d, e) in rec.dense.iter().zip(map) {
        let slot = *d as u64 & mask;
        let (g, code, name) = match e {
            Some(e) if e.outer => (Group::Outer, (e.hi as u64) << p.inlier_bits | slot, "outer"),
            Some(_) => continue,
            None => (Group::Middle, slot, "middle"),
        };
        present[g as usize] = true;
        let upper = gp[g as usize].reconstruct(code) >= 0;
        cov.hit(&if upper {
            format!("paper: {name} code on the upper side (q >= z)")
        } else {
            format!("paper: {name} code on the lower side")
        });
    }
    for g in [Group::Outer, Group::Middle] {
        if !present[g as usize] {
            continue;
        }
        let q = &gp[g as usize];
        if q.step_units < 0 {
            cov.hit("paper: falling grid (negative step)");
            continue;
        }
        let m = p.coding(g).mag_bits;
        let z = q.fold_zero(m);
        cov.hit(if z == 0 {
            "paper: z = 0 (min >= 0)"
        } else if z == 1u64 << m {
            "paper: z = 2^M (step = 0 or clamp)"
        } else {
            "paper: 0 < z < 2^M"
        });
    }
}

/// How a record's list is damaged (spec §4.3's malformed cases). Every
/// damage keeps the list's length equal to its counts' sum.
#[derive(Clone, Debug)]
enum Damage {
    None,
    /// Entry i takes the value of entry i - 1 (a duplicate).
    Duplicate(usize),
    Swap(usize),
    SetEntry(usize, u8),
    /// One count moves from segment a to segment b (entries land in the
    /// wrong segment).
    MoveCount(usize, usize),
    /// Segment s's count becomes v; the list is cut or padded with junk.
    Count(usize, u8, u64),
    /// Field f (of the six FP16 fields of `d_meta`, spec §2.9) becomes
    /// pattern k of `META_JUNK` (NaN, infinities, -0, which §4.4 sanitises;
    /// zero, negative or huge steps, subnormals) or, past them, `bits`.
    Meta(usize, usize, u16),
}

/// Metadata field patterns: quiet and signalling NaNs of both signs, both
/// infinities and -0 (sanitised, spec §4.4), then finite junk: 0, the
/// largest and smallest normals, a subnormal, negative values.
const META_JUNK: &[u16] =
    &[0x7E00, 0xFC01, 0x7C01, 0xFFFF, 0x7C00, 0xFC00, 0x8000, 0x0000, 0x7BFF, 0xFBFF, 0x0001, 0xBC00, 0x0400];

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        16 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Duplicate),
        1 => any::<usize>().prop_map(Damage::Swap),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Damage::SetEntry(i, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::MoveCount(a, b)),
        1 => (any::<usize>(), any::<u8>(), any::<u64>()).prop_map(|(s, v, seed)| Damage::Count(s, v, seed)),
        1 => (0usize..6, 0..META_JUNK.len() + 4, any::<u16>()).prop_map(|(f, k, bits)| Damage::Meta(f, k, bits)),
    ]
}

/// How the continuous stream is cut into beats.
#[derive(Clone, Debug)]
enum Split {
    /// Full beats (the memory layout), the last one partial.
    Packed,
    /// Random sizes 0..=L, many empty beats; `p0` in 256ths is the chance
    /// of an empty beat.
    Random { seed: u64, p0: u8 },
}

fn split() -> impl Strategy<Value = Split> {
    prop_oneof![
        3 => Just(Split::Packed),
        2 => (any::<u64>(), 0u8..128).prop_map(|(seed, p0)| Split::Random { seed, p0 }),
    ]
}

/// Beats whose `s_count` is raised above L (condition 3): `(which beat,
/// count, garbage seed)`; the lanes past a partial beat's count become
/// entries too, holding garbage.
type BadBeats = Vec<(usize, u8, u64)>;

#[derive(Clone, Debug)]
struct Case {
    plan: CasePlan,
    /// Per record (cyclically): its damage.
    damage: Vec<Damage>,
    /// Per segment (cyclically): the beat cut and the bad beats.
    streams: Vec<(Split, BadBeats)>,
}

fn case(p: &OakenParams, segments: usize) -> impl Strategy<Value = Case> {
    let bad = prop_oneof![
        3 => Just(vec![]),
        1 => proptest::collection::vec((any::<usize>(), 1u8..=255, any::<u64>()), 1..3),
    ];
    (
        oaken_cases::case(p, segments, true),
        proptest::collection::vec(damage(), 1..16),
        proptest::collection::vec((split(), bad), 1..4),
    )
        .prop_map(|(plan, damage, streams)| Case { plan, damage, streams })
}

/// A record's list, damaged.
fn damaged(p: &OakenParams, rec: &mut DenseRecord, list: &mut Vec<u8>, d: &Damage) {
    let n = list.len();
    match *d {
        Damage::None => {}
        Damage::Duplicate(i) if n > 1 => list[i % (n - 1) + 1] = list[i % (n - 1)],
        Damage::Swap(i) if n > 1 => list.swap(i % (n - 1), i % (n - 1) + 1),
        Damage::SetEntry(i, v) if n > 0 => list[i % n] = v,
        Damage::MoveCount(a, b) => {
            let (a, b) = (a % rec.counts.len(), b % rec.counts.len());
            if rec.counts[a] > 0 && rec.counts[b] < 255 {
                rec.counts[a] -= 1;
                rec.counts[b] += 1;
            }
        }
        Damage::Count(s, v, seed) => {
            let k = s % rec.counts.len();
            // mostly near the segment's length, sometimes anything
            rec.counts[k] = if v < 128 { v % (p.segment_len(k) as u8 + 8) } else { v };
            let mut rng = Xorshift::new(seed | 1);
            list.resize_with(rec.list_len(), || rng.next_u64() as u8);
        }
        Damage::Meta(f, k, bits) => {
            let g = &mut rec.meta.groups[f / 2];
            let x = META_JUNK.get(k).copied().unwrap_or(bits);
            if f % 2 == 0 {
                g.min = x;
            } else {
                g.step = x;
            }
        }
        _ => {}
    }
}

/// Cuts the stream's entries into beats.
fn cut(entries: &[u8], lanes: usize, how: &Split) -> Vec<SparseBeat> {
    match *how {
        Split::Packed => pack_sparse(entries, lanes),
        Split::Random { seed, p0 } => {
            let mut rng = Xorshift::new(seed | 1);
            let mut sizes = Vec::new();
            let mut left = entries.len();
            while left > 0 {
                let r = rng.next_u64();
                let k = if (r & 0xFF) < p0 as u64 { 0 } else { ((r >> 8) as usize % (lanes + 1)).min(left) };
                sizes.push(k);
                left -= k;
            }
            if rng.next_u64() % 4 == 0 {
                sizes.push(0); // a trailing empty beat
            }
            split_sparse(entries, lanes, &sizes)
        }
    }
}

/// The stream of a segment: the quantizer's records damaged, their lists
/// re-cut into beats, some beats' counts raised above L.
fn build_stream(p: &OakenParams, s: DStream, damage: &[Damage], first: usize, how: &(Split, BadBeats)) -> DStream {
    let e = s.entries(p.lanes);
    let cuts = s.cuts(p.lanes);
    let mut recs = Vec::new();
    let mut all = Vec::new();
    for (k, (mut r, c)) in s.recs.into_iter().zip(cuts).enumerate() {
        let mut list: Vec<u8> = e[c].iter().map(|x| x.0).collect();
        damaged(p, &mut r, &mut list, &damage[(first + k) % damage.len()]);
        all.extend(list);
        recs.push(r);
    }
    let mut sparse = cut(&all, p.lanes, &how.0);
    if !sparse.is_empty() {
        for &(b, c, seed) in &how.1 {
            let k = b % sparse.len();
            let mut rng = Xorshift::new(seed | 1);
            let was = sparse[k].count as usize;
            for l in was.min(p.lanes)..p.lanes {
                sparse[k].lanes[l] = rng.next_u64() as u8;
            }
            sparse[k].count = (p.lanes as u8).saturating_add(c).max(p.lanes as u8 + 1);
        }
    }
    DStream { recs, sparse }
}

fn count_writes(cov: &Coverage, codes: impl IntoIterator<Item = u64>) {
    for c in codes {
        cov.hit(
            ["table write ok", "table write non-finite", "table write out of order", "table write layer out of range"]
                [c as usize],
        );
    }
}

fn count(cov: &Coverage, p: &OakenParams, seg: &DSegment, run: &DSegRun, kinds: &[u8]) {
    let s = &seg.stream;
    let picks: Vec<(u8, bool)> = s.recs.iter().map(|r| (r.layer, r.kv == Kv::V)).collect();
    let (codes, live_codes, sets) = sets_in_effect(p, &[], &seg.writes, &run.live, &run.first_edges, 1, &picks);
    count_writes(cov, codes.into_iter().chain(live_codes));
    let done = run.beats.len() / p.head_beats();
    let e = s.entries(p.lanes);
    let cuts = s.cuts(p.lanes);
    let mal = s.malformed(p);
    for k in 0..done {
        let rec = &s.recs[k];
        cov.hit("records");
        if k % p.heads == 0 {
            cov.hit(["realistic tokens", "tie tokens", "edge-case tokens"][kinds[k / p.heads] as usize]);
        }
        let m = mal[k];
        cov.hit_if("well-formed record", !m.any());
        cov.hit_if("malformed: entry never taken", m.untaken);
        cov.hit_if("malformed: count over segment length", m.count_over_len);
        cov.hit_if("malformed: bad-beat entry flagged", m.beat_over_lanes);
        // §2 never writes these: a non-finite or -0 field, or a finite
        // negative step
        let mut fields = rec.meta.groups.iter().flat_map(|g| [g.min, g.step]);
        cov.hit_if("metadata field sanitised (NaN, Inf, -0)", fields.any(|x| fp16::sanitize(x).0 != x));
        cov.hit_if(
            "metadata field malformed (finite junk)",
            rec.meta.groups.iter().any(|g| fp16::sanitize(g.step).0 == g.step && g.step & 0x8000 != 0),
        );
        let list: Vec<u8> = e[cuts[k].clone()].iter().map(|x| x.0).collect();
        let a = align(p, &rec.counts, &list);
        let taken = a.taken;
        count_paper(cov, p, rec, &a.map);
        cov.hit_if("untaken remainder over L entries dropped", list.len() - taken > p.lanes);
        cov.hit_if("record with no outliers", rec.list_len() == 0);
        cov.hit_if("all-outlier record", rec.list_len() == p.head_dim && !m.any());
        cov.hit_if("layer out of range", sets[k].1);
    }
    // beats of the part of the stream the finished records took
    let used = cuts.get(done.wrapping_sub(1)).map_or(0, |c| c.end);
    let bounds: Vec<usize> = cuts[..done].iter().map(|c| c.end).collect();
    let mut pos = 0;
    for (i, b) in s.sparse.iter().enumerate() {
        if pos >= used {
            break;
        }
        let c = (b.count as usize).min(p.lanes);
        cov.hit_if("empty sparse beat", c == 0);
        cov.hit_if("unpacked sparse stream", c < p.lanes && i + 1 < s.sparse.len());
        cov.hit_if("beat ends one record's list and starts the next's", bounds.iter().any(|&x| pos < x && x < pos + c));
        pos += c;
    }
    cov.add("d_ready low", run.events.d_ready_low);
    cov.add("s_ready low", run.events.s_ready_low);
    cov.add("sparse beat with ignored lanes (noise)", run.events.noisy_sparse);
    cov.add("input held off behind a stalled output", run.events.full_behind_stall);
    cov.add("record waiting for its list", run.events.waiting_for_list);
    cov.add("table write during traffic", run.events.live_between_tokens);
    cov.hit_if("reset in flight", run.events.reset_in_flight);
}

/// The segments of a case, with what each token is.
fn segments(p: &OakenParams, c: &Case) -> Vec<(DSegment, Vec<u8>)> {
    let mut first = 0;
    let mut v = Vec::new();
    for (k, s) in oaken_cases::materialize(p, &c.plan).into_iter().enumerate() {
        let quant = records_of(p, &s.writes, &s.tokens);
        let n = quant.recs.len();
        let stream = build_stream(p, quant, &c.damage, first, &c.streams[k % c.streams.len()]);
        first += n;
        let seg = DSegment {
            prior: vec![],
            writes: s.writes,
            stream,
            live: s.live,
            reset_at: s.reset_at,
            reset_cycles: s.reset_cycles,
            stalls: DStalls { d: s.stalls[0].clone(), s: s.stalls[1].clone(), out: s.stalls[2].clone() },
            seed: s.seed,
        };
        v.push((seg, s.kinds));
    }
    v
}

fn run_case(m: &mut Model, p: &OakenParams, c: &Case, cov: &Coverage) -> Result<(), String> {
    for (k, (seg, kinds)) in segments(p, c).into_iter().enumerate() {
        let run =
            run_dequantizer_segment(m, &seg, timeout_of(p, &seg.stream)).map_err(|e| format!("segment {k}: {e}"))?;
        check_dequantizer_segment(p, &seg, &run).map_err(|e| format!("segment {k}: {e}"))?;
        count(cov, p, &seg, &run, &kinds);
        if !run.cut {
            pulse_reset(m, 1);
        }
    }
    Ok(())
}

fn check(info: &'static ModelInfo, test: &str, cases: u32, segments: usize, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    run_property(test, info, case(&p, segments), cases, |m, c| run_case(m, &p, c, cov));
    run_property(&format!("{test}_directed"), info, Just(directed_case(&p)), 1, |m, c| run_case(m, &p, c, cov));
}

/// The directed case (`oaken_cases::directed_case`, two inputs) with every
/// damage of a list, records mostly whole, the traffic segment's stream cut
/// into random beats (empty ones among them); then the traffic again, its
/// stream packed, with its first beat's count over L (the entries that
/// adds shift every later list, so it comes last).
fn directed_case(p: &OakenParams) -> Case {
    let mut damage = vec![Damage::None; 16];
    damage[1] = Damage::Count(0, 255, 1);
    damage[5] = Damage::Duplicate(2);
    damage[9] = Damage::Swap(1);
    damage[11] = Damage::MoveCount(0, 1);
    damage[13] = Damage::SetEntry(0, 200);
    damage[15] = Damage::Count(1, 3, 7);
    damage[3] = Damage::Meta(1, 0, 0); // middle step NaN
    damage[7] = Damage::Meta(4, 5, 0); // inner min -Inf
    damage[8] = Damage::Meta(3, 11, 0); // middle step -1.0
    let streams = vec![
        (Split::Packed, vec![]),
        (Split::Random { seed: 0x5eed, p0: 48 }, vec![]),
        (Split::Packed, vec![(0, 5, 9), (1, 200, 4)]),
    ];
    let mut plan = oaken_cases::directed_case(p, true);
    let again = plan.segments.last().expect("a traffic segment").clone();
    plan.segments.push(again);
    Case { plan, damage, streams }
}

/// Points only the hardware's timing decides (the directed case's stalls,
/// live write and reset reach them).
const HW_POINTS: &[&str] = &[
    "sparse beat with ignored lanes (noise)",
    "record waiting for its list",
    "d_ready low",
    "s_ready low",
    "input held off behind a stalled output",
    "table write during traffic",
    "reset in flight",
];

/// The directed case alone, on `sim` (no hardware): at every parameter set
/// of tb/models.toml it reaches every point the model decides (a beat
/// holding two lists' entries needs two lanes or more), so that no run's
/// coverage hangs on the random seed. Segments cut by a reset are left
/// out; the live write reloads the value already there.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    for (name, p) in oaken_cases::param_sets("oaken-dequantizer", 7) {
        let cov = Coverage::new(&format!("oaken_dequantizer directed case ({name})"), &all_points());
        for (seg, kinds) in segments(&p, &directed_case(&p)) {
            if seg.reset_at.is_some() {
                continue;
            }
            let (_, beats) = expected_dequantizer(&p, &seg.writes, &seg.stream);
            let run = DSegRun {
                live: seg.live.iter().map(|(c, w)| (*c as u64, w.clone(), 0)).collect(),
                first_edges: (0..seg.stream.recs.len() as u64).map(|k| 1_000_000 + k).collect(),
                beats,
                ..Default::default()
            };
            count(&cov, &p, &seg, &run, &kinds);
        }
        let boundary = "beat ends one record's list and starts the next's";
        let paper = p.middle_mode == MiddleMode::Paper;
        let required: Vec<&str> = all_points()
            .into_iter()
            .filter(|q| !HW_POINTS.contains(q) && (p.lanes > 1 || *q != boundary) && (paper || !PAPER_POINTS.contains(q)))
            .collect();
        cov.check_points(&required);
    }
}

#[test]
fn rtl_matches_model() {
    let cov = Coverage::new("oaken_dequantizer (default parameters, RTL)", &all_points());
    let run = || check(models::get("oaken_dequantizer"), "oaken_dequantizer_rtl", prop::cases(128), 3, &cov);
    run();
    cov.close(POINTS, run);
    cov.check_points(POINTS);
}

/// The tb/models.toml entry `name` has `middle-mode = paper`.
fn is_paper(name: &str) -> bool {
    oaken_cases::param_sets("oaken-dequantizer", 1).iter().any(|(n, p)| *n == name && p.middle_mode == MiddleMode::Paper)
}

/// Every other parameter set of tb/models.toml, on RTL.
#[test]
fn parameter_sets_match_model() {
    let sets: Vec<_> =
        models::of_unit("oaken-dequantizer", false).into_iter().filter(|m| m.name != "oaken_dequantizer").collect();
    assert!(sets.len() >= 6, "tb/models.toml has {} non-default dequantizer sets", sets.len());
    let paper = sets.iter().any(|m| is_paper(&m.name));
    let cov = Coverage::new("oaken_dequantizer (parameter sets, RTL)", &all_points());
    // side by side: the sets are independent models
    tb::build::jobs::map(&sets, |&info| check(info, &format!("{}_rtl", info.name), prop::cases(40), 3, &cov));
    if paper {
        cov.check();
    } else {
        cov.check_points(POINTS);
    }
}

/// The OSU018 netlists of this run.
#[test]
fn netlists_match_model() {
    let nets = models::of_unit("oaken-dequantizer", true);
    assert!(nets.len() >= 2, "{} dequantizer netlists in this run", nets.len());
    let cov = Coverage::new("oaken_dequantizer (netlists)", &all_points());
    let run = || {
        for &info in &nets {
            check(info, &info.name.to_string(), prop::cases(20), 2, &cov);
        }
    };
    run();
    let mut required = vec![
        "records",
        "d_ready low",
        "s_ready low",
        "malformed: entry never taken",
        "malformed: bad-beat entry flagged",
        "beat ends one record's list and starts the next's",
        "reset in flight",
    ];
    if nets.iter().any(|m| is_paper(&m.name)) {
        required.extend_from_slice(&PAPER_POINTS[..6]);
    }
    cov.close(&required, run);
    cov.check_points(&required);
    assert!(!prop::full_depth() || cov.count("records") >= 200, "at least 200 records on netlists");
}

fn realistic_writes() -> Vec<TableWrite> {
    let t = testgen::realistic_thresholds(1.0);
    let raw = [t.lo_outer, t.lo_inner, t.hi_inner, t.hi_outer];
    vec![TableWrite { layer: 0, v: false, raw }, TableWrite { layer: 0, v: true, raw }]
}

/// Spec §4.3: each malformed case raises `out_err` on the record's last
/// beat, and the record after a bad one decodes exactly: the counts alone
/// cut the stream. Each list is packed on its own here, so that a bad
/// beat holds only the bad record's entries.
#[test]
fn malformed_records_are_flagged_and_recovered_from() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let writes = realistic_writes()[..1].to_vec();
    // a token with outliers in both segments
    let x: Vec<u16> = (0..p.head_dim)
        .map(|i| match i % 9 {
            0 => 0x4800,            // 8.0: outer upper
            4 => 0xC800,            // -8.0: outer lower
            7 => 0x0001,            // tiny: inner
            _ => 0x3C00 + i as u16, // ~1: middle
        })
        .collect();
    let good = Token { layer: 0, v: false, x };
    let base = records_of(&p, &writes, std::slice::from_ref(&good));
    let rec = base.recs[0].clone();
    let coo: Vec<u8> = base.entries(p.lanes).iter().map(|e| e.0).collect();
    assert!(coo.len() > p.lanes && rec.counts.iter().all(|&c| c > 0));
    let mut bad: Vec<(&str, DenseRecord, Vec<u8>, bool)> = Vec::new();
    let mut swap = coo.clone();
    swap.swap(1, 2);
    bad.push(("out of order", rec.clone(), swap, false));
    let mut dup = coo.clone();
    dup[3] = dup[2];
    bad.push(("duplicate", rec.clone(), dup, false));
    let mut moved = rec.clone();
    moved.counts[0] -= 1;
    moved.counts[1] += 1;
    bad.push(("entry in the wrong segment", moved, coo.clone(), false));
    let mut big = rec.clone();
    big.counts[0] = 65;
    let mut padded = coo.clone();
    padded.resize(big.list_len(), 0xFC);
    bad.push(("count over segment length", big, padded, false));
    let mut huge = rec.clone();
    huge.counts.iter_mut().for_each(|c| *c = 255);
    let junk: Vec<u8> = (0..huge.list_len()).map(|i| (i * 37) as u8).collect();
    bad.push(("255 in every count (long remainder dropped)", huge, junk, false));
    bad.push(("beat count over lanes", rec.clone(), coo.clone(), true));
    for (what, brec, list, over) in bad {
        let mut sparse = pack_sparse(&coo, p.lanes);
        let at = sparse.len();
        sparse.extend(pack_sparse(&list, p.lanes));
        if over {
            sparse[at].count = p.lanes as u8 + 1;
        }
        sparse.extend(pack_sparse(&coo, p.lanes));
        let s = DStream { recs: vec![rec.clone(), brec, rec.clone()], sparse };
        let (_, want) = expected_dequantizer(&p, &writes, &s);
        let b = p.head_beats();
        assert_eq!(want.len(), 3 * b, "{what}");
        assert!(!want[b - 1].err && want[2 * b - 1].err && !want[3 * b - 1].err, "{what}: the model flags it");
        assert_eq!(want[..b], want[2 * b..], "{what}: the model recovers");
        let mut m = Model::new(info);
        m.reset(1);
        let run = drive_dequantizer(&mut m, &writes, &s, &DStalls::none(), 1).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(run.beats, want, "{what}");
    }
}

/// Tokens with no outliers, with every element an outlier, and in between.
fn outlier_sweep(p: &OakenParams) -> Vec<Token> {
    let t = testgen::realistic_thresholds(1.0);
    let hi = sim::fp16::to_units(t.hi_outer);
    let above = sim::fp16::from_f32(sim::fp16::to_f32(t.hi_outer) * 2.0 + 1.0);
    assert!(sim::fp16::to_units(above) > hi);
    (0..8)
        .map(|k| Token {
            layer: 0,
            v: k % 2 == 1,
            // k = 0: none; k = 7: all; otherwise every (8-k)-th element
            x: (0..p.vector_len())
                .map(|i| {
                    let out = k == 7 || (k > 0 && i % (8 - k) == 0);
                    if out {
                        above
                    } else {
                        0x3C00 + (i % 64) as u16
                    }
                })
                .collect(),
        })
        .collect()
}

/// Spec §4.2 throughput and latency: with a packed stream, both inputs
/// always valid and the output always ready, one beat per cycle with no
/// bubble, also between records, for records with 0 to head_dim outliers;
/// the first output follows the first dense beat by the manifest's latency.
#[test]
fn sustains_one_beat_per_cycle() {
    for info in models::of_unit("oaken-dequantizer", false).into_iter() {
        let mut m = Model::new(info);
        let p = params_of(&m);
        m.reset(1);
        let writes = realistic_writes();
        let mut tokens = outlier_sweep(&p);
        tokens.extend(outlier_sweep(&p));
        let s = records_of(&p, &writes, &tokens);
        let counts: Vec<usize> = s.recs.iter().map(DenseRecord::list_len).collect();
        assert!(counts.contains(&0) && counts.contains(&p.head_dim), "{}: outlier counts {counts:?}", info.name);
        let run = drive_dequantizer(&mut m, &writes, &s, &DStalls::none(), 1)
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        let n = run.out_cycles.len() as u64;
        assert_eq!(run.d_cycles.last().unwrap() - run.d_cycles[0], n - 1, "{}: dense input bubbles", info.name);
        assert_eq!(run.out_cycles.last().unwrap() - run.out_cycles[0], n - 1, "{}: output bubbles", info.name);
        let latency = run.out_cycles[0] - run.d_cycles[0];
        assert_eq!(Some(latency), info.latency(), "{}: latency", info.name);
        println!(
            "{}: {} records ({:?} outliers), {} elements/cycle sustained, latency {} cycles",
            info.name,
            s.recs.len(),
            counts,
            p.lanes,
            latency
        );
    }
}

/// Spec §4.3: a record whose list has not fully arrived waits for it; a
/// record before it with no outliers does not.
#[test]
fn record_waits_for_its_list() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let writes = realistic_writes();
    let sweep = outlier_sweep(&p);
    let s = records_of(&p, &writes, &[sweep[0].clone(), sweep[3].clone()]);
    assert!(s.recs[0].list_len() == 0 && s.recs[1].list_len() > 0);
    let mut m = Model::new(info);
    m.reset(1);
    let block = 200;
    let st = DStalls { s: Stall::Block { start: 0, len: block }, ..DStalls::none() };
    let run = drive_dequantizer(&mut m, &writes, &s, &st, 3).unwrap();
    let b = p.head_beats();
    assert!(run.out_cycles[b - 1] < 40, "the record without outliers waited: {:?}", &run.out_cycles[..b]);
    assert!(run.out_cycles[b] > block as u64, "a beat of the record with outliers came out before its list");
}

/// Spec §4.2: a table write sampled at edge t applies to records whose first
/// dense beat is accepted at t + 1 or later, not to one accepted at t.
#[test]
fn table_write_takes_effect_after_the_first_beat() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let set = |s: f32| TableWrite::of(0, false, testgen::realistic_thresholds(s));
    let (old, new) = (set(1.0), set(0.25));
    let tok = Token { v: false, ..outlier_sweep(&p)[3].clone() };
    let s = records_of(&p, std::slice::from_ref(&old), std::slice::from_ref(&tok));
    // the dense input idles one cycle: the first beat is taken at edge 1
    let stalls = DStalls { d: Stall::Block { start: 0, len: 1 }, ..DStalls::none() };
    for (w, uses_new) in [(0u32, true), (1, false), (2, false)] {
        let mut m = Model::new(info);
        m.reset(1);
        let seg = DSegment {
            live: vec![(w, new.clone())],
            ..DSegment::plain(vec![old.clone()], s.clone(), stalls.clone(), 9)
        };
        let run = run_dequantizer_segment(&mut m, &seg, 5000).unwrap();
        assert_eq!(run.first_edges[0], 1);
        check_dequantizer_segment(&p, &seg, &run).unwrap_or_else(|e| panic!("write at edge {w}: {e}"));
        // the rule, stated directly (heads = 1: one record)
        let table = if uses_new { vec![old.clone(), new.clone()] } else { vec![old.clone()] };
        let (_, want) = expected_dequantizer(&p, &table, &s);
        assert_eq!(
            run.beats[..p.head_beats()],
            want[..p.head_beats()],
            "write at edge {w}, first dense beat at edge 1"
        );
    }
}

/// Spec §4.2 reset: a reset with records in flight loses them, the window's
/// entries with them, and clears the table; the engine then decodes as
/// from power-up, the next record's list starting with the next entry.
#[test]
fn reset_mid_stream_restarts_cleanly() {
    let info = models::get("oaken_dequantizer");
    let p = params_of(&Model::new(info));
    let writes = realistic_writes();
    let tokens = outlier_sweep(&p);
    let s = records_of(&p, &writes, &tokens);
    for at in [1u32, 4, p.head_beats() as u32 + 3, 30] {
        let mut m = Model::new(info);
        m.reset(1);
        let out = DStalls { out: Stall::Random { p: 100 }, ..DStalls::none() };
        let cut = DSegment { reset_at: Some(at), ..DSegment::plain(writes.clone(), s.clone(), out, 5) };
        let run = run_dequantizer_segment(&mut m, &cut, 5000).unwrap();
        assert!(run.cut);
        check_dequantizer_segment(&p, &cut, &run).unwrap_or_else(|e| panic!("reset at {at}: {e}"));
        let two = records_of(&p, &writes, &tokens[5..7]);
        let after = DSegment::plain(vec![], two, DStalls::none(), 6);
        let run2 = run_dequantizer_segment(&mut m, &after, 5000).unwrap();
        check_dequantizer_segment(&p, &after, &run2).unwrap_or_else(|e| panic!("after a reset at {at}: {e}"));
        let again = DSegment::plain(writes.clone(), s.clone(), DStalls::none(), 7);
        let run3 = run_dequantizer_segment(&mut m, &again, 5000).unwrap();
        check_dequantizer_segment(&p, &again, &run3).unwrap_or_else(|e| panic!("after a reset at {at}: {e}"));
    }
}

#[test]
fn model_list_has_the_default_engine() {
    let m = models::get("oaken_dequantizer");
    assert!(!m.gate_level);
    assert_eq!(params_of(&Model::new(m)), OakenParams::default());
    assert_eq!(SEGMENT, 64);
}
