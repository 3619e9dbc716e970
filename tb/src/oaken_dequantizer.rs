//! Driving the Oaken dequantization engine model, predicting its output from
//! `sim`, and the quantizer -> dequantizer round trip. Spec: docs/spec.md
//! §4.2 (ports, framing by the counts, handshakes, table writes), §4.3
//! (alignment and malformed lists) and §2.9 (records).
//!
//! Like the quantizer's driver (`crate::oaken`), traffic comes in segments
//! that may end in a reset. A segment is a stream of (token, head) records
//! on the dense input and one continuous sparse stream that the records'
//! counts cut. Every lane the spec says is ignored carries noise: sparse
//! lanes at and past `s_count`, the metadata, counts, layer and K/V of dense
//! beats other than a record's first, and every input while its valid is
//! low.

use crate::model::{Model, PortId};
use crate::oaken::{
    expected_table, kv, meta_bytes, params_of, pulse_reset, sets_in_effect, write_table, QBeat, TableWrite, Token,
    TwPort,
};
use crate::stalls::Stall;
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use sim::oaken::dequantizer::{align, dequantize_stream, pack_sparse, DenseRecord, DequantToken, Malformed, SparseBeat};
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::{Kv, ThresholdTable};
use std::ops::Range;

/// One output beat of the dequantization engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DBeat {
    /// FP16 patterns, lane 0 first.
    pub data: Vec<u64>,
    pub first: bool,
    pub last: bool,
    pub err: bool,
    pub layer_oob: bool,
}

/// The engine's two inputs: (token, head) records and the one continuous
/// sparse stream their counts cut (spec §4.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DStream {
    pub recs: Vec<DenseRecord>,
    pub sparse: Vec<SparseBeat>,
}

impl DStream {
    /// The stream's entries in order, each with its "from a beat with
    /// `s_count > L`" flag (each beat's first `min(s_count, L)` lanes).
    pub fn entries(&self, lanes: usize) -> Vec<(u8, bool)> {
        self.sparse
            .iter()
            .flat_map(|b| {
                let c = b.count as usize;
                b.lanes[..c.min(lanes)].iter().map(move |&e| (e, c > lanes))
            })
            .collect()
    }

    /// The stream entries each record takes, for the records whose list the
    /// stream holds completely (the others wait, spec §4.3).
    pub fn cuts(&self, lanes: usize) -> Vec<Range<usize>> {
        let total = self.entries(lanes).len();
        let mut pos = 0;
        let mut out = Vec::new();
        for r in &self.recs {
            let n = r.list_len();
            if pos + n > total {
                break;
            }
            out.push(pos..pos + n);
            pos += n;
        }
        out
    }

    /// Which malformed conditions of spec §4.3 each complete record has.
    pub fn malformed(&self, p: &OakenParams) -> Vec<Malformed> {
        let e = self.entries(p.lanes);
        self.cuts(p.lanes)
            .into_iter()
            .zip(&self.recs)
            .map(|(c, r)| {
                let list: Vec<u8> = e[c.clone()].iter().map(|x| x.0).collect();
                let mut m = align(p, &r.counts, &list).malformed;
                m.beat_over_lanes = e[c].iter().any(|x| x.1);
                m
            })
            .collect()
    }
}

/// The output beats of one decoded record.
pub fn record_beats(p: &OakenParams, t: &DequantToken) -> Vec<DBeat> {
    let hb = p.head_beats();
    (0..hb)
        .map(|b| {
            let last = b + 1 == hb;
            DBeat {
                data: t.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect(),
                first: b == 0,
                last,
                err: last && t.err,
                layer_oob: t.layer_oob,
            }
        })
        .collect()
}

/// The beats `sim` says the engine emits for `s`, record `k` decoded with
/// table `tables[k].1` (spec §4.2: the table as the record's first beat
/// enters); `tables[k].0` numbers the table's versions. Records past
/// `tables` are not expected.
pub fn expected_beats(p: &OakenParams, tables: &[(usize, ThresholdTable)], s: &DStream) -> Vec<DBeat> {
    let n = tables.len().min(s.recs.len());
    let mut out = Vec::new();
    let mut k = 0;
    // one model run per stretch of records that see the same table
    while k < n {
        let mut end = k + 1;
        while end < n && tables[end].0 == tables[k].0 {
            end += 1;
        }
        let toks = dequantize_stream(p, &tables[k].1, &s.recs[..end], &s.sparse);
        for t in toks.iter().skip(k) {
            out.extend(record_beats(p, t));
        }
        if toks.len() < end {
            break;
        }
        k = end;
    }
    out
}

