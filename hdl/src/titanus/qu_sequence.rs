//! Sequence bookkeeping of the Titanus quantization unit: the phase (IDLE,
//! PREFILL, DECODE), the sequence's bit width, the token position and the
//! prefill token count, a token's rejection in the model's order, the
//! response register, and the status counters and flags that follow the
//! sequence. The scheduler decides; this block keeps what its decisions
//! leave behind for the next item.
//! Paper: Titanus (GLSVLSI 2025) §4.4 (the QU's prefill and decode phases),
//! §2.3 (per-layer bit width).
//! Spec: docs/spec.md §11.7 (states, rejected inputs), §11.13 (responses),
//! §11.6.4 (status port), §5.5 (status counters), §11.14.5.

use super::quantizer::{
    C_PREFILL, DECODE, IDLE, PREFILL, RSP_NO_START, RSP_OK, RSP_PREFILL_AFTER_DECODE, RSP_PREFILL_FULL,
    RSP_SEQUENCE_FULL,
};
use crate::prim::counter::StatCounter;
use crate::prim::reg::{reg_logic, Reg};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SequenceState {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: IDLE, bit width 4, counters and flags 0
    pub reset: Signal<In, Bit>,
    /// M's command (a beat's is its token's): 0 start, 1 prefill, 2 flush, 3 decode
    pub item_kind: Signal<In, Bits<2>>,
    /// M is a token's last beat
    pub item_last: Signal<In, Bit>,
    /// a start's bit width, from the configuration table
    pub item_bits: Signal<In, Bits<3>>,
    /// a start named a layer >= layers
    pub item_oob: Signal<In, Bit>,
    /// the scheduler's start: a new sequence in PREFILL at position 0
    pub do_start: Signal<In, Bit>,
    /// a prefill beat is done (its last beat counts the token)
    pub do_mmf: Signal<In, Bit>,
    /// a response is sent
    pub do_rsp: Signal<In, Bit>,
    /// its `rsp_err` code
    pub rsp_code: Signal<In, Bits<3>>,
    /// QUANT starts: the prefill's token count is looked at
    pub go_quant: Signal<In, Bit>,
    /// a level was opened
    pub do_lvl: Signal<In, Bit>,
    /// the replay is drained: DECODE
    pub rep_end: Signal<In, Bit>,
    /// the phase: 0 IDLE, 1 PREFILL, 2 DECODE
    pub phase: Signal<Out, Bits<2>>,
    /// the sequence's bit width (2, 3 or 4)
    pub width: Signal<Out, Bits<3>>,
    /// the next token's position
    pub next_pos: Signal<Out, Bits<16>>,
    /// the rejection of a token whose first beat is in M (an `rsp_err` code)
    pub err: Signal<Out, Bits<3>>,
    /// the unit's `rsp_valid`
    pub rsp_valid: Signal<Out, Bit>,
    /// the unit's `rsp_err`
    pub rsp_err: Signal<Out, Bits<3>>,
    /// the unit's `st_levels_opened`
    pub st_levels_opened: Signal<Out, Bits<32>>,
    /// the unit's `st_rejected`
    pub st_rejected: Signal<Out, Bits<32>>,
    /// the unit's `st_layer_oob`
    pub st_layer_oob: Signal<Out, Bit>,
    /// the unit's `st_no_prefill`
    pub st_no_prefill: Signal<Out, Bit>,
    ph: Reg<Bits<2>>,
    bits: Reg<Bits<3>>,
    // one bit above 16: position 65,536 rejects every token (SequenceFull)
    pos: Reg<Bits<17>>,
    npre: Reg<Bits<13>>,
    f_oob: Reg<Bit>,
    f_nopre: Reg<Bit>,
    rspv: Reg<Bit>,
    rspe: Reg<Bits<3>>,
    // the counters count the cycle after their event (off the decision path)
    p_lev: Reg<Bit>,
    n_lev: StatCounter,
    n_rej: StatCounter,
    c_c_prefill: Constant<Bits<2>>,
    c_decode: Constant<Bits<2>>,
    c_idle: Constant<Bits<2>>,
    c_prefill: Constant<Bits<2>>,
    c_rsp_no_start: Constant<Bits<3>>,
    c_rsp_ok: Constant<Bits<3>>,
    c_rsp_prefill_after_decode: Constant<Bits<3>>,
    c_rsp_prefill_full: Constant<Bits<3>>,
    c_rsp_sequence_full: Constant<Bits<3>>,
    maxp: Constant<Bits<13>>,
    one8: Constant<Bits<8>>,
    one13: Constant<Bits<13>>,
    one17: Constant<Bits<17>>,
    zero13: Constant<Bits<13>>,
    zero17: Constant<Bits<17>>,
}

