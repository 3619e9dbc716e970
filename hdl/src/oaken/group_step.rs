//! A group's step from its range: `step = RU(ceil(D / K))`, `K = 2^m - 1`,
//! for the per-token unit of the quantization engine.
//! Paper: Oaken §4.3 Eq. 2 (the scale from the group's range). Spec:
//! docs/spec.md §2.6 (the rule), §2.14 (this block).
//!
//! `RU` of an integer only keeps its 11 leading bits and whether anything
//! below them is set, so the divider never sees all 42 bits of `D`. With
//! `D`'s leading one at bit `p` and `u0 = max(0, p - m - 10)`, `Dh = D >>
//! u0` has at most `m + 11` bits and
//!
//! ```text
//! ceil(D / (K 2^u0)) = Qc = floor(Dh / K) + (Dh mod K != 0 or D mod 2^u0 != 0)
//! ```
//!
//! is 1025 to about 2731 when `u0 > 0`, so the step is `Qc` on the grid
//! `2^u0` when `Qc <= 2048`, else `ceil(Qc / 2)` on the grid `2^(u0 + 1)`
//! (nested ceilings of integer divisions compose); its FP16 pattern is then
//! `(u << 10) + significand` (a significand of 2048 carries into the
//! exponent, as it should). `floor(Dh / K)` is one Mersenne long division
//! (spec §5.4's digit form) over at most seven `m`-bit digits.
//!
//! Three stages, one group per cycle, no stall: T1 the leading one, `Dh`
//! and the sticky bits below the grid (the smear shifted right by `m +
//! 11`); T2 the quotient; T3 round and encode. `min` and `present` ride
//! along; an absent group gives `min = step = +0`.

use crate::prim::fp16::FX;
use crate::prim::lead_one::LeadOne;
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Width of `Dh` and of the division's signals (`m + 11 <= 20`).
const DW: usize = 24;
/// Mersenne digits of `Dh`, at most 7 (m = 2).
const MAX_DIGITS: usize = 7;

#[derive(LogicBlock)]
pub struct GroupStep {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// `D = v_max - min`, below 2^41.
    pub d: Signal<In, Bits<FX>>,
    /// The group's min (FP16), passed through.
    pub min: Signal<In, Bits<16>>,
    /// The group has elements.
    pub present: Signal<In, Bit>,
    /// Three cycles later: the step and min (both +0 for an absent group).
    pub step_out: Signal<Out, Bits<16>>,
    pub min_out: Signal<Out, Bits<16>>,
    lead: LeadOne,
    t1_dh: Reg<Bits<DW>>,
    t1_u: Reg<Bits<6>>,
    t1_st: Reg<Bit>,
    t2_q: Reg<Bits<DW>>,
    t2_rz: Reg<Bit>,
    t2_u: Reg<Bits<6>>,
    t3_step: Reg<Bits<16>>,
    t3_min: Reg<Bits<16>>,
    // min and present along T1, T2
    mn: Vec<Reg<Bits<16>>>,
    pr: Vec<Reg<Bit>>,
    // locals: digits and suffix residues (level-major: level l digit i at
    // l * n + i, in [0, K] with K standing for 0), quotient digits
    u0: Signal<Local, Bits<6>>,
    dig: Vec<Signal<Local, Bits<DW>>>,
    ra: Vec<Signal<Local, Bits<DW>>>,
    res: Vec<Signal<Local, Bits<DW>>>,
    ts: Signal<Local, Bits<DW>>,
    tq: Signal<Local, Bits<DW>>,
    quo: Signal<Local, Bits<DW>>,
    qc: Signal<Local, Bits<16>>,
    sg: Signal<Local, Bits<16>>,
    uu: Signal<Local, Bits<16>>,
    kw: Constant<Bits<DW>>,
    mw: Constant<Bits<DW>>,
    one_w: Constant<Bits<DW>>,
    zero_w: Constant<Bits<DW>>,
    /// m + 10 (the position whose excess is u0), m + 11 (smear shift).
    m10: Constant<Bits<6>>,
    m11: Constant<Bits<FX>>,
    dmask: Constant<Bits<DW>>,
    /// Digit i's offset, m * i.
    dsh: Vec<Constant<Bits<DW>>>,
    qsh: Vec<Constant<Bits<DW>>>,
    zero6: Constant<Bits<6>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero_fx: Constant<Bits<FX>>,
    c2048: Constant<Bits<16>>,
    ten16: Constant<Bits<16>>,
    _n: usize,
    /// Per suffix level (spans 1, 2, 4): positions with a partner.
    _pair: [usize; 3],
}

