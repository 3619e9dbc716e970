//! The model cache from the command line:
//!
//! ```text
//! cargo run --release -p tb --bin models -- build [--times] [NAME...]   # default: every model of tb/models.toml
//! cargo run --release -p tb --bin models -- list [--synth | --prove fast|slow | --make KEY]
//! cargo run --release -p tb --bin models -- where
//! ```
//!
//! `build` fills the cache before the tests run (biggest models first, all
//! cores busy), and prints what it found and what it built, with times,
//! and the recorded build time of the whole list (cached models included:
//! what an empty cache would spend; `--times` lists it model by model).
//! Tests build any model they lack themselves, so this is an optimisation,
//! not a requirement. `--trace` builds the VCD-capable variants instead.
//! `list` with a tag prints the tagged names on one line: the Makefile's
//! lists of models come from there.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::time::Instant;
use tb::build::{self, jobs, Level, Outcome};
use tb::models::{self, Prove};

#[derive(Parser)]
#[command(about = "Build and list the co-simulation models of tb/models.toml")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build models into the cache (all of them if no name is given).
    Build {
        names: Vec<String>,
        /// Build the VCD-capable variants.
        #[arg(long)]
        trace: bool,
        /// Print every model's recorded build time (cached ones included),
        /// longest first: what an empty cache would spend on each.
        #[arg(long)]
        times: bool,
    },
    /// List the models (name, unit, parameters), or with a tag only the
    /// names of the tagged models, space-separated, unit by unit in
    /// `rtl-gen list` order, then in list order.
    List {
        /// Models with `synth = true` (`make synth`).
        #[arg(long, conflicts_with_all = ["prove", "make"])]
        synth: bool,
        /// Models with `prove = "fast"` (`make prove`) or `"slow"`.
        #[arg(long, value_parser = ["fast", "slow"], conflicts_with = "make")]
        prove: Option<String>,
        /// A value of the `[make]` table: prove-mutant, prove-sim-mutant,
        /// prove-class-mutant, synth-macros-only or prove-macros-fast.
        #[arg(long, value_name = "KEY", value_parser = models::MakeLists::KEYS)]
        make: Option<String>,
    },
    /// Build the OSU018 netlists of models (`NAME_net`) and print, per
    /// model, its cache folder (`<module>.osu018.v`, `<module>.area.txt`).
    Netlist { names: Vec<String> },
    /// Print the cache folder.
    Where,
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::List { synth, prove, make } => list(synth, prove, make),
        Cmd::Where => {
            println!("{}", models::store().root().display());
            ExitCode::SUCCESS
        }
        Cmd::Build { names, trace, times } => build_all(names, trace, times),
        Cmd::Netlist { names } => {
            for n in names {
                let r = models::resolve(&n)
                    .and_then(|(spec, _)| models::request(spec, Level::Netlist, false))
                    .and_then(|r| build::netlist(models::store(), r.source, r.period_ps));
                match r {
                    Ok(net) => println!("{n} {} {}", net.module, net.dir.display()),
                    Err(e) => {
                        eprintln!("models: {n}: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            ExitCode::SUCCESS
        }
    }
}

fn list(synth: bool, prove: Option<String>, make: Option<String>) -> ExitCode {
    if let Some(key) = make {
        // the parser allows only the table's keys
        println!("{}", models::make_lists().get(&key).expect("a [make] key"));
        return ExitCode::SUCCESS;
    }
    let prove = prove.map(|p| if p == "fast" { Prove::Fast } else { Prove::Slow });
    if synth || prove.is_some() {
        // grouped by unit, as `rtl-gen list` orders them: the reports made
        // from these lists (ppa.md) read unit by unit
        let rank = |unit: &str| rtl_gen::units::UNITS.iter().position(|u| u.name == unit).unwrap_or(usize::MAX);
        let mut tagged: Vec<&models::Spec> =
            models::specs().iter().filter(|s| if synth { s.synth } else { s.prove == prove }).collect();
        tagged.sort_by_key(|s| rank(&s.unit));
        let names: Vec<&str> = tagged.iter().map(|s| s.name.as_str()).collect();
        println!("{}", names.join(" "));
        return ExitCode::SUCCESS;
    }
    for s in models::specs() {
        let net = if s.netlist { format!(" (+ {}_net)", s.name) } else { String::new() };
        println!("{:<28} {:<22} {}{net}", s.name, s.unit, toml::to_string(&s.params).unwrap().replace('\n', " "));
    }
    ExitCode::SUCCESS
}

fn build_all(names: Vec<String>, trace: bool, times: bool) -> ExitCode {
    let start = Instant::now();
    let names = if names.is_empty() { models::names() } else { names };
    // Emission first (cached), to know each model's size; then the models,
    // netlists and large sources first so the long builds start early.
    let resolved = jobs::map(&names, |n| {
        models::resolve(n).and_then(|(spec, level)| models::request(spec, level, trace)).map(|r| (n.clone(), r))
    });
    let mut reqs = Vec::new();
    for r in resolved {
        match r {
            Ok(r) => reqs.push(r),
            Err(e) => {
                eprintln!("models: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let weight = |r: &build::Request| r.source.verilog.len() * if r.level == Level::Netlist { 8 } else { 1 };
    reqs.sort_by_key(|(_, r)| std::cmp::Reverse(weight(r)));
    let t_emit = start.elapsed().as_secs_f64();
    // netlist models run on tb::netsim: only the netlist itself is built
    let results = jobs::map(&reqs, |(n, r)| {
        let t = Instant::now();
        let res = match r.level {
            Level::Rtl => build::ensure(models::store(), r).map(|b| (b.outcome, b.info.key, b.info.seconds)),
            Level::Netlist => build::netlist(models::store(), r.source, r.period_ps).map(|n| {
                let secs = std::fs::read_to_string(n.dir.join("seconds.txt")).ok().and_then(|s| s.trim().parse().ok());
                (n.outcome, n.key, vec![("yosys osu018".to_string(), secs.unwrap_or(0.0))])
            }),
        };
        (n.clone(), res, t.elapsed().as_secs_f64())
    });
    let (mut hits, mut built, mut failed) = (0, 0, 0);
    // recorded seconds of each build job (its wall time, as built: beside
    // other jobs it is more than its CPU time) per level (RTL, netlist)
    let mut recorded = [0.0f64; 2];
    let mut per_model = Vec::new();
    for ((n, r, secs), (_, req)) in results.iter().zip(&reqs) {
        if let Ok((_, _, seconds)) = r {
            let s: f64 = seconds.iter().map(|(_, t)| t).sum();
            recorded[usize::from(req.level == Level::Netlist)] += s;
            per_model.push((s, n.as_str()));
        }
        match r {
            Ok((Outcome::Hit, _, _)) => hits += 1,
            Ok((_, key, seconds)) => {
                built += 1;
                let steps: Vec<String> = seconds.iter().map(|(s, t)| format!("{s} {t:.1}s")).collect();
                println!("built {n:<28} {secs:6.1} s  ({})  {}", steps.join(", "), &key[..12]);
            }
            Err(e) => {
                failed += 1;
                eprintln!("FAILED {n}: {e}");
            }
        }
    }
    if times {
        per_model.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (s, n) in &per_model {
            println!("{s:8.1} s  {n}");
        }
    }
    println!(
        "models: recorded build time of the list {:.0} job-s on RTL, {:.0} job-s on netlists (an empty cache's cost)",
        recorded[0], recorded[1]
    );
    println!(
        "models: {} in the list, {hits} in the cache, {built} built, {failed} failed; {:.1} s ({t_emit:.1} s emission) \
         on {} jobs; cache {}",
        results.len(),
        start.elapsed().as_secs_f64(),
        jobs::count(),
        models::store().root().display()
    );
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
