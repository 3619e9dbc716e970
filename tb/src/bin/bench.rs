//! Benchmark report: `cargo run --release -p tb --bin bench -- -o build/reports/bench.md`.
//!
//! 1. Co-simulation speed (cycles/s) of every model of tb/models.toml, RTL
//!    (Verilator) and netlist (`tb::netsim`), under pseudo-random inputs,
//!    plain and with a VCD trace; then per unit of `rtl-gen list`, which
//!    must each have a model.
//! 2. The Oaken quantizer at default parameters (RTL, and netlist if
//!    built): sustained throughput with the input always valid and the
//!    output always ready, latency against the manifest, and throughput
//!    under 50% random output stalls; outputs checked against `sim`.
//! 3. The Oaken dequantizer at default parameters (RTL and netlist):
//!    throughput and latency on packed records, with and without output
//!    stalls; the quantizer -> dequantizer round trip.
//! 4. Every other unit, through its tb driver (outputs checked against
//!    `sim`): throughput and latency with continuous input, and under 50%
//!    random stalls on the output (the `en` input for the primitives);
//!    then a summary over every unit.
//! 5. Verilator against Icarus Verilog, one model per unit (the smallest
//!    RTL model): a recorded, `sim`-checked run replayed in both.
//! 6. Wall time of `rtl-gen emit <unit>` at default parameters, per unit.
//!
//! The report is written to `-o` and printed.

use clap::Parser;
use sim::oaken::params::OakenParams;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tb::oaken::{drive_quantizer, params_of, QSegRun};
use tb::oaken_dequantizer::{drive_dequantizer, drive_round_trip, expected_dequantizer, records_of, DStalls, RtStalls};
use tb::pipe::{self, MaskedBeat, Unit};
use tb::stalls::{Stall, StallGen};
use tb::oaken_stim::oaken_stream;
use tb::stim::{random_speed, Xorshift};
use tb::{icarus, models, Dir, Model, ModelInfo, PortId, Recording};

#[derive(Parser, Debug)]
#[command(about = "Co-simulation speed, throughput and latency of every unit, Verilator vs Icarus, rtl-gen emit time")]
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
    /// Tokens streamed back to back for the Oaken and Titanus throughput runs
    #[arg(long, default_value_t = 200)]
    tokens: usize,
    /// Cycles to aim for in each recorded run of the Verilator/Icarus comparison
    #[arg(long, default_value_t = 5_000)]
    icarus_cycles: u64,
    /// Section 5 on every RTL model of each unit, not only the smallest (a
    /// sweep after a unit's Verilog changed; a model that does not finish
    /// under Icarus is killed and reported)
    #[arg(long)]
    icarus_all: bool,
    /// The rtl-gen binary (default: next to this one)
    #[arg(long)]
    rtl_gen: Option<PathBuf>,
    /// Sections to run (1 to 7), comma-separated
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6,7")]
    sections: Vec<u8>,
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

/// One line of a failure, for a table cell.
fn cell(e: &str) -> String {
    let one = e.replace('\n', " ").replace('|', "/");
    if one.chars().count() > 160 {
        format!("{}...", one.chars().take(160).collect::<String>())
    } else {
        one
    }
}

fn rtl_gen_path(args: &Args) -> PathBuf {
    args.rtl_gen.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("own path");
        exe.with_file_name("rtl-gen")
    })
}

