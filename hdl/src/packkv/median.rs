//! Median repacking for `packkv-encoder` (`repack = median`): the V
//! tokens' lower medians, the stable counting sort of a block by them, and
//! a fields pass over each block in the sorted row order.
//!
//! Paper: PackKV §III-B3 (median repacking). Spec: docs/spec.md §14.5,
//! §14.14.3.
//!
//! - `MedSort`: per V token a cumulative histogram (`cle[m]` = codes `<=
//!   m`, `2^r_V - 1` counters, `lanes` codes a cycle) whose count of
//!   entries below `ceil(C / 2)` is the lower median; medians go to a
//!   memory and a per-bank key histogram. After a block's last median: a
//!   scan of `2^r_V` keys, highest first, turns the histogram into start
//!   positions, then `B` placements (one a cycle, arrival order, so ties
//!   stay in arrival order) write the permutation registers. Their read
//!   ports give the code-memory row of a stored row (tile reader, fields
//!   pass), the token-word address, and the permutation items.
//! - `MedFields`: the fields must be taken over the stored pack rows, so a
//!   second copy of each code memory is read in stored order once the pair
//!   is sorted, giving each pack's fields (written into the side's fields
//!   memory, whose fill-time words `median` does not use) and the width
//!   sums, hence each block's header. It runs while the other bank is
//!   being sent.

use super::encoder::{low_ones, EncGeometry, WMAX};
use crate::prim::ram::{DpRam, MemInfo};
use crate::prim::reg::{reg_logic, Reg};
use crate::prim::vecs::{consts, regs, sigs};
use rust_hdl::prelude::*;

fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

/// Permutation entries per output item: as many `log2 B`-bit entries as
/// fit 32 bits (an item never widens the output beat).
pub fn perm_per_item(block: usize) -> usize {
    32 / block.trailing_zeros() as usize
}

/// Output items of the permutation, `ceil(B / per_item)`.
pub fn perm_items(block: usize) -> usize {
    block.div_ceil(perm_per_item(block))
}

/// Beat positions the fields pass reads a cycle (spec §14.14.3, Fields
/// pass): 2 when a token has an even number of beats and two beats of the
/// wider side fit one copy row (`2 lanes r_max <= 128`), else 1. Each copy
/// row then holds a token's beats `2j` and `2j + 1`.
pub fn pass_width(g: &EncGeometry) -> usize {
    if g.beats % 2 == 0 && 2 * g.lanes * g.rmax <= WMAX {
        2
    } else {
        1
    }
}

/// The memories median repacking adds, manifest order.
pub fn memories(g: &EncGeometry, module: &str) -> Vec<MemInfo> {
    let m = |what: &str, depth: usize, width: usize| MemInfo {
        module: format!("{module}_{what}_ram"),
        name: what.to_string(),
        depth,
        width,
    };
    let (b, bt, l, pw) = (g.block, g.beats, g.lanes, pass_width(g));
    vec![
        m("v_median", 2 * b, g.v.raw),
        m("k_codes_sorted", 2 * b * bt / pw, pw * l * g.k.raw),
        m("v_codes_sorted", 2 * b * bt / pw, pw * l * g.v.raw),
    ]
}

fn ram(i: &MemInfo) -> DpRam<32, WMAX> {
    DpRam::new(&i.module, &i.name, i.depth, i.width)
}

#[derive(LogicBlock)]
pub struct MedSort {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A V beat is accepted this cycle, with these codes.
    pub v_acc: Signal<In, Bit>,
    pub v_codes: Signal<In, Bits<WMAX>>,
    /// The output is done with bank `rel_bank`.
    pub rel: Signal<In, Bit>,
    pub rel_bank: Signal<In, Bit>,
    /// The bank's permutation is ready.
    pub sorted0: Signal<Out, Bit>,
    pub sorted1: Signal<Out, Bit>,
    /// Tile reader: code-memory address of stored row `rho P + t`, beat `k`.
    pub a_bank: Signal<In, Bit>,
    pub a_rho: Signal<In, Bits<32>>,
    pub a_t: Signal<In, Bits<32>>,
    pub a_k: Signal<In, Bits<32>>,
    pub a_addr: Signal<Out, Bits<32>>,
    /// Fields pass: the same.
    pub q_bank: Signal<In, Bit>,
    pub q_rho: Signal<In, Bits<32>>,
    pub q_t: Signal<In, Bits<32>>,
    pub q_k: Signal<In, Bits<32>>,
    pub q_addr: Signal<Out, Bits<32>>,
    /// Token words: metadata address of stored row `m_i`.
    pub m_bank: Signal<In, Bit>,
    pub m_i: Signal<In, Bits<32>>,
    pub m_addr: Signal<Out, Bits<32>>,
    /// Permutation items, in order: `w_next` takes one.
    pub w_bank: Signal<In, Bit>,
    pub w_next: Signal<In, Bit>,
    pub w_data: Signal<Out, Bits<WMAX>>,
    pub w_keep: Signal<Out, Bits<WMAX>>,
    pub w_last: Signal<Out, Bit>,
    med_ram: DpRam<32, WMAX>,
    /// 16 bits: `beats <= 8192`, `B <= 128` (32-bit ripples were the
    /// median build's critical path)
    beat: Reg<Bits<16>>,
    tok: Reg<Bits<16>>,
    wbank: Reg<Bit>,
    s1_v: Reg<Bit>,
    /// per `m`, the accepted beat's count of codes `<= m` (its popcount
    /// tree runs from the input, so S1 only adds)
    s1_pc: Vec<Reg<Bits<8>>>,
    s1_first: Reg<Bit>,
    s1_last: Reg<Bit>,
    s1_end: Reg<Bit>,
    s1_bank: Reg<Bit>,
    s1_addr: Reg<Bits<32>>,
    cle: Vec<Reg<Bits<16>>>,
    cn: Vec<Signal<Local, Bits<16>>>,
    cc: Signal<Local, Bits<8>>,
    /// per `m`, a popcount tree of the beat's `code <= m` (heap order,
    /// `2 lanes - 1` nodes, leaves at `lanes - 1 + j`)
    pc: Vec<Signal<Local, Bits<8>>>,
    pr: Signal<Local, Bits<8>>,
    /// `ltp[m + 1]`: `cle[m] < ceil(C / 2)`; `ltp[0]` 1, `ltp[2^r_V]` 0
    ltp: Vec<Signal<Local, Bit>>,
    med: Signal<Local, Bits<8>>,
    s2_v: Reg<Bit>,
    s2_addr: Reg<Bits<32>>,
    s2_end: Reg<Bit>,
    s2_bank: Reg<Bit>,
    hist: Vec<Reg<Bits<8>>>,
    pend0: Reg<Bit>,
    pend1: Reg<Bit>,
    srt0: Reg<Bit>,
    srt1: Reg<Bit>,
    st: Reg<Bits<2>>,
    sbank: Reg<Bit>,
    sm: Reg<Bits<16>>,
    acc: Reg<Bits<8>>,
    p1_v: Reg<Bit>,
    p1_t: Reg<Bits<8>>,
    p1_last: Reg<Bit>,
    perm: Vec<Reg<Bits<8>>>,
    hidx: Signal<Local, Bits<16>>,
    hv: Signal<Local, Bits<8>>,
    pidx: Signal<Local, Bits<16>>,
    ia: Signal<Local, Bits<16>>,
    pa: Signal<Local, Bits<8>>,
    // m_addr and w_keep are built here and written once (see MedFields)
    l_maddr: Signal<Local, Bits<32>>,
    l_keep: Signal<Local, Bits<WMAX>>,
    mul: Signal<Local, Bits<32>>,
    wptr: Reg<Bits<16>>,
    wd: Signal<Local, Bits<WMAX>>,
    pm: Signal<Local, Bits<8>>,
    // constants
    sofs: Vec<Constant<Bits<32>>>,
    mval: Vec<Constant<Bits<8>>>,
    hix: Vec<Constant<Bits<16>>>,
    pix: Vec<Constant<Bits<16>>>,
    mulsh: Vec<Constant<Bits<32>>>,
    /// per entry `i` of a bank: the first entry of its item (`wptr`'s value
    /// when the item is sent) and its offset inside the item
    k_went: Vec<Constant<Bits<16>>>,
    k_eshe: Vec<Constant<Bits<32>>>,
    k_rmask: Constant<Bits<8>>,
    k_need: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_bt1: Constant<Bits<16>>,
    k_b1: Constant<Bits<16>>,
    k_b32: Constant<Bits<32>>,
    k_b16: Constant<Bits<16>>,
    k_b1_16: Constant<Bits<16>>,
    k_kk: Constant<Bits<16>>,
    k_km1: Constant<Bits<16>>,
    k_bbt: Constant<Bits<32>>,
    k_lp: Constant<Bits<32>>,
    k_epi: Constant<Bits<16>>,
    k_keep_full: Constant<Bits<WMAX>>,
    k_keep_last: Constant<Bits<WMAX>>,
    k_idle: Constant<Bits<2>>,
    k_scan: Constant<Bits<2>>,
    k_place: Constant<Bits<2>>,
    k_wait: Constant<Bits<2>>,
    _lanes: usize,
    _tn: usize,
    _kc: usize,
    _b: usize,
    _nm: usize,
}

