//! Output side of the Oaken quantization engine's pass 2: COO entries
//! assembled from the lanes and compacted by the zero-remove shifter, the
//! dense slots, first and last waiting alongside it, and the metadata FIFO
//! that presents each token's metadata word, counts and status with all of
//! its beats. It also decides whether pass 2 advances: when its output
//! register is empty or taken.
//! Paper: Oaken (ISCA 2025) §5.2 "Quantization engine" (OR-merge into the
//! dense vector, COO generation, the zero-remove shifter). Spec:
//! docs/spec.md §2.8 (COO entries {idx, grp, hi}), §2.9 (metadata word),
//! §2.13 (output interface), §2.14 (pass 2).

use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use crate::prim::zero_remove::ZeroRemove;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QOutput<const IB: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the engine's out_ready
    pub out_ready: Signal<In, Bit>,
    /// pass 2 advances this cycle (its output register is empty or taken)
    pub en2: Signal<Out, Bit>,
    /// the beat at the lanes' outputs is valid
    pub in_valid: Signal<In, Bit>,
    /// that beat is its token's first
    pub in_first: Signal<In, Bit>,
    /// that beat is its token's last
    pub in_last: Signal<In, Bit>,
    /// that beat's COO index base (its first position within its head, mod 64)
    pub in_base: Signal<In, Bits<8>>,
    /// per lane: the dense slot
    pub dense: Vec<Signal<In, Bits<IB>>>,
    /// per lane: the COO entry is kept
    pub keep: Vec<Signal<In, Bit>>,
    /// per lane: the entry's group bit
    pub grp: Vec<Signal<In, Bit>>,
    /// per lane: the entry's side bit
    pub hi: Vec<Signal<In, Bit>>,
    /// a token's first beat is read (its metadata is written)
    pub meta_push: Signal<In, Bit>,
    /// the token's metadata bytes (its record's (min, step) pairs, spec §2.9)
    pub meta_rec: Signal<In, Bits<96>>,
    /// the token's outlier counts
    pub meta_cnt: Vec<Signal<In, Bits<8>>>,
    /// the token's status
    pub meta_st: Signal<In, Bits<2>>,
    /// the engine's output port (spec §2.13)
    pub out_valid: Signal<Out, Bit>,
    /// dense slots, lane i
    pub out_dense: Vec<Signal<Out, Bits<IB>>>,
    /// COO entries, compacted from lane 0
    pub out_coo: Vec<Signal<Out, Bits<8>>>,
    /// COO entries in the beat
    pub out_coo_count: Signal<Out, Bits<8>>,
    /// first beat of a token
    pub out_first: Signal<Out, Bit>,
    /// last beat of a token
    pub out_last: Signal<Out, Bit>,
    /// metadata word bytes
    pub out_meta: Vec<Signal<Out, Bits<8>>>,
    /// segment counts
    pub out_counts: Vec<Signal<Out, Bits<8>>>,
    /// token status
    pub out_status: Signal<Out, Bits<2>>,
    // metadata FIFO: groups (12 bytes) and counts, status
    mf: FifoCtrl,
    mf_byte: Vec<FifoMem<8>>,
    mf_st: FifoMem<2>,
    // COO assembly and compaction
    base6: Signal<Local, Bits<8>>,
    coo: Vec<Signal<Local, Bits<8>>>,
    zr: ZeroRemove<8>,
    // dense slots, first, last and index base alongside the shifter
    zd: Vec<Reg<Bits<IB>>>,
    zf: Vec<Reg<Bit>>,
    zl: Vec<Reg<Bit>>,
    zb: Vec<Reg<Bits<8>>>,
    out_fire: Signal<Local, Bit>,
    gtmp: Signal<Local, Bit>,
    htmp: Signal<Local, Bit>,
    lane_idx: Vec<Constant<Bits<8>>>,
    /// Metadata byte positions.
    byte_off: Vec<Constant<Bits<32>>>,
    two8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero_ib: Constant<Bits<IB>>,
    _lanes: usize,
    /// The shifter's latency.
    _zl: usize,
    _cnts: usize,
    _bytes: usize,
}

