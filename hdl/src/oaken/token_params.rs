//! Per-token group parameters of the quantization engine.
//! Paper: Oaken §4.3 Eq. 2 (scale from the group's min and max), §4.4.
//! Spec: docs/spec.md §2.6 (min = RD(v_min), step = RU(ceil(D / (2^m-1)))),
//! §2.5 (what v is per group), §2.14 (these stages).
//!
//! Input: one token's subgroup extremes (order keys) and its thresholds.
//! Output, `latency` cycles later: each group's min and step as FP16. The
//! three groups run side by side and every stage advances every cycle (a
//! token may come every cycle); the thresholds, segment counts and status
//! wait in a small FIFO instead of riding through every stage.
//!
//! Stages of a group:
//! - U1: the extremes it needs and its thresholds, FP16 to units, stored as
//!   the sign and the magnitude inverted when negative (`x = x1 + neg`), so
//!   that U2's adds take `x1` as it is.
//! - U2: shifted group: the four side candidates (`x - hi`, `lo - x`), and
//!   which of each pair is `v_min` and `v_max` by a sign test on the
//!   operands themselves (`xmin_U - hi < lo - xmax_L` iff `xmin_U + xmax_L
//!   - lo - hi < 0`, carry-save), so the compare does not wait for the
//!   subtracts. Plain group: `D = v_max - v_min`; `min` is `v_min` itself.
//! - U3: shifted group: RD of the positive `v_min`: clear the bits below
//!   the FP16 grid, the smear of its leading one shifted right by 11.
//! - U4: shifted group: `D = v_max - min`, and min's FP16 pattern. (A plain
//!   group's values wait in U3 and U4.)
//! - folded group (`paper` mode, spec §2.5): U2 takes `v_min` from the
//!   lower side when it has elements (`lo - xmin_L`, a magnitude, with a
//!   sign flag) and `v_max` from the upper side when it has (`xmax_U - hi`,
//!   else `xmax_L - lo`, two's complement), by the presence flags alone;
//!   U3 rounds a negative `v_min` away from zero (RD of a negative value):
//!   the bits below the grid cleared, and one grid step (`ulp`) kept aside
//!   when any was set; a magnitude above 65504 is held there (spec §2.5);
//!   U4 adds `v_max + |min|` as one carry-save level and an add.
//! - the group's step, `RU(ceil(D / (2^m - 1)))`, in three stages
//!   (`group_step.rs`): a shifted group's from U4, a plain group's from U2
//!   (its min is v_min itself), so a plain group's result waits two cycles
//!   in the step block's output register, or in two delay registers when
//!   tokens may come less than three cycles apart.
//!
//! - `paper` mode: each folded group's `z` (spec §2.7, §5.8: the first grid
//!   index at or above zero) from its min and step, `M + 2` more stages
//!   (`FoldZero`, M = outlier_bits for both groups: a larger M changes no
//!   clamp, since a middle group with an upper element has `z < 2^IB`);
//!   min and step wait for it in delay registers when tokens may come
//!   closer than that.
//!
//! FP16 pattern of a positive value `u` in units (spec §2.2.3): with the
//! leading one at bit `p`, `u` below 2048 is its own pattern; otherwise the
//! pattern is `((p - 10) << 10) + (u >> (p - 10))`, where the top bit of
//! the 11-bit significand lands in the exponent field, and a significand
//! rounded up to 2048 carries on into it.

use super::extremes::{NODE, SUBGROUPS};
use super::group_step::GroupStep;
use super::tp_sign::TpSignTest;
use super::tp_sub::TpSub;
use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::fold_zero::{FoldZero, FOLD_ZERO_WIDTH};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::lead_one::LeadOne;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs};
use rust_hdl::prelude::*;

/// Operand slots per group in U1: shifted `xmin_U, xmax_U, xmin_L,
/// xmax_L, lo, hi`; plain `v_min, v_max`.
const SLOTS: usize = 6;
// (the kernel below writes SLOTS as the literal 6: rust-hdl cannot name a
// Rust constant in an index)
const _: () = assert!(SLOTS == 6);

