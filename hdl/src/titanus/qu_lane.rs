//! One lane's coder of the Titanus quantization unit.
//! Paper: Titanus (GLSVLSI 2025) §2.3 (per-channel quantization), §4.4.
//! Spec: docs/spec.md §11.5.3 (codes), §5.3 (rounding divider), §11.14.5.

use crate::prim::div_round::DivRound;
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Cycles a lane coder adds after E0: E1 (256x + zS, range flags), then
/// the rounding divider's set-up and 4 steps.
pub const LANE_STAGES: usize = 6;
/// Divider width: 2n + S < (2Q + 1) S <= 31 * 21760 < 2^20.
const DW: usize = 20;

/// One lane's coder (spec §11.5.3): E0 snapshot of the element and its
/// level, E1 `n = max(0, 256x + zS)` and the range flags, then the rounding
/// divider of §5.3 (`floor((2n + S) / 2S)`, 4 quotient bits). Below the
/// tolerance range the code is 0 and above it Q (clamped: only at the
/// level limit); inside it `n < 0` means code 0 and the quotient is <= Q.
#[derive(LogicBlock)]
pub struct QuLane {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance.
    pub en: Signal<In, Bit>,
    /// Element, kept bit, and its channel's current level; Q = 2^b - 1.
    pub x: Signal<In, Bits<8>>,
    pub k: Signal<In, Bit>,
    pub tl: Signal<In, Bits<8>>,
    pub th: Signal<In, Bits<8>>,
    pub s: Signal<In, Bits<16>>,
    pub zs: Signal<In, Bits<24>>,
    pub q: Signal<In, Bits<4>>,
    /// `LANE_STAGES + 1` advancing cycles later: the code, label (kept and
    /// code != 0) and saturated (kept and clamped).
    pub code: Signal<Out, Bits<4>>,
    pub label: Signal<Out, Bit>,
    pub sat: Signal<Out, Bit>,
    /// The kept bit, aligned with `code`.
    pub kept: Signal<Out, Bit>,
    e0_x: Reg<Bits<8>>,
    e0_k: Reg<Bit>,
    e0_tl: Reg<Bits<8>>,
    e0_th: Reg<Bits<8>>,
    e0_s: Reg<Bits<16>>,
    e0_zs: Reg<Bits<24>>,
    e0_q: Reg<Bits<4>>,
    e1_n: Reg<Bits<DW>>,
    e1_s: Reg<Bits<DW>>,
    // {q, k, above, below} beside E1 and the divider
    fl: Vec<Reg<Bits<7>>>,
    div: DivRound<DW>,
    n24: Signal<Local, Bits<24>>,
    below: Signal<Local, Bit>,
    above: Signal<Local, Bit>,
    f: Signal<Local, Bits<7>>,
    cd: Signal<Local, Bits<4>>,
    sext: Constant<Bits<24>>,
    c8: Constant<Bits<24>>,
    flip: Constant<Bits<8>>,
    zero4: Constant<Bits<4>>,
    zero_dw: Constant<Bits<DW>>,
    zero2: Constant<Bits<2>>,
    sh1: Constant<Bits<7>>,
    sh2: Constant<Bits<7>>,
    sh3: Constant<Bits<7>>,
    _fl: usize,
}

impl Default for QuLane {
    fn default() -> Self {
        let nfl = LANE_STAGES - 1;
        QuLane {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            x: Default::default(),
            k: Default::default(),
            tl: Default::default(),
            th: Default::default(),
            s: Default::default(),
            zs: Default::default(),
            q: Default::default(),
            code: Default::default(),
            label: Default::default(),
            sat: Default::default(),
            kept: Default::default(),
            e0_x: Reg::default(),
            e0_k: Reg::default(),
            e0_tl: Reg::default(),
            e0_th: Reg::default(),
            e0_s: Reg::default(),
            e0_zs: Reg::default(),
            e0_q: Reg::default(),
            e1_n: Reg::default(),
            e1_s: Reg::default(),
            fl: (0..nfl + 1).map(|_| Reg::default()).collect(),
            div: DivRound::new(4),
            n24: Default::default(),
            below: Default::default(),
            above: Default::default(),
            f: Default::default(),
            cd: Default::default(),
            sext: Constant::new(0xFF_FF00u64.into()),
            c8: Constant::new(8u64.into()),
            flip: Constant::new(0x80u64.into()),
            zero4: Constant::new(0u64.into()),
            zero_dw: Constant::new(0u64.into()),
            zero2: Constant::new(0u64.into()),
            sh1: Constant::new(1u64.into()),
            sh2: Constant::new(2u64.into()),
            sh3: Constant::new(3u64.into()),
            _fl: nfl + 1,
        }
    }
}

