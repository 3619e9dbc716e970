//! Descriptions of loaded models and the C ABI of their shared objects.

use crate::build::{Built, Level, Netlist, Source};
use std::ffi::{c_char, c_void, CString};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

/// A top-level port. A bus of `elements` lanes packs lane `i` at bits
/// `[w*i + w-1 : w*i]`, `w = element_width` (spec §1).
#[derive(Debug)]
pub struct PortInfo {
    pub name: &'static str,
    pub dir: Dir,
    pub width: usize,
    pub elements: usize,
    pub element_width: usize,
}

impl PortInfo {
    /// 32-bit words in this port's value.
    pub fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
}

/// The C ABI of one model's shim (see build/shim.rs).
pub(crate) struct Ffi {
    pub(crate) new: unsafe extern "C" fn(seed: u32) -> *mut c_void,
    pub(crate) delete: unsafe extern "C" fn(*mut c_void),
    pub(crate) eval: unsafe extern "C" fn(*mut c_void),
    pub(crate) final_: unsafe extern "C" fn(*mut c_void),
    pub(crate) set: unsafe extern "C" fn(*mut c_void, port: u32, words: *const u32),
    pub(crate) get: unsafe extern "C" fn(*mut c_void, port: u32, words: *mut u32),
    pub(crate) trace_open: unsafe extern "C" fn(*mut c_void, path: *const c_char) -> i32,
    pub(crate) trace_dump: unsafe extern "C" fn(*mut c_void, time: u64),
    pub(crate) trace_close: unsafe extern "C" fn(*mut c_void),
}

impl Ffi {
    /// Loads a model's shared object (never unloaded: models live as long
    /// as the process).
    pub(crate) fn load(path: &std::path::Path) -> Result<Ffi, String> {
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            let err = unsafe { std::ffi::CStr::from_ptr(libc::dlerror()) };
            return Err(format!("cannot load {}: {}", path.display(), err.to_string_lossy()));
        }
        let sym = |name: &str| -> Result<*mut c_void, String> {
            let n = CString::new(name).unwrap();
            let p = unsafe { libc::dlsym(h, n.as_ptr()) };
            if p.is_null() {
                Err(format!("{}: no symbol {name}", path.display()))
            } else {
                Ok(p)
            }
        };
        // SAFETY: the shim defines each symbol with exactly these signatures.
        unsafe {
            Ok(Ffi {
                new: std::mem::transmute::<*mut c_void, _>(sym("kvf_new")?),
                delete: std::mem::transmute::<*mut c_void, _>(sym("kvf_delete")?),
                eval: std::mem::transmute::<*mut c_void, _>(sym("kvf_eval")?),
                final_: std::mem::transmute::<*mut c_void, _>(sym("kvf_final")?),
                set: std::mem::transmute::<*mut c_void, _>(sym("kvf_set")?),
                get: std::mem::transmute::<*mut c_void, _>(sym("kvf_get")?),
                trace_open: std::mem::transmute::<*mut c_void, _>(sym("kvf_trace_open")?),
                trace_dump: std::mem::transmute::<*mut c_void, _>(sym("kvf_trace_dump")?),
                trace_close: std::mem::transmute::<*mut c_void, _>(sym("kvf_trace_close")?),
            })
        }
    }
}

/// How a model is simulated.
pub(crate) enum Backend {
    /// A Verilator model in a shared object.
    Verilated(Ffi),
    /// An OSU018 netlist run by `crate::netsim`.
    Netlist(std::sync::Arc<crate::netsim::Program>),
}