/// The units `rtl-gen list` prints (its first column, past the header).
fn rtl_gen_units(rtl_gen: &Path) -> Result<Vec<String>, String> {
    let out = Command::new(rtl_gen).arg("list").output().map_err(|e| format!("{}: {e}", rtl_gen.display()))?;
    if !out.status.success() {
        return Err(format!("{} list failed: {}", rtl_gen.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let units: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    if units.is_empty() {
        return Err(format!("{} list printed no unit", rtl_gen.display()));
    }
    Ok(units)
}

/// A throughput/latency figure of one unit, for the summary of section 4.
#[derive(Clone)]
struct Rate {
    unit: String,
    model: String,
    what: String,
    cont: String,
    stalled: String,
    latency: String,
    manifest: String,
    checked: String,
}

fn opt(v: Option<u64>) -> String {
    v.map_or("-".to_string(), |l| l.to_string())
}

// ---------------------------------------------------------------- speed

fn speed_section(args: &Args, units: &Result<Vec<String>, String>, md: &mut String) {
    let tmp = std::env::temp_dir().join(format!("kvforge-bench-{}", std::process::id()));
    writeln!(md, "## 1. Co-simulation speed\n").unwrap();
    writeln!(
        md,
        "Every model of `tb/models.toml` out of reset, with new pseudo-random values on every input \
         (except clock and reset) each cycle, as in the property tests. RTL models run under Verilator, \
         netlist models under `tb::netsim`. Plain: {} ms per model; \
         traced: {} ms with a VCD of every cycle, for the default engines, one shifter and one netlist. \
         Model construction is not timed.\n",
        args.speed_ms, args.traced_ms
    )
    .unwrap();
    writeln!(md, "| model | unit | level | parameters | cycles/s | traced cycles/s |").unwrap();
    writeln!(md, "|---|---|---|---|---:|---:|").unwrap();
    // per unit: (RTL speeds, netlist speeds)
    let mut per_unit: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    for info in models::all() {
        eprint!("bench: speed {:<22}\r", info.name);
        let plain = random_speed(info, Duration::from_millis(args.speed_ms), 20_000_000, None);
        if let Ok(s) = &plain {
            let i = match per_unit.iter().position(|u| u.0 == info.unit) {
                Some(i) => i,
                None => {
                    per_unit.push((info.unit.to_string(), vec![], vec![]));
                    per_unit.len() - 1
                }
            };
            if info.gate_level { &mut per_unit[i].2 } else { &mut per_unit[i].1 }.push(s.per_sec());
        }
        let plain = plain.map(|s| si(s.per_sec())).unwrap_or_else(|e| format!("error: {e}"));
        // a traced build of every model would cost minutes: a few of them
        let traced_ones = ["oaken_quantizer", "oaken_dequantizer", "zr_l8_w8_p1", "oaken_quantizer_p4_net"];
        let traced = if args.traced_ms == 0 || !traced_ones.contains(&info.name) {
            "-".to_string()
        } else {
            let vcd = tmp.join(format!("{}.vcd", info.name));
            let r = info.with_trace().and_then(|t| {
                random_speed(t, Duration::from_millis(args.traced_ms), 200_000, Some(&vcd)).map_err(|e| e.to_string())
            });
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

    writeln!(md, "\n### Per unit\n").unwrap();
    let units = match units {
        Ok(u) => u.clone(),
        Err(e) => {
            writeln!(md, "**`rtl-gen list` failed ({e}); units taken from tb/models.toml.**\n").unwrap();
            per_unit.iter().map(|u| u.0.clone()).collect()
        }
    };
    writeln!(
        md,
        "Every unit of `rtl-gen list` ({}), with the range of the plain speeds above over its models.\n",
        units.len()
    )
    .unwrap();
    writeln!(
        md,
        "| unit | RTL models | Verilator cycles/s (min .. max) | netlist models | netsim cycles/s (min .. max) |"
    )
    .unwrap();
    writeln!(md, "|---|---:|---:|---:|---:|").unwrap();
    let range = |v: &[f64]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(0.0, f64::max);
            format!("{} .. {}", si(lo), si(hi))
        }
    };
    let mut missing = Vec::new();
    for u in &units {
        let (rtl, net) = per_unit.iter().find(|x| &x.0 == u).map_or((vec![], vec![]), |x| (x.1.clone(), x.2.clone()));
        if rtl.is_empty() {
            missing.push(u.clone());
        }
        writeln!(md, "| {u} | {} | {} | {} | {} |", rtl.len(), range(&rtl), net.len(), range(&net)).unwrap();
    }
    for (u, _, _) in &per_unit {
        if !units.contains(u) {
            writeln!(md, "\n**Model unit `{u}` is not in `rtl-gen list`.**").unwrap();
        }
    }
    if missing.is_empty() {
        writeln!(md, "\nEvery unit has at least one RTL model co-simulated under Verilator.\n").unwrap();
    } else {
        writeln!(md, "\n**Units without an RTL model in tb/models.toml: {}.**\n", missing.join(", ")).unwrap();
    }
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

fn quantizer_section(args: &Args, md: &mut String, rates: &mut Vec<Rate>) {
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
    let net = netlist_of(rtl);
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
    for info in [Some(rtl), net.as_ref().ok().copied()].into_iter().flatten() {
        let mut rate = Rate {
            unit: info.unit.to_string(),
            model: info.name.to_string(),
            what: format!("elements/cycle (max {})", default.lanes),
            cont: "-".into(),
            stalled: "-".into(),
            latency: "-".into(),
            manifest: opt(info.latency()),
            checked: "every output beat = `sim`".into(),
        };
        for (label, stalls) in &cases {
            eprintln!("bench: quantizer {} ({label} output stalls)", info.name);
            match quantizer_run(info, args.tokens, stalls) {
                Ok(t) => {
                    if *stalls == Stall::Never {
                        rate.cont = format!("{:.3}", t.elements_per_cycle());
                        rate.latency = t.latency().to_string();
                    } else {
                        rate.stalled = format!("{:.3}", t.elements_per_cycle());
                    }
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
                    rate.checked = format!("**FAILED**: {}", cell(&e));
                }
            }
        }
        rates.push(rate);
    }
    if let Err(why) = &net {
        notes.push(why.clone());
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

/// The netlist model of `rtl` if this run has it or the cache holds its
/// netlist (an extended one is not synthesized here: minutes of Yosys);
/// else why not.
fn netlist_of(rtl: &ModelInfo) -> Result<&'static ModelInfo, String> {
    let name = format!("{}_net", rtl.name);
    if models::names().contains(&name) || models::netlist_cached(rtl.name)? {
        models::load(&name, false)
    } else {
        Err(format!("No netlist row: `{name}` is an extended netlist not in the model cache (`make synth` builds it)."))
    }
}

fn default_model(unit: &str) -> Option<&'static ModelInfo> {
    let default = OakenParams::default();
    models::all().into_iter().find(|m| {
        m.unit == unit
            && !m.gate_level
            && serde_json::from_str::<OakenParams>(m.params_json).ok() == Some(default.clone())
    })
}

fn dequantizer_section(args: &Args, md: &mut String, rates: &mut Vec<Rate>) {
    writeln!(md, "## 3. Oaken dequantizer and round trip\n").unwrap();
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
    let net = netlist_of(rtl);
    for info in [Some(rtl), net.as_ref().ok().copied()].into_iter().flatten() {
        let half = DStalls { out: Stall::Random { p: 128 }, ..DStalls::none() };
        let mut rate = Rate {
            unit: info.unit.to_string(),
            model: info.name.to_string(),
            what: "elements/cycle".into(),
            cont: "-".into(),
            stalled: "-".into(),
            latency: "-".into(),
            manifest: opt(info.latency()),
            checked: "every output beat = `sim`".into(),
        };
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
                    let lat = if st.out == Stall::Never {
                        (run.out_cycles[0] - run.d_cycles[0]).to_string()
                    } else {
                        "-".into()
                    };
                    let epc = format!("{:.3}", (n * p.lanes) as f64 / span as f64);
                    rate.what = format!("elements/cycle (max {})", p.lanes);
                    if st.out == Stall::Never {
                        (rate.cont, rate.latency) = (epc, lat.clone());
                    } else {
                        rate.stalled = epc;
                    }
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
                Err(e) => {
                    writeln!(md, "| {} | {label} | failed: {} ||||||", info.name, cell(&e)).unwrap();
                    rate.checked = format!("**FAILED**: {}", cell(&e));
                }
            }
        }
        rates.push(rate);
    }
    if let Err(why) = &net {
        writeln!(md, "\n- {why}").unwrap();
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
        match drive_round_trip(
            &mut qm,
            &mut dm,
            &writes,
            &toks,
            &none,
            1,
            100_000 + 100 * (toks.len() * p.beats()) as u64,
        ) {
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
    writeln!(md).unwrap();
}

// ------------------------------------------------------ every other unit

const HALF: Stall = Stall::Random { p: 128 };
const STALL_CASES: [(&str, Stall); 2] = [("none", Stall::Never), ("50% random", HALF)];

/// Items moved, the cycles from the first to the last, and a latency.
struct Flow {
    items: usize,
    span: u64,
    latency: Option<u64>,
}

impl Flow {
    /// `cycles`: when each output item moved (ascending).
    fn of(cycles: &[u64], latency: Option<u64>) -> Result<Flow, String> {
        match (cycles.first(), cycles.last()) {
            (Some(a), Some(b)) => Ok(Flow { items: cycles.len(), span: b - a + 1, latency }),
            _ => Err("nothing came out".into()),
        }
    }
    fn per_cycle(&self) -> f64 {
        self.items as f64 / self.span as f64
    }
}

/// One row of a unit's table: a run per stall case, each `items` per
/// cycle times `scale` (lanes per beat).
fn rate_rows(
    md: &mut String,
    rates: &mut Vec<Rate>,
    info: &ModelInfo,
    what: &str,
    scale: f64,
    max: &str,
    mut run: impl FnMut(&Stall) -> Result<Flow, String>,
) {
    let mut rate = Rate {
        unit: info.unit.to_string(),
        model: info.name.to_string(),
        what: format!("{what} (max {max})"),
        cont: "-".into(),
        stalled: "-".into(),
        latency: "-".into(),
        manifest: opt(info.latency()),
        checked: "every output = `sim`".into(),
    };
    for (label, st) in STALL_CASES {
        eprintln!("bench: {} {what} ({label} stalls)", info.name);
        let t = Instant::now();
        match run(&st) {
            Ok(f) => {
                let v = format!("{:.3}", f.per_cycle() * scale);
                let lat = if st == Stall::Never { opt(f.latency) } else { "-".into() };
                writeln!(
                    md,
                    "| {} | {what} | {label} | {} | {} | {v} (max {max}) | {lat} | {} | {:.2} s |",
                    info.name,
                    f.items,
                    f.span,
                    opt(info.latency()),
                    t.elapsed().as_secs_f64()
                )
                .unwrap();
                if st == Stall::Never {
                    if f.latency.is_some() && info.latency().is_some() && f.latency != info.latency() {
                        rate.checked +=
                            &format!("; **latency {} differs from the manifest's {}**", lat, opt(info.latency()));
                    }
                    (rate.cont, rate.latency) = (v, lat);
                } else {
                    rate.stalled = v;
                }
            }
            Err(e) => {
                writeln!(md, "| {} | {what} | {label} | failed: {} ||||||", info.name, cell(&e)).unwrap();
                rate.checked = format!("**FAILED**: {}", cell(&e));
            }
        }
    }
    rates.push(rate);
}

fn rate_header(md: &mut String, items: &str) {
    writeln!(
        md,
        "| model | measure | stalls | {items} | cycles (first to last) | per cycle | latency (cycles) | manifest latency | co-sim time |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|---:|").unwrap();
}

/// A model of tb/models.toml, or a line saying it is missing.
/// HACK's energy proxy (spec §15.16.3): `hack-qk-dot` and its
/// dequantize-first baseline at their defaults, as OSU018 netlists under
/// `tb::netsim`, on the same real-slice stimulus at full rate; switching
/// counted from the first K beat to the last score. Only when `make synth`
/// has made both netlists (minutes of Yosys each).
fn hack_activity(md: &mut String) {
    use tb::hack_qk_dot as hq;
    const TOKENS: usize = 64;
    writeln!(md, "### HACK: switching activity against the dequantize-first baseline\n").unwrap();
    let names = ["hack_qk_dot", "hack_deq_dot"];
    for n in names {
        match models::netlist_cached(n) {
            Ok(true) => {}
            Ok(false) => {
                writeln!(md, "Not measured: no OSU018 netlist of `{n}` in the model cache (`make synth` makes it).\n").unwrap();
                return;
            }
            Err(e) => {
                writeln!(md, "Not measured: {e}\n").unwrap();
                return;
            }
        }
    }
    writeln!(
        md,
        "Each unit's OSU018 netlist at its defaults under `tb::netsim`, on the same stimulus \
         (`tb::hack_qk_dot::real_case`: one Q and {TOKENS} K tokens from the real slice, quantized by `sim`; \
         Q in FP16 for the baseline and 8-bit codes for HACK), never stalled, every score checked against `sim`. \
         Counted from after reset to the last score: flip-flop outputs that changed, and gate outputs that \
         changed (settled values; a clock pin's toggles are not counted). A proxy of dynamic energy at equal \
         work: per K code taken.\n"
    )
    .unwrap();
    writeln!(md, "| unit | model | flip-flops | cycles | scores | flop toggles / K code | gate toggles / K code |").unwrap();
    writeln!(md, "|---|---|---:|---:|---:|---:|---:|").unwrap();
    let mut per_code = Vec::new();
    for n in names {
        let name = format!("{n}_net");
        eprintln!("bench: {name} switching activity");
        let info = models::get(&name);
        let mut m = Model::new(info);
        m.reset(1);
        let p = hq::params_of(&m);
        let c = hq::real_case(&p, TOKENS, 0xe7);
        m.netsim_mut().expect("a netlist model").clear_activity();
        match hq::run(&mut m, &p, &c) {
            Ok(r) => {
                let a = m.netsim().unwrap().activity();
                let flops = m.netsim().unwrap().flop_bits().len();
                let codes = (TOKENS * p.head_dim) as f64;
                let (f, g) = (a.flop_toggles as f64 / codes, a.gate_toggles as f64 / codes);
                writeln!(md, "| `{}` | `{name}` | {flops} | {} | {} | {f:.2} | {g:.2} |", info.unit, r.cycles, r.scores).unwrap();
                per_code.push((f, g));
            }
            Err(e) => writeln!(md, "| `{}` | `{name}` | | | | **failed: {e}** | |", info.unit).unwrap(),
        }
    }
    if let [(f0, g0), (f1, g1)] = per_code[..] {
        writeln!(md, "| baseline / HACK | | | | | {:.2}x | {:.2}x |", f1 / f0, g1 / g0).unwrap();
    }
    writeln!(md).unwrap();
}

fn need(md: &mut String, name: &str) -> Option<&'static ModelInfo> {
    let m = models::by_name(name);
    if m.is_none() {
        writeln!(md, "**No model `{name}` in tb/models.toml.**\n").unwrap();
    }
    m
}

// The zero shifters through `tb::pipe` (its checker: `sim::shifter`
// expected, order, held beats, exact latency when never stalled).

struct Remove {
    n: usize,
    ports: [PortId; 4],
}

impl Unit for Remove {
    type Beat = MaskedBeat;
    type Out = (u64, Vec<u64>);
    fn drive(&self, m: &mut Model, b: &MaskedBeat) {
        m.set_lanes(self.ports[0], &b.data);
        m.set_u128(self.ports[1], b.mask);
    }
    fn noise(&self, m: &mut Model, rng: &mut Xorshift) {
        m.set_u128(self.ports[1], pipe::noise_mask(rng, self.n));
    }
    fn read(&self, m: &Model) -> (u64, Vec<u64>) {
        (m.get(self.ports[3]), m.get_lanes(self.ports[2]))
    }
    fn expected(&self, b: &MaskedBeat) -> (u64, Vec<u64>) {
        let (data, count) = sim::shifter::zero_remove(&b.data, &sim::shifter::mask_bits(b.mask, self.n));
        (count as u64, data)
    }
    fn describe(&self, b: &MaskedBeat) -> String {
        format!("keep {:#x}, data {:x?}", b.mask, b.data)
    }
}

struct Insert {
    n: usize,
    ports: [PortId; 3],
}

impl Unit for Insert {
    type Beat = MaskedBeat;
    type Out = Vec<u64>;
    fn drive(&self, m: &mut Model, b: &MaskedBeat) {
        m.set_lanes(self.ports[0], &b.data);
        m.set_u128(self.ports[1], b.mask);
    }
    fn noise(&self, m: &mut Model, rng: &mut Xorshift) {
        m.set_u128(self.ports[1], pipe::noise_mask(rng, self.n));
    }
    fn read(&self, m: &Model) -> Vec<u64> {
        m.get_lanes(self.ports[2])
    }
    fn expected(&self, b: &MaskedBeat) -> Vec<u64> {
        sim::shifter::zero_insert(&b.data, &sim::shifter::mask_bits(b.mask, self.n))
    }
    fn describe(&self, b: &MaskedBeat) -> String {
        format!("mask {:#x}, data {:x?}", b.mask, b.data)
    }
}

/// `n` random vectors with random masks.
fn masked_beats(info: &ModelInfo, n: usize, seed: u64) -> Vec<MaskedBeat> {
    let (lanes, w) = pipe::lanes(info);
    let mut r = Xorshift::new(seed);
    (0..n)
        .map(|_| MaskedBeat {
            data: (0..lanes).map(|_| r.next_u64() & pipe::wmask(w)).collect(),
            mask: ((r.next_u64() as u128) << 64 | r.next_u64() as u128) & pipe::full(lanes),
        })
        .collect()
}

/// A `pipe` case of `beats` with the input always valid and the output
/// stalled per `st`.
fn pipe_case(beats: Vec<MaskedBeat>, st: &Stall, seed: u64) -> pipe::Case<MaskedBeat> {
    let mut g = StallGen::new(st, seed);
    let stall = if *st == Stall::Never { vec![] } else { (0..beats.len() * 4).map(|_| g.next()).collect() };
    pipe::Case { stall, ..pipe::Case::back_to_back(beats) }
}

/// Runs a shifter case (fresh model); `record` keeps a recording.
fn shifter_run(
    info: &'static ModelInfo,
    n: usize,
    st: &Stall,
    record: bool,
) -> Result<(Flow, Option<Recording>), String> {
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let c = pipe_case(masked_beats(info, n, 0x5eed_0001), st, 0x5eed_0002);
    let (lanes, _) = pipe::lanes(info);
    let t = if info.unit == "zero-remove-shifter" {
        let ports = ["in_data", "in_keep", "out_data", "out_count"].map(|p| m.port(p));
        pipe::check_timed(&mut m, &Remove { n: lanes, ports }, &c, None)?
    } else {
        let ports = ["in_data", "in_mask", "out_data"].map(|p| m.port(p));
        pipe::check_timed(&mut m, &Insert { n: lanes, ports }, &c, None)?
    };
    let f = Flow::of(&t.taken, Some(t.shown[0] - t.accepted[0]))?;
    m.tick();
    Ok((f, m.take_recording()))
}

// The Titanus units through their drivers.

fn pruner_run(
    info: &'static ModelInfo,
    tokens: usize,
    st: &Stall,
    record: bool,
) -> Result<(Flow, Option<Recording>), String> {
    use tb::titanus_pruner as tp;
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let p = tp::params_of(&m);
    let c = tp::Case { live: vec![], ..tp::case_of(&p, tokens, 0x7a11, Stall::Never, st.clone()) };
    let r = tp::run(&mut m, &p, &c)?;
    Ok((Flow::of(&r.out_cycles, r.first_latency)?, m.take_recording()))
}

fn tdq_run(
    info: &'static ModelInfo,
    tokens: usize,
    st: &Stall,
    record: bool,
) -> Result<(Flow, Option<Recording>), String> {
    use tb::titanus_dequantizer as tdq;
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let p = tdq::params_of(&m);
    let mut c = tdq::case_of(&p, tokens, 0xd7a, Stall::Never, st.clone());
    // the loads first, then the records back to back (as in a decode step)
    c.ops.retain(|o| !matches!(o, tdq::Op::Clear));
    c.ops.sort_by_key(|o| matches!(o, tdq::Op::Token { .. }));
    let r = tdq::run(&mut m, &p, &c)?;
    Ok((Flow::of(&r.out_cycles, r.first_latency)?, m.take_recording()))
}

/// INT8 tokens for the Titanus quantizer: `n` prefill tokens with values
/// in -100..=100 (one in eight 0, pruned), decode tokens that repeat them
/// (inside every channel's level-0 range: no level opens).
fn tq_tokens(channels: usize, n: usize, seed: u64) -> Vec<Vec<i8>> {
    let mut r = Xorshift::new(seed);
    (0..n)
        .map(|_| {
            (0..channels).map(|_| if r.next_u64() % 8 == 0 { 0 } else { (r.next_u64() % 201) as i8 - 100 }).collect()
        })
        .collect()
}

/// The Titanus quantizer's replay and decode rates, and the latency of a
/// decode beat offered to an idle unit. Returns the replay and decode
/// flows (beats) and the levels the decode tokens opened (expected 0).
fn tq_rates(info: &'static ModelInfo, tokens: usize, st: &Stall) -> Result<(Flow, Flow, u64), String> {
    use tb::titanus_quantizer::{self as tq, Op};
    let mut m = Model::new(info);
    m.reset(1);
    let p = tq::params_of(&m);
    let n = tokens.min(p.max_prefill);
    let toks = tq_tokens(p.channels, n, 0x9a11);
    let mut ops = vec![Op::Start { layer: 0, v: false }];
    ops.extend(toks.iter().map(|t| Op::Prefill(t.clone())));
    ops.push(Op::Flush);
    ops.extend(toks.iter().map(|t| Op::Decode(t.clone())));
    let inputs = tq::lower(&p, &ops);
    let r = tq::run_inputs(&mut m, &p, &inputs, [&Stall::Never, st, st], 0x9a12)?;
    let b = p.beats();
    if r.rec_cycles.len() != 2 * n * b {
        return Err(format!("{} record beats, expected {}", r.rec_cycles.len(), 2 * n * b));
    }
    let replay = Flow::of(&r.rec_cycles[..n * b], None)?;
    // latency: the same start, two prefill tokens and a flush, then one
    // decode token offered only once the replay is long over
    let lat = if *st == Stall::Never {
        let short: Vec<Op> =
            vec![ops[0].clone(), ops[1].clone(), ops[2].clone(), Op::Flush, Op::Decode(toks[0].clone())];
        let inputs = tq::lower(&p, &short);
        let mut m = Model::new(info);
        m.reset(1);
        let c0 = m.cycle();
        let dry = tq::run_inputs(&mut m, &p, &inputs, [&Stall::Never; 3], 0x9a13)?;
        let flush = dry.in_cycles[1 + 2 * b];
        let block = Stall::Block { start: (flush - c0 + 1) as u32, len: 20_000 };
        let mut m = Model::new(info);
        m.reset(1);
        let r = tq::run_inputs(&mut m, &p, &inputs, [&block, &Stall::Never, &Stall::Never], 0x9a13)?;
        Some(r.rec_cycles[2 * b] - r.in_cycles[2 + 2 * b])
    } else {
        None
    };
    let decode = Flow::of(&r.rec_cycles[n * b..], lat)?;
    Ok((replay, decode, r.ev.decode_levels))
}

fn tq_case_run(info: &'static ModelInfo, seqs: usize, record: bool) -> Result<(u64, Option<Recording>), String> {
    use tb::titanus_quantizer as tq;
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let p = tq::params_of(&m);
    let st = Stall::Random { p: 48 };
    let c = tq::case_of(&p, seqs, 0x1ca7, tq::DEFAULT_STYLE, [st.clone(), st.clone(), st]);
    let r = tq::run(&mut m, &p, &c)?;
    Ok((r.cycles, m.take_recording()))
}

// The MMU through `tb::oaken_mmu`: writes of realistic tokens to one
// sequence, then reads of every head.

struct MmuFlow {
    writes: Flow,
    reads: Flow,
    write_latency: f64,
    read_latency: f64,
    beats: u64,
    cycles: u64,
}

fn mmu_run(info: &'static ModelInfo, st: &Stall, record: bool) -> Result<(MmuFlow, Option<Recording>), String> {
    use tb::oaken_mmu::{self as om, Cmd, Segment};
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let p = om::params_of(&m);
    let seg = p.segments();
    // about 10% outliers per segment, every head (as tb/tests/oaken_mmu.rs)
    let counts: Vec<u8> = (0..p.heads * seg).map(|i| (p.segment_len(i % seg) / 10) as u8).collect();
    let write = Cmd::Write { seq: 0, layer: 0, counts };
    // as many writes as fit (up to 64 tokens), found on the model
    let mut probe = sim::oaken::mmu::Mmu::new(p.clone()).map_err(|e| format!("{e:?}"))?;
    let n = (0..p.max_seq_len.min(64)).take_while(|_| om::expect(&mut probe, &write).1.result.is_ok()).count();
    if n == 0 {
        return Err("not one write fits".into());
    }
    let mut cmds: Vec<Cmd> = vec![write; n];
    // reads leave the sequence in place: every head, over and over
    let rounds = 16usize.div_ceil(p.heads);
    cmds.extend((0..rounds * p.heads).map(|i| Cmd::Read { seq: 0, layer: 0, head: (i % p.heads) as u8 }));
    let mut mmu = sim::oaken::mmu::Mmu::new(p.clone()).map_err(|e| format!("{e:?}"))?;
    let s = Segment { cmds, idle: Stall::Never, stall: st.clone(), reset_at: None, seed: 0x33 };
    let timeout = om::timeout(&p, &s);
    let r = om::run_segment(&mut m, &mut mmu, &s, timeout)?;
    if let Some(o) = r.outcomes.iter().find(|o| o.result.is_err()) {
        return Err(format!("{:?} failed: {:?}", o.cmd, o.result));
    }
    // a command's span ends with its status beat: accepted + latency
    let ends: Vec<u64> = r.accepted.iter().zip(&r.latency).map(|(a, l)| a + l.unwrap_or(0)).collect();
    let lat = |k: std::ops::Range<usize>| {
        k.clone().map(|i| r.latency[i].unwrap_or(0) as f64).sum::<f64>() / k.len().max(1) as f64
    };
    let span = |k: std::ops::Range<usize>| Flow {
        items: k.len(),
        span: ends[k.end - 1] - r.accepted[k.start] + 1,
        latency: None,
    };
    let f = MmuFlow {
        writes: span(0..n),
        reads: span(n..r.accepted.len()),
        write_latency: lat(0..n),
        read_latency: lat(n..r.accepted.len()),
        beats: r.beats,
        cycles: r.cycles,
    };
    Ok((f, m.take_recording()))
}

// The primitives: pipelines that advance while `en` is high, most with a
// valid bit alongside. Each operand set is presented once (in_valid high)
// until a cycle with `en` high takes it; the output is compared with the
// golden value after every edge, against a model of the stages.

struct Prim {
    /// Operand ports, in the order `draw` gives the values.
    ins: Vec<PortId>,
    en: PortId,
    in_valid: Option<PortId>,
    out: PortId,
    out_valid: Option<PortId>,
    draw: Box<dyn Fn(&mut Xorshift) -> Vec<u64>>,
    expect: Box<dyn Fn(&[u64]) -> u128>,
    /// A second output through the same stages (fp16-convert's `x -> u`)
    /// and its golden value from the operands.
    side: Option<(PortId, Box<dyn Fn(&[u64]) -> u128>)>,
}

/// Two's complement of `v` in 42 bits (the fp16-convert and div ports).
const FX: u32 = 42;

fn to_fx(v: i64) -> u64 {
    (v as u64) & ((1 << FX) - 1)
}

fn from_fx(u: u64) -> i64 {
    ((u << (64 - FX)) as i64) >> (64 - FX)
}

/// A value of up to `bits` bits, its length uniform (small and large alike).
fn log_uniform(r: &mut Xorshift, bits: u32) -> u64 {
    let b = 1 + (r.next_u64() % bits as u64) as u32;
    r.next_u64() & ((1u64 << b) - 1)
}

fn prim_of(m: &Model) -> Result<Prim, String> {
    let info = m.info();
    let g = |n: &str| m.port(n);
    let param = |k: &str| info.params()[k].as_u64().ok_or_else(|| format!("{}: no parameter {k}", info.name));
    Ok(match info.unit {
        "mul-pipe" => {
            let w = param("width")? as u32;
            let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
            Prim {
                ins: vec![g("a"), g("b")],
                en: g("en"),
                in_valid: Some(g("in_valid")),
                out: g("p"),
                out_valid: Some(g("out_valid")),
                draw: Box::new(move |r| vec![r.next_u64() & mask, r.next_u64() & mask]),
                expect: Box::new(|v| v[0] as u128 * v[1] as u128),
                side: None,
            }
        }
        "div-round" => {
            // spec §5.3; the Oaken quantizer's code (sim's GroupParams::code)
            // is this division, here saturated to Q bits
            let q = param("quotient-bits")? as u32;
            Prim {
                ins: vec![g("n"), g("d")],
                en: g("en"),
                in_valid: Some(g("in_valid")),
                out: g("q"),
                out_valid: Some(g("out_valid")),
                // inside the 50-bit datapath: 2n + d < 2^50, d 2^Q < 2^50
                draw: Box::new(move |r| {
                    let d = log_uniform(r, 50 - q - 1);
                    let n = log_uniform(r, 48).min(((1u64 << 50) - 1 - d) / 2);
                    vec![n, d]
                }),
                expect: Box::new(move |v| {
                    use sim::oaken::{format::GroupMeta, quantizer::GroupParams};
                    let g = GroupParams { meta: GroupMeta { min: 0, step: 0 }, min_units: 0, step_units: v[1] as i64 };
                    g.code(v[0] as i64).min((1 << q) - 1) as u128
                }),
                side: None,
            }
        }
        "fold-zero" => {
            // spec §5.8, against sim's GroupParams::fold_zero (§2.7)
            let m = param("code-bits")? as u32;
            Prim {
                ins: vec![g("min"), g("step")],
                en: g("en"),
                in_valid: Some(g("in_valid")),
                out: g("z"),
                out_valid: Some(g("out_valid")),
                // finite patterns, the step's sign bit 0
                draw: Box::new(|r| {
                    let mut p = || loop {
                        let x = r.next_u64() as u16;
                        if sim::fp16::is_finite(x) {
                            return x as u64;
                        }
                    };
                    vec![p(), p() & 0x7FFF]
                }),
                expect: Box::new(move |v| {
                    use sim::oaken::{format::GroupMeta, quantizer::GroupParams};
                    let meta = GroupMeta { min: v[0] as u16, step: v[1] as u16 };
                    GroupParams::from_meta(meta).fold_zero(m) as u128
                }),
                side: None,
            }
        }
        "div-const" => {
            let k = param("divisor")?;
            Prim {
                ins: vec![g("d")],
                en: g("en"),
                in_valid: Some(g("in_valid")),
                out: g("c"),
                out_valid: Some(g("out_valid")),
                draw: Box::new(|r| vec![log_uniform(r, FX)]),
                // spec §5.4: ceil(D / K)
                expect: Box::new(move |v| v[0].div_ceil(k) as u128),
                side: None,
            }
        }
        "fp16-convert" => Prim {
            ins: vec![g("v"), g("mode"), g("x")],
            en: g("en"),
            in_valid: None,
            out: g("y"),
            out_valid: None,
            draw: Box::new(|r| {
                let mag = log_uniform(r, FX - 1) as i64;
                let v = if r.next_u64() & 1 == 1 { -mag } else { mag };
                let mut p = r.next_u64() as u16;
                while !sim::fp16::is_finite(p) {
                    p = r.next_u64() as u16;
                }
                vec![to_fx(v), r.next_u64() % 3, p as u64]
            }),
            expect: Box::new(|v| {
                let x = from_fx(v[0]);
                (match v[1] {
                    0 => sim::fp16::round_down(x),
                    1 => sim::fp16::round_up(x),
                    _ => sim::fp16::round_nearest_even(x),
                }) as u128
            }),
            side: Some((g("u"), Box::new(|v| to_fx(sim::fp16::to_units(v[2] as u16)) as u128))),
        },
        u => return Err(format!("{u} is not a primitive")),
    })
}

/// `n` operand sets through a primitive with `en` stalled per `st`;
/// results counted as they reach the output.
fn prim_run(info: &'static ModelInfo, n: usize, st: &Stall, record: bool) -> Result<(Flow, Option<Recording>), String> {
    let mut m = Model::new(info);
    if record {
        m.record();
    }
    m.reset(1);
    let pr = prim_of(&m)?;
    let lat = info.latency().ok_or_else(|| format!("{}: the manifest gives no latency", info.name))? as usize;
    let mut r = Xorshift::new(0xf00d);
    let ops: Vec<Vec<u64>> = (0..n).map(|_| (pr.draw)(&mut r)).collect();
    let mut en_gen = StallGen::new(st, 0xf00e);
    // stage k: (valid, operand index) of what it holds; None until loaded
    let mut stages: VecDeque<Option<(bool, usize)>> = vec![None; lat].into();
    let (mut next, mut first_in, mut first_out) = (0usize, None, None);
    let mut out_cycles = Vec::with_capacity(n);
    let limit = 20 * n as u64 + 1000;
    for cyc in 0..limit {
        let en = !en_gen.next();
        let have = next < ops.len();
        let vals = if have { ops[next].clone() } else { (pr.draw)(&mut r) };
        for (&p, &v) in pr.ins.iter().zip(&vals) {
            m.set(p, v);
        }
        if let Some(iv) = pr.in_valid {
            m.set(iv, have as u64);
        }
        m.set(pr.en, en as u64);
        m.tick();
        if en {
            stages.pop_back();
            stages.push_front(Some((have, next)));
            if have {
                first_in.get_or_insert(cyc);
                next += 1;
            }
        }
        // shown from cycle cyc + 1
        let want = match stages.back().copied().flatten() {
            Some((true, k)) => Some(k),
            _ => None,
        };
        if let Some(ov) = pr.out_valid {
            let shown = stages.back().copied().flatten().is_some_and(|s| s.0);
            if (m.get(ov) == 1) != shown {
                return Err(format!("cycle {}: out_valid {}, expected {}", cyc + 1, m.get(ov), shown as u8));
            }
        }
        if let Some(k) = want {
            let got = m.get_u128(pr.out);
            let exp = (pr.expect)(&ops[k]);
            if got != exp {
                return Err(format!("cycle {}: operands {:x?}: got {got:#x}, expected {exp:#x}", cyc + 1, ops[k]));
            }
            if let Some((port, f)) = &pr.side {
                let (got, exp) = (m.get_u128(*port), f(&ops[k]));
                if got != exp {
                    let name = m.port_info(*port).name;
                    return Err(format!(
                        "cycle {}: operands {:x?}: {name} {got:#x}, expected {exp:#x}",
                        cyc + 1,
                        ops[k]
                    ));
                }
            }
            if en {
                out_cycles.push(cyc + 1);
                if k == 0 {
                    first_out = Some(cyc + 1);
                }
                if k + 1 == n {
                    break;
                }
            }
        }
    }
    if out_cycles.len() != n {
        return Err(format!("{} of {n} results after {limit} cycles", out_cycles.len()));
    }
    let latency = first_out.zip(first_in).map(|(o, i)| o - i);
    Ok((Flow::of(&out_cycles, latency)?, m.take_recording()))
}

fn units_section(args: &Args, md: &mut String, rates: &mut Vec<Rate>) {
    writeln!(md, "## 4. Every other unit: throughput and latency\n").unwrap();
    writeln!(
        md,
        "Each unit at its default parameters where tb/models.toml has that model (otherwise the model named), \
         driven by its own tb driver, which checks every output against `sim` (a failure is reported in place \
         of the figures). The input side is always valid; \"50% random\" stalls the output side (each ready \
         input low with probability 1/2 per cycle; for the primitives, which have no ready, `en` low instead). \
         Per cycle = items out / cycles from the first output to the last. Latency = cycles from the first \
         input accepted to its first output shown, with no stalls. Co-sim time is the wall time of the run, \
         checks included.\n"
    )
    .unwrap();

    // zero shifters
    writeln!(md, "### Zero-remove and zero-insert shifters\n").unwrap();
    writeln!(
        md,
        "2,000 random vectors with random masks through `tb::pipe::check_timed` (the shifters' checker: \
         each output = `sim::shifter`, in order, held beats stable, exactly the manifest latency when never \
         stalled). Per cycle in elements (lanes x vectors/cycle).\n"
    )
    .unwrap();
    rate_header(md, "vectors");
    for name in ["zr_l16_w8_p2", "zi_l16_w8_p2"] {
        let Some(info) = need(md, name) else { continue };
        let lanes = pipe::lanes(info).0;
        rate_rows(md, rates, info, "elements/cycle", lanes as f64, &lanes.to_string(), |st| {
            shifter_run(info, 2000, st, false).map(|r| r.0)
        });
    }
    writeln!(md).unwrap();

    // pruner
    writeln!(md, "### Titanus pruner\n").unwrap();
    if let Some(info) = need(md, "titanus_pruner") {
        let p = tb::titanus_pruner::params_of(&Model::new(info));
        writeln!(
            md,
            "`tb::titanus_pruner::run` on {} tokens of `case_of` (random table writes before the stream, \
             layers in and out of range, thresholds at the elements), `{}`. One beat carries {} K and {} V \
             elements; per cycle in elements (K + V).\n",
            args.tokens, info.params_json, p.lanes, p.lanes
        )
        .unwrap();
        rate_header(md, "beats");
        let l2 = 2 * p.lanes;
        rate_rows(md, rates, info, "elements/cycle", l2 as f64, &l2.to_string(), |st| {
            pruner_run(info, args.tokens, st, false).map(|r| r.0)
        });
        writeln!(md).unwrap();
    }

    // Titanus quantizer
    writeln!(md, "### Titanus quantizer (one half: K or V)\n").unwrap();
    if let Some(info) = need(md, "titanus_quantizer") {
        let p = tb::titanus_quantizer::params_of(&Model::new(info));
        let n = args.tokens.min(p.max_prefill);
        writeln!(
            md,
            "`tb::titanus_quantizer::run_inputs`, `{}`: `start`, {n} prefill tokens (INT8 in -100..=100, one \
             element in eight 0 and pruned), `flush` (QUANT: level 0 of every channel, then the replay of the \
             buffered tokens), then the same {n} tokens again as decode tokens (inside every channel's range: \
             no level opens). Every record beat, `sz` word and response is checked against \
             `sim::titanus::quantizer`. Replay = the prefill tokens' record beats, decode = the decode tokens' \
             (spec §11.14.5: one beat per cycle in the replay, one per two cycles in decode); in elements \
             ({} lanes per beat). \"50% random\" stalls `rec_ready` and `sz_ready`. Decode latency: a decode \
             token offered to an idle unit (after a short prefill, its QUANT and replay), from its first beat \
             accepted to its first record beat; the manifest counts from the beat's entry into the scheduler \
             stage M.\n",
            info.params_json, p.lanes
        )
        .unwrap();
        rate_header(md, "beats");
        let mut replay = Rate {
            unit: info.unit.into(),
            model: info.name.into(),
            what: format!("elements/cycle, replay (max {})", p.lanes),
            cont: "-".into(),
            stalled: "-".into(),
            latency: "-".into(),
            manifest: "-".into(),
            checked: "every output = `sim`".into(),
        };
        let mut decode = Rate {
            what: format!("elements/cycle, decode (max {})", p.lanes / 2),
            manifest: opt(info.latency()),
            checked: "every output = `sim`; latency from the beat's acceptance, the manifest's from its entry into \
                      stage M (spec §11.14.5)"
                .into(),
            ..replay.clone()
        };
        let mut levels = Vec::new();
        for (label, st) in STALL_CASES {
            eprintln!("bench: {} ({label} stalls)", info.name);
            let t = Instant::now();
            match tq_rates(info, args.tokens, &st) {
                Ok((rf, df, opened)) => {
                    levels.push(opened);
                    let secs = t.elapsed().as_secs_f64();
                    let l = p.lanes as f64;
                    for (what, f, rate) in [("replay", &rf, &mut replay), ("decode", &df, &mut decode)] {
                        let v = format!("{:.3}", f.per_cycle() * l);
                        let lat = if st == Stall::Never { opt(f.latency) } else { "-".into() };
                        let man = if what == "decode" { opt(info.latency()) } else { "-".into() };
                        writeln!(
                            md,
                            "| {} | elements/cycle, {what} | {label} | {} | {} | {v} | {lat} | {man} | {secs:.2} s |",
                            info.name, f.items, f.span
                        )
                        .unwrap();
                        if st == Stall::Never {
                            (rate.cont, rate.latency) = (v, lat);
                        } else {
                            rate.stalled = v;
                        }
                    }
                }
                Err(e) => {
                    writeln!(md, "| {} | replay, decode | {label} | failed: {} ||||||", info.name, cell(&e)).unwrap();
                    replay.checked = format!("**FAILED**: {}", cell(&e));
                    decode.checked = replay.checked.clone();
                }
            }
        }
        if levels.iter().any(|&l| l > 0) {
            writeln!(md, "\n**Levels opened in decode: {levels:?} (the decode rate includes them).**").unwrap();
        }
        rates.push(replay);
        rates.push(decode);
        writeln!(md).unwrap();
    }

    // Titanus dequantizer
    writeln!(md, "### Titanus dequantizer\n").unwrap();
    if let Some(info) = need(md, "titanus_dequantizer_l16") {
        let p = tb::titanus_dequantizer::params_of(&Model::new(info));
        writeln!(
            md,
            "No model at the defaults in tb/models.toml; `titanus_dequantizer_l16` (`{}`, the netlist of spec \
             §11.14.4). `tb::titanus_dequantizer::run` on {} tokens of `case_of` with every load moved before \
             the records (each load holds the input 4 cycles) and the clears dropped; per cycle in elements \
             ({} lanes per beat).\n",
            info.params_json, args.tokens, p.lanes
        )
        .unwrap();
        rate_header(md, "beats");
        rate_rows(md, rates, info, "elements/cycle", p.lanes as f64, &p.lanes.to_string(), |st| {
            tdq_run(info, args.tokens, st, false).map(|r| r.0)
        });
        writeln!(md).unwrap();
    }

    // MMU
    writeln!(md, "### Oaken MMU\n").unwrap();
    writeln!(
        md,
        "No model at the defaults in tb/models.toml; `oaken_mmu_d4k` (4 KB pages, near the defaults) and \
         `oaken_mmu_h3` (the netlist `make synth` times). `tb::oaken_mmu::run_segment`: writes of one \
         sequence (realistic tokens, about 10% outliers per segment, up to 64 tokens or as many as fit), then reads of every \
         head (at least 16 reads in all); every response beat is checked against `sim::oaken::mmu::Mmu`. The MMU takes one command at a \
         time (`cmd_ready` returns after the status beat), so requests/cycle = commands / cycles from the \
         first taken to the last status beat; latency = mean cycles from a command taken to its status beat \
         taken. \"50% random\" stalls `rsp_ready`. The manifest declares no latency (it depends on the \
         command).\n"
    )
    .unwrap();
    writeln!(
        md,
        "| model | stalls | writes | cycles | writes/cycle | mean write latency | reads | cycles | reads/cycle | mean read latency | response beats/cycle | co-sim time |"
    )
    .unwrap();
    writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    for name in ["oaken_mmu_d4k", "oaken_mmu_h3"] {
        let Some(info) = need(md, name) else { continue };
        let mk = |what: &str| Rate {
            unit: info.unit.into(),
            model: info.name.into(),
            what: what.into(),
            cont: "-".into(),
            stalled: "-".into(),
            latency: "-".into(),
            manifest: opt(info.latency()),
            checked: "every response beat = `sim`".into(),
        };
        let (mut w, mut r) = (mk("requests/cycle, writes"), mk("requests/cycle, reads"));
        for (label, st) in STALL_CASES {
            eprintln!("bench: {name} ({label} stalls)");
            let t = Instant::now();
            match mmu_run(info, &st, false) {
                Ok((f, _)) => {
                    writeln!(
                        md,
                        "| {name} | {label} | {} | {} | {:.4} | {:.1} | {} | {} | {:.4} | {:.1} | {:.3} | {:.2} s |",
                        f.writes.items,
                        f.writes.span,
                        f.writes.per_cycle(),
                        f.write_latency,
                        f.reads.items,
                        f.reads.span,
                        f.reads.per_cycle(),
                        f.read_latency,
                        f.beats as f64 / f.cycles as f64,
                        t.elapsed().as_secs_f64()
                    )
                    .unwrap();
                    let fmt = |x: f64| format!("{x:.4}");
                    if st == Stall::Never {
                        (w.cont, w.latency) = (fmt(f.writes.per_cycle()), format!("{:.1} (mean)", f.write_latency));
                        (r.cont, r.latency) = (fmt(f.reads.per_cycle()), format!("{:.1} (mean)", f.read_latency));
                    } else {
                        (w.stalled, r.stalled) = (fmt(f.writes.per_cycle()), fmt(f.reads.per_cycle()));
                    }
                }
                Err(e) => {
                    writeln!(md, "| {name} | {label} | failed: {} ||||||||||", cell(&e)).unwrap();
                    w.checked = format!("**FAILED**: {}", cell(&e));
                    r.checked = w.checked.clone();
                }
            }
        }
        rates.push(w);
        rates.push(r);
    }
    writeln!(md).unwrap();
    writeln!(
        md,
        "`hack-pv-dot` (`tb::hack_pv_dot`): one query of 16 closed blocks (P and V of `case_of`'s kinds) and an \
         open partition of `partition - 1` tokens, every output checked against `sim` (`pv_dot`). Per cycle in V \
         codes taken, from the first V beat to the last (a block is a P beat and `head_dim` V beats, so the \
         maximum is `16 partition head_dim / (16 head_dim + 15)`). Latency: the query's last input beat to its first \
         output.\n"
    )
    .unwrap();
    rate_header(md, "V beats");
    if let Some(info) = need(md, "hack_pv_dot") {
        use tb::hack_pv_dot as hp;
        let p = hp::params_of(&Model::new(info));
        // 16 blocks: 16 head_dim V beats and, between them, 15 P beats
        let max = (p.partition * 16 * p.head_dim) as f64 / (16 * p.head_dim + 15) as f64;
        rate_rows(md, rates, info, "V codes/cycle", p.partition as f64, &format!("{max:.3}"), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let mut r = tb::stim::Xorshift::new(0x6b9);
            let q = hp::query_of(&mut r, &p, 16, p.partition - 1);
            let c = hp::Case { queries: vec![q], stalls: [Stall::Never, Stall::Never, st.clone(), st.clone(), st.clone()], seed: 3 };
            let r = hp::run(&mut m, &p, &c)?;
            Flow::of(&r.v_cycles, r.first_latency)
        });
    }
    writeln!(md).unwrap();

    // KIVI
    writeln!(md, "### KIVI\n").unwrap();
    writeln!(
        md,
        "Each unit's own driver on `case_of` data (real slice, synthetic, flat, non-finite, random, wide), \
         every output checked against `sim` (`quantize_token`, `quantize_block`, `dequantize_group`). \
         Per cycle in elements: the dequantizer's output, the quantizers' input. The channel (K) quantizer \
         reads each block twice (spec §13.3), so it quantizes half the elements per cycle it takes in. \
         Its latency is the code beats' (the metadata beats' is 4 + b less).\n"
    )
    .unwrap();
    rate_header(md, "beats");
    if let Some(info) = need(md, "kivi_dequantizer") {
        use tb::kivi_dequantizer as kd;
        let p = kd::params_of(&Model::new(info));
        rate_rows(md, rates, info, "output elements/cycle", p.lanes as f64, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let r = kd::run(&mut m, &p, &kd::case_of(&p, 400, 0x6b3, Stall::Never, st.clone()))?;
            Flow::of(&r.out_cycles, r.first_latency)
        });
    }
    if let Some(info) = need(md, "kivi_quantizer") {
        use tb::kivi_quantizer as kq;
        let p = kq::params_of(&Model::new(info));
        rate_rows(md, rates, info, "input elements/cycle", p.lanes as f64, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let r = kq::run(&mut m, &p, &kq::case_of(&p, 64, 0x6b4, Stall::Never, st.clone()))?;
            Flow::of(&r.in_cycles, r.first_latency)
        });
    }
    if let Some(info) = need(md, "kivi_quantizer_ch") {
        use tb::kivi_quantizer_channel as kc;
        let p = tb::kivi_quantizer::params_of(&Model::new(info));
        rate_rows(md, rates, info, "input elements/cycle (two passes)", p.lanes as f64, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let r = kc::run(&mut m, &p, &kc::case_of(&p, 8, 0x6b5, Stall::Never, st.clone()))?;
            Flow::of(&r.in_cycles, r.word_latency)
        });
    }
    writeln!(md).unwrap();

    // PackKV decoder
    writeln!(md, "### PackKV decoder\n").unwrap();
    writeln!(
        md,
        "`tb::packkv_decoder`'s driver on `case_of` data (K/V pairs of quantized tokens, with and without \
         median repacking, flat and random blocks, one spoiled block in most transfers), full input beats of \
         `wi` words (spec §14.14.2), every beat checked against `sim` (`decode_stream`, `TokenGrid::decode`). \
         Per cycle in elements out, from the first data beat to the last, over whole blocks (header, metadata \
         words, permutation, fields and end beats included; at `burst = 2` the core parses them while its queue \
         feeds the output; spec §14.14.2).\n"
    )
    .unwrap();
    rate_header(md, "beats");
    if let Some(info) = need(md, "packkv_decoder") {
        use tb::packkv_decoder as pd;
        let p = pd::params_of(&Model::new(info));
        // the manifest's latency runs from the parser's take of a data beat,
        // which no port shows; the first word in to the first data out is
        // printed beside the table instead, not compared with it
        let mut first = None;
        rate_rows(md, rates, info, "output elements/cycle", p.lanes as f64, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let c = pd::Case { full_beats: true, ..pd::good_case_of(&p, 6, 0x6b6, Stall::Never, st.clone()) };
            let r = pd::run(&mut m, &p, &c)?;
            if *st == Stall::Never {
                first = r.first_latency;
            }
            Flow::of(&r.out_cycles, None)
        });
        if let Some(f) = first {
            writeln!(
                md,
                "\nFirst word beat in to first data beat out, no stalls: {f} cycles (the block's header, metadata \
                 words, permutation and first field beats are parsed first; a data beat the parser takes is out \
                 after the manifest's {} cycles; spec §14.14.2).",
                opt(info.latency())
            )
            .unwrap();
        }
    }
    writeln!(md).unwrap();

    // PackKV
    writeln!(md, "### PackKV\n").unwrap();
    writeln!(
        md,
        "The encoder's driver (`tb::packkv_encoder`) on six pairs of uniform codes, K and V always valid, \
         every block's words checked against `sim` (`encode_pair`). Per cycle in codes: the K and V codes \
         of the pairs over the cycles from the first word beat to the last (spec §14.14.3: `lanes` codes \
         a cycle once the pipeline is full, the tile reader's pace, where the output's items keep up; \
         `tb/tests/packkv_encoder.rs::full_rate` checks each set's pair time).\n"
    )
    .unwrap();
    rate_header(md, "codes");
    if let Some(info) = need(md, "packkv_encoder") {
        use tb::packkv_encoder as pe;
        let p = pe::params_of(&Model::new(info));
        rate_rows(md, rates, info, "codes/cycle", 1.0, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let r = pe::run(&mut m, &p, &pe::uniform_case(&p, 6, 0x6b6, st.clone()))?;
            let f = Flow::of(&r.out_cycles, None)?;
            Ok(Flow { items: r.codes, ..f })
        });
    }
    writeln!(md).unwrap();

    // HACK
    writeln!(md, "### HACK\n").unwrap();
    writeln!(
        md,
        "The shared driver of the two dot units (`tb::hack_qk_dot`) on `case_of` data (real slice, synthetic, \
         flat, extreme codes, random and non-finite metadata), every score checked against `sim` (`QkDot`, \
         `DeqDot`). Per cycle in K codes taken: one partition of `partition` codes per beat (spec §15.16), \
         from the first K beat to the last (one Q load, then 200 tokens). Latency: a token's last K beat to its score. \
         `hack-quantizer` (its own driver, `tb::hack_quantizer`, every partition beat checked against \
         `Quantizer::quantize_vector`): input elements per cycle; latency, a partition's first input beat to its beat.\n"
    )
    .unwrap();
    rate_header(md, "K beats");
    for name in ["hack_qk_dot", "hack_deq_dot"] {
        if let Some(info) = need(md, name) {
            use tb::hack_qk_dot as hq;
            let p = hq::params_of(&Model::new(info));
            rate_rows(md, rates, info, "K codes/cycle", p.partition as f64, &p.partition.to_string(), |st| {
                let mut m = Model::new(info);
                m.reset(1);
                let mut c = hq::case_of(&p, 1, 1, 0x6b7, [Stall::Never, st.clone(), st.clone()]);
                let t = c.groups[0].tokens[0].clone();
                c.groups[0].tokens = (0..200).map(|_| t.clone()).collect();
                let r = hq::run(&mut m, &p, &c)?;
                Flow::of(&r.k_cycles, r.first_latency)
            });
        }
    }
    // the quantizer: its own driver, every partition beat (codes, meta, sum) checked
    for name in ["hack_quantizer", "hack_quantizer_q8_st"] {
        if let Some(info) = need(md, name) {
            use tb::hack_quantizer as hz;
            let p = hz::params_of(&Model::new(info));
            rate_rows(md, rates, info, "input elements/cycle", p.lanes as f64, &p.lanes.to_string(), |st| {
                let mut m = Model::new(info);
                m.reset(1);
                let r = hz::run(&mut m, &p, &hz::case_of(&p, 64, 0x6b9, Stall::Never, st.clone()))?;
                Flow::of(&r.in_cycles, r.first_latency)
            });
        }
    }
    // the channel axis (V): two passes per block, codes and sums checked
    if let Some(info) = need(md, "hack_quantizer_ch") {
        use tb::hack_quantizer_channel as hc;
        let p = tb::hack_quantizer::params_of(&Model::new(info));
        rate_rows(md, rates, info, "input elements/cycle (two passes)", p.lanes as f64, &p.lanes.to_string(), |st| {
            let mut m = Model::new(info);
            m.reset(1);
            let r = hc::run(&mut m, &p, &hc::case_of(&p, 8, 0x6bb, Stall::Never, st.clone()))?;
            Flow::of(&r.in_cycles, r.word_latency)
        });
    }
    writeln!(md).unwrap();

    // primitives
    writeln!(md, "### Primitives\n").unwrap();
    writeln!(
        md,
        "Each at its default parameters (and `div-const` also in its Mersenne form, `div_const_k15_m`): \
         5,000 random operand sets presented back to back (`in_valid` high where the unit has it), `en` \
         always high or low at random half the time. After every clock edge the output is compared with a \
         model of the stages (which advance with `en`) holding the golden values: `mul-pipe` a x b, `div-round` `sim`'s rounding division (`GroupParams::code`, spec §5.3) saturated to \
         Q bits, `div-const` ceil(D / K) (spec §5.4; `sim` has no stand-alone model of it), `fp16-convert` \
         `sim::fp16::round_down`/`round_up`/`round_nearest_even` (and its `x -> u`, through the same stages, \
         against `sim::fp16::to_units`). Results/cycle counts the results reaching the output.\n"
    )
    .unwrap();
    rate_header(md, "results");
    for name in ["div_round_q5", "div_const_k15_s6", "div_const_k15_m", "mul_pipe32", "fp16_convert"] {
        let Some(info) = need(md, name) else { continue };
        rate_rows(md, rates, info, "results/cycle", 1.0, "1", |st| prim_run(info, 5000, st, false).map(|r| r.0));
    }
    writeln!(md).unwrap();

    // summary
    writeln!(md, "### Summary: every unit\n").unwrap();
    writeln!(md, "Sections 2 to 4 in one table (RTL and, where built, netlist models).\n").unwrap();
    writeln!(
        md,
        "| unit | model | measure | continuous | 50% random stalls | latency (cycles) | manifest latency | outputs |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---:|---:|---:|---:|---|").unwrap();
    for r in rates.iter() {
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.unit, r.model, r.what, r.cont, r.stalled, r.latency, r.manifest, r.checked
        )
        .unwrap();
    }
    writeln!(md).unwrap();
}

