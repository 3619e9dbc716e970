//! One lane of the quantization engine's second pass.
//! Paper: Oaken §4.4 Eq. 4 (group shift and uniform code), §4.5 (fused
//! dense-and-sparse encoding). Spec: docs/spec.md §2.5 (coded value and side),
//! §2.7 (q = floor((2n + step) / (2 step))), §5.3 (the normalised divider),
//! §2.8 (dense slot and COO fields), §2.14 (these stages).
//!
//! Stages (all advance on `en`):
//! - L1: classify; the element's significand, its units shift `E - 1`, and
//!   whether `v` is its negation (the complement's +1 waits as a carry);
//! - L2: `n = v - min`, one 42-bit add of the shifted significand, its
//!   complement mask and carry, and the subgroup's offset;
//! - L3: the normalised dividend `N' = (n >> (e - 1)) + m`, or `2n + m`
//!   when `e = 0` (spec §5.3), masked to `12 + Q` bits;
//! - quotient steps: step 0 alone, then two per stage; a step is one
//!   subtract whose borrow is the compare, against the lane's own copy of
//!   its group's `m` (taken at L3; a shared copy per stage, selected by
//!   group and fanned out to every lane, set the critical path); the code,
//!   split into the dense slot and the COO fields, with the last stage's
//!   steps.
//!
//! `paper` mode (spec §2.5, §2.7): no side is negated (v = x - T_side); a
//! negative n (a lower value held at -65504) codes as 0; and the last stage
//! keeps a folded code on its side of zero by clamping it to `z - 1`
//! (lower) or `z` (upper), the group's z coming with the token's first
//! beat. The outer code is plain: its bit IB is the COO `hi` bit.

