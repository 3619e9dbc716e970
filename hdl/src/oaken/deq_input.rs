//! The dequantizer's input FIFOs: dense beats (with the record's counts,
//! their sum and "a count is over its segment's length", the metadata word
//! and the threshold set read as the beat enters) and sparse beats (each
//! entry flagged as it enters). Ready comes from an occupancy register, so
//! that no input-to-ready path crosses the engine.
//! Paper: Oaken (ISCA 2025) §5.2, Figure 9(b) (buffers in front of the
//! dense and sparse paths). Spec: docs/spec.md §4.2 (interface), §4.3
//! (the flags the aligner reads), §4.5 (structure).

use super::deq_or_tree::DeqOrTree;
use crate::prim::fifo::{FifoCtrl, FifoMem, FifoShift};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;
use sim::oaken::params::OakenParams;

/// Input FIFO depths (dense, sparse).
pub const FIFO_DEPTH: usize = 4;

/// Bits that hold 0..=n.
pub const fn bits_for(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}
// FIFO pointer and count widths sized to the depths: the dense FIFO holds
// FIFO_DEPTH beats, the sparse one FIFO_DEPTH - 1 behind its head register.
const DQ_A: usize = bits_for(FIFO_DEPTH - 1);
const DQ_C: usize = bits_for(FIFO_DEPTH);
const SQ_A: usize = bits_for(FIFO_DEPTH - 2);
const SQ_C: usize = bits_for(FIFO_DEPTH - 1);

