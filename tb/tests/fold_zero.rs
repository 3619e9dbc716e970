//! fold-zero (spec §5.8) against a behavioural model, on every `fold-zero`
//! model of tb/models.toml, RTL and gate level: `(min, step)` drawn as a
//! real folded group's metadata (§2.6: `min = RD(v_min) < 0`, `step =
//! RU(ceil((v_max - min) / (2^M - 1)))`, so `z` lies in 1 ..= 2^M - 1),
//! then minorities at the edges: `min >= 0` (+0, -0 among them), `step = 0`,
//! subnormals, `min = -65504` over a tiny step (the clamp), `|min|` an
//! exact multiple of the step and one grid step either side of one, and
//! arbitrary patterns. Random `en` stalls (every stage holds) and
//! `in_valid` gaps; `out_valid` is compared every cycle, and `z` every cycle
//! once the stage it comes from has been loaded since reset (`z` of
//! whatever operands were presented, valid or not).
//!
//! The reference computes `z` from the FP16 patterns by the definition
//! (§2.2.3 units, §2.7), in u128; `sim`'s `GroupParams::fold_zero` is
//! checked against it as a second opinion.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use sim::fp16;
use sim::testgen;
use tb::coverage::Coverage;
use tb::{models, run_property, Model, ModelInfo};

const UNIT: &str = "fold-zero";
const CASES: u32 = 1000;
const NET_CASES: u32 = 400;

const POINTS: &[&str] = &[
    "z = 0: min >= 0",
    "z = 0: min = -0",
    "z = 2^M: step = 0",
    "z = 2^M: clamped",
    "z clamped, |min| >= 2^(M+1) step",
    "z = |min| / step exactly",
    "z = floor + 1 (ceiling)",
    "subnormal min or step",
    "stall (en low)",
    "in_valid gap",
];

/// units(x) of an FP16 magnitude (spec §2.2.3): the mantissa when the
/// exponent field is 0, else (1024 + mantissa) << (E - 1).
fn units(x: u16) -> u128 {
    let (e, m) = ((x >> 10) & 0x1F, (x & 0x3FF) as u128);
    if e == 0 {
        m
    } else {
        (1024 + m) << (e - 1)
    }
}

/// spec §2.7: the first index `q` with `min + q * step >= 0`: 0 when
/// `min >= 0` (-0 included), `2^M` when `step = 0`, else `ceil(A / S)`
/// clamped to `2^M`.
fn fold_zero(min: u16, step: u16, m: u32) -> u64 {
    let top = 1u128 << m;
    if min & 0x8000 == 0 || min == 0x8000 {
        return 0;
    }
    let (a, s) = (units(min & 0x7FFF), units(step));
    if s == 0 {
        return top as u64;
    }
    a.div_ceil(s).min(top) as u64
}

/// Which coverage points `(min, step)` reaches.
fn classes(min: u16, step: u16, m: u32) -> Vec<&'static str> {
    let mut v = vec![];
    let (a, s) = (units(min & 0x7FFF), units(step));
    let top = 1u128 << m;
    if min & 0x7C00 == 0 && min & 0x3FF != 0 || step & 0x7C00 == 0 && step & 0x3FF != 0 {
        v.push("subnormal min or step");
    }
    if min == 0x8000 {
        v.push("z = 0: min = -0");
    }
    if min & 0x8000 == 0 || min == 0x8000 {
        v.push("z = 0: min >= 0");
    } else if s == 0 {
        v.push("z = 2^M: step = 0");
    } else if a.div_ceil(s) > top {
        v.push("z = 2^M: clamped");
        if a >= s << (m + 1) {
            v.push("z clamped, |min| >= 2^(M+1) step");
        }
    } else if a % s == 0 {
        v.push("z = |min| / step exactly");
    } else {
        v.push("z = floor + 1 (ceiling)");
    }
    v
}

#[derive(Clone, Debug)]
struct Cycle {
    min: u16,
    step: u16,
    en: bool,
    in_valid: bool,
}

/// A magnitude in units whose bit length is uniform in 1 ..= 40, below
/// 65504's.
fn magnitude() -> impl Strategy<Value = i64> {
    (1u32..=40, any::<u64>()).prop_map(|(bits, r)| {
        let v = (1u64 << (bits - 1)) | (r & ((1u64 << (bits - 1)) - 1));
        v.min(fp16::MAX_UNITS as u64) as i64
    })
}

/// A real folded group's metadata (spec §2.6): `v_min < 0 < v_max`, `min =
/// RD(v_min)`, `step = RU(ceil((v_max - min) / (2^M - 1)))`.
fn realistic(m: u32) -> impl Strategy<Value = (u16, u16)> {
    (magnitude(), magnitude()).prop_map(move |(lo, hi)| {
        let min = fp16::round_down(-lo);
        let k = (1i64 << m) - 1;
        let d = hi - fp16::to_units(min);
        (min, fp16::round_up((d + k - 1) / k))
    })
}

