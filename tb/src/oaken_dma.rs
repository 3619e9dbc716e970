//! The whole Oaken DMA path in one clock domain (docs/spec.md §2.13, §4.2,
//! §10.11): the quantization engine's tokens go to the MMU as writes, their
//! bytes to a byte-addressed memory at the MMU's placement descriptors; MMU
//! reads give burst descriptors and counts, the memory returns the bursts
//! with random latency and gaps, and the dequantization engine decodes each
//! (token, head) from the metadata, dense and sparse streams. Three RTL
//! models; the DMA engine and the memory are this module's.
//!
//! What the DMA engine does is fixed by the spec, not chosen here: the
//! counts from the quantizer's `out_counts` go in the MMU write; the bytes
//! of each stream (§2.9 records) fill the placement descriptors in order;
//! a read's streams are concatenated in descriptor order, cut into records
//! by size (metadata, dense) and by the MMU's counts (sparse, inside the
//! dequantizer, §4.2).
//!
//! Order: actions run in plan order. A write's token enters the quantizer
//! at once; a read or free waits until everything before it is done (its
//! writes in memory, earlier reads fetched), so a free never races a read
//! of the same pages and a read sees every earlier write.

use crate::coverage::Coverage;
use crate::model::{Model, PortId};
use crate::oaken::{write_table, TableWrite};
use crate::oaken_mmu::{self, Beat, Cmd};
use crate::stalls::{Stall, StallGen};
use crate::stim::Xorshift;
use sim::mem::Memory;
use sim::oaken::dequantizer::{dequantize_token, DenseRecord};
use sim::oaken::format::{dense_record, dense_slots};
use sim::oaken::mmu::{Mmu, MmuParams, Stream};
use sim::oaken::params::OakenParams;
use sim::oaken::quantizer::quantize_token;
use sim::oaken::thresholds::{Kv, ThresholdTable};
use std::collections::{BTreeMap, VecDeque};

/// K or V of a layer index, which names both the engines' table layer and
/// the MMU layer here: the MMU does not know K from V (spec §10.2), so the
/// index's parity picks it, K even, V odd.
pub fn kv_of(layer: u8) -> Kv {
    if layer % 2 == 1 {
        Kv::V
    } else {
        Kv::K
    }
}

/// One step of a plan.
#[derive(Clone, Debug)]
pub enum Action {
    /// A token of `seq` for layer `layer` (K or V by [`kv_of`]).
    Write { seq: u16, layer: u8, x: Vec<u16> },
    Read { seq: u16, layer: u8, head: u8 },
    Free { seq: u16 },
}

/// Stall patterns of one run.
#[derive(Clone, Debug)]
pub struct DmaStalls {
    /// Quantizer input idles.
    pub q_in: Stall,
    /// Quantizer output held (the DMA's write buffer draining).
    pub q_out: Stall,
    /// MMU response held.
    pub rsp: Stall,
    /// Memory write beat refused (write backpressure).
    pub mem_write: Stall,
    /// Memory read beat not delivered this cycle.
    pub mem_read: Stall,
    /// Largest latency of a read burst, in cycles (each burst draws 1..=this).
    pub read_latency: u32,
    /// Dequantizer output held.
    pub d_out: Stall,
}

/// Fixed parameters of the path: the engines' and the MMU's, which must
/// agree (spec §10.1: `heads`, `head_dim`, `dense_bytes`, `meta_bytes`).
pub fn check_params(q: &OakenParams, m: &MmuParams) -> Result<(), String> {
    let want = (q.heads, q.head_dim, q.dense_bytes(), 12usize);
    let got = (m.heads, m.head_dim, m.dense_bytes, m.meta_bytes);
    if want != got {
        return Err(format!("engine (heads, head_dim, dense_bytes, meta_bytes) {want:?} but MMU {got:?}"));
    }
    if q.layers < m.layers {
        return Err(format!("MMU layers {} > engine layers {}", m.layers, q.layers));
    }
    Ok(())
}

