//! Oaken dequantization engine.
//! Paper: Oaken (ISCA 2025) §5.2 "Dequantization engine" (Figure 9(b)):
//! inlier and outlier dequantizers, zero-insert of the COO entries, buffers
//! aligning the dense and sparse paths, OR-merge. Spec: docs/spec.md §4
//! (interface §4.2, alignment and malformed lists §4.3, decoding §4.4,
//! structure §4.5) on top of §2.9-§2.10.
//!
//! Dense beats and sparse beats enter their own FIFOs. The aligner keeps the
//! next entries of the one continuous sparse stream in a window of up to 2L
//! entries and each cycle takes one dense beat's entries off the window's
//! front (§4.3), never past the record's count sum, so the next record's
//! entries stay in the window; an untaken remainder is dropped after the
//! record's last beat, at most L entries a cycle. Its only loop is window ->
//! take count -> window. Everything after it is a stall-all pipeline:
//! zero-insert, group and code select, base and partial products, add and
//! clamp, and the three-stage rounder.

use super::table::ThresholdTable;
use super::classify::Sanitize;
use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::fp16::{Fp16ToUnits, UnitsToFp16, FX};
use crate::prim::reg::Reg;
use crate::prim::zero_insert::ZeroInsert;
use rust_hdl::prelude::*;
use sim::oaken::params::{MiddleMode, OakenParams, SEGMENT};

/// Signed width of the decode datapath: |x'| < 2^50 for any metadata.
pub const DW: usize = 56;
/// Input FIFO depths (dense, sparse).
pub const FIFO_DEPTH: usize = 4;

/// Sizes of one engine instance.
#[derive(Clone, Debug)]
pub struct DeqGeometry {
    pub lanes: usize,
    pub beats: usize,
    pub segments: usize,
    /// Cycles from a first dense beat's acceptance to its first output beat,
    /// with its sparse record already waiting and the output always ready.
    pub latency: usize,
}

impl DeqGeometry {
    pub fn new(p: &OakenParams) -> DeqGeometry {
        // FIFO (1), aligner register K0 (1), K1..K4 (4), rounder (3)
        DeqGeometry { lanes: p.lanes, beats: p.head_beats(), segments: p.segments(), latency: 9 }
    }
}

// Decode selections (base, step, direction), used as literal indices:
// 0 outer upper, 1 outer lower, 2 middle plain, 3 middle upper, 4 middle
// lower, 5 inner.

