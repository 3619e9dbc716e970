//! Oaken dequantization engine.
//! Paper: Oaken (ISCA 2025) §5.2 "Dequantization engine" (Figure 9(b)):
//! inlier and outlier dequantizers, zero-insert of the COO entries, buffers
//! aligning the dense and sparse paths, OR-merge. Spec: docs/spec.md §4
//! (interface §4.2, alignment and malformed lists §4.3, decoding §4.4,
//! structure §4.5) on top of §2.9-§2.10.
//!
//! The blocks, in pipeline order: the input FIFOs (deq_input), the
//! aligner and K0's flags (deq_aligner, its window in
//! deq_aligner_window, its one-hot selects in deq_or_tree), K0's entry
//! and slot registers and K1's expansion network (here, deq_expand), the
//! token fields and the record's bases (deq_fields), one arithmetic lane
//! per element (deq_lane), and the beat flags along K1..out (here).
//!
//! Dense beats and sparse beats enter their own FIFOs. The aligner keeps the
//! next entries of the one continuous sparse stream in a window register of
//! up to 2L entries and each cycle takes one dense beat's entries off the
//! window's front (§4.3), never past the record's count sum, so the next
//! record's entries stay in the window; an untaken remainder is dropped after
//! the record's last beat, at most L entries a cycle. Its loop is window ->
//! take thermometer -> shift -> window; the sparse FIFO's head beat joins
//! behind the shifted window, off that loop. Everything after it is a
//! stall-all pipeline: zero-insert and field conversion, bases and lane
//! selection, a carry-save sum per lane, its carry-propagate add, and a
//! two-stage rounder.
//!
//! In `paper` mode (spec §4.4) a front (deq_zero) sits before the input
//! FIFOs: each dense beat waits in a fixed pipe while the folded zero
//! index of its record's outer and middle groups is computed, and enters
//! the dense FIFO with it; the lanes read each side as a compare against it.

use super::deq_aligner::DeqAligner;
use super::deq_expand::{DeqExpandStage, XW, X_MOVE, X_TAKEN};
use super::deq_fields::DeqFields;
use super::deq_input::DeqInput;
use super::deq_lane::DeqLane;
use super::deq_zero::DeqZero;
use crate::prim::fifo::FifoShift;
use crate::prim::fold_zero::FOLD_ZERO_WIDTH;
use crate::prim::fp16::FX;
use super::table::ThresholdTable;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;
use sim::oaken::params::{MiddleMode, OakenParams};

pub use super::deq_input::FIFO_DEPTH;

/// Width of a lane's carry-save sum for `inlier_bits` `ib`: a base (|B| <
/// 2^41) plus a code of ib + 1 bits times a step (< 2^40) fits ib + 43
/// signed bits.
pub const fn sum_width(ib: usize) -> usize {
    ib + 43
}

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
        // FIFO (1), aligner register K0 (1), K1..K4 (4), rounder (2); in
        // paper mode the front's pipe (outlier_bits + 2) before the FIFO
        let front = if p.middle_mode == MiddleMode::Paper { front_stages(p) } else { 0 };
        DeqGeometry { lanes: p.lanes, beats: p.head_beats(), segments: p.segments(), latency: 8 + front }
    }
}

/// Paper mode: stages of the front's pipe, the outer group's z latency.
pub fn front_stages(p: &OakenParams) -> usize {
    DeqZero::<FOLD_ZERO_WIDTH>::latency(p.outlier_bits as usize)
}