impl Logic for QuLane {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, e0_x, e0_k, e0_tl, e0_th, e0_s, e0_zs, e0_q, e1_n, e1_s, div);
        self.e0_x.reset.next = self.reset.val();
        self.e0_k.reset.next = self.reset.val();
        self.e0_tl.reset.next = self.reset.val();
        self.e0_th.reset.next = self.reset.val();
        self.e0_s.reset.next = self.reset.val();
        self.e0_zs.reset.next = self.reset.val();
        self.e0_q.reset.next = self.reset.val();
        self.e1_n.reset.next = self.reset.val();
        self.e1_s.reset.next = self.reset.val();
        self.div.reset.next = self.reset.val();
        self.e0_x.en.next = self.en.val();
        self.e0_k.en.next = self.en.val();
        self.e0_tl.en.next = self.en.val();
        self.e0_th.en.next = self.en.val();
        self.e0_s.en.next = self.en.val();
        self.e0_zs.en.next = self.en.val();
        self.e0_q.en.next = self.en.val();
        self.e1_n.en.next = self.en.val();
        self.e1_s.en.next = self.en.val();
        self.div.en.next = self.en.val();
        self.e0_x.d.next = self.x.val();
        self.e0_k.d.next = self.k.val();
        self.e0_tl.d.next = self.tl.val();
        self.e0_th.d.next = self.th.val();
        self.e0_s.d.next = self.s.val();
        self.e0_zs.d.next = self.zs.val();
        self.e0_q.d.next = self.q.val();

        // E1: n = 256 x + zS (signed), clamped at 0; signed range compares
        self.n24.next = bit_cast::<24, 8>(self.e0_x.q.val());
        if self.e0_x.q.val().get_bit(7) {
            self.n24.next = self.n24.val() | self.sext.val();
        }
        self.n24.next = (self.n24.val() << self.c8.val()) + self.e0_zs.q.val();
        self.e1_n.d.next = self.n24.val().get_bits::<DW>(0);
        if self.n24.val().get_bit(23) {
            self.e1_n.d.next = self.zero_dw.val();
        }
        self.e1_s.d.next = bit_cast::<DW, 16>(self.e0_s.q.val());
        self.below.next = (self.e0_x.q.val() ^ self.flip.val()) < (self.e0_tl.q.val() ^ self.flip.val());
        self.above.next = (self.e0_x.q.val() ^ self.flip.val()) > (self.e0_th.q.val() ^ self.flip.val());
        self.f.next = (bit_cast::<7, 4>(self.e0_q.q.val()) << self.sh3.val())
            | (bit_cast::<7, 1>(self.e0_k.q.val().into()) << self.sh2.val())
            | (bit_cast::<7, 1>(self.above.val().into()) << self.sh1.val())
            | bit_cast::<7, 1>(self.below.val().into());
        for i in 0..self._fl {
            self.fl[i].clock.next = self.clock.val();
            self.fl[i].reset.next = self.reset.val();
            self.fl[i].en.next = self.en.val();
        }
        self.fl[0].d.next = self.f.val();
        for i in 1..self._fl {
            self.fl[i].d.next = self.fl[i - 1].q.val();
        }

        self.div.n.next = self.e1_n.q.val();
        self.div.d.next = self.e1_s.q.val();
        self.div.in_valid.next = true;

        for l in self._fl..(self._fl + 1) {
            self.cd.next = self.div.q.val().get_bits::<4>(0);
            if self.fl[l - 1].q.val().get_bit(0) {
                self.cd.next = self.zero4.val();
            }
            if self.fl[l - 1].q.val().get_bit(1) {
                self.cd.next = self.fl[l - 1].q.val().get_bits::<4>(3);
            }
            self.code.next = self.cd.val();
            self.kept.next = self.fl[l - 1].q.val().get_bit(2);
            self.label.next = self.fl[l - 1].q.val().get_bit(2) & (self.cd.val() != self.zero4.val());
            self.sat.next =
                self.fl[l - 1].q.val().get_bit(2) & (self.fl[l - 1].q.val().get_bits::<2>(0) != self.zero2.val());
        }
    }
}
