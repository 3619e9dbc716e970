//! The exact accumulator of HACK's dot units and its one rounding (spec
//! §15.6, §15.16.1): per beat, `T` terms given as magnitude, left shift and
//! sign are added into one two's complement accumulator of `W` bits (units
//! of 2^-48; `W` from §15.16.1 and §15.16.4, at most 119), held in
//! carry-save form, over the beats of a token (`first` .. `last`); after
//! `last` the sum is resolved and rounded to binary32, nearest even, +0 for
//! zero. Paper: HACK §5.2, Eq. 4. Three blocks, each stage loading on `en`:
//!
//! - `TermPlace`, A: each term placed (`mag << sh`), inverted when negative
//!   (the `+1`s of the negations are counted and added as one more
//!   operand); B: the `T + 1` operands reduced to two by 3:2 compressors;
//! - `ExactAcc`'s C: the accumulator, two words: a token's first beat loads
//!   B's pair, the others add it by two more compressors (no carry runs:
//!   the loop closes in one cycle whatever `W`). `hack-pv-dot` keeps its
//!   accumulators in a memory instead and uses the other two blocks alone;
//! - `Resolve`, P0..P4: `A = s + c` and `B = -(s + c) = ~s + ~c + 2`, 25
//!   bits a stage, their carries passed on (no carry runs more than 25 bits
//!   in a stage); N0: the magnitude (`A`, or `B` when `A` is negative) and
//!   the first normalising shifts (64, 32, 16); N1: the rest (8, 4, 2, 1);
//!   R1: guard, sticky and the round-up decision; R2: the increment, the
//!   exponent and the binary32 pattern.
//!
//! Everything is kept modulo 2^W: words are masked to `W` bits, so the bits
//! above are constant and synthesis removes them.

use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Width of the accumulator's words.
pub const ACCW: usize = 128;
/// Width of a term's magnitude.
pub const TERM_W: usize = 48;
/// Carry-propagate segments and their width.
const SEG: usize = 25;
const NSEG: usize = 5;
/// Cycles of `TermPlace` (A, B) and of `Resolve` (P0..P4, N0, N1, R1, R2).
pub const PLACE_LATENCY: usize = 2;
pub const RESOLVE_LATENCY: usize = NSEG + 4;
/// Cycles from a beat at the inputs to its token's score at the outputs.
pub const LATENCY: usize = PLACE_LATENCY + 1 + RESOLVE_LATENCY;
/// The widest accumulator (`W < 25 x 5`, and the exponent of R2 stays
/// below 255).
pub const MAX_W: usize = 119;
const _: () = assert!(MAX_W < SEG * NSEG);

/// `(1 << w) - 1`, the mask of a `w`-bit accumulator word.
fn wmask(w: usize) -> Bits<ACCW> {
    (Bits::<ACCW>::from(1u64) << (w as u64)) - Bits::<ACCW>::from(1u64)
}

/// A and B: a beat's `T` terms into a carry-save pair, modulo 2^W.
#[derive(LogicBlock)]
pub struct TermPlace {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset: every stage empty
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// a beat is at the inputs
    pub in_valid: Signal<In, Bit>,
    /// the beat's tag, carried along
    pub in_tag: Signal<In, Bits<16>>,
    /// the beat's status flag, carried along
    pub in_flag: Signal<In, Bit>,
    /// term magnitudes
    pub in_mag: Vec<Signal<In, Bits<TERM_W>>>,
    /// term left shifts
    pub in_sh: Vec<Signal<In, Bits<8>>>,
    /// term signs
    pub in_neg: Vec<Signal<In, Bit>>,
    /// the beat's pair is at the outputs
    pub out_valid: Signal<Out, Bit>,
    pub out_tag: Signal<Out, Bits<16>>,
    pub out_flag: Signal<Out, Bit>,
    /// the pair: `out_s + out_c` is the beat's sum modulo 2^W
    pub out_s: Signal<Out, Bits<ACCW>>,
    pub out_c: Signal<Out, Bits<ACCW>>,
    // ---- A ----
    a_f: Vec<Reg<Bits<ACCW>>>,
    a_n: Reg<Bits<8>>,
    a_v: Reg<Bit>,
    a_tag: Reg<Bits<16>>,
    a_flag: Reg<Bit>,
    mask: Constant<Bits<ACCW>>,
    negm: Signal<Local, Bits<ACCW>>,
    mag: Signal<Local, Bits<TERM_W>>,
    cnt: Signal<Local, Bits<8>>,
    // ---- B: compressor items, inputs first, then each compressor's pair ----
    t: Vec<Signal<Local, Bits<ACCW>>>,
    b_s: Reg<Bits<ACCW>>,
    b_c: Reg<Bits<ACCW>>,
    b_v: Reg<Bit>,
    b_tag: Reg<Bits<16>>,
    b_flag: Reg<Bit>,
    k_zero: Constant<Bits<ACCW>>,
    k_ones: Constant<Bits<ACCW>>,
    k_one8: Constant<Bits<8>>,
    /// 1, for the compressors' shift (none with one term: a length-0 list)
    k_one32: Vec<Constant<Bits<32>>>,
    k_z8: Constant<Bits<8>>,
    _t: usize,
    _n: usize,
    _comps: usize,
}

