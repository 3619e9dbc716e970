//! Functional coverage: named counters of the behaviours a unit's tests
//! must reach (backpressure, each error path, each degenerate input, each
//! limit). Tests count as they go, print the table, and fail when a point
//! was never reached at the default depth, so a stimulus change that stops
//! reaching a behaviour fails the suite instead of passing silently.
//! Below that depth the check is off, and the first check of the process
//! says so (`check_off`).

use std::fmt::Write;
use std::sync::{Mutex, Once};

/// Why this run does not check coverage, or `None` when it does: the
/// check needs the default case counts or more (`prop::full_depth`), and
/// `KVFORGE_CASES` (a fixed count) or `KVFORGE_DEPTH` below 1 lowers them.
pub fn check_off() -> Option<String> {
    if let Some(v) = std::env::var_os("KVFORGE_CASES") {
        return Some(format!(
            "KVFORGE_CASES={} fixes the cases per property: the coverage check is off (unset it to check coverage)",
            v.to_string_lossy()
        ));
    }
    let d = crate::prop::depth();
    (d < 1.0).then(|| format!("KVFORGE_DEPTH={d} is below 1: the coverage check is off"))
}

/// Prints `check_off`'s reason once per process, to the stderr handle
/// itself: libtest captures `eprintln!` of passing tests, and a warning
/// nobody sees would leave the check silently off.
fn warn_check_off(why: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "warning: {why}");
    });
}

/// Extra rounds of random cases `Coverage::close` always allows.
pub const CLOSE_ROUNDS: u32 = 2;
/// Further rounds, up to `CLOSE_MAX_ROUNDS` in all, while the closure has
/// taken less than this: a cheap sweep (a netlist at a quarter of the
/// cases, 0.1 s a round) then gets the cases a rare point needs, and a
/// slow one stops at `CLOSE_ROUNDS`.
pub const CLOSE_SECONDS: f64 = 20.0;
pub const CLOSE_MAX_ROUNDS: u32 = 16;

pub struct Coverage {
    name: String,
    points: Mutex<Vec<(&'static str, u64)>>,
}

impl Coverage {
    /// A counter per point, all at zero.
    pub fn new(name: &str, points: &[&'static str]) -> Coverage {
        let mut seen: Vec<&str> = points.to_vec();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), points.len(), "coverage {name}: a point is listed twice");
        Coverage { name: name.to_string(), points: Mutex::new(points.iter().map(|&p| (p, 0)).collect()) }
    }

    /// Adds `n` to `point` (which must be declared: a typo must not
    /// create a point that is never checked).
    pub fn add(&self, point: &str, n: u64) {
        let mut ps = self.points.lock().unwrap();
        match ps.iter_mut().find(|(p, _)| *p == point) {
            Some((_, c)) => *c += n,
            None => panic!("coverage {}: no point '{point}'", self.name),
        }
    }

    pub fn hit(&self, point: &str) {
        self.add(point, 1);
    }

    /// `hit` when `cond`.
    pub fn hit_if(&self, point: &str, cond: bool) {
        self.add(point, cond as u64);
    }

    /// Adds every count of `other` (same points) to this table.
    pub fn absorb(&self, other: &Coverage) {
        let theirs = other.points.lock().unwrap().clone();
        for (p, c) in theirs {
            self.add(p, c);
        }
    }

    pub fn count(&self, point: &str) -> u64 {
        let ps = self.points.lock().unwrap();
        ps.iter().find(|(p, _)| *p == point).map(|(_, c)| *c).unwrap_or_else(|| panic!("no point '{point}'"))
    }

    /// The table of counts, one point per line.
    pub fn report(&self) -> String {
        let ps = self.points.lock().unwrap();
        let w = ps.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
        let mut s = format!("coverage {}:\n", self.name);
        for (p, c) in ps.iter() {
            writeln!(s, "  {p:<w$}  {c:>9}{}", if *c == 0 { "  <- never reached" } else { "" }).unwrap();
        }
        s
    }

    /// Also keeps the table in `$KVFORGE_COVERAGE_DIR/<name>.txt` when that
    /// is set: cargo hides a passing test's output, and `make test` prints
    /// these files after the suite.
    fn save(&self, report: &str) {
        if let Some(dir) = std::env::var_os("KVFORGE_COVERAGE_DIR") {
            let file = self
                .name
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("_");
            let dir = std::path::PathBuf::from(dir);
            let _ = std::fs::create_dir_all(&dir);
            if let Err(e) = std::fs::write(dir.join(format!("{file}.txt")), report) {
                eprintln!("coverage {}: cannot save the table in {}: {e}", self.name, dir.display());
            }
        }
    }

    /// Prints the table; panics, naming them, if any point is at zero and
    /// the run is at least at the default depth (`check_off` is `None`).
    pub fn check(&self) {
        let all: Vec<&str> = self.points.lock().unwrap().iter().map(|(p, _)| *p).collect();
        self.check_points(&all);
    }

    /// Required points still at zero.
    fn unreached(&self, required: &[&str]) -> Vec<&'static str> {
        let ps = self.points.lock().unwrap();
        ps.iter().filter(|(p, c)| *c == 0 && required.contains(p)).map(|(p, _)| *p).collect()
    }

    /// Coverage closure. Random stimulus reaches a rare point in most runs
    /// but not in every one (a point reached 3 times a run on average is
    /// missed about once in 20 runs), and a suite that fails at random
    /// teaches its readers to ignore it. So while a point of `required` is
    /// at zero, `more` runs again (fresh random cases, counted into this
    /// table): `CLOSE_ROUNDS` times, then more while the rounds so far took
    /// under `CLOSE_SECONDS`, at most `CLOSE_MAX_ROUNDS`; then
    /// `check_points` judges. The rounds only add cases, so a bug the first
    /// round would catch is still caught. A fixed seed (`KVFORGE_SEED`,
    /// `PROPTEST_RNG_SEED`) replays its run exactly and gets no extra round.
    pub fn close(&self, required: &[&str], more: impl FnMut()) {
        self.close_within(required, CLOSE_SECONDS, more)
    }

    /// `close` with `seconds` in place of `CLOSE_SECONDS`.
    pub fn close_within(&self, required: &[&str], seconds: f64, mut more: impl FnMut()) {
        if check_off().is_some() || crate::prop::seed_is_fixed() {
            return;
        }
        let t = std::time::Instant::now();
        for round in 1..=CLOSE_MAX_ROUNDS {
            let zero = self.unreached(required);
            if zero.is_empty() || (round > CLOSE_ROUNDS && t.elapsed().as_secs_f64() >= seconds) {
                return;
            }
            println!("coverage {}: closure round {round} for: {}", self.name, zero.join(", "));
            more();
        }
    }

    /// `close` over every point.
    pub fn close_all(&self, more: impl FnMut()) {
        let all: Vec<&str> = self.points.lock().unwrap().iter().map(|(p, _)| *p).collect();
        self.close(&all, more);
    }

    /// `check` for `required` points only (the others are reported).
    pub fn check_points(&self, required: &[&str]) {
        let off = check_off();
        let mut report = self.report();
        if let Some(why) = &off {
            warn_check_off(why);
            writeln!(report, "  ({why})").unwrap();
        }
        println!("{report}");
        self.save(&report);
        for r in required {
            self.count(r); // must exist
        }
        let zero = self.unreached(required);
        if !zero.is_empty() {
            if off.is_none() {
                panic!("coverage {}: never reached: {}\n{}", self.name, zero.join(", "), self.report());
            }
            eprintln!("coverage {}: not reached at this depth: {}", self.name, zero.join(", "));
        }
    }
}
