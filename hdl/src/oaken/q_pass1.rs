//! Pass 1 of the Oaken quantization engine, its I0 and B stages: the
//! accepted beat sanitised and registered (I0) with where it lies and its
//! token's threshold set, then each lane's subgroup and order key and the
//! beat's tag, which enter the extremes tree (B).
//! Paper: Oaken (ISCA 2025) §4.3 (decomposition by the four thresholds),
//! §5.2 "Quantization engine" (decomposer). Spec: docs/spec.md §2.4
//! (classes), §2.13 (a threshold write and a first beat at the same edge),
//! §2.14 (pass 1).
//!
//! The set is read from the threshold table at the token's first beat. A
//! write sampled at that same edge reaches the set one cycle later, so for
//! that cycle the set in use is the write's (`fix`).

use super::classify::{Classify, Key, Sanitize};
use super::extremes::TAG;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QPass1 {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// a beat is accepted this cycle
    pub accept: Signal<In, Bit>,
    /// the accepted beat is its token's first
    pub first: Signal<In, Bit>,
    /// the accepted beat is its token's last
    pub last: Signal<In, Bit>,
    /// global segment index of the accepted beat
    pub seg: Signal<In, Bits<16>>,
    /// FP16 elements of the beat at the input, one per lane
    pub in_data: Vec<Signal<In, Bits<16>>>,
    /// threshold table: the set read for the input token
    pub rd_set: Signal<In, Bits<64>>,
    /// threshold table: the read layer is out of range
    pub rd_oob: Signal<In, Bit>,
    /// threshold table: this edge's write hits the read set
    pub rd_hit_now: Signal<In, Bit>,
    /// threshold table: a set was written one cycle ago
    pub wr_valid: Signal<In, Bit>,
    /// threshold table: the set written one cycle ago
    pub wr_set: Signal<In, Bits<64>>,
    /// I0 holds an accepted beat
    pub valid: Signal<Out, Bit>,
    /// I0's sanitised elements (meaningful under `valid`)
    pub x: Vec<Signal<Out, Bits<16>>>,
    /// per lane: order key
    pub key: Vec<Signal<Out, Bits<16>>>,
    /// per lane: extremes-tree class
    pub cls_out: Vec<Signal<Out, Bits<3>>>,
    /// per lane: the element is an outlier (outer or inner)
    pub outl: Vec<Signal<Out, Bit>>,
    /// {oob, nonfinite, last, first, global segment, thresholds} of I0's beat
    pub tag: Signal<Out, Bits<TAG>>,
    // I0: the beat, sanitised (loaded every cycle, valid with i0_v)
    san: Vec<Sanitize>,
    i0_x: Vec<Reg<Bits<16>>>,
    i0_v: Reg<Bit>,
    i0_first: Reg<Bit>,
    i0_last: Reg<Bit>,
    /// Global segment index (head * segments + segment) of the beat.
    i0_seg: Reg<Bits<16>>,
    i0_nf: Reg<Bit>,
    nf_any: Signal<Local, Bit>,
    /// The token's threshold set and its layer-out-of-range flag.
    tok_set: Reg<Bits<64>>,
    tok_oob: Reg<Bit>,
    /// The first beat's set must take the write of its own edge.
    fix_v: Reg<Bit>,
    fix: Signal<Local, Bit>,
    set_cur: Signal<Local, Bits<64>>,
    // B: the thresholds' and elements' order keys, the elements' classes
    thr_key: Vec<Key>,
    cls: Vec<Classify>,
    elem_key: Vec<Key>,
    /// Threshold fields of the set: lo_outer, lo_inner, hi_inner, hi_outer.
    thr_off: Vec<Constant<Bits<32>>>,
    /// Subgroup codes of the lower and upper middle subgroups.
    sg_mlo: Constant<Bits<3>>,
    sg_mhi: Constant<Bits<3>>,
    /// Tag field positions: segment, first, last, nonfinite, oob.
    sh64: Constant<Bits<TAG>>,
    sh80: Constant<Bits<TAG>>,
    sh81: Constant<Bits<TAG>>,
    sh82: Constant<Bits<TAG>>,
    sh83: Constant<Bits<TAG>>,
    _lanes: usize,
    /// The middle group is plain (1): its two subgroups are one class.
    _mid_plain: usize,
}

impl QPass1 {
    /// `lanes` elements per beat; `mid_shifted`: the middle group is shifted
    /// (five tree classes) or plain (four).
    pub fn new(lanes: usize, mid_shifted: bool) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        QPass1 {
            clock: Default::default(),
            reset: Default::default(),
            accept: Default::default(),
            first: Default::default(),
            last: Default::default(),
            seg: Default::default(),
            in_data: sigs(lanes),
            rd_set: Default::default(),
            rd_oob: Default::default(),
            rd_hit_now: Default::default(),
            wr_valid: Default::default(),
            wr_set: Default::default(),
            valid: Default::default(),
            x: sigs(lanes),
            key: sigs(lanes),
            cls_out: sigs(lanes),
            outl: sigs(lanes),
            tag: Default::default(),
            san: (0..lanes).map(|_| Sanitize::default()).collect(),
            i0_x: regs(lanes),
            i0_v: Reg::default(),
            i0_first: Reg::default(),
            i0_last: Reg::default(),
            i0_seg: Reg::default(),
            i0_nf: Reg::default(),
            nf_any: Default::default(),
            tok_set: Reg::default(),
            tok_oob: Reg::default(),
            fix_v: Reg::default(),
            fix: Default::default(),
            set_cur: Default::default(),
            thr_key: (0..4).map(|_| Key::default()).collect(),
            cls: (0..lanes).map(|_| Classify::default()).collect(),
            elem_key: (0..lanes).map(|_| Key::default()).collect(),
            thr_off: consts((0..4).map(|i| 16 * i)),
            sg_mlo: c(1),
            sg_mhi: c(3),
            sh64: c(64),
            sh80: c(80),
            sh81: c(81),
            sh82: c(82),
            sh83: c(83),
            _lanes: lanes,
            _mid_plain: !mid_shifted as usize,
        }
    }
}

