//! The Oaken MMU's stream walker: page by page over the current stream's
//! virtual range (a write's new bytes, a read's whole fill, a free's held
//! pages), each page held (from the page list) or popped (from the free
//! list, then appended to the page list); each piece either merges with the
//! pending contiguous range or flushes it, and the pending range is cut
//! greedily into AXI4 bursts as soon as a whole burst is known (cutting
//! greedily from a range's start depends only on where the range starts and
//! what remains, so emitting a full burst early gives the same bursts).
//! It owns the walker's registers and runs the command state machine's
//! walker states (START, FETCH, PIECE, MERGE, CUT and F_PUSH, numbered as
//! in `mmu.rs`); the top block keeps the state register and applies the
//! next state, beat and memory controls given here.
//! Paper: Oaken (ISCA 2025) §5.2 "Memory management unit" (pages allocated
//! on demand; reads as maximal bursts). Spec: docs/spec.md §10.4 (free
//! list), §10.5 (placement), §10.7 (bursts), §10.12.

use super::mmu::{mask, MmuGeometry, D, LEN_BITS, MA, OP_READ, OP_WRITE};
use super::mmu_burst_cap::MmuBurstCap;
use crate::prim::ram::MulConst;
use crate::prim::reg::{reg_logic, Reg};
use rust_hdl::prelude::*;
use sim::oaken::mmu::{AXI_BOUNDARY, AXI_MAX_BEATS};

#[derive(LogicBlock)]
pub struct MmuStream {
    /// rising-edge clock
    pub clock: Signal<In, Clock>,
    /// synchronous reset, active high
    pub reset: Signal<In, Bit>,
    /// The command state machine's state (`st`).
    pub st: Signal<In, Bits<5>>,
    /// The command's opcode (0 write, 1 read, 2 free).
    pub op: Signal<In, Bits<2>>,
    /// The current stream (0 metadata, 1+2h dense h, 2+2h sparse h) and its head.
    pub si: Signal<In, Bits<D>>,
    pub hs: Signal<In, Bits<D>>,
    /// The (slot, layer)'s page-table row base.
    pub rowb: Signal<In, Bits<MA>>,
    /// Fills before the token of the metadata and dense streams (token
    /// index times their bytes a token) and of the sparse stream (read).
    pub fm: Signal<In, Bits<D>>,
    pub fd: Signal<In, Bits<D>>,
    pub fill_rd: Signal<In, Bits<D>>,
    /// The token's bytes in the sparse stream of head hs.
    pub nsr: Signal<In, Bits<D>>,
    /// The page-table word read.
    pub pt_rdata: Signal<In, Bits<16>>,
    /// The free list's word read, its head, and whether the head entry was never pushed (it is its own index).
    pub fl_rdata: Signal<In, Bits<16>>,
    pub fl_head: Signal<In, Bits<16>>,
    pub fl_fresh: Signal<In, Bit>,
    /// The response register takes a beat this cycle.
    pub can_emit: Signal<In, Bit>,
    /// The stream's kind.
    pub is_meta: Signal<Out, Bit>,
    pub is_sparse: Signal<Out, Bit>,
    /// The stream's old fill and the token's bytes in it.
    pub fill_old: Signal<Out, Bits<D>>,
    pub nb: Signal<Out, Bits<D>>,
    /// Load `st` with `st_to`.
    pub st_go: Signal<Out, Bit>,
    pub st_to: Signal<Out, Bits<5>>,
    /// Emit a descriptor beat of `e_addr`, `e_len`.
    pub e_go: Signal<Out, Bit>,
    pub e_addr: Signal<Out, Bits<D>>,
    pub e_len: Signal<Out, Bits<LEN_BITS>>,
    /// Page-table memory controls.
    pub pt_en: Signal<Out, Bit>,
    pub pt_we: Signal<Out, Bit>,
    pub pt_addr: Signal<Out, Bits<MA>>,
    pub pt_wdata: Signal<Out, Bits<16>>,
    /// Read the free list's head; pop it.
    pub fl_rd: Signal<Out, Bit>,
    pub fl_pop: Signal<Out, Bit>,

    /// Burst caps at a piece and at the end of the burst being emitted.
    bcap: Vec<MmuBurstCap>,
    mul_hs: MulConst<MA>,

