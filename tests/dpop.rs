//! DPoP end to end (RFC 9449, SEP-1932): the real binary logs in to the
//! official conformance suite's `auth/dpop-nonce` servers (an authorization
//! server and an MCP server that want DPoP-bound tokens and a nonce at
//! each), runs a pipeline twice (`PIPEWRIGHT_LOG=debug`, a cassette, saved
//! runs) and
//! says what `auth status` shows; the suite's own checks pass (a proof at
//! the token request, the `DPoP` scheme, a fresh proof on every request,
//! both nonce retries). Then no file pipewright wrote but the token store,
//! and nothing it printed, holds the access token, the refresh token or
//! the proof key's private part; the store is the owner's only.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
use common::{Hermetic, python, root};

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The driver the suite runs as its client (`driver SERVER_URL`): the
/// commands a user would type, each one's output kept in `$PW_WORK`.
const DRIVER: &str = r#"#!/bin/sh
set -eu
url="$1"
w="$PW_WORK"
printf 'servers:\n  s:\n    url: "%s"\n    auth:\n      dpop: required\npipe:\n  - id: call\n    server: s\n    tool: test-tool\n    args: {}\n' "$url" >"$w/pipeline.yml"
"$PW_BIN" run "$w/pipeline.yml" --log-level debug --record "$w/calls.cassette.json" --timeout 20s >"$w/run.out" 2>"$w/run.err"
"$PW_BIN" run "$w/pipeline.yml" --log-level debug --format json --timeout 20s >"$w/run.json" 2>"$w/run2.err"
"$PW_BIN" runs show latest >"$w/show.out" 2>&1
"$PW_BIN" auth status "$url" >"$w/status.out" 2>&1
"$PW_BIN" auth status "$url" --json >"$w/status.json" 2>&1
echo done >"$w/done"
"#;

#[test]
fn a_dpop_login_passes_the_suites_checks_and_no_secret_is_written() {
    let suite = root().join("tests/conformance/node_modules");
    let node = suite.join(".bin/node");
    let runner = suite.join("conformance-next/dist/index.js");
    assert!(
        node.exists() && runner.exists(),
        "the conformance suite is missing: npm ci --prefix tests/conformance"
    );
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let work = home.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let results = tempfile::tempdir().expect("results dir");
    let driver = home.join("driver.sh");
    std::fs::write(&driver, DRIVER).expect("driver");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&driver, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let opener = format!(
        "{} -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()'",
        python().display()
    );
    let mut cmd = Command::new(&node);
    cmd.isolated(home);
    for var in [
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, home.join(var.to_ascii_lowercase()));
    }
    let out = cmd
        .env("HOME", home)
        .env("PIPEWRIGHT_AUTH_PROMPT", "browser")
        .env("PIPEWRIGHT_LOG", "debug")
        .env("BROWSER", &opener)
        .env("PW_BIN", env!("CARGO_BIN_EXE_pipewright"))
        .env("PW_WORK", &work)
        .arg(&runner)
        .args(["client", "--command"])
        .arg(&driver)
        .args([
            "--scenario",
            "auth/dpop-nonce",
            "--spec-version",
            "2026-07-28",
            "--force",
            "--timeout",
            "90000",
            "-o",
        ])
        .arg(results.path())
        .stdin(Stdio::null())
        .output()
        .expect("the suite runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |name: &str| std::fs::read_to_string(work.join(name)).unwrap_or_default();
    assert!(
        work.join("done").exists(),
        "the driver did not finish:\n{log}\nrun: {}{}\nsecond run: {}",
        read("run.out"),
        read("run.err"),
        read("run2.err")
    );

    // The suite's checks, the DPoP ones among them, all pass.
    let mut found = Vec::new();
    files(results.path(), &mut found);
    let checks: Vec<Value> = found
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "checks.json"))
        .flat_map(|p| {
            serde_json::from_str::<Vec<Value>>(&std::fs::read_to_string(p).expect("checks"))
                .expect("checks JSON")
        })
        .collect();
    let status = |id: &str| {
        checks
            .iter()
            .filter(|c| c["id"] == id)
            .map(|c| c["status"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    for id in [
        "sep-1932-client-token-request-proof",
        "sep-1932-client-dpop-auth-scheme",
        "sep-1932-client-fresh-proof",
        "sep-1932-client-as-nonce",
        "sep-1932-client-rs-nonce",
    ] {
        assert_eq!(status(id), ["SUCCESS"], "{id}:\n{log}");
    }
    let failed: Vec<&Value> = checks
        .iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(out.status.success(), "{log}");

    // One login, stored 0600, DPoP-bound, with its key.
    let mut stored = Vec::new();
    files(&home.join("data/auth"), &mut stored);
    assert_eq!(stored.len(), 1, "{stored:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&stored[0])
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{}", stored[0].display());
    }
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(&stored[0]).expect("record")).expect("json");
    let response = &record["credentials"]["token_response"];
    assert!(
        response["token_type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
        "{response}"
    );
    let mut secrets: Vec<String> = vec![
        response["access_token"].as_str().expect("token").to_owned(),
        record["dpop"]["d"]
            .as_str()
            .expect("the key's d")
            .to_owned(),
    ];
    if let Some(refresh) = response["refresh_token"].as_str() {
        secrets.push(refresh.to_owned());
    }
    assert!(secrets.iter().all(|s| s.len() >= 32), "{}", secrets.len());

    // `auth status` says the token is bound.
    assert!(
        read("status.out").contains("DPoP-bound"),
        "{}",
        read("status.out")
    );
    let shown: Value = serde_json::from_str(&read("status.json")).expect("status JSON");
    assert_eq!(shown[0]["dpop_bound"], true, "{shown}");

    // Nothing else pipewright wrote or printed holds a secret.
    let mut written = Vec::new();
    files(home, &mut written);
    let written: Vec<PathBuf> = written.into_iter().filter(|p| p != &stored[0]).collect();
    for expected in ["calls.cassette.json", "run.json", "run.err"] {
        assert!(
            written.iter().any(|p| p.ends_with(expected)),
            "{expected} was written: {written:?}"
        );
    }
    assert!(
        written
            .iter()
            .any(|p| p.starts_with(home.join("data")) && !p.starts_with(home.join("data/auth"))),
        "the runs were saved: {written:?}"
    );
    assert!(
        read("run.err").contains("DEBUG"),
        "debug logs were written: {}",
        read("run.err")
    );
    for path in &written {
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("read")).into_owned();
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "a secret in {}",
                path.display()
            );
        }
    }
    for secret in &secrets {
        assert!(
            !log.contains(secret.as_str()),
            "a secret in the suite's log"
        );
    }
}
