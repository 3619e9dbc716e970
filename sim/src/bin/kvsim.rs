//! kvsim: synthetic KV sets, offline threshold profiling and compression
//! metrics for the Oaken engine (docs/spec.md §6-§8), KIVI (§13), PackKV (§14),
//! HACK (§15) and Titanus (§11), and all of them side by side (§16).

use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand};
use sim::kvgen::{generate, KvGenConfig};
use sim::kvset::KvSet;
use sim::metrics::measure;
use sim::oaken::params::{MiddleMode, OakenParams};
use sim::oaken::profile::{profile, Ratios, ThresholdFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "kvsim", version, about = "KV-cache tools: generate, profile, measure (Oaken, KIVI, PackKV, HACK, Titanus), compare")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a synthetic KV set (spec §7) as .npy, shape (runs, layers, 2, tokens, head_dim)
    Gen(GenArgs),
    /// Profile per-layer K/V thresholds from a KV set (spec §6)
    Profile(ProfileArgs),
    /// Quantize and decode a KV set, report effective bits and error (spec §8)
    Metrics(MetricsArgs),
    /// MMU fragmentation and burst efficiency over mixes of sequence lengths (spec §10.13)
    MmuMetrics(MmuMetricsArgs),
    /// KIVI over a KV set: bits per element, SQNR, departure from the authors' FP16 chain (spec §13.11)
    Kivi(KiviArgs),
    /// PackKV over a KV set: bits per element both ways, ratio vs FP16, SQNR, the authors' chain (spec §14.11)
    Packkv(PackKvArgs),
    /// HACK over a KV set: Eq. 4 attention on codes against exact attention and the dequantize-first baseline (spec §15.13)
    Hack(HackArgs),
    /// Titanus CPQ over an INT8 (or converted FP16) KV set: bytes moved, SQNR, HQE levels (spec §11.11)
    Titanus(TitanusArgs),
    /// Every scheme side by side on one KV set: stored bits, SQNR, attention error, hardware cost (spec §16)
    Compare(CompareArgs),
    /// Titanus pruning thresholds reaching a target pruning ratio per layer and K/V (spec §11.10)
    TitanusProfile(TitanusProfileArgs),
}

#[derive(Args)]
struct KiviArgs {
    /// KV set (.npy, <f2 or <f4), as for `metrics`
    #[arg(short, long)]
    input: PathBuf,
    /// Elements per head; heads x head-dim must divide the set's last
    /// dimension, each row being cut into vectors of that length (default:
    /// the set's last dimension over heads)
    #[arg(long)]
    head_dim: Option<usize>,
    /// Heads per token vector
    #[arg(long, default_value_t = 1)]
    heads: usize,
    /// Group size G: channels per V group, tokens per K group
    #[arg(long, default_value_t = 32)]
    group: usize,
    /// Code width for K and V (2, 3, 4 or 8)
    #[arg(long, default_value_t = 2)]
    bits: u32,
    /// Code width for K only (overrides --bits)
    #[arg(long)]
    bits_k: Option<u32>,
    /// Code width for V only (overrides --bits)
    #[arg(long)]
    bits_v: Option<u32>,
    /// Residual length R: K flushed every R tokens, V window of R tokens
    #[arg(long, default_value_t = 128)]
    residual: usize,
    /// Also write the report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct CompareArgs {
    /// KV set (.npy, <f2 or <f4), as for `metrics`
    #[arg(short, long)]
    input: PathBuf,
    /// Q set (.npy, shape (runs, layers, 1, tokens, q_heads x head_dim));
    /// without it Q is drawn (spec §15.13)
    #[arg(long)]
    q: Option<PathBuf>,
    /// KV heads per row; heads x head-dim must equal the row length
    #[arg(long, default_value_t = 1)]
    heads: usize,
    /// Elements per head (default: the row length over heads)
    #[arg(long)]
    head_dim: Option<usize>,
    /// Queries per sequence, every 37 tokens back from the last
    #[arg(long, default_value_t = 16)]
    queries: usize,
    /// Oaken threshold table (spec §6.2); without it, profiled on the input
    #[arg(short, long)]
    thresholds: Option<PathBuf>,
    /// ppa.json of `make synth` (or docs/ppa.json); without it, no hardware figure
    #[arg(long)]
    ppa: Option<PathBuf>,
    /// Schemes to run, comma-separated (default: all): oaken, kivi, titanus, packkv, hack, intn
    #[arg(long, value_delimiter = ',')]
    schemes: Option<Vec<String>>,
    /// Folder for compare.md, compare.json, compare-bits.svg, compare-area.svg and compare-summary.md (the README's table)
    #[arg(short, long)]
    out_dir: Option<PathBuf>,
}

