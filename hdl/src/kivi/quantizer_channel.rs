//! `kivi-quantizer`, `axis = channel` (K): a block of `G` tokens streamed
//! twice, `lanes` FP16 elements per beat; one group per channel, its codes
//! in token order. Out: the block's metadata words, then its packed code
//! words, `lanes` channels per beat.
//!
//! Paper: KIVI (ICML 2024) §3, per-channel K quantization over groups of
//! tokens. Spec: docs/spec.md §13.2 (numbers), §13.3 (axis channel, two
//! passes), §13.4, §13.5, §13.14.3 (ports, beats, stages).
//!
//! - Skid: a two-entry input buffer, so that `in_ready` is a register.
//! - P0 (pass 1): each channel's running minimum and maximum (order keys,
//!   spec §2.2.2) is read, merged and written back in the `minmax` memory,
//!   one row of `lanes` channels per beat. The last token's merged extremes
//!   go to the step pipeline instead.
//! - Step (never stalls): F1 the extremes as magnitude and sign, F2-F3
//!   `D` in two halves (`split_diff`), then one `GroupStep` per lane; the
//!   (min, step) words land in the `meta` memory. Pass 2 reads them only
//!   after `delay` stages, which is what makes a row of the first pass-2
//!   token see its own block's words even when a token is a single beat.
//! - Code (pass 2): the `meta` row, then per lane C1, C2-C3 `n` in two
//!   halves, C4 the dividend and `b` restoring steps as in the token axis;
//!   each code is ORed into its channel's partial word in the `words`
//!   memory, and a row of complete words is an output beat. The first
//!   pass-2 token also sends its `meta` row out.
//!
//! Every stage but the step pipeline loads on `adv = !out_valid |
//! out_ready`. A memory read whose address is written in the same cycle
//! (a token of one beat) takes the written word from a register instead.

use crate::kivi::quantizer::{lfsr_power, HackOpts};
use crate::kivi::split_diff::{DiffHi, DiffLo, FH};
use crate::oaken::classify::Sanitize;
use crate::oaken::group_step::GroupStep;
use crate::prim::div_round::{DivStep, NW};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Address and data bits of the memory wrappers (`lanes <= 64` words of 32).
const RA: usize = 16;
const RW: usize = 2048;

// Sideband word of a beat (one `Bits<64>` per stage).
const SB_V: u64 = 1 << 0; // a beat
const SB_T0: u64 = 1 << 1; // pass 2, token 0: sends the meta row
const SB_WF: u64 = 1 << 2; // pass 2, its code opens the words
const SB_WD: u64 = 1 << 3; // pass 2, its code completes the words
const SB_BL: u64 = 1 << 4; // the block's last beat
const SB_NF: u64 = 1 << 5; // the block's nonfinite flag
const SB_BY: u64 = 1 << 6; // the memory word read for it is in a register
const SB_P1: u64 = 1 << 7; // pass 1
const SB_FIRST: u64 = 1 << 8; // pass 1, token 0
const SB_P1L: u64 = 1 << 9; // pass 1, last token
const SB_NFS: u64 = 1 << 10; // pass 1, first beat
const SB_P1E: u64 = 1 << 11; // pass 1, last beat
// bits 16..23: the code's shift in its word; 24..31: word index; 32..47: row

#[derive(LogicBlock)]
pub struct KiviChannelQuantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: the block starts over at pass 1, token 0; the pipeline empty
    pub reset: Signal<In, Bit>,
    /// element beat valid
    pub in_valid: Signal<In, Bit>,
    /// beat accepted when in_valid and in_ready (a register: low while the two-entry input buffer is full)
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements, lane l at [16l+15:16l]: channels k*lanes .. k*lanes + lanes - 1 of a token at its beat k; a block is its G tokens twice
    pub in_x: Vec<Signal<In, Bits<16>>>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// lane l at [32l+31:32l]: channel k*lanes + l's metadata word (out_meta) or its packed code word out_word (spec §13.4, §13.5)
    pub out_data: Vec<Signal<Out, Bits<32>>>,
    /// the beat carries metadata words ({meta_latency} cycles after its pass-2 token-0 input beat)
    pub out_meta: Signal<Out, Bit>,
    /// code beats: the index of the words in their channels' groups ({latency} cycles after the input beat that completes them)
    pub out_word: Signal<Out, Bits<8>>,
    /// the block's last beat
    pub out_last: Signal<Out, Bit>,
    /// with out_last: a NaN or infinity was replaced in the block (0 on other beats)
    pub out_nonfinite: Signal<Out, Bit>,
    // ---- skid and counters ----
    hv: Reg<Bit>,
    hx: Vec<Reg<Bits<16>>>,
    sv: Reg<Bit>,
    sx: Vec<Reg<Bits<16>>>,
    adv: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    accept: Signal<Local, Bit>,
    ck: Reg<Bits<16>>,
    cj: Reg<Bits<8>>,
    cp2: Reg<Bit>,
    csh: Reg<Bits<8>>,
    cwi: Reg<Bits<8>>,
    klast: Signal<Local, Bit>,
    jlast: Signal<Local, Bit>,
    shlast: Signal<Local, Bit>,
    nsb: Signal<Local, Bits<64>>,
    // ---- P0: pass 1 extremes ----
    p0_x: Vec<Reg<Bits<16>>>,
    p0_sb: Reg<Bits<64>>,
    san: Vec<Sanitize>,
    key: Vec<Signal<Local, Bits<16>>>,
    pw: Signal<Local, Bits<RW>>,
    pword: Signal<Local, Bits<32>>,
    nmin: Vec<Signal<Local, Bits<16>>>,
    nmax: Vec<Signal<Local, Bits<16>>>,
    aw: Signal<Local, Bits<RW>>,
    lastw: Reg<Bits<RW>>,
    anynf: Signal<Local, Bit>,
    nfn: Signal<Local, Bit>,
    nfacc: Reg<Bit>,
    nfblk: Reg<Bit>,
    mm_ram: DpRam<RA, RW>,
    dsb: Signal<Local, Bits<64>>,
    // ---- step (free-running) ----
    s0_v: Reg<Bit>,
    s0_k: Reg<Bits<16>>,
    s0_min: Vec<Reg<Bits<16>>>,
    s0_max: Vec<Reg<Bits<16>>>,
    fmin: Vec<Signal<Local, Bits<16>>>,
    fmax: Vec<Signal<Local, Bits<16>>>,
    cvt_fmin: Vec<Fp16ToUnits>,
    cvt_fmax: Vec<Fp16ToUnits>,
    f1_v: Reg<Bit>,
    f1_k: Reg<Bits<16>>,
    // F1: magnitudes and the split_diff flags; F2: D's low half; F3: D
    f1_minmag: Vec<Reg<Bits<FX>>>,
    f1_maxmag: Vec<Reg<Bits<FX>>>,
    f1_swap: Vec<Reg<Bit>>,
    f1_sub: Vec<Reg<Bit>>,
    f1_min16: Vec<Reg<Bits<16>>>,
    flo: Vec<DiffLo>,
    fhi: Vec<DiffHi>,
    f2_v: Reg<Bit>,
    f2_k: Reg<Bits<16>>,
    f2_lo: Vec<Reg<Bits<22>>>,
    f2_maxh: Vec<Reg<Bits<FH>>>,
    f2_minh: Vec<Reg<Bits<FH>>>,
    f2_swap: Vec<Reg<Bit>>,
    f2_sub: Vec<Reg<Bit>>,
    f2_min16: Vec<Reg<Bits<16>>>,
    f3_v: Reg<Bit>,
    f3_k: Reg<Bits<16>>,
    f3_d: Vec<Reg<Bits<FX>>>,
    f3_min16: Vec<Reg<Bits<16>>>,
    gstep: Vec<GroupStep>,
    g_v: Vec<Reg<Bit>>,
    g_k: Vec<Reg<Bits<16>>>,
    mw: Signal<Local, Bits<RW>>,
    meta_ram: DpRam<RA, RW>,
    // ---- code: delay (the last stage, R, has its meta row) ----
    dl_y: Vec<Reg<Bits<16>>>,
    dl_sb: Vec<Reg<Bits<64>>>,
    cvt_x: Vec<Fp16ToUnits>,
    cvt_min: Vec<Fp16ToUnits>,
    mword: Signal<Local, Bits<32>>,
    mant: Signal<Local, Bits<10>>,
    cex: Signal<Local, Bits<5>>,
    esh5: Signal<Local, Bits<5>>,
    mrow: Signal<Local, Bit>,
    // ---- C1 .. C4 ----
    c1_xmag: Vec<Reg<Bits<FX>>>,
    c1_minmag: Vec<Reg<Bits<FX>>>,
    c1_swap: Vec<Reg<Bit>>,
    c1_sub: Vec<Reg<Bit>>,
    c1_m: Vec<Reg<Bits<NW>>>,
    c1_esh: Vec<Reg<Bits<8>>>,
    c1_e0: Vec<Reg<Bit>>,
    c1_sz: Vec<Reg<Bit>>,
    c1_sb: Reg<Bits<64>>,
    xlo: Vec<DiffLo>,
    xhi: Vec<DiffHi>,
    c2_lo: Vec<Reg<Bits<22>>>,
    c2_xh: Vec<Reg<Bits<FH>>>,
    c2_mh: Vec<Reg<Bits<FH>>>,
    c2_swap: Vec<Reg<Bit>>,
    c2_sub: Vec<Reg<Bit>>,
    c2_m: Vec<Reg<Bits<NW>>>,
    c2_esh: Vec<Reg<Bits<8>>>,
    c2_e0: Vec<Reg<Bit>>,
    c2_sz: Vec<Reg<Bit>>,
    c2_sb: Reg<Bits<64>>,
    c3_n: Vec<Reg<Bits<FX>>>,
    c3_m: Vec<Reg<Bits<NW>>>,
    c3_esh: Vec<Reg<Bits<8>>>,
    c3_e0: Vec<Reg<Bit>>,
    c3_sz: Vec<Reg<Bit>>,
    c3_sb: Reg<Bits<64>>,
    nn: Signal<Local, Bits<FX>>,
    c4_r: Vec<Reg<Bits<NW>>>,
    c4_m2: Vec<Reg<Bits<NW>>>,
    c4_sz: Vec<Reg<Bit>>,
    c4_sb: Reg<Bits<64>>,
    // ---- restoring steps: step j of lane l at j * lanes + l ----
    dstep: Vec<DivStep<NW>>,
    st_r: Vec<Reg<Bits<NW>>>,
    st_q: Vec<Reg<Bits<8>>>,
    st_m2: Vec<Reg<Bits<NW>>>,
    st_sz: Vec<Reg<Bit>>,
    st_sb: Vec<Reg<Bits<64>>>,
    // ---- pack ----
    wd_ram: DpRam<RA, RW>,
    lastwb: Reg<Bits<RW>>,
    bsb: Signal<Local, Bits<64>>,
    prevw: Signal<Local, Bits<32>>,
    ta: Signal<Local, Bits<16>>,
    tb: Signal<Local, Bits<16>>,
    tw: Signal<Local, Bits<32>>,
    shv: Signal<Local, Bits<8>>,
    qq: Signal<Local, Bits<8>>,
    nw: Vec<Signal<Local, Bits<32>>>,
    bw: Signal<Local, Bits<RW>>,
    wrow: Signal<Local, Bit>,
    o_v: Reg<Bit>,
    o_data: Vec<Reg<Bits<32>>>,
    o_meta: Reg<Bit>,
    o_word: Reg<Bits<8>>,
    o_last: Reg<Bit>,
    o_nf: Reg<Bit>,
    // ---- constants ----
    lane32: Vec<Constant<Bits<32>>>,
    lane32w: Vec<Constant<Bits<RW>>>,
    lane48w: Vec<Constant<Bits<RW>>>,
    dsh: Vec<Constant<Bits<NW>>>,
    f_v: Constant<Bits<64>>,
    f_t0: Constant<Bits<64>>,
    f_wf: Constant<Bits<64>>,
    f_wd: Constant<Bits<64>>,
    f_bl: Constant<Bits<64>>,
    f_nf: Constant<Bits<64>>,
    f_by: Constant<Bits<64>>,
    f_p1: Constant<Bits<64>>,
    f_first: Constant<Bits<64>>,
    f_p1l: Constant<Bits<64>>,
    f_nfs: Constant<Bits<64>>,
    f_p1e: Constant<Bits<64>>,
    k_keep: Constant<Bits<64>>,
    k_s16: Constant<Bits<64>>,
    k_s24: Constant<Bits<64>>,
    k_s32: Constant<Bits<64>>,
    k_klast: Constant<Bits<16>>,
    k_jlast: Constant<Bits<8>>,
    k_shlast: Constant<Bits<8>>,
    k_bits8: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
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
    k_nwmask: Constant<Bits<FX>>,
    k_one_q: Constant<Bits<8>>,
    k_fh32: Constant<Bits<32>>,
    k_zero_w: Constant<Bits<RW>>,
    // ---- hack-quantizer, axis channel (spec §15.16.6); every Vec below
    // is empty in KIVI, so its Verilog is unchanged. Sums (`_hs` = 1):
    // each channel's running code sum beside its partial word in the
    // `words` row, out with word W - 1. Stochastic (`_st` = 1): C4 divides
    // 2 (n >> e) by 2m and takes the 16 bits of n below 2^e (`c4_fr`) and
    // a sticky bit; the last step keeps its remainder; the LFSR words are
    // registered as the row enters the last step; M1 r m in two 16x8
    // pieces, M2 the compare of spec §15.3. ----
    /// hack-quantizer only (lanes elements; none in KIVI): on code beats of word W - 1, lane l's partition code sum; 0 on other beats
    pub out_sum: Vec<Signal<Out, Bits<16>>>,
    hs_ps: Vec<Signal<Local, Bits<16>>>,
    hs_ns: Vec<Signal<Local, Bits<16>>>,
    o_sum: Vec<Reg<Bits<16>>>,
    k_sl: Vec<Constant<Bits<32>>>,
    k_slw: Vec<Constant<Bits<RW>>>,
    k_wl: Vec<Constant<Bits<8>>>,
    se: Vec<Signal<Local, Bits<8>>>,
    fsl: Vec<Signal<Local, Bits<8>>>,
    fsr: Vec<Signal<Local, Bits<8>>>,
    em: Vec<Signal<Local, Bits<FX>>>,
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
    m2_p: Vec<Signal<Local, Bits<32>>>,
    xq: Vec<Reg<Bits<8>>>,
    k_lw: Vec<Constant<Bits<16>>>,
    k_la: Vec<Constant<Bits<16>>>,
    k_bit: Vec<Constant<Bits<16>>>,
    k_hx: Vec<Constant<Bits<FX>>>,
    k_h16: Vec<Constant<Bits<8>>>,
    k_h8: Vec<Constant<Bits<32>>>,
    k_hff: Vec<Constant<Bits<16>>>,
    k_n1: Vec<Constant<Bits<FX>>>,
    _lanes: usize,
    _bits: usize,
    _d: usize,
    _lat: usize,
    _hs: usize,
    _st: usize,
    _pk: usize,
}

