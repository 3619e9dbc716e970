//! Zero-insert shifter: expands a compacted N-lane vector onto the set lanes
//! of a mask, the inverse of the zero-remove shifter (spec §3.1). Paper:
//! Oaken §5.2 (dequantization engine).
//!
//! With p_0 < p_1 < ... the set mask bits, element j (in lane j) goes to lane
//! p_j, moving up by z(p_j), the number of clear mask bits below p_j. The
//! data network is the zero-remove network (`zero_remove.rs`) run backwards:
//! data stage s = log2(N)-1 down to 0 moves an element up by 2^s when bit s
//! of its shift is set, most significant bit first. Its lane selects are the
//! lane states of a zero-remove network run on the mask alone (no data): a
//! lane that holds an element before remove stage s receives that element in
//! insert stage s, from 2^s lanes below if the remove stage moves it, else
//! from its own lane; every other lane becomes 0. So the mask goes through a
//! prefix count and log2(N)-1 remove stages ("control stages"); the prefix
//! count and each control stage push one 2-bit select {up, hold} per lane
//! onto a per-lane select word. The data then go through log2(N) insert
//! stages ("data stages"), each a 2:1 multiplexer per lane that pops its
//! select. Input lanes j >= popcount(mask) are never selected. Pipeline
//! registers count the 2*log2(N)-1 stages in that order (spec §3.1). From 32
//! lanes on, a pipelined shifter also registers the prefix count after its
//! third level, with the beat beside it, as zero-remove does.
//!
//! As in `zero_remove.rs`, stage code is stamped out by a macro with literal
//! strides, because rust-hdl indices may only use loop variables; a stage
//! past log2(N) runs a loop of zero iterations and generates nothing.

use super::reg::Reg;
use super::zero_remove::{split, SPLIT_AFTER};
use rust_hdl::prelude::*;

pub const MAX_STAGES: usize = 7;

#[derive(LogicBlock)]
pub struct ZeroInsert<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance: every register loads only when high.
    pub en: Signal<In, Bit>,
    /// The input vector is valid.
    pub in_valid: Signal<In, Bit>,
    /// Compacted element j in lane j.
    pub data: Vec<Signal<In, Bits<W>>>,
    /// Lane i of the output receives an element.
    pub mask: Vec<Signal<In, Bit>>,
    /// The output vector is valid.
    pub out_valid: Signal<Out, Bit>,
    /// Lane i of the expanded vector; 0 where the mask is clear.
    pub out: Vec<Signal<Out, Bits<W>>>,
    // Inclusive prefix count of clear mask bits, level l lane p at l*n + p.
    ps: Vec<Signal<Local, Bits<8>>>,
    // Boundary t (0 = before the first network stage) of the 2*log2(N)-1
    // stages (control stages first, then data stages), lane p at t*n + p:
    // the data, and the select word (2 bits per pending data stage, the
    // next one in bits 1:0).
    dd: Vec<Signal<Local, Bits<W>>>,
    sw: Vec<Signal<Local, Bits<16>>>,
    // Control state at control boundary c = 0 .. log2(N)-1: lane p holds an
    // element of the remove network, and that element's remaining shift
    // (the bit for stage c at bit 0).
    cv: Vec<Signal<Local, Bit>>,
    cz: Vec<Signal<Local, Bits<8>>>,
    // Beat valid alongside each boundary.
    bv: Vec<Signal<Local, Bit>>,
    // Split register (none unless `split`): the count and the beat.
    rps: Vec<Reg<Bits<8>>>,
    rxm: Vec<Reg<Bit>>,
    rxd: Vec<Reg<Bits<W>>>,
    rxv: Vec<Reg<Bit>>,
    // Registers: slot 0 after the prefix count, slot ceil((t+1)/pipeline)
    // after network stage t when a register follows it.
    rd: Vec<Reg<Bits<W>>>,
    rsw: Vec<Reg<Bits<16>>>,
    rcv: Vec<Reg<Bit>>,
    rcz: Vec<Reg<Bits<8>>>,
    rbv: Vec<Reg<Bit>>,
    zero_w: Constant<Bits<W>>,
    // Constants of the network, one each, none when N = 1 (no network:
    // they would be unused).
    zero8: Vec<Constant<Bits<8>>>,
    one8: Vec<Constant<Bits<8>>>,
    zero16: Vec<Constant<Bits<16>>>,
    one16: Vec<Constant<Bits<16>>>,
    two16: Vec<Constant<Bits<16>>>,
    _n: usize,
    _levels: usize,
    _pipe: usize,
    /// Index of the last boundary (number of network stages).
    _last: usize,
    /// 1 when N = 1 (no stages: the mask gates lane 0) / when N > 1.
    _single: usize,
    _multi: usize,
    /// Control stage c (c = 0 .. log2(N)-2, network stage c): exists; a
    /// register follows it; its control state is carried past it.
    _con: [usize; MAX_STAGES],
    _creg: [usize; MAX_STAGES],
    _cinner: [usize; MAX_STAGES],
    /// Data stage s (stride 2^s, network stage 2*log2(N)-2-s): exists; a
    /// register follows it; it is not the last (select words carried past
    /// it); its network stage index.
    _don: [usize; MAX_STAGES],
    _dreg: [usize; MAX_STAGES],
    _dinner: [usize; MAX_STAGES],
    _dpos: [usize; MAX_STAGES],
    /// 1 when the split register follows prefix level c + 1; 1 when there
    /// is one.
    _split: [usize; MAX_STAGES],
    _has_split: usize,
    /// Slot 0 exists / carries select words / carries control state.
    _reg_pre: usize,
    _reg_pre_sw: usize,
    _reg_pre_ctrl: usize,
}

