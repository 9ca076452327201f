//! The workbench's durable run (`edit --on restate://…`, palette `durable
//! run`), without Restate: the palette offers it only with `--on`; it
//! submits the saved file (its hash, the served tool name, the `--var`
//! values) and refuses a dirty buffer; a finished durable run is saved and
//! opened read-only, its Timeline title saying where it was resumed.
//! (`tests/durable.rs` runs the same client against a real Restate.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::app::{App, Effect, Options};
use crate::config::{Config, Dirs};
use crate::editor::Editor;
use crate::inbox::Message;
use crate::keys::Keymap;
use crate::theme::Theme;
use pipewright_engine::run::durable::client::Restate;
use pipewright_engine::run::trace::{Attempt, Durable, Trace};

const CHAIN: &str = "vars:\n  WHO: ada\npipe:\n  - id: a\n    tool: echo\n    args: { message: \"hi ${var.WHO}\" }\n  - id: b\n    tool: echo\n    args: { message: \"${a} done\" }\n";

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A workbench on `chain.yml` in `dir`, `--on` set or not, loaded.
fn app(dir: &Path, on: bool) -> (App, PathBuf) {
    let file = dir.join("chain.yml");
    std::fs::write(&file, CHAIN).unwrap();
    let data = dir.join("data");
    let editor = Editor::open(&file, Some(&data)).unwrap();
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let mut vars = indexmap::IndexMap::new();
    vars.insert("WHO".to_owned(), json!("grace"));
    let opts = Options {
        file: file.clone(),
        vars,
        restate: on
            .then(|| Restate::parse("restate://127.0.0.1:1", Some("http://127.0.0.1:2")).unwrap()),
        ..Options::default()
    };
    let dirs = Dirs {
        config: None,
        data: Some(data),
    };
    let mut app = App::new(opts, dirs, config, editor);
    let until = Instant::now() + Duration::from_secs(20);
    let mut now = Instant::now();
    while app.comp.is_none() && Instant::now() < until {
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(app.comp.is_some(), "the file did not load");
    (app, file)
}

/// Opens the palette, types `durable run`, presses Enter.
fn choose_durable(app: &mut App) -> Vec<Effect> {
    app.on_key(key(KeyCode::Char(':')));
    for c in "durable run".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter))
}

fn durable_effect(effects: &[Effect]) -> Option<&Effect> {
    effects.iter().find(|e| matches!(e, Effect::Durable { .. }))
}

#[test]
fn the_palette_submits_the_saved_file_with_its_hash_tool_and_vars() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    let effects = choose_durable(&mut app);
    let Some(Effect::Durable {
        restate,
        request,
        source,
        ..
    }) = durable_effect(&effects)
    else {
        panic!("no durable run was submitted: {:?}", app.messages.status());
    };
    assert_eq!(restate.on, "restate://127.0.0.1:1");
    assert_eq!(request.tool, "chain");
    assert_eq!(request.args, *json!({"WHO": "grace"}).as_object().unwrap());
    assert_eq!(request.file_sha256, hex::encode(Sha256::digest(CHAIN)));
    assert_eq!(source, CHAIN);
}

#[test]
fn without_on_the_palette_has_no_durable_run() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), false);
    let effects = choose_durable(&mut app);
    assert!(durable_effect(&effects).is_none());
}

