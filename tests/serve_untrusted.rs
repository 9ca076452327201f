//! `serve --meta-tool`'s caller is not trusted: an inline pipeline it sends
//! can use the upstream servers and its own `vars`, and nothing of the
//! server's environment, whatever shape it asks for the value in.

mod common;

fn pw() -> assert_cmd::Command {
    assert_cmd::Command::from_std(common::pipewright())
}

const SECRET: &str = "hunter2-very-secret";

/// Every way the secret could come back: as is, upper-cased, as character
/// codes, base64, one character per element.
fn leaks(text: &str) -> Option<&'static str> {
    let codes: Vec<String> = SECRET.bytes().map(|b| b.to_string()).collect();
    let b64 = base64(SECRET.as_bytes());
    if text.contains(SECRET) {
        Some("as is")
    } else if text.contains(&SECRET.to_uppercase()) {
        Some("upper-cased")
    } else if text.contains(&codes.join(",")) || text.contains(&codes.join(", ")) {
        Some("as character codes")
    } else if text.contains(&b64[..12]) {
        Some("as base64")
    } else if text.contains("\"h\",\"u\",\"n\"") || text.contains("\"h\", \"u\", \"n\"") {
        Some("split into characters")
    } else {
        None
    }
}

/// Standard base64, padded.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_is_standard() {
    assert_eq!(base64(b"hunter2"), "aHVudGVyMg==");
}

/// Calls `run_pipeline` on `server` with `pipeline`, `SECRET_TOKEN` (and
/// `env`) in the server's environment: whether it succeeded, and all it
/// printed.
fn run_pipeline(
    server: &str,
    data: &std::path::Path,
    pipeline: &str,
    env: &[(&str, &str)],
) -> (bool, String) {
    let args = serde_json::json!({ "pipeline": pipeline });
    let mut cmd = pw();
    cmd.env("SECRET_TOKEN", SECRET)
        .env("PIPEWRIGHT_DATA_DIR", data);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["tools", "call", "run_pipeline", "--server", server])
        .args(["--args", &args.to_string()])
        .output()
        .expect("runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `--server` for `serve --meta-tool` (with `flags`) on a one-node file
/// written in `dir`.
fn meta_tool_server(dir: &std::path::Path, flags: &str) -> String {
    let served = dir.join("up.yml");
    std::fs::write(
        &served,
        "pipe:\n  - id: e\n    tool: echo\n    args: { message: hi }\n",
    )
    .unwrap();
    format!(
        "s={} serve --no-save --meta-tool {flags}{}",
        assert_cmd::cargo::cargo_bin("pipewright").display(),
        served.display()
    )
}

#[test]
fn an_inline_pipeline_cannot_read_the_servers_environment() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = meta_tool_server(dir.path(), "");
    let node = |args: &str, extra: &str| {
        format!("pipe:\n  - id: x\n    tool: echo\n    args: {args}\n{extra}")
    };
    let tries = [
        // The case: a reference, reshaped by a transform.
        node(
            "{ message: \"${env.SECRET_TOKEN}\" }",
            "    transform: \"tostring | explode\"\n",
        ),
        node("{ message: \"${env.SECRET_TOKEN}\" }", ""),
        node(
            "{ message: \"x ${env.SECRET_TOKEN} y\" }",
            "    transform: \".message | ascii_upcase\"\n",
        ),
        // jq's own `env`, in every shape.
        node(
            "{ message: a }",
            "    transform: \"env.SECRET_TOKEN | explode\"\n",
        ),
        node(
            "{ message: a }",
            "    transform: \"env | tostring | ascii_upcase\"\n",
        ),
        node(
            "{ message: a }",
            "    transform: \"[env[]] | join(\\\",\\\") | @base64\"\n",
        ),
        node(
            "{ message: a }",
            "    transform: \"env.SECRET_TOKEN | split(\\\"\\\")\"\n",
        ),
        node(
            "{ message: a }",
            "    transform: \"env.SECRET_TOKEN[0:8]\"\n",
        ),
        // A `when:` subject is a reference too.
        node(
            "{ message: a }",
            "    when: ${env.SECRET_TOKEN} | startswith(\"hunter\")\n",
        ),
        // Declaring a server would start a process of the caller's choice.
        format!(
            "servers:\n  evil: {{ command: sh, args: [-c, \"echo $SECRET_TOKEN\"] }}\n{}",
            node("{ message: a }", "    server: evil\n")
        ),
    ];
    for (i, pipeline) in tries.iter().enumerate() {
        let (ok, text) = run_pipeline(&server, &dir.path().join("data"), pipeline, &[]);
        assert!(!ok, "try {i} was run:\n{pipeline}\n{text}");
        if let Some(how) = leaks(&text) {
            panic!("try {i} leaked the secret {how}:\n{pipeline}\n{text}");
        }
        assert!(
            text.contains("environment")
                || text.contains("env/0")
                || text.contains("`env`")
                || text.contains("may not declare servers"),
            "try {i} was refused for another reason:\n{pipeline}\n{text}"
        );
    }
    // The same server still runs an honest inline pipeline, with vars.
    let honest = serde_json::json!({
        "pipeline": "pipe:\n  - id: x\n    tool: echo\n    args: { message: \"${var.m}\" }\n    transform: ascii_upcase\n",
        "vars": { "m": "fine" }
    });
    let out = pw()
        .env("SECRET_TOKEN", SECRET)
        .env("PIPEWRIGHT_DATA_DIR", dir.path().join("data"))
        .args(["tools", "call", "run_pipeline", "--server", &server])
        .args(["--args", &honest.to_string()])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("FINE"), "{text}");
}

