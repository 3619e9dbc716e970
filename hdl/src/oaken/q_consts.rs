//! Constants FIFO of the Oaken quantization engine: each token's record
//! (thresholds, each group's min and step, and in `paper` mode the folded
//! groups' z), segment counts and status, from
//! the per-token unit to pass 2, which takes them at the token's first
//! read. While the FIFO is empty its head is the per-token unit's result
//! itself, so a token pushed and popped at the same edge never waits.
//! Paper: Oaken (ISCA 2025) §5.2 "Quantization engine" (the quantizers
//! take each token's scale once it is known). Spec: docs/spec.md §2.14
//! (the constants FIFO between the per-token unit and pass 2), §2.9 (the
//! metadata the record becomes).

use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::vecs::{consts, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QConstFifo {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// the per-token unit presents a token's result (push)
    pub push: Signal<In, Bit>,
    /// pass 2 takes the head (a token's first read)
    pub pop: Signal<In, Bit>,
    /// the result's threshold set
    pub thr: Signal<In, Bits<64>>,
    /// group g's min, FP16
    pub min: Vec<Signal<In, Bits<16>>>,
    /// group g's step, FP16
    pub step: Vec<Signal<In, Bits<16>>>,
    /// outlier count per segment
    pub counts: Vec<Signal<In, Bits<8>>>,
    /// token status
    pub status: Signal<In, Bits<2>>,
    /// `paper` mode: z of the outer group (0 in the other modes)
    pub z0: Signal<In, Bits<16>>,
    /// `paper` mode: z of the middle group (0 in the other modes)
    pub z1: Signal<In, Bits<16>>,
    /// nothing is stored (the head is then the input itself)
    pub empty: Signal<Out, Bit>,
    /// the head's record {z, step2, min2, step1, min1, step0, min0, thr},
    /// z at [191:160]
    pub head_rec: Signal<Out, Bits<192>>,
    /// the head's counts
    pub head_cnt: Vec<Signal<Out, Bits<8>>>,
    /// the head's status
    pub head_st: Signal<Out, Bits<2>>,
    cf: FifoCtrl,
    cf_rec: FifoMem<192>,
    cf_cnt: Vec<FifoMem<8>>,
    cf_st: FifoMem<2>,
    rec_in: Signal<Local, Bits<192>>,
    rtmp: Signal<Local, Bits<16>>,
    /// Record positions of min0, step0, min1, step1, min2, step2.
    rec_sh: Vec<Constant<Bits<192>>>,
    z_sh: Vec<Constant<Bits<192>>>,
    _cnts: usize,
}

impl QConstFifo {
    /// `counts`: segment counts of a token; `depth`: FIFO depth in tokens.
    pub fn new(counts: usize, depth: usize) -> Self {
        QConstFifo {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            thr: Default::default(),
            min: sigs(3),
            step: sigs(3),
            counts: sigs(counts),
            status: Default::default(),
            z0: Default::default(),
            z1: Default::default(),
            empty: Default::default(),
            head_rec: Default::default(),
            head_cnt: sigs(counts),
            head_st: Default::default(),
            cf: FifoCtrl::new(depth),
            cf_rec: FifoMem::new(depth),
            cf_cnt: (0..counts).map(|_| FifoMem::new(depth)).collect(),
            cf_st: FifoMem::new(depth),
            rec_in: Default::default(),
            rtmp: Default::default(),
            rec_sh: consts((0..6).map(|i| 64 + 16 * i)),
            z_sh: consts([160, 176]),
            _cnts: counts,
        }
    }
}

impl Logic for QConstFifo {
    #[hdl_gen]
    fn update(&mut self) {
        // record: {z, step2, min2, step1, min1, step0, min0, thr}
        self.rec_in.next = bit_cast::<192, 64>(self.thr.val())
            | (bit_cast::<192, 16>(self.z0.val()) << self.z_sh[0].val())
            | (bit_cast::<192, 16>(self.z1.val()) << self.z_sh[1].val());
        for g in 0..3 {
            self.rtmp.next = self.min[g].val();
            self.rec_in.next = self.rec_in.val() | (bit_cast::<192, 16>(self.rtmp.val()) << self.rec_sh[2 * g].val());
            self.rtmp.next = self.step[g].val();
            self.rec_in.next =
                self.rec_in.val() | (bit_cast::<192, 16>(self.rtmp.val()) << self.rec_sh[2 * g + 1].val());
        }
        self.cf.clock.next = self.clock.val();
        self.cf.reset.next = self.reset.val();
        self.cf.push.next = self.push.val();
        self.cf.pop.next = self.pop.val();
        self.empty.next = self.cf.empty.val();
        // the FIFO's head, or the result itself when the FIFO is empty
        self.head_rec.next = self.cf_rec.rdata.val();
        self.head_st.next = self.cf_st.rdata.val();
        for s in 0..self._cnts {
            self.head_cnt[s].next = self.cf_cnt[s].rdata.val();
        }
        if self.cf.empty.val() {
            self.head_rec.next = self.rec_in.val();
            self.head_st.next = self.status.val();
            for s in 0..self._cnts {
                self.head_cnt[s].next = self.counts[s].val();
            }
        }
        self.cf_rec.clock.next = self.clock.val();
        self.cf_rec.reset.next = self.reset.val();
        self.cf_rec.we.next = self.push.val();
        self.cf_rec.waddr.next = self.cf.waddr.val();
        self.cf_rec.raddr.next = self.cf.raddr.val();
        self.cf_rec.wdata.next = self.rec_in.val();
        self.cf_st.clock.next = self.clock.val();
        self.cf_st.reset.next = self.reset.val();
        self.cf_st.we.next = self.push.val();
        self.cf_st.waddr.next = self.cf.waddr.val();
        self.cf_st.raddr.next = self.cf.raddr.val();
        self.cf_st.wdata.next = self.status.val();
        for s in 0..self._cnts {
            self.cf_cnt[s].clock.next = self.clock.val();
            self.cf_cnt[s].reset.next = self.reset.val();
            self.cf_cnt[s].we.next = self.push.val();
            self.cf_cnt[s].waddr.next = self.cf.waddr.val();
            self.cf_cnt[s].raddr.next = self.cf.raddr.val();
            self.cf_cnt[s].wdata.next = self.counts[s].val();
        }
    }
}