/// `IB` inlier bits; `W` = `sum_width(IB)`.
#[derive(LogicBlock)]
pub struct OakenDequantizer<const IB: usize, const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// threshold-table write strobe, always accepted
    pub tw_valid: Signal<In, Bit>,
    /// layer of the written set
    pub tw_layer: Signal<In, Bits<8>>,
    /// 0 = K, 1 = V
    pub tw_kv: Signal<In, Bit>,
    /// {hi_outer, hi_inner, lo_inner, lo_outer}, FP16 each
    pub tw_data: Signal<In, Bits<64>>,
    /// one cycle after each write strobe
    pub tw_done: Signal<Out, Bit>,
    /// with tw_done: 0 written, 1 non-finite, 2 out of order, 3 layer out of range
    pub tw_err: Signal<Out, Bits<2>>,
    /// dense beat valid
    pub d_valid: Signal<In, Bit>,
    /// dense beat accepted when d_valid and d_ready
    pub d_ready: Signal<Out, Bit>,
    /// dense slots of the beat's elements, lane i at [IB*i+IB-1:IB*i]
    pub d_dense: Vec<Signal<In, Bits<IB>>>,
    /// token metadata word (spec §2.9: six FP16 fields, byte i at [8i+7:8i]), sampled with the
    /// record's first dense beat
    pub d_meta: Vec<Signal<In, Bits<8>>>,
    /// the head's segment counts, segment s at [8s+7:8s], sampled with the record's first dense
    /// beat; their sum is the record's list length
    pub d_counts: Vec<Signal<In, Bits<8>>>,
    /// token's layer, sampled with the record's first dense beat
    pub d_layer: Signal<In, Bits<8>>,
    /// token's K/V, sampled with the record's first dense beat
    pub d_kv: Signal<In, Bit>,
    /// sparse beat valid
    pub s_valid: Signal<In, Bit>,
    /// sparse beat accepted when s_valid and s_ready
    pub s_ready: Signal<Out, Bit>,
    /// COO entries of the continuous sparse stream in order, entry j at [8j+7:8j]
    pub s_coo: Vec<Signal<In, Bits<8>>>,
    /// entries in this sparse beat, 0..lanes, any split across records (above lanes: its entries
    /// are flagged malformed, counts as lanes)
    pub s_count: Signal<In, Bits<8>>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// FP16 elements of the beat, lane i at [16i+15:16i]
    pub out_data: Vec<Signal<Out, Bits<16>>>,
    /// first beat of a record
    pub out_first: Signal<Out, Bit>,
    /// last beat of a record
    pub out_last: Signal<Out, Bit>,
    /// on the last beat: the record's list was malformed (spec §4.3)
    pub out_err: Signal<Out, Bit>,
    /// token's layer out of range (layer 0 used), constant over the record
    pub out_layer_oob: Signal<Out, Bit>,

    thr_tab: ThresholdTable,
    // ---- paper mode only (empty otherwise): the front before the input
    // FIFOs. A pipe of front_stages() stages of whole dense beats (with
    // the table read at acceptance) advancing as one when its last stage
    // is empty or the dense FIFO takes it; the outer group's z from the
    // port and the middle group's (one step shorter) from the pipe's
    // first stage, both leaving with the beat into a z FIFO that the
    // aligner pops with the dense FIFO ----
    fadv: Vec<Signal<Local, Bit>>,
    fpush: Vec<Signal<Local, Bit>>,
    fpv: Vec<Reg<Bit>>,
    fpd: Vec<Reg<Bits<IB>>>,
    fpm: Vec<Reg<Bits<8>>>,
    fpc: Vec<Reg<Bits<8>>>,
    fpt: Vec<Reg<Bits<64>>>,
    fpo: Vec<Reg<Bit>>,
    fz: Vec<DeqZero<FOLD_ZERO_WIDTH>>,
    fzq: Vec<FifoShift<FX>>,
    // ---- input FIFOs ----
    inp: DeqInput<IB>,
    // ---- aligner and K0's flags ----
    aln: DeqAligner,
    // the pipeline after K0 advances as a whole
    adv: Signal<Local, Bit>,
    // ---- K0: the beat's slots, the window's first L entries and which of
    // them are taken ----
    k0_dense: Vec<Reg<Bits<IB>>>,
    k0_ent: Vec<Reg<Bits<8>>>,
    k0_tk: Vec<Reg<Bit>>,
    // ---- K1: entries in their lanes ----
    // expansion: each taken entry moves up by its lane less its position,
    // in log2(L) stages of power-of-two moves, the largest first (the
    // zero-insert network of §3.1 with its shifts known from the indices)
    xs: Vec<Signal<Local, Bits<8>>>,
    xs1: Signal<Local, Bits<8>>,
    xe1: Signal<Local, Bits<8>>,
    xw: Vec<Signal<Local, Bits<XW>>>,
    xw1: Vec<Signal<Local, Bits<XW>>>,
    x32: DeqExpandStage,
    x16: DeqExpandStage,
    x8: DeqExpandStage,
    x4: DeqExpandStage,
    x2: DeqExpandStage,
    x1: DeqExpandStage,
    mv17: Constant<Bits<XW>>,
    tk17: Constant<Bits<XW>>,
    // the lane word's "taken" bit (deq_expand's X_TAKEN)
    xtk: Constant<Bits<5>>,
    mv: Signal<Local, Bit>,
    k1_has: Vec<Reg<Bit>>,
    k1_ent: Vec<Reg<Bits<8>>>,
    k1_dense: Vec<Reg<Bits<IB>>>,
    // ---- K0..K2: token fields, the record's bases and steps ----
    fields: DeqFields,
    rec_en: Signal<Local, Bit>,
    // ---- K2..R2: one arithmetic lane per element ----
    lane: Vec<DeqLane<IB, W>>,
    // ---- beat flags along K1..out: valid, first, last, error, layer out
    // of range; slot k is after stage k + 1 ----
    pv: Vec<Reg<Bit>>,
    pf: Vec<Reg<Bit>>,
    pl: Vec<Reg<Bit>>,
    pe: Vec<Reg<Bit>>,
    po: Vec<Reg<Bit>>,

    // constants
    kc8: Vec<Constant<Bits<8>>>,
    lmask8: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,

    // lanes, segments, metadata bytes, flag stages (K1..K4, two rounder stages)
    _lanes: usize,
    _segs: usize,
    _bytes: usize,
    _stages: usize,
    // 1 in paper mode (the front, the z words), else 0
    _paper: usize,
    // the front's stages, the last one, and its slot, byte and count registers
    _fp: usize,
    _fpm1: usize,
    _fnd: usize,
    _fnm: usize,
    _fnc: usize,
}