impl MedSort {
    pub fn new(g: &EncGeometry, module: &str) -> Self {
        let (b, rv, l) = (g.block, g.v.raw, g.lanes);
        let kc = 1usize << rv;
        let lb = b.trailing_zeros() as usize;
        let epi = perm_per_item(b);
        let last = b - (perm_items(b) - 1) * epi;
        let mulsh: Vec<u64> = (0..20).filter(|s| g.beats >> s & 1 == 1).map(|s| s as u64).collect();
        MedSort {
            clock: Default::default(),
            reset: Default::default(),
            v_acc: Default::default(),
            v_codes: Default::default(),
            rel: Default::default(),
            rel_bank: Default::default(),
            sorted0: Default::default(),
            sorted1: Default::default(),
            a_bank: Default::default(),
            a_rho: Default::default(),
            a_t: Default::default(),
            a_k: Default::default(),
            a_addr: Default::default(),
            q_bank: Default::default(),
            q_rho: Default::default(),
            q_t: Default::default(),
            q_k: Default::default(),
            q_addr: Default::default(),
            m_bank: Default::default(),
            m_i: Default::default(),
            m_addr: Default::default(),
            w_bank: Default::default(),
            w_next: Default::default(),
            w_data: Default::default(),
            w_keep: Default::default(),
            w_last: Default::default(),
            med_ram: ram(&memories(g, module)[0]),
            beat: Reg::default(),
            tok: Reg::default(),
            wbank: Reg::default(),
            s1_v: Reg::default(),
            s1_pc: regs(kc - 1),
            s1_first: Reg::default(),
            s1_last: Reg::default(),
            s1_end: Reg::default(),
            s1_bank: Reg::default(),
            s1_addr: Reg::default(),
            cle: regs(kc - 1),
            cn: sigs(kc - 1),
            cc: Default::default(),
            pc: sigs((kc - 1) * (2 * l - 1)),
            pr: Default::default(),
            ltp: sigs(kc + 1),
            med: Default::default(),
            s2_v: Reg::default(),
            s2_addr: Reg::default(),
            s2_end: Reg::default(),
            s2_bank: Reg::default(),
            hist: regs(2 * kc),
            pend0: Reg::default(),
            pend1: Reg::default(),
            srt0: Reg::default(),
            srt1: Reg::default(),
            st: Reg::default(),
            sbank: Reg::default(),
            sm: Reg::default(),
            acc: Reg::default(),
            p1_v: Reg::default(),
            p1_t: Reg::default(),
            p1_last: Reg::default(),
            perm: regs(2 * b),
            hidx: Default::default(),
            hv: Default::default(),
            pidx: Default::default(),
            ia: Default::default(),
            pa: Default::default(),
            l_maddr: Default::default(),
            l_keep: Default::default(),
            mul: Default::default(),
            wptr: Reg::default(),
            wd: Default::default(),
            pm: Default::default(),
            k_went: consts((0..b).map(|i| (i / epi * epi) as u64)),
            k_eshe: consts((0..b).map(|i| (i % epi * lb) as u64)),
            sofs: consts((0..l).map(|j| (j * rv) as u64)),
            mval: consts((0..kc).map(|m| m as u64)),
            hix: consts((0..2 * kc).map(|i| i as u64)),
            pix: consts((0..2 * b).map(|i| i as u64)),
            mulsh: consts(mulsh),
            k_rmask: c((1 << rv) - 1),
            k_need: c(g.vector.div_ceil(2) as u64),
            k_one16: c(1),
            k_zero16: c(0),
            k_one8: c(1),
            k_zero8: c(0),
            k_bt1: c((g.beats - 1) as u64),
            k_b1: c((b - 1) as u64),
            k_b32: c(b as u64),
            k_b16: c(b as u64),
            k_b1_16: c((b - 1) as u64),
            k_kk: c(kc as u64),
            k_km1: c((kc - 1) as u64),
            k_bbt: c((b * g.beats) as u64),
            k_lp: c(g.pack.trailing_zeros() as u64),
            k_epi: c(epi as u64),
            k_keep_full: low_ones(epi * lb),
            k_keep_last: low_ones(last * lb),
            k_idle: c(0),
            k_scan: c(1),
            k_place: c(2),
            k_wait: c(3),
            _lanes: l,
            _tn: 2 * l - 1,
            _kc: kc,
            _b: b,
            _nm: g.beats.count_ones() as usize,
        }
    }
}

