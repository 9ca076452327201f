//! Behaviour and snapshot tests of the inspector pane.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::filter::FilterState;
use super::*;
use crate::theme::Theme;
use pipewright_engine::json::Json;
use pipewright_engine::run::trace::IterationRecord;

const PIPE: &str = r#"
compositions:
  - name: demo
    nodes:
      - id: search
        tool: search_users
        args: { query: "${var.who}", limit: 3 }
      - id: enrich
        needs: [search]
        for_each: "${search.users[*]}"
        tool: fetch_user
        args: { id: "${item.id}" }
"#;

fn nodes() -> Vec<Node> {
    let loaded = pipewright_engine::file::open::load_str(PIPE);
    let p = loaded
        .pipeline
        .unwrap_or_else(|| panic!("fixture pipeline: {:?}", loaded.diagnostics));
    p.compositions[0].nodes.clone()
}

fn node(id: &str) -> Node {
    nodes()
        .into_iter()
        .find(|n| n.id == id)
        .unwrap_or_else(|| panic!("no node {id}"))
}

fn ok_record() -> NodeRecord {
    let output = json!({
        "users": [
            {"id": "u1", "name": "Ada Lovelace", "email": "ada@example.com", "admin": true},
            {"id": "u2", "name": "Alan Turing", "email": "alan@example.com", "admin": false},
        ],
        "total": 2,
        "next": null,
    });
    let raw = json!({
        "content": [{"type": "text", "text": "2 users"}],
        "structuredContent": output,
        "isError": false,
    });
    NodeRecord {
        status: NodeStatus::Ok,
        args: json!({"query": "ada", "limit": 3}).into(),
        output: output.into(),
        raw: raw.clone().into(),
        attempts: 1,
        started_at: Some("2026-11-22T11:00:00Z".into()),
        duration_ms: 120,
        cost_usd: 0.0012,
        tokens: 1234,
        model: Some("demo-small".into()),
        rpc: json!({
            "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "search_users", "arguments": {"query": "ada", "limit": 3}}},
            "response": {"result": raw},
        }).into(),
        ..NodeRecord::default()
    }
}

fn failed_record() -> NodeRecord {
    NodeRecord {
        status: NodeStatus::Failed,
        args: json!({"query": "ada", "limit": 3}).into(),
        error: Some(
            "search_users failed: upstream timed out after 30 s while calling \
             https://api.example.com/users/search?q=ada; the connection was reset \
             by peer\nlast response: 504 Gateway Timeout"
                .into(),
        ),
        attempts: 3,
        started_at: Some("2026-11-22T11:00:00Z".into()),
        duration_ms: 31_250,
        ..NodeRecord::default()
    }
}

