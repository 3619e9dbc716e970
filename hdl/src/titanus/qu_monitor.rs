//! Channel state and channel monitor of the Titanus quantization unit: the
//! per-channel registers (MMF range, then the current level), the read of
//! one row of them, the MMF update, and the monitor that finds the lowest
//! lane whose kept value needs a new level (HierQuant).
//! Paper: Titanus (GLSVLSI 2025) §3.2, Figure 2 (HierQuant), §4.4 and
//! Figure 7 (MMF, channel monitor).
//! Spec: docs/spec.md §11.5.1 (MMF), §11.6.1 (levels), §11.14.5.

use super::qu_channel::QuChannel;
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ChannelMonitor {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The channel row read: M's beat, the replayed beat or QUANT's channel.
    pub rsel: Signal<In, Bits<10>>,
    /// QUANT's channel index (its lane is the low bits).
    pub qc: Signal<In, Bits<10>>,
    /// M's beat row, elements and kept bits.
    pub m_row: Signal<In, Bits<10>>,
    pub m_x: Vec<Signal<In, Bits<8>>>,
    pub m_k: Vec<Signal<In, Bit>>,
    /// A sequence starts: every channel's MMF and level count clear.
    pub clr: Signal<In, Bit>,
    /// M's kept values update their channels' MMF ranges.
    pub do_mmf: Signal<In, Bit>,
    /// Channel `wc` opens a level: range, level count before, NZQ outputs.
    pub do_lvl: Signal<In, Bit>,
    pub wc: Signal<In, Bits<10>>,
    pub olo: Signal<In, Bits<8>>,
    pub ohi: Signal<In, Bits<8>>,
    pub onl: Signal<In, Bits<5>>,
    pub lvl_tl: Signal<In, Bits<8>>,
    pub lvl_th: Signal<In, Bits<8>>,
    pub lvl_s: Signal<In, Bits<16>>,
    pub lvl_zs: Signal<In, Bits<24>>,
    /// The row read's current levels, per lane, for the coders.
    pub tl: Vec<Signal<Out, Bits<8>>>,
    pub th: Vec<Signal<Out, Bits<8>>>,
    pub s: Vec<Signal<Out, Bits<16>>>,
    pub zs: Vec<Signal<Out, Bits<24>>>,
    /// Some lane of M needs a level (combinational, for a register).
    pub need_any: Signal<Out, Bit>,
    /// From last cycle's registered decision: the lowest lane needing a
    /// level, its widened range and its level count.
    pub pick_lo: Signal<Out, Bits<8>>,
    pub pick_hi: Signal<Out, Bits<8>>,
    pub pick_nl: Signal<Out, Bits<5>>,
    pub pick_lane: Signal<Out, Bits<10>>,
    /// QUANT's channel: its MMF range.
    pub q_lo: Signal<Out, Bits<8>>,
    pub q_hi: Signal<Out, Bits<8>>,
    chans: Vec<QuChannel>,
    hit: Signal<Local, Bit>,
    s5: Signal<Local, Bits<5>>,
    s8: Signal<Local, Bits<8>>,
    s10: Signal<Local, Bits<10>>,
    s16: Signal<Local, Bits<16>>,
    s24: Signal<Local, Bits<24>>,
    rd_lo: Vec<Signal<Local, Bits<8>>>,
    rd_hi: Vec<Signal<Local, Bits<8>>>,
    rd_tl: Vec<Signal<Local, Bits<8>>>,
    rd_th: Vec<Signal<Local, Bits<8>>>,
    rd_s: Vec<Signal<Local, Bits<16>>>,
    rd_zs: Vec<Signal<Local, Bits<24>>>,
    rd_nl: Vec<Signal<Local, Bits<5>>>,
    mn: Vec<Signal<Local, Bits<8>>>,
    mx: Vec<Signal<Local, Bits<8>>>,
    need: Vec<Signal<Local, Bit>>,
    found: Signal<Local, Bit>,
    wlo: Vec<Signal<Local, Bits<8>>>,
    whi: Vec<Signal<Local, Bits<8>>>,
    ohb: Signal<Local, Bit>,
    need_r: Vec<Reg<Bit>>,
    wlo_r: Vec<Reg<Bits<8>>>,
    whi_r: Vec<Reg<Bits<8>>>,
    nl_r: Vec<Reg<Bits<5>>>,
    any: Signal<Local, Bit>,
    pk_lo: Signal<Local, Bits<8>>,
    pk_hi: Signal<Local, Bits<8>>,
    pk_nl: Signal<Local, Bits<5>>,
    pk_lane: Signal<Local, Bits<10>>,
    qlane: Signal<Local, Bits<10>>,
    ql_lo: Signal<Local, Bits<8>>,
    ql_hi: Signal<Local, Bits<8>>,
    ridx: Vec<Constant<Bits<10>>>,
    cidx: Vec<Constant<Bits<10>>>,
    lix: Vec<Constant<Bits<10>>>,
    lmask: Constant<Bits<10>>,
    maxl: Constant<Bits<5>>,
    flip: Constant<Bits<8>>,
    one5: Constant<Bits<5>>,
    zero5: Constant<Bits<5>>,
    zero8: Constant<Bits<8>>,
    zero10: Constant<Bits<10>>,
    zero16: Constant<Bits<16>>,
    zero24: Constant<Bits<24>>,
    _n: usize,
    _b: usize,
}




