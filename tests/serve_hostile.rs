//! One served caller cannot take `serve` down for the others. Each test
//! sends one hostile `run_pipeline` to a real `serve --http --meta-tool`
//! while eight other clients call it at the same moment: the hostile call
//! gets an error that names its limit, the eight get their answers, and the
//! server is still up for the next caller.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod common;
use common::Hermetic;

/// The pipewright binary under test.
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_pipewright")
}

/// A `serve --http --meta-tool` of a one-node file (`up`: the demo
/// server's `slow` for 200 ms, then `echo`), on 127.0.0.1.
struct Served {
    child: tokio::process::Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Served {
    async fn start(env: &[(&str, &str)]) -> Served {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("up.yml");
        std::fs::write(
            &file,
            format!(
                "servers:\n  demo:\n    command: {}\n    args: [demo-server]\n\
                 pipe:\n  - id: wait\n    tool: slow\n    args: {{ ms: 200 }}\n\
                 \x20 - id: say\n    tool: echo\n    args: {{ message: \"up ${{var.who}}\" }}\n",
                bin()
            ),
        )
        .expect("write the served file");
        let mut cmd = tokio::process::Command::new(bin());
        cmd.arg("serve")
            .arg(&file)
            .args(["--http", "127.0.0.1:0", "--no-save", "--meta-tool"]);
        isolate(&mut cmd, dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("serve starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(60), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("http://") {
                    return line[at..].trim().to_owned();
                }
            }
            panic!("serve ended before it listened")
        })
        .await
        .expect("serve listens within a minute");
        // Keep draining stderr so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Served { child, url, dir }
    }

    /// One client (`pipewright tools call`, a process of its own) calls
    /// `tool` with `args`: whether it succeeded, and all it printed.
    async fn call(&self, tool: &str, args: &serde_json::Value) -> (bool, String) {
        let mut cmd = tokio::process::Command::new(bin());
        // The arguments go on stdin: a hostile pipeline can be bigger than
        // one command-line argument may be (128 KiB on Linux).
        cmd.args(["tools", "call", tool, "--server"])
            .arg(format!("s={}", self.url))
            .arg("--args-from-stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        isolate(&mut cmd, &self.dir.path().join("client"));
        let mut child = cmd.spawn().expect("the client runs");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = args.to_string();
        let feed = async move {
            // A client that refuses early may close its stdin first.
            let _ = stdin.write_all(input.as_bytes()).await;
        };
        let (out, ()) = tokio::time::timeout(
            Duration::from_secs(120),
            futures::future::join(child.wait_with_output(), feed),
        )
        .await
        .expect("the call ends within two minutes");
        let out = out.expect("the client runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// True while the server process runs.
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// Every directory and `PIPEWRIGHT_*` variable the process reads, set
/// here, so the user's environment does not leak into the test.
fn isolate(cmd: &mut tokio::process::Command, dir: &Path) {
    cmd.isolated(dir)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_STATE_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1");
}

/// Sends `pipeline` to `run_pipeline` while eight other clients call (four
/// the served composition `up`, four a benign inline pipeline); checks that
/// all eight got their answers and the server lives on. Returns what the
/// hostile call printed, which must be a refusal.
async fn survives(pipeline: &str, env: &[(&str, &str)]) -> String {
    let mut served = Served::start(env).await;
    let hostile = serde_json::json!({ "pipeline": pipeline });
    let benign_inline = serde_json::json!({
        "pipeline": "pipe:\n  - id: a\n    tool: slow\n    args: { ms: 300 }\n  - id: b\n    tool: echo\n    args: { message: benign }\n"
    });
    let others = (0..8).map(|i| {
        let served = &served;
        let inline = benign_inline.clone();
        async move {
            if i % 2 == 0 {
                let (ok, text) = served
                    .call("up", &serde_json::json!({ "who": format!("client {i}") }))
                    .await;
                assert!(ok, "client {i} calling `up` got no answer: {text}");
                assert!(
                    text.contains(&format!("up client {i}")),
                    "client {i}: {text}"
                );
            } else {
                let (ok, text) = served.call("run_pipeline", &inline).await;
                assert!(
                    ok,
                    "client {i} calling `run_pipeline` got no answer: {text}"
                );
                assert!(text.contains("benign"), "client {i}: {text}");
            }
        }
    });
    let ((ok, text), ()) = tokio::join!(served.call("run_pipeline", &hostile), async {
        futures::future::join_all(others).await;
    });
    assert!(!ok, "the hostile call must be refused: {text}");
    assert!(served.alive(), "serve died under the hostile call: {text}");
    let (ok, after) = served
        .call("up", &serde_json::json!({ "who": "after" }))
        .await;
    assert!(
        ok && after.contains("up after"),
        "serve answers after: {after}"
    );
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_benign_inline_pipeline_is_answered_beside_eight_clients() {
    let mut served = Served::start(&[]).await;
    let (ok, text) = served
        .call(
            "run_pipeline",
            &serde_json::json!({ "pipeline": "pipe:\n  - id: x\n    tool: echo\n    args: { message: fine }\n" }),
        )
        .await;
    assert!(ok && text.contains("fine"), "{text}");
    assert!(served.alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_that_refers_to_a_missing_node_is_refused_and_the_others_answered() {
    let text = survives(
        "pipe:\n  - id: x\n    tool: echo\n    args: { message: hi }\n    transform: '.nope'\n  - id: y\n    tool: echo\n    args: { message: '${nowhere.x}' }\n",
        &[],
    )
    .await;
    assert!(text.contains("nowhere"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_3_mib_string_aliased_2000_times_is_refused_at_the_alias_and_the_others_answered() {
    let mut pipeline = format!("vars:\n  big: &big \"{}\"\n", "x".repeat(3 * 1024 * 1024));
    for i in 0..2000 {
        pipeline.push_str(&format!("  k{i}: *big\n"));
    }
    pipeline.push_str("pipe:\n  - id: x\n    tool: echo\n    args: { message: hi }\n");
    let text = survives(&pipeline, &[]).await;
    let head = &text[..text.len().min(2000)];
    assert!(
        text.contains("anchors and aliases copy more than 16 MiB of text"),
        "{head}"
    );
    assert!(text.contains("PIPEWRIGHT_MAX_ALIAS_MB"), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_budget_of_1e19_seconds_is_refused_by_name_and_the_others_answered() {
    let text = survives(
        "budget: { max_duration: \"10000000000000000000s\" }\npipe:\n  - id: x\n    tool: slow\n    args: { ms: 100 }\n",
        &[],
    )
    .await;
    assert!(
        text.contains("`max_duration` `10000000000000000000s` is longer than 8760h (365 days)"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_timeout_of_1e19_seconds_is_refused_by_name_and_the_others_answered() {
    let text = survives(
        "pipe:\n  - id: x\n    tool: slow\n    args: { ms: 100 }\n    timeout: \"1e19\"\n",
        &[],
    )
    .await;
    assert!(
        text.contains("`timeout` `1e19` is longer than 8760h (365 days)"),
        "{text}"
    );
}

/// An inline pipeline whose one node's `transform:` is `jq`.
fn with_transform(jq: &str) -> String {
    format!(
        "pipe:\n  - id: x\n    tool: echo\n    args: {{ message: hi }}\n    transform: '{}'\n",
        jq.replace('\'', "''")
    )
}

/// A value a million levels deep overflowed the stack as it was dropped
/// (or printed, or parsed), on serve's worker thread: the whole server
/// aborted, for every client. It is refused at 512 levels now.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_nesting_a_million_levels_is_refused_and_the_others_answered() {
    let jq = "reduce range(1000000) as $i (null; [.]) | length";
    let text = survives(&with_transform(jq), &[]).await;
    assert!(text.contains("nested more than 512 levels deep"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_printing_a_value_a_million_levels_deep_is_refused_and_the_others_answered() {
    let jq = "reduce range(1000000) as $i (null; [.]) | tojson";
    let text = survives(&with_transform(jq), &[]).await;
    assert!(text.contains("nested more than 512 levels deep"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_parsing_json_a_hundred_thousand_levels_deep_is_refused_and_the_others_answered()
 {
    let jq = "\"[\" * 100000 | fromjson";
    let text = survives(&with_transform(jq), &[]).await;
    assert!(text.contains("nested more than 512 levels deep"), "{text}");
}

/// Forty doublings of a string asked for a terabyte in one allocation,
/// which aborted the server. The doubling past the budget is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_doubling_a_string_forty_times_is_refused_and_the_others_answered() {
    let jq = "reduce range(40) as $i (\"x\"; . + .)";
    let text = survives(&with_transform(jq), &[]).await;
    assert!(text.contains("more than 256 MiB of memory"), "{text}");
    assert!(
        text.contains("PIPEWRIGHT_JQ_MEMORY_MB=N raises the limit"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_transform_repeating_a_string_ten_billion_times_is_refused_and_the_others_answered() {
    let jq = "try (\"x\" * 10000000000) catch \"caught\"";
    let text = survives(&with_transform(jq), &[("PIPEWRIGHT_JQ_MEMORY_MB", "64")]).await;
    assert!(text.contains("more than 64 MiB of memory"), "{text}");
    assert!(
        text.contains("PIPEWRIGHT_JQ_MEMORY_MB=N raises the limit"),
        "{text}"
    );
}
