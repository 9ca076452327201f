//! The Timeline view: one bar per node on a shared time axis (Gantt style),
//! fan-out iterations as sub-bars under their node, coloured by status, and
//! the critical path (the chain of nodes that ended last) marked with `★`.
//! It is drawn from the same node visuals as the DAG, so it moves while a
//! run goes on; the selected node's row is highlighted. [`Timeline`] is the
//! view as a component (it shows in the DAG's place, `T`), and keeps the
//! live run's clock its bars are drawn against.

use std::collections::BTreeSet;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use pipewright_engine::file::model::Composition;
use pipewright_engine::run::trace::{NodeStatus, PauseSpan};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::inspector::text::duration_text;
use crate::keys::Action;
use crate::msg::Msg;
use crate::state::{NodeVisual, RunState};
use crate::theme::Theme;

/// The Timeline view's state (`T` shows it in the DAG's place) and the
/// live run's clock its bars are drawn against.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    /// The DAG pane shows the timeline instead of the graph.
    shown: bool,
    /// Fan-out nodes whose every iteration the timeline shows.
    open: BTreeSet<usize>,
    /// When the current run started (for live timeline bars).
    clock: Option<Instant>,
    /// The live run's pauses: when each began (ms from its start) and, once
    /// it ended, how long it lasted (the timeline labels the gaps).
    pauses: Vec<(u64, Option<u64>)>,
    /// A fixed "now" (ms into the run) for the timeline, instead of the
    /// clock: screenshots of a live run are drawn with it.
    frozen_ms: Option<u64>,
}

impl Timeline {
    /// A run started now: its clock starts, no pause yet.
    pub(crate) fn start(&mut self) {
        self.clock = Some(Instant::now());
        self.pauses.clear();
    }

    /// Milliseconds since the run started, by the clock.
    pub(crate) fn elapsed_ms(&self) -> Option<u64> {
        self.clock.map(|c| c.elapsed().as_millis() as u64)
    }

    /// Milliseconds since the current run started (the frozen time in
    /// screenshots).
    pub(crate) fn now_ms(&self) -> u64 {
        self.frozen_ms
            .unwrap_or_else(|| self.elapsed_ms().unwrap_or(0))
    }

    /// The session's pause clock started `at_ms` into the run (paused, and
    /// nothing in flight): the session says when a pause is, so the
    /// timeline's gaps are the ones the run's duration leaves out.
    pub(crate) fn idle(&mut self, at_ms: u64) {
        if self.clock.is_some() {
            self.pauses.push((at_ms, None));
        }
    }

    /// The session's pause clock stopped: the pause under way is `pause`.
    pub(crate) fn busy(&mut self, pause: PauseSpan) {
        if self.clock.is_none() {
            return;
        }
        match self.pauses.last_mut() {
            Some(last @ (_, None)) => *last = (pause.at_ms, Some(pause.ms)),
            _ => self.pauses.push((pause.at_ms, Some(pause.ms))),
        }
    }

    /// The live run's pauses so far, one still going reaching now.
    fn live_pauses(&self) -> Vec<(u64, u64)> {
        let now = self.now_ms();
        self.pauses
            .iter()
            .map(|&(at, ms)| (at, ms.unwrap_or(now.saturating_sub(at))))
            .collect()
    }

    /// Shows fan-out node `i`'s every iteration, or folds them again.
    fn toggle_open(&mut self, i: usize) {
        if !self.open.remove(&i) {
            self.open.insert(i);
        }
    }

    /// Whether the timeline shows in the DAG's place.
    pub(crate) fn shown(&self) -> bool {
        self.shown
    }

    /// Shows the timeline in the DAG's place, or the DAG again (`T`).
    pub(crate) fn toggle(&mut self) {
        self.shown = !self.shown;
    }

    /// Draws the live run as if `ms` milliseconds of it had gone
    /// (screenshots of a live run).
    #[cfg(test)]
    pub(crate) fn freeze(&mut self, ms: u64) {
        self.frozen_ms = Some(ms);
    }

    /// Starts the live run's clock `ago` before now (tests of a live run).
    #[cfg(test)]
    pub(crate) fn started_ago(&mut self, ago: std::time::Duration) {
        self.clock = Instant::now().checked_sub(ago);
    }

