//! div-round (spec §5.3) against a behavioural model, on every `div-round`
//! model of tb/models.toml, RTL and gate level: operands drawn around the
//! rounding ties, the saturation point and `d = 0`, random `en` stalls
//! (every stage holds) and `in_valid` gaps; `out_valid` is compared every
//! cycle, and `q` every cycle once the stage it comes from has been loaded
//! since reset (`q` of whatever operands were presented, valid or not).
//!
//! Operand range: the main properties draw operands for which the unit's
//! 50-bit datapath holds `2n + d` and `d * 2^Q` (hdl/src/prim/div_round.rs),
//! up to `n` just below 2^49, which is the operand range spec §5.3 gives
//! the stand-alone pipeline (the Oaken engine uses the 24-bit normalised
//! form instead).

use proptest::prelude::*;
use sim::testgen;
use tb::{models, run_property, Model, ModelInfo};

const CASES: u32 = 1000;
const NET_CASES: u32 = 400;
const W: u32 = 50;

/// spec §5.3: `floor((2n + d) / 2d)`, saturated to `2^Q - 1`; 0 for `d = 0`.
fn div_round(n: u64, d: u64, qbits: u32) -> u64 {
    if d == 0 {
        return 0;
    }
    let q = (2 * n as u128 + d as u128) / (2 * d as u128);
    q.min((1u128 << qbits) - 1) as u64
}

/// Inside the datapath: `2n + d < 2^50` and `d * 2^Q < 2^50`.
fn in_range(n: u64, d: u64, qbits: u32) -> bool {
    (2 * n as u128 + d as u128) < 1u128 << W && ((d as u128) << qbits) < 1u128 << W
}

#[derive(Clone, Debug)]
struct Cycle {
    n: u64,
    d: u64,
    en: bool,
    in_valid: bool,
}

/// A divisor of any magnitude the range allows for `Q`.
fn divisor(qbits: u32) -> impl Strategy<Value = u64> {
    let dmax = (1u64 << (W - qbits)) - 1;
    prop_oneof![
        2 => Just(0u64),
        2 => 1u64..=4,
        3 => 1u64..=64,
        3 => (1u32..=W - qbits).prop_flat_map(|bits| 1u64 << (bits - 1)..1u64 << bits).prop_map(move |d| d.min(dmax)),
        1 => (0..W - qbits).prop_map(|k| 1u64 << k),
        1 => Just(dmax),
    ]
}

/// Operands around quotient `t` (0 ..= 2^Q + 1, and far beyond): exact
/// multiples, the tie `t + 1/2` and its neighbours, and random fractions;
/// plus uniform and extreme dividends.
fn operands(qbits: u32) -> impl Strategy<Value = (u64, u64)> {
    let top = 1u64 << qbits;
    let around = (divisor(qbits), 0..=top + 1, 0u8..8, any::<u64>()).prop_map(move |(d, t, how, r)| {
        let frac = match (how, d) {
            (_, 0) => r % 1024,
            (0, _) => 0,
            // n = t d + d/2: the exact tie for even d (rounds up), just above it for odd d
            (1, _) => d / 2,
            (2, _) => (d / 2).saturating_sub(1),
            (3, _) => d.div_ceil(2),
            (4, _) => (d / 2 + 1).min(d - 1),
            (5, _) => d - 1,
            _ => r % d,
        };
        (t.saturating_mul(d).saturating_add(frac), d)
    });
    let nmax = (1u64 << (W - 1)) - 1;
    let big = (
        divisor(qbits),
        prop_oneof![Just(nmax), any::<u64>().prop_map(move |n| n & nmax), (0..W - 1).prop_map(|k| 1u64 << k)],
    )
        .prop_map(|(d, n)| (n, d));
    prop_oneof![6 => around, 2 => big].prop_map(move |(n, d)| {
        if in_range(n, d, qbits) {
            (n, d)
        } else {
            (n.min(((1u64 << W) - 1 - d) / 2), d)
        }
    })
}

fn stimulus(qbits: u32) -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (operands(qbits), prop::bool::weighted(0.75), prop::bool::weighted(0.7))
        .prop_map(|((n, d), en, in_valid)| Cycle { n, d, en, in_valid });
    prop::collection::vec(cycle, 1..120)
}

fn qbits(info: &ModelInfo) -> u32 {
    info.params()["quotient-bits"].as_u64().expect("quotient-bits parameter") as u32
}

/// The pipeline: `latency` stages that load only while `en` is high; each
/// holds (valid, q of its operands), or `None` while it still holds its
/// reset contents (whose `q` the spec leaves open; valid is 0).
struct Reference {
    stages: Vec<Option<(bool, u64)>>,
    qbits: u32,
}

