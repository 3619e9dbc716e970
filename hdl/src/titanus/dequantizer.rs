//! Titanus dequantization unit (`titanus-dequantizer`) with its scale-zero
//! table. Paper: Titanus (GLSVLSI 2025) §3.1 (reconstruction from index and
//! label), §4.4 and Figure 7 (the DQU's three rules), §4.1 (SZ buffer).
//! Spec: docs/spec.md §11.8 (table, level lookup, reconstruction, skip
//! counters), §11.13 (ports), §11.14.3 (microarchitecture).
//!
//! Table: per lane `i`, two single-port memories (`prim::ram::SpRam`, each
//! its own Verilog module, the SRAM swap points): `levels` (row `c / L`:
//! {valid, start} of every level of channel `c = row * L + i`) and
//! `entries` (word `row * max_levels + level`: {rec(0), z, S}); and one
//! flop per channel, "present" (reset and clear empty it in one cycle; a
//! levels row is used only while its channel is present, so memories need
//! no reset).
//! Loads: L1 (word, checks; waits for the record beats ahead to have read
//! the table) -> L2 (levels row read, |z| S in three partial products) ->
//! write (levels row modified, entry with rec(0), present flag), records
//! held off meanwhile. Records: [skid] -> S1 (levels row and present flags
//! read on entry; priority pick, zero-insert of the codes) -> S2 (entry
//! read on entry; cases, |q - z|) -> S3 (partial products) -> S4 (sum)
//! -> S5 (sign, round, clamp, select) -> out. S3 to S5 load operands only
//! for lanes that multiply (operand isolation).
//!
//! Sub-blocks: `dq_config` (the load path L1 to L3, the table's write
//! side), `dq_lane` (one per lane: level pick, cases, multiply, rounding,
//! S2 to the output register), `dq_counters` (the skip counters) and
//! `dq_arith` (the split multiply and INT8 rounding both of those share).
//! This file keeps the table's memories and present flags (their ports
//! are shared by loads and records), the record handshake, skid and S1,
//! the zero-insert shifter and the stages' valid and last flags.

use super::dq_config::DqConfig;
use super::dq_counters::SkipCounters;
use super::dq_lane::DqLane;
use crate::prim::ram::{MemInfo, MulConst, RowFlags, SpRam};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use crate::prim::zero_insert::ZeroInsert;
use rust_hdl::prelude::*;

/// `sz_error` codes.
pub const SZ_OK: u64 = 0;
pub const SZ_CHANNEL: u64 = 1;
pub const SZ_LEVEL: u64 = 2;

/// Bits per level in a levels row: valid, start (16).
pub const LEVEL_BITS: usize = 17;
/// Bits per entry word: rec(0) (8), zero point (9), scale (16).
pub const ENTRY_BITS: usize = 33;

/// The memories of an instance named `module` (manifest): per lane, the
/// levels and the entries memory.
pub fn memories(module: &str, channels: usize, lanes: usize, max_levels: usize) -> Vec<MemInfo> {
    let rows = channels / lanes;
    let mut v = Vec::new();
    for i in 0..lanes {
        v.push(MemInfo {
            module: format!("{module}_lv{i}_ram"),
            name: format!("levels_{i}"),
            depth: rows,
            width: LEVEL_BITS * max_levels,
        });
    }
    for i in 0..lanes {
        v.push(MemInfo {
            module: format!("{module}_en{i}_ram"),
            name: format!("entries_{i}"),
            depth: rows * max_levels,
            width: ENTRY_BITS,
        });
    }
    v
}