/// The beats `sim` says the engine emits for `s` after `writes`, all
/// writes before the first record.
pub fn expected_dequantizer(p: &OakenParams, writes: &[TableWrite], s: &DStream) -> (Vec<u64>, Vec<DBeat>) {
    let (table, codes) = expected_table(p, writes);
    let toks = dequantize_stream(p, &table, &s.recs, &s.sparse);
    (codes, toks.iter().flat_map(|t| record_beats(p, t)).collect())
}

/// What the quantizer writes for `tokens` (spec §2.9): per token, one
/// record per head, head 0 first, and the heads' COO lists back to back in
/// one stream, packed into full beats as memory holds it.
pub fn records_of(p: &OakenParams, writes: &[TableWrite], tokens: &[Token]) -> DStream {
    let (table, _) = expected_table(p, writes);
    let mut recs = Vec::new();
    let mut entries = Vec::new();
    for t in tokens {
        let (set, _) = table.lookup(t.layer as usize, kv(t.v));
        let q = sim::oaken::quantizer::quantize_token(p, &set, &t.x);
        for h in 0..p.heads {
            recs.push(DenseRecord::new(p, t.layer, kv(t.v), &q, h));
            entries.extend_from_slice(&q.coo[h]);
        }
    }
    DStream { recs, sparse: pack_sparse(&entries, p.lanes) }
}

/// One dense input beat.
#[derive(Clone, Debug)]
struct DIn {
    dense: Vec<u64>,
    /// On a record's first beat only.
    first: Option<DFirst>,
}

/// What a record's first dense beat carries besides its slots.
#[derive(Clone, Debug)]
struct DFirst {
    meta: Vec<u64>,
    counts: Vec<u64>,
    layer: u64,
    v: u64,
}

struct DPorts {
    d_valid: PortId,
    d_ready: PortId,
    d_dense: PortId,
    d_meta: PortId,
    d_counts: PortId,
    d_layer: PortId,
    d_kv: PortId,
    s_valid: PortId,
    s_ready: PortId,
    s_coo: PortId,
    s_count: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_data: PortId,
    out_first: PortId,
    out_last: PortId,
    out_err: PortId,
    out_oob: PortId,
}

impl DPorts {
    fn of(m: &Model) -> DPorts {
        DPorts {
            d_valid: m.port("d_valid"),
            d_ready: m.port("d_ready"),
            d_dense: m.port("d_dense"),
            d_meta: m.port("d_meta"),
            d_counts: m.port("d_counts"),
            d_layer: m.port("d_layer"),
            d_kv: m.port("d_kv"),
            s_valid: m.port("s_valid"),
            s_ready: m.port("s_ready"),
            s_coo: m.port("s_coo"),
            s_count: m.port("s_count"),
            out_valid: m.port("out_valid"),
            out_ready: m.port("out_ready"),
            out_data: m.port("out_data"),
            out_first: m.port("out_first"),
            out_last: m.port("out_last"),
            out_err: m.port("out_err"),
            out_oob: m.port("out_layer_oob"),
        }
    }

    fn read(&self, m: &Model) -> DBeat {
        DBeat {
            data: m.get_lanes(self.out_data),
            first: m.get(self.out_first) == 1,
            last: m.get(self.out_last) == 1,
            err: m.get(self.out_err) == 1,
            layer_oob: m.get(self.out_oob) == 1,
        }
    }
}

/// The dense beats of a record.
fn dense_beats(p: &OakenParams, rec: &DenseRecord) -> Vec<DIn> {
    (0..p.head_beats())
        .map(|b| DIn {
            dense: rec.dense[b * p.lanes..(b + 1) * p.lanes].iter().map(|&d| d as u64).collect(),
            first: (b == 0).then(|| DFirst {
                meta: meta_bytes(&rec.meta),
                counts: rec.counts.iter().map(|&c| c as u64).collect(),
                layer: rec.layer as u64,
                v: (rec.kv == Kv::V) as u64,
            }),
        })
        .collect()
}

