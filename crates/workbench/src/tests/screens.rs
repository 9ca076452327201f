//! The workbench as a whole, without a terminal: the app is fed the events a
//! session sends and the keys a person presses, and whole screens are drawn
//! with ratatui's `TestBackend` and compared with committed snapshots.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use pipewright_engine::run::session::Command;

use crate::app::{App, Effect, Focus, Options, RunState};
use crate::config::{Config, Dirs};
use crate::editor::Editor;
use crate::inspector::Tab;
use crate::keys::Keymap;
use crate::overlay::Overlay;
use crate::theme::Theme;
use pipewright_engine::run::events::{Event, PauseReason};
use pipewright_engine::run::trace::{NodeRecord, NodeStatus, RunStatus, Trace};

pub(super) const PIPE: &str = "\
vars:
  USER_QUERY: carol
pipe:
  - id: find
    tool: search_users
    args:
      query: ${var.USER_QUERY}
  - id: details
    tool: get_user_details
    args:
      user_id: ${find.users[0].id}
  - id: notify
    tool: send_email
    args:
      to: ${details.email}
      subject: hello
";

pub(super) const FAN: &str = r#"
compositions:
  - name: enrich
    nodes:
      - id: search
        tool: search_packages
        args: { query: mcp }
        transform: .result.hits
      - id: enrich
        needs: [search]
        for_each: ${search[*]}
        max_concurrency: 4
        tool: fetch_metadata
        args: { name: "${item.name}" }
      - id: readme
        needs: [search]
        tool: get_readme
        args: { name: "${search[0].name}" }
      - id: report
        needs: [enrich, readme]
        tool: echo
        args: { text: done }
"#;

/// An app on a file with this text, after its first validation.
pub(super) fn app_on(text: &str) -> (tempfile::TempDir, App) {
    app_themed(text, Theme::dark(), true)
}

/// An app on a file with this text in `theme`; `wait` for a plan to load.
pub(super) fn app_themed(text: &str, theme: Theme, wait: bool) -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pipeline.yml");
    std::fs::write(&file, text).unwrap();
    let data = dir.path().join("data");
    let editor = Editor::open(&file, Some(&data)).unwrap();
    let config = Config {
        theme,
        keymap: Keymap::default(),
    };
    let opts = Options {
        file: Path::new("pipeline.yml").to_path_buf(),
        ..Options::default()
    };
    let dirs = Dirs {
        config: None,
        data: Some(data),
    };
    let mut app = App::new(opts, dirs, config, editor);
    let until = Instant::now() + Duration::from_secs(10);
    let mut now = Instant::now();
    let done = |app: &App| {
        if wait {
            app.comp.is_some()
        } else {
            !app.editor.validating() && app.editor.diagnostics().len() + app.visuals.len() > 0
        }
    };
    while !done(&app) && Instant::now() < until {
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    if wait {
        assert!(app.comp.is_some(), "the file did not validate");
    }
    // How many ticks validation took varies with the machine's load; what
    // a test does next (a session event the inspector keeps the spinner
    // frame of) starts from the same tick every time.
    app.tick = 0;
    (dir, app)
}

/// The screen as text, one line per row, trailing blanks trimmed.
pub(super) fn screen(app: &mut App, w: u16, h: u16) -> String {
    // The spinner turns with ticks; how many ran before validation varies.
    app.tick = 0;
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let mut line = String::new();
        for x in 0..w {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    // The editor's title holds the temporary directory: mask it with a
    // string of the same width so borders stay where they are.
    if let Some(dir) = app.editor.path().parent() {
        let d = dir.display().to_string();
        out = out.replace(&d, &"…".repeat(d.chars().count()));
    }
    out
}

pub(super) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub(super) fn ok_record(args: serde_json::Value, output: serde_json::Value) -> Box<NodeRecord> {
    Box::new(NodeRecord {
        status: NodeStatus::Ok,
        args: args.into(),
        output: output.into(),
        attempts: 1,
        duration_ms: 12,
        tokens: 40,
        cost_usd: 0.001,
        started_at: Some("2026-11-22T12:00:00Z".into()),
        ..NodeRecord::default()
    })
}

pub(super) fn finish(app: &mut App, id: &str, record: Box<NodeRecord>) {
    app.on_session(Event::NodeFinished {
        id: id.into(),
        record,
    });
}

/// Feeds a run of the pipe where `find` succeeded and `details` is running.
pub(super) fn running_pipe(app: &mut App) {
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 3,
    });
    app.on_session(Event::NodeStarted {
        id: "find".into(),
        attempt: 1,
        args: None,
    });
    finish(
        app,
        "find",
        ok_record(
            json!({"query": "carol"}),
            json!({"users": [{"id": "u3", "name": "Carol Nguyen"}]}),
        ),
    );
    app.on_session(Event::NodeStarted {
        id: "details".into(),
        attempt: 1,
        args: None,
    });
}

fn failed_pipe(app: &mut App) {
    running_pipe(app);
    finish(
        app,
        "details",
        Box::new(NodeRecord {
            status: NodeStatus::Failed,
            args: json!({"user_id": "u3"}).into(),
            error: Some("tool get_user_details returned an error: no user with id u3x".into()),
            attempts: 1,
            duration_ms: 8,
            ..NodeRecord::default()
        }),
    );
    app.on_session(Event::NodeStatus {
        id: "notify".into(),
        status: NodeStatus::Skipped,
        reason: Some("parent details failed".into()),
    });
    app.on_session(Event::RunFinished {
        status: RunStatus::Partial,
        trace: Box::new(empty_trace()),
    });
}

pub(super) fn empty_trace() -> Trace {
    Trace {
        run_id: "20261123-103000-a3f9".into(),
        file: "pipeline.yml".into(),
        composition: pipewright_engine::run::trace::RunSummary {
            name: "main".into(),
            started_at: None,
            case: None,
            ran: true,
            status: RunStatus::Partial,
            budget_tripped: None,
            cost_total: 0.001,
            tokens_total: 40,
            duration_ms: 30,
            output_tokens: 0,
            output_tokens_all: 40,
            paused_ms: 0,
            pauses: Vec::new(),
        },
        vars: Default::default(),
        nodes: Default::default(),
        completed_step_ids: vec!["find".into()],
        failed_step: Some("details".into()),
        output: serde_json::Value::Null.into(),
        expect: Vec::new(),
        compensations: Vec::new(),
        eval: Vec::new(),
        eval_aggregate: Vec::new(),
        judged_from: None,
        eval_tools: Default::default(),
        server_logs: Default::default(),
        server_protocols: Default::default(),
        durable: None,
    }
}

// ----- behaviour ---------------------------------------------------------

#[test]
fn first_validation_builds_the_plan_and_selects_the_first_node() {
    let (_d, app) = app_on(PIPE);
    let comp = app.comp.as_ref().unwrap();
    assert_eq!(comp.nodes.len(), 3);
    assert_eq!(app.visuals.len(), 3);
    assert_eq!(app.selected_index(), Some(0));
    assert_eq!(app.run, RunState::Idle);
    assert_eq!(app.errors, 0);
}

#[test]
fn run_key_starts_a_session_with_breakpoints_then_commands_go_to_it() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Right));
    app.on_key(key(KeyCode::Char('b')));
    assert!(app.visuals[1].breakpoint);
    let effects = app.on_key(key(KeyCode::F(5)));
    match effects.as_slice() {
        [
            Effect::Start {
                breakpoints, then, ..
            },
        ] => {
            assert_eq!(breakpoints, &vec!["details".to_string()]);
            assert!(matches!(then.as_slice(), [Command::Run]));
        }
        other => panic!("expected a start, got {other:?}"),
    }
    assert_eq!(app.run, RunState::Connecting);
    let effects = app.on_key(key(KeyCode::Char('p')));
    assert!(matches!(effects.as_slice(), [Effect::Send(Command::Pause)]));
    let effects = app.on_key(key(KeyCode::Char('R')));
    assert!(
        matches!(effects.as_slice(), [Effect::Send(Command::RerunFrom(id))] if id == "details")
    );
}

#[test]
fn session_events_drive_node_states_and_the_status_line() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    assert_eq!(app.visuals[0].status, NodeStatus::Ok);
    assert_eq!(app.visuals[1].status, NodeStatus::Running);
    assert_eq!(app.running(), vec!["details"]);
    app.on_session(Event::Paused {
        reason: PauseReason::Breakpoint,
        before: Some("notify".into()),
    });
    assert!(app.visuals[2].paused_before);
    assert_eq!(crate::app::status::state_label(&app), "BREAK at notify");
    let (ok, failed, cost, tokens) = app.totals();
    assert_eq!((ok, failed, tokens), (1, 0, 40));
    assert!((cost - 0.001).abs() < 1e-9);
}

#[test]
fn finished_run_asks_for_its_trace_to_be_saved() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    let effects = app.on_session(Event::RunFinished {
        status: RunStatus::Partial,
        trace: Box::new(empty_trace()),
    });
    assert!(matches!(effects.as_slice(), [Effect::SaveTrace(_)]));
    assert_eq!(app.run, RunState::Finished(RunStatus::Partial));
}

#[test]
fn command_keys_are_text_in_the_editor_and_global_keys_are_not() {
    let (_d, mut app) = app_on(PIPE);
    app.focus = Focus::Editor;
    let before = app.editor.text();
    let effects = app.on_key(key(KeyCode::Char('q')));
    assert!(effects.is_empty());
    assert!(!app.quit);
    assert_ne!(app.editor.text(), before, "q was typed into the buffer");
    assert!(app.editor.is_dirty());
    // Quitting with unsaved edits asks first.
    let effects = app.on_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL));
    assert!(effects.is_empty());
    assert!(matches!(app.overlay, Some(Overlay::ConfirmQuit(_))));
    let effects = app.on_key(key(KeyCode::Esc));
    assert!(effects.is_empty() && app.overlay.is_none() && !app.quit);
}

