//! PackKV parameters and their legal ranges (docs/spec.md §14.1).

use crate::param_def::{check, def, Allowed::*, ParamDef, Value::*};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Row order of a block before packing (spec §14.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repack {
    /// Rows in arrival order.
    None,
    /// Rows sorted by the lower median of their V codes, descending; ties
    /// in arrival order (stable).
    Median,
}

impl fmt::Display for Repack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Repack::None => "none",
            Repack::Median => "median",
        })
    }
}

impl std::str::FromStr for Repack {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Repack::None),
            "median" => Ok(Repack::Median),
            _ => Err(format!("unknown variant `{s}`: repack must be one of none, median")),
        }
    }
}

/// Order of the packs' payload inside a pack row (spec §14.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interleave {
    /// Channel order (canonical).
    None,
    /// The authors' Fig. 9 order inside every 128 channels: 0, 4, 8, ..,
    /// 124, 1, 5, .., 127.
    Gpu,
}

impl fmt::Display for Interleave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interleave::None => "none",
            Interleave::Gpu => "gpu",
        })
    }
}

impl std::str::FromStr for Interleave {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Interleave::None),
            "gpu" => Ok(Interleave::Gpu),
            _ => Err(format!("unknown variant `{s}`: interleave must be one of none, gpu")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError(pub String);

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

pub use crate::param_def::MAX_VECTOR;
/// Bits of the block header word (spec §14.4).
pub const HEADER_BITS: usize = 32;
/// Bits of one token's metadata word: FP16 step, 16-bit signed zero `z` (spec §14.3, §14.4).
pub const META_BITS: usize = 32;
/// Channels of one Fig. 9 interleave group.
pub const GPU_GROUP: usize = 128;

/// The parameters of spec §14.1: `validate` reads its ranges from here.
pub const PACKKV_PARAMS: &[ParamDef] = &[
    ParamDef { name: "head-dim", default: Int(128), allowed: Range(1, 1024), doc: "elements per attention head" },
    ParamDef { name: "heads", default: Int(1), allowed: Range(1, 64), doc: "heads per token vector (one min and max over all of them)" },
    ParamDef {
        name: "levels",
        default: Int(10),
        allowed: Range(2, 255),
        doc: "N: step = ceil((max - min) / N) rounded up to FP16, rel = 1/N; codes 0..=N (K 10, V 5 in the paper's runs)",
    },
    ParamDef { name: "block", default: Int(64), allowed: Pow2(16, 128), doc: "tokens per block, K and V alike" },
    ParamDef { name: "pack", default: Int(16), allowed: Pow2(2, 32), doc: "tokens of one channel sharing a minimum and a width" },
    ParamDef { name: "repack", default: Name("none"), allowed: Names(&["none", "median"]), doc: "row order: arrival, or V median descending with ties in arrival order" },
    ParamDef { name: "interleave", default: Name("none"), allowed: Names(&["none", "gpu"]), doc: "payload order in a pack row: channel order, or the authors' Fig. 9 order per 128 channels" },
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, 64), doc: "elements or codes per clock cycle" },
];

pub const PACKKV_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "lanes divides head-dim",
    "pack divides block",
    "interleave gpu: 128 divides heads x head-dim",
];

fn err<T>(msg: String) -> Result<T, ParamError> {
    Err(ParamError(msg))
}

/// One PackKV configuration: `packkv-quantizer`, `-encoder` and `-decoder`
/// share it (spec §14.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct PackKvParams {
    pub head_dim: usize,
    pub heads: usize,
    pub levels: u32,
    pub block: usize,
    pub pack: usize,
    pub repack: Repack,
    pub interleave: Interleave,
    pub lanes: usize,
}

impl Default for PackKvParams {
    fn default() -> Self {
        PackKvParams { head_dim: 128, heads: 1, levels: 10, block: 64, pack: 16, repack: Repack::None, interleave: Interleave::None, lanes: 16 }
    }
}

/// Raw code width `r = ceil(log2(N + 1))`: codes 0..=N fit (spec §14.2).
pub fn raw_bits(levels: u32) -> u32 {
    32 - levels.leading_zeros()
}

/// Width-field bits `ceil(log2(r + 1))`: widths 0..=r fit (spec §14.4).
pub fn width_bits(raw: u32) -> u32 {
    32 - raw.leading_zeros()
}

