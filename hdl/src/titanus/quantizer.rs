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

use crate::prim::counter::StatCounter;
use crate::prim::ram::{MemInfo, SpRam};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, sigs};
use crate::prim::zero_remove::ZeroRemove;
use crate::titanus::nzq::Nzq;
use crate::titanus::qu_config::ConfigTable;
use crate::titanus::qu_input::InputQueue;
use crate::titanus::qu_lane::LANE_STAGES;
use crate::titanus::qu_monitor::ChannelMonitor;
use crate::titanus::qu_output::QuOutput;
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

// scheduler states (spec §11.7; QUANT is QLEV, QNZQ and QREP)
const RUN: u64 = 0;
const QLEV: u64 = 1;
const QNZQ: u64 = 2;
const QREP: u64 = 3;
const ONZQ: u64 = 4;
// phases
const IDLE: u64 = 0;
const PREFILL: u64 = 1;
const DECODE: u64 = 2;
// in_cmd
const C_START: u64 = 0;
const C_PREFILL: u64 = 1;
const C_FLUSH: u64 = 2;
const C_DECODE: u64 = 3;
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
    out: QuOutput,
    // M takes the next item
    fen: Signal<Local, Bit>,
    // scheduler
    ph: Reg<Bits<2>>,
    st: Reg<Bits<3>>,
    bits: Reg<Bits<3>>,
    pos: Reg<Bits<17>>,
    npre: Reg<Bits<13>>,
    wp: Reg<Bits<23>>,
    rp: Reg<Bits<23>>,
    terr: Reg<Bits<3>>,
    qc: Reg<Bits<10>>,
    rrow: Reg<Bits<10>>,
    rtok: Reg<Bits<16>>,
    have: Reg<Bit>,
    wc: Reg<Bits<10>>,
    olo: Reg<Bits<8>>,
    ohi: Reg<Bits<8>>,
    onl: Reg<Bits<5>>,
    ostart: Reg<Bits<16>>,
    nzq: Nzq,
    // the NZQ start, and the monitor's registered decision for M
    nst: Reg<Bit>,
    m_need: Reg<Bit>,
    m_fresh: Reg<Bit>,
    pw_v: Reg<Bit>,
    pw_a: Reg<Bits<22>>,
    pw_d: Reg<Bits<576>>,
    err: Signal<Local, Bits<3>>,
    e: Signal<Local, Bits<3>>,
    // actions of this cycle
    m_done: Signal<Local, Bit>,
    go_quant: Signal<Local, Bit>,
    do_start: Signal<Local, Bit>,
    do_mmf: Signal<Local, Bit>,
    do_lvl: Signal<Local, Bit>,
    do_rsp: Signal<Local, Bit>,
    rsp_code: Signal<Local, Bits<3>>,
    push: Signal<Local, Bit>,
    push_rep: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    rep_init: Signal<Local, Bit>,
    szfree: Signal<Local, Bit>,
    // prefill buffer
    pbuf: SpRam<22, 576>,
    w9: Signal<Local, Bits<9>>,
    x8: Signal<Local, Bits<8>>,
    bw: Signal<Local, Bits<576>>,
    boff: Vec<Constant<Bits<576>>>,
    bbit: Vec<Constant<Bits<32>>>,
    bkbit: Vec<Constant<Bits<32>>>,
    // the coders advance
    en_code: Signal<Local, Bit>,
    szv: Reg<Bit>,
    szw: Reg<Bits<64>>,
    rspv: Reg<Bit>,
    rspe: Reg<Bits<3>>,
    n_lev: StatCounter,
    n_rej: StatCounter,
    qrd: Reg<Bit>,
    qlo_r: Reg<Bits<8>>,
    qhi_r: Reg<Bits<8>>,
    f_oob: Reg<Bit>,
    f_nopre: Reg<Bit>,
    c_empty: Reg<Bits<11>>,
    p_empty: Reg<Bit>,
    p_single: Reg<Bit>,
    p_lev: Reg<Bit>,
    c_single: Reg<Bits<11>>,
    // constants
    k64: Vec<Constant<Bits<64>>>,
    c_c_decode: Constant<Bits<2>>,
    c_c_flush: Constant<Bits<2>>,
    c_c_prefill: Constant<Bits<2>>,
    c_c_start: Constant<Bits<2>>,
    c_decode: Constant<Bits<2>>,
    c_idle: Constant<Bits<2>>,
    c_onzq: Constant<Bits<3>>,
    c_prefill: Constant<Bits<2>>,
    c_qlev: Constant<Bits<3>>,
    c_qnzq: Constant<Bits<3>>,
    c_qrep: Constant<Bits<3>>,
    c_rsp_no_start: Constant<Bits<3>>,
    c_rsp_ok: Constant<Bits<3>>,
    c_rsp_prefill_after_decode: Constant<Bits<3>>,
    c_rsp_prefill_full: Constant<Bits<3>>,
    c_rsp_sequence_full: Constant<Bits<3>>,
    c_run: Constant<Bits<3>>,
    nbeats: Constant<Bits<11>>,
    lastc: Constant<Bits<10>>,
    lgc: Constant<Bits<10>>,
    maxp: Constant<Bits<13>>,
    flip: Constant<Bits<8>>,
    one4: Constant<Bits<4>>,
    one8: Constant<Bits<8>>,
    one10: Constant<Bits<10>>,
    one11: Constant<Bits<11>>,
    one13: Constant<Bits<13>>,
    one16: Constant<Bits<16>>,
    one17: Constant<Bits<17>>,
    one23: Constant<Bits<23>>,
    k9_256: Constant<Bits<9>>,
    zero5: Constant<Bits<5>>,
    zero10: Constant<Bits<10>>,
    zero11: Constant<Bits<11>>,
    zero16: Constant<Bits<16>>,
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
        let mem = &g.memories(module)[0];
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
            cfg: ConfigTable::new(g.layers),
            inq: InputQueue::new(n, b),
            rsel: Default::default(),
            mon: ChannelMonitor::new(n, c, g.max_levels),
            out: QuOutput::new(n),
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
            fen: Default::default(),
            ph: Reg::default(),
            st: Reg::default(),
            bits: Reg::new(4u64.into()),
            pos: Reg::default(),
            npre: Reg::default(),
            wp: Reg::default(),
            rp: Reg::default(),
            terr: Reg::default(),
            qc: Reg::default(),
            rrow: Reg::default(),
            rtok: Reg::default(),
            have: Reg::default(),
            wc: Reg::default(),
            olo: Reg::default(),
            ohi: Reg::default(),
            onl: Reg::default(),
            ostart: Reg::default(),
            nzq: Nzq::default(),
            nst: Reg::default(),
            m_need: Reg::default(),
            m_fresh: Reg::default(),
            pw_v: Reg::default(),
            pw_a: Reg::default(),
            pw_d: Reg::default(),
            err: Default::default(),
            e: Default::default(),
            m_done: Default::default(),
            go_quant: Default::default(),
            do_start: Default::default(),
            do_mmf: Default::default(),
            do_lvl: Default::default(),
            do_rsp: Default::default(),
            rsp_code: Default::default(),
            push: Default::default(),
            push_rep: Default::default(),
            issue: Default::default(),
            rep_init: Default::default(),
            szfree: Default::default(),
            pbuf: SpRam::new(&mem.module, &mem.name, mem.depth, mem.width),
            w9: Default::default(),
            x8: Default::default(),
            bw: Default::default(),
            boff: consts((0..n as u64).map(|i| 9 * i)),
            bbit: consts((0..n as u64).map(|i| 9 * i)),
            bkbit: consts((0..n as u64).map(|i| 9 * i + 8)),
            en_code: Default::default(),
            szv: Reg::default(),
            szw: Reg::default(),
            rspv: Reg::default(),
            rspe: Reg::default(),
            n_lev: Default::default(),
            n_rej: Default::default(),
            qrd: Reg::default(),
            qlo_r: Reg::default(),
            qhi_r: Reg::default(),
            f_oob: Reg::default(),
            f_nopre: Reg::default(),
            c_empty: Reg::default(),
            p_empty: Reg::default(),
            p_single: Reg::default(),
            p_lev: Reg::default(),
            c_single: Reg::default(),
            k64: consts([16, 32, 48, 52]),
            c_c_decode: Constant::new(C_DECODE.into()),
            c_c_flush: Constant::new(C_FLUSH.into()),
            c_c_prefill: Constant::new(C_PREFILL.into()),
            c_c_start: Constant::new(C_START.into()),
            c_decode: Constant::new(DECODE.into()),
            c_idle: Constant::new(IDLE.into()),
            c_onzq: Constant::new(ONZQ.into()),
            c_prefill: Constant::new(PREFILL.into()),
            c_qlev: Constant::new(QLEV.into()),
            c_qnzq: Constant::new(QNZQ.into()),
            c_qrep: Constant::new(QREP.into()),
            c_rsp_no_start: Constant::new(RSP_NO_START.into()),
            c_rsp_ok: Constant::new(RSP_OK.into()),
            c_rsp_prefill_after_decode: Constant::new(RSP_PREFILL_AFTER_DECODE.into()),
            c_rsp_prefill_full: Constant::new(RSP_PREFILL_FULL.into()),
            c_rsp_sequence_full: Constant::new(RSP_SEQUENCE_FULL.into()),
            c_run: Constant::new(RUN.into()),
            nbeats: Constant::new((b as u64).into()),
            lastc: Constant::new(((c - 1) as u64).into()),
            lgc: Constant::new((n.trailing_zeros() as u64).into()),
            maxp: Constant::new((g.max_prefill as u64).into()),
            flip: Constant::new(0x80u64.into()),
            one4: Constant::new(1u64.into()),
            one8: Constant::new(1u64.into()),
            one10: Constant::new(1u64.into()),
            one11: Constant::new(1u64.into()),
            one13: Constant::new(1u64.into()),
            one16: Constant::new(1u64.into()),
            one17: Constant::new(1u64.into()),
            one23: Constant::new(1u64.into()),
            k9_256: Constant::new(256u64.into()),
            zero5: Constant::new(0u64.into()),
            zero10: Constant::new(0u64.into()),
            zero11: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            _n: n,
        }
    }
}

