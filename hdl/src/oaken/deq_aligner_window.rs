//! The dequantizer aligner's window (spec §4.3): up to 2L entries of the
//! continuous sparse stream, shifted down each cycle by the entries taken
//! into a dense beat or dropped after a malformed record, with the sparse
//! FIFO's head beat joining behind what is left when at most L entries
//! are left. Each entry's flags for the next take (bit 10 "index in the
//! current beat", per-entry share of the take condition) are computed
//! here, before the shift, so that the take prefix starts at registers.
//! Paper: Oaken (ISCA 2025) §5.2 (buffers aligning the dense and sparse
//! paths). Spec: docs/spec.md §4.3, §4.5 (the aligner's loop).
//!
//! Entries: bits 0-7 the COO entry, bit 8 "from a beat with s_count > L"
//! (§4.3 cond. 3), bit 9 "index above the stream's previous entry's", bit
//! 10 "index in the current beat".

use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DeqAlignerWindow {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the aligner takes a dense beat (and the entries of `oh`) this cycle
    pub fire: Signal<In, Bit>,
    /// K0 holds a malformed record's last beat while its untaken entries
    /// drop (the entries of `doh`)
    pub hold: Signal<In, Bit>,
    /// entries taken, one-hot: oh[k] for k entries (0..=L)
    pub oh: Vec<Signal<In, Bit>>,
    /// entries dropped while K0 holds, one-hot (0..=L)
    pub doh: Vec<Signal<In, Bit>>,
    /// per window entry j < L: its own share of the take condition
    pub ok: Vec<Signal<In, Bit>>,
    /// the sparse FIFO's head beat, its entries flagged as they entered
    pub shead: Vec<Signal<In, Bits<11>>>,
    /// a sparse beat is waiting in the head register
    pub s_avail: Signal<In, Bit>,
    /// the beat within its segment current after this edge
    pub bws_n: Signal<In, Bits<8>>,
    /// the window's first L entries (registered)
    pub win_q: Vec<Signal<Out, Bits<11>>>,
    /// the window's valid entries, a thermometer (registered)
    pub wval_q: Vec<Signal<Out, Bit>>,
    /// per entry j < L, its stored share of the take condition: bit 10
    /// (and, for j > 0, bit 9) of the entry shifted into place j
    pub wc_q: Vec<Signal<Out, Bit>>,
    /// the head beat joins the window at this edge (the sparse FIFO pops)
    pub app_o: Signal<Out, Bit>,

    // ---- aligner ----
    // window entries: bit 8 = from a beat with s_count > L (§4.3 cond. 3),
    // bit 9 = index above the stream's previous entry's, bit 10 = index in
    // the current beat; wval = the valid entries (a thermometer: the
    // window's count)
    win: Vec<Reg<Bits<11>>>,
    wval: Vec<Reg<Bit>>,
    // per window entry j < L, its own share of the take condition, stored
    // so that the take prefix starts at a register: bit 10 (and, for
    // j > 0, bit 9) of the entry shifted into place j
    wc: Vec<Reg<Bit>>,
    hm: Vec<Signal<Local, Bits<11>>>,
    hv: Vec<Signal<Local, Bit>>,
    wdec: Vec<Signal<Local, Bit>>,
    cat: Vec<Signal<Local, Bits<11>>>,
    cidx: Signal<Local, Bits<8>>,
    catw: Vec<Signal<Local, Bit>>,
    cath: Vec<Signal<Local, Bit>>,
    cat10: Vec<Signal<Local, Bit>>,
    cat9: Vec<Signal<Local, Bit>>,
    vc: Signal<Local, Bit>,
    cs_oh: Vec<Signal<Local, Bit>>,
    wn: Signal<Local, Bits<11>>,
    vw: Signal<Local, Bit>,
    vh: Signal<Local, Bit>,
    app: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    idle: Signal<Local, Bit>,
    room_f: Signal<Local, Bit>,
    room_n: Signal<Local, Bit>,
    lshift8: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    zero11: Constant<Bits<11>>,
    cur11: Constant<Bits<11>>,

    // lanes L; window entries 2L; entries with the head beat behind 3L;
    // window counts 2L + 1; cat9's length (2L - 1, 0 for L = 1)
    _lanes: usize,
    _w2: usize,
    _w3: usize,
    _wp1: usize,
    _c9: usize,
}

