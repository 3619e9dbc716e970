//! Oaken quantization engine.
//! Paper: Oaken (ISCA 2025) §4.3-4.5 and §5.2 "Quantization engine"
//! (decomposer, inlier/outlier quantizers, OR-merge, COO generation with a
//! zero-remove shifter). Spec: docs/spec.md §2 (numbers, groups, codes,
//! encodings, interface §2.13, structure §2.14).
//!
//! Two passes per token. Pass 1 (never stalls) takes beats as they come,
//! sanitises and classifies them, writes them to the token buffer and
//! reduces each subgroup's extremes; at the token's last beat the per-token
//! unit derives each group's min and step. Pass 2 reads the buffered beats
//! once their token's parameters are ready, codes every lane, compacts the
//! COO entries and presents the output beat. Input is credit-gated: a beat
//! is accepted only while the buffer has a free slot for it, so pass 1 and
//! the per-token unit never wait, and output backpressure stalls pass 2 as a
//! whole.
//!
//! Sub-blocks, in pipeline order: `q_credit` (acceptance, credit, the
//! beat's place), `q_pass1` (I0 and the classes into the tree),
//! `extremes` (the tree), `q_accum` (token accumulation), `token_params`
//! (per-token min and step), `q_consts` (constants FIFO), `q_tokvals`
//! (pass 2's token values), `encode_lane` (per lane), `q_output` (COO
//! compaction and the metadata FIFO). This file keeps the threshold table,
//! the token buffer and pass 2's issue and beat tracking.

use super::encode_lane::EncodeLane;
use super::extremes::ExtremeTree;
use super::q_accum::QAccumulate;
use super::q_consts::QConstFifo;
use super::q_credit::QCredit;
use super::q_output::QOutput;
use super::q_pass1::QPass1;
use super::q_tokvals::QTokenValues;
use super::table::ThresholdTable;
use super::token_params::TokenParams;
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use crate::prim::zero_remove::ZeroRemove;
use rust_hdl::prelude::*;
use sim::oaken::params::{Group, MiddleMode, OakenParams, SEGMENT};

/// Registers after every second stage of the COO zero-remove shifter.
pub const SHIFTER_PIPELINE: usize = 2;

/// Derived sizes of one engine instance.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub lanes: usize,
    /// Beats of a token vector (all heads), and of one head.
    pub beats: usize,
    pub head_beats: usize,
    /// Segment counts of a token: `heads * segments`.
    pub counts: usize,
    /// Beats of one 64-element segment (a head's last one may be shorter).
    pub seg_beats: usize,
    /// Token buffer depth in beats (a memory, `DpRam`).
    pub buffer: usize,
    pub const_fifo: usize,
    pub meta_fifo: usize,
    pub side_fifo: usize,
    /// Cycles from a first beat's acceptance to its first output beat, when
    /// the output is always ready.
    pub latency: usize,
}

impl Geometry {
    /// The memories of an instance (manifest, spec §2.14).
    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        vec![MemInfo {
            module: format!("{module}_tbuf_ram"),
            name: "token_buffer".into(),
            depth: self.buffer,
            width: 16 * self.lanes,
        }]
    }

    pub fn new(p: &OakenParams) -> Geometry {
        let lanes = p.lanes;
        let beats = p.beats();
        let tree = ExtremeTree::latency(lanes);
        let tp = TokenParams::latency(p.middle_mode == MiddleMode::Paper, p.outlier_bits as usize);
        let lane = super::encode_lane::latency(p.inlier_bits as usize);
        let zl = ZeroRemove::<8>::latency(lanes, SHIFTER_PIPELINE);
        // A beat is counted against the buffer from its acceptance until
        // pass 2 reads it. The first beat of a token waits for the token's
        // last beat (beats-1), the input register (1), the tree's registers,
        // the accumulator (1) and the per-token unit (whose result pass 2
        // takes in the cycle it appears, through the constants FIFO when
        // that is empty); every later beat waits as long, so a beat per
        // cycle keeps `wait` slots busy, and the registered `ready` needs one
        // more.
        let wait = beats - 1 + 1 + tree + 1 + tp;
        let buffer = wait + 1;
        let pass2 = 1 + lane + zl;
        Geometry {
            lanes,
            beats,
            head_beats: p.head_beats(),
            counts: p.heads * p.segments(),
            seg_beats: SEGMENT / lanes,
            buffer,
            // constants of tokens not yet started in pass 2: each has every
            // beat in the buffer, so at most buffer / beats of them, one more
            // for a push and a pop at the same edge
            const_fifo: buffer / beats + 1,
            // tokens with a beat in pass 2's registers
            meta_fifo: pass2.div_ceil(beats) + 1,
            // tokens in the per-token unit (one at most every `beats` cycles)
            side_fifo: tp.div_ceil(beats) + 1,
            // the first beat is read the cycle the constants FIFO fills; its
            // wait already counts that cycle
            latency: wait + pass2,
        }
    }
}

