//! Completion in the editor: Tab (where there is something to complete)
//! or Ctrl-Space opens the popup with what `engine::author::complete` —
//! the function `pipewright lsp` answers with — offers at the cursor;
//! typing narrows it, Enter or Tab writes the choice as one undo step.
//! The tool lists are the ones preflight as you type keeps; a file that
//! does not load yet has them fetched for the servers it declares.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Effect, Focus, session_key};
use crate::complete::Popup;
use crate::component::{Component, Handled, Queue};
use crate::keys::Action;
use pipewright_engine::author::Knowledge;
use pipewright_engine::author::complete::{Completion, complete, tool_doc, tool_of};
use pipewright_engine::author::place;
use pipewright_engine::diag::Pos;
use pipewright_engine::json::Json;
use pipewright_engine::plan::preflight::ToolLists;
use pipewright_engine::run::trace::NodeStatus;

impl App {
    /// What the engine offers at the editor's cursor now.
    pub(crate) fn completion_here(&self) -> Option<Completion> {
        let text = self.editor.text();
        let (line, col) = self.editor.cursor();
        let none = ToolLists::new();
        let (tools, default) = match self.tools.lists() {
            Some((_, lists, default)) => (lists, default),
            None => (&none, None),
        };
        let output = |id: &str| -> Option<Json> {
            let i = self.comp.as_ref()?.index_of(id)?;
            let r = self.visuals.get(i)?.record.as_ref()?;
            (r.status == NodeStatus::Ok).then(|| r.output.clone())
        };
        let k = Knowledge {
            pipeline: self.pipeline.as_deref(),
            tools,
            default_server: default,
            output: &output,
        };
        complete(
            &text,
            Pos::new(
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(col).unwrap_or(u32::MAX),
            ),
            &k,
        )
    }

    /// What node `node`'s tool is, as its server listed it: the title and
    /// the text the inspector shows under the arguments.
    pub(crate) fn tool_doc(
        &self,
        node: &pipewright_engine::file::model::Node,
    ) -> Option<(String, String)> {
        let (_, lists, default) = self.tools.lists()?;
        let none = |_: &str| None;
        let k = Knowledge {
            pipeline: None,
            tools: lists,
            default_server: default,
            output: &none,
        };
        let tool = tool_of(&k, node.server.as_deref(), &node.tool)?;
        let server = lists
            .iter()
            .find(|(_, l)| l.iter().any(|t| std::ptr::eq(t, tool)))
            .map_or("", |(s, _)| s.as_str());
        Some((format!("ƒ {} · {server}", tool.name), tool_doc(tool)))
    }

    /// A key while the editor has the focus, before anything else sees
    /// it: the popup's keys while it is open, and the keys that open it.
    /// `None`: not a completion key.
    pub(crate) fn completion_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        if self.completion.is_some() {
            let ctx = ctx!(self);
            let mut queue = Queue::default();
            let handled = self
                .completion
                .as_mut()
                .map(|p| p.on_key(key, None, &ctx, &mut queue));
            if handled == Some(Handled::Taken) {
                return Some(self.apply(queue));
            }
            return None;
        }
        let action = self.keymap.action(&key, true);
        let tab = key.code == KeyCode::Tab && key.modifiers.is_empty();
        if action != Some(Action::Complete) && !tab {
            return None;
        }
        self.open_completion(tab)
    }

    /// The `complete` action (its key, or the palette): into the editor,
    /// and the popup at its cursor.
    pub(crate) fn complete_action(&mut self) -> Vec<Effect> {
        if self.viewing.is_some() {
            self.say("a saved run is read-only: nothing to complete", false);
            return Vec::new();
        }
        self.focus = Focus::Editor;
        self.open_completion(false).unwrap_or_default()
    }

    /// Opens the popup at the cursor. With `tab`, a place with nothing to
    /// complete gives the key back (Tab then moves the focus).
    pub(crate) fn open_completion(&mut self, tab: bool) -> Option<Vec<Effect>> {
        let mut effects = self.ask_tools_for_text();
        match self.completion_here() {
            Some(c) => self.completion = Some(Popup::new(c)),
            // The lists are on their way: the popup opens when they come.
            None if self.tools.lists().is_none() && self.tools.asked().is_some() => {
                self.tools.want_completion();
                self.say(
                    "fetching the servers' tool lists: completion opens when they come",
                    false,
                );
            }
            None if tab => return None,
            None => {
                self.say("nothing to complete here", false);
            }
        }
        effects.extend(self.follow_editor_cursor());
        Some(effects)
    }

    /// The tool lists came: a completion asked for while they were on
    /// their way opens now, if the cursor is still in the editor.
    pub(crate) fn completion_after_tools(&mut self) {
        if self.tools.take_want_completion()
            && self.focus == Focus::Editor
            && self.completion.is_none()
            && let Some(c) = self.completion_here()
        {
            self.completion = Some(Popup::new(c));
            self.messages.clear_status();
        }
    }

    /// After the editor took a key: the popup follows the text (closed
    /// when nothing is offered any more), or opens by itself after `${`
    /// and after `.` or `[` in a reference.
    pub(crate) fn refresh_completion(&mut self, key: KeyEvent) {
        let typed = match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => Some(c),
            _ => None,
        };
        if self.completion.is_none() {
            // Only these keys open it by themselves: the text is read for
            // them alone, not on every keystroke.
            if !matches!(typed, Some('{' | '.' | '[')) {
                return;
            }
            let (line, col) = self.editor.cursor();
            let text = self.editor.text();
            let before: String = text
                .lines()
                .nth(line.saturating_sub(1))
                .map(|l| l.chars().take(col.saturating_sub(1)).collect())
                .unwrap_or_default();
            let trigger = match typed {
                Some('{') => before.ends_with("${"),
                Some('.' | '[') => before
                    .rfind("${")
                    .is_some_and(|i| !before[i..].contains('}')),
                _ => false,
            };
            if !trigger {
                return;
            }
        }
        let moved_or_typed =
            typed.is_some() || matches!(key.code, KeyCode::Backspace | KeyCode::Delete);
        match self.completion_here() {
            Some(c) if moved_or_typed => match self.completion.as_mut() {
                Some(p) => p.update(c),
                None => self.completion = Some(Popup::new(c)),
            },
            _ => self.completion = None,
        }
    }

    /// Asks for the tool lists of the servers the text declares when no
    /// version of the file has loaded yet (a new file being written):
    /// completion needs them before preflight does.
    pub(crate) fn ask_tools_for_text(&mut self) -> Vec<Effect> {
        if self.tools.lists().is_some() || self.tools.asked().is_some() || self.pipeline.is_some() {
            return Vec::new();
        }
        let text = self.editor.text();
        let mut probe = String::new();
        for key in ["vars", "servers"] {
            if let Some(s) = place::section(&text, key) {
                probe.push_str(&s);
            }
        }
        probe.push_str("pipe:\n  - id: probe\n    tool: probe\n");
        let loaded = pipewright_engine::file::loader::load_native_str(&probe);
        let Some(p) = loaded.pipeline else {
            return Vec::new();
        };
        let Some(c) = p.compositions.first().cloned() else {
            return Vec::new();
        };
        let (p, c) = (Arc::new(p), Arc::new(c));
        let key = session_key(&p, &c);
        self.tools.asking(key.clone());
        let vars = self.vars(&p, &c);
        vec![Effect::FetchTools {
            key,
            pipeline: p,
            comp: c,
            vars,
        }]
    }
}
