//! The Titanus data path PU -> QU -> DQU (spec §11.4-§11.8, §11.13) on the
//! hardware: each stage driven by its own driver and checked bit for bit
//! against its `sim` model (`prune_beats`, `Quantizer`, `Dequantizer`), each
//! fed with what the stage before it produced, and the rebuilt values
//! compared with `sim` run end to end on the INT8 tokens. One half of the
//! QU per case, K or V by the sequence's `start`, as the hardware pairs two
//! halves. Stages run one after the other on the stage before's output
//! transactions (not cycle-coupled). Sequences: a prefill, then a long
//! decode (200 to 500 tokens) drifting out of range so that levels open up
//! to and past the limit; an all-pruned and a constant channel in every
//! sequence. On RTL, and on the netlists of the sets that have all three.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use sim::titanus::dequantizer::{Dequantizer, SkipCounters};
use sim::titanus::pruner::Pruned;
use sim::titanus::quantizer::{Record, SzEntry, TokenOut};
use tb::coverage::Coverage;
use tb::stalls::{self, Stall};
use tb::titanus_dequantizer as tdq;
use tb::titanus_pruner as tp;
use tb::titanus_quantizer::{self as tq, Input, Op, QuantParams};
use tb::{models, prop, prop::run_property_on, Model, ModelInfo};

const POINTS: &[&str] = &[
    "level opened in decode",
    "level limit reached (saturated element)",
    "all-pruned (empty) channel",
    "single-value range",
    "DQU skip: label zero",
    "DQU skip: zero point",
    "DQU multiply",
];

/// Pruner, quantizer and dequantizer models that fit together: same lanes
/// and layers (PU, QU), same channels, lanes and levels (QU, DQU).
fn chains(gate_level: bool) -> Vec<[&'static ModelInfo; 3]> {
    let pus: Vec<_> = models::of_unit("titanus-pruner", gate_level);
    let dqus: Vec<_> = models::of_unit("titanus-dequantizer", gate_level);
    let mut out = Vec::new();
    for qu in models::of_unit("titanus-quantizer", gate_level) {
        let p = tq::params_of(&Model::new(qu));
        let pu = pus.iter().find(|&&i| {
            let pp = tp::params_of(&Model::new(i));
            pp.lanes == p.lanes && pp.layers == p.layers
        });
        let dqu = dqus.iter().find(|&&i| {
            let d = tdq::params_of(&Model::new(i));
            (d.channels, d.lanes, d.max_levels) == (p.channels, p.lanes, p.max_levels)
        });
        if let (Some(&pu), Some(&dqu)) = (pu, dqu) {
            out.push([pu, qu, dqu]);
        }
    }
    out
}

#[derive(Clone, Debug)]
struct ChainCase {
    qu: tq::Case,
    /// PU in/out, DQU in/out.
    stalls: [Stall; 4],
}

fn chain_case(p: QuantParams, seqs: std::ops::Range<usize>) -> impl Strategy<Value = ChainCase> {
    let s = || prop_oneof![3 => stalls::stall(), 1 => stalls::long_stall()];
    (seqs, any::<u64>(), (stalls::stall(), s(), s(), stalls::stall(), stalls::stall(), s(), s())).prop_map(
        move |(n, seed, st)| {
            let style = tq::Style { decode: (200, 500), edges: false };
            let (a, b, c, d, e, f, g) = st;
            let mut qu = tq::case_of(&p, n, seed, style, [a, b, c]);
            // every write first: the PU applies them before its stream
            qu.ops.sort_by_key(|o| !matches!(o, Op::Write(_)));
            ChainCase { qu, stalls: [d, e, f, g] }
        },
    )
}

/// A fixed case of the same kind (two sequences from a fixed seed, fixed
/// stalls), run once per chain: with it every point is reached whatever
/// the seed (checked on the model by
/// `directed_case_reaches_every_event_on_the_model`).
fn directed_chain_case(p: QuantParams) -> ChainCase {
    let style = tq::Style { decode: (200, 500), edges: false };
    let burst = || Stall::Bursty { enter: 8, leave: 16 };
    let mut qu = tq::case_of(&p, 2, 0xc4a1_0003, style, [Stall::Random { p: 40 }, burst(), Stall::Random { p: 60 }]);
    qu.ops.sort_by_key(|o| !matches!(o, Op::Write(_)));
    ChainCase { qu, stalls: [Stall::Random { p: 40 }, burst(), Stall::Random { p: 40 }, burst()] }
}

