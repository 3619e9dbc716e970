//! Benchmark report: `cargo run --release -p tb --bin bench -- -o build/reports/bench.md`.
//!
//! 1. Co-simulation speed (cycles/s) of every model of tb/models.toml, RTL
//!    and netlist, under pseudo-random inputs, plain and with a VCD trace.
//! 2. The Oaken quantizer at default parameters (RTL, and netlist if
//!    built): sustained throughput with the input always valid and the
//!    output always ready, latency against the manifest, and throughput
//!    under 50% random output stalls; outputs checked against `sim`.
//! 3. The Oaken dequantizer at default parameters (RTL and netlist):
//!    throughput and latency on packed records, with and without output
//!    stalls; the quantizer -> dequantizer round trip; the two zero
//!    shifters' throughput and latency at their default parameters.
//! 4. Verilator against Icarus Verilog on the same input vectors for one
//!    small unit (skipped, and said so, when iverilog/vvp are missing).
//!
//! The report is written to `-o` and printed.

use clap::Parser;
use sim::oaken::params::OakenParams;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tb::oaken::{drive_quantizer, params_of, QSegRun};
use tb::stalls::Stall;
use tb::oaken_dequantizer::{
    drive_dequantizer, drive_round_trip, expected_dequantizer, records_of, DStalls, RtStalls,
};
use tb::stim::{oaken_stream, random_speed, RandomInputs};
use tb::{models, Dir, Model, ModelInfo, PortId};

#[derive(Parser, Debug)]
#[command(about = "Co-simulation speed, Oaken quantizer throughput and latency, Verilator vs Icarus")]
struct Args {
    /// Markdown report to write (parent folders are created)
    #[arg(short, long, default_value = "build/reports/bench.md")]
    output: PathBuf,
    /// Wall time per model for the plain speed run, in ms
    #[arg(long, default_value_t = 400)]
    speed_ms: u64,
    /// Wall time per model for the traced (VCD) speed run, in ms; 0 skips it
    #[arg(long, default_value_t = 150)]
    traced_ms: u64,
    /// Tokens streamed back to back for the quantizer throughput runs
    #[arg(long, default_value_t = 200)]
    tokens: usize,
    /// Model for the Verilator/Icarus comparison (an RTL model with a clock)
    #[arg(long, default_value = "zr_l8_w8_p1")]
    icarus_model: String,
    /// Cycles of the Verilator/Icarus comparison
    #[arg(long, default_value_t = 20_000)]
    icarus_cycles: u64,
}

fn level(info: &ModelInfo) -> &'static str {
    if info.gate_level {
        "netlist"
    } else {
        "RTL"
    }
}