#[derive(LogicBlock)]
pub struct TitanusDequantizer {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every table slot empty, counters 0, pipeline empty
    pub reset: Signal<In, Bit>,
    /// scale-zero load valid
    pub sz_valid: Signal<In, Bit>,
    /// load accepted when sz_valid and sz_ready (low for 3 cycles after each load, longer while
    /// record beats accepted before it wait for the output)
    pub sz_ready: Signal<Out, Bit>,
    /// entry word (spec §11.7.2): channel [61:52], level [51:48], start [47:32], zero [24:16],
    /// scale [15:0]
    pub sz_word: Signal<In, Bits<64>>,
    /// with sz_valid: empty every slot instead (sz_word ignored)
    pub sz_clear: Signal<In, Bit>,
    /// one cycle after each accepted load
    pub sz_done: Signal<Out, Bit>,
    /// with sz_done: 0 written, 1 channel out of range, 2 level out of range
    pub sz_error: Signal<Out, Bits<2>>,
    /// record beat valid
    pub in_valid: Signal<In, Bit>,
    /// record beat accepted when in_valid and in_ready (a register; low while a load completes)
    pub in_ready: Signal<Out, Bit>,
    /// token position; levels as loaded at edges before the accepting one
    pub in_pos: Signal<In, Bits<16>>,
    /// index bits of the beat's channels (1 = kept)
    pub in_index: Vec<Signal<In, Bit>>,
    /// label bits of the beat's channels (1 = non-zero code; ignored where the index is 0)
    pub in_label: Vec<Signal<In, Bit>>,
    /// the beat's non-zero codes compacted from lane 0, 4 bits each (b bits used)
    pub in_codes: Vec<Signal<In, Bits<4>>>,
    /// last beat of the token (the next beat is channel 0's)
    pub in_last: Signal<In, Bit>,
    /// output beat valid
    pub out_valid: Signal<Out, Bit>,
    /// output beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// rebuilt INT8 values, lane i at [8i+7:8i]
    pub out_data: Vec<Signal<Out, Bits<8>>>,
    /// last beat of a token
    pub out_last: Signal<Out, Bit>,
    /// elements with index 0, since reset (wrapping)
    pub st_pruned: Signal<Out, Bits<32>>,
    /// kept elements with code 0: the level's stored rec(0), no multiply
    pub st_label_zero: Signal<Out, Bits<32>>,
    /// codes equal to the zero point: 0, no multiply
    pub st_zero_point: Signal<Out, Bits<32>>,
    /// codes that went through the subtract and multiply
    pub st_multiplies: Signal<Out, Bits<32>>,
    /// kept elements whose channel had no level at the position: 0
    pub st_missing_level: Signal<Out, Bits<32>>,
    // ---- table
    lv_ram: Vec<SpRam<10, 272>>,
    en_ram: Vec<SpRam<14, 33>>,
    pres: RowFlags,
    // row * max_levels, the row's first entry word
    mul_ml: MulConst<16>,
    rowsel: Signal<Local, Bits<16>>,
    lane_idx: Vec<Constant<Bits<6>>>,
    // ---- load path
    cfg: DqConfig,
    trow: Signal<Local, Bits<272>>,
    // ---- record path
    bc: Reg<Bits<16>>,
    acc: Signal<Local, Bit>,
    en: Signal<Local, Bit>,
    lv_rd: Signal<Local, Bit>,
    sk_valid: Reg<Bit>,
    sk_last: Reg<Bit>,
    sk_pos: Reg<Bits<16>>,
    sk_bc: Reg<Bits<16>>,
    sk_idx: Vec<Reg<Bit>>,
    sk_lab: Vec<Reg<Bit>>,
    sk_code: Vec<Reg<Bits<4>>>,
    s1_valid: Reg<Bit>,
    s1_last: Reg<Bit>,
    s1_pos: Reg<Bits<16>>,
    s1_base: Reg<Bits<16>>,
    s1_idx: Vec<Reg<Bit>>,
    s1_lab: Vec<Reg<Bit>>,
    s1_code: Vec<Reg<Bits<4>>>,
    s1_pres: Vec<Reg<Bit>>,
    zi: ZeroInsert<4>,
    // the stages' valid and last flags, S2 to the output register
    s2_valid: Reg<Bit>,
    s2_last: Reg<Bit>,
    s3_valid: Reg<Bit>,
    s3_last: Reg<Bit>,
    s4_valid: Reg<Bit>,
    s4_last: Reg<Bit>,
    s5_valid: Reg<Bit>,
    s5_last: Reg<Bit>,
    o_valid: Reg<Bit>,
    o_last: Reg<Bit>,
    // S2 to the output register, per lane
    lane: Vec<DqLane>,
    // ---- counters
    cnt: SkipCounters,
    // ---- constants
    rows16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero272: Constant<Bits<272>>,
    _n: usize,
}

