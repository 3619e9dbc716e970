//! kvforge co-simulation runtime: Verilator models of the generated RTL
//! (and of its Yosys gate-level netlist), driven from safe Rust.
//!
//! ```no_run
//! use tb::{models, Model};
//! let mut m = Model::new(models::get("mul_pipe32"));
//! let (a, b, en, p) = (m.port("a"), m.port("b"), m.port("en"), m.port("p"));
//! m.reset(1);
//! m.set(a, 6);
//! m.set(b, 7);
//! m.set(en, 1);
//! m.ticks(3); // mul-pipe's latency at 32 bits
//! assert_eq!(m.get(p), 42);
//! ```
//!
//! Property tests run every case on a fresh model out of reset and, on
//! failure, leave a VCD of the shrunk case under `target/vcd/`:
//!
//! ```no_run
//! tb::run_property("mul32_small", tb::models::get("mul_pipe32"), (0u64..1000, 0u64..1000), 256, |m, &(x, y)| {
//!     let (a, b, en, p) = (m.port("a"), m.port("b"), m.port("en"), m.port("p"));
//!     m.set(a, x);
//!     m.set(b, y);
//!     m.set(en, 1);
//!     m.ticks(3);
//!     if m.get(p) == x * y { Ok(()) } else { Err(format!("p = {}", m.get(p))) }
//! });
//! ```
//!
//! Models are declared in `tb/models.toml`; `build.rs` builds them.
//! Environment: `KVFORGE_CASES` (cases per property), `KVFORGE_SEED`
//! (proptest RNG seed), `KVFORGE_VCD_DIR` (waveform folder).

pub mod build;
pub mod coverage;
pub mod hack_pv_dot;
pub mod hack_qk_dot;
pub mod hack_quantizer;
pub mod hack_quantizer_channel;
pub mod icarus;
pub mod info;
pub mod kivi_dequantizer;
pub mod kivi_quantizer;
pub mod kivi_quantizer_channel;
pub mod lanes;
pub mod packkv_encoder;
pub mod model;
pub mod oaken;
pub mod packkv_decoder;
pub mod packkv_quantizer;
pub mod oaken_cases;
pub mod oaken_dequantizer;
pub mod oaken_dma;
pub mod oaken_mmu;
pub mod oaken_stim;
pub mod models;
pub mod netsim;
pub mod pipe;
pub mod prop;
pub mod stalls;
pub mod stream;
pub mod stim;
pub mod titanus_dequantizer;
pub mod titanus_pruner;
pub mod titanus_quantizer;
pub mod titanus_table;

pub use info::{Dir, ModelInfo, PortInfo};
pub use model::{Model, PortId, Recording};
pub use prop::run_property;
