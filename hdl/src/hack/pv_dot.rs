//! `hack-pv-dot`: one query's output vector from quantized P and V on the
//! codes, plus the open partition in FP16: per closed block of `Pi` tokens
//! a P partition, then the block's `head_dim` V partitions, one channel per
//! beat, each giving Eq. 4 exactly; then the open partition's tokens, `p_t
//! v_tj` exact, `lanes` channels per beat; `head_dim` accumulators of `W`
//! bits; after the query, each channel rounded once to binary32.
//!
//! Paper: HACK §5.2 (Eq. 4), §5.3 (V and P partitions along the tokens),
//! §5.4 (the open partition kept in FP16). Spec: docs/spec.md §15.6,
//! §15.9, §15.11, §15.16.5 (ports, order, stages).
//!
//! - V beats: `eq4::Eq4` (the stages of `hack-qk-dot`) with the held P,
//!   then `acc::TermPlace` to one carry-save pair;
//! - tail beats: `p_t` and each lane's `v` decoded (`Fp16Sig`), the
//!   product of significands as two 11x6 pieces, summed, placed;
//! - M: per bank (channel mod `lanes`), read-modify-write of the
//!   accumulator, carry-save in a `DpRam` (`head_dim / lanes` words of `2W`
//!   bits): the pair added by two 3:2 compressors, no carry runs; a write
//!   of the cycle before to the same word is forwarded; a channel's first
//!   beat of a query loads instead of adding;
//! - drain: the channels read in order, resolved and rounded by
//!   `acc::Resolve`, one per output beat.

use super::acc::{Resolve, TermPlace, ACCW};
use super::eq4::{self, Eq4};
use super::sig::Fp16Sig;
use crate::prim::ram::{addr_bits, DpRam, MemInfo};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Address bits of a bank (`head_dim / lanes <= 1024` words).
const RA: usize = 10;
/// Port width of a bank: the pair, `s` in the low `W` bits, `c` above.
const RW: usize = 2 * ACCW;
/// Tokens a query may hold (spec §15.6): sets the count port's width.
pub const L_MAX: usize = 65536;

/// The generator's view of one `hack-pv-dot`.
#[derive(Clone, Copy, Debug)]
pub struct PvGeometry {
    pub head_dim: usize,
    pub partition: usize,
    pub kv_bits: usize,
    pub qp_bits: usize,
    pub lanes: usize,
}

impl PvGeometry {
    /// Bits of a code sum: `bits + ceil(log2 Pi)` (spec §15.5).
    pub fn sum_bits(&self, bits: usize) -> usize {
        bits + eq4::clog2(self.partition)
    }
    /// Packed words of a partition of `bits`-bit codes (spec §13.4).
    pub fn words(&self, bits: usize) -> usize {
        self.partition.div_ceil(32 / bits)
    }
    /// Width of `len_closed`: closed blocks up to `ceil(L_MAX / Pi) - 1`.
    pub fn closed_bits(&self) -> usize {
        eq4::clog2(L_MAX.div_ceil(self.partition))
    }
    /// Width of `len_tail`: `ceil(log2 Pi)`.
    pub fn tail_bits(&self) -> usize {
        eq4::clog2(self.partition)
    }
    /// The accumulator width of spec §15.16.5: every finite metadata word,
    /// every sum and every count the ports carry.
    pub fn acc_width(&self) -> usize {
        83 + self.qp_bits + self.kv_bits + eq4::clog2(self.partition) + self.closed_bits()
    }
    /// Accumulator words per bank.
    pub fn rows(&self) -> usize {
        self.head_dim / self.lanes
    }
    /// `S`, the dot-product stages of `Eq4`.
    pub fn tree_stages(&self) -> usize {
        eq4::tree_stages(self.partition, self.kv_bits)
    }
    /// Cycles from a query's last input beat (its transfer) to its first
    /// output beat, `out_ready` high: the flush (`S + 6`, the last beat's
    /// write and a margin), the read, D, `Resolve`.
    pub fn latency(&self) -> usize {
        self.tree_stages() + 9 + super::acc::RESOLVE_LATENCY
    }
    /// The banks, one per lane (the SRAM swap points).
    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        (0..self.lanes)
            .map(|k| MemInfo {
                module: format!("{module}_acc{k}_ram"),
                name: format!("acc{k}"),
                depth: self.rows(),
                width: 2 * self.acc_width(),
            })
            .collect()
    }
}