    /// The rows for what is on screen: the saved run's or the last
    /// finished run's recorded times, or the live run's against the clock.
    pub(crate) fn bars(&self, ctx: &Ctx<'_>) -> Vec<Bar> {
        let Some(comp) = ctx.comp else {
            return Vec::new();
        };
        let run_start = ctx
            .trace
            .filter(|_| ctx.viewing.is_some() || *ctx.run != RunState::Running)
            .and_then(|t| t.composition.started_at.as_deref());
        let now = match (ctx.run, ctx.viewing.is_some()) {
            (RunState::Running | RunState::Paused { .. }, false) => self.now_ms(),
            _ => 0,
        };
        let open = &self.open;
        bars_expanded(comp, ctx.visuals, run_start, now, &|i| open.contains(&i))
    }

    /// The pauses the timeline labels: the saved or finished run's, or the
    /// live run's so far (one still going reaches now).
    fn pauses_shown(&self, ctx: &Ctx<'_>) -> Vec<(u64, u64)> {
        let live =
            ctx.viewing.is_none() && matches!(ctx.run, RunState::Running | RunState::Paused { .. });
        if live {
            return self.live_pauses();
        }
        ctx.trace
            .map(|t| {
                t.composition
                    .pauses
                    .iter()
                    .map(|p| (p.at_ms, p.ms))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The pane's title.
    pub(crate) fn title(ctx: &Ctx<'_>) -> String {
        match (ctx.viewing, ctx.trace) {
            (Some(id), Some(trace)) => {
                // A durable run picked up again after its worker died:
                // the gap on the axis is the time no worker held it.
                let resumed = trace
                    .durable
                    .as_ref()
                    .and_then(|d| {
                        let n = d.attempts.len();
                        let (before, last) =
                            (d.attempts.get(n.checked_sub(2)?)?, d.attempts.last()?);
                        let from = before.last_at.as_deref().unwrap_or(&before.at);
                        let gap = pipewright_engine::run::durable::gap_ms(from, &last.at)?;
                        Some(format!(
                            "resumed on {} after {} · ",
                            last.worker,
                            duration_text(gap)
                        ))
                    })
                    .unwrap_or_default();
                format!(
                    " timeline · run {id} (read-only, {}) · {resumed}T: DAG ",
                    duration_text(trace.composition.duration_ms)
                )
            }
            _ => " timeline · T: DAG · Enter: all iterations ".to_owned(),
        }
    }
}

impl Component for Timeline {
    /// Up and Down walk the node rows; Enter shows a fan-out's every
    /// iteration (and folds them again). Other keys are the DAG's.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        let delta: i32 = match key.code {
            KeyCode::Up | KeyCode::Char('k') => -1,
            KeyCode::Down | KeyCode::Char('j') => 1,
            // A fan-out's row shows its first iterations and `+N more`:
            // Enter shows them all, and folds them again.
            KeyCode::Enter => {
                if let Some(i) = ctx.selected {
                    self.toggle_open(i);
                }
                return Handled::Taken;
            }
            _ => return Handled::Ignored,
        };
        let Some(comp) = ctx.comp else {
            return Handled::Taken;
        };
        let at = ctx
            .selected
            .and_then(|s| comp.order.iter().position(|&i| i == s))
            .unwrap_or(0) as i32;
        let next = (at + delta).clamp(0, comp.order.len() as i32 - 1) as usize;
        queue.push(Msg::Select(comp.order.get(next).copied()));
        Handled::Taken
    }

    /// A click on a row selects its node.
    fn on_mouse(
        &mut self,
        ev: MouseEvent,
        area: Rect,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        let MouseEventKind::Down(MouseButton::Left) = ev.kind else {
            return Handled::Ignored;
        };
        // Border, then the axis line.
        let Some(line) = ev.row.checked_sub(area.y + 2) else {
            return Handled::Taken;
        };
        let bars = self.bars(ctx);
        let rows = area.height.saturating_sub(3) as usize;
        let sel_row = bars
            .iter()
            .position(|b| !b.sub && Some(b.node) == ctx.selected)
            .unwrap_or(0);
        let skip = (sel_row + 1).saturating_sub(rows);
        if let Some(b) = bars.get(skip + line as usize) {
            queue.push(Msg::Select(Some(b.node)));
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let bars = self.bars(ctx);
        let view = TimelineView {
            bars: &bars,
            selected: ctx.selected,
            theme: ctx.theme,
            focused: ctx.focused,
            title: Self::title(ctx),
            pauses: self.pauses_shown(ctx),
        };
        view.render(area, buf);
    }
}

/// Most iterations drawn under a fanned-out node; the rest are counted.
const MAX_SUB: usize = 6;

/// One row of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The node (index in `Composition::nodes`) this row belongs to.
    pub node: usize,
    pub label: String,
    /// Milliseconds from the start of the run; `None` when it has not run.
    pub span: Option<(u64, u64)>,
    pub status: NodeStatus,
    /// An iteration row under its node.
    pub sub: bool,
    pub critical: bool,
}

/// Milliseconds between two RFC 3339 times (`b` after `a`), if both parse.
fn offset_ms(a: &str, b: &str) -> Option<u64> {
    let p = |t: &str| {
        time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
    };
    let d = p(b)? - p(a)?;
    u64::try_from(d.whole_milliseconds()).ok()
}

/// The rows, in topological order. `run_start` is the run's start (RFC
/// 3339); `now_ms` how long the run has gone on, for nodes still running.
#[cfg(test)]
fn bars(
    comp: &Composition,
    visuals: &[NodeVisual],
    run_start: Option<&str>,
    now_ms: u64,
) -> Vec<Bar> {
    bars_expanded(comp, visuals, run_start, now_ms, &|_| false)
}

/// [`bars`], with every iteration of the nodes `expanded` says are open
/// (Enter on a fan-out's row), not only the first few.
pub fn bars_expanded(
    comp: &Composition,
    visuals: &[NodeVisual],
    run_start: Option<&str>,
    now_ms: u64,
    expanded: &dyn Fn(usize) -> bool,
) -> Vec<Bar> {
    let mut out: Vec<Bar> = Vec::new();
    let mut ends: Vec<Option<u64>> = vec![None; comp.nodes.len()];
    for &i in &comp.order {
        let v = visuals.get(i).cloned().unwrap_or_default();
        let rec = v.record.as_deref();
        let start = rec
            .and_then(|r| r.started_at.as_deref())
            .zip(run_start)
            .and_then(|(s, r)| offset_ms(r, s))
            .or(v.started_ms);
        let span = start.map(|s| {
            let end = match (v.status, rec) {
                (NodeStatus::Running, _) => now_ms.max(s),
                (_, Some(r)) => s + r.duration_ms,
                _ => s,
            };
            (s, end)
        });
        ends[i] = span.map(|s| s.1);
        out.push(Bar {
            node: i,
            label: comp.nodes[i].id.clone(),
            span,
            status: v.status,
            sub: false,
            critical: false,
        });
        if let Some(r) = rec {
            let shown = if expanded(i) {
                r.iterations.len()
            } else {
                MAX_SUB
            };
            for it in r.iterations.iter().take(shown) {
                let s = it
                    .started_at
                    .as_deref()
                    .zip(run_start)
                    .and_then(|(s, r)| offset_ms(r, s));
                out.push(Bar {
                    node: i,
                    // Numbered from 1, as the Iterations tab and Raw do.
                    label: format!("#{}", it.index + 1),
                    span: s.map(|s| (s, s + it.duration_ms)),
                    status: it.status,
                    sub: true,
                    critical: false,
                });
            }
            if r.iterations.len() > shown {
                out.push(Bar {
                    node: i,
                    label: format!("+{} more ⏎", r.iterations.len() - shown),
                    span: None,
                    status: NodeStatus::Pending,
                    sub: true,
                    critical: false,
                });
            }
        }
    }
    // The critical path: from the node that ended last, back through the
    // parent that ended last each time.
    let mut at = (0..ends.len())
        .filter(|&i| ends[i].is_some())
        .max_by_key(|&i| ends[i]);
    let mut path = Vec::new();
    while let Some(i) = at {
        path.push(i);
        at = comp.parents[i]
            .iter()
            .copied()
            .filter(|&p| ends[p].is_some())
            .max_by_key(|&p| ends[p]);
    }
    for b in out.iter_mut().filter(|b| !b.sub) {
        b.critical = path.contains(&b.node);
    }
    out
}

/// The timeline pane.
pub struct TimelineView<'a> {
    pub bars: &'a [Bar],
    pub selected: Option<usize>,
    pub theme: &'a Theme,
    pub focused: bool,
    /// The pane title (it names the tab and, when one is open, the run).
    pub title: String,
    /// The run's pauses (start, length in ms): their columns are marked
    /// `┊` under a `⏸ 8.90 s` label, so a gap says why it is there.
    pub pauses: Vec<(u64, u64)>,
}

