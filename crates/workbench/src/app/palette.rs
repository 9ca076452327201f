//! The app's side of the command palette: its list (every action, theme,
//! composition, case and node); what a chosen row does is a message
//! (`update.rs`), a theme chosen is here.

use super::App;
use crate::keys::Action;
use crate::palette::PaletteItem;
use crate::theme::Theme;

impl App {
    /// The palette's rows: every action (its key beside it), every theme,
    /// durable run (with `--on`), a new pipeline, and each composition,
    /// case and node of the file.
    pub(crate) fn palette_items(&self) -> Vec<PaletteItem> {
        let mut items: Vec<PaletteItem> = Action::ALL
            .iter()
            .filter(|a| !a.is_modal())
            .map(|a| PaletteItem::Action(*a, self.keymap.label(*a)))
            .collect();
        for (name, _) in crate::theme::BUILTIN {
            items.push(PaletteItem::Theme((*name).to_owned()));
        }
        if let Some(r) = &self.opts.restate {
            items.push(PaletteItem::Durable(r.on.clone()));
        }
        if self.viewing.is_none() {
            items.push(PaletteItem::Scaffold);
        }
        for dir in self.recording_folders() {
            items.push(PaletteItem::Follow(dir));
        }
        if let Some(p) = &self.pipeline {
            for c in &p.compositions {
                items.push(PaletteItem::Composition(c.name.clone()));
            }
        }
        if let Some(c) = &self.comp {
            for k in &c.cases {
                items.push(PaletteItem::Case(k.name.clone()));
            }
            for n in &c.nodes {
                items.push(PaletteItem::Node(n.id.clone()));
            }
        }
        items
    }

    /// Where recordings are looked for: `recordings` where the workbench
    /// was started (`pipewright record`'s `--out` by default), beside the
    /// file, and in the data directory (`record wrap`'s); the first even
    /// when it does not exist yet (following waits for it).
    fn recording_folders(&self) -> Vec<std::path::PathBuf> {
        let name = "recordings";
        let here = self
            .opts
            .settings
            .env
            .working_dir()
            .map_or_else(|| std::path::PathBuf::from(name), |d| d.join(name));
        let mut out = vec![here];
        let beside = self.opts.file.parent().map(|d| d.join(name));
        let data = self.dirs.data().map(|d| d.join(name));
        for dir in beside.into_iter().chain(data) {
            let same = out.iter().any(|o| {
                o == &dir
                    || (o.canonicalize().ok()).is_some_and(|c| dir.canonicalize().ok() == Some(c))
            });
            if dir.is_dir() && !same {
                out.push(dir);
            }
        }
        out
    }

    /// Uses the colour theme `name` (NO_COLOR stays in force whatever the
    /// theme).
    pub(crate) fn use_theme(&mut self, name: &str) {
        match Theme::load(name, self.dirs.config()) {
            Ok(t) => {
                self.theme = if self.theme.mono { t.monochrome() } else { t };
                self.say(format!("theme {name}"), false);
            }
            Err(e) => self.say(e.to_string(), true),
        }
    }
}
