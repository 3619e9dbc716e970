//! End-to-end runs of the `kvsim` binary: gen -> profile -> metrics, and
//! the one-line error contract for bad input.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("kvsim-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn kvsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kvsim")).args(args).output().expect("kvsim runs")
}

fn ok(args: &[&str]) -> String {
    let o = kvsim(args);
    assert!(o.status.success(), "kvsim {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Fails with a non-zero status and exactly one line on stderr.
fn fails(args: &[&str]) -> String {
    let o = kvsim(args);
    assert!(!o.status.success(), "kvsim {args:?} should fail");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "kvsim {args:?} stderr: {err:?}");
    assert!(err.starts_with("kvsim: error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn gen_profile_metrics() {
    let d = TempDir::new();
    let (kv, th, js) = (d.path("kv.npy"), d.path("th.json"), d.path("m.json"));
    let out = ok(&["gen", "--runs", "2", "--layers", "3", "--tokens", "32", "--seed", "7", "-o", s(&kv)]);
    assert!(out.contains("[2, 3, 2, 32, 128]"), "{out}");
    let a = sim::npy::read(&kv).unwrap();
    assert_eq!(a.shape, vec![2, 3, 2, 32, 128]);

    ok(&["profile", "--input", s(&kv), "-o", s(&th)]);
    let file = sim::oaken::profile::ThresholdFile::read(&th).unwrap();
    assert_eq!((file.layers, file.entries.len()), (3, 6));
    let raw: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&th).unwrap()).unwrap();
    assert_eq!(raw["format"], "kvforge-oaken-thresholds-1");
    assert_eq!(raw["entries"][1]["kv"], "v");
    assert_eq!(raw["entries"][1]["fp16"].as_array().unwrap().len(), 4);

    for mode in ["plain", "shifted"] {
        let out = ok(&[
            "metrics",
            "--input",
            s(&kv),
            "--thresholds",
            s(&th),
            "--middle-mode",
            mode,
            "--json",
            s(&js),
        ]);
        assert!(out.contains("effective bits/element"), "{out}");
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
        assert_eq!(r["middle_mode"], mode);
        assert_eq!(r["elements"], 2 * 3 * 2 * 32 * 128);
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!((0.06..0.14).contains(&f("outlier_fraction")));
        assert!((f("payload_bits_per_element") - 4.0 - 8.0 * f("outlier_fraction")).abs() < 1e-9);
        assert!((f("bits_per_element") - f("payload_bits_per_element") - 96.0 / 128.0).abs() < 1e-9);
        assert_eq!(f("mmu_count_bits_per_element"), 16.0 / 128.0);
        assert!(f("sqnr_db") > 15.0 && f("sqnr_k_db") > 15.0 && f("sqnr_v_db") > 15.0);
        assert!(f("max_bound_ratio") <= 1.0);
    }

    // same seed, same bytes; a config file with overrides on top
    let kv2 = d.path("kv2.npy");
    let cfg = d.path("gen.toml");
    std::fs::write(&cfg, "runs = 2\nlayers = 3\ntokens = 32\nseed = 99\n").unwrap();
    ok(&["gen", "--config", s(&cfg), "--seed", "7", "-o", s(&kv2)]);
    assert_eq!(std::fs::read(&kv).unwrap(), std::fs::read(&kv2).unwrap());
}

#[test]
fn bad_input_is_one_line() {
    let d = TempDir::new();
    let (kv, th) = (d.path("kv.npy"), d.path("th.json"));
    ok(&["gen", "--runs", "1", "--layers", "1", "--tokens", "4", "--head-dim", "64", "-o", s(&kv)]);
    ok(&["profile", "-i", s(&kv), "-o", s(&th)]);
    let base = ["metrics", "--input", s(&kv), "--thresholds", s(&th)];

    let e = fails(&[&base[..], &["--inlier-bits", "9"]].concat());
    assert!(e.contains("inlier-bits must be in 2..=8"), "{e}");
    let e = fails(&[&base[..], &["--head-dim", "128"]].concat());
    assert!(e.contains("not a multiple of heads x head-dim = 1 x 128"), "{e}");
    let e = fails(&[&base[..], &["--heads", "0"]].concat());
    assert!(e.contains("heads"), "{e}");
    // 64-element rows as two heads of 32: one metadata word per row
    let out = ok(&[&base[..], &["--heads", "2"]].concat());
    assert!(out.contains("x heads 2 x head_dim 32"), "{out}");
    let e = fails(&[&base[..], &["--middle-mode", "fancy"]].concat());
    assert!(e.contains("fancy"), "{e}");
    fails(&[&base[..], &["--bogus"]].concat());
    fails(&[]);
    fails(&["gen"]); // missing -o
    let e = fails(&["profile", "-i", s(&d.path("missing.npy")), "-o", s(&th)]);
    assert!(e.contains("missing.npy"), "{e}");
    let e = fails(&["profile", "-i", s(&kv), "-o", s(&th), "--outer", "0.05"]);
    assert!(e.contains("sum to 1"), "{e}");
    let e = fails(&["metrics", "--input", s(&th), "--thresholds", s(&th)]);
    assert!(e.contains("magic"), "{e}");
    let e = fails(&["metrics", "--input", s(&kv), "--thresholds", s(&kv)]);
    assert!(e.contains("threshold file: not UTF-8"), "{e}");
    let e = fails(&["gen", "--tokens", "0", "-o", s(&kv)]);
    assert!(e.contains("tokens"), "{e}");
    let cfg = d.path("bad.toml");
    std::fs::write(&cfg, "runs = 2\nlayers = \"x\"\n").unwrap();
    let e = fails(&["gen", "--config", s(&cfg), "-o", s(&kv)]);
    assert!(e.contains("line 2"), "{e}");
    std::fs::write(&cfg, "colour = 2\n").unwrap();
    let e = fails(&["gen", "--config", s(&cfg), "-o", s(&kv)]);
    assert!(e.contains("colour"), "{e}");
    let e = fails(&["gen", "--tokens", "2", "-o", s(&d.path("no/such/dir/kv.npy"))]);
    assert!(e.contains("kv.npy"), "{e}");
    // a Fortran-order file
    let mut b = std::fs::read(&kv).unwrap();
    let at = b.windows(5).position(|w| w == b"False").unwrap();
    b.splice(at..at + 5, *b"True ");
    std::fs::write(&kv, b).unwrap();
    let e = fails(&["profile", "-i", s(&kv), "-o", s(&th)]);
    assert!(e.contains("Fortran"), "{e}");
}

/// `kvsim kivi` reads the files `kvsim metrics` reads, reports bits and
/// SQNR with the residual apart, and rejects bad parameters in one line.
#[test]
fn kivi_on_a_metrics_file() {
    let d = TempDir::new();
    let (kv, js) = (d.path("kv.npy"), d.path("kivi.json"));
    ok(&["gen", "--runs", "1", "--layers", "2", "--tokens", "80", "--head-dim", "64", "-o", s(&kv)]);
    let out = ok(&["kivi", "--input", s(&kv), "--group", "16", "--residual", "32", "--json", s(&js)]);
    assert!(out.contains("bits/element, quantized (codes + metadata): 4.0000"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    // K: 80 - 80 mod 32 = 64 tokens quantized; V: 80 - 32 = 48
    assert_eq!(r["k"]["quantized_elements"], 2 * 64 * 64);
    assert_eq!(r["k"]["residual_elements"], 2 * 16 * 64);
    assert_eq!(r["v"]["quantized_elements"], 2 * 48 * 64);
    assert_eq!(r["v"]["residual_elements"], 2 * 32 * 64);
    assert_eq!(r["elements"], 2 * 2 * 80 * 64);
    let f = |k: &str| r[k].as_f64().unwrap();
    // (16 two-bit codes in one word + one metadata word) / 16 elements
    assert_eq!(f("bits_per_element"), 4.0);
    assert_eq!(f("bits_per_element_with_residual"), (4.0 * (112.0 * 128.0) + 16.0 * (48.0 * 128.0)) / (160.0 * 128.0));
    assert!(f("max_bound_ratio") <= 1.0);
    assert!(f("sqnr_db") >= f("sqnr_floor_db"));
    // two heads of 32 per row: the same groups (G divides 32), the same figures
    let two = ok(&["kivi", "--input", s(&kv), "--group", "16", "--residual", "32", "--heads", "2"]);
    assert!(two.contains("heads 2 x head_dim 32"), "{two}");
    let e = fails(&["kivi", "--input", s(&kv), "--bits", "1"]);
    assert!(e.contains("bits must be one of 2, 3, 4, 8, got 1"), "{e}");
    let e = fails(&["kivi", "--input", s(&kv), "--group", "48"]);
    assert!(e.contains("group must be a power of two in 16..=128, got 48"), "{e}");
    let e = fails(&["kivi", "--input", s(&kv), "--group", "128"]);
    assert!(e.contains("group (128) must divide head-dim (64)"), "{e}");
    let e = fails(&["kivi", "--input", s(&kv), "--residual", "40"]);
    assert!(e.contains("residual (40) must be a multiple of group (32)"), "{e}");
    let e = fails(&["kivi", "--input", s(&kv), "--head-dim", "128"]);
    assert!(e.contains("not a multiple of heads x head-dim = 1 x 128"), "{e}");
    let e = fails(&["kivi", "--input", s(&kv), "--heads", "0"]);
    assert!(e.contains("heads"), "{e}");
}

/// `kvsim packkv` reads the files `kvsim metrics` reads, reports both
/// bit counts, leaves the tail after the last full block in FP16, and
/// rejects bad parameters in one line.
#[test]
fn packkv_on_a_metrics_file() {
    let d = TempDir::new();
    let (kv, js) = (d.path("kv.npy"), d.path("packkv.json"));
    ok(&["gen", "--runs", "1", "--layers", "2", "--tokens", "80", "--head-dim", "64", "-o", s(&kv)]);
    let out = ok(&["packkv", "--input", s(&kv), "--block", "32", "--json", s(&js)]);
    assert!(out.contains("authors' count"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    // 80 tokens: two blocks of 32 quantized, 16 left in FP16
    assert_eq!(r["k"]["quantized_elements"], 2 * 64 * 64);
    assert_eq!(r["v"]["residual_elements"], 2 * 16 * 64);
    let f = |a: &str, b: &str| r[a][b].as_f64().unwrap();
    assert_eq!(f("bits_none", "token_meta"), 0.5); // 32 bits per 64 elements
    assert!(f("bits_none", "total") > f("bits_none", "authors_count"));
    assert!(f("bits_median", "permutation") > 0.0);
    assert!(r["max_bound_ratio"].as_f64().unwrap() <= 1.0);
    assert!(r["sqnr_db"].as_f64().unwrap() >= r["sqnr_floor_db"].as_f64().unwrap());
    let e = fails(&["packkv", "--input", s(&kv), "--levels-k", "1"]);
    assert!(e.contains("levels must be in 2..=255, got 1"), "{e}");
    let e = fails(&["packkv", "--input", s(&kv), "--block", "48"]);
    assert!(e.contains("block must be a power of two in 16..=128, got 48"), "{e}");
    let e = fails(&["packkv", "--input", s(&kv), "--block", "16", "--pack", "32"]);
    assert!(e.contains("pack (32) must divide block (16)"), "{e}");
    let e = fails(&["packkv", "--input", s(&kv), "--head-dim", "128"]);
    assert!(e.contains("not a multiple of heads x head-dim = 1 x 128"), "{e}");
}

/// `kvsim compare` end to end (spec §16.5): a recorded Q of two query
/// heads per KV head, a subset of the schemes, every output written; bad
/// shapes and scheme names are one line with status 2.
#[test]
fn compare_writes_its_outputs() {
    let d = TempDir::new();
    let (kv, q, out) = (d.path("kv.npy"), d.path("q.npy"), d.path("out"));
    ok(&["gen", "--runs", "1", "--layers", "1", "--tokens", "200", "--head-dim", "128", "-o", s(&kv)]);
    // Q: the set's own K rows twice over (2 query heads of 128)
    let set = sim::kvset::KvSet::read(&kv).unwrap();
    let k = set.sample(0, 0, sim::oaken::thresholds::Kv::K);
    let qd: Vec<u16> = k.chunks(128).flat_map(|r| [r, r].concat()).collect();
    sim::npy::write(&q, &[1, 1, 1, 200, 256], &qd).unwrap();
    let md = ok(&["compare", "-i", s(&kv), "--q", s(&q), "--schemes", "intn,hack", "--ppa", &sim::workspace_root().join("docs/ppa.json").to_string_lossy(), "-o", s(&out)]);
    assert!(md.contains("Q recorded, 2 query heads") && md.contains("| HACK | Π = 64") && !md.contains("| KIVI | 2 bits"), "{md}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    // positions 199, 162, .., 14: 6, two query heads each
    assert_eq!(r["rows"][0]["queries"], 12);
    assert_eq!(r["hardware"].as_array().unwrap().len(), 6);
    for f in ["compare.md", "compare-bits.svg", "compare-area.svg"] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 1000, "{f}");
    }
    let o = kvsim(&["compare", "-i", s(&kv), "--heads", "3"]);
    assert_eq!(o.status.code(), Some(2));
    let e = fails(&["compare", "-i", s(&kv), "--schemes", "oaken,zip"]);
    assert!(e.contains("unknown scheme `zip`"), "{e}");
    let e = fails(&["compare", "-i", s(&kv), "--heads", "2", "--head-dim", "32"]);
    assert!(e.contains("must equal the set's row length (128)"), "{e}");
}
