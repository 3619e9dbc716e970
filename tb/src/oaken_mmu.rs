//! Driving the Oaken MMU model (hdl/src/oaken/mmu.rs) and predicting its
//! response beats from `sim::oaken::mmu::Mmu`. Spec: docs/spec.md §10,
//! ports and timing §10.11.
//!
//! Traffic comes in segments: a list of commands offered on the command
//! channel (idle gaps with noise on the command bus), the response channel
//! under a stall pattern, possibly cut short by a reset at a given cycle.
//! Every response beat is compared, as it is taken, with the beats the
//! model gives for the commands taken so far; the model's invariants are
//! checked after every command. After a reset the model is reset too and
//! the next command starts from the reset state.

use crate::model::{Model, PortId};
use crate::stalls::{Stall, StallGen};
use crate::stim::Xorshift;
use crate::stream::Sink;
use proptest::prelude::*;
use sim::oaken::mmu::{BadField, Mmu, MmuError, MmuParams, SlotState, StreamDesc, AXI_BOUNDARY, AXI_MAX_BEATS};
use std::collections::VecDeque;

/// `rsp_kind` (spec §10.11).
pub const KIND_DESC: u8 = 0;
pub const KIND_COUNTS: u8 = 1;
pub const KIND_STATUS: u8 = 2;

/// One command. `Bad` is opcode 3, which the spec makes a `BadCommand`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    Write { seq: u16, layer: u8, counts: Vec<u8> },
    Read { seq: u16, layer: u8, head: u8 },
    Free { seq: u16 },
    Bad { seq: u16 },
}

/// One response beat, every field as the ports show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beat {
    pub kind: u8,
    pub stream: u16,
    pub addr: u64,
    pub len: u16,
    pub token: u32,
    pub counts: Vec<u8>,
    pub status: u8,
    pub slot: u8,
    pub opened: bool,
    pub pages: u32,
    pub last: bool,
}

impl Beat {
    fn blank(segments: usize) -> Beat {
        Beat {
            kind: 0,
            stream: 0,
            addr: 0,
            len: 0,
            token: 0,
            counts: vec![0; segments],
            status: 0,
            slot: 0,
            opened: false,
            pages: 0,
            last: false,
        }
    }

    fn desc(segments: usize, d: &StreamDesc) -> Beat {
        Beat { stream: d.stream.index() as u16, addr: d.desc.addr, len: d.desc.len as u16, ..Beat::blank(segments) }
    }

    fn status(segments: usize, status: u8) -> Beat {
        Beat { kind: KIND_STATUS, status, last: true, ..Beat::blank(segments) }
    }
}

/// What a command did in the model, for coverage.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub cmd: Cmd,
    pub result: Result<(), MmuError>,
    /// Write: pages taken; free: pages returned.
    pub pages: u32,
    /// Write: the write opened its id in a slot.
    pub opened: bool,
    /// Write: the write opened a slot that held a freed id.
    pub reused_freed: bool,
    /// Read: token count.
    pub tokens: u32,
    pub descs: Vec<StreamDesc>,
    /// Free pages after the command.
    pub free_after: usize,
}

pub fn params_of(m: &Model) -> MmuParams {
    serde_json::from_str(m.info().params_json).expect("model parameters are MmuParams")
}

