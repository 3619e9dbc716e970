//! Driving the Oaken quantization engine model and predicting its output
//! from `sim`; the table-write port shared with the dequantization engine.
//! Spec: docs/spec.md §2.13 (ports, beats, handshakes, table writes, reset).
//!
//! Traffic comes in segments: table writes, then a stream of tokens under
//! stall patterns at both ends with more table writes interleaved, possibly
//! cut short by a reset. What the engine emits in a segment is compared
//! with what `sim` says, given the edges at which each write and each
//! token's first beat were taken (the spec's rule for which tokens see a
//! write); after a reset the next segment starts from the reset state.

use crate::model::{Model, PortId};
use crate::stalls::Stall;
use crate::stim::Xorshift;
use crate::stream::{self, Sink, Source};
use sim::oaken::format::{CooEntry, Meta};
use sim::oaken::params::{Group, OakenParams, SEGMENT};
use sim::oaken::quantizer::quantize_token_detail;
use sim::oaken::thresholds::{Kv, ThresholdError, ThresholdSet, ThresholdTable};

/// One table write: `raw` = [lo_outer, lo_inner, hi_inner, hi_outer].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableWrite {
    pub layer: u8,
    pub v: bool,
    pub raw: [u16; 4],
}

impl TableWrite {
    pub fn data(&self) -> u64 {
        self.raw[0] as u64 | (self.raw[1] as u64) << 16 | (self.raw[2] as u64) << 32 | (self.raw[3] as u64) << 48
    }

    /// A write of `set` for (`layer`, K or V).
    pub fn of(layer: u8, v: bool, set: ThresholdSet) -> TableWrite {
        TableWrite { layer, v, raw: [set.lo_outer, set.lo_inner, set.hi_inner, set.hi_outer] }
    }
}

/// One token: its layer, K (false) or V (true), and `heads * head_dim` FP16
/// patterns.
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
    /// Segment counts of every head, head-major (`out_counts`).
    pub counts: Vec<u64>,
    pub status: u64,
}

pub fn params_of(m: &Model) -> OakenParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are OakenParams")
}

/// `tw_err` of a write (spec §2.13).
pub fn err_code(r: Result<(), ThresholdError>) -> u64 {
    match r {
        Ok(()) => 0,
        Err(ThresholdError::NonFinite) => 1,
        Err(ThresholdError::OutOfOrder) => 2,
        Err(ThresholdError::LayerOutOfRange) => 3,
    }
}

pub fn kv(v: bool) -> Kv {
    if v {
        Kv::V
    } else {
        Kv::K
    }
}

/// The table after `writes` from reset, and each write's expected status.
pub fn expected_table(p: &OakenParams, writes: &[TableWrite]) -> (ThresholdTable, Vec<u64>) {
    let mut t = ThresholdTable::new(p.layers);
    let codes = writes.iter().map(|w| err_code(t.write(w.layer as usize, kv(w.v), w.raw))).collect();
    (t, codes)
}

/// Metadata word as bytes, byte 0 = bits 7..0: the quantizer's `out_meta`
/// and the dequantizer's `d_meta` lanes (spec §2.9).
pub fn meta_bytes(meta: &Meta) -> Vec<u64> {
    meta.to_bytes().iter().map(|&b| b as u64).collect()
}

/// The beats `sim` says the engine emits for one token with set `set`.
pub fn token_beats(p: &OakenParams, set: &ThresholdSet, oob: bool, x: &[u16]) -> Vec<QBeat> {
    let (q, detail) = quantize_token_detail(p, set, x);
    let meta = meta_bytes(&q.meta);
    let counts: Vec<u64> = q.counts.iter().map(|&c| c as u64).collect();
    let status = q.status.nonfinite as u64 | (oob as u64) << 1;
    (0..p.beats())
        .map(|b| {
            let (lo, hi) = (b * p.lanes, (b + 1) * p.lanes);
            let coo = (lo..hi)
                .filter(|&i| detail[i].class.group != Group::Middle)
                .map(|i| {
                    // position within the head, then within its segment
                    let e = CooEntry {
                        idx: (i % p.head_dim % SEGMENT) as u8,
                        outer: detail[i].class.group == Group::Outer,
                        hi: (detail[i].code >> p.inlier_bits) & 1 == 1,
                    };
                    e.encode() as u64
                })
                .collect();
            QBeat {
                dense: q.dense[lo..hi].iter().map(|&d| d as u64).collect(),
                coo,
                first: b == 0,
                last: b + 1 == p.beats(),
                meta: meta.clone(),
                counts: counts.clone(),
                status,
            }
        })
        .collect()
}

