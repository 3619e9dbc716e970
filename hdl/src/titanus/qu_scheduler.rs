//! Scheduler of the Titanus quantization unit: the state machine that
//! finishes M's item (start, flush, prefill beat, decode beat), the NZQ's
//! start and operands, QUANT's walk over the channels (QLEV reads a
//! channel's MMF range, then opens its level 0 or counts it empty), the
//! created-entry register and QUANT's channel counters. The replay itself
//! (QREP's beats) is the prefill buffer's (`qu_prefill.rs`); this block
//! only enters QREP and leaves it when the buffer says it is drained.
//! Paper: Titanus (GLSVLSI 2025) §4.4 and Figure 7 (scheduler, NZQ,
//! tolerance updater), §3.2 (HierQuant: level 0 from the prefill's range).
//! Spec: docs/spec.md §11.7 (states), §11.7.2 (entries), §11.6.4
//! (`empty_channels`, `single_value_channels`), §11.14.5 (Scheduler).

use super::quantizer::{C_DECODE, C_FLUSH, C_PREFILL, C_START, IDLE, PREFILL, RSP_NO_START, RSP_OK};
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::consts;
use rust_hdl::prelude::*;

// states (spec §11.7; QUANT is QLEV, QNZQ and QREP)
const RUN: u64 = 0;
const QLEV: u64 = 1;
const QNZQ: u64 = 2;
const QREP: u64 = 3;
const ONZQ: u64 = 4;

