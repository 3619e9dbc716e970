//! The co-simulation models of `tb/models.toml`, built on first use.
//!
//! `get("oaken_quantizer")` is the RTL model of that entry and
//! `get("oaken_quantizer_net")` its OSU018 netlist model; each is built into
//! the model cache (`crate::build`) if it is not there yet, and loaded once
//! per process. `specs()` lists the entries without building anything;
//! their tags (`synth`, `prove`) and `make_lists()` are the Makefile's
//! lists of models (`models list`).

use crate::build::{self, Level, Request, Source, Store};
use crate::info::ModelInfo;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Synthesis clock of the netlist models and the emitted SDC, in ns:
/// `$KVFORGE_CLOCK_NS`, else 4.0 (250 MHz), the `make synth` default, so a
/// netlist model simulates exactly the netlist that `make synth` times.
pub fn clock_ns() -> f64 {
    match std::env::var("KVFORGE_CLOCK_NS") {
        Ok(v) => v.trim().parse().ok().filter(|c: &f64| c.is_finite() && *c > 0.0).unwrap_or_else(|| {
            panic!("KVFORGE_CLOCK_NS={v} is not a positive number of ns")
        }),
        Err(_) => 4.0,
    }
}

const LIST: &str = include_str!("../models.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    defaults: Defaults,
    make: MakeLists,
    #[serde(default)]
    model: Vec<Entry>,
}

/// The `[make]` table: the Makefile's lists that name one model or units
/// rather than tag entries (`models list --make KEY`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MakeLists {
    /// `make prove`: the model whose netlist, with one gate changed, every
    /// engine must fail to prove (a `prove = "fast"` model).
    pub prove_mutant: String,
    /// `make prove`: the model whose deep mutant exhaustive simulation must
    /// refute (a `prove = "fast"` model).
    pub prove_sim_mutant: String,
    /// `make prove`: the model whose deep mutant the cut engine must refute
    /// with register classes too (a `prove = "fast"` model whose proof
    /// needs them, so that its mutant takes that path).
    pub prove_class_mutant: String,
    /// Units whose defaults, or models (by name), `make synth` times only
    /// with their memories as macros; `make prove-all` proves those
    /// netlists.
    pub synth_macros_only: Vec<String>,
    /// `synth_macros_only` as constraints/ppa.py's `--macros-only` takes
    /// it: a unit as it is, a model as `NAME:UNIT:KEY=VALUE,...`.
    #[serde(skip)]
    pub synth_macros_only_args: Vec<String>,
    /// The ones of `synth_macros_only` that `make prove` proves.
    pub prove_macros_fast: Vec<String>,
}

impl MakeLists {
    /// The value of `key` (a kebab-case field name), space-separated.
    pub fn get(&self, key: &str) -> Option<String> {
        Some(match key {
            "prove-mutant" => self.prove_mutant.clone(),
            "prove-sim-mutant" => self.prove_sim_mutant.clone(),
            "prove-class-mutant" => self.prove_class_mutant.clone(),
            "synth-macros-only" => self.synth_macros_only_args.join(" "),
            "prove-macros-fast" => self.prove_macros_fast.join(" "),
            _ => return None,
        })
    }

