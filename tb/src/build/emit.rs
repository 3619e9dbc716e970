//! What a model is built from: rtl-gen's emission of one unit, cached.
//!
//! Elaborating a large unit takes seconds of rust-hdl work, so the emitted
//! files are kept in the model cache under a key made of the generator's
//! fingerprint (a hash of every source file that shapes its output, computed
//! by `tb/build.rs`), the unit, its parameters and the clock. Any change to
//! the generator changes the fingerprint and re-elaborates; the model keys
//! themselves are made from the emitted Verilog, so a re-elaboration that
//! gives the same Verilog still rebuilds no model.

use super::jobs;
use super::shim::ShimPort;
use super::store::Store;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Hash of the generator's sources, from `tb/build.rs`.
pub const GENERATOR_FINGERPRINT: &str = env!("KVFORGE_GEN_FINGERPRINT");

/// One unit's emission, as the model builder needs it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    pub unit: String,
    pub module: String,
    /// The emitted `<module>.v`.
    pub verilog: String,
    /// The emitted `<module>.yosys.tcl`, the script `make synth` runs.
    pub synth_script: String,
    pub manifest_json: String,
    pub params_json: String,
    /// In manifest order.
    pub ports: Vec<ShimPort>,
}

/// Elaborates `unit` (no cache).
pub fn elaborate(unit: &str, params: &toml::Table, clock_ns: f64) -> Result<Source, String> {
    let _slot = jobs::acquire();
    let opts = rtl_gen::EmitOptions { clock_ns };
    let e = rtl_gen::emit(unit, params, &opts).map_err(|e| e.to_string())?;
    let file = |name: String| {
        e.files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| format!("rtl-gen emitted no {name}"))
    };
    Ok(Source {
        unit: unit.to_string(),
        module: e.module.clone(),
        verilog: e.verilog.clone(),
        synth_script: file(format!("{}.yosys.tcl", e.module))?,
        manifest_json: serde_json::to_string(&e.manifest).unwrap(),
        params_json: serde_json::to_string(&e.manifest.params).unwrap(),
        ports: e
            .manifest
            .ports
            .iter()
            .map(|p| ShimPort {
                name: p.name.clone(),
                dir_in: p.dir == rtl_gen::elaborate::Dir::In,
                width: p.width,
                elements: p.elements,
                element_width: p.element_width,
            })
            .collect(),
    })
}

fn emission_key(what: &[u8], unit: &str, params: &toml::Table, clock_ns: f64) -> Result<String, String> {
    Ok(super::store::key(&[
        what,
        GENERATOR_FINGERPRINT.as_bytes(),
        unit.as_bytes(),
        toml::to_string(params).map_err(|e| e.to_string())?.as_bytes(),
        format!("{clock_ns:.6}").as_bytes(),
    ]))
}

/// Entry (`emit`, `key`) of the store: `file` parsed, after `make`'s value
/// is written there if the store does not hold it yet.
fn cached_json<T: Serialize + DeserializeOwned>(
    store: &Store,
    key: &str,
    file: &str,
    make: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    let (dir, _) = store.get_or_build("emit", key, |dir| {
        std::fs::write(dir.join(file), serde_json::to_string(&make()?).unwrap())
            .map_err(|e| format!("cannot write the emission cache: {e}"))
    })?;
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// rtl-gen's whole emission of `unit` (every file and the manifest, as
/// `rtl-gen emit` writes them), from the cache or elaborated.
pub fn emission(store: &Store, unit: &str, params: &toml::Table, clock_ns: f64) -> Result<rtl_gen::Emission, String> {
    let key = emission_key(b"kvforge-emission-whole", unit, params, clock_ns)?;
    cached_json(store, &key, "emission.json", || {
        let _slot = jobs::acquire();
        rtl_gen::emit(unit, params, &rtl_gen::EmitOptions { clock_ns }).map_err(|e| e.to_string())
    })
}

/// The emission of `unit` with `params`, from the cache or elaborated.
pub fn source(store: &Store, unit: &str, params: &toml::Table, clock_ns: f64) -> Result<Source, String> {
    let key = emission_key(b"kvforge-emission", unit, params, clock_ns)?;
    cached_json(store, &key, "source.json", || elaborate(unit, params, clock_ns))
}