reg_logic!(MedSort;
    regs [beat, tok, wbank, s1_v, s1_first, s1_last, s1_end, s1_bank, s1_addr, s2_v, s2_addr,
          s2_end, s2_bank, pend0, pend1, srt0, srt1, st, sbank, sm, acc, p1_v, p1_t, p1_last, wptr];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        self.med_ram.clock.next = self.clock.val();
        for m in 0..(self._kc - 1) {
            self.cle[m].clock.next = self.clock.val();
            self.cle[m].reset.next = self.reset.val();
            self.cle[m].en.next = false;
            self.cle[m].d.next = self.cle[m].q.val();
            self.s1_pc[m].clock.next = self.clock.val();
            self.s1_pc[m].reset.next = self.reset.val();
            self.s1_pc[m].en.next = true;
        }
        for i in 0..(2 * self._kc) {
            self.hist[i].clock.next = self.clock.val();
            self.hist[i].reset.next = self.reset.val();
            self.hist[i].en.next = false;
            self.hist[i].d.next = self.hist[i].q.val();
        }
        for i in 0..(2 * self._b) {
            self.perm[i].clock.next = self.clock.val();
            self.perm[i].reset.next = self.reset.val();
            self.perm[i].en.next = false;
            self.perm[i].d.next = self.perm[i].q.val();
        }

        // ---- the V fill's position (the same count as the V side's) ----
        self.s1_v.en.next = true;
        self.s1_v.d.next = self.v_acc.val();
        self.s1_first.en.next = true;
        self.s1_first.d.next = self.beat.q.val() == self.k_zero16.val();
        self.s1_last.en.next = true;
        self.s1_last.d.next = self.beat.q.val() == self.k_bt1.val();
        self.s1_end.en.next = true;
        self.s1_end.d.next = (self.beat.q.val() == self.k_bt1.val()) & (self.tok.q.val() == self.k_b1.val());
        self.s1_bank.en.next = true;
        self.s1_bank.d.next = self.wbank.q.val();
        self.s1_addr.en.next = true;
        self.s1_addr.d.next = bit_cast::<32, 16>(self.tok.q.val());
        if self.wbank.q.val() {
            self.s1_addr.d.next = bit_cast::<32, 16>(self.tok.q.val() + self.k_b16.val());
        }
        if self.v_acc.val() {
            self.beat.en.next = true;
            self.beat.d.next = self.beat.q.val() + self.k_one16.val();
            if self.beat.q.val() == self.k_bt1.val() {
                self.beat.d.next = self.k_zero16.val();
                self.tok.en.next = true;
                self.tok.d.next = self.tok.q.val() + self.k_one16.val();
                if self.tok.q.val() == self.k_b1.val() {
                    self.tok.d.next = self.k_zero16.val();
                    self.wbank.en.next = true;
                    self.wbank.d.next = !self.wbank.q.val();
                }
            }
        }

        // ---- S1: cumulative histogram. The beat's count of codes `<= m` is
        // a popcount tree, not a chain of `lanes` increments, computed from
        // the input and registered, so that S1 only adds (timing) ----
        for tn in self._tn..(self._tn + 1) {
            for ln in self._lanes..(self._lanes + 1) {
                for m in 0..(self._kc - 1) {
                    for j in 0..self._lanes {
                        self.cc.next = self.v_codes.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
                        self.pc[m * tn + ln - 1 + j].next = self.k_zero8.val();
                        if self.cc.val() <= self.mval[m].val() {
                            self.pc[m * tn + ln - 1 + j].next = self.k_one8.val();
                        }
                    }
                    // internal nodes, children first
                    for i in 0..(self._lanes - 1) {
                        self.pc[m * tn + ln - 2 - i].next =
                            self.pc[m * tn + 2 * (ln - 2 - i) + 1].val() + self.pc[m * tn + 2 * (ln - 2 - i) + 2].val();
                    }
                    self.s1_pc[m].d.next = self.pc[m * tn].val();
                }
            }
        }
        for m in 0..(self._kc - 1) {
            self.pr.next = self.s1_pc[m].q.val();
            self.cn[m].next = self.cle[m].q.val() + bit_cast::<16, 8>(self.pr.val());
            if self.s1_first.q.val() {
                self.cn[m].next = bit_cast::<16, 8>(self.pr.val());
            }
            if self.s1_v.q.val() {
                self.cle[m].en.next = true;
                self.cle[m].d.next = self.cn[m].val();
            }
        }
        self.s2_v.en.next = true;
        self.s2_v.d.next = self.s1_v.q.val() & self.s1_last.q.val();
        self.s2_addr.en.next = true;
        self.s2_addr.d.next = self.s1_addr.q.val();
        self.s2_end.en.next = true;
        self.s2_end.d.next = self.s1_end.q.val();
        self.s2_bank.en.next = true;
        self.s2_bank.d.next = self.s1_bank.q.val();

        // ---- S2: the lower median from the token's final `cle`: the number
        // of `m` with `cle[m] < ceil(C / 2)`. `cle` is cumulative, so those
        // `m` are `0 .. med - 1` (a thermometer code) and `med` is where it
        // ends: an OR of one-hot terms, not a count ----
        self.ltp[0].next = true;
        for m in 0..(self._kc - 1) {
            self.ltp[m + 1].next = self.cle[m].q.val() < self.k_need.val();
        }
        for kk in self._kc..(self._kc + 1) {
            self.ltp[kk].next = false;
        }
        self.med.next = self.k_zero8.val();
        for m in 0..self._kc {
            if self.ltp[m].val() & !self.ltp[m + 1].val() {
                self.med.next = self.med.val() | self.mval[m].val();
            }
        }
        // ---- S2: the median into its memory and its bank's key histogram ----
        self.med_ram.we.next = self.s2_v.q.val();
        self.med_ram.waddr.next = self.s2_addr.q.val();
        self.med_ram.wdata.next = bit_cast::<WMAX, 8>(self.med.val());
        self.hidx.next = bit_cast::<16, 8>(self.med.val());
        if self.s2_bank.q.val() {
            self.hidx.next = bit_cast::<16, 8>(self.med.val()) + self.k_kk.val();
        }
        for i in 0..(2 * self._kc) {
            if self.s2_v.q.val() & (self.hidx.val() == self.hix[i].val()) {
                self.hist[i].en.next = true;
                self.hist[i].d.next = self.hist[i].q.val() + self.k_one8.val();
            }
        }
        if self.s2_v.q.val() & self.s2_end.q.val() {
            if self.s2_bank.q.val() {
                self.pend1.en.next = true;
                self.pend1.d.next = true;
            } else {
                self.pend0.en.next = true;
                self.pend0.d.next = true;
            }
        }

        // ---- the sort: scan the keys highest first, then place B rows ----
        self.med_ram.re.next = false;
        self.med_ram.raddr.next = bit_cast::<32, 16>(self.sm.q.val());
        if self.sbank.q.val() {
            self.med_ram.raddr.next = bit_cast::<32, 16>(self.sm.q.val()) + self.k_b32.val();
        }
        self.p1_v.en.next = true;
        self.p1_v.d.next = false;
        self.p1_t.en.next = true;
        self.p1_t.d.next = self.sm.q.val().get_bits::<8>(0);
        self.p1_last.en.next = true;
        self.p1_last.d.next = self.sm.q.val() == self.k_b1_16.val();
        if self.st.q.val() == self.k_idle.val() {
            if (self.pend0.q.val() & !self.sbank.q.val()) | (self.pend1.q.val() & self.sbank.q.val()) {
                self.st.en.next = true;
                self.st.d.next = self.k_scan.val();
                self.sm.en.next = true;
                self.sm.d.next = self.k_km1.val();
                self.acc.en.next = true;
                self.acc.d.next = self.k_zero8.val();
            }
        }
        // the histogram entry of the scanned key (scan) or the landing key (place)
        self.hidx.next = self.sm.q.val();
        if self.st.q.val() != self.k_scan.val() {
            self.hidx.next = bit_cast::<16, 8>(self.med_ram.rdata.val().get_bits::<8>(0) & self.k_rmask.val());
        }
        if self.sbank.q.val() {
            self.hidx.next = self.hidx.val() + self.k_kk.val();
        }
        self.hv.next = self.k_zero8.val();
        for i in 0..(2 * self._kc) {
            if self.hidx.val() == self.hix[i].val() {
                self.hv.next = self.hist[i].q.val();
            }
        }
        if self.st.q.val() == self.k_scan.val() {
            // start of key m = rows with a higher key
            for i in 0..(2 * self._kc) {
                if self.hidx.val() == self.hix[i].val() {
                    self.hist[i].en.next = true;
                    self.hist[i].d.next = self.acc.q.val();
                }
            }
            self.acc.en.next = true;
            self.acc.d.next = self.acc.q.val() + self.hv.val();
            self.sm.en.next = true;
            self.sm.d.next = self.sm.q.val() - self.k_one16.val();
            if self.sm.q.val() == self.k_zero16.val() {
                self.sm.d.next = self.k_zero16.val();
                self.st.en.next = true;
                self.st.d.next = self.k_place.val();
            }
        }
        if self.st.q.val() == self.k_place.val() {
            self.med_ram.re.next = true;
            self.p1_v.d.next = true;
            self.sm.en.next = true;
            self.sm.d.next = self.sm.q.val() + self.k_one16.val();
            if self.sm.q.val() == self.k_b1_16.val() {
                self.st.en.next = true;
                self.st.d.next = self.k_wait.val();
            }
        }
        // a landing row goes to its key's next position, arrival order within a key
        self.pidx.next = bit_cast::<16, 8>(self.hv.val());
        if self.sbank.q.val() {
            self.pidx.next = bit_cast::<16, 8>(self.hv.val()) + self.k_b16.val();
        }
        if self.p1_v.q.val() {
            for i in 0..(2 * self._kc) {
                if self.hidx.val() == self.hix[i].val() {
                    self.hist[i].en.next = true;
                    self.hist[i].d.next = self.hist[i].q.val() + self.k_one8.val();
                }
            }
            for i in 0..(2 * self._b) {
                if self.pidx.val() == self.pix[i].val() {
                    self.perm[i].en.next = true;
                    self.perm[i].d.next = self.p1_t.q.val();
                }
            }
            if self.p1_last.q.val() {
                self.st.en.next = true;
                self.st.d.next = self.k_idle.val();
                self.sbank.en.next = true;
                self.sbank.d.next = !self.sbank.q.val();
                for i in 0..self._kc {
                    if !self.sbank.q.val() {
                        self.hist[i].en.next = true;
                        self.hist[i].d.next = self.k_zero8.val();
                    }
                }
                for kk in self._kc..(self._kc + 1) {
                    for i in 0..self._kc {
                        if self.sbank.q.val() {
                            self.hist[kk + i].en.next = true;
                            self.hist[kk + i].d.next = self.k_zero8.val();
                        }
                    }
                }
                if self.sbank.q.val() {
                    self.pend1.en.next = true;
                    self.pend1.d.next = false;
                    self.srt1.en.next = true;
                    self.srt1.d.next = true;
                } else {
                    self.pend0.en.next = true;
                    self.pend0.d.next = false;
                    self.srt0.en.next = true;
                    self.srt0.d.next = true;
                }
            }
        }
        if self.rel.val() {
            if self.rel_bank.val() {
                self.srt1.en.next = true;
                self.srt1.d.next = false;
            } else {
                self.srt0.en.next = true;
                self.srt0.d.next = false;
            }
        }
        self.sorted0.next = self.srt0.q.val();
        self.sorted1.next = self.srt1.q.val();

        // ---- read ports: arrival index of a stored row, to addresses ----
        self.ia.next = bit_cast::<16, 32>((self.a_rho.val() << self.k_lp.val()) + self.a_t.val());
        if self.a_bank.val() {
            self.ia.next = self.ia.val() + self.k_b16.val();
        }
        self.pa.next = self.k_zero8.val();
        for i in 0..(2 * self._b) {
            self.pm.next = self.k_zero8.val();
            if self.ia.val() == self.pix[i].val() {
                self.pm.next = self.perm[i].q.val();
            }
            self.pa.next = self.pa.val() | self.pm.val();
        }
        self.mul.next = self.a_k.val();
        if self.a_bank.val() {
            self.mul.next = self.a_k.val() + self.k_bbt.val();
        }
        for s in 0..self._nm {
            self.mul.next = self.mul.val() + (bit_cast::<32, 8>(self.pa.val()) << self.mulsh[s].val());
        }
        self.a_addr.next = self.mul.val();

        self.ia.next = bit_cast::<16, 32>((self.q_rho.val() << self.k_lp.val()) + self.q_t.val());
        if self.q_bank.val() {
            self.ia.next = self.ia.val() + self.k_b16.val();
        }
        self.pa.next = self.k_zero8.val();
        for i in 0..(2 * self._b) {
            self.pm.next = self.k_zero8.val();
            if self.ia.val() == self.pix[i].val() {
                self.pm.next = self.perm[i].q.val();
            }
            self.pa.next = self.pa.val() | self.pm.val();
        }
        self.mul.next = self.q_k.val();
        if self.q_bank.val() {
            self.mul.next = self.q_k.val() + self.k_bbt.val();
        }
        for s in 0..self._nm {
            self.mul.next = self.mul.val() + (bit_cast::<32, 8>(self.pa.val()) << self.mulsh[s].val());
        }
        self.q_addr.next = self.mul.val();

        self.ia.next = bit_cast::<16, 32>(self.m_i.val());
        if self.m_bank.val() {
            self.ia.next = self.ia.val() + self.k_b16.val();
        }
        self.pa.next = self.k_zero8.val();
        for i in 0..(2 * self._b) {
            self.pm.next = self.k_zero8.val();
            if self.ia.val() == self.pix[i].val() {
                self.pm.next = self.perm[i].q.val();
            }
            self.pa.next = self.pa.val() | self.pm.val();
        }
        self.l_maddr.next = bit_cast::<32, 8>(self.pa.val());
        if self.m_bank.val() {
            self.l_maddr.next = bit_cast::<32, 8>(self.pa.val()) + self.k_b32.val();
        }
        self.m_addr.next = self.l_maddr.val();

        // ---- permutation items: entries wptr .. wptr + per_item - 1 ----
        // `wptr` only holds multiples of per_item, so the item is one of
        // ceil(B / per_item) fixed words per bank, selected as AND-OR (a
        // lookup per entry behind an adder was the median build's critical
        // path); with one index matching, the lookups above are AND-OR too
        self.wd.next = bit_cast::<WMAX, 1>(false.into());
        for bb in self._b..(self._b + 1) {
            for i in 0..self._b {
                self.pa.next = self.k_zero8.val();
                if self.wptr.q.val() == self.k_went[i].val() {
                    if self.w_bank.val() {
                        self.pa.next = self.perm[bb + i].q.val();
                    } else {
                        self.pa.next = self.perm[i].q.val();
                    }
                }
                self.wd.next = self.wd.val() | (bit_cast::<WMAX, 8>(self.pa.val()) << self.k_eshe[i].val());
            }
        }
        self.w_data.next = self.wd.val();
        self.w_last.next = (self.wptr.q.val() + self.k_epi.val()) >= self.k_b16.val();
        self.l_keep.next = self.k_keep_full.val();
        if (self.wptr.q.val() + self.k_epi.val()) >= self.k_b16.val() {
            self.l_keep.next = self.k_keep_last.val();
        }
        self.w_keep.next = self.l_keep.val();
        if self.w_next.val() {
            self.wptr.en.next = true;
            self.wptr.d.next = self.wptr.q.val() + self.k_epi.val();
            if (self.wptr.q.val() + self.k_epi.val()) >= self.k_b16.val() {
                self.wptr.d.next = self.k_zero16.val();
            }
        }
    }
);

