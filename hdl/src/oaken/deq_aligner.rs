//! The dequantizer's aligner (spec §4.3) and its output register K0's
//! control. The aligner keeps the next entries of the one continuous
//! sparse stream in a window of up to 2L entries (deq_aligner_window) and
//! each cycle takes one dense beat's entries off the window's front, never
//! past the record's count sum or the segment's count range, so the next
//! record's entries stay in the window; an untaken remainder is dropped
//! after the record's last beat, at most L entries a cycle, while K0
//! holds that beat. Its loop is window -> take thermometer -> shift ->
//! window. It also keeps the record's counts, remaining list length,
//! beat position and sticky error, and judges the record well formed or
//! malformed (§4.3 conditions 1-4).
//! Paper: Oaken (ISCA 2025) §5.2 (buffers aligning the dense and sparse
//! paths). Spec: docs/spec.md §4.3, §4.5.
//!
//! Window entries: bits 0-7 the COO entry, bit 8 "from a beat with s_count
//! > L", bit 9 "index above the stream's previous entry's", bit 10 "index
//! in the current beat".

use super::deq_aligner_thr::DeqAlignerThr;
use super::deq_aligner_window::DeqAlignerWindow;
use super::deq_input::bits_for;
use super::deq_or_tree::DeqOrTree;
use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use rust_hdl::prelude::*;
use sim::oaken::params::{OakenParams, SEGMENT};

