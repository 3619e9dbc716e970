//! Hardware cost of each scheme at its units' default parameters, read from
//! a `ppa.json` of `make synth` (docs/spec.md §8.2, §16.4). A unit without
//! RTL, or without a figure in that file, has no number here.

use super::Scheme;
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    Quantize,
    /// Dequantize, or compute on the codes (HACK).
    Dequantize,
}

/// A unit a scheme needs on one side.
pub struct Need {
    pub unit: &'static str,
    /// What it does for the scheme (and which variant).
    pub role: &'static str,
    pub side: Side,
    /// `rtl-gen` generates it (`sim/tests/compare.rs` checks this against
    /// `rtl-gen/src/units.rs`).
    pub rtl: bool,
    /// Elements per cycle per lane when `ppa.json` gives none (spec §8.2).
    pub per_lane: f64,
    /// The `ppa.json` model of a variant that is not the unit's default
    /// (empty: the default's).
    pub model: &'static str,
}

const fn need(unit: &'static str, role: &'static str, side: Side, rtl: bool, per_lane: f64) -> Need {
    Need { unit, role, side, rtl, per_lane, model: "" }
}

/// The units of every scheme. Oaken's MMU and the memories that hold the
/// cache are left out: every scheme needs them.
pub fn needs(s: Scheme) -> Vec<Need> {
    use Side::*;
    match s {
        Scheme::Oaken => vec![need("oaken-quantizer", "quantization engine", Quantize, true, 1.0), need("oaken-dequantizer", "dequantization engine", Dequantize, true, 1.0)],
        Scheme::Kivi => vec![
            need("kivi-quantizer", "axis token: V", Quantize, true, 1.0),
            // two passes over each block: half an element per lane per cycle
            Need { model: "kivi_quantizer_ch", ..need("kivi-quantizer", "axis channel: K", Quantize, true, 0.5) },
            need("kivi-dequantizer", "K and V", Dequantize, true, 1.0),
        ],
        Scheme::Titanus => vec![
            need("titanus-pruner", "pruning unit, K and V beats", Quantize, true, 2.0),
            need("titanus-quantizer", "quantization unit", Quantize, true, 1.0),
            need("titanus-dequantizer", "dequantization unit", Dequantize, true, 1.0),
        ],
        Scheme::PackKv => vec![
            need("packkv-quantizer", "token quantizer", Quantize, true, 1.0),
            need("packkv-encoder", "bit-pack, repack none (the compared setting)", Quantize, true, 1.0),
            need("packkv-decoder", "unpack and dequantize", Dequantize, true, 1.0),
        ],
        Scheme::Hack => vec![
            need("hack-quantizer", "axis token: K, Q and P codes", Quantize, true, 1.0),
            // two passes over each block, as KIVI's channel engine
            Need { model: "hack_quantizer_ch", ..need("hack-quantizer", "axis channel: V codes", Quantize, true, 0.5) },
            need("hack-qk-dot", "Q·Kᵀ on codes", Dequantize, true, 1.0),
            need("hack-pv-dot", "P·V on codes", Dequantize, true, 1.0),
        ],
        Scheme::Intn => vec![],
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitCost {
    pub unit: &'static str,
    pub role: &'static str,
    pub side: Side,
    /// "no RTL yet", "not in FILE", or the `ppa.json` model it comes from.
    pub source: String,
    /// Logic NAND2-eq (memories as macros where the file has that run).
    pub nand2_eq: Option<f64>,
    /// Bits in memory macros, apart from the logic.
    pub memory_bits: Option<u64>,
    pub elements_per_cycle: Option<f64>,
    pub nand2_eq_per_element_cycle: Option<f64>,
    pub max_clock_mhz: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchemeCost {
    pub scheme: Scheme,
    pub units: Vec<UnitCost>,
    /// Sums over the side's units of NAND2-eq over elements per cycle;
    /// None while any unit of the side has no figure.
    pub quantize_nand2_per_element_cycle: Option<f64>,
    pub dequantize_nand2_per_element_cycle: Option<f64>,
    pub memory_bits: Option<u64>,
    /// The slowest unit's maximum clock; None while any unit has none.
    pub max_clock_mhz: Option<f64>,
}

impl SchemeCost {
    /// Both sides, when both are known: the area chart's abscissa.
    pub fn total(&self) -> Option<f64> {
        Some(self.quantize_nand2_per_element_cycle? + self.dequantize_nand2_per_element_cycle?)
    }
}

/// The row of `unit` at its defaults: model named as its module (ppa.py's
/// convention), or `<module>_defaults` (synthesized with memories as
/// macros only).
fn default_row<'a>(ppa: &'a Value, unit: &str, model: &str) -> Option<&'a Value> {
    let module = if model.is_empty() { unit.replace('-', "_") } else { model.to_string() };
    ppa["units"].as_array()?.iter().find(|r| r["unit"] == unit && (r["model"] == module.as_str() || r["model"] == format!("{module}_defaults").as_str()))
}

fn cost(n: &Need, ppa: Option<&Value>, ppa_name: &str) -> UnitCost {
    let mut c = UnitCost {
        unit: n.unit,
        role: n.role,
        side: n.side,
        source: String::new(),
        nand2_eq: None,
        memory_bits: None,
        elements_per_cycle: None,
        nand2_eq_per_element_cycle: None,
        max_clock_mhz: None,
    };
    if !n.rtl {
        c.source = "no RTL yet".into();
        return c;
    }
    let Some(row) = ppa.and_then(|p| default_row(p, n.unit, n.model)) else {
        c.source = format!("not in {ppa_name}");
        return c;
    };
    let macros = &row["memories_as_macros"];
    let (area, clock) = if macros.is_object() { (&macros["nand2_eq"], &macros["max_clock_mhz"]) } else { (&row["nand2_eq"], &row["max_clock_mhz"]) };
    c.source = format!("{}{}", row["model"].as_str().unwrap_or("?"), if macros.is_object() { ", memories as macros" } else { "" });
    c.nand2_eq = area.as_f64();
    c.max_clock_mhz = clock.as_f64();
    c.memory_bits = Some(if macros.is_object() { row["memory_bits"].as_u64().unwrap_or(0) } else { 0 });
    c.elements_per_cycle = row["elements_per_cycle"].as_f64().or_else(|| row["params"]["lanes"].as_f64().map(|l| l * n.per_lane));
    c.nand2_eq_per_element_cycle = match (c.nand2_eq, c.elements_per_cycle) {
        (Some(a), Some(e)) if e > 0.0 => Some(a / e),
        _ => None,
    };
    c
}

/// Every scheme's cost from `ppa` (None: no file), named `ppa_name`.
pub fn costs(ppa: Option<&Value>, ppa_name: &str) -> Vec<SchemeCost> {
    super::SCHEMES
        .iter()
        .map(|&s| {
            let units: Vec<UnitCost> = needs(s).iter().map(|n| cost(n, ppa, ppa_name)).collect();
            let side = |sd: Side| -> Option<f64> {
                let us: Vec<&UnitCost> = units.iter().filter(|u| u.side == sd).collect();
                if us.is_empty() {
                    return None;
                }
                us.iter().map(|u| u.nand2_eq_per_element_cycle).sum()
            };
            let all = !units.is_empty();
            SchemeCost {
                scheme: s,
                quantize_nand2_per_element_cycle: side(Side::Quantize),
                dequantize_nand2_per_element_cycle: side(Side::Dequantize),
                memory_bits: if all { units.iter().map(|u| u.memory_bits).sum() } else { None },
                max_clock_mhz: if all { units.iter().map(|u| u.max_clock_mhz).try_fold(f64::INFINITY, |m, c| c.map(|c| m.min(c))) } else { None },
                units,
            }
        })
        .collect()
}