// Groups in metadata order: outer, middle, inner. Group g's lower side is
// subgroup g and its upper side subgroup 4-g (the inner group has one).

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
    /// `paper` mode: the outer and the middle group's z (spec §2.7).
    pub out_z: Vec<Signal<Out, Bits<16>>>,
    pub out_counts: Vec<Signal<Out, Bits<8>>>,
    pub out_status: Signal<Out, Bits<2>>,
    // Shifted groups are blocks 0 (outer) and 1 (middle, when shifted),
    // plain groups blocks 0 (inner) and 1 (middle, when plain), so that a
    // group's registers exist only in the form it uses.
    // U1: shifted operands at SLOTS*b + i, plain v_min, v_max at 2b + i,
    // each as x1 = mag ^ (neg ? all ones : 0) and neg, so that x = x1 + neg:
    // U2 then needs no inversion by the sign, whose fan-out to every bit
    // was the critical path; present flags per group: 2g lower side, 2g+1
    // upper
    s_conv: Vec<Fp16ToUnits>,
    s_mag: Vec<Reg<Bits<FX>>>,
    s_neg: Vec<Reg<Bit>>,
    p_conv: Vec<Fp16ToUnits>,
    p_mag: Vec<Reg<Bits<FX>>>,
    p_neg: Vec<Reg<Bit>>,
    p1_min: Vec<Reg<Bits<16>>>,
    u1_p: Vec<Reg<Bit>>,
    // U2: per group, shifted v_min or plain D; shifted v_max; plain min
    u2_a: Vec<Reg<Bits<FX>>>,
    s2_b: Vec<Reg<Bits<FX>>>,
    p2_min: Vec<Reg<Bits<16>>>,
    u2_p: Vec<Reg<Bit>>,
    // U3: per group, shifted min in units or plain D; shifted v_max, min's
    // leading one and saturation; plain min
    lead_min: Vec<LeadOne>,
    u3_a: Vec<Reg<Bits<FX>>>,
    s3_b: Vec<Reg<Bits<FX>>>,
    s3_pos: Vec<Reg<Bits<6>>>,
    s3_sat: Vec<Reg<Bit>>,
    u3_p: Vec<Reg<Bit>>,
    // U4: a shifted group's D and min (plain groups' are not read)
    u4_d: Vec<Reg<Bits<FX>>>,
    u4_min: Vec<Reg<Bits<16>>>,
    u4_p: Vec<Reg<Bit>>,
    // folded blocks (paper mode): v_min negative (U2, U3); U3's rounding
    // increment and the grid step it adds (0 when none)
    f2_neg: Vec<Reg<Bit>>,
    f3_neg: Vec<Reg<Bit>>,
    f3_inc: Vec<Reg<Bit>>,
    f3_ulp: Vec<Reg<Bits<FX>>>,
    fsat: Vec<Signal<Local, Bit>>,
    finc: Vec<Signal<Local, Bit>>,
    fmin: Vec<Signal<Local, Bits<16>>>,
    fds: Vec<Signal<Local, Bits<FX>>>,
    fdc: Vec<Signal<Local, Bits<FX>>>,
    /// paper mode: z of the outer and the middle group
    fz: Vec<FoldZero<FOLD_ZERO_WIDTH>>,
    /// each group's min and step as the step blocks align them, then, when
    /// tokens may come closer than z's latency, delayed by it: stage i
    /// group g at 3i + g
    am: Vec<Signal<Local, Bits<16>>>,
    ast: Vec<Signal<Local, Bits<16>>>,
    zd_min: Vec<Reg<Bits<16>>>,
    zd_step: Vec<Reg<Bits<16>>>,
    /// Each group's step (a plain group's from U2, a shifted one's from U4).
    step: Vec<GroupStep>,
    /// A plain group's step and min, two cycles more (tokens less than three
    /// cycles apart only): group g stage i at 2g + i.
    pd_step: Vec<Reg<Bits<16>>>,
    pd_min: Vec<Reg<Bits<16>>>,
    // token valid: U1..U4, then the step block's three stages
    vs: Vec<Reg<Bit>>,
    // side FIFO: thresholds, counts, status
    side: FifoCtrl,
    side_thr: FifoMem<64>,
    side_cnt: Vec<FifoMem<8>>,
    side_st: FifoMem<2>,
    // locals, reused one computation after another
    tkey: Signal<Local, Bits<16>>,
    tfp: Signal<Local, Bits<16>>,
    /// U2's subtracts: shifted block b's candidates at 4b + {min_U,
    /// max_U, min_L, max_L}; plain block b's D
    csub: Vec<TpSub>,
    psub: Vec<TpSub>,
    /// U2's sign tests, shifted block b: min_U < min_L at 2b, max_U <
    /// max_L at 2b + 1
    ctest: Vec<TpSignTest>,
    sh6: Signal<Local, Bits<6>>,
    sfx: Signal<Local, Bits<FX>>,
    /// Threshold fields of shifted block b: lo at 2b, hi at 2b + 1.
    thr_off: Vec<Constant<Bits<32>>>,
    sign16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    max_off: Constant<Bits<32>>,
    present_bit: Constant<Bits<32>>,
    sat_lo: Constant<Bits<32>>,
    zero2: Constant<Bits<2>>,
    ten6: Constant<Bits<6>>,
    eleven_fx: Constant<Bits<FX>>,
    sh10: Constant<Bits<16>>,
    /// 65504 in units and as FP16: RD's saturation.
    max_units: Constant<Bits<FX>>,
    max_fp: Constant<Bits<16>>,
    /// Folded blocks only (empty otherwise, so that no other mode emits
    /// an unused constant): the top 11 bits of 65504 in units (39:29); 1
    fc11: Vec<Constant<Bits<11>>>,
    fc16: Vec<Constant<Bits<16>>>,
    /// bit indices: 29 (65504's grid), FX - 1 (the sign)
    fci: Vec<Constant<Bits<32>>>,
    /// the bits below 65504's grid; 10; 0; 1; -65504 (two's complement)
    fcx: Vec<Constant<Bits<FX>>>,
    /// Per group: shifted (1: side-magnitude or folded) or plain (1), and
    /// which shifted groups are side-magnitude and which folded.
    _shifted: [usize; 3],
    _sm: [usize; 3],
    _fo: [usize; 3],
    /// paper mode: z's latency (0 otherwise), and the delay registers of
    /// min and step (1 when used)
    _lz: usize,
    _zdel: usize,
    _paper: usize,
    /// valid bits along the stages to the step blocks' outputs: 7
    _plain: [usize; 3],
    /// Shifted and plain blocks.
    _ns: usize,
    _np: usize,
    _segs: usize,
    /// A plain group's result needs the two delay registers.
    _pdel: usize,
    _nv: usize,
}

