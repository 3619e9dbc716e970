//! The unit registry: names, parameters, port descriptions and builders.

use crate::elaborate::{elaborate, elaborate_with, Elaborated, Memory};
use crate::GenError;
use hdl::prim::div_const::{DivConstCeil, DivMersenneCeil};
use hdl::prim::div_round::DivRound;
use hdl::prim::fp16::{Fp16Convert, FX};
use hdl::prim::mul::MulPipe;
use hdl::prim::zero_insert::ZeroInsertShifter;
use hdl::prim::zero_remove::ZeroRemoveShifter;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub struct UnitInfo {
    pub name: &'static str,
    pub module: &'static str,
    pub summary: &'static str,
    pub spec: &'static str,
}

pub const UNITS: &[UnitInfo] = &[
    UnitInfo {
        name: "oaken-quantizer",
        module: "oaken_quantizer",
        summary: "Oaken quantization engine: FP16 tokens to dense codes, COO entries, metadata",
        spec: "§2",
    },
    UnitInfo {
        name: "oaken-dequantizer",
        module: "oaken_dequantizer",
        summary: "Oaken dequantization engine: dense codes, COO list, metadata to FP16 tokens",
        spec: "§4",
    },
    UnitInfo {
        name: "oaken-mmu",
        module: "oaken_mmu",
        summary: "Oaken MMU: paged KV placement, free list, merged and cut AXI4 burst descriptors",
        spec: "§10",
    },
    UnitInfo {
        name: "titanus-pruner",
        module: "titanus_pruner",
        summary: "Titanus pruning unit: per-layer K/V magnitude thresholds, index masks, zero-remove compaction",
        spec: "§11.4",
    },
    UnitInfo {
        name: "titanus-dequantizer",
        module: "titanus_dequantizer",
        summary: "Titanus dequantization unit: scale-zero table, level lookup, INT8 rebuild, skip counters",
        spec: "§11.8",
    },
    UnitInfo {
        name: "titanus-quantizer",
        module: "titanus_quantizer",
        summary:
            "Titanus quantization unit (one K/V half): MMF, NZQ, HierQuant channel monitor, prefill buffer, scheduler",
        spec: "§11.5-§11.7",
    },
    UnitInfo {
        name: "zero-remove-shifter",
        module: "zero_remove_shifter",
        summary: "N-lane compaction network, log2(N) stages, optional pipeline",
        spec: "§3",
    },
    UnitInfo {
        name: "zero-insert-shifter",
        module: "zero_insert_shifter",
        summary: "N-lane expansion network (inverse of zero-remove), optional pipeline",
        spec: "§3.1",
    },
    UnitInfo {
        name: "mul-pipe",
        module: "mul_pipe",
        summary: "pipelined W x W multiply from 16x8 pieces",
        spec: "§5.2",
    },
    UnitInfo {
        name: "div-round",
        module: "div_round",
        summary: "rounding divider floor((2n+d)/2d), one quotient bit per stage",
        spec: "§5.3",
    },
    UnitInfo {
        name: "div-const",
        module: "div_const",
        summary: "constant ceiling divider ceil(D/K), pipelined",
        spec: "§5.4",
    },
    UnitInfo {
        name: "fp16-convert",
        module: "fp16_convert",
        summary: "FP16 <-> 2^-24 units, with the RD/RU/RNE rounder",
        spec: "§2.2, §5.6",
    },
];

pub struct Built {
    pub module: String,
    pub params: serde_json::Value,
    pub elaborated: Elaborated,
    pub latency: Option<u32>,
}

/// Parses a unit's parameters, filling defaults and rejecting unknown keys.
fn parse<T: DeserializeOwned + Serialize>(unit: &str, t: &toml::Table) -> Result<T, GenError> {
    toml::Value::Table(t.clone()).try_into::<T>().map_err(|e| GenError(format!("{unit}: {}", e.message().trim())))
}

fn json<T: Serialize>(p: &T) -> serde_json::Value {
    serde_json::to_value(p).expect("parameters serialise")
}

const PIPE_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high"),
    ("en", "pipeline advance: every stage loads only when high"),
];

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct MulParams {
    /// Operand width: 16, 32, 48 or 64.
    pub width: usize,
}

