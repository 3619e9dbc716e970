//! zero-insert-shifter (spec §3.1) against the behavioural model
//! `sim::shifter::zero_insert`, on every `zero-insert-shifter` model of
//! tb/models.toml, RTL and gate level. Mirrors tb/tests/zero_remove_shifter.rs.
//!
//! The unit is a valid/ready stream. A source presents beats with random
//! gaps, usually holds each beat until it is accepted but sometimes lowers
//! `in_valid` before (spec §1 allows both), and drives random data on idle
//! cycles; a sink drops `out_ready` at random. Every cycle,
//! after the inputs settle, the outputs are checked against a scoreboard of
//! the accepted beats:
//! - `out_valid` only while a beat is owed (nothing duplicated or invented),
//! - the shown beat is the oldest owed one, expanded (nothing reordered):
//!   element j in the lane of the j-th set mask bit, every clear lane 0, and
//!   input lanes past popcount(mask) (random here) ignored,
//! - a beat held (`out_valid && !out_ready`) stays valid and unchanged
//!   (for a combinational unit: while the source holds its input),
//! - no beat shows earlier than the manifest's latency after its acceptance,
//!   and with `out_ready` never low, exactly then, at one beat per cycle,
//! - after the source is done and the sink drains, nothing is owed (nothing lost).

use proptest::prelude::*;
use sim::shifter::{mask_bits, zero_insert};
use sim::testgen;
use tb::{models, run_property, Model, ModelInfo, PortId};

/// Per model; 64 lanes at -O0 is the slowest, at about 2 ms a case.
const CASES: u32 = 300;
const NET_CASES: u32 = 150;

#[derive(Clone, Debug)]
struct Beat {
    /// Compacted elements; lanes past popcount(mask) are don't-care.
    data: Vec<u64>,
    mask: u128,
}

