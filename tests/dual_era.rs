//! Servers that ask work with no flags (issue 36). A server built the
//! official Python SDK's default way (`tests/interop/hitl_server.py dual`
//! over stdio, `http PORT` over Streamable HTTP, mcp 2.3.0) answers
//! `server/discover` as well as `initialize`, and its tools ask mid-call
//! (`ctx.elicit`, sampling), report progress and log, which only the 2025
//! era allows. Beside it in the same file, a server that speaks only
//! 2026-07-28 (`modern_server.py --modern-only`, which answers with an
//! input-required result). `auto` speaks 2025-11-25 to the first and
//! 2026-07-28 to the second; a server's `protocol:` overrides that.

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};

mod common;

use common::{Hermetic, Server, output, python, root};

fn interop(file: &str) -> String {
    root()
        .join("tests/interop")
        .join(file)
        .display()
        .to_string()
}

/// `pipewright ARGS…` with every directory it reads or writes under `home`.
fn pw(home: &Path) -> Command {
    let mut cmd = Command::from_std(common::pipewright_in(home));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .env("XDG_STATE_HOME", home.join("xdg-state"))
        .env("XDG_CACHE_HOME", home.join("xdg-cache"))
        .env("XDG_DATA_HOME", home.join("xdg-data"))
        .timeout(Duration::from_secs(90));
    cmd
}

/// `python SCRIPT ARGS…` serving Streamable HTTP on a free port, once it
/// listens.
fn http_server(script: &str, args: &[&str]) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = StdCommand::new(python())
        .hermetic()
        .arg(interop(script))
        .arg("http")
        .arg(port.to_string())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python SDK server");
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{script} exited before listening: {status}");
        }
        assert!(Instant::now() < until, "{script} never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// The SDK's default server over stdio, as a `servers:` entry's body.
fn dual_stdio() -> String {
    format!(
        "{{command: \"{}\", args: [\"{}\", dual]}}",
        python().display(),
        interop("hitl_server.py")
    )
}

/// The 2026-only server over stdio.
fn modern_only_stdio() -> String {
    format!(
        "{{command: \"{}\", args: [\"{}\", stdio, --modern-only]}}",
        python().display(),
        interop("modern_server.py")
    )
}

/// A pipe over both servers: `h` asks a form, asks for a completion and
/// counts with progress and logs; `m` answers with an input-required
/// result and adds.
const STEPS: &str = "pipe:
  - {id: ask, server: h, tool: ask_name, args: {who: Ada}}
  - {id: sum, server: h, tool: summarize, args: {text: a long story}}
  - {id: tally, server: h, tool: count, args: {n: 3}}
  - {id: hi, server: m, tool: greet}
  - {id: add, server: m, tool: add, args: {a: 2, b: 3}}
";

const ANSWERS: &str = "ask:\n  - accept: {name: Grace}\nsum:\n  - sample: \"A short story.\"\nhi:\n  - accept: {name: Ada}\n";

/// Writes `servers:` with `h` and `m` and `steps` to `dir/flow.yml`, and
/// the answers beside it.
fn pipeline(dir: &Path, h: &str, m: &str, steps: &str) -> PathBuf {
    let file = dir.join("flow.yml");
    std::fs::write(&file, format!("servers:\n  h: {h}\n  m: {m}\n{steps}")).expect("write");
    std::fs::write(dir.join("answers.yml"), ANSWERS).expect("write");
    file
}

/// `run FILE --answers answers.yml --format json` with no protocol flag:
/// exit code, trace, stderr.
fn run(home: &Path, file: &Path) -> (i32, Value, String) {
    let (code, stdout, stderr) = output(
        pw(home)
            .arg("run")
            .arg(file)
            .arg("--answers")
            .arg(file.with_file_name("answers.yml"))
            .args(["--format", "json", "--no-save"]),
    );
    let trace = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a trace ({e}):\n{stdout}\n{stderr}"));
    (code, trace, stderr)
}

/// What a run of [`STEPS`] must show.
fn check_run(code: i32, trace: &Value, stderr: &str) {
    assert_eq!(code, 0, "{stderr}\n{trace:#}");
    let nodes = &trace["nodes"];
    // The form was asked mid-call and the answer reached the server.
    assert_eq!(
        nodes["ask"]["output"],
        json!({"who": "Ada", "name": "Grace"})
    );
    let asked = &nodes["ask"]["interactions"][0];
    assert_eq!(asked["kind"], "elicitation", "{asked}");
    assert_eq!(asked["by"], "answers", "{asked}");
    // So was the completion.
    assert_eq!(nodes["sum"]["output"]["summary"], "A short story.");
    assert_eq!(nodes["sum"]["interactions"][0]["kind"], "sampling");
    // Progress and log lines, in the trace.
    let tally = &nodes["tally"];
    assert_eq!(tally["output"], json!({"count": 3}));
    assert_eq!(
        tally["progress"].as_array().map(Vec::len),
        Some(3),
        "{tally:#}"
    );
    let logs: Vec<&str> = tally["logs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["data"].as_str())
        .collect();
    assert!(logs.contains(&"counted to 3"), "{tally:#}");
    // The 2026-only server's input-required result, answered.
    assert_eq!(nodes["hi"]["output"]["greeting"], "Hello, Ada!");
    assert_eq!(nodes["hi"]["interactions"][0]["by"], "answers");
    assert_eq!(nodes["add"]["output"], json!({"result": 5}));
    assert_eq!(
        trace["server_protocols"],
        json!({"h": "2025-11-25", "m": "2026-07-28"})
    );
}

#[test]
fn a_server_of_both_eras_that_asks_runs_beside_a_2026_only_one_over_stdio_with_no_flags() {
    let home = tempfile::tempdir().expect("dir");
    let file = pipeline(home.path(), &dual_stdio(), &modern_only_stdio(), STEPS);
    let (code, trace, stderr) = run(home.path(), &file);
    check_run(code, &trace, &stderr);
}

#[test]
fn a_server_of_both_eras_that_asks_runs_beside_a_2026_only_one_over_http_with_no_flags() {
    let home = tempfile::tempdir().expect("dir");
    let dual = http_server("hitl_server.py", &[]);
    let modern = http_server("modern_server.py", &["--modern-only"]);
    let file = pipeline(
        home.path(),
        &format!("{{url: \"{}\"}}", dual.url),
        &format!("{{url: \"{}\"}}", modern.url),
        STEPS,
    );
    let (code, trace, stderr) = run(home.path(), &file);
    check_run(code, &trace, &stderr);
}

/// `protocol: 2026-07-28` on the server of both eras: it is spoken to in
/// the new era, its asking tool fails, and the error says what to change.
/// `protocol: 2025-11-25` on the 2026-only server: a clear handshake error.
/// A value that is no revision: a load error with its place.
#[test]
fn a_servers_protocol_key_overrides_auto_and_says_what_went_wrong() {
    let home = tempfile::tempdir().expect("dir");
    let forced = dual_stdio().replace('}', ", protocol: 2026-07-28}");
    let ask = "pipe:\n  - {id: ask, server: h, tool: ask_name, args: {who: Ada}}\n";
    let file = pipeline(home.path(), &forced, &modern_only_stdio(), ask);
    let (code, trace, stderr) = run(home.path(), &file);
    assert_eq!(code, 1, "{stderr}\n{trace:#}");
    assert_eq!(trace["server_protocols"]["h"], "2026-07-28", "{trace:#}");
    let error = trace["nodes"]["ask"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("no back-channel")
            && error.contains("does not allow")
            && error.contains("`protocol: auto`")
            && error.contains("--protocol h=auto"),
        "{error}"
    );

    let wrong = modern_only_stdio().replace('}', ", protocol: 2025-11-25}");
    let add = "pipe:\n  - {id: add, server: m, tool: add, args: {a: 1, b: 2}}\n";
    let file = pipeline(home.path(), &dual_stdio(), &wrong, add);
    let (code, _, stderr) = output(pw(home.path()).arg("run").arg(&file).arg("--no-save"));
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("server `m`")
            && stderr.contains("does not speak MCP 2025-11-25")
            && stderr.contains("it speaks 2026-07-28"),
        "{stderr}"
    );

    let bad = dual_stdio().replace('}', ", protocol: 2025-06}");
    let file = pipeline(home.path(), &bad, &modern_only_stdio(), add);
    let (code, stdout, stderr) = output(pw(home.path()).arg("check").arg(&file));
    let said = format!("{stdout}{stderr}");
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("flow.yml:2:")
            && said.contains("`protocol` of server `h` is `2025-06`")
            && said.contains("2025-11-25"),
        "{said}"
    );
}