// ------------------------------------------------- Verilator vs Icarus

/// The smallest RTL model of `unit` (by emitted Verilog size).
fn smallest_rtl(unit: &str) -> Option<&'static ModelInfo> {
    models::of_unit(unit, false).into_iter().min_by_key(|m| std::fs::metadata(m.source).map_or(u64::MAX, |md| md.len()))
}

/// Light random stalls at the stream ends, as in tb/tests/icarus.rs.
const LIGHT: Stall = Stall::Random { p: 48 };

/// A recorded run of `info` from reset, by its unit's driver (every output
/// checked against `sim`), about `target` cycles long; and what it was.
fn recorded_run(info: &'static ModelInfo, target: u64) -> Result<(Recording, String), String> {
    let t = target as usize;
    let rec = |r: Option<Recording>| r.ok_or_else(|| "no recording".to_string());
    match info.unit {
        "oaken-quantizer" | "oaken-dequantizer" => {
            let mut m = Model::new(info);
            let p = params_of(&m);
            // a quarter of the cycles: Icarus runs these at a few hundred cycles/s
            let n = (t / 4 / p.beats()).max(2);
            let (writes, toks) = oaken_stream(&p, n, 0x1ca7);
            m.record();
            m.reset(1);
            if info.unit == "oaken-quantizer" {
                drive_quantizer(&mut m, &writes, &toks, &LIGHT, &LIGHT, 3)?;
            } else {
                let recs = records_of(&p, &writes, &toks);
                drive_dequantizer(&mut m, &writes, &recs, &DStalls { d: LIGHT, s: LIGHT, out: LIGHT }, 3)?;
            }
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} tokens, `sim`-checked driver, light stalls")))
        }
        "oaken-mmu" => {
            let (_, r) = mmu_run(info, &LIGHT, true)?;
            Ok((rec(r)?, "writes then reads, `sim`-checked driver, light rsp stalls".into()))
        }
        "titanus-pruner" => {
            let p = tb::titanus_pruner::params_of(&Model::new(info));
            let n = (t / (p.channels / p.lanes)).max(2);
            let (_, r) = pruner_run(info, n, &LIGHT, true)?;
            Ok((rec(r)?, format!("{n} tokens, `sim`-checked driver, light output stalls")))
        }
        "titanus-dequantizer" => {
            let p = tb::titanus_dequantizer::params_of(&Model::new(info));
            let n = (t / (p.channels / p.lanes)).max(2);
            let (_, r) = tdq_run(info, n, &LIGHT, true)?;
            Ok((rec(r)?, format!("{n} tokens, `sim`-checked driver, light output stalls")))
        }
        "titanus-quantizer" => {
            // sequences of random length: add them until the run is long enough
            let mut seqs = 2;
            loop {
                let (cycles, r) = tq_case_run(info, seqs, true)?;
                if cycles >= target / 2 || seqs >= 64 {
                    return Ok((rec(r)?, format!("{seqs} sequences of `case_of`, `sim`-checked driver, light stalls")));
                }
                seqs *= 2;
            }
        }
        "kivi-dequantizer" => {
            use tb::kivi_dequantizer as kd;
            let mut m = Model::new(info);
            let p = kd::params_of(&m);
            let n = (t / p.beats()).max(2);
            let c = kd::case_of(&p, n, 0x6b1, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            kd::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} groups, `sim`-checked driver, light stalls")))
        }
        "kivi-quantizer" if tb::kivi_quantizer::params_of_info(info).axis == sim::kivi::params::Axis::Channel => {
            use tb::kivi_quantizer_channel as kc;
            let mut m = Model::new(info);
            let p = tb::kivi_quantizer::params_of(&m);
            let n = (t / (4 * p.group * kc::rows(&p))).max(1);
            let c = kc::case_of(&p, n, 0x6b6, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            kc::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} blocks (two passes each), `sim`-checked driver, light stalls")))
        }
        "kivi-quantizer" => {
            use tb::kivi_quantizer as kq;
            let mut m = Model::new(info);
            let p = kq::params_of(&m);
            let n = (t / p.beats()).max(2);
            let c = kq::case_of(&p, n, 0x6b2, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            kq::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} tokens, `sim`-checked driver, light stalls")))
        }
        "packkv-quantizer" => {
            use tb::packkv_quantizer as pq;
            let mut m = Model::new(info);
            let p = pq::params_of(&m);
            let n = (t / p.beats()).max(2);
            let c = pq::case_of(&p, n, 0x6b3, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            pq::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} tokens, `sim`-checked driver, light stalls")))
        }
        "packkv-decoder" => {
            use tb::packkv_decoder as pd;
            let mut m = Model::new(info);
            let p = pd::params_of(&m);
            let n = (t / (2 * p.beats())).max(1);
            let c = pd::case_of(&p, n, 0x6b4, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            pd::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} transfers of K/V blocks, `sim`-checked driver, light stalls")))
        }
        "packkv-encoder" => {
            use tb::packkv_encoder as pe;
            let mut m = Model::new(info);
            let p = pe::params_of(&m);
            let n = (t / (p.block * p.beats())).max(2);
            let c = pe::case_of(&p, n, 0x6b4, LIGHT, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            pe::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} block pairs, `sim`-checked driver, light stalls")))
        }
        "hack-qk-dot" | "hack-deq-dot" => {
            use tb::hack_qk_dot as hq;
            let mut m = Model::new(info);
            let p = hq::params_of(&m);
            let n = (t / (4 * p.parts())).max(2);
            let c = hq::case_of(&p, 2, n, 0x6b8, [LIGHT, LIGHT, LIGHT]);
            m.record();
            m.reset(1);
            hq::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("2 Q loads, up to {n} tokens each, `sim`-checked driver, light stalls")))
        }
        "hack-quantizer" if tb::hack_quantizer_channel::is_channel(info) => {
            use tb::hack_quantizer_channel as hc;
            let mut m = Model::new(info);
            let p = tb::hack_quantizer::params_of(&m);
            let n = (t / (4 * p.partition * p.head_dim / p.lanes)).max(1);
            let c = hc::case_of(&p, n, 0x6bc, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            hc::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} V blocks (two passes each), `sim`-checked driver, light stalls")))
        }
        "hack-quantizer" => {
            use tb::hack_quantizer as hz;
            let mut m = Model::new(info);
            let p = hz::params_of(&m);
            let n = (t / (p.head_dim / p.lanes)).max(2);
            let c = hz::case_of(&p, n, 0x6ba, LIGHT, LIGHT);
            m.record();
            m.reset(1);
            hz::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} vectors, `sim`-checked driver, light stalls")))
        }
        "hack-pv-dot" => {
            use tb::hack_pv_dot as hp;
            let mut m = Model::new(info);
            let p = hp::params_of(&m);
            let n = (t / (2 * p.head_dim)).clamp(2, 8);
            let c = hp::case_of(&p, n, 0x6ba, [LIGHT, LIGHT, LIGHT, LIGHT, LIGHT]);
            m.record();
            m.reset(1);
            hp::run(&mut m, &p, &c)?;
            m.ticks(2);
            Ok((rec(m.take_recording())?, format!("{n} queries, `sim`-checked driver, light stalls")))
        }
        "zero-remove-shifter" | "zero-insert-shifter" => {
            let (_, r) = shifter_run(info, t, &LIGHT, true)?;
            Ok((rec(r)?, format!("{t} vectors, `tb::pipe` checker, light output stalls")))
        }
        _ => {
            let (_, r) = prim_run(info, t, &LIGHT, true)?;
            Ok((rec(r)?, format!("{t} operand sets, checked, light `en` stalls")))
        }
    }
}