impl TokenParams {
    /// `divisors[g] = 2^m - 1` and `shifted[g]` per group (spec §2.5);
    /// `paper`: the shifted groups are folded (both outer and middle);
    /// `fifo` = side FIFO depth; `spacing`: the fewest cycles between two
    /// tokens (the engine's beats per token).
    pub fn new(divisors: [u64; 3], shifted: [bool; 3], paper: bool, segments: usize, fifo: usize, spacing: usize) -> Self {
        assert!(shifted[0] && !shifted[2], "outer shifted, inner plain (spec §2.5)");
        assert!(!paper || shifted[1], "paper mode folds the middle group too");
        assert!(divisors.iter().all(|k| (k + 1).is_power_of_two()));
        let ns = 1 + shifted[1] as usize;
        let np = 3 - ns;
        let ob = (divisors[0] + 1).trailing_zeros() as usize;
        let lz = Self::z_latency(paper, ob);
        let zdel = (paper && spacing < lz + 3) as usize;
        let nf = if paper { ns } else { 0 };
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
            out_z: (0..2 * paper as usize).map(|_| Default::default()).collect(),
            out_counts: (0..segments).map(|_| Default::default()).collect(),
            out_status: Default::default(),
            s_conv: (0..SLOTS * ns).map(|_| Fp16ToUnits::default()).collect(),
            s_mag: regs(SLOTS * ns),
            s_neg: regs(SLOTS * ns),
            p_conv: (0..2 * np).map(|_| Fp16ToUnits::default()).collect(),
            p_mag: regs(2 * np),
            p_neg: regs(2 * np),
            p1_min: regs(np),
            u1_p: regs(6),
            u2_a: regs(3),
            s2_b: regs(ns),
            p2_min: regs(np),
            u2_p: regs(3),
            lead_min: (0..ns).map(|_| LeadOne::default()).collect(),
            u3_a: regs(ns),
            s3_b: regs(ns),
            s3_pos: regs(ns),
            s3_sat: regs(ns),
            u3_p: regs(ns),
            u4_d: regs(ns),
            u4_min: regs(ns),
            u4_p: regs(ns),
            f2_neg: regs(nf),
            f3_neg: regs(nf),
            f3_inc: regs(nf),
            f3_ulp: regs(nf),
            fsat: (0..nf).map(|_| Default::default()).collect(),
            finc: (0..nf).map(|_| Default::default()).collect(),
            fmin: (0..nf).map(|_| Default::default()).collect(),
            fds: (0..nf).map(|_| Default::default()).collect(),
            fdc: (0..nf).map(|_| Default::default()).collect(),
            fz: (0..nf).map(|_| FoldZero::new(ob)).collect(),
            am: (0..3).map(|_| Default::default()).collect(),
            ast: (0..3).map(|_| Default::default()).collect(),
            zd_min: regs(3 * lz * zdel),
            zd_step: regs(3 * lz * zdel),
            step: divisors.iter().map(|&k| GroupStep::new((k + 1).trailing_zeros() as usize)).collect(),
            pd_step: regs(2 * np * (spacing < 3) as usize),
            pd_min: regs(2 * np * (spacing < 3) as usize),
            vs: regs(4 + GroupStep::LATENCY),
            side: FifoCtrl::new(fifo),
            side_thr: FifoMem::new(fifo),
            side_cnt: (0..segments).map(|_| FifoMem::new(fifo)).collect(),
            side_st: FifoMem::new(fifo),
            tkey: Default::default(),
            tfp: Default::default(),
            csub: (0..4 * ns).map(|_| TpSub::default()).collect(),
            psub: (0..np).map(|_| TpSub::default()).collect(),
            ctest: (0..2 * ns * !paper as usize).map(|_| TpSignTest::default()).collect(),
            sh6: Default::default(),
            sfx: Default::default(),
            // (lo_outer, hi_outer), then (lo_inner, hi_inner)
            thr_off: [0u64, 48, 16, 32][..2 * ns].iter().map(|&o| c(o)).collect(),
            sign16: c(0x8000),
            zero16: c(0),
            max_off: c(16),
            present_bit: c(32),
            sat_lo: c(40),
            zero2: c(0),
            ten6: c(10),
            eleven_fx: c(11),
            sh10: c(10),
            max_units: c(65504 << 24),
            max_fp: c(0x7BFF),
            fc11: consts((0..nf.min(1)).map(|_| 0x7FF)),
            fc16: consts((0..nf.min(1)).map(|_| 1)),
            fci: consts([29u64, (FX - 1) as u64].into_iter().take(2 * nf.min(1))),
            fcx: consts([(1u64 << 29) - 1, 10, 0, 1, (1u64 << FX) - (65504u64 << 24)].into_iter().take(5 * nf.min(1))),
            _shifted: shifted.map(|b| b as usize),
            _sm: shifted.map(|b| (b && !paper) as usize),
            _fo: shifted.map(|b| (b && paper) as usize),
            _lz: lz,
            _zdel: zdel,
            _paper: paper as usize,
            _nv: 4 + GroupStep::LATENCY,
            _plain: shifted.map(|b| !b as usize),
            _ns: ns,
            _np: np,
            _segs: segments,
            // a plain group's step block finishes two cycles before the
            // shifted ones; its output register then still holds it unless
            // the next token's plain result lands first
            _pdel: (spacing < 3) as usize,
        }
    }

    /// `paper` mode adds z's latency (`FoldZero`, M = outlier_bits `ob`).
    pub fn latency(paper: bool, ob: usize) -> usize {
        4 + GroupStep::LATENCY + Self::z_latency(paper, ob)
    }

    fn z_latency(paper: bool, ob: usize) -> usize {
        if paper {
            ob + 2
        } else {
            0
        }
    }
}