#[derive(LogicBlock)]
pub struct MedFields {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Accepted K and V beats (the copies are written as the sides are).
    pub k_acc: Signal<In, Bit>,
    pub k_codes: Signal<In, Bits<WMAX>>,
    pub v_acc: Signal<In, Bit>,
    pub v_codes: Signal<In, Bits<WMAX>>,
    /// Both blocks of the bank are in and sorted.
    pub go0: Signal<In, Bit>,
    pub go1: Signal<In, Bit>,
    pub rel: Signal<In, Bit>,
    pub rel_bank: Signal<In, Bit>,
    /// The bank's fields and headers are ready.
    pub done0: Signal<Out, Bit>,
    pub done1: Signal<Out, Bit>,
    /// The stored row to read (to `MedSort`'s `q` port) and its address.
    pub q_bank: Signal<Out, Bit>,
    pub q_rho: Signal<Out, Bits<32>>,
    pub q_t: Signal<Out, Bits<32>>,
    pub q_k: Signal<Out, Bits<32>>,
    pub q_addr: Signal<In, Bits<32>>,
    /// The header of block (x_bank, x_side), with x_nf as bit 25.
    pub x_bank: Signal<In, Bit>,
    pub x_side: Signal<In, Bit>,
    pub x_nf: Signal<In, Bit>,
    pub x_hdr: Signal<Out, Bits<32>>,
    /// A pack's fields, written into the sides' fields memories (whose
    /// fill-time words are not used with `median`).
    pub f_we: Signal<Out, Bit>,
    pub f_waddr: Signal<Out, Bits<32>>,
    pub k_fwd: Signal<Out, Bits<WMAX>>,
    pub v_fwd: Signal<Out, Bits<WMAX>>,
    kcode: DpRam<32, WMAX>,
    vcode: DpRam<32, WMAX>,
    kca: Reg<Bits<32>>,
    vca: Reg<Bits<32>>,
    busy: Reg<Bit>,
    fbank: Reg<Bit>,
    // the pass's counters in 16 bits (`t < P`, `kk < BT`, `rho < B / P`):
    // a 32-bit increment of `t` was the median build's critical path
    rho: Reg<Bits<16>>,
    kk: Reg<Bits<16>>,
    t: Reg<Bits<16>>,
    faddr: Reg<Bits<32>>,
    p1_v: Reg<Bit>,
    p1_t0: Reg<Bit>,
    p1_tl: Reg<Bit>,
    p1_end: Reg<Bit>,
    p1_bank: Reg<Bit>,
    p1_faddr: Reg<Bits<32>>,
    /// per side, one per beat position of a copy row (`pw`): half `i` reads
    /// the row's bits from `i lanes r`
    kf: Vec<SideFields>,
    vf: Vec<SideFields>,
    // ---- pass width 2 only (length 1, else 0): the odd beat positions ----
    /// a token's even beat, held until its odd beat writes the copy row
    kh: Vec<Reg<Bits<WMAX>>>,
    vh: Vec<Reg<Bits<WMAX>>>,
    /// the high half's fields word, written the cycle after the low half's (one write
    /// port; the next pack's comes `P >= 2` cycles later)
    f2: Vec<Reg<Bit>>,
    f2a: Vec<Reg<Bits<32>>>,
    kw2: Vec<Reg<Bits<WMAX>>>,
    vw2: Vec<Reg<Bits<WMAX>>>,
    /// the block's widths' sums, both halves, registered before the header
    /// arithmetic (its path stays that of one sum)
    ksum: Reg<Bits<32>>,
    vsum: Reg<Bits<32>>,
    e4: Reg<Bit>,
    e4b: Reg<Bit>,
    hk0: Reg<Bits<32>>,
    hk1: Reg<Bits<32>>,
    hv0: Reg<Bits<32>>,
    hv1: Reg<Bits<32>>,
    d0: Reg<Bit>,
    d1: Reg<Bit>,
    /// the block's last fields word landed one (`e1`), two (`e2`) and
    /// three (`e3`) cycles ago: the widths' sum is complete in `e3`'s cycle
    e1: Reg<Bit>,
    e1b: Reg<Bit>,
    e2: Reg<Bit>,
    e2b: Reg<Bit>,
    e3: Reg<Bit>,
    e3b: Reg<Bit>,
    hk: Signal<Local, Bits<32>>,
    // Outputs the core reads are built in locals and written once: an
    // output written twice in one pass glitches, and Icarus then re-wakes
    // the core's block and this one without end at one time step.
    l_fwe: Signal<Local, Bit>,
    l_fwaddr: Signal<Local, Bits<32>>,
    l_kfwd: Signal<Local, Bits<WMAX>>,
    l_vfwd: Signal<Local, Bits<WMAX>>,
    l_xhdr: Signal<Local, Bits<32>>,
    hv: Signal<Local, Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_cend: Constant<Bits<32>>,
    k_p1: Constant<Bits<16>>,
    k_bt1: Constant<Bits<16>>,
    k_rows1: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_rbt: Constant<Bits<32>>,
    k_lp: Constant<Bits<32>>,
    k_5: Constant<Bits<32>>,
    k_fixed_k: Constant<Bits<32>>,
    k_fixed_v: Constant<Bits<32>>,
    k_fb31_k: Constant<Bits<32>>,
    k_fb31_v: Constant<Bits<32>>,
    k_rhdr_k: Constant<Bits<32>>,
    k_rhdr_v: Constant<Bits<32>>,
    k_nfb: Constant<Bits<32>>,
    k_pw16: Constant<Bits<16>>,
    k_pw32: Constant<Bits<32>>,
    k_pwsh: Constant<Bits<32>>,
    /// half `i`'s offset in a copy row, `i lanes r` (length `pw`)
    k_half_k: Vec<Constant<Bits<32>>>,
    k_half_v: Vec<Constant<Bits<32>>>,
    // pass width 2 only (length 1, else 0)
    k_mask_k: Vec<Constant<Bits<WMAX>>>,
    k_mask_v: Vec<Constant<Bits<WMAX>>>,
    _pw: usize,
    _pw1: usize,
}