/// The unit's memories, each `rows = vector / lanes` words of `32 lanes`
/// bits: per channel its running (min, max) keys, its (min, step) words,
/// its partial code word.
pub fn memories(module: &str, vector: usize, lanes: usize) -> Vec<MemInfo> {
    memories_with(module, vector, lanes, false)
}

/// `memories`; with `sums` (hack-quantizer) each `words` row also holds
/// the channels' running code sums, 16 bits each, above the words.
pub fn memories_with(module: &str, vector: usize, lanes: usize, sums: bool) -> Vec<MemInfo> {
    ["minmax", "meta", "words"]
        .iter()
        .map(|n| {
            let width = if sums && *n == "words" { 48 * lanes } else { 32 * lanes };
            MemInfo { module: format!("{module}_{n}_ram"), name: n.to_string(), depth: vector / lanes, width }
        })
        .collect()
}

impl KiviChannelQuantizer {
    /// Delay stages between P0 and the `meta` read: the step pipeline
    /// writes a row `5 + GroupStep::LATENCY` cycles after its beat leaves
    /// P0, and the same row of the first pass-2 token leaves P0 at least
    /// `rows` cycles after it.
    pub fn delay(vector: usize, lanes: usize) -> usize {
        (5 + GroupStep::LATENCY).saturating_sub(vector / lanes).max(1)
    }

    /// Cycles from the input beat that completes a row of code words to
    /// that output beat, at full rate with the output ready: skid, P0, the
    /// delay stages, R, C1-C4, `b` steps, the output register.
    pub fn latency(vector: usize, bits: usize, lanes: usize) -> usize {
        Self::delay(vector, lanes) + bits + 8
    }

    /// `latency` of the `hack` engine: M1, M2 when stochastic.
    pub fn hack_latency(vector: usize, bits: usize, lanes: usize, stochastic: bool) -> usize {
        Self::latency(vector, bits, lanes) + 2 * stochastic as usize
    }

    /// The same for a metadata beat and its pass-2 token-0 input beat.
    pub fn meta_latency(vector: usize, lanes: usize) -> usize {
        Self::delay(vector, lanes) + 4
    }

    /// Channels of `vector` (heads x head_dim) in groups of `group` tokens,
    /// `bits`-bit codes, `lanes` channels per beat; `module` names the
    /// memories (`memories`).
    pub fn new(module: &str, vector: usize, group: usize, bits: usize, lanes: usize) -> Self {
        Self::build(module, vector, group, bits, lanes, None)
    }

    /// The engine as `hack-quantizer`'s core, axis channel (V): partitions
    /// of `group` tokens of each of `vector` channels, with code sums and
    /// the rounding of `opts` (spec §15.16.6).
    pub fn hack(module: &str, vector: usize, group: usize, bits: usize, lanes: usize, opts: HackOpts) -> Self {
        Self::build(module, vector, group, bits, lanes, Some(opts))
    }