#[derive(LogicBlock)]
pub struct OakenDequantizer<const IB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub tw_valid: Signal<In, Bit>,
    pub tw_layer: Signal<In, Bits<8>>,
    pub tw_kv: Signal<In, Bit>,
    pub tw_data: Signal<In, Bits<64>>,
    pub tw_done: Signal<Out, Bit>,
    pub tw_err: Signal<Out, Bits<2>>,
    pub d_valid: Signal<In, Bit>,
    pub d_ready: Signal<Out, Bit>,
    pub d_dense: Vec<Signal<In, Bits<IB>>>,
    pub d_meta: Vec<Signal<In, Bits<8>>>,
    pub d_counts: Vec<Signal<In, Bits<8>>>,
    pub d_layer: Signal<In, Bits<8>>,
    pub d_kv: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_coo: Vec<Signal<In, Bits<8>>>,
    pub s_count: Signal<In, Bits<8>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_data: Vec<Signal<Out, Bits<16>>>,
    pub out_first: Signal<Out, Bit>,
    pub out_last: Signal<Out, Bit>,
    pub out_err: Signal<Out, Bit>,
    pub out_layer_oob: Signal<Out, Bit>,

    thr_tab: ThresholdTable,
    // ---- input FIFOs ----
    d_push: Signal<Local, Bit>,
    s_push: Signal<Local, Bit>,
    d_occ: Reg<Bits<8>>,
    s_occ: Reg<Bits<8>>,
    d_rdy: Reg<Bit>,
    s_rdy: Reg<Bit>,
    d_occ_n: Signal<Local, Bits<8>>,
    s_occ_n: Signal<Local, Bits<8>>,
    dq: FifoCtrl,
    dq_dense: Vec<FifoMem<IB>>,
    dq_meta: Vec<FifoMem<8>>,
    dq_cnt: Vec<FifoMem<8>>,
    dq_n: FifoMem<16>,
    n_in: Signal<Local, Bits<16>>,
    t8: Signal<Local, Bits<8>>,
    dq_thr: FifoMem<64>,
    dq_oob: FifoMem<1>,
    sq: FifoCtrl,
    sq_coo: Vec<FifoMem<8>>,
    sq_cnt: FifoMem<8>,
    // ---- aligner ----
    // window entries: bit 8 = from a beat with s_count > L (§4.3 cond. 3)
    win: Vec<Reg<Bits<9>>>,
    wcnt: Reg<Bits<8>>,
    need: Reg<Bits<16>>,
    skip: Reg<Bits<16>>,
    beat: Reg<Bits<16>>,
    used: Reg<Bits<16>>,
    seg_lo: Reg<Bits<16>>,
    seg_hi: Reg<Bits<16>>,
    cnt_r: Vec<Reg<Bits<8>>>,
    err_r: Reg<Bit>,
    d_avail: Signal<Local, Bit>,
    s_avail: Signal<Local, Bit>,
    h_cnt: Signal<Local, Bits<8>>,
    h_bad: Signal<Local, Bit>,
    in_view: Signal<Local, Bit>,
    hm: Vec<Signal<Local, Bits<9>>>,
    vv: Vec<Signal<Local, Bits<9>>>,
    vcnt: Signal<Local, Bits<8>>,
    need_cur: Signal<Local, Bits<16>>,
    rem: Signal<Local, Bits<16>>,
    sk: Signal<Local, Bits<8>>,
    dsk: Signal<Local, Bits<8>>,
    bad_take: Signal<Local, Bit>,
    complete: Signal<Local, Bit>,
    first_b: Signal<Local, Bit>,
    last_b: Signal<Local, Bit>,
    cm: Vec<Signal<Local, Bits<8>>>,
    lo_cur: Signal<Local, Bits<16>>,
    hi_cur: Signal<Local, Bits<16>>,
    cnt_bad: Signal<Local, Bit>,
    bws: Signal<Local, Bits<8>>,
    gidx: Vec<Signal<Local, Bits<16>>>,
    idx: Vec<Signal<Local, Bits<8>>>,
    take: Vec<Signal<Local, Bit>>,
    ntake: Signal<Local, Bits<8>>,
    cshift: Signal<Local, Bits<8>>,
    rn: Vec<Signal<Local, Bits<9>>>,
    lane_mask: Vec<Signal<Local, Bit>>,
    fire: Signal<Local, Bit>,
    adv: Signal<Local, Bit>,
    k0_take: Signal<Local, Bit>,
    k0_free: Signal<Local, Bit>,
    next_seg: Signal<Local, Bit>,
    nseg: Signal<Local, Bits<16>>,
    ncnt: Signal<Local, Bits<8>>,
    err_fin: Signal<Local, Bit>,
    tmp16: Signal<Local, Bits<16>>,
    // ---- K0: the aligner's output register ----
    k0_v: Reg<Bit>,
    k0_hold: Reg<Bit>,
    k0_first: Reg<Bit>,
    k0_last: Reg<Bit>,
    k0_err: Reg<Bit>,
    k0_oob: Reg<Bit>,
    k0_dense: Vec<Reg<Bits<IB>>>,
    k0_ent: Vec<Reg<Bits<8>>>,
    k0_mask: Vec<Reg<Bit>>,
    k0_meta: Vec<Reg<Bits<8>>>,
    k0_thr: Reg<Bits<64>>,
    // ---- K1: entries in their lanes; token fields as magnitude and sign ----
    zi: ZeroInsert<8>,
    mv: Signal<Local, Bit>,
    san: Vec<Sanitize>,
    cvt: Vec<Fp16ToUnits>,
    fld: Vec<Signal<Local, Bits<16>>>,
    k1_mag: Vec<Reg<Bits<FX>>>,
    k1_neg: Vec<Reg<Bit>>,
    k1_has: Vec<Reg<Bit>>,
    k1_ent: Vec<Reg<Bits<8>>>,
    k1_dense: Vec<Reg<Bits<IB>>>,
    k1_oob: Reg<Bit>,
    // ---- K2: per lane selection and code; token values signed ----
    tok: Vec<Reg<Bits<DW>>>,
    tok_oob: Reg<Bit>,
    k2_sel: Vec<Reg<Bits<4>>>,
    k2_q: Vec<Reg<Bits<16>>>,
    sel_d: Signal<Local, Bits<4>>,
    q_d: Signal<Local, Bits<16>>,
    slot16: Signal<Local, Bits<16>>,
    dtmp: Signal<Local, Bits<IB>>,
    mlo: Signal<Local, Bits<8>>,
    mhi: Signal<Local, Bits<8>>,
    eight16: Constant<Bits<16>>,
    ent_grp: Signal<Local, Bit>,
    ent_hi: Signal<Local, Bit>,
    mag_t: Signal<Local, Bits<FX>>,
    ext: Signal<Local, Bits<DW>>,
    // ---- K3: base, direction and two partial sums of q * step ----
    base: Vec<Signal<Local, Bits<DW>>>,
    k3_base: Vec<Reg<Bits<DW>>>,
    k3_sub: Vec<Reg<Bit>>,
    k3_plo: Vec<Reg<Bits<DW>>>,
    k3_phi: Vec<Reg<Bits<DW>>>,
    stp: Signal<Local, Bits<DW>>,
    qv: Signal<Local, Bits<16>>,
    acc_lo: Signal<Local, Bits<DW>>,
    acc_hi: Signal<Local, Bits<DW>>,
    // ---- K4: x' clamped to the rounder's range ----
    k4_x: Vec<Reg<Bits<FX>>>,
    xs: Signal<Local, Bits<DW>>,
    prod: Signal<Local, Bits<DW>>,
    // ---- rounder and beat flags along K1..out ----
    rnd: Vec<UnitsToFp16>,
    pv: Vec<Reg<Bit>>,
    pf: Vec<Reg<Bit>>,
    pl: Vec<Reg<Bit>>,
    pe: Vec<Reg<Bit>>,
    po: Vec<Reg<Bit>>,

    // constants
    kc8: Vec<Constant<Bits<8>>>,
    kc16: Vec<Constant<Bits<16>>>,
    seg_c: Vec<Constant<Bits<16>>>,
    seg_len: Vec<Constant<Bits<8>>>,
    thr_off: Vec<Constant<Bits<32>>>,
    bit_c: Vec<Constant<Bits<32>>>,
    sh_c: Vec<Constant<Bits<DW>>>,
    lanes8: Constant<Bits<8>>,
    lmask8: Constant<Bits<8>>,
    lshift8: Constant<Bits<8>>,
    bws_mask: Constant<Bits<8>>,
    seg_shift: Constant<Bits<16>>,
    last_beat: Constant<Bits<16>>,
    depth8: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    zero9: Constant<Bits<9>>,
    bad9: Constant<Bits<9>>,
    lanes16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    hi_bit16: Constant<Bits<16>>,
    mid_mask: Constant<Bits<16>>,
    mid_sel_lo: Constant<Bits<4>>,
    mid_sel_hi: Constant<Bits<4>>,
    mid_top: Constant<Bits<32>>,
    zero_dw: Constant<Bits<DW>>,
    sat_hi: Constant<Bits<DW>>,
    sat_lo: Constant<Bits<DW>>,
    sign_dw: Constant<Bits<32>>,
    sel_c: Vec<Constant<Bits<4>>>,
    rne: Constant<Bits<2>>,

    _lanes: usize,
    _w2: usize,
    _w3: usize,
    _segs: usize,
    _bytes: usize,
    _ob: usize,
    _lo_terms: usize,
    _stages: usize,
}

