//! Input side of the Titanus quantization unit: a two-entry queue (head
//! and skid), the zero-insert network that spreads a beat's kept values
//! over their lanes, token framing, and M, the item the scheduler works on.
//! Paper: Titanus (GLSVLSI 2025) §4.4, Figure 7 (input of the QU).
//! Spec: docs/spec.md §11.13 (input port, commands), §11.14.5.

use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use crate::prim::zero_insert::ZeroInsert;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct InputQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The unit's input port (spec §11.13).
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_cmd: Signal<In, Bits<2>>,
    pub in_mask: Vec<Signal<In, Bit>>,
    pub in_data: Vec<Signal<In, Bits<8>>>,
    /// The configuration table's answer for the input item.
    pub t_bits: Signal<In, Bits<3>>,
    pub t_oob: Signal<In, Bit>,
    /// M takes the next item at this edge (M is empty or done).
    pub fen: Signal<In, Bit>,
    /// M: valid, command (a beat's command is its token's), first and last
    /// beat of a token, beat row, the sequence's bit width and layer flag.
    pub item_valid: Signal<Out, Bit>,
    pub item_kind: Signal<Out, Bits<2>>,
    pub item_first: Signal<Out, Bit>,
    pub item_last: Signal<Out, Bit>,
    pub item_row: Signal<Out, Bits<10>>,
    pub item_bits: Signal<Out, Bits<3>>,
    pub item_oob: Signal<Out, Bit>,
    /// M's elements, one per lane, and their kept bits.
    pub item_x: Vec<Signal<Out, Bits<8>>>,
    pub item_k: Vec<Signal<Out, Bit>>,
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
    one2: Constant<Bits<2>>,
    nbeats: Constant<Bits<11>>,
    one11: Constant<Bits<11>>,
    zero11: Constant<Bits<11>>,
    _n: usize,
}



impl InputQueue {
    pub fn new(lanes: usize, beats: usize) -> Self {
        InputQueue {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_cmd: Default::default(),
            in_mask: sigs(lanes),
            in_data: sigs(lanes),
            t_bits: Default::default(),
            t_oob: Default::default(),
            fen: Default::default(),
            item_valid: Default::default(),
            item_kind: Default::default(),
            item_first: Default::default(),
            item_last: Default::default(),
            item_row: Default::default(),
            item_bits: Default::default(),
            item_oob: Default::default(),
            item_x: sigs(lanes),
            item_k: sigs(lanes),
            hd_valid: Reg::default(),
            hd_cmd: Reg::default(),
            hd_bits: Reg::default(),
            hd_oob: Reg::default(),
            hd_mask: regs(lanes),
            hd_data: regs(lanes),
            sk_valid: Reg::default(),
            sk_cmd: Reg::default(),
            sk_bits: Reg::default(),
            sk_oob: Reg::default(),
            sk_mask: regs(lanes),
            sk_data: regs(lanes),
            acc: Default::default(),
            load: Default::default(),
            i_cmd: Default::default(),
            tokbeat: Default::default(),
            nb: Default::default(),
            zi: ZeroInsert::new(lanes, 0),
            bcnt: Reg::default(),
            tkind: Reg::default(),
            m_valid: Reg::default(),
            m_kind: Reg::default(),
            m_first: Reg::default(),
            m_last: Reg::default(),
            m_row: Reg::default(),
            m_bits: Reg::default(),
            m_oob: Reg::default(),
            m_x: regs(lanes),
            m_k: regs(lanes),
            one2: Constant::new(1u64.into()),
            nbeats: Constant::new((beats as u64).into()),
            one11: Constant::new(1u64.into()),
            zero11: Constant::new(0u64.into()),
            _n: lanes,
        }
    }
}

impl Logic for InputQueue {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, hd_valid, hd_cmd, hd_bits, hd_oob, sk_valid, sk_cmd, sk_bits, sk_oob, zi, bcnt, tkind,
            m_valid, m_kind, m_first, m_last, m_row, m_bits, m_oob
        );
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
            self.m_kind.d.next = self.one2.val() | (bit_cast::<2, 1>(self.tkind.q.val().into()) << self.one2.val());
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
        self.item_valid.next = self.m_valid.q.val();
        self.item_kind.next = self.m_kind.q.val();
        self.item_first.next = self.m_first.q.val();
        self.item_last.next = self.m_last.q.val();
        self.item_row.next = self.m_row.q.val();
        self.item_bits.next = self.m_bits.q.val();
        self.item_oob.next = self.m_oob.q.val();
        for p in 0..self._n {
            self.item_x[p].next = self.m_x[p].q.val();
            self.item_k[p].next = self.m_k[p].q.val();
        }
    }
}