/// Verilator on the recorded inputs: a fresh model (same initial state as
/// the recorded one) replays them once comparing every output with the
/// recording, then again, timed, for at least `budget`.
fn verilator_replay(info: &'static ModelInfo, rec: &Recording, budget: Duration) -> (f64, Result<(), String>) {
    let ins: Vec<usize> =
        (0..info.ports.len()).filter(|&i| info.ports[i].dir == Dir::In && info.ports[i].name != "clock").collect();
    let outs: Vec<usize> = (0..info.ports.len()).filter(|&i| info.ports[i].dir == Dir::Out).collect();
    let mut m = Model::new(info);
    let ids: Vec<PortId> = (0..info.ports.len()).map(|i| m.port(info.ports[i].name)).collect();
    let mut check = Ok(());
    for (c, row) in rec.cycles.iter().enumerate() {
        for &i in &ins {
            m.set_words(ids[i], &row[i]);
        }
        m.eval();
        if check.is_ok() && c > 0 {
            if let Some(&i) = outs.iter().find(|&&i| m.get_words(ids[i]) != row[i]) {
                check = Err(format!("cycle {c}: {} differs from the recording", info.ports[i].name));
            }
        }
        m.tick();
    }
    let mut m = Model::new(info);
    let start = Instant::now();
    let mut cycles = 0u64;
    while cycles == 0 || start.elapsed() < budget {
        for row in &rec.cycles {
            for &i in &ins {
                m.set_words(ids[i], &row[i]);
            }
            m.tick();
        }
        cycles += rec.cycles.len() as u64;
    }
    (cycles as f64 / start.elapsed().as_secs_f64(), check)
}