/// Counts the points `sim` alone decides for a case (the same the hardware
/// runs count); `Err` when a kept element misses its level.
fn model_cover(cov: &Coverage, p: &QuantParams, c: &ChainCase) -> Result<(), String> {
    let (_, k, ev) = end_to_end(p, &tq::lower(p, &c.qu.ops))?;
    if k.missing_level != 0 {
        return Err("a kept element without a level".into());
    }
    cov.add("level opened in decode", ev.decode_levels);
    cov.add("level limit reached (saturated element)", ev.saturated);
    cov.add("all-pruned (empty) channel", ev.empty_channels);
    cov.add("single-value range", ev.single_value);
    cov.add("DQU skip: label zero", k.label_zero);
    cov.add("DQU skip: zero point", k.zero_point);
    cov.add("DQU multiply", k.multiplies);
    Ok(())
}

/// Runs sim end to end: prune, quantize, then dequantize each sequence
/// from a cleared table with its entries loaded before each token.
fn end_to_end(p: &QuantParams, inputs: &[Input]) -> Result<(Vec<Vec<i8>>, SkipCounters, tq::Events), String> {
    let mut ex = tq::Expect::new(p);
    for i in inputs {
        match i {
            Input::Write(w) => {
                tb::titanus_table::apply(&mut ex.table, w);
            }
            _ => ex.apply(i)?,
        }
    }
    let (x, k) = dequantize_all(p, &ex.tokens);
    Ok((x, k, ex.ev))
}

fn dequantize_all(p: &QuantParams, tokens: &[(usize, TokenOut)]) -> (Vec<Vec<i8>>, SkipCounters) {
    let mut dq = Dequantizer::new(&p.titanus());
    let mut seq = usize::MAX;
    let x = tokens
        .iter()
        .map(|(s, t)| {
            if *s != seq {
                dq.table.clear();
                seq = *s;
            }
            for e in &t.entries {
                dq.table.load(e).expect("the QU's entries fit the DQU");
            }
            dq.dequantize(t.pos, &t.record)
        })
        .collect();
    (x, dq.counters)
}

fn run_chain(ms: &mut [Model], p: &QuantParams, c: &ChainCase, cov: &Coverage) -> Result<(), String> {
    let inputs = tq::lower(p, &c.qu.ops);
    // ---- PU: every token, K and V side by side; the sequence's side is the
    // token, the other side the token reversed
    let pp = tp::PrunerParams { channels: p.channels, ..tp::params_of(&ms[0]) };
    let mut writes = Vec::new();
    let mut tokens = Vec::new();
    let mut side = Vec::new();
    let (mut layer, mut v) = (0u8, false);
    for o in &c.qu.ops {
        match o {
            Op::Write(w) => writes.push(*w),
            Op::Start { layer: l, v: s } => (layer, v) = (*l, *s),
            Op::Flush => {}
            Op::Prefill(x) | Op::Decode(x) => {
                let mut y = x.clone();
                y.reverse();
                let (k, vv) = if v { (y, x.clone()) } else { (x.clone(), y) };
                tokens.push(tp::Token { layer, k, v: vv });
                side.push(v);
            }
        }
    }
    let pc = tp::Case {
        writes: writes.clone(),
        tokens,
        live: vec![],
        in_stall: c.stalls[0].clone(),
        out_stall: c.stalls[1].clone(),
        seed: c.qu.seed ^ 0x11,
    };
    let pr = tp::run(&mut ms[0], &pp, &pc).map_err(|e| format!("PU: {e}"))?;
    // the PU's beats, token by token, as the QU's pruned tokens
    let mut pu_tokens = pr.expected.chunks(p.beats()).zip(&side).map(|(bs, &v)| {
        let mut t = Pruned::default();
        for b in bs {
            let (mask, data, count) =
                if v { (b.v_mask, &b.v_data, b.v_count) } else { (b.k_mask, &b.k_data, b.k_count) };
            t.index.extend((0..p.lanes).map(|i| mask >> i & 1 == 1));
            t.values.extend(data[..count as usize].iter().map(|&x| x as u8 as i8));
        }
        t
    });
    let qin: Vec<Input> = inputs
        .iter()
        .map(|i| match i {
            Input::Prefill(want) | Input::Decode(want) => {
                let t = pu_tokens.next().expect("a PU token per QU token");
                assert_eq!(&t, want, "PU output vs sim prune with the same table");
                if matches!(i, Input::Prefill(_)) {
                    Input::Prefill(t)
                } else {
                    Input::Decode(t)
                }
            }
            other => other.clone(),
        })
        .collect();
    // ---- QU
    let q = &c.qu;
    let qr = tq::run_inputs(&mut ms[1], p, &qin, [&q.in_stall, &q.rec_stall, &q.sz_stall], q.seed)
        .map_err(|e| format!("QU: {e}"))?;
    // ---- DQU: the QU's sz words before the token that created them, the
    // QU's record beats as records; a clear before each sequence
    let dp = tdq::params_of(&ms[2]);
    let mut ops = Vec::new();
    let mut words = qr.sz.iter();
    let mut seq = usize::MAX;
    let mut records = Vec::new();
    for ((s, t), bs) in qr.tokens.iter().zip(qr.rec.chunks(p.beats())) {
        if *s != seq {
            ops.push(tdq::Op::Clear);
            seq = *s;
        }
        let entries: Vec<SzEntry> =
            t.entries.iter().map(|_| SzEntry::from_word(*words.next().expect("an sz word per entry"))).collect();
        ops.extend(entries.iter().map(|e| tdq::Op::Load(*e)));
        let mut rec = Record::default();
        for b in bs {
            rec.index.extend((0..p.lanes).map(|i| b.index >> i & 1 == 1));
            rec.label.extend((0..p.lanes).map(|i| b.label >> i & 1 == 1));
            rec.codes.extend(b.codes[..b.count as usize].iter().map(|&x| x as u8));
        }
        records.push((*s, TokenOut { pos: bs[0].pos as u32, record: rec.clone(), entries, saturated: 0 }));
        ops.push(tdq::Op::Token { pos: bs[0].pos as u16, rec });
    }
    let dc = tdq::Case { ops, in_stall: c.stalls[2].clone(), out_stall: c.stalls[3].clone(), seed: q.seed ^ 0x33 };
    let dr = tdq::run(&mut ms[2], &dp, &dc).map_err(|e| format!("DQU: {e}"))?;
    if dr.counters[4] != 0 {
        return Err(format!("DQU: {} kept elements without a level: the QU's entries miss some", dr.counters[4]));
    }
    // ---- end to end: the DQU's output (checked above against `sim` on the
    // QU's records) equals `sim` run on the INT8 tokens
    let got = dequantize_all(p, &records).0;
    let want = end_to_end(p, &inputs)?.0;
    if got != want {
        let i = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        return Err(format!(
            "end to end: token {i} rebuilt {:?}, sim {:?} ({} vs {} tokens)",
            got.get(i),
            want.get(i),
            got.len(),
            want.len()
        ));
    }
    cov.add("level opened in decode", qr.ev.decode_levels);
    cov.add("level limit reached (saturated element)", qr.ev.saturated);
    cov.add("all-pruned (empty) channel", qr.ev.empty_channels);
    cov.add("single-value range", qr.ev.single_value);
    cov.add("DQU skip: label zero", dr.counters[1]);
    cov.add("DQU skip: zero point", dr.counters[2]);
    cov.add("DQU multiply", dr.counters[3]);
    Ok(())
}