    fn build(module: &str, vector: usize, group: usize, bits: usize, lanes: usize, hack: Option<HackOpts>) -> Self {
        assert!(vector % lanes == 0 && (16..=128).contains(&group) && [2, 3, 4, 8].contains(&bits));
        assert!(lanes <= 64 && vector / lanes <= 1 << 13);
        let hs = hack.is_some() as usize;
        let st = hack.is_some_and(|h| h.stochastic) as usize;
        let seed = hack.map_or(1, |h| h.seed);
        // the sums sit above the words in a row of at most RW bits
        assert!(hs == 0 || lanes <= 32);
        let c = 32 / bits;
        let d = Self::delay(vector, lanes);
        // the next block's meta writes come after this block's reads, and
        // a meta beat (R) never meets a code beat (pack) in one cycle
        assert!(d < group && 4 + bits + 2 * st < group);
        let rows = vector / lanes;
        let ones = |n: usize| (1u64 << n) - 1;
        fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let mem = memories_with(module, vector, lanes, hs == 1);
        let w = group.div_ceil(c);
        let lw: Vec<u64> = (0..st * lanes).flat_map(|l| lfsr_power(16 * (l + 1))).map(u64::from).collect();
        let la: Vec<u64> = (0..st).flat_map(|_| lfsr_power(16 * lanes)).map(u64::from).collect();
        let ram = |i: usize| DpRam::new(&mem[i].module, &mem[i].name, mem[i].depth, mem[i].width);
        let lat = GroupStep::LATENCY;
        KiviChannelQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_x: sigs(lanes),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: sigs(lanes),
            out_meta: Default::default(),
            out_word: Default::default(),
            out_last: Default::default(),
            out_nonfinite: Default::default(),
            hv: Reg::default(),
            hx: regs(lanes),
            sv: Reg::default(),
            sx: regs(lanes),
            adv: Default::default(),
            pop: Default::default(),
            accept: Default::default(),
            ck: Reg::default(),
            cj: Reg::default(),
            cp2: Reg::default(),
            csh: Reg::default(),
            cwi: Reg::default(),
            klast: Default::default(),
            jlast: Default::default(),
            shlast: Default::default(),
            nsb: Default::default(),
            p0_x: regs(lanes),
            p0_sb: Reg::default(),
            san: (0..lanes).map(|_| Sanitize::default()).collect(),
            key: sigs(lanes),
            pw: Default::default(),
            pword: Default::default(),
            nmin: sigs(lanes),
            nmax: sigs(lanes),
            aw: Default::default(),
            lastw: Reg::default(),
            anynf: Default::default(),
            nfn: Default::default(),
            nfacc: Reg::default(),
            nfblk: Reg::default(),
            mm_ram: ram(0),
            dsb: Default::default(),
            s0_v: Reg::default(),
            s0_k: Reg::default(),
            s0_min: regs(lanes),
            s0_max: regs(lanes),
            fmin: sigs(lanes),
            fmax: sigs(lanes),
            cvt_fmin: (0..lanes).map(|_| Fp16ToUnits::default()).collect(),
            cvt_fmax: (0..lanes).map(|_| Fp16ToUnits::default()).collect(),
            f1_v: Reg::default(),
            f1_k: Reg::default(),
            f1_minmag: regs(lanes),
            f1_maxmag: regs(lanes),
            f1_swap: regs(lanes),
            f1_sub: regs(lanes),
            f1_min16: regs(lanes),
            flo: (0..lanes).map(|_| DiffLo::new()).collect(),
            fhi: (0..lanes).map(|_| DiffHi::new()).collect(),
            f2_v: Reg::default(),
            f2_k: Reg::default(),
            f2_lo: regs(lanes),
            f2_maxh: regs(lanes),
            f2_minh: regs(lanes),
            f2_swap: regs(lanes),
            f2_sub: regs(lanes),
            f2_min16: regs(lanes),
            f3_v: Reg::default(),
            f3_k: Reg::default(),
            f3_d: regs(lanes),
            f3_min16: regs(lanes),
            gstep: (0..lanes).map(|_| GroupStep::new(bits)).collect(),
            g_v: regs(lat),
            g_k: regs(lat),
            mw: Default::default(),
            meta_ram: ram(1),
            dl_y: regs((d + 1) * lanes),
            dl_sb: regs(d + 1),
            cvt_x: (0..lanes).map(|_| Fp16ToUnits::default()).collect(),
            cvt_min: (0..lanes).map(|_| Fp16ToUnits::default()).collect(),
            mword: Default::default(),
            mant: Default::default(),
            cex: Default::default(),
            esh5: Default::default(),
            mrow: Default::default(),
            c1_xmag: regs(lanes),
            c1_minmag: regs(lanes),
            c1_swap: regs(lanes),
            c1_sub: regs(lanes),
            c1_m: regs(lanes),
            c1_esh: regs(lanes),
            c1_e0: regs(lanes),
            c1_sz: regs(lanes),
            c1_sb: Reg::default(),
            xlo: (0..lanes).map(|_| DiffLo::new()).collect(),
            xhi: (0..lanes).map(|_| DiffHi::new()).collect(),
            c2_lo: regs(lanes),
            c2_xh: regs(lanes),
            c2_mh: regs(lanes),
            c2_swap: regs(lanes),
            c2_sub: regs(lanes),
            c2_m: regs(lanes),
            c2_esh: regs(lanes),
            c2_e0: regs(lanes),
            c2_sz: regs(lanes),
            c2_sb: Reg::default(),
            c3_n: regs(lanes),
            c3_m: regs(lanes),
            c3_esh: regs(lanes),
            c3_e0: regs(lanes),
            c3_sz: regs(lanes),
            c3_sb: Reg::default(),
            nn: Default::default(),
            c4_r: regs(lanes),
            c4_m2: regs(lanes),
            c4_sz: regs(lanes),
            c4_sb: Reg::default(),
            dstep: (0..(bits - 1) * lanes).map(|_| DivStep::default()).collect(),
            st_r: regs((bits - 1) * lanes),
            st_q: regs(bits * lanes),
            st_m2: regs((bits - 1) * lanes),
            st_sz: regs(bits * lanes),
            st_sb: regs(bits + 2 * st),
            wd_ram: ram(2),
            lastwb: Reg::default(),
            bsb: Default::default(),
            prevw: Default::default(),
            ta: Default::default(),
            tb: Default::default(),
            tw: Default::default(),
            shv: Default::default(),
            qq: Default::default(),
            nw: sigs(lanes),
            bw: Default::default(),
            wrow: Default::default(),
            o_v: Reg::default(),
            o_data: regs(lanes),
            o_meta: Reg::default(),
            o_word: Reg::default(),
            o_last: Reg::default(),
            o_nf: Reg::default(),
            lane32: consts((0..lanes).map(|l| 32 * l as u64)),
            lane32w: consts((0..lanes).map(|l| 32 * l as u64)),
            lane48w: consts((0..lanes).map(|l| 32 * l as u64 + 16)),
            // step j compares against 2m * 2^(b-1-j)
            dsh: consts((0..bits - 1).map(|j| (bits - 1 - j) as u64)),
            f_v: k(SB_V),
            f_t0: k(SB_T0),
            f_wf: k(SB_WF),
            f_wd: k(SB_WD),
            f_bl: k(SB_BL),
            f_nf: k(SB_NF),
            f_by: k(SB_BY),
            f_p1: k(SB_P1),
            f_first: k(SB_FIRST),
            f_p1l: k(SB_P1L),
            f_nfs: k(SB_NFS),
            f_p1e: k(SB_P1E),
            k_keep: k(!(SB_V | SB_NF | SB_BY)),
            k_s16: k(16),
            k_s24: k(24),
            k_s32: k(32),
            k_klast: k((rows - 1) as u64),
            k_jlast: k((group - 1) as u64),
            k_shlast: k((bits * (c - 1)) as u64),
            k_bits8: k(bits as u64),
            k_one8: k(1),
            k_zero8: k(0),
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
            k_nwmask: k(ones(NW)),
            k_one_q: k(1),
            k_fh32: k(FH as u64),
            k_zero_w: k(0),
            out_sum: sigs(hs * lanes),
            hs_ps: sigs(hs * lanes),
            hs_ns: sigs(hs * lanes),
            o_sum: regs(hs * lanes),
            k_sl: consts((0..hs * lanes).map(|l| (32 * lanes + 16 * l) as u64)),
            k_slw: consts((0..hs * lanes).map(|l| (32 * lanes + 16 * l) as u64)),
            k_wl: consts((0..hs).map(|_| (w - 1) as u64)),
            se: sigs(st * lanes),
            fsl: sigs(st * lanes),
            fsr: sigs(st * lanes),
            em: sigs(st * lanes),
            c4_fr: regs(st * lanes),
            c4_sk: regs(st * lanes),
            st_fr: regs(st * bits * lanes),
            st_sk: regs(st * bits * lanes),
            sr_rem: regs(st * lanes),
            sm_lo: regs(st * lanes),
            sm_hi: regs(st * lanes),
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
            m1_sz: regs(st * lanes),
            m2_p: sigs(st * lanes),
            xq: regs(st * lanes),
            k_lw: consts(lw),
            k_la: consts(la),
            k_bit: consts((0..st * 16).map(|i| 1u64 << (i % 16))),
            k_hx: consts((0..st).map(|_| ones(FX))),
            k_h16: consts((0..st).map(|_| 16)),
            k_h8: consts((0..st).map(|_| 8)),
            k_hff: consts((0..st).map(|_| 0xFF)),
            k_n1: consts((0..st).map(|_| ones(NW) & !1)),
            _lanes: lanes,
            _bits: bits,
            _d: d,
            _lat: lat,
            _hs: hs,
            _st: st,
            _pk: bits - 1 + 2 * st,
        }
    }
}

