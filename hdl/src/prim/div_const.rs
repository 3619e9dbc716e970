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
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// dividend (42 bits)
    pub d: Signal<In, Bits<W>>,
    /// dividend valid
    pub in_valid: Signal<In, Bit>,
    /// ceil(d / K)
    pub c: Signal<Out, Bits<W>>,
    /// result valid
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

/// Kogge-Stone levels of `DivMersenneCeil`: spans 1, 2, 4, 8, 16, enough for
/// 32 digits.
const KS_LEVELS: usize = 5;

/// ceil(D / K) for `K = 2^m - 1` (spec §5.4, Mersenne form): since
/// `2^m = 1 (mod K)`, the remainder of every prefix of D's m-bit digits is
/// the residue of its digit sum, so one parallel suffix sum replaces the
/// serial remainder chain, and each quotient digit follows from its
/// neighbour's residue with one small add. Three stages: the digits and
/// Kogge-Stone level 0, levels 1-4, then the quotient digits and the ceiling.
#[derive(LogicBlock)]
pub struct DivMersenneCeil<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// dividend (42 bits)
    pub d: Signal<In, Bits<W>>,
    /// dividend valid
    pub in_valid: Signal<In, Bit>,
    /// ceil(d / K)
    pub c: Signal<Out, Bits<W>>,
    /// result valid
    pub out_valid: Signal<Out, Bit>,
    // residues of digit suffix sums, level-major: level l position i at
    // l * n + i; in [0, K], K standing for 0 (end-around carry form)
    // (W bits wide, of which m + 1 are ever non-zero: a narrower signal
    // would need a part select that rust-hdl cannot write inside a loop)
    ra: Vec<Signal<Local, Bits<W>>>,
    rb: Vec<Signal<Local, Bits<W>>>,
    ts: Signal<Local, Bits<W>>,
    // stage registers: residues after level 0 and after level 4, the
    // dividend (its digits are needed again at the end), valid
    s1_r: Vec<Reg<Bits<W>>>,
    s1_d: Reg<Bits<W>>,
    s1_v: Reg<Bit>,
    s2_r: Vec<Reg<Bits<W>>>,
    s2_d: Reg<Bits<W>>,
    s2_v: Reg<Bit>,
    // final stage: residues as 0..K-1 (res[n] = 0 above the top digit), the
    // digit, the quotient digit and the quotient
    res: Vec<Signal<Local, Bits<W>>>,
    td: Signal<Local, Bits<W>>,
    tq: Signal<Local, Bits<W>>,
    quo: Signal<Local, Bits<W>>,
    /// The ceiling's +1 (digit by digit, see below): e[i] "digit i is K",
    /// its prefix AND in levels of span 1, 2, 4, 8, 16 (ABC keeps a
    /// serial AND chain serial), and cin[i] the +1 reaching digit i
    e: Vec<Signal<Local, Bit>>,
    g1: Vec<Signal<Local, Bit>>,
    g2: Vec<Signal<Local, Bit>>,
    g4: Vec<Signal<Local, Bit>>,
    g8: Vec<Signal<Local, Bit>>,
    g16: Vec<Signal<Local, Bit>>,
    cin: Vec<Signal<Local, Bit>>,
    cy: Signal<Local, Bit>,
    rc: Reg<Bits<W>>,
    rcv: Reg<Bit>,
    k: Constant<Bits<W>>,
    km1: Constant<Bits<W>>,
    m: Constant<Bits<W>>,
    /// Digit i's bit offset, m * i.
    sh: Vec<Constant<Bits<W>>>,
    zero: Constant<Bits<W>>,
    one: Constant<Bits<W>>,
    _n: usize,
    /// The digits below the top one (the top digit's carry out is dropped),
    /// and min(span, n - 1) for spans 1, 2, 4, 8, 16: prefix positions
    /// below it have no partner `span` lower.
    _n1: usize,
    _m1: usize,
    _m2: usize,
    _m4: usize,
    _m8: usize,
    _m16: usize,
    /// Per level: positions that have a partner `span` digits higher.
    _pair: [usize; KS_LEVELS],
}

impl<const W: usize> DivMersenneCeil<W> {
    /// Digits of `m` bits a W-bit dividend splits into.
    pub fn digits(m: usize) -> usize {
        W.div_ceil(m)
    }

    /// The exponent m of a Mersenne divisor `K = 2^m - 1`, m >= 2, whose
    /// digits fit the five Kogge-Stone levels; `None` for any other K.
    pub fn exponent(k: u64) -> Option<usize> {
        let m = (k + 1).trailing_zeros() as usize;
        ((k + 1).is_power_of_two() && (2..=15).contains(&m) && Self::digits(m) <= 1 << KS_LEVELS).then_some(m)
    }

