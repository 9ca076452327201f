//! The workbench's input, routed to the component that has the keys: a
//! server's question first, then the overlay, then (in the editor) the
//! completion popup, then the keymap's actions, then the focused pane.
//! The mouse goes to what is under it; pasted text to the editor or the
//! question. What the component asks comes back as messages, applied by
//! `update.rs`.

use super::*;
use crate::component::Ctx;
use crate::keys::Key;

impl App {
    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        // The status line says what the last action did; the next one
        // clears it, so it never shows something no longer true.
        self.messages.clear_status();
        if self.asks.is_empty() {
            self.asks.unhide();
        }
        // A server's question takes the keys while it is shown (but for
        // the hide key and the quit chord, which leave it).
        if self.asks.shown() {
            let model = self.sampling_model();
            let ctx = Ctx {
                provider: model.as_deref(),
                ..ctx!(self)
            };
            let mut queue = Queue::default();
            self.asks.on_key(key, None, &ctx, &mut queue);
            return self.apply(queue);
        }
        if self.overlay.is_some() {
            if self.overlay_find_key(key) {
                return Vec::new();
            }
            let action = self.keymap.action(&key, false);
            let ctx = ctx!(self);
            let mut queue = Queue::default();
            if let Some(ov) = self.overlay.as_mut() {
                ov.on_key(key, action, &ctx, &mut queue);
            }
            let effects = self.apply(queue);
            if self.overlay.is_none() {
                self.overlay_find = None;
            }
            return effects;
        }
        // A saved run on screen is read-only: the editor's place shows its
        // file, and keys never reach the buffer hidden behind it.
        if self.viewing.is_some() && self.focus == Focus::Editor {
            self.focus = Focus::Dag;
        }
        let in_editor = self.focus == Focus::Editor;
        if in_editor
            && !self.editor.recovery_pending()
            && let Some(effects) = self.completion_key(key)
        {
            return effects;
        }
        let action = self.keymap.action(&key, in_editor);
        // No plan yet (a new or broken file): a letter in the DAG is not
        // a run command; it is most likely text meant for the editor.
        if self.focus == Focus::Dag
            && self.comp.is_none()
            && matches!(key.code, KeyCode::Char(_))
            && !Key::from(key).is_global()
            && !matches!(
                action,
                Some(
                    Action::Help
                        | Action::Palette
                        | Action::Quit
                        | Action::Messages
                        | Action::History
                )
            )
        {
            let _ = self.dag_key(key);
            return Vec::new();
        }
        // The pane gets the key first unless it is a global binding; the
        // inspector's filter box takes letters while it is open. A key the
        // pane took is done: it is not handled a second time below.
        if let Some(a) = action {
            self.completion = None;
            if in_editor || !self.pane_wants(key) {
                return self.act(a);
            }
            return Vec::new();
        }
        match self.focus {
            Focus::Editor => {
                let ctx = ctx!(self);
                let mut queue = Queue::default();
                self.editor.on_key(key, None, &ctx, &mut queue);
                self.apply(queue)
            }
            Focus::Inspector => {
                let ctx = ctx!(self);
                let mut queue = Queue::default();
                let handled = self.inspector.on_key(key, None, &ctx, &mut queue);
                let effects = self.apply(queue);
                if handled == Handled::Ignored {
                    self.unbound(key);
                }
                effects
            }
            Focus::Dag => match self.dag_key(key) {
                Some(effects) => effects,
                None => {
                    self.unbound(key);
                    Vec::new()
                }
            },
        }
    }

    /// Whether the focused pane takes this key before the command keys
    /// (the inspector's filter box does while it is open).
    fn pane_wants(&mut self, key: KeyEvent) -> bool {
        if self.focus != Focus::Inspector || Key::from(key).is_global() {
            return false;
        }
        self.inspector.handle_key(key)
    }

    /// A key for the DAG's place: Esc leaves a saved run on screen, the
    /// timeline (when shown) takes its keys, the DAG the rest. `None` when
    /// the key does nothing there.
    fn dag_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        if key.code == KeyCode::Esc && self.viewing.is_some() {
            return Some(self.update(Msg::LeaveViewing));
        }
        let ctx = ctx!(self);
        let mut queue = Queue::default();
        if self.timeline.shown()
            && self.timeline.on_key(key, None, &ctx, &mut queue) == Handled::Taken
        {
            return Some(self.apply(queue));
        }
        match self.dag.on_key(key, None, &ctx, &mut queue) {
            Handled::Taken => Some(self.apply(queue)),
            Handled::Ignored => None,
        }
    }

    /// A mouse event, routed to the pane under it.
    pub fn on_mouse(&mut self, ev: MouseEvent) -> Vec<Effect> {
        if self.asks.shown() {
            return Vec::new();
        }
        if self.overlay.is_some() {
            return self.overlay_mouse(ev);
        }
        let at = Position::new(ev.column, ev.row);
        let a = self.areas;
        let mut queue = Queue::default();
        if a.dag.contains(at) {
            if let MouseEventKind::Down(MouseButton::Left) = ev.kind {
                self.focus = Focus::Dag;
            }
            let ctx = ctx!(self);
            if self.timeline.shown() {
                self.timeline.on_mouse(ev, a.dag, &ctx, &mut queue);
            } else {
                self.dag.on_mouse(ev, a.dag, &ctx, &mut queue);
            }
        } else if a.editor.contains(at) && self.viewing.is_some() {
            // The saved run's file, read-only.
        } else if a.editor.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Editor;
            }
            let ctx = ctx!(self);
            self.editor.on_mouse(ev, a.editor, &ctx, &mut queue);
        } else if a.inspector.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Inspector;
            }
            let ctx = ctx!(self);
            self.inspector.on_mouse(ev, a.inspector, &ctx, &mut queue);
        }
        self.apply(queue)
    }

    /// The mouse over an overlay: the wheel scrolls it (or moves the
    /// choice of a list), a click on a palette row does that row, a click
    /// outside closes it.
    fn overlay_mouse(&mut self, ev: MouseEvent) -> Vec<Effect> {
        let at = Position::new(ev.column, ev.row);
        let r = self.areas.overlay;
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        match ev.kind {
            MouseEventKind::ScrollDown => self.overlay_wheel(true),
            MouseEventKind::ScrollUp => self.overlay_wheel(false),
            MouseEventKind::Down(MouseButton::Left) if !r.contains(at) => {
                // Outside: close it, unless it asks a question.
                if !self.overlay.as_ref().is_some_and(Overlay::asks) {
                    self.overlay = None;
                    self.overlay_under = None;
                }
                Vec::new()
            }
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(Overlay::Palette(p)) = &mut self.overlay else {
                    return Vec::new();
                };
                // The frame, the input line and a blank line, then rows.
                let room = r.height.saturating_sub(4) as usize;
                let Some(row) = ev.row.checked_sub(r.y + 3) else {
                    return Vec::new();
                };
                if (row as usize) < room && p.select_shown(p.first_drawn(room) + row as usize) {
                    return self.on_key(key(KeyCode::Enter));
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The wheel over an overlay: a list's choice moves a row, a text
    /// scrolls three lines.
    fn overlay_wheel(&mut self, down: bool) -> Vec<Effect> {
        let list = self.overlay.as_ref().is_some_and(Overlay::is_list);
        let code = match (list, down) {
            (true, true) => KeyCode::Down,
            (true, false) => KeyCode::Up,
            (false, true) => KeyCode::Char('j'),
            (false, false) => KeyCode::Char('k'),
        };
        let times = if list { 1 } else { 3 };
        let mut effects = Vec::new();
        for _ in 0..times {
            if self.overlay.is_none() {
                break;
            }
            effects.extend(self.on_key(KeyEvent::new(code, KeyModifiers::NONE)));
        }
        effects
    }

    /// Text pasted into the terminal goes into the editor as one edit (or
    /// into the question's focused input).
    pub fn on_paste(&mut self, text: &str) {
        // A paste is input like a key: the last action's message goes
        // (`saved x.yml` next to `unsaved` was no longer true).
        self.messages.clear_status();
        let mut queue = Queue::default();
        if self.asks.shown() {
            self.asks.on_paste(text, &mut queue);
            return;
        }
        if self.focus != Focus::Editor || self.overlay.is_some() || self.viewing.is_some() {
            return;
        }
        self.editor.on_paste(text, &mut queue);
        // A paste moves the cursor within what it pasted; the composition
        // follows on the next key.
        let _ = self.apply(queue);
    }
}
