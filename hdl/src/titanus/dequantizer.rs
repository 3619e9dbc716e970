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
//! the table) -> L2 (levels row read, |z| S in two partial products) ->
//! write (levels row modified, entry with rec(0), present flag), records
//! held off meanwhile. Records: [skid] -> S1 (levels row and present flags
//! read on entry; priority pick, zero-insert of the codes) -> S2 (entry
//! read on entry; cases, |q - z|) -> S3 (partial products) -> S4 (sum,
//! sign, round, clamp, select) -> out. S3 and S4 load operands only for
//! lanes that multiply (operand isolation).

use crate::prim::ram::{MemInfo, MulConst, RowFlags, SpRam};
use crate::prim::reg::Reg;
use crate::prim::vecs::{regs, sigs};
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
    lidx: Vec<Constant<Bits<4>>>,
    loff: Vec<Constant<Bits<9>>>,
    lane_idx: Vec<Constant<Bits<6>>>,
    // ---- load path
    sz_acc: Signal<Local, Bit>,
    sz_code: Signal<Local, Bits<2>>,
    f_ch: Signal<Local, Bits<10>>,
    f_lv: Signal<Local, Bits<4>>,
    f_zero: Signal<Local, Bits<16>>,
    go: Signal<Local, Bit>,
    wr: Signal<Local, Bit>,
    done: Reg<Bit>,
    err: Reg<Bits<2>>,
    l1_valid: Reg<Bit>,
    l1_clear: Reg<Bit>,
    l1_ok: Reg<Bit>,
    l1_lane: Reg<Bits<6>>,
    l1_row: Reg<Bits<16>>,
    l1_lv: Reg<Bits<4>>,
    l1_start: Reg<Bits<16>>,
    l1_scale: Reg<Bits<16>>,
    l1_z9: Reg<Bits<9>>,
    l1_abs: Reg<Bits<16>>,
    l1_neg: Reg<Bit>,
    l2_valid: Reg<Bit>,
    l2_clear: Reg<Bit>,
    l2_ok: Reg<Bit>,
    l2_lane: Reg<Bits<6>>,
    l2_row: Reg<Bits<16>>,
    l2_base: Reg<Bits<16>>,
    l2_lv: Reg<Bits<4>>,
    l2_start: Reg<Bits<16>>,
    l2_scale: Reg<Bits<16>>,
    l2_z9: Reg<Bits<9>>,
    l2_p0: Reg<Bits<20>>,
    l2_p1: Reg<Bits<20>>,
    l2_p2: Reg<Bits<20>>,
    l2_neg: Reg<Bit>,
    l2_pres: Reg<Bit>,
    l3_valid: Reg<Bit>,
    l3_wr: Reg<Bit>,
    l3_lane: Reg<Bits<6>>,
    l3_addr: Reg<Bits<14>>,
    l3_scale: Reg<Bits<16>>,
    l3_z9: Reg<Bits<9>>,
    l3_p: Reg<Bits<25>>,
    l3_neg: Reg<Bit>,
    busy: Signal<Local, Bit>,
    trow: Signal<Local, Bits<272>>,
    nrow: Signal<Local, Bits<272>>,
    seg: Signal<Local, Bits<17>>,
    ent_w: Signal<Local, Bits<33>>,
    // ---- rounding of a split product (shared by the load path and the lanes)
    r_p0: Signal<Local, Bits<20>>,
    r_p1: Signal<Local, Bits<20>>,
    r_p2: Signal<Local, Bits<20>>,
    r_neg: Signal<Local, Bit>,
    rp: Signal<Local, Bits<32>>,
    rt: Signal<Local, Bits<32>>,
    ru: Signal<Local, Bits<32>>,
    ro: Signal<Local, Bits<8>>,
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
    p_found: Vec<Signal<Local, Bit>>,
    p_lv: Vec<Signal<Local, Bits<4>>>,
    s2_valid: Reg<Bit>,
    s2_last: Reg<Bit>,
    s2_idx: Vec<Reg<Bit>>,
    s2_found: Vec<Reg<Bit>>,
    s2_q: Vec<Reg<Bits<4>>>,
    // S2 cases, one-hot per lane
    c_ms: Vec<Signal<Local, Bit>>,
    c_lz: Vec<Signal<Local, Bit>>,
    c_zp: Vec<Signal<Local, Bit>>,
    c_mu: Vec<Signal<Local, Bit>>,
    ent: Signal<Local, Bits<33>>,
    q16: Signal<Local, Bits<16>>,
    z16: Signal<Local, Bits<16>>,
    dq: Signal<Local, Bits<16>>,
    ma: Signal<Local, Bits<16>>,
    prod: Signal<Local, Bits<32>>,
    t4: Signal<Local, Bits<4>>,
    t8a: Signal<Local, Bits<8>>,
    t8b: Signal<Local, Bits<8>>,
    t24: Signal<Local, Bits<24>>,
    s3_valid: Reg<Bit>,
    s3_last: Reg<Bit>,
    s3_sel: Vec<Reg<Bits<2>>>,
    s3_r0: Vec<Reg<Bits<8>>>,
    s3_cs: Vec<Reg<Bits<3>>>,
    s3_abs: Vec<Reg<Bits<16>>>,
    s3_neg: Vec<Reg<Bit>>,
    s3_scale: Vec<Reg<Bits<16>>>,
    s4_valid: Reg<Bit>,
    s4_last: Reg<Bit>,
    s4_sel: Vec<Reg<Bits<2>>>,
    s4_r0: Vec<Reg<Bits<8>>>,
    s4_p0: Vec<Reg<Bits<20>>>,
    s4_p1: Vec<Reg<Bits<20>>>,
    s4_p2: Vec<Reg<Bits<20>>>,
    s4_neg: Vec<Reg<Bit>>,
    s5_valid: Reg<Bit>,
    s5_last: Reg<Bit>,
    s5_sel: Vec<Reg<Bits<2>>>,
    s5_r0: Vec<Reg<Bits<8>>>,
    s5_p: Vec<Reg<Bits<25>>>,
    s5_neg: Vec<Reg<Bit>>,
    psum: Signal<Local, Bits<25>>,
    t25: Signal<Local, Bits<25>>,
    o_valid: Reg<Bit>,
    o_last: Reg<Bit>,
    o_data: Vec<Reg<Bits<8>>>,
    // ---- counters
    // counter j counts case j; {hi, lo} with hi1 = hi + 1 ready (a carry
    // out of lo needs 4 beats, so hi1 is never stale when used)
    p_cnt: Vec<Reg<Bits<8>>>,
    n_lo: Vec<Reg<Bits<8>>>,
    n_hi: Vec<Reg<Bits<24>>>,
    n_hi1: Vec<Reg<Bits<24>>>,
    a_cnt: Vec<Signal<Local, Bits<8>>>,
    lo_sum: Vec<Signal<Local, Bits<9>>>,
    st_w: Vec<Signal<Local, Bits<32>>>,
    kcase: Vec<Constant<Bits<3>>>,
    fb: Signal<Local, Bit>,
    // ---- constants
    channels10: Constant<Bits<11>>,
    levels4: Constant<Bits<5>>,
    rows16: Constant<Bits<16>>,
    lane_mask: Constant<Bits<10>>,
    lane_shift: Constant<Bits<4>>,
    k_pr: Constant<Bits<3>>,
    k_ms: Constant<Bits<3>>,
    k_lz: Constant<Bits<3>>,
    k_zp: Constant<Bits<3>>,
    k_mu: Constant<Bits<3>>,
    zero2: Constant<Bits<2>>,
    one2: Constant<Bits<2>>,
    two2: Constant<Bits<2>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero17: Constant<Bits<17>>,
    valid17: Constant<Bits<17>>,
    zero272: Constant<Bits<272>>,
    lo3: Constant<Bits<16>>,
    three16: Constant<Bits<16>>,
    six16: Constant<Bits<16>>,
    one24: Constant<Bits<24>>,
    sh_lo: Constant<Bits<32>>,
    sign9: Constant<Bits<16>>,
    ext9: Constant<Bits<16>>,
    c127: Constant<Bits<32>>,
    c128: Constant<Bits<32>>,
    eight32: Constant<Bits<32>>,
    three32: Constant<Bits<32>>,
    six32: Constant<Bits<32>>,
    min8: Constant<Bits<8>>,
    max8: Constant<Bits<8>>,
    sh_ch: Constant<Bits<6>>,
    sh_lv: Constant<Bits<6>>,
    sh_st: Constant<Bits<6>>,
    sh_z: Constant<Bits<6>>,
    sh_zent: Constant<Bits<6>>,
    sh_r0ent: Constant<Bits<6>>,
    _n: usize,
    _ml: usize,
}



fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
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
            lidx: (0..max_levels).map(|l| k(l as u64)).collect(),
            loff: (0..max_levels).map(|l| k((LEVEL_BITS * l) as u64)).collect(),
            lane_idx: (0..n).map(|i| k(i as u64)).collect(),
            sz_acc: Default::default(),
            sz_code: Default::default(),
            f_ch: Default::default(),
            f_lv: Default::default(),
            f_zero: Default::default(),
            go: Default::default(),
            wr: Default::default(),
            done: Reg::default(),
            err: Reg::default(),
            l1_valid: Reg::default(),
            l1_clear: Reg::default(),
            l1_ok: Reg::default(),
            l1_lane: Reg::default(),
            l1_row: Reg::default(),
            l1_lv: Reg::default(),
            l1_start: Reg::default(),
            l1_scale: Reg::default(),
            l1_z9: Reg::default(),
            l1_abs: Reg::default(),
            l1_neg: Reg::default(),
            l2_valid: Reg::default(),
            l2_clear: Reg::default(),
            l2_ok: Reg::default(),
            l2_lane: Reg::default(),
            l2_row: Reg::default(),
            l2_base: Reg::default(),
            l2_lv: Reg::default(),
            l2_start: Reg::default(),
            l2_scale: Reg::default(),
            l2_z9: Reg::default(),
            l2_p0: Reg::default(),
            l2_p1: Reg::default(),
            l2_p2: Reg::default(),
            l2_neg: Reg::default(),
            l2_pres: Reg::default(),
            l3_valid: Reg::default(),
            l3_wr: Reg::default(),
            l3_lane: Reg::default(),
            l3_addr: Reg::default(),
            l3_scale: Reg::default(),
            l3_z9: Reg::default(),
            l3_p: Reg::default(),
            l3_neg: Reg::default(),
            busy: Default::default(),
            trow: Default::default(),
            nrow: Default::default(),
            seg: Default::default(),
            ent_w: Default::default(),
            r_p0: Default::default(),
            r_p1: Default::default(),
            r_p2: Default::default(),
            r_neg: Default::default(),
            rp: Default::default(),
            rt: Default::default(),
            ru: Default::default(),
            ro: Default::default(),
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
            p_found: sigs(n),
            p_lv: sigs(n),
            s2_valid: Reg::default(),
            s2_last: Reg::default(),
            s2_idx: regs(n),
            s2_found: regs(n),
            s2_q: regs(n),
            c_ms: sigs(n),
            c_lz: sigs(n),
            c_zp: sigs(n),
            c_mu: sigs(n),
            ent: Default::default(),
            q16: Default::default(),
            z16: Default::default(),
            dq: Default::default(),
            ma: Default::default(),
            prod: Default::default(),
            t4: Default::default(),
            t8a: Default::default(),
            t8b: Default::default(),
            t24: Default::default(),
            s3_valid: Reg::default(),
            s3_last: Reg::default(),
            s3_sel: regs(n),
            s3_r0: regs(n),
            s3_cs: regs(n),
            s3_abs: regs(n),
            s3_neg: regs(n),
            s3_scale: regs(n),
            s4_valid: Reg::default(),
            s4_last: Reg::default(),
            s4_sel: regs(n),
            s4_r0: regs(n),
            s4_p0: regs(n),
            s4_p1: regs(n),
            s4_p2: regs(n),
            s4_neg: regs(n),
            s5_valid: Reg::default(),
            s5_last: Reg::default(),
            s5_sel: regs(n),
            s5_r0: regs(n),
            s5_p: regs(n),
            s5_neg: regs(n),
            psum: Default::default(),
            t25: Default::default(),
            o_valid: Reg::default(),
            o_last: Reg::default(),
            o_data: regs(n),
            p_cnt: regs(5),
            n_lo: regs(5),
            n_hi: regs(5),
            n_hi1: (0..5).map(|_| Reg::new(Bits::<24>::from(1u64))).collect(),
            a_cnt: sigs(5),
            lo_sum: sigs(5),
            st_w: sigs(5),
            kcase: (0..5).map(|j| k(j as u64)).collect(),
            fb: Default::default(),
            channels10: k(channels as u64),
            levels4: k(max_levels as u64),
            rows16: k(rows as u64),
            lane_mask: k(lanes as u64 - 1),
            lane_shift: k(lanes.trailing_zeros() as u64),
            k_pr: k(0),
            k_ms: k(1),
            k_lz: k(2),
            k_zp: k(3),
            k_mu: k(4),
            zero2: k(0),
            one2: k(1),
            two2: k(2),
            zero4: k(0),
            zero8: k(0),
            zero16: k(0),
            one16: k(1),
            zero17: k(0),
            valid17: k(1 << 16),
            zero272: Constant::new(Bits::<272>::default()),
            lo3: k(7),
            three16: k(3),
            six16: k(6),
            one24: k(1),
            sh_lo: k(8),
            sign9: k(0x100),
            ext9: k(0xFE00),
            c127: k(127),
            c128: k(128),
            eight32: k(8),
            three32: k(3),
            six32: k(6),
            min8: k(0x80),
            max8: k(0x7F),
            sh_ch: k(52),
            sh_lv: k(48),
            sh_st: k(32),
            sh_z: k(16),
            sh_zent: k(16),
            sh_r0ent: k(25),
            _n: n,
            _ml: max_levels,
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
            self, clock, pres, done, err, l1_valid, l1_clear, l1_ok, l1_lane, l1_row, l1_lv, l1_start,
            l1_scale, l1_z9, l1_abs, l1_neg, l2_valid, l2_clear, l2_ok, l2_lane, l2_row, l2_base, l2_lv,
            l2_start, l2_scale, l2_z9, l2_p0, l2_p1, l2_p2, l2_neg, l2_pres, l3_valid, l3_wr, l3_lane,
            l3_addr, l3_scale, l3_z9, l3_p, l3_neg, bc, sk_valid, sk_last, sk_pos, sk_bc, s1_valid, s1_last,
            s1_pos, s1_base, zi, s2_valid, s2_last, s3_valid, s3_last, s4_valid, s4_last, s5_valid, s5_last,
            o_valid, o_last
        );
        self.en.next = !self.o_valid.q.val() | self.out_ready.val();

        // ---- loads (spec §11.8.1): checked at acceptance
        self.busy.next = self.l1_valid.q.val() | self.l2_valid.q.val() | self.l3_valid.q.val();
        self.sz_ready.next = !self.busy.val();
        self.sz_acc.next = self.sz_valid.val() & !self.busy.val();
        self.f_ch.next = self.sz_word.val().get_bits::<10>(self.sh_ch.val().index());
        self.f_lv.next = self.sz_word.val().get_bits::<4>(self.sh_lv.val().index());
        self.f_zero.next = bit_cast::<16, 9>(self.sz_word.val().get_bits::<9>(self.sh_z.val().index()));
        if (self.f_zero.val() & self.sign9.val()) != self.zero16.val() {
            self.f_zero.next = self.f_zero.val() | self.ext9.val();
        }
        self.sz_code.next = self.zero2.val();
        if bit_cast::<5, 4>(self.f_lv.val()) >= self.levels4.val() {
            self.sz_code.next = self.two2.val();
        }
        if bit_cast::<11, 10>(self.f_ch.val()) >= self.channels10.val() {
            self.sz_code.next = self.one2.val();
        }
        if self.sz_clear.val() {
            self.sz_code.next = self.zero2.val();
        }
        self.done.reset.next = self.reset.val();
        self.err.reset.next = self.reset.val();
        self.done.en.next = true;
        self.err.en.next = self.sz_acc.val();
        self.done.d.next = self.sz_acc.val();
        self.err.d.next = self.sz_code.val();
        self.sz_done.next = self.done.q.val();
        self.sz_error.next = self.err.q.val();

        // L1 holds the load until the record beats accepted before it have
        // read the table (none in the skid or S1): they see the old table
        self.go.next = self.l1_valid.q.val() & !self.sk_valid.q.val() & !self.s1_valid.q.val();
        self.l1_valid.reset.next = self.reset.val();
        self.l1_clear.reset.next = self.reset.val();
        self.l1_ok.reset.next = self.reset.val();
        self.l1_lane.reset.next = self.reset.val();
        self.l1_row.reset.next = self.reset.val();
        self.l1_lv.reset.next = self.reset.val();
        self.l1_start.reset.next = self.reset.val();
        self.l1_scale.reset.next = self.reset.val();
        self.l1_z9.reset.next = self.reset.val();
        self.l1_abs.reset.next = self.reset.val();
        self.l1_neg.reset.next = self.reset.val();
        self.l1_valid.en.next = true;
        self.l1_clear.en.next = self.sz_acc.val();
        self.l1_ok.en.next = self.sz_acc.val();
        self.l1_lane.en.next = self.sz_acc.val();
        self.l1_row.en.next = self.sz_acc.val();
        self.l1_lv.en.next = self.sz_acc.val();
        self.l1_start.en.next = self.sz_acc.val();
        self.l1_scale.en.next = self.sz_acc.val();
        self.l1_z9.en.next = self.sz_acc.val();
        self.l1_abs.en.next = self.sz_acc.val();
        self.l1_neg.en.next = self.sz_acc.val();
        // a rejected load still takes its cycles (a no-op)
        self.l1_valid.d.next = self.sz_acc.val() | (self.l1_valid.q.val() & !self.go.val());
        self.l1_clear.d.next = self.sz_clear.val();
        self.l1_ok.d.next = self.sz_code.val() == self.zero2.val();
        self.l1_lane.d.next = bit_cast::<6, 10>(self.f_ch.val() & self.lane_mask.val());
        self.l1_row.d.next = bit_cast::<16, 10>(self.f_ch.val() >> self.lane_shift.val());
        self.l1_lv.d.next = self.f_lv.val();
        self.l1_start.d.next = self.sz_word.val().get_bits::<16>(self.sh_st.val().index());
        self.l1_scale.d.next = self.sz_word.val().get_bits::<16>(0);
        self.l1_z9.d.next = self.sz_word.val().get_bits::<9>(self.sh_z.val().index());
        // rec(0) = clamp(floor(((0 - z) S + 128) / 256)): |z| S, sign apart
        self.l1_abs.d.next = self.f_zero.val();
        if self.f_zero.val().get_bit(15) {
            self.l1_abs.d.next = !self.f_zero.val() + self.one16.val();
        }
        self.l1_neg.d.next = !self.f_zero.val().get_bit(15) & (self.f_zero.val() != self.zero16.val());

        // L2: the channel's levels row is read (at the go edge), |z| S in two pieces
        self.l2_valid.reset.next = self.reset.val();
        self.l2_clear.reset.next = self.reset.val();
        self.l2_ok.reset.next = self.reset.val();
        self.l2_lane.reset.next = self.reset.val();
        self.l2_row.reset.next = self.reset.val();
        self.l2_base.reset.next = self.reset.val();
        self.l2_lv.reset.next = self.reset.val();
        self.l2_start.reset.next = self.reset.val();
        self.l2_scale.reset.next = self.reset.val();
        self.l2_z9.reset.next = self.reset.val();
        self.l2_p0.reset.next = self.reset.val();
        self.l2_p1.reset.next = self.reset.val();
        self.l2_p2.reset.next = self.reset.val();
        self.l2_neg.reset.next = self.reset.val();
        self.l2_pres.reset.next = self.reset.val();
        self.l2_valid.en.next = true;
        self.l2_clear.en.next = self.go.val();
        self.l2_ok.en.next = self.go.val();
        self.l2_lane.en.next = self.go.val();
        self.l2_row.en.next = self.go.val();
        self.l2_base.en.next = self.go.val();
        self.l2_lv.en.next = self.go.val();
        self.l2_start.en.next = self.go.val();
        self.l2_scale.en.next = self.go.val();
        self.l2_z9.en.next = self.go.val();
        self.l2_p0.en.next = self.go.val();
        self.l2_p1.en.next = self.go.val();
        self.l2_p2.en.next = self.go.val();
        self.l2_neg.en.next = self.go.val();
        self.l2_pres.en.next = self.go.val();
        self.l2_valid.d.next = self.go.val();
        self.l2_clear.d.next = self.l1_clear.q.val();
        self.l2_ok.d.next = self.l1_ok.q.val();
        self.l2_lane.d.next = self.l1_lane.q.val();
        self.l2_row.d.next = self.l1_row.q.val();
        self.l2_base.d.next = self.mul_ml.y.val();
        self.l2_lv.d.next = self.l1_lv.q.val();
        self.l2_start.d.next = self.l1_start.q.val();
        self.l2_scale.d.next = self.l1_scale.q.val();
        self.l2_z9.d.next = self.l1_z9.q.val();
        self.ma.next = self.l1_abs.q.val() & self.lo3.val();
        self.prod.next = self.ma.val() * self.l1_scale.q.val();
        self.l2_p0.d.next = self.prod.val().get_bits::<20>(0);
        self.ma.next = (self.l1_abs.q.val() >> self.three16.val()) & self.lo3.val();
        self.prod.next = self.ma.val() * self.l1_scale.q.val();
        self.l2_p1.d.next = self.prod.val().get_bits::<20>(0);
        self.ma.next = (self.l1_abs.q.val() >> self.six16.val()) & self.lo3.val();
        self.prod.next = self.ma.val() * self.l1_scale.q.val();
        self.l2_p2.d.next = self.prod.val().get_bits::<20>(0);
        self.l2_neg.d.next = self.l1_neg.q.val();
        self.l2_pres.d.next = false;
        for i in 0..self._n {
            if self.l1_lane.q.val() == self.lane_idx[i].val() {
                self.l2_pres.d.next = self.pres.rd_q.val().get_bit(self.lane_idx[i].val().index());
            }
        }

        // end of L2: the levels row written with this level set (the others
        // empty unless the channel was present), the present flag set (or
        // all cleared), rec(0) rounded into L3; end of L3: the entry written
        self.wr.next = self.l2_valid.q.val() & self.l2_ok.q.val() & !self.l2_clear.q.val();
        self.trow.next = self.zero272.val();
        for i in 0..self._n {
            if self.l2_lane.q.val() == self.lane_idx[i].val() {
                self.trow.next = self.lv_ram[i].rdata.val();
            }
        }
        self.nrow.next = self.zero272.val();
        for l in 0..self._ml {
            self.seg.next = self.trow.val().get_bits::<17>(self.loff[l].val().index());
            if !self.l2_pres.q.val() {
                self.seg.next = self.zero17.val();
            }
            if self.l2_lv.q.val() == self.lidx[l].val() {
                self.seg.next = bit_cast::<17, 16>(self.l2_start.q.val()) | self.valid17.val();
            }
            self.nrow.next = self.nrow.val() | (bit_cast::<272, 17>(self.seg.val()) << self.loff[l].val());
        }
        // the split product's sum, P = p0 + p1 2^3 + p2 2^6 (< 2^25)
        self.r_p0.next = self.l2_p0.q.val();
        self.r_p1.next = self.l2_p1.q.val();
        self.r_p2.next = self.l2_p2.q.val();
        self.psum.next = bit_cast::<25, 20>(self.r_p0.val())
            + (bit_cast::<25, 20>(self.r_p1.val()) << self.three32.val())
            + (bit_cast::<25, 20>(self.r_p2.val()) << self.six32.val());
        self.l3_valid.reset.next = self.reset.val();
        self.l3_wr.reset.next = self.reset.val();
        self.l3_lane.reset.next = self.reset.val();
        self.l3_addr.reset.next = self.reset.val();
        self.l3_scale.reset.next = self.reset.val();
        self.l3_z9.reset.next = self.reset.val();
        self.l3_p.reset.next = self.reset.val();
        self.l3_neg.reset.next = self.reset.val();
        self.l3_valid.en.next = true;
        self.l3_wr.en.next = true;
        self.l3_lane.en.next = self.l2_valid.q.val();
        self.l3_addr.en.next = self.l2_valid.q.val();
        self.l3_scale.en.next = self.l2_valid.q.val();
        self.l3_z9.en.next = self.l2_valid.q.val();
        self.l3_p.en.next = self.l2_valid.q.val();
        self.l3_neg.en.next = self.l2_valid.q.val();
        self.l3_valid.d.next = self.l2_valid.q.val();
        self.l3_wr.d.next = self.wr.val();
        self.l3_lane.d.next = self.l2_lane.q.val();
        self.l3_addr.d.next =
            bit_cast::<14, 16>(self.l2_base.q.val() + bit_cast::<16, 4>(self.l2_lv.q.val()));
        self.l3_scale.d.next = self.l2_scale.q.val();
        self.l3_z9.d.next = self.l2_z9.q.val();
        self.l3_p.d.next = self.psum.val();
        self.l3_neg.d.next = self.l2_neg.q.val();
        // rec(0) rounded in L3: floor((+-P + 128) / 256) is floor((P + 128) / 256)
        // or -floor((P + 127) / 256); INT8 clamp
        self.rp.next = bit_cast::<32, 25>(self.l3_p.q.val());
        self.r_neg.next = self.l3_neg.q.val();
        self.rt.next = self.rp.val() + self.c128.val();
        if self.r_neg.val() {
            self.rt.next = self.rp.val() + self.c127.val();
        }
        self.ru.next = self.rt.val() >> self.eight32.val();
        self.ro.next = self.ru.val().get_bits::<8>(0);
        if self.ru.val() > self.c127.val() {
            self.ro.next = self.max8.val();
        }
        if self.r_neg.val() {
            self.ro.next = self.zero8.val() - self.ru.val().get_bits::<8>(0);
            if self.ru.val() > self.c128.val() {
                self.ro.next = self.min8.val();
            }
        }
        self.ent_w.next = bit_cast::<33, 16>(self.l3_scale.q.val())
            | (bit_cast::<33, 9>(self.l3_z9.q.val()) << self.sh_zent.val())
            | (bit_cast::<33, 8>(self.ro.val()) << self.sh_r0ent.val());
        self.pres.reset.next = self.reset.val();
        self.pres.clr.next = self.l2_valid.q.val() & self.l2_ok.q.val() & self.l2_clear.q.val();
        self.pres.set.next = self.wr.val();
        self.pres.set_row.next = self.l2_row.q.val();
        self.pres.set_col.next = bit_cast::<8, 6>(self.l2_lane.q.val());

        // ---- record handshake: a beat enters S1 (reading its levels row and
        // present flags) at acceptance, or from the skid when S1 advances
        self.in_ready.next = !self.sk_valid.q.val() & !self.busy.val();
        self.acc.next = self.in_valid.val() & !self.sk_valid.q.val() & !self.busy.val();
        self.bc.reset.next = self.reset.val();
        self.bc.en.next = self.acc.val();
        self.bc.d.next = self.bc.q.val() + self.one16.val();
        if self.in_last.val() {
            self.bc.d.next = self.zero16.val();
        }
        // the row read this cycle: the skid's beat, else a waiting load's, else the offered beat's
        self.rowsel.next = self.bc.q.val();
        if self.l1_valid.q.val() {
            self.rowsel.next = self.l1_row.q.val();
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
                | (self.go.val()
                    & self.l1_ok.q.val()
                    & !self.l1_clear.q.val()
                    & (self.l1_lane.q.val() == self.lane_idx[i].val()))
                | (self.wr.val() & (self.l2_lane.q.val() == self.lane_idx[i].val()));
            self.lv_ram[i].we.next = self.l2_valid.q.val();
            self.lv_ram[i].addr.next = bit_cast::<10, 16>(self.rowsel.val());
            if self.l2_valid.q.val() {
                self.lv_ram[i].addr.next = bit_cast::<10, 16>(self.l2_row.q.val());
            }
            self.lv_ram[i].wdata.next = self.nrow.val();
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

        // ---- S1: per lane, the highest level with an entry and start <= pos
        // (spec §11.8.1); codes to their channels (§3.1)
        self.zi.reset.next = self.reset.val();
        self.zi.en.next = self.en.val();
        self.zi.in_valid.next = self.s1_valid.q.val();
        self.s2_valid.reset.next = self.reset.val();
        self.s2_last.reset.next = self.reset.val();
        self.s2_valid.en.next = self.en.val();
        self.s2_last.en.next = self.en.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_last.d.next = self.s1_last.q.val();
        for i in 0..self._n {
            self.zi.data[i].next = self.s1_code[i].q.val();
            self.zi.mask[i].next = self.s1_lab[i].q.val();
            self.p_found[i].next = false;
            self.p_lv[i].next = self.zero4.val();
            for l in 0..self._ml {
                self.seg.next = self.lv_ram[i].rdata.val().get_bits::<17>(self.loff[l].val().index());
                if self.s1_pres[i].q.val()
                    & self.seg.val().get_bit(16)
                    & (self.seg.val().get_bits::<16>(0) <= self.s1_pos.q.val())
                {
                    self.p_found[i].next = true;
                    self.p_lv[i].next = self.lidx[l].val();
                }
            }
            self.en_ram[i].clock.next = self.clock.val();
            self.en_ram[i].en.next = (self.en.val() & self.s1_valid.q.val())
                | (self.l3_valid.q.val()
                    & self.l3_wr.q.val()
                    & (self.l3_lane.q.val() == self.lane_idx[i].val()));
            self.en_ram[i].we.next = self.l3_valid.q.val();
            self.t4.next = self.p_lv[i].val();
            self.en_ram[i].addr.next =
                bit_cast::<14, 16>(self.s1_base.q.val() + bit_cast::<16, 4>(self.t4.val()));
            if self.l3_valid.q.val() {
                self.en_ram[i].addr.next = self.l3_addr.q.val();
            }
            self.en_ram[i].wdata.next = self.ent_w.val();
            self.s2_idx[i].clock.next = self.clock.val();
            self.s2_found[i].clock.next = self.clock.val();
            self.s2_q[i].clock.next = self.clock.val();
            self.s2_idx[i].reset.next = self.reset.val();
            self.s2_found[i].reset.next = self.reset.val();
            self.s2_q[i].reset.next = self.reset.val();
            self.s2_idx[i].en.next = self.en.val();
            self.s2_found[i].en.next = self.en.val();
            self.s2_q[i].en.next = self.en.val();
            self.s2_idx[i].d.next = self.s1_idx[i].q.val();
            self.s2_found[i].d.next = self.p_found[i].val();
            self.s2_q[i].d.next = self.zi.out[i].val();
        }

        // ---- S2: the entry (read on entry to S2), cases (spec §11.8.2), |q - z|
        self.s3_valid.reset.next = self.reset.val();
        self.s3_last.reset.next = self.reset.val();
        self.s3_valid.en.next = self.en.val();
        self.s3_last.en.next = self.en.val();
        self.s3_valid.d.next = self.s2_valid.q.val();
        self.s3_last.d.next = self.s2_last.q.val();
        for i in 0..self._n {
            self.ent.next = self.en_ram[i].rdata.val();
            self.z16.next = bit_cast::<16, 9>(self.ent.val().get_bits::<9>(self.sh_zent.val().index()));
            if self.ent.val().get_bit(24) {
                self.z16.next = self.z16.val() | self.ext9.val();
            }
            self.t4.next = self.s2_q[i].q.val();
            self.q16.next = bit_cast::<16, 4>(self.t4.val());
            self.c_ms[i].next = self.s2_idx[i].q.val() & !self.s2_found[i].q.val();
            self.c_lz[i].next = self.s2_idx[i].q.val()
                & self.s2_found[i].q.val()
                & (self.s2_q[i].q.val() == self.zero4.val());
            self.c_zp[i].next = self.s2_idx[i].q.val()
                & self.s2_found[i].q.val()
                & (self.s2_q[i].q.val() != self.zero4.val())
                & (self.q16.val() == self.z16.val());
            self.c_mu[i].next = self.s2_idx[i].q.val()
                & self.s2_found[i].q.val()
                & (self.s2_q[i].q.val() != self.zero4.val())
                & (self.q16.val() != self.z16.val());
            self.dq.next = self.q16.val() - self.z16.val();
            self.s3_sel[i].clock.next = self.clock.val();
            self.s3_r0[i].clock.next = self.clock.val();
            self.s3_cs[i].clock.next = self.clock.val();
            self.s3_abs[i].clock.next = self.clock.val();
            self.s3_neg[i].clock.next = self.clock.val();
            self.s3_scale[i].clock.next = self.clock.val();
            self.s3_sel[i].reset.next = self.reset.val();
            self.s3_r0[i].reset.next = self.reset.val();
            self.s3_cs[i].reset.next = self.reset.val();
            self.s3_abs[i].reset.next = self.reset.val();
            self.s3_neg[i].reset.next = self.reset.val();
            self.s3_scale[i].reset.next = self.reset.val();
            self.s3_sel[i].en.next = self.en.val();
            self.s3_r0[i].en.next = self.en.val();
            self.s3_cs[i].en.next = self.en.val();
            // operand isolation: the multiplier's operands change only for multiplies
            self.s3_abs[i].en.next = self.en.val() & self.s2_valid.q.val() & self.c_mu[i].val();
            self.s3_neg[i].en.next = self.en.val() & self.s2_valid.q.val() & self.c_mu[i].val();
            self.s3_scale[i].en.next = self.en.val() & self.s2_valid.q.val() & self.c_mu[i].val();
            // select: 0 zero output, 1 rec(0), 2 product
            self.s3_sel[i].d.next = self.zero2.val();
            if self.c_lz[i].val() {
                self.s3_sel[i].d.next = self.one2.val();
            }
            if self.c_mu[i].val() {
                self.s3_sel[i].d.next = self.two2.val();
            }
            self.s3_r0[i].d.next = self.ent.val().get_bits::<8>(self.sh_r0ent.val().index());
            self.s3_cs[i].d.next = self.k_pr.val();
            if self.c_ms[i].val() {
                self.s3_cs[i].d.next = self.k_ms.val();
            }
            if self.c_lz[i].val() {
                self.s3_cs[i].d.next = self.k_lz.val();
            }
            if self.c_zp[i].val() {
                self.s3_cs[i].d.next = self.k_zp.val();
            }
            if self.c_mu[i].val() {
                self.s3_cs[i].d.next = self.k_mu.val();
            }
            self.s3_neg[i].d.next = self.dq.val().get_bit(15);
            self.s3_abs[i].d.next = self.dq.val();
            if self.dq.val().get_bit(15) {
                self.s3_abs[i].d.next = !self.dq.val() + self.one16.val();
            }
            self.s3_scale[i].d.next = self.ent.val().get_bits::<16>(0);
        }

        // ---- S3: |q - z| S as two partial products (|q - z| < 2^9: bits 4:0
        // and 8:5); per-case popcounts of the beat beside S4
        self.s4_valid.reset.next = self.reset.val();
        self.s4_last.reset.next = self.reset.val();
        self.s4_valid.en.next = self.en.val();
        self.s4_last.en.next = self.en.val();
        self.s4_valid.d.next = self.s3_valid.q.val();
        self.s4_last.d.next = self.s3_last.q.val();
        for i in 0..self._n {
            self.s4_sel[i].clock.next = self.clock.val();
            self.s4_r0[i].clock.next = self.clock.val();
            self.s4_p0[i].clock.next = self.clock.val();
            self.s4_p1[i].clock.next = self.clock.val();
            self.s4_p2[i].clock.next = self.clock.val();
            self.s4_neg[i].clock.next = self.clock.val();
            self.s4_sel[i].reset.next = self.reset.val();
            self.s4_r0[i].reset.next = self.reset.val();
            self.s4_p0[i].reset.next = self.reset.val();
            self.s4_p1[i].reset.next = self.reset.val();
            self.s4_p2[i].reset.next = self.reset.val();
            self.s4_neg[i].reset.next = self.reset.val();
            self.s4_sel[i].en.next = self.en.val();
            self.s4_r0[i].en.next = self.en.val();
            self.s4_p0[i].en.next =
                self.en.val() & self.s3_valid.q.val() & (self.s3_sel[i].q.val() == self.two2.val());
            self.s4_p1[i].en.next =
                self.en.val() & self.s3_valid.q.val() & (self.s3_sel[i].q.val() == self.two2.val());
            self.s4_p2[i].en.next =
                self.en.val() & self.s3_valid.q.val() & (self.s3_sel[i].q.val() == self.two2.val());
            self.s4_neg[i].en.next =
                self.en.val() & self.s3_valid.q.val() & (self.s3_sel[i].q.val() == self.two2.val());
            self.s4_sel[i].d.next = self.s3_sel[i].q.val();
            self.s4_r0[i].d.next = self.s3_r0[i].q.val();
            self.ma.next = self.s3_abs[i].q.val() & self.lo3.val();
            self.prod.next = self.ma.val() * self.s3_scale[i].q.val();
            self.s4_p0[i].d.next = self.prod.val().get_bits::<20>(0);
            self.ma.next = (self.s3_abs[i].q.val() >> self.three16.val()) & self.lo3.val();
            self.prod.next = self.ma.val() * self.s3_scale[i].q.val();
            self.s4_p1[i].d.next = self.prod.val().get_bits::<20>(0);
            self.ma.next = (self.s3_abs[i].q.val() >> self.six16.val()) & self.lo3.val();
            self.prod.next = self.ma.val() * self.s3_scale[i].q.val();
            self.s4_p2[i].d.next = self.prod.val().get_bits::<20>(0);
            self.s4_neg[i].d.next = self.s3_neg[i].q.val();
        }
        for j in 0..5 {
            self.a_cnt[j].next = self.zero8.val();
            for i in 0..self._n {
                self.fb.next = self.s3_cs[i].q.val() == self.kcase[j].val();
                self.a_cnt[j].next = self.a_cnt[j].val() + bit_cast::<8, 1>(self.fb.val().into());
            }
            self.p_cnt[j].clock.next = self.clock.val();
            self.p_cnt[j].reset.next = self.reset.val();
            self.p_cnt[j].en.next = self.en.val();
            self.p_cnt[j].d.next = self.a_cnt[j].val();
            // counters add a beat's popcounts when it leaves S4
            self.t8a.next = self.n_lo[j].q.val();
            self.t8b.next = self.p_cnt[j].q.val();
            self.lo_sum[j].next = bit_cast::<9, 8>(self.t8a.val()) + bit_cast::<9, 8>(self.t8b.val());
            self.n_lo[j].clock.next = self.clock.val();
            self.n_hi[j].clock.next = self.clock.val();
            self.n_hi1[j].clock.next = self.clock.val();
            self.n_lo[j].reset.next = self.reset.val();
            self.n_hi[j].reset.next = self.reset.val();
            self.n_hi1[j].reset.next = self.reset.val();
            self.n_lo[j].en.next = self.en.val() & self.s4_valid.q.val();
            self.n_hi[j].en.next = self.en.val() & self.s4_valid.q.val() & self.lo_sum[j].val().get_bit(8);
            self.n_hi1[j].en.next = true;
            self.n_lo[j].d.next = self.lo_sum[j].val().get_bits::<8>(0);
            self.n_hi[j].d.next = self.n_hi1[j].q.val();
            self.n_hi1[j].d.next = self.n_hi[j].q.val() + self.one24.val();
            self.t24.next = self.n_hi[j].q.val();
            self.st_w[j].next =
                (bit_cast::<32, 24>(self.t24.val()) << self.sh_lo.val()) | bit_cast::<32, 8>(self.t8a.val());
        }
        self.st_pruned.next = self.st_w[0].val();
        self.st_missing_level.next = self.st_w[1].val();
        self.st_label_zero.next = self.st_w[2].val();
        self.st_zero_point.next = self.st_w[3].val();
        self.st_multiplies.next = self.st_w[4].val();

        // ---- S4: the sum of the partial products
        self.s5_valid.reset.next = self.reset.val();
        self.s5_last.reset.next = self.reset.val();
        self.s5_valid.en.next = self.en.val();
        self.s5_last.en.next = self.en.val();
        self.s5_valid.d.next = self.s4_valid.q.val();
        self.s5_last.d.next = self.s4_last.q.val();
        for i in 0..self._n {
            self.r_p0.next = self.s4_p0[i].q.val();
            self.r_p1.next = self.s4_p1[i].q.val();
            self.r_p2.next = self.s4_p2[i].q.val();
            self.psum.next = bit_cast::<25, 20>(self.r_p0.val())
                + (bit_cast::<25, 20>(self.r_p1.val()) << self.three32.val())
                + (bit_cast::<25, 20>(self.r_p2.val()) << self.six32.val());
            self.s5_sel[i].clock.next = self.clock.val();
            self.s5_r0[i].clock.next = self.clock.val();
            self.s5_p[i].clock.next = self.clock.val();
            self.s5_neg[i].clock.next = self.clock.val();
            self.s5_sel[i].reset.next = self.reset.val();
            self.s5_r0[i].reset.next = self.reset.val();
            self.s5_p[i].reset.next = self.reset.val();
            self.s5_neg[i].reset.next = self.reset.val();
            self.s5_sel[i].en.next = self.en.val();
            self.s5_r0[i].en.next = self.en.val();
            self.s5_p[i].en.next =
                self.en.val() & self.s4_valid.q.val() & (self.s4_sel[i].q.val() == self.two2.val());
            self.s5_neg[i].en.next =
                self.en.val() & self.s4_valid.q.val() & (self.s4_sel[i].q.val() == self.two2.val());
            self.s5_sel[i].d.next = self.s4_sel[i].q.val();
            self.s5_r0[i].d.next = self.s4_r0[i].q.val();
            self.s5_p[i].d.next = self.psum.val();
            self.s5_neg[i].d.next = self.s4_neg[i].q.val();
        }

        // ---- S5: sign, + 128, floor / 256, clamp to INT8, select
        self.o_valid.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_valid.en.next = self.en.val();
        self.o_last.en.next = self.en.val();
        self.o_valid.d.next = self.s5_valid.q.val();
        self.o_last.d.next = self.s5_last.q.val();
        for i in 0..self._n {
            self.t25.next = self.s5_p[i].q.val();
            self.rp.next = bit_cast::<32, 25>(self.t25.val());
            self.r_neg.next = self.s5_neg[i].q.val();
            self.rt.next = self.rp.val() + self.c128.val();
            if self.r_neg.val() {
                self.rt.next = self.rp.val() + self.c127.val();
            }
            self.ru.next = self.rt.val() >> self.eight32.val();
            self.ro.next = self.ru.val().get_bits::<8>(0);
            if self.ru.val() > self.c127.val() {
                self.ro.next = self.max8.val();
            }
            if self.r_neg.val() {
                self.ro.next = self.zero8.val() - self.ru.val().get_bits::<8>(0);
                if self.ru.val() > self.c128.val() {
                    self.ro.next = self.min8.val();
                }
            }
            self.o_data[i].clock.next = self.clock.val();
            self.o_data[i].reset.next = self.reset.val();
            self.o_data[i].en.next = self.en.val();
            self.o_data[i].d.next = self.zero8.val();
            if self.s5_sel[i].q.val() == self.one2.val() {
                self.o_data[i].d.next = self.s5_r0[i].q.val();
            }
            if self.s5_sel[i].q.val() == self.two2.val() {
                self.o_data[i].d.next = self.ro.val();
            }
            self.out_data[i].next = self.o_data[i].q.val();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_last.next = self.o_last.q.val();
    }
}