#[derive(LogicBlock)]
pub struct OakenQuantizer<const IB: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    // threshold table write port (spec §2.3)
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
    // input beats
    /// input beat valid
    pub in_valid: Signal<In, Bit>,
    /// input beat accepted when in_valid and in_ready
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements of the beat, lane i at [16i+15:16i]
    pub in_data: Vec<Signal<In, Bits<16>>>,
    /// token's layer, sampled with its first beat
    pub in_layer: Signal<In, Bits<8>>,
    /// token's K/V, sampled with its first beat
    pub in_kv: Signal<In, Bit>,
    // output beats
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// dense slots of the beat's elements, lane i at [IB*i+IB-1:IB*i]
    pub out_dense: Vec<Signal<Out, Bits<IB>>>,
    /// the beat's COO entries {idx, grp, hi}, compacted from lane 0
    pub out_coo: Vec<Signal<Out, Bits<8>>>,
    /// COO entries in this beat
    pub out_coo_count: Signal<Out, Bits<8>>,
    /// first beat of a token
    pub out_first: Signal<Out, Bit>,
    /// last beat of a token
    pub out_last: Signal<Out, Bit>,
    /// token metadata word (spec §2.9: six FP16 fields), constant over the token
    pub out_meta: Vec<Signal<Out, Bits<8>>>,
    /// every head's segment counts, head-major, count i at [8i+7:8i], constant over the token
    pub out_counts: Vec<Signal<Out, Bits<8>>>,
    /// bit 0 non-finite input seen, bit 1 layer out of range
    pub out_status: Signal<Out, Bits<2>>,

    thr_tab: ThresholdTable,
    // ---- pass 1 ----
    /// Acceptance against the buffer's credit, the beat's position.
    credit: QCredit,
    /// I0 (the beat sanitised, its token's set) and B (classes, keys, tag).
    pass1: QPass1,
    tree: ExtremeTree,
    /// Token accumulation: the tree's last merge level.
    accum: QAccumulate,
    params: TokenParams,
    /// Constants FIFO: {thr, (min, step) x 3} per token, counts, status.
    cfifo: QConstFifo,
    // token buffer: one memory word per beat, write and read pointers and
    // the number of beats written and not yet read
    tbram: DpRam<16, 1024>,
    wp: Reg<Bits<16>>,
    rp: Reg<Bits<16>>,
    bcnt: Reg<Bits<16>>,
    bw: Signal<Local, Bits<1024>>,
    btmp: Signal<Local, Bits<16>>,
    // ---- pass 2 ----
    en2: Signal<Local, Bit>,
    rd_beat: Signal<Local, Bit>,
    rd_first: Signal<Local, Bit>,
    bc_out: Reg<Bits<16>>,
    bh_out: Reg<Bits<16>>,
    /// The token's values for the lanes (P0, P1 and the divisor fields).
    tokvals: QTokenValues,
    lane: Vec<EncodeLane<IB>>,
    // per-beat valid, first, last and COO index base (beat * lanes mod 64)
    // along pass 2 (P0..assembly)
    pv: Vec<Reg<Bit>>,
    pf: Vec<Reg<Bit>>,
    pl: Vec<Reg<Bit>>,
    pb: Vec<Reg<Bits<8>>>,
    /// COO compaction, the dense slots alongside, the metadata FIFO.
    ostage: QOutput<IB>,

    // constants
    lane_off: Vec<Constant<Bits<1024>>>,
    lane_bit: Vec<Constant<Bits<32>>>,
    last_beat: Constant<Bits<16>>,
    buf_last: Constant<Bits<16>>,
    head_last: Constant<Bits<16>>,
    lane_shift: Constant<Bits<8>>,
    mask6: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,

    _lanes: usize,
    /// Classes of the extremes tree: 4 (plain middle) or 5.
    _classes: usize,
    _cnts: usize,
    /// Pass-2 stages from P0 to the lane outputs.
    _p2: usize,
    /// `paper` mode: the folded groups' z go with each token's record
    _paper: usize,
}

