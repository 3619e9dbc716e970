//! Constant ceiling divider c = ceil(D / K), K >= 1 a generator constant
//! (spec §5.4, used for step = RU(ceil(D / (2^m - 1))) in §2.6).
//! Radix-2 restoring division, dividend bits most significant first: the
//! remainder stays below K, so each step is a compare and subtract on a few
//! bits; the pipeline holds `per_stage` steps per register.

use super::reg::Reg;
use rust_hdl::prelude::*;

/// `_steps` division steps, combinational.
#[derive(LogicBlock)]
pub struct DivConstSteps<const W: usize> {
    /// Dividend bits not yet consumed, most significant first (left-aligned).
    pub d_in: Signal<In, Bits<W>>,
    pub rem_in: Signal<In, Bits<16>>,
    pub quo_in: Signal<In, Bits<W>>,
    pub rem_out: Signal<Out, Bits<16>>,
    pub quo_out: Signal<Out, Bits<W>>,
    d: Signal<Local, Bits<W>>,
    rem: Signal<Local, Bits<16>>,
    quo: Signal<Local, Bits<W>>,
    k: Constant<Bits<16>>,
    /// The remainder stays below 2K: masking it to that many bits lets
    /// synthesis drop the rest of the 16-bit datapath.
    rmask: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    one: Constant<Bits<W>>,
    msb: Constant<Bits<32>>,
    _steps: usize,
}

impl<const W: usize> DivConstSteps<W> {
    fn new(k: u64, steps: usize) -> Self {
        DivConstSteps {
            d_in: Default::default(),
            rem_in: Default::default(),
            quo_in: Default::default(),
            rem_out: Default::default(),
            quo_out: Default::default(),
            d: Default::default(),
            rem: Default::default(),
            quo: Default::default(),
            k: Constant::new(k.into()),
            rmask: Constant::new(((2 * k).next_power_of_two() - 1).into()),
            one16: Constant::new(1u64.into()),
            one: Constant::new(1u64.into()),
            msb: Constant::new((W as u64 - 1).into()),
            _steps: steps,
        }
    }
}

impl<const W: usize> Logic for DivConstSteps<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.d.next = self.d_in.val();
        self.rem.next = self.rem_in.val();
        self.quo.next = self.quo_in.val();
        for _i in 0..self._steps {
            self.rem.next = (self.rem.val() << self.one16.val()) & self.rmask.val();
            if self.d.val().get_bit(self.msb.val().index()) {
                self.rem.next = self.rem.val() | self.one16.val();
            }
            self.d.next = self.d.val() << self.one.val();
            self.quo.next = self.quo.val() << self.one.val();
            if self.rem.val() >= self.k.val() {
                self.rem.next = self.rem.val() - self.k.val();
                self.quo.next = self.quo.val() | self.one.val();
            }
        }
        self.rem_out.next = self.rem.val();
        self.quo_out.next = self.quo.val();
    }
}

/// ceil(D / K) for W-bit D: `ceil(W / per_stage)` stages of steps, then a
/// stage adding 1 for a non-zero remainder.
#[derive(LogicBlock)]
pub struct DivConstCeil<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance.
    pub en: Signal<In, Bit>,
    /// Dividend, valid with `in_valid`.
    pub d: Signal<In, Bits<W>>,
    pub in_valid: Signal<In, Bit>,
    /// ceil(d / K).
    pub c: Signal<Out, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    steps: Vec<DivConstSteps<W>>,
    // after stage s: remaining dividend (s < n-1 only), remainder, quotient, valid
    rd: Vec<Reg<Bits<W>>>,
    rrem: Vec<Reg<Bits<16>>>,
    rquo: Vec<Reg<Bits<W>>>,
    rv: Vec<Reg<Bit>>,
    rc: Reg<Bits<W>>,
    rcv: Reg<Bit>,
    /// Bits consumed by stage s (all but the last stage).
    used: Vec<Constant<Bits<W>>>,
    zero: Constant<Bits<W>>,
    zero16: Constant<Bits<16>>,
    one: Constant<Bits<W>>,
    _n: usize,
}