impl Reference {
    fn new(latency: usize, qbits: u32) -> Self {
        Reference { stages: vec![None; latency], qbits }
    }
    fn step(&mut self, c: &Cycle) {
        if c.en {
            self.stages.pop();
            self.stages.insert(0, Some((c.in_valid, div_round(c.n, c.d, self.qbits))));
        }
    }
    fn out(&self) -> Option<(bool, u64)> {
        *self.stages.last().unwrap()
    }
}

fn check(m: &mut Model, cycles: &[Cycle]) -> Result<(), String> {
    let info = m.info();
    let qb = qbits(info);
    let latency = info.latency().expect("fixed latency") as usize;
    let (n, d, en, iv, q, ov) =
        (m.port("n"), m.port("d"), m.port("en"), m.port("in_valid"), m.port("q"), m.port("out_valid"));
    let mut r = Reference::new(latency, qb);
    let compare = |m: &Model, r: &Reference, when: &str| {
        let (got_v, got_q) = (m.get(ov) == 1, m.get(q));
        match r.out() {
            None if got_v => Err(format!("{when}: out_valid=1 from a stage not loaded since reset")),
            None => Ok(()),
            Some((v, want)) if (got_v, got_q) != (v, want) => {
                Err(format!("{when}: out_valid={got_v} q={got_q}, expected out_valid={v} q={want}"))
            }
            Some(_) => Ok(()),
        }
    };
    compare(m, &r, "after reset")?;
    let flush = Cycle { n: 0, d: 1, en: true, in_valid: false };
    for (i, c) in cycles.iter().chain(std::iter::repeat_n(&flush, latency)).enumerate() {
        m.set(n, c.n);
        m.set(d, c.d);
        m.set(en, c.en as u64);
        m.set(iv, c.in_valid as u64);
        m.tick();
        r.step(c);
        compare(m, &r, &format!("cycle {i} ({c:?})"))?;
    }
    Ok(())
}

#[test]
fn rtl_matches_model() {
    for info in models::of_unit_nonempty("div-round", false) {
        run_property(
            &format!("div_round_{}", info.name),
            info,
            stimulus(qbits(info)),
            testgen::cases(CASES),
            |m, c| check(m, c),
        );
    }
}

#[test]
fn netlist_matches_model() {
    for info in models::of_unit_nonempty("div-round", true) {
        run_property(
            &format!("div_round_{}", info.name),
            info,
            stimulus(qbits(info)),
            testgen::cases(NET_CASES),
            |m, c| check(m, c),
        );
    }
}

/// Directed corners, streamed at full rate: every quotient 0 ..= 2^Q + 1
/// for small divisors, at, just below and just above each tie.
#[test]
fn every_quotient_and_tie_for_small_divisors() {
    for info in models::of_unit("div-round", false).into_iter().chain(models::of_unit("div-round", true)) {
        let qb = qbits(info);
        let latency = info.latency().unwrap() as usize;
        let mut ops = vec![(0u64, 0u64), (u32::MAX as u64, 0), ((1 << (W - 1)) - 1, 1)];
        for d in 1..=12u64 {
            for t in 0..=(1u64 << qb) + 1 {
                for n in [t * d, t * d + d / 2, (t * d + d / 2).saturating_sub(1), t * d + d.div_ceil(2), t * d + d - 1]
                {
                    ops.push((n, d));
                }
            }
        }
        let mut m = Model::new(info);
        let (n, d, en, iv, q, ov) =
            (m.port("n"), m.port("d"), m.port("en"), m.port("in_valid"), m.port("q"), m.port("out_valid"));
        m.reset(1);
        m.set(en, 1);
        for i in 0..ops.len() + latency {
            let valid = i < ops.len();
            let (a, b) = if valid { ops[i] } else { (0, 1) };
            m.set(n, a);
            m.set(d, b);
            m.set(iv, valid as u64);
            m.tick();
            if i + 1 >= latency && i + 1 - latency < ops.len() {
                let (a, b) = ops[i + 1 - latency];
                assert_eq!(m.get(ov), 1, "{}: out_valid", info.name);
                assert_eq!(m.get(q), div_round(a, b, qb), "{}: n = {a}, d = {b}", info.name);
            }
        }
    }
}

#[test]
fn reference_examples() {
    assert_eq!(div_round(5, 2, 5), 3); // 2.5 rounds up
    assert_eq!(div_round(7, 2, 5), 4); // 3.5
    assert_eq!(div_round(4, 3, 5), 1); // 1.33
    assert_eq!(div_round(5, 3, 5), 2); // 1.67
    assert_eq!(div_round(100, 1, 5), 31); // saturated
    assert_eq!(div_round(61, 2, 5), 31); // 30.5 -> 31
    assert_eq!(div_round(63, 2, 5), 31); // 31.5 -> 32, saturated
    assert_eq!(div_round(9, 0, 5), 0);
    assert_eq!(div_round(1, 2, 1), 1); // 0.5 rounds up
    assert_eq!(div_round(0, 7, 1), 0);
}