impl GroupStep {
    /// `m`: the group's code bits, `K = 2^m - 1` (2 ..= 9).
    pub fn new(m: usize) -> Self {
        assert!((2..=9).contains(&m), "code bits {m}");
        let n = (m + 11).div_ceil(m);
        assert!(n <= MAX_DIGITS);
        let mut pair = [0; 3];
        for (l, p) in pair.iter_mut().enumerate() {
            *p = n.saturating_sub(1 << l);
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        GroupStep {
            clock: Default::default(),
            reset: Default::default(),
            d: Default::default(),
            min: Default::default(),
            present: Default::default(),
            step_out: Default::default(),
            min_out: Default::default(),
            lead: LeadOne::default(),
            t1_dh: Reg::default(),
            t1_u: Reg::default(),
            t1_st: Reg::default(),
            t2_q: Reg::default(),
            t2_rz: Reg::default(),
            t2_u: Reg::default(),
            t3_step: Reg::default(),
            t3_min: Reg::default(),
            mn: (0..2).map(|_| Reg::default()).collect(),
            pr: (0..2).map(|_| Reg::default()).collect(),
            u0: Default::default(),
            dig: (0..n).map(|_| Default::default()).collect(),
            ra: (0..4 * n).map(|_| Default::default()).collect(),
            res: (0..n + 1).map(|_| Default::default()).collect(),
            ts: Default::default(),
            tq: Default::default(),
            quo: Default::default(),
            qc: Default::default(),
            sg: Default::default(),
            uu: Default::default(),
            kw: c((1 << m) - 1),
            mw: c(m as u64),
            one_w: c(1),
            zero_w: c(0),
            m10: c(m as u64 + 10),
            m11: c(m as u64 + 11),
            dmask: c((1 << (m + 11)) - 1),
            dsh: (0..n).map(|i| c((m * i) as u64)).collect(),
            qsh: (0..n).map(|i| c((m * i) as u64)).collect(),
            zero6: c(0),
            zero16: c(0),
            one16: c(1),
            zero_fx: c(0),
            c2048: c(2048),
            ten16: c(10),
            _n: n,
            _pair: pair,
        }
    }

    pub const LATENCY: usize = 3;
}

impl Logic for GroupStep {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, t1_dh, t1_u, t1_st, t2_q, t2_rz, t2_u, t3_step, t3_min);
        self.t1_dh.reset.next = self.reset.val();
        self.t1_u.reset.next = self.reset.val();
        self.t1_st.reset.next = self.reset.val();
        self.t2_q.reset.next = self.reset.val();
        self.t2_rz.reset.next = self.reset.val();
        self.t2_u.reset.next = self.reset.val();
        self.t3_step.reset.next = self.reset.val();
        self.t3_min.reset.next = self.reset.val();
        self.t1_dh.en.next = true;
        self.t1_u.en.next = true;
        self.t1_st.en.next = true;
        self.t2_q.en.next = true;
        self.t2_rz.en.next = true;
        self.t2_u.en.next = true;
        self.t3_step.en.next = true;
        self.t3_min.en.next = true;
        for i in 0..2 {
            self.mn[i].clock.next = self.clock.val();
            self.mn[i].reset.next = self.reset.val();
            self.mn[i].en.next = true;
            self.pr[i].clock.next = self.clock.val();
            self.pr[i].reset.next = self.reset.val();
            self.pr[i].en.next = true;
        }
        self.mn[0].d.next = self.min.val();
        self.pr[0].d.next = self.present.val();
        for i in 1..2 {
            self.mn[i].d.next = self.mn[i - 1].q.val();
            self.pr[i].d.next = self.pr[i - 1].q.val();
        }

        // T1: leading one, u0 = max(0, p - m - 10), Dh = D >> u0, and the
        // bits below the grid, D & (smear >> (m + 11))
        self.lead.v.next = self.d.val();
        self.u0.next = self.zero6.val();
        if self.lead.pos.val() > self.m10.val() {
            self.u0.next = self.lead.pos.val() - self.m10.val();
        }
        self.t1_dh.d.next = bit_cast::<DW, FX>(self.d.val() >> bit_cast::<FX, 6>(self.u0.val())) & self.dmask.val();
        self.t1_u.d.next = self.u0.val();
        self.t1_st.d.next = (self.d.val() & (self.lead.smear.val() >> self.m11.val())) != self.zero_fx.val();

