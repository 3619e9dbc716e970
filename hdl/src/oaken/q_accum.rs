//! Token accumulation of the Oaken quantization engine: each beat's class
//! extremes (the extremes tree's output) merged into the token's running
//! nodes, per-segment outlier counts, and the token's status; one cycle
//! after a token's last beat its summary is presented to the per-token
//! unit, as the five subgroup nodes that unit takes.
//! Paper: Oaken (ISCA 2025) §4.3 (per-token min and max of each group),
//! §5.2 "Quantization engine". Spec: docs/spec.md §2.6 (group extremes),
//! §2.8 (segment counts), §2.9 (status), §2.14 (the accumulator is the
//! tree's last merge level).

use super::extremes::{MinMax2, NODE, SUBGROUPS, TAG};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QAccumulate {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the tree presents a beat's result
    pub in_valid: Signal<In, Bit>,
    /// the beat's tag (extremes.rs layout: thresholds, segment, first,
    /// last, nonfinite, oob)
    pub in_tag: Signal<In, Bits<TAG>>,
    /// the beat's node per class
    pub in_node: Vec<Signal<In, Bits<NODE>>>,
    /// the beat's outliers (its elements outside the middle group)
    pub in_outliers: Signal<In, Bits<8>>,
    /// the token's summary is present (one cycle, after its last beat)
    pub tok_valid: Signal<Out, Bit>,
    /// the token's subgroup nodes (a plain middle group's single class as
    /// the lower side, the upper absent)
    pub node: Vec<Signal<Out, Bits<NODE>>>,
    /// the token's threshold set
    pub thr: Signal<Out, Bits<64>>,
    /// the token's outlier count per segment
    pub counts: Vec<Signal<Out, Bits<8>>>,
    /// the token's status: bit 0 non-finite input, bit 1 layer out of range
    pub status: Signal<Out, Bits<2>>,
    acc_cmb: Vec<MinMax2>,
    acc_node: Vec<Reg<Bits<NODE>>>,
    acc_cnt: Vec<Reg<Bits<8>>>,
    acc_cnt_d: Vec<Signal<Local, Bits<8>>>,
    acc_nf: Reg<Bit>,
    acc_nf_d: Signal<Local, Bit>,
    t_first: Signal<Local, Bit>,
    t_last: Signal<Local, Bit>,
    t_seg: Signal<Local, Bits<16>>,
    st_d: Signal<Local, Bits<2>>,
    tok_v: Reg<Bit>,
    tok_thr: Reg<Bits<64>>,
    tok_status: Reg<Bits<2>>,
    /// Segment indices 0 .. counts.
    seg_idx: Vec<Constant<Bits<16>>>,
    /// Tag field positions: segment, first, last, nonfinite, oob.
    tag_beat: Constant<Bits<32>>,
    tag_first: Constant<Bits<32>>,
    tag_last: Constant<Bits<32>>,
    tag_nf: Constant<Bits<32>>,
    tag_oob: Constant<Bits<32>>,
    /// Status bit 1: layer out of range.
    st_oob: Constant<Bits<2>>,
    zero8: Constant<Bits<8>>,
    /// The node of an empty subgroup.
    absent: Constant<Bits<NODE>>,
    /// Classes of the tree: 4 (plain middle) or 5.
    _classes: usize,
    _cnts: usize,
    _mid_shifted: usize,
    _mid_plain: usize,
}

impl QAccumulate {
    /// `classes` of the tree (4 plain middle, 5 shifted); `counts`: segment
    /// counts of a token (heads * segments).
    pub fn new(classes: usize, counts: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        QAccumulate {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_tag: Default::default(),
            in_node: sigs(classes),
            in_outliers: Default::default(),
            tok_valid: Default::default(),
            node: sigs(SUBGROUPS),
            thr: Default::default(),
            counts: sigs(counts),
            status: Default::default(),
            acc_cmb: (0..classes).map(|_| MinMax2::default()).collect(),
            acc_node: regs(classes),
            acc_cnt: regs(counts),
            acc_cnt_d: sigs(counts),
            acc_nf: Reg::default(),
            acc_nf_d: Default::default(),
            t_first: Default::default(),
            t_last: Default::default(),
            t_seg: Default::default(),
            st_d: Default::default(),
            tok_v: Reg::default(),
            tok_thr: Reg::default(),
            tok_status: Reg::default(),
            seg_idx: consts(0..counts as u64),
            tag_beat: c(64),
            tag_first: c(80),
            tag_last: c(81),
            tag_nf: c(82),
            tag_oob: c(83),
            st_oob: c(2),
            zero8: c(0),
            absent: c(super::extremes::ABSENT),
            _classes: classes,
            _cnts: counts,
            _mid_shifted: (classes == 5) as usize,
            _mid_plain: (classes == 4) as usize,
        }
    }
}

