//! What the workbench shows of a run is what the run did (issue 48): a
//! stale node's tool, the step marker, staleness undone.

use std::time::{Duration, Instant};

use serde_json::json;

use super::screens::{
    PIPE, app_on, completed_pipe, finish, ok_record, running_pipe, screen, status_row,
};
use crate::app::{App, Focus};
use crate::inspector::Tab;
use pipewright_engine::run::events::{Event, PauseReason};

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