#[test]
fn an_edit_that_breaks_the_file_keeps_the_last_good_plan() {
    let (_d, mut app) = app_on(PIPE);
    let broken = PIPE.replace("${find.users[0].id}", "${fnd.users[0].id}");
    let loaded = pipewright_engine::file::open::load_str(&broken);
    app.on_validated(&loaded);
    assert!(app.errors > 0);
    assert_eq!(app.comp.as_ref().unwrap().nodes.len(), 3);
}

#[test]
fn an_edit_to_a_running_plan_is_sent_to_the_session() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::F(5)));
    let edited = PIPE.replace("subject: hello", "subject: hi");
    let effects = app.on_validated(&pipewright_engine::file::open::load_str(&edited));
    assert!(matches!(
        effects.as_slice(),
        [
            Effect::Send(Command::ReplacePlan(_)),
            Effect::Send(Command::SetVars(_))
        ]
    ));
    app.on_session(Event::PlanReplaced {
        stale: vec!["notify".into()],
        fresh: Vec::new(),
        added: vec![],
        removed: vec![],
    });
    assert_eq!(app.visuals[2].status, NodeStatus::Stale);
}

#[test]
fn selecting_a_node_moves_the_editor_to_its_definition() {
    let (_d, mut app) = app_on(PIPE);
    app.select(Some(2), true);
    let line = app.editor.cursor().0;
    assert_eq!(line, 12, "notify is defined on line 12");
}

// ----- whole screens -----------------------------------------------------

#[test]
fn screen_idle() {
    let (_d, mut app) = app_on(PIPE);
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn screen_running() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn screen_failed_error_tab() {
    let (_d, mut app) = app_on(PIPE);
    failed_pipe(&mut app);
    app.select(Some(1), true);
    app.inspector.set_tab(Tab::Error);
    app.focus = Focus::Inspector;
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn screen_fan_out_running() {
    let (_d, mut app) = app_on(FAN);
    app.on_session(Event::RunStarted {
        composition: "enrich".into(),
        case: None,
        nodes: 4,
    });
    finish(
        &mut app,
        "search",
        ok_record(
            json!({"query": "mcp"}),
            json!([{"name": "mcp-kit"}, {"name": "mcp-lens"}]),
        ),
    );
    app.on_session(Event::NodeStarted {
        id: "enrich".into(),
        attempt: 1,
        args: None,
    });
    app.on_session(Event::Iteration {
        id: "enrich".into(),
        index: 0,
        status: NodeStatus::Ok,
        done: 3,
        total: 10,
    });
    let readme = ok_record(json!({"name": "mcp-kit"}), json!({"text": "# mcp-kit"}));
    finish(&mut app, "readme", readme);
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn screen_dry_run() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    app.act(crate::keys::Action::DryRun);
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn screen_help_overlay() {
    let (_d, mut app) = app_on(PIPE);
    app.act(crate::keys::Action::Help);
    insta::assert_snapshot!(screen(&mut app, 120, 40));
}

#[test]
fn screen_narrow_80x24() {
    let (_d, mut app) = app_on(PIPE);
    failed_pipe(&mut app);
    insta::assert_snapshot!(screen(&mut app, 80, 24));
}

#[test]
fn screen_wide_200x60() {
    let (_d, mut app) = app_on(FAN);
    insta::assert_snapshot!(screen(&mut app, 200, 60));
}

#[test]
fn estimate_prices_every_call_from_the_table() {
    let text = "pricing:\n  tools:\n    search_users: { cost_usd: 0.25 }\n".to_string() + PIPE;
    let (_d, mut app) = app_on(&text);
    app.act(crate::keys::Action::Estimate);
    let Some(Overlay::Plan(plan)) = &app.overlay else {
        panic!("no plan overlay");
    };
    assert!(plan.estimate());
    assert!(
        (plan.plan().cost_total - 0.25).abs() < 1e-9,
        "{}",
        plan.plan().cost_total
    );
    let find = plan
        .lines()
        .iter()
        .find(|l| l.contains(" find "))
        .expect("find has a line");
    assert!(find.contains("$0.2500"), "{find}");
    insta::assert_snapshot!(screen(&mut app, 120, 32));
}

#[test]
fn destructive_calls_are_asked_about_once_and_problems_stop_the_run() {
    use crate::app::Preflighted;
    use pipewright_engine::plan::preflight::{Destructive, Preflight};
    let (_d, mut app) = app_on(PIPE);
    let report = Preflight {
        problems: Vec::new(),
        destructive: vec![Destructive {
            composition: "pipe".into(),
            node: "notify".into(),
            server: "demo".into(),
            tool: "send_email".into(),
        }],
        ..Preflight::default()
    };
    assert_eq!(app.on_preflight(&report), Preflighted::Ask);
    assert!(screen(&mut app, 120, 32).contains("destructive"));
    let effects = app.on_key(key(KeyCode::Char('y')));
    assert!(matches!(effects.as_slice(), [Effect::Proceed]));
    // Allowed once, not asked again for the same call.
    assert_eq!(app.on_preflight(&report), Preflighted::Go);

    // A refusal drops the session.
    let (_d2, mut app) = app_on(PIPE);
    assert_eq!(app.on_preflight(&report), Preflighted::Ask);
    let effects = app.on_key(key(KeyCode::Esc));
    assert!(matches!(effects.as_slice(), [Effect::DropSession]));
    assert!(!app.session.is_open());

    // Problems go to the editor's gutter and nothing runs.
    let bad = Preflight {
        problems: vec![pipewright_engine::diag::Diagnostic::error(
            pipewright_engine::diag::Span::new(
                pipewright_engine::diag::Pos::new(5, 11),
                pipewright_engine::diag::Pos::new(5, 23),
            ),
            "tool `search_user` is not offered by server `demo`",
        )],
        destructive: Vec::new(),
        ..Preflight::default()
    };
    assert_eq!(app.on_preflight(&bad), Preflighted::Stop);
    assert!(
        app.editor
            .diagnostics()
            .iter()
            .any(|d| d.message.contains("search_user"))
    );
    assert_eq!(app.run, RunState::Idle);
}

/// Fibe's `dry_run: true` holds in the workbench too: the run key shows
/// the plan and starts nothing.
#[test]
fn a_dry_run_file_shows_the_plan_instead_of_running() {
    let text = "dry_run: true\n".to_string() + PIPE;
    let (_d, mut app) = app_on(&text);
    let effects = app.on_key(key(KeyCode::F(5)));
    assert!(effects.is_empty(), "nothing starts: {effects:?}");
    assert!(matches!(app.overlay, Some(Overlay::Plan(_))));
    assert_eq!(app.run, RunState::Idle);
}

// ----- history, diff marks and the timeline ---------------------------

/// A record of a node that ran `start_ms` after noon for `dur` ms.
fn timed(status: NodeStatus, start_ms: u64, dur: u64, output: serde_json::Value) -> NodeRecord {
    NodeRecord {
        status,
        output: output.into(),
        attempts: 1,
        started_at: Some(format!("2026-11-22T12:00:00.{start_ms:03}Z")),
        duration_ms: dur,
        ..NodeRecord::default()
    }
}

/// A saved run of PIPE: `find` then `details` (whose email is `email`),
/// `notify` ok or skipped.
fn saved_run(id: &str, minute: u32, email: &str, notify: bool) -> Trace {
    let mut t = Trace {
        run_id: id.into(),
        file: "pipeline.yml".into(),
        ..empty_trace()
    };
    t.composition.name = "pipe".into();
    t.composition.started_at = Some(format!("2026-11-22T12:{minute:02}:00Z"));
    t.composition.status = if notify {
        RunStatus::Completed
    } else {
        RunStatus::Partial
    };
    t.composition.duration_ms = 90;
    t.failed_step = (!notify).then(|| "notify".to_owned());
    let at = |ms: u64| format!("2026-11-22T12:{minute:02}:00.{ms:03}Z");
    let mut rec = |id: &str, status, start: u64, dur: u64, out| {
        let mut r = timed(status, 0, dur, out);
        r.started_at = Some(at(start));
        t.nodes.insert(id.into(), r);
    };
    rec(
        "find",
        NodeStatus::Ok,
        0,
        20,
        json!({"users": [{"id": "u3"}]}),
    );
    rec("details", NodeStatus::Ok, 20, 50, json!({"email": email}));
    if notify {
        rec("notify", NodeStatus::Ok, 70, 15, json!({"queued": true}));
    } else {
        rec(
            "notify",
            NodeStatus::Failed,
            70,
            15,
            serde_json::Value::Null,
        );
    }
    t
}

fn save_runs(dir: &tempfile::TempDir, runs: &[Trace]) {
    let store = pipewright_engine::run::store::Runs::at(dir.path().join("data/runs"));
    for t in runs {
        store.save_capped(t, 0).unwrap();
    }
}

/// An app on PIPE with an older completed run and a newer partial one
/// saved, the newer on screen.
pub(super) fn with_two_saved_runs() -> (tempfile::TempDir, App) {
    let (d, mut app) = app_on(PIPE);
    let older = saved_run("20261122-120100-aaaa", 1, "carol@example.com", true);
    let newer = saved_run("20261122-120200-bbbb", 2, "carol.n@example.com", false);
    save_runs(&d, &[older, newer.clone()]);
    app.trace = Some(newer);
    (d, app)
}

#[test]
fn screen_history_overlay() {
    let (_d, mut app) = with_two_saved_runs();
    app.act(crate::keys::Action::History);
    let Some(Overlay::History(h)) = &app.overlay else {
        panic!("no history overlay");
    };
    assert_eq!(h.entries().len(), 2);
    assert_eq!(h.entries()[0].id, "20261122-120200-bbbb", "newest first");
    insta::assert_snapshot!(screen(&mut app, 120, 30));
}

#[test]
fn screen_diff_marked_dag_and_a_run_opened_read_only() {
    let (_d, mut app) = with_two_saved_runs();
    app.act(crate::keys::Action::History);
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char('D')));
    // The field-level differences, as `runs diff` prints them.
    match &app.overlay {
        Some(Overlay::Text(text)) => {
            let (title, body) = (text.title(), text.body());
            assert!(title.starts_with("diff "), "{title}");
            assert!(body.iter().any(|l| l.contains("difference(s)")), "{body:?}");
            assert!(body.iter().any(|l| l == "node details"), "{body:?}");
        }
        _ => panic!("no diff view"),
    }
    // Closed, back in History (review item 13); closed again, the marks
    // are on the DAG.
    app.on_key(key(KeyCode::Esc));
    assert!(matches!(app.overlay, Some(Overlay::History(_))));
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
    let changed: Vec<bool> = app.visuals.iter().map(|v| v.changed).collect();
    assert_eq!(
        changed,
        [false, true, true],
        "details' email and notify's status differ"
    );
    insta::assert_snapshot!("diff_marked_dag", screen(&mut app, 120, 30));
    // Enter opens the older run read-only; run keys are refused; Esc
    // returns to the live workbench.
    app.act(crate::keys::Action::History);
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.viewing.as_ref().map(|v| v.entry.id.as_str()),
        Some("20261122-120100-aaaa")
    );
    assert_eq!(app.visuals[2].status, NodeStatus::Ok);
    assert!(app.on_key(key(KeyCode::F(5))).is_empty(), "read-only");
    app.focus = Focus::Dag;
    app.on_key(key(KeyCode::Esc));
    assert!(app.viewing.is_none());
    assert_eq!(
        app.visuals[2].status,
        NodeStatus::Pending,
        "the live states are back"
    );
}