impl PackKvParams {
    /// Checks every rule of spec §14.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        let t = PACKKV_PARAMS;
        let c = |name: &str, v: usize| check(t, name, v).map_err(ParamError);
        c("head-dim", self.head_dim)?;
        c("heads", self.heads)?;
        crate::param_def::check_vector(self.heads, self.head_dim).map_err(ParamError)?;
        c("levels", self.levels as usize)?;
        c("block", self.block)?;
        c("pack", self.pack)?;
        if self.block % self.pack != 0 {
            return err(format!("pack ({}) must divide block ({}): a pack never spans two blocks", self.pack, self.block));
        }
        def(t, "repack").check_name(&self.repack.to_string()).map_err(ParamError)?;
        def(t, "interleave").check_name(&self.interleave.to_string()).map_err(ParamError)?;
        if self.interleave == Interleave::Gpu && self.vector_len() % GPU_GROUP != 0 {
            return err(format!(
                "interleave gpu needs heads x head-dim ({}) to be a multiple of {GPU_GROUP}",
                self.vector_len()
            ));
        }
        c("lanes", self.lanes)?;
        if self.head_dim % self.lanes != 0 {
            return err(format!("lanes ({}) must divide head-dim ({})", self.lanes, self.head_dim));
        }
        Ok(())
    }

    /// Channels `C` of a token vector.
    pub fn vector_len(&self) -> usize {
        self.heads * self.head_dim
    }

    pub fn raw_bits(&self) -> u32 {
        raw_bits(self.levels)
    }

    pub fn width_bits(&self) -> u32 {
        width_bits(self.raw_bits())
    }

    /// Pack rows of a block, `B / P`.
    pub fn rows(&self) -> usize {
        self.block / self.pack
    }

    /// Bits of the stored permutation, `B log2 B`, when repacked.
    pub fn perm_bits(&self) -> usize {
        match self.repack {
            Repack::None => 0,
            Repack::Median => self.block * self.block.trailing_zeros() as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_derived_widths() {
        let p = PackKvParams::default();
        p.validate().unwrap();
        assert_eq!((p.raw_bits(), p.width_bits(), p.rows(), p.perm_bits()), (4, 3, 4, 0));
        assert_eq!((raw_bits(5), width_bits(3)), (3, 2));
        assert_eq!((raw_bits(2), raw_bits(7), raw_bits(8), raw_bits(255)), (2, 3, 4, 8));
        assert_eq!((width_bits(1), width_bits(8)), (1, 4));
        assert_eq!(PackKvParams { repack: Repack::Median, ..p }.perm_bits(), 384);
    }

    #[test]
    fn rejects_each_rule_in_one_line() {
        let bad = |f: &dyn Fn(&mut PackKvParams)| {
            let mut p = PackKvParams::default();
            f(&mut p);
            let e = p.validate().unwrap_err().0;
            assert!(!e.contains('\n'), "{e}");
            e
        };
        assert_eq!(bad(&|p| p.levels = 1), "levels must be in 2..=255, got 1");
        assert_eq!(bad(&|p| p.levels = 256), "levels must be in 2..=255, got 256");
        assert_eq!(bad(&|p| p.block = 48), "block must be a power of two in 16..=128, got 48");
        assert_eq!(bad(&|p| p.block = 256), "block must be a power of two in 16..=128, got 256");
        assert_eq!(bad(&|p| p.pack = 64), "pack must be a power of two in 2..=32, got 64");
        assert!(bad(&|p| { p.block = 16; p.pack = 32 }).starts_with("pack (32) must divide block (16)"));
        assert!(bad(&|p| { p.head_dim = 64; p.interleave = Interleave::Gpu }).starts_with("interleave gpu needs"));
        assert!(bad(&|p| p.lanes = 12).starts_with("lanes must be a power of two"));
        assert!(bad(&|p| { p.head_dim = 24; }).starts_with("lanes (16) must divide head-dim (24)"));
        assert!(bad(&|p| { p.heads = 9; p.head_dim = 1024 }).contains("8192"));
        assert_eq!(bad(&|p| p.head_dim = 0), "head-dim must be in 1..=1024, got 0");
    }
}