/// The beats `mmu` says the RTL gives for `cmd`, applying it.
pub fn expect(mmu: &mut Mmu, cmd: &Cmd) -> (Vec<Beat>, Outcome) {
    let seg = mmu.params().segments();
    let slot_of = |m: &Mmu, seq: u16| (0..m.params().max_seqs).find(|&i| m.slot(i) == (seq, SlotState::Open));
    let mut o = Outcome {
        cmd: cmd.clone(),
        result: Ok(()),
        pages: 0,
        opened: false,
        reused_freed: false,
        tokens: 0,
        descs: Vec::new(),
        free_after: 0,
    };
    let beats = match cmd {
        Cmd::Write { seq, layer, counts } => {
            let before: Vec<_> = (0..mmu.params().max_seqs).map(|i| mmu.slot(i)).collect();
            match mmu.write(*seq, *layer as usize, counts) {
                Ok(w) => {
                    o.pages = w.pages_taken;
                    o.opened = w.opened;
                    o.reused_freed = w.opened && before[w.slot].1 == SlotState::Freed;
                    o.descs = w.places.clone();
                    let mut v: Vec<Beat> = w.places.iter().map(|d| Beat::desc(seg, d)).collect();
                    v.push(Beat {
                        slot: w.slot as u8,
                        opened: w.opened,
                        token: w.token,
                        pages: w.pages_taken,
                        ..Beat::status(seg, 0)
                    });
                    v
                }
                Err(e) => {
                    o.result = Err(e);
                    vec![Beat::status(seg, e.code())]
                }
            }
        }
        Cmd::Read { seq, layer, head } => match mmu.read(*seq, *layer as usize, *head as usize) {
            Ok(r) => {
                let slot = slot_of(mmu, *seq).expect("a read succeeds only on an open id");
                o.tokens = r.tokens;
                o.descs = r.descs.clone();
                let mut v: Vec<Beat> = r.descs.iter().map(|d| Beat::desc(seg, d)).collect();
                for (t, c) in r.counts.chunks(seg).enumerate() {
                    v.push(Beat { kind: KIND_COUNTS, token: t as u32, counts: c.to_vec(), ..Beat::blank(seg) });
                }
                v.push(Beat { slot: slot as u8, token: r.tokens, ..Beat::status(seg, 0) });
                v
            }
            Err(e) => {
                o.result = Err(e);
                vec![Beat::status(seg, e.code())]
            }
        },
        Cmd::Free { seq } => {
            let slot = slot_of(mmu, *seq);
            let owned = mmu.owned_pages(*seq);
            match mmu.free(*seq) {
                Ok(()) => {
                    o.pages = owned.unwrap() as u32;
                    vec![Beat { slot: slot.unwrap() as u8, pages: o.pages, ..Beat::status(seg, 0) }]
                }
                Err(e) => {
                    o.result = Err(e);
                    vec![Beat::status(seg, e.code())]
                }
            }
        }
        Cmd::Bad { .. } => {
            o.result = Err(MmuError::BadCommand(BadField::Layer(usize::MAX)));
            vec![Beat::status(seg, 1)]
        }
    };
    o.free_after = mmu.free_pages();
    (beats, o)
}

/// The MMU's ports.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub cmd_valid: PortId,
    pub cmd_ready: PortId,
    pub cmd_op: PortId,
    pub cmd_seq: PortId,
    pub cmd_layer: PortId,
    pub cmd_head: PortId,
    pub cmd_counts: PortId,
    pub rsp_valid: PortId,
    pub rsp_ready: PortId,
    pub rsp_kind: PortId,
    pub rsp_stream: PortId,
    pub rsp_addr: PortId,
    pub rsp_len: PortId,
    pub rsp_token: PortId,
    pub rsp_counts: PortId,
    pub rsp_status: PortId,
    pub rsp_slot: PortId,
    pub rsp_opened: PortId,
    pub rsp_pages: PortId,
    pub rsp_last: PortId,
}

impl Ports {
    pub fn of(m: &Model) -> Ports {
        let p = |n: &str| m.port(n);
        Ports {
            cmd_valid: p("cmd_valid"),
            cmd_ready: p("cmd_ready"),
            cmd_op: p("cmd_op"),
            cmd_seq: p("cmd_seq"),
            cmd_layer: p("cmd_layer"),
            cmd_head: p("cmd_head"),
            cmd_counts: p("cmd_counts"),
            rsp_valid: p("rsp_valid"),
            rsp_ready: p("rsp_ready"),
            rsp_kind: p("rsp_kind"),
            rsp_stream: p("rsp_stream"),
            rsp_addr: p("rsp_addr"),
            rsp_len: p("rsp_len"),
            rsp_token: p("rsp_token"),
            rsp_counts: p("rsp_counts"),
            rsp_status: p("rsp_status"),
            rsp_slot: p("rsp_slot"),
            rsp_opened: p("rsp_opened"),
            rsp_pages: p("rsp_pages"),
            rsp_last: p("rsp_last"),
        }
    }

    /// Drives `cmd` on the command bus (fields a command does not use carry `rng` noise).
    pub fn drive(&self, m: &mut Model, p: &MmuParams, cmd: &Cmd, rng: &mut Xorshift) {
        self.noise(m, p, rng);
        match cmd {
            Cmd::Write { seq, layer, counts } => {
                m.set(self.cmd_op, 0);
                m.set(self.cmd_seq, *seq as u64);
                m.set(self.cmd_layer, *layer as u64);
                m.set_lanes(self.cmd_counts, &counts.iter().map(|&c| c as u64).collect::<Vec<_>>());
            }
            Cmd::Read { seq, layer, head } => {
                m.set(self.cmd_op, 1);
                m.set(self.cmd_seq, *seq as u64);
                m.set(self.cmd_layer, *layer as u64);
                m.set(self.cmd_head, *head as u64);
            }
            Cmd::Free { seq } => {
                m.set(self.cmd_op, 2);
                m.set(self.cmd_seq, *seq as u64);
            }
            Cmd::Bad { seq } => {
                m.set(self.cmd_op, 3);
                m.set(self.cmd_seq, *seq as u64);
            }
        }
    }

