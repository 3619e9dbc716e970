//! Non-zero quantizer and tolerance updater of the Titanus QU: one level
//! `(S, z, zS, tl, th)` from a range `[lo, hi]` and a bit width.
//! Paper: Titanus (GLSVLSI 2025) §4.4 and Figure 7 (NZQ, tolerance updater).
//! Spec: docs/spec.md §11.5.2 (scale, zero point), §11.5.3 (tolerance range),
//! §11.14.5 (this block).
//!
//! Sequential: levels open at most once per channel per prefill and rarely
//! in decode, so one shared unit computing a level in 30 cycles costs far
//! less than per-lane dividers. Two restoring long divisions, one quotient
//! bit per cycle; the dividend's low bits are shifted into a partial
//! remainder as wide as the divisor (17 bits), so a step is a 17-bit
//! subtract, not a full-width one:
//!   1. S = max(256, ceil(256 R / Q)):  (256 R + Q - 1) / Q, 15 bits;
//!   2. z = ceil(((Q - 1) S - 256 (lo + hi)) / 2S), offset by 126 so the
//!      dividend N2 = (Q + 253) S - 256 (lo + hi) - 1 is never negative and
//!      the quotient z + 126 is 9 bits.
//! The remainder r2 of step 2 gives z*2S = N2 - r2 - 252 S without a
//! multiplier, hence (2z + 1) S = (Q + 2) S - 256 (lo + hi) - 1 - r2 and
//!   zS = ((Q + 1) S - 256 (lo + hi) - 1 - r2) / 2       (exact: even)
//!   tl = max(-128, -floor((2z + 1) S / 512))
//!   th = min( 127, floor((2 (Q + 1) S - (2z + 1) S - 1) / 512)).
//! All arithmetic is 25-bit two's complement; every value fits (§11.5.2).

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Cycles from `start` to `done` (state machine below).
pub const NZQ_CYCLES: usize = 1 + 15 + 1 + 1 + 1 + 9 + 1 + 1;

const IDLE: u64 = 0;
const DIV1: u64 = 1;
const SCALE: u64 = 2;
const PREP1: u64 = 3;
const PREP2: u64 = 4;
const DIV2: u64 = 5;
const FIN1: u64 = 6;
const FIN2: u64 = 7;

