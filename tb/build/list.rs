//! The declarative model list, `models.toml`.

use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    defaults: Defaults,
    #[serde(default)]
    model: Vec<Entry>,
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
    fn flag(&self, path: &Path) -> String {
        let s = match self {
            Opt::Level(n) => n.to_string(),
            Opt::Name(s) => s.clone(),
        };
        assert!(
            matches!(s.as_str(), "0" | "1" | "2" | "3" | "s"),
            "{}: C++ optimisation levels are 0, 1, 2, 3 or \"s\", got {s}",
            path.display()
        );
        s
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
    netlist: bool,
    opt: Option<Opt>,
    net_opt: Option<Opt>,
    slow_opt: Option<Opt>,
}

/// One entry of the list, defaults filled in.
pub struct ModelSpec {
    pub name: String,
    pub unit: String,
    pub params: toml::Table,
    pub netlist: bool,
    /// g++ -O suffixes: "0".."3" or "s".
    pub opt: String,
    pub net_opt: String,
    pub slow_opt: String,
}

pub fn read(path: &Path) -> Vec<ModelSpec> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let d = file.defaults;
    let mut specs: Vec<ModelSpec> = Vec::new();
    for e in file.model {
        // The name becomes a C symbol prefix, a Verilator --prefix and a Rust constant.
        let ok = e.name.starts_with(|c: char| c.is_ascii_lowercase())
            && e.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !e.name.ends_with("_net");
        assert!(ok, "{}: model name '{}' must be a lowercase identifier not ending in _net", path.display(), e.name);
        assert!(!specs.iter().any(|s| s.name == e.name), "{}: model name '{}' is listed twice", path.display(), e.name);
        specs.push(ModelSpec {
            name: e.name,
            unit: e.unit,
            params: e.params,
            netlist: e.netlist,
            opt: e.opt.as_ref().unwrap_or(&d.opt).flag(path),
            net_opt: e.net_opt.as_ref().unwrap_or(&d.net_opt).flag(path),
            slow_opt: e.slow_opt.as_ref().unwrap_or(&d.slow_opt).flag(path),
        });
    }
    specs
}