#[derive(LogicBlock)]
pub struct HackPvDot {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: idle, every stage empty
    pub reset: Signal<In, Bit>,
    /// a query's lengths are offered
    pub len_valid: Signal<In, Bit>,
    /// lengths accepted when len_valid and len_ready (a register: the unit is idle)
    pub len_ready: Signal<Out, Bit>,
    /// closed partitions of the query (blocks of partition tokens)
    pub len_closed: Signal<In, Bits<16>>,
    /// tokens of its open partition (FP16 tail)
    pub len_tail: Signal<In, Bits<16>>,
    /// a P partition is offered
    pub p_valid: Signal<In, Bit>,
    /// P accepted when p_valid and p_ready (a register: a closed block is owed and none is open)
    pub p_ready: Signal<Out, Bit>,
    /// the P partition's metadata word (spec §13.5): min [15:0], step [31:16]
    pub p_meta: Signal<In, Bits<32>>,
    /// the P partition's packed qp-bits codes (spec §13.4), word i at [32i+31:32i]
    pub p_words: Vec<Signal<In, Bits<32>>>,
    /// the P partition's code sum (spec §15.5), qp-bits + ceil(log2 partition) bits
    pub p_sum: Signal<In, Bits<16>>,
    /// a V partition is offered (channel j of the open block, in order)
    pub v_valid: Signal<In, Bit>,
    /// V accepted when v_valid and v_ready (a register: a block is open)
    pub v_ready: Signal<Out, Bit>,
    /// the V partition's metadata word (spec §13.5)
    pub v_meta: Signal<In, Bits<32>>,
    /// the V partition's packed kv-bits codes (spec §13.4)
    pub v_words: Vec<Signal<In, Bits<32>>>,
    /// the V partition's code sum (spec §15.5), kv-bits + ceil(log2 partition) bits
    pub v_sum: Signal<In, Bits<16>>,
    /// a beat of the open partition is offered
    pub t_valid: Signal<In, Bit>,
    /// tail beat accepted when t_valid and t_ready (a register: the closed blocks are done)
    pub t_ready: Signal<Out, Bit>,
    /// the token's FP16 probability p_t
    pub t_p: Signal<In, Bits<16>>,
    /// FP16 V of lanes channels of the token, lane i at [16i+15:16i]
    pub t_x: Vec<Signal<In, Bits<16>>>,
    /// a channel's output is offered
    pub out_valid: Signal<Out, Bit>,
    /// output taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// binary32 RNE of the channel's exact accumulator (channels in order)
    pub out_y: Signal<Out, Bits<32>>,
    /// the query had a NaN or infinity in a metadata word or a tail value (sanitised, spec §15.2)
    pub out_nonfinite: Signal<Out, Bit>,
    /// the beat is the query's last channel
    pub out_last: Signal<Out, Bit>,
    // ---- control ----
    phase: Reg<Bits<2>>,
    blocks: Reg<Bits<16>>,
    tails: Reg<Bits<16>>,
    vcnt: Reg<Bits<16>>,
    tcnt: Reg<Bits<16>>,
    p_have: Reg<Bit>,
    first_blk: Reg<Bit>,
    first_tail: Reg<Bit>,
    empty: Reg<Bit>,
    vfly: Reg<Bits<8>>,
    fl: Reg<Bits<8>>,
    qflag: Reg<Bit>,
    ocnt: Reg<Bits<16>>,
    len_take: Signal<Local, Bit>,
    p_take: Signal<Local, Bit>,
    v_take: Signal<Local, Bit>,
    t_take: Signal<Local, Bit>,
    // ---- the held P, the V beat ----
    pw: Vec<Reg<Bits<32>>>,
    pm: Reg<Bits<32>>,
    ps: Reg<Bits<16>>,
    vw: Vec<Reg<Bits<32>>>,
    vm: Reg<Bits<32>>,
    vs: Reg<Bits<16>>,
    vv: Reg<Bit>,
    vtag: Reg<Bits<16>>,
    eq: Eq4,
    place: TermPlace,
    /// the beat in `place`'s A stage: its tag (the read is issued then)
    va_v: Reg<Bit>,
    va_tag: Reg<Bits<16>>,
    // ---- tail stages ----
    t0_p: Reg<Bits<16>>,
    t0_x: Vec<Reg<Bits<16>>>,
    t0_v: Reg<Bit>,
    t0_tag: Reg<Bits<16>>,
    dec_p: Fp16Sig,
    dec_x: Vec<Fp16Sig>,
    t1_sp: Reg<Bits<16>>,
    t1_ep: Reg<Bits<8>>,
    t1_np: Reg<Bit>,
    t1_sx: Vec<Reg<Bits<16>>>,
    t1_ex: Vec<Reg<Bits<8>>>,
    t1_nx: Vec<Reg<Bit>>,
    t1_v: Reg<Bit>,
    t1_tag: Reg<Bits<16>>,
    t1_f: Reg<Bit>,
    anyf: Signal<Local, Bit>,
    x16: Signal<Local, Bits<16>>,
    y16: Signal<Local, Bits<16>>,
    t2_lo: Vec<Reg<Bits<32>>>,
    t2_hi: Vec<Reg<Bits<32>>>,
    t2_sh: Vec<Reg<Bits<8>>>,
    t2_n: Vec<Reg<Bit>>,
    t2_v: Reg<Bit>,
    t2_tag: Reg<Bits<16>>,
    t2_f: Reg<Bit>,
    t3_mag: Vec<Reg<Bits<32>>>,
    t3_sh: Vec<Reg<Bits<8>>>,
    t3_n: Vec<Reg<Bit>>,
    t3_v: Reg<Bit>,
    t3_tag: Reg<Bits<16>>,
    t3_f: Reg<Bit>,
    tmag: Signal<Local, Bits<32>>,
    tneg: Signal<Local, Bits<ACCW>>,
    t4_x: Vec<Reg<Bits<ACCW>>>,
    t4_n: Vec<Reg<Bit>>,
    t4_v: Reg<Bit>,
    t4_tag: Reg<Bits<16>>,
    t4_f: Reg<Bit>,
    // ---- M: the banks ----
    ram: Vec<DpRam<RA, RW>>,
    m_v: Signal<Local, Bit>,
    m_isv: Signal<Local, Bit>,
    m_tag: Signal<Local, Bits<16>>,
    m_word: Signal<Local, Bits<16>>,
    m_bank: Signal<Local, Bits<16>>,
    rd_word: Signal<Local, Bits<16>>,
    rd_bank: Signal<Local, Bits<16>>,
    old: Signal<Local, Bits<RW>>,
    o_s: Signal<Local, Bits<ACCW>>,
    o_c: Signal<Local, Bits<ACCW>>,
    i_x: Signal<Local, Bits<ACCW>>,
    i_y: Signal<Local, Bits<ACCW>>,
    ibit: Signal<Local, Bit>,
    x_s: Signal<Local, Bits<ACCW>>,
    x_c: Signal<Local, Bits<ACCW>>,
    y_s: Signal<Local, Bits<ACCW>>,
    y_c: Signal<Local, Bits<ACCW>>,
    wnew: Signal<Local, Bits<RW>>,
    lw: Vec<Reg<Bits<RW>>>,
    lw_v: Vec<Reg<Bit>>,
    lw_a: Vec<Reg<Bits<16>>>,
    // ---- drain ----
    adv: Signal<Local, Bit>,
    dj: Reg<Bits<16>>,
    dr_v: Reg<Bit>,
    dr_bank: Reg<Bits<16>>,
    d_re: Signal<Local, Bit>,
    d_s: Reg<Bits<ACCW>>,
    d_c: Reg<Bits<ACCW>>,
    d_v: Reg<Bit>,
    d_f: Reg<Bit>,
    res: Resolve,
    // ---- constants ----
    kb: Vec<Constant<Bits<16>>>,
    k_hd: Constant<Bits<16>>,
    k_hdm1: Constant<Bits<16>>,
    k_rm1: Constant<Bits<16>>,
    k_bmask: Constant<Bits<16>>,
    k_lg: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_first: Constant<Bits<16>>,
    k_jmask: Constant<Bits<16>>,
    k_cmask: Constant<Bits<16>>,
    k_tmask: Constant<Bits<16>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_vfly: Constant<Bits<8>>,
    k_fl: Constant<Bits<8>>,
    k_idle: Constant<Bits<2>>,
    k_run: Constant<Bits<2>>,
    k_flush: Constant<Bits<2>>,
    k_drain: Constant<Bits<2>>,
    k_lo6: Constant<Bits<16>>,
    k_s6: Constant<Bits<16>>,
    k_s6w: Constant<Bits<32>>,
    k_mask: Constant<Bits<ACCW>>,
    k_zero: Constant<Bits<ACCW>>,
    k_ones: Constant<Bits<ACCW>>,
    k_one32: Constant<Bits<32>>,
    k_w: Constant<Bits<32>>,
    k_zrw: Constant<Bits<RW>>,
    _wq: usize,
    _wk: usize,
    _lanes: usize,
}