impl TitanusDequantizer {
    /// `lanes` a power of two in 1..=64 dividing `channels` (1..=1024),
    /// `max_levels` in 1..=16; memories named `<module>_lv<i>_ram` and
    /// `<module>_en<i>_ram`.
    pub fn new(channels: usize, lanes: usize, max_levels: usize, module: &str) -> Self {
        assert!(lanes.is_power_of_two() && lanes <= 64 && channels % lanes == 0 && channels <= 1024);
        assert!((1..=16).contains(&max_levels));
        let n = lanes;
        let rows = channels / lanes;
        let mems = memories(module, channels, lanes, max_levels);
        TitanusDequantizer {
            clock: Default::default(),
            reset: Default::default(),
            sz_valid: Default::default(),
            sz_ready: Default::default(),
            sz_word: Default::default(),
            sz_clear: Default::default(),
            sz_done: Default::default(),
            sz_error: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_pos: Default::default(),
            in_index: sigs(n),
            in_label: sigs(n),
            in_codes: sigs(n),
            in_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_data: sigs(n),
            out_last: Default::default(),
            st_pruned: Default::default(),
            st_label_zero: Default::default(),
            st_zero_point: Default::default(),
            st_multiplies: Default::default(),
            st_missing_level: Default::default(),
            lv_ram: mems[..n].iter().map(|m| SpRam::new(&m.module, &m.name, m.depth, m.width)).collect(),
            en_ram: mems[n..].iter().map(|m| SpRam::new(&m.module, &m.name, m.depth, m.width)).collect(),
            pres: RowFlags::new(&format!("{module}_present"), rows, lanes),
            mul_ml: MulConst::new(max_levels as u64),
            rowsel: Default::default(),
            lane_idx: consts(0..n as u64),
            cfg: DqConfig::new(channels, lanes, max_levels),
            trow: Default::default(),
            bc: Reg::default(),
            acc: Default::default(),
            en: Default::default(),
            lv_rd: Default::default(),
            sk_valid: Reg::default(),
            sk_last: Reg::default(),
            sk_pos: Reg::default(),
            sk_bc: Reg::default(),
            sk_idx: regs(n),
            sk_lab: regs(n),
            sk_code: regs(n),
            s1_valid: Reg::default(),
            s1_last: Reg::default(),
            s1_pos: Reg::default(),
            s1_base: Reg::default(),
            s1_idx: regs(n),
            s1_lab: regs(n),
            s1_code: regs(n),
            s1_pres: regs(n),
            zi: ZeroInsert::new(lanes, 0),
            s2_valid: Reg::default(),
            s2_last: Reg::default(),
            s3_valid: Reg::default(),
            s3_last: Reg::default(),
            s4_valid: Reg::default(),
            s4_last: Reg::default(),
            s5_valid: Reg::default(),
            s5_last: Reg::default(),
            o_valid: Reg::default(),
            o_last: Reg::default(),
            lane: (0..n).map(|_| DqLane::new(max_levels)).collect(),
            cnt: SkipCounters::new(lanes),
            rows16: Constant::new((rows as u64).into()),
            zero16: Constant::new(0u64.into()),
            one16: Constant::new(1u64.into()),
            zero272: Constant::new(Bits::<272>::default()),
            _n: n,
        }
    }

    /// Cycles from the edge that accepts a record beat (skid empty) to the
    /// edge after which it is shown, with the output ready.
    pub const LATENCY: usize = 6;
}

