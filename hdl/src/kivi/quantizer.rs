//! `kivi-quantizer`, `axis = token` (V): a token's vector in, `lanes`
//! FP16 elements per beat; per group of `G` channels its metadata word and
//! its `W` packed code words out, as one beat; the token's `nonfinite`
//! flag with its last group.
//!
//! Paper: KIVI (ICML 2024), per-token V quantization. Spec: docs/spec.md
//! §13.2 (numbers), §13.3 (axis token), §13.4, §13.5, §13.14.2 (ports,
//! beats, stages).
//!
//! - Fill (no stall): an accepted beat is registered (I0) with its slot
//!   `wh` and row `k`; from I0 it is sanitised (`Sanitize`, spec §2.2.1),
//!   written into the row, and its order keys (§2.2.2) go through a min
//!   and a max tree into the group's running minimum and maximum, with a
//!   register after the trees' first level and then after every second,
//!   the running update counting as one more level (`ceil(log2(lanes) /
//!   2)` stages, 1 at one lane). `in_ready` depends on registers only: slot
//!   `wh` is free, or the group in it has begun.
//! - Step (no stall): after a group's last beat, F1 the minimum and
//!   maximum as magnitude and sign, F2 and F3 `D = units(max) -
//!   units(min)` in two 21-bit halves, then `GroupStep` (the Oaken
//!   per-token unit, the same rule `RU(ceil(D / (2^b - 1)))`, spec §2.6,
//!   §2.14), three stages; the step and min land in the slot's descriptor.
//! - Code (stalls as a whole on `adv = !out_valid | out_ready`): slot `rh`
//!   issues its rows in order once its descriptor is in; C0 the row; C1
//!   `units(x)`, `units(min)`, the step's significand `m` and exponent
//!   `e`; C2, C3 `n = x - min` in two 21-bit halves; C4 `n >> (e-1)` (or
//!   `2n`), C5 `+ m`: the normalised dividend of spec §5.3; `b` restoring
//!   steps against `2m 2^j` (`DivStep`), one per stage; then the codes are
//!   ORed into the group's words, and the last row's codes make the output
//!   beat. The dividend and remainders are below `2m 2^b < 2^(12 + b)` and
//!   are kept to those bits.
//!
//! Slots: `2 + ceil((8 + T) / (G / lanes))` of `G x 16` bits (flip-flops),
//! `T` the tree stages above, so that a slot is free again by the time the
//! input comes back to it: the input never waits at full rate.
//!
//! Built with `HackOpts` (`KiviQuantizer::hack`) the same engine is
//! `hack-quantizer`'s (spec §15.16.4): `in_last` closes the vector, the
//! code sum leaves beside the words (an adder tree after the codes), and
//! stochastic rounding divides `n >> e` by `m` and compares the LFSR word
//! (M1, M2). Every HACK field is an empty `Vec` here, so KIVI's Verilog
//! does not change.

use crate::oaken::classify::Sanitize;
use crate::kivi::split_diff::{DiffHi, DiffLo, FH};
use crate::oaken::group_step::GroupStep;
use crate::prim::div_round::{DivStep, NW};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Fill stages from I0 to the running minimum and maximum: the sanitiser
/// and the trees' first level, then two levels per stage, the running
/// update counting as the last level (a level of 16-bit compare and select
/// takes about 1.3 ns on OSU018, the sanitiser and key about 2 ns), so
/// `ceil(log2(lanes) / 2)`, and 1 at one lane.
fn tree_stages(lanes: usize) -> usize {
    (lanes.trailing_zeros() as usize).div_ceil(2).max(1)
}

/// Cycles a slot stays busy beyond its group's two passes (fill, issue):
/// from the group's last beat to its first issued row.
fn slot_slack(lanes: usize) -> usize {
    8 + tree_stages(lanes)
}

