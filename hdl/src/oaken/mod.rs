//! Oaken (ISCA 2025) units: quantization engine and its parts.
pub mod classify;
pub mod dequantizer;
pub mod encode_lane;
pub mod extremes;
pub mod quantizer;
pub mod table;
pub mod token_params;