/// Any finite pattern with the sign bit 0.
fn any_step() -> impl Strategy<Value = u16> {
    (0u16..=fp16::MAX_POS).boxed()
}

/// `|min| = k S` exactly, or one grid step of `|min|` below or above it
/// (one unit below 2048 units): `S = sig << e` with `k sig < 2048`, so
/// `k S` is an FP16 value.
fn multiple(m: u32) -> impl Strategy<Value = (u16, u16)> {
    let top = 1u64 << m;
    (0..=top + 2, 1u64..=2047, prop_oneof![3 => 0u32..=2, 2 => 0u32..=29], -1i32..=1).prop_map(
        move |(k, sig, e, delta)| {
            let sig = sig.min(2047 / k.max(1));
            let s = sig << e;
            let p = |u: u64| {
                let p = fp16::round_down(u as i64);
                assert_eq!(fp16::to_units(p), u as i64, "{u} is not an FP16 value");
                p
            };
            let mag = (p(k * s) as i32 + delta).clamp(0, fp16::MAX_POS as i32) as u16;
            (0x8000 | mag, p(s))
        },
    )
}

/// Operands: mostly a real group's, then the edges.
fn operands(m: u32) -> impl Strategy<Value = (u16, u16)> {
    let nonneg_min = prop_oneof![Just(0u16), Just(0x8000u16), 0u16..=fp16::MAX_POS];
    let neg = (0x8001u16..=fp16::MAX_NEG).boxed();
    let subnormal = prop_oneof![0x8001u16..=0x83FF, 0x8400u16..=0x8C00];
    let tiny_step = prop_oneof![1u16..=0x3FF, 0x0400u16..=0x1400, Just(1u16)];
    prop_oneof![
        12 => realistic(m),
        2 => (nonneg_min, prop_oneof![Just(0u16), any_step()]),
        2 => (neg.clone(), Just(0u16)),
        2 => (subnormal, prop_oneof![1u16..=0x3FF, 0x0400u16..=0x0800, any_step()]),
        1 => (Just(fp16::MAX_NEG), tiny_step),
        4 => multiple(m),
        2 => (neg, any_step()),
    ]
}

fn stimulus(m: u32) -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (operands(m), prop::bool::weighted(0.75), prop::bool::weighted(0.7))
        .prop_map(|((min, step), en, in_valid)| Cycle { min, step, en, in_valid });
    prop::collection::vec(cycle, 1..120)
}

fn code_bits(info: &ModelInfo) -> u32 {
    info.params()["code-bits"].as_u64().expect("code-bits parameter") as u32
}

/// The pipeline: `latency` stages that load only while `en` is high; each
/// holds (valid, z of its operands, the operands), or `None` while it
/// still holds its reset contents (whose `z` the spec leaves open; valid
/// is 0).
struct Reference {
    stages: Vec<Option<(bool, u64, u16, u16)>>,
    m: u32,
}

impl Reference {
    fn new(latency: usize, m: u32) -> Self {
        Reference { stages: vec![None; latency], m }
    }
    fn step(&mut self, c: &Cycle) {
        if c.en {
            self.stages.pop();
            self.stages.insert(0, Some((c.in_valid, fold_zero(c.min, c.step, self.m), c.min, c.step)));
        }
    }
    fn out(&self) -> Option<(bool, u64, u16, u16)> {
        *self.stages.last().unwrap()
    }
}

fn check(m: &mut Model, cycles: &[Cycle], cov: &Coverage) -> Result<(), String> {
    let info = m.info();
    let mb = code_bits(info);
    let latency = info.latency().expect("fixed latency") as usize;
    if latency != mb as usize + 2 {
        return Err(format!("manifest latency {latency}, expected M + 2 = {}", mb + 2));
    }
    let (min, step, en, iv, z, ov) =
        (m.port("min"), m.port("step"), m.port("en"), m.port("in_valid"), m.port("z"), m.port("out_valid"));
    let mut r = Reference::new(latency, mb);
    let compare = |m: &Model, r: &Reference, when: &str| {
        let (got_v, got_z) = (m.get(ov) == 1, m.get(z));
        match r.out() {
            None if got_v => Err(format!("{when}: out_valid=1 from a stage not loaded since reset")),
            None => Ok(()),
            Some((v, want, a, b)) if (got_v, got_z) != (v, want) => Err(format!(
                "{when}: out_valid={got_v} z={got_z}, expected out_valid={v} z={want} (min {a:#06x}, step {b:#06x})"
            )),
            Some(_) => Ok(()),
        }
    };
    compare(m, &r, "after reset")?;
    let flush = Cycle { min: 0, step: 0, en: true, in_valid: false };
    for (i, c) in cycles.iter().chain(std::iter::repeat_n(&flush, latency)).enumerate() {
        m.set(min, c.min as u64);
        m.set(step, c.step as u64);
        m.set(en, c.en as u64);
        m.set(iv, c.in_valid as u64);
        m.tick();
        r.step(c);
        compare(m, &r, &format!("cycle {i} ({c:?})"))?;
        if i < cycles.len() {
            cov.hit_if("stall (en low)", !c.en);
            cov.hit_if("in_valid gap", c.en && !c.in_valid);
            if c.en {
                for p in classes(c.min, c.step, mb) {
                    cov.hit(p);
                }
            }
        }
    }
    Ok(())
}

