//! Oaken dequantization engine.
//! Paper: Oaken (ISCA 2025) §5.2 "Dequantization engine" (Figure 9(b)):
//! inlier and outlier dequantizers, zero-insert of the COO entries, buffers
//! aligning the dense and sparse paths, OR-merge. Spec: docs/spec.md §4
//! (interface §4.2, alignment and malformed lists §4.3, decoding §4.4,
//! structure §4.5) on top of §2.9-§2.10.
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

use super::classify::Sanitize;
use super::deq_expand::{DeqExpandStage, XW, X_MOVE, X_TAKEN};
use super::table::ThresholdTable;
use crate::prim::fifo::{FifoCtrl, FifoMem, FifoShift};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;
use sim::oaken::params::{MiddleMode, OakenParams, SEGMENT};

/// Input FIFO depths (dense, sparse).
pub const FIFO_DEPTH: usize = 4;

/// Bits that hold 0..=n.
const fn bits_for(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}
// FIFO pointer and count widths sized to the depths: the dense FIFO holds
// FIFO_DEPTH beats, the sparse one FIFO_DEPTH - 1 behind its head register.
const DQ_A: usize = bits_for(FIFO_DEPTH - 1);
const DQ_C: usize = bits_for(FIFO_DEPTH);
const SQ_A: usize = bits_for(FIFO_DEPTH - 2);
const SQ_C: usize = bits_for(FIFO_DEPTH - 1);

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
        // FIFO (1), aligner register K0 (1), K1..K4 (4), rounder (2)
        DeqGeometry { lanes: p.lanes, beats: p.head_beats(), segments: p.segments(), latency: 8 }
    }
}