impl Logic for QPass1 {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, i0_v, i0_first, i0_last, i0_seg, i0_nf, tok_set, tok_oob, fix_v);
        self.i0_v.reset.next = self.reset.val();
        self.i0_first.reset.next = self.reset.val();
        self.i0_last.reset.next = self.reset.val();
        self.i0_seg.reset.next = self.reset.val();
        self.i0_nf.reset.next = self.reset.val();
        self.tok_set.reset.next = self.reset.val();
        self.tok_oob.reset.next = self.reset.val();
        self.fix_v.reset.next = self.reset.val();
        // I0: the accepted beat, sanitised; the token's threshold set, read
        // at its first beat (a legal write of that same cycle included)
        self.i0_v.en.next = true;
        self.i0_v.d.next = self.accept.val();
        self.i0_first.en.next = self.accept.val();
        self.i0_first.d.next = self.first.val();
        self.i0_last.en.next = self.accept.val();
        self.i0_last.d.next = self.last.val();
        self.i0_seg.en.next = self.accept.val();
        self.i0_seg.d.next = self.seg.val();
        // a write sampled at the same edge reaches the set one cycle later:
        // until then the set in use is the write's (the rule of §2.13,
        // without the write port's checks on the path into the set)
        self.fix_v.en.next = true;
        self.fix_v.d.next = self.accept.val() & self.first.val() & self.rd_hit_now.val();
        self.fix.next = self.fix_v.q.val() & self.wr_valid.val();
        self.set_cur.next = self.tok_set.q.val();
        if self.fix.val() {
            self.set_cur.next = self.wr_set.val();
        }
        self.tok_set.en.next = (self.accept.val() & self.first.val()) | self.fix.val();
        self.tok_set.d.next = self.wr_set.val();
        if self.accept.val() & self.first.val() {
            self.tok_set.d.next = self.rd_set.val();
        }
        self.tok_oob.en.next = self.accept.val() & self.first.val();
        self.tok_oob.d.next = self.rd_oob.val();
        self.nf_any.next = false;
        for p in 0..self._lanes {
            self.san[p].x.next = self.in_data[p].val();
            self.nf_any.next = self.nf_any.val() | self.san[p].nonfinite.val();
            self.i0_x[p].clock.next = self.clock.val();
            // pure data: the sanitiser's output, read only under i0_v
            self.i0_x[p].reset.next = false;
            self.i0_x[p].en.next = true;
            self.i0_x[p].d.next = self.san[p].y.val();
            self.x[p].next = self.i0_x[p].q.val();
        }
        self.i0_nf.en.next = self.accept.val();
        self.i0_nf.d.next = self.nf_any.val();
        self.valid.next = self.i0_v.q.val();
        // B: each lane's class (spec §2.4) and order key, into the tree
        for t in 0..4 {
            self.thr_key[t].x.next = self.set_cur.val().get_bits::<16>(self.thr_off[t].val().index());
        }
        for p in 0..self._lanes {
            self.cls[p].x.next = self.i0_x[p].q.val();
            self.cls[p].k_lo_o.next = self.thr_key[0].key.val();
            self.cls[p].k_lo_i.next = self.thr_key[1].key.val();
            self.cls[p].k_hi_i.next = self.thr_key[2].key.val();
            self.cls[p].k_hi_o.next = self.thr_key[3].key.val();
            self.elem_key[p].x.next = self.i0_x[p].q.val();
            self.key[p].next = self.elem_key[p].key.val();
            // classes: the subgroups, both middle ones as one when plain
            self.cls_out[p].next = self.cls[p].sg.val();
            for _m in 0..self._mid_plain {
                if self.cls[p].sg.val() == self.sg_mhi.val() {
                    self.cls_out[p].next = self.sg_mlo.val();
                }
                // (OU = 4 is the only subgroup with bit 2 set)
                if self.cls[p].sg.val().get_bit(2) {
                    self.cls_out[p].next = self.sg_mhi.val();
                }
            }
            self.outl[p].next = (self.cls[p].sg.val() != self.sg_mlo.val()) & (self.cls[p].sg.val() != self.sg_mhi.val());
        }
        // tag: {oob, nonfinite, last, first, global segment, thresholds}
        self.tag.next = bit_cast::<TAG, 64>(self.set_cur.val())
            | (bit_cast::<TAG, 16>(self.i0_seg.q.val()) << self.sh64.val())
            | (bit_cast::<TAG, 1>(self.i0_first.q.val().into()) << self.sh80.val())
            | (bit_cast::<TAG, 1>(self.i0_last.q.val().into()) << self.sh81.val())
            | (bit_cast::<TAG, 1>(self.i0_nf.q.val().into()) << self.sh82.val())
            | (bit_cast::<TAG, 1>(self.tok_oob.q.val().into()) << self.sh83.val());
    }
}
