//! `packkv-encoder`: K and V code streams in, one block of `B` tokens at a
//! time; out, per block pair, the K block then the V block as the bitstream
//! of spec §14.4 (header, token words, per pack row its fields then its
//! payload), through the project's zero-remove shifter.
//!
//! Paper: PackKV §III-B2 (bit-packing per pack of `P` tokens of a channel),
//! §III-B4 (blocks). Spec: docs/spec.md §14.4, §14.6, §14.8, §14.14.3.
//!
//! - Fill (one `EncSide` per K and V, never stalls): every accepted beat is
//!   written to the code memory of the filling bank; each channel's running
//!   minimum and maximum over its pack live in a small memory read and
//!   rewritten per beat (a write of the cycle a read is issued in is
//!   forwarded), and a pack row's last token writes `{width, min}` to the
//!   fields memory a cycle later, through a register. The widths' sum (a
//!   registered adder tree) gives the block's length, so the header is
//!   known when the block is complete.
//! - Tiles (never stalls on the output): per pack row and beat position,
//!   the `P` words of one channel group are read into `L`, then moved in
//!   one cycle to `E`, transposed to payload order (channel by channel, `P`
//!   codes each), minus the tile's per-channel minimum, with each slot's
//!   width mask. The tile's minimum and width are recomputed from `L` (the
//!   fields memory's one read port serves the output order).
//! - Queue: `E` moves `pay_beats` beats a cycle into the payload memory
//!   (with `P = 2` and four beats a row, a tile a cycle, two tiles a row), so
//!   the reader keeps reading while the output sends a block's metadata;
//!   two beats an item let the output catch up, and the reader's one word
//!   a cycle (`lanes` codes) sets the pace where the items keep up.
//! - Output (stalls as a whole on `adv = !out_valid | out_ready`): one item
//!   per advance (header, a row of `tw` token words, fields word, payload
//!   row from the queue, or the status beat of a refused block; `tw > 1`
//!   only where one-word items would be slower than the reader) into the
//!   zero-remove shifter at one bit per lane, then an accumulator that
//!   emits whole 32-bit words.

use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::{consts, regs, sigs};
use crate::prim::zero_remove::ZeroRemove;
use super::median::{MedFields, MedSort};
use rust_hdl::prelude::*;

/// Bits of a code word, a fields word and a shifter beat (a parameter rule:
/// `lanes (r + wb) <= 128`).
pub const WMAX: usize = 128;
/// The output window: a residue of up to 31 bits and one beat.
pub const WIN: usize = 160;
/// Pipeline of the zero-remove shifter: a register after every 2 stages.
pub const SH_PIPE: usize = 2;

/// One of K or V.
#[derive(Clone, Debug)]
pub struct SideGeom {
    pub levels: u32,
    pub raw: usize,
    pub wb: usize,
}

impl SideGeom {
    pub fn new(levels: u32) -> SideGeom {
        let raw = sim::packkv::params::raw_bits(levels) as usize;
        SideGeom {
            levels,
            raw,
            wb: sim::packkv::params::width_bits(raw as u32) as usize,
        }
    }
}

/// Derived sizes of one instance (spec §14.14.3).
#[derive(Clone, Debug)]
pub struct EncGeometry {
    pub vector: usize,
    pub lanes: usize,
    /// Beats per token, `C / lanes`.
    pub beats: usize,
    pub block: usize,
    pub pack: usize,
    pub k: SideGeom,
    pub v: SideGeom,
    /// Slot bits of a tile, `max(r_K, r_V)`.
    pub rmax: usize,
    /// Lanes of the zero-remove shifter (one bit each).
    pub nsh: usize,
    /// Bits of the widest item (`F` of spec §14.14.3).
    pub chunk: usize,
    /// Words an output beat can carry.
    pub out_words: usize,
    /// `repack = median` (spec §14.5): the sort and the fields pass.
    pub median: bool,
    /// Payload beats per output item: 2 when two beats fit the shifter
    /// (`2 lanes r_max <= 128`), else 1; 4 with `none` where four fit, 4
    /// divides a pack row's `P BT` beats and the items at 2 outnumber the
    /// reader's cycles (with `P = 2` a queue row is then two tiles).
    pub pay_beats: usize,
    /// A pack row's last fields beat and its first payload item go out as
    /// one item (`none`, where the items outnumber the reader otherwise).
    pub merge: bool,
    /// The least `F` (32 `tw`) that lets the token words keep up, else 0.
    pub grow: usize,
}

impl EncGeometry {
    /// `Err` names the parameter rule the RTL adds to spec §14.1.
    pub fn new(
        vector: usize,
        k_levels: u32,
        v_levels: u32,
        block: usize,
        pack: usize,
        lanes: usize,
        median: bool,
    ) -> Result<EncGeometry, String> {
        let (k, v) = (SideGeom::new(k_levels), SideGeom::new(v_levels));
        let fk = lanes * (k.raw + k.wb);
        let fv = lanes * (v.raw + v.wb);
        if fk.max(fv) > WMAX {
            return Err(format!(
                "lanes x (r + wb) must be <= {WMAX} (one fields beat through the shifter), got {lanes} x {} = {}",
                if fk >= fv { k.raw + k.wb } else { v.raw + v.wb },
                fk.max(fv)
            ));
        }
        let rmax = k.raw.max(v.raw);
        let pay_beats = if 2 * lanes * rmax <= WMAX { 2 } else { 1 };
        let mut g = EncGeometry {
            vector,
            lanes,
            beats: vector / lanes,
            block,
            pack,
            rmax,
            nsh: 0,
            chunk: 0,
            out_words: 0,
            median,
            pay_beats,
            merge: false,
            grow: 0,
            k,
            v,
        };
        g.size_items();
        let reader = 2 * block * g.beats;
        // four beats an item where two leave the output behind the reader
        // (`none` only: the median pass reads at most two beats a cycle)
        if !median && 4 * lanes * rmax <= WMAX && (pack * g.beats) % 4 == 0 && g.items(g.tok_words()) > reader {
            g.pay_beats = 4;
            g.size_items();
        }
        // still behind: a pack row's last fields beat carries its first
        // payload item, and the item grows to the token words that keep up
        if !median && g.items(g.tok_words()) > reader && fk.max(fv) + g.pay_bits() <= WMAX {
            g.merge = true;
            g.size_items();
            for tw in [2, 4] {
                if g.items(g.tok_words()) > reader && 32 * tw > g.chunk {
                    let mut h = g.clone();
                    h.grow = 32 * tw;
                    h.size_items();
                    if h.items(h.tok_words()) <= reader {
                        g = h;
                    }
                }
            }
        }
        Ok(g)
    }

    /// `F`, the shifter and the output beat for the current `pay_beats`.
    fn size_items(&mut self) {
        let side = |s: &SideGeom| self.lanes * (s.raw + s.wb);
        let merged = if self.merge { side(&self.k).max(side(&self.v)) + self.pay_bits() } else { 0 };
        self.chunk = side(&self.k).max(side(&self.v)).max(32).max(self.pay_bits()).max(merged).max(self.grow);
        self.nsh = self.chunk.next_power_of_two();
        self.out_words = (31 + self.chunk).div_ceil(32);
    }

    /// Rows of the payload queue (`pay_beats` beats each): the beats the
    /// tile reader reads while the output sends a block's header, token
    /// words, permutation and first fields, and half a tile more; a power
    /// of two. With one beat an item the output paces the reader, and a
    /// tile's rows suffice.
    pub fn pay_depth(&self) -> usize {
        if self.pay_beats == 1 {
            return self.pack;
        }
        let s = 1 + self.block / self.tok_words() + self.perm_items() + self.beats;
        (s.div_ceil(self.pay_beats) + self.pack.div_ceil(self.pay_beats)).next_power_of_two()
    }

    /// Beats `E` moves a cycle: a payload row's, or a whole tile's where a
    /// row is two tiles (`P = 2`, four beats a row).
    pub fn e_beats(&self) -> usize {
        self.pay_beats.min(self.pack)
    }

    /// Output items of a block pair with `tw` token words an item: the
    /// headers, token words, permutation (median) and per pack row the
    /// fields beats and payload items.
    pub fn items(&self, tw: usize) -> usize {
        let rows = self.block / self.pack;
        let row = self.beats + self.pack * self.beats / self.pay_beats - self.merge as usize;
        2 * (1 + self.block / tw + rows * row) + self.perm_items()
    }

    /// The K block's permutation items (`median`), else 0.
    fn perm_items(&self) -> usize {
        if self.median {
            super::median::perm_items(self.block)
        } else {
            0
        }
    }

    /// Token words an item carries (spec §14.14.3, Timing): 1 with
    /// `median` (its words are read through the permutation) and wherever
    /// the items keep up with the reader; otherwise as many as the widest
    /// item holds, `F / 32` rounded down to a power of two (so at most 4,
    /// and a divisor of `B`).
    pub fn tok_words(&self) -> usize {
        if self.median || self.items(1) <= 2 * self.block * self.beats {
            1
        } else {
            1 << (self.chunk / 32).ilog2()
        }
    }

    /// Bits of a payload item: `pay_beats` beats of `lanes` slots.
    pub fn pay_bits(&self) -> usize {
        self.pay_beats * self.lanes * self.rmax
    }

    pub fn side(&self, v: bool) -> &SideGeom {
        if v {
            &self.v
        } else {
            &self.k
        }
    }

    /// The memories of one side (`k` or `v`), manifest order.
    pub fn side_memories(&self, module: &str, v: bool) -> Vec<MemInfo> {
        let s = self.side(v);
        let n = if v { "v" } else { "k" };
        let (b, bt, l, tw) = (self.block, self.beats, self.lanes, self.tok_words());
        let m = |what: &str, depth: usize, width: usize| MemInfo {
            module: format!("{module}_{n}_{what}_ram"),
            name: format!("{n}_{what}"),
            depth,
            width,
        };
        vec![
            m("codes", 2 * b * bt, l * s.raw),
            m("meta", 2 * b / tw, 32 * tw),
            m("run", bt, 2 * l * s.raw),
            m("fields", 2 * (b / self.pack) * bt, l * (s.raw + s.wb)),
        ]
    }

    /// The payload queue: a row is an item's bits (`keep = false`) or its
    /// keep mask (`keep = true`).
    pub fn pay_memory(&self, module: &str, keep: bool) -> MemInfo {
        let what = if keep { "payload_keep" } else { "payload" };
        MemInfo {
            module: format!("{module}_{what}_ram"),
            name: what.into(),
            depth: self.pay_depth(),
            width: self.pay_bits(),
        }
    }

    pub fn memories(&self, module: &str) -> Vec<MemInfo> {
        let mut v = self.side_memories(module, false);
        v.extend(self.side_memories(module, true));
        v.push(self.pay_memory(module, false));
        v.push(self.pay_memory(module, true));
        if self.median {
            v.extend(super::median::memories(self, module));
        }
        v
    }

    /// Cycles from an item's issue to its output beat with `out_ready` high:
    /// X1, the shifter, the output register.
    pub fn item_latency(&self) -> usize {
        1 + ZeroRemove::<1>::latency(self.nsh, SH_PIPE) + 1
    }
}

/// All ones over the bits that hold `0..n` (a register mask: synthesis
/// drops the bits above, so counters and adders are no wider than needed).
fn range_mask(n: usize) -> u64 {
    (n.max(2).next_power_of_two() as u64) - 1
}

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

/// Ones in bits `0 .. n`.
pub(super) fn low_ones(n: usize) -> Constant<Bits<WMAX>> {
    let mut b = Bits::<WMAX>::default();
    for i in 0..n {
        b = b | (Bits::<WMAX>::from(1u64) << (i as u64));
    }
    Constant::new(b)
}