fn fanout_record() -> NodeRecord {
    let iterations: Vec<IterationRecord> = (0..5)
        .map(|i| {
            let failed = i == 3;
            IterationRecord {
                index: i,
                extras: Default::default(),
                status: if failed {
                    NodeStatus::Failed
                } else {
                    NodeStatus::Ok
                },
                args: json!({"id": format!("u{i}")}).into(),
                output: if failed {
                    Value::Null.into()
                } else {
                    json!({"id": format!("u{i}"), "stars": i * 10}).into()
                },
                error: failed.then(|| "no user u3 (404)".to_owned()),
                error_code: None,
                error_status: None,
                attempts: if failed { 2 } else { 1 },
                started_at: None,
                duration_ms: 40 + i as u64 * 15,
            }
        })
        .collect();
    NodeRecord {
        status: NodeStatus::Ok,
        args: json!([{"id": "u0"}, {"id": "u1"}]).into(),
        output: Json::list(iterations.iter().map(|i| i.output.clone()).collect()),
        attempts: 1,
        duration_ms: 210,
        iterations,
        ..NodeRecord::default()
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(i: &mut Inspector, code: KeyCode) -> bool {
    i.handle_key(key(code))
}

fn type_text(i: &mut Inspector, s: &str) {
    for c in s.chars() {
        assert!(press(i, KeyCode::Char(c)), "{c:?} not consumed");
    }
}

/// Waits for one piece of background work and applies it.
fn wait(i: &mut Inspector) -> bool {
    match i.done_rx.recv_timeout(Duration::from_secs(20)) {
        Ok(d) => i.apply(d),
        Err(e) => panic!("no background result: {e}"),
    }
}

/// Waits until the filter settled (it may take several results).
fn wait_filter(i: &mut Inspector) {
    while matches!(i.filter.state(), FilterState::Running) {
        wait(i);
    }
}

fn draw(i: &mut Inspector, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    let theme = Theme::dark();
    term.draw(|f| i.render(f.area(), f.buffer_mut(), &theme, true))
        .expect("draw");
    term
}

fn screen(i: &mut Inspector, w: u16, h: u16) -> String {
    draw(i, w, h).backend().to_string()
}

fn shown(record: NodeRecord, id: &str) -> (Inspector, NodeRecord) {
    let mut i = Inspector::new();
    let n = node(id);
    i.set_node(id, Some(&n), Some(&record), None);
    (i, record)
}

fn click(column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

// ---- tabs and keys ----

#[test]
fn tabs_switch_with_arrows_digits_and_wrap() {
    let mut i = Inspector::new();
    assert_eq!(i.tab(), Tab::Output);
    assert!(press(&mut i, KeyCode::Right));
    assert_eq!(i.tab(), Tab::Error);
    assert!(press(&mut i, KeyCode::Char('1')));
    assert_eq!(i.tab(), Tab::Args);
    assert!(press(&mut i, KeyCode::Left));
    assert_eq!(i.tab(), Tab::Logs);
    assert!(press(&mut i, KeyCode::Right));
    assert_eq!(i.tab(), Tab::Args);
    assert!(press(&mut i, KeyCode::Char('7')));
    assert_eq!(i.tab(), Tab::Logs);
    assert!(press(&mut i, KeyCode::Char('5')));
    assert_eq!(i.tab(), Tab::Iterations);
    i.set_tab(Tab::Timing);
    assert_eq!(i.tab(), Tab::Timing);
}

#[test]
fn app_keys_are_not_consumed() {
    let (mut i, _) = shown(ok_record(), "search");
    for code in [
        KeyCode::Char('q'),
        KeyCode::Tab,
        KeyCode::F(5),
        KeyCode::Char('R'),
    ] {
        assert!(!press(&mut i, code), "{code:?}");
    }
    let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert!(!i.handle_key(ctrl_s));
    i.set_tab(Tab::Timing);
    assert!(!press(&mut i, KeyCode::Down));
}

#[test]
fn a_click_on_a_tab_name_switches_to_it() {
    let (mut i, _) = shown(ok_record(), "search");
    let area = Rect::new(10, 5, 80, 20);
    let text = screen(&mut i, 100, 30);
    let _ = text;
    // Title: "┌ search ─ Args Output Error Timing Iterations Raw ─"
    let prefix = i.title_prefix().chars().count() as u16;
    let args_x = area.x + 1 + prefix;
    assert!(i.handle_mouse(click(args_x, area.y), area));
    assert_eq!(i.tab(), Tab::Args);
    let raw_x = args_x + "Args Output Error Timing Iterations ".len() as u16;
    assert!(i.handle_mouse(click(raw_x + 2, area.y), area));
    assert_eq!(i.tab(), Tab::Raw);
    // Between names, or outside the pane: nothing.
    assert!(!i.handle_mouse(click(args_x + 4, area.y), area));
    assert!(!i.handle_mouse(click(0, 0), area));
    assert_eq!(i.tab(), Tab::Raw);
}

#[test]
fn clicking_a_row_selects_it_and_clicking_again_folds_it() {
    let (mut i, _) = shown(ok_record(), "search");
    let area = Rect::new(0, 0, 60, 20);
    draw(&mut i, 60, 20);
    // Body starts under the border and the header line: row 2.
    assert!(i.handle_mouse(click(20, 3), area));
    let tree = i.output.as_ref().unwrap();
    assert_eq!(tree.selected(), 1);
    let rows = tree.rows().len();
    assert!(i.handle_mouse(click(20, 3), area));
    let tree = i.output.as_ref().unwrap();
    assert!(tree.rows().len() < rows);
    // The wheel scrolls without panicking at the ends.
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        ..click(5, 5)
    };
    assert!(i.handle_mouse(wheel, area));
}

#[test]
fn tree_keys_fold_navigate_and_expand_all() {
    let (mut i, _) = shown(ok_record(), "search");
    let rows = |i: &Inspector| i.output.as_ref().unwrap().rows().len();
    let full = rows(&i);
    assert!(press(&mut i, KeyCode::Char('-')));
    assert_eq!(rows(&i), 5); // { users total next }
    assert!(press(&mut i, KeyCode::Char('+')));
    assert_eq!(rows(&i), full);
    assert!(press(&mut i, KeyCode::Down));
    assert!(press(&mut i, KeyCode::Enter));
    assert_eq!(rows(&i), full - 13);
    assert!(press(&mut i, KeyCode::Char(' ')));
    assert_eq!(rows(&i), full);
    assert!(press(&mut i, KeyCode::End));
    assert_eq!(i.output.as_ref().unwrap().selected(), full - 1);
    assert!(press(&mut i, KeyCode::Home));
    assert_eq!(i.output.as_ref().unwrap().selected(), 0);
}

// ---- the jq filter box ----

#[test]
fn the_filter_box_takes_letters_until_esc() {
    let (mut i, _) = shown(ok_record(), "search");
    assert!(press(&mut i, KeyCode::Char('/')));
    assert!(i.filter_editing());
    // Letters an app would bind (q, R, digits, arrows) go to the box.
    type_text(&mut i, ".users[1]");
    assert!(press(&mut i, KeyCode::Left));
    assert_eq!(i.tab(), Tab::Output);
    assert!(!press(&mut i, KeyCode::F(5)));
    assert!(!i.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)));
    assert!(press(&mut i, KeyCode::Esc));
    assert!(!i.filter_editing());
    assert_eq!(i.filter_text(), ".users[1]");
    wait_filter(&mut i);
    assert_eq!(i.filter.state(), &FilterState::Ok(1));
    let tree = i.filtered.as_ref().expect("a filtered tree");
    assert_eq!(tree.value()["name"], json!("Alan Turing"));
    // `f` opens it again; clearing it brings the whole output back.
    assert!(press(&mut i, KeyCode::Char('f')));
    assert!(i.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)));
    assert!(press(&mut i, KeyCode::Enter));
    assert_eq!(i.filter.state(), &FilterState::Empty);
    assert!(i.filtered.is_none());
    assert_eq!(i.position_text(), " 1/18 ");
}

