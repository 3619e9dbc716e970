//! Co-simulation of the Oaken MMU (hdl/src/oaken/mmu.rs) against its golden
//! model (sim/src/oaken/mmu.rs), beat for beat, at every parameter set of
//! tb/models.toml. Spec: docs/spec.md §10, ports and timing §10.11.
//!
//! State-machine property tests: random interleavings of write, read and
//! free over more sequence ids than slots, with realistic segment counts
//! (mostly a few outliers, some full segments, rarely a malformed one),
//! commands offered with idle gaps and noise, the response channel under
//! random, bursty and blocking backpressure, segments cut by a reset at a
//! random cycle. Every response beat is compared with `sim`'s `Mmu`, whose
//! invariants are checked after every command. Cases are long enough to run
//! out of pages and recover by freeing. The coverage points are counted on
//! every run and must all be reached.

use sim::oaken::mmu::{Mmu, MmuParams};
use tb::coverage::Coverage;
use tb::oaken_mmu::{self, cover, params_of, run_segment, Cmd, CoverState, Segment, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "oaken-mmu";

/// Runs every segment of a case on `m` (fresh out of reset) and counts coverage.
fn run_case(m: &mut Model, p: &MmuParams, segs: &[Segment], cov: &Coverage) -> Result<(), String> {
    let mut mmu = Mmu::new(p.clone()).map_err(|e| e.to_string())?;
    let mut st = CoverState::default();
    for (k, s) in segs.iter().enumerate() {
        let run = run_segment(m, &mut mmu, s, oaken_mmu::timeout(p, s)).map_err(|e| format!("segment {k}: {e}"))?;
        cover(cov, p, &run, &mut st);
        if run.cut {
            st.reset();
        }
    }
    Ok(())
}

fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    let t = std::time::Instant::now();
    run_property(&name, info, oaken_mmu::case(&p, 3, 20..160), cases, |m, segs| run_case(m, &p, segs, cov));
    println!("{name}: {cases} cases in {:.1} s", t.elapsed().as_secs_f64());
}

/// The directed case, once (its rare points whatever the seed).
fn directed(info: &'static ModelInfo, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = format!("{}_directed", info.name);
    run_property(&name, info, proptest::strategy::Just(oaken_mmu::directed_case(&p)), 1, |m, segs| {
        run_case(m, &p, segs, cov)
    });
}

/// Points only the hardware's timing reaches (the directed case's stalls,
/// idles and resets reach them on every model).
const HW_POINTS: &[&str] = &[
    "rsp backpressure mid-response",
    "cmd offered while busy",
    "idle command cycle with noise",
    "reset mid-command",
    "reset mid-response",
];

/// The points the netlist runs require.
const NET_POINTS: &[&str] = &[
    "write ok",
    "read with tokens (counts beats)",
    "free ok",
    "NoSlot",
    "OutOfPages (exhaustion)",
    "recovery after exhaustion",
    "UnknownSeq",
    "token spans a page boundary",
    "burst merged over 2+ pages",
    "rsp backpressure mid-response",
    "reset mid-command",
    "free list head wraps",
    "free list tail wraps",
];

/// Cases at the defaults (`oaken_mmu`): its commands walk longer streams,
/// so fewer of them keep the run short.
const DEFAULT_CASES: u32 = 48;

/// Every MMU model of tb/models.toml, on RTL (the defaults with fewer
/// cases); coverage over all of them.
#[test]
fn rtl_matches_model() {
    models::sweep_closed(UNIT, false, 3, POINTS, POINTS, |info, cov| {
        check(info, prop::cases(if info.name == "oaken_mmu" { DEFAULT_CASES } else { 160 }), cov);
        directed(info, cov);
    });
}

/// The OSU018 netlists of this run (`make synth`'s, at 4 ns), on the same
/// properties with fewer cases; only the points every netlist run must
/// reach are required.
#[test]
fn netlists_match_model() {
    models::sweep_closed(UNIT, true, 1, POINTS, NET_POINTS, |info, cov| {
        check(info, prop::cases(24), cov);
        directed(info, cov);
    });
}

