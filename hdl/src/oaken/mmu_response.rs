//! The Oaken MMU's response register: one beat (a burst descriptor, a
//! token's counts, or a command's status) held until the host takes it.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (the addresses and
//! transfer sizes handed to the DMA). Spec: docs/spec.md §10.6 (responses),
//! §10.11 (response channel), §10.12.

use super::mmu::{CW, D, KIND_COUNTS, KIND_DESC, KIND_STATUS, LEN_BITS, OP_READ, OP_WRITE, PAGES_BITS, STREAM_BITS, TOKEN_BITS};
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MmuResponse {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The host takes the held beat.
    pub rsp_ready: Signal<In, Bit>,
    /// A beat may be loaded this cycle (the register is empty or drains).
    pub can_emit: Signal<Out, Bit>,
    /// Load a beat of kind `e_kind`.
    pub e_go: Signal<In, Bit>,
    pub e_kind: Signal<In, Bits<2>>,
    /// A descriptor's address and length.
    pub e_addr: Signal<In, Bits<D>>,
    pub e_len: Signal<In, Bits<LEN_BITS>>,
    /// A counts beat's token.
    pub e_token: Signal<In, Bits<TOKEN_BITS>>,
    /// A status beat's status.
    pub e_status: Signal<In, Bits<3>>,
    /// A success status, which carries the command's results.
    pub e_full: Signal<In, Bit>,
    /// The current stream (a descriptor's stream).
    pub stream: Signal<In, Bits<D>>,
    /// The command's opcode, slot, whether it opened the slot, its token
    /// (count) and its pages (taken or freed).
    pub op: Signal<In, Bits<2>>,
    pub slot: Signal<In, Bits<D>>,
    pub opened: Signal<In, Bit>,
    pub tok: Signal<In, Bits<D>>,
    pub pages: Signal<In, Bits<D>>,
    /// The counts word read for a counts beat.
    pub counts_word: Signal<In, Bits<CW>>,
    /// The held beat (spec §10.11 `rsp_*`).
    pub rsp_valid: Signal<Out, Bit>,
    pub rsp_kind: Signal<Out, Bits<2>>,
    pub rsp_stream: Signal<Out, Bits<STREAM_BITS>>,
    pub rsp_addr: Signal<Out, Bits<D>>,
    pub rsp_len: Signal<Out, Bits<LEN_BITS>>,
    pub rsp_token: Signal<Out, Bits<TOKEN_BITS>>,
    pub rsp_counts: Vec<Signal<Out, Bits<8>>>,
    pub rsp_status: Signal<Out, Bits<3>>,
    pub rsp_slot: Signal<Out, Bits<8>>,
    pub rsp_opened: Signal<Out, Bit>,
    pub rsp_pages: Signal<Out, Bits<PAGES_BITS>>,
    pub rsp_last: Signal<Out, Bit>,

    o_v: Reg<Bit>,
    o_kind: Reg<Bits<2>>,
    o_stream: Reg<Bits<STREAM_BITS>>,
    o_addr: Reg<Bits<D>>,
    o_len: Reg<Bits<LEN_BITS>>,
    o_token: Reg<Bits<TOKEN_BITS>>,
    o_counts: Vec<Reg<Bits<8>>>,
    o_status: Reg<Bits<3>>,
    o_slot: Reg<Bits<8>>,
    o_opened: Reg<Bit>,
    o_pages: Reg<Bits<PAGES_BITS>>,
    o_last: Reg<Bit>,
    k_kind_desc: Constant<Bits<2>>,
    k_kind_counts: Constant<Bits<2>>,
    k_kind_status: Constant<Bits<2>>,
    k_op_w: Constant<Bits<2>>,
    k_op_r: Constant<Bits<2>>,
    k_seg_sh: Vec<Constant<Bits<D>>>,
    k_zero: Constant<Bits<D>>,
    _seg: usize,
}

impl MmuResponse {
    /// Beats of `seg` segment counts.
    pub fn new(seg: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        MmuResponse {
            clock: Default::default(),
            reset: Default::default(),
            rsp_ready: Default::default(),
            can_emit: Default::default(),
            e_go: Default::default(),
            e_kind: Default::default(),
            e_addr: Default::default(),
            e_len: Default::default(),
            e_token: Default::default(),
            e_status: Default::default(),
            e_full: Default::default(),
            stream: Default::default(),
            op: Default::default(),
            slot: Default::default(),
            opened: Default::default(),
            tok: Default::default(),
            pages: Default::default(),
            counts_word: Default::default(),
            rsp_valid: Default::default(),
            rsp_kind: Default::default(),
            rsp_stream: Default::default(),
            rsp_addr: Default::default(),
            rsp_len: Default::default(),
            rsp_token: Default::default(),
            rsp_counts: (0..seg).map(|_| Default::default()).collect(),
            rsp_status: Default::default(),
            rsp_slot: Default::default(),
            rsp_opened: Default::default(),
            rsp_pages: Default::default(),
            rsp_last: Default::default(),
            o_v: Reg::default(),
            o_kind: Reg::default(),
            o_stream: Reg::default(),
            o_addr: Reg::default(),
            o_len: Reg::default(),
            o_token: Reg::default(),
            o_counts: (0..seg).map(|_| Reg::default()).collect(),
            o_status: Reg::default(),
            o_slot: Reg::default(),
            o_opened: Reg::default(),
            o_pages: Reg::default(),
            o_last: Reg::default(),
            k_kind_desc: c(KIND_DESC),
            k_kind_counts: c(KIND_COUNTS),
            k_kind_status: c(KIND_STATUS),
            k_op_w: c(OP_WRITE),
            k_op_r: c(OP_READ),
            k_seg_sh: (0..seg).map(|i| c(8 * i as u64)).collect(),
            k_zero: c(0),
            _seg: seg,
        }
    }
}