#[test]
fn a_dirty_buffer_is_not_submitted() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    // Into the editor, and a character typed.
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(key(KeyCode::Char('#')));
    app.on_key(key(KeyCode::Esc));
    assert!(app.editor.is_dirty(), "the buffer should be dirty");
    let effects = choose_durable(&mut app);
    assert!(durable_effect(&effects).is_none());
    let m = app.messages.status().expect("a message says why");
    assert!(
        m.error && m.text.contains("save the file first"),
        "{}",
        m.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_durable_run_is_saved_and_opened_with_its_resumption() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    // A real trace of the file: run by a workbench against the demo
    // server.
    let mut ran = super::live::Bench::open(CHAIN).await;
    ran.run_to_end().await;
    let mut trace: Trace = ran.app.trace.clone().unwrap();
    let at = |s: &str| format!("2026-11-25T10:00:{s}Z");
    trace.durable = Some(Durable {
        restate: "restate://127.0.0.1:1".into(),
        run: trace.run_id.clone(),
        attempts: vec![
            Attempt {
                nonce: "1".into(),
                worker: "w1".into(),
                at: at("00"),
                calls: 1,
                replayed_calls: 0,
                last_at: Some(at("01")),
            },
            Attempt {
                nonce: "2".into(),
                worker: "w2".into(),
                at: at("04"),
                calls: 1,
                replayed_calls: 1,
                last_at: None,
            },
        ],
    });
    let id = trace.run_id.clone();
    app.on_message(Message::DurableDone {
        result: Ok(Box::new(trace)),
        source: CHAIN.to_owned(),
    });
    let v = app.viewing.as_ref().expect("the run is open read-only");
    assert_eq!(v.entry.id, id);
    assert!(
        app.timeline_title().contains("resumed on w2 after 3.00 s"),
        "{}",
        app.timeline_title()
    );
    let saved = std::fs::read_dir(dir.path().join("data/runs"))
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().contains(&id));
    assert!(saved, "the run was not saved in the data dir");

    // A run that could not be followed says why.
    app.on_message(Message::DurableDone {
        result: Err("Restate knows no run with this id".into()),
        source: CHAIN.to_owned(),
    });
    let m = app.messages.status().unwrap();
    assert!(m.error && m.text.contains("knows no run"), "{}", m.text);
}

/// Issue 35, item 19: a durable run is drawn live from its journal (each
/// journaled call turns its node ✓ or ✗ as it comes), run keys are
/// refused while it is followed, and `x` cancels it in Restate (the token
/// the follower passes to `run_quiet`, which cancels the invocation).
#[test]
fn a_durable_run_is_drawn_live_and_x_cancels_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    let effects = choose_durable(&mut app);
    let Some(Effect::Durable { cancel, .. }) = durable_effect(&effects) else {
        panic!("no durable run was submitted: {:?}", app.messages.status());
    };
    let cancel = cancel.clone();
    assert!(app.run_in_progress(), "the badge says it runs");
    app.on_message(Message::DurableCall {
        node: Some("a".into()),
        ok: true,
        line: "durable: ✓ a · echo · journaled by w1".into(),
    });
    assert_eq!(
        app.visuals[0].status,
        pipewright_engine::run::trace::NodeStatus::Ok,
        "node a is drawn done as its call is journaled"
    );
    assert_eq!(
        app.visuals[1].status,
        pipewright_engine::run::trace::NodeStatus::Pending
    );
    // F5 does not start a local run beside it.
    let effects = app.on_key(key(KeyCode::F(5)));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Start { .. })),
        "{effects:?}"
    );
    assert!(app.messages.status().unwrap().text.contains("durable run"));
    // Esc to the DAG, then x.
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('x')));
    assert!(cancel.is_cancelled(), "x did not cancel the durable run");
    assert!(
        app.messages
            .status()
            .unwrap()
            .text
            .contains("cancelling the durable run"),
        "{:?}",
        app.messages.status()
    );
    app.on_message(Message::DurableDone {
        result: Err("cancelled".into()),
        source: CHAIN.into(),
    });
    assert!(app.durable.is_none());
}

