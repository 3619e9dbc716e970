//! The Oaken MMU's free list: a FIFO of physical page numbers, popped at the
//! head as a write takes pages, pushed at the tail as a free returns them.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (pages allocated
//! on demand from a free list). Spec: docs/spec.md §10.4 (free list and its
//! reset content), §10.12 (storage).
//!
//! The FIFO's storage is a memory (no reset): an entry never pushed since
//! reset reads as its own index, which a watermark of pushes decides, so
//! nothing reads a word it did not write.

use super::mmu::D;
use crate::prim::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MmuFreeList {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Read the head entry (its page is `rdata` next cycle).
    pub rd: Signal<In, Bit>,
    /// Pop the head entry read before.
    pub pop: Signal<In, Bit>,
    /// Push `push_page` at the tail.
    pub push: Signal<In, Bit>,
    pub push_page: Signal<In, Bits<16>>,
    /// The last read entry.
    pub rdata: Signal<Out, Bits<16>>,
    /// The head index.
    pub head: Signal<Out, Bits<16>>,
    /// The head entry was never pushed: its page is its index.
    pub fresh: Signal<Out, Bit>,
    /// Entries held.
    pub count: Signal<Out, Bits<D>>,

    m_fl: crate::prim::ram::SpRam<16, 16>,
    fl_head: Reg<Bits<16>>,
    fl_tail: Reg<Bits<16>>,
    fl_cnt: Reg<Bits<D>>,
    fl_wm: Reg<Bits<D>>,
    head_nx: Signal<Local, Bits<16>>,
    tail_nx: Signal<Local, Bits<16>>,
    k_np: Constant<Bits<D>>,
    k_np1: Constant<Bits<16>>,
    k_one: Constant<Bits<D>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    /// Value masks (the count and watermark reach np; indices below np).
    k_m_npc: Constant<Bits<D>>,
    k_m_pg16: Constant<Bits<16>>,
}

impl MmuFreeList {
    /// `np` pages, stored in memory `module` (role `name`, `width` bits).
    pub fn new(np: usize, module: &str, name: &str, width: usize) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let bw = |v: u64| (64 - v.leading_zeros() as usize).max(1);
        let m = |w: usize| (1u64 << w) - 1;
        let np64 = np as u64;
        MmuFreeList {
            clock: Default::default(),
            reset: Default::default(),
            rd: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            push_page: Default::default(),
            rdata: Default::default(),
            head: Default::default(),
            fresh: Default::default(),
            count: Default::default(),
            m_fl: crate::prim::ram::SpRam::new(module, name, np, width),
            fl_head: Reg::default(),
            fl_tail: Reg::default(),
            fl_cnt: Reg::new(np64.into()),
            fl_wm: Reg::default(),
            head_nx: Default::default(),
            tail_nx: Default::default(),
            k_np: c(np64),
            k_np1: c(np64 - 1),
            k_one: c(1),
            k_zero16: c(0),
            k_one16: c(1),
            k_m_npc: c(m(bw(np64))),
            k_m_pg16: c(m(bw(np64 - 1))),
        }
    }
}

impl Logic for MmuFreeList {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, fl_head, fl_tail, fl_cnt, fl_wm);
        self.fl_head.reset.next = self.reset.val();
        self.fl_tail.reset.next = self.reset.val();
        self.fl_cnt.reset.next = self.reset.val();
        self.fl_wm.reset.next = self.reset.val();
        self.fl_head.en.next = false;
        self.fl_tail.en.next = false;
        self.fl_cnt.en.next = false;
        self.fl_wm.en.next = false;
        self.fl_head.d.next = self.fl_head.q.val();
        self.fl_tail.d.next = self.fl_tail.q.val();
        self.fl_cnt.d.next = self.fl_cnt.q.val();
        self.fl_wm.d.next = self.fl_wm.q.val();

        // the storage: the head is read, the tail written
        self.m_fl.clock.next = self.clock.val();
        self.m_fl.en.next = false;
        self.m_fl.we.next = false;
        self.m_fl.addr.next = self.fl_head.q.val();
        self.m_fl.wdata.next = self.k_zero16.val();
        if self.rd.val() {
            self.m_fl.en.next = true;
        }
        self.rdata.next = self.m_fl.rdata.val();
        self.head.next = self.fl_head.q.val();
        self.count.next = self.fl_cnt.q.val();
        self.fresh.next = bit_cast::<D, 16>(self.fl_head.q.val()) >= self.fl_wm.q.val();

        // indices wrap at np
        self.head_nx.next = self.fl_head.q.val() + self.k_one16.val();
        if self.fl_head.q.val() == self.k_np1.val() {
            self.head_nx.next = self.k_zero16.val();
        }
        self.tail_nx.next = self.fl_tail.q.val() + self.k_one16.val();
        if self.fl_tail.q.val() == self.k_np1.val() {
            self.tail_nx.next = self.k_zero16.val();
        }

        if self.pop.val() {
            self.fl_head.en.next = true;
            self.fl_head.d.next = self.head_nx.val();
            self.fl_cnt.en.next = true;
            self.fl_cnt.d.next = self.fl_cnt.q.val() - self.k_one.val();
        }
        if self.push.val() {
            self.m_fl.en.next = true;
            self.m_fl.we.next = true;
            self.m_fl.addr.next = self.fl_tail.q.val();
            self.m_fl.wdata.next = self.push_page.val();
            self.fl_tail.en.next = true;
            self.fl_tail.d.next = self.tail_nx.val();
            self.fl_cnt.en.next = true;
            self.fl_cnt.d.next = self.fl_cnt.q.val() + self.k_one.val();
            if self.fl_wm.q.val() != self.k_np.val() {
                self.fl_wm.en.next = true;
                self.fl_wm.d.next = self.fl_wm.q.val() + self.k_one.val();
            }
        }

        // value masks
        self.fl_cnt.d.next = self.fl_cnt.d.val() & self.k_m_npc.val();
        self.fl_wm.d.next = self.fl_wm.d.val() & self.k_m_npc.val();
        self.fl_head.d.next = self.fl_head.d.val() & self.k_m_pg16.val();
        self.fl_tail.d.next = self.fl_tail.d.val() & self.k_m_pg16.val();
    }
}
