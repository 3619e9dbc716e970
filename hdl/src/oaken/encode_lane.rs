//! One lane of the quantization engine's second pass.
//! Paper: Oaken §4.4 Eq. 4 (group shift and uniform code), §4.5 (fused
//! dense-and-sparse encoding). Spec: docs/spec.md §2.5 (coded value and side),
//! §2.7 (q = floor((2n + step) / (2 step))), §5.3 (the divider), §2.8 (dense
//! slot and COO fields).
//!
//! Stages (all advance on `en`): L1 classify (the element is kept as its
//! 16-bit pattern); L2 magnitude in units, complemented where `v` is its
//! negation (the +1 of the two's complement waits as a carry bit); L3 n = v +
//! offset of the subgroup, one add with that carry in; L4 the divider's
//! normalised dividend; one restoring step per quotient bit, the remainder
//! only as wide as its bound (spec §5.3); then the code, split into the dense
//! slot and COO fields.

use super::classify::Classify;
use crate::prim::div_round::NW;
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Offsets of the five subgroups, 42 bits each.
pub const OFFW: usize = 5 * FX;
/// Divisor fields of the three groups, 32 bits each: [15:0] m, [23:16] the
/// right shift e-1, [24] shift left by one instead (e = 0), [25] step = 0
/// (spec §5.3).
pub const NORMW: usize = 96;

/// `IB` = inlier_bits (dense slot width); `D2W` = 48 * (IB + 1): per quotient
/// step and group, 2m as 16 bits. Token-level inputs are packed buses: a
/// child's port cannot be a `Vec` when the children are themselves a `Vec`
/// (rust-hdl resolves one index per name).
#[derive(LogicBlock)]
pub struct EncodeLane<const IB: usize, const D2W: usize> {
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
    /// L3: offset of subgroup s at [42s+41:42s]: n = v + off.
    pub off: Signal<In, Bits<OFFW>>,
    /// L3: divisor fields of group g at [32g+31:32g] (selected at L3, used
    /// at L4, so that L4 holds only the shift and the add).
    pub norm: Signal<In, Bits<NORMW>>,
    /// Step j: 2m of group g at slot j*3 + g, 16 bits each.
    pub d2: Signal<In, Bits<D2W>>,
    /// Dense slot.
    pub dense: Signal<Out, Bits<IB>>,
    /// Outer or inner element: it has a COO entry.
    pub keep: Signal<Out, Bit>,
    /// COO group bit: 1 outer, 0 inner.
    pub grp: Signal<Out, Bit>,
    /// COO hi bit: outer side, or inner code bit IB.
    pub hi: Signal<Out, Bit>,
    cls: Classify,
    conv: Fp16ToUnits,
    l1_x: Reg<Bits<16>>,
    l1_sg: Reg<Bits<3>>,
    // v = l2_v + l2_c (two's complement, FX bits)
    l2_v: Reg<Bits<FX>>,
    l2_c: Reg<Bit>,
    l2_sg: Reg<Bits<3>>,
    l3_n: Reg<Bits<FX>>,
    l3_g: Reg<Bits<2>>,
    l3_side: Reg<Bit>,
    l3_nf: Reg<Bits<32>>,
    // index 0 after L4, j+1 after step j (remainder only while steps remain)
    rem: Vec<Reg<Bits<NW>>>,
    q: Vec<Reg<Bits<16>>>,
    g: Vec<Reg<Bits<2>>>,
    side: Vec<Reg<Bit>>,
    dz: Vec<Reg<Bit>>,
    out_dense: Reg<Bits<IB>>,
    out_keep: Reg<Bit>,
    out_grp: Reg<Bit>,
    out_hi: Reg<Bit>,
    // locals
    flip: Signal<Local, Bit>,
    /// Complement mask: all ones where `v = -mag`.
    cmask: Signal<Local, Bits<FX>>,
    /// Remainder masks (spec §5.3: before step j, rem < 2^(12 + Q - j)).
    rmask: Vec<Constant<Bits<NW>>>,
    g3: Signal<Local, Bits<2>>,
    diff: Signal<Local, Bits<NW>>,
    borrow: Signal<Local, Bit>,
    ra: Signal<Local, Bit>,
    rb: Signal<Local, Bit>,
    offv: Signal<Local, Bits<FX>>,
    nf: Signal<Local, Bits<32>>,
    shamt: Signal<Local, Bits<FX>>,
    d2v: Signal<Local, Bits<16>>,
    dsh: Signal<Local, Bits<NW>>,
    qf: Signal<Local, Bits<16>>,
    sidev: Signal<Local, Bit>,
    off_at: Vec<Constant<Bits<32>>>,
    norm_at: Vec<Constant<Bits<32>>>,
    d2_at: Vec<Constant<Bits<32>>>,
    sgc: Vec<Constant<Bits<3>>>,
    gc: Vec<Constant<Bits<2>>>,
    sh: Vec<Constant<Bits<NW>>>,
    msb: Constant<Bits<32>>,
    f_sh: Constant<Bits<32>>,
    f_left: Constant<Bits<32>>,
    f_dz: Constant<Bits<32>>,
    zero_fx: Constant<Bits<FX>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    one_fx: Constant<Bits<FX>>,
    /// Middle-group dense slot: code bits kept, and where the side goes
    /// (spec §2.5; the side is kept only in shifted mode).
    mid_mask: Constant<Bits<16>>,
    sh_side: Constant<Bits<IB>>,
    mid_side: Constant<Bit>,
    hi_bit: Constant<Bits<32>>,
    _q: usize,
}

