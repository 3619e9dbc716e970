//! Driving the Oaken dequantization engine model, predicting its output from
//! `sim`, and the quantizer -> dequantizer round trip. Spec: docs/spec.md
//! §4.2 (ports, framing, handshakes, table writes), §4.3 (alignment and
//! malformed lists) and §2.9 (records).
//!
//! Like the quantizer's driver (`crate::oaken`), traffic comes in segments
//! that may end in a reset. Every lane the spec says is ignored carries
//! noise: sparse lanes at and past `s_count`, the metadata, layer and K/V of
//! dense beats other than a token's first, and every input while its valid
//! is low.

use crate::model::{Model, PortId};
use crate::oaken::{
    expected_table, kv, meta_bytes, params_of, pulse_reset, sets_in_effect, write_table, QBeat, TableWrite, Token,
    TwPort,
};
use crate::stalls::Stall;
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use sim::oaken::dequantizer::{align, dequantize_record, pack_sparse, DenseRecord, Malformed, SparseBeat};
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::{Kv, ThresholdTable};

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

/// A token's dense and sparse records as the engine's two inputs take them.
pub type Record = (DenseRecord, Vec<SparseBeat>);

/// The output beats of one token decoded with `table` (spec §4.3, §4.4).
pub fn record_beats(p: &OakenParams, table: &ThresholdTable, rec: &Record) -> Vec<DBeat> {
    let t = dequantize_record(p, table, &rec.0, &[], rec.1.is_empty()); // TEMP: replaced by the deq branch
    (0..p.beats())
        .map(|b| {
            let last = b + 1 == p.beats();
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

/// Which malformed conditions of spec §4.3 a record has.
pub fn malformed(p: &OakenParams, rec: &Record) -> Malformed {
    align(p, &rec.0.counts, &[]).malformed
}

/// The beats `sim` says the engine emits for `records` after `writes`, all
/// writes before the first record.
pub fn expected_dequantizer(p: &OakenParams, writes: &[TableWrite], records: &[Record]) -> (Vec<u64>, Vec<DBeat>) {
    let (table, codes) = expected_table(p, writes);
    (codes, records.iter().flat_map(|r| record_beats(p, &table, r)).collect())
}

/// The records the quantizer writes for `tokens` (spec §2.9), sparse lists
/// packed as memory holds them.
pub fn records_of(p: &OakenParams, writes: &[TableWrite], tokens: &[Token]) -> Vec<Record> {
    let (table, _) = expected_table(p, writes);
    tokens
        .iter()
        .map(|t| {
            let (set, _) = table.lookup(t.layer as usize, kv(t.v));
            let q = sim::oaken::quantizer::quantize_token(p, &set, &t.x);
            (DenseRecord::new(p, t.layer, kv(t.v), &q, 0), pack_sparse(&q.coo[0], p.lanes))
        })
        .collect()
}

/// One dense input beat.
#[derive(Clone, Debug)]
struct DIn {
    dense: Vec<u64>,
    /// Metadata, layer and K/V: on a token's first beat only.
    first: Option<(Vec<u64>, u64, u64)>,
}

struct DPorts {
    d_valid: PortId,
    d_ready: PortId,
    d_dense: PortId,
    d_meta: PortId,
    d_layer: PortId,
    d_kv: PortId,
    s_valid: PortId,
    s_ready: PortId,
    s_coo: PortId,
    s_count: PortId,
    s_last: PortId,
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
            d_layer: m.port("d_layer"),
            d_kv: m.port("d_kv"),
            s_valid: m.port("s_valid"),
            s_ready: m.port("s_ready"),
            s_coo: m.port("s_coo"),
            s_count: m.port("s_count"),
            s_last: m.port("s_last"),
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
    let meta = meta_bytes(&rec.meta);
    (0..p.beats())
        .map(|b| DIn {
            dense: rec.dense[b * p.lanes..(b + 1) * p.lanes].iter().map(|&d| d as u64).collect(),
            first: (b == 0).then(|| (meta.clone(), rec.layer as u64, (rec.kv == Kv::V) as u64)),
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

    fn push(&mut self, p: &OakenParams, rec: &Record) {
        self.dense.queue.extend(dense_beats(p, &rec.0));
        self.sparse.queue.extend(rec.1.iter().cloned());
    }

    /// Drives the inputs for this cycle (before `eval`).
    fn drive(&mut self, m: &mut Model, p: &OakenParams, rng: &mut Xorshift) {
        let io = &self.io;
        let noise = |rng: &mut Xorshift, n: usize, mask: u64| -> Vec<u64> { (0..n).map(|_| rng.next_u64() & mask).collect() };
        let meta_n = m.port_info(io.d_meta).elements;
        let dmask = (1u64 << p.inlier_bits) - 1;
        let d = self.dense.offer().cloned();
        self.d_offer = d.is_some();
        m.set(io.d_valid, self.d_offer as u64);
        match d {
            Some(d) => {
                m.set_lanes(io.d_dense, &d.dense);
                let (meta, layer, v) = d.first.unwrap_or_else(|| (noise(rng, meta_n, 0xFF), rng.next_u64() & 0xFF, rng.next_u64() & 1));
                m.set_lanes(io.d_meta, &meta);
                m.set(io.d_layer, layer);
                m.set(io.d_kv, v);
            }
            None => {
                m.set_lanes(io.d_dense, &noise(rng, p.lanes, dmask));
                m.set_lanes(io.d_meta, &noise(rng, meta_n, 0xFF));
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
                m.set(io.s_last, rng.next_u64() & 1);
            }
        }
        self.ready = self.sink.ready();
        m.set(io.out_ready, self.ready as u64);
    }

    /// After `eval`: takes the output, pops the inputs that were accepted.
    /// Returns whether a dense beat that starts a token was accepted.
    fn sample(&mut self, m: &Model, cycle: u64, p: &OakenParams, ev: &mut DEvents) -> Result<Option<bool>, String> {
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
        if self.s_offer {
            if m.get(io.s_ready) == 1 {
                let s = self.sparse.take();
                ev.noisy_sparse += ((s.count as usize) < p.lanes) as u64;
            } else {
                ev.s_ready_low += 1;
            }
        }
        Ok(first)
    }
}

/// One stretch of dequantizer traffic: table writes, records streamed
/// under stalls with writes interleaved, possibly cut by a reset.
#[derive(Clone, Debug)]
pub struct DSegment {
    /// Writes already in the table (see `QSegment::prior`).
    pub prior: Vec<TableWrite>,
    pub writes: Vec<TableWrite>,
    pub records: Vec<Record>,
    pub live: Vec<(u32, TableWrite)>,
    pub reset_at: Option<u32>,
    pub reset_cycles: u32,
    pub stalls: DStalls,
    pub seed: u64,
}

impl DSegment {
    pub fn plain(writes: Vec<TableWrite>, records: Vec<Record>, stalls: DStalls, seed: u64) -> DSegment {
        DSegment { prior: vec![], writes, records, live: vec![], reset_at: None, reset_cycles: 1, stalls, seed }
    }
}

/// What a dequantizer segment produced, and when.
#[derive(Clone, Debug, Default)]
pub struct DSegRun {
    pub write_status: Vec<u64>,
    pub live: Vec<(u64, TableWrite, u64)>,
    /// Stream cycle at which each token's first dense beat was accepted.
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
    for r in &seg.records {
        side.push(&p, r);
    }
    let total = seg.records.len() * p.beats();
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
        if let Some(first) = side.sample(m, cycle, &p, &mut run.events)? {
            run.d_cycles.push(cycle);
            if first {
                run.first_edges.push(cycle);
            }
        }
        if let Some(w) = w {
            if !run.first_edges.is_empty() && run.first_edges.len() < seg.records.len() {
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
    let picks: Vec<(u8, bool)> = seg.records.iter().map(|r| (r.0.layer, r.0.kv == Kv::V)).collect();
    // spec §4.2: a write at edge t counts for first dense beats at t + 1 on
    let (codes, live_codes, _) = sets_in_effect(p, &seg.prior, &seg.writes, &run.live, &run.first_edges, 1, &picks);
    if run.write_status != codes {
        return Err(format!("table write status {:?}, expected {codes:?}", run.write_status));
    }
    let got_live: Vec<u64> = run.live.iter().map(|l| l.2).collect();
    if got_live != live_codes {
        return Err(format!("status of writes during traffic {got_live:?}, expected {live_codes:?}"));
    }
    // the whole table as each token sees it
    let mut all = seg.prior.clone();
    all.extend(seg.writes.iter().cloned());
    let (mut table, _) = expected_table(p, &all);
    let mut next = 0;
    let mut want = Vec::new();
    for (k, &f) in run.first_edges.iter().enumerate() {
        while next < run.live.len() && run.live[next].0 + 1 <= f {
            let w = &run.live[next].1;
            let _ = table.write(w.layer as usize, kv(w.v), w.raw);
            next += 1;
        }
        want.extend(record_beats(p, &table, &seg.records[k]));
    }
    let b = p.beats();
    stream::compare(&run.beats, &want, run.cut, |i| format!("token {} beat {}", i / b, i % b))
}

/// Streams `records` after `writes` under `stalls`, no resets or writes
/// during traffic, and checks every beat against `sim`.
pub fn drive_dequantizer(
    m: &mut Model,
    writes: &[TableWrite],
    records: &[Record],
    stalls: &DStalls,
    seed: u64,
) -> Result<DSegRun, String> {
    let p = params_of(m);
    let seg = DSegment::plain(writes.to_vec(), records.to_vec(), stalls.clone(), seed);
    let timeout = 10_000 + 200 * (records.len() * p.beats()) as u64;
    let run = run_dequantizer_segment(m, &seg, timeout)?;
    check_dequantizer_segment(&p, &seg, &run)?;
    Ok(run)
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
/// the memory regions: the dense FIFO takes each quantizer beat's dense
/// slots (with the token's metadata, layer and K/V on its first beat); the
/// sparse FIFO takes the COO entries re-packed into full beats of `lanes`
/// entries and a last partial beat, as memory holds the list. Both models
/// step in lockstep; `writes` go to both tables.
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
    let (q_dense, q_coo, q_count, q_first, q_last, q_meta, q_status) = (
        q.port("out_dense"),
        q.port("out_coo"),
        q.port("out_coo_count"),
        q.port("out_first"),
        q.port("out_last"),
        q.port("out_meta"),
        q.port("out_status"),
    );
    let mut rng = Xorshift::new(seed | 1);
    let mut side = DSide::new(d, &stalls.mid, seed);
    let mut run = RtRun::default();
    let beats = p.beats();
    let total = tokens.len() * beats;
    let in_beats: Vec<(usize, usize)> = (0..total).map(|i| (i / beats, i % beats)).collect();
    let mut src = Source::new(in_beats, &stalls.input, seed ^ 7);
    let mut q_tok = 0usize;
    let mut pending: Vec<u8> = Vec::new();
    let mut cycle = 0u64;
    while side.sink.beats.len() < total {
        if cycle > timeout {
            return Err(format!(
                "hang: {} of {total} beats into the quantizer, {} out of it, {} out of the dequantizer after {cycle} cycles",
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
                counts: vec![],
                status: q.get(q_status),
            };
            let t = tokens.get(q_tok).ok_or("the quantizer emitted more tokens than it was given")?;
            side.dense.queue.push_back(DIn {
                dense: b.dense.clone(),
                first: b.first.then(|| (b.meta.clone(), t.layer as u64, t.v as u64)),
            });
            pending.extend(b.coo.iter().map(|&e| e as u8));
            // a full beat goes out once more entries follow it; the token's
            // last beat carries the rest (1..=lanes, or 0 for no outliers)
            while pending.len() > p.lanes {
                let rest = pending.split_off(p.lanes);
                side.sparse.queue.push_back(SparseBeat { lanes: pending.clone(), count: p.lanes as u8 });
                pending = rest;
            }
            if b.last {
                let mut lanes = pending.clone();
                lanes.resize(p.lanes, 0);
                side.sparse.queue.push_back(SparseBeat { lanes, count: pending.len() as u8 });
                pending.clear();
                q_tok += 1;
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
