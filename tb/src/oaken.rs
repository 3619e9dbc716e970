//! Driving the Oaken engine models and predicting their output from `sim`.
//! Spec: docs/spec.md §2.13 (ports, beats, handshakes, table writes).

use crate::model::{Model, PortId};
use sim::oaken::format::{CooEntry, Meta};
use sim::oaken::params::{Group, OakenParams, SEGMENT};
use sim::oaken::quantizer::quantize_token_detail;
use sim::oaken::thresholds::{Kv, ThresholdError, ThresholdTable};

/// One table write: `raw` = [lo_outer, lo_inner, hi_inner, hi_outer].
#[derive(Clone, Debug)]
pub struct TableWrite {
    pub layer: u8,
    pub v: bool,
    pub raw: [u16; 4],
}

impl TableWrite {
    pub fn data(&self) -> u64 {
        self.raw[0] as u64 | (self.raw[1] as u64) << 16 | (self.raw[2] as u64) << 32 | (self.raw[3] as u64) << 48
    }
}

/// One token: its layer, K (false) or V (true), and head_dim FP16 patterns.
#[derive(Clone, Debug)]
pub struct Token {
    pub layer: u8,
    pub v: bool,
    pub x: Vec<u16>,
}

/// One output beat of the quantization engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QBeat {
    pub dense: Vec<u64>,
    /// The valid COO entries (the first `count` lanes).
    pub coo: Vec<u64>,
    pub first: bool,
    pub last: bool,
    /// Metadata word as bytes, byte 0 = bits 7..0.
    pub meta: Vec<u64>,
    pub status: u64,
}

/// Idle patterns for the two stream ends: each cycle the source is idle (or
/// the sink not ready) with probability `idle / 256`, from a xorshift RNG.
#[derive(Clone, Debug)]
pub struct Stalls {
    pub seed: u64,
    pub in_idle: u8,
    pub out_idle: u8,
}

impl Stalls {
    pub const NONE: Stalls = Stalls { seed: 1, in_idle: 0, out_idle: 0 };
}

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub(crate) fn chance(&mut self, p256: u8) -> bool {
        ((self.next() >> 24) & 0xFF) < p256 as u64
    }
}

/// What a run produced, and when.
#[derive(Clone, Debug, Default)]
pub struct QRun {
    /// tw_err of each write.
    pub write_status: Vec<u64>,
    pub beats: Vec<QBeat>,
    /// Cycle (counted from the first streaming cycle) of each input beat's
    /// acceptance and each output beat's transfer.
    pub in_cycles: Vec<u64>,
    pub out_cycles: Vec<u64>,
    pub cycles: u64,
}

pub fn params_of(m: &Model) -> OakenParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are OakenParams")
}

fn err_code(r: Result<(), ThresholdError>) -> u64 {
    match r {
        Ok(()) => 0,
        Err(ThresholdError::NonFinite) => 1,
        Err(ThresholdError::OutOfOrder) => 2,
        Err(ThresholdError::LayerOutOfRange) => 3,
    }
}

pub(crate) fn kv(v: bool) -> Kv {
    if v {
        Kv::V
    } else {
        Kv::K
    }
}

/// The table after `writes`, and each write's expected status.
pub fn expected_table(p: &OakenParams, writes: &[TableWrite]) -> (ThresholdTable, Vec<u64>) {
    let mut t = ThresholdTable::new(p.layers);
    let codes = writes.iter().map(|w| err_code(t.write(w.layer as usize, kv(w.v), w.raw))).collect();
    (t, codes)
}

/// Metadata word as bytes, byte 0 = bits 7..0: the quantizer's `out_meta`
/// and the dequantizer's `d_meta` lanes (spec §2.9).
pub fn meta_bytes(p: &OakenParams, meta: &Meta) -> Vec<u64> {
    meta.pack(p).chunks(8).map(|c| bitvec::field::BitField::load_le::<u8>(c) as u64).collect()
}

