//! Oaken memory management unit.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit": (1) address and
//! transfer-size management (dense and sparse management tables, pages
//! allocated on demand from a free list), (2) read-write granularity and
//! order (each token appended after the previous one, reads as maximal
//! bursts). Spec: docs/spec.md §10 (behaviour), §10.11 (ports and timing).
//! Model: sim/src/oaken/mmu.rs.
//!
//! One command at a time, as a state machine: decode (slot lookup, command
//! checks), the error checks of §10.8 in their precedence (a write reads the
//! token count and every sparse fill and counts the pages the whole token
//! needs before anything changes), then the commit. Placement and read
//! descriptors come from one stream walker (`mmu_stream.rs`, its own block
//! with its registers): page by page over a stream's virtual range, each
//! piece either merges with the pending contiguous range or flushes it, and
//! the pending range is cut greedily into AXI4 bursts as soon as a whole
//! burst is known (§10.7). This block keeps the state register and the
//! other states; the register wiring (clock, reset, hold, value masks) is
//! written once by `prim::reg::reg_logic!`.
//!
//! Storage is five single-port memories (`prim::ram::SpRam`, each its own
//! Verilog module, the SRAM swap points), none reset:
//! - pages: every stream's page list, `S * (C_m + heads * (C_d + C_s))`
//!   page numbers (the spec's dense table and sparse table pages);
//! - fills: each sparse stream's fill, `S * heads` words;
//! - counts: the segment counts, `S * heads * max_seq_len` words of
//!   `segments` bytes;
//! - free list: the FIFO's `phys_pages` entries;
//! - tokens: each (slot, layer)'s token count, `S` words.
//! Nothing reads a word it did not write since reset: a (slot, layer)'s
//! token count and sparse fills count only while its valid bit (a register,
//! cleared by reset and when a slot opens) is set; page lists and counts are
//! read only below what the token count and fills say is held; a free-list
//! entry that was never pushed since reset is its own index (a watermark
//! register counts pushes), which is the reset content of §10.4.

use super::mmu_counts::MmuCounts;
use super::mmu_decode::MmuDecode;
use super::mmu_free_list::MmuFreeList;
use super::mmu_page_need::MmuPageNeed;
use super::mmu_response::MmuResponse;
use super::mmu_stream::MmuStream;
use crate::prim::ram::{addr_bits, MulConst, SpRam, ValidBits};
use crate::prim::reg::{reg_logic, Reg};
use rust_hdl::prelude::*;
use sim::oaken::mmu::MmuParams;

pub use super::mmu_geometry::{
    mask, MmuGeometry, CW, D, KIND_COUNTS, KIND_DESC, KIND_STATUS, LEN_BITS, MA, OP_FREE, OP_READ, OP_WRITE, PAGES_BITS,
    STREAM_BITS, TOKEN_BITS,
};

// States, `k_st[n]` (rust-hdl resolves an index only from a literal or a
// loop variable, so the code names them by number):
//    0 IDLE,   1 DECODE,   2 SLOT,   3 W_TOK,   4 W_NEED0,   5 W_NEED
//    6 W_CHECK,   7 START,   8 FETCH,   9 PIECE,  10 MERGE,  11 CUT
//   12 NEXT,  13 W_COUNTS,  14 W_TOKW,  15 R_TOK,  16 RC_FIRST,  17 RC_EMIT
//   18 F_TOK,  19 F_RD,  20 F_PUSH,  21 F_NEXTL,  22 STATUS,  23 ERR
// START .. CUT and F_PUSH are (also) the stream walker's (`mmu_stream.rs`),
// which names its states as constants and gives the next state as st_to.
const STATES: u64 = 24;

#[derive(LogicBlock)]
pub struct OakenMmu {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high: every slot empty, the free list 0 .. phys_pages - 1
    pub reset: Signal<In, Bit>,
    // ---- command channel ----
    /// command valid
    pub cmd_valid: Signal<In, Bit>,
    /// command taken when cmd_valid and cmd_ready; low from a command until its status beat is out
    pub cmd_ready: Signal<Out, Bit>,
    /// 0 write, 1 read, 2 free (3: BadCommand)
    pub cmd_op: Signal<In, Bits<2>>,
    /// sequence id
    pub cmd_seq: Signal<In, Bits<16>>,
    /// layer (write, read)
    pub cmd_layer: Signal<In, Bits<8>>,
    /// head (read)
    pub cmd_head: Signal<In, Bits<8>>,
    /// write: segment counts, counts[h*segments+s] at [8i+7:8i]
    pub cmd_counts: Vec<Signal<In, Bits<8>>>,
    // ---- response channel ----
    /// response beat valid
    pub rsp_valid: Signal<Out, Bit>,
    /// response beat taken when rsp_valid and rsp_ready
    pub rsp_ready: Signal<In, Bit>,
    /// 0 descriptor, 1 segment counts of one token (read), 2 status (the command's last beat)
    pub rsp_kind: Signal<Out, Bits<2>>,
    /// descriptor: stream index (0 metadata, 1+2h dense h, 2+2h sparse h)
    pub rsp_stream: Signal<Out, Bits<STREAM_BITS>>,
    /// descriptor: physical byte address
    pub rsp_addr: Signal<Out, Bits<D>>,
    /// descriptor: length in bytes, 1..4096
    pub rsp_len: Signal<Out, Bits<LEN_BITS>>,
    /// counts: token index; status: write token index, read token count
    pub rsp_token: Signal<Out, Bits<TOKEN_BITS>>,
    /// counts: the token's segment counts of the read head, segment s at [8s+7:8s]
    pub rsp_counts: Vec<Signal<Out, Bits<8>>>,
    /// status: 0 ok, 1 BadCommand, 2 NoSlot, 3 SeqTooLong, 4 OutOfPages, 5 UnknownSeq, 6 DoubleFree
    pub rsp_status: Signal<Out, Bits<3>>,
    /// status (ok): the sequence's slot
    pub rsp_slot: Signal<Out, Bits<8>>,
    /// status (ok write): the write opened the sequence
    pub rsp_opened: Signal<Out, Bit>,
    /// status (ok): pages taken (write) or returned (free)
    pub rsp_pages: Signal<Out, Bits<PAGES_BITS>>,
    /// the status beat, last of the command's response
    pub rsp_last: Signal<Out, Bit>,

