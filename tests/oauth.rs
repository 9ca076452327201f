//! OAuth 2.1 end to end: the real binary logs in to an OAuth-protected MCP
//! server and authorization server built with the official Python SDK's
//! auth support (tests/interop/oauth_server.py), the test playing the
//! browser; then runs use and refresh the token, `auth status` and
//! `auth logout` do their part, and no token appears in anything written
//! except the token store.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    sync::{Arc, Mutex, mpsc},
    thread,
    time::{Duration, Instant},
};

use serde_json::Value;

mod common;
use common::{Killed, python};

/// The Python OAuth MCP server; `url` is its MCP endpoint.
struct Server {
    _child: Killed,
    url: String,
    base: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let (child, url) = common::oauth_server(args);
        let base = url.trim_end_matches("/mcp").to_owned();
        Server {
            _child: child,
            url,
            base,
        }
    }

    /// What the server saw, as recorded by oauth_server.py.
    fn events(&self) -> Vec<Value> {
        let (status, _, body) = http_get(&format!("{}/debug/events", self.base));
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("events JSON")
    }

    fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["kind"] == kind)
            .collect()
    }
}

/// A GET over plain HTTP to 127.0.0.1: status, `Location`, body.
fn http_get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let target = if target.is_empty() { "/" } else { target };
    let mut stream = TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let location = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status, location, body.to_owned())
}

/// Plays the browser: follows redirects from the authorization URL until a
/// page answers; returns its status and body and the URLs visited.
fn browse(url: &str) -> (u16, String, Vec<String>) {
    let mut visited = vec![url.to_owned()];
    let mut current = url.to_owned();
    for _ in 0..5 {
        let (status, location, body) = http_get(&current);
        match location {
            Some(next) if (300..400).contains(&status) => {
                visited.push(next.clone());
                current = next;
            }
            _ => return (status, body, visited),
        }
    }
    panic!("too many redirects: {visited:?}");
}

/// The binary with its data directory in `data`, stdin not a terminal.
fn pw(data: &Path) -> Command {
    let mut cmd = common::pipewright();
    cmd.env("PIPEWRIGHT_DATA_DIR", data)
        .env("PIPEWRIGHT_CONFIG_DIR", data.join("config"))
        .stdin(Stdio::null());
    cmd
}

/// Everything the binary printed during the test, to search for tokens.
#[derive(Default, Clone)]
struct Printed(Arc<Mutex<String>>);

impl Printed {
    fn add(&self, text: &str) {
        self.0.lock().expect("lock").push_str(text);
    }

    fn run(&self, cmd: &mut Command) -> Output {
        let out = cmd.output().expect("pipewright runs");
        self.add(&String::from_utf8_lossy(&out.stdout));
        self.add(&String::from_utf8_lossy(&out.stderr));
        out
    }

    fn text(&self) -> String {
        self.0.lock().expect("lock").clone()
    }
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A login running in the background, and the thread copying its stderr.
struct Login {
    child: Killed,
    stderr: thread::JoinHandle<()>,
}

/// `auth login ARGS --no-browser` in the background: the login and the
/// authorization URL it printed on stderr (one line).
fn start_login(data: &Path, args: &[&str], printed: &Printed) -> (Login, String) {
    let mut cmd = pw(data);
    cmd.args(["auth", "login"]).args(args).arg("--no-browser");
    start_waiting_for_url(&mut cmd, printed)
}

/// Starts `cmd` and waits for it to print an authorization URL on stderr.
fn start_waiting_for_url(cmd: &mut Command, printed: &Printed) -> (Login, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pipewright starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    let sink = printed.clone();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.add(&line);
            sink.add("\n");
            if line.starts_with("http") {
                let _ = tx.send(line);
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("no authorization URL on stderr: {}", printed.text()));
    let login = Login {
        child: Killed(child),
        stderr: reader,
    };
    (login, url)
}

/// Waits for a background login to end: its exit code and stdout (its
/// stderr is in `printed` by then).
fn finish_login(login: Login, printed: &Printed) -> (Option<i32>, String) {
    let Login { mut child, stderr } = login;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the login did not end: {}",
            printed.text()
        );
        thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    if let Some(mut out) = child.0.stdout.take() {
        let _ = out.read_to_string(&mut stdout);
    }
    printed.add(&stdout);
    let _ = stderr.join();
    (status.code(), stdout)
}

fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| decode(v))
    })
}

fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

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