    pub const KEYS: [&'static str; 5] =
        ["prove-mutant", "prove-sim-mutant", "prove-class-mutant", "synth-macros-only", "prove-macros-fast"];
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Defaults {
    opt: Opt,
    net_opt: Opt,
    slow_opt: Opt,
}

/// A g++ -O level as written in the TOML: an integer 0..=3 or "s".
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Opt {
    Level(u8),
    Name(String),
}

impl Opt {
    fn flag(&self) -> Result<String, String> {
        let s = match self {
            Opt::Level(n) => n.to_string(),
            Opt::Name(s) => s.clone(),
        };
        if !matches!(s.as_str(), "0" | "1" | "2" | "3" | "s") {
            return Err(format!("C++ optimisation levels are 0, 1, 2, 3 or \"s\", got {s}"));
        }
        Ok(s)
    }
}

/// `netlist = true` (co-simulated in every run), `"extended"` (only in the
/// extended runs: `make synth`, `make soak`), or `false`.
#[derive(Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(untagged)]
enum NetlistTier {
    Flag(bool),
    #[serde(with = "extended")]
    Extended,
    #[default]
    #[serde(skip)]
    None,
}

mod extended {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(), D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        if s == "extended" {
            Ok(())
        } else {
            Err(serde::de::Error::custom(format!("netlist is true, false or \"extended\", not \"{s}\"")))
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Entry {
    name: String,
    unit: String,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    netlist: NetlistTier,
    #[serde(default)]
    synth: bool,
    prove: Option<Prove>,
    cases: Option<f64>,
    opt: Option<Opt>,
    net_opt: Option<Opt>,
    slow_opt: Option<Opt>,
}

/// One entry of the list, defaults filled in.
#[derive(Debug)]
pub struct Spec {
    pub name: String,
    pub unit: String,
    pub params: toml::Table,
    /// Also an OSU018 netlist model, `<name>_net`.
    pub netlist: bool,
    /// The netlist model runs only in extended runs (`KVFORGE_EXTENDED=1`,
    /// set by `make synth` and `make soak`): its synthesis costs minutes.
    pub extended: bool,
    /// `make synth` times its netlist (`synth = true`).
    pub synth: bool,
    /// `make prove` (`Fast`) or only `make prove-all` (`Slow`) proves its
    /// netlist equal to its RTL (`prove = "fast"` or `"slow"`).
    pub prove: Option<Prove>,
    /// Scale of every property's case count on this model (`cases = 0.25`;
    /// 1 if absent), for sets whose cases cost seconds each: the others
    /// carry the depth (`tb::prop::run_property_on`).
    pub cases: f64,
    /// g++ -O suffixes: "0".."3" or "s".
    pub opt: String,
    pub net_opt: String,
    pub slow_opt: String,
}

/// Which proof target proves a model's netlist: `prove = "fast"` (`make
/// prove`, each within minutes) or `"slow"` (only `make prove-all`).
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Prove {
    Fast,
    Slow,
}

/// The entries and the `[make]` table of a models list (the text of
/// tb/models.toml), checked: names, duplicates, optimisation levels, tag
/// values, and that the `[make]` table names listed models.
pub fn parse(text: &str) -> Result<(Vec<Spec>, MakeLists), String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let d = file.defaults;
    let mut specs: Vec<Spec> = Vec::new();
    for e in file.model {
        let ok = e.name.starts_with(|c: char| c.is_ascii_lowercase())
            && e.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !e.name.ends_with("_net");
        if !ok {
            return Err(format!("model name '{}' must be a lowercase identifier not ending in _net", e.name));
        }
        if specs.iter().any(|s| s.name == e.name) {
            return Err(format!("model '{}' is listed twice", e.name));
        }
        let netlist = matches!(e.netlist, NetlistTier::Flag(true) | NetlistTier::Extended);
        let cases = e.cases.unwrap_or(1.0);
        if !(cases > 0.0 && cases <= 1.0) {
            return Err(format!("model '{}': cases is a scale in (0, 1], got {cases}", e.name));
        }
        specs.push(Spec {
            name: e.name,
            unit: e.unit,
            params: e.params,
            netlist,
            extended: e.netlist == NetlistTier::Extended,
            synth: e.synth,
            prove: e.prove,
            cases,
            opt: e.opt.as_ref().unwrap_or(&d.opt).flag()?,
            net_opt: e.net_opt.as_ref().unwrap_or(&d.net_opt).flag()?,
            slow_opt: e.slow_opt.as_ref().unwrap_or(&d.slow_opt).flag()?,
        });
    }
    let m = &file.make;
    for (key, name) in [
        ("prove-mutant", &m.prove_mutant),
        ("prove-sim-mutant", &m.prove_sim_mutant),
        ("prove-class-mutant", &m.prove_class_mutant),
    ] {
        if !specs.iter().any(|s| &s.name == name && s.prove == Some(Prove::Fast)) {
            return Err(format!("[make] {key} = \"{name}\" is not a model with prove = \"fast\""));
        }
    }
    if let Some(u) = m.prove_macros_fast.iter().find(|u| !m.synth_macros_only.contains(u)) {
        return Err(format!("[make] prove-macros-fast: {u} is not in synth-macros-only"));
    }
    let mut make = file.make;
    make.synth_macros_only_args = make
        .synth_macros_only
        .iter()
        .map(|e| macros_only_arg(&specs, e).map_err(|why| format!("[make] synth-macros-only: {e}: {why}")))
        .collect::<Result<_, _>>()?;
    Ok((specs, make))
}

/// A `synth-macros-only` entry as constraints/ppa.py takes it: a unit with
/// models as it is (its defaults); a model as `NAME:UNIT:KEY=VALUE,...`
/// (values plain, so the list stays one shell word an entry).
fn macros_only_arg(specs: &[Spec], entry: &str) -> Result<String, String> {
    if let Some(s) = specs.iter().find(|s| s.name == entry) {
        let mut kv = Vec::new();
        for (k, v) in &s.params {
            let v = match v {
                toml::Value::String(x) => x.clone(),
                toml::Value::Integer(x) => x.to_string(),
                toml::Value::Boolean(x) => x.to_string(),
                other => return Err(format!("parameter {k} = {other} is not a string, integer or boolean")),
            };
            if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') {
                return Err(format!("parameter {k} = '{v}' must be a plain word"));
            }
            kv.push(format!("{k}={v}"));
        }
        return Ok(format!("{}:{}:{}", s.name, s.unit, kv.join(",")));
    }
    if specs.iter().any(|s| s.unit == entry) {
        return Ok(entry.to_string());
    }
    Err("neither a unit with models nor a model".to_string())
}

fn file() -> &'static (Vec<Spec>, MakeLists) {
    static S: OnceLock<(Vec<Spec>, MakeLists)> = OnceLock::new();
    S.get_or_init(|| parse(LIST).unwrap_or_else(|e| panic!("tb/models.toml: {e}")))
}

/// The case-count scale of model `name` (an entry's name, or its netlist's
/// `<name>_net`; no entry's name ends in `_net`): the entry's `cases`, 1
/// for names not listed.
pub fn case_scale(name: &str) -> f64 {
    let entry = name.strip_suffix("_net").unwrap_or(name);
    specs().iter().find(|s| s.name == entry).map_or(1.0, |s| s.cases)
}

/// Scale of the cases of a netlist that `make prove` proves equal to its
/// RTL (`prove = "fast"`): the proof covers every input, so its
/// co-simulation checks only what the proof assumes (the cell models,
/// the gated clocks it folds, the netlist simulator), and the RTL's own
/// sweep carries the depth.
pub const PROVEN_NETLIST_SCALE: f64 = 0.25;

/// Whether `name` is the netlist model of an entry with `prove = "fast"`.
pub fn is_proven_netlist(name: &str) -> bool {
    resolve(name).is_ok_and(|(s, level)| level == Level::Netlist && s.prove == Some(Prove::Fast))
}

/// The entries of tb/models.toml.
pub fn specs() -> &'static [Spec] {
    &file().0
}

