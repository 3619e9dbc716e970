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
use crate::prim::div_round::DivRound;
use crate::prim::ram::{MemInfo, SpRam};
use crate::prim::reg::Reg;
use crate::prim::zero_insert::ZeroInsert;
use crate::prim::zero_remove::ZeroRemove;
use crate::titanus::nzq::Nzq;
use rust_hdl::prelude::*;

/// `rsp_err` codes (spec §11.13).
pub const RSP_OK: u64 = 0;
pub const RSP_NO_START: u64 = 1;
pub const RSP_PREFILL_AFTER_DECODE: u64 = 2;
pub const RSP_PREFILL_FULL: u64 = 3;
pub const RSP_SEQUENCE_FULL: u64 = 4;

/// Cycles a lane coder adds after E0: E1 (256x + zS, range flags), then
/// the rounding divider's set-up and 4 steps.
const LANE_STAGES: usize = 6;
/// Divider width: 2n + S < (2Q + 1) S <= 31 * 21760 < 2^20.
const DW: usize = 20;

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

/// The state of one channel: MMF range in PREFILL, current level after.
#[derive(LogicBlock)]
pub struct QuChannel {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A sequence starts: MMF to max = -128, min = 127, no level.
    pub clr: Signal<In, Bit>,
    /// MMF update with the new range.
    pub mmf_en: Signal<In, Bit>,
    pub mmf_lo: Signal<In, Bits<8>>,
    pub mmf_hi: Signal<In, Bits<8>>,
    /// A level opens: range, its NZQ outputs, the new level count.
    pub lvl_en: Signal<In, Bit>,
    pub lvl_lo: Signal<In, Bits<8>>,
    pub lvl_hi: Signal<In, Bits<8>>,
    pub lvl_tl: Signal<In, Bits<8>>,
    pub lvl_th: Signal<In, Bits<8>>,
    pub lvl_s: Signal<In, Bits<16>>,
    pub lvl_zs: Signal<In, Bits<24>>,
    pub lvl_nl: Signal<In, Bits<5>>,
    /// Range (MMF min/max, then the current level's), INT8.
    pub lo: Signal<Out, Bits<8>>,
    pub hi: Signal<Out, Bits<8>>,
    /// Current level: tolerance range, scale, z * S; level count (0: empty).
    pub tl: Signal<Out, Bits<8>>,
    pub th: Signal<Out, Bits<8>>,
    pub s: Signal<Out, Bits<16>>,
    pub zs: Signal<Out, Bits<24>>,
    pub nl: Signal<Out, Bits<5>>,
    r_lo: Reg<Bits<8>>,
    r_hi: Reg<Bits<8>>,
    r_tl: Reg<Bits<8>>,
    r_th: Reg<Bits<8>>,
    r_s: Reg<Bits<16>>,
    r_zs: Reg<Bits<24>>,
    r_nl: Reg<Bits<5>>,
    c7f: Constant<Bits<8>>,
    c80: Constant<Bits<8>>,
    zero5: Constant<Bits<5>>,
}

impl Default for QuChannel {
    fn default() -> Self {
        QuChannel {
            clock: Default::default(),
            reset: Default::default(),
            clr: Default::default(),
            mmf_en: Default::default(),
            mmf_lo: Default::default(),
            mmf_hi: Default::default(),
            lvl_en: Default::default(),
            lvl_lo: Default::default(),
            lvl_hi: Default::default(),
            lvl_tl: Default::default(),
            lvl_th: Default::default(),
            lvl_s: Default::default(),
            lvl_zs: Default::default(),
            lvl_nl: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            tl: Default::default(),
            th: Default::default(),
            s: Default::default(),
            zs: Default::default(),
            nl: Default::default(),
            r_lo: Reg::new(0x7Fu64.into()),
            r_hi: Reg::new(0x80u64.into()),
            r_tl: Reg::default(),
            r_th: Reg::default(),
            r_s: Reg::default(),
            r_zs: Reg::default(),
            r_nl: Reg::default(),
            c7f: Constant::new(0x7Fu64.into()),
            c80: Constant::new(0x80u64.into()),
            zero5: Constant::new(0u64.into()),
        }
    }
}

impl Logic for QuChannel {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, r_lo, r_hi, r_tl, r_th, r_s, r_zs, r_nl);
        self.r_lo.reset.next = self.reset.val();
        self.r_hi.reset.next = self.reset.val();
        self.r_tl.reset.next = self.reset.val();
        self.r_th.reset.next = self.reset.val();
        self.r_s.reset.next = self.reset.val();
        self.r_zs.reset.next = self.reset.val();
        self.r_nl.reset.next = self.reset.val();
        self.r_lo.en.next = self.clr.val() | self.mmf_en.val() | self.lvl_en.val();
        self.r_hi.en.next = self.clr.val() | self.mmf_en.val() | self.lvl_en.val();
        self.r_lo.d.next = self.lvl_lo.val();
        self.r_hi.d.next = self.lvl_hi.val();
        if self.mmf_en.val() {
            self.r_lo.d.next = self.mmf_lo.val();
            self.r_hi.d.next = self.mmf_hi.val();
        }
        if self.clr.val() {
            self.r_lo.d.next = self.c7f.val();
            self.r_hi.d.next = self.c80.val();
        }
        // the level fields need no clearing: a level count of 0 hides them
        self.r_tl.en.next = self.lvl_en.val();
        self.r_th.en.next = self.lvl_en.val();
        self.r_s.en.next = self.lvl_en.val();
        self.r_zs.en.next = self.lvl_en.val();
        self.r_tl.d.next = self.lvl_tl.val();
        self.r_th.d.next = self.lvl_th.val();
        self.r_s.d.next = self.lvl_s.val();
        self.r_zs.d.next = self.lvl_zs.val();
        self.r_nl.en.next = self.clr.val() | self.lvl_en.val();
        self.r_nl.d.next = self.lvl_nl.val();
        if self.clr.val() {
            self.r_nl.d.next = self.zero5.val();
        }
        self.lo.next = self.r_lo.q.val();
        self.hi.next = self.r_hi.q.val();
        self.tl.next = self.r_tl.q.val();
        self.th.next = self.r_th.q.val();
        self.s.next = self.r_s.q.val();
        self.zs.next = self.r_zs.q.val();
        self.nl.next = self.r_nl.q.val();
    }
}

/// One lane's coder (spec §11.5.3): E0 snapshot of the element and its
/// level, E1 `n = max(0, 256x + zS)` and the range flags, then the rounding
/// divider of §5.3 (`floor((2n + S) / 2S)`, 4 quotient bits). Below the
/// tolerance range the code is 0 and above it Q (clamped: only at the
/// level limit); inside it `n < 0` means code 0 and the quotient is <= Q.
#[derive(LogicBlock)]
pub struct QuLane {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance.
    pub en: Signal<In, Bit>,
    /// Element, kept bit, and its channel's current level; Q = 2^b - 1.
    pub x: Signal<In, Bits<8>>,
    pub k: Signal<In, Bit>,
    pub tl: Signal<In, Bits<8>>,
    pub th: Signal<In, Bits<8>>,
    pub s: Signal<In, Bits<16>>,
    pub zs: Signal<In, Bits<24>>,
    pub q: Signal<In, Bits<4>>,
    /// `LANE_STAGES + 1` advancing cycles later: the code, label (kept and
    /// code != 0) and saturated (kept and clamped).
    pub code: Signal<Out, Bits<4>>,
    pub label: Signal<Out, Bit>,
    pub sat: Signal<Out, Bit>,
    /// The kept bit, aligned with `code`.
    pub kept: Signal<Out, Bit>,
    e0_x: Reg<Bits<8>>,
    e0_k: Reg<Bit>,
    e0_tl: Reg<Bits<8>>,
    e0_th: Reg<Bits<8>>,
    e0_s: Reg<Bits<16>>,
    e0_zs: Reg<Bits<24>>,
    e0_q: Reg<Bits<4>>,
    e1_n: Reg<Bits<DW>>,
    e1_s: Reg<Bits<DW>>,
    // {q, k, above, below} beside E1 and the divider
    fl: Vec<Reg<Bits<7>>>,
    div: DivRound<DW>,
    n24: Signal<Local, Bits<24>>,
    below: Signal<Local, Bit>,
    above: Signal<Local, Bit>,
    f: Signal<Local, Bits<7>>,
    cd: Signal<Local, Bits<4>>,
    sext: Constant<Bits<24>>,
    c8: Constant<Bits<24>>,
    flip: Constant<Bits<8>>,
    zero4: Constant<Bits<4>>,
    zero_dw: Constant<Bits<DW>>,
    zero2: Constant<Bits<2>>,
    sh1: Constant<Bits<7>>,
    sh2: Constant<Bits<7>>,
    sh3: Constant<Bits<7>>,
    _fl: usize,
}

