//! A fleet of `pipewright serve --http` instances sharing a `requestState`
//! key (`--state-key-file`): the official Python SDK client in 2026-07-28
//! mode (stateless: a balancer may send each of its calls anywhere) gets a
//! question at one instance and answers it at another. Without `--on` the
//! run waits in the asking process, so the other instance refuses the
//! answer with the error that names the fix; forged, expired, used and
//! other-key states are refused at every instance, and an instance whose
//! key was rotated still opens the old key's states. (With `--on`, where
//! the answer is taken anywhere: tests/durable.rs.)

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{Hermetic, ServeHttp, python, root, succeeds};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

const OLD: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const NEW: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
const OTHER: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// `twice`: two nodes that ask in turn for a name, the second for the
/// name the first got.
fn served_file(dir: &Path) -> PathBuf {
    let py = python();
    let hitl = root().join("tests/interop/hitl_server.py");
    let text = format!(
        "vars: {{ who: nobody }}\nservers:\n  hitl:\n    command: {py}\n    args: [{hitl}, dual]\ncompositions:\n  - name: twice\n    nodes:\n      - id: first\n        server: hitl\n        tool: ask_name\n        args: {{ who: \"${{var.who}}\" }}\n      - id: second\n        needs: [first]\n        server: hitl\n        tool: ask_name\n        args: {{ who: \"${{first.name}}\" }}\n    output: second\n",
        py = py.display(),
        hitl = hitl.display(),
    );
    let file = dir.join("twice.yml");
    std::fs::write(&file, text).expect("write the file");
    file
}

fn key_file(dir: &Path, name: &str, keys: &[&str]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, keys.join("\n") + "\n").expect("write the key file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    path
}

fn serve(dir: &Path, file: &Path, key: &Path) -> Command {
    let mut c = Command::new(bin());
    c.isolated(dir)
        .arg("serve")
        .arg(file)
        .arg("--state-key-file")
        .arg(key);
    c
}

#[test]
fn a_question_asked_at_one_instance_is_refused_at_another_with_the_fix_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = served_file(dir.path());
    let shared = key_file(dir.path(), "shared.key", &[OLD]);
    let other = key_file(dir.path(), "other.key", &[OTHER]);
    let rotated = key_file(dir.path(), "rotated.key", &[NEW, OLD]);
    let a = ServeHttp::start(serve(dir.path(), &file, &shared));
    let b = ServeHttp::start(serve(dir.path(), &file, &shared));
    let c = ServeHttp::start(serve(dir.path(), &file, &other));
    let d = ServeHttp::start(serve(dir.path(), &file, &rotated));
    let mut py = Command::new(python());
    py.isolated(dir.path())
        .arg(root().join("tests/interop/serve_fleet_client.py"))
        .args(["local", OLD, &a.url, &b.url, &c.url, &d.url]);
    let text = succeeds(&mut py);
    assert!(text.contains("all checks passed"), "{text}");
    let elsewhere = "was sealed by another `serve` instance (or by this one before it restarted), and the run it answers waits in that process";
    assert!(
        text.contains(&format!("answer at B refused: `requestState` {elsewhere}")),
        "{text}"
    );
    assert!(
        text.contains("Route each agent's calls to one instance (sticky on the `Mcp-Session-Id` header; a 2026-07-28 agent sends none, so it needs `--on`), or serve with `--on restate://…`"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "old key's state at ROTATED refused: `requestState` {elsewhere}"
        )),
        "{text}"
    );
    for at in ["A", "B", "OTHER", "ROTATED"] {
        assert!(
            text.contains(&format!(
                "forged state at {at} refused: `requestState` was not issued by this server"
            )),
            "{text}"
        );
    }
    for at in ["A", "B", "ROTATED"] {
        assert!(
            text.contains(&format!(
                "expired state at {at} refused: `requestState` has expired"
            )),
            "{text}"
        );
    }
    assert!(
        text.contains(
            "state of another key at OTHER refused: `requestState` was not issued by this server"
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"twice -> {"who": "Bo", "name": "Al"}"#),
        "{text}"
    );
    assert!(
        text.contains("used state at A refused: no run is waiting on this `requestState`"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "used state at B refused: `requestState` {elsewhere}"
        )),
        "{text}"
    );
}

#[test]
fn a_bad_or_short_key_stops_serve_at_start_without_showing_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = served_file(dir.path());
    let bad = key_file(dir.path(), "bad.key", &[OLD, "s3cret-not-hex"]);
    let short = key_file(dir.path(), "short.key", &[&OLD[..40]]);
    for (key, said) in [
        (&bad, "bad.key: line 2: not a key"),
        (
            &short,
            "short.key: line 1: the key has 20 byte(s); at least 32 are needed",
        ),
    ] {
        let out = serve(dir.path(), &file, key).output().expect("serve");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(said), "{err}");
        assert!(
            !err.contains("s3cret") && !err.contains(&OLD[..40]),
            "{err}"
        );
    }
    let out = Command::new(bin())
        .isolated(dir.path())
        .args(["serve"])
        .arg(&file)
        .args(["--state-key-env", "PW_TEST_NO_SUCH_KEY"])
        .output()
        .expect("serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--state-key-env PW_TEST_NO_SUCH_KEY: the environment variable `PW_TEST_NO_SUCH_KEY` is not set"),
        "{err}"
    );
}
