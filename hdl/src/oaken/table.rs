//! Per-layer, per-K/V threshold table with a validating write port.
//! Paper: Oaken §4.3 (per-layer thresholds from offline profiling).
//! Spec: docs/spec.md §2.3 (legal sets, rejection, write data layout).
//!
//! A validated write waits one cycle in a write register and reaches its
//! entry at the next edge; a read of that entry meanwhile returns the
//! register. So reads see a write from the cycle after its strobe, as if it
//! were written at once, while the checks on the write port's inputs drive
//! a few registers instead of every entry's enable.

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

/// Write-port status codes (spec §2.13 `tw_err`).
pub const TW_OK: u64 = 0;
pub const TW_NONFINITE: u64 = 1;
pub const TW_ORDER: u64 = 2;
pub const TW_LAYER: u64 = 3;

#[derive(LogicBlock)]
pub struct ThresholdTable {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Write strobe: one whole set per cycle, always accepted.
    pub tw_valid: Signal<In, Bit>,
    pub tw_layer: Signal<In, Bits<8>>,
    /// 0 = K, 1 = V.
    pub tw_kv: Signal<In, Bit>,
    /// {hi_outer, hi_inner, lo_inner, lo_outer}.
    pub tw_data: Signal<In, Bits<64>>,
    /// High for one cycle after each write strobe.
    pub tw_done: Signal<Out, Bit>,
    /// With tw_done: why the write was rejected (0 = written).
    pub tw_err: Signal<Out, Bits<2>>,
    /// Read port, combinational.
    pub rd_layer: Signal<In, Bits<8>>,
    pub rd_kv: Signal<In, Bit>,
    /// The set of (rd_layer, rd_kv); layer 0's set when rd_layer is too large.
    pub rd_set: Signal<Out, Bits<64>>,
    /// rd_layer >= layers.
    pub rd_oob: Signal<Out, Bit>,
    /// A write is sampled this cycle to the entry being read (legal or not:
    /// `wr_valid` says so a cycle later).
    pub rd_hit_now: Signal<Out, Bit>,
    /// The write sampled last cycle, if legal (it reaches its entry at this
    /// edge): for a reader that registered `rd_set` at that same edge and
    /// must see the write (the quantizer's first beat, spec §2.13).
    pub wr_valid: Signal<Out, Bit>,
    pub wr_set: Signal<Out, Bits<64>>,
    entries: Vec<Reg<Bits<64>>>,
    idx: Vec<Constant<Bits<9>>>,
    done: Reg<Bit>,
    err: Reg<Bits<2>>,
    // the accepted write of the last cycle, not yet in its entry
    wp_v: Reg<Bit>,
    wp_addr: Reg<Bits<9>>,
    wp_data: Reg<Bits<64>>,
    // write-side checks
    f: Vec<Signal<Local, Bits<16>>>,
    k: Vec<Signal<Local, Bits<16>>>,
    nonfinite: Signal<Local, Bit>,
    ordered: Signal<Local, Bit>,
    layer_ok: Signal<Local, Bit>,
    canon: Signal<Local, Bits<64>>,
    /// Loop temporary: casts cannot name the loop index directly.
    ftmp: Signal<Local, Bits<16>>,
    waddr: Signal<Local, Bits<9>>,
    code: Signal<Local, Bits<2>>,
    // read side
    raddr: Signal<Local, Bits<9>>,
    hit: Signal<Local, Bit>,
    mask: Signal<Local, Bits<64>>,
    off: Vec<Constant<Bits<32>>>,
    sh: Vec<Constant<Bits<64>>>,
    layers9: Constant<Bits<9>>,
    one9: Constant<Bits<9>>,
    exp_mask: Constant<Bits<16>>,
    neg_zero: Constant<Bits<16>>,
    sign: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    zero64: Constant<Bits<64>>,
    c_ok: Constant<Bits<2>>,
    c_nonfinite: Constant<Bits<2>>,
    c_order: Constant<Bits<2>>,
    c_layer: Constant<Bits<2>>,
    _n: usize,
}

impl ThresholdTable {
    pub fn new(layers: usize) -> Self {
        assert!((1..=256).contains(&layers));
        let n = 2 * layers;
        ThresholdTable {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_data: Default::default(),
            tw_done: Default::default(),
            tw_err: Default::default(),
            rd_layer: Default::default(),
            rd_kv: Default::default(),
            rd_set: Default::default(),
            rd_oob: Default::default(),
            rd_hit_now: Default::default(),
            wr_valid: Default::default(),
            wr_set: Default::default(),
            entries: (0..n).map(|_| Reg::default()).collect(),
            idx: (0..n).map(|i| Constant::new((i as u64).into())).collect(),
            done: Reg::default(),
            err: Reg::default(),
            wp_v: Reg::default(),
            wp_addr: Reg::default(),
            wp_data: Reg::default(),
            f: (0..4).map(|_| Default::default()).collect(),
            k: (0..4).map(|_| Default::default()).collect(),
            nonfinite: Default::default(),
            ordered: Default::default(),
            layer_ok: Default::default(),
            canon: Default::default(),
            ftmp: Default::default(),
            waddr: Default::default(),
            code: Default::default(),
            raddr: Default::default(),
            hit: Default::default(),
            mask: Default::default(),
            off: (0..4).map(|i| Constant::new((16 * i as u64).into())).collect(),
            sh: (0..4).map(|i| Constant::new((16 * i as u64).into())).collect(),
            layers9: Constant::new((layers as u64).into()),
            one9: Constant::new(1u64.into()),
            exp_mask: Constant::new(0x7C00u64.into()),
            neg_zero: Constant::new(0x8000u64.into()),
            sign: Constant::new(0x8000u64.into()),
            zero16: Constant::new(0u64.into()),
            zero64: Constant::new(0u64.into()),
            c_ok: Constant::new(TW_OK.into()),
            c_nonfinite: Constant::new(TW_NONFINITE.into()),
            c_order: Constant::new(TW_ORDER.into()),
            c_layer: Constant::new(TW_LAYER.into()),
            _n: n,
        }
    }
}