impl<const W: usize> ZeroInsert<W> {
    /// `lanes` a power of two in 1..=128; `pipeline` = k puts a register
    /// after the prefix count, after every k-th network stage and after the
    /// last; 0 = purely combinational.
    pub fn new(lanes: usize, pipeline: usize) -> Self {
        assert!(lanes.is_power_of_two() && (1..=128).contains(&lanes));
        let levels = lanes.trailing_zeros() as usize;
        let n = lanes;
        let stages = Self::stages(lanes);
        let reg_after = |t: usize| (pipeline > 0 && ((t + 1) % pipeline == 0 || t + 1 == stages)) as usize;
        let mut con = [0; MAX_STAGES];
        let mut creg = [0; MAX_STAGES];
        let mut cinner = [0; MAX_STAGES];
        for c in 0..levels.saturating_sub(1) {
            con[c] = 1;
            creg[c] = reg_after(c);
            cinner[c] = (c + 2 < levels) as usize;
        }
        let mut don = [0; MAX_STAGES];
        let mut dreg = [0; MAX_STAGES];
        let mut dinner = [0; MAX_STAGES];
        let mut dpos = [0; MAX_STAGES];
        for s in 0..levels {
            let t = 2 * levels - 2 - s;
            don[s] = 1;
            dreg[s] = reg_after(t);
            dinner[s] = (s > 0) as usize;
            dpos[s] = t;
        }
        let piped = (pipeline > 0) as usize;
        let slots = if pipeline > 0 { 1 + stages.div_ceil(pipeline) } else { 0 };
        let sp = split(lanes, pipeline);
        let mut split_at = [0; MAX_STAGES];
        split_at[SPLIT_AFTER - 1] = sp;
        // slots at control boundaries 0 ..= log2(N)-2 carry the control state
        let ctrl_slots = if pipeline > 0 && levels >= 2 { (levels - 2) / pipeline + 1 } else { 0 };
        ZeroInsert {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            data: (0..n).map(|_| Default::default()).collect(),
            mask: (0..n).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out: (0..n).map(|_| Default::default()).collect(),
            ps: (0..if levels > 0 { (levels + 1) * n } else { 0 }).map(|_| Default::default()).collect(),
            dd: (0..(stages + 1) * n).map(|_| Default::default()).collect(),
            // the last boundary carries only data
            sw: (0..stages * n).map(|_| Default::default()).collect(),
            cv: (0..levels * n).map(|_| Default::default()).collect(),
            cz: (0..levels * n).map(|_| Default::default()).collect(),
            bv: (0..stages + 1).map(|_| Default::default()).collect(),
            rps: (0..sp * n).map(|_| Reg::default()).collect(),
            rxm: (0..sp * n).map(|_| Reg::default()).collect(),
            rxd: (0..sp * n).map(|_| Reg::default()).collect(),
            rxv: (0..sp).map(|_| Reg::default()).collect(),
            rd: (0..slots * n).map(|_| Reg::default()).collect(),
            rsw: (0..slots.saturating_sub(1) * n).map(|_| Reg::default()).collect(),
            rcv: (0..ctrl_slots * n).map(|_| Reg::default()).collect(),
            rcz: (0..ctrl_slots * n).map(|_| Reg::default()).collect(),
            rbv: (0..slots).map(|_| Reg::default()).collect(),
            zero_w: Constant::new(0u64.into()),
            zero8: konst(levels, 0),
            one8: konst(levels, 1),
            zero16: konst(levels, 0),
            one16: konst(levels, 1),
            two16: konst(levels, 2),
            _n: n,
            _levels: levels,
            _pipe: pipeline.max(1),
            _last: stages,
            _single: (levels == 0) as usize,
            _multi: (levels > 0) as usize,
            _con: con,
            _creg: creg,
            _cinner: cinner,
            _don: don,
            _dreg: dreg,
            _dinner: dinner,
            _dpos: dpos,
            _split: split_at,
            _has_split: sp,
            _reg_pre: piped,
            _reg_pre_sw: piped * (levels >= 1) as usize,
            _reg_pre_ctrl: piped * (levels >= 2) as usize,
        }
    }