impl ChannelMonitor {
    /// `lanes` lanes, `channels` channels, at most `max_levels` levels each.
    pub fn new(lanes: usize, channels: usize, max_levels: usize) -> Self {
        let (n, b) = (lanes, channels / lanes);
        ChannelMonitor {
            clock: Default::default(),
            reset: Default::default(),
            rsel: Default::default(),
            qc: Default::default(),
            m_row: Default::default(),
            m_x: sigs(n),
            m_k: sigs(n),
            clr: Default::default(),
            do_mmf: Default::default(),
            do_lvl: Default::default(),
            wc: Default::default(),
            olo: Default::default(),
            ohi: Default::default(),
            onl: Default::default(),
            lvl_tl: Default::default(),
            lvl_th: Default::default(),
            lvl_s: Default::default(),
            lvl_zs: Default::default(),
            tl: sigs(n),
            th: sigs(n),
            s: sigs(n),
            zs: sigs(n),
            need_any: Default::default(),
            pick_lo: Default::default(),
            pick_hi: Default::default(),
            pick_nl: Default::default(),
            pick_lane: Default::default(),
            q_lo: Default::default(),
            q_hi: Default::default(),
            chans: (0..channels).map(|_| QuChannel::default()).collect(),
            hit: Default::default(),
            s5: Default::default(),
            s8: Default::default(),
            s10: Default::default(),
            s16: Default::default(),
            s24: Default::default(),
            rd_lo: sigs(n),
            rd_hi: sigs(n),
            rd_tl: sigs(n),
            rd_th: sigs(n),
            rd_s: sigs(n),
            rd_zs: sigs(n),
            rd_nl: sigs(n),
            mn: sigs(n),
            mx: sigs(n),
            need: sigs(n),
            found: Default::default(),
            wlo: sigs(n),
            whi: sigs(n),
            ohb: Default::default(),
            need_r: regs(n),
            wlo_r: regs(n),
            whi_r: regs(n),
            nl_r: regs(n),
            any: Default::default(),
            pk_lo: Default::default(),
            pk_hi: Default::default(),
            pk_nl: Default::default(),
            pk_lane: Default::default(),
            qlane: Default::default(),
            ql_lo: Default::default(),
            ql_hi: Default::default(),
            ridx: consts(0..b as u64),
            cidx: consts(0..channels as u64),
            lix: consts(0..n as u64),
            lmask: Constant::new(((n - 1) as u64).into()),
            maxl: Constant::new((max_levels as u64).into()),
            flip: Constant::new(0x80u64.into()),
            one5: Constant::new(1u64.into()),
            zero5: Constant::new(0u64.into()),
            zero8: Constant::new(0u64.into()),
            zero10: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            zero24: Constant::new(0u64.into()),
            _n: n,
            _b: b,
        }
    }
}