fn sweep(gate_level: bool, cases: u32) {
    let level = if gate_level { "netlists" } else { "RTL" };
    let cov = Coverage::new(&format!("{UNIT} ({level})"), POINTS);
    for info in models::of_unit_nonempty(UNIT, gate_level) {
        run_property(
            &format!("fold_zero_{}", info.name),
            info,
            stimulus(code_bits(info)),
            testgen::cases(cases),
            |m, c| check(m, c, &cov),
        );
    }
    cov.check();
}

#[test]
fn rtl_matches_model() {
    sweep(false, CASES);
}

#[test]
fn netlist_matches_model() {
    sweep(true, NET_CASES);
}

/// Directed corners, streamed at full rate: `|min| = k S` and one unit
/// either side of it for every k in 0 ..= 2^M + 2 and small steps, then
/// +-0, step 0 and the extremes.
#[test]
fn every_index_at_full_rate() {
    for info in models::of_unit(UNIT, false).into_iter().chain(models::of_unit(UNIT, true)) {
        let mb = code_bits(info);
        let latency = info.latency().unwrap() as usize;
        let mut ops: Vec<(u16, u16)> = vec![
            (0x0000, 0x0000),
            (0x8000, 0x0000),
            (0x8000, 0x3C00),
            (0x0001, 0x0001),
            (fp16::MAX_NEG, 0x0000),
            (fp16::MAX_NEG, 0x0001),
            (fp16::MAX_NEG, fp16::MAX_POS),
            (0x8001, fp16::MAX_POS),
            (0x8001, 0x0001),
            (0xC000, 0x2E32),
        ];
        for s in 1..=7u16 {
            for k in 0..=(1u16 << mb) + 2 {
                // below 2048 units a pattern is its units
                for a in [(k * s).saturating_sub(1), k * s, k * s + 1].into_iter().filter(|&a| a < 2048) {
                    ops.push((0x8000 | a, s));
                }
            }
        }
        let mut m = Model::new(info);
        let (min, step, en, iv, z, ov) =
            (m.port("min"), m.port("step"), m.port("en"), m.port("in_valid"), m.port("z"), m.port("out_valid"));
        m.reset(1);
        m.set(en, 1);
        for i in 0..ops.len() + latency {
            let valid = i < ops.len();
            let (a, b) = if valid { ops[i] } else { (0, 0) };
            m.set(min, a as u64);
            m.set(step, b as u64);
            m.set(iv, valid as u64);
            m.tick();
            if i + 1 >= latency && i + 1 - latency < ops.len() {
                let (a, b) = ops[i + 1 - latency];
                assert_eq!(m.get(ov), 1, "{}: out_valid", info.name);
                assert_eq!(m.get(z), fold_zero(a, b, mb), "{}: min = {a:#06x}, step = {b:#06x}", info.name);
            }
        }
    }
}

#[test]
fn reference_examples() {
    // spec §5.8: -2.0 over 0.0968017578125 (1624064 units): 33554432 / 1624064 = 20.66
    assert_eq!((units(0xC000), units(0x2E32)), (33554432, 1624064));
    assert_eq!(fold_zero(0xC000, 0x2E32, 5), 21);
    assert_eq!(fold_zero(0xBE00, 0x3400, 5), 6); // -1.5 over 0.25: exactly 6
    assert_eq!(fold_zero(fp16::MAX_NEG, 0x3C00, 5), 32); // -65504 over 1: clamped
    assert_eq!(fold_zero(0xBC00, 0x0000, 3), 8); // step 0
    assert_eq!(fold_zero(0x8000, 0x0000, 3), 0); // -0
    assert_eq!(fold_zero(0x3C00, 0x3C00, 3), 0);
    assert_eq!(fold_zero(0x8003, 0x0001, 2), 3); // subnormals: 3 units over 1
    assert_eq!(fold_zero(0x8005, 0x0002, 2), 3); // 5 / 2 = 2.5
}

/// The reference against `sim`'s `GroupParams::fold_zero`, on the test's
/// own stimulus.
#[test]
fn reference_agrees_with_sim() {
    use sim::oaken::format::GroupMeta;
    use sim::oaken::quantizer::GroupParams;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for mb in 2..=9u32 {
        for _ in 0..2000 {
            let (min, step) = operands(mb).new_tree(&mut runner).unwrap().current();
            let g = GroupParams::from_meta(GroupMeta { min, step });
            assert_eq!(fold_zero(min, step, mb), g.fold_zero(mb), "M = {mb}: min {min:#06x}, step {step:#06x}");
        }
    }
}
