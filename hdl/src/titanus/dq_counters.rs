//! Skip counters of the Titanus dequantization unit: per beat, how many
//! lanes fell in each case (pruned, missing level, label zero, zero point,
//! multiply), added into five 32-bit status counters as the beat leaves S4.
//! The per-beat popcounts are registered beside S4, and each counter is a
//! {hi, lo} pair whose carry is pre-computed, so no 32-bit add sits on a
//! path. Paper: Titanus (GLSVLSI 2025) §4.4, Figure 7 (the DQU's three
//! rules: skip pruned elements, skip the multiply for code 0 and for the
//! zero point). Spec: docs/spec.md §11.8.3 (skip counters), §11.14.3.

use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Cases counted, in case-code order (the lanes' `s3_cs`).
pub const CASES: usize = 5;

#[derive(LogicBlock)]
pub struct SkipCounters {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every counter 0
    pub reset: Signal<In, Bit>,
    /// the record pipeline advances
    pub en: Signal<In, Bit>,
    /// each lane's case code in S3: 0 pruned, 1 missing level, 2 label
    /// zero, 3 zero point, 4 multiply
    pub cs: Vec<Signal<In, Bits<3>>>,
    /// S4 holds a valid beat (its popcounts are added as it leaves)
    pub s4_valid: Signal<In, Bit>,
    /// the counters (wrapping), in case-code order
    pub st_w: Vec<Signal<Out, Bits<32>>>,
    // counter j counts case j; {hi, lo} with hi1 = hi + 1 ready (a carry
    // out of lo needs 4 beats, so hi1 is never stale when used)
    p_cnt: Vec<Reg<Bits<8>>>,
    n_lo: Vec<Reg<Bits<8>>>,
    n_hi: Vec<Reg<Bits<24>>>,
    n_hi1: Vec<Reg<Bits<24>>>,
    a_cnt: Vec<Signal<Local, Bits<8>>>,
    lo_sum: Vec<Signal<Local, Bits<9>>>,
    kcase: Vec<Constant<Bits<3>>>,
    fb: Signal<Local, Bit>,
    t8a: Signal<Local, Bits<8>>,
    t8b: Signal<Local, Bits<8>>,
    t24: Signal<Local, Bits<24>>,
    zero8: Constant<Bits<8>>,
    one24: Constant<Bits<24>>,
    sh_lo: Constant<Bits<32>>,
    _n: usize,
}

impl SkipCounters {
    /// `lanes`: the lanes whose case codes are counted (<= 64, so a beat's
    /// popcount fits in 8 bits).
    pub fn new(lanes: usize) -> Self {
        SkipCounters {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            cs: sigs(lanes),
            s4_valid: Default::default(),
            st_w: sigs(CASES),
            p_cnt: regs(CASES),
            n_lo: regs(CASES),
            n_hi: regs(CASES),
            n_hi1: (0..CASES).map(|_| Reg::new(Bits::<24>::from(1u64))).collect(),
            a_cnt: sigs(CASES),
            lo_sum: sigs(CASES),
            kcase: consts(0..CASES as u64),
            fb: Default::default(),
            t8a: Default::default(),
            t8b: Default::default(),
            t24: Default::default(),
            zero8: Constant::new(0u64.into()),
            one24: Constant::new(1u64.into()),
            sh_lo: Constant::new(8u64.into()),
            _n: lanes,
        }
    }
}

impl Logic for SkipCounters {
    #[hdl_gen]
    fn update(&mut self) {
        for j in 0..CASES {
            self.a_cnt[j].next = self.zero8.val();
            for i in 0..self._n {
                self.fb.next = self.cs[i].val() == self.kcase[j].val();
                self.a_cnt[j].next = self.a_cnt[j].val() + bit_cast::<8, 1>(self.fb.val().into());
            }
            self.p_cnt[j].clock.next = self.clock.val();
            self.p_cnt[j].reset.next = self.reset.val();
            self.p_cnt[j].en.next = self.en.val();
            self.p_cnt[j].d.next = self.a_cnt[j].val();
            // counters add a beat's popcounts when it leaves S4
            self.t8a.next = self.n_lo[j].q.val();
            self.t8b.next = self.p_cnt[j].q.val();
            self.lo_sum[j].next = bit_cast::<9, 8>(self.t8a.val()) + bit_cast::<9, 8>(self.t8b.val());
            self.n_lo[j].clock.next = self.clock.val();
            self.n_hi[j].clock.next = self.clock.val();
            self.n_hi1[j].clock.next = self.clock.val();
            self.n_lo[j].reset.next = self.reset.val();
            self.n_hi[j].reset.next = self.reset.val();
            self.n_hi1[j].reset.next = self.reset.val();
            self.n_lo[j].en.next = self.en.val() & self.s4_valid.val();
            self.n_hi[j].en.next = self.en.val() & self.s4_valid.val() & self.lo_sum[j].val().get_bit(8);
            self.n_hi1[j].en.next = true;
            self.n_lo[j].d.next = self.lo_sum[j].val().get_bits::<8>(0);
            self.n_hi[j].d.next = self.n_hi1[j].q.val();
            self.n_hi1[j].d.next = self.n_hi[j].q.val() + self.one24.val();
            self.t24.next = self.n_hi[j].q.val();
            self.st_w[j].next =
                (bit_cast::<32, 24>(self.t24.val()) << self.sh_lo.val()) | bit_cast::<32, 8>(self.t8a.val());
        }
    }
}