#[test]
fn screen_timeline_idle() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('T')));
    assert!(app.timeline.shown());
    insta::assert_snapshot!(screen(&mut app, 120, 30));
}

#[test]
fn screen_timeline_live_mid_run() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    // Fixed clock: `find` started at 0 and took 12 ms; `details` started at
    // 12 ms and is still running 30 ms into the run.
    app.timeline.started_ago(Duration::from_millis(30));
    app.visuals[0].started_ms = Some(0);
    app.visuals[0].record = Some(std::sync::Arc::new(timed(NodeStatus::Ok, 0, 12, json!({}))));
    app.visuals[1].started_ms = Some(12);
    let bars = app.timeline_bars();
    assert_eq!(bars[0].span, Some((0, 12)));
    let (s, e) = bars[1].span.expect("running bar");
    assert_eq!(s, 12);
    assert!(e >= 30, "a running bar grows with the clock: {e}");
    app.on_key(key(KeyCode::Char('T')));
    // Freeze the clock for the snapshot: 30 ms into the run.
    app.timeline.freeze(30);
    insta::assert_snapshot!(screen(&mut app, 120, 30));
}

#[test]
fn screen_timeline_finished_with_a_failure() {
    let (_d, mut app) = app_on(PIPE);
    failed_pipe(&mut app);
    let mut t = saved_run("20261122-120000-cccc", 0, "c@example.com", false);
    t.nodes.shift_remove("notify");
    for (i, id) in ["find", "details"].iter().enumerate() {
        let mut r = t.nodes[*id].clone();
        if i == 1 {
            r.status = NodeStatus::Failed;
        }
        app.visuals[i].record = Some(std::sync::Arc::new(r));
    }
    app.trace = Some(t);
    app.on_key(key(KeyCode::Char('T')));
    // Down walks the rows and selects the nodes.
    app.select(Some(0), false);
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.dag.selected(), Some(1));
    let bars = app.timeline_bars();
    assert!(
        bars[0].critical && bars[1].critical,
        "find then details ended last"
    );
    insta::assert_snapshot!(screen(&mut app, 120, 30));
}

// ---- servers' questions ----

const HITL: &str = "\
servers:
  hitl:
    command: python
    args: [hitl_server.py]
pipe:
  - id: who
    tool: signup
    args: {reason: demo}
  - id: c
    tool: count
    args: {n: 3}
";

use crate::inbox::Message;
use pipewright_engine::mcp::human::{
    Answer, Ask, CallExtras, Interaction, LogLine, ProgressNote, Question, Reply, Source,
};
use tokio::sync::oneshot;

/// Node `id` is running and its server asks `ask`; the receiver is where
/// the answer goes.
fn asked(app: &mut App, id: &str, ask: Ask) -> oneshot::Receiver<Answer> {
    app.on_session(Event::NodeStarted {
        id: id.into(),
        attempt: 1,
        args: None,
    });
    let (reply, rx) = oneshot::channel();
    app.on_message(Message::Question {
        question: Question {
            server: "hitl".into(),
            node: Some(id.into()),
            candidates: Vec::new(),
            ask,
        },
        reply,
        generation: 1,
    });
    rx
}

fn signup_form() -> Ask {
    Ask::Form {
        message: "Sign up (demo)".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer", "minimum": 0, "description": "In years"},
                "plan": {"type": "string", "enum": ["free", "pro"], "enumNames": ["Free plan", "Pro plan"], "default": "free"},
                "email": {"type": "string", "format": "email"},
                "news": {"type": "boolean", "default": true}
            },
            "required": ["name", "age"]
        }),
    }
}

pub(super) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

#[test]
fn a_question_pauses_its_node_until_the_modal_answers_it() {
    let (_d, mut app) = app_on(HITL);
    let mut rx = asked(&mut app, "who", signup_form());
    assert!(app.visuals[0].asking);
    // The modal has the keys: `q` is text, not quit.
    type_text(&mut app, "q");
    assert!(!app.quit);
    app.on_key(key(KeyCode::Backspace));
    type_text(&mut app, "Ada");
    app.on_key(key(KeyCode::Tab));
    type_text(&mut app, "36");
    app.on_key(key(KeyCode::Enter));
    let a = rx.try_recv().unwrap();
    assert_eq!(
        a.reply,
        Reply::Accept(json!({"name": "Ada", "age": 36, "plan": "free", "news": true}))
    );
    assert!(!app.visuals[0].asking);
    assert!(app.asks.is_empty());
    // Quitting (or dropping the session) with a question open cancels it.
    let mut rx = asked(&mut app, "who", signup_form());
    app.cancel_questions("the workbench was closed");
    assert_eq!(rx.try_recv().unwrap().reply, Reply::Cancel);
    assert!(!app.visuals[0].asking);
}

#[test]
fn screen_elicitation_form_with_an_error() {
    let (_d, mut app) = app_on(HITL);
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 2,
    });
    let _rx = asked(&mut app, "who", signup_form());
    let _rx2 = asked(
        &mut app,
        "c",
        Ask::Url {
            message: "Confirm in your browser".into(),
            url: "http://127.0.0.1:9/confirm".into(),
            elicitation_id: "el-1".into(),
        },
    );
    type_text(&mut app, "Ada");
    app.on_key(key(KeyCode::Tab));
    type_text(&mut app, "-3");
    app.on_key(key(KeyCode::Enter));
    insta::assert_snapshot!(screen(&mut app, 120, 36));
}

#[test]
fn screen_sampling_modal() {
    let (_d, mut app) = app_on(HITL);
    let _rx = asked(
        &mut app,
        "c",
        Ask::Sample {
            request: json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Summarize: the quarterly report"}},
                    {"role": "assistant", "content": {"type": "text", "text": "Which part?"}},
                    {"role": "user", "content": {"type": "text", "text": "All of it, in one line."}}
                ],
                "systemPrompt": "You write one-line summaries.",
                "modelPreferences": {"hints": [{"name": "claude-3-haiku"}, {"name": "gpt-4o-mini"}], "costPriority": 0.8, "intelligencePriority": 0.3},
                "maxTokens": 50
            }),
        },
    );
    type_text(&mut app, "Revenue up, costs flat.");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "Hiring paused");
    insta::assert_snapshot!(screen(&mut app, 120, 36));
}

#[test]
fn screen_logs_tab() {
    let (_d, mut app) = app_on(HITL);
    let log = |level: &str, text: &str| LogLine {
        level: level.into(),
        logger: None,
        data: json!(text),
    };
    let mut record = ok_record(
        json!({"reason": "demo"}),
        json!({"action": "accept", "name": "Ada", "age": 36, "plan": "free"}),
    );
    record.extras = CallExtras {
        interactions: vec![Interaction {
            kind: "elicitation".into(),
            server: "hitl".into(),
            request: json!({"mode": "form", "message": "Sign up (demo)"}),
            reply: json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
            by: Source::Workbench,
            error: None,
        }],
        logs: vec![
            log("info", "signup asked: demo"),
            log("info", "signed up Ada"),
            log("warning", "plan defaulted to free"),
        ],
        progress: vec![ProgressNote {
            progress: 1.0,
            total: Some(1.0),
            message: Some("done".into()),
        }],
        task: None,
    };
    finish(&mut app, "who", record);
    // `c` runs, reporting progress.
    app.on_session(Event::NodeStarted {
        id: "c".into(),
        attempt: 1,
        args: None,
    });
    app.on_session(Event::Progress {
        id: "c".into(),
        iteration: None,
        note: ProgressNote {
            progress: 2.0,
            total: Some(3.0),
            message: Some("step 2 of 3".into()),
        },
    });
    app.on_session(Event::ServerLog {
        id: "c".into(),
        line: "[debug] tick 2".into(),
    });
    app.select(Some(0), true);
    app.inspector.set_tab(Tab::Logs);
    app.focus = Focus::Inspector;
    insta::assert_snapshot!("screen_logs_tab_finished", screen(&mut app, 120, 32));
    app.select(Some(1), true);
    insta::assert_snapshot!("screen_logs_tab_running", screen(&mut app, 120, 32));
}

