//! The Oaken MMU's command decode: the latched command, the sequence-slot
//! table and its lookup, and the command checks.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (per-sequence
//! management tables). Spec: docs/spec.md §10.3 (sequence slots), §10.8
//! (BadCommand, NoFreeSlot, UnknownSequence, DoubleFree), §10.12.

use super::mmu::{D, OP_READ, OP_WRITE};
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MmuDecode {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Latch the command ports (IDLE takes a command).
    pub take: Signal<In, Bit>,
    /// The command ports of the MMU (spec §10.11).
    pub cmd_op: Signal<In, Bits<2>>,
    pub cmd_seq: Signal<In, Bits<16>>,
    pub cmd_layer: Signal<In, Bits<8>>,
    pub cmd_head: Signal<In, Bits<8>>,
    pub cmd_counts: Vec<Signal<In, Bits<8>>>,
    /// Open slot `slot` for the latched sequence (a write's commit).
    pub open: Signal<In, Bit>,
    /// Mark slot `slot` freed (a free's last layer).
    pub free: Signal<In, Bit>,
    /// The slot that `open` and `free` act on.
    pub slot: Signal<In, Bits<D>>,
    /// The latched opcode, layer, head and segment counts.
    pub op: Signal<Out, Bits<2>>,
    pub layer: Signal<Out, Bits<D>>,
    pub head: Signal<Out, Bits<D>>,
    pub counts: Vec<Signal<Out, Bits<8>>>,
    /// An open slot holds the sequence; its index.
    pub f_open: Signal<Out, Bit>,
    pub i_open: Signal<Out, Bits<D>>,
    /// A freed slot last held the sequence.
    pub f_freed: Signal<Out, Bit>,
    /// Some slot is empty; the first one.
    pub f_empty: Signal<Out, Bit>,
    pub i_empty: Signal<Out, Bits<D>>,
    /// Some slot is freed; the first one.
    pub f_anyfreed: Signal<Out, Bit>,
    pub i_anyfreed: Signal<Out, Bits<D>>,
    /// BadCommand: a malformed opcode, or a layer, head or count out of range.
    pub bad: Signal<Out, Bit>,
    /// The command is a free.
    pub freeing: Signal<Out, Bit>,

    c_op: Reg<Bits<2>>,
    c_seq: Reg<Bits<16>>,
    c_layer: Reg<Bits<D>>,
    c_head: Reg<Bits<D>>,
    c_cnt: Vec<Reg<Bits<8>>>,
    sid: Vec<Reg<Bits<16>>>,
    sst: Vec<Reg<Bits<2>>>,
    l_fopen: Signal<Local, Bit>,
    l_iopen: Signal<Local, Bits<D>>,
    l_ffreed: Signal<Local, Bit>,
    l_fempty: Signal<Local, Bit>,
    l_iempty: Signal<Local, Bits<D>>,
    l_fany: Signal<Local, Bit>,
    l_iany: Signal<Local, Bits<D>>,
    cnt_bad: Signal<Local, Bit>,
    layer_bad: Signal<Local, Bit>,
    head_bad: Signal<Local, Bit>,
    k_op_w: Constant<Bits<2>>,
    k_op_r: Constant<Bits<2>>,
    k_op_f: Constant<Bits<2>>,
    k_op_bad: Constant<Bits<2>>,
    k_empty: Constant<Bits<2>>,
    k_open: Constant<Bits<2>>,
    k_freed: Constant<Bits<2>>,
    k_slot: Vec<Constant<Bits<D>>>,
    k_seglen: Vec<Constant<Bits<8>>>,
    k_layers: Constant<Bits<D>>,
    k_heads: Constant<Bits<D>>,
    k_zero: Constant<Bits<D>>,
    _ms: usize,
    _nc: usize,
}

impl MmuDecode {
    /// `ms` slots, `layers` layers, `heads` heads; `seglen[i]` bounds count i.
    pub fn new(ms: usize, layers: usize, heads: usize, seglen: &[u64]) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let nc = seglen.len();
        MmuDecode {
            clock: Default::default(),
            reset: Default::default(),
            take: Default::default(),
            cmd_op: Default::default(),
            cmd_seq: Default::default(),
            cmd_layer: Default::default(),
            cmd_head: Default::default(),
            cmd_counts: (0..nc).map(|_| Default::default()).collect(),
            open: Default::default(),
            free: Default::default(),
            slot: Default::default(),
            op: Default::default(),
            layer: Default::default(),
            head: Default::default(),
            counts: (0..nc).map(|_| Default::default()).collect(),
            f_open: Default::default(),
            i_open: Default::default(),
            f_freed: Default::default(),
            f_empty: Default::default(),
            i_empty: Default::default(),
            f_anyfreed: Default::default(),
            i_anyfreed: Default::default(),
            bad: Default::default(),
            freeing: Default::default(),
            c_op: Reg::default(),
            c_seq: Reg::default(),
            c_layer: Reg::default(),
            c_head: Reg::default(),
            c_cnt: (0..nc).map(|_| Reg::default()).collect(),
            sid: (0..ms).map(|_| Reg::default()).collect(),
            sst: (0..ms).map(|_| Reg::default()).collect(),
            l_fopen: Default::default(),
            l_iopen: Default::default(),
            l_ffreed: Default::default(),
            l_fempty: Default::default(),
            l_iempty: Default::default(),
            l_fany: Default::default(),
            l_iany: Default::default(),
            cnt_bad: Default::default(),
            layer_bad: Default::default(),
            head_bad: Default::default(),
            k_op_w: c(OP_WRITE),
            k_op_r: c(OP_READ),
            k_op_f: c(super::mmu::OP_FREE),
            k_op_bad: c(3),
            k_empty: c(0),
            k_open: c(1),
            k_freed: c(2),
            k_slot: (0..ms).map(|i| c(i as u64)).collect(),
            k_seglen: seglen.iter().map(|&v| c(v)).collect(),
            k_layers: c(layers as u64),
            k_heads: c(heads as u64),
            k_zero: c(0),
            _ms: ms,
            _nc: nc,
        }
    }
}

