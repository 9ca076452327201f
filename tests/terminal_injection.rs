//! What a server says is shown, never obeyed: escape sequences in its tool
//! names, descriptions, results and errors (a title change, a screen clear,
//! a hidden link, a carriage return over a line), in their 7-bit (ESC …) and
//! 8-bit C1 forms (U+009B CSI, U+009D OSC), reach the terminal as plain `?`
//! in text and as `\u001b` / `\u009b` escapes in JSON, in `tools list`,
//! `tools call`, `run` and `runs show`. The server is written with the
//! official Python SDK. So do the ids and keys of a pipeline file that
//! `check` quotes.

mod common;

use std::path::Path;

fn pw(data: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::from_std(common::pipewright());
    c.env("PIPEWRIGHT_DATA_DIR", data)
        .env("PIPEWRIGHT_CONFIG_DIR", data.join("config"))
        .env("XDG_CONFIG_HOME", data.join("xdg"))
        .env("XDG_DATA_HOME", data.join("xdg"))
        .env("XDG_STATE_HOME", data.join("xdg"))
        .env("NO_COLOR", "1");
    c
}

/// Where in `bytes` a terminal would start a sequence: an ESC, a C1
/// control in UTF-8 (`\xc2\x80` … `\xc2\x9f`), or a raw 8-bit C1 byte
/// that is not part of a UTF-8 character.
fn raw_sequence(bytes: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(bytes);
    if let Some(at) = bytes.iter().position(|b| *b == 0x1b) {
        return Some(at);
    }
    if let Some(at) = bytes
        .windows(2)
        .position(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1]))
    {
        return Some(at);
    }
    // Lossy decoding turns a stray 0x80-0x9f byte into U+FFFD.
    text.find('\u{fffd}')
}

/// Checks that neither stdout nor stderr of `out` carries a sequence;
/// returns both as text.
fn inert(what: &str, out: &std::process::Output) -> String {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(at) = raw_sequence(bytes) {
            let from = at.saturating_sub(40);
            panic!(
                "{what} wrote a sequence to {stream} at byte {at}: {:?}",
                String::from_utf8_lossy(&bytes[from..(at + 40).min(bytes.len())])
            );
        }
    }
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
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