fn icarus_section(args: &Args, units: &[String], md: &mut String) {
    writeln!(md, "## 5. Verilator vs Icarus Verilog\n").unwrap();
    let have = |t: &str| first_line(t, "-V").is_some();
    if !have("iverilog") || !have("vvp") {
        writeln!(md, "Skipped: `iverilog`/`vvp` are not installed (`make deps` or `apt-get install iverilog`).\n")
            .unwrap();
        return;
    }
    let iv = first_line("iverilog", "-V")
        .unwrap_or_default()
        .trim_start_matches("Icarus Verilog version ")
        .trim_end_matches(" ()")
        .to_string();
    writeln!(
        md,
        "Per unit, its smallest RTL model (by emitted Verilog size; every RTL model with `--icarus-all`), in one run: a run of about {} cycles (a \
         quarter of that for the Oaken engines, which Icarus runs at a few hundred cycles/s) is recorded under Verilator (every port at every cycle) through the unit's driver, which checks the \
         outputs against `sim` as it goes (the primitives and shifters: the section-4 runs). The same input \
         vectors are then replayed (a) under Verilator on a fresh model, once comparing every output with the \
         recording, then repeated for at least 0.3 s timing the cycle loop, and (b) under Icarus {iv} with \
         `tb::icarus::replay` (`iverilog -g2012`, a generated testbench reading the vectors with `$readmemh`, \
         the cycle loop timed from its first cycle to its last, compiling and loading not counted), which \
         compares every output at every cycle after reset with the recording and counts any X or Z bit; \
         a replay that reaches no new 64-cycle mark for 120 s is killed and reported. \
         Outputs: Icarus against Verilator.\n",
        args.icarus_cycles
    )
    .unwrap();
    writeln!(
        md,
        "| unit | model | stimulus | cycles | Verilator cycles/s | Icarus cycles/s | Verilator / Icarus | outputs | iverilog compile |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---:|---:|---:|---:|---|---:|").unwrap();
    let dir = std::env::temp_dir().join(format!("kvforge-bench-icarus-{}", std::process::id()));
    for unit in units {
        let infos: Vec<&'static ModelInfo> = if args.icarus_all {
            models::of_unit(unit, false)
        } else {
            smallest_rtl(unit).into_iter().collect()
        };
        if infos.is_empty() {
            writeln!(md, "| {unit} | - | no RTL model in tb/models.toml ||||||").unwrap();
        }
        for info in infos {
            icarus_row(args, unit, info, &dir, md);
        }
    }
    // left only if a replay failed: its folder is kept for a rerun
    let _ = std::fs::remove_dir(&dir);
    writeln!(md).unwrap();
}

