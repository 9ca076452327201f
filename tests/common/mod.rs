//! What several integration tests share: the repository root and the
//! Python venv with the official MCP SDK that `.ci/run` makes.

use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv `.ci/run` makes (`target/pyvenv`, with `pip install mcp`), or
/// `PIPEWRIGHT_PYTHON`; a missing one fails the test with the command that
/// makes it.
pub fn python() -> PathBuf {
    let p = std::env::var_os("PIPEWRIGHT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/pyvenv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0",
        p.display()
    );
    p
}
