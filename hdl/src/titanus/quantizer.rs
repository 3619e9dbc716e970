//! Titanus quantization unit (`titanus-quantizer`), one half (K or V).
//! Paper: Titanus (GLSVLSI 2025) §2.3 (per-channel quantization without
//! re-quantization), §3.2 and Figure 2 (HierQuant), §4.4 and Figure 7 (MMF,
//! NZQ, tolerance updater, channel monitor, scheduler).
//! Spec: docs/spec.md §11.5-§11.7 (numbers, levels, scheduler, outputs),
//! §11.13 (ports), §11.14.5 (this microarchitecture).
//!
//!   in -> [skid] -> zero-insert -> M (item) -> E0 -> lane coders -> zero-remove -> rec
//!                                  |  ^ channel state (per channel registers)
//!                                  +-> NZQ (one level at a time) -> sz
//!                                  +-> prefill buffer (memory) -> replay -> E0
//!
//! M holds one input item (a command or a token beat) until the scheduler
//! has done it: a prefill beat updates the MMF and goes to the buffer; a
//! decode beat waits while the NZQ opens the levels its kept values need
//! (lowest lane first, so entries leave in channel order), then enters the
//! coders with a snapshot of its channels' current levels. QUANT (level 0
//! of every channel, then the buffered tokens replayed through the same
//! coders) runs while M holds the item that ended the prefill.
//!
//! This block wires its sub-blocks and picks the channel row read and the
//! beat the coders take: `qu_config` (bit widths), `qu_input` (queue,
//! zero-insert, M), `qu_monitor` (channel state, monitor), `qu_scheduler`
//! (scheduler, QUANT's channel walk, entries), `qu_prefill` (buffer,
//! replay), `qu_sequence` (phase, position, responses, status), `nzq`, and
//! `qu_output` (coders, record output).

use crate::prim::ram::MemInfo;
use crate::prim::vecs::sigs;
use crate::prim::zero_remove::ZeroRemove;
use crate::titanus::nzq::Nzq;
use crate::titanus::qu_config::ConfigTable;
use crate::titanus::qu_input::InputQueue;
use crate::titanus::qu_lane::LANE_STAGES;
use crate::titanus::qu_monitor::ChannelMonitor;
use crate::titanus::qu_output::QuOutput;
use crate::titanus::qu_prefill::PrefillBuffer;
use crate::titanus::qu_scheduler::Scheduler;
use crate::titanus::qu_sequence::SequenceState;
use rust_hdl::prelude::*;

/// `rsp_err` codes (spec §11.13).
pub const RSP_OK: u64 = 0;
pub const RSP_NO_START: u64 = 1;
pub const RSP_PREFILL_AFTER_DECODE: u64 = 2;
pub const RSP_PREFILL_FULL: u64 = 3;
pub const RSP_SEQUENCE_FULL: u64 = 4;

/// The unit's geometry, from checked parameters.
#[derive(Clone, Copy, Debug)]
pub struct QuGeometry {
    pub channels: usize,
    pub lanes: usize,
    pub layers: usize,
    pub max_levels: usize,
    pub max_prefill: usize,
}

impl QuGeometry {
    pub fn beats(&self) -> usize {
        self.channels / self.lanes
    }

    /// The prefill buffer: one word per beat (lane i: kept bit 9i+8, value 9i+7..9i).
    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        vec![MemInfo {
            module: format!("{module}_pbuf_ram"),
            name: "prefill_buffer".into(),
            depth: self.max_prefill * self.beats(),
            width: 9 * self.lanes,
        }]
    }

    /// Cycles from the edge that takes a decode beat into M (skid empty, no
    /// level to open, output ready) to the edge after which it is shown: a
    /// cycle to decide, E0, the lane stages, the zero-remove shifter, the
    /// output register.
    pub fn latency(&self) -> usize {
        3 + LANE_STAGES + ZeroRemove::<4>::latency(self.lanes, 2)
    }
}