impl<const IB: usize> OakenQuantizer<IB> {
    /// `module`: the emitted module's name, which prefixes the token
    /// buffer's storage module.
    pub fn new(p: &OakenParams, module: &str) -> Self {
        p.validate().expect("parameters are validated by the generator");
        assert_eq!(p.inlier_bits as usize, IB);
        let g = Geometry::new(p);
        let l = g.lanes;
        // every head's segment counts
        let s = g.counts;
        let p2 = EncodeLane::<IB>::latency();
        let ts = EncodeLane::<IB>::step_stages(IB);
        let mid_shifted = p.middle_mode == MiddleMode::Shifted;
        // paper mode shifts both middle sides too (folded, spec §2.5): the
        // tree keeps them apart and pass 2 offsets each by its threshold
        let paper = p.middle_mode == MiddleMode::Paper;
        let mid_split = mid_shifted || paper;
        let divisors = [Group::Outer, Group::Middle, Group::Inner].map(|gr| p.coding(gr).levels_minus_one());
        let shifted = [Group::Outer, Group::Middle, Group::Inner].map(|gr| p.coding(gr).shifted());
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let classes = if mid_split { 5 } else { 4 };
        OakenQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_data: Default::default(),
            tw_done: Default::default(),
            tw_err: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_data: sigs(l),
            in_layer: Default::default(),
            in_kv: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_dense: sigs(l),
            out_coo: sigs(l),
            out_coo_count: Default::default(),
            out_first: Default::default(),
            out_last: Default::default(),
            out_meta: sigs(12),
            out_counts: sigs(s),
            out_status: Default::default(),
            thr_tab: ThresholdTable::new(p.layers),
            credit: QCredit::new(g.beats, g.head_beats, g.seg_beats, g.buffer),
            pass1: QPass1::new(l, mid_split),
            tree: ExtremeTree::new(l, classes),
            accum: QAccumulate::new(classes, s),
            params: TokenParams::new(divisors, shifted, paper, s, g.side_fifo, g.beats),
            cfifo: QConstFifo::new(s, g.const_fifo),
            tbram: {
                let m = &g.memories(module)[0];
                DpRam::new(&m.module, &m.name, m.depth, m.width)
            },
            wp: Reg::default(),
            rp: Reg::default(),
            bcnt: Reg::default(),
            bw: Default::default(),
            btmp: Default::default(),
            en2: Default::default(),
            rd_beat: Default::default(),
            rd_first: Default::default(),
            bc_out: Reg::default(),
            bh_out: Reg::default(),
            tokvals: QTokenValues::new(mid_split, paper, ts),
            lane: (0..l).map(|_| EncodeLane::new(mid_shifted, paper)).collect(),
            pv: regs(p2 + 1),
            pf: regs(p2 + 1),
            pl: regs(p2 + 1),
            pb: regs(p2 + 1),
            ostage: QOutput::new(l, SHIFTER_PIPELINE, s, g.meta_fifo),
            lane_off: consts((0..l).map(|i| 16 * i as u64)),
            lane_bit: consts((0..l).map(|i| 16 * i as u64)),
            last_beat: c((g.beats - 1) as u64),
            buf_last: c((g.buffer - 1) as u64),
            head_last: c((g.head_beats - 1) as u64),
            lane_shift: c(l.trailing_zeros() as u64),
            mask6: c(63),
            zero16: c(0),
            one16: c(1),
            _lanes: l,
            _classes: classes,
            _cnts: s,
            _p2: p2,
            _paper: paper as usize,
        }
    }
}