/// Stall patterns of the dense input, the sparse input and the output.
#[derive(Clone, Debug)]
pub struct DStalls {
    pub d: Stall,
    pub s: Stall,
    pub out: Stall,
}

impl DStalls {
    pub fn none() -> DStalls {
        DStalls { d: Stall::Never, s: Stall::Never, out: Stall::Never }
    }
}

/// Handshake events of a dequantizer segment, for coverage.
#[derive(Clone, Debug, Default)]
pub struct DEvents {
    /// Cycles with a dense (sparse) beat offered and `d_ready` (`s_ready`) low.
    pub d_ready_low: u64,
    pub s_ready_low: u64,
    /// ... while the output held a beat.
    pub full_behind_stall: u64,
    /// Sparse beats taken with noise in lanes at and past `s_count`.
    pub noisy_sparse: u64,
    /// Cycles in which the next record to come out had all its dense beats
    /// in but not its whole list (spec §4.3: it waits).
    pub waiting_for_list: u64,
    pub reset_in_flight: bool,
    pub live_between_tokens: u64,
}

/// The two input streams and the output of one dequantizer, cycle by cycle.
struct DSide {
    io: DPorts,
    dense: Source<DIn>,
    sparse: Source<SparseBeat>,
    sink: Sink<DBeat>,
    d_offer: bool,
    s_offer: bool,
    ready: bool,
}

impl DSide {
    fn new(m: &Model, st: &DStalls, seed: u64) -> DSide {
        DSide {
            io: DPorts::of(m),
            dense: Source::new([], &st.d, seed ^ 1),
            sparse: Source::new([], &st.s, seed ^ 2),
            sink: Sink::new(&st.out, seed ^ 3),
            d_offer: false,
            s_offer: false,
            ready: false,
        }
    }

    fn push(&mut self, p: &OakenParams, s: &DStream) {
        for r in &s.recs {
            self.dense.queue.extend(dense_beats(p, r));
        }
        self.sparse.queue.extend(s.sparse.iter().cloned());
    }

    /// Drives the inputs for this cycle (before `eval`).
    fn drive(&mut self, m: &mut Model, p: &OakenParams, rng: &mut Xorshift) {
        let io = &self.io;
        let noise = |rng: &mut Xorshift, n: usize, mask: u64| -> Vec<u64> { (0..n).map(|_| rng.next_u64() & mask).collect() };
        let meta_n = m.port_info(io.d_meta).elements;
        let cnt_n = m.port_info(io.d_counts).elements;
        let dmask = (1u64 << p.inlier_bits) - 1;
        let d = self.dense.offer().cloned();
        self.d_offer = d.is_some();
        m.set(io.d_valid, self.d_offer as u64);
        match d {
            Some(d) => {
                m.set_lanes(io.d_dense, &d.dense);
                let f = d.first.unwrap_or_else(|| DFirst {
                    meta: noise(rng, meta_n, 0xFF),
                    counts: noise(rng, cnt_n, 0xFF),
                    layer: rng.next_u64() & 0xFF,
                    v: rng.next_u64() & 1,
                });
                m.set_lanes(io.d_meta, &f.meta);
                m.set_lanes(io.d_counts, &f.counts);
                m.set(io.d_layer, f.layer);
                m.set(io.d_kv, f.v);
            }
            None => {
                m.set_lanes(io.d_dense, &noise(rng, p.lanes, dmask));
                m.set_lanes(io.d_meta, &noise(rng, meta_n, 0xFF));
                m.set_lanes(io.d_counts, &noise(rng, cnt_n, 0xFF));
                m.set(io.d_layer, rng.next_u64() & 0xFF);
                m.set(io.d_kv, rng.next_u64() & 1);
            }
        }
        let s = self.sparse.offer().cloned();
        self.s_offer = s.is_some();
        m.set(io.s_valid, self.s_offer as u64);
        match s {
            Some(s) => {
                // lanes at and past s_count are ignored: noise
                let keep = (s.count as usize).min(p.lanes);
                let lanes: Vec<u64> =
                    (0..p.lanes).map(|i| if i < keep { s.lanes[i] as u64 } else { rng.next_u64() & 0xFF }).collect();
                m.set_lanes(io.s_coo, &lanes);
                m.set(io.s_count, s.count as u64);
            }
            None => {
                m.set_lanes(io.s_coo, &noise(rng, p.lanes, 0xFF));
                m.set(io.s_count, rng.next_u64() & 0xFF);
            }
        }
        self.ready = self.sink.ready();
        m.set(io.out_ready, self.ready as u64);
    }

