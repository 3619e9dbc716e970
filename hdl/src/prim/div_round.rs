//! Rounding divider q = floor((2n + d) / (2d)), i.e. n/d rounded half up,
//! saturated to 2^Q - 1, with q = 0 for d = 0 (spec §5.3, §2.7).
//! Restoring division on N = 2n + d against 2d: one quotient bit per stage,
//! most significant first. A remainder at or above 2d * 2^j takes bit j;
//! if the true quotient reaches 2^Q every step subtracts, which is the
//! saturation.

use super::reg::Reg;
use rust_hdl::prelude::*;

/// Width of the normalised dividend of an FP16 divisor (spec §5.3):
/// N' < 2^(Q+1) * 2048 + 2048 for Q <= 9 quotient bits.
pub const NW: usize = 24;

/// One restoring step, combinational: `rem >= dsh ? (rem - dsh, 1) : (rem, 0)`.
#[derive(LogicBlock, Default)]
pub struct DivStep<const W: usize> {
    /// Partial remainder.
    pub rem: Signal<In, Bits<W>>,
    /// Divisor shifted to this step's weight.
    pub dsh: Signal<In, Bits<W>>,
    /// Remainder after the step.
    pub rem_out: Signal<Out, Bits<W>>,
    /// Quotient bit of the step (`bit` is an SV keyword).
    pub take: Signal<Out, Bit>,
}

impl<const W: usize> Logic for DivStep<W> {
    #[hdl_gen]
    fn update(&mut self) {
        if self.rem.val() >= self.dsh.val() {
            self.rem_out.next = self.rem.val() - self.dsh.val();
            self.take.next = true;
        } else {
            self.rem_out.next = self.rem.val();
            self.take.next = false;
        }
    }
}

/// The divider as a stand-alone pipeline: operands in, quotient `q + 1`
/// advancing cycles later (one stage forms N and 2d, then Q step stages).
/// `W` must hold 2n + d and 2d * 2^(Q-1).
#[derive(LogicBlock)]
pub struct DivRound<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// dividend
    pub n: Signal<In, Bits<W>>,
    /// divisor
    pub d: Signal<In, Bits<W>>,
    /// operands valid
    pub in_valid: Signal<In, Bit>,
    /// floor((2n+d)/2d) saturated to 2^Q-1; 0 when d = 0
    pub q: Signal<Out, Bits<16>>,
    /// quotient valid
    pub out_valid: Signal<Out, Bit>,
    /// Steps 0..Q-2; the last step only compares, its remainder is unused.
    steps: Vec<DivStep<W>>,
    last_dsh: Signal<Local, Bits<W>>,
    // remainder and 2d after the set-up stage (0) and after step j < Q-1 (j+1)
    rrem: Vec<Reg<Bits<W>>>,
    rd2: Vec<Reg<Bits<W>>>,
    // quotient so far, d == 0 and valid after set-up (0) and after step j (j+1)
    rq: Vec<Reg<Bits<16>>>,
    rdz: Vec<Reg<Bit>>,
    rv: Vec<Reg<Bit>>,
    /// Weight of step j: 2d is shifted left by Q-1-j.
    sh: Vec<Constant<Bits<W>>>,
    one: Constant<Bits<W>>,
    one16: Constant<Bits<16>>,
    zero: Constant<Bits<W>>,
    zero16: Constant<Bits<16>>,
    _q: usize,
}

impl<const W: usize> DivRound<W> {
    pub fn new(q: usize) -> Self {
        assert!((1..=16).contains(&q));
        DivRound {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            n: Default::default(),
            d: Default::default(),
            in_valid: Default::default(),
            q: Default::default(),
            out_valid: Default::default(),
            steps: (0..q - 1).map(|_| DivStep::default()).collect(),
            rrem: (0..q).map(|_| Reg::default()).collect(),
            rd2: (0..q).map(|_| Reg::default()).collect(),
            rq: (0..=q).map(|_| Reg::default()).collect(),
            rdz: (0..=q).map(|_| Reg::default()).collect(),
            rv: (0..=q).map(|_| Reg::default()).collect(),
            last_dsh: Default::default(),
            sh: (0..q).map(|j| Constant::new(((q - 1 - j) as u64).into())).collect(),
            one: Constant::new(1u64.into()),
            one16: Constant::new(1u64.into()),
            zero: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            _q: q,
        }
    }
}

impl<const W: usize> Logic for DivRound<W> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self._q {
            self.rrem[i].clock.next = self.clock.val();
            self.rrem[i].reset.next = self.reset.val();
            self.rrem[i].en.next = self.en.val();
            self.rd2[i].clock.next = self.clock.val();
            self.rd2[i].reset.next = self.reset.val();
            self.rd2[i].en.next = self.en.val();
        }
        for i in 0..(self._q + 1) {
            self.rq[i].clock.next = self.clock.val();
            self.rq[i].reset.next = self.reset.val();
            self.rq[i].en.next = self.en.val();
            self.rdz[i].clock.next = self.clock.val();
            self.rdz[i].reset.next = self.reset.val();
            self.rdz[i].en.next = self.en.val();
            self.rv[i].clock.next = self.clock.val();
            self.rv[i].reset.next = self.reset.val();
            self.rv[i].en.next = self.en.val();
        }
        // set-up stage: N = 2n + d, 2d
        self.rrem[0].d.next = (self.n.val() << self.one.val()) + self.d.val();
        self.rd2[0].d.next = self.d.val() << self.one.val();
        self.rq[0].d.next = self.zero16.val();
        self.rdz[0].d.next = self.d.val() == self.zero.val();
        self.rv[0].d.next = self.in_valid.val();
        for j in 0..self._q {
            self.rq[j + 1].d.next = self.rq[j].q.val() << self.one16.val();
            self.rdz[j + 1].d.next = self.rdz[j].q.val();
            self.rv[j + 1].d.next = self.rv[j].q.val();
        }
        for j in 0..(self._q - 1) {
            self.steps[j].rem.next = self.rrem[j].q.val();
            self.steps[j].dsh.next = self.rd2[j].q.val() << self.sh[j].val();
            if self.steps[j].take.val() {
                self.rq[j + 1].d.next = (self.rq[j].q.val() << self.one16.val()) | self.one16.val();
            }
            self.rrem[j + 1].d.next = self.steps[j].rem_out.val();
            self.rd2[j + 1].d.next = self.rd2[j].q.val();
        }
        for j in (self._q - 1)..self._q {
            self.last_dsh.next = self.rd2[j].q.val() << self.sh[j].val();
            if self.rrem[j].q.val() >= self.last_dsh.val() {
                self.rq[j + 1].d.next = (self.rq[j].q.val() << self.one16.val()) | self.one16.val();
            }
        }
        for l in self._q..(self._q + 1) {
            self.q.next = self.rq[l].q.val();
            if self.rdz[l].q.val() {
                self.q.next = self.zero16.val();
            }
            self.out_valid.next = self.rv[l].q.val();
        }
    }
}
