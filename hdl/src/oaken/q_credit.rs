//! Pass 1 of the Oaken quantization engine, its input side: acceptance of
//! beats against the token buffer's credit, and where each accepted beat
//! lies in its token.
//! Paper: Oaken (ISCA 2025) §5.2 "Quantization engine" (one beat per cycle,
//! sustained). Spec: docs/spec.md §2.13 (input interface, in_ready), §2.8
//! (segments of the COO counts), §2.14 (pass 1, credit).
//!
//! A beat counts against the token buffer from its acceptance until pass 2
//! reads it (`alloc`); `ready` is registered, high while the count after
//! this edge leaves the buffer a free slot, so that pass 1 and the
//! per-token unit never wait. The beat counters give the beat's place:
//! within the token (first, last), within its head, within its 64-element
//! segment, and the global segment index (head * segments + segment).

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QCredit {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the engine's input beat valid
    pub in_valid: Signal<In, Bit>,
    /// pass 2 reads a beat from the token buffer this cycle (frees a slot)
    pub rd_beat: Signal<In, Bit>,
    /// the engine's in_ready: the buffer has a slot for a beat at this edge
    pub in_ready: Signal<Out, Bit>,
    /// a beat is accepted this cycle (in_valid and in_ready)
    pub accept: Signal<Out, Bit>,
    /// the beat at the input is its token's first
    pub first: Signal<Out, Bit>,
    /// the beat at the input is its token's last
    pub last: Signal<Out, Bit>,
    /// global segment index (head * segments + segment) of the input beat
    pub seg: Signal<Out, Bits<16>>,
    ready: Reg<Bit>,
    /// Beats accepted and not yet read by pass 2.
    alloc: Reg<Bits<16>>,
    alloc_next: Signal<Local, Bits<16>>,
    // input position: beat within the token, within the head, within the
    // segment, and the global segment index
    bc_in: Reg<Bits<16>>,
    bh_in: Reg<Bits<16>>,
    sb_in: Reg<Bits<8>>,
    gs_in: Reg<Bits<16>>,
    seg_end: Signal<Local, Bit>,
    /// Token buffer depth in beats.
    buf_depth: Constant<Bits<16>>,
    /// Beats per token less one, per head less one, per segment less one.
    last_beat: Constant<Bits<16>>,
    head_last: Constant<Bits<16>>,
    seg_last: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
}

impl QCredit {
    /// `beats`: beats per token; `head_beats`: per head; `seg_beats`: per
    /// 64-element segment; `buffer`: token buffer depth in beats.
    pub fn new(beats: usize, head_beats: usize, seg_beats: usize, buffer: usize) -> Self {
        fn c<const N: usize>(v: usize) -> Constant<Bits<N>> {
            Constant::new((v as u64).into())
        }
        QCredit {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            rd_beat: Default::default(),
            in_ready: Default::default(),
            accept: Default::default(),
            first: Default::default(),
            last: Default::default(),
            seg: Default::default(),
            ready: Reg::default(),
            alloc: Reg::default(),
            alloc_next: Default::default(),
            bc_in: Reg::default(),
            bh_in: Reg::default(),
            sb_in: Reg::default(),
            gs_in: Reg::default(),
            seg_end: Default::default(),
            buf_depth: c(buffer),
            last_beat: c(beats - 1),
            head_last: c(head_beats - 1),
            seg_last: c(seg_beats - 1),
            one16: c(1),
            zero16: c(0),
            one8: c(1),
            zero8: c(0),
        }
    }
}

impl Logic for QCredit {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, ready, alloc, bc_in, bh_in, sb_in, gs_in);
        self.ready.reset.next = self.reset.val();
        self.alloc.reset.next = self.reset.val();
        self.bc_in.reset.next = self.reset.val();
        self.bh_in.reset.next = self.reset.val();
        self.sb_in.reset.next = self.reset.val();
        self.gs_in.reset.next = self.reset.val();
        self.accept.next = self.in_valid.val() & self.ready.q.val();
        self.alloc_next.next = self.alloc.q.val();
        if self.accept.val() {
            self.alloc_next.next = self.alloc_next.val() + self.one16.val();
        }
        if self.rd_beat.val() {
            self.alloc_next.next = self.alloc_next.val() - self.one16.val();
        }
        self.alloc.en.next = true;
        self.alloc.d.next = self.alloc_next.val();
        self.ready.en.next = true;
        self.ready.d.next = self.alloc_next.val() < self.buf_depth.val();
        self.in_ready.next = self.ready.q.val();
        self.bc_in.en.next = self.accept.val();
        self.bc_in.d.next = self.bc_in.q.val() + self.one16.val();
        if self.bc_in.q.val() == self.last_beat.val() {
            self.bc_in.d.next = self.zero16.val();
        }
        self.first.next = self.bc_in.q.val() == self.zero16.val();
        self.last.next = self.bc_in.q.val() == self.last_beat.val();
        // a segment ends at its 64th element or at the end of its head
        // (spec §2.8)
        self.seg_end.next = (self.sb_in.q.val() == self.seg_last.val()) | (self.bh_in.q.val() == self.head_last.val());
        self.bh_in.en.next = self.accept.val();
        self.bh_in.d.next = self.bh_in.q.val() + self.one16.val();
        if self.bh_in.q.val() == self.head_last.val() {
            self.bh_in.d.next = self.zero16.val();
        }
        self.sb_in.en.next = self.accept.val();
        self.sb_in.d.next = self.sb_in.q.val() + self.one8.val();
        if self.seg_end.val() {
            self.sb_in.d.next = self.zero8.val();
        }
        self.gs_in.en.next = self.accept.val() & self.seg_end.val();
        self.gs_in.d.next = self.gs_in.q.val() + self.one16.val();
        if self.bc_in.q.val() == self.last_beat.val() {
            self.gs_in.d.next = self.zero16.val();
        }
        self.seg.next = self.gs_in.q.val();
    }
}