impl Default for QuLane {
    fn default() -> Self {
        let nfl = LANE_STAGES - 1;
        QuLane {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            x: Default::default(),
            k: Default::default(),
            tl: Default::default(),
            th: Default::default(),
            s: Default::default(),
            zs: Default::default(),
            q: Default::default(),
            code: Default::default(),
            label: Default::default(),
            sat: Default::default(),
            kept: Default::default(),
            e0_x: Reg::default(),
            e0_k: Reg::default(),
            e0_tl: Reg::default(),
            e0_th: Reg::default(),
            e0_s: Reg::default(),
            e0_zs: Reg::default(),
            e0_q: Reg::default(),
            e1_n: Reg::default(),
            e1_s: Reg::default(),
            fl: (0..nfl + 1).map(|_| Reg::default()).collect(),
            div: DivRound::new(4),
            n24: Default::default(),
            below: Default::default(),
            above: Default::default(),
            f: Default::default(),
            cd: Default::default(),
            sext: Constant::new(0xFF_FF00u64.into()),
            c8: Constant::new(8u64.into()),
            flip: Constant::new(0x80u64.into()),
            zero4: Constant::new(0u64.into()),
            zero_dw: Constant::new(0u64.into()),
            zero2: Constant::new(0u64.into()),
            sh1: Constant::new(1u64.into()),
            sh2: Constant::new(2u64.into()),
            sh3: Constant::new(3u64.into()),
            _fl: nfl + 1,
        }
    }
}

