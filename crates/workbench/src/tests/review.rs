//! The second review's workbench items (issue 48), each through the real
//! key path (`App::on_key`) and drawn with ratatui's `TestBackend`: what
//! the tmux stories (`tests/tui_e2e_review*.sh`) check on the binary, where
//! it is cheaper here.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::screens::{FAN, PIPE, app_on, key, screen};
use crate::app::Mode;

/// The selected node's id.
fn selected(app: &crate::app::App) -> Option<String> {
    let i = app.dag.selected()?;
    Some(app.comp.as_ref()?.nodes[i].id.clone())
}

/// Item 17: `g` and `G` (Home and End) select the DAG's first and last
/// node as drawn.
#[test]
fn g_and_capital_g_go_to_the_first_and_the_last_node() {
    let (_d, mut app) = app_on(FAN);
    app.on_key(key(KeyCode::Char('G')));
    assert_eq!(selected(&app).as_deref(), Some("report"));
    app.on_key(key(KeyCode::Char('g')));
    assert_eq!(selected(&app).as_deref(), Some("search"));
    app.on_key(key(KeyCode::End));
    assert_eq!(selected(&app).as_deref(), Some("report"));
    app.on_key(key(KeyCode::Home));
    assert_eq!(selected(&app).as_deref(), Some("search"));
}

/// Item 17: in EDIT the terminal's cursor is shown on the editor's, and
/// hidden elsewhere.
#[test]
fn the_terminal_cursor_follows_the_editor_in_edit_mode() {
    let (_d, mut app) = app_on(PIPE);
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    assert!(!term.backend().cursor_visible(), "hidden in the DAG");
    app.on_key(key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Edit);
    term.draw(|f| app.draw(f)).unwrap();
    assert!(term.backend().cursor_visible(), "shown in EDIT");
    let at = app
        .editor
        .cursor_on_screen()
        .expect("the cursor's line shows");
    assert_eq!(term.backend().cursor_position(), at);
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    term.draw(|f| app.draw(f)).unwrap();
    assert!(!term.backend().cursor_visible(), "hidden again in the DAG");
}

/// Item 17: `1 node`, not `1 nodes`.
#[test]
fn one_node_is_one_node() {
    let (_d, mut app) = app_on("pipe:\n  - id: only\n    tool: echo\n    args: { message: hi }\n");
    let s = screen(&mut app, 120, 30);
    assert!(s.contains("DAG pipe · 1 node "), "{s}");
}
