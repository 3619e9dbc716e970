//! The Q load and K stream order of both HACK dot units (spec §15.16.1):
//! after reset a load is open; its `P`-th Q beat closes it; a new one opens
//! at a K token boundary when a Q beat is offered and no K beat transfers.
//! Counts the load's Q beats, the K beats taken (token boundaries) and the
//! K beats reaching the point where their Q partition is picked (`kout`,
//! with the token's first and last beat there).

use crate::prim::reg::{reg_logic, Reg};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LoadCtl {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset: a load open, every count 0
    pub reset: Signal<In, Bit>,
    /// a Q beat is offered
    pub q_valid: Signal<In, Bit>,
    /// a K beat is offered
    pub k_valid: Signal<In, Bit>,
    /// (registers) no K beat is before the point where its Q is picked
    pub q_room: Signal<In, Bit>,
    /// (a register) the K side can take a beat
    pub k_room: Signal<In, Bit>,
    /// a K beat reaches the point where its Q partition is picked
    pub issue: Signal<In, Bit>,
    /// the unit's q_ready
    pub q_ready: Signal<Out, Bit>,
    /// the unit's k_ready
    pub k_ready: Signal<Out, Bit>,
    /// a Q beat transfers
    pub q_take: Signal<Out, Bit>,
    /// a K beat transfers
    pub k_take: Signal<Out, Bit>,
    /// the partition index of the next Q beat
    pub qcnt: Signal<Out, Bits<8>>,
    /// the partition index of the issuing K beat
    pub kout: Signal<Out, Bits<8>>,
    /// the issuing K beat is its token's first
    pub first: Signal<Out, Bit>,
    /// the issuing K beat is its token's last
    pub last: Signal<Out, Bit>,
    loading: Reg<Bit>,
    qc: Reg<Bits<8>>,
    kin: Reg<Bits<8>>,
    ko: Reg<Bits<8>>,
    k_pm1: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
}

impl LoadCtl {
    /// `parts` partitions per token and per load.
    pub fn new(parts: usize) -> Self {
        LoadCtl {
            clock: Default::default(),
            reset: Default::default(),
            q_valid: Default::default(),
            k_valid: Default::default(),
            q_room: Default::default(),
            k_room: Default::default(),
            issue: Default::default(),
            q_ready: Default::default(),
            k_ready: Default::default(),
            q_take: Default::default(),
            k_take: Default::default(),
            qcnt: Default::default(),
            kout: Default::default(),
            first: Default::default(),
            last: Default::default(),
            loading: Reg::new(true),
            qc: Reg::default(),
            kin: Reg::default(),
            ko: Reg::default(),
            k_pm1: Constant::new(((parts - 1) as u64).into()),
            k_one8: Constant::new(1u64.into()),
            k_zero8: Constant::new(0u64.into()),
        }
    }
}

reg_logic!(LoadCtl;
    regs [loading, qc, kin, ko];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        self.q_ready.next = self.loading.q.val() & self.q_room.val();
        self.k_ready.next = self.k_room.val() & !self.loading.q.val();
        self.q_take.next = self.q_valid.val() & self.loading.q.val() & self.q_room.val();
        self.k_take.next = self.k_valid.val() & self.k_room.val() & !self.loading.q.val();
        self.loading.en.next = true;
        self.qc.en.next = true;
        if self.q_valid.val() & self.loading.q.val() & self.q_room.val() {
            self.qc.d.next = self.qc.q.val() + self.k_one8.val();
            if self.qc.q.val() == self.k_pm1.val() {
                self.qc.d.next = self.k_zero8.val();
                self.loading.d.next = false;
            }
        }
        if !self.loading.q.val()
            & self.q_valid.val()
            & (self.kin.q.val() == self.k_zero8.val())
            & !(self.k_valid.val() & self.k_room.val())
        {
            self.loading.d.next = true;
        }
        self.kin.en.next = self.k_valid.val() & self.k_room.val() & !self.loading.q.val();
        self.kin.d.next = self.kin.q.val() + self.k_one8.val();
        if self.kin.q.val() == self.k_pm1.val() {
            self.kin.d.next = self.k_zero8.val();
        }
        self.ko.en.next = self.issue.val();
        self.ko.d.next = self.ko.q.val() + self.k_one8.val();
        if self.ko.q.val() == self.k_pm1.val() {
            self.ko.d.next = self.k_zero8.val();
        }
        self.qcnt.next = self.qc.q.val();
        self.kout.next = self.ko.q.val();
        self.first.next = self.ko.q.val() == self.k_zero8.val();
        self.last.next = self.ko.q.val() == self.k_pm1.val();
    }
);