    // ---- registers ----
    /// Page-table address of virtual page j of the current stream.
    pbase: Reg<Bits<MA>>,
    /// The range's end, the next piece's offset, the pages held, the virtual page.
    v1: Reg<Bits<D>>,
    voff: Reg<Bits<D>>,
    held: Reg<Bits<D>>,
    j: Reg<Bits<D>>,
    /// The pending range: start, length, end.
    ra: Reg<Bits<D>>,
    /// The burst cap at `ra`: min(4096 - ra mod 4096, 256 * bus_bytes - ra mod bus_bytes).
    capr: Reg<Bits<D>>,
    rl: Reg<Bits<D>>,
    rend: Reg<Bits<D>>,
    /// The piece's length and page.
    nr: Reg<Bits<D>>,
    pgr: Reg<Bits<D>>,
    /// The piece's page is popped; a fresh free-list entry; the head then.
    newp: Reg<Bit>,
    /// The page FETCH or CUT reads next is held (else it is popped), registered so no compare feeds the memories.
    pth: Reg<Bit>,
    fresh: Reg<Bit>,
    headq: Reg<Bits<D>>,

    // ---- combinational ----
    is_dense: Signal<Local, Bit>,
    s_pbase: Signal<Local, Bits<MA>>,
    page: Signal<Local, Bits<D>>,
    off: Signal<Local, Bits<D>>,
    pg_cur: Signal<Local, Bits<D>>,
    phys: Signal<Local, Bits<D>>,
    room: Signal<Local, Bits<D>>,
    rem: Signal<Local, Bits<D>>,
    n: Signal<Local, Bits<D>>,
    ra_c: Signal<Local, Bits<D>>,
    do_merge: Signal<Local, Bit>,
    joins: Signal<Local, Bit>,
    starts: Signal<Local, Bit>,

    // ---- constants ----
    /// The walker's states and those it goes to (numbered in `mmu.rs`).
    k_start: Constant<Bits<5>>,
    k_fetch: Constant<Bits<5>>,
    k_piece: Constant<Bits<5>>,
    k_merge: Constant<Bits<5>>,
    k_cut: Constant<Bits<5>>,
    k_next: Constant<Bits<5>>,
    k_frd: Constant<Bits<5>>,
    k_fpush: Constant<Bits<5>>,
    k_op_w: Constant<Bits<2>>,
    k_op_r: Constant<Bits<2>>,
    k_mb: Constant<Bits<D>>,
    k_db: Constant<Bits<D>>,
    k_pb: Constant<Bits<D>>,
    k_pb1: Constant<Bits<D>>,
    k_lpb: Constant<Bits<D>>,
    k_cm: Constant<Bits<MA>>,
    k_cd: Constant<Bits<MA>>,
    k_one48: Constant<Bits<MA>>,
    k_zero: Constant<Bits<D>>,
    k_one: Constant<Bits<D>>,
    // value masks (see `mmu.rs`)
    k_m_addr: Constant<Bits<D>>,
    k_m_nr: Constant<Bits<D>>,
    k_m_fill: Constant<Bits<D>>,
    k_m_held: Constant<Bits<D>>,
    k_m_capr: Constant<Bits<D>>,
    k_m_rl: Constant<Bits<D>>,
    k_m_pg: Constant<Bits<D>>,
    k_m_pbase: Constant<Bits<MA>>,
}

