//! Titanus dequantization unit (`titanus-dequantizer`) with its scale-zero
//! table. Paper: Titanus (GLSVLSI 2025) §3.1 (reconstruction from index and
//! label), §4.4 and Figure 7 (the DQU's three rules), §4.1 (SZ buffer).
//! Spec: docs/spec.md §11.8 (table, level lookup, reconstruction, skip
//! counters), §11.13 (ports), §11.14.3 (microarchitecture).
//!
//! Loads: L1 (word) -> L2 (rec(0) product) -> slot, 3 cycles, records held
//! off meanwhile. Records: level lookup of every lane at acceptance ->
//! [skid] -> S1 -> zero-insert of the codes, case, |q - z| -> S2 -> multiply
//! -> S3 -> round, clamp, select -> out. S2 and S3 load only for lanes that
//! multiply (operand isolation: skipped lanes never toggle the multiplier).

use crate::prim::reg::Reg;
use crate::prim::zero_insert::ZeroInsert;
use rust_hdl::prelude::*;

/// `sz_error` codes.
pub const SZ_OK: u64 = 0;
pub const SZ_CHANNEL: u64 = 1;
pub const SZ_LEVEL: u64 = 2;

#[derive(LogicBlock)]
pub struct TitanusDequantizer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub sz_valid: Signal<In, Bit>,
    pub sz_ready: Signal<Out, Bit>,
    pub sz_word: Signal<In, Bits<64>>,
    pub sz_clear: Signal<In, Bit>,
    pub sz_done: Signal<Out, Bit>,
    pub sz_error: Signal<Out, Bits<2>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_pos: Signal<In, Bits<16>>,
    pub in_index: Vec<Signal<In, Bit>>,
    pub in_label: Vec<Signal<In, Bit>>,
    pub in_codes: Vec<Signal<In, Bits<4>>>,
    pub in_last: Signal<In, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_data: Vec<Signal<Out, Bits<8>>>,
    pub out_last: Signal<Out, Bit>,
    pub st_pruned: Signal<Out, Bits<32>>,
    pub st_label_zero: Signal<Out, Bits<32>>,
    pub st_zero_point: Signal<Out, Bits<32>>,
    pub st_multiplies: Signal<Out, Bits<32>>,
    pub st_missing_level: Signal<Out, Bits<32>>,
    // table slots, (channel * max_levels + level)
    sv: Vec<Reg<Bit>>,
    sst: Vec<Reg<Bits<16>>>,
    ssc: Vec<Reg<Bits<16>>>,
    szp: Vec<Reg<Bits<16>>>,
    sr0: Vec<Reg<Bits<8>>>,
    cidx: Vec<Constant<Bits<10>>>,
    lidx: Vec<Constant<Bits<4>>>,
    // load path
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
    l1_ch: Reg<Bits<10>>,
    l1_lv: Reg<Bits<4>>,
    l1_start: Reg<Bits<16>>,
    l1_scale: Reg<Bits<16>>,
    l1_zero: Reg<Bits<16>>,
    l2_valid: Reg<Bit>,
    l2_clear: Reg<Bit>,
    l2_ok: Reg<Bit>,
    l2_ch: Reg<Bits<10>>,
    l2_lv: Reg<Bits<4>>,
    l2_start: Reg<Bits<16>>,
    l2_scale: Reg<Bits<16>>,
    l2_zero: Reg<Bits<16>>,
    l2_prod: Reg<Bits<32>>,
    l2_neg: Reg<Bit>,
    l1_abs: Reg<Bits<16>>,
    r0: Signal<Local, Bits<8>>,
    // rounding and clamping temporaries (shared by the load path and lanes)
    rp: Signal<Local, Bits<32>>,
    rt: Signal<Local, Bits<32>>,
    rv: Signal<Local, Bits<32>>,
    ro: Signal<Local, Bits<8>>,
    // record lookup
    bc: Reg<Bits<16>>,
    bidx: Vec<Constant<Bits<16>>>,
    bhit: Vec<Signal<Local, Bit>>,
    bm16: Vec<Signal<Local, Bits<16>>>,
    bm8: Vec<Signal<Local, Bits<8>>>,
    t_v: Signal<Local, Bit>,
    t_st: Signal<Local, Bits<16>>,
    t_sc: Signal<Local, Bits<16>>,
    t_z: Signal<Local, Bits<16>>,
    t_r0: Signal<Local, Bits<8>>,
    lk_found: Vec<Signal<Local, Bit>>,
    lk_scale: Vec<Signal<Local, Bits<16>>>,
    lk_zero: Vec<Signal<Local, Bits<16>>>,
    lk_r0: Vec<Signal<Local, Bits<8>>>,
    // handshake
    acc: Signal<Local, Bit>,
    en: Signal<Local, Bit>,
    // skid and S1: the beat with its lookups
    sk_valid: Reg<Bit>,
    sk_last: Reg<Bit>,
    sk_idx: Vec<Reg<Bit>>,
    sk_lab: Vec<Reg<Bit>>,
    sk_code: Vec<Reg<Bits<4>>>,
    sk_found: Vec<Reg<Bit>>,
    sk_scale: Vec<Reg<Bits<16>>>,
    sk_zero: Vec<Reg<Bits<16>>>,
    sk_r0: Vec<Reg<Bits<8>>>,
    s1_valid: Reg<Bit>,
    s1_last: Reg<Bit>,
    s1_idx: Vec<Reg<Bit>>,
    s1_lab: Vec<Reg<Bit>>,
    s1_code: Vec<Reg<Bits<4>>>,
    s1_found: Vec<Reg<Bit>>,
    s1_scale: Vec<Reg<Bits<16>>>,
    s1_zero: Vec<Reg<Bits<16>>>,
    s1_r0: Vec<Reg<Bits<8>>>,
    zi: ZeroInsert<4>,
    // S1 cases, one-hot per lane: 0 pruned, 1 missing level, 2 label zero,
    // 3 zero point, 4 multiply
    c_pr: Vec<Signal<Local, Bit>>,
    c_ms: Vec<Signal<Local, Bit>>,
    c_lz: Vec<Signal<Local, Bit>>,
    c_zp: Vec<Signal<Local, Bit>>,
    c_mu: Vec<Signal<Local, Bit>>,
    q16: Signal<Local, Bits<16>>,
    ma: Signal<Local, Bits<16>>,
    cz4: Signal<Local, Bits<4>>,
    fb: Signal<Local, Bit>,
    hb: Signal<Local, Bit>,
    dq: Signal<Local, Bits<16>>,
    // S2, S3, out
    s2_valid: Reg<Bit>,
    s2_last: Reg<Bit>,
    s2_sel: Vec<Reg<Bits<2>>>,
    s2_r0: Vec<Reg<Bits<8>>>,
    s2_cs: Vec<Reg<Bits<3>>>,
    s2_abs: Vec<Reg<Bits<16>>>,
    s2_neg: Vec<Reg<Bit>>,
    s2_scale: Vec<Reg<Bits<16>>>,
    s3_valid: Reg<Bit>,
    s3_last: Reg<Bit>,
    s3_sel: Vec<Reg<Bits<2>>>,
    s3_r0: Vec<Reg<Bits<8>>>,
    s3_prod: Vec<Reg<Bits<32>>>,
    s3_neg: Vec<Reg<Bit>>,
    o_valid: Reg<Bit>,
    o_last: Reg<Bit>,
    o_data: Vec<Reg<Bits<8>>>,
    // counters
    p_pr: Reg<Bits<32>>,
    p_ms: Reg<Bits<32>>,
    p_lz: Reg<Bits<32>>,
    p_zp: Reg<Bits<32>>,
    p_mu: Reg<Bits<32>>,
    n_pr: Reg<Bits<32>>,
    n_ms: Reg<Bits<32>>,
    n_lz: Reg<Bits<32>>,
    n_zp: Reg<Bits<32>>,
    n_mu: Reg<Bits<32>>,
    a_pr: Signal<Local, Bits<32>>,
    a_ms: Signal<Local, Bits<32>>,
    a_lz: Signal<Local, Bits<32>>,
    a_zp: Signal<Local, Bits<32>>,
    a_mu: Signal<Local, Bits<32>>,
    channels10: Constant<Bits<11>>,
    levels4: Constant<Bits<5>>,
    zero2: Constant<Bits<2>>,
    k_pr: Constant<Bits<3>>,
    k_ms: Constant<Bits<3>>,
    k_lz: Constant<Bits<3>>,
    k_zp: Constant<Bits<3>>,
    k_mu: Constant<Bits<3>>,
    one2: Constant<Bits<2>>,
    two2: Constant<Bits<2>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    one16: Constant<Bits<16>>,
    nine_mask: Constant<Bits<16>>,
    sign9: Constant<Bits<16>>,
    ext9: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
    c128: Constant<Bits<32>>,
    eight32: Constant<Bits<32>>,
    min8_32: Constant<Bits<32>>,
    max8_32: Constant<Bits<32>>,
    min8: Constant<Bits<8>>,
    max8: Constant<Bits<8>>,
    sh_ch: Constant<Bits<6>>,
    sh_lv: Constant<Bits<6>>,
    sh_st: Constant<Bits<6>>,
    sh_z: Constant<Bits<6>>,
    sh_sc: Constant<Bits<6>>,
    _n: usize,
    _ml: usize,
    _beats: usize,
    _slots: usize,
    _channels: usize,
}