    /// Random values on every command field.
    pub fn noise(&self, m: &mut Model, p: &MmuParams, rng: &mut Xorshift) {
        m.set(self.cmd_op, rng.next_u64() & 3);
        m.set(self.cmd_seq, rng.next_u64() & 0xFFFF);
        m.set(self.cmd_layer, rng.next_u64() & 0xFF);
        m.set(self.cmd_head, rng.next_u64() & 0xFF);
        let n = p.heads * p.segments();
        m.set_lanes(self.cmd_counts, &(0..n).map(|_| rng.next_u64() & 0xFF).collect::<Vec<_>>());
    }

    pub fn read(&self, m: &Model) -> Beat {
        Beat {
            kind: m.get(self.rsp_kind) as u8,
            stream: m.get(self.rsp_stream) as u16,
            addr: m.get(self.rsp_addr),
            len: m.get(self.rsp_len) as u16,
            token: m.get(self.rsp_token) as u32,
            counts: m.get_lanes(self.rsp_counts).into_iter().map(|c| c as u8).collect(),
            status: m.get(self.rsp_status) as u8,
            slot: m.get(self.rsp_slot) as u8,
            opened: m.get(self.rsp_opened) == 1,
            pages: m.get(self.rsp_pages) as u32,
            last: m.get(self.rsp_last) == 1,
        }
    }
}

/// One segment of traffic.
#[derive(Clone, Debug)]
pub struct Segment {
    pub cmds: Vec<Cmd>,
    /// When the command source idles (holds `cmd_valid` low).
    pub idle: Stall,
    /// When `rsp_ready` is low.
    pub stall: Stall,
    /// A one-cycle reset at this cycle of the segment (if it is still running).
    pub reset_at: Option<u32>,
    pub seed: u64,
}

/// What happened in a segment.
#[derive(Clone, Debug, Default)]
pub struct SegRun {
    /// The model's outcome of every command taken.
    pub outcomes: Vec<Outcome>,
    /// Per command taken: the cycles from its acceptance to its status beat
    /// being taken (None if cut by the reset).
    pub latency: Vec<Option<u64>>,
    /// Per command taken: for each response beat taken, the cycles from the
    /// command's acceptance to that beat's transfer.
    pub beat_cycles: Vec<Vec<u64>>,
    /// Per command taken: the segment cycle it was taken in.
    pub accepted: Vec<u64>,
    /// A reset cut the segment.
    pub cut: bool,
    /// The reset came while a command was in flight.
    pub reset_mid_command: bool,
    /// A reset came while a command was in flight with some of its beats out.
    pub reset_mid_response: bool,
    /// Cycles with `rsp_valid` high and `rsp_ready` low on a beat that is not the command's last.
    pub held_mid_response: u64,
    /// Cycles a command was offered while `cmd_ready` was low.
    pub cmd_blocked: u64,
    /// Idle command cycles (noise on the bus).
    pub idle_cycles: u64,
    pub cycles: u64,
    pub beats: u64,
}