impl Logic for MmuDecode {
    #[hdl_gen]
    fn update(&mut self) {
        // the command, latched as IDLE takes it
        clock!(self, clock, c_op, c_seq, c_layer, c_head);
        self.c_op.reset.next = self.reset.val();
        self.c_seq.reset.next = self.reset.val();
        self.c_layer.reset.next = self.reset.val();
        self.c_head.reset.next = self.reset.val();
        self.c_op.en.next = self.take.val();
        self.c_seq.en.next = self.take.val();
        self.c_layer.en.next = self.take.val();
        self.c_head.en.next = self.take.val();
        self.c_op.d.next = self.cmd_op.val();
        self.c_seq.d.next = self.cmd_seq.val();
        self.c_layer.d.next = bit_cast::<D, 8>(self.cmd_layer.val());
        self.c_head.d.next = bit_cast::<D, 8>(self.cmd_head.val());
        self.op.next = self.c_op.q.val();
        self.layer.next = self.c_layer.q.val();
        self.head.next = self.c_head.q.val();
        for i in 0..self._nc {
            self.c_cnt[i].clock.next = self.clock.val();
            self.c_cnt[i].reset.next = self.reset.val();
            self.c_cnt[i].en.next = self.take.val();
            self.c_cnt[i].d.next = self.cmd_counts[i].val();
            self.counts[i].next = self.c_cnt[i].q.val();
        }

        // the slot table: a slot opens (id and state) or is freed
        for k in 0..self._ms {
            self.sid[k].clock.next = self.clock.val();
            self.sid[k].reset.next = self.reset.val();
            self.sid[k].en.next = false;
            self.sid[k].d.next = self.c_seq.q.val();
            self.sst[k].clock.next = self.clock.val();
            self.sst[k].reset.next = self.reset.val();
            self.sst[k].en.next = false;
            self.sst[k].d.next = self.k_open.val();
            if self.free.val() & (self.k_slot[k].val() == self.slot.val()) {
                self.sst[k].en.next = true;
                self.sst[k].d.next = self.k_freed.val();
            }
            if self.open.val() & (self.k_slot[k].val() == self.slot.val()) {
                self.sid[k].en.next = true;
                self.sst[k].en.next = true;
                self.sst[k].d.next = self.k_open.val();
            }
        }

        // slot lookup (spec §10.3): the sequence's slot, the first empty
        // and the first freed one. The search runs on locals and each
        // output is written once: an output written twice in one pass
        // glitches, and the core's pass, which reads these and drives
        // `open`, `free` and `slot`, would re-wake this one without end
        // under an event-driven simulator (Icarus).
        self.l_fopen.next = false;
        self.l_iopen.next = self.k_zero.val();
        self.l_ffreed.next = false;
        self.l_fempty.next = false;
        self.l_iempty.next = self.k_zero.val();
        self.l_fany.next = false;
        self.l_iany.next = self.k_zero.val();
        for k in 0..self._ms {
            if (self.sst[k].q.val() == self.k_open.val()) & (self.sid[k].q.val() == self.c_seq.q.val()) {
                self.l_fopen.next = true;
                self.l_iopen.next = self.k_slot[k].val();
            }
            if (self.sst[k].q.val() == self.k_freed.val()) & (self.sid[k].q.val() == self.c_seq.q.val()) {
                self.l_ffreed.next = true;
            }
            if !self.l_fempty.val() & (self.sst[k].q.val() == self.k_empty.val()) {
                self.l_fempty.next = true;
                self.l_iempty.next = self.k_slot[k].val();
            }
            if !self.l_fany.val() & (self.sst[k].q.val() == self.k_freed.val()) {
                self.l_fany.next = true;
                self.l_iany.next = self.k_slot[k].val();
            }
        }
        self.f_open.next = self.l_fopen.val();
        self.i_open.next = self.l_iopen.val();
        self.f_freed.next = self.l_ffreed.val();
        self.f_empty.next = self.l_fempty.val();
        self.i_empty.next = self.l_iempty.val();
        self.f_anyfreed.next = self.l_fany.val();
        self.i_anyfreed.next = self.l_iany.val();

        // command checks (spec §10.8 BadCommand)
        self.cnt_bad.next = false;
        for i in 0..self._nc {
            if self.c_cnt[i].q.val() > self.k_seglen[i].val() {
                self.cnt_bad.next = true;
            }
        }
        self.layer_bad.next = self.c_layer.q.val() >= self.k_layers.val();
        self.head_bad.next = self.c_head.q.val() >= self.k_heads.val();
        self.bad.next = (self.c_op.q.val() == self.k_op_bad.val())
            | ((self.c_op.q.val() == self.k_op_w.val()) & (self.layer_bad.val() | self.cnt_bad.val()))
            | ((self.c_op.q.val() == self.k_op_r.val()) & (self.layer_bad.val() | self.head_bad.val()));
        self.freeing.next = self.c_op.q.val() == self.k_op_f.val();
    }
}