/// Per group: index g, its upper subgroup 4-g, its block (see the struct)
/// and whether it may be shifted (outer, middle) or plain (middle, inner).
/// U2's subtracts and sign tests are the sub-blocks `TpSub` and
/// `TpSignTest`; a rust-hdl kernel names SLOTS as the literal 6.
macro_rules! token_params_logic {
    ($([$g:tt, $h:tt, $b:tt]),*) => {
        impl Logic for TokenParams {
            #[hdl_gen]
            fn update(&mut self) {
                // U1 loads with a token and holds it, so that every later
                // stage keeps computing that token until the next one (a
                // plain group's result is read two cycles after it is
                // ready); every other register advances every cycle
                for i in 0..(6 * self._ns) {
                    self.s_mag[i].clock.next = self.clock.val();
                    self.s_mag[i].reset.next = self.reset.val();
                    self.s_mag[i].en.next = self.in_valid.val();
                    self.s_mag[i].d.next = self.s_conv[i].mag.val();
                    if self.s_conv[i].neg.val() {
                        self.s_mag[i].d.next = !self.s_conv[i].mag.val();
                    }
                    self.s_neg[i].clock.next = self.clock.val();
                    self.s_neg[i].reset.next = self.reset.val();
                    self.s_neg[i].en.next = self.in_valid.val();
                    self.s_neg[i].d.next = self.s_conv[i].neg.val();
                }
                for i in 0..(2 * self._np) {
                    self.p_mag[i].clock.next = self.clock.val();
                    self.p_mag[i].reset.next = self.reset.val();
                    self.p_mag[i].en.next = self.in_valid.val();
                    self.p_mag[i].d.next = self.p_conv[i].mag.val();
                    if self.p_conv[i].neg.val() {
                        self.p_mag[i].d.next = !self.p_conv[i].mag.val();
                    }
                    self.p_neg[i].clock.next = self.clock.val();
                    self.p_neg[i].reset.next = self.reset.val();
                    self.p_neg[i].en.next = self.in_valid.val();
                    self.p_neg[i].d.next = self.p_conv[i].neg.val();
                }
                for b in 0..self._ns {
                    self.s2_b[b].clock.next = self.clock.val();
                    self.s2_b[b].reset.next = self.reset.val();
                    self.s2_b[b].en.next = true;
                    self.s3_b[b].clock.next = self.clock.val();
                    self.s3_b[b].reset.next = self.reset.val();
                    self.s3_b[b].en.next = true;
                    self.s3_b[b].d.next = self.s2_b[b].q.val();
                    self.s3_pos[b].clock.next = self.clock.val();
                    self.s3_pos[b].reset.next = self.reset.val();
                    self.s3_pos[b].en.next = true;
                    self.s3_pos[b].d.next = self.lead_min[b].pos.val();
                    self.s3_sat[b].clock.next = self.clock.val();
                    self.s3_sat[b].reset.next = self.reset.val();
                    self.s3_sat[b].en.next = true;
                }
                for b in 0..self._np {
                    self.p1_min[b].clock.next = self.clock.val();
                    self.p1_min[b].reset.next = self.reset.val();
                    self.p1_min[b].en.next = self.in_valid.val();
                    self.p2_min[b].clock.next = self.clock.val();
                    self.p2_min[b].reset.next = self.reset.val();
                    self.p2_min[b].en.next = true;
                    self.p2_min[b].d.next = self.p1_min[b].q.val();
                }
                for i in 0..6 {
                    self.u1_p[i].clock.next = self.clock.val();
                    self.u1_p[i].reset.next = self.reset.val();
                    self.u1_p[i].en.next = self.in_valid.val();
                }
                for i in 0..3 {
                    self.u2_a[i].clock.next = self.clock.val();
                    self.u2_a[i].reset.next = self.reset.val();
                    self.u2_a[i].en.next = true;
                    self.u2_p[i].clock.next = self.clock.val();
                    self.u2_p[i].reset.next = self.reset.val();
                    self.u2_p[i].en.next = true;
                    self.u2_p[i].d.next = self.u1_p[2 * i].q.val() | self.u1_p[2 * i + 1].q.val();
                }
                for b in 0..self._ns {
                    self.u3_a[b].clock.next = self.clock.val();
                    self.u3_a[b].reset.next = self.reset.val();
                    self.u3_a[b].en.next = true;
                    self.u3_p[b].clock.next = self.clock.val();
                    self.u3_p[b].reset.next = self.reset.val();
                    self.u3_p[b].en.next = true;
                    self.u4_d[b].clock.next = self.clock.val();
                    self.u4_d[b].reset.next = self.reset.val();
                    self.u4_d[b].en.next = true;
                    self.u4_d[b].d.next = self.u3_a[b].q.val();
                    self.u4_min[b].clock.next = self.clock.val();
                    self.u4_min[b].reset.next = self.reset.val();
                    self.u4_min[b].en.next = true;
                    self.u4_p[b].clock.next = self.clock.val();
                    self.u4_p[b].reset.next = self.reset.val();
                    self.u4_p[b].en.next = true;
                    self.u4_p[b].d.next = self.u3_p[b].q.val();
                }
                for g in 0..3 {
                    self.step[g].clock.next = self.clock.val();
                    self.step[g].reset.next = self.reset.val();
                }
                for i in 0..(2 * self._np * self._pdel) {
                    self.pd_step[i].clock.next = self.clock.val();
                    self.pd_step[i].reset.next = self.reset.val();
                    self.pd_step[i].en.next = true;
                    self.pd_min[i].clock.next = self.clock.val();
                    self.pd_min[i].reset.next = self.reset.val();
                    self.pd_min[i].en.next = true;
                }
                for g in 0..3 {
                    self.ast[g].next = self.step[g].step_out.val();
                    self.am[g].next = self.step[g].min_out.val();
                }
                // token valid along the stages
                for i in 0..self._nv {
                    self.vs[i].clock.next = self.clock.val();
                    self.vs[i].reset.next = self.reset.val();
                    self.vs[i].en.next = true;
                }
                self.vs[0].d.next = self.in_valid.val();
                for i in 1..self._nv {
                    self.vs[i].d.next = self.vs[i - 1].q.val();
                }
                self.out_valid.next = self.vs[6].q.val();
                // paper mode: the two z come out together, M + 2 later
                for _p in 0..self._paper {
                    self.out_valid.next = self.fz[0].out_valid.val() & self.fz[1].out_valid.val();
                }
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
                $(
                // ---- group $g: lower side subgroup $g, upper side $h ----
                self.u1_p[2 * $g].d.next = self.in_node[$g].val().get_bit(self.present_bit.val().index());
                self.u1_p[2 * $g + 1].d.next = self.in_node[$h].val().get_bit(self.present_bit.val().index());
                for _p in 0..self._plain[$g] {
                    // U1: v_min is the lower side's least key if that side
                    // has elements, v_max the upper side's greatest
                    self.tkey.next = self.in_node[$h].val().get_bits::<16>(0);
                    if self.in_node[$g].val().get_bit(self.present_bit.val().index()) {
                        self.tkey.next = self.in_node[$g].val().get_bits::<16>(0);
                    }
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.p_conv[2 * $b].x.next = self.tfp.val();
                    self.p1_min[$b].d.next = self.tfp.val();
                    self.tkey.next = self.in_node[$g].val().get_bits::<16>(self.max_off.val().index());
                    if self.in_node[$h].val().get_bit(self.present_bit.val().index()) {
                        self.tkey.next = self.in_node[$h].val().get_bits::<16>(self.max_off.val().index());
                    }
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.p_conv[2 * $b + 1].x.next = self.tfp.val();
                    // U2: D = v_max - v_min (tp_sub.rs)
                    self.psub[$b].a.next = self.p_mag[2 * $b + 1].q.val();
                    self.psub[$b].a_neg.next = self.p_neg[2 * $b + 1].q.val();
                    self.psub[$b].b.next = self.p_mag[2 * $b].q.val();
                    self.psub[$b].b_neg.next = self.p_neg[2 * $b].q.val();
                    self.u2_a[$g].d.next = self.psub[$b].d.val();
                    // the step from U2 (min is v_min itself; U3, U4 unused)
                    self.step[$g].d.next = self.u2_a[$g].q.val();
                    self.step[$g].min.next = self.p2_min[$b].q.val();
                    self.step[$g].present.next = self.u2_p[$g].q.val();
                    for _d in 0..self._pdel {
                        self.pd_step[2 * $b].d.next = self.step[$g].step_out.val();
                        self.pd_min[2 * $b].d.next = self.step[$g].min_out.val();
                        self.pd_step[2 * $b + 1].d.next = self.pd_step[2 * $b].q.val();
                        self.pd_min[2 * $b + 1].d.next = self.pd_min[2 * $b].q.val();
                        self.ast[$g].next = self.pd_step[2 * $b + 1].q.val();
                        self.am[$g].next = self.pd_min[2 * $b + 1].q.val();
                    }
                }
                for _s in 0..self._shifted[$g] {
                    // U1: xmin_U, xmax_U, xmin_L, xmax_L, lo, hi
                    self.tkey.next = self.in_node[$h].val().get_bits::<16>(0);
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.s_conv[6 * $b].x.next = self.tfp.val();
                    self.tkey.next = self.in_node[$h].val().get_bits::<16>(self.max_off.val().index());
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.s_conv[6 * $b + 1].x.next = self.tfp.val();
                    self.tkey.next = self.in_node[$g].val().get_bits::<16>(0);
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.s_conv[6 * $b + 2].x.next = self.tfp.val();
                    self.tkey.next = self.in_node[$g].val().get_bits::<16>(self.max_off.val().index());
                    if (self.tkey.val() & self.sign16.val()) != self.zero16.val() {
                        self.tfp.next = self.tkey.val() ^ self.sign16.val();
                    } else {
                        self.tfp.next = !self.tkey.val();
                    }
                    self.s_conv[6 * $b + 3].x.next = self.tfp.val();
                    self.s_conv[6 * $b + 4].x.next =
                        self.in_thr.val().get_bits::<16>(self.thr_off[2 * $b].val().index());
                    self.s_conv[6 * $b + 5].x.next =
                        self.in_thr.val().get_bits::<16>(self.thr_off[2 * $b + 1].val().index());
                    // U2: the candidates (tp_sub.rs): min_U, max_U = xmin_U - hi,
                    // xmax_U - hi (slots k, 5); min_L, max_L = lo - xmax_L,
                    // lo - xmin_L (slots 4, 3 - k)
                    for k in 0..2 {
                        self.csub[4 * $b + k].a.next = self.s_mag[6 * $b + k].q.val();
                        self.csub[4 * $b + k].a_neg.next = self.s_neg[6 * $b + k].q.val();
                        self.csub[4 * $b + k].b.next = self.s_mag[6 * $b + 5].q.val();
                        self.csub[4 * $b + k].b_neg.next = self.s_neg[6 * $b + 5].q.val();
                        self.csub[4 * $b + 2 + k].a.next = self.s_mag[6 * $b + 4].q.val();
                        self.csub[4 * $b + 2 + k].a_neg.next = self.s_neg[6 * $b + 4].q.val();
                        self.csub[4 * $b + 2 + k].b.next = self.s_mag[6 * $b + 3 - k].q.val();
                        self.csub[4 * $b + 2 + k].b_neg.next = self.s_neg[6 * $b + 3 - k].q.val();
                    }
                    // sign tests (tp_sign.rs): min_U < min_L iff xmin_U + xmax_L
                    // - lo - hi < 0 (slots 0, 3); max_U < max_L iff xmax_U +
                    // xmin_L - lo - hi < 0 (slots 1, 2)
                    for _sm in 0..self._sm[$g] {
                        for t in 0..2 {
                            self.ctest[2 * $b + t].a.next = self.s_mag[6 * $b + t].q.val();
                            self.ctest[2 * $b + t].a_neg.next = self.s_neg[6 * $b + t].q.val();
                            self.ctest[2 * $b + t].b.next = self.s_mag[6 * $b + 3 - t].q.val();
                            self.ctest[2 * $b + t].b_neg.next = self.s_neg[6 * $b + 3 - t].q.val();
                            self.ctest[2 * $b + t].lo.next = self.s_mag[6 * $b + 4].q.val();
                            self.ctest[2 * $b + t].lo_neg.next = self.s_neg[6 * $b + 4].q.val();
                            self.ctest[2 * $b + t].hi.next = self.s_mag[6 * $b + 5].q.val();
                            self.ctest[2 * $b + t].hi_neg.next = self.s_neg[6 * $b + 5].q.val();
                        }
                    }
                    for _sm in 0..self._sm[$g] {
                        // v_min and v_max over the sides present
                        self.u2_a[$g].d.next = self.csub[4 * $b + 2].d.val();
                        if self.u1_p[2 * $g + 1].q.val() & (!self.u1_p[2 * $g].q.val() | self.ctest[2 * $b].lt.val()) {
                            self.u2_a[$g].d.next = self.csub[4 * $b].d.val();
                        }
                        self.s2_b[$b].d.next = self.csub[4 * $b + 1].d.val();
                        if self.u1_p[2 * $g].q.val() & (!self.u1_p[2 * $g + 1].q.val() | self.ctest[2 * $b + 1].lt.val()) {
                            self.s2_b[$b].d.next = self.csub[4 * $b + 3].d.val();
                        }
                        // U3: RD(v_min) of a positive value: clear the bits below
                        // its grid spacing; 2^40 or more saturates to 65504 (below
                        // that, clearing already gives 65504 at most)
                        self.lead_min[$b].v.next = self.u2_a[$g].q.val();
                        self.u3_p[$b].d.next = self.u2_p[$g].q.val();
                        self.u3_a[$b].d.next =
                            self.u2_a[$g].q.val() & !(self.lead_min[$b].smear.val() >> self.eleven_fx.val());
                        self.s3_sat[$b].d.next =
                            self.u2_a[$g].q.val().get_bits::<2>(self.sat_lo.val().index()) != self.zero2.val();
                        if self.s3_sat[$b].d.val() {
                            self.u3_a[$b].d.next = self.max_units.val();
                        }
                        // U4: D = v_max - min, min's pattern
                        self.u4_d[$b].d.next = self.s3_b[$b].q.val() - self.u3_a[$b].q.val();
                        self.sh6.next = self.s3_pos[$b].q.val() - self.ten6.val();
                        self.sfx.next = self.u3_a[$b].q.val();
                        self.u4_min[$b].d.next = bit_cast::<16, FX>(self.sfx.val() >> bit_cast::<FX, 6>(self.sh6.val()))
                            + (bit_cast::<16, 6>(self.sh6.val()) << self.sh10.val());
                        if self.s3_pos[$b].q.val() <= self.ten6.val() {
                            self.u4_min[$b].d.next = self.u3_a[$b].q.val().get_bits::<16>(0);
                        }
                        if self.s3_sat[$b].q.val() {
                            self.u4_min[$b].d.next = self.max_fp.val();
                        }
                    }
                    for _fo in 0..self._fo[$g] {
                        // U2: v_min, v_max over the sides present (by the presence
                        // flags alone: lower values are < 0, upper ones > 0);
                        // csub 2 is xmax_L - lo here, a value, not a magnitude
                        self.csub[4 * $b + 2].a.next = self.s_mag[6 * $b + 3].q.val();
                        self.csub[4 * $b + 2].a_neg.next = self.s_neg[6 * $b + 3].q.val();
                        self.csub[4 * $b + 2].b.next = self.s_mag[6 * $b + 4].q.val();
                        self.csub[4 * $b + 2].b_neg.next = self.s_neg[6 * $b + 4].q.val();
                        self.f2_neg[$b].clock.next = self.clock.val();
                        self.f2_neg[$b].reset.next = self.reset.val();
                        self.f2_neg[$b].en.next = true;
                        self.f2_neg[$b].d.next = self.u1_p[2 * $g].q.val();
                        self.u2_a[$g].d.next = self.csub[4 * $b].d.val();
                        if self.u1_p[2 * $g].q.val() {
                            self.u2_a[$g].d.next = self.csub[4 * $b + 3].d.val();
                        }
                        self.s2_b[$b].d.next = self.csub[4 * $b + 2].d.val();
                        if self.u1_p[2 * $g + 1].q.val() {
                            self.s2_b[$b].d.next = self.csub[4 * $b + 1].d.val();
                        }
                        // U3: RD(v_min): a positive one rounds down (clear the bits
                        // below its grid), a negative one's magnitude up (the same,
                        // plus one grid step when a cleared bit was set); a
                        // positive one at 2^40 or more saturates to 65504, a
                        // negative one above 65504 is held at 65504 (spec §2.5)
                        self.lead_min[$b].v.next = self.u2_a[$g].q.val();
                        self.u3_p[$b].d.next = self.u2_p[$g].q.val();
                        // a lower-side v_max is held at -65504 too
                        if self.s2_b[$b].q.val().get_bit(self.fci[1].val().index())
                            & (self.s2_b[$b].q.val() < self.fcx[4].val())
                        {
                            self.s3_b[$b].d.next = self.fcx[4].val();
                        }
                        self.fsat[$b].next =
                            self.u2_a[$g].q.val().get_bits::<2>(self.sat_lo.val().index()) != self.zero2.val();
                        if self.f2_neg[$b].q.val()
                            & (self.u2_a[$g].q.val().get_bits::<11>(self.fci[0].val().index()) == self.fc11[0].val())
                            & ((self.u2_a[$g].q.val() & self.fcx[0].val()) != self.fcx[2].val())
                        {
                            self.fsat[$b].next = true;
                        }
                        self.s3_sat[$b].d.next = self.fsat[$b].val();
                        self.u3_a[$b].d.next =
                            self.u2_a[$g].q.val() & !(self.lead_min[$b].smear.val() >> self.eleven_fx.val());
                        self.f3_neg[$b].clock.next = self.clock.val();
                        self.f3_neg[$b].reset.next = self.reset.val();
                        self.f3_neg[$b].en.next = true;
                        self.f3_neg[$b].d.next = self.f2_neg[$b].q.val();
                        self.f3_inc[$b].clock.next = self.clock.val();
                        self.f3_inc[$b].reset.next = self.reset.val();
                        self.f3_inc[$b].en.next = true;
                        self.finc[$b].next = self.f2_neg[$b].q.val()
                            & !self.fsat[$b].val()
                            & ((self.u2_a[$g].q.val() & (self.lead_min[$b].smear.val() >> self.eleven_fx.val()))
                                != self.fcx[2].val());
                        self.f3_inc[$b].d.next = self.finc[$b].val();
                        self.f3_ulp[$b].clock.next = self.clock.val();
                        self.f3_ulp[$b].reset.next = self.reset.val();
                        self.f3_ulp[$b].en.next = true;
                        self.f3_ulp[$b].d.next = self.fcx[2].val();
                        if self.finc[$b].val() {
                            self.f3_ulp[$b].d.next = (self.lead_min[$b].smear.val() >> self.fcx[1].val())
                                & !(self.lead_min[$b].smear.val() >> self.eleven_fx.val());
                        }
                        if self.fsat[$b].val() {
                            self.u3_a[$b].d.next = self.max_units.val();
                        }
                        // U4: D = v_max - min: v_max - |min| for a positive min,
                        // v_max + |min| + ulp (one carry-save level) for a
                        // negative one; min's pattern, its significand plus the
                        // increment, and the sign
                        self.u4_d[$b].d.next = self.s3_b[$b].q.val() - self.u3_a[$b].q.val();
                        self.fds[$b].next = self.s3_b[$b].q.val() ^ self.u3_a[$b].q.val() ^ self.f3_ulp[$b].q.val();
                        self.fdc[$b].next = ((self.s3_b[$b].q.val() & self.u3_a[$b].q.val())
                            | (self.s3_b[$b].q.val() & self.f3_ulp[$b].q.val())
                            | (self.u3_a[$b].q.val() & self.f3_ulp[$b].q.val()))
                            << self.fcx[3].val();
                        if self.f3_neg[$b].q.val() {
                            self.u4_d[$b].d.next = self.fds[$b].val() + self.fdc[$b].val();
                        }
                        self.sh6.next = self.s3_pos[$b].q.val() - self.ten6.val();
                        self.sfx.next = self.u3_a[$b].q.val();
                        self.fmin[$b].next = bit_cast::<16, FX>(self.sfx.val() >> bit_cast::<FX, 6>(self.sh6.val()))
                            + (bit_cast::<16, 6>(self.sh6.val()) << self.sh10.val());
                        // (an add, not a cast: rust-hdl evaluates a cast's
                        // operand while emitting, and this block is empty
                        // outside paper mode)
                        if self.f3_inc[$b].q.val() {
                            self.fmin[$b].next = self.fmin[$b].val() + self.fc16[0].val();
                        }
                        if self.s3_pos[$b].q.val() <= self.ten6.val() {
                            self.fmin[$b].next = self.u3_a[$b].q.val().get_bits::<16>(0);
                        }
                        if self.s3_sat[$b].q.val() {
                            self.fmin[$b].next = self.max_fp.val();
                        }
                        if self.f3_neg[$b].q.val() {
                            self.fmin[$b].next = self.fmin[$b].val() | self.sign16.val();
                        }
                        self.u4_min[$b].d.next = self.fmin[$b].val();
                    }
                    self.step[$g].d.next = self.u4_d[$b].q.val();
                    self.step[$g].min.next = self.u4_min[$b].q.val();
                    self.step[$g].present.next = self.u4_p[$b].q.val();
                }
                )*
                // paper mode: each folded group's z from its min and step
                // (M + 2 stages); min and step wait as long (delay
                // registers, when the next token's could land first)
                for b in 0..(2 * self._paper) {
                    self.fz[b].clock.next = self.clock.val();
                    self.fz[b].reset.next = self.reset.val();
                    self.fz[b].en.next = true;
                    self.fz[b].in_valid.next = self.vs[6].q.val();
                    self.fz[b].min.next = self.step[b].min_out.val();
                    self.fz[b].step.next = self.step[b].step_out.val();
                    self.out_z[b].next = self.fz[b].z.val();
                }

                for g in 0..3 {
                    self.out_min[g].next = self.am[g].val();
                    self.out_step[g].next = self.ast[g].val();
                }
                for i in 0..(3 * self._lz * self._zdel) {
                    self.zd_min[i].clock.next = self.clock.val();
                    self.zd_min[i].reset.next = self.reset.val();
                    self.zd_min[i].en.next = true;
                    self.zd_step[i].clock.next = self.clock.val();
                    self.zd_step[i].reset.next = self.reset.val();
                    self.zd_step[i].en.next = true;
                }
                for _d in 0..self._zdel {
                    for g in 0..3 {
                        self.zd_min[g].d.next = self.am[g].val();
                        self.zd_step[g].d.next = self.ast[g].val();
                    }
                    for i in 1..self._lz {
                        for g in 0..3 {
                            self.zd_min[3 * i + g].d.next = self.zd_min[3 * i - 3 + g].q.val();
                            self.zd_step[3 * i + g].d.next = self.zd_step[3 * i - 3 + g].q.val();
                        }
                    }
                    for i in (self._lz - 1)..self._lz {
                        for g in 0..3 {
                            self.out_min[g].next = self.zd_min[3 * i + g].q.val();
                            self.out_step[g].next = self.zd_step[3 * i + g].q.val();
                        }
                    }
                }
            }
        }
    };
}

