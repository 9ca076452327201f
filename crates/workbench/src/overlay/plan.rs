//! The dry-run plan and cost estimate (`d`, `e`): the engine's plan of the
//! composition and case on screen, in the words `pipewright plan` prints,
//! with preflight's verdict as `plan` gives it.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use pipewright_engine::plan::dry_run::CompositionPlan;
use pipewright_engine::plan::preflight::Preflight;

use super::help::closes;
use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::{centred, scrolled, scrolled_lines};

/// The plan, its text and how far it is scrolled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanView {
    /// Opened as the cost estimate (`e`) rather than the dry run (`d`).
    estimate: bool,
    /// What `plan` computes for the same file, composition and case.
    plan: CompositionPlan,
    /// `plan`'s text of it, a line each.
    lines: Vec<String>,
    scroll: u16,
}

impl PlanView {
    /// The view of `plan` for `file`.
    pub(crate) fn new(file: &str, plan: CompositionPlan, estimate: bool) -> PlanView {
        use pipewright_engine::plan::text::{View, composition_as};
        let view = if estimate {
            View::Estimate
        } else {
            View::DryRun
        };
        let lines = composition_as(file, &plan, view)
            .lines()
            .map(str::to_owned)
            .collect();
        PlanView {
            estimate,
            plan,
            lines,
            scroll: 0,
        }
    }

    /// Adds preflight's verdict on the plan, as `plan` gives it: with
    /// problems, they come first (each as `file` shows it, from `source`)
    /// and the plan is not "within budget".
    pub(crate) fn with_preflight(&mut self, report: &Preflight, file: &str, source: Option<&str>) {
        if report.ok() {
            let destructive: Vec<String> = report
                .destructive
                .iter()
                .map(|d| format!("{} ({})", d.node, d.tool))
                .collect();
            self.lines.push(if destructive.is_empty() {
                "preflight: 0 problem(s); no destructive tools".into()
            } else {
                format!(
                    "preflight: 0 problem(s); destructive, the run asks first: {}",
                    destructive.join(", ")
                )
            });
            return;
        }
        let n = report.problems.len();
        let mut lines = vec![format!(
            "preflight failed: {n} problem(s); nothing would be called"
        )];
        for d in &report.problems {
            lines.extend(d.render(file, source).lines().map(str::to_owned));
            lines.push(String::new());
        }
        for l in &mut self.lines {
            if let Some(at) = l.find("→ within budget") {
                l.truncate(at);
                l.push_str(&format!("→ not run: preflight found {n} problem(s)"));
            }
        }
        lines.append(&mut self.lines);
        self.lines = lines;
    }

    /// Opened as the cost estimate (`e`), not the dry run (`d`).
    pub(crate) fn estimate(&self) -> bool {
        self.estimate
    }

    /// The plan shown.
    #[cfg(test)]
    pub(crate) fn plan(&self) -> &CompositionPlan {
        &self.plan
    }

    /// Its text, a line each.
    #[cfg(test)]
    pub(crate) fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 90, 85)
    }

    /// The first line shown.
    pub(crate) fn scroll_mut(&mut self) -> &mut u16 {
        &mut self.scroll
    }
}

impl Component for PlanView {
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
        let t = ctx.theme;
        let r = Self::rect(area);
        Clear.render(r, buf);
        let (title, note) = if self.estimate {
            (
                "cost estimate",
                "nothing is called · each call's projected cost, the totals, the budget · d: waves and args",
            )
        } else {
            (
                "dry run",
                "nothing is called · waves and args; <from x.y> waits on a node not run yet · e: cost",
            )
        };
        let mut lines = vec![Line::from(Span::styled(note, Style::default().fg(t.dim)))];
        for l in &self.lines {
            let style = if l.contains("OVER BUDGET") || l.contains(" trips at ") {
                Style::default().fg(t.failed).add_modifier(Modifier::BOLD)
            } else if l.contains("within budget") {
                Style::default().fg(t.ok)
            } else if l.starts_with("plan ") || l.trim_start().starts_with("total ") {
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD)
            } else if l.trim_start().starts_with("args ") {
                Style::default().fg(t.dim)
            } else if l.trim_start().starts_with('!') {
                Style::default().fg(t.error)
            } else {
                Style::default().fg(t.fg)
            };
            lines.push(Line::from(Span::styled(l.clone(), style)));
        }
        self.scroll = scrolled_lines(lines, title.into(), t, r, self.scroll, false, buf);
    }
}
