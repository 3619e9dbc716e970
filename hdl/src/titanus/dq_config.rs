//! Load path of the Titanus dequantization unit's scale-zero table: an
//! entry word is checked at acceptance (L1), waits there until the record
//! beats accepted before it have read the table, reads its channel's levels
//! row and computes |z| S in pieces (L2), then writes the row with its
//! level set and the present flag (end of L2) and the entry with rec(0)
//! rounded (end of L3). The memories and the present flags stay in the
//! unit, which shares their ports with the record path; this block gives
//! it the write side. Paper: Titanus (GLSVLSI 2025) §4.1 (SZ buffer), §3.1
//! (rec(0), the value of code 0). Spec: docs/spec.md §11.8.1 (table and
//! loads), §11.7.2 (entry word), §11.14.3 (load stages).

use super::dequantizer::LEVEL_BITS;
use super::dq_arith::{RoundI8, SplitMul, SplitSum};
use crate::prim::reg::Reg;
use crate::prim::vecs::consts;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DqConfig {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: no load in flight, sz_done and sz_error 0
    pub reset: Signal<In, Bit>,
    /// the unit's load port (spec §11.13): word, clear, valid; ready, done, error
    pub sz_valid: Signal<In, Bit>,
    pub sz_word: Signal<In, Bits<64>>,
    pub sz_clear: Signal<In, Bit>,
    pub sz_ready: Signal<Out, Bit>,
    pub sz_done: Signal<Out, Bit>,
    pub sz_error: Signal<Out, Bits<2>>,
    /// record beats accepted before the load are still to read the table
    /// (skid or S1 valid): L1 waits
    pub hold: Signal<In, Bit>,
    /// a load is in L1, L2 or L3 (records are held off)
    pub busy: Signal<Out, Bit>,
    /// L1's row (its channel / lanes), waiting while `rd_wait`: the unit
    /// reads it when no skid beat needs the row port
    pub rd_wait: Signal<Out, Bit>,
    pub rd_row: Signal<Out, Bits<16>>,
    /// the row's first entry word, `rd_row * max_levels`, one cycle after
    /// `rd_row` is offered (the unit's shared constant multiplier)
    pub base: Signal<In, Bits<16>>,
    /// the load leaves L1 now, reading the levels row of lane `rd_lane`
    /// if `rd_ok` (checked, not a clear)
    pub go: Signal<Out, Bit>,
    pub rd_ok: Signal<Out, Bit>,
    pub rd_lane: Signal<Out, Bits<6>>,
    /// the present flag of L1's channel (the unit's flags, row `rd_row`)
    pub pres_hit: Signal<In, Bit>,
    /// L2: the levels row read for lane `wr_lane` (17 * max_levels bits used)
    pub trow: Signal<In, Bits<272>>,
    /// end of L2: row `wr_row` of lane `wr_lane` written with `nrow`
    /// (`wr_valid` drives the memories' write enable, `wr` the selected
    /// lane's access and the present flag's set)
    pub wr_valid: Signal<Out, Bit>,
    pub wr: Signal<Out, Bit>,
    pub wr_row: Signal<Out, Bits<16>>,
    pub wr_lane: Signal<Out, Bits<6>>,
    pub nrow: Signal<Out, Bits<272>>,
    /// end of L2: every present flag cleared
    pub clr: Signal<Out, Bit>,
    /// end of L3: entry `ent_addr` of lane `ent_lane` written with `ent_w`
    /// when `ent_wr` (`ent_valid` drives the write enable)
    pub ent_valid: Signal<Out, Bit>,
    pub ent_wr: Signal<Out, Bit>,
    pub ent_lane: Signal<Out, Bits<6>>,
    pub ent_addr: Signal<Out, Bits<14>>,
    pub ent_w: Signal<Out, Bits<33>>,
    sz_acc: Signal<Local, Bit>,
    sz_code: Signal<Local, Bits<2>>,
    f_ch: Signal<Local, Bits<10>>,
    f_lv: Signal<Local, Bits<4>>,
    f_zero: Signal<Local, Bits<16>>,
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
    mul: SplitMul,
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
    sum: SplitSum,
    l3_valid: Reg<Bit>,
    l3_wr: Reg<Bit>,
    l3_lane: Reg<Bits<6>>,
    l3_addr: Reg<Bits<14>>,
    l3_scale: Reg<Bits<16>>,
    l3_z9: Reg<Bits<9>>,
    l3_p: Reg<Bits<25>>,
    l3_neg: Reg<Bit>,
    rnd: RoundI8,
    wr_l: Signal<Local, Bit>,
    seg: Signal<Local, Bits<17>>,
    nrow_l: Signal<Local, Bits<272>>,
    lidx: Vec<Constant<Bits<4>>>,
    loff: Vec<Constant<Bits<9>>>,
    channels10: Constant<Bits<11>>,
    levels4: Constant<Bits<5>>,
    lane_mask: Constant<Bits<10>>,
    lane_shift: Constant<Bits<4>>,
    zero2: Constant<Bits<2>>,
    one2: Constant<Bits<2>>,
    two2: Constant<Bits<2>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    zero17: Constant<Bits<17>>,
    valid17: Constant<Bits<17>>,
    zero272: Constant<Bits<272>>,
    sign9: Constant<Bits<16>>,
    ext9: Constant<Bits<16>>,
    sh_ch: Constant<Bits<6>>,
    sh_lv: Constant<Bits<6>>,
    sh_st: Constant<Bits<6>>,
    sh_z: Constant<Bits<6>>,
    sh_zent: Constant<Bits<6>>,
    sh_r0ent: Constant<Bits<6>>,
    _ml: usize,
}