fn compare(a: CompareArgs) -> Result<(), (String, u8)> {
    use sim::compare::{self, report::CompareReport, Input};
    let set = KvSet::read(&a.input).map_err(|e| (e, 1))?;
    if a.heads == 0 {
        return Err(("heads must be at least 1".into(), 2));
    }
    let head_dim = a.head_dim.unwrap_or(set.head_dim / a.heads);
    compare::check_shape(&set, a.heads, head_dim).map_err(|e| (e, 2))?;
    let q = match &a.q {
        None => None,
        Some(path) => Some(sim::attention::QSet::read(path, &set, head_dim).map_err(|e| (e, 1))?),
    };
    let (file, thresholds) = match &a.thresholds {
        Some(path) => (ThresholdFile::read(path).map_err(|e| (e, 1))?, format!("from `{}`", path.display())),
        None => (profile(&set, &Ratios::default()).map_err(|e| (e, 1))?, "profiled on the set itself (4/90/6)".into()),
    };
    let table = file.table().map_err(|e| (e, 1))?;
    if table.layers() < set.layers {
        return Err((format!("the threshold table has {} layers, the set {}", table.layers(), set.layers), 1));
    }
    let (ppa, ppa_name) = match &a.ppa {
        None => (None, "no ppa.json given".to_string()),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| (format!("{}: {e}", path.display()), 1))?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| (format!("{}: {e}", path.display()), 1))?;
            (Some(v), path.display().to_string())
        }
    };
    let inp = Input { set: &set, q: q.as_ref(), heads: a.heads, head_dim, queries: a.queries, thresholds: &table };
    let runs: [(&str, fn(&Input) -> Vec<compare::Row>); 6] =
        [("oaken", compare::oaken), ("kivi", compare::kivi), ("titanus", compare::titanus), ("packkv", compare::packkv), ("hack", compare::hack), ("intn", compare::intn)];
    if let Some(list) = &a.schemes {
        for s in list {
            if !runs.iter().any(|r| r.0 == s) {
                return Err((format!("unknown scheme `{s}`: schemes are oaken, kivi, titanus, packkv, hack, intn"), 2));
            }
        }
    }
    let mut rows = vec![];
    for (name, f) in runs {
        if a.schemes.as_ref().is_none_or(|l| l.iter().any(|s| s == name)) {
            let start = std::time::Instant::now();
            rows.extend(f(&inp));
            eprintln!("kvsim compare: {name} in {:.1} s", start.elapsed().as_secs_f64());
        }
    }
    let r = CompareReport {
        input: a.input.display().to_string(),
        shape: set.shape(),
        heads: a.heads,
        head_dim,
        q_source: inp.q_source(),
        queries_per_sequence: a.queries,
        queries: rows.iter().filter(|r| r.default).map(|r| r.queries).max().unwrap_or(0),
        thresholds,
        ppa: ppa_name.clone(),
        rows,
        hardware: compare::hardware::costs(ppa.as_ref(), &ppa_name),
    };
    let md = r.markdown();
    print!("{md}");
    if let Some(dir) = &a.out_dir {
        let io = |e: String| (e, 1u8);
        std::fs::create_dir_all(dir).map_err(|e| io(format!("{}: {e}", dir.display())))?;
        std::fs::write(dir.join("compare.md"), &md).map_err(|e| io(e.to_string()))?;
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(dir.join("compare.json"), json).map_err(|e| io(e.to_string()))?;
        r.plot_bits(&dir.join("compare-bits.svg")).map_err(io)?;
        r.plot_area(&dir.join("compare-area.svg")).map_err(io)?;
        std::fs::write(dir.join("compare-summary.md"), r.summary()).map_err(|e| io(e.to_string()))?;
        eprintln!(
            "kvsim compare: wrote compare.md, compare.json, compare-bits.svg, compare-area.svg, compare-summary.md to {}",
            dir.display()
        );
    }
    Ok(())
}