/// The `[make]` table of tb/models.toml.
pub fn make_lists() -> &'static MakeLists {
    &file().1
}

/// Whether this is an extended run (`KVFORGE_EXTENDED=1`): netlists marked
/// `"extended"` in tb/models.toml are co-simulated too.
pub fn extended() -> bool {
    std::env::var("KVFORGE_EXTENDED").is_ok_and(|v| v == "1")
}

/// Every model name of this run: each entry, and `<name>_net` for those
/// with a netlist (extended ones only in an extended run).
pub fn names() -> Vec<String> {
    let mut v = Vec::new();
    for s in specs() {
        v.push(s.name.clone());
        if s.netlist && (!s.extended || extended()) {
            v.push(format!("{}_net", s.name));
        }
    }
    v
}

/// The entry and level a model name stands for.
pub fn resolve(name: &str) -> Result<(&'static Spec, Level), String> {
    let (base, level) = match name.strip_suffix("_net") {
        Some(b) => (b, Level::Netlist),
        None => (name, Level::Rtl),
    };
    let spec = specs().iter().find(|s| s.name == base).ok_or_else(|| {
        format!("no model '{name}' in tb/models.toml; models: {}", names().join(", "))
    })?;
    if level == Level::Netlist && !spec.netlist {
        return Err(format!("model '{base}' has no netlist (set netlist = true in tb/models.toml)"));
    }
    Ok((spec, level))
}

/// The cache every model of this process goes to.
pub fn store() -> &'static Store {
    static S: OnceLock<Store> = OnceLock::new();
    S.get_or_init(Store::default_store)
}

