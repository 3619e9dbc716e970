//! KIVI parameters and their legal ranges (docs/spec.md §13.1).

use crate::param_def::{check, def, Allowed::*, ParamDef, Value::*};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The axis a `kivi-quantizer` groups along (spec §13.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    /// V: one token's vector, groups of `group` channels.
    Token,
    /// K: a block of `group` tokens, one group per channel.
    Channel,
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::Token => "token",
            Axis::Channel => "channel",
        })
    }
}

impl std::str::FromStr for Axis {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "token" => Ok(Axis::Token),
            "channel" => Ok(Axis::Channel),
            _ => Err(format!("unknown variant `{s}`: axis must be one of token, channel")),
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

pub const MAX_HEAD_DIM: usize = 1024;
pub const MAX_HEADS: usize = 64;
pub use crate::param_def::MAX_VECTOR;
pub const MAX_RESIDUAL: usize = 4096;
/// Bits of one packed code word (spec §13.4).
pub const WORD_BITS: usize = 32;
/// Bits of one group's metadata word, FP16 scale and FP16 min (spec §13.5).
pub const META_BITS: usize = 32;

/// The parameters of spec §13.1: `validate` reads its ranges from here.
pub const KIVI_PARAMS: &[ParamDef] = &[
    ParamDef { name: "head-dim", default: Int(128), allowed: Range(1, MAX_HEAD_DIM as u64), doc: "elements per attention head" },
    ParamDef { name: "heads", default: Int(1), allowed: Range(1, MAX_HEADS as u64), doc: "heads per token vector" },
    ParamDef {
        name: "group",
        default: Int(32),
        allowed: Pow2(16, 128),
        doc: "elements per quantization group: channels of one token (axis token, V) or tokens of one channel (axis channel, K)",
    },
    ParamDef { name: "bits", default: Int(2), allowed: Ints(&[2, 3, 4, 8]), doc: "code width; floor(32 / bits) codes per 32-bit word" },
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, 64), doc: "elements accepted per clock cycle" },
    ParamDef { name: "axis", default: Name("token"), allowed: Names(&["token", "channel"]), doc: "token: per-token groups of channels (V); channel: per-channel groups of tokens (K)" },
    ParamDef {
        name: "residual",
        default: Int(128),
        allowed: Range(16, MAX_RESIDUAL as u64),
        doc: "full-precision tokens: the K buffer is flushed when it holds this many, the V window keeps this many (cache model, MMU or host)",
    },
];

/// The rules between parameters that `validate` checks in code.
pub const KIVI_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "axis token: group divides head-dim, lanes divides group",
    "axis channel: lanes divides head-dim",
    "residual is a multiple of group (cache model)",
];

fn err<T>(msg: String) -> Result<T, ParamError> {
    Err(ParamError(msg))
}

/// One `kivi-quantizer` or `kivi-dequantizer` (spec §13.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct KiviParams {
    pub head_dim: usize,
    pub heads: usize,
    pub group: usize,
    pub bits: u32,
    pub lanes: usize,
    pub axis: Axis,
}

impl Default for KiviParams {
    fn default() -> Self {
        KiviParams { head_dim: 128, heads: 1, group: 32, bits: 2, lanes: 16, axis: Axis::Token }
    }
}

/// Codes per 32-bit word: `floor(32 / bits)` (spec §13.4).
pub fn codes_per_word(bits: u32) -> usize {
    WORD_BITS / bits as usize
}

/// Words holding one group of `group` codes: `ceil(group / codes_per_word)`.
pub fn words_per_group(bits: u32, group: usize) -> usize {
    group.div_ceil(codes_per_word(bits))
}

impl KiviParams {
    /// Checks every rule of spec §13.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        let t = KIVI_PARAMS;
        let c = |name: &str, v: usize| check(t, name, v).map_err(ParamError);
        c("head-dim", self.head_dim)?;
        c("heads", self.heads)?;
        crate::param_def::check_vector(self.heads, self.head_dim).map_err(ParamError)?;
        c("group", self.group)?;
        c("bits", self.bits as usize)?;
        c("lanes", self.lanes)?;
        def(t, "axis").check_name(&self.axis.to_string()).map_err(ParamError)?;
        match self.axis {
            Axis::Token => {
                if self.head_dim % self.group != 0 {
                    return err(format!(
                        "group ({}) must divide head-dim ({}) with axis token: a group never spans two heads",
                        self.group, self.head_dim
                    ));
                }
                if self.group % self.lanes != 0 {
                    return err(format!("lanes ({}) must divide group ({}) with axis token", self.lanes, self.group));
                }
            }
            Axis::Channel => {
                if self.head_dim % self.lanes != 0 {
                    return err(format!("lanes ({}) must divide head-dim ({}) with axis channel", self.lanes, self.head_dim));
                }
            }
        }
        Ok(())
    }

    /// Elements of one token vector.
    pub fn vector_len(&self) -> usize {
        self.heads * self.head_dim
    }

    pub fn codes_per_word(&self) -> usize {
        codes_per_word(self.bits)
    }

    pub fn words_per_group(&self) -> usize {
        words_per_group(self.bits, self.group)
    }

    /// Groups of one token vector (axis token) or of one block (axis
    /// channel: one per channel).
    pub fn groups(&self) -> usize {
        match self.axis {
            Axis::Token => self.vector_len() / self.group,
            Axis::Channel => self.vector_len(),
        }
    }

    /// Bits in memory per group: packed words and the metadata word.
    pub fn group_bits(&self) -> usize {
        WORD_BITS * self.words_per_group() + META_BITS
    }
}