impl<const IB: usize> QOutput<IB> {
    /// `lanes` per beat; `pipeline`: the shifter's register spacing
    /// (ZeroRemove); `counts`: segment counts of a token; `fifo`: metadata
    /// FIFO depth in tokens.
    pub fn new(lanes: usize, pipeline: usize, counts: usize, fifo: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let zl = ZeroRemove::<8>::latency(lanes, pipeline);
        let bytes = 12 + counts;
        QOutput {
            clock: Default::default(),
            reset: Default::default(),
            out_ready: Default::default(),
            en2: Default::default(),
            in_valid: Default::default(),
            in_first: Default::default(),
            in_last: Default::default(),
            in_base: Default::default(),
            dense: sigs(lanes),
            keep: sigs(lanes),
            grp: sigs(lanes),
            hi: sigs(lanes),
            meta_push: Default::default(),
            meta_rec: Default::default(),
            meta_cnt: sigs(counts),
            meta_st: Default::default(),
            out_valid: Default::default(),
            out_dense: sigs(lanes),
            out_coo: sigs(lanes),
            out_coo_count: Default::default(),
            out_first: Default::default(),
            out_last: Default::default(),
            out_meta: sigs(12),
            out_counts: sigs(counts),
            out_status: Default::default(),
            mf: FifoCtrl::new(fifo),
            mf_byte: (0..bytes).map(|_| FifoMem::new(fifo)).collect(),
            mf_st: FifoMem::new(fifo),
            base6: Default::default(),
            coo: sigs(lanes),
            zr: ZeroRemove::new(lanes, pipeline),
            zd: regs(zl * lanes),
            zf: regs(zl),
            zl: regs(zl),
            zb: regs(zl),
            out_fire: Default::default(),
            gtmp: Default::default(),
            htmp: Default::default(),
            lane_idx: consts(0..lanes as u64),
            byte_off: consts((0..12).map(|i| 8 * i)),
            two8: c(2),
            one8: c(1),
            zero_ib: c(0),
            _lanes: lanes,
            _zl: zl,
            _cnts: counts,
            _bytes: bytes,
        }
    }
}