/// The emission of an entry (elaborated or from the cache), once per process.
pub fn source(spec: &'static Spec) -> Result<&'static Source, String> {
    static M: OnceLock<Mutex<HashMap<String, Arc<OnceLock<Result<&'static Source, String>>>>>> = OnceLock::new();
    let cell = M.get_or_init(Default::default).lock().unwrap().entry(spec.name.clone()).or_default().clone();
    cell.get_or_init(|| {
        build::emit::source(store(), &spec.unit, &spec.params, clock_ns())
            .map(|s| &*Box::leak(Box::new(s)))
            .map_err(|e| format!("models.toml, model {}: {e}", spec.name))
    })
    .clone()
}

/// The build request of a model.
pub fn request(spec: &'static Spec, level: Level, trace: bool) -> Result<Request<'static>, String> {
    Ok(Request {
        source: source(spec)?,
        level,
        trace,
        opt: if level == Level::Netlist { spec.net_opt.clone() } else { spec.opt.clone() },
        slow_opt: spec.slow_opt.clone(),
        period_ps: (clock_ns() * 1000.0).round() as u64,
    })
}

type Slot = Arc<OnceLock<Result<&'static ModelInfo, String>>>;

/// Loads each (name, variant) once per process; `make` builds the info.
fn once(name: &str, variant: u8, make: impl FnOnce() -> Result<&'static ModelInfo, String>) -> Result<&'static ModelInfo, String> {
    static M: OnceLock<Mutex<HashMap<(String, u8), Slot>>> = OnceLock::new();
    let cell = M.get_or_init(Default::default).lock().unwrap().entry((name.to_string(), variant)).or_default().clone();
    cell.get_or_init(make).clone()
}

/// Model `name` (`x`: RTL under Verilator; `x_net`: the OSU018 netlist
/// under `crate::netsim`), built if needed and loaded once per process;
/// `trace` selects the VCD-capable Verilator build (netlist models can
/// always trace).
pub fn load(name: &str, trace: bool) -> Result<&'static ModelInfo, String> {
    let (spec, level) = resolve(name)?;
    let trace = trace && level == Level::Rtl;
    once(name, trace as u8, || {
        let req = request(spec, level, trace)?;
        let info = match level {
            Level::Rtl => {
                let built = build::ensure(store(), &req).map_err(|e| format!("model {name}: {e}"))?;
                ModelInfo::verilated(name, req.source, &built)?
            }
            Level::Netlist => {
                let net = build::netlist(store(), req.source, req.period_ps).map_err(|e| format!("model {name}: {e}"))?;
                ModelInfo::netlist(name, req.source, &net)?
            }
        };
        Ok(&*Box::leak(Box::new(info)))
    })
}

/// Whether the OSU018 netlist of entry `name` is in the cache already, so
/// that loading `<name>_net` synthesizes nothing (an extended netlist
/// costs minutes of Yosys).
pub fn netlist_cached(name: &str) -> Result<bool, String> {
    let (spec, _) = resolve(&format!("{name}_net"))?;
    let key = build::netlist_key(source(spec)?, (clock_ns() * 1000.0).round() as u64)?;
    Ok(store().contains("netlist", &key))
}

/// The OSU018 netlist of `name` (`x_net`) under Verilator instead, with
/// Yosys's Verilog of the Liberty cell functions: the reference the netlist
/// simulator is checked against.
pub fn load_verilated_netlist(name: &str, trace: bool) -> Result<&'static ModelInfo, String> {
    let (spec, level) = resolve(name)?;
    if level != Level::Netlist {
        return Err(format!("{name} is not a netlist model"));
    }
    once(name, 2 + trace as u8, || {
        let req = request(spec, level, trace)?;
        let built = build::ensure(store(), &req).map_err(|e| format!("model {name} (Verilator): {e}"))?;
        ModelInfo::verilated(name, req.source, &built).map(|i| &*Box::leak(Box::new(i)))
    })
}

/// Model `name`; panics with the reason (an unknown name lists the models).
pub fn get(name: &str) -> &'static ModelInfo {
    load(name, false).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether `s` is selected by `sel`: a unit name, or `unit:key=value` for
/// the models of a unit whose parameter `key` is the string `value` (the
/// two axes of `kivi-quantizer` are two units to a testbench).
pub fn selects(s: &Spec, sel: &str) -> bool {
    match sel.split_once(':') {
        None => s.unit == sel,
        Some((unit, kv)) => {
            let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("model selector {sel}: want unit:key=value"));
            s.unit == unit && s.params.get(k).and_then(|x| x.as_str()) == Some(v)
        }
    }
}

