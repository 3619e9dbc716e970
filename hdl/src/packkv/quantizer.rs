//! `packkv-quantizer`: token vectors of `C = heads * head_dim` FP16
//! elements in, `lanes` per beat; the same beats out as `r`-bit codes, each
//! with the token's metadata word and `nonfinite` flag.
//!
//! Paper: PackKV §III-B1 (token quantization over the whole layer vector).
//! Spec: docs/spec.md §14.2, §14.3, §14.6, §14.8, §14.14.1 (ports, beats,
//! stages, the token buffer).
//!
//! A token's codes need its minimum and maximum, known after its last
//! beat, so every beat is kept in the token buffer (a memory, `DpRam`)
//! until its token's constants are ready.
//! - Fill (never stalls): an accepted beat is registered (I0), sanitised
//!   (`Sanitize`) into S, written to the buffer from S, and its order keys
//!   reduced by a min/max tree (`MinMax2`, one register per level); the
//!   token's running extremes and flag follow the tree's root.
//! - Step (never stalls): `TokenStep` turns the extremes into the metadata
//!   word and the lanes' constants, pushed into the record FIFO.
//! - Code (stalls as a whole on `adv = !out_valid | out_ready`): while the
//!   FIFO holds a record, one buffered beat per advance goes through P0
//!   (the memory's read register), P1 `units(x)`, P2-P3 `n = 2x + K` in two
//!   halves, P4 `y = n >> (e + 1)`, then `r` restoring steps against `m`:
//!   `q = floor(y / m) = floor((2x + s - 2zs) / 2s)`, 0 for a zero step.
//! - Input is credit-gated: a beat is accepted while fewer than `depth`
//!   beats are accepted and not yet read, so `in_ready` comes from
//!   registers, and `depth` is what full rate needs.

use super::token_step::{TokenStep, KW};
use crate::oaken::classify::Sanitize;
use crate::oaken::extremes::{MinMax2, ABSENT, NODE};
use crate::prim::div_round::{DivStep, NW};
use crate::prim::fifo::{FifoCtrl, FifoMem};
use crate::prim::fp16::{Fp16ToUnits, FX};
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::Reg;
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

/// Low half of the lanes' `2x + K` (P2); the rest is added in P3.
const LO: usize = 23;

/// Derived sizes of one instance (spec §14.14.1).
#[derive(Clone, Debug)]
pub struct Geometry {
    pub lanes: usize,
    /// Beats per token, `C / lanes`.
    pub beats: usize,
    /// Tree levels, `log2(lanes)`.
    pub levels: usize,
    /// Raw code bits `r`.
    pub raw: usize,
    /// Cycles a beat waits in the buffer at full rate.
    pub wait: usize,
    /// Token buffer words (beats), `wait + 1`.
    pub depth: usize,
    /// Record FIFO entries.
    pub records: usize,
    /// First input beat accepted to first output beat valid, full rate.
    pub latency: usize,
}

impl Geometry {
    pub fn new(vector: usize, levels: u32, lanes: usize) -> Geometry {
        let beats = vector / lanes;
        let tree = lanes.trailing_zeros() as usize;
        let raw = sim::packkv::params::raw_bits(levels) as usize;
        // a token's first beat is read once its last beat has gone through
        // I0, S, the tree, the running extremes, TokenStep and the FIFO
        let wait = beats + 3 + tree + TokenStep::latency();
        let depth = wait + 1;
        Geometry {
            lanes,
            beats,
            levels: tree,
            raw,
            wait,
            depth,
            // the oldest token may be partly read; the others are whole
            records: 2 + (depth - 1) / beats,
            // P0-P4, r steps, the output register
            latency: wait + 6 + raw,
        }
    }

    /// The memories of an instance (manifest).
    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        vec![MemInfo {
            module: format!("{module}_tbuf_ram"),
            name: "token_buffer".into(),
            depth: self.depth,
            width: 16 * self.lanes,
        }]
    }
}