#[test]
fn several_results_show_as_an_array() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_filter(".users[].id");
    wait_filter(&mut i);
    assert_eq!(i.filter.state(), &FilterState::Ok(2));
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(["u1", "u2"]));
}

#[test]
fn a_compile_error_is_shown_under_the_box_at_its_column() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_filter(".users | lenght");
    wait_filter(&mut i);
    assert!(matches!(i.filter.state(), FilterState::Compile(_)));
    let text = screen(&mut i, 70, 12);
    let lines: Vec<&str> = text.lines().collect();
    let box_line = lines
        .iter()
        .position(|l| l.contains("jq › .users | lenght"))
        .unwrap();
    let err = lines[box_line + 1];
    let col = |l: &str, needle: &str| l.find(needle).map(|b| l[..b].chars().count());
    let caret = col(err, "^").expect("a caret");
    let word = col(lines[box_line], "lenght").unwrap();
    assert_eq!(caret, word, "{text}");
    assert!(err.contains("col 10"), "{err}");
    insta::assert_snapshot!("filter_compile_error", text);
}

#[test]
fn a_runtime_error_is_a_sentence_under_the_box() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_filter(".total.x");
    wait_filter(&mut i);
    let FilterState::Run(m) = i.filter.state() else {
        panic!("{:?}", i.filter.state());
    };
    assert!(m.contains("cannot index"), "{m}");
    assert!(screen(&mut i, 70, 12).contains("error: cannot index"));
}

#[test]
fn the_filter_follows_a_new_record() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_filter(".total");
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(2));
    let mut again = ok_record();
    let mut total = again.output.tree().clone();
    total["total"] = json!(7);
    again.output = total.into();
    again.duration_ms = 99;
    let n = node("search");
    i.set_node("search", Some(&n), Some(&again), None);
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(7));
}

// ---- set_node ----

#[test]
fn showing_the_same_record_again_keeps_the_view() {
    let rec = ok_record();
    let n = node("search");
    let mut i = Inspector::new();
    i.set_node("search", Some(&n), Some(&rec), None);
    press(&mut i, KeyCode::Char('-'));
    let rows = i.output.as_ref().unwrap().rows().len();
    let generation = i.generation;
    i.set_node("search", Some(&n), Some(&rec), None);
    assert_eq!(i.generation, generation);
    assert_eq!(i.output.as_ref().unwrap().rows().len(), rows);
    // A re-run (a new record) starts afresh.
    let mut rerun = rec.clone();
    rerun.started_at = Some("2026-11-22T11:05:00Z".into());
    i.set_node("search", Some(&n), Some(&rerun), None);
    assert_ne!(i.generation, generation);
    assert!(i.output.as_ref().unwrap().rows().len() > rows);
}