impl Default for MulParams {
    fn default() -> Self {
        MulParams { width: 32 }
    }
}

fn build_mul(t: &toml::Table) -> Result<Built, GenError> {
    let p: MulParams = parse("mul-pipe", t)?;
    let lat = hdl::prim::mul::latency(p.width);
    let p_doc = format!("product a*b, {lat} advancing cycles after the operands");
    let docs: Vec<(&str, &str)> = PIPE_DOCS
        .iter()
        .copied()
        .chain([
            ("a", "operand a, valid with in_valid"),
            ("b", "operand b, valid with in_valid"),
            ("in_valid", "operands valid"),
            ("p", p_doc.as_str()),
            ("out_valid", "product valid"),
        ])
        .collect();
    let m = "mul_pipe";
    let e = match p.width {
        16 => elaborate(MulPipe::<16, 32>::default(), m, &docs),
        32 => elaborate(MulPipe::<32, 64>::default(), m, &docs),
        48 => elaborate(MulPipe::<48, 96>::default(), m, &docs),
        64 => elaborate(MulPipe::<64, 128>::default(), m, &docs),
        w => return Err(GenError(format!("mul-pipe: width must be 16, 32, 48 or 64, got {w}"))),
    }?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct ShifterParams {
    pub lanes: usize,
    /// Element width: 1, 2, 4, 8, 16, 32 or 64.
    pub width: usize,
    /// Register after every `pipeline` stages (0: combinational).
    pub pipeline: usize,
}

impl Default for ShifterParams {
    fn default() -> Self {
        ShifterParams { lanes: 16, width: 8, pipeline: 2 }
    }
}

/// Parameters of either zero shifter, with the checks they share (spec §3).
fn shifter_params(unit: &str, t: &toml::Table) -> Result<ShifterParams, GenError> {
    let p: ShifterParams = parse(unit, t)?;
    if !p.lanes.is_power_of_two() || p.lanes > 128 {
        return Err(GenError(format!("{unit}: lanes must be a power of two in 1..=128, got {}", p.lanes)));
    }
    if p.pipeline > 7 {
        return Err(GenError(format!("{unit}: pipeline must be in 0..=7, got {}", p.pipeline)));
    }
    Ok(p)
}

fn bad_shifter_width(unit: &str, w: usize) -> GenError {
    GenError(format!("{unit}: width must be one of 1, 2, 4, 8, 16, 32, 64, got {w}"))
}

fn build_shifter(t: &toml::Table) -> Result<Built, GenError> {
    let p = shifter_params("zero-remove-shifter", t)?;
    let docs: &[(&str, &str)] = &[
        ("clock", "rising-edge clock"),
        ("reset", "synchronous reset, active high"),
        ("in_valid", "input vector valid"),
        ("in_ready", "input vector accepted when in_valid and in_ready"),
        ("in_data", "input lanes, lane i at [W*i+W-1:W*i]"),
        ("in_keep", "lane i is kept"),
        ("out_valid", "compacted vector valid"),
        ("out_ready", "compacted vector taken when out_valid and out_ready"),
        ("out_data", "kept lanes in order from lane 0; other lanes 0"),
        ("out_count", "number of kept lanes"),
    ];
    let m = "zero_remove_shifter";
    macro_rules! w {
        ($($w:literal),*) => {
            match p.width {
                $($w => elaborate(ZeroRemoveShifter::<$w>::new(p.lanes, p.pipeline), m, docs),)*
                w => return Err(bad_shifter_width("zero-remove-shifter", w)),
            }
        };
    }
    let e = w!(1, 2, 4, 8, 16, 32, 64)?;
    let lat = hdl::prim::zero_remove::ZeroRemove::<8>::latency(p.lanes, p.pipeline) as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

/// The inverse of `zero-remove-shifter` (spec §3.1): same parameters and checks.
fn build_insert_shifter(t: &toml::Table) -> Result<Built, GenError> {
    let p = shifter_params("zero-insert-shifter", t)?;
    let docs: &[(&str, &str)] = &[
        ("clock", "rising-edge clock"),
        ("reset", "synchronous reset, active high"),
        ("in_valid", "input vector valid"),
        ("in_ready", "input vector accepted when in_valid and in_ready"),
        ("in_data", "compacted elements, element j at [W*j+W-1:W*j]; lanes j >= popcount(in_mask) ignored"),
        ("in_mask", "lane i of the output receives the next element"),
        ("out_valid", "expanded vector valid"),
        ("out_ready", "expanded vector taken when out_valid and out_ready"),
        ("out_data", "element j in the lane of the j-th set mask bit; other lanes 0"),
    ];
    let m = "zero_insert_shifter";
    macro_rules! w {
        ($($w:literal),*) => {
            match p.width {
                $($w => elaborate(ZeroInsertShifter::<$w>::new(p.lanes, p.pipeline), m, docs),)*
                w => return Err(bad_shifter_width("zero-insert-shifter", w)),
            }
        };
    }
    let e = w!(1, 2, 4, 8, 16, 32, 64)?;
    let lat = hdl::prim::zero_insert::ZeroInsert::<8>::latency(p.lanes, p.pipeline) as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct DivRoundParams {
    /// Quotient bits (pipeline steps), 1..=16.
    pub quotient_bits: usize,
}

impl Default for DivRoundParams {
    fn default() -> Self {
        DivRoundParams { quotient_bits: 5 }
    }
}

/// Operand width of the stand-alone divider: the Oaken engine's (§2.7).
pub const DIV_ROUND_WIDTH: usize = 50;

fn build_div_round(t: &toml::Table) -> Result<Built, GenError> {
    let p: DivRoundParams = parse("div-round", t)?;
    if !(1..=9).contains(&p.quotient_bits) {
        return Err(GenError(format!("div-round: quotient-bits must be in 1..=9, got {}", p.quotient_bits)));
    }
    let docs: Vec<(&str, &str)> = PIPE_DOCS
        .iter()
        .copied()
        .chain([
            ("n", "dividend"),
            ("d", "divisor"),
            ("in_valid", "operands valid"),
            ("q", "floor((2n+d)/2d) saturated to 2^Q-1; 0 when d = 0"),
            ("out_valid", "quotient valid"),
        ])
        .collect();
    let e = elaborate(DivRound::<DIV_ROUND_WIDTH>::new(p.quotient_bits), "div_round", &docs)?;
    Ok(Built { module: "div_round".into(), params: json(&p), elaborated: e, latency: Some(p.quotient_bits as u32 + 1) })
}

/// How `div-const` divides (spec §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivConstMethod {
    /// Radix-2 restoring steps, `per-stage` to a register; any K.
    Restoring,
    /// K = 2^m - 1 only: residues of digit sums, three stages.
    Mersenne,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct DivConstParams {
    /// The constant divisor K, 1..=32767.
    pub divisor: u64,
    pub method: DivConstMethod,
    /// Division steps per pipeline stage (restoring only; 6 if not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_stage: Option<usize>,
}

impl Default for DivConstParams {
    fn default() -> Self {
        DivConstParams { divisor: 15, method: DivConstMethod::Restoring, per_stage: None }
    }
}

fn build_div_const(t: &toml::Table) -> Result<Built, GenError> {
    let p: DivConstParams = parse("div-const", t)?;
    if !(1..1 << 15).contains(&p.divisor) {
        return Err(GenError(format!("div-const: divisor must be in 1..=32767, got {}", p.divisor)));
    }
    let docs: Vec<(&str, &str)> = PIPE_DOCS
        .iter()
        .copied()
        .chain([
            ("d", "dividend (42 bits)"),
            ("in_valid", "dividend valid"),
            ("c", "ceil(d / K)"),
            ("out_valid", "result valid"),
        ])
        .collect();
    let (e, lat) = match (p.method, p.per_stage) {
        (DivConstMethod::Restoring, s) => {
            let s = s.unwrap_or(6);
            if !(1..=FX).contains(&s) {
                return Err(GenError(format!("div-const: per-stage must be in 1..={FX}, got {s}")));
            }
            (elaborate(DivConstCeil::<FX>::new(p.divisor, s), "div_const", &docs)?, DivConstCeil::<FX>::latency(s))
        }
        (DivConstMethod::Mersenne, Some(_)) => {
            return Err(GenError("div-const: per-stage applies only to method = \"restoring\"".into()));
        }
        (DivConstMethod::Mersenne, None) => {
            if DivMersenneCeil::<FX>::exponent(p.divisor).is_none() {
                return Err(GenError(format!(
                    "div-const: method = \"mersenne\" needs divisor = 2^m - 1 with m in 2..=15, got {}",
                    p.divisor
                )));
            }
            (elaborate(DivMersenneCeil::<FX>::new(p.divisor), "div_const", &docs)?, DivMersenneCeil::<FX>::latency())
        }
    };
    let lat = lat as u32;
    Ok(Built { module: "div_const".into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NoParams {}

fn build_fp16(t: &toml::Table) -> Result<Built, GenError> {
    let p: NoParams = parse("fp16-convert", t)?;
    let docs: Vec<(&str, &str)> = PIPE_DOCS
        .iter()
        .copied()
        .chain([
            ("x", "FP16 pattern (finite)"),
            ("u", "units(x), 42-bit two's complement; three advancing cycles later"),
            ("v", "value in units, 42-bit two's complement"),
            ("mode", "0 RD, 1 RU, 2 RNE"),
            ("y", "FP16 of v rounded by mode, saturating; three advancing cycles later"),
        ])
        .collect();
    let e = elaborate(Fp16Convert::default(), "fp16_convert", &docs)?;
    Ok(Built {
        module: "fp16_convert".into(),
        params: json(&p),
        elaborated: e,
        latency: Some(Fp16Convert::LATENCY as u32),
    })
}

const QUANTIZER_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high"),
    ("tw_valid", "threshold-table write strobe, always accepted"),
    ("tw_layer", "layer of the written set"),
    ("tw_kv", "0 = K, 1 = V"),
    ("tw_data", "{hi_outer, hi_inner, lo_inner, lo_outer}, FP16 each"),
    ("tw_done", "one cycle after each write strobe"),
    ("tw_err", "with tw_done: 0 written, 1 non-finite, 2 out of order, 3 layer out of range"),
    ("in_valid", "input beat valid"),
    ("in_ready", "input beat accepted when in_valid and in_ready"),
    ("in_data", "FP16 elements of the beat, lane i at [16i+15:16i]"),
    ("in_layer", "token's layer, sampled with its first beat"),
    ("in_kv", "token's K/V, sampled with its first beat"),
    ("out_valid", "output beat valid"),
    ("out_ready", "output beat taken when out_valid and out_ready"),
    ("out_dense", "dense slots of the beat's elements, lane i at [IB*i+IB-1:IB*i]"),
    ("out_coo", "the beat's COO entries {idx, grp, hi}, compacted from lane 0"),
    ("out_coo_count", "COO entries in this beat"),
    ("out_first", "first beat of a token"),
    ("out_last", "last beat of a token"),
    ("out_meta", "token metadata word (spec §2.9: six FP16 fields), constant over the token"),
    ("out_counts", "every head's segment counts, head-major, count i at [8i+7:8i], constant over the token"),
    ("out_status", "bit 0 non-finite input seen, bit 1 layer out of range"),
];

fn build_quantizer(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::quantizer::{Geometry, OakenQuantizer};
    let p: sim::oaken::params::OakenParams = parse("oaken-quantizer", t)?;
    p.validate().map_err(|e| GenError(format!("oaken-quantizer: {e}")))?;
    let m = "oaken_quantizer";
    let d = QUANTIZER_DOCS;
    // the second parameter packs 3 divisors (16 bits) per quotient step
    let e = match p.inlier_bits {
        2 => elaborate(OakenQuantizer::<2>::new(&p, m), m, d),
        3 => elaborate(OakenQuantizer::<3>::new(&p, m), m, d),
        4 => elaborate(OakenQuantizer::<4>::new(&p, m), m, d),
        5 => elaborate(OakenQuantizer::<5>::new(&p, m), m, d),
        6 => elaborate(OakenQuantizer::<6>::new(&p, m), m, d),
        7 => elaborate(OakenQuantizer::<7>::new(&p, m), m, d),
        8 => elaborate(OakenQuantizer::<8>::new(&p, m), m, d),
        _ => unreachable!("validated"),
    }?;
    let g = Geometry::new(&p);
    let mut e = e;
    e.memories = g
        .memories(m)
        .into_iter()
        .map(|i| Memory { bits: i.bits(), name: i.name, module: i.module, depth: i.depth, width: i.width })
        .collect();
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(g.latency as u32) })
}

const DEQUANTIZER_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high"),
    ("tw_valid", "threshold-table write strobe, always accepted"),
    ("tw_layer", "layer of the written set"),
    ("tw_kv", "0 = K, 1 = V"),
    ("tw_data", "{hi_outer, hi_inner, lo_inner, lo_outer}, FP16 each"),
    ("tw_done", "one cycle after each write strobe"),
    ("tw_err", "with tw_done: 0 written, 1 non-finite, 2 out of order, 3 layer out of range"),
    ("d_valid", "dense beat valid"),
    ("d_ready", "dense beat accepted when d_valid and d_ready"),
    ("d_dense", "dense slots of the beat's elements, lane i at [IB*i+IB-1:IB*i]"),
    ("d_meta", "token metadata word (spec §2.9: six FP16 fields, byte i at [8i+7:8i]), sampled with the record's first dense beat"),
    ("d_counts", "the head's segment counts, segment s at [8s+7:8s], sampled with the record's first dense beat; their sum is the record's list length"),
    ("d_layer", "token's layer, sampled with the record's first dense beat"),
    ("d_kv", "token's K/V, sampled with the record's first dense beat"),
    ("s_valid", "sparse beat valid"),
    ("s_ready", "sparse beat accepted when s_valid and s_ready"),
    ("s_coo", "COO entries of the continuous sparse stream in order, entry j at [8j+7:8j]"),
    ("s_count", "entries in this sparse beat, 0..lanes, any split across records (above lanes: its entries are flagged malformed, counts as lanes)"),
    ("out_valid", "output beat valid"),
    ("out_ready", "output beat taken when out_valid and out_ready"),
    ("out_data", "FP16 elements of the beat, lane i at [16i+15:16i]"),
    ("out_first", "first beat of a record"),
    ("out_last", "last beat of a record"),
    ("out_err", "on the last beat: the record's list was malformed (spec §4.3)"),
    ("out_layer_oob", "token's layer out of range (layer 0 used), constant over the record"),
];

fn build_dequantizer(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::dequantizer::{DeqGeometry, OakenDequantizer};
    let p: sim::oaken::params::OakenParams = parse("oaken-dequantizer", t)?;
    p.validate().map_err(|e| GenError(format!("oaken-dequantizer: {e}")))?;
    let m = "oaken_dequantizer";
    let d = DEQUANTIZER_DOCS;
    let e = match p.inlier_bits {
        2 => elaborate(OakenDequantizer::<2, 45>::new(&p), m, d),
        3 => elaborate(OakenDequantizer::<3, 46>::new(&p), m, d),
        4 => elaborate(OakenDequantizer::<4, 47>::new(&p), m, d),
        5 => elaborate(OakenDequantizer::<5, 48>::new(&p), m, d),
        6 => elaborate(OakenDequantizer::<6, 49>::new(&p), m, d),
        7 => elaborate(OakenDequantizer::<7, 50>::new(&p), m, d),
        8 => elaborate(OakenDequantizer::<8, 51>::new(&p), m, d),
        _ => unreachable!("validated"),
    }?;
    let lat = DeqGeometry::new(&p).latency as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

const MMU_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high: every slot empty, the free list 0 .. phys_pages - 1"),
    ("cmd_valid", "command valid"),
    ("cmd_ready", "command taken when cmd_valid and cmd_ready; low from a command until its status beat is out"),
    ("cmd_op", "0 write, 1 read, 2 free (3: BadCommand)"),
    ("cmd_seq", "sequence id"),
    ("cmd_layer", "layer (write, read)"),
    ("cmd_head", "head (read)"),
    ("cmd_counts", "write: segment counts, counts[h*segments+s] at [8i+7:8i]"),
    ("rsp_valid", "response beat valid"),
    ("rsp_ready", "response beat taken when rsp_valid and rsp_ready"),
    ("rsp_kind", "0 descriptor, 1 segment counts of one token (read), 2 status (the command's last beat)"),
    ("rsp_stream", "descriptor: stream index (0 metadata, 1+2h dense h, 2+2h sparse h)"),
    ("rsp_addr", "descriptor: physical byte address"),
    ("rsp_len", "descriptor: length in bytes, 1..4096"),
    ("rsp_token", "counts: token index; status: write token index, read token count"),
    ("rsp_counts", "counts: the token's segment counts of the read head, segment s at [8s+7:8s]"),
    ("rsp_status", "status: 0 ok, 1 BadCommand, 2 NoSlot, 3 SeqTooLong, 4 OutOfPages, 5 UnknownSeq, 6 DoubleFree"),
    ("rsp_slot", "status (ok): the sequence's slot"),
    ("rsp_opened", "status (ok write): the write opened the sequence"),
    ("rsp_pages", "status (ok): pages taken (write) or returned (free)"),
    ("rsp_last", "the status beat, last of the command's response"),
];

fn build_mmu(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::mmu::{MmuGeometry, OakenMmu};
    let p: sim::oaken::mmu::MmuParams = parse("oaken-mmu", t)?;
    p.check().map_err(|e| GenError(format!("oaken-mmu: {e}")))?;
    let m = "oaken_mmu";
    let memories = MmuGeometry::new(&p)
        .memories(m)
        .into_iter()
        .map(|i| Memory { bits: i.bits(), name: i.name, module: i.module, depth: i.depth, width: i.width })
        .collect();
    let mut e = elaborate_with(OakenMmu::new(&p, m), m, MMU_DOCS, &[("rsp_addr", p.addr_bits as usize)])?;
    e.memories = memories;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: None })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PrunerParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    /// Register after every `pipeline` shifter stages (1..=7, spec §3).
    pub pipeline: usize,
}