impl TermPlace {
    /// `terms` terms per beat, modulo 2^`width`.
    pub fn new(terms: usize, width: usize) -> Self {
        assert!((1..=8).contains(&terms) && width <= MAX_W);
        let n = terms + 1;
        TermPlace {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            in_tag: Default::default(),
            in_flag: Default::default(),
            in_mag: sigs(terms),
            in_sh: sigs(terms),
            in_neg: sigs(terms),
            out_valid: Default::default(),
            out_tag: Default::default(),
            out_flag: Default::default(),
            out_s: Default::default(),
            out_c: Default::default(),
            a_f: regs(terms),
            a_n: Reg::default(),
            a_v: Reg::default(),
            a_tag: Reg::default(),
            a_flag: Reg::default(),
            mask: Constant::new(wmask(width)),
            negm: Default::default(),
            mag: Default::default(),
            cnt: Default::default(),
            t: sigs(n + 2 * (n - 2)),
            b_s: Reg::default(),
            b_c: Reg::default(),
            b_v: Reg::default(),
            b_tag: Reg::default(),
            b_flag: Reg::default(),
            k_zero: Constant::new(0u64.into()),
            k_ones: Constant::new(Bits::<ACCW>::mask()),
            k_one8: Constant::new(1u64.into()),
            k_one32: consts((0..(n - 2).min(1)).map(|_| 1u64)),
            k_z8: Constant::new(0u64.into()),
            _t: terms,
            _n: n,
            _comps: n - 2,
        }
    }
}

impl Logic for TermPlace {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, a_n, a_v, a_tag, a_flag, b_s, b_c, b_v, b_tag, b_flag);
        self.a_n.reset.next = self.reset.val();
        self.a_v.reset.next = self.reset.val();
        self.a_tag.reset.next = self.reset.val();
        self.a_flag.reset.next = self.reset.val();
        self.b_s.reset.next = self.reset.val();
        self.b_c.reset.next = self.reset.val();
        self.b_v.reset.next = self.reset.val();
        self.b_tag.reset.next = self.reset.val();
        self.b_flag.reset.next = self.reset.val();
        self.a_n.en.next = self.en.val();
        self.a_v.en.next = self.en.val();
        self.a_tag.en.next = self.en.val();
        self.a_flag.en.next = self.en.val();
        self.b_s.en.next = self.en.val();
        self.b_c.en.next = self.en.val();
        self.b_v.en.next = self.en.val();
        self.b_tag.en.next = self.en.val();
        self.b_flag.en.next = self.en.val();
        for i in 0..self._t {
            self.a_f[i].clock.next = self.clock.val();
            self.a_f[i].reset.next = self.reset.val();
            self.a_f[i].en.next = self.en.val();
        }
        // ---- A: each term placed and, when negative, inverted ----
        self.cnt.next = self.k_z8.val();
        for i in 0..self._t {
            self.mag.next = self.in_mag[i].val();
            self.negm.next = self.k_zero.val();
            if self.in_neg[i].val() {
                self.negm.next = self.k_ones.val();
                self.cnt.next = self.cnt.val() + self.k_one8.val();
            }
            self.a_f[i].d.next =
                ((bit_cast::<ACCW, TERM_W>(self.mag.val()) << self.in_sh[i].val()) ^ self.negm.val()) & self.mask.val();
        }
        self.a_n.d.next = self.cnt.val();
        self.a_v.d.next = self.in_valid.val();
        self.a_tag.d.next = self.in_tag.val();
        self.a_flag.d.next = self.in_flag.val();

        // ---- B: T + 1 operands to two (3:2 compressors, oldest items first) ----
        for i in 0..self._t {
            self.t[i].next = self.a_f[i].q.val();
        }
        for n in self._n..(self._n + 1) {
            self.t[n - 1].next = bit_cast::<ACCW, 8>(self.a_n.q.val());
            for k in 0..self._comps {
                self.t[n + 2 * k].next = self.t[3 * k].val() ^ self.t[3 * k + 1].val() ^ self.t[3 * k + 2].val();
                self.t[n + 2 * k + 1].next = (((self.t[3 * k].val() & self.t[3 * k + 1].val())
                    | (self.t[3 * k].val() & self.t[3 * k + 2].val())
                    | (self.t[3 * k + 1].val() & self.t[3 * k + 2].val()))
                    << self.k_one32[0].val())
                    & self.mask.val();
            }
        }
        for tt in self._t..(self._t + 1) {
            self.b_s.d.next = self.t[3 * tt - 3].val();
            self.b_c.d.next = self.t[3 * tt - 2].val();
        }
        self.b_v.d.next = self.a_v.q.val();
        self.b_tag.d.next = self.a_tag.q.val();
        self.b_flag.d.next = self.a_flag.q.val();

        self.out_valid.next = self.b_v.q.val();
        self.out_tag.next = self.b_tag.q.val();
        self.out_flag.next = self.b_flag.q.val();
        self.out_s.next = self.b_s.q.val();
        self.out_c.next = self.b_c.q.val();
    }
}