    // ---- sub-blocks ----
    dec: MmuDecode,
    cnts: MmuCounts,
    resp: MmuResponse,
    fl: MmuFreeList,
    /// Pages needed by the metadata, dense and sparse streams.
    pneed: Vec<MmuPageNeed>,
    /// The stream walker and its registers (START .. CUT, F_PUSH).
    walk: MmuStream,
    // ---- memories ----
    m_pt: SpRam<MA, 16>,
    m_fill: SpRam<MA, D>,
    m_cnt: SpRam<MA, CW>,
    m_tok: SpRam<16, D>,
    // ---- constant multipliers ----
    mul_l: MulConst<D>,
    mul_row: MulConst<MA>,
    mul_h: MulConst<MA>,
    mul_tm: MulConst<D>,
    mul_td: MulConst<D>,
    mul_c: MulConst<MA>,

    // ---- registers ----
    rdy: Reg<Bit>,
    st: Reg<Bits<5>>,
    vld: ValidBits,
    slot: Reg<Bits<D>>,
    opened: Reg<Bit>,
    sl: Reg<Bits<D>>,
    err: Reg<Bits<3>>,
    tok: Reg<Bits<D>>,
    need: Reg<Bits<D>>,
    nd: Reg<Bits<D>>,
    caddr: Reg<Bits<MA>>,
    nsw: Reg<Bits<D>>,
    nf: Reg<Bits<D>>,
    nsr: Reg<Bits<D>>,
    hs: Reg<Bits<D>>,
    hh: Reg<Bits<D>>,
    si: Reg<Bits<D>>,
    lay: Reg<Bits<D>>,
    rowb: Reg<Bits<MA>>,
    fb: Reg<Bits<MA>>,
    t: Reg<Bits<D>>,
    ptot: Reg<Bits<D>>,

    // ---- combinational ----
    e_go: Signal<Local, Bit>,
    e_kind: Signal<Local, Bits<2>>,
    e_addr: Signal<Local, Bits<D>>,
    e_len: Signal<Local, Bits<LEN_BITS>>,
    e_token: Signal<Local, Bits<TOKEN_BITS>>,
    e_status: Signal<Local, Bits<3>>,
    e_full: Signal<Local, Bit>,
    vld_sl: Signal<Local, Bit>,
    hs_nx: Signal<Local, Bits<D>>,
    hsel: Signal<Local, Bits<D>>,
    need_t: Signal<Local, Bits<D>>,
    sl_c: Signal<Local, Bits<D>>,
    fm: Signal<Local, Bits<D>>,
    fd: Signal<Local, Bits<D>>,
    tok_rd: Signal<Local, Bits<D>>,
    fill_rd: Signal<Local, Bits<D>>,
    commit_open: Signal<Local, Bit>,

    // ---- constants ----
    k_st: Vec<Constant<Bits<5>>>,
    k_op_w: Constant<Bits<2>>,
    k_op_r: Constant<Bits<2>>,
    k_kind_desc: Constant<Bits<2>>,
    k_kind_counts: Constant<Bits<2>>,
    k_kind_status: Constant<Bits<2>>,
    k_h1: Constant<Bits<D>>,
    k_l1: Constant<Bits<D>>,
    k_ns1: Constant<Bits<D>>,
    k_msl: Constant<Bits<D>>,
    k_mb: Constant<Bits<D>>,
    k_db: Constant<Bits<D>>,
    k_msl48: Constant<Bits<MA>>,
    k_one48: Constant<Bits<MA>>,
    k_zero: Constant<Bits<D>>,
    k_one: Constant<Bits<D>>,
    k_zero_cw: Constant<Bits<CW>>,
    k_err_bad: Constant<Bits<3>>,
    k_err_noslot: Constant<Bits<3>>,
    k_err_long: Constant<Bits<3>>,
    k_err_pages: Constant<Bits<3>>,
    k_err_unknown: Constant<Bits<3>>,
    k_err_double: Constant<Bits<3>>,
    k_ok: Constant<Bits<3>>,
    // Value masks of the wide registers (`mmu_geometry::mask`): a register's bits
    // above its largest value are constant 0, so synthesis drops them and
    // every adder and comparison on it is only as wide as the parameters need.
    k_m_slot: Constant<Bits<D>>,
    k_m_sl: Constant<Bits<D>>,
    k_m_tok: Constant<Bits<D>>,
    k_m_need: Constant<Bits<D>>,
    k_m_ns: Constant<Bits<D>>,
    k_m_h: Constant<Bits<D>>,
    k_m_si: Constant<Bits<D>>,
    k_m_lay: Constant<Bits<D>>,
    k_m_caddr: Constant<Bits<MA>>,
    k_m_pbase: Constant<Bits<MA>>,
    k_m_fb: Constant<Bits<MA>>,

