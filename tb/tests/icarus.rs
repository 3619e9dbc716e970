//! Icarus Verilog cross-check (`tb::icarus`): short realistic runs of the
//! small netlist models (under `netsim`) and of a few RTL models (under
//! Verilator) are recorded and replayed under Icarus, a third, four-state
//! simulator (netlists on the OSU018 cells' own Verilog models). Every
//! output must match the recording at every cycle after reset, and no
//! output bit may be X or Z. Each replay prints Icarus's speed next to the
//! recorded model's on the same inputs.
//!
//! Icarus runs these netlists at about 100 (engines) to 3000 cycles per
//! second, after several seconds of compiling and loading an engine
//! netlist, so the runs are short: engines stream a few tokens after the
//! table writes, primitives take a few hundred cycles of random inputs.

use sim::oaken::params::OakenParams;
use sim::oaken::thresholds::Kv;
use std::path::PathBuf;
use std::time::Instant;
use tb::icarus::{self, Replay};
use tb::oaken::{drive_quantizer, params_of, TableWrite, Token};
use tb::oaken_cases;
use tb::oaken_dequantizer::{drive_dequantizer, records_of, DStalls};
use tb::stalls::Stall;
use tb::stim::RandomInputs;
use tb::{models, Dir, Model, ModelInfo, Recording};

fn out_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("icarus").join(name)
}

/// Profiled thresholds of every layer (K and V), written through the
/// table-write port before the tokens.
fn writes(p: &OakenParams) -> Vec<TableWrite> {
    let pool = oaken_cases::pool(p, 7);
    pool.writes().into_iter().map(|(l, kv, raw)| TableWrite { layer: l as u8, v: kv == Kv::V, raw }).collect()
}

/// `n` realistic tokens, alternating K and V, walking the layers.
fn tokens(p: &OakenParams, n: usize) -> Vec<Token> {
    let pool = oaken_cases::pool(p, 7);
    (0..n)
        .map(|i| {
            let (layer, v) = ((i / 2) % oaken_cases::real_layers(p) as usize, i % 2 == 1);
            let kv = if v { Kv::V } else { Kv::K };
            Token { layer: layer as u8, v, x: pool.token(layer, kv, i).to_vec() }
        })
        .collect()
}

/// Light random stalls at both ends, so the handshakes are exercised.
const STALL: Stall = Stall::Random { p: 48 };

/// Reset, the table writes and `n` tokens through the quantizer, recorded
/// (the driver checks every beat against `sim`).
fn quantizer_run(info: &'static ModelInfo, n: usize) -> Recording {
    let mut m = Model::new(info);
    let p = params_of(&m);
    m.record();
    m.reset(1);
    drive_quantizer(&mut m, &writes(&p), &tokens(&p, n), &STALL, &STALL, 3).unwrap_or_else(|e| panic!("{}: {e}", info.name));
    m.ticks(2);
    m.take_recording().unwrap()
}

/// The same for the dequantizer, on the records the quantizer writes.
fn dequantizer_run(info: &'static ModelInfo, n: usize) -> Recording {
    let mut m = Model::new(info);
    let p = params_of(&m);
    let w = writes(&p);
    let recs = records_of(&p, &w, &tokens(&p, n));
    m.record();
    m.reset(1);
    let stalls = DStalls { d: STALL, s: STALL, out: STALL };
    drive_dequantizer(&mut m, &w, &recs, &stalls, 3).unwrap_or_else(|e| panic!("{}: {e}", info.name));
    m.ticks(2);
    m.take_recording().unwrap()
}

/// The MMU's directed case (every command outcome of spec §10.8, with
/// stalls, idles and resets), recorded; `tb::oaken_mmu` checks every
/// response beat against `sim`.
fn mmu_run(info: &'static ModelInfo) -> Recording {
    use tb::oaken_mmu as om;
    let mut m = Model::new(info);
    let p = om::params_of(&m);
    m.record();
    m.reset(1);
    let mut mmu = sim::oaken::mmu::Mmu::new(p.clone()).unwrap();
    for (k, s) in om::directed_case(&p).iter().enumerate() {
        om::run_segment(&mut m, &mut mmu, s, om::timeout(&p, s)).unwrap_or_else(|e| panic!("{}: segment {k}: {e}", info.name));
    }
    m.ticks(2);
    m.take_recording().unwrap()
}