token_params_logic!([0, 4, 0], [1, 3, 1], [2, 2, 0]);

#[cfg(test)]
mod tests {
    use super::*;
    use sim::fp16;
    use sim::oaken::params::{Group, MiddleMode, OakenParams};
    use sim::oaken::quantizer::{classify, coded_value, GroupParams};
    use sim::oaken::thresholds::ThresholdSet;

    fn edge(b: &mut TokenParams) {
        b.clock.next = Clock { clk: false };
        assert!(simulate(b, 1000));
        b.clock.next = Clock { clk: true };
        assert!(simulate(b, 1000));
    }

    /// Subgroup nodes of a vector, as the extremes tree builds them.
    fn nodes(t: &ThresholdSet, x: &[u16]) -> [u64; 5] {
        let mut n = [0u64; 5];
        for &e in x {
            let (s, _) = fp16::sanitize(e);
            let c = classify(t, s);
            let sg = match (c.group, c.upper) {
                (Group::Outer, false) => 0,
                (Group::Middle, false) => 1,
                (Group::Inner, _) => 2,
                (Group::Middle, true) => 3,
                (Group::Outer, true) => 4,
            };
            let k = fp16::key(s) as u64;
            n[sg] = if n[sg] >> 32 & 1 == 0 {
                1 << 32 | k << 16 | k
            } else {
                let (lo, hi) = (n[sg] & 0xFFFF, n[sg] >> 16 & 0xFFFF);
                1 << 32 | hi.max(k) << 16 | lo.min(k)
            };
        }
        n
    }