#[derive(LogicBlock)]
pub struct Nzq {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Start a level (ignored while busy); `lo`, `hi`, `bits` are read now.
    pub start: Signal<In, Bit>,
    /// Range, INT8 two's complement, `lo <= hi`.
    pub lo: Signal<In, Bits<8>>,
    pub hi: Signal<In, Bits<8>>,
    /// Bit width, 2..=4.
    pub bits: Signal<In, Bits<3>>,
    /// The outputs below hold the last level computed; high from the cycle
    /// after the last step until the next `start`.
    pub done: Signal<Out, Bit>,
    /// Scale S, UQ8.8 (256..=21760).
    pub scale: Signal<Out, Bits<16>>,
    /// Zero point z, 9-bit two's complement.
    pub zero: Signal<Out, Bits<9>>,
    /// z * S, 24-bit two's complement (the coder's offset).
    pub zs: Signal<Out, Bits<24>>,
    /// Tolerance range, INT8 two's complement.
    pub tl: Signal<Out, Bits<8>>,
    pub th: Signal<Out, Bits<8>>,
    state: Reg<Bits<3>>,
    cnt: Reg<Bits<5>>,
    /// Partial remainder (< divisor) and the dividend bits still to shift in.
    pr: Reg<Bits<17>>,
    lw: Reg<Bits<15>>,
    /// Divisor: Q, then 2S.
    dv: Reg<Bits<17>>,
    quot: Reg<Bits<16>>,
    b: Reg<Bits<3>>,
    sum: Reg<Bits<25>>,
    r: Reg<Bits<25>>,
    thp: Reg<Bits<25>>,
    sbr: Reg<Bits<25>>,
    s: Reg<Bits<25>>,
    off: Reg<Bits<25>>,
    z: Reg<Bits<9>>,
    o_zs: Reg<Bits<24>>,
    o_tl: Reg<Bits<8>>,
    o_th: Reg<Bits<8>>,
    o_done: Reg<Bit>,
    // combinational
    q: Signal<Local, Bits<25>>,
    qs: Signal<Local, Bits<25>>,
    sb: Signal<Local, Bits<25>>,
    t: Signal<Local, Bits<25>>,
    n: Signal<Local, Bits<25>>,
    nh: Signal<Local, Bits<17>>,
    nl: Signal<Local, Bits<15>>,
    pp: Signal<Local, Bits<18>>,
    td: Signal<Local, Bits<18>>,
    u: Signal<Local, Bits<25>>,
    lo25: Signal<Local, Bits<25>>,
    hi25: Signal<Local, Bits<25>>,
    k0: Constant<Bits<25>>,
    k1: Constant<Bits<25>>,
    k2: Constant<Bits<25>>,
    k3: Constant<Bits<25>>,
    k8: Constant<Bits<25>>,
    k9: Constant<Bits<25>>,
    k15: Constant<Bits<25>>,
    k6: Constant<Bits<25>>,
    one18: Constant<Bits<18>>,
    sign: Constant<Bits<25>>,
    sext8: Constant<Bits<25>>,
    asr9: Constant<Bits<25>>,
    m128: Constant<Bits<25>>,
    p127: Constant<Bits<25>>,
    k256: Constant<Bits<25>>,
    s_idle: Constant<Bits<3>>,
    s_div1: Constant<Bits<3>>,
    s_scale: Constant<Bits<3>>,
    s_prep1: Constant<Bits<3>>,
    s_prep2: Constant<Bits<3>>,
    s_div2: Constant<Bits<3>>,
    s_fin1: Constant<Bits<3>>,
    s_fin2: Constant<Bits<3>>,
    one5: Constant<Bits<5>>,
    one15: Constant<Bits<15>>,
    n15: Constant<Bits<5>>,
    n9: Constant<Bits<5>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    c256_16: Constant<Bits<16>>,
    c126_9: Constant<Bits<9>>,
    b3: Constant<Bits<3>>,
}

impl Default for Nzq {
    fn default() -> Self {
        let m25: u64 = (1u64 << 25) - 1;
        Nzq {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            bits: Default::default(),
            done: Default::default(),
            scale: Default::default(),
            zero: Default::default(),
            zs: Default::default(),
            tl: Default::default(),
            th: Default::default(),
            state: Reg::default(),
            cnt: Reg::default(),
            pr: Reg::default(),
            lw: Reg::default(),
            dv: Reg::default(),
            quot: Reg::default(),
            b: Reg::default(),
            sum: Reg::default(),
            r: Reg::default(),
            thp: Reg::default(),
            sbr: Reg::default(),
            s: Reg::default(),
            off: Reg::default(),
            z: Reg::default(),
            o_zs: Reg::default(),
            o_tl: Reg::default(),
            o_th: Reg::default(),
            o_done: Reg::default(),
            q: Default::default(),
            qs: Default::default(),
            sb: Default::default(),
            t: Default::default(),
            n: Default::default(),
            nh: Default::default(),
            nl: Default::default(),
            pp: Default::default(),
            td: Default::default(),
            u: Default::default(),
            lo25: Default::default(),
            hi25: Default::default(),
            k0: Constant::new(((0) as u64).into()),
            k1: Constant::new(((1) as u64).into()),
            k2: Constant::new(((2) as u64).into()),
            k3: Constant::new(((3) as u64).into()),
            k8: Constant::new(((8) as u64).into()),
            k9: Constant::new(((9) as u64).into()),
            k15: Constant::new(15u64.into()),
            k6: Constant::new(6u64.into()),
            one18: Constant::new(1u64.into()),
            sign: Constant::new(((1 << 24) as u64).into()),
            sext8: Constant::new(((m25 & !0xFF) as u64).into()),
            asr9: Constant::new(((m25 & !((1 << 16) - 1)) as u64).into()),
            m128: Constant::new(((m25 & !127) as u64).into()),
            p127: Constant::new(((127) as u64).into()),
            k256: Constant::new(((256) as u64).into()),
            s_idle: Constant::new(IDLE.into()),
            s_div1: Constant::new(DIV1.into()),
            s_scale: Constant::new(SCALE.into()),
            s_prep1: Constant::new(PREP1.into()),
            s_prep2: Constant::new(PREP2.into()),
            s_div2: Constant::new(DIV2.into()),
            s_fin1: Constant::new(FIN1.into()),
            s_fin2: Constant::new(FIN2.into()),
            one5: Constant::new(1u64.into()),
            one15: Constant::new(1u64.into()),
            n15: Constant::new(15u64.into()),
            n9: Constant::new(9u64.into()),
            one16: Constant::new(1u64.into()),
            zero16: Constant::new(0u64.into()),
            c256_16: Constant::new(256u64.into()),
            c126_9: Constant::new(126u64.into()),
            b3: Constant::new(3u64.into()),
        }
    }
}

