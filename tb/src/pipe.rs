//! A checker for a valid/ready vector pipeline with a fixed latency (the
//! manifest's `latency`, 0 for a combinational unit), shared by the unit
//! tests of such pipelines (the zero-remove and zero-insert shifters).
//!
//! A unit says, through `Unit`, how to drive one input beat, how to drive
//! noise on idle cycles, what its outputs show, what a beat must come out
//! as (from `sim`), and how to name a beat in messages. `check` then runs a
//! `Case` on a model just out of reset. A source presents the case's beats
//! with random gaps, usually holds each beat until it is accepted but
//! sometimes lowers `in_valid` before (spec §1 allows both), and drives
//! noise on idle cycles; a sink drops `out_ready` per cycle at random and in
//! bursts and blocks (`tb::stalls`) long enough to fill the pipeline. Every
//! cycle, after the inputs settle, the outputs are checked against a
//! scoreboard of the accepted beats:
//! - `out_valid` only while a beat is owed (nothing duplicated or invented),
//! - the shown beat is the oldest owed one, as `sim` computes it (nothing
//!   reordered, nothing wrong),
//! - a beat held (`out_valid && !out_ready`) stays valid and unchanged
//!   (for a combinational unit: while the source holds its input), and a
//!   combinational unit shows a presented beat before accepting it but is
//!   not taken at the output before it accepts it,
//! - no beat shows earlier than the latency after its acceptance, and with
//!   `out_ready` never low, `in_ready` is never low and every beat shows
//!   exactly then, at one beat per cycle,
//! - after the source is done and the sink drains, nothing is owed (nothing
//!   lost) and `out_valid` stays low.
//!
//! `sweep` runs this as a property on every model of a unit, counting
//! coverage (`POINTS` and the unit's own); `full_rate` and
//! `hold_and_resume` are the directed checks. The lane helpers at the end
//! (`MaskedBeat`, shape, masks, values, noise, and the directed checks over
//! every mask) serve units whose input is lane data under a lane mask.

use crate::coverage::Coverage;
use crate::info::ModelInfo;
use crate::model::{Model, PortId};
use crate::models;
use crate::prop::run_property;
use crate::stalls::{self, Stall, StallGen};
use crate::stim::Xorshift;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::fmt::Debug;

/// What a unit tells the checker. The handshake ports (`in_valid`,
/// `in_ready`, `out_valid`, `out_ready`) are the checker's; the unit drives
/// and reads the rest.
pub trait Unit {
    /// One input beat, as the case holds it.
    type Beat: Clone + Debug;
    /// What the outputs show while `out_valid` is high.
    type Out: Clone + PartialEq + Debug;
    /// Drives `beat` on the input bus.
    fn drive(&self, m: &mut Model, beat: &Self::Beat);
    /// Drives random values on the input bus (an idle or withdrawn cycle).
    fn noise(&self, m: &mut Model, rng: &mut Xorshift);
    /// What the outputs show now.
    fn read(&self, m: &Model) -> Self::Out;
    /// What `beat` must come out as.
    fn expected(&self, beat: &Self::Beat) -> Self::Out;
    /// `beat` in a message ("keep 0x5, data [...]").
    fn describe(&self, beat: &Self::Beat) -> String;
    /// Counts the unit's coverage points of a beat that came out right.
    fn cover(&self, _beat: &Self::Beat, _cov: &Coverage) {}
}

/// The coverage points `check` counts; a unit's table adds its own.
pub const POINTS: &[&str] = &[
    "beats",
    "beats at exactly the latency (never stalled)",
    "in_ready low while offered",
    "held output beat",
    "output held 32+ cycles",
    "withdrawn offer",
    "idle cycle with noise",
];

/// Cycles at the start of a case in which `Case::bursts` applies; after
/// them only the per-cycle `stall` schedule does, so every case drains.
pub const BURST_WINDOW: usize = 640;

/// A stream of beats and the schedules of both ends.
#[derive(Clone, Debug)]
pub struct Case<B> {
    pub beats: Vec<B>,
    /// Cycle `i`: the source, if it has no beat on the bus, idles (past the end: never).
    pub idle: Vec<bool>,
    /// Cycle `i`: `out_ready` is low (past the end: high).
    pub stall: Vec<bool>,
    /// Cycle `i`: the source, if it has a beat on the bus, lowers `in_valid`
    /// for this cycle without a transfer and offers the beat again later.
    pub withdraw: Vec<bool>,
    /// `out_ready` is also low whenever this pattern stalls, in the first
    /// `BURST_WINDOW` cycles: bursts and blocks that fill the pipeline.
    pub bursts: Stall,
    /// Seed of the noise on idle cycles and of `bursts`.
    pub seed: u64,
}