fn first_line(cmd: &str, arg: &str) -> Option<String> {
    let out = Command::new(cmd).arg(arg).output().ok()?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    String::from_utf8_lossy(&text).lines().next().map(|l| l.trim().to_string())
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

// ---------------------------------------------------------------- speed

fn speed_section(args: &Args, md: &mut String) {
    let tmp = std::env::temp_dir().join(format!("kvforge-bench-{}", std::process::id()));
    writeln!(md, "## 1. Co-simulation speed\n").unwrap();
    writeln!(
        md,
        "Every model of `tb/models.toml` out of reset, with new pseudo-random values on every input \
         (except clock and reset) each cycle, as in the property tests. Plain: {} ms per model; \
         traced: {} ms with a VCD of every cycle, for the default engines, one shifter and one netlist. \
         Model construction is not timed.\n",
        args.speed_ms, args.traced_ms
    )
    .unwrap();
    writeln!(md, "| model | unit | level | parameters | cycles/s | traced cycles/s |").unwrap();
    writeln!(md, "|---|---|---|---|---:|---:|").unwrap();
    for info in models::all() {
        eprint!("bench: speed {:<22}\r", info.name);
        let plain = random_speed(info, Duration::from_millis(args.speed_ms), 20_000_000, None)
            .map(|s| si(s.per_sec()))
            .unwrap_or_else(|e| format!("error: {e}"));
        // a traced build of every model would cost minutes: a few of them
        let traced_ones = ["oaken_quantizer", "oaken_dequantizer", "zr_l8_w8_p1", "oaken_quantizer_l4_net"];
        let traced = if args.traced_ms == 0 || !traced_ones.contains(&info.name) {
            "-".to_string()
        } else {
            let vcd = tmp.join(format!("{}.vcd", info.name));
            let r = info
                .with_trace()
                .and_then(|t| random_speed(t, Duration::from_millis(args.traced_ms), 200_000, Some(&vcd)).map_err(|e| e.to_string()));
            let _ = std::fs::remove_file(&vcd);
            r.map(|s| si(s.per_sec())).unwrap_or_else(|e| format!("error: {e}"))
        };
        writeln!(
            md,
            "| {} | {} | {} | `{}` | {} | {} |",
            info.name,
            info.unit,
            level(info),
            info.params_json,
            plain,
            traced
        )
        .unwrap();
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("bench: speed done{:<20}", "");
    writeln!(md).unwrap();
}

// ------------------------------------------------------ Oaken quantizer

struct Throughput {
    p: OakenParams,
    tokens: usize,
    run: QSegRun,
    secs: f64,
}

impl Throughput {
    fn beats(&self) -> usize {
        self.run.beats.len()
    }
    fn out_span(&self) -> u64 {
        self.run.out_cycles.last().unwrap() - self.run.out_cycles[0] + 1
    }
    fn in_span(&self) -> u64 {
        self.run.in_cycles.last().unwrap() - self.run.in_cycles[0] + 1
    }
    fn elements_per_cycle(&self) -> f64 {
        (self.beats() * self.p.lanes) as f64 / self.out_span() as f64
    }
    fn tokens_per_cycle(&self) -> f64 {
        self.tokens as f64 / self.out_span() as f64
    }
    fn latency(&self) -> u64 {
        self.run.out_cycles[0] - self.run.in_cycles[0]
    }
}

fn quantizer_run(info: &'static ModelInfo, tokens: usize, out_stall: &Stall) -> Result<Throughput, String> {
    let mut m = Model::new(info);
    let p = params_of(&m);
    m.reset(1);
    let (writes, toks) = oaken_stream(&p, tokens, 0xbe7c);
    let start = Instant::now();
    let run = drive_quantizer(&mut m, &writes, &toks, &Stall::Never, out_stall, 0x50_50)
        .map_err(|e| format!("output differs from sim: {e}"))?;
    let secs = start.elapsed().as_secs_f64();
    Ok(Throughput { p, tokens, run, secs })
}

fn quantizer_section(args: &Args, md: &mut String) {
    writeln!(md, "## 2. Oaken quantizer: sustained throughput and latency\n").unwrap();
    let default = OakenParams::default();
    let rtl = models::all().into_iter().find(|m| {
        m.unit == "oaken-quantizer"
            && !m.gate_level
            && serde_json::from_str::<OakenParams>(m.params_json).ok() == Some(default.clone())
    });
    let Some(rtl) = rtl else {
        writeln!(md, "No Oaken quantizer model at default parameters in tb/models.toml.\n").unwrap();
        return;
    };
    let net = models::by_name(&format!("{}_net", rtl.name));
    writeln!(
        md,
        "Default parameters (`{}`), thresholds `testgen::realistic_thresholds(1.0)` for layer 0 K and V, \
         {} tokens from `testgen::token` (K and V alternating), streamed with `tb::oaken::drive_quantizer`; \
         every output beat is checked bit for bit against `sim`. Elements/cycle = elements out / cycles from \
         the first output beat to the last; latency = cycles from the first input beat accepted to the first \
         output beat valid (output always ready).\n",
        serde_json::to_string(&default).unwrap(),
        args.tokens
    )
    .unwrap();
    writeln!(
        md,
        "| model | output stalls | tokens | beats/token | elements out | output cycles | elements/cycle | \
         tokens/cycle | input bubbles | latency (cycles) | manifest latency | co-sim time |"
    )
    .unwrap();
    writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    let cases = [("none", Stall::Never), ("50% random", Stall::Random { p: 128 })];
    let mut notes = Vec::new();
    for info in [Some(rtl), net].into_iter().flatten() {
        for (label, stalls) in &cases {
            eprintln!("bench: quantizer {} ({label} output stalls)", info.name);
            match quantizer_run(info, args.tokens, stalls) {
                Ok(t) => {
                    let bpt = t.p.beats();
                    let stalled = *stalls != Stall::Never;
                    let latency = if stalled { "-".to_string() } else { t.latency().to_string() };
                    let manifest = info.latency().map_or("-".to_string(), |l| l.to_string());
                    writeln!(
                        md,
                        "| {} | {} | {} | {} | {} | {} | {:.3} (max {}) | {:.4} (max 1/{} = {:.4}) | {} | {} | {} | {:.2} s |",
                        info.name,
                        label,
                        t.tokens,
                        bpt,
                        t.beats() * t.p.lanes,
                        t.out_span(),
                        t.elements_per_cycle(),
                        t.p.lanes,
                        t.tokens_per_cycle(),
                        bpt,
                        1.0 / bpt as f64,
                        t.in_span() - t.run.in_cycles.len() as u64,
                        latency,
                        manifest,
                        t.secs
                    )
                    .unwrap();
                    if !stalled {
                        match info.latency() {
                            Some(l) if l == t.latency() => {}
                            Some(l) => notes.push(format!(
                                "**{}: measured latency {} cycles differs from the manifest's {l}.**",
                                info.name,
                                t.latency()
                            )),
                            None => notes.push(format!("{}: the manifest states no latency.", info.name)),
                        }
                        if t.out_span() != t.beats() as u64 {
                            notes.push(format!(
                                "**{}: {} bubble cycles between output beats with the output always ready.**",
                                info.name,
                                t.out_span() - t.beats() as u64
                            ));
                        }
                    }
                }
                Err(e) => {
                    writeln!(
                        md,
                        "| {} | {} | {} | failed: {} |||||||||",
                        info.name,
                        label,
                        args.tokens,
                        e.replace('\n', " ")
                    )
                    .unwrap();
                    notes.push(format!("**{}: run failed ({label} output stalls): {e}**", info.name));
                }
            }
        }
    }
    if net.is_none() {
        notes.push(format!("No netlist model `{}_net` is built (netlist = true in tb/models.toml).", rtl.name));
    }
    writeln!(md).unwrap();
    for n in notes {
        writeln!(md, "- {n}").unwrap();
    }
    writeln!(
        md,
        "\nWith the output always ready the engine should move one beat ({} elements) per cycle in and out, \
         i.e. one token every {} cycles; under 50% output stalls the output side bounds it to about half of that.\n",
        default.lanes,
        default.beats()
    )
    .unwrap();
}

// ------------------------------------------------ Oaken dequantizer

fn default_model(unit: &str) -> Option<&'static ModelInfo> {
    let default = OakenParams::default();
    models::all().into_iter().find(|m| {
        m.unit == unit && !m.gate_level && serde_json::from_str::<OakenParams>(m.params_json).ok() == Some(default.clone())
    })
}

fn dequantizer_section(args: &Args, md: &mut String) {
    writeln!(md, "## 3. Oaken dequantizer, round trip and zero shifters\n").unwrap();
    let Some(rtl) = default_model("oaken-dequantizer") else {
        writeln!(md, "No Oaken dequantizer model at default parameters in tb/models.toml.\n").unwrap();
        return;
    };
    writeln!(
        md,
        "The records the quantizer writes for the same {} tokens as section 2 (`sim`), COO lists packed as in \
         memory, streamed with `tb::oaken_dequantizer::drive_dequantizer` (both inputs always valid); every \
         output beat is checked against `sim`. Latency = first dense beat accepted to first output beat valid.\n",
        args.tokens
    )
    .unwrap();
    writeln!(md, "| model | output stalls | outliers/token (min..max) | elements out | output cycles | elements/cycle | latency | manifest latency |").unwrap();
    writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|").unwrap();
    let net = models::by_name(&format!("{}_net", rtl.name));
    for info in [Some(rtl), net].into_iter().flatten() {
        let half = DStalls { out: Stall::Random { p: 128 }, ..DStalls::none() };
        for (label, st) in [("none", DStalls::none()), ("50% random", half)] {
            eprintln!("bench: dequantizer {} ({label} output stalls)", info.name);
            let mut m = Model::new(info);
            let p = params_of(&m);
            m.reset(1);
            let (writes, toks) = oaken_stream(&p, args.tokens, 0xbe7c);
            let recs = records_of(&p, &writes, &toks);
            let outl: Vec<usize> = recs.recs.iter().map(|r| r.list_len()).collect();
            let res = drive_dequantizer(&mut m, &writes, &recs, &st, 0x50_50);
            match res {
                Ok(run) => {
                    let span = run.out_cycles.last().unwrap() - run.out_cycles[0] + 1;
                    let n = run.beats.len();
                    let lat = if st.out == Stall::Never { (run.out_cycles[0] - run.d_cycles[0]).to_string() } else { "-".into() };
                    writeln!(
                        md,
                        "| {} | {label} | {}..{} | {} | {span} | {:.3} (max {}) | {lat} | {} |",
                        info.name,
                        outl.iter().min().unwrap(),
                        outl.iter().max().unwrap(),
                        n * p.lanes,
                        (n * p.lanes) as f64 / span as f64,
                        p.lanes,
                        info.latency().map_or("-".to_string(), |l| l.to_string())
                    )
                    .unwrap();
                }
                Err(e) => writeln!(md, "| {} | {label} | failed: {} ||||||", info.name, e.replace('\n', " ")).unwrap(),
            }
        }
    }
    // round trip, lockstep through the memory FIFOs
    if let Some(q) = default_model("oaken-quantizer") {
        let mut qm = Model::new(q);
        let mut dm = Model::new(rtl);
        let p = params_of(&dm);
        qm.reset(1);
        dm.reset(1);
        let (writes, toks) = oaken_stream(&p, args.tokens, 0xbe7c);
        let none = RtStalls { input: Stall::Never, mid: DStalls::none() };
        match drive_round_trip(&mut qm, &mut dm, &writes, &toks, &none, 1, 100_000 + 100 * (toks.len() * p.beats()) as u64) {
            Ok(run) => {
                let recs = records_of(&p, &writes, &toks);
                let (_, want) = expected_dequantizer(&p, &writes, &recs);
                let ok = run.beats == want;
                let span = run.out_cycles.last().unwrap() - run.out_cycles[0] + 1;
                writeln!(
                    md,
                    "\nRound trip (`{}` -> memory FIFOs -> `{}`, lockstep, no stalls): {} tokens, {} output beats in {span} \
                     cycles = {:.3} elements/cycle; first output at cycle {}; output {} `sim`.\n",
                    q.name,
                    rtl.name,
                    toks.len(),
                    run.beats.len(),
                    (run.beats.len() * p.lanes) as f64 / span as f64,
                    run.out_cycles[0],
                    if ok { "matches" } else { "DIFFERS FROM" }
                )
                .unwrap();
            }
            Err(e) => writeln!(md, "\nRound trip failed: {e}\n").unwrap(),
        }
    }
    // zero shifters: vectors back to back, output always ready
    writeln!(md, "| shifter model | vectors | output cycles | vectors/cycle | latency (cycles) |").unwrap();
    writeln!(md, "|---|---:|---:|---:|---:|").unwrap();
    for name in ["zr_l16_w8_p2", "zi_l16_w8_p2"] {
        let Some(info) = models::by_name(name) else { continue };
        let mut m = Model::new(info);
        m.reset(1);
        let (iv, ird, ov, ord) = (m.port("in_valid"), m.port("in_ready"), m.port("out_valid"), m.port("out_ready"));
        let data = m.port("in_data");
        let mask = m.try_port("in_keep").or_else(|| m.try_port("in_mask")).expect("shifter mask port");
        let lanes = m.port_info(mask).width;
        let n = 1000u64;
        let (mut sent, mut first_in, mut outs, mut first_out, mut last_out) = (0u64, None, 0u64, None, 0u64);
        let mut x = 0x1234_5678_9abc_def1u64;
        for cyc in 0..(n + 100) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            m.set(iv, (sent < n) as u64);
            m.set_lanes(data, &(0..lanes).map(|i| (x >> (i % 56)) & 0xFF).collect::<Vec<_>>());
            m.set(mask, x & ((1u64 << lanes) - 1));
            m.set(ord, 1);
            m.eval();
            if m.get(ov) == 1 {
                outs += 1;
                first_out.get_or_insert(cyc);
                last_out = cyc;
            }
            if sent < n && m.get(ird) == 1 {
                first_in.get_or_insert(cyc);
                sent += 1;
            }
            m.tick();
        }
        let span = last_out - first_out.unwrap_or(0) + 1;
        writeln!(
            md,
            "| {name} | {outs} | {span} | {:.3} | {} |",
            outs as f64 / span as f64,
            first_out.unwrap_or(0) - first_in.unwrap_or(0)
        )
        .unwrap();
    }
    writeln!(md).unwrap();
}