    /// After `eval`: takes the output, pops the inputs that were accepted.
    /// Returns whether a dense beat that starts a record was accepted, and
    /// the entries of the sparse beat accepted.
    fn sample(&mut self, m: &Model, cycle: u64, p: &OakenParams, ev: &mut DEvents) -> Result<(Option<bool>, usize), String> {
        let io = &self.io;
        let valid = m.get(io.out_valid) == 1;
        self.sink.sample(cycle, valid, self.ready, || io.read(m))?;
        let held = valid && !self.ready;
        let mut first = None;
        if self.d_offer {
            if m.get(io.d_ready) == 1 {
                first = Some(self.dense.take().first.is_some());
            } else {
                ev.d_ready_low += 1;
                ev.full_behind_stall += held as u64;
            }
        }
        let mut entries = 0;
        if self.s_offer {
            if m.get(io.s_ready) == 1 {
                let s = self.sparse.take();
                ev.noisy_sparse += ((s.count as usize) < p.lanes) as u64;
                entries = (s.count as usize).min(p.lanes);
            } else {
                ev.s_ready_low += 1;
            }
        }
        Ok((first, entries))
    }
}

/// One stretch of dequantizer traffic: table writes, records and their
/// sparse stream under stalls with writes interleaved, possibly cut by a
/// reset.
#[derive(Clone, Debug)]
pub struct DSegment {
    /// Writes already in the table (see `QSegment::prior`).
    pub prior: Vec<TableWrite>,
    pub writes: Vec<TableWrite>,
    pub stream: DStream,
    pub live: Vec<(u32, TableWrite)>,
    pub reset_at: Option<u32>,
    pub reset_cycles: u32,
    pub stalls: DStalls,
    pub seed: u64,
}

impl DSegment {
    pub fn plain(writes: Vec<TableWrite>, stream: DStream, stalls: DStalls, seed: u64) -> DSegment {
        DSegment { prior: vec![], writes, stream, live: vec![], reset_at: None, reset_cycles: 1, stalls, seed }
    }
}

/// What a dequantizer segment produced, and when.
#[derive(Clone, Debug, Default)]
pub struct DSegRun {
    pub write_status: Vec<u64>,
    pub live: Vec<(u64, TableWrite, u64)>,
    /// Stream cycle at which each record's first dense beat was accepted.
    pub first_edges: Vec<u64>,
    pub d_cycles: Vec<u64>,
    pub beats: Vec<DBeat>,
    pub out_cycles: Vec<u64>,
    pub cycles: u64,
    pub cut: bool,
    pub events: DEvents,
}

