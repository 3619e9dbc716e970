//! `hack-quantizer`, `axis = token` (K, Q, P): FP16 vectors in, `lanes`
//! elements per beat, cut into partitions of `Pi` consecutive elements;
//! per partition one beat out with its packed codes, metadata word and
//! code sum, in the layout of `hack-qk-dot`'s `k` and `q` beats.
//!
//! Paper: HACK §5.1 (asymmetric partitions, stochastic rounding), §5.3
//! (orientation), §6 (summation elimination). Spec: docs/spec.md §15.2-
//! §15.5, §15.7, §15.16.4 (ports, beats, stages).
//!
//! The engine is KIVI's token quantizer (`kivi::quantizer`, spec
//! §13.14.2: grouped min-max, step, code), built with `HackOpts`: the
//! code sum beside the packed words, the vector closed by `in_last`
//! instead of a count, and for `stochastic` the LFSR and the compare of
//! §15.3 after its restoring steps. This block only names the ports.

use crate::kivi::quantizer::{HackOpts, KiviQuantizer};
use crate::prim::vecs::sigs;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct HackQuantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: the partition starts over, the pipeline empties, the LFSR reloads its seed
    pub reset: Signal<In, Bit>,
    /// element beat valid
    pub in_valid: Signal<In, Bit>,
    /// beat accepted when in_valid and in_ready (from registers only)
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements, lane l at [16l+15:16l]: elements k*lanes .. k*lanes + lanes - 1 of the stream at its beat k
    pub in_x: Vec<Signal<In, Bits<16>>>,
    /// the beat closes its vector (read on a partition's last beat only)
    pub in_last: Signal<In, Bit>,
    /// partition beat valid
    pub out_valid: Signal<Out, Bit>,
    /// partition beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// the partition's metadata word (spec §13.5): min [15:0], step [31:16]
    pub out_meta: Signal<Out, Bits<32>>,
    /// the partition's packed codes (spec §13.4), word i at [32i+31:32i]
    pub out_words: Vec<Signal<Out, Bits<32>>>,
    /// the partition's code sum, b + ceil(log2 Pi) bits (spec §15.5) ({latency} cycles from a partition's first input beat to its output beat)
    pub out_sum: Signal<Out, Bits<32>>,
    /// the partition is its vector's last
    pub out_last: Signal<Out, Bit>,
    /// with out_last: a NaN or infinity was replaced in the vector (0 on its other partitions)
    pub out_nonfinite: Signal<Out, Bit>,
    core: KiviQuantizer,
    _lanes: usize,
    _w: usize,
}

impl HackQuantizer {
    /// Partitions of `partition` elements, `bits`-bit codes, `lanes`
    /// elements per beat.
    pub fn new(partition: usize, bits: usize, lanes: usize, opts: HackOpts) -> Self {
        let w = partition.div_ceil(32 / bits);
        HackQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_x: sigs(lanes),
            in_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_meta: Default::default(),
            out_words: sigs(w),
            out_sum: Default::default(),
            out_last: Default::default(),
            out_nonfinite: Default::default(),
            core: KiviQuantizer::hack(partition, bits, lanes, opts),
            _lanes: lanes,
            _w: w,
        }
    }

    /// Cycles from a partition's first input beat to its output beat at
    /// full rate (the manifest's `latency`).
    pub fn latency(partition: usize, bits: usize, lanes: usize, stochastic: bool) -> usize {
        KiviQuantizer::hack_latency(partition, bits, lanes, stochastic)
    }
}

impl Logic for HackQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.core.in_ready.val();
        for l in 0..self._lanes {
            self.core.in_x[l].next = self.in_x[l].val();
        }
        self.core.in_last[0].next = self.in_last.val();
        self.out_valid.next = self.core.out_valid.val();
        self.core.out_ready.next = self.out_ready.val();
        self.out_meta.next = self.core.out_meta.val();
        for w in 0..self._w {
            self.out_words[w].next = self.core.out_words[w].val();
        }
        self.out_sum.next = self.core.out_sum[0].val();
        self.out_last.next = self.core.out_last.val();
        self.out_nonfinite.next = self.core.out_nonfinite.val();
    }
}