// ------------------------------------------------- Verilator vs Icarus

/// `parts` concatenated as Verilog `{parts[0], parts[1], ...}` (first part
/// in the top bits), as hex digits of the whole width.
fn concat_hex(parts: &[(&[u32], usize)]) -> String {
    let total: usize = parts.iter().map(|p| p.1).sum();
    let mut words = vec![0u32; total.div_ceil(32).max(1)];
    let mut at = 0;
    for (w, width) in parts.iter().rev() {
        for b in 0..*width {
            if (w[b / 32] >> (b % 32)) & 1 == 1 {
                words[(at + b) / 32] |= 1 << ((at + b) % 32);
            }
        }
        at += width;
    }
    let digits = total.div_ceil(4).max(1);
    (0..digits).rev().map(|d| char::from_digit((words[d / 8] >> (4 * (d % 8))) & 0xF, 16).unwrap()).collect()
}

/// Port value zero-extended to a multiple of 64 bits, its 64-bit pieces XORed.
fn fold64(words: &[u32]) -> u64 {
    words.chunks(2).fold(0, |acc, c| acc ^ (c[0] as u64 | c.get(1).map_or(0, |&h| (h as u64) << 32)))
}

/// Cycles before the output checksum starts (registers without a reset
/// are random in Verilator and X in Icarus until first loaded).
const WARMUP: u64 = 32;

