//! Titanus unit parameters and the per-layer configuration table.
//! Paper: Titanus (GLSVLSI 2025) §4.3 (pruning configuration), §4.4
//! (quantization configuration). Spec: docs/spec.md §11.1, §11.3.

use crate::oaken::thresholds::Kv;
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

impl TitanusParams {
    /// Checks every rule of spec §11.1; the message is one line.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.channels == 0 || self.channels > MAX_CHANNELS {
            return err(format!("channels must be in 1..={MAX_CHANNELS}, got {}", self.channels));
        }
        if self.lanes == 0 || !self.lanes.is_power_of_two() || self.lanes > MAX_LANES {
            return err(format!("lanes must be a power of two in 1..={MAX_LANES}, got {}", self.lanes));
        }
        if !self.channels.is_multiple_of(self.lanes) {
            return err(format!("lanes ({}) must divide channels ({})", self.lanes, self.channels));
        }
        if self.layers == 0 || self.layers > MAX_LAYERS {
            return err(format!("layers must be in 1..={MAX_LAYERS}, got {}", self.layers));
        }
        if self.max_levels == 0 || self.max_levels > MAX_LEVELS {
            return err(format!("max-levels must be in 1..={MAX_LEVELS}, got {}", self.max_levels));
        }
        if self.max_prefill == 0 || self.max_prefill > MAX_PREFILL {
            return err(format!("max-prefill must be in 1..={MAX_PREFILL}, got {}", self.max_prefill));
        }
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