/// Runs `seg` on `m` against `mmu` (both in the same state); on return
/// both are in the same state again (reset, if the segment was cut).
pub fn run_segment(m: &mut Model, mmu: &mut Mmu, seg: &Segment, timeout: u64) -> Result<SegRun, String> {
    let p = mmu.params().clone();
    let io = Ports::of(m);
    let mut rng = Xorshift::new(seg.seed ^ 0x6a09_e667_f3bc_c908);
    let mut idle = StallGen::new(&seg.idle, seg.seed ^ 0x1f83_d9ab);
    let mut stall = StallGen::new(&seg.stall, seg.seed ^ 0x5be0_cd19);
    let mut sink: Sink<Beat> = Sink::new(&Stall::Never, 0);
    let mut run = SegRun::default();
    let mut next = 0usize; // next command to offer
    let mut offered = false;
    let mut want: VecDeque<Beat> = VecDeque::new();
    // commands whose beats are still owed, oldest first: (command, accepted at, beats out)
    let mut flight: VecDeque<(usize, u64, usize)> = VecDeque::new();
    let mut shown_status = 0usize; // status beats shown (taken or held)
    let mut status_held = false;
    for cyc in 0..timeout {
        run.cycles = cyc + 1;
        if seg.reset_at == Some(cyc as u32) {
            run.cut = true;
            run.reset_mid_command = !flight.is_empty();
            run.reset_mid_response = flight.front().is_some_and(|f| f.2 > 0);
            m.reset(1);
            mmu.reset();
            sink.reset();
            return Ok(run);
        }
        let idle_now = idle.next();
        if !offered && next < seg.cmds.len() && !idle_now {
            offered = true;
        }
        m.set(io.cmd_valid, offered as u64);
        if offered {
            io.drive(m, &p, &seg.cmds[next], &mut rng);
        } else {
            io.noise(m, &p, &mut rng);
            run.idle_cycles += 1;
        }
        let ready = !stall.next();
        m.set(io.rsp_ready, ready as u64);
        m.eval();

        let cmd_ready = m.get(io.cmd_ready) == 1;
        let rsp_valid = m.get(io.rsp_valid) == 1;
        let shown = if rsp_valid { Some(io.read(m)) } else { None };
        // cmd_ready only once every taken command's status has been shown
        let showing_status = shown.as_ref().is_some_and(|b| b.last);
        if showing_status && !status_held {
            shown_status += 1;
        }
        if cmd_ready && shown_status != run.outcomes.len() {
            return Err(format!(
                "cycle {cyc}: cmd_ready high while command {} has not shown its status beat",
                run.outcomes.len() - 1
            ));
        }
        if offered && !cmd_ready {
            run.cmd_blocked += 1;
        }
        if let Some(b) = &shown {
            if !ready && !b.last {
                run.held_mid_response += 1;
            }
        }
        // the response beat, checked as it is taken
        let taken = sink.sample(cyc, rsp_valid, ready, || shown.clone().unwrap())?.cloned();
        status_held = showing_status && !ready;
        if let Some(b) = taken {
            run.beats += 1;
            let k = flight.front().map(|f| f.0);
            let Some(w) = want.pop_front() else {
                return Err(format!("cycle {cyc}: response beat with no command in flight: {b:?}"));
            };
            if b != w {
                let c = k.map(|k| format!("{:?}", seg.cmds[k])).unwrap_or_default();
                return Err(format!("cycle {cyc}: command {k:?} {c}:\n got      {b:?}\n expected {w:?}"));
            }
            if let Some(f) = flight.front_mut() {
                f.2 += 1;
                run.beat_cycles[f.0].push(cyc - f.1);
            }
            if b.last {
                let (_, at, _) = flight.pop_front().expect("a command in flight");
                run.latency.push(Some(cyc - at));
            }
        }
        // the command, taken at this edge
        if offered && cmd_ready {
            let (beats, o) = expect(mmu, &seg.cmds[next]);
            mmu.check_invariants().map_err(|e| format!("model invariant after command {next}: {e}"))?;
            want.extend(beats);
            run.outcomes.push(o);
            run.beat_cycles.push(Vec::new());
            run.accepted.push(cyc);
            flight.push_back((next, cyc, 0));
            next += 1;
            offered = false;
        }
        m.tick();
        if next == seg.cmds.len() && flight.is_empty() && want.is_empty() {
            // one more cycle: nothing further comes out
            m.set(io.cmd_valid, 0);
            m.eval();
            if m.get(io.rsp_valid) == 1 {
                return Err(format!("cycle {}: rsp_valid after the last status beat", cyc + 1));
            }
            return Ok(run);
        }
    }
    Err(format!(
        "timeout after {timeout} cycles: {} of {} commands taken, {} beats owed{}",
        next,
        seg.cmds.len(),
        want.len(),
        flight.front().map(|f| format!(", command {} in flight since cycle {}", f.0, f.1)).unwrap_or_default()
    ))
}

// ---------------------------------------------------------------- stimulus

/// Segment counts of one token: mostly a few outliers per segment (Oaken's
/// ~10%), sometimes none, sometimes a full or a random segment; rarely one
/// count past its segment (a malformed write).
pub fn counts(p: &MmuParams) -> impl Strategy<Value = Vec<u8>> {
    let seg = p.segments();
    let lens: Vec<usize> = (0..p.heads * seg).map(|i| p.segment_len(i % seg)).collect();
    let n = lens.len();
    (0u8..20, prop::collection::vec(any::<u32>(), n), 0u8..60, any::<u32>()).prop_map(move |(mode, r, bad, pick)| {
        let mut c: Vec<u8> = lens
            .iter()
            .zip(&r)
            .map(|(&len, &x)| {
                let len = len as u32;
                (match mode {
                    0 => 0,
                    1 | 2 => len,                        // full segments
                    3 => x % (len + 1),                  // anything legal
                    _ => x % (len / 8 + 2).min(len + 1), // a few outliers
                }) as u8
            })
            .collect();
        if bad == 0 {
            let i = pick as usize % n;
            c[i] = (lens[i] as u32 + 1 + pick % 3).min(255) as u8;
        }
        c
    })
}

/// One command over `ids` sequence ids (more than the slots, so `NoSlot`
/// happens): mostly writes, then reads and frees; rarely a layer or head
/// out of range, or opcode 3.
pub fn cmd(p: &MmuParams, ids: u16) -> impl Strategy<Value = Cmd> {
    let (layers, heads) = (p.layers as u32, p.heads as u32);
    let layer =
        move || prop_oneof![40 => (0..layers).prop_map(|l| l as u8), 1 => (layers..=255u32).prop_map(|l| l as u8)];
    let head = prop_oneof![30 => (0..heads).prop_map(|h| h as u8), 1 => (heads..=255u32).prop_map(|h| h as u8)];
    prop_oneof![
        60 => (0..ids, layer(), counts(p)).prop_map(|(seq, layer, counts)| Cmd::Write { seq, layer, counts }),
        20 => (0..ids, layer(), head).prop_map(|(seq, layer, head)| Cmd::Read { seq, layer, head }),
        14 => (0..ids).prop_map(|seq| Cmd::Free { seq }),
        1 => (0..ids).prop_map(|seq| Cmd::Bad { seq }),
    ]
}