    /// Network stages: log2(N)-1 control stages and log2(N) data stages.
    pub fn stages(lanes: usize) -> usize {
        (2 * lanes.trailing_zeros() as usize).saturating_sub(1)
    }

    /// Cycles from input to output with `en` held high.
    pub fn latency(lanes: usize, pipeline: usize) -> usize {
        if pipeline == 0 {
            return 0;
        }
        1 + split(lanes, pipeline) + Self::stages(lanes).div_ceil(pipeline)
    }
}

fn konst<const B: usize>(levels: usize, v: u64) -> Vec<Constant<Bits<B>>> {
    (0..(levels > 0) as usize).map(|_| Constant::new(v.into())).collect()
}

/// Control stages: index c, c + 1, stride 2^c, ascending. Data stages: bit
/// s, stride 2^s, descending (each must follow the stage it reads). The
/// register wiring repeats per signal because rust-hdl kernels cannot call
/// helpers.
macro_rules! zero_insert_logic {
    (control: $([$c:tt, $c1:tt, $csh:tt]),*; data: $([$s:tt, $sh:tt]),*) => {
        impl<const W: usize> Logic for ZeroInsert<W> {
            #[hdl_gen]
            fn update(&mut self) {
                for n in self._n..(self._n + 1) {
                    for pp in self._pipe..(self._pipe + 1) {
                        // N = 1: no network, the mask gates lane 0
                        for _s in 0..self._single {
                            self.dd[0].next = self.zero_w.val();
                            if self.mask[0].val() {
                                self.dd[0].next = self.data[0].val();
                            }
                        }
                        for _m in 0..self._multi {
                            // prefix count, level 0: the clear mask bits
                            for p in 0..self._n {
                                self.ps[p].next = self.zero8[0].val();
                                if !self.mask[p].val() {
                                    self.ps[p].next = self.one8[0].val();
                                }
                            }
                            $(
                            for _on in 0..self._con[$c] {
                                for p in 0..$csh.min(self._n) {
                                    self.ps[$c1 * n + p].next = self.ps[$c * n + p].val();
                                }
                                for p in $csh..self._n {
                                    self.ps[$c1 * n + p].next = self.ps[$c * n + p].val() + self.ps[$c * n + p - $csh].val();
                                }
                            }
                            for _r in 0..self._split[$c] {
                                for p in 0..self._n {
                                    self.rps[p].clock.next = self.clock.val();
                                    self.rps[p].reset.next = self.reset.val();
                                    self.rps[p].en.next = self.en.val();
                                    self.rps[p].d.next = self.ps[$c1 * n + p].val();
                                    self.ps[$c1 * n + p].next = self.rps[p].q.val();
                                    self.rxm[p].clock.next = self.clock.val();
                                    self.rxm[p].reset.next = self.reset.val();
                                    self.rxm[p].en.next = self.en.val();
                                    self.rxm[p].d.next = self.mask[p].val();
                                    self.rxd[p].clock.next = self.clock.val();
                                    self.rxd[p].reset.next = self.reset.val();
                                    self.rxd[p].en.next = self.en.val();
                                    self.rxd[p].d.next = self.data[p].val();
                                }
                                self.rxv[0].clock.next = self.clock.val();
                                self.rxv[0].reset.next = self.reset.val();
                                self.rxv[0].en.next = self.en.val();
                                self.rxv[0].d.next = self.in_valid.val();
                            }
                            )*
                            // the last prefix level (stride N/2) has no control stage
                            for l in self._levels..(self._levels + 1) {
                                for p in 0..(self._n / 2) {
                                    self.ps[l * n + p].next = self.ps[(l - 1) * n + p].val();
                                }
                                for p in (self._n / 2)..self._n {
                                    self.ps[l * n + p].next = self.ps[(l - 1) * n + p].val() + self.ps[(l - 1) * n + p - n / 2].val();
                                }
                                // boundary 0: raw data; each set lane holds an
                                // element moving down by the clear lanes below it
                                for p in 0..self._n {
                                    self.dd[p].next = self.data[p].val();
                                    self.cv[p].next = self.mask[p].val();
                                    self.cz[p].next = self.ps[l * n + p].val();
                                }
                            }
                            // after a split register, boundary 0 takes the
                            // beat registered beside the count
                            for _r in 0..self._has_split {
                                for p in 0..self._n {
                                    self.dd[p].next = self.rxd[p].q.val();
                                    self.cv[p].next = self.rxm[p].q.val();
                                }
                            }
                            for p in 0..self._n {
                                self.sw[p].next = self.zero16[0].val();
                                if self.cv[p].val() & ((self.cz[p].val() & self.one8[0].val()) == self.zero8[0].val()) {
                                    self.sw[p].next = self.one16[0].val();
                                }
                                if self.cv[p].val() & ((self.cz[p].val() & self.one8[0].val()) != self.zero8[0].val()) {
                                    self.sw[p].next = self.two16[0].val();
                                }
                            }
                        }
                        self.bv[0].next = self.in_valid.val();
                        for _r in 0..self._has_split {
                            self.bv[0].next = self.rxv[0].q.val();
                        }
                        for _r in 0..self._reg_pre {
                            self.rbv[0].clock.next = self.clock.val();
                            self.rbv[0].reset.next = self.reset.val();
                            self.rbv[0].en.next = self.en.val();
                            self.rbv[0].d.next = self.bv[0].val();
                            self.bv[0].next = self.rbv[0].q.val();
                            for p in 0..self._n {
                                self.rd[p].clock.next = self.clock.val();
                                self.rd[p].reset.next = self.reset.val();
                                self.rd[p].en.next = self.en.val();
                                self.rd[p].d.next = self.dd[p].val();
                                self.dd[p].next = self.rd[p].q.val();
                            }
                        }
                        for _r in 0..self._reg_pre_sw {
                            for p in 0..self._n {
                                self.rsw[p].clock.next = self.clock.val();
                                self.rsw[p].reset.next = self.reset.val();
                                self.rsw[p].en.next = self.en.val();
                                self.rsw[p].d.next = self.sw[p].val();
                                self.sw[p].next = self.rsw[p].q.val();
                            }
                        }
                        for _r in 0..self._reg_pre_ctrl {
                            for p in 0..self._n {
                                self.rcv[p].clock.next = self.clock.val();
                                self.rcv[p].reset.next = self.reset.val();
                                self.rcv[p].en.next = self.en.val();
                                self.rcv[p].d.next = self.cv[p].val();
                                self.cv[p].next = self.rcv[p].q.val();
                                self.rcz[p].clock.next = self.clock.val();
                                self.rcz[p].reset.next = self.reset.val();
                                self.rcz[p].en.next = self.en.val();
                                self.rcz[p].d.next = self.cz[p].val();
                                self.cz[p].next = self.rcz[p].q.val();
                            }
                        }
                        $(
                        for _on in 0..self._con[$c] {
                            // Control stage c: zero-remove stage c on the lane
                            // states alone (lane p takes lane p + 2^c if that
                            // one moves, else keeps its own if it stays), then
                            // push the select of the new boundary.
                            for p in 0..self._n {
                                self.cv[$c1 * n + p].next = self.cv[$c * n + p].val() & ((self.cz[$c * n + p].val() & self.one8[0].val()) == self.zero8[0].val());
                                self.cz[$c1 * n + p].next = self.cz[$c * n + p].val() >> self.one8[0].val();
                            }
                            for p in 0..self._n.saturating_sub($csh) {
                                if self.cv[$c * n + p + $csh].val() & ((self.cz[$c * n + p + $csh].val() & self.one8[0].val()) != self.zero8[0].val()) {
                                    self.cv[$c1 * n + p].next = true;
                                    self.cz[$c1 * n + p].next = self.cz[$c * n + p + $csh].val() >> self.one8[0].val();
                                }
                            }
                            for p in 0..self._n {
                                self.dd[$c1 * n + p].next = self.dd[$c * n + p].val();
                                self.sw[$c1 * n + p].next = self.sw[$c * n + p].val() << self.two16[0].val();
                                if self.cv[$c1 * n + p].val() & ((self.cz[$c1 * n + p].val() & self.one8[0].val()) == self.zero8[0].val()) {
                                    self.sw[$c1 * n + p].next = (self.sw[$c * n + p].val() << self.two16[0].val()) | self.one16[0].val();
                                }
                                if self.cv[$c1 * n + p].val() & ((self.cz[$c1 * n + p].val() & self.one8[0].val()) != self.zero8[0].val()) {
                                    self.sw[$c1 * n + p].next = (self.sw[$c * n + p].val() << self.two16[0].val()) | self.two16[0].val();
                                }
                            }
                            self.bv[$c1].next = self.bv[$c].val();
                            for _r in 0..self._creg[$c] {
                                self.rbv[($c + pp) / pp].clock.next = self.clock.val();
                                self.rbv[($c + pp) / pp].reset.next = self.reset.val();
                                self.rbv[($c + pp) / pp].en.next = self.en.val();
                                self.rbv[($c + pp) / pp].d.next = self.bv[$c1].val();
                                self.bv[$c1].next = self.rbv[($c + pp) / pp].q.val();
                                for p in 0..self._n {
                                    self.rd[(($c + pp) / pp) * n + p].clock.next = self.clock.val();
                                    self.rd[(($c + pp) / pp) * n + p].reset.next = self.reset.val();
                                    self.rd[(($c + pp) / pp) * n + p].en.next = self.en.val();
                                    self.rd[(($c + pp) / pp) * n + p].d.next = self.dd[$c1 * n + p].val();
                                    self.dd[$c1 * n + p].next = self.rd[(($c + pp) / pp) * n + p].q.val();
                                    self.rsw[(($c + pp) / pp) * n + p].clock.next = self.clock.val();
                                    self.rsw[(($c + pp) / pp) * n + p].reset.next = self.reset.val();
                                    self.rsw[(($c + pp) / pp) * n + p].en.next = self.en.val();
                                    self.rsw[(($c + pp) / pp) * n + p].d.next = self.sw[$c1 * n + p].val();
                                    self.sw[$c1 * n + p].next = self.rsw[(($c + pp) / pp) * n + p].q.val();
                                }
                                for _i in 0..self._cinner[$c] {
                                    for p in 0..self._n {
                                        self.rcv[(($c + pp) / pp) * n + p].clock.next = self.clock.val();
                                        self.rcv[(($c + pp) / pp) * n + p].reset.next = self.reset.val();
                                        self.rcv[(($c + pp) / pp) * n + p].en.next = self.en.val();
                                        self.rcv[(($c + pp) / pp) * n + p].d.next = self.cv[$c1 * n + p].val();
                                        self.cv[$c1 * n + p].next = self.rcv[(($c + pp) / pp) * n + p].q.val();
                                        self.rcz[(($c + pp) / pp) * n + p].clock.next = self.clock.val();
                                        self.rcz[(($c + pp) / pp) * n + p].reset.next = self.reset.val();
                                        self.rcz[(($c + pp) / pp) * n + p].en.next = self.en.val();
                                        self.rcz[(($c + pp) / pp) * n + p].d.next = self.cz[$c1 * n + p].val();
                                        self.cz[$c1 * n + p].next = self.rcz[(($c + pp) / pp) * n + p].q.val();
                                    }
                                }
                            }
                        }
                        )*
                        $(
                        for _on in 0..self._don[$s] {
                            // Data stage s, network stage t: lane p keeps its
                            // own element (select bit 0) or takes the one 2^s
                            // lanes below (select bit 1), else becomes 0.
                            for t in self._dpos[$s]..(self._dpos[$s] + 1) {
                                for p in 0..self._n {
                                    self.dd[(t + 1) * n + p].next = self.zero_w.val();
                                    if (self.sw[t * n + p].val() & self.one16[0].val()) != self.zero16[0].val() {
                                        self.dd[(t + 1) * n + p].next = self.dd[t * n + p].val();
                                    }
                                }
                                for p in $sh..self._n {
                                    if (self.sw[t * n + p].val() & self.two16[0].val()) != self.zero16[0].val() {
                                        self.dd[(t + 1) * n + p].next = self.dd[t * n + p - $sh].val();
                                    }
                                }
                                for _i in 0..self._dinner[$s] {
                                    for p in 0..self._n {
                                        self.sw[(t + 1) * n + p].next = self.sw[t * n + p].val() >> self.two16[0].val();
                                    }
                                }
                                self.bv[t + 1].next = self.bv[t].val();
                                for _r in 0..self._dreg[$s] {
                                    self.rbv[(t + pp) / pp].clock.next = self.clock.val();
                                    self.rbv[(t + pp) / pp].reset.next = self.reset.val();
                                    self.rbv[(t + pp) / pp].en.next = self.en.val();
                                    self.rbv[(t + pp) / pp].d.next = self.bv[t + 1].val();
                                    self.bv[t + 1].next = self.rbv[(t + pp) / pp].q.val();
                                    for p in 0..self._n {
                                        self.rd[((t + pp) / pp) * n + p].clock.next = self.clock.val();
                                        self.rd[((t + pp) / pp) * n + p].reset.next = self.reset.val();
                                        self.rd[((t + pp) / pp) * n + p].en.next = self.en.val();
                                        self.rd[((t + pp) / pp) * n + p].d.next = self.dd[(t + 1) * n + p].val();
                                        self.dd[(t + 1) * n + p].next = self.rd[((t + pp) / pp) * n + p].q.val();
                                    }
                                    for _i in 0..self._dinner[$s] {
                                        for p in 0..self._n {
                                            self.rsw[((t + pp) / pp) * n + p].clock.next = self.clock.val();
                                            self.rsw[((t + pp) / pp) * n + p].reset.next = self.reset.val();
                                            self.rsw[((t + pp) / pp) * n + p].en.next = self.en.val();
                                            self.rsw[((t + pp) / pp) * n + p].d.next = self.sw[(t + 1) * n + p].val();
                                            self.sw[(t + 1) * n + p].next = self.rsw[((t + pp) / pp) * n + p].q.val();
                                        }
                                    }
                                }
                            }
                        }
                        )*
                        for l in self._last..(self._last + 1) {
                            for p in 0..self._n {
                                self.out[p].next = self.dd[l * n + p].val();
                            }
                            self.out_valid.next = self.bv[l].val();
                        }
                    }
                }
            }
        }
    };
}