/// One of the K and V fill paths: code, metadata, running and fields
/// memories, two banks each, and the per-bank block state.
#[derive(LogicBlock)]
pub struct EncSide {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_codes: Signal<In, Bits<WMAX>>,
    pub in_meta: Signal<In, Bits<32>>,
    pub in_nf: Signal<In, Bit>,
    /// Per bank: a complete block waits; a code above N; nonfinite; header.
    pub filled0: Signal<Out, Bit>,
    pub filled1: Signal<Out, Bit>,
    pub ovf0: Signal<Out, Bit>,
    pub ovf1: Signal<Out, Bit>,
    pub nf0: Signal<Out, Bit>,
    pub nf1: Signal<Out, Bit>,
    pub hdr0: Signal<Out, Bits<32>>,
    pub hdr1: Signal<Out, Bits<32>>,
    /// The drain is done with bank `rel_bank`.
    pub rel: Signal<In, Bit>,
    pub rel_bank: Signal<In, Bit>,
    pub code_re: Signal<In, Bit>,
    pub code_raddr: Signal<In, Bits<32>>,
    pub code_rdata: Signal<Out, Bits<WMAX>>,
    pub meta_re: Signal<In, Bit>,
    pub meta_raddr: Signal<In, Bits<32>>,
    pub meta_rdata: Signal<Out, Bits<WMAX>>,
    pub fld_re: Signal<In, Bit>,
    pub fld_raddr: Signal<In, Bits<32>>,
    pub fld_rdata: Signal<Out, Bits<WMAX>>,
    /// `repack = median` only (length 1, else 0): the fields pass's writes,
    /// which replace the fill's (fields over stored rows, spec §14.14.3)
    pub med_we: Vec<Signal<In, Bit>>,
    pub med_waddr: Vec<Signal<In, Bits<32>>>,
    pub med_wdata: Vec<Signal<In, Bits<WMAX>>>,
    code_ram: DpRam<32, WMAX>,
    meta_ram: DpRam<32, WMAX>,
    run_ram: DpRam<32, 256>,
    fld_ram: DpRam<32, WMAX>,
    accept: Signal<Local, Bit>,
    // fill counters
    wbank: Reg<Bit>,
    beat: Reg<Bits<32>>,
    tok: Reg<Bits<32>>,
    tp: Reg<Bits<32>>,
    caddr: Reg<Bits<32>>,
    maddr: Reg<Bits<32>>,
    faddr: Reg<Bits<32>>,
    // I1: the accepted beat
    i1_v: Reg<Bit>,
    i1_codes: Reg<Bits<WMAX>>,
    i1_beat: Reg<Bits<32>>,
    i1_first: Reg<Bit>,
    i1_lastp: Reg<Bit>,
    i1_lastbeat: Reg<Bit>,
    i1_end: Reg<Bit>,
    i1_bank: Reg<Bit>,
    i1_meta: Reg<Bits<32>>,
    i1_nf: Reg<Bit>,
    i1_caddr: Reg<Bits<32>>,
    i1_maddr: Reg<Bits<32>>,
    // token words gathered into a memory row (`tw` > 1)
    tw_buf: Reg<Bits<WMAX>>,
    wtok: Signal<Local, Bits<WMAX>>,
    fwd: Reg<Bit>,
    fwd_d: Reg<Bits<256>>,
    old: Signal<Local, Bits<256>>,
    cc: Signal<Local, Bits<8>>,
    omin: Signal<Local, Bits<8>>,
    omax: Signal<Local, Bits<8>>,
    nmin: Signal<Local, Bits<8>>,
    nmax: Signal<Local, Bits<8>>,
    nrun: Signal<Local, Bits<256>>,
    nmin_w: Signal<Local, Bits<WMAX>>,
    nmax_w: Signal<Local, Bits<WMAX>>,
    ovf_now: Signal<Local, Bit>,
    acc_ovf: Reg<Bit>,
    acc_nf: Reg<Bit>,
    // I2: a pack row's last beat, its extremes
    i2_v: Reg<Bit>,
    i2_end: Reg<Bit>,
    i2_bank: Reg<Bit>,
    i2_min: Reg<Bits<WMAX>>,
    i2_max: Reg<Bits<WMAX>>,
    dd: Signal<Local, Bits<8>>,
    ww: Signal<Local, Bits<8>>,
    fw: Signal<Local, Bits<WMAX>>,
    // the fields memory's write, registered: as flip-flops its rows all
    // load the write data, which must not also carry the width logic
    fwr_v: Reg<Bit>,
    fwr_a: Reg<Bits<32>>,
    fwr_d: Reg<Bits<WMAX>>,
    // width-sum tree: node i (heap order), leaves at lanes - 1 + l;
    // internal nodes are registers; sideband per level
    nd: Vec<Signal<Local, Bits<32>>>,
    tr: Vec<Reg<Bits<32>>>,
    sv: Vec<Signal<Local, Bit>>,
    se: Vec<Signal<Local, Bit>>,
    sb: Vec<Signal<Local, Bit>>,
    t_v: Vec<Reg<Bit>>,
    t_e: Vec<Reg<Bit>>,
    t_b: Vec<Reg<Bit>>,
    // after the root
    rt_v: Reg<Bit>,
    rt_e: Reg<Bit>,
    rt_b: Reg<Bit>,
    rt_w: Reg<Bits<32>>,
    acc_w: Reg<Bits<32>>,
    hs_v: Reg<Bit>,
    hs_b: Reg<Bit>,
    hs_w: Reg<Bits<32>>,
    wsum: Signal<Local, Bits<32>>,
    hdr: Signal<Local, Bits<32>>,
    f0: Reg<Bit>,
    f1: Reg<Bit>,
    o0: Reg<Bit>,
    o1: Reg<Bit>,
    n0: Reg<Bit>,
    n1: Reg<Bit>,
    h0: Reg<Bits<32>>,
    h1: Reg<Bits<32>>,
    // constants
    sofs: Vec<Constant<Bits<32>>>,
    mofs: Vec<Constant<Bits<32>>>,
    mofs_hi: Vec<Constant<Bits<32>>>,
    fofs: Vec<Constant<Bits<32>>>,
    fofs_w: Vec<Constant<Bits<32>>>,
    pow2: Vec<Constant<Bits<8>>>,
    wval: Vec<Constant<Bits<8>>>,
    k_rmask: Constant<Bits<8>>,
    k_levels: Constant<Bits<8>>,
    k_bt1: Constant<Bits<32>>,
    k_b1: Constant<Bits<32>>,
    k_p1: Constant<Bits<32>>,
    k_cend: Constant<Bits<32>>,
    k_mend: Constant<Bits<32>>,
    k_fend: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero8: Constant<Bits<8>>,
    k_lp: Constant<Bits<32>>,
    k_fixed: Constant<Bits<32>>,
    k_fb31: Constant<Bits<32>>,
    k_m_bt: Constant<Bits<32>>,
    k_m_b: Constant<Bits<32>>,
    k_m_p: Constant<Bits<32>>,
    k_m_c: Constant<Bits<32>>,
    k_m_b2: Constant<Bits<32>>,
    k_m_f: Constant<Bits<32>>,
    k_m_w: Constant<Bits<32>>,
    k_5: Constant<Bits<32>>,
    k_rhdr: Constant<Bits<32>>,
    k_nfb: Constant<Bits<32>>,
    k_32: Constant<Bits<32>>,
    k_twmask: Constant<Bits<WMAX>>,
    k_twsh: Constant<Bits<32>>,
    k_tw1: Constant<Bits<32>>,
    k_twl: Constant<Bits<32>>,
    _lanes: usize,
    _levels: usize,
    _raw: usize,
    _med: usize,
}

impl EncSide {
    pub fn new(g: &EncGeometry, v: bool, module: &str) -> Self {
        let s = g.side(v).clone();
        let (l, r, wb) = (g.lanes, s.raw, s.wb);
        let lv = l.trailing_zeros() as usize;
        let mem = g.side_memories(module, v);
        let dp = |i: usize| {
            let m = &mem[i];
            (m.module.clone(), m.name.clone(), m.depth, m.width)
        };
        let (cm, mm, rm, fm) = (dp(0), dp(1), dp(2), dp(3));
        let rows = g.block / g.pack;
        let tw = g.tok_words();
        EncSide {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_codes: Default::default(),
            in_meta: Default::default(),
            in_nf: Default::default(),
            filled0: Default::default(),
            filled1: Default::default(),
            ovf0: Default::default(),
            ovf1: Default::default(),
            nf0: Default::default(),
            nf1: Default::default(),
            hdr0: Default::default(),
            hdr1: Default::default(),
            rel: Default::default(),
            rel_bank: Default::default(),
            code_re: Default::default(),
            code_raddr: Default::default(),
            code_rdata: Default::default(),
            meta_re: Default::default(),
            meta_raddr: Default::default(),
            meta_rdata: Default::default(),
            fld_re: Default::default(),
            fld_raddr: Default::default(),
            fld_rdata: Default::default(),
            med_we: sigs(g.median as usize),
            med_waddr: sigs(g.median as usize),
            med_wdata: sigs(g.median as usize),
            code_ram: DpRam::new(&cm.0, &cm.1, cm.2, cm.3),
            meta_ram: DpRam::new(&mm.0, &mm.1, mm.2, mm.3),
            run_ram: DpRam::new(&rm.0, &rm.1, rm.2, rm.3),
            fld_ram: DpRam::new(&fm.0, &fm.1, fm.2, fm.3),
            accept: Default::default(),
            wbank: Reg::default(),
            beat: Reg::default(),
            tok: Reg::default(),
            tp: Reg::default(),
            caddr: Reg::default(),
            maddr: Reg::default(),
            faddr: Reg::default(),
            i1_v: Reg::default(),
            i1_codes: Reg::default(),
            i1_beat: Reg::default(),
            i1_first: Reg::default(),
            i1_lastp: Reg::default(),
            i1_lastbeat: Reg::default(),
            i1_end: Reg::default(),
            i1_bank: Reg::default(),
            i1_meta: Reg::default(),
            i1_nf: Reg::default(),
            i1_caddr: Reg::default(),
            i1_maddr: Reg::default(),
            tw_buf: Reg::default(),
            wtok: Default::default(),
            fwd: Reg::default(),
            fwd_d: Reg::default(),
            old: Default::default(),
            cc: Default::default(),
            omin: Default::default(),
            omax: Default::default(),
            nmin: Default::default(),
            nmax: Default::default(),
            nrun: Default::default(),
            nmin_w: Default::default(),
            nmax_w: Default::default(),
            ovf_now: Default::default(),
            acc_ovf: Reg::default(),
            acc_nf: Reg::default(),
            i2_v: Reg::default(),
            i2_end: Reg::default(),
            i2_bank: Reg::default(),
            i2_min: Reg::default(),
            i2_max: Reg::default(),
            dd: Default::default(),
            ww: Default::default(),
            fw: Default::default(),
            fwr_v: Reg::default(),
            fwr_a: Reg::default(),
            fwr_d: Reg::default(),
            nd: sigs(2 * l - 1),
            tr: regs(l - 1),
            sv: sigs(lv + 1),
            se: sigs(lv + 1),
            sb: sigs(lv + 1),
            t_v: regs(lv),
            t_e: regs(lv),
            t_b: regs(lv),
            rt_v: Reg::default(),
            rt_e: Reg::default(),
            rt_b: Reg::default(),
            rt_w: Reg::default(),
            acc_w: Reg::default(),
            hs_v: Reg::default(),
            hs_b: Reg::default(),
            hs_w: Reg::default(),
            wsum: Default::default(),
            hdr: Default::default(),
            f0: Reg::default(),
            f1: Reg::default(),
            o0: Reg::default(),
            o1: Reg::default(),
            n0: Reg::default(),
            n1: Reg::default(),
            h0: Reg::default(),
            h1: Reg::default(),
            sofs: consts((0..l).map(|j| (j * r) as u64)),
            mofs: consts((0..l).map(|j| (2 * j * r) as u64)),
            mofs_hi: consts((0..l).map(|j| (2 * j * r + r) as u64)),
            fofs: consts((0..l).map(|j| (j * (r + wb)) as u64)),
            fofs_w: consts((0..l).map(|j| (j * (r + wb) + r) as u64)),
            pow2: consts((0..r).map(|k| 1u64 << k)),
            wval: consts((0..r).map(|k| k as u64 + 1)),
            k_rmask: c((1 << r) - 1),
            k_levels: c(s.levels as u64),
            k_bt1: c((g.beats - 1) as u64),
            k_b1: c((g.block - 1) as u64),
            k_p1: c((g.pack - 1) as u64),
            k_cend: c((2 * g.block * g.beats - 1) as u64),
            k_mend: c((2 * g.block - 1) as u64),
            k_fend: c((2 * rows * g.beats - 1) as u64),
            k_zero32: c(0),
            k_one32: c(1),
            k_zero8: c(0),
            k_lp: c(g.pack.trailing_zeros() as u64),
            // header and token words
            k_fixed: c(1 + g.block as u64),
            // every pack row's fields, and 31 for the ceiling
            k_fb31: c((rows * g.vector * (r + wb) + 31) as u64),
            k_m_bt: c(range_mask(g.beats)),
            k_m_b: c(range_mask(g.block)),
            k_m_p: c(range_mask(g.pack)),
            k_m_c: c(range_mask(2 * g.block * g.beats)),
            k_m_b2: c(range_mask(2 * g.block)),
            k_m_f: c(range_mask(2 * rows * g.beats)),
            k_m_w: c(range_mask(rows * g.vector * r + 1)),
            k_5: c(5),
            k_rhdr: c((r as u64) << 20),
            k_nfb: c(1 << 25),
            k_32: c(32),
            k_twmask: low_ones(32 * (tw - 1)),
            k_twsh: c((32 * (tw - 1)) as u64),
            k_tw1: c((tw - 1) as u64),
            k_twl: c(tw.trailing_zeros() as u64),
            _lanes: l,
            _levels: lv,
            _raw: r,
            _med: g.median as usize,
        }
    }
}

