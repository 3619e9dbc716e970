//! Coders and record output of the Titanus quantization unit: the lane
//! coders with the beat's position and last flag carried beside them, the
//! zero-remove shifter that compacts the non-zero codes, the saturated
//! count, and the output register with its skid.
//! Paper: Titanus (GLSVLSI 2025) §2.3 (per-channel quantization), §4.4 and
//! Figure 7 (quantizer lanes, output).
//! Spec: docs/spec.md §11.5.3 (codes), §11.7.1 (records), §11.6.4
//! (saturation status), §11.14.5.

use super::qu_lane::{QuLane, LANE_STAGES};
use crate::prim::counter::StatCounter;
use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
use crate::prim::zero_remove::ZeroRemove;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QuOutput {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A beat enters the coders (only while `en_code`).
    pub push: Signal<In, Bit>,
    /// Its token position and last-beat flag.
    pub pos0: Signal<In, Bits<16>>,
    pub last0: Signal<In, Bit>,
    /// Its elements and kept bits, per lane.
    pub x: Vec<Signal<In, Bits<8>>>,
    pub k: Vec<Signal<In, Bit>>,
    /// Each lane's channel's current level, and Q = 2^bits - 1.
    pub tl: Vec<Signal<In, Bits<8>>>,
    pub th: Vec<Signal<In, Bits<8>>>,
    pub s: Vec<Signal<In, Bits<16>>>,
    pub zs: Vec<Signal<In, Bits<24>>>,
    pub q: Signal<In, Bits<4>>,
    /// The coders advance (the output skid is empty).
    pub en_code: Signal<Out, Bit>,
    /// The record output port (spec §11.13).
    pub rec_valid: Signal<Out, Bit>,
    pub rec_ready: Signal<In, Bit>,
    pub rec_pos: Signal<Out, Bits<16>>,
    pub rec_index: Vec<Signal<Out, Bit>>,
    pub rec_label: Vec<Signal<Out, Bit>>,
    pub rec_codes: Vec<Signal<Out, Bits<4>>>,
    pub rec_count: Signal<Out, Bits<8>>,
    pub rec_last: Signal<Out, Bit>,
    pub rec_saturated: Signal<Out, Bits<8>>,
    /// Saturated elements taken so far, and whether any was.
    pub st_saturated: Signal<Out, Bits<32>>,
    pub st_limit_hit: Signal<Out, Bit>,
    lanes: Vec<QuLane>,
    en_c: Signal<Local, Bit>,
    ev: Vec<Reg<Bit>>,
    epos: Vec<Reg<Bits<16>>>,
    elast: Vec<Reg<Bit>>,
    zr: ZeroRemove<4>,
    pc: Vec<Signal<Local, Bits<8>>>,
    dl_bits: Vec<Reg<Bit>>,
    dl_pos: Vec<Reg<Bits<16>>>,
    dl_last: Vec<Reg<Bit>>,
    dl_sat: Vec<Reg<Bits<8>>>,
    fire: Signal<Local, Bit>,
    x_v: Signal<Local, Bit>,
    o_load: Signal<Local, Bit>,
    k_load: Signal<Local, Bit>,
    x_codes: Vec<Signal<Local, Bits<4>>>,
    x_idx: Vec<Signal<Local, Bit>>,
    x_lab: Vec<Signal<Local, Bit>>,
    x_pos: Signal<Local, Bits<16>>,
    x_last: Signal<Local, Bit>,
    x_sat: Signal<Local, Bits<8>>,
    o_v: Reg<Bit>,
    o_pos: Reg<Bits<16>>,
    o_last: Reg<Bit>,
    o_sat: Reg<Bits<8>>,
    o_cnt: Reg<Bits<8>>,
    o_idx: Vec<Reg<Bit>>,
    o_lab: Vec<Reg<Bit>>,
    o_cod: Vec<Reg<Bits<4>>>,
    k_v: Reg<Bit>,
    k_pos: Reg<Bits<16>>,
    k_last: Reg<Bit>,
    k_sat: Reg<Bits<8>>,
    k_cnt: Reg<Bits<8>>,
    k_idx: Vec<Reg<Bit>>,
    k_lab: Vec<Reg<Bit>>,
    k_cod: Vec<Reg<Bits<4>>>,
    n_sat: StatCounter,
    sat_v: Reg<Bit>,
    sat_n: Reg<Bits<8>>,
    f_limit: Reg<Bit>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    _n: usize,
    _ne: usize,
    _lz: usize,
    _n2: usize,
    _lz2n: usize,
}