impl Logic for MmuResponse {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, o_v, o_kind, o_stream, o_addr, o_len, o_token, o_status, o_slot, o_opened, o_pages, o_last);
        self.o_v.reset.next = self.reset.val();
        self.o_kind.reset.next = self.reset.val();
        self.o_stream.reset.next = self.reset.val();
        self.o_addr.reset.next = self.reset.val();
        self.o_len.reset.next = self.reset.val();
        self.o_token.reset.next = self.reset.val();
        self.o_status.reset.next = self.reset.val();
        self.o_slot.reset.next = self.reset.val();
        self.o_opened.reset.next = self.reset.val();
        self.o_pages.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.can_emit.next = !self.o_v.q.val() | self.rsp_ready.val();

        self.o_v.en.next = self.e_go.val() | self.rsp_ready.val();
        self.o_v.d.next = self.e_go.val();
        self.o_kind.en.next = self.e_go.val();
        self.o_kind.d.next = self.e_kind.val();
        self.o_stream.en.next = self.e_go.val();
        self.o_addr.en.next = self.e_go.val();
        self.o_len.en.next = self.e_go.val();
        self.o_token.en.next = self.e_go.val();
        self.o_token.d.next = self.e_token.val();
        self.o_status.en.next = self.e_go.val();
        self.o_status.d.next = self.e_status.val();
        self.o_slot.en.next = self.e_go.val();
        self.o_slot.d.next = bit_cast::<8, D>(self.k_zero.val());
        self.o_opened.en.next = self.e_go.val();
        self.o_opened.d.next = false;
        self.o_pages.en.next = self.e_go.val();
        self.o_pages.d.next = bit_cast::<PAGES_BITS, D>(self.k_zero.val());
        self.o_last.en.next = self.e_go.val();
        self.o_last.d.next = self.e_kind.val() == self.k_kind_status.val();
        // descriptor fields only on descriptors
        self.o_stream.d.next = bit_cast::<STREAM_BITS, D>(self.k_zero.val());
        self.o_addr.d.next = self.k_zero.val();
        self.o_len.d.next = bit_cast::<LEN_BITS, D>(self.k_zero.val());
        if self.e_kind.val() == self.k_kind_desc.val() {
            self.o_stream.d.next = bit_cast::<STREAM_BITS, D>(self.stream.val());
            self.o_addr.d.next = self.e_addr.val();
            self.o_len.d.next = self.e_len.val();
        }
        // a successful command's status carries its slot and results
        if self.e_full.val() {
            self.o_slot.d.next = bit_cast::<8, D>(self.slot.val());
            if self.op.val() == self.k_op_w.val() {
                self.o_opened.d.next = self.opened.val();
                self.o_token.d.next = bit_cast::<TOKEN_BITS, D>(self.tok.val());
                self.o_pages.d.next = bit_cast::<PAGES_BITS, D>(self.pages.val());
            } else if self.op.val() == self.k_op_r.val() {
                self.o_token.d.next = bit_cast::<TOKEN_BITS, D>(self.tok.val());
            } else {
                self.o_pages.d.next = bit_cast::<PAGES_BITS, D>(self.pages.val());
            }
        }
        for k in 0..self._seg {
            self.o_counts[k].clock.next = self.clock.val();
            self.o_counts[k].reset.next = self.reset.val();
            self.o_counts[k].en.next = self.e_go.val();
            self.o_counts[k].d.next = bit_cast::<8, D>(self.k_zero.val());
            if self.e_kind.val() == self.k_kind_counts.val() {
                self.o_counts[k].d.next = self.counts_word.val().get_bits::<8>(self.k_seg_sh[k].val().index());
            }
            self.rsp_counts[k].next = self.o_counts[k].q.val();
        }

        self.rsp_valid.next = self.o_v.q.val();
        self.rsp_kind.next = self.o_kind.q.val();
        self.rsp_stream.next = self.o_stream.q.val();
        self.rsp_addr.next = self.o_addr.q.val();
        self.rsp_len.next = self.o_len.q.val();
        self.rsp_token.next = self.o_token.q.val();
        self.rsp_status.next = self.o_status.q.val();
        self.rsp_slot.next = self.o_slot.q.val();
        self.rsp_opened.next = self.o_opened.q.val();
        self.rsp_pages.next = self.o_pages.q.val();
        self.rsp_last.next = self.o_last.q.val();
    }
}
