//! Per-token group parameters of the quantization engine.
//! Paper: Oaken §4.3 Eq. 2 (scale from the group's min and max), §4.4.
//! Spec: docs/spec.md §2.6 (min = RD(v_min), step = RU(ceil(D / (2^m-1)))),
//! §2.5 (what v is per group).
//!
//! Input: one token's subgroup extremes (order keys) and its thresholds.
//! Output, `latency` cycles later: each group's min and step as FP16. Every
//! stage advances every cycle; a token arrives at most once per beat period,
//! so the thresholds, segment counts and status wait in a small FIFO instead
//! of riding through every stage.

use super::extremes::{NODE, SUBGROUPS};
use crate::prim::div_const::DivMersenneCeil;
use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::fp16::{Fp16ToUnits, UnitsToFp16, FX, RD, RU};
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

// Groups in metadata order: outer, middle, inner. Group g reads its lower
// side from subgroup g and its upper side from subgroup 4-g (the inner group
// has one side).

#[derive(LogicBlock)]
pub struct TokenParams {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// One token's summary is present (a one-cycle pulse).
    pub in_valid: Signal<In, Bit>,
    /// Subgroup nodes (extremes.rs layout).
    pub in_node: Vec<Signal<In, Bits<NODE>>>,
    /// Threshold set {hi_outer, hi_inner, lo_inner, lo_outer}.
    pub in_thr: Signal<In, Bits<64>>,
    /// Per-segment outlier counts and the token status, passed through.
    pub in_counts: Vec<Signal<In, Bits<8>>>,
    pub in_status: Signal<In, Bits<2>>,
    pub out_valid: Signal<Out, Bit>,
    /// Group g's min and step, FP16 (both +0 for an empty group).
    pub out_min: Vec<Signal<Out, Bits<16>>>,
    pub out_step: Vec<Signal<Out, Bits<16>>>,
    pub out_thr: Signal<Out, Bits<64>>,
    pub out_counts: Vec<Signal<Out, Bits<8>>>,
    pub out_status: Signal<Out, Bits<2>>,
    // S1, S2: extremes (0..10) and thresholds (10 lo_outer, 11 hi_outer,
    // 12 lo_inner, 13 hi_inner) as magnitude and sign, then signed
    conv: Vec<Fp16ToUnits>,
    s1_mag: Vec<Reg<Bits<FX>>>,
    s1_neg: Vec<Reg<Bit>>,
    s1_p: Vec<Reg<Bit>>,
    s2_u: Vec<Reg<Bits<FX>>>,
    s2_p: Vec<Reg<Bit>>,
    // S3: per group, v_min and v_max candidates of each side
    s3_lmin: Vec<Reg<Bits<FX>>>,
    s3_lmax: Vec<Reg<Bits<FX>>>,
    s3_hmin: Vec<Reg<Bits<FX>>>,
    s3_hmax: Vec<Reg<Bits<FX>>>,
    s3_pl: Vec<Reg<Bit>>,
    s3_ph: Vec<Reg<Bit>>,
    // min candidates as magnitude (s3_lmin, s3_hmin) and sign
    s3_lneg: Vec<Reg<Bit>>,
    s3_hneg: Vec<Reg<Bit>>,
    // S4: |v_min| and its sign, v_max, group present
    s4_min: Vec<Reg<Bits<FX>>>,
    s4_neg: Vec<Reg<Bit>>,
    s4_max: Vec<Reg<Bits<FX>>>,
    s4_p: Vec<Reg<Bit>>,
    // RD(v_min), with v_max and present riding along (group g stage i at 3g+i)
    rd: Vec<UnitsToFp16>,
    rd_max: Vec<Reg<Bits<FX>>>,
    rd_p: Vec<Reg<Bit>>,
    // S8: min back in units; S9: D = v_max - min
    minconv: Vec<Fp16ToUnits>,
    s8_mag: Vec<Reg<Bits<FX>>>,
    s8_neg: Vec<Reg<Bit>>,
    s8_max: Vec<Reg<Bits<FX>>>,
    s9_d: Vec<Reg<Bits<FX>>>,
    // then ceil(D / (2^m - 1)) and RU; min and present ride a delay line
    div: Vec<DivMersenneCeil<FX>>,
    ru: Vec<UnitsToFp16>,
    dl_min: Vec<Reg<Bits<16>>>,
    dl_p: Vec<Reg<Bit>>,
    // token valid: S1..S4, the three RD stages, S8, S9, after the divider the
    // three RU stages
    vs: Vec<Reg<Bit>>,
    vru: Vec<Reg<Bit>>,
    // side FIFO: thresholds, counts, status
    side: FifoCtrl,
    side_thr: FifoMem<64>,
    side_cnt: Vec<FifoMem<8>>,
    side_st: FifoMem<2>,
    thr_off: Vec<Constant<Bits<32>>>,
    mode_rd: Constant<Bits<2>>,
    mode_ru: Constant<Bits<2>>,
    sign16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    zero_fx: Constant<Bits<FX>>,
    max_off: Constant<Bits<32>>,
    present_bit: Constant<Bits<32>>,
    msb: Constant<Bits<32>>,
    tkey: Signal<Local, Bits<16>>,
    cin: Signal<Local, Bit>,
    tfp: Signal<Local, Bits<16>>,
    /// Per group: the group codes a shifted value / a plain one.
    _shifted: [usize; 3],
    _plain: [usize; 3],
    _segs: usize,
    _units: usize,
    /// Registers in the min/present delay line (RD output to the end).
    _dlm: usize,
}