impl QuOutput {
    pub fn new(lanes: usize) -> Self {
        let n = lanes;
        let lz = ZeroRemove::<4>::latency(n, 2);
        let ne = LANE_STAGES + 1;
        QuOutput {
            clock: Default::default(),
            reset: Default::default(),
            push: Default::default(),
            pos0: Default::default(),
            last0: Default::default(),
            x: sigs(n),
            k: sigs(n),
            tl: sigs(n),
            th: sigs(n),
            s: sigs(n),
            zs: sigs(n),
            q: Default::default(),
            en_code: Default::default(),
            rec_valid: Default::default(),
            rec_ready: Default::default(),
            rec_pos: Default::default(),
            rec_index: sigs(n),
            rec_label: sigs(n),
            rec_codes: sigs(n),
            rec_count: Default::default(),
            rec_last: Default::default(),
            rec_saturated: Default::default(),
            st_saturated: Default::default(),
            st_limit_hit: Default::default(),
            lanes: (0..n).map(|_| QuLane::default()).collect(),
            en_c: Default::default(),
            ev: regs(ne),
            epos: regs(ne),
            elast: regs(ne),
            zr: ZeroRemove::new(n, 2),
            pc: sigs(2 * n),
            dl_bits: regs(lz * 2 * n),
            dl_pos: regs(lz),
            dl_last: regs(lz),
            dl_sat: regs(lz),
            fire: Default::default(),
            x_v: Default::default(),
            o_load: Default::default(),
            k_load: Default::default(),
            x_codes: sigs(n),
            x_idx: sigs(n),
            x_lab: sigs(n),
            x_pos: Default::default(),
            x_last: Default::default(),
            x_sat: Default::default(),
            o_v: Reg::default(),
            o_pos: Reg::default(),
            o_last: Reg::default(),
            o_sat: Reg::default(),
            o_cnt: Reg::default(),
            o_idx: regs(n),
            o_lab: regs(n),
            o_cod: regs(n),
            k_v: Reg::default(),
            k_pos: Reg::default(),
            k_last: Reg::default(),
            k_sat: Reg::default(),
            k_cnt: Reg::default(),
            k_idx: regs(n),
            k_lab: regs(n),
            k_cod: regs(n),
            n_sat: Default::default(),
            sat_v: Reg::default(),
            sat_n: Reg::default(),
            f_limit: Reg::default(),
            one8: Constant::new(1u64.into()),
            zero8: Constant::new(0u64.into()),
            _n: n,
            _ne: ne,
            _lz: lz,
            _n2: 2 * n,
            _lz2n: 2 * n * lz,
        }
    }
}