impl Default for PrunerParams {
    fn default() -> Self {
        let d = sim::titanus::params::TitanusParams::default();
        PrunerParams { channels: d.channels, lanes: d.lanes, layers: d.layers, pipeline: 2 }
    }
}

const PRUNER_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high: every threshold 0, pipeline empty"),
    ("tw_valid", "configuration-table write strobe, always accepted"),
    ("tw_layer", "layer of the written entry"),
    ("tw_kv", "0 = K, 1 = V"),
    ("tw_threshold", "pruning threshold (magnitudes below it are pruned)"),
    ("tw_bits", "bit width, checked (2, 3 or 4) but kept by the QU and DQU only"),
    ("tw_done", "one cycle after each write strobe"),
    ("tw_error", "with tw_done: 0 written, 1 layer out of range, 2 bad bit width"),
    ("in_valid", "input beat valid"),
    ("in_ready", "input beat accepted when in_valid and in_ready (a register)"),
    ("in_layer", "layer of the beat's token; thresholds as written before the accepting edge"),
    ("in_k", "K elements of the beat (INT8), lane i at [8i+7:8i]"),
    ("in_v", "V elements of the beat (INT8), lane i at [8i+7:8i]"),
    ("in_last", "last beat of a token"),
    ("out_valid", "output beat valid"),
    ("out_ready", "output beat taken when out_valid and out_ready"),
    ("out_k_mask", "K index bits of the beat (1 = kept)"),
    ("out_v_mask", "V index bits of the beat (1 = kept)"),
    ("out_k_data", "kept K elements compacted from lane 0, other lanes 0"),
    ("out_v_data", "kept V elements compacted from lane 0, other lanes 0"),
    ("out_k_count", "kept K lanes in the beat"),
    ("out_v_count", "kept V lanes in the beat"),
    ("out_last", "last beat of a token"),
    ("out_layer_oob", "the beat's layer was >= layers (layer 0's thresholds used)"),
];