fn sigs<D: Direction, T: Synth>(k: usize) -> Vec<Signal<D, T>> {
    (0..k).map(|_| Default::default()).collect()
}

fn regs<T: Synth>(k: usize) -> Vec<Reg<T>> {
    (0..k).map(|_| Reg::default()).collect()
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

impl TitanusDequantizer {
    /// `lanes` a power of two in 1..=64 dividing `channels` (1..=1024),
    /// `max_levels` in 1..=16.
    pub fn new(channels: usize, lanes: usize, max_levels: usize) -> Self {
        assert!(lanes.is_power_of_two() && lanes <= 64 && channels % lanes == 0 && channels <= 1024);
        assert!((1..=16).contains(&max_levels));
        let n = lanes;
        let beats = channels / lanes;
        let slots = channels * max_levels;
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
            sv: regs(slots),
            sst: regs(slots),
            ssc: regs(slots),
            szp: regs(slots),
            sr0: regs(slots),
            cidx: (0..channels).map(|c| k(c as u64)).collect(),
            lidx: (0..max_levels).map(|l| k(l as u64)).collect(),
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
            l1_ch: Reg::default(),
            l1_lv: Reg::default(),
            l1_start: Reg::default(),
            l1_scale: Reg::default(),
            l1_zero: Reg::default(),
            l2_valid: Reg::default(),
            l2_clear: Reg::default(),
            l2_ok: Reg::default(),
            l2_ch: Reg::default(),
            l2_lv: Reg::default(),
            l2_start: Reg::default(),
            l2_scale: Reg::default(),
            l2_zero: Reg::default(),
            l2_prod: Reg::default(),
            l2_neg: Reg::default(),
            l1_abs: Reg::default(),
            r0: Default::default(),
            rp: Default::default(),
            rt: Default::default(),
            rv: Default::default(),
            ro: Default::default(),
            bc: Reg::default(),
            bidx: (0..beats).map(|b| k(b as u64)).collect(),
            bhit: sigs(beats),
            bm16: sigs(beats),
            bm8: sigs(beats),
            t_v: Default::default(),
            t_st: Default::default(),
            t_sc: Default::default(),
            t_z: Default::default(),
            t_r0: Default::default(),
            lk_found: sigs(n),
            lk_scale: sigs(n),
            lk_zero: sigs(n),
            lk_r0: sigs(n),
            acc: Default::default(),
            en: Default::default(),
            sk_valid: Reg::default(),
            sk_last: Reg::default(),
            sk_idx: regs(n),
            sk_lab: regs(n),
            sk_code: regs(n),
            sk_found: regs(n),
            sk_scale: regs(n),
            sk_zero: regs(n),
            sk_r0: regs(n),
            s1_valid: Reg::default(),
            s1_last: Reg::default(),
            s1_idx: regs(n),
            s1_lab: regs(n),
            s1_code: regs(n),
            s1_found: regs(n),
            s1_scale: regs(n),
            s1_zero: regs(n),
            s1_r0: regs(n),
            zi: ZeroInsert::new(lanes, 0),
            c_pr: sigs(n),
            c_ms: sigs(n),
            c_lz: sigs(n),
            c_zp: sigs(n),
            c_mu: sigs(n),
            q16: Default::default(),
            ma: Default::default(),
            cz4: Default::default(),
            fb: Default::default(),
            hb: Default::default(),
            dq: Default::default(),
            s2_valid: Reg::default(),
            s2_last: Reg::default(),
            s2_sel: regs(n),
            s2_r0: regs(n),
            s2_cs: regs(n),
            s2_abs: regs(n),
            s2_neg: regs(n),
            s2_scale: regs(n),
            s3_valid: Reg::default(),
            s3_last: Reg::default(),
            s3_sel: regs(n),
            s3_r0: regs(n),
            s3_prod: regs(n),
            s3_neg: regs(n),
            o_valid: Reg::default(),
            o_last: Reg::default(),
            o_data: regs(n),
            p_pr: Reg::default(),
            p_ms: Reg::default(),
            p_lz: Reg::default(),
            p_zp: Reg::default(),
            p_mu: Reg::default(),
            n_pr: Reg::default(),
            n_ms: Reg::default(),
            n_lz: Reg::default(),
            n_zp: Reg::default(),
            n_mu: Reg::default(),
            a_pr: Default::default(),
            a_ms: Default::default(),
            a_lz: Default::default(),
            a_zp: Default::default(),
            a_mu: Default::default(),
            channels10: k(channels as u64),
            levels4: k(max_levels as u64),
            zero2: k(0),
            k_pr: k(0),
            k_ms: k(1),
            k_lz: k(2),
            k_zp: k(3),
            k_mu: k(4),
            one2: k(1),
            two2: k(2),
            zero4: k(0),
            zero8: k(0),
            zero16: k(0),
            one16: k(1),
            nine_mask: k(0x1FF),
            sign9: k(0x100),
            ext9: k(0xFE00),
            zero32: k(0),
            c128: k(128),
            eight32: k(8),
            min8_32: k(0xFFFF_FF80),
            max8_32: k(127),
            min8: k(0x80),
            max8: k(0x7F),
            sh_ch: k(52),
            sh_lv: k(48),
            sh_st: k(32),
            sh_z: k(16),
            sh_sc: k(0),
            _n: n,
            _ml: max_levels,
            _beats: beats,
            _slots: slots,
            _channels: channels,
        }
    }

    /// Cycles from the edge that accepts a record beat (skid empty) to the
    /// edge after which it is shown, with the output ready.
    pub const LATENCY: usize = 4;
}