#[derive(LogicBlock)]
pub struct Scheduler {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: RUN, no entry waiting, counters 0
    pub reset: Signal<In, Bit>,
    /// M holds an item
    pub item_valid: Signal<In, Bit>,
    /// M's command (a beat's is its token's): 0 start, 1 prefill, 2 flush, 3 decode
    pub item_kind: Signal<In, Bits<2>>,
    /// M is a token's first beat
    pub item_first: Signal<In, Bit>,
    /// M is a token's last beat
    pub item_last: Signal<In, Bit>,
    /// M's beat row (its channels are row * lanes + lane)
    pub item_row: Signal<In, Bits<10>>,
    /// the sequence's phase: 0 IDLE, 1 PREFILL, 2 DECODE
    pub ph: Signal<In, Bits<2>>,
    /// the rejection of a token whose first beat is in M (an `rsp_err` code)
    pub err: Signal<In, Bits<3>>,
    /// the next token's position (a decode level's start)
    pub pos: Signal<In, Bits<16>>,
    /// the coders advance this cycle
    pub en_code: Signal<In, Bit>,
    /// the monitor's combinational decision: some lane of M needs a level
    pub need_any: Signal<In, Bit>,
    /// from the monitor's registered decision: the lowest lane needing a level
    pub pick_lane: Signal<In, Bits<10>>,
    /// that lane's widened range, low end
    pub pick_lo: Signal<In, Bits<8>>,
    /// that lane's widened range, high end
    pub pick_hi: Signal<In, Bits<8>>,
    /// that lane's channel's level count
    pub pick_nl: Signal<In, Bits<5>>,
    /// QUANT's channel's MMF range, low end
    pub q_lo: Signal<In, Bits<8>>,
    /// QUANT's channel's MMF range, high end
    pub q_hi: Signal<In, Bits<8>>,
    /// the NZQ is idle with its last level's results
    pub nzq_done: Signal<In, Bit>,
    /// the NZQ's scale, for the entry
    pub nzq_scale: Signal<In, Bits<16>>,
    /// the NZQ's zero point (9-bit two's complement), for the entry
    pub nzq_zero: Signal<In, Bits<9>>,
    /// the unit's `sz_ready`: the entry register is taken
    pub sz_ready: Signal<In, Bit>,
    /// the replay has issued and pushed every buffered beat
    pub rep_end: Signal<In, Bit>,
    /// M takes the next item at this edge (M is empty or done)
    pub fen: Signal<Out, Bit>,
    /// a start is done: clear the channels, begin a sequence
    pub do_start: Signal<Out, Bit>,
    /// a prefill beat is done: MMF update and buffer write
    pub do_mmf: Signal<Out, Bit>,
    /// the NZQ's level is written to channel `wc` and to the entry register
    pub do_lvl: Signal<Out, Bit>,
    /// a command or a token's last beat is done: respond
    pub do_rsp: Signal<Out, Bit>,
    /// with do_rsp: the response's `rsp_err` code
    pub rsp_code: Signal<Out, Bits<3>>,
    /// QUANT starts (the prefill ends)
    pub go_quant: Signal<Out, Bit>,
    /// M's decode beat enters the coders
    pub push: Signal<Out, Bit>,
    /// the last channel is done: the replay starts (QREP)
    pub rep_init: Signal<Out, Bit>,
    /// QREP: the coders take replayed beats, the row read is the replay's
    pub replay: Signal<Out, Bit>,
    /// QLEV or QNZQ: the row read is QUANT's channel's
    pub rd_quant: Signal<Out, Bit>,
    /// QUANT's channel
    pub quant_ch: Signal<Out, Bits<10>>,
    /// the channel of the level being opened
    pub lvl_ch: Signal<Out, Bits<10>>,
    /// its range, low end (the NZQ's operand)
    pub lvl_lo: Signal<Out, Bits<8>>,
    /// its range, high end (the NZQ's operand)
    pub lvl_hi: Signal<Out, Bits<8>>,
    /// its channel's level count before it (the level's index)
    pub lvl_nl: Signal<Out, Bits<5>>,
    /// the NZQ starts (a registered pulse)
    pub nzq_start: Signal<Out, Bit>,
    /// the entry register holds an entry
    pub sz_valid: Signal<Out, Bit>,
    /// the entry (spec §11.7.2)
    pub sz_word: Signal<Out, Bits<64>>,
    /// channels QUANT found with no kept prefill element
    pub st_empty_channels: Signal<Out, Bits<11>>,
    /// channels QUANT found with a one-value prefill range
    pub st_single_value_channels: Signal<Out, Bits<11>>,
    st: Reg<Bits<3>>,
    // the token's rejection, held from its first beat for the others
    terr: Reg<Bits<3>>,
    qc: Reg<Bits<10>>,
    // the level being opened: channel, range, level index, start position
    wc: Reg<Bits<10>>,
    olo: Reg<Bits<8>>,
    ohi: Reg<Bits<8>>,
    onl: Reg<Bits<5>>,
    ostart: Reg<Bits<16>>,
    // the NZQ starts the cycle after the decision, from registers
    nst: Reg<Bit>,
    // the monitor's decision for M, registered, and whether it is current
    m_need: Reg<Bit>,
    m_fresh: Reg<Bit>,
    // QLEV's two cycles: read the channel's range, then decide on it
    qrd: Reg<Bit>,
    qlo_r: Reg<Bits<8>>,
    qhi_r: Reg<Bits<8>>,
    // QUANT's counters count registered pulses (off the decision path)
    p_empty: Reg<Bit>,
    p_single: Reg<Bit>,
    c_empty: Reg<Bits<11>>,
    c_single: Reg<Bits<11>>,
    szv: Reg<Bit>,
    szw: Reg<Bits<64>>,
    e: Signal<Local, Bits<3>>,
    m_done: Signal<Local, Bit>,
    // registered only: sz_ready stays off the level write's fanout
    szfree: Signal<Local, Bit>,
    k64: Vec<Constant<Bits<64>>>,
    c_c_decode: Constant<Bits<2>>,
    c_c_flush: Constant<Bits<2>>,
    c_c_prefill: Constant<Bits<2>>,
    c_c_start: Constant<Bits<2>>,
    c_idle: Constant<Bits<2>>,
    c_prefill: Constant<Bits<2>>,
    c_run: Constant<Bits<3>>,
    c_qlev: Constant<Bits<3>>,
    c_qnzq: Constant<Bits<3>>,
    c_qrep: Constant<Bits<3>>,
    c_onzq: Constant<Bits<3>>,
    c_rsp_ok: Constant<Bits<3>>,
    c_rsp_no_start: Constant<Bits<3>>,
    lastc: Constant<Bits<10>>,
    lgc: Constant<Bits<10>>,
    flip: Constant<Bits<8>>,
    one10: Constant<Bits<10>>,
    one11: Constant<Bits<11>>,
    zero5: Constant<Bits<5>>,
    zero10: Constant<Bits<10>>,
    zero11: Constant<Bits<11>>,
    zero16: Constant<Bits<16>>,
}

