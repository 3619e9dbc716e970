//! HACK (homomorphic attention on 2-bit K and V; docs/spec.md §15).
//! `hack-qk-dot`: Q·Kᵀ on the codes by Eq. 4 (§15.8, §15.16.1);
//! `hack-deq-dot`: the dequantize-first FP16 baseline of the same
//! throughput (§15.10, §15.16.2); `hack-pv-dot`: P·V on the codes and
//! the FP16 open partition (§15.9, §15.16.5). All three share `acc`, the
//! exact fixed-point accumulator and its one rounding to binary32 (§15.6),
//! and the two on codes `eq4::Eq4`. `hack-quantizer`: KIVI's grouped
//! engine with code sums and stochastic rounding (§15.7, §15.16.4; the
//! channel axis, V, on KIVI's channel engine: `quantizer_channel`, §15.16.6).
pub mod acc;
pub mod deq_dot;
pub mod eq4;
pub mod fp_add;
pub mod load;
pub mod pv_dot;
pub mod qk_dot;
pub mod quantizer;
pub mod quantizer_channel;
pub mod sig;