/// A plan over sequences of the given lengths (tokens per layer, every
/// layer written per token), interleaved round robin. The first sequence
/// is meant to run out of pages: when the model MMU says its write fails
/// with `OutOfPages`, the plan keeps that write (it must fail on the RTL
/// too), reads the sequence's data so far, frees it, and starts sequence
/// `late` (id, tokens) in its place. Reads of every (sequence,
/// layer, head) still open end the plan; one read is made mid-way.
pub fn plan(
    q: &OakenParams,
    m: &MmuParams,
    table: &ThresholdTable,
    tokens: &mut dyn FnMut(u16, usize, u8) -> Vec<u16>,
    seqs: &[(u16, usize)],
    late: (u16, usize),
) -> Vec<Action> {
    let mut mmu = Mmu::new(m.clone()).expect("legal MMU parameters");
    let mut out = Vec::new();
    let mut live: Vec<(u16, usize, usize)> = seqs.iter().map(|&(s, n)| (s, n, 0)).collect();
    let mut late_pending = Some(late);
    let mut mid_read_done = false;
    let layers = m.layers as u8;
    while live.iter().any(|&(_, n, k)| k < n) {
        let mut i = 0;
        while i < live.len() {
            let (seq, n, k) = live[i];
            if k >= n {
                i += 1;
                continue;
            }
            let mut failed = false;
            for layer in 0..layers {
                let x = tokens(seq, k, layer);
                let (set, _) = table.lookup(layer as usize, kv_of(layer));
                let counts = quantize_token(q, &set, &x).counts;
                let r = mmu.write(seq, layer as usize, &counts);
                out.push(Action::Write { seq, layer, x });
                if r.is_err() {
                    failed = true;
                    break;
                }
            }
            live[i].2 += 1;
            if failed {
                for layer in 0..layers {
                    out.push(Action::Read { seq, layer, head: (layer as usize % m.heads) as u8 });
                }
                out.push(Action::Free { seq });
                mmu.free(seq).expect("the sequence is open");
                live.remove(i);
                if let Some((s, n)) = late_pending.take() {
                    live.push((s, n, 0));
                }
                continue;
            }
            i += 1;
        }
        let done = live.iter().filter(|&&(_, n, k)| k >= n / 2).count();
        if !mid_read_done && done == live.len() && !live.is_empty() {
            let (seq, _, _) = live[live.len() - 1];
            out.push(Action::Read { seq, layer: layers - 1, head: (m.heads - 1) as u8 });
            mid_read_done = true;
        }
    }
    for &(seq, _, _) in &live {
        for layer in 0..layers {
            for head in 0..m.heads {
                out.push(Action::Read { seq, layer, head: head as u8 });
            }
        }
    }
    out
}

/// What a run did.
#[derive(Debug, Default)]
pub struct DmaRun {
    pub cycles: u64,
    /// (seq, layer, head, token) of every record decoded, in order.
    pub records: Vec<(u16, u8, u8, u32)>,
    pub tokens_stored: usize,
    pub bytes_written: u64,
    pub bytes_read: u64,
}

/// Bytes of a bus whose width is a multiple of 8 (byte 0 = bits 7..0).
fn get_bytes(m: &Model, p: PortId) -> Vec<u8> {
    let w = m.get_words(p);
    let n = m.port_info(p).width / 8;
    (0..n).map(|i| (w[i / 4] >> (8 * (i % 4))) as u8).collect()
}

fn set_bytes(m: &mut Model, p: PortId, bytes: &[u8]) {
    let n = m.port_info(p).width;
    assert_eq!(n, 8 * bytes.len(), "port {} is {n} bits", m.port_info(p).name);
    let mut w = vec![0u32; n.div_ceil(32)];
    for (i, &b) in bytes.iter().enumerate() {
        w[i / 4] |= (b as u32) << (8 * (i % 4));
    }
    m.set_words(p, &w);
}

/// A token from its first input beat to its bytes in memory.
struct QTok {
    seq: u16,
    layer: u8,
    x: Vec<u16>,
    meta: Vec<u8>,
    dense: Vec<Vec<u8>>,
    coo: Vec<Vec<u8>>,
    /// Output beats taken.
    beats: usize,
    /// The MMU write was issued (at the first output beat).
    issued: bool,
    /// The MMU's status and placement descriptors.
    answer: Option<(u8, Vec<Beat>)>,
}

/// An MMU command and what its answer is for.
enum Issued {
    Write,
    Read { seq: u16, layer: u8, head: u8 },
    Free,
}

/// A read whose bursts are coming back.
struct Job {
    seq: u16,
    layer: u8,
    head: u8,
    tokens: usize,
    counts: Vec<Vec<u8>>,
    /// `sim`'s round trip of each token's head.
    want: Vec<Vec<u16>>,
    meta: Vec<u8>,
    dense: Vec<u8>,
    /// Records whose dense beats have all been taken, and the next beat.
    sent: usize,
    beat: usize,
}