impl<const IB: usize, const W: usize> OakenDequantizer<IB, W> {
    pub fn new(p: &OakenParams) -> Self {
        p.validate().expect("parameters are validated by the generator");
        assert_eq!(p.inlier_bits as usize, IB);
        assert_eq!(W, sum_width(IB));
        let l = p.lanes;
        let s = p.segments();
        let bytes = 12;
        let mid_shifted = p.middle_mode == MiddleMode::Shifted;
        let paper = p.middle_mode == MiddleMode::Paper;
        let fp = if paper { front_stages(p) } else { 0 };
        let pn = paper as usize;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        // flags after K1, K2, K3, K4 and the two rounder stages
        let stages = 6;
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
            d_dense: sigs(l),
            d_meta: sigs(bytes),
            d_counts: sigs(s),
            d_layer: Default::default(),
            d_kv: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_coo: sigs(l),
            s_count: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: sigs(l),
            out_first: Default::default(),
            out_last: Default::default(),
            out_err: Default::default(),
            out_layer_oob: Default::default(),
            thr_tab: ThresholdTable::new(p.layers),
            fadv: sigs(pn),
            fpush: sigs(pn),
            fpv: regs(fp),
            fpd: regs(fp * l),
            fpm: regs(fp * bytes),
            fpc: regs(fp * s),
            fpt: regs(fp),
            fpo: regs(fp),
            fz: if paper {
                vec![DeqZero::new(p.outlier_bits as usize, 0), DeqZero::new(p.inlier_bits as usize, 16)]
            } else {
                vec![]
            },
            fzq: (0..pn).map(|_| FifoShift::new(FIFO_DEPTH)).collect(),
            inp: DeqInput::new(p),
            aln: DeqAligner::new(p),
            adv: Default::default(),
            k0_dense: regs(l),
            k0_ent: regs(l),
            k0_tk: regs(l),
            xs: sigs(l),
            xs1: Default::default(),
            xe1: Default::default(),
            xw: sigs(l),
            xw1: sigs(l),
            x32: DeqExpandStage::new(l, 32),
            x16: DeqExpandStage::new(l, 16),
            x8: DeqExpandStage::new(l, 8),
            x4: DeqExpandStage::new(l, 4),
            x2: DeqExpandStage::new(l, 2),
            x1: DeqExpandStage::new(l, 1),
            mv17: c(X_MOVE as u64),
            tk17: c(1 << X_TAKEN),
            xtk: c(X_TAKEN as u64),
            mv: Default::default(),
            k1_has: regs(l),
            k1_ent: regs(l),
            k1_dense: regs(l),
            fields: DeqFields::new(paper),
            rec_en: Default::default(),
            lane: (0..l).map(|_| DeqLane::new(mid_shifted, paper)).collect(),
            pv: regs(stages),
            pf: regs(stages),
            pl: regs(stages),
            pe: regs(stages),
            po: regs(stages),
            kc8: consts(0..l as u64),
            lmask8: c((l - 1) as u64),
            two8: c(2),
            zero8: c(0),
            _lanes: l,
            _segs: s,
            _bytes: bytes,
            _stages: stages,
            _paper: pn,
            _fp: fp,
            _fpm1: fp.saturating_sub(1),
            _fnd: fp * l,
            _fnm: fp * bytes,
            _fnc: fp * s,
        }
    }
}