/// `IB`: the dense slots' width (inlier bits).
#[derive(LogicBlock)]
pub struct DeqInput<const IB: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the engine's dense port (spec §4.2): valid
    pub d_valid: Signal<In, Bit>,
    /// the engine's dense port: ready
    pub d_ready: Signal<Out, Bit>,
    /// the engine's dense port: the beat's slots, one per lane
    pub d_dense: Vec<Signal<In, Bits<IB>>>,
    /// the engine's dense port: the token metadata word's bytes
    pub d_meta: Vec<Signal<In, Bits<8>>>,
    /// the engine's dense port: the head's segment counts
    pub d_counts: Vec<Signal<In, Bits<8>>>,
    /// the engine's sparse port: valid
    pub s_valid: Signal<In, Bit>,
    /// the engine's sparse port: ready
    pub s_ready: Signal<Out, Bit>,
    /// the engine's sparse port: COO entries, one per lane
    pub s_coo: Vec<Signal<In, Bits<8>>>,
    /// the engine's sparse port: entries in the beat
    pub s_count: Signal<In, Bits<8>>,
    /// the threshold table's set for the entering beat's layer and K/V
    pub thr_set: Signal<In, Bits<64>>,
    /// the entering beat's layer is out of range
    pub thr_oob: Signal<In, Bit>,
    /// the aligner takes the dense head (pop)
    pub fire: Signal<In, Bit>,
    /// the sparse head joins the aligner's window (pop)
    pub app: Signal<In, Bit>,
    /// a dense beat is waiting
    pub d_avail: Signal<Out, Bit>,
    /// a sparse beat is waiting (in the head register)
    pub s_avail: Signal<Out, Bit>,
    /// dense beats held (0..=FIFO_DEPTH)
    pub d_occ_q: Signal<Out, Bits<8>>,
    /// the dense head: slots
    pub h_dense: Vec<Signal<Out, Bits<IB>>>,
    /// the dense head: metadata bytes
    pub h_meta: Vec<Signal<Out, Bits<8>>>,
    /// the dense head: threshold set
    pub h_thr: Signal<Out, Bits<64>>,
    /// the dense head: layer out of range
    pub h_oob: Signal<Out, Bit>,
    /// the dense head: segment counts
    pub h_cnt: Vec<Signal<Out, Bits<8>>>,
    /// segment 0's count of the beat behind the dense head
    pub h_cnt1: Signal<Out, Bits<8>>,
    /// the dense head: list length (the counts' sum)
    pub h_n: Signal<Out, Bits<16>>,
    /// the dense head: a count is over its segment's length
    pub h_bad: Signal<Out, Bit>,
    /// the sparse head beat's entries: bit 8 "from a beat with s_count >
    /// L", bit 9 "index above the stream's previous entry's", bit 10 "lane
    /// below min(s_count, L)"
    pub shead_q: Vec<Signal<Out, Bits<11>>>,

    d_push: Signal<Local, Bit>,
    s_push: Signal<Local, Bit>,
    s_pop: Signal<Local, Bit>,
    d_occ: Reg<Bits<8>>,
    s_occ: Reg<Bits<8>>,
    d_rdy: Reg<Bit>,
    s_rdy: Reg<Bit>,
    dq: FifoCtrl<DQ_A, DQ_C>,
    dq_dense: Vec<FifoMem<IB, DQ_A>>,
    dq_meta: Vec<FifoMem<8, DQ_A>>,
    dq_thr: FifoMem<64, DQ_A>,
    dq_oob: FifoMem<1, DQ_A>,
    // the fields the aligner's loop reads: registered FIFO heads
    dq_cnt: Vec<FifoShift<8>>,
    dq_n: FifoShift<16>,
    dq_bad: FifoShift<1>,
    n_in: Signal<Local, Bits<16>>,
    bad_in: Signal<Local, Bit>,
    t8: Signal<Local, Bits<8>>,
    // sparse beats, prepared as they enter (the flags of shead_q). The
    // oldest beat is in a register (shead), the others in a FIFO behind
    // it, so that the late "the head joins the window" only selects the
    // register's next value.
    sq: FifoCtrl<SQ_A, SQ_C>,
    sqm: Vec<FifoMem<11, SQ_A>>,
    shead: Vec<Reg<Bits<11>>>,
    to_head: Signal<Local, Bit>,
    s_bad: Signal<Local, Bit>,
    sq_low: Signal<Local, Bit>,
    pidx: Vec<Signal<Local, Bits<8>>>,
    pent: Vec<Signal<Local, Bits<11>>>,
    // the index of the stream's last entry so far, and the entering beat's
    // last entry's index picked by an OR tree
    last_idx: Reg<Bits<8>>,
    lastsel: Signal<Local, Bits<8>>,
    last_tree: DeqOrTree<8>,

    kc8: Vec<Constant<Bits<8>>>,
    seg_len: Vec<Constant<Bits<8>>>,
    lanes8: Constant<Bits<8>>,
    depth8: Constant<Bits<8>>,
    depth_m1: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    bad11: Constant<Bits<11>>,
    inc11: Constant<Bits<11>>,
    cur11: Constant<Bits<11>>,
    zero16: Constant<Bits<16>>,

    // lanes, lanes - 1, segments, metadata bytes
    _lanes: usize,
    _lm1: usize,
    _segs: usize,
    _bytes: usize,
}