impl Logic for QAccumulate {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, acc_nf, tok_v, tok_thr, tok_status);
        self.acc_nf.reset.next = self.reset.val();
        self.tok_v.reset.next = self.reset.val();
        self.tok_thr.reset.next = self.reset.val();
        self.tok_status.reset.next = self.reset.val();
        self.t_first.next = self.in_tag.val().get_bit(self.tag_first.val().index());
        self.t_last.next = self.in_tag.val().get_bit(self.tag_last.val().index());
        self.t_seg.next = self.in_tag.val().get_bits::<16>(self.tag_beat.val().index());
        for c in 0..self._classes {
            self.acc_cmb[c].a.next = self.acc_node[c].q.val();
            self.acc_cmb[c].b.next = self.in_node[c].val();
            self.acc_node[c].clock.next = self.clock.val();
            self.acc_node[c].reset.next = self.reset.val();
            self.acc_node[c].en.next = self.in_valid.val();
            self.acc_node[c].d.next = self.acc_cmb[c].y.val();
            if self.t_first.val() {
                self.acc_node[c].d.next = self.in_node[c].val();
            }
        }
        for s in 0..self._cnts {
            self.acc_cnt_d[s].next = self.acc_cnt[s].q.val();
            if self.t_first.val() {
                self.acc_cnt_d[s].next = self.zero8.val();
            }
            if self.t_seg.val() == self.seg_idx[s].val() {
                self.acc_cnt_d[s].next = self.acc_cnt_d[s].val() + self.in_outliers.val();
            }
            self.acc_cnt[s].clock.next = self.clock.val();
            self.acc_cnt[s].reset.next = self.reset.val();
            self.acc_cnt[s].en.next = self.in_valid.val();
            self.acc_cnt[s].d.next = self.acc_cnt_d[s].val();
            self.counts[s].next = self.acc_cnt[s].q.val();
        }
        self.acc_nf_d.next =
            self.in_tag.val().get_bit(self.tag_nf.val().index()) | (self.acc_nf.q.val() & !self.t_first.val());
        self.acc_nf.en.next = self.in_valid.val();
        self.acc_nf.d.next = self.acc_nf_d.val();
        self.st_d.next = bit_cast::<2, 1>(self.acc_nf_d.val().into());
        if self.in_tag.val().get_bit(self.tag_oob.val().index()) {
            self.st_d.next = self.st_d.val() | self.st_oob.val();
        }
        self.tok_v.en.next = true;
        self.tok_v.d.next = self.in_valid.val() & self.t_last.val();
        self.tok_thr.en.next = self.in_valid.val() & self.t_last.val();
        self.tok_thr.d.next = self.in_tag.val().get_bits::<64>(0);
        self.tok_status.en.next = self.in_valid.val() & self.t_last.val();
        self.tok_status.d.next = self.st_d.val();
        self.tok_valid.next = self.tok_v.q.val();
        self.thr.next = self.tok_thr.q.val();
        self.status.next = self.tok_status.q.val();
        // subgroup nodes for the per-token unit: a plain middle group's
        // single class as the lower side, the upper absent
        self.node[0].next = self.acc_node[0].q.val();
        self.node[2].next = self.acc_node[2].q.val();
        self.node[3].next = self.absent.val();
        for _m in 0..self._mid_plain {
            self.node[1].next = self.acc_node[1].q.val();
            self.node[4].next = self.acc_node[3].q.val();
        }
        for _m in 0..self._mid_shifted {
            for z in self._classes..(self._classes + 1) {
                self.node[1].next = self.acc_node[1].q.val();
                self.node[3].next = self.acc_node[z - 2].q.val();
                self.node[4].next = self.acc_node[z - 1].q.val();
            }
        }
    }
}