/// The directed case alone, on `sim` (no hardware): at every MMU set with
/// a netlist it reaches every point the netlist runs require that the
/// model decides, and over all the sets every such point of the RTL runs,
/// so that neither hangs on the random seed.
#[test]
fn directed_case_reaches_every_event_on_the_model() {
    let specs: Vec<_> = models::specs().iter().filter(|s| s.unit == UNIT).collect();
    assert!(specs.len() >= 3, "tb/models.toml has {} MMU entries", specs.len());
    assert!(specs.iter().any(|s| s.netlist), "no MMU set with a netlist");
    let all = Coverage::new("oaken_mmu directed case (model only, every set)", POINTS);
    for s in &specs {
        let p: MmuParams = toml::Value::Table(s.params.clone()).try_into().expect("MMU parameters");
        let cov = Coverage::new(&format!("oaken_mmu directed case ({})", s.name), POINTS);
        let (mut one, mut every) = (CoverState::default(), CoverState::default());
        for run in oaken_mmu::model_outcomes(&p, &oaken_mmu::directed_case(&p)) {
            cover(&cov, &p, &run, &mut one);
            cover(&all, &p, &run, &mut every);
        }
        // the free list wraps at every set, the defaults included (pooled
        // coverage would not show a set that never wraps)
        let wraps = (cov.count("free list head wraps"), cov.count("free list tail wraps"));
        assert!(wraps.0 >= 2 && wraps.1 >= 1, "{}: free list head and tail wraps {wraps:?}", s.name);
        if s.netlist {
            let required: Vec<&str> = NET_POINTS.iter().copied().filter(|q| !HW_POINTS.contains(q)).collect();
            cov.check_points(&required);
        }
    }
    let required: Vec<&str> = POINTS.iter().copied().filter(|q| !HW_POINTS.contains(q)).collect();
    all.check_points(&required);
}

fn write(seq: u16, counts: &[u8]) -> Cmd {
    Cmd::Write { seq, layer: 0, counts: counts.to_vec() }
}

fn plain(cmds: Vec<Cmd>, stall: Stall) -> Segment {
    Segment { cmds, idle: Stall::Never, stall, reset_at: None, seed: 1 }
}

/// Spec §10.10, Example 1, on the RTL: every beat as the model (which the
/// sim tests check against the example's numbers) gives it.
#[test]
fn spec_example_1() {
    let info = models::get("oaken_mmu_ex1");
    let p = params_of(&Model::new(info));
    let cmds = vec![
        write(7, &[3, 2]),
        write(7, &[0, 0]),
        write(7, &[64, 64]),
        write(7, &[1, 0]),
        write(9, &[0, 0]),
        Cmd::Read { seq: 7, layer: 0, head: 0 },
        Cmd::Free { seq: 7 },
        Cmd::Free { seq: 7 },
        Cmd::Read { seq: 7, layer: 0, head: 0 },
        Cmd::Free { seq: 8 },
        write(9, &[0, 0]),
    ];
    for stall in [Stall::Never, Stall::Random { p: 128 }] {
        run_property("oaken_mmu_example_1", info, proptest::strategy::Just(()), 1, |m, _| {
            let mut mmu = Mmu::new(p.clone()).unwrap();
            let run = run_segment(m, &mut mmu, &plain(cmds.clone(), stall.clone()), 100_000)?;
            let codes: Vec<u8> = run.outcomes.iter().map(|o| o.result.map_or_else(|e| e.code(), |_| 0)).collect();
            if codes != [0, 0, 0, 0, 4, 0, 0, 6, 5, 5, 0] {
                return Err(format!("status codes {codes:?}"));
            }
            Ok(())
        });
    }
}

/// Spec §10.11 reset: a reset in the middle of a command (at every cycle
/// of a write that takes pages and of a read and a free) loses the
/// command's remaining beats, and the MMU then behaves as after power-up:
/// all slots empty, the free list 0 .. phys_pages - 1.
#[test]
fn reset_mid_command_restarts_cleanly() {
    let info = models::get("oaken_mmu_h3");
    let p = params_of(&Model::new(info));
    let c = vec![0u8; p.heads * p.segments()];
    let full: Vec<u8> = (0..p.heads * p.segments()).map(|i| p.segment_len(i % p.segments()) as u8).collect();
    let before = vec![write(1, &full), write(1, &c), write(2, &full)];
    let during = vec![write(1, &full), Cmd::Read { seq: 1, layer: 0, head: 2 }, Cmd::Free { seq: 1 }];
    let after = vec![write(2, &c), write(1, &full), Cmd::Read { seq: 1, layer: 0, head: 1 }];
    for at in 0..120u32 {
        run_property("oaken_mmu_reset_mid_command", info, proptest::strategy::Just(()), 1, |m, _| {
            let mut mmu = Mmu::new(p.clone()).unwrap();
            run_segment(m, &mut mmu, &plain(before.clone(), Stall::Never), 100_000)?;
            let cut = Segment { reset_at: Some(at), ..plain(during.clone(), Stall::Random { p: 60 }) };
            let run = run_segment(m, &mut mmu, &cut, 100_000)?;
            if !run.cut {
                return Ok(());
            }
            // the model was reset with the RTL: the first write gets page 0 again
            let run = run_segment(m, &mut mmu, &plain(after.clone(), Stall::Never), 100_000)
                .map_err(|e| format!("after a reset at cycle {at}: {e}"))?;
            match &run.outcomes[0].descs.first() {
                Some(d) if d.desc.addr == 0 => Ok(()),
                d => Err(format!("after a reset at cycle {at}: first placement {d:?}")),
            }
        });
    }
}

