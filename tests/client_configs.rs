//! Servers taken from other clients' config files — Claude Desktop
//! (`mcpServers`), VS Code (`servers`, JSON with comments) and Claude Code's
//! `.mcp.json` — with their `${env:X}` / `${X}` / `${X:-default}`
//! substitutions, run against real demo servers over stdio and HTTP.

use std::path::Path;

use assert_cmd::Command;
use pipewright::demo_server;
use predicates::prelude::*;
use serde_json::Value;

mod common;

fn pw() -> Command {
    Command::from_std(common::pipewright())
}

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("pipewright")
        .display()
        .to_string()
}

const PIPE: &str = "pipe:\n  - { id: sum, tool: add, args: { a: 2, b: 3 } }\n";

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&p, text).expect("writes");
    p
}

#[test]
fn claude_desktop_entry_named_by_from_runs_with_env_substituted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        "claude_desktop_config.json",
        &format!(
            r#"{{"mcpServers": {{
  "other": {{"command": "true"}},
  "demo": {{"command": "{}", "args": ["${{env:PW_TEST_SUBCOMMAND}}"], "env": {{"LABEL": "x"}}}}
}}}}"#,
            bin()
        ),
    );
    let file = write(
        dir.path(),
        "p.yml",
        &format!(
            "servers:\n  d: {{ from: \"{}\", name: demo }}\n{PIPE}",
            cfg.display()
        ),
    );
    pw().args(["run", "--no-save"])
        .arg(&file)
        .env("PW_TEST_SUBCOMMAND", "demo-server")
        .assert()
        .success();
    let out = pw()
        .args(["run", "--no-save"])
        .arg(&file)
        .env_remove("PW_TEST_SUBCOMMAND")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("PW_TEST_SUBCOMMAND") && err.contains("not set"),
        "{err}"
    );
    // A name the file lacks is reported with the names it has.
    let wrong = write(
        dir.path(),
        "q.yml",
        &format!(
            "servers:\n  d: {{ from: \"{}\", name: dmeo }}\n{PIPE}",
            cfg.display()
        ),
    );
    let out = pw()
        .args(["run", "--no-save"])
        .arg(&wrong)
        .output()
        .expect("runs");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("has no server `dmeo`; it has: other, demo")
    );
}

#[test]
fn vscode_mcp_json_with_comments_and_env_colon_substitution() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        ".vscode/mcp.json",
        r#"{
  // VS Code's own shape: `servers`, a `type`, JSON with comments.
  "servers": {
    "demo": { "type": "stdio", "command": "${env:PW_TEST_BIN}", "args": ["demo-server"], },
  },
}"#,
    );
    let file = write(dir.path(), "p.yml", PIPE);
    let out = pw()
        .args(["run", "--no-save", "--format", "json", "--servers-from"])
        .arg(&cfg)
        .arg(&file)
        .env("PW_TEST_BIN", bin())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(t["nodes"]["sum"]["output"]["sum"], 5);
    // `servers list` shows what it found, values of env and headers hidden.
    pw().args(["servers", "list", "--servers-from"])
        .arg(&cfg)
        .assert()
        .success()
        .stdout(
            predicates::str::contains("demo").and(predicates::str::contains(
                "stdio  ${env.PW_TEST_BIN} demo-server",
            )),
        );
}

#[tokio::test(flavor = "multi_thread")]
async fn dot_mcp_json_http_entry_with_secret_header_and_default() {
    let (addr, server) = demo_server::spawn_http("127.0.0.1:0").await.expect("spawn");
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        ".mcp.json",
        r#"{"mcpServers": {"remote": {"type": "http",
  "url": "http://${PW_TEST_HOST:-HOSTPORT}/mcp",
  "headers": {"Authorization": "Bearer ${PW_TEST_TOKEN}"}}}}"#
            .replace("HOSTPORT", &addr.to_string())
            .as_str(),
    );
    let file = write(
        dir.path(),
        "p.yml",
        "pipe:\n  - { id: e, tool: echo, args: { message: hello } }\n",
    );
    let out = tokio::task::spawn_blocking(move || {
        pw().args(["run", "--no-save", "--format", "json", "--servers-from"])
            .arg(&cfg)
            .arg(&file)
            .env_remove("PW_TEST_HOST")
            .env("PW_TEST_TOKEN", "sekrit-4711")
            .output()
            .expect("runs")
    })
    .await
    .expect("joins");
    server.shutdown().await.expect("the server stops");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(t["nodes"]["e"]["output"], "hello");
    assert!(
        !stdout.contains("sekrit-4711"),
        "the header value is a secret"
    );
}

#[test]
fn servers_list_searches_the_usual_places() {
    let home = tempfile::tempdir().expect("tempdir");
    let project = tempfile::tempdir().expect("tempdir");
    write(
        home.path(),
        ".config/Claude/claude_desktop_config.json",
        r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}"#,
    );
    write(
        project.path(),
        ".mcp.json",
        r#"{"mcpServers": {"api": {"type": "http", "url": "https://api.example.test/mcp", "headers": {"X-Key": "${KEY}"}}}}"#,
    );
    let out = pw()
        .args(["servers", "list"])
        .current_dir(project.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("memory") && text.contains("npx -y @modelcontextprotocol/server-memory"),
        "{text}"
    );
    assert!(
        text.contains("api") && text.contains("(headers: X-Key)"),
        "{text}"
    );
    assert!(
        !text.contains("${KEY}"),
        "header values stay hidden: {text}"
    );
}
