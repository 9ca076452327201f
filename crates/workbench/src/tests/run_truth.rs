//! What the workbench shows of a run is what the run did (issue 48): a
//! stale node's tool, the step marker, staleness undone, and what the
//! Messages pane says of pauses, answers, re-runs and a run's end.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use serde_json::json;

use super::screens::{
    PIPE, app_on, completed_pipe, empty_trace, finish, key, ok_record, running_pipe, screen,
    status_row,
};
use crate::app::{App, Focus};
use crate::inspector::Tab;
use crate::msg::Msg;
use pipewright_engine::run::events::{Event, PauseReason};
use pipewright_engine::run::trace::RunStatus;

/// Ticks the app until its editor's text has validated.
fn validated(app: &mut App) {
    let until = Instant::now() + Duration::from_secs(10);
    let mut now = Instant::now();
    while app.editor.validating() {
        assert!(Instant::now() < until, "not validated");
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..3 {
        now += Duration::from_millis(400);
        app.on_tick(now);
    }
}

/// The Messages pane's lines.
fn logged(app: &App) -> Vec<String> {
    app.messages.log().iter().map(|e| e.text.clone()).collect()
}

#[test]
fn item1_timing_names_the_tool_the_node_called_and_what_the_file_calls_now() {
    let (_d, mut app) = app_on(PIPE);
    completed_pipe(&mut app);
    app.editor
        .set_text(&PIPE.replace("tool: search_users", "tool: search_user"));
    validated(&mut app);
    app.on_session(Event::PlanReplaced {
        stale: vec!["find".into(), "details".into(), "notify".into()],
        fresh: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
    });
    app.select(Some(0), true);
    app.focus = Focus::Dag;
    app.inspector.set_tab(Tab::Timing);
    let s = screen(&mut app, 200, 30);
    let tool = s
        .lines()
        .find(|l| l.contains("tool      "))
        .unwrap_or_else(|| panic!("no tool line:\n{s}"));
    assert!(
        tool.contains("tool      search_users (the file now calls search_user)"),
        "{tool}"
    );
}

#[test]
fn item6_a_steps_next_node_is_marked_and_the_badge_stays_step() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    app.on_session(Event::Paused {
        reason: PauseReason::Step,
        before: None,
    });
    finish(
        &mut app,
        "details",
        ok_record(json!({}), json!({"email": "c@x"})),
    );
    app.on_session(Event::Paused {
        reason: PauseReason::Step,
        before: Some("notify".into()),
    });
    let s = screen(&mut app, 120, 30);
    assert!(s.contains("▸"), "{s}");
    let bar = status_row(&mut app, 120, 30);
    assert!(bar.starts_with(" DAG ") && bar.contains(" STEP "), "{bar}");
    assert!(!bar.contains("STEP at"), "{bar}");
    assert!(
        logged(&app)
            .iter()
            .any(|l| l.starts_with("step: next is `notify`")),
        "{:?}",
        logged(&app)
    );
}

#[test]
fn item7_nodes_fresh_again_count_as_they_ran() {
    let (_d, mut app) = app_on(PIPE);
    completed_pipe(&mut app);
    app.on_session(Event::PlanReplaced {
        stale: vec!["details".into(), "notify".into()],
        fresh: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
    });
    assert!(status_row(&mut app, 120, 30).contains("1/3 ok · 2 stale"));
    app.on_session(Event::PlanReplaced {
        stale: Vec::new(),
        fresh: vec!["details".into(), "notify".into()],
        added: Vec::new(),
        removed: Vec::new(),
    });
    let s = status_row(&mut app, 120, 30);
    assert!(s.contains("3/3 ok") && !s.contains("stale"), "{s}");
}

#[test]
fn item8_a_budget_stop_is_said_in_words() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    let mut trace = empty_trace();
    trace.composition.status = RunStatus::BudgetExceeded;
    app.on_session(Event::RunFinished {
        status: RunStatus::BudgetExceeded,
        trace: Box::new(trace),
    });
    let log = logged(&app);
    assert!(
        log.iter()
            .any(|l| l.starts_with("run stopped over budget: ")),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|l| l.contains("budget_exceeded")),
        "{log:?}"
    );
}

#[test]
fn item8_pauses_and_a_resume_are_said() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    app.on_session(Event::Paused {
        reason: PauseReason::User,
        before: None,
    });
    app.on_session(Event::Resumed);
    app.on_session(Event::Paused {
        reason: PauseReason::Breakpoint,
        before: Some("notify".into()),
    });
    let log = logged(&app);
    let at = |prefix: &str| log.iter().position(|l| l.starts_with(prefix));
    let paused = at("paused: calls in flight finish, nothing new starts (F8 continues)");
    let resumed = at("resumed");
    let breakpoint = at("at breakpoint `notify`");
    assert!(
        paused.is_some() && paused < resumed && resumed < breakpoint,
        "{log:?}"
    );
}

#[test]
fn item8_an_answer_is_logged_once_by_the_session() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    // The modal's answer is shown; the session's event is the logged line.
    app.update(Msg::Answered {
        node: Some("details".into()),
        action: "accept",
    });
    app.on_session(Event::Answered {
        id: "details".into(),
        kind: "elicitation".into(),
        action: "accept".into(),
    });
    let answers: Vec<_> = logged(&app)
        .into_iter()
        .filter(|l| l.contains("answered"))
        .collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
}

#[test]
fn item8_r_on_a_node_that_ran_at_step_is_said() {
    let (_d, mut app) = app_on(PIPE);
    // A session is open (the first F10 started it) and the run is at STEP.
    let _ = app.act(crate::keys::Action::Step);
    running_pipe(&mut app);
    app.on_session(Event::Paused {
        reason: PauseReason::Step,
        before: None,
    });
    app.select(Some(0), true);
    app.focus = Focus::Dag;
    let effects = app.on_key(key(KeyCode::Char('r')));
    assert!(
        logged(&app)
            .iter()
            .any(|l| l == "re-running `find` in the paused run"),
        "{:?} {effects:?}",
        logged(&app)
    );
}

#[test]
fn item14_nodes_whose_server_could_not_start_say_so() {
    let (_d, mut app) = app_on(PIPE);
    app.on_server_failed(
        Some("py"),
        "server `py` could not start: it exited with status 1",
    );
    app.focus = Focus::Dag;
    let s = screen(&mut app, 120, 30);
    assert!(
        s.contains("✗ not started: server py could not start"),
        "{s}"
    );
    assert!(!s.contains("not run yet"), "{s}");
    assert!(s.contains("not run: the session could not start"), "{s}");
    assert!(!s.contains("○ find") && s.contains("✗ find"), "{s}");
    assert!(status_row(&mut app, 120, 30).starts_with(" DAG  NOT STARTED"));
    // The next run starts from a clean slate.
    app.on_session(Event::RunStarted {
        composition: "main".into(),
        case: None,
        nodes: 3,
    });
    let s = screen(&mut app, 120, 30);
    assert!(!s.contains("✗ find") && !s.contains("not started"), "{s}");
}
