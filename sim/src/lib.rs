//! kvforge golden models: the executable form of docs/spec.md.
//!
//! Every hardware unit in `hdl` has a model here, written from the spec and
//! the papers. The co-simulation tests in `tb` compare the RTL against these
//! models bit for bit.
pub mod attention;
pub mod compare;
pub mod fp16;
pub mod hack;
pub mod kvgen;
pub mod kivi;
pub mod kvset;
pub mod mem;
pub mod metrics;
pub mod npy;
pub mod oaken;
pub mod packkv;
pub mod param_def;
pub mod shifter;
pub mod testgen;
pub mod titanus;
