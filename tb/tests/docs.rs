//! The docs stay an index and a contract (issue 34): the README's PPA table
//! is the one `constraints/readme_ppa.py` renders from `docs/ppa.json`, the
//! README is short and its tables narrow, its links into the spec land on
//! headings, and the spec names no commit.
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    sim::workspace_root()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn readme_ppa(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(root().join("constraints/readme_ppa.py"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("python3 constraints/readme_ppa.py")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvforge-docs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn show(o: &Output) -> String {
    format!("status {:?}\n{}{}", o.status.code(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn readme_ppa_table_matches_docs_ppa_json() {
    let o = readme_ppa(&["--check"]);
    assert!(o.status.success(), "README.md and docs/ppa.json disagree:\n{}", show(&o));
}

/// The README's comparison table is the one `make compare` wrote last
/// (`make readme-compare` copies it to docs/compare/ and into the README).
#[test]
fn readme_compare_table_matches_docs_compare() {
    let readme = read("README.md");
    let (b, e) = ("<!-- compare:begin -->\n", "<!-- compare:end -->");
    let block = &readme[readme.find(b).expect("compare:begin marker") + b.len()..readme.find(e).expect("compare:end marker")];
    let table = read("docs/compare/compare-summary.md");
    assert!(table.lines().count() >= 8, "docs/compare/compare-summary.md: {} lines, a header and six schemes expected", table.lines().count());
    assert_eq!(block, table, "README.md's compare block differs from docs/compare/compare-summary.md: run make readme-compare");
    for plot in ["docs/compare/compare-bits.svg", "docs/compare/compare-area.svg"] {
        assert!(readme.contains(plot), "README.md does not show {plot}");
        assert!(read(plot).contains("<svg"), "{plot} is not an SVG");
    }
}

/// The check is not vacuous: a figure changed in the JSON, or a cell
/// changed in the README, makes it fail with a diff naming the figure.
#[test]
fn readme_ppa_check_fails_on_disagreement() {
    let dir = scratch("ppa");
    let mut doc: serde_json::Value = serde_json::from_str(&read("docs/ppa.json")).unwrap();
    let units = doc["units"].as_array_mut().unwrap();
    assert!(!units.is_empty(), "docs/ppa.json lists no units");
    let first = units.iter_mut().find(|u| u["nand2_eq"].is_number()).expect("a unit with nand2_eq");
    let n2 = first["nand2_eq"].as_f64().unwrap().round() as u64 + 1234;
    first["nand2_eq"] = serde_json::json!(n2);
    let json = dir.join("ppa.json");
    std::fs::write(&json, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let o = readme_ppa(&["--check", "--json", json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "a changed nand2_eq passed the check:\n{}", show(&o));
    let grouped = n2.to_string().as_bytes().rchunks(3).rev().map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(",");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with('+') && l.contains(&grouped)), "the diff does not show {grouped}:\n{out}");

    // the README side: one row's clock edited
    let readme = read("README.md");
    let row = readme.lines().find(|l| l.starts_with("| `") && l.contains(" MHz |")).expect("a PPA row in README.md");
    let edited = readme.replacen(row, &row.replacen(" MHz |", "1 MHz |", 1), 1);
    let copy = dir.join("README.md");
    std::fs::write(&copy, edited).unwrap();
    let o = readme_ppa(&["--check", "--readme", copy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "an edited README row passed the check:\n{}", show(&o));

    // no markers: an error, not a pass
    std::fs::write(&copy, readme.replace("<!-- ppa:begin -->", "")).unwrap();
    let o = readme_ppa(&["--check", "--readme", copy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "a README without markers passed:\n{}", show(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `make readme-ppa` keeps a unit's row with memories as flip-flops (from
/// `make synth-whole`) over a new `make synth`'s black-box-only row while,
/// and only while, the synthesis inputs the row records are those of the
/// emitted folder now: one byte of Verilog changed, or no record, drops it.
#[test]
fn readme_ppa_carries_whole_rows_only_while_exact() {
    let dir = scratch("carry");
    let unit = dir.join("rtl/x-unit");
    std::fs::create_dir_all(&unit).unwrap();
    for (ext, text) in [("v", "module x_unit(input a, output y); assign y = a; endmodule\n"), ("yosys.tcl", "# y\n"), ("sta.tcl", "# s\n"), ("sdc", "# c\n")] {
        std::fs::write(unit.join(format!("x_unit.{ext}")), text).unwrap();
    }
    let lib = dir.join("cells.lib");
    std::fs::write(&lib, "library (x) {}\n").unwrap();
    // the record ppa.py writes into a row (its synthesis_inputs)
    let digest = || {
        let o = Command::new("python3")
            .args(["-c", "import sys; sys.path.insert(0, sys.argv[1]); from ppa import synthesis_inputs; print(synthesis_inputs(sys.argv[2], 'x_unit', sys.argv[3], 4.0))"])
            .arg(root().join("constraints"))
            .arg(&unit)
            .arg(&lib)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let macros = serde_json::json!({"area_um2": 2400.0, "nand2_eq": 100.0, "cells": 50, "flip_flops": 5, "critical_path_ns": 3.0, "max_clock_mhz": 333.3, "memory_modules": ["m"]});
    let row = |model: &str, nand2: Option<f64>, sha: Option<String>| {
        serde_json::json!({"model": model, "unit": "x-unit", "module": "x_unit", "params": {}, "nand2_eq": nand2,
            "flip_flops": nand2.map(|_| 40), "memory_bits": 64, "critical_path_ns": 5.0, "max_clock_mhz": 200.0,
            "meets_target": false, "memories_as_macros": macros, "synthesis_inputs_sha256": sha})
    };
    let doc = |r: serde_json::Value| {
        serde_json::to_string_pretty(&serde_json::json!({"liberty": lib, "nand2x1_um2": 24.0, "clock_ns": 4.0, "units": [r]})).unwrap()
    };
    let (old, new) = (dir.join("old.json"), dir.join("new.json"));
    let run = |old_row: serde_json::Value| {
        std::fs::write(&old, doc(old_row)).unwrap();
        std::fs::write(&new, doc(row("x_unit_defaults", None, None))).unwrap();
        let o = readme_ppa(&["--json", new.to_str().unwrap(), "--carry", old.to_str().unwrap(), "--rtl", dir.join("rtl").to_str().unwrap()]);
        assert!(o.status.success(), "{}", show(&o));
        let after: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&new).unwrap()).unwrap();
        (after["units"][0]["model"].as_str().unwrap().to_string(), String::from_utf8_lossy(&o.stdout).to_string())
    };
    let (model, out) = run(row("x_unit", Some(1000.0), Some(digest())));
    assert_eq!(model, "x_unit", "an exact whole row was not kept:\n{out}");
    assert!(out.contains("| `x-unit` | defaults, memories as flip-flops / as macros | 1,000 / 100"), "the kept row does not render both ways:\n{out}");
    let (model, out) = run(row("x_unit", Some(1000.0), None));
    assert_eq!(model, "x_unit_defaults", "a whole row with no record was kept:\n{out}");
    let recorded = digest();
    std::fs::write(unit.join("x_unit.v"), "module x_unit(input a, output y); assign y = !a; endmodule\n").unwrap();
    let (model, out) = run(row("x_unit", Some(1000.0), Some(recorded)));
    assert_eq!(model, "x_unit_defaults", "a whole row of other Verilog was kept:\n{out}");
    assert!(out.contains("left out"), "no line says the row was left out:\n{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Table cells, split at unescaped `|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut esc = false;
    for c in line.chars() {
        if c == '|' && !esc {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push(c);
        }
        esc = c == '\\';
    }
    out
}

#[test]
fn readme_is_an_index() {
    let readme = read("README.md");
    let n = readme.lines().count();
    assert!(n <= 150, "README.md has {n} lines (at most 150)");
    for (i, l) in readme.lines().enumerate().filter(|(_, l)| l.starts_with('|')) {
        for c in cells(l) {
            let len = c.trim().chars().count();
            assert!(len <= 300, "README.md:{}: a table cell of {len} characters (at most 300): {}", i + 1, c.trim());
        }
    }
}

/// GitHub's anchor for a heading line: lower case, punctuation but `-` and `_`
/// dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn readme_links_land() {
    let readme = read("README.md");
    let spec = read("docs/spec.md");
    let anchors: Vec<String> =
        spec.lines().filter(|l| l.starts_with('#')).map(slug).collect();
    assert_eq!(slug("### 11.14.1 `titanus-pruner`"), "11141-titanus-pruner");
    let mut links = 0;
    for (i, l) in readme.lines().enumerate() {
        for part in l.split("](").skip(1) {
            let target = &part[..part.find(')').unwrap_or(part.len())];
            if target.starts_with("http") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            assert!(root().join(file).exists(), "README.md:{}: link to a missing file {file}", i + 1);
            if !anchor.is_empty() {
                assert_eq!(file, "docs/spec.md", "README.md:{}: anchor into {file}", i + 1);
                assert!(anchors.iter().any(|a| a == anchor), "README.md:{}: no heading of docs/spec.md has anchor #{anchor}", i + 1);
                links += 1;
            }
        }
    }
    assert!(links >= 13, "README.md links to {links} spec sections; its units table should link each unit");
}

/// A word of 7 to 40 lower-case hex digits with both a digit and a letter
/// (so neither a decimal number nor an English word), not a `0b` literal.
fn commit_hashes(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        for w in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let hex = w.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
            let binary = w.starts_with("0b") && w[2..].chars().all(|c| c == '0' || c == '1');
            if (7..=40).contains(&w.len())
                && hex
                && !binary
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_alphabetic())
            {
                out.push((i + 1, w.to_string()));
            }
        }
    }
    out
}

#[test]
fn spec_names_no_commit() {
    assert_eq!(commit_hashes("at `ea45693`, 1234567, defaced, 0b10101, 0x2C45"), vec![(1, "ea45693".to_string())]);
    let found = commit_hashes(&read("docs/spec.md"));
    assert!(found.is_empty(), "docs/spec.md names commits (history goes to docs/history.md): {found:?}");
}

/// The README's sentence on area names each scheme's NAND2-eq per element
/// per cycle, both sides summed, as the comparison table beside it gives
/// them, from the smallest up (the sentence once kept a figure two
/// re-syntheses old).
#[test]
fn readme_area_sentence_follows_compare_table() {
    let num = |s: &str| s.trim().replace(',', "").parse::<u64>().unwrap_or_else(|e| panic!("{s:?}: {e}"));
    let table = read("docs/compare/compare-summary.md");
    let mut sums: Vec<(String, u64)> = Vec::new();
    for line in table.lines().skip(2) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some((a, b)) = cells.get(6).and_then(|c| c.split_once(" + ")) else { continue };
        let scheme = cells[1].split(',').next().unwrap().to_string();
        sums.push((scheme, num(a) + num(b)));
    }
    assert_eq!(sums.len(), 5, "schemes with an area in docs/compare/compare-summary.md: {sums:?}");
    let readme = read("README.md");
    let lead = "By area (NAND2-eq per element per cycle, both sides; every unit exists): ";
    let at = readme.find(lead).expect("README.md's area sentence") + lead.len();
    let text = readme[at..].split(". ").next().unwrap().replace('\n', " ");
    let named: Vec<(String, u64)> = text
        .split(", ")
        .map(|p| {
            let (name, n) = p.rsplit_once(' ').unwrap_or_else(|| panic!("{p:?} in {text:?}"));
            (name.to_string(), num(n))
        })
        .collect();
    let mut want = sums.clone();
    want.sort_by_key(|(_, n)| *n);
    assert_eq!(named, want, "README.md's area sentence against docs/compare/compare-summary.md");
}