/// Pieces (virtual pages touched) of the byte range `[f, f + b)` of a stream.
fn pieces(pb: u64, f: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        (f + b).div_ceil(pb) - f / pb
    }
}

/// Spec §10.11 (Throughput): "a few cycles decoding and checking"; this is
/// the test's reading of "a few".
const FEW: u64 = 10;

/// Spec §10.11 (Throughput): the stream walker's cycles for a range of
/// `pieces` page pieces and `descs` descriptors.
fn walker(pieces: u64, descs: u64) -> u64 {
    3 + 2 * pieces + descs
}

/// Throughput of every MMU model, printed, and checked against spec §10.11
/// (Throughput, response always ready): a write takes the walker's cycles
/// of every stream, one more per head, and at most `FEW` more; a read
/// reaches its last descriptor within the walker's cycles of its three
/// streams and `FEW` (the walker emits some descriptors in a cycle it
/// spends on a piece, so the formula is an upper bound there); counts
/// beats come one per cycle; a free returns one page per cycle (two frees
/// of the same streams differ by their page counts). Cycles per write:
/// from taking the command to taking its status beat; per read
/// descriptor: to taking the last descriptor, over the descriptors.
#[test]
fn throughput() {
    for info in models::of_unit(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let seg = p.segments();
        let pb = p.page_bytes as u64;
        // realistic tokens: about 10% outliers per segment, every head
        let counts: Vec<u8> = (0..p.heads * seg).map(|i| (p.segment_len(i % seg) / 10) as u8).collect();
        let n = p.max_seq_len.min(64);
        let mut cmds: Vec<Cmd> = (0..n).map(|_| write(0, &counts)).collect();
        cmds.extend((0..p.heads).map(|h| Cmd::Read { seq: 0, layer: 0, head: h as u8 }));
        let mut mmu = Mmu::new(p.clone()).unwrap();
        let run = run_segment(&mut m, &mut mmu, &plain(cmds, Stall::Never), 10_000_000).unwrap();
        // each stream's bytes per token, in stream order
        let mut bytes = vec![p.meta_bytes as u64];
        for h in 0..p.heads {
            bytes.push(p.dense_bytes as u64);
            bytes.push(counts[h * seg..(h + 1) * seg].iter().map(|&c| c as u64).sum());
        }
        let mut fill = vec![0u64; bytes.len()];
        let (mut wc, mut wn, mut wd) = (0u64, 0u64, 0u64);
        let (mut rc, mut rn, mut rd, mut rdc, mut rb, mut rt) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u32);
        for (k, ((o, lat), beats)) in run.outcomes.iter().zip(&run.latency).zip(&run.beat_cycles).enumerate() {
            let lat = lat.expect("no reset") + 1;
            let nd = |s: usize| o.descs.iter().filter(|d| d.stream.index() == s).count() as u64;
            match (&o.cmd, &o.result) {
                (Cmd::Write { .. }, Ok(())) => {
                    let mut want = p.heads as u64;
                    for s in 0..bytes.len() {
                        want += walker(pieces(pb, fill[s], bytes[s]), nd(s));
                        fill[s] += bytes[s];
                    }
                    assert!(
                        (want..=want + FEW).contains(&lat),
                        "{}: write {k} took {lat} cycles, spec §10.11 gives {want} plus a few",
                        info.name
                    );
                    (wc, wn, wd) = (wc + lat, wn + 1, wd + o.descs.len() as u64)
                }
                (Cmd::Read { head, .. }, Ok(())) => {
                    let nd_all = o.descs.len();
                    let h = *head as usize;
                    let want: u64 =
                        [0, 1 + 2 * h, 2 + 2 * h].iter().map(|&s| walker(fill[s].div_ceil(pb), nd(s))).sum();
                    let to_last = beats[nd_all - 1] + 1;
                    assert!(
                        to_last <= want + FEW,
                        "{}: read {k} took {to_last} cycles to its last descriptor, spec §10.11 gives {want} plus a few",
                        info.name
                    );
                    // counts beats, one per cycle (the status beat after them)
                    let counts_at = &beats[nd_all..beats.len() - 1];
                    assert_eq!(
                        counts_at.len(),
                        o.tokens as usize,
                        "{}: read {k}: one counts beat per token",
                        info.name
                    );
                    assert!(
                        counts_at.windows(2).all(|w| w[1] == w[0] + 1),
                        "{}: read {k}: counts beats at cycles {counts_at:?}, not one per cycle",
                        info.name
                    );
                    rc += lat;
                    rn += 1;
                    rd += nd_all as u64;
                    rdc += to_last;
                    rb += beats.len() as u64;
                    rt = rt.max(o.tokens);
                }
                _ => {}
            }
        }
        assert!(wn > 0 && rn > 0 && rd > 0, "{}: {wn} writes and {rn} reads succeeded", info.name);
        // frees: sequence 1 of one token and sequence 2 of as many full
        // tokens as fit (more pages, the same streams), both on layer 0
        let full: Vec<u8> = (0..p.heads * seg).map(|i| p.segment_len(i % seg) as u8).collect();
        let mut cmds = vec![Cmd::Free { seq: 0 }, write(1, &counts)];
        let mut trial = mmu.clone();
        trial.free(0).unwrap();
        trial.write(1, 0, &counts).unwrap();
        while cmds.len() < 258 && trial.write(2, 0, &full).is_ok() {
            cmds.push(write(2, &full));
        }
        cmds.extend([Cmd::Free { seq: 1 }, Cmd::Free { seq: 2 }]);
        let fr = run_segment(&mut m, &mut mmu, &plain(cmds, Stall::Never), 10_000_000).unwrap();
        let nf = fr.outcomes.len();
        let (f1, f2) = (&fr.outcomes[nf - 2], &fr.outcomes[nf - 1]);
        assert!(f1.result.is_ok() && f2.result.is_ok() && f2.pages > f1.pages, "{}: frees {f1:?} {f2:?}", info.name);
        let (l1, l2) = (fr.latency[nf - 2].unwrap(), fr.latency[nf - 1].unwrap());
        assert_eq!(
            l2 - l1,
            (f2.pages - f1.pages) as u64,
            "{}: frees of {} and {} pages took {l1} and {l2} cycles: not one page per cycle",
            info.name,
            f1.pages,
            f2.pages
        );
        println!(
            "{}: {wn} writes, {:.1} cycles per write ({:.2} descriptors per write); {rn} reads of {rt} tokens: \
             {:.1} cycles per read descriptor, {:.1} cycles per read, {:.2} cycles per response beat; \
             frees of {} and {} pages: {} and {} cycles",
            info.name,
            wc as f64 / wn as f64,
            wd as f64 / wn as f64,
            rdc as f64 / rd as f64,
            rc as f64 / rn as f64,
            rc as f64 / rb as f64,
            f1.pages,
            f2.pages,
            l1 + 1,
            l2 + 1,
        );
    }
}