// ----- the interaction model: modes, focus, messages, layout -------------

use crate::app::Mode;
use crate::keys::Action;
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// The frame as drawn (cells with their styles).
fn frame(app: &mut App, w: u16, h: u16) -> Buffer {
    app.tick = 0;
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    term.backend().buffer().clone()
}

/// Row `y` of a frame as text.
fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// The status line: the bar (the row above the footer), after the
/// message's rows above it when a message too long for the bar has rows
/// of its own.
pub(super) fn status_row(app: &mut App, w: u16, h: u16) -> String {
    let buf = frame(app, w, h);
    let own = crate::app::status::message_rows(app, w);
    (h - 2 - own..=h - 2)
        .map(|y| row(&buf, y))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The footer (the last row).
pub(super) fn footer_row(app: &mut App, w: u16, h: u16) -> String {
    row(&frame(app, w, h), h - 1)
}

/// The text of the cells drawn with `m` on, row by row: what shows
/// without colour.
fn marked(buf: &Buffer, m: Modifier) -> Vec<String> {
    let mut out = Vec::new();
    for y in 0..buf.area.height {
        let text: String = (0..buf.area.width)
            .filter(|&x| buf[(x, y)].modifier.contains(m))
            .map(|x| buf[(x, y)].symbol())
            .collect();
        if !text.trim().is_empty() {
            out.push(format!("{y:>2}: {}", text.trim()));
        }
    }
    out
}

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> MouseEvent {
    MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }
}

/// A finished run of FAN with every iteration of `enrich` recorded.
fn finished_fan(app: &mut App, iterations: usize) {
    app.on_session(Event::RunStarted {
        composition: "enrich".into(),
        case: None,
        nodes: 4,
    });
    let mut t = timed(
        NodeStatus::Ok,
        0,
        20,
        json!([{"name": "mcp-kit", "about": "a long description of the package that does not fit on one line of a narrow pane at all"}]),
    );
    t.args = json!({"query": "mcp"}).into();
    finish(app, "search", Box::new(t));
    let mut e = timed(NodeStatus::Ok, 20, 900, json!([]));
    e.iterations = (0..iterations)
        .map(|k| pipewright_engine::run::trace::IterationRecord {
            index: k,
            status: NodeStatus::Ok,
            started_at: Some(format!("2026-11-22T12:00:00.{:03}Z", 20 + k * 10)),
            duration_ms: 100,
            ..Default::default()
        })
        .collect();
    finish(app, "enrich", Box::new(e));
    finish(
        app,
        "readme",
        Box::new(timed(NodeStatus::Ok, 20, 30, json!({"text": "# mcp-kit"}))),
    );
    finish(
        app,
        "report",
        Box::new(timed(NodeStatus::Ok, 920, 5, json!("done"))),
    );
    let mut trace = empty_trace();
    trace.composition.status = RunStatus::Completed;
    trace.composition.started_at = Some("2026-11-22T12:00:00Z".into());
    app.on_session(Event::RunFinished {
        status: RunStatus::Completed,
        trace: Box::new(trace),
    });
    app.messages.forget();
}

/// Item 1: a key typed into the jq box is typed once, however it is bound.
#[test]
fn issue24_item1_the_jq_box_types_each_key_once() {
    let (_d, mut app) = app_on(PIPE);
    failed_pipe(&mut app);
    app.select(Some(0), true);
    app.inspector.set_tab(Tab::Output);
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Inspect);
    app.on_key(key(KeyCode::Char('/')));
    assert_eq!(app.mode(), Mode::Filter);
    // Every letter here is bound to an action in the DAG.
    type_text(&mut app, ".users | map(.name) bdepqrsxHPRT");
    let text = screen(&mut app, 120, 32);
    assert!(
        text.contains("jq › .users | map(.name) bdepqrsxHPRT"),
        "{text}"
    );
    assert!(status_row(&mut app, 120, 32).starts_with(" FILTER "));
    insta::assert_snapshot!("jq_box_typed_once", screen(&mut app, 120, 32));
    assert!(footer_row(&mut app, 120, 32).contains("Enter keep it"));
    assert!(!app.quit && app.overlay.is_none());
}

/// Item 2: the mode is the status bar's first word, the focused pane's
/// title has `▶`, and without colour the selection and the active tab are
/// in reverse video.
#[test]
fn issue24_item2_mode_and_focus_show_without_colour() {
    let (_d, mut app) = app_themed(PIPE, Theme::dark().monochrome(), true);
    failed_pipe(&mut app);
    app.select(Some(1), true);
    app.inspector.set_tab(Tab::Error);
    let mut seen = Vec::new();
    for (press, mode, pane) in [
        (None, "DAG", "DAG pipe"),
        (Some(KeyCode::Tab), "INSPECT", "details ─"),
        (Some(KeyCode::Tab), "EDIT", "/"),
    ] {
        if let Some(k) = press {
            app.on_key(key(k));
        }
        let buf = frame(&mut app, 120, 32);
        // No colour anywhere.
        for y in 0..32 {
            for x in 0..120 {
                let c = &buf[(x, y)];
                assert!(
                    c.fg == Color::Reset && c.bg == Color::Reset,
                    "a colour at {x},{y} with NO_COLOR"
                );
            }
        }
        let status = row(&buf, 30);
        assert!(status.starts_with(&format!(" {mode} ")), "{status}");
        let marks: Vec<String> = (0..32)
            .map(|y| row(&buf, y))
            .filter(|r| r.contains('▶') && !r.contains("━▶"))
            .collect();
        assert!(
            marks.iter().any(|r| r.contains(&format!("▶ {pane}"))),
            "{mode}: the focused pane's title is marked: {marks:?}"
        );
        let reversed = marked(&buf, Modifier::REVERSED);
        // The selected node and the active tab are in reverse video.
        assert!(
            reversed.iter().any(|l| l.contains("details")),
            "{reversed:?}"
        );
        assert!(reversed.iter().any(|l| l.contains("Err")), "{reversed:?}");
        seen.push(format!(
            "== {mode}\n{}\nreverse video:\n{}\n",
            (0..32)
                .map(|y| row(&buf, y).trim_end().to_owned())
                .collect::<Vec<_>>()
                .join("\n"),
            reversed.join("\n")
        ));
    }
    let all = seen.join("\n").replace(
        &app.editor.path().parent().unwrap().display().to_string(),
        "TMP",
    );
    insta::assert_snapshot!("no_color_modes", all);
}

/// Item 3: a new file and a broken one open in the editor, typing is text,
/// `i` and Enter reach the editor from the DAG, Esc goes back.
#[test]
fn issue24_item3_new_and_broken_files_open_in_the_editor() {
    let (_d, mut app) = app_themed("", Theme::dark(), false);
    assert_eq!(app.mode(), Mode::Edit, "a new file starts in the editor");
    type_text(&mut app, "pipe:");
    assert_eq!(app.editor.text(), "pipe:");
    assert!(app.overlay.is_none() && !app.session.is_open());
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Dag);
    assert!(footer_row(&mut app, 100, 30).contains("i edit the file"));
    // Letters in a DAG with no plan do nothing but say how to edit.
    app.on_key(key(KeyCode::Char('p')));
    assert!(
        app.messages
            .status()
            .unwrap()
            .text
            .contains("i (or Enter) edits")
    );
    app.on_key(key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Edit);
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.mode(),
        Mode::Edit,
        "Enter edits while there is no graph"
    );

    let (_d2, mut broken) = app_themed("pipe:\n  - id: a\n    tool: [\n", Theme::dark(), false);
    assert!(broken.errors > 0 && broken.comp.is_none());
    assert_eq!(
        broken.mode(),
        Mode::Edit,
        "a broken file starts in the editor"
    );
    insta::assert_snapshot!("broken_file_80x24", screen(&mut broken, 80, 24));
}