/// Section 5's row of one model.
fn icarus_row(args: &Args, unit: &str, info: &'static ModelInfo, dir: &std::path::Path, md: &mut String) {
    eprintln!("bench: Verilator vs Icarus on {}", info.name);
    let (rec, what) = match recorded_run(info, args.icarus_cycles) {
        Ok(r) => r,
        Err(e) => {
            writeln!(md, "| {unit} | {} | recorded run failed: {} ||||||", info.name, cell(&e)).unwrap();
            return;
        }
    };
    let (vl, vl_check) = verilator_replay(info, &rec, Duration::from_millis(300));
    let sub = dir.join(info.name);
    match icarus::replay(info, &rec, &sub) {
        Ok(r) => {
            let outputs = match (&vl_check, r.ok()) {
                (Ok(()), true) => format!("match ({} cycles compared, no X/Z)", r.compared),
                (Ok(()), false) => {
                    let first = |v: &[icarus::Failure]| {
                        v.first().map_or(String::new(), |f| {
                            format!(
                                ", first at cycle {} on `{}`: `{}` for `{}`",
                                f.cycle, f.port, f.got, f.expected
                            )
                        })
                    };
                    let listed: Vec<&icarus::Failure> = r.first_mismatches.iter().chain(&r.first_xz).collect();
                    let idle = listed.iter().filter(|f| valid_low(info, &rec, f) == Some(true)).count();
                    format!(
                        "**{} mismatches{}; {} X/Z values{}**; of the {} listed (the first {} of each kind), {} \
                         while the port's valid is low (don't-care)",
                        r.mismatches,
                        first(&r.first_mismatches),
                        r.xz,
                        first(&r.first_xz),
                        listed.len(),
                        icarus::SHOW,
                        idle
                    )
                }
                (Err(e), _) => format!("**Verilator replay: {e}**"),
            };
            writeln!(
                md,
                "| {unit} | {} | {what} | {} | {} | {} | {:.0}x | {outputs} | {:.1} s |",
                info.name,
                r.cycles,
                si(vl),
                si(r.cycles_per_sec()),
                vl / r.cycles_per_sec(),
                r.compile_secs
            )
            .unwrap();
            let _ = std::fs::remove_dir_all(&sub);
        }
        Err(e) => {
            let first = e.lines().take(4).collect::<Vec<_>>().join(" ");
            writeln!(
                md,
                "| {unit} | {} | {what} | {} | {} | Icarus failed: {} | - | - | - |",
                info.name,
                rec.cycles.len(),
                si(vl),
                cell(&first)
            )
            .unwrap();
        }
    }
}

