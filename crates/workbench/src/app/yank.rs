//! `y` and `Y`: what the focused pane has selected goes to the clipboard
//! (an [`Effect::Copy`] the loop writes as OSC 52), and the status line
//! says what was copied and how many bytes.

use super::{App, Effect, Focus};
use crate::copy::tools_call_line;
use crate::keys::Action;

impl App {
    /// `y` (`path` false) or `Y`: a tree value or its path in the
    /// inspector's Args and Output tabs, else the selected node's args as
    /// JSON or a `pipewright tools call` line.
    pub(crate) fn yank(&mut self, path: bool) -> Vec<Effect> {
        if self.focus == Focus::Inspector
            && let Some((text, what)) = self.inspector.yank(path)
        {
            return self.copy(text, &what);
        }
        let Some(id) = self.selected_node_id() else {
            return self.no_selection();
        };
        let Some((node, rec)) = self.comp.as_ref().and_then(|c| {
            let i = c.index_of(&id)?;
            let rec = self.visuals.get(i)?.record.clone()?;
            Some((c.nodes.get(i)?.clone(), rec))
        }) else {
            let run = self.keymap.label(Action::Run);
            self.say(
                format!("`{id}` has not run: no resolved args to copy ({run} runs)"),
                true,
            );
            return Vec::new();
        };
        if !path {
            let text = serde_json::to_string_pretty(rec.args.tree()).unwrap_or_default();
            return self.copy(text, &format!("{id}'s args"));
        }
        let tool = if rec.tool.is_empty() {
            node.tool.as_str()
        } else {
            rec.tool.as_str()
        };
        let server = rec.server.as_deref().or(node.server.as_deref());
        let file = self.opts.file.display().to_string();
        let line = tools_call_line(tool, &file, server, &rec.args.text());
        self.copy(line, &format!("a `tools call` line for {id}"))
    }

    /// Copies `text`, saying so.
    pub(crate) fn copy(&mut self, text: String, what: &str) -> Vec<Effect> {
        self.say(format!("copied {what} ({} bytes)", text.len()), false);
        vec![Effect::Copy(text)]
    }
}
