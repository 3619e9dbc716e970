//! One lane of the Titanus dequantization unit's record path, from its
//! levels row in S1 to its INT8 output register: the level pick, the case
//! (pruned, missing level, label zero, zero point, multiply), `q - z`, the
//! split multiply by S, the sum, and the rounding. The unit instantiates
//! one per lane, in a `Vec`; the stage valid and last flags, the table's
//! memories and the zero-insert shifter (which spans the lanes) stay in
//! the unit. Paper: Titanus (GLSVLSI 2025) §3.1 (reconstruction from
//! index, label and codes), §4.4 and Figure 7 (the DQU's three rules).
//! Spec: docs/spec.md §11.8.1 (level lookup), §11.8.2 (cases and
//! reconstruction), §11.14.3 (stages S1 to S5).

use super::dq_arith::{RoundI8, SplitMul, SplitSum};
use crate::prim::reg::Reg;
use crate::prim::vecs::consts;
use rust_hdl::prelude::*;

/// Case codes (`cs`, the skip counters' order).
pub const K_PRUNED: u64 = 0;
pub const K_MISSING: u64 = 1;
pub const K_LABEL_ZERO: u64 = 2;
pub const K_ZERO_POINT: u64 = 3;
pub const K_MULTIPLY: u64 = 4;

#[derive(LogicBlock)]
pub struct DqLane {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every stage register 0
    pub reset: Signal<In, Bit>,
    /// the record pipeline advances (the output register is free)
    pub en: Signal<In, Bit>,
    /// S1: the lane's levels row (17 bits per level: valid, start; bits
    /// past 17 * max_levels unused), its channel's present flag, the
    /// beat's token position and its first entry word (row * max_levels)
    pub trow: Signal<In, Bits<272>>,
    pub pres: Signal<In, Bit>,
    pub pos: Signal<In, Bits<16>>,
    pub base: Signal<In, Bits<16>>,
    /// S1: the index bit and the zero-inserted code of the lane's channel
    pub idx: Signal<In, Bit>,
    pub code: Signal<In, Bits<4>>,
    /// S1: the entry word to read (the picked level's), on entry to S2
    pub rd_addr: Signal<Out, Bits<14>>,
    /// S2: the entry read ({rec(0), z, S})
    pub ent: Signal<In, Bits<33>>,
    /// S2, S3 and S4 hold valid beats (operand isolation)
    pub v2: Signal<In, Bit>,
    pub v3: Signal<In, Bit>,
    pub v4: Signal<In, Bit>,
    /// S3: the lane's case code (for the skip counters)
    pub cs: Signal<Out, Bits<3>>,
    /// the rebuilt INT8 value, registered (the output stage)
    pub data: Signal<Out, Bits<8>>,
    // S1: the picked level
    p_found: Signal<Local, Bit>,
    p_lv: Signal<Local, Bits<4>>,
    seg: Signal<Local, Bits<17>>,
    t4: Signal<Local, Bits<4>>,
    lidx: Vec<Constant<Bits<4>>>,
    loff: Vec<Constant<Bits<9>>>,
    // S2
    s2_idx: Reg<Bit>,
    s2_found: Reg<Bit>,
    s2_q: Reg<Bits<4>>,
    c_ms: Signal<Local, Bit>,
    c_lz: Signal<Local, Bit>,
    c_zp: Signal<Local, Bit>,
    c_mu: Signal<Local, Bit>,
    q16: Signal<Local, Bits<16>>,
    z16: Signal<Local, Bits<16>>,
    dq: Signal<Local, Bits<16>>,
    // S3
    s3_sel: Reg<Bits<2>>,
    s3_r0: Reg<Bits<8>>,
    s3_cs: Reg<Bits<3>>,
    s3_abs: Reg<Bits<16>>,
    s3_neg: Reg<Bit>,
    s3_scale: Reg<Bits<16>>,
    mul: SplitMul,
    // S4
    s4_sel: Reg<Bits<2>>,
    s4_r0: Reg<Bits<8>>,
    s4_p0: Reg<Bits<20>>,
    s4_p1: Reg<Bits<20>>,
    s4_p2: Reg<Bits<20>>,
    s4_neg: Reg<Bit>,
    sum: SplitSum,
    // S5
    s5_sel: Reg<Bits<2>>,
    s5_r0: Reg<Bits<8>>,
    s5_p: Reg<Bits<25>>,
    s5_neg: Reg<Bit>,
    rnd: RoundI8,
    o_data: Reg<Bits<8>>,
    mul_en: Signal<Local, Bit>,
    k_pr: Constant<Bits<3>>,
    k_ms: Constant<Bits<3>>,
    k_lz: Constant<Bits<3>>,
    k_zp: Constant<Bits<3>>,
    k_mu: Constant<Bits<3>>,
    zero2: Constant<Bits<2>>,
    one2: Constant<Bits<2>>,
    two2: Constant<Bits<2>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    ext9: Constant<Bits<16>>,
    sh_zent: Constant<Bits<6>>,
    sh_r0ent: Constant<Bits<6>>,
    _ml: usize,
}