impl Logic for Nzq {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, state, cnt, pr, lw, dv, quot, b, sum, r, thp, sbr, s, off, z, o_zs, o_tl, o_th, o_done);
        self.state.reset.next = self.reset.val();
        self.cnt.reset.next = self.reset.val();
        self.pr.reset.next = self.reset.val();
        self.lw.reset.next = self.reset.val();
        self.dv.reset.next = self.reset.val();
        self.quot.reset.next = self.reset.val();
        self.b.reset.next = self.reset.val();
        self.sum.reset.next = self.reset.val();
        self.r.reset.next = self.reset.val();
        self.thp.reset.next = self.reset.val();
        self.sbr.reset.next = self.reset.val();
        self.s.reset.next = self.reset.val();
        self.off.reset.next = self.reset.val();
        self.z.reset.next = self.reset.val();
        self.o_zs.reset.next = self.reset.val();
        self.o_tl.reset.next = self.reset.val();
        self.o_th.reset.next = self.reset.val();
        self.o_done.reset.next = self.reset.val();
        self.state.en.next = false;
        self.cnt.en.next = false;
        self.pr.en.next = false;
        self.lw.en.next = false;
        self.dv.en.next = false;
        self.quot.en.next = false;
        self.b.en.next = false;
        self.sum.en.next = false;
        self.r.en.next = false;
        self.thp.en.next = false;
        self.sbr.en.next = false;
        self.s.en.next = false;
        self.off.en.next = false;
        self.z.en.next = false;
        self.o_zs.en.next = false;
        self.o_tl.en.next = false;
        self.o_th.en.next = false;
        self.o_done.en.next = false;
        self.state.d.next = self.state.q.val();
        self.cnt.d.next = self.cnt.q.val() - self.one5.val();
        self.pr.d.next = self.pr.q.val();
        self.lw.d.next = self.lw.q.val() << self.one15.val();
        self.dv.d.next = self.dv.q.val();
        self.quot.d.next = self.quot.q.val() << self.one16.val();
        self.b.d.next = self.bits.val();
        self.sum.d.next = self.sum.q.val();
        self.r.d.next = self.r.q.val();
        self.thp.d.next = self.thp.q.val();
        self.sbr.d.next = self.sbr.q.val();
        self.s.d.next = self.s.q.val();
        self.off.d.next = self.off.q.val();
        self.z.d.next = self.z.q.val();
        self.o_zs.d.next = self.o_zs.q.val();
        self.o_tl.d.next = self.o_tl.q.val();
        self.o_th.d.next = self.o_th.q.val();
        self.o_done.d.next = false;
        self.u.next = self.k0.val();
        self.n.next = self.k0.val();
        self.nh.next = self.pr.q.val();
        self.nl.next = self.lw.q.val();

        // Q = 2^b - 1 of the latched width (of the input's at start)
        self.q.next = (self.k1.val() << bit_cast::<25, 3>(self.b.q.val())) - self.k1.val();
        if self.state.q.val() == self.s_idle.val() {
            self.q.next = (self.k1.val() << bit_cast::<25, 3>(self.bits.val())) - self.k1.val();
        }
        self.lo25.next = bit_cast::<25, 8>(self.lo.val());
        if self.lo.val().get_bit(7) {
            self.lo25.next = self.lo25.val() | self.sext8.val();
        }
        self.hi25.next = bit_cast::<25, 8>(self.hi.val());
        if self.hi.val().get_bit(7) {
            self.hi25.next = self.hi25.val() | self.sext8.val();
        }
        // one restoring step (DIV1, DIV2): shift the next dividend bit in
        self.pp.next = bit_cast::<18, 17>(self.pr.q.val()) << self.one18.val();
        if self.lw.q.val().get_bit(14) {
            self.pp.next = self.pp.val() | self.one18.val();
        }
        self.td.next = self.pp.val() - bit_cast::<18, 17>(self.dv.q.val());
        self.t.next = self.k0.val();
        self.sb.next = self.s.q.val() << bit_cast::<25, 3>(self.b.q.val());
        self.qs.next = self.k0.val();
        if self.b.q.val() == self.b3.val() {
            self.qs.next = self.s.q.val() << self.k2.val();
        }
        if self.b.q.val() > self.b3.val() {
            self.qs.next = (self.s.q.val() << self.k3.val()) + (self.s.q.val() << self.k2.val());
        }

        if self.state.q.val() == self.s_idle.val() {
            if self.start.val() {
                // N1 = 256 R + Q - 1 over Q, 15 quotient bits
                self.state.en.next = true;
                self.state.d.next = self.s_div1.val();
                self.b.en.next = true;
                self.n.next = ((self.hi25.val() - self.lo25.val()) << self.k8.val()) + self.q.val() - self.k1.val();
                self.nh.next = bit_cast::<17, 25>(self.n.val() >> self.k15.val());
                self.nl.next = self.n.val().get_bits::<15>(0);
                self.pr.en.next = true;
                self.pr.d.next = self.nh.val();
                self.lw.en.next = true;
                self.lw.d.next = self.nl.val();
                self.dv.en.next = true;
                self.dv.d.next = self.q.val().get_bits::<17>(0);
                self.quot.en.next = true;
                self.quot.d.next = self.zero16.val();
                self.cnt.en.next = true;
                self.cnt.d.next = self.n15.val();
                self.sum.en.next = true;
                // 256 (lo + hi) + 1, subtracted whole below
                self.sum.d.next = ((self.lo25.val() + self.hi25.val()) << self.k8.val()) + self.k1.val();
            }
        }
        if (self.state.q.val() == self.s_div2.val()) & (self.cnt.q.val() == self.n9.val()) {
            self.off.en.next = true;
            self.off.d.next = self.off.q.val() - self.sum.q.val();
        }
        if (self.state.q.val() == self.s_div1.val()) | (self.state.q.val() == self.s_div2.val()) {
            self.cnt.en.next = true;
            self.lw.en.next = true;
            self.quot.en.next = true;
            self.pr.en.next = true;
            self.pr.d.next = self.pp.val().get_bits::<17>(0);
            if !self.td.val().get_bit(17) {
                self.pr.d.next = self.td.val().get_bits::<17>(0);
                self.quot.d.next = (self.quot.q.val() << self.one16.val()) | self.one16.val();
            }
            if self.cnt.q.val() == self.one5.val() {
                self.state.en.next = true;
                self.state.d.next = self.state.q.val() + self.s_div1.val();
            }
        }
        if self.state.q.val() == self.s_scale.val() {
            self.s.en.next = true;
            self.s.d.next = bit_cast::<25, 16>(self.quot.q.val());
            if self.quot.q.val() < self.c256_16.val() {
                self.s.d.next = self.k256.val();
            }
            self.state.en.next = true;
            self.state.d.next = self.s_prep1.val();
        }
        // the wide sums are split over PREP1 and PREP2 (two operands each)
        if self.state.q.val() == self.s_prep1.val() {
            self.r.en.next = true;
            self.r.d.next = (self.s.q.val() << self.k8.val()) + self.qs.val();
            self.sbr.en.next = true;
            self.sbr.d.next = self.sb.val();
            self.state.en.next = true;
            self.state.d.next = self.s_prep2.val();
        }
        if self.state.q.val() == self.s_prep2.val() {
            // N2 = (Q + 253) S - 256 (lo + hi) - 1 over 2S, 9 quotient bits
            self.n.next = self.r.q.val() - self.sum.q.val();
            self.nh.next = bit_cast::<17, 25>(self.n.val() >> self.k9.val());
            self.nl.next = bit_cast::<15, 25>(self.n.val() << self.k6.val());
            self.pr.en.next = true;
            self.pr.d.next = self.nh.val();
            self.lw.en.next = true;
            self.lw.d.next = self.nl.val();
            self.off.en.next = true;
            self.off.d.next = self.sbr.q.val() + self.s.q.val();
            self.thp.en.next = true;
            self.thp.d.next = (self.sbr.q.val() << self.k1.val()) - self.k1.val();
            self.dv.en.next = true;
            self.t.next = self.s.q.val() << self.k1.val();
            self.dv.d.next = self.t.val().get_bits::<17>(0);
            self.quot.en.next = true;
            self.quot.d.next = self.zero16.val();
            self.cnt.en.next = true;
            self.cnt.d.next = self.n9.val();
            self.state.en.next = true;
            self.state.d.next = self.s_div2.val();
        }
        if self.state.q.val() == self.s_fin1.val() {
            // (2z + 1) S = (Q + 1) S + S - 256 (lo + hi) - 1 - r2
            self.off.en.next = true;
            self.off.d.next = self.off.q.val() - bit_cast::<25, 17>(self.pr.q.val());
            self.z.en.next = true;
            self.z.d.next = self.quot.q.val().get_bits::<9>(0) - self.c126_9.val();
            self.state.en.next = true;
            self.state.d.next = self.s_fin2.val();
        }
        if self.state.q.val() == self.s_fin2.val() {
            self.o_zs.en.next = true;
            self.t.next = self.off.q.val() - self.s.q.val();
            self.o_zs.d.next = self.t.val().get_bits::<24>(1);
            // tl = max(-128, -floor(off / 512))
            self.t.next = self.off.q.val() >> self.k9.val();
            if self.off.q.val().get_bit(24) {
                self.t.next = self.t.val() | self.asr9.val();
            }
            self.t.next = self.k0.val() - self.t.val();
            if (self.t.val() ^ self.sign.val()) < (self.m128.val() ^ self.sign.val()) {
                self.t.next = self.m128.val();
            }
            self.o_tl.en.next = true;
            self.o_tl.d.next = self.t.val().get_bits::<8>(0);
            // th = min(127, floor((2 (Q + 1) S - off - 1) / 512))
            self.u.next = self.thp.q.val() - self.off.q.val();
            self.t.next = self.u.val() >> self.k9.val();
            if self.u.val().get_bit(24) {
                self.t.next = self.t.val() | self.asr9.val();
            }
            if (self.t.val() ^ self.sign.val()) > (self.p127.val() ^ self.sign.val()) {
                self.t.next = self.p127.val();
            }
            self.o_th.en.next = true;
            self.o_th.d.next = self.t.val().get_bits::<8>(0);
            self.o_done.en.next = true;
            self.o_done.d.next = true;
            self.state.en.next = true;
            self.state.d.next = self.s_idle.val();
        }
        if self.start.val() & (self.state.q.val() == self.s_idle.val()) {
            self.o_done.en.next = true;
            self.o_done.d.next = false;
        }

        self.done.next = self.o_done.q.val();
        self.scale.next = self.s.q.val().get_bits::<16>(0);
        self.zero.next = self.z.q.val();
        self.zs.next = self.o_zs.q.val();
        self.tl.next = self.o_tl.q.val();
        self.th.next = self.o_th.q.val();
    }
}