impl Scheduler {
    /// `lanes` a power of two dividing `channels` (<= 1024).
    pub fn new(lanes: usize, channels: usize) -> Self {
        Scheduler {
            clock: Default::default(),
            reset: Default::default(),
            item_valid: Default::default(),
            item_kind: Default::default(),
            item_first: Default::default(),
            item_last: Default::default(),
            item_row: Default::default(),
            ph: Default::default(),
            err: Default::default(),
            pos: Default::default(),
            en_code: Default::default(),
            need_any: Default::default(),
            pick_lane: Default::default(),
            pick_lo: Default::default(),
            pick_hi: Default::default(),
            pick_nl: Default::default(),
            q_lo: Default::default(),
            q_hi: Default::default(),
            nzq_done: Default::default(),
            nzq_scale: Default::default(),
            nzq_zero: Default::default(),
            sz_ready: Default::default(),
            rep_end: Default::default(),
            fen: Default::default(),
            do_start: Default::default(),
            do_mmf: Default::default(),
            do_lvl: Default::default(),
            do_rsp: Default::default(),
            rsp_code: Default::default(),
            go_quant: Default::default(),
            push: Default::default(),
            rep_init: Default::default(),
            replay: Default::default(),
            rd_quant: Default::default(),
            quant_ch: Default::default(),
            lvl_ch: Default::default(),
            lvl_lo: Default::default(),
            lvl_hi: Default::default(),
            lvl_nl: Default::default(),
            nzq_start: Default::default(),
            sz_valid: Default::default(),
            sz_word: Default::default(),
            st_empty_channels: Default::default(),
            st_single_value_channels: Default::default(),
            st: Reg::default(),
            terr: Reg::default(),
            qc: Reg::default(),
            wc: Reg::default(),
            olo: Reg::default(),
            ohi: Reg::default(),
            onl: Reg::default(),
            ostart: Reg::default(),
            nst: Reg::default(),
            m_need: Reg::default(),
            m_fresh: Reg::default(),
            qrd: Reg::default(),
            qlo_r: Reg::default(),
            qhi_r: Reg::default(),
            p_empty: Reg::default(),
            p_single: Reg::default(),
            c_empty: Reg::default(),
            c_single: Reg::default(),
            szv: Reg::default(),
            szw: Reg::default(),
            e: Default::default(),
            m_done: Default::default(),
            szfree: Default::default(),
            k64: consts([16, 32, 48, 52]),
            c_c_decode: Constant::new(C_DECODE.into()),
            c_c_flush: Constant::new(C_FLUSH.into()),
            c_c_prefill: Constant::new(C_PREFILL.into()),
            c_c_start: Constant::new(C_START.into()),
            c_idle: Constant::new(IDLE.into()),
            c_prefill: Constant::new(PREFILL.into()),
            c_run: Constant::new(RUN.into()),
            c_qlev: Constant::new(QLEV.into()),
            c_qnzq: Constant::new(QNZQ.into()),
            c_qrep: Constant::new(QREP.into()),
            c_onzq: Constant::new(ONZQ.into()),
            c_rsp_ok: Constant::new(RSP_OK.into()),
            c_rsp_no_start: Constant::new(RSP_NO_START.into()),
            lastc: Constant::new(((channels - 1) as u64).into()),
            lgc: Constant::new((lanes.trailing_zeros() as u64).into()),
            flip: Constant::new(0x80u64.into()),
            one10: Constant::new(1u64.into()),
            one11: Constant::new(1u64.into()),
            zero5: Constant::new(0u64.into()),
            zero10: Constant::new(0u64.into()),
            zero11: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
        }
    }
}

