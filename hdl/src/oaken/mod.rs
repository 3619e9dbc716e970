//! Oaken (ISCA 2025) units: quantization engine and its parts, the MMU.
pub mod classify;
pub mod deq_expand;
pub mod dequantizer;
pub mod encode_lane;
pub mod extremes;
pub mod group_step;
pub mod mmu;
pub mod mmu_burst_cap;
pub mod mmu_counts;
pub mod mmu_decode;
pub mod mmu_free_list;
pub mod mmu_page_need;
pub mod mmu_response;
pub mod mmu_stream;
pub mod quantizer;
pub mod table;
pub mod token_params;