impl MmuStream {
    /// The walker of an MMU of geometry `g` whose page table has `pt_depth` words.
    pub fn new(g: &MmuGeometry, pt_depth: u64) -> Self {
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        let p = &g.p;
        let (pb, np) = (p.page_bytes as u64, p.phys_pages as u64);
        MmuStream {
            clock: Default::default(),
            reset: Default::default(),
            st: Default::default(),
            op: Default::default(),
            si: Default::default(),
            hs: Default::default(),
            rowb: Default::default(),
            fm: Default::default(),
            fd: Default::default(),
            fill_rd: Default::default(),
            nsr: Default::default(),
            pt_rdata: Default::default(),
            fl_rdata: Default::default(),
            fl_head: Default::default(),
            fl_fresh: Default::default(),
            can_emit: Default::default(),
            is_meta: Default::default(),
            is_sparse: Default::default(),
            fill_old: Default::default(),
            nb: Default::default(),
            st_go: Default::default(),
            st_to: Default::default(),
            e_go: Default::default(),
            e_addr: Default::default(),
            e_len: Default::default(),
            pt_en: Default::default(),
            pt_we: Default::default(),
            pt_addr: Default::default(),
            pt_wdata: Default::default(),
            fl_rd: Default::default(),
            fl_pop: Default::default(),
            bcap: (0..2).map(|_| MmuBurstCap::new(p.bus_bytes as u64)).collect(),
            mul_hs: MulConst::new(g.cap_d + g.cap_s),
            pbase: Reg::default(),
            v1: Reg::default(),
            voff: Reg::default(),
            held: Reg::default(),
            j: Reg::default(),
            ra: Reg::default(),
            capr: Reg::new(AXI_BOUNDARY.min(AXI_MAX_BEATS * p.bus_bytes as u64).into()),
            rl: Reg::default(),
            rend: Reg::default(),
            nr: Reg::default(),
            pgr: Reg::default(),
            newp: Reg::default(),
            pth: Reg::default(),
            fresh: Reg::default(),
            headq: Reg::default(),
            is_dense: Default::default(),
            s_pbase: Default::default(),
            page: Default::default(),
            off: Default::default(),
            pg_cur: Default::default(),
            phys: Default::default(),
            room: Default::default(),
            rem: Default::default(),
            n: Default::default(),
            ra_c: Default::default(),
            do_merge: Default::default(),
            joins: Default::default(),
            starts: Default::default(),
            k_start: c(7),
            k_fetch: c(8),
            k_piece: c(9),
            k_merge: c(10),
            k_cut: c(11),
            k_next: c(12),
            k_frd: c(19),
            k_fpush: c(20),
            k_op_w: c(OP_WRITE),
            k_op_r: c(OP_READ),
            k_mb: c(p.meta_bytes as u64),
            k_db: c(p.dense_bytes as u64),
            k_pb: c(pb),
            k_pb1: c(pb - 1),
            k_lpb: c(pb.trailing_zeros() as u64),
            k_cm: c(g.cap_m),
            k_cd: c(g.cap_d),
            k_one48: c(1),
            k_zero: c(0),
            k_one: c(1),
            k_m_addr: c(mask(np * pb)),
            k_m_nr: c(mask(pb)),
            k_m_fill: c(mask(g.fill_max())),
            k_m_held: c(mask(g.cap_m.max(g.cap_d).max(g.cap_s) + 1)),
            k_m_capr: c(mask(AXI_BOUNDARY)),
            k_m_rl: c(mask(AXI_BOUNDARY + pb)),
            k_m_pg: c(mask(np - 1)),
            k_m_pbase: c(mask(pt_depth)),
        }
    }
}