impl HackPvDot {
    pub fn new(g: &PvGeometry, module: &str) -> Self {
        let (pi, b, a, lanes) = (g.partition, g.kv_bits, g.qp_bits, g.lanes);
        assert!(pi.is_multiple_of(16) && (16..=256).contains(&pi));
        assert!([2, 3, 4, 8].contains(&b) && [4, 8].contains(&a));
        assert!(lanes.is_power_of_two() && g.head_dim.is_multiple_of(lanes) && g.head_dim <= 1024);
        assert!(addr_bits(g.rows()) <= RA);
        let (wq, wk) = (g.words(a), g.words(b));
        let w = g.acc_width();
        let s = g.tree_stages();
        let lg = lanes.trailing_zeros() as u64;
        let c16 = |v: u64| Constant::<Bits<16>>::new(v.into());
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        let c2 = |v: u64| Constant::<Bits<2>>::new(v.into());
        let mask = (Bits::<ACCW>::from(1u64) << (w as u64)) - Bits::<ACCW>::from(1u64);
        let mems = g.memories(module);
        HackPvDot {
            clock: Default::default(),
            reset: Default::default(),
            len_valid: Default::default(),
            len_ready: Default::default(),
            len_closed: Default::default(),
            len_tail: Default::default(),
            p_valid: Default::default(),
            p_ready: Default::default(),
            p_meta: Default::default(),
            p_words: sigs(wq),
            p_sum: Default::default(),
            v_valid: Default::default(),
            v_ready: Default::default(),
            v_meta: Default::default(),
            v_words: sigs(wk),
            v_sum: Default::default(),
            t_valid: Default::default(),
            t_ready: Default::default(),
            t_p: Default::default(),
            t_x: sigs(lanes),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_y: Default::default(),
            out_nonfinite: Default::default(),
            out_last: Default::default(),
            phase: Reg::default(),
            blocks: Reg::default(),
            tails: Reg::default(),
            vcnt: Reg::default(),
            tcnt: Reg::default(),
            p_have: Reg::default(),
            first_blk: Reg::default(),
            first_tail: Reg::default(),
            empty: Reg::default(),
            vfly: Reg::default(),
            fl: Reg::default(),
            qflag: Reg::default(),
            ocnt: Reg::default(),
            len_take: Default::default(),
            p_take: Default::default(),
            v_take: Default::default(),
            t_take: Default::default(),
            pw: regs(wq),
            pm: Reg::default(),
            ps: Reg::default(),
            vw: regs(wk),
            vm: Reg::default(),
            vs: Reg::default(),
            vv: Reg::default(),
            vtag: Reg::default(),
            eq: Eq4::new(pi, b, a),
            place: TermPlace::new(eq4::TERMS, w),
            va_v: Reg::default(),
            va_tag: Reg::default(),
            t0_p: Reg::default(),
            t0_x: regs(lanes),
            t0_v: Reg::default(),
            t0_tag: Reg::default(),
            dec_p: Fp16Sig::default(),
            dec_x: (0..lanes).map(|_| Fp16Sig::default()).collect(),
            t1_sp: Reg::default(),
            t1_ep: Reg::default(),
            t1_np: Reg::default(),
            t1_sx: regs(lanes),
            t1_ex: regs(lanes),
            t1_nx: regs(lanes),
            t1_v: Reg::default(),
            t1_tag: Reg::default(),
            t1_f: Reg::default(),
            anyf: Default::default(),
            x16: Default::default(),
            y16: Default::default(),
            t2_lo: regs(lanes),
            t2_hi: regs(lanes),
            t2_sh: regs(lanes),
            t2_n: regs(lanes),
            t2_v: Reg::default(),
            t2_tag: Reg::default(),
            t2_f: Reg::default(),
            t3_mag: regs(lanes),
            t3_sh: regs(lanes),
            t3_n: regs(lanes),
            t3_v: Reg::default(),
            t3_tag: Reg::default(),
            t3_f: Reg::default(),
            tmag: Default::default(),
            tneg: Default::default(),
            t4_x: regs(lanes),
            t4_n: regs(lanes),
            t4_v: Reg::default(),
            t4_tag: Reg::default(),
            t4_f: Reg::default(),
            ram: mems
                .iter()
                .map(|m| DpRam::new(&m.module, &m.name, m.depth, m.width))
                .collect(),
            m_v: Default::default(),
            m_isv: Default::default(),
            m_tag: Default::default(),
            m_word: Default::default(),
            m_bank: Default::default(),
            rd_word: Default::default(),
            rd_bank: Default::default(),
            old: Default::default(),
            o_s: Default::default(),
            o_c: Default::default(),
            i_x: Default::default(),
            i_y: Default::default(),
            ibit: Default::default(),
            x_s: Default::default(),
            x_c: Default::default(),
            y_s: Default::default(),
            y_c: Default::default(),
            wnew: Default::default(),
            lw: regs(lanes),
            lw_v: regs(lanes),
            lw_a: regs(lanes),
            adv: Default::default(),
            dj: Reg::default(),
            dr_v: Reg::default(),
            dr_bank: Reg::default(),
            d_re: Default::default(),
            d_s: Reg::default(),
            d_c: Reg::default(),
            d_v: Reg::default(),
            d_f: Reg::default(),
            res: Resolve::new(w),
            kb: consts((0..lanes as u64).collect::<Vec<_>>()),
            k_hd: c16(g.head_dim as u64),
            k_hdm1: c16(g.head_dim as u64 - 1),
            k_rm1: c16(g.rows() as u64 - 1),
            k_bmask: c16(lanes as u64 - 1),
            k_lg: c16(lg),
            k_one16: c16(1),
            k_zero16: c16(0),
            k_first: c16(0x8000),
            k_jmask: c16(0x7FFF),
            k_cmask: c16((1u64 << g.closed_bits()) - 1),
            k_tmask: c16((1u64 << g.tail_bits()) - 1),
            k_one8: c8(1),
            k_zero8: c8(0),
            k_vfly: c8(s as u64 + 1),
            k_fl: c8(s as u64 + 4),
            k_idle: c2(0),
            k_run: c2(1),
            k_flush: c2(2),
            k_drain: c2(3),
            k_lo6: c16(63),
            k_s6: c16(6),
            k_s6w: Constant::new(6u64.into()),
            k_mask: Constant::new(mask),
            k_zero: Constant::new(0u64.into()),
            k_ones: Constant::new(Bits::<ACCW>::mask()),
            k_one32: Constant::new(1u64.into()),
            k_w: Constant::new((w as u64).into()),
            k_zrw: Constant::new(0u64.into()),
            _wq: wq,
            _wk: wk,
            _lanes: lanes,
        }
    }
}