// Decode selections (base, step, direction), used as literal indices:
// 0 outer upper, 1 outer lower, 2 middle plain, 3 middle upper, 4 middle
// lower, 5 inner.

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
    // ---- input FIFOs ----
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
    // sparse beats, prepared as they enter: per lane the entry, bit 8 "from
    // a beat with s_count > L", bit 9 "index above the stream's previous
    // entry's", bit 10 "lane below min(s_count, L)". The oldest beat is in
    // a register (shead), the others in a FIFO behind it, so that the late
    // "the head joins the window" only selects the register's next value.
    sq: FifoCtrl<SQ_A, SQ_C>,
    sqm: Vec<FifoMem<11, SQ_A>>,
    shead: Vec<Reg<Bits<11>>>,
    to_head: Signal<Local, Bit>,
    s_bad: Signal<Local, Bit>,
    pidx: Vec<Signal<Local, Bits<8>>>,
    pent: Vec<Signal<Local, Bits<11>>>,
    lastsel: Signal<Local, Bits<8>>,
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
    // the index of the stream's last entry so far
    last_idx: Reg<Bits<8>>,
    // entries of the current segment's count range not yet taken, also as
    // a thermometer thr[j] = j < segrem (the record's first count at its
    // first beat), and "an earlier segment left entries untaken" (nothing
    // more is taken; 0 at a first beat)
    segrem: Reg<Bits<8>>,
    thr: Vec<Reg<Bit>>,
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
    d_avail: Signal<Local, Bit>,
    s_avail: Signal<Local, Bit>,
    hm: Vec<Signal<Local, Bits<11>>>,
    hv: Vec<Signal<Local, Bit>>,
    wdec: Vec<Signal<Local, Bit>>,
    cat: Vec<Signal<Local, Bits<11>>>,
    cidx: Signal<Local, Bits<8>>,
    // balanced OR trees of L + 1 leaves (values, bits): written as a chain
    // of ifs, a wide one-hot select maps to a serial chain
    vt0: Vec<Signal<Local, Bits<16>>>,
    vt1: Vec<Signal<Local, Bits<16>>>,
    vt2: Vec<Signal<Local, Bits<16>>>,
    vt3: Vec<Signal<Local, Bits<16>>>,
    vt4: Vec<Signal<Local, Bits<16>>>,
    vt5: Vec<Signal<Local, Bits<16>>>,
    vt6: Vec<Signal<Local, Bits<16>>>,
    vt7: Vec<Signal<Local, Bits<16>>>,
    bt0: Vec<Signal<Local, Bit>>,
    bt1: Vec<Signal<Local, Bit>>,
    bt2: Vec<Signal<Local, Bit>>,
    bt3: Vec<Signal<Local, Bit>>,
    bt4: Vec<Signal<Local, Bit>>,
    bt5: Vec<Signal<Local, Bit>>,
    bt6: Vec<Signal<Local, Bit>>,
    bt7: Vec<Signal<Local, Bit>>,
    lt_n: Signal<Local, Bit>,
    le_n: Signal<Local, Bit>,
    lt_s: Signal<Local, Bit>,
    le_s: Signal<Local, Bit>,
    bws_n: Signal<Local, Bits<8>>,
    // thr at a first beat: from the dense head, the word behind it (after
    // a pop) or the entering word, compared before the late select
    th_h: Vec<Signal<Local, Bit>>,
    th_1: Vec<Signal<Local, Bit>>,
    th_w: Vec<Signal<Local, Bit>>,
    occ0: Signal<Local, Bit>,
    occ1: Signal<Local, Bit>,
    dd: Vec<Signal<Local, Bit>>,
    sth: Signal<Local, Bit>,
    catw: Vec<Signal<Local, Bit>>,
    cath: Vec<Signal<Local, Bit>>,
    cat10: Vec<Signal<Local, Bit>>,
    cat9: Vec<Signal<Local, Bit>>,
    vc: Signal<Local, Bit>,
    wt: Vec<Signal<Local, Bit>>,
    ok: Vec<Signal<Local, Bit>>,
    px1: Vec<Signal<Local, Bit>>,
    px2: Vec<Signal<Local, Bit>>,
    px4: Vec<Signal<Local, Bit>>,
    px8: Vec<Signal<Local, Bit>>,
    px16: Vec<Signal<Local, Bit>>,
    take: Vec<Signal<Local, Bit>>,
    oh: Vec<Signal<Local, Bit>>,
    dth: Vec<Signal<Local, Bit>>,
    doh: Vec<Signal<Local, Bit>>,
    cs_oh: Vec<Signal<Local, Bit>>,
    dsk: Signal<Local, Bits<8>>,
    drop_all: Signal<Local, Bit>,
    wn: Signal<Local, Bits<11>>,
    vw: Signal<Local, Bit>,
    vh: Signal<Local, Bit>,
    app: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    idle: Signal<Local, Bit>,
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
    room_f: Signal<Local, Bit>,
    room_n: Signal<Local, Bit>,
    sq_low: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    rem: Signal<Local, Bits<16>>,
    slo: Signal<Local, Bits<9>>,
    shi: Signal<Local, Bits<8>>,
    rem_nz: Signal<Local, Bit>,
    rem_z: Signal<Local, Bit>,
    srsel: Signal<Local, Bits<8>>,
    seg_done: Signal<Local, Bit>,
    bad_take: Signal<Local, Bit>,
    adv: Signal<Local, Bit>,
    k0_take: Signal<Local, Bit>,
    k0_free: Signal<Local, Bit>,
    next_seg: Signal<Local, Bit>,
    nseg: Signal<Local, Bits<16>>,
    ncnt: Signal<Local, Bits<8>>,
    err_fin: Signal<Local, Bit>,
    // ---- K0: the aligner's output register ----
    k0_v: Reg<Bit>,
    k0_hold: Reg<Bit>,
    k0_first: Reg<Bit>,
    k0_last: Reg<Bit>,
    k0_err: Reg<Bit>,
    k0_oob: Reg<Bit>,
    k0_dense: Vec<Reg<Bits<IB>>>,
    k0_ent: Vec<Reg<Bits<8>>>,
    // the window's first L entries and which of them are taken
    k0_tk: Vec<Reg<Bit>>,
    k0_meta: Vec<Reg<Bits<8>>>,
    k0_thr: Reg<Bits<64>>,
    // ---- K1: entries in their lanes; token fields as magnitude and sign ----
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
    mv: Signal<Local, Bit>,
    san: Vec<Sanitize>,
    cvt: Vec<Fp16ToUnits>,
    fld: Vec<Signal<Local, Bits<16>>>,
    mlo: Signal<Local, Bits<8>>,
    mhi: Signal<Local, Bits<8>>,
    eight16: Constant<Bits<16>>,
    // the three steps as magnitude and sign; the mins and thresholds as
    // two's complement values, the two mins also negated
    k1_mag: Vec<Reg<Bits<FX>>>,
    k1_neg: Vec<Reg<Bit>>,
    k1_v: Vec<Reg<Bits<FX>>>,
    k1_nv: Vec<Reg<Bits<FX>>>,
    sf: Vec<Signal<Local, Bits<16>>>,
    sfi: Signal<Local, Bits<16>>,
    ex5: Signal<Local, Bits<5>>,
    sgp: Signal<Local, Bits<12>>,
    sgn: Signal<Local, Bits<12>>,
    pvv: Vec<Signal<Local, Bits<FX>>>,
    nvv: Vec<Signal<Local, Bits<FX>>>,
    shv: Vec<Signal<Local, Bits<5>>>,
    zero5: Constant<Bits<5>>,
    one5: Constant<Bits<5>>,
    c1024_12: Constant<Bits<12>>,
    zero12: Constant<Bits<12>>,
    sext12: Constant<Bits<FX>>,
    k1_has: Vec<Reg<Bit>>,
    k1_ent: Vec<Reg<Bits<8>>>,
    k1_dense: Vec<Reg<Bits<IB>>>,
    k1_oob: Reg<Bit>,
    // ---- K2: the record's six bases and three steps; per lane selection and code ----
    rec_en: Signal<Local, Bit>,
    bsum: Signal<Local, Bits<FX>>,
    bq: Vec<Reg<Bits<FX>>>,
    stp: Vec<Reg<Bits<FX>>>,
    sig: Vec<Reg<Bit>>,
    tok_oob: Reg<Bit>,
    k2_sel: Vec<Reg<Bits<3>>>,
    k2_q: Vec<Reg<Bits<16>>>,
    sel_d: Signal<Local, Bits<3>>,
    q_d: Signal<Local, Bits<16>>,
    slot16: Signal<Local, Bits<16>>,
    dtmp: Signal<Local, Bits<IB>>,
    ent_grp: Signal<Local, Bit>,
    ent_hi: Signal<Local, Bit>,
    // ---- K3: per lane base + q * step as a carry-save pair ----
    selv: Signal<Local, Bits<3>>,
    bsel: Signal<Local, Bits<FX>>,
    ssel: Signal<Local, Bits<FX>>,
    sgl: Signal<Local, Bit>,
    bext: Signal<Local, Bits<W>>,
    sw: Signal<Local, Bits<W>>,
    qv: Signal<Local, Bits<16>>,
    o0: Vec<Signal<Local, Bits<W>>>,
    o1: Vec<Signal<Local, Bits<W>>>,
    o2: Vec<Signal<Local, Bits<W>>>,
    o3: Vec<Signal<Local, Bits<W>>>,
    o4: Vec<Signal<Local, Bits<W>>>,
    o5: Vec<Signal<Local, Bits<W>>>,
    k3_s: Vec<Reg<Bits<W>>>,
    k3_c: Vec<Reg<Bits<W>>>,
    k3_sig: Vec<Reg<Bit>>,
    // ---- K4: y = s + c: its low 40 bits and sign, the sign of x', saturation ----
    ysum: Signal<Local, Bits<W>>,
    yhi: Signal<Local, Bits<W>>,
    ysg: Signal<Local, Bit>,
    k4_m: Vec<Reg<Bits<40>>>,
    k4_ys: Vec<Reg<Bit>>,
    k4_neg: Vec<Reg<Bit>>,
    k4_sat: Vec<Reg<Bit>>,
    // ---- R1: normalised magnitude ----
    mm: Signal<Local, Bits<40>>,
    fillm: Signal<Local, Bits<40>>,
    n1: Signal<Local, Bits<40>>,
    n2: Signal<Local, Bits<40>>,
    top8: Signal<Local, Bits<8>>,
    lzc: Signal<Local, Bits<8>>,
    lzf: Signal<Local, Bits<8>>,
    // zero tests of m's top bytes and of m >> 11, on both polarities of
    // the stored y (m = y ^ sign), the sign selecting last
    mz: Vec<Signal<Local, Bit>>,
    msmall: Signal<Local, Bit>,
    ones8: Constant<Bits<8>>,
    byte_off: Vec<Constant<Bits<32>>>,
    lo11_40: Constant<Bits<40>>,
    r1_n: Vec<Reg<Bits<40>>>,
    r1_lz: Vec<Reg<Bits<8>>>,
    r1_neg: Vec<Reg<Bit>>,
    r1_sat: Vec<Reg<Bit>>,
    r1_small: Vec<Reg<Bit>>,
    // ---- R2: round to nearest even and encode ----
    nn: Signal<Local, Bits<40>>,
    field: Signal<Local, Bits<12>>,
    low: Signal<Local, Bits<28>>,
    allones: Signal<Local, Bit>,
    anyb: Signal<Local, Bit>,
    ngv: Signal<Local, Bit>,
    cin: Signal<Local, Bit>,
    sticky: Signal<Local, Bit>,
    inc: Signal<Local, Bit>,
    aval: Signal<Local, Bits<12>>,
    res: Signal<Local, Bits<12>>,
    ex: Signal<Local, Bits<8>>,
    pat: Signal<Local, Bits<16>>,
    r2_y: Vec<Reg<Bits<16>>>,
    // ---- beat flags along K1..out ----
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
    shw: Vec<Constant<Bits<W>>>,
    fsh: Vec<Constant<Bits<8>>>,
    fmask: Vec<Constant<Bits<40>>>,
    fsh40: Vec<Constant<Bits<40>>>,
    fcnt: Vec<Constant<Bits<8>>>,
    lanes8: Constant<Bits<8>>,
    lmask8: Constant<Bits<8>>,
    lshift8: Constant<Bits<8>>,
    bws_mask: Constant<Bits<8>>,
    seg_shift: Constant<Bits<16>>,
    last_beat: Constant<Bits<16>>,
    depth8: Constant<Bits<8>>,
    depth_m1: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    zero11: Constant<Bits<11>>,
    bad11: Constant<Bits<11>>,
    inc11: Constant<Bits<11>>,
    cur11: Constant<Bits<11>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    hi_bit16: Constant<Bits<16>>,
    mid_mask: Constant<Bits<16>>,
    mid_sel_lo: Constant<Bits<3>>,
    mid_sel_hi: Constant<Bits<3>>,
    mid_top: Constant<Bits<32>>,
    sel_c: Vec<Constant<Bits<3>>>,
    one_w: Constant<Bits<W>>,
    zero_w: Constant<Bits<W>>,
    sext_w: Constant<Bits<W>>,
    hi_ones_w: Constant<Bits<W>>,
    sh40_w: Constant<Bits<W>>,
    msb_w: Constant<Bits<32>>,
    msb_fx: Constant<Bits<32>>,
    zero40: Constant<Bits<40>>,
    ones40: Constant<Bits<40>>,
    c8_8: Constant<Bits<8>>,
    c16_8: Constant<Bits<8>>,
    c24_8: Constant<Bits<8>>,
    c30_8: Constant<Bits<8>>,
    sh8_40: Constant<Bits<40>>,
    sh16_40: Constant<Bits<40>>,
    sh24_40: Constant<Bits<40>>,
    sh11_40: Constant<Bits<40>>,
    m8_40: Constant<Bits<40>>,
    m16_40: Constant<Bits<40>>,
    m24_40: Constant<Bits<40>>,
    ones28: Constant<Bits<28>>,
    zero28: Constant<Bits<28>>,
    one12: Constant<Bits<12>>,
    sh10_16: Constant<Bits<16>>,
    sh15_16: Constant<Bits<16>>,
    max16: Constant<Bits<16>>,

    _lanes: usize,
    _w2: usize,
    _c9: usize,
    _w3: usize,
    _wp1: usize,
    _segs: usize,
    _bytes: usize,
    _np: usize,
    _m1: usize,
    _m2: usize,
    _m4: usize,
    _m8: usize,
    _m16: usize,
    _m32: usize,
    // carry-save tree: 3:2 groups and pass-through operands per level
    _g1: usize,
    _r1: usize,
    _g2: usize,
    _r2: usize,
    _g3: usize,
    _r3: usize,
    _g4: usize,
    _r4: usize,
    _g5: usize,
    _r5: usize,
    _stages: usize,
    _lm1: usize,
    // OR trees: pairs and pass-through leaves per level
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

