//! One channel's state in the Titanus quantization unit: the MMF range
//! during PREFILL, then the current level (range, tolerance range, scale,
//! z * S, level count).
//! Paper: Titanus (GLSVLSI 2025) §4.4, Figure 7 (MMF, channel monitor).
//! Spec: docs/spec.md §11.5.1, §11.6.1, §11.14.5.

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// The state of one channel: MMF range in PREFILL, current level after.
#[derive(LogicBlock)]
pub struct QuChannel {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A sequence starts: MMF to max = -128, min = 127, no level.
    pub clr: Signal<In, Bit>,
    /// MMF update with the new range.
    pub mmf_en: Signal<In, Bit>,
    pub mmf_lo: Signal<In, Bits<8>>,
    pub mmf_hi: Signal<In, Bits<8>>,
    /// A level opens: range, its NZQ outputs, the new level count.
    pub lvl_en: Signal<In, Bit>,
    pub lvl_lo: Signal<In, Bits<8>>,
    pub lvl_hi: Signal<In, Bits<8>>,
    pub lvl_tl: Signal<In, Bits<8>>,
    pub lvl_th: Signal<In, Bits<8>>,
    pub lvl_s: Signal<In, Bits<16>>,
    pub lvl_zs: Signal<In, Bits<24>>,
    pub lvl_nl: Signal<In, Bits<5>>,
    /// Range (MMF min/max, then the current level's), INT8.
    pub lo: Signal<Out, Bits<8>>,
    pub hi: Signal<Out, Bits<8>>,
    /// Current level: tolerance range, scale, z * S; level count (0: empty).
    pub tl: Signal<Out, Bits<8>>,
    pub th: Signal<Out, Bits<8>>,
    pub s: Signal<Out, Bits<16>>,
    pub zs: Signal<Out, Bits<24>>,
    pub nl: Signal<Out, Bits<5>>,
    r_lo: Reg<Bits<8>>,
    r_hi: Reg<Bits<8>>,
    r_tl: Reg<Bits<8>>,
    r_th: Reg<Bits<8>>,
    r_s: Reg<Bits<16>>,
    r_zs: Reg<Bits<24>>,
    r_nl: Reg<Bits<5>>,
    c7f: Constant<Bits<8>>,
    c80: Constant<Bits<8>>,
    zero5: Constant<Bits<5>>,
}

impl Default for QuChannel {
    fn default() -> Self {
        QuChannel {
            clock: Default::default(),
            reset: Default::default(),
            clr: Default::default(),
            mmf_en: Default::default(),
            mmf_lo: Default::default(),
            mmf_hi: Default::default(),
            lvl_en: Default::default(),
            lvl_lo: Default::default(),
            lvl_hi: Default::default(),
            lvl_tl: Default::default(),
            lvl_th: Default::default(),
            lvl_s: Default::default(),
            lvl_zs: Default::default(),
            lvl_nl: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            tl: Default::default(),
            th: Default::default(),
            s: Default::default(),
            zs: Default::default(),
            nl: Default::default(),
            r_lo: Reg::new(0x7Fu64.into()),
            r_hi: Reg::new(0x80u64.into()),
            r_tl: Reg::default(),
            r_th: Reg::default(),
            r_s: Reg::default(),
            r_zs: Reg::default(),
            r_nl: Reg::default(),
            c7f: Constant::new(0x7Fu64.into()),
            c80: Constant::new(0x80u64.into()),
            zero5: Constant::new(0u64.into()),
        }
    }
}

impl Logic for QuChannel {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, r_lo, r_hi, r_tl, r_th, r_s, r_zs, r_nl);
        self.r_lo.reset.next = self.reset.val();
        self.r_hi.reset.next = self.reset.val();
        self.r_tl.reset.next = self.reset.val();
        self.r_th.reset.next = self.reset.val();
        self.r_s.reset.next = self.reset.val();
        self.r_zs.reset.next = self.reset.val();
        self.r_nl.reset.next = self.reset.val();
        self.r_lo.en.next = self.clr.val() | self.mmf_en.val() | self.lvl_en.val();
        self.r_hi.en.next = self.clr.val() | self.mmf_en.val() | self.lvl_en.val();
        self.r_lo.d.next = self.lvl_lo.val();
        self.r_hi.d.next = self.lvl_hi.val();
        if self.mmf_en.val() {
            self.r_lo.d.next = self.mmf_lo.val();
            self.r_hi.d.next = self.mmf_hi.val();
        }
        if self.clr.val() {
            self.r_lo.d.next = self.c7f.val();
            self.r_hi.d.next = self.c80.val();
        }
        // the level fields need no clearing: a level count of 0 hides them
        self.r_tl.en.next = self.lvl_en.val();
        self.r_th.en.next = self.lvl_en.val();
        self.r_s.en.next = self.lvl_en.val();
        self.r_zs.en.next = self.lvl_en.val();
        self.r_tl.d.next = self.lvl_tl.val();
        self.r_th.d.next = self.lvl_th.val();
        self.r_s.d.next = self.lvl_s.val();
        self.r_zs.d.next = self.lvl_zs.val();
        self.r_nl.en.next = self.clr.val() | self.lvl_en.val();
        self.r_nl.d.next = self.lvl_nl.val();
        if self.clr.val() {
            self.r_nl.d.next = self.zero5.val();
        }
        self.lo.next = self.r_lo.q.val();
        self.hi.next = self.r_hi.q.val();
        self.tl.next = self.r_tl.q.val();
        self.th.next = self.r_th.q.val();
        self.s.next = self.r_s.q.val();
        self.zs.next = self.r_zs.q.val();
        self.nl.next = self.r_nl.q.val();
    }
}