/// The reference cache model's parameters (spec §13.7): K and V quantizers
/// sharing `head_dim`, `heads` and `group`, and the residual length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct KiviCacheParams {
    pub head_dim: usize,
    pub heads: usize,
    pub group: usize,
    pub bits_k: u32,
    pub bits_v: u32,
    pub residual: usize,
}

impl Default for KiviCacheParams {
    fn default() -> Self {
        KiviCacheParams { head_dim: 128, heads: 1, group: 32, bits_k: 2, bits_v: 2, residual: 128 }
    }
}

impl KiviCacheParams {
    /// The K quantizer (axis channel) and the V quantizer (axis token).
    pub fn unit(&self, axis: Axis) -> KiviParams {
        let bits = match axis {
            Axis::Channel => self.bits_k,
            Axis::Token => self.bits_v,
        };
        // lanes change no result: the largest legal power of two up to 16
        let lanes = 1usize << self.head_dim.trailing_zeros().min(self.group.trailing_zeros()).min(4);
        KiviParams { head_dim: self.head_dim, heads: self.heads, group: self.group, bits, lanes, axis }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.unit(Axis::Channel).validate()?;
        self.unit(Axis::Token).validate()?;
        check(KIVI_PARAMS, "residual", self.residual).map_err(ParamError)?;
        if self.residual % self.group != 0 {
            return err(format!(
                "residual ({}) must be a multiple of group ({}): a K flush quantizes residual / group whole blocks",
                self.residual, self.group
            ));
        }
        Ok(())
    }

    pub fn vector_len(&self) -> usize {
        self.heads * self.head_dim
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        KiviParams::default().validate().unwrap();
        KiviParams { axis: Axis::Channel, ..Default::default() }.validate().unwrap();
        KiviCacheParams::default().validate().unwrap();
        let p = KiviParams::default();
        // 16 two-bit codes per word; a group of 32 is two words and a metadata word
        assert_eq!((p.codes_per_word(), p.words_per_group(), p.group_bits(), p.groups()), (16, 2, 96, 4));
        assert_eq!((codes_per_word(3), words_per_group(3, 32)), (10, 4));
        assert_eq!((codes_per_word(8), words_per_group(8, 16)), (4, 4));
    }

    #[test]
    fn rejects_each_rule_in_one_line() {
        let bad = |f: &dyn Fn(&mut KiviParams)| {
            let mut p = KiviParams::default();
            f(&mut p);
            let e = p.validate().unwrap_err().0;
            assert!(!e.contains('\n'));
            e
        };
        assert_eq!(bad(&|p| p.bits = 1), "bits must be one of 2, 3, 4, 8, got 1");
        assert_eq!(bad(&|p| p.bits = 5), "bits must be one of 2, 3, 4, 8, got 5");
        assert_eq!(bad(&|p| p.group = 24), "group must be a power of two in 16..=128, got 24");
        assert_eq!(bad(&|p| p.group = 256), "group must be a power of two in 16..=128, got 256");
        assert!(bad(&|p| { p.head_dim = 96; p.group = 64 }).starts_with("group (64) must divide head-dim (96)"));
        assert!(bad(&|p| { p.group = 16; p.lanes = 32 }).starts_with("lanes (32) must divide group (16)"));
        assert!(bad(&|p| p.lanes = 12).starts_with("lanes must be a power of two"));
        assert!(bad(&|p| p.head_dim = 0).starts_with("head-dim must be in 1..=1024"));
        assert!(bad(&|p| { p.heads = 9; p.head_dim = 1024 }).contains("8192"));
        // axis channel groups tokens: head-dim need not be a multiple of group
        KiviParams { head_dim: 96, group: 64, axis: Axis::Channel, ..Default::default() }.validate().unwrap();
        assert!(bad(&|p| { p.axis = Axis::Channel; p.head_dim = 24 }).starts_with("lanes (16) must divide head-dim (24)"));
        let c = KiviCacheParams { residual: 48, ..Default::default() };
        assert!(c.validate().unwrap_err().0.starts_with("residual (48) must be a multiple of group (32)"));
        let c = KiviCacheParams { residual: 8, ..Default::default() };
        assert_eq!(c.validate().unwrap_err().0, "residual must be in 16..=4096, got 8");
        let c = KiviCacheParams { bits_k: 1, ..Default::default() };
        assert_eq!(c.validate().unwrap_err().0, "bits must be one of 2, 3, 4, 8, got 1");
    }
}
