//! `rtl-gen`: lists kvforge units and emits their RTL and collateral.

use clap::{Parser, Subcommand};
use rtl_gen::flow::{self, Flow};
use rtl_gen::{emit, units, EmitOptions, GenError};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "rtl-gen", version, about = "kvforge RTL generator")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the units this generator can emit.
    List,
    /// List a unit's parameters: default, allowed values, meaning, and the
    /// rules between them.
    Params {
        /// Unit name, as shown by `rtl-gen list`.
        unit: String,
    },
    /// Emit a unit: Verilog, filelist, JSON manifest, SDC and synthesis scripts
    /// (or, with --flow, a design folder for OpenROAD-flow-scripts or FuseSoC).
    Emit(EmitArgs),
}

#[derive(clap::Args)]
struct EmitArgs {
    /// Unit name, as shown by `rtl-gen list`.
    unit: String,
    /// Output folder (created if missing).
    #[arg(short = 'o', long = "out", default_value = ".")]
    out: PathBuf,
    /// TOML file of parameters (flat keys, kebab-case); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, value_name = "N", help = flag_help("head-dim"))]
    head_dim: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("lanes"))]
    lanes: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("inlier-bits"))]
    inlier_bits: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("outlier-bits"))]
    outlier_bits: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("layers"))]
    layers: Option<i64>,
    #[arg(long, value_name = "plain|shifted", help = flag_help("middle-mode"))]
    middle_mode: Option<String>,
    #[arg(long, value_name = "N", help = flag_help("width"))]
    width: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("pipeline"))]
    pipeline: Option<i64>,
    #[arg(long, value_name = "N", help = flag_help("code-bits"))]
    code_bits: Option<i64>,
    /// Any other parameter, as KEY=VALUE (VALUE read as TOML); `rtl-gen
    /// params UNIT` lists them.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Target clock period for the SDC and synthesis, ns.
    #[arg(long, default_value_t = 4.0)]
    clock_ns: f64,
    /// Instead of the usual files, a design folder for another flow:
    /// `orfs` (OpenROAD-flow-scripts config.mk and constraint.sdc) or
    /// `fusesoc` (a CAPI2 core with a Verilator lint target).
    #[arg(long, value_name = "orfs|fusesoc")]
    flow: Option<String>,
    /// ORFS platform for `--flow orfs`: sky130hd (default) or nangate45.
    #[arg(long, value_name = "NAME")]
    platform: Option<String>,
}

/// Help of a parameter flag: the units that have the parameter, from their
/// tables (its meaning and range differ between units).
fn flag_help(key: &str) -> String {
    let users: Vec<&str> = units::UNITS
        .iter()
        .filter(|u| units::param_table(u.name).is_ok_and(|t| t.defs.iter().any(|d| d.name == key)))
        .map(|u| u.name)
        .collect();
    format!("Parameter of {}: meaning and range in `rtl-gen params UNIT`", users.join(", "))
}

/// The `params` table: one line per parameter, then the rules.
fn params_text(unit: &str) -> Result<String, GenError> {
    let info = units::UNITS.iter().find(|u| u.name == unit);
    let t = units::param_table(unit)?;
    let mut out = format!("{unit} (spec {}): {} parameters\n", info.map_or("-", |u| u.spec), t.defs.len());
    if !t.defs.is_empty() {
        let rows: Vec<[String; 4]> = t
            .defs
            .iter()
            .map(|d| [d.name.to_string(), d.default.to_string(), d.allowed.to_string(), d.doc.to_string()])
            .collect();
        let head = ["parameter", "default", "allowed", "meaning"].map(String::from);
        let w: Vec<usize> =
            (0..3).map(|i| rows.iter().chain([&head]).map(|r| r[i].len()).max().unwrap_or(0)).collect();
        for r in [&head].into_iter().chain(&rows) {
            out.push_str(&format!("  {:<w0$}  {:<w1$}  {:<w2$}  {}\n", r[0], r[1], r[2], r[3], w0 = w[0], w1 = w[1], w2 = w[2]));
        }
    }
    if !t.rules.is_empty() {
        out.push_str("rules:\n");
        for r in &t.rules {
            out.push_str(&format!("  {r}\n"));
        }
    }
    Ok(out)
}

fn params(a: &EmitArgs) -> Result<toml::Table, GenError> {
    let mut t = match &a.config {
        Some(f) => {
            let s = std::fs::read_to_string(f).map_err(|e| GenError(format!("cannot read {}: {e}", f.display())))?;
            s.parse::<toml::Table>().map_err(|e| GenError(format!("{}: {}", f.display(), e.message())))?
        }
        None => toml::Table::new(),
    };
    let ints = [
        ("head-dim", a.head_dim),
        ("lanes", a.lanes),
        ("inlier-bits", a.inlier_bits),
        ("outlier-bits", a.outlier_bits),
        ("layers", a.layers),
        ("width", a.width),
        ("pipeline", a.pipeline),
        ("code-bits", a.code_bits),
    ];
    for (k, v) in ints {
        if let Some(v) = v {
            t.insert(k.into(), toml::Value::Integer(v));
        }
    }
    if let Some(m) = &a.middle_mode {
        t.insert("middle-mode".into(), toml::Value::String(m.clone()));
    }
    for kv in &a.set {
        let (k, v) = kv.split_once('=').ok_or_else(|| GenError(format!("--set expects KEY=VALUE, got '{kv}'")))?;
        let v: toml::Value = format!("x = {v}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("x"))
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        t.insert(k.trim().to_string(), v);
    }
    Ok(t)
}

fn run(cli: Cli) -> Result<(), GenError> {
    match cli.cmd {
        Cmd::List => {
            println!("{:<22} {:<8} {}", "unit", "spec", "summary");
            for u in units::UNITS {
                println!("{:<22} {:<8} {}", u.name, u.spec, u.summary);
            }
            Ok(())
        }
        Cmd::Params { unit } => {
            print!("{}", params_text(&unit)?);
            Ok(())
        }
        Cmd::Emit(a) => {
            let flow = match (&a.flow, &a.platform) {
                (Some(f), p) => Some(Flow::parse(f, p.as_deref())?),
                (None, Some(_)) => return Err(GenError("--platform applies to --flow orfs only".into())),
                (None, None) => None,
            };
            let t = params(&a)?;
            let e = emit(&a.unit, &t, &EmitOptions { clock_ns: a.clock_ns })?;
            let files = match flow {
                Some(f) => flow::files(&e, f)?,
                None => e.files,
            };
            std::fs::create_dir_all(&a.out)
                .map_err(|err| GenError(format!("cannot create {}: {err}", a.out.display())))?;
            for (name, text) in &files {
                let p = a.out.join(name);
                std::fs::write(&p, text).map_err(|err| GenError(format!("cannot write {}: {err}", p.display())))?;
                println!("{}", p.display());
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{e}");
                return ExitCode::SUCCESS;
            }
            let msg = e.render().to_string();
            eprintln!("rtl-gen: {}", msg.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtl-gen: error: {e}");
            ExitCode::from(2)
        }
    }
}