impl<B> Case<B> {
    /// `beats` back to back: never idle, never stalled, never withdrawn.
    pub fn back_to_back(beats: Vec<B>) -> Case<B> {
        Case { beats, idle: vec![], stall: vec![], withdraw: vec![], bursts: Stall::Never, seed: 0 }
    }

    /// Per cycle, whether `out_ready` is low (past the end: high).
    pub fn out_stalls(&self) -> Vec<bool> {
        let window = if self.bursts == Stall::Never { 0 } else { BURST_WINDOW };
        let mut bursts = StallGen::new(&self.bursts, self.seed ^ 0x5851_f42d_4c95_7f2d);
        (0..self.stall.len().max(window))
            .map(|i| {
                let burst = i < window && bursts.next();
                self.stall.get(i).copied().unwrap_or(false) || burst
            })
            .collect()
    }

    /// Enough cycles for every beat through every idle, stall and withdraw
    /// cycle (`out_stalls`: the sink's), plus the drain.
    pub fn limit(&self, out_stalls: &[bool], latency: u64) -> u64 {
        (self.beats.len() + self.idle.len() + out_stalls.len() + self.withdraw.len()) as u64 + latency + 8
    }
}

/// A schedule of `true` cycles with a per-case density (often 0: never).
pub fn schedule(max: usize) -> impl Strategy<Value = Vec<bool>> {
    prop_oneof![Just(0.0), Just(0.15), Just(0.5), Just(0.85)]
        .prop_flat_map(move |p| prop::collection::vec(prop::bool::weighted(p), 0..max))
}

/// Sink bursts: often none, else a `tb::stalls` pattern, half of them long
/// enough to fill any pipeline.
pub fn bursts() -> impl Strategy<Value = Stall> {
    prop_oneof![2 => Just(Stall::Never), 1 => stalls::stall(), 1 => stalls::long_stall()]
}

/// Cases over the beat streams of `beats`, with schedules up to `cycles`
/// long; a quarter of them withdraw offers.
pub fn case<B: Clone + Debug>(beats: impl Strategy<Value = Vec<B>>, cycles: usize) -> impl Strategy<Value = Case<B>> {
    let withdraw = prop_oneof![3 => Just(vec![]), 1 => prop::collection::vec(prop::bool::weighted(0.2), 0..cycles)];
    (beats, schedule(cycles), schedule(cycles), withdraw, bursts(), any::<u64>())
        .prop_map(|(beats, idle, stall, withdraw, bursts, seed)| Case { beats, idle, stall, withdraw, bursts, seed })
}

/// The source end of a case: presents the beats in order; once presented,
/// a beat stays on the bus until accepted, except on withdraw cycles.
pub struct Feed {
    next: usize,
    presenting: bool,
    rng: Xorshift,
}

/// A cycle of the source.
#[derive(Clone, Copy, Debug)]
pub struct Offer {
    /// The beat on the bus with `in_valid` high.
    pub beat: Option<usize>,
    /// A beat is presented but `in_valid` is low this cycle.
    pub withdrawn: bool,
}

impl Feed {
    pub fn new(seed: u64) -> Feed {
        Feed { next: 0, presenting: false, rng: Xorshift::new(seed) }
    }

    /// Cycle `cyc`'s offer.
    pub fn offer<B>(&mut self, c: &Case<B>, cyc: u64) -> Offer {
        let i = cyc as usize;
        if !self.presenting && self.next < c.beats.len() && !c.idle.get(i).copied().unwrap_or(false) {
            self.presenting = true;
        }
        let withdrawn = self.presenting && c.withdraw.get(i).copied().unwrap_or(false);
        let beat = (self.presenting && !withdrawn).then_some(self.next);
        Offer { beat, withdrawn }
    }

    /// The offered beat was accepted.
    pub fn accepted(&mut self) {
        assert!(self.presenting, "Feed::accepted without a presented beat");
        self.next += 1;
        self.presenting = false;
    }

    /// Beats accepted so far.
    pub fn taken(&self) -> usize {
        self.next
    }

    /// The noise generator.
    pub fn rng(&mut self) -> &mut Xorshift {
        &mut self.rng
    }
}