impl SequenceState {
    /// `max_prefill` in 1..=4096.
    pub fn new(max_prefill: usize) -> Self {
        SequenceState {
            clock: Default::default(),
            reset: Default::default(),
            item_kind: Default::default(),
            item_last: Default::default(),
            item_bits: Default::default(),
            item_oob: Default::default(),
            do_start: Default::default(),
            do_mmf: Default::default(),
            do_rsp: Default::default(),
            rsp_code: Default::default(),
            go_quant: Default::default(),
            do_lvl: Default::default(),
            rep_end: Default::default(),
            phase: Default::default(),
            width: Default::default(),
            next_pos: Default::default(),
            err: Default::default(),
            rsp_valid: Default::default(),
            rsp_err: Default::default(),
            st_levels_opened: Default::default(),
            st_rejected: Default::default(),
            st_layer_oob: Default::default(),
            st_no_prefill: Default::default(),
            ph: Reg::default(),
            bits: Reg::new(4u64.into()),
            pos: Reg::default(),
            npre: Reg::default(),
            f_oob: Reg::default(),
            f_nopre: Reg::default(),
            rspv: Reg::default(),
            rspe: Reg::default(),
            p_lev: Reg::default(),
            n_lev: Default::default(),
            n_rej: Default::default(),
            c_c_prefill: Constant::new(C_PREFILL.into()),
            c_decode: Constant::new(DECODE.into()),
            c_idle: Constant::new(IDLE.into()),
            c_prefill: Constant::new(PREFILL.into()),
            c_rsp_no_start: Constant::new(RSP_NO_START.into()),
            c_rsp_ok: Constant::new(RSP_OK.into()),
            c_rsp_prefill_after_decode: Constant::new(RSP_PREFILL_AFTER_DECODE.into()),
            c_rsp_prefill_full: Constant::new(RSP_PREFILL_FULL.into()),
            c_rsp_sequence_full: Constant::new(RSP_SEQUENCE_FULL.into()),
            maxp: Constant::new((max_prefill as u64).into()),
            one8: Constant::new(1u64.into()),
            one13: Constant::new(1u64.into()),
            one17: Constant::new(1u64.into()),
            zero13: Constant::new(0u64.into()),
            zero17: Constant::new(0u64.into()),
        }
    }
}

reg_logic!(SequenceState;
    regs [ph, bits, pos, npre, f_oob, f_nopre, rspv, rspe, p_lev];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        // a token's rejection, in the model's order (spec §11.13): the
        // last test that fails wins
        self.err.next = self.c_rsp_ok.val();
        if (self.item_kind.val() == self.c_c_prefill.val()) & (self.npre.q.val() == self.maxp.val()) {
            self.err.next = self.c_rsp_prefill_full.val();
        }
        if (self.item_kind.val() == self.c_c_prefill.val()) & (self.ph.q.val() == self.c_decode.val()) {
            self.err.next = self.c_rsp_prefill_after_decode.val();
        }
        if self.pos.q.val().get_bit(16) {
            self.err.next = self.c_rsp_sequence_full.val();
        }
        if self.ph.q.val() == self.c_idle.val() {
            self.err.next = self.c_rsp_no_start.val();
        }

        // the phase: a start begins PREFILL, the replay's end DECODE
        if self.rep_end.val() {
            self.ph.en.next = true;
            self.ph.d.next = self.c_decode.val();
        }
        if self.do_start.val() {
            self.ph.en.next = true;
            self.ph.d.next = self.c_prefill.val();
        }
        // the bit width is latched at acceptance and rides the queue with
        // the start, so a table write after it does not change it
        self.bits.en.next = self.do_start.val();
        self.bits.d.next = self.item_bits.val();
        self.f_oob.en.next = self.do_start.val() & self.item_oob.val();
        self.f_oob.d.next = true;
        self.f_nopre.en.next = self.go_quant.val();
        self.f_nopre.d.next = self.npre.q.val() == self.zero13.val();
        self.npre.en.next = self.do_start.val() | (self.do_mmf.val() & self.item_last.val());
        self.npre.d.next = self.npre.q.val() + self.one13.val();
        if self.do_start.val() {
            self.npre.d.next = self.zero13.val();
        }
        // a token takes a position when its response is ok (rejected ones do not)
        self.pos.en.next = self.do_start.val()
            | (self.do_rsp.val() & self.item_kind.val().get_bit(0) & (self.rsp_code.val() == self.c_rsp_ok.val()));
        self.pos.d.next = self.pos.q.val() + self.one17.val();
        if self.do_start.val() {
            self.pos.d.next = self.zero17.val();
        }
        self.rspv.en.next = true;
        self.rspv.d.next = self.do_rsp.val();
        self.rspe.en.next = true;
        self.rspe.d.next = self.rsp_code.val();

        // status counters (spec §5.5), counting the cycle after their event
        self.n_rej.clock.next = self.clock.val();
        self.n_rej.reset.next = self.reset.val();
        self.n_rej.en.next = self.rspv.q.val() & (self.rspe.q.val() != self.c_rsp_ok.val());
        self.n_rej.n.next = self.one8.val();
        self.p_lev.en.next = true;
        self.p_lev.d.next = self.do_lvl.val();
        self.n_lev.clock.next = self.clock.val();
        self.n_lev.reset.next = self.reset.val();
        self.n_lev.en.next = self.p_lev.q.val();
        self.n_lev.n.next = self.one8.val();

        self.phase.next = self.ph.q.val();
        self.width.next = self.bits.q.val();
        self.next_pos.next = self.pos.q.val().get_bits::<16>(0);
        self.rsp_valid.next = self.rspv.q.val();
        self.rsp_err.next = self.rspe.q.val();
        self.st_levels_opened.next = self.n_lev.count.val();
        self.st_rejected.next = self.n_rej.count.val();
        self.st_layer_oob.next = self.f_oob.q.val();
        self.st_no_prefill.next = self.f_nopre.q.val();
    }
);