impl Logic for QuOutput {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, zr, o_v, o_pos, o_last, o_sat, o_cnt, k_v, k_pos, k_last, k_sat, k_cnt, n_sat, sat_v, sat_n,
            f_limit
        );
        self.zr.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_pos.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_sat.reset.next = self.reset.val();
        self.o_cnt.reset.next = self.reset.val();
        self.k_v.reset.next = self.reset.val();
        self.k_pos.reset.next = self.reset.val();
        self.k_last.reset.next = self.reset.val();
        self.k_sat.reset.next = self.reset.val();
        self.k_cnt.reset.next = self.reset.val();
        self.n_sat.reset.next = self.reset.val();
        self.sat_v.reset.next = self.reset.val();
        self.sat_n.reset.next = self.reset.val();
        self.f_limit.reset.next = self.reset.val();
        // the coders advance while the output skid is empty (rec_ready only
        // loads the output registers)
        self.en_c.next = !self.k_v.q.val();
        self.en_code.next = !self.k_v.q.val();
        for e in 0..self._ne {
            self.ev[e].clock.next = self.clock.val();
            self.epos[e].clock.next = self.clock.val();
            self.elast[e].clock.next = self.clock.val();
            self.ev[e].reset.next = self.reset.val();
            self.epos[e].reset.next = self.reset.val();
            self.elast[e].reset.next = self.reset.val();
            self.ev[e].en.next = self.en_c.val();
            self.epos[e].en.next = self.en_c.val();
            self.elast[e].en.next = self.en_c.val();
        }
        self.ev[0].d.next = self.push.val();
        self.epos[0].d.next = self.pos0.val();
        self.elast[0].d.next = self.last0.val();
        for e in 1..self._ne {
            self.ev[e].d.next = self.ev[e - 1].q.val();
            self.epos[e].d.next = self.epos[e - 1].q.val();
            self.elast[e].d.next = self.elast[e - 1].q.val();
        }
        for p in 0..self._n {
            self.lanes[p].clock.next = self.clock.val();
            self.lanes[p].reset.next = self.reset.val();
            self.lanes[p].en.next = self.en_c.val();
            self.lanes[p].x.next = self.x[p].val();
            self.lanes[p].k.next = self.k[p].val();
            self.lanes[p].tl.next = self.tl[p].val();
            self.lanes[p].th.next = self.th[p].val();
            self.lanes[p].s.next = self.s[p].val();
            self.lanes[p].zs.next = self.zs[p].val();
            self.lanes[p].q.next = self.q.val();
        }

        // ---- output: compaction of the non-zero codes ----
        self.zr.en.next = self.en_c.val();
        for e in self._ne..(self._ne + 1) {
            self.zr.in_valid.next = self.ev[e - 1].q.val();
        }
        for p in 0..self._n {
            self.zr.data[p].next = self.lanes[p].code.val();
            self.zr.keep[p].next = self.lanes[p].label.val();
            self.x_codes[p].next = self.zr.out[p].val();
        }

        // saturated elements of the beat: a balanced popcount
        for n in self._n..(self._n + 1) {
            for p in 0..self._n {
                self.pc[n + p].next = self.zero8.val();
                if self.lanes[p].sat.val() {
                    self.pc[n + p].next = self.one8.val();
                }
            }
            for i in 1..self._n {
                self.pc[n - i].next = self.pc[2 * (n - i)].val() + self.pc[2 * (n - i) + 1].val();
            }
            self.pc[0].next = self.pc[1].val();
        }
        for n in self._n..(self._n + 1) {
            for z in self._lz..(self._lz + 1) {
                for i in 0..self._lz {
                    self.dl_pos[i].clock.next = self.clock.val();
                    self.dl_last[i].clock.next = self.clock.val();
                    self.dl_sat[i].clock.next = self.clock.val();
                    self.dl_pos[i].reset.next = self.reset.val();
                    self.dl_last[i].reset.next = self.reset.val();
                    self.dl_sat[i].reset.next = self.reset.val();
                    self.dl_pos[i].en.next = self.en_c.val();
                    self.dl_last[i].en.next = self.en_c.val();
                    self.dl_sat[i].en.next = self.en_c.val();
                }
                for i in 0..self._lz2n {
                    self.dl_bits[i].clock.next = self.clock.val();
                    self.dl_bits[i].reset.next = self.reset.val();
                    self.dl_bits[i].en.next = self.en_c.val();
                }
                for e in self._ne..(self._ne + 1) {
                    self.dl_pos[0].d.next = self.epos[e - 1].q.val();
                    self.dl_last[0].d.next = self.elast[e - 1].q.val();
                }
                self.dl_sat[0].d.next = self.pc[0].val();
                for p in 0..self._n {
                    self.dl_bits[p].d.next = self.lanes[p].kept.val();
                    self.dl_bits[n + p].d.next = self.lanes[p].label.val();
                }
                for i in 1..self._lz {
                    self.dl_pos[i].d.next = self.dl_pos[i - 1].q.val();
                    self.dl_last[i].d.next = self.dl_last[i - 1].q.val();
                    self.dl_sat[i].d.next = self.dl_sat[i - 1].q.val();
                }
                for i in self._n2..self._lz2n {
                    self.dl_bits[i].d.next = self.dl_bits[i - 2 * n].q.val();
                }
                for p in 0..self._n {
                    self.x_idx[p].next = self.dl_bits[(z - 1) * 2 * n + p].q.val();
                    self.x_lab[p].next = self.dl_bits[(z - 1) * 2 * n + n + p].q.val();
                }
                self.x_pos.next = self.dl_pos[z - 1].q.val();
                self.x_last.next = self.dl_last[z - 1].q.val();
                self.x_sat.next = self.dl_sat[z - 1].q.val();
            }
        }
        // saturation is counted as the beat leaves
        // output register O and its skid K: the coders see only K's valid
        self.fire.next = self.o_v.q.val() & self.rec_ready.val();
        self.x_v.next = self.zr.out_valid.val() & !self.k_v.q.val();
        self.o_load.next = (self.k_v.q.val() & (self.fire.val() | !self.o_v.q.val()))
            | (!self.k_v.q.val() & self.x_v.val() & (!self.o_v.q.val() | self.fire.val()));
        self.k_load.next = !self.k_v.q.val() & self.x_v.val() & self.o_v.q.val() & !self.fire.val();
        self.o_v.en.next = true;
        self.o_v.d.next = self.k_v.q.val() | self.x_v.val() | (self.o_v.q.val() & !self.fire.val());
        self.k_v.en.next = true;
        self.k_v.d.next = self.o_v.q.val() & !self.fire.val() & (self.k_v.q.val() | self.x_v.val());
        self.o_pos.en.next = self.o_load.val();
        self.o_last.en.next = self.o_load.val();
        self.o_sat.en.next = self.o_load.val();
        self.o_cnt.en.next = self.o_load.val();
        self.k_pos.en.next = self.k_load.val();
        self.k_last.en.next = self.k_load.val();
        self.k_sat.en.next = self.k_load.val();
        self.k_cnt.en.next = self.k_load.val();
        self.k_pos.d.next = self.x_pos.val();
        self.k_last.d.next = self.x_last.val();
        self.k_sat.d.next = self.x_sat.val();
        self.k_cnt.d.next = self.zr.count.val();
        self.o_pos.d.next = self.x_pos.val();
        self.o_last.d.next = self.x_last.val();
        self.o_sat.d.next = self.x_sat.val();
        self.o_cnt.d.next = self.zr.count.val();
        if self.k_v.q.val() {
            self.o_pos.d.next = self.k_pos.q.val();
            self.o_last.d.next = self.k_last.q.val();
            self.o_sat.d.next = self.k_sat.q.val();
            self.o_cnt.d.next = self.k_cnt.q.val();
        }
        for p in 0..self._n {
            self.o_idx[p].clock.next = self.clock.val();
            self.o_lab[p].clock.next = self.clock.val();
            self.o_cod[p].clock.next = self.clock.val();
            self.k_idx[p].clock.next = self.clock.val();
            self.k_lab[p].clock.next = self.clock.val();
            self.k_cod[p].clock.next = self.clock.val();
            self.o_idx[p].reset.next = self.reset.val();
            self.o_lab[p].reset.next = self.reset.val();
            self.o_cod[p].reset.next = self.reset.val();
            self.k_idx[p].reset.next = self.reset.val();
            self.k_lab[p].reset.next = self.reset.val();
            self.k_cod[p].reset.next = self.reset.val();
            self.o_idx[p].en.next = self.o_load.val();
            self.o_lab[p].en.next = self.o_load.val();
            self.o_cod[p].en.next = self.o_load.val();
            self.k_idx[p].en.next = self.k_load.val();
            self.k_lab[p].en.next = self.k_load.val();
            self.k_cod[p].en.next = self.k_load.val();
            self.k_idx[p].d.next = self.x_idx[p].val();
            self.k_lab[p].d.next = self.x_lab[p].val();
            self.k_cod[p].d.next = self.x_codes[p].val();
            self.o_idx[p].d.next = self.x_idx[p].val();
            self.o_lab[p].d.next = self.x_lab[p].val();
            self.o_cod[p].d.next = self.x_codes[p].val();
            if self.k_v.q.val() {
                self.o_idx[p].d.next = self.k_idx[p].q.val();
                self.o_lab[p].d.next = self.k_lab[p].q.val();
                self.o_cod[p].d.next = self.k_cod[p].q.val();
            }
            self.rec_index[p].next = self.o_idx[p].q.val();
            self.rec_label[p].next = self.o_lab[p].q.val();
            self.rec_codes[p].next = self.o_cod[p].q.val();
        }
        self.rec_valid.next = self.o_v.q.val();
        self.rec_pos.next = self.o_pos.q.val();
        self.rec_last.next = self.o_last.q.val();
        self.rec_saturated.next = self.o_sat.q.val();
        self.rec_count.next = self.o_cnt.q.val();
        // a taken beat's saturated count is added the cycle after
        self.sat_v.en.next = true;
        self.sat_v.d.next = self.fire.val();
        self.sat_n.en.next = true;
        self.sat_n.d.next = self.o_sat.q.val();
        self.n_sat.en.next = self.sat_v.q.val();
        self.n_sat.n.next = self.sat_n.q.val();
        self.f_limit.en.next = self.sat_v.q.val() & (self.sat_n.q.val() != self.zero8.val());
        self.f_limit.d.next = true;
        self.st_saturated.next = self.n_sat.count.val();
        self.st_limit_hit.next = self.f_limit.q.val();
    }
}
