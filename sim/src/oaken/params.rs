//! Oaken engine parameters and their legal ranges (docs/spec.md §2.1).

use crate::param_def::{check, def, Allowed::*, ParamDef, Value::*};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How the middle (inlier) group is coded (spec §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MiddleMode {
    /// No group shift: uniform code of x over [min, max] of the group.
    Plain,
    /// Group shift by the inner thresholds: side bit + (inlier_bits-1)-bit
    /// magnitude code.
    Shifted,
    /// The authors' reference: the middle and the outer group both shifted
    /// by their thresholds onto one folded range, one uniform grid, the side
    /// read from the sign of the decoded value (spec §2.5).
    Paper,
}

impl fmt::Display for MiddleMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MiddleMode::Plain => "plain",
            MiddleMode::Shifted => "shifted",
            MiddleMode::Paper => "paper",
        })
    }
}

impl std::str::FromStr for MiddleMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "plain" => Ok(MiddleMode::Plain),
            "shifted" => Ok(MiddleMode::Shifted),
            "paper" => Ok(MiddleMode::Paper),
            _ => Err(format!("middle mode must be 'plain', 'shifted' or 'paper', got '{s}'")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct OakenParams {
    /// Elements per attention head.
    pub head_dim: usize,
    /// Heads per token vector: one token's vector is `heads * head_dim`
    /// elements, quantized as a whole (one metadata word, spec §2.9).
    pub heads: usize,
    /// Elements accepted per clock cycle.
    pub lanes: usize,
    /// Dense slot width and middle-group code width.
    pub inlier_bits: u32,
    /// Outer/inner code width; must be inlier_bits + 1.
    pub outlier_bits: u32,
    /// Threshold table depth (decoder layers). The default, 1, holds the
    /// current layer's K and V sets, rewritten per layer: Oaken §5.2's
    /// streamed thresholds (spec §2.1).
    pub layers: usize,
    pub middle_mode: MiddleMode,
}

impl Default for OakenParams {
    fn default() -> Self {
        OakenParams {
            head_dim: 128,
            heads: 1,
            lanes: 16,
            inlier_bits: 4,
            outlier_bits: 5,
            layers: 1,
            middle_mode: MiddleMode::Plain,
        }
    }
}

/// Elements addressed by one COO list: the 6-bit COO index (spec §2.8).
pub const SEGMENT: usize = 64;
pub const MAX_HEAD_DIM: usize = 1024;
pub const MAX_HEADS: usize = 64;
pub use crate::param_def::MAX_VECTOR;
/// The stored metadata word: six FP16 fields (spec §2.9).
pub const META_BITS: usize = 96;
pub const MAX_LANES: usize = 64;
pub const MAX_LAYERS: usize = 256;

/// The three quantization groups, in metadata order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    Outer = 0,
    Middle = 1,
    Inner = 2,
}

pub const GROUPS: [Group; 3] = [Group::Outer, Group::Middle, Group::Inner];

/// The three ways a group codes its values (spec §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeKind {
    /// A uniform code of x itself.
    Plain,
    /// `|x - T_side|`, a magnitude code, with the side as the code's top bit.
    SideMagnitude,
    /// `x - T_side` (negative on the lower side), one uniform code over the
    /// folded range; the side is the sign of the decoded value.
    Folded,
}

/// How one group turns a value into a code (spec §2.5, table "group coding").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coding {
    pub kind: CodeKind,
    /// Bits of the uniform code; the divisor is 2^mag_bits - 1. A
    /// side-magnitude code is one bit wider.
    pub mag_bits: u32,
}

impl Coding {
    pub fn levels_minus_one(&self) -> u64 {
        (1u64 << self.mag_bits) - 1
    }

    /// The group is shifted by its thresholds (side-magnitude or folded).
    pub fn shifted(&self) -> bool {
        self.kind != CodeKind::Plain
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

fn err<T>(msg: String) -> Result<T, ParamError> {
    Err(ParamError(msg))
}

/// The parameters of spec §2.1: `validate` reads its ranges from here.
pub const OAKEN_PARAMS: &[ParamDef] = &[
    ParamDef { name: "head-dim", default: Int(128), allowed: Range(1, MAX_HEAD_DIM as u64), doc: "elements per attention head" },
    ParamDef {
        name: "heads",
        default: Int(1),
        allowed: Range(1, MAX_HEADS as u64),
        doc: "heads per token vector, quantized as a whole (one metadata word)",
    },
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, MAX_LANES as u64), doc: "elements accepted per clock cycle" },
    ParamDef { name: "inlier-bits", default: Int(4), allowed: Range(2, 8), doc: "dense slot width and middle-group code width" },
    ParamDef { name: "outlier-bits", default: Int(5), allowed: Range(3, 9), doc: "outer and inner group code width" },
    ParamDef {
        name: "layers",
        default: Int(1),
        allowed: Range(1, MAX_LAYERS as u64),
        doc: "threshold table depth in decoder layers (1: the current layer's sets, rewritten per layer)",
    },
    ParamDef {
        name: "middle-mode",
        default: Name("plain"),
        allowed: Names(&["plain", "shifted", "paper"]),
        doc: "middle group: a plain uniform code; shifted by the inner thresholds (side bit + magnitude); or paper (middle and outer groups on the authors' folded grid, the side read from the decoded sign)",
    },
];

/// The rules between parameters that `validate` checks in code.
pub const OAKEN_RULES: &[&str] = &[
    "heads x head-dim <= 8192",
    "lanes divides head-dim",
    "outlier-bits = inlier-bits + 1",
    "middle-mode shifted needs inlier-bits >= 3",
];