impl Widget for TimelineView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border_style(self.focused))
            .style(t.base())
            .title(t.pane_title(&self.title, self.focused));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 20 || inner.height < 2 {
            return;
        }
        let ran = self.bars.iter().any(|b| b.span.is_some());
        let total = self
            .bars
            .iter()
            .filter_map(|b| b.span.map(|s| s.1))
            .chain(self.pauses.iter().map(|(at, ms)| at + ms))
            .max()
            .unwrap_or(0)
            .max(1);
        let label_w = 16usize.min(inner.width as usize / 3);
        let track = inner.width as usize - label_w - 1;
        let base = Style::default().fg(t.fg);
        let mut lines: Vec<Line> = Vec::new();
        let axis = if ran {
            // The same words for time as everywhere else (`1.52 s`).
            format!(
                "{:<label_w$} 0 s{:>w$}",
                "",
                duration_text(total),
                w = track.saturating_sub(3)
            )
        } else {
            format!("{:<label_w$} not run yet: bars appear as nodes run", "")
        };
        lines.push(Line::from(Span::styled(axis, base.fg(t.dim))));
        // Keep the selected node's row in view.
        let rows = inner.height as usize - 1;
        let sel_row = self
            .bars
            .iter()
            .position(|b| !b.sub && Some(b.node) == self.selected)
            .unwrap_or(0);
        let skip = (sel_row + 1).saturating_sub(rows);
        for b in self.bars.iter().skip(skip).take(rows) {
            let selected = !b.sub && Some(b.node) == self.selected;
            let mark = if b.critical { "★" } else { " " };
            let name: String = if b.sub {
                format!("  {}", b.label)
            } else {
                b.label.clone()
            };
            let name: String = name.chars().take(label_w - 1).collect();
            let mut label_style = base;
            if b.sub {
                label_style = label_style.fg(t.dim);
            }
            if selected {
                label_style = label_style.patch(t.selected());
            }
            let mut spans = vec![
                Span::styled(mark, base.fg(t.warning)),
                Span::styled(format!("{name:<w$}", w = label_w - 1), label_style),
                Span::raw(" "),
            ];
            match b.span {
                Some((s, e)) => {
                    let x0 = ((s as usize * track) / total as usize).min(track - 1);
                    let x1 = ((e as usize * track).div_ceil(total as usize))
                        .max(x0 + 1)
                        .min(track);
                    let glyph = if b.sub { "▬" } else { "█" };
                    let bar = Span::styled(glyph.repeat(x1 - x0), base.fg(t.status(b.status)));
                    let tail = track - x1;
                    let d = duration_text(e - s);
                    let dw = d.chars().count();
                    if dw < tail {
                        // After the bar.
                        spans.push(Span::raw(" ".repeat(x0)));
                        spans.push(bar);
                        spans.push(Span::styled(format!(" {d}"), base.fg(t.dim)));
                    } else if dw < x0 {
                        // A bar that reaches the right edge: before it.
                        spans.push(Span::raw(" ".repeat(x0 - dw - 1)));
                        spans.push(Span::styled(d, base.fg(t.dim)));
                        spans.push(Span::raw(" "));
                        spans.push(bar);
                    } else {
                        // A bar across the whole track: inside its end.
                        let keep = (x1 - x0).saturating_sub(dw);
                        spans.push(Span::raw(" ".repeat(x0)));
                        spans.push(Span::styled(
                            glyph.repeat(keep),
                            base.fg(t.status(b.status)),
                        ));
                        spans.push(Span::styled(
                            d.chars().take(x1 - x0).collect::<String>(),
                            base.fg(t.status(b.status))
                                .add_modifier(Modifier::REVERSED | Modifier::BOLD),
                        ));
                    }
                }
                None if !b.sub => {
                    spans.push(Span::styled(b.status.as_str().to_owned(), base.fg(t.dim)));
                }
                None => {}
            }
            lines.push(Line::from(spans));
        }
        let shown_rows = lines.len() as u16;
        Paragraph::new(lines).render(inner, buf);
        if ran {
            mark_pauses(
                &self.pauses,
                total,
                inner,
                label_w,
                track,
                shown_rows,
                t,
                buf,
            );
        }
    }
}

