//! The recording view on a 1,000-call session: is the workbench still
//! responsive while it follows one? A writer thread writes a session file
//! as `pipewright record` does (a line flushed at a time) while the
//! workbench follows it through the same `Driver` the terminal loop uses,
//! and every pass of the loop draws a 200x60 frame. Measured:
//!
//! - the loop's own work per pass (taking in what came, applying it,
//!   drawing): what a key waits for at most;
//! - how long after a call's answer is written its node is on screen;
//! - how long after the last call the inferred edges reach every call;
//! - the engine's inference alone over the whole session, for scale.
//!
//! Two ways: calls written at a steady 200 a second, and the whole session
//! there before the workbench opens. `harness = false`: run with
//! `cargo bench --bench recording`; the figures are printed (no test
//! asserts a time).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use pipewright::engine::record::session::{End, Header, Server, Side, VERSION, Writer};
use pipewright::engine::redact::Redactor;
use pipewright::ui::{App, Config, Dirs, Driver, Editor, Keymap, Options, Theme};

/// Calls in the session.
const CALLS: usize = 1000;

/// The session's calls: cycles of an agent finding a user, reading their
/// details, going over a list, sending an email and checking on it, each
/// copying values out of earlier results.
fn calls() -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < CALLS {
        let (a, b) = (format!("u{i}a"), format!("u{i}b"));
        let name = format!("Name {i}");
        let email = format!("n{i}@example.com");
        out.push((
            "search_users".into(),
            json!({"query": format!("q{i}")}),
            json!({"users": [{"id": a, "name": name}, {"id": b, "name": "Other"}]}),
        ));
        out.push((
            "get_user_details".into(),
            json!({"user_id": a}),
            json!({"id": a, "name": name, "email": email}),
        ));
        let items: Vec<Value> = (1..=3)
            .map(|k| json!({"id": format!("it{i}-{k}")}))
            .collect();
        out.push((
            "list_items".into(),
            json!({"count": 3}),
            Value::Array(items),
        ));
        for k in 1..=3 {
            let id = format!("it{i}-{k}");
            out.push(("echo".into(), json!({"message": id}), json!({"echoed": id})));
        }
        let msg = format!("msg-{i:06}");
        out.push((
            "send_email".into(),
            json!({"to": email, "subject": format!("Hi {name}")}),
            json!({"message_id": msg, "status": "queued"}),
        ));
        out.push((
            "get_status".into(),
            json!({"message_id": msg}),
            json!({"status": "sent"}),
        ));
        i += 1;
    }
    out.truncate(CALLS);
    out
}

