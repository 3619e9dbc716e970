//! The unit registry: names, parameter tables and builders. Port
//! descriptions are the `///` comments on the hdl blocks' port fields.

use crate::elaborate::{elaborate, elaborate_with, Elaborated, Memory};
use sim::param_def::{check, def, Allowed, Allowed::*, ParamDef, Value::*};
use crate::GenError;
use hdl::prim::div_const::{DivConstCeil, DivMersenneCeil};
use hdl::prim::div_round::DivRound;
use hdl::prim::fold_zero::{FoldZero, FOLD_ZERO_WIDTH};
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
        name: "kivi-dequantizer",
        module: "kivi_dequantizer",
        summary: "KIVI dequantizer: a group's packed codes and (step, min) word to FP16, lanes per cycle",
        spec: "§13.6, §13.14",
    },
    UnitInfo {
        name: "kivi-quantizer",
        module: "kivi_quantizer",
        summary: "KIVI quantizer, axis token (V): FP16 token vectors to per-group packed codes and (step, min) words",
        spec: "§13.2-§13.5, §13.14",
    },
    UnitInfo {
        name: "packkv-quantizer",
        module: "packkv_quantizer",
        summary: "PackKV token quantizer: FP16 layer vectors to r-bit codes on one step per token, (step, z) word",
        spec: "§14.2, §14.3, §14.14.1",
    },
    UnitInfo {
        name: "packkv-encoder",
        module: "packkv_encoder",
        summary: "PackKV block encoder: K and V code blocks to the bit-packed stream (header, token words, pack fields, payload) through the zero-remove shifter",
        spec: "§14.4, §14.6, §14.14.3",
    },
    UnitInfo {
        name: "packkv-decoder",
        module: "packkv_decoder",
        summary: "PackKV block decoder: bitstream words to FP16 via the zero-insert shifter, lanes per cycle, malformed blocks flagged and skipped",
        spec: "§14.4, §14.6, §14.7, §14.14.2",
    },
    UnitInfo {
        name: "hack-qk-dot",
        module: "hack_qk_dot",
        summary: "HACK Q.K^T on codes: a held quantized Q, one quantized K partition per cycle, Eq. 4 exact, one binary32 score per token",
        spec: "§15.6, §15.8, §15.16.1",
    },
    UnitInfo {
        name: "hack-deq-dot",
        module: "hack_deq_dot",
        summary: "HACK's dequantize-first baseline of hack-qk-dot: FP16 Q, K dequantized to FP16, binary32 adder tree, same throughput",
        spec: "§15.10, §15.16.2",
    },
    UnitInfo {
        name: "hack-pv-dot",
        module: "hack_pv_dot",
        summary: "HACK P.V on codes: per closed block a P partition and head_dim V partitions (Eq. 4 exact), the FP16 open partition exact, one binary32 per channel",
        spec: "§15.6, §15.9, §15.16.5",
    },
    UnitInfo {
        name: "hack-quantizer",
        module: "hack_quantizer",
        summary: "HACK quantizer, axis token (K, Q, P) or channel (V): FP16 vectors or blocks to partitions of packed codes, (step, min) words and code sums; nearest or stochastic (LFSR) rounding",
        spec: "§15.2-§15.5, §15.7, §15.16.4",
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
    UnitInfo {
        name: "fold-zero",
        module: "fold_zero",
        summary: "first index of a folded group's grid at or above zero, ceil(|min|/step) clamped to 2^M",
        spec: "§5.8",
    },
];

pub struct Built {
    pub module: String,
    pub params: serde_json::Value,
    pub elaborated: Elaborated,
    pub latency: Option<u32>,
}

/// A unit's parameters and the rules between them that code checks.
pub struct ParamTable {
    pub defs: Vec<ParamDef>,
    pub rules: Vec<&'static str>,
}

const MUL_PARAMS: &[ParamDef] = &[ParamDef {
    name: "width",
    default: Int(32),
    allowed: Ints(&[16, 32, 48, 64]),
    doc: "operand width in bits; the product is twice as wide",
}];

const SHIFTER_PARAMS: &[ParamDef] = &[
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, 128), doc: "lanes of the vector" },
    ParamDef { name: "width", default: Int(8), allowed: Ints(&[1, 2, 4, 8, 16, 32, 64]), doc: "bits per lane" },
    ParamDef {
        name: "pipeline",
        default: Int(2),
        allowed: Range(0, 7),
        doc: "a register after every `pipeline` network stages (0: combinational)",
    },
];

const DIV_ROUND_PARAMS: &[ParamDef] = &[ParamDef {
    name: "quotient-bits",
    default: Int(5),
    allowed: Range(1, 9),
    doc: "quotient bits, one pipeline step each",
}];

const FOLD_ZERO_PARAMS: &[ParamDef] = &[ParamDef {
    name: "code-bits",
    default: Int(5),
    allowed: Range(2, 9),
    doc: "bits of the folded group's code, M: z is at most 2^M",
}];

const DIV_CONST_PARAMS: &[ParamDef] = &[
    ParamDef { name: "divisor", default: Int(15), allowed: Range(1, (1 << 15) - 1), doc: "the constant divisor K" },
    ParamDef {
        name: "method",
        default: Name("restoring"),
        allowed: Names(&["restoring", "mersenne"]),
        doc: "restoring: radix-2 steps, any K; mersenne: K = 2^m - 1 only, three stages",
    },
    ParamDef {
        name: "per-stage",
        default: Unset,
        allowed: Range(1, FX as u64),
        doc: "division steps per pipeline stage (restoring only; 6 when unset)",
    },
];
const DIV_CONST_RULES: &[&str] =
    &["per-stage only with method restoring", "method mersenne needs divisor = 2^m - 1 with m in 2..=15"];

const PRUNER_PIPELINE: ParamDef = ParamDef {
    name: "pipeline",
    default: Int(2),
    allowed: Range(1, 7),
    doc: "a register after every `pipeline` zero-remove stages",
};

/// The Titanus parameters `names`, from the shared table.
fn titanus_defs(names: &[&str]) -> Vec<ParamDef> {
    names.iter().map(|n| *def(sim::titanus::params::TITANUS_PARAMS, n)).collect()
}

/// The KIVI parameters `names`, from the shared table (spec §13.1).
fn kivi_defs(names: &[&str]) -> Vec<ParamDef> {
    names.iter().map(|n| *def(sim::kivi::params::KIVI_PARAMS, n)).collect()
}

