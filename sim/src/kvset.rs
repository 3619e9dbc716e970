//! A KV sample set: FP16 patterns of shape (runs, layers, 2, tokens, head_dim)
//! in C order, index 2 being 0 for K and 1 for V (docs/spec.md §6.1).

use crate::npy::{self, NpyArray};
use crate::oaken::thresholds::Kv;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvSet {
    pub runs: usize,
    pub layers: usize,
    pub tokens: usize,
    pub head_dim: usize,
    pub data: Vec<u16>,
}

impl KvSet {
    pub fn shape(&self) -> [usize; 5] {
        [self.runs, self.layers, 2, self.tokens, self.head_dim]
    }

    /// Checks the 5-D shape of a loaded array.
    pub fn from_array(a: NpyArray) -> Result<KvSet, String> {
        match a.shape[..] {
            [runs, layers, 2, tokens, head_dim] => {
                if runs == 0 || layers == 0 || tokens == 0 || head_dim == 0 {
                    return Err(format!("KV set shape {:?} has an empty dimension", a.shape));
                }
                Ok(KvSet { runs, layers, tokens, head_dim, data: a.data })
            }
            _ => {
                Err(format!("KV set must have shape (runs, layers, 2, tokens, head_dim), got {:?}", a.shape))
            }
        }
    }

    pub fn read(path: &Path) -> Result<KvSet, String> {
        let a = npy::read(path).map_err(|e| e.to_string())?;
        KvSet::from_array(a).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        npy::write(path, &self.shape(), &self.data).map_err(|e| e.to_string())
    }

    /// All tokens x channels of one (run, layer, K/V): one profiling sample.
    pub fn sample(&self, run: usize, layer: usize, kv: Kv) -> &[u16] {
        let n = self.tokens * self.head_dim;
        let start = ((run * self.layers + layer) * 2 + kv as usize) * n;
        &self.data[start..start + n]
    }

    pub fn sample_mut(&mut self, run: usize, layer: usize, kv: Kv) -> &mut [u16] {
        let n = self.tokens * self.head_dim;
        let start = ((run * self.layers + layer) * 2 + kv as usize) * n;
        &mut self.data[start..start + n]
    }
}

pub const KVS: [Kv; 2] = [Kv::K, Kv::V];

pub fn kv_name(kv: Kv) -> &'static str {
    match kv {
        Kv::K => "k",
        Kv::V => "v",
    }
}

/// Where one element of a set sits: `channel` is its index in the row.
/// Each scheme's `measure_with` hands every element it stores, decoded, to
/// a sink with its place (`kvsim compare`, spec §16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub run: usize,
    pub layer: usize,
    pub kv: Kv,
    pub token: usize,
    pub channel: usize,
}