impl MedFields {
    pub fn new(g: &EncGeometry, module: &str) -> Self {
        let mem = memories(g, module);
        let (l, b, rows) = (g.lanes, g.block, g.block / g.pack);
        let (k, v) = (&g.k, &g.v);
        let pw = b * b.trailing_zeros() as usize / 32;
        let qw = pass_width(g);
        MedFields {
            clock: Default::default(),
            reset: Default::default(),
            k_acc: Default::default(),
            k_codes: Default::default(),
            v_acc: Default::default(),
            v_codes: Default::default(),
            go0: Default::default(),
            go1: Default::default(),
            rel: Default::default(),
            rel_bank: Default::default(),
            done0: Default::default(),
            done1: Default::default(),
            q_bank: Default::default(),
            q_rho: Default::default(),
            q_t: Default::default(),
            q_k: Default::default(),
            q_addr: Default::default(),
            x_bank: Default::default(),
            x_side: Default::default(),
            x_nf: Default::default(),
            x_hdr: Default::default(),
            f_we: Default::default(),
            f_waddr: Default::default(),
            k_fwd: Default::default(),
            v_fwd: Default::default(),
            kcode: ram(&mem[1]),
            vcode: ram(&mem[2]),
            kca: Reg::default(),
            vca: Reg::default(),
            busy: Reg::default(),
            fbank: Reg::default(),
            rho: Reg::default(),
            kk: Reg::default(),
            t: Reg::default(),
            faddr: Reg::default(),
            p1_v: Reg::default(),
            p1_t0: Reg::default(),
            p1_tl: Reg::default(),
            p1_end: Reg::default(),
            p1_bank: Reg::default(),
            p1_faddr: Reg::default(),
            kf: (0..qw).map(|_| SideFields::new(l, k.raw, k.wb)).collect(),
            vf: (0..qw).map(|_| SideFields::new(l, v.raw, v.wb)).collect(),
            kh: regs(qw - 1),
            vh: regs(qw - 1),
            f2: regs(qw - 1),
            f2a: regs(qw - 1),
            kw2: regs(qw - 1),
            vw2: regs(qw - 1),
            ksum: Reg::default(),
            vsum: Reg::default(),
            e4: Reg::default(),
            e4b: Reg::default(),
            hk0: Reg::default(),
            hk1: Reg::default(),
            hv0: Reg::default(),
            hv1: Reg::default(),
            d0: Reg::default(),
            d1: Reg::default(),
            e1: Reg::default(),
            e1b: Reg::default(),
            e2: Reg::default(),
            e2b: Reg::default(),
            e3: Reg::default(),
            e3b: Reg::default(),
            hk: Default::default(),
            l_fwe: Default::default(),
            l_fwaddr: Default::default(),
            l_kfwd: Default::default(),
            l_vfwd: Default::default(),
            l_xhdr: Default::default(),
            hv: Default::default(),
            k_zero32: c(0),
            k_one32: c(1),
            k_cend: c((2 * b * g.beats - 1) as u64),
            k_p1: c((g.pack - 1) as u64),
            k_bt1: c((g.beats - qw) as u64),
            k_rows1: c((rows - 1) as u64),
            k_one16: c(1),
            k_zero16: c(0),
            k_rbt: c((rows * g.beats) as u64),
            k_lp: c(g.pack.trailing_zeros() as u64),
            k_5: c(5),
            k_fixed_k: c((1 + b + pw) as u64),
            k_fixed_v: c((1 + b) as u64),
            k_fb31_k: c((rows * g.vector * (k.raw + k.wb) + 31) as u64),
            k_fb31_v: c((rows * g.vector * (v.raw + v.wb) + 31) as u64),
            k_rhdr_k: c((k.raw as u64) << 20 | 1 << 24),
            k_rhdr_v: c((v.raw as u64) << 20),
            k_nfb: c(1 << 25),
            k_pw16: c(qw as u64),
            k_pw32: c(qw as u64),
            k_pwsh: c(qw.trailing_zeros() as u64),
            k_half_k: consts((0..qw).map(|i| (i * l * k.raw) as u64)),
            k_half_v: consts((0..qw).map(|i| (i * l * v.raw) as u64)),
            k_mask_k: (1..qw).map(|_| low_ones(l * k.raw)).collect(),
            k_mask_v: (1..qw).map(|_| low_ones(l * v.raw)).collect(),
            _pw: qw,
            _pw1: qw - 1,
        }
    }
}