const KIVI_DEQ_RULES: &[&str] = &[
    "axis token: group divides head-dim",
    "lanes divides group (a beat never spans two groups)",
    "axis only labels the outputs (K: tokens of a channel; V: channels of a token)",
];

/// With axis token a group of at least 16 channels divides head-dim.
const KIVI_QUANT_HEAD_DIM: ParamDef = ParamDef {
    name: "head-dim",
    default: Int(128),
    allowed: Range(16, sim::kivi::params::MAX_HEAD_DIM as u64),
    doc: "elements per attention head (axis token: a multiple of group)",
};

/// The quantizer's axis (spec §13.3).
const KIVI_QUANT_AXIS: ParamDef = ParamDef {
    name: "axis",
    default: Name("token"),
    allowed: Names(&["token", "channel"]),
    doc: "token: per-token groups of channels (V); channel: per-channel groups of tokens, two passes over a block (K)",
};

const KIVI_QUANT_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "axis token: group divides head-dim, lanes divides group",
    "axis channel: lanes divides head-dim",
];

/// The PackKV parameters `names`, from the shared table (spec §14.1).
fn packkv_defs(names: &[&str]) -> Vec<ParamDef> {
    names.iter().map(|n| *def(sim::packkv::params::PACKKV_PARAMS, n)).collect()
}

const PACKKV_QUANT_RULES: &[&str] = &["heads x head-dim <= 8192", "lanes divides head-dim"];

/// The encoder's two `levels` (spec §14.6: K and V differ in `N` only).
const PACKKV_K_LEVELS: ParamDef = ParamDef {
    name: "k-levels",
    default: Int(10),
    allowed: Range(2, 255),
    doc: "N of the K codes (r_K = ceil(log2(N + 1)) bits)",
};
const PACKKV_V_LEVELS: ParamDef = ParamDef {
    name: "v-levels",
    default: Int(5),
    allowed: Range(2, 255),
    doc: "N of the V codes",
};

/// What the encoder's RTL takes of §14.1's table: 64 lanes never fit the
/// shifter (lanes (r + wb) <= 128), and the GPU order is not generated
/// (spec §14.4 says why).
const PACKKV_ENC_LANES: ParamDef = ParamDef {
    name: "lanes",
    default: Int(16),
    allowed: Pow2(1, 32),
    doc: "codes per cycle (lanes x (r + wb) <= 128 for K and V)",
};
const PACKKV_ENC_REPACK: ParamDef = ParamDef {
    name: "repack",
    default: Name("none"),
    allowed: Names(&["none", "median"]),
    doc: "row order: arrival, or V median descending with ties in arrival order (spec §14.5)",
};
const PACKKV_ENC_INTERLEAVE: ParamDef = ParamDef {
    name: "interleave",
    default: Name("none"),
    allowed: Names(&["none"]),
    doc: "payload order: channel order (the GPU order is not generated, spec §14.4; sim has it)",
};

const PACKKV_ENC_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "lanes divides head-dim",
    "pack divides block",
    "lanes x (r + wb) <= 128 for K and V (one fields beat through the shifter)",
    "interleave none (gpu is not generated: spec §14.4)",
];
const PACKKV_DEC_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "lanes divides head-dim",
    "pack divides block",
    "lanes x r <= 128 (the zero-insert shifter)",
    "burst 2: 2 x lanes x r <= 128, 2 x lanes divides heads x head-dim, and some input width keeps the lanes busy (spec §14.14.2)",
];
/// The decoder's core runs at `burst` times `lanes` behind an output queue
/// (spec §14.14.2).
const PACKKV_DEC_BURST: ParamDef = ParamDef {
    name: "burst",
    default: Int(2),
    allowed: Range(1, 2),
    doc: "1: the core at lanes (below lanes per cycle over whole blocks); 2: a core of 2 x lanes and an output queue (lanes per cycle)",
};
/// The HACK parameters `names`, from the shared table (spec §15.1).
fn hack_defs(names: &[&str]) -> Vec<ParamDef> {
    names.iter().map(|n| *def(sim::hack::params::HACK_PARAMS, n)).collect()
}

const HACK_DOT_RULES: &[&str] = &[
    "partition is a multiple of 16",
    "partition <= head-dim and partition divides head-dim (a K partition is partition channels of one token)",
];

/// The quantizer's axis (spec §15.7): token (K, Q, P, §15.16.4) or
/// channel (V, §15.16.6).
const HACK_QUANT_AXIS: ParamDef = ParamDef {
    name: "axis",
    default: Name("token"),
    allowed: Names(&["token", "channel"]),
    doc: "token: partitions of consecutive elements of one vector (K, Q, P); channel: a block of partition tokens streamed twice, one partition per channel (V)",
};

/// Which code width a `hack-quantizer` instance uses (spec §15.7).
const HACK_QUANT_OPERAND: ParamDef = ParamDef {
    name: "operand",
    default: Name("kv"),
    allowed: Names(&["kv", "qp"]),
    doc: "kv: kv-bits codes (K; V on the channel axis); qp: qp-bits codes (Q, P)",
};

const HACK_QUANT_RULES: &[&str] = &[
    "partition is a multiple of 16",
    "partition <= head-dim and partition divides head-dim",
    "lanes divides partition",
    "axis channel (V, two passes): partition <= 128 and lanes <= 32 (KIVI's channel engine, the sums beside the words)",
];

const HACK_PV_RULES: &[&str] = &[
    "partition is a multiple of 16",
    "partition <= head-dim and partition divides head-dim (as the dot units)",
    "lanes divides partition",
];