    pub fn new(k: u64) -> Self {
        let m = Self::exponent(k).expect("K = 2^m - 1 with 2 <= m <= 15 and at most 32 digits");
        let n = Self::digits(m);
        let mut pair = [0; KS_LEVELS];
        for (l, p) in pair.iter_mut().enumerate() {
            *p = n.saturating_sub(1 << l);
        }
        DivMersenneCeil {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            d: Default::default(),
            in_valid: Default::default(),
            c: Default::default(),
            out_valid: Default::default(),
            ra: (0..2 * n).map(|_| Default::default()).collect(),
            rb: (0..5 * n).map(|_| Default::default()).collect(),
            ts: Default::default(),
            s1_r: (0..n).map(|_| Reg::default()).collect(),
            s1_d: Reg::default(),
            s1_v: Reg::default(),
            s2_r: (0..n).map(|_| Reg::default()).collect(),
            s2_d: Reg::default(),
            s2_v: Reg::default(),
            res: (0..n + 1).map(|_| Default::default()).collect(),
            td: Default::default(),
            tq: Default::default(),
            quo: Default::default(),
            e: (0..n - 1).map(|_| Default::default()).collect(),
            g1: (0..n - 1).map(|_| Default::default()).collect(),
            g2: (0..n - 1).map(|_| Default::default()).collect(),
            g4: (0..n - 1).map(|_| Default::default()).collect(),
            g8: (0..n - 1).map(|_| Default::default()).collect(),
            g16: (0..n - 1).map(|_| Default::default()).collect(),
            cin: (0..n).map(|_| Default::default()).collect(),
            cy: Default::default(),
            rc: Reg::default(),
            rcv: Reg::default(),
            k: Constant::new(k.into()),
            km1: Constant::new((k - 1).into()),
            m: Constant::new((m as u64).into()),
            sh: (0..n).map(|i| Constant::new(((m * i) as u64).into())).collect(),
            zero: Constant::new(0u64.into()),
            one: Constant::new(1u64.into()),
            _n: n,
            _n1: n - 1,
            _m1: (n - 1).min(1),
            _m2: (n - 1).min(2),
            _m4: (n - 1).min(4),
            _m8: (n - 1).min(8),
            _m16: (n - 1).min(16),
            _pair: pair,
        }
    }

    pub fn latency() -> usize {
        3
    }
}