impl Logic for QuLane {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, e0_x, e0_k, e0_tl, e0_th, e0_s, e0_zs, e0_q, e1_n, e1_s, div);
        self.e0_x.reset.next = self.reset.val();
        self.e0_k.reset.next = self.reset.val();
        self.e0_tl.reset.next = self.reset.val();
        self.e0_th.reset.next = self.reset.val();
        self.e0_s.reset.next = self.reset.val();
        self.e0_zs.reset.next = self.reset.val();
        self.e0_q.reset.next = self.reset.val();
        self.e1_n.reset.next = self.reset.val();
        self.e1_s.reset.next = self.reset.val();
        self.div.reset.next = self.reset.val();
        self.e0_x.en.next = self.en.val();
        self.e0_k.en.next = self.en.val();
        self.e0_tl.en.next = self.en.val();
        self.e0_th.en.next = self.en.val();
        self.e0_s.en.next = self.en.val();
        self.e0_zs.en.next = self.en.val();
        self.e0_q.en.next = self.en.val();
        self.e1_n.en.next = self.en.val();
        self.e1_s.en.next = self.en.val();
        self.div.en.next = self.en.val();
        self.e0_x.d.next = self.x.val();
        self.e0_k.d.next = self.k.val();
        self.e0_tl.d.next = self.tl.val();
        self.e0_th.d.next = self.th.val();
        self.e0_s.d.next = self.s.val();
        self.e0_zs.d.next = self.zs.val();
        self.e0_q.d.next = self.q.val();

        // E1: n = 256 x + zS (signed), clamped at 0; signed range compares
        self.n24.next = bit_cast::<24, 8>(self.e0_x.q.val());
        if self.e0_x.q.val().get_bit(7) {
            self.n24.next = self.n24.val() | self.sext.val();
        }
        self.n24.next = (self.n24.val() << self.c8.val()) + self.e0_zs.q.val();
        self.e1_n.d.next = self.n24.val().get_bits::<DW>(0);
        if self.n24.val().get_bit(23) {
            self.e1_n.d.next = self.zero_dw.val();
        }
        self.e1_s.d.next = bit_cast::<DW, 16>(self.e0_s.q.val());
        self.below.next = (self.e0_x.q.val() ^ self.flip.val()) < (self.e0_tl.q.val() ^ self.flip.val());
        self.above.next = (self.e0_x.q.val() ^ self.flip.val()) > (self.e0_th.q.val() ^ self.flip.val());
        self.f.next = (bit_cast::<7, 4>(self.e0_q.q.val()) << self.sh3.val())
            | (bit_cast::<7, 1>(self.e0_k.q.val().into()) << self.sh2.val())
            | (bit_cast::<7, 1>(self.above.val().into()) << self.sh1.val())
            | bit_cast::<7, 1>(self.below.val().into());
        for i in 0..self._fl {
            self.fl[i].clock.next = self.clock.val();
            self.fl[i].reset.next = self.reset.val();
            self.fl[i].en.next = self.en.val();
        }
        self.fl[0].d.next = self.f.val();
        for i in 1..self._fl {
            self.fl[i].d.next = self.fl[i - 1].q.val();
        }

        self.div.n.next = self.e1_n.q.val();
        self.div.d.next = self.e1_s.q.val();
        self.div.in_valid.next = true;

        for l in self._fl..(self._fl + 1) {
            self.cd.next = self.div.q.val().get_bits::<4>(0);
            if self.fl[l - 1].q.val().get_bit(0) {
                self.cd.next = self.zero4.val();
            }
            if self.fl[l - 1].q.val().get_bit(1) {
                self.cd.next = self.fl[l - 1].q.val().get_bits::<4>(3);
            }
            self.code.next = self.cd.val();
            self.kept.next = self.fl[l - 1].q.val().get_bit(2);
            self.label.next = self.fl[l - 1].q.val().get_bit(2) & (self.cd.val() != self.zero4.val());
            self.sat.next =
                self.fl[l - 1].q.val().get_bit(2) & (self.fl[l - 1].q.val().get_bits::<2>(0) != self.zero2.val());
        }
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
    // configuration table: bit widths, K at [l], V at [layers + l]
    tab: Vec<Reg<Bits<3>>>,
    tw_d: Reg<Bit>,
    tw_e: Reg<Bits<2>>,
    layer_ok: Signal<Local, Bit>,
    bits_ok: Signal<Local, Bit>,
    t_oob: Signal<Local, Bit>,
    t_layer: Signal<Local, Bits<8>>,
    t_bits: Signal<Local, Bits<3>>,
    s3: Signal<Local, Bits<3>>,
    // skid, expansion, framing, M
    hd_valid: Reg<Bit>,
    hd_cmd: Reg<Bits<2>>,
    hd_bits: Reg<Bits<3>>,
    hd_oob: Reg<Bit>,
    hd_mask: Vec<Reg<Bit>>,
    hd_data: Vec<Reg<Bits<8>>>,
    sk_valid: Reg<Bit>,
    sk_cmd: Reg<Bits<2>>,
    sk_bits: Reg<Bits<3>>,
    sk_oob: Reg<Bit>,
    sk_mask: Vec<Reg<Bit>>,
    sk_data: Vec<Reg<Bits<8>>>,
    acc: Signal<Local, Bit>,
    fen: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    i_cmd: Signal<Local, Bits<2>>,
    tokbeat: Signal<Local, Bit>,
    nb: Signal<Local, Bits<11>>,
    zi: ZeroInsert<8>,
    bcnt: Reg<Bits<11>>,
    tkind: Reg<Bit>,
    m_valid: Reg<Bit>,
    m_kind: Reg<Bits<2>>,
    m_first: Reg<Bit>,
    m_last: Reg<Bit>,
    m_row: Reg<Bits<10>>,
    m_bits: Reg<Bits<3>>,
    m_oob: Reg<Bit>,
    m_x: Vec<Reg<Bits<8>>>,
    m_k: Vec<Reg<Bit>>,
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
    chans: Vec<QuChannel>,
    // the channel row read (beat of M, replayed beat, or QUANT channel)
    rsel: Signal<Local, Bits<10>>,
    hit: Signal<Local, Bit>,
    s5: Signal<Local, Bits<5>>,
    s8: Signal<Local, Bits<8>>,
    s16: Signal<Local, Bits<16>>,
    s24: Signal<Local, Bits<24>>,
    rd_lo: Vec<Signal<Local, Bits<8>>>,
    rd_hi: Vec<Signal<Local, Bits<8>>>,
    rd_tl: Vec<Signal<Local, Bits<8>>>,
    rd_th: Vec<Signal<Local, Bits<8>>>,
    rd_s: Vec<Signal<Local, Bits<16>>>,
    rd_zs: Vec<Signal<Local, Bits<24>>>,
    rd_nl: Vec<Signal<Local, Bits<5>>>,
    // MMF and channel monitor
    mn: Vec<Signal<Local, Bits<8>>>,
    mx: Vec<Signal<Local, Bits<8>>>,
    need: Vec<Signal<Local, Bit>>,
    found: Signal<Local, Bit>,
    wlo: Vec<Signal<Local, Bits<8>>>,
    whi: Vec<Signal<Local, Bits<8>>>,
    ohb: Signal<Local, Bit>,
    s10: Signal<Local, Bits<10>>,
    nst: Reg<Bit>,
    m_need: Reg<Bit>,
    m_fresh: Reg<Bit>,
    need_r: Vec<Reg<Bit>>,
    wlo_r: Vec<Reg<Bits<8>>>,
    whi_r: Vec<Reg<Bits<8>>>,
    nl_r: Vec<Reg<Bits<5>>>,
    any: Signal<Local, Bit>,
    pw_v: Reg<Bit>,
    pw_a: Reg<Bits<22>>,
    pw_d: Reg<Bits<576>>,
    pk_lo: Signal<Local, Bits<8>>,
    pk_hi: Signal<Local, Bits<8>>,
    pk_nl: Signal<Local, Bits<5>>,
    pk_lane: Signal<Local, Bits<10>>,
    qlane: Signal<Local, Bits<10>>,
    ql_lo: Signal<Local, Bits<8>>,
    ql_hi: Signal<Local, Bits<8>>,
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
    // coders and output
    lanes: Vec<QuLane>,
    en_code: Signal<Local, Bit>,
    ev: Vec<Reg<Bit>>,
    epos: Vec<Reg<Bits<16>>>,
    elast: Vec<Reg<Bit>>,
    zr: ZeroRemove<4>,
    pc: Vec<Signal<Local, Bits<8>>>,
    dl_bits: Vec<Reg<Bit>>,
    dl_pos: Vec<Reg<Bits<16>>>,
    dl_last: Vec<Reg<Bit>>,
    dl_sat: Vec<Reg<Bits<8>>>,
    fire: Signal<Local, Bit>,
    x_v: Signal<Local, Bit>,
    o_load: Signal<Local, Bit>,
    k_load: Signal<Local, Bit>,
    x_codes: Vec<Signal<Local, Bits<4>>>,
    x_idx: Vec<Signal<Local, Bit>>,
    x_lab: Vec<Signal<Local, Bit>>,
    x_pos: Signal<Local, Bits<16>>,
    x_last: Signal<Local, Bit>,
    x_sat: Signal<Local, Bits<8>>,
    o_v: Reg<Bit>,
    o_pos: Reg<Bits<16>>,
    o_last: Reg<Bit>,
    o_sat: Reg<Bits<8>>,
    o_cnt: Reg<Bits<8>>,
    o_idx: Vec<Reg<Bit>>,
    o_lab: Vec<Reg<Bit>>,
    o_cod: Vec<Reg<Bits<4>>>,
    k_v: Reg<Bit>,
    k_pos: Reg<Bits<16>>,
    k_last: Reg<Bit>,
    k_sat: Reg<Bits<8>>,
    k_cnt: Reg<Bits<8>>,
    k_idx: Vec<Reg<Bit>>,
    k_lab: Vec<Reg<Bit>>,
    k_cod: Vec<Reg<Bits<4>>>,
    szv: Reg<Bit>,
    szw: Reg<Bits<64>>,
    rspv: Reg<Bit>,
    rspe: Reg<Bits<3>>,
    n_lev: StatCounter,
    n_sat: StatCounter,
    sat_v: Reg<Bit>,
    sat_n: Reg<Bits<8>>,
    n_rej: StatCounter,
    qrd: Reg<Bit>,
    qlo_r: Reg<Bits<8>>,
    qhi_r: Reg<Bits<8>>,
    f_limit: Reg<Bit>,
    f_oob: Reg<Bit>,
    f_nopre: Reg<Bit>,
    c_empty: Reg<Bits<11>>,
    p_empty: Reg<Bit>,
    p_single: Reg<Bit>,
    p_lev: Reg<Bit>,
    c_single: Reg<Bits<11>>,
    // constants
    lidx: Vec<Constant<Bits<8>>>,
    ridx: Vec<Constant<Bits<10>>>,
    cidx: Vec<Constant<Bits<10>>>,
    lix: Vec<Constant<Bits<10>>>,
    k2: Vec<Constant<Bits<2>>>,
    k3: Vec<Constant<Bits<3>>>,
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
    layers9: Constant<Bits<9>>,
    nbeats: Constant<Bits<11>>,
    lastc: Constant<Bits<10>>,
    lgc: Constant<Bits<10>>,
    lmask: Constant<Bits<10>>,
    maxp: Constant<Bits<13>>,
    maxl: Constant<Bits<5>>,
    flip: Constant<Bits<8>>,
    one4: Constant<Bits<4>>,
    one5: Constant<Bits<5>>,
    one8: Constant<Bits<8>>,
    one10: Constant<Bits<10>>,
    one11: Constant<Bits<11>>,
    one13: Constant<Bits<13>>,
    one16: Constant<Bits<16>>,
    one17: Constant<Bits<17>>,
    one23: Constant<Bits<23>>,
    k9_256: Constant<Bits<9>>,
    zero5: Constant<Bits<5>>,
    zero8: Constant<Bits<8>>,
    zero10: Constant<Bits<10>>,
    zero11: Constant<Bits<11>>,
    zero16: Constant<Bits<16>>,
    zero24: Constant<Bits<24>>,
    _n: usize,
    _c: usize,
    _b: usize,
    _layers: usize,
    _ne: usize,
    _lz: usize,
    _n2: usize,
    _lz2n: usize,
}

fn sigs<D: Direction, T: Synth>(k: usize) -> Vec<Signal<D, T>> {
    (0..k).map(|_| Default::default()).collect()
}

fn regs<T: Synth>(k: usize) -> Vec<Reg<T>> {
    (0..k).map(|_| Reg::default()).collect()
}