/// The models selected by `unit` (`selects`) at one level in this run, in
/// list order (each built if needed).
pub fn of_unit(unit: &str, gate_level: bool) -> Vec<&'static ModelInfo> {
    specs()
        .iter()
        .filter(|s| selects(s, unit) && (!gate_level || (s.netlist && (!s.extended || extended()))))
        .map(|s| get(&if gate_level { format!("{}_net", s.name) } else { s.name.clone() }))
        .collect()
}

/// `of_unit`, for a test that sweeps the unit's models: panics if there
/// are none, so that a sweep can never pass by looping over nothing.
pub fn of_unit_nonempty(unit: &str, gate_level: bool) -> Vec<&'static ModelInfo> {
    let v = of_unit(unit, gate_level);
    assert!(!v.is_empty(), "no {unit} models (gate level: {gate_level}) in tb/models.toml");
    v
}

/// A test's sweep over the models of `unit` (RTL, or this run's netlists):
/// `f` runs on each, the models side by side, all recording into one
/// coverage set named after the unit and the level. Panics when fewer than
/// `min` models are listed, or none (`of_unit_nonempty`), so that a sweep never passes by
/// looping over nothing. Returns the coverage, for the caller to check the
/// points it requires, and `f`'s results in model order.
pub fn sweep<R: Send>(
    unit: &str,
    gate_level: bool,
    min: usize,
    points: &[&'static str],
    f: impl Fn(&'static ModelInfo, &crate::coverage::Coverage) -> R + Sync,
) -> (crate::coverage::Coverage, Vec<R>) {
    sweep_as(unit, None, gate_level, min, points, f)
}

/// `sweep`, for a second sweep of the same unit and level in one run: its
/// coverage set is named after `what` too, so that the two sets' reports
/// (build/reports/coverage) do not overwrite each other.
pub fn sweep_as<R: Send>(
    unit: &str,
    what: Option<&str>,
    gate_level: bool,
    min: usize,
    points: &[&'static str],
    f: impl Fn(&'static ModelInfo, &crate::coverage::Coverage) -> R + Sync,
) -> (crate::coverage::Coverage, Vec<R>) {
    let infos = of_unit_nonempty(unit, gate_level);
    let level = if gate_level { "netlists" } else { "RTL" };
    assert!(infos.len() >= min, "{} {unit} models ({level}) in this run, at least {min} expected", infos.len());
    let title = match what {
        Some(w) => format!("{} {w} ({level})", unit.replace(['-', ':', '='], "_")),
        None => format!("{} ({level})", unit.replace(['-', ':', '='], "_")),
    };
    let cov = crate::coverage::Coverage::new(&title, points);
    let out = crate::build::jobs::map(&infos, |&info| f(info, &cov));
    (cov, out)
}

/// `sweep`, then `Coverage::close` on `required` (each extra round runs
/// `f` once more on every model), then the check of `required`.
pub fn sweep_closed(
    unit: &str,
    gate_level: bool,
    min: usize,
    points: &[&'static str],
    required: &[&str],
    f: impl Fn(&'static ModelInfo, &crate::coverage::Coverage) + Sync,
) -> crate::coverage::Coverage {
    sweep_as_closed(unit, None, gate_level, min, points, required, f)
}

/// `sweep_closed` under `sweep_as`'s name.
pub fn sweep_as_closed(
    unit: &str,
    what: Option<&str>,
    gate_level: bool,
    min: usize,
    points: &[&'static str],
    required: &[&str],
    f: impl Fn(&'static ModelInfo, &crate::coverage::Coverage) + Sync,
) -> crate::coverage::Coverage {
    let (cov, _) = sweep_as(unit, what, gate_level, min, points, &f);
    let infos = of_unit_nonempty(unit, gate_level);
    cov.close(required, || {
        crate::build::jobs::map(&infos, |&info| f(info, &cov));
    });
    cov.check_points(required);
    cov
}

/// Model `name` if tb/models.toml lists it (built if needed; a build
/// failure panics).
pub fn by_name(name: &str) -> Option<&'static ModelInfo> {
    resolve(name).ok().map(|_| get(name))
}

/// Every model of the list, netlists included (each built if needed).
pub fn all() -> Vec<&'static ModelInfo> {
    names().iter().map(|n| get(n)).collect()
}