    /// Each group's (min, step, z), z with M = outlier_bits for both folded
    /// groups (0 for the others).
    fn expected(p: &OakenParams, t: &ThresholdSet, x: &[u16]) -> [(u16, u16, u64); 3] {
        let mut out = [(0, 0, 0); 3];
        for g in [Group::Outer, Group::Middle, Group::Inner] {
            let vs: Vec<i64> = x
                .iter()
                .map(|&e| fp16::sanitize(e).0)
                .filter(|&s| classify(t, s).group == g)
                .map(|s| coded_value(p, t, classify(t, s), fp16::to_units(s)))
                .collect();
            if let (Some(&lo), Some(&hi)) = (vs.iter().min(), vs.iter().max()) {
                let gp = GroupParams::derive(p.coding(g), lo, hi);
                out[g as usize] = (gp.meta.min, gp.meta.step, gp.fold_zero(p.outlier_bits));
            } else {
                out[g as usize].2 = GroupParams::EMPTY.fold_zero(p.outlier_bits);
            }
        }
        out
    }

    /// The block against sim's GroupParams::derive, one token per cycle, on
    /// random and edge-case vectors and threshold sets, in each middle mode
    /// (one test each, so that they run in parallel).
    #[test]
    fn matches_group_params_plain() {
        matches_group_params(MiddleMode::Plain);
    }

