//! `pipewright lsp` driven by a real LSP client: `tests/lsp/client.py`
//! runs pygls's `LanguageClient` (from the venv `.ci/run` makes) against
//! the built binary over stdio, with the demo server as the file's server.
//! Under CI (`CI` set) a missing venv or pygls fails the test; elsewhere
//! the test says it skipped, on the terminal, past the output capture.

use std::time::Duration;

use common::Hermetic;

mod common;

/// Exit code of client.py when pygls cannot be imported.
const NO_PYGLS: i32 = 3;

fn skip(why: &str) {
    common::skipped(
        "lsp",
        &format!(
            "{why} (python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0 pygls==2.1.1)"
        ),
    );
}

#[test]
fn an_lsp_client_gets_diagnostics_fixes_completion_hover_navigation_and_rename() {
    let python = std::env::var_os("PIPEWRIGHT_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::root().join("target/pyvenv/bin/python"));
    if !python.exists() {
        return skip(&format!("{} is missing", python.display()));
    }
    // A data directory of its own: the client runs a file and the server
    // reads the run it saved.
    let home = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(&python);
    cmd.isolated(home.path())
        .arg(common::root().join("tests/lsp/client.py"))
        .arg(env!("CARGO_BIN_EXE_pipewright"));
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(Duration::from_secs(300))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(NO_PYGLS) {
        return skip(&format!("pygls is not installed in {}", python.display()));
    }
    assert!(
        out.status.success(),
        "the LSP client failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    for check in [
        "the typo'd tool is marked at its line and column",
        "its message names the tool and suggests the right one",
        "a quick fix is offered for the typo",
        "completion after `tool: ` lists the demo server's tools",
        "hover on a tool shows its description and arguments",
        "definition from `${find.users…}` lands on node find's id",
        "rename changes the id and every reference",
        "completion details give the output schema's types",
        "hover on a reference shows the value its last run recorded",
        "completion after `${find.` offers the recorded fields",
        "document symbols nest nodes in their composition",
        "an unknown method is MethodNotFound",
        "after malformed messages the server still answers",
        "the server exits 0 after shutdown and exit",
    ] {
        assert!(
            stdout.contains(&format!("ok: {check}")),
            "not checked: {check}\n{stdout}\n{stderr}"
        );
    }
}