fn testbench(info: &ModelInfo, inputs: &RandomInputs, cycles: u64) -> String {
    let width: usize = inputs.ports.iter().map(|p| p.width).sum();
    let outs: Vec<_> = info.ports.iter().filter(|p| p.dir == Dir::Out).collect();
    let mut v = String::new();
    let decl = |w: usize| if w == 1 { String::new() } else { format!("[{}:0] ", w - 1) };
    writeln!(v, "// Generated by tb/src/bin/bench.rs: {} on vectors.hex.", info.name).unwrap();
    writeln!(v, "`timescale 1ns/1ps\nmodule bench_tb;").unwrap();
    writeln!(v, "    reg clock = 1'b0;\n    reg reset = 1'b1;").unwrap();
    writeln!(v, "    reg [{}:0] vec [0:{}];", width - 1, cycles.max(1) - 1).unwrap();
    for p in &inputs.ports {
        writeln!(v, "    reg {}{} = 0;", decl(p.width), p.name).unwrap();
    }
    for p in &outs {
        let pad = p.width.div_ceil(64) * 64;
        writeln!(v, "    wire {}{};", decl(p.width), p.name).unwrap();
        writeln!(v, "    wire [{}:0] pad_{} = {};", pad - 1, p.name, p.name).unwrap();
        let pieces: Vec<String> =
            (0..pad / 64).map(|i| format!("pad_{}[{}:{}]", p.name, 64 * i + 63, 64 * i)).collect();
        writeln!(v, "    wire [63:0] fold_{} = {};", p.name, pieces.join(" ^ ")).unwrap();
    }
    let conns: Vec<String> = info.ports.iter().map(|p| format!(".{0}({0})", p.name)).collect();
    writeln!(v, "    {} dut ({});", info.module, conns.join(", ")).unwrap();
    let names: Vec<&str> = inputs.ports.iter().map(|p| p.name).collect();
    writeln!(v, "    reg [63:0] chk = 64'd0;\n    integer i, n;").unwrap();
    writeln!(v, "    initial begin").unwrap();
    writeln!(v, "        if (!$value$plusargs(\"cycles=%d\", n)) n = {cycles};").unwrap();
    writeln!(v, "        $readmemh(\"vectors.hex\", vec);").unwrap();
    writeln!(v, "        #5 clock = 1'b1; #5 clock = 1'b0; reset = 1'b0; // one reset cycle").unwrap();
    writeln!(v, "        for (i = 0; i < n; i = i + 1) begin").unwrap();
    writeln!(v, "            {{{}}} = vec[i];", names.join(", ")).unwrap();
    writeln!(v, "            #5 clock = 1'b1;\n            #1;").unwrap();
    writeln!(v, "            if (i >= {WARMUP}) begin").unwrap();
    for p in &outs {
        writeln!(v, "                chk = {{chk[62:0], chk[63]}} ^ fold_{};", p.name).unwrap();
    }
    writeln!(v, "            end\n            #4 clock = 1'b0;\n        end").unwrap();
    writeln!(v, "        $display(\"CHECKSUM %016h\", chk);\n        $finish;\n    end\nendmodule").unwrap();
    v
}