/// The beats `sim` says the engine emits for `tokens` after `writes`, all
/// writes before the first token.
pub fn expected_quantizer(p: &OakenParams, writes: &[TableWrite], tokens: &[Token]) -> (Vec<u64>, Vec<QBeat>) {
    let (table, codes) = expected_table(p, writes);
    let beats = tokens
        .iter()
        .flat_map(|t| {
            let (set, oob) = table.lookup(t.layer as usize, kv(t.v));
            token_beats(p, &set, oob, &t.x)
        })
        .collect();
    (codes, beats)
}

// ------------------------------------------------------------ table writes

/// Applies `writes` through the table-write port (spec §2.13, shared by both
/// Oaken engines), one per cycle; returns each write's `tw_err`.
pub fn write_table(m: &mut Model, writes: &[TableWrite]) -> Result<Vec<u64>, String> {
    let tw = TwPort::of(m);
    let mut rng = Xorshift::new(0x7ab1e);
    let mut status = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        tw.drive(m, Some(w), &mut rng);
        m.tick();
        tw.drive(m, None, &mut rng);
        m.eval();
        let s = tw.sample(m, true).map_err(|e| format!("write {i}: {e}"))?;
        status.push(s.expect("a write was made"));
    }
    m.tick();
    m.eval();
    tw.sample(m, false)?;
    Ok(status)
}

/// The table-write port of either engine.
pub struct TwPort {
    valid: PortId,
    layer: PortId,
    kv: PortId,
    data: PortId,
    done: PortId,
    err: PortId,
}

impl TwPort {
    pub fn of(m: &Model) -> TwPort {
        TwPort {
            valid: m.port("tw_valid"),
            layer: m.port("tw_layer"),
            kv: m.port("tw_kv"),
            data: m.port("tw_data"),
            done: m.port("tw_done"),
            err: m.port("tw_err"),
        }
    }

    /// Drives a write, or noise with `tw_valid` low (which must be ignored).
    pub fn drive(&self, m: &mut Model, w: Option<&TableWrite>, rng: &mut Xorshift) {
        match w {
            Some(w) => {
                m.set(self.valid, 1);
                m.set(self.layer, w.layer as u64);
                m.set(self.kv, w.v as u64);
                m.set(self.data, w.data());
            }
            None => {
                m.set(self.valid, 0);
                m.set(self.layer, rng.next_u64() & 0xFF);
                m.set(self.kv, rng.next_u64() & 1);
                m.set(self.data, rng.next_u64());
            }
        }
    }

    /// After eval: `tw_done` must be high exactly when a write was made at
    /// the previous edge; returns its `tw_err` then.
    pub fn sample(&self, m: &Model, wrote: bool) -> Result<Option<u64>, String> {
        let done = m.get(self.done) == 1;
        match (wrote, done) {
            (true, true) => Ok(Some(m.get(self.err))),
            (true, false) => Err("tw_done not raised the cycle after a write".into()),
            (false, true) => Err("tw_done raised without a write".into()),
            (false, false) => Ok(None),
        }
    }
}

// ---------------------------------------------------------------- segments

/// One stretch of quantizer traffic (see the module comment).
#[derive(Clone, Debug)]
pub struct QSegment {
    /// Writes already in the table when the segment starts (made by earlier
    /// segments with no reset since); not written again.
    pub prior: Vec<TableWrite>,
    /// Written one per cycle before the stream starts.
    pub writes: Vec<TableWrite>,
    pub tokens: Vec<Token>,
    /// Writes during the stream: (stream cycle, write), cycles increasing.
    pub live: Vec<(u32, TableWrite)>,
    /// Reset rises at this stream cycle (for `reset_cycles` cycles),
    /// cutting the stream; nothing after it is issued.
    pub reset_at: Option<u32>,
    pub reset_cycles: u32,
    pub in_stall: Stall,
    pub out_stall: Stall,
    pub seed: u64,
}