fn check(level: &str, gate_level: bool, cases: u32) {
    let sets = chains(gate_level);
    assert!(!sets.is_empty(), "no pruner / quantizer / dequantizer models that fit together ({level})");
    let cov = Coverage::new(&format!("titanus_chain ({level})"), POINTS);
    for set in sets {
        let p = tq::params_of(&Model::new(set[1]));
        let name = format!("chain_{}", set[1].name);
        let t = std::time::Instant::now();
        run_property_on(&name, &set, chain_case(p, 1..3), cases, |ms, c| run_chain(ms, &p, c, &cov));
        let directed = Just(directed_chain_case(p));
        run_property_on(&format!("{name}_directed"), &set, directed, 1, |ms, c| run_chain(ms, &p, c, &cov));
        println!(
            "{name}: {} + {} + {}, {cases} cases in {:.1} s",
            set[0].name,
            set[1].name,
            set[2].name,
            t.elapsed().as_secs_f64()
        );
    }
    cov.check();
}

#[test]
fn rtl_chain_matches_sim() {
    check("RTL", false, prop::cases(40));
}

#[test]
fn netlist_chain_matches_sim() {
    check("netlists", true, prop::cases(10));
}

/// The chain's stimulus on `sim` alone (no hardware needed): over the
/// quantizer sets of tb/models.toml, the cases reach every coverage point
/// and no kept element misses its level.
#[test]
fn chain_stimulus_reaches_every_event_on_the_model() {
    let cov = Coverage::new("titanus_chain stimulus (model only)", POINTS);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for s in models::specs().iter().filter(|s| s.unit == "titanus-quantizer") {
        let p = tq::params_of_spec(&s.params);
        for _ in 0..prop::cases(4) {
            let c = chain_case(p, 1..3).new_tree(&mut runner).expect("a case").current();
            model_cover(&cov, &p, &c).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }
    cov.check();
}

/// The fixed case alone, on `sim`: every point at every quantizer set of
/// tb/models.toml, so that no chain run's coverage hangs on the seed.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    for s in models::specs().iter().filter(|s| s.unit == "titanus-quantizer") {
        let p = tq::params_of_spec(&s.params);
        let cov = Coverage::new(&format!("titanus_chain fixed case ({})", s.name), POINTS);
        model_cover(&cov, &p, &directed_chain_case(p)).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        cov.check();
    }
}