/// P0..R2: a carry-save pair, `s + c` modulo 2^W read as two's complement,
/// rounded to binary32, nearest even, +0 for zero.
#[derive(LogicBlock)]
pub struct Resolve {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset: every stage empty
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// a pair is at the inputs
    pub in_valid: Signal<In, Bit>,
    pub in_s: Signal<In, Bits<ACCW>>,
    pub in_c: Signal<In, Bits<ACCW>>,
    /// carried to the output
    pub in_flag: Signal<In, Bit>,
    /// the result of a pair
    pub out_valid: Signal<Out, Bit>,
    /// binary32 RNE of `(s + c) 2^-48`
    pub out_y: Signal<Out, Bits<32>>,
    pub out_flag: Signal<Out, Bit>,
    mask: Constant<Bits<ACCW>>,
    // ---- P0..P4 ----
    p_s: Vec<Reg<Bits<ACCW>>>,
    p_c: Vec<Reg<Bits<ACCW>>>,
    p_a: Vec<Reg<Bits<ACCW>>>,
    p_b: Vec<Reg<Bits<ACCW>>>,
    /// the words and carries still to add: stages P0 .. P3 only
    p_ca: Vec<Reg<Bits<2>>>,
    p_cb: Vec<Reg<Bits<2>>>,
    p_v: Vec<Reg<Bit>>,
    p_flag: Vec<Reg<Bit>>,
    s_cur: Signal<Local, Bits<ACCW>>,
    c_cur: Signal<Local, Bits<ACCW>>,
    seg_a: Signal<Local, Bits<ACCW>>,
    seg_b: Signal<Local, Bits<ACCW>>,
    cin_a: Signal<Local, Bits<2>>,
    cin_b: Signal<Local, Bits<2>>,
    sx: Signal<Local, Bits<27>>,
    sy: Signal<Local, Bits<27>>,
    sxi: Signal<Local, Bits<27>>,
    syi: Signal<Local, Bits<27>>,
    ra: Vec<Signal<Local, Bits<27>>>,
    rb: Vec<Signal<Local, Bits<27>>>,
    ra_c: Signal<Local, Bits<27>>,
    rb_c: Signal<Local, Bits<27>>,
    // ---- N0, N1 ----
    va: Signal<Local, Bits<ACCW>>,
    vb: Signal<Local, Bits<ACCW>>,
    sgn: Signal<Local, Bit>,
    norm: Signal<Local, Bits<ACCW>>,
    lz: Signal<Local, Bits<8>>,
    /// 16-bit chunk `i` of `va` (`vb`) is zero; `cz`: of the magnitude
    za: Vec<Signal<Local, Bit>>,
    zb: Vec<Signal<Local, Bit>>,
    cz: Vec<Signal<Local, Bit>>,
    s64: Signal<Local, Bit>,
    s32: Signal<Local, Bit>,
    s16: Signal<Local, Bit>,
    n0_m: Reg<Bits<ACCW>>,
    n0_lz: Reg<Bits<8>>,
    n0_neg: Reg<Bit>,
    n0_zero: Reg<Bit>,
    n0_v: Reg<Bit>,
    n0_flag: Reg<Bit>,
    n1_m: Reg<Bits<ACCW>>,
    n1_lz: Reg<Bits<8>>,
    n1_neg: Reg<Bit>,
    n1_zero: Reg<Bit>,
    n1_v: Reg<Bit>,
    n1_flag: Reg<Bit>,
    // ---- R1, R2 ----
    mant: Signal<Local, Bits<25>>,
    r1_mant: Reg<Bits<25>>,
    r1_inc: Reg<Bit>,
    r1_exp: Reg<Bits<8>>,
    r1_neg: Reg<Bit>,
    r1_zero: Reg<Bit>,
    r1_v: Reg<Bit>,
    r1_flag: Reg<Bit>,
    m2: Signal<Local, Bits<25>>,
    r2_y: Reg<Bits<32>>,
    r2_v: Reg<Bit>,
    r2_flag: Reg<Bit>,
    // ---- constants ----
    k_zero: Constant<Bits<ACCW>>,
    k_wm1: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    /// bit offset of segment k = 1 .. 4, 25 k (index k - 1)
    kseg: Vec<Constant<Bits<32>>>,
    k_seg: Constant<Bits<32>>,
    k_two27: Constant<Bits<27>>,
    k_lo25: Constant<Bits<27>>,
    k_seg_mask: Constant<Bits<ACCW>>,
    /// segment k of the W-bit mask (the bits a word inverts)
    k_mseg: Vec<Constant<Bits<27>>>,
    /// bit offset of 16-bit chunk `i`, 16 i
    kchunk: Vec<Constant<Bits<32>>>,
    k_c64: Constant<Bits<32>>,
    k_c120: Constant<Bits<32>>,
    k_c124: Constant<Bits<32>>,
    k_c126: Constant<Bits<32>>,
    k_c127: Constant<Bits<32>>,
    k_c104: Constant<Bits<32>>,
    k_c103: Constant<Bits<32>>,
    k_c32: Constant<Bits<32>>,
    k_c16: Constant<Bits<32>>,
    k_c8: Constant<Bits<32>>,
    k_c4: Constant<Bits<32>>,
    k_c2: Constant<Bits<32>>,
    k_l64: Constant<Bits<8>>,
    k_l32: Constant<Bits<8>>,
    k_l16: Constant<Bits<8>>,
    k_l8: Constant<Bits<8>>,
    k_l4: Constant<Bits<8>>,
    k_l2: Constant<Bits<8>>,
    k_l1: Constant<Bits<8>>,
    k_z16: Constant<Bits<16>>,
    k_z8: Constant<Bits<8>>,
    k_z4: Constant<Bits<4>>,
    k_z2: Constant<Bits<2>>,
    k_z103: Constant<Bits<103>>,
    /// the biased exponent less one: the significand's hidden bit adds it
    k_e205: Constant<Bits<8>>,
    k_zero32: Constant<Bits<32>>,
    k_sh23: Constant<Bits<32>>,
    k_sh31: Constant<Bits<32>>,
}

