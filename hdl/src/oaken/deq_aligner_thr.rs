//! The dequantizer aligner's count-range thermometer (spec §4.3): per
//! window entry j < L, thr[j] = "j < the entries of the current segment's
//! count range not yet taken", for the beat current after this edge. At a
//! first beat it is the count the dense FIFO's head will show (the head,
//! the word behind it after a pop, or the entering word); after a taken
//! beat, the rest of the range (dd shifted by the count taken) or the next
//! segment's count. Stored as a thermometer, it joins the take condition
//! at a register.
//! Paper: Oaken (ISCA 2025) §5.2 (buffers aligning the dense and sparse
//! paths). Spec: docs/spec.md §4.3, §4.5.

use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DeqAlignerThr {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the aligner takes a dense beat this cycle
    pub fire: Signal<In, Bit>,
    /// the current beat is its record's first
    pub first_b: Signal<In, Bit>,
    /// the current beat is its record's last
    pub last_b: Signal<In, Bit>,
    /// the next beat starts a new segment
    pub next_seg: Signal<In, Bit>,
    /// per window entry j < L, its own share of the take condition
    pub ok: Vec<Signal<In, Bit>>,
    /// entries of the current segment's count range not yet taken
    pub sr_cur: Signal<In, Bits<8>>,
    /// the next segment's count
    pub ncnt: Signal<In, Bits<8>>,
    /// dense beats held in the dense FIFO
    pub d_occ: Signal<In, Bits<8>>,
    /// segment 0's count of the dense FIFO's head
    pub h_cnt0: Signal<In, Bits<8>>,
    /// segment 0's count of the dense beat behind the head
    pub h_cnt1: Signal<In, Bits<8>>,
    /// segment 0's count of the entering dense beat
    pub w_cnt0: Signal<In, Bits<8>>,
    /// the thermometer (registered)
    pub thr_q: Vec<Signal<Out, Bit>>,

    thr: Vec<Reg<Bit>>,
    // thr at a first beat: from the dense head, the word behind it (after
    // a pop) or the entering word, compared before the late select
    th_h: Vec<Signal<Local, Bit>>,
    th_1: Vec<Signal<Local, Bit>>,
    th_w: Vec<Signal<Local, Bit>>,
    occ0: Signal<Local, Bit>,
    occ1: Signal<Local, Bit>,
    // dd[i] = i < sr_cur, shifted by the count taken through an OR tree
    // per entry (bt0..bt7, its levels)
    dd: Vec<Signal<Local, Bit>>,
    sth: Signal<Local, Bit>,
    bt0: Vec<Signal<Local, Bit>>,
    bt1: Vec<Signal<Local, Bit>>,
    bt2: Vec<Signal<Local, Bit>>,
    bt3: Vec<Signal<Local, Bit>>,
    bt4: Vec<Signal<Local, Bit>>,
    bt5: Vec<Signal<Local, Bit>>,
    bt6: Vec<Signal<Local, Bit>>,
    bt7: Vec<Signal<Local, Bit>>,
    kc8: Vec<Constant<Bits<8>>>,
    kc16: Vec<Constant<Bits<16>>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,

    _lanes: usize,
    _w2: usize,
    // the OR trees: pairs and pass-through leaves per level
    _tp1: usize,
    _tr1: usize,
    _tp2: usize,
    _tr2: usize,
    _tp3: usize,
    _tr3: usize,
    _tp4: usize,
    _tr4: usize,
    _tp5: usize,
    _tr5: usize,
    _tp6: usize,
    _tr6: usize,
    _tp7: usize,
    _tr7: usize,
}

impl DeqAlignerThr {
    /// The thermometer over the first `lanes` window entries.
    pub fn new(lanes: usize) -> Self {
        let l = lanes;
        // OR trees over L + 1 leaves (L <= 64: 7 levels reach one)
        let (tn, tp, tr) = super::deq_or_tree::levels(l + 1);
        DeqAlignerThr {
            clock: Default::default(),
            reset: Default::default(),
            fire: Default::default(),
            first_b: Default::default(),
            last_b: Default::default(),
            next_seg: Default::default(),
            ok: sigs(l),
            sr_cur: Default::default(),
            ncnt: Default::default(),
            d_occ: Default::default(),
            h_cnt0: Default::default(),
            h_cnt1: Default::default(),
            w_cnt0: Default::default(),
            thr_q: sigs(l),
            thr: regs(l),
            th_h: sigs(l),
            th_1: sigs(l),
            th_w: sigs(l),
            occ0: Default::default(),
            occ1: Default::default(),
            dd: sigs(2 * l),
            sth: Default::default(),
            bt0: sigs(tn[0]),
            bt1: sigs(tn[1]),
            bt2: sigs(tn[2]),
            bt3: sigs(tn[3]),
            bt4: sigs(tn[4]),
            bt5: sigs(tn[5]),
            bt6: sigs(tn[6]),
            bt7: sigs(tn[7]),
            kc8: consts(0..l as u64),
            kc16: consts(0..2 * l as u64),
            zero8: Constant::new(0.into()),
            one8: Constant::new(1.into()),
            _lanes: l,
            _w2: 2 * l,
            _tp1: tp[0],
            _tr1: tr[0],
            _tp2: tp[1],
            _tr2: tr[1],
            _tp3: tp[2],
            _tr3: tr[2],
            _tp4: tp[3],
            _tr4: tr[3],
            _tp5: tp[4],
            _tr5: tr[4],
            _tp6: tp[5],
            _tr6: tr[5],
            _tp7: tp[6],
            _tr7: tr[6],
        }
    }
}