impl<const IB: usize, const W: usize> OakenDequantizer<IB, W> {
    pub fn new(p: &OakenParams) -> Self {
        p.validate().expect("parameters are validated by the generator");
        assert_eq!(p.inlier_bits as usize, IB);
        assert_eq!(W, sum_width(IB));
        let l = p.lanes;
        let s = p.segments();
        let beats = p.head_beats();
        let np = IB + 1;
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
        // carry-save levels: n operands -> 2 (n/3) + n%3
        let mut n = [0usize; 6];
        let (mut g, mut r) = ([0usize; 5], [0usize; 5]);
        n[0] = np + 1;
        for k in 0..5 {
            g[k] = if n[k] > 2 { n[k] / 3 } else { 0 };
            r[k] = n[k] - 3 * g[k];
            n[k + 1] = 2 * g[k] + r[k];
        }
        assert_eq!(n[5], 2, "carry-save tree too shallow");
        // OR trees over L + 1 leaves (L <= 64: 7 levels reach one)
        let mut tn = [0usize; 8];
        let (mut tp, mut tr) = ([0usize; 7], [0usize; 7]);
        tn[0] = l + 1;
        for k in 0..7 {
            tp[k] = tn[k] / 2;
            tr[k] = tn[k] % 2;
            tn[k + 1] = tp[k] + tr[k];
        }
        assert_eq!(tn[7], 1, "OR tree too shallow");
        // flags after K1, K2, K3, K4 and the two rounder stages
        let stages = 6;
        let per_seg = SEGMENT / l;
        let ones = |b: usize| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        // lengths are compared with window counts 0..=2L: bits_for(2L) bits
        let pdw = bits_for(2 * l);
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
            s_pop: Default::default(),
            d_occ: Reg::default(),
            s_occ: Reg::default(),
            d_rdy: Reg::default(),
            s_rdy: Reg::default(),
            dq: FifoCtrl::new(FIFO_DEPTH),
            dq_dense: (0..l).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
            dq_meta: (0..12).map(|_| FifoMem::new(FIFO_DEPTH)).collect(),
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
            pidx: sigs(l),
            pent: sigs(l),
            lastsel: Default::default(),
            win: regs(2 * l),
            wval: regs(2 * l),
            wc: regs(l),
            last_idx: Reg::default(),
            segrem: Reg::default(),
            thr: regs(l),
            behind: Reg::default(),
            need: Reg::default(),
            skip: Reg::default(),
            beat: Reg::default(),
            fb: Reg::new(true),
            lb: Reg::new(beats == 1),
            nbeat: Default::default(),
            cnt_r: regs(s),
            err_r: Reg::default(),
            d_avail: Default::default(),
            s_avail: Default::default(),
            hm: sigs(l),
            hv: sigs(l),
            wdec: sigs(2 * l + 1),
            cat: sigs(3 * l),
            cidx: Default::default(),
            vt0: sigs(tn[0]),
            vt1: sigs(tn[1]),
            vt2: sigs(tn[2]),
            vt3: sigs(tn[3]),
            vt4: sigs(tn[4]),
            vt5: sigs(tn[5]),
            vt6: sigs(tn[6]),
            vt7: sigs(tn[7]),
            bt0: sigs(tn[0]),
            bt1: sigs(tn[1]),
            bt2: sigs(tn[2]),
            bt3: sigs(tn[3]),
            bt4: sigs(tn[4]),
            bt5: sigs(tn[5]),
            bt6: sigs(tn[6]),
            bt7: sigs(tn[7]),
            lt_n: Default::default(),
            le_n: Default::default(),
            lt_s: Default::default(),
            le_s: Default::default(),
            bws_n: Default::default(),
            th_h: sigs(l),
            th_1: sigs(l),
            th_w: sigs(l),
            occ0: Default::default(),
            occ1: Default::default(),
            dd: sigs(2 * l),
            sth: Default::default(),
            catw: sigs(3 * l),
            cath: sigs(3 * l),
            cat10: sigs(l + 1),
            cat9: sigs(if l > 1 { 2 * l - 1 } else { 0 }),
            vc: Default::default(),
            wt: sigs(l),
            ok: sigs(l),
            px1: sigs(l),
            px2: sigs(l),
            px4: sigs(l),
            px8: sigs(l),
            px16: sigs(l),
            take: sigs(l),
            oh: sigs(l + 1),
            dth: sigs(l),
            doh: sigs(l + 1),
            cs_oh: sigs(l + 1),
            dsk: Default::default(),
            drop_all: Default::default(),
            wn: Default::default(),
            vw: Default::default(),
            vh: Default::default(),
            app: Default::default(),
            room: Default::default(),
            idle: Default::default(),
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
            room_f: Default::default(),
            room_n: Default::default(),
            sq_low: Default::default(),
            fire: Default::default(),
            rem: Default::default(),
            slo: Default::default(),
            shi: Default::default(),
            rem_nz: Default::default(),
            rem_z: Default::default(),
            srsel: Default::default(),
            seg_done: Default::default(),
            bad_take: Default::default(),
            adv: Default::default(),
            k0_take: Default::default(),
            k0_free: Default::default(),
            next_seg: Default::default(),
            nseg: Default::default(),
            ncnt: Default::default(),
            err_fin: Default::default(),
            k0_v: Reg::default(),
            k0_hold: Reg::default(),
            k0_first: Reg::default(),
            k0_last: Reg::default(),
            k0_err: Reg::default(),
            k0_oob: Reg::default(),
            k0_dense: regs(l),
            k0_ent: regs(l),
            k0_tk: regs(l),
            k0_meta: regs(12),
            k0_thr: Reg::default(),
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
            mv: Default::default(),
            san: (0..6).map(|_| Sanitize::default()).collect(),
            cvt: (0..3).map(|_| Fp16ToUnits::default()).collect(),
            fld: sigs(10),
            mlo: Default::default(),
            mhi: Default::default(),
            eight16: c(8),
            k1_mag: regs(3),
            k1_neg: regs(3),
            k1_v: regs(7),
            k1_nv: regs(2),
            sf: sigs(7),
            sfi: Default::default(),
            ex5: Default::default(),
            sgp: Default::default(),
            sgn: Default::default(),
            pvv: sigs(7),
            nvv: sigs(7),
            shv: sigs(7),
            zero5: c(0),
            one5: c(1),
            c1024_12: c(1024),
            zero12: c(0),
            sext12: c(ones(FX) - ones(12)),
            k1_has: regs(l),
            k1_ent: regs(l),
            k1_dense: regs(l),
            k1_oob: Reg::default(),
            rec_en: Default::default(),
            bsum: Default::default(),
            bq: regs(6),
            stp: regs(3),
            sig: regs(6),
            tok_oob: Reg::default(),
            k2_sel: regs(l),
            k2_q: regs(l),
            sel_d: Default::default(),
            q_d: Default::default(),
            slot16: Default::default(),
            dtmp: Default::default(),
            ent_grp: Default::default(),
            ent_hi: Default::default(),
            selv: Default::default(),
            bsel: Default::default(),
            ssel: Default::default(),
            sgl: Default::default(),
            bext: Default::default(),
            sw: Default::default(),
            qv: Default::default(),
            o0: sigs(n[0]),
            o1: sigs(n[1]),
            o2: sigs(n[2]),
            o3: sigs(n[3]),
            o4: sigs(n[4]),
            o5: sigs(n[5]),
            k3_s: regs(l),
            k3_c: regs(l),
            k3_sig: regs(l),
            ysum: Default::default(),
            yhi: Default::default(),
            ysg: Default::default(),
            k4_m: regs(l),
            k4_ys: regs(l),
            k4_neg: regs(l),
            k4_sat: regs(l),
            mm: Default::default(),
            fillm: Default::default(),
            n1: Default::default(),
            n2: Default::default(),
            top8: Default::default(),
            lzc: Default::default(),
            lzf: Default::default(),
            mz: sigs(3),
            msmall: Default::default(),
            ones8: c(0xFF),
            byte_off: (0..3).map(|b| c(16 + 8 * b as u64)).collect(),
            lo11_40: c(ones(11)),
            r1_n: regs(l),
            r1_lz: regs(l),
            r1_neg: regs(l),
            r1_sat: regs(l),
            r1_small: regs(l),
            nn: Default::default(),
            field: Default::default(),
            low: Default::default(),
            allones: Default::default(),
            anyb: Default::default(),
            ngv: Default::default(),
            cin: Default::default(),
            sticky: Default::default(),
            inc: Default::default(),
            aval: Default::default(),
            res: Default::default(),
            ex: Default::default(),
            pat: Default::default(),
            r2_y: regs(l),
            pv: regs(stages),
            pf: regs(stages),
            pl: regs(stages),
            pe: regs(stages),
            po: regs(stages),
            kc8: (0..=l).map(|i| c(i as u64)).collect(),
            kc16: (0..=2 * l).map(|i| c(i as u64)).collect(),
            seg_c: (0..s).map(|i| c(i as u64)).collect(),
            seg_len: (0..s).map(|i| c(p.segment_len(i) as u64)).collect(),
            thr_off: (0..4).map(|i| c(16 * i as u64)).collect(),
            bit_c: (0..np.max(2)).map(|i| c(i as u64)).collect(),
            shw: (0..np).map(|i| c(i as u64)).collect(),
            fsh: (0..8).map(|f| c(7 - f as u64)).collect(),
            fmask: (0..8).map(|f| c(ones(f))).collect(),
            fsh40: (0..8).map(|f| c(f as u64)).collect(),
            fcnt: (0..8).map(|f| c(f as u64)).collect(),
            lanes8: c(l as u64),
            lmask8: c((l - 1) as u64),
            lshift8: c(l.trailing_zeros() as u64),
            bws_mask: c((per_seg - 1) as u64),
            seg_shift: c(per_seg.trailing_zeros() as u64),
            last_beat: c((beats - 1) as u64),
            depth8: c(FIFO_DEPTH as u64),
            depth_m1: c(FIFO_DEPTH as u64 - 1),
            two8: c(2),
            one8: c(1),
            zero8: c(0),
            zero11: c(0),
            bad11: c(0x100),
            inc11: c(0x200),
            cur11: c(0x400),
            zero16: c(0),
            one16: c(1),
            hi_bit16: c(1u64 << IB),
            mid_mask: c(if mid_shifted { (1u64 << (IB - 1)) - 1 } else { 0xFFFF }),
            mid_sel_lo: c(if mid_shifted { 4 } else { 2 }),
            mid_sel_hi: c(if mid_shifted { 3 } else { 2 }),
            mid_top: c((IB - 1) as u64),
            sel_c: (0..6).map(|i| c(i as u64)).collect(),
            one_w: c(1),
            zero_w: c(0),
            sext_w: c(ones(W) - ones(FX)),
            hi_ones_w: c(ones(W - 40)),
            sh40_w: c(40),
            msb_w: c((W - 1) as u64),
            msb_fx: c((FX - 1) as u64),
            zero40: c(0),
            ones40: c(ones(40)),
            c8_8: c(8),
            c16_8: c(16),
            c24_8: c(24),
            c30_8: c(30),
            sh8_40: c(8),
            sh16_40: c(16),
            sh24_40: c(24),
            sh11_40: c(11),
            m8_40: c(ones(8)),
            m16_40: c(ones(16)),
            m24_40: c(ones(24)),
            ones28: c(ones(28)),
            zero28: c(0),
            one12: c(1),
            sh10_16: c(10),
            sh15_16: c(15),
            max16: c(0x7BFF),
            _lanes: l,
            _w2: 2 * l,
            _c9: if l > 1 { 2 * l - 1 } else { 0 },
            _w3: 3 * l,
            _wp1: 2 * l + 1,
            _segs: s,
            _bytes: bytes,
            _np: np,
            _m1: l.min(1),
            _m2: l.min(2),
            _m4: l.min(4),
            _m8: l.min(8),
            _m16: l.min(16),
            _m32: l.min(32),
            _g1: g[0],
            _r1: r[0],
            _g2: g[1],
            _r2: r[1],
            _g3: g[2],
            _r3: r[2],
            _g4: g[3],
            _r4: r[3],
            _g5: g[4],
            _r5: r[4],
            _stages: stages,
            _lm1: l - 1,
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

        clock!(
            self, clock, d_occ, s_occ, d_rdy, s_rdy, last_idx, segrem, behind, need, npd_z, skip, beat, fb, lb, err_r, k0_v,
            k0_hold, k0_first, k0_last, k0_err, k0_oob, k0_thr, k1_oob, tok_oob
        );
        self.d_occ.reset.next = self.reset.val();
        self.s_occ.reset.next = self.reset.val();
        self.d_rdy.reset.next = self.reset.val();
        self.s_rdy.reset.next = self.reset.val();
        self.last_idx.reset.next = self.reset.val();
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
        for p in 0..self._lanes {
            self.dq_dense[p].clock.next = self.clock.val();
            self.dq_dense[p].reset.next = self.reset.val();
            self.dq_dense[p].we.next = self.d_push.val();
            self.dq_dense[p].waddr.next = self.dq.waddr.val();
            self.dq_dense[p].wdata.next = self.d_dense[p].val();
            self.dq_dense[p].raddr.next = self.dq.raddr.val();
        }
        for i in 0..self._bytes {
            self.dq_meta[i].clock.next = self.clock.val();
            self.dq_meta[i].reset.next = self.reset.val();
            self.dq_meta[i].we.next = self.d_push.val();
            self.dq_meta[i].waddr.next = self.dq.waddr.val();
            self.dq_meta[i].wdata.next = self.d_meta[i].val();
            self.dq_meta[i].raddr.next = self.dq.raddr.val();
        }
        // the record's counts, their sum (its list length) and "a count is
        // over its segment's length", found as the beat enters
        self.n_in.next = self.zero16.val();
        self.bad_in.next = false;
        for s in 0..self._segs {
            self.dq_cnt[s].clock.next = self.clock.val();
            self.dq_cnt[s].reset.next = self.reset.val();
            self.dq_cnt[s].push.next = self.d_push.val();
            self.dq_cnt[s].wdata.next = self.d_counts[s].val();
            self.t8.next = self.d_counts[s].val();
            self.n_in.next = self.n_in.val() + bit_cast::<16, 8>(self.t8.val());
            if self.t8.val() > self.seg_len[s].val() {
                self.bad_in.next = true;
            }
        }
        self.dq_n.clock.next = self.clock.val();
        self.dq_n.reset.next = self.reset.val();
        self.dq_n.push.next = self.d_push.val();
        self.dq_n.wdata.next = self.n_in.val();
        self.dq_bad.clock.next = self.clock.val();
        self.dq_bad.reset.next = self.reset.val();
        self.dq_bad.push.next = self.d_push.val();
        self.dq_bad.wdata.next = bit_cast::<1, 1>(self.bad_in.val().into());
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
            self.vt0[p].next = self.zero16.val();
            if self.s_count.val() == self.kc8[p + 1].val() {
                self.t8.next = self.pidx[p].val();
                self.vt0[p].next = bit_cast::<16, 8>(self.t8.val());
            }
        }
        for p in self._lm1..self._lanes {
            self.vt0[p].next = self.zero16.val();
            if self.s_count.val() > self.kc8[p].val() {
                self.t8.next = self.pidx[p].val();
                self.vt0[p].next = bit_cast::<16, 8>(self.t8.val());
            }
        }
        for p in self._lanes..(self._lanes + 1) {
            self.vt0[p].next = self.zero16.val();
            if self.s_count.val() == self.zero8.val() {
                self.vt0[p].next = bit_cast::<16, 8>(self.last_idx.q.val());
            }
        }
        for i in 0..self._tp1 {
            self.vt1[i].next = self.vt0[2 * i].val() | self.vt0[2 * i + 1].val();
        }
        for g in self._tp1..(self._tp1 + self._tr1) {
            self.vt1[g].next = self.vt0[2 * g].val();
        }
        for i in 0..self._tp2 {
            self.vt2[i].next = self.vt1[2 * i].val() | self.vt1[2 * i + 1].val();
        }
        for g in self._tp2..(self._tp2 + self._tr2) {
            self.vt2[g].next = self.vt1[2 * g].val();
        }
        for i in 0..self._tp3 {
            self.vt3[i].next = self.vt2[2 * i].val() | self.vt2[2 * i + 1].val();
        }
        for g in self._tp3..(self._tp3 + self._tr3) {
            self.vt3[g].next = self.vt2[2 * g].val();
        }
        for i in 0..self._tp4 {
            self.vt4[i].next = self.vt3[2 * i].val() | self.vt3[2 * i + 1].val();
        }
        for g in self._tp4..(self._tp4 + self._tr4) {
            self.vt4[g].next = self.vt3[2 * g].val();
        }
        for i in 0..self._tp5 {
            self.vt5[i].next = self.vt4[2 * i].val() | self.vt4[2 * i + 1].val();
        }
        for g in self._tp5..(self._tp5 + self._tr5) {
            self.vt5[g].next = self.vt4[2 * g].val();
        }
        for i in 0..self._tp6 {
            self.vt6[i].next = self.vt5[2 * i].val() | self.vt5[2 * i + 1].val();
        }
        for g in self._tp6..(self._tp6 + self._tr6) {
            self.vt6[g].next = self.vt5[2 * g].val();
        }
        for i in 0..self._tp7 {
            self.vt7[i].next = self.vt6[2 * i].val() | self.vt6[2 * i + 1].val();
        }
        for g in self._tp7..(self._tp7 + self._tr7) {
            self.vt7[g].next = self.vt6[2 * g].val();
        }
        self.lastsel.next = self.vt7[0].val().get_bits::<8>(0);
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