/// Whether the valid of a failing output's stream (`out_data` ->
/// `out_valid`, `rec_codes` -> `rec_valid`) was low at that cycle in the
/// recording; None when the port has no such valid.
fn valid_low(info: &ModelInfo, rec: &Recording, f: &icarus::Failure) -> Option<bool> {
    let stream = f.port.split('_').next()?;
    let v = format!("{stream}_valid");
    if f.port == v {
        return None;
    }
    let i = info.port_index(&v)?;
    Some(rec.cycles.get(f.cycle as usize)?[i][0] & 1 == 0)
}

// ------------------------------------------------------- rtl-gen emit time

fn emit_section(rtl_gen: &Path, units: &[String], md: &mut String) {
    writeln!(md, "## 6. rtl-gen emit time\n").unwrap();
    writeln!(
        md,
        "Wall time of `{} emit <unit> -o <tmp>` at default parameters (elaboration, Verilog, manifest, SDC, \
         synthesis scripts), one run per unit, one at a time.\n",
        rtl_gen.display()
    )
    .unwrap();
    writeln!(md, "| unit | wall time | files | Verilog lines |").unwrap();
    writeln!(md, "|---|---:|---:|---:|").unwrap();
    let dir = std::env::temp_dir().join(format!("kvforge-bench-emit-{}", std::process::id()));
    let mut total = 0.0;
    for unit in units {
        eprintln!("bench: rtl-gen emit {unit}");
        let out = dir.join(unit);
        let start = Instant::now();
        let r = Command::new(rtl_gen).args(["emit", unit, "-o"]).arg(&out).output();
        let secs = start.elapsed().as_secs_f64();
        match r {
            Ok(o) if o.status.success() => {
                total += secs;
                let files: Vec<String> = String::from_utf8_lossy(&o.stdout).lines().map(String::from).collect();
                let lines: usize = files
                    .iter()
                    .filter(|f| f.ends_with(".v"))
                    .filter_map(|f| std::fs::read_to_string(f).ok())
                    .map(|t| t.lines().count())
                    .sum();
                writeln!(md, "| {unit} | {secs:.2} s | {} | {lines} |", files.len()).unwrap();
            }
            Ok(o) => {
                writeln!(md, "| {unit} | failed: {} |||", cell(String::from_utf8_lossy(&o.stderr).trim())).unwrap()
            }
            Err(e) => writeln!(md, "| {unit} | failed: {e} |||").unwrap(),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    writeln!(md, "\nAll units: {total:.1} s.\n").unwrap();
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
        // the Verilator the models are built with (tb::build::tools), not the one on PATH
        tb::build::tools::verilator().map_or_else(
            |e| format!("no Verilator ({e})"),
            |v| format!("models by `{}` ({})", v.exe.display(), v.version)
        ),
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

    let rtl_gen = rtl_gen_path(&args);
    let units = rtl_gen_units(&rtl_gen);
    let mut rates = Vec::new();
    let mut times = Vec::new();
    let only = args.sections.clone();
    let mut timed = |name: &str, f: &mut dyn FnMut()| {
        if !only.contains(&(name.as_bytes()[0] - b'0')) {
            return;
        }
        let t = Instant::now();
        f();
        times.push((name.to_string(), t.elapsed().as_secs_f64()));
    };
    timed("1. speed", &mut || speed_section(&args, &units, &mut md));
    timed("2. Oaken quantizer", &mut || quantizer_section(&args, &mut md, &mut rates));
    timed("3. Oaken dequantizer", &mut || dequantizer_section(&args, &mut md, &mut rates));
    timed("4. other units", &mut || units_section(&args, &mut md, &mut rates));
    let list = units.clone().unwrap_or_else(|_| {
        models::specs().iter().map(|s| s.unit.clone()).fold(vec![], |mut v, u| {
            if !v.contains(&u) {
                v.push(u);
            }
            v
        })
    });
    timed("5. Verilator vs Icarus", &mut || icarus_section(&args, &list, &mut md));
    timed("6. rtl-gen emit", &mut || emit_section(&rtl_gen, &list, &mut md));
    timed("7. HACK switching activity", &mut || hack_activity(&mut md));
    let parts: Vec<String> = times.iter().map(|(n, s)| format!("{n} {s:.0} s")).collect();
    writeln!(md, "Bench time: {:.0} s ({}).\n", started.elapsed().as_secs_f64(), parts.join(", ")).unwrap();

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