#[derive(LogicBlock)]
pub struct KiviQuantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every slot empty, the token starts over, the pipeline empty
    pub reset: Signal<In, Bit>,
    /// element beat valid
    pub in_valid: Signal<In, Bit>,
    /// beat accepted when in_valid and in_ready (from registers only: low while the slot the next group needs is still busy)
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements, lane l at [16l+15:16l]: channels k*lanes .. k*lanes + lanes - 1 of the token at its beat k
    pub in_x: Vec<Signal<In, Bits<16>>>,
    /// group beat valid
    pub out_valid: Signal<Out, Bit>,
    /// group beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// the group's metadata word (spec §13.5): min [15:0], step [31:16]
    pub out_meta: Signal<Out, Bits<32>>,
    /// the group's W packed code words (spec §13.4), word i at [32i+31:32i]
    pub out_words: Vec<Signal<Out, Bits<32>>>,
    /// the group is its token's last ({latency} cycles from a group's first input beat to its output beat)
    pub out_last: Signal<Out, Bit>,
    /// with out_last: a NaN or infinity was replaced in the token (0 on the token's other groups)
    pub out_nonfinite: Signal<Out, Bit>,
    /// hack-quantizer only (one element; none in KIVI): the beat closes its vector (read on a partition's last beat)
    pub in_last: Vec<Signal<In, Bit>>,
    /// hack-quantizer only (one element; none in KIVI): the partition's code sum
    pub out_sum: Vec<Signal<Out, Bits<32>>>,
    // ---- fill ----
    san: Vec<Sanitize>,
    key: Vec<Signal<Local, Bits<16>>>,
    // min/max trees over the beat's keys: node i (1-based) at i - 1,
    // leaves at lanes - 1 + l, root at 0; tmin/tmax an inner node's value,
    // umin/umax what its parent (or the running update, for the root)
    // reads: its register where `k_pipe` marks its depth as a stage
    // boundary (the other registers are never read and synthesis drops them)
    tmin: Vec<Signal<Local, Bits<16>>>,
    tmax: Vec<Signal<Local, Bits<16>>>,
    umin: Vec<Signal<Local, Bits<16>>>,
    umax: Vec<Signal<Local, Bits<16>>>,
    trmin: Vec<Reg<Bits<16>>>,
    trmax: Vec<Reg<Bits<16>>>,
    k_pipe: Vec<Constant<Bit>>,
    bnf: Signal<Local, Bit>,
    // I0: the accepted beat and where it goes; then along the tree stages
    // its flags (the last with the trees' root)
    i0_x: Vec<Reg<Bits<16>>>,
    i0_v: Reg<Bit>,
    i0_slot: Reg<Bits<4>>,
    i0_row: Reg<Bits<8>>,
    i0_first: Reg<Bit>,
    i0_glast: Reg<Bit>,
    i0_tlast: Reg<Bit>,
    t_v: Vec<Reg<Bit>>,
    t_first: Vec<Reg<Bit>>,
    t_glast: Vec<Reg<Bit>>,
    t_tlast: Vec<Reg<Bit>>,
    t_slot: Vec<Reg<Bits<4>>>,
    t_nf: Vec<Reg<Bit>>,
    accept: Signal<Local, Bit>,
    wlast: Signal<Local, Bit>,
    tlast: Signal<Local, Bit>,
    uw: Signal<Local, Bit>,
    kw: Reg<Bits<8>>,
    wh: Reg<Bits<4>>,
    gc: Reg<Bits<16>>,
    rmin: Reg<Bits<16>>,
    rmax: Reg<Bits<16>>,
    nf_tok: Reg<Bit>,
    used: Vec<Reg<Bit>>,
    rdy: Vec<Reg<Bit>>,
    buf: Vec<Reg<Bits<16>>>,
    // ---- step ----
    f_v: Reg<Bit>,
    f_slot: Reg<Bits<4>>,
    f_last: Reg<Bit>,
    f_nf: Reg<Bit>,
    fmin: Signal<Local, Bits<16>>,
    fmax: Signal<Local, Bits<16>>,
    cvt_fmin: Fp16ToUnits,
    cvt_fmax: Fp16ToUnits,
    // F1: min and max as magnitude and sign; F2: D's low half and its
    // carry, the high halves of the operands; F3: D
    f1_v: Reg<Bit>,
    f1_last: Reg<Bit>,
    f1_nf: Reg<Bit>,
    f1_slot: Reg<Bits<4>>,
    f1_minmag: Reg<Bits<FX>>,
    f1_maxmag: Reg<Bits<FX>>,
    // the DiffLo/DiffHi flags of D = max - min (split_diff::ops)
    f1_swap: Reg<Bit>,
    f1_sub: Reg<Bit>,
    f1_min16: Reg<Bits<16>>,
    flo: DiffLo,
    fhi: DiffHi,
    f2_v: Reg<Bit>,
    f2_last: Reg<Bit>,
    f2_nf: Reg<Bit>,
    f2_slot: Reg<Bits<4>>,
    f2_lo: Reg<Bits<22>>,
    f2_maxh: Reg<Bits<FH>>,
    f2_minh: Reg<Bits<FH>>,
    f2_swap: Reg<Bit>,
    f2_sub: Reg<Bit>,
    f2_min16: Reg<Bits<16>>,
    f3_v: Reg<Bit>,
    f3_last: Reg<Bit>,
    f3_nf: Reg<Bit>,
    f3_slot: Reg<Bits<4>>,
    f3_d: Reg<Bits<FX>>,
    f3_min16: Reg<Bits<16>>,
    gstep: GroupStep,
    g_v: Vec<Reg<Bit>>,
    g_slot: Vec<Reg<Bits<4>>>,
    g_last: Vec<Reg<Bit>>,
    g_nf: Vec<Reg<Bit>>,
    desc_meta: Vec<Reg<Bits<32>>>,
    desc_last: Vec<Reg<Bit>>,
    desc_nf: Vec<Reg<Bit>>,
    // ---- code: issue ----
    adv: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    rlast: Signal<Local, Bit>,
    rrdy: Signal<Local, Bit>,
    kr: Reg<Bits<8>>,
    rh: Reg<Bits<4>>,
    xr: Vec<Signal<Local, Bits<16>>>,
    cmeta: Signal<Local, Bits<32>>,
    clast: Signal<Local, Bit>,
    cnf: Signal<Local, Bit>,
    cmeta1: Signal<Local, Bits<32>>,
    cex: Signal<Local, Bits<5>>,
    esh5: Signal<Local, Bits<5>>,
    cvt_x: Vec<Fp16ToUnits>,
    cvt_cmin: Fp16ToUnits,
    // ---- C0: the row ----
    c0_x: Vec<Reg<Bits<16>>>,
    // ---- C1 ----
    c1_xmag: Vec<Reg<Bits<FX>>>,
    // the DiffLo/DiffHi flags of n = x - min, per lane
    c1_swap: Vec<Reg<Bit>>,
    c1_sub: Vec<Reg<Bit>>,
    c1_minmag: Reg<Bits<FX>>,
    c1_m: Reg<Bits<NW>>,
    c1_esh: Reg<Bits<8>>,
    c1_e0: Reg<Bit>,
    c1_sz: Reg<Bit>,
    // ---- C2: n's low half and carry; x's high half and sign (min's are
    // the group's) ----
    xlo: Vec<DiffLo>,
    xhi: Vec<DiffHi>,
    c2_lo: Vec<Reg<Bits<22>>>,
    c2_xh: Vec<Reg<Bits<FH>>>,
    c2_swap: Vec<Reg<Bit>>,
    c2_sub: Vec<Reg<Bit>>,
    c2_minh: Reg<Bits<FH>>,
    c2_m: Reg<Bits<NW>>,
    c2_esh: Reg<Bits<8>>,
    c2_e0: Reg<Bit>,
    c2_sz: Reg<Bit>,
    // ---- C3: n ----
    c3_n: Vec<Reg<Bits<FX>>>,
    c3_m: Reg<Bits<NW>>,
    c3_esh: Reg<Bits<8>>,
    c3_e0: Reg<Bit>,
    c3_sz: Reg<Bit>,
    // ---- C4: n >> (e - 1), or 2n ----
    nn: Signal<Local, Bits<FX>>,
    c4_nn: Vec<Reg<Bits<NW>>>,
    c4_m: Reg<Bits<NW>>,
    c4_sz: Reg<Bit>,
    // ---- C5: the dividend ----
    c5_r: Vec<Reg<Bits<NW>>>,
    c5_m2: Reg<Bits<NW>>,
    c5_sz: Reg<Bit>,
    // ---- restoring steps: step j of lane l at j * lanes + l (remainders
    // and 2m for steps 0 .. b-2 only: the last step only compares) ----
    dstep: Vec<DivStep<NW>>,
    st_r: Vec<Reg<Bits<NW>>>,
    st_q: Vec<Reg<Bits<8>>>,
    st_m2: Vec<Reg<Bits<NW>>>,
    st_sz: Vec<Reg<Bit>>,
    // ---- sideband along C0 .. the last step (6 + b stages) ----
    sb_v: Vec<Reg<Bit>>,
    sb_k: Vec<Reg<Bits<8>>>,
    sb_rl: Vec<Reg<Bit>>,
    sb_meta: Vec<Reg<Bits<32>>>,
    sb_tl: Vec<Reg<Bit>>,
    sb_nf: Vec<Reg<Bit>>,
    // ---- pack and output ----
    qq: Signal<Local, Bits<8>>,
    accn: Vec<Signal<Local, Bits<32>>>,
    acc: Vec<Reg<Bits<32>>>,
    o_v: Reg<Bit>,
    o_meta: Reg<Bits<32>>,
    o_last: Reg<Bit>,
    o_nf: Reg<Bit>,
    // ---- hack-quantizer (spec §15.3, §15.4, §15.7); every Vec below is
    // empty in KIVI, so its Verilog is unchanged. Stochastic (`_st` = 1):
    // C3 the step's thermometer mask, C4 the 16 bits of n below the step
    // and a sticky bit, C5 their sum t, carried along the steps with the
    // last step's remainder R; the LFSR words at the last step; M1 the
    // products r M (16x6 and 16x5 pieces) and R 2^16 + t, M2 the compare. Sums
    // (`_hs` = 1): a pipelined adder tree over the row's codes, the codes
    // delayed beside it, and the partition's accumulator at the pack. ----
    c3_em: Vec<Reg<Bits<FX>>>,
    c3_fsl: Vec<Reg<Bits<8>>>,
    c3_fsr: Vec<Reg<Bits<8>>>,
    c4_fr: Vec<Reg<Bits<16>>>,
    c4_sk: Vec<Reg<Bit>>,
    st_fr: Vec<Reg<Bits<16>>>,
    st_sk: Vec<Reg<Bit>>,
    sr_rem: Vec<Reg<Bits<NW>>>,
    sm_lo: Vec<Reg<Bits<16>>>,
    sm_hi: Vec<Reg<Bits<16>>>,
    lfsr: Vec<Reg<Bits<16>>>,
    lfn: Vec<Signal<Local, Bits<16>>>,
    wdn: Vec<Signal<Local, Bits<16>>>,
    wd: Vec<Reg<Bits<16>>>,
    m1_plo: Vec<Reg<Bits<32>>>,
    m1_phi: Vec<Reg<Bits<32>>>,
    m1_r: Vec<Reg<Bits<16>>>,
    m1_fr: Vec<Reg<Bits<16>>>,
    m1_sk: Vec<Reg<Bit>>,
    m1_q0: Vec<Reg<Bits<8>>>,
    m1_q1: Vec<Reg<Bits<8>>>,
    m1_sz: Vec<Reg<Bit>>,
    xq: Vec<Reg<Bits<8>>>,
    m2_p: Vec<Signal<Local, Bits<32>>>,
    hq: Vec<Signal<Local, Bits<32>>>,
    sn: Vec<Signal<Local, Bits<32>>>,
    su: Vec<Signal<Local, Bits<32>>>,
    sr: Vec<Reg<Bits<32>>>,
    s_pipe: Vec<Constant<Bit>>,
    xd: Vec<Reg<Bits<32>>>,
    sacc: Vec<Reg<Bits<32>>>,
    k_lw: Vec<Constant<Bits<16>>>,
    k_la: Vec<Constant<Bits<16>>>,
    k_bit: Vec<Constant<Bits<16>>>,
    k_hx: Vec<Constant<Bits<FX>>>,
    k_h16: Vec<Constant<Bits<8>>>,
    k_h8: Vec<Constant<Bits<32>>>,
    k_hff: Vec<Constant<Bits<16>>>,
    _hs: usize,
    _st: usize,
    _ts: usize,
    // ---- constants ----
    kc: Vec<Constant<Bits<8>>>,
    sc: Vec<Constant<Bits<4>>>,
    shj: Vec<Constant<Bits<32>>>,
    dsh: Vec<Constant<Bits<NW>>>,
    k_klast: Constant<Bits<8>>,
    k_slast: Constant<Bits<4>>,
    k_glast: Constant<Bits<16>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_one4: Constant<Bits<4>>,
    k_zero4: Constant<Bits<4>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_sign16: Constant<Bits<16>>,
    k_low15: Constant<Bits<16>>,
    k_zero5: Constant<Bits<5>>,
    k_one5: Constant<Bits<5>>,
    k_two5: Constant<Bits<5>>,
    k_imp: Constant<Bits<NW>>,
    k_one_fx: Constant<Bits<FX>>,
    k_zero32: Constant<Bits<32>>,
    k_one_nw: Constant<Bits<NW>>,
    k_rmask: Constant<Bits<FX>>,
    k_rmask_nw: Constant<Bits<NW>>,
    k_fh32: Constant<Bits<32>>,
    k_one_q: Constant<Bits<8>>,
    k_sh16: Constant<Bits<32>>,
    _lanes: usize,
    _g: usize,
    _nb: usize,
    _c: usize,
    _w: usize,
    _bits: usize,
    _ns: usize,
    _sb: usize,
    _tp: usize,
}

/// Slots of `G x 16` bits for `group` elements at `lanes` per beat.
pub fn slots(group: usize, lanes: usize) -> usize {
    2 + slot_slack(lanes).div_ceil(group / lanes)
}

/// What `hack-quantizer` adds to the engine (spec §15.7): the code sum,
/// `in_last`, and optionally stochastic rounding with the LFSR of §15.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HackOpts {
    pub stochastic: bool,
    pub seed: u16,
}

/// Where M1 splits `m` (below 2^11) into two products with `r`: at 6, a
/// 16x6 and a 16x5 piece. At 8 (16x8 and 16x3) the larger piece, behind
/// `m`'s fan-out to every lane, took 4.22 ns at 32 lanes (spec §15.16.4).
const SM_SPLIT: usize = 6;

/// Feedback mask of the stochastic-rounding LFSR (spec §15.4).
const LFSR_MASK: u16 = 0xB400;

/// The state after `k` LFSR steps as a GF(2) matrix: bit `j` of row `i`
/// is set when bit `j` of the state feeds bit `i` after `k` steps.
pub fn lfsr_power(k: usize) -> [u16; 16] {
    let mut rows = [0u16; 16];
    for j in 0..16 {
        let mut s = 1u16 << j;
        for _ in 0..k {
            s = (s >> 1) ^ ((s & 1).wrapping_neg() & LFSR_MASK);
        }
        for (i, r) in rows.iter_mut().enumerate() {
            *r |= ((s >> i) & 1) << j;
        }
    }
    rows
}

impl KiviQuantizer {
    /// One token of `vector` elements (heads x head_dim) in groups of
    /// `group`, `bits`-bit codes, `lanes` elements per input beat.
    pub fn new(vector: usize, group: usize, bits: usize, lanes: usize) -> Self {
        Self::build(vector, group, bits, lanes, None)
    }

    /// The engine as `hack-quantizer`'s core, axis token: partitions of
    /// `group` elements, vectors closed by `in_last`.
    pub fn hack(group: usize, bits: usize, lanes: usize, opts: HackOpts) -> Self {
        Self::build(group, group, bits, lanes, Some(opts))
    }