/// `pairs` K/V block pairs through the PackKV encoder, recorded (its
/// driver checks every output beat against `sim`).
fn packkv_encoder_run(info: &'static ModelInfo, pairs: usize) -> Recording {
    use tb::packkv_encoder as pe;
    let mut m = Model::new(info);
    let p = pe::params_of(&m);
    let c = pe::case_of(&p, pairs, 0x6b4, STALL, STALL, STALL);
    m.record();
    m.reset(1);
    pe::run(&mut m, &p, &c).unwrap_or_else(|e| panic!("{}: {e}", info.name));
    m.ticks(2);
    m.take_recording().unwrap()
}

/// Reset, then `cycles` cycles of random values on every input.
fn random_run(info: &'static ModelInfo, cycles: u64) -> Recording {
    let mut m = Model::new(info);
    m.record();
    m.reset(1);
    let mut inputs = RandomInputs::new(&m, 0x1ca2);
    for _ in 0..cycles {
        inputs.apply(&mut m);
        m.tick();
    }
    m.take_recording().unwrap()
}

/// Speed of `info` on the recorded inputs (repeated for at least 50 ms).
fn model_speed(info: &'static ModelInfo, rec: &Recording) -> f64 {
    let mut m = Model::new(info);
    let inputs: Vec<usize> = (0..info.ports.len()).filter(|&i| info.ports[i].dir == Dir::In && info.ports[i].name != "clock").collect();
    let ids: Vec<_> = inputs.iter().map(|&i| m.port(info.ports[i].name)).collect();
    let start = Instant::now();
    let mut cycles = 0u64;
    while cycles == 0 || start.elapsed().as_secs_f64() < 0.05 {
        for row in &rec.cycles {
            for (&i, &id) in inputs.iter().zip(&ids) {
                m.set_words(id, &row[i]);
            }
            m.tick();
        }
        cycles += rec.cycles.len() as u64;
    }
    cycles as f64 / start.elapsed().as_secs_f64()
}

/// Replays `rec` under Icarus and requires a clean match; prints both speeds.
fn check(info: &'static ModelInfo, rec: &Recording) -> Replay {
    let r = icarus::replay(info, rec, &out_dir(info.name)).unwrap_or_else(|e| panic!("{}: {e}", info.name));
    let own = model_speed(info, rec);
    println!(
        "{:<24} {:>5} cycles, {:>5} compared: icarus {:>6.0} cycles/s, {} {:>8.0} cycles/s ({:>4.0}x); iverilog {:>4.1} s, vvp {:>4.1} s",
        info.name,
        r.cycles,
        r.compared,
        r.cycles_per_sec(),
        info.simulator,
        own,
        own / r.cycles_per_sec(),
        r.compile_secs,
        r.run_secs,
    );
    assert!(r.ok(), "{}: Icarus disagrees with {}: {r}", info.name, info.simulator);
    assert!(r.compared + 1 >= r.cycles, "{}: {r}", info.name);
    r
}

/// The two quantizer netlists of every run, after the table writes: two
/// tokens on l1 (32 beats a token), four on p4 (both layers, K and V). The slowest replays
/// (Icarus spends most of their time compiling and loading about 60k cell
/// instances), so the dequantizers run as a test of their own alongside.
#[test]
fn quantizer_netlists_match() {
    for (name, tokens) in [("oaken_quantizer_l1_net", 2), ("oaken_quantizer_p4_net", 4)] {
        let info = models::get(name);
        check(info, &quantizer_run(info, tokens));
    }
}

#[test]
fn dequantizer_netlists_match() {
    for (name, tokens) in [("oaken_dequantizer_l1_net", 2), ("oaken_dequantizer_p4_net", 4)] {
        let info = models::get(name);
        check(info, &dequantizer_run(info, tokens));
    }
}

