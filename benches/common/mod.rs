//! What the whole-command benches share: their flags and the binary they
//! time.

use std::path::PathBuf;

/// `--pairs N` from the bench's arguments, else `default`.
pub fn pairs(default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--pairs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// `PIPEWRIGHT_BIN`, else the release build (which must exist).
pub fn release_bin() -> PathBuf {
    let bin = std::env::var_os("PIPEWRIGHT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/pipewright")
        });
    assert!(
        bin.exists(),
        "build the release binary first: cargo build --release"
    );
    bin
}