impl DqConfig {
    /// `channels` (<= 1024) over `lanes` (a power of two, <= 64), each
    /// channel with up to `max_levels` (1..=16) levels: the checks of an
    /// entry word and its row and lane.
    pub fn new(channels: usize, lanes: usize, max_levels: usize) -> Self {
        DqConfig {
            clock: Default::default(),
            reset: Default::default(),
            sz_valid: Default::default(),
            sz_word: Default::default(),
            sz_clear: Default::default(),
            sz_ready: Default::default(),
            sz_done: Default::default(),
            sz_error: Default::default(),
            hold: Default::default(),
            busy: Default::default(),
            rd_wait: Default::default(),
            rd_row: Default::default(),
            base: Default::default(),
            go: Default::default(),
            rd_ok: Default::default(),
            rd_lane: Default::default(),
            pres_hit: Default::default(),
            trow: Default::default(),
            wr_valid: Default::default(),
            wr: Default::default(),
            wr_row: Default::default(),
            wr_lane: Default::default(),
            nrow: Default::default(),
            clr: Default::default(),
            ent_valid: Default::default(),
            ent_wr: Default::default(),
            ent_lane: Default::default(),
            ent_addr: Default::default(),
            ent_w: Default::default(),
            sz_acc: Default::default(),
            sz_code: Default::default(),
            f_ch: Default::default(),
            f_lv: Default::default(),
            f_zero: Default::default(),
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
            mul: SplitMul::default(),
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
            sum: SplitSum::default(),
            l3_valid: Reg::default(),
            l3_wr: Reg::default(),
            l3_lane: Reg::default(),
            l3_addr: Reg::default(),
            l3_scale: Reg::default(),
            l3_z9: Reg::default(),
            l3_p: Reg::default(),
            l3_neg: Reg::default(),
            rnd: RoundI8::default(),
            wr_l: Default::default(),
            seg: Default::default(),
            nrow_l: Default::default(),
            lidx: consts(0..max_levels as u64),
            loff: consts((0..max_levels).map(|l| (LEVEL_BITS * l) as u64)),
            channels10: Constant::new((channels as u64).into()),
            levels4: Constant::new((max_levels as u64).into()),
            lane_mask: Constant::new((lanes as u64 - 1).into()),
            lane_shift: Constant::new((lanes.trailing_zeros() as u64).into()),
            zero2: Constant::new(0u64.into()),
            one2: Constant::new(1u64.into()),
            two2: Constant::new(2u64.into()),
            zero16: Constant::new(0u64.into()),
            one16: Constant::new(1u64.into()),
            zero17: Constant::new(0u64.into()),
            valid17: Constant::new((1u64 << 16).into()),
            zero272: Constant::new(Bits::<272>::default()),
            sign9: Constant::new(0x100u64.into()),
            ext9: Constant::new(0xFE00u64.into()),
            sh_ch: Constant::new(52u64.into()),
            sh_lv: Constant::new(48u64.into()),
            sh_st: Constant::new(32u64.into()),
            sh_z: Constant::new(16u64.into()),
            sh_zent: Constant::new(16u64.into()),
            sh_r0ent: Constant::new(25u64.into()),
            _ml: max_levels,
        }
    }
}