    #[test]
    fn matches_group_params_shifted() {
        matches_group_params(MiddleMode::Shifted);
    }

    #[test]
    fn matches_group_params_paper() {
        matches_group_params(MiddleMode::Paper);
    }

    fn matches_group_params(mode: MiddleMode) {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for ib in 2u32..=8 {
            if mode == MiddleMode::Shifted && ib < 3 {
                continue;
            }
            let p = OakenParams { inlier_bits: ib, outlier_bits: ib + 1, middle_mode: mode, ..Default::default() };
            let divisors = [Group::Outer, Group::Middle, Group::Inner].map(|g| p.coding(g).levels_minus_one());
            let shifted = [Group::Outer, Group::Middle, Group::Inner].map(|g| p.coding(g).shifted());
            let paper = mode == MiddleMode::Paper;
            let ob = ib as usize + 1;
            // paper: tokens every cycle, closer than z's latency, and
            // far enough apart for min and step to wait undelayed
            let spacings: &[usize] = if paper { &[ob + 5, 3, 1] } else { &[1, 3] };
            for &spacing in spacings {
                // the widest spacing is 2 to 5 times the edges of the others
                // a token and tests only that nothing waits: fewer tokens
                let tokens = if spacing > 3 { 150 } else { 600 };
                let mut b = TokenParams::new(divisors, shifted, paper, 1, TokenParams::latency(paper, ob) + 1, spacing);
                b.connect_all();
                b.reset.next = true;
                edge(&mut b);
                b.reset.next = false;
                let lat = TokenParams::latency(paper, ob);
                let mut held = 0;
                let mut want = std::collections::VecDeque::new();
                let mut seen = 0;
                let (mut tiny, mut sat) = (0, 0);
                for n in 0..tokens {
                    // a quarter of the tokens are tiny subnormals (side
                    // candidates a unit apart: the sign tests' ties), a few
                    // have every shifted value above 65504 (RD saturates)
                    let kind = rnd() % 16;
                    let small = |r: u64| (r % 24) as u16 | ((r >> 8 & 1) << 15) as u16;
                    let mut th: Vec<u16> = (0..4)
                        .map(|_| match if kind < 4 { 9 } else if kind == 4 { 10 } else { rnd() % 8 } {
                            9 => small(rnd()),
                            10 => 0xFBFF,
                            0 => 0x7BFF,
                            1 => 0xFBFF,
                            2 => 0,
                            3 => (rnd() % 0x400) as u16,
                            _ => (rnd() % 0x7C00) as u16 | ((rnd() & 1) << 15) as u16,
                        })
                        .map(|v| fp16::sanitize(v).0)
                        .collect();
                    th.sort_by_key(|&v| fp16::to_units(v));
                    let t = ThresholdSet::new([th[0], th[1], th[2], th[3]]).unwrap();
                    let len = 1 + (rnd() % 24) as usize;
                    let v: Vec<u16> = (0..len)
                        .map(|_| match if kind < 4 { 10 } else if kind == 4 { 11 } else { rnd() % 10 } {
                            10 => small(rnd()),
                            11 => 0x7BFF - (rnd() % 0x400) as u16,
                            0 => th[(rnd() % 4) as usize],
                            1 => 0x7BFF,
                            2 => 0xFBFF,
                            3 => (rnd() % 0x400) as u16 | ((rnd() & 1) << 15) as u16,
                            _ => (rnd() % 0x7C00) as u16 | ((rnd() & 1) << 15) as u16,
                        })
                        .collect();
                    tiny += (kind < 4) as usize;
                    sat += (kind == 4) as usize;
                    let nd = nodes(&t, &v);
                    for (s, &w) in nd.iter().enumerate() {
                        b.in_node[s].next = w.into();
                    }
                    b.in_thr.next = t.pack().into();
                    b.in_counts[0].next = ((n % 200) as u64).into();
                    b.in_status.next = 0u64.into();
                    b.in_valid.next = true;
                    let [lo_o, lo_i, _, _] = t.units();
                    held += v.iter().map(|&e| fp16::to_units(fp16::sanitize(e).0)).any(|u| {
                        (u < lo_o && u - lo_o < -fp16::MAX_UNITS) || (u >= lo_o && u < lo_i && u - lo_i < -fp16::MAX_UNITS)
                    }) as usize;
                    want.push_back((n, expected(&p, &t, &v), t.pack()));
                    for idle in 0..spacing {
                        edge(&mut b);
                        b.in_valid.next = false;
                        // what the inputs show between tokens must not matter
                        for s in 0..5 {
                            b.in_node[s].next = (rnd() & ((1 << 33) - 1)).into();
                        }
                        b.in_thr.next = rnd().into();
                        if b.out_valid.val() {
                            let (k, e, thr) = want.pop_front().unwrap();
                            for g in 0..3 {
                                let got = (b.out_min[g].val().index() as u16, b.out_step[g].val().index() as u16);
                                assert_eq!(got, (e[g].0, e[g].1), "ib {ib} {mode:?} spacing {spacing} token {k} group {g} ({idle})");
                                if paper && g < 2 {
                                    let z = b.out_z[g].val().index() as u64;
                                    assert_eq!(z, e[g].2, "z: ib {ib} spacing {spacing} token {k} group {g} ({idle})");
                                }
                            }
                            assert_eq!(b.out_thr.val().to_u64(), thr);
                            assert_eq!(b.out_counts[0].val().index(), k % 200);
                            seen += 1;
                        }
                    }
                }
                assert!(seen + lat >= tokens, "{seen} results");
                assert!(tiny > tokens / 12 && sat > tokens / 60, "tiny {tiny}, saturating {sat}");
                assert!(!paper || held > tokens / 60, "folded values held at -65504: {held}");
            }
        }
    }
}