/// One loaded model: an rtl-gen unit with fixed parameters, as RTL or as
/// its OSU018 netlist (`gate_level`, name `<rtl name>_net`, same ports).
pub struct ModelInfo {
    pub name: &'static str,
    /// rtl-gen unit name and emitted top module.
    pub unit: &'static str,
    pub module: &'static str,
    pub gate_level: bool,
    /// Can write a VCD (Verilator models built with `--trace`, and every
    /// netlist model).
    pub traced: bool,
    /// The simulator: "verilator" or "netsim".
    pub simulator: &'static str,
    /// The Verilog file simulated (the emitted RTL, or the OSU018 netlist),
    /// in the model cache.
    pub source: &'static str,
    /// The OSU018 netlist OpenSTA times, for gate-level models.
    pub netlist: Option<&'static str>,
    /// The model's cache key.
    pub key: &'static str,
    /// Unit parameters and rtl-gen manifest, as JSON.
    pub params_json: &'static str,
    pub manifest_json: &'static str,
    /// In manifest order.
    pub ports: &'static [PortInfo],
    pub(crate) backend: Backend,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

impl ModelInfo {
    fn ports(src: &Source) -> &'static [PortInfo] {
        let ports: Vec<PortInfo> = src
            .ports
            .iter()
            .map(|p| PortInfo {
                name: leak(p.name.clone()),
                dir: if p.dir_in { Dir::In } else { Dir::Out },
                width: p.width,
                elements: p.elements,
                element_width: p.element_width,
            })
            .collect();
        Box::leak(ports.into_boxed_slice())
    }

    /// A Verilator model from the cache.
    pub(crate) fn verilated(name: &str, src: &Source, built: &Built) -> Result<ModelInfo, String> {
        let ffi = Ffi::load(&built.shared_object())?;
        let gate_level = built.info.level == Level::Netlist;
        Ok(ModelInfo {
            name: leak(name.to_string()),
            unit: leak(src.unit.clone()),
            module: leak(src.module.clone()),
            gate_level,
            traced: built.info.trace,
            simulator: "verilator",
            source: leak(built.sim_source().display().to_string()),
            netlist: gate_level.then(|| leak(built.sim_source().display().to_string())),
            key: leak(built.info.key.clone()),
            params_json: leak(src.params_json.clone()),
            manifest_json: leak(src.manifest_json.clone()),
            ports: Self::ports(src),
            backend: Backend::Verilated(ffi),
        })
    }

    /// An OSU018 netlist from the cache, run by `crate::netsim`.
    pub(crate) fn netlist(name: &str, src: &Source, net: &Netlist) -> Result<ModelInfo, String> {
        let specs: Vec<crate::netsim::PortSpec> = src
            .ports
            .iter()
            .map(|p| crate::netsim::PortSpec { name: p.name.clone(), input: p.dir_in, width: p.width })
            .collect();
        let prog = crate::netsim::Program::load(&net.verilog(), &crate::build::tools::liberty(), &specs)?;
        let path = leak(net.verilog().display().to_string());
        Ok(ModelInfo {
            name: leak(name.to_string()),
            unit: leak(src.unit.clone()),
            module: leak(src.module.clone()),
            gate_level: true,
            traced: true,
            simulator: "netsim",
            source: path,
            netlist: Some(path),
            key: leak(net.key.clone()),
            params_json: leak(src.params_json.clone()),
            manifest_json: leak(src.manifest_json.clone()),
            ports: Self::ports(src),
            backend: Backend::Netlist(std::sync::Arc::new(prog)),
        })
    }

    pub fn params(&self) -> serde_json::Value {
        serde_json::from_str(self.params_json).expect("params json")
    }

    pub fn manifest(&self) -> serde_json::Value {
        serde_json::from_str(self.manifest_json).expect("manifest json")
    }

    /// Cycles from an accepted input to its output, when the unit has a fixed latency.
    pub fn latency(&self) -> Option<u64> {
        self.manifest()["latency"].as_u64()
    }

    pub fn port_index(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.name == name)
    }

    /// The same model able to write a VCD (a Verilator model is rebuilt
    /// with tracing on first use).
    pub fn with_trace(&'static self) -> Result<&'static ModelInfo, String> {
        if self.traced {
            return Ok(self);
        }
        match self.backend {
            Backend::Verilated(_) if self.gate_level => crate::models::load_verilated_netlist(self.name, true),
            _ => crate::models::load(self.name, true),
        }
    }
}

impl fmt::Debug for ModelInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelInfo")
            .field("name", &self.name)
            .field("unit", &self.unit)
            .field("params", &self.params_json)
            .field("gate_level", &self.gate_level)
            .field("traced", &self.traced)
            .finish_non_exhaustive()
    }
}