// phases
pub(super) const IDLE: u64 = 0;
pub(super) const PREFILL: u64 = 1;
pub(super) const DECODE: u64 = 2;
// in_cmd
pub(super) const C_START: u64 = 0;
pub(super) const C_PREFILL: u64 = 1;
pub(super) const C_FLUSH: u64 = 2;
pub(super) const C_DECODE: u64 = 3;

#[derive(LogicBlock)]
pub struct TitanusQuantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: IDLE, every bit width 4, counters 0, pipeline empty
    pub reset: Signal<In, Bit>,
    /// configuration-table write strobe, always accepted
    pub tw_valid: Signal<In, Bit>,
    /// layer of the written entry
    pub tw_layer: Signal<In, Bits<8>>,
    /// 0 = K, 1 = V
    pub tw_kv: Signal<In, Bit>,
    /// pruning threshold: the pruner's, ignored here
    pub tw_threshold: Signal<In, Bits<8>>,
    /// bit width of the entry: 2, 3 or 4
    pub tw_bits: Signal<In, Bits<3>>,
    /// one cycle after each write strobe
    pub tw_done: Signal<Out, Bit>,
    /// with tw_done: 0 written, 1 layer out of range, 2 bad bit width
    pub tw_error: Signal<Out, Bits<2>>,
    /// input transaction valid (a command, or a token beat)
    pub in_valid: Signal<In, Bit>,
    /// taken when in_valid and in_ready (a register)
    pub in_ready: Signal<Out, Bit>,
    /// 0 start, 1 prefill token, 2 flush, 3 decode token; read at commands and first beats
    pub in_cmd: Signal<In, Bits<2>>,
    /// start: layer of the sequence (its bit width; >= layers reads layer 0)
    pub in_layer: Signal<In, Bits<8>>,
    /// start: 0 = K, 1 = V
    pub in_kv: Signal<In, Bit>,
    /// token beat: index bits of the beat's channels (1 = kept)
    pub in_mask: Vec<Signal<In, Bit>>,
    /// token beat: kept INT8 values compacted from lane 0, lane i at [8i+7:8i]
    pub in_data: Vec<Signal<In, Bits<8>>>,
    /// record beat valid
    pub rec_valid: Signal<Out, Bit>,
    /// record beat taken when rec_valid and rec_ready
    pub rec_ready: Signal<In, Bit>,
    /// position of the beat's token in its sequence
    pub rec_pos: Signal<Out, Bits<16>>,
    /// index bits of the beat
    pub rec_index: Vec<Signal<Out, Bit>>,
    /// label bits of the beat (kept and code != 0)
    pub rec_label: Vec<Signal<Out, Bit>>,
    /// the beat's non-zero codes compacted from lane 0, lane i at [4i+3:4i], other lanes 0
    pub rec_codes: Vec<Signal<Out, Bits<4>>>,
    /// non-zero codes in the beat
    pub rec_count: Signal<Out, Bits<8>>,
    /// last beat of a token
    pub rec_last: Signal<Out, Bit>,
    /// elements of the beat clamped at the level limit
    pub rec_saturated: Signal<Out, Bits<8>>,
    /// created scale-zero entry valid
    pub sz_valid: Signal<Out, Bit>,
    /// entry taken when sz_valid and sz_ready
    pub sz_ready: Signal<In, Bit>,
    /// entry (spec §11.7.2): channel [61:52], level [51:48], start [47:32], zero [24:16], scale
    /// [15:0]
    pub sz_word: Signal<Out, Bits<64>>,
    /// one pulse per command and per token, in input order (no ready)
    pub rsp_valid: Signal<Out, Bit>,
    /// with rsp_valid: 0 ok, 1 no start, 2 prefill after decode, 3 prefill full, 4 sequence full
    pub rsp_err: Signal<Out, Bits<3>>,
    /// levels opened since reset (wrapping)
    pub st_levels_opened: Signal<Out, Bits<32>>,
    /// elements clamped at the level limit since reset, counted as their beats leave (wrapping)
    pub st_saturated: Signal<Out, Bits<32>>,
    /// rejected commands and tokens since reset (wrapping)
    pub st_rejected: Signal<Out, Bits<32>>,
    /// sticky: an element was clamped
    pub st_limit_hit: Signal<Out, Bit>,
    /// sticky: a start named a layer >= layers
    pub st_layer_oob: Signal<Out, Bit>,
    /// the last prefill had no token
    pub st_no_prefill: Signal<Out, Bit>,
    /// channels with no kept element in the last prefill
    pub st_empty_channels: Signal<Out, Bits<11>>,
    /// channels whose last prefill range was one value
    pub st_single_value_channels: Signal<Out, Bits<11>>,
    cfg: ConfigTable,
    inq: InputQueue,
    // the channel row read (beat of M, replayed beat, or QUANT channel)
    rsel: Signal<Local, Bits<10>>,
    mon: ChannelMonitor,
    sched: Scheduler,
    seq: SequenceState,
    pre: PrefillBuffer,
    nzq: Nzq,
    out: QuOutput,
    lgc: Constant<Bits<10>>,
    one4: Constant<Bits<4>>,
    _n: usize,
}

