//! Zero-remove shifter: compacts the kept lanes of an N-lane vector to lanes
//! 0..count-1, in order (spec §3). Paper: Oaken §5.2, refs [57, 67].
//!
//! Each kept element moves down by z, the number of dropped lanes below it.
//! Stage s moves an element by 2^s when bit s of z is set; taken least
//! significant bit first, no two kept elements ever meet, so each stage is a
//! 2:1 multiplexer per lane. z comes from a log-depth (Kogge-Stone) prefix
//! count of the dropped lanes. From 32 lanes on, a pipelined shifter
//! registers that count after its third level, with the beat beside it: six
//! levels of small adders after the input delay miss 4 ns on OSU018. (Below
//! 32 lanes the generated Verilog is exactly what it was without the option.)
//!
//! rust-hdl's code generator resolves one `[index]` per name and evaluates it
//! with integer arithmetic only, so per-stage strides 2^s cannot be computed
//! from a loop variable. `stages!` below stamps out the stage code with
//! literal strides instead; a stage past log2(N) runs a loop of zero
//! iterations and generates nothing.

use super::reg::Reg;
use rust_hdl::prelude::*;

pub const MAX_STAGES: usize = 7;

/// Prefix-count levels before the split register (spec §3), and the fewest
/// levels (log2 lanes) that get one.
pub const SPLIT_AFTER: usize = 3;
pub const SPLIT_FROM: usize = 5;

/// 1 when a pipelined network of `lanes` registers its prefix count midway.
pub fn split(lanes: usize, pipeline: usize) -> usize {
    (pipeline > 0 && lanes.trailing_zeros() as usize >= SPLIT_FROM) as usize
}

#[derive(LogicBlock)]
pub struct ZeroRemove<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Pipeline advance: every register loads only when high.
    pub en: Signal<In, Bit>,
    /// The input vector is valid.
    pub in_valid: Signal<In, Bit>,
    /// Lane i of the input vector.
    pub data: Vec<Signal<In, Bits<W>>>,
    /// Lane i is kept.
    pub keep: Vec<Signal<In, Bit>>,
    /// The output vector is valid.
    pub out_valid: Signal<Out, Bit>,
    /// Lane j of the compacted vector; lanes j >= count are 0.
    pub out: Vec<Signal<Out, Bits<W>>>,
    /// Number of kept lanes.
    pub count: Signal<Out, Bits<8>>,
    // Inclusive prefix count of dropped lanes, level l lane p at l*n + p.
    ps: Vec<Signal<Local, Bits<8>>>,
    // Network state at stage boundary k (0 = before stage 0), lane p at k*n + p.
    sd: Vec<Signal<Local, Bits<W>>>,
    sv: Vec<Signal<Local, Bit>>,
    sz: Vec<Signal<Local, Bits<8>>>,
    // Beat valid and kept count alongside each boundary.
    bv: Vec<Signal<Local, Bit>>,
    bc: Vec<Signal<Local, Bits<8>>>,
    // Split register (none unless `split`): the count and the beat.
    rps: Vec<Reg<Bits<8>>>,
    rxk: Vec<Reg<Bit>>,
    rxd: Vec<Reg<Bits<W>>>,
    rxv: Vec<Reg<Bit>>,
    // Registers: slot 0 after the prefix count, slot ceil((k+1)/pipeline)
    // after stage k when a register follows it.
    rd: Vec<Reg<Bits<W>>>,
    rv: Vec<Reg<Bit>>,
    rz: Vec<Reg<Bits<8>>>,
    rbv: Vec<Reg<Bit>>,
    rbc: Vec<Reg<Bits<8>>>,
    zero_w: Constant<Bits<W>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    lanes8: Constant<Bits<8>>,
    _n: usize,
    _levels: usize,
    _pipe: usize,
    /// 1 when stage k exists (k < log2 N).
    _on: [usize; MAX_STAGES],
    /// 1 when a register follows stage k / when it does not.
    _reg: [usize; MAX_STAGES],
    _comb: [usize; MAX_STAGES],
    /// 1 when stage k is not the last: only then are lane valid bits and
    /// shifts carried past it.
    _inner: [usize; MAX_STAGES],
    /// 1 when the split register follows prefix level k + 1; 1 when there
    /// is one.
    _split: [usize; MAX_STAGES],
    _has_split: usize,
    /// 1 when a register follows the prefix count / when it does not.
    _reg_pre: usize,
    _comb_pre: usize,
}