    _nc: usize,
    _seg: usize,
}

impl OakenMmu {
    /// The MMU for `p`, its memories named `<module>_<table>_ram`.
    pub fn new(p: &MmuParams, module: &str) -> Self {
        let g = MmuGeometry::new(p);
        let mems = g.memories(module);
        let ram = |k: usize| (&mems[k].module, &mems[k].name, mems[k].depth, mems[k].width);
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let (ms, l, h, seg) = (p.max_seqs, p.layers, p.heads, g.segments);
        let nc = h * seg;
        let pb = p.page_bytes as u64;
        assert!(addr_bits(g.rows) <= 16 && addr_bits(p.phys_pages) <= 16);
        let (a, b, cc, d, e) = (ram(0), ram(1), ram(2), ram(3), ram(4));
        // largest values of the masked registers (see `mask`)
        let (np, msl) = (p.phys_pages as u64, p.max_seq_len as u64);
        let pages_for = |b: usize| (b as u64).div_ceil(pb) + 1;
        let need_max = pages_for(p.meta_bytes) + h as u64 * (pages_for(p.dense_bytes) + pages_for(p.head_dim));
        OakenMmu {
            clock: Default::default(),
            reset: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_op: Default::default(),
            cmd_seq: Default::default(),
            cmd_layer: Default::default(),
            cmd_head: Default::default(),
            cmd_counts: (0..nc).map(|_| Default::default()).collect(),
            rsp_valid: Default::default(),
            rsp_ready: Default::default(),
            rsp_kind: Default::default(),
            rsp_stream: Default::default(),
            rsp_addr: Default::default(),
            rsp_len: Default::default(),
            rsp_token: Default::default(),
            rsp_counts: (0..seg).map(|_| Default::default()).collect(),
            rsp_status: Default::default(),
            rsp_slot: Default::default(),
            rsp_opened: Default::default(),
            rsp_pages: Default::default(),
            rsp_last: Default::default(),
            dec: MmuDecode::new(ms, l, h, &(0..nc).map(|i| p.segment_len(i % seg) as u64).collect::<Vec<_>>()),
            cnts: MmuCounts::new(h, seg),
            resp: MmuResponse::new(seg),
            fl: MmuFreeList::new(p.phys_pages, d.0, d.1, d.3),
            pneed: (0..3).map(|_| MmuPageNeed::new(pb)).collect(),
            walk: MmuStream::new(&g, mems[0].depth as u64),
            m_pt: SpRam::new(a.0, a.1, a.2, a.3),
            m_fill: SpRam::new(b.0, b.1, b.2, b.3),
            m_cnt: SpRam::new(cc.0, cc.1, cc.2, cc.3),
            m_tok: SpRam::new(e.0, e.1, e.2, e.3),
            mul_l: MulConst::new(l as u64),
            mul_row: MulConst::new(g.row_words),
            mul_h: MulConst::new(h as u64),
            mul_tm: MulConst::new(p.meta_bytes as u64),
            mul_td: MulConst::new(p.dense_bytes as u64),
            mul_c: MulConst::new(p.max_seq_len as u64),
            rdy: Reg::new(true),
            st: Reg::default(),
            vld: ValidBits::new(&format!("{module}_row_valid"), g.rows, l),
            slot: Reg::default(),
            opened: Reg::default(),
            sl: Reg::default(),
            err: Reg::default(),
            tok: Reg::default(),
            need: Reg::default(),
            nd: Reg::default(),
            caddr: Reg::default(),
            nsw: Reg::default(),
            nf: Reg::default(),
            nsr: Reg::default(),
            hs: Reg::default(),
            hh: Reg::default(),
            si: Reg::default(),
            lay: Reg::default(),
            rowb: Reg::default(),
            fb: Reg::default(),
            t: Reg::default(),
            ptot: Reg::default(),
            e_go: Default::default(),
            e_kind: Default::default(),
            e_addr: Default::default(),
            e_len: Default::default(),
            e_token: Default::default(),
            e_status: Default::default(),
            e_full: Default::default(),
            vld_sl: Default::default(),
            hs_nx: Default::default(),
            hsel: Default::default(),
            need_t: Default::default(),
            sl_c: Default::default(),
            fm: Default::default(),
            fd: Default::default(),
            tok_rd: Default::default(),
            fill_rd: Default::default(),
            commit_open: Default::default(),
            k_st: (0..STATES).map(c).collect(),
            k_op_w: c(OP_WRITE),
            k_op_r: c(OP_READ),
            k_kind_desc: c(KIND_DESC),
            k_kind_counts: c(KIND_COUNTS),
            k_kind_status: c(KIND_STATUS),
            k_h1: c(h as u64 - 1),
            k_l1: c(l as u64 - 1),
            k_ns1: c(g.streams as u64 - 1),
            k_msl: c(p.max_seq_len as u64),
            k_mb: c(p.meta_bytes as u64),
            k_db: c(p.dense_bytes as u64),
            k_msl48: c(p.max_seq_len as u64),
            k_one48: c(1),
            k_zero: c(0),
            k_one: c(1),
            k_zero_cw: Constant::new(Bits::<CW>::default()),
            k_err_bad: c(1),
            k_err_noslot: c(2),
            k_err_long: c(3),
            k_err_pages: c(4),
            k_err_unknown: c(5),
            k_err_double: c(6),
            k_ok: c(0),
            k_m_slot: c(mask(ms as u64 - 1)),
            k_m_sl: c(mask(g.rows as u64 - 1)),
            k_m_tok: c(mask(msl)),
            k_m_need: c(mask(need_max.max(np))),
            k_m_ns: c(mask(p.head_dim as u64)),
            k_m_h: c(mask(h as u64)),
            k_m_si: c(mask(g.streams as u64)),
            k_m_lay: c(mask(l as u64 - 1)),
            k_m_caddr: c(mask(mems[2].depth as u64 + msl)),
            k_m_pbase: c(mask(mems[0].depth as u64)),
            k_m_fb: c(mask(mems[1].depth as u64)),
            _nc: nc,
            _seg: seg,
        }
    }
}