use super::classify::Classify;
use crate::prim::div_round::NW;
use crate::prim::fp16::FX;
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Offsets of the five subgroups, 42 bits each (a plain middle group's two
/// are equal).
pub const OFFW: usize = 5 * FX;
/// L3 fields of the three groups, 18 bits each: [10:0] m, [16:11] the right
/// shift e - 1, [17] shift left by one instead (e = 0) (spec §5.3).
pub const NORMW: usize = 54;
/// Register stages of a lane with `ib`-bit dense slots (`EncodeLane::latency`).
pub fn latency(ib: usize) -> usize {
    3 + 1 + ib.div_ceil(2)
}

/// `IB` = inlier_bits (dense slot width). Token-level inputs are packed buses: a child's port cannot be a `Vec`
/// when the children are themselves a `Vec` (rust-hdl resolves one index per
/// name).
#[derive(LogicBlock)]
pub struct EncodeLane<const IB: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance.
    pub en: Signal<In, Bit>,
    /// L1: sanitised element and the token's threshold order keys.
    pub x: Signal<In, Bits<16>>,
    pub k_lo_o: Signal<In, Bits<16>>,
    pub k_lo_i: Signal<In, Bits<16>>,
    pub k_hi_i: Signal<In, Bits<16>>,
    pub k_hi_o: Signal<In, Bits<16>>,
    /// L2: offset of subgroup s at [42s+41:42s]: n = v + off.
    pub off: Signal<In, Bits<OFFW>>,
    /// L3: the groups' divisor fields.
    pub norm: Signal<In, Bits<NORMW>>,
    /// Last stage: per group, step = 0 (every code is 0).
    pub dz: Signal<In, Bits<3>>,
    /// Last stage (`paper` mode): {z middle, z outer}, 16 bits each.
    pub zc: Signal<In, Bits<32>>,
    /// Dense slot.
    pub dense: Signal<Out, Bits<IB>>,
    /// Outer or inner element: it has a COO entry.
    pub keep: Signal<Out, Bit>,
    /// COO group bit: 1 outer, 0 inner.
    pub grp: Signal<Out, Bit>,
    /// COO hi bit: outer side, or inner code bit IB.
    pub hi: Signal<Out, Bit>,
    cls: Classify,
    l1_sig: Reg<Bits<11>>,
    l1_sa: Reg<Bits<5>>,
    l1_cin: Reg<Bit>,
    l1_sg: Reg<Bits<3>>,
    l2_n: Reg<Bits<FX>>,
    l2_g: Reg<Bits<2>>,
    l2_side: Reg<Bit>,
    // the register before step j (only where brk[j]): remainder, quotient
    // so far, the group's m, group, side
    sr: Vec<Reg<Bits<NW>>>,
    sm: Vec<Reg<Bits<11>>>,
    sq: Vec<Reg<Bits<16>>>,
    sgr: Vec<Reg<Bits<2>>>,
    ss: Vec<Reg<Bit>>,
    out_dense: Reg<Bits<IB>>,
    out_keep: Reg<Bit>,
    out_grp: Reg<Bit>,
    out_hi: Reg<Bit>,
    // locals
    flip: Signal<Local, Bit>,
    sig: Signal<Local, Bits<11>>,
    sa: Signal<Local, Bits<5>>,
    g2: Signal<Local, Bits<2>>,
    mag: Signal<Local, Bits<FX>>,
    cm: Signal<Local, Bits<FX>>,
    offv: Signal<Local, Bits<FX>>,
    nf: Signal<Local, Bits<18>>,
    shv: Signal<Local, Bits<FX>>,
    mv: Signal<Local, Bits<FX>>,
    /// Step j's inputs at j, its results at j + 1.
    rem: Vec<Signal<Local, Bits<NW>>>,
    qv: Vec<Signal<Local, Bits<16>>>,
    mm: Vec<Signal<Local, Bits<11>>>,
    mi: Signal<Local, Bits<11>>,
    gv: Vec<Signal<Local, Bits<2>>>,
    sv: Vec<Signal<Local, Bit>>,
    ri: Signal<Local, Bits<NW>>,
    qi: Signal<Local, Bits<16>>,
    gi: Signal<Local, Bits<2>>,
    si: Signal<Local, Bit>,
    dsh: Signal<Local, Bits<NW>>,
    diff: Signal<Local, Bits<NW>>,
    qf: Signal<Local, Bits<16>>,
    gf: Signal<Local, Bits<2>>,
    dzg: Signal<Local, Bit>,
    sidev: Signal<Local, Bit>,
    zg: Signal<Local, Bits<16>>,
    /// A register sits before step j.
    brk: Vec<Constant<Bit>>,
    /// Remainder masks (spec §5.3: before step j, rem < 2^(12 + Q - j)).
    rmask: Vec<Constant<Bits<NW>>>,
    /// Step j compares against 2m * 2^(Q-1-j) = m << (Q - j).
    sh: Vec<Constant<Bits<NW>>>,
    off_at: Vec<Constant<Bits<32>>>,
    norm_at: Vec<Constant<Bits<32>>>,
    sgc: Vec<Constant<Bits<3>>>,
    gc: Vec<Constant<Bits<2>>>,
    imp11: Constant<Bits<11>>,
    one5: Constant<Bits<5>>,
    zero5: Constant<Bits<5>>,
    zero_fx: Constant<Bits<FX>>,
    one_fx: Constant<Bits<FX>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    f_sh: Constant<Bits<32>>,
    f_left: Constant<Bits<32>>,
    msb: Constant<Bits<32>>,
    /// Middle-group dense slot: code bits kept, and where the side goes
    /// (spec §2.5; the side is kept only in shifted mode).
    mid_mask: Constant<Bits<16>>,
    sh_side: Constant<Bits<IB>>,
    mid_side: Constant<Bit>,
    hi_bit: Constant<Bits<32>>,
    /// `paper` mode: folded outer and middle groups.
    paper: Constant<Bit>,
    z_at: Constant<Bits<32>>,
    n_msb: Constant<Bits<32>>,
    _q: usize,
}

impl<const IB: usize> EncodeLane<IB> {
    /// Step stages: step 0 alone, then two steps each.
    pub fn step_stages(ib: usize) -> usize {
        1 + ib.div_ceil(2)
    }

