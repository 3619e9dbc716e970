//! Prefill buffer and replay of the Titanus quantization unit. In PREFILL
//! each prefill beat (value and kept bit per lane) is written to the
//! buffer, one word per beat, in arrival order; QUANT's replay (QREP) then
//! reads the words back one per cycle, in the same order, and gives them
//! to the coders with their token position and last-beat flag, so the
//! prefill's tokens are coded only once every channel has its level 0.
//! The memory's read register is the replay's one stage: a read is issued
//! while the beat read before it is pushed, so a beat per cycle leaves
//! while the coders advance.
//! Paper: Titanus (GLSVLSI 2025) §2.3 (quantization without
//! re-quantization: the prefill is coded once, after its ranges are known),
//! §4.4 and Figure 7 (the QU's buffer).
//! Spec: docs/spec.md §11.7 (QUANT), §11.14.5 (Scheduler, Memory).

use super::quantizer::QuGeometry;
use crate::prim::ram::SpRam;
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::{consts, sigs};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PrefillBuffer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: buffer empty, no replay (the memory keeps its words)
    pub reset: Signal<In, Bit>,
    /// a start: the buffer empties
    pub do_start: Signal<In, Bit>,
    /// a prefill beat is done: M's beat is written
    pub do_mmf: Signal<In, Bit>,
    /// M's elements, one per lane
    pub item_x: Vec<Signal<In, Bits<8>>>,
    /// M's kept bits, one per lane
    pub item_k: Vec<Signal<In, Bit>>,
    /// QUANT's channels are done: the replay starts from the first word
    pub rep_init: Signal<In, Bit>,
    /// QREP: the replay runs
    pub replay: Signal<In, Bit>,
    /// the coders advance this cycle
    pub en_code: Signal<In, Bit>,
    /// a replayed beat enters the coders
    pub push: Signal<Out, Bit>,
    /// every buffered beat was pushed (with replay)
    pub rep_end: Signal<Out, Bit>,
    /// the replayed beat's row (its channels' row read)
    pub row: Signal<Out, Bits<10>>,
    /// the replayed beat's token position
    pub tok: Signal<Out, Bits<16>>,
    /// the replayed beat is its token's last
    pub last: Signal<Out, Bit>,
    /// the replayed beat's elements, one per lane
    pub x: Vec<Signal<Out, Bits<8>>>,
    /// the replayed beat's kept bits, one per lane
    pub k: Vec<Signal<Out, Bit>>,
    // write and read pointers in words (one bit above the 22 address bits)
    wp: Reg<Bits<23>>,
    rp: Reg<Bits<23>>,
    // the replayed beat's row and token
    rrow: Reg<Bits<10>>,
    rtok: Reg<Bits<16>>,
    // the memory's read register holds a beat not yet pushed
    have: Reg<Bit>,
    // writes go through a register (the decision's fanout stays off the
    // memory); the replay starts QLEV cycles after the last write
    pw_v: Reg<Bit>,
    pw_a: Reg<Bits<22>>,
    pw_d: Reg<Bits<576>>,
    pbuf: SpRam<22, 576>,
    push_rep: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    w9: Signal<Local, Bits<9>>,
    x8: Signal<Local, Bits<8>>,
    bw: Signal<Local, Bits<576>>,
    boff: Vec<Constant<Bits<576>>>,
    bbit: Vec<Constant<Bits<32>>>,
    bkbit: Vec<Constant<Bits<32>>>,
    nbeats: Constant<Bits<11>>,
    one10: Constant<Bits<10>>,
    one11: Constant<Bits<11>>,
    one16: Constant<Bits<16>>,
    one23: Constant<Bits<23>>,
    k9_256: Constant<Bits<9>>,
    zero10: Constant<Bits<10>>,
    zero16: Constant<Bits<16>>,
    zero23: Constant<Bits<23>>,
    zero576: Constant<Bits<576>>,
    _n: usize,
}