/// Item 4: a server's error longer than the status line is read whole in
/// the Messages pane and on the Error tab of the nodes it kept from
/// running.
#[test]
fn issue24_item4_a_long_server_error_is_read_whole() {
    let (_d, mut app) = app_on(PIPE);
    let error = "server `py` could not start: it exited with status 1 before answering initialize; its stderr ends with:\n    Traceback (most recent call last):\n      File \"<string>\", line 1, in <module>\n    ModuleNotFoundError: No module named 'nope_module'";
    app.on_start_failed(error);
    let status = status_row(&mut app, 200, 40);
    assert!(status.contains("(m: all of it)"), "{status}");
    // The Error tab of the selected node (not run) holds the whole error.
    let text = screen(&mut app, 200, 40);
    assert!(
        text.contains("ModuleNotFoundError: No module named 'nope_module'"),
        "{text}"
    );
    assert!(
        text.contains("not run: the session could not start"),
        "{text}"
    );
    // The Messages pane has it, with its time.
    app.on_key(key(KeyCode::Char('m')));
    assert_eq!(app.mode(), Mode::Overlay);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("ModuleNotFoundError"), "{text}");
    assert!(
        text.contains("Traceback (most recent call last):"),
        "{text}"
    );
    // Times (hh:mm:ss) read --:--:--.
    let mut masked: Vec<char> = text.chars().collect();
    for i in 0..masked.len().saturating_sub(8) {
        let d = |k: usize| masked[i + k].is_ascii_digit();
        if d(0)
            && d(1)
            && masked[i + 2] == ':'
            && d(3)
            && d(4)
            && masked[i + 5] == ':'
            && d(6)
            && d(7)
        {
            for k in [0, 1, 3, 4, 6, 7] {
                masked[i + k] = '-';
            }
        }
    }
    let masked: String = masked.into_iter().collect();
    insta::assert_snapshot!("messages_pane", masked);
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
}

/// Item 6: at 80x24 the tab bar and History keep what matters; `z` zooms
/// the focused pane; `w` wraps long lines; a resize re-fits the editor's
/// horizontal scroll.
#[test]
fn issue24_item6_layout_zoom_wrap_and_resize() {
    let (d, mut app) = app_on(FAN);
    finished_fan(&mut app, 3);
    app.select(Some(0), true);
    app.focus = Focus::Inspector;
    let buf = frame(&mut app, 80, 24);
    let tabs = (0..24)
        .map(|y| row(&buf, y))
        .find(|r| r.contains("search ─"))
        .unwrap();
    for k in ["1", "Output", "3", "4", "5", "6", "7"] {
        assert!(tabs.contains(k), "{tabs}");
    }
    assert!(
        tabs.trim_end().ends_with('┐'),
        "the tab bar is whole: {tabs}"
    );
    // Zoom: the inspector has the whole screen.
    app.on_key(key(KeyCode::Char('z')));
    let buf = frame(&mut app, 80, 24);
    assert!(row(&buf, 0).starts_with("┌ ▶ search ─"), "{}", row(&buf, 0));
    assert!(status_row(&mut app, 80, 24).starts_with(" INSPECT ZOOM "));
    // Wrap: the long string is read whole.
    let long =
        "a long description of the package that does not fit on one line of a narrow pane at all";
    app.inspector.set_tab(Tab::Output);
    for _ in 0..3 {
        app.on_key(key(KeyCode::Down));
    }
    let cut = screen(&mut app, 80, 24);
    assert!(!cut.contains("narrow pane at all"), "{cut}");
    app.on_key(key(KeyCode::Char('w')));
    let wrapped = screen(&mut app, 80, 24).replace(['│', '\n'], "");
    let squeezed: String = wrapped.split_whitespace().collect();
    assert!(
        squeezed.contains(&long.split_whitespace().collect::<String>()),
        "{wrapped}"
    );
    insta::assert_snapshot!("zoomed_and_wrapped_80x24", screen(&mut app, 80, 24));
    app.on_key(key(KeyCode::Char('z')));
    // History at 80 columns keeps duration, cost and failed.
    save_runs(&d, &[saved_run("20261122-120100-aaaa", 1, "c@x", false)]);
    app.on_key(key(KeyCode::Char('H')));
    let text = screen(&mut app, 80, 24);
    for col in ["duration", "cost", "failed", "notify"] {
        assert!(text.contains(col), "{col}:\n{text}");
    }
    app.on_key(key(KeyCode::Esc));
    // Resize: a long line's end in a narrow editor, then a wide screen
    // shows it from its first column.
    app.on_key(key(KeyCode::Char('i')));
    app.editor.goto(7, 80);
    let narrow = screen(&mut app, 60, 24);
    assert!(!narrow.contains("        args: { query: mcp }"), "{narrow}");
    let wide = screen(&mut app, 200, 24);
    assert!(wide.contains("args: { query: mcp }"), "{wide}");
}

/// Item 7: a question can be hidden to look at the nodes and Ctrl-Q still
/// quits; the palette edits like a shell; the mouse scrolls and closes
/// overlays; the help is a table that scrolls and says where it is.
#[test]
fn issue24_item7_overlays_questions_and_the_mouse() {
    let (_d, mut app) = app_on(HITL);
    let _rx = asked(&mut app, "who", signup_form());
    let _rx2 = asked(&mut app, "c", signup_form());
    assert!(
        app.visuals[0].asking && app.visuals[1].asking,
        "both show ?"
    );
    assert_eq!(app.mode(), Mode::Ask);
    let footer = footer_row(&mut app, 120, 32);
    assert!(footer.contains("F2 hide"), "{footer}");
    assert!(footer.contains("Ctrl-Q quit"), "{footer}");
    app.on_key(key(KeyCode::F(2)));
    assert_eq!(app.mode(), Mode::Dag, "the question is hidden");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Inspect, "the nodes can be looked at");
    app.on_key(key(KeyCode::Esc));
    assert!(status_row(&mut app, 120, 32).contains("question(s) waiting: F2"));
    app.on_key(key(KeyCode::F(2)));
    assert_eq!(app.mode(), Mode::Ask);
    app.on_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL));
    assert!(
        matches!(app.overlay, Some(Overlay::ConfirmQuit(_))) || app.quit,
        "Ctrl-Q leaves a question"
    );
    app.overlay = None;

    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char(':')));
    type_text(&mut app, "rerun");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    match &app.overlay {
        Some(Overlay::Palette(p)) => assert_eq!(p.input(), "", "Ctrl-U clears, not types u"),
        other => panic!("{other:?}"),
    }
    // A click outside closes it.
    frame(&mut app, 120, 32);
    app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left), 0, 0));
    assert!(app.overlay.is_none());
    // The help at 80x24: a table whose columns never touch, scrolled by
    // the wheel, saying which lines show.
    app.on_key(key(KeyCode::Char('?')));
    let first = screen(&mut app, 80, 24);
    assert!(first.contains(" 1–"), "{first}");
    app.on_mouse(mouse(MouseEventKind::ScrollDown, 40, 12));
    let later = screen(&mut app, 80, 24);
    assert!(later.contains(" 4–"), "{later}");
    // Paging down passes the questions' keys, then the glyph legend ends
    // it.
    let mut passed = String::new();
    for _ in 0..40 {
        app.on_key(key(KeyCode::PageDown));
        passed.push_str(&screen(&mut app, 80, 24));
    }
    let end = screen(&mut app, 80, 24);
    assert!(passed.contains("ask-hide"), "{passed}");
    assert!(passed.contains("Ctrl-S Alt-Enter "), "{passed}");
    assert!(passed.contains("What the glyphs mean"), "{passed}");
    assert!(
        end.contains("timeline: on the critical path"),
        "the end is reachable:\n{end}"
    );
    insta::assert_snapshot!("help_80x24_end", end);
    app.on_key(key(KeyCode::Esc));
}

/// Item 8: the light theme paints its own background; the selected node's
/// edges are heavy and bold; a bar reaching the right edge keeps its
/// duration; `+N more` opens with Enter.
#[test]
fn issue24_item8_light_theme_edges_and_timeline() {
    let light = Theme::load("light", None).unwrap();
    let bg = light.bg;
    assert_ne!(bg, Color::Reset);
    let (_d, mut app) = app_themed(FAN, light, true);
    finished_fan(&mut app, 12);
    app.select(Some(1), true);
    let buf = frame(&mut app, 120, 32);
    let unpainted = (0..30)
        .flat_map(|y| (0..120).map(move |x| (x, y)))
        .filter(|&(x, y)| buf[(x, y)].bg == Color::Reset)
        .count();
    assert_eq!(unpainted, 0, "every pane cell has the theme's background");
    let heavy: Vec<String> = (0..32)
        .map(|y| row(&buf, y))
        .filter(|r| r.contains('━'))
        .collect();
    assert!(!heavy.is_empty(), "the selected node's edges are heavy");
    let bold_edges = marked(&buf, Modifier::BOLD).iter().any(|l| l.contains('━'));
    assert!(bold_edges);
    // The timeline: enrich ends at the right edge and keeps its label.
    app.on_key(key(KeyCode::Char('T')));
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("900 ms"), "{text}");
    assert!(text.contains("+6 more"), "{text}");
    app.on_key(key(KeyCode::Enter));
    let text = screen(&mut app, 120, 40);
    assert!(!text.contains("more"), "all iterations show:\n{text}");
    assert!(text.contains("#12"), "{text}");
    insta::assert_snapshot!("timeline_expanded", text);
}

