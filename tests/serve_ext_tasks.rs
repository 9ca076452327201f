//! `pipewright serve` driven by the official TypeScript SDK's v2 client
//! (`@modelcontextprotocol/client`) with the Tasks extension's client
//! (`@modelcontextprotocol/ext-tasks`), over stdio and Streamable HTTP at
//! the 2026-07-28 wire: a served composition called as a task under
//! `io.modelcontextprotocol/tasks`, with progress (its status message),
//! `tasks/cancel` and a failure, each compensated. tests/serve.rs drives the
//! v1 client (`@modelcontextprotocol/sdk`) and the 2025-11-25 tasks.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{Hermetic, ServeHttp, pipewright_in, root, succeeds};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

/// The served file: a three-node composition (two naps, an echo), and two
/// that write an entity to the reference memory server (its file at
/// `memory`) with an undo, then fail or nap until cancelled.
fn served(dir: &Path, memory: &Path) -> PathBuf {
    let memory_bin = root().join("tests/interop/node_modules/.bin/mcp-server-memory");
    let remember = "      - id: create\n        server: memory\n        tool: create_entities\n        args: { entities: [ { name: \"${var.name}\", entityType: person, observations: [ met today ] } ] }\n        compensate:\n          server: memory\n          tool: delete_entities\n          args: { entityNames: [ \"${var.name}\" ] }\n";
    let text = format!(
        "servers:\n  memory: {{ command: \"{}\", env: {{ MEMORY_FILE_PATH: \"{}\" }} }}\n  demo: \"{} demo-server\"\ncompositions:\n  - name: three_steps\n    description: Two naps, then an echo.\n    nodes:\n      - {{ id: one, server: demo, tool: slow, args: {{ ms: 1000 }} }}\n      - {{ id: two, needs: [one], server: demo, tool: slow, args: {{ ms: 1000 }} }}\n      - {{ id: three, needs: [two], server: demo, tool: echo, args: {{ message: \"${{var.word}}\" }} }}\n    output: three\n  - name: remember_then_fail\n    nodes:\n{remember}      - {{ id: boom, needs: [create], server: demo, tool: fail, args: {{ message: \"mail server down after ${{create.entities[0].name}}\" }} }}\n  - name: remember_then_nap\n    nodes:\n{remember}      - {{ id: nap, needs: [create], server: demo, tool: slow, args: {{ ms: 20000 }} }}\n",
        memory_bin.display(),
        memory.display(),
        bin().display(),
    );
    let file = dir.join("tasks.yml");
    std::fs::write(&file, text).expect("write");
    file
}

/// Runs the driver with `args` after its mode and the memory file; its
/// output once every check passed.
fn v2_client(dir: &Path, mode: &str, memory: &Path, args: &[&std::ffi::OsStr]) -> String {
    for package in ["client", "ext-tasks"] {
        let p = root().join(format!(
            "tests/interop/node_modules/@modelcontextprotocol/{package}/package.json"
        ));
        assert!(
            p.exists(),
            "{} is missing: run `npm ci --prefix tests/interop`",
            p.display()
        );
    }
    let text = succeeds(
        Command::new("node")
            .isolated(dir)
            .arg(root().join("tests/interop/serve-ext-tasks.mjs"))
            .arg(mode)
            .arg(memory)
            .args(args),
    );
    assert!(
        text.contains(&format!("serve-ext-tasks {mode}: all passed")),
        "{text}"
    );
    assert!(!text.contains("FAIL"), "{text}");
    text
}

#[test]
fn the_typescript_v2_client_runs_a_served_composition_as_an_extension_task_over_stdio() {
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = dir.path().join("memory.jsonl");
    let file = served(dir.path(), &memory);
    let text = v2_client(
        dir.path(),
        "stdio",
        &memory,
        &[bin().as_os_str(), file.as_os_str()],
    );
    assert!(
        text.contains("ok   - [stdio] tasks/cancel stops the run"),
        "{text}"
    );
}

#[test]
fn the_typescript_v2_client_runs_a_served_composition_as_an_extension_task_over_http() {
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = dir.path().join("memory.jsonl");
    let file = served(dir.path(), &memory);
    let mut serve = pipewright_in(dir.path());
    serve.args(["serve", "--no-save", "--yes"]).arg(&file);
    let http = ServeHttp::start(serve);
    let text = v2_client(
        dir.path(),
        "http",
        &memory,
        &[std::ffi::OsStr::new(&http.url)],
    );
    assert!(
        text.contains("ok   - [http] tasks/cancel stops the run"),
        "{text}"
    );
}