fn consts<const W: usize>(vals: impl IntoIterator<Item = u64>) -> Vec<Constant<Bits<W>>> {
    vals.into_iter().map(|v| Constant::new(v.into())).collect()
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
        let lz = ZeroRemove::<4>::latency(n, 2);
        let ne = LANE_STAGES + 1;
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
            tab: (0..2 * g.layers).map(|_| Reg::new(4u64.into())).collect(),
            tw_d: Reg::default(),
            tw_e: Reg::default(),
            layer_ok: Default::default(),
            bits_ok: Default::default(),
            t_oob: Default::default(),
            t_layer: Default::default(),
            t_bits: Default::default(),
            s3: Default::default(),
            hd_valid: Reg::default(),
            hd_cmd: Reg::default(),
            hd_bits: Reg::default(),
            hd_oob: Reg::default(),
            hd_mask: regs(n),
            hd_data: regs(n),
            sk_valid: Reg::default(),
            sk_cmd: Reg::default(),
            sk_bits: Reg::default(),
            sk_oob: Reg::default(),
            sk_mask: regs(n),
            sk_data: regs(n),
            acc: Default::default(),
            fen: Default::default(),
            load: Default::default(),
            i_cmd: Default::default(),
            tokbeat: Default::default(),
            nb: Default::default(),
            zi: ZeroInsert::new(n, 0),
            bcnt: Reg::default(),
            tkind: Reg::default(),
            m_valid: Reg::default(),
            m_kind: Reg::default(),
            m_first: Reg::default(),
            m_last: Reg::default(),
            m_row: Reg::default(),
            m_bits: Reg::default(),
            m_oob: Reg::default(),
            m_x: regs(n),
            m_k: regs(n),
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
            chans: (0..c).map(|_| QuChannel::default()).collect(),
            rsel: Default::default(),
            hit: Default::default(),
            s5: Default::default(),
            s8: Default::default(),
            s16: Default::default(),
            s24: Default::default(),
            rd_lo: sigs(n),
            rd_hi: sigs(n),
            rd_tl: sigs(n),
            rd_th: sigs(n),
            rd_s: sigs(n),
            rd_zs: sigs(n),
            rd_nl: sigs(n),
            mn: sigs(n),
            mx: sigs(n),
            need: sigs(n),
            found: Default::default(),
            wlo: sigs(n),
            whi: sigs(n),
            ohb: Default::default(),
            s10: Default::default(),
            nst: Reg::default(),
            m_need: Reg::default(),
            m_fresh: Reg::default(),
            need_r: regs(n),
            wlo_r: regs(n),
            whi_r: regs(n),
            nl_r: regs(n),
            any: Default::default(),
            pw_v: Reg::default(),
            pw_a: Reg::default(),
            pw_d: Reg::default(),
            pk_lo: Default::default(),
            pk_hi: Default::default(),
            pk_nl: Default::default(),
            pk_lane: Default::default(),
            qlane: Default::default(),
            ql_lo: Default::default(),
            ql_hi: Default::default(),
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
            lanes: (0..n).map(|_| QuLane::default()).collect(),
            en_code: Default::default(),
            ev: regs(ne),
            epos: regs(ne),
            elast: regs(ne),
            zr: ZeroRemove::new(n, 2),
            pc: sigs(2 * n),
            dl_bits: regs(lz * 2 * n),
            dl_pos: regs(lz),
            dl_last: regs(lz),
            dl_sat: regs(lz),
            fire: Default::default(),
            x_v: Default::default(),
            o_load: Default::default(),
            k_load: Default::default(),
            x_codes: sigs(n),
            x_idx: sigs(n),
            x_lab: sigs(n),
            x_pos: Default::default(),
            x_last: Default::default(),
            x_sat: Default::default(),
            o_v: Reg::default(),
            o_pos: Reg::default(),
            o_last: Reg::default(),
            o_sat: Reg::default(),
            o_cnt: Reg::default(),
            o_idx: regs(n),
            o_lab: regs(n),
            o_cod: regs(n),
            k_v: Reg::default(),
            k_pos: Reg::default(),
            k_last: Reg::default(),
            k_sat: Reg::default(),
            k_cnt: Reg::default(),
            k_idx: regs(n),
            k_lab: regs(n),
            k_cod: regs(n),
            szv: Reg::default(),
            szw: Reg::default(),
            rspv: Reg::default(),
            rspe: Reg::default(),
            n_lev: Default::default(),
            n_sat: Default::default(),
            sat_v: Reg::default(),
            sat_n: Reg::default(),
            n_rej: Default::default(),
            qrd: Reg::default(),
            qlo_r: Reg::default(),
            qhi_r: Reg::default(),
            f_limit: Reg::default(),
            f_oob: Reg::default(),
            f_nopre: Reg::default(),
            c_empty: Reg::default(),
            p_empty: Reg::default(),
            p_single: Reg::default(),
            p_lev: Reg::default(),
            c_single: Reg::default(),
            lidx: consts(0..g.layers as u64),
            ridx: consts(0..b as u64),
            cidx: consts(0..c as u64),
            lix: consts(0..n as u64),
            k2: consts(0..3),
            k3: consts([0, 2, 3, 4]),
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
            layers9: Constant::new((g.layers as u64).into()),
            nbeats: Constant::new((b as u64).into()),
            lastc: Constant::new(((c - 1) as u64).into()),
            lgc: Constant::new((n.trailing_zeros() as u64).into()),
            lmask: Constant::new(((n - 1) as u64).into()),
            maxp: Constant::new((g.max_prefill as u64).into()),
            maxl: Constant::new((g.max_levels as u64).into()),
            flip: Constant::new(0x80u64.into()),
            one4: Constant::new(1u64.into()),
            one5: Constant::new(1u64.into()),
            one8: Constant::new(1u64.into()),
            one10: Constant::new(1u64.into()),
            one11: Constant::new(1u64.into()),
            one13: Constant::new(1u64.into()),
            one16: Constant::new(1u64.into()),
            one17: Constant::new(1u64.into()),
            one23: Constant::new(1u64.into()),
            k9_256: Constant::new(256u64.into()),
            zero5: Constant::new(0u64.into()),
            zero8: Constant::new(0u64.into()),
            zero10: Constant::new(0u64.into()),
            zero11: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            zero24: Constant::new(0u64.into()),
            _n: n,
            _c: c,
            _b: b,
            _layers: g.layers,
            _ne: ne,
            _lz: lz,
            _n2: 2 * n,
            _lz2n: 2 * n * lz,
        }
    }
}