impl Logic for TitanusQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, ph, st, bits, pos, npre, wp, rp, terr, qc, rrow, rtok, have, wc, olo, ohi, onl, ostart, nst,
            m_need, m_fresh, pw_v, pw_a, pw_d, nzq, pbuf, szv, szw, rspv, rspe, n_lev, n_rej, qrd, qlo_r, qhi_r, f_oob,
            f_nopre, c_empty, c_single, p_empty, p_single, p_lev
        );
        self.ph.reset.next = self.reset.val();
        self.st.reset.next = self.reset.val();
        self.bits.reset.next = self.reset.val();
        self.pos.reset.next = self.reset.val();
        self.npre.reset.next = self.reset.val();
        self.wp.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.terr.reset.next = self.reset.val();
        self.qc.reset.next = self.reset.val();
        self.rrow.reset.next = self.reset.val();
        self.rtok.reset.next = self.reset.val();
        self.have.reset.next = self.reset.val();
        self.wc.reset.next = self.reset.val();
        self.olo.reset.next = self.reset.val();
        self.ohi.reset.next = self.reset.val();
        self.onl.reset.next = self.reset.val();
        self.ostart.reset.next = self.reset.val();
        self.nst.reset.next = self.reset.val();
        self.m_need.reset.next = self.reset.val();
        self.m_fresh.reset.next = self.reset.val();
        self.pw_v.reset.next = self.reset.val();
        self.pw_a.reset.next = self.reset.val();
        self.pw_d.reset.next = self.reset.val();
        self.nzq.reset.next = self.reset.val();
        self.szv.reset.next = self.reset.val();
        self.szw.reset.next = self.reset.val();
        self.rspv.reset.next = self.reset.val();
        self.rspe.reset.next = self.reset.val();
        self.n_lev.reset.next = self.reset.val();
        self.n_rej.reset.next = self.reset.val();
        self.qrd.reset.next = self.reset.val();
        self.qlo_r.reset.next = self.reset.val();
        self.qhi_r.reset.next = self.reset.val();
        self.f_oob.reset.next = self.reset.val();
        self.f_nopre.reset.next = self.reset.val();
        self.c_empty.reset.next = self.reset.val();
        self.c_single.reset.next = self.reset.val();
        self.p_empty.reset.next = self.reset.val();
        self.p_single.reset.next = self.reset.val();
        self.p_lev.reset.next = self.reset.val();

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
        self.in_ready.next = self.inq.in_ready.val();

        // ---- channel state and monitor: the row read ----
        self.rsel.next = self.inq.item_row.val();
        if (self.st.q.val() == self.c_qlev.val()) | (self.st.q.val() == self.c_qnzq.val()) {
            self.rsel.next = self.qc.q.val() >> self.lgc.val();
        }
        if self.st.q.val() == self.c_qrep.val() {
            self.rsel.next = self.rrow.q.val();
        }
        self.mon.clock.next = self.clock.val();
        self.mon.reset.next = self.reset.val();
        self.mon.rsel.next = self.rsel.val();
        self.mon.qc.next = self.qc.q.val();
        self.mon.m_row.next = self.inq.item_row.val();
        for p in 0..self._n {
            self.mon.m_x[p].next = self.inq.item_x[p].val();
            self.mon.m_k[p].next = self.inq.item_k[p].val();
        }

        // a token's rejection, in the model's order (spec §11.13)
        self.err.next = self.c_rsp_ok.val();
        if (self.inq.item_kind.val() == self.c_c_prefill.val()) & (self.npre.q.val() == self.maxp.val()) {
            self.err.next = self.c_rsp_prefill_full.val();
        }
        if (self.inq.item_kind.val() == self.c_c_prefill.val()) & (self.ph.q.val() == self.c_decode.val()) {
            self.err.next = self.c_rsp_prefill_after_decode.val();
        }
        if self.pos.q.val().get_bit(16) {
            self.err.next = self.c_rsp_sequence_full.val();
        }
        if self.ph.q.val() == self.c_idle.val() {
            self.err.next = self.c_rsp_no_start.val();
        }
        self.e.next = self.terr.q.val();
        if self.inq.item_first.val() {
            self.e.next = self.err.val();
        }

        // ---- scheduler (spec §11.7) ----
        // registered only: sz_ready stays off the level write's fanout
        self.szfree.next = !self.szv.q.val();
        self.en_code.next = self.out.en_code.val();
        self.m_done.next = false;
        self.go_quant.next = false;
        self.do_start.next = false;
        self.do_mmf.next = false;
        self.do_lvl.next = false;
        self.do_rsp.next = false;
        self.rsp_code.next = self.c_rsp_ok.val();
        self.push.next = false;
        self.push_rep.next = false;
        self.issue.next = false;
        self.rep_init.next = false;
        // the NZQ starts the cycle after the decision, from registers
        self.nst.en.next = true;
        self.nst.d.next = false;
        self.nzq.start.next = self.nst.q.val();
        self.nzq.lo.next = self.olo.q.val();
        self.nzq.hi.next = self.ohi.q.val();
        self.nzq.bits.next = self.bits.q.val();
        self.st.en.next = false;
        self.st.d.next = self.st.q.val();
        self.ph.en.next = false;
        self.ph.d.next = self.ph.q.val();
        self.qc.en.next = false;
        self.qc.d.next = self.qc.q.val() + self.one10.val();
        self.wc.en.next = false;
        self.wc.d.next = (self.inq.item_row.val() << self.lgc.val()) | self.mon.pick_lane.val();
        self.olo.en.next = false;
        self.ohi.en.next = false;
        self.onl.en.next = false;
        self.ostart.en.next = false;
        self.olo.d.next = self.mon.pick_lo.val();
        self.ohi.d.next = self.mon.pick_hi.val();
        self.onl.d.next = self.mon.pick_nl.val();
        self.ostart.d.next = self.pos.q.val().get_bits::<16>(0);
        self.terr.en.next = false;
        self.terr.d.next = self.e.val();
        // the QUANT counters count registered pulses (off the decision path)
        self.p_empty.en.next = true;
        self.p_empty.d.next = false;
        self.p_single.en.next = true;
        self.p_single.d.next = false;
        self.c_empty.en.next = self.p_empty.q.val();
        self.c_empty.d.next = self.c_empty.q.val() + bit_cast::<11, 1>(true.into());
        self.c_single.en.next = self.p_single.q.val();
        self.c_single.d.next = self.c_single.q.val() + bit_cast::<11, 1>(true.into());
        self.f_nopre.en.next = false;
        self.f_nopre.d.next = self.npre.q.val() == bit_cast::<13, 1>(false.into());

        if (self.st.q.val() == self.c_run.val()) & self.inq.item_valid.val() {
            if self.inq.item_kind.val() == self.c_c_start.val() {
                if self.ph.q.val() == self.c_prefill.val() {
                    self.go_quant.next = true;
                } else {
                    self.do_start.next = true;
                    self.do_rsp.next = true;
                    self.m_done.next = true;
                }
            }
            if self.inq.item_kind.val() == self.c_c_flush.val() {
                if self.ph.q.val() == self.c_prefill.val() {
                    self.go_quant.next = true;
                } else {
                    self.do_rsp.next = true;
                    self.m_done.next = true;
                    if self.ph.q.val() == self.c_idle.val() {
                        self.rsp_code.next = self.c_rsp_no_start.val();
                    }
                }
            }
            if self.inq.item_kind.val().get_bit(0) {
                if self.inq.item_first.val()
                    & (self.inq.item_kind.val() == self.c_c_decode.val())
                    & (self.ph.q.val() == self.c_prefill.val())
                {
                    self.go_quant.next = true;
                } else if self.e.val() != self.c_rsp_ok.val() {
                    // a rejected token is taken whole and dropped
                    self.m_done.next = true;
                    self.do_rsp.next = self.inq.item_last.val();
                    self.rsp_code.next = self.e.val();
                } else if self.inq.item_kind.val() == self.c_c_prefill.val() {
                    self.m_done.next = true;
                    self.do_mmf.next = true;
                    self.do_rsp.next = self.inq.item_last.val();
                } else if !self.m_fresh.q.val() {
                    // the registered monitor decision is a cycle old: wait
                } else if self.m_need.q.val() {
                    self.nst.d.next = true;
                    self.wc.en.next = true;
                    self.olo.en.next = true;
                    self.ohi.en.next = true;
                    self.onl.en.next = true;
                    self.ostart.en.next = true;
                    self.st.en.next = true;
                    self.st.d.next = self.c_onzq.val();
                } else if self.en_code.val() {
                    self.push.next = true;
                    self.m_done.next = true;
                    self.do_rsp.next = self.inq.item_last.val();
                }
                self.terr.en.next = self.inq.item_first.val() & self.m_done.val();
            }
        }
        if self.go_quant.val() {
            self.st.en.next = true;
            self.st.d.next = self.c_qlev.val();
            self.qc.en.next = true;
            self.qc.d.next = self.zero10.val();
            self.c_empty.en.next = true;
            self.c_empty.d.next = self.zero11.val();
            self.c_single.en.next = true;
            self.c_single.d.next = self.zero11.val();
            self.f_nopre.en.next = true;
        }
        // QLEV reads a channel's range into registers, then decides on them
        self.qrd.en.next = false;
        self.qrd.d.next = false;
        self.qlo_r.en.next = true;
        self.qlo_r.d.next = self.mon.q_lo.val();
        self.qhi_r.en.next = true;
        self.qhi_r.d.next = self.mon.q_hi.val();
        if (self.st.q.val() == self.c_qlev.val()) & !self.qrd.q.val() {
            self.qrd.en.next = true;
            self.qrd.d.next = true;
        }
        if (self.st.q.val() == self.c_qlev.val()) & self.qrd.q.val() {
            self.qrd.en.next = true;
            self.qrd.d.next = false;
            if (self.qhi_r.q.val() ^ self.flip.val()) >= (self.qlo_r.q.val() ^ self.flip.val()) {
                self.nst.d.next = true;
                self.wc.en.next = true;
                self.wc.d.next = self.qc.q.val();
                self.olo.en.next = true;
                self.ohi.en.next = true;
                self.onl.en.next = true;
                self.ostart.en.next = true;
                self.olo.d.next = self.qlo_r.q.val();
                self.ohi.d.next = self.qhi_r.q.val();
                self.onl.d.next = self.zero5.val();
                self.ostart.d.next = self.zero16.val();
                self.p_single.d.next = self.qhi_r.q.val() == self.qlo_r.q.val();
                self.st.en.next = true;
                self.st.d.next = self.c_qnzq.val();
            } else {
                // no kept prefill element: the channel stays empty
                self.p_empty.d.next = true;
                if self.qc.q.val() == self.lastc.val() {
                    self.rep_init.next = true;
                } else {
                    self.qc.en.next = true;
                }
            }
        }
        if ((self.st.q.val() == self.c_qnzq.val()) | (self.st.q.val() == self.c_onzq.val()))
            & self.nzq.done.val()
            & !self.nst.q.val()
            & self.szfree.val()
        {
            self.do_lvl.next = true;
            self.st.en.next = true;
            self.st.d.next = self.c_run.val();
            if self.st.q.val() == self.c_qnzq.val() {
                self.st.d.next = self.c_qlev.val();
                if self.wc.q.val() == self.lastc.val() {
                    self.rep_init.next = true;
                } else {
                    self.qc.en.next = true;
                }
            }
        }
        if self.rep_init.val() {
            self.st.en.next = true;
            self.st.d.next = self.c_qrep.val();
        }
        // replay: one buffered beat per cycle into the coders
        self.rrow.en.next = false;
        self.rrow.d.next = self.rrow.q.val() + self.one10.val();
        self.rtok.en.next = false;
        self.rtok.d.next = self.rtok.q.val();
        self.rp.en.next = false;
        self.rp.d.next = self.rp.q.val() + self.one23.val();
        self.have.en.next = false;
        self.have.d.next = false;
        if self.st.q.val() == self.c_qrep.val() {
            self.push_rep.next = self.have.q.val() & self.en_code.val();
            self.issue.next = (self.rp.q.val() != self.wp.q.val()) & (!self.have.q.val() | self.push_rep.val());
            self.rp.en.next = self.issue.val();
            self.have.en.next = true;
            self.have.d.next = self.issue.val() | (self.have.q.val() & !self.push_rep.val());
            if self.push_rep.val() {
                self.push.next = true;
                self.rrow.en.next = true;
                if bit_cast::<11, 10>(self.rrow.q.val()) + self.one11.val() == self.nbeats.val() {
                    self.rrow.d.next = self.zero10.val();
                    self.rtok.en.next = true;
                    self.rtok.d.next = self.rtok.q.val() + self.one16.val();
                }
            }
            if (self.rp.q.val() == self.wp.q.val()) & !self.have.q.val() {
                self.st.en.next = true;
                self.st.d.next = self.c_run.val();
                self.ph.en.next = true;
                self.ph.d.next = self.c_decode.val();
            }
        }
        if self.rep_init.val() {
            self.rrow.en.next = true;
            self.rrow.d.next = self.zero10.val();
            self.rtok.en.next = true;
            self.rtok.d.next = self.zero16.val();
            self.rp.en.next = true;
            self.rp.d.next = bit_cast::<23, 1>(false.into());
            self.have.en.next = true;
            self.have.d.next = false;
        }
        self.fen.next = !self.inq.item_valid.val() | self.m_done.val();
        // the monitor's decision for the beat in M, registered (it is the
        // deepest logic of the unit): valid when neither M nor the channel
        // state changed at the last edge and the row read was M's
        self.m_need.en.next = true;
        self.m_need.d.next = self.mon.need_any.val();
        self.m_fresh.en.next = true;
        self.m_fresh.d.next = !self.fen.val()
            & !self.do_lvl.val()
            & !self.do_start.val()
            & !self.do_mmf.val()
            & (self.st.q.val() == self.c_run.val());

        // sequence bookkeeping
        self.bits.en.next = self.do_start.val();
        self.bits.d.next = self.inq.item_bits.val();
        self.f_oob.en.next = self.do_start.val() & self.inq.item_oob.val();
        self.f_oob.d.next = true;
        if self.do_start.val() {
            self.ph.en.next = true;
            self.ph.d.next = self.c_prefill.val();
        }
        self.npre.en.next = self.do_start.val() | (self.do_mmf.val() & self.inq.item_last.val());
        self.npre.d.next = self.npre.q.val() + self.one13.val();
        if self.do_start.val() {
            self.npre.d.next = bit_cast::<13, 1>(false.into());
        }
        self.pos.en.next = self.do_start.val()
            | (self.do_rsp.val() & self.inq.item_kind.val().get_bit(0) & (self.rsp_code.val() == self.c_rsp_ok.val()));
        self.pos.d.next = self.pos.q.val() + self.one17.val();
        if self.do_start.val() {
            self.pos.d.next = bit_cast::<17, 1>(false.into());
        }
        self.wp.en.next = self.do_start.val() | self.do_mmf.val();
        self.wp.d.next = self.wp.q.val() + self.one23.val();
        if self.do_start.val() {
            self.wp.d.next = bit_cast::<23, 1>(false.into());
        }
        self.rspv.en.next = true;
        self.rspv.d.next = self.do_rsp.val();
        self.rspe.en.next = true;
        self.rspe.d.next = self.rsp_code.val();
        self.rsp_valid.next = self.rspv.q.val();
        self.rsp_err.next = self.rspe.q.val();
        // status counters (spec §5.5), counting the cycle after their event
        self.n_rej.en.next = self.rspv.q.val() & (self.rspe.q.val() != self.c_rsp_ok.val());
        self.n_rej.n.next = self.one8.val();
        self.p_lev.en.next = true;
        self.p_lev.d.next = self.do_lvl.val();
        self.n_lev.en.next = self.p_lev.q.val();
        self.n_lev.n.next = self.one8.val();

        // created entries (spec §11.7.2)
        self.szv.en.next = true;
        self.szv.d.next = self.do_lvl.val() | (self.szv.q.val() & !self.sz_ready.val());
        self.szw.en.next = self.do_lvl.val();
        self.szw.d.next = bit_cast::<64, 16>(self.nzq.scale.val())
            | (bit_cast::<64, 9>(self.nzq.zero.val()) << self.k64[0].val())
            | (bit_cast::<64, 16>(self.ostart.q.val()) << self.k64[1].val())
            | (bit_cast::<64, 5>(self.onl.q.val()) << self.k64[2].val())
            | (bit_cast::<64, 10>(self.wc.q.val()) << self.k64[3].val());
        self.sz_valid.next = self.szv.q.val();
        self.sz_word.next = self.szw.q.val();

        // prefill buffer: written by prefill beats, read by the replay
        self.bw.next = bit_cast::<576, 1>(false.into());
        for p in 0..self._n {
            self.x8.next = self.inq.item_x[p].val();
            self.w9.next = bit_cast::<9, 8>(self.x8.val());
            if self.inq.item_k[p].val() {
                self.w9.next = self.w9.val() | self.k9_256.val();
            }
            self.bw.next = self.bw.val() | (bit_cast::<576, 9>(self.w9.val()) << self.boff[p].val());
        }
        // writes go through a register (the decision's fanout stays off the
        // memory); the replay starts QLEV cycles after the last write
        self.pw_v.en.next = true;
        self.pw_v.d.next = self.do_mmf.val();
        self.pw_a.en.next = true;
        self.pw_a.d.next = self.wp.q.val().get_bits::<22>(0);
        self.pw_d.en.next = true;
        self.pw_d.d.next = self.bw.val();
        self.pbuf.en.next = self.pw_v.q.val() | self.issue.val();
        self.pbuf.we.next = self.pw_v.q.val();
        self.pbuf.addr.next = self.rp.q.val().get_bits::<22>(0);
        if self.pw_v.q.val() {
            self.pbuf.addr.next = self.pw_a.q.val();
        }
        self.pbuf.wdata.next = self.pw_d.q.val();

        // channel registers: cleared at a start, MMF from M, a level from the NZQ
        self.mon.clr.next = self.do_start.val();
        self.mon.do_mmf.next = self.do_mmf.val();
        self.mon.do_lvl.next = self.do_lvl.val();
        self.mon.wc.next = self.wc.q.val();
        self.mon.olo.next = self.olo.q.val();
        self.mon.ohi.next = self.ohi.q.val();
        self.mon.onl.next = self.onl.q.val();
        self.mon.lvl_tl.next = self.nzq.tl.val();
        self.mon.lvl_th.next = self.nzq.th.val();
        self.mon.lvl_s.next = self.nzq.scale.val();
        self.mon.lvl_zs.next = self.nzq.zs.val();
        self.inq.fen.next = self.fen.val();

        // ---- coders: a beat of M, or a replayed beat ----
        self.out.clock.next = self.clock.val();
        self.out.reset.next = self.reset.val();
        self.out.push.next = self.push.val();
        self.out.pos0.next = self.pos.q.val().get_bits::<16>(0);
        self.out.last0.next = self.inq.item_last.val();
        if self.st.q.val() == self.c_qrep.val() {
            self.out.pos0.next = self.rtok.q.val();
            self.out.last0.next = bit_cast::<11, 10>(self.rrow.q.val()) + self.one11.val() == self.nbeats.val();
        }
        for p in 0..self._n {
            self.out.x[p].next = self.inq.item_x[p].val();
            self.out.k[p].next = self.inq.item_k[p].val();
            if self.st.q.val() == self.c_qrep.val() {
                self.out.x[p].next = self.pbuf.rdata.val().get_bits::<8>(self.bbit[p].val().index());
                self.out.k[p].next = self.pbuf.rdata.val().get_bit(self.bkbit[p].val().index());
            }
            self.out.tl[p].next = self.mon.tl[p].val();
            self.out.th[p].next = self.mon.th[p].val();
            self.out.s[p].next = self.mon.s[p].val();
            self.out.zs[p].next = self.mon.zs[p].val();
        }
        self.out.q.next = (self.one4.val() << bit_cast::<4, 3>(self.bits.q.val())) - self.one4.val();
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
        self.st_levels_opened.next = self.n_lev.count.val();
        self.st_saturated.next = self.out.st_saturated.val();
        self.st_rejected.next = self.n_rej.count.val();
        self.st_limit_hit.next = self.out.st_limit_hit.val();
        self.st_layer_oob.next = self.f_oob.q.val();
        self.st_no_prefill.next = self.f_nopre.q.val();
        self.st_empty_channels.next = self.c_empty.q.val();
        self.st_single_value_channels.next = self.c_single.q.val();
    }
}