reg_logic!(MmuStream;
    regs [pbase, v1, voff, held, j, ra, capr, rl, rend, nr, pgr, newp, pth, fresh, headq];
    masks [
        rend & k_m_addr, ra & k_m_addr, nr & k_m_nr, v1 & k_m_fill, voff & k_m_fill, held & k_m_held,
        j & k_m_held, capr & k_m_capr, rl & k_m_rl, pgr & k_m_pg, headq & k_m_pg, pbase & k_m_pbase,
    ];
    #[hdl_gen]
    fn update(&mut self) {
        // ---------------- the current stream (from si) ----------------
        self.is_meta.next = self.si.val() == self.k_zero.val();
        self.is_dense.next = self.si.val().get_bit(0);
        self.is_sparse.next = !self.is_meta.val() & !self.is_dense.val();
        self.mul_hs.x.next = bit_cast::<MA, D>(self.hs.val());
        self.s_pbase.next = self.rowb.val();
        if self.is_dense.val() {
            self.s_pbase.next = self.rowb.val() + self.k_cm.val() + self.mul_hs.y.val();
        }
        if self.is_sparse.val() {
            self.s_pbase.next = self.rowb.val() + self.k_cm.val() + self.mul_hs.y.val() + self.k_cd.val();
        }
        // the stream's old fill and the token's bytes in it
        self.fill_old.next = self.fd.val();
        if self.is_meta.val() {
            self.fill_old.next = self.fm.val();
        }
        if self.is_sparse.val() {
            self.fill_old.next = self.fill_rd.val();
        }
        self.nb.next = self.nsr.val();
        if self.is_meta.val() {
            self.nb.next = self.k_mb.val();
        }
        if self.is_dense.val() {
            self.nb.next = self.k_db.val();
        }

        // page of the current piece: popped (fresh entries are their own index) or from the page list
        self.page.next = bit_cast::<D, 16>(self.pt_rdata.val());
        if self.newp.q.val() {
            self.page.next = bit_cast::<D, 16>(self.fl_rdata.val());
            if self.fresh.q.val() {
                self.page.next = self.headq.q.val();
            }
        }
        // the piece at voff
        self.off.next = self.voff.q.val() & self.k_pb1.val();
        self.pg_cur.next = self.pgr.q.val();
        if self.st.val() == self.k_piece.val() {
            self.pg_cur.next = self.page.val();
        }
        self.phys.next = (self.pg_cur.val() << self.k_lpb.val()) | self.off.val();
        self.room.next = self.k_pb.val() - self.off.val();
        self.rem.next = self.v1.q.val() - self.voff.q.val();
        self.n.next = self.room.val();
        if self.rem.val() < self.room.val() {
            self.n.next = self.rem.val();
        }
        // the burst cap (spec §10.7) at the two places a pending range can
        // start: the piece (phys) and the end of the burst being emitted
        self.bcap[0].addr.next = self.phys.val();
        self.ra_c.next = self.ra.q.val() + self.capr.q.val();
        self.bcap[1].addr.next = self.ra_c.val();

        // ---------------- outputs, idle unless a state below acts ----------------
        self.st_go.next = false;
        self.st_to.next = self.st.val();
        self.e_go.next = false;
        self.e_addr.next = self.ra.q.val();
        self.e_len.next = bit_cast::<LEN_BITS, D>(self.rl.q.val());
        self.pt_en.next = false;
        self.pt_we.next = false;
        self.pt_addr.next = self.pbase.q.val();
        self.pt_wdata.next = bit_cast::<16, D>(self.pgr.q.val());
        self.fl_rd.next = false;
        self.fl_pop.next = false;
        self.do_merge.next = false;

        if self.st.val() == self.k_start.val() {
            // START: the stream's virtual range
            self.pbase.en.next = true;
            self.pbase.d.next = self.s_pbase.val();
            self.j.en.next = true;
            self.j.d.next = self.k_zero.val();
            self.rl.en.next = true;
            self.rl.d.next = self.k_zero.val();
            self.voff.en.next = true;
            self.voff.d.next = self.k_zero.val();
            self.v1.en.next = true;
            self.v1.d.next = self.fill_old.val();
            self.held.en.next = true;
            self.held.d.next = (self.fill_old.val() + self.k_pb1.val()) >> self.k_lpb.val();
            self.st_go.next = true;
            if self.op.val() == self.k_op_w.val() {
                // write: [fill, fill + b); pages below ceil(fill / pb) are held,
                // so page j is held when the last page is partly filled
                self.pth.en.next = true;
                self.pth.d.next = (self.fill_old.val() & self.k_pb1.val()) != self.k_zero.val();
                self.voff.d.next = self.fill_old.val();
                self.v1.d.next = self.fill_old.val() + self.nb.val();
                self.j.d.next = self.fill_old.val() >> self.k_lpb.val();
                self.pbase.d.next = self.s_pbase.val() + bit_cast::<MA, D>(self.fill_old.val() >> self.k_lpb.val());
                if self.nb.val() == self.k_zero.val() {
                    self.st_to.next = self.k_next.val();
                } else {
                    self.st_to.next = self.k_fetch.val();
                }
            } else if self.op.val() == self.k_op_r.val() {
                // read: [0, fill), every page held (held = ceil(fill / pb))
                self.pth.en.next = true;
                self.pth.d.next = true;
                if self.fill_old.val() == self.k_zero.val() {
                    self.st_to.next = self.k_next.val();
                } else {
                    self.st_to.next = self.k_fetch.val();
                }
            } else {
                // free: push pages 0 .. ceil(fill / pb) - 1
                if self.fill_old.val() == self.k_zero.val() {
                    self.st_to.next = self.k_next.val();
                } else {
                    self.st_to.next = self.k_frd.val();
                }
            }
        } else if self.st.val() == self.k_fetch.val() {
            // FETCH: the page of virtual page j, held or popped (§10.4, §10.5 step 1),
            // and the length of its piece
            self.nr.en.next = true;
            self.nr.d.next = self.n.val();
            self.newp.en.next = true;
            self.st_go.next = true;
            self.st_to.next = self.k_piece.val();
            self.pth.en.next = true;
            self.pth.d.next = self.j.q.val() + self.k_one.val() < self.held.q.val();
            if self.pth.q.val() {
                self.pt_en.next = true;
                self.newp.d.next = false;
            } else {
                self.fl_rd.next = true;
                self.newp.d.next = true;
                self.fresh.en.next = true;
                self.fresh.d.next = self.fl_fresh.val();
                self.headq.en.next = true;
                self.headq.d.next = bit_cast::<D, 16>(self.fl_head.val());
            }
        } else if self.st.val() == self.k_piece.val() {
            // PIECE: take the page; a popped one joins the page list
            self.pgr.en.next = true;
            self.pgr.d.next = self.page.val();
            if self.newp.q.val() {
                self.pt_en.next = true;
                self.pt_we.next = true;
                self.pt_wdata.next = bit_cast::<16, D>(self.page.val());
                self.fl_pop.next = true;
            }
            // merge below; if it has to wait for the response register, MERGE retries
            self.st_go.next = true;
            self.st_to.next = self.k_merge.val();
            self.do_merge.next = true;
        } else if self.st.val() == self.k_merge.val() {
            // MERGE: the piece's merge, waiting to flush the pending range
            self.do_merge.next = true;
        } else if self.st.val() == self.k_cut.val() {
            // CUT: emit every whole burst of the pending range. The next
            // page is read in every CUT cycle, whether or not a burst goes
            // out first (a read has no effect but its data), so only
            // registers feed the memories' controls.
            self.pt_addr.next = self.pbase.q.val() + self.k_one48.val();
            if self.pth.q.val() {
                self.pt_en.next = true;
            } else {
                self.fl_rd.next = true;
            }
            if self.rl.q.val() >= self.capr.q.val() {
                if self.can_emit.val() {
                    self.e_go.next = true;
                    self.e_len.next = bit_cast::<LEN_BITS, D>(self.capr.q.val());
                    self.ra.en.next = true;
                    self.ra.d.next = self.ra_c.val();
                    self.capr.en.next = true;
                    self.capr.d.next = self.bcap[1].cap.val();
                    self.rl.en.next = true;
                    self.rl.d.next = self.rl.q.val() - self.capr.q.val();
                }
            } else if self.voff.q.val() < self.v1.q.val() {
                // the next virtual page, fetched as in FETCH
                self.nr.en.next = true;
                self.nr.d.next = self.n.val();
                self.pbase.en.next = true;
                self.pbase.d.next = self.pbase.q.val() + self.k_one48.val();
                self.j.en.next = true;
                self.j.d.next = self.j.q.val() + self.k_one.val();
                self.newp.en.next = true;
                self.st_go.next = true;
                self.st_to.next = self.k_piece.val();
                self.pth.en.next = true;
                self.pth.d.next = self.j.q.val() + self.k_one.val() + self.k_one.val() < self.held.q.val();
                if self.pth.q.val() {
                    self.newp.d.next = false;
                } else {
                    self.newp.d.next = true;
                    self.fresh.en.next = true;
                    self.fresh.d.next = self.fl_fresh.val();
                    self.headq.en.next = true;
                    self.headq.d.next = bit_cast::<D, 16>(self.fl_head.val());
                }
            } else if self.rl.q.val() != self.k_zero.val() {
                if self.can_emit.val() {
                    self.e_go.next = true;
                    self.rl.en.next = true;
                    self.rl.d.next = self.k_zero.val();
                    self.st_go.next = true;
                    self.st_to.next = self.k_next.val();
                }
            } else {
                self.st_go.next = true;
                self.st_to.next = self.k_next.val();
            }
        } else if self.st.val() == self.k_fpush.val() {
            // F_PUSH (the top block pushes page j onto the free list's
            // tail): the next page j + 1, read unless it was the last
            self.j.en.next = true;
            self.j.d.next = self.j.q.val() + self.k_one.val();
            self.pbase.en.next = true;
            self.pbase.d.next = self.pbase.q.val() + self.k_one48.val();
            if self.j.q.val() + self.k_one.val() == self.held.q.val() {
                self.st_go.next = true;
                self.st_to.next = self.k_next.val();
            } else {
                self.pt_en.next = true;
                self.pt_addr.next = self.pbase.q.val() + self.k_one48.val();
            }
        }

        // the piece's merge (PIECE, MERGE, spec §10.7): extend the pending
        // range, or flush it (one burst: it is shorter than a whole one) and
        // start a new range at the piece (`starts`; `joins`: it extends the
        // pending range, which ends where the piece starts)
        self.joins.next = (self.rl.q.val() != self.k_zero.val()) & (self.rend.q.val() == self.phys.val());
        self.starts.next = (self.rl.q.val() == self.k_zero.val()) | (!self.joins.val() & self.can_emit.val());
        if self.do_merge.val() {
            // the pending range ends at phys + nr whatever the case
            self.rend.d.next = self.phys.val() + self.nr.q.val();
            if self.joins.val() | self.starts.val() {
                self.rl.en.next = true;
                self.rend.en.next = true;
                self.rl.d.next = self.rl.q.val() + self.nr.q.val();
                self.voff.en.next = true;
                self.voff.d.next = self.voff.q.val() + self.nr.q.val();
                self.st_go.next = true;
                self.st_to.next = self.k_cut.val();
            }
            if self.starts.val() {
                // a pending range is flushed first
                self.e_go.next = self.rl.q.val() != self.k_zero.val();
                self.ra.en.next = true;
                self.ra.d.next = self.phys.val();
                self.capr.en.next = true;
                self.capr.d.next = self.bcap[0].cap.val();
                self.rl.d.next = self.nr.q.val();
            }
        }
    }
);