    fn build(vector: usize, group: usize, bits: usize, lanes: usize, hack: Option<HackOpts>) -> Self {
        assert!(group.is_multiple_of(lanes) && vector.is_multiple_of(group) && group <= 256 && [2, 3, 4, 8].contains(&bits));
        let hs = hack.is_some() as usize;
        let st = hack.is_some_and(|h| h.stochastic) as usize;
        let seed = hack.map_or(1, |h| h.seed);
        let c = 32 / bits;
        let w = group.div_ceil(c);
        let nb = group / lanes;
        let ns = slots(group, lanes);
        assert!(ns <= 16 && nb <= 256 && vector / group <= 1 << 16);
        let tp = tree_stages(lanes);
        let sb = 6 + bits + 2 * st + hs * tp;
        let depth = lanes.trailing_zeros() as usize;
        // node i's depth is floor(log2(i + 1)); the depths registered are
        // depth - 1, depth - 3, ... down to the root (the root itself when
        // depth is odd, and the lone key at one lane)
        let pipe = (0..2 * lanes - 1).map(|i| {
            let d = (i + 1).ilog2() as usize;
            Constant::new((depth - d) % 2 == 1 || depth == 0)
        });
        let spipe = (0..hs * (2 * lanes - 1)).map(|i| {
            let d = (i + 1).ilog2() as usize;
            Constant::new(((depth - d).is_multiple_of(2) && d < depth) || d == 0)
        });
        let lw: Vec<u64> = (0..st * lanes).flat_map(|l| lfsr_power(16 * (l + 1))).map(u64::from).collect();
        let la: Vec<u64> = (0..st).flat_map(|_| lfsr_power(16 * lanes)).map(u64::from).collect();
        let ones = |n: usize| (1u64 << n) - 1;
        fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        KiviQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_x: sigs(lanes),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_meta: Default::default(),
            out_words: sigs(w),
            out_last: Default::default(),
            out_nonfinite: Default::default(),
            in_last: sigs(hs),
            out_sum: sigs(hs),
            san: (0..lanes).map(|_| Sanitize::default()).collect(),
            key: sigs(lanes),
            tmin: sigs(lanes - 1),
            tmax: sigs(lanes - 1),
            umin: sigs(2 * lanes - 1),
            umax: sigs(2 * lanes - 1),
            trmin: regs(2 * lanes - 1),
            trmax: regs(2 * lanes - 1),
            k_pipe: pipe.collect(),
            bnf: Default::default(),
            i0_x: regs(lanes),
            i0_v: Reg::default(),
            i0_slot: Reg::default(),
            i0_row: Reg::default(),
            i0_first: Reg::default(),
            i0_glast: Reg::default(),
            i0_tlast: Reg::default(),
            t_v: regs(tp),
            t_first: regs(tp),
            t_glast: regs(tp),
            t_tlast: regs(tp),
            t_slot: regs(tp),
            t_nf: regs(tp),
            accept: Default::default(),
            wlast: Default::default(),
            tlast: Default::default(),
            uw: Default::default(),
            kw: Reg::default(),
            wh: Reg::default(),
            gc: Reg::default(),
            rmin: Reg::default(),
            rmax: Reg::default(),
            nf_tok: Reg::default(),
            used: regs(ns),
            rdy: regs(ns),
            buf: regs(ns * group),
            f_v: Reg::default(),
            f_slot: Reg::default(),
            f_last: Reg::default(),
            f_nf: Reg::default(),
            fmin: Default::default(),
            fmax: Default::default(),
            cvt_fmin: Fp16ToUnits::default(),
            cvt_fmax: Fp16ToUnits::default(),
            f1_v: Reg::default(),
            f1_last: Reg::default(),
            f1_nf: Reg::default(),
            f1_slot: Reg::default(),
            f1_minmag: Reg::default(),
            f1_maxmag: Reg::default(),
            f1_swap: Reg::default(),
            f1_sub: Reg::default(),
            f1_min16: Reg::default(),
            flo: DiffLo::new(),
            fhi: DiffHi::new(),
            f2_v: Reg::default(),
            f2_last: Reg::default(),
            f2_nf: Reg::default(),
            f2_slot: Reg::default(),
            f2_lo: Reg::default(),
            f2_maxh: Reg::default(),
            f2_minh: Reg::default(),
            f2_swap: Reg::default(),
            f2_sub: Reg::default(),
            f2_min16: Reg::default(),
            f3_v: Reg::default(),
            f3_last: Reg::default(),
            f3_nf: Reg::default(),
            f3_slot: Reg::default(),
            f3_d: Reg::default(),
            f3_min16: Reg::default(),
            gstep: GroupStep::new(bits),
            g_v: regs(GroupStep::LATENCY),
            g_slot: regs(GroupStep::LATENCY),
            g_last: regs(GroupStep::LATENCY),
            g_nf: regs(GroupStep::LATENCY),
            desc_meta: regs(ns),
            desc_last: regs(ns),
            desc_nf: regs(ns),
            adv: Default::default(),
            issue: Default::default(),
            rlast: Default::default(),
            rrdy: Default::default(),
            kr: Reg::default(),
            rh: Reg::default(),
            xr: sigs(lanes),
            cmeta: Default::default(),
            clast: Default::default(),
            cnf: Default::default(),
            cmeta1: Default::default(),
            cex: Default::default(),
            esh5: Default::default(),
            cvt_x: (0..lanes).map(|_| Fp16ToUnits::default()).collect(),
            cvt_cmin: Fp16ToUnits::default(),
            c0_x: regs(lanes),
            c1_xmag: regs(lanes),
            c1_swap: regs(lanes),
            c1_sub: regs(lanes),
            c1_minmag: Reg::default(),
            c1_m: Reg::default(),
            c1_esh: Reg::default(),
            c1_e0: Reg::default(),
            c1_sz: Reg::default(),
            xlo: (0..lanes).map(|_| DiffLo::new()).collect(),
            xhi: (0..lanes).map(|_| DiffHi::new()).collect(),
            c2_lo: regs(lanes),
            c2_xh: regs(lanes),
            c2_swap: regs(lanes),
            c2_sub: regs(lanes),
            c2_minh: Reg::default(),
            c2_m: Reg::default(),
            c2_esh: Reg::default(),
            c2_e0: Reg::default(),
            c2_sz: Reg::default(),
            c3_n: regs(lanes),
            c3_m: Reg::default(),
            c3_esh: Reg::default(),
            c3_e0: Reg::default(),
            c3_sz: Reg::default(),
            nn: Default::default(),
            c4_nn: regs(lanes),
            c4_m: Reg::default(),
            c4_sz: Reg::default(),
            c5_r: regs(lanes),
            c5_m2: Reg::default(),
            c5_sz: Reg::default(),
            dstep: (0..(bits - 1) * lanes).map(|_| DivStep::default()).collect(),
            st_r: regs((bits - 1) * lanes),
            st_q: regs(bits * lanes),
            st_m2: regs(bits - 1),
            st_sz: regs(bits),
            sb_v: regs(sb),
            sb_k: regs(sb),
            sb_rl: regs(sb),
            sb_meta: regs(sb),
            sb_tl: regs(sb),
            sb_nf: regs(sb),
            qq: Default::default(),
            accn: sigs(w),
            acc: regs(w),
            o_v: Reg::default(),
            o_meta: Reg::default(),
            o_last: Reg::default(),
            o_nf: Reg::default(),
            c3_em: regs(st),
            c3_fsl: regs(st),
            c3_fsr: regs(st),
            c4_fr: regs(st * lanes),
            c4_sk: regs(st * lanes),
            st_fr: regs(st * (bits + 1) * lanes),
            st_sk: regs(st * (bits + 1) * lanes),
            sr_rem: regs(st * lanes),
            sm_lo: regs(st),
            sm_hi: regs(st),
            lfsr: (0..st).map(|_| Reg::new((seed as u64).into())).collect(),
            lfn: sigs(st),
            wdn: sigs(st * lanes),
            wd: regs(st * lanes),
            m1_plo: regs(st * lanes),
            m1_phi: regs(st * lanes),
            m1_r: regs(st * lanes),
            m1_fr: regs(st * lanes),
            m1_sk: regs(st * lanes),
            m1_q0: regs(st * lanes),
            m1_q1: regs(st * lanes),
            m1_sz: regs(st),
            xq: regs(st * lanes),
            m2_p: sigs(st * lanes),
            hq: sigs(hs * lanes),
            sn: sigs(hs * (lanes - 1)),
            su: sigs(hs * (2 * lanes - 1)),
            sr: regs(hs * (2 * lanes - 1)),
            s_pipe: spipe.collect(),
            xd: regs(hs * tp * lanes),
            sacc: regs(hs),
            k_lw: consts(lw),
            k_la: consts(la),
            k_bit: consts((0..st * 16).map(|i| 1u64 << (i % 16))),
            k_hx: consts((0..st).map(|_| ones(FX))),
            k_h16: consts((0..st).map(|_| 16)),
            k_h8: consts((0..st).map(|_| SM_SPLIT as u64)),
            k_hff: consts((0..st).map(|_| (1 << SM_SPLIT) - 1)),
            _hs: hs,
            _st: st,
            _ts: tp,
            kc: consts((0..nb as u64).collect::<Vec<_>>()),
            sc: consts((0..ns as u64).collect::<Vec<_>>()),
            shj: consts((0..group).map(|j| (bits * (j % c)) as u64)),
            // step j compares against 2m * 2^(b-1-j)
            dsh: consts((0..bits - 1).map(|j| (bits - 1 - j) as u64)),
            k_klast: k((nb - 1) as u64),
            k_slast: k((ns - 1) as u64),
            k_glast: k((vector / group - 1) as u64),
            k_one8: k(1),
            k_zero8: k(0),
            k_one4: k(1),
            k_zero4: k(0),
            k_one16: k(1),
            k_zero16: k(0),
            k_sign16: k(0x8000),
            k_low15: k(0x7FFF),
            k_zero5: k(0),
            k_one5: k(1),
            k_two5: k(2),
            k_imp: k(1024),
            k_one_fx: k(1),
            k_zero32: k(0),
            k_one_nw: k(1),
            k_rmask: k(ones(12 + bits)),
            k_rmask_nw: k(ones(12 + bits)),
            k_fh32: k(FH as u64),
            k_one_q: k(1),
            k_sh16: k(16),
            _lanes: lanes,
            _g: group,
            _nb: nb,
            _c: c,
            _w: w,
            _bits: bits,
            _ns: ns,
            _sb: sb,
            _tp: tp,
        }
    }

    /// Cycles from a group's first input beat to its output beat, at full
    /// rate with the output ready: the fill (`G / lanes` beats, I0, the
    /// tree stages ending in the running min/max), the step (F1-F3,
    /// `GroupStep`, the descriptor), the issue of its rows (`G / lanes`),
    /// C0-C5, `b` steps and the output register.
    pub fn latency(group: usize, bits: usize, lanes: usize) -> usize {
        2 * (group / lanes) + bits + 14 + tree_stages(lanes)
    }

    /// `latency` of the `hack` engine: the sum tree's stages before the
    /// pack, and M1, M2 when stochastic.
    pub fn hack_latency(group: usize, bits: usize, lanes: usize, stochastic: bool) -> usize {
        Self::latency(group, bits, lanes) + tree_stages(lanes) + 2 * stochastic as usize
    }
}