/// Each of the commands that print what a server said, on both streams,
/// in text and JSON: no ESC and no C1 control (`\xc2\x9b` is CSI to a
/// terminal that reads 8-bit controls) is written; JSON carries them as
/// `\u` escapes, which stay valid JSON.
#[test]
fn c1_controls_from_a_server_are_escaped_in_text_and_json_on_both_streams() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let f = file(dir.path());

    let out = pw(&data)
        .args(["tools", "list", "--file"])
        .arg(&f)
        .output()
        .unwrap();
    let text = inert("tools list", &out);
    assert!(text.contains("reads a page"), "{text}");

    let out = pw(&data)
        .args(["tools", "list", "--json", "--file"])
        .arg(&f)
        .output()
        .unwrap();
    let text = inert("tools list --json", &out);
    assert!(
        text.contains(r"reads a page\u001b[2J\u009d0;c1-title\u009c\u009b2J"),
        "{text}"
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert!(
        listed.to_string().contains('\u{9b}'),
        "the JSON still means U+009B"
    );

    let out = pw(&data)
        .args(["tools", "call", "fetch", "--file"])
        .arg(&f)
        .args(["--args", r#"{"url": "http://127.0.0.1:9/"}"#])
        .output()
        .unwrap();
    let text = inert("tools call", &out);
    assert!(
        text.contains(r"\u009b2J\u009d8;;http://evil.example\u009cC1-click"),
        "{text}"
    );
    assert!(
        text.contains(r"\u007f\u0085"),
        "DEL and NEL escaped too: {text}"
    );

    let out = pw(&data)
        .args(["tools", "call", "boom", "--file"])
        .arg(&f)
        .output()
        .unwrap();
    let text = inert("tools call (an error)", &out);
    assert!(text.contains("FAKE ok?31m C1-red?0;t?"), "{text}");

    let out = pw(&data).arg("run").arg(&f).output().unwrap();
    let text = inert("run", &out);
    assert!(text.contains("FAKE ok?31m C1-red?0;t?"), "{text}");

    let out = pw(&data)
        .args(["run", "--format", "json"])
        .arg(&f)
        .output()
        .unwrap();
    let text = inert("run --format json", &out);
    assert!(text.contains(r"C1-red\u009d0;t\u009c"), "{text}");
    let trace: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert!(trace.to_string().contains("C1-red\u{9d}"), "{trace}");

    let out = pw(&data)
        .args(["run", "--format", "junit"])
        .arg(&f)
        .output()
        .unwrap();
    let text = inert("run --format junit", &out);
    assert!(text.contains("<failure"), "{text}");

    for args in [
        &["runs", "show", "latest"][..],
        &["runs", "show", "latest", "--format", "json"],
        &["runs", "show", "latest", "--format", "junit"],
        &["runs", "diff", "latest~1", "latest"],
        &["runs", "diff", "latest~1", "latest", "--format", "json"],
    ] {
        let out = pw(&data).args(args).output().unwrap();
        let text = inert(&args.join(" "), &out);
        assert!(!out.stdout.is_empty(), "{args:?}: {text}");
        if args[1] == "show" && !args.contains(&"junit") {
            assert!(text.contains("C1-red"), "{args:?}: {text}");
        }
    }
}

/// A pipeline file's ids, keys and names can carry ESC, CR, NUL and C1
/// (escaped in a quoted YAML string, or raw in the text): `check` quotes
/// them in its messages and shows the line they are on, and `run` and
/// `plan` print a composition's name. None reaches the terminal as a
/// control; each is drawn as a visible character, the caret still under
/// its place.
#[test]
fn ids_keys_and_names_from_a_file_are_shown_visibly_by_check_run_and_plan() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let quoted = dir.path().join("quoted.yml");
    std::fs::write(
        &quoted,
        "pipe:\n  - id: \"a\\e]0;pwned\\a\\rb\\0c\\u009b2J\"\n    tool: echo\n    \"k\\e[2J\\r\\0\\u009dx\": 1\n",
    )
    .unwrap();
    let out = pw(&data).arg("check").arg(&quoted).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = inert("check (escaped in quotes)", &out);
    assert!(
        text.contains("quoted.yml:2:9: error: `a␛]0;pwned␇␍b␀c?2J` is not a valid id"),
        "{text}"
    );
    assert!(
        text.contains("quoted.yml:4:5: error: unknown key `k␛[2J␍␀?x`"),
        "{text}"
    );

    // Raw in the text: YAML refuses the character, and the line it is on
    // is shown with the caret under it.
    let raw = dir.path().join("raw.yml");
    std::fs::write(
        &raw,
        "pipe:\n  - id: a\u{1b}[2J\u{9b}2J\r\0b\n    tool: echo\n",
    )
    .unwrap();
    let out = pw(&data).arg("check").arg(&raw).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = inert("check (raw)", &out);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("| ") && l.contains("id: a"))
        .unwrap_or_else(|| panic!("no source line: {text}"));
    let col = |line: &str, at: &str| line.find(at).map(|i| line[..i].chars().count());
    let head = lines[0];
    let caret_col: usize = head
        .split(':')
        .nth(2)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no column: {head}"));
    assert_eq!(
        col(lines[at + 1], "^").map(|c| c - col(lines[at], "|").unwrap_or(0) - 1),
        Some(caret_col),
        "the caret is under column {caret_col}: {text}"
    );

    let named = dir.path().join("named.yml");
    std::fs::write(
        &named,
        "compositions:\n  - name: \"c\\e]0;x\\a\\u009b2J\"\n    nodes:\n      - id: a\n        tool: echo\n        args: {message: hi}\n",
    )
    .unwrap();
    for args in [
        &["run", "--no-save"][..],
        &["plan"],
        &["run", "--no-save", "--estimate-cost"],
    ] {
        let out = pw(&data).args(args).arg(&named).output().unwrap();
        let text = inert(&args.join(" "), &out);
        assert!(text.contains("c?]0;x??2J"), "{args:?}: {text}");
    }
}