/// Response stalls: never, random, bursty, long blocks.
pub fn rsp_stall() -> impl Strategy<Value = Stall> {
    prop_oneof![
        2 => Just(Stall::Never),
        2 => (1u8..=200).prop_map(|p| Stall::Random { p }),
        3 => (1u8..=60, 1u8..=64).prop_map(|(enter, leave)| Stall::Bursty { enter, leave }),
        1 => (0u32..300, 20u32..300).prop_map(|(start, len)| Stall::Block { start, len }),
    ]
}

/// Command idles: none, random gaps, bursts of gaps.
pub fn cmd_idle() -> impl Strategy<Value = Stall> {
    prop_oneof![
        3 => Just(Stall::Never),
        2 => (1u8..=200).prop_map(|p| Stall::Random { p }),
        1 => (1u8..=40, 1u8..=64).prop_map(|(enter, leave)| Stall::Bursty { enter, leave }),
    ]
}

/// A segment of `len` commands over two more ids than slots; a third of
/// them end in a reset at a random cycle within about the time the
/// commands take (so it usually lands in the middle of a command, often in
/// the middle of its response).
pub fn segment(p: &MmuParams, len: std::ops::Range<usize>) -> impl Strategy<Value = Segment> {
    let ids = (p.max_seqs + 2) as u16;
    let reset = prop_oneof![2 => Just(None), 1 => (0u32..1000).prop_map(Some)];
    (prop::collection::vec(cmd(p, ids), len), cmd_idle(), rsp_stall(), reset, any::<u64>()).prop_map(
        |(cmds, idle, stall, reset, seed)| {
            // about 40 cycles per command without stalls
            let reset_at = reset.map(|r| (r as u64 * cmds.len() as u64 * 40 / 1000) as u32);
            Segment { cmds, idle, stall, reset_at, seed }
        },
    )
}

/// Short sequences written and freed over and over, chosen on `mmu` from
/// its current state (and applied to it) until the writes have taken
/// `pops` pages: at `pops >= 2 * phys_pages` the free list's head wraps
/// twice and its tail at least once (spec §10.4). Sequences of a few
/// tokens each take a page per stream, so this costs about one command per
/// page at any parameters. Each id is freed after a random number of
/// tokens, or when a write fails (`SeqTooLong`, `OutOfPages`, `NoSlot`).
pub fn churn(mmu: &mut Mmu, cmds: &mut Vec<Cmd>, pops: u64, seed: u64) {
    let p = mmu.params().clone();
    let seg = p.segments();
    let n = p.heads * seg;
    let mut rng = Xorshift::new(seed | 1);
    let ids = p.max_seqs as u64 + 1;
    let mut taken = 0u64;
    let limit = cmds.len() + 20 * pops as usize + 100;
    while taken < pops && cmds.len() < limit {
        let seq = (rng.next_u64() % ids) as u16;
        if mmu.owned_pages(seq).is_some() && rng.next_u64() % 4 == 0 {
            cmds.push(Cmd::Free { seq });
            expect(mmu, cmds.last().unwrap());
            continue;
        }
        let shape = rng.next_u64() % 8;
        let counts: Vec<u8> = (0..n)
            .map(|i| {
                let len = p.segment_len(i % seg) as u64;
                (match shape {
                    0 => 0,
                    1 => len,
                    _ => rng.next_u64() % (len / 8 + 2).min(len + 1),
                }) as u8
            })
            .collect();
        let layer = (rng.next_u64() % p.layers as u64) as u8;
        let c = Cmd::Write { seq, layer, counts };
        let (_, o) = expect(mmu, &c);
        cmds.push(c);
        match o.result {
            Ok(()) => taken += o.pages as u64,
            Err(_) => {
                // make room: free an open id (the one written, if open)
                let open = (0..ids as u16).find(|&s| mmu.owned_pages(s).is_some_and(|n| n > 0));
                if let Some(s) = mmu.owned_pages(seq).map(|_| seq).or(open) {
                    cmds.push(Cmd::Free { seq: s });
                    expect(mmu, cmds.last().unwrap());
                }
            }
        }
    }
}