impl<const W: usize> DivConstCeil<W> {
    pub fn new(k: u64, per_stage: usize) -> Self {
        assert!(k >= 1 && k < 1 << 15 && per_stage >= 1);
        let n = W.div_ceil(per_stage);
        let steps = |s: usize| per_stage.min(W - s * per_stage);
        DivConstCeil {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            d: Default::default(),
            in_valid: Default::default(),
            c: Default::default(),
            out_valid: Default::default(),
            steps: (0..n).map(|s| DivConstSteps::new(k, steps(s))).collect(),
            rd: (0..n - 1).map(|_| Reg::default()).collect(),
            rrem: (0..n).map(|_| Reg::default()).collect(),
            rquo: (0..n).map(|_| Reg::default()).collect(),
            rv: (0..n).map(|_| Reg::default()).collect(),
            rc: Reg::default(),
            rcv: Reg::default(),
            used: (0..n - 1).map(|s| Constant::new((steps(s) as u64).into())).collect(),
            zero: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            one: Constant::new(1u64.into()),
            _n: n,
        }
    }

    pub fn latency(per_stage: usize) -> usize {
        W.div_ceil(per_stage) + 1
    }
}

impl<const W: usize> Logic for DivConstCeil<W> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rc, rcv);
        self.rc.reset.next = self.reset.val();
        self.rcv.reset.next = self.reset.val();
        self.rc.en.next = self.en.val();
        self.rcv.en.next = self.en.val();
        for s in 0..self._n {
            self.rrem[s].clock.next = self.clock.val();
            self.rrem[s].reset.next = self.reset.val();
            self.rrem[s].en.next = self.en.val();
            self.rquo[s].clock.next = self.clock.val();
            self.rquo[s].reset.next = self.reset.val();
            self.rquo[s].en.next = self.en.val();
            self.rv[s].clock.next = self.clock.val();
            self.rv[s].reset.next = self.reset.val();
            self.rv[s].en.next = self.en.val();
            self.rrem[s].d.next = self.steps[s].rem_out.val();
            self.rquo[s].d.next = self.steps[s].quo_out.val();
        }
        for s in 0..(self._n - 1) {
            self.rd[s].clock.next = self.clock.val();
            self.rd[s].reset.next = self.reset.val();
            self.rd[s].en.next = self.en.val();
        }
        self.steps[0].d_in.next = self.d.val();
        self.steps[0].rem_in.next = self.zero16.val();
        self.steps[0].quo_in.next = self.zero.val();
        self.rv[0].d.next = self.in_valid.val();
        // the dividend register after stage 0 holds the bits stage 1 starts at
        for s in 0..(self._n - 1) {
            self.steps[s + 1].rem_in.next = self.rrem[s].q.val();
            self.steps[s + 1].quo_in.next = self.rquo[s].q.val();
            self.steps[s + 1].d_in.next = self.rd[s].q.val();
            self.rv[s + 1].d.next = self.rv[s].q.val();
        }
        for _s in 0..(self._n.min(2) - 1) {
            self.rd[0].d.next = self.d.val() << self.used[0].val();
        }
        for s in 1..(self._n - 1) {
            self.rd[s].d.next = self.rd[s - 1].q.val() << self.used[s].val();
        }
        for l in self._n..(self._n + 1) {
            self.rc.d.next = self.rquo[l - 1].q.val();
            if self.rrem[l - 1].q.val() != self.zero16.val() {
                self.rc.d.next = self.rquo[l - 1].q.val() + self.one.val();
            }
            self.rcv.d.next = self.rv[l - 1].q.val();
        }
        self.c.next = self.rc.q.val();
        self.out_valid.next = self.rcv.q.val();
    }
}