/// Every pane with the focus, at 80x24, 120x35 and 200x50, in colour and
/// with NO_COLOR (the reverse-video cells listed under each).
#[test]
fn every_pane_at_three_sizes_and_without_colour() {
    for mono in [false, true] {
        let theme = if mono {
            Theme::dark().monochrome()
        } else {
            Theme::dark()
        };
        let (_d, mut app) = app_themed(FAN, theme, true);
        finished_fan(&mut app, 12);
        app.select(Some(1), true);
        let tmp = app.editor.path().parent().unwrap().display().to_string();
        for (w, h) in [(80u16, 24u16), (120, 35), (200, 50)] {
            let mut shots = Vec::new();
            let mut shoot = |app: &mut App, name: &str| {
                let buf = frame(app, w, h);
                let mut text = format!("== {name}\n");
                for y in 0..h {
                    text.push_str(row(&buf, y).trim_end());
                    text.push('\n');
                }
                if mono {
                    text.push_str("reverse video:\n");
                    text.push_str(&marked(&buf, Modifier::REVERSED).join("\n"));
                    text.push('\n');
                }
                shots.push(text.replace(&tmp, "TMP"));
            };
            app.focus = Focus::Dag;
            shoot(&mut app, "dag");
            app.focus = Focus::Inspector;
            for tab in [
                Tab::Args,
                Tab::Output,
                Tab::Timing,
                Tab::Iterations,
                Tab::Logs,
            ] {
                app.inspector.set_tab(tab);
                shoot(&mut app, &format!("inspector {}", tab.name()));
            }
            app.focus = Focus::Editor;
            shoot(&mut app, "editor");
            app.focus = Focus::Dag;
            app.act(Action::Timeline);
            shoot(&mut app, "timeline");
            app.act(Action::Timeline);
            app.act(Action::Messages);
            shoot(&mut app, "messages");
            app.overlay = None;
            app.act(Action::Help);
            shoot(&mut app, "help");
            app.overlay = None;
            app.act(Action::Palette);
            shoot(&mut app, "palette");
            app.overlay = None;
            app.act(Action::DryRun);
            shoot(&mut app, "dry run");
            app.overlay = None;
            app.act(Action::History);
            shoot(&mut app, "history");
            app.overlay = None;
            let name = format!("panes_{w}x{h}{}", if mono { "_no_color" } else { "" });
            insta::assert_snapshot!(name, shots.join("\n"));
        }
    }
}

/// Item 7: the URL question's window says what became of opening the
/// link, as the status line does.
#[test]
fn issue24_item7_the_url_window_says_whether_the_link_opened() {
    let (_d, mut app) = app_on(HITL);
    let _rx = asked(
        &mut app,
        "who",
        Ask::Url {
            message: "Confirm in the browser".into(),
            url: "http://127.0.0.1:9/confirm".into(),
            elicitation_id: "e1".into(),
        },
    );
    assert!(screen(&mut app, 120, 32).contains("nothing is opened until you ask"));
    let effects = app.on_key(key(KeyCode::Char('o')));
    assert!(matches!(effects.as_slice(), [Effect::OpenUrl(u)] if u.ends_with("/confirm")));
    assert!(screen(&mut app, 120, 32).contains("opening…"));
    // What the terminal loop does when no opener can start.
    app.asks
        .url_opened(Err("xdg-open: No such file or directory".into()));
    let text = screen(&mut app, 120, 32);
    assert!(
        text.contains("could not open it (xdg-open: No such file or directory)"),
        "{text}"
    );
    assert!(!text.contains("asked the browser"), "{text}");
}

/// Item 7: the recovery bar shows its keys whole in a narrow pane, and
/// answering it gives the keys back to the DAG, so the next `q` quits
/// instead of being typed into the file.
#[test]
fn issue24_item7_answering_the_recovery_bar_gives_the_keys_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pipeline.yml");
    std::fs::write(&file, PIPE).unwrap();
    let data = dir.path().join("data");
    crate::editor::recovery::Recovery::for_file(&file, &data)
        .write(&format!("# unsaved\n{PIPE}"))
        .unwrap();
    let editor = Editor::open(&file, Some(&data)).unwrap();
    assert!(editor.recovery_pending());
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let opts = Options {
        file: file.clone(),
        ..Options::default()
    };
    let dirs = Dirs {
        config: None,
        data: Some(data),
    };
    let mut app = App::new(opts, dirs, config, editor);
    let mut now = Instant::now();
    for _ in 0..50 {
        now += Duration::from_millis(400);
        app.on_tick(now);
        if app.comp.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Review item 3: a dialog with its own mode and footer asks.
    assert_eq!(app.mode(), Mode::Recover, "the question has the keys");
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("unsaved text found"), "{text}");
    let footer = text.lines().last().unwrap_or_default();
    assert!(footer.contains("r recover  d discard"), "{footer}");
    app.on_key(key(KeyCode::Char('r')));
    assert!(app.editor.text().starts_with("# unsaved"));
    assert_eq!(app.mode(), Mode::Dag, "the keys go back to the DAG");
    let before = app.editor.text();
    app.on_key(key(KeyCode::Char('q')));
    assert_eq!(app.editor.text(), before, "q is not typed into the file");
    assert!(
        matches!(
            &app.overlay,
            Some(Overlay::ConfirmQuit(q)) if q.unsaved()
        ),
        "q asks to quit (the recovered text is unsaved)"
    );
}

fn ctrl_key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// A bracketed paste whose lines end in CR alone (xterm, VTE, tmux) or
/// CRLF keeps its lines; the buffer and the saved file hold no CR.
#[test]
fn a_paste_with_cr_line_ends_keeps_its_lines_and_saves_no_cr() {
    let (dir, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('i')));
    assert_eq!(app.focus, Focus::Editor);
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    app.on_paste("# one\r# two\r\n# three\r");
    assert_eq!(
        app.editor.text(),
        format!("{PIPE}# one\n# two\n# three\n"),
        "the paste lost its lines"
    );
    let shown = screen(&mut app, 120, 40);
    let pasted = ["# one", "# two", "# three"];
    for l in pasted {
        let own_row = shown
            .lines()
            .any(|row| row.contains(l) && pasted.iter().filter(|p| row.contains(*p)).count() == 1);
        assert!(own_row, "{l} is not on a line of its own:\n{shown}");
    }
    app.on_key(ctrl_key('s'));
    let saved = std::fs::read_to_string(dir.path().join("pipeline.yml")).unwrap();
    assert!(!saved.contains('\r'), "{saved:?}");
    assert!(saved.ends_with("# one\n# two\n# three\n"), "{saved:?}");
    // One undo takes the whole paste back.
    app.on_key(ctrl_key('z'));
    assert_eq!(app.editor.text(), PIPE);
}

/// A 40-line paste with CR line ends (what xterm, VTE and tmux send) keeps
/// its 40 lines, reaches the disk without a CR, and is one undo step (and
/// one redo step back).
#[test]
fn a_forty_line_cr_paste_is_one_undo_step() {
    let (dir, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    let pasted: String = (1..=40).map(|i| format!("# pasted line {i}\r")).collect();
    app.on_paste(&pasted);
    let want: String = (1..=40).map(|i| format!("# pasted line {i}\n")).collect();
    assert_eq!(app.editor.text(), format!("{PIPE}{want}"));
    app.on_key(ctrl_key('s'));
    let saved = std::fs::read_to_string(dir.path().join("pipeline.yml")).unwrap();
    assert!(!saved.contains('\r'));
    assert_eq!(saved.lines().count(), PIPE.lines().count() + 40);
    app.on_key(ctrl_key('z'));
    assert_eq!(
        app.editor.text(),
        PIPE,
        "one undo takes the whole paste back"
    );
    app.on_key(ctrl_key('y'));
    assert_eq!(
        app.editor.text(),
        format!("{PIPE}{want}"),
        "one redo puts it back"
    );
}

/// A file with CRLF line ends keeps them; a pasted lone CR becomes one of
/// them, never a CR of its own.
#[test]
fn a_crlf_file_keeps_crlf_and_a_pasted_cr_follows_it() {
    let (dir, mut app) = app_on(&PIPE.replace('\n', "\r\n"));
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    app.on_paste("# one\r# two\r");
    app.on_key(ctrl_key('s'));
    let saved = std::fs::read_to_string(dir.path().join("pipeline.yml")).unwrap();
    assert_eq!(saved, format!("{PIPE}# one\n# two\n").replace('\n', "\r\n"));
}

/// Typed text undoes a word at a time (not a key at a time), a newline and
/// a run of deletions are steps of their own, and redo mirrors undo.
#[test]
fn undo_takes_back_a_word_at_a_time_and_redo_mirrors_it() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    let mut texts = vec![app.editor.text()];
    type_text(&mut app, "#hello ");
    texts.push(app.editor.text());
    type_text(&mut app, "world");
    texts.push(app.editor.text());
    app.on_key(key(KeyCode::Enter));
    texts.push(app.editor.text());
    type_text(&mut app, "#again");
    texts.push(app.editor.text());
    for _ in 0..3 {
        app.on_key(key(KeyCode::Backspace));
    }
    texts.push(app.editor.text());
    assert!(app.editor.text().ends_with("#hello world\n#ag"));
    // Undo, step by step, through each of the texts above.
    for want in texts.iter().rev().skip(1) {
        app.on_key(ctrl_key('z'));
        assert_eq!(&app.editor.text(), want);
    }
    assert_eq!(app.editor.text(), PIPE);
    let shown = screen(&mut app, 120, 40);
    assert!(!shown.contains("#hello"), "{shown}");
    // Redo walks the same steps forward.
    for want in texts.iter().skip(1) {
        app.on_key(ctrl_key('y'));
        assert_eq!(&app.editor.text(), want);
    }
    let shown = screen(&mut app, 120, 40);
    assert!(shown.contains("#ag"), "{shown}");
    // A cursor move ends a step: typing on after it is a new one.
    app.on_key(key(KeyCode::Left));
    type_text(&mut app, "x");
    app.on_key(ctrl_key('z'));
    assert_eq!(&app.editor.text(), texts.last().unwrap());
}

// ----- issue 35: every state on screen true, every key said ---------------

/// PIPE run to the end: all three nodes ok, each record naming its tool.
pub(super) fn completed_pipe(app: &mut App) {
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 3,
    });
    for (id, tool) in [
        ("find", "search_users"),
        ("details", "get_user_details"),
        ("notify", "send_email"),
    ] {
        let mut r = ok_record(json!({}), json!({"ok": true}));
        r.tool = tool.into();
        finish(app, id, r);
    }
    let mut trace = empty_trace();
    trace.composition.status = RunStatus::Completed;
    app.on_session(Event::RunFinished {
        status: RunStatus::Completed,
        trace: Box::new(trace),
    });
}