reg_logic!(EncSide;
    regs [wbank, beat, tok, tp, caddr, maddr, faddr, i1_v, i1_codes, i1_beat, i1_first, i1_lastp,
          i1_lastbeat, i1_end, i1_bank, i1_meta, i1_nf, i1_caddr, i1_maddr, tw_buf, fwd, fwd_d, acc_ovf, acc_nf,
          i2_v, i2_end, i2_bank, i2_min, i2_max, rt_v, rt_e, rt_b, rt_w, acc_w, hs_v, hs_b, hs_w, f0, f1, o0, o1,
          n0, n1, h0, h1, fwr_v, fwr_a, fwr_d];
    masks [beat & k_m_bt, i1_beat & k_m_bt, tok & k_m_b, tp & k_m_p, caddr & k_m_c, i1_caddr & k_m_c,
           maddr & k_m_b2, i1_maddr & k_m_b2, faddr & k_m_f, fwr_a & k_m_f, rt_w & k_m_w, acc_w & k_m_w, hs_w & k_m_w];
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..(self._lanes - 1) {
            self.tr[i].clock.next = self.clock.val();
            self.tr[i].reset.next = self.reset.val();
            self.tr[i].en.next = true;
        }
        for d in 0..self._levels {
            self.t_v[d].clock.next = self.clock.val();
            self.t_v[d].reset.next = self.reset.val();
            self.t_v[d].en.next = true;
            self.t_e[d].clock.next = self.clock.val();
            self.t_e[d].reset.next = self.reset.val();
            self.t_e[d].en.next = true;
            self.t_b[d].clock.next = self.clock.val();
            self.t_b[d].reset.next = self.reset.val();
            self.t_b[d].en.next = true;
        }
        self.code_ram.clock.next = self.clock.val();
        self.meta_ram.clock.next = self.clock.val();
        self.run_ram.clock.next = self.clock.val();
        self.fld_ram.clock.next = self.clock.val();

        // ---- accept: a bank is written only while it holds no block ----
        // (in_ready written once: a glitch here re-woke the core's block,
        // which drives in_valid, forever at one time step under Icarus)
        self.in_ready.next = (!self.f0.q.val() & !self.wbank.q.val()) | (!self.f1.q.val() & self.wbank.q.val());
        self.accept.next = self.in_valid.val() & !self.f0.q.val() & !self.wbank.q.val();
        if self.wbank.q.val() {
            self.accept.next = self.in_valid.val() & !self.f1.q.val();
        }
        self.run_ram.re.next = self.accept.val();
        self.run_ram.raddr.next = self.beat.q.val();
        self.i1_v.en.next = true;
        self.i1_v.d.next = self.accept.val();
        self.i1_codes.en.next = true;
        self.i1_codes.d.next = self.in_codes.val();
        self.i1_beat.en.next = true;
        self.i1_beat.d.next = self.beat.q.val();
        self.i1_first.en.next = true;
        self.i1_first.d.next = self.tp.q.val() == self.k_zero32.val();
        self.i1_lastp.en.next = true;
        self.i1_lastp.d.next = self.tp.q.val() == self.k_p1.val();
        self.i1_lastbeat.en.next = true;
        self.i1_lastbeat.d.next = self.beat.q.val() == self.k_bt1.val();
        self.i1_end.en.next = true;
        self.i1_end.d.next = (self.beat.q.val() == self.k_bt1.val()) & (self.tok.q.val() == self.k_b1.val());
        self.i1_bank.en.next = true;
        self.i1_bank.d.next = self.wbank.q.val();
        self.i1_meta.en.next = true;
        self.i1_meta.d.next = self.in_meta.val();
        self.i1_nf.en.next = true;
        self.i1_nf.d.next = self.in_nf.val();
        self.i1_caddr.en.next = true;
        self.i1_caddr.d.next = self.caddr.q.val();
        self.i1_maddr.en.next = true;
        self.i1_maddr.d.next = self.maddr.q.val();
        if self.accept.val() {
            self.caddr.en.next = true;
            self.caddr.d.next = self.caddr.q.val() + self.k_one32.val();
            if self.caddr.q.val() == self.k_cend.val() {
                self.caddr.d.next = self.k_zero32.val();
            }
            self.beat.en.next = true;
            self.beat.d.next = self.beat.q.val() + self.k_one32.val();
            if self.beat.q.val() == self.k_bt1.val() {
                self.beat.d.next = self.k_zero32.val();
                self.maddr.en.next = true;
                self.maddr.d.next = self.maddr.q.val() + self.k_one32.val();
                if self.maddr.q.val() == self.k_mend.val() {
                    self.maddr.d.next = self.k_zero32.val();
                }
                self.tp.en.next = true;
                self.tp.d.next = self.tp.q.val() + self.k_one32.val();
                if self.tp.q.val() == self.k_p1.val() {
                    self.tp.d.next = self.k_zero32.val();
                }
                self.tok.en.next = true;
                self.tok.d.next = self.tok.q.val() + self.k_one32.val();
                if self.tok.q.val() == self.k_b1.val() {
                    self.tok.d.next = self.k_zero32.val();
                    self.wbank.en.next = true;
                    self.wbank.d.next = !self.wbank.q.val();
                }
            }
        }

        // ---- I1: running extremes, code and token-word writes ----
        self.old.next = self.run_ram.rdata.val();
        if self.fwd.q.val() {
            self.old.next = self.fwd_d.q.val();
        }
        self.nrun.next = bit_cast::<256, 1>(false.into());
        self.nmin_w.next = bit_cast::<WMAX, 1>(false.into());
        self.nmax_w.next = bit_cast::<WMAX, 1>(false.into());
        self.ovf_now.next = false;
        for j in 0..self._lanes {
            self.cc.next = self.i1_codes.q.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.omin.next = self.old.val().get_bits::<8>(self.mofs[j].val().index()) & self.k_rmask.val();
            self.omax.next = self.old.val().get_bits::<8>(self.mofs_hi[j].val().index()) & self.k_rmask.val();
            self.nmin.next = self.cc.val();
            self.nmax.next = self.cc.val();
            if !self.i1_first.q.val() {
                if self.omin.val() < self.cc.val() {
                    self.nmin.next = self.omin.val();
                }
                if self.omax.val() > self.cc.val() {
                    self.nmax.next = self.omax.val();
                }
            }
            if self.cc.val() > self.k_levels.val() {
                self.ovf_now.next = true;
            }
            self.nrun.next = self.nrun.val()
                | (bit_cast::<256, 8>(self.nmin.val()) << self.mofs[j].val())
                | (bit_cast::<256, 8>(self.nmax.val()) << self.mofs_hi[j].val());
            self.nmin_w.next = self.nmin_w.val() | (bit_cast::<WMAX, 8>(self.nmin.val()) << self.sofs[j].val());
            self.nmax_w.next = self.nmax_w.val() | (bit_cast::<WMAX, 8>(self.nmax.val()) << self.sofs[j].val());
        }
        self.run_ram.we.next = self.i1_v.q.val() & !self.i1_lastp.q.val();
        self.run_ram.waddr.next = self.i1_beat.q.val();
        self.run_ram.wdata.next = self.nrun.val();
        // the read issued this cycle would miss this write: forward it
        self.fwd.en.next = true;
        self.fwd.d.next = self.i1_v.q.val() & !self.i1_lastp.q.val() & (self.i1_beat.q.val() == self.beat.q.val());
        self.fwd_d.en.next = true;
        self.fwd_d.d.next = self.nrun.val();
        self.code_ram.we.next = self.i1_v.q.val();
        self.code_ram.waddr.next = self.i1_caddr.q.val();
        self.code_ram.wdata.next = self.i1_codes.q.val();
        // a row of `tw` token words, the first in the low bits, is written
        // with its last word (B is a multiple of tw)
        self.wtok.next = ((self.tw_buf.q.val() >> self.k_32.val()) & self.k_twmask.val())
            | (bit_cast::<WMAX, 32>(self.i1_meta.q.val()) << self.k_twsh.val());
        self.tw_buf.en.next = self.i1_v.q.val() & self.i1_lastbeat.q.val();
        self.tw_buf.d.next = self.wtok.val();
        self.meta_ram.we.next = self.i1_v.q.val()
            & self.i1_lastbeat.q.val()
            & ((self.i1_maddr.q.val() & self.k_tw1.val()) == self.k_tw1.val());
        self.meta_ram.waddr.next = self.i1_maddr.q.val() >> self.k_twl.val();
        self.meta_ram.wdata.next = self.wtok.val();
        if self.i1_v.q.val() {
            self.acc_ovf.en.next = true;
            self.acc_ovf.d.next = self.acc_ovf.q.val() | self.ovf_now.val();
            self.acc_nf.en.next = true;
            self.acc_nf.d.next = self.acc_nf.q.val() | self.i1_nf.q.val();
            if self.i1_end.q.val() {
                self.acc_ovf.d.next = false;
                self.acc_nf.d.next = false;
                if self.i1_bank.q.val() {
                    self.o1.en.next = true;
                    self.o1.d.next = self.acc_ovf.q.val() | self.ovf_now.val();
                    self.n1.en.next = true;
                    self.n1.d.next = self.acc_nf.q.val() | self.i1_nf.q.val();
                } else {
                    self.o0.en.next = true;
                    self.o0.d.next = self.acc_ovf.q.val() | self.ovf_now.val();
                    self.n0.en.next = true;
                    self.n0.d.next = self.acc_nf.q.val() | self.i1_nf.q.val();
                }
            }
        }
        self.i2_v.en.next = true;
        self.i2_v.d.next = self.i1_v.q.val() & self.i1_lastp.q.val();
        self.i2_end.en.next = true;
        self.i2_end.d.next = self.i1_end.q.val();
        self.i2_bank.en.next = true;
        self.i2_bank.d.next = self.i1_bank.q.val();
        self.i2_min.en.next = true;
        self.i2_min.d.next = self.nmin_w.val();
        self.i2_max.en.next = true;
        self.i2_max.d.next = self.nmax_w.val();

        // ---- I2: a pack row's {width, min} and the widths into the tree ----
        self.fw.next = bit_cast::<WMAX, 1>(false.into());
        for ln in self._lanes..(self._lanes + 1) {
        for j in 0..self._lanes {
            self.nmin.next = self.i2_min.q.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.dd.next = (self.i2_max.q.val().get_bits::<8>(self.sofs[j].val().index()) - self.nmin.val()) & self.k_rmask.val();
            self.ww.next = self.k_zero8.val();
            for k in 0..self._raw {
                if self.dd.val() >= self.pow2[k].val() {
                    self.ww.next = self.wval[k].val();
                }
            }
            self.fw.next = self.fw.val()
                | (bit_cast::<WMAX, 8>(self.nmin.val()) << self.fofs[j].val())
                | (bit_cast::<WMAX, 8>(self.ww.val()) << self.fofs_w[j].val());
            self.nd[ln - 1 + j].next = self.k_zero32.val();
            if self.i2_v.q.val() {
                self.nd[ln - 1 + j].next = bit_cast::<32, 8>(self.ww.val());
            }
        }
        }
        self.fwr_v.en.next = true;
        self.fwr_a.en.next = true;
        self.fwr_d.en.next = true;
        self.fwr_v.d.next = self.i2_v.q.val();
        self.fwr_a.d.next = self.faddr.q.val();
        self.fwr_d.d.next = self.fw.val();
        for i in 0..self._med {
            self.fwr_v.d.next = self.med_we[i].val();
            self.fwr_a.d.next = self.med_waddr[i].val();
            self.fwr_d.d.next = self.med_wdata[i].val();
        }
        self.fld_ram.we.next = self.fwr_v.q.val();
        self.fld_ram.waddr.next = self.fwr_a.q.val();
        self.fld_ram.wdata.next = self.fwr_d.q.val();
        if self.i2_v.q.val() {
            self.faddr.en.next = true;
            self.faddr.d.next = self.faddr.q.val() + self.k_one32.val();
            if self.faddr.q.val() == self.k_fend.val() {
                self.faddr.d.next = self.k_zero32.val();
            }
        }
        for i in 0..(self._lanes - 1) {
            self.tr[i].d.next = self.nd[2 * i + 1].val() + self.nd[2 * i + 2].val();
            self.nd[i].next = self.tr[i].q.val();
        }
        self.sv[0].next = self.i2_v.q.val();
        self.se[0].next = self.i2_end.q.val();
        self.sb[0].next = self.i2_bank.q.val();
        for d in 0..self._levels {
            self.t_v[d].d.next = self.sv[d].val();
            self.t_e[d].d.next = self.se[d].val();
            self.t_b[d].d.next = self.sb[d].val();
            self.sv[d + 1].next = self.t_v[d].q.val();
            self.se[d + 1].next = self.t_e[d].q.val();
            self.sb[d + 1].next = self.t_b[d].q.val();
        }
        for lv in self._levels..(self._levels + 1) {
            self.rt_v.en.next = true;
            self.rt_v.d.next = self.sv[lv].val();
            self.rt_e.en.next = true;
            self.rt_e.d.next = self.se[lv].val();
            self.rt_b.en.next = true;
            self.rt_b.d.next = self.sb[lv].val();
        }
        self.rt_w.en.next = true;
        self.rt_w.d.next = self.nd[0].val();

        // ---- after the root: the widths' sum; a cycle later the header ----
        self.wsum.next = self.acc_w.q.val() + self.rt_w.q.val();
        if self.rt_v.q.val() {
            self.acc_w.en.next = true;
            self.acc_w.d.next = self.wsum.val();
            if self.rt_e.q.val() {
                self.acc_w.d.next = self.k_zero32.val();
            }
        }
        self.hs_v.en.next = true;
        self.hs_v.d.next = self.rt_v.q.val() & self.rt_e.q.val();
        self.hs_b.en.next = true;
        self.hs_b.d.next = self.rt_b.q.val();
        self.hs_w.en.next = true;
        self.hs_w.d.next = self.wsum.val();
        self.hdr.next = (self.k_fixed.val() + ((self.k_fb31.val() + (self.hs_w.q.val() << self.k_lp.val())) >> self.k_5.val()))
            | self.k_rhdr.val();
        if self.hs_v.q.val() {
            if self.hs_b.q.val() {
                self.f1.en.next = true;
                self.f1.d.next = true;
                self.h1.en.next = true;
                self.h1.d.next = self.hdr.val();
                if self.n1.q.val() {
                    self.h1.d.next = self.hdr.val() | self.k_nfb.val();
                }
            } else {
                self.f0.en.next = true;
                self.f0.d.next = true;
                self.h0.en.next = true;
                self.h0.d.next = self.hdr.val();
                if self.n0.q.val() {
                    self.h0.d.next = self.hdr.val() | self.k_nfb.val();
                }
            }
        }
        if self.rel.val() {
            if self.rel_bank.val() {
                self.f1.en.next = true;
                self.f1.d.next = false;
            } else {
                self.f0.en.next = true;
                self.f0.d.next = false;
            }
        }
        self.filled0.next = self.f0.q.val();
        self.filled1.next = self.f1.q.val();
        self.ovf0.next = self.o0.q.val();
        self.ovf1.next = self.o1.q.val();
        self.nf0.next = self.n0.q.val();
        self.nf1.next = self.n1.q.val();
        self.hdr0.next = self.h0.q.val();
        self.hdr1.next = self.h1.q.val();

        // ---- drain reads ----
        self.code_ram.re.next = self.code_re.val();
        self.code_ram.raddr.next = self.code_raddr.val();
        self.code_rdata.next = self.code_ram.rdata.val();
        self.meta_ram.re.next = self.meta_re.val();
        self.meta_ram.raddr.next = self.meta_raddr.val();
        self.meta_rdata.next = self.meta_ram.rdata.val();
        self.fld_ram.re.next = self.fld_re.val();
        self.fld_ram.raddr.next = self.fld_raddr.val();
        self.fld_rdata.next = self.fld_ram.rdata.val();
    }
);