impl Logic for HackPvDot {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- register wiring ----
        clock!(
            self, clock, phase, blocks, tails, vcnt, tcnt, p_have, first_blk, first_tail, empty,
            vfly, fl
        );
        clock!(
            self, clock, qflag, ocnt, pm, ps, vm, vs, vv, vtag, eq, place, va_v, va_tag, t0_p,
            t0_v, t0_tag
        );
        clock!(
            self, clock, t1_sp, t1_ep, t1_np, t1_v, t1_tag, t1_f, t2_v, t2_tag, t2_f, t3_v, t3_tag,
            t3_f
        );
        clock!(self, clock, t4_v, t4_tag, t4_f, dj, dr_v, dr_bank, d_s, d_c, d_v, d_f, res);
        self.phase.reset.next = self.reset.val();
        self.blocks.reset.next = self.reset.val();
        self.tails.reset.next = self.reset.val();
        self.vcnt.reset.next = self.reset.val();
        self.tcnt.reset.next = self.reset.val();
        self.p_have.reset.next = self.reset.val();
        self.first_blk.reset.next = self.reset.val();
        self.first_tail.reset.next = self.reset.val();
        self.empty.reset.next = self.reset.val();
        self.vfly.reset.next = self.reset.val();
        self.fl.reset.next = self.reset.val();
        self.qflag.reset.next = self.reset.val();
        self.ocnt.reset.next = self.reset.val();
        self.pm.reset.next = self.reset.val();
        self.ps.reset.next = self.reset.val();
        self.vm.reset.next = self.reset.val();
        self.vs.reset.next = self.reset.val();
        self.vv.reset.next = self.reset.val();
        self.vtag.reset.next = self.reset.val();
        self.eq.reset.next = self.reset.val();
        self.place.reset.next = self.reset.val();
        self.va_v.reset.next = self.reset.val();
        self.va_tag.reset.next = self.reset.val();
        self.t0_p.reset.next = self.reset.val();
        self.t0_v.reset.next = self.reset.val();
        self.t0_tag.reset.next = self.reset.val();
        self.t1_sp.reset.next = self.reset.val();
        self.t1_ep.reset.next = self.reset.val();
        self.t1_np.reset.next = self.reset.val();
        self.t1_v.reset.next = self.reset.val();
        self.t1_tag.reset.next = self.reset.val();
        self.t1_f.reset.next = self.reset.val();
        self.t2_v.reset.next = self.reset.val();
        self.t2_tag.reset.next = self.reset.val();
        self.t2_f.reset.next = self.reset.val();
        self.t3_v.reset.next = self.reset.val();
        self.t3_tag.reset.next = self.reset.val();
        self.t3_f.reset.next = self.reset.val();
        self.t4_v.reset.next = self.reset.val();
        self.t4_tag.reset.next = self.reset.val();
        self.t4_f.reset.next = self.reset.val();
        self.dj.reset.next = self.reset.val();
        self.dr_v.reset.next = self.reset.val();
        self.dr_bank.reset.next = self.reset.val();
        self.d_s.reset.next = self.reset.val();
        self.d_c.reset.next = self.reset.val();
        self.d_v.reset.next = self.reset.val();
        self.d_f.reset.next = self.reset.val();
        self.res.reset.next = self.reset.val();
        // the accumulate side never stalls; only the drain waits on out_ready
        self.eq.en.next = true;
        self.place.en.next = true;
        self.phase.en.next = true;
        self.phase.d.next = self.phase.q.val();
        self.blocks.en.next = false;
        self.blocks.d.next = self.blocks.q.val();
        self.tails.en.next = false;
        self.tails.d.next = self.tails.q.val();
        self.vcnt.en.next = false;
        self.vcnt.d.next = self.vcnt.q.val() + self.k_one16.val();
        self.tcnt.en.next = false;
        self.tcnt.d.next = self.tcnt.q.val() + self.k_one16.val();
        self.p_have.en.next = false;
        self.p_have.d.next = self.p_have.q.val();
        self.first_blk.en.next = false;
        self.first_blk.d.next = self.first_blk.q.val();
        self.first_tail.en.next = false;
        self.first_tail.d.next = self.first_tail.q.val();
        self.empty.en.next = false;
        self.empty.d.next = self.empty.q.val();
        self.vfly.en.next = true;
        self.vfly.d.next = self.vfly.q.val();
        self.fl.en.next = true;
        self.fl.d.next = self.fl.q.val();
        self.qflag.en.next = true;
        self.qflag.d.next = self.qflag.q.val();
        self.ocnt.en.next = false;
        self.ocnt.d.next = self.ocnt.q.val() + self.k_one16.val();
        for i in 0..self._wq {
            self.pw[i].clock.next = self.clock.val();
            self.pw[i].reset.next = self.reset.val();
            self.pw[i].d.next = self.p_words[i].val();
            self.pw[i].en.next = false;
        }
        for i in 0..self._wk {
            self.vw[i].clock.next = self.clock.val();
            self.vw[i].reset.next = self.reset.val();
            self.vw[i].d.next = self.v_words[i].val();
            self.vw[i].en.next = false;
        }