impl<const IB: usize> Logic for QOutput<IB> {
    #[hdl_gen]
    fn update(&mut self) {
        self.en2.next = !self.zr.out_valid.val() | self.out_ready.val();
        self.out_fire.next = self.zr.out_valid.val() & self.out_ready.val();
        // COO entries {idx, grp, hi} (spec §2.8) through the zero-remove
        // shifter: it moves {lane, grp, hi}; the beat's index base, a multiple
        // of the lane count, is ORed in after it (idx = base + lane)
        self.zr.in_valid.next = self.in_valid.val();
        self.zf[0].d.next = self.in_first.val();
        self.zl[0].d.next = self.in_last.val();
        self.zb[0].d.next = self.in_base.val();
        self.zr.clock.next = self.clock.val();
        self.zr.reset.next = self.reset.val();
        self.zr.en.next = self.en2.val();
        for p in 0..self._lanes {
            self.gtmp.next = self.grp[p].val() & self.in_valid.val();
            self.htmp.next = self.hi[p].val() & self.in_valid.val();
            self.coo[p].next = (self.lane_idx[p].val() << self.two8.val())
                | (bit_cast::<8, 1>(self.gtmp.val().into()) << self.one8.val())
                | bit_cast::<8, 1>(self.htmp.val().into());
            self.zr.data[p].next = self.coo[p].val();
            // the lanes' late stages have no reset: a beat's valid bit gates
            // what they show
            self.zr.keep[p].next = self.keep[p].val() & self.in_valid.val();
        }
        // dense slots, first and last wait alongside the shifter
        for i in 0..self._zl {
            self.zf[i].clock.next = self.clock.val();
            self.zf[i].reset.next = self.reset.val();
            self.zf[i].en.next = self.en2.val();
            self.zl[i].clock.next = self.clock.val();
            self.zl[i].reset.next = self.reset.val();
            self.zl[i].en.next = self.en2.val();
            self.zb[i].clock.next = self.clock.val();
            self.zb[i].reset.next = self.reset.val();
            self.zb[i].en.next = self.en2.val();
        }
        for i in 1..self._zl {
            self.zf[i].d.next = self.zf[i - 1].q.val();
            self.zl[i].d.next = self.zl[i - 1].q.val();
            self.zb[i].d.next = self.zb[i - 1].q.val();
        }
        for n in self._lanes..(self._lanes + 1) {
            for p in 0..self._lanes {
                self.zd[p].clock.next = self.clock.val();
                self.zd[p].reset.next = self.reset.val();
                self.zd[p].en.next = self.en2.val();
                self.zd[p].d.next = self.zero_ib.val();
                if self.in_valid.val() {
                    self.zd[p].d.next = self.dense[p].val();
                }
            }
            for i in 1..self._zl {
                for p in 0..self._lanes {
                    self.zd[i * n + p].clock.next = self.clock.val();
                    self.zd[i * n + p].reset.next = self.reset.val();
                    self.zd[i * n + p].en.next = self.en2.val();
                    self.zd[i * n + p].d.next = self.zd[(i - 1) * n + p].q.val();
                }
            }
            for l in self._zl..(self._zl + 1) {
                for p in 0..self._lanes {
                    self.out_dense[p].next = self.zd[(l - 1) * n + p].q.val();
                }
                self.out_first.next = self.zf[l - 1].q.val();
                self.out_last.next = self.zl[l - 1].q.val();
            }
        }
        self.out_valid.next = self.zr.out_valid.val();
        self.out_coo_count.next = self.zr.count.val();
        for l in self._zl..(self._zl + 1) {
            self.base6.next = self.zb[l - 1].q.val() << self.two8.val();
        }
        for p in 0..self._lanes {
            self.out_coo[p].next = self.zr.out[p].val();
            if self.zr.count.val() > self.lane_idx[p].val() {
                self.out_coo[p].next = self.zr.out[p].val() | self.base6.val();
            }
        }

        // metadata FIFO: written at a token's first read, read at its output
        self.mf.clock.next = self.clock.val();
        self.mf.reset.next = self.reset.val();
        self.mf.push.next = self.meta_push.val();
        self.mf.pop.next = self.out_fire.val() & self.out_last.val() & !self.mf.empty.val();
        for i in 0..12 {
            self.mf_byte[i].wdata.next = self.meta_rec.val().get_bits::<8>(self.byte_off[i].val().index());
        }
        for s in 0..self._cnts {
            self.mf_byte[12 + s].wdata.next = self.meta_cnt[s].val();
        }
        for i in 0..self._bytes {
            self.mf_byte[i].clock.next = self.clock.val();
            self.mf_byte[i].reset.next = self.reset.val();
            self.mf_byte[i].we.next = self.meta_push.val();
            self.mf_byte[i].waddr.next = self.mf.waddr.val();
            self.mf_byte[i].raddr.next = self.mf.raddr.val();
        }
        for i in 0..12 {
            self.out_meta[i].next = self.mf_byte[i].rdata.val();
        }
        for i in 0..self._cnts {
            self.out_counts[i].next = self.mf_byte[12 + i].rdata.val();
        }
        self.mf_st.clock.next = self.clock.val();
        self.mf_st.reset.next = self.reset.val();
        self.mf_st.we.next = self.meta_push.val();
        self.mf_st.waddr.next = self.mf.waddr.val();
        self.mf_st.raddr.next = self.mf.raddr.val();
        self.mf_st.wdata.next = self.meta_st.val();
        self.out_status.next = self.mf_st.rdata.val();
    }
}
