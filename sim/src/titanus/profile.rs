//! Offline pruning-threshold profiling and the Titanus configuration file
//! (per-layer K/V threshold and bit width).
//! Paper: Titanus (GLSVLSI 2025) §3.3 (per-layer, per-K/V pruning thresholds
//! and bit widths found offline), §4.3 (pruning configuration).
//! Spec: docs/spec.md §11.10.

use super::int8::Int8Set;
use super::params::{ConfigTable, LayerConfig, BITS};
use crate::kvset::{kv_name, KVS};
use crate::oaken::profile::KvTag;
use crate::oaken::thresholds::Kv;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FORMAT: &str = "kvforge-titanus-config-1";

/// `hist[m]` = number of elements with `|x| = m`, `m` in 0..=128.
pub fn magnitude_histogram(values: impl IntoIterator<Item = i8>) -> [u64; 129] {
    let mut h = [0u64; 129];
    for x in values {
        h[x.unsigned_abs() as usize] += 1;
    }
    h
}

/// Elements the pruner removes at threshold `t`: zeros, and `|x| < t`.
pub fn pruned_count(h: &[u64; 129], t: u8) -> u64 {
    h[0] + h[1..(t as usize).clamp(1, 129)].iter().sum::<u64>()
}

/// The threshold in 0..=129 whose pruned fraction is nearest `ratio`
/// (distance `|pruned - ratio * n|` in f64), the smaller on a tie.
pub fn threshold_for(h: &[u64; 129], ratio: f64) -> u8 {
    let n: u64 = h.iter().sum();
    let target = ratio * n as f64;
    let mut best = (0u8, f64::INFINITY);
    for t in 0..=129u8 {
        let d = (pruned_count(h, t) as f64 - target).abs();
        if d < best.1 {
            best = (t, d);
        }
    }
    best.0
}

/// One table write of the configuration file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub layer: usize,
    pub kv: KvTag,
    pub threshold: u8,
    pub bits: u8,
    /// The profiled fraction of pruned elements, for people (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<f64>,
}

/// The configuration file (spec §11.10).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub format: String,
    pub layers: usize,
    pub entries: Vec<Entry>,
}

/// Profiles every (layer, K/V) of `set` over all its runs and tokens.
/// `ratio[kv]` is the target pruned fraction, `bits[kv]` the width written
/// beside it.
pub fn profile(set: &Int8Set, ratio: [f64; 2], bits: [u8; 2]) -> Result<ConfigFile, String> {
    for kv in KVS {
        let r = ratio[kv as usize];
        if !(0.0..=1.0).contains(&r) {
            return Err(format!("pruning ratio of {} must be in [0, 1], got {r}", kv_name(kv)));
        }
        if !BITS.contains(&bits[kv as usize]) {
            return Err(format!("bit width of {} must be 2, 3 or 4, got {}", kv_name(kv), bits[kv as usize]));
        }
    }
    let mut entries = Vec::new();
    for layer in 0..set.layers {
        for kv in KVS {
            let h =
                magnitude_histogram((0..set.runs).flat_map(|run| set.tensor(run, layer, kv).iter().copied()));
            let t = threshold_for(&h, ratio[kv as usize]);
            let n: u64 = h.iter().sum();
            let pruned = pruned_count(&h, t) as f64 / n as f64;
            entries.push(Entry {
                layer,
                kv: kv.into(),
                threshold: t,
                bits: bits[kv as usize],
                pruned: Some(pruned),
            });
        }
    }
    Ok(ConfigFile { format: FORMAT.into(), layers: set.layers, entries })
}