impl<const IB: usize> DeqInput<IB> {
    /// The FIFOs for `p.lanes` lanes and `p.segments()` counts per record.
    pub fn new(p: &OakenParams) -> Self {
        let l = p.lanes;
        let s = p.segments();
        let bytes = 12;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        DeqInput {
            clock: Default::default(),
            reset: Default::default(),
            d_valid: Default::default(),
            d_ready: Default::default(),
            d_dense: sigs(l),
            d_meta: sigs(bytes),
            d_counts: sigs(s),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_coo: sigs(l),
            s_count: Default::default(),
            thr_set: Default::default(),
            thr_oob: Default::default(),
            fire: Default::default(),
            app: Default::default(),
            d_avail: Default::default(),
            s_avail: Default::default(),
            d_occ_q: Default::default(),
            h_dense: sigs(l),
            h_meta: sigs(bytes),
            h_thr: Default::default(),
            h_oob: Default::default(),
            h_cnt: sigs(s),
            h_cnt1: Default::default(),
            h_n: Default::default(),
            h_bad: Default::default(),
            shead_q: sigs(l),
            d_push: Default::default(),
            s_push: Default::default(),
            s_pop: Default::default(),
            d_occ: Reg::default(),
            s_occ: Reg::default(),
            d_rdy: Reg::default(),
            s_rdy: Reg::default(),
            dq: FifoCtrl::new(FIFO_DEPTH),
            dq_dense: (0..l).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_meta: (0..bytes).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_thr: FifoMem::new(FIFO_DEPTH),
            dq_oob: FifoMem::new(FIFO_DEPTH),
            dq_cnt: (0..s).map(|_| FifoShift::new(FIFO_DEPTH)).collect(),
            dq_n: FifoShift::new(FIFO_DEPTH),
            dq_bad: FifoShift::new(FIFO_DEPTH),
            n_in: Default::default(),
            bad_in: Default::default(),
            t8: Default::default(),
            sq: FifoCtrl::new(FIFO_DEPTH - 1),
            sqm: (0..l).map(|_| FifoMem::new(FIFO_DEPTH - 1)).collect(),
            shead: regs(l),
            to_head: Default::default(),
            s_bad: Default::default(),
            sq_low: Default::default(),
            pidx: sigs(l),
            pent: sigs(l),
            last_idx: Reg::default(),
            lastsel: Default::default(),
            last_tree: DeqOrTree::new(l + 1),
            kc8: consts(0..l as u64),
            seg_len: consts((0..s).map(|i| p.segment_len(i) as u64)),
            lanes8: c(l as u64),
            depth8: c(FIFO_DEPTH as u64),
            depth_m1: c(FIFO_DEPTH as u64 - 1),
            two8: c(2),
            one8: c(1),
            zero8: c(0),
            bad11: c(0x100),
            inc11: c(0x200),
            cur11: c(0x400),
            zero16: c(0),
            _lanes: l,
            _lm1: l - 1,
            _segs: s,
            _bytes: bytes,
        }
    }
}