        // ---------------- aligner (spec §4.3) ----------------
        self.d_avail.next = !self.dq.empty.val();
        self.s_avail.next = self.s_occ.q.val() != self.zero8.val();
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
                self.cm[s].next = self.dq_cnt[s].rdata.val();
            }
        }
        self.need_cur.next = self.need.q.val();
        self.sr_cur.next = self.segrem.q.val();
        if self.first_b.val() {
            self.need_cur.next = self.dq_n.rdata.val();
            self.sr_cur.next = self.dq_cnt[0].rdata.val();
        }
        self.bh_cur.next = self.behind.q.val();
        self.bws.next = bit_cast::<8, 16>(self.beat.q.val()) & self.bws_mask.val();

        // entries taken into this beat: a prefix of the window (§4.3), never
        // past the segment's count range; ok[j] is entry j's own condition
        // (bit 9: its index is above its predecessor's), take[j] = ok[0] &
        // ... & ok[j]
        for j in 0..self._lanes {
            self.ok[j].next =
                self.wval[j].q.val() & self.thr[j].q.val() & !self.behind.q.val() & self.win[j].q.val().get_bit(10);
        }
        for j in 1..self._lanes {
            self.ok[j].next = self.ok[j].val() & self.win[j].q.val().get_bit(9);
        }
        // prefix AND in log2(L) levels. wval and thr are thermometers and
        // behind is common to all, so their prefix is themselves: only the
        // stored per-entry bits (wc) go through the prefix, which thus starts
        // at registers, and the rest (wt, early) joins at its end
        for j in 0..self._lanes {
            self.wt[j].next = self.wval[j].q.val() & self.thr[j].q.val() & !self.behind.q.val();
        }
        for j in 0..self._m1 {
            self.px1[j].next = self.wc[j].q.val();
        }
        for j in self._m1..self._lanes {
            self.px1[j].next = self.wc[j].q.val() & self.wc[j - 1].q.val();
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
            if self.take[j].val() & self.win[j].q.val().get_bit(8) {
                self.bad_take.next = true;
            }
        }
        // what depends on the count is chosen by the one-hot from values
        // ready early: the record's and the segment's remaining entries,
        // and whether they reach zero
        for k in 0..(self._lanes + 1) {
            self.vt0[k].next = self.zero16.val();
            if self.oh[k].val() {
                self.vt0[k].next = self.need_cur.val() - self.kc16[k].val();
            }
        }
        for i in 0..self._tp1 {
            self.vt1[i].next = self.vt0[2 * i].val() | self.vt0[2 * i + 1].val();
        }
        for g in self._tp1..(self._tp1 + self._tr1) {
            self.vt1[g].next = self.vt0[2 * g].val();
        }
        for i in 0..self._tp2 {
            self.vt2[i].next = self.vt1[2 * i].val() | self.vt1[2 * i + 1].val();
        }
        for g in self._tp2..(self._tp2 + self._tr2) {
            self.vt2[g].next = self.vt1[2 * g].val();
        }
        for i in 0..self._tp3 {
            self.vt3[i].next = self.vt2[2 * i].val() | self.vt2[2 * i + 1].val();
        }
        for g in self._tp3..(self._tp3 + self._tr3) {
            self.vt3[g].next = self.vt2[2 * g].val();
        }
        for i in 0..self._tp4 {
            self.vt4[i].next = self.vt3[2 * i].val() | self.vt3[2 * i + 1].val();
        }
        for g in self._tp4..(self._tp4 + self._tr4) {
            self.vt4[g].next = self.vt3[2 * g].val();
        }
        for i in 0..self._tp5 {
            self.vt5[i].next = self.vt4[2 * i].val() | self.vt4[2 * i + 1].val();
        }
        for g in self._tp5..(self._tp5 + self._tr5) {
            self.vt5[g].next = self.vt4[2 * g].val();
        }
        for i in 0..self._tp6 {
            self.vt6[i].next = self.vt5[2 * i].val() | self.vt5[2 * i + 1].val();
        }
        for g in self._tp6..(self._tp6 + self._tr6) {
            self.vt6[g].next = self.vt5[2 * g].val();
        }
        for i in 0..self._tp7 {
            self.vt7[i].next = self.vt6[2 * i].val() | self.vt6[2 * i + 1].val();
        }
        for g in self._tp7..(self._tp7 + self._tr7) {
            self.vt7[g].next = self.vt6[2 * g].val();
        }
        self.rem.next = self.vt7[0].val();
        for k in 0..(self._lanes + 1) {
            self.vt0[k].next = self.zero16.val();
            if self.oh[k].val() {
                self.t8.next = self.sr_cur.val() - self.kc8[k].val();
                self.vt0[k].next = bit_cast::<16, 8>(self.t8.val());
            }
        }
        for i in 0..self._tp1 {
            self.vt1[i].next = self.vt0[2 * i].val() | self.vt0[2 * i + 1].val();
        }
        for g in self._tp1..(self._tp1 + self._tr1) {
            self.vt1[g].next = self.vt0[2 * g].val();
        }
        for i in 0..self._tp2 {
            self.vt2[i].next = self.vt1[2 * i].val() | self.vt1[2 * i + 1].val();
        }
        for g in self._tp2..(self._tp2 + self._tr2) {
            self.vt2[g].next = self.vt1[2 * g].val();
        }
        for i in 0..self._tp3 {
            self.vt3[i].next = self.vt2[2 * i].val() | self.vt2[2 * i + 1].val();
        }
        for g in self._tp3..(self._tp3 + self._tr3) {
            self.vt3[g].next = self.vt2[2 * g].val();
        }
        for i in 0..self._tp4 {
            self.vt4[i].next = self.vt3[2 * i].val() | self.vt3[2 * i + 1].val();
        }
        for g in self._tp4..(self._tp4 + self._tr4) {
            self.vt4[g].next = self.vt3[2 * g].val();
        }
        for i in 0..self._tp5 {
            self.vt5[i].next = self.vt4[2 * i].val() | self.vt4[2 * i + 1].val();
        }
        for g in self._tp5..(self._tp5 + self._tr5) {
            self.vt5[g].next = self.vt4[2 * g].val();
        }
        for i in 0..self._tp6 {
            self.vt6[i].next = self.vt5[2 * i].val() | self.vt5[2 * i + 1].val();
        }
        for g in self._tp6..(self._tp6 + self._tr6) {
            self.vt6[g].next = self.vt5[2 * g].val();
        }
        for i in 0..self._tp7 {
            self.vt7[i].next = self.vt6[2 * i].val() | self.vt6[2 * i + 1].val();
        }
        for g in self._tp7..(self._tp7 + self._tr7) {
            self.vt7[g].next = self.vt6[2 * g].val();
        }
        self.srsel.next = self.vt7[0].val().get_bits::<8>(0);
        // t == n as (t <= n) & !(t < n), each free of the take prefix: for
        // a thermometer X, X[t] = X[L] | OR_i (!ok[i] & X[i]) (the first i
        // with !ok[i] is t, and X[i] for i > t implies X[t])
        for i in 0..self._lanes {
            self.bt0[i].next = !self.ok[i].val() & (self.kc16[i].val() < self.need_cur.val());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bt0[i].next = self.kc16[i].val() < self.need_cur.val();
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
        self.lt_n.next = self.bt7[0].val();
        for i in 0..self._m1 {
            self.bt0[i].next = !self.ok[i].val();
        }
        for i in self._m1..self._lanes {
            self.bt0[i].next = !self.ok[i].val() & (self.kc16[i - 1].val() < self.need_cur.val());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bt0[i].next = self.kc16[i - 1].val() < self.need_cur.val();
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
        self.le_n.next = self.bt7[0].val();
        self.rem_z.next = self.le_n.val() & !self.lt_n.val();
        for i in 0..self._lanes {
            self.bt0[i].next = !self.ok[i].val() & (self.kc8[i].val() < self.sr_cur.val());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bt0[i].next = self.kc8[i].val() < self.sr_cur.val();
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
        self.lt_s.next = self.bt7[0].val();
        for i in 0..self._m1 {
            self.bt0[i].next = !self.ok[i].val();
        }
        for i in self._m1..self._lanes {
            self.bt0[i].next = !self.ok[i].val() & (self.kc8[i - 1].val() < self.sr_cur.val());
        }
        for i in self._lanes..(self._lanes + 1) {
            self.bt0[i].next = self.kc8[i - 1].val() < self.sr_cur.val();
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
        self.le_s.next = self.bt7[0].val();
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
            self.cpd_z.next = (self.dq_n.rdata.val() & self.pd_hi.val()) == self.zero16.val();
            for k in 0..self._wp1 {
                self.cpd_k[k].next = (self.dq_n.rdata.val() & self.pd_lo.val()) == self.kc16[k].val();
            }
        }
        self.cmp_n.next = self.cpd_k[0].val();
        for k in 1..self._wp1 {
            if self.cpd_k[k].val() & self.wval[k - 1].q.val() {
                self.cmp_n.next = true;
            }
        }
        self.complete.next = self.cpd_z.val() & self.cmp_n.val();
        for k in (self._lanes - 1)..self._lanes {
            self.fire.next = self.d_avail.val() & self.k0_free.val() & (self.wval[k].q.val() | self.complete.val());
        }
        // after a last beat with entries untaken (malformed), K0 holds it
        // while they are dropped, min(skip, L, window) a cycle
        for j in 0..self._lanes {
            self.dth[j].next = self.wval[j].q.val() & (self.kc16[j].val() < self.skip.q.val());
        }
        self.doh[0].next = !self.dth[0].val();
        for k in 1..self._lanes {
            self.doh[k].next = self.dth[k - 1].val() & !self.dth[k].val();
        }
        for k in self._lanes..(self._lanes + 1) {
            self.doh[k].next = self.dth[k - 1].val();
        }
        for k in 0..(self._lanes + 1) {
            self.vt0[k].next = self.zero16.val();
            if self.doh[k].val() {
                self.vt0[k].next = self.kc16[k].val();
            }
        }
        for i in 0..self._tp1 {
            self.vt1[i].next = self.vt0[2 * i].val() | self.vt0[2 * i + 1].val();
        }
        for g in self._tp1..(self._tp1 + self._tr1) {
            self.vt1[g].next = self.vt0[2 * g].val();
        }
        for i in 0..self._tp2 {
            self.vt2[i].next = self.vt1[2 * i].val() | self.vt1[2 * i + 1].val();
        }
        for g in self._tp2..(self._tp2 + self._tr2) {
            self.vt2[g].next = self.vt1[2 * g].val();
        }
        for i in 0..self._tp3 {
            self.vt3[i].next = self.vt2[2 * i].val() | self.vt2[2 * i + 1].val();
        }
        for g in self._tp3..(self._tp3 + self._tr3) {
            self.vt3[g].next = self.vt2[2 * g].val();
        }
        for i in 0..self._tp4 {
            self.vt4[i].next = self.vt3[2 * i].val() | self.vt3[2 * i + 1].val();
        }
        for g in self._tp4..(self._tp4 + self._tr4) {
            self.vt4[g].next = self.vt3[2 * g].val();
        }
        for i in 0..self._tp5 {
            self.vt5[i].next = self.vt4[2 * i].val() | self.vt4[2 * i + 1].val();
        }
        for g in self._tp5..(self._tp5 + self._tr5) {
            self.vt5[g].next = self.vt4[2 * g].val();
        }
        for i in 0..self._tp6 {
            self.vt6[i].next = self.vt5[2 * i].val() | self.vt5[2 * i + 1].val();
        }
        for g in self._tp6..(self._tp6 + self._tr6) {
            self.vt6[g].next = self.vt5[2 * g].val();
        }
        for i in 0..self._tp7 {
            self.vt7[i].next = self.vt6[2 * i].val() | self.vt6[2 * i + 1].val();
        }
        for g in self._tp7..(self._tp7 + self._tr7) {
            self.vt7[g].next = self.vt6[2 * g].val();
        }
        self.dsk.next = self.vt7[0].val().get_bits::<8>(0);
        // all of the remainder drops this cycle: skip <= min(L, window)
        self.drop_all.next = self.skip.q.val() == self.zero16.val();
        for k in 1..(self._lanes + 1) {
            if (self.skip.q.val() == self.kc16[k].val()) & self.wval[k - 1].q.val() {
                self.drop_all.next = true;
            }
        }

        // the window shifts down by the entries taken or dropped (one-hot
        // select); the sparse FIFO's head beat joins behind what is left
        // when at most L entries are left. cat is the window with the head
        // beat's entries after its last one, placed before the shift is
        // known; valid bits of the window's and of the head's entries
        // shift apart, so that the late "head joins" only gates the latter.
        self.idle.next = !self.k0_hold.q.val() & !self.fire.val();
        for k in 0..(self._lanes + 1) {
            self.cs_oh[k].next = (self.k0_hold.q.val() & self.doh[k].val()) | (self.fire.val() & self.oh[k].val());
        }
        self.cs_oh[0].next = self.cs_oh[0].val() | self.idle.val();
        for p in 0..self._lanes {
            self.hv[p].next = self.shead[p].q.val().get_bit(10);
            self.hm[p].next = self.shead[p].q.val() & !self.cur11.val();
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
        // bit 10 of every entry: its index lies in the beat that is current
        // after this edge (the next one when a beat is taken)
        self.bws_n.next = self.bws.val();
        if self.fire.val() {
            self.bws_n.next = bit_cast::<8, 16>(self.nbeat.val()) & self.bws_mask.val();
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
                if self.k0_hold.q.val() & self.doh[k].val() & self.catw[ln + k].val() {
                    self.room_n.next = false;
                }
            }
            if !self.k0_hold.q.val() & self.catw[ln].val() {
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
            self.err_fin.next = self.err_fin.val() | self.dq_bad.rdata.val().any();
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
        // thr for the beat current after this edge: at a first beat the
        // count the dense FIFO's head will show; after a taken beat the
        // rest of the range (dd shifted by the count taken) or the next
        // segment's count
        for i in 0..self._w2 {
            self.dd[i].next = self.kc16[i].val() < bit_cast::<16, 8>(self.sr_cur.val());
        }
        self.occ0.next = self.d_occ.q.val() == self.zero8.val();
        self.occ1.next = self.d_occ.q.val() == self.one8.val();
        for j in 0..self._lanes {
            self.th_h[j].next = self.kc8[j].val() < self.dq_cnt[0].rdata.val();
            self.th_1[j].next = self.kc8[j].val() < self.dq_cnt[0].rdata1.val();
            self.th_w[j].next = self.kc8[j].val() < self.d_counts[0].val();
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
        for s in 0..self._segs {
            self.cnt_r[s].clock.next = self.clock.val();
            self.cnt_r[s].reset.next = self.reset.val();
            self.cnt_r[s].en.next = self.fire.val() & self.first_b.val();
            self.cnt_r[s].d.next = self.cm[s].val();
        }

        // FIFO pops: a dense beat per fire; the head sparse beat when it
        // joins the window. Occupancy counters take their pop late in the
        // cycle, so both sides of it are ready.
        self.dq.pop.next = self.fire.val();
        self.dq_n.pop.next = self.fire.val();
        self.dq_bad.pop.next = self.fire.val();
        for s in 0..self._segs {
            self.dq_cnt[s].pop.next = self.fire.val();
        }
        self.s_pop.next = self.app.val();
        // a beat entering an empty head register (or one emptied now) goes
        // there, others queue behind it
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
        }
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
            self.k0_ent[p].d.next = self.win[p].q.val().get_bits::<8>(0);
            self.k0_tk[p].clock.next = self.clock.val();
            self.k0_tk[p].reset.next = self.reset.val();
            self.k0_tk[p].en.next = self.fire.val();
            self.k0_tk[p].d.next = self.take[p].val();
        }
        for i in 0..12 {
            self.k0_meta[i].clock.next = self.clock.val();
            self.k0_meta[i].reset.next = self.reset.val();
            self.k0_meta[i].en.next = self.fire.val();
            self.k0_meta[i].d.next = self.dq_meta[i].rdata.val();
        }

        // ---------------- K1: taken entries to their lanes; token fields converted ----------------
        self.mv.next = self.k0_v.q.val() & !self.k0_hold.q.val();
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
            self.k1_has[p].d.next = self.xw1[p].val().get_bit(16);
            self.k1_ent[p].clock.next = self.clock.val();
            self.k1_ent[p].reset.next = self.reset.val();
            self.k1_ent[p].en.next = self.adv.val();
            self.k1_ent[p].d.next = self.zero8.val();
            if self.xw1[p].val().get_bit(16) {
                self.k1_ent[p].d.next = self.xw1[p].val().get_bits::<8>(0);
            }
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
            self.san[i].x.next =
                (bit_cast::<16, 8>(self.mhi.val()) << self.eight16.val()) | bit_cast::<16, 8>(self.mlo.val());
            self.fld[i].next = self.san[i].y.val();
        }
        for t in 0..4 {
            self.fld[6 + t].next = self.k0_thr.q.val().get_bits::<16>(self.thr_off[t].val().index());
        }
        // steps: magnitude and sign (K3 adds q |step|)
        for g in 0..3 {
            self.cvt[g].x.next = self.fld[2 * g + 1].val();
            self.k1_mag[g].clock.next = self.clock.val();
            self.k1_mag[g].reset.next = self.reset.val();
            self.k1_mag[g].en.next = self.adv.val();
            self.k1_mag[g].d.next = self.cvt[g].mag.val();
            self.k1_neg[g].clock.next = self.clock.val();
            self.k1_neg[g].reset.next = self.reset.val();
            self.k1_neg[g].en.next = self.adv.val();
            self.k1_neg[g].d.next = self.cvt[g].neg.val();
        }
        // mins and thresholds as two's complement values: the significand
        // (at most 11 bits) is negated before the shift, which leaves K2's
        // bases plain two-operand adds. sf: out.min, mid.min, in.min,
        // lo_outer, lo_inner, hi_inner, hi_outer
        for g in 0..3 {
            self.sf[g].next = self.fld[2 * g].val();
        }
        for t in 0..4 {
            self.sf[3 + t].next = self.fld[6 + t].val();
        }
        for i in 0..7 {
            self.sfi.next = self.sf[i].val();
            self.ex5.next = self.sfi.val().get_bits::<5>(10);
            self.sgp.next = bit_cast::<12, 10>(self.sfi.val().get_bits::<10>(0));
            self.shv[i].next = self.zero5.val();
            if self.ex5.val() != self.zero5.val() {
                self.sgp.next = self.sgp.val() | self.c1024_12.val();
                self.shv[i].next = self.ex5.val() - self.one5.val();
            }
            self.sgn.next = self.zero12.val() - self.sgp.val();
            self.pvv[i].next = bit_cast::<FX, 12>(self.sgp.val());
            self.nvv[i].next = bit_cast::<FX, 12>(self.sgn.val());
            if self.sgn.val().get_bit(11) {
                self.nvv[i].next = self.nvv[i].val() | self.sext12.val();
            }
            self.k1_v[i].clock.next = self.clock.val();
            self.k1_v[i].reset.next = self.reset.val();
            self.k1_v[i].en.next = self.adv.val();
            self.k1_v[i].d.next = self.pvv[i].val() << self.shv[i].val();
            if self.sfi.val().get_bit(15) {
                self.k1_v[i].d.next = self.nvv[i].val() << self.shv[i].val();
            }
        }
        for i in 0..2 {
            self.k1_nv[i].clock.next = self.clock.val();
            self.k1_nv[i].reset.next = self.reset.val();
            self.k1_nv[i].en.next = self.adv.val();
            self.k1_nv[i].d.next = self.nvv[i].val() << self.shv[i].val();
            if self.sf[i].val().get_bit(15) {
                self.k1_nv[i].d.next = self.pvv[i].val() << self.shv[i].val();
            }
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

        // ---------------- K2: the record's bases and steps; lane selection and code ----------------
        // tok: 0 out.min, 1 out.step, 2 mid.min, 3 mid.step, 4 in.min,
        // 5 in.step, 6 lo_outer, 7 lo_inner, 8 hi_inner, 9 hi_outer.
        // A base is one or two of K1's two's complement values (the mins
        // also negated), so at most one carry-propagate add.
        // With the step's sign and the selection's direction, sig says x' =
        // B - q |step|, computed as ~(~B + q |step|): bq holds ~B then.
        self.rec_en.next = self.adv.val() & self.pv[0].q.val() & self.pf[0].q.val();
        for k in 0..6 {
            self.bq[k].clock.next = self.clock.val();
            self.bq[k].reset.next = self.reset.val();
            self.bq[k].en.next = self.rec_en.val();
            self.sig[k].clock.next = self.clock.val();
            self.sig[k].reset.next = self.reset.val();
            self.sig[k].en.next = self.rec_en.val();
        }
        for g in 0..3 {
            self.stp[g].clock.next = self.clock.val();
            self.stp[g].reset.next = self.reset.val();
            self.stp[g].en.next = self.rec_en.val();
            self.stp[g].d.next = self.k1_mag[g].q.val();
        }
        // 0: hi_outer + out.min, step +out.step
        self.bsum.next = self.k1_v[6].q.val() + self.k1_v[0].q.val();
        self.sig[0].d.next = self.k1_neg[0].q.val();
        self.bq[0].d.next = self.bsum.val();
        if self.k1_neg[0].q.val() {
            self.bq[0].d.next = !self.bsum.val();
        }
        // 1: lo_outer - out.min, step -out.step
        self.bsum.next = self.k1_v[3].q.val() + self.k1_nv[0].q.val();
        self.sig[1].d.next = !self.k1_neg[0].q.val();
        self.bq[1].d.next = self.bsum.val();
        if !self.k1_neg[0].q.val() {
            self.bq[1].d.next = !self.bsum.val();
        }
        // 2: mid.min, step +mid.step
        self.sig[2].d.next = self.k1_neg[1].q.val();
        self.bq[2].d.next = self.k1_v[1].q.val();
        if self.k1_neg[1].q.val() {
            self.bq[2].d.next = !self.k1_v[1].q.val();
        }
        // 3: hi_inner + mid.min, step +mid.step
        self.bsum.next = self.k1_v[5].q.val() + self.k1_v[1].q.val();
        self.sig[3].d.next = self.k1_neg[1].q.val();
        self.bq[3].d.next = self.bsum.val();
        if self.k1_neg[1].q.val() {
            self.bq[3].d.next = !self.bsum.val();
        }
        // 4: lo_inner - mid.min, step -mid.step
        self.bsum.next = self.k1_v[4].q.val() + self.k1_nv[1].q.val();
        self.sig[4].d.next = !self.k1_neg[1].q.val();
        self.bq[4].d.next = self.bsum.val();
        if !self.k1_neg[1].q.val() {
            self.bq[4].d.next = !self.bsum.val();
        }
        // 5: in.min, step +in.step
        self.sig[5].d.next = self.k1_neg[2].q.val();
        self.bq[5].d.next = self.k1_v[2].q.val();
        if self.k1_neg[2].q.val() {
            self.bq[5].d.next = !self.k1_v[2].q.val();
        }
        self.tok_oob.en.next = self.rec_en.val();
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

        // ---------------- K3: y = B + q |step| as a carry-save pair ----------------
        for p in 0..self._lanes {
            self.selv.next = self.k2_sel[p].q.val();
            self.bsel.next = self.bq[5].q.val();
            self.ssel.next = self.stp[2].q.val();
            self.sgl.next = self.sig[5].q.val();
            if self.selv.val() == self.sel_c[0].val() {
                self.bsel.next = self.bq[0].q.val();
                self.ssel.next = self.stp[0].q.val();
                self.sgl.next = self.sig[0].q.val();
            }
            if self.selv.val() == self.sel_c[1].val() {
                self.bsel.next = self.bq[1].q.val();
                self.ssel.next = self.stp[0].q.val();
                self.sgl.next = self.sig[1].q.val();
            }
            if self.selv.val() == self.sel_c[2].val() {
                self.bsel.next = self.bq[2].q.val();
                self.ssel.next = self.stp[1].q.val();
                self.sgl.next = self.sig[2].q.val();
            }
            if self.selv.val() == self.sel_c[3].val() {
                self.bsel.next = self.bq[3].q.val();
                self.ssel.next = self.stp[1].q.val();
                self.sgl.next = self.sig[3].q.val();
            }
            if self.selv.val() == self.sel_c[4].val() {
                self.bsel.next = self.bq[4].q.val();
                self.ssel.next = self.stp[1].q.val();
                self.sgl.next = self.sig[4].q.val();
            }
            // operands: B sign-extended, then step << i for each set code bit
            self.bext.next = bit_cast::<W, FX>(self.bsel.val());
            if self.bsel.val().get_bit(self.msb_fx.val().index()) {
                self.bext.next = self.bext.val() | self.sext_w.val();
            }
            self.sw.next = bit_cast::<W, FX>(self.ssel.val());
            self.qv.next = self.k2_q[p].q.val();
            self.o0[0].next = self.bext.val();
            for i in 0..self._np {
                self.o0[i + 1].next = self.zero_w.val();
                if self.qv.val().get_bit(self.bit_c[i].val().index()) {
                    self.o0[i + 1].next = self.sw.val() << self.shw[i].val();
                }
            }
            // 3:2 compressor levels (sum, carry << 1); untouched operands
            // pass to the next level
            for t in 0..self._g1 {
                self.o1[2 * t].next = self.o0[3 * t].val() ^ self.o0[3 * t + 1].val() ^ self.o0[3 * t + 2].val();
                self.o1[2 * t + 1].next = ((self.o0[3 * t].val() & self.o0[3 * t + 1].val())
                    | (self.o0[3 * t].val() & self.o0[3 * t + 2].val())
                    | (self.o0[3 * t + 1].val() & self.o0[3 * t + 2].val()))
                    << self.one_w.val();
            }
            for g in self._g1..(self._g1 + 1) {
                for r in 0..self._r1 {
                    self.o1[2 * g + r].next = self.o0[3 * g + r].val();
                }
            }
            for t in 0..self._g2 {
                self.o2[2 * t].next = self.o1[3 * t].val() ^ self.o1[3 * t + 1].val() ^ self.o1[3 * t + 2].val();
                self.o2[2 * t + 1].next = ((self.o1[3 * t].val() & self.o1[3 * t + 1].val())
                    | (self.o1[3 * t].val() & self.o1[3 * t + 2].val())
                    | (self.o1[3 * t + 1].val() & self.o1[3 * t + 2].val()))
                    << self.one_w.val();
            }
            for g in self._g2..(self._g2 + 1) {
                for r in 0..self._r2 {
                    self.o2[2 * g + r].next = self.o1[3 * g + r].val();
                }
            }
            for t in 0..self._g3 {
                self.o3[2 * t].next = self.o2[3 * t].val() ^ self.o2[3 * t + 1].val() ^ self.o2[3 * t + 2].val();
                self.o3[2 * t + 1].next = ((self.o2[3 * t].val() & self.o2[3 * t + 1].val())
                    | (self.o2[3 * t].val() & self.o2[3 * t + 2].val())
                    | (self.o2[3 * t + 1].val() & self.o2[3 * t + 2].val()))
                    << self.one_w.val();
            }
            for g in self._g3..(self._g3 + 1) {
                for r in 0..self._r3 {
                    self.o3[2 * g + r].next = self.o2[3 * g + r].val();
                }
            }
            for t in 0..self._g4 {
                self.o4[2 * t].next = self.o3[3 * t].val() ^ self.o3[3 * t + 1].val() ^ self.o3[3 * t + 2].val();
                self.o4[2 * t + 1].next = ((self.o3[3 * t].val() & self.o3[3 * t + 1].val())
                    | (self.o3[3 * t].val() & self.o3[3 * t + 2].val())
                    | (self.o3[3 * t + 1].val() & self.o3[3 * t + 2].val()))
                    << self.one_w.val();
            }
            for g in self._g4..(self._g4 + 1) {
                for r in 0..self._r4 {
                    self.o4[2 * g + r].next = self.o3[3 * g + r].val();
                }
            }
            for t in 0..self._g5 {
                self.o5[2 * t].next = self.o4[3 * t].val() ^ self.o4[3 * t + 1].val() ^ self.o4[3 * t + 2].val();
                self.o5[2 * t + 1].next = ((self.o4[3 * t].val() & self.o4[3 * t + 1].val())
                    | (self.o4[3 * t].val() & self.o4[3 * t + 2].val())
                    | (self.o4[3 * t + 1].val() & self.o4[3 * t + 2].val()))
                    << self.one_w.val();
            }
            for g in self._g5..(self._g5 + 1) {
                for r in 0..self._r5 {
                    self.o5[2 * g + r].next = self.o4[3 * g + r].val();
                }
            }
            self.k3_s[p].clock.next = self.clock.val();
            self.k3_s[p].reset.next = self.reset.val();
            self.k3_s[p].en.next = self.adv.val();
            self.k3_s[p].d.next = self.o5[0].val();
            self.k3_c[p].clock.next = self.clock.val();
            self.k3_c[p].reset.next = self.reset.val();
            self.k3_c[p].en.next = self.adv.val();
            self.k3_c[p].d.next = self.o5[1].val();
            self.k3_sig[p].clock.next = self.clock.val();
            self.k3_sig[p].reset.next = self.reset.val();
            self.k3_sig[p].en.next = self.adv.val();
            self.k3_sig[p].d.next = self.sgl.val();
        }

        // ---------------- K4: y = s + c; x' = y or ~y ----------------
        // |x'| >= 2^40 saturates (bits W-1..40 of y not all equal); below
        // that, m = |x'| - [x' < 0] = y[39:0] ^ sign(y) (applied in R1), so
        // the rounder never negates (it adds the 1 back where it rounds)
        for p in 0..self._lanes {
            self.ysum.next = self.k3_s[p].q.val() + self.k3_c[p].q.val();
            self.yhi.next = self.ysum.val() >> self.sh40_w.val();
            self.ysg.next = self.ysum.val().get_bit(self.msb_w.val().index());
            self.k4_m[p].clock.next = self.clock.val();
            self.k4_m[p].reset.next = self.reset.val();
            self.k4_m[p].en.next = self.adv.val();
            self.k4_m[p].d.next = self.ysum.val().get_bits::<40>(0);
            self.k4_ys[p].clock.next = self.clock.val();
            self.k4_ys[p].reset.next = self.reset.val();
            self.k4_ys[p].en.next = self.adv.val();
            self.k4_ys[p].d.next = self.ysg.val();
            self.k4_neg[p].clock.next = self.clock.val();
            self.k4_neg[p].reset.next = self.reset.val();
            self.k4_neg[p].en.next = self.adv.val();
            self.k4_neg[p].d.next = self.ysg.val() ^ self.k3_sig[p].q.val();
            self.k4_sat[p].clock.next = self.clock.val();
            self.k4_sat[p].reset.next = self.reset.val();
            self.k4_sat[p].en.next = self.adv.val();
            self.k4_sat[p].d.next = (self.yhi.val() != self.zero_w.val()) & (self.yhi.val() != self.hi_ones_w.val());
        }

        // ---------------- R1: normalise m (bytes, then bits) ----------------
        // Shifted-in bits are the sign: for x' < 0 the bits below m's
        // leading one then read as those of |x'| - 1 all the way down.
        // Below 2048 units m is kept as it is (its pattern is itself).
        for p in 0..self._lanes {
            self.mm.next = self.k4_m[p].q.val();
            if self.k4_ys[p].q.val() {
                self.mm.next = !self.k4_m[p].q.val();
            }
            self.fillm.next = self.zero40.val();
            if self.k4_neg[p].q.val() {
                self.fillm.next = self.ones40.val();
            }
            for b in 0..3 {
                self.mz[b].next =
                    self.k4_m[p].q.val().get_bits::<8>(self.byte_off[b].val().index()) == self.zero8.val();
                if self.k4_ys[p].q.val() {
                    self.mz[b].next =
                        self.k4_m[p].q.val().get_bits::<8>(self.byte_off[b].val().index()) == self.ones8.val();
                }
            }
            self.msmall.next = (self.k4_m[p].q.val() >> self.sh11_40.val()) == self.zero40.val();
            if self.k4_ys[p].q.val() {
                self.msmall.next = (self.k4_m[p].q.val() | self.lo11_40.val()) == self.ones40.val();
            }
            self.n1.next = self.mm.val();
            self.lzc.next = self.zero8.val();
            if self.mz[2].val() {
                if !self.mz[1].val() {
                    self.n1.next = (self.mm.val() << self.sh8_40.val()) | (self.fillm.val() & self.m8_40.val());
                    self.lzc.next = self.c8_8.val();
                } else if !self.mz[0].val() {
                    self.n1.next = (self.mm.val() << self.sh16_40.val()) | (self.fillm.val() & self.m16_40.val());
                    self.lzc.next = self.c16_8.val();
                } else {
                    self.n1.next = (self.mm.val() << self.sh24_40.val()) | (self.fillm.val() & self.m24_40.val());
                    self.lzc.next = self.c24_8.val();
                }
            }
            self.top8.next = self.n1.val().get_bits::<8>(32);
            self.n2.next = self.n1.val();
            self.lzf.next = self.zero8.val();
            for f in 0..8 {
                if (self.top8.val() >> self.fsh[f].val()) == self.one8.val() {
                    self.n2.next = (self.n1.val() << self.fsh40[f].val()) | (self.fillm.val() & self.fmask[f].val());
                    self.lzf.next = self.fcnt[f].val();
                }
            }
            self.r1_n[p].clock.next = self.clock.val();
            self.r1_n[p].reset.next = self.reset.val();
            self.r1_n[p].en.next = self.adv.val();
            self.r1_n[p].d.next = self.n2.val();
            if self.msmall.val() {
                self.r1_n[p].d.next = self.mm.val();
            }
            self.r1_lz[p].clock.next = self.clock.val();
            self.r1_lz[p].reset.next = self.reset.val();
            self.r1_lz[p].en.next = self.adv.val();
            self.r1_lz[p].d.next = self.lzc.val() + self.lzf.val();
            self.r1_small[p].clock.next = self.clock.val();
            self.r1_small[p].reset.next = self.reset.val();
            self.r1_small[p].en.next = self.adv.val();
            self.r1_small[p].d.next = self.msmall.val();
            self.r1_neg[p].clock.next = self.clock.val();
            self.r1_neg[p].reset.next = self.reset.val();
            self.r1_neg[p].en.next = self.adv.val();
            self.r1_neg[p].d.next = self.k4_neg[p].q.val();
            self.r1_sat[p].clock.next = self.clock.val();
            self.r1_sat[p].reset.next = self.reset.val();
            self.r1_sat[p].en.next = self.adv.val();
            self.r1_sat[p].d.next = self.k4_sat[p].q.val();
        }

        // ---------------- R2: round to nearest even, saturate, encode ----------------
        // n[39:29] is the significand, n[28] the round bit. For x' < 0,
        // |x'| = m + 1: the 1 carries into the round bit when n[27:0] is
        // all ones (then nothing is left below it), else it leaves a sticky
        // bit. So one increment rounds: RNE of the rounded-off value becomes
        // field[0] | field[1] after a carry-in, field[0] & (sticky |
        // field[1]) without.
        for p in 0..self._lanes {
            self.nn.next = self.r1_n[p].q.val();
            self.ngv.next = self.r1_neg[p].q.val();
            self.field.next = self.nn.val().get_bits::<12>(28);
            self.low.next = self.nn.val().get_bits::<28>(0);
            self.allones.next = self.low.val() == self.ones28.val();
            self.anyb.next = self.low.val() != self.zero28.val();
            self.cin.next = self.ngv.val() & self.allones.val();
            self.sticky.next = (self.ngv.val() & !self.allones.val()) | (!self.ngv.val() & self.anyb.val());
            self.inc.next = self.field.val().get_bit(0) & (self.sticky.val() | self.field.val().get_bit(1));
            if self.cin.val() {
                self.inc.next = self.field.val().get_bit(0) | self.field.val().get_bit(1);
            }
            self.aval.next = self.field.val() >> self.one12.val();
            if self.r1_small[p].q.val() {
                self.aval.next = self.nn.val().get_bits::<12>(0);
                self.inc.next = self.ngv.val();
            }
            self.res.next = self.aval.val() + bit_cast::<12, 1>(self.inc.val().into());
            // exponent field 30 - lz, one more when rounding carries out
            self.ex.next = self.c30_8.val() - self.r1_lz[p].q.val();
            if self.res.val().get_bit(11) {
                self.ex.next = self.ex.val() + self.one8.val();
            }
            self.pat.next = (bit_cast::<16, 8>(self.ex.val()) << self.sh10_16.val())
                | bit_cast::<16, 10>(self.res.val().get_bits::<10>(0));
            if self.ex.val() > self.c30_8.val() {
                self.pat.next = self.max16.val();
            }
            if self.r1_small[p].q.val() {
                self.pat.next = bit_cast::<16, 12>(self.res.val());
            }
            if self.r1_sat[p].q.val() {
                self.pat.next = self.max16.val();
            }
            self.r2_y[p].clock.next = self.clock.val();
            self.r2_y[p].reset.next = self.reset.val();
            self.r2_y[p].en.next = self.adv.val();
            self.r2_y[p].d.next = self.pat.val() | (bit_cast::<16, 1>(self.ngv.val().into()) << self.sh15_16.val());
            self.out_data[p].next = self.r2_y[p].q.val();
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
