//! Driving the Oaken dequantization engine model, predicting its output from
//! `sim`, and the quantizer -> dequantizer round trip. Spec: docs/spec.md
//! §4.2 (ports, framing, handshakes) and §2.9 (records).

use crate::model::{Model, PortId};
use crate::oaken::{expected_table, kv, meta_bytes, params_of, write_table, QBeat, Rng, TableWrite, Token};
use sim::oaken::dequantizer::{dequantize_stream, pack_sparse, DenseRecord, SparseBeat};
use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::Kv;
use std::collections::VecDeque;

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

/// Idle chances per 256 for the dense source, the sparse source and the
/// output sink.
#[derive(Clone, Debug)]
pub struct DStalls {
    pub seed: u64,
    pub d_idle: u8,
    pub s_idle: u8,
    pub out_idle: u8,
}

impl DStalls {
    pub const NONE: DStalls = DStalls { seed: 1, d_idle: 0, s_idle: 0, out_idle: 0 };
}

/// What a run produced, and when.
#[derive(Clone, Debug, Default)]
pub struct DRun {
    pub write_status: Vec<u64>,
    pub beats: Vec<DBeat>,
    /// Cycle of each dense input beat's acceptance and each output transfer.
    pub d_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub cycles: u64,
}

/// A token's dense and sparse records as the engine's two inputs take them.
pub type Record = (DenseRecord, Vec<SparseBeat>);

/// The beats `sim` (§4) says the engine emits for `records` after `writes`.
pub fn expected_dequantizer(p: &OakenParams, writes: &[TableWrite], records: &[Record]) -> (Vec<u64>, Vec<DBeat>) {
    let (table, codes) = expected_table(p, writes);
    let mut beats = Vec::new();
    for t in dequantize_stream(p, &table, records) {
        for b in 0..p.beats() {
            let last = b + 1 == p.beats();
            beats.push(DBeat {
                data: t.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect(),
                first: b == 0,
                last,
                err: last && t.err,
                layer_oob: t.layer_oob,
            });
        }
    }
    (codes, beats)
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
            let sparse = pack_sparse(&q.coo, p.lanes);
            (DenseRecord::new(t.layer, kv(t.v), &q), sparse)
        })
        .collect()
}

/// One dense input beat.
#[derive(Clone, Debug)]
struct DIn {
    dense: Vec<u64>,
    meta: Vec<u64>,
    layer: u64,
    kv: u64,
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

/// The dense beats of a record: metadata, layer and K/V ride on the first
/// beat; on the others they are noise, which the engine must ignore.
fn dense_beats(p: &OakenParams, rec: &DenseRecord, rng: &mut Rng) -> Vec<DIn> {
    let meta = meta_bytes(p, &rec.meta);
    (0..p.beats())
        .map(|b| {
            let dense = rec.dense[b * p.lanes..(b + 1) * p.lanes].iter().map(|&d| d as u64).collect();
            if b == 0 {
                DIn { dense, meta: meta.clone(), layer: rec.layer as u64, kv: (rec.kv == Kv::V) as u64 }
            } else {
                DIn {
                    dense,
                    meta: meta.iter().map(|_| rng.next() & 0xFF).collect(),
                    layer: rng.next() & 0xFF,
                    kv: rng.next() & 1,
                }
            }
        })
        .collect()
}

/// The two input streams and the output of one dequantizer, cycle by cycle.
struct DSide {
    io: DPorts,
    dq: VecDeque<DIn>,
    sq: VecDeque<SparseBeat>,
    held: Option<DBeat>,
    d_offer: bool,
    s_offer: bool,
    ready: bool,
}

impl DSide {
    fn new(m: &Model) -> DSide {
        DSide {
            io: DPorts::of(m),
            dq: VecDeque::new(),
            sq: VecDeque::new(),
            held: None,
            d_offer: false,
            s_offer: false,
            ready: false,
        }
    }

