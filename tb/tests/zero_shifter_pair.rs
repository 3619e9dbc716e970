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
//! lanes, random masks. The source idles and withdraws offers, the sink
//! stalls per cycle and in bursts, all at random (`tb::pipe` cases). On
//! failure the shrunk case is re-run with a VCD of each model.

use proptest::prelude::*;
use sim::shifter::{mask_bits, zero_insert, zero_remove};
use std::collections::VecDeque;
use tb::pipe::{self, Case, Feed, Handshake, MaskedBeat as Beat};
use tb::prop::{cases, run_property_on};
use tb::{models, Model, ModelInfo};

/// All 2^n masks (n <= 8) in a random order, each with random data.
fn every_mask(n: usize, w: usize) -> impl Strategy<Value = Case<Beat>> {
    let masks: Vec<u128> = (0..1u128 << n).collect();
    let beats = (Just(masks).prop_shuffle(), proptest::collection::vec(pipe::lane_values(n, w), 1 << n))
        .prop_map(|(masks, data)| masks.into_iter().zip(data).map(|(mask, data)| Beat { data, mask }).collect());
    pipe::case(beats, 600)
}

/// Random masks (`pipe::lane_mask`).
fn random_masks(n: usize, w: usize) -> impl Strategy<Value = Case<Beat>> {
    pipe::case(proptest::collection::vec(pipe::masked_beat(n, w), 1..60), 200)
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
fn check(r: &mut Model, i: &mut Model, c: &Case<Beat>) -> Result<(), String> {
    let (n, w) = pipe::lanes(r.info());
    let (rh, ih) = (Handshake::of(r), Handshake::of(i));
    let [r_in, in_keep, r_out, out_count] = ["in_data", "in_keep", "out_data", "out_count"].map(|p| r.port(p));
    let [i_in, in_mask, i_out] = ["in_data", "in_mask", "out_data"].map(|p| i.port(p));
    let (r_lat, i_lat) = (r.info().latency().unwrap(), i.info().latency().unwrap());
    let stalled = c.out_stalls();
    let mut feed = Feed::new(c.seed);
    // accepted by remove, not yet passed to insert; passed to insert, not yet out
    let mut in_remove: VecDeque<usize> = VecDeque::new();
    let mut in_insert: VecDeque<usize> = VecDeque::new();
    let mut done = 0;
    let limit = c.limit(&stalled, r_lat + i_lat);
    for cyc in 0..limit {
        let offer = feed.offer(c, cyc);
        r.set(rh.in_valid, offer.beat.is_some() as u64);
        match offer.beat {
            Some(k) => {
                r.set_lanes(r_in, &c.beats[k].data);
                r.set_u128(in_keep, c.beats[k].mask);
            }
            None => {
                r.set_lanes(r_in, &pipe::noise_lanes(feed.rng(), n, w));
                r.set_u128(in_keep, pipe::noise_mask(feed.rng(), n));
            }
        }
        r.eval();
        // the beat on the link: the oldest in the remove unit, or (a
        // combinational remove unit) the one presented to it
        let link_valid = r.get(rh.out_valid) == 1;
        let on_link = in_remove.front().copied().or(offer.beat.filter(|_| r_lat == 0));
        i.set(ih.in_valid, link_valid as u64);
        i.set_lanes(i_in, &r.get_lanes(r_out));
        match (link_valid, on_link) {
            (true, Some(b)) => {
                let want = c.beats[b].mask.count_ones() as u64;
                if r.get(out_count) != want {
                    return Err(format!("cycle {cyc}, beat {b}: remove out_count {}, expected {want}", r.get(out_count)));
                }
                i.set_u128(in_mask, c.beats[b].mask);
            }
            (true, None) => return Err(format!("cycle {cyc}: remove out_valid with no beat in it")),
            (false, _) => i.set_u128(in_mask, pipe::noise_mask(feed.rng(), n)),
        }
        let ready = !stalled.get(cyc as usize).copied().unwrap_or(false);
        i.set(ih.out_ready, ready as u64);
        i.eval();
        let link_ready = i.get(ih.in_ready) == 1;
        r.set(rh.out_ready, link_ready as u64);
        r.eval();

        if let Some(k) = offer.beat.filter(|_| r.get(rh.in_ready) == 1) {
            in_remove.push_back(k);
            feed.accepted();
        }
        if link_valid && link_ready {
            in_insert.push_back(in_remove.pop_front().expect("a beat crossed the link"));
        }
        if i.get(ih.out_valid) == 1 {
            // a combinational insert unit shows the beat on the link before taking it
            let b = match (in_insert.front(), on_link) {
                (Some(&b), _) => b,
                (None, Some(b)) if i_lat == 0 && link_valid => b,
                _ => return Err(format!("cycle {cyc}: insert out_valid with no beat owed")),
            };
            let got = i.get_lanes(i_out);
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
            c.beats.len() - feed.taken()
        ));
    }
    pipe::drained(i).map_err(|e| format!("insert: {e}"))
}

/// proptest over `strategy` on fresh models of the pair; on failure, the
/// shrunk case again with a VCD of each model, then a panic.
fn run_pair<S>(test: &str, r: &'static ModelInfo, i: &'static ModelInfo, strategy: S, n: u32)
where
    S: Strategy<Value = Case<Beat>>,
{
    run_property_on(test, &[r, i], strategy, cases(n), |ms, c| match ms {
        [rm, im] => check(rm, im, c),
        _ => unreachable!("two models"),
    });
}

/// Every (remove, insert) pair of models with `lanes` lanes and equal widths.
fn pairs(lanes: usize, gate_level: bool) -> Vec<(&'static ModelInfo, &'static ModelInfo)> {
    let of = |unit: &str| -> Vec<&'static ModelInfo> {
        models::of_unit(unit, gate_level).into_iter().filter(|m| pipe::lanes(m).0 == lanes).collect()
    };
    let (rs, is) = (of("zero-remove-shifter"), of("zero-insert-shifter"));
    let width = |m: &ModelInfo| pipe::lanes(m).1;
    let v: Vec<_> =
        rs.iter().flat_map(|&r| is.iter().filter(move |&&i| width(i) == width(r)).map(move |&i| (r, i))).collect();
    assert!(
        !v.is_empty(),
        "no remove/insert model pair with {lanes} lanes and equal widths (gate level: {gate_level}) in tb/models.toml"
    );
    v
}

fn all_masks_n8(gate_level: bool, cases: u32) {
    for (r, i) in pairs(8, gate_level) {
        let w = pipe::lanes(r).1;
        run_pair("zero_pair_all_masks", r, i, every_mask(8, w), cases);
    }
}

fn random_masks_wide(gate_level: bool, cases: u32) {
    for lanes in [16, 32, 64] {
        // the 32- and 64-lane netlists are synthesized in extended runs only
        if gate_level && lanes > 16 && !models::extended() {
            continue;
        }
        for (r, i) in pairs(lanes, gate_level) {
            let w = pipe::lanes(r).1;
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

/// N = 16, 32, 64: random masks (netlists: 16 lanes, and 32 and 64 lanes in
/// extended runs).
#[test]
fn rtl_random_masks_n16_to_n64() {
    random_masks_wide(false, 150);
}

#[test]
fn netlist_random_masks_n16_to_n64() {
    random_masks_wide(true, 100);
}
