//! Tool runs whose result is a function of their inputs (a lint, an
//! elaboration, a timing report), kept in the model cache so that a run
//! with no hardware change repeats none of them.
//!
//! The key is the SHA-256 of the tools' identities (version strings the
//! caller gives), the program and its arguments, the working folder, the
//! variables set on the command, and the name and content of every input
//! file (folders walked in name order). Paths under the scratch folder
//! `root`, in the arguments and in the files alike, enter the key relative
//! to it, so that two runs from two scratch folders share an entry. Only a successful run is kept: a failure runs
//! again next time, and is reported with the tool's whole output.

use super::store::{key, Outcome, Store};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when what a key covers changes.
const VERSION: &str = "tool-run v1";

/// A tool run: `cmd` reading `inputs` (files or folders) under `root`.
pub struct Run<'a> {
    /// What the run is, for errors ("fusesoc lint of ...").
    pub what: String,
    pub cmd: Command,
    /// Identity of every tool the run reaches (e.g. `yosys -V`).
    pub tools: Vec<String>,
    pub inputs: Vec<PathBuf>,
    /// Scratch folder the paths of `cmd` and `inputs` lie under.
    pub root: &'a Path,
}

impl Run<'_> {
    fn rel(&self, s: &str) -> String {
        s.replace(&*self.root.to_string_lossy(), "<root>")
    }

    fn key(&self) -> Result<String, String> {
        let mut parts: Vec<Vec<u8>> = vec![VERSION.into()];
        parts.extend(self.tools.iter().map(|t| t.as_bytes().to_vec()));
        parts.push(self.rel(&self.cmd.get_program().to_string_lossy()).into());
        parts.extend(self.cmd.get_args().map(|a| self.rel(&a.to_string_lossy()).into_bytes()));
        if let Some(d) = self.cmd.get_current_dir() {
            parts.push(format!("cwd {}", self.rel(&d.to_string_lossy())).into());
        }
        for (k, v) in self.cmd.get_envs() {
            let v = v.map(|v| self.rel(&v.to_string_lossy())).unwrap_or_default();
            parts.push(format!("env {}={v}", k.to_string_lossy()).into());
        }
        for i in &self.inputs {
            for f in files(i)? {
                let text = std::fs::read(&f).map_err(|e| format!("{}: cannot read {}: {e}", self.what, f.display()))?;
                parts.push(self.rel(&f.to_string_lossy()).into());
                parts.push(match String::from_utf8(text) {
                    Ok(t) => self.rel(&t).into(),
                    Err(e) => e.into_bytes(),
                });
            }
        }
        let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
        Ok(key(&refs))
    }

    /// The run's standard output and error: the kept text if this exact
    /// run succeeded before, else the text of running it now (an error
    /// holding that text if it fails).
    pub fn output(mut self, store: &Store) -> Result<(String, Outcome), String> {
        let k = self.key()?;
        let what = self.what.clone();
        let (dir, outcome) = store.get_or_build("tool-runs", &k, |tmp| {
            let out = self.cmd.output().map_err(|e| format!("{what}: cannot run {:?}: {e}", self.cmd))?;
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            if !out.status.success() {
                return Err(format!("{what} failed ({}):\n{text}", out.status));
            }
            std::fs::write(tmp.join("output.txt"), text).map_err(|e| format!("{what}: {e}"))
        })?;
        let text = std::fs::read_to_string(dir.join("output.txt")).map_err(|e| format!("{what}: {e}"))?;
        Ok((text, outcome))
    }
}

/// `p` if a file, else every file under it, in name order.
fn files(p: &Path) -> Result<Vec<PathBuf>, String> {
    if !p.is_dir() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
        .map_err(|e| format!("cannot list {}: {e}", p.display()))?
        .map(|e| e.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    let mut out = vec![];
    for e in entries {
        out.extend(files(&e)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kvforge-memo-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("in")).unwrap();
        d
    }

    /// Prints the input and leaves a mark that it ran.
    fn cat(root: &Path) -> Run<'_> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("cat {0}/in/a; echo ran >> {0}/ran", root.display()));
        Run { what: "cat".into(), cmd, tools: vec!["sh".into()], inputs: vec![root.join("in")], root }
    }

    /// A second scratch folder with the same inputs (up to their own
    /// folder's name) hits without running;
    /// a changed input, tool identity or argument misses; a failure is
    /// never kept.
    #[test]
    fn keyed_by_inputs_tools_and_arguments() {
        let base = std::env::temp_dir().join(format!("kvforge-memo-store-{}", std::process::id()));
        let store = Store::new(&base);
        let (a, b) = (scratch("a"), scratch("b"));
        for d in [&a, &b] {
            std::fs::write(d.join("in/a"), "one\n").unwrap();
            // a script naming its own folder, as sta.tcl does
            std::fs::write(d.join("in/p"), format!("read {}/in/a\n", d.display())).unwrap();
        }
        assert_eq!(cat(&a).output(&store).unwrap(), ("one\n".to_string(), Outcome::Built));
        assert_eq!(cat(&b).output(&store).unwrap(), ("one\n".to_string(), Outcome::Hit));
        assert!(!b.join("ran").exists(), "a hit ran the command");
        std::fs::write(b.join("in/a"), "two\n").unwrap();
        assert_eq!(cat(&b).output(&store).unwrap(), ("two\n".to_string(), Outcome::Built));
        let mut r = cat(&b);
        r.tools = vec!["sh 2".into()];
        assert_eq!(r.output(&store).unwrap().1, Outcome::Built);
        let mut r = cat(&b);
        r.cmd.arg("x");
        assert_eq!(r.output(&store).unwrap().1, Outcome::Built);
        for _ in 0..2 {
            let mut cmd = Command::new("sh");
            cmd.args(["-c", "echo no; exit 3"]);
            let e = Run { what: "fail".into(), cmd, tools: vec![], inputs: vec![], root: &a }.output(&store).unwrap_err();
            assert!(e.contains("fail failed") && e.contains("no"), "{e}");
        }
        for d in [&a, &b, &base] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