reg_logic!(OakenMmu;
    regs [rdy, st, slot, opened, sl, err, tok, need, nd, nf, nsw, caddr, hs, nsr, hh, si, lay, rowb, fb, t, ptot];
    masks [
        slot & k_m_slot, sl & k_m_sl, tok & k_m_tok, t & k_m_tok, need & k_m_need, nd & k_m_need, nf & k_m_need,
        ptot & k_m_need, nsw & k_m_ns, nsr & k_m_ns, hs & k_m_h, hh & k_m_h, si & k_m_si, lay & k_m_lay,
        caddr & k_m_caddr, rowb & k_m_pbase, fb & k_m_fb,
    ];
    #[hdl_gen]
    fn update(&mut self) {
        // command decode and slot table
        self.dec.clock.next = self.clock.val();
        self.dec.reset.next = self.reset.val();
        self.dec.take.next = false;
        self.dec.cmd_op.next = self.cmd_op.val();
        self.dec.cmd_seq.next = self.cmd_seq.val();
        self.dec.cmd_layer.next = self.cmd_layer.val();
        self.dec.cmd_head.next = self.cmd_head.val();
        for i in 0..self._nc {
            self.dec.cmd_counts[i].next = self.cmd_counts[i].val();
            self.cnts.counts[i].next = self.dec.counts[i].val();
        }
        self.dec.open.next = false;
        self.dec.free.next = false;
        self.dec.slot.next = self.slot.q.val();
        self.vld.clock.next = self.clock.val();
        self.vld.reset.next = self.reset.val();
        self.vld.rd_row.next = bit_cast::<16, D>(self.sl.q.val());
        self.vld.clr.next = false;
        self.vld.clr_group.next = bit_cast::<16, D>(self.slot.q.val());
        self.vld.set.next = false;
        self.vld.set_row.next = bit_cast::<16, D>(self.sl.q.val());

        // memories: idle unless a state below (or the walker) accesses them
        self.m_pt.clock.next = self.clock.val();
        self.m_fill.clock.next = self.clock.val();
        self.m_cnt.clock.next = self.clock.val();
        self.m_tok.clock.next = self.clock.val();
        self.m_pt.en.next = self.walk.pt_en.val();
        self.m_pt.we.next = self.walk.pt_we.val();
        self.m_pt.addr.next = self.walk.pt_addr.val();
        self.m_pt.wdata.next = self.walk.pt_wdata.val();
        self.m_fill.en.next = false;
        self.m_fill.we.next = false;
        self.m_fill.addr.next = self.fb.q.val();
        self.m_fill.wdata.next = self.k_zero.val();
        self.m_cnt.en.next = false;
        self.m_cnt.we.next = false;
        self.m_cnt.addr.next = self.caddr.q.val();
        self.m_cnt.wdata.next = self.k_zero_cw.val();
        self.fl.clock.next = self.clock.val();
        self.fl.reset.next = self.reset.val();
        self.fl.rd.next = self.walk.fl_rd.val();
        self.fl.pop.next = self.walk.fl_pop.val();
        self.fl.push.next = false;
        self.fl.push_page.next = self.m_pt.rdata.val();
        self.m_tok.en.next = false;
        self.m_tok.we.next = false;
        self.m_tok.addr.next = bit_cast::<16, D>(self.sl.q.val());
        self.m_tok.wdata.next = self.k_zero.val();

        // valid bit of the current (slot, layer) row
        self.vld_sl.next = self.vld.rd_q.val();
        // memory words, read as 0 where not valid
        self.tok_rd.next = self.k_zero.val();
        if self.vld_sl.val() & !self.opened.q.val() {
            self.tok_rd.next = self.m_tok.rdata.val();
        }
        self.fill_rd.next = self.k_zero.val();
        if self.vld_sl.val() & !self.opened.q.val() {
            self.fill_rd.next = self.m_fill.rdata.val();
        }

        // the head of the stream after this one (NEXT): a read's head, else
        // that of stream si + 1, (si + 1 - 1) / 2
        self.hs_nx.next = self.si.q.val() >> self.k_one.val();
        if self.dec.op.val() == self.k_op_r.val() {
            self.hs_nx.next = self.dec.head.val();
        }
        // Count sums per head (a running sum over the head's segments,
        // restarted at each head: the head is a constant per count, so no
        // adder waits for a head select), then selected: head hsel's sum and
        // counts word (W_NEED: the next head, hh + 1; W_COUNTS: hh), and head
        // hs_nx's sum (for the next stream, loaded in NEXT).
        self.hsel.next = self.hh.q.val();
        if self.st.q.val() == self.k_st[5].val() {
            self.hsel.next = self.hh.q.val() + self.k_one.val();
        }
        self.cnts.hsel.next = self.hsel.val();
        self.cnts.hs_nx.next = self.hs_nx.val();

        // fills of the fixed-size streams and the pages they need per token
        self.mul_tm.x.next = self.tok.q.val();
        self.mul_td.x.next = self.tok.q.val();
        self.fm.next = self.mul_tm.y.val();
        self.fd.next = self.mul_td.y.val();
        // pages a stream of fill f takes for b more bytes:
        // ceil((f + b) / pb) - ceil(f / pb) = ceil((r + b) / pb) - (r != 0),
        // r = f mod pb: only the offset in the last page matters
        self.pneed[0].fill.next = self.fm.val();
        self.pneed[0].bytes.next = self.k_mb.val();
        self.pneed[1].fill.next = self.fd.val();
        self.pneed[1].bytes.next = self.k_db.val();
        self.pneed[2].fill.next = self.fill_rd.val();
        self.pneed[2].bytes.next = self.nsw.q.val();

        // row index of (slot, layer); its page-table row and fills/counts bases
        self.mul_l.x.next = self.slot.q.val();
        self.sl_c.next = self.mul_l.y.val();
        if !self.dec.freeing.val() {
            self.sl_c.next = self.mul_l.y.val() + self.dec.layer.val();
        }
        self.mul_row.x.next = bit_cast::<MA, D>(self.sl.q.val());
        self.mul_h.x.next = bit_cast::<MA, D>(self.sl.q.val());
        // counts of (row, head, token 0): a read's head, a write's head 0
        self.mul_c.x.next = self.fb.q.val();
        if self.dec.op.val() == self.k_op_r.val() {
            self.mul_c.x.next = self.fb.q.val() + bit_cast::<MA, D>(self.dec.head.val());
        }

        // the stream walker: the current stream, its pages and bursts
        self.walk.clock.next = self.clock.val();
        self.walk.reset.next = self.reset.val();
        self.walk.st.next = self.st.q.val();
        self.walk.op.next = self.dec.op.val();
        self.walk.si.next = self.si.q.val();
        self.walk.hs.next = self.hs.q.val();
        self.walk.rowb.next = self.rowb.q.val();
        self.walk.fm.next = self.fm.val();
        self.walk.fd.next = self.fd.val();
        self.walk.fill_rd.next = self.fill_rd.val();
        self.walk.nsr.next = self.nsr.q.val();
        self.walk.pt_rdata.next = self.m_pt.rdata.val();
        self.walk.fl_rdata.next = self.fl.rdata.val();
        self.walk.fl_head.next = self.fl.head.val();
        self.walk.fl_fresh.next = self.fl.fresh.val();
        self.walk.can_emit.next = self.resp.can_emit.val();

        // ---------------- response register ----------------
        self.e_go.next = self.walk.e_go.val();
        self.e_kind.next = self.k_kind_desc.val();
        self.e_addr.next = self.walk.e_addr.val();
        self.e_len.next = self.walk.e_len.val();
        self.e_token.next = bit_cast::<TOKEN_BITS, D>(self.k_zero.val());
        self.e_status.next = self.k_ok.val();
        self.e_full.next = false;
        self.commit_open.next = false;
        self.need_t.next = self.k_zero.val();

        // ---------------- the command state machine ----------------
        // (the walker's states START .. CUT and F_PUSH load `st` below)
        if self.st.q.val() == self.k_st[0].val() {
            // IDLE: take a command
            if self.cmd_valid.val() & self.rdy.q.val() {
                self.rdy.en.next = true;
                self.rdy.d.next = false;
                self.dec.take.next = true;
                self.st.en.next = true;
                self.st.d.next = self.k_st[1].val();
            }
        } else if self.st.q.val() == self.k_st[1].val() {
            // DECODE: BadCommand, then the slot (§10.3, §10.8)
            self.st.en.next = true;
            self.err.en.next = true;
            self.slot.en.next = true;
            self.opened.en.next = true;
            self.opened.d.next = false;
            self.ptot.en.next = true;
            self.ptot.d.next = self.k_zero.val();
            self.lay.en.next = true;
            self.lay.d.next = self.k_zero.val();
            self.slot.d.next = self.dec.i_open.val();
            self.st.d.next = self.k_st[2].val();
            if self.dec.bad.val() {
                self.err.d.next = self.k_err_bad.val();
                self.st.d.next = self.k_st[23].val();
            } else if self.dec.op.val() == self.k_op_w.val() {
                if !self.dec.f_open.val() {
                    self.opened.d.next = true;
                    if self.dec.f_empty.val() {
                        self.slot.d.next = self.dec.i_empty.val();
                    } else if self.dec.f_anyfreed.val() {
                        self.slot.d.next = self.dec.i_anyfreed.val();
                    } else {
                        self.err.d.next = self.k_err_noslot.val();
                        self.st.d.next = self.k_st[23].val();
                    }
                }
            } else if !self.dec.f_open.val() {
                self.err.d.next = self.k_err_unknown.val();
                if self.dec.freeing.val() & self.dec.f_freed.val() {
                    self.err.d.next = self.k_err_double.val();
                }
                self.st.d.next = self.k_st[23].val();
            }
        } else if self.st.q.val() == self.k_st[2].val() {
            // SLOT: the (slot, layer) row; read its token count
            self.sl.en.next = true;
            self.sl.d.next = self.sl_c.val();
            self.m_tok.en.next = true;
            self.m_tok.addr.next = bit_cast::<16, D>(self.sl_c.val());
            self.st.en.next = true;
            if self.dec.op.val() == self.k_op_w.val() {
                self.st.d.next = self.k_st[3].val();
            } else if self.dec.op.val() == self.k_op_r.val() {
                self.st.d.next = self.k_st[15].val();
            } else {
                self.st.d.next = self.k_st[18].val();
            }
        } else if self.st.q.val() == self.k_st[3].val() {
            // W_TOK: token index, SeqTooLong
            self.tok.en.next = true;
            self.tok.d.next = self.tok_rd.val();
            self.rowb.en.next = true;
            self.rowb.d.next = self.mul_row.y.val();
            self.fb.en.next = true;
            self.fb.d.next = self.mul_h.y.val();
            self.hh.en.next = true;
            self.hh.d.next = self.k_zero.val();
            self.st.en.next = true;
            self.st.d.next = self.k_st[4].val();
            if self.tok_rd.val() >= self.k_msl.val() {
                self.err.en.next = true;
                self.err.d.next = self.k_err_long.val();
                self.st.d.next = self.k_st[23].val();
            }
        } else if self.st.q.val() == self.k_st[4].val() {
            // W_NEED0: pages of the metadata stream (those of each dense stream
            // are added per head); head 0's count sum; read sparse fill 0
            self.need.en.next = true;
            self.need.d.next = self.pneed[0].need.val();
            self.nd.en.next = true;
            self.nd.d.next = self.pneed[1].need.val();
            self.nf.en.next = true;
            self.nf.d.next = self.k_zero.val();
            self.nsw.en.next = true;
            self.nsw.d.next = self.cnts.nsum.val();
            self.m_fill.en.next = true;
            self.m_fill.addr.next = self.fb.q.val();
            self.st.en.next = true;
            self.st.d.next = self.k_st[5].val();
        } else if self.st.q.val() == self.k_st[5].val() {
            // W_NEED: pages of dense stream hh and sparse stream hh (into nf,
            // summed into need a cycle later); the next head's count sum and fill
            self.nf.en.next = true;
            self.nf.d.next = self.nd.q.val() + self.pneed[2].need.val();
            self.need.en.next = true;
            self.need.d.next = self.need.q.val() + self.nf.q.val();
            self.nsw.en.next = true;
            self.nsw.d.next = self.cnts.nsum.val();
            self.hh.en.next = true;
            self.hh.d.next = self.hh.q.val() + self.k_one.val();
            if self.hh.q.val() == self.k_h1.val() {
                self.st.en.next = true;
                self.st.d.next = self.k_st[6].val();
            } else {
                self.m_fill.en.next = true;
                self.m_fill.addr.next = self.fb.q.val() + bit_cast::<MA, D>(self.hh.q.val() + self.k_one.val());
            }
        } else if self.st.q.val() == self.k_st[6].val() {
            // W_CHECK: OutOfPages, else commit
            self.st.en.next = true;
            self.need_t.next = self.need.q.val() + self.nf.q.val();
            if self.need_t.val() > self.fl.count.val() {
                self.err.en.next = true;
                self.err.d.next = self.k_err_pages.val();
                self.st.d.next = self.k_st[23].val();
            } else {
                self.commit_open.next = self.opened.q.val();
                self.ptot.en.next = true;
                self.ptot.d.next = self.need_t.val();
                self.si.en.next = true;
                self.si.d.next = self.k_zero.val();
                self.hs.en.next = true;
                self.hs.d.next = self.k_zero.val();
                self.st.d.next = self.k_st[7].val();
            }
        } else if self.st.q.val() == self.k_st[7].val() {
            // START (the walker takes the stream's virtual range): a sparse
            // write's new fill
            if (self.dec.op.val() == self.k_op_w.val()) & self.walk.is_sparse.val() {
                self.m_fill.en.next = true;
                self.m_fill.we.next = true;
                self.m_fill.addr.next = self.fb.q.val() + bit_cast::<MA, D>(self.hs.q.val());
                self.m_fill.wdata.next = self.walk.fill_old.val() + self.walk.nb.val();
            }
        } else if self.st.q.val() == self.k_st[12].val() {
            // NEXT: the next stream (write and free: all in stream order; read:
            // metadata, dense head, sparse head)
            self.st.en.next = true;
            self.si.en.next = true;
            self.si.d.next = self.si.q.val() + self.k_one.val();
            self.st.d.next = self.k_st[7].val();
            // the next stream's head, its count sum, and its fill, for START (used if it is sparse)
            self.hs.en.next = true;
            self.hs.d.next = self.hs_nx.val();
            self.nsr.en.next = true;
            self.nsr.d.next = self.cnts.nsum_s.val();
            self.m_fill.en.next = true;
            self.m_fill.addr.next = self.fb.q.val() + bit_cast::<MA, D>(self.si.q.val() >> self.k_one.val());
            if self.dec.op.val() == self.k_op_r.val() {
                self.m_fill.addr.next = self.fb.q.val() + bit_cast::<MA, D>(self.dec.head.val());
                if self.walk.is_meta.val() {
                    self.si.d.next = (self.dec.head.val() << self.k_one.val()) + self.k_one.val();
                } else if self.walk.is_sparse.val() {
                    self.si.en.next = false;
                    self.m_fill.en.next = false;
                    self.t.en.next = true;
                    self.t.d.next = self.k_zero.val();
                    // token 0's counts address, registered for RC_FIRST
                    self.caddr.en.next = true;
                    self.caddr.d.next = self.mul_c.y.val();
                    self.st.d.next = self.k_st[16].val();
                }
            } else if self.si.q.val() == self.k_ns1.val() {
                self.si.en.next = false;
                self.m_fill.en.next = false;
                self.hh.en.next = true;
                self.hh.d.next = self.k_zero.val();
                self.caddr.en.next = true;
                self.caddr.d.next = self.mul_c.y.val() + bit_cast::<MA, D>(self.tok.q.val());
                if self.dec.freeing.val() {
                    self.st.d.next = self.k_st[21].val();
                } else {
                    self.st.d.next = self.k_st[13].val();
                }
            }
        } else if self.st.q.val() == self.k_st[13].val() {
            // W_COUNTS: head hh's counts at the token index (caddr), then the next head's
            self.m_cnt.en.next = true;
            self.m_cnt.we.next = true;
            self.m_cnt.wdata.next = self.cnts.cw.val();
            self.caddr.en.next = true;
            self.caddr.d.next = self.caddr.q.val() + self.k_msl48.val();
            self.hh.en.next = true;
            self.hh.d.next = self.hh.q.val() + self.k_one.val();
            if self.hh.q.val() == self.k_h1.val() {
                self.st.en.next = true;
                self.st.d.next = self.k_st[14].val();
            }
        } else if self.st.q.val() == self.k_st[14].val() {
            // W_TOKW: count the token
            self.m_tok.en.next = true;
            self.m_tok.we.next = true;
            self.m_tok.wdata.next = self.tok.q.val() + self.k_one.val();
            self.vld.set.next = true;
            self.st.en.next = true;
            self.st.d.next = self.k_st[22].val();
        } else if (self.st.q.val() == self.k_st[15].val()) | (self.st.q.val() == self.k_st[18].val()) {
            // R_TOK (read) and F_TOK (free, per layer): the row's token
            // count; then its streams. Two codes so the op shows in waves.
            self.tok.en.next = true;
            self.tok.d.next = self.tok_rd.val();
            self.rowb.en.next = true;
            self.rowb.d.next = self.mul_row.y.val();
            self.fb.en.next = true;
            self.fb.d.next = self.mul_h.y.val();
            self.si.en.next = true;
            self.si.d.next = self.k_zero.val();
            self.hs.en.next = true;
            self.hs.d.next = self.k_zero.val();
            self.st.en.next = true;
            self.st.d.next = self.k_st[7].val();
        } else if self.st.q.val() == self.k_st[16].val() {
            // RC_FIRST: read token 0's counts
            self.st.en.next = true;
            if self.tok.q.val() == self.k_zero.val() {
                self.st.d.next = self.k_st[22].val();
            } else {
                self.m_cnt.en.next = true;
                self.caddr.en.next = true;
                self.caddr.d.next = self.caddr.q.val() + self.k_one48.val();
                self.st.d.next = self.k_st[17].val();
            }
        } else if self.st.q.val() == self.k_st[17].val() {
            // RC_EMIT: one counts beat per token, the next token read as it goes
            if self.resp.can_emit.val() {
                self.e_go.next = true;
                self.e_kind.next = self.k_kind_counts.val();
                self.e_token.next = bit_cast::<TOKEN_BITS, D>(self.t.q.val());
                self.t.en.next = true;
                self.t.d.next = self.t.q.val() + self.k_one.val();
                if self.t.q.val() + self.k_one.val() == self.tok.q.val() {
                    self.st.en.next = true;
                    self.st.d.next = self.k_st[22].val();
                } else {
                    self.m_cnt.en.next = true;
                    self.caddr.en.next = true;
                    self.caddr.d.next = self.caddr.q.val() + self.k_one48.val();
                }
            }
        } else if self.st.q.val() == self.k_st[19].val() {
            // F_RD: read virtual page 0
            self.m_pt.en.next = true;
            self.st.en.next = true;
            self.st.d.next = self.k_st[20].val();
        } else if self.st.q.val() == self.k_st[20].val() {
            // F_PUSH: push page j onto the tail (the walker reads page j + 1)
            self.fl.push.next = true;
            self.ptot.en.next = true;
            self.ptot.d.next = self.ptot.q.val() + self.k_one.val();
        } else if self.st.q.val() == self.k_st[21].val() {
            // F_NEXTL: the next layer, or the slot is freed
            self.st.en.next = true;
            if self.lay.q.val() == self.k_l1.val() {
                self.dec.free.next = true;
                self.st.d.next = self.k_st[22].val();
            } else {
                self.lay.en.next = true;
                self.lay.d.next = self.lay.q.val() + self.k_one.val();
                self.sl.en.next = true;
                self.sl.d.next = self.sl.q.val() + self.k_one.val();
                self.m_tok.en.next = true;
                self.m_tok.addr.next = bit_cast::<16, D>(self.sl.q.val() + self.k_one.val());
                self.st.d.next = self.k_st[18].val();
            }
        } else if self.st.q.val() == self.k_st[22].val() {
            // STATUS: success
            if self.resp.can_emit.val() {
                self.e_go.next = true;
                self.e_kind.next = self.k_kind_status.val();
                self.e_full.next = true;
                self.rdy.en.next = true;
                self.rdy.d.next = true;
                self.st.en.next = true;
                self.st.d.next = self.k_st[0].val();
            }
        } else if self.st.q.val() == self.k_st[23].val() {
            // ERR: the error's status, nothing else
            if self.resp.can_emit.val() {
                self.e_go.next = true;
                self.e_kind.next = self.k_kind_status.val();
                self.e_status.next = self.err.q.val();
                self.rdy.en.next = true;
                self.rdy.d.next = true;
                self.st.en.next = true;
                self.st.d.next = self.k_st[0].val();
            }
        }

        if self.walk.st_go.val() {
            self.st.en.next = true;
            self.st.d.next = self.walk.st_to.val();
        }

        // opening a slot: its id, its state, and every row of it invalid
        self.dec.open.next = self.commit_open.val();
        self.vld.clr.next = self.commit_open.val();

        // ---------------- response register ----------------
        self.resp.clock.next = self.clock.val();
        self.resp.reset.next = self.reset.val();
        self.resp.rsp_ready.next = self.rsp_ready.val();
        self.resp.e_go.next = self.e_go.val();
        self.resp.e_kind.next = self.e_kind.val();
        self.resp.e_addr.next = self.e_addr.val();
        self.resp.e_len.next = self.e_len.val();
        self.resp.e_token.next = self.e_token.val();
        self.resp.e_status.next = self.e_status.val();
        self.resp.e_full.next = self.e_full.val();
        self.resp.stream.next = self.si.q.val();
        self.resp.op.next = self.dec.op.val();
        self.resp.slot.next = self.slot.q.val();
        self.resp.opened.next = self.opened.q.val();
        self.resp.tok.next = self.tok.q.val();
        self.resp.pages.next = self.ptot.q.val();
        self.resp.counts_word.next = self.m_cnt.rdata.val();
        for k in 0..self._seg {
            self.rsp_counts[k].next = self.resp.rsp_counts[k].val();
        }
        self.cmd_ready.next = self.rdy.q.val();
        self.rsp_valid.next = self.resp.rsp_valid.val();
        self.rsp_kind.next = self.resp.rsp_kind.val();
        self.rsp_stream.next = self.resp.rsp_stream.val();
        self.rsp_addr.next = self.resp.rsp_addr.val();
        self.rsp_len.next = self.resp.rsp_len.val();
        self.rsp_token.next = self.resp.rsp_token.val();
        self.rsp_status.next = self.resp.rsp_status.val();
        self.rsp_slot.next = self.resp.rsp_slot.val();
        self.rsp_opened.next = self.resp.rsp_opened.val();
        self.rsp_pages.next = self.resp.rsp_pages.val();
        self.rsp_last.next = self.resp.rsp_last.val();
    }
);