impl Logic for KiviChannelQuantizer {
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- register wiring ----------------
        clock!(self, clock, hv, sv, ck, cj, cp2, csh, cwi, p0_sb, lastw, nfacc, nfblk);
        clock!(self, clock, s0_v, s0_k, f1_v, f1_k, f2_v, f2_k, f3_v, f3_k, c1_sb, c2_sb, c3_sb, c4_sb, lastwb);
        clock!(self, clock, o_v, o_meta, o_word, o_last, o_nf);
        self.adv.next = !self.o_v.q.val() | self.out_ready.val();
        self.hv.reset.next = self.reset.val();
        self.sv.reset.next = self.reset.val();
        self.ck.reset.next = self.reset.val();
        self.cj.reset.next = self.reset.val();
        self.cp2.reset.next = self.reset.val();
        self.csh.reset.next = self.reset.val();
        self.cwi.reset.next = self.reset.val();
        self.nfacc.reset.next = self.reset.val();
        self.nfblk.reset.next = self.reset.val();
        self.s0_v.reset.next = self.reset.val();
        self.s0_k.reset.next = self.reset.val();
        self.f1_v.reset.next = self.reset.val();
        self.f1_k.reset.next = self.reset.val();
        self.f2_v.reset.next = self.reset.val();
        self.f2_k.reset.next = self.reset.val();
        self.f3_v.reset.next = self.reset.val();
        self.f3_k.reset.next = self.reset.val();
        self.f3_v.en.next = true;
        self.f3_k.en.next = true;
        self.c3_sb.reset.next = self.reset.val();
        self.c3_sb.en.next = self.adv.val();
        self.p0_sb.reset.next = self.reset.val();
        self.lastw.reset.next = self.reset.val();
        self.c1_sb.reset.next = self.reset.val();
        self.c2_sb.reset.next = self.reset.val();
        self.c4_sb.reset.next = self.reset.val();
        self.lastwb.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_meta.reset.next = self.reset.val();
        self.o_word.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_nf.reset.next = self.reset.val();
        // hold unless loaded: skid, counters, flags; free-running: step
        self.hv.en.next = true;
        self.sv.en.next = true;
        self.ck.en.next = true;
        self.cj.en.next = true;
        self.cp2.en.next = true;
        self.csh.en.next = true;
        self.cwi.en.next = true;
        self.nfacc.en.next = true;
        self.nfblk.en.next = true;
        self.s0_v.en.next = true;
        self.s0_k.en.next = true;
        self.f1_v.en.next = true;
        self.f1_k.en.next = true;
        self.f2_v.en.next = true;
        self.f2_k.en.next = true;
        self.hv.d.next = self.hv.q.val();
        self.sv.d.next = self.sv.q.val();
        self.ck.d.next = self.ck.q.val();
        self.cj.d.next = self.cj.q.val();
        self.cp2.d.next = self.cp2.q.val();
        self.csh.d.next = self.csh.q.val();
        self.cwi.d.next = self.cwi.q.val();
        self.nfacc.d.next = self.nfacc.q.val();
        self.nfblk.d.next = self.nfblk.q.val();
        // code pipeline: loads on adv
        self.p0_sb.en.next = self.adv.val();
        self.lastw.en.next = self.adv.val();
        self.c1_sb.en.next = self.adv.val();
        self.c2_sb.en.next = self.adv.val();
        self.c4_sb.en.next = self.adv.val();
        self.lastwb.en.next = self.adv.val();
        self.o_v.en.next = self.adv.val();
        self.o_meta.en.next = self.adv.val();
        self.o_word.en.next = self.adv.val();
        self.o_last.en.next = self.adv.val();
        self.o_nf.en.next = self.adv.val();
        for l in 0..self._lanes {
            self.hx[l].clock.next = self.clock.val();
            self.hx[l].reset.next = self.reset.val();
            self.hx[l].en.next = false;
            self.hx[l].d.next = self.in_x[l].val();
            self.sx[l].clock.next = self.clock.val();
            self.sx[l].reset.next = self.reset.val();
            self.sx[l].en.next = false;
            self.sx[l].d.next = self.in_x[l].val();
            self.p0_x[l].clock.next = self.clock.val();
            self.p0_x[l].reset.next = self.reset.val();
            self.p0_x[l].en.next = self.adv.val();
            self.s0_min[l].clock.next = self.clock.val();
            self.s0_min[l].reset.next = self.reset.val();
            self.s0_min[l].en.next = true;
            self.s0_max[l].clock.next = self.clock.val();
            self.s0_max[l].reset.next = self.reset.val();
            self.s0_max[l].en.next = true;
            self.f1_minmag[l].clock.next = self.clock.val();
            self.f1_minmag[l].reset.next = self.reset.val();
            self.f1_minmag[l].en.next = true;
            self.f1_maxmag[l].clock.next = self.clock.val();
            self.f1_maxmag[l].reset.next = self.reset.val();
            self.f1_maxmag[l].en.next = true;
            self.f1_min16[l].clock.next = self.clock.val();
            self.f1_min16[l].reset.next = self.reset.val();
            self.f1_min16[l].en.next = true;
            self.f2_min16[l].clock.next = self.clock.val();
            self.f2_min16[l].reset.next = self.reset.val();
            self.f2_min16[l].en.next = true;
            self.gstep[l].clock.next = self.clock.val();
            self.gstep[l].reset.next = self.reset.val();
            self.c1_xmag[l].clock.next = self.clock.val();
            self.c1_xmag[l].reset.next = self.reset.val();
            self.c1_xmag[l].en.next = self.adv.val();
            self.c1_minmag[l].clock.next = self.clock.val();
            self.c1_minmag[l].reset.next = self.reset.val();
            self.c1_minmag[l].en.next = self.adv.val();
            self.c1_m[l].clock.next = self.clock.val();
            self.c1_m[l].reset.next = self.reset.val();
            self.c1_m[l].en.next = self.adv.val();
            self.c1_esh[l].clock.next = self.clock.val();
            self.c1_esh[l].reset.next = self.reset.val();
            self.c1_esh[l].en.next = self.adv.val();
            self.c1_e0[l].clock.next = self.clock.val();
            self.c1_e0[l].reset.next = self.reset.val();
            self.c1_e0[l].en.next = self.adv.val();
            self.c1_sz[l].clock.next = self.clock.val();
            self.c1_sz[l].reset.next = self.reset.val();
            self.c1_sz[l].en.next = self.adv.val();
            self.c2_m[l].clock.next = self.clock.val();
            self.c2_m[l].reset.next = self.reset.val();
            self.c2_m[l].en.next = self.adv.val();
            self.c2_esh[l].clock.next = self.clock.val();
            self.c2_esh[l].reset.next = self.reset.val();
            self.c2_esh[l].en.next = self.adv.val();
            self.c2_e0[l].clock.next = self.clock.val();
            self.c2_e0[l].reset.next = self.reset.val();
            self.c2_e0[l].en.next = self.adv.val();
            self.c2_sz[l].clock.next = self.clock.val();
            self.c2_sz[l].reset.next = self.reset.val();
            self.c2_sz[l].en.next = self.adv.val();
            self.c4_r[l].clock.next = self.clock.val();
            self.c4_r[l].reset.next = self.reset.val();
            self.c4_r[l].en.next = self.adv.val();
            self.c4_m2[l].clock.next = self.clock.val();
            self.c4_m2[l].reset.next = self.reset.val();
            self.c4_m2[l].en.next = self.adv.val();
            self.c4_sz[l].clock.next = self.clock.val();
            self.c4_sz[l].reset.next = self.reset.val();
            self.c4_sz[l].en.next = self.adv.val();
            self.o_data[l].clock.next = self.clock.val();
            self.o_data[l].reset.next = self.reset.val();
            self.o_data[l].en.next = self.adv.val();
        }
        for l in 0..self._lanes {
            self.f1_swap[l].clock.next = self.clock.val();
            self.f1_swap[l].reset.next = self.reset.val();
            self.f1_swap[l].en.next = true;
            self.f1_sub[l].clock.next = self.clock.val();
            self.f1_sub[l].reset.next = self.reset.val();
            self.f1_sub[l].en.next = true;
            self.f2_lo[l].clock.next = self.clock.val();
            self.f2_lo[l].reset.next = self.reset.val();
            self.f2_lo[l].en.next = true;
            self.f2_maxh[l].clock.next = self.clock.val();
            self.f2_maxh[l].reset.next = self.reset.val();
            self.f2_maxh[l].en.next = true;
            self.f2_minh[l].clock.next = self.clock.val();
            self.f2_minh[l].reset.next = self.reset.val();
            self.f2_minh[l].en.next = true;
            self.f2_swap[l].clock.next = self.clock.val();
            self.f2_swap[l].reset.next = self.reset.val();
            self.f2_swap[l].en.next = true;
            self.f2_sub[l].clock.next = self.clock.val();
            self.f2_sub[l].reset.next = self.reset.val();
            self.f2_sub[l].en.next = true;
            self.f3_d[l].clock.next = self.clock.val();
            self.f3_d[l].reset.next = self.reset.val();
            self.f3_d[l].en.next = true;
            self.f3_min16[l].clock.next = self.clock.val();
            self.f3_min16[l].reset.next = self.reset.val();
            self.f3_min16[l].en.next = true;
            self.c1_swap[l].clock.next = self.clock.val();
            self.c1_swap[l].reset.next = self.reset.val();
            self.c1_swap[l].en.next = self.adv.val();
            self.c1_sub[l].clock.next = self.clock.val();
            self.c1_sub[l].reset.next = self.reset.val();
            self.c1_sub[l].en.next = self.adv.val();
            self.c2_lo[l].clock.next = self.clock.val();
            self.c2_lo[l].reset.next = self.reset.val();
            self.c2_lo[l].en.next = self.adv.val();
            self.c2_xh[l].clock.next = self.clock.val();
            self.c2_xh[l].reset.next = self.reset.val();
            self.c2_xh[l].en.next = self.adv.val();
            self.c2_mh[l].clock.next = self.clock.val();
            self.c2_mh[l].reset.next = self.reset.val();
            self.c2_mh[l].en.next = self.adv.val();
            self.c2_swap[l].clock.next = self.clock.val();
            self.c2_swap[l].reset.next = self.reset.val();
            self.c2_swap[l].en.next = self.adv.val();
            self.c2_sub[l].clock.next = self.clock.val();
            self.c2_sub[l].reset.next = self.reset.val();
            self.c2_sub[l].en.next = self.adv.val();
            self.c3_n[l].clock.next = self.clock.val();
            self.c3_n[l].reset.next = self.reset.val();
            self.c3_n[l].en.next = self.adv.val();
            self.c3_m[l].clock.next = self.clock.val();
            self.c3_m[l].reset.next = self.reset.val();
            self.c3_m[l].en.next = self.adv.val();
            self.c3_esh[l].clock.next = self.clock.val();
            self.c3_esh[l].reset.next = self.reset.val();
            self.c3_esh[l].en.next = self.adv.val();
            self.c3_e0[l].clock.next = self.clock.val();
            self.c3_e0[l].reset.next = self.reset.val();
            self.c3_e0[l].en.next = self.adv.val();
            self.c3_sz[l].clock.next = self.clock.val();
            self.c3_sz[l].reset.next = self.reset.val();
            self.c3_sz[l].en.next = self.adv.val();
        }
        for i in 0..self._lat {
            self.g_v[i].clock.next = self.clock.val();
            self.g_v[i].reset.next = self.reset.val();
            self.g_v[i].en.next = true;
            self.g_k[i].clock.next = self.clock.val();
            self.g_k[i].reset.next = self.reset.val();
            self.g_k[i].en.next = true;
        }
        for i in 0..(self._d + 1) {
            self.dl_sb[i].clock.next = self.clock.val();
            self.dl_sb[i].reset.next = self.reset.val();
            self.dl_sb[i].en.next = self.adv.val();
        }
        for i in 0..((self._d + 1) * self._lanes) {
            self.dl_y[i].clock.next = self.clock.val();
            self.dl_y[i].reset.next = self.reset.val();
            self.dl_y[i].en.next = self.adv.val();
        }
        for i in 0..((self._bits - 1) * self._lanes) {
            self.st_r[i].clock.next = self.clock.val();
            self.st_r[i].reset.next = self.reset.val();
            self.st_r[i].en.next = self.adv.val();
            self.st_m2[i].clock.next = self.clock.val();
            self.st_m2[i].reset.next = self.reset.val();
            self.st_m2[i].en.next = self.adv.val();
        }
        for i in 0..(self._bits * self._lanes) {
            self.st_q[i].clock.next = self.clock.val();
            self.st_q[i].reset.next = self.reset.val();
            self.st_q[i].en.next = self.adv.val();
            self.st_sz[i].clock.next = self.clock.val();
            self.st_sz[i].reset.next = self.reset.val();
            self.st_sz[i].en.next = self.adv.val();
        }
        for j in 0..(self._bits + 2 * self._st) {
            self.st_sb[j].clock.next = self.clock.val();
            self.st_sb[j].reset.next = self.reset.val();
            self.st_sb[j].en.next = self.adv.val();
        }
        // hack-quantizer registers: all load on adv but the LFSR
        for i in 0..(self._hs * self._lanes) {
            self.o_sum[i].clock.next = self.clock.val();
            self.o_sum[i].reset.next = self.reset.val();
            self.o_sum[i].en.next = self.adv.val();
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
            self.sm_lo[i].clock.next = self.clock.val();
            self.sm_lo[i].reset.next = self.reset.val();
            self.sm_lo[i].en.next = self.adv.val();
            self.sm_hi[i].clock.next = self.clock.val();
            self.sm_hi[i].reset.next = self.reset.val();
            self.sm_hi[i].en.next = self.adv.val();
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
            self.m1_sz[i].clock.next = self.clock.val();
            self.m1_sz[i].reset.next = self.reset.val();
            self.m1_sz[i].en.next = self.adv.val();
            self.xq[i].clock.next = self.clock.val();
            self.xq[i].reset.next = self.reset.val();
            self.xq[i].en.next = self.adv.val();
        }
        for i in 0..(self._st * self._bits * self._lanes) {
            self.st_fr[i].clock.next = self.clock.val();
            self.st_fr[i].reset.next = self.reset.val();
            self.st_fr[i].en.next = self.adv.val();
            self.st_sk[i].clock.next = self.clock.val();
            self.st_sk[i].reset.next = self.reset.val();
            self.st_sk[i].en.next = self.adv.val();
        }
        for i in 0..self._st {
            self.lfsr[i].clock.next = self.clock.val();
            self.lfsr[i].reset.next = self.reset.val();
            self.lfsr[i].en.next = false;
        }
        self.mm_ram.clock.next = self.clock.val();
        self.meta_ram.clock.next = self.clock.val();
        self.wd_ram.clock.next = self.clock.val();