/// Valid registers S1, S2, S3, S4, RD x3, S8, S9.
const VS: usize = 9;

impl TokenParams {
    /// `divisors[g] = 2^m - 1` and `shifted[g]` per group (spec §2.5);
    /// `fifo` = side FIFO depth.
    pub fn new(divisors: [u64; 3], shifted: [bool; 3], segments: usize, fifo: usize) -> Self {
        let dlm = 2 + DivMersenneCeil::<FX>::latency() + 3;
        // inner thresholds are needed only by a shifted middle group
        let units = if shifted[1] { 14 } else { 12 };
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        TokenParams {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_node: (0..SUBGROUPS).map(|_| Default::default()).collect(),
            in_thr: Default::default(),
            in_counts: (0..segments).map(|_| Default::default()).collect(),
            in_status: Default::default(),
            out_valid: Default::default(),
            out_min: (0..3).map(|_| Default::default()).collect(),
            out_step: (0..3).map(|_| Default::default()).collect(),
            out_thr: Default::default(),
            out_counts: (0..segments).map(|_| Default::default()).collect(),
            out_status: Default::default(),
            conv: (0..units).map(|_| Fp16ToUnits::default()).collect(),
            s1_mag: regs(units),
            s1_neg: regs(units),
            s1_p: regs(SUBGROUPS),
            s2_u: regs(units),
            s2_p: regs(SUBGROUPS),
            s3_lmin: regs(3),
            s3_lmax: regs(3),
            s3_hmin: regs(3),
            s3_hmax: regs(3),
            s3_pl: regs(3),
            s3_ph: regs(3),
            s3_lneg: regs(3),
            s3_hneg: regs(3),
            s4_min: regs(3),
            s4_neg: regs(3),
            s4_max: regs(3),
            s4_p: regs(3),
            rd: (0..3).map(|_| UnitsToFp16::magnitude()).collect(),
            rd_max: regs(9),
            rd_p: regs(9),
            minconv: (0..3).map(|_| Fp16ToUnits::default()).collect(),
            s8_mag: regs(3),
            s8_neg: regs(3),
            s8_max: regs(3),
            s9_d: regs(3),
            div: divisors.iter().map(|&k| DivMersenneCeil::new(k)).collect(),
            ru: (0..3).map(|_| UnitsToFp16::magnitude()).collect(),
            dl_min: regs(3 * dlm),
            dl_p: regs(3 * dlm),
            vs: regs(VS),
            vru: regs(3),
            side: FifoCtrl::new(fifo),
            side_thr: FifoMem::new(fifo),
            side_cnt: (0..segments).map(|_| FifoMem::new(fifo)).collect(),
            side_st: FifoMem::new(fifo),
            // lo_outer, hi_outer, lo_inner, hi_inner in the set's bit layout
            thr_off: [0u64, 48, 16, 32][..units - 10].iter().map(|&o| c(o)).collect(),
            mode_rd: c(RD),
            mode_ru: c(RU),
            sign16: c(0x8000),
            zero16: c(0),
            zero_fx: c(0),
            max_off: c(16),
            present_bit: c(32),
            msb: c(FX as u64 - 1),
            tkey: Default::default(),
            cin: Default::default(),
            tfp: Default::default(),
            _shifted: shifted.map(|b| b as usize),
            _plain: shifted.map(|b| !b as usize),
            _segs: segments,
            _units: units,
            _dlm: dlm,
        }
    }