impl Logic for ThresholdTable {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, done, err, wp_v, wp_addr, wp_data);
        self.done.reset.next = self.reset.val();
        self.err.reset.next = self.reset.val();
        self.wp_v.reset.next = self.reset.val();
        self.wp_addr.reset.next = self.reset.val();
        self.wp_data.reset.next = self.reset.val();
        self.done.en.next = true;
        self.err.en.next = true;

        // fields, with -0 stored as +0, and their order keys (spec §2.2.2)
        self.nonfinite.next = false;
        self.canon.next = self.zero64.val();
        for i in 0..4 {
            self.f[i].next = self.tw_data.val().get_bits::<16>(self.off[i].val().index());
            if (self.f[i].val() & self.exp_mask.val()) == self.exp_mask.val() {
                self.nonfinite.next = true;
            }
            if self.f[i].val() == self.neg_zero.val() {
                self.f[i].next = self.zero16.val();
            }
            if (self.f[i].val() & self.sign.val()) != self.zero16.val() {
                self.k[i].next = !self.f[i].val();
            } else {
                self.k[i].next = self.f[i].val() | self.sign.val();
            }
            self.ftmp.next = self.f[i].val();
            self.canon.next = self.canon.val() | (bit_cast::<64, 16>(self.ftmp.val()) << self.sh[i].val());
        }
        self.ordered.next = (self.k[0].val() <= self.k[1].val())
            & (self.k[1].val() <= self.k[2].val())
            & (self.k[2].val() <= self.k[3].val());
        self.layer_ok.next = bit_cast::<9, 8>(self.tw_layer.val()) < self.layers9.val();
        self.code.next = self.c_ok.val();
        if !self.ordered.val() {
            self.code.next = self.c_order.val();
        }
        if self.nonfinite.val() {
            self.code.next = self.c_nonfinite.val();
        }
        if !self.layer_ok.val() {
            self.code.next = self.c_layer.val();
        }
        self.waddr.next = (bit_cast::<9, 8>(self.tw_layer.val()) << self.one9.val())
            | bit_cast::<9, 1>(self.tw_kv.val().into());
        self.done.d.next = self.tw_valid.val();
        self.err.d.next = self.code.val();
        self.wp_v.en.next = true;
        self.wp_v.d.next = self.tw_valid.val() & (self.code.val() == self.c_ok.val());
        self.wp_addr.en.next = self.tw_valid.val();
        self.wp_addr.d.next = self.waddr.val();
        self.wp_data.en.next = self.tw_valid.val();
        self.wp_data.d.next = self.canon.val();
        self.tw_done.next = self.done.q.val();
        self.tw_err.next = self.err.q.val();

        // read port
        self.rd_oob.next = bit_cast::<9, 8>(self.rd_layer.val()) >= self.layers9.val();
        self.raddr.next = (bit_cast::<9, 8>(self.rd_layer.val()) << self.one9.val())
            | bit_cast::<9, 1>(self.rd_kv.val().into());
        if self.rd_oob.val() {
            self.raddr.next = bit_cast::<9, 1>(self.rd_kv.val().into());
        }
        self.rd_set.next = self.zero64.val();
        for e in 0..self._n {
            self.entries[e].clock.next = self.clock.val();
            self.entries[e].reset.next = self.reset.val();
            self.entries[e].en.next = self.wp_v.q.val() & (self.wp_addr.q.val() == self.idx[e].val());
            self.entries[e].d.next = self.wp_data.q.val();
            self.hit.next = self.raddr.val() == self.idx[e].val();
            self.mask.next = self.zero64.val() - bit_cast::<64, 1>(self.hit.val().into());
            self.rd_set.next = self.rd_set.val() | (self.entries[e].q.val() & self.mask.val());
        }
        if self.wp_v.q.val() & (self.wp_addr.q.val() == self.raddr.val()) {
            self.rd_set.next = self.wp_data.q.val();
        }
        self.rd_hit_now.next = self.tw_valid.val() & (self.waddr.val() == self.raddr.val());
        self.wr_valid.next = self.wp_v.q.val();
        self.wr_set.next = self.wp_data.q.val();
    }
}