/// `--allow-env NAME` lets inline pipelines read that variable, and only
/// that one: the secret beside it stays out of reach.
#[test]
fn allow_env_opens_one_variable_and_no_other() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = meta_tool_server(dir.path(), "--allow-env PUBLIC_REGION ");
    let data = dir.path().join("data");
    let call =
        |pipeline: &str| run_pipeline(&server, &data, pipeline, &[("PUBLIC_REGION", "eu-west-3")]);
    // The value is used: the call gets it, and what comes back holds it,
    // masked like every environment value.
    let (ok, text) =
        call("pipe:\n  - id: x\n    tool: echo\n    args: { message: \"${env.PUBLIC_REGION}\" }\n");
    assert!(ok, "{text}");
    assert!(
        text.contains("***") && !text.contains("eu-west-3"),
        "{text}"
    );
    let (ok, text) =
        call("pipe:\n  - id: x\n    tool: echo\n    args: { message: \"${env.SECRET_TOKEN}\" }\n");
    assert!(!ok, "{text}");
    assert!(text.contains("environment"), "{text}");
    assert!(leaks(&text).is_none(), "{text}");
}

/// A caller's jq cannot hold the server's CPU or take it down: a program
/// that never ends is stopped after its steps, one that recurses without
/// end is stopped before the stack runs out (it aborted the whole `serve`
/// process), and one nested past the compiler's limit is refused unread.
/// Each comes back to the caller as an error, with the limit named.
#[test]
fn a_callers_endless_or_bottomless_jq_is_stopped_and_the_server_survives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = meta_tool_server(dir.path(), "");
    let data = dir.path().join("data");
    let node = |program: &str| {
        format!(
            "pipe:\n  - id: x\n    tool: echo\n    args: {{ message: hi }}\n    transform: '{program}'\n"
        )
    };
    let cases = [
        ("last(range(1e12))", "stopped after 200000 steps"),
        ("[repeat(1)] | length", "stopped after 200000 steps"),
        ("def f: f; f", "stopped after 200000 steps"),
        (
            "try last(range(1e12)) catch \"swallowed\"",
            "stopped after 200000 steps",
        ),
        ("def f: 1 + f; f", "recursed too deeply"),
        ("def f: [f]; f", "recursed too deeply"),
    ];
    for (program, said) in cases {
        let (ok, text) = run_pipeline(
            &server,
            &data,
            &node(program),
            &[("PIPEWRIGHT_JQ_STEPS", "200000")],
        );
        assert!(!ok, "{program}: {text}");
        assert!(text.contains(said), "{program}: {text}");
        assert!(!text.contains("closed the connection"), "{text}");
    }
    let deep = node(&format!("{}1{}", "[".repeat(1000), "]".repeat(1000)));
    let (ok, text) = run_pipeline(&server, &data, &deep, &[]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("nests brackets more than 256 levels"),
        "{text}"
    );
}