impl Logic for KiviQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- register wiring ----------------
        clock!(self, clock, kw, wh, gc, rmin, rmax, nf_tok, f_v, f_slot, f_last, f_nf, kr, rh);
        clock!(self, clock, c1_minmag, c1_m, c1_esh, c1_e0, c1_sz, c2_m, c2_esh, c2_e0, c2_sz, c2_minh);
        clock!(self, clock, c3_m, c3_esh, c3_e0, c3_sz, c4_m, c4_sz, c5_m2, c5_sz, o_v, o_meta, o_last, o_nf);
        self.adv.next = !self.o_v.q.val() | self.out_ready.val();
        // fill and step registers: always enabled, hold unless loaded
        self.kw.reset.next = self.reset.val();
        self.wh.reset.next = self.reset.val();
        self.gc.reset.next = self.reset.val();
        self.rmin.reset.next = self.reset.val();
        self.rmax.reset.next = self.reset.val();
        self.nf_tok.reset.next = self.reset.val();
        self.f_v.reset.next = self.reset.val();
        self.f_slot.reset.next = self.reset.val();
        self.f_last.reset.next = self.reset.val();
        self.f_nf.reset.next = self.reset.val();
        self.kr.reset.next = self.reset.val();
        self.rh.reset.next = self.reset.val();
        self.kw.en.next = true;
        self.wh.en.next = true;
        self.gc.en.next = true;
        self.rmin.en.next = true;
        self.rmax.en.next = true;
        self.nf_tok.en.next = true;
        self.f_v.en.next = true;
        self.f_slot.en.next = true;
        self.f_last.en.next = true;
        self.f_nf.en.next = true;
        self.kr.en.next = true;
        self.rh.en.next = true;
        self.kw.d.next = self.kw.q.val();
        self.wh.d.next = self.wh.q.val();
        self.gc.d.next = self.gc.q.val();
        self.rmin.d.next = self.rmin.q.val();
        self.rmax.d.next = self.rmax.q.val();
        self.nf_tok.d.next = self.nf_tok.q.val();
        self.kr.d.next = self.kr.q.val();
        self.rh.d.next = self.rh.q.val();
        for s in 0..self._ns {
            self.used[s].clock.next = self.clock.val();
            self.used[s].reset.next = self.reset.val();
            self.used[s].en.next = true;
            self.used[s].d.next = self.used[s].q.val();
            self.rdy[s].clock.next = self.clock.val();
            self.rdy[s].reset.next = self.reset.val();
            self.rdy[s].en.next = true;
            self.rdy[s].d.next = self.rdy[s].q.val();
            self.desc_meta[s].clock.next = self.clock.val();
            self.desc_meta[s].reset.next = self.reset.val();
            self.desc_meta[s].en.next = false;
            self.desc_meta[s].d.next = bit_cast::<32, 16>(self.gstep.min_out.val())
                | (bit_cast::<32, 16>(self.gstep.step_out.val()) << self.k_sh16.val());
            self.desc_last[s].clock.next = self.clock.val();
            self.desc_last[s].reset.next = self.reset.val();
            self.desc_last[s].en.next = false;
            self.desc_nf[s].clock.next = self.clock.val();
            self.desc_nf[s].reset.next = self.reset.val();
            self.desc_nf[s].en.next = false;
        }
        // a slot element's only source: its lane of the input, sanitised
        for g in self._g..(self._g + 1) {
            for ln in self._lanes..(self._lanes + 1) {
                for s in 0..self._ns {
                    for j in 0..self._g {
                        self.buf[s * g + j].clock.next = self.clock.val();
                        self.buf[s * g + j].reset.next = self.reset.val();
                        self.buf[s * g + j].en.next = false;
                        self.buf[s * g + j].d.next = self.san[j % ln].y.val();
                    }
                }
            }
        }
        for i in 0..(2 * self._lanes - 1) {
            self.trmin[i].clock.next = self.clock.val();
            self.trmin[i].reset.next = self.reset.val();
            self.trmin[i].en.next = true;
            self.trmax[i].clock.next = self.clock.val();
            self.trmax[i].reset.next = self.reset.val();
            self.trmax[i].en.next = true;
        }
        for i in 0..self._tp {
            self.t_v[i].clock.next = self.clock.val();
            self.t_v[i].reset.next = self.reset.val();
            self.t_v[i].en.next = true;
            self.t_first[i].clock.next = self.clock.val();
            self.t_first[i].reset.next = self.reset.val();
            self.t_first[i].en.next = true;
            self.t_glast[i].clock.next = self.clock.val();
            self.t_glast[i].reset.next = self.reset.val();
            self.t_glast[i].en.next = true;
            self.t_tlast[i].clock.next = self.clock.val();
            self.t_tlast[i].reset.next = self.reset.val();
            self.t_tlast[i].en.next = true;
            self.t_slot[i].clock.next = self.clock.val();
            self.t_slot[i].reset.next = self.reset.val();
            self.t_slot[i].en.next = true;
            self.t_nf[i].clock.next = self.clock.val();
            self.t_nf[i].reset.next = self.reset.val();
            self.t_nf[i].en.next = true;
        }
        for i in 0..3 {
            self.g_v[i].clock.next = self.clock.val();
            self.g_v[i].reset.next = self.reset.val();
            self.g_v[i].en.next = true;
            self.g_slot[i].clock.next = self.clock.val();
            self.g_slot[i].reset.next = self.reset.val();
            self.g_slot[i].en.next = true;
            self.g_last[i].clock.next = self.clock.val();
            self.g_last[i].reset.next = self.reset.val();
            self.g_last[i].en.next = true;
            self.g_nf[i].clock.next = self.clock.val();
            self.g_nf[i].reset.next = self.reset.val();
            self.g_nf[i].en.next = true;
        }
        // I0, F1-F3: free-running pipeline registers
        clock!(self, clock, i0_v, i0_slot, i0_row, i0_first, i0_glast, i0_tlast);
        clock!(self, clock, f1_v, f1_last, f1_nf, f1_slot, f1_minmag, f1_maxmag, f1_swap, f1_sub);
        clock!(self, clock, f1_min16, f2_v, f2_last, f2_nf, f2_slot, f2_lo, f2_maxh, f2_minh, f2_min16);
        clock!(self, clock, f2_swap, f2_sub);
        clock!(self, clock, f3_v, f3_last, f3_nf, f3_slot, f3_d, f3_min16);
        self.i0_v.reset.next = self.reset.val();
        self.i0_v.en.next = true;
        self.i0_slot.reset.next = self.reset.val();
        self.i0_slot.en.next = true;
        self.i0_row.reset.next = self.reset.val();
        self.i0_row.en.next = true;
        self.i0_first.reset.next = self.reset.val();
        self.i0_first.en.next = true;
        self.i0_glast.reset.next = self.reset.val();
        self.i0_glast.en.next = true;
        self.i0_tlast.reset.next = self.reset.val();
        self.i0_tlast.en.next = true;
        self.f1_v.reset.next = self.reset.val();
        self.f1_v.en.next = true;
        self.f1_last.reset.next = self.reset.val();
        self.f1_last.en.next = true;
        self.f1_nf.reset.next = self.reset.val();
        self.f1_nf.en.next = true;
        self.f1_slot.reset.next = self.reset.val();
        self.f1_slot.en.next = true;
        self.f1_minmag.reset.next = self.reset.val();
        self.f1_minmag.en.next = true;
        self.f1_maxmag.reset.next = self.reset.val();
        self.f1_maxmag.en.next = true;
        self.f1_swap.reset.next = self.reset.val();
        self.f1_swap.en.next = true;
        self.f1_sub.reset.next = self.reset.val();
        self.f1_sub.en.next = true;
        self.f1_min16.reset.next = self.reset.val();
        self.f1_min16.en.next = true;
        self.f2_v.reset.next = self.reset.val();
        self.f2_v.en.next = true;
        self.f2_last.reset.next = self.reset.val();
        self.f2_last.en.next = true;
        self.f2_nf.reset.next = self.reset.val();
        self.f2_nf.en.next = true;
        self.f2_slot.reset.next = self.reset.val();
        self.f2_slot.en.next = true;
        self.f2_lo.reset.next = self.reset.val();
        self.f2_lo.en.next = true;
        self.f2_maxh.reset.next = self.reset.val();
        self.f2_maxh.en.next = true;
        self.f2_minh.reset.next = self.reset.val();
        self.f2_minh.en.next = true;
        self.f2_swap.reset.next = self.reset.val();
        self.f2_swap.en.next = true;
        self.f2_sub.reset.next = self.reset.val();
        self.f2_sub.en.next = true;
        self.f2_min16.reset.next = self.reset.val();
        self.f2_min16.en.next = true;
        self.f3_v.reset.next = self.reset.val();
        self.f3_v.en.next = true;
        self.f3_last.reset.next = self.reset.val();
        self.f3_last.en.next = true;
        self.f3_nf.reset.next = self.reset.val();
        self.f3_nf.en.next = true;
        self.f3_slot.reset.next = self.reset.val();
        self.f3_slot.en.next = true;
        self.f3_d.reset.next = self.reset.val();
        self.f3_d.en.next = true;
        self.f3_min16.reset.next = self.reset.val();
        self.f3_min16.en.next = true;
        for l in 0..self._lanes {
            self.i0_x[l].clock.next = self.clock.val();
            self.i0_x[l].reset.next = self.reset.val();
            self.i0_x[l].en.next = true;
            self.i0_x[l].d.next = self.in_x[l].val();
        }
        // code pipeline registers: load on adv
        self.c1_minmag.reset.next = self.reset.val();
        self.c1_m.reset.next = self.reset.val();
        self.c1_esh.reset.next = self.reset.val();
        self.c1_e0.reset.next = self.reset.val();
        self.c1_sz.reset.next = self.reset.val();
        self.c2_m.reset.next = self.reset.val();
        self.c2_esh.reset.next = self.reset.val();
        self.c2_e0.reset.next = self.reset.val();
        self.c2_sz.reset.next = self.reset.val();
        self.c2_minh.reset.next = self.reset.val();
        self.c3_m.reset.next = self.reset.val();
        self.c3_esh.reset.next = self.reset.val();
        self.c3_e0.reset.next = self.reset.val();
        self.c3_sz.reset.next = self.reset.val();
        self.c4_m.reset.next = self.reset.val();
        self.c4_sz.reset.next = self.reset.val();
        self.c5_m2.reset.next = self.reset.val();
        self.c5_sz.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_meta.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_nf.reset.next = self.reset.val();
        self.c1_minmag.en.next = self.adv.val();
        self.c1_m.en.next = self.adv.val();
        self.c1_esh.en.next = self.adv.val();
        self.c1_e0.en.next = self.adv.val();
        self.c1_sz.en.next = self.adv.val();
        self.c2_m.en.next = self.adv.val();
        self.c2_esh.en.next = self.adv.val();
        self.c2_e0.en.next = self.adv.val();
        self.c2_sz.en.next = self.adv.val();
        self.c2_minh.en.next = self.adv.val();
        self.c3_m.en.next = self.adv.val();
        self.c3_esh.en.next = self.adv.val();
        self.c3_e0.en.next = self.adv.val();
        self.c3_sz.en.next = self.adv.val();
        self.c4_m.en.next = self.adv.val();
        self.c4_sz.en.next = self.adv.val();
        self.c5_m2.en.next = self.adv.val();
        self.c5_sz.en.next = self.adv.val();
        self.o_v.en.next = self.adv.val();
        self.o_meta.en.next = false;
        self.o_last.en.next = false;
        self.o_nf.en.next = false;
        for l in 0..self._lanes {
            self.c0_x[l].clock.next = self.clock.val();
            self.c0_x[l].reset.next = self.reset.val();
            self.c0_x[l].en.next = self.adv.val();
            self.c2_lo[l].clock.next = self.clock.val();
            self.c2_lo[l].reset.next = self.reset.val();
            self.c2_lo[l].en.next = self.adv.val();
            self.c2_xh[l].clock.next = self.clock.val();
            self.c2_xh[l].reset.next = self.reset.val();
            self.c2_xh[l].en.next = self.adv.val();
            self.c2_swap[l].clock.next = self.clock.val();
            self.c2_swap[l].reset.next = self.reset.val();
            self.c2_swap[l].en.next = self.adv.val();
            self.c2_sub[l].clock.next = self.clock.val();
            self.c2_sub[l].reset.next = self.reset.val();
            self.c2_sub[l].en.next = self.adv.val();
            self.c4_nn[l].clock.next = self.clock.val();
            self.c4_nn[l].reset.next = self.reset.val();
            self.c4_nn[l].en.next = self.adv.val();
            self.c5_r[l].clock.next = self.clock.val();
            self.c5_r[l].reset.next = self.reset.val();
            self.c5_r[l].en.next = self.adv.val();
            self.c1_xmag[l].clock.next = self.clock.val();
            self.c1_xmag[l].reset.next = self.reset.val();
            self.c1_xmag[l].en.next = self.adv.val();
            self.c1_swap[l].clock.next = self.clock.val();
            self.c1_swap[l].reset.next = self.reset.val();
            self.c1_swap[l].en.next = self.adv.val();
            self.c1_sub[l].clock.next = self.clock.val();
            self.c1_sub[l].reset.next = self.reset.val();
            self.c1_sub[l].en.next = self.adv.val();
            self.c3_n[l].clock.next = self.clock.val();
            self.c3_n[l].reset.next = self.reset.val();
            self.c3_n[l].en.next = self.adv.val();
        }
        for i in 0..((self._bits - 1) * self._lanes) {
            self.st_r[i].clock.next = self.clock.val();
            self.st_r[i].reset.next = self.reset.val();
            self.st_r[i].en.next = self.adv.val();
        }
        for i in 0..(self._bits * self._lanes) {
            self.st_q[i].clock.next = self.clock.val();
            self.st_q[i].reset.next = self.reset.val();
            self.st_q[i].en.next = self.adv.val();
        }
        for j in 0..(self._bits - 1) {
            self.st_m2[j].clock.next = self.clock.val();
            self.st_m2[j].reset.next = self.reset.val();
            self.st_m2[j].en.next = self.adv.val();
        }
        for j in 0..self._bits {
            self.st_sz[j].clock.next = self.clock.val();
            self.st_sz[j].reset.next = self.reset.val();
            self.st_sz[j].en.next = self.adv.val();
        }
        for i in 0..self._sb {
            self.sb_v[i].clock.next = self.clock.val();
            self.sb_v[i].reset.next = self.reset.val();
            self.sb_v[i].en.next = self.adv.val();
            self.sb_k[i].clock.next = self.clock.val();
            self.sb_k[i].reset.next = self.reset.val();
            self.sb_k[i].en.next = self.adv.val();
            self.sb_rl[i].clock.next = self.clock.val();
            self.sb_rl[i].reset.next = self.reset.val();
            self.sb_rl[i].en.next = self.adv.val();
            self.sb_meta[i].clock.next = self.clock.val();
            self.sb_meta[i].reset.next = self.reset.val();
            self.sb_meta[i].en.next = self.adv.val();
            self.sb_tl[i].clock.next = self.clock.val();
            self.sb_tl[i].reset.next = self.reset.val();
            self.sb_tl[i].en.next = self.adv.val();
            self.sb_nf[i].clock.next = self.clock.val();
            self.sb_nf[i].reset.next = self.reset.val();
            self.sb_nf[i].en.next = self.adv.val();
        }
        for w in 0..self._w {
            self.acc[w].clock.next = self.clock.val();
            self.acc[w].reset.next = self.reset.val();
            self.acc[w].en.next = false;
        }
        self.gstep.clock.next = self.clock.val();
        self.gstep.reset.next = self.reset.val();
        // hack-quantizer registers: the code pipeline's, loading on adv
        for i in 0..self._st {
            self.c3_em[i].clock.next = self.clock.val();
            self.c3_em[i].reset.next = self.reset.val();
            self.c3_em[i].en.next = self.adv.val();
            self.sm_lo[i].clock.next = self.clock.val();
            self.sm_lo[i].reset.next = self.reset.val();
            self.sm_lo[i].en.next = self.adv.val();
            self.sm_hi[i].clock.next = self.clock.val();
            self.sm_hi[i].reset.next = self.reset.val();
            self.sm_hi[i].en.next = self.adv.val();
            self.m1_sz[i].clock.next = self.clock.val();
            self.m1_sz[i].reset.next = self.reset.val();
            self.m1_sz[i].en.next = self.adv.val();
            self.lfsr[i].clock.next = self.clock.val();
            self.lfsr[i].reset.next = self.reset.val();
            self.lfsr[i].en.next = false;
            self.c3_fsl[i].clock.next = self.clock.val();
            self.c3_fsl[i].reset.next = self.reset.val();
            self.c3_fsl[i].en.next = self.adv.val();
            self.c3_fsr[i].clock.next = self.clock.val();
            self.c3_fsr[i].reset.next = self.reset.val();
            self.c3_fsr[i].en.next = self.adv.val();
        }
        for i in 0..(self._st * self._lanes) {
            self.c4_fr[i].clock.next = self.clock.val();
            self.c4_fr[i].reset.next = self.reset.val();
            self.c4_fr[i].en.next = self.adv.val();
            self.c4_sk[i].clock.next = self.clock.val();
            self.c4_sk[i].reset.next = self.reset.val();
            self.c4_sk[i].en.next = self.adv.val();
            self.sr_rem[i].clock.next = self.clock.val();
            self.sr_rem[i].reset.next = self.reset.val();
            self.sr_rem[i].en.next = self.adv.val();
            self.wd[i].clock.next = self.clock.val();
            self.wd[i].reset.next = self.reset.val();
            self.wd[i].en.next = self.adv.val();
            self.m1_plo[i].clock.next = self.clock.val();
            self.m1_plo[i].reset.next = self.reset.val();
            self.m1_plo[i].en.next = self.adv.val();
            self.m1_phi[i].clock.next = self.clock.val();
            self.m1_phi[i].reset.next = self.reset.val();
            self.m1_phi[i].en.next = self.adv.val();
            self.m1_r[i].clock.next = self.clock.val();
            self.m1_r[i].reset.next = self.reset.val();
            self.m1_r[i].en.next = self.adv.val();
            self.m1_fr[i].clock.next = self.clock.val();
            self.m1_fr[i].reset.next = self.reset.val();
            self.m1_fr[i].en.next = self.adv.val();
            self.m1_sk[i].clock.next = self.clock.val();
            self.m1_sk[i].reset.next = self.reset.val();
            self.m1_sk[i].en.next = self.adv.val();
            self.m1_q0[i].clock.next = self.clock.val();
            self.m1_q0[i].reset.next = self.reset.val();
            self.m1_q0[i].en.next = self.adv.val();
            self.m1_q1[i].clock.next = self.clock.val();
            self.m1_q1[i].reset.next = self.reset.val();
            self.m1_q1[i].en.next = self.adv.val();
            self.xq[i].clock.next = self.clock.val();
            self.xq[i].reset.next = self.reset.val();
            self.xq[i].en.next = self.adv.val();
        }
        for i in 0..(self._st * (self._bits + 1) * self._lanes) {
            self.st_fr[i].clock.next = self.clock.val();
            self.st_fr[i].reset.next = self.reset.val();
            self.st_fr[i].en.next = self.adv.val();
            self.st_sk[i].clock.next = self.clock.val();
            self.st_sk[i].reset.next = self.reset.val();
            self.st_sk[i].en.next = self.adv.val();
        }
        for i in 0..(self._hs * (2 * self._lanes - 1)) {
            self.sr[i].clock.next = self.clock.val();
            self.sr[i].reset.next = self.reset.val();
            self.sr[i].en.next = self.adv.val();
        }
        for i in 0..(self._hs * self._ts * self._lanes) {
            self.xd[i].clock.next = self.clock.val();
            self.xd[i].reset.next = self.reset.val();
            self.xd[i].en.next = self.adv.val();
        }
        for i in 0..self._hs {
            self.sacc[i].clock.next = self.clock.val();
            self.sacc[i].reset.next = self.reset.val();
            self.sacc[i].en.next = false;
        }

        // ---------------- fill ----------------
        // accept: the beat goes to row kw of slot wh (written from I0)
        self.uw.next = false;
        for s in 0..self._ns {
            if self.wh.q.val() == self.sc[s].val() {
                self.uw.next = self.used[s].q.val();
            }
        }
        self.in_ready.next = !self.uw.val() | (self.kw.q.val() != self.k_zero8.val());
        self.accept.next = self.in_valid.val() & (!self.uw.val() | (self.kw.q.val() != self.k_zero8.val()));
        self.wlast.next = self.kw.q.val() == self.k_klast.val();
        self.tlast.next = self.gc.q.val() == self.k_glast.val();
        for i in 0..self._hs {
            self.tlast.next = self.in_last[i].val();
        }
        self.i0_v.d.next = self.accept.val();
        self.i0_slot.d.next = self.wh.q.val();
        self.i0_row.d.next = self.kw.q.val();
        self.i0_first.d.next = self.kw.q.val() == self.k_zero8.val();
        self.i0_glast.d.next = self.wlast.val();
        self.i0_tlast.d.next = self.tlast.val();
        if self.accept.val() {
            for s in 0..self._ns {
                if (self.wh.q.val() == self.sc[s].val()) & (self.kw.q.val() == self.k_zero8.val()) {
                    self.used[s].d.next = true;
                }
            }
            self.kw.d.next = self.kw.q.val() + self.k_one8.val();
            if self.wlast.val() {
                self.kw.d.next = self.k_zero8.val();
                self.wh.d.next = self.wh.q.val() + self.k_one4.val();
                if self.wh.q.val() == self.k_slast.val() {
                    self.wh.d.next = self.k_zero4.val();
                }
                self.gc.d.next = self.gc.q.val() + self.k_one16.val();
                if self.tlast.val() {
                    self.gc.d.next = self.k_zero16.val();
                }
            }
        }
        // from I0: sanitise, write the row, order keys (spec §2.2.2:
        // x | 0x8000 for sign 0, ~x for sign 1) reduced by two trees
        for l in 0..self._lanes {
            self.san[l].x.next = self.i0_x[l].q.val();
            self.key[l].next = self.san[l].y.val() | self.k_sign16.val();
            if self.san[l].y.val().get_bit(15) {
                self.key[l].next = !self.san[l].y.val();
            }
        }
        if self.i0_v.q.val() {
            for g in self._g..(self._g + 1) {
                for ln in self._lanes..(self._lanes + 1) {
                    for s in 0..self._ns {
                        for k in 0..self._nb {
                            if (self.i0_slot.q.val() == self.sc[s].val()) & (self.i0_row.q.val() == self.kc[k].val()) {
                                for l in 0..self._lanes {
                                    self.buf[s * g + k * ln + l].en.next = true;
                                }
                            }
                        }
                    }
                }
            }
        }
        // the trees, children before parents; a node on a stage boundary
        // is read from its register
        for ln in self._lanes..(self._lanes + 1) {
            for l in 0..self._lanes {
                self.trmin[ln - 1 + l].d.next = self.key[l].val();
                self.trmax[ln - 1 + l].d.next = self.key[l].val();
                self.umin[ln - 1 + l].next = self.key[l].val();
                self.umax[ln - 1 + l].next = self.key[l].val();
                if self.k_pipe[ln - 1 + l].val() {
                    self.umin[ln - 1 + l].next = self.trmin[ln - 1 + l].q.val();
                    self.umax[ln - 1 + l].next = self.trmax[ln - 1 + l].q.val();
                }
            }
            for j in 0..(self._lanes - 1) {
                self.tmin[ln - 2 - j].next = self.umin[2 * ln - 3 - 2 * j].val();
                if self.umin[2 * ln - 2 - 2 * j].val() < self.umin[2 * ln - 3 - 2 * j].val() {
                    self.tmin[ln - 2 - j].next = self.umin[2 * ln - 2 - 2 * j].val();
                }
                self.tmax[ln - 2 - j].next = self.umax[2 * ln - 3 - 2 * j].val();
                if self.umax[2 * ln - 2 - 2 * j].val() > self.umax[2 * ln - 3 - 2 * j].val() {
                    self.tmax[ln - 2 - j].next = self.umax[2 * ln - 2 - 2 * j].val();
                }
                self.trmin[ln - 2 - j].d.next = self.tmin[ln - 2 - j].val();
                self.trmax[ln - 2 - j].d.next = self.tmax[ln - 2 - j].val();
                self.umin[ln - 2 - j].next = self.tmin[ln - 2 - j].val();
                self.umax[ln - 2 - j].next = self.tmax[ln - 2 - j].val();
                if self.k_pipe[ln - 2 - j].val() {
                    self.umin[ln - 2 - j].next = self.trmin[ln - 2 - j].q.val();
                    self.umax[ln - 2 - j].next = self.trmax[ln - 2 - j].q.val();
                }
            }
        }
        self.bnf.next = self.san[0].nonfinite.val();
        for l in 1..self._lanes {
            self.bnf.next = self.bnf.val() | self.san[l].nonfinite.val();
        }
        self.t_v[0].d.next = self.i0_v.q.val();
        self.t_first[0].d.next = self.i0_first.q.val();
        self.t_glast[0].d.next = self.i0_glast.q.val();
        self.t_tlast[0].d.next = self.i0_tlast.q.val();
        self.t_slot[0].d.next = self.i0_slot.q.val();
        self.t_nf[0].d.next = self.bnf.val();
        for i in 1..self._tp {
            self.t_v[i].d.next = self.t_v[i - 1].q.val();
            self.t_first[i].d.next = self.t_first[i - 1].q.val();
            self.t_glast[i].d.next = self.t_glast[i - 1].q.val();
            self.t_tlast[i].d.next = self.t_tlast[i - 1].q.val();
            self.t_slot[i].d.next = self.t_slot[i - 1].q.val();
            self.t_nf[i].d.next = self.t_nf[i - 1].q.val();
        }
        // the root and the flags of the last tree stage -> the group's
        // running min and max, the token's flag
        for p in (self._tp - 1)..self._tp {
            self.f_v.d.next = self.t_v[p].q.val() & self.t_glast[p].q.val();
            self.f_slot.d.next = self.t_slot[p].q.val();
            self.f_last.d.next = self.t_tlast[p].q.val();
            self.f_nf.d.next = self.nf_tok.q.val() | self.t_nf[p].q.val();
            if self.t_v[p].q.val() {
                if self.t_first[p].q.val() {
                    self.rmin.d.next = self.umin[0].val();
                    self.rmax.d.next = self.umax[0].val();
                } else {
                    if self.umin[0].val() < self.rmin.q.val() {
                        self.rmin.d.next = self.umin[0].val();
                    }
                    if self.umax[0].val() > self.rmax.q.val() {
                        self.rmax.d.next = self.umax[0].val();
                    }
                }
                self.nf_tok.d.next = self.nf_tok.q.val() | self.t_nf[p].q.val();
                if self.t_glast[p].q.val() & self.t_tlast[p].q.val() {
                    self.nf_tok.d.next = false;
                }
            }
        }

        // ---------------- step: D = units(max) - units(min), GroupStep ----------------
        // F1: the keys back to FP16, as magnitude and sign
        self.fmin.next = self.rmin.q.val() & self.k_low15.val();
        if !self.rmin.q.val().get_bit(15) {
            self.fmin.next = !self.rmin.q.val();
        }
        self.fmax.next = self.rmax.q.val() & self.k_low15.val();
        if !self.rmax.q.val().get_bit(15) {
            self.fmax.next = !self.rmax.q.val();
        }
        self.cvt_fmin.x.next = self.fmin.val();
        self.cvt_fmax.x.next = self.fmax.val();
        self.f1_minmag.d.next = self.cvt_fmin.mag.val();
        self.f1_swap.d.next = self.cvt_fmin.neg.val() & self.cvt_fmax.neg.val();
        self.f1_maxmag.d.next = self.cvt_fmax.mag.val();
        self.f1_sub.d.next = !self.cvt_fmin.neg.val() | self.cvt_fmax.neg.val();
        self.f1_min16.d.next = self.fmin.val();
        self.f1_v.d.next = self.f_v.q.val();
        self.f1_slot.d.next = self.f_slot.q.val();
        self.f1_last.d.next = self.f_last.q.val();
        self.f1_nf.d.next = self.f_nf.q.val();
        // F2, F3: D = max - min (>= 0) in two halves (`DiffLo`, `DiffHi`)
        self.flo.xl.next = self.f1_maxmag.q.val().get_bits::<FH>(0);
        self.flo.swap.next = self.f1_swap.q.val();
        self.flo.yl.next = self.f1_minmag.q.val().get_bits::<FH>(0);
        self.flo.sub.next = self.f1_sub.q.val();
        self.f2_lo.d.next = self.flo.lo.val();
        self.f2_maxh.d.next = self.f1_maxmag.q.val().get_bits::<FH>(self.k_fh32.val().index());
        self.f2_minh.d.next = self.f1_minmag.q.val().get_bits::<FH>(self.k_fh32.val().index());
        self.f2_swap.d.next = self.f1_swap.q.val();
        self.f2_sub.d.next = self.f1_sub.q.val();
        self.f2_min16.d.next = self.f1_min16.q.val();
        self.f2_v.d.next = self.f1_v.q.val();
        self.f2_slot.d.next = self.f1_slot.q.val();
        self.f2_last.d.next = self.f1_last.q.val();
        self.f2_nf.d.next = self.f1_nf.q.val();
        self.fhi.xh.next = self.f2_maxh.q.val();
        self.fhi.swap.next = self.f2_swap.q.val();
        self.fhi.yh.next = self.f2_minh.q.val();
        self.fhi.sub.next = self.f2_sub.q.val();
        self.fhi.lo.next = self.f2_lo.q.val();
        self.f3_d.d.next = self.fhi.d.val();
        self.f3_min16.d.next = self.f2_min16.q.val();
        self.f3_v.d.next = self.f2_v.q.val();
        self.f3_slot.d.next = self.f2_slot.q.val();
        self.f3_last.d.next = self.f2_last.q.val();
        self.f3_nf.d.next = self.f2_nf.q.val();
        self.gstep.d.next = self.f3_d.q.val();
        self.gstep.min.next = self.f3_min16.q.val();
        self.gstep.present.next = true;
        self.g_v[0].d.next = self.f3_v.q.val();
        self.g_slot[0].d.next = self.f3_slot.q.val();
        self.g_last[0].d.next = self.f3_last.q.val();
        self.g_nf[0].d.next = self.f3_nf.q.val();
        for i in 1..3 {
            self.g_v[i].d.next = self.g_v[i - 1].q.val();
            self.g_slot[i].d.next = self.g_slot[i - 1].q.val();
            self.g_last[i].d.next = self.g_last[i - 1].q.val();
            self.g_nf[i].d.next = self.g_nf[i - 1].q.val();
        }
        for s in 0..self._ns {
            self.desc_last[s].d.next = self.g_last[2].q.val();
            self.desc_nf[s].d.next = self.g_nf[2].q.val() & self.g_last[2].q.val();
            if self.g_v[2].q.val() & (self.g_slot[2].q.val() == self.sc[s].val()) {
                self.desc_meta[s].en.next = true;
                self.desc_last[s].en.next = true;
                self.desc_nf[s].en.next = true;
                self.rdy[s].d.next = true;
            }
        }

        // ---------------- code: issue row kr of slot rh ----------------
        self.rrdy.next = false;
        self.cmeta.next = self.desc_meta[0].q.val();
        self.clast.next = self.desc_last[0].q.val();
        self.cnf.next = self.desc_nf[0].q.val();
        for s in 0..self._ns {
            if self.rh.q.val() == self.sc[s].val() {
                self.rrdy.next = self.rdy[s].q.val();
                self.cmeta.next = self.desc_meta[s].q.val();
                self.clast.next = self.desc_last[s].q.val();
                self.cnf.next = self.desc_nf[s].q.val();
            }
        }
        self.issue.next = self.rrdy.val() & self.adv.val();
        self.rlast.next = self.kr.q.val() == self.k_klast.val();
        if self.issue.val() {
            self.kr.d.next = self.kr.q.val() + self.k_one8.val();
            if self.rlast.val() {
                self.kr.d.next = self.k_zero8.val();
                self.rh.d.next = self.rh.q.val() + self.k_one4.val();
                if self.rh.q.val() == self.k_slast.val() {
                    self.rh.d.next = self.k_zero4.val();
                }
                for s in 0..self._ns {
                    if self.rh.q.val() == self.sc[s].val() {
                        self.used[s].d.next = false;
                        self.rdy[s].d.next = false;
                    }
                }
            }
        }
        for g in self._g..(self._g + 1) {
            for ln in self._lanes..(self._lanes + 1) {
                for l in 0..self._lanes {
                    self.xr[l].next = self.buf[l].q.val();
                    for s in 0..self._ns {
                        for k in 0..self._nb {
                            if (self.rh.q.val() == self.sc[s].val()) & (self.kr.q.val() == self.kc[k].val()) {
                                self.xr[l].next = self.buf[s * g + k * ln + l].q.val();
                            }
                        }
                    }
                    self.c0_x[l].d.next = self.xr[l].val();
                }
            }
        }
        // C1: units(x), units(min) and, per lane, the flags of x - min;
        // step = m 2^e with e = max(E - 1, 0) (the metadata word from C0's
        // sideband)
        for l in 0..self._lanes {
            self.cvt_x[l].x.next = self.c0_x[l].q.val();
            self.c1_xmag[l].d.next = self.cvt_x[l].mag.val();
            self.c1_swap[l].d.next = self.cvt_x[l].neg.val() & self.cvt_cmin.neg.val();
            self.c1_sub[l].d.next = !self.cvt_cmin.neg.val() | self.cvt_x[l].neg.val();
        }
        self.cmeta1.next = self.sb_meta[0].q.val();
        self.cvt_cmin.x.next = self.cmeta1.val().get_bits::<16>(0);
        self.c1_minmag.d.next = self.cvt_cmin.mag.val();
        self.cex.next = self.cmeta1.val().get_bits::<5>(26);
        self.c1_m.d.next = bit_cast::<NW, 10>(self.cmeta1.val().get_bits::<10>(16));
        self.esh5.next = self.cex.val() - self.k_two5.val();
        self.c1_esh.d.next = self.k_zero8.val();
        self.c1_e0.d.next = true;
        if self.cex.val() != self.k_zero5.val() {
            self.c1_m.d.next = bit_cast::<NW, 10>(self.cmeta1.val().get_bits::<10>(16)) | self.k_imp.val();
            self.c1_e0.d.next = self.cex.val() == self.k_one5.val();
            // e >= 1 shifts n right by e - 1 = E - 2
            self.c1_esh.d.next = bit_cast::<8, 5>(self.esh5.val());
        }
        self.c1_sz.d.next = self.cmeta1.val().get_bits::<16>(16) == self.k_zero16.val();
        // stochastic: n is divided by 2^e itself (spec §15.3: floor(n / s))
        for i in 0..self._st {
            if self.cex.val() != self.k_zero5.val() {
                self.c1_esh.d.next = bit_cast::<8, 5>(self.cex.val() - self.k_one5.val());
            }
            // the shifts that put the 16 bits of n below 2^e at the bottom,
            // and the bits below those (the sticky bit's)
            self.c3_fsl[i].d.next = self.k_h16[i].val() - self.c2_esh.q.val();
            self.c3_fsr[i].d.next = self.k_zero8.val();
            self.c3_em[i].d.next = !self.k_hx[i].val();
            if self.c2_esh.q.val() >= self.k_h16[i].val() {
                self.c3_fsl[i].d.next = self.k_zero8.val();
                self.c3_fsr[i].d.next = self.c2_esh.q.val() - self.k_h16[i].val();
                self.c3_em[i].d.next = !(self.k_hx[i].val() << (self.c2_esh.q.val() - self.k_h16[i].val()));
            }
        }
        self.sb_v[0].d.next = self.issue.val();
        self.sb_k[0].d.next = self.kr.q.val();
        self.sb_rl[0].d.next = self.rlast.val();
        self.sb_meta[0].d.next = self.cmeta.val();
        self.sb_tl[0].d.next = self.clast.val();
        self.sb_nf[0].d.next = self.cnf.val();
        for i in 1..self._sb {
            self.sb_v[i].d.next = self.sb_v[i - 1].q.val();
            self.sb_k[i].d.next = self.sb_k[i - 1].q.val();
            self.sb_rl[i].d.next = self.sb_rl[i - 1].q.val();
            self.sb_meta[i].d.next = self.sb_meta[i - 1].q.val();
            self.sb_tl[i].d.next = self.sb_tl[i - 1].q.val();
            self.sb_nf[i].d.next = self.sb_nf[i - 1].q.val();
        }

        // C2, C3: n = units(x) - units(min), exact and >= 0, in two halves
        // (`DiffLo`, `DiffHi`; min's high half is the group's, the flags
        // each lane's, from C1)
        for l in 0..self._lanes {
            self.xlo[l].xl.next = self.c1_xmag[l].q.val().get_bits::<FH>(0);
            self.xlo[l].swap.next = self.c1_swap[l].q.val();
            self.xlo[l].yl.next = self.c1_minmag.q.val().get_bits::<FH>(0);
            self.xlo[l].sub.next = self.c1_sub[l].q.val();
            self.c2_lo[l].d.next = self.xlo[l].lo.val();
            self.c2_xh[l].d.next = self.c1_xmag[l].q.val().get_bits::<FH>(self.k_fh32.val().index());
            self.c2_swap[l].d.next = self.c1_swap[l].q.val();
            self.c2_sub[l].d.next = self.c1_sub[l].q.val();
        }
        self.c2_minh.d.next = self.c1_minmag.q.val().get_bits::<FH>(self.k_fh32.val().index());
        self.c2_m.d.next = self.c1_m.q.val();
        self.c2_esh.d.next = self.c1_esh.q.val();
        self.c2_e0.d.next = self.c1_e0.q.val();
        self.c2_sz.d.next = self.c1_sz.q.val();
        for l in 0..self._lanes {
            self.xhi[l].xh.next = self.c2_xh[l].q.val();
            self.xhi[l].swap.next = self.c2_swap[l].q.val();
            self.xhi[l].yh.next = self.c2_minh.q.val();
            self.xhi[l].sub.next = self.c2_sub[l].q.val();
            self.xhi[l].lo.next = self.c2_lo[l].q.val();
            self.c3_n[l].d.next = self.xhi[l].d.val();
        }
        self.c3_m.d.next = self.c2_m.q.val();
        self.c3_esh.d.next = self.c2_esh.q.val();
        self.c3_e0.d.next = self.c2_e0.q.val();
        self.c3_sz.d.next = self.c2_sz.q.val();

        // C4, C5: the normalised dividend (spec §5.3), (e >= 1 ? n >> (e-1)
        // : 2n) + m, below 2m 2^b, so its low 12 + b bits
        for l in 0..self._lanes {
            self.nn.next = self.c3_n[l].q.val() >> self.c3_esh.q.val();
            if self.c3_e0.q.val() {
                self.nn.next = self.c3_n[l].q.val() << self.k_one_fx.val();
            }
            self.c4_nn[l].d.next = bit_cast::<NW, FX>(self.nn.val() & self.k_rmask.val());
            self.c5_r[l].d.next = (self.c4_nn[l].q.val() + self.c4_m.q.val()) & self.k_rmask_nw.val();
        }
        self.c4_m.d.next = self.c3_m.q.val();
        self.c4_sz.d.next = self.c3_sz.q.val();
        self.c5_m2.d.next = self.c4_m.q.val() << self.k_one_nw.val();
        self.c5_sz.d.next = self.c4_sz.q.val();
        // stochastic (spec §15.3 with s = m 2^e, R = (n >> e) mod m): r s <
        // rem 2^16 iff r m < R 2^16 + ceil(frac), frac = the bits of n below
        // 2^e as a fraction of 2^e times 2^16: C4 n >> e (the dividend,
        // against m, not 2m), frac's integer part (16 bits) and its sticky bit
        for i in 0..self._st {
            for ln in self._lanes..(self._lanes + 1) {
                for l in 0..self._lanes {
                    self.nn.next = self.c3_n[l].q.val() >> self.c3_esh.q.val();
                    self.c4_nn[l].d.next = bit_cast::<NW, FX>(self.nn.val() & self.k_rmask.val());
                    // n < 2^(b + 11 + e): shifted left by 16 - e it stays in FX bits
                    self.nn.next = (self.c3_n[l].q.val() << self.c3_fsl[i].q.val()) >> self.c3_fsr[i].q.val();
                    self.c4_fr[i * ln + l].d.next = self.nn.val().get_bits::<16>(0);
                    self.c4_sk[i * ln + l].d.next = (self.c3_n[l].q.val() & self.c3_em[i].q.val()).any();
                    self.c5_r[l].d.next = self.c4_nn[l].q.val();
                }
            }
            self.c5_m2.d.next = self.c4_m.q.val();
        }

        // restoring steps: step j takes weight 2^(b-1-j) against 2m 2^(b-1-j);
        // the last (weight 1) only compares, its remainder is not needed
        for ln in self._lanes..(self._lanes + 1) {
            for l in 0..self._lanes {
                self.dstep[l].rem.next = self.c5_r[l].q.val();
                self.dstep[l].dsh.next = self.c5_m2.q.val() << self.dsh[0].val();
                self.st_r[l].d.next = self.dstep[l].rem_out.val() & self.k_rmask_nw.val();
                self.st_q[l].d.next = self.k_zero8.val();
                if self.dstep[l].take.val() {
                    self.st_q[l].d.next = self.k_one8.val();
                }
            }
            for j in 1..(self._bits - 1) {
                for l in 0..self._lanes {
                    self.dstep[j * ln + l].rem.next = self.st_r[(j - 1) * ln + l].q.val();
                    self.dstep[j * ln + l].dsh.next = self.st_m2[j - 1].q.val() << self.dsh[j].val();
                    self.st_r[j * ln + l].d.next = self.dstep[j * ln + l].rem_out.val() & self.k_rmask_nw.val();
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val();
                    if self.dstep[j * ln + l].take.val() {
                        self.st_q[j * ln + l].d.next =
                            (self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val()) | self.k_one8.val();
                    }
                }
            }
            for j in (self._bits - 1)..self._bits {
                for l in 0..self._lanes {
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val();
                    if self.st_r[(j - 1) * ln + l].q.val() >= self.st_m2[j - 1].q.val() {
                        self.st_q[j * ln + l].d.next =
                            (self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val()) | self.k_one8.val();
                    }
                }
            }
        }
        self.st_m2[0].d.next = self.c5_m2.q.val();
        for j in 1..(self._bits - 1) {
            self.st_m2[j].d.next = self.st_m2[j - 1].q.val();
        }
        self.st_sz[0].d.next = self.c5_sz.q.val();
        for j in 1..self._bits {
            self.st_sz[j].d.next = self.st_sz[j - 1].q.val();
        }

        // ---------------- hack-quantizer: stochastic compare, sums ----------------
        // frac along C5 and the steps; the last step's remainder R and m
        // beside its quotient q0; the row's LFSR words registered as it
        // enters the last step (spec §15.4: lane l takes the state after
        // 16 (l + 1) steps, the register moves 16 lanes steps per row coded)
        for i in 0..self._st {
            for ln in self._lanes..(self._lanes + 1) {
                for b in self._bits..(self._bits + 1) {
                    for l in 0..self._lanes {
                        // frac at C5 (j = 0) and at each step (j = 1 .. b)
                        self.st_fr[i * (b + 1) * ln + l].d.next = self.c4_fr[i * ln + l].q.val();
                        self.st_sk[i * (b + 1) * ln + l].d.next = self.c4_sk[i * ln + l].q.val();
                        self.sr_rem[i * ln + l].d.next = self.st_r[(b - 2) * ln + l].q.val();
                        if self.st_r[(b - 2) * ln + l].q.val() >= self.st_m2[b - 2].q.val() {
                            self.sr_rem[i * ln + l].d.next = self.st_r[(b - 2) * ln + l].q.val() - self.st_m2[b - 2].q.val();
                        }
                        self.m1_q0[i * ln + l].d.next = self.st_q[(b - 1) * ln + l].q.val();
                        self.m1_q1[i * ln + l].d.next = self.st_q[(b - 1) * ln + l].q.val() + self.k_one8.val();
                    }
                    self.sm_lo[i].d.next = self.st_m2[b - 2].q.val().get_bits::<16>(0) & self.k_hff[i].val();
                    self.sm_hi[i].d.next = self.st_m2[b - 2].q.val().get_bits::<16>(0) >> self.k_h8[i].val();
                    self.m1_sz[i].d.next = self.st_sz[b - 1].q.val();
                }
                for j in 1..(self._bits + 1) {
                    for b in self._bits..(self._bits + 1) {
                        for l in 0..self._lanes {
                            self.st_fr[i * (b + 1) * ln + j * ln + l].d.next =
                                self.st_fr[i * (b + 1) * ln + (j - 1) * ln + l].q.val();
                            self.st_sk[i * (b + 1) * ln + j * ln + l].d.next =
                                self.st_sk[i * (b + 1) * ln + (j - 1) * ln + l].q.val();
                        }
                    }
                }
                self.lfn[i].next = self.k_zero16.val();
                for k in 0..16 {
                    if (self.lfsr[i].q.val() & self.k_la[i * 16 + k].val()).xor() {
                        self.lfn[i].next = self.lfn[i].val() | self.k_bit[i * 16 + k].val();
                    }
                }
                for l in 0..self._lanes {
                    self.wdn[i * ln + l].next = self.k_zero16.val();
                    for k in 0..16 {
                        if (self.lfsr[i].q.val() & self.k_lw[(i * ln + l) * 16 + k].val()).xor() {
                            self.wdn[i * ln + l].next = self.wdn[i * ln + l].val() | self.k_bit[i * 16 + k].val();
                        }
                    }
                    self.wd[i * ln + l].d.next = self.wdn[i * ln + l].val();
                }
                for b in self._bits..(self._bits + 1) {
                    if self.adv.val() & self.sb_v[b + 4].q.val() {
                        self.lfsr[i].en.next = true;
                    }
                }
                self.lfsr[i].d.next = self.lfn[i].val();
                // M1: r m as r m[5:0] + r m[10:6] 2^6 (16x6, 16x5); M2: up
                // when r m < R 2^16 + ceil(frac), compared as its high and
                // low 16 bits (ceil(frac) <= 2^16); 0 when the step is 0
                for l in 0..self._lanes {
                    self.m1_plo[i * ln + l].d.next = self.wd[i * ln + l].q.val() * self.sm_lo[i].q.val();
                    self.m1_phi[i * ln + l].d.next = self.wd[i * ln + l].q.val() * self.sm_hi[i].q.val();
                    self.m1_r[i * ln + l].d.next = self.sr_rem[i * ln + l].q.val().get_bits::<16>(0);
                    for b in self._bits..(self._bits + 1) {
                        self.m1_fr[i * ln + l].d.next = self.st_fr[i * (b + 1) * ln + b * ln + l].q.val();
                        self.m1_sk[i * ln + l].d.next = self.st_sk[i * (b + 1) * ln + b * ln + l].q.val();
                    }
                    self.m2_p[i * ln + l].next =
                        self.m1_plo[i * ln + l].q.val() + (self.m1_phi[i * ln + l].q.val() << self.k_h8[i].val());
                    self.xq[i * ln + l].d.next = self.m1_q0[i * ln + l].q.val();
                    if (self.m2_p[i * ln + l].val().get_bits::<16>(16) < self.m1_r[i * ln + l].q.val())
                        | ((self.m2_p[i * ln + l].val().get_bits::<16>(16) == self.m1_r[i * ln + l].q.val())
                            & ((self.m2_p[i * ln + l].val().get_bits::<16>(0) < self.m1_fr[i * ln + l].q.val())
                                | ((self.m2_p[i * ln + l].val().get_bits::<16>(0) == self.m1_fr[i * ln + l].q.val())
                                    & self.m1_sk[i * ln + l].q.val())))
                    {
                        self.xq[i * ln + l].d.next = self.m1_q1[i * ln + l].q.val();
                    }
                    if self.m1_sz[i].q.val() {
                        self.xq[i * ln + l].d.next = self.k_zero8.val();
                    }
                }
            }
        }
        // sums: the row's final codes (the last step's, or M2's), a tree of
        // adds registered every second level and at the root, the codes
        // delayed beside it
        for i in 0..self._hs {
            for ln in self._lanes..(self._lanes + 1) {
                for b in self._bits..(self._bits + 1) {
                    for l in 0..self._lanes {
                        // qq (the pack's) as the cast's scalar operand
                        self.qq.next = self.st_q[(b - 1) * ln + l].q.val();
                        if self.st_sz[b - 1].q.val() {
                            self.qq.next = self.k_zero8.val();
                        }
                        for j in 0..self._st {
                            self.qq.next = self.xq[j * ln + l].q.val();
                        }
                        self.hq[i * ln + l].next = bit_cast::<32, 8>(self.qq.val());
                    }
                }
                // node n (leaves at ln - 1 + l, root 0), children before parents
                for l in 0..self._lanes {
                    self.sr[ln - 1 + l].d.next = self.hq[i * ln + l].val();
                    self.su[ln - 1 + l].next = self.hq[i * ln + l].val();
                    if self.s_pipe[ln - 1 + l].val() {
                        self.su[ln - 1 + l].next = self.sr[ln - 1 + l].q.val();
                    }
                }
                for j in 0..(self._lanes - 1) {
                    self.sn[ln - 2 - j].next = self.su[2 * ln - 3 - 2 * j].val() + self.su[2 * ln - 2 - 2 * j].val();
                    self.sr[ln - 2 - j].d.next = self.sn[ln - 2 - j].val();
                    self.su[ln - 2 - j].next = self.sn[ln - 2 - j].val();
                    if self.s_pipe[ln - 2 - j].val() {
                        self.su[ln - 2 - j].next = self.sr[ln - 2 - j].q.val();
                    }
                }
                for l in 0..self._lanes {
                    self.xd[i * ln + l].d.next = self.hq[i * ln + l].val();
                }
                for ts in 1..self._ts {
                    for l in 0..self._lanes {
                        self.xd[ts * ln + l].d.next = self.xd[(ts - 1) * ln + l].q.val();
                    }
                }
            }
        }

        // ---------------- pack: row k's codes into the words ----------------
        for t in (self._sb - 1)..self._sb {
            self.qq.next = self.k_zero8.val();
            for w in 0..self._w {
                self.accn[w].next = self.acc[w].q.val();
                if self.sb_k[t].q.val() == self.k_zero8.val() {
                    self.accn[w].next = self.k_zero32.val();
                }
            }
            for ln in self._lanes..(self._lanes + 1) {
                for c in self._c..(self._c + 1) {
                    for b in self._bits..(self._bits + 1) {
                        for k in 0..self._nb {
                            if self.sb_k[t].q.val() == self.kc[k].val() {
                                for l in 0..self._lanes {
                                    self.qq.next = self.st_q[(b - 1) * ln + l].q.val();
                                    if self.st_sz[b - 1].q.val() {
                                        self.qq.next = self.k_zero8.val();
                                    }
                                    // hack: the codes come from the sum tree's delay line
                                    for _i in 0..self._hs {
                                        self.qq.next = self.k_zero8.val();
                                    }
                                    self.accn[(k * ln + l) / c].next = self.accn[(k * ln + l) / c].val()
                                        | (bit_cast::<32, 8>(self.qq.val()) << self.shj[k * ln + l].val());
                                    for _i in 0..self._hs {
                                        for ts in self._ts..(self._ts + 1) {
                                            self.accn[(k * ln + l) / c].next = self.accn[(k * ln + l) / c].val()
                                                | (self.xd[(ts - 1) * ln + l].q.val() << self.shj[k * ln + l].val());
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if self.adv.val() & self.sb_v[t].q.val() {
                for w in 0..self._w {
                    self.acc[w].en.next = true;
                }
                self.o_meta.en.next = true;
                self.o_last.en.next = true;
                self.o_nf.en.next = true;
                for i in 0..self._hs {
                    self.sacc[i].en.next = true;
                }
            }
            // the partition's code sum, beside its words
            for i in 0..self._hs {
                self.sacc[i].d.next = self.sacc[i].q.val() + self.su[0].val();
                if self.sb_k[t].q.val() == self.k_zero8.val() {
                    self.sacc[i].d.next = self.su[0].val();
                }
                self.out_sum[i].next = self.sacc[i].q.val();
            }
            for w in 0..self._w {
                self.acc[w].d.next = self.accn[w].val();
                self.out_words[w].next = self.acc[w].q.val();
            }
            self.o_v.d.next = self.sb_v[t].q.val() & self.sb_rl[t].q.val();
            self.o_meta.d.next = self.sb_meta[t].q.val();
            self.o_last.d.next = self.sb_tl[t].q.val();
            self.o_nf.d.next = self.sb_nf[t].q.val();
        }
        self.out_valid.next = self.o_v.q.val();
        self.out_meta.next = self.o_meta.q.val();
        self.out_last.next = self.o_last.q.val();
        self.out_nonfinite.next = self.o_nf.q.val();
    }
}