        // ---------------- skid: two entries, in_ready a register ----------------
        self.in_ready.next = !self.sv.q.val();
        self.accept.next = self.in_valid.val() & !self.sv.q.val();
        self.pop.next = self.adv.val() & self.hv.q.val();
        if self.pop.val() {
            if self.sv.q.val() {
                self.sv.d.next = false;
                for l in 0..self._lanes {
                    self.hx[l].d.next = self.sx[l].q.val();
                    self.hx[l].en.next = true;
                }
            } else {
                self.hv.d.next = self.accept.val();
                for l in 0..self._lanes {
                    self.hx[l].en.next = true;
                }
            }
        } else if !self.hv.q.val() {
            self.hv.d.next = self.accept.val();
            for l in 0..self._lanes {
                self.hx[l].en.next = true;
            }
        } else if !self.sv.q.val() {
            self.sv.d.next = self.accept.val();
            for l in 0..self._lanes {
                self.sx[l].en.next = true;
            }
        }

        // ---------------- pop: where the beat is in its block ----------------
        self.klast.next = self.ck.q.val() == self.k_klast.val();
        self.jlast.next = self.cj.q.val() == self.k_jlast.val();
        self.shlast.next = self.csh.q.val() == self.k_shlast.val();
        self.nsb.next = (bit_cast::<64, 16>(self.ck.q.val()) << self.k_s32.val())
            | (bit_cast::<64, 8>(self.cwi.q.val()) << self.k_s24.val())
            | (bit_cast::<64, 8>(self.csh.q.val()) << self.k_s16.val());
        if self.pop.val() {
            self.nsb.next = self.nsb.val() | self.f_v.val();
        }
        if self.cp2.q.val() {
            if self.cj.q.val() == self.k_zero8.val() {
                self.nsb.next = self.nsb.val() | self.f_t0.val();
            }
            if self.csh.q.val() == self.k_zero8.val() {
                self.nsb.next = self.nsb.val() | self.f_wf.val();
            }
            if self.shlast.val() | self.jlast.val() {
                self.nsb.next = self.nsb.val() | self.f_wd.val();
            }
            if self.jlast.val() & self.klast.val() {
                self.nsb.next = self.nsb.val() | self.f_bl.val();
            }
        } else {
            self.nsb.next = self.nsb.val() | self.f_p1.val();
            if self.cj.q.val() == self.k_zero8.val() {
                self.nsb.next = self.nsb.val() | self.f_first.val();
                if self.ck.q.val() == self.k_zero16.val() {
                    self.nsb.next = self.nsb.val() | self.f_nfs.val();
                }
            }
            if self.jlast.val() {
                self.nsb.next = self.nsb.val() | self.f_p1l.val();
                if self.klast.val() {
                    self.nsb.next = self.nsb.val() | self.f_p1e.val();
                }
            }
        }
        if self.pop.val() {
            self.ck.d.next = self.ck.q.val() + self.k_one16.val();
            if self.klast.val() {
                self.ck.d.next = self.k_zero16.val();
                self.cj.d.next = self.cj.q.val() + self.k_one8.val();
                self.csh.d.next = self.csh.q.val() + self.k_bits8.val();
                if self.shlast.val() {
                    self.csh.d.next = self.k_zero8.val();
                    self.cwi.d.next = self.cwi.q.val() + self.k_one8.val();
                }
                if self.jlast.val() {
                    self.cj.d.next = self.k_zero8.val();
                    self.csh.d.next = self.k_zero8.val();
                    self.cwi.d.next = self.k_zero8.val();
                    self.cp2.d.next = !self.cp2.q.val();
                }
            }
        }
        // the minmax row is read for the popped beat; the row P0 writes in
        // this cycle comes from lastw instead
        self.mm_ram.re.next = self.pop.val();
        self.mm_ram.raddr.next = self.ck.q.val();
        if self.p0_sb.q.val().get_bit(0)
            & self.p0_sb.q.val().get_bit(7)
            & !self.p0_sb.q.val().get_bit(9)
            & (self.p0_sb.q.val().get_bits::<16>(32) == self.ck.q.val())
        {
            self.nsb.next = self.nsb.val() | self.f_by.val();
        }
        self.p0_sb.d.next = self.nsb.val();
        for l in 0..self._lanes {
            self.p0_x[l].d.next = self.hx[l].q.val();
        }