impl<const IB: usize> Logic for DeqInput<IB> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, d_occ, s_occ, d_rdy, s_rdy, last_idx);
        self.d_occ.reset.next = self.reset.val();
        self.s_occ.reset.next = self.reset.val();
        self.d_rdy.reset.next = self.reset.val();
        self.s_rdy.reset.next = self.reset.val();
        self.last_idx.reset.next = self.reset.val();

        // ---------------- dense FIFO ----------------
        self.d_push.next = self.d_valid.val() & self.d_rdy.q.val();
        self.s_push.next = self.s_valid.val() & self.s_rdy.q.val();
        self.d_ready.next = self.d_rdy.q.val();
        self.s_ready.next = self.s_rdy.q.val();
        self.dq.clock.next = self.clock.val();
        self.dq.reset.next = self.reset.val();
        self.dq.push.next = self.d_push.val();
        self.dq.pop.next = self.fire.val();
        for p in 0..self._lanes {
            self.dq_dense[p].clock.next = self.clock.val();
            self.dq_dense[p].reset.next = self.reset.val();
            self.dq_dense[p].we.next = self.d_push.val();
            self.dq_dense[p].waddr.next = self.dq.waddr.val();
            self.dq_dense[p].wdata.next = self.d_dense[p].val();
            self.dq_dense[p].raddr.next = self.dq.raddr.val();
            self.h_dense[p].next = self.dq_dense[p].rdata.val();
        }
        for i in 0..self._bytes {
            self.dq_meta[i].clock.next = self.clock.val();
            self.dq_meta[i].reset.next = self.reset.val();
            self.dq_meta[i].we.next = self.d_push.val();
            self.dq_meta[i].waddr.next = self.dq.waddr.val();
            self.dq_meta[i].wdata.next = self.d_meta[i].val();
            self.dq_meta[i].raddr.next = self.dq.raddr.val();
            self.h_meta[i].next = self.dq_meta[i].rdata.val();
        }
        // the record's counts, their sum (its list length) and "a count is
        // over its segment's length", found as the beat enters
        self.n_in.next = self.zero16.val();
        self.bad_in.next = false;
        for s in 0..self._segs {
            self.dq_cnt[s].clock.next = self.clock.val();
            self.dq_cnt[s].reset.next = self.reset.val();
            self.dq_cnt[s].push.next = self.d_push.val();
            self.dq_cnt[s].pop.next = self.fire.val();
            self.dq_cnt[s].wdata.next = self.d_counts[s].val();
            self.h_cnt[s].next = self.dq_cnt[s].rdata.val();
            self.t8.next = self.d_counts[s].val();
            self.n_in.next = self.n_in.val() + bit_cast::<16, 8>(self.t8.val());
            if self.t8.val() > self.seg_len[s].val() {
                self.bad_in.next = true;
            }
        }
        self.h_cnt1.next = self.dq_cnt[0].rdata1.val();
        self.dq_n.clock.next = self.clock.val();
        self.dq_n.reset.next = self.reset.val();
        self.dq_n.push.next = self.d_push.val();
        self.dq_n.pop.next = self.fire.val();
        self.dq_n.wdata.next = self.n_in.val();
        self.h_n.next = self.dq_n.rdata.val();
        self.dq_bad.clock.next = self.clock.val();
        self.dq_bad.reset.next = self.reset.val();
        self.dq_bad.push.next = self.d_push.val();
        self.dq_bad.pop.next = self.fire.val();
        self.dq_bad.wdata.next = bit_cast::<1, 1>(self.bad_in.val().into());
        self.h_bad.next = self.dq_bad.rdata.val().any();
        self.dq_thr.clock.next = self.clock.val();
        self.dq_thr.reset.next = self.reset.val();
        self.dq_thr.we.next = self.d_push.val();
        self.dq_thr.waddr.next = self.dq.waddr.val();
        self.dq_thr.wdata.next = self.thr_set.val();
        self.dq_thr.raddr.next = self.dq.raddr.val();
        self.h_thr.next = self.dq_thr.rdata.val();
        self.dq_oob.clock.next = self.clock.val();
        self.dq_oob.reset.next = self.reset.val();
        self.dq_oob.we.next = self.d_push.val();
        self.dq_oob.waddr.next = self.dq.waddr.val();
        self.dq_oob.wdata.next = bit_cast::<1, 1>(self.thr_oob.val().into());
        self.dq_oob.raddr.next = self.dq.raddr.val();
        self.h_oob.next = self.dq_oob.rdata.val().any();
        self.d_avail.next = !self.dq.empty.val();
        self.d_occ_q.next = self.d_occ.q.val();

        // ---------------- sparse FIFO ----------------
        // a sparse beat's entries, flagged as they enter
        // (lane p < L is an entry when p < s_count, whether or not s_count > L)
        self.s_bad.next = self.s_count.val() > self.lanes8.val();
        for p in 0..self._lanes {
            self.t8.next = self.s_coo[p].val();
            self.pidx[p].next = self.t8.val() >> self.two8.val();
            self.pent[p].next = bit_cast::<11, 8>(self.t8.val());
            if self.s_bad.val() {
                self.pent[p].next = self.pent[p].val() | self.bad11.val();
            }
            if self.kc8[p].val() < self.s_count.val() {
                self.pent[p].next = self.pent[p].val() | self.cur11.val();
            }
        }
        if self.pidx[0].val() > self.last_idx.q.val() {
            self.pent[0].next = self.pent[0].val() | self.inc11.val();
        }
        for p in 1..self._lanes {
            if self.pidx[p].val() > self.pidx[p - 1].val() {
                self.pent[p].next = self.pent[p].val() | self.inc11.val();
            }
        }
        // the beat's last entry's index (lane min(s_count, L) - 1), or the
        // previous one for an empty beat
        for p in 0..self._lm1 {
            self.last_tree.leaf[p].next = self.zero8.val();
            if self.s_count.val() == self.kc8[p + 1].val() {
                self.last_tree.leaf[p].next = self.pidx[p].val();
            }
        }
        for p in self._lm1..self._lanes {
            self.last_tree.leaf[p].next = self.zero8.val();
            if self.s_count.val() > self.kc8[p].val() {
                self.last_tree.leaf[p].next = self.pidx[p].val();
            }
        }
        for p in self._lanes..(self._lanes + 1) {
            self.last_tree.leaf[p].next = self.zero8.val();
            if self.s_count.val() == self.zero8.val() {
                self.last_tree.leaf[p].next = self.last_idx.q.val();
            }
        }
        self.lastsel.next = self.last_tree.y.val();
        self.last_idx.en.next = self.s_push.val();
        self.last_idx.d.next = self.lastsel.val();
        self.sq.clock.next = self.clock.val();
        self.sq.reset.next = self.reset.val();
        for p in 0..self._lanes {
            self.sqm[p].clock.next = self.clock.val();
            self.sqm[p].reset.next = self.reset.val();
            self.sqm[p].waddr.next = self.sq.waddr.val();
            self.sqm[p].wdata.next = self.pent[p].val();
            self.sqm[p].raddr.next = self.sq.raddr.val();
        }
        self.s_avail.next = self.s_occ.q.val() != self.zero8.val();
        // the head sparse beat pops when it joins the window. A beat
        // entering an empty head register (or one emptied now) goes there,
        // others queue behind it
        self.s_pop.next = self.app.val();
        self.to_head.next = self.s_push.val()
            & ((self.s_occ.q.val() == self.zero8.val()) | ((self.s_occ.q.val() == self.one8.val()) & self.s_pop.val()));
        self.sq.push.next = self.s_push.val() & !self.to_head.val();
        self.sq.pop.next = self.s_pop.val() & !self.sq.empty.val();
        // the FIFO's memory may take every beat (with no push the slot
        // written is a free one); the head takes the entering beat whenever
        // the FIFO behind it is empty (if that was not a push, the head is
        // empty after the edge), so only its enable waits for the pop
        self.sq_low.next = (self.s_occ.q.val() == self.zero8.val()) | (self.s_occ.q.val() == self.one8.val());
        for p in 0..self._lanes {
            self.sqm[p].we.next = self.s_push.val();
            self.shead[p].clock.next = self.clock.val();
            self.shead[p].reset.next = self.reset.val();
            self.shead[p].en.next = self.s_pop.val() | (self.s_push.val() & (self.s_occ.q.val() == self.zero8.val()));
            self.shead[p].d.next = self.sqm[p].rdata.val();
            if self.sq_low.val() {
                self.shead[p].d.next = self.pent[p].val();
            }
            self.shead_q[p].next = self.shead[p].q.val();
        }

        // ---------------- occupancy and ready ----------------
        // Occupancy counters take their pop late in the cycle, so both
        // sides of it are ready.
        self.d_occ.en.next = self.d_push.val() ^ self.fire.val();
        self.d_occ.d.next = self.d_occ.q.val() - self.one8.val();
        if self.d_push.val() {
            self.d_occ.d.next = self.d_occ.q.val() + self.one8.val();
        }
        self.d_rdy.en.next = true;
        self.d_rdy.d.next = self.d_occ.q.val() < self.depth8.val();
        if self.d_push.val() & !self.fire.val() {
            self.d_rdy.d.next = self.d_occ.q.val() < self.depth_m1.val();
        }
        if self.fire.val() & !self.d_push.val() {
            self.d_rdy.d.next = true;
        }
        self.s_occ.en.next = self.s_push.val() ^ self.s_pop.val();
        self.s_occ.d.next = self.s_occ.q.val() - self.one8.val();
        if self.s_push.val() {
            self.s_occ.d.next = self.s_occ.q.val() + self.one8.val();
        }
        self.s_rdy.en.next = true;
        self.s_rdy.d.next = self.s_occ.q.val() < self.depth8.val();
        if self.s_push.val() & !self.s_pop.val() {
            self.s_rdy.d.next = self.s_occ.q.val() < self.depth_m1.val();
        }
        if self.s_pop.val() & !self.s_push.val() {
            self.s_rdy.d.next = true;
        }
    }
}