impl<const IB: usize, const D2W: usize> EncodeLane<IB, D2W> {
    pub fn new(mid_shifted: bool) -> Self {
        assert!((2..=8).contains(&IB) && D2W == 48 * (IB + 1));
        let q = IB + 1;
        // the widest remainder, 12 + Q bits, fits the divider's datapath
        assert!(12 + q <= NW);
        fn regs<T: Synth>(n: usize) -> Vec<Reg<T>> {
            (0..n).map(|_| Reg::default()).collect()
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
            d2: Default::default(),
            dense: Default::default(),
            keep: Default::default(),
            grp: Default::default(),
            hi: Default::default(),
            cls: Classify::default(),
            conv: Fp16ToUnits::default(),
            l1_x: Reg::default(),
            l1_sg: Reg::default(),
            l2_v: Reg::default(),
            l2_c: Reg::default(),
            l2_sg: Reg::default(),
            l3_n: Reg::default(),
            l3_g: Reg::default(),
            l3_side: Reg::default(),
            l3_nf: Reg::default(),
            rem: regs(q),
            q: regs(q + 1),
            g: regs(q + 1),
            side: regs(q + 1),
            dz: regs(q + 1),
            out_dense: Reg::default(),
            out_keep: Reg::default(),
            out_grp: Reg::default(),
            out_hi: Reg::default(),
            flip: Default::default(),
            cmask: Default::default(),
            rmask: (0..q).map(|j| c((1u64 << (12 + q - j)) - 1)).collect(),
            g3: Default::default(),
            diff: Default::default(),
            borrow: Default::default(),
            ra: Default::default(),
            rb: Default::default(),
            offv: Default::default(),
            nf: Default::default(),
            shamt: Default::default(),
            d2v: Default::default(),
            dsh: Default::default(),
            qf: Default::default(),
            sidev: Default::default(),
            off_at: (0..5).map(|i| c((FX * i) as u64)).collect(),
            norm_at: (0..3).map(|i| c(32 * i as u64)).collect(),
            d2_at: (0..3 * q).map(|i| c(16 * i as u64)).collect(),
            sgc: (0..5).map(|i| c(i as u64)).collect(),
            gc: (0..3).map(|i| c(i as u64)).collect(),
            sh: (0..q - 1).map(|j| c((q - 1 - j) as u64)).collect(),
            msb: c((NW - 1) as u64),
            f_sh: c(16),
            f_left: c(24),
            f_dz: c(25),
            zero_fx: c(0),
            zero16: c(0),
            one16: c(1),
            one_fx: c(1),
            mid_mask: c(if mid_shifted { (1u64 << (IB - 1)) - 1 } else { (1u64 << IB) - 1 }),
            sh_side: c((IB - 1) as u64),
            mid_side: Constant::new(mid_shifted),
            hi_bit: c(IB as u64),
            _q: q,
        }
    }

    /// Register stages from `x` to the outputs: L1-L4, Q steps, assembly.
    pub fn latency() -> usize {
        4 + (IB + 1) + 1
    }
}