        // ---- the streams: lengths, then P and its block's V beats, then the tail ----
        self.len_ready.next = self.phase.q.val() == self.k_idle.val();
        self.p_ready.next = (self.phase.q.val() == self.k_run.val())
            & !self.p_have.q.val()
            & (self.blocks.q.val() != self.k_zero16.val());
        self.v_ready.next = (self.phase.q.val() == self.k_run.val()) & self.p_have.q.val();
        self.t_ready.next = (self.phase.q.val() == self.k_run.val())
            & !self.p_have.q.val()
            & (self.blocks.q.val() == self.k_zero16.val())
            & (self.tails.q.val() != self.k_zero16.val())
            & (self.vfly.q.val() == self.k_zero8.val());
        self.len_take.next = self.len_valid.val() & (self.phase.q.val() == self.k_idle.val());
        self.p_take.next = self.p_valid.val() & self.p_ready.val();
        self.v_take.next = self.v_valid.val() & self.v_ready.val();
        self.t_take.next = self.t_valid.val() & self.t_ready.val();
        if self.len_take.val() {
            self.phase.d.next = self.k_run.val();
            self.blocks.d.next = self.len_closed.val() & self.k_cmask.val();
            self.blocks.en.next = true;
            self.tails.d.next = self.len_tail.val() & self.k_tmask.val();
            self.tails.en.next = true;
            self.first_blk.d.next = true;
            self.first_blk.en.next = true;
            self.first_tail.d.next =
                (self.len_closed.val() & self.k_cmask.val()) == self.k_zero16.val();
            self.first_tail.en.next = true;
            self.empty.d.next = ((self.len_closed.val() & self.k_cmask.val())
                == self.k_zero16.val())
                & ((self.len_tail.val() & self.k_tmask.val()) == self.k_zero16.val());
            self.empty.en.next = true;
            self.qflag.d.next = false;
        }
        if self.p_take.val() {
            self.p_have.d.next = true;
            self.p_have.en.next = true;
            self.blocks.d.next = self.blocks.q.val() - self.k_one16.val();
            self.blocks.en.next = true;
            self.vcnt.d.next = self.k_zero16.val();
            self.vcnt.en.next = true;
        }
        self.pm.d.next = self.p_meta.val();
        self.pm.en.next = self.p_take.val();
        self.ps.d.next = self.p_sum.val();
        self.ps.en.next = self.p_take.val();
        for i in 0..self._wq {
            self.pw[i].en.next = self.p_take.val();
        }
        // a V beat: registered, then into Eq4 with the held P
        self.vm.d.next = self.v_meta.val();
        self.vm.en.next = self.v_take.val();
        self.vs.d.next = self.v_sum.val();
        self.vs.en.next = self.v_take.val();
        for i in 0..self._wk {
            self.vw[i].en.next = self.v_take.val();
        }
        self.vv.d.next = self.v_take.val();
        self.vv.en.next = true;
        self.vtag.d.next = self.vcnt.q.val();
        if self.first_blk.q.val() {
            self.vtag.d.next = self.vcnt.q.val() | self.k_first.val();
        }
        self.vtag.en.next = self.v_take.val();
        if self.v_take.val() {
            self.vcnt.en.next = true;
            self.vfly.d.next = self.k_vfly.val();
            if self.vcnt.q.val() == self.k_hdm1.val() {
                self.p_have.d.next = false;
                self.p_have.en.next = true;
                self.first_blk.d.next = false;
                self.first_blk.en.next = true;
            }
        } else if self.vfly.q.val() != self.k_zero8.val() {
            self.vfly.d.next = self.vfly.q.val() - self.k_one8.val();
        }
        // a tail beat: word tcnt of every bank
        if self.t_take.val() {
            self.tcnt.en.next = true;
            if self.tcnt.q.val() == self.k_rm1.val() {
                self.tcnt.d.next = self.k_zero16.val();
                self.tails.d.next = self.tails.q.val() - self.k_one16.val();
                self.tails.en.next = true;
                self.first_tail.d.next = false;
                self.first_tail.en.next = true;
            }
        }
        // the query's beats all taken: wait for the last write, then drain
        if (self.phase.q.val() == self.k_run.val())
            & !self.p_have.q.val()
            & (self.blocks.q.val() == self.k_zero16.val())
            & (self.tails.q.val() == self.k_zero16.val())
        {
            self.phase.d.next = self.k_flush.val();
            self.fl.d.next = self.k_fl.val();
        }
        if self.phase.q.val() == self.k_flush.val() {
            self.fl.d.next = self.fl.q.val() - self.k_one8.val();
            if self.fl.q.val() == self.k_zero8.val() {
                self.phase.d.next = self.k_drain.val();
                self.fl.d.next = self.k_zero8.val();
            }
        }