reg_logic!(Scheduler;
    regs [
        st, terr, qc, wc, olo, ohi, onl, ostart, nst, m_need, m_fresh, qrd, qlo_r, qhi_r, p_empty,
        p_single, c_empty, c_single, szv, szw,
    ];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        // a token's later beats carry its first beat's rejection
        self.e.next = self.terr.q.val();
        if self.item_first.val() {
            self.e.next = self.err.val();
        }
        self.szfree.next = !self.szv.q.val();
        self.m_done.next = false;
        self.go_quant.next = false;
        self.do_start.next = false;
        self.do_mmf.next = false;
        self.do_lvl.next = false;
        self.do_rsp.next = false;
        self.rsp_code.next = self.c_rsp_ok.val();
        self.push.next = false;
        self.rep_init.next = false;
        self.nst.en.next = true;
        self.nst.d.next = false;
        self.qc.d.next = self.qc.q.val() + self.one10.val();
        // a decode level's operands: the monitor's registered pick
        self.wc.d.next = (self.item_row.val() << self.lgc.val()) | self.pick_lane.val();
        self.olo.d.next = self.pick_lo.val();
        self.ohi.d.next = self.pick_hi.val();
        self.onl.d.next = self.pick_nl.val();
        self.ostart.d.next = self.pos.val();
        self.terr.d.next = self.e.val();
        self.p_empty.en.next = true;
        self.p_empty.d.next = false;
        self.p_single.en.next = true;
        self.p_single.d.next = false;
        self.c_empty.en.next = self.p_empty.q.val();
        self.c_empty.d.next = self.c_empty.q.val() + self.one11.val();
        self.c_single.en.next = self.p_single.q.val();
        self.c_single.d.next = self.c_single.q.val() + self.one11.val();

        // ---- RUN: M's item ----
        if (self.st.q.val() == self.c_run.val()) & self.item_valid.val() {
            if self.item_kind.val() == self.c_c_start.val() {
                if self.ph.val() == self.c_prefill.val() {
                    self.go_quant.next = true;
                } else {
                    self.do_start.next = true;
                    self.do_rsp.next = true;
                    self.m_done.next = true;
                }
            }
            if self.item_kind.val() == self.c_c_flush.val() {
                if self.ph.val() == self.c_prefill.val() {
                    self.go_quant.next = true;
                } else {
                    self.do_rsp.next = true;
                    self.m_done.next = true;
                    if self.ph.val() == self.c_idle.val() {
                        self.rsp_code.next = self.c_rsp_no_start.val();
                    }
                }
            }
            if self.item_kind.val().get_bit(0) {
                if self.item_first.val()
                    & (self.item_kind.val() == self.c_c_decode.val())
                    & (self.ph.val() == self.c_prefill.val())
                {
                    self.go_quant.next = true;
                } else if self.e.val() != self.c_rsp_ok.val() {
                    // a rejected token is taken whole and dropped
                    self.m_done.next = true;
                    self.do_rsp.next = self.item_last.val();
                    self.rsp_code.next = self.e.val();
                } else if self.item_kind.val() == self.c_c_prefill.val() {
                    self.m_done.next = true;
                    self.do_mmf.next = true;
                    self.do_rsp.next = self.item_last.val();
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
                    self.do_rsp.next = self.item_last.val();
                }
                self.terr.en.next = self.item_first.val() & self.m_done.val();
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
        }

        // ---- QLEV: read a channel's range into registers, then decide on them ----
        self.qrd.en.next = false;
        self.qrd.d.next = false;
        self.qlo_r.en.next = true;
        self.qlo_r.d.next = self.q_lo.val();
        self.qhi_r.en.next = true;
        self.qhi_r.d.next = self.q_hi.val();
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

        // ---- QNZQ / ONZQ: the level is done; write it once the entry register is free ----
        if ((self.st.q.val() == self.c_qnzq.val()) | (self.st.q.val() == self.c_onzq.val()))
            & self.nzq_done.val()
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
        // QREP ends when the buffer is drained; the phase becomes DECODE
        if self.rep_end.val() {
            self.st.en.next = true;
            self.st.d.next = self.c_run.val();
        }
        self.replay.next = self.st.q.val() == self.c_qrep.val();
        self.rd_quant.next = (self.st.q.val() == self.c_qlev.val()) | (self.st.q.val() == self.c_qnzq.val());

        self.fen.next = !self.item_valid.val() | self.m_done.val();
        // the monitor's decision for the beat in M, registered (it is the
        // deepest logic of the unit): valid when neither M nor the channel
        // state changed at the last edge and the row read was M's
        self.m_need.en.next = true;
        self.m_need.d.next = self.need_any.val();
        self.m_fresh.en.next = true;
        self.m_fresh.d.next = !self.fen.val()
            & !self.do_lvl.val()
            & !self.do_start.val()
            & !self.do_mmf.val()
            & (self.st.q.val() == self.c_run.val());

        // ---- created entries (spec §11.7.2) ----
        self.szv.en.next = true;
        self.szv.d.next = self.do_lvl.val() | (self.szv.q.val() & !self.sz_ready.val());
        self.szw.en.next = self.do_lvl.val();
        self.szw.d.next = bit_cast::<64, 16>(self.nzq_scale.val())
            | (bit_cast::<64, 9>(self.nzq_zero.val()) << self.k64[0].val())
            | (bit_cast::<64, 16>(self.ostart.q.val()) << self.k64[1].val())
            | (bit_cast::<64, 5>(self.onl.q.val()) << self.k64[2].val())
            | (bit_cast::<64, 10>(self.wc.q.val()) << self.k64[3].val());

        self.quant_ch.next = self.qc.q.val();
        self.lvl_ch.next = self.wc.q.val();
        self.lvl_lo.next = self.olo.q.val();
        self.lvl_hi.next = self.ohi.q.val();
        self.lvl_nl.next = self.onl.q.val();
        self.nzq_start.next = self.nst.q.val();
        self.sz_valid.next = self.szv.q.val();
        self.sz_word.next = self.szw.q.val();
        self.st_empty_channels.next = self.c_empty.q.val();
        self.st_single_value_channels.next = self.c_single.q.val();
    }
);