/// Marks each pause's columns `┊` where no bar is drawn and writes
/// `⏸ 8.90 s` on the axis line over it.
#[allow(clippy::too_many_arguments)]
fn mark_pauses(
    pauses: &[(u64, u64)],
    total: u64,
    inner: Rect,
    label_w: usize,
    track: usize,
    rows: u16,
    t: &Theme,
    buf: &mut Buffer,
) {
    let dim = Style::default().fg(t.dim);
    let x_of = |ms: u64| {
        inner.x
            + (label_w + 1) as u16
            + ((ms as usize * track) / total as usize).min(track.saturating_sub(1)) as u16
    };
    for &(at, ms) in pauses {
        let (x0, x1) = (x_of(at), x_of(at + ms).max(x_of(at) + 1));
        for y in inner.y + 1..inner.y + rows {
            for x in x0..x1 {
                if let Some(cell) = buf.cell_mut((x, y))
                    && cell.symbol() == " "
                {
                    cell.set_symbol("┊").set_style(dim);
                }
            }
        }
        let label = format!("⏸ {}", duration_text(ms));
        let room = inner.right().saturating_sub(x0) as usize;
        if room > 2 {
            let label: String = label.chars().take(room).collect();
            buf.set_string(x0, inner.y, label, dim.fg(t.warning));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::run::trace::NodeRecord;
    use std::sync::Arc;

    #[test]
    fn bars_follow_recorded_times_and_the_critical_path_ends_last() {
        let loaded = pipewright_engine::file::open::load_str(
            "compositions:\n  - name: c\n    nodes:\n      - {id: a, tool: t}\n      - {id: fast, tool: t, needs: [a], args: {x: \"${a}\"}}\n      - {id: slow, tool: t, needs: [a], args: {x: \"${a}\"}}\n      - {id: end, tool: t, needs: [fast, slow], args: {x: \"${fast}${slow}\"}}\n",
        );
        let comp = loaded.valid().expect("valid").compositions[0].clone();
        let rec = |start_ms: u64, dur: u64| NodeVisual {
            status: NodeStatus::Ok,
            record: Some(Arc::new(NodeRecord {
                status: NodeStatus::Ok,
                started_at: Some(format!("2026-11-23T10:00:00.{start_ms:03}Z")),
                duration_ms: dur,
                ..NodeRecord::default()
            })),
            ..NodeVisual::default()
        };
        let vis = vec![rec(0, 10), rec(10, 5), rec(10, 50), rec(60, 5)];
        let b = bars(&comp, &vis, Some("2026-11-23T10:00:00Z"), 0);
        let get = |id: &str| b.iter().find(|x| x.label == id).unwrap();
        assert_eq!(get("slow").span, Some((10, 60)));
        assert!(get("a").critical && get("slow").critical && get("end").critical);
        assert!(!get("fast").critical);
    }

    #[test]
    fn the_live_clock_keeps_pauses_and_a_frozen_now() {
        let mut t = Timeline::default();
        assert_eq!(t.now_ms(), 0, "no run: time stands at zero");
        t.idle(3);
        assert!(t.pauses.is_empty(), "no clock, no pause");
        t.start();
        t.idle(3);
        assert_eq!(t.pauses.len(), 1);
        assert_eq!(t.pauses[0].1, None, "still paused");
        t.frozen_ms = Some(t.pauses[0].0 + 500);
        assert_eq!(t.live_pauses(), vec![(t.pauses[0].0, 500)]);
        t.busy(PauseSpan { at_ms: 3, ms: 700 });
        assert!(t.pauses[0].1.is_some(), "the pause ended");
        assert_eq!(
            t.pauses,
            vec![(3, Some(700))],
            "as long as the session says"
        );
        t.start();
        assert!(t.pauses.is_empty(), "a new run starts with none");
        t.toggle_open(3);
        assert!(t.open.contains(&3));
        t.toggle_open(3);
        assert!(t.open.is_empty());
    }
}