fn build_pruner(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::pruner::TitanusPruner;
    let p: PrunerParams = parse("titanus-pruner", t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        layers: p.layers,
        ..Default::default()
    };
    tp.validate().map_err(|e| GenError(format!("titanus-pruner: {e}")))?;
    if !(1..=7).contains(&p.pipeline) {
        return Err(GenError(format!("titanus-pruner: pipeline must be in 1..=7, got {}", p.pipeline)));
    }
    let m = "titanus_pruner";
    let cw = p.lanes.trailing_zeros() as usize + 1;
    let e = elaborate_with(
        TitanusPruner::new(p.lanes, p.layers, p.pipeline),
        m,
        PRUNER_DOCS,
        &[("out_k_count", cw), ("out_v_count", cw)],
    )?;
    let lat = TitanusPruner::latency(p.lanes, p.pipeline) as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct TitanusDeqParams {
    pub channels: usize,
    pub lanes: usize,
    pub max_levels: usize,
}

impl Default for TitanusDeqParams {
    fn default() -> Self {
        let d = sim::titanus::params::TitanusParams::default();
        TitanusDeqParams { channels: d.channels, lanes: d.lanes, max_levels: d.max_levels }
    }
}

const TITANUS_DEQ_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high: every table slot empty, counters 0, pipeline empty"),
    ("sz_valid", "scale-zero load valid"),
    ("sz_ready", "load accepted when sz_valid and sz_ready (low for 3 cycles after each load, longer while record beats accepted before it wait for the output)"),
    ("sz_word", "entry word (spec §11.7.2): channel [61:52], level [51:48], start [47:32], zero [24:16], scale [15:0]"),
    ("sz_clear", "with sz_valid: empty every slot instead (sz_word ignored)"),
    ("sz_done", "one cycle after each accepted load"),
    ("sz_error", "with sz_done: 0 written, 1 channel out of range, 2 level out of range"),
    ("in_valid", "record beat valid"),
    ("in_ready", "record beat accepted when in_valid and in_ready (a register; low while a load completes)"),
    ("in_pos", "token position; levels as loaded at edges before the accepting one"),
    ("in_index", "index bits of the beat's channels (1 = kept)"),
    ("in_label", "label bits of the beat's channels (1 = non-zero code; ignored where the index is 0)"),
    ("in_codes", "the beat's non-zero codes compacted from lane 0, 4 bits each (b bits used)"),
    ("in_last", "last beat of the token (the next beat is channel 0's)"),
    ("out_valid", "output beat valid"),
    ("out_ready", "output beat taken when out_valid and out_ready"),
    ("out_data", "rebuilt INT8 values, lane i at [8i+7:8i]"),
    ("out_last", "last beat of a token"),
    ("st_pruned", "elements with index 0, since reset (wrapping)"),
    ("st_label_zero", "kept elements with code 0: the level's stored rec(0), no multiply"),
    ("st_zero_point", "codes equal to the zero point: 0, no multiply"),
    ("st_multiplies", "codes that went through the subtract and multiply"),
    ("st_missing_level", "kept elements whose channel had no level at the position: 0"),
];

