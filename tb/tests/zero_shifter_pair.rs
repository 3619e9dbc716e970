//! zero-remove-shifter followed by zero-insert-shifter (spec §3, §3.1): two
//! Verilated models chained as streams, the remove unit's `out_*` feeding the
//! insert unit's `in_*`, with the mask of each beat delivered alongside its
//! compacted vector (a testbench FIFO stands in for the side channel a real
//! datapath carries). Every beat must come back as the input with the lanes
//! outside its mask cleared, in order, exactly once; the sim models
//! (`sim::shifter::{zero_remove, zero_insert}`) give the same answer, checked
//! here too.
//!
//! Pairs are every remove and insert model of tb/models.toml with the same
//! lanes and width, RTL with RTL and netlist with netlist. At 8 lanes each
//! case streams all 256 masks (shuffled, random data); at 16, 32 and 64
//! lanes, random masks. The source idles, the sink stalls, both at random.
//! On failure the shrunk case is re-run with a VCD of each model.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use sim::shifter::{mask_bits, zero_insert, zero_remove};
use sim::testgen;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tb::prop::{vcd_path, RESET_CYCLES};
use tb::{models, Model, ModelInfo, PortId};

#[derive(Clone, Debug)]
struct Beat {
    data: Vec<u64>,
    mask: u128,
}

#[derive(Clone, Debug)]
struct Case {
    beats: Vec<Beat>,
    /// Cycle `i`: the source idles if it has no beat on the bus.
    idle: Vec<bool>,
    /// Cycle `i`: the sink's `out_ready` is low.
    stall: Vec<bool>,
    /// Seed of the junk driven on idle inputs.
    junk: u64,
}

fn full(bits: usize) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn wmask(w: usize) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