impl Logic for DeqAlignerThr {
    #[hdl_gen]
    fn update(&mut self) {
        // thr for the beat current after this edge: at a first beat the
        // count the dense FIFO's head will show; after a taken beat the
        // rest of the range (dd shifted by the count taken) or the next
        // segment's count
        for i in 0..self._w2 {
            self.dd[i].next = self.kc16[i].val() < bit_cast::<16, 8>(self.sr_cur.val());
        }
        self.occ0.next = self.d_occ.val() == self.zero8.val();
        self.occ1.next = self.d_occ.val() == self.one8.val();
        for j in 0..self._lanes {
            self.th_h[j].next = self.kc8[j].val() < self.h_cnt0.val();
            self.th_1[j].next = self.kc8[j].val() < self.h_cnt1.val();
            self.th_w[j].next = self.kc8[j].val() < self.w_cnt0.val();
        }
        for j in 0..self._lanes {
            // dd[j + t], as X[t] above
            for i in 0..self._lanes {
                self.bt0[i].next = !self.ok[i].val() & self.dd[j + i].val();
            }
            for i in self._lanes..(self._lanes + 1) {
                self.bt0[i].next = self.dd[j + i].val();
            }
            for i in 0..self._tp1 {
                self.bt1[i].next = self.bt0[2 * i].val() | self.bt0[2 * i + 1].val();
            }
            for g in self._tp1..(self._tp1 + self._tr1) {
                self.bt1[g].next = self.bt0[2 * g].val();
            }
            for i in 0..self._tp2 {
                self.bt2[i].next = self.bt1[2 * i].val() | self.bt1[2 * i + 1].val();
            }
            for g in self._tp2..(self._tp2 + self._tr2) {
                self.bt2[g].next = self.bt1[2 * g].val();
            }
            for i in 0..self._tp3 {
                self.bt3[i].next = self.bt2[2 * i].val() | self.bt2[2 * i + 1].val();
            }
            for g in self._tp3..(self._tp3 + self._tr3) {
                self.bt3[g].next = self.bt2[2 * g].val();
            }
            for i in 0..self._tp4 {
                self.bt4[i].next = self.bt3[2 * i].val() | self.bt3[2 * i + 1].val();
            }
            for g in self._tp4..(self._tp4 + self._tr4) {
                self.bt4[g].next = self.bt3[2 * g].val();
            }
            for i in 0..self._tp5 {
                self.bt5[i].next = self.bt4[2 * i].val() | self.bt4[2 * i + 1].val();
            }
            for g in self._tp5..(self._tp5 + self._tr5) {
                self.bt5[g].next = self.bt4[2 * g].val();
            }
            for i in 0..self._tp6 {
                self.bt6[i].next = self.bt5[2 * i].val() | self.bt5[2 * i + 1].val();
            }
            for g in self._tp6..(self._tp6 + self._tr6) {
                self.bt6[g].next = self.bt5[2 * g].val();
            }
            for i in 0..self._tp7 {
                self.bt7[i].next = self.bt6[2 * i].val() | self.bt6[2 * i + 1].val();
            }
            for g in self._tp7..(self._tp7 + self._tr7) {
                self.bt7[g].next = self.bt6[2 * g].val();
            }
            self.sth.next = self.bt7[0].val();
            if self.next_seg.val() {
                self.sth.next = self.kc8[j].val() < self.ncnt.val();
            }
            self.thr[j].clock.next = self.clock.val();
            self.thr[j].reset.next = self.reset.val();
            self.thr[j].en.next = self.fire.val() | self.first_b.val();
            self.thr[j].d.next = self.sth.val();
            // the head after this edge: the word behind it after a pop, the
            // entering word when the FIFO is (left) empty
            if self.fire.val() & self.last_b.val() {
                self.thr[j].d.next = self.th_1[j].val();
                if self.occ1.val() {
                    self.thr[j].d.next = self.th_w[j].val();
                }
            }
            if !self.fire.val() {
                self.thr[j].d.next = self.th_h[j].val();
                if self.occ0.val() {
                    self.thr[j].d.next = self.th_w[j].val();
                }
            }
        }
        for j in 0..self._lanes {
            self.thr_q[j].next = self.thr[j].q.val();
        }
    }
}