/// The beats `sim` says the engine emits for `tokens` after `writes`.
pub fn expected_quantizer(p: &OakenParams, writes: &[TableWrite], tokens: &[Token]) -> (Vec<u64>, Vec<QBeat>) {
    let (table, codes) = expected_table(p, writes);
    let mut beats = Vec::new();
    for tok in tokens {
        let (set, oob) = table.lookup(tok.layer as usize, kv(tok.v));
        let (q, detail) = quantize_token_detail(p, &set, &tok.x);
        let meta = meta_bytes(p, &q.meta);
        let status = q.status.nonfinite as u64 | (oob as u64) << 1;
        for b in 0..p.beats() {
            let lo = b * p.lanes;
            let hi = lo + p.lanes;
            let coo = (lo..hi)
                .filter(|&i| detail[i].class.group != Group::Middle)
                .map(|i| {
                    let e = CooEntry {
                        idx: (i % SEGMENT) as u8,
                        outer: detail[i].class.group == Group::Outer,
                        hi: (detail[i].code >> p.inlier_bits) & 1 == 1,
                    };
                    e.encode() as u64
                })
                .collect();
            beats.push(QBeat {
                dense: q.dense[lo..hi].iter().map(|&d| d as u64).collect(),
                coo,
                first: b == 0,
                last: b + 1 == p.beats(),
                meta: meta.clone(),
                status,
            });
        }
    }
    (codes, beats)
}

struct QPorts {
    in_valid: PortId,
    in_ready: PortId,
    in_data: PortId,
    in_layer: PortId,
    in_kv: PortId,
    out_valid: PortId,
    out_ready: PortId,
    out_dense: PortId,
    out_coo: PortId,
    out_count: PortId,
    out_first: PortId,
    out_last: PortId,
    out_meta: PortId,
    out_status: PortId,
}

impl QPorts {
    fn of(m: &Model) -> QPorts {
        QPorts {
            in_valid: m.port("in_valid"),
            in_ready: m.port("in_ready"),
            in_data: m.port("in_data"),
            in_layer: m.port("in_layer"),
            in_kv: m.port("in_kv"),
            out_valid: m.port("out_valid"),
            out_ready: m.port("out_ready"),
            out_dense: m.port("out_dense"),
            out_coo: m.port("out_coo"),
            out_count: m.port("out_coo_count"),
            out_first: m.port("out_first"),
            out_last: m.port("out_last"),
            out_meta: m.port("out_meta"),
            out_status: m.port("out_status"),
        }
    }

    fn read_beat(&self, m: &Model) -> (QBeat, Vec<u64>) {
        let count = m.get(self.out_count) as usize;
        let all = m.get_lanes(self.out_coo);
        let beat = QBeat {
            dense: m.get_lanes(self.out_dense),
            coo: all[..count.min(all.len())].to_vec(),
            first: m.get(self.out_first) == 1,
            last: m.get(self.out_last) == 1,
            meta: m.get_lanes(self.out_meta),
            status: m.get(self.out_status),
        };
        (beat, all)
    }
}

/// Applies `writes` through the table-write port (spec §2.13, shared by both
/// Oaken engines), one per cycle; returns each write's `tw_err`.
pub fn write_table(m: &mut Model, writes: &[TableWrite]) -> Result<Vec<u64>, String> {
    let (tw_valid, tw_layer, tw_kv, tw_data, tw_done, tw_err) =
        (m.port("tw_valid"), m.port("tw_layer"), m.port("tw_kv"), m.port("tw_data"), m.port("tw_done"), m.port("tw_err"));
    let mut status = Vec::new();
    // tw_done/tw_err show the write of the previous cycle
    for (i, w) in writes.iter().enumerate() {
        m.set(tw_valid, 1);
        m.set(tw_layer, w.layer as u64);
        m.set(tw_kv, w.v as u64);
        m.set(tw_data, w.data());
        m.tick();
        m.set(tw_valid, 0);
        m.eval();
        if m.get(tw_done) != 1 {
            return Err(format!("write {i}: tw_done not raised the cycle after the write"));
        }
        status.push(m.get(tw_err));
    }
    m.tick();
    m.eval();
    if m.get(tw_done) != 0 {
        return Err("tw_done stayed high without a write".into());
    }
    Ok(status)
}

