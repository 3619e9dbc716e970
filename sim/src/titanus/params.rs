//! Titanus unit parameters and the per-layer configuration table.
//! Paper: Titanus (GLSVLSI 2025) §4.3 (pruning configuration), §4.4
//! (quantization configuration). Spec: docs/spec.md §11.1, §11.3.

use crate::oaken::thresholds::Kv;
use crate::param_def::{check, Allowed::*, ParamDef, Value::*};
use std::fmt;

pub const MAX_CHANNELS: usize = 1024;
pub const MAX_LANES: usize = 64;
pub const MAX_LAYERS: usize = 256;
/// Levels per channel: a level number is 4 bits (§11.6).
pub const MAX_LEVELS: usize = 16;
/// Token positions are 16 bits (the start field of a scale-zero entry).
pub const MAX_POSITIONS: usize = 1 << 16;
pub const MAX_PREFILL: usize = 4096;
/// Bit widths the configuration table accepts (§11.3).
pub const BITS: [u8; 3] = [2, 3, 4];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TitanusParams {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub max_levels: usize,
    pub max_prefill: usize,
}

impl Default for TitanusParams {
    fn default() -> Self {
        TitanusParams { channels: 128, lanes: 16, layers: 32, max_levels: 16, max_prefill: 1024 }
    }
}

/// The one-line parameter error shared with the Oaken units.
pub use crate::oaken::params::ParamError;

fn err<T>(msg: String) -> Result<T, ParamError> {
    Err(ParamError(msg))
}

/// The parameters of spec §11.1: `validate` reads its ranges from here.
pub const TITANUS_PARAMS: &[ParamDef] = &[
    ParamDef { name: "channels", default: Int(128), allowed: Range(1, MAX_CHANNELS as u64), doc: "channels of one K or V token vector" },
    ParamDef { name: "lanes", default: Int(16), allowed: Pow2(1, MAX_LANES as u64), doc: "channels per beat" },
    ParamDef { name: "layers", default: Int(32), allowed: Range(1, MAX_LAYERS as u64), doc: "configuration table depth in decoder layers" },
    ParamDef {
        name: "max-levels",
        default: Int(16),
        allowed: Range(1, MAX_LEVELS as u64),
        doc: "scale-zero levels kept per channel",
    },
    ParamDef {
        name: "max-prefill",
        default: Int(1024),
        allowed: Range(1, MAX_PREFILL as u64),
        doc: "prefill tokens the quantizer buffers",
    },
];

/// The rules between parameters that `validate` checks in code.
pub const TITANUS_RULES: &[&str] = &["lanes divides channels"];

impl TitanusParams {
    /// Checks every rule of spec §11.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        let c = |name: &str, v: usize| check(TITANUS_PARAMS, name, v).map_err(ParamError);
        c("channels", self.channels)?;
        c("lanes", self.lanes)?;
        if !self.channels.is_multiple_of(self.lanes) {
            return err(format!("lanes ({}) must divide channels ({})", self.lanes, self.channels));
        }
        c("layers", self.layers)?;
        c("max-levels", self.max_levels)?;
        c("max-prefill", self.max_prefill)?;
        Ok(())
    }

    pub fn beats(&self) -> usize {
        self.channels / self.lanes
    }
}

/// One entry of the configuration table: the pruning threshold and the
/// quantization bit width of a (layer, K/V).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerConfig {
    pub threshold: u8,
    pub bits: u8,
}

impl Default for LayerConfig {
    /// Reset value: prune only zeros, 4 bits.
    fn default() -> Self {
        LayerConfig { threshold: 0, bits: 4 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    LayerOutOfRange,
    BadBits,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::LayerOutOfRange => f.write_str("layer out of range"),
            TableError::BadBits => f.write_str("bit width must be 2, 3 or 4"),
        }
    }
}

/// `layers x {K, V}` entries, written whole through the table-write port
/// (spec §11.3). A rejected write leaves the table unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigTable {
    entries: Vec<[LayerConfig; 2]>,
}

impl ConfigTable {
    pub fn new(layers: usize) -> ConfigTable {
        ConfigTable { entries: vec![[LayerConfig::default(); 2]; layers] }
    }

    pub fn layers(&self) -> usize {
        self.entries.len()
    }

    pub fn write(&mut self, layer: usize, kv: Kv, c: LayerConfig) -> Result<(), TableError> {
        if layer >= self.entries.len() {
            return Err(TableError::LayerOutOfRange);
        }
        if !BITS.contains(&c.bits) {
            return Err(TableError::BadBits);
        }
        self.entries[layer][kv as usize] = c;
        Ok(())
    }

    /// A layer past the table reads layer 0 and reports it (`layer_oob`).
    pub fn lookup(&self, layer: usize, kv: Kv) -> (LayerConfig, bool) {
        match self.entries.get(layer) {
            Some(e) => (e[kv as usize], false),
            None => (self.entries[0][kv as usize], true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_legal() {
        TitanusParams::default().validate().unwrap();
    }

    #[test]
    fn bad_parameters_get_one_line_errors() {
        let d = TitanusParams::default();
        let bad = [
            TitanusParams { channels: 0, ..d },
            TitanusParams { channels: 2048, ..d },
            TitanusParams { lanes: 3, ..d },
            TitanusParams { lanes: 128, ..d },
            TitanusParams { channels: 24, lanes: 16, ..d },
            TitanusParams { layers: 0, ..d },
            TitanusParams { layers: 257, ..d },
            TitanusParams { max_levels: 0, ..d },
            TitanusParams { max_levels: 17, ..d },
            TitanusParams { max_prefill: 0, ..d },
            TitanusParams { max_prefill: 4097, ..d },
        ];
        for p in bad {
            let e = p.validate().unwrap_err().0;
            assert!(!e.contains('\n') && !e.is_empty(), "{e}");
        }
        TitanusParams { channels: 4, lanes: 4, layers: 1, max_levels: 1, max_prefill: 1 }.validate().unwrap();
    }

    #[test]
    fn table_rejects_bad_writes_and_keeps_contents() {
        let mut t = ConfigTable::new(2);
        t.write(1, Kv::V, LayerConfig { threshold: 9, bits: 2 }).unwrap();
        assert_eq!(
            t.write(2, Kv::K, LayerConfig { threshold: 1, bits: 3 }),
            Err(TableError::LayerOutOfRange)
        );
        for bits in [0, 1, 5, 8, 255] {
            assert_eq!(t.write(1, Kv::V, LayerConfig { threshold: 1, bits }), Err(TableError::BadBits));
        }
        assert_eq!(t.lookup(1, Kv::V), (LayerConfig { threshold: 9, bits: 2 }, false));
        assert_eq!(t.lookup(0, Kv::K), (LayerConfig { threshold: 0, bits: 4 }, false));
        assert_eq!(t.lookup(7, Kv::V), (LayerConfig { threshold: 0, bits: 4 }, true));
    }
}