#[derive(LogicBlock)]
pub struct PackKvQuantizer<const R: usize> {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: buffer, FIFO and pipeline empty, the next beat starts a token
    pub reset: Signal<In, Bit>,
    /// element beat valid
    pub in_valid: Signal<In, Bit>,
    /// beat accepted when in_valid and in_ready (from registers only: low while the token buffer is full)
    pub in_ready: Signal<Out, Bit>,
    /// FP16 elements, lane l at [16l+15:16l]: channels k*lanes .. k*lanes + lanes - 1 of the token at its beat k
    pub in_x: Vec<Signal<In, Bits<16>>>,
    /// code beat valid
    pub out_valid: Signal<Out, Bit>,
    /// code beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// r-bit codes of the beat's elements, lane l at [r*l+r-1:r*l] ({latency} cycles from a token's first input beat to its first code beat)
    pub out_codes: Vec<Signal<Out, Bits<R>>>,
    /// the token's metadata word (spec §14.3): step [31:16], z [15:0]; on every beat of the token
    pub out_meta: Signal<Out, Bits<32>>,
    /// the beat is its token's last
    pub out_last: Signal<Out, Bit>,
    /// a NaN or infinity was replaced in the token (on every beat of the token)
    pub out_nonfinite: Signal<Out, Bit>,
    // ---- fill ----
    accept: Signal<Local, Bit>,
    cnt: Reg<Bits<16>>,
    kw: Reg<Bits<16>>,
    wp: Reg<Bits<16>>,
    i0_v: Reg<Bit>,
    i0_first: Reg<Bit>,
    i0_last: Reg<Bit>,
    i0_x: Vec<Reg<Bits<16>>>,
    san: Vec<Sanitize>,
    s_x: Vec<Reg<Bits<16>>>,
    bnf: Signal<Local, Bit>,
    // sideband of S (index 0) and of the tree levels (1 ..= levels)
    t_v: Vec<Reg<Bit>>,
    t_first: Vec<Reg<Bit>>,
    t_last: Vec<Reg<Bit>>,
    t_nf: Vec<Reg<Bit>>,
    key: Vec<Signal<Local, Bits<16>>>,
    // tree nodes, heap order: node i (1-based) at i - 1 (registers for
    // i < lanes), leaves at lanes - 1 + l
    nd: Vec<Signal<Local, Bits<NODE>>>,
    mm: Vec<MinMax2>,
    tr: Vec<Reg<Bits<NODE>>>,
    bw: Signal<Local, Bits<1024>>,
    btmp: Signal<Local, Bits<16>>,
    tbram: DpRam<16, 1024>,
    // running extremes of the token
    run_mm: MinMax2,
    run: Reg<Bits<NODE>>,
    run_nf: Reg<Bit>,
    tok_v: Reg<Bit>,
    // ---- step and records ----
    tstep: TokenStep,
    fctl: FifoCtrl,
    f_meta: FifoMem<32>,
    f_kk: FifoMem<KW>,
    f_misc: FifoMem<26>,
    misc: Signal<Local, Bits<26>>,
    // ---- code ----
    adv: Signal<Local, Bit>,
    rd: Signal<Local, Bit>,
    rlast: Signal<Local, Bit>,
    kr: Reg<Bits<16>>,
    rp: Reg<Bits<16>>,
    // sideband along P0 .. the last step (5 + r stages; m to the last step's input)
    p_v: Vec<Reg<Bit>>,
    p_last: Vec<Reg<Bit>>,
    p_nf: Vec<Reg<Bit>>,
    p_meta: Vec<Reg<Bits<32>>>,
    p_sz: Vec<Reg<Bit>>,
    p_m: Vec<Reg<Bits<16>>>,
    // K along P0, P1; e + 1 along P0 .. P3
    p_kk: Vec<Reg<Bits<KW>>>,
    p_esh: Vec<Reg<Bits<8>>>,
    xr: Vec<Signal<Local, Bits<16>>>,
    cvt: Vec<Fp16ToUnits>,
    p1_mag: Vec<Reg<Bits<FX>>>,
    p1_neg: Vec<Reg<Bit>>,
    op: Signal<Local, Bits<KW>>,
    mg: Signal<Local, Bits<FX>>,
    ng: Signal<Local, Bit>,
    lo24: Signal<Local, Bits<24>>,
    nn: Signal<Local, Bits<KW>>,
    mj: Signal<Local, Bits<16>>,
    kt: Signal<Local, Bits<16>>,
    qq: Signal<Local, Bits<8>>,
    p2_lo: Vec<Reg<Bits<24>>>,
    p2_hi: Vec<Reg<Bits<KW>>>,
    p3_n: Vec<Reg<Bits<KW>>>,
    p4_y: Vec<Reg<Bits<NW>>>,
    // restoring steps: step j of lane l at j * lanes + l (remainders for
    // steps 0 .. r-2 only: the last only compares)
    dstep: Vec<DivStep<NW>>,
    st_r: Vec<Reg<Bits<NW>>>,
    st_q: Vec<Reg<Bits<8>>>,
    o_v: Reg<Bit>,
    o_last: Reg<Bit>,
    o_nf: Reg<Bit>,
    o_meta: Reg<Bits<32>>,
    o_codes: Vec<Reg<Bits<R>>>,
    // ---- constants ----
    lane_off: Vec<Constant<Bits<1024>>>,
    lane_bit: Vec<Constant<Bits<32>>>,
    dsh: Vec<Constant<Bits<NW>>>,
    rmask: Vec<Constant<Bits<NW>>>,
    k_depth: Constant<Bits<16>>,
    k_blast: Constant<Bits<16>>,
    k_dlast: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_sign16: Constant<Bits<16>>,
    k_absent: Constant<Bits<NODE>>,
    k_leaf: Constant<Bits<NODE>>,
    k_sh16n: Constant<Bits<NODE>>,
    k_sh18: Constant<Bits<26>>,
    k_one_kw: Constant<Bits<KW>>,
    k_lo: Constant<Bits<KW>>,
    k_lomask: Constant<Bits<KW>>,
    k_ymask: Constant<Bits<KW>>,
    k_zero8: Constant<Bits<8>>,
    k_one8: Constant<Bits<8>>,
    k_sz: Constant<Bits<26>>,
    k_nfb: Constant<Bits<26>>,
    _lanes: usize,
    _lv: usize,
    _r: usize,
    _sb: usize,
}