#[test]
fn before_a_run_args_show_the_preview_or_the_text() {
    let mut i = Inspector::new();
    let n = node("search");
    i.set_node("search", Some(&n), None, None);
    i.set_tab(Tab::Args);
    let as_written = screen(&mut i, 60, 8);
    assert!(as_written.contains("args as written"), "{as_written}");
    assert!(as_written.contains("\"${var.who}\""), "{as_written}");
    let preview = json!({"query": "ada", "limit": 3});
    i.set_node("search", Some(&n), None, Some(&preview));
    let text = screen(&mut i, 60, 8);
    assert!(text.contains("preview"), "{text}");
    assert!(text.contains("\"ada\""), "{text}");
    i.set_tab(Tab::Output);
    assert!(screen(&mut i, 60, 8).contains("not run yet: no output"));
    insta::assert_snapshot!("not_run_output", screen(&mut i, 60, 8));
}

#[test]
fn clear_shows_nothing() {
    let (mut i, _) = shown(ok_record(), "search");
    i.clear();
    assert_eq!(i.node_id(), None);
    insta::assert_snapshot!("empty", screen(&mut i, 60, 6));
}

// ---- iterations ----

#[test]
fn iterations_select_and_open_an_element() {
    let (mut i, _) = shown(fanout_record(), "enrich");
    i.set_tab(Tab::Iterations);
    assert!(press(&mut i, KeyCode::Down));
    assert!(press(&mut i, KeyCode::Down));
    assert!(press(&mut i, KeyCode::Down));
    assert!(press(&mut i, KeyCode::Down));
    assert!(press(&mut i, KeyCode::Down));
    assert_eq!(i.iterations.selected(), 4);
    assert!(press(&mut i, KeyCode::Up));
    assert!(press(&mut i, KeyCode::Enter));
    let detail = i.iterations.detail_mut().expect("detail open");
    assert_eq!(detail.value()["error"], json!("no user u3 (404)"));
    insta::assert_snapshot!("iteration_detail", screen(&mut i, 70, 16));
    assert!(press(&mut i, KeyCode::Esc));
    assert!(i.iterations.detail_mut().is_none());
    // A click on the second table row selects it.
    let area = Rect::new(0, 0, 70, 16);
    assert!(i.handle_mouse(click(4, 4), area));
    assert_eq!(i.iterations.selected(), 1);
}

// ---- raw ----

#[test]
fn raw_is_pretty_printed_in_the_background() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_tab(Tab::Raw);
    assert!(matches!(i.raw, RawText::Pending));
    assert!(screen(&mut i, 60, 8).contains("formatting…"));
    assert!(wait(&mut i));
    let RawText::Ready(t) = &i.raw else {
        panic!("raw not ready")
    };
    // The wire messages, in order: the request first.
    assert_eq!(t.line(0), "[");
    assert_eq!(t.line(1), "  {");
    assert!(press(&mut i, KeyCode::PageDown));
    assert!(i.raw_view.offset > 0);
    assert!(press(&mut i, KeyCode::Home));
    assert_eq!(i.raw_view.offset, 0);
}

#[test]
fn a_stale_pretty_text_is_dropped() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_tab(Tab::Raw);
    let mut other = ok_record();
    other.rpc = json!({"request": {"other": true}}).into();
    i.set_node("x", None, Some(&other), None);
    // Two results come back; only the second applies.
    let mut applied = 0;
    while !matches!(i.raw, RawText::Ready(_)) {
        if wait(&mut i) {
            applied += 1;
        }
    }
    assert_eq!(applied, 1);
    let RawText::Ready(t) = &i.raw else {
        unreachable!()
    };
    assert_eq!(t.line(2), "    \"other\": true");
}

// ---- big values ----

/// An array of `n` user objects, about 120 bytes of JSON each.
fn big_output(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|k| json!({"id": k, "name": format!("user-{k}"), "email": format!("u{k}@example.com"), "tags": ["a", "b"], "bio": format!("user {k} likes long walks")}))
            .collect(),
    )
}