impl PrefillBuffer {
    /// `g` checked as for the unit; `module` names the memory.
    pub fn new(g: &QuGeometry, module: &str) -> Self {
        let n = g.lanes;
        let mem = &g.memories(module)[0];
        PrefillBuffer {
            clock: Default::default(),
            reset: Default::default(),
            do_start: Default::default(),
            do_mmf: Default::default(),
            item_x: sigs(n),
            item_k: sigs(n),
            rep_init: Default::default(),
            replay: Default::default(),
            en_code: Default::default(),
            push: Default::default(),
            rep_end: Default::default(),
            row: Default::default(),
            tok: Default::default(),
            last: Default::default(),
            x: sigs(n),
            k: sigs(n),
            wp: Reg::default(),
            rp: Reg::default(),
            rrow: Reg::default(),
            rtok: Reg::default(),
            have: Reg::default(),
            pw_v: Reg::default(),
            pw_a: Reg::default(),
            pw_d: Reg::default(),
            pbuf: SpRam::new(&mem.module, &mem.name, mem.depth, mem.width),
            push_rep: Default::default(),
            issue: Default::default(),
            w9: Default::default(),
            x8: Default::default(),
            bw: Default::default(),
            boff: consts((0..n as u64).map(|i| 9 * i)),
            bbit: consts((0..n as u64).map(|i| 9 * i)),
            bkbit: consts((0..n as u64).map(|i| 9 * i + 8)),
            nbeats: Constant::new((g.beats() as u64).into()),
            one10: Constant::new(1u64.into()),
            one11: Constant::new(1u64.into()),
            one16: Constant::new(1u64.into()),
            one23: Constant::new(1u64.into()),
            k9_256: Constant::new(256u64.into()),
            zero10: Constant::new(0u64.into()),
            zero16: Constant::new(0u64.into()),
            zero23: Constant::new(0u64.into()),
            zero576: Constant::new(0u64.into()),
            _n: n,
        }
    }
}

reg_logic!(PrefillBuffer;
    regs [wp, rp, rrow, rtok, have, pw_v, pw_a, pw_d];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        // ---- replay: one buffered beat per cycle into the coders ----
        self.last.next = bit_cast::<11, 10>(self.rrow.q.val()) + self.one11.val() == self.nbeats.val();
        self.rrow.d.next = self.rrow.q.val() + self.one10.val();
        self.rp.d.next = self.rp.q.val() + self.one23.val();
        self.push_rep.next = false;
        self.issue.next = false;
        self.rep_end.next = false;
        if self.replay.val() {
            self.push_rep.next = self.have.q.val() & self.en_code.val();
            self.issue.next = (self.rp.q.val() != self.wp.q.val()) & (!self.have.q.val() | self.push_rep.val());
            self.rp.en.next = self.issue.val();
            self.have.en.next = true;
            self.have.d.next = self.issue.val() | (self.have.q.val() & !self.push_rep.val());
            if self.push_rep.val() {
                self.rrow.en.next = true;
                if self.last.val() {
                    self.rrow.d.next = self.zero10.val();
                    self.rtok.en.next = true;
                    self.rtok.d.next = self.rtok.q.val() + self.one16.val();
                }
            }
            self.rep_end.next = (self.rp.q.val() == self.wp.q.val()) & !self.have.q.val();
        }
        if self.rep_init.val() {
            self.rrow.en.next = true;
            self.rrow.d.next = self.zero10.val();
            self.rtok.en.next = true;
            self.rtok.d.next = self.zero16.val();
            self.rp.en.next = true;
            self.rp.d.next = self.zero23.val();
            self.have.en.next = true;
            self.have.d.next = false;
        }
        self.push.next = self.push_rep.val();
        self.row.next = self.rrow.q.val();
        self.tok.next = self.rtok.q.val();

        // ---- writes: prefill beats, in order from word 0 of a sequence ----
        self.wp.en.next = self.do_start.val() | self.do_mmf.val();
        self.wp.d.next = self.wp.q.val() + self.one23.val();
        if self.do_start.val() {
            self.wp.d.next = self.zero23.val();
        }
        // lane i: kept bit 9i+8, value 9i+7..9i
        self.bw.next = self.zero576.val();
        for p in 0..self._n {
            self.x8.next = self.item_x[p].val();
            self.w9.next = bit_cast::<9, 8>(self.x8.val());
            if self.item_k[p].val() {
                self.w9.next = self.w9.val() | self.k9_256.val();
            }
            self.bw.next = self.bw.val() | (bit_cast::<576, 9>(self.w9.val()) << self.boff[p].val());
        }
        self.pw_v.en.next = true;
        self.pw_v.d.next = self.do_mmf.val();
        self.pw_a.en.next = true;
        self.pw_a.d.next = self.wp.q.val().get_bits::<22>(0);
        self.pw_d.en.next = true;
        self.pw_d.d.next = self.bw.val();
        // one port: reads happen only in QREP, which starts after QLEV's
        // cycles, so after the last write has landed
        self.pbuf.clock.next = self.clock.val();
        self.pbuf.en.next = self.pw_v.q.val() | self.issue.val();
        self.pbuf.we.next = self.pw_v.q.val();
        self.pbuf.addr.next = self.rp.q.val().get_bits::<22>(0);
        if self.pw_v.q.val() {
            self.pbuf.addr.next = self.pw_a.q.val();
        }
        self.pbuf.wdata.next = self.pw_d.q.val();
        for p in 0..self._n {
            self.x[p].next = self.pbuf.rdata.val().get_bits::<8>(self.bbit[p].val().index());
            self.k[p].next = self.pbuf.rdata.val().get_bit(self.bkbit[p].val().index());
        }
    }
);