struct Compared {
    cycles: u64,
    verilator: f64,
    icarus: f64,
    vl_chk: u64,
    iv_chk: String,
    compile_secs: f64,
}

fn timed(cmd: &mut Command) -> Result<(f64, String), String> {
    let start = Instant::now();
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok((secs, String::from_utf8_lossy(&out.stdout).into_owned()))
}

fn verilator_vs_icarus(info: &'static ModelInfo, cycles: u64, dir: &Path) -> Result<Compared, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // the same vectors for both simulators
    let mut m = Model::new(info);
    let mut inputs = RandomInputs::new(&m, 0x1ca7_05);
    let per = inputs.words_per_cycle();
    let mut vecs = Vec::with_capacity(per * cycles as usize);
    for _ in 0..cycles {
        inputs.draw_into(&mut vecs);
    }
    let mut hex = String::new();
    for c in vecs.chunks(per) {
        let mut at = 0;
        let parts: Vec<(&[u32], usize)> = inputs
            .ports
            .iter()
            .map(|p| {
                let s = &c[at..at + p.words];
                at += p.words;
                (s, p.width)
            })
            .collect();
        hex.push_str(&concat_hex(&parts));
        hex.push('\n');
    }
    std::fs::write(dir.join("vectors.hex"), hex).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("bench_tb.v"), testbench(info, &inputs, cycles)).map_err(|e| e.to_string())?;

    // Verilator: timed run, then an untimed run with the output checksum
    m.reset(1);
    let start = Instant::now();
    for c in vecs.chunks(per) {
        inputs.set(&mut m, c);
        m.tick();
    }
    let verilator = cycles as f64 / start.elapsed().as_secs_f64();
    let mut m = Model::new(info);
    m.reset(1);
    let outs: Vec<PortId> = info.ports.iter().filter(|p| p.dir == Dir::Out).map(|p| m.port(p.name)).collect();
    let mut vl_chk = 0u64;
    for (i, c) in vecs.chunks(per).enumerate() {
        inputs.set(&mut m, c);
        m.tick();
        if i as u64 >= WARMUP {
            for &o in &outs {
                vl_chk = vl_chk.rotate_left(1) ^ fold64(&m.get_words(o));
            }
        }
    }
    drop(m);

    // Icarus: compile, then time N cycles minus 0 cycles (start-up and
    // $readmemh of the same file)
    let mut sources = vec![PathBuf::from(info.source)];
    let src_dir = Path::new(info.source).parent().unwrap_or(Path::new("."));
    if !info.gate_level {
        let f = src_dir.join(format!("{}.f", info.module));
        if let Ok(list) = std::fs::read_to_string(&f) {
            sources = list.lines().filter(|l| !l.trim().is_empty()).map(|l| src_dir.join(l.trim())).collect();
        }
    }
    let (compile_secs, _) = timed(
        Command::new("iverilog")
            .current_dir(dir)
            .args(["-g2012", "-o", "bench_tb.vvp", "-s", "bench_tb", "bench_tb.v"])
            .args(&sources),
    )?;
    let vvp =
        |n: u64| timed(Command::new("vvp").current_dir(dir).args(["-n", "bench_tb.vvp", &format!("+cycles={n}")]));
    let (t0, _) = vvp(0)?;
    let (t0b, _) = vvp(0)?;
    let (tn, stdout) = vvp(cycles)?;
    let t0 = t0.min(t0b);
    let icarus = cycles as f64 / if tn > t0 { tn - t0 } else { tn };
    let iv_chk = stdout
        .lines()
        .find_map(|l| l.strip_prefix("CHECKSUM ").map(|s| s.trim().to_string()))
        .unwrap_or_else(|| "none".into());
    Ok(Compared { cycles, verilator, icarus, vl_chk, iv_chk, compile_secs })
}

