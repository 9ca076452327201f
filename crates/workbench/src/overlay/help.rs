//! The help (`?`, F1): a table of every key generated from the keymap,
//! the keys that move around, and what the glyphs mean; scrolled, and
//! searched with `/`.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::{Action, Keymap};
use crate::msg::Msg;
use crate::theme::Theme;
use crate::window::{centred, scrolled, scrolled_lines, wrap_words};

/// The help window: how far it is scrolled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Help {
    scroll: u16,
}

impl Help {
    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 80, 90)
    }

    /// The first line shown.
    pub(crate) fn scroll_mut(&mut self) -> &mut u16 {
        &mut self.scroll
    }
}

impl Component for Help {
    /// Esc, `q`, Enter or the help key close it; the others scroll.
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        if closes(key, action) {
            queue.push(Msg::CloseOverlay);
        } else {
            self.scroll = scrolled(self.scroll, key);
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        let lines = help_lines(ctx.keymap, ctx.theme, r.width);
        self.scroll = scrolled_lines(lines, "help".into(), ctx.theme, r, self.scroll, false, buf);
    }
}

/// Whether a key closes a window that only scrolls (the help, a text, the
/// plan): Esc, `q`, Enter, or the help key.
pub(crate) fn closes(key: KeyEvent, action: Option<Action>) -> bool {
    matches!(key.code, KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter)
        || action == Some(Action::Help)
}

/// The help: a table generated from the keymap, its columns as wide as
/// their longest entry, descriptions wrapped under their own column.
pub(crate) fn help_lines(keymap: &Keymap, t: &Theme, width: u16) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthStr;
    let keys_of = |a: Action| -> String {
        keymap
            .keys(a)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let extra: &[(&str, &str)] = &[
        (
            "← ↓ ↑ → h j k l",
            "DAG: move (left: parents, right: children)",
        ),
        ("g G  Home End", "DAG: the first node, the last node"),
        ("Enter", "DAG: to the inspector; a row: open or fold it"),
        ("i", "DAG: to the editor (also on an empty or broken file)"),
        ("Esc", "back: editor, inspector and overlays to the DAG"),
        ("1-7  [ ]", "inspector: the tabs"),
        ("/", "inspector Output: filter with jq (Enter keeps it)"),
        (
            "h l 0",
            "inspector Raw, lines cut: sideways, back to the start",
        ),
        (
            "E R F5 /",
            "History: export the run, restore its file, restore and run it, search",
        ),
        (
            "Ctrl-Z Ctrl-Y",
            "editor: undo, redo (a pin or reload is one step)",
        ),
        ("Ctrl-F  Ctrl-G", "editor: find, go to line"),
        (
            "Ctrl-U Ctrl-K",
            "a question's text field: delete to the line's start, to its end",
        ),
        ("Ctrl-W", "a question's text field: delete the word before"),
        (
            "Ctrl-A Ctrl-E",
            "a question's text field: to the line's start, to its end",
        ),
        (
            "mouse",
            "click selects or focuses; the wheel scrolls; overlays too",
        ),
    ];
    let global: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| !a.is_modal())
        .collect();
    let modal: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| a.is_modal())
        .collect();
    let key_w = global
        .iter()
        .chain(&modal)
        .map(|a| keys_of(*a).width())
        .chain(extra.iter().map(|(k, _)| k.width()))
        .max()
        .unwrap_or(8)
        + 2;
    let name_w = Action::ALL
        .iter()
        .map(|a| a.name().len())
        .max()
        .unwrap_or(8)
        + 2;
    let inner = width.saturating_sub(2) as usize;
    // On a narrow screen the description goes under the key.
    let narrow = inner < key_w + name_w + 24;
    let desc_at = if narrow { 4 } else { key_w + name_w };
    let desc_w = inner.saturating_sub(desc_at).max(16);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    // The introduction wraps to the window, as the table does: a narrow
    // screen cuts none of it.
    let mut lines = Vec::new();
    for (text, style) in [
        (
            "Keys, from the keymap (rebind them in config.yaml under keys:)",
            bold,
        ),
        (
            "Plain keys act in the DAG and the inspector; in the editor they are text.",
            Style::default().fg(t.dim),
        ),
    ] {
        for part in wrap_words(text, inner) {
            lines.push(Line::from(Span::styled(part, style)));
        }
    }
    lines.push(Line::default());
    let row = |lines: &mut Vec<Line<'static>>, keys: String, name: &str, what: &str| {
        let parts = wrap_words(what, desc_w);
        let mut first = vec![Span::styled(
            format!("{keys:<key_w$}"),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        )];
        if narrow {
            first.push(Span::styled(name.to_owned(), Style::default().fg(t.fg)));
            lines.push(Line::from(first));
            for p in parts {
                lines.push(Line::from(Span::styled(
                    format!("{:desc_at$}{p}", ""),
                    Style::default().fg(t.dim),
                )));
            }
            return;
        }
        first.push(Span::styled(
            format!("{name:<name_w$}"),
            Style::default().fg(t.fg),
        ));
        let mut parts = parts.into_iter();
        first.push(Span::styled(
            parts.next().unwrap_or_default(),
            Style::default().fg(t.dim),
        ));
        lines.push(Line::from(first));
        for p in parts {
            lines.push(Line::from(Span::styled(
                format!("{:desc_at$}{p}", ""),
                Style::default().fg(t.dim),
            )));
        }
    };
    for a in &global {
        row(&mut lines, keys_of(*a), a.name(), a.describe());
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Moving around", bold)));
    for (k, what) in extra {
        row(&mut lines, (*k).to_owned(), "", what);
    }
    lines.push(Line::default());
    for part in wrap_words(
        "When a server asks (the modal has the keys; Ctrl-Q still quits):",
        inner,
    ) {
        lines.push(Line::from(Span::styled(part, bold)));
    }
    for a in &modal {
        row(&mut lines, keys_of(*a), a.name(), a.describe());
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("What the glyphs mean", bold)));
    let glyph_w = crate::theme::GLYPHS
        .iter()
        .map(|(g, _)| g.width())
        .max()
        .unwrap_or(1)
        + 2;
    for (glyph, what) in crate::theme::GLYPHS {
        let pad = glyph_w.saturating_sub(glyph.width());
        for (i, part) in wrap_words(what, inner.saturating_sub(glyph_w).max(16))
            .into_iter()
            .enumerate()
        {
            let head = if i == 0 {
                format!("{glyph}{:pad$}", "")
            } else {
                format!("{:glyph_w$}", "")
            };
            lines.push(Line::from(vec![
                Span::styled(
                    head,
                    Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
                ),
                Span::styled(part, Style::default().fg(t.dim)),
            ]));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn scrolling_stays_in_range() {
        let (theme, keymap) = (Theme::dark(), Keymap::default());
        let ctx = Ctx::plain(&theme, &keymap);
        let mut queue = Queue::default();
        let mut help = Help::default();
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        help.on_key(key(KeyCode::Up), None, &ctx, &mut queue);
        assert_eq!(help.scroll, 0);
        help.on_key(key(KeyCode::PageDown), None, &ctx, &mut queue);
        assert_eq!(help.scroll, 10);
        assert!(queue.pop().is_none(), "scrolling does not close it");
    }
}