    pub fn latency() -> usize {
        VS + DivMersenneCeil::<FX>::latency() + 3
    }
}

/// Per group: index g, its upper subgroup 4-g, the unit registers holding
/// its lower and upper shift thresholds (lo_outer=10, hi_outer=11,
/// lo_inner=12, hi_inner=13; unused for plain groups).
macro_rules! token_params_logic {
    ($([$g:tt, $h:tt, $tlo:tt, $thi:tt]),*) => {
        impl Logic for TokenParams {
            #[hdl_gen]
            fn update(&mut self) {
                // S1: order keys back to FP16 (spec §2.2.2), magnitude and sign
                for g in 0..5 {
                    self.tkey.next = self.in_node[g].val().get_bits::<16>(0);
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.conv[2 * g].x.next = self.tfp.val();
                    self.tkey.next = self.in_node[g].val().get_bits::<16>(self.max_off.val().index());
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.conv[2 * g + 1].x.next = self.tfp.val();
                    self.s1_p[g].clock.next = self.clock.val();
                    self.s1_p[g].reset.next = self.reset.val();
                    self.s1_p[g].en.next = true;
                    self.s1_p[g].d.next = self.in_node[g].val().get_bit(self.present_bit.val().index());
                    self.s2_p[g].clock.next = self.clock.val();
                    self.s2_p[g].reset.next = self.reset.val();
                    self.s2_p[g].en.next = true;
                    self.s2_p[g].d.next = self.s1_p[g].q.val();
                }
                for t in 0..(self._units - 10) {
                    self.conv[10 + t].x.next = self.in_thr.val().get_bits::<16>(self.thr_off[t].val().index());
                }
                // S2: signed units
                for i in 0..self._units {
                    self.s1_mag[i].clock.next = self.clock.val();
                    self.s1_mag[i].reset.next = self.reset.val();
                    self.s1_mag[i].en.next = true;
                    self.s1_mag[i].d.next = self.conv[i].mag.val();
                    self.s1_neg[i].clock.next = self.clock.val();
                    self.s1_neg[i].reset.next = self.reset.val();
                    self.s1_neg[i].en.next = true;
                    self.s1_neg[i].d.next = self.conv[i].neg.val();
                    self.s2_u[i].clock.next = self.clock.val();
                    self.s2_u[i].reset.next = self.reset.val();
                    self.s2_u[i].en.next = true;
                    self.s2_u[i].d.next = self.s1_mag[i].q.val();
                    if self.s1_neg[i].q.val() {
                        self.s2_u[i].d.next = self.zero_fx.val() - self.s1_mag[i].q.val();
                    }
                }
                // token valid along the stages
                for i in 0..9 {
                    self.vs[i].clock.next = self.clock.val();
                    self.vs[i].reset.next = self.reset.val();
                    self.vs[i].en.next = true;
                }
                self.vs[0].d.next = self.in_valid.val();
                for i in 1..9 {
                    self.vs[i].d.next = self.vs[i - 1].q.val();
                }
                for i in 0..3 {
                    self.vru[i].clock.next = self.clock.val();
                    self.vru[i].reset.next = self.reset.val();
                    self.vru[i].en.next = true;
                }
                // the three dividers run in step; their valids are equal
                self.vru[0].d.next = self.div[0].out_valid.val() & self.div[1].out_valid.val() & self.div[2].out_valid.val();
                self.vru[1].d.next = self.vru[0].q.val();
                self.vru[2].d.next = self.vru[1].q.val();
                self.out_valid.next = self.vru[2].q.val();
                // side FIFO: in with the summary, out with the result
                self.side.clock.next = self.clock.val();
                self.side.reset.next = self.reset.val();
                self.side.push.next = self.in_valid.val();
                self.side.pop.next = self.out_valid.val() & !self.side.empty.val();
                self.side_thr.clock.next = self.clock.val();
                self.side_thr.reset.next = self.reset.val();
                self.side_thr.we.next = self.in_valid.val();
                self.side_thr.waddr.next = self.side.waddr.val();
                self.side_thr.raddr.next = self.side.raddr.val();
                self.side_thr.wdata.next = self.in_thr.val();
                self.out_thr.next = self.side_thr.rdata.val();
                self.side_st.clock.next = self.clock.val();
                self.side_st.reset.next = self.reset.val();
                self.side_st.we.next = self.in_valid.val();
                self.side_st.waddr.next = self.side.waddr.val();
                self.side_st.raddr.next = self.side.raddr.val();
                self.side_st.wdata.next = self.in_status.val();
                self.out_status.next = self.side_st.rdata.val();
                for s in 0..self._segs {
                    self.side_cnt[s].clock.next = self.clock.val();
                    self.side_cnt[s].reset.next = self.reset.val();
                    self.side_cnt[s].we.next = self.in_valid.val();
                    self.side_cnt[s].waddr.next = self.side.waddr.val();
                    self.side_cnt[s].raddr.next = self.side.raddr.val();
                    self.side_cnt[s].wdata.next = self.in_counts[s].val();
                    self.out_counts[s].next = self.side_cnt[s].rdata.val();
                }
                for dl in self._dlm..(self._dlm + 1) {
                    $(
                    // ---- group $g ----
                    for _grp in 0..1 {
                        self.s3_lmin[$g].clock.next = self.clock.val();
                        self.s3_lmin[$g].reset.next = self.reset.val();
                        self.s3_lmin[$g].en.next = true;
                        self.s3_lmax[$g].clock.next = self.clock.val();
                        self.s3_lmax[$g].reset.next = self.reset.val();
                        self.s3_lmax[$g].en.next = true;
                        self.s3_hmin[$g].clock.next = self.clock.val();
                        self.s3_hmin[$g].reset.next = self.reset.val();
                        self.s3_hmin[$g].en.next = true;
                        self.s3_hmax[$g].clock.next = self.clock.val();
                        self.s3_hmax[$g].reset.next = self.reset.val();
                        self.s3_hmax[$g].en.next = true;
                        self.s3_pl[$g].clock.next = self.clock.val();
                        self.s3_pl[$g].reset.next = self.reset.val();
                        self.s3_pl[$g].en.next = true;
                        self.s3_ph[$g].clock.next = self.clock.val();
                        self.s3_ph[$g].reset.next = self.reset.val();
                        self.s3_ph[$g].en.next = true;
                        self.s3_pl[$g].d.next = self.s2_p[$g].q.val();
                        self.s3_ph[$g].d.next = self.s2_p[$h].q.val();
                        self.s3_lneg[$g].clock.next = self.clock.val();
                        self.s3_lneg[$g].reset.next = self.reset.val();
                        self.s3_lneg[$g].en.next = true;
                        self.s3_hneg[$g].clock.next = self.clock.val();
                        self.s3_hneg[$g].reset.next = self.reset.val();
                        self.s3_hneg[$g].en.next = true;
                        self.s3_lneg[$g].d.next = false;
                        self.s3_hneg[$g].d.next = false;
                        // S3: v of each side's extremes (spec §2.5)
                        for _s in 0..self._shifted[$g] {
                            self.s3_lmin[$g].d.next = self.s2_u[$tlo].q.val() - self.s2_u[2 * $g + 1].q.val();
                            self.s3_lmax[$g].d.next = self.s2_u[$tlo].q.val() - self.s2_u[2 * $g].q.val();
                            self.s3_hmin[$g].d.next = self.s2_u[2 * $h].q.val() - self.s2_u[$thi].q.val();
                            self.s3_hmax[$g].d.next = self.s2_u[2 * $h + 1].q.val() - self.s2_u[$thi].q.val();
                        }
                        // (a plain group's min candidates as magnitude and
                        // sign: the rounder then needs no negation)
                        for _p in 0..self._plain[$g] {
                            self.s3_lmin[$g].d.next = self.s2_u[2 * $g].q.val();
                            self.s3_lneg[$g].d.next = self.s2_u[2 * $g].q.val().get_bit(self.msb.val().index());
                            if self.s3_lneg[$g].d.val() {
                                self.s3_lmin[$g].d.next = self.zero_fx.val() - self.s2_u[2 * $g].q.val();
                            }
                            self.s3_lmax[$g].d.next = self.s2_u[2 * $g + 1].q.val();
                            self.s3_hmin[$g].d.next = self.s2_u[2 * $h].q.val();
                            self.s3_hneg[$g].d.next = self.s2_u[2 * $h].q.val().get_bit(self.msb.val().index());
                            if self.s3_hneg[$g].d.val() {
                                self.s3_hmin[$g].d.next = self.zero_fx.val() - self.s2_u[2 * $h].q.val();
                            }
                            self.s3_hmax[$g].d.next = self.s2_u[2 * $h + 1].q.val();
                        }
                        // S4: across sides. Shifted values are positive
                        // (unsigned compare); plain lower-side values all lie
                        // below upper-side ones, so no compare is needed.
                        self.s4_min[$g].clock.next = self.clock.val();
                        self.s4_min[$g].reset.next = self.reset.val();
                        self.s4_min[$g].en.next = true;
                        self.s4_max[$g].clock.next = self.clock.val();
                        self.s4_max[$g].reset.next = self.reset.val();
                        self.s4_max[$g].en.next = true;
                        self.s4_p[$g].clock.next = self.clock.val();
                        self.s4_p[$g].reset.next = self.reset.val();
                        self.s4_p[$g].en.next = true;
                        self.s4_p[$g].d.next = self.s3_pl[$g].q.val() | self.s3_ph[$g].q.val();
                        self.s4_neg[$g].clock.next = self.clock.val();
                        self.s4_neg[$g].reset.next = self.reset.val();
                        self.s4_neg[$g].en.next = true;
                        if self.s3_pl[$g].q.val() {
                            self.s4_min[$g].d.next = self.s3_lmin[$g].q.val();
                            self.s4_neg[$g].d.next = self.s3_lneg[$g].q.val();
                        } else {
                            self.s4_min[$g].d.next = self.s3_hmin[$g].q.val();
                            self.s4_neg[$g].d.next = self.s3_hneg[$g].q.val();
                        }
                        if self.s3_ph[$g].q.val() {
                            self.s4_max[$g].d.next = self.s3_hmax[$g].q.val();
                        } else {
                            self.s4_max[$g].d.next = self.s3_lmax[$g].q.val();
                        }
                        for _s in 0..self._shifted[$g] {
                            if self.s3_pl[$g].q.val() & self.s3_ph[$g].q.val() {
                                if self.s3_hmin[$g].q.val() < self.s3_lmin[$g].q.val() {
                                    self.s4_min[$g].d.next = self.s3_hmin[$g].q.val();
                                }
                                if self.s3_lmax[$g].q.val() > self.s3_hmax[$g].q.val() {
                                    self.s4_max[$g].d.next = self.s3_lmax[$g].q.val();
                                }
                            }
                        }
                        // RD(v_min), three stages; v_max and present alongside
                        self.rd[$g].clock.next = self.clock.val();
                        self.rd[$g].reset.next = self.reset.val();
                        self.rd[$g].en.next = true;
                        self.rd[$g].v.next = self.s4_min[$g].q.val();
                        self.rd[$g].neg.next = self.s4_neg[$g].q.val();
                        self.rd[$g].mode.next = self.mode_rd.val();
                        for i in 0..3 {
                            self.rd_max[3 * $g + i].clock.next = self.clock.val();
                            self.rd_max[3 * $g + i].reset.next = self.reset.val();
                            self.rd_max[3 * $g + i].en.next = true;
                            self.rd_p[3 * $g + i].clock.next = self.clock.val();
                            self.rd_p[3 * $g + i].reset.next = self.reset.val();
                            self.rd_p[3 * $g + i].en.next = true;
                        }
                        self.rd_max[3 * $g].d.next = self.s4_max[$g].q.val();
                        self.rd_p[3 * $g].d.next = self.s4_p[$g].q.val();
                        for i in 1..3 {
                            self.rd_max[3 * $g + i].d.next = self.rd_max[3 * $g + i - 1].q.val();
                            self.rd_p[3 * $g + i].d.next = self.rd_p[3 * $g + i - 1].q.val();
                        }
                        // S8: min as magnitude and sign, the magnitude inverted
                        // for a positive min; S9: D = v_max - min as one add
                        // (v_max + !mag + 1, or v_max + mag)
                        self.minconv[$g].x.next = self.rd[$g].y.val();
                        self.s8_mag[$g].clock.next = self.clock.val();
                        self.s8_mag[$g].reset.next = self.reset.val();
                        self.s8_mag[$g].en.next = true;
                        self.s8_mag[$g].d.next = !self.minconv[$g].mag.val();
                        if self.minconv[$g].neg.val() {
                            self.s8_mag[$g].d.next = self.minconv[$g].mag.val();
                        }
                        self.s8_neg[$g].clock.next = self.clock.val();
                        self.s8_neg[$g].reset.next = self.reset.val();
                        self.s8_neg[$g].en.next = true;
                        self.s8_neg[$g].d.next = self.minconv[$g].neg.val();
                        self.s8_max[$g].clock.next = self.clock.val();
                        self.s8_max[$g].reset.next = self.reset.val();
                        self.s8_max[$g].en.next = true;
                        self.s8_max[$g].d.next = self.rd_max[3 * $g + 2].q.val();
                        self.s9_d[$g].clock.next = self.clock.val();
                        self.s9_d[$g].reset.next = self.reset.val();
                        self.s9_d[$g].en.next = true;
                        self.cin.next = !self.s8_neg[$g].q.val();
                        self.s9_d[$g].d.next = self.s8_max[$g].q.val()
                            + self.s8_mag[$g].q.val()
                            + bit_cast::<FX, 1>(self.cin.val().into());
                        // then c = ceil(D / (2^m - 1)) and step = RU(c)
                        self.div[$g].clock.next = self.clock.val();
                        self.div[$g].reset.next = self.reset.val();
                        self.div[$g].en.next = true;
                        self.div[$g].d.next = self.s9_d[$g].q.val();
                        self.div[$g].in_valid.next = self.vs[8].q.val();
                        self.ru[$g].clock.next = self.clock.val();
                        self.ru[$g].reset.next = self.reset.val();
                        self.ru[$g].en.next = true;
                        // c >= 0
                        self.ru[$g].v.next = self.div[$g].c.val();
                        self.ru[$g].neg.next = false;
                        self.ru[$g].mode.next = self.mode_ru.val();
                        // min and present wait in a delay line for the step
                        for i in 0..self._dlm {
                            self.dl_min[$g * dl + i].clock.next = self.clock.val();
                            self.dl_min[$g * dl + i].reset.next = self.reset.val();
                            self.dl_min[$g * dl + i].en.next = true;
                            self.dl_p[$g * dl + i].clock.next = self.clock.val();
                            self.dl_p[$g * dl + i].reset.next = self.reset.val();
                            self.dl_p[$g * dl + i].en.next = true;
                        }
                        self.dl_min[$g * dl].d.next = self.rd[$g].y.val();
                        self.dl_p[$g * dl].d.next = self.rd_p[3 * $g + 2].q.val();
                        for i in 1..self._dlm {
                            self.dl_min[$g * dl + i].d.next = self.dl_min[$g * dl + i - 1].q.val();
                            self.dl_p[$g * dl + i].d.next = self.dl_p[$g * dl + i - 1].q.val();
                        }
                        self.out_min[$g].next = self.zero16.val();
                        self.out_step[$g].next = self.zero16.val();
                        if self.dl_p[$g * dl + dl - 1].q.val() {
                            self.out_min[$g].next = self.dl_min[$g * dl + dl - 1].q.val();
                            self.out_step[$g].next = self.ru[$g].y.val();
                        }
                    }
                    )*
                }
            }
        }
    };
}

token_params_logic!([0, 4, 10, 11], [1, 3, 12, 13], [2, 2, 10, 11]);