reg_logic!(MedFields;
    regs [kca, vca, busy, fbank, rho, kk, t, faddr, p1_v, p1_t0, p1_tl, p1_end, p1_bank, p1_faddr, ksum, vsum,
          hk0, hk1, hv0, hv1, d0, d1, e1, e1b, e2, e2b, e3, e3b, e4, e4b];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        self.kcode.clock.next = self.clock.val();
        self.vcode.clock.next = self.clock.val();

        // ---- copies of the code memories, written as the sides write theirs ----
        self.kcode.we.next = self.k_acc.val();
        self.kcode.waddr.next = self.kca.q.val();
        self.kcode.wdata.next = self.k_codes.val();
        self.vcode.we.next = self.v_acc.val();
        self.vcode.waddr.next = self.vca.q.val();
        self.vcode.wdata.next = self.v_codes.val();
        for i in 0..self._pw1 {
            // pass width 2: row `a / 2` holds beats `a` (low) and `a + 1`
            // (high); `BT` even, so a row never spans two tokens
            self.kh[i].clock.next = self.clock.val();
            self.kh[i].reset.next = self.reset.val();
            self.kh[i].en.next = false;
            self.kh[i].d.next = self.kh[i].q.val();
            self.vh[i].clock.next = self.clock.val();
            self.vh[i].reset.next = self.reset.val();
            self.vh[i].en.next = false;
            self.vh[i].d.next = self.vh[i].q.val();
            self.kcode.we.next = self.k_acc.val() & self.kca.q.val().get_bit(0);
            self.kcode.waddr.next = self.kca.q.val() >> self.k_one32.val();
            self.kcode.wdata.next = ((self.k_codes.val() & self.k_mask_k[i].val()) << self.k_half_k[i + 1].val()) | self.kh[i].q.val();
            self.vcode.we.next = self.v_acc.val() & self.vca.q.val().get_bit(0);
            self.vcode.waddr.next = self.vca.q.val() >> self.k_one32.val();
            self.vcode.wdata.next = ((self.v_codes.val() & self.k_mask_v[i].val()) << self.k_half_v[i + 1].val()) | self.vh[i].q.val();
            if self.k_acc.val() & !self.kca.q.val().get_bit(0) {
                self.kh[i].en.next = true;
                self.kh[i].d.next = self.k_codes.val() & self.k_mask_k[i].val();
            }
            if self.v_acc.val() & !self.vca.q.val().get_bit(0) {
                self.vh[i].en.next = true;
                self.vh[i].d.next = self.v_codes.val() & self.k_mask_v[i].val();
            }
        }
        if self.k_acc.val() {
            self.kca.en.next = true;
            self.kca.d.next = self.kca.q.val() + self.k_one32.val();
            if self.kca.q.val() == self.k_cend.val() {
                self.kca.d.next = self.k_zero32.val();
            }
        }
        if self.v_acc.val() {
            self.vca.en.next = true;
            self.vca.d.next = self.vca.q.val() + self.k_one32.val();
            if self.vca.q.val() == self.k_cend.val() {
                self.vca.d.next = self.k_zero32.val();
            }
        }

        // ---- the pass: stored pack rows, beat positions, P rows each ----
        self.q_bank.next = self.fbank.q.val();
        self.q_rho.next = bit_cast::<32, 16>(self.rho.q.val());
        self.q_t.next = bit_cast::<32, 16>(self.t.q.val());
        self.q_k.next = bit_cast::<32, 16>(self.kk.q.val());
        self.kcode.re.next = self.busy.q.val();
        self.vcode.re.next = self.busy.q.val();
        self.kcode.raddr.next = self.q_addr.val() >> self.k_pwsh.val();
        self.vcode.raddr.next = self.q_addr.val() >> self.k_pwsh.val();
        self.p1_v.en.next = true;
        self.p1_v.d.next = self.busy.q.val();
        self.p1_t0.en.next = true;
        self.p1_t0.d.next = self.t.q.val() == self.k_zero16.val();
        self.p1_tl.en.next = true;
        self.p1_tl.d.next = self.t.q.val() == self.k_p1.val();
        self.p1_end.en.next = true;
        self.p1_end.d.next = (self.t.q.val() == self.k_p1.val())
            & (self.kk.q.val() == self.k_bt1.val())
            & (self.rho.q.val() == self.k_rows1.val());
        self.p1_bank.en.next = true;
        self.p1_bank.d.next = self.fbank.q.val();
        self.p1_faddr.en.next = true;
        self.p1_faddr.d.next = self.faddr.q.val();
        if self.busy.q.val() {
            self.t.en.next = true;
            self.t.d.next = self.t.q.val() + self.k_one16.val();
            if self.t.q.val() == self.k_p1.val() {
                self.t.d.next = self.k_zero16.val();
                self.faddr.en.next = true;
                self.faddr.d.next = self.faddr.q.val() + self.k_pw32.val();
                self.kk.en.next = true;
                self.kk.d.next = self.kk.q.val() + self.k_pw16.val();
                if self.kk.q.val() == self.k_bt1.val() {
                    self.kk.d.next = self.k_zero16.val();
                    self.rho.en.next = true;
                    self.rho.d.next = self.rho.q.val() + self.k_one16.val();
                    if self.rho.q.val() == self.k_rows1.val() {
                        self.rho.d.next = self.k_zero16.val();
                        self.busy.en.next = true;
                        self.busy.d.next = false;
                        self.fbank.en.next = true;
                        self.fbank.d.next = !self.fbank.q.val();
                    }
                }
            }
        }

        // ---- landing: per-side extremes; a pack's last row writes its fields ----
        self.ksum.en.next = true;
        self.ksum.d.next = self.k_zero32.val();
        self.vsum.en.next = true;
        self.vsum.d.next = self.k_zero32.val();
        for i in 0..self._pw {
            self.kf[i].clock.next = self.clock.val();
            self.kf[i].reset.next = self.reset.val();
            self.kf[i].v.next = self.p1_v.q.val();
            self.kf[i].t0.next = self.p1_t0.q.val();
            self.kf[i].tl.next = self.p1_tl.q.val();
            self.kf[i].clear.next = false;
            self.kf[i].rdata.next = self.kcode.rdata.val() >> self.k_half_k[i].val();
            self.vf[i].clock.next = self.clock.val();
            self.vf[i].reset.next = self.reset.val();
            self.vf[i].v.next = self.p1_v.q.val();
            self.vf[i].t0.next = self.p1_t0.q.val();
            self.vf[i].tl.next = self.p1_tl.q.val();
            self.vf[i].clear.next = false;
            self.vf[i].rdata.next = self.vcode.rdata.val() >> self.k_half_v[i].val();
            self.ksum.d.next = self.ksum.d.val() + self.kf[i].wt.val();
            self.vsum.d.next = self.vsum.d.val() + self.vf[i].wt.val();
        }
        self.l_fwe.next = self.p1_v.q.val() & self.p1_tl.q.val();
        self.l_fwaddr.next = self.p1_faddr.q.val();
        self.l_kfwd.next = self.kf[0].fw.val();
        self.l_vfwd.next = self.vf[0].fw.val();
        for i in 0..self._pw1 {
            self.f2[i].clock.next = self.clock.val();
            self.f2[i].reset.next = self.reset.val();
            self.f2[i].en.next = true;
            self.f2[i].d.next = self.p1_v.q.val() & self.p1_tl.q.val();
            self.f2a[i].clock.next = self.clock.val();
            self.f2a[i].reset.next = self.reset.val();
            self.f2a[i].en.next = true;
            self.f2a[i].d.next = self.p1_faddr.q.val() + self.k_one32.val();
            self.kw2[i].clock.next = self.clock.val();
            self.kw2[i].reset.next = self.reset.val();
            self.kw2[i].en.next = true;
            self.kw2[i].d.next = self.kf[i + 1].fw.val();
            self.vw2[i].clock.next = self.clock.val();
            self.vw2[i].reset.next = self.reset.val();
            self.vw2[i].en.next = true;
            self.vw2[i].d.next = self.vf[i + 1].fw.val();
            if self.f2[i].q.val() {
                self.l_fwe.next = true;
                self.l_fwaddr.next = self.f2a[i].q.val();
                self.l_kfwd.next = self.kw2[i].q.val();
                self.l_vfwd.next = self.vw2[i].q.val();
            }
        }
        self.f_we.next = self.l_fwe.val();
        self.f_waddr.next = self.l_fwaddr.val();
        self.k_fwd.next = self.l_kfwd.val();
        self.v_fwd.next = self.l_vfwd.val();
        self.hk.next = (self.k_fixed_k.val() + ((self.k_fb31_k.val() + (self.ksum.q.val() << self.k_lp.val())) >> self.k_5.val()))
            | self.k_rhdr_k.val();
        self.hv.next = (self.k_fixed_v.val() + ((self.k_fb31_v.val() + (self.vsum.q.val() << self.k_lp.val())) >> self.k_5.val()))
            | self.k_rhdr_v.val();

        // ---- four cycles after the block's last fields word (the sums are
        // pipelined, timing; both halves' added in `e3`'s cycle): both
        // headers, the bank done ----
        self.e1.en.next = true;
        self.e1.d.next = self.p1_v.q.val() & self.p1_end.q.val();
        self.e1b.en.next = true;
        self.e1b.d.next = self.p1_bank.q.val();
        self.e2.en.next = true;
        self.e2.d.next = self.e1.q.val();
        self.e2b.en.next = true;
        self.e2b.d.next = self.e1b.q.val();
        self.e3.en.next = true;
        self.e3.d.next = self.e2.q.val();
        self.e3b.en.next = true;
        self.e3b.d.next = self.e2b.q.val();
        self.e4.en.next = true;
        self.e4.d.next = self.e3.q.val();
        self.e4b.en.next = true;
        self.e4b.d.next = self.e3b.q.val();
        if self.e4.q.val() {
            if self.e4b.q.val() {
                self.hk1.en.next = true;
                self.hk1.d.next = self.hk.val();
                self.hv1.en.next = true;
                self.hv1.d.next = self.hv.val();
                self.d1.en.next = true;
                self.d1.d.next = true;
            } else {
                self.hk0.en.next = true;
                self.hk0.d.next = self.hk.val();
                self.hv0.en.next = true;
                self.hv0.d.next = self.hv.val();
                self.d0.en.next = true;
                self.d0.d.next = true;
            }
        }
        if self.rel.val() {
            if self.rel_bank.val() {
                self.d1.en.next = true;
                self.d1.d.next = false;
            } else {
                self.d0.en.next = true;
                self.d0.d.next = false;
            }
        }
        // start the next bank's pass once the last one's sums are read (its
        // clear would otherwise meet them in flight)
        if !self.busy.q.val() & !self.p1_v.q.val() & !self.e1.q.val() & !self.e2.q.val() & !self.e3.q.val() & !self.e4.q.val()
            & ((self.go0.val() & !self.d0.q.val() & !self.fbank.q.val()) | (self.go1.val() & !self.d1.q.val() & self.fbank.q.val()))
        {
            self.busy.en.next = true;
            self.busy.d.next = true;
            self.rho.en.next = true;
            self.rho.d.next = self.k_zero16.val();
            self.kk.en.next = true;
            self.kk.d.next = self.k_zero16.val();
            self.t.en.next = true;
            self.t.d.next = self.k_zero16.val();
            self.faddr.en.next = true;
            self.faddr.d.next = self.k_zero32.val();
            if self.fbank.q.val() {
                self.faddr.d.next = self.k_rbt.val();
            }
            for i in 0..self._pw {
                self.kf[i].clear.next = true;
                self.vf[i].clear.next = true;
            }
        }
        self.done0.next = self.d0.q.val();
        self.done1.next = self.d1.q.val();

        // ---- output side: headers and fields reads ----
        self.l_xhdr.next = self.hk0.q.val();
        if self.x_side.val() {
            self.l_xhdr.next = self.hv0.q.val();
        }
        if self.x_bank.val() {
            self.l_xhdr.next = self.hk1.q.val();
            if self.x_side.val() {
                self.l_xhdr.next = self.hv1.q.val();
            }
        }
        if self.x_nf.val() {
            self.l_xhdr.next = self.l_xhdr.val() | self.k_nfb.val();
        }
        self.x_hdr.next = self.l_xhdr.val();
    }
);

