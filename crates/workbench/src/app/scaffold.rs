//! The palette's "new pipeline": the chooser over every tool the servers
//! listed (the lists preflight as you type keeps), and the buffer made the
//! scaffold `pipewright new` writes of the tools chosen, as one edit.

use super::{App, Effect, Focus};
use crate::msg::ToolOffer;
use crate::overlay::{Overlay, ScaffoldChooser};
use pipewright_engine::author::place;
use pipewright_engine::file::scaffold::{self, ToolDef};

impl App {
    /// The palette's "new pipeline": the chooser over every tool the
    /// servers listed (asked for first when they are not known yet).
    pub(crate) fn open_scaffold(&mut self) -> Vec<Effect> {
        let effects = self.ask_tools_for_text();
        let Some((_, lists, _)) = self.tools.lists() else {
            self.say(
                "new pipeline: the servers' tool lists are not here yet; try again in a moment",
                false,
            );
            return effects;
        };
        let tools: Vec<ToolOffer> = lists
            .iter()
            .flat_map(|(server, list)| {
                list.iter().map(move |t| ToolOffer {
                    server: server.clone(),
                    name: t.name.clone(),
                    description: t.description.clone(),
                })
            })
            .collect();
        self.overlay = Some(Overlay::Scaffold(ScaffoldChooser::new(tools)));
        effects
    }

    /// The buffer becomes the scaffold of the chosen tools, as one edit:
    /// the servers the text declares are kept as written.
    pub(crate) fn write_scaffold(&mut self, tools: &[ToolOffer], chosen: &[usize]) {
        let Some((_, lists, _)) = self.tools.lists() else {
            return;
        };
        let defs: Vec<ToolDef<'_>> = tools
            .iter()
            .map(|o| ToolDef {
                server: &o.server,
                name: &o.name,
                description: o.description.as_deref(),
                input_schema: lists
                    .get(&o.server)
                    .and_then(|l| l.iter().find(|t| t.name == o.name))
                    .map_or(&serde_json::Value::Null, |t| &t.input_schema),
            })
            .collect();
        let name = self
            .comp
            .as_ref()
            .map_or("main".to_owned(), |c| c.name.clone());
        let at = self.opts.settings.env.absolute(&self.opts.file);
        let mut text = scaffold::scaffold(&scaffold::Request {
            name: &name,
            servers: &[],
            tools: &defs,
            chosen,
            file: at.as_deref(),
        });
        // The file's own `servers:` block, as written, before the nodes.
        if let Some(servers) = place::section(&self.editor.text(), "servers") {
            let at = text
                .find("\nvars:")
                .or_else(|| text.find("\ncompositions:"))
                .map_or(text.len(), |i| i + 1);
            text.insert_str(at, &servers);
        }
        self.editor.set_text(&text);
        self.focus = Focus::Editor;
        let names: Vec<&str> = chosen
            .iter()
            .filter_map(|&i| tools.get(i).map(|t| t.name.as_str()))
            .collect();
        self.say(
            format!(
                "new pipeline: a node for {} written into the buffer (Ctrl-Z takes it back; Ctrl-S saves)",
                names.join(", ")
            ),
            false,
        );
    }
}
