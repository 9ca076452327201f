//! Secrets are written nowhere (issue 25's sweep). Distinctive values enter
//! a pipeline through every door a secret has: `${env.X}` in a stdio
//! server's `env:` and `args:`, in a node's `args:`, in an HTTP server's
//! URL and `headers:`, and a sampling provider's `api_key` (and, in a
//! second file, a header value and a key typed into the file). Real servers hand each value straight back through
//! every channel they have (results, tool errors, logs, progress, stderr,
//! a crash, a sampling reply), and pipewright runs the file every way it
//! can: `run` as text, JSON and JUnit, with a cassette, an OTLP file and an
//! OTLP collector, a replay, `plan`, `check`, `runs list/show/diff/export`,
//! `tools list/call`, `serve`, and the workbench's recovery copy. Then every
//! file under every directory pipewright may write to, every stdout and
//! stderr, and every body the collector got is searched for each value —
//! as is, any case, reversed, percent-encoded, base64 (any alignment),
//! hex, and its distinctive tail alone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{Killed, python, root};

/// The secrets given through the environment, each ending in a tail
/// (`Zq7w…`) that no id, hash or base64 run would hold by chance.
const ENV_SECRETS: &[(&str, &str)] = &[
    ("PW_SWEEP_SERVER_ENV", "s3cr3t-SERVERENV-Zq7w01"),
    ("PW_SWEEP_ARGV", "s3cr3t-ARGV-Zq7w02"),
    ("PW_SWEEP_TOKEN", "s3cr3t-TOKEN-Zq7w03"),
    // Characters a URL or a form would encode: the encoded forms differ.
    ("PW_SWEEP_URLKEY", "s3cr3t URL/key+Zq7w05=&x?y#z"),
    ("PW_SWEEP_NODE_ARG", "s3cr3t-NODEARG-Zq7w06"),
    ("PW_SWEEP_FAIL", "s3cr3t-FAIL-Zq7w07"),
    ("PW_SWEEP_SAMPLING", "s3cr3t-SAMPLING-Zq7w08"),
];

/// A header value typed into the file itself (header values are secrets).
const LITERAL_HEADER: &str = "s3cr3t-LITERAL-Zq7w04";

/// A sampling key typed into the file itself.
const LITERAL_KEY: &str = "s3cr3t-LITERALKEY-Zq7w09";

/// Every value searched for: the environment's and the file's.
fn all_secrets() -> Vec<&'static str> {
    let mut all: Vec<&str> = ENV_SECRETS.iter().map(|(_, v)| *v).collect();
    all.extend([LITERAL_HEADER, LITERAL_KEY]);
    all
}

// --- the places pipewright may write to, and what it printed ---

/// A temporary home: the directories pipewright may write to (all
/// searched), `work/` for the pipeline files (not searched: a literal typed
/// into a file is in that file), and what every command printed.
struct Home {
    dir: tempfile::TempDir,
    outputs: Vec<(String, Vec<u8>)>,
}