impl DeqAlignerWindow {
    /// A window of 2 `lanes` entries.
    pub fn new(lanes: usize) -> Self {
        let l = lanes;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        DeqAlignerWindow {
            clock: Default::default(),
            reset: Default::default(),
            fire: Default::default(),
            hold: Default::default(),
            oh: sigs(l + 1),
            doh: sigs(l + 1),
            ok: sigs(l),
            shead: sigs(l),
            s_avail: Default::default(),
            bws_n: Default::default(),
            win_q: sigs(l),
            wval_q: sigs(2 * l),
            wc_q: sigs(l),
            app_o: Default::default(),
            win: regs(2 * l),
            wval: regs(2 * l),
            wc: regs(l),
            hm: sigs(l),
            hv: sigs(l),
            wdec: sigs(2 * l + 1),
            cat: sigs(3 * l),
            cidx: Default::default(),
            catw: sigs(3 * l),
            cath: sigs(3 * l),
            cat10: sigs(l + 1),
            cat9: sigs(if l > 1 { 2 * l - 1 } else { 0 }),
            vc: Default::default(),
            cs_oh: sigs(l + 1),
            wn: Default::default(),
            vw: Default::default(),
            vh: Default::default(),
            app: Default::default(),
            room: Default::default(),
            idle: Default::default(),
            room_f: Default::default(),
            room_n: Default::default(),
            lshift8: c(l.trailing_zeros() as u64),
            two8: c(2),
            zero11: c(0),
            cur11: c(0x400),
            _lanes: l,
            _w2: 2 * l,
            _w3: 3 * l,
            _wp1: 2 * l + 1,
            _c9: if l > 1 { 2 * l - 1 } else { 0 },
        }
    }
}