impl Resolve {
    /// A `width`-bit accumulator.
    pub fn new(width: usize) -> Self {
        assert!(width <= MAX_W);
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        let c8 = |v: u64| Constant::<Bits<8>>::new(v.into());
        Resolve {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            in_s: Default::default(),
            in_c: Default::default(),
            in_flag: Default::default(),
            out_valid: Default::default(),
            out_y: Default::default(),
            out_flag: Default::default(),
            mask: Constant::new(wmask(width)),
            p_s: regs(NSEG - 1),
            p_c: regs(NSEG - 1),
            p_a: regs(NSEG),
            p_b: regs(NSEG),
            p_ca: regs(NSEG - 1),
            p_cb: regs(NSEG - 1),
            p_v: regs(NSEG),
            p_flag: regs(NSEG),
            s_cur: Default::default(),
            c_cur: Default::default(),
            seg_a: Default::default(),
            seg_b: Default::default(),
            cin_a: Default::default(),
            cin_b: Default::default(),
            sx: Default::default(),
            sy: Default::default(),
            sxi: Default::default(),
            syi: Default::default(),
            ra: sigs(NSEG),
            rb: sigs(NSEG),
            ra_c: Default::default(),
            rb_c: Default::default(),
            va: Default::default(),
            vb: Default::default(),
            sgn: Default::default(),
            norm: Default::default(),
            lz: Default::default(),
            za: sigs(8),
            zb: sigs(8),
            cz: sigs(8),
            s64: Default::default(),
            s32: Default::default(),
            s16: Default::default(),
            n0_m: Reg::default(),
            n0_lz: Reg::default(),
            n0_neg: Reg::default(),
            n0_zero: Reg::default(),
            n0_v: Reg::default(),
            n0_flag: Reg::default(),
            n1_m: Reg::default(),
            n1_lz: Reg::default(),
            n1_neg: Reg::default(),
            n1_zero: Reg::default(),
            n1_v: Reg::default(),
            n1_flag: Reg::default(),
            mant: Default::default(),
            r1_mant: Reg::default(),
            r1_inc: Reg::default(),
            r1_exp: Reg::default(),
            r1_neg: Reg::default(),
            r1_zero: Reg::default(),
            r1_v: Reg::default(),
            r1_flag: Reg::default(),
            m2: Default::default(),
            r2_y: Reg::default(),
            r2_v: Reg::default(),
            r2_flag: Reg::default(),
            k_zero: Constant::new(0u64.into()),
            k_wm1: c32(width as u64 - 1),
            k_one32: c32(1),
            kseg: consts((1..NSEG).map(|k| (SEG * k) as u64)),
            k_seg: c32(SEG as u64),
            k_two27: Constant::new(2u64.into()),
            k_lo25: Constant::new(((1u64 << SEG) - 1).into()),
            k_seg_mask: Constant::new(((1u64 << SEG) - 1).into()),
            k_mseg: consts((0..NSEG).map(|k| {
                let lo = SEG * k;
                let n = width.saturating_sub(lo).min(SEG);
                (1u64 << n) - 1
            })),
            kchunk: consts((0..8).map(|i| 16 * i)),
            k_c64: c32(64),
            k_c120: c32(120),
            k_c124: c32(124),
            k_c126: c32(126),
            k_c127: c32(127),
            k_c104: c32(104),
            k_c103: c32(103),
            k_c32: c32(32),
            k_c16: c32(16),
            k_c8: c32(8),
            k_c4: c32(4),
            k_c2: c32(2),
            k_l64: c8(64),
            k_l32: c8(32),
            k_l16: c8(16),
            k_l8: c8(8),
            k_l4: c8(4),
            k_l2: c8(2),
            k_l1: c8(1),
            k_z16: Constant::new(0u64.into()),
            k_z8: Constant::new(0u64.into()),
            k_z4: Constant::new(0u64.into()),
            k_z2: Constant::new(0u64.into()),
            k_z103: Constant::new(0u64.into()),
            k_e205: c8(205),
            k_zero32: c32(0),
            k_sh23: c32(23),
            k_sh31: c32(31),
        }
    }
}

