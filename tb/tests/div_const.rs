//! div-const (spec §5.4) against a behavioural model, on every `div-const`
//! model of tb/models.toml, RTL and gate level: 42-bit dividends around the
//! multiples of K and the ends of the range, random `en` stalls (every stage
//! holds) and `in_valid` gaps; `out_valid` is compared every cycle, and `c`
//! every cycle once the stage it comes from has been loaded since reset
//! (`c` of whatever dividend was presented, valid or not).

use proptest::prelude::*;
use sim::testgen;
use tb::{models, run_property, Model, ModelInfo};

const CASES: u32 = 1000;
const NET_CASES: u32 = 400;
const DMAX: u64 = (1 << 42) - 1;

/// spec §5.4: `ceil(D / K)`.
fn div_ceil(d: u64, k: u64) -> u64 {
    d.div_ceil(k)
}

#[derive(Clone, Debug)]
struct Cycle {
    d: u64,
    en: bool,
    in_valid: bool,
}

/// 0, 1, the top of the range, `K m` and `K m +- 1` for small and large
/// `m`, powers of two and their neighbours, and uniform values.
fn dividend(k: u64) -> impl Strategy<Value = u64> {
    let mmax = DMAX / k;
    prop_oneof![
        1 => Just(0u64),
        1 => Just(1u64),
        1 => Just(DMAX),
        1 => Just(DMAX - 1),
        1 => Just(mmax * k),
        3 => (0u64..=64, -1i64..=1).prop_map(move |(m, e)| (m * k).saturating_add_signed(e)),
        3 => (0..=mmax, -1i64..=1).prop_map(move |(m, e)| (m * k).saturating_add_signed(e).min(DMAX)),
        2 => (0u32..42, -1i64..=1).prop_map(|(b, e)| (1u64 << b).saturating_add_signed(e).min(DMAX)),
        4 => 0..=DMAX,
        2 => (0u32..=42).prop_flat_map(|b| 0..=(DMAX >> (42 - b))),
    ]
}

fn stimulus(k: u64) -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (dividend(k), prop::bool::weighted(0.75), prop::bool::weighted(0.7))
        .prop_map(|(d, en, in_valid)| Cycle { d, en, in_valid });
    prop::collection::vec(cycle, 1..120)
}

fn divisor(info: &ModelInfo) -> u64 {
    info.params()["divisor"].as_u64().expect("divisor parameter")
}

/// `latency` stages that load only while `en` is high; `None` while a stage
/// still holds its reset contents (its `c` is left open; valid is 0).
struct Reference {
    stages: Vec<Option<(bool, u64)>>,
    k: u64,
}

impl Reference {
    fn step(&mut self, c: &Cycle) {
        if c.en {
            self.stages.pop();
            self.stages.insert(0, Some((c.in_valid, div_ceil(c.d, self.k))));
        }
    }
}

fn check(m: &mut Model, cycles: &[Cycle]) -> Result<(), String> {
    let info = m.info();
    let k = divisor(info);
    let latency = info.latency().expect("fixed latency") as usize;
    let (d, en, iv, c, ov) = (m.port("d"), m.port("en"), m.port("in_valid"), m.port("c"), m.port("out_valid"));
    let mut r = Reference { stages: vec![None; latency], k };
    let compare = |m: &Model, r: &Reference, when: &str| {
        let (got_v, got_c) = (m.get(ov) == 1, m.get(c));
        match *r.stages.last().unwrap() {
            None if got_v => Err(format!("{when}: out_valid=1 from a stage not loaded since reset")),
            None => Ok(()),
            Some((v, want)) if (got_v, got_c) != (v, want) => {
                Err(format!("{when}: out_valid={got_v} c={got_c}, expected out_valid={v} c={want} (K = {k})"))
            }
            Some(_) => Ok(()),
        }
    };
    compare(m, &r, "after reset")?;
    let flush = Cycle { d: 0, en: true, in_valid: false };
    for (i, cy) in cycles.iter().chain(std::iter::repeat_n(&flush, latency)).enumerate() {
        m.set(d, cy.d);
        m.set(en, cy.en as u64);
        m.set(iv, cy.in_valid as u64);
        m.tick();
        r.step(cy);
        compare(m, &r, &format!("cycle {i} ({cy:?})"))?;
    }
    Ok(())
}

