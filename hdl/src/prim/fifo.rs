//! Register-file FIFO pieces. A beat of a runtime number of lanes is a `Vec`
//! of per-lane values, so storage is one [`FifoMem`] per lane (or byte)
//! sharing one [`FifoCtrl`]. A real flow would map the storage to SRAM.
//!
//! Addresses are `A` bits and the occupancy count `C` bits, 8 and 9 unless
//! a small FIFO asks for fewer: a shallow FIFO's 8-bit pointer increment is
//! a carry chain behind its late push/pop for nothing. The constant fields
//! keep their 8/9-bit names so that the Verilog of 8-bit users is unchanged.

use super::reg::Reg;
use rust_hdl::prelude::*;

/// Depth-`D` storage of `N`-bit words: synchronous write, combinational read.
#[derive(LogicBlock)]
pub struct FifoMem<const N: usize, const A: usize = 8> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Write `wdata` to `waddr` at the next edge.
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<A>>,
    pub wdata: Signal<In, Bits<N>>,
    pub raddr: Signal<In, Bits<A>>,
    /// Word at `raddr`.
    pub rdata: Signal<Out, Bits<N>>,
    mem: Vec<Reg<Bits<N>>>,
    idx: Vec<Constant<Bits<A>>>,
    hit: Signal<Local, Bit>,
    mask: Signal<Local, Bits<N>>,
    zero: Constant<Bits<N>>,
    _d: usize,
}

impl<const N: usize, const A: usize> FifoMem<N, A> {
    pub fn new(depth: usize) -> Self {
        assert!(A <= 8 && (1..=255).contains(&depth) && depth - 1 < 1 << A);
        FifoMem {
            clock: Default::default(),
            reset: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            mem: (0..depth).map(|_| Reg::default()).collect(),
            idx: (0..depth).map(|i| Constant::new((i as u64).into())).collect(),
            hit: Default::default(),
            mask: Default::default(),
            zero: Constant::new(0u64.into()),
            _d: depth,
        }
    }
}

impl<const N: usize, const A: usize> Logic for FifoMem<N, A> {
    #[hdl_gen]
    fn update(&mut self) {
        // read: OR over entries of (entry AND its select mask), a form
        // synthesis balances into a tree
        self.rdata.next = self.zero.val();
        for i in 0..self._d {
            self.mem[i].clock.next = self.clock.val();
            self.mem[i].reset.next = self.reset.val();
            self.mem[i].en.next = self.we.val() & (self.waddr.val() == self.idx[i].val());
            self.mem[i].d.next = self.wdata.val();
            self.hit.next = self.raddr.val() == self.idx[i].val();
            self.mask.next = self.zero.val() - bit_cast::<N, 1>(self.hit.val().into());
            self.rdata.next = self.rdata.val() | (self.mem[i].q.val() & self.mask.val());
        }
    }
}

/// Pointers and occupancy of a depth-`D` FIFO. Pushing when full or popping
/// when empty is the user's error; the engines never do either (their
/// credit counters guarantee room), and the pointers then simply wrap.
#[derive(LogicBlock)]
pub struct FifoCtrl<const A: usize = 8, const C: usize = 9> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub push: Signal<In, Bit>,
    pub pop: Signal<In, Bit>,
    /// Address the next push writes.
    pub waddr: Signal<Out, Bits<A>>,
    /// Address of the oldest entry.
    pub raddr: Signal<Out, Bits<A>>,
    pub empty: Signal<Out, Bit>,
    wp: Reg<Bits<A>>,
    rp: Reg<Bits<A>>,
    cnt: Reg<Bits<C>>,
    last: Constant<Bits<A>>,
    zero8: Constant<Bits<A>>,
    one8: Constant<Bits<A>>,
    zero9: Constant<Bits<C>>,
    one9: Constant<Bits<C>>,
}

impl<const A: usize, const C: usize> FifoCtrl<A, C> {
    pub fn new(depth: usize) -> Self {
        assert!(A <= 8 && C <= 9 && (1..=255).contains(&depth) && depth - 1 < 1 << A && depth < 1 << C);
        FifoCtrl {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            waddr: Default::default(),
            raddr: Default::default(),
            empty: Default::default(),
            wp: Reg::default(),
            rp: Reg::default(),
            cnt: Reg::default(),
            last: Constant::new(((depth - 1) as u64).into()),
            zero8: Constant::new(0u64.into()),
            one8: Constant::new(1u64.into()),
            zero9: Constant::new(0u64.into()),
            one9: Constant::new(1u64.into()),
        }
    }
}