/// Runs one segment; fails on a protocol violation or a hang.
pub fn run_dequantizer_segment(m: &mut Model, seg: &DSegment, timeout: u64) -> Result<DSegRun, String> {
    let p = params_of(m);
    let tw = TwPort::of(m);
    let mut rng = Xorshift::new(seg.seed ^ 0xdeadbeef);
    let mut run = DSegRun { write_status: write_table(m, &seg.writes)?, ..Default::default() };
    let mut side = DSide::new(m, &seg.stalls, seg.seed);
    side.push(&p, &seg.stream);
    let hb = p.head_beats();
    let n_recs = seg.stream.recs.len();
    // where each complete record's list ends in the stream
    let ends: Vec<usize> = seg.stream.cuts(p.lanes).iter().map(|c| c.end).collect();
    let total = ends.len() * hb;
    let mut entries_in = 0usize;
    let mut live = seg.live.iter().peekable();
    let mut wrote = false;
    let mut cycle = 0u64;
    loop {
        if side.sink.beats.len() == total && live.peek().is_none() {
            break;
        }
        if cycle > timeout {
            return Err(format!(
                "hang: {} dense and {} sparse beats left, {} of {total} output beats after {cycle} cycles",
                side.dense.queue.len(),
                side.sparse.queue.len(),
                side.sink.beats.len()
            ));
        }
        if seg.reset_at == Some(cycle as u32) {
            m.eval();
            if let Some(s) = tw.sample(m, wrote).map_err(|e| format!("cycle {cycle}: {e}"))? {
                run.live.last_mut().expect("a live write was made").2 = s;
            }
            run.events.reset_in_flight = side.dense.taken > side.sink.beats.len();
            pulse_reset(m, seg.reset_cycles);
            run.cut = true;
            break;
        }
        let w = live.next_if(|(c, _)| *c as u64 == cycle).map(|(_, w)| w.clone());
        tw.drive(m, w.as_ref(), &mut rng);
        side.drive(m, &p, &mut rng);
        m.eval();
        if let Some(s) = tw.sample(m, wrote).map_err(|e| format!("cycle {cycle}: {e}"))? {
            run.live.last_mut().expect("a live write was made").2 = s;
        }
        let (taken, entries) = side.sample(m, cycle, &p, &mut run.events)?;
        entries_in += entries;
        if let Some(first) = taken {
            run.d_cycles.push(cycle);
            if first {
                run.first_edges.push(cycle);
            }
        }
        let next = side.sink.beats.len() / hb;
        if next < ends.len() && side.dense.taken >= (next + 1) * hb && entries_in < ends[next] {
            run.events.waiting_for_list += 1;
        }
        if let Some(w) = w {
            if !run.first_edges.is_empty() && run.first_edges.len() < n_recs {
                run.events.live_between_tokens += 1;
            }
            run.live.push((cycle, w, u64::MAX));
        }
        wrote = run.live.last().is_some_and(|l| l.0 == cycle);
        m.tick();
        cycle += 1;
    }
    run.beats = std::mem::take(&mut side.sink.beats);
    run.out_cycles = std::mem::take(&mut side.sink.cycles);
    if !run.cut {
        finish(m, &side.io, &tw, wrote, &mut run.live, &mut cycle, total, &mut rng)?;
    }
    run.cycles = cycle;
    Ok(run)
}

/// After the last beat: the last write's `tw_done`, and nothing more out.
#[allow(clippy::too_many_arguments)]
fn finish(
    m: &mut Model,
    io: &DPorts,
    tw: &TwPort,
    wrote: bool,
    live: &mut [(u64, TableWrite, u64)],
    cycle: &mut u64,
    total: usize,
    rng: &mut Xorshift,
) -> Result<(), String> {
    m.set(io.d_valid, 0);
    m.set(io.s_valid, 0);
    m.set(io.out_ready, 1);
    tw.drive(m, None, rng);
    for k in 0..32 {
        m.eval();
        if let Some(s) = tw.sample(m, wrote && k == 0).map_err(|e| format!("cycle {cycle}: {e}"))? {
            live.last_mut().expect("a live write was made").2 = s;
        }
        if m.get(io.out_valid) == 1 {
            return Err(format!("cycle {cycle}: an output beat beyond the expected {total}"));
        }
        m.tick();
        *cycle += 1;
    }
    Ok(())
}

/// Checks a dequantizer segment's run against `sim`.
pub fn check_dequantizer_segment(p: &OakenParams, seg: &DSegment, run: &DSegRun) -> Result<(), String> {
    let picks: Vec<(u8, bool)> = seg.stream.recs.iter().map(|r| (r.layer, r.kv == Kv::V)).collect();
    // spec §4.2: a write at edge t counts for first dense beats at t + 1 on
    let (codes, live_codes, _) = sets_in_effect(p, &seg.prior, &seg.writes, &run.live, &run.first_edges, 1, &picks);
    if run.write_status != codes {
        return Err(format!("table write status {:?}, expected {codes:?}", run.write_status));
    }
    let got_live: Vec<u64> = run.live.iter().map(|l| l.2).collect();
    if got_live != live_codes {
        return Err(format!("status of writes during traffic {got_live:?}, expected {live_codes:?}"));
    }
    // the whole table as each record sees it
    let mut all = seg.prior.clone();
    all.extend(seg.writes.iter().cloned());
    let (mut table, _) = expected_table(p, &all);
    let mut next = 0;
    let mut tables = Vec::new();
    for &f in &run.first_edges {
        while next < run.live.len() && run.live[next].0 + 1 <= f {
            let w = &run.live[next].1;
            let _ = table.write(w.layer as usize, kv(w.v), w.raw);
            next += 1;
        }
        tables.push((next, table.clone()));
    }
    let want = expected_beats(p, &tables, &seg.stream);
    let b = p.head_beats();
    stream::compare(&run.beats, &want, run.cut, |i| format!("record {} beat {}", i / b, i % b))
}