/// The handshake ports.
#[derive(Clone, Copy, Debug)]
pub struct Handshake {
    pub in_valid: PortId,
    pub in_ready: PortId,
    pub out_valid: PortId,
    pub out_ready: PortId,
}

impl Handshake {
    pub fn of(m: &Model) -> Handshake {
        Handshake {
            in_valid: m.port("in_valid"),
            in_ready: m.port("in_ready"),
            out_valid: m.port("out_valid"),
            out_ready: m.port("out_ready"),
        }
    }
}

/// An accepted beat, owed to the output.
struct Owed<O> {
    expect: O,
    beat: usize,
    accepted: u64,
    shown: Option<u64>,
}

fn latency(m: &Model) -> u64 {
    m.info().latency().unwrap_or_else(|| panic!("{}: the manifest gives no fixed latency", m.info().name))
}

fn compare<U: Unit>(u: &U, cyc: u64, shown: &U::Out, want: &U::Out, k: usize, c: &Case<U::Beat>) -> Result<(), String> {
    if shown == want {
        return Ok(());
    }
    Err(format!("cycle {cyc}, beat {k} ({}):\n got      {shown:x?}\n expected {want:x?}", u.describe(&c.beats[k])))
}

/// Runs `c` on `m` (just out of reset) and checks every cycle (see the
/// module comment); counts `POINTS` and the unit's points into `cov`.
pub fn check<U: Unit>(m: &mut Model, u: &U, c: &Case<U::Beat>, cov: Option<&Coverage>) -> Result<(), String> {
    check_timed(m, u, c, cov).map(|_| ())
}

/// When each beat of a checked case moved, in case cycles (0 = the first
/// cycle after reset), for throughput and latency figures.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    /// Per beat: the cycle it was accepted, first shown, and taken.
    pub accepted: Vec<u64>,
    pub shown: Vec<u64>,
    pub taken: Vec<u64>,
    /// Cycles run.
    pub cycles: u64,
}

/// `check`, also returning when each beat moved.
pub fn check_timed<U: Unit>(m: &mut Model, u: &U, c: &Case<U::Beat>, cov: Option<&Coverage>) -> Result<Timing, String> {
    let hit = |point: &str, cond: bool| {
        if let Some(cov) = cov {
            cov.hit_if(point, cond)
        }
    };
    let latency = latency(m);
    let p = Handshake::of(m);
    let stalled = c.out_stalls();
    let never_stalled = !stalled.contains(&true);
    let mut feed = Feed::new(c.seed);
    let mut owed: VecDeque<Owed<U::Out>> = VecDeque::new();
    let mut held: Option<U::Out> = None; // shown and not taken last cycle
    let mut held_for = 0u64;
    let mut done = 0usize;
    let limit = c.limit(&stalled, latency);
    let mut t = Timing::default();

    m.eval();
    if m.get(p.out_valid) != 0 {
        return Err("out_valid high after reset".into());
    }
    for cyc in 0..limit {
        let offer = feed.offer(c, cyc);
        m.set(p.in_valid, offer.beat.is_some() as u64);
        match offer.beat {
            Some(k) => u.drive(m, &c.beats[k]),
            None => u.noise(m, feed.rng()),
        }
        hit("withdrawn offer", offer.withdrawn);
        hit("idle cycle with noise", offer.beat.is_none() && !offer.withdrawn);
        let ready = !stalled.get(cyc as usize).copied().unwrap_or(false);
        m.set(p.out_ready, ready as u64);
        m.eval();

        let in_ready = m.get(p.in_ready) == 1;
        if never_stalled && !in_ready {
            return Err(format!("cycle {cyc}: in_ready low although out_ready was never low"));
        }
        hit("in_ready low while offered", offer.beat.is_some() && !in_ready);
        if let Some(k) = offer.beat.filter(|_| in_ready) {
            owed.push_back(Owed { expect: u.expected(&c.beats[k]), beat: k, accepted: cyc, shown: None });
            feed.accepted();
            t.accepted.push(cyc);
        }

        let out_valid = m.get(p.out_valid) == 1;
        let shown = u.read(m);
        // a combinational unit's output follows its input: it holds while the source does
        let must_hold = latency > 0 || !offer.withdrawn;
        if let Some(h) = held.as_ref().filter(|_| must_hold) {
            if !out_valid {
                return Err(format!("cycle {cyc}: out_valid dropped while a beat was held"));
            }
            if shown != *h {
                return Err(format!("cycle {cyc}: held beat changed\n from {h:x?}\n   to {shown:x?}"));
            }
            hit("held output beat", true);
        }
        // a combinational unit shows the presented beat before accepting it
        let pending = offer.beat.filter(|_| latency == 0);
        if out_valid {
            if let Some(o) = owed.front_mut() {
                compare(u, cyc, &shown, &o.expect, o.beat, c)?;
                let first = *o.shown.get_or_insert(cyc);
                let took = first - o.accepted;
                if took < latency || (never_stalled && took != latency) {
                    return Err(format!(
                        "beat {}: accepted in cycle {}, shown from cycle {first}: {took} cycles, manifest latency {latency}",
                        o.beat, o.accepted
                    ));
                }
                if ready {
                    let k = o.beat;
                    t.shown.push(first);
                    t.taken.push(cyc);
                    owed.pop_front();
                    done += 1;
                    hit("beats", true);
                    hit("beats at exactly the latency (never stalled)", never_stalled);
                    if let Some(cov) = cov {
                        u.cover(&c.beats[k], cov);
                    }
                }
            } else if let Some(k) = pending {
                compare(u, cyc, &shown, &u.expected(&c.beats[k]), k, c)?;
                if ready {
                    return Err(format!("cycle {cyc}: beat {k} taken at the output but not accepted at the input"));
                }
            } else {
                return Err(format!("cycle {cyc}: out_valid with no beat owed (duplicate or invented): {shown:x?}"));
            }
            held = (!ready).then_some(shown);
        } else {
            held = None;
        }
        held_for = if held.is_some() { held_for + 1 } else { 0 };
        hit("output held 32+ cycles", held_for == 32);
        m.tick();
        t.cycles = cyc + 1;
        if done == c.beats.len() {
            break;
        }
    }
    if done != c.beats.len() {
        return Err(format!(
            "after {limit} cycles {done} of {} beats came out ({} accepted and still owed, {} never accepted)",
            c.beats.len(),
            owed.len(),
            c.beats.len() - feed.taken()
        ));
    }
    drained(m)?;
    Ok(t)
}

