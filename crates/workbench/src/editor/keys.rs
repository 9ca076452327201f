//! What keys and the mouse do in the editor pane: typing and moving through
//! ratatui-textarea, the editor's own shortcuts, the search and go-to
//! prompts, and the answer to the ask bar; and the editor as a component
//! (what a key, a click or a paste asks of the app).

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui_textarea::{CursorMove, Input, Key};

use super::search::Needle;
use super::undo::Kind;
use super::{Editor, EditorEvent, Prompt, ScreenRow};
use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::state::Focus;

/// What a key in the editor does besides editing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditorEffect {
    /// Esc with nothing of the editor's to close: the DAG takes the keys.
    Leave,
    /// The key went to the buffer or a prompt: the app follows the cursor
    /// (and, unless it was Esc, the completion popup).
    Typed,
}

/// Lines the mouse wheel scrolls per notch.
const WHEEL_LINES: usize = 3;

impl Editor {
    /// What a key does while the editor has the focus.
    pub(crate) fn key_effect(&mut self, key: KeyEvent) -> EditorEffect {
        if !self.handle_key(key) && key.code == KeyCode::Esc {
            return EditorEffect::Leave;
        }
        EditorEffect::Typed
    }

    /// Handles a key for the pane. Returns whether the editor used it; keys
    /// it does not use (Tab, Ctrl-letters it has no binding for, F-keys) are
    /// left to the app. Typing, Ctrl-Z/Ctrl-Y undo/redo, Ctrl-F search
    /// (Enter/Shift-Enter or, after Enter, n/N step; Esc closes), Ctrl-S
    /// save, Ctrl-G go to line, Ctrl-C/X/V copy/cut/paste, Ctrl-A select all.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        // A recovery copy on offer is answered in the app's dialog; edits
        // wait for it.
        if self.offer.is_some() {
            return false;
        }
        if self.external.is_some() {
            return self.answer_external(key);
        }
        if self.prompt.is_some() {
            return self.prompt_key(key);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        self.view.follow = true;
        // Only typing and deleting grow the undo step being typed.
        let typing = match key.code {
            KeyCode::Char(_) => !ctrl && !alt,
            KeyCode::Backspace | KeyCode::Delete => true,
            _ => false,
        };
        if !typing {
            self.steps.close();
        }
        match key.code {
            KeyCode::Char(c) if ctrl => match c.to_ascii_lowercase() {
                's' => {
                    if let Err(e) = self.save() {
                        self.events.push(EditorEvent::Message(format!(
                            "cannot save {}: {e}",
                            self.path.display()
                        )));
                    }
                    true
                }
                'z' => {
                    self.history(shift);
                    true
                }
                'y' => {
                    self.history(true);
                    true
                }
                'f' => {
                    self.prompt = Some(Prompt::Search {
                        query: String::new(),
                        editing: true,
                    });
                    true
                }
                'g' => {
                    self.prompt = Some(Prompt::Goto {
                        input: String::new(),
                    });
                    true
                }
                'c' => {
                    self.area.copy();
                    true
                }
                'x' => {
                    self.edit(Kind::Other, |a| a.cut());
                    true
                }
                'v' => {
                    self.edit(Kind::Other, |a| a.paste());
                    true
                }
                'a' => {
                    self.area.select_all();
                    true
                }
                _ => false,
            },
            KeyCode::Char(c) if !alt => {
                self.edit(Kind::Type(c), |a| {
                    a.insert_char(c);
                    true
                });
                true
            }
            KeyCode::Tab | KeyCode::BackTab => false,
            KeyCode::Enter => {
                self.newline();
                true
            }
            KeyCode::Backspace => {
                if alt || ctrl {
                    self.edit(Kind::Delete, |a| a.delete_word());
                } else {
                    self.edit(Kind::Delete, |a| a.delete_char());
                }
                true
            }
            KeyCode::Delete => {
                self.edit(Kind::Delete, |a| a.delete_next_char());
                true
            }
            KeyCode::Esc => {
                let selecting = self.area.is_selecting();
                self.area.cancel_selection();
                selecting
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                let page = self.view.rows.len().max(2) - 1;
                let (row, col) = self.pos();
                let target = if key.code == KeyCode::PageUp {
                    row.saturating_sub(page)
                } else {
                    row + page
                };
                self.move_with(shift, |e| e.jump(target, col));
                true
            }
            KeyCode::Up | KeyCode::Down | KeyCode::Left | KeyCode::Right => {
                let m = match (key.code, ctrl) {
                    (KeyCode::Up, false) => CursorMove::Up,
                    (KeyCode::Down, false) => CursorMove::Down,
                    (KeyCode::Left, false) => CursorMove::Back,
                    (KeyCode::Right, false) => CursorMove::Forward,
                    (KeyCode::Up, true) => CursorMove::ParagraphBack,
                    (KeyCode::Down, true) => CursorMove::ParagraphForward,
                    (KeyCode::Left, true) => CursorMove::WordBack,
                    _ => CursorMove::WordForward,
                };
                self.move_with(shift, |e| e.area.move_cursor(m));
                true
            }
            KeyCode::Home | KeyCode::End => {
                let m = match (key.code, ctrl) {
                    (KeyCode::Home, false) => CursorMove::Head,
                    (KeyCode::End, false) => CursorMove::End,
                    (KeyCode::Home, true) => CursorMove::Top,
                    _ => CursorMove::Bottom,
                };
                self.move_with(shift, |e| e.area.move_cursor(m));
                true
            }
            _ => {
                // Anything else textarea knows without shortcuts (none today).
                let input = Input::from(key);
                if input.key == Key::Null || ctrl || alt {
                    return false;
                }
                self.edit(Kind::Other, |a| a.input_without_shortcuts(input))
            }
        }
    }