#[test]
fn rtl_gen_rejects_bad_parameters_in_one_line() {
    let e = |k: &str, v: i64| {
        let mut t = toml::Table::new();
        t.insert(k.into(), toml::Value::Integer(v));
        rtl_gen::emit(UNIT, &t, &rtl_gen::EmitOptions::default()).err().expect("rejected").0
    };
    for (k, v, want) in [
        ("page-bytes", 32, "oaken-mmu: page-bytes must be a power of two in 64..=4096, got 32"),
        ("phys-pages", 1, "oaken-mmu: phys-pages must be in 2..=65536, got 1"),
        ("max-seqs", 257, "oaken-mmu: max-seqs must be in 1..=256, got 257"),
        ("addr-bits", 19, "oaken-mmu: addr-bits must be in 20..=48"),
        ("bus-bytes", 3, "oaken-mmu: bus-bytes must be a power of two in 1..=128, got 3"),
        ("meta-bytes", 65, "oaken-mmu: meta-bytes must be in 1..=64, got 65"),
    ] {
        let msg = e(k, v);
        assert!(msg.starts_with(want) && !msg.contains('\n'), "{k} = {v}: {msg}");
    }
}

/// The manifest lists each memory with its depth and width (spec §10.9 tables).
#[test]
fn manifest_lists_the_memories() {
    let em = rtl_gen::emit(UNIT, &toml::Table::new(), &rtl_gen::EmitOptions::default()).unwrap();
    let mems: Vec<(String, usize, usize)> =
        em.manifest.memories.iter().map(|m| (m.name.clone(), m.depth, m.width)).collect();
    assert_eq!(
        mems,
        [
            ("pages".to_string(), 204, 8),
            ("fills".to_string(), 4, 18),
            ("counts".to_string(), 4096, 16),
            ("free_list".to_string(), 256, 8),
            ("tokens".to_string(), 4, 11),
        ]
    );
    // at the defaults the memories hold the spec's table bits, less the
    // registers (free-list pointers and occupancy, slot ids and states)
    let bits: u64 = em.manifest.memories.iter().map(|m| m.bits).sum();
    let t = MmuParams::default().table_bits();
    assert_eq!(bits, t.dense + t.sparse_pages + t.sparse_fills + t.sparse_counts + 256 * 8 + 4 * 11);
    for m in &em.manifest.memories {
        assert!(em.verilog.contains(&format!("module {}(", m.module)), "{} is its own module", m.module);
    }
}
