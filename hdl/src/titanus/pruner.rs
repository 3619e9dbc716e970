//! Titanus pruning unit (`titanus-pruner`).
//! Paper: Titanus (GLSVLSI 2025) §3.1 (magnitude pruning), §4.3 and Figure 6
//! (K and V comparator banks, mask generator, non-zero extraction).
//! Spec: docs/spec.md §11.3 (configuration table), §11.4 (pruning),
//! §11.13 (ports), §11.14 (microarchitecture).
//!
//! Skid register -> S1 (beat with its looked-up thresholds) -> comparators ->
//! two zero-remove shifters (K, V) -> output. The skid keeps `in_ready` a
//! register; everything after it is a stall-all pipeline advancing when the
//! output is empty or taken.

use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use crate::prim::zero_remove::ZeroRemove;
use rust_hdl::prelude::*;

/// `tw_error` codes (spec §11.3).
pub const TW_OK: u64 = 0;
pub const TW_LAYER: u64 = 1;
pub const TW_BITS: u64 = 2;

#[derive(LogicBlock)]
pub struct TitanusPruner {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every threshold 0, pipeline empty
    pub reset: Signal<In, Bit>,
    /// configuration-table write strobe, always accepted
    pub tw_valid: Signal<In, Bit>,
    /// layer of the written entry
    pub tw_layer: Signal<In, Bits<8>>,
    /// 0 = K, 1 = V
    pub tw_kv: Signal<In, Bit>,
    /// pruning threshold (magnitudes below it are pruned)
    pub tw_threshold: Signal<In, Bits<8>>,
    /// bit width, checked (2, 3 or 4) but kept by the QU and DQU only
    pub tw_bits: Signal<In, Bits<3>>,
    /// one cycle after each write strobe
    pub tw_done: Signal<Out, Bit>,
    /// with tw_done: 0 written, 1 layer out of range, 2 bad bit width
    pub tw_error: Signal<Out, Bits<2>>,
    /// input beat valid
    pub in_valid: Signal<In, Bit>,
    /// input beat accepted when in_valid and in_ready (a register)
    pub in_ready: Signal<Out, Bit>,
    /// layer of the beat's token; thresholds as written before the accepting edge
    pub in_layer: Signal<In, Bits<8>>,
    /// K elements of the beat (INT8), lane i at [8i+7:8i]
    pub in_k: Vec<Signal<In, Bits<8>>>,
    /// V elements of the beat (INT8), lane i at [8i+7:8i]
    pub in_v: Vec<Signal<In, Bits<8>>>,
    /// last beat of a token
    pub in_last: Signal<In, Bit>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// K index bits of the beat (1 = kept)
    pub out_k_mask: Vec<Signal<Out, Bit>>,
    /// V index bits of the beat (1 = kept)
    pub out_v_mask: Vec<Signal<Out, Bit>>,
    /// kept K elements compacted from lane 0, other lanes 0
    pub out_k_data: Vec<Signal<Out, Bits<8>>>,
    /// kept V elements compacted from lane 0, other lanes 0
    pub out_v_data: Vec<Signal<Out, Bits<8>>>,
    /// kept K lanes in the beat
    pub out_k_count: Signal<Out, Bits<8>>,
    /// kept V lanes in the beat
    pub out_v_count: Signal<Out, Bits<8>>,
    /// last beat of a token
    pub out_last: Signal<Out, Bit>,
    /// the beat's layer was >= layers (layer 0's thresholds used)
    pub out_layer_oob: Signal<Out, Bit>,
    // configuration table: thresholds only (the bit widths belong to QU/DQU)
    tk: Vec<Reg<Bits<8>>>,
    tv: Vec<Reg<Bits<8>>>,
    lidx: Vec<Constant<Bits<8>>>,
    done: Reg<Bit>,
    err: Reg<Bits<2>>,
    layer_ok: Signal<Local, Bit>,
    bits_ok: Signal<Local, Bit>,
    // lookup of in_layer
    oob: Signal<Local, Bit>,
    raddr: Signal<Local, Bits<8>>,
    hit: Signal<Local, Bit>,
    sel: Signal<Local, Bits<8>>,
    thr_k: Signal<Local, Bits<8>>,
    thr_v: Signal<Local, Bits<8>>,
    // handshake
    acc: Signal<Local, Bit>,
    en: Signal<Local, Bit>,
    // skid and S1
    sk_valid: Reg<Bit>,
    sk_k: Vec<Reg<Bits<8>>>,
    sk_v: Vec<Reg<Bits<8>>>,
    sk_tk: Reg<Bits<8>>,
    sk_tv: Reg<Bits<8>>,
    sk_oob: Reg<Bit>,
    sk_last: Reg<Bit>,
    s1_valid: Reg<Bit>,
    s1_k: Vec<Reg<Bits<8>>>,
    s1_v: Vec<Reg<Bits<8>>>,
    s1_tk: Reg<Bits<8>>,
    s1_tv: Reg<Bits<8>>,
    s1_oob: Reg<Bit>,
    s1_last: Reg<Bit>,
    // comparators
    mag: Signal<Local, Bits<8>>,
    keep_k: Vec<Signal<Local, Bit>>,
    keep_v: Vec<Signal<Local, Bit>>,
    zr_k: ZeroRemove<8>,
    zr_v: ZeroRemove<8>,
    // side data beside the shifters: K mask, V mask, last, oob per stage
    dl: Vec<Reg<Bit>>,
    layers9: Constant<Bits<9>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    two3: Constant<Bits<3>>,
    three3: Constant<Bits<3>>,
    four3: Constant<Bits<3>>,
    c_ok: Constant<Bits<2>>,
    c_layer: Constant<Bits<2>>,
    c_bits: Constant<Bits<2>>,
    _n: usize,
    _layers: usize,
    _lat: usize,
    /// Side bits per delay stage: 2 * lanes + 2; all stages.
    _w: usize,
    _lw: usize,
}