impl<const IB: usize> Logic for OakenQuantizer<IB> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- threshold table ----------------
        self.thr_tab.clock.next = self.clock.val();
        self.thr_tab.reset.next = self.reset.val();
        self.thr_tab.tw_valid.next = self.tw_valid.val();
        self.thr_tab.tw_layer.next = self.tw_layer.val();
        self.thr_tab.tw_kv.next = self.tw_kv.val();
        self.thr_tab.tw_data.next = self.tw_data.val();
        self.tw_done.next = self.thr_tab.tw_done.val();
        self.tw_err.next = self.thr_tab.tw_err.val();
        // read at the acceptance of a token's first beat
        self.thr_tab.rd_layer.next = self.in_layer.val();
        self.thr_tab.rd_kv.next = self.in_kv.val();

        clock!(self, clock, bc_out, bh_out, wp, rp, bcnt);
        self.bh_out.reset.next = self.reset.val();
        self.wp.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.bcnt.reset.next = self.reset.val();
        self.bc_out.reset.next = self.reset.val();

        // Pass 2 issue (first, since pass 1's credit counts its reads): the
        // whole pass advances when its output register is empty or taken.
        self.en2.next = self.ostage.en2.val();
        self.rd_first.next = self.bc_out.q.val() == self.zero16.val();
        self.rd_beat.next =
            self.en2.val()
                & (self.bcnt.q.val() != self.zero16.val())
                & (!self.rd_first.val() | !self.cfifo.empty.val() | self.params.out_valid.val());

        // ---------------- pass 1 ----------------
        // acceptance and credit, the beat's position
        self.credit.clock.next = self.clock.val();
        self.credit.reset.next = self.reset.val();
        self.credit.in_valid.next = self.in_valid.val();
        self.credit.rd_beat.next = self.rd_beat.val();
        self.in_ready.next = self.credit.in_ready.val();
        // I0 and B: the beat sanitised, its token's set; classes, keys, tag
        self.pass1.clock.next = self.clock.val();
        self.pass1.reset.next = self.reset.val();
        self.pass1.accept.next = self.credit.accept.val();
        self.pass1.first.next = self.credit.first.val();
        self.pass1.last.next = self.credit.last.val();
        self.pass1.seg.next = self.credit.seg.val();
        self.pass1.rd_set.next = self.thr_tab.rd_set.val();
        self.pass1.rd_oob.next = self.thr_tab.rd_oob.val();
        self.pass1.rd_hit_now.next = self.thr_tab.rd_hit_now.val();
        self.pass1.wr_valid.next = self.thr_tab.wr_valid.val();
        self.pass1.wr_set.next = self.thr_tab.wr_set.val();
        for p in 0..self._lanes {
            self.pass1.in_data[p].next = self.in_data[p].val();
            self.tree.key[p].next = self.pass1.key[p].val();
            self.tree.cls[p].next = self.pass1.cls_out[p].val();
            self.tree.outl[p].next = self.pass1.outl[p].val();
        }
        // the sanitised beat goes to the token buffer
        self.bw.next = bit_cast::<1024, 1>(false.into());
        for p in 0..self._lanes {
            self.btmp.next = self.pass1.x[p].val();
            self.bw.next = self.bw.val() | (bit_cast::<1024, 16>(self.btmp.val()) << self.lane_off[p].val());
        }
        self.tbram.clock.next = self.clock.val();
        self.tbram.we.next = self.pass1.valid.val();
        self.tbram.waddr.next = self.wp.q.val();
        self.tbram.wdata.next = self.bw.val();
        // pass 2 reads a beat into the memory's output register, which is
        // its P0 stage: it holds while pass 2 is stalled (no read then)
        self.tbram.re.next = self.rd_beat.val();
        self.tbram.raddr.next = self.rp.q.val();
        self.wp.en.next = self.pass1.valid.val();
        self.wp.d.next = self.wp.q.val() + self.one16.val();
        if self.wp.q.val() == self.buf_last.val() {
            self.wp.d.next = self.zero16.val();
        }
        self.rp.en.next = self.rd_beat.val();
        self.rp.d.next = self.rp.q.val() + self.one16.val();
        if self.rp.q.val() == self.buf_last.val() {
            self.rp.d.next = self.zero16.val();
        }
        self.bcnt.en.next = self.pass1.valid.val() ^ self.rd_beat.val();
        self.bcnt.d.next = self.bcnt.q.val() - self.one16.val();
        if self.pass1.valid.val() {
            self.bcnt.d.next = self.bcnt.q.val() + self.one16.val();
        }
        self.tree.clock.next = self.clock.val();
        self.tree.reset.next = self.reset.val();
        self.tree.in_valid.next = self.pass1.valid.val();
        self.tree.in_tag.next = self.pass1.tag.val();

        // ---------------- token accumulation ----------------
        self.accum.clock.next = self.clock.val();
        self.accum.reset.next = self.reset.val();
        self.accum.in_valid.next = self.tree.out_valid.val();
        self.accum.in_tag.next = self.tree.out_tag.val();
        self.accum.in_outliers.next = self.tree.outliers.val();
        for c in 0..self._classes {
            self.accum.in_node[c].next = self.tree.node[c].val();
        }

        // ---------------- per-token parameters ----------------
        self.params.clock.next = self.clock.val();
        self.params.reset.next = self.reset.val();
        // the token's summary is in the accumulator for the cycle after its
        // last beat
        self.params.in_valid.next = self.accum.tok_valid.val();
        for i in 0..5 {
            self.params.in_node[i].next = self.accum.node[i].val();
        }
        self.params.in_thr.next = self.accum.thr.val();
        self.params.in_status.next = self.accum.status.val();
        for s in 0..self._cnts {
            self.params.in_counts[s].next = self.accum.counts[s].val();
        }

        // constants FIFO: the result waits for pass 2's first read
        self.cfifo.clock.next = self.clock.val();
        self.cfifo.reset.next = self.reset.val();
        self.cfifo.push.next = self.params.out_valid.val();
        self.cfifo.pop.next = self.rd_beat.val() & self.rd_first.val();
        self.cfifo.thr.next = self.params.out_thr.val();
        for g in 0..3 {
            self.cfifo.min[g].next = self.params.out_min[g].val();
            self.cfifo.step[g].next = self.params.out_step[g].val();
        }
        self.cfifo.status.next = self.params.out_status.val();
        // paper mode: the folded groups' z
        self.cfifo.z0.next = self.zero16.val();
        self.cfifo.z1.next = self.zero16.val();
        for _z in 0..self._paper {
            self.cfifo.z0.next = self.params.out_z[0].val();
            self.cfifo.z1.next = self.params.out_z[1].val();
        }
        for s in 0..self._cnts {
            self.cfifo.counts[s].next = self.params.out_counts[s].val();
        }

        // ---------------- pass 2 ----------------
        self.bc_out.en.next = self.rd_beat.val();
        self.bc_out.d.next = self.bc_out.q.val() + self.one16.val();
        if self.bc_out.q.val() == self.last_beat.val() {
            self.bc_out.d.next = self.zero16.val();
        }
        self.bh_out.en.next = self.rd_beat.val();
        self.bh_out.d.next = self.bh_out.q.val() + self.one16.val();
        if self.bh_out.q.val() == self.head_last.val() {
            self.bh_out.d.next = self.zero16.val();
        }
        // P0: the beat (the memory's output register), and its token's values
        // for the lanes, loaded with the first beat
        for i in 0..(self._p2 + 1) {
            self.pv[i].clock.next = self.clock.val();
            self.pv[i].reset.next = self.reset.val();
            self.pv[i].en.next = self.en2.val();
            self.pf[i].clock.next = self.clock.val();
            self.pf[i].reset.next = self.reset.val();
            self.pf[i].en.next = self.en2.val();
            self.pl[i].clock.next = self.clock.val();
            self.pl[i].reset.next = self.reset.val();
            self.pl[i].en.next = self.en2.val();
            self.pb[i].clock.next = self.clock.val();
            self.pb[i].reset.next = self.reset.val();
            self.pb[i].en.next = self.en2.val();
        }
        self.pv[0].d.next = self.rd_beat.val();
        self.pf[0].d.next = self.rd_first.val();
        self.pl[0].d.next = self.bc_out.q.val() == self.last_beat.val();
        // COO index base: the beat's first position within its head, mod 64
        self.pb[0].d.next = (bit_cast::<8, 16>(self.bh_out.q.val()) << self.lane_shift.val()) & self.mask6.val();
        for i in 1..(self._p2 + 1) {
            self.pv[i].d.next = self.pv[i - 1].q.val();
            self.pf[i].d.next = self.pf[i - 1].q.val();
            self.pl[i].d.next = self.pl[i - 1].q.val();
            self.pb[i].d.next = self.pb[i - 1].q.val();
        }
        self.tokvals.clock.next = self.clock.val();
        self.tokvals.reset.next = self.reset.val();
        self.tokvals.en2.next = self.en2.val();
        self.tokvals.load.next = self.rd_beat.val() & self.rd_first.val();
        self.tokvals.rec.next = self.cfifo.head_rec.val();
        // the lanes
        for p in 0..self._lanes {
            self.lane[p].clock.next = self.clock.val();
            self.lane[p].reset.next = self.reset.val();
            self.lane[p].en.next = self.en2.val();
            // a memory word not read since reset is undefined (an SRAM's is):
            // only a valid P0 beat enters the lanes, so no output ever
            // depends on one, even while out_valid is low
            self.lane[p].x.next = self.zero16.val();
            if self.pv[0].q.val() {
                self.lane[p].x.next = self.tbram.rdata.val().get_bits::<16>(self.lane_bit[p].val().index());
            }
            self.lane[p].k_lo_o.next = self.tokvals.key[0].val();
            self.lane[p].k_lo_i.next = self.tokvals.key[1].val();
            self.lane[p].k_hi_i.next = self.tokvals.key[2].val();
            self.lane[p].k_hi_o.next = self.tokvals.key[3].val();
            // offsets from P1, divisor fields from P2, step = 0 from the last
            self.lane[p].off.next = self.tokvals.off.val();
            self.lane[p].norm.next = self.tokvals.norm.val();
            self.lane[p].dz.next = self.tokvals.dz.val();
            self.lane[p].zc.next = self.tokvals.zc.val();
        }

        // output: COO assembly and compaction, the dense slots alongside,
        // the metadata FIFO (written at a token's first read)
        self.ostage.clock.next = self.clock.val();
        self.ostage.reset.next = self.reset.val();
        self.ostage.out_ready.next = self.out_ready.val();
        for l in self._p2..(self._p2 + 1) {
            self.ostage.in_valid.next = self.pv[l].q.val();
            self.ostage.in_first.next = self.pf[l].q.val();
            self.ostage.in_last.next = self.pl[l].q.val();
            self.ostage.in_base.next = self.pb[l].q.val();
        }
        for p in 0..self._lanes {
            self.ostage.dense[p].next = self.lane[p].dense.val();
            self.ostage.keep[p].next = self.lane[p].keep.val();
            self.ostage.grp[p].next = self.lane[p].grp.val();
            self.ostage.hi[p].next = self.lane[p].hi.val();
            self.out_dense[p].next = self.ostage.out_dense[p].val();
            self.out_coo[p].next = self.ostage.out_coo[p].val();
        }
        self.ostage.meta_push.next = self.rd_beat.val() & self.rd_first.val();
        self.ostage.meta_rec.next = self.cfifo.head_rec.val().get_bits::<96>(64);
        for s in 0..self._cnts {
            self.ostage.meta_cnt[s].next = self.cfifo.head_cnt[s].val();
            self.out_counts[s].next = self.ostage.out_counts[s].val();
        }
        self.ostage.meta_st.next = self.cfifo.head_st.val();
        self.out_valid.next = self.ostage.out_valid.val();
        self.out_coo_count.next = self.ostage.out_coo_count.val();
        self.out_first.next = self.ostage.out_first.val();
        self.out_last.next = self.ostage.out_last.val();
        for i in 0..12 {
            self.out_meta[i].next = self.ostage.out_meta[i].val();
        }
        self.out_status.next = self.ostage.out_status.val();
    }
}