/// Moves the receipt time of every token stored under `data` back by
/// `seconds`, as if that much time had passed since the login.
fn age_tokens(data: &Path, seconds: u64) {
    let mut all = Vec::new();
    files(data, &mut all);
    let mut aged = 0;
    for path in all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(mut record) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(at) = record
            .pointer_mut("/credentials/token_received_at")
            .filter(|v| v.is_u64())
        else {
            continue;
        };
        *at = Value::from(at.as_u64().unwrap_or_default().saturating_sub(seconds));
        std::fs::write(path, serde_json::to_vec(&record).expect("json")).expect("rewrite");
        aged += 1;
    }
    assert_eq!(aged, 1, "one stored token under {}", data.display());
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn login_call_refresh_status_logout_and_no_token_leaks() {
    // Far longer than the calls before the refresh take on a slow machine;
    // the test ages the stored token instead of waiting its lifetime out.
    const LIFETIME: u64 = 600;
    let server = Server::start(&["--token-lifetime", &LIFETIME.to_string()]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let printed = Printed::default();

    // 1. Log in, the test playing the browser.
    let (login, authorize) = start_login(&data, &[&server.url], &printed);
    assert!(
        authorize.starts_with(&format!("{}/authorize?", server.base)),
        "{authorize}"
    );
    assert_eq!(
        query_param(&authorize, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert_eq!(
        query_param(&authorize, "resource").as_deref(),
        Some(server.url.as_str())
    );
    let state = query_param(&authorize, "state").expect("a state");
    let (status, body, visited) = browse(&authorize);
    assert_eq!(status, 200, "{body} after {visited:?}");
    assert!(
        body.contains("pipewright received the authorization"),
        "{body}"
    );
    let redirect = visited.last().expect("the loopback redirect");
    assert!(redirect.starts_with("http://127.0.0.1:"), "{visited:?}");
    assert_eq!(
        query_param(redirect, "state").as_deref(),
        Some(state.as_str())
    );
    let (code, stdout) = finish_login(login, &printed);
    assert_eq!(code, Some(0), "{}", printed.text());
    assert!(
        stdout.contains(&format!("Logged in to {}", server.url)),
        "{stdout}"
    );

    // What the SDK's authorization server saw: discovery, registration,
    // PKCE (the SDK checks the verifier against the challenge), resource.
    let discovery: Vec<String> = server
        .events_of("discovery")
        .iter()
        .map(|e| e["path"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        discovery.contains(&"/.well-known/oauth-protected-resource/mcp".to_owned()),
        "{discovery:?}"
    );
    assert!(
        discovery
            .iter()
            .any(|p| p.starts_with("/.well-known/oauth-authorization-server")
                || p.starts_with("/.well-known/openid-configuration")),
        "{discovery:?}"
    );
    let registered = server.events_of("register");
    assert_eq!(registered.len(), 1, "{registered:?}");
    assert_eq!(registered[0]["token_endpoint_auth_method"], "none");
    let authorized = server.events_of("authorize");
    assert_eq!(authorized.len(), 1, "{authorized:?}");
    assert_eq!(authorized[0]["resource"], server.url.as_str());
    assert_eq!(authorized[0]["client_id"], registered[0]["client_id"]);
    assert!(
        authorized[0]["code_challenge"]
            .as_str()
            .is_some_and(|c| c.len() >= 43)
    );
    let token_requests = server.events_of("token_request");
    assert_eq!(token_requests.len(), 1, "{token_requests:?}");
    assert_eq!(token_requests[0]["grant_type"], "authorization_code");
    assert_eq!(token_requests[0]["code_verifier"], true);
    assert_eq!(token_requests[0]["resource"], server.url.as_str());
    assert_eq!(server.events_of("issued").len(), 1);

    // 2. Calls use the token: a pipeline run (trace, cassette, OTLP and
    // the saved run) and `tools call`.
    let file = work.join("echo.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  secured: {{ url: \"{}\" }}\npipe:\n  - {{ id: say, tool: echo, args: {{ message: hi }} }}\n",
            server.url
        ),
    )
    .expect("pipeline file");
    let run = |n: usize| {
        let out = printed.run(
            pw(&data)
                .arg("run")
                .arg(&file)
                .args(["--format", "json", "--record"])
                .arg(work.join(format!("cassette{n}.json")))
                .arg("--otlp")
                .arg(work.join(format!("otlp{n}.json"))),
        );
        std::fs::write(work.join(format!("trace{n}.json")), &out.stdout).expect("trace");
        out
    };
    let first = run(1);
    assert!(first.status.success(), "{}", show(&first));
    assert!(String::from_utf8_lossy(&first.stdout).contains("echo: hi"));
    let called = printed.run(pw(&data).args([
        "tools",
        "call",
        "echo",
        "--url",
        &server.url,
        "--args",
        r#"{"message":"direct"}"#,
    ]));
    assert!(called.status.success(), "{}", show(&called));
    assert!(String::from_utf8_lossy(&called.stdout).contains("echo: direct"));
    assert!(
        server.events_of("token_request").len() == 1,
        "no refresh while the token is fresh: {:?}",
        server.events_of("token_request")
    );
    let bearer = server
        .events_of("mcp")
        .iter()
        .filter_map(|e| e["authorization"].as_str().map(str::to_owned))
        .next_back()
        .expect("a call with a token");
    assert!(bearer.starts_with("Bearer at-"), "{bearer}");

    // 3. Past the expiry the next run refreshes first: the stored token is
    // made as old as its lifetime (what pipewright reads to decide).
    age_tokens(&data, LIFETIME + 1);
    let second = run(2);
    assert!(second.status.success(), "{}", show(&second));
    let token_requests = server.events_of("token_request");
    let refreshes: Vec<&Value> = token_requests
        .iter()
        .filter(|e| e["grant_type"] == "refresh_token")
        .collect();
    assert_eq!(refreshes.len(), 1, "{token_requests:?}");
    assert_eq!(refreshes[0]["resource"], server.url.as_str());
    let issued = server.events_of("issued");
    assert_eq!(issued.len(), 2);
    assert_eq!(issued[1]["grant"], "refresh_token");

    // A token the server stops accepting before its time: the 401 is
    // answered by a refresh and the call made again.
    let (status, _, _) = http_get(&format!("{}/debug/forget-access-tokens", server.base));
    assert_eq!(status, 204);
    let called = printed.run(pw(&data).args(["tools", "list", "--url", &server.url]));
    assert!(called.status.success(), "{}", show(&called));
    let refused_token = format!(
        "Bearer {}",
        issued[1]["access_token"].as_str().expect("token")
    );
    assert!(
        server
            .events_of("mcp")
            .iter()
            .any(|e| e["authorization"] == refused_token.as_str()),
        "the forgotten token was tried first"
    );
    let issued = server.events_of("issued");
    assert_eq!(issued.len(), 3, "refreshed after the 401: {issued:?}");
    assert_eq!(issued[2]["grant"], "refresh_token");

    // 4. Status shows the login, by URL and by name, without the token.
    let status = printed.run(pw(&data).args(["auth", "status", &server.url]));
    assert!(status.status.success(), "{}", show(&status));
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        text.contains(&format!("{}: logged in", server.url)),
        "{text}"
    );
    assert!(text.contains(&format!("issuer {}", server.base)), "{text}");
    assert!(text.contains("scopes mcp"), "{text}");
    let by_name = printed.run(
        pw(&data)
            .args(["auth", "status", "secured", "--json", "--file"])
            .arg(&file),
    );
    assert!(by_name.status.success(), "{}", show(&by_name));
    let json: Value = serde_json::from_slice(&by_name.stdout).expect("status JSON");
    assert_eq!(json[0]["logged_in"], true);
    assert_eq!(json[0]["refreshable"], true);
    assert_eq!(json[0]["server"], server.url.as_str());

    // The store: owner-only, and it holds the latest tokens.
    let auth_dir = data.join("auth");
    let mut stored = Vec::new();
    files(&auth_dir, &mut stored);
    assert_eq!(stored.len(), 1, "{stored:?}");
    #[cfg(unix)]
    {
        assert_eq!(mode(&auth_dir), 0o700);
        assert_eq!(mode(&stored[0]), 0o600);
    }
    let store_text = std::fs::read_to_string(&stored[0]).expect("store");
    assert!(store_text.contains(issued[2]["access_token"].as_str().expect("token")));

    // 5. No token anywhere but the store: files written, output printed.
    let mut secrets: Vec<String> = Vec::new();
    for e in server.events_of("issued") {
        for key in ["access_token", "refresh_token"] {
            secrets.push(e[key].as_str().expect("token").to_owned());
        }
    }
    let mut written = Vec::new();
    files(&data, &mut written);
    files(&work, &mut written);
    let written: Vec<PathBuf> = written.into_iter().filter(|p| p != &stored[0]).collect();
    assert!(
        written
            .iter()
            .any(|p| p.starts_with(data.join("runs")) || p.starts_with(&data)),
        "the runs were saved under the data dir: {written:?}"
    );
    for path in &written {
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("read")).into_owned();
        for secret in &secrets {
            assert!(!text.contains(secret), "a token in {}", path.display());
        }
    }
    let output = printed.text();
    for secret in &secrets {
        assert!(!output.contains(secret), "a token in the output");
    }

    // 6. Logout forgets (and revokes); a run off a terminal then says how
    // to log in, in one line.
    let logout = printed.run(pw(&data).args(["auth", "logout", &server.url]));
    assert!(logout.status.success(), "{}", show(&logout));
    assert!(
        String::from_utf8_lossy(&logout.stdout).contains(&format!("Logged out of {}", server.url)),
        "{}",
        show(&logout)
    );
    // The refresh token was sent for revocation (RFC 7009). The SDK 2.3.0
    // endpoint refuses public clients (its form model requires a
    // `client_secret` field), so it is not asserted that it was revoked.
    let revocations = server.events_of("revoke_request");
    assert_eq!(revocations.len(), 1, "{revocations:?}");
    assert_eq!(revocations[0]["token_type_hint"], "refresh_token");
    let mut left = Vec::new();
    files(&auth_dir, &mut left);
    assert!(left.is_empty(), "{left:?}");
    let refused = printed.run(pw(&data).arg("run").arg(&file).arg("--no-save"));
    assert_eq!(refused.status.code(), Some(4), "{}", show(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(
        stderr.contains(&format!("run `pipewright auth login {}`", server.url)),
        "{stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("AuthRequired"),
        "{stderr}"
    );
    let called = printed.run(pw(&data).args(["tools", "list", "--url", &server.url]));
    assert_eq!(called.status.code(), Some(4), "{}", show(&called));
    let stderr = String::from_utf8_lossy(&called.stderr).into_owned();
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("needs a login"), "{stderr}");
}

#[test]
fn a_preregistered_client_id_logs_in_where_registration_is_off() {
    let server = Server::start(&["--no-dcr"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let printed = Printed::default();

    let out = printed.run(pw(tmp.path()).args(["auth", "login", &server.url, "--no-browser"]));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not support dynamic client registration")
            && stderr.contains("--client-id"),
        "{stderr}"
    );

    let (login, authorize) = start_login(
        tmp.path(),
        &[
            &server.url,
            "--client-id",
            "preregistered",
            "--scope",
            "mcp",
        ],
        &printed,
    );
    assert_eq!(
        query_param(&authorize, "client_id").as_deref(),
        Some("preregistered")
    );
    let (status, body, _) = browse(&authorize);
    assert_eq!(status, 200, "{body}");
    let (code, stdout) = finish_login(login, &printed);
    assert_eq!(code, Some(0), "{}", printed.text());
    assert!(stdout.contains("client preregistered"), "{stdout}");
    assert!(server.events_of("register").is_empty());
    let called = printed.run(pw(tmp.path()).args(["tools", "list", "--url", &server.url]));
    assert!(called.status.success(), "{}", show(&called));
    assert!(String::from_utf8_lossy(&called.stdout).contains("echo"));
}

#[test]
fn a_denied_authorization_fails_the_login_and_stores_nothing() {
    let server = Server::start(&["--deny"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let printed = Printed::default();
    let (login, authorize) = start_login(tmp.path(), &[&server.url], &printed);
    let (status, body, _) = browse(&authorize);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("access_denied"), "{body}");
    let (code, _) = finish_login(login, &printed);
    assert_eq!(code, Some(1), "{}", printed.text());
    let text = printed.text();
    assert!(
        text.contains("the authorization was refused: access_denied (the user said no)"),
        "{text}"
    );
    let mut stored = Vec::new();
    files(&tmp.path().join("auth"), &mut stored);
    assert!(stored.is_empty(), "{stored:?}");
}

/// A redirect with another state, or none (a browser's prefetch, a port
/// scan, another tab), is answered with an error page and the login waits
/// on for its own: it used to end the login. Nothing is exchanged for the
/// forged request's code.
#[test]
fn a_redirect_with_another_state_is_refused_and_the_login_waits_for_its_own() {
    let server = Server::start(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let printed = Printed::default();
    let (login, authorize) = start_login(tmp.path(), &[&server.url], &printed);
    // The authorization server's redirect, but with a forged state.
    let (status, location, body) = http_get(&authorize);
    assert_eq!(status, 302, "{body}");
    let location = location.expect("a redirect");
    let state = query_param(&location, "state").expect("state");
    let forged = location.replace(&format!("state={state}"), "state=forged");
    assert_ne!(forged, location);
    let missing = location.replace(&format!("state={state}"), "");
    for wrong in [&forged, &missing] {
        let (status, _, body) = http_get(wrong);
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("pipewright keeps waiting"), "{body}");
    }
    assert!(server.events_of("token_request").is_empty());
    let (status, _, body) = http_get(&location);
    assert_eq!(status, 200, "{body}");
    let (code, stdout) = finish_login(login, &printed);
    assert_eq!(code, Some(0), "{}", printed.text());
    assert!(stdout.contains("Logged in to"), "{stdout}");
    assert_eq!(server.events_of("token_request").len(), 1);
}

#[test]
fn a_server_without_oauth_metadata_is_refused_with_a_sentence() {
    // Answers 404 to everything: no challenge, no metadata.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = common::pipewright_in(tmp.path())
        .stdin(Stdio::null())
        .args(["auth", "login", &url, "--no-browser"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("publishes no OAuth metadata"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn names_and_bad_urls_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("p.yml");
    std::fs::write(
        &file,
        "servers:\n  local: { command: demo }\npipe:\n  - { id: a, tool: t }\n",
    )
    .expect("file");
    for (args, says) in [
        (
            vec!["auth", "login", "ftp://example.com/x"],
            "not an http:// or https:// URL",
        ),
        (vec!["auth", "status", "remote"], "add `--file FILE`"),
        (
            vec!["auth", "logout", "local", "--file"],
            "is a stdio server",
        ),
        (
            vec!["auth", "status", "nope", "--file"],
            "declares no server `nope`",
        ),
    ] {
        let mut cmd = pw(tmp.path());
        cmd.args(&args);
        if args.last() == Some(&"--file") {
            cmd.arg(&file);
        }
        let out = cmd.output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let out = pw(tmp.path())
        .args(["auth", "status"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("No stored logins"));
}

#[test]
fn a_run_that_meets_a_401_logs_in_when_it_may_and_goes_on() {
    let server = Server::start(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let printed = Printed::default();
    // As on a terminal, but printing the URL instead of opening a browser.
    let mut cmd = pw(tmp.path());
    cmd.env("PIPEWRIGHT_AUTH_PROMPT", "print").args([
        "tools",
        "call",
        "echo",
        "--url",
        &server.url,
        "--args",
        r#"{"message":"after login"}"#,
    ]);
    let (run, authorize) = start_waiting_for_url(&mut cmd, &printed);
    let (status, body, _) = browse(&authorize);
    assert_eq!(status, 200, "{body}");
    let (code, stdout) = finish_login(run, &printed);
    assert_eq!(code, Some(0), "{}", printed.text());
    assert!(stdout.contains("echo: after login"), "{stdout}");
    let text = printed.text();
    assert!(text.contains("needs a login"), "{text}");
    assert!(
        text.contains(&format!("Logged in to {}", server.url)),
        "{text}"
    );
    for e in server.events_of("issued") {
        assert!(!text.contains(e["access_token"].as_str().expect("token")));
    }
}

/// A browser for tests: the venv's Python fetches the authorization URL
/// and follows the redirect to pipewright's loopback listener, as the
/// conformance suite's `BROWSER="curl -sL"` does.
fn opener() -> String {
    format!(
        "{} -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()'",
        python().display()
    )
}

/// The binary as `pw`, with every directory it reads in `data`, allowed
/// to log in by opening [`opener`] (no terminal, nothing printed).
fn browsing(data: &Path) -> Command {
    let mut cmd = pw(data);
    for var in [
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, data.join(var.to_ascii_lowercase()));
    }
    cmd.env("PIPEWRIGHT_AUTH_PROMPT", "browser")
        .env("BROWSER", opener());
    cmd
}

fn scopes_of(event: &Value) -> Vec<String> {
    event["scopes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_403_for_more_scope_reauthorizes_and_a_lasting_refusal_stops_after_two() {
    let server = Server::start(&["--step-up"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let printed = Printed::default();
    let out = printed.run(browsing(tmp.path()).args([
        "tools",
        "call",
        "write",
        "--url",
        &server.url,
        "--args",
        r#"{"message":"stepped up"}"#,
    ]));
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("wrote: stepped up"),
        "{}",
        show(&out)
    );
    let authorized = server.events_of("authorize");
    assert_eq!(authorized.len(), 2, "{authorized:?}");
    assert_eq!(scopes_of(&authorized[0]), ["mcp"]);
    assert_eq!(scopes_of(&authorized[1]), ["mcp", "mcp:write"]);
    let refused = |events: &[Value], scope: &str| {
        events
            .iter()
            .filter(|e| e["refused"].as_str().is_some_and(|r| r.contains(scope)))
            .count()
    };
    assert_eq!(refused(&server.events_of("mcp"), "mcp:write"), 1);
    let status = printed.run(pw(tmp.path()).args(["auth", "status", &server.url]));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("scopes mcp mcp:write"),
        "{}",
        show(&status)
    );

    // Where no login may be made, the 403 says which login would help.
    let other = tempfile::tempdir().expect("tempdir");
    let out = printed.run(browsing(other.path()).args(["tools", "list", "--url", &server.url]));
    assert!(out.status.success(), "{}", show(&out));
    let out = printed.run(
        browsing(other.path())
            .env("PIPEWRIGHT_AUTH_PROMPT", "never")
            .args(["tools", "call", "write", "--url", &server.url])
            .args(["--args", r#"{"message":"no"}"#]),
    );
    assert!(!out.status.success(), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "needs a login with scope `mcp mcp:write`: run `pipewright auth login {} --scope mcp --scope mcp:write`",
            server.url
        )),
        "{stderr}"
    );
    assert_eq!(server.events_of("authorize").len(), 3);

    // A refusal no authorization cures: two step-ups, then a sentence.
    let out =
        printed.run(browsing(tmp.path()).args(["tools", "call", "admin", "--url", &server.url]));
    assert!(!out.status.success(), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("still refuses (HTTP 403 insufficient_scope with scope `mcp mcp:admin`) after 2 re-authorizations"),
        "{stderr}"
    );
    assert_eq!(server.events_of("authorize").len(), 5);
    assert_eq!(refused(&server.events_of("mcp"), "mcp:admin"), 3);
    let text = printed.text();
    for e in server.events_of("issued") {
        assert!(!text.contains(e["access_token"].as_str().expect("token")));
    }
}

#[test]
fn servers_without_resource_metadata_use_the_origin_then_the_default_endpoints() {
    for (flag, has_metadata) in [("--no-prm", true), ("--no-metadata", false)] {
        let server = Server::start(&[flag]);
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = browsing(tmp.path())
            .args([
                "tools",
                "call",
                "echo",
                "--url",
                &server.url,
                "--args",
                r#"{"message":"old layout"}"#,
            ])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{flag}: {}", show(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("echo: old layout"));
        let discovered: Vec<String> = server
            .events_of("discovery")
            .iter()
            .filter_map(|e| e["path"].as_str().map(str::to_owned))
            .collect();
        assert!(
            discovered.contains(&"/.well-known/oauth-protected-resource/mcp".to_owned())
                && discovered.contains(&"/.well-known/oauth-authorization-server".to_owned()),
            "{flag}: {discovered:?}"
        );
        assert_eq!(server.events_of("register").len(), 1, "{flag}");
        let authorized = server.events_of("authorize");
        assert_eq!(authorized.len(), 1, "{flag}");
        assert_eq!(authorized[0]["resource"], server.url.as_str(), "{flag}");
        let tokens = server.events_of("token_request");
        assert!(
            tokens
                .iter()
                .any(|t| t["grant_type"] == "authorization_code" && t["code_verifier"] == true),
            "{flag}: {tokens:?}"
        );
        let status = pw(tmp.path())
            .args(["auth", "status", &server.url])
            .output()
            .expect("runs");
        let shown = String::from_utf8_lossy(&status.stdout);
        // The issuer comes from the metadata; the default endpoints have none.
        assert_eq!(
            shown.contains(&format!("issuer {}", server.base)),
            has_metadata,
            "{flag}: {shown}"
        );
    }
}

#[test]
fn a_client_id_metadata_document_url_replaces_registration_where_it_is_taken() {
    const DOCUMENT: &str = "https://pipewright.example/oauth/client.json";
    let server = Server::start(&["--cimd"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = browsing(tmp.path())
        .args(["auth", "login", &server.url, "--client-id-url", DOCUMENT])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("client {DOCUMENT}")),
        "{}",
        show(&out)
    );
    assert!(server.events_of("register").is_empty());
    let authorized = server.events_of("authorize");
    assert_eq!(authorized.len(), 1);
    assert_eq!(authorized[0]["client_id"], DOCUMENT);
    let called = browsing(tmp.path())
        .args(["tools", "list", "--url", &server.url])
        .output()
        .expect("runs");
    assert!(called.status.success(), "{}", show(&called));

    // The same declaration where the authorization server does not take
    // such documents: pipewright registers itself as before.
    let plain = Server::start(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("p.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  api:\n    url: {}\n    auth:\n      client_id_url: {DOCUMENT}\npipe:\n  - id: e\n    tool: echo\n    args: {{ message: hi }}\n",
            plain.url
        ),
    )
    .expect("file");
    let out = browsing(tmp.path())
        .arg("run")
        .arg(&file)
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(plain.events_of("register").len(), 1);
    assert_ne!(plain.events_of("authorize")[0]["client_id"], DOCUMENT);
}

#[test]
fn client_credentials_log_in_without_a_browser_by_secret_or_signed_key() {
    let keys = tempfile::tempdir().expect("tempdir");
    let key = keys.path().join("cc-key.pem");
    let key_arg = key.to_string_lossy().into_owned();
    let server = Server::start(&["--client-credentials", &key_arg]);
    let printed = Printed::default();

    // A literal secret in the file is refused before anything runs.
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("ci.yml");
    let pipeline = |secret: &str| {
        format!(
            "servers:\n  api:\n    url: {}\n    auth:\n      grant: client_credentials\n      client_id: cc-client\n      client_secret: \"{secret}\"\n      scopes: [mcp]\npipe:\n  - id: e\n    tool: echo\n    args: {{ message: from ci }}\n",
            server.url
        )
    };
    std::fs::write(&file, pipeline("cc-secret")).expect("file");
    // (Not in `printed`: the diagnostic quotes the file's line.)
    let out = pw(tmp.path())
        .arg("check")
        .arg(&file)
        .output()
        .expect("runs");
    assert!(!out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("must be a reference")
            || String::from_utf8_lossy(&out.stderr).contains("must be a reference"),
        "{}",
        show(&out)
    );

    // The secret from the environment, HTTP Basic, no prompt allowed.
    std::fs::write(&file, pipeline("${env.CC_SECRET}")).expect("file");
    let out = printed.run(
        pw(tmp.path())
            .env("CC_SECRET", "cc-secret")
            .env("PIPEWRIGHT_AUTH_PROMPT", "never")
            .arg("run")
            .arg(&file),
    );
    assert!(out.status.success(), "{}", show(&out));
    let granted = server.events_of("client_credentials");
    assert_eq!(granted.len(), 1, "{granted:?}");
    assert_eq!(granted[0]["auth"], "basic");
    assert_eq!(granted[0]["ok"], true);
    assert_eq!(granted[0]["scope"], "mcp");
    assert_eq!(granted[0]["resource"], server.url.as_str());
    assert!(server.events_of("authorize").is_empty());
    let mut written = Vec::new();
    files(tmp.path(), &mut written);
    // Not even the token store keeps a secret the file reads from the
    // environment.
    assert!(!written.is_empty());
    for path in &written {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            !text.contains("cc-secret"),
            "{} holds the secret",
            path.display()
        );
    }

    // `auth login -f` with the same file: the declared secret still stays
    // in the environment (the store keeps only a secret given as a flag).
    let out = printed.run(
        pw(tmp.path())
            .env("CC_SECRET", "cc-secret")
            .args(["auth", "login", "api", "--client-credentials", "-f"])
            .arg(&file),
    );
    assert!(out.status.success(), "{}", show(&out));
    let mut written = Vec::new();
    files(tmp.path(), &mut written);
    for path in &written {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            !text.contains("cc-secret"),
            "{} holds the secret after `auth login -f`",
            path.display()
        );
    }

    // A private key signs an ES256 assertion; the token serves later calls.
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = printed.run(pw(tmp.path()).args([
        "auth",
        "login",
        &server.url,
        "--client-credentials",
        "--client-id",
        "cc-client",
        "--private-key",
        &key_arg,
    ]));
    assert!(out.status.success(), "{}", show(&out));
    let granted = server.events_of("client_credentials");
    let signed = granted.last().expect("a grant");
    assert_eq!(signed["auth"], "private_key_jwt", "{signed}");
    assert_eq!(signed["alg"], "ES256", "{signed}");
    assert_eq!(
        signed["assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert_eq!(signed["ok"], true, "{signed}");
    let called = printed.run(pw(tmp.path()).args(["tools", "list", "--url", &server.url]));
    assert!(called.status.success(), "{}", show(&called));
    assert!(String::from_utf8_lossy(&called.stdout).contains("echo"));
    // An RSA key signs RS256.
    let out = printed.run(pw(tmp.path()).args([
        "auth",
        "login",
        &server.url,
        "--client-credentials",
        "--client-id",
        "cc-client",
        "--private-key",
        &format!("{key_arg}.rsa"),
    ]));
    assert!(out.status.success(), "{}", show(&out));
    let granted = server.events_of("client_credentials");
    let signed = granted.last().expect("a grant");
    assert_eq!(
        (&signed["alg"], &signed["ok"]),
        (&Value::from("RS256"), &Value::from(true)),
        "{signed}"
    );

    // A wrong secret: the authorization server's refusal, in a sentence.
    let out = printed.run(
        pw(tmp.path())
            .env("PIPEWRIGHT_OAUTH_CLIENT_SECRET", "wrong-secret")
            .args([
                "auth",
                "login",
                &server.url,
                "--client-credentials",
                "--client-id",
                "cc-client",
            ]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "the client-credentials grant failed: the token endpoint refused the client credentials: HTTP 401 invalid_client"
        ),
        "{stderr}"
    );
    let text = printed.text();
    assert!(
        !text.contains("wrong-secret") && !text.contains("cc-secret"),
        "{text}"
    );
    for e in server.events_of("issued") {
        assert!(!text.contains(e["access_token"].as_str().expect("token")));
    }
}

#[test]
fn assertion_grants_get_tokens_without_a_browser_and_keep_no_assertion() {
    let keys = tempfile::tempdir().expect("tempdir");
    let dir = keys.path().to_string_lossy().into_owned();
    let server = Server::start(&["--assertion-grants", &dir]);
    let printed = Printed::default();
    let read = |name: &str| {
        std::fs::read_to_string(keys.path().join(name))
            .expect("written by the server")
            .trim()
            .to_owned()
    };
    let (workload, next, id_token) = (
        read("workload.jwt"),
        read("workload-next.jwt"),
        read("id_token.jwt"),
    );

    // Workload identity: the token file, read for each token request.
    let tmp = tempfile::tempdir().expect("tempdir");
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, format!("{workload}\n")).expect("token file");
    let file = tmp.path().join("ci.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  api:\n    url: {}\n    auth:\n      grant: jwt_bearer\n      assertion:\n        file: {}\npipe:\n  - id: e\n    tool: echo\n    args: {{ message: from a pod }}\n",
            server.url,
            token_file.display()
        ),
    )
    .expect("file");
    let run = || {
        printed.run(
            pw(tmp.path())
                .env("PIPEWRIGHT_AUTH_PROMPT", "never")
                .arg("run")
                .arg(&file),
        )
    };
    // `doctor` knows the grant needs no registration and no saved login.
    let out = printed.run(pw(tmp.path()).arg("doctor").arg(&file));
    assert!(out.status.success(), "{}", show(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("names `grant: jwt_bearer`, which needs no registration")
            && said.contains("the `grant: jwt_bearer` of its `auth:` obtains a token"),
        "{said}"
    );
    let out = run();
    assert!(out.status.success(), "{}", show(&out));
    let granted = server.events_of("jwt_bearer");
    assert_eq!(granted.len(), 1, "{granted:?}");
    assert_eq!(granted[0]["assertion"], "workload");
    assert_eq!(granted[0]["ok"], true, "{:?}", granted[0]);
    assert_eq!(granted[0]["resource"], server.url.as_str());
    assert!(server.events_of("authorize").is_empty());
    // The platform rotated the token and the server forgot the access
    // token: the next run presents the new file's JWT.
    std::fs::write(&token_file, &next).expect("rotated");
    let (status, _, _) = http_get(&format!("{}/debug/forget-access-tokens", server.base));
    assert_eq!(status, 204);
    let out = run();
    assert!(out.status.success(), "{}", show(&out));
    let granted = server.events_of("jwt_bearer");
    assert_eq!(granted.len(), 2, "{granted:?}");
    assert_ne!(granted[0]["jti"], granted[1]["jti"], "the rotated JWT");
    assert_eq!(granted[1]["ok"], true);
    // `auth login NAME -f FILE` runs the grant at once, here with the JWT
    // printed by a command.
    let cmd_file = tmp.path().join("cmd.yml");
    std::fs::write(
        &cmd_file,
        format!(
            "servers:\n  api:\n    url: {}\n    auth:\n      grant: jwt_bearer\n      assertion:\n        command: [cat, {}]\npipe:\n  - id: e\n    tool: echo\n    args: {{ message: x }}\n",
            server.url,
            token_file.display()
        ),
    )
    .expect("file");
    let out = printed.run(
        pw(tmp.path())
            .args(["auth", "login", "api", "-f"])
            .arg(&cmd_file),
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Logged in to"));
    let granted = server.events_of("jwt_bearer");
    assert_eq!(granted.len(), 3, "{granted:?}");
    assert_eq!(
        granted[2]["jti"], granted[1]["jti"],
        "the command printed the file"
    );

    // Enterprise-managed: the ID token exchanged at the identity provider
    // (found from its issuer) for an ID-JAG, presented with the client's
    // secret in HTTP Basic. (The server forgets the workload's token,
    // which the store keeps for its URL.)
    let (status, _, _) = http_get(&format!("{}/debug/forget-access-tokens", server.base));
    assert_eq!(status, 204);
    let file = tmp.path().join("sso.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  api:\n    url: {}\n    auth:\n      grant: id_jag\n      client_id: xaa-client\n      client_secret: \"${{env.XAA_SECRET}}\"\n      identity_provider:\n        issuer: {}/idp\n        client_id: idp-client\n        id_token: \"${{env.ID_TOKEN}}\"\npipe:\n  - id: e\n    tool: echo\n    args: {{ message: from a user }}\n",
            server.url, server.base
        ),
    )
    .expect("file");
    let out = printed.run(
        pw(tmp.path())
            .env("PIPEWRIGHT_AUTH_PROMPT", "never")
            .env("XAA_SECRET", "xaa-secret")
            .env("ID_TOKEN", &id_token)
            .arg("run")
            .arg(&file),
    );
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(server.events_of("idp_discovery").len(), 1);
    let exchanged = server.events_of("token_exchange");
    assert_eq!(exchanged.len(), 1, "{exchanged:?}");
    assert_eq!(exchanged[0]["ok"], true, "{:?}", exchanged[0]);
    assert_eq!(exchanged[0]["audience"], server.base.as_str());
    assert_eq!(exchanged[0]["resource"], server.url.as_str());
    assert_eq!(exchanged[0]["client_id"], "idp-client");
    let granted = server.events_of("jwt_bearer");
    let last = granted.last().expect("a grant");
    assert_eq!(
        (&last["assertion"], &last["auth"], &last["ok"]),
        (
            &Value::from("id_jag"),
            &Value::from("basic"),
            &Value::from(true)
        ),
        "{last}"
    );

    // A refused assertion is a sentence, once: no retry, no other grant.
    std::fs::write(&token_file, "e30.e30.c2ln").expect("bad token");
    let (status, _, _) = http_get(&format!("{}/debug/forget-access-tokens", server.base));
    assert_eq!(status, 204);
    let file = tmp.path().join("ci.yml");
    let before = server.events_of("jwt_bearer").len();
    let out = printed.run(
        pw(tmp.path())
            .env("PIPEWRIGHT_AUTH_PROMPT", "never")
            .arg("run")
            .arg(&file),
    );
    assert!(!out.status.success(), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the workload identity (JWT bearer) grant failed")
            && stderr.contains("invalid_grant"),
        "{stderr}"
    );
    assert_eq!(server.events_of("jwt_bearer").len(), before + 1);
    assert!(server.events_of("authorize").is_empty());

    // No assertion, ID token or ID-JAG anywhere pipewright wrote or
    // printed; access tokens only in the token store.
    let mut secrets = vec![workload, next, id_token, "xaa-secret".to_owned()];
    secrets.extend(
        server
            .events_of("token_exchange")
            .iter()
            .filter_map(|e| e["id_jag"].as_str().map(str::to_owned)),
    );
    let mut written = Vec::new();
    files(tmp.path(), &mut written);
    assert!(!written.is_empty());
    let text = printed.text();
    let tokens: Vec<String> = server
        .events_of("issued")
        .iter()
        .filter_map(|e| e["access_token"].as_str().map(str::to_owned))
        .collect();
    for path in &written {
        let content = std::fs::read_to_string(path).unwrap_or_default();
        let is_input = path.extension().is_some_and(|e| e == "yml") || path.ends_with("token");
        for s in &secrets {
            assert!(
                is_input || !content.contains(s.as_str()),
                "{} holds an assertion",
                path.display()
            );
        }
        let in_store = path.components().any(|c| c.as_os_str() == "auth");
        for t in &tokens {
            assert!(
                in_store || !content.contains(t.as_str()),
                "{} holds an access token",
                path.display()
            );
        }
    }
    for s in secrets.iter().chain(&tokens) {
        assert!(!text.contains(s.as_str()), "printed: {text}");
    }
}