/// Output items (stage X1's kind).
const K_HDR: u64 = 0;
const K_META: u64 = 1;
const K_FLD: u64 = 2;
const K_PAY: u64 = 3;
const K_STAT: u64 = 4;
/// A permutation item (median repacking).
const K_PERM: u64 = 5;
/// A pack row's last fields beat with its first payload item (`merge`).
const K_FP: u64 = 6;

#[derive(LogicBlock)]
pub struct PackKvEncoder {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: both banks empty, the next beats start a block
    pub reset: Signal<In, Bit>,
    /// K code beat valid
    pub k_valid: Signal<In, Bit>,
    /// K beat accepted when k_valid and k_ready (from registers only: low while the K bank being filled still holds a block)
    pub k_ready: Signal<Out, Bit>,
    /// K codes, lane l at [rK*l+rK-1:rK*l]: channels k*lanes .. k*lanes+lanes-1 of the token at its beat k
    pub k_codes: Signal<In, Bits<WMAX>>,
    /// the K token's metadata word (sampled on its last beat)
    pub k_meta: Signal<In, Bits<32>>,
    /// the K token's nonfinite flag (ORed over its beats)
    pub k_nonfinite: Signal<In, Bit>,
    /// V code beat valid
    pub v_valid: Signal<In, Bit>,
    /// V beat accepted when v_valid and v_ready
    pub v_ready: Signal<Out, Bit>,
    /// V codes, lane l at [rV*l+rV-1:rV*l]
    pub v_codes: Signal<In, Bits<WMAX>>,
    /// the V token's metadata word (sampled on its last beat)
    pub v_meta: Signal<In, Bits<32>>,
    /// the V token's nonfinite flag (ORed over its beats)
    pub v_nonfinite: Signal<In, Bit>,
    /// word beat valid (a register)
    pub out_valid: Signal<Out, Bit>,
    /// beat taken when out_valid and out_ready
    pub out_ready: Signal<In, Bit>,
    /// stream words, word i at [32i+31:32i]; words out_count.. are not part of the stream
    pub out_words: Signal<Out, Bits<WIN>>,
    /// words in the beat; 0 on a refused block's status beat, or on a last beat whose final item added no bits
    pub out_count: Signal<Out, Bits<8>>,
    /// the beat ends a block (K, then V): its last word, or its status beat
    pub out_last: Signal<Out, Bit>,
    /// with out_last: the block pair was refused (a code above N), no word of it was sent
    pub out_overflow: Signal<Out, Bit>,
    /// with out_last: the block's nonfinite flag (header bit 25)
    pub out_nonfinite: Signal<Out, Bit>,
    ks: EncSide,
    vs: EncSide,
    adv: Signal<Local, Bit>,
    ready: Signal<Local, Bit>,
    refused: Signal<Local, Bit>,
    // ---- tile reader R ----
    r_bank: Reg<Bit>,
    r_side: Reg<Bit>,
    r_rho: Reg<Bits<32>>,
    r_k: Reg<Bits<32>>,
    r_t: Reg<Bits<32>>,
    r_row: Reg<Bits<32>>,
    r_base: Reg<Bits<32>>,
    r_addr: Reg<Bits<32>>,
    r_ready: Signal<Local, Bit>,
    r_refused: Signal<Local, Bit>,
    r_done0: Reg<Bit>,
    r_done1: Reg<Bit>,
    r_issue: Signal<Local, Bit>,
    lbusy: Reg<Bit>,
    lfull: Reg<Bit>,
    lv: Reg<Bit>,
    lt: Reg<Bits<32>>,
    lside: Reg<Bit>,
    lraw: Signal<Local, Bits<WMAX>>,
    lw: Signal<Local, Bits<WMAX>>,
    land_last: Signal<Local, Bit>,
    xfer: Signal<Local, Bit>,
    efree: Signal<Local, Bit>,
    l: Vec<Reg<Bits<WMAX>>>,
    lsrc: Vec<Signal<Local, Bits<WMAX>>>,
    tmin: Reg<Bits<WMAX>>,
    tmax: Reg<Bits<WMAX>>,
    nmin: Signal<Local, Bits<WMAX>>,
    nmax: Signal<Local, Bits<WMAX>>,
    tmsk: Signal<Local, Bits<WMAX>>,
    s8: Signal<Local, Bits<8>>,
    a8: Signal<Local, Bits<8>>,
    b8: Signal<Local, Bits<8>>,
    d8: Signal<Local, Bits<8>>,
    ev: Signal<Local, Bits<WMAX>>,
    em: Signal<Local, Bits<WMAX>>,
    // ---- E: a tile in payload order, beat e at e_v[e] ----
    e_v: Vec<Reg<Bits<WMAX>>>,
    e_m: Vec<Reg<Bits<WMAX>>>,
    e_full: Reg<Bit>,
    e_beat: Reg<Bits<32>>,
    e_take: Signal<Local, Bit>,
    // a queue row of two tiles (`P = 2`, four beats a row; else none): the
    // first tile waits here for the second
    e_half: Vec<Reg<Bit>>,
    e_hv: Vec<Reg<Bits<WMAX>>>,
    e_hm: Vec<Reg<Bits<WMAX>>>,
    // ---- the payload queue: E's beats, pay_beats a row, read by X ----
    pay_ram: DpRam<32, WMAX>,
    pk_ram: DpRam<32, WMAX>,
    f_wp: Reg<Bits<32>>,
    f_rp: Reg<Bits<32>>,
    f_cnt: Reg<Bits<32>>,
    f_rd: Signal<Local, Bit>,
    pw_v: Signal<Local, Bits<WMAX>>,
    pw_m: Signal<Local, Bits<WMAX>>,
    // ---- output sequencer X ----
    x_bank: Reg<Bit>,
    x_side: Reg<Bit>,
    x_state: Reg<Bits<8>>,
    x_i: Reg<Bits<32>>,
    x_rho: Reg<Bits<32>>,
    x_maddr: Reg<Bits<32>>,
    x_faddr: Reg<Bits<32>>,
    x_issue: Signal<Local, Bit>,
    x_rowend: Signal<Local, Bit>,
    x_nf: Signal<Local, Bit>,
    // the pair's last fields beat is out: its banks go back to the fill as
    // soon as R has read them (R done), not after the last payload item
    x_relp: Reg<Bit>,
    // the block's nonfinite flag, taken at its header: its bank may be
    // refilled before the last item
    x_nfl: Reg<Bit>,
    x_rdone: Signal<Local, Bit>,
    x_hdr: Signal<Local, Bits<32>>,
    x1_v: Reg<Bit>,
    x1_kind: Reg<Bits<8>>,
    x1_side: Reg<Bit>,
    x1_flags: Reg<Bits<4>>,
    x1_data: Reg<Bits<WMAX>>,
    x1_keep: Reg<Bits<WMAX>>,
    chunk: Signal<Local, Bits<WMAX>>,
    keep: Signal<Local, Bits<WMAX>>,
    flags: Signal<Local, Bits<4>>,
    // ---- shifter, sideband along it, accumulator ----
    zr: ZeroRemove<1>,
    sbf: Vec<Reg<Bits<4>>>,
    ob: Signal<Local, Bits<1>>,
    cb: Signal<Local, Bits<WIN>>,
    win: Signal<Local, Bits<WIN>>,
    wsh: Signal<Local, Bits<WIN>>,
    nbits: Signal<Local, Bits<8>>,
    zf: Signal<Local, Bits<4>>,
    res: Reg<Bits<32>>,
    rc: Reg<Bits<8>>,
    o_v: Reg<Bit>,
    o_words: Reg<Bits<WIN>>,
    o_count: Reg<Bits<8>>,
    o_last: Reg<Bit>,
    o_ovf: Reg<Bit>,
    o_nf: Reg<Bit>,
    // ---- constants ----
    sofs_k: Vec<Constant<Bits<32>>>,
    sofs_v: Vec<Constant<Bits<32>>>,
    rofs: Vec<Constant<Bits<32>>>,
    tconst: Vec<Constant<Bits<32>>>,
    bix: Vec<Constant<Bits<32>>>,
    smear: Vec<Constant<Bits<8>>>,
    k_rmask_k: Constant<Bits<8>>,
    k_rmask_v: Constant<Bits<8>>,
    k_rmask: Constant<Bits<8>>,
    k_fkeep_k: Constant<Bits<WMAX>>,
    k_fkeep_v: Constant<Bits<WMAX>>,
    k_wkeep: Constant<Bits<WMAX>>,
    k_tkeep: Constant<Bits<WMAX>>,
    k_zero_w: Constant<Bits<WMAX>>,
    k_bt: Constant<Bits<32>>,
    k_bt1: Constant<Bits<32>>,
    k_p1: Constant<Bits<32>>,
    k_pbt: Constant<Bits<32>>,
    k_rows1: Constant<Bits<32>>,
    k_ti1: Constant<Bits<32>>,
    k_bbt: Constant<Bits<32>>,
    k_ti: Constant<Bits<32>>,
    k_rbt: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_hdr: Constant<Bits<8>>,
    k_smeta: Constant<Bits<8>>,
    k_fld: Constant<Bits<8>>,
    k_pay: Constant<Bits<8>>,
    k_stat: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_31: Constant<Bits<8>>,
    k_5: Constant<Bits<8>>,
    k_m32: Constant<Bits<8>>,
    k_end: Constant<Bits<4>>,
    k_ovf: Constant<Bits<4>>,
    k_nf: Constant<Bits<4>>,
    k_zero4: Constant<Bits<4>>,
    k_m_bt: Constant<Bits<32>>,
    k_m_p: Constant<Bits<32>>,
    k_m_rows: Constant<Bits<32>>,
    k_m_c: Constant<Bits<32>>,
    k_m_b2: Constant<Bits<32>>,
    k_m_f: Constant<Bits<32>>,
    k_m_xi: Constant<Bits<32>>,
    k_pd: Constant<Bits<32>>,
    k_plast: Constant<Bits<32>>,
    k_xpay1: Constant<Bits<32>>,
    /// Beat `q >= 1` of a payload item starts at bit `q lanes r_max` (entry `q - 1`).
    k_lr: Vec<Constant<Bits<32>>>,
    /// Where a row is two tiles: the second tile's first bit, `P lanes r_max`.
    k_lh: Vec<Constant<Bits<32>>>,
    // ---- merge only (length 1, else 0): the merged item's kind, and where
    // its payload starts, after the side's fields beat ----
    k_fp: Vec<Constant<Bits<8>>>,
    k_fofs_k: Vec<Constant<Bits<32>>>,
    k_fofs_v: Vec<Constant<Bits<32>>>,
    k_m_pd: Constant<Bits<32>>,
    k_m_pc: Constant<Bits<32>>,
    // ---- repack = median only (length 1, else 0) ----
    md: Vec<MedSort>,
    mf: Vec<MedFields>,
    k_perm: Vec<Constant<Bits<8>>>,
    _lanes: usize,
    _p: usize,
    _nsh: usize,
    _ls: usize,
    _med: usize,
    _pe: usize,
    /// 1 where a queue row is two tiles, else 0.
    _pj: usize,
    /// `merge` and a pack row's payload is one item (`_fm1`) or more (`_fmn`).
    _fm1: usize,
    _fmn: usize,
}