#[test]
fn a_five_megabyte_output_draws_only_what_is_visible() {
    let out = big_output(50_000);
    assert!(serde_json::to_string(&out).unwrap().len() > 5_000_000);
    let rec = NodeRecord {
        status: NodeStatus::Ok,
        output: out.into(),
        ..NodeRecord::default()
    };
    let mut i = Inspector::new();
    i.set_node("big", None, Some(&rec), None);
    let visits = i.output.as_ref().unwrap().visits();
    assert!(visits < 50, "{visits}");
    let text = screen(&mut i, 80, 12);
    assert!(text.contains("▸ [40000 … 49999]"), "{text}");
    assert!(text.contains(" 1/7 "), "{text}");
    assert_eq!(i.output.as_ref().unwrap().visits(), visits);
    // Down to the last user through two levels of groups.
    for _ in 0..3 {
        press(&mut i, KeyCode::End);
        press(&mut i, KeyCode::Up);
        press(&mut i, KeyCode::Enter);
    }
    press(&mut i, KeyCode::End);
    let text = screen(&mut i, 80, 12);
    assert!(text.contains("\"name\": \"user-49999\""), "{text}");
    assert!(text.contains(" 213/213 "), "{text}");
    insta::assert_snapshot!("big_output", text);
}

// ---- snapshots of every tab ----

#[test]
fn snapshot_args_tab() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_tab(Tab::Args);
    insta::assert_snapshot!("args", screen(&mut i, 60, 10));
}

#[test]
fn snapshot_output_tab() {
    let (mut i, _) = shown(ok_record(), "search");
    insta::assert_snapshot!("output", screen(&mut i, 60, 24));
}

#[test]
fn snapshot_output_tab_with_a_filter() {
    let (mut i, _) = shown(ok_record(), "search");
    press(&mut i, KeyCode::Char('/'));
    type_text(&mut i, ".users | map({id, name})");
    wait_filter(&mut i);
    insta::assert_snapshot!("output_filtered", screen(&mut i, 60, 14));
}

#[test]
fn snapshot_error_tab_of_a_failed_node() {
    let (mut i, _) = shown(failed_record(), "search");
    i.set_tab(Tab::Error);
    let text = screen(&mut i, 60, 12);
    // The long error is wrapped, not cut.
    assert!(text.contains("peer"), "{text}");
    insta::assert_snapshot!("error_failed", text);
}

/// Issue 35, item 7: every node that ran shows its time in the header, a
/// call that took under a millisecond too; a skipped one shows none.
#[test]
fn the_header_shows_the_time_of_every_node_that_ran() {
    let fast = NodeRecord {
        status: NodeStatus::Failed,
        started_at: Some("2026-11-26T05:00:00Z".into()),
        duration_ms: 0,
        ..NodeRecord::default()
    };
    let (mut i, _) = shown(fast, "search");
    let text = screen(&mut i, 60, 6);
    assert!(text.contains("✗ failed · 0 ms"), "{text}");
    let skipped = NodeRecord {
        status: NodeStatus::Skipped,
        ..NodeRecord::default()
    };
    let (mut i, _) = shown(skipped, "enrich");
    let text = screen(&mut i, 60, 6);
    assert!(!text.contains(" ms"), "{text}");
}

#[test]
fn snapshot_error_tab_of_a_skipped_node() {
    let rec = NodeRecord {
        status: NodeStatus::Skipped,
        skip_reason: Some("when: `${search.total} | . > 0` was false".into()),
        ..NodeRecord::default()
    };
    let (mut i, _) = shown(rec, "enrich");
    i.set_tab(Tab::Error);
    insta::assert_snapshot!("error_skipped", screen(&mut i, 60, 6));
}

#[test]
fn snapshot_timing_tab() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_tab(Tab::Timing);
    insta::assert_snapshot!("timing", screen(&mut i, 60, 14));
}

#[test]
fn snapshot_iterations_tab_of_a_fan_out() {
    let (mut i, _) = shown(fanout_record(), "enrich");
    i.set_tab(Tab::Iterations);
    press(&mut i, KeyCode::Down);
    insta::assert_snapshot!("iterations", screen(&mut i, 70, 10));
}

#[test]
fn snapshot_raw_tab() {
    let (mut i, _) = shown(ok_record(), "search");
    i.set_tab(Tab::Raw);
    wait(&mut i);
    insta::assert_snapshot!("raw", screen(&mut i, 70, 16));
}

#[test]
fn snapshot_narrow_pane() {
    let (mut i, _) = shown(failed_record(), "search");
    insta::assert_snapshot!("narrow", screen(&mut i, 30, 8));
}

