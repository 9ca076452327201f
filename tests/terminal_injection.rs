//! What a server says is shown, never obeyed: escape sequences in its tool
//! names, descriptions, results and errors (a title change, a screen clear,
//! a hidden link, a carriage return over a line) reach the terminal as
//! plain `?`, in `tools list`, `tools call`, `run` and `runs show`. The
//! server is written with the official Python SDK.

mod common;

use std::path::Path;

fn pw(data: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("pipewright").expect("binary");
    c.env("PIPEWRIGHT_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", data.join("xdg"))
        .env("NO_COLOR", "1");
    c
}

/// Every byte a terminal would act on: ESC, BEL, CR and the rest of C0/C1
/// but new lines and tabs.
fn sequences(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

fn file(dir: &Path) -> std::path::PathBuf {
    let server = common::root().join("tests/interop/hostile_server.py");
    let f = dir.join("hostile.yml");
    std::fs::write(
        &f,
        format!(
            "servers:\n  hostile:\n    command: {}\n    args: [{}]\npipe:\n  - id: page\n    tool: fetch\n    args: {{url: \"http://127.0.0.1:9/\"}}\n  - id: bad\n    tool: boom\n",
            common::python().display(),
            server.display()
        ),
    )
    .unwrap();
    f
}

#[test]
fn escape_sequences_from_a_server_are_shown_not_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let f = file(dir.path());
    let mut seen = Vec::new();

    let out = pw(&data)
        .args(["tools", "list", "--file"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("?]0;pwned-title?reads a page"), "{text:?}");
    seen.push(("tools list", text));

    let out = pw(&data)
        .args(["tools", "call", "fetch", "--file"])
        .arg(&f)
        .args(["--args", r#"{"url": "http://127.0.0.1:9/"}"#])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // A structured result prints as JSON, whose escapes are inert; text
    // would print with `?`.
    assert!(
        text.contains("OVERWRITTEN"),
        "{text:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    seen.push(("tools call", text));

    let out = pw(&data).arg("run").arg(&f).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success());
    assert!(text.contains("bad?[31m red"), "{text:?}");
    seen.push(("run", text));

    let out = pw(&data).args(["runs", "show", "latest"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("bad?[31m red"), "{text:?}");
    seen.push(("runs show", text));

    for (what, text) in seen {
        assert!(
            sequences(&text).is_empty(),
            "{what} let a control character through: {:?}\n{text:?}",
            sequences(&text)
        );
    }
}
