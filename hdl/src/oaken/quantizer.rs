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

use super::classify::{Classify, Key, Sanitize};
use super::encode_lane::{EncodeLane, NORMW, OFFW};
use super::extremes::{ExtremeTree, MinMax2, ABSENT, NODE, TAG};
use super::table::ThresholdTable;
use super::token_params::TokenParams;
use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::Reg;
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
        let tp = TokenParams::latency();
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
    accept: Signal<Local, Bit>,
    ready: Reg<Bit>,
    alloc: Reg<Bits<16>>,
    alloc_next: Signal<Local, Bits<16>>,
    bc_in: Reg<Bits<16>>,
    // input position: beat within the head, within the segment, and the
    // global segment index
    bh_in: Reg<Bits<16>>,
    sb_in: Reg<Bits<8>>,
    gs_in: Reg<Bits<16>>,
    seg_end: Signal<Local, Bit>,
    // I0: the accepted beat, sanitised (loaded every cycle, valid with
    // i0_v), where it lies, and the token's threshold set, read at its
    // first beat (with a write of that same cycle, spec §2.13)
    san: Vec<Sanitize>,
    i0_x: Vec<Reg<Bits<16>>>,
    i0_v: Reg<Bit>,
    i0_first: Reg<Bit>,
    i0_last: Reg<Bit>,
    /// Global segment index (head * segments + segment) of the beat.
    i0_seg: Reg<Bits<16>>,
    i0_nf: Reg<Bit>,
    nf_any: Signal<Local, Bit>,
    tok_set: Reg<Bits<64>>,
    tok_oob: Reg<Bit>,
    /// The first beat's set must take the write of its own edge.
    fix_v: Reg<Bit>,
    fix: Signal<Local, Bit>,
    set_cur: Signal<Local, Bits<64>>,
    // B: classes of the I0 beat, into the tree
    thr_key: Vec<Key>,
    cls: Vec<Classify>,
    elem_key: Vec<Key>,
    tag: Signal<Local, Bits<TAG>>,
    tree: ExtremeTree,
    // token accumulation: the tree's last level merged into the token's
    // running nodes (the accumulator is the tree's last merge level)
    acc_cmb: Vec<MinMax2>,
    acc_node: Vec<Reg<Bits<NODE>>>,
    acc_cnt: Vec<Reg<Bits<8>>>,
    acc_cnt_d: Vec<Signal<Local, Bits<8>>>,
    acc_nf: Reg<Bit>,
    acc_nf_d: Signal<Local, Bit>,
    t_first: Signal<Local, Bit>,
    t_last: Signal<Local, Bit>,
    t_seg: Signal<Local, Bits<16>>,
    /// The token's summary is in the accumulator (one cycle, after its last
    /// beat); its set and status beside it.
    tok_v: Reg<Bit>,
    tok_thr: Reg<Bits<64>>,
    tok_status: Reg<Bits<2>>,
    params: TokenParams,
    // constants FIFO: {thr, (min, step) x 3} per token, counts, status
    cf: FifoCtrl,
    cf_rec: FifoMem<160>,
    cf_cnt: Vec<FifoMem<8>>,
    cf_st: FifoMem<2>,
    rec_in: Signal<Local, Bits<160>>,
    head_rec: Signal<Local, Bits<160>>,
    head_cnt: Vec<Signal<Local, Bits<8>>>,
    head_st: Signal<Local, Bits<2>>,
    rtmp: Signal<Local, Bits<16>>,
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
    p0_thr: Reg<Bits<64>>,
    p0_key: Vec<Key>,
    // token values, each stage aligned with the token's first beat: P0 the
    // magnitude and sign of lo_outer, hi_outer, the three minima (and
    // lo_inner, hi_inner when the middle group is shifted), converted from
    // the FIFO's head; P1 the five offsets (the lanes' L2); the groups'
    // divisor fields at P0 .. P(2 + step stages), stage s group g at 3s + g
    // (P2's reach the lanes' L3, P(3 + t)'s m their step stage t), and
    // step = 0 beside them
    p0_conv: Vec<Fp16ToUnits>,
    p0_mag: Vec<Reg<Bits<FX>>>,
    p0_neg: Vec<Reg<Bit>>,
    p1_off: Vec<Reg<Bits<FX>>>,
    cval: Vec<Signal<Local, Bits<FX>>>,
    cneg: Vec<Signal<Local, Bit>>,
    ccar: Vec<Signal<Local, Bits<FX>>>,
    cb: Signal<Local, Bit>,
    pnorm: Vec<Reg<Bits<18>>>,
    pdz: Vec<Reg<Bit>>,
    lane: Vec<EncodeLane<IB>>,
    off_bus: Signal<Local, Bits<OFFW>>,
    norm_bus: Signal<Local, Bits<NORMW>>,
    off_sh: Vec<Constant<Bits<OFFW>>>,
    norm_sh: Vec<Constant<Bits<NORMW>>>,
    dz_bus: Signal<Local, Bits<3>>,
    dz_sh: Vec<Constant<Bits<3>>>,
    // step FP16 -> divisor fields (spec §5.3)
    sfp: Signal<Local, Bits<16>>,
    sexp: Signal<Local, Bits<16>>,
    smant: Signal<Local, Bits<16>>,
    shv: Signal<Local, Bits<16>>,
    nfield: Signal<Local, Bits<18>>,
    ntmp: Signal<Local, Bits<18>>,
    dztmp: Signal<Local, Bit>,
    exp_lo: Constant<Bits<16>>,
    x1f: Constant<Bits<16>>,
    mant_mask: Constant<Bits<16>>,
    imp_bit: Constant<Bits<16>>,
    two16: Constant<Bits<16>>,
    f_sh18: Constant<Bits<18>>,
    left18: Constant<Bits<18>>,
    zero3: Constant<Bits<3>>,
    // per-beat valid, first, last and COO index base (beat * lanes mod 64)
    // along pass 2 (P0..assembly)
    pv: Vec<Reg<Bit>>,
    pf: Vec<Reg<Bit>>,
    pl: Vec<Reg<Bit>>,
    pb: Vec<Reg<Bits<8>>>,
    // metadata FIFO: groups (12 bytes) and counts, status
    mf: FifoCtrl,
    mf_byte: Vec<FifoMem<8>>,
    mf_st: FifoMem<2>,
    // COO assembly and compaction
    base6: Signal<Local, Bits<8>>,
    coo: Vec<Signal<Local, Bits<8>>>,
    zr: ZeroRemove<8>,
    // dense slots, first, last alongside the shifter
    zd: Vec<Reg<Bits<IB>>>,
    zf: Vec<Reg<Bit>>,
    zl: Vec<Reg<Bit>>,
    zb: Vec<Reg<Bits<8>>>,
    out_fire: Signal<Local, Bit>,
    stmp: Signal<Local, Bits<FX>>,
    wantn: Signal<Local, Bit>,
    gtmp: Signal<Local, Bit>,
    /// The beat at the lanes' outputs is valid.
    v2: Signal<Local, Bit>,
    htmp: Signal<Local, Bit>,
    st_d: Signal<Local, Bits<2>>,

    // constants
    lane_idx: Vec<Constant<Bits<8>>>,
    seg_idx: Vec<Constant<Bits<16>>>,
    lane_off: Vec<Constant<Bits<1024>>>,
    lane_bit: Vec<Constant<Bits<32>>>,
    byte_off: Vec<Constant<Bits<32>>>,
    step_off: Vec<Constant<Bits<32>>>,
    rec_sh: Vec<Constant<Bits<160>>>,
    thr_off: Vec<Constant<Bits<32>>>,
    /// Record fields converted at P0, and whether P1 negates each.
    cvt_off: Vec<Constant<Bits<32>>>,
    want_neg: Vec<Constant<Bit>>,
    last_beat: Constant<Bits<16>>,
    buf_depth: Constant<Bits<16>>,
    buf_last: Constant<Bits<16>>,
    head_last: Constant<Bits<16>>,
    seg_last: Constant<Bits<8>>,
    lane_shift: Constant<Bits<8>>,
    mask6: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    zero_ib: Constant<Bits<IB>>,
    one16: Constant<Bits<16>>,
    absent: Constant<Bits<NODE>>,
    tag_beat: Constant<Bits<32>>,
    tag_first: Constant<Bits<32>>,
    tag_last: Constant<Bits<32>>,
    tag_nf: Constant<Bits<32>>,
    tag_oob: Constant<Bits<32>>,
    sh64: Constant<Bits<TAG>>,
    sh80: Constant<Bits<TAG>>,
    sh81: Constant<Bits<TAG>>,
    sh82: Constant<Bits<TAG>>,
    sh83: Constant<Bits<TAG>>,
    st_oob: Constant<Bits<2>>,
    sg_mlo: Constant<Bits<3>>,
    sg_mhi: Constant<Bits<3>>,

    _lanes: usize,
    /// Classes of the extremes tree: 4 (plain middle) or 5.
    _classes: usize,
    _cnts: usize,
    _bytes: usize,
    _q: usize,
    /// Pass-2 stages from P0 to the lane outputs.
    _p2: usize,
    _zl: usize,
    _mid_shifted: usize,
    _mid_plain: usize,
    _p1n: usize,
    /// The lanes' step stages; the last divisor-field stage (2 + ts) and
    /// the number of step = 0 stages (3 + ts).
    _ts: usize,
    _pn: usize,
    _pd: usize,
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
        let q = IB + 1;
        let p2 = EncodeLane::<IB>::latency();
        let ts = EncodeLane::<IB>::step_stages(IB);
        let zl = ZeroRemove::<8>::latency(l, SHIFTER_PIPELINE);
        let mid_shifted = p.middle_mode == MiddleMode::Shifted;
        let divisors = [Group::Outer, Group::Middle, Group::Inner].map(|gr| p.coding(gr).levels_minus_one());
        let shifted = [Group::Outer, Group::Middle, Group::Inner].map(|gr| p.coding(gr).shifted);
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
        }
        fn sigs<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
            (0..n).map(|_| Default::default()).collect()
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let bytes = 12 + s;
        let classes = if mid_shifted { 5 } else { 4 };
        // pass-2 conversions: lo_outer, hi_outer, 3 minima, and the inner
        // thresholds when the middle group is shifted
        let p1n = if mid_shifted { 7 } else { 5 };
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
            in_data: (0..l).map(|_| Default::default()).collect(),
            in_layer: Default::default(),
            in_kv: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_dense: (0..l).map(|_| Default::default()).collect(),
            out_coo: (0..l).map(|_| Default::default()).collect(),
            out_coo_count: Default::default(),
            out_first: Default::default(),
            out_last: Default::default(),
            out_meta: (0..12).map(|_| Default::default()).collect(),
            out_counts: (0..s).map(|_| Default::default()).collect(),
            out_status: Default::default(),
            thr_tab: ThresholdTable::new(p.layers),
            accept: Default::default(),
            ready: Reg::default(),
            alloc: Reg::default(),
            alloc_next: Default::default(),
            bc_in: Reg::default(),
            bh_in: Reg::default(),
            sb_in: Reg::default(),
            gs_in: Reg::default(),
            seg_end: Default::default(),
            san: (0..l).map(|_| Sanitize::default()).collect(),
            i0_x: regs(l),
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
            cls: (0..l).map(|_| Classify::default()).collect(),
            elem_key: (0..l).map(|_| Key::default()).collect(),
            tag: Default::default(),
            tree: ExtremeTree::new(l, classes),
            acc_cmb: (0..classes).map(|_| MinMax2::default()).collect(),
            acc_node: regs(classes),
            acc_cnt: regs(s),
            acc_cnt_d: sigs(s),
            acc_nf: Reg::default(),
            acc_nf_d: Default::default(),
            t_first: Default::default(),
            t_last: Default::default(),
            t_seg: Default::default(),
            tok_v: Reg::default(),
            tok_thr: Reg::default(),
            tok_status: Reg::default(),
            params: TokenParams::new(divisors, shifted, s, g.side_fifo, g.beats),
            cf: FifoCtrl::new(g.const_fifo),
            cf_rec: FifoMem::new(g.const_fifo),
            cf_cnt: (0..s).map(|_| FifoMem::new(g.const_fifo)).collect(),
            cf_st: FifoMem::new(g.const_fifo),
            rec_in: Default::default(),
            head_rec: Default::default(),
            head_cnt: sigs(s),
            head_st: Default::default(),
            rtmp: Default::default(),
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
            p0_thr: Reg::default(),
            p0_key: (0..4).map(|_| Key::default()).collect(),
            p0_conv: (0..p1n).map(|_| Fp16ToUnits::default()).collect(),
            p0_mag: regs(p1n),
            p0_neg: regs(p1n),
            p1_off: regs(5),
            cval: sigs(p1n),
            cneg: sigs(p1n),
            ccar: sigs(p1n),
            cb: Default::default(),
            pnorm: regs(9),
            pdz: regs(3 * (3 + ts)),
            lane: (0..l).map(|_| EncodeLane::new(mid_shifted)).collect(),
            off_bus: Default::default(),
            norm_bus: Default::default(),
            off_sh: (0..5).map(|i| c((FX * i) as u64)).collect(),
            norm_sh: (0..3).map(|i| c(18 * i as u64)).collect(),
            dz_bus: Default::default(),
            dz_sh: (0..3).map(|g| c(g as u64)).collect(),
            sfp: Default::default(),
            sexp: Default::default(),
            smant: Default::default(),
            shv: Default::default(),
            nfield: Default::default(),
            ntmp: Default::default(),
            dztmp: Default::default(),
            exp_lo: c(10),
            x1f: c(0x1F),
            mant_mask: c(0x3FF),
            imp_bit: c(0x400),
            two16: c(2),
            f_sh18: c(11),
            left18: c(1 << 17),
            zero3: c(0),
            pv: regs(p2 + 1),
            pf: regs(p2 + 1),
            pl: regs(p2 + 1),
            pb: regs(p2 + 1),
            mf: FifoCtrl::new(g.meta_fifo),
            mf_byte: (0..bytes).map(|_| FifoMem::new(g.meta_fifo)).collect(),
            mf_st: FifoMem::new(g.meta_fifo),
            base6: Default::default(),
            coo: sigs(l),
            zr: ZeroRemove::new(l, SHIFTER_PIPELINE),
            zd: regs(zl * l),
            zf: regs(zl),
            zl: regs(zl),
            zb: regs(zl),
            out_fire: Default::default(),
            stmp: Default::default(),
            wantn: Default::default(),
            gtmp: Default::default(),
            v2: Default::default(),
            htmp: Default::default(),
            st_d: Default::default(),
            lane_idx: (0..l).map(|i| c(i as u64)).collect(),
            seg_idx: (0..s).map(|i| c(i as u64)).collect(),
            lane_off: (0..l).map(|i| c(16 * i as u64)).collect(),
            lane_bit: (0..l).map(|i| c(16 * i as u64)).collect(),
            // metadata bytes 0..11 come from record bits 64.. (min, step pairs)
            byte_off: (0..12).map(|i| c(64 + 8 * i as u64)).collect(),
            step_off: (0..3).map(|g| c(80 + 32 * g as u64)).collect(),
            rec_sh: (0..6).map(|i| c(64 + 16 * i as u64)).collect(),
            thr_off: (0..4).map(|i| c(16 * i as u64)).collect(),
            cvt_off: [0u64, 48, 64, 96, 128, 16, 32][..p1n].iter().map(|&o| c(o)).collect(),
            want_neg: [false, true, true, true, true, false, true][..p1n].iter().map(|&b| Constant::new(b)).collect(),
            last_beat: c((g.beats - 1) as u64),
            buf_depth: c(g.buffer as u64),
            buf_last: c((g.buffer - 1) as u64),
            head_last: c((g.head_beats - 1) as u64),
            seg_last: c((g.seg_beats - 1) as u64),
            lane_shift: c(l.trailing_zeros() as u64),
            mask6: c(63),
            two8: c(2),
            one8: c(1),
            zero8: c(0),
            zero16: c(0),
            zero_ib: c(0),
            one16: c(1),
            absent: c(ABSENT),
            tag_beat: c(64),
            tag_first: c(80),
            tag_last: c(81),
            tag_nf: c(82),
            tag_oob: c(83),
            sh64: c(64),
            sh80: c(80),
            sh81: c(81),
            sh82: c(82),
            sh83: c(83),
            st_oob: c(2),
            sg_mlo: c(1),
            sg_mhi: c(3),
            _lanes: l,
            _classes: classes,
            _cnts: s,
            _bytes: bytes,
            _q: q,
            _p2: p2,
            _zl: zl,
            _mid_shifted: mid_shifted as usize,
            _mid_plain: !mid_shifted as usize,
            _p1n: p1n,
            _ts: ts,
            _pn: 2,
            _pd: 3 + ts,
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

        clock!(
            self, clock, ready, alloc, bc_in, bh_in, sb_in, gs_in, i0_v, i0_first, i0_last, i0_seg, i0_nf, tok_set,
            tok_oob, fix_v, acc_nf, tok_v, tok_thr, tok_status, bc_out, bh_out, p0_thr, wp, rp, bcnt
        );
        self.ready.reset.next = self.reset.val();
        self.alloc.reset.next = self.reset.val();
        self.bc_in.reset.next = self.reset.val();
        self.i0_v.reset.next = self.reset.val();
        self.i0_first.reset.next = self.reset.val();
        self.i0_last.reset.next = self.reset.val();
        self.i0_seg.reset.next = self.reset.val();
        self.bh_in.reset.next = self.reset.val();
        self.sb_in.reset.next = self.reset.val();
        self.gs_in.reset.next = self.reset.val();
        self.bh_out.reset.next = self.reset.val();
        self.wp.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.bcnt.reset.next = self.reset.val();
        self.i0_nf.reset.next = self.reset.val();
        self.tok_set.reset.next = self.reset.val();
        self.tok_oob.reset.next = self.reset.val();
        self.fix_v.reset.next = self.reset.val();
        self.acc_nf.reset.next = self.reset.val();
        self.tok_v.reset.next = self.reset.val();
        self.tok_thr.reset.next = self.reset.val();
        self.tok_status.reset.next = self.reset.val();
        self.bc_out.reset.next = self.reset.val();
        self.p0_thr.reset.next = self.reset.val();

        // Pass 2 issue (first, since pass 1's credit counts its reads): the
        // whole pass advances when its output register is empty or taken.
        self.en2.next = !self.zr.out_valid.val() | self.out_ready.val();
        self.out_fire.next = self.zr.out_valid.val() & self.out_ready.val();
        self.rd_first.next = self.bc_out.q.val() == self.zero16.val();
        self.rd_beat.next =
            self.en2.val()
                & (self.bcnt.q.val() != self.zero16.val())
                & (!self.rd_first.val() | !self.cf.empty.val() | self.params.out_valid.val());

        // ---------------- pass 1: acceptance and credit ----------------
        self.accept.next = self.in_valid.val() & self.ready.q.val();
        self.alloc_next.next = self.alloc.q.val();
        if self.accept.val() {
            self.alloc_next.next = self.alloc_next.val() + self.one16.val();
        }
        if self.rd_beat.val() {
            self.alloc_next.next = self.alloc_next.val() - self.one16.val();
        }
        self.alloc.en.next = true;
        self.alloc.d.next = self.alloc_next.val();
        self.ready.en.next = true;
        self.ready.d.next = self.alloc_next.val() < self.buf_depth.val();
        self.in_ready.next = self.ready.q.val();
        self.bc_in.en.next = self.accept.val();
        self.bc_in.d.next = self.bc_in.q.val() + self.one16.val();
        if self.bc_in.q.val() == self.last_beat.val() {
            self.bc_in.d.next = self.zero16.val();
        }
        // where the accepted beat lies: a segment ends at its 64th element
        // or at the end of its head (spec §2.8)
        self.seg_end.next = (self.sb_in.q.val() == self.seg_last.val()) | (self.bh_in.q.val() == self.head_last.val());
        self.bh_in.en.next = self.accept.val();
        self.bh_in.d.next = self.bh_in.q.val() + self.one16.val();
        if self.bh_in.q.val() == self.head_last.val() {
            self.bh_in.d.next = self.zero16.val();
        }
        self.sb_in.en.next = self.accept.val();
        self.sb_in.d.next = self.sb_in.q.val() + self.one8.val();
        if self.seg_end.val() {
            self.sb_in.d.next = self.zero8.val();
        }
        self.gs_in.en.next = self.accept.val() & self.seg_end.val();
        self.gs_in.d.next = self.gs_in.q.val() + self.one16.val();
        if self.bc_in.q.val() == self.last_beat.val() {
            self.gs_in.d.next = self.zero16.val();
        }

        // I0: the accepted beat, sanitised; the token's threshold set, read
        // at its first beat (a legal write of that same cycle included)
        self.i0_v.en.next = true;
        self.i0_v.d.next = self.accept.val();
        self.i0_first.en.next = self.accept.val();
        self.i0_first.d.next = self.bc_in.q.val() == self.zero16.val();
        self.i0_last.en.next = self.accept.val();
        self.i0_last.d.next = self.bc_in.q.val() == self.last_beat.val();
        self.i0_seg.en.next = self.accept.val();
        self.i0_seg.d.next = self.gs_in.q.val();
        // a write sampled at the same edge reaches the set one cycle later:
        // until then the set in use is the write's (the rule of §2.13,
        // without the write port's checks on the path into the set)
        self.fix_v.en.next = true;
        self.fix_v.d.next = self.accept.val() & (self.bc_in.q.val() == self.zero16.val()) & self.thr_tab.rd_hit_now.val();
        self.fix.next = self.fix_v.q.val() & self.thr_tab.wr_valid.val();
        self.set_cur.next = self.tok_set.q.val();
        if self.fix.val() {
            self.set_cur.next = self.thr_tab.wr_set.val();
        }
        self.tok_set.en.next = (self.accept.val() & (self.bc_in.q.val() == self.zero16.val())) | self.fix.val();
        self.tok_set.d.next = self.thr_tab.wr_set.val();
        if self.accept.val() & (self.bc_in.q.val() == self.zero16.val()) {
            self.tok_set.d.next = self.thr_tab.rd_set.val();
        }
        self.tok_oob.en.next = self.accept.val() & (self.bc_in.q.val() == self.zero16.val());
        self.tok_oob.d.next = self.thr_tab.rd_oob.val();
        self.nf_any.next = false;
        for p in 0..self._lanes {
            self.san[p].x.next = self.in_data[p].val();
            self.nf_any.next = self.nf_any.val() | self.san[p].nonfinite.val();
            self.i0_x[p].clock.next = self.clock.val();
            // pure data: the sanitiser's output, read only under i0_v
            self.i0_x[p].reset.next = false;
            self.i0_x[p].en.next = true;
            self.i0_x[p].d.next = self.san[p].y.val();
        }
        self.i0_nf.en.next = self.accept.val();
        self.i0_nf.d.next = self.nf_any.val();
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
            self.tree.key[p].next = self.elem_key[p].key.val();
            // classes: the subgroups, both middle ones as one when plain
            self.tree.cls[p].next = self.cls[p].sg.val();
            for _m in 0..self._mid_plain {
                if self.cls[p].sg.val() == self.sg_mhi.val() {
                    self.tree.cls[p].next = self.sg_mlo.val();
                }
                // (OU = 4 is the only subgroup with bit 2 set)
                if self.cls[p].sg.val().get_bit(2) {
                    self.tree.cls[p].next = self.sg_mhi.val();
                }
            }
            self.tree.outl[p].next = (self.cls[p].sg.val() != self.sg_mlo.val()) & (self.cls[p].sg.val() != self.sg_mhi.val());
        }
        // tag: {oob, nonfinite, last, first, global segment, thresholds}
        self.tag.next = bit_cast::<TAG, 64>(self.set_cur.val())
            | (bit_cast::<TAG, 16>(self.i0_seg.q.val()) << self.sh64.val())
            | (bit_cast::<TAG, 1>(self.i0_first.q.val().into()) << self.sh80.val())
            | (bit_cast::<TAG, 1>(self.i0_last.q.val().into()) << self.sh81.val())
            | (bit_cast::<TAG, 1>(self.i0_nf.q.val().into()) << self.sh82.val())
            | (bit_cast::<TAG, 1>(self.tok_oob.q.val().into()) << self.sh83.val());
        // the sanitised beat goes to the token buffer
        self.bw.next = bit_cast::<1024, 1>(false.into());
        for p in 0..self._lanes {
            self.btmp.next = self.i0_x[p].q.val();
            self.bw.next = self.bw.val() | (bit_cast::<1024, 16>(self.btmp.val()) << self.lane_off[p].val());
        }
        self.tbram.clock.next = self.clock.val();
        self.tbram.we.next = self.i0_v.q.val();
        self.tbram.waddr.next = self.wp.q.val();
        self.tbram.wdata.next = self.bw.val();
        // pass 2 reads a beat into the memory's output register, which is
        // its P0 stage: it holds while pass 2 is stalled (no read then)
        self.tbram.re.next = self.rd_beat.val();
        self.tbram.raddr.next = self.rp.q.val();
        self.wp.en.next = self.i0_v.q.val();
        self.wp.d.next = self.wp.q.val() + self.one16.val();
        if self.wp.q.val() == self.buf_last.val() {
            self.wp.d.next = self.zero16.val();
        }
        self.rp.en.next = self.rd_beat.val();
        self.rp.d.next = self.rp.q.val() + self.one16.val();
        if self.rp.q.val() == self.buf_last.val() {
            self.rp.d.next = self.zero16.val();
        }
        self.bcnt.en.next = self.i0_v.q.val() ^ self.rd_beat.val();
        self.bcnt.d.next = self.bcnt.q.val() - self.one16.val();
        if self.i0_v.q.val() {
            self.bcnt.d.next = self.bcnt.q.val() + self.one16.val();
        }
        self.tree.clock.next = self.clock.val();
        self.tree.reset.next = self.reset.val();
        self.tree.in_valid.next = self.i0_v.q.val();
        self.tree.in_tag.next = self.tag.val();

        // ---------------- token accumulation ----------------
        self.t_first.next = self.tree.out_tag.val().get_bit(self.tag_first.val().index());
        self.t_last.next = self.tree.out_tag.val().get_bit(self.tag_last.val().index());
        self.t_seg.next = self.tree.out_tag.val().get_bits::<16>(self.tag_beat.val().index());
        for c in 0..self._classes {
            self.acc_cmb[c].a.next = self.acc_node[c].q.val();
            self.acc_cmb[c].b.next = self.tree.node[c].val();
            self.acc_node[c].clock.next = self.clock.val();
            self.acc_node[c].reset.next = self.reset.val();
            self.acc_node[c].en.next = self.tree.out_valid.val();
            self.acc_node[c].d.next = self.acc_cmb[c].y.val();
            if self.t_first.val() {
                self.acc_node[c].d.next = self.tree.node[c].val();
            }
        }
        for s in 0..self._cnts {
            self.acc_cnt_d[s].next = self.acc_cnt[s].q.val();
            if self.t_first.val() {
                self.acc_cnt_d[s].next = self.zero8.val();
            }
            if self.t_seg.val() == self.seg_idx[s].val() {
                self.acc_cnt_d[s].next = self.acc_cnt_d[s].val() + self.tree.outliers.val();
            }
            self.acc_cnt[s].clock.next = self.clock.val();
            self.acc_cnt[s].reset.next = self.reset.val();
            self.acc_cnt[s].en.next = self.tree.out_valid.val();
            self.acc_cnt[s].d.next = self.acc_cnt_d[s].val();
        }
        self.acc_nf_d.next =
            self.tree.out_tag.val().get_bit(self.tag_nf.val().index()) | (self.acc_nf.q.val() & !self.t_first.val());
        self.acc_nf.en.next = self.tree.out_valid.val();
        self.acc_nf.d.next = self.acc_nf_d.val();
        self.st_d.next = bit_cast::<2, 1>(self.acc_nf_d.val().into());
        if self.tree.out_tag.val().get_bit(self.tag_oob.val().index()) {
            self.st_d.next = self.st_d.val() | self.st_oob.val();
        }
        self.tok_v.en.next = true;
        self.tok_v.d.next = self.tree.out_valid.val() & self.t_last.val();
        self.tok_thr.en.next = self.tree.out_valid.val() & self.t_last.val();
        self.tok_thr.d.next = self.tree.out_tag.val().get_bits::<64>(0);
        self.tok_status.en.next = self.tree.out_valid.val() & self.t_last.val();
        self.tok_status.d.next = self.st_d.val();

        // ---------------- per-token parameters ----------------
        self.params.clock.next = self.clock.val();
        self.params.reset.next = self.reset.val();
        // the token's summary is in the accumulator for the cycle after its
        // last beat; the per-token unit takes subgroup nodes (a plain
        // middle group's single class as the lower side, the upper absent)
        self.params.in_valid.next = self.tok_v.q.val();
        self.params.in_node[0].next = self.acc_node[0].q.val();
        self.params.in_node[2].next = self.acc_node[2].q.val();
        self.params.in_node[3].next = self.absent.val();
        for _m in 0..self._mid_plain {
            self.params.in_node[1].next = self.acc_node[1].q.val();
            self.params.in_node[4].next = self.acc_node[3].q.val();
        }
        for _m in 0..self._mid_shifted {
            for z in self._classes..(self._classes + 1) {
                self.params.in_node[1].next = self.acc_node[1].q.val();
                self.params.in_node[3].next = self.acc_node[z - 2].q.val();
                self.params.in_node[4].next = self.acc_node[z - 1].q.val();
            }
        }
        self.params.in_thr.next = self.tok_thr.q.val();
        self.params.in_status.next = self.tok_status.q.val();
        for s in 0..self._cnts {
            self.params.in_counts[s].next = self.acc_cnt[s].q.val();
        }
        // constants FIFO record: {step2, min2, step1, min1, step0, min0, thr}
        self.rec_in.next = bit_cast::<160, 64>(self.params.out_thr.val());
        for g in 0..3 {
            self.rtmp.next = self.params.out_min[g].val();
            self.rec_in.next = self.rec_in.val() | (bit_cast::<160, 16>(self.rtmp.val()) << self.rec_sh[2 * g].val());
            self.rtmp.next = self.params.out_step[g].val();
            self.rec_in.next =
                self.rec_in.val() | (bit_cast::<160, 16>(self.rtmp.val()) << self.rec_sh[2 * g + 1].val());
        }
        self.cf.clock.next = self.clock.val();
        self.cf.reset.next = self.reset.val();
        self.cf.push.next = self.params.out_valid.val();
        self.cf.pop.next = self.rd_beat.val() & self.rd_first.val();
        // the FIFO's head, or the per-token unit's result itself when the
        // FIFO is empty (pushed and popped in the same cycle, it never waits)
        self.head_rec.next = self.cf_rec.rdata.val();
        self.head_st.next = self.cf_st.rdata.val();
        for s in 0..self._cnts {
            self.head_cnt[s].next = self.cf_cnt[s].rdata.val();
        }
        if self.cf.empty.val() {
            self.head_rec.next = self.rec_in.val();
            self.head_st.next = self.params.out_status.val();
            for s in 0..self._cnts {
                self.head_cnt[s].next = self.params.out_counts[s].val();
            }
        }
        self.cf_rec.clock.next = self.clock.val();
        self.cf_rec.reset.next = self.reset.val();
        self.cf_rec.we.next = self.params.out_valid.val();
        self.cf_rec.waddr.next = self.cf.waddr.val();
        self.cf_rec.raddr.next = self.cf.raddr.val();
        self.cf_rec.wdata.next = self.rec_in.val();
        self.cf_st.clock.next = self.clock.val();
        self.cf_st.reset.next = self.reset.val();
        self.cf_st.we.next = self.params.out_valid.val();
        self.cf_st.waddr.next = self.cf.waddr.val();
        self.cf_st.raddr.next = self.cf.raddr.val();
        self.cf_st.wdata.next = self.params.out_status.val();
        for s in 0..self._cnts {
            self.cf_cnt[s].clock.next = self.clock.val();
            self.cf_cnt[s].reset.next = self.reset.val();
            self.cf_cnt[s].we.next = self.params.out_valid.val();
            self.cf_cnt[s].waddr.next = self.cf.waddr.val();
            self.cf_cnt[s].raddr.next = self.cf.raddr.val();
            self.cf_cnt[s].wdata.next = self.params.out_counts[s].val();
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
        // P0: the beat, and its token's record (loaded at the first beat)
        self.p0_thr.en.next = self.rd_beat.val() & self.rd_first.val();
        self.p0_thr.d.next = self.head_rec.val().get_bits::<64>(0);
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
        for t in 0..4 {
            self.p0_key[t].x.next = self.p0_thr.q.val().get_bits::<16>(self.thr_off[t].val().index());
        }
        // P0: thresholds and minima from the FIFO's head, as magnitude and
        // sign, and each group's divisor fields (spec §5.3: m = 1024 +
        // mantissa, or the mantissa for E = 0; right shift E - 2, or left by
        // one for E <= 1; step = 0), loaded with the token's first beat
        for i in 0..self._p1n {
            self.p0_conv[i].x.next = self.head_rec.val().get_bits::<16>(self.cvt_off[i].val().index());
            self.p0_mag[i].clock.next = self.clock.val();
            self.p0_mag[i].reset.next = self.reset.val();
            self.p0_mag[i].en.next = self.rd_beat.val() & self.rd_first.val();
            self.p0_mag[i].d.next = self.p0_conv[i].mag.val();
            self.p0_neg[i].clock.next = self.clock.val();
            self.p0_neg[i].reset.next = self.reset.val();
            self.p0_neg[i].en.next = self.rd_beat.val() & self.rd_first.val();
            self.p0_neg[i].d.next = self.p0_conv[i].neg.val();
        }
        for i in 0..(3 * (self._pn + 1)) {
            self.pnorm[i].clock.next = self.clock.val();
            self.pnorm[i].reset.next = self.reset.val();
            self.pnorm[i].en.next = self.en2.val();
        }
        for i in 0..(3 * self._pd) {
            self.pdz[i].clock.next = self.clock.val();
            self.pdz[i].reset.next = self.reset.val();
            self.pdz[i].en.next = self.en2.val();
        }
        for g in 0..3 {
            self.sfp.next = self.head_rec.val().get_bits::<16>(self.step_off[g].val().index());
            self.sexp.next = (self.sfp.val() >> self.exp_lo.val()) & self.x1f.val();
            self.smant.next = self.sfp.val() & self.mant_mask.val();
            if self.sexp.val() != self.zero16.val() {
                self.smant.next = self.smant.val() | self.imp_bit.val();
            }
            self.shv.next = self.sexp.val() - self.two16.val();
            self.nfield.next = bit_cast::<18, 16>(self.smant.val());
            if self.sexp.val() <= self.one16.val() {
                self.nfield.next = self.nfield.val() | self.left18.val();
            } else {
                self.nfield.next = self.nfield.val() | (bit_cast::<18, 16>(self.shv.val()) << self.f_sh18.val());
            }
            self.pnorm[g].en.next = self.rd_beat.val() & self.rd_first.val();
            self.pnorm[g].d.next = self.nfield.val();
            self.pdz[g].en.next = self.rd_beat.val() & self.rd_first.val();
            self.pdz[g].d.next = self.sfp.val() == self.zero16.val();
        }
        // P1 .. : the fields travel with the token's first beat (P2's reach
        // the lanes' L3, P3 .. their step stages, m only)
        for i in 3..(3 * (self._pn + 1)) {
            self.pnorm[i].d.next = self.pnorm[i - 3].q.val();
        }
        for i in 3..(3 * self._pd) {
            self.pdz[i].d.next = self.pdz[i - 3].q.val();
        }
        // P1: offsets per subgroup (spec §2.5): n = v - min with v = x - hi_T,
        // lo_T - x or x, so off = lo_T - min, -hi_T - min or -min; each is
        // one add of two complemented magnitudes and their two carries
        for i in 0..5 {
            self.p1_off[i].clock.next = self.clock.val();
            self.p1_off[i].reset.next = self.reset.val();
            self.p1_off[i].en.next = self.en2.val();
        }
        for i in 0..self._p1n {
            // v_i with the sign it enters with: +lo, -hi, -min
            self.wantn.next = self.want_neg[i].val();
            self.cneg[i].next = self.p0_neg[i].q.val() ^ self.wantn.val();
            self.cval[i].next = self.p0_mag[i].q.val();
            if self.cneg[i].val() {
                self.cval[i].next = !self.p0_mag[i].q.val();
            }
            self.cb.next = self.cneg[i].val();
            self.ccar[i].next = bit_cast::<FX, 1>(self.cb.val().into());
        }
        // (slots: 0 lo_o, 1 hi_o, 2 min_o, 3 min_m, 4 min_i, 5 lo_i, 6 hi_i)
        self.p1_off[0].d.next = self.cval[0].val() + self.cval[2].val()
            + self.ccar[0].val() + self.ccar[2].val();
        self.p1_off[4].d.next = self.cval[1].val() + self.cval[2].val()
            + self.ccar[1].val() + self.ccar[2].val();
        self.p1_off[2].d.next = self.cval[4].val() + self.ccar[4].val();
        for _p in 0..self._mid_plain {
            self.p1_off[1].d.next = self.cval[3].val() + self.ccar[3].val();
            self.p1_off[3].d.next = self.cval[3].val() + self.ccar[3].val();
        }
        for z in self._p1n..(self._p1n + 1) {
            for _s in 0..self._mid_shifted {
                self.p1_off[1].d.next = self.cval[z - 2].val() + self.cval[3].val()
                    + self.ccar[z - 2].val() + self.ccar[3].val();
                self.p1_off[3].d.next = self.cval[z - 1].val() + self.cval[3].val()
                    + self.ccar[z - 1].val() + self.ccar[3].val();
            }
        }
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
            self.lane[p].k_lo_o.next = self.p0_key[0].key.val();
            self.lane[p].k_lo_i.next = self.p0_key[1].key.val();
            self.lane[p].k_hi_i.next = self.p0_key[2].key.val();
            self.lane[p].k_hi_o.next = self.p0_key[3].key.val();
        }
        // token values reach the lanes as packed buses: offsets from P1,
        // fields from P2, step stage t's m from P(3 + t), step = 0 from the
        // last
        self.off_bus.next = bit_cast::<OFFW, 1>(false.into());
        for i in 0..5 {
            self.stmp.next = self.p1_off[i].q.val();
            self.off_bus.next = self.off_bus.val() | (bit_cast::<OFFW, FX>(self.stmp.val()) << self.off_sh[i].val());
        }
        self.norm_bus.next = bit_cast::<NORMW, 1>(false.into());
        for g in 0..3 {
            self.ntmp.next = self.pnorm[6 + g].q.val();
            self.norm_bus.next = self.norm_bus.val() | (bit_cast::<NORMW, 18>(self.ntmp.val()) << self.norm_sh[g].val());
        }
        self.dz_bus.next = self.zero3.val();
        for z in self._pd..(self._pd + 1) {
            for g in 0..3 {
                self.dztmp.next = self.pdz[3 * z - 3 + g].q.val();
                self.dz_bus.next = self.dz_bus.val() | (bit_cast::<3, 1>(self.dztmp.val().into()) << self.dz_sh[g].val());
            }
        }
        for p in 0..self._lanes {
            self.lane[p].off.next = self.off_bus.val();
            self.lane[p].norm.next = self.norm_bus.val();
            self.lane[p].dz.next = self.dz_bus.val();
        }

        // COO entries {idx, grp, hi} (spec §2.8) through the zero-remove
        // shifter: it moves {lane, grp, hi}; the beat's index base, a multiple
        // of the lane count, is ORed in after it (idx = base + lane)
        for l in self._p2..(self._p2 + 1) {
            self.v2.next = self.pv[l].q.val();
            self.zr.in_valid.next = self.pv[l].q.val();
            self.zf[0].d.next = self.pf[l].q.val();
            self.zl[0].d.next = self.pl[l].q.val();
            self.zb[0].d.next = self.pb[l].q.val();
        }
        self.zr.clock.next = self.clock.val();
        self.zr.reset.next = self.reset.val();
        self.zr.en.next = self.en2.val();
        for p in 0..self._lanes {
            self.gtmp.next = self.lane[p].grp.val() & self.v2.val();
            self.htmp.next = self.lane[p].hi.val() & self.v2.val();
            self.coo[p].next = (self.lane_idx[p].val() << self.two8.val())
                | (bit_cast::<8, 1>(self.gtmp.val().into()) << self.one8.val())
                | bit_cast::<8, 1>(self.htmp.val().into());
            self.zr.data[p].next = self.coo[p].val();
            // the lanes' late stages have no reset: a beat's valid bit gates
            // what they show
            self.zr.keep[p].next = self.lane[p].keep.val() & self.v2.val();
        }
        // dense slots, first and last wait alongside the shifter
        for i in 0..self._zl {
            self.zf[i].clock.next = self.clock.val();
            self.zf[i].reset.next = self.reset.val();
            self.zf[i].en.next = self.en2.val();
            self.zl[i].clock.next = self.clock.val();
            self.zl[i].reset.next = self.reset.val();
            self.zl[i].en.next = self.en2.val();
            self.zb[i].clock.next = self.clock.val();
            self.zb[i].reset.next = self.reset.val();
            self.zb[i].en.next = self.en2.val();
        }
        for i in 1..self._zl {
            self.zf[i].d.next = self.zf[i - 1].q.val();
            self.zl[i].d.next = self.zl[i - 1].q.val();
            self.zb[i].d.next = self.zb[i - 1].q.val();
        }
        for n in self._lanes..(self._lanes + 1) {
            for p in 0..self._lanes {
                self.zd[p].clock.next = self.clock.val();
                self.zd[p].reset.next = self.reset.val();
                self.zd[p].en.next = self.en2.val();
                self.zd[p].d.next = self.zero_ib.val();
                if self.v2.val() {
                    self.zd[p].d.next = self.lane[p].dense.val();
                }
            }
            for i in 1..self._zl {
                for p in 0..self._lanes {
                    self.zd[i * n + p].clock.next = self.clock.val();
                    self.zd[i * n + p].reset.next = self.reset.val();
                    self.zd[i * n + p].en.next = self.en2.val();
                    self.zd[i * n + p].d.next = self.zd[(i - 1) * n + p].q.val();
                }
            }
            for l in self._zl..(self._zl + 1) {
                for p in 0..self._lanes {
                    self.out_dense[p].next = self.zd[(l - 1) * n + p].q.val();
                }
                self.out_first.next = self.zf[l - 1].q.val();
                self.out_last.next = self.zl[l - 1].q.val();
            }
        }
        self.out_valid.next = self.zr.out_valid.val();
        self.out_coo_count.next = self.zr.count.val();
        for l in self._zl..(self._zl + 1) {
            self.base6.next = self.zb[l - 1].q.val() << self.two8.val();
        }
        for p in 0..self._lanes {
            self.out_coo[p].next = self.zr.out[p].val();
            if self.zr.count.val() > self.lane_idx[p].val() {
                self.out_coo[p].next = self.zr.out[p].val() | self.base6.val();
            }
        }

        // metadata FIFO: written at a token's first read, read at its output
        self.mf.clock.next = self.clock.val();
        self.mf.reset.next = self.reset.val();
        self.mf.push.next = self.rd_beat.val() & self.rd_first.val();
        self.mf.pop.next = self.out_fire.val() & self.out_last.val() & !self.mf.empty.val();
        for i in 0..12 {
            self.mf_byte[i].wdata.next = self.head_rec.val().get_bits::<8>(self.byte_off[i].val().index());
        }
        for s in 0..self._cnts {
            self.mf_byte[12 + s].wdata.next = self.head_cnt[s].val();
        }
        for i in 0..self._bytes {
            self.mf_byte[i].clock.next = self.clock.val();
            self.mf_byte[i].reset.next = self.reset.val();
            self.mf_byte[i].we.next = self.rd_beat.val() & self.rd_first.val();
            self.mf_byte[i].waddr.next = self.mf.waddr.val();
            self.mf_byte[i].raddr.next = self.mf.raddr.val();
        }
        for i in 0..12 {
            self.out_meta[i].next = self.mf_byte[i].rdata.val();
        }
        for i in 0..self._cnts {
            self.out_counts[i].next = self.mf_byte[12 + i].rdata.val();
        }
        self.mf_st.clock.next = self.clock.val();
        self.mf_st.reset.next = self.reset.val();
        self.mf_st.we.next = self.rd_beat.val() & self.rd_first.val();
        self.mf_st.waddr.next = self.mf.waddr.val();
        self.mf_st.raddr.next = self.mf.raddr.val();
        self.mf_st.wdata.next = self.head_st.val();
        self.out_status.next = self.mf_st.rdata.val();
    }
}