fn build_titanus_deq(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::dequantizer::TitanusDequantizer;
    let p: TitanusDeqParams = parse("titanus-dequantizer", t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        max_levels: p.max_levels,
        ..Default::default()
    };
    tp.validate().map_err(|e| GenError(format!("titanus-dequantizer: {e}")))?;
    let m = "titanus_dequantizer";
    let mut e = elaborate(TitanusDequantizer::new(p.channels, p.lanes, p.max_levels, m), m, TITANUS_DEQ_DOCS)?;
    e.memories = hdl::titanus::dequantizer::memories(m, p.channels, p.lanes, p.max_levels)
        .into_iter()
        .map(|i| Memory { bits: i.bits(), name: i.name, module: i.module, depth: i.depth, width: i.width })
        .collect();
    let lat = TitanusDequantizer::LATENCY as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct TitanusQuantParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub max_levels: usize,
    pub max_prefill: usize,
}

impl Default for TitanusQuantParams {
    fn default() -> Self {
        let d = sim::titanus::params::TitanusParams::default();
        TitanusQuantParams {
            channels: d.channels,
            lanes: d.lanes,
            layers: d.layers,
            max_levels: d.max_levels,
            max_prefill: d.max_prefill,
        }
    }
}

const TITANUS_QUANT_DOCS: &[(&str, &str)] = &[
    ("clock", "rising-edge clock"),
    ("reset", "synchronous reset, active high: IDLE, every bit width 4, counters 0, pipeline empty"),
    ("tw_valid", "configuration-table write strobe, always accepted"),
    ("tw_layer", "layer of the written entry"),
    ("tw_kv", "0 = K, 1 = V"),
    ("tw_threshold", "pruning threshold: the pruner's, ignored here"),
    ("tw_bits", "bit width of the entry: 2, 3 or 4"),
    ("tw_done", "one cycle after each write strobe"),
    ("tw_error", "with tw_done: 0 written, 1 layer out of range, 2 bad bit width"),
    ("in_valid", "input transaction valid (a command, or a token beat)"),
    ("in_ready", "taken when in_valid and in_ready (a register)"),
    ("in_cmd", "0 start, 1 prefill token, 2 flush, 3 decode token; read at commands and first beats"),
    ("in_layer", "start: layer of the sequence (its bit width; >= layers reads layer 0)"),
    ("in_kv", "start: 0 = K, 1 = V"),
    ("in_mask", "token beat: index bits of the beat's channels (1 = kept)"),
    ("in_data", "token beat: kept INT8 values compacted from lane 0, lane i at [8i+7:8i]"),
    ("rec_valid", "record beat valid"),
    ("rec_ready", "record beat taken when rec_valid and rec_ready"),
    ("rec_pos", "position of the beat's token in its sequence"),
    ("rec_index", "index bits of the beat"),
    ("rec_label", "label bits of the beat (kept and code != 0)"),
    ("rec_codes", "the beat's non-zero codes compacted from lane 0, lane i at [4i+3:4i], other lanes 0"),
    ("rec_count", "non-zero codes in the beat"),
    ("rec_last", "last beat of a token"),
    ("rec_saturated", "elements of the beat clamped at the level limit"),
    ("sz_valid", "created scale-zero entry valid"),
    ("sz_ready", "entry taken when sz_valid and sz_ready"),
    ("sz_word", "entry (spec §11.7.2): channel [61:52], level [51:48], start [47:32], zero [24:16], scale [15:0]"),
    ("rsp_valid", "one pulse per command and per token, in input order (no ready)"),
    ("rsp_err", "with rsp_valid: 0 ok, 1 no start, 2 prefill after decode, 3 prefill full, 4 sequence full"),
    ("st_levels_opened", "levels opened since reset (wrapping)"),
    ("st_saturated", "elements clamped at the level limit since reset, counted as their beats leave (wrapping)"),
    ("st_rejected", "rejected commands and tokens since reset (wrapping)"),
    ("st_limit_hit", "sticky: an element was clamped"),
    ("st_layer_oob", "sticky: a start named a layer >= layers"),
    ("st_no_prefill", "the last prefill had no token"),
    ("st_empty_channels", "channels with no kept element in the last prefill"),
    ("st_single_value_channels", "channels whose last prefill range was one value"),
];