impl<const R: usize> PackKvQuantizer<R> {
    /// `module`: the emitted module's name, which prefixes the buffer's.
    pub fn new(vector: usize, levels: u32, lanes: usize, module: &str) -> Self {
        let g = Geometry::new(vector, levels, lanes);
        assert!(g.raw == R && vector % lanes == 0 && lanes <= 64 && g.depth < 1 << 16 && g.records <= 255);
        let (l, r) = (lanes, g.raw);
        let sb = 5 + r;
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        PackKvQuantizer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_x: sigs(l),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_codes: sigs(l),
            out_meta: Default::default(),
            out_last: Default::default(),
            out_nonfinite: Default::default(),
            accept: Default::default(),
            cnt: Reg::default(),
            kw: Reg::default(),
            wp: Reg::default(),
            i0_v: Reg::default(),
            i0_first: Reg::default(),
            i0_last: Reg::default(),
            i0_x: regs(l),
            san: (0..l).map(|_| Sanitize::default()).collect(),
            s_x: regs(l),
            bnf: Default::default(),
            t_v: regs(g.levels + 1),
            t_first: regs(g.levels + 1),
            t_last: regs(g.levels + 1),
            t_nf: regs(g.levels + 1),
            key: sigs(l),
            nd: sigs(2 * l - 1),
            mm: (0..l - 1).map(|_| MinMax2::default()).collect(),
            tr: regs(l - 1),
            bw: Default::default(),
            btmp: Default::default(),
            tbram: {
                let m = &g.memories(module)[0];
                DpRam::new(&m.module, &m.name, m.depth, m.width)
            },
            run_mm: MinMax2::default(),
            run: Reg::default(),
            run_nf: Reg::default(),
            tok_v: Reg::default(),
            tstep: TokenStep::new(levels),
            fctl: FifoCtrl::new(g.records),
            f_meta: FifoMem::new(g.records),
            f_kk: FifoMem::new(g.records),
            f_misc: FifoMem::new(g.records),
            misc: Default::default(),
            adv: Default::default(),
            rd: Default::default(),
            rlast: Default::default(),
            kr: Reg::default(),
            rp: Reg::default(),
            p_v: regs(sb),
            p_last: regs(sb),
            p_nf: regs(sb),
            p_meta: regs(sb),
            p_sz: regs(sb),
            p_m: regs(sb - 1),
            p_kk: regs(2),
            p_esh: regs(4),
            xr: sigs(l),
            cvt: (0..l).map(|_| Fp16ToUnits::default()).collect(),
            p1_mag: regs(l),
            p1_neg: regs(l),
            op: Default::default(),
            mg: Default::default(),
            ng: Default::default(),
            lo24: Default::default(),
            nn: Default::default(),
            mj: Default::default(),
            kt: Default::default(),
            qq: Default::default(),
            p2_lo: regs(l),
            p2_hi: regs(l),
            p3_n: regs(l),
            p4_y: regs(l),
            dstep: (0..(r - 1) * l).map(|_| DivStep::default()).collect(),
            st_r: regs((r - 1) * l),
            st_q: regs(r * l),
            o_v: Reg::default(),
            o_last: Reg::default(),
            o_nf: Reg::default(),
            o_meta: Reg::default(),
            o_codes: regs(l),
            lane_off: consts((0..l).map(|i| 16 * i as u64)),
            lane_bit: consts((0..l).map(|i| 16 * i as u64)),
            // step j compares against m * 2^(r-1-j)
            dsh: consts((0..r - 1).map(|j| (r - 1 - j) as u64)),
            // the remainder after step j is below m 2^(r-1-j) < 2^(10 + r - j)
            rmask: consts((0..r - 1).map(|j| (1u64 << (10 + r - j)) - 1)),
            k_depth: c(g.depth as u64),
            k_blast: c((g.beats - 1) as u64),
            k_dlast: c((g.depth - 1) as u64),
            k_zero16: c(0),
            k_one16: c(1),
            k_sign16: c(0x8000),
            k_absent: c(ABSENT),
            k_leaf: c(1 << 32),
            k_sh16n: c(16),
            k_sh18: c(18),
            k_one_kw: c(1),
            k_lo: c(LO as u64),
            k_lomask: c((1 << LO) - 1),
            // y < m 2^r < 2^(11 + r)
            k_ymask: c((1 << (11 + r)) - 1),
            k_zero8: c(0),
            k_one8: c(1),
            k_sz: c(1 << 16),
            k_nfb: c(1 << 17),
            _lanes: l,
            _lv: g.levels,
            _r: r,
            _sb: sb,
        }
    }
}