/// The directories a command is pointed at, by environment variable.
const DIRS: &[(&str, &str)] = &[
    ("PIPEWRIGHT_DATA_DIR", "data"),
    ("PIPEWRIGHT_CONFIG_DIR", "config"),
    ("XDG_CONFIG_HOME", "xdg-config"),
    ("XDG_DATA_HOME", "xdg-data"),
    ("XDG_STATE_HOME", "xdg-state"),
    ("XDG_CACHE_HOME", "xdg-cache"),
    ("HOME", "home"),
    ("TMPDIR", "tmp"),
];

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("temp dir");
        for (_, sub) in DIRS {
            std::fs::create_dir_all(dir.path().join(sub)).expect("dir");
        }
        std::fs::create_dir_all(dir.path().join("work")).expect("dir");
        std::fs::create_dir_all(dir.path().join("out")).expect("dir");
        Home {
            dir,
            outputs: Vec::new(),
        }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// A file under `out/` (searched) for pipewright to write.
    fn out(&self, name: &str) -> String {
        self.path("out").join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path("work").join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `pipewright ARGS…` with every directory set, the secrets exported
    /// and no terminal.
    fn command(&self) -> std::process::Command {
        let mut c = common::pipewright();
        for (var, sub) in DIRS {
            c.env(var, self.path(sub));
        }
        c.env("NO_COLOR", "1")
            .envs(ENV_SECRETS.iter().copied())
            .current_dir(self.path("work"))
            .stdin(Stdio::null());
        c
    }

    /// Runs pipewright and keeps its stdout and stderr to be searched;
    /// the exit code and stdout.
    fn pw(&mut self, args: &[&str]) -> (i32, String) {
        let out = assert_cmd::Command::from_std(self.command())
            .args(args)
            .timeout(Duration::from_secs(90))
            .output()
            .expect("pipewright runs");
        let label = args.join(" ");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        self.outputs
            .push((format!("stdout of {label}"), out.stdout.clone()));
        self.outputs
            .push((format!("stderr of {label}"), out.stderr));
        (out.status.code().unwrap_or(-1), stdout)
    }

    /// Every file under the searched directories (everything but `work/`).
    fn files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for sub in DIRS.iter().map(|(_, s)| *s).chain(["out"]) {
            walk(&self.path(sub), &mut out);
        }
        out
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

// --- the forms of a secret searched for ---

const B64_STD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 of `bytes` without padding.
fn base64(bytes: &[u8], alphabet: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The base64 characters that encode only `secret`'s bytes when it starts
/// `offset` bytes into a longer encoded string: what any base64 that holds
/// the secret holds, whatever comes before it.
fn base64_at(secret: &str, offset: usize, alphabet: &[u8]) -> String {
    let mut bytes = vec![0u8; offset];
    bytes.extend_from_slice(secret.as_bytes());
    let enc = base64(&bytes, alphabet);
    let first = (8 * offset).div_ceil(6);
    let last = 8 * bytes.len() / 6;
    enc[first..last].to_owned()
}

/// Percent-encoding of everything but unreserved characters; `+` for a
/// space when `form`.
fn percent(secret: &str, form: bool) -> String {
    let mut out = String::new();
    for b in secret.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b))
            }
            b' ' if form => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Each form of `secret` to look for, by name; `true` when it is matched
/// case-insensitively.
fn forms(secret: &str) -> Vec<(&'static str, String, bool)> {
    let tail = &secret[secret.find("Zq7w").unwrap_or(0)..];
    let mut out = vec![
        ("as is", secret.to_owned(), true),
        ("its tail", tail.to_owned(), true),
        ("reversed", secret.chars().rev().collect(), true),
        ("percent-encoded", percent(secret, false), true),
        ("form-encoded", percent(secret, true), true),
        ("hex", hex::encode(secret), true),
        (
            "JSON-escaped",
            json!(secret).to_string().trim_matches('"').to_owned(),
            true,
        ),
    ];
    for offset in 0..3 {
        out.push(("base64", base64_at(secret, offset, B64_STD), false));
        out.push(("base64url", base64_at(secret, offset, B64_URL), false));
    }
    out
}

/// What was searched, and every place a secret was found in.
#[derive(Default)]
struct Scan {
    files: usize,
    outputs: usize,
    bytes: usize,
    leaks: Vec<String>,
}

fn search(scan: &mut Scan, place: &str, bytes: &[u8]) {
    scan.bytes += bytes.len();
    let text = String::from_utf8_lossy(bytes);
    let lower = text.to_lowercase();
    for secret in all_secrets() {
        for (name, form, any_case) in forms(secret) {
            let found = if any_case {
                lower.contains(&form.to_lowercase())
            } else {
                text.contains(&form)
            };
            if found {
                scan.leaks
                    .push(format!("{place}: {secret:?} {name} ({form})"));
            }
        }
    }
}

/// Searches every file pipewright may have written, every output it
/// printed, and `extra` (bodies sent elsewhere).
fn scan_all(home: &Home, extra: &[(String, Vec<u8>)]) -> Scan {
    let mut scan = Scan::default();
    for f in home.files() {
        let bytes = std::fs::read(&f).unwrap_or_default();
        search(&mut scan, &f.display().to_string(), &bytes);
        scan.files += 1;
    }
    for (label, bytes) in home.outputs.iter().chain(extra) {
        search(&mut scan, label, bytes);
        scan.outputs += 1;
    }
    scan
}

// --- real peers: the HTTP server, a sampling provider, a collector ---