impl TitanusQuantizer {
    /// `g` must be checked (`sim::titanus::params::TitanusParams::validate`):
    /// lanes a power of two dividing channels <= 1024, layers <= 256,
    /// max_levels <= 16, max_prefill <= 4096. `module` names the memory.
    pub fn new(g: &QuGeometry, module: &str) -> Self {
        let (n, c, b) = (g.lanes, g.channels, g.beats());
        assert!(n.is_power_of_two() && n <= 64 && c % n == 0 && c <= 1024 && b <= 1024);
        assert!(
            (1..=256).contains(&g.layers) && (1..=16).contains(&g.max_levels) && (1..=4096).contains(&g.max_prefill)
        );
        TitanusQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_threshold: Default::default(),
            tw_bits: Default::default(),
            tw_done: Default::default(),
            tw_error: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_cmd: Default::default(),
            in_layer: Default::default(),
            in_kv: Default::default(),
            in_mask: sigs(n),
            in_data: sigs(n),
            rec_valid: Default::default(),
            rec_ready: Default::default(),
            rec_pos: Default::default(),
            rec_index: sigs(n),
            rec_label: sigs(n),
            rec_codes: sigs(n),
            rec_count: Default::default(),
            rec_last: Default::default(),
            rec_saturated: Default::default(),
            sz_valid: Default::default(),
            sz_ready: Default::default(),
            sz_word: Default::default(),
            rsp_valid: Default::default(),
            rsp_err: Default::default(),
            st_levels_opened: Default::default(),
            st_saturated: Default::default(),
            st_rejected: Default::default(),
            st_limit_hit: Default::default(),
            st_layer_oob: Default::default(),
            st_no_prefill: Default::default(),
            st_empty_channels: Default::default(),
            st_single_value_channels: Default::default(),
            cfg: ConfigTable::new(g.layers),
            inq: InputQueue::new(n, b),
            rsel: Default::default(),
            mon: ChannelMonitor::new(n, c, g.max_levels),
            sched: Scheduler::new(n, c),
            seq: SequenceState::new(g.max_prefill),
            pre: PrefillBuffer::new(g, module),
            nzq: Nzq::default(),
            out: QuOutput::new(n),
            lgc: Constant::new((n.trailing_zeros() as u64).into()),
            one4: Constant::new(1u64.into()),
            _n: n,
        }
    }
}