    /// Drives the inputs for this cycle (before `eval`).
    fn drive(&mut self, m: &mut Model, p: &OakenParams, rng: &mut Rng, st: &DStalls) {
        let io = &self.io;
        self.d_offer = !self.dq.is_empty() && !rng.chance(st.d_idle);
        if self.d_offer {
            let d = &self.dq[0];
            m.set(io.d_valid, 1);
            m.set_lanes(io.d_dense, &d.dense);
            m.set_lanes(io.d_meta, &d.meta);
            m.set(io.d_layer, d.layer);
            m.set(io.d_kv, d.kv);
        } else {
            m.set(io.d_valid, 0);
            let noise: Vec<u64> = (0..p.lanes).map(|_| rng.next()).collect();
            m.set_lanes(io.d_dense, &noise.iter().map(|n| n & ((1 << p.inlier_bits) - 1)).collect::<Vec<_>>());
            m.set(io.d_layer, rng.next() & 0xFF);
        }
        self.s_offer = !self.sq.is_empty() && !rng.chance(st.s_idle);
        if self.s_offer {
            let s = &self.sq[0];
            m.set(io.s_valid, 1);
            m.set_lanes(io.s_coo, &s.lanes.iter().map(|&e| e as u64).collect::<Vec<_>>());
            m.set(io.s_count, s.count as u64);
            m.set(io.s_last, s.last as u64);
        } else {
            m.set(io.s_valid, 0);
            m.set_lanes(io.s_coo, &(0..p.lanes).map(|_| rng.next() & 0xFF).collect::<Vec<_>>());
            m.set(io.s_count, rng.next() & 0xFF);
            m.set(io.s_last, rng.next() & 1);
        }
        self.ready = !rng.chance(st.out_idle);
        m.set(io.out_ready, self.ready as u64);
    }

