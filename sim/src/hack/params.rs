//! HACK parameters and their legal ranges (docs/spec.md §15.1).

use crate::param_def::{check, def, Allowed::*, ParamDef, Value::*};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::kivi::params::{Axis, ParamError};

/// Rounding of a code (spec §15.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// Nearest grid index, ties up (the default).
    #[default]
    Nearest,
    /// Down or up with probability given by the LFSR word (spec §15.4).
    Stochastic,
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rounding::Nearest => "nearest",
            Rounding::Stochastic => "stochastic",
        })
    }
}

impl std::str::FromStr for Rounding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "nearest" => Ok(Rounding::Nearest),
            "stochastic" => Ok(Rounding::Stochastic),
            _ => Err(format!("unknown variant `{s}`: rounding must be one of nearest, stochastic")),
        }
    }
}

pub const MAX_HEAD_DIM: usize = 1024;
pub const MAX_PARTITION: usize = 256;
/// Largest context a `hack-pv-dot` accumulates (sets its accumulator width).
pub const MAX_TOKENS: usize = 65536;
/// Default LFSR seed (spec §15.4).
pub const DEFAULT_SEED: u16 = 0xACE1;

/// The parameters of spec §15.1: `validate` reads its ranges from here.
pub const HACK_PARAMS: &[ParamDef] = &[
    ParamDef { name: "head-dim", default: Int(128), allowed: Range(16, MAX_HEAD_DIM as u64), doc: "elements per attention head" },
    ParamDef { name: "partition", default: Int(64), allowed: Range(16, MAX_PARTITION as u64), doc: "elements per partition (the paper's Pi), a multiple of 16: channels of a K or Q token, tokens of a V channel or of P" },
    ParamDef { name: "kv-bits", default: Int(2), allowed: Ints(&[2, 3, 4, 8]), doc: "code width of K and V" },
    ParamDef { name: "qp-bits", default: Int(8), allowed: Ints(&[4, 8]), doc: "code width of Q and P" },
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, 256), doc: "elements per clock cycle of a hack-quantizer; a dot unit takes one partition per cycle" },
    ParamDef { name: "axis", default: Name("token"), allowed: Names(&["token", "channel"]), doc: "token: partitions of consecutive elements of one vector (K, Q, P); channel: a block of partition tokens, one partition per channel (V)" },
    ParamDef { name: "rounding", default: Name("nearest"), allowed: Names(&["nearest", "stochastic"]), doc: "nearest (ties up) or stochastic with the LFSR of spec 15.4" },
    ParamDef { name: "seed", default: Int(DEFAULT_SEED as u64), allowed: Range(1, 65535), doc: "LFSR state after reset; never 0" },
];

/// The rules between parameters that `validate` checks in code.
pub const HACK_RULES: &[&str] = &[
    "partition is a multiple of 16",
    "K axis: partition <= head-dim and partition divides head-dim",
    "lanes divides partition",
];

fn err<T>(msg: String) -> Result<T, ParamError> {
    Err(ParamError(msg))
}

/// One HACK datapath: the three units share these (spec §15.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct HackParams {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: u32,
    pub qp_bits: u32,
    pub lanes: usize,
    pub rounding: Rounding,
    pub seed: u16,
}

impl Default for HackParams {
    fn default() -> Self {
        HackParams { head_dim: 128, partition: 64, kv_bits: 2, qp_bits: 8, lanes: 16, rounding: Rounding::Nearest, seed: DEFAULT_SEED }
    }
}

/// Bits of a partition's code sum: `b + ceil(log2 Pi)` (spec §15.5).
pub fn sum_bits(bits: u32, partition: usize) -> u32 {
    bits + partition.next_power_of_two().trailing_zeros()
}

impl HackParams {
    /// Checks every rule of spec §15.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        let t = HACK_PARAMS;
        let c = |name: &str, v: usize| check(t, name, v).map_err(ParamError);
        c("head-dim", self.head_dim)?;
        c("partition", self.partition)?;
        if !self.partition.is_multiple_of(16) {
            return err(format!("partition must be a multiple of 16 (paper §5.3), got {}", self.partition));
        }
        if self.partition > self.head_dim {
            return err(format!(
                "partition ({}) must be at most head-dim ({}) on the K axis: a K partition is partition channels of one token",
                self.partition, self.head_dim
            ));
        }
        if !self.head_dim.is_multiple_of(self.partition) {
            return err(format!(
                "partition ({}) must divide head-dim ({}) on the K axis: a partition never spans two heads",
                self.partition, self.head_dim
            ));
        }
        c("kv-bits", self.kv_bits as usize)?;
        c("qp-bits", self.qp_bits as usize)?;
        c("lanes", self.lanes)?;
        if !self.partition.is_multiple_of(self.lanes) {
            return err(format!("lanes ({}) must divide partition ({})", self.lanes, self.partition));
        }
        def(t, "rounding").check_name(&self.rounding.to_string()).map_err(ParamError)?;
        c("seed", self.seed as usize)?;
        Ok(())
    }

    /// Partitions of one K or Q token.
    pub fn parts(&self) -> usize {
        self.head_dim / self.partition
    }

    /// Memory bits per K or closed-V element: codes, FP16 scale and min
    /// per partition, and the code sum when `sums` (spec §15.5).
    pub fn bits_per_element(&self, sums: bool) -> f64 {
        let per_part = self.kv_bits as usize * self.partition + 32 + if sums { sum_bits(self.kv_bits, self.partition) as usize } else { 0 };
        per_part as f64 / self.partition as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bits() {
        HackParams::default().validate().unwrap();
        assert_eq!(sum_bits(2, 64), 8);
        assert_eq!(sum_bits(2, 128), 9);
        assert_eq!(sum_bits(8, 48), 14);
        let p = HackParams::default();
        assert_eq!((p.bits_per_element(true), p.bits_per_element(false)), (2.625, 2.5));
    }

    #[test]
    fn rejects_each_rule_in_one_line() {
        let bad = |f: &dyn Fn(&mut HackParams)| {
            let mut p = HackParams::default();
            f(&mut p);
            let e = p.validate().unwrap_err().0;
            assert!(!e.contains('\n'));
            e
        };
        assert_eq!(bad(&|p| p.partition = 40), "partition must be a multiple of 16 (paper §5.3), got 40");
        assert_eq!(bad(&|p| p.partition = 8), "partition must be in 16..=256, got 8");
        assert!(bad(&|p| { p.head_dim = 64; p.partition = 128 }).starts_with("partition (128) must be at most head-dim (64) on the K axis"));
        assert!(bad(&|p| { p.head_dim = 96; p.partition = 64 }).starts_with("partition (64) must divide head-dim (96)"));
        assert_eq!(bad(&|p| p.kv_bits = 1), "kv-bits must be one of 2, 3, 4, 8, got 1");
        assert_eq!(bad(&|p| p.qp_bits = 2), "qp-bits must be one of 4, 8, got 2");
        assert!(bad(&|p| { p.partition = 16; p.lanes = 32 }).starts_with("lanes (32) must divide partition (16)"));
        assert_eq!(bad(&|p| p.seed = 0), "seed must be in 1..=65535, got 0");
        HackParams { head_dim: 96, partition: 48, ..Default::default() }.validate().unwrap();
    }
}