impl Logic for ChannelMonitor {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- channel row read ----
        for p in 0..self._n {
            self.rd_lo[p].next = self.zero8.val();
            self.rd_hi[p].next = self.zero8.val();
            self.rd_tl[p].next = self.zero8.val();
            self.rd_th[p].next = self.zero8.val();
            self.rd_s[p].next = self.zero16.val();
            self.rd_zs[p].next = self.zero24.val();
            self.rd_nl[p].next = self.zero5.val();
        }
        for n in self._n..(self._n + 1) {
            for r in 0..self._b {
                self.hit.next = self.rsel.val() == self.ridx[r].val();
                self.s5.next = self.zero5.val() - bit_cast::<5, 1>(self.hit.val().into());
                self.s8.next = self.zero8.val() - bit_cast::<8, 1>(self.hit.val().into());
                self.s16.next = self.zero16.val() - bit_cast::<16, 1>(self.hit.val().into());
                self.s24.next = self.zero24.val() - bit_cast::<24, 1>(self.hit.val().into());
                for p in 0..self._n {
                    self.rd_lo[p].next = self.rd_lo[p].val() | (self.chans[r * n + p].lo.val() & self.s8.val());
                    self.rd_hi[p].next = self.rd_hi[p].val() | (self.chans[r * n + p].hi.val() & self.s8.val());
                    self.rd_tl[p].next = self.rd_tl[p].val() | (self.chans[r * n + p].tl.val() & self.s8.val());
                    self.rd_th[p].next = self.rd_th[p].val() | (self.chans[r * n + p].th.val() & self.s8.val());
                    self.rd_s[p].next = self.rd_s[p].val() | (self.chans[r * n + p].s.val() & self.s16.val());
                    self.rd_zs[p].next = self.rd_zs[p].val() | (self.chans[r * n + p].zs.val() & self.s24.val());
                    self.rd_nl[p].next = self.rd_nl[p].val() | (self.chans[r * n + p].nl.val() & self.s5.val());
                }
            }
        }