/// A churn segment (`churn`) from the state a case has reached; the
/// commands are chosen on the model alone from reset (so the segment must
/// start from reset: it is always a case's first).
pub fn churn_segment(p: &MmuParams) -> impl Strategy<Value = Segment> {
    let p = p.clone();
    (cmd_idle(), rsp_stall(), any::<u64>()).prop_map(move |(idle, stall, seed)| {
        let mut mmu = Mmu::new(p.clone()).expect("model parameters are valid");
        let mut cmds = Vec::new();
        churn(&mut mmu, &mut cmds, 2 * p.phys_pages as u64 + p.phys_pages as u64 / 2, seed);
        Segment { cmds, idle, stall, reset_at: None, seed }
    })
}

/// A case: segments run back to back on one model (a cut segment's reset
/// is the next one's start).
/// One case in four starts with a churn segment (the free list wraps).
pub fn case(p: &MmuParams, segments: usize, len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Segment>> {
    let churned =
        (churn_segment(p), prop::collection::vec(segment(p, len.clone()), 0..segments)).prop_map(|(c, mut rest)| {
            rest.insert(0, c);
            rest
        });
    prop_oneof![3 => prop::collection::vec(segment(p, len), 1..=segments), 1 => churned]
}

/// Cycles a segment may take at most: generous per command and per page.
pub fn timeout(p: &MmuParams, seg: &Segment) -> u64 {
    let per = 200 + 8 * p.phys_pages as u64 + 4 * (p.max_seq_len * p.segments()) as u64;
    20_000 + per * seg.cmds.len() as u64 * if seg.stall == Stall::Never { 1 } else { 40 }
}

// ---------------------------------------------------------------- coverage

/// Coverage points of the MMU tests.
pub const POINTS: &[&str] = &[
    "write ok",
    "write opens a slot",
    "write reuses a freed slot",
    "read ok",
    "read with tokens (counts beats)",
    "free ok",
    "BadCommand: layer",
    "BadCommand: head",
    "BadCommand: count",
    "BadCommand: opcode 3",
    "NoSlot",
    "SeqTooLong",
    "OutOfPages (exhaustion)",
    "free list emptied",
    "recovery after exhaustion",
    "UnknownSeq",
    "DoubleFree",
    "token spans a page boundary",
    "burst cut at 4 KB",
    "burst cut at 256 beats",
    "burst merged over 2+ pages",
    "rsp backpressure mid-response",
    "cmd offered while busy",
    "idle command cycle with noise",
    "reset mid-command",
    "reset mid-response",
    "free list head wraps",
    "free list tail wraps",
];

/// What coverage carries across the segments of a case (from reset):
/// "an OutOfPages was seen" and "pages were freed since", and the pages
/// popped from and pushed onto the free list.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoverState {
    pub exhausted: (bool, bool),
    pub popped: u64,
    pub pushed: u64,
}

impl CoverState {
    /// After a reset: the free list is `0 .. phys_pages - 1` again.
    pub fn reset(&mut self) {
        *self = CoverState::default();
    }
}