#[derive(Args)]
struct HackArgs {
    /// KV set (.npy, <f2 or <f4), as for `metrics`
    #[arg(short, long)]
    input: PathBuf,
    /// Q set (.npy, shape (runs, layers, 1, tokens, q_heads x head_dim)), as
    /// `make realkv` writes; without it Q is drawn (spec §15.13)
    #[arg(long)]
    q: Option<PathBuf>,
    /// Elements per head (default: the set's last dimension over heads)
    #[arg(long)]
    head_dim: Option<usize>,
    /// KV heads per row
    #[arg(long, default_value_t = 1)]
    heads: usize,
    /// Partition sizes Pi, comma-separated; given explicitly, each must be
    /// legal (default 32,64,128, where an illegal one is reported as not run)
    #[arg(long, value_delimiter = ',')]
    partition: Option<Vec<usize>>,
    /// Code rounding: nearest or stochastic
    #[arg(long, default_value = "nearest")]
    rounding: String,
    /// LFSR seed (1..=65535)
    #[arg(long, default_value_t = 0xACE1)]
    seed: u32,
    /// Queries per sequence, every 37 tokens back from the last
    #[arg(long, default_value_t = 16)]
    queries: usize,
    /// Also write the report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
}

/// `Err((message, exit code))`: 2 for a bad parameter, 1 otherwise.
fn hack(a: HackArgs) -> Result<(), (String, u8)> {
    use sim::hack::params::{HackParams, Rounding};
    let set = KvSet::read(&a.input).map_err(|e| (e, 1))?;
    if a.heads == 0 || set.head_dim % a.heads != 0 {
        return Err((format!("heads ({}) must divide the set's row length ({})", a.heads, set.head_dim), 2));
    }
    let head_dim = a.head_dim.unwrap_or(set.head_dim / a.heads);
    let rounding: Rounding = a.rounding.parse().map_err(|e| (e, 2))?;
    let seed = u16::try_from(a.seed).ok().filter(|&s| s != 0).ok_or((format!("seed must be in 1..=65535, got {}", a.seed), 2))?;
    let base = HackParams { head_dim, rounding, seed, ..Default::default() };
    let parts = match &a.partition {
        Some(list) => {
            for &pi in list {
                HackParams { partition: pi, lanes: 16.min(pi.max(1)), ..base.clone() }.validate().map_err(|e| (e.0, 2))?;
            }
            list.clone()
        }
        None => vec![32, 64, 128],
    };
    if set.head_dim % head_dim != 0 {
        return Err((format!("head-dim ({head_dim}) must divide the set's row length ({})", set.head_dim), 2));
    }
    let q = match &a.q {
        None => None,
        Some(path) => {
            let arr = sim::npy::read(path).map_err(|e| (format!("{}: {e}", path.display()), 1))?;
            Some(sim::hack::metrics::QSet::from_array(arr, &set, head_dim).map_err(|e| (format!("{}: {e}", path.display()), 1))?)
        }
    };
    let r = sim::hack::metrics::measure(&set, head_dim, q.as_ref(), &parts, &base, a.queries).map_err(|e| (e, 1))?;
    print!("{}", r.summary());
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(path, json).map_err(|e| (format!("{}: {e}", path.display()), 1))?;
    }
    Ok(())
}

