//! fp16-convert (spec §2.2.3, §2.2.4, §5.6) against the golden functions of
//! `sim::fp16`, on every `fp16-convert` model of tb/models.toml, RTL and
//! gate level:
//! - `x -> u` equals `to_units` for every finite FP16 pattern;
//! - `v, mode -> y` equals `round_down` / `round_up` / `round_nearest_even`
//!   for values around every kind of grid point;
//! both pipelined, three stages that `en` advances (LATENCY), tested at full
//! rate and with random `en` stalls.
//!
//! The rounder takes `|v| < 2^41` (42-bit two's complement, hdl/src/prim/fp16.rs).

use proptest::prelude::*;
use sim::fp16::{grid_ulp, round_down, round_nearest_even, round_up, to_units, MAX_UNITS};
use sim::testgen;
use tb::{models, run_property, Model};

const CASES: u32 = 1000;
const NET_CASES: u32 = 400;
const FX: u32 = 42;
/// Advancing cycles from `x` to `u` and from `v` to `y` (spec §5.6).
const LATENCY: usize = 3;
/// Largest magnitude the rounder takes.
const VMAX: i64 = (1 << (FX - 1)) - 1;

fn expected(v: i64, mode: u8) -> u16 {
    match mode {
        0 => round_down(v),
        1 => round_up(v),
        2 => round_nearest_even(v),
        _ => unreachable!("modes are 0, 1, 2"),
    }
}

fn to_port(v: i64) -> u64 {
    (v as u64) & ((1 << FX) - 1)
}

fn from_port(u: u64) -> i64 {
    ((u << (64 - FX)) as i64) >> (64 - FX)
}

/// Every one of the 63488 finite patterns (both zeros, every subnormal and
/// normal of either sign), one a cycle.
#[test]
fn to_units_every_finite_pattern() {
    let patterns: Vec<u16> = (0..=u16::MAX).filter(|&p| sim::fp16::is_finite(p)).collect();
    assert_eq!(patterns.len(), 63488);
    for info in models::of_unit("fp16-convert", false).into_iter().chain(models::of_unit("fp16-convert", true)) {
        let mut m = Model::new(info);
        let (x, u, en) = (m.port("x"), m.port("u"), m.port("en"));
        m.reset(1);
        m.set(en, 1);
        let mut n = 0;
        for i in 0..patterns.len() + LATENCY {
            m.set(x, patterns.get(i).copied().unwrap_or(0) as u64);
            m.tick();
            if let Some(&p) = (i + 1).checked_sub(LATENCY).and_then(|j| patterns.get(j)) {
                let got = m.get(u);
                assert_eq!(from_port(got), to_units(p), "{}: x = {p:#06x}, u = {got:#x}", info.name);
                n += 1;
            }
        }
        assert_eq!(n, patterns.len(), "{}: every pattern compared", info.name);
    }
}

/// A value in units near something interesting, with a random sign.
fn value() -> impl Strategy<Value = i64> {
    let finite_mag = (0u16..=0x7BFF).prop_map(to_units);
    let near_grid = (finite_mag.clone(), -3i64..=3).prop_map(|(g, e)| g + e);
    // half an ulp either side of a grid point: RNE ties and their neighbours
    let tie = (finite_mag.clone(), any::<bool>(), -1i64..=1).prop_map(|(g, up, e)| {
        let h = (grid_ulp(g as u64) / 2) as i64;
        if up {
            g + h + e
        } else {
            g - h + e
        }
    });
    let binade = (0u32..FX - 1, -2i64..=2).prop_map(|(k, e)| (1i64 << k) + e);
    let sat = prop_oneof![
        (-3i64..=3).prop_map(|e| MAX_UNITS + e),
        // halfway between 65504 and 65536: RNE's last value that stays finite-looking
        (-3i64..=3).prop_map(|e| MAX_UNITS + (1 << 28) + e),
        (-3i64..=3).prop_map(|e| (1i64 << 40) + e),
        Just(VMAX),
        MAX_UNITS..=VMAX,
    ];
    let uniform = 0..=VMAX;
    let log_uniform = (0u32..FX - 1).prop_flat_map(|b| 0i64..=(VMAX >> (FX - 2 - b)));
    let mag = prop_oneof![
        1 => Just(0i64),
        2 => 0i64..4096,
        4 => near_grid,
        4 => tie,
        2 => binade,
        2 => sat,
        1 => uniform,
        2 => log_uniform,
    ];
    (mag, any::<bool>()).prop_map(|(a, neg)| {
        let a = a.clamp(0, VMAX);
        if neg {
            -a
        } else {
            a
        }
    })
}

#[derive(Clone, Debug)]
struct Cycle {
    v: i64,
    mode: u8,
    en: bool,
    /// A finite FP16 pattern for the combinational converter alongside.
    x: u16,
}

fn finite_pattern() -> impl Strategy<Value = u16> {
    any::<u16>().prop_map(|p| if sim::fp16::is_finite(p) { p } else { p & 0xFBFF })
}

fn stimulus() -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (value(), 0u8..3, prop::bool::weighted(0.75), finite_pattern()).prop_map(|(v, mode, en, x)| Cycle {
        v,
        mode,
        en,
        x,
    });
    prop::collection::vec(cycle, 1..120)
}