/// `tests/interop/secret_server.py --http`: its URL.
fn http_server() -> (Killed, String) {
    let mut child = std::process::Command::new(python())
        .arg(root().join("tests/interop/secret_server.py"))
        .arg("--http")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()
        .expect("start the SDK server");
    let stdout = child.stdout.take().expect("stdout");
    let child = Killed(child);
    let mut line = String::new();
    let _ = BufReader::new(stdout).read_line(&mut line);
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "no URL: {line:?}");
    (child, url)
}

/// Requests an HTTP listener on 127.0.0.1 got: head and body.
type Requests = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An HTTP listener that keeps every request and answers each with
/// `reply(head)` as JSON: a stand-in for a chat-completions provider or an
/// OTLP collector, neither of which runs in CI.
fn listener(reply: fn(&str) -> Value) -> (String, Requests) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", l.local_addr().expect("addr"));
    let got: Requests = Arc::default();
    let keep = got.clone();
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let (mut head, mut len) = (String::new(), 0usize);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let answer = reply(&head).to_string();
            if let Ok(mut g) = keep.lock() {
                g.push((head, body));
            }
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, got)
}

/// A chat-completions reply that repeats the `Authorization` header it
/// got: the key comes straight back into the trace.
fn echo_the_key(head: &str) -> Value {
    let auth = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("authorization:")
                .then(|| l["authorization:".len()..].trim().to_owned())
        })
        .unwrap_or_default();
    json!({"model": "stub-1", "choices": [{"message": {"role": "assistant", "content": format!("I was called with {auth}")}}]})
}

fn collector_ok(_: &str) -> Value {
    json!({})
}

// --- the pipelines ---

/// The pipeline with every `${env.X}` door: the demo server and the SDK
/// server over stdio, the SDK server over HTTP, a sampling provider.
fn doors(http_url: &str, provider: &str) -> String {
    let py = python().display().to_string();
    let script = root().join("tests/interop/secret_server.py");
    let script = script.display();
    let bin = env!("CARGO_BIN_EXE_pipewright");
    format!(
        r#"servers:
  demo:
    command: {bin}
    args: [demo-server]
  local:
    command: {py}
    args: [{script}, --token, "${{env.PW_SWEEP_ARGV}}"]
    env: {{PW_SWEEP_SERVER_ENV: "${{env.PW_SWEEP_SERVER_ENV}}"}}
  dying:
    command: {py}
    args: [{script}]
    env: {{PW_SWEEP_SERVER_ENV: "${{env.PW_SWEEP_SERVER_ENV}}"}}
  remote:
    url: "{http_url}?key=${{env.PW_SWEEP_URLKEY}}"
    headers:
      Authorization: "Bearer ${{env.PW_SWEEP_TOKEN}}"
sampling:
  url: {provider}/v1
  model: stub
  api_key: "${{env.PW_SWEEP_SAMPLING}}"
compositions:
  - name: sweep
    nodes:
      - {{id: said, server: demo, tool: echo, args: {{message: "token=${{env.PW_SWEEP_NODE_ARG}}"}}}}
      - {{id: failed, server: demo, tool: fail, args: {{message: "${{env.PW_SWEEP_FAIL}}"}}, on_error: continue}}
      - {{id: local_env, server: local, tool: reveal}}
      - {{id: shouted, needs: [local_env], server: local, tool: shout, args: {{text: "${{env.PW_SWEEP_NODE_ARG}}"}}}}
      - {{id: boomed, needs: [shouted], server: local, tool: boom, args: {{text: "${{env.PW_SWEEP_FAIL}}"}}, on_error: continue}}
      - {{id: sampled, needs: [boomed], server: local, tool: ask, args: {{text: "the weather"}}}}
      - {{id: died, server: dying, tool: die, args: {{text: "${{env.PW_SWEEP_FAIL}}"}}, on_error: continue}}
      - {{id: remote_env, server: remote, tool: reveal}}
    output: said
    expect:
      - {{target: nodes.said.output, matcher: {{exact: "nothing like it"}}}}
"#
    )
}

/// A file whose secrets are typed into it: a header value and a sampling
/// key. The file holds them; no copy pipewright makes may, but for the
/// workbench's recovery copy of an unsaved buffer, which is the typed text
/// itself (that is what it is for) and is not made here.
fn literals(http_url: &str, provider: &str) -> String {
    format!(
        r#"servers:
  remote:
    url: "{http_url}"
    headers: {{X-Literal: "{LITERAL_HEADER}"}}
sampling: {{url: "{provider}/v1", model: stub, api_key: "{LITERAL_KEY}"}}
pipe:
  - {{id: seen, tool: reveal}}
"#
    )
}