    /// The stage (0-based among the step stages) of quotient step `j`.
    fn stage_of(j: usize) -> usize {
        if j == 0 {
            0
        } else {
            1 + (j - 1) / 2
        }
    }

    /// `mid_shifted`: the middle group is side-magnitude; `paper`: the
    /// outer and middle groups are folded (spec §2.5).
    pub fn new(mid_shifted: bool, paper: bool) -> Self {
        assert!(!(mid_shifted && paper));
        assert!((2..=8).contains(&IB));
        let q = IB + 1;
        // the widest remainder, 12 + Q bits, fits the divider's datapath
        assert!(12 + q < NW);
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
        }
        fn sigs<T: Synth>(n: usize) -> Vec<Signal<Local, T>> {
            (0..n).map(|_| Default::default()).collect()
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        EncodeLane {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            x: Default::default(),
            k_lo_o: Default::default(),
            k_lo_i: Default::default(),
            k_hi_i: Default::default(),
            k_hi_o: Default::default(),
            off: Default::default(),
            norm: Default::default(),
            dz: Default::default(),
            zc: Default::default(),
            dense: Default::default(),
            keep: Default::default(),
            grp: Default::default(),
            hi: Default::default(),
            cls: Classify::default(),
            l1_sig: Reg::default(),
            l1_sa: Reg::default(),
            l1_cin: Reg::default(),
            l1_sg: Reg::default(),
            l2_n: Reg::default(),
            l2_g: Reg::default(),
            l2_side: Reg::default(),
            sr: regs(q),
            sm: regs(q),
            sq: regs(q),
            sgr: regs(q),
            ss: regs(q),
            out_dense: Reg::default(),
            out_keep: Reg::default(),
            out_grp: Reg::default(),
            out_hi: Reg::default(),
            flip: Default::default(),
            sig: Default::default(),
            sa: Default::default(),
            g2: Default::default(),
            mag: Default::default(),
            cm: Default::default(),
            offv: Default::default(),
            nf: Default::default(),
            shv: Default::default(),
            mv: Default::default(),
            rem: sigs(q),
            qv: sigs(q + 1),
            mm: sigs(q),
            mi: Default::default(),
            gv: sigs(q + 1),
            sv: sigs(q + 1),
            ri: Default::default(),
            qi: Default::default(),
            gi: Default::default(),
            si: Default::default(),
            dsh: Default::default(),
            diff: Default::default(),
            qf: Default::default(),
            gf: Default::default(),
            dzg: Default::default(),
            sidev: Default::default(),
            zg: Default::default(),
            brk: (0..q).map(|j| Constant::new(j == 0 || Self::stage_of(j) != Self::stage_of(j - 1))).collect(),
            rmask: (0..q).map(|j| c((1u64 << (12 + q - j)) - 1)).collect(),
            sh: (0..q).map(|j| c((q - j) as u64)).collect(),
            off_at: (0..5).map(|i| c((FX * i) as u64)).collect(),
            norm_at: (0..3).map(|i| c(18 * i as u64)).collect(),
            sgc: (0..5).map(|i| c(i as u64)).collect(),
            gc: (0..3).map(|i| c(i as u64)).collect(),
            imp11: c(1024),
            one5: c(1),
            zero5: c(0),
            zero_fx: c(0),
            one_fx: c(1),
            zero16: c(0),
            one16: c(1),
            f_sh: c(11),
            f_left: c(17),
            msb: c((NW - 1) as u64),
            mid_mask: c(if mid_shifted { (1u64 << (IB - 1)) - 1 } else { (1u64 << IB) - 1 }),
            sh_side: c((IB - 1) as u64),
            mid_side: Constant::new(mid_shifted),
            hi_bit: c(IB as u64),
            paper: Constant::new(paper),
            z_at: c(16),
            n_msb: c((FX - 1) as u64),
            _q: q,
        }
    }

    /// Register stages from `x` to the outputs: L1, L2, L3, then the step
    /// stages (the last one registers the code).
    pub fn latency() -> usize {
        let l = 3 + Self::step_stages(IB);
        debug_assert_eq!(l, latency(IB));
        l
    }
}