/// The parameter table of `unit` (what `rtl-gen params` prints).
pub fn param_table(unit: &str) -> Result<ParamTable, GenError> {
    use sim::oaken::{mmu, params as oaken};
    use sim::titanus::params as titanus;
    let (defs, rules): (Vec<ParamDef>, &[&str]) = match unit {
        "oaken-quantizer" | "oaken-dequantizer" => (oaken::OAKEN_PARAMS.to_vec(), oaken::OAKEN_RULES),
        "oaken-mmu" => (mmu::MMU_PARAMS.to_vec(), mmu::MMU_RULES),
        "titanus-pruner" => {
            let mut d = titanus_defs(&["channels", "lanes", "layers"]);
            d.push(PRUNER_PIPELINE);
            (d, titanus::TITANUS_RULES)
        }
        "titanus-dequantizer" => (titanus_defs(&["channels", "lanes", "max-levels"]), titanus::TITANUS_RULES),
        "titanus-quantizer" => (titanus::TITANUS_PARAMS.to_vec(), titanus::TITANUS_RULES),
        "kivi-dequantizer" => (kivi_defs(&["head-dim", "group", "bits", "lanes", "axis"]), KIVI_DEQ_RULES),
        "kivi-quantizer" => {
            let mut d = vec![KIVI_QUANT_HEAD_DIM];
            d.extend(kivi_defs(&["heads", "group", "bits", "lanes"]));
            d.push(KIVI_QUANT_AXIS);
            (d, KIVI_QUANT_RULES)
        }
        "packkv-quantizer" => (packkv_defs(&["head-dim", "heads", "levels", "lanes"]), PACKKV_QUANT_RULES),
        "packkv-encoder" => {
            let mut d = packkv_defs(&["head-dim", "heads"]);
            d.extend([PACKKV_K_LEVELS, PACKKV_V_LEVELS]);
            d.extend(packkv_defs(&["block", "pack"]));
            d.extend([PACKKV_ENC_REPACK, PACKKV_ENC_INTERLEAVE, PACKKV_ENC_LANES]);
            (d, PACKKV_ENC_RULES)
        }
        "packkv-decoder" => {
            let mut d = packkv_defs(&["head-dim", "heads", "levels", "block", "pack", "lanes"]);
            d.push(PACKKV_DEC_BURST);
            (d, PACKKV_DEC_RULES)
        }
        "hack-qk-dot" => (hack_defs(&["head-dim", "partition", "kv-bits", "qp-bits"]), HACK_DOT_RULES),
        "hack-deq-dot" => (hack_defs(&["head-dim", "partition", "kv-bits"]), HACK_DOT_RULES),
        "hack-pv-dot" => (hack_defs(&["head-dim", "partition", "kv-bits", "qp-bits", "lanes"]), HACK_PV_RULES),
        "hack-quantizer" => {
            let mut d = hack_defs(&["head-dim", "partition", "kv-bits", "qp-bits", "lanes"]);
            d.push(HACK_QUANT_AXIS);
            d.extend(hack_defs(&["rounding", "seed"]));
            d.push(HACK_QUANT_OPERAND);
            (d, HACK_QUANT_RULES)
        }
        "zero-remove-shifter" | "zero-insert-shifter" => (SHIFTER_PARAMS.to_vec(), &[]),
        "mul-pipe" => (MUL_PARAMS.to_vec(), &[]),
        "div-round" => (DIV_ROUND_PARAMS.to_vec(), &[]),
        "fold-zero" => (FOLD_ZERO_PARAMS.to_vec(), &[]),
        "div-const" => (DIV_CONST_PARAMS.to_vec(), DIV_CONST_RULES),
        "fp16-convert" => (Vec::new(), &[]),
        _ => return Err(unknown_unit(unit)),
    };
    Ok(ParamTable { defs, rules: rules.to_vec() })
}

fn unknown_unit(unit: &str) -> GenError {
    GenError(format!(
        "unknown unit '{unit}'; known units: {}",
        UNITS.iter().map(|u| u.name).collect::<Vec<_>>().join(", ")
    ))
}

/// Parses a unit's parameters, filling defaults and rejecting unknown keys.
/// Named choices are checked against the unit's table first, so that their
/// error names the parameter as a range error does.
fn parse<T: DeserializeOwned + Serialize>(unit: &str, t: &toml::Table) -> Result<T, GenError> {
    for d in param_table(unit)?.defs {
        if let (Allowed::Names(_), Some(v)) = (d.allowed, t.get(d.name)) {
            let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
            d.check_name(&text).map_err(|e| GenError(format!("{unit}: {e}")))?;
        }
    }
    toml::Value::Table(t.clone()).try_into::<T>().map_err(|e| GenError(format!("{unit}: {}", e.message().trim())))
}

/// Checks `v` against the entry `name` of `table`.
fn ck(unit: &str, table: &[ParamDef], name: &str, v: impl TryInto<u64>) -> Result<(), GenError> {
    check(table, name, v).map_err(|e| GenError(format!("{unit}: {e}")))
}

