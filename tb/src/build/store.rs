//! The model cache: a content-addressed folder outside the clone.
//!
//! Every entry is `<root>/<kind>/<key>/`, `key` a SHA-256 of everything
//! that shapes the entry (see `build`). An entry is built in a private
//! folder under `<root>/tmp/` and renamed into place when complete, so a
//! reader never sees half an entry; a lock file per key makes a second
//! process wait for the first instead of building the same thing twice.
//! Nothing is ever modified once published, so concurrent users are safe.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Layout version: bump when the entry format changes.
const LAYOUT: &str = "v1";

/// The cache folder: `$KVFORGE_MODEL_CACHE`, else
/// `$XDG_CACHE_HOME/kvforge/models`, else `~/.cache/kvforge/models`.
pub fn default_root() -> PathBuf {
    if let Some(d) = std::env::var_os("KVFORGE_MODEL_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    cache_base().join("kvforge").join("models")
}

/// The user's cache folder: `$XDG_CACHE_HOME`, else `~/.cache`.
pub fn cache_base() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| std::env::temp_dir().join("kvforge-cache"))
}

#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// How an entry was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Found complete in the cache.
    Hit,
    /// Built by this call.
    Built,
}

impl Store {
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into().join(LAYOUT) }
    }

    pub fn default_store() -> Store {
        Store::new(default_root())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn entry(&self, kind: &str, key: &str) -> PathBuf {
        self.root.join(kind).join(key)
    }

    fn complete(dir: &Path) -> bool {
        dir.join(".complete").exists()
    }

    /// Whether entry (`kind`, `key`) is built and published.
    pub fn contains(&self, kind: &str, key: &str) -> bool {
        Self::complete(&self.entry(kind, key))
    }

    /// The folder of entry (`kind`, `key`), built by `build` into an empty
    /// folder if the cache does not hold it yet.
    pub fn get_or_build(
        &self,
        kind: &str,
        key: &str,
        build: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<(PathBuf, Outcome), String> {
        let dir = self.entry(kind, key);
        if Self::complete(&dir) {
            return Ok((dir, Outcome::Hit));
        }
        let io = |what: &str, p: &Path, e: std::io::Error| format!("model cache: {what} {}: {e}", p.display());
        for d in [self.root.join(kind), self.root.join("tmp"), self.root.join("locks")] {
            std::fs::create_dir_all(&d).map_err(|e| io("cannot create", &d, e))?;
        }
        let lock_path = self.root.join("locks").join(format!("{kind}-{key}.lock"));
        let lock = File::create(&lock_path).map_err(|e| io("cannot create", &lock_path, e))?;
        lock.lock().map_err(|e| io("cannot lock", &lock_path, e))?;
        // another process may have built it while we waited
        if Self::complete(&dir) {
            return Ok((dir, Outcome::Hit));
        }
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp = self.root.join("tmp").join(format!(
            "{kind}-{key}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| io("cannot create", &tmp, e))?;
        if let Err(e) = build(&tmp) {
            // keep the failed folder's logs next to the error
            return Err(format!("{e}\n(build folder kept: {})", tmp.display()));
        }
        std::fs::write(tmp.join(".complete"), b"").map_err(|e| io("cannot write in", &tmp, e))?;
        if dir.exists() && !Self::complete(&dir) {
            // an incomplete leftover (a rename is atomic, so only an older
            // layout could leave one): replace it
            std::fs::remove_dir_all(&dir).map_err(|e| io("cannot remove", &dir, e))?;
        }
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            if !Self::complete(&dir) {
                return Err(io("cannot publish", &dir, e));
            }
            // published meanwhile by a process that ignored the lock: same content
            let _ = std::fs::remove_dir_all(&tmp);
        }
        // The lock file stays: removing it would let a waiter on the old
        // file and a newcomer on a new one both build.
        drop(lock);
        Ok((dir, Outcome::Built))
    }
}

/// Hex SHA-256 of `parts`, each length-prefixed so that no two part lists
/// collide by concatenation.
pub fn key(parts: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
