//! How keys and clicks move through the inspector's trees and text tabs.

use crossterm::event::KeyCode;

use super::json_tree::JsonTree;

/// A click on a tree row selects it; a click on its fold mark, or on the
/// already selected row, also folds or unfolds it.
pub(super) fn tree_click(t: &mut JsonTree, dy: usize, dx: usize) -> bool {
    let Some(i) = t.row_at(dy) else {
        return false;
    };
    let mark = t.rows()[i].depth * 2;
    let toggle = i == t.selected() || (dx >= mark && dx < mark + 2);
    t.select(i);
    if toggle {
        t.toggle(i);
    }
    true
}

/// Scrolling keys of a text tab; true when the key scrolled.
pub(super) fn scroll_text(s: &mut u16, code: KeyCode) -> bool {
    match code {
        KeyCode::Up | KeyCode::Char('k') => *s = s.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => *s = s.saturating_add(1),
        KeyCode::PageUp => *s = s.saturating_sub(10),
        KeyCode::PageDown => *s = s.saturating_add(10),
        KeyCode::Home => *s = 0,
        _ => return false,
    }
    true
}

/// Tree navigation keys; true when the key did something tree-like.
pub(super) fn tree_key(t: &mut JsonTree, code: KeyCode) -> bool {
    match code {
        KeyCode::Up | KeyCode::Char('k') => t.move_by(-1),
        KeyCode::Down | KeyCode::Char('j') => t.move_by(1),
        KeyCode::PageUp => t.page_by(-1),
        KeyCode::PageDown => t.page_by(1),
        KeyCode::Home | KeyCode::Char('g') => t.home(),
        KeyCode::End | KeyCode::Char('G') => t.end(),
        KeyCode::Enter | KeyCode::Char(' ') => {
            t.toggle_selected();
        }
        KeyCode::Char('+') | KeyCode::Char('=') => t.expand_all(),
        KeyCode::Char('-') => t.collapse_all(),
        _ => return false,
    }
    true
}