impl Logic for DeqAlignerWindow {
    #[hdl_gen]
    fn update(&mut self) {
        // the window shifts down by the entries taken or dropped (one-hot
        // select); the sparse FIFO's head beat joins behind what is left
        // when at most L entries are left. cat is the window with the head
        // beat's entries after its last one, placed before the shift is
        // known; valid bits of the window's and of the head's entries
        // shift apart, so that the late "head joins" only gates the latter.
        self.idle.next = !self.hold.val() & !self.fire.val();
        for k in 0..(self._lanes + 1) {
            self.cs_oh[k].next = (self.hold.val() & self.doh[k].val()) | (self.fire.val() & self.oh[k].val());
        }
        self.cs_oh[0].next = self.cs_oh[0].val() | self.idle.val();
        for p in 0..self._lanes {
            self.hv[p].next = self.shead[p].val().get_bit(10);
            self.hm[p].next = self.shead[p].val() & !self.cur11.val();
        }
        self.wdec[0].next = !self.wval[0].q.val();
        for k in 1..self._w2 {
            self.wdec[k].next = self.wval[k - 1].q.val() & !self.wval[k].q.val();
        }
        for k in self._w2..self._wp1 {
            self.wdec[k].next = self.wval[k - 1].q.val();
        }
        for i in 0..self._w2 {
            self.cat[i].next = self.zero11.val();
            if self.wval[i].q.val() {
                self.cat[i].next = self.win[i].q.val();
            }
            self.catw[i].next = self.wval[i].q.val();
            self.cath[i].next = false;
        }
        for i in self._w2..self._w3 {
            self.cat[i].next = self.zero11.val();
            self.catw[i].next = false;
            self.cath[i].next = false;
        }
        for k in 0..self._wp1 {
            for p in 0..self._lanes {
                if self.wdec[k].val() {
                    self.cat[k + p].next = self.cat[k + p].val() | self.hm[p].val();
                    self.cath[k + p].next = self.cath[k + p].val() | self.hv[p].val();
                }
            }
        }
        for i in 0..self._w3 {
            self.cidx.next = self.cat[i].val().get_bits::<8>(0) >> self.two8.val();
            self.cat[i].next = self.cat[i].val() & !self.cur11.val();
            if (self.cidx.val() >> self.lshift8.val()) == self.bws_n.val() {
                self.cat[i].next = self.cat[i].val() | self.cur11.val();
            }
        }
        // entry i's share of ok: bit 10 (cat10, for wc[0]); bits 10 and 9 of
        // entry i + 1 (cat9, for wc[j > 0])
        for i in 0..(self._lanes + 1) {
            self.cat10[i].next = self.cat[i].val().get_bit(10);
        }
        for i in 0..self._c9 {
            self.cat9[i].next = self.cat[i + 1].val().get_bit(10) & self.cat[i + 1].val().get_bit(9);
        }
        // room: the window's entries left reach no further than L
        // (for a taken beat and otherwise apart, fire selecting last; K0
        // holds while entries drop, so fire is 0 then). For a taken beat,
        // with t taken that is !catw[L + t]; the valid bits being a
        // thermometer, it is "every j with entry L + j valid is taken",
        // i.e. ok[j] for each such j: a flat AND, free of the take prefix
        // (which ABC maps as a mostly serial chain)
        self.room_f.next = true;
        self.room_n.next = true;
        for ln in self._lanes..(self._lanes + 1) {
            for j in 0..self._lanes {
                if self.catw[ln + j].val() & !self.ok[j].val() {
                    self.room_f.next = false;
                }
            }
            for k in 0..(self._lanes + 1) {
                if self.hold.val() & self.doh[k].val() & self.catw[ln + k].val() {
                    self.room_n.next = false;
                }
            }
            if !self.hold.val() & self.catw[ln].val() {
                self.room_n.next = false;
            }
        }
        self.room.next = self.room_n.val();
        if self.fire.val() {
            self.room.next = self.room_f.val();
        }
        self.app.next = self.s_avail.val() & self.room.val();
        for j in 0..self._w2 {
            self.wn.next = self.zero11.val();
            self.vw.next = false;
            self.vh.next = false;
            for k in 0..(self._lanes + 1) {
                if self.cs_oh[k].val() {
                    self.wn.next = self.wn.val() | self.cat[j + k].val();
                    self.vw.next = self.vw.val() | self.catw[j + k].val();
                    self.vh.next = self.vh.val() | self.cath[j + k].val();
                }
            }
            self.win[j].clock.next = self.clock.val();
            self.win[j].reset.next = self.reset.val();
            self.win[j].en.next = true;
            self.win[j].d.next = self.wn.val();
            self.wval[j].clock.next = self.clock.val();
            self.wval[j].reset.next = self.reset.val();
            self.wval[j].en.next = true;
            self.wval[j].d.next = self.vw.val() | (self.app.val() & self.vh.val());
        }
        // wc: as ok[j] without its thermometer factors (bit 9 only for j > 0)
        for j in 0..1 {
            self.vc.next = false;
            for k in 0..(self._lanes + 1) {
                if self.cs_oh[k].val() {
                    self.vc.next = self.vc.val() | self.cat10[j + k].val();
                }
            }
            self.wc[j].clock.next = self.clock.val();
            self.wc[j].reset.next = self.reset.val();
            self.wc[j].en.next = true;
            self.wc[j].d.next = self.vc.val();
        }
        for j in 1..self._lanes {
            self.vc.next = false;
            for k in 0..(self._lanes + 1) {
                if self.cs_oh[k].val() {
                    self.vc.next = self.vc.val() | self.cat9[j + k - 1].val();
                }
            }
            self.wc[j].clock.next = self.clock.val();
            self.wc[j].reset.next = self.reset.val();
            self.wc[j].en.next = true;
            self.wc[j].d.next = self.vc.val();
        }

        for j in 0..self._w2 {
            self.wval_q[j].next = self.wval[j].q.val();
        }
        for j in 0..self._lanes {
            self.win_q[j].next = self.win[j].q.val();
            self.wc_q[j].next = self.wc[j].q.val();
        }
        self.app_o.next = self.app.val();
    }
}