impl Logic for TitanusQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- configuration table (spec §11.3): bit widths only ----
        self.cfg.clock.next = self.clock.val();
        self.cfg.reset.next = self.reset.val();
        self.cfg.tw_valid.next = self.tw_valid.val();
        self.cfg.tw_layer.next = self.tw_layer.val();
        self.cfg.tw_kv.next = self.tw_kv.val();
        self.cfg.tw_bits.next = self.tw_bits.val();
        self.cfg.in_layer.next = self.in_layer.val();
        self.cfg.in_kv.next = self.in_kv.val();
        self.tw_done.next = self.cfg.tw_done.val();
        self.tw_error.next = self.cfg.tw_error.val();

        // ---- input queue and M ----
        self.inq.clock.next = self.clock.val();
        self.inq.reset.next = self.reset.val();
        self.inq.in_valid.next = self.in_valid.val();
        self.inq.in_cmd.next = self.in_cmd.val();
        for p in 0..self._n {
            self.inq.in_mask[p].next = self.in_mask[p].val();
            self.inq.in_data[p].next = self.in_data[p].val();
        }
        self.inq.t_bits.next = self.cfg.t_bits.val();
        self.inq.t_oob.next = self.cfg.t_oob.val();
        self.inq.fen.next = self.sched.fen.val();
        self.in_ready.next = self.inq.in_ready.val();

        // ---- channel state and monitor: the row read ----
        self.rsel.next = self.inq.item_row.val();
        if self.sched.rd_quant.val() {
            self.rsel.next = self.sched.quant_ch.val() >> self.lgc.val();
        }
        if self.sched.replay.val() {
            self.rsel.next = self.pre.row.val();
        }
        self.mon.clock.next = self.clock.val();
        self.mon.reset.next = self.reset.val();
        self.mon.rsel.next = self.rsel.val();
        self.mon.qc.next = self.sched.quant_ch.val();
        self.mon.m_row.next = self.inq.item_row.val();
        for p in 0..self._n {
            self.mon.m_x[p].next = self.inq.item_x[p].val();
            self.mon.m_k[p].next = self.inq.item_k[p].val();
        }
        // cleared at a start, MMF from M, a level from the NZQ
        self.mon.clr.next = self.sched.do_start.val();
        self.mon.do_mmf.next = self.sched.do_mmf.val();
        self.mon.do_lvl.next = self.sched.do_lvl.val();
        self.mon.wc.next = self.sched.lvl_ch.val();
        self.mon.olo.next = self.sched.lvl_lo.val();
        self.mon.ohi.next = self.sched.lvl_hi.val();
        self.mon.onl.next = self.sched.lvl_nl.val();
        self.mon.lvl_tl.next = self.nzq.tl.val();
        self.mon.lvl_th.next = self.nzq.th.val();
        self.mon.lvl_s.next = self.nzq.scale.val();
        self.mon.lvl_zs.next = self.nzq.zs.val();

        // ---- scheduler (spec §11.7) ----
        self.sched.clock.next = self.clock.val();
        self.sched.reset.next = self.reset.val();
        self.sched.item_valid.next = self.inq.item_valid.val();
        self.sched.item_kind.next = self.inq.item_kind.val();
        self.sched.item_first.next = self.inq.item_first.val();
        self.sched.item_last.next = self.inq.item_last.val();
        self.sched.item_row.next = self.inq.item_row.val();
        self.sched.ph.next = self.seq.phase.val();
        self.sched.err.next = self.seq.err.val();
        self.sched.pos.next = self.seq.next_pos.val();
        self.sched.en_code.next = self.out.en_code.val();
        self.sched.need_any.next = self.mon.need_any.val();
        self.sched.pick_lane.next = self.mon.pick_lane.val();
        self.sched.pick_lo.next = self.mon.pick_lo.val();
        self.sched.pick_hi.next = self.mon.pick_hi.val();
        self.sched.pick_nl.next = self.mon.pick_nl.val();
        self.sched.q_lo.next = self.mon.q_lo.val();
        self.sched.q_hi.next = self.mon.q_hi.val();
        self.sched.nzq_done.next = self.nzq.done.val();
        self.sched.nzq_scale.next = self.nzq.scale.val();
        self.sched.nzq_zero.next = self.nzq.zero.val();
        self.sched.sz_ready.next = self.sz_ready.val();
        self.sched.rep_end.next = self.pre.rep_end.val();
        self.sz_valid.next = self.sched.sz_valid.val();
        self.sz_word.next = self.sched.sz_word.val();

        // ---- NZQ: one level at a time, from the scheduler's registers ----
        self.nzq.clock.next = self.clock.val();
        self.nzq.reset.next = self.reset.val();
        self.nzq.start.next = self.sched.nzq_start.val();
        self.nzq.lo.next = self.sched.lvl_lo.val();
        self.nzq.hi.next = self.sched.lvl_hi.val();
        self.nzq.bits.next = self.seq.width.val();

        // ---- sequence bookkeeping and responses ----
        self.seq.clock.next = self.clock.val();
        self.seq.reset.next = self.reset.val();
        self.seq.item_kind.next = self.inq.item_kind.val();
        self.seq.item_last.next = self.inq.item_last.val();
        self.seq.item_bits.next = self.inq.item_bits.val();
        self.seq.item_oob.next = self.inq.item_oob.val();
        self.seq.do_start.next = self.sched.do_start.val();
        self.seq.do_mmf.next = self.sched.do_mmf.val();
        self.seq.do_rsp.next = self.sched.do_rsp.val();
        self.seq.rsp_code.next = self.sched.rsp_code.val();
        self.seq.go_quant.next = self.sched.go_quant.val();
        self.seq.do_lvl.next = self.sched.do_lvl.val();
        self.seq.rep_end.next = self.pre.rep_end.val();
        self.rsp_valid.next = self.seq.rsp_valid.val();
        self.rsp_err.next = self.seq.rsp_err.val();

        // ---- prefill buffer: written by prefill beats, read by the replay ----
        self.pre.clock.next = self.clock.val();
        self.pre.reset.next = self.reset.val();
        self.pre.do_start.next = self.sched.do_start.val();
        self.pre.do_mmf.next = self.sched.do_mmf.val();
        for p in 0..self._n {
            self.pre.item_x[p].next = self.inq.item_x[p].val();
            self.pre.item_k[p].next = self.inq.item_k[p].val();
        }
        self.pre.rep_init.next = self.sched.rep_init.val();
        self.pre.replay.next = self.sched.replay.val();
        self.pre.en_code.next = self.out.en_code.val();

        // ---- coders: a beat of M, or a replayed beat ----
        self.out.clock.next = self.clock.val();
        self.out.reset.next = self.reset.val();
        self.out.push.next = self.sched.push.val() | self.pre.push.val();
        self.out.pos0.next = self.seq.next_pos.val();
        self.out.last0.next = self.inq.item_last.val();
        if self.sched.replay.val() {
            self.out.pos0.next = self.pre.tok.val();
            self.out.last0.next = self.pre.last.val();
        }
        for p in 0..self._n {
            self.out.x[p].next = self.inq.item_x[p].val();
            self.out.k[p].next = self.inq.item_k[p].val();
            if self.sched.replay.val() {
                self.out.x[p].next = self.pre.x[p].val();
                self.out.k[p].next = self.pre.k[p].val();
            }
            self.out.tl[p].next = self.mon.tl[p].val();
            self.out.th[p].next = self.mon.th[p].val();
            self.out.s[p].next = self.mon.s[p].val();
            self.out.zs[p].next = self.mon.zs[p].val();
        }
        self.out.q.next = (self.one4.val() << bit_cast::<4, 3>(self.seq.width.val())) - self.one4.val();
        self.out.rec_ready.next = self.rec_ready.val();
        for p in 0..self._n {
            self.rec_index[p].next = self.out.rec_index[p].val();
            self.rec_label[p].next = self.out.rec_label[p].val();
            self.rec_codes[p].next = self.out.rec_codes[p].val();
        }
        self.rec_valid.next = self.out.rec_valid.val();
        self.rec_pos.next = self.out.rec_pos.val();
        self.rec_last.next = self.out.rec_last.val();
        self.rec_saturated.next = self.out.rec_saturated.val();
        self.rec_count.next = self.out.rec_count.val();

        // ---- status (spec §11.6.4) ----
        self.st_levels_opened.next = self.seq.st_levels_opened.val();
        self.st_saturated.next = self.out.st_saturated.val();
        self.st_rejected.next = self.seq.st_rejected.val();
        self.st_limit_hit.next = self.out.st_limit_hit.val();
        self.st_layer_oob.next = self.seq.st_layer_oob.val();
        self.st_no_prefill.next = self.seq.st_no_prefill.val();
        self.st_empty_channels.next = self.sched.st_empty_channels.val();
        self.st_single_value_channels.next = self.sched.st_single_value_channels.val();
    }
}