/// Applies `writes` (one per cycle), then streams `tokens` under `stalls`
/// until every expected beat is out, checking on the way that a held output
/// beat does not change, that unused COO lanes are 0 and that nothing comes
/// out after the last beat. Fails on a hang (`timeout` cycles).
pub fn drive_quantizer(
    m: &mut Model,
    writes: &[TableWrite],
    tokens: &[Token],
    stalls: &Stalls,
    timeout: u64,
) -> Result<QRun, String> {
    let p = params_of(m);
    let io = QPorts::of(m);
    let mut run = QRun::default();
    let mut rng = Rng(stalls.seed | 1);

    run.write_status = write_table(m, writes)?;

    let beats_per_token = p.beats();
    let total_in = tokens.len() * beats_per_token;
    let mut next_in = 0;
    let mut held: Option<(QBeat, Vec<u64>)> = None;
    let mut cycle = 0u64;
    while run.beats.len() < total_in {
        if cycle > timeout {
            return Err(format!(
                "hang: {} of {} input beats accepted, {} of {} output beats after {cycle} cycles",
                next_in,
                total_in,
                run.beats.len(),
                total_in
            ));
        }
        // input side
        let offer = next_in < total_in && !rng.chance(stalls.in_idle);
        if offer {
            let t = &tokens[next_in / beats_per_token];
            let b = next_in % beats_per_token;
            let lanes: Vec<u64> = t.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect();
            m.set(io.in_valid, 1);
            m.set_lanes(io.in_data, &lanes);
            m.set(io.in_layer, t.layer as u64);
            m.set(io.in_kv, t.v as u64);
        } else {
            // idle: data must be ignored, so make it noise
            m.set(io.in_valid, 0);
            let noise: Vec<u64> = (0..p.lanes).map(|_| rng.next() & 0xFFFF).collect();
            m.set_lanes(io.in_data, &noise);
            m.set(io.in_layer, rng.next() & 0xFF);
        }
        // output side
        let ready = !rng.chance(stalls.out_idle);
        m.set(io.out_ready, ready as u64);
        m.eval();
        let out_valid = m.get(io.out_valid) == 1;
        if let Some(h) = &held {
            if !out_valid {
                return Err(format!("cycle {cycle}: out_valid dropped while a beat was held"));
            }
            if io.read_beat(m) != *h {
                return Err(format!("cycle {cycle}: a held output beat changed"));
            }
        }
        if out_valid {
            let (beat, all) = io.read_beat(m);
            if all.iter().skip(beat.coo.len()).any(|&e| e != 0) {
                return Err(format!("cycle {cycle}: COO lanes past out_coo_count are not 0: {all:?}"));
            }
            if ready {
                run.beats.push(beat);
                run.out_cycles.push(cycle);
                held = None;
            } else {
                held = Some((beat, all));
            }
        }
        if offer && m.get(io.in_ready) == 1 {
            next_in += 1;
            run.in_cycles.push(cycle);
        }
        m.tick();
        cycle += 1;
    }
    // nothing more may come out
    m.set(io.in_valid, 0);
    m.set(io.out_ready, 1);
    for _ in 0..64 {
        m.eval();
        if m.get(io.out_valid) == 1 {
            return Err(format!("cycle {cycle}: an output beat beyond the expected {total_in}"));
        }
        m.tick();
        cycle += 1;
    }
    run.cycles = cycle;
    Ok(run)
}

/// Compares a run with the expected beats; the message names the first
/// difference.
pub fn compare(run: &QRun, codes: &[u64], want: &[QBeat], beats_per_token: usize) -> Result<(), String> {
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