impl<const W: usize> Logic for DivMersenneCeil<W> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, s1_d, s1_v, s2_d, s2_v, rc, rcv);
        self.s1_d.reset.next = self.reset.val();
        self.s1_v.reset.next = self.reset.val();
        self.s2_d.reset.next = self.reset.val();
        self.s2_v.reset.next = self.reset.val();
        self.rc.reset.next = self.reset.val();
        self.rcv.reset.next = self.reset.val();
        self.s1_d.en.next = self.en.val();
        self.s1_v.en.next = self.en.val();
        self.s2_d.en.next = self.en.val();
        self.s2_v.en.next = self.en.val();
        self.rc.en.next = self.en.val();
        self.rcv.en.next = self.en.val();
        for i in 0..self._n {
            self.s1_r[i].clock.next = self.clock.val();
            self.s1_r[i].reset.next = self.reset.val();
            self.s1_r[i].en.next = self.en.val();
            self.s2_r[i].clock.next = self.clock.val();
            self.s2_r[i].reset.next = self.reset.val();
            self.s2_r[i].en.next = self.en.val();
        }
        // an end-around add a + b (mod K) of residues in [0, K] stays in
        // [0, K]: a carry out of m bits is worth 2^m = 1
        for z in self._n..(self._n + 1) {
            // level 0: the digits themselves
            for i in 0..self._n {
                self.ra[i].next = (self.d.val() >> self.sh[i].val()) & self.k.val();
            }
            // level 0 -> 1 (span 1), then a register (the dividend may
            // come from a port)
            for i in 0..self._pair[0] {
                self.ts.next = self.ra[i].val() + self.ra[i + 1].val();
                self.ra[z + i].next = (self.ts.val() & self.k.val()) + (self.ts.val() >> self.m.val());
            }
            for i in self._pair[0]..self._n {
                self.ra[z + i].next = self.ra[i].val();
            }
            for i in 0..self._n {
                self.s1_r[i].d.next = self.ra[z + i].val();
                self.rb[i].next = self.s1_r[i].q.val();
            }
            // levels 1 -> 2 (span 2), 2 -> 3 (span 4), 3 -> 4 (span 8),
            // 4 -> 5 (span 16)
            for i in 0..self._pair[1] {
                self.ts.next = self.rb[i].val() + self.rb[i + 2].val();
                self.rb[z + i].next = (self.ts.val() & self.k.val()) + (self.ts.val() >> self.m.val());
            }
            for i in self._pair[1]..self._n {
                self.rb[z + i].next = self.rb[i].val();
            }
            for i in 0..self._pair[2] {
                self.ts.next = self.rb[z + i].val() + self.rb[z + i + 4].val();
                self.rb[2 * z + i].next = (self.ts.val() & self.k.val()) + (self.ts.val() >> self.m.val());
            }
            for i in self._pair[2]..self._n {
                self.rb[2 * z + i].next = self.rb[z + i].val();
            }
            for i in 0..self._pair[3] {
                self.ts.next = self.rb[2 * z + i].val() + self.rb[2 * z + i + 8].val();
                self.rb[3 * z + i].next = (self.ts.val() & self.k.val()) + (self.ts.val() >> self.m.val());
            }
            for i in self._pair[3]..self._n {
                self.rb[3 * z + i].next = self.rb[2 * z + i].val();
            }
            for i in 0..self._pair[4] {
                self.ts.next = self.rb[3 * z + i].val() + self.rb[3 * z + i + 16].val();
                self.rb[4 * z + i].next = (self.ts.val() & self.k.val()) + (self.ts.val() >> self.m.val());
            }
            for i in self._pair[4]..self._n {
                self.rb[4 * z + i].next = self.rb[3 * z + i].val();
            }
            for i in 0..self._n {
                self.s2_r[i].d.next = self.rb[4 * z + i].val();
            }
            // last stage: res[i] = (digits i.. of D) mod K; quotient digit i
            // is res[i+1] + (res[i+1] + d_i >= K), at most K, so digits do
            // not carry into each other
            self.res[z].next = self.zero.val();
        }
        for i in 0..self._n {
            self.res[i].next = self.s2_r[i].q.val();
            if self.s2_r[i].q.val() == self.k.val() {
                self.res[i].next = self.zero.val();
            }
        }
        // the ceiling's +1 (when D mod K != 0) added digit by digit: it
        // passes digit i exactly when that digit is K, i.e. res[i+1] = K - 1
        // and d_i >= 1, known from the registers without the digit itself
        // (a W-bit increment of the quotient was a serial chain after ABC)
        for i in 0..self._n1 {
            self.td.next = (self.s2_d.q.val() >> self.sh[i].val()) & self.k.val();
            self.e[i].next = (self.res[i + 1].val() == self.km1.val()) & (self.td.val() != self.zero.val());
        }
        for i in 0..self._m1 {
            self.g1[i].next = self.e[i].val();
        }
        for i in self._m1..self._n1 {
            self.g1[i].next = self.e[i].val() & self.e[i - 1].val();
        }
        for i in 0..self._m2 {
            self.g2[i].next = self.g1[i].val();
        }
        for i in self._m2..self._n1 {
            self.g2[i].next = self.g1[i].val() & self.g1[i - 2].val();
        }
        for i in 0..self._m4 {
            self.g4[i].next = self.g2[i].val();
        }
        for i in self._m4..self._n1 {
            self.g4[i].next = self.g2[i].val() & self.g2[i - 4].val();
        }
        for i in 0..self._m8 {
            self.g8[i].next = self.g4[i].val();
        }
        for i in self._m8..self._n1 {
            self.g8[i].next = self.g4[i].val() & self.g4[i - 8].val();
        }
        for i in 0..self._m16 {
            self.g16[i].next = self.g8[i].val();
        }
        for i in self._m16..self._n1 {
            self.g16[i].next = self.g8[i].val() & self.g8[i - 16].val();
        }
        self.cy.next = self.res[0].val() != self.zero.val();
        for i in 0..self._m1 {
            self.cin[i].next = self.cy.val();
        }
        for i in self._m1..self._n {
            self.cin[i].next = self.cy.val() & self.g16[i - 1].val();
        }
        self.quo.next = self.zero.val();
        for i in 0..self._n {
            self.td.next = (self.s2_d.q.val() >> self.sh[i].val()) & self.k.val();
            self.tq.next = self.res[i + 1].val();
            if self.res[i + 1].val() + self.td.val() >= self.k.val() {
                self.tq.next = self.res[i + 1].val() + self.one.val();
            }
            if self.cin[i].val() {
                self.tq.next = (self.tq.val() + self.one.val()) & self.k.val();
            }
            self.quo.next = self.quo.val() | (self.tq.val() << self.sh[i].val());
        }
        self.s1_d.d.next = self.d.val();
        self.s1_v.d.next = self.in_valid.val();
        self.s2_d.d.next = self.s1_d.q.val();
        self.s2_v.d.next = self.s1_v.q.val();
        self.rc.d.next = self.quo.val();
        self.rcv.d.next = self.s2_v.q.val();
        self.c.next = self.rc.q.val();
        self.out_valid.next = self.rcv.q.val();
    }
}