/// A question of the durable run followed here opens in the same modal as
/// a session's question, its node showing `?`, and the same keys answer
/// it: the answer (by the workbench, carrying no error) is what the driver
/// resolves the question with in Restate. Quitting answers it `cancel`
/// with the reason, which the driver does not send: the question keeps
/// waiting in Restate for `pipewright runs answer`.
#[test]
fn a_durable_runs_question_opens_in_the_modal_and_the_same_keys_answer_it() {
    use pipewright_engine::mcp::human::{Ask, Question, Reply, Source};
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    assert!(durable_effect(&choose_durable(&mut app)).is_some());
    let ask = |app: &mut App| {
        let (reply, rx) = tokio::sync::oneshot::channel();
        app.on_message(Message::DurableQuestion {
            question: Question {
                server: "modern".into(),
                node: Some("b".into()),
                candidates: Vec::new(),
                ask: Ask::Form {
                    message: "What is your name?".into(),
                    schema: json!({
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"]
                    }),
                },
            },
            reply,
        });
        rx
    };
    let mut rx = ask(&mut app);
    assert!(app.visuals[1].asking, "node b shows its question");
    assert_eq!(app.asks.len(), 1);
    for c in "Ada".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Enter));
    let a = rx.try_recv().expect("answered");
    assert_eq!(a.reply, Reply::Accept(json!({"name": "Ada"})));
    assert_eq!(a.by, Source::Workbench);
    assert!(a.error.is_none(), "{a:?}");
    assert!(!app.visuals[1].asking);
    assert!(app.asks.is_empty());

    let mut rx = ask(&mut app);
    app.cancel_questions("the workbench was closed");
    let a = rx.try_recv().expect("cancelled");
    assert_eq!(a.reply, Reply::Cancel);
    assert!(a.error.is_some(), "{a:?}");
}

/// Issue 48, item 24: a call the journal says has begun shows its node
/// running (the spinner a local run shows) until its outcome comes; the
/// badge says the run runs, and `p`, which a durable run does not have, is
/// not offered.
#[test]
fn a_durable_runs_open_call_shows_its_node_running() {
    use crate::app::status::{mode_keys, state_label};
    use pipewright_engine::run::trace::NodeStatus;
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    let effects = choose_durable(&mut app);
    assert!(
        durable_effect(&effects).is_some(),
        "no durable run submitted"
    );
    app.on_message(Message::DurableOpened {
        node: Some("a".into()),
    });
    assert_eq!(app.visuals[0].status, NodeStatus::Running);
    assert_eq!(app.visuals[1].status, NodeStatus::Pending);
    app.on_message(Message::DurableCall {
        node: Some("a".into()),
        ok: true,
        line: "durable: ✓ a · echo · journaled by w1".into(),
    });
    app.on_message(Message::DurableOpened {
        node: Some("b".into()),
    });
    assert_eq!(app.visuals[0].status, NodeStatus::Ok);
    assert_eq!(app.visuals[1].status, NodeStatus::Running);
    assert_eq!(state_label(&app), "RUNNING");
    let keys = mode_keys(&app);
    assert!(!keys.iter().any(|(_, what)| *what == "pause"), "{keys:?}");
    assert!(keys.iter().any(|(_, what)| *what == "cancel"), "{keys:?}");
}

/// Issue 48, item 24: with `--on`, the run key runs here and the first
/// run says so, naming the palette's durable run.
#[test]
fn with_on_the_first_local_run_says_where_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = app(dir.path(), true);
    let effects = app.on_key(key(KeyCode::F(5)));
    assert!(
        effects.iter().any(|e| matches!(e, Effect::Start { .. })),
        "F5 runs here: {effects:?}"
    );
    let said = |app: &App| {
        app.messages
            .log()
            .iter()
            .filter(|e| {
                e.text
                    .contains("durable run` runs the saved file on restate://127.0.0.1:1")
            })
            .count()
    };
    assert_eq!(said(&app), 1, "{:?}", app.messages.log());
    assert!(
        app.messages
            .status()
            .unwrap()
            .text
            .starts_with("F5 runs here")
    );
    app.on_key(key(KeyCode::F(10)));
    assert_eq!(said(&app), 1, "said once");
    // Without `--on` nothing is said.
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = self::app(dir.path(), false);
    app.on_key(key(KeyCode::F(5)));
    assert_eq!(said(&app), 0);
}