/// A memory write beat, or the end of one token's writes.
enum MemWrite {
    Beat(u64, Vec<u8>),
    TokenDone,
}

/// A burst to fetch, or the end of one read's bursts.
enum Fetch {
    Burst { job: usize, stream: Stream, addr: u64, len: u64, wait: u32 },
    ReadDone,
}

/// Runs `actions` through the three models (just out of reset), checking
/// every MMU response beat against the model MMU and every decoded element
/// against `sim`'s round trip of the token that was written.
#[allow(clippy::too_many_arguments)]
pub fn run(
    q: &mut Model,
    mm: &mut Model,
    d: &mut Model,
    qp: &OakenParams,
    mp: &MmuParams,
    writes: &[TableWrite],
    actions: &[Action],
    st: &DmaStalls,
    seed: u64,
    cov: &Coverage,
) -> Result<DmaRun, String> {
    check_params(qp, mp)?;
    let (table, _) = crate::oaken::expected_table(qp, writes);
    write_table(q, writes)?;
    write_table(d, writes)?;
    let mut rng = Xorshift::new(seed ^ 0xd3a);
    let sg = |s: &Stall, k: u64| StallGen::new(s, seed.wrapping_mul(31).wrapping_add(k));
    let (mut g_qin, mut g_qout, mut g_rsp) = (sg(&st.q_in, 1), sg(&st.q_out, 2), sg(&st.rsp, 3));
    let (mut g_mw, mut g_mr, mut g_dout) = (sg(&st.mem_write, 4), sg(&st.mem_read, 5), sg(&st.d_out, 6));
    let (hb, l, total) = (qp.head_beats(), qp.lanes, qp.beats());
    let bus = mp.bus_bytes as u64;

    let qi = (q.port("in_valid"), q.port("in_ready"), q.port("in_data"), q.port("in_layer"), q.port("in_kv"));
    let (qo_valid, qo_ready, qo_dense, qo_coo, qo_count) =
        (q.port("out_valid"), q.port("out_ready"), q.port("out_dense"), q.port("out_coo"), q.port("out_coo_count"));
    let (qo_first, qo_last, qo_meta, qo_counts) = (q.port("out_first"), q.port("out_last"), q.port("out_meta"), q.port("out_counts"));
    let mio = oaken_mmu::Ports::of(mm);
    let (dv, dr, dden, dmeta, dcnt, dlay, dkv) =
        (d.port("d_valid"), d.port("d_ready"), d.port("d_dense"), d.port("d_meta"), d.port("d_counts"), d.port("d_layer"), d.port("d_kv"));
    let (sv, sr, scoo, scount) = (d.port("s_valid"), d.port("s_ready"), d.port("s_coo"), d.port("s_count"));
    let (ov, or, odata, olast, oerr) =
        (d.port("out_valid"), d.port("out_ready"), d.port("out_data"), d.port("out_last"), d.port("out_err"));

    let mut model_mmu = Mmu::new(mp.clone()).map_err(|e| e.to_string())?;
    let mut mem = Memory::new(mp.addr_bits as u32).map_err(|e| format!("{e:?}"))?;
    let mut stored: BTreeMap<(u16, u8), Vec<Vec<u16>>> = BTreeMap::new();
    let mut run = DmaRun::default();

    let mut next = 0usize;
    let mut q_feed: VecDeque<(usize, usize)> = VecDeque::new(); // (action, beat)
    let mut toks: VecDeque<QTok> = VecDeque::new();
    let mut w_open = 0usize; // write actions not yet failed or in memory
    let mut r_open = 0usize; // reads not yet answered and fetched
    let mut cmds: VecDeque<(Cmd, Issued)> = VecDeque::new();
    let mut inflight: Option<(Issued, Vec<Beat>, VecDeque<Beat>)> = None;
    let mut mem_q: VecDeque<MemWrite> = VecDeque::new();
    let mut mem_toks = 0usize;
    let mut fetches: VecDeque<Fetch> = VecDeque::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut dense_job = 0usize;
    let mut sparse: VecDeque<u8> = VecDeque::new();
    let (mut sparse_pos, mut ends) = (0u64, VecDeque::<u64>::new()); // list ends in the sparse stream
    let mut list_end = 0u64;
    let mut sparse_offer: Option<(Vec<u8>, u8)> = None;
    let mut rec_out: VecDeque<(usize, usize)> = VecDeque::new();
    let (mut out_vals, mut out_err) = (Vec::<u16>::new(), false);
    let mut freed = false;
    let timeout = 100_000 + 3_000 * actions.len() as u64;

    let mut cycle = 0u64;
    loop {
        // ---- release actions in order; a read or free is a fence ----
        while next < actions.len() {
            let idle = w_open == 0 && r_open == 0 && cmds.is_empty() && inflight.is_none();
            match &actions[next] {
                Action::Write { .. } => {
                    q_feed.extend((0..total).map(|b| (next, b)));
                    w_open += 1;
                }
                Action::Read { seq, layer, head } if idle => {
                    cmds.push_back((Cmd::Read { seq: *seq, layer: *layer, head: *head }, Issued::Read { seq: *seq, layer: *layer, head: *head }));
                    r_open += 1;
                }
                Action::Free { seq } if idle => cmds.push_back((Cmd::Free { seq: *seq }, Issued::Free)),
                _ => break,
            }
            next += 1;
        }
        let records: usize = jobs.iter().map(|j| j.tokens).sum();
        if next == actions.len() && w_open == 0 && r_open == 0 && cmds.is_empty() && inflight.is_none() && run.records.len() == records {
            break;
        }
        if cycle > timeout {
            return Err(format!(
                "hang after {cycle} cycles: action {next}/{}, {} writes and {} reads open, {} MMU commands queued, {}/{records} records out",
                actions.len(),
                w_open,
                r_open,
                cmds.len(),
                run.records.len()
            ));
        }

        // ---- quantizer ----
        let q_offer = if g_qin.next() { None } else { q_feed.front().copied() };
        match q_offer {
            Some((a, b)) => {
                let Action::Write { layer, x, .. } = &actions[a] else { unreachable!("only writes are fed") };
                q.set(qi.0, 1);
                q.set_lanes(qi.2, &x[b * l..(b + 1) * l].iter().map(|&e| e as u64).collect::<Vec<_>>());
                q.set(qi.3, *layer as u64);
                q.set(qi.4, (kv_of(*layer) == Kv::V) as u64);
            }
            None => {
                q.set(qi.0, 0);
                q.set_lanes(qi.2, &(0..l).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>());
            }
        }
        // the DMA holds at most two whole tokens that are not in memory yet
        let held = toks.iter().filter(|t| t.beats == total).count() + mem_toks;
        let q_ready = !g_qout.next() && held < 2;
        q.set(qo_ready, q_ready as u64);

        // ---- MMU ----
        match cmds.front() {
            Some((c, _)) if inflight.is_none() => {
                mio.drive(mm, mp, c, &mut rng);
                mm.set(mio.cmd_valid, 1);
            }
            _ => {
                mio.noise(mm, mp, &mut rng);
                mm.set(mio.cmd_valid, 0);
            }
        }
        let rsp_ready = !g_rsp.next();
        mm.set(mio.rsp_ready, rsp_ready as u64);

        // ---- memory: one write beat and one read beat per cycle at most ----
        match mem_q.front() {
            Some(MemWrite::TokenDone) => {
                mem_q.pop_front();
                mem_toks -= 1;
                w_open -= 1;
            }
            Some(MemWrite::Beat(..)) if g_mw.next() => cov.hit("memory write backpressure"),
            Some(MemWrite::Beat(..)) => {
                let Some(MemWrite::Beat(a, bytes)) = mem_q.pop_front() else { unreachable!() };
                mem.write(a, &bytes).map_err(|e| format!("memory write: {e:?}"))?;
                run.bytes_written += bytes.len() as u64;
            }
            None => {}
        }
        match fetches.front_mut() {
            Some(Fetch::ReadDone) => {
                fetches.pop_front();
                r_open -= 1;
            }
            Some(Fetch::Burst { wait, .. }) if *wait > 0 => *wait -= 1,
            Some(Fetch::Burst { .. }) if g_mr.next() => cov.hit("memory read gap"),
            Some(Fetch::Burst { job, stream, addr, len, .. }) => {
                let n = (bus - *addr % bus).min(*len);
                let bytes = mem.read(*addr, n as usize).map_err(|e| format!("memory read: {e:?}"))?;
                run.bytes_read += n;
                match stream {
                    Stream::Meta => jobs[*job].meta.extend(&bytes),
                    Stream::Dense(_) => jobs[*job].dense.extend(&bytes),
                    Stream::Sparse(_) => sparse.extend(&bytes),
                }
                *addr += n;
                *len -= n;
                if *len == 0 {
                    fetches.pop_front();
                }
            }
            None => {}
        }

        // ---- dequantizer dense input: a record's beat once its bytes are in ----
        while dense_job < jobs.len() && jobs[dense_job].sent == jobs[dense_job].tokens {
            dense_job += 1;
        }
        let db = qp.dense_bytes();
        let d_offer = (dense_job < jobs.len())
            .then(|| &jobs[dense_job])
            .filter(|j| j.meta.len() >= 12 * (j.sent + 1) && j.dense.len() >= db * (j.sent + 1))
            .map(|j| (dense_job, j.sent));
        match d_offer {
            Some((k, t)) => {
                let j = &jobs[k];
                let slots = dense_slots(qp, &j.dense[db * t..db * (t + 1)]);
                d.set(dv, 1);
                d.set_lanes(dden, &slots[j.beat * l..(j.beat + 1) * l].iter().map(|&s| s as u64).collect::<Vec<_>>());
                set_bytes(d, dmeta, &j.meta[12 * t..12 * t + 12]);
                set_bytes(d, dcnt, &j.counts[t]);
                d.set(dlay, j.layer as u64);
                d.set(dkv, (kv_of(j.layer) == Kv::V) as u64);
            }
            None => {
                d.set(dv, 0);
                let mask = (1u64 << qp.inlier_bits) - 1;
                d.set_lanes(dden, &(0..l).map(|_| rng.next_u64() & mask).collect::<Vec<_>>());
            }
        }
        // ---- sparse input: the continuous stream, mostly full beats ----
        if sparse_offer.is_none() && !sparse.is_empty() {
            let most = sparse.len().min(l);
            let n = if rng.next_u64() % 4 == 0 { 1 + rng.next_u64() as usize % most } else { most };
            let mut lanes: Vec<u8> = sparse.drain(..n).collect();
            while ends.front().is_some_and(|&e| e <= sparse_pos) {
                ends.pop_front();
            }
            // a beat that ends one list and starts another (spec §4.2)
            let split = ends.front().is_some_and(|&e| e > sparse_pos && e < sparse_pos + n as u64);
            cov.hit_if("sparse beat across two lists", split);
            sparse_pos += n as u64;
            lanes.resize(l, rng.next_u64() as u8);
            sparse_offer = Some((lanes, n as u8));
        }
        match &sparse_offer {
            Some((lanes, n)) => {
                d.set(sv, 1);
                d.set_lanes(scoo, &lanes.iter().map(|&e| e as u64).collect::<Vec<_>>());
                d.set(scount, *n as u64);
            }
            None => {
                d.set(sv, 0);
                d.set(scount, rng.next_u64() & 0xFF);
            }
        }
        let d_out_ready = !g_dout.next();
        d.set(or, d_out_ready as u64);

        q.eval();
        mm.eval();
        d.eval();

        // ---- handshakes ----
        if let Some((a, b)) = q_offer {
            if q.get(qi.1) == 1 {
                q_feed.pop_front();
                if b == 0 {
                    let Action::Write { seq, layer, x, .. } = &actions[a] else { unreachable!() };
                    toks.push_back(QTok {
                        seq: *seq,
                        layer: *layer,
                        x: x.clone(),
                        meta: vec![],
                        dense: vec![vec![]; qp.heads],
                        coo: vec![vec![]; qp.heads],
                        beats: 0,
                        issued: false,
                        answer: None,
                    });
                }
            } else {
                cov.hit("quantizer in_ready low");
            }
        }
        if q.get(qo_valid) == 1 && q_ready {
            let t = toks.iter_mut().find(|t| t.beats < total).ok_or("a quantizer output beat with no token in flight")?;
            if (q.get(qo_first) == 1) != (t.beats == 0) || (q.get(qo_last) == 1) != (t.beats + 1 == total) {
                return Err(format!("out_first/out_last wrong at beat {} of a token", t.beats));
            }
            if t.beats == 0 {
                // the MMU write goes out with the token's first beat (spec §2.13)
                t.meta = get_bytes(q, qo_meta);
                let counts = get_bytes(q, qo_counts);
                cmds.push_back((Cmd::Write { seq: t.seq, layer: t.layer, counts }, Issued::Write));
                t.issued = true;
            }
            let h = t.beats / hb;
            t.dense[h].extend(q.get_lanes(qo_dense).iter().map(|&s| s as u8));
            let n = q.get(qo_count) as usize;
            t.coo[h].extend(q.get_lanes(qo_coo)[..n].iter().map(|&e| e as u8));
            t.beats += 1;
        } else if q.get(qo_valid) == 1 {
            cov.hit("quantizer output held");
        }

        if mm.get(mio.cmd_valid) == 1 && mm.get(mio.cmd_ready) == 1 {
            let (c, issued) = cmds.pop_front().expect("a command was driven");
            let (beats, _) = oaken_mmu::expect(&mut model_mmu, &c);
            model_mmu.check_invariants().map_err(|e| format!("model MMU after {c:?}: {e}"))?;
            inflight = Some((issued, Vec::new(), beats.into()));
        }
        if mm.get(mio.rsp_valid) == 1 && rsp_ready {
            let got = mio.read(mm);
            let (_, seen, want) = inflight.as_mut().ok_or_else(|| format!("an MMU response beat with no command: {got:?}"))?;
            let w = want.pop_front().ok_or("an MMU response longer than the model's")?;
            if got != w {
                return Err(format!("MMU response beat {}: got {got:?}, want {w:?}", seen.len()));
            }
            seen.push(got);
            if w.last {
                let (issued, seen, _) = inflight.take().expect("in flight");
                let status = w.status;
                match issued {
                    Issued::Write => {
                        let t = toks.iter_mut().find(|t| t.issued && t.answer.is_none()).ok_or("a write answer with no token")?;
                        if status == 0 && freed && seen.last().is_some_and(|b| b.opened) {
                            cov.hit("sequence opened after a free");
                        }
                        t.answer = Some((status, seen.into_iter().filter(|b| b.kind == 0).collect()));
                    }
                    Issued::Read { seq, layer, head } => {
                        if status != 0 {
                            return Err(format!("read of ({seq}, {layer}, {head}) failed with status {status}"));
                        }
                        cov.hit("read");
                        let tokens = w.token as usize;
                        let xs = stored.get(&(seq, layer)).cloned().unwrap_or_default();
                        if xs.len() != tokens {
                            return Err(format!("read of ({seq}, {layer}): {tokens} tokens, {} stored", xs.len()));
                        }
                        let (set, _) = table.lookup(layer as usize, kv_of(layer));
                        let want = xs
                            .iter()
                            .map(|x| {
                                let qt = quantize_token(qp, &set, x);
                                let r = DenseRecord::new(qp, layer, kv_of(layer), &qt, head as usize);
                                dequantize_token(qp, &set, &r.dense, &qt.coo[head as usize], &r.counts, &r.meta)
                                    .expect("a quantizer output is well-formed")
                            })
                            .collect();
                        let counts: Vec<Vec<u8>> = seen.iter().filter(|b| b.kind == 1).map(|b| b.counts.clone()).collect();
                        for c in &counts {
                            list_end += c.iter().map(|&n| n as u64).sum::<u64>();
                            ends.push_back(list_end);
                        }
                        let job = jobs.len();
                        let descs: Vec<&Beat> = seen.iter().filter(|b| b.kind == 0).collect();
                        // metadata, dense h, sparse h (stream order, spec §10.2)
                        let kind = |s: u16| if s == 0 { 0 } else { 1 + (s + 1) % 2 };
                        for k in 0..3 {
                            let n = descs.iter().filter(|b| kind(b.stream) == k).count();
                            cov.hit_if("read stream over several bursts", n > 1);
                        }
                        for b in descs {
                            let wait = 1 + (rng.next_u64() % st.read_latency.max(1) as u64) as u32;
                            let stream = Stream::from_index(b.stream as usize);
                            fetches.push_back(Fetch::Burst { job, stream, addr: b.addr, len: b.len as u64, wait });
                        }
                        fetches.push_back(Fetch::ReadDone);
                        jobs.push(Job { seq, layer, head, tokens, counts, want, meta: vec![], dense: vec![], sent: 0, beat: 0 });
                    }
                    Issued::Free => {
                        if status != 0 {
                            return Err(format!("free failed with status {status}"));
                        }
                        cov.hit("sequence freed");
                        freed = true;
                    }
                }
            }
        }
        // whole, answered tokens go to memory (or are dropped) in order
        while toks.front().is_some_and(|t| t.beats == total && t.answer.is_some()) {
            let t = toks.pop_front().expect("front");
            let (status, places) = t.answer.as_ref().expect("answered");
            if *status == 0 {
                cov.hit("token stored");
                place(qp, mp, &t, places, &mut mem_q, cov)?;
                mem_q.push_back(MemWrite::TokenDone);
                mem_toks += 1;
                stored.entry((t.seq, t.layer)).or_default().push(t.x.clone());
                run.tokens_stored += 1;
            } else if *status == 4 {
                cov.hit("write out of pages");
                w_open -= 1;
            } else {
                // the model MMU agreed (every beat is compared), so the plan made it
                return Err(format!("write of ({}, {}) failed with status {status}; plans expect only OutOfPages", t.seq, t.layer));
            }
        }

        if let Some((k, t)) = d_offer {
            if d.get(dr) == 1 {
                let j = &mut jobs[k];
                if j.beat == 0 {
                    rec_out.push_back((k, t));
                }
                j.beat += 1;
                if j.beat == hb {
                    (j.beat, j.sent) = (0, j.sent + 1);
                }
            } else {
                cov.hit("d_ready low");
            }
        }
        if sparse_offer.is_some() {
            if d.get(sr) == 1 {
                sparse_offer = None;
            } else {
                cov.hit("s_ready low");
            }
        }
        if d.get(ov) == 1 && d_out_ready {
            out_vals.extend(d.get_lanes(odata).iter().map(|&v| v as u16));
            out_err |= d.get(oerr) == 1;
            if d.get(olast) == 1 {
                let (k, t) = rec_out.pop_front().ok_or("a dequantizer record with no dense record in")?;
                let j = &jobs[k];
                let at = format!("({}, {}, {}) token {t}", j.seq, j.layer, j.head);
                if out_err || out_vals != j.want[t] {
                    return Err(format!("{at}: out_err {out_err}, decoded {out_vals:04x?}, sim's round trip {:04x?}", j.want[t]));
                }
                cov.hit("record decoded");
                run.records.push((j.seq, j.layer, j.head, t as u32));
                (out_vals, out_err) = (Vec::new(), false);
            }
        } else if d.get(ov) == 1 {
            cov.hit("dequantizer output held");
        }

        q.tick();
        mm.tick();
        d.tick();
        cycle += 1;
    }
    if !rec_out.is_empty() || !sparse.is_empty() || sparse_offer.is_some() {
        return Err(format!("{} records and {} sparse bytes left over", rec_out.len(), sparse.len()));
    }
    run.cycles = cycle;
    Ok(run)
}