impl QSegment {
    /// Just `tokens` after `writes`, with these stalls.
    pub fn plain(writes: Vec<TableWrite>, tokens: Vec<Token>, in_stall: Stall, out_stall: Stall, seed: u64) -> Self {
        QSegment { prior: vec![], writes, tokens, live: vec![], reset_at: None, reset_cycles: 1, in_stall, out_stall, seed }
    }
}

/// Handshake events of a segment, for coverage.
#[derive(Clone, Debug, Default)]
pub struct QEvents {
    /// Cycles with a beat offered and `in_ready` low.
    pub in_ready_low: u64,
    /// ... of which the output held a beat (`out_valid`, `out_ready` low):
    /// the buffer full behind a stalled output.
    pub full_behind_stall: u64,
    /// A reset cut the stream with beats accepted but not all out.
    pub reset_in_flight: bool,
    /// Live writes issued between two tokens' first beats.
    pub live_between_tokens: u64,
}

/// What a segment produced, and when.
#[derive(Clone, Debug, Default)]
pub struct QSegRun {
    pub write_status: Vec<u64>,
    /// Issued live writes: stream cycle (edge) and `tw_err`.
    pub live: Vec<(u64, TableWrite, u64)>,
    /// Stream cycle at which each token's first beat was accepted.
    pub first_edges: Vec<u64>,
    pub in_cycles: Vec<u64>,
    pub beats: Vec<QBeat>,
    pub out_cycles: Vec<u64>,
    pub cycles: u64,
    pub cut: bool,
    pub events: QEvents,
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
    out_counts: PortId,
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
            out_counts: m.port("out_counts"),
            out_status: m.port("out_status"),
        }
    }

    /// The output beat; lanes past `out_coo_count` must be 0 (spec §2.13).
    fn read_beat(&self, m: &Model) -> Result<QBeat, String> {
        let count = m.get(self.out_count) as usize;
        let all = m.get_lanes(self.out_coo);
        if count > all.len() || all[count..].iter().any(|&e| e != 0) {
            return Err(format!("COO lanes past out_coo_count {count} are not 0: {all:x?}"));
        }
        Ok(QBeat {
            dense: m.get_lanes(self.out_dense),
            coo: all[..count].to_vec(),
            first: m.get(self.out_first) == 1,
            last: m.get(self.out_last) == 1,
            meta: m.get_lanes(self.out_meta),
            counts: m.get_lanes(self.out_counts),
            status: m.get(self.out_status),
        })
    }
}

/// One input beat: lanes, and the token's layer and K/V (first beat only).
#[derive(Clone, Debug)]
struct QIn {
    lanes: Vec<u64>,
    first: bool,
    layer: u8,
    v: bool,
}

/// Holds reset high for `cycles` cycles with every other input at 0 (so
/// every valid is low), then releases it.
pub fn pulse_reset(m: &mut Model, cycles: u32) {
    m.reset(cycles.max(1));
}

