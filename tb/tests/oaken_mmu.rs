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
use tb::oaken_mmu::{self, cover, params_of, run_segment, Cmd, Segment, POINTS};
use tb::stalls::Stall;
use tb::{models, prop, run_property, Model, ModelInfo};

const UNIT: &str = "oaken-mmu";

/// Runs every segment of a case on `m` (fresh out of reset) and counts coverage.
fn run_case(m: &mut Model, p: &MmuParams, segs: &[Segment], cov: &Coverage) -> Result<(), String> {
    let mut mmu = Mmu::new(p.clone()).map_err(|e| e.to_string())?;
    let mut exhausted = (false, false);
    for (k, s) in segs.iter().enumerate() {
        let run = run_segment(m, &mut mmu, s, oaken_mmu::timeout(p, s)).map_err(|e| format!("segment {k}: {e}"))?;
        cover(cov, p, &run, &mut exhausted);
        if run.cut {
            exhausted = (false, false);
        }
    }
    Ok(())
}

fn check(info: &'static ModelInfo, cases: u32, cov: &Coverage) {
    let p = params_of(&Model::new(info));
    let name = if info.gate_level { info.name.to_string() } else { format!("{}_rtl", info.name) };
    run_property(&name, info, oaken_mmu::case(&p, 3, 20..160), cases, |m, segs| run_case(m, &p, segs, cov));
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
];

/// Every MMU model of tb/models.toml, on RTL; coverage over all of them.
#[test]
fn rtl_matches_model() {
    let (cov, _) = models::sweep(UNIT, false, 3, POINTS, |info, cov| {
        check(info, prop::cases(160), cov);
        directed(info, cov);
    });
    cov.check();
}

/// The OSU018 netlists of this run (`make synth`'s, at 4 ns), on the same
/// properties with fewer cases; only the points every netlist run must
/// reach are required.
#[test]
fn netlists_match_model() {
    let (cov, _) = models::sweep(UNIT, true, 1, POINTS, |info, cov| {
        check(info, prop::cases(24), cov);
        directed(info, cov);
    });
    cov.check_points(NET_POINTS);
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
        let (mut one, mut every) = ((false, false), (false, false));
        for run in oaken_mmu::model_outcomes(&p, &oaken_mmu::directed_case(&p)) {
            cover(&cov, &p, &run, &mut one);
            cover(&all, &p, &run, &mut every);
        }
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

/// Throughput of every MMU model, printed: cycles per write (from taking the
/// command to taking its status beat, response always ready) and, for a
/// read of everything written, cycles per descriptor (from taking the
/// command to taking its last descriptor) and per response beat.
#[test]
fn throughput() {
    for info in models::of_unit(UNIT, false) {
        let mut m = Model::new(info);
        m.reset(1);
        let p = params_of(&m);
        let seg = p.segments();
        // realistic tokens: about 10% outliers per segment, every head
        let counts: Vec<u8> = (0..p.heads * seg).map(|i| (p.segment_len(i % seg) / 10) as u8).collect();
        let n = p.max_seq_len.min(64);
        let mut cmds: Vec<Cmd> = (0..n).map(|_| write(0, &counts)).collect();
        cmds.extend((0..p.heads).map(|h| Cmd::Read { seq: 0, layer: 0, head: h as u8 }));
        let mut mmu = Mmu::new(p.clone()).unwrap();
        let run = run_segment(&mut m, &mut mmu, &plain(cmds, Stall::Never), 10_000_000).unwrap();
        let (mut wc, mut wn, mut wd) = (0u64, 0u64, 0u64);
        let (mut rc, mut rn, mut rd, mut rdc, mut rb, mut rt) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u32);
        for ((o, lat), beats) in run.outcomes.iter().zip(&run.latency).zip(&run.beat_cycles) {
            let lat = lat.expect("no reset") + 1;
            match (&o.cmd, &o.result) {
                (Cmd::Write { .. }, Ok(())) => (wc, wn, wd) = (wc + lat, wn + 1, wd + o.descs.len() as u64),
                (Cmd::Read { .. }, Ok(())) => {
                    let nd = o.descs.len();
                    rc += lat;
                    rn += 1;
                    rd += nd as u64;
                    rdc += if nd > 0 { beats[nd - 1] + 1 } else { 0 };
                    rb += beats.len() as u64;
                    rt = rt.max(o.tokens);
                }
                _ => {}
            }
        }
        assert!(wn > 0 && rn > 0 && rd > 0, "{}: {wn} writes and {rn} reads succeeded", info.name);
        println!(
            "{}: {wn} writes, {:.1} cycles per write ({:.2} descriptors per write); {rn} reads of {rt} tokens: \
             {:.1} cycles per read descriptor, {:.1} cycles per read, {:.2} cycles per response beat",
            info.name,
            wc as f64 / wn as f64,
            wd as f64 / wn as f64,
            rdc as f64 / rd as f64,
            rc as f64 / rn as f64,
            rc as f64 / rb as f64,
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