        // ---------------- P0: sanitise, merge the extremes ----------------
        self.pw.next = self.mm_ram.rdata.val();
        if self.p0_sb.q.val().get_bit(6) {
            self.pw.next = self.lastw.q.val();
        }
        self.aw.next = self.k_zero_w.val();
        self.anynf.next = false;
        for l in 0..self._lanes {
            self.san[l].x.next = self.p0_x[l].q.val();
            self.anynf.next = self.anynf.val() | self.san[l].nonfinite.val();
            // order keys (spec §2.2.2): x | 0x8000 for sign 0, ~x for sign 1
            self.key[l].next = self.san[l].y.val() | self.k_sign16.val();
            if self.san[l].y.val().get_bit(15) {
                self.key[l].next = !self.san[l].y.val();
            }
            self.nmin[l].next = self.key[l].val();
            self.nmax[l].next = self.key[l].val();
            self.pword.next = self.pw.val().get_bits::<32>(self.lane32[l].val().index());
            if !self.p0_sb.q.val().get_bit(8) {
                if self.pword.val().get_bits::<16>(0) < self.key[l].val() {
                    self.nmin[l].next = self.pword.val().get_bits::<16>(0);
                }
                if self.pword.val().get_bits::<16>(16) > self.key[l].val() {
                    self.nmax[l].next = self.pword.val().get_bits::<16>(16);
                }
            }
            self.ta.next = self.nmin[l].val();
            self.tb.next = self.nmax[l].val();
            self.aw.next = self.aw.val()
                | (bit_cast::<2048, 16>(self.ta.val()) << self.lane32w[l].val())
                | (bit_cast::<2048, 16>(self.tb.val()) << self.lane48w[l].val());
        }
        self.mm_ram.we.next = self.adv.val()
            & self.p0_sb.q.val().get_bit(0)
            & self.p0_sb.q.val().get_bit(7)
            & !self.p0_sb.q.val().get_bit(9);
        self.mm_ram.waddr.next = self.p0_sb.q.val().get_bits::<16>(32);
        self.mm_ram.wdata.next = self.aw.val();
        self.lastw.d.next = self.aw.val();
        // the block's nonfinite flag: ORed over pass 1
        self.nfn.next = self.anynf.val() | (self.nfacc.q.val() & !self.p0_sb.q.val().get_bit(10));
        if self.adv.val() & self.p0_sb.q.val().get_bit(0) & self.p0_sb.q.val().get_bit(7) {
            self.nfacc.d.next = self.nfn.val();
            if self.p0_sb.q.val().get_bit(11) {
                self.nfblk.d.next = self.nfn.val();
            }
        }
        // the last token's extremes to the step pipeline
        self.s0_v.d.next = self.adv.val() & self.p0_sb.q.val().get_bit(0) & self.p0_sb.q.val().get_bit(9);
        self.s0_k.d.next = self.p0_sb.q.val().get_bits::<16>(32);
        for l in 0..self._lanes {
            self.s0_min[l].d.next = self.nmin[l].val();
            self.s0_max[l].d.next = self.nmax[l].val();
        }
        // pass-2 beats go on to the delay stages with the block's flag
        self.dsb.next = self.p0_sb.q.val() & self.k_keep.val();
        if self.p0_sb.q.val().get_bit(0) & !self.p0_sb.q.val().get_bit(7) {
            self.dsb.next = self.dsb.val() | self.f_v.val();
        }
        if self.nfblk.q.val() {
            self.dsb.next = self.dsb.val() | self.f_nf.val();
        }
        self.dl_sb[0].d.next = self.dsb.val();
        for l in 0..self._lanes {
            self.dl_y[l].d.next = self.san[l].y.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for i in 1..(self._d + 1) {
                self.dl_sb[i].d.next = self.dl_sb[i - 1].q.val();
                for l in 0..self._lanes {
                    self.dl_y[i * ln + l].d.next = self.dl_y[(i - 1) * ln + l].q.val();
                }
            }
        }

        // ---------------- step: (min, step) per channel into meta ----------------
        self.f1_v.d.next = self.s0_v.q.val();
        self.f1_k.d.next = self.s0_k.q.val();
        self.f2_v.d.next = self.f1_v.q.val();
        self.f2_k.d.next = self.f1_k.q.val();
        for l in 0..self._lanes {
            self.fmin[l].next = self.s0_min[l].q.val() & self.k_low15.val();
            if !self.s0_min[l].q.val().get_bit(15) {
                self.fmin[l].next = !self.s0_min[l].q.val();
            }
            self.fmax[l].next = self.s0_max[l].q.val() & self.k_low15.val();
            if !self.s0_max[l].q.val().get_bit(15) {
                self.fmax[l].next = !self.s0_max[l].q.val();
            }
            self.cvt_fmin[l].x.next = self.fmin[l].val();
            self.cvt_fmax[l].x.next = self.fmax[l].val();
            self.f1_minmag[l].d.next = self.cvt_fmin[l].mag.val();
            self.f1_swap[l].d.next = self.cvt_fmin[l].neg.val() & self.cvt_fmax[l].neg.val();
            self.f1_sub[l].d.next = !self.cvt_fmin[l].neg.val() | self.cvt_fmax[l].neg.val();
            self.f1_maxmag[l].d.next = self.cvt_fmax[l].mag.val();
            self.f1_min16[l].d.next = self.fmin[l].val();
            // F2, F3: D = max - min (>= 0) in two halves (`DiffLo`, `DiffHi`)
            self.flo[l].xl.next = self.f1_maxmag[l].q.val().get_bits::<FH>(0);
            self.flo[l].yl.next = self.f1_minmag[l].q.val().get_bits::<FH>(0);
            self.flo[l].swap.next = self.f1_swap[l].q.val();
            self.flo[l].sub.next = self.f1_sub[l].q.val();
            self.f2_lo[l].d.next = self.flo[l].lo.val();
            self.f2_maxh[l].d.next = self.f1_maxmag[l].q.val().get_bits::<FH>(self.k_fh32.val().index());
            self.f2_minh[l].d.next = self.f1_minmag[l].q.val().get_bits::<FH>(self.k_fh32.val().index());
            self.f2_swap[l].d.next = self.f1_swap[l].q.val();
            self.f2_sub[l].d.next = self.f1_sub[l].q.val();
            self.f2_min16[l].d.next = self.f1_min16[l].q.val();
            self.fhi[l].xh.next = self.f2_maxh[l].q.val();
            self.fhi[l].yh.next = self.f2_minh[l].q.val();
            self.fhi[l].swap.next = self.f2_swap[l].q.val();
            self.fhi[l].sub.next = self.f2_sub[l].q.val();
            self.fhi[l].lo.next = self.f2_lo[l].q.val();
            self.f3_d[l].d.next = self.fhi[l].d.val();
            self.f3_min16[l].d.next = self.f2_min16[l].q.val();
            self.gstep[l].d.next = self.f3_d[l].q.val();
            self.gstep[l].min.next = self.f3_min16[l].q.val();
            self.gstep[l].present.next = true;
        }
        self.f3_v.d.next = self.f2_v.q.val();
        self.f3_k.d.next = self.f2_k.q.val();
        self.g_v[0].d.next = self.f3_v.q.val();
        self.g_k[0].d.next = self.f3_k.q.val();
        for i in 1..self._lat {
            self.g_v[i].d.next = self.g_v[i - 1].q.val();
            self.g_k[i].d.next = self.g_k[i - 1].q.val();
        }
        self.mw.next = self.k_zero_w.val();
        for l in 0..self._lanes {
            self.ta.next = self.gstep[l].min_out.val();
            self.tb.next = self.gstep[l].step_out.val();
            self.mw.next = self.mw.val()
                | (bit_cast::<2048, 16>(self.ta.val()) << self.lane32w[l].val())
                | (bit_cast::<2048, 16>(self.tb.val()) << self.lane48w[l].val());
        }
        for t in (self._lat - 1)..self._lat {
            self.meta_ram.we.next = self.g_v[t].q.val();
            self.meta_ram.waddr.next = self.g_k[t].q.val();
        }
        self.meta_ram.wdata.next = self.mw.val();

