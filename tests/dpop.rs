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
use common::{Hermetic, oauth_server, python, root};

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

/// The server's record of what it saw (`/debug/events`), its DPoP checks.
fn dpop_events(url: &str) -> Vec<Value> {
    let base = url.trim_end_matches("/mcp");
    let out = Command::new(python())
        .hermetic()
        .args([
            "-c",
            "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())",
        ])
        .arg(format!("{base}/debug/events"))
        .output()
        .expect("python runs");
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("events JSON");
    all.into_iter().filter(|e| e["kind"] == "dpop").collect()
}

/// The binary with every directory it reads under `home`, allowed to log
/// in by having the venv's Python fetch the authorization URL.
fn pw(home: &Path) -> Command {
    let mut cmd = common::pipewright();
    cmd.isolated(home);
    for var in [
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, home.join(var.to_ascii_lowercase()));
    }
    let opener = format!(
        "{} -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()'",
        python().display()
    );
    cmd.env("PIPEWRIGHT_AUTH_PROMPT", "browser")
        .env("BROWSER", opener)
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd`, asserting it succeeds: its stdout.
fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("pipewright runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The one stored login under `home`: its path and record.
fn stored(home: &Path) -> (PathBuf, Value) {
    let mut found = Vec::new();
    files(&home.join("data/auth"), &mut found);
    assert_eq!(found.len(), 1, "{found:?}");
    let record = serde_json::from_str(&std::fs::read_to_string(&found[0]).expect("read"))
        .expect("record JSON");
    (found.remove(0), record)
}

#[test]
fn a_bound_refresh_and_the_client_credentials_grant_prove_the_login_key() {
    let keys = tempfile::tempdir().expect("tempdir");
    let keyfile = keys.path().join("cc.pem");
    let (_server, url) = oauth_server(&[
        "--dpop",
        "--token-lifetime",
        "600",
        "--client-credentials",
        keyfile.to_str().expect("path"),
    ]);
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let file = home.join("pipeline.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  s:\n    url: \"{url}\"\npipe:\n  - id: e\n    server: s\n    tool: echo\n    args: {{ message: hi }}\n"
        ),
    )
    .expect("pipeline");

    // A run logs in (DPoP by default: the authorization server lists ES256)
    // and calls; the server wanted its nonce at both ends.
    ok(pw(home).arg("run").arg(&file).arg("--no-save"));
    let (path, mut record) = stored(home);
    let key = record["dpop"].clone();
    assert!(key["d"].is_string(), "{record}");
    assert!(
        record["credentials"]["token_response"]["token_type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop")),
        "{record}"
    );

    // The token is old: the next run refreshes it, proving the same key.
    let at = record
        .pointer_mut("/credentials/token_received_at")
        .expect("received at");
    *at = Value::from(at.as_u64().expect("secs") - 600);
    std::fs::write(&path, serde_json::to_vec(&record).expect("json")).expect("age");
    ok(pw(home).arg("run").arg(&file).arg("--no-save"));
    let (_, refreshed) = stored(home);
    assert_eq!(refreshed["dpop"], key, "the refresh keeps the login's key");
    assert_ne!(
        refreshed["credentials"]["token_response"]["access_token"],
        record["credentials"]["token_response"]["access_token"]
    );
    assert!(ok(pw(home).args(["auth", "status", &url])).contains("DPoP-bound"));

    let events = dpop_events(&url);
    let refused: Vec<&Value> = events.iter().filter(|e| e["ok"] != true).collect();
    assert!(refused.is_empty(), "every proof was valid: {refused:#?}");
    let at = |place: &str, grant: Option<&str>| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["at"] == place && grant.is_none_or(|g| e["grant_type"] == g))
            .collect()
    };
    for grant in ["authorization_code", "refresh_token"] {
        let tried = at("token", Some(grant));
        assert!(
            tried.last().is_some_and(|e| e["nonce"] == true),
            "{grant}: {tried:#?}"
        );
    }
    assert_eq!(
        at("token", Some("authorization_code"))[0]["nonce"],
        false,
        "the first proof had no nonce and was retried with it"
    );
    let jkts: std::collections::BTreeSet<&str> = at("token", None)
        .iter()
        .filter_map(|e| e["jkt"].as_str())
        .collect();
    assert_eq!(
        jkts.len(),
        1,
        "one key for the code and the refresh: {jkts:?}"
    );
    let mcp = at("mcp", None);
    assert!(mcp.iter().all(|e| e["scheme"] == "DPoP"), "{mcp:#?}");
    assert!(mcp.iter().any(|e| e["nonce"] == false), "{mcp:#?}");
    assert!(
        mcp.iter().filter(|e| e["nonce"] == true).count() >= 2,
        "{mcp:#?}"
    );

    // The client-credentials grant binds its token the same way.
    let machine = tempfile::tempdir().expect("tempdir");
    let machine = machine.path();
    let said = ok(pw(machine).args([
        "auth",
        "login",
        &url,
        "--client-credentials",
        "--client-id",
        "cc-client",
        "--client-secret",
        "cc-secret",
    ]));
    assert!(said.contains("DPoP-bound"), "{said}");
    ok(pw(machine).args(["tools", "list", "--url", &url]));
    let (_, machine_record) = stored(machine);
    assert!(machine_record["dpop"]["d"].is_string());
    let events = dpop_events(&url);
    let granted: Vec<&Value> = events
        .iter()
        .filter(|e| e["grant_type"] == "client_credentials")
        .collect();
    assert!(
        granted
            .last()
            .is_some_and(|e| e["ok"] == true && e["nonce"] == true),
        "{granted:#?}"
    );
    assert!(events.iter().all(|e| e["ok"] == true), "{events:#?}");
}