impl PackKvEncoder {
    /// `module`: the emitted module's name, which prefixes the memories'.
    pub fn new(g: &EncGeometry, module: &str) -> Self {
        let (l, p, rm) = (g.lanes, g.pack, g.rmax);
        let ls = ZeroRemove::<1>::latency(g.nsh, SH_PIPE);
        let pj = (g.pay_beats > p) as usize;
        let fkeep = |s: &SideGeom| low_ones(l * (s.raw + s.wb));
        let wkeep = low_ones(32);
        PackKvEncoder {
            clock: Default::default(),
            reset: Default::default(),
            k_valid: Default::default(),
            k_ready: Default::default(),
            k_codes: Default::default(),
            k_meta: Default::default(),
            k_nonfinite: Default::default(),
            v_valid: Default::default(),
            v_ready: Default::default(),
            v_codes: Default::default(),
            v_meta: Default::default(),
            v_nonfinite: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_words: Default::default(),
            out_count: Default::default(),
            out_last: Default::default(),
            out_overflow: Default::default(),
            out_nonfinite: Default::default(),
            ks: EncSide::new(g, false, module),
            vs: EncSide::new(g, true, module),
            adv: Default::default(),
            ready: Default::default(),
            refused: Default::default(),
            r_bank: Reg::default(),
            r_side: Reg::default(),
            r_rho: Reg::default(),
            r_k: Reg::default(),
            r_t: Reg::default(),
            r_row: Reg::default(),
            r_base: Reg::default(),
            r_addr: Reg::default(),
            r_ready: Default::default(),
            r_refused: Default::default(),
            r_done0: Reg::default(),
            r_done1: Reg::default(),
            r_issue: Default::default(),
            lbusy: Reg::default(),
            lfull: Reg::default(),
            lv: Reg::default(),
            lt: Reg::default(),
            lside: Reg::default(),
            lraw: Default::default(),
            lw: Default::default(),
            land_last: Default::default(),
            xfer: Default::default(),
            efree: Default::default(),
            l: regs(p),
            lsrc: sigs(p),
            tmin: Reg::default(),
            tmax: Reg::default(),
            nmin: Default::default(),
            nmax: Default::default(),
            tmsk: Default::default(),
            s8: Default::default(),
            a8: Default::default(),
            b8: Default::default(),
            d8: Default::default(),
            ev: Default::default(),
            em: Default::default(),
            e_v: regs(p),
            e_m: regs(p),
            e_full: Reg::default(),
            e_beat: Reg::default(),
            e_take: Default::default(),
            e_half: regs(pj),
            e_hv: regs(pj),
            e_hm: regs(pj),
            pay_ram: {
                let i = g.pay_memory(module, false);
                DpRam::new(&i.module, &i.name, i.depth, i.width)
            },
            pk_ram: {
                let i = g.pay_memory(module, true);
                DpRam::new(&i.module, &i.name, i.depth, i.width)
            },
            f_wp: Reg::default(),
            f_rp: Reg::default(),
            f_cnt: Reg::default(),
            f_rd: Default::default(),
            pw_v: Default::default(),
            pw_m: Default::default(),
            x_bank: Reg::default(),
            x_side: Reg::default(),
            x_state: Reg::default(),
            x_i: Reg::default(),
            x_rho: Reg::default(),
            x_maddr: Reg::default(),
            x_faddr: Reg::default(),
            x_issue: Default::default(),
            x_rowend: Default::default(),
            x_nf: Default::default(),
            x_relp: Reg::default(),
            x_nfl: Reg::default(),
            x_rdone: Default::default(),
            x_hdr: Default::default(),
            x1_v: Reg::default(),
            x1_kind: Reg::default(),
            x1_side: Reg::default(),
            x1_flags: Reg::default(),
            x1_data: Reg::default(),
            x1_keep: Reg::default(),
            chunk: Default::default(),
            keep: Default::default(),
            flags: Default::default(),
            zr: ZeroRemove::new(g.nsh, SH_PIPE),
            sbf: regs(ls),
            ob: Default::default(),
            cb: Default::default(),
            win: Default::default(),
            wsh: Default::default(),
            nbits: Default::default(),
            zf: Default::default(),
            res: Reg::default(),
            rc: Reg::default(),
            o_v: Reg::default(),
            o_words: Reg::default(),
            o_count: Reg::default(),
            o_last: Reg::default(),
            o_ovf: Reg::default(),
            o_nf: Reg::default(),
            sofs_k: consts((0..l).map(|j| (j * g.k.raw) as u64)),
            sofs_v: consts((0..l).map(|j| (j * g.v.raw) as u64)),
            rofs: consts((0..l).map(|j| (j * rm) as u64)),
            tconst: consts((0..p).map(|t| t as u64)),
            bix: consts((0..g.nsh).map(|j| j as u64)),
            smear: consts((0..8).map(|k| k as u64)),
            k_rmask_k: c((1 << g.k.raw) - 1),
            k_rmask_v: c((1 << g.v.raw) - 1),
            k_rmask: c((1 << rm) - 1),
            k_fkeep_k: fkeep(&g.k),
            k_fkeep_v: fkeep(&g.v),
            k_wkeep: wkeep,
            k_tkeep: low_ones(32 * g.tok_words()),
            k_zero_w: Constant::new(Bits::<WMAX>::default()),
            k_bt: c(g.beats as u64),
            k_bt1: c((g.beats - 1) as u64),
            k_p1: c((p - 1) as u64),
            k_pbt: c((p * g.beats) as u64),
            k_rows1: c((g.block / p - 1) as u64),
            // token-word items a block, B / tw
            k_ti1: c((g.block / g.tok_words() - 1) as u64),
            k_bbt: c((g.block * g.beats) as u64),
            k_ti: c((g.block / g.tok_words()) as u64),
            k_rbt: c((g.block / p * g.beats) as u64),
            k_zero32: c(0),
            k_one32: c(1),
            k_hdr: c(K_HDR),
            k_smeta: c(K_META),
            k_fld: c(K_FLD),
            k_pay: c(K_PAY),
            k_stat: c(K_STAT),
            k_zero8: c(0),
            k_31: c(31),
            k_5: c(5),
            k_m32: c(0xE0),
            k_end: c(1),
            k_ovf: c(2),
            k_nf: c(4),
            k_zero4: c(0),
            k_m_bt: c(range_mask(g.beats)),
            k_m_p: c(range_mask(p)),
            k_m_rows: c(range_mask(g.block / p)),
            k_m_c: c(range_mask(2 * g.block * g.beats)),
            k_m_b2: c(range_mask(2 * g.block)),
            k_m_f: c(range_mask(2 * (g.block / p) * g.beats)),
            k_m_xi: c(range_mask(g.block.max(p * g.beats))),
            k_pd: c(g.pay_depth() as u64),
            k_plast: c((p / g.e_beats() - 1) as u64),
            k_xpay1: c((p * g.beats / g.pay_beats - 1) as u64),
            k_lr: (1..g.e_beats()).map(|q| c((q * l * rm) as u64)).collect(),
            k_lh: (0..pj).map(|_| c((p * l * rm) as u64)).collect(),
            k_fp: consts((0..g.merge as usize).map(|_| K_FP)),
            k_fofs_k: consts((0..g.merge as usize).map(|_| (l * (g.k.raw + g.k.wb)) as u64)),
            k_fofs_v: consts((0..g.merge as usize).map(|_| (l * (g.v.raw + g.v.wb)) as u64)),
            k_m_pd: c(range_mask(g.pay_depth())),
            k_m_pc: c(range_mask(g.pay_depth() + 1)),
            md: (0..g.median as usize).map(|_| MedSort::new(g, module)).collect(),
            mf: (0..g.median as usize).map(|_| MedFields::new(g, module)).collect(),
            k_perm: consts((0..g.median as usize).map(|_| K_PERM)),
            _lanes: l,
            _p: p,
            _nsh: g.nsh,
            _ls: ls,
            _med: g.median as usize,
            _pe: g.e_beats(),
            _pj: pj,
            _fm1: (g.merge && p * g.beats == g.pay_beats) as usize,
            _fmn: (g.merge && p * g.beats > g.pay_beats) as usize,
        }
    }
}