impl<const IB: usize, const W: usize> Logic for OakenDequantizer<IB, W> {
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


        // The pipeline after K0 advances as a whole when its output register
        // is empty or being taken.
        for k in (self._stages - 1)..self._stages {
            self.adv.next = !self.pv[k].q.val() | self.out_ready.val();
        }

        // ---------------- input FIFOs ----------------
        self.inp.clock.next = self.clock.val();
        self.inp.reset.next = self.reset.val();
        self.inp.d_valid.next = self.d_valid.val();
        self.d_ready.next = self.inp.d_ready.val();
        self.inp.s_valid.next = self.s_valid.val();
        self.s_ready.next = self.inp.s_ready.val();
        self.inp.s_count.next = self.s_count.val();
        for p in 0..self._lanes {
            self.inp.d_dense[p].next = self.d_dense[p].val();
            self.inp.s_coo[p].next = self.s_coo[p].val();
        }
        for i in 0..self._bytes {
            self.inp.d_meta[i].next = self.d_meta[i].val();
        }
        for s in 0..self._segs {
            self.inp.d_counts[s].next = self.d_counts[s].val();
        }
        self.inp.thr_set.next = self.thr_tab.rd_set.val();
        self.inp.thr_oob.next = self.thr_tab.rd_oob.val();
        self.inp.fire.next = self.aln.fire.val();
        self.inp.app.next = self.aln.app.val();
        // paper: the dense port enters the front, whose pipe feeds the
        // dense FIFO (the table is read as the beat is accepted, as always)
        for k in self._fpm1..self._fp {
            self.fadv[0].next = !self.fpv[k].q.val() | self.inp.d_ready.val();
            self.fpush[0].next = self.fpv[k].q.val() & self.inp.d_ready.val();
            self.inp.d_valid.next = self.fpv[k].q.val();
            self.inp.thr_set.next = self.fpt[k].q.val();
            self.inp.thr_oob.next = self.fpo[k].q.val();
        }
        for _f in 0..self._paper {
            self.d_ready.next = self.fadv[0].val();
            self.fpv[0].d.next = self.d_valid.val();
            self.fpt[0].d.next = self.thr_tab.rd_set.val();
            self.fpo[0].d.next = self.thr_tab.rd_oob.val();
        }
        for k in 0..self._fp {
            self.fpv[k].clock.next = self.clock.val();
            self.fpv[k].reset.next = self.reset.val();
            self.fpv[k].en.next = self.fadv[0].val();
            self.fpt[k].clock.next = self.clock.val();
            self.fpt[k].reset.next = self.reset.val();
            self.fpt[k].en.next = self.fadv[0].val();
            self.fpo[k].clock.next = self.clock.val();
            self.fpo[k].reset.next = self.reset.val();
            self.fpo[k].en.next = self.fadv[0].val();
        }
        for k in 1..self._fp {
            self.fpv[k].d.next = self.fpv[k - 1].q.val();
            self.fpt[k].d.next = self.fpt[k - 1].q.val();
            self.fpo[k].d.next = self.fpo[k - 1].q.val();
        }
        for i in 0..self._fnd {
            self.fpd[i].clock.next = self.clock.val();
            self.fpd[i].reset.next = self.reset.val();
            self.fpd[i].en.next = self.fadv[0].val();
        }
        for i in 0..self._fnm {
            self.fpm[i].clock.next = self.clock.val();
            self.fpm[i].reset.next = self.reset.val();
            self.fpm[i].en.next = self.fadv[0].val();
        }
        for i in 0..self._fnc {
            self.fpc[i].clock.next = self.clock.val();
            self.fpc[i].reset.next = self.reset.val();
            self.fpc[i].en.next = self.fadv[0].val();
        }
        // stage 0 from the port, stage k from stage k - 1, the last stage
        // into the dense FIFO
        for _f in 0..self._paper {
            for p in 0..self._lanes {
                self.fpd[p].d.next = self.d_dense[p].val();
            }
            for i in 0..self._bytes {
                self.fpm[i].d.next = self.d_meta[i].val();
            }
            for s in 0..self._segs {
                self.fpc[s].d.next = self.d_counts[s].val();
            }
        }
        for l in self._lanes..(self._lanes + 1) {
            for i in self._lanes..self._fnd {
                self.fpd[i].d.next = self.fpd[i - l].q.val();
            }
            for k in self._fpm1..self._fp {
                for p in 0..self._lanes {
                    self.inp.d_dense[p].next = self.fpd[k * l + p].q.val();
                }
            }
        }
        for l in self._bytes..(self._bytes + 1) {
            for i in self._bytes..self._fnm {
                self.fpm[i].d.next = self.fpm[i - l].q.val();
            }
            for k in self._fpm1..self._fp {
                for i in 0..self._bytes {
                    self.inp.d_meta[i].next = self.fpm[k * l + i].q.val();
                }
            }
        }
        for l in self._segs..(self._segs + 1) {
            for i in self._segs..self._fnc {
                self.fpc[i].d.next = self.fpc[i - l].q.val();
            }
            for k in self._fpm1..self._fp {
                for s in 0..self._segs {
                    self.inp.d_counts[s].next = self.fpc[k * l + s].q.val();
                }
            }
        }
        // z: the outer group's from the port (out.min bytes 0-1, out.step
        // 2-3), the middle group's from stage 0 (mid.min 4-5, mid.step
        // 6-7), one cycle later and one step shorter, so both leave with
        // the beat
        for _f in 0..self._paper {
            self.fz[0].clock.next = self.clock.val();
            self.fz[0].reset.next = self.reset.val();
            self.fz[0].en.next = self.fadv[0].val();
            self.fz[0].min_lo.next = self.d_meta[0].val();
            self.fz[0].min_hi.next = self.d_meta[1].val();
            self.fz[0].step_lo.next = self.d_meta[2].val();
            self.fz[0].step_hi.next = self.d_meta[3].val();
            self.fz[1].clock.next = self.clock.val();
            self.fz[1].reset.next = self.reset.val();
            self.fz[1].en.next = self.fadv[0].val();
            self.fz[1].min_lo.next = self.fpm[4].q.val();
            self.fz[1].min_hi.next = self.fpm[5].q.val();
            self.fz[1].step_lo.next = self.fpm[6].q.val();
            self.fz[1].step_hi.next = self.fpm[7].q.val();
            self.fzq[0].clock.next = self.clock.val();
            self.fzq[0].reset.next = self.reset.val();
            self.fzq[0].push.next = self.fpush[0].val();
            self.fzq[0].pop.next = self.aln.fire.val();
            self.fzq[0].wdata.next = self.fz[0].zw.val() | self.fz[1].zw.val();
        }