/// `pipewright serve` serving a composition whose node calls the server of
/// both eras (over stdio, then Streamable HTTP), called by the official
/// Python SDK client: the node's tool
/// asks mid-call upstream, its answerers (nobody here: no terminal, no
/// answers file) decline, and the served result carries the tool's own
/// answer to that, not a failed call.
#[test]
fn a_served_composition_calls_a_server_of_both_eras_that_asks() {
    let http = http_server("hitl_server.py", &[]);
    for upstream in [dual_stdio(), format!("{{url: \"{}\"}}", http.url)] {
        let home = tempfile::tempdir().expect("dir");
        let file = home.path().join("served.yml");
        std::fs::write(
            &file,
            format!(
                "servers:\n  h: {upstream}\npipe:\n  - {{id: who, tool: ask_name, args: {{who: agent}}}}\n  - {{id: tally, tool: count, args: {{n: 2}}}}\noutput: who\n",
            ),
        )
        .expect("write");
        let out = StdCommand::new(python())
            .hermetic()
            .env("HOME", home.path())
            .env("PIPEWRIGHT_DATA_DIR", home.path().join("data"))
            .env("PIPEWRIGHT_CONFIG_DIR", home.path().join("config"))
            .arg(interop("serve_client.py"))
            .arg(env!("CARGO_BIN_EXE_pipewright"))
            .arg(&file)
            .args(["call", "served"])
            .output()
            .expect("the Python SDK client ran");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{upstream}: {stdout}\n{stderr}");
        let result: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\n{stderr}"));
        assert_eq!(
            result,
            json!({"who": "agent", "action": "decline"}),
            "{upstream}: {stderr}"
        );
    }
}