#[test]
fn a_filter_waits_while_the_node_has_no_output() {
    let mut i = Inspector::new();
    let n = node("enrich");
    i.set_node("enrich", Some(&n), None, None);
    i.set_filter(".total");
    assert_eq!(i.filter.state(), &FilterState::Empty);
    assert_eq!(i.filter_text(), ".total");
    assert!(i.filtered.is_none());
    // It applies again once the node has run.
    let rec = ok_record();
    i.set_node("enrich", Some(&n), Some(&rec), None);
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(2));
}

#[test]
fn a_shared_record_is_shown_without_a_copy() {
    let rec = Arc::new(ok_record());
    let n = node("search");
    let mut i = Inspector::new();
    i.set_node_shared("search", Some(&n), Some(Arc::clone(&rec)), None);
    let shown = i.output.as_ref().unwrap().value();
    assert!(std::ptr::eq(shown, rec.output.tree()));
    let generation = i.generation;
    i.set_node_shared("search", Some(&n), Some(Arc::clone(&rec)), None);
    assert_eq!(i.generation, generation);
    // The Raw tab reads the same shared exchange.
    i.set_tab(Tab::Raw);
    wait(&mut i);
    assert!(screen(&mut i, 60, 8).contains("\"jsonrpc\": \"2.0\""));
}

#[test]
fn tiny_panes_draw_every_tab_without_panicking() {
    for rec in [ok_record(), failed_record(), fanout_record()] {
        let (mut i, _) = shown(rec, "enrich");
        i.set_filter(".x | lenght");
        for tab in Tab::ALL {
            i.set_tab(tab);
            press(&mut i, KeyCode::Enter);
            for (w, h) in [(1, 1), (3, 3), (12, 4), (20, 5)] {
                let text = screen(&mut i, w, h);
                assert_eq!(text.lines().count(), h as usize);
            }
        }
    }
}

/// Issue 35, item 9: a filter typed on one node stays with that node (not
/// on every other node, nor in a saved run), and a broken filter shows its
/// error, not the last good filter's result under its text.
#[test]
fn a_filter_stays_with_its_node_and_its_context() {
    let (mut i, rec) = shown(ok_record(), "search");
    press(&mut i, KeyCode::Char('2'));
    press(&mut i, KeyCode::Char('/'));
    type_text(&mut i, ".total");
    press(&mut i, KeyCode::Enter);
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(2));
    let other = node("enrich");
    i.set_node("enrich", Some(&other), Some(&rec), None);
    assert_eq!(i.filter_text(), "", "the filter stayed on another node");
    let n = node("search");
    i.set_node("search", Some(&n), Some(&rec), None);
    assert_eq!(i.filter_text(), ".total", "the node's own filter came back");
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(2));
    // A saved run on screen has filters of its own.
    i.set_context("20261126-070000-abcd");
    i.set_node("search", Some(&n), Some(&rec), None);
    assert_eq!(
        i.filter_text(),
        "",
        "the live filter followed into a saved run"
    );
    i.set_context("");
    i.set_node("search", Some(&n), Some(&rec), None);
    assert_eq!(i.filter_text(), ".total");
}

#[test]
fn a_broken_filter_shows_its_error_not_the_last_result() {
    let (mut i, _) = shown(ok_record(), "search");
    press(&mut i, KeyCode::Char('2'));
    press(&mut i, KeyCode::Char('/'));
    type_text(&mut i, ".total");
    wait_filter(&mut i);
    assert_eq!(*i.filtered.as_ref().unwrap().value(), json!(2));
    type_text(&mut i, " | nosuchfn");
    press(&mut i, KeyCode::Enter);
    wait_filter(&mut i);
    assert!(i.filter.failed(), "{:?}", i.filter.state());
    assert!(i.output_tree_mut().is_none(), "a stale result is shown");
    let text = screen(&mut i, 100, 20);
    assert!(text.contains("nosuchfn"), "{text}");
}

#[test]
fn keys_turn_into_effects_for_the_app() {
    use super::keys::InspectorEffect;
    let (mut i, _) = shown(ok_record(), "search");
    assert_eq!(
        i.key_effect(key(KeyCode::Char('/'))),
        InspectorEffect::Taken
    );
    // The jq box has the keys: Esc closes it, the inspector keeps them.
    assert_eq!(i.key_effect(key(KeyCode::Esc)), InspectorEffect::Taken);
    assert_eq!(i.key_effect(key(KeyCode::Esc)), InspectorEffect::Leave);
    assert_eq!(i.key_effect(key(KeyCode::F(5))), InspectorEffect::Ignored);
}