impl Logic for Resolve {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, n0_m, n0_lz, n0_neg, n0_zero, n0_v, n0_flag);
        clock!(self, clock, n1_m, n1_lz, n1_neg, n1_zero, n1_v, n1_flag, r1_mant, r1_inc, r1_exp, r1_neg);
        clock!(self, clock, r1_zero, r1_v, r1_flag, r2_y, r2_v, r2_flag);
        self.n0_m.reset.next = self.reset.val();
        self.n0_lz.reset.next = self.reset.val();
        self.n0_neg.reset.next = self.reset.val();
        self.n0_zero.reset.next = self.reset.val();
        self.n0_v.reset.next = self.reset.val();
        self.n0_flag.reset.next = self.reset.val();
        self.n1_m.reset.next = self.reset.val();
        self.n1_lz.reset.next = self.reset.val();
        self.n1_neg.reset.next = self.reset.val();
        self.n1_zero.reset.next = self.reset.val();
        self.n1_v.reset.next = self.reset.val();
        self.n1_flag.reset.next = self.reset.val();
        self.r1_mant.reset.next = self.reset.val();
        self.r1_inc.reset.next = self.reset.val();
        self.r1_exp.reset.next = self.reset.val();
        self.r1_neg.reset.next = self.reset.val();
        self.r1_zero.reset.next = self.reset.val();
        self.r1_v.reset.next = self.reset.val();
        self.r1_flag.reset.next = self.reset.val();
        self.r2_y.reset.next = self.reset.val();
        self.r2_v.reset.next = self.reset.val();
        self.r2_flag.reset.next = self.reset.val();
        self.n0_m.en.next = self.en.val();
        self.n0_lz.en.next = self.en.val();
        self.n0_neg.en.next = self.en.val();
        self.n0_zero.en.next = self.en.val();
        self.n0_v.en.next = self.en.val();
        self.n0_flag.en.next = self.en.val();
        self.n1_m.en.next = self.en.val();
        self.n1_lz.en.next = self.en.val();
        self.n1_neg.en.next = self.en.val();
        self.n1_zero.en.next = self.en.val();
        self.n1_v.en.next = self.en.val();
        self.n1_flag.en.next = self.en.val();
        self.r1_mant.en.next = self.en.val();
        self.r1_inc.en.next = self.en.val();
        self.r1_exp.en.next = self.en.val();
        self.r1_neg.en.next = self.en.val();
        self.r1_zero.en.next = self.en.val();
        self.r1_v.en.next = self.en.val();
        self.r1_flag.en.next = self.en.val();
        self.r2_y.en.next = self.en.val();
        self.r2_v.en.next = self.en.val();
        self.r2_flag.en.next = self.en.val();
        for k in 0..5 {
            self.p_a[k].clock.next = self.clock.val();
            self.p_a[k].reset.next = self.reset.val();
            self.p_a[k].en.next = self.en.val();
            self.p_b[k].clock.next = self.clock.val();
            self.p_b[k].reset.next = self.reset.val();
            self.p_b[k].en.next = self.en.val();
            self.p_v[k].clock.next = self.clock.val();
            self.p_v[k].reset.next = self.reset.val();
            self.p_v[k].en.next = self.en.val();
            self.p_flag[k].clock.next = self.clock.val();
            self.p_flag[k].reset.next = self.reset.val();
            self.p_flag[k].en.next = self.en.val();
        }
        for k in 0..4 {
            self.p_s[k].clock.next = self.clock.val();
            self.p_s[k].reset.next = self.reset.val();
            self.p_s[k].en.next = self.en.val();
            self.p_c[k].clock.next = self.clock.val();
            self.p_c[k].reset.next = self.reset.val();
            self.p_c[k].en.next = self.en.val();
            self.p_ca[k].clock.next = self.clock.val();
            self.p_ca[k].reset.next = self.reset.val();
            self.p_ca[k].en.next = self.en.val();
            self.p_cb[k].clock.next = self.clock.val();
            self.p_cb[k].reset.next = self.reset.val();
            self.p_cb[k].en.next = self.en.val();
        }
        // ---- P0..P4: s + c and ~s + ~c + 2, 25 bits a stage ----
        self.sx.next = bit_cast::<27, 25>(self.in_s.val().get_bits::<25>(0));
        self.sy.next = bit_cast::<27, 25>(self.in_c.val().get_bits::<25>(0));
        self.sxi.next = self.sx.val() ^ self.k_mseg[0].val();
        self.syi.next = self.sy.val() ^ self.k_mseg[0].val();
        self.ra[0].next = self.sx.val() + self.sy.val();
        self.rb[0].next = self.sxi.val() + self.syi.val() + self.k_two27.val();
        self.seg_a.next = bit_cast::<ACCW, 27>(self.ra[0].val());
        self.seg_b.next = bit_cast::<ACCW, 27>(self.rb[0].val());
        self.p_a[0].d.next = self.seg_a.val() & self.k_seg_mask.val();
        self.p_b[0].d.next = self.seg_b.val() & self.k_seg_mask.val();
        self.p_s[0].d.next = self.in_s.val();
        self.p_c[0].d.next = self.in_c.val();
        self.p_v[0].d.next = self.in_valid.val();
        self.p_flag[0].d.next = self.in_flag.val();
        for k in 1..5 {
            // (casts take no indexed signal: scalar locals first)
            self.s_cur.next = self.p_s[k - 1].q.val() >> self.kseg[k - 1].val();
            self.c_cur.next = self.p_c[k - 1].q.val() >> self.kseg[k - 1].val();
            self.cin_a.next = self.p_ca[k - 1].q.val();
            self.cin_b.next = self.p_cb[k - 1].q.val();
            self.sx.next = bit_cast::<27, ACCW>(self.s_cur.val()) & self.k_lo25.val();
            self.sy.next = bit_cast::<27, ACCW>(self.c_cur.val()) & self.k_lo25.val();
            self.sxi.next = self.sx.val() ^ self.k_mseg[k].val();
            self.syi.next = self.sy.val() ^ self.k_mseg[k].val();
            self.ra[k].next = self.sx.val() + self.sy.val() + bit_cast::<27, 2>(self.cin_a.val());
            self.rb[k].next = self.sxi.val() + self.syi.val() + bit_cast::<27, 2>(self.cin_b.val());
            self.ra_c.next = self.ra[k].val();
            self.rb_c.next = self.rb[k].val();
            self.seg_a.next = bit_cast::<ACCW, 27>(self.ra_c.val()) & self.k_seg_mask.val();
            self.seg_b.next = bit_cast::<ACCW, 27>(self.rb_c.val()) & self.k_seg_mask.val();
            self.p_a[k].d.next = self.p_a[k - 1].q.val() | (self.seg_a.val() << self.kseg[k - 1].val());
            self.p_b[k].d.next = self.p_b[k - 1].q.val() | (self.seg_b.val() << self.kseg[k - 1].val());
            self.p_v[k].d.next = self.p_v[k - 1].q.val();
            self.p_flag[k].d.next = self.p_flag[k - 1].q.val();
        }
        for k in 0..4 {
            self.p_ca[k].d.next = self.ra[k].val().get_bits::<2>(self.k_seg.val().index());
            self.p_cb[k].d.next = self.rb[k].val().get_bits::<2>(self.k_seg.val().index());
        }
        for k in 1..4 {
            self.p_s[k].d.next = self.p_s[k - 1].q.val();
            self.p_c[k].d.next = self.p_c[k - 1].q.val();
        }

        // ---- N0: the magnitude; shifts by 64, 32, 16 ----
        // The three shift decisions come from the 16-bit chunks' zero flags,
        // found on both candidates beside the sign's fan-out, not in series
        // with the shifts: chunk 7 is the top, a shift by 64 (32) moves the
        // top down by 4 (2) chunks.
        self.va.next = self.p_a[4].q.val() & self.mask.val();
        self.vb.next = self.p_b[4].q.val() & self.mask.val();
        self.sgn.next = self.va.val().get_bit(self.k_wm1.val().index());
        self.norm.next = self.va.val();
        if self.sgn.val() {
            self.norm.next = self.vb.val();
        }
        self.n0_zero.d.next = self.norm.val() == self.k_zero.val();
        for i in 0..8 {
            self.za[i].next = self.va.val().get_bits::<16>(self.kchunk[i].val().index()) == self.k_z16.val();
            self.zb[i].next = self.vb.val().get_bits::<16>(self.kchunk[i].val().index()) == self.k_z16.val();
            self.cz[i].next = self.za[i].val();
            if self.sgn.val() {
                self.cz[i].next = self.zb[i].val();
            }
        }
        self.s64.next = self.cz[7].val() & self.cz[6].val() & self.cz[5].val() & self.cz[4].val();
        self.s32.next = self.cz[7].val() & self.cz[6].val();
        self.s16.next = self.cz[7].val();
        if self.s32.val() {
            self.s16.next = self.cz[5].val();
        }
        if self.s64.val() {
            self.s32.next = self.cz[3].val() & self.cz[2].val();
            self.s16.next = self.cz[3].val();
            if self.cz[3].val() & self.cz[2].val() {
                self.s16.next = self.cz[1].val();
            }
        }
        self.lz.next = self.k_z8.val();
        if self.s64.val() {
            self.norm.next = self.norm.val() << self.k_c64.val();
            self.lz.next = self.lz.val() + self.k_l64.val();
        }
        if self.s32.val() {
            self.norm.next = self.norm.val() << self.k_c32.val();
            self.lz.next = self.lz.val() + self.k_l32.val();
        }
        if self.s16.val() {
            self.norm.next = self.norm.val() << self.k_c16.val();
            self.lz.next = self.lz.val() + self.k_l16.val();
        }
        self.n0_m.d.next = self.norm.val();
        self.n0_lz.d.next = self.lz.val();
        self.n0_neg.d.next = self.sgn.val();
        self.n0_v.d.next = self.p_v[4].q.val();
        self.n0_flag.d.next = self.p_flag[4].q.val();

        // ---- N1: shifts by 8, 4, 2, 1 ----
        self.norm.next = self.n0_m.q.val();
        self.lz.next = self.n0_lz.q.val();
        if self.norm.val().get_bits::<8>(self.k_c120.val().index()) == self.k_z8.val() {
            self.norm.next = self.norm.val() << self.k_c8.val();
            self.lz.next = self.lz.val() + self.k_l8.val();
        }
        if self.norm.val().get_bits::<4>(self.k_c124.val().index()) == self.k_z4.val() {
            self.norm.next = self.norm.val() << self.k_c4.val();
            self.lz.next = self.lz.val() + self.k_l4.val();
        }
        if self.norm.val().get_bits::<2>(self.k_c126.val().index()) == self.k_z2.val() {
            self.norm.next = self.norm.val() << self.k_c2.val();
            self.lz.next = self.lz.val() + self.k_l2.val();
        }
        if !self.norm.val().get_bit(self.k_c127.val().index()) {
            self.norm.next = self.norm.val() << self.k_one32.val();
            self.lz.next = self.lz.val() + self.k_l1.val();
        }
        self.n1_m.d.next = self.norm.val();
        self.n1_lz.d.next = self.lz.val();
        self.n1_neg.d.next = self.n0_neg.q.val();
        self.n1_zero.d.next = self.n0_zero.q.val();
        self.n1_v.d.next = self.n0_v.q.val();
        self.n1_flag.d.next = self.n0_flag.q.val();

        // ---- R1: 24 bits, guard and sticky; the value is m 2^-48 ----
        self.mant.next = bit_cast::<25, 24>(self.n1_m.q.val().get_bits::<24>(self.k_c104.val().index()));
        self.r1_mant.d.next = self.mant.val();
        self.r1_inc.d.next = self.n1_m.q.val().get_bit(self.k_c103.val().index())
            & ((self.n1_m.q.val().get_bits::<103>(0) != self.k_z103.val()) | self.mant.val().get_bit(0));
        self.r1_exp.d.next = self.k_e205.val() - self.n1_lz.q.val();
        self.r1_neg.d.next = self.n1_neg.q.val();
        self.r1_zero.d.next = self.n1_zero.q.val();
        self.r1_v.d.next = self.n1_v.q.val();
        self.r1_flag.d.next = self.n1_flag.q.val();

        // ---- R2: the increment; the pattern is (E - 1) 2^23 + significand, so
        // the hidden bit adds the 1 and a carry out (2^24) one more ----
        self.m2.next = self.r1_mant.q.val() + bit_cast::<25, 1>(self.r1_inc.q.val().into());
        self.r2_y.d.next = (bit_cast::<32, 1>(self.r1_neg.q.val().into()) << self.k_sh31.val())
            | ((bit_cast::<32, 8>(self.r1_exp.q.val()) << self.k_sh23.val()) + bit_cast::<32, 25>(self.m2.val()));
        if self.r1_zero.q.val() {
            self.r2_y.d.next = self.k_zero32.val();
        }
        self.r2_v.d.next = self.r1_v.q.val();
        self.r2_flag.d.next = self.r1_flag.q.val();
        self.out_valid.next = self.r2_v.q.val();
        self.out_y.next = self.r2_y.q.val();
        self.out_flag.next = self.r2_flag.q.val();
    }
}