#[derive(Clone, Debug)]
struct Case {
    beats: Vec<Beat>,
    /// Cycle `i`: the source, if it has no beat on the bus, idles (past the end: never).
    idle: Vec<bool>,
    /// Cycle `i`: `out_ready` is low (past the end: high).
    stall: Vec<bool>,
    /// Cycle `i`: the source, if it has a beat on the bus, lowers `in_valid`
    /// for this cycle without a transfer and offers the beat again later.
    withdraw: Vec<bool>,
    /// Seed of the data and mask bits driven on idle cycles.
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

/// Masks: all set, none set, one lane, one lane clear, a run, and random
/// masks of low, even and high density.
fn mask(n: usize) -> impl Strategy<Value = u128> {
    let all = full(n);
    prop_oneof![
        1 => Just(all),
        1 => Just(0u128),
        2 => (0..n).prop_map(|i| 1u128 << i),
        1 => (0..n).prop_map(move |i| all & !(1u128 << i)),
        1 => (0..n, 0..n).prop_map(move |(a, b)| {
            let (lo, hi) = (a.min(b), a.max(b));
            full(hi + 1) & !full(lo)
        }),
        3 => any::<u128>().prop_map(move |m| m & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| a & b & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| (a | b) & all),
    ]
}

fn value(w: usize) -> impl Strategy<Value = u64> {
    let m = wmask(w);
    prop_oneof![4 => any::<u64>().prop_map(move |v| v & m), 1 => Just(0u64), 1 => Just(m)]
}

fn beat(n: usize, w: usize) -> impl Strategy<Value = Beat> {
    (prop::collection::vec(value(w), n), mask(n)).prop_map(|(data, mask)| Beat { data, mask })
}

/// A schedule of `true` cycles with a per-case density (often 0: never).
fn schedule(max: usize) -> impl Strategy<Value = Vec<bool>> {
    prop_oneof![Just(0.0), Just(0.15), Just(0.5), Just(0.85)]
        .prop_flat_map(move |p| prop::collection::vec(prop::bool::weighted(p), 0..max))
}

fn case(n: usize, w: usize) -> impl Strategy<Value = Case> {
    let withdraw = prop_oneof![3 => Just(vec![]), 1 => prop::collection::vec(prop::bool::weighted(0.2), 0..160)];
    (prop::collection::vec(beat(n, w), 1..40), schedule(160), schedule(160), withdraw, any::<u64>())
        .prop_map(|(beats, idle, stall, withdraw, junk)| Case { beats, idle, stall, withdraw, junk })
}

struct Ports {
    in_valid: PortId,
    in_ready: PortId,
    in_data: PortId,
    in_mask: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
}

impl Ports {
    fn of(m: &Model) -> Ports {
        Ports {
            in_valid: m.port("in_valid"),
            in_ready: m.port("in_ready"),
            in_data: m.port("in_data"),
            in_mask: m.port("in_mask"),
            out_valid: m.port("out_valid"),
            out_ready: m.port("out_ready"),
            out_data: m.port("out_data"),
        }
    }
}

/// What the outputs show while `out_valid` is high.
#[derive(Clone, PartialEq, Debug)]
struct Shown {
    data: Vec<u64>,
}

/// An accepted beat, owed to the output.
struct Owed {
    expect: Shown,
    beat: usize,
    accepted: u64,
    shown: Option<u64>,
}

fn expected(b: &Beat, n: usize) -> Shown {
    Shown { data: zero_insert(&b.data, &mask_bits(b.mask, n)) }
}

fn compare(cyc: u64, shown: &Shown, want: &Shown, beat: usize, c: &Case) -> Result<(), String> {
    let b = &c.beats[beat];
    if shown.data != want.data {
        return Err(format!(
            "cycle {cyc}, beat {beat} (mask {:#x}, data {:x?}): out_data {:x?}, expected {:x?}",
            b.mask, b.data, shown.data, want.data
        ));
    }
    Ok(())
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn check(m: &mut Model, c: &Case) -> Result<(), String> {
    let info = m.info();
    let (n, w) = shape(info);
    let latency = info.latency().expect("the shifter has a fixed latency");
    let p = Ports::of(m);
    let never_stalled = !c.stall.contains(&true);
    let mut junk = c.junk | 1;

    let mut owed: std::collections::VecDeque<Owed> = Default::default();
    let mut next = 0; // next beat to present
    let mut presenting = false;
    let mut held: Option<Shown> = None; // shown and not taken last cycle
    let mut done = 0usize;
    // enough for every beat through every stall, plus the drain
    let limit = (c.beats.len() + c.idle.len() + c.stall.len() + c.withdraw.len()) as u64 + latency + 8;

    m.eval();
    if m.get(p.out_valid) != 0 {
        return Err("out_valid high after reset".into());
    }
    for cyc in 0..limit {
        let i = cyc as usize;
        // source: once a beat is presented it stays until accepted, unless withdrawn for a cycle
        if !presenting && next < c.beats.len() && !c.idle.get(i).copied().unwrap_or(false) {
            presenting = true;
        }
        let withdrawn = presenting && c.withdraw.get(i).copied().unwrap_or(false);
        let offered = presenting && !withdrawn;
        if offered {
            let b = &c.beats[next];
            m.set(p.in_valid, 1);
            m.set_lanes(p.in_data, &b.data);
            m.set_u128(p.in_mask, b.mask);
        } else {
            m.set(p.in_valid, 0);
            let d: Vec<u64> = (0..n).map(|_| xorshift(&mut junk) & wmask(w)).collect();
            m.set_lanes(p.in_data, &d);
            let k = ((xorshift(&mut junk) as u128) << 64 | xorshift(&mut junk) as u128) & full(n);
            m.set_u128(p.in_mask, k);
        }
        let ready = !c.stall.get(i).copied().unwrap_or(false);
        m.set(p.out_ready, ready as u64);
        m.eval();

        let in_ready = m.get(p.in_ready) == 1;
        if never_stalled && !in_ready {
            return Err(format!("cycle {cyc}: in_ready low although out_ready was never low"));
        }
        if offered && in_ready {
            owed.push_back(Owed { expect: expected(&c.beats[next], n), beat: next, accepted: cyc, shown: None });
            next += 1;
            presenting = false;
        }

        let out_valid = m.get(p.out_valid) == 1;
        let shown = Shown { data: m.get_lanes(p.out_data) };
        // a combinational unit's output follows its input: it holds while the source does
        let must_hold = latency > 0 || !withdrawn;
        if let Some(h) = held.as_ref().filter(|_| must_hold) {
            if !out_valid {
                return Err(format!("cycle {cyc}: out_valid dropped while a beat was held"));
            }
            if shown != *h {
                return Err(format!("cycle {cyc}: held beat changed from {h:?} to {shown:?}"));
            }
        }
        // a combinational unit shows the presented beat before accepting it
        let pending = (latency == 0 && offered).then_some(next);
        if out_valid {
            if let Some(o) = owed.front_mut() {
                compare(cyc, &shown, &o.expect, o.beat, c)?;
                let first = *o.shown.get_or_insert(cyc);
                let took = first - o.accepted;
                if took < latency || (never_stalled && took != latency) {
                    return Err(format!(
                        "beat {}: accepted in cycle {}, shown from cycle {first}: {took} cycles, manifest latency {latency}",
                        o.beat, o.accepted
                    ));
                }
                if ready {
                    owed.pop_front();
                    done += 1;
                }
            } else if let Some(k) = pending {
                compare(cyc, &shown, &expected(&c.beats[k], n), k, c)?;
                if ready {
                    return Err(format!("cycle {cyc}: beat {k} taken at the output but not accepted at the input"));
                }
            } else {
                return Err(format!("cycle {cyc}: out_valid with no beat owed (duplicate or invented): {shown:?}"));
            }
            held = (!ready).then_some(shown);
        } else {
            held = None;
        }
        m.tick();
        if done == c.beats.len() {
            break;
        }
    }
    if done != c.beats.len() {
        return Err(format!(
            "after {limit} cycles {done} of {} beats came out ({} accepted and still owed, {} never accepted)",
            c.beats.len(),
            owed.len(),
            c.beats.len() - next
        ));
    }
    // one more cycle: nothing else comes out
    m.set(p.in_valid, 0);
    m.set(p.out_ready, 1);
    m.eval();
    if m.get(p.out_valid) != 0 {
        return Err("out_valid high after every beat came out".into());
    }
    Ok(())
}

fn sweep(gate_level: bool) -> Vec<&'static ModelInfo> {
    let v: Vec<_> =
        models::of_unit("zero-insert-shifter", gate_level);
    assert!(!v.is_empty(), "no zero-insert-shifter models (gate level: {gate_level}) in tb/models.toml");
    v
}

fn property(info: &'static ModelInfo, cases: u32) {
    let (n, w) = shape(info);
    run_property(&format!("zero_insert_{}", info.name), info, case(n, w), cases, check);
}

#[test]
fn rtl_matches_model() {
    for info in sweep(false) {
        property(info, testgen::cases(CASES));
    }
}

#[test]
fn netlist_matches_model() {
    for info in sweep(true) {
        property(info, testgen::cases(NET_CASES));
    }
}

/// Every mask of the models up to 16 lanes, back to back at full rate
/// (2^N beats in 2^N cycles), each output checked `latency` cycles after
/// its input; lane data differ per lane and per beat.
#[test]
fn every_mask_at_full_rate() {
    for info in models::of_unit("zero-insert-shifter", false).into_iter().chain(models::of_unit("zero-insert-shifter", true)).filter(|m| shape(m).0 <= 16) {
        let (n, w) = shape(info);
        let latency = info.latency().unwrap() as usize;
        let mut m = Model::new(info);
        let p = Ports::of(&m);
        m.reset(1);
        m.set(p.out_ready, 1);
        m.set(p.in_valid, 1);
        let beats = 1usize << n;
        let beat = |k: usize| Beat {
            data: (0..n).map(|i| ((k as u64).wrapping_mul(0x9e37_79b9) ^ (i as u64 * 0x45)) & wmask(w)).collect(),
            mask: k as u128,
        };
        let mut seen = 0;
        for cyc in 0..beats + latency {
            if cyc < beats {
                let b = beat(cyc);
                m.set_lanes(p.in_data, &b.data);
                m.set_u128(p.in_mask, b.mask);
            } else {
                m.set(p.in_valid, 0);
            }
            m.eval();
            assert!(cyc >= beats || m.get(p.in_ready) == 1, "{}: in_ready low at full rate, cycle {cyc}", info.name);
            let valid = m.get(p.out_valid) == 1;
            assert_eq!(valid, cyc >= latency, "{}: out_valid in cycle {cyc}, latency {latency}", info.name);
            if valid {
                let k = cyc - latency;
                let want = expected(&beat(k), n);
                let got = Shown { data: m.get_lanes(p.out_data) };
                assert_eq!(got, want, "{}: mask {k:#x}", info.name);
                seen += 1;
            }
            m.tick();
        }
        assert_eq!(seen, beats, "{}", info.name);
    }
}

/// A beat held under backpressure for many cycles, while the source keeps
/// offering the next one, comes out unchanged and is followed by the next.
#[test]
fn long_backpressure_holds_and_resumes() {
    for info in models::of_unit("zero-insert-shifter", false).into_iter().chain(models::of_unit("zero-insert-shifter", true)) {
        let (n, w) = shape(info);
        let latency = info.latency().unwrap();
        let mut m = Model::new(info);
        let p = Ports::of(&m);
        m.reset(1);
        let a = Beat { data: (0..n as u64).map(|i| (i + 1) & wmask(w)).collect(), mask: full(n) & 0x5555_5555 };
        let b = Beat { data: (0..n as u64).map(|i| (!i) & wmask(w)).collect(), mask: full(n) };
        m.set(p.out_ready, 0);
        m.set(p.in_valid, 1);
        m.set_lanes(p.in_data, &a.data);
        m.set_u128(p.in_mask, a.mask);
        m.eval();
        // an empty pipeline accepts; a combinational unit passes out_ready through
        assert_eq!(m.get(p.in_ready), (latency > 0) as u64, "{}: in_ready", info.name);
        if latency == 0 {
            m.ticks(50);
            m.eval();
            assert_eq!(m.get(p.in_ready), 0, "{}: a combinational unit does not accept a held beat", info.name);
        } else {
            m.tick();
            m.set_lanes(p.in_data, &b.data);
            m.set_u128(p.in_mask, b.mask);
            m.ticks(latency + 50);
            m.eval();
        }
        assert_eq!(m.get(p.out_valid), 1, "{}", info.name);
        let got = Shown { data: m.get_lanes(p.out_data) };
        assert_eq!(got, expected(&a, n), "{}: held beat", info.name);
        m.set(p.out_ready, 1);
        if latency > 0 {
            // b (taken in while a travelled, or now) follows a
            let mut cycles = 0;
            loop {
                m.tick();
                m.eval();
                cycles += 1;
                if m.get(p.out_valid) == 1 {
                    break;
                }
                assert!(cycles <= latency, "{}: b lost", info.name);
            }
            let got = Shown { data: m.get_lanes(p.out_data) };
            assert_eq!(got, expected(&b, n), "{}: next beat", info.name);
        }
    }
}