fn kivi(a: KiviArgs) -> Result<(), String> {
    use sim::kivi::params::KiviCacheParams;
    let set = KvSet::read(&a.input)?;
    if a.heads == 0 {
        return Err("heads must be in 1..=64, got 0".into());
    }
    let p = KiviCacheParams {
        head_dim: a.head_dim.unwrap_or(set.head_dim / a.heads),
        heads: a.heads,
        group: a.group,
        bits_k: a.bits_k.unwrap_or(a.bits),
        bits_v: a.bits_v.unwrap_or(a.bits),
        residual: a.residual,
    };
    let r = sim::kivi::metrics::measure(&set, &p)?;
    print!("{}", r.summary());
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[derive(Args)]
struct PackKvArgs {
    /// KV set (.npy, <f2 or <f4), as for `metrics`
    #[arg(short, long)]
    input: PathBuf,
    /// Elements per head; heads x head-dim must divide the set's last
    /// dimension (default: the set's last dimension over heads)
    #[arg(long)]
    head_dim: Option<usize>,
    /// Heads per token vector (one min and max over all of them)
    #[arg(long, default_value_t = 1)]
    heads: usize,
    /// N for K: step = (max - min) / N rounded up, rel = 1/N
    #[arg(long, default_value_t = 10)]
    levels_k: u32,
    /// N for V
    #[arg(long, default_value_t = 5)]
    levels_v: u32,
    /// Tokens per block, K and V alike
    #[arg(long, default_value_t = 64)]
    block: usize,
    /// Tokens per pack
    #[arg(long, default_value_t = 16)]
    pack: usize,
    /// Also write the report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
}

fn packkv(a: PackKvArgs) -> Result<(), String> {
    use sim::packkv::params::PackKvParams;
    let set = KvSet::read(&a.input)?;
    if a.heads == 0 {
        return Err("heads must be in 1..=64, got 0".into());
    }
    let head_dim = a.head_dim.unwrap_or(set.head_dim / a.heads);
    // lanes change no result: the largest legal power of two up to 16
    let lanes = 1usize << head_dim.trailing_zeros().min(4);
    let p = PackKvParams { head_dim, heads: a.heads, levels: a.levels_k, block: a.block, pack: a.pack, lanes, ..Default::default() };
    let r = sim::packkv::metrics::measure(&set, &p, a.levels_v)?;
    print!("{}", r.summary());
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[derive(Args)]
struct TitanusProfileArgs {
    /// KV set: INT8 (|i1) or FP16 (<f2, <f4; converted per spec §11.2)
    #[arg(short, long)]
    input: PathBuf,
    /// Target pruned fraction for K and V
    #[arg(long, default_value_t = 0.35)]
    ratio: f64,
    /// Target for K only (overrides --ratio)
    #[arg(long)]
    ratio_k: Option<f64>,
    /// Target for V only (overrides --ratio)
    #[arg(long)]
    ratio_v: Option<f64>,
    /// Bit width written for K (2, 3 or 4)
    #[arg(long, default_value_t = 3)]
    bits_k: u8,
    /// Bit width written for V (2, 3 or 4)
    #[arg(long, default_value_t = 2)]
    bits_v: u8,
    /// Output configuration file (JSON, spec §11.10)
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args)]
struct TitanusArgs {
    /// KV set: INT8 (|i1) or FP16 (<f2, <f4; converted per spec §11.2)
    #[arg(short, long)]
    input: PathBuf,
    /// Configuration file (spec §11.10); without it, thresholds are profiled from the set
    #[arg(short, long)]
    config: Option<PathBuf>,
    /// Target pruned fraction when profiling on the fly
    #[arg(long, default_value_t = 0.35)]
    ratio: f64,
    /// K bit width when profiling on the fly
    #[arg(long, default_value_t = 3)]
    bits_k: u8,
    /// V bit width when profiling on the fly
    #[arg(long, default_value_t = 2)]
    bits_v: u8,
    /// Prefill tokens at the start of every sequence; the rest are decode tokens
    #[arg(long, default_value_t = 64)]
    prefill: usize,
    /// Levels per channel (1..=16)
    #[arg(long, default_value_t = 16)]
    max_levels: usize,
    /// Decode lengths at which level counts are reported
    #[arg(long, value_delimiter = ',', default_value = "128,256,512,1024")]
    levels_at: Vec<usize>,
    /// Also write the converted INT8 set (|i1 .npy)
    #[arg(long)]
    save_int8: Option<PathBuf>,
    /// Also write the report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
}

fn titanus_profile(a: TitanusProfileArgs) -> Result<(), String> {
    use sim::titanus::int8::Int8Set;
    let (set, _) = Int8Set::read(&a.input)?;
    let ratio = [a.ratio_k.unwrap_or(a.ratio), a.ratio_v.unwrap_or(a.ratio)];
    let f = sim::titanus::profile::profile(&set, ratio, [a.bits_k, a.bits_v])?;
    f.write(&a.output)?;
    println!("wrote {}: {} layers x K/V", a.output.display(), f.layers);
    println!("| layer | kv | threshold | pruned | bits |");
    println!("|---:|---|---:|---:|---:|");
    for e in &f.entries {
        let kv = sim::kvset::kv_name(e.kv.into());
        println!("| {} | {kv} | {} | {:.4} | {} |", e.layer, e.threshold, e.pruned.unwrap_or(f64::NAN), e.bits);
    }
    Ok(())
}

fn titanus(a: TitanusArgs) -> Result<(), String> {
    use sim::titanus::int8::Int8Set;
    use sim::titanus::params::TitanusParams;
    let (set, source) = Int8Set::read(&a.input)?;
    if let Some(path) = &a.save_int8 {
        set.write(path)?;
    }
    let file = match &a.config {
        Some(path) => sim::titanus::profile::ConfigFile::read(path)?,
        None => sim::titanus::profile::profile(&set, [a.ratio; 2], [a.bits_k, a.bits_v])?,
    };
    let table = file.table()?;
    // lanes change no result; pick a legal value
    let lanes = 1usize << set.channels.trailing_zeros().min(4);
    let p = TitanusParams {
        channels: set.channels,
        lanes,
        layers: file.layers,
        max_levels: a.max_levels,
        max_prefill: a.prefill.max(1),
    };
    p.validate().map_err(|e| e.to_string())?;
    let r = sim::titanus::metrics::measure(&set, source.as_ref(), &table, &p, a.prefill, &a.levels_at)?;
    print!("{}", r.summary());
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[derive(Args)]
struct MmuMetricsArgs {
    /// Fraction of elements that are outliers (COO entries)
    #[arg(long, default_value_t = 0.1)]
    outliers: f64,
    /// Seed of the outlier counts
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The mixes of spec §10.13: 8 concurrent sequences, 2 layers, 8 heads of
/// 128 elements (dense 64 B, metadata 12 B), 32-byte bus.
fn mmu_metrics(a: MmuMetricsArgs) -> Result<(), String> {
    use sim::oaken::mmu::MmuParams;
    use sim::oaken::mmu_metrics::run_mix;
    if !(0.0..=1.0).contains(&a.outliers) {
        return Err(format!("--outliers {} is not a fraction in 0..=1", a.outliers));
    }
    let mixes: [(&str, Vec<usize>); 4] = [
        ("8 x 1024 tokens", vec![1024; 8]),
        ("8 x 2048 tokens", vec![2048; 8]),
        ("mixed 1..2048", vec![1, 17, 64, 200, 512, 900, 1500, 2048]),
        ("8 x 32 tokens", vec![32; 8]),
    ];
    println!("| page bytes | mix | stored bytes | allocated bytes | fragmentation | read transactions | ideal | burst efficiency | bytes per transaction |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for page_bytes in [4096usize, 2048, 1024] {
        let p = MmuParams {
            page_bytes,
            phys_pages: 65536,
            max_seqs: 8,
            layers: 2,
            heads: 8,
            max_seq_len: 2048,
            addr_bits: 32,
            bus_bytes: 32,
            ..MmuParams::default()
        };
        for (name, lengths) in &mixes {
            let f = run_mix(&p, lengths, a.outliers, a.seed)?;
            println!(
                "| {page_bytes} | {name} | {} | {} | {:.4} | {} | {} | {:.4} | {:.0} |",
                f.stored,
                f.allocated,
                f.fragmentation(),
                f.transactions,
                f.ideal_transactions,
                f.burst_efficiency(),
                f.bytes_per_transaction()
            );
        }
    }
    Ok(())
}

#[derive(Args)]
struct GenArgs {
    /// TOML generator configuration; the options below override it
    #[arg(long)]
    config: Option<PathBuf>,
    /// Sample runs [default: 4]
    #[arg(long)]
    runs: Option<usize>,
    /// Decoder layers [default: 8]
    #[arg(long)]
    layers: Option<usize>,
    /// Tokens per run [default: 256]
    #[arg(long)]
    tokens: Option<usize>,
    /// Elements per K or V vector [default: 128]
    #[arg(long)]
    head_dim: Option<usize>,
    /// PRNG seed [default: 1]
    #[arg(long)]
    seed: Option<u64>,
    /// Output .npy file
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args)]
struct ProfileArgs {
    /// KV set (.npy, <f2 or <f4)
    #[arg(short, long)]
    input: PathBuf,
    /// Fraction of elements in the outer group (both tails)
    #[arg(long, default_value_t = 0.04)]
    outer: f64,
    /// Fraction in the middle group; the three must sum to 1
    #[arg(long, default_value_t = 0.90)]
    middle: f64,
    /// Fraction in the inner group (values nearest zero)
    #[arg(long, default_value_t = 0.06)]
    inner: f64,
    /// Output threshold table (JSON, spec §6.2)
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args)]
struct MetricsArgs {
    /// KV set (.npy, <f2 or <f4)
    #[arg(short, long)]
    input: PathBuf,
    /// Threshold table (JSON, spec §6.2)
    #[arg(short, long)]
    thresholds: PathBuf,
    /// Elements per head; heads x head-dim must divide the set's last
    /// dimension, each row being cut into vectors of that length (default:
    /// the set's last dimension over heads)
    #[arg(long)]
    head_dim: Option<usize>,
    /// Heads per token vector: one metadata word covers heads x head-dim
    /// elements (spec §2.9)
    #[arg(long, default_value_t = 1)]
    heads: usize,
    /// Dense slot width, 2..=8; outer and inner codes get one bit more
    #[arg(long, default_value_t = 4)]
    inlier_bits: u32,
    /// plain or shifted
    #[arg(long, default_value_t = MiddleMode::Plain)]
    middle_mode: MiddleMode,
    /// Also write the report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
}

/// A TOML error as one line, with the line number of its span.
fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(s) => {
            let line = text.bytes().take(s.start).filter(|&b| b == b'\n').count() + 1;
            format!("{}: line {line}: {msg}", path.display())
        }
        None => format!("{}: {msg}", path.display()),
    }
}