fn shape(info: &ModelInfo) -> (usize, usize) {
    let p = info.params();
    (p["lanes"].as_u64().unwrap() as usize, p["width"].as_u64().unwrap() as usize)
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn data(n: usize, w: usize) -> impl Strategy<Value = Vec<u64>> {
    let m = wmask(w);
    prop::collection::vec(prop_oneof![6 => any::<u64>().prop_map(move |v| v & m), 1 => Just(0u64), 1 => Just(m)], n)
}

/// A schedule with a per-case density of `true` (often 0: never).
fn schedule(max: usize) -> impl Strategy<Value = Vec<bool>> {
    prop_oneof![Just(0.0), Just(0.2), Just(0.5), Just(0.8)]
        .prop_flat_map(move |p| prop::collection::vec(prop::bool::weighted(p), 0..max))
}

/// All 2^n masks (n <= 8) in a random order, each with random data.
fn every_mask(n: usize, w: usize) -> impl Strategy<Value = Case> {
    let masks: Vec<u128> = (0..1u128 << n).collect();
    let beats = (Just(masks).prop_shuffle(), prop::collection::vec(data(n, w), 1 << n)).prop_map(|(masks, data)| {
        masks.into_iter().zip(data).map(|(mask, data)| Beat { data, mask }).collect::<Vec<_>>()
    });
    (beats, schedule(600), schedule(600), any::<u64>()).prop_map(|(beats, idle, stall, junk)| Case { beats, idle, stall, junk })
}

/// Random masks: all, none, one lane, one lane clear, a run, and random ones
/// of low, even and high density.
fn mask(n: usize) -> impl Strategy<Value = u128> {
    let all = full(n);
    prop_oneof![
        1 => Just(all),
        1 => Just(0u128),
        1 => (0..n).prop_map(|i| 1u128 << i),
        1 => (0..n).prop_map(move |i| all & !(1u128 << i)),
        1 => (0..n, 0..n).prop_map(move |(a, b)| full(a.max(b) + 1) & !full(a.min(b))),
        3 => any::<u128>().prop_map(move |m| m & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| a & b & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| (a | b) & all),
    ]
}

fn random_masks(n: usize, w: usize) -> impl Strategy<Value = Case> {
    let beat = (data(n, w), mask(n)).prop_map(|(data, mask)| Beat { data, mask });
    (prop::collection::vec(beat, 1..60), schedule(200), schedule(200), any::<u64>())
        .prop_map(|(beats, idle, stall, junk)| Case { beats, idle, stall, junk })
}

struct RemovePorts {
    in_valid: PortId,
    in_ready: PortId,
    in_data: PortId,
    in_keep: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
    out_count: PortId,
}

struct InsertPorts {
    in_valid: PortId,
    in_ready: PortId,
    in_data: PortId,
    in_mask: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
}

/// The expected output of beat `b`: its data with the lanes outside the mask
/// cleared, which is also what the two sim models give in a row.
fn expected(b: &Beat, n: usize) -> Result<Vec<u64>, String> {
    let keep = mask_bits(b.mask, n);
    let want: Vec<u64> = (0..n).map(|i| if keep[i] { b.data[i] } else { 0 }).collect();
    let (packed, _) = zero_remove(&b.data, &keep);
    let model = zero_insert(&packed, &keep);
    if model != want {
        return Err(format!("sim models: insert(remove(x, k), k) = {model:x?}, expected {want:x?}"));
    }
    Ok(want)
}

/// Runs one case on a remove model `r` and an insert model `i`, both just
/// out of reset.
fn check(r: &mut Model, i: &mut Model, c: &Case) -> Result<(), String> {
    let (n, w) = shape(r.info());
    let rp = RemovePorts {
        in_valid: r.port("in_valid"),
        in_ready: r.port("in_ready"),
        in_data: r.port("in_data"),
        in_keep: r.port("in_keep"),
        out_valid: r.port("out_valid"),
        out_ready: r.port("out_ready"),
        out_data: r.port("out_data"),
        out_count: r.port("out_count"),
    };
    let ip = InsertPorts {
        in_valid: i.port("in_valid"),
        in_ready: i.port("in_ready"),
        in_data: i.port("in_data"),
        in_mask: i.port("in_mask"),
        out_valid: i.port("out_valid"),
        out_ready: i.port("out_ready"),
        out_data: i.port("out_data"),
    };
    let (r_lat, i_lat) = (r.info().latency().unwrap(), i.info().latency().unwrap());
    let latency = r_lat + i_lat;
    let mut junk = c.junk | 1;
    let mut next = 0; // next beat to present
    let mut presenting = false;
    // accepted by remove, not yet passed to insert; passed to insert, not yet out
    let mut in_remove: VecDeque<usize> = VecDeque::new();
    let mut in_insert: VecDeque<usize> = VecDeque::new();
    let mut done = 0;
    let limit = (c.beats.len() + c.idle.len() + c.stall.len()) as u64 + latency + 8;
    for cyc in 0..limit {
        let k = cyc as usize;
        if !presenting && next < c.beats.len() && !c.idle.get(k).copied().unwrap_or(false) {
            presenting = true;
        }
        if presenting {
            let b = &c.beats[next];
            r.set(rp.in_valid, 1);
            r.set_lanes(rp.in_data, &b.data);
            r.set_u128(rp.in_keep, b.mask);
        } else {
            r.set(rp.in_valid, 0);
            let d: Vec<u64> = (0..n).map(|_| xorshift(&mut junk) & wmask(w)).collect();
            r.set_lanes(rp.in_data, &d);
            r.set_u128(rp.in_keep, ((xorshift(&mut junk) as u128) << 64 | xorshift(&mut junk) as u128) & full(n));
        }
        r.eval();
        // the beat on the link: the oldest in the remove unit, or (a
        // combinational remove unit) the one presented to it
        let link_valid = r.get(rp.out_valid) == 1;
        let on_link = in_remove.front().copied().or(if r_lat == 0 && presenting { Some(next) } else { None });
        i.set(ip.in_valid, link_valid as u64);
        i.set_lanes(ip.in_data, &r.get_lanes(rp.out_data));
        match (link_valid, on_link) {
            (true, Some(b)) => {
                let want = c.beats[b].mask.count_ones() as u64;
                if r.get(rp.out_count) != want {
                    return Err(format!("cycle {cyc}, beat {b}: remove out_count {}, expected {want}", r.get(rp.out_count)));
                }
                i.set_u128(ip.in_mask, c.beats[b].mask);
            }
            (true, None) => return Err(format!("cycle {cyc}: remove out_valid with no beat in it")),
            (false, _) => i.set_u128(ip.in_mask, ((xorshift(&mut junk) as u128) << 64 | xorshift(&mut junk) as u128) & full(n)),
        }
        let ready = !c.stall.get(k).copied().unwrap_or(false);
        i.set(ip.out_ready, ready as u64);
        i.eval();
        let link_ready = i.get(ip.in_ready) == 1;
        r.set(rp.out_ready, link_ready as u64);
        r.eval();

        if presenting && r.get(rp.in_ready) == 1 {
            in_remove.push_back(next);
            next += 1;
            presenting = false;
        }
        if link_valid && link_ready {
            in_insert.push_back(in_remove.pop_front().expect("a beat crossed the link"));
        }
        if i.get(ip.out_valid) == 1 {
            // a combinational insert unit shows the beat on the link before taking it
            let b = match (in_insert.front(), on_link) {
                (Some(&b), _) => b,
                (None, Some(b)) if i_lat == 0 && link_valid => b,
                _ => return Err(format!("cycle {cyc}: insert out_valid with no beat owed")),
            };
            let got = i.get_lanes(ip.out_data);
            let want = expected(&c.beats[b], n)?;
            if got != want {
                return Err(format!(
                    "cycle {cyc}, beat {b} (mask {:#x}, data {:x?}): out_data {got:x?}, expected {want:x?}",
                    c.beats[b].mask, c.beats[b].data
                ));
            }
            if ready && !in_insert.is_empty() {
                in_insert.pop_front();
                done += 1;
            }
        }
        r.tick();
        i.tick();
        if done == c.beats.len() {
            break;
        }
    }
    if done != c.beats.len() {
        return Err(format!(
            "after {limit} cycles {done} of {} beats came out ({} in remove, {} in insert, {} never accepted)",
            c.beats.len(),
            in_remove.len(),
            in_insert.len(),
            c.beats.len() - next
        ));
    }
    i.set(ip.in_valid, 0);
    i.set(ip.out_ready, 1);
    i.eval();
    if i.get(ip.out_valid) != 0 {
        return Err("insert out_valid after every beat came out".into());
    }
    Ok(())
}

fn fresh(info: &'static ModelInfo, seed: u32) -> Model {
    let mut m = Model::with_seed(info, seed);
    m.reset(RESET_CYCLES);
    m
}

/// proptest over `strategy` on fresh models of the pair; on failure, the
/// shrunk case again with a VCD of each model, then a panic.
fn run_pair<S>(test: &str, r: &'static ModelInfo, i: &'static ModelInfo, strategy: S, cases: u32)
where
    S: Strategy<Value = Case>,
{
    let mut config = Config { failure_persistence: None, cases: testgen::cases(cases), ..Config::default() };
    if let Some(s) = std::env::var("KVFORGE_SEED").ok().and_then(|v| v.trim().parse().ok()) {
        config.rng_seed = RngSeed::Fixed(s);
    }
    let mut runner = TestRunner::new(config);
    let result = runner.run(&(any::<u32>(), strategy), |(seed, c)| {
        let (mut rm, mut im) = (fresh(r, seed), fresh(i, seed));
        check(&mut rm, &mut im, &c).map_err(TestCaseError::fail)
    });
    let (reason, (seed, c)) = match result {
        Ok(()) => return,
        Err(TestError::Fail(reason, value)) => (reason, value),
        Err(TestError::Abort(reason)) => panic!("{test} on {} -> {}: aborted: {reason}", r.name, i.name),
    };
    let (rv, iv) = (vcd_path(test, r), vcd_path(test, i));
    let (mut rm, mut im) = (Model::with_seed(r, seed), Model::with_seed(i, seed));
    let traced = rm.trace_to(&rv).is_ok() && im.trace_to(&iv).is_ok();
    rm.reset(RESET_CYCLES);
    im.reset(RESET_CYCLES);
    let _ = catch_unwind(AssertUnwindSafe(|| check(&mut rm, &mut im, &c)));
    drop((rm, im));
    let waves = if traced { format!("\nwaveforms: {} and {}", rv.display(), iv.display()) } else { String::new() };
    panic!("{test} on {} -> {}: {reason}{waves}\nminimal failing input (model seed {seed}): {c:?}", r.name, i.name);
}

/// Every (remove, insert) pair of models with `lanes` lanes and equal widths.
fn pairs(lanes: usize, gate_level: bool) -> Vec<(&'static ModelInfo, &'static ModelInfo)> {
    let of = |unit: &str| -> Vec<&'static ModelInfo> {
        models::all()
            .into_iter()
            .filter(|m| m.unit == unit && m.gate_level == gate_level && shape(m).0 == lanes)
            .collect()
    };
    let (rs, is) = (of("zero-remove-shifter"), of("zero-insert-shifter"));
    let v: Vec<_> =
        rs.iter().flat_map(|&r| is.iter().filter(move |&&i| shape(i).1 == shape(r).1).map(move |&i| (r, i))).collect();
    assert!(
        !v.is_empty(),
        "no remove/insert model pair with {lanes} lanes and equal widths (gate level: {gate_level}) in tb/models.toml"
    );
    v
}

fn all_masks_n8(gate_level: bool, cases: u32) {
    for (r, i) in pairs(8, gate_level) {
        let w = shape(r).1;
        run_pair("zero_pair_all_masks", r, i, every_mask(8, w), cases);
    }
}

fn random_masks_wide(gate_level: bool, cases: u32) {
    for lanes in [16, 32, 64] {
        for (r, i) in pairs(lanes, gate_level) {
            let w = shape(r).1;
            run_pair("zero_pair_random_masks", r, i, random_masks(lanes, w), cases);
        }
    }
}

/// N = 8: each case is all 256 masks (shuffled, random data) in one stream.
#[test]
fn rtl_all_masks_n8() {
    all_masks_n8(false, 64);
}

#[test]
fn netlist_all_masks_n8() {
    all_masks_n8(true, 32);
}

/// N = 16, 32, 64: random masks.
#[test]
fn rtl_random_masks_n16_to_n64() {
    random_masks_wide(false, 150);
}

#[test]
fn netlist_random_masks_n16_to_n64() {
    random_masks_wide(true, 100);
}