        // ---- V: Eq. 4 of (P, V_j), then one carry-save pair ----
        for i in 0..self._wq {
            self.eq.a_words[i].next = self.pw[i].q.val();
        }
        for i in 0..self._wk {
            self.eq.b_words[i].next = self.vw[i].q.val();
        }
        self.eq.a_meta.next = self.pm.q.val();
        self.eq.a_sum.next = self.ps.q.val();
        self.eq.b_meta.next = self.vm.q.val();
        self.eq.b_sum.next = self.vs.q.val();
        self.eq.in_valid.next = self.vv.q.val();
        self.eq.in_tag.next = self.vtag.q.val();
        self.place.in_valid.next = self.eq.out_valid.val();
        self.place.in_tag.next = self.eq.out_tag.val();
        self.place.in_flag.next = self.eq.out_flag.val();
        for i in 0..5 {
            self.place.in_mag[i].next = self.eq.out_mag[i].val();
            self.place.in_sh[i].next = self.eq.out_sh[i].val();
            self.place.in_neg[i].next = self.eq.out_neg[i].val();
        }
        self.va_v.en.next = true;
        self.va_v.d.next = self.eq.out_valid.val();
        self.va_tag.en.next = true;
        self.va_tag.d.next = self.eq.out_tag.val();

        // ---- tail: T0 the beat, T1 decoded, T2 pieces, T3 product, T4 placed ----
        self.t0_p.d.next = self.t_p.val();
        self.t0_p.en.next = self.t_take.val();
        self.t0_v.d.next = self.t_take.val();
        self.t0_v.en.next = true;
        self.t0_tag.d.next = self.tcnt.q.val();
        if self.first_tail.q.val() {
            self.t0_tag.d.next = self.tcnt.q.val() | self.k_first.val();
        }
        self.t0_tag.en.next = self.t_take.val();
        self.dec_p.x.next = self.t0_p.q.val();
        self.t1_sp.d.next = self.dec_p.sig.val();
        self.t1_ep.d.next = self.dec_p.e.val();
        self.t1_np.d.next = self.dec_p.neg.val();
        self.anyf.next = self.dec_p.nonfinite.val();
        self.t1_v.d.next = self.t0_v.q.val();
        self.t1_tag.d.next = self.t0_tag.q.val();
        self.t2_v.d.next = self.t1_v.q.val();
        self.t2_tag.d.next = self.t1_tag.q.val();
        self.t2_f.d.next = self.t1_f.q.val();
        self.t3_v.d.next = self.t2_v.q.val();
        self.t3_tag.d.next = self.t2_tag.q.val();
        self.t3_f.d.next = self.t2_f.q.val();
        self.t4_v.d.next = self.t3_v.q.val();
        self.t4_tag.d.next = self.t3_tag.q.val();
        self.t4_f.d.next = self.t3_f.q.val();
        self.t1_sp.en.next = true;
        self.t1_ep.en.next = true;
        self.t1_np.en.next = true;
        self.t1_v.en.next = true;
        self.t1_tag.en.next = true;
        self.t1_f.en.next = true;
        self.t2_v.en.next = true;
        self.t2_tag.en.next = true;
        self.t2_f.en.next = true;
        self.t3_v.en.next = true;
        self.t3_tag.en.next = true;
        self.t3_f.en.next = true;
        self.t4_v.en.next = true;
        self.t4_tag.en.next = true;
        self.t4_f.en.next = true;
        for k in 0..self._lanes {
            self.t0_x[k].clock.next = self.clock.val();
            self.t0_x[k].reset.next = self.reset.val();
            self.t0_x[k].d.next = self.t_x[k].val();
            self.t0_x[k].en.next = self.t_take.val();
            self.dec_x[k].x.next = self.t0_x[k].q.val();
            self.anyf.next = self.anyf.val() | self.dec_x[k].nonfinite.val();
            self.t1_sx[k].clock.next = self.clock.val();
            self.t1_sx[k].reset.next = self.reset.val();
            self.t1_sx[k].en.next = true;
            self.t1_sx[k].d.next = self.dec_x[k].sig.val();
            self.t1_ex[k].clock.next = self.clock.val();
            self.t1_ex[k].reset.next = self.reset.val();
            self.t1_ex[k].en.next = true;
            self.t1_ex[k].d.next = self.dec_x[k].e.val();
            self.t1_nx[k].clock.next = self.clock.val();
            self.t1_nx[k].reset.next = self.reset.val();
            self.t1_nx[k].en.next = true;
            self.t1_nx[k].d.next = self.dec_x[k].neg.val();
            // T2: sig_p x sig_x as sig_x[5:0] and sig_x[10:6] pieces
            self.x16.next = self.t1_sx[k].q.val();
            self.t2_lo[k].clock.next = self.clock.val();
            self.t2_lo[k].reset.next = self.reset.val();
            self.t2_lo[k].en.next = true;
            self.y16.next = self.x16.val() & self.k_lo6.val();
            self.t2_lo[k].d.next = self.t1_sp.q.val() * self.y16.val();
            self.t2_hi[k].clock.next = self.clock.val();
            self.t2_hi[k].reset.next = self.reset.val();
            self.t2_hi[k].en.next = true;
            self.y16.next = self.x16.val() >> self.k_s6.val();
            self.t2_hi[k].d.next = self.t1_sp.q.val() * self.y16.val();
            self.t2_sh[k].clock.next = self.clock.val();
            self.t2_sh[k].reset.next = self.reset.val();
            self.t2_sh[k].en.next = true;
            self.t2_sh[k].d.next = self.t1_ep.q.val() + self.t1_ex[k].q.val();
            self.t2_n[k].clock.next = self.clock.val();
            self.t2_n[k].reset.next = self.reset.val();
            self.t2_n[k].en.next = true;
            self.t2_n[k].d.next = self.t1_np.q.val() ^ self.t1_nx[k].q.val();
            // T3: the product (22 bits)
            self.t3_mag[k].clock.next = self.clock.val();
            self.t3_mag[k].reset.next = self.reset.val();
            self.t3_mag[k].en.next = true;
            self.t3_mag[k].d.next =
                self.t2_lo[k].q.val() + (self.t2_hi[k].q.val() << self.k_s6w.val());
            self.t3_sh[k].clock.next = self.clock.val();
            self.t3_sh[k].reset.next = self.reset.val();
            self.t3_sh[k].en.next = true;
            self.t3_sh[k].d.next = self.t2_sh[k].q.val();
            self.t3_n[k].clock.next = self.clock.val();
            self.t3_n[k].reset.next = self.reset.val();
            self.t3_n[k].en.next = true;
            self.t3_n[k].d.next = self.t2_n[k].q.val();
            // T4: placed, inverted when negative (the +1 is the pair's second word)
            self.tmag.next = self.t3_mag[k].q.val();
            self.tneg.next = self.k_zero.val();
            if self.t3_n[k].q.val() {
                self.tneg.next = self.k_ones.val();
            }
            self.t4_x[k].clock.next = self.clock.val();
            self.t4_x[k].reset.next = self.reset.val();
            self.t4_x[k].en.next = true;
            self.t4_x[k].d.next = ((bit_cast::<ACCW, 32>(self.tmag.val())
                << self.t3_sh[k].q.val())
                ^ self.tneg.val())
                & self.k_mask.val();
            self.t4_n[k].clock.next = self.clock.val();
            self.t4_n[k].reset.next = self.reset.val();
            self.t4_n[k].en.next = true;
            self.t4_n[k].d.next = self.t3_n[k].q.val();
        }
        self.t1_f.d.next = self.anyf.val() & self.t0_v.q.val();