fn json<T: Serialize>(p: &T) -> serde_json::Value {
    serde_json::to_value(p).expect("parameters serialise")
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct MulParams {
    pub width: usize,
}

impl Default for MulParams {
    fn default() -> Self {
        MulParams { width: 32 }
    }
}

fn mul_params(t: &toml::Table) -> Result<MulParams, GenError> {
    let p: MulParams = parse("mul-pipe", t)?;
    ck("mul-pipe", MUL_PARAMS, "width", p.width)?;
    Ok(p)
}

fn build_mul(t: &toml::Table) -> Result<Built, GenError> {
    let p = mul_params(t)?;
    let lat = hdl::prim::mul::latency(p.width);
    let m = "mul_pipe";
    let v = [("latency", lat.to_string())];
    let e = match p.width {
        16 => elaborate_with(MulPipe::<16, 32>::default(), m, &[], &v),
        32 => elaborate_with(MulPipe::<32, 64>::default(), m, &[], &v),
        48 => elaborate_with(MulPipe::<48, 96>::default(), m, &[], &v),
        64 => elaborate_with(MulPipe::<64, 128>::default(), m, &[], &v),
        _ => unreachable!("checked"),
    }?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct ShifterParams {
    pub lanes: usize,
    pub width: usize,
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
    ck(unit, SHIFTER_PARAMS, "lanes", p.lanes)?;
    ck(unit, SHIFTER_PARAMS, "width", p.width)?;
    ck(unit, SHIFTER_PARAMS, "pipeline", p.pipeline)?;
    Ok(p)
}

fn build_shifter(t: &toml::Table) -> Result<Built, GenError> {
    let p = shifter_params("zero-remove-shifter", t)?;
    let m = "zero_remove_shifter";
    macro_rules! w {
        ($($w:literal),*) => {
            match p.width {
                $($w => elaborate(ZeroRemoveShifter::<$w>::new(p.lanes, p.pipeline), m),)*
                _ => unreachable!("checked"),
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
    let m = "zero_insert_shifter";
    macro_rules! w {
        ($($w:literal),*) => {
            match p.width {
                $($w => elaborate(ZeroInsertShifter::<$w>::new(p.lanes, p.pipeline), m),)*
                _ => unreachable!("checked"),
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
    pub quotient_bits: usize,
}

impl Default for DivRoundParams {
    fn default() -> Self {
        DivRoundParams { quotient_bits: 5 }
    }
}

/// Operand width of the stand-alone divider: the Oaken engine's (§2.7).
pub const DIV_ROUND_WIDTH: usize = 50;

fn div_round_params(t: &toml::Table) -> Result<DivRoundParams, GenError> {
    let p: DivRoundParams = parse("div-round", t)?;
    ck("div-round", DIV_ROUND_PARAMS, "quotient-bits", p.quotient_bits)?;
    Ok(p)
}

fn build_div_round(t: &toml::Table) -> Result<Built, GenError> {
    let p = div_round_params(t)?;
    let e = elaborate(DivRound::<DIV_ROUND_WIDTH>::new(p.quotient_bits), "div_round")?;
    Ok(Built { module: "div_round".into(), params: json(&p), elaborated: e, latency: Some(p.quotient_bits as u32 + 1) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct FoldZeroParams {
    pub code_bits: usize,
}

impl Default for FoldZeroParams {
    fn default() -> Self {
        FoldZeroParams { code_bits: 5 }
    }
}

fn fold_zero_params(t: &toml::Table) -> Result<FoldZeroParams, GenError> {
    let p: FoldZeroParams = parse("fold-zero", t)?;
    ck("fold-zero", FOLD_ZERO_PARAMS, "code-bits", p.code_bits)?;
    Ok(p)
}

fn build_fold_zero(t: &toml::Table) -> Result<Built, GenError> {
    let p = fold_zero_params(t)?;
    let e = elaborate(FoldZero::<FOLD_ZERO_WIDTH>::new(p.code_bits), "fold_zero")?;
    let lat = FoldZero::<FOLD_ZERO_WIDTH>::latency(p.code_bits) as u32;
    Ok(Built { module: "fold_zero".into(), params: json(&p), elaborated: e, latency: Some(lat) })
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
    pub divisor: u64,
    pub method: DivConstMethod,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_stage: Option<usize>,
}

impl Default for DivConstParams {
    fn default() -> Self {
        DivConstParams { divisor: 15, method: DivConstMethod::Restoring, per_stage: None }
    }
}

fn div_const_params(t: &toml::Table) -> Result<DivConstParams, GenError> {
    let u = "div-const";
    let p: DivConstParams = parse(u, t)?;
    ck(u, DIV_CONST_PARAMS, "divisor", p.divisor)?;
    match (p.method, p.per_stage) {
        (DivConstMethod::Restoring, s) => ck(u, DIV_CONST_PARAMS, "per-stage", s.unwrap_or(6))?,
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
        }
    }
    Ok(p)
}

fn build_div_const(t: &toml::Table) -> Result<Built, GenError> {
    let p = div_const_params(t)?;
    let (e, lat) = match p.method {
        DivConstMethod::Restoring => {
            let s = p.per_stage.unwrap_or(6);
            (elaborate(DivConstCeil::<FX>::new(p.divisor, s), "div_const")?, DivConstCeil::<FX>::latency(s))
        }
        DivConstMethod::Mersenne => {
            (elaborate(DivMersenneCeil::<FX>::new(p.divisor), "div_const")?, DivMersenneCeil::<FX>::latency())
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
    let e = elaborate(Fp16Convert::default(), "fp16_convert")?;
    Ok(Built {
        module: "fp16_convert".into(),
        params: json(&p),
        elaborated: e,
        latency: Some(Fp16Convert::LATENCY as u32),
    })
}

fn oaken_params(unit: &str, t: &toml::Table) -> Result<sim::oaken::params::OakenParams, GenError> {
    let p: sim::oaken::params::OakenParams = parse(unit, t)?;
    p.validate().map_err(|e| GenError(format!("{unit}: {e}")))?;
    Ok(p)
}

fn build_quantizer(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::quantizer::{Geometry, OakenQuantizer};
    let p = oaken_params("oaken-quantizer", t)?;
    let m = "oaken_quantizer";
    // the second parameter packs 3 divisors (16 bits) per quotient step
    let e = match p.inlier_bits {
        2 => elaborate(OakenQuantizer::<2>::new(&p, m), m),
        3 => elaborate(OakenQuantizer::<3>::new(&p, m), m),
        4 => elaborate(OakenQuantizer::<4>::new(&p, m), m),
        5 => elaborate(OakenQuantizer::<5>::new(&p, m), m),
        6 => elaborate(OakenQuantizer::<6>::new(&p, m), m),
        7 => elaborate(OakenQuantizer::<7>::new(&p, m), m),
        8 => elaborate(OakenQuantizer::<8>::new(&p, m), m),
        _ => unreachable!("validated"),
    }?;
    let g = Geometry::new(&p);
    let mut e = e;
    e.memories = g
        .memories(m)
        .into_iter()
        .map(Memory::from)
        .collect();
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(g.latency as u32) })
}

fn build_dequantizer(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::dequantizer::{DeqGeometry, OakenDequantizer};
    let p = oaken_params("oaken-dequantizer", t)?;
    let m = "oaken_dequantizer";
    let e = match p.inlier_bits {
        2 => elaborate(OakenDequantizer::<2, 45>::new(&p), m),
        3 => elaborate(OakenDequantizer::<3, 46>::new(&p), m),
        4 => elaborate(OakenDequantizer::<4, 47>::new(&p), m),
        5 => elaborate(OakenDequantizer::<5, 48>::new(&p), m),
        6 => elaborate(OakenDequantizer::<6, 49>::new(&p), m),
        7 => elaborate(OakenDequantizer::<7, 50>::new(&p), m),
        8 => elaborate(OakenDequantizer::<8, 51>::new(&p), m),
        _ => unreachable!("validated"),
    }?;
    let lat = DeqGeometry::new(&p).latency as u32;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat) })
}

fn mmu_params(t: &toml::Table) -> Result<sim::oaken::mmu::MmuParams, GenError> {
    let p: sim::oaken::mmu::MmuParams = parse("oaken-mmu", t)?;
    p.check().map_err(|e| GenError(format!("oaken-mmu: {e}")))?;
    Ok(p)
}

fn build_mmu(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::oaken::mmu::{MmuGeometry, OakenMmu};
    let p = mmu_params(t)?;
    let m = "oaken_mmu";
    let memories = MmuGeometry::new(&p)
        .memories(m)
        .into_iter()
        .map(Memory::from)
        .collect();
    let mut e = elaborate_with(OakenMmu::new(&p, m), m, &[("rsp_addr", p.addr_bits as usize)], &[])?;
    e.memories = memories;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: None })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PrunerParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub pipeline: usize,
}

impl Default for PrunerParams {
    fn default() -> Self {
        let d = sim::titanus::params::TitanusParams::default();
        PrunerParams { channels: d.channels, lanes: d.lanes, layers: d.layers, pipeline: 2 }
    }
}

/// Checks the Titanus parameters a unit has, the others at their defaults.
fn titanus_check(unit: &str, tp: sim::titanus::params::TitanusParams) -> Result<(), GenError> {
    tp.validate().map_err(|e| GenError(format!("{unit}: {e}")))
}

fn pruner_params(t: &toml::Table) -> Result<PrunerParams, GenError> {
    let u = "titanus-pruner";
    let p: PrunerParams = parse(u, t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        layers: p.layers,
        ..Default::default()
    };
    titanus_check(u, tp)?;
    ck(u, &[PRUNER_PIPELINE], "pipeline", p.pipeline)?;
    Ok(p)
}

fn build_pruner(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::pruner::TitanusPruner;
    let p = pruner_params(t)?;
    let m = "titanus_pruner";
    let cw = p.lanes.trailing_zeros() as usize + 1;
    let e = elaborate_with(
        TitanusPruner::new(p.lanes, p.layers, p.pipeline),
        m,
        &[("out_k_count", cw), ("out_v_count", cw)],
        &[],
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

fn titanus_deq_params(t: &toml::Table) -> Result<TitanusDeqParams, GenError> {
    let u = "titanus-dequantizer";
    let p: TitanusDeqParams = parse(u, t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        max_levels: p.max_levels,
        ..Default::default()
    };
    titanus_check(u, tp)?;
    Ok(p)
}

fn build_titanus_deq(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::dequantizer::TitanusDequantizer;
    let p = titanus_deq_params(t)?;
    let m = "titanus_dequantizer";
    let mut e = elaborate(TitanusDequantizer::new(p.channels, p.lanes, p.max_levels, m), m)?;
    e.memories = hdl::titanus::dequantizer::memories(m, p.channels, p.lanes, p.max_levels)
        .into_iter()
        .map(Memory::from)
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

fn titanus_quant_params(t: &toml::Table) -> Result<TitanusQuantParams, GenError> {
    let u = "titanus-quantizer";
    let p: TitanusQuantParams = parse(u, t)?;
    let tp = sim::titanus::params::TitanusParams {
        channels: p.channels,
        lanes: p.lanes,
        layers: p.layers,
        max_levels: p.max_levels,
        max_prefill: p.max_prefill,
    };
    titanus_check(u, tp)?;
    Ok(p)
}

fn build_titanus_quant(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::titanus::quantizer::{QuGeometry, TitanusQuantizer};
    let p = titanus_quant_params(t)?;
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
        .map(Memory::from)
        .collect();
    let mut e = elaborate(TitanusQuantizer::new(&g, m), m)?;
    e.memories = memories;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(g.latency() as u32) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct KiviDeqParams {
    pub head_dim: usize,
    pub group: usize,
    pub bits: u32,
    pub lanes: usize,
    pub axis: sim::kivi::params::Axis,
}

impl Default for KiviDeqParams {
    fn default() -> Self {
        let d = sim::kivi::params::KiviParams::default();
        KiviDeqParams { head_dim: d.head_dim, group: d.group, bits: d.bits, lanes: d.lanes, axis: d.axis }
    }
}

fn kivi_deq_params(t: &toml::Table) -> Result<KiviDeqParams, GenError> {
    let u = "kivi-dequantizer";
    let p: KiviDeqParams = parse(u, t)?;
    let kp = sim::kivi::params::KiviParams {
        head_dim: p.head_dim,
        heads: 1,
        group: p.group,
        bits: p.bits,
        lanes: p.lanes,
        axis: p.axis,
    };
    kp.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    // axis channel lets lanes exceed group; the dequantizer's beats never
    // span two groups whatever the axis
    if p.group % p.lanes != 0 {
        return Err(GenError(format!("{u}: lanes ({}) must divide group ({})", p.lanes, p.group)));
    }
    Ok(p)
}

fn build_kivi_deq(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::kivi::dequantizer::KiviDequantizer;
    let p = kivi_deq_params(t)?;
    let m = "kivi_dequantizer";
    let lat = KiviDequantizer::LATENCY;
    let e = elaborate_with(
        KiviDequantizer::new(p.group, p.bits as usize, p.lanes),
        m,
        &[],
        &[("latency", lat.to_string())],
    )?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

fn kivi_quant_params(t: &toml::Table) -> Result<sim::kivi::params::KiviParams, GenError> {
    let u = "kivi-quantizer";
    let p: sim::kivi::params::KiviParams = parse(u, t)?;
    ck(u, &[KIVI_QUANT_HEAD_DIM], "head-dim", p.head_dim)?;
    p.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    Ok(p)
}

fn build_kivi_quant(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::kivi::quantizer::KiviQuantizer;
    use hdl::kivi::quantizer_channel::{memories, KiviChannelQuantizer as Kc};
    use sim::kivi::params::Axis;
    let p = kivi_quant_params(t)?;
    let m = "kivi_quantizer";
    let (n, b) = (p.vector_len(), p.bits as usize);
    if p.axis == Axis::Channel {
        let lat = Kc::latency(n, b, p.lanes);
        let subst = [("latency", lat.to_string()), ("meta_latency", Kc::meta_latency(n, p.lanes).to_string())];
        let mut e = elaborate_with(Kc::new(m, n, p.group, b, p.lanes), m, &[], &subst)?;
        e.memories = memories(m, n, p.lanes)
            .into_iter()
            .map(Memory::from)
            .collect();
        return Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) });
    }
    let lat = KiviQuantizer::latency(p.group, b, p.lanes);
    let e = elaborate_with(KiviQuantizer::new(n, p.group, b, p.lanes), m, &[], &[("latency", lat.to_string())])?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PackKvQuantParams {
    pub head_dim: usize,
    pub heads: usize,
    pub levels: u32,
    pub lanes: usize,
}

impl Default for PackKvQuantParams {
    fn default() -> Self {
        let d = sim::packkv::params::PackKvParams::default();
        PackKvQuantParams { head_dim: d.head_dim, heads: d.heads, levels: d.levels, lanes: d.lanes }
    }
}

fn packkv_quant_params(t: &toml::Table) -> Result<PackKvQuantParams, GenError> {
    let u = "packkv-quantizer";
    let p: PackKvQuantParams = parse(u, t)?;
    let kp = sim::packkv::params::PackKvParams {
        head_dim: p.head_dim,
        heads: p.heads,
        levels: p.levels,
        lanes: p.lanes,
        ..Default::default()
    };
    kp.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    Ok(p)
}

fn build_packkv_quant(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::packkv::quantizer::{Geometry, PackKvQuantizer};
    let p = packkv_quant_params(t)?;
    let m = "packkv_quantizer";
    let c = p.heads * p.head_dim;
    let g = Geometry::new(c, p.levels, p.lanes);
    let v = [("latency", g.latency.to_string())];
    macro_rules! r {
        ($($r:literal),*) => {
            match g.raw {
                $($r => elaborate_with(PackKvQuantizer::<$r>::new(c, p.levels, p.lanes, m), m, &[], &v),)*
                _ => unreachable!("levels 2..=255 give 2..=8 bits"),
            }
        };
    }
    let mut e = r!(2, 3, 4, 5, 6, 7, 8)?;
    e.memories = g
        .memories(m)
        .into_iter()
        .map(Memory::from)
        .collect();
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(g.latency as u32) })
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PackKvEncParams {
    pub head_dim: usize,
    pub heads: usize,
    pub k_levels: u32,
    pub v_levels: u32,
    pub block: usize,
    pub pack: usize,
    pub repack: sim::packkv::params::Repack,
    pub interleave: sim::packkv::params::Interleave,
    pub lanes: usize,
}

impl Default for PackKvEncParams {
    fn default() -> Self {
        let d = sim::packkv::params::PackKvParams::default();
        PackKvEncParams {
            head_dim: d.head_dim,
            heads: d.heads,
            k_levels: 10,
            v_levels: 5,
            block: d.block,
            pack: d.pack,
            repack: d.repack,
            interleave: d.interleave,
            lanes: d.lanes,
        }
    }
}

impl PackKvEncParams {
    /// The shared model's parameters of the K (`v` false) or V side.
    pub fn model(&self, v: bool) -> sim::packkv::params::PackKvParams {
        sim::packkv::params::PackKvParams {
            head_dim: self.head_dim,
            heads: self.heads,
            levels: if v { self.v_levels } else { self.k_levels },
            block: self.block,
            pack: self.pack,
            repack: self.repack,
            interleave: self.interleave,
            lanes: self.lanes,
        }
    }

    pub fn vector(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Beats per token, `C / lanes`.
    pub fn beats(&self) -> usize {
        self.vector() / self.lanes
    }
}

/// The parameters and the geometry they give (its errors are the RTL's
/// own parameter rules).
fn packkv_enc_params(t: &toml::Table) -> Result<(PackKvEncParams, hdl::packkv::encoder::EncGeometry), GenError> {
    use sim::packkv::params::Interleave;
    let u = "packkv-encoder";
    let p: PackKvEncParams = parse(u, t)?;
    ck(u, &[PACKKV_K_LEVELS], "k-levels", p.k_levels)?;
    ck(u, &[PACKKV_V_LEVELS], "v-levels", p.v_levels)?;
    ck(u, &[PACKKV_ENC_LANES], "lanes", p.lanes)?;
    for v in [false, true] {
        p.model(v).validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    }
    if p.interleave != Interleave::None {
        return Err(GenError(format!("{u}: interleave must be none in the RTL (gpu is not generated: spec §14.4), got {}", p.interleave)));
    }
    let median = p.repack == sim::packkv::params::Repack::Median;
    let g = hdl::packkv::encoder::EncGeometry::new(p.heads * p.head_dim, p.k_levels, p.v_levels, p.block, p.pack, p.lanes, median)
        .map_err(|e| GenError(format!("{u}: {e}")))?;
    Ok((p, g))
}

fn build_packkv_enc(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::packkv::encoder::PackKvEncoder;
    let (p, g) = packkv_enc_params(t)?;
    let m = "packkv_encoder";
    let lat = g.item_latency();
    let widths = [
        ("k_codes", p.lanes * g.k.raw),
        ("v_codes", p.lanes * g.v.raw),
        ("out_words", 32 * g.out_words),
        ("out_count", 8 - (g.out_words as u8).leading_zeros() as usize),
    ];
    let mut e = elaborate_with(PackKvEncoder::new(&g, m), m, &widths, &[("latency", lat.to_string())])?;
    e.memories = g
        .memories(m)
        .into_iter()
        .map(Memory::from)
        .collect();
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parameters of `packkv-decoder` (spec §14.1, §14.14.2): the row order
/// comes from each block's header, so `repack` is not one of them;
/// `interleave` is `none` (`gpu` is not generated, spec §14.4).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PackKvDecParams {
    pub head_dim: usize,
    pub heads: usize,
    pub levels: u32,
    pub block: usize,
    pub pack: usize,
    pub lanes: usize,
    pub burst: usize,
}

impl Default for PackKvDecParams {
    fn default() -> Self {
        let d = sim::packkv::params::PackKvParams::default();
        PackKvDecParams {
            head_dim: d.head_dim,
            heads: d.heads,
            levels: d.levels,
            block: d.block,
            pack: d.pack,
            lanes: d.lanes,
            burst: 2,
        }
    }
}

fn packkv_dec_params(t: &toml::Table) -> Result<PackKvDecParams, GenError> {
    let u = "packkv-decoder";
    let p: PackKvDecParams = parse(u, t)?;
    let kp = sim::packkv::params::PackKvParams {
        head_dim: p.head_dim,
        heads: p.heads,
        levels: p.levels,
        block: p.block,
        pack: p.pack,
        lanes: p.lanes,
        ..Default::default()
    };
    kp.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    let r = kp.raw_bits() as usize;
    if p.lanes * r > 128 {
        return Err(GenError(format!(
            "{u}: lanes x r ({} x {r}) must be at most 128: the zero-insert shifter has at most 128 one-bit lanes",
            p.lanes
        )));
    }
    ck(u, &[PACKKV_DEC_BURST], "burst", p.burst)?;
    if p.burst == 2 {
        hdl::packkv::decoder_burst::BurstGeometry::new(p.heads * p.head_dim, p.block, p.pack, p.levels, p.lanes)
            .map_err(|e| GenError(format!("{u}: {e}")))?;
    }
    Ok(p)
}

fn build_packkv_dec(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::packkv::decoder::{Geometry, PackKvDecoder};
    use hdl::packkv::decoder_burst::{BurstGeometry, PackKvDecoderBurst};
    let p = packkv_dec_params(t)?;
    let m = "packkv_decoder";
    let c = p.heads * p.head_dim;
    let ports = |g: &Geometry| {
        [("out_perm", g.b * g.lb), ("out_row", g.lb), ("in_count", (usize::BITS - g.wi.leading_zeros()) as usize)]
    };
    let (e, lat) = if p.burst == 2 {
        let bg = BurstGeometry::new(c, p.block, p.pack, p.levels, p.lanes).map_err(GenError)?;
        let mut e = elaborate_with(PackKvDecoderBurst::new(&bg, m), m, &ports(&bg.core), &[("wi", bg.core.wi.to_string())])?;
        e.memories = vec![Memory::from(bg.memory(m))];
        (e, bg.latency)
    } else {
        let g = Geometry::new(c, p.block, p.pack, p.levels, p.lanes);
        let v = [("win", g.win.to_string()), ("wi", g.wi.to_string())];
        (elaborate_with(PackKvDecoder::new(&g), m, &ports(&g), &v)?, g.latency)
    };
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parameters of the HACK dot units (spec §15.1): `lanes`, `axis`,
/// `rounding` and `seed` are the quantizer's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct HackDotParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    pub qp_bits: u32,
}

impl Default for HackDotParams {
    fn default() -> Self {
        let d = sim::hack::params::HackParams::default();
        HackDotParams { head_dim: d.head_dim, partition: d.partition, kv_bits: d.kv_bits, qp_bits: d.qp_bits }
    }
}

fn hack_dot_params(unit: &str, t: &toml::Table) -> Result<HackDotParams, GenError> {
    let p: HackDotParams = parse(unit, t)?;
    let hp = sim::hack::params::HackParams {
        head_dim: p.head_dim,
        partition: p.partition,
        kv_bits: p.kv_bits,
        qp_bits: p.qp_bits,
        ..Default::default()
    };
    hp.validate().map_err(|e| GenError(format!("{unit}: {e}")))?;
    Ok(p)
}

fn build_hack_qk(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::hack::qk_dot::{HackQkDot, QkGeometry};
    let p = hack_dot_params("hack-qk-dot", t)?;
    let m = "hack_qk_dot";
    let g = QkGeometry { head_dim: p.head_dim, partition: p.partition, kv_bits: p.kv_bits as usize, qp_bits: p.qp_bits as usize };
    let lat = g.latency();
    let widths = [("q_sum", g.sum_bits(g.qp_bits)), ("k_sum", g.sum_bits(g.kv_bits))];
    let e = elaborate_with(HackQkDot::new(&g), m, &widths, &[("latency", lat.to_string())])?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parameters of `hack-deq-dot`: Q is FP16, so no `qp-bits`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct HackDeqParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
}

impl Default for HackDeqParams {
    fn default() -> Self {
        let d = HackDotParams::default();
        HackDeqParams { head_dim: d.head_dim, partition: d.partition, kv_bits: d.kv_bits }
    }
}

fn hack_deq_params(t: &toml::Table) -> Result<HackDeqParams, GenError> {
    let u = "hack-deq-dot";
    let p: HackDeqParams = parse(u, t)?;
    let mut t2 = toml::Table::new();
    t2.insert("head-dim".into(), toml::Value::Integer(p.head_dim as i64));
    t2.insert("partition".into(), toml::Value::Integer(p.partition as i64));
    t2.insert("kv-bits".into(), toml::Value::Integer(p.kv_bits as i64));
    hack_dot_params(u, &t2)?;
    Ok(p)
}

fn build_hack_deq(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::hack::deq_dot::{DeqGeometry, HackDeqDot};
    let p = hack_deq_params(t)?;
    let m = "hack_deq_dot";
    let g = DeqGeometry { head_dim: p.head_dim, partition: p.partition, kv_bits: p.kv_bits as usize };
    let lat = g.latency();
    let e = elaborate_with(HackDeqDot::new(&g), m, &[], &[("latency", lat.to_string())])?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parameters of `hack-quantizer` (spec §15.1, §15.7).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct HackQuantParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    pub qp_bits: u32,
    pub lanes: usize,
    pub axis: sim::hack::params::Axis,
    pub rounding: sim::hack::params::Rounding,
    pub seed: u16,
    pub operand: HackOperand,
}

/// The code width a `hack-quantizer` uses: `kv-bits` or `qp-bits`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HackOperand {
    #[default]
    Kv,
    Qp,
}

impl Default for HackQuantParams {
    fn default() -> Self {
        let d = sim::hack::params::HackParams::default();
        HackQuantParams {
            head_dim: d.head_dim,
            partition: d.partition,
            kv_bits: d.kv_bits,
            qp_bits: d.qp_bits,
            lanes: d.lanes,
            axis: sim::hack::params::Axis::Token,
            rounding: d.rounding,
            seed: d.seed,
            operand: HackOperand::Kv,
        }
    }
}

impl HackQuantParams {
    /// The instance's code width.
    pub fn bits(&self) -> u32 {
        match self.operand {
            HackOperand::Kv => self.kv_bits,
            HackOperand::Qp => self.qp_bits,
        }
    }
}

fn hack_quant_params(t: &toml::Table) -> Result<HackQuantParams, GenError> {
    let u = "hack-quantizer";
    // the seed's range first: serde would reject 0 only as a u16 overflow elsewhere
    if let Some(v) = t.get("seed").and_then(|v| v.as_integer()) {
        ck(u, sim::hack::params::HACK_PARAMS, "seed", v.max(0) as u64)?;
    }
    let p: HackQuantParams = parse(u, t)?;
    let hp = sim::hack::params::HackParams {
        head_dim: p.head_dim,
        partition: p.partition,
        kv_bits: p.kv_bits,
        qp_bits: p.qp_bits,
        lanes: p.lanes,
        rounding: p.rounding,
        seed: p.seed,
    };
    hp.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    if p.axis == sim::hack::params::Axis::Channel {
        if p.partition > 128 {
            return Err(GenError(format!(
                "{u}: partition must be at most 128 with axis channel (KIVI's channel engine), got {}",
                p.partition
            )));
        }
        if p.lanes > 32 {
            return Err(GenError(format!("{u}: lanes must be at most 32 with axis channel (sums beside the words), got {}", p.lanes)));
        }
    }
    Ok(p)
}

fn build_hack_quant(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::hack::quantizer::HackQuantizer;
    use hdl::kivi::quantizer::HackOpts;
    use sim::hack::params::{sum_bits, Rounding};
    let p = hack_quant_params(t)?;
    let m = "hack_quantizer";
    let (b, st) = (p.bits() as usize, p.rounding == Rounding::Stochastic);
    let opts = HackOpts { stochastic: st, seed: p.seed };
    let widths = [("out_sum", sum_bits(p.bits(), p.partition) as usize)];
    if p.axis == sim::hack::params::Axis::Channel {
        use hdl::hack::quantizer_channel::HackChannelQuantizer as Hc;
        use hdl::kivi::quantizer_channel::memories_with;
        let lat = Hc::latency(p.head_dim, b, p.lanes, st);
        let subst = [("latency", lat.to_string()), ("meta_latency", Hc::meta_latency(p.head_dim, p.lanes).to_string())];
        // out_sum stays 16 bits a lane (the wrapper resizes scalar ports only)
        let mut e = elaborate_with(Hc::new(m, p.head_dim, p.partition, b, p.lanes, opts), m, &[], &subst)?;
        e.memories = memories_with(m, p.head_dim, p.lanes, true)
            .into_iter()
            .map(Memory::from)
            .collect();
        return Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) });
    }
    let lat = HackQuantizer::latency(p.partition, b, p.lanes, st);
    let e = elaborate_with(HackQuantizer::new(p.partition, b, p.lanes, opts), m, &widths, &[("latency", lat.to_string())])?;
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parameters of `hack-pv-dot`: the dot units' and `lanes` (tail channels
/// per beat, banks of the accumulator memory).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct HackPvParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    pub qp_bits: u32,
    pub lanes: usize,
}

impl Default for HackPvParams {
    fn default() -> Self {
        let d = sim::hack::params::HackParams::default();
        HackPvParams { head_dim: d.head_dim, partition: d.partition, kv_bits: d.kv_bits, qp_bits: d.qp_bits, lanes: d.lanes }
    }
}

fn hack_pv_params(t: &toml::Table) -> Result<HackPvParams, GenError> {
    let u = "hack-pv-dot";
    let p: HackPvParams = parse(u, t)?;
    let hp = sim::hack::params::HackParams {
        head_dim: p.head_dim,
        partition: p.partition,
        kv_bits: p.kv_bits,
        qp_bits: p.qp_bits,
        lanes: p.lanes,
        ..Default::default()
    };
    hp.validate().map_err(|e| GenError(format!("{u}: {e}")))?;
    Ok(p)
}

fn build_hack_pv(t: &toml::Table) -> Result<Built, GenError> {
    use hdl::hack::pv_dot::{HackPvDot, PvGeometry};
    let p = hack_pv_params(t)?;
    let m = "hack_pv_dot";
    let g = PvGeometry {
        head_dim: p.head_dim,
        partition: p.partition,
        kv_bits: p.kv_bits as usize,
        qp_bits: p.qp_bits as usize,
        lanes: p.lanes,
    };
    let lat = g.latency();
    let widths = [
        ("p_sum", g.sum_bits(g.qp_bits)),
        ("v_sum", g.sum_bits(g.kv_bits)),
        ("len_closed", g.closed_bits()),
        ("len_tail", g.tail_bits()),
    ];
    let mut e = elaborate_with(HackPvDot::new(&g, m), m, &widths, &[("latency", lat.to_string())])?;
    e.memories = g
        .memories(m)
        .into_iter()
        .map(Memory::from)
        .collect();
    Ok(Built { module: m.into(), params: json(&p), elaborated: e, latency: Some(lat as u32) })
}

/// Parses and checks `unit`'s parameters without elaborating: the checks
/// `build` makes first. Returns the parameters with defaults filled in.
pub fn validate(unit: &str, t: &toml::Table) -> Result<serde_json::Value, GenError> {
    match unit {
        "titanus-dequantizer" => titanus_deq_params(t).map(|p| json(&p)),
        "kivi-dequantizer" => kivi_deq_params(t).map(|p| json(&p)),
        "kivi-quantizer" => kivi_quant_params(t).map(|p| json(&p)),
        "packkv-quantizer" => packkv_quant_params(t).map(|p| json(&p)),
        "packkv-encoder" => packkv_enc_params(t).map(|(p, _)| json(&p)),
        "packkv-decoder" => packkv_dec_params(t).map(|p| json(&p)),
        "hack-qk-dot" => hack_dot_params(unit, t).map(|p| json(&p)),
        "hack-deq-dot" => hack_deq_params(t).map(|p| json(&p)),
        "hack-pv-dot" => hack_pv_params(t).map(|p| json(&p)),
        "hack-quantizer" => hack_quant_params(t).map(|p| json(&p)),
        "titanus-pruner" => pruner_params(t).map(|p| json(&p)),
        "titanus-quantizer" => titanus_quant_params(t).map(|p| json(&p)),
        "oaken-mmu" => mmu_params(t).map(|p| json(&p)),
        "oaken-quantizer" | "oaken-dequantizer" => oaken_params(unit, t).map(|p| json(&p)),
        "zero-remove-shifter" | "zero-insert-shifter" => shifter_params(unit, t).map(|p| json(&p)),
        "mul-pipe" => mul_params(t).map(|p| json(&p)),
        "div-round" => div_round_params(t).map(|p| json(&p)),
        "fold-zero" => fold_zero_params(t).map(|p| json(&p)),
        "div-const" => div_const_params(t).map(|p| json(&p)),
        "fp16-convert" => parse::<NoParams>(unit, t).map(|p| json(&p)),
        _ => Err(unknown_unit(unit)),
    }
}

pub fn build(unit: &str, params: &toml::Table) -> Result<Built, GenError> {
    match unit {
        "titanus-dequantizer" => build_titanus_deq(params),
        "kivi-dequantizer" => build_kivi_deq(params),
        "kivi-quantizer" => build_kivi_quant(params),
        "packkv-quantizer" => build_packkv_quant(params),
        "packkv-encoder" => build_packkv_enc(params),
        "packkv-decoder" => build_packkv_dec(params),
        "hack-qk-dot" => build_hack_qk(params),
        "hack-pv-dot" => build_hack_pv(params),
        "hack-deq-dot" => build_hack_deq(params),
        "hack-quantizer" => build_hack_quant(params),
        "titanus-pruner" => build_pruner(params),
        "titanus-quantizer" => build_titanus_quant(params),
        "oaken-mmu" => build_mmu(params),
        "oaken-quantizer" => build_quantizer(params),
        "oaken-dequantizer" => build_dequantizer(params),
        "zero-remove-shifter" => build_shifter(params),
        "zero-insert-shifter" => build_insert_shifter(params),
        "mul-pipe" => build_mul(params),
        "div-round" => build_div_round(params),
        "fold-zero" => build_fold_zero(params),
        "div-const" => build_div_const(params),
        "fp16-convert" => build_fp16(params),
        _ => Err(unknown_unit(unit)),
    }
}
