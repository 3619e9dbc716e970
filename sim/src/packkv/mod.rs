//! PackKV (BoJiang03/PackKV) models: token-wise quantization over the
//! whole layer vector with `rel = 1/N`, median repacking of a block's rows,
//! and bit-packing in packs of tokens of one channel (docs/spec.md §14).
pub mod authors;
pub mod codec;
pub mod metrics;
pub mod params;
pub mod quantizer;

#[cfg(test)]
mod spec_examples;
