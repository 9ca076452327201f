//! Windows drawn over the panes. [`Overlay`] lists them: the help, the
//! command palette, the dry-run plan, a text (a pinned mock, a diff, the
//! Results view), the two questions asked before acting, a choice among a
//! few answers, the recovery dialog, History, the Messages pane and the
//! new-pipeline chooser. Each is a component of its
//! own module; a new overlay is a module and a variant here.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::component::{Component, Ctx, Handled, Queue};
use crate::history::HistoryView;
use crate::keys::{Action, Keymap};
use crate::palette::Palette;

mod choice;
mod confirm;
mod doctor;
mod help;
mod messages;
mod plan;
mod recover;
mod scaffold;
mod text;

pub(crate) use choice::Choice;
pub(crate) use confirm::{ConfirmDestructive, ConfirmQuit};
pub(crate) use doctor::DoctorView;
pub(crate) use help::Help;
pub(crate) use messages::MessagesPane;
pub(crate) use plan::PlanView;
pub(crate) use recover::RecoverDialog;
pub(crate) use scaffold::ScaffoldChooser;
pub(crate) use text::TextWindow;

/// An open overlay.
#[derive(Debug, Clone)]
pub(crate) enum Overlay {
    /// Every key, from the keymap (`?`).
    Help(Help),
    /// Every action, theme, composition, case and node (`:`).
    Palette(Palette),
    /// The dry run or the cost estimate (`d`, `e`).
    Plan(Box<PlanView>),
    /// A text: a pinned mock to paste, a diff, the Results view.
    Text(TextWindow),
    /// `q` with unsaved edits or a run in progress.
    ConfirmQuit(ConfirmQuit),
    /// Preflight found destructive calls: run them?
    ConfirmDestructive(ConfirmDestructive),
    /// A few answers, a key each (History's export format).
    Choice(Box<Choice>),
    /// Unsaved text a workbench that ended left behind: recover it?
    Recover(RecoverDialog),
    /// The saved runs of this file.
    History(HistoryView),
    /// Every message of the session in full, the file's diagnostics, and
    /// the last server error with its stderr (`m`).
    Messages(MessagesPane),
    /// The palette's "new pipeline": tools to scaffold a node each.
    Scaffold(ScaffoldChooser),
    /// The doctor's checklist for a server that could not start (`D` in
    /// the Messages pane).
    Doctor(Box<DoctorView>),
}

impl Overlay {
    /// A text under `title`.
    pub(crate) fn text(title: String, body: Vec<String>) -> Overlay {
        Overlay::Text(TextWindow::new(title, body))
    }

    fn component(&mut self) -> &mut dyn Component {
        match self {
            Overlay::Help(o) => o,
            Overlay::Palette(o) => o,
            Overlay::Plan(o) => o.as_mut(),
            Overlay::Text(o) => o,
            Overlay::ConfirmQuit(o) => o,
            Overlay::ConfirmDestructive(o) => o,
            Overlay::Choice(o) => o.as_mut(),
            Overlay::Recover(o) => o,
            Overlay::History(o) => o,
            Overlay::Messages(o) => o,
            Overlay::Scaffold(o) => o,
            Overlay::Doctor(o) => o.as_mut(),
        }
    }

    /// The scroll offset of a scrolling overlay.
    pub(crate) fn scroll_mut(&mut self) -> Option<&mut u16> {
        match self {
            Overlay::Help(o) => Some(o.scroll_mut()),
            Overlay::Messages(o) => Some(o.scroll_mut()),
            Overlay::Text(o) => Some(o.scroll_mut()),
            Overlay::Plan(o) => Some(o.scroll_mut()),
            Overlay::Doctor(o) => Some(o.scroll_mut()),
            _ => None,
        }
    }