impl<const IB: usize> Logic for EncodeLane<IB> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, l1_sig, l1_sa, l1_cin, l1_sg, l2_n, l2_g, l2_side, out_dense, out_keep, out_grp, out_hi
        );
        self.l1_sig.reset.next = self.reset.val();
        self.l1_sa.reset.next = self.reset.val();
        self.l1_cin.reset.next = self.reset.val();
        self.l1_sg.reset.next = self.reset.val();
        self.l2_n.reset.next = self.reset.val();
        // Registers after L2 carry no reset (spec §2.14): the engine ANDs
        // this lane's outputs with their beat's valid bit, so what they hold
        // before the first beat never shows. L1/L2 keep theirs: without them
        // the OSU018 netlist differed from this RTL (spec §8.2).
        self.l2_g.reset.next = false;
        self.l2_side.reset.next = false;
        self.out_dense.reset.next = false;
        self.out_keep.reset.next = false;
        self.out_grp.reset.next = false;
        self.out_hi.reset.next = false;
        self.l1_sig.en.next = self.en.val();
        self.l1_sa.en.next = self.en.val();
        self.l1_cin.en.next = self.en.val();
        self.l1_sg.en.next = self.en.val();
        self.l2_n.en.next = self.en.val();
        self.l2_g.en.next = self.en.val();
        self.l2_side.en.next = self.en.val();
        self.out_dense.en.next = self.en.val();
        self.out_keep.en.next = self.en.val();
        self.out_grp.en.next = self.en.val();
        self.out_hi.en.next = self.en.val();
        for j in 0..self._q {
            self.sr[j].clock.next = self.clock.val();
            self.sr[j].reset.next = false;
            self.sr[j].en.next = self.en.val();
            self.sm[j].clock.next = self.clock.val();
            self.sm[j].reset.next = false;
            self.sm[j].en.next = self.en.val();
            self.sq[j].clock.next = self.clock.val();
            self.sq[j].reset.next = false;
            self.sq[j].en.next = self.en.val();
            self.sgr[j].clock.next = self.clock.val();
            self.sgr[j].reset.next = false;
            self.sgr[j].en.next = self.en.val();
            self.ss[j].clock.next = self.clock.val();
            self.ss[j].reset.next = false;
            self.ss[j].en.next = self.en.val();
        }

        // L1: classify; units(x) = sig << sa (sig without the implicit one
        // and sa = 0 for E = 0); v is -units(x) on a shifted group's lower
        // side, and a negative v is kept as !mag and a carry of 1
        self.cls.x.next = self.x.val();
        self.cls.k_lo_o.next = self.k_lo_o.val();
        self.cls.k_lo_i.next = self.k_lo_i.val();
        self.cls.k_hi_i.next = self.k_hi_i.val();
        self.cls.k_hi_o.next = self.k_hi_o.val();
        self.flip.next = ((self.cls.sg.val() == self.sgc[0].val()) & !self.paper.val())
            | (self.mid_side.val() & (self.cls.sg.val() == self.sgc[1].val()));
        self.sig.next = bit_cast::<11, 10>(self.x.val().get_bits::<10>(0)) | self.imp11.val();
        self.sa.next = self.x.val().get_bits::<5>(10) - self.one5.val();
        if self.x.val().get_bits::<5>(10) == self.zero5.val() {
            self.sig.next = bit_cast::<11, 10>(self.x.val().get_bits::<10>(0));
            self.sa.next = self.zero5.val();
        }
        self.l1_sig.d.next = self.sig.val();
        self.l1_sa.d.next = self.sa.val();
        self.l1_cin.d.next = self.x.val().get_bit(15) ^ self.flip.val();
        self.l1_sg.d.next = self.cls.sg.val();

        // L2: n = v + offset of the subgroup, one add with the carry in
        self.mag.next = bit_cast::<FX, 11>(self.l1_sig.q.val()) << bit_cast::<FX, 5>(self.l1_sa.q.val());
        self.cm.next = self.zero_fx.val();
        if self.l1_cin.q.val() {
            self.cm.next = !self.zero_fx.val();
        }
        self.offv.next = self.off.val().get_bits::<FX>(self.off_at[4].val().index());
        for s in 0..4 {
            if self.l1_sg.q.val() == self.sgc[s].val() {
                self.offv.next = self.off.val().get_bits::<FX>(self.off_at[s].val().index());
            }
        }
        self.l2_n.d.next =
            (self.mag.val() ^ self.cm.val()) + self.offv.val() + bit_cast::<FX, 1>(self.l1_cin.q.val().into());
        self.g2.next = self.gc[0].val();
        if (self.l1_sg.q.val() == self.sgc[1].val()) | (self.l1_sg.q.val() == self.sgc[3].val()) {
            self.g2.next = self.gc[1].val();
        }
        if self.l1_sg.q.val() == self.sgc[2].val() {
            self.g2.next = self.gc[2].val();
        }
        self.l2_g.d.next = self.g2.val();
        self.l2_side.d.next =
            (self.l1_sg.q.val() == self.sgc[3].val()) | (self.l1_sg.q.val() == self.sgc[4].val());

        // L3: N' = (n >> (e-1)) + m, or 2n + m when e = 0 (spec §5.3)
        self.nf.next = self.norm.val().get_bits::<18>(self.norm_at[0].val().index());
        if self.l2_g.q.val() == self.gc[1].val() {
            self.nf.next = self.norm.val().get_bits::<18>(self.norm_at[1].val().index());
        }
        if self.l2_g.q.val() == self.gc[2].val() {
            self.nf.next = self.norm.val().get_bits::<18>(self.norm_at[2].val().index());
        }
        self.mv.next = bit_cast::<FX, 11>(self.nf.val().get_bits::<11>(0));
        self.shv.next = self.l2_n.q.val() >> bit_cast::<FX, 6>(self.nf.val().get_bits::<6>(self.f_sh.val().index()));
        if self.nf.val().get_bit(self.f_left.val().index()) {
            self.shv.next = self.l2_n.q.val() << self.one_fx.val();
        }
        // paper mode: n < 0 only for a lower value held at -65504 (spec
        // §2.5), whose n is 0
        if self.paper.val() & self.l2_n.q.val().get_bit(self.n_msb.val().index()) {
            self.shv.next = self.zero_fx.val();
        }
        self.rem[0].next = bit_cast::<NW, FX>(self.shv.val() + self.mv.val()) & self.rmask[0].val();
        self.qv[0].next = self.zero16.val();
        self.mm[0].next = self.nf.val().get_bits::<11>(0);
        self.gv[0].next = self.l2_g.q.val();
        self.sv[0].next = self.l2_side.q.val();

        // quotient steps, most significant first: step j compares with
        // 2m * 2^(Q-1-j); one subtract, whose borrow (the top bit: both
        // operands are below 2^(12+Q) < 2^(NW-1)) is the compare
        for j in 0..(self._q - 1) {
            self.ri.next = self.rem[j].val();
            self.qi.next = self.qv[j].val();
            self.mi.next = self.mm[j].val();
            self.gi.next = self.gv[j].val();
            self.si.next = self.sv[j].val();
            if self.brk[j].val() {
                self.ri.next = self.sr[j].q.val();
                self.qi.next = self.sq[j].q.val();
                self.mi.next = self.sm[j].q.val();
                self.gi.next = self.sgr[j].q.val();
                self.si.next = self.ss[j].q.val();
            }
            self.dsh.next = bit_cast::<NW, 11>(self.mi.val()) << self.sh[j].val();
            self.diff.next = self.ri.val() - self.dsh.val();
            self.rem[j + 1].next = self.ri.val() & self.rmask[j + 1].val();
            self.qv[j + 1].next = self.qi.val() << self.one16.val();
            if !self.diff.val().get_bit(self.msb.val().index()) {
                self.rem[j + 1].next = self.diff.val() & self.rmask[j + 1].val();
                self.qv[j + 1].next = (self.qi.val() << self.one16.val()) | self.one16.val();
            }
            self.gv[j + 1].next = self.gi.val();
            self.sv[j + 1].next = self.si.val();
            self.mm[j + 1].next = self.mi.val();
        }
        // the last step only compares (its remainder and m are not needed)
        for j in (self._q - 1)..self._q {
            self.ri.next = self.rem[j].val();
            self.qi.next = self.qv[j].val();
            self.mi.next = self.mm[j].val();
            self.gi.next = self.gv[j].val();
            self.si.next = self.sv[j].val();
            if self.brk[j].val() {
                self.ri.next = self.sr[j].q.val();
                self.qi.next = self.sq[j].q.val();
                self.mi.next = self.sm[j].q.val();
                self.gi.next = self.sgr[j].q.val();
                self.si.next = self.ss[j].q.val();
            }
            self.dsh.next = bit_cast::<NW, 11>(self.mi.val()) << self.sh[j].val();
            self.diff.next = self.ri.val() - self.dsh.val();
            self.qv[j + 1].next = self.qi.val() << self.one16.val();
            if !self.diff.val().get_bit(self.msb.val().index()) {
                self.qv[j + 1].next = (self.qi.val() << self.one16.val()) | self.one16.val();
            }
            self.gv[j + 1].next = self.gi.val();
            self.sv[j + 1].next = self.si.val();
        }
        // the register before step j holds what step j would read
        for j in 0..self._q {
            self.sr[j].d.next = self.rem[j].val();
            self.sm[j].d.next = self.mm[j].val();
            self.sq[j].d.next = self.qv[j].val();
            self.sgr[j].d.next = self.gv[j].val();
            self.ss[j].d.next = self.sv[j].val();
        }

        // assembly after the last step (spec §2.8): dense slot and COO fields
        for l in self._q..(self._q + 1) {
            self.qf.next = self.qv[l].val();
            self.gf.next = self.gv[l].val();
            // dz read by compares, not dz[gf]: gf = 3 cannot occur, but an
            // index out of range is x, which the synthesis may fill as it
            // likes and a netlist proof then cannot match
            self.dzg.next = false;
            for g in 0..3 {
                if self.gf.val() == self.gc[g].val() {
                    self.dzg.next = self.dz.val().get_bit(self.gc[g].val().index());
                }
            }
            if self.dzg.val() {
                self.qf.next = self.zero16.val();
            }
            // paper mode: a folded code stays on its side of zero (spec
            // §2.7): lower codes at most z - 1, upper ones at least z
            self.zg.next = self.zc.val().get_bits::<16>(0);
            if self.gf.val() == self.gc[1].val() {
                self.zg.next = self.zc.val().get_bits::<16>(self.z_at.val().index());
            }
            if self.paper.val() & (self.gf.val() != self.gc[2].val()) {
                if self.sv[l].val() {
                    if self.qf.val() < self.zg.val() {
                        self.qf.next = self.zg.val();
                    }
                } else if self.qf.val() >= self.zg.val() {
                    self.qf.next = self.zg.val() - self.one16.val();
                }
            }
            self.sidev.next = self.sv[l].val() & self.mid_side.val();
            self.out_dense.d.next = self.qf.val().get_bits::<IB>(0);
            if self.gf.val() == self.gc[1].val() {
                self.out_dense.d.next = bit_cast::<IB, 16>(self.qf.val() & self.mid_mask.val())
                    | (bit_cast::<IB, 1>(self.sidev.val().into()) << self.sh_side.val());
            }
            self.out_keep.d.next = self.gf.val() != self.gc[1].val();
            self.out_grp.d.next = self.gf.val() == self.gc[0].val();
            self.out_hi.d.next = self.qf.val().get_bit(self.hi_bit.val().index());
            if (self.gf.val() == self.gc[0].val()) & !self.paper.val() {
                self.out_hi.d.next = self.sv[l].val();
            }
        }
        self.dense.next = self.out_dense.q.val();
        self.keep.next = self.out_keep.q.val();
        self.grp.next = self.out_grp.q.val();
        self.hi.next = self.out_hi.q.val();
    }
}