zero_insert_logic!(
    control: [0, 1, 1], [1, 2, 2], [2, 3, 4], [3, 4, 8], [4, 5, 16], [5, 6, 32];
    data: [6, 64], [5, 32], [4, 16], [3, 8], [2, 4], [1, 2], [0, 1]
);

/// The shifter as a stand-alone streaming unit: valid/ready around the
/// pipeline. The pipeline advances when its output is empty or taken, so
/// `in_ready` follows `out_ready` combinationally.
#[derive(LogicBlock)]
pub struct ZeroInsertShifter<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// input vector valid
    pub in_valid: Signal<In, Bit>,
    /// input vector accepted when in_valid and in_ready
    pub in_ready: Signal<Out, Bit>,
    /// compacted elements, element j at [W*j+W-1:W*j]; lanes j >= popcount(in_mask) ignored
    pub in_data: Vec<Signal<In, Bits<W>>>,
    /// lane i of the output receives the next element
    pub in_mask: Vec<Signal<In, Bit>>,
    /// expanded vector valid
    pub out_valid: Signal<Out, Bit>,
    /// expanded vector taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// element j in the lane of the j-th set mask bit; other lanes 0
    pub out_data: Vec<Signal<Out, Bits<W>>>,
    net: ZeroInsert<W>,
    advance: Signal<Local, Bit>,
    _n: usize,
}

impl<const W: usize> ZeroInsertShifter<W> {
    pub fn new(lanes: usize, pipeline: usize) -> Self {
        ZeroInsertShifter {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_data: (0..lanes).map(|_| Default::default()).collect(),
            in_mask: (0..lanes).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: (0..lanes).map(|_| Default::default()).collect(),
            net: ZeroInsert::new(lanes, pipeline),
            advance: Default::default(),
            _n: lanes,
        }
    }
}

impl<const W: usize> Logic for ZeroInsertShifter<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.advance.next = !self.net.out_valid.val() | self.out_ready.val();
        self.net.clock.next = self.clock.val();
        self.net.reset.next = self.reset.val();
        self.net.en.next = self.advance.val();
        self.net.in_valid.next = self.in_valid.val();
        for p in 0..self._n {
            self.net.data[p].next = self.in_data[p].val();
            self.net.mask[p].next = self.in_mask[p].val();
            self.out_data[p].next = self.net.out[p].val();
        }
        self.in_ready.next = self.advance.val();
        self.out_valid.next = self.net.out_valid.val();
    }
}