impl TitanusPruner {
    /// `lanes` a power of two in 1..=64, `layers` in 1..=256, `pipeline` in
    /// 1..=7 (the shifters' register spacing, spec §3).
    pub fn new(lanes: usize, layers: usize, pipeline: usize) -> Self {
        assert!(
            lanes.is_power_of_two()
                && lanes <= 64
                && (1..=256).contains(&layers)
                && (1..=7).contains(&pipeline)
        );
        let n = lanes;
        let lat = ZeroRemove::<8>::latency(lanes, pipeline);
        let w = 2 * n + 2;
        TitanusPruner {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_threshold: Default::default(),
            tw_bits: Default::default(),
            tw_done: Default::default(),
            tw_error: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_layer: Default::default(),
            in_k: sigs(n),
            in_v: sigs(n),
            in_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_k_mask: sigs(n),
            out_v_mask: sigs(n),
            out_k_data: sigs(n),
            out_v_data: sigs(n),
            out_k_count: Default::default(),
            out_v_count: Default::default(),
            out_last: Default::default(),
            out_layer_oob: Default::default(),
            tk: regs::<Bits<8>>(layers),
            tv: regs::<Bits<8>>(layers),
            lidx: (0..layers).map(|i| Constant::new((i as u64).into())).collect(),
            done: Reg::default(),
            err: Reg::default(),
            layer_ok: Default::default(),
            bits_ok: Default::default(),
            oob: Default::default(),
            raddr: Default::default(),
            hit: Default::default(),
            sel: Default::default(),
            thr_k: Default::default(),
            thr_v: Default::default(),
            acc: Default::default(),
            en: Default::default(),
            sk_valid: Reg::default(),
            sk_k: regs::<Bits<8>>(n),
            sk_v: regs::<Bits<8>>(n),
            sk_tk: Reg::default(),
            sk_tv: Reg::default(),
            sk_oob: Reg::default(),
            sk_last: Reg::default(),
            s1_valid: Reg::default(),
            s1_k: regs::<Bits<8>>(n),
            s1_v: regs::<Bits<8>>(n),
            s1_tk: Reg::default(),
            s1_tv: Reg::default(),
            s1_oob: Reg::default(),
            s1_last: Reg::default(),
            mag: Default::default(),
            keep_k: sigs(n),
            keep_v: sigs(n),
            zr_k: ZeroRemove::new(lanes, pipeline),
            zr_v: ZeroRemove::new(lanes, pipeline),
            dl: (0..lat * w).map(|_| Reg::default()).collect(),
            layers9: Constant::new((layers as u64).into()),
            zero8: Constant::new(0u64.into()),
            one8: Constant::new(1u64.into()),
            two3: Constant::new(2u64.into()),
            three3: Constant::new(3u64.into()),
            four3: Constant::new(4u64.into()),
            c_ok: Constant::new(TW_OK.into()),
            c_layer: Constant::new(TW_LAYER.into()),
            c_bits: Constant::new(TW_BITS.into()),
            _n: n,
            _layers: layers,
            _lat: lat,
            _w: w,
            _lw: lat * w,
        }
    }

    /// Cycles from the edge that accepts a beat (skid empty) to the edge
    /// after which it is shown, with the output ready.
    pub fn latency(lanes: usize, pipeline: usize) -> usize {
        1 + ZeroRemove::<8>::latency(lanes, pipeline)
    }
}