// --- what the runs must show: each door really carried its secret ---

/// The JSON run's nodes show `***` where each value came back, so every
/// door was really walked through (a door that carried nothing would make
/// the search below pass for nothing).
fn assert_each_door_carried_its_secret(trace: &Value) {
    let n = &trace["nodes"];
    assert_eq!(n["said"]["output"], "token=***", "{trace:#}");
    assert_eq!(n["failed"]["error"], "***", "{trace:#}");
    assert_eq!(
        n["local_env"]["output"],
        json!({"env": "***", "argv": "***", "authorization": "", "literal": ""}),
        "{trace:#}"
    );
    assert_eq!(
        n["remote_env"]["output"],
        json!({"env": "", "argv": "", "authorization": "***", "literal": ""}),
        "{trace:#}"
    );
    assert_eq!(n["shouted"]["output"], json!({"said": "***"}), "{trace:#}");
    assert_eq!(n["shouted"]["logs"][0]["data"], "shouting ***", "{trace:#}");
    assert_eq!(n["shouted"]["progress"][0]["message"], "half of ***");
    assert_eq!(
        n["boomed"]["error"],
        "Error executing tool boom: cannot go on with ***"
    );
    assert_eq!(
        n["sampled"]["output"],
        json!({"reply": "I was called with Bearer ***"}),
        "{trace:#}"
    );
    let died = n["died"]["error"].as_str().unwrap_or_default();
    assert!(died.ends_with("dying with ***"), "{died}");
    let stderr_lines = trace["server_logs"].to_string();
    assert!(stderr_lines.contains("stderr says ***"), "{stderr_lines}");
}

/// The provider was asked with the real key, and the HTTP server saw the
/// real header: secrets go where they are meant to.
fn assert_the_real_values_were_sent(provider: &Requests) {
    let heads: Vec<String> = provider
        .lock()
        .map(|g| g.iter().map(|(h, _)| h.clone()).collect())
        .unwrap_or_default();
    assert!(!heads.is_empty(), "the provider was never asked");
    let key = ENV_SECRETS
        .iter()
        .find(|(k, _)| *k == "PW_SWEEP_SAMPLING")
        .map(|(_, v)| *v)
        .unwrap_or_default();
    assert!(
        heads.iter().all(|h| h.contains(&format!("Bearer {key}"))),
        "{heads:?}"
    );
}

// --- `serve` over stdio, by hand ---

/// The pipeline `serve` serves: its one tool echoes values that came back
/// from the stdio server's environment and the HTTP server's header.
fn served(doors_text: &str) -> String {
    let servers = &doors_text[..doors_text.find("sampling:").unwrap_or(0)];
    format!(
        r#"{servers}pipe:
  - {{id: local_env, server: local, tool: reveal}}
  - {{id: remote_env, server: remote, tool: reveal}}
  - id: said
    server: demo
    tool: echo
    args: {{message: "token=${{env.PW_SWEEP_NODE_ARG}} ${{local_env.env}} ${{remote_env.authorization}}"}}
"#
    )
}

/// Writes one JSON-RPC message and reads lines until the answer to `id`.
fn exchange(
    stdin: &mut impl Write,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    printed: &mut String,
    msg: Value,
) -> Value {
    writeln!(stdin, "{msg}").expect("write to serve");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        printed.push_str(&line);
        printed.push('\n');
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v.get("id").is_some() && v["id"] == msg["id"] {
            return v;
        }
    }
    panic!("no answer to {msg}: {printed}");
}