impl<const A: usize, const C: usize> Logic for FifoCtrl<A, C> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, wp, rp, cnt);
        self.wp.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.cnt.reset.next = self.reset.val();
        self.wp.en.next = self.push.val();
        self.rp.en.next = self.pop.val();
        self.cnt.en.next = self.push.val() ^ self.pop.val();
        if self.wp.q.val() == self.last.val() {
            self.wp.d.next = self.zero8.val();
        } else {
            self.wp.d.next = self.wp.q.val() + self.one8.val();
        }
        if self.rp.q.val() == self.last.val() {
            self.rp.d.next = self.zero8.val();
        } else {
            self.rp.d.next = self.rp.q.val() + self.one8.val();
        }
        if self.push.val() {
            self.cnt.d.next = self.cnt.q.val() + self.one9.val();
        } else {
            self.cnt.d.next = self.cnt.q.val() - self.one9.val();
        }
        self.waddr.next = self.wp.q.val();
        self.raddr.next = self.rp.q.val();
        self.empty.next = self.cnt.q.val() == self.zero9.val();
    }
}

/// Depth-`D` FIFO of `N`-bit words held in order in a shift register, so
/// that the oldest word is a register output with no read multiplexer in
/// front of it: for the few fields a consumer needs early in its cycle. It
/// counts its own occupancy; pushing when full or popping when empty is the
/// user's error, as for [`FifoCtrl`].
#[derive(LogicBlock)]
pub struct FifoShift<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub push: Signal<In, Bit>,
    pub pop: Signal<In, Bit>,
    pub wdata: Signal<In, Bits<N>>,
    /// The oldest word (undefined when empty).
    pub rdata: Signal<Out, Bits<N>>,
    /// The second oldest word (undefined with fewer than two), so a
    /// consumer can prepare what it needs of the head after a pop.
    pub rdata1: Signal<Out, Bits<N>>,
    slot: Vec<Reg<Bits<N>>>,
    cnt: Reg<Bits<8>>,
    wpos: Signal<Local, Bits<8>>,
    idx: Vec<Constant<Bits<8>>>,
    one8: Constant<Bits<8>>,
    _d: usize,
    _dm1: usize,
}

impl<const N: usize> FifoShift<N> {
    pub fn new(depth: usize) -> Self {
        assert!((2..=255).contains(&depth));
        FifoShift {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            wdata: Default::default(),
            rdata: Default::default(),
            rdata1: Default::default(),
            slot: (0..depth).map(|_| Reg::default()).collect(),
            cnt: Reg::default(),
            wpos: Default::default(),
            idx: (0..depth).map(|i| Constant::new((i as u64).into())).collect(),
            one8: Constant::new(1u64.into()),
            _d: depth,
            _dm1: depth - 1,
        }
    }
}

impl<const N: usize> Logic for FifoShift<N> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, cnt);
        self.cnt.reset.next = self.reset.val();
        self.cnt.en.next = self.push.val() ^ self.pop.val();
        if self.push.val() {
            self.cnt.d.next = self.cnt.q.val() + self.one8.val();
        } else {
            self.cnt.d.next = self.cnt.q.val() - self.one8.val();
        }
        // a pop shifts every word down one slot; a push writes behind the
        // last word left
        self.wpos.next = self.cnt.q.val();
        if self.pop.val() {
            self.wpos.next = self.cnt.q.val() - self.one8.val();
        }
        for i in 0..self._dm1 {
            self.slot[i].clock.next = self.clock.val();
            self.slot[i].reset.next = self.reset.val();
            self.slot[i].en.next = self.pop.val() | self.push.val();
            self.slot[i].d.next = self.slot[i].q.val();
            if self.pop.val() {
                self.slot[i].d.next = self.slot[i + 1].q.val();
            }
            if self.push.val() & (self.wpos.val() == self.idx[i].val()) {
                self.slot[i].d.next = self.wdata.val();
            }
        }
        for i in self._dm1..self._d {
            self.slot[i].clock.next = self.clock.val();
            self.slot[i].reset.next = self.reset.val();
            self.slot[i].en.next = self.push.val() & (self.wpos.val() == self.idx[i].val());
            self.slot[i].d.next = self.wdata.val();
        }
        self.rdata.next = self.slot[0].q.val();
        self.rdata1.next = self.slot[1].q.val();
    }
}