impl DqLane {
    /// `max_levels` in 1..=16: the levels a row holds.
    pub fn new(max_levels: usize) -> Self {
        let lb = super::dequantizer::LEVEL_BITS as u64;
        DqLane {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            trow: Default::default(),
            pres: Default::default(),
            pos: Default::default(),
            base: Default::default(),
            idx: Default::default(),
            code: Default::default(),
            rd_addr: Default::default(),
            ent: Default::default(),
            v2: Default::default(),
            v3: Default::default(),
            v4: Default::default(),
            cs: Default::default(),
            data: Default::default(),
            p_found: Default::default(),
            p_lv: Default::default(),
            seg: Default::default(),
            t4: Default::default(),
            lidx: consts(0..max_levels as u64),
            loff: consts((0..max_levels as u64).map(|l| lb * l)),
            s2_idx: Reg::default(),
            s2_found: Reg::default(),
            s2_q: Reg::default(),
            c_ms: Default::default(),
            c_lz: Default::default(),
            c_zp: Default::default(),
            c_mu: Default::default(),
            q16: Default::default(),
            z16: Default::default(),
            dq: Default::default(),
            s3_sel: Reg::default(),
            s3_r0: Reg::default(),
            s3_cs: Reg::default(),
            s3_abs: Reg::default(),
            s3_neg: Reg::default(),
            s3_scale: Reg::default(),
            mul: SplitMul::default(),
            s4_sel: Reg::default(),
            s4_r0: Reg::default(),
            s4_p0: Reg::default(),
            s4_p1: Reg::default(),
            s4_p2: Reg::default(),
            s4_neg: Reg::default(),
            sum: SplitSum::default(),
            s5_sel: Reg::default(),
            s5_r0: Reg::default(),
            s5_p: Reg::default(),
            s5_neg: Reg::default(),
            rnd: RoundI8::default(),
            o_data: Reg::default(),
            mul_en: Default::default(),
            k_pr: Constant::new(K_PRUNED.into()),
            k_ms: Constant::new(K_MISSING.into()),
            k_lz: Constant::new(K_LABEL_ZERO.into()),
            k_zp: Constant::new(K_ZERO_POINT.into()),
            k_mu: Constant::new(K_MULTIPLY.into()),
            zero2: Constant::new(0u64.into()),
            one2: Constant::new(1u64.into()),
            two2: Constant::new(2u64.into()),
            zero4: Constant::new(0u64.into()),
            zero8: Constant::new(0u64.into()),
            one16: Constant::new(1u64.into()),
            ext9: Constant::new(0xFE00u64.into()),
            sh_zent: Constant::new(16u64.into()),
            sh_r0ent: Constant::new(25u64.into()),
            _ml: max_levels,
        }
    }
}