        // ---- MMF and channel monitor (spec §11.5.1, §11.6.1) ----
        self.found.next = false;
        self.any.next = false;
        self.pk_lo.next = self.zero8.val();
        self.pk_hi.next = self.zero8.val();
        self.pk_nl.next = self.zero5.val();
        self.pk_lane.next = self.zero10.val();
        self.qlane.next = self.qc.val() & self.lmask.val();
        self.ql_lo.next = self.zero8.val();
        self.ql_hi.next = self.zero8.val();
        for p in 0..self._n {
            self.mn[p].next = self.rd_lo[p].val();
            if (self.m_x[p].val() ^ self.flip.val()) < (self.rd_lo[p].val() ^ self.flip.val()) {
                self.mn[p].next = self.m_x[p].val();
            }
            self.mx[p].next = self.rd_hi[p].val();
            if (self.m_x[p].val() ^ self.flip.val()) > (self.rd_hi[p].val() ^ self.flip.val()) {
                self.mx[p].next = self.m_x[p].val();
            }
            // a kept value needs a level: the channel has none, or the value
            // is outside the current one's tolerance range and the limit allows
            self.need[p].next = self.m_k[p].val()
                & ((self.rd_nl[p].val() == self.zero5.val())
                    | ((((self.m_x[p].val() ^ self.flip.val()) < (self.rd_tl[p].val() ^ self.flip.val()))
                        | ((self.m_x[p].val() ^ self.flip.val()) > (self.rd_th[p].val() ^ self.flip.val())))
                        & (self.rd_nl[p].val() < self.maxl.val())));
            // the widened range if this lane opens a level (§11.6.1)
            self.wlo[p].next = self.m_x[p].val();
            self.whi[p].next = self.m_x[p].val();
            if self.rd_nl[p].val() != self.zero5.val() {
                self.wlo[p].next = self.mn[p].val();
                self.whi[p].next = self.mx[p].val();
            }
            // registered per lane; the pick below reads the registers
            self.need_r[p].clock.next = self.clock.val();
            self.wlo_r[p].clock.next = self.clock.val();
            self.whi_r[p].clock.next = self.clock.val();
            self.nl_r[p].clock.next = self.clock.val();
            self.need_r[p].reset.next = self.reset.val();
            self.wlo_r[p].reset.next = self.reset.val();
            self.whi_r[p].reset.next = self.reset.val();
            self.nl_r[p].reset.next = self.reset.val();
            self.need_r[p].en.next = true;
            self.wlo_r[p].en.next = true;
            self.whi_r[p].en.next = true;
            self.nl_r[p].en.next = true;
            self.need_r[p].d.next = self.need[p].val();
            self.wlo_r[p].d.next = self.wlo[p].val();
            self.whi_r[p].d.next = self.whi[p].val();
            self.nl_r[p].d.next = self.rd_nl[p].val();
            self.any.next = self.any.val() | self.need[p].val();
            // one-hot pick of the lowest lane that needs a level
            self.ohb.next = self.need_r[p].q.val() & !self.found.val();
            self.found.next = self.found.val() | self.need_r[p].q.val();
            self.s5.next = self.zero5.val() - bit_cast::<5, 1>(self.ohb.val().into());
            self.s8.next = self.zero8.val() - bit_cast::<8, 1>(self.ohb.val().into());
            self.s10.next = self.zero10.val() - bit_cast::<10, 1>(self.ohb.val().into());
            self.pk_lo.next = self.pk_lo.val() | (self.wlo_r[p].q.val() & self.s8.val());
            self.pk_hi.next = self.pk_hi.val() | (self.whi_r[p].q.val() & self.s8.val());
            self.pk_nl.next = self.pk_nl.val() | (self.nl_r[p].q.val() & self.s5.val());
            self.pk_lane.next = self.pk_lane.val() | (self.lix[p].val() & self.s10.val());
            if self.qlane.val() == self.lix[p].val() {
                self.ql_lo.next = self.rd_lo[p].val();
                self.ql_hi.next = self.rd_hi[p].val();
            }
        }

        // channel registers
        for n in self._n..(self._n + 1) {
            for r in 0..self._b {
                for p in 0..self._n {
                    self.chans[r * n + p].clock.next = self.clock.val();
                    self.chans[r * n + p].reset.next = self.reset.val();
                    self.chans[r * n + p].clr.next = self.clr.val();
                    self.chans[r * n + p].mmf_en.next =
                        self.do_mmf.val() & (self.m_row.val() == self.ridx[r].val()) & self.m_k[p].val();
                    self.chans[r * n + p].mmf_lo.next = self.mn[p].val();
                    self.chans[r * n + p].mmf_hi.next = self.mx[p].val();
                    self.chans[r * n + p].lvl_en.next =
                        self.do_lvl.val() & (self.wc.val() == self.cidx[r * n + p].val());
                    self.chans[r * n + p].lvl_lo.next = self.olo.val();
                    self.chans[r * n + p].lvl_hi.next = self.ohi.val();
                    self.chans[r * n + p].lvl_tl.next = self.lvl_tl.val();
                    self.chans[r * n + p].lvl_th.next = self.lvl_th.val();
                    self.chans[r * n + p].lvl_s.next = self.lvl_s.val();
                    self.chans[r * n + p].lvl_zs.next = self.lvl_zs.val();
                    self.chans[r * n + p].lvl_nl.next = self.onl.val() + self.one5.val();
                }
            }
        }

        for p in 0..self._n {
            self.tl[p].next = self.rd_tl[p].val();
            self.th[p].next = self.rd_th[p].val();
            self.s[p].next = self.rd_s[p].val();
            self.zs[p].next = self.rd_zs[p].val();
        }
        self.need_any.next = self.any.val();
        self.pick_lo.next = self.pk_lo.val();
        self.pick_hi.next = self.pk_hi.val();
        self.pick_nl.next = self.pk_nl.val();
        self.pick_lane.next = self.pk_lane.val();
        self.q_lo.next = self.ql_lo.val();
        self.q_hi.next = self.ql_hi.val();
    }
}