impl<const R: usize> Logic for PackKvQuantizer<R> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- register wiring ----------------
        clock!(self, clock, cnt, kw, wp, i0_v, i0_first, i0_last, run, run_nf, tok_v, kr, rp);
        clock!(self, clock, o_v, o_last, o_nf, o_meta);
        self.adv.next = !self.o_v.q.val() | self.out_ready.val();
        self.cnt.reset.next = self.reset.val();
        self.kw.reset.next = self.reset.val();
        self.wp.reset.next = self.reset.val();
        self.i0_v.reset.next = self.reset.val();
        self.i0_first.reset.next = self.reset.val();
        self.i0_last.reset.next = self.reset.val();
        self.run.reset.next = self.reset.val();
        self.run_nf.reset.next = self.reset.val();
        self.tok_v.reset.next = self.reset.val();
        self.kr.reset.next = self.reset.val();
        self.rp.reset.next = self.reset.val();
        self.o_v.reset.next = self.reset.val();
        self.o_last.reset.next = self.reset.val();
        self.o_nf.reset.next = self.reset.val();
        self.o_meta.reset.next = self.reset.val();
        self.i0_v.en.next = true;
        self.i0_first.en.next = true;
        self.i0_last.en.next = true;
        self.run.en.next = true;
        self.run_nf.en.next = true;
        self.tok_v.en.next = true;
        self.o_v.en.next = self.adv.val();
        self.o_last.en.next = self.adv.val();
        self.o_nf.en.next = self.adv.val();
        self.o_meta.en.next = self.adv.val();
        for l in 0..self._lanes {
            self.i0_x[l].clock.next = self.clock.val();
            self.i0_x[l].reset.next = self.reset.val();
            self.i0_x[l].en.next = true;
            self.s_x[l].clock.next = self.clock.val();
            self.s_x[l].reset.next = self.reset.val();
            self.s_x[l].en.next = true;
            self.p1_mag[l].clock.next = self.clock.val();
            self.p1_mag[l].reset.next = self.reset.val();
            self.p1_mag[l].en.next = self.adv.val();
            self.p1_neg[l].clock.next = self.clock.val();
            self.p1_neg[l].reset.next = self.reset.val();
            self.p1_neg[l].en.next = self.adv.val();
            self.p2_lo[l].clock.next = self.clock.val();
            self.p2_lo[l].reset.next = self.reset.val();
            self.p2_lo[l].en.next = self.adv.val();
            self.p2_hi[l].clock.next = self.clock.val();
            self.p2_hi[l].reset.next = self.reset.val();
            self.p2_hi[l].en.next = self.adv.val();
            self.p3_n[l].clock.next = self.clock.val();
            self.p3_n[l].reset.next = self.reset.val();
            self.p3_n[l].en.next = self.adv.val();
            self.p4_y[l].clock.next = self.clock.val();
            self.p4_y[l].reset.next = self.reset.val();
            self.p4_y[l].en.next = self.adv.val();
            self.o_codes[l].clock.next = self.clock.val();
            self.o_codes[l].reset.next = self.reset.val();
            self.o_codes[l].en.next = self.adv.val();
        }
        for i in 0..(self._lv + 1) {
            self.t_v[i].clock.next = self.clock.val();
            self.t_v[i].reset.next = self.reset.val();
            self.t_v[i].en.next = true;
            self.t_first[i].clock.next = self.clock.val();
            self.t_first[i].reset.next = self.reset.val();
            self.t_first[i].en.next = true;
            self.t_last[i].clock.next = self.clock.val();
            self.t_last[i].reset.next = self.reset.val();
            self.t_last[i].en.next = true;
            self.t_nf[i].clock.next = self.clock.val();
            self.t_nf[i].reset.next = self.reset.val();
            self.t_nf[i].en.next = true;
        }
        for i in 1..self._lanes {
            self.tr[i - 1].clock.next = self.clock.val();
            self.tr[i - 1].reset.next = self.reset.val();
            self.tr[i - 1].en.next = true;
        }
        for i in 0..self._sb {
            self.p_v[i].clock.next = self.clock.val();
            self.p_v[i].reset.next = self.reset.val();
            self.p_v[i].en.next = self.adv.val();
            self.p_last[i].clock.next = self.clock.val();
            self.p_last[i].reset.next = self.reset.val();
            self.p_last[i].en.next = self.adv.val();
            self.p_nf[i].clock.next = self.clock.val();
            self.p_nf[i].reset.next = self.reset.val();
            self.p_nf[i].en.next = self.adv.val();
            self.p_meta[i].clock.next = self.clock.val();
            self.p_meta[i].reset.next = self.reset.val();
            self.p_meta[i].en.next = self.adv.val();
            self.p_sz[i].clock.next = self.clock.val();
            self.p_sz[i].reset.next = self.reset.val();
            self.p_sz[i].en.next = self.adv.val();
        }
        for i in 0..(self._sb - 1) {
            self.p_m[i].clock.next = self.clock.val();
            self.p_m[i].reset.next = self.reset.val();
            self.p_m[i].en.next = self.adv.val();
        }
        for i in 1..(self._sb - 1) {
            self.p_m[i].d.next = self.p_m[i - 1].q.val();
        }
        for i in 0..2 {
            self.p_kk[i].clock.next = self.clock.val();
            self.p_kk[i].reset.next = self.reset.val();
            self.p_kk[i].en.next = self.adv.val();
        }
        for i in 0..4 {
            self.p_esh[i].clock.next = self.clock.val();
            self.p_esh[i].reset.next = self.reset.val();
            self.p_esh[i].en.next = self.adv.val();
        }
        for i in 0..((self._r - 1) * self._lanes) {
            self.st_r[i].clock.next = self.clock.val();
            self.st_r[i].reset.next = self.reset.val();
            self.st_r[i].en.next = self.adv.val();
        }
        for i in 0..(self._r * self._lanes) {
            self.st_q[i].clock.next = self.clock.val();
            self.st_q[i].reset.next = self.reset.val();
            self.st_q[i].en.next = self.adv.val();
        }

        // pass 2 reads while the FIFO holds a record: a record exists only
        // once every beat of its token is in the buffer
        self.rd.next = self.adv.val() & !self.fctl.empty.val();

        // ---------------- fill ----------------
        // credit: beats accepted and not yet read, below the buffer's depth
        self.in_ready.next = self.cnt.q.val() < self.k_depth.val();
        self.accept.next = self.in_valid.val() & (self.cnt.q.val() < self.k_depth.val());
        self.cnt.en.next = self.accept.val() ^ self.rd.val();
        self.cnt.d.next = self.cnt.q.val() - self.k_one16.val();
        if self.accept.val() {
            self.cnt.d.next = self.cnt.q.val() + self.k_one16.val();
        }
        self.kw.en.next = self.accept.val();
        self.kw.d.next = self.kw.q.val() + self.k_one16.val();
        if self.kw.q.val() == self.k_blast.val() {
            self.kw.d.next = self.k_zero16.val();
        }
        self.i0_v.d.next = self.accept.val();
        self.i0_first.d.next = self.kw.q.val() == self.k_zero16.val();
        self.i0_last.d.next = self.kw.q.val() == self.k_blast.val();
        for l in 0..self._lanes {
            self.i0_x[l].d.next = self.in_x[l].val();
            // S: sanitised (spec §2.2.1)
            self.san[l].x.next = self.i0_x[l].q.val();
            self.s_x[l].d.next = self.san[l].y.val();
        }
        self.bnf.next = false;
        for l in 0..self._lanes {
            self.bnf.next = self.bnf.val() | self.san[l].nonfinite.val();
        }
        self.t_v[0].d.next = self.i0_v.q.val();
        self.t_first[0].d.next = self.i0_first.q.val();
        self.t_last[0].d.next = self.i0_last.q.val();
        self.t_nf[0].d.next = self.bnf.val();
        for i in 1..(self._lv + 1) {
            self.t_v[i].d.next = self.t_v[i - 1].q.val();
            self.t_first[i].d.next = self.t_first[i - 1].q.val();
            self.t_last[i].d.next = self.t_last[i - 1].q.val();
            self.t_nf[i].d.next = self.t_nf[i - 1].q.val();
        }
        // S -> the token buffer, one word per beat
        self.bw.next = bit_cast::<1024, 1>(false.into());
        for l in 0..self._lanes {
            self.btmp.next = self.s_x[l].q.val();
            self.bw.next = self.bw.val() | (bit_cast::<1024, 16>(self.btmp.val()) << self.lane_off[l].val());
        }
        self.tbram.clock.next = self.clock.val();
        self.tbram.we.next = self.t_v[0].q.val();
        self.tbram.waddr.next = self.wp.q.val();
        self.tbram.wdata.next = self.bw.val();
        self.wp.en.next = self.t_v[0].q.val();
        self.wp.d.next = self.wp.q.val() + self.k_one16.val();
        if self.wp.q.val() == self.k_dlast.val() {
            self.wp.d.next = self.k_zero16.val();
        }
        // S -> order keys (spec §2.2.2) -> the tree, a register per level
        for ln in self._lanes..(self._lanes + 1) {
            for l in 0..self._lanes {
                self.key[l].next = self.s_x[l].q.val() | self.k_sign16.val();
                if self.s_x[l].q.val().get_bit(15) {
                    self.key[l].next = !self.s_x[l].q.val();
                }
                self.kt.next = self.key[l].val();
                self.nd[ln - 1 + l].next = self.k_leaf.val()
                    | (bit_cast::<NODE, 16>(self.kt.val()) << self.k_sh16n.val())
                    | bit_cast::<NODE, 16>(self.kt.val());
            }
            for i in 1..self._lanes {
                self.mm[i - 1].a.next = self.nd[2 * i - 1].val();
                self.mm[i - 1].b.next = self.nd[2 * i].val();
                self.tr[i - 1].d.next = self.mm[i - 1].y.val();
                self.nd[i - 1].next = self.tr[i - 1].q.val();
            }
        }
        // the root merges into the token's running extremes and flag
        for t in self._lv..(self._lv + 1) {
            self.run_mm.a.next = self.nd[0].val();
            self.run_mm.b.next = self.run.q.val();
            self.run_nf.d.next = self.run_nf.q.val() | self.t_nf[t].q.val();
            if self.t_first[t].q.val() {
                self.run_mm.b.next = self.k_absent.val();
                self.run_nf.d.next = self.t_nf[t].q.val();
            }
            self.run.d.next = self.run.q.val();
            if self.t_v[t].q.val() {
                self.run.d.next = self.run_mm.y.val();
            } else {
                self.run_nf.d.next = self.run_nf.q.val();
            }
            self.tok_v.d.next = self.t_v[t].q.val() & self.t_last[t].q.val();
        }

        // ---------------- step: the token's constants into the FIFO ----------------
        self.tstep.clock.next = self.clock.val();
        self.tstep.reset.next = self.reset.val();
        self.tstep.in_valid.next = self.tok_v.q.val();
        self.tstep.kmin.next = self.run.q.val().get_bits::<16>(0);
        self.tstep.kmax.next = self.run.q.val().get_bits::<16>(16);
        self.tstep.in_nf.next = self.run_nf.q.val();
        self.fctl.clock.next = self.clock.val();
        self.fctl.reset.next = self.reset.val();
        self.fctl.push.next = self.tstep.out_valid.val();
        self.f_meta.clock.next = self.clock.val();
        self.f_meta.reset.next = self.reset.val();
        self.f_meta.we.next = self.tstep.out_valid.val();
        self.f_meta.waddr.next = self.fctl.waddr.val();
        self.f_meta.wdata.next = self.tstep.meta.val();
        self.f_meta.raddr.next = self.fctl.raddr.val();
        self.f_kk.clock.next = self.clock.val();
        self.f_kk.reset.next = self.reset.val();
        self.f_kk.we.next = self.tstep.out_valid.val();
        self.f_kk.waddr.next = self.fctl.waddr.val();
        self.f_kk.wdata.next = self.tstep.kk.val();
        self.f_kk.raddr.next = self.fctl.raddr.val();
        self.f_misc.clock.next = self.clock.val();
        self.f_misc.reset.next = self.reset.val();
        self.f_misc.we.next = self.tstep.out_valid.val();
        self.f_misc.waddr.next = self.fctl.waddr.val();
        // {e + 1, nf, sz, m}
        self.misc.next = bit_cast::<26, 16>(self.tstep.m.val()) | (bit_cast::<26, 8>(self.tstep.esh.val()) << self.k_sh18.val());
        if self.tstep.sz.val() {
            self.misc.next = self.misc.val() | self.k_sz.val();
        }
        if self.tstep.nf.val() {
            self.misc.next = self.misc.val() | self.k_nfb.val();
        }
        self.f_misc.wdata.next = self.misc.val();
        self.f_misc.raddr.next = self.fctl.raddr.val();

        // ---------------- code: read beat kr of the FIFO's head token ----------------
        self.rlast.next = self.kr.q.val() == self.k_blast.val();
        self.fctl.pop.next = self.rd.val() & self.rlast.val();
        self.kr.en.next = self.rd.val();
        self.kr.d.next = self.kr.q.val() + self.k_one16.val();
        if self.rlast.val() {
            self.kr.d.next = self.k_zero16.val();
        }
        self.rp.en.next = self.rd.val();
        self.rp.d.next = self.rp.q.val() + self.k_one16.val();
        if self.rp.q.val() == self.k_dlast.val() {
            self.rp.d.next = self.k_zero16.val();
        }
        // P0: the memory's read register holds the beat while stalled
        self.tbram.re.next = self.rd.val();
        self.tbram.raddr.next = self.rp.q.val();
        self.p_v[0].d.next = self.rd.val();
        self.p_last[0].d.next = self.rlast.val();
        self.p_meta[0].d.next = self.f_meta.rdata.val();
        self.p_kk[0].d.next = self.f_kk.rdata.val();
        self.p_m[0].d.next = self.f_misc.rdata.val().get_bits::<16>(0);
        self.p_sz[0].d.next = self.f_misc.rdata.val().get_bit(16);
        self.p_nf[0].d.next = self.f_misc.rdata.val().get_bit(17);
        self.p_esh[0].d.next = self.f_misc.rdata.val().get_bits::<8>(18);
        for i in 1..self._sb {
            self.p_v[i].d.next = self.p_v[i - 1].q.val();
            self.p_last[i].d.next = self.p_last[i - 1].q.val();
            self.p_nf[i].d.next = self.p_nf[i - 1].q.val();
            self.p_meta[i].d.next = self.p_meta[i - 1].q.val();
            self.p_sz[i].d.next = self.p_sz[i - 1].q.val();
        }
        self.p_kk[1].d.next = self.p_kk[0].q.val();
        for i in 1..4 {
            self.p_esh[i].d.next = self.p_esh[i - 1].q.val();
        }
        for l in 0..self._lanes {
            // a word not written since reset is undefined: only a valid
            // beat enters the lanes
            self.xr[l].next = self.k_zero16.val();
            if self.p_v[0].q.val() {
                self.xr[l].next = self.tbram.rdata.val().get_bits::<16>(self.lane_bit[l].val().index());
            }
            // P1: units(x) as magnitude and sign
            self.cvt[l].x.next = self.xr[l].val();
            self.p1_mag[l].d.next = self.cvt[l].mag.val();
            self.p1_neg[l].d.next = self.cvt[l].neg.val();
            // P2: the low half of n = 2x + K (2x as +-2|x|: invert and carry in)
            self.mg.next = self.p1_mag[l].q.val();
            self.ng.next = self.p1_neg[l].q.val();
            self.op.next = bit_cast::<KW, FX>(self.mg.val()) << self.k_one_kw.val();
            if self.ng.val() {
                self.op.next = !(bit_cast::<KW, FX>(self.mg.val()) << self.k_one_kw.val());
            }
            self.p2_lo[l].d.next = bit_cast::<24, KW>(self.op.val() & self.k_lomask.val())
                + bit_cast::<24, KW>(self.p_kk[1].q.val() & self.k_lomask.val())
                + bit_cast::<24, 1>(self.ng.val().into());
            self.p2_hi[l].d.next = (self.op.val() >> self.k_lo.val()) + (self.p_kk[1].q.val() >> self.k_lo.val());
            // P3: the high half with the low half's carry; 0 <= n < 2^44
            self.lo24.next = self.p2_lo[l].q.val();
            self.p3_n[l].d.next = ((self.p2_hi[l].q.val() + bit_cast::<KW, 1>(self.lo24.val().get_bit(23).into()))
                << self.k_lo.val())
                | (bit_cast::<KW, 24>(self.lo24.val()) & self.k_lomask.val());
            // P4: y = floor(n / 2^(e+1)) < m 2^r
            self.nn.next = (self.p3_n[l].q.val() >> self.p_esh[3].q.val()) & self.k_ymask.val();
            self.p4_y[l].d.next = bit_cast::<NW, KW>(self.nn.val());
        }

        // restoring steps: q = floor(y / m), weight 2^(r-1-j) at step j;
        // the last (weight 1) only compares
        for ln in self._lanes..(self._lanes + 1) {
            for l in 0..self._lanes {
                self.dstep[l].rem.next = self.p4_y[l].q.val();
                self.mj.next = self.p_m[4].q.val();
                self.dstep[l].dsh.next = bit_cast::<NW, 16>(self.mj.val()) << self.dsh[0].val();
                self.st_r[l].d.next = self.dstep[l].rem_out.val() & self.rmask[0].val();
                self.st_q[l].d.next = self.k_zero8.val();
                if self.dstep[l].take.val() {
                    self.st_q[l].d.next = self.k_one8.val();
                }
            }
            for j in 1..(self._r - 1) {
                for l in 0..self._lanes {
                    self.dstep[j * ln + l].rem.next = self.st_r[(j - 1) * ln + l].q.val();
                    self.mj.next = self.p_m[4 + j].q.val();
                    self.dstep[j * ln + l].dsh.next = bit_cast::<NW, 16>(self.mj.val()) << self.dsh[j].val();
                    self.st_r[j * ln + l].d.next = self.dstep[j * ln + l].rem_out.val() & self.rmask[j].val();
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one8.val();
                    if self.dstep[j * ln + l].take.val() {
                        self.st_q[j * ln + l].d.next = (self.st_q[(j - 1) * ln + l].q.val() << self.k_one8.val()) | self.k_one8.val();
                    }
                }
            }
            for j in (self._r - 1)..self._r {
                for l in 0..self._lanes {
                    self.st_q[j * ln + l].d.next = self.st_q[(j - 1) * ln + l].q.val() << self.k_one8.val();
                    self.mj.next = self.p_m[4 + j].q.val();
                    if self.st_r[(j - 1) * ln + l].q.val() >= bit_cast::<NW, 16>(self.mj.val()) {
                        self.st_q[j * ln + l].d.next = (self.st_q[(j - 1) * ln + l].q.val() << self.k_one8.val()) | self.k_one8.val();
                    }
                }
            }
        }
        for t in (self._sb - 1)..self._sb {
            for ln in self._lanes..(self._lanes + 1) {
                for j in (self._r - 1)..self._r {
                    for l in 0..self._lanes {
                        self.qq.next = self.st_q[j * ln + l].q.val();
                        self.o_codes[l].d.next = bit_cast::<R, 8>(self.qq.val());
                        if self.p_sz[t].q.val() {
                            self.o_codes[l].d.next = bit_cast::<R, 8>(self.k_zero8.val());
                        }
                    }
                }
            }
            self.o_v.d.next = self.p_v[t].q.val();
            self.o_last.d.next = self.p_last[t].q.val();
            self.o_nf.d.next = self.p_nf[t].q.val();
            self.o_meta.d.next = self.p_meta[t].q.val();
        }
        for l in 0..self._lanes {
            self.out_codes[l].next = self.o_codes[l].q.val();
        }
        self.out_valid.next = self.o_v.q.val();
        self.out_last.next = self.o_last.q.val();
        self.out_nonfinite.next = self.o_nf.q.val();
        self.out_meta.next = self.o_meta.q.val();
    }
}