/// One side of the fields pass: a pack's per-lane extremes over its `P`
/// landing words (`t0` starts a pack), its fields word `{width, min}` per
/// lane, and the block's widths' sum, which counts a pack's last word three
/// cycles after it lands (`clear` starts a block).
#[derive(LogicBlock)]
pub struct SideFields {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub v: Signal<In, Bit>,
    pub t0: Signal<In, Bit>,
    pub tl: Signal<In, Bit>,
    pub clear: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<WMAX>>,
    pub fw: Signal<Out, Bits<WMAX>>,
    /// the widths' sum of the block's words landed up to three cycles ago
    pub wt: Signal<Out, Bits<32>>,
    mn: Reg<Bits<WMAX>>,
    mx: Reg<Bits<WMAX>>,
    acc: Reg<Bits<32>>,
    /// a pack's last word: its lanes' widths, `r` bits each at lane `j r`,
    /// summed by a tree into `sr` a cycle later, added to `acc` a cycle
    /// after that: the tree runs between registers, after neither the
    /// extremes' compares nor before `acc`'s add (timing)
    wr: Reg<Bits<WMAX>>,
    sr: Reg<Bits<16>>,
    wv: Signal<Local, Bits<WMAX>>,
    lw: Signal<Local, Bits<8>>,
    wn: Vec<Signal<Local, Bits<16>>>,
    cc: Signal<Local, Bits<8>>,
    omin: Signal<Local, Bits<8>>,
    omax: Signal<Local, Bits<8>>,
    nmin: Signal<Local, Bits<8>>,
    nmax: Signal<Local, Bits<8>>,
    dd: Signal<Local, Bits<8>>,
    ww: Signal<Local, Bits<8>>,
    nmin_w: Signal<Local, Bits<WMAX>>,
    nmax_w: Signal<Local, Bits<WMAX>>,
    fwl: Signal<Local, Bits<WMAX>>,
    sofs: Vec<Constant<Bits<32>>>,
    fofs: Vec<Constant<Bits<32>>>,
    fofs_w: Vec<Constant<Bits<32>>>,
    pow2: Vec<Constant<Bits<8>>>,
    wval: Vec<Constant<Bits<8>>>,
    k_rmask: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_zero32: Constant<Bits<32>>,
    _lanes: usize,
    _r: usize,
}