/// `TermPlace`, the accumulator C, `Resolve`: a token's exact sum, rounded.
#[derive(LogicBlock)]
pub struct ExactAcc {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset: every stage empty
    pub reset: Signal<In, Bit>,
    /// pipeline advance: every stage loads only when high
    pub en: Signal<In, Bit>,
    /// a beat is at the inputs
    pub in_valid: Signal<In, Bit>,
    /// the beat is its token's first
    pub in_first: Signal<In, Bit>,
    /// the beat is its token's last
    pub in_last: Signal<In, Bit>,
    /// the beat's status flag, ORed over the token
    pub in_flag: Signal<In, Bit>,
    /// term magnitudes
    pub in_mag: Vec<Signal<In, Bits<TERM_W>>>,
    /// term left shifts
    pub in_sh: Vec<Signal<In, Bits<8>>>,
    /// term signs
    pub in_neg: Vec<Signal<In, Bit>>,
    /// a token's result
    pub out_valid: Signal<Out, Bit>,
    /// binary32 RNE of the token's sum times 2^-48
    pub out_y: Signal<Out, Bits<32>>,
    /// OR of the token's flags
    pub out_flag: Signal<Out, Bit>,
    place: TermPlace,
    // ---- C ----
    x_s: Signal<Local, Bits<ACCW>>,
    x_c: Signal<Local, Bits<ACCW>>,
    y_s: Signal<Local, Bits<ACCW>>,
    y_c: Signal<Local, Bits<ACCW>>,
    acc_s: Reg<Bits<ACCW>>,
    acc_c: Reg<Bits<ACCW>>,
    acc_flag: Reg<Bit>,
    c_done: Reg<Bit>,
    mask: Constant<Bits<ACCW>>,
    k_one32: Constant<Bits<32>>,
    res: Resolve,
    _t: usize,
}