impl<const W: usize> ZeroRemove<W> {
    /// `lanes` a power of two in 1..=128; `pipeline` = k puts a register
    /// after the prefix count, after every k-th stage and after the last
    /// stage; 0 = purely combinational.
    pub fn new(lanes: usize, pipeline: usize) -> Self {
        assert!(lanes.is_power_of_two() && (1..=128).contains(&lanes));
        let levels = lanes.trailing_zeros() as usize;
        let n = lanes;
        let mut on = [0; MAX_STAGES];
        let mut reg = [0; MAX_STAGES];
        let mut comb = [0; MAX_STAGES];
        let mut inner = [0; MAX_STAGES];
        for k in 0..levels {
            inner[k] = (k + 1 < levels) as usize;
            on[k] = 1;
            let r = pipeline > 0 && ((k + 1) % pipeline == 0 || k + 1 == levels);
            reg[k] = r as usize;
            comb[k] = 1 - reg[k];
        }
        let piped = (pipeline > 0) as usize;
        let slots = if pipeline > 0 { 1 + levels.div_ceil(pipeline) } else { 0 };
        let sp = split(lanes, pipeline);
        let mut split_at = [0; MAX_STAGES];
        split_at[SPLIT_AFTER - 1] = sp;
        ZeroRemove {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            in_valid: Default::default(),
            data: (0..n).map(|_| Default::default()).collect(),
            keep: (0..n).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out: (0..n).map(|_| Default::default()).collect(),
            count: Default::default(),
            ps: (0..(levels + 1) * n).map(|_| Default::default()).collect(),
            sd: (0..(levels + 1) * n).map(|_| Default::default()).collect(),
            // the last boundary carries only data
            sv: (0..levels * n).map(|_| Default::default()).collect(),
            sz: (0..levels * n).map(|_| Default::default()).collect(),
            bv: (0..levels + 1).map(|_| Default::default()).collect(),
            bc: (0..levels + 1).map(|_| Default::default()).collect(),
            rps: (0..sp * n).map(|_| Reg::default()).collect(),
            rxk: (0..sp * n).map(|_| Reg::default()).collect(),
            rxd: (0..sp * n).map(|_| Reg::default()).collect(),
            rxv: (0..sp).map(|_| Reg::default()).collect(),
            rd: (0..slots * n).map(|_| Reg::default()).collect(),
            rv: (0..slots.saturating_sub(1) * n).map(|_| Reg::default()).collect(),
            rz: (0..slots.saturating_sub(1) * n).map(|_| Reg::default()).collect(),
            rbv: (0..slots).map(|_| Reg::default()).collect(),
            rbc: (0..slots).map(|_| Reg::default()).collect(),
            zero_w: Constant::new(0u64.into()),
            zero8: Constant::new(0u64.into()),
            one8: Constant::new(1u64.into()),
            lanes8: Constant::new((n as u64).into()),
            _n: n,
            _levels: levels,
            _pipe: pipeline.max(1),
            _on: on,
            _reg: reg,
            _comb: comb,
            _inner: inner,
            _split: split_at,
            _has_split: sp,
            _reg_pre: piped,
            _comb_pre: 1 - piped,
        }
    }

    /// Cycles from input to output with `en` held high.
    pub fn latency(lanes: usize, pipeline: usize) -> usize {
        if pipeline == 0 {
            return 0;
        }
        let levels = lanes.trailing_zeros() as usize;
        1 + split(lanes, pipeline) + levels.div_ceil(pipeline)
    }
}