impl<const IB: usize> OakenDequantizer<IB> {
    pub fn new(p: &OakenParams) -> Self {
        p.validate().expect("parameters are validated by the generator");
        assert_eq!(p.inlier_bits as usize, IB);
        let l = p.lanes;
        let s = p.segments();
        let beats = p.head_beats();
        let ob = IB + 1;
        let bytes = 12;
        let mid_shifted = p.middle_mode == MiddleMode::Shifted;
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
        }
        fn sigs<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
            (0..n).map(|_| Default::default()).collect()
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        // flags after K1, K2, K3, K4 and the three rounder stages
        let stages = 7;
        let per_seg = SEGMENT / l;
        OakenDequantizer {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_data: Default::default(),
            tw_done: Default::default(),
            tw_err: Default::default(),
            d_valid: Default::default(),
            d_ready: Default::default(),
            d_dense: (0..l).map(|_| Default::default()).collect(),
            d_meta: (0..12).map(|_| Default::default()).collect(),
            d_counts: (0..s).map(|_| Default::default()).collect(),
            d_layer: Default::default(),
            d_kv: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_coo: (0..l).map(|_| Default::default()).collect(),
            s_count: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: (0..l).map(|_| Default::default()).collect(),
            out_first: Default::default(),
            out_last: Default::default(),
            out_err: Default::default(),
            out_layer_oob: Default::default(),
            thr_tab: ThresholdTable::new(p.layers),
            d_push: Default::default(),
            s_push: Default::default(),
            d_occ: Reg::default(),
            s_occ: Reg::default(),
            d_rdy: Reg::default(),
            s_rdy: Reg::default(),
            d_occ_n: Default::default(),
            s_occ_n: Default::default(),
            dq: FifoCtrl::new(FIFO_DEPTH),
            dq_dense: (0..l).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_meta: (0..12).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_cnt: (0..s).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_n: FifoMem::new(FIFO_DEPTH),
            n_in: Default::default(),
            t8: Default::default(),
            dq_thr: FifoMem::new(FIFO_DEPTH),
            dq_oob: FifoMem::new(FIFO_DEPTH),
            sq: FifoCtrl::new(FIFO_DEPTH),
            sq_coo: (0..l).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            sq_cnt: FifoMem::new(FIFO_DEPTH),
            win: regs(2 * l),
            wcnt: Reg::default(),
            need: Reg::default(),
            skip: Reg::default(),
            beat: Reg::default(),
            used: Reg::default(),
            seg_lo: Reg::default(),
            seg_hi: Reg::default(),
            cnt_r: regs(s),
            err_r: Reg::default(),
            d_avail: Default::default(),
            s_avail: Default::default(),
            h_cnt: Default::default(),
            h_bad: Default::default(),
            in_view: Default::default(),
            hm: sigs(3 * l),
            vv: sigs(3 * l),
            vcnt: Default::default(),
            need_cur: Default::default(),
            rem: Default::default(),
            sk: Default::default(),
            dsk: Default::default(),
            bad_take: Default::default(),
            complete: Default::default(),
            first_b: Default::default(),
            last_b: Default::default(),
            cm: sigs(s),
            lo_cur: Default::default(),
            hi_cur: Default::default(),
            cnt_bad: Default::default(),
            bws: Default::default(),
            gidx: sigs(l),
            idx: sigs(l),
            take: sigs(l),
            ntake: Default::default(),
            cshift: Default::default(),
            rn: sigs(2 * l),
            lane_mask: sigs(l),
            fire: Default::default(),
            adv: Default::default(),
            k0_take: Default::default(),
            k0_free: Default::default(),
            next_seg: Default::default(),
            nseg: Default::default(),
            ncnt: Default::default(),
            err_fin: Default::default(),
            tmp16: Default::default(),
            k0_v: Reg::default(),
            k0_hold: Reg::default(),
            k0_first: Reg::default(),
            k0_last: Reg::default(),
            k0_err: Reg::default(),
            k0_oob: Reg::default(),
            k0_dense: regs(l),
            k0_ent: regs(l),
            k0_mask: regs(l),
            k0_meta: regs(12),
            k0_thr: Reg::default(),
            zi: ZeroInsert::new(l, 0),
            mv: Default::default(),
            san: (0..6).map(|_| Sanitize::default()).collect(),
            cvt: (0..10).map(|_| Fp16ToUnits::default()).collect(),
            fld: sigs(10),
            k1_mag: regs(10),
            k1_neg: regs(10),
            k1_has: regs(l),
            k1_ent: regs(l),
            k1_dense: regs(l),
            k1_oob: Reg::default(),
            tok: regs(10),
            tok_oob: Reg::default(),
            k2_sel: regs(l),
            k2_q: regs(l),
            sel_d: Default::default(),
            q_d: Default::default(),
            slot16: Default::default(),
            dtmp: Default::default(),
            mlo: Default::default(),
            mhi: Default::default(),
            eight16: c(8),
            ent_grp: Default::default(),
            ent_hi: Default::default(),
            mag_t: Default::default(),
            ext: Default::default(),
            base: sigs(6),
            k3_base: regs(l),
            k3_sub: regs(l),
            k3_plo: regs(l),
            k3_phi: regs(l),
            stp: Default::default(),
            qv: Default::default(),
            acc_lo: Default::default(),
            acc_hi: Default::default(),
            k4_x: regs(l),
            xs: Default::default(),
            prod: Default::default(),
            rnd: (0..l).map(|_| UnitsToFp16::default()).collect(),
            pv: regs(stages),
            pf: regs(stages),
            pl: regs(stages),
            pe: regs(stages),
            po: regs(stages),
            kc8: (0..=l).map(|i| c(i as u64)).collect(),
            kc16: (0..l).map(|i| c(i as u64)).collect(),
            seg_c: (0..s).map(|i| c(i as u64)).collect(),
            seg_len: (0..s).map(|i| c(p.segment_len(i) as u64)).collect(),
            thr_off: (0..4).map(|i| c(16 * i as u64)).collect(),
            bit_c: (0..ob.max(2)).map(|i| c(i as u64)).collect(),
            sh_c: (0..ob).map(|i| c(i as u64)).collect(),
            lanes8: c(l as u64),
            lmask8: c((l - 1) as u64),
            lshift8: c(l.trailing_zeros() as u64),
            bws_mask: c((per_seg - 1) as u64),
            seg_shift: c(per_seg.trailing_zeros() as u64),
            last_beat: c((beats - 1) as u64),
            depth8: c(FIFO_DEPTH as u64),
            two8: c(2),
            one8: c(1),
            zero8: c(0),
            zero9: c(0),
            bad9: c(0x100),
            lanes16: c(l as u64),
            zero16: c(0),
            one16: c(1),
            hi_bit16: c(1u64 << IB),
            mid_mask: c(if mid_shifted { (1u64 << (IB - 1)) - 1 } else { 0xFFFF }),
            mid_sel_lo: c(if mid_shifted { 4 } else { 2 }),
            mid_sel_hi: c(if mid_shifted { 3 } else { 2 }),
            mid_top: c((IB - 1) as u64),
            zero_dw: c(0),
            // the rounder takes |v| < 2^41
            sat_hi: c((1u64 << 41) - 1),
            sat_lo: c(((1u64 << DW) - (1u64 << 41)) + 1),
            sign_dw: c((DW - 1) as u64),
            sel_c: (0..6).map(|i| c(i as u64)).collect(),
            rne: c(2),
            _lanes: l,
            _w2: 2 * l,
            _w3: 3 * l,
            _segs: s,
            _bytes: bytes,
            _ob: ob,
            _lo_terms: ob.min(5),
            _stages: stages,
        }
    }
}