/// Streams `s` after `writes` under `stalls`, no resets or writes during
/// traffic, and checks every beat against `sim`.
pub fn drive_dequantizer(
    m: &mut Model,
    writes: &[TableWrite],
    s: &DStream,
    stalls: &DStalls,
    seed: u64,
) -> Result<DSegRun, String> {
    let p = params_of(m);
    let seg = DSegment::plain(writes.to_vec(), s.clone(), stalls.clone(), seed);
    let timeout = timeout_of(&p, s);
    let run = run_dequantizer_segment(m, &seg, timeout)?;
    check_dequantizer_segment(&p, &seg, &run)?;
    Ok(run)
}

/// Cycles a segment may take before it counts as a hang: generous per beat,
/// and per entry for the slow drop of a malformed record's remainder.
pub fn timeout_of(p: &OakenParams, s: &DStream) -> u64 {
    let entries: usize = s.recs.iter().map(DenseRecord::list_len).sum();
    20_000 + 400 * (s.recs.len() * p.head_beats() + s.sparse.len()) as u64 + 4 * entries as u64
}

// --------------------------------------------------------------- round trip

/// Stalls of a round trip: the quantizer's input, the two memory streams
/// between the engines (dense and sparse FIFOs, read side) and the output.
#[derive(Clone, Debug)]
pub struct RtStalls {
    pub input: Stall,
    pub mid: DStalls,
}

/// What a round trip produced.
#[derive(Clone, Debug, Default)]
pub struct RtRun {
    /// The quantizer's output beats (what went to memory).
    pub q_beats: Vec<QBeat>,
    pub beats: Vec<DBeat>,
    pub out_cycles: Vec<u64>,
    pub cycles: u64,
}