    /// After `eval`: checks a held beat, takes the output, pops the inputs
    /// that were accepted. Returns the beat taken, if any, and whether a
    /// dense beat was accepted.
    fn sample(&mut self, m: &Model, cycle: u64) -> Result<(Option<DBeat>, bool), String> {
        let io = &self.io;
        let valid = m.get(io.out_valid) == 1;
        if let Some(h) = &self.held {
            if !valid {
                return Err(format!("cycle {cycle}: out_valid dropped while a beat was held"));
            }
            if io.read(m) != *h {
                return Err(format!("cycle {cycle}: a held output beat changed"));
            }
        }
        let mut taken = None;
        if valid {
            let b = io.read(m);
            if self.ready {
                taken = Some(b);
                self.held = None;
            } else {
                self.held = Some(b);
            }
        }
        let d_acc = self.d_offer && m.get(io.d_ready) == 1;
        if d_acc {
            self.dq.pop_front();
        }
        if self.s_offer && m.get(io.s_ready) == 1 {
            self.sq.pop_front();
        }
        Ok((taken, d_acc))
    }
}

/// Applies `writes`, then streams `records` into the two inputs under
/// `stalls` until every expected beat is out; checks that a held output
/// beat does not change and that nothing comes out afterwards. Fails on a
/// hang (`timeout` cycles).
pub fn drive_dequantizer(
    m: &mut Model,
    writes: &[TableWrite],
    records: &[Record],
    stalls: &DStalls,
    timeout: u64,
) -> Result<DRun, String> {
    let p = params_of(m);
    let mut run = DRun { write_status: write_table(m, writes)?, ..Default::default() };
    let mut rng = Rng(stalls.seed | 1);
    let mut side = DSide::new(m);
    for (rec, sparse) in records {
        side.dq.extend(dense_beats(&p, rec, &mut rng));
        side.sq.extend(sparse.iter().cloned());
    }
    let total = records.len() * p.beats();
    let mut cycle = 0u64;
    while run.beats.len() < total {
        if cycle > timeout {
            return Err(format!(
                "hang: {} dense and {} sparse beats left, {} of {total} output beats after {cycle} cycles",
                side.dq.len(),
                side.sq.len(),
                run.beats.len()
            ));
        }
        side.drive(m, &p, &mut rng, stalls);
        m.eval();
        let (taken, d_acc) = side.sample(m, cycle)?;
        if let Some(b) = taken {
            run.beats.push(b);
            run.out_cycles.push(cycle);
        }
        if d_acc {
            run.d_cycles.push(cycle);
        }
        m.tick();
        cycle += 1;
    }
    finish(m, &side.io, &mut cycle, total)?;
    run.cycles = cycle;
    Ok(run)
}

/// Nothing more may come out once every expected beat has.
fn finish(m: &mut Model, io: &DPorts, cycle: &mut u64, total: usize) -> Result<(), String> {
    m.set(io.d_valid, 0);
    m.set(io.s_valid, 0);
    m.set(io.out_ready, 1);
    for _ in 0..32 {
        m.eval();
        if m.get(io.out_valid) == 1 {
            return Err(format!("cycle {cycle}: an output beat beyond the expected {total}"));
        }
        m.tick();
        *cycle += 1;
    }
    Ok(())
}

/// Compares a run with the expected beats; the message names the first
/// difference.
pub fn compare_dequantizer(run: &DRun, codes: &[u64], want: &[DBeat], beats_per_token: usize) -> Result<(), String> {
    if run.write_status != codes {
        return Err(format!("table write status {:?}, expected {:?}", run.write_status, codes));
    }
    for (i, (got, exp)) in run.beats.iter().zip(want).enumerate() {
        if got != exp {
            return Err(format!(
                "token {} beat {}: got {got:?}\n expected {exp:?}",
                i / beats_per_token,
                i % beats_per_token
            ));
        }
    }
    if run.beats.len() != want.len() {
        return Err(format!("{} beats, expected {}", run.beats.len(), want.len()));
    }
    Ok(())
}

/// Stalls of a round trip: the quantizer's input, the two memory streams
/// between the engines (dense and sparse FIFOs), and the final output.
#[derive(Clone, Debug)]
pub struct RtStalls {
    pub seed: u64,
    pub in_idle: u8,
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

/// The quantizer RTL feeding the dequantizer RTL through two FIFOs that
/// model the memory regions: the dense FIFO takes each quantizer beat's
/// dense slots (with the token's metadata, layer and K/V on its first
/// beat); the sparse FIFO takes the COO entries re-packed into full beats of
/// `lanes` entries and a last partial beat, as memory holds the list. Both
/// models step in lockstep; `writes` go to both tables.
pub fn drive_round_trip(
    q: &mut Model,
    d: &mut Model,
    writes: &[TableWrite],
    tokens: &[Token],
    stalls: &RtStalls,
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
    let mut rng = Rng(stalls.seed | 1);
    let mut side = DSide::new(d);
    let mut run = RtRun::default();
    let beats = p.beats();
    let total = tokens.len() * beats;
    let (mut next_in, mut q_tok) = (0usize, 0usize);
    let mut pending: Vec<u8> = Vec::new();
    let mut cycle = 0u64;
    while run.beats.len() < total {
        if cycle > timeout {
            return Err(format!(
                "hang: {next_in} of {total} beats into the quantizer, {} out of it, {} out of the dequantizer after {cycle} cycles",
                run.q_beats.len(),
                run.beats.len()
            ));
        }
        // quantizer input
        let offer = next_in < total && !rng.chance(stalls.in_idle);
        q.set(in_valid, offer as u64);
        if offer {
            let t = &tokens[next_in / beats];
            let b = next_in % beats;
            q.set_lanes(in_data, &t.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect::<Vec<_>>());
            q.set(in_layer, t.layer as u64);
            q.set(in_kv, t.v as u64);
        }
        // the memory FIFOs take the quantizer's output whenever it has one
        q.set(q_out_ready, 1);
        side.drive(d, &p, &mut rng, &stalls.mid);
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
                status: q.get(q_status),
            };
            let t = tokens.get(q_tok).ok_or("the quantizer emitted more tokens than it was given")?;
            side.dq.push_back(DIn {
                dense: b.dense.clone(),
                meta: b.meta.clone(),
                layer: t.layer as u64,
                kv: t.v as u64,
            });
            pending.extend(b.coo.iter().map(|&e| e as u8));
            // a full beat goes out once more entries follow it; the token's
            // last beat carries the rest (1..=lanes, or 0 for no outliers)
            while pending.len() > p.lanes {
                let rest = pending.split_off(p.lanes);
                side.sq.push_back(SparseBeat { lanes: pending.clone(), count: p.lanes as u8, last: false });
                pending = rest;
            }
            if b.last {
                let mut lanes = pending.clone();
                lanes.resize(p.lanes, 0);
                side.sq.push_back(SparseBeat { lanes, count: pending.len() as u8, last: true });
                pending.clear();
                q_tok += 1;
            }
            run.q_beats.push(b);
        }
        let (taken, _) = side.sample(d, cycle)?;
        if let Some(b) = taken {
            run.beats.push(b);
            run.out_cycles.push(cycle);
        }
        if offer && q.get(in_ready) == 1 {
            next_in += 1;
        }
        q.tick();
        d.tick();
        cycle += 1;
    }
    finish(d, &side.io, &mut cycle, total)?;
    run.cycles = cycle;
    Ok(run)
}