/// Stages that load only with `en`; `None` until loaded after reset (the
/// outputs of a stage's reset contents are left open).
fn check(m: &mut Model, cycles: &[Cycle]) -> Result<(), String> {
    let (v, mode, en, x, u, y) = (m.port("v"), m.port("mode"), m.port("en"), m.port("x"), m.port("u"), m.port("y"));
    let mut stages: Vec<Option<(i64, u8, u16, u16)>> = vec![None; LATENCY];
    let flush = Cycle { v: 0, mode: 0, en: true, x: 0 };
    for (i, c) in cycles.iter().chain(std::iter::repeat_n(&flush, LATENCY)).enumerate() {
        m.set(v, to_port(c.v));
        m.set(mode, c.mode as u64);
        m.set(en, c.en as u64);
        m.set(x, c.x as u64);
        m.tick();
        if c.en {
            stages.pop();
            stages.insert(0, Some((c.v, c.mode, expected(c.v, c.mode), c.x)));
        }
        if let Some((val, md, want, px)) = stages[LATENCY - 1] {
            let got_u = from_port(m.get(u));
            if got_u != to_units(px) {
                return Err(format!("cycle {i}: x = {px:#06x}: u = {got_u}, expected {}", to_units(px)));
            }
            let got = m.get(y) as u16;
            if got != want {
                return Err(format!(
                    "cycle {i}: v = {val} ({val:#x}), mode {md}: y = {got:#06x}, expected {want:#06x}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn rtl_rounder_matches_model() {
    for info in models::of_unit_nonempty("fp16-convert", false) {
        run_property(&format!("fp16_{}", info.name), info, stimulus(), testgen::cases(CASES), |m, c| check(m, c));
    }
}

#[test]
fn netlist_rounder_matches_model() {
    for info in models::of_unit_nonempty("fp16-convert", true) {
        run_property(&format!("fp16_{}", info.name), info, stimulus(), testgen::cases(NET_CASES), |m, c| check(m, c));
    }
}

/// Directed, at full rate: every finite FP16 magnitude `g`, both signs, at
/// `g`, `g +- 1` and `g +- ulp/2` (the RNE ties), in all three modes.
fn grid_values() -> Vec<i64> {
    let mut vs = Vec::new();
    for p in 0u16..=0x7BFF {
        let g = to_units(p);
        let h = (grid_ulp(g as u64) / 2) as i64;
        for a in [g, g + 1, g - 1, g + h, g - h] {
            if (0..=VMAX).contains(&a) {
                vs.push(a);
                vs.push(-a);
            }
        }
    }
    vs.extend([VMAX, -VMAX, MAX_UNITS + (1 << 28), -(MAX_UNITS + (1 << 28))]);
    vs
}

#[test]
fn every_grid_point_and_tie() {
    let vs = grid_values();
    for info in models::of_unit("fp16-convert", false).into_iter().chain(models::of_unit("fp16-convert", true)) {
        let latency = LATENCY;
        let mut m = Model::new(info);
        let (v, mode, en, y) = (m.port("v"), m.port("mode"), m.port("en"), m.port("y"));
        m.reset(1);
        m.set(en, 1);
        let ops: Vec<(i64, u8)> = vs.iter().flat_map(|&a| (0u8..3).map(move |md| (a, md))).collect();
        for i in 0..ops.len() + latency {
            let (a, md) = ops.get(i).copied().unwrap_or((0, 0));
            m.set(v, to_port(a));
            m.set(mode, md as u64);
            m.tick();
            if let Some(&(a, md)) = (i + 1).checked_sub(latency).and_then(|j| ops.get(j)) {
                let got = m.get(y) as u16;
                assert_eq!(got, expected(a, md), "{}: v = {a} ({a:#x}), mode {md}: y = {got:#06x}", info.name);
            }
        }
    }
}

/// `y` follows `v`, and `u` follows `x`, by exactly LATENCY advancing
/// cycles, however long `en` stays low in between; the manifest says the
/// same.
#[test]
fn latency_matches_manifest_across_stalls() {
    for info in models::of_unit("fp16-convert", false).into_iter().chain(models::of_unit("fp16-convert", true)) {
        assert_eq!(info.latency(), Some(LATENCY as u64), "{}: manifest latency", info.name);
        let mut m = Model::new(info);
        let (v, mode, en, y, x, u) = (m.port("v"), m.port("mode"), m.port("en"), m.port("y"), m.port("x"), m.port("u"));
        m.reset(1);
        m.set(en, 1);
        m.set(mode, 2);
        m.ticks(8); // every stage holds the conversions of 0
        m.set(v, 3);
        m.set(x, 0x3C00); // 1.0 = 2^24 units
        let (mut advanced, mut seen_y, mut seen_u) = (0, None, None);
        while advanced < 8 && (seen_y.is_none() || seen_u.is_none()) {
            m.set(en, 1);
            m.tick();
            advanced += 1;
            m.set(v, 0);
            m.set(x, 0);
            m.set(en, 0);
            m.ticks(3);
            if m.get(y) == 3 && seen_y.is_none() {
                seen_y = Some(advanced);
            }
            if m.get(u) == 1 << 24 && seen_u.is_none() {
                seen_u = Some(advanced);
            }
        }
        assert_eq!(seen_y, Some(LATENCY), "{}: advancing cycles until y shows v = 3", info.name);
        assert_eq!(seen_u, Some(LATENCY), "{}: advancing cycles until u shows x = 1.0", info.name);
    }
}