#[derive(LogicBlock)]
pub struct DeqAligner {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the pipeline after K0 advances (K0's beat is taken when valid)
    pub adv: Signal<In, Bit>,
    /// a dense beat is waiting in the dense FIFO
    pub d_avail: Signal<In, Bit>,
    /// a sparse beat is waiting in the sparse head register
    pub s_avail: Signal<In, Bit>,
    /// dense beats held in the dense FIFO
    pub d_occ: Signal<In, Bits<8>>,
    /// the dense head's segment counts
    pub h_cnt: Vec<Signal<In, Bits<8>>>,
    /// segment 0's count of the dense beat behind the head
    pub h_cnt1: Signal<In, Bits<8>>,
    /// segment 0's count of the entering dense beat (the engine's d_counts)
    pub w_cnt0: Signal<In, Bits<8>>,
    /// the dense head's list length (its counts' sum)
    pub h_n: Signal<In, Bits<16>>,
    /// the dense head: a count is over its segment's length
    pub h_bad: Signal<In, Bit>,
    /// the sparse head beat's flagged entries (see deq_input)
    pub shead: Vec<Signal<In, Bits<11>>>,
    /// the dense head is taken into K0 with the window's first entries
    pub fire: Signal<Out, Bit>,
    /// the sparse head beat joins the window (the sparse FIFO pops)
    pub app: Signal<Out, Bit>,
    /// per window entry j < L: taken into this beat (a prefix)
    pub take: Vec<Signal<Out, Bit>>,
    /// the window's first L entries (bits 0-7)
    pub ent: Vec<Signal<Out, Bits<8>>>,
    /// K0 holds a beat to pass on (valid and not holding)
    pub k_valid: Signal<Out, Bit>,
    /// K0's beat is its record's first
    pub k_first: Signal<Out, Bit>,
    /// K0's beat is its record's last
    pub k_last: Signal<Out, Bit>,
    /// on K0's last beat: the record's list was malformed
    pub k_err: Signal<Out, Bit>,

    wnd: DeqAlignerWindow,
    // ---- K0: the aligner's output register (its flags) ----
    k0_v: Reg<Bit>,
    k0_hold: Reg<Bit>,
    k0_first: Reg<Bit>,
    k0_last: Reg<Bit>,
    k0_err: Reg<Bit>,
    k0_take: Signal<Local, Bit>,
    k0_free: Signal<Local, Bit>,
    // balanced OR trees of L + 1 leaves: the values chosen by the count
    // taken or dropped (rem, srsel, dsk) and the thermometer tests at the
    // count (lt_n, le_n, lt_s, le_s); bl holds a bit leaf
    rem_tree: DeqOrTree<16>,
    srsel_tree: DeqOrTree<8>,
    dsk_tree: DeqOrTree<8>,
    lt_n_tree: DeqOrTree<1>,
    le_n_tree: DeqOrTree<1>,
    lt_s_tree: DeqOrTree<1>,
    le_s_tree: DeqOrTree<1>,
    bl: Signal<Local, Bit>,
    // the thermometer thr (deq_aligner_thr)
    thb: DeqAlignerThr,
    // entries of the current segment's count range not yet taken (also
    // kept as the thermometer of deq_aligner_thr; the record's first count
    // at its first beat), and "an earlier segment left entries untaken"
    // (nothing more is taken; 0 at a first beat); the record's list
    // entries still to take (need) and, after a malformed last beat, to
    // drop (skip); the beat within the record
    segrem: Reg<Bits<8>>,
    behind: Reg<Bit>,
    need: Reg<Bits<16>>,
    skip: Reg<Bits<16>>,
    beat: Reg<Bits<16>>,
    // beat == 0 and beat == beats - 1, registered
    fb: Reg<Bit>,
    lb: Reg<Bit>,
    nbeat: Signal<Local, Bits<16>>,
    cnt_r: Vec<Reg<Bits<8>>>,
    err_r: Reg<Bit>,
    lt_n: Signal<Local, Bit>,
    le_n: Signal<Local, Bit>,
    lt_s: Signal<Local, Bit>,
    le_s: Signal<Local, Bit>,
    bws_n: Signal<Local, Bits<8>>,
    // the take condition: ok[j] entry j's own, wt[j] its thermometer
    // factors, px* the prefix AND's levels, oh the count taken (one-hot);
    // dth/doh the same for the entries dropped
    wt: Vec<Signal<Local, Bit>>,
    ok: Vec<Signal<Local, Bit>>,
    px1: Vec<Signal<Local, Bit>>,
    px2: Vec<Signal<Local, Bit>>,
    px4: Vec<Signal<Local, Bit>>,
    px8: Vec<Signal<Local, Bit>>,
    px16: Vec<Signal<Local, Bit>>,
    oh: Vec<Signal<Local, Bit>>,
    dth: Vec<Signal<Local, Bit>>,
    doh: Vec<Signal<Local, Bit>>,
    dsk: Signal<Local, Bits<8>>,
    drop_all: Signal<Local, Bit>,
    first_b: Signal<Local, Bit>,
    last_b: Signal<Local, Bit>,
    cm: Vec<Signal<Local, Bits<8>>>,
    need_cur: Signal<Local, Bits<16>>,
    sr_cur: Signal<Local, Bits<8>>,
    bh_cur: Signal<Local, Bit>,
    bws: Signal<Local, Bits<8>>,
    complete: Signal<Local, Bit>,
    cmp_n: Signal<Local, Bit>,
    // "list length <= window count" from decoded lengths: z (no bit from
    // bits_for(2L) up) and the one-hot k (the low bits equal k, 0..=2L).
    // need keeps its decode in registers beside it, stored with z and k = 0
    // inverted so that the reset state is need = 0's; the FIFO head's is
    // decoded from its register.
    npd_z: Reg<Bit>,
    npd_k: Vec<Reg<Bit>>,
    rpd_z: Signal<Local, Bit>,
    rpd_k: Vec<Signal<Local, Bit>>,
    cpd_z: Signal<Local, Bit>,
    cpd_k: Vec<Signal<Local, Bit>>,
    pd_hi: Constant<Bits<16>>,
    pd_lo: Constant<Bits<16>>,
    rem: Signal<Local, Bits<16>>,
    slo: Signal<Local, Bits<9>>,
    shi: Signal<Local, Bits<8>>,
    rem_nz: Signal<Local, Bit>,
    rem_z: Signal<Local, Bit>,
    srsel: Signal<Local, Bits<8>>,
    seg_done: Signal<Local, Bit>,
    bad_take: Signal<Local, Bit>,
    next_seg: Signal<Local, Bit>,
    nseg: Signal<Local, Bits<16>>,
    ncnt: Signal<Local, Bits<8>>,
    err_fin: Signal<Local, Bit>,
    // constants
    eight16: Constant<Bits<16>>,
    kc8: Vec<Constant<Bits<8>>>,
    kc16: Vec<Constant<Bits<16>>>,
    seg_c: Vec<Constant<Bits<16>>>,
    bws_mask: Constant<Bits<8>>,
    seg_shift: Constant<Bits<16>>,
    last_beat: Constant<Bits<16>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,

    // lanes L, window entries 2L, window counts 2L + 1, segments
    _lanes: usize,
    _w2: usize,
    _wp1: usize,
    _segs: usize,
    // min(L, 2^k): the take prefix's levels
    _m1: usize,
    _m2: usize,
    _m4: usize,
    _m8: usize,
    _m16: usize,
    _m32: usize,
}

impl DeqAligner {
    /// The aligner for `p.lanes` lanes, `p.head_beats()` beats and
    /// `p.segments()` segments per record.
    pub fn new(p: &OakenParams) -> Self {
        let l = p.lanes;
        let s = p.segments();
        let beats = p.head_beats();
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let per_seg = SEGMENT / l;
        let ones = |b: usize| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        // lengths are compared with window counts 0..=2L: bits_for(2L) bits
        let pdw = bits_for(2 * l);
        DeqAligner {
            clock: Default::default(),
            reset: Default::default(),
            adv: Default::default(),
            d_avail: Default::default(),
            s_avail: Default::default(),
            d_occ: Default::default(),
            h_cnt: sigs(s),
            h_cnt1: Default::default(),
            w_cnt0: Default::default(),
            h_n: Default::default(),
            h_bad: Default::default(),
            shead: sigs(l),
            fire: Default::default(),
            app: Default::default(),
            take: sigs(l),
            ent: sigs(l),
            k_valid: Default::default(),
            k_first: Default::default(),
            k_last: Default::default(),
            k_err: Default::default(),
            wnd: DeqAlignerWindow::new(l),
            thb: DeqAlignerThr::new(l),
            k0_v: Reg::default(),
            k0_hold: Reg::default(),
            k0_first: Reg::default(),
            k0_last: Reg::default(),
            k0_err: Reg::default(),
            k0_take: Default::default(),
            k0_free: Default::default(),
            rem_tree: DeqOrTree::new(l + 1),
            srsel_tree: DeqOrTree::new(l + 1),
            dsk_tree: DeqOrTree::new(l + 1),
            lt_n_tree: DeqOrTree::new(l + 1),
            le_n_tree: DeqOrTree::new(l + 1),
            lt_s_tree: DeqOrTree::new(l + 1),
            le_s_tree: DeqOrTree::new(l + 1),
            bl: Default::default(),
            segrem: Reg::default(),
            behind: Reg::default(),
            need: Reg::default(),
            skip: Reg::default(),
            beat: Reg::default(),
            fb: Reg::new(true),
            lb: Reg::new(beats == 1),
            nbeat: Default::default(),
            cnt_r: regs(s),
            err_r: Reg::default(),
            lt_n: Default::default(),
            le_n: Default::default(),
            lt_s: Default::default(),
            le_s: Default::default(),
            bws_n: Default::default(),
            wt: sigs(l),
            ok: sigs(l),
            px1: sigs(l),
            px2: sigs(l),
            px4: sigs(l),
            px8: sigs(l),
            px16: sigs(l),
            oh: sigs(l + 1),
            dth: sigs(l),
            doh: sigs(l + 1),
            dsk: Default::default(),
            drop_all: Default::default(),
            first_b: Default::default(),
            last_b: Default::default(),
            cm: sigs(s),
            need_cur: Default::default(),
            sr_cur: Default::default(),
            bh_cur: Default::default(),
            bws: Default::default(),
            complete: Default::default(),
            cmp_n: Default::default(),
            npd_z: Reg::default(),
            npd_k: regs(2 * l + 1),
            rpd_z: Default::default(),
            rpd_k: sigs(2 * l + 1),
            cpd_z: Default::default(),
            cpd_k: sigs(2 * l + 1),
            pd_hi: c(ones(16) & !ones(pdw)),
            pd_lo: c(ones(pdw)),
            rem: Default::default(),
            slo: Default::default(),
            shi: Default::default(),
            rem_nz: Default::default(),
            rem_z: Default::default(),
            srsel: Default::default(),
            seg_done: Default::default(),
            bad_take: Default::default(),
            next_seg: Default::default(),
            nseg: Default::default(),
            ncnt: Default::default(),
            err_fin: Default::default(),
            eight16: c(8),
            kc8: (0..=l).map(|i| c(i as u64)).collect(),
            kc16: (0..=2 * l).map(|i| c(i as u64)).collect(),
            seg_c: (0..s).map(|i| c(i as u64)).collect(),
            bws_mask: c((per_seg - 1) as u64),
            seg_shift: c(per_seg.trailing_zeros() as u64),
            last_beat: c((beats - 1) as u64),
            one8: c(1),
            zero8: c(0),
            zero16: c(0),
            one16: c(1),
            _lanes: l,
            _w2: 2 * l,
            _wp1: 2 * l + 1,
            _segs: s,
            _m1: l.min(1),
            _m2: l.min(2),
            _m4: l.min(4),
            _m8: l.min(8),
            _m16: l.min(16),
            _m32: l.min(32),
        }
    }
}

impl Logic for DeqAligner {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, segrem, behind, need, npd_z, skip, beat, fb, lb, err_r, k0_v, k0_hold, k0_first, k0_last, k0_err);
        self.segrem.reset.next = self.reset.val();
        self.behind.reset.next = self.reset.val();
        self.need.reset.next = self.reset.val();
        self.npd_z.reset.next = self.reset.val();
        self.skip.reset.next = self.reset.val();
        self.beat.reset.next = self.reset.val();
        self.fb.reset.next = self.reset.val();
        self.lb.reset.next = self.reset.val();
        self.err_r.reset.next = self.reset.val();
        self.k0_v.reset.next = self.reset.val();
        self.k0_hold.reset.next = self.reset.val();
        self.k0_first.reset.next = self.reset.val();
        self.k0_last.reset.next = self.reset.val();
        self.k0_err.reset.next = self.reset.val();
        // K0 passes its beat on when the pipeline after it advances
        self.k0_take.next = self.k0_v.q.val() & !self.k0_hold.q.val() & self.adv.val();
        self.k0_free.next = !self.k0_v.q.val() | self.k0_take.val();