impl OakenParams {
    /// Checks every rule of spec §2.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        let t = OAKEN_PARAMS;
        let c = |name: &str, v: usize| check(t, name, v).map_err(ParamError);
        c("head-dim", self.head_dim)?;
        c("heads", self.heads)?;
        crate::param_def::check_vector(self.heads, self.head_dim).map_err(ParamError)?;
        c("lanes", self.lanes)?;
        if self.head_dim % self.lanes != 0 {
            return err(format!(
                "lanes ({}) must divide head-dim ({})",
                self.lanes, self.head_dim
            ));
        }
        c("inlier-bits", self.inlier_bits as usize)?;
        c("outlier-bits", self.outlier_bits as usize)?;
        if self.outlier_bits != self.inlier_bits + 1 {
            return err(format!(
                "outlier-bits must equal inlier-bits + 1 ({}) because the fused encoding keeps all but one outlier bit in the {}-bit dense slot, got {}",
                self.inlier_bits + 1,
                self.inlier_bits,
                self.outlier_bits
            ));
        }
        def(t, "middle-mode").check_name(&self.middle_mode.to_string()).map_err(ParamError)?;
        if self.middle_mode == MiddleMode::Shifted && self.inlier_bits < 3 {
            return err(format!(
                "middle-mode shifted needs inlier-bits >= 3 (one bit is the side, at least two code the magnitude), got {}",
                self.inlier_bits
            ));
        }
        c("layers", self.layers)?;
        Ok(())
    }

    /// Elements of one token vector.
    pub fn vector_len(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Beats of one token vector (all heads).
    pub fn beats(&self) -> usize {
        self.vector_len() / self.lanes
    }

    /// Beats of one head.
    pub fn head_beats(&self) -> usize {
        self.head_dim / self.lanes
    }

    /// COO segments of one head.
    pub fn segments(&self) -> usize {
        self.head_dim.div_ceil(SEGMENT)
    }

    /// Bytes of one head's dense slots in memory (spec §2.9).
    pub fn dense_bytes(&self) -> usize {
        (self.head_dim * self.inlier_bits as usize).div_ceil(8)
    }

    /// Elements in segment `s` (the last one may be short).
    pub fn segment_len(&self, s: usize) -> usize {
        (self.head_dim - s * SEGMENT).min(SEGMENT)
    }

    /// Width of the per-token metadata word (spec §2.9).
    pub fn meta_bits(&self) -> usize {
        META_BITS
    }

    /// Width of one head's segment counts (spec §2.9), 8 bits per segment.
    pub fn count_bits(&self) -> usize {
        8 * self.segments()
    }

    pub fn coding(&self, g: Group) -> Coding {
        match g {
            Group::Outer => match self.middle_mode {
                MiddleMode::Paper => Coding { kind: CodeKind::Folded, mag_bits: self.outlier_bits },
                _ => Coding { kind: CodeKind::SideMagnitude, mag_bits: self.inlier_bits },
            },
            Group::Middle => match self.middle_mode {
                MiddleMode::Plain => Coding { kind: CodeKind::Plain, mag_bits: self.inlier_bits },
                MiddleMode::Shifted => Coding { kind: CodeKind::SideMagnitude, mag_bits: self.inlier_bits - 1 },
                MiddleMode::Paper => Coding { kind: CodeKind::Folded, mag_bits: self.inlier_bits },
            },
            Group::Inner => Coding { kind: CodeKind::Plain, mag_bits: self.outlier_bits },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        OakenParams::default().validate().unwrap();
        assert_eq!(OakenParams::default().meta_bits(), 96);
        assert_eq!(OakenParams::default().dense_bytes(), 64);
        let llama = OakenParams { heads: 32, ..Default::default() };
        llama.validate().unwrap();
        assert_eq!((llama.vector_len(), llama.beats(), llama.head_beats()), (4096, 256, 8));
    }

    #[test]
    fn rejects_each_rule() {
        let bad = |f: &dyn Fn(&mut OakenParams)| {
            let mut p = OakenParams::default();
            f(&mut p);
            p.validate().unwrap_err()
        };
        assert!(bad(&|p| p.lanes = 12).0.contains("power of two"));
        assert!(bad(&|p| p.lanes = 0).0.contains("power of two"));
        assert!(bad(&|p| { p.head_dim = 96; p.lanes = 64 }).0.contains("divide"));
        assert!(bad(&|p| p.inlier_bits = 0).0.contains("inlier-bits"));
        assert!(bad(&|p| p.outlier_bits = 6).0.contains("inlier-bits + 1"));
        assert!(bad(&|p| p.layers = 0).0.contains("layers"));
        assert!(bad(&|p| { p.inlier_bits = 2; p.outlier_bits = 3; p.middle_mode = MiddleMode::Shifted }).0.contains(">= 3"));
        assert!(bad(&|p| p.head_dim = 0).0.contains("head-dim"));
        assert!(bad(&|p| p.heads = 0).0.contains("heads"));
        assert!(bad(&|p| p.heads = 65).0.contains("heads"));
        assert!(bad(&|p| { p.heads = 9; p.head_dim = 1024 }).0.contains("8192"));
        for p in [bad(&|p| p.lanes = 12), bad(&|p| p.outlier_bits = 6)] {
            assert!(!p.0.contains('\n'));
        }
    }

    #[test]
    fn segments() {
        let mut p = OakenParams { head_dim: 96, ..Default::default() };
        assert_eq!(p.segments(), 2);
        assert_eq!(p.segment_len(1), 32);
        p.head_dim = 128;
        assert_eq!(p.segment_len(1), 64);
    }
}