impl Logic for DqLane {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, s2_idx, s2_found, s2_q, s3_sel, s3_r0, s3_cs, s3_abs, s3_neg, s3_scale, s4_sel,
            s4_r0, s4_p0, s4_p1, s4_p2, s4_neg, s5_sel, s5_r0, s5_p, s5_neg, o_data
        );
        // ---- S1: the highest level with an entry and start <= pos (spec §11.8.1)
        self.p_found.next = false;
        self.p_lv.next = self.zero4.val();
        for l in 0..self._ml {
            self.seg.next = self.trow.val().get_bits::<17>(self.loff[l].val().index());
            if self.pres.val() & self.seg.val().get_bit(16) & (self.seg.val().get_bits::<16>(0) <= self.pos.val())
            {
                self.p_found.next = true;
                self.p_lv.next = self.lidx[l].val();
            }
        }
        self.t4.next = self.p_lv.val();
        self.rd_addr.next = bit_cast::<14, 16>(self.base.val() + bit_cast::<16, 4>(self.t4.val()));
        self.s2_idx.reset.next = self.reset.val();
        self.s2_found.reset.next = self.reset.val();
        self.s2_q.reset.next = self.reset.val();
        self.s2_idx.en.next = self.en.val();
        self.s2_found.en.next = self.en.val();
        self.s2_q.en.next = self.en.val();
        self.s2_idx.d.next = self.idx.val();
        self.s2_found.d.next = self.p_found.val();
        self.s2_q.d.next = self.code.val();

        // ---- S2: the entry (read on entry to S2), cases (spec §11.8.2), |q - z|
        self.z16.next = bit_cast::<16, 9>(self.ent.val().get_bits::<9>(self.sh_zent.val().index()));
        if self.ent.val().get_bit(24) {
            self.z16.next = self.z16.val() | self.ext9.val();
        }
        self.t4.next = self.s2_q.q.val();
        self.q16.next = bit_cast::<16, 4>(self.t4.val());
        self.c_ms.next = self.s2_idx.q.val() & !self.s2_found.q.val();
        self.c_lz.next =
            self.s2_idx.q.val() & self.s2_found.q.val() & (self.s2_q.q.val() == self.zero4.val());
        self.c_zp.next = self.s2_idx.q.val()
            & self.s2_found.q.val()
            & (self.s2_q.q.val() != self.zero4.val())
            & (self.q16.val() == self.z16.val());
        self.c_mu.next = self.s2_idx.q.val()
            & self.s2_found.q.val()
            & (self.s2_q.q.val() != self.zero4.val())
            & (self.q16.val() != self.z16.val());
        self.dq.next = self.q16.val() - self.z16.val();
        self.s3_sel.reset.next = self.reset.val();
        self.s3_r0.reset.next = self.reset.val();
        self.s3_cs.reset.next = self.reset.val();
        self.s3_abs.reset.next = self.reset.val();
        self.s3_neg.reset.next = self.reset.val();
        self.s3_scale.reset.next = self.reset.val();
        self.s3_sel.en.next = self.en.val();
        self.s3_r0.en.next = self.en.val();
        self.s3_cs.en.next = self.en.val();
        // operand isolation: the multiplier's operands change only for multiplies
        self.mul_en.next = self.en.val() & self.v2.val() & self.c_mu.val();
        self.s3_abs.en.next = self.mul_en.val();
        self.s3_neg.en.next = self.mul_en.val();
        self.s3_scale.en.next = self.mul_en.val();
        // select: 0 zero output, 1 rec(0), 2 product
        self.s3_sel.d.next = self.zero2.val();
        if self.c_lz.val() {
            self.s3_sel.d.next = self.one2.val();
        }
        if self.c_mu.val() {
            self.s3_sel.d.next = self.two2.val();
        }
        self.s3_r0.d.next = self.ent.val().get_bits::<8>(self.sh_r0ent.val().index());
        self.s3_cs.d.next = self.k_pr.val();
        if self.c_ms.val() {
            self.s3_cs.d.next = self.k_ms.val();
        }
        if self.c_lz.val() {
            self.s3_cs.d.next = self.k_lz.val();
        }
        if self.c_zp.val() {
            self.s3_cs.d.next = self.k_zp.val();
        }
        if self.c_mu.val() {
            self.s3_cs.d.next = self.k_mu.val();
        }
        self.s3_neg.d.next = self.dq.val().get_bit(15);
        self.s3_abs.d.next = self.dq.val();
        if self.dq.val().get_bit(15) {
            self.s3_abs.d.next = !self.dq.val() + self.one16.val();
        }
        self.s3_scale.d.next = self.ent.val().get_bits::<16>(0);
        self.cs.next = self.s3_cs.q.val();

        // ---- S3: |q - z| S as three partial products
        self.s4_sel.reset.next = self.reset.val();
        self.s4_r0.reset.next = self.reset.val();
        self.s4_p0.reset.next = self.reset.val();
        self.s4_p1.reset.next = self.reset.val();
        self.s4_p2.reset.next = self.reset.val();
        self.s4_neg.reset.next = self.reset.val();
        self.s4_sel.en.next = self.en.val();
        self.s4_r0.en.next = self.en.val();
        self.s4_p0.en.next = self.en.val() & self.v3.val() & (self.s3_sel.q.val() == self.two2.val());
        self.s4_p1.en.next = self.en.val() & self.v3.val() & (self.s3_sel.q.val() == self.two2.val());
        self.s4_p2.en.next = self.en.val() & self.v3.val() & (self.s3_sel.q.val() == self.two2.val());
        self.s4_neg.en.next = self.en.val() & self.v3.val() & (self.s3_sel.q.val() == self.two2.val());
        self.s4_sel.d.next = self.s3_sel.q.val();
        self.s4_r0.d.next = self.s3_r0.q.val();
        self.mul.abs.next = self.s3_abs.q.val();
        self.mul.scale.next = self.s3_scale.q.val();
        self.s4_p0.d.next = self.mul.p0.val();
        self.s4_p1.d.next = self.mul.p1.val();
        self.s4_p2.d.next = self.mul.p2.val();
        self.s4_neg.d.next = self.s3_neg.q.val();

        // ---- S4: the sum of the partial products
        self.s5_sel.reset.next = self.reset.val();
        self.s5_r0.reset.next = self.reset.val();
        self.s5_p.reset.next = self.reset.val();
        self.s5_neg.reset.next = self.reset.val();
        self.s5_sel.en.next = self.en.val();
        self.s5_r0.en.next = self.en.val();
        self.s5_p.en.next = self.en.val() & self.v4.val() & (self.s4_sel.q.val() == self.two2.val());
        self.s5_neg.en.next = self.en.val() & self.v4.val() & (self.s4_sel.q.val() == self.two2.val());
        self.s5_sel.d.next = self.s4_sel.q.val();
        self.s5_r0.d.next = self.s4_r0.q.val();
        self.sum.p0.next = self.s4_p0.q.val();
        self.sum.p1.next = self.s4_p1.q.val();
        self.sum.p2.next = self.s4_p2.q.val();
        self.s5_p.d.next = self.sum.psum.val();
        self.s5_neg.d.next = self.s4_neg.q.val();

        // ---- S5: sign, + 128, floor / 256, clamp to INT8, select
        self.rnd.p.next = self.s5_p.q.val();
        self.rnd.neg.next = self.s5_neg.q.val();
        self.o_data.reset.next = self.reset.val();
        self.o_data.en.next = self.en.val();
        self.o_data.d.next = self.zero8.val();
        if self.s5_sel.q.val() == self.one2.val() {
            self.o_data.d.next = self.s5_r0.q.val();
        }
        if self.s5_sel.q.val() == self.two2.val() {
            self.o_data.d.next = self.rnd.ro.val();
        }
        self.data.next = self.o_data.q.val();
    }
}