        // ---------------- code: the meta row at R, then C1 ----------------
        for ln in self._lanes..(self._lanes + 1) {
            for t in self._d..(self._d + 1) {
                // read at the stage before R
                self.meta_ram.re.next = self.adv.val() & self.dl_sb[t - 1].q.val().get_bit(0);
                self.meta_ram.raddr.next = self.dl_sb[t - 1].q.val().get_bits::<16>(32);
                self.mrow.next = self.dl_sb[t].q.val().get_bit(0) & self.dl_sb[t].q.val().get_bit(1);
                self.c1_sb.d.next = self.dl_sb[t].q.val();
                for l in 0..self._lanes {
                    self.cvt_x[l].x.next = self.dl_y[t * ln + l].q.val();
                }
            }
        }
        for l in 0..self._lanes {
            self.c1_xmag[l].d.next = self.cvt_x[l].mag.val();
            // C1: min as magnitude and sign; step = m 2^e with e = max(E - 1, 0)
            self.mword.next = self.meta_ram.rdata.val().get_bits::<32>(self.lane32[l].val().index());
            self.cvt_min[l].x.next = self.mword.val().get_bits::<16>(0);
            self.c1_minmag[l].d.next = self.cvt_min[l].mag.val();
            // the split_diff flags of n = x - min (x >= min)
            self.c1_swap[l].d.next = self.cvt_x[l].neg.val() & self.cvt_min[l].neg.val();
            self.c1_sub[l].d.next = !self.cvt_min[l].neg.val() | self.cvt_x[l].neg.val();
            self.cex.next = self.mword.val().get_bits::<5>(26);
            self.mant.next = self.mword.val().get_bits::<10>(16);
            self.esh5.next = self.cex.val() - self.k_two5.val();
            self.c1_m[l].d.next = bit_cast::<NW, 10>(self.mant.val());
            self.c1_esh[l].d.next = self.k_zero8.val();
            self.c1_e0[l].d.next = true;
            if self.cex.val() != self.k_zero5.val() {
                self.c1_m[l].d.next = bit_cast::<NW, 10>(self.mant.val()) | self.k_imp.val();
                self.c1_e0[l].d.next = self.cex.val() == self.k_one5.val();
                // e >= 1 shifts n right by e - 1 = E - 2
                self.c1_esh[l].d.next = bit_cast::<8, 5>(self.esh5.val());
            }
            self.c1_sz[l].d.next = self.mword.val().get_bits::<16>(16) == self.k_zero16.val();
        }

        // C2, C3: n = units(x) - units(min), exact and >= 0, in two halves
        // (`DiffLo`, `DiffHi`; one 42-bit add after the select took 4.54 ns
        // at 32 lanes on OSU018)
        for l in 0..self._lanes {
            self.xlo[l].xl.next = self.c1_xmag[l].q.val().get_bits::<FH>(0);
            self.xlo[l].yl.next = self.c1_minmag[l].q.val().get_bits::<FH>(0);
            self.xlo[l].swap.next = self.c1_swap[l].q.val();
            self.xlo[l].sub.next = self.c1_sub[l].q.val();
            self.c2_lo[l].d.next = self.xlo[l].lo.val();
            self.c2_xh[l].d.next = self.c1_xmag[l].q.val().get_bits::<FH>(self.k_fh32.val().index());
            self.c2_mh[l].d.next = self.c1_minmag[l].q.val().get_bits::<FH>(self.k_fh32.val().index());
            self.c2_swap[l].d.next = self.c1_swap[l].q.val();
            self.c2_sub[l].d.next = self.c1_sub[l].q.val();
            self.c2_m[l].d.next = self.c1_m[l].q.val();
            self.c2_esh[l].d.next = self.c1_esh[l].q.val();
            self.c2_e0[l].d.next = self.c1_e0[l].q.val();
            self.c2_sz[l].d.next = self.c1_sz[l].q.val();
            self.xhi[l].xh.next = self.c2_xh[l].q.val();
            self.xhi[l].yh.next = self.c2_mh[l].q.val();
            self.xhi[l].swap.next = self.c2_swap[l].q.val();
            self.xhi[l].sub.next = self.c2_sub[l].q.val();
            self.xhi[l].lo.next = self.c2_lo[l].q.val();
            self.c3_n[l].d.next = self.xhi[l].d.val();
            self.c3_m[l].d.next = self.c2_m[l].q.val();
            self.c3_esh[l].d.next = self.c2_esh[l].q.val();
            self.c3_e0[l].d.next = self.c2_e0[l].q.val();
            self.c3_sz[l].d.next = self.c2_sz[l].q.val();
        }
        self.c2_sb.d.next = self.c1_sb.q.val();
        self.c3_sb.d.next = self.c2_sb.q.val();

        // C4: the normalised dividend (spec §5.3): (e >= 1 ? n >> (e-1) : 2n) + m
        for l in 0..self._lanes {
            self.nn.next = self.c3_n[l].q.val() >> self.c3_esh[l].q.val();
            if self.c3_e0[l].q.val() {
                self.nn.next = self.c3_n[l].q.val() << self.k_one_fx.val();
            }
            self.c4_r[l].d.next = bit_cast::<NW, FX>(self.nn.val() & self.k_nwmask.val()) + self.c3_m[l].q.val();
            self.c4_m2[l].d.next = self.c3_m[l].q.val() << self.k_one_nw.val();
            self.c4_sz[l].d.next = self.c3_sz[l].q.val();
        }
        self.c4_sb.d.next = self.c3_sb.q.val();

        // restoring steps: step j takes weight 2^(b-1-j) against 2m 2^(b-1-j);
        // the last (weight 1) only compares
        for ln in self._lanes..(self._lanes + 1) {
            for l in 0..self._lanes {
                self.dstep[l].rem.next = self.c4_r[l].q.val();
                self.dstep[l].dsh.next = self.c4_m2[l].q.val() << self.dsh[0].val();
                self.st_r[l].d.next = self.dstep[l].rem_out.val();
                self.st_m2[l].d.next = self.c4_m2[l].q.val();
                self.st_sz[l].d.next = self.c4_sz[l].q.val();
                self.st_q[l].d.next = self.k_zero8.val();
                if self.dstep[l].take.val() {
                    self.st_q[l].d.next = self.k_one8.val();
                }
            }
            for j in 1..(self._bits - 1) {
                for l in 0..self._lanes {
                    self.dstep[j * ln + l].rem.next = self.st_r[(j - 1) * ln + l].q.val();
                    self.dstep[j * ln + l].dsh.next = self.st_m2[(j - 1) * ln + l].q.val() << self.dsh[j].val();
                    self.st_r[j * ln + l].d.next = self.dstep[j * ln + l].rem_out.val();
                    self.st_m2[j * ln + l].d.next = self.st_m2[(j - 1) * ln + l].q.val();
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val();
                    if self.dstep[j * ln + l].take.val() {
                        self.st_q[j * ln + l].d.next =
                            (self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val()) | self.k_one8.val();
                    }
                }
            }
            for j in 1..self._bits {
                for l in 0..self._lanes {
                    self.st_sz[j * ln + l].d.next = self.st_sz[(j - 1) * ln + l].q.val();
                }
            }
            for j in (self._bits - 1)..self._bits {
                for l in 0..self._lanes {
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val();
                    if self.st_r[(j - 1) * ln + l].q.val() >= self.st_m2[(j - 1) * ln + l].q.val() {
                        self.st_q[j * ln + l].d.next =
                            (self.st_q[(j - 1) * ln + l].q.val() << self.k_one_q.val()) | self.k_one8.val();
                    }
                }
            }
        }
        self.st_sb[0].d.next = self.c4_sb.q.val();
        for j in 1..(self._bits + 2 * self._st) {
            self.st_sb[j].d.next = self.st_sb[j - 1].q.val();
        }

