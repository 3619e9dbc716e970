//! Configuration table of the Titanus quantization unit: one bit width per
//! (layer, K/V), written through the `tw_*` port and read as a sequence's
//! start is accepted.
//! Paper: Titanus (GLSVLSI 2025) §4.4 (per-layer bit widths).
//! Spec: docs/spec.md §11.3 (table), §11.13 (write port), §11.14.5.

use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ConfigTable {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Write port: a (layer, K/V) entry's bit width.
    pub tw_valid: Signal<In, Bit>,
    pub tw_layer: Signal<In, Bits<8>>,
    pub tw_kv: Signal<In, Bit>,
    pub tw_bits: Signal<In, Bits<3>>,
    /// Write response, the cycle after the write.
    pub tw_done: Signal<Out, Bit>,
    pub tw_error: Signal<Out, Bits<2>>,
    /// Read port: the input item's layer and K/V.
    pub in_layer: Signal<In, Bits<8>>,
    pub in_kv: Signal<In, Bit>,
    /// The entry read (layer 0's when the layer is out of range).
    pub t_bits: Signal<Out, Bits<3>>,
    /// The layer is out of range.
    pub t_oob: Signal<Out, Bit>,
    // bit widths, K at [l], V at [layers + l]
    tab: Vec<Reg<Bits<3>>>,
    tw_d: Reg<Bit>,
    tw_e: Reg<Bits<2>>,
    layer_ok: Signal<Local, Bit>,
    bits_ok: Signal<Local, Bit>,
    t_layer: Signal<Local, Bits<8>>,
    hit: Signal<Local, Bit>,
    tb: Signal<Local, Bits<3>>,
    s3: Signal<Local, Bits<3>>,
    lidx: Vec<Constant<Bits<8>>>,
    k2: Vec<Constant<Bits<2>>>,
    k3: Vec<Constant<Bits<3>>>,
    layers9: Constant<Bits<9>>,
    zero8: Constant<Bits<8>>,
    _layers: usize,
}

impl ConfigTable {
    /// Every entry starts at 4 bits.
    pub fn new(layers: usize) -> Self {
        ConfigTable {
            clock: Default::default(),
            reset: Default::default(),
            tw_valid: Default::default(),
            tw_layer: Default::default(),
            tw_kv: Default::default(),
            tw_bits: Default::default(),
            tw_done: Default::default(),
            tw_error: Default::default(),
            in_layer: Default::default(),
            in_kv: Default::default(),
            t_bits: Default::default(),
            t_oob: Default::default(),
            tab: (0..2 * layers).map(|_| Reg::new(4u64.into())).collect(),
            tw_d: Reg::default(),
            tw_e: Reg::default(),
            layer_ok: Default::default(),
            bits_ok: Default::default(),
            t_layer: Default::default(),
            hit: Default::default(),
            tb: Default::default(),
            s3: Default::default(),
            lidx: (0..layers as u64).map(|v| Constant::new(v.into())).collect(),
            k2: (0..3u64).map(|v| Constant::new(v.into())).collect(),
            k3: [0u64, 2, 3, 4].into_iter().map(|v| Constant::new(v.into())).collect(),
            layers9: Constant::new((layers as u64).into()),
            zero8: Constant::new(0u64.into()),
            _layers: layers,
        }
    }
}

impl Logic for ConfigTable {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, tw_d, tw_e);
        self.tw_d.reset.next = self.reset.val();
        self.tw_e.reset.next = self.reset.val();
        self.layer_ok.next = bit_cast::<9, 8>(self.tw_layer.val()) < self.layers9.val();
        self.bits_ok.next = (self.tw_bits.val() == self.k3[1].val())
            | (self.tw_bits.val() == self.k3[2].val())
            | (self.tw_bits.val() == self.k3[3].val());
        self.tw_d.en.next = true;
        self.tw_e.en.next = true;
        self.tw_d.d.next = self.tw_valid.val();
        self.tw_e.d.next = self.k2[0].val();
        if !self.bits_ok.val() {
            self.tw_e.d.next = self.k2[2].val();
        }
        if !self.layer_ok.val() {
            self.tw_e.d.next = self.k2[1].val();
        }
        self.tw_done.next = self.tw_d.q.val();
        self.tw_error.next = self.tw_e.q.val();
        // the width of a starting sequence, looked up as its start is
        // accepted (the table as written at earlier edges; spec §11.13) and
        // carried with it: layer >= layers reads layer 0
        self.t_oob.next = bit_cast::<9, 8>(self.in_layer.val()) >= self.layers9.val();
        self.t_layer.next = self.in_layer.val();
        if bit_cast::<9, 8>(self.in_layer.val()) >= self.layers9.val() {
            self.t_layer.next = self.zero8.val();
        }
        self.tb.next = self.k3[0].val();
        for l in self._layers..(self._layers + 1) {
            for e in 0..self._layers {
                self.tab[e].clock.next = self.clock.val();
                self.tab[l + e].clock.next = self.clock.val();
                self.tab[e].reset.next = self.reset.val();
                self.tab[l + e].reset.next = self.reset.val();
                self.tab[e].en.next = self.tw_valid.val()
                    & self.layer_ok.val()
                    & self.bits_ok.val()
                    & !self.tw_kv.val()
                    & (self.tw_layer.val() == self.lidx[e].val());
                self.tab[l + e].en.next = self.tw_valid.val()
                    & self.layer_ok.val()
                    & self.bits_ok.val()
                    & self.tw_kv.val()
                    & (self.tw_layer.val() == self.lidx[e].val());
                self.tab[e].d.next = self.tw_bits.val();
                self.tab[l + e].d.next = self.tw_bits.val();
                self.hit.next = (self.t_layer.val() == self.lidx[e].val()) & !self.in_kv.val();
                self.s3.next = self.k3[0].val() - bit_cast::<3, 1>(self.hit.val().into());
                self.tb.next = self.tb.val() | (self.tab[e].q.val() & self.s3.val());
                self.hit.next = (self.t_layer.val() == self.lidx[e].val()) & self.in_kv.val();
                self.s3.next = self.k3[0].val() - bit_cast::<3, 1>(self.hit.val().into());
                self.tb.next = self.tb.val() | (self.tab[l + e].q.val() & self.s3.val());
            }
        }
        self.t_bits.next = self.tb.val();
    }
}