#[test]
fn issue35_item1_the_badge_counts_stale_nodes_and_forgets_a_run_gone() {
    let (_d, mut app) = app_on(PIPE);
    completed_pipe(&mut app);
    assert!(status_row(&mut app, 120, 30).contains("DONE COMPLETED  3/3 ok"));
    // An edit made `notify` stale: the badge says so.
    app.on_session(Event::PlanReplaced {
        stale: vec!["notify".into()],
        fresh: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
    });
    let s = status_row(&mut app, 120, 30);
    assert!(s.contains("2/3 ok · 1 stale"), "{s}");
    // A reload that renames every node: nothing of the run is on screen.
    app.editor.set_text(
        &PIPE
            .replace("find", "lookup")
            .replace("details", "info")
            .replace("notify", "mail"),
    );
    let until = Instant::now() + Duration::from_secs(10);
    let mut now = Instant::now();
    while app
        .comp
        .as_ref()
        .is_none_or(|c| c.index_of("lookup").is_none())
        && Instant::now() < until
    {
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    let s = status_row(&mut app, 120, 30);
    assert!(!s.contains("DONE COMPLETED"), "{s}");
    assert!(s.contains("IDLE") && s.contains("0/3 ok"), "{s}");
}

#[test]
fn issue35_item1_a_retry_message_goes_when_its_node_ends_and_a_paste_drops_saved() {
    let (_d, mut app) = app_on(PIPE);
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 3,
    });
    app.on_session(Event::Retrying {
        id: "find".into(),
        attempt: 2,
        error: "timed out".into(),
    });
    assert!(status_row(&mut app, 160, 30).contains("retrying"));
    completed_pipe(&mut app);
    let s = status_row(&mut app, 160, 30);
    assert!(!s.contains("retrying"), "the run succeeded: {s}");
    // Saved, then a paste: `saved` is no longer true.
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(ctrl_key('s'));
    assert!(status_row(&mut app, 160, 30).contains("saved"));
    app.on_paste("# note\n");
    let s = status_row(&mut app, 160, 30);
    assert!(s.contains("unsaved"), "{s}");
    assert!(
        !s.contains("saved pipeline.yml") && !s.contains("· saved"),
        "{s}"
    );
}

#[test]
fn issue35_item2_a_stale_nodes_header_names_the_tool_it_called() {
    let (_d, mut app) = app_on(PIPE);
    completed_pipe(&mut app);
    // The file now calls another tool in `find`; the session marks it stale.
    app.editor
        .set_text(&PIPE.replace("tool: search_users", "tool: search_user"));
    let until = Instant::now() + Duration::from_secs(10);
    let mut now = Instant::now();
    while app.editor.text().contains("search_users") || app.editor.validating() {
        assert!(Instant::now() < until, "not validated");
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..3 {
        now += Duration::from_millis(400);
        app.on_tick(now);
    }
    app.on_session(Event::PlanReplaced {
        stale: vec!["find".into(), "details".into(), "notify".into()],
        fresh: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
    });
    app.select(Some(0), true);
    app.focus = Focus::Dag;
    let s = screen(&mut app, 200, 30);
    let header = s
        .lines()
        .find(|l| l.contains("last run:"))
        .unwrap_or_else(|| panic!("no header:\n{s}"));
    assert!(
        header.contains("last run: ✓ ok")
            && header.contains("· search_users · the file now calls search_user"),
        "{header}"
    );
}

#[test]
fn issue35_item11_d_shows_waves_and_args_and_e_the_cost() {
    let (_d, mut app) = app_on(FAN);
    app.on_key(key(KeyCode::Char('d')));
    let dry = screen(&mut app, 140, 40);
    assert!(dry.contains("dry run"), "{dry}");
    assert!(dry.contains("wave 1: enrich, readme"), "{dry}");
    assert!(dry.contains("args {"), "{dry}");
    assert!(
        !dry.contains("pricing table")
            && !dry.contains("no price")
            && !dry.contains("within budget"),
        "no prices in the dry run:\n{dry}"
    );
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('e')));
    let est = screen(&mut app, 140, 40);
    assert!(est.contains("cost estimate"), "{est}");
    assert!(est.contains("$0.0") && est.contains("budget"), "{est}");
    assert!(!est.contains("args {"), "no args in the estimate:\n{est}");
    assert_ne!(dry, est);
}

#[test]
fn issue35_item11_a_budget_stop_reads_in_words() {
    let (_d, mut app) = app_on(PIPE);
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 3,
    });
    finish(&mut app, "find", ok_record(json!({}), json!({"users": []})));
    let sentence =
        "$0.0000 spent plus $0.0060 projected for `details` would exceed the cap of $0.0030";
    app.on_session(Event::NodeStatus {
        id: "details".into(),
        status: NodeStatus::Skipped,
        reason: Some(format!("not called: budget cap `max_cost_usd`: {sentence}")),
    });
    app.on_session(Event::NodeStatus {
        id: "notify".into(),
        status: NodeStatus::Skipped,
        reason: Some("not run: the run stopped before `details`: budget cap `max_cost_usd` would have been exceeded".into()),
    });
    let mut trace = empty_trace();
    trace.composition.status = RunStatus::BudgetExceeded;
    app.on_session(Event::RunFinished {
        status: RunStatus::BudgetExceeded,
        trace: Box::new(trace),
    });
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("DONE OVER BUDGET"), "{s}");
    assert!(!s.contains("BUDGET_EXCEEDED"), "{s}");
    // The blocked node is selected, its Error tab says the whole sentence.
    assert_eq!(app.dag.selected(), Some(1));
    assert_eq!(app.inspector.tab(), Tab::Error);
    assert!(
        s.contains("not called: budget cap") && s.contains("exceed the cap of $0.0030"),
        "{s}"
    );
}

#[test]
fn issue35_item12_the_footer_says_the_keys_that_work() {
    let (_d, mut app) = app_on(PIPE);
    // At a breakpoint: continue, step, skip.
    running_pipe(&mut app);
    app.on_session(Event::Paused {
        reason: PauseReason::Breakpoint,
        before: Some("notify".into()),
    });
    let f = footer_row(&mut app, 160, 30);
    assert!(
        f.contains("F8 continue") && f.contains("F10 step") && f.contains("s skip"),
        "{f}"
    );
    assert!(!f.contains("F5 run"), "{f}");
    // At 80×24 help and quit stay.
    let f = footer_row(&mut app, 80, 24);
    assert!(f.contains("? help") && f.contains("q quit"), "{f}");
    app.on_session(Event::Resumed);
    let f = footer_row(&mut app, 160, 30);
    assert!(f.contains("p pause") && f.contains("x cancel"), "{f}");
    // In the editor `?` is text: F1 is said.
    app.on_key(key(KeyCode::Char('i')));
    let f = footer_row(&mut app, 160, 30);
    assert!(f.contains("F1 help") && !f.contains("? help"), "{f}");
    // The quit dialog spells its keys.
    app.on_key(key(KeyCode::Char('x')));
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('q')));
    let f = footer_row(&mut app, 160, 30);
    assert!(!f.contains("as the window says"), "{f}");
    assert!(
        f.contains("s save and quit") && f.contains("Esc stay"),
        "{f}"
    );
    app.on_key(key(KeyCode::Esc));
    let f = footer_row(&mut app, 80, 24);
    assert!(
        f.contains("? help") && f.contains("q quit"),
        "at 80×24: {f}"
    );
}

#[test]
fn issue35_item12_a_saved_run_offers_no_run_key() {
    let (_d, mut app) = with_two_saved_runs();
    app.act(Action::History);
    app.on_key(key(KeyCode::Enter));
    assert!(app.viewing.is_some());
    let f = footer_row(&mut app, 200, 30);
    for refused in ["F5", "re-run", "b break", "F10"] {
        assert!(!f.contains(refused), "{refused} is refused here: {f}");
    }
    assert!(f.contains("Esc back to the live run"), "{f}");
}

#[test]
fn issue35_item12_a_sampling_question_says_what_sends() {
    let (_d, mut app) = app_on(HITL);
    let _rx = asked(
        &mut app,
        "c",
        Ask::Sample {
            request: json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 50
            }),
        },
    );
    let f = footer_row(&mut app, 160, 36);
    assert!(
        f.contains("Ctrl-S send") && f.contains("Enter new line"),
        "{f}"
    );
    assert!(!f.contains("Enter accept"), "{f}");
}

// ---- issue 35: keys that say something, copy, search ----

/// The `Effect::Copy` among `effects`, as the bytes the terminal gets.
fn copied(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::Copy(text) => Some(text.clone()),
        _ => None,
    })
}

/// Item 13: a key that does nothing where it is pressed says so, and `/`
/// outside a searchable view says where it searches.
#[test]
fn issue35_item13_unbound_keys_say_something() {
    let (_d, mut app) = app_on(PIPE);
    assert_eq!(app.focus, Focus::Dag);
    app.on_key(key(KeyCode::Char('/')));
    let status = status_row(&mut app, 140, 30);
    assert!(
        status.contains("/ searches in the inspector's Output"),
        "{status}"
    );
    app.on_key(key(KeyCode::Char('u')));
    let status = status_row(&mut app, 140, 30);
    assert!(status.contains("`u` does nothing here"), "{status}");
    // The palette finds a node by the start of its words, before `wrap`,
    // and keeps its key column in view.
    app.on_key(key(KeyCode::Char(':')));
    type_text(&mut app, "go det");
    let text = screen(&mut app, 80, 24);
    let first = text
        .lines()
        .find(|l| l.contains("go to node") || l.contains("wrap"))
        .unwrap_or_default();
    assert!(first.contains("go to node details"), "{text}");
}

