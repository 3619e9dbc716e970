//! kvforge golden models: the executable form of docs/spec.md.
//!
//! Every hardware unit in `hdl` has a model here, written from the spec and
//! the papers. The co-simulation tests in `tb` compare the RTL against these
//! models bit for bit.
pub mod attention;
pub mod compare;
pub mod fp16;
pub mod hack;
pub mod kvgen;
pub mod kivi;
pub mod kvset;
pub mod mem;
pub mod metrics;
pub mod npy;
pub mod oaken;
pub mod packkv;
pub mod param_def;
pub mod shifter;
pub mod testgen;
pub mod titanus;

/// The workspace's root folder, for tests that read its files: the folder
/// of the package whose test runs (`CARGO_MANIFEST_DIR` at run time, which
/// `cargo test` and constraints/run_tests.py set), one up; else this
/// crate's folder at build time, one up. Not `env!` alone: cargo finds a
/// test binary up to date in a build folder that clones at other paths
/// share (.ci/run), and it keeps the path of the clone that built it.
pub fn workspace_root() -> std::path::PathBuf {
    let pkg = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
    let pkg = pkg.unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    pkg.parent().expect("a package folder inside the workspace").to_path_buf()
}