        // ---------------- hack-quantizer, stochastic (spec §15.3, §15.4) ----------------
        // C4 divides 2 (n >> e) by 2m: q0 = floor(n / s), remainder 2R,
        // R = (n >> e) mod m; beside it frac, the bits of n below 2^e as a
        // fraction of 2^e times 2^16 (16 bits) and its sticky bit
        for i in 0..self._st {
            for ln in self._lanes..(self._lanes + 1) {
                for l in 0..self._lanes {
                    self.se[i * ln + l].next = self.c3_esh[l].q.val() + self.k_one8.val();
                    if self.c3_e0[l].q.val() {
                        self.se[i * ln + l].next = self.k_zero8.val();
                    }
                    self.fsl[i * ln + l].next = self.k_h16[i].val() - self.se[i * ln + l].val();
                    self.fsr[i * ln + l].next = self.k_zero8.val();
                    self.em[i * ln + l].next = !self.k_hx[i].val();
                    if self.se[i * ln + l].val() >= self.k_h16[i].val() {
                        self.fsl[i * ln + l].next = self.k_zero8.val();
                        self.fsr[i * ln + l].next = self.se[i * ln + l].val() - self.k_h16[i].val();
                        self.em[i * ln + l].next = !(self.k_hx[i].val() << self.fsr[i * ln + l].val());
                    }
                    // n < 2^(b + 11 + e): shifted left by 16 - e it stays in FX bits
                    self.nn.next = (self.c3_n[l].q.val() << self.fsl[i * ln + l].val()) >> self.fsr[i * ln + l].val();
                    self.c4_fr[i * ln + l].d.next = self.nn.val().get_bits::<16>(0);
                    self.c4_sk[i * ln + l].d.next = (self.c3_n[l].q.val() & self.em[i * ln + l].val()).any();
                    // (n >> (e - 1)) with its last bit cleared is 2 (n >> e); 2n at e = 0
                    self.nn.next = self.c3_n[l].q.val() >> self.c3_esh[l].q.val();
                    if self.c3_e0[l].q.val() {
                        self.nn.next = self.c3_n[l].q.val() << self.k_one_fx.val();
                    }
                    self.nn.next = self.nn.val() & self.k_n1[i].val();
                    self.c4_r[l].d.next = bit_cast::<NW, FX>(self.nn.val() & self.k_nwmask.val());
                }
            }
        }
        // frac along the steps; at the last step its remainder 2R, m, and
        // the row's LFSR words (lane l: the state after 16 (l + 1) steps;
        // the register moves 16 lanes steps per pass-2 beat)
        for i in 0..self._st {
            for ln in self._lanes..(self._lanes + 1) {
                for b in self._bits..(self._bits + 1) {
                    for l in 0..self._lanes {
                        self.st_fr[i * b * ln + l].d.next = self.c4_fr[i * ln + l].q.val();
                        self.st_sk[i * b * ln + l].d.next = self.c4_sk[i * ln + l].q.val();
                        self.sr_rem[i * ln + l].d.next = self.st_r[(b - 2) * ln + l].q.val();
                        if self.st_r[(b - 2) * ln + l].q.val() >= self.st_m2[(b - 2) * ln + l].q.val() {
                            self.sr_rem[i * ln + l].d.next =
                                self.st_r[(b - 2) * ln + l].q.val() - self.st_m2[(b - 2) * ln + l].q.val();
                        }
                        self.sm_lo[i * ln + l].d.next =
                            (self.st_m2[(b - 2) * ln + l].q.val().get_bits::<16>(1)) & self.k_hff[i].val();
                        self.sm_hi[i * ln + l].d.next =
                            self.st_m2[(b - 2) * ln + l].q.val().get_bits::<16>(1) >> self.k_h8[i].val();
                    }
                    for j in 1..self._bits {
                        for l in 0..self._lanes {
                            self.st_fr[i * b * ln + j * ln + l].d.next = self.st_fr[i * b * ln + (j - 1) * ln + l].q.val();
                            self.st_sk[i * b * ln + j * ln + l].d.next = self.st_sk[i * b * ln + (j - 1) * ln + l].q.val();
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
                    if self.adv.val() & self.st_sb[b - 2].q.val().get_bit(0) {
                        self.lfsr[i].en.next = true;
                    }
                    self.lfsr[i].d.next = self.lfn[i].val();
                    // M1: r m as r m[7:0] + r m[10:8] 2^8; M2: up when r m <
                    // R 2^16 + ceil(frac), compared as high and low 16 bits
                    // (ceil(frac) <= 2^16); 0 when the step is 0
                    for l in 0..self._lanes {
                        self.m1_plo[i * ln + l].d.next = self.wd[i * ln + l].q.val() * self.sm_lo[i * ln + l].q.val();
                        self.m1_phi[i * ln + l].d.next = self.wd[i * ln + l].q.val() * self.sm_hi[i * ln + l].q.val();
                        self.m1_r[i * ln + l].d.next = self.sr_rem[i * ln + l].q.val().get_bits::<16>(1);
                        self.m1_fr[i * ln + l].d.next = self.st_fr[i * b * ln + (b - 1) * ln + l].q.val();
                        self.m1_sk[i * ln + l].d.next = self.st_sk[i * b * ln + (b - 1) * ln + l].q.val();
                        self.m1_q0[i * ln + l].d.next = self.st_q[(b - 1) * ln + l].q.val();
                        self.m1_q1[i * ln + l].d.next = self.st_q[(b - 1) * ln + l].q.val() + self.k_one8.val();
                        self.m1_sz[i * ln + l].d.next = self.st_sz[(b - 1) * ln + l].q.val();
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
                        if self.m1_sz[i * ln + l].q.val() {
                            self.xq[i * ln + l].d.next = self.k_zero8.val();
                        }
                    }
                }
            }
        }

        // ---------------- pack: the codes into their channels' words ----------------
        for ln in self._lanes..(self._lanes + 1) {
            for t in self._pk..(self._pk + 1) {
                // the words row is read a stage ahead; if the pack stage
                // writes that row in the same cycle, lastwb has it
                self.wd_ram.re.next = self.adv.val() & self.st_sb[t - 1].q.val().get_bit(0);
                self.wd_ram.raddr.next = self.st_sb[t - 1].q.val().get_bits::<16>(32);
                self.bsb.next = self.st_sb[t - 1].q.val();
                self.wrow.next = self.st_sb[t].q.val().get_bit(0) & !self.st_sb[t].q.val().get_bit(3);
                // hack: every pass-2 beat writes its row (the sums run on)
                for _i in 0..self._hs {
                    self.wrow.next = self.st_sb[t].q.val().get_bit(0);
                }
                if self.wrow.val()
                    & (self.st_sb[t].q.val().get_bits::<16>(32) == self.st_sb[t - 1].q.val().get_bits::<16>(32))
                {
                    self.bsb.next = self.st_sb[t - 1].q.val() | self.f_by.val();
                }
                self.st_sb[t].d.next = self.bsb.val();
                self.bw.next = self.k_zero_w.val();
                self.shv.next = self.st_sb[t].q.val().get_bits::<8>(16);
                for l in 0..self._lanes {
                    self.prevw.next = self.wd_ram.rdata.val().get_bits::<32>(self.lane32[l].val().index());
                    if self.st_sb[t].q.val().get_bit(6) {
                        self.prevw.next = self.lastwb.q.val().get_bits::<32>(self.lane32[l].val().index());
                    }
                    if self.st_sb[t].q.val().get_bit(2) {
                        self.prevw.next = self.k_zero32.val();
                    }
                    for tq in (self._bits - 1)..self._bits {
                        self.qq.next = self.st_q[tq * ln + l].q.val();
                        if self.st_sz[tq * ln + l].q.val() {
                            self.qq.next = self.k_zero8.val();
                        }
                    }
                    for i in 0..self._st {
                        self.qq.next = self.xq[i * ln + l].q.val();
                    }
                    self.nw[l].next = self.prevw.val() | (bit_cast::<32, 8>(self.qq.val()) << bit_cast::<32, 8>(self.shv.val()));
                    self.tw.next = self.nw[l].val();
                    self.bw.next = self.bw.val() | (bit_cast::<2048, 32>(self.tw.val()) << self.lane32w[l].val());
                    // hack: the channel's sum, 0 before token 0 of pass 2
                    for i in 0..self._hs {
                        self.hs_ps[i * ln + l].next = self.wd_ram.rdata.val().get_bits::<16>(self.k_sl[i * ln + l].val().index());
                        if self.st_sb[t].q.val().get_bit(6) {
                            self.hs_ps[i * ln + l].next = self.lastwb.q.val().get_bits::<16>(self.k_sl[i * ln + l].val().index());
                        }
                        if self.st_sb[t].q.val().get_bit(1) {
                            self.hs_ps[i * ln + l].next = self.k_zero16.val();
                        }
                        self.hs_ns[i * ln + l].next = self.hs_ps[i * ln + l].val() + bit_cast::<16, 8>(self.qq.val());
                        self.ta.next = self.hs_ns[i * ln + l].val();
                        self.bw.next = self.bw.val() | (bit_cast::<2048, 16>(self.ta.val()) << self.k_slw[i * ln + l].val());
                        self.o_sum[i * ln + l].d.next = self.k_zero16.val();
                        if self.st_sb[t].q.val().get_bits::<8>(24) == self.k_wl[i].val() {
                            self.o_sum[i * ln + l].d.next = self.hs_ns[i * ln + l].val();
                        }
                        if self.mrow.val() {
                            self.o_sum[i * ln + l].d.next = self.k_zero16.val();
                        }
                        self.out_sum[i * ln + l].next = self.o_sum[i * ln + l].q.val();
                    }
                }
                self.wd_ram.we.next = self.adv.val() & self.wrow.val();
                self.wd_ram.waddr.next = self.st_sb[t].q.val().get_bits::<16>(32);
                self.wd_ram.wdata.next = self.bw.val();
                self.lastwb.d.next = self.bw.val();
                // output: a meta row from R, or a row of complete words
                self.o_v.d.next = self.mrow.val() | (self.st_sb[t].q.val().get_bit(0) & self.st_sb[t].q.val().get_bit(3));
                self.o_meta.d.next = self.mrow.val();
                self.o_word.d.next = self.st_sb[t].q.val().get_bits::<8>(24);
                self.o_last.d.next = self.st_sb[t].q.val().get_bit(0) & self.st_sb[t].q.val().get_bit(4);
                self.o_nf.d.next = self.st_sb[t].q.val().get_bit(0)
                    & self.st_sb[t].q.val().get_bit(4)
                    & self.st_sb[t].q.val().get_bit(5);
            }
        }
        for l in 0..self._lanes {
            self.o_data[l].d.next = self.nw[l].val();
            if self.mrow.val() {
                self.o_data[l].d.next = self.meta_ram.rdata.val().get_bits::<32>(self.lane32[l].val().index());
            }
            self.out_data[l].next = self.o_data[l].q.val();
        }
        if self.mrow.val() {
            self.o_word.d.next = self.k_zero8.val();
            self.o_last.d.next = false;
            self.o_nf.d.next = false;
        }
        self.out_valid.next = self.o_v.q.val();
        self.out_meta.next = self.o_meta.q.val();
        self.out_word.next = self.o_word.q.val();
        self.out_last.next = self.o_last.q.val();
        self.out_nonfinite.next = self.o_nf.q.val();
    }
}