impl SideFields {
    pub fn new(l: usize, r: usize, wb: usize) -> Self {
        SideFields {
            clock: Default::default(),
            reset: Default::default(),
            v: Default::default(),
            t0: Default::default(),
            tl: Default::default(),
            clear: Default::default(),
            rdata: Default::default(),
            fw: Default::default(),
            wt: Default::default(),
            mn: Reg::default(),
            mx: Reg::default(),
            acc: Reg::default(),
            wr: Reg::default(),
            sr: Reg::default(),
            wn: sigs(2 * l - 1),
            cc: Default::default(),
            omin: Default::default(),
            omax: Default::default(),
            nmin: Default::default(),
            nmax: Default::default(),
            dd: Default::default(),
            ww: Default::default(),
            nmin_w: Default::default(),
            nmax_w: Default::default(),
            fwl: Default::default(),
            wv: Default::default(),
            lw: Default::default(),
            sofs: consts((0..l).map(|j| (j * r) as u64)),
            fofs: consts((0..l).map(|j| (j * (r + wb)) as u64)),
            fofs_w: consts((0..l).map(|j| (j * (r + wb) + r) as u64)),
            pow2: consts((0..r).map(|i| 1u64 << i)),
            wval: consts((0..r).map(|i| i as u64 + 1)),
            k_rmask: c((1 << r) - 1),
            k_zero8: c(0),
            k_zero32: c(0),
            _lanes: l,
            _r: r,
        }
    }
}

reg_logic!(SideFields;
    regs [mn, mx, acc, wr, sr];
    masks [];
    #[hdl_gen]
    fn update(&mut self) {
        self.fwl.next = bit_cast::<WMAX, 1>(false.into());
        self.nmin_w.next = bit_cast::<WMAX, 1>(false.into());
        self.nmax_w.next = bit_cast::<WMAX, 1>(false.into());
        self.wv.next = bit_cast::<WMAX, 1>(false.into());
        for ln in self._lanes..(self._lanes + 1) {
        for j in 0..self._lanes {
            self.cc.next = self.rdata.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.omin.next = self.mn.q.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.omax.next = self.mx.q.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.nmin.next = self.cc.val();
            self.nmax.next = self.cc.val();
            if !self.t0.val() {
                if self.omin.val() < self.cc.val() {
                    self.nmin.next = self.omin.val();
                }
                if self.omax.val() > self.cc.val() {
                    self.nmax.next = self.omax.val();
                }
            }
            self.nmin_w.next = self.nmin_w.val() | (bit_cast::<WMAX, 8>(self.nmin.val()) << self.sofs[j].val());
            self.nmax_w.next = self.nmax_w.val() | (bit_cast::<WMAX, 8>(self.nmax.val()) << self.sofs[j].val());
            self.dd.next = (self.nmax.val() - self.nmin.val()) & self.k_rmask.val();
            self.ww.next = self.k_zero8.val();
            for i in 0..self._r {
                if self.dd.val() >= self.pow2[i].val() {
                    self.ww.next = self.wval[i].val();
                }
            }
            self.fwl.next = self.fwl.val()
                | (bit_cast::<WMAX, 8>(self.nmin.val()) << self.fofs[j].val())
                | (bit_cast::<WMAX, 8>(self.ww.val()) << self.fofs_w[j].val());
            self.wv.next = self.wv.val() | (bit_cast::<WMAX, 8>(self.ww.val()) << self.sofs[j].val());
            self.lw.next = self.wr.q.val().get_bits::<8>(self.sofs[j].val().index()) & self.k_rmask.val();
            self.wn[ln - 1 + j].next = bit_cast::<16, 8>(self.lw.val());
        }
        // the tree's internal nodes, children first
        for i in 0..(self._lanes - 1) {
            self.wn[ln - 2 - i].next = self.wn[2 * (ln - 2 - i) + 1].val() + self.wn[2 * (ln - 2 - i) + 2].val();
        }
        }
        self.wr.en.next = true;
        self.wr.d.next = bit_cast::<WMAX, 1>(false.into());
        if self.v.val() {
            self.mn.en.next = true;
            self.mn.d.next = self.nmin_w.val();
            self.mx.en.next = true;
            self.mx.d.next = self.nmax_w.val();
            if self.tl.val() {
                self.wr.d.next = self.wv.val();
            }
        }
        self.acc.en.next = true;
        self.sr.en.next = true;
        self.sr.d.next = self.wn[0].val();
        self.acc.d.next = self.acc.q.val() + bit_cast::<32, 16>(self.sr.q.val());
        if self.clear.val() {
            self.acc.d.next = self.k_zero32.val();
        }
        self.fw.next = self.fwl.val();
        self.wt.next = self.acc.q.val();
    }
);