impl Logic for TitanusPruner {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, done, err, sk_valid, sk_tk, sk_tv, sk_oob, sk_last, s1_valid, s1_tk, s1_tv, s1_oob,
            s1_last, zr_k, zr_v
        );
        self.done.reset.next = self.reset.val();
        self.err.reset.next = self.reset.val();
        self.done.en.next = true;
        self.err.en.next = true;

        // table write (spec §11.3): layer checked first, then the bit width
        self.layer_ok.next = bit_cast::<9, 8>(self.tw_layer.val()) < self.layers9.val();
        self.bits_ok.next = (self.tw_bits.val() == self.two3.val())
            | (self.tw_bits.val() == self.three3.val())
            | (self.tw_bits.val() == self.four3.val());
        self.err.d.next = self.c_ok.val();
        if !self.bits_ok.val() {
            self.err.d.next = self.c_bits.val();
        }
        if !self.layer_ok.val() {
            self.err.d.next = self.c_layer.val();
        }
        self.done.d.next = self.tw_valid.val();
        self.tw_done.next = self.done.q.val();
        self.tw_error.next = self.err.q.val();

        // lookup of the offered beat's layer; out of range reads layer 0
        self.oob.next = bit_cast::<9, 8>(self.in_layer.val()) >= self.layers9.val();
        self.raddr.next = self.in_layer.val();
        if self.oob.val() {
            self.raddr.next = self.zero8.val();
        }
        self.thr_k.next = self.zero8.val();
        self.thr_v.next = self.zero8.val();
        for e in 0..self._layers {
            self.tk[e].clock.next = self.clock.val();
            self.tv[e].clock.next = self.clock.val();
            self.tk[e].reset.next = self.reset.val();
            self.tv[e].reset.next = self.reset.val();
            self.tk[e].en.next = self.tw_valid.val()
                & self.layer_ok.val()
                & self.bits_ok.val()
                & !self.tw_kv.val()
                & (self.tw_layer.val() == self.lidx[e].val());
            self.tv[e].en.next = self.tw_valid.val()
                & self.layer_ok.val()
                & self.bits_ok.val()
                & self.tw_kv.val()
                & (self.tw_layer.val() == self.lidx[e].val());
            self.tk[e].d.next = self.tw_threshold.val();
            self.tv[e].d.next = self.tw_threshold.val();
            self.hit.next = self.raddr.val() == self.lidx[e].val();
            self.sel.next = self.zero8.val() - bit_cast::<8, 1>(self.hit.val().into());
            self.thr_k.next = self.thr_k.val() | (self.tk[e].q.val() & self.sel.val());
            self.thr_v.next = self.thr_v.val() | (self.tv[e].q.val() & self.sel.val());
        }

        // handshake: in_ready is the skid register; the rest stalls as a whole
        self.in_ready.next = !self.sk_valid.q.val();
        self.acc.next = self.in_valid.val() & !self.sk_valid.q.val();
        self.en.next = !(self.zr_k.out_valid.val() & self.zr_v.out_valid.val()) | self.out_ready.val();

        self.sk_valid.reset.next = self.reset.val();
        self.sk_valid.en.next = true;
        self.sk_valid.d.next = !self.en.val() & (self.sk_valid.q.val() | self.acc.val());
        self.sk_tk.reset.next = self.reset.val();
        self.sk_tv.reset.next = self.reset.val();
        self.sk_oob.reset.next = self.reset.val();
        self.sk_last.reset.next = self.reset.val();
        self.sk_tk.en.next = self.acc.val() & !self.en.val();
        self.sk_tv.en.next = self.acc.val() & !self.en.val();
        self.sk_oob.en.next = self.acc.val() & !self.en.val();
        self.sk_last.en.next = self.acc.val() & !self.en.val();
        self.sk_tk.d.next = self.thr_k.val();
        self.sk_tv.d.next = self.thr_v.val();
        self.sk_oob.d.next = self.oob.val();
        self.sk_last.d.next = self.in_last.val();

        // S1 takes the skid's beat if it holds one, else the input's
        self.s1_valid.reset.next = self.reset.val();
        self.s1_tk.reset.next = self.reset.val();
        self.s1_tv.reset.next = self.reset.val();
        self.s1_oob.reset.next = self.reset.val();
        self.s1_last.reset.next = self.reset.val();
        self.s1_valid.en.next = self.en.val();
        self.s1_tk.en.next = self.en.val();
        self.s1_tv.en.next = self.en.val();
        self.s1_oob.en.next = self.en.val();
        self.s1_last.en.next = self.en.val();
        self.s1_valid.d.next = self.sk_valid.q.val() | self.acc.val();
        if self.sk_valid.q.val() {
            self.s1_tk.d.next = self.sk_tk.q.val();
            self.s1_tv.d.next = self.sk_tv.q.val();
            self.s1_oob.d.next = self.sk_oob.q.val();
            self.s1_last.d.next = self.sk_last.q.val();
        } else {
            self.s1_tk.d.next = self.thr_k.val();
            self.s1_tv.d.next = self.thr_v.val();
            self.s1_oob.d.next = self.oob.val();
            self.s1_last.d.next = self.in_last.val();
        }
        for p in 0..self._n {
            self.sk_k[p].clock.next = self.clock.val();
            self.sk_v[p].clock.next = self.clock.val();
            self.s1_k[p].clock.next = self.clock.val();
            self.s1_v[p].clock.next = self.clock.val();
            self.sk_k[p].reset.next = self.reset.val();
            self.sk_v[p].reset.next = self.reset.val();
            self.s1_k[p].reset.next = self.reset.val();
            self.s1_v[p].reset.next = self.reset.val();
            self.sk_k[p].en.next = self.acc.val() & !self.en.val();
            self.sk_v[p].en.next = self.acc.val() & !self.en.val();
            self.s1_k[p].en.next = self.en.val();
            self.s1_v[p].en.next = self.en.val();
            self.sk_k[p].d.next = self.in_k[p].val();
            self.sk_v[p].d.next = self.in_v[p].val();
            if self.sk_valid.q.val() {
                self.s1_k[p].d.next = self.sk_k[p].q.val();
                self.s1_v[p].d.next = self.sk_v[p].q.val();
            } else {
                self.s1_k[p].d.next = self.in_k[p].val();
                self.s1_v[p].d.next = self.in_v[p].val();
            }
        }

        // comparators (spec §11.4): kept iff x != 0 and |x| >= T, |-128| = 128
        for p in 0..self._n {
            self.mag.next = self.s1_k[p].q.val();
            if self.s1_k[p].q.val().get_bit(7) {
                self.mag.next = !self.s1_k[p].q.val() + self.one8.val();
            }
            self.keep_k[p].next =
                (self.s1_k[p].q.val() != self.zero8.val()) & (self.mag.val() >= self.s1_tk.q.val());
            self.mag.next = self.s1_v[p].q.val();
            if self.s1_v[p].q.val().get_bit(7) {
                self.mag.next = !self.s1_v[p].q.val() + self.one8.val();
            }
            self.keep_v[p].next =
                (self.s1_v[p].q.val() != self.zero8.val()) & (self.mag.val() >= self.s1_tv.q.val());
        }

        self.zr_k.reset.next = self.reset.val();
        self.zr_v.reset.next = self.reset.val();
        self.zr_k.en.next = self.en.val();
        self.zr_v.en.next = self.en.val();
        self.zr_k.in_valid.next = self.s1_valid.q.val();
        self.zr_v.in_valid.next = self.s1_valid.q.val();
        for p in 0..self._n {
            self.zr_k.data[p].next = self.s1_k[p].q.val();
            self.zr_v.data[p].next = self.s1_v[p].q.val();
            self.zr_k.keep[p].next = self.keep_k[p].val();
            self.zr_v.keep[p].next = self.keep_v[p].val();
            self.out_k_data[p].next = self.zr_k.out[p].val();
            self.out_v_data[p].next = self.zr_v.out[p].val();
        }
        self.out_valid.next = self.zr_k.out_valid.val() & self.zr_v.out_valid.val();
        self.out_k_count.next = self.zr_k.count.val();
        self.out_v_count.next = self.zr_v.count.val();

        // side delay line, as long as the shifters
        for n in self._n..(self._n + 1) {
            for w in self._w..(self._w + 1) {
                for i in 0..self._lw {
                    self.dl[i].clock.next = self.clock.val();
                    self.dl[i].reset.next = self.reset.val();
                    self.dl[i].en.next = self.en.val();
                }
                for p in 0..self._n {
                    self.dl[p].d.next = self.keep_k[p].val();
                    self.dl[n + p].d.next = self.keep_v[p].val();
                }
                self.dl[2 * n].d.next = self.s1_last.q.val();
                self.dl[2 * n + 1].d.next = self.s1_oob.q.val();
                for i in self._w..self._lw {
                    self.dl[i].d.next = self.dl[i - w].q.val();
                }
                for l in self._lat..(self._lat + 1) {
                    for p in 0..self._n {
                        self.out_k_mask[p].next = self.dl[(l - 1) * w + p].q.val();
                        self.out_v_mask[p].next = self.dl[(l - 1) * w + n + p].q.val();
                    }
                    self.out_last.next = self.dl[(l - 1) * w + 2 * n].q.val();
                    self.out_layer_oob.next = self.dl[(l - 1) * w + 2 * n + 1].q.val();
                }
            }
        }
    }
}
