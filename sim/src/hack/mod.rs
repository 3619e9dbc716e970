//! HACK (homomorphic attention on 2-bit K and V; Zeyu-ZEYU/HKVQ) models:
//! partitioned asymmetric quantization with code sums, Q·Kᵀ and P·V on the
//! codes by Eq. 4 in exact fixed point, the FP16 tail of the open V
//! partition, and the references HACK is measured against (docs/spec.md §15).
pub mod attention;
pub mod baseline;
pub mod dot;
pub mod lfsr;
pub mod metrics;
pub mod params;
pub mod quantizer;
pub mod reference;

#[cfg(test)]
mod spec_examples;