/// Runs one segment on a model just out of reset (or just after the
/// previous segment); fails on a protocol violation or a hang (`timeout`
/// stream cycles).
pub fn run_quantizer_segment(m: &mut Model, seg: &QSegment, timeout: u64) -> Result<QSegRun, String> {
    let p = params_of(m);
    let io = QPorts::of(m);
    let tw = TwPort::of(m);
    let mut rng = Xorshift::new(seg.seed ^ 0x9e37_79b9);
    let mut run = QSegRun { write_status: write_table(m, &seg.writes)?, ..Default::default() };

    let beats: Vec<QIn> = seg
        .tokens
        .iter()
        .flat_map(|t| {
            (0..p.beats()).map(move |b| QIn {
                lanes: t.x[b * p.lanes..(b + 1) * p.lanes].iter().map(|&v| v as u64).collect(),
                first: b == 0,
                layer: t.layer,
                v: t.v,
            })
        })
        .collect();
    let total = beats.len();
    let mut src = Source::new(beats, &seg.in_stall, seg.seed);
    let mut sink: Sink<QBeat> = Sink::new(&seg.out_stall, seg.seed ^ 0x5151);
    let mut live = seg.live.iter().peekable();
    let mut wrote = false;
    let mut cycle = 0u64;
    loop {
        if sink.beats.len() == total && live.peek().is_none() {
            break;
        }
        if cycle > timeout {
            return Err(format!(
                "hang: {} of {total} input beats accepted, {} output beats after {cycle} cycles",
                src.taken,
                sink.beats.len()
            ));
        }
        if seg.reset_at == Some(cycle as u32) {
            m.eval();
            if let Some(s) = tw.sample(m, wrote).map_err(|e| format!("cycle {cycle}: {e}"))? {
                run.live.last_mut().expect("a live write was made").2 = s;
            }
            run.events.reset_in_flight = src.taken > sink.beats.len();
            pulse_reset(m, seg.reset_cycles);
            sink.reset();
            run.cut = true;
            break;
        }
        // table-write port
        let w = live.next_if(|(c, _)| *c as u64 == cycle).map(|(_, w)| w.clone());
        tw.drive(m, w.as_ref(), &mut rng);
        // input: on idle cycles, and for layer/kv past a token's first beat, noise
        let offer = src.offer().cloned();
        match &offer {
            Some(b) => {
                m.set(io.in_valid, 1);
                m.set_lanes(io.in_data, &b.lanes);
                let (layer, v) = if b.first { (b.layer as u64, b.v as u64) } else { (rng.next_u64() & 0xFF, rng.next_u64() & 1) };
                m.set(io.in_layer, layer);
                m.set(io.in_kv, v);
            }
            None => {
                m.set(io.in_valid, 0);
                let noise: Vec<u64> = (0..p.lanes).map(|_| rng.next_u64() & 0xFFFF).collect();
                m.set_lanes(io.in_data, &noise);
                m.set(io.in_layer, rng.next_u64() & 0xFF);
                m.set(io.in_kv, rng.next_u64() & 1);
            }
        }
        let ready = sink.ready();
        m.set(io.out_ready, ready as u64);
        m.eval();

        if let Some(s) = tw.sample(m, wrote).map_err(|e| format!("cycle {cycle}: {e}"))? {
            let last = run.live.last_mut().expect("a live write was made");
            last.2 = s;
        }
        let out_valid = m.get(io.out_valid) == 1;
        let mut beat_err = None;
        sink.sample(cycle, out_valid, ready, || {
            io.read_beat(m).unwrap_or_else(|e| {
                beat_err = Some(e);
                QBeat { dense: vec![], coo: vec![], first: false, last: false, meta: vec![], counts: vec![], status: 0 }
            })
        })?;
        if let Some(e) = beat_err {
            return Err(format!("cycle {cycle}: {e}"));
        }
        let in_ready = m.get(io.in_ready) == 1;
        if let Some(b) = &offer {
            if in_ready {
                if b.first {
                    run.first_edges.push(cycle);
                }
                run.in_cycles.push(cycle);
                src.take();
            } else {
                run.events.in_ready_low += 1;
                run.events.full_behind_stall += (out_valid && !ready) as u64;
            }
        }
        if let Some(w) = w {
            if !run.first_edges.is_empty() && run.first_edges.len() < seg.tokens.len() {
                run.events.live_between_tokens += 1;
            }
            run.live.push((cycle, w, u64::MAX));
        }
        wrote = run.live.last().is_some_and(|l| l.0 == cycle);
        m.tick();
        cycle += 1;
    }
    run.beats = sink.beats;
    run.out_cycles = sink.cycles;
    if !run.cut {
        // the last write's tw_done, then nothing more may come out
        m.set(io.in_valid, 0);
        m.set(io.out_ready, 1);
        tw.drive(m, None, &mut rng);
        for k in 0..64 {
            m.eval();
            if let Some(s) = tw.sample(m, wrote && k == 0).map_err(|e| format!("cycle {cycle}: {e}"))? {
                run.live.last_mut().expect("a live write was made").2 = s;
            }
            if m.get(io.out_valid) == 1 {
                return Err(format!("cycle {cycle}: an output beat beyond the expected {total}"));
            }
            m.tick();
            cycle += 1;
        }
    }
    run.cycles = cycle;
    Ok(run)
}