        // ---------------- aligner (spec §4.3) ----------------
        self.first_b.next = self.fb.q.val();
        self.last_b.next = self.lb.q.val();
        self.nbeat.next = self.beat.q.val() + self.one16.val();
        if self.last_b.val() {
            self.nbeat.next = self.zero16.val();
        }
        // the record's counts and list length: from the dense FIFO's head at
        // its first beat
        for s in 0..self._segs {
            self.cm[s].next = self.cnt_r[s].q.val();
            if self.first_b.val() {
                self.cm[s].next = self.h_cnt[s].val();
            }
        }
        self.need_cur.next = self.need.q.val();
        self.sr_cur.next = self.segrem.q.val();
        if self.first_b.val() {
            self.need_cur.next = self.h_n.val();
            self.sr_cur.next = self.h_cnt[0].val();
        }
        self.bh_cur.next = self.behind.q.val();
        self.bws.next = bit_cast::<8, 16>(self.beat.q.val()) & self.bws_mask.val();

        // entries taken into this beat: a prefix of the window (§4.3), never
        // past the segment's count range; ok[j] is entry j's own condition
        // (bit 9: its index is above its predecessor's), take[j] = ok[0] &
        // ... & ok[j]
        for j in 0..self._lanes {
            self.ok[j].next =
                self.wnd.wval_q[j].val() & self.thb.thr_q[j].val() & !self.behind.q.val() & self.wnd.win_q[j].val().get_bit(10);
        }
        for j in 1..self._lanes {
            self.ok[j].next = self.ok[j].val() & self.wnd.win_q[j].val().get_bit(9);
        }
        // prefix AND in log2(L) levels. wval and thr are thermometers and
        // behind is common to all, so their prefix is themselves: only the
        // stored per-entry bits (wc) go through the prefix, which thus starts
        // at registers, and the rest (wt, early) joins at its end
        for j in 0..self._lanes {
            self.wt[j].next = self.wnd.wval_q[j].val() & self.thb.thr_q[j].val() & !self.behind.q.val();
        }
        for j in 0..self._m1 {
            self.px1[j].next = self.wnd.wc_q[j].val();
        }
        for j in self._m1..self._lanes {
            self.px1[j].next = self.wnd.wc_q[j].val() & self.wnd.wc_q[j - 1].val();
        }
        for j in 0..self._m2 {
            self.px2[j].next = self.px1[j].val();
        }
        for j in self._m2..self._lanes {
            self.px2[j].next = self.px1[j].val() & self.px1[j - 2].val();
        }
        for j in 0..self._m4 {
            self.px4[j].next = self.px2[j].val();
        }
        for j in self._m4..self._lanes {
            self.px4[j].next = self.px2[j].val() & self.px2[j - 4].val();
        }
        for j in 0..self._m8 {
            self.px8[j].next = self.px4[j].val();
        }
        for j in self._m8..self._lanes {
            self.px8[j].next = self.px4[j].val() & self.px4[j - 8].val();
        }
        for j in 0..self._m16 {
            self.px16[j].next = self.px8[j].val();
        }
        for j in self._m16..self._lanes {
            self.px16[j].next = self.px8[j].val() & self.px8[j - 16].val();
        }
        for j in 0..self._m32 {
            self.take[j].next = self.px16[j].val() & self.wt[j].val();
        }
        for j in self._m32..self._lanes {
            self.take[j].next = self.px16[j].val() & self.px16[j - 32].val() & self.wt[j].val();
        }
        // the count taken, one-hot: oh[k] for k entries
        self.oh[0].next = !self.take[0].val();
        for k in 1..self._lanes {
            self.oh[k].next = self.take[k - 1].val() & !self.take[k].val();
        }
        for k in self._lanes..(self._lanes + 1) {
            self.oh[k].next = self.take[k - 1].val();
        }
        self.bad_take.next = false;
        for j in 0..self._lanes {
            if self.take[j].val() & self.wnd.win_q[j].val().get_bit(8) {
                self.bad_take.next = true;
            }
        }
        // what depends on the count is chosen by the one-hot from values
        // ready early: the record's and the segment's remaining entries,
        // and whether they reach zero
        for k in 0..(self._lanes + 1) {
            self.rem_tree.leaf[k].next = self.zero16.val();
            if self.oh[k].val() {
                self.rem_tree.leaf[k].next = self.need_cur.val() - self.kc16[k].val();
            }
        }
        self.rem.next = self.rem_tree.y.val();
        for k in 0..(self._lanes + 1) {
            self.srsel_tree.leaf[k].next = self.zero8.val();
            if self.oh[k].val() {
                self.srsel_tree.leaf[k].next = self.sr_cur.val() - self.kc8[k].val();
            }
        }
        self.srsel.next = self.srsel_tree.y.val();
        // t == n as (t <= n) & !(t < n), each free of the take prefix: for
        // a thermometer X, X[t] = X[L] | OR_i (!ok[i] & X[i]) (the first i
        // with !ok[i] is t, and X[i] for i > t implies X[t])
        for i in 0..self._lanes {
            self.bl.next = !self.ok[i].val() & (self.kc16[i].val() < self.need_cur.val());
            self.lt_n_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bl.next = self.kc16[i].val() < self.need_cur.val();
            self.lt_n_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        self.lt_n.next = self.lt_n_tree.y.val().any();
        for i in 0..self._m1 {
            self.bl.next = !self.ok[i].val();
            self.le_n_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._m1..self._lanes {
            self.bl.next = !self.ok[i].val() & (self.kc16[i - 1].val() < self.need_cur.val());
            self.le_n_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bl.next = self.kc16[i - 1].val() < self.need_cur.val();
            self.le_n_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        self.le_n.next = self.le_n_tree.y.val().any();
        self.rem_z.next = self.le_n.val() & !self.lt_n.val();
        for i in 0..self._lanes {
            self.bl.next = !self.ok[i].val() & (self.kc8[i].val() < self.sr_cur.val());
            self.lt_s_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bl.next = self.kc8[i].val() < self.sr_cur.val();
            self.lt_s_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        self.lt_s.next = self.lt_s_tree.y.val().any();
        for i in 0..self._m1 {
            self.bl.next = !self.ok[i].val();
            self.le_s_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._m1..self._lanes {
            self.bl.next = !self.ok[i].val() & (self.kc8[i - 1].val() < self.sr_cur.val());
            self.le_s_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bl.next = self.kc8[i - 1].val() < self.sr_cur.val();
            self.le_s_tree.leaf[i].next = bit_cast::<1, 1>(self.bl.val().into());
        }
        self.le_s.next = self.le_s_tree.y.val().any();
        self.seg_done.next = self.le_s.val() & !self.lt_s.val();
        self.rem_nz.next = !self.rem_z.val();

        // L entries in the window hold every entry of one beat; fewer do
        // when they are the rest of the record's list (window count from the
        // valid thermometer). The length (the FIFO head's at a first beat,
        // need's otherwise) comes decoded, need's from registers, the head's
        // from its register, the first-beat flag choosing between the two
        // decodes; the comparison is then one AND-OR. A 16-bit equality per
        // window count, as first written, was the head of the 32-lane
        // engine's critical path into fire.
        self.cpd_z.next = !self.npd_z.q.val();
        for k in 0..self._wp1 {
            self.cpd_k[k].next = self.npd_k[k].q.val();
        }
        self.cpd_k[0].next = !self.npd_k[0].q.val();
        if self.first_b.val() {
            self.cpd_z.next = (self.h_n.val() & self.pd_hi.val()) == self.zero16.val();
            for k in 0..self._wp1 {
                self.cpd_k[k].next = (self.h_n.val() & self.pd_lo.val()) == self.kc16[k].val();
            }
        }
        self.cmp_n.next = self.cpd_k[0].val();
        for k in 1..self._wp1 {
            if self.cpd_k[k].val() & self.wnd.wval_q[k - 1].val() {
                self.cmp_n.next = true;
            }
        }
        self.complete.next = self.cpd_z.val() & self.cmp_n.val();
        for k in (self._lanes - 1)..self._lanes {
            self.fire.next = self.d_avail.val() & self.k0_free.val() & (self.wnd.wval_q[k].val() | self.complete.val());
        }
        // after a last beat with entries untaken (malformed), K0 holds it
        // while they are dropped, min(skip, L, window) a cycle
        for j in 0..self._lanes {
            self.dth[j].next = self.wnd.wval_q[j].val() & (self.kc16[j].val() < self.skip.q.val());
        }
        self.doh[0].next = !self.dth[0].val();
        for k in 1..self._lanes {
            self.doh[k].next = self.dth[k - 1].val() & !self.dth[k].val();
        }
        for k in self._lanes..(self._lanes + 1) {
            self.doh[k].next = self.dth[k - 1].val();
        }
        for k in 0..(self._lanes + 1) {
            self.dsk_tree.leaf[k].next = self.zero8.val();
            if self.doh[k].val() {
                self.dsk_tree.leaf[k].next = self.kc8[k].val();
            }
        }
        self.dsk.next = self.dsk_tree.y.val();
        // all of the remainder drops this cycle: skip <= min(L, window)
        self.drop_all.next = self.skip.q.val() == self.zero16.val();
        for k in 1..(self._lanes + 1) {
            if (self.skip.q.val() == self.kc16[k].val()) & self.wnd.wval_q[k - 1].val() {
                self.drop_all.next = true;
            }
        }

        // bit 10 of every entry: its index lies in the beat that is current
        // after this edge (the next one when a beat is taken)
        self.bws_n.next = self.bws.val();
        if self.fire.val() {
            self.bws_n.next = bit_cast::<8, 16>(self.nbeat.val()) & self.bws_mask.val();
        }
        // the window and its shift (deq_aligner_window)
        self.wnd.clock.next = self.clock.val();
        self.wnd.reset.next = self.reset.val();
        self.wnd.fire.next = self.fire.val();
        self.wnd.hold.next = self.k0_hold.q.val();
        self.wnd.s_avail.next = self.s_avail.val();
        self.wnd.bws_n.next = self.bws_n.val();
        for k in 0..(self._lanes + 1) {
            self.wnd.oh[k].next = self.oh[k].val();
            self.wnd.doh[k].next = self.doh[k].val();
        }
        for p in 0..self._lanes {
            self.wnd.ok[p].next = self.ok[p].val();
            self.wnd.shead[p].next = self.shead[p].val();
        }
        self.app.next = self.wnd.app_o.val();
        // skip - dsk (dsk <= L): the high byte chosen by the low byte's borrow
        self.slo.next = bit_cast::<9, 8>(self.skip.q.val().get_bits::<8>(0)) - bit_cast::<9, 8>(self.dsk.val());
        self.shi.next = self.skip.q.val().get_bits::<8>(8);
        if self.slo.val().get_bit(8) {
            self.shi.next = self.skip.q.val().get_bits::<8>(8) - self.one8.val();
        }
        self.skip.en.next = true;
        self.skip.d.next = self.skip.q.val();
        if self.k0_hold.q.val() {
            self.skip.d.next = (bit_cast::<16, 8>(self.shi.val()) << self.eight16.val())
                | bit_cast::<16, 8>(self.slo.val().get_bits::<8>(0));
        }
        if self.fire.val() & self.last_b.val() {
            self.skip.d.next = self.rem.val();
        }
        self.need.en.next = self.fire.val();
        self.need.d.next = self.rem.val();
        self.rpd_z.next = (self.rem.val() & self.pd_hi.val()) == self.zero16.val();
        for k in 0..self._wp1 {
            self.rpd_k[k].next = (self.rem.val() & self.pd_lo.val()) == self.kc16[k].val();
        }
        self.npd_z.en.next = self.fire.val();
        self.npd_z.d.next = !self.rpd_z.val();
        for k in 0..self._wp1 {
            self.npd_k[k].clock.next = self.clock.val();
            self.npd_k[k].reset.next = self.reset.val();
            self.npd_k[k].en.next = self.fire.val();
            self.npd_k[k].d.next = self.rpd_k[k].val();
        }
        self.npd_k[0].d.next = !self.rpd_k[0].val();

        // the record's sticky error so far (counts, flagged entries taken),
        // and the verdict at its last beat
        self.err_fin.next = self.err_r.q.val() | self.bad_take.val();
        if self.first_b.val() {
            self.err_fin.next = self.err_fin.val() | self.h_bad.val();
        }
        if self.last_b.val() {
            self.err_fin.next = self.err_fin.val() | self.rem_nz.val();
        }
        self.err_r.en.next = self.fire.val();
        self.err_r.d.next = self.err_fin.val();
        if self.last_b.val() {
            self.err_r.d.next = false;
        }

        self.beat.en.next = self.fire.val();
        self.beat.d.next = self.nbeat.val();
        self.fb.en.next = self.fire.val();
        self.fb.d.next = self.nbeat.val() == self.zero16.val();
        self.lb.en.next = self.fire.val();
        self.lb.d.next = self.nbeat.val() == self.last_beat.val();
        // the next beat's segment: the rest of this one's count range, or
        // the next segment's count (with every entry of this one taken)
        self.next_seg.next = self.bws.val() == self.bws_mask.val();
        self.nseg.next = (self.beat.q.val() + self.one16.val()) >> self.seg_shift.val();
        self.ncnt.next = self.zero8.val();
        for s in 0..self._segs {
            if self.nseg.val() == self.seg_c[s].val() {
                self.ncnt.next = self.cm[s].val();
            }
        }
        self.segrem.en.next = self.fire.val();
        self.behind.en.next = self.fire.val();
        self.segrem.d.next = self.srsel.val();
        self.behind.d.next = self.bh_cur.val();
        if self.next_seg.val() {
            self.segrem.d.next = self.ncnt.val();
            if !self.seg_done.val() {
                self.behind.d.next = true;
            }
        }
        if self.last_b.val() {
            self.behind.d.next = false;
        }
        // thr for the beat current after this edge (deq_aligner_thr)
        self.thb.clock.next = self.clock.val();
        self.thb.reset.next = self.reset.val();
        self.thb.fire.next = self.fire.val();
        self.thb.first_b.next = self.first_b.val();
        self.thb.last_b.next = self.last_b.val();
        self.thb.next_seg.next = self.next_seg.val();
        self.thb.sr_cur.next = self.sr_cur.val();
        self.thb.ncnt.next = self.ncnt.val();
        self.thb.d_occ.next = self.d_occ.val();
        self.thb.h_cnt0.next = self.h_cnt[0].val();
        self.thb.h_cnt1.next = self.h_cnt1.val();
        self.thb.w_cnt0.next = self.w_cnt0.val();
        for j in 0..self._lanes {
            self.thb.ok[j].next = self.ok[j].val();
        }
        for s in 0..self._segs {
            self.cnt_r[s].clock.next = self.clock.val();
            self.cnt_r[s].reset.next = self.reset.val();
            self.cnt_r[s].en.next = self.fire.val() & self.first_b.val();
            self.cnt_r[s].d.next = self.cm[s].val();
        }

        // ---------------- K0 ----------------
        self.k0_v.en.next = true;
        self.k0_v.d.next = self.fire.val() | (self.k0_v.q.val() & !self.k0_take.val());
        self.k0_hold.en.next = true;
        self.k0_hold.d.next = self.k0_hold.q.val();
        if self.fire.val() {
            self.k0_hold.d.next = self.last_b.val() & self.rem_nz.val();
        }
        if self.k0_hold.q.val() & self.drop_all.val() {
            self.k0_hold.d.next = false;
        }
        self.k0_err.en.next = true;
        self.k0_err.d.next = self.k0_err.q.val();
        if self.fire.val() {
            self.k0_err.d.next = self.err_fin.val() & self.last_b.val();
        }
        self.k0_first.en.next = self.fire.val();
        self.k0_first.d.next = self.first_b.val();
        self.k0_last.en.next = self.fire.val();
        self.k0_last.d.next = self.last_b.val();

        for p in 0..self._lanes {
            self.ent[p].next = self.wnd.win_q[p].val().get_bits::<8>(0);
        }
        self.k_valid.next = self.k0_v.q.val() & !self.k0_hold.q.val();
        self.k_first.next = self.k0_first.q.val();
        self.k_last.next = self.k0_last.q.val();
        self.k_err.next = self.k0_err.q.val();
    }
}