fn build_titanus_quant(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::quantizer::{QuGeometry, TitanusQuantizer};
    let p: TitanusQuantParams = parse("titanus-quantizer", t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        layers: p.layers,
        max_levels: p.max_levels,
        max_prefill: p.max_prefill,
    };
    tp.validate().map_err(|e| GenError(format!("titanus-quantizer: {e}")))?;
    let g = QuGeometry {
        channels: p.channels,
        lanes: p.lanes,
        layers: p.layers,
        max_levels: p.max_levels,
        max_prefill: p.max_prefill,
    };
    let m = "titanus_quantizer";
    let memories = g
        .memories(m)
        .into_iter()
        .map(|i| Memory { bits: i.bits(), name: i.name, module: i.module, depth: i.depth, width: i.width })
        .collect();
    let mut e = elaborate(TitanusQuantizer::new(&g, m), m, TITANUS_QUANT_DOCS)?;
    e.memories = memories;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(g.latency() as u32) })
}

pub fn build(unit: &str, params: &toml::Table) -> Result<Built, GenError> {
    match unit {
        "titanus-dequantizer" => build_titanus_deq(params),
        "titanus-pruner" => build_pruner(params),
        "titanus-quantizer" => build_titanus_quant(params),
        "oaken-mmu" => build_mmu(params),
        "oaken-quantizer" => build_quantizer(params),
        "oaken-dequantizer" => build_dequantizer(params),
        "zero-remove-shifter" => build_shifter(params),
        "zero-insert-shifter" => build_insert_shifter(params),
        "mul-pipe" => build_mul(params),
        "div-round" => build_div_round(params),
        "div-const" => build_div_const(params),
        "fp16-convert" => build_fp16(params),
        _ => Err(GenError(format!(
            "unknown unit '{unit}'; known units: {}",
            UNITS.iter().map(|u| u.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}