impl ExactAcc {
    /// `terms` terms per beat into a `width`-bit accumulator.
    pub fn new(terms: usize, width: usize) -> Self {
        ExactAcc {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            in_first: Default::default(),
            in_last: Default::default(),
            in_flag: Default::default(),
            in_mag: sigs(terms),
            in_sh: sigs(terms),
            in_neg: sigs(terms),
            out_valid: Default::default(),
            out_y: Default::default(),
            out_flag: Default::default(),
            place: TermPlace::new(terms, width),
            x_s: Default::default(),
            x_c: Default::default(),
            y_s: Default::default(),
            y_c: Default::default(),
            acc_s: Reg::default(),
            acc_c: Reg::default(),
            acc_flag: Reg::default(),
            c_done: Reg::default(),
            mask: Constant::new(wmask(width)),
            k_one32: Constant::new(1u64.into()),
            res: Resolve::new(width),
            _t: terms,
        }
    }
}

impl Logic for ExactAcc {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, place, acc_s, acc_c, acc_flag, c_done, res);
        self.place.reset.next = self.reset.val();
        self.place.en.next = self.en.val();
        self.res.reset.next = self.reset.val();
        self.res.en.next = self.en.val();
        self.acc_s.reset.next = self.reset.val();
        self.acc_c.reset.next = self.reset.val();
        self.acc_flag.reset.next = self.reset.val();
        self.c_done.reset.next = self.reset.val();
        self.c_done.en.next = self.en.val();
        self.place.in_valid.next = self.in_valid.val();
        self.place.in_tag.next = bit_cast::<16, 1>(self.in_first.val().into())
            | (bit_cast::<16, 1>(self.in_last.val().into()) << 1);
        self.place.in_flag.next = self.in_flag.val();
        for i in 0..self._t {
            self.place.in_mag[i].next = self.in_mag[i].val();
            self.place.in_sh[i].next = self.in_sh[i].val();
            self.place.in_neg[i].next = self.in_neg[i].val();
        }
        // ---- C: the accumulator (a token's first beat starts it) ----
        self.x_s.next = self.acc_s.q.val() ^ self.acc_c.q.val() ^ self.place.out_s.val();
        self.x_c.next = (((self.acc_s.q.val() & self.acc_c.q.val())
            | (self.acc_s.q.val() & self.place.out_s.val())
            | (self.acc_c.q.val() & self.place.out_s.val()))
            << self.k_one32.val())
            & self.mask.val();
        self.y_s.next = self.x_s.val() ^ self.x_c.val() ^ self.place.out_c.val();
        self.y_c.next = (((self.x_s.val() & self.x_c.val())
            | (self.x_s.val() & self.place.out_c.val())
            | (self.x_c.val() & self.place.out_c.val()))
            << self.k_one32.val())
            & self.mask.val();
        self.acc_s.en.next = self.en.val() & self.place.out_valid.val();
        self.acc_c.en.next = self.en.val() & self.place.out_valid.val();
        self.acc_flag.en.next = self.en.val() & self.place.out_valid.val();
        self.acc_s.d.next = self.y_s.val();
        self.acc_c.d.next = self.y_c.val();
        self.acc_flag.d.next = self.acc_flag.q.val() | self.place.out_flag.val();
        if self.place.out_tag.val().get_bit(0) {
            self.acc_s.d.next = self.place.out_s.val();
            self.acc_c.d.next = self.place.out_c.val();
            self.acc_flag.d.next = self.place.out_flag.val();
        }
        self.c_done.d.next = self.place.out_valid.val() & self.place.out_tag.val().get_bit(1);

        self.res.in_valid.next = self.c_done.q.val();
        self.res.in_s.next = self.acc_s.q.val();
        self.res.in_c.next = self.acc_c.q.val();
        self.res.in_flag.next = self.acc_flag.q.val();
        self.out_valid.next = self.res.out_valid.val();
        self.out_y.next = self.res.out_y.val();
        self.out_flag.next = self.res.out_flag.val();
    }
}