/// Which set each token of a segment uses, and the writes' statuses: the
/// table after `prior` (from reset) and the segment's writes, then each
/// live write applied
/// before the first token whose first beat was taken at an edge `>= its
/// edge + delay` (quantizer: delay 0, a write at the edge of a first beat
/// counts; dequantizer: delay 1, spec §4.2).
pub fn sets_in_effect(
    p: &OakenParams,
    prior: &[TableWrite],
    writes: &[TableWrite],
    live: &[(u64, TableWrite, u64)],
    first_edges: &[u64],
    delay: u64,
    tokens: &[(u8, bool)],
) -> (Vec<u64>, Vec<u64>, Vec<(ThresholdSet, bool)>) {
    let (mut table, _) = expected_table(p, prior);
    let codes = writes.iter().map(|w| err_code(table.write(w.layer as usize, kv(w.v), w.raw))).collect();
    let mut live_codes = Vec::new();
    let mut next = 0;
    let mut sets = Vec::new();
    for (k, &f) in first_edges.iter().enumerate() {
        while next < live.len() && live[next].0 + delay <= f {
            let w = &live[next].1;
            live_codes.push(err_code(table.write(w.layer as usize, kv(w.v), w.raw)));
            next += 1;
        }
        let (layer, v) = tokens[k];
        sets.push(table.lookup(layer as usize, kv(v)));
    }
    for (_, w, _) in &live[next..] {
        live_codes.push(err_code(table.write(w.layer as usize, kv(w.v), w.raw)));
    }
    (codes, live_codes, sets)
}

/// Checks a segment's run against `sim` (writes' statuses, then the beats:
/// all of them, or a prefix when a reset cut the stream).
pub fn check_quantizer_segment(p: &OakenParams, seg: &QSegment, run: &QSegRun) -> Result<(), String> {
    let picks: Vec<(u8, bool)> = seg.tokens.iter().map(|t| (t.layer, t.v)).collect();
    let (codes, live_codes, sets) = sets_in_effect(p, &seg.prior, &seg.writes, &run.live, &run.first_edges, 0, &picks);
    if run.write_status != codes {
        return Err(format!("table write status {:?}, expected {codes:?}", run.write_status));
    }
    let got_live: Vec<u64> = run.live.iter().map(|l| l.2).collect();
    if got_live != live_codes {
        return Err(format!("status of writes during traffic {got_live:?}, expected {live_codes:?}"));
    }
    let want: Vec<QBeat> = sets
        .iter()
        .zip(&seg.tokens)
        .flat_map(|((set, oob), t)| token_beats(p, set, *oob, &t.x))
        .collect();
    let b = p.beats();
    stream::compare(&run.beats, &want, run.cut, |i| format!("token {} beat {}", i / b, i % b))
}

/// Streams `tokens` after `writes` under `in_stall`/`out_stall`, with no
/// resets or writes during traffic, and checks every beat against `sim`.
pub fn drive_quantizer(
    m: &mut Model,
    writes: &[TableWrite],
    tokens: &[Token],
    in_stall: &Stall,
    out_stall: &Stall,
    seed: u64,
) -> Result<QSegRun, String> {
    let p = params_of(m);
    let seg = QSegment::plain(writes.to_vec(), tokens.to_vec(), in_stall.clone(), out_stall.clone(), seed);
    let timeout = 10_000 + 200 * (tokens.len() * p.beats()) as u64;
    let run = run_quantizer_segment(m, &seg, timeout)?;
    check_quantizer_segment(&p, &seg, &run)?;
    Ok(run)
}