fn gen(a: GenArgs) -> Result<(), String> {
    let mut cfg = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            toml::from_str::<KvGenConfig>(&text).map_err(|e| toml_error(path, &text, &e))?
        }
        None => KvGenConfig::default(),
    };
    cfg.runs = a.runs.unwrap_or(cfg.runs);
    cfg.layers = a.layers.unwrap_or(cfg.layers);
    cfg.tokens = a.tokens.unwrap_or(cfg.tokens);
    cfg.head_dim = a.head_dim.unwrap_or(cfg.head_dim);
    cfg.seed = a.seed.unwrap_or(cfg.seed);
    let set = generate(&cfg)?;
    set.write(&a.output)?;
    println!("wrote {}: shape {:?}, seed {}", a.output.display(), set.shape(), cfg.seed);
    Ok(())
}

fn run_profile(a: ProfileArgs) -> Result<(), String> {
    let ratios = Ratios { outer: a.outer, middle: a.middle, inner: a.inner };
    ratios.validate()?;
    let set = KvSet::read(&a.input)?;
    let file = profile(&set, &ratios).map_err(|e| format!("{}: {e}", a.input.display()))?;
    file.write(&a.output)?;
    println!(
        "wrote {}: {} layers x K/V, averaged over {} runs of {} values, ratios {}/{}/{}",
        a.output.display(),
        set.layers,
        set.runs,
        set.tokens * set.head_dim,
        a.outer,
        a.middle,
        a.inner
    );
    Ok(())
}