        // ---------------- aligner (spec §4.3) and K0's flags ----------------
        self.aln.clock.next = self.clock.val();
        self.aln.reset.next = self.reset.val();
        self.aln.adv.next = self.adv.val();
        self.aln.d_avail.next = self.inp.d_avail.val();
        self.aln.s_avail.next = self.inp.s_avail.val();
        self.aln.d_occ.next = self.inp.d_occ_q.val();
        for s in 0..self._segs {
            self.aln.h_cnt[s].next = self.inp.h_cnt[s].val();
        }
        self.aln.h_cnt1.next = self.inp.h_cnt1.val();
        self.aln.w_cnt0.next = self.d_counts[0].val();
        for k in self._fpm1..self._fp {
            for l in self._segs..(self._segs + 1) {
                self.aln.w_cnt0.next = self.fpc[k * l].q.val();
            }
        }
        self.aln.h_n.next = self.inp.h_n.val();
        self.aln.h_bad.next = self.inp.h_bad.val();
        for p in 0..self._lanes {
            self.aln.shead[p].next = self.inp.shead_q[p].val();
        }

        // ---------------- K0: slots, entries, taken ----------------
        for p in 0..self._lanes {
            self.k0_dense[p].clock.next = self.clock.val();
            self.k0_dense[p].reset.next = self.reset.val();
            self.k0_dense[p].en.next = self.aln.fire.val();
            self.k0_dense[p].d.next = self.inp.h_dense[p].val();
            self.k0_ent[p].clock.next = self.clock.val();
            self.k0_ent[p].reset.next = self.reset.val();
            self.k0_ent[p].en.next = self.aln.fire.val();
            self.k0_ent[p].d.next = self.aln.ent[p].val();
            self.k0_tk[p].clock.next = self.clock.val();
            self.k0_tk[p].reset.next = self.reset.val();
            self.k0_tk[p].en.next = self.aln.fire.val();
            self.k0_tk[p].d.next = self.aln.take[p].val();
        }