        // T2: floor(Dh / K) by Mersenne long division: res[i] is the residue
        // of digits i.. (res[n] = 0), quotient digit i is res[i+1] +
        // (res[i+1] + d_i >= K), never above K, so digits do not carry
        for z in self._n..(self._n + 1) {
            for i in 0..self._n {
                self.dig[i].next = (self.t1_dh.q.val() >> self.dsh[i].val()) & self.kw.val();
                self.ra[i].next = self.dig[i].val();
            }
            // suffix sums, end-around carry (a carry out of m bits is worth 1)
            for i in 0..self._pair[0] {
                self.ts.next = self.ra[i].val() + self.ra[i + 1].val();
                self.ra[z + i].next = (self.ts.val() & self.kw.val()) + (self.ts.val() >> self.mw.val());
            }
            for i in self._pair[0]..self._n {
                self.ra[z + i].next = self.ra[i].val();
            }
            for i in 0..self._pair[1] {
                self.ts.next = self.ra[z + i].val() + self.ra[z + i + 2].val();
                self.ra[2 * z + i].next = (self.ts.val() & self.kw.val()) + (self.ts.val() >> self.mw.val());
            }
            for i in self._pair[1]..self._n {
                self.ra[2 * z + i].next = self.ra[z + i].val();
            }
            for i in 0..self._pair[2] {
                self.ts.next = self.ra[2 * z + i].val() + self.ra[2 * z + i + 4].val();
                self.ra[3 * z + i].next = (self.ts.val() & self.kw.val()) + (self.ts.val() >> self.mw.val());
            }
            for i in self._pair[2]..self._n {
                self.ra[3 * z + i].next = self.ra[2 * z + i].val();
            }
            for i in 0..self._n {
                self.res[i].next = self.ra[3 * z + i].val();
                if self.ra[3 * z + i].val() == self.kw.val() {
                    self.res[i].next = self.zero_w.val();
                }
            }
            self.res[z].next = self.zero_w.val();
        }
        self.quo.next = self.zero_w.val();
        for i in 0..self._n {
            self.tq.next = self.res[i + 1].val();
            if self.res[i + 1].val() + self.dig[i].val() >= self.kw.val() {
                self.tq.next = self.res[i + 1].val() + self.one_w.val();
            }
            self.quo.next = self.quo.val() | (self.tq.val() << self.qsh[i].val());
        }
        self.t2_q.d.next = self.quo.val();
        self.t2_rz.d.next = (self.res[0].val() != self.zero_w.val()) | self.t1_st.q.val();
        self.t2_u.d.next = self.t1_u.q.val();

        // T3: Qc on grid 2^u0, or ceil(Qc / 2) on grid 2^(u0 + 1) above 2048
        self.qc.next = bit_cast::<16, DW>(self.t2_q.q.val() + bit_cast::<DW, 1>(self.t2_rz.q.val().into()));
        self.sg.next = self.qc.val();
        self.uu.next = bit_cast::<16, 6>(self.t2_u.q.val());
        if self.qc.val() > self.c2048.val() {
            self.sg.next = (self.qc.val() + self.one16.val()) >> self.one16.val();
            self.uu.next = bit_cast::<16, 6>(self.t2_u.q.val()) + self.one16.val();
        }
        self.t3_step.d.next = self.zero16.val();
        self.t3_min.d.next = self.zero16.val();
        if self.pr[1].q.val() {
            self.t3_step.d.next = (self.uu.val() << self.ten16.val()) + self.sg.val();
            self.t3_min.d.next = self.mn[1].q.val();
        }
        self.step_out.next = self.t3_step.q.val();
        self.min_out.next = self.t3_min.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::fp16;

    fn edge(b: &mut GroupStep) {
        b.clock.next = Clock { clk: false };
        assert!(simulate(b, 1000));
        b.clock.next = Clock { clk: true };
        assert!(simulate(b, 1000));
    }

    /// spec §2.6: step = RU(ceil(D / (2^m - 1))), against sim's rounding, for
    /// every code width, on random D of every magnitude, the powers of two
    /// and their neighbours, multiples of K (exact quotients) and their
    /// neighbours, one per cycle.
    #[test]
    fn matches_ru_of_ceiling() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for m in 2..=9usize {
            let k = (1u64 << m) - 1;
            let mut b = GroupStep::new(m);
            b.connect_all();
            b.reset.next = true;
            edge(&mut b);
            b.reset.next = false;
            let mut want = std::collections::VecDeque::new();
            let mut checked = 0;
            let max_d = 131008u64 << 24;
            for n in 0..4000u64 {
                let d = match n % 6 {
                    0 => rnd() % (max_d + 1),
                    1 => (rnd() >> (rnd() % 42)) % (max_d + 1),
                    2 => (1u64 << (n / 6 % 41)).saturating_sub(rnd() % 3) + rnd() % 2,
                    3 => (k * (rnd() % (max_d / k))) + (rnd() % 3),
                    4 => ((rnd() % 4096) << (rnd() % 30)).min(max_d),
                    _ => rnd() % 64,
                };
                let present = n % 17 != 0;
                let min = (rnd() & 0x7BFF) as u16;
                let c = d.div_ceil(k) as i64;
                let step = fp16::round_up(c);
                let exp = if present { (step, min) } else { (0, 0) };
                b.d.next = d.into();
                b.min.next = (min as u64).into();
                b.present.next = present;
                want.push_back(exp);
                edge(&mut b);
                if want.len() >= GroupStep::LATENCY {
                    let (s, mn) = want.pop_front().unwrap();
                    assert_eq!(b.step_out.val().index() as u16, s, "m {m}, D = {d} (sample {n})");
                    assert_eq!(b.min_out.val().index() as u16, mn);
                    checked += 1;
                }
            }
            assert!(checked > 3900);
        }
    }
}