/// The memory writes of one stored token: each stream's bytes (spec §2.9)
/// into its placement descriptors in order, cut into bus beats.
fn place(qp: &OakenParams, mp: &MmuParams, t: &QTok, places: &[Beat], out: &mut VecDeque<MemWrite>, cov: &Coverage) -> Result<(), String> {
    let mut bytes: Vec<Vec<u8>> = vec![t.meta.clone()];
    for h in 0..qp.heads {
        bytes.push(dense_record(qp, &t.dense[h]));
        bytes.push(t.coo[h].clone());
    }
    let bus = mp.bus_bytes as u64;
    let mut used = vec![0usize; bytes.len()];
    let mut pieces = vec![0usize; bytes.len()];
    for b in places {
        let s = b.stream as usize;
        let (lo, len) = (used[s], b.len as usize);
        if s >= bytes.len() || lo + len > bytes[s].len() {
            return Err(format!("a placement of {len} bytes past stream {s}'s end"));
        }
        cov.hit_if("placement not bus-aligned", b.addr % bus != 0);
        let (mut a, mut k) = (b.addr, lo);
        while k < lo + len {
            let n = ((bus - a % bus) as usize).min(lo + len - k);
            out.push_back(MemWrite::Beat(a, bytes[s][k..k + n].to_vec()));
            (a, k) = (a + n as u64, k + n);
        }
        used[s] += len;
        pieces[s] += 1;
    }
    if used.iter().zip(&bytes).any(|(&u, b)| u != b.len()) {
        return Err(format!("placements cover {used:?} bytes of streams {:?}", bytes.iter().map(Vec::len).collect::<Vec<_>>()));
    }
    cov.hit_if("token stream split over pages", pieces.iter().any(|&n| n > 1));
    Ok(())
}