        // ---------------- K1: taken entries to their lanes ----------------
        self.mv.next = self.aln.k_valid.val();
        // lane words (see deq_expand): entry, its lane less its position, taken
        for p in 0..self._lanes {
            self.xs[p].next = ((self.k0_ent[p].q.val() >> self.two8.val()) & self.lmask8.val()) - self.kc8[p].val();
            self.xs1.next = self.xs[p].val();
            self.xe1.next = self.k0_ent[p].q.val();
            self.xw[p].next = (bit_cast::<XW, 8>(self.xs1.val()) << self.mv17.val()) | bit_cast::<XW, 8>(self.xe1.val());
            self.x32.x_in[p].next = self.xw[p].val();
            if self.k0_tk[p].q.val() {
                self.x32.x_in[p].next = self.xw[p].val() | self.tk17.val();
            }
            self.x16.x_in[p].next = self.x32.x_out[p].val();
            self.x8.x_in[p].next = self.x16.x_out[p].val();
            self.x4.x_in[p].next = self.x8.x_out[p].val();
            self.x2.x_in[p].next = self.x4.x_out[p].val();
            self.x1.x_in[p].next = self.x2.x_out[p].val();
            self.xw1[p].next = self.x1.x_out[p].val();
            self.k1_has[p].clock.next = self.clock.val();
            self.k1_has[p].reset.next = self.reset.val();
            self.k1_has[p].en.next = self.adv.val();
            self.k1_has[p].d.next = self.xw1[p].val().get_bit(self.xtk.val().index());
            self.k1_ent[p].clock.next = self.clock.val();
            self.k1_ent[p].reset.next = self.reset.val();
            self.k1_ent[p].en.next = self.adv.val();
            self.k1_ent[p].d.next = self.zero8.val();
            if self.xw1[p].val().get_bit(self.xtk.val().index()) {
                self.k1_ent[p].d.next = self.xw1[p].val().get_bits::<8>(0);
            }
            self.k1_dense[p].clock.next = self.clock.val();
            self.k1_dense[p].reset.next = self.reset.val();
            self.k1_dense[p].en.next = self.adv.val();
            self.k1_dense[p].d.next = self.k0_dense[p].q.val();
        }