        // ---- M: read (the stage before), add, write back; drain reads ----
        self.adv.next = !self.res.out_valid.val() | self.out_ready.val();
        self.d_re.next = (self.phase.q.val() == self.k_drain.val())
            & (self.dj.q.val() != self.k_hd.val())
            & (!self.dr_v.q.val() | self.adv.val());
        // the read address: a V beat in place's A stage, a tail beat in T3, or the drain
        self.rd_word.next = self.t3_tag.q.val() & self.k_jmask.val();
        self.rd_bank.next = self.k_zero16.val();
        if self.va_v.q.val() {
            self.rd_word.next = (self.va_tag.q.val() & self.k_jmask.val()) >> self.k_lg.val();
            self.rd_bank.next = self.va_tag.q.val() & self.k_bmask.val();
        }
        if self.phase.q.val() == self.k_drain.val() {
            self.rd_word.next = self.dj.q.val() >> self.k_lg.val();
            self.rd_bank.next = self.dj.q.val() & self.k_bmask.val();
        }
        // the beat at M: a V beat (place's pair, one bank) or a tail beat (every bank)
        self.m_isv.next = self.place.out_valid.val();
        self.m_v.next = self.place.out_valid.val() | self.t4_v.q.val();
        self.m_tag.next = self.t4_tag.q.val();
        self.m_word.next = self.t4_tag.q.val() & self.k_jmask.val();
        self.m_bank.next = self.k_zero16.val();
        if self.place.out_valid.val() {
            self.m_tag.next = self.place.out_tag.val();
            self.m_word.next = (self.place.out_tag.val() & self.k_jmask.val()) >> self.k_lg.val();
            self.m_bank.next = self.place.out_tag.val() & self.k_bmask.val();
        }
        if self.m_v.val() {
            self.qflag.d.next = self.qflag.q.val()
                | (self.place.out_valid.val() & self.place.out_flag.val())
                | self.t4_f.q.val();
        }
        if self.len_take.val() {
            self.qflag.d.next = false;
        }
        for k in 0..self._lanes {
            self.ram[k].clock.next = self.clock.val();
            self.ram[k].raddr.next = bit_cast::<RA, 16>(self.rd_word.val());
            self.ram[k].re.next = (self.t3_v.q.val() & !self.va_v.q.val())
                | (self.va_v.q.val() & (self.rd_bank.val() == self.kb[k].val()))
                | (self.d_re.val() & (self.rd_bank.val() == self.kb[k].val()));
            // the old pair: 0 at a channel's first beat, else the word read or the one just written
            self.old.next = self.ram[k].rdata.val();
            if self.lw_v[k].q.val() & (self.lw_a[k].q.val() == self.m_word.val()) {
                self.old.next = self.lw[k].q.val();
            }
            if (self.m_tag.val() & self.k_first.val()) != self.k_zero16.val() {
                self.old.next = self.k_zrw.val();
            }
            self.o_s.next = bit_cast::<ACCW, RW>(self.old.val()) & self.k_mask.val();
            self.o_c.next =
                bit_cast::<ACCW, RW>(self.old.val() >> self.k_w.val()) & self.k_mask.val();
            self.i_x.next = self.t4_x[k].q.val();
            // (casts take no indexed signal: a scalar local first)
            self.ibit.next = self.t4_n[k].q.val();
            self.i_y.next = bit_cast::<ACCW, 1>(self.ibit.val().into());
            if self.m_isv.val() {
                self.i_x.next = self.place.out_s.val();
                self.i_y.next = self.place.out_c.val();
            }
            self.x_s.next = self.o_s.val() ^ self.o_c.val() ^ self.i_x.val();
            self.x_c.next = (((self.o_s.val() & self.o_c.val())
                | (self.o_s.val() & self.i_x.val())
                | (self.o_c.val() & self.i_x.val()))
                << self.k_one32.val())
                & self.k_mask.val();
            self.y_s.next = self.x_s.val() ^ self.x_c.val() ^ self.i_y.val();
            self.y_c.next = (((self.x_s.val() & self.x_c.val())
                | (self.x_s.val() & self.i_y.val())
                | (self.x_c.val() & self.i_y.val()))
                << self.k_one32.val())
                & self.k_mask.val();
            self.wnew.next = bit_cast::<RW, ACCW>(self.y_s.val())
                | (bit_cast::<RW, ACCW>(self.y_c.val()) << self.k_w.val());
            self.ram[k].we.next =
                self.m_v.val() & (!self.m_isv.val() | (self.m_bank.val() == self.kb[k].val()));
            self.ram[k].waddr.next = bit_cast::<RA, 16>(self.m_word.val());
            self.ram[k].wdata.next = self.wnew.val();
            self.lw[k].clock.next = self.clock.val();
            self.lw[k].reset.next = self.reset.val();
            self.lw[k].en.next = true;
            self.lw[k].d.next = self.wnew.val();
            self.lw_a[k].clock.next = self.clock.val();
            self.lw_a[k].reset.next = self.reset.val();
            self.lw_a[k].en.next = true;
            self.lw_a[k].d.next = self.m_word.val();
            self.lw_v[k].clock.next = self.clock.val();
            self.lw_v[k].reset.next = self.reset.val();
            self.lw_v[k].en.next = true;
            self.lw_v[k].d.next =
                self.m_v.val() & (!self.m_isv.val() | (self.m_bank.val() == self.kb[k].val()));
        }