impl Logic for TitanusQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, tw_d, tw_e, hd_valid, hd_cmd, hd_bits, hd_oob, sk_valid, sk_cmd, sk_bits, sk_oob, zi, bcnt,
            tkind, m_valid, m_kind, m_first, m_last, m_row, m_bits, m_oob, ph, st, bits, pos, npre, wp, rp, terr, qc,
            rrow, rtok, have, wc, olo, ohi, onl, ostart, nst, m_need, m_fresh, pw_v, pw_a, pw_d, nzq, pbuf, zr, o_v,
            o_pos, o_last, o_sat, o_cnt, k_v, k_pos, k_last, k_sat, k_cnt, szv, szw, rspv, rspe, n_lev, n_sat, sat_v,
            sat_n, n_rej, qrd, qlo_r, qhi_r, f_limit, f_oob, f_nopre, c_empty, c_single, p_empty, p_single, p_lev
        );
        self.tw_d.reset.next = self.reset.val();
        self.tw_e.reset.next = self.reset.val();
        self.sk_valid.reset.next = self.reset.val();
        self.hd_valid.reset.next = self.reset.val();
        self.hd_cmd.reset.next = self.reset.val();
        self.hd_bits.reset.next = self.reset.val();
        self.hd_oob.reset.next = self.reset.val();
        self.sk_cmd.reset.next = self.reset.val();
        self.sk_bits.reset.next = self.reset.val();
        self.sk_oob.reset.next = self.reset.val();
        self.zi.reset.next = self.reset.val();
        self.bcnt.reset.next = self.reset.val();
        self.tkind.reset.next = self.reset.val();
        self.m_valid.reset.next = self.reset.val();
        self.m_kind.reset.next = self.reset.val();
        self.m_first.reset.next = self.reset.val();
        self.m_last.reset.next = self.reset.val();
        self.m_row.reset.next = self.reset.val();
        self.m_bits.reset.next = self.reset.val();
        self.m_oob.reset.next = self.reset.val();
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
        self.zr.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_pos.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_sat.reset.next = self.reset.val();
        self.o_cnt.reset.next = self.reset.val();
        self.k_v.reset.next = self.reset.val();
        self.k_pos.reset.next = self.reset.val();
        self.k_last.reset.next = self.reset.val();
        self.k_sat.reset.next = self.reset.val();
        self.k_cnt.reset.next = self.reset.val();
        self.szv.reset.next = self.reset.val();
        self.szw.reset.next = self.reset.val();
        self.rspv.reset.next = self.reset.val();
        self.rspe.reset.next = self.reset.val();
        self.n_lev.reset.next = self.reset.val();
        self.n_sat.reset.next = self.reset.val();
        self.n_rej.reset.next = self.reset.val();
        self.sat_v.reset.next = self.reset.val();
        self.sat_n.reset.next = self.reset.val();
        self.qrd.reset.next = self.reset.val();
        self.qlo_r.reset.next = self.reset.val();
        self.qhi_r.reset.next = self.reset.val();
        self.f_limit.reset.next = self.reset.val();
        self.f_oob.reset.next = self.reset.val();
        self.f_nopre.reset.next = self.reset.val();
        self.c_empty.reset.next = self.reset.val();
        self.c_single.reset.next = self.reset.val();
        self.p_empty.reset.next = self.reset.val();
        self.p_single.reset.next = self.reset.val();
        self.p_lev.reset.next = self.reset.val();

        // ---- configuration table (spec §11.3): bit widths only ----
        self.layer_ok.next = bit_cast::<9, 8>(self.tw_layer.val()) < self.layers9.val();
        self.bits_ok.next = (self.tw_bits.val() == self.k3[1].val())
            | (self.tw_bits.val() == self.k3[2].val())
            | (self.tw_bits.val() == self.k3[3].val());
        self.tw_d.en.next = true;
        self.tw_e.en.next = true;
        self.tw_d.d.next = self.tw_valid.val();
        self.tw_e.d.next = self.k2[0].val();
        if !self.bits_ok.val() {
            self.tw_e.d.next = self.k2[2].val();
        }
        if !self.layer_ok.val() {
            self.tw_e.d.next = self.k2[1].val();
        }
        self.tw_done.next = self.tw_d.q.val();
        self.tw_error.next = self.tw_e.q.val();
        // the width of a starting sequence, looked up as its start is
        // accepted (the table as written at earlier edges; spec §11.13) and
        // carried with it: layer >= layers reads layer 0
        self.t_oob.next = bit_cast::<9, 8>(self.in_layer.val()) >= self.layers9.val();
        self.t_layer.next = self.in_layer.val();
        if self.t_oob.val() {
            self.t_layer.next = self.zero8.val();
        }
        self.t_bits.next = self.k3[0].val();
        for l in self._layers..(self._layers + 1) {
            for e in 0..self._layers {
                self.tab[e].clock.next = self.clock.val();
                self.tab[l + e].clock.next = self.clock.val();
                self.tab[e].reset.next = self.reset.val();
                self.tab[l + e].reset.next = self.reset.val();
                self.tab[e].en.next = self.tw_valid.val()
                    & self.layer_ok.val()
                    & self.bits_ok.val()
                    & !self.tw_kv.val()
                    & (self.tw_layer.val() == self.lidx[e].val());
                self.tab[l + e].en.next = self.tw_valid.val()
                    & self.layer_ok.val()
                    & self.bits_ok.val()
                    & self.tw_kv.val()
                    & (self.tw_layer.val() == self.lidx[e].val());
                self.tab[e].d.next = self.tw_bits.val();
                self.tab[l + e].d.next = self.tw_bits.val();
                self.hit.next = (self.t_layer.val() == self.lidx[e].val()) & !self.in_kv.val();
                self.s3.next = self.k3[0].val() - bit_cast::<3, 1>(self.hit.val().into());
                self.t_bits.next = self.t_bits.val() | (self.tab[e].q.val() & self.s3.val());
                self.hit.next = (self.t_layer.val() == self.lidx[e].val()) & self.in_kv.val();
                self.s3.next = self.k3[0].val() - bit_cast::<3, 1>(self.hit.val().into());
                self.t_bits.next = self.t_bits.val() | (self.tab[l + e].q.val() & self.s3.val());
            }
        }

        // ---- channel row read ----
        self.rsel.next = self.m_row.q.val();
        if (self.st.q.val() == self.c_qlev.val()) | (self.st.q.val() == self.c_qnzq.val()) {
            self.rsel.next = self.qc.q.val() >> self.lgc.val();
        }
        if self.st.q.val() == self.c_qrep.val() {
            self.rsel.next = self.rrow.q.val();
        }
        for p in 0..self._n {
            self.rd_lo[p].next = self.zero8.val();
            self.rd_hi[p].next = self.zero8.val();
            self.rd_tl[p].next = self.zero8.val();
            self.rd_th[p].next = self.zero8.val();
            self.rd_s[p].next = self.zero16.val();
            self.rd_zs[p].next = self.zero24.val();
            self.rd_nl[p].next = self.zero5.val();
        }
        for n in self._n..(self._n + 1) {
            for r in 0..self._b {
                self.hit.next = self.rsel.val() == self.ridx[r].val();
                self.s5.next = self.zero5.val() - bit_cast::<5, 1>(self.hit.val().into());
                self.s8.next = self.zero8.val() - bit_cast::<8, 1>(self.hit.val().into());
                self.s16.next = self.zero16.val() - bit_cast::<16, 1>(self.hit.val().into());
                self.s24.next = self.zero24.val() - bit_cast::<24, 1>(self.hit.val().into());
                for p in 0..self._n {
                    self.rd_lo[p].next = self.rd_lo[p].val() | (self.chans[r * n + p].lo.val() & self.s8.val());
                    self.rd_hi[p].next = self.rd_hi[p].val() | (self.chans[r * n + p].hi.val() & self.s8.val());
                    self.rd_tl[p].next = self.rd_tl[p].val() | (self.chans[r * n + p].tl.val() & self.s8.val());
                    self.rd_th[p].next = self.rd_th[p].val() | (self.chans[r * n + p].th.val() & self.s8.val());
                    self.rd_s[p].next = self.rd_s[p].val() | (self.chans[r * n + p].s.val() & self.s16.val());
                    self.rd_zs[p].next = self.rd_zs[p].val() | (self.chans[r * n + p].zs.val() & self.s24.val());
                    self.rd_nl[p].next = self.rd_nl[p].val() | (self.chans[r * n + p].nl.val() & self.s5.val());
                }
            }
        }

        // ---- MMF and channel monitor (spec §11.5.1, §11.6.1) ----
        self.found.next = false;
        self.any.next = false;
        self.pk_lo.next = self.zero8.val();
        self.pk_hi.next = self.zero8.val();
        self.pk_nl.next = self.zero5.val();
        self.pk_lane.next = self.zero10.val();
        self.qlane.next = self.qc.q.val() & self.lmask.val();
        self.ql_lo.next = self.zero8.val();
        self.ql_hi.next = self.zero8.val();
        for p in 0..self._n {
            self.mn[p].next = self.rd_lo[p].val();
            if (self.m_x[p].q.val() ^ self.flip.val()) < (self.rd_lo[p].val() ^ self.flip.val()) {
                self.mn[p].next = self.m_x[p].q.val();
            }
            self.mx[p].next = self.rd_hi[p].val();
            if (self.m_x[p].q.val() ^ self.flip.val()) > (self.rd_hi[p].val() ^ self.flip.val()) {
                self.mx[p].next = self.m_x[p].q.val();
            }
            // a kept value needs a level: the channel has none, or the value
            // is outside the current one's tolerance range and the limit allows
            self.need[p].next = self.m_k[p].q.val()
                & ((self.rd_nl[p].val() == self.zero5.val())
                    | ((((self.m_x[p].q.val() ^ self.flip.val()) < (self.rd_tl[p].val() ^ self.flip.val()))
                        | ((self.m_x[p].q.val() ^ self.flip.val()) > (self.rd_th[p].val() ^ self.flip.val())))
                        & (self.rd_nl[p].val() < self.maxl.val())));
            // the widened range if this lane opens a level (§11.6.1)
            self.wlo[p].next = self.m_x[p].q.val();
            self.whi[p].next = self.m_x[p].q.val();
            if self.rd_nl[p].val() != self.zero5.val() {
                self.wlo[p].next = self.mn[p].val();
                self.whi[p].next = self.mx[p].val();
            }
            // registered per lane; the pick below reads the registers
            self.need_r[p].clock.next = self.clock.val();
            self.wlo_r[p].clock.next = self.clock.val();
            self.whi_r[p].clock.next = self.clock.val();
            self.nl_r[p].clock.next = self.clock.val();
            self.need_r[p].reset.next = self.reset.val();
            self.wlo_r[p].reset.next = self.reset.val();
            self.whi_r[p].reset.next = self.reset.val();
            self.nl_r[p].reset.next = self.reset.val();
            self.need_r[p].en.next = true;
            self.wlo_r[p].en.next = true;
            self.whi_r[p].en.next = true;
            self.nl_r[p].en.next = true;
            self.need_r[p].d.next = self.need[p].val();
            self.wlo_r[p].d.next = self.wlo[p].val();
            self.whi_r[p].d.next = self.whi[p].val();
            self.nl_r[p].d.next = self.rd_nl[p].val();
            self.any.next = self.any.val() | self.need[p].val();
            // one-hot pick of the lowest lane that needs a level
            self.ohb.next = self.need_r[p].q.val() & !self.found.val();
            self.found.next = self.found.val() | self.need_r[p].q.val();
            self.s5.next = self.zero5.val() - bit_cast::<5, 1>(self.ohb.val().into());
            self.s8.next = self.zero8.val() - bit_cast::<8, 1>(self.ohb.val().into());
            self.s10.next = self.zero10.val() - bit_cast::<10, 1>(self.ohb.val().into());
            self.pk_lo.next = self.pk_lo.val() | (self.wlo_r[p].q.val() & self.s8.val());
            self.pk_hi.next = self.pk_hi.val() | (self.whi_r[p].q.val() & self.s8.val());
            self.pk_nl.next = self.pk_nl.val() | (self.nl_r[p].q.val() & self.s5.val());
            self.pk_lane.next = self.pk_lane.val() | (self.lix[p].val() & self.s10.val());
            if self.qlane.val() == self.lix[p].val() {
                self.ql_lo.next = self.rd_lo[p].val();
                self.ql_hi.next = self.rd_hi[p].val();
            }
        }
        // a token's rejection, in the model's order (spec §11.13)
        self.err.next = self.c_rsp_ok.val();
        if (self.m_kind.q.val() == self.c_c_prefill.val()) & (self.npre.q.val() == self.maxp.val()) {
            self.err.next = self.c_rsp_prefill_full.val();
        }
        if (self.m_kind.q.val() == self.c_c_prefill.val()) & (self.ph.q.val() == self.c_decode.val()) {
            self.err.next = self.c_rsp_prefill_after_decode.val();
        }
        if self.pos.q.val().get_bit(16) {
            self.err.next = self.c_rsp_sequence_full.val();
        }
        if self.ph.q.val() == self.c_idle.val() {
            self.err.next = self.c_rsp_no_start.val();
        }
        self.e.next = self.terr.q.val();
        if self.m_first.q.val() {
            self.e.next = self.err.val();
        }

        // ---- scheduler (spec §11.7) ----
        // registered only: sz_ready stays off the level write's fanout
        self.szfree.next = !self.szv.q.val();
        // the coders advance while the output skid is empty (rec_ready only
        // loads the output registers)
        self.en_code.next = !self.k_v.q.val();
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
        self.wc.d.next = (self.m_row.q.val() << self.lgc.val()) | self.pk_lane.val();
        self.olo.en.next = false;
        self.ohi.en.next = false;
        self.onl.en.next = false;
        self.ostart.en.next = false;
        self.olo.d.next = self.pk_lo.val();
        self.ohi.d.next = self.pk_hi.val();
        self.onl.d.next = self.pk_nl.val();
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

        if (self.st.q.val() == self.c_run.val()) & self.m_valid.q.val() {
            if self.m_kind.q.val() == self.c_c_start.val() {
                if self.ph.q.val() == self.c_prefill.val() {
                    self.go_quant.next = true;
                } else {
                    self.do_start.next = true;
                    self.do_rsp.next = true;
                    self.m_done.next = true;
                }
            }
            if self.m_kind.q.val() == self.c_c_flush.val() {
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
            if self.m_kind.q.val().get_bit(0) {
                if self.m_first.q.val()
                    & (self.m_kind.q.val() == self.c_c_decode.val())
                    & (self.ph.q.val() == self.c_prefill.val())
                {
                    self.go_quant.next = true;
                } else if self.e.val() != self.c_rsp_ok.val() {
                    // a rejected token is taken whole and dropped
                    self.m_done.next = true;
                    self.do_rsp.next = self.m_last.q.val();
                    self.rsp_code.next = self.e.val();
                } else if self.m_kind.q.val() == self.c_c_prefill.val() {
                    self.m_done.next = true;
                    self.do_mmf.next = true;
                    self.do_rsp.next = self.m_last.q.val();
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
                    self.do_rsp.next = self.m_last.q.val();
                }
                self.terr.en.next = self.m_first.q.val() & self.m_done.val();
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
        self.qlo_r.d.next = self.ql_lo.val();
        self.qhi_r.en.next = true;
        self.qhi_r.d.next = self.ql_hi.val();
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
        self.fen.next = !self.m_valid.q.val() | self.m_done.val();
        // the monitor's decision for the beat in M, registered (it is the
        // deepest logic of the unit): valid when neither M nor the channel
        // state changed at the last edge and the row read was M's
        self.m_need.en.next = true;
        self.m_need.d.next = self.any.val();
        self.m_fresh.en.next = true;
        self.m_fresh.d.next = !self.fen.val()
            & !self.do_lvl.val()
            & !self.do_start.val()
            & !self.do_mmf.val()
            & (self.st.q.val() == self.c_run.val());

        // ---- input: two-entry queue (head, skid), expansion, framing ----
        // in_ready is a register (the skid is empty); M loads only from the
        // head register, so no input port reaches the zero-insert network
        self.in_ready.next = !self.sk_valid.q.val();
        self.acc.next = self.in_valid.val() & !self.sk_valid.q.val();
        self.load.next = self.fen.val() & self.hd_valid.q.val();
        self.hd_valid.en.next = true;
        self.hd_valid.d.next = self.hd_valid.q.val() | self.acc.val();
        self.sk_valid.en.next = true;
        self.sk_valid.d.next = self.sk_valid.q.val() | (self.hd_valid.q.val() & self.acc.val());
        if self.load.val() {
            self.hd_valid.d.next = self.sk_valid.q.val() | self.acc.val();
            self.sk_valid.d.next = false;
        }
        // the head takes the input while empty, the skid's word (else the
        // input) when M takes it; the skid takes the input while empty
        self.hd_cmd.en.next = self.load.val() | !self.hd_valid.q.val();
        self.hd_bits.en.next = self.load.val() | !self.hd_valid.q.val();
        self.hd_oob.en.next = self.load.val() | !self.hd_valid.q.val();
        self.hd_cmd.d.next = self.in_cmd.val();
        self.hd_bits.d.next = self.t_bits.val();
        self.hd_oob.d.next = self.t_oob.val();
        if self.load.val() & self.sk_valid.q.val() {
            self.hd_cmd.d.next = self.sk_cmd.q.val();
            self.hd_bits.d.next = self.sk_bits.q.val();
            self.hd_oob.d.next = self.sk_oob.q.val();
        }
        self.sk_cmd.en.next = !self.sk_valid.q.val();
        self.sk_bits.en.next = !self.sk_valid.q.val();
        self.sk_oob.en.next = !self.sk_valid.q.val();
        self.sk_cmd.d.next = self.in_cmd.val();
        self.sk_bits.d.next = self.t_bits.val();
        self.sk_oob.d.next = self.t_oob.val();
        self.zi.en.next = true;
        self.zi.in_valid.next = true;
        for p in 0..self._n {
            self.sk_mask[p].clock.next = self.clock.val();
            self.sk_data[p].clock.next = self.clock.val();
            self.sk_mask[p].reset.next = self.reset.val();
            self.sk_data[p].reset.next = self.reset.val();
            self.sk_mask[p].en.next = !self.sk_valid.q.val();
            self.sk_data[p].en.next = !self.sk_valid.q.val();
            self.sk_mask[p].d.next = self.in_mask[p].val();
            self.sk_data[p].d.next = self.in_data[p].val();
            self.hd_mask[p].clock.next = self.clock.val();
            self.hd_data[p].clock.next = self.clock.val();
            self.hd_mask[p].reset.next = self.reset.val();
            self.hd_data[p].reset.next = self.reset.val();
            self.hd_mask[p].en.next = self.load.val() | !self.hd_valid.q.val();
            self.hd_data[p].en.next = self.load.val() | !self.hd_valid.q.val();
            self.hd_mask[p].d.next = self.in_mask[p].val();
            self.hd_data[p].d.next = self.in_data[p].val();
            if self.load.val() & self.sk_valid.q.val() {
                self.hd_mask[p].d.next = self.sk_mask[p].q.val();
                self.hd_data[p].d.next = self.sk_data[p].q.val();
            }
            self.zi.data[p].next = self.hd_data[p].q.val();
            self.zi.mask[p].next = self.hd_mask[p].q.val();
        }
        self.i_cmd.next = self.hd_cmd.q.val();
        // a token is C/L beats from a first beat with an odd command
        self.tokbeat.next = (self.bcnt.q.val() != self.zero11.val()) | self.i_cmd.val().get_bit(0);
        self.nb.next = self.bcnt.q.val() + self.one11.val();
        if self.nb.val() == self.nbeats.val() {
            self.nb.next = self.zero11.val();
        }
        self.bcnt.en.next = self.load.val();
        self.bcnt.d.next = self.zero11.val();
        if self.tokbeat.val() {
            self.bcnt.d.next = self.nb.val();
        }
        self.tkind.en.next = self.load.val() & (self.bcnt.q.val() == self.zero11.val());
        self.tkind.d.next = self.i_cmd.val().get_bit(1);
        self.m_valid.en.next = self.fen.val();
        self.m_valid.d.next = self.hd_valid.q.val();
        self.m_kind.en.next = self.fen.val();
        self.m_first.en.next = self.fen.val();
        self.m_last.en.next = self.fen.val();
        self.m_row.en.next = self.fen.val();
        self.m_bits.en.next = self.fen.val();
        self.m_oob.en.next = self.fen.val();
        self.m_kind.d.next = self.i_cmd.val();
        self.m_first.d.next = self.i_cmd.val().get_bit(0);
        self.m_last.d.next = self.bcnt.q.val() + self.one11.val() == self.nbeats.val();
        self.m_row.d.next = self.bcnt.q.val().get_bits::<10>(0);
        if self.bcnt.q.val() != self.zero11.val() {
            self.m_kind.d.next = self.k2[1].val() | (bit_cast::<2, 1>(self.tkind.q.val().into()) << self.k2[1].val());
            self.m_first.d.next = false;
        }
        self.m_bits.d.next = self.hd_bits.q.val();
        self.m_oob.d.next = self.hd_oob.q.val();
        for p in 0..self._n {
            self.m_x[p].clock.next = self.clock.val();
            self.m_k[p].clock.next = self.clock.val();
            self.m_x[p].reset.next = self.reset.val();
            self.m_k[p].reset.next = self.reset.val();
            self.m_x[p].en.next = self.fen.val();
            self.m_k[p].en.next = self.fen.val();
            self.m_x[p].d.next = self.zi.out[p].val();
            self.m_k[p].d.next = self.zi.mask[p].val();
        }

        // sequence bookkeeping
        self.bits.en.next = self.do_start.val();
        self.bits.d.next = self.m_bits.q.val();
        self.f_oob.en.next = self.do_start.val() & self.m_oob.q.val();
        self.f_oob.d.next = true;
        if self.do_start.val() {
            self.ph.en.next = true;
            self.ph.d.next = self.c_prefill.val();
        }
        self.npre.en.next = self.do_start.val() | (self.do_mmf.val() & self.m_last.q.val());
        self.npre.d.next = self.npre.q.val() + self.one13.val();
        if self.do_start.val() {
            self.npre.d.next = bit_cast::<13, 1>(false.into());
        }
        self.pos.en.next = self.do_start.val()
            | (self.do_rsp.val() & self.m_kind.q.val().get_bit(0) & (self.rsp_code.val() == self.c_rsp_ok.val()));
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

        // channel registers
        for n in self._n..(self._n + 1) {
            for r in 0..self._b {
                for p in 0..self._n {
                    self.chans[r * n + p].clock.next = self.clock.val();
                    self.chans[r * n + p].reset.next = self.reset.val();
                    self.chans[r * n + p].clr.next = self.do_start.val();
                    self.chans[r * n + p].mmf_en.next =
                        self.do_mmf.val() & (self.m_row.q.val() == self.ridx[r].val()) & self.m_k[p].q.val();
                    self.chans[r * n + p].mmf_lo.next = self.mn[p].val();
                    self.chans[r * n + p].mmf_hi.next = self.mx[p].val();
                    self.chans[r * n + p].lvl_en.next =
                        self.do_lvl.val() & (self.wc.q.val() == self.cidx[r * n + p].val());
                    self.chans[r * n + p].lvl_lo.next = self.olo.q.val();
                    self.chans[r * n + p].lvl_hi.next = self.ohi.q.val();
                    self.chans[r * n + p].lvl_tl.next = self.nzq.tl.val();
                    self.chans[r * n + p].lvl_th.next = self.nzq.th.val();
                    self.chans[r * n + p].lvl_s.next = self.nzq.scale.val();
                    self.chans[r * n + p].lvl_zs.next = self.nzq.zs.val();
                    self.chans[r * n + p].lvl_nl.next = self.onl.q.val() + self.one5.val();
                }
            }
        }

        // prefill buffer: written by prefill beats, read by the replay
        self.bw.next = bit_cast::<576, 1>(false.into());
        for p in 0..self._n {
            self.x8.next = self.m_x[p].q.val();
            self.w9.next = bit_cast::<9, 8>(self.x8.val());
            if self.m_k[p].q.val() {
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

        // ---- coders: a beat of M, or a replayed beat ----
        for e in 0..self._ne {
            self.ev[e].clock.next = self.clock.val();
            self.epos[e].clock.next = self.clock.val();
            self.elast[e].clock.next = self.clock.val();
            self.ev[e].reset.next = self.reset.val();
            self.epos[e].reset.next = self.reset.val();
            self.elast[e].reset.next = self.reset.val();
            self.ev[e].en.next = self.en_code.val();
            self.epos[e].en.next = self.en_code.val();
            self.elast[e].en.next = self.en_code.val();
        }
        self.ev[0].d.next = self.push.val();
        self.epos[0].d.next = self.pos.q.val().get_bits::<16>(0);
        self.elast[0].d.next = self.m_last.q.val();
        if self.st.q.val() == self.c_qrep.val() {
            self.epos[0].d.next = self.rtok.q.val();
            self.elast[0].d.next = bit_cast::<11, 10>(self.rrow.q.val()) + self.one11.val() == self.nbeats.val();
        }
        for e in 1..self._ne {
            self.ev[e].d.next = self.ev[e - 1].q.val();
            self.epos[e].d.next = self.epos[e - 1].q.val();
            self.elast[e].d.next = self.elast[e - 1].q.val();
        }
        for p in 0..self._n {
            self.lanes[p].clock.next = self.clock.val();
            self.lanes[p].reset.next = self.reset.val();
            self.lanes[p].en.next = self.en_code.val();
            self.lanes[p].x.next = self.m_x[p].q.val();
            self.lanes[p].k.next = self.m_k[p].q.val();
            if self.st.q.val() == self.c_qrep.val() {
                self.lanes[p].x.next = self.pbuf.rdata.val().get_bits::<8>(self.bbit[p].val().index());
                self.lanes[p].k.next = self.pbuf.rdata.val().get_bit(self.bkbit[p].val().index());
            }
            self.lanes[p].tl.next = self.rd_tl[p].val();
            self.lanes[p].th.next = self.rd_th[p].val();
            self.lanes[p].s.next = self.rd_s[p].val();
            self.lanes[p].zs.next = self.rd_zs[p].val();
            self.lanes[p].q.next = (self.one4.val() << bit_cast::<4, 3>(self.bits.q.val())) - self.one4.val();
        }

        // ---- output: compaction of the non-zero codes ----
        self.zr.en.next = self.en_code.val();
        for e in self._ne..(self._ne + 1) {
            self.zr.in_valid.next = self.ev[e - 1].q.val();
        }
        for p in 0..self._n {
            self.zr.data[p].next = self.lanes[p].code.val();
            self.zr.keep[p].next = self.lanes[p].label.val();
            self.x_codes[p].next = self.zr.out[p].val();
        }

        // saturated elements of the beat: a balanced popcount
        for n in self._n..(self._n + 1) {
            for p in 0..self._n {
                self.pc[n + p].next = self.zero8.val();
                if self.lanes[p].sat.val() {
                    self.pc[n + p].next = self.one8.val();
                }
            }
            for i in 1..self._n {
                self.pc[n - i].next = self.pc[2 * (n - i)].val() + self.pc[2 * (n - i) + 1].val();
            }
            self.pc[0].next = self.pc[1].val();
        }
        for n in self._n..(self._n + 1) {
            for z in self._lz..(self._lz + 1) {
                for i in 0..self._lz {
                    self.dl_pos[i].clock.next = self.clock.val();
                    self.dl_last[i].clock.next = self.clock.val();
                    self.dl_sat[i].clock.next = self.clock.val();
                    self.dl_pos[i].reset.next = self.reset.val();
                    self.dl_last[i].reset.next = self.reset.val();
                    self.dl_sat[i].reset.next = self.reset.val();
                    self.dl_pos[i].en.next = self.en_code.val();
                    self.dl_last[i].en.next = self.en_code.val();
                    self.dl_sat[i].en.next = self.en_code.val();
                }
                for i in 0..self._lz2n {
                    self.dl_bits[i].clock.next = self.clock.val();
                    self.dl_bits[i].reset.next = self.reset.val();
                    self.dl_bits[i].en.next = self.en_code.val();
                }
                for e in self._ne..(self._ne + 1) {
                    self.dl_pos[0].d.next = self.epos[e - 1].q.val();
                    self.dl_last[0].d.next = self.elast[e - 1].q.val();
                }
                self.dl_sat[0].d.next = self.pc[0].val();
                for p in 0..self._n {
                    self.dl_bits[p].d.next = self.lanes[p].kept.val();
                    self.dl_bits[n + p].d.next = self.lanes[p].label.val();
                }
                for i in 1..self._lz {
                    self.dl_pos[i].d.next = self.dl_pos[i - 1].q.val();
                    self.dl_last[i].d.next = self.dl_last[i - 1].q.val();
                    self.dl_sat[i].d.next = self.dl_sat[i - 1].q.val();
                }
                for i in self._n2..self._lz2n {
                    self.dl_bits[i].d.next = self.dl_bits[i - 2 * n].q.val();
                }
                for p in 0..self._n {
                    self.x_idx[p].next = self.dl_bits[(z - 1) * 2 * n + p].q.val();
                    self.x_lab[p].next = self.dl_bits[(z - 1) * 2 * n + n + p].q.val();
                }
                self.x_pos.next = self.dl_pos[z - 1].q.val();
                self.x_last.next = self.dl_last[z - 1].q.val();
                self.x_sat.next = self.dl_sat[z - 1].q.val();
            }
        }
        // saturation is counted as the beat leaves
        // output register O and its skid K: the coders see only K's valid
        self.fire.next = self.o_v.q.val() & self.rec_ready.val();
        self.x_v.next = self.zr.out_valid.val() & !self.k_v.q.val();
        self.o_load.next = (self.k_v.q.val() & (self.fire.val() | !self.o_v.q.val()))
            | (!self.k_v.q.val() & self.x_v.val() & (!self.o_v.q.val() | self.fire.val()));
        self.k_load.next = !self.k_v.q.val() & self.x_v.val() & self.o_v.q.val() & !self.fire.val();
        self.o_v.en.next = true;
        self.o_v.d.next = self.k_v.q.val() | self.x_v.val() | (self.o_v.q.val() & !self.fire.val());
        self.k_v.en.next = true;
        self.k_v.d.next = self.o_v.q.val() & !self.fire.val() & (self.k_v.q.val() | self.x_v.val());
        self.o_pos.en.next = self.o_load.val();
        self.o_last.en.next = self.o_load.val();
        self.o_sat.en.next = self.o_load.val();
        self.o_cnt.en.next = self.o_load.val();
        self.k_pos.en.next = self.k_load.val();
        self.k_last.en.next = self.k_load.val();
        self.k_sat.en.next = self.k_load.val();
        self.k_cnt.en.next = self.k_load.val();
        self.k_pos.d.next = self.x_pos.val();
        self.k_last.d.next = self.x_last.val();
        self.k_sat.d.next = self.x_sat.val();
        self.k_cnt.d.next = self.zr.count.val();
        self.o_pos.d.next = self.x_pos.val();
        self.o_last.d.next = self.x_last.val();
        self.o_sat.d.next = self.x_sat.val();
        self.o_cnt.d.next = self.zr.count.val();
        if self.k_v.q.val() {
            self.o_pos.d.next = self.k_pos.q.val();
            self.o_last.d.next = self.k_last.q.val();
            self.o_sat.d.next = self.k_sat.q.val();
            self.o_cnt.d.next = self.k_cnt.q.val();
        }
        for p in 0..self._n {
            self.o_idx[p].clock.next = self.clock.val();
            self.o_lab[p].clock.next = self.clock.val();
            self.o_cod[p].clock.next = self.clock.val();
            self.k_idx[p].clock.next = self.clock.val();
            self.k_lab[p].clock.next = self.clock.val();
            self.k_cod[p].clock.next = self.clock.val();
            self.o_idx[p].reset.next = self.reset.val();
            self.o_lab[p].reset.next = self.reset.val();
            self.o_cod[p].reset.next = self.reset.val();
            self.k_idx[p].reset.next = self.reset.val();
            self.k_lab[p].reset.next = self.reset.val();
            self.k_cod[p].reset.next = self.reset.val();
            self.o_idx[p].en.next = self.o_load.val();
            self.o_lab[p].en.next = self.o_load.val();
            self.o_cod[p].en.next = self.o_load.val();
            self.k_idx[p].en.next = self.k_load.val();
            self.k_lab[p].en.next = self.k_load.val();
            self.k_cod[p].en.next = self.k_load.val();
            self.k_idx[p].d.next = self.x_idx[p].val();
            self.k_lab[p].d.next = self.x_lab[p].val();
            self.k_cod[p].d.next = self.x_codes[p].val();
            self.o_idx[p].d.next = self.x_idx[p].val();
            self.o_lab[p].d.next = self.x_lab[p].val();
            self.o_cod[p].d.next = self.x_codes[p].val();
            if self.k_v.q.val() {
                self.o_idx[p].d.next = self.k_idx[p].q.val();
                self.o_lab[p].d.next = self.k_lab[p].q.val();
                self.o_cod[p].d.next = self.k_cod[p].q.val();
            }
            self.rec_index[p].next = self.o_idx[p].q.val();
            self.rec_label[p].next = self.o_lab[p].q.val();
            self.rec_codes[p].next = self.o_cod[p].q.val();
        }
        self.rec_valid.next = self.o_v.q.val();
        self.rec_pos.next = self.o_pos.q.val();
        self.rec_last.next = self.o_last.q.val();
        self.rec_saturated.next = self.o_sat.q.val();
        self.rec_count.next = self.o_cnt.q.val();
        // a taken beat's saturated count is added the cycle after
        self.sat_v.en.next = true;
        self.sat_v.d.next = self.fire.val();
        self.sat_n.en.next = true;
        self.sat_n.d.next = self.o_sat.q.val();
        self.n_sat.en.next = self.sat_v.q.val();
        self.n_sat.n.next = self.sat_n.q.val();
        self.f_limit.en.next = self.sat_v.q.val() & (self.sat_n.q.val() != self.zero8.val());
        self.f_limit.d.next = true;

        // ---- status (spec §11.6.4) ----
        self.st_levels_opened.next = self.n_lev.count.val();
        self.st_saturated.next = self.n_sat.count.val();
        self.st_rejected.next = self.n_rej.count.val();
        self.st_limit_hit.next = self.f_limit.q.val();
        self.st_layer_oob.next = self.f_oob.q.val();
        self.st_no_prefill.next = self.f_nopre.q.val();
        self.st_empty_channels.next = self.c_empty.q.val();
        self.st_single_value_channels.next = self.c_single.q.val();
    }
}
