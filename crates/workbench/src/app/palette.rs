//! The app's side of the command palette: its list (every action, theme,
//! composition, case and node) and what choosing a row does.

use crossterm::event::KeyEvent;

use super::{App, Effect};
use crate::keys::Action;
use crate::overlay::Overlay;
use crate::theme::Theme;

use crate::palette::{Palette, PaletteEffect, PaletteItem};

impl App {
    /// A key in the open palette: the list reacts, a chosen row runs.
    pub(crate) fn palette_key(&mut self, mut p: Palette, key: KeyEvent) -> Vec<Effect> {
        match p.on_key(key) {
            PaletteEffect::Close => Vec::new(),
            PaletteEffect::Run(item) => self.run_palette_item(item),
            PaletteEffect::Stay => {
                self.overlay = Some(Overlay::Palette(p));
                Vec::new()
            }
        }
    }

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

    pub(crate) fn run_palette_item(&mut self, item: PaletteItem) -> Vec<Effect> {
        match item {
            PaletteItem::Action(a, _) => self.act(a),
            PaletteItem::Theme(name) => {
                match Theme::load(&name, self.dirs.config.as_deref()) {
                    Ok(t) => {
                        // NO_COLOR stays in force whatever the theme.
                        self.theme = if self.theme.mono { t.monochrome() } else { t };
                        self.say(format!("theme {name}"), false);
                    }
                    Err(e) => self.say(e.to_string(), true),
                }
                Vec::new()
            }
            PaletteItem::Composition(name) => {
                let mut effects = self.fresh_session();
                effects.extend(self.choose_composition(&name));
                effects
            }
            PaletteItem::Case(name) => self.choose_case(&name),
            PaletteItem::Durable(_) => self.start_durable(),
            PaletteItem::Scaffold => self.open_scaffold(),
            PaletteItem::Node(id) => {
                let i = self.comp.as_ref().and_then(|c| c.index_of(&id));
                self.select(i, true);
                Vec::new()
            }
        }
    }
}