    /// Moves the cursor, extending the selection when `shift` is held and
    /// dropping it otherwise.
    fn move_with(&mut self, shift: bool, f: impl FnOnce(&mut Editor)) {
        if shift {
            if !self.area.is_selecting() {
                self.area.start_selection();
            }
        } else {
            self.area.cancel_selection();
        }
        f(self);
    }

    /// Enter: a new line indented like this one, one step deeper after a
    /// `key:` that opens a block and inside a `- ` list item.
    fn newline(&mut self) {
        let (row, col) = self.pos();
        let line = &self.area.lines()[row];
        let before: String = line.chars().take(col).collect();
        let indent: String = before.chars().take_while(|c| *c == ' ').collect();
        let trimmed = before.trim();
        let mut extra = 0;
        if trimmed.starts_with("- ") {
            extra += 2;
        }
        if trimmed.ends_with(':') {
            extra += 2;
        }
        let text = format!("\n{indent}{}", " ".repeat(extra));
        self.edit(Kind::Other, |a| a.insert_str(&text));
    }

    fn answer_external(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Char('r') | KeyCode::Char('R') => {
                if let Some(text) = self.external.take() {
                    self.take_disk_text(text);
                }
                true
            }
            KeyCode::Char('k') | KeyCode::Char('K') => {
                if let Some(text) = self.external.take() {
                    // The buffer stays as typed and now differs from this text.
                    self.saved_text = text;
                    self.recovery_due = Some(std::time::Instant::now());
                }
                true
            }
            _ => false,
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) -> bool {
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some(prompt) = self.prompt.as_mut() else {
            return false;
        };
        match prompt {
            Prompt::Goto { input } => match key.code {
                KeyCode::Esc => self.prompt = None,
                KeyCode::Backspace => {
                    input.pop();
                }
                KeyCode::Char(c) if (c.is_ascii_digit() || c == ':') && !ctrl => input.push(c),
                KeyCode::Enter => {
                    let mut parts = input.split(':');
                    let line = parts.next().and_then(|s| s.parse::<usize>().ok());
                    let col = parts.next().and_then(|s| s.parse::<usize>().ok());
                    self.prompt = None;
                    if let Some(line) = line {
                        self.goto(line, col.unwrap_or(1));
                    }
                }
                _ => {}
            },
            Prompt::Search { query, editing } => match key.code {
                KeyCode::Esc => self.prompt = None,
                KeyCode::Enter => {
                    *editing = false;
                    self.search_step(shift);
                }
                KeyCode::Char('n') if !*editing && !ctrl => self.search_step(false),
                KeyCode::Char('N') if !*editing && !ctrl => self.search_step(true),
                KeyCode::Char('f') if ctrl => *editing = true,
                KeyCode::Backspace => {
                    *editing = true;
                    query.pop();
                    self.search_incremental();
                }
                KeyCode::Char(c) if !ctrl => {
                    *editing = true;
                    query.push(c);
                    self.search_incremental();
                }
                _ => {}
            },
        }
        true
    }

    /// The query of the open search box, if any.
    pub(super) fn search_needle(&self) -> Option<Needle> {
        match &self.prompt {
            Some(Prompt::Search { query, .. }) => Needle::new(query),
            _ => None,
        }
    }