reg_logic!(PackKvEncoder;
    regs [r_bank, r_side, r_done0, r_done1, r_rho, r_k, r_t, r_row, r_base, r_addr, lbusy, lfull, lv, lt, lside, tmin, tmax,
          e_full, e_beat, f_wp, f_rp, f_cnt, x_bank, x_side, x_state, x_i, x_rho, x_maddr, x_faddr, x_relp, x_nfl, x1_v, x1_kind, x1_side,
          x1_flags, x1_data, x1_keep, res, rc, o_v, o_words, o_count, o_last, o_ovf, o_nf];
    masks [r_rho & k_m_rows, r_k & k_m_bt, r_t & k_m_p, lt & k_m_p, e_beat & k_m_p, r_row & k_m_c, r_base & k_m_c,
           r_addr & k_m_c, x_i & k_m_xi, x_rho & k_m_rows, x_maddr & k_m_b2, x_faddr & k_m_f,
           f_wp & k_m_pd, f_rp & k_m_pd, f_cnt & k_m_pc];
    #[hdl_gen]
    fn update(&mut self) {
        for t in 0..self._p {
            self.l[t].clock.next = self.clock.val();
            self.l[t].reset.next = self.reset.val();
            self.l[t].en.next = false;
            self.l[t].d.next = self.l[t].q.val();
            self.e_v[t].clock.next = self.clock.val();
            self.e_v[t].reset.next = self.reset.val();
            self.e_v[t].en.next = false;
            self.e_v[t].d.next = self.e_v[t].q.val();
            self.e_m[t].clock.next = self.clock.val();
            self.e_m[t].reset.next = self.reset.val();
            self.e_m[t].en.next = false;
            self.e_m[t].d.next = self.e_m[t].q.val();
        }
        self.adv.next = !self.o_v.q.val() | self.out_ready.val();
        self.pay_ram.clock.next = self.clock.val();
        self.pk_ram.clock.next = self.clock.val();
        for i in 0..self._ls {
            self.sbf[i].clock.next = self.clock.val();
            self.sbf[i].reset.next = self.reset.val();
            self.sbf[i].en.next = self.adv.val();
        }
        self.ks.clock.next = self.clock.val();
        self.ks.reset.next = self.reset.val();
        self.vs.clock.next = self.clock.val();
        self.vs.reset.next = self.reset.val();
        self.ks.in_valid.next = self.k_valid.val();
        self.ks.in_codes.next = self.k_codes.val();
        self.ks.in_meta.next = self.k_meta.val();
        self.ks.in_nf.next = self.k_nonfinite.val();
        self.k_ready.next = self.ks.in_ready.val();
        self.vs.in_valid.next = self.v_valid.val();
        self.vs.in_codes.next = self.v_codes.val();
        self.vs.in_meta.next = self.v_meta.val();
        self.vs.in_nf.next = self.v_nonfinite.val();
        self.v_ready.next = self.vs.in_ready.val();
        for i in 0..self._med {
            self.md[i].clock.next = self.clock.val();
            self.md[i].reset.next = self.reset.val();
            self.md[i].v_acc.next = self.v_valid.val() & self.vs.in_ready.val();
            self.md[i].v_codes.next = self.v_codes.val();
            self.mf[i].clock.next = self.clock.val();
            self.mf[i].reset.next = self.reset.val();
            self.mf[i].k_acc.next = self.k_valid.val() & self.ks.in_ready.val();
            self.mf[i].k_codes.next = self.k_codes.val();
            self.mf[i].v_acc.next = self.v_valid.val() & self.vs.in_ready.val();
            self.mf[i].v_codes.next = self.v_codes.val();
            self.mf[i].go0.next = self.ks.filled0.val() & self.vs.filled0.val() & self.md[i].sorted0.val();
            self.mf[i].go1.next = self.ks.filled1.val() & self.vs.filled1.val() & self.md[i].sorted1.val();
            self.md[i].q_bank.next = self.mf[i].q_bank.val();
            self.md[i].q_rho.next = self.mf[i].q_rho.val();
            self.md[i].q_t.next = self.mf[i].q_t.val();
            self.md[i].q_k.next = self.mf[i].q_k.val();
            self.mf[i].q_addr.next = self.md[i].q_addr.val();
        }

        // ---- R: tiles of the pair in bank r_bank, K then V ----
        self.r_ready.next = self.ks.filled0.val() & self.vs.filled0.val();
        self.r_refused.next = self.ks.ovf0.val() | self.vs.ovf0.val();
        if self.r_bank.q.val() {
            self.r_ready.next = self.ks.filled1.val() & self.vs.filled1.val();
            self.r_refused.next = self.ks.ovf1.val() | self.vs.ovf1.val();
        }
        for i in 0..self._med {
            // a block is read once sorted and its fields pass is done
            if self.r_bank.q.val() {
                self.r_ready.next = self.r_ready.val() & self.mf[i].done1.val();
            } else {
                self.r_ready.next = self.r_ready.val() & self.mf[i].done0.val();
            }
        }
        // the queue lets R run a pair or more ahead of X: a bank R has read
        // stays done until X releases it, or R would read it again
        if self.r_bank.q.val() {
            self.r_ready.next = self.r_ready.val() & !self.r_done1.q.val();
        } else {
            self.r_ready.next = self.r_ready.val() & !self.r_done0.q.val();
        }
        // landing: the word read last cycle, to normalised r_max slots
        self.lraw.next = self.ks.code_rdata.val();
        if self.lside.q.val() {
            self.lraw.next = self.vs.code_rdata.val();
        }
        self.lw.next = self.k_zero_w.val();
        for j in 0..self._lanes {
            self.s8.next = self.lraw.val().get_bits::<8>(self.sofs_k[j].val().index()) & self.k_rmask_k.val();
            if self.lside.q.val() {
                self.s8.next = self.lraw.val().get_bits::<8>(self.sofs_v[j].val().index()) & self.k_rmask_v.val();
            }
            self.lw.next = self.lw.val() | (bit_cast::<WMAX, 8>(self.s8.val()) << self.rofs[j].val());
        }
        self.land_last.next = self.lv.q.val() & (self.lt.q.val() == self.k_p1.val());
        // the tile's extremes including the landing word
        self.nmin.next = self.tmin.q.val();
        self.nmax.next = self.tmax.q.val();
        if self.lv.q.val() {
            self.nmin.next = self.k_zero_w.val();
            self.nmax.next = self.k_zero_w.val();
            for j in 0..self._lanes {
                self.s8.next = self.lw.val().get_bits::<8>(self.rofs[j].val().index()) & self.k_rmask.val();
                self.a8.next = self.s8.val();
                self.b8.next = self.s8.val();
                if self.lt.q.val() != self.k_zero32.val() {
                    self.d8.next = self.tmin.q.val().get_bits::<8>(self.rofs[j].val().index()) & self.k_rmask.val();
                    if self.d8.val() < self.s8.val() {
                        self.a8.next = self.d8.val();
                    }
                    self.d8.next = self.tmax.q.val().get_bits::<8>(self.rofs[j].val().index()) & self.k_rmask.val();
                    if self.d8.val() > self.s8.val() {
                        self.b8.next = self.d8.val();
                    }
                }
                self.nmin.next = self.nmin.val() | (bit_cast::<WMAX, 8>(self.a8.val()) << self.rofs[j].val());
                self.nmax.next = self.nmax.val() | (bit_cast::<WMAX, 8>(self.b8.val()) << self.rofs[j].val());
            }
            self.tmin.en.next = true;
            self.tmin.d.next = self.nmin.val();
            self.tmax.en.next = true;
            self.tmax.d.next = self.nmax.val();
            for t in 0..self._p {
                if self.lt.q.val() == self.tconst[t].val() {
                    self.l[t].en.next = true;
                    self.l[t].d.next = self.lw.val();
                }
            }
        }
        // each channel's width mask: every bit below the range's leading one
        self.tmsk.next = self.k_zero_w.val();
        for j in 0..self._lanes {
            self.d8.next = (self.nmax.val().get_bits::<8>(self.rofs[j].val().index())
                - self.nmin.val().get_bits::<8>(self.rofs[j].val().index()))
                & self.k_rmask.val();
            self.a8.next = self.k_zero8.val();
            for k in 0..8 {
                self.a8.next = self.a8.val() | (self.d8.val() >> self.smear[k].val());
            }
            self.tmsk.next = self.tmsk.val() | (bit_cast::<WMAX, 8>(self.a8.val()) << self.rofs[j].val());
        }
        for t in 0..self._p {
            self.lsrc[t].next = self.l[t].q.val();
        }
        for pl in (self._p - 1)..self._p {
            if self.land_last.val() {
                self.lsrc[pl].next = self.lw.val();
            }
        }

        // ---- X: the output order; one item per advance ----
        self.ready.next = self.ks.filled0.val() & self.vs.filled0.val();
        self.refused.next = self.ks.ovf0.val() | self.vs.ovf0.val();
        self.x_hdr.next = self.ks.hdr0.val();
        self.x_nf.next = self.ks.nf0.val();
        if self.x_side.q.val() {
            self.x_hdr.next = self.vs.hdr0.val();
            self.x_nf.next = self.vs.nf0.val();
        }
        if self.x_bank.q.val() {
            self.ready.next = self.ks.filled1.val() & self.vs.filled1.val();
            self.refused.next = self.ks.ovf1.val() | self.vs.ovf1.val();
            self.x_hdr.next = self.ks.hdr1.val();
            self.x_nf.next = self.ks.nf1.val();
            if self.x_side.q.val() {
                self.x_hdr.next = self.vs.hdr1.val();
                self.x_nf.next = self.vs.nf1.val();
            }
        }
        for i in 0..self._med {
            if self.x_bank.q.val() {
                self.ready.next = self.ready.val() & self.mf[i].done1.val();
            } else {
                self.ready.next = self.ready.val() & self.mf[i].done0.val();
            }
            self.mf[i].x_bank.next = self.x_bank.q.val();
            self.mf[i].x_side.next = self.x_side.q.val();
            self.mf[i].x_nf.next = self.x_nf.val();
            self.x_hdr.next = self.mf[i].x_hdr.val();
        }
        // a block's bank may be refilled once its fields are out, so only a
        // header waits for its bank
        self.x_issue.next = self.adv.val() & (self.ready.val() | (self.x_state.q.val() != self.k_hdr.val()));
        if (self.x_state.q.val() == self.k_pay.val()) & (self.f_cnt.q.val() == self.k_zero32.val()) {
            self.x_issue.next = false;
        }
        self.f_rd.next = self.x_issue.val() & (self.x_state.q.val() == self.k_pay.val());
        // the issued item ends its pack row (set below, acted on after both
        // kinds of row-ending item)
        self.x_rowend.next = false;
        for _m in 0..(self._fm1 + self._fmn) {
            // the merged item waits for its payload row, and at the block's
            // end (one payload item a row) for R's done flag, as it releases
            if (self.x_state.q.val() == self.k_fld.val()) & (self.x_i.q.val() == self.k_bt1.val()) {
                if self.f_cnt.q.val() == self.k_zero32.val() {
                    self.x_issue.next = false;
                }
                self.f_rd.next = self.x_issue.val();
            }
        }
        for _m in 0..self._fm1 {
            if (self.x_state.q.val() == self.k_fld.val()) & (self.x_i.q.val() == self.k_bt1.val())
                & (self.x_rho.q.val() == self.k_rows1.val()) & self.x_side.q.val() {
                if (self.x_bank.q.val() & !self.r_done1.q.val()) | (!self.x_bank.q.val() & !self.r_done0.q.val()) {
                    self.x_issue.next = false;
                    self.f_rd.next = false;
                }
            }
        }
        // E drains into the queue whenever it has room, so the reader does
        // not wait for the output's metadata items
        self.e_take.next = self.e_full.q.val() & (self.f_cnt.q.val() != self.k_pd.val());
        self.efree.next = !self.e_full.q.val() | (self.e_take.val() & (self.e_beat.q.val() == self.k_plast.val()));
        self.xfer.next = (self.lfull.q.val() | self.land_last.val()) & self.efree.val();

        // R issues within a tile freely, and a tile's first word once L is
        // free by the time it lands
        self.r_issue.next = self.r_ready.val() & !self.r_refused.val();
        if (self.r_t.q.val() == self.k_zero32.val()) & self.lbusy.q.val() & !self.xfer.val() {
            self.r_issue.next = false;
        }
        self.ks.code_re.next = self.r_issue.val() & !self.r_side.q.val();
        self.vs.code_re.next = self.r_issue.val() & self.r_side.q.val();
        self.ks.code_raddr.next = self.r_addr.q.val();
        self.vs.code_raddr.next = self.r_addr.q.val();
        for i in 0..self._med {
            // stored row rho P + t is arrival row perm[..]
            self.md[i].a_bank.next = self.r_bank.q.val();
            self.md[i].a_rho.next = self.r_rho.q.val();
            self.md[i].a_t.next = self.r_t.q.val();
            self.md[i].a_k.next = self.r_k.q.val();
            self.ks.code_raddr.next = self.md[i].a_addr.val();
            self.vs.code_raddr.next = self.md[i].a_addr.val();
        }
        self.lv.en.next = true;
        self.lv.d.next = self.r_issue.val();
        self.lt.en.next = true;
        self.lt.d.next = self.r_t.q.val();
        self.lside.en.next = true;
        self.lside.d.next = self.r_side.q.val();
        if self.r_issue.val() {
            self.lbusy.en.next = true;
            self.lbusy.d.next = true;
            self.r_t.en.next = true;
            self.r_t.d.next = self.r_t.q.val() + self.k_one32.val();
            self.r_addr.en.next = true;
            self.r_addr.d.next = self.r_addr.q.val() + self.k_bt.val();
            if self.r_t.q.val() == self.k_p1.val() {
                self.r_t.d.next = self.k_zero32.val();
                self.r_k.en.next = true;
                self.r_k.d.next = self.r_k.q.val() + self.k_one32.val();
                self.r_base.en.next = true;
                self.r_base.d.next = self.r_base.q.val() + self.k_one32.val();
                self.r_addr.d.next = self.r_base.q.val() + self.k_one32.val();
                if self.r_k.q.val() == self.k_bt1.val() {
                    self.r_k.d.next = self.k_zero32.val();
                    self.r_rho.en.next = true;
                    self.r_rho.d.next = self.r_rho.q.val() + self.k_one32.val();
                    self.r_row.en.next = true;
                    self.r_row.d.next = self.r_row.q.val() + self.k_pbt.val();
                    self.r_base.d.next = self.r_row.q.val() + self.k_pbt.val();
                    self.r_addr.d.next = self.r_row.q.val() + self.k_pbt.val();
                    if self.r_rho.q.val() == self.k_rows1.val() {
                        // the block's last tile: V of this bank, or the next bank's K
                        self.r_rho.d.next = self.k_zero32.val();
                        self.r_side.en.next = true;
                        self.r_side.d.next = !self.r_side.q.val();
                        self.r_row.d.next = self.k_zero32.val();
                        if self.r_bank.q.val() {
                            self.r_row.d.next = self.k_bbt.val();
                        }
                        if self.r_side.q.val() {
                            self.r_bank.en.next = true;
                            self.r_bank.d.next = !self.r_bank.q.val();
                            if self.r_bank.q.val() {
                                self.r_done1.en.next = true;
                                self.r_done1.d.next = true;
                            } else {
                                self.r_done0.en.next = true;
                                self.r_done0.d.next = true;
                            }
                            self.r_row.d.next = self.k_bbt.val();
                            if self.r_bank.q.val() {
                                self.r_row.d.next = self.k_zero32.val();
                            }
                        }
                        self.r_base.d.next = self.r_row.d.val();
                        self.r_addr.d.next = self.r_row.d.val();
                    }
                }
            }
        } else {
            if self.xfer.val() {
                self.lbusy.en.next = true;
                self.lbusy.d.next = false;
            }
        }
        // L full and waiting for E
        if self.land_last.val() & !self.xfer.val() {
            self.lfull.en.next = true;
            self.lfull.d.next = true;
        }
        if self.xfer.val() {
            self.lfull.en.next = true;
            self.lfull.d.next = false;
        }

        // ---- E: load a transposed tile, or shift pay_beats beats into the queue ----
        self.pw_v.next = self.e_v[0].q.val();
        self.pw_m.next = self.e_m[0].q.val();
        for q in 1..self._pe {
            self.pw_v.next = self.pw_v.val() | (self.e_v[q].q.val() << self.k_lr[q - 1].val());
            self.pw_m.next = self.pw_m.val() | (self.e_m[q].q.val() << self.k_lr[q - 1].val());
        }
        self.pay_ram.we.next = self.e_take.val();
        self.pay_ram.waddr.next = self.f_wp.q.val();
        self.pay_ram.wdata.next = self.pw_v.val();
        self.pay_ram.re.next = self.f_rd.val();
        self.pay_ram.raddr.next = self.f_rp.q.val();
        self.pk_ram.we.next = self.e_take.val();
        self.pk_ram.waddr.next = self.f_wp.q.val();
        self.pk_ram.wdata.next = self.pw_m.val();
        self.pk_ram.re.next = self.f_rd.val();
        self.pk_ram.raddr.next = self.f_rp.q.val();
        if self.e_take.val() {
            self.f_wp.en.next = true;
            self.f_wp.d.next = self.f_wp.q.val() + self.k_one32.val();
        }
        if self.f_rd.val() {
            self.f_rp.en.next = true;
            self.f_rp.d.next = self.f_rp.q.val() + self.k_one32.val();
        }
        if self.e_take.val() & !self.f_rd.val() {
            self.f_cnt.en.next = true;
            self.f_cnt.d.next = self.f_cnt.q.val() + self.k_one32.val();
        }
        if !self.e_take.val() & self.f_rd.val() {
            self.f_cnt.en.next = true;
            self.f_cnt.d.next = self.f_cnt.q.val() - self.k_one32.val();
        }
        for h in 0..self._pj {
            // a row of two tiles: the first tile's take only fills the half
            // register; the second's writes both
            self.e_half[h].clock.next = self.clock.val();
            self.e_half[h].reset.next = self.reset.val();
            self.e_half[h].en.next = self.e_take.val();
            self.e_half[h].d.next = !self.e_half[h].q.val();
            self.e_hv[h].clock.next = self.clock.val();
            self.e_hv[h].reset.next = self.reset.val();
            self.e_hv[h].en.next = self.e_take.val() & !self.e_half[h].q.val();
            self.e_hv[h].d.next = self.pw_v.val();
            self.e_hm[h].clock.next = self.clock.val();
            self.e_hm[h].reset.next = self.reset.val();
            self.e_hm[h].en.next = self.e_take.val() & !self.e_half[h].q.val();
            self.e_hm[h].d.next = self.pw_m.val();
            self.pay_ram.wdata.next = self.e_hv[h].q.val() | (self.pw_v.val() << self.k_lh[h].val());
            self.pk_ram.wdata.next = self.e_hm[h].q.val() | (self.pw_m.val() << self.k_lh[h].val());
            if self.e_take.val() & !self.e_half[h].q.val() {
                self.pay_ram.we.next = false;
                self.pk_ram.we.next = false;
                self.f_wp.en.next = false;
                self.f_cnt.en.next = self.f_rd.val();
                self.f_cnt.d.next = self.f_cnt.q.val() - self.k_one32.val();
            }
        }
        if self.e_take.val() {
            self.e_beat.en.next = true;
            self.e_beat.d.next = self.e_beat.q.val() + self.k_one32.val();
            if self.e_beat.q.val() == self.k_plast.val() {
                self.e_full.en.next = true;
                self.e_full.d.next = false;
            }
            for e in 0..self._p {
                self.e_v[e].en.next = true;
                self.e_m[e].en.next = true;
                self.e_v[e].d.next = self.k_zero_w.val();
                self.e_m[e].d.next = self.k_zero_w.val();
            }
            for pb in self._pe..(self._pe + 1) {
                for e in 0..(self._p - self._pe) {
                    self.e_v[e].d.next = self.e_v[e + pb].q.val();
                    self.e_m[e].d.next = self.e_m[e + pb].q.val();
                }
            }
        }
        if self.xfer.val() {
            self.e_full.en.next = true;
            self.e_full.d.next = true;
            self.e_beat.en.next = true;
            self.e_beat.d.next = self.k_zero32.val();
        }
        for ln in self._lanes..(self._lanes + 1) {
            for pp in self._p..(self._p + 1) {
                for e in 0..self._p {
                    // slot i of beat e is code t = f mod P of channel j = f div P, f = e lanes + i
                    self.ev.next = self.k_zero_w.val();
                    self.em.next = self.k_zero_w.val();
                    for i in 0..self._lanes {
                        self.s8.next = self.lsrc[(e * ln + i) % pp].val().get_bits::<8>(self.rofs[(e * ln + i) / pp].val().index());
                        self.a8.next = self.nmin.val().get_bits::<8>(self.rofs[(e * ln + i) / pp].val().index());
                        self.b8.next = self.tmsk.val().get_bits::<8>(self.rofs[(e * ln + i) / pp].val().index());
                        self.d8.next = (self.s8.val() - self.a8.val()) & self.b8.val() & self.k_rmask.val();
                        self.ev.next = self.ev.val() | (bit_cast::<WMAX, 8>(self.d8.val()) << self.rofs[i].val());
                        self.em.next = self.em.val() | (bit_cast::<WMAX, 8>(self.b8.val() & self.k_rmask.val()) << self.rofs[i].val());
                    }
                    if self.xfer.val() {
                        self.e_v[e].en.next = true;
                        self.e_v[e].d.next = self.ev.val();
                        self.e_m[e].en.next = true;
                        self.e_m[e].d.next = self.em.val();
                    }
                }
            }
        }

        // ---- X state ----
        self.ks.meta_re.next = false;
        self.vs.meta_re.next = false;
        self.ks.fld_re.next = false;
        self.vs.fld_re.next = false;
        self.ks.meta_raddr.next = self.x_maddr.q.val();
        self.vs.meta_raddr.next = self.x_maddr.q.val();
        self.ks.fld_raddr.next = self.x_faddr.q.val();
        self.vs.fld_raddr.next = self.x_faddr.q.val();
        self.ks.rel.next = false;
        self.vs.rel.next = false;
        self.ks.rel_bank.next = self.x_bank.q.val();
        self.vs.rel_bank.next = self.x_bank.q.val();
        self.x1_v.en.next = self.adv.val();
        self.x1_v.d.next = self.x_issue.val();
        self.x1_kind.en.next = self.adv.val();
        self.x1_kind.d.next = self.x_state.q.val();
        self.x1_side.en.next = self.adv.val();
        self.x1_side.d.next = self.x_side.q.val();
        self.x1_flags.en.next = self.adv.val();
        self.x1_flags.d.next = self.k_zero4.val();
        self.x1_data.en.next = self.adv.val();
        self.x1_data.d.next = self.k_zero_w.val();
        self.x1_keep.en.next = self.adv.val();
        self.x1_keep.d.next = self.k_zero_w.val();
        if self.x_issue.val() {
            if self.x_state.q.val() == self.k_hdr.val() {
                self.x_nfl.en.next = true;
                self.x_nfl.d.next = self.x_nf.val();
                self.x1_data.d.next = bit_cast::<WMAX, 32>(self.x_hdr.val());
                self.x1_keep.d.next = self.k_wkeep.val();
                self.x_state.en.next = true;
                self.x_state.d.next = self.k_smeta.val();
                self.x_i.en.next = true;
                self.x_i.d.next = self.k_zero32.val();
                self.x_maddr.en.next = true;
                self.x_maddr.d.next = self.k_zero32.val();
                self.x_faddr.en.next = true;
                self.x_faddr.d.next = self.k_zero32.val();
                if self.x_bank.q.val() {
                    self.x_maddr.d.next = self.k_ti.val();
                    self.x_faddr.d.next = self.k_rbt.val();
                }
                self.x_rho.en.next = true;
                self.x_rho.d.next = self.k_zero32.val();
                if self.refused.val() {
                    // the status beat of a refused block, in place of its words
                    self.x1_kind.d.next = self.k_stat.val();
                    self.x1_keep.d.next = self.k_zero_w.val();
                    self.x1_flags.d.next = self.k_end.val() | self.k_ovf.val();
                    if self.x_nf.val() {
                        self.x1_flags.d.next = self.k_end.val() | self.k_ovf.val() | self.k_nf.val();
                    }
                    self.x_state.d.next = self.k_hdr.val();
                    self.x_side.en.next = true;
                    self.x_side.d.next = !self.x_side.q.val();
                    if self.x_side.q.val() {
                        self.ks.rel.next = true;
                        self.vs.rel.next = true;
                        self.x_bank.en.next = true;
                        self.x_bank.d.next = !self.x_bank.q.val();
                    }
                }
            }
            if self.x_state.q.val() == self.k_smeta.val() {
                self.ks.meta_re.next = !self.x_side.q.val();
                self.vs.meta_re.next = self.x_side.q.val();
                self.x_maddr.en.next = true;
                self.x_maddr.d.next = self.x_maddr.q.val() + self.k_one32.val();
                self.x_i.en.next = true;
                self.x_i.d.next = self.x_i.q.val() + self.k_one32.val();
                if self.x_i.q.val() == self.k_ti1.val() {
                    self.x_i.d.next = self.k_zero32.val();
                    self.x_state.en.next = true;
                    self.x_state.d.next = self.k_fld.val();
                }
            }
            if self.x_state.q.val() == self.k_fld.val() {
                self.ks.fld_re.next = !self.x_side.q.val();
                self.vs.fld_re.next = self.x_side.q.val();
                self.x_faddr.en.next = true;
                self.x_faddr.d.next = self.x_faddr.q.val() + self.k_one32.val();
                self.x_i.en.next = true;
                self.x_i.d.next = self.x_i.q.val() + self.k_one32.val();
                if self.x_i.q.val() == self.k_bt1.val() {
                    self.x_i.d.next = self.k_zero32.val();
                    self.x_state.en.next = true;
                    self.x_state.d.next = self.k_pay.val();
                    if (self.x_rho.q.val() == self.k_rows1.val()) & self.x_side.q.val() {
                        self.x_relp.en.next = true;
                        self.x_relp.d.next = true;
                    }
                }
            }
            if self.x_state.q.val() == self.k_pay.val() {
                self.x_i.en.next = true;
                self.x_i.d.next = self.x_i.q.val() + self.k_one32.val();
                if self.x_i.q.val() == self.k_xpay1.val() {
                    // the row's last payload item (on the block's last
                    // row, the pair's banks are released by now, below)
                    self.x_i.d.next = self.k_zero32.val();
                    self.x_state.en.next = true;
                    self.x_state.d.next = self.k_fld.val();
                    self.x_rowend.next = true;
                }
            }
        }
        for m in 0..self._fmn {
            // the pack row's last fields beat carries its first payload item
            if self.x_issue.val() & (self.x_state.q.val() == self.k_fld.val()) & (self.x_i.q.val() == self.k_bt1.val()) {
                self.x1_kind.d.next = self.k_fp[m].val();
                self.x_i.d.next = self.k_one32.val();
            }
        }
        for m in 0..self._fm1 {
            // ... and, the row's only one, ends the row
            if self.x_issue.val() & (self.x_state.q.val() == self.k_fld.val()) & (self.x_i.q.val() == self.k_bt1.val()) {
                self.x1_kind.d.next = self.k_fp[m].val();
                self.x_state.d.next = self.k_fld.val();
                self.x_rowend.next = true;
                if self.x_rho.q.val() == self.k_rows1.val() {
                    // the block's last item; after V's, R is done (the issue
                    // waited for it), so the pair's banks are released now,
                    // with x_bank still the pair's
                    self.x_relp.en.next = false;
                    if self.x_side.q.val() {
                        self.ks.rel.next = true;
                        self.vs.rel.next = true;
                    }
                }
            }
        }
        if self.x_rowend.val() {
            // the next pack row; after the block's last, its end item, and
            // the other side (after V, the other bank)
            self.x_rho.en.next = true;
            self.x_rho.d.next = self.x_rho.q.val() + self.k_one32.val();
            if self.x_rho.q.val() == self.k_rows1.val() {
                self.x1_flags.d.next = self.k_end.val();
                if self.x_nfl.q.val() {
                    self.x1_flags.d.next = self.k_end.val() | self.k_nf.val();
                }
                self.x_state.d.next = self.k_hdr.val();
                self.x_side.en.next = true;
                self.x_side.d.next = !self.x_side.q.val();
                if self.x_side.q.val() {
                    self.x_bank.en.next = true;
                    self.x_bank.d.next = !self.x_bank.q.val();
                }
            }
        }

        // R has read the pair (its last payload is in the queue or later) and
        // X has sent its fields: no later read of the pair's banks. R's done
        // flag is set by the time X issues the last payload item, so the
        // release comes no later than that item, with x_bank still the pair's.
        self.x_rdone.next = self.r_done0.q.val();
        if self.x_bank.q.val() {
            self.x_rdone.next = self.r_done1.q.val();
        }
        if self.x_relp.q.val() & self.x_rdone.val() {
            self.ks.rel.next = true;
            self.vs.rel.next = true;
            self.x_relp.en.next = true;
            self.x_relp.d.next = false;
        }
        for i in 0..self._med {
            // token words in stored order; the permutation after K's token words
            self.md[i].m_bank.next = self.x_bank.q.val();
            self.md[i].m_i.next = self.x_i.q.val();
            self.ks.meta_raddr.next = self.md[i].m_addr.val();
            self.vs.meta_raddr.next = self.md[i].m_addr.val();
            self.md[i].w_bank.next = self.x_bank.q.val();
            self.md[i].w_next.next = false;
            if self.x_issue.val() {
                if (self.x_state.q.val() == self.k_smeta.val()) & (self.x_i.q.val() == self.k_ti1.val()) & !self.x_side.q.val() {
                    self.x_state.d.next = self.k_perm[i].val();
                }
                if self.x_state.q.val() == self.k_perm[i].val() {
                    self.x1_data.d.next = self.md[i].w_data.val();
                    self.x1_keep.d.next = self.md[i].w_keep.val();
                    self.md[i].w_next.next = true;
                    if self.md[i].w_last.val() {
                        self.x_state.en.next = true;
                        self.x_state.d.next = self.k_fld.val();
                    }
                }
            }
            self.md[i].rel.next = self.ks.rel.val();
            self.md[i].rel_bank.next = self.x_bank.q.val();
            self.mf[i].rel.next = self.ks.rel.val();
            self.mf[i].rel_bank.next = self.x_bank.q.val();
            // the pass writes the sides' fields memories; the output reads
            // them as with `none`
            self.ks.med_we[i].next = self.mf[i].f_we.val();
            self.vs.med_we[i].next = self.mf[i].f_we.val();
            self.ks.med_waddr[i].next = self.mf[i].f_waddr.val();
            self.vs.med_waddr[i].next = self.mf[i].f_waddr.val();
            self.ks.med_wdata[i].next = self.mf[i].k_fwd.val();
            self.vs.med_wdata[i].next = self.mf[i].v_fwd.val();
        }
        if self.ks.rel.val() {
            if self.x_bank.q.val() {
                self.r_done1.en.next = true;
                self.r_done1.d.next = false;
            } else {
                self.r_done0.en.next = true;
                self.r_done0.d.next = false;
            }
        }
        // a refused pair: nothing to read; R leaves the bank when X releases it
        // (earlier, R could come back to the same refused pair)
        if self.r_ready.val() & self.r_refused.val() & self.ks.rel.val() & (self.r_bank.q.val() == self.x_bank.q.val()) {
            self.r_bank.en.next = true;
            self.r_bank.d.next = !self.r_bank.q.val();
            self.r_row.en.next = true;
            self.r_base.en.next = true;
            self.r_addr.en.next = true;
            self.r_row.d.next = self.k_bbt.val();
            self.r_base.d.next = self.k_bbt.val();
            self.r_addr.d.next = self.k_bbt.val();
            if self.r_bank.q.val() {
                self.r_row.d.next = self.k_zero32.val();
                self.r_base.d.next = self.k_zero32.val();
                self.r_addr.d.next = self.k_zero32.val();
            }
        }
        // ---- X1: the item's bits and keep mask ----
        self.chunk.next = self.x1_data.q.val();
        self.keep.next = self.x1_keep.q.val();
        if self.x1_kind.q.val() == self.k_smeta.val() {
            self.chunk.next = self.ks.meta_rdata.val();
            if self.x1_side.q.val() {
                self.chunk.next = self.vs.meta_rdata.val();
            }
            self.keep.next = self.k_tkeep.val();
        }
        if self.x1_kind.q.val() == self.k_pay.val() {
            self.chunk.next = self.pay_ram.rdata.val();
            self.keep.next = self.pk_ram.rdata.val();
        }
        if self.x1_kind.q.val() == self.k_fld.val() {
            self.chunk.next = self.ks.fld_rdata.val();
            self.keep.next = self.k_fkeep_k.val();
            if self.x1_side.q.val() {
                self.chunk.next = self.vs.fld_rdata.val();
                self.keep.next = self.k_fkeep_v.val();
            }
        }
        for m in 0..(self._fm1 + self._fmn) {
            if self.x1_kind.q.val() == self.k_fp[m].val() {
                self.chunk.next = self.ks.fld_rdata.val() | (self.pay_ram.rdata.val() << self.k_fofs_k[m].val());
                self.keep.next = self.k_fkeep_k.val() | (self.pk_ram.rdata.val() << self.k_fofs_k[m].val());
                if self.x1_side.q.val() {
                    self.chunk.next = self.vs.fld_rdata.val() | (self.pay_ram.rdata.val() << self.k_fofs_v[m].val());
                    self.keep.next = self.k_fkeep_v.val() | (self.pk_ram.rdata.val() << self.k_fofs_v[m].val());
                }
            }
        }
        self.zr.clock.next = self.clock.val();
        self.zr.reset.next = self.reset.val();
        self.zr.en.next = self.adv.val();
        self.zr.in_valid.next = self.x1_v.q.val();
        for j in 0..self._nsh {
            self.zr.data[j].next = self.chunk.val().get_bits::<1>(self.bix[j].val().index());
            self.zr.keep[j].next = self.keep.val().get_bit(self.bix[j].val().index());
        }
        self.flags.next = self.x1_flags.q.val();
        self.sbf[0].d.next = self.flags.val();
        for i in 1..self._ls {
            self.sbf[i].d.next = self.sbf[i - 1].q.val();
        }
        for i in (self._ls - 1)..self._ls {
            self.zf.next = self.sbf[i].q.val();
        }

        // ---- accumulator: residue | beat << rc, whole words out ----
        self.cb.next = bit_cast::<WIN, 1>(false.into());
        for j in 0..self._nsh {
            self.ob.next = self.zr.out[j].val();
            self.cb.next = self.cb.val() | (bit_cast::<WIN, 1>(self.ob.val()) << self.bix[j].val());
        }
        self.win.next = bit_cast::<WIN, 32>(self.res.q.val()) | (self.cb.val() << self.rc.q.val());
        self.nbits.next = self.rc.q.val() + self.zr.count.val();
        self.wsh.next = self.win.val();
        self.o_v.en.next = self.adv.val();
        self.o_v.d.next = false;
        self.o_words.en.next = self.adv.val();
        self.o_words.d.next = self.win.val();
        self.o_count.en.next = self.adv.val();
        self.o_count.d.next = self.nbits.val() >> self.k_5.val();
        self.o_last.en.next = self.adv.val();
        self.o_last.d.next = (self.zf.val() & self.k_end.val()) != self.k_zero4.val();
        self.o_ovf.en.next = self.adv.val();
        self.o_ovf.d.next = (self.zf.val() & self.k_ovf.val()) != self.k_zero4.val();
        self.o_nf.en.next = self.adv.val();
        self.o_nf.d.next = (self.zf.val() & self.k_nf.val()) != self.k_zero4.val();
        if self.zr.out_valid.val() {
            self.res.en.next = self.adv.val();
            self.rc.en.next = self.adv.val();
            self.wsh.next = self.win.val() >> (self.nbits.val() & self.k_m32.val());
            self.res.d.next = self.wsh.val().get_bits::<32>(0);
            self.rc.d.next = self.nbits.val() & self.k_31.val();
            self.o_v.d.next = (self.nbits.val() >> self.k_5.val()) != self.k_zero8.val();
            if (self.zf.val() & self.k_end.val()) != self.k_zero4.val() {
                // pad the block to a whole word
                self.o_count.d.next = (self.nbits.val() + self.k_31.val()) >> self.k_5.val();
                self.o_v.d.next = true;
                self.res.d.next = self.k_zero32.val();
                self.rc.d.next = self.k_zero8.val();
            }
        }
        self.out_valid.next = self.o_v.q.val();
        self.out_words.next = self.o_words.q.val();
        self.out_count.next = self.o_count.q.val();
        self.out_last.next = self.o_last.q.val();
        self.out_overflow.next = self.o_ovf.q.val();
        self.out_nonfinite.next = self.o_nf.q.val();
    }
);