/// `pipewright serve FILE`: lists its tools and calls the first over raw
/// stdio JSON-RPC; what it printed on stdout.
fn serve_call(home: &mut Home, file: &Path) -> String {
    let mut child = home
        .command()
        .arg("serve")
        .arg(file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut stderr = child.stderr.take().expect("stderr");
    let child = Killed(child);
    let mut printed = String::new();
    let p = &mut printed;
    exchange(
        &mut stdin,
        &mut lines,
        p,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sweep", "version": "1"}}}),
    );
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write to serve");
    let tools = exchange(
        &mut stdin,
        &mut lines,
        p,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let name = tools["result"]["tools"][0]["name"].clone();
    exchange(
        &mut stdin,
        &mut lines,
        p,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": {}}}),
    );
    drop(stdin);
    drop(child);
    let mut err = Vec::new();
    let _ = stderr.read_to_end(&mut err);
    home.outputs
        .push(("stdout of serve".to_owned(), printed.clone().into_bytes()));
    home.outputs.push(("stderr of serve".to_owned(), err));
    printed
}

// --- the sweep ---

/// Every form of `pipewright` output a run of `file` can make: the
/// commands run and their exit codes checked.
fn run_every_way(home: &mut Home, file: &Path, collector: &str) {
    let f = file.to_str().expect("path");
    let cassette = home.out("calls.cassette.json");
    let otlp = home.out("run.otlp.json");
    let endpoint = format!("{collector}/v1/traces");
    let (code, _) = home.pw(&[
        "run",
        f,
        "--log-level",
        "debug",
        "--record",
        &cassette,
        "--otlp",
        &otlp,
        "--otlp-endpoint",
        &endpoint,
    ]);
    assert_eq!(code, 1, "the expectation fails, the run does not");
    let (code, json_out) = home.pw(&["run", f, "--log-level", "debug", "--format", "json"]);
    assert_eq!(code, 1);
    let trace: Value = serde_json::from_str(&json_out).expect("a trace");
    assert_each_door_carried_its_secret(&trace);
    assert_eq!(home.pw(&["run", f, "--format", "junit"]).0, 1);
    let (code, replayed) = home.pw(&["run", f, "--replay", &cassette, "--format", "json"]);
    assert_eq!(code, 1, "{replayed}");
    assert_eq!(home.pw(&["plan", f]).0, 0);
    assert_eq!(home.pw(&["run", f, "--dry-run", "--format", "json"]).0, 0);
    assert_eq!(home.pw(&["check", f]).0, 0);
    for args in [
        &["runs", "list"][..],
        &["runs", "show", "latest"],
        &["runs", "show", "latest~2"],
        &["runs", "export", "latest", "--otlp", "-"],
        &[
            "runs",
            "export",
            "latest~1",
            "--otlp",
            &home.out("export.otlp.json"),
        ],
        &["runs", "export", "latest", "--otlp-endpoint", &endpoint],
        &["tools", "list", "--file", f],
        &["tools", "list", "--file", f, "--json"],
        &["tools", "call", "reveal", "--file", f, "--on", "local"],
        &["tools", "call", "reveal", "--file", f, "--on", "remote"],
    ] {
        let (code, out) = home.pw(args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let (code, _) = home.pw(&["runs", "diff", "latest~3", "latest~2", "--format", "json"]);
    assert!(code == 0 || code == 1, "runs diff: {code}");
    let text = std::fs::read_to_string(file).expect("read");
    let to_serve = home.write("served.yml", &served(&text));
    let answer = serve_call(home, &to_serve);
    assert!(answer.contains("token=*** *** ***"), "{answer}");
}

/// The workbench's recovery copy of an edited buffer, written the way the
/// editor writes it (its debounce passed), into the same data directory.
fn write_recovery_copy(home: &Home, file: &Path) -> PathBuf {
    use pipewright::ui::{Editor, RECOVERY_DEBOUNCE, Recovery};
    let data = home.path("data");
    let mut editor = Editor::open(file, Some(&data)).expect("open");
    editor.set_text(&format!("{}# edited\n", editor.text()));
    editor.tick(Instant::now() + RECOVERY_DEBOUNCE + Duration::from_millis(50));
    let copy = Recovery::for_file(file, &data);
    assert!(copy.text_path().exists(), "no recovery copy was written");
    copy.text_path().to_path_buf()
}

fn report(scan: &Scan, what: &str) {
    eprintln!(
        "{what}: searched {} files and {} outputs ({} bytes) for {} secrets in {} forms each; {} leak(s)",
        scan.files,
        scan.outputs,
        scan.bytes,
        all_secrets().len(),
        forms(LITERAL_HEADER).len(),
        scan.leaks.len()
    );
}

#[test]
fn a_secret_that_enters_through_any_door_is_written_nowhere() {
    let mut home = Home::new();
    let (_server, http_url) = http_server();
    let (provider, asked) = listener(echo_the_key);
    let (collector, collected) = listener(collector_ok);
    let file = home.write("doors.yml", &doors(&http_url, &provider));

    run_every_way(&mut home, &file, &collector);
    assert_the_real_values_were_sent(&asked);
    let copy = write_recovery_copy(&home, &file);

    let bodies: Vec<(String, Vec<u8>)> = collected
        .lock()
        .map(|g| {
            g.iter()
                .map(|(h, b)| (format!("collector got {h}"), b.clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(bodies.len(), 2, "two OTLP exports were posted");
    let scan = scan_all(&home, &bodies);
    report(&scan, "every door");
    assert!(
        scan.leaks.is_empty(),
        "secrets leaked:\n{}",
        scan.leaks.join("\n")
    );
    // What was searched is what was written: the saved runs with their
    // file copies, the cassette, both OTLP files and the recovery copy.
    let names: Vec<String> = home
        .files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    for want in [
        "calls.cassette.json",
        "run.otlp.json",
        "export.otlp.json",
        ".source",
    ] {
        assert!(
            names.iter().any(|n| n.contains(want)),
            "no {want} in {names:#?}"
        );
    }
    assert!(names.contains(&copy.display().to_string()));
    assert!(scan.files >= 10, "{names:#?}");
}

#[test]
fn a_secret_typed_into_the_file_stays_in_the_file() {
    let mut home = Home::new();
    let (_server, http_url) = http_server();
    let (provider, _) = listener(echo_the_key);
    let file = home.write("literals.yml", &literals(&http_url, &provider));
    let f = file.to_str().expect("path");

    let (code, out) = home.pw(&[
        "run",
        f,
        "--format",
        "json",
        "--record",
        &home.out("c.json"),
    ]);
    assert_eq!(code, 0, "{out}");
    let trace: Value = serde_json::from_str(&out).expect("a trace");
    assert_eq!(trace["nodes"]["seen"]["output"]["literal"], "***");
    for args in [
        &["run", f][..],
        &["runs", "show", "latest"],
        &["runs", "export", "latest", "--otlp", "-"],
        &["plan", f],
        &["tools", "call", "reveal", "--file", f],
    ] {
        let (code, out) = home.pw(args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let scan = scan_all(&home, &[]);
    report(&scan, "typed into the file");
    assert!(
        scan.leaks.is_empty(),
        "secrets leaked:\n{}",
        scan.leaks.join("\n")
    );
    assert!(scan.files >= 4);
}

#[test]
fn a_server_that_cannot_be_reached_does_not_show_the_secret_in_its_url() {
    let mut home = Home::new();
    // A listener that is no MCP server (it answers `{}`), and a port where
    // nothing listens.
    let (not_mcp, _) = listener(collector_ok);
    for (name, url) in [
        ("odd.yml", format!("{not_mcp}/mcp")),
        ("gone.yml", "http://127.0.0.1:9/mcp".to_owned()),
    ] {
        let file = home.write(
            name,
            &format!(
                "servers:\n  far:\n    url: \"{url}?key=${{env.PW_SWEEP_URLKEY}}\"\n    headers: {{Authorization: \"Bearer ${{env.PW_SWEEP_TOKEN}}\"}}\npipe:\n  - {{id: a, tool: echo, args: {{message: \"${{env.PW_SWEEP_NODE_ARG}}\"}}}}\n"
            ),
        );
        let f = file.to_str().expect("path");
        for args in [
            &["run", f][..],
            &["run", f, "--format", "json"],
            &["tools", "list", "--file", f],
            &["tools", "call", "echo", "--file", f],
        ] {
            let (code, _) = home.pw(args);
            assert_ne!(code, 0, "{args:?} cannot succeed");
        }
    }
    let scan = scan_all(&home, &[]);
    report(&scan, "unreachable server");
    assert!(
        scan.leaks.is_empty(),
        "secrets leaked:\n{}",
        scan.leaks.join("\n")
    );
}

/// A key typed into the file where only a reference is taken (a judge's
/// `api_key`, an OAuth `client_secret`) is refused at its place, and the
/// error quotes the line with the key masked (the second review's item
/// 19): `check`, `run`, `plan` and the JSON diagnostics.
#[test]
fn a_key_typed_where_a_reference_belongs_is_refused_without_echoing_it() {
    let mut home = Home::new();
    let file = home.write(
        "typed.yml",
        &format!(
            "servers:\n  far: {{url: \"https://example.com/mcp\", auth: {{client_id: x, client_secret: \"{LITERAL_HEADER}\"}}}}\ncompositions:\n  - name: c\n    nodes:\n      - {{id: a, server: far, tool: echo}}\n    eval:\n      provider: {{url: \"http://127.0.0.1:9/v1\", model: m, api_key: {LITERAL_KEY}}}\n      mcp_task_completion: {{}}\n"
        ),
    );
    let f = file.to_str().expect("path");
    let mut refused = String::new();
    for args in [
        &["check", f][..],
        &["check", f, "--format", "json"],
        &["run", f],
        &["plan", f],
    ] {
        let (code, out) = home.pw(args);
        assert_eq!(code, 2, "{args:?}: {out}");
    }
    for (label, bytes) in &home.outputs {
        if label.starts_with("stderr of check") {
            refused.push_str(&String::from_utf8_lossy(bytes));
        }
    }
    assert!(
        refused.contains("`auth.client_secret` must be a reference"),
        "{refused}"
    );
    assert!(
        refused.contains("api_key` must be a reference"),
        "{refused}"
    );
    assert!(
        refused.contains("client_secret: ***"),
        "the line is quoted, masked: {refused}"
    );
    let scan = scan_all(&home, &[]);
    report(&scan, "typed where a reference belongs");
    assert!(
        scan.leaks.is_empty(),
        "secrets leaked:\n{}",
        scan.leaks.join("\n")
    );
}

/// A server that hands a secret back encoded (base64, base64url, hex,
/// URL-encoded, reversed, base64 of `user:SECRET`) has every form masked
/// in the run, `runs show` and `tools call` (the second review's item 21).
#[test]
fn a_secret_a_server_hands_back_encoded_is_masked_in_every_form() {
    let mut home = Home::new();
    let py = python().display().to_string();
    let script = root().join("tests/interop/secret_server.py");
    let file = home.write(
        "encoded.yml",
        &format!(
            "servers:\n  local: {{command: {py}, args: [{}], env: {{PW_SWEEP_SERVER_ENV: \"${{env.PW_SWEEP_URLKEY}}\"}}}}\npipe:\n  - {{id: coded, tool: encode, args: {{text: \"${{env.PW_SWEEP_NODE_ARG}}\"}}}}\n",
            script.display()
        ),
    );
    let f = file.to_str().expect("path");
    let (code, out) = home.pw(&["run", f, "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let trace: Value = serde_json::from_str(&out).expect("a trace");
    let output = &trace["nodes"]["coded"]["output"];
    for key in [
        "base64",
        "base64url",
        "hex",
        "url",
        "url_plus",
        "reversed",
        "basic",
    ] {
        assert!(
            output[key].as_str().is_some_and(|v| v.contains("***")),
            "{key} is not masked: {output:#}"
        );
    }
    for args in [
        &["run", f][..],
        &["runs", "show", "latest"],
        &["runs", "show", "latest", "--format", "json"],
        // The server's own variable this time, a secret of its `env:`.
        &["tools", "call", "encode", "--file", f],
    ] {
        let (code, out) = home.pw(args);
        assert_eq!(code, 0, "{args:?}: {out}");
    }
    let scan = scan_all(&home, &[]);
    report(&scan, "encoded by the server");
    assert!(
        scan.leaks.is_empty(),
        "secrets leaked:\n{}",
        scan.leaks.join("\n")
    );
}

/// The search finds what it claims to: a secret inside a longer base64
/// text at each alignment, percent-encoded, reversed, upper-cased.
#[test]
fn the_search_finds_a_secret_in_every_form_it_looks_for() {
    let secret = LITERAL_HEADER;
    let hidden = [
        base64(format!("x{secret}yz").as_bytes(), B64_STD),
        base64(format!("xy{secret}").as_bytes(), B64_URL),
        base64(format!("{secret}!").as_bytes(), B64_STD),
        format!("?k={}", percent(secret, true)),
        secret.chars().rev().collect(),
        secret.to_uppercase(),
        hex::encode(format!("..{secret}..")),
    ];
    for text in hidden {
        let mut scan = Scan::default();
        search(&mut scan, "t", text.as_bytes());
        assert!(!scan.leaks.is_empty(), "not found in {text}");
    }
    let mut scan = Scan::default();
    search(&mut scan, "t", b"token=*** and nothing else");
    assert!(scan.leaks.is_empty(), "{:?}", scan.leaks);
}