/// Writes the session to `path`, `pace` between calls; each call's
/// answer time goes into `written`.
fn write_session(path: &Path, pace: Duration, written: &Mutex<Vec<Instant>>) {
    let header = Header {
        version: VERSION,
        started: "2026-11-29T02:00:00Z".into(),
        recorder: "benches/recording.rs".into(),
        server: Server::Stdio {
            name: "demo".into(),
            command: "pipewright".into(),
            args: vec!["demo-server".into()],
        },
        session_id: None,
    };
    let mut w = Writer::create(path, &header, Redactor::default(), 16 << 20).expect("a new file");
    for (n, (tool, args, out)) in calls().into_iter().enumerate() {
        let id = n + 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}});
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": out.to_string()}], "structuredContent": out}});
        w.message(Side::Client, call.to_string().as_bytes(), None)
            .expect("written");
        w.message(Side::Server, answer.to_string().as_bytes(), None)
            .expect("written");
        written.lock().expect("lock").push(Instant::now());
        if !pace.is_zero() {
            std::thread::sleep(pace);
        }
    }
    w.end(End {
        reason: "client closed stdin".into(),
        exit_code: Some(0),
        signal: None,
    })
    .expect("written");
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The `p`-th percentile of `v` (sorted here).
fn pct(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

async fn scenario(label: &str, pace: Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    let session = dir.path().join("20261129-020000-demo-1.jsonl");
    let written = Arc::new(Mutex::new(Vec::new()));
    let before = pace.is_zero();
    if before {
        write_session(&session, pace, &written);
    }
    let file = dir.path().join("flow.yml");
    std::fs::write(&file, "pipe:\n  - id: a\n    tool: echo\n").expect("written");
    let editor = Editor::open(&file, None).expect("opens");
    let opts = Options {
        file,
        record: Some(session.clone()),
        ..Options::default()
    };
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let mut app = App::new(opts, Dirs::default(), config, editor);
    let mut driver = Driver::new();
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("a terminal");
    let started = Instant::now();
    let first = app.opening();
    let _ = driver.apply(&mut app, first);
    let writer = (!before).then(|| {
        let (s, w) = (session.clone(), Arc::clone(&written));
        std::thread::spawn(move || write_session(&s, pace, &w))
    });
    let mut passes: Vec<Duration> = Vec::new();
    let mut node_latency: Vec<Duration> = Vec::new();
    let mut on_screen = 0;
    let mut all_drawn = None;
    let mut caught_up = None;
    let deadline = Instant::now() + Duration::from_secs(600);
    while caught_up.is_none() && Instant::now() < deadline {
        let incoming = tokio::select! {
            i = driver.next() => Some(i),
            () = tokio::time::sleep(Duration::from_millis(100)) => None,
        };
        let t = Instant::now();
        let effects = match incoming {
            Some(i) => driver.take(&mut app, i),
            None => app.on_tick(Instant::now()),
        };
        let _ = driver.apply(&mut app, effects);
        term.draw(|f| app.draw(f)).expect("drawn");
        passes.push(t.elapsed());
        let (drawn, waiting) = app.recording_progress().unwrap_or_default();
        let times = written.lock().expect("lock").clone();
        let now = Instant::now();
        while on_screen < drawn.min(times.len()) {
            node_latency.push(now.saturating_duration_since(times[on_screen]));
            on_screen += 1;
        }
        if drawn == CALLS && all_drawn.is_none() {
            all_drawn = Some(now);
        }
        if drawn == CALLS && waiting == 0 {
            caught_up = Some(now);
        }
    }
    if let Some(w) = writer {
        let _ = w.join();
    }
    let last_written = written.lock().expect("lock").last().copied();
    let n = passes.len();
    println!("{label}: {CALLS} calls");
    println!(
        "  loop work per pass ({n} passes): median {}, p99 {}, max {}",
        ms(pct(&mut passes.clone(), 0.5)),
        ms(pct(&mut passes.clone(), 0.99)),
        ms(pct(&mut passes, 1.0))
    );
    if !before {
        println!(
            "  a call's node on screen after its answer is written: median {}, p99 {}, max {}",
            ms(pct(&mut node_latency.clone(), 0.5)),
            ms(pct(&mut node_latency.clone(), 0.99)),
            ms(pct(&mut node_latency, 1.0))
        );
    }
    match (last_written, all_drawn, caught_up) {
        (Some(last), Some(drawn), Some(edges)) => {
            let from = if before { started } else { last };
            let what = if before { "opening" } else { "the last call" };
            println!(
                "  after {what}: every call drawn in {}, the edges of every call in {}",
                ms(drawn.saturating_duration_since(from)),
                ms(edges.saturating_duration_since(from))
            );
        }
        _ => println!("  did not catch up within the deadline"),
    }
    // The engine's inference alone over the whole session.
    let rec = pipewright::engine::record::calls::open(&session, 17 << 20).expect("readable");
    let t = Instant::now();
    let drafted = pipewright::engine::record::write::infer(vec![rec], "bench");
    let took = t.elapsed();
    let steps = drafted.map(|(d, _)| d.steps.len()).unwrap_or_default();
    println!(
        "  the engine's inference alone: {} ({steps} steps)",
        ms(took)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        scenario("written at 200 calls a second", Duration::from_millis(5)).await;
        scenario("there before the workbench opens", Duration::ZERO).await;
    });
}