/// Per stage: index k, k + 1, stride 2^k. The register wiring repeats per
/// signal because rust-hdl kernels cannot call helpers.
macro_rules! zero_remove_logic {
    ($([$k:tt, $k1:tt, $sh:tt]),*) => {
        impl<const W: usize> Logic for ZeroRemove<W> {
            #[hdl_gen]
            fn update(&mut self) {
                for n in self._n..(self._n + 1) {
                    for pp in self._pipe..(self._pipe + 1) {
                        // prefix count, level 0: the dropped flags
                        for p in 0..self._n {
                            self.ps[p].next = self.zero8.val();
                            if !self.keep[p].val() {
                                self.ps[p].next = self.one8.val();
                            }
                        }
                        $(
                        for _on in 0..self._on[$k] {
                            for p in 0..$sh.min(self._n) {
                                self.ps[$k1 * n + p].next = self.ps[$k * n + p].val();
                            }
                            for p in $sh..self._n {
                                self.ps[$k1 * n + p].next = self.ps[$k * n + p].val() + self.ps[$k * n + p - $sh].val();
                            }
                        }
                        for _r in 0..self._split[$k] {
                            for p in 0..self._n {
                                self.rps[p].clock.next = self.clock.val();
                                self.rps[p].reset.next = self.reset.val();
                                self.rps[p].en.next = self.en.val();
                                self.rps[p].d.next = self.ps[$k1 * n + p].val();
                                self.ps[$k1 * n + p].next = self.rps[p].q.val();
                                self.rxk[p].clock.next = self.clock.val();
                                self.rxk[p].reset.next = self.reset.val();
                                self.rxk[p].en.next = self.en.val();
                                self.rxk[p].d.next = self.keep[p].val();
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
                        // boundary 0: each lane with its shift, the dropped
                        // lanes below it (inclusive count minus its own flag)
                        for l in self._levels..(self._levels + 1) {
                            for p in 0..self._n {
                                // dropped lanes enter as 0 (they are the output when N = 1)
                                self.sd[p].next = self.zero_w.val();
                                if self.keep[p].val() {
                                    self.sd[p].next = self.data[p].val();
                                }
                            }
                            for _s in 0..self._levels.min(1) {
                                for p in 0..self._n {
                                    self.sv[p].next = self.keep[p].val();
                                    self.sz[p].next = self.ps[l * n + p].val();
                                }
                            }
                            self.bc[0].next = self.lanes8.val() - self.ps[l * n + n - 1].val();
                        }
                        self.bv[0].next = self.in_valid.val();
                        // after a split register, boundary 0 takes the beat
                        // registered beside the count
                        for _r in 0..self._has_split {
                            for p in 0..self._n {
                                self.sd[p].next = self.zero_w.val();
                                if self.rxk[p].q.val() {
                                    self.sd[p].next = self.rxd[p].q.val();
                                }
                                self.sv[p].next = self.rxk[p].q.val();
                            }
                            self.bv[0].next = self.rxv[0].q.val();
                        }
                        for _r in 0..self._reg_pre {
                            self.rbv[0].clock.next = self.clock.val();
                            self.rbv[0].reset.next = self.reset.val();
                            self.rbv[0].en.next = self.en.val();
                            self.rbv[0].d.next = self.bv[0].val();
                            self.bv[0].next = self.rbv[0].q.val();
                            self.rbc[0].clock.next = self.clock.val();
                            self.rbc[0].reset.next = self.reset.val();
                            self.rbc[0].en.next = self.en.val();
                            self.rbc[0].d.next = self.bc[0].val();
                            self.bc[0].next = self.rbc[0].q.val();
                            for p in 0..self._n {
                                self.rd[p].clock.next = self.clock.val();
                                self.rd[p].reset.next = self.reset.val();
                                self.rd[p].en.next = self.en.val();
                                self.rd[p].d.next = self.sd[p].val();
                                self.sd[p].next = self.rd[p].q.val();
                            }
                            for _s in 0..self._levels.min(1) {
                                for p in 0..self._n {
                                    self.rv[p].clock.next = self.clock.val();
                                    self.rv[p].reset.next = self.reset.val();
                                    self.rv[p].en.next = self.en.val();
                                    self.rv[p].d.next = self.sv[p].val();
                                    self.sv[p].next = self.rv[p].q.val();
                                    self.rz[p].clock.next = self.clock.val();
                                    self.rz[p].reset.next = self.reset.val();
                                    self.rz[p].en.next = self.en.val();
                                    self.rz[p].d.next = self.sz[p].val();
                                    self.sz[p].next = self.rz[p].q.val();
                                }
                            }
                        }
                        $(
                        for _on in 0..self._on[$k] {
                            // The shift still to do sits in sz with the bit for
                            // this stage at bit 0 (whole-value tests keep every
                            // bit of it in use). Lane p takes lane p + 2^k if
                            // that one moves, else keeps its own if it stays.
                            for p in 0..self._n {
                                self.sd[$k1 * n + p].next = self.zero_w.val();
                                if self.sv[$k * n + p].val() & ((self.sz[$k * n + p].val() & self.one8.val()) == self.zero8.val()) {
                                    self.sd[$k1 * n + p].next = self.sd[$k * n + p].val();
                                }
                            }
                            for p in 0..self._n.saturating_sub($sh) {
                                if self.sv[$k * n + p + $sh].val() & ((self.sz[$k * n + p + $sh].val() & self.one8.val()) != self.zero8.val()) {
                                    self.sd[$k1 * n + p].next = self.sd[$k * n + p + $sh].val();
                                }
                            }
                            for _i in 0..self._inner[$k] {
                                for p in 0..self._n {
                                    self.sv[$k1 * n + p].next = self.sv[$k * n + p].val() & ((self.sz[$k * n + p].val() & self.one8.val()) == self.zero8.val());
                                    self.sz[$k1 * n + p].next = self.sz[$k * n + p].val() >> self.one8.val();
                                }
                                for p in 0..self._n.saturating_sub($sh) {
                                    if self.sv[$k * n + p + $sh].val() & ((self.sz[$k * n + p + $sh].val() & self.one8.val()) != self.zero8.val()) {
                                        self.sv[$k1 * n + p].next = true;
                                        self.sz[$k1 * n + p].next = self.sz[$k * n + p + $sh].val() >> self.one8.val();
                                    }
                                }
                            }
                            self.bv[$k1].next = self.bv[$k].val();
                            self.bc[$k1].next = self.bc[$k].val();
                            for _r in 0..self._reg[$k] {
                                self.rbv[($k + pp) / pp].clock.next = self.clock.val();
                                self.rbv[($k + pp) / pp].reset.next = self.reset.val();
                                self.rbv[($k + pp) / pp].en.next = self.en.val();
                                self.rbv[($k + pp) / pp].d.next = self.bv[$k1].val();
                                self.bv[$k1].next = self.rbv[($k + pp) / pp].q.val();
                                self.rbc[($k + pp) / pp].clock.next = self.clock.val();
                                self.rbc[($k + pp) / pp].reset.next = self.reset.val();
                                self.rbc[($k + pp) / pp].en.next = self.en.val();
                                self.rbc[($k + pp) / pp].d.next = self.bc[$k1].val();
                                self.bc[$k1].next = self.rbc[($k + pp) / pp].q.val();
                                for p in 0..self._n {
                                    self.rd[(($k + pp) / pp) * n + p].clock.next = self.clock.val();
                                    self.rd[(($k + pp) / pp) * n + p].reset.next = self.reset.val();
                                    self.rd[(($k + pp) / pp) * n + p].en.next = self.en.val();
                                    self.rd[(($k + pp) / pp) * n + p].d.next = self.sd[$k1 * n + p].val();
                                    self.sd[$k1 * n + p].next = self.rd[(($k + pp) / pp) * n + p].q.val();
                                }
                                for _i in 0..self._inner[$k] {
                                    for p in 0..self._n {
                                        self.rv[(($k + pp) / pp) * n + p].clock.next = self.clock.val();
                                        self.rv[(($k + pp) / pp) * n + p].reset.next = self.reset.val();
                                        self.rv[(($k + pp) / pp) * n + p].en.next = self.en.val();
                                        self.rv[(($k + pp) / pp) * n + p].d.next = self.sv[$k1 * n + p].val();
                                        self.sv[$k1 * n + p].next = self.rv[(($k + pp) / pp) * n + p].q.val();
                                        self.rz[(($k + pp) / pp) * n + p].clock.next = self.clock.val();
                                        self.rz[(($k + pp) / pp) * n + p].reset.next = self.reset.val();
                                        self.rz[(($k + pp) / pp) * n + p].en.next = self.en.val();
                                        self.rz[(($k + pp) / pp) * n + p].d.next = self.sz[$k1 * n + p].val();
                                        self.sz[$k1 * n + p].next = self.rz[(($k + pp) / pp) * n + p].q.val();
                                    }
                                }
                            }
                        }
                        )*
                        for l in self._levels..(self._levels + 1) {
                            for p in 0..self._n {
                                self.out[p].next = self.sd[l * n + p].val();
                            }
                            self.out_valid.next = self.bv[l].val();
                            self.count.next = self.bc[l].val();
                        }
                    }
                }
            }
        }
    };
}

zero_remove_logic!([0, 1, 1], [1, 2, 2], [2, 3, 4], [3, 4, 8], [4, 5, 16], [5, 6, 32], [6, 7, 64]);

/// The shifter as a stand-alone streaming unit: valid/ready around the
/// pipeline. The pipeline advances when its output is empty or taken, so
/// `in_ready` follows `out_ready` combinationally.
#[derive(LogicBlock)]
pub struct ZeroRemoveShifter<const W: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// input vector valid
    pub in_valid: Signal<In, Bit>,
    /// input vector accepted when in_valid and in_ready
    pub in_ready: Signal<Out, Bit>,
    /// input lanes, lane i at [W*i+W-1:W*i]
    pub in_data: Vec<Signal<In, Bits<W>>>,
    /// lane i is kept
    pub in_keep: Vec<Signal<In, Bit>>,
    /// compacted vector valid
    pub out_valid: Signal<Out, Bit>,
    /// compacted vector taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// kept lanes in order from lane 0; other lanes 0
    pub out_data: Vec<Signal<Out, Bits<W>>>,
    /// number of kept lanes
    pub out_count: Signal<Out, Bits<8>>,
    net: ZeroRemove<W>,
    advance: Signal<Local, Bit>,
    _n: usize,
}

impl<const W: usize> ZeroRemoveShifter<W> {
    pub fn new(lanes: usize, pipeline: usize) -> Self {
        ZeroRemoveShifter {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_data: (0..lanes).map(|_| Default::default()).collect(),
            in_keep: (0..lanes).map(|_| Default::default()).collect(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: (0..lanes).map(|_| Default::default()).collect(),
            out_count: Default::default(),
            net: ZeroRemove::new(lanes, pipeline),
            advance: Default::default(),
            _n: lanes,
        }
    }
}

impl<const W: usize> Logic for ZeroRemoveShifter<W> {
    #[hdl_gen]
    fn update(&mut self) {
        self.advance.next = !self.net.out_valid.val() | self.out_ready.val();
        self.net.clock.next = self.clock.val();
        self.net.reset.next = self.reset.val();
        self.net.en.next = self.advance.val();
        self.net.in_valid.next = self.in_valid.val();
        for p in 0..self._n {
            self.net.data[p].next = self.in_data[p].val();
            self.net.keep[p].next = self.in_keep[p].val();
            self.out_data[p].next = self.net.out[p].val();
        }
        self.in_ready.next = self.advance.val();
        self.out_valid.next = self.net.out_valid.val();
        self.out_count.next = self.net.count.val();
    }
}