impl<const IB: usize> Logic for OakenDequantizer<IB> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- threshold table, read as dense beats enter ----------------
        self.thr_tab.clock.next = self.clock.val();
        self.thr_tab.reset.next = self.reset.val();
        self.thr_tab.tw_valid.next = self.tw_valid.val();
        self.thr_tab.tw_layer.next = self.tw_layer.val();
        self.thr_tab.tw_kv.next = self.tw_kv.val();
        self.thr_tab.tw_data.next = self.tw_data.val();
        self.tw_done.next = self.thr_tab.tw_done.val();
        self.tw_err.next = self.thr_tab.tw_err.val();
        self.thr_tab.rd_layer.next = self.d_layer.val();
        self.thr_tab.rd_kv.next = self.d_kv.val();

        clock!(
            self, clock, d_occ, s_occ, d_rdy, s_rdy, wcnt, need, skip, beat, used, seg_lo, seg_hi, err_r, k0_v,
            k0_hold, k0_first, k0_last, k0_err, k0_oob, k0_thr, k1_oob, tok_oob
        );
        self.d_occ.reset.next = self.reset.val();
        self.s_occ.reset.next = self.reset.val();
        self.d_rdy.reset.next = self.reset.val();
        self.s_rdy.reset.next = self.reset.val();
        self.wcnt.reset.next = self.reset.val();
        self.need.reset.next = self.reset.val();
        self.skip.reset.next = self.reset.val();
        self.beat.reset.next = self.reset.val();
        self.used.reset.next = self.reset.val();
        self.seg_lo.reset.next = self.reset.val();
        self.seg_hi.reset.next = self.reset.val();
        self.err_r.reset.next = self.reset.val();
        self.k0_v.reset.next = self.reset.val();
        self.k0_hold.reset.next = self.reset.val();
        self.k0_first.reset.next = self.reset.val();
        self.k0_last.reset.next = self.reset.val();
        self.k0_err.reset.next = self.reset.val();
        self.k0_oob.reset.next = self.reset.val();
        self.k0_thr.reset.next = self.reset.val();
        self.k1_oob.reset.next = self.reset.val();
        self.tok_oob.reset.next = self.reset.val();

        // The pipeline after K0 advances as a whole when its output register
        // is empty or being taken.
        for k in (self._stages - 1)..self._stages {
            self.adv.next = !self.pv[k].q.val() | self.out_ready.val();
        }
        self.k0_take.next = self.k0_v.q.val() & !self.k0_hold.q.val() & self.adv.val();
        self.k0_free.next = !self.k0_v.q.val() | self.k0_take.val();

        // ---------------- input FIFOs (ready from an occupancy register) ----------------
        self.d_push.next = self.d_valid.val() & self.d_rdy.q.val();
        self.s_push.next = self.s_valid.val() & self.s_rdy.q.val();
        self.d_ready.next = self.d_rdy.q.val();
        self.s_ready.next = self.s_rdy.q.val();
        self.dq.clock.next = self.clock.val();
        self.dq.reset.next = self.reset.val();
        self.dq.push.next = self.d_push.val();
        self.sq.clock.next = self.clock.val();
        self.sq.reset.next = self.reset.val();
        self.sq.push.next = self.s_push.val();
        for p in 0..self._lanes {
            self.dq_dense[p].clock.next = self.clock.val();
            self.dq_dense[p].reset.next = self.reset.val();
            self.dq_dense[p].we.next = self.d_push.val();
            self.dq_dense[p].waddr.next = self.dq.waddr.val();
            self.dq_dense[p].wdata.next = self.d_dense[p].val();
            self.dq_dense[p].raddr.next = self.dq.raddr.val();
            self.sq_coo[p].clock.next = self.clock.val();
            self.sq_coo[p].reset.next = self.reset.val();
            self.sq_coo[p].we.next = self.s_push.val();
            self.sq_coo[p].waddr.next = self.sq.waddr.val();
            self.sq_coo[p].wdata.next = self.s_coo[p].val();
            self.sq_coo[p].raddr.next = self.sq.raddr.val();
        }
        for i in 0..self._bytes {
            self.dq_meta[i].clock.next = self.clock.val();
            self.dq_meta[i].reset.next = self.reset.val();
            self.dq_meta[i].we.next = self.d_push.val();
            self.dq_meta[i].waddr.next = self.dq.waddr.val();
            self.dq_meta[i].wdata.next = self.d_meta[i].val();
            self.dq_meta[i].raddr.next = self.dq.raddr.val();
        }
        // the record's list length, summed as the beat enters
        self.n_in.next = self.zero16.val();
        for s in 0..self._segs {
            self.dq_cnt[s].clock.next = self.clock.val();
            self.dq_cnt[s].reset.next = self.reset.val();
            self.dq_cnt[s].we.next = self.d_push.val();
            self.dq_cnt[s].waddr.next = self.dq.waddr.val();
            self.dq_cnt[s].wdata.next = self.d_counts[s].val();
            self.dq_cnt[s].raddr.next = self.dq.raddr.val();
            self.t8.next = self.d_counts[s].val();
            self.n_in.next = self.n_in.val() + bit_cast::<16, 8>(self.t8.val());
        }
        self.dq_n.clock.next = self.clock.val();
        self.dq_n.reset.next = self.reset.val();
        self.dq_n.we.next = self.d_push.val();
        self.dq_n.waddr.next = self.dq.waddr.val();
        self.dq_n.wdata.next = self.n_in.val();
        self.dq_n.raddr.next = self.dq.raddr.val();
        self.dq_thr.clock.next = self.clock.val();
        self.dq_thr.reset.next = self.reset.val();
        self.dq_thr.we.next = self.d_push.val();
        self.dq_thr.waddr.next = self.dq.waddr.val();
        self.dq_thr.wdata.next = self.thr_tab.rd_set.val();
        self.dq_thr.raddr.next = self.dq.raddr.val();
        self.dq_oob.clock.next = self.clock.val();
        self.dq_oob.reset.next = self.reset.val();
        self.dq_oob.we.next = self.d_push.val();
        self.dq_oob.waddr.next = self.dq.waddr.val();
        self.dq_oob.wdata.next = bit_cast::<1, 1>(self.thr_tab.rd_oob.val().into());
        self.dq_oob.raddr.next = self.dq.raddr.val();
        self.sq_cnt.clock.next = self.clock.val();
        self.sq_cnt.reset.next = self.reset.val();
        self.sq_cnt.we.next = self.s_push.val();
        self.sq_cnt.waddr.next = self.sq.waddr.val();
        self.sq_cnt.wdata.next = self.s_count.val();
        self.sq_cnt.raddr.next = self.sq.raddr.val();

        // ---------------- aligner (spec §4.3) ----------------
        self.d_avail.next = !self.dq.empty.val();
        self.s_avail.next = !self.sq.empty.val();
        self.h_cnt.next = self.sq_cnt.rdata.val();
        self.h_bad.next = self.sq_cnt.rdata.val() > self.lanes8.val();
        if self.h_bad.val() {
            self.h_cnt.next = self.lanes8.val();
        }
        // the head sparse beat joins the window while the window has room
        // for a whole beat
        self.in_view.next = self.s_avail.val() & (self.wcnt.q.val() <= self.lanes8.val());
        // hm: the head beat's entries at lanes L..2L-1 of a 3L-lane vector
        // (zeros around them), so that every shift below indexes in range
        for i in 0..self._w3 {
            self.hm[i].next = self.zero9.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for p in 0..self._lanes {
                self.t8.next = self.sq_coo[p].rdata.val();
                if self.in_view.val() & (self.kc8[p].val() < self.h_cnt.val()) {
                    self.hm[p + ln].next = bit_cast::<9, 8>(self.t8.val());
                    if self.h_bad.val() {
                        self.hm[p + ln].next = self.hm[p + ln].val() | self.bad9.val();
                    }
                }
            }
        }
        // view = window entries, then the head beat's entries after them
        for j in 0..self._w3 {
            self.vv[j].next = self.zero9.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for j in 0..self._w2 {
                self.vv[j].next = self.win[j].q.val();
                for k in 0..(self._lanes + 1) {
                    if self.wcnt.q.val() == self.kc8[k].val() {
                        self.vv[j].next = self.vv[j].val() | self.hm[j + ln - k].val();
                    }
                }
            }
        }
        self.vcnt.next = self.wcnt.q.val();
        if self.in_view.val() {
            self.vcnt.next = self.wcnt.q.val() + self.h_cnt.val();
        }

        // the record's segment counts and list length: from the FIFO head at
        // its first beat
        self.first_b.next = self.beat.q.val() == self.zero16.val();
        self.last_b.next = self.beat.q.val() == self.last_beat.val();
        self.cnt_bad.next = false;
        for s in 0..self._segs {
            self.cm[s].next = self.cnt_r[s].q.val();
            if self.first_b.val() {
                self.cm[s].next = self.dq_cnt[s].rdata.val();
            }
            if self.cm[s].val() > self.seg_len[s].val() {
                self.cnt_bad.next = true;
            }
        }
        self.lo_cur.next = self.seg_lo.q.val();
        self.hi_cur.next = self.seg_hi.q.val();
        self.tmp16.next = bit_cast::<16, 8>(self.cm[0].val());
        if self.first_b.val() {
            self.lo_cur.next = self.zero16.val();
            self.hi_cur.next = self.tmp16.val();
        }
        self.bws.next = bit_cast::<8, 16>(self.beat.q.val()) & self.bws_mask.val();
        // entries of the record not yet taken; all of them in view
        self.need_cur.next = self.need.q.val();
        if self.first_b.val() {
            self.need_cur.next = self.dq_n.rdata.val();
        }
        self.complete.next = bit_cast::<16, 8>(self.vcnt.val()) >= self.need_cur.val();

        // entries taken into this beat: a prefix of the view, never past the
        // record's list (hi_cur <= its length)
        self.ntake.next = self.zero8.val();
        for j in 0..self._lanes {
            self.gidx[j].next = self.used.q.val() + self.kc16[j].val();
            self.idx[j].next = self.vv[j].val().get_bits::<8>(0) >> self.two8.val();
            self.take[j].next = (self.kc8[j].val() < self.vcnt.val())
                & (self.gidx[j].val() >= self.lo_cur.val())
                & (self.gidx[j].val() < self.hi_cur.val())
                & ((self.idx[j].val() >> self.lshift8.val()) == self.bws.val());
        }
        for j in 1..self._lanes {
            self.take[j].next = self.take[j].val() & self.take[j - 1].val() & (self.idx[j].val() > self.idx[j - 1].val());
        }
        self.bad_take.next = false;
        for j in 0..self._lanes {
            if self.take[j].val() {
                self.ntake.next = self.kc8[j + 1].val();
                if self.vv[j].val().get_bit(8) {
                    self.bad_take.next = true;
                }
            }
        }
        for p in 0..self._lanes {
            self.lane_mask[p].next = false;
        }
        for j in 0..self._lanes {
            for p in 0..self._lanes {
                if self.take[j].val() & ((self.idx[j].val() & self.lmask8.val()) == self.kc8[p].val()) {
                    self.lane_mask[p].next = true;
                }
            }
        }

        // L entries in view hold every entry of one beat; fewer do when they
        // are the rest of the record's list
        self.fire.next = self.d_avail.val()
            & self.k0_free.val()
            & ((self.vcnt.val() >= self.lanes8.val()) | self.complete.val());
        // entries of the record left untaken after this beat
        self.rem.next = self.need_cur.val() - bit_cast::<16, 8>(self.ntake.val());
        // after a last beat with entries untaken (malformed), K0 holds it
        // while they are dropped, min(skip, L, in view) a cycle
        self.sk.next = self.lanes8.val();
        if self.skip.q.val() < self.lanes16.val() {
            self.sk.next = self.skip.q.val().get_bits::<8>(0);
        }
        self.dsk.next = self.sk.val();
        if self.vcnt.val() < self.sk.val() {
            self.dsk.next = self.vcnt.val();
        }

        // window <- view shifted down by the entries taken or dropped
        self.cshift.next = self.zero8.val();
        if self.fire.val() {
            self.cshift.next = self.ntake.val();
        }
        if self.k0_hold.q.val() {
            self.cshift.next = self.dsk.val();
        }
        for j in 0..self._w2 {
            self.rn[j].next = self.zero9.val();
            for k in 0..(self._lanes + 1) {
                if self.cshift.val() == self.kc8[k].val() {
                    self.rn[j].next = self.rn[j].val() | self.vv[j + k].val();
                }
            }
            self.win[j].clock.next = self.clock.val();
            self.win[j].reset.next = self.reset.val();
            self.win[j].en.next = true;
            self.win[j].d.next = self.rn[j].val();
        }
        self.wcnt.en.next = true;
        self.wcnt.d.next = self.vcnt.val() - self.cshift.val();
        self.skip.en.next = true;
        self.skip.d.next = self.skip.q.val();
        if self.k0_hold.q.val() {
            self.skip.d.next = self.skip.q.val() - bit_cast::<16, 8>(self.dsk.val());
        }
        if self.fire.val() & self.last_b.val() {
            self.skip.d.next = self.rem.val();
        }
        self.need.en.next = self.fire.val();
        self.need.d.next = self.rem.val();

        // the record's sticky error so far (counts, flagged entries taken),
        // and the verdict at its last beat
        self.err_fin.next = self.err_r.q.val() | self.bad_take.val();
        if self.first_b.val() {
            self.err_fin.next = self.err_fin.val() | self.cnt_bad.val();
        }
        if self.last_b.val() {
            self.err_fin.next = self.err_fin.val() | (self.rem.val() != self.zero16.val());
        }
        self.err_r.en.next = self.fire.val();
        self.err_r.d.next = self.err_fin.val();
        if self.last_b.val() {
            self.err_r.d.next = false;
        }

        self.beat.en.next = self.fire.val();
        self.beat.d.next = self.beat.q.val() + self.one16.val();
        if self.last_b.val() {
            self.beat.d.next = self.zero16.val();
        }
        self.used.en.next = self.fire.val();
        self.used.d.next = self.used.q.val() + bit_cast::<16, 8>(self.ntake.val());
        if self.last_b.val() {
            self.used.d.next = self.zero16.val();
        }
        // segment bounds for the next beat
        self.next_seg.next = self.bws.val() == self.bws_mask.val();
        self.nseg.next = (self.beat.q.val() + self.one16.val()) >> self.seg_shift.val();
        self.ncnt.next = self.zero8.val();
        for s in 0..self._segs {
            if self.nseg.val() == self.seg_c[s].val() {
                self.ncnt.next = self.cm[s].val();
            }
        }
        self.seg_lo.en.next = self.fire.val();
        self.seg_hi.en.next = self.fire.val();
        self.seg_lo.d.next = self.lo_cur.val();
        self.seg_hi.d.next = self.hi_cur.val();
        if self.next_seg.val() {
            self.seg_lo.d.next = self.hi_cur.val();
            self.seg_hi.d.next = self.hi_cur.val() + bit_cast::<16, 8>(self.ncnt.val());
        }
        for s in 0..self._segs {
            self.cnt_r[s].clock.next = self.clock.val();
            self.cnt_r[s].reset.next = self.reset.val();
            self.cnt_r[s].en.next = self.fire.val() & self.first_b.val();
            self.cnt_r[s].d.next = self.cm[s].val();
        }

        // FIFO pops: a dense beat per fire; the head sparse beat when it
        // joins the view
        self.dq.pop.next = self.fire.val();
        self.sq.pop.next = self.in_view.val();
        self.d_occ_n.next = self.d_occ.q.val();
        if self.d_push.val() {
            self.d_occ_n.next = self.d_occ_n.val() + self.one8.val();
        }
        if self.fire.val() {
            self.d_occ_n.next = self.d_occ_n.val() - self.one8.val();
        }
        self.d_occ.en.next = true;
        self.d_occ.d.next = self.d_occ_n.val();
        self.d_rdy.en.next = true;
        self.d_rdy.d.next = self.d_occ_n.val() < self.depth8.val();
        self.s_occ_n.next = self.s_occ.q.val();
        if self.s_push.val() {
            self.s_occ_n.next = self.s_occ_n.val() + self.one8.val();
        }
        if self.sq.pop.val() {
            self.s_occ_n.next = self.s_occ_n.val() - self.one8.val();
        }
        self.s_occ.en.next = true;
        self.s_occ.d.next = self.s_occ_n.val();
        self.s_rdy.en.next = true;
        self.s_rdy.d.next = self.s_occ_n.val() < self.depth8.val();

        // ---------------- K0 ----------------
        self.k0_v.en.next = true;
        self.k0_v.d.next = self.fire.val() | (self.k0_v.q.val() & !self.k0_take.val());
        self.k0_hold.en.next = true;
        self.k0_hold.d.next = self.k0_hold.q.val();
        if self.fire.val() {
            self.k0_hold.d.next = self.last_b.val() & (self.rem.val() != self.zero16.val());
        }
        if self.k0_hold.q.val() & (self.skip.q.val() == bit_cast::<16, 8>(self.dsk.val())) {
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
        self.k0_oob.en.next = self.fire.val();
        self.k0_oob.d.next = self.dq_oob.rdata.val().any();
        self.k0_thr.en.next = self.fire.val();
        self.k0_thr.d.next = self.dq_thr.rdata.val();
        for p in 0..self._lanes {
            self.k0_dense[p].clock.next = self.clock.val();
            self.k0_dense[p].reset.next = self.reset.val();
            self.k0_dense[p].en.next = self.fire.val();
            self.k0_dense[p].d.next = self.dq_dense[p].rdata.val();
            self.k0_ent[p].clock.next = self.clock.val();
            self.k0_ent[p].reset.next = self.reset.val();
            self.k0_ent[p].en.next = self.fire.val();
            self.k0_ent[p].d.next = self.zero8.val();
            if self.take[p].val() {
                self.k0_ent[p].d.next = self.vv[p].val().get_bits::<8>(0);
            }
            self.k0_mask[p].clock.next = self.clock.val();
            self.k0_mask[p].reset.next = self.reset.val();
            self.k0_mask[p].en.next = self.fire.val();
            self.k0_mask[p].d.next = self.lane_mask[p].val();
        }
        for i in 0..12 {
            self.k0_meta[i].clock.next = self.clock.val();
            self.k0_meta[i].reset.next = self.reset.val();
            self.k0_meta[i].en.next = self.fire.val();
            self.k0_meta[i].d.next = self.dq_meta[i].rdata.val();
        }

        // ---------------- K1: zero-insert; token fields converted ----------------
        self.mv.next = self.k0_v.q.val() & !self.k0_hold.q.val();
        self.zi.clock.next = self.clock.val();
        self.zi.reset.next = self.reset.val();
        self.zi.en.next = self.adv.val();
        self.zi.in_valid.next = self.mv.val();
        for p in 0..self._lanes {
            self.zi.data[p].next = self.k0_ent[p].q.val();
            self.zi.mask[p].next = self.k0_mask[p].q.val();
            self.k1_has[p].clock.next = self.clock.val();
            self.k1_has[p].reset.next = self.reset.val();
            self.k1_has[p].en.next = self.adv.val();
            self.k1_has[p].d.next = self.k0_mask[p].q.val();
            self.k1_ent[p].clock.next = self.clock.val();
            self.k1_ent[p].reset.next = self.reset.val();
            self.k1_ent[p].en.next = self.adv.val();
            self.k1_ent[p].d.next = self.zi.out[p].val();
            self.k1_dense[p].clock.next = self.clock.val();
            self.k1_dense[p].reset.next = self.reset.val();
            self.k1_dense[p].en.next = self.adv.val();
            self.k1_dense[p].d.next = self.k0_dense[p].q.val();
        }
        // metadata min/step fields are sanitised (a corrupted word still
        // decodes to defined values, spec §4.4); table thresholds are legal
        for i in 0..6 {
            self.mlo.next = self.k0_meta[2 * i].q.val();
            self.mhi.next = self.k0_meta[2 * i + 1].q.val();
            self.san[i].x.next = (bit_cast::<16, 8>(self.mhi.val()) << self.eight16.val()) | bit_cast::<16, 8>(self.mlo.val());
            self.fld[i].next = self.san[i].y.val();
        }
        for t in 0..4 {
            self.fld[6 + t].next = self.k0_thr.q.val().get_bits::<16>(self.thr_off[t].val().index());
        }
        for i in 0..10 {
            self.cvt[i].x.next = self.fld[i].val();
            self.k1_mag[i].clock.next = self.clock.val();
            self.k1_mag[i].reset.next = self.reset.val();
            self.k1_mag[i].en.next = self.adv.val();
            self.k1_mag[i].d.next = self.cvt[i].mag.val();
            self.k1_neg[i].clock.next = self.clock.val();
            self.k1_neg[i].reset.next = self.reset.val();
            self.k1_neg[i].en.next = self.adv.val();
            self.k1_neg[i].d.next = self.cvt[i].neg.val();
        }
        self.k1_oob.en.next = self.adv.val();
        self.k1_oob.d.next = self.k0_oob.q.val();

        // beat flags along K1..out: slot k is after stage k + 1
        for k in 0..self._stages {
            self.pv[k].clock.next = self.clock.val();
            self.pv[k].reset.next = self.reset.val();
            self.pv[k].en.next = self.adv.val();
            self.pf[k].clock.next = self.clock.val();
            self.pf[k].reset.next = self.reset.val();
            self.pf[k].en.next = self.adv.val();
            self.pl[k].clock.next = self.clock.val();
            self.pl[k].reset.next = self.reset.val();
            self.pl[k].en.next = self.adv.val();
            self.pe[k].clock.next = self.clock.val();
            self.pe[k].reset.next = self.reset.val();
            self.pe[k].en.next = self.adv.val();
            self.po[k].clock.next = self.clock.val();
            self.po[k].reset.next = self.reset.val();
            self.po[k].en.next = self.adv.val();
        }
        self.pv[0].d.next = self.mv.val();
        self.pf[0].d.next = self.k0_first.q.val();
        self.pl[0].d.next = self.k0_last.q.val();
        self.pe[0].d.next = self.k0_err.q.val();
        self.po[0].d.next = false;
        for k in 1..self._stages {
            self.pv[k].d.next = self.pv[k - 1].q.val();
            self.pf[k].d.next = self.pf[k - 1].q.val();
            self.pl[k].d.next = self.pl[k - 1].q.val();
            self.pe[k].d.next = self.pe[k - 1].q.val();
            self.po[k].d.next = self.po[k - 1].q.val();
        }
        // the token's layer_oob joins the flags at K2
        self.po[1].d.next = self.k1_oob.q.val();
        if !self.pf[0].q.val() {
            self.po[1].d.next = self.tok_oob.q.val();
        }

        // ---------------- K2: token values signed; lane selection and code ----------------
        for i in 0..10 {
            self.tok[i].clock.next = self.clock.val();
            self.tok[i].reset.next = self.reset.val();
            self.tok[i].en.next = self.adv.val() & self.pv[0].q.val() & self.pf[0].q.val();
            self.mag_t.next = self.k1_mag[i].q.val();
            self.ext.next = bit_cast::<DW, FX>(self.mag_t.val());
            self.tok[i].d.next = self.ext.val();
            if self.k1_neg[i].q.val() {
                self.tok[i].d.next = self.zero_dw.val() - self.ext.val();
            }
        }
        self.tok_oob.en.next = self.adv.val() & self.pv[0].q.val() & self.pf[0].q.val();
        self.tok_oob.d.next = self.k1_oob.q.val();
        for p in 0..self._lanes {
            self.dtmp.next = self.k1_dense[p].q.val();
            self.slot16.next = bit_cast::<16, IB>(self.dtmp.val());
            self.ent_grp.next = self.k1_ent[p].q.val().get_bit(self.bit_c[1].val().index());
            self.ent_hi.next = self.k1_ent[p].q.val().get_bit(self.bit_c[0].val().index());
            // middle: plain (sel 2, whole slot) or shifted (side bit on
            // top, sel 3 upper / 4 lower); the constants make one code path
            self.sel_d.next = self.mid_sel_lo.val();
            if self.slot16.val().get_bit(self.mid_top.val().index()) {
                self.sel_d.next = self.mid_sel_hi.val();
            }
            self.q_d.next = self.slot16.val() & self.mid_mask.val();
            if self.k1_has[p].q.val() {
                if self.ent_grp.val() {
                    self.sel_d.next = self.sel_c[1].val();
                    if self.ent_hi.val() {
                        self.sel_d.next = self.sel_c[0].val();
                    }
                    self.q_d.next = self.slot16.val();
                } else {
                    self.sel_d.next = self.sel_c[5].val();
                    self.q_d.next = self.slot16.val();
                    if self.ent_hi.val() {
                        self.q_d.next = self.slot16.val() | self.hi_bit16.val();
                    }
                }
            }
            self.k2_sel[p].clock.next = self.clock.val();
            self.k2_sel[p].reset.next = self.reset.val();
            self.k2_sel[p].en.next = self.adv.val();
            self.k2_sel[p].d.next = self.sel_d.val();
            self.k2_q[p].clock.next = self.clock.val();
            self.k2_q[p].reset.next = self.reset.val();
            self.k2_q[p].en.next = self.adv.val();
            self.k2_q[p].d.next = self.q_d.val();
        }

        // ---------------- K3: base and partial products ----------------
        // tok: 0 out.min, 1 out.step, 2 mid.min, 3 mid.step, 4 in.min,
        // 5 in.step, 6 lo_outer, 7 lo_inner, 8 hi_inner, 9 hi_outer
        self.base[0].next = self.tok[9].q.val() + self.tok[0].q.val();
        self.base[1].next = self.tok[6].q.val() - self.tok[0].q.val();
        self.base[2].next = self.tok[2].q.val();
        self.base[3].next = self.tok[8].q.val() + self.tok[2].q.val();
        self.base[4].next = self.tok[7].q.val() - self.tok[2].q.val();
        self.base[5].next = self.tok[4].q.val();
        for p in 0..self._lanes {
            self.k3_base[p].clock.next = self.clock.val();
            self.k3_base[p].reset.next = self.reset.val();
            self.k3_base[p].en.next = self.adv.val();
            self.k3_sub[p].clock.next = self.clock.val();
            self.k3_sub[p].reset.next = self.reset.val();
            self.k3_sub[p].en.next = self.adv.val();
            self.k3_plo[p].clock.next = self.clock.val();
            self.k3_plo[p].reset.next = self.reset.val();
            self.k3_plo[p].en.next = self.adv.val();
            self.k3_phi[p].clock.next = self.clock.val();
            self.k3_phi[p].reset.next = self.reset.val();
            self.k3_phi[p].en.next = self.adv.val();
            self.k3_base[p].d.next = self.base[5].val();
            self.stp.next = self.tok[5].q.val();
            self.k3_sub[p].d.next = false;
            if self.k2_sel[p].q.val() == self.sel_c[0].val() {
                self.k3_base[p].d.next = self.base[0].val();
                self.stp.next = self.tok[1].q.val();
            }
            if self.k2_sel[p].q.val() == self.sel_c[1].val() {
                self.k3_base[p].d.next = self.base[1].val();
                self.stp.next = self.tok[1].q.val();
                self.k3_sub[p].d.next = true;
            }
            if self.k2_sel[p].q.val() == self.sel_c[2].val() {
                self.k3_base[p].d.next = self.base[2].val();
                self.stp.next = self.tok[3].q.val();
            }
            if self.k2_sel[p].q.val() == self.sel_c[3].val() {
                self.k3_base[p].d.next = self.base[3].val();
                self.stp.next = self.tok[3].q.val();
            }
            if self.k2_sel[p].q.val() == self.sel_c[4].val() {
                self.k3_base[p].d.next = self.base[4].val();
                self.stp.next = self.tok[3].q.val();
                self.k3_sub[p].d.next = true;
            }
            // q * step as two sums of shifted steps (code bits 0..4, 5..)
            self.qv.next = self.k2_q[p].q.val();
            self.acc_lo.next = self.zero_dw.val();
            self.acc_hi.next = self.zero_dw.val();
            for i in 0..self._lo_terms {
                if self.qv.val().get_bit(self.bit_c[i].val().index()) {
                    self.acc_lo.next = self.acc_lo.val() + (self.stp.val() << self.sh_c[i].val());
                }
            }
            for i in self._lo_terms..self._ob {
                if self.qv.val().get_bit(self.bit_c[i].val().index()) {
                    self.acc_hi.next = self.acc_hi.val() + (self.stp.val() << self.sh_c[i].val());
                }
            }
            self.k3_plo[p].d.next = self.acc_lo.val();
            self.k3_phi[p].d.next = self.acc_hi.val();
        }

        // ---------------- K4: x' = base +- q * step, clamped ----------------
        for p in 0..self._lanes {
            self.prod.next = self.k3_plo[p].q.val() + self.k3_phi[p].q.val();
            self.xs.next = self.k3_base[p].q.val() + self.prod.val();
            if self.k3_sub[p].q.val() {
                self.xs.next = self.k3_base[p].q.val() - self.prod.val();
            }
            // clamp to |x| < 2^41 (the rounder saturates beyond 65504 anyway)
            if self.xs.val().get_bit(self.sign_dw.val().index()) {
                if self.xs.val() < self.sat_lo.val() {
                    self.xs.next = self.sat_lo.val();
                }
            } else if self.xs.val() > self.sat_hi.val() {
                self.xs.next = self.sat_hi.val();
            }
            self.k4_x[p].clock.next = self.clock.val();
            self.k4_x[p].reset.next = self.reset.val();
            self.k4_x[p].en.next = self.adv.val();
            self.k4_x[p].d.next = self.xs.val().get_bits::<FX>(0);
            // rounder: three more stages
            self.rnd[p].clock.next = self.clock.val();
            self.rnd[p].reset.next = self.reset.val();
            self.rnd[p].en.next = self.adv.val();
            self.rnd[p].v.next = self.k4_x[p].q.val();
            self.rnd[p].mode.next = self.rne.val();
            self.out_data[p].next = self.rnd[p].y.val();
        }

        for k in (self._stages - 1)..self._stages {
            self.out_valid.next = self.pv[k].q.val();
            self.out_first.next = self.pf[k].q.val();
            self.out_last.next = self.pl[k].q.val();
            self.out_err.next = self.pe[k].q.val() & self.pl[k].q.val();
            self.out_layer_oob.next = self.po[k].q.val();
        }
    }
}