fn metrics(a: MetricsArgs) -> Result<(), String> {
    let set = KvSet::read(&a.input)?;
    let file = ThresholdFile::read(&a.thresholds)?;
    let table = file.table()?;
    let heads = a.heads;
    if heads == 0 {
        return Err("heads must be at least 1".into());
    }
    let head_dim = a.head_dim.unwrap_or(set.head_dim / heads);
    // lanes do not change the result; pick a legal value for validate()
    let lanes = 1usize << head_dim.trailing_zeros().min(4);
    let p = OakenParams {
        head_dim,
        heads,
        lanes,
        inlier_bits: a.inlier_bits,
        outlier_bits: a.inlier_bits.saturating_add(1),
        layers: file.layers,
        middle_mode: a.middle_mode,
    };
    p.validate().map_err(|e| e.to_string())?;
    let r = measure(&set, &table, &p)?;
    print!("{}", r.summary());
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&r).expect("report serialises") + "\n";
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn fail(msg: &str, code: u8) -> ExitCode {
    // one line on stderr whatever the message holds
    let line: Vec<&str> = msg.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    eprintln!("kvsim: {}", line.join("; "));
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                return fail("error: a subcommand is required: gen, profile, metrics, mmu-metrics, kivi, packkv, hack, titanus, titanus-profile or compare (try --help)", 2)
            }
            _ => {
                // clap's message, without its usage and hint lines
                let text = e.to_string();
                let msg: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                return fail(&format!("{} (try --help)", msg.join(" ")), 2);
            }
        },
    };
    let r = match cli.cmd {
        Cmd::Gen(a) => gen(a),
        Cmd::Profile(a) => run_profile(a),
        Cmd::Metrics(a) => metrics(a),
        Cmd::MmuMetrics(a) => mmu_metrics(a),
        Cmd::Kivi(a) => kivi(a),
        Cmd::Packkv(a) => packkv(a),
        Cmd::Hack(a) => match hack(a) {
            Ok(()) => Ok(()),
            Err((msg, code)) => return fail(&format!("error: {msg}"), code),
        },
        Cmd::Titanus(a) => titanus(a),
        Cmd::Compare(a) => match compare(a) {
            Ok(()) => Ok(()),
            Err((msg, code)) => return fail(&format!("error: {msg}"), code),
        },
        Cmd::TitanusProfile(a) => titanus_profile(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => fail(&format!("error: {msg}"), 1),
    }
}
