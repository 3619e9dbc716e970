//! `hack-quantizer`, `axis = channel` (V): a block of `Pi` tokens streamed
//! twice, `lanes` FP16 elements per beat; one partition per channel, its
//! codes in token order. Out: the block's metadata words, then its packed
//! code words, `lanes` channels per beat, each channel's code sum with its
//! last word.
//!
//! Paper: HACK §5.1 (asymmetric partitions, stochastic rounding), §5.3 (a
//! V partition is Pi tokens of one channel), §6 (summation elimination).
//! Spec: docs/spec.md §15.2-§15.5, §15.7, §15.16.6 (ports, beats, stages).
//!
//! The engine is KIVI's channel quantizer (`kivi::quantizer_channel`,
//! spec §13.14.3: two passes, per-channel min-max in a memory, step,
//! code), built with `HackOpts`: the code sums in the `words` rows, and
//! for `stochastic` the LFSR and the compare of §15.3 after its restoring
//! steps. This block only names the ports.

use crate::kivi::quantizer::HackOpts;
use crate::kivi::quantizer_channel::KiviChannelQuantizer;
use crate::prim::vecs::sigs;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct HackChannelQuantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: the block starts over at pass 1, token 0; the pipeline empties; the LFSR reloads its seed
    pub reset: Signal<In, Bit>,
    /// element beat valid
    pub in_valid: Signal<In, Bit>,
    /// beat accepted when in_valid and in_ready (a register: low while the two-entry input buffer is full)
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements, lane l at [16l+15:16l]: channels k*lanes .. k*lanes + lanes - 1 of a token at its beat k; a block is its Pi tokens twice
    pub in_x: Vec<Signal<In, Bits<16>>>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// lane l at [32l+31:32l]: channel k*lanes + l's metadata word (out_meta) or its packed code word out_word (spec §13.4, §13.5)
    pub out_data: Vec<Signal<Out, Bits<32>>>,
    /// the beat carries metadata words ({meta_latency} cycles after its pass-2 token-0 input beat)
    pub out_meta: Signal<Out, Bit>,
    /// code beats: the index of the words in their channels' partitions ({latency} cycles after the input beat that completes them)
    pub out_word: Signal<Out, Bits<8>>,
    /// lane l: on code beats of the last word (W - 1), channel k*lanes + l's code sum (spec §15.5) in its low b + ceil(log2 Pi) bits, the rest 0; 0 on other beats
    pub out_sum: Vec<Signal<Out, Bits<16>>>,
    /// the block's last beat
    pub out_last: Signal<Out, Bit>,
    /// with out_last: a NaN or infinity was replaced in the block (0 on other beats)
    pub out_nonfinite: Signal<Out, Bit>,
    core: KiviChannelQuantizer,
    _lanes: usize,
}

impl HackChannelQuantizer {
    /// `head_dim` channels in partitions of `partition` tokens, `bits`-bit
    /// codes, `lanes` channels per beat; `module` names the memories.
    pub fn new(module: &str, head_dim: usize, partition: usize, bits: usize, lanes: usize, opts: HackOpts) -> Self {
        HackChannelQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_x: sigs(lanes),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: sigs(lanes),
            out_meta: Default::default(),
            out_word: Default::default(),
            out_sum: sigs(lanes),
            out_last: Default::default(),
            out_nonfinite: Default::default(),
            core: KiviChannelQuantizer::hack(module, head_dim, partition, bits, lanes, opts),
            _lanes: lanes,
        }
    }

    /// Cycles from the input beat that completes a row of code words to
    /// that output beat (the manifest's `latency`).
    pub fn latency(head_dim: usize, bits: usize, lanes: usize, stochastic: bool) -> usize {
        KiviChannelQuantizer::hack_latency(head_dim, bits, lanes, stochastic)
    }

    /// The same for a metadata beat and its pass-2 token-0 input beat.
    pub fn meta_latency(head_dim: usize, lanes: usize) -> usize {
        KiviChannelQuantizer::meta_latency(head_dim, lanes)
    }
}

impl Logic for HackChannelQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.core.in_ready.val();
        self.out_valid.next = self.core.out_valid.val();
        self.core.out_ready.next = self.out_ready.val();
        for l in 0..self._lanes {
            self.core.in_x[l].next = self.in_x[l].val();
            self.out_data[l].next = self.core.out_data[l].val();
            self.out_sum[l].next = self.core.out_sum[l].val();
        }
        self.out_meta.next = self.core.out_meta.val();
        self.out_word.next = self.core.out_word.val();
        self.out_last.next = self.core.out_last.val();
        self.out_nonfinite.next = self.core.out_nonfinite.val();
    }
}