impl ConfigFile {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("config serialises") + "\n"
    }

    pub fn from_json(s: &str) -> Result<ConfigFile, String> {
        let f: ConfigFile = serde_json::from_str(s).map_err(|e| format!("titanus config: {e}"))?;
        if f.format != FORMAT {
            return Err(format!("titanus config: format is '{}', expected '{FORMAT}'", f.format));
        }
        if f.layers == 0 || f.layers > super::params::MAX_LAYERS {
            return Err(format!(
                "titanus config: layers must be in 1..={}, got {}",
                super::params::MAX_LAYERS,
                f.layers
            ));
        }
        let mut seen = vec![[false; 2]; f.layers];
        for e in &f.entries {
            let kv: Kv = e.kv.into();
            let name = format!("layer {} {}", e.layer, kv_name(kv));
            if e.layer >= f.layers {
                return Err(format!("titanus config: entry for {name} but layers is {}", f.layers));
            }
            if std::mem::replace(&mut seen[e.layer][kv as usize], true) {
                return Err(format!("titanus config: two entries for {name}"));
            }
            if !BITS.contains(&e.bits) {
                return Err(format!("titanus config: {name}: bits must be 2, 3 or 4, got {}", e.bits));
            }
        }
        for (layer, s) in seen.iter().enumerate() {
            for kv in KVS {
                if !s[kv as usize] {
                    return Err(format!("titanus config: no entry for layer {layer} {}", kv_name(kv)));
                }
            }
        }
        Ok(f)
    }

    pub fn read(path: &Path) -> Result<ConfigFile, String> {
        let s = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        ConfigFile::from_json(&s).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        std::fs::write(path, self.to_json()).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The table after one write per entry.
    pub fn table(&self) -> Result<ConfigTable, String> {
        let mut t = ConfigTable::new(self.layers);
        for e in &self.entries {
            t.write(e.layer, e.kv.into(), LayerConfig { threshold: e.threshold, bits: e.bits })
                .map_err(|err| format!("layer {} {}: {err}", e.layer, kv_name(e.kv.into())))?;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_reaches_the_nearest_ratio() {
        // 10 elements: |x| = 0, 1, 1, 2, 3, 3, 3, 5, 128, 7
        let h = magnitude_histogram([0, 1, -1, 2, 3, -3, 3, 5, -128, 7]);
        assert_eq!(pruned_count(&h, 0), 1);
        assert_eq!(pruned_count(&h, 1), 1);
        assert_eq!(pruned_count(&h, 2), 3);
        assert_eq!(pruned_count(&h, 4), 7);
        assert_eq!(pruned_count(&h, 128), 9);
        assert_eq!(pruned_count(&h, 129), 10);
        assert_eq!(pruned_count(&h, 255), 10);
        assert_eq!(threshold_for(&h, 0.0), 0);
        assert_eq!(threshold_for(&h, 0.3), 2); // 3 of 10
        assert_eq!(threshold_for(&h, 0.5), 3); // 4 (t=3) and 7 (t=4): |4-5| < |7-5|
        assert_eq!(threshold_for(&h, 0.55), 3); // 4 vs 7: 1.5 < 1.5? no: tie -> smaller
        assert_eq!(threshold_for(&h, 1.0), 129);
    }

    #[test]
    fn config_file_round_trips_and_rejects_bad_files() {
        let set = Int8Set {
            runs: 1,
            layers: 2,
            tokens: 2,
            channels: 2,
            data: vec![1, -2, 3, 4, 5, 6, 7, 8, -9, 10, 11, 12, 0, 0, 1, 1],
            amax: None,
        };
        let f = profile(&set, [0.5, 0.25], [3, 2]).unwrap();
        assert_eq!(ConfigFile::from_json(&f.to_json()).unwrap(), f);
        assert_eq!(f.entries[0].threshold, 3); // |1|,|2| of 1,2,3,4
        let t = f.table().unwrap();
        assert_eq!(t.lookup(1, Kv::V).0.bits, 2);
        let bad = f.to_json().replace("\"bits\": 2", "\"bits\": 5");
        assert!(ConfigFile::from_json(&bad).unwrap_err().contains("bits must be"));
        assert!(profile(&set, [1.5, 0.0], [3, 3]).is_err());
        assert!(profile(&set, [0.5, 0.0], [3, 1]).is_err());
    }
}