impl Logic for TitanusDequantizer {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, done, err, l1_valid, l1_clear, l1_ok, l2_ok, l1_ch, l1_lv, l1_start, l1_scale,
            l1_zero, l2_valid, l2_clear, l2_ch, l2_lv, l2_start, l2_scale, l2_zero, l2_prod, l2_neg, bc,
            sk_valid, sk_last, s1_valid, s1_last, zi, s2_valid, s2_last, s3_valid, s3_last, o_valid, o_last,
            n_pr, n_ms, n_lz, n_zp, n_mu
        );
        // ---- loads (spec §11.8.1): checked at acceptance, committed 2 cycles later
        self.sz_ready.next = !self.l1_valid.q.val() & !self.l2_valid.q.val();
        self.sz_acc.next = self.sz_valid.val() & !self.l1_valid.q.val() & !self.l2_valid.q.val();
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

        self.l1_valid.reset.next = self.reset.val();
        self.l1_clear.reset.next = self.reset.val();
        self.l1_ok.reset.next = self.reset.val();
        self.l1_ok.en.next = true;
        self.l1_ok.d.next = self.sz_acc.val() & (self.sz_code.val() == self.zero2.val());
        self.l1_ch.reset.next = self.reset.val();
        self.l1_lv.reset.next = self.reset.val();
        self.l1_start.reset.next = self.reset.val();
        self.l1_scale.reset.next = self.reset.val();
        self.l1_zero.reset.next = self.reset.val();
        self.l1_valid.en.next = true;
        self.l1_clear.en.next = true;
        self.l1_ch.en.next = true;
        self.l1_lv.en.next = true;
        self.l1_start.en.next = true;
        self.l1_scale.en.next = true;
        self.l1_zero.en.next = true;
        // a rejected load still takes its 3 cycles (it is a no-op in L1)
        self.l1_valid.d.next = self.sz_acc.val();
        self.l1_clear.d.next = self.sz_acc.val() & self.sz_clear.val();
        self.l1_ch.d.next = self.f_ch.val();
        self.l1_lv.d.next = self.f_lv.val();
        self.l1_start.d.next = self.sz_word.val().get_bits::<16>(self.sh_st.val().index());
        self.l1_scale.d.next = self.sz_word.val().get_bits::<16>(self.sh_sc.val().index());
        self.l1_zero.d.next = self.f_zero.val();

        // rec(0) = clamp(floor((0 - z) S + 128) / 256): |z| S here, sign in L2
        // |z| at acceptance, so that L1 -> L2 is the multiply alone
        self.l1_abs.clock.next = self.clock.val();
        self.l1_abs.reset.next = self.reset.val();
        self.l1_abs.en.next = true;
        self.l1_abs.d.next = self.f_zero.val();
        if self.f_zero.val().get_bit(15) {
            self.l1_abs.d.next = !self.f_zero.val() + self.one16.val();
        }
        self.l2_valid.reset.next = self.reset.val();
        self.l2_clear.reset.next = self.reset.val();
        self.l2_ok.reset.next = self.reset.val();
        self.l2_ok.en.next = true;
        self.l2_ok.d.next = self.l1_ok.q.val();
        self.l2_ch.reset.next = self.reset.val();
        self.l2_lv.reset.next = self.reset.val();
        self.l2_start.reset.next = self.reset.val();
        self.l2_scale.reset.next = self.reset.val();
        self.l2_zero.reset.next = self.reset.val();
        self.l2_prod.reset.next = self.reset.val();
        self.l2_neg.reset.next = self.reset.val();
        self.l2_valid.en.next = true;
        self.l2_clear.en.next = true;
        self.l2_ch.en.next = true;
        self.l2_lv.en.next = true;
        self.l2_start.en.next = true;
        self.l2_scale.en.next = true;
        self.l2_zero.en.next = true;
        self.l2_prod.en.next = true;
        self.l2_neg.en.next = true;
        self.l2_valid.d.next = self.l1_valid.q.val();
        self.l2_clear.d.next = self.l1_clear.q.val();
        self.l2_ch.d.next = self.l1_ch.q.val();
        self.l2_lv.d.next = self.l1_lv.q.val();
        self.l2_start.d.next = self.l1_start.q.val();
        self.l2_scale.d.next = self.l1_scale.q.val();
        self.l2_zero.d.next = self.l1_zero.q.val();
        self.ma.next = self.l1_abs.q.val() & self.nine_mask.val();
        self.l2_prod.d.next = self.ma.val() * self.l1_scale.q.val();
        // 0 - z is negative when z > 0
        self.l2_neg.d.next = !self.l1_zero.q.val().get_bit(15) & (self.l1_zero.q.val() != self.zero16.val());
        // round and clamp the rec(0) product
        self.rp.next = self.l2_prod.q.val();
        if self.l2_neg.q.val() {
            self.rp.next = self.zero32.val() - self.l2_prod.q.val();
        }
        self.rt.next = self.rp.val() + self.c128.val();
        self.rv.next = self.rt.val() >> self.eight32.val();
        if self.rt.val().get_bit(31) {
            self.rv.next = !((!self.rt.val()) >> self.eight32.val());
        }
        self.r0.next = self.rv.val().get_bits::<8>(0);
        if self.rv.val().get_bit(31) & (self.rv.val() < self.min8_32.val()) {
            self.r0.next = self.min8.val();
        }
        if !self.rv.val().get_bit(31) & (self.rv.val() > self.max8_32.val()) {
            self.r0.next = self.max8.val();
        }

        // ---- record lookup of the offered beat (spec §11.8.1): per lane, the
        // highest level with an entry and start <= pos
        self.in_ready.next = !self.sk_valid.q.val() & !self.l1_valid.q.val() & !self.l2_valid.q.val();
        self.acc.next =
            self.in_valid.val() & !self.sk_valid.q.val() & !self.l1_valid.q.val() & !self.l2_valid.q.val();
        self.bc.reset.next = self.reset.val();
        self.bc.en.next = self.acc.val();
        self.bc.d.next = self.bc.q.val() + self.one16.val();
        if self.in_last.val() {
            self.bc.d.next = self.zero16.val();
        }
        for b in 0..self._beats {
            self.bhit[b].next = self.bc.q.val() == self.bidx[b].val();
            self.hb.next = self.bhit[b].val();
            self.bm16[b].next = self.zero16.val() - bit_cast::<16, 1>(self.hb.val().into());
            self.bm8[b].next = self.zero8.val() - bit_cast::<8, 1>(self.hb.val().into());
        }
        for n in self._n..(self._n + 1) {
            for ml in self._ml..(self._ml + 1) {
                for i in 0..self._n {
                    self.lk_found[i].next = false;
                    self.lk_scale[i].next = self.zero16.val();
                    self.lk_zero[i].next = self.zero16.val();
                    self.lk_r0[i].next = self.zero8.val();
                    for l in 0..self._ml {
                        self.t_v.next = false;
                        self.t_st.next = self.zero16.val();
                        self.t_sc.next = self.zero16.val();
                        self.t_z.next = self.zero16.val();
                        self.t_r0.next = self.zero8.val();
                        for b in 0..self._beats {
                            self.t_v.next =
                                self.t_v.val() | (self.sv[(b * n + i) * ml + l].q.val() & self.bhit[b].val());
                            self.t_st.next = self.t_st.val()
                                | (self.sst[(b * n + i) * ml + l].q.val() & self.bm16[b].val());
                            self.t_sc.next = self.t_sc.val()
                                | (self.ssc[(b * n + i) * ml + l].q.val() & self.bm16[b].val());
                            self.t_z.next = self.t_z.val()
                                | (self.szp[(b * n + i) * ml + l].q.val() & self.bm16[b].val());
                            self.t_r0.next = self.t_r0.val()
                                | (self.sr0[(b * n + i) * ml + l].q.val() & self.bm8[b].val());
                        }
                        if self.t_v.val() & (self.t_st.val() <= self.in_pos.val()) {
                            self.lk_found[i].next = true;
                            self.lk_scale[i].next = self.t_sc.val();
                            self.lk_zero[i].next = self.t_z.val();
                            self.lk_r0[i].next = self.t_r0.val();
                        }
                    }
                }
                // slot writes from L2
                for c in 0..self._channels {
                    for l in 0..self._ml {
                        self.sv[c * ml + l].clock.next = self.clock.val();
                        self.sst[c * ml + l].clock.next = self.clock.val();
                        self.ssc[c * ml + l].clock.next = self.clock.val();
                        self.szp[c * ml + l].clock.next = self.clock.val();
                        self.sr0[c * ml + l].clock.next = self.clock.val();
                        self.sv[c * ml + l].reset.next = self.reset.val();
                        self.sst[c * ml + l].reset.next = self.reset.val();
                        self.ssc[c * ml + l].reset.next = self.reset.val();
                        self.szp[c * ml + l].reset.next = self.reset.val();
                        self.sr0[c * ml + l].reset.next = self.reset.val();
                        self.sv[c * ml + l].en.next = self.l2_ok.q.val()
                            & (self.l2_clear.q.val()
                                | ((self.l2_ch.q.val() == self.cidx[c].val())
                                    & (self.l2_lv.q.val() == self.lidx[l].val())));
                        self.sv[c * ml + l].d.next = !self.l2_clear.q.val();
                        self.sst[c * ml + l].en.next = self.l2_ok.q.val()
                            & !self.l2_clear.q.val()
                            & (self.l2_ch.q.val() == self.cidx[c].val())
                            & (self.l2_lv.q.val() == self.lidx[l].val());
                        self.ssc[c * ml + l].en.next = self.l2_ok.q.val()
                            & !self.l2_clear.q.val()
                            & (self.l2_ch.q.val() == self.cidx[c].val())
                            & (self.l2_lv.q.val() == self.lidx[l].val());
                        self.szp[c * ml + l].en.next = self.l2_ok.q.val()
                            & !self.l2_clear.q.val()
                            & (self.l2_ch.q.val() == self.cidx[c].val())
                            & (self.l2_lv.q.val() == self.lidx[l].val());
                        self.sr0[c * ml + l].en.next = self.l2_ok.q.val()
                            & !self.l2_clear.q.val()
                            & (self.l2_ch.q.val() == self.cidx[c].val())
                            & (self.l2_lv.q.val() == self.lidx[l].val());
                        self.sst[c * ml + l].d.next = self.l2_start.q.val();
                        self.ssc[c * ml + l].d.next = self.l2_scale.q.val();
                        self.szp[c * ml + l].d.next = self.l2_zero.q.val();
                        self.sr0[c * ml + l].d.next = self.r0.val();
                    }
                }
            }
        }

        // ---- skid and S1 (stall-all pipeline behind the skid)
        self.en.next = !self.o_valid.q.val() | self.out_ready.val();
        self.sk_valid.reset.next = self.reset.val();
        self.sk_last.reset.next = self.reset.val();
        self.s1_valid.reset.next = self.reset.val();
        self.s1_last.reset.next = self.reset.val();
        self.sk_valid.en.next = true;
        self.sk_valid.d.next = !self.en.val() & (self.sk_valid.q.val() | self.acc.val());
        self.sk_last.en.next = self.acc.val() & !self.en.val();
        self.sk_last.d.next = self.in_last.val();
        self.s1_valid.en.next = self.en.val();
        self.s1_last.en.next = self.en.val();
        self.s1_valid.d.next = self.sk_valid.q.val() | self.acc.val();
        self.s1_last.d.next = self.in_last.val();
        if self.sk_valid.q.val() {
            self.s1_last.d.next = self.sk_last.q.val();
        }
        for i in 0..self._n {
            self.sk_idx[i].clock.next = self.clock.val();
            self.sk_lab[i].clock.next = self.clock.val();
            self.sk_code[i].clock.next = self.clock.val();
            self.sk_found[i].clock.next = self.clock.val();
            self.sk_scale[i].clock.next = self.clock.val();
            self.sk_zero[i].clock.next = self.clock.val();
            self.sk_r0[i].clock.next = self.clock.val();
            self.s1_idx[i].clock.next = self.clock.val();
            self.s1_lab[i].clock.next = self.clock.val();
            self.s1_code[i].clock.next = self.clock.val();
            self.s1_found[i].clock.next = self.clock.val();
            self.s1_scale[i].clock.next = self.clock.val();
            self.s1_zero[i].clock.next = self.clock.val();
            self.s1_r0[i].clock.next = self.clock.val();
            self.sk_idx[i].reset.next = self.reset.val();
            self.sk_lab[i].reset.next = self.reset.val();
            self.sk_code[i].reset.next = self.reset.val();
            self.sk_found[i].reset.next = self.reset.val();
            self.sk_scale[i].reset.next = self.reset.val();
            self.sk_zero[i].reset.next = self.reset.val();
            self.sk_r0[i].reset.next = self.reset.val();
            self.s1_idx[i].reset.next = self.reset.val();
            self.s1_lab[i].reset.next = self.reset.val();
            self.s1_code[i].reset.next = self.reset.val();
            self.s1_found[i].reset.next = self.reset.val();
            self.s1_scale[i].reset.next = self.reset.val();
            self.s1_zero[i].reset.next = self.reset.val();
            self.s1_r0[i].reset.next = self.reset.val();
            self.sk_idx[i].en.next = self.acc.val() & !self.en.val();
            self.sk_lab[i].en.next = self.acc.val() & !self.en.val();
            self.sk_code[i].en.next = self.acc.val() & !self.en.val();
            self.sk_found[i].en.next = self.acc.val() & !self.en.val();
            self.sk_scale[i].en.next = self.acc.val() & !self.en.val();
            self.sk_zero[i].en.next = self.acc.val() & !self.en.val();
            self.sk_r0[i].en.next = self.acc.val() & !self.en.val();
            self.s1_idx[i].en.next = self.en.val();
            self.s1_lab[i].en.next = self.en.val();
            self.s1_code[i].en.next = self.en.val();
            self.s1_found[i].en.next = self.en.val();
            self.s1_scale[i].en.next = self.en.val();
            self.s1_zero[i].en.next = self.en.val();
            self.s1_r0[i].en.next = self.en.val();
            self.sk_idx[i].d.next = self.in_index[i].val();
            // a label bit of a pruned channel is ignored (it takes no code)
            self.sk_lab[i].d.next = self.in_label[i].val() & self.in_index[i].val();
            self.sk_code[i].d.next = self.in_codes[i].val();
            self.sk_found[i].d.next = self.lk_found[i].val();
            self.sk_scale[i].d.next = self.lk_scale[i].val();
            self.sk_zero[i].d.next = self.lk_zero[i].val();
            self.sk_r0[i].d.next = self.lk_r0[i].val();
            if self.sk_valid.q.val() {
                self.s1_idx[i].d.next = self.sk_idx[i].q.val();
                self.s1_lab[i].d.next = self.sk_lab[i].q.val();
                self.s1_code[i].d.next = self.sk_code[i].q.val();
                self.s1_found[i].d.next = self.sk_found[i].q.val();
                self.s1_scale[i].d.next = self.sk_scale[i].q.val();
                self.s1_zero[i].d.next = self.sk_zero[i].q.val();
                self.s1_r0[i].d.next = self.sk_r0[i].q.val();
            } else {
                self.s1_idx[i].d.next = self.in_index[i].val();
                self.s1_lab[i].d.next = self.in_label[i].val() & self.in_index[i].val();
                self.s1_code[i].d.next = self.in_codes[i].val();
                self.s1_found[i].d.next = self.lk_found[i].val();
                self.s1_scale[i].d.next = self.lk_scale[i].val();
                self.s1_zero[i].d.next = self.lk_zero[i].val();
                self.s1_r0[i].d.next = self.lk_r0[i].val();
            }
        }

        // ---- S1: codes to their channels, cases (spec §11.8.2), |q - z|
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
            self.cz4.next = self.zi.out[i].val();
            self.q16.next = bit_cast::<16, 4>(self.cz4.val());
            self.c_pr[i].next = !self.s1_idx[i].q.val();
            self.c_ms[i].next = self.s1_idx[i].q.val() & !self.s1_found[i].q.val();
            self.c_lz[i].next = self.s1_idx[i].q.val()
                & self.s1_found[i].q.val()
                & (self.zi.out[i].val() == self.zero4.val());
            self.c_zp[i].next = self.s1_idx[i].q.val()
                & self.s1_found[i].q.val()
                & (self.zi.out[i].val() != self.zero4.val())
                & (self.q16.val() == self.s1_zero[i].q.val());
            self.c_mu[i].next = self.s1_idx[i].q.val()
                & self.s1_found[i].q.val()
                & (self.zi.out[i].val() != self.zero4.val())
                & (self.q16.val() != self.s1_zero[i].q.val());
            self.dq.next = self.q16.val() - self.s1_zero[i].q.val();
            self.s2_sel[i].clock.next = self.clock.val();
            self.s2_r0[i].clock.next = self.clock.val();
            self.s2_abs[i].clock.next = self.clock.val();
            self.s2_neg[i].clock.next = self.clock.val();
            self.s2_scale[i].clock.next = self.clock.val();
            self.s2_sel[i].reset.next = self.reset.val();
            self.s2_r0[i].reset.next = self.reset.val();
            self.s2_abs[i].reset.next = self.reset.val();
            self.s2_neg[i].reset.next = self.reset.val();
            self.s2_scale[i].reset.next = self.reset.val();
            self.s2_sel[i].en.next = self.en.val();
            self.s2_r0[i].en.next = self.en.val();
            // operand isolation: the multiplier's operands change only for multiplies
            self.s2_abs[i].en.next = self.en.val() & self.s1_valid.q.val() & self.c_mu[i].val();
            self.s2_neg[i].en.next = self.en.val() & self.s1_valid.q.val() & self.c_mu[i].val();
            self.s2_scale[i].en.next = self.en.val() & self.s1_valid.q.val() & self.c_mu[i].val();
            // select: 0 zero output, 1 rec(0), 2 product
            self.s2_sel[i].d.next = self.zero2.val();
            if self.c_lz[i].val() {
                self.s2_sel[i].d.next = self.one2.val();
            }
            if self.c_mu[i].val() {
                self.s2_sel[i].d.next = self.two2.val();
            }
            self.s2_r0[i].d.next = self.s1_r0[i].q.val();
            self.s2_cs[i].clock.next = self.clock.val();
            self.s2_cs[i].reset.next = self.reset.val();
            self.s2_cs[i].en.next = self.en.val();
            self.s2_cs[i].d.next = self.k_pr.val();
            if self.c_ms[i].val() {
                self.s2_cs[i].d.next = self.k_ms.val();
            }
            if self.c_lz[i].val() {
                self.s2_cs[i].d.next = self.k_lz.val();
            }
            if self.c_zp[i].val() {
                self.s2_cs[i].d.next = self.k_zp.val();
            }
            if self.c_mu[i].val() {
                self.s2_cs[i].d.next = self.k_mu.val();
            }
            self.s2_neg[i].d.next = self.dq.val().get_bit(15);
            self.s2_abs[i].d.next = self.dq.val();
            if self.dq.val().get_bit(15) {
                self.s2_abs[i].d.next = !self.dq.val() + self.one16.val();
            }
            self.s2_scale[i].d.next = self.s1_scale[i].q.val();
        }
        // counters: the beat's per-case popcounts from S2's case codes,
        // registered beside S3, added when the beat leaves S3
        self.a_pr.next = self.zero32.val();
        self.a_ms.next = self.zero32.val();
        self.a_lz.next = self.zero32.val();
        self.a_zp.next = self.zero32.val();
        self.a_mu.next = self.zero32.val();
        for i in 0..self._n {
            self.fb.next = self.s2_cs[i].q.val() == self.k_pr.val();
            self.a_pr.next = self.a_pr.val() + bit_cast::<32, 1>(self.fb.val().into());
            self.fb.next = self.s2_cs[i].q.val() == self.k_ms.val();
            self.a_ms.next = self.a_ms.val() + bit_cast::<32, 1>(self.fb.val().into());
            self.fb.next = self.s2_cs[i].q.val() == self.k_lz.val();
            self.a_lz.next = self.a_lz.val() + bit_cast::<32, 1>(self.fb.val().into());
            self.fb.next = self.s2_cs[i].q.val() == self.k_zp.val();
            self.a_zp.next = self.a_zp.val() + bit_cast::<32, 1>(self.fb.val().into());
            self.fb.next = self.s2_cs[i].q.val() == self.k_mu.val();
            self.a_mu.next = self.a_mu.val() + bit_cast::<32, 1>(self.fb.val().into());
        }
        clock!(self, clock, p_pr, p_ms, p_lz, p_zp, p_mu);
        self.p_pr.reset.next = self.reset.val();
        self.p_ms.reset.next = self.reset.val();
        self.p_lz.reset.next = self.reset.val();
        self.p_zp.reset.next = self.reset.val();
        self.p_mu.reset.next = self.reset.val();
        self.p_pr.en.next = self.en.val();
        self.p_ms.en.next = self.en.val();
        self.p_lz.en.next = self.en.val();
        self.p_zp.en.next = self.en.val();
        self.p_mu.en.next = self.en.val();
        self.p_pr.d.next = self.a_pr.val();
        self.p_ms.d.next = self.a_ms.val();
        self.p_lz.d.next = self.a_lz.val();
        self.p_zp.d.next = self.a_zp.val();
        self.p_mu.d.next = self.a_mu.val();
        self.n_pr.reset.next = self.reset.val();
        self.n_ms.reset.next = self.reset.val();
        self.n_lz.reset.next = self.reset.val();
        self.n_zp.reset.next = self.reset.val();
        self.n_mu.reset.next = self.reset.val();
        self.n_pr.en.next = self.en.val() & self.s3_valid.q.val();
        self.n_ms.en.next = self.en.val() & self.s3_valid.q.val();
        self.n_lz.en.next = self.en.val() & self.s3_valid.q.val();
        self.n_zp.en.next = self.en.val() & self.s3_valid.q.val();
        self.n_mu.en.next = self.en.val() & self.s3_valid.q.val();
        self.n_pr.d.next = self.n_pr.q.val() + self.p_pr.q.val();
        self.n_ms.d.next = self.n_ms.q.val() + self.p_ms.q.val();
        self.n_lz.d.next = self.n_lz.q.val() + self.p_lz.q.val();
        self.n_zp.d.next = self.n_zp.q.val() + self.p_zp.q.val();
        self.n_mu.d.next = self.n_mu.q.val() + self.p_mu.q.val();
        self.st_pruned.next = self.n_pr.q.val();
        self.st_missing_level.next = self.n_ms.q.val();
        self.st_label_zero.next = self.n_lz.q.val();
        self.st_zero_point.next = self.n_zp.q.val();
        self.st_multiplies.next = self.n_mu.q.val();

        // ---- S2: multiply |q - z| S (|q - z| < 2^9)
        self.s3_valid.reset.next = self.reset.val();
        self.s3_last.reset.next = self.reset.val();
        self.s3_valid.en.next = self.en.val();
        self.s3_last.en.next = self.en.val();
        self.s3_valid.d.next = self.s2_valid.q.val();
        self.s3_last.d.next = self.s2_last.q.val();
        for i in 0..self._n {
            self.s3_sel[i].clock.next = self.clock.val();
            self.s3_r0[i].clock.next = self.clock.val();
            self.s3_prod[i].clock.next = self.clock.val();
            self.s3_neg[i].clock.next = self.clock.val();
            self.s3_sel[i].reset.next = self.reset.val();
            self.s3_r0[i].reset.next = self.reset.val();
            self.s3_prod[i].reset.next = self.reset.val();
            self.s3_neg[i].reset.next = self.reset.val();
            self.s3_sel[i].en.next = self.en.val();
            self.s3_r0[i].en.next = self.en.val();
            self.s3_prod[i].en.next =
                self.en.val() & self.s2_valid.q.val() & (self.s2_sel[i].q.val() == self.two2.val());
            self.s3_neg[i].en.next =
                self.en.val() & self.s2_valid.q.val() & (self.s2_sel[i].q.val() == self.two2.val());
            self.s3_sel[i].d.next = self.s2_sel[i].q.val();
            self.s3_r0[i].d.next = self.s2_r0[i].q.val();
            self.ma.next = self.s2_abs[i].q.val() & self.nine_mask.val();
            self.s3_prod[i].d.next = self.ma.val() * self.s2_scale[i].q.val();
            self.s3_neg[i].d.next = self.s2_neg[i].q.val();
        }

        // ---- S3: sign, + 128, floor / 256, clamp to INT8, select
        self.o_valid.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_valid.en.next = self.en.val();
        self.o_last.en.next = self.en.val();
        self.o_valid.d.next = self.s3_valid.q.val();
        self.o_last.d.next = self.s3_last.q.val();
        for i in 0..self._n {
            self.rp.next = self.s3_prod[i].q.val();
            if self.s3_neg[i].q.val() {
                self.rp.next = self.zero32.val() - self.s3_prod[i].q.val();
            }
            self.rt.next = self.rp.val() + self.c128.val();
            self.rv.next = self.rt.val() >> self.eight32.val();
            if self.rt.val().get_bit(31) {
                self.rv.next = !((!self.rt.val()) >> self.eight32.val());
            }
            self.ro.next = self.rv.val().get_bits::<8>(0);
            if self.rv.val().get_bit(31) & (self.rv.val() < self.min8_32.val()) {
                self.ro.next = self.min8.val();
            }
            if !self.rv.val().get_bit(31) & (self.rv.val() > self.max8_32.val()) {
                self.ro.next = self.max8.val();
            }
            self.o_data[i].clock.next = self.clock.val();
            self.o_data[i].reset.next = self.reset.val();
            self.o_data[i].en.next = self.en.val();
            self.o_data[i].d.next = self.zero8.val();
            if self.s3_sel[i].q.val() == self.one2.val() {
                self.o_data[i].d.next = self.s3_r0[i].q.val();
            }
            if self.s3_sel[i].q.val() == self.two2.val() {
                self.o_data[i].d.next = self.ro.val();
            }
            self.out_data[i].next = self.o_data[i].q.val();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_last.next = self.o_last.q.val();
    }
}