        // ---- drain: channel dj read, D the pair, Resolve ----
        self.dj.en.next = false;
        self.dj.d.next = self.dj.q.val() + self.k_one16.val();
        if self.d_re.val() {
            self.dj.en.next = true;
        }
        self.dr_v.en.next = true;
        self.dr_v.d.next = self.d_re.val() | (self.dr_v.q.val() & !self.adv.val());
        self.dr_bank.en.next = self.d_re.val();
        self.dr_bank.d.next = self.rd_bank.val();
        if (self.phase.q.val() == self.k_drain.val())
            & (self.dj.q.val() == self.k_hd.val())
            & !self.dr_v.q.val()
        {
            self.phase.d.next = self.k_idle.val();
            self.dj.d.next = self.k_zero16.val();
            self.dj.en.next = true;
        }
        self.d_s.en.next = self.adv.val();
        self.d_c.en.next = self.adv.val();
        self.d_v.en.next = self.adv.val();
        self.d_f.en.next = self.adv.val();
        self.d_v.d.next = self.dr_v.q.val();
        self.d_f.d.next = self.qflag.q.val();
        self.d_s.d.next = self.k_zero.val();
        self.d_c.d.next = self.k_zero.val();
        for k in 0..self._lanes {
            if (self.dr_bank.q.val() == self.kb[k].val()) & !self.empty.q.val() {
                self.old.next = self.ram[k].rdata.val();
                self.d_s.d.next = bit_cast::<ACCW, RW>(self.old.val()) & self.k_mask.val();
                self.d_c.d.next =
                    bit_cast::<ACCW, RW>(self.old.val() >> self.k_w.val()) & self.k_mask.val();
            }
        }
        self.res.en.next = self.adv.val();
        self.res.in_valid.next = self.d_v.q.val();
        self.res.in_s.next = self.d_s.q.val();
        self.res.in_c.next = self.d_c.q.val();
        self.res.in_flag.next = self.d_f.q.val();
        self.out_valid.next = self.res.out_valid.val();
        self.out_y.next = self.res.out_y.val();
        self.out_nonfinite.next = self.res.out_flag.val();
        self.out_last.next = self.ocnt.q.val() == self.k_hdm1.val();
        if self.res.out_valid.val() & self.out_ready.val() {
            self.ocnt.en.next = true;
            if self.ocnt.q.val() == self.k_hdm1.val() {
                self.ocnt.d.next = self.k_zero16.val();
            }
        }
    }
}