        // ---------------- K0..K2: token fields; the record's bases and steps ----------------
        // they load at a record's first beat (K1 -> K2)
        self.rec_en.next = self.adv.val() & self.pv[0].q.val() & self.pf[0].q.val();
        self.fields.clock.next = self.clock.val();
        self.fields.reset.next = self.reset.val();
        self.fields.fire.next = self.aln.fire.val();
        self.fields.adv.next = self.adv.val();
        self.fields.rec_en.next = self.rec_en.val();
        for i in 0..self._bytes {
            self.fields.meta[i].next = self.inp.h_meta[i].val();
        }
        self.fields.thr.next = self.inp.h_thr.val();
        self.fields.oob.next = self.inp.h_oob.val();
        for _f in 0..self._paper {
            self.fields.zin[0].next = self.fzq[0].rdata.val();
            self.fields.k1_first[0].next = self.pf[0].q.val();
        }

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
        self.pf[0].d.next = self.aln.k_first.val();
        self.pl[0].d.next = self.aln.k_last.val();
        self.pe[0].d.next = self.aln.k_err.val();
        self.po[0].d.next = false;
        for k in 1..self._stages {
            self.pv[k].d.next = self.pv[k - 1].q.val();
            self.pf[k].d.next = self.pf[k - 1].q.val();
            self.pl[k].d.next = self.pl[k - 1].q.val();
            self.pe[k].d.next = self.pe[k - 1].q.val();
            self.po[k].d.next = self.po[k - 1].q.val();
        }
        // the token's layer_oob joins the flags at K2
        self.po[1].d.next = self.fields.k1_oob_q.val();
        if !self.pf[0].q.val() {
            self.po[1].d.next = self.fields.tok_oob_q.val();
        }

        // ---------------- K2..R2: one arithmetic lane per element ----------------
        for p in 0..self._lanes {
            self.lane[p].clock.next = self.clock.val();
            self.lane[p].reset.next = self.reset.val();
            self.lane[p].adv.next = self.adv.val();
            self.lane[p].has.next = self.k1_has[p].q.val();
            self.lane[p].ent.next = self.k1_ent[p].q.val();
            self.lane[p].dense.next = self.k1_dense[p].q.val();
            self.lane[p].bq0.next = self.fields.bq_q[0].val();
            self.lane[p].bq1.next = self.fields.bq_q[1].val();
            self.lane[p].bq2.next = self.fields.bq_q[2].val();
            self.lane[p].bq3.next = self.fields.bq_q[3].val();
            self.lane[p].bq4.next = self.fields.bq_q[4].val();
            self.lane[p].bq5.next = self.fields.bq_q[5].val();
            self.lane[p].stp0.next = self.fields.stp_q[0].val();
            self.lane[p].stp1.next = self.fields.stp_q[1].val();
            self.lane[p].stp2.next = self.fields.stp_q[2].val();
            self.lane[p].sig0.next = self.fields.sig_q[0].val();
            self.lane[p].sig1.next = self.fields.sig_q[1].val();
            self.lane[p].sig2.next = self.fields.sig_q[2].val();
            self.lane[p].sig3.next = self.fields.sig_q[3].val();
            self.lane[p].sig4.next = self.fields.sig_q[4].val();
            self.lane[p].sig5.next = self.fields.sig_q[5].val();
            self.out_data[p].next = self.lane[p].y.val();
            // paper: selection 2 is unused; its base port carries the z words
            for _f in 0..self._paper {
                self.lane[p].bq2.next = self.fields.zc[0].val();
            }
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