impl<const IB: usize, const D2W: usize> Logic for EncodeLane<IB, D2W> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, l1_x, l1_sg, l2_v, l2_c, l2_sg, l3_n, l3_g, l3_side, l3_nf, out_dense, out_keep, out_grp,
            out_hi
        );
        self.l1_x.reset.next = self.reset.val();
        self.l1_sg.reset.next = self.reset.val();
        self.l2_v.reset.next = self.reset.val();
        self.l2_c.reset.next = self.reset.val();
        self.l2_sg.reset.next = self.reset.val();
        self.l3_n.reset.next = self.reset.val();
        self.l3_g.reset.next = self.reset.val();
        self.l3_side.reset.next = self.reset.val();
        self.l3_nf.reset.next = self.reset.val();
        self.out_dense.reset.next = self.reset.val();
        self.out_keep.reset.next = self.reset.val();
        self.out_grp.reset.next = self.reset.val();
        self.out_hi.reset.next = self.reset.val();
        self.l1_x.en.next = self.en.val();
        self.l1_sg.en.next = self.en.val();
        self.l2_v.en.next = self.en.val();
        self.l2_c.en.next = self.en.val();
        self.l2_sg.en.next = self.en.val();
        self.l3_n.en.next = self.en.val();
        self.l3_g.en.next = self.en.val();
        self.l3_side.en.next = self.en.val();
        self.l3_nf.en.next = self.en.val();
        self.out_dense.en.next = self.en.val();
        self.out_keep.en.next = self.en.val();
        self.out_grp.en.next = self.en.val();
        self.out_hi.en.next = self.en.val();

        // L1
        self.cls.x.next = self.x.val();
        self.cls.k_lo_o.next = self.k_lo_o.val();
        self.cls.k_lo_i.next = self.k_lo_i.val();
        self.cls.k_hi_i.next = self.k_hi_i.val();
        self.cls.k_hi_o.next = self.k_hi_o.val();
        self.l1_x.d.next = self.x.val();
        self.l1_sg.d.next = self.cls.sg.val();

        // L2: v = x, or lo_T - x on the lower side of a shifted group; the
        // threshold part is in the offset (spec §2.5). -mag is kept as
        // !mag and a carry of 1, added at L3.
        self.conv.x.next = self.l1_x.q.val();
        self.flip.next = (self.l1_sg.q.val() == self.sgc[0].val())
            | (self.mid_side.val() & (self.l1_sg.q.val() == self.sgc[1].val()));
        self.cmask.next = self.zero_fx.val();
        if self.conv.neg.val() ^ self.flip.val() {
            self.cmask.next = !self.zero_fx.val();
        }
        self.l2_v.d.next = self.conv.mag.val() ^ self.cmask.val();
        self.l2_c.d.next = self.conv.neg.val() ^ self.flip.val();
        self.l2_sg.d.next = self.l1_sg.q.val();

        // L3: n, group and side
        self.offv.next = self.off.val().get_bits::<FX>(self.off_at[4].val().index());
        self.g3.next = self.gc[0].val();
        for s in 0..4 {
            if self.l2_sg.q.val() == self.sgc[s].val() {
                self.offv.next = self.off.val().get_bits::<FX>(self.off_at[s].val().index());
            }
        }
        if (self.l2_sg.q.val() == self.sgc[1].val()) | (self.l2_sg.q.val() == self.sgc[3].val()) {
            self.g3.next = self.gc[1].val();
        }
        if self.l2_sg.q.val() == self.sgc[2].val() {
            self.g3.next = self.gc[2].val();
        }
        self.l3_g.d.next = self.g3.val();
        self.l3_nf.d.next = self.norm.val().get_bits::<32>(self.norm_at[0].val().index());
        if self.g3.val() == self.gc[1].val() {
            self.l3_nf.d.next = self.norm.val().get_bits::<32>(self.norm_at[1].val().index());
        }
        if self.g3.val() == self.gc[2].val() {
            self.l3_nf.d.next = self.norm.val().get_bits::<32>(self.norm_at[2].val().index());
        }
        self.l3_n.d.next = self.l2_v.q.val() + self.offv.val() + bit_cast::<FX, 1>(self.l2_c.q.val().into());
        self.l3_side.d.next = (self.l2_sg.q.val() == self.sgc[3].val()) | (self.l2_sg.q.val() == self.sgc[4].val());

        // L4: the normalised dividend N' = (n >> (e-1)) + m, or 2n + m when
        // e = 0 (spec §5.3)
        for i in 0..self._q {
            self.rem[i].clock.next = self.clock.val();
            self.rem[i].reset.next = self.reset.val();
            self.rem[i].en.next = self.en.val();
        }
        for i in 0..(self._q + 1) {
            self.q[i].clock.next = self.clock.val();
            self.q[i].reset.next = self.reset.val();
            self.q[i].en.next = self.en.val();
            self.g[i].clock.next = self.clock.val();
            self.g[i].reset.next = self.reset.val();
            self.g[i].en.next = self.en.val();
            self.side[i].clock.next = self.clock.val();
            self.side[i].reset.next = self.reset.val();
            self.side[i].en.next = self.en.val();
            self.dz[i].clock.next = self.clock.val();
            self.dz[i].reset.next = self.reset.val();
            self.dz[i].en.next = self.en.val();
        }
        self.nf.next = self.l3_nf.q.val();
        self.shamt.next = bit_cast::<FX, 8>(self.nf.val().get_bits::<8>(self.f_sh.val().index()));
        self.rem[0].d.next = (bit_cast::<NW, FX>(self.l3_n.q.val() >> self.shamt.val())
            + bit_cast::<NW, 16>(self.nf.val().get_bits::<16>(0)))
            & self.rmask[0].val();
        if self.nf.val().get_bit(self.f_left.val().index()) {
            self.rem[0].d.next = (bit_cast::<NW, FX>(self.l3_n.q.val() << self.one_fx.val())
                + bit_cast::<NW, 16>(self.nf.val().get_bits::<16>(0)))
                & self.rmask[0].val();
        }
        self.q[0].d.next = self.zero16.val();
        self.g[0].d.next = self.l3_g.q.val();
        self.side[0].d.next = self.l3_side.q.val();
        self.dz[0].d.next = self.nf.val().get_bit(self.f_dz.val().index());

        // quotient steps against 2m * 2^(Q-1-j), most significant bit first
        for j in 0..self._q {
            self.g[j + 1].d.next = self.g[j].q.val();
            self.side[j + 1].d.next = self.side[j].q.val();
            self.dz[j + 1].d.next = self.dz[j].q.val();
            self.q[j + 1].d.next = self.q[j].q.val() << self.one16.val();
        }
        for j in 0..(self._q - 1) {
            self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j].val().index());
            if self.g[j].q.val() == self.gc[1].val() {
                self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j + 1].val().index());
            }
            if self.g[j].q.val() == self.gc[2].val() {
                self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j + 2].val().index());
            }
            // one subtract: its borrow out is the compare (rem < dsh)
            self.dsh.next = bit_cast::<NW, 16>(self.d2v.val()) << self.sh[j].val();
            self.diff.next = self.rem[j].q.val() - self.dsh.val();
            self.ra.next = self.rem[j].q.val().get_bit(self.msb.val().index());
            self.rb.next = self.dsh.val().get_bit(self.msb.val().index());
            self.borrow.next = (!self.ra.val() & self.rb.val())
                | (!(self.ra.val() ^ self.rb.val()) & self.diff.val().get_bit(self.msb.val().index()));
            self.rem[j + 1].d.next = self.rem[j].q.val() & self.rmask[j + 1].val();
            if !self.borrow.val() {
                self.rem[j + 1].d.next = self.diff.val() & self.rmask[j + 1].val();
                self.q[j + 1].d.next = (self.q[j].q.val() << self.one16.val()) | self.one16.val();
            }
        }
        for j in (self._q - 1)..self._q {
            // the last step only compares
            self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j].val().index());
            if self.g[j].q.val() == self.gc[1].val() {
                self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j + 1].val().index());
            }
            if self.g[j].q.val() == self.gc[2].val() {
                self.d2v.next = self.d2.val().get_bits::<16>(self.d2_at[3 * j + 2].val().index());
            }
            self.dsh.next = bit_cast::<NW, 16>(self.d2v.val());
            if self.rem[j].q.val() >= self.dsh.val() {
                self.q[j + 1].d.next = (self.q[j].q.val() << self.one16.val()) | self.one16.val();
            }
        }

        // assembly (spec §2.8): dense slot and COO fields
        for l in self._q..(self._q + 1) {
            self.qf.next = self.q[l].q.val();
            if self.dz[l].q.val() {
                self.qf.next = self.zero16.val();
            }
            self.sidev.next = self.side[l].q.val() & self.mid_side.val();
            self.out_dense.d.next = self.qf.val().get_bits::<IB>(0);
            if self.g[l].q.val() == self.gc[1].val() {
                self.out_dense.d.next = bit_cast::<IB, 16>(self.qf.val() & self.mid_mask.val())
                    | (bit_cast::<IB, 1>(self.sidev.val().into()) << self.sh_side.val());
            }
            self.out_keep.d.next = self.g[l].q.val() != self.gc[1].val();
            self.out_grp.d.next = self.g[l].q.val() == self.gc[0].val();
            self.out_hi.d.next = self.qf.val().get_bit(self.hi_bit.val().index());
            if self.g[l].q.val() == self.gc[0].val() {
                self.out_hi.d.next = self.side[l].q.val();
            }
        }
        self.dense.next = self.out_dense.q.val();
        self.keep.next = self.out_keep.q.val();
        self.grp.next = self.out_grp.q.val();
        self.hi.next = self.out_hi.q.val();
    }
}
