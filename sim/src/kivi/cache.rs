//! Reference model of KIVI's cache management (docs/spec.md §13.7): which
//! tokens are quantized when. It belongs to the MMU or the host; the
//! quantizer units only quantize what they are given.
//!
//! K: new tokens wait in a full-precision residual buffer; when it holds
//! exactly `residual` tokens they are quantized as `residual / group`
//! blocks and the buffer empties. V: the latest `residual` tokens stay in
//! full precision; a token leaving that window is quantized. Prefill of T
//! tokens quantizes the first `T - T mod residual` K tokens and the first
//! `T - residual` V tokens (none when `T <= residual`). After any mix of
//! prefill and decode steps over T tokens in all, the state is the same.

use super::dequantizer::dequantize;
use super::params::{Axis, KiviCacheParams, KiviParams, ParamError};
use super::quantizer::{quantize_block, quantize_token, QuantOut};
use std::collections::VecDeque;

/// What one prefill or decode step sent to the quantizers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// K blocks of `group` tokens quantized (axis channel).
    pub k_blocks: usize,
    /// V tokens quantized (axis token).
    pub v_tokens: usize,
}

#[derive(Clone, Debug)]
pub struct KiviCache {
    pub p: KiviCacheParams,
    pub k_unit: KiviParams,
    pub v_unit: KiviParams,
    /// Quantized K blocks, oldest first, `group` tokens each.
    pub k_blocks: Vec<QuantOut>,
    /// Full-precision K tokens since the last flush: fewer than `residual`.
    pub k_residual: Vec<Vec<u16>>,
    /// Quantized V tokens, oldest first.
    pub v_quant: Vec<QuantOut>,
    /// The latest full-precision V tokens: at most `residual`.
    pub v_window: VecDeque<Vec<u16>>,
    pub tokens: usize,
}

impl KiviCache {
    pub fn new(p: &KiviCacheParams) -> Result<KiviCache, ParamError> {
        p.validate()?;
        Ok(KiviCache {
            p: p.clone(),
            k_unit: p.unit(Axis::Channel),
            v_unit: p.unit(Axis::Token),
            k_blocks: vec![],
            k_residual: vec![],
            v_quant: vec![],
            v_window: VecDeque::new(),
            tokens: 0,
        })
    }

    fn flush_k(&mut self) -> usize {
        let blocks: Vec<QuantOut> = self
            .k_residual
            .chunks_exact(self.p.group)
            .map(|b| quantize_block(&self.k_unit, &b.iter().map(|t| &t[..]).collect::<Vec<_>>()))
            .collect();
        assert_eq!(blocks.len() * self.p.group, self.k_residual.len());
        self.k_residual.clear();
        let n = blocks.len();
        self.k_blocks.extend(blocks);
        n
    }

    /// The prompt's T tokens at once, on an empty cache.
    pub fn prefill(&mut self, k: &[&[u16]], v: &[&[u16]]) -> Step {
        assert_eq!(self.tokens, 0, "prefill on a non-empty cache");
        assert_eq!(k.len(), v.len());
        let n = self.p.vector_len();
        assert!(k.iter().chain(v).all(|t| t.len() == n));
        let t = k.len();
        let r = self.p.residual;
        let nk = t - t % r;
        self.k_residual = k[..nk].iter().map(|x| x.to_vec()).collect();
        let k_blocks = self.flush_k();
        self.k_residual = k[nk..].iter().map(|x| x.to_vec()).collect();
        let nv = t.saturating_sub(r);
        self.v_quant = v[..nv].iter().map(|x| quantize_token(&self.v_unit, x)).collect();
        self.v_window = v[nv..].iter().map(|x| x.to_vec()).collect();
        self.tokens = t;
        Step { k_blocks, v_tokens: nv }
    }

    /// One decode step: the new token's K and V.
    pub fn push(&mut self, k: &[u16], v: &[u16]) -> Step {
        let n = self.p.vector_len();
        assert!(k.len() == n && v.len() == n);
        let mut s = Step::default();
        self.k_residual.push(k.to_vec());
        if self.k_residual.len() == self.p.residual {
            s.k_blocks = self.flush_k();
        }
        self.v_window.push_back(v.to_vec());
        if self.v_window.len() > self.p.residual {
            let old = self.v_window.pop_front().unwrap();
            self.v_quant.push(quantize_token(&self.v_unit, &old));
            s.v_tokens = 1;
        }
        self.tokens += 1;
        s
    }

    pub fn k_quantized_tokens(&self) -> usize {
        self.k_blocks.len() * self.p.group
    }

    pub fn v_quantized_tokens(&self) -> usize {
        self.v_quant.len()
    }

    /// Every K token in order: quantized ones decoded, then the residual.
    pub fn k_rebuilt(&self) -> Vec<Vec<u16>> {
        let mut out: Vec<Vec<u16>> = self.k_blocks.iter().flat_map(|b| dequantize(&self.k_unit, b)).collect();
        out.extend(self.k_residual.iter().cloned());
        out
    }

    /// Every V token in order: quantized ones decoded, then the window.
    pub fn v_rebuilt(&self) -> Vec<Vec<u16>> {
        let mut out: Vec<Vec<u16>> = self.v_quant.iter().flat_map(|t| dequantize(&self.v_unit, t)).collect();
        out.extend(self.v_window.iter().cloned());
        out
    }
}