fn icarus_model(name: &str) -> Option<&'static ModelInfo> {
    let clocked = |m: &&ModelInfo| !m.gate_level && m.port_index("clock").is_some();
    models::by_name(name)
        .filter(clocked)
        .or_else(|| models::all().into_iter().filter(clocked).find(|m| m.unit == "zero-remove-shifter"))
        .or_else(|| models::all().into_iter().filter(clocked).find(|m| m.unit == "mul-pipe"))
}

fn icarus_section(args: &Args, md: &mut String) {
    writeln!(md, "## 4. Verilator vs Icarus Verilog\n").unwrap();
    let have = |t: &str| first_line(t, "-V").is_some();
    if !have("iverilog") || !have("vvp") {
        writeln!(md, "Skipped: `iverilog`/`vvp` are not installed (`make deps` or `apt-get install iverilog`).\n")
            .unwrap();
        return;
    }
    let Some(info) = icarus_model(&args.icarus_model) else {
        writeln!(
            md,
            "Skipped: no clocked RTL model `{}` (nor a zero-remove shifter or mul-pipe).\n",
            args.icarus_model
        )
        .unwrap();
        return;
    };
    eprintln!("bench: Verilator vs Icarus on {}", info.name);
    let dir = std::env::temp_dir().join(format!("kvforge-bench-icarus-{}", std::process::id()));
    let result = verilator_vs_icarus(info, args.icarus_cycles, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    writeln!(
        md,
        "Model `{}` ({} `{}`): the same {} cycles of pseudo-random input vectors (one reset cycle first) in both \
         simulators. Verilator: the Rust-driven model, timing only the cycle loop. Icarus: a generated Verilog \
         testbench reading the vectors with `$readmemh`, compiled with `iverilog -g2012`, timed as `vvp` wall time \
         for N cycles minus that for 0 cycles (start-up and vector loading). Both fold the outputs of every cycle \
         after the first {WARMUP} into a 64-bit checksum.\n",
        info.name, info.unit, info.params_json, args.icarus_cycles
    )
    .unwrap();
    match result {
        Ok(c) => {
            let vl_hex = format!("{:016x}", c.vl_chk);
            writeln!(md, "| simulator | cycles | cycles/s | output checksum |").unwrap();
            writeln!(md, "|---|---:|---:|---|").unwrap();
            writeln!(
                md,
                "| Verilator {} | {} | {} | `{vl_hex}` |",
                first_line("verilator", "--version").unwrap_or_default().trim_start_matches("Verilator "),
                c.cycles,
                si(c.verilator)
            )
            .unwrap();
            writeln!(
                md,
                "| Icarus {} | {} | {} | `{}` |",
                first_line("iverilog", "-V")
                    .unwrap_or_default()
                    .trim_start_matches("Icarus Verilog version ")
                    .trim_end_matches(" ()"),
                c.cycles,
                si(c.icarus),
                c.iv_chk
            )
            .unwrap();
            writeln!(
                md,
                "\nVerilator / Icarus speed ratio: **{:.0}x** (iverilog compile {:.2} s, not counted). Output checksums {}.\n",
                c.verilator / c.icarus,
                c.compile_secs,
                if c.iv_chk == vl_hex { "agree" } else { "**differ**" }
            )
            .unwrap();
        }
        Err(e) => writeln!(md, "Failed: {e}\n").unwrap(),
    }
}

fn main() {
    let args = Args::parse();
    let started = Instant::now();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut md = String::new();
    writeln!(md, "# kvforge bench\n").unwrap();
    writeln!(md, "Command: `cargo run --release -p tb --bin bench -- {}`\n", argv.join(" ")).unwrap();
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    writeln!(
        md,
        "Host: {} hardware threads, load average at start {}; {}; {}. {}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.unwrap_or_else(|| "?".into()),
        first_line("verilator", "--version").unwrap_or_else(|| "verilator ?".into()),
        first_line("iverilog", "-V")
            .map(|l| l.trim_end_matches(" ()").to_string())
            .unwrap_or_else(|| "no iverilog".into()),
        date.unwrap_or_default()
    )
    .unwrap();
    writeln!(
        md,
        "Speeds are single-threaded wall-clock figures and vary with the load of the machine. \
         `make bench` runs this command, then appends the kvsim quantization metrics on the synthetic KV set.\n"
    )
    .unwrap();

    speed_section(&args, &mut md);
    quantizer_section(&args, &mut md);
    dequantizer_section(&args, &mut md);
    icarus_section(&args, &mut md);
    writeln!(md, "Bench time: {:.0} s.\n", started.elapsed().as_secs_f64()).unwrap();

    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("bench: {}: {e}", dir.display());
            std::process::exit(1);
        }
    }
    if let Err(e) = std::fs::write(&args.output, &md) {
        eprintln!("bench: {}: {e}", args.output.display());
        std::process::exit(1);
    }
    print!("{md}");
    eprintln!("bench: wrote {}", args.output.display());
}