/// Shifter and arithmetic netlists under random inputs.
#[test]
fn primitive_netlists_match() {
    for name in ["zr_l8_w8_p1_net", "zi_l16_w8_p2_net", "mul_pipe16_net", "div_round_q5_net", "fp16_convert_net"] {
        let info = models::get(name);
        check(info, &random_run(info, 300));
    }
}

/// RTL under Icarus against Verilator: the engines over more tokens (RTL
/// replays fast), and a shifter.
#[test]
fn rtl_matches() {
    let info = models::get("oaken_quantizer_l4");
    check(info, &quantizer_run(info, 8));
    let info = models::get("oaken_dequantizer_l4");
    check(info, &dequantizer_run(info, 8));
    let info = models::get("zr_l8_w8_p1");
    check(info, &random_run(info, 1000));
}

/// Units whose always blocks once re-woke each other forever at one time
/// step under Icarus (an output written twice in one pass glitches): the
/// MMU (slot lookup against the core) and the PackKV encoder (a bank's
/// `in_ready` against the core); the median encoder has more such blocks.
#[test]
fn rtl_without_zero_delay_loops() {
    for name in ["packkv_encoder_n255_l1", "packkv_encoder_med_b16"] {
        let info = models::get(name);
        check(info, &packkv_encoder_run(info, 3));
    }
    let info = models::get("oaken_mmu_ex1");
    check(info, &mmu_run(info));
}

/// The comparison can fail: one recorded output bit flipped is reported at
/// its cycle and port, and an X on an input reaches the outputs as X.
#[test]
fn reports_a_mismatch_and_x() {
    let info = models::get("zr_l8_w8_p1");
    let mut rec = random_run(info, 100);
    let port = info.ports.iter().position(|p| p.dir == Dir::Out && p.name == "out_data").expect("out_data");
    let cycle = 50;
    let good = rec.cycles[cycle][port].clone();
    rec.cycles[cycle][port][0] ^= 1 << 3;
    let dir = out_dir("altered_zr_l8_w8_p1");
    let r = icarus::replay(info, &rec, &dir).unwrap();
    println!("altered recording: {r}");
    assert_eq!((r.mismatches, r.xz), (1, 0), "{r}");
    let m = &r.first_mismatches[0];
    assert_eq!((m.cycle, m.port), (cycle as u64, "out_data"), "{r}");
    assert_eq!(u128::from_str_radix(&m.expected, 16).unwrap(), tb::lanes::to_u128(&rec.cycles[cycle][port]), "{r}");
    assert_eq!(u128::from_str_radix(&m.got, 16).unwrap(), tb::lanes::to_u128(&good), "{r}");

    // X: rerun the compiled testbench with `in_data` all x for 20 cycles
    // (vectors.hex: a header line, then one line per cycle, one field per
    // port but `clock`)
    let vectors = std::fs::read_to_string(dir.join("vectors.hex")).unwrap();
    let field = info.ports.iter().filter(|p| p.name != "clock").position(|p| p.name == "in_data").unwrap();
    let mut lines: Vec<String> = vectors.lines().map(String::from).collect();
    for line in &mut lines[1 + 40..1 + 60] {
        let mut fields: Vec<String> = line.split('_').map(String::from).collect();
        fields[field] = "x".repeat(fields[field].len());
        *line = fields.join("_");
    }
    std::fs::write(dir.join("vectors.hex"), lines.join("\n") + "\n").unwrap();
    let out = std::process::Command::new("vvp").args(["-n", "replay.vvp"]).current_dir(&dir).output().unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.lines().any(|l| l.starts_with("xz ")), "no X reported:\n{out}");
    // restore, so the folder matches the recording again
    std::fs::write(dir.join("vectors.hex"), vectors).unwrap();

    // a recording without a reset cycle cannot be replayed
    let mut m = Model::new(info);
    m.reset(1);
    m.record();
    m.ticks(5);
    let e = icarus::replay(info, &m.take_recording().unwrap(), &out_dir("no_reset")).unwrap_err();
    assert!(e.contains("reset"), "{e}");
}