impl Logic for TitanusDequantizer {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, pres, cfg, bc, sk_valid, sk_last, sk_pos, sk_bc, s1_valid, s1_last, s1_pos, s1_base,
            zi, s2_valid, s2_last, s3_valid, s3_last, s4_valid, s4_last, s5_valid, s5_last, o_valid, o_last
        );
        self.en.next = !self.o_valid.q.val() | self.out_ready.val();

        // ---- loads (spec §11.8.1): dq_config; the table's ports are shared below
        self.cfg.reset.next = self.reset.val();
        self.cfg.sz_valid.next = self.sz_valid.val();
        self.cfg.sz_word.next = self.sz_word.val();
        self.cfg.sz_clear.next = self.sz_clear.val();
        self.sz_ready.next = self.cfg.sz_ready.val();
        self.sz_done.next = self.cfg.sz_done.val();
        self.sz_error.next = self.cfg.sz_error.val();
        self.cfg.hold.next = self.sk_valid.q.val() | self.s1_valid.q.val();
        self.cfg.base.next = self.mul_ml.y.val();
        self.cfg.pres_hit.next = false;
        self.trow.next = self.zero272.val();
        for i in 0..self._n {
            if self.cfg.rd_lane.val() == self.lane_idx[i].val() {
                self.cfg.pres_hit.next = self.pres.rd_q.val().get_bit(self.lane_idx[i].val().index());
            }
            if self.cfg.wr_lane.val() == self.lane_idx[i].val() {
                self.trow.next = self.lv_ram[i].rdata.val();
            }
        }
        self.cfg.trow.next = self.trow.val();
        self.pres.reset.next = self.reset.val();
        self.pres.clr.next = self.cfg.clr.val();
        self.pres.set.next = self.cfg.wr.val();
        self.pres.set_row.next = self.cfg.wr_row.val();
        self.pres.set_col.next = bit_cast::<8, 6>(self.cfg.wr_lane.val());

        // ---- record handshake: a beat enters S1 (reading its levels row and
        // present flags) at acceptance, or from the skid when S1 advances
        self.in_ready.next = !self.sk_valid.q.val() & !self.cfg.busy.val();
        self.acc.next = self.in_valid.val() & !self.sk_valid.q.val() & !self.cfg.busy.val();
        self.bc.reset.next = self.reset.val();
        self.bc.en.next = self.acc.val();
        self.bc.d.next = self.bc.q.val() + self.one16.val();
        if self.in_last.val() {
            self.bc.d.next = self.zero16.val();
        }
        // the row read this cycle: the skid's beat, else a waiting load's, else the offered beat's
        self.rowsel.next = self.bc.q.val();
        if self.cfg.rd_wait.val() {
            self.rowsel.next = self.cfg.rd_row.val();
        }
        if self.sk_valid.q.val() {
            self.rowsel.next = self.sk_bc.q.val();
        }
        self.mul_ml.x.next = self.rowsel.val();
        self.pres.rd_row.next = self.rowsel.val();
        self.lv_rd.next = self.en.val() & (self.sk_valid.q.val() | self.acc.val());
        for i in 0..self._n {
            self.lv_ram[i].clock.next = self.clock.val();
            self.lv_ram[i].en.next = self.lv_rd.val()
                | (self.cfg.go.val() & self.cfg.rd_ok.val() & (self.cfg.rd_lane.val() == self.lane_idx[i].val()))
                | (self.cfg.wr.val() & (self.cfg.wr_lane.val() == self.lane_idx[i].val()));
            self.lv_ram[i].we.next = self.cfg.wr_valid.val();
            self.lv_ram[i].addr.next = bit_cast::<10, 16>(self.rowsel.val());
            if self.cfg.wr_valid.val() {
                self.lv_ram[i].addr.next = bit_cast::<10, 16>(self.cfg.wr_row.val());
            }
            self.lv_ram[i].wdata.next = self.cfg.nrow.val();
        }

        self.sk_valid.reset.next = self.reset.val();
        self.sk_last.reset.next = self.reset.val();
        self.sk_pos.reset.next = self.reset.val();
        self.sk_bc.reset.next = self.reset.val();
        self.sk_valid.en.next = true;
        self.sk_valid.d.next = !self.en.val() & (self.sk_valid.q.val() | self.acc.val());
        self.sk_last.en.next = self.acc.val() & !self.en.val();
        self.sk_pos.en.next = self.acc.val() & !self.en.val();
        self.sk_bc.en.next = self.acc.val() & !self.en.val();
        self.sk_last.d.next = self.in_last.val();
        self.sk_pos.d.next = self.in_pos.val();
        self.sk_bc.d.next = self.bc.q.val();
        self.s1_valid.reset.next = self.reset.val();
        self.s1_last.reset.next = self.reset.val();
        self.s1_pos.reset.next = self.reset.val();
        self.s1_base.reset.next = self.reset.val();
        self.s1_valid.en.next = self.en.val();
        self.s1_last.en.next = self.en.val();
        self.s1_pos.en.next = self.en.val();
        self.s1_base.en.next = self.en.val();
        self.s1_valid.d.next = self.sk_valid.q.val() | self.acc.val();
        self.s1_last.d.next = self.in_last.val();
        self.s1_pos.d.next = self.in_pos.val();
        if self.sk_valid.q.val() {
            self.s1_last.d.next = self.sk_last.q.val();
            self.s1_pos.d.next = self.sk_pos.q.val();
        }
        self.s1_base.d.next = self.mul_ml.y.val();
        for i in 0..self._n {
            self.sk_idx[i].clock.next = self.clock.val();
            self.sk_lab[i].clock.next = self.clock.val();
            self.sk_code[i].clock.next = self.clock.val();
            self.s1_idx[i].clock.next = self.clock.val();
            self.s1_lab[i].clock.next = self.clock.val();
            self.s1_code[i].clock.next = self.clock.val();
            self.s1_pres[i].clock.next = self.clock.val();
            self.sk_idx[i].reset.next = self.reset.val();
            self.sk_lab[i].reset.next = self.reset.val();
            self.sk_code[i].reset.next = self.reset.val();
            self.s1_idx[i].reset.next = self.reset.val();
            self.s1_lab[i].reset.next = self.reset.val();
            self.s1_code[i].reset.next = self.reset.val();
            self.s1_pres[i].reset.next = self.reset.val();
            self.sk_idx[i].en.next = self.acc.val() & !self.en.val();
            self.sk_lab[i].en.next = self.acc.val() & !self.en.val();
            self.sk_code[i].en.next = self.acc.val() & !self.en.val();
            self.s1_idx[i].en.next = self.en.val();
            self.s1_lab[i].en.next = self.en.val();
            self.s1_code[i].en.next = self.en.val();
            self.s1_pres[i].en.next = self.en.val();
            self.sk_idx[i].d.next = self.in_index[i].val();
            // a label bit of a pruned channel is ignored (it takes no code)
            self.sk_lab[i].d.next = self.in_label[i].val() & self.in_index[i].val();
            self.sk_code[i].d.next = self.in_codes[i].val();
            self.s1_idx[i].d.next = self.in_index[i].val();
            self.s1_lab[i].d.next = self.in_label[i].val() & self.in_index[i].val();
            self.s1_code[i].d.next = self.in_codes[i].val();
            if self.sk_valid.q.val() {
                self.s1_idx[i].d.next = self.sk_idx[i].q.val();
                self.s1_lab[i].d.next = self.sk_lab[i].q.val();
                self.s1_code[i].d.next = self.sk_code[i].q.val();
            }
            // rows past the token's last (a missing in_last) have no levels
            self.s1_pres[i].d.next = self.pres.rd_q.val().get_bit(self.lane_idx[i].val().index())
                & (self.rowsel.val() < self.rows16.val());
        }

        // ---- S1: codes to their channels (§3.1); per lane (dq_lane), the
        // level pick and the entry read, then S2 to the output register
        self.zi.reset.next = self.reset.val();
        self.zi.en.next = self.en.val();
        self.zi.in_valid.next = self.s1_valid.q.val();
        self.s2_valid.reset.next = self.reset.val();
        self.s2_last.reset.next = self.reset.val();
        self.s3_valid.reset.next = self.reset.val();
        self.s3_last.reset.next = self.reset.val();
        self.s4_valid.reset.next = self.reset.val();
        self.s4_last.reset.next = self.reset.val();
        self.s5_valid.reset.next = self.reset.val();
        self.s5_last.reset.next = self.reset.val();
        self.o_valid.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.s2_valid.en.next = self.en.val();
        self.s2_last.en.next = self.en.val();
        self.s3_valid.en.next = self.en.val();
        self.s3_last.en.next = self.en.val();
        self.s4_valid.en.next = self.en.val();
        self.s4_last.en.next = self.en.val();
        self.s5_valid.en.next = self.en.val();
        self.s5_last.en.next = self.en.val();
        self.o_valid.en.next = self.en.val();
        self.o_last.en.next = self.en.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_last.d.next = self.s1_last.q.val();
        self.s3_valid.d.next = self.s2_valid.q.val();
        self.s3_last.d.next = self.s2_last.q.val();
        self.s4_valid.d.next = self.s3_valid.q.val();
        self.s4_last.d.next = self.s3_last.q.val();
        self.s5_valid.d.next = self.s4_valid.q.val();
        self.s5_last.d.next = self.s4_last.q.val();
        self.o_valid.d.next = self.s5_valid.q.val();
        self.o_last.d.next = self.s5_last.q.val();
        for i in 0..self._n {
            self.zi.data[i].next = self.s1_code[i].q.val();
            self.zi.mask[i].next = self.s1_lab[i].q.val();
            self.lane[i].clock.next = self.clock.val();
            self.lane[i].reset.next = self.reset.val();
            self.lane[i].en.next = self.en.val();
            self.lane[i].trow.next = self.lv_ram[i].rdata.val();
            self.lane[i].pres.next = self.s1_pres[i].q.val();
            self.lane[i].pos.next = self.s1_pos.q.val();
            self.lane[i].base.next = self.s1_base.q.val();
            self.lane[i].idx.next = self.s1_idx[i].q.val();
            self.lane[i].code.next = self.zi.out[i].val();
            self.lane[i].ent.next = self.en_ram[i].rdata.val();
            self.lane[i].v2.next = self.s2_valid.q.val();
            self.lane[i].v3.next = self.s3_valid.q.val();
            self.lane[i].v4.next = self.s4_valid.q.val();
            self.en_ram[i].clock.next = self.clock.val();
            self.en_ram[i].en.next = (self.en.val() & self.s1_valid.q.val())
                | (self.cfg.ent_valid.val()
                    & self.cfg.ent_wr.val()
                    & (self.cfg.ent_lane.val() == self.lane_idx[i].val()));
            self.en_ram[i].we.next = self.cfg.ent_valid.val();
            self.en_ram[i].addr.next = self.lane[i].rd_addr.val();
            if self.cfg.ent_valid.val() {
                self.en_ram[i].addr.next = self.cfg.ent_addr.val();
            }
            self.en_ram[i].wdata.next = self.cfg.ent_w.val();
            self.out_data[i].next = self.lane[i].data.val();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_last.next = self.o_last.q.val();

        // ---- skip counters (spec §11.8.3): S3's case codes, added as a beat leaves S4
        self.cnt.clock.next = self.clock.val();
        self.cnt.reset.next = self.reset.val();
        self.cnt.en.next = self.en.val();
        self.cnt.s4_valid.next = self.s4_valid.q.val();
        for i in 0..self._n {
            self.cnt.cs[i].next = self.lane[i].cs.val();
        }
        self.st_pruned.next = self.cnt.st_w[0].val();
        self.st_missing_level.next = self.cnt.st_w[1].val();
        self.st_label_zero.next = self.cnt.st_w[2].val();
        self.st_zero_point.next = self.cnt.st_w[3].val();
        self.st_multiplies.next = self.cnt.st_w[4].val();
    }
}