    /// The word the status bar shows for it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Overlay::Help(_) => "help",
            Overlay::Palette(_) => "palette",
            Overlay::Plan(p) if p.estimate() => "estimate",
            Overlay::Plan(_) => "dry run",
            Overlay::Text(_) => "text",
            Overlay::ConfirmQuit(_) => "quit?",
            Overlay::ConfirmDestructive(_) => "destructive?",
            Overlay::Choice(_) => "choice",
            Overlay::Recover(_) => "recover",
            Overlay::History(_) => "history",
            Overlay::Messages(_) => "messages",
            Overlay::Scaffold(_) => "new pipeline",
            Overlay::Doctor(_) => "doctor",
        }
    }

    /// Where it is drawn on a screen of `area` (for the mouse).
    pub(crate) fn rect(&self, area: Rect) -> Rect {
        match self {
            Overlay::History(_) => HistoryView::rect(area),
            Overlay::Help(_) => Help::rect(area),
            Overlay::Palette(_) => Palette::rect(area),
            Overlay::Plan(_) => PlanView::rect(area),
            Overlay::Text(_) => TextWindow::rect(area),
            Overlay::Messages(_) => MessagesPane::rect(area),
            Overlay::ConfirmDestructive(_) => ConfirmDestructive::rect(area),
            Overlay::Scaffold(_) => ScaffoldChooser::rect(area),
            Overlay::ConfirmQuit(_) => ConfirmQuit::rect(area),
            Overlay::Choice(c) => c.rect(area),
            Overlay::Recover(_) => RecoverDialog::rect(area),
            Overlay::Doctor(_) => DoctorView::rect(area),
        }
    }

    /// Its text, a line each, as `/` searches it (`None` for the overlays
    /// that are not searched): the help, the Messages pane, a text, or
    /// History's runs, as drawn in a window `width` wide.
    pub(crate) fn lines(&self, ctx: &Ctx<'_>, width: u16) -> Option<Vec<String>> {
        let text = |lines: Vec<ratatui::text::Line<'_>>| {
            lines
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        match self {
            Overlay::Help(_) => Some(text(help::help_lines(ctx.keymap, ctx.theme, width))),
            Overlay::Messages(_) => Some(text(crate::messages::view::lines(
                ctx.log,
                ctx.diagnostics,
                ctx.theme,
            ))),
            Overlay::Text(t) => Some(t.body().to_vec()),
            Overlay::Doctor(d) => Some(d.body()),
            Overlay::History(h) => Some(text(h.rows(ctx.theme, width))),
            _ => None,
        }
    }

    /// Whether it is a list the wheel moves through a row at a time (the
    /// others scroll their text).
    pub(crate) fn is_list(&self) -> bool {
        matches!(self, Overlay::Palette(_) | Overlay::History(_))
    }

    /// Whether it asks a question a click outside does not answer.
    pub(crate) fn asks(&self) -> bool {
        matches!(
            self,
            Overlay::ConfirmQuit(_)
                | Overlay::ConfirmDestructive(_)
                | Overlay::Choice(_)
                | Overlay::Recover(_)
        )
    }

    /// The keys it takes, most useful first, for the footer.
    pub(crate) fn keys(&self, keymap: &Keymap) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = Vec::new();
        match self {
            Overlay::Palette(_) => {
                out.push(("type".into(), "filter"));
                out.push(("↑↓".into(), "choose"));
                out.push(("Enter".into(), "do it"));
                out.push(("Ctrl-U".into(), "clear"));
                out.push(("Esc".into(), "close"));
            }
            Overlay::Recover(_) => out.extend(RecoverDialog::keys()),
            Overlay::Choice(c) => {
                for (k, what) in c.answers() {
                    // The answer's first words (`JSON trace`).
                    let short = what.split(" (").next().unwrap_or(what);
                    out.push((k.to_string(), short));
                }
                out.push(("Esc".into(), c.none()));
            }
            Overlay::History(_) => {
                out.push(("↑↓".into(), "choose"));
                out.push(("Enter".into(), "open"));
                out.push(("D".into(), "diff"));
                out.push(("E".into(), "export"));
                out.push(("R".into(), "restore file"));
                out.push((keymap.label(Action::Run), "run its file"));
                out.push(("/".into(), "search"));
                out.push(("Esc".into(), "close"));
            }
            Overlay::ConfirmQuit(q) => {
                if q.unsaved() {
                    out.push(("s".into(), "save and quit"));
                }
                let what = match (q.unsaved(), q.running()) {
                    (true, _) => "quit without saving",
                    (false, true) => "cancel the run and quit",
                    (false, false) => "quit",
                };
                out.push(("q y".into(), what));
                out.push(("Esc".into(), "stay"));
            }
            Overlay::ConfirmDestructive(_) => {
                out.push(("y".into(), "run them"));
                out.push(("any other key".into(), "do not run"));
            }
            Overlay::Scaffold(_) => {
                out.push(("type".into(), "narrow"));
                out.push(("Space".into(), "mark"));
                out.push(("Enter".into(), "write"));
                out.push(("Esc".into(), "close"));
            }
            Overlay::Messages(m) => {
                if m.doctor().is_some() {
                    out.push(("D".into(), "doctor"));
                }
                out.push(("↑↓ PgUp PgDn".into(), "scroll"));
                out.push(("/".into(), "search"));
                out.push(("g G".into(), "first, last"));
                out.push((keymap.label(Action::Wrap), "wrap"));
                out.push(("Esc".into(), "close"));
            }
            Overlay::Doctor(_) => {
                out.push(("r".into(), "run again"));
                out.push(("↑↓ PgUp PgDn".into(), "scroll"));
                out.push(("/".into(), "search"));
                out.push(("Esc".into(), "close"));
            }
            other => {
                out.push(("↑↓ PgUp PgDn".into(), "scroll"));
                if matches!(other, Overlay::Help(_)) {
                    out.push(("/".into(), "search"));
                }
                out.push(("g G".into(), "top, end"));
                out.push(("Esc".into(), "close"));
            }
        }
        out
    }
}

impl Component for Overlay {
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        self.component().on_key(key, action, ctx, queue)
    }

    /// Drawn over the screen, `area`, where [`Overlay::rect`] says.
    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        self.component().draw(area, buf, ctx);
    }
}
