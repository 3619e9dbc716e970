//! The INT8 KV set Titanus takes, and the conversion of FP16 sets to it.
//! Paper: Titanus (GLSVLSI 2025) §3.1 and §5.1 (INT8 KV of a W8A8
//! SmoothQuant model). Spec: docs/spec.md §11.2.

use crate::fp16;
use crate::kvset::KvSet;
use crate::npy::{self, NpyData};
use crate::oaken::thresholds::Kv;
use std::path::Path;

/// INT8 values of shape (runs, layers, 2, tokens, channels), C order, index 2
/// being 0 for K and 1 for V; and, for a set converted from FP16, the
/// per-tensor scale of each (run, layer, K/V) as `amax`, the largest
/// magnitude in FP16 units (2^-24): value = code * amax / 127.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Int8Set {
    pub runs: usize,
    pub layers: usize,
    pub tokens: usize,
    pub channels: usize,
    pub data: Vec<i8>,
    pub amax: Option<Vec<i64>>,
}

/// Per-tensor symmetric conversion of one tensor's FP16 patterns (spec
/// §11.2): sanitise, `amax = max |x|`, `q = sign(x) floor((254|x| + amax) /
/// (2 amax))`, i.e. `round(127 x / amax)` with ties away from zero. Exact in
/// units; `amax = 0` gives all zeros.
pub fn convert_tensor(values: &[u16]) -> (Vec<i8>, i64) {
    let units: Vec<i64> = values.iter().map(|&x| fp16::to_units(fp16::sanitize(x).0)).collect();
    let amax = units.iter().map(|u| u.abs()).max().unwrap_or(0);
    if amax == 0 {
        return (vec![0; values.len()], 0);
    }
    let q = units
        .iter()
        .map(|&u| {
            let m = (254 * u.abs() as i128 + amax as i128) / (2 * amax as i128);
            (if u < 0 { -m } else { m }) as i8
        })
        .collect();
    (q, amax)
}

impl Int8Set {
    fn offset(&self, run: usize, layer: usize, kv: Kv) -> usize {
        ((run * self.layers + layer) * 2 + kv as usize) * self.tokens * self.channels
    }

    /// All tokens x channels of one (run, layer, K/V).
    pub fn tensor(&self, run: usize, layer: usize, kv: Kv) -> &[i8] {
        let o = self.offset(run, layer, kv);
        &self.data[o..o + self.tokens * self.channels]
    }

    pub fn token(&self, run: usize, layer: usize, kv: Kv, t: usize) -> &[i8] {
        &self.tensor(run, layer, kv)[t * self.channels..(t + 1) * self.channels]
    }

    pub fn scale_units(&self, run: usize, layer: usize, kv: Kv) -> Option<i64> {
        self.amax.as_ref().map(|a| a[(run * self.layers + layer) * 2 + kv as usize])
    }

    pub fn from_fp16(set: &KvSet) -> Int8Set {
        let mut data = Vec::with_capacity(set.data.len());
        let mut amax = Vec::new();
        for run in 0..set.runs {
            for layer in 0..set.layers {
                for kv in crate::kvset::KVS {
                    let (q, a) = convert_tensor(set.sample(run, layer, kv));
                    data.extend(q);
                    amax.push(a);
                }
            }
        }
        Int8Set {
            runs: set.runs,
            layers: set.layers,
            tokens: set.tokens,
            channels: set.head_dim,
            data,
            amax: Some(amax),
        }
    }

    /// Reads a `|i1` set, or an FP16 set (`<f2`, `<f4`) converted by
    /// `from_fp16`; the FP16 source is returned with it.
    pub fn read(path: &Path) -> Result<(Int8Set, Option<KvSet>), String> {
        let a = npy::read_any(path).map_err(|e| e.to_string())?;
        let shape = a.shape.clone();
        match a.data {
            NpyData::F16(data) => {
                let set = KvSet::from_array(npy::NpyArray { shape, data }).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok((Int8Set::from_fp16(&set), Some(set)))
            }
            NpyData::I8(data) => match shape[..] {
                [runs, layers, 2, tokens, channels] if runs * layers * tokens * channels > 0 => {
                    Ok((Int8Set { runs, layers, tokens, channels, data, amax: None }, None))
                }
                _ => Err(format!(
                    "{}: INT8 KV set must have shape (runs, layers, 2, tokens, channels), none empty, got {shape:?}",
                    path.display()
                )),
            },
        }
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        let shape = [self.runs, self.layers, 2, self.tokens, self.channels];
        npy::write_i8(path, &shape, &self.data).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_rounds_half_away_from_zero() {
        // amax = 2.0; 127 * 1.0 / 2 = 63.5 -> 64, -63.5 -> -64; 0.25 -> 15.875 -> 16
        let x = [0x4000, 0x3C00, 0xBC00, 0x3400, 0xC000, 0x0000, 0x7E00];
        let (q, amax) = convert_tensor(&x);
        assert_eq!(amax, 2 << 24);
        assert_eq!(q, vec![127, 64, -64, 16, -127, 0, 0]);
        // NaN and Inf are sanitised first: +Inf is 65504 and sets amax
        let (q, amax) = convert_tensor(&[0x7C00, 0x3C00, 0xFC00]);
        assert_eq!((q, amax), (vec![127, 0, -127], fp16::MAX_UNITS));
        assert_eq!(convert_tensor(&[0, 0x8000]), (vec![0, 0], 0));
    }

    #[test]
    fn int8_npy_round_trips() {
        let s = Int8Set {
            runs: 1,
            layers: 2,
            tokens: 3,
            channels: 2,
            data: (0..24).map(|i| (i * 11 - 128) as i8).collect(),
            amax: None,
        };
        let dir = std::env::temp_dir().join(format!("kvforge-int8-{}.npy", std::process::id()));
        s.write(&dir).unwrap();
        let (r, src) = Int8Set::read(&dir).unwrap();
        std::fs::remove_file(&dir).ok();
        assert_eq!((r, src), (s, None));
        assert!(npy::parse(&npy::to_bytes_i8(&[2], &[1, -1]).unwrap()).unwrap_err().0.contains("|i1"));
    }
}
