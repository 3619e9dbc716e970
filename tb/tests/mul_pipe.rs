//! mul-pipe (spec §5.2) against a behavioural model, on the RTL and on the
//! Yosys gate-level netlist: random operands, random `en` stalls and random
//! `in_valid` gaps, every output compared every cycle.

use proptest::prelude::*;
use tb::{models, run_property, Model, ModelInfo};

/// About 60k cycles per model: well under a second even for the 32-bit netlist.
const CASES: u32 = 1000;

/// One cycle of stimulus.
#[derive(Clone, Debug)]
struct Cycle {
    a: u64,
    b: u64,
    en: bool,
    in_valid: bool,
}

/// Spec §5.2: 3 stages up to W = 32, 4 from W = 48.
fn spec_latency(w: usize) -> usize {
    if w >= 48 {
        4
    } else {
        3
    }
}

/// `spec_latency(W)` stages that load only while `en` is high; reset clears
/// them all. `p` is the product of whatever operands were presented, valid
/// or not.
struct Reference {
    /// (valid, product) per stage, the stage nearest the output last.
    stages: Vec<(bool, u128)>,
}

impl Reference {
    fn new(latency: usize) -> Self {
        Reference { stages: vec![(false, 0); latency] }
    }

    fn step(&mut self, c: &Cycle) {
        if c.en {
            self.stages.pop();
            self.stages.insert(0, (c.in_valid, c.a as u128 * c.b as u128));
        }
    }

    fn out(&self) -> (bool, u128) {
        *self.stages.last().expect("at least one stage")
    }
}

fn max(w: usize) -> u64 {
    if w == 64 {
        u64::MAX
    } else {
        (1 << w) - 1
    }
}

/// Uniform operands plus the corners of partial-product sums.
fn operand(w: usize) -> impl Strategy<Value = u64> {
    let m = max(w);
    prop_oneof![
        4 => any::<u64>().prop_map(move |v| v & m),
        1 => Just(0u64),
        1 => Just(1u64),
        1 => Just(m),
        1 => (0..w).prop_map(|k| 1u64 << k),
        1 => (0..w).prop_map(move |k| m >> k),
    ]
}

fn stimulus(w: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (operand(w), operand(w), prop::bool::weighted(0.75), prop::bool::weighted(0.7))
        .prop_map(|(a, b, en, in_valid)| Cycle { a, b, en, in_valid });
    prop::collection::vec(cycle, 1..120)
}

fn width(info: &ModelInfo) -> usize {
    info.params()["width"].as_u64().expect("width parameter") as usize
}

/// Drives `cycles` and then `latency` flushing cycles, comparing `p` and
/// `out_valid` after reset and after every clock edge.
fn check(m: &mut Model, cycles: &[Cycle]) -> Result<(), String> {
    let (a, b, en, iv, p, ov) =
        (m.port("a"), m.port("b"), m.port("en"), m.port("in_valid"), m.port("p"), m.port("out_valid"));
    let flush = Cycle { a: 0, b: 0, en: true, in_valid: false };
    let latency = spec_latency(width(m.info()));
    let mut r = Reference::new(latency);
    let compare = |m: &Model, r: &Reference, when: &str| {
        let (got_p, got_v) = (m.get_u128(p), m.get(ov) == 1);
        let want = r.out();
        if (got_v, got_p) == want {
            Ok(())
        } else {
            Err(format!("{when}: out_valid={got_v} p={got_p:#x}, expected out_valid={} p={:#x}", want.0, want.1))
        }
    };
    compare(m, &r, "after reset")?;
    for (i, c) in cycles.iter().chain(std::iter::repeat_n(&flush, latency)).enumerate() {
        m.set(a, c.a);
        m.set(b, c.b);
        m.set(en, c.en as u64);
        m.set(iv, c.in_valid as u64);
        m.tick();
        r.step(c);
        compare(m, &r, &format!("cycle {i} ({c:?})"))?;
    }
    Ok(())
}

fn property(test: &str, info: &'static ModelInfo) {
    run_property(test, info, stimulus(width(info)), CASES, |m, cycles| check(m, cycles));
}

#[test]
fn mul_pipe16_rtl() {
    property("mul_pipe16_rtl", models::get("mul_pipe16"));
}

#[test]
fn mul_pipe16_net() {
    property("mul_pipe16_net", models::get("mul_pipe16_net"));
}

#[test]
fn mul_pipe32_rtl() {
    property("mul_pipe32_rtl", models::get("mul_pipe32"));
}

#[test]
fn mul_pipe32_net() {
    property("mul_pipe32_net", models::get("mul_pipe32_net"));
}

#[test]
fn mul_pipe48_rtl() {
    property("mul_pipe48_rtl", models::get("mul_pipe48"));
}

#[test]
fn mul_pipe48_net() {
    property("mul_pipe48_net", models::get("mul_pipe48_net"));
}

#[test]
fn mul_pipe64_rtl() {
    property("mul_pipe64_rtl", models::get("mul_pipe64"));
}

/// The manifest's latency is the spec's and what the pipeline does: a
/// product appears after exactly that many advancing cycles, however long
/// the stalls between them.
#[test]
fn latency_matches_manifest_across_stalls() {
    for info in [models::get("mul_pipe64"), models::get("mul_pipe32_net"), models::get("mul_pipe48_net")] {
        let latency = info.latency().expect("mul-pipe has a fixed latency");
        assert_eq!(latency as usize, spec_latency(width(info)), "{}: manifest latency", info.name);
        let mut m = Model::new(info);
        let (a, b, en, iv, p, ov) =
            (m.port("a"), m.port("b"), m.port("en"), m.port("in_valid"), m.port("p"), m.port("out_valid"));
        m.reset(1);
        let x = max(width(info));
        m.set(a, x);
        m.set(b, x);
        m.set(iv, 1);
        let mut advanced = 0;
        while advanced < latency {
            m.set(en, 1);
            m.tick();
            advanced += 1;
            m.set(iv, 0);
            m.set(a, 0);
            m.set(b, 0);
            m.set(en, 0);
            let done = advanced == latency;
            assert_eq!(m.get(ov) == 1, done, "{}: out_valid after {advanced} advancing cycles", info.name);
            m.ticks(3); // a stall holds every stage
            assert_eq!(m.get(ov) == 1, done, "{}: out_valid after a stall", info.name);
        }
        assert_eq!(m.get_u128(p), x as u128 * x as u128, "{}: (2^W-1)^2", info.name);
    }
}