    /// While typing a query: stay on a match at the cursor, else go to the next.
    fn search_incremental(&mut self) {
        let Some(needle) = self.search_needle() else {
            return;
        };
        let (row, col) = self.pos();
        let from = (row, col.saturating_sub(1));
        let hit = if col == 0 {
            needle
                .find_all(&self.area.lines()[row])
                .first()
                .filter(|c| **c == 0)
                .map(|_| (row, 0))
                .or_else(|| needle.next(self.area.lines(), (row, 0), false))
        } else {
            needle.next(self.area.lines(), from, false)
        };
        self.select_match(hit);
    }

    fn search_step(&mut self, back: bool) {
        let Some(needle) = self.search_needle() else {
            return;
        };
        let hit = needle.next(self.area.lines(), self.pos(), back);
        self.select_match(hit);
    }

    fn select_match(&mut self, hit: Option<(usize, usize)>) {
        match hit {
            Some((r, c)) => {
                self.area.cancel_selection();
                self.jump(r, c);
                self.view.follow = true;
            }
            None => self.events.push(EditorEvent::Message(format!(
                "no match for {:?}",
                needle_text(&self.prompt)
            ))),
        }
    }

    /// `(current, total)` matches of the open search, for the search box.
    pub(super) fn search_status(&self) -> Option<(Option<usize>, usize)> {
        let needle = self.search_needle()?;
        let (total, index) = needle.count(self.area.lines(), self.pos());
        Some((index, total))
    }

    /// Handles a mouse event inside `area` (the pane as last rendered):
    /// click moves the cursor, drag selects, the wheel scrolls. Returns
    /// whether the pane used it.
    pub fn handle_mouse(&mut self, ev: MouseEvent, area: Rect) -> bool {
        if !area.contains(Position::new(ev.column, ev.row)) {
            return false;
        }
        match ev.kind {
            MouseEventKind::ScrollDown => {
                let last = self.area.lines().len().saturating_sub(1);
                self.view.top = (self.view.top + WHEEL_LINES).min(last);
                self.view.follow = false;
                true
            }
            MouseEventKind::ScrollUp => {
                self.view.top = self.view.top.saturating_sub(WHEEL_LINES);
                self.view.follow = false;
                true
            }
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(pos) = self.position_at(ev.column, ev.row) else {
                    return false;
                };
                if self.modal() {
                    return true;
                }
                self.area.cancel_selection();
                self.steps.close();
                self.jump(pos.0, pos.1);
                self.drag_from = Some(pos);
                self.view.follow = true;
                true
            }
            MouseEventKind::Drag(MouseButton::Left) => {
                let (Some(from), Some(pos)) = (self.drag_from, self.position_at(ev.column, ev.row))
                else {
                    return false;
                };
                if !self.area.is_selecting() {
                    self.jump(from.0, from.1);
                    self.area.start_selection();
                }
                self.jump(pos.0, pos.1);
                true
            }
            MouseEventKind::Up(MouseButton::Left) => {
                self.drag_from = None;
                true
            }
            _ => false,
        }
    }

    /// The (row, char column) drawn at a screen cell of the last frame.
    fn position_at(&self, x: u16, y: u16) -> Option<(usize, usize)> {
        let text = self.view.text;
        if y < text.y || y >= text.y + text.height {
            return None;
        }
        let row = match self.view.rows.get(usize::from(y - text.y)) {
            Some(ScreenRow::Line(r) | ScreenRow::Diagnostic(r, _)) => *r,
            None => self.area.lines().len().saturating_sub(1),
        };
        let display = usize::from(x.saturating_sub(text.x)) + self.view.left;
        let line = &self.area.lines()[row];
        Some((row, super::view::char_at_display_col(line, display)))
    }
}

fn needle_text(prompt: &Option<Prompt>) -> String {
    match prompt {
        Some(Prompt::Search { query, .. }) => query.clone(),
        _ => String::new(),
    }
}

impl Component for Editor {
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key_effect(key) {
            EditorEffect::Leave => queue.push(Msg::Focus(Focus::Dag)),
            EditorEffect::Typed => queue.push(Msg::Edited { key }),
        }
        Handled::Taken
    }

    /// A click moves the cursor (the node under it is selected), a drag
    /// selects, the wheel scrolls.
    fn on_mouse(
        &mut self,
        ev: MouseEvent,
        area: Rect,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        self.handle_mouse(ev, area);
        queue.push(Msg::CursorMoved);
        Handled::Taken
    }

    /// Pasted text goes in as one edit; the cursor moves within it.
    fn on_paste(&mut self, text: &str, queue: &mut Queue) -> Handled {
        self.paste_text(text);
        queue.push(Msg::CursorMoved);
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        self.render(area, buf, ctx.theme, ctx.focused);
    }
}