impl Logic for DqConfig {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, done, err, l1_valid, l1_clear, l1_ok, l1_lane, l1_row, l1_lv, l1_start, l1_scale,
            l1_z9, l1_abs, l1_neg, l2_valid, l2_clear, l2_ok, l2_lane, l2_row, l2_base, l2_lv, l2_start,
            l2_scale, l2_z9, l2_p0, l2_p1, l2_p2, l2_neg, l2_pres, l3_valid, l3_wr, l3_lane, l3_addr,
            l3_scale, l3_z9, l3_p, l3_neg
        );
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
        self.go.next = self.l1_valid.q.val() & !self.hold.val();
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
        self.rd_wait.next = self.l1_valid.q.val();
        self.rd_row.next = self.l1_row.q.val();
        self.rd_ok.next = self.l1_ok.q.val() & !self.l1_clear.q.val();
        self.rd_lane.next = self.l1_lane.q.val();

        // L2: the channel's levels row is read (at the go edge), |z| S in pieces
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
        self.l2_base.d.next = self.base.val();
        self.l2_lv.d.next = self.l1_lv.q.val();
        self.l2_start.d.next = self.l1_start.q.val();
        self.l2_scale.d.next = self.l1_scale.q.val();
        self.l2_z9.d.next = self.l1_z9.q.val();
        self.mul.abs.next = self.l1_abs.q.val();
        self.mul.scale.next = self.l1_scale.q.val();
        self.l2_p0.d.next = self.mul.p0.val();
        self.l2_p1.d.next = self.mul.p1.val();
        self.l2_p2.d.next = self.mul.p2.val();
        self.l2_neg.d.next = self.l1_neg.q.val();
        self.l2_pres.d.next = self.pres_hit.val();

        // end of L2: the levels row written with this level set (the others
        // empty unless the channel was present), the present flag set (or
        // all cleared), rec(0) rounded into L3; end of L3: the entry written
        self.wr_l.next = self.l2_valid.q.val() & self.l2_ok.q.val() & !self.l2_clear.q.val();
        self.nrow_l.next = self.zero272.val();
        for l in 0..self._ml {
            self.seg.next = self.trow.val().get_bits::<17>(self.loff[l].val().index());
            if !self.l2_pres.q.val() {
                self.seg.next = self.zero17.val();
            }
            if self.l2_lv.q.val() == self.lidx[l].val() {
                self.seg.next = bit_cast::<17, 16>(self.l2_start.q.val()) | self.valid17.val();
            }
            self.nrow_l.next = self.nrow_l.val() | (bit_cast::<272, 17>(self.seg.val()) << self.loff[l].val());
        }
        self.wr_valid.next = self.l2_valid.q.val();
        self.wr.next = self.wr_l.val();
        self.wr_row.next = self.l2_row.q.val();
        self.wr_lane.next = self.l2_lane.q.val();
        self.nrow.next = self.nrow_l.val();
        self.clr.next = self.l2_valid.q.val() & self.l2_ok.q.val() & self.l2_clear.q.val();
        self.sum.p0.next = self.l2_p0.q.val();
        self.sum.p1.next = self.l2_p1.q.val();
        self.sum.p2.next = self.l2_p2.q.val();
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
        self.l3_wr.d.next = self.wr_l.val();
        self.l3_lane.d.next = self.l2_lane.q.val();
        self.l3_addr.d.next =
            bit_cast::<14, 16>(self.l2_base.q.val() + bit_cast::<16, 4>(self.l2_lv.q.val()));
        self.l3_scale.d.next = self.l2_scale.q.val();
        self.l3_z9.d.next = self.l2_z9.q.val();
        self.l3_p.d.next = self.sum.psum.val();
        self.l3_neg.d.next = self.l2_neg.q.val();
        // rec(0) rounded in L3
        self.rnd.p.next = self.l3_p.q.val();
        self.rnd.neg.next = self.l3_neg.q.val();
        self.ent_valid.next = self.l3_valid.q.val();
        self.ent_wr.next = self.l3_wr.q.val();
        self.ent_lane.next = self.l3_lane.q.val();
        self.ent_addr.next = self.l3_addr.q.val();
        self.ent_w.next = bit_cast::<33, 16>(self.l3_scale.q.val())
            | (bit_cast::<33, 9>(self.l3_z9.q.val()) << self.sh_zent.val())
            | (bit_cast::<33, 8>(self.rnd.ro.val()) << self.sh_r0ent.val());
    }
}