/// Item 15: `y` copies the selected Output value as JSON and `Y` its path,
/// through an OSC 52 sequence, and the status line says what and how many
/// bytes.
#[test]
fn issue35_item15_yank_a_value_and_its_path() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.focus, Focus::Inspector);
    assert_eq!(app.inspector.tab(), Tab::Output);
    for _ in 0..3 {
        app.on_key(key(KeyCode::Char('j')));
    }
    let text = copied(&app.on_key(key(KeyCode::Char('y')))).expect("y copies");
    assert_eq!(text, "\"u3\"");
    assert_eq!(
        crate::copy::osc52(&text),
        "\x1b]52;c;InUzIg==\x07",
        "ESC ] 52 ; c ; base64 BEL"
    );
    let status = status_row(&mut app, 140, 30);
    assert!(
        status.contains("copied Output .users[0].id (4 bytes)"),
        "{status}"
    );
    let path = copied(&app.on_key(key(KeyCode::Char('Y')))).expect("Y copies");
    assert_eq!(path, ".users[0].id");
    // A container: the whole of it, pretty.
    app.on_key(key(KeyCode::Char('k')));
    let text = copied(&app.on_key(key(KeyCode::Char('y')))).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        json!({"id": "u3", "name": "Carol Nguyen"})
    );
}

/// Item 15: in the DAG, `y` copies the node's args and `Y` a command line
/// that makes the same call; a node that has not run says why nothing is
/// copied.
#[test]
fn issue35_item15_yank_a_nodes_args_and_its_tools_call_line() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    assert_eq!(app.focus, Focus::Dag);
    let args = copied(&app.on_key(key(KeyCode::Char('y')))).expect("y copies");
    assert_eq!(args, "{\n  \"query\": \"carol\"\n}");
    let line = copied(&app.on_key(key(KeyCode::Char('Y')))).expect("Y copies");
    assert_eq!(
        line,
        r#"pipewright tools call search_users --file pipeline.yml --args '{"query":"carol"}'"#
    );
    let status = status_row(&mut app, 140, 30);
    assert!(
        status.contains("copied a `tools call` line for find"),
        "{status}"
    );
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('l')));
    assert_ne!(app.selected_index(), Some(0), "another node");
    let effects = app.on_key(key(KeyCode::Char('y')));
    assert!(copied(&effects).is_none());
    let status = status_row(&mut app, 140, 30);
    assert!(
        status.contains("has not run: no resolved args to copy"),
        "{status}"
    );
}

/// Item 15: the URL question copies its link (`y`), since mouse capture
/// keeps the link from being selected.
#[test]
fn issue35_item15_the_url_question_copies_its_link() {
    let (_d, mut app) = app_on(HITL);
    let _rx = asked(
        &mut app,
        "who",
        Ask::Url {
            message: "Confirm in the browser".into(),
            url: "http://127.0.0.1:9/confirm".into(),
            elicitation_id: "e1".into(),
        },
    );
    assert!(screen(&mut app, 120, 32).contains("y copy link"));
    let url = copied(&app.on_key(key(KeyCode::Char('y')))).expect("y copies the link");
    assert_eq!(url, "http://127.0.0.1:9/confirm");
    assert!(!app.asks.is_empty(), "the question is still open");
    let status = status_row(&mut app, 120, 32);
    assert!(status.contains("copied the link (26 bytes)"), "{status}");
}

/// Item 16: `/` on the Raw tab searches: typing highlights and counts the
/// matches, `n`/`N` step through them and scroll them into view, Esc
/// clears.
#[test]
fn issue35_item16_search_in_raw() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    let mut users: Vec<serde_json::Value> = (0..40)
        .map(|i| json!({"id": format!("u{i}"), "name": format!("Filler {i}")}))
        .collect();
    users.push(json!({"id": "u99", "name": "Carol Zed"}));
    let mut rec = ok_record(json!({"query": "x"}), json!({"users": users.clone()}));
    rec.raw = json!({"structuredContent": {"users": users}}).into();
    finish(&mut app, "find", rec);
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('6')));
    assert_eq!(app.inspector.tab(), Tab::Raw);
    let mut text = screen(&mut app, 140, 30);
    let until = Instant::now() + Duration::from_secs(10);
    while !text.contains(" line 1/") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
        app.on_tick(Instant::now());
        text = screen(&mut app, 140, 30);
    }
    assert!(text.contains(" line 1/"), "{text}");
    assert!(!text.contains("Carol Zed"), "the match starts out of view");
    app.on_key(key(KeyCode::Char('/')));
    assert_eq!(app.mode(), crate::app::Mode::Search);
    type_text(&mut app, "carol");
    let text = screen(&mut app, 140, 30);
    assert!(text.contains("/carol█  match 1/1"), "{text}");
    assert!(text.contains("Carol Zed"), "scrolled into view: {text}");
    let footer = footer_row(&mut app, 140, 30);
    assert!(footer.contains("Esc clear"), "{footer}");
    // Highlighted: the match's cells are drawn in the warning colour.
    let buf = frame(&mut app, 140, 30);
    let lit = (0..30u16).any(|y| {
        (0..140u16).any(|x| buf[(x, y)].symbol() == "C" && buf[(x, y)].bg == app.theme.warning)
    });
    assert!(lit, "the match is highlighted");
    app.on_key(key(KeyCode::Enter));
    type_text(&mut app, "ZZ");
    assert!(
        screen(&mut app, 140, 30).contains("match 1/1"),
        "n, N only step"
    );
    app.on_key(key(KeyCode::Esc));
    let text = screen(&mut app, 140, 30);
    assert!(!text.contains("match 1/1"), "{text}");
    // From the top, the first match is the first of the text.
    app.on_key(key(KeyCode::Char('g')));
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "filler 3");
    let text = screen(&mut app, 140, 30);
    assert!(text.contains("match 1/11"), "{text}");
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('n')));
    assert!(screen(&mut app, 140, 30).contains("match 2/11"));
    app.on_key(key(KeyCode::Char('N')));
    app.on_key(key(KeyCode::Char('N')));
    assert!(screen(&mut app, 140, 30).contains("match 11/11"));
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "nowhere");
    assert!(screen(&mut app, 140, 30).contains("no match"));
}

/// Item 16: `/` in the help and the Messages pane searches them too; the
/// count is in the status line, `n` moves on, Esc clears before it closes.
#[test]
fn issue35_item16_search_in_help_and_messages() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('?')));
    screen(&mut app, 120, 40);
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "yank");
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("/yank█  match 1/"), "{text}");
    let footer = footer_row(&mut app, 120, 40);
    assert!(footer.contains("Esc clear"), "{footer}");
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('n')));
    assert!(status_row(&mut app, 120, 40).contains("match 2/"));
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_some(), "Esc clears the search first");
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
    app.say("warmup: attempt 2 failed, retrying", false);
    app.on_key(key(KeyCode::Char('m')));
    screen(&mut app, 120, 40);
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "RETRYING");
    assert!(status_row(&mut app, 120, 40).contains("no match"));
    app.on_key(key(KeyCode::Backspace));
    for _ in 0..7 {
        app.on_key(key(KeyCode::Backspace));
    }
    type_text(&mut app, "retrying");
    assert!(status_row(&mut app, 120, 40).contains("match 1/1"));
}

/// Issue 35 item 16: `/` searches the inspector's Logs tab: the match is
/// highlighted, its count is in the pane's border and the footer offers
/// n/N; Esc clears it.
#[test]
fn issue35_item16_slash_searches_the_logs_tab() {
    let (_d, mut app) = app_on(HITL);
    let mut record = ok_record(json!({"reason": "demo"}), json!({"ok": true}));
    record.extras = CallExtras {
        logs: (1..=30)
            .map(|i| LogLine {
                level: "info".into(),
                logger: None,
                data: json!(format!("line {i} of the server")),
            })
            .chain(std::iter::once(LogLine {
                level: "warning".into(),
                logger: None,
                data: json!("plan defaulted to free"),
            }))
            .collect(),
        ..CallExtras::default()
    };
    finish(&mut app, "who", record);
    app.select(Some(0), true);
    app.focus = Focus::Inspector;
    app.on_key(key(KeyCode::Char('7')));
    assert_eq!(app.inspector.tab(), Tab::Logs);
    app.on_key(key(KeyCode::Char('/')));
    assert_eq!(app.mode(), Mode::Search);
    type_text(&mut app, "defaulted");
    app.on_key(key(KeyCode::Enter));
    let s = screen(&mut app, 120, 32);
    assert!(s.contains("/defaulted  match 1/1 (n/N)"), "{s}");
    assert!(
        s.contains("plan defaulted to free"),
        "scrolled into view:\n{s}"
    );
    let buf = frame(&mut app, 120, 32);
    let (x, y) = (0..32)
        .find_map(|y| row(&buf, y).find("defaulted").map(|x| (x, y)))
        .expect("the match on screen");
    let col = row(&buf, y)[..x].chars().count() as u16;
    assert!(
        buf[(col, y)].modifier.contains(Modifier::UNDERLINED),
        "the current match is marked"
    );
    assert!(s.contains("n N next, previous"), "{s}");
    app.on_key(key(KeyCode::Esc));
    assert!(!screen(&mut app, 120, 32).contains("/defaulted"));
}