#[test]
fn rtl_matches_model() {
    for info in models::of_unit_nonempty("div-const", false) {
        run_property(
            &format!("div_const_{}", info.name),
            info,
            stimulus(divisor(info)),
            testgen::cases(CASES),
            |m, c| check(m, c),
        );
    }
}

#[test]
fn netlist_matches_model() {
    for info in models::of_unit_nonempty("div-const", true) {
        run_property(
            &format!("div_const_{}", info.name),
            info,
            stimulus(divisor(info)),
            testgen::cases(NET_CASES),
            |m, c| check(m, c),
        );
    }
}

/// Directed corners at full rate, and the manifest's latency: every
/// dividend 0 ..= 4K + 1, `K m + {-1, 0, 1}` near the top of the range, and
/// `2^b + {-1, 0, 1}` for every bit.
#[test]
fn corners_at_full_rate() {
    for info in models::of_unit("div-const", false).into_iter().chain(models::of_unit("div-const", true)) {
        let k = divisor(info);
        let latency = info.latency().unwrap() as usize;
        let top = DMAX / k * k;
        let mut ds: Vec<u64> = (0..=4 * k + 1).chain([top - 1, top, top + 1, DMAX - 1, DMAX]).collect();
        ds.extend((0..42).flat_map(|b| [(1u64 << b) - 1, 1 << b, (1 << b) + 1]));
        ds.retain(|&d| d <= DMAX);
        let mut m = Model::new(info);
        let (d, en, iv, c, ov) = (m.port("d"), m.port("en"), m.port("in_valid"), m.port("c"), m.port("out_valid"));
        m.reset(1);
        m.set(en, 1);
        for i in 0..ds.len() + latency {
            let valid = i < ds.len();
            m.set(d, if valid { ds[i] } else { 0 });
            m.set(iv, valid as u64);
            m.tick();
            let out = (i + 1).checked_sub(latency).filter(|&j| j < ds.len());
            assert_eq!(m.get(ov) == 1, out.is_some(), "{}: out_valid after cycle {i}", info.name);
            if let Some(j) = out {
                assert_eq!(m.get(c), div_ceil(ds[j], k), "{}: ceil({} / {k})", info.name, ds[j]);
            }
        }
    }
}

/// Bad parameters are refused with one line, before any Verilog exists.
#[test]
fn rtl_gen_rejects_bad_parameters_in_one_line() {
    let e = |src: &str| {
        let t: toml::Table = src.parse().unwrap();
        rtl_gen::emit("div-const", &t, &rtl_gen::EmitOptions::default()).err().expect("rejected").0
    };
    for (src, want) in [
        ("divisor = 0", "div-const: divisor must be in 1..=32767, got 0"),
        ("divisor = 32768", "div-const: divisor must be in 1..=32767, got 32768"),
        ("per-stage = 0", "div-const: per-stage must be in 1..=42, got 0"),
        ("per-stage = 43", "div-const: per-stage must be in 1..=42, got 43"),
        ("method = \"mersenne\"\ndivisor = 14", "div-const: method = \"mersenne\" needs divisor = 2^m - 1"),
        ("method = \"mersenne\"\ndivisor = 1", "div-const: method = \"mersenne\" needs divisor = 2^m - 1"),
        ("method = \"mersenne\"\nper-stage = 5", "div-const: per-stage applies only to method = \"restoring\""),
        ("method = \"radix4\"", "div-const: unknown variant `radix4`"),
    ] {
        let msg = e(src);
        assert!(msg.starts_with(want) && !msg.contains('\n'), "{src}: {msg}");
    }
}