/// Counts what one segment exercised; `st` carries state across the
/// segments of a case (the caller resets it after a cut segment).
pub fn cover(cov: &crate::coverage::Coverage, p: &MmuParams, run: &SegRun, st: &mut CoverState) {
    let pb = p.page_bytes as u64;
    let bus = p.bus_bytes as u64;
    let pp = p.phys_pages as u64;
    let exhausted = &mut st.exhausted;
    for o in &run.outcomes {
        // the FIFO's head (tail) wraps each time the pages popped (pushed)
        // since reset pass a multiple of phys_pages (spec §10.4)
        if o.result.is_ok() {
            match o.cmd {
                Cmd::Write { .. } => {
                    cov.add("free list head wraps", (st.popped + o.pages as u64) / pp - st.popped / pp);
                    st.popped += o.pages as u64;
                }
                Cmd::Free { .. } => {
                    cov.add("free list tail wraps", (st.pushed + o.pages as u64) / pp - st.pushed / pp);
                    st.pushed += o.pages as u64;
                }
                _ => {}
            }
        }
        match (&o.cmd, &o.result) {
            (Cmd::Write { .. }, Ok(())) => {
                cov.hit("write ok");
                cov.hit_if("write reuses a freed slot", o.reused_freed);
                if exhausted.0 && exhausted.1 && o.pages > 0 {
                    cov.hit("recovery after exhaustion");
                    *exhausted = (false, false);
                }
                // a stream whose token starts inside a page and runs past its end
                let mut s = 0;
                while s < o.descs.len() {
                    let st = o.descs[s].stream;
                    let e = s + o.descs[s..].iter().take_while(|d| d.stream == st).count();
                    let bytes: u64 = o.descs[s..e].iter().map(|d| d.desc.len as u64).sum();
                    let off = o.descs[s].desc.addr % pb;
                    cov.hit_if("token spans a page boundary", off != 0 && off + bytes > pb);
                    s = e;
                }
            }
            (Cmd::Read { .. }, Ok(())) => {
                cov.hit("read ok");
                cov.hit_if("read with tokens (counts beats)", o.tokens > 0);
            }
            (Cmd::Free { .. }, Ok(())) => {
                cov.hit("free ok");
                if exhausted.0 && o.pages > 0 {
                    exhausted.1 = true;
                }
            }
            (Cmd::Bad { .. }, _) => cov.hit("BadCommand: opcode 3"),
            (_, Err(e)) => {
                let point = match e {
                    MmuError::BadCommand(BadField::Layer(_)) => "BadCommand: layer",
                    MmuError::BadCommand(BadField::Head(_)) => "BadCommand: head",
                    MmuError::BadCommand(_) => "BadCommand: count",
                    MmuError::NoSlot { .. } => "NoSlot",
                    MmuError::SeqTooLong { .. } => "SeqTooLong",
                    MmuError::OutOfPages { .. } => {
                        exhausted.0 = true;
                        "OutOfPages (exhaustion)"
                    }
                    MmuError::UnknownSeq { .. } => "UnknownSeq",
                    MmuError::DoubleFree { .. } => "DoubleFree",
                };
                cov.hit(point);
            }
        }
        if let (Cmd::Write { .. }, Ok(())) = (&o.cmd, &o.result) {
            cov.hit_if("write opens a slot", o.opened);
        }
        cov.hit_if("free list emptied", o.free_after == 0 && o.result.is_ok() && o.pages > 0);
        for w in o.descs.windows(2) {
            let (a, b) = (w[0].desc, w[1].desc);
            if w[0].stream == w[1].stream && a.end() == b.addr {
                if a.end() % AXI_BOUNDARY == 0 {
                    cov.hit("burst cut at 4 KB");
                } else if a.addr % bus + a.len as u64 == AXI_MAX_BEATS * bus {
                    cov.hit("burst cut at 256 beats");
                }
            }
        }
        for d in &o.descs {
            cov.hit_if("burst merged over 2+ pages", d.desc.addr % pb + d.desc.len as u64 > pb);
        }
    }
    cov.add("rsp backpressure mid-response", run.held_mid_response);
    cov.add("cmd offered while busy", run.cmd_blocked);
    cov.add("idle command cycle with noise", run.idle_cycles);
    cov.hit_if("reset mid-command", run.reset_mid_command);
    cov.hit_if("reset mid-response", run.reset_mid_response);
}

// ---------------------------------------------------------------- directed case

/// Applies `c` to `mmu` and appends it to `cmds`; the model's outcome.
fn step(mmu: &mut Mmu, cmds: &mut Vec<Cmd>, c: Cmd) -> Outcome {
    let (_, o) = expect(mmu, &c);
    cmds.push(c);
    o
}