/// The quantizer RTL feeding the dequantizer through two FIFOs that model
/// the memory regions (spec §2.9, §10.2). Per quantizer output token and
/// head `h` the dense FIFO gets one record: the head's beats, the first one
/// with the token's `out_meta`, the head's `out_counts` lanes
/// `h*segments ..`, layer and K/V. The sparse FIFO is one continuous
/// stream: every head's COO entries in output order, packed into full beats
/// of `lanes` entries across records (a beat may end one record's list and
/// start the next one's), and after the last token its partial beat. Both
/// models step in lockstep; `writes` go to both tables.
pub fn drive_round_trip(
    q: &mut Model,
    d: &mut Model,
    writes: &[TableWrite],
    tokens: &[Token],
    stalls: &RtStalls,
    seed: u64,
    timeout: u64,
) -> Result<RtRun, String> {
    let p = params_of(q);
    if params_of(d) != p {
        return Err("quantizer and dequantizer models have different parameters".into());
    }
    let qs = write_table(q, writes)?;
    let ds = write_table(d, writes)?;
    if qs != ds {
        return Err(format!("table write status differs: quantizer {qs:?}, dequantizer {ds:?}"));
    }
    let (in_valid, in_ready, in_data, in_layer, in_kv) =
        (q.port("in_valid"), q.port("in_ready"), q.port("in_data"), q.port("in_layer"), q.port("in_kv"));
    let (q_out_valid, q_out_ready) = (q.port("out_valid"), q.port("out_ready"));
    let (q_dense, q_coo, q_count, q_first, q_last, q_meta, q_counts, q_status) = (
        q.port("out_dense"),
        q.port("out_coo"),
        q.port("out_coo_count"),
        q.port("out_first"),
        q.port("out_last"),
        q.port("out_meta"),
        q.port("out_counts"),
        q.port("out_status"),
    );
    let mut rng = Xorshift::new(seed | 1);
    let mut side = DSide::new(d, &stalls.mid, seed);
    let mut run = RtRun::default();
    let beats = p.beats();
    let (hb, seg) = (p.head_beats(), p.segments());
    let in_total = tokens.len() * beats;
    let total = tokens.len() * p.heads * hb;
    let in_beats: Vec<(usize, usize)> = (0..in_total).map(|i| (i / beats, i % beats)).collect();
    let mut src = Source::new(in_beats, &stalls.input, seed ^ 7);
    let mut q_tok = 0usize;
    let mut q_beat = 0usize;
    let mut pending: Vec<u8> = Vec::new();
    let mut cycle = 0u64;
    while side.sink.beats.len() < total {
        if cycle > timeout {
            return Err(format!(
                "hang: {} of {in_total} beats into the quantizer, {} out of it, {} of {total} out of the dequantizer after {cycle} cycles",
                src.taken,
                run.q_beats.len(),
                side.sink.beats.len()
            ));
        }
        let offer = src.offer().copied();
        q.set(in_valid, offer.is_some() as u64);
        match offer {
            Some((t, b)) => {
                let tk = &tokens[t];
                q.set_lanes(in_data, &tk.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect::<Vec<_>>());
                q.set(in_layer, tk.layer as u64);
                q.set(in_kv, tk.v as u64);
            }
            None => {
                q.set_lanes(in_data, &(0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect::<Vec<_>>());
                q.set(in_layer, rng.next_u64() & 0xFF);
            }
        }
        // the memory FIFOs take the quantizer's output whenever it has one
        q.set(q_out_ready, 1);
        side.drive(d, &p, &mut rng);
        q.eval();
        d.eval();
        if q.get(q_out_valid) == 1 {
            let count = q.get(q_count) as usize;
            let coo = q.get_lanes(q_coo);
            let b = QBeat {
                dense: q.get_lanes(q_dense),
                coo: coo[..count.min(coo.len())].to_vec(),
                first: q.get(q_first) == 1,
                last: q.get(q_last) == 1,
                meta: q.get_lanes(q_meta),
                counts: q.get_lanes(q_counts),
                status: q.get(q_status),
            };
            let t = tokens.get(q_tok).ok_or("the quantizer emitted more tokens than it was given")?;
            let h = q_beat / hb;
            side.dense.queue.push_back(DIn {
                dense: b.dense.clone(),
                first: (q_beat % hb == 0).then(|| DFirst {
                    meta: b.meta.clone(),
                    counts: b.counts[h * seg..(h + 1) * seg].to_vec(),
                    layer: t.layer as u64,
                    v: t.v as u64,
                }),
            });
            pending.extend(b.coo.iter().map(|&e| e as u8));
            while pending.len() >= p.lanes {
                let rest = pending.split_off(p.lanes);
                side.sparse.queue.push_back(SparseBeat { lanes: std::mem::replace(&mut pending, rest), count: p.lanes as u8 });
            }
            q_beat += 1;
            if q_beat == beats {
                q_beat = 0;
                q_tok += 1;
                // the stream's end: its partial beat goes out too
                if q_tok == tokens.len() && !pending.is_empty() {
                    let n = pending.len();
                    pending.resize(p.lanes, 0);
                    side.sparse.queue.push_back(SparseBeat { lanes: std::mem::take(&mut pending), count: n as u8 });
                }
            }
            run.q_beats.push(b);
        }
        side.sample(d, cycle, &p, &mut DEvents::default())?;
        if offer.is_some() && q.get(in_ready) == 1 {
            src.take();
        }
        q.tick();
        d.tick();
        cycle += 1;
    }
    run.beats = std::mem::take(&mut side.sink.beats);
    run.out_cycles = std::mem::take(&mut side.sink.cycles);
    let tw = TwPort::of(d);
    finish(d, &side.io, &tw, false, &mut [], &mut cycle, total, &mut rng)?;
    run.cycles = cycle;
    Ok(run)
}
