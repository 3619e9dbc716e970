//! PackKV (BoJiang03/PackKV): token quantization over the whole layer
//! vector with `rel = 1/N` (docs/spec.md §14). `packkv-quantizer`: FP16
//! token vectors to `r`-bit codes and a metadata word per token (§14.2,
//! §14.3, §14.14.1).
pub mod encoder;
pub mod median;
pub mod quantizer;
pub mod token_step;
pub mod decoder;
pub mod decoder_burst;