/// One short directed case that reaches every coverage point the
/// parameters allow, whatever the seed (few random cases, as on netlists,
/// may miss the rare ones). First, segments cut by a reset during a long
/// write (before its first beat, then after some); then, from reset, bad
/// commands of every kind, unknown ids, a sparse stream alone growing into
/// the next page, full tokens over every slot until the pages run out,
/// empty ones until they run out again, writes taking the last pages one
/// by one, a write with no slot left, reads of every head, a double free,
/// a freed slot and its pages reused, a sequence run past its length; the
/// response channel stalled at random, the command source idling. The
/// commands are chosen by running `sim`'s MMU alongside (stimulus only:
/// every beat is still checked against the model as it comes).
pub fn directed_case(p: &MmuParams) -> Vec<Segment> {
    let mut mmu = Mmu::new(p.clone()).expect("model parameters are valid");
    let mut cmds = Vec::new();
    let seg = p.segments();
    let n = p.heads * seg;
    let full: Vec<u8> = (0..n).map(|i| p.segment_len(i % seg) as u8).collect();
    let none = vec![0u8; n];
    let mut bad = none.clone();
    bad[0] = (p.segment_len(0) + 1).min(255) as u8;
    let seqs = p.max_seqs as u16;
    let layer = |k: usize| (k % p.layers) as u8;
    // unknown ids and bad commands
    step(&mut mmu, &mut cmds, Cmd::Bad { seq: 0 });
    step(&mut mmu, &mut cmds, Cmd::Read { seq: 0, layer: 0, head: 0 });
    step(&mut mmu, &mut cmds, Cmd::Free { seq: 0 });
    step(&mut mmu, &mut cmds, Cmd::Write { seq: 0, layer: p.layers.min(255) as u8, counts: none.clone() });
    step(&mut mmu, &mut cmds, Cmd::Write { seq: 0, layer: 0, counts: bad });
    // from the fresh free list, two tokens whose only outliers are the last
    // head's: its sparse stream, the last to take a page, later crosses a
    // page alone, into the next one (a burst merged over two pages)
    let mut last = none.clone();
    for (i, c) in last.iter_mut().enumerate().skip((p.heads - 1) * seg) {
        *c = p.segment_len(i % seg) as u8;
    }
    for _ in 0..2 {
        step(&mut mmu, &mut cmds, Cmd::Write { seq: 0, layer: 0, counts: last.clone() });
    }
    // full tokens over every slot, then empty ones, until the pages run out
    // (or until every slot and layer is full: a run of refusals)
    for counts in [&full, &none] {
        let (mut k, mut refused) = (0usize, 0usize);
        loop {
            let s = (k % p.max_seqs) as u16;
            let o =
                step(&mut mmu, &mut cmds, Cmd::Write { seq: s, layer: layer(k / p.max_seqs), counts: counts.clone() });
            k += 1;
            refused = if o.result.is_ok() { 0 } else { refused + 1 };
            if matches!(o.result, Err(MmuError::OutOfPages { .. })) || refused >= 2 * p.max_seqs * p.layers {
                break;
            }
        }
    }
    // the last free pages, each time by a write that takes the fewest (so
    // one takes exactly the last: the free list emptied)
    let mut one = none.clone();
    one[0] = 1;
    let shapes = [none.clone(), one, last, full.clone()];
    for _ in 0..4 * p.phys_pages {
        if mmu.free_pages() == 0 {
            break;
        }
        let mut best: Option<(u32, Cmd)> = None;
        for s in 0..seqs {
            for l in 0..p.layers {
                for c in &shapes {
                    let Ok(w) = mmu.clone().write(s, l, c) else { continue };
                    let taken = match w.pages_taken {
                        n if n as usize == mmu.free_pages() => 0,
                        0 => u32::MAX,
                        n => n,
                    };
                    if best.as_ref().is_none_or(|b| taken < b.0) {
                        best = Some((taken, Cmd::Write { seq: s, layer: l as u8, counts: c.clone() }));
                    }
                }
            }
        }
        let Some((_, c)) = best else { break };
        step(&mut mmu, &mut cmds, c);
    }
    step(&mut mmu, &mut cmds, Cmd::Write { seq: seqs, layer: 0, counts: none.clone() });
    for h in 0..=p.heads.min(255) {
        step(&mut mmu, &mut cmds, Cmd::Read { seq: 0, layer: 0, head: h as u8 });
    }
    // free, free again, reuse the slot and the pages
    step(&mut mmu, &mut cmds, Cmd::Free { seq: 0 });
    step(&mut mmu, &mut cmds, Cmd::Free { seq: 0 });
    step(&mut mmu, &mut cmds, Cmd::Write { seq: seqs, layer: 0, counts: full.clone() });
    // more pages: a sequence run past its length (or out of pages again)
    for s in 1..seqs {
        step(&mut mmu, &mut cmds, Cmd::Free { seq: s });
    }
    for _ in 0..=p.max_seq_len {
        let o = step(&mut mmu, &mut cmds, Cmd::Write { seq: seqs, layer: 0, counts: none.clone() });
        if o.result.is_err() {
            break;
        }
    }
    for h in 0..p.heads {
        step(&mut mmu, &mut cmds, Cmd::Read { seq: seqs, layer: 0, head: h as u8 });
    }
    // short sequences over and over: the free list wraps at both ends
    churn(&mut mmu, &mut cmds, 2 * p.phys_pages as u64 + 1, 0x6368_7572);
    let traffic = Segment {
        cmds,
        idle: Stall::Random { p: 40 },
        stall: Stall::Random { p: 100 },
        reset_at: None,
        seed: 0x6d6d_7531,
    };
    // first, from reset: a full token's write, its response blocked from
    // cycle `s` on, reset 20 cycles later. The block keeps a command in
    // flight, so every one of these is cut (and leaves the MMU reset): an
    // early `s` cuts it before its first beat (mid-command), a later one
    // after some of its beats (mid-response), whatever the unit's latency.
    let mut segs: Vec<Segment> = (0..13u32)
        .map(|k| Segment {
            cmds: vec![Cmd::Write { seq: 1, layer: 0, counts: full.clone() }, Cmd::Free { seq: 1 }],
            idle: Stall::Never,
            stall: Stall::Block { start: 2 * k, len: 100_000 },
            reset_at: Some(2 * k + 20),
            seed: 0x6d6d_7532 + k as u64,
        })
        .collect();
    segs.push(traffic);
    segs
}

/// What the model alone says the commands of `segs` do (segments cut by
/// a reset left out: where they are cut is the hardware's timing).
pub fn model_outcomes(p: &MmuParams, segs: &[Segment]) -> Vec<SegRun> {
    segs.iter()
        .filter(|s| s.reset_at.is_none())
        .map(|s| {
            let mut mmu = Mmu::new(p.clone()).expect("model parameters are valid");
            SegRun { outcomes: s.cmds.iter().map(|c| expect(&mut mmu, c).1).collect(), ..Default::default() }
        })
        .collect()
}