/// After the last beat came out: one more cycle with `in_valid` low and
/// `out_ready` high shows nothing.
pub fn drained(m: &mut Model) -> Result<(), String> {
    let p = Handshake::of(m);
    m.set(p.in_valid, 0);
    m.set(p.out_ready, 1);
    m.eval();
    if m.get(p.out_valid) != 0 {
        return Err("out_valid high after every beat came out".into());
    }
    Ok(())
}

/// The RTL and then the netlist models of `unit`; panics if either list is empty.
pub fn every_model(unit: &str) -> Vec<&'static ModelInfo> {
    let mut v = models::of_unit_nonempty(unit, false);
    v.extend(models::of_unit_nonempty(unit, true));
    v
}

/// `check` as a property test named `<test>_<model>` on every model of
/// `unit` at one level, with `cases(info)` cases and `unit_of(model)` for
/// the unit, then once on each of `directed(info)` (fixed cases that reach
/// the points whatever the seed). Coverage: `POINTS` and the unit's `points`,
/// printed and checked at the end.
#[allow(clippy::too_many_arguments)]
pub fn sweep<U, S>(
    test: &str,
    unit: &str,
    gate_level: bool,
    cases: u32,
    points: &[&'static str],
    unit_of: impl Fn(&Model) -> U,
    strategy: impl Fn(&'static ModelInfo) -> S,
    directed: impl Fn(&'static ModelInfo) -> Vec<Case<U::Beat>>,
) where
    U: Unit,
    U::Beat: Clone + Debug,
    S: Strategy<Value = Case<U::Beat>>,
{
    let level = if gate_level { "netlists" } else { "RTL" };
    let cov = Coverage::new(&format!("{unit} ({level})"), &[POINTS, points].concat());
    for info in models::of_unit_nonempty(unit, gate_level) {
        run_property(&format!("{test}_{}", info.name), info, strategy(info), cases, |m, c| {
            let u = unit_of(m);
            check(m, &u, c, Some(&cov))
        });
        for (k, c) in directed(info).into_iter().enumerate() {
            run_property(&format!("{test}_{}_directed{k}", info.name), info, Just(c), 1, |m, c| {
                let u = unit_of(m);
                check(m, &u, c, Some(&cov))
            });
        }
    }
    cov.check();
}

/// `beats` back to back at full rate on `info` (k beats in k cycles plus
/// the latency; `check` on a `Case::back_to_back`): `in_ready` never low,
/// each output exactly `latency` cycles after its input, in order and as
/// `sim` has it, then nothing. A waveform on failure, like a property.
pub fn full_rate<U: Unit>(test: &str, info: &'static ModelInfo, unit_of: impl Fn(&Model) -> U, beats: Vec<U::Beat>) {
    let c = Case::back_to_back(beats);
    run_property(&format!("{test}_{}", info.name), info, Just(()), 1, |m, _| {
        let u = unit_of(m);
        check(m, &u, &c, None)
    });
}

/// A beat `a` held under backpressure for 50 cycles, while the source
/// keeps offering the next one, `b`, comes out unchanged and is followed
/// by `b`. An empty pipeline accepts with `out_ready` low; a combinational
/// unit passes `out_ready` through and does not accept a held beat. A
/// waveform on failure, like a property.
pub fn hold_and_resume<U: Unit>(
    test: &str,
    info: &'static ModelInfo,
    unit_of: impl Fn(&Model) -> U,
    a: &U::Beat,
    b: &U::Beat,
) {
    run_property(&format!("{test}_{}", info.name), info, Just(()), 1, |m, _| {
        let u = unit_of(m);
        hold_and_resume_on(m, &u, a, b)
    });
}

fn hold_and_resume_on<U: Unit>(m: &mut Model, u: &U, a: &U::Beat, b: &U::Beat) -> Result<(), String> {
    let latency = latency(m);
    let p = Handshake::of(m);
    m.set(p.out_ready, 0);
    m.set(p.in_valid, 1);
    u.drive(m, a);
    m.eval();
    let in_ready = m.get(p.in_ready);
    if in_ready != (latency > 0) as u64 {
        return Err(format!("in_ready {in_ready} with out_ready low, latency {latency}"));
    }
    if latency == 0 {
        m.ticks(50);
        m.eval();
        if m.get(p.in_ready) != 0 {
            return Err("a combinational unit accepts a beat while out_ready is low".into());
        }
    } else {
        m.tick();
        u.drive(m, b);
        m.ticks(latency + 50);
        m.eval();
    }
    if m.get(p.out_valid) != 1 {
        return Err(format!("out_valid low after {} cycles of backpressure", latency + 50));
    }
    let (got, want) = (u.read(m), u.expected(a));
    if got != want {
        return Err(format!("held beat ({}):\n got      {got:x?}\n expected {want:x?}", u.describe(a)));
    }
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
            if cycles > latency {
                return Err(format!("the next beat did not come out within {latency} cycles"));
            }
        }
        let (got, want) = (u.read(m), u.expected(b));
        if got != want {
            return Err(format!("next beat ({}):\n got      {got:x?}\n expected {want:x?}", u.describe(b)));
        }
    }
    Ok(())
}

// Lane vectors (spec §1): N lanes of W bits, masks of N bits.

/// A beat of a unit that takes `N` lanes and an `N`-bit lane mask (the
/// zero-remove shifter's keep mask, the zero-insert shifter's mask).
#[derive(Clone, Debug, PartialEq)]
pub struct MaskedBeat {
    pub data: Vec<u64>,
    pub mask: u128,
}

/// `(lanes, width)` of a model's parameters.
pub fn lanes(info: &ModelInfo) -> (usize, usize) {
    let p = info.params();
    let get = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{}: no parameter '{k}'", info.name)) as usize;
    (get("lanes"), get("width"))
}

/// The mask of the low `bits` lanes.
pub fn full(bits: usize) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// The mask of a `w`-bit value.
pub fn wmask(w: usize) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// `n`-lane masks: all set, none set, one lane, one lane clear, a run, and
/// random masks of low, even and high density.
pub fn lane_mask(n: usize) -> impl Strategy<Value = u128> {
    let all = full(n);
    prop_oneof![
        1 => Just(all),
        1 => Just(0u128),
        2 => (0..n).prop_map(|i| 1u128 << i),
        1 => (0..n).prop_map(move |i| all & !(1u128 << i)),
        1 => (0..n, 0..n).prop_map(move |(a, b)| full(a.max(b) + 1) & !full(a.min(b))),
        3 => any::<u128>().prop_map(move |m| m & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| a & b & all),
        1 => (any::<u128>(), any::<u128>()).prop_map(move |(a, b)| (a | b) & all),
    ]
}

/// `n` lanes of `w`-bit values: random, 0 or all ones.
pub fn lane_values(n: usize, w: usize) -> impl Strategy<Value = Vec<u64>> {
    let m = wmask(w);
    prop::collection::vec(prop_oneof![4 => any::<u64>().prop_map(move |v| v & m), 1 => Just(0u64), 1 => Just(m)], n)
}

/// `lane_values` under a `lane_mask`.
pub fn masked_beat(n: usize, w: usize) -> impl Strategy<Value = MaskedBeat> {
    (lane_values(n, w), lane_mask(n)).prop_map(|(data, mask)| MaskedBeat { data, mask })
}

/// The directed cases of a masked unit: every mask kind (all, none, one
/// lane at each end, all but one, alternate lanes) over all-ones data (so
/// lanes past the mask's count carry noise) and random data; once with the
/// output never stalled, an idle gap and a withdrawn offer, once with the
/// output blocked for 40 cycles while beats are offered. The points of
/// `POINTS` and of the shifters' own tables follow from these schedules and
/// masks on every model, whatever the seed.
pub fn directed_masked_cases(info: &'static ModelInfo) -> Vec<Case<MaskedBeat>> {
    let (n, w) = lanes(info);
    let all = full(n);
    let alternate = all & (u128::MAX / 3);
    let masks = [all, 0, 1, 1u128 << (n - 1), all & !1, all & !(1u128 << (n - 1)), alternate, all];
    let mut r = Xorshift::new(0xd1ec);
    let mut beats: Vec<MaskedBeat> = masks.iter().map(|&mask| MaskedBeat { data: vec![wmask(w); n], mask }).collect();
    beats
        .extend(masks.iter().map(|&mask| MaskedBeat { data: (0..n).map(|_| r.next_u64() & wmask(w)).collect(), mask }));
    // idle at cycles 4 and 5, withdrawn at 7 (a beat is on the bus then)
    let idle: Vec<bool> = (0..8).map(|i| i == 4 || i == 5).collect();
    let withdraw: Vec<bool> = (0..8).map(|i| i == 7).collect();
    let free = Case { beats: beats.clone(), idle, stall: vec![], withdraw, bursts: Stall::Never, seed: 0xd1ec };
    // the output blocked from cycle 4 to 43 with every beat offered
    let stall = (0..44).map(|i| i >= 4).collect();
    let blocked = Case { beats, idle: vec![], stall, withdraw: vec![], bursts: Stall::Never, seed: 0xd1ed };
    vec![free, blocked]
}

/// Cases of 1 to 39 `masked_beat`s for `info`'s lanes and width.
pub fn masked_cases(info: &'static ModelInfo) -> impl Strategy<Value = Case<MaskedBeat>> {
    let (n, w) = lanes(info);
    case(prop::collection::vec(masked_beat(n, w), 1..40), 160)
}

/// `n` random lanes of `w` bits.
pub fn noise_lanes(rng: &mut Xorshift, n: usize, w: usize) -> Vec<u64> {
    (0..n).map(|_| rng.next_u64() & wmask(w)).collect()
}

/// A random `n`-lane mask.
pub fn noise_mask(rng: &mut Xorshift, n: usize) -> u128 {
    ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & full(n)
}

/// `full_rate` with every mask, in counting order, on every model of `unit`
/// (RTL and netlist) up to 16 lanes; lane data differ per lane and per beat.
pub fn every_mask_at_full_rate<U: Unit<Beat = MaskedBeat>>(test: &str, unit: &str, unit_of: impl Fn(&Model) -> U) {
    for info in every_model(unit).into_iter().filter(|m| lanes(m).0 <= 16) {
        let (n, w) = lanes(info);
        let beats = (0..1usize << n)
            .map(|k| MaskedBeat {
                data: (0..n).map(|i| ((k as u64).wrapping_mul(0x9e37_79b9) ^ (i as u64 * 0x45)) & wmask(w)).collect(),
                mask: k as u128,
            })
            .collect();
        full_rate(test, info, &unit_of, beats);
    }
}

/// `hold_and_resume` on every model of `unit` (RTL and netlist): lanes
/// `1, 2, ...` under every other lane, then lanes `!0, !1, ...` under all.
pub fn long_backpressure<U: Unit<Beat = MaskedBeat>>(test: &str, unit: &str, unit_of: impl Fn(&Model) -> U) {
    for info in every_model(unit) {
        let (n, w) = lanes(info);
        let a = MaskedBeat { data: (0..n as u64).map(|i| (i + 1) & wmask(w)).collect(), mask: full(n) & 0x5555_5555 };
        let b = MaskedBeat { data: (0..n as u64).map(|i| !i & wmask(w)).collect(), mask: full(n) };
        hold_and_resume(test, info, &unit_of, &a, &b);
    }
}
