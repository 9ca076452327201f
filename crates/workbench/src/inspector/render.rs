//! Drawing the inspector: the titled block with its tabs, the header line,
//! the filter box and the active tab's body.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget, Wrap};

use super::filter::{self, FilterState};
use super::json_tree::JsonTree;
use super::{ArgsSource, Inspector, RawText, Tab, details, logs, text};
use crate::theme::{Theme, status_glyph};
use pipewright_engine::run::trace::NodeStatus;

mod task;

/// Rows of the pane's inside, as drawn.
pub(super) struct Areas {
    /// One line: status, tool, duration.
    pub header: Rect,
    /// The jq filter box line (Output tab, when a filter is open or set).
    pub filter: Option<Rect>,
    /// The line under the box with a compile or runtime error.
    pub filter_error: Option<Rect>,
    pub body: Rect,
}

impl Inspector {
    /// The title's text before the tab names.
    pub(super) fn title_prefix(&self) -> String {
        let name = self.shown.as_ref().map_or("inspector", |s| s.id.as_str());
        let max = if self.compact > 0 { 12 } else { 24 };
        let name: String = if name.chars().count() > max {
            name.chars().take(max - 1).chain(['…']).collect()
        } else {
            name.to_owned()
        };
        let mark = if self.focused { "▶ " } else { "" };
        format!(" {mark}{name} ─ ")
    }

    /// A tab's name as the title shows it (short in a narrow pane).
    pub(super) fn tab_label(&self, t: Tab) -> &'static str {
        const KEYS: [&str; 7] = ["1", "2", "3", "4", "5", "6", "7"];
        match self.compact {
            0 => t.name(),
            1 => t.short(),
            _ if t == self.tab => t.name(),
            _ => KEYS[t.index()],
        }
    }

    /// How much the tab names must be cut to fit a pane `width` wide.
    fn compact_for(&mut self, width: u16) -> u8 {
        for level in 0..2u8 {
            self.compact = level;
            let name = self.title_prefix().chars().count();
            let tabs: usize = Tab::ALL
                .iter()
                .map(|t| self.tab_label(*t).chars().count() + 1)
                .sum();
            // The corners, the node's name, the tabs and a blank.
            if 2 + name + tabs < width as usize {
                return level;
            }
        }
        2
    }

    /// The tab whose name is drawn at column `x` of the title row.
    pub(super) fn tab_at(&self, area: Rect, x: u16) -> Option<Tab> {
        let mut at = area.x as usize + 1 + self.title_prefix().chars().count();
        for t in Tab::ALL {
            let w = self.tab_label(t).chars().count();
            if (x as usize) >= at && (x as usize) < at + w {
                return Some(t);
            }
            at += w + 1;
        }
        None
    }

    pub(super) fn areas(&self, area: Rect) -> Areas {
        let inner = Block::bordered().inner(area);
        let header = Rect {
            height: inner.height.min(1),
            ..inner
        };
        let mut y = header.bottom();
        let mut take = |h: u16| {
            let h = h.min(inner.bottom().saturating_sub(y));
            let r = Rect::new(inner.x, y, inner.width, h);
            y += h;
            r
        };
        let show_box = self.tab == Tab::Output
            && self.output.is_some()
            && (self.filter.editing() || self.filter.active());
        let filter = show_box.then(|| take(1));
        let has_error = matches!(
            self.filter.state(),
            FilterState::Compile(_) | FilterState::Run(_)
        );
        let filter_error = (show_box && has_error).then(|| take(1));
        let body = take(u16::MAX);
        Areas {
            header,
            filter,
            filter_error,
            body,
        }
    }

    /// Draws the pane: a bordered block titled with the node and the tabs,
    /// a header line, and the active tab. Work is proportional to the area.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        if area.width < 3 || area.height < 3 {
            return;
        }
        self.focused = focused;
        self.compact = self.compact_for(area.width);
        let block = Block::bordered()
            .border_type(BorderType::Plain)
            .border_style(theme.border_style(focused))
            .title(self.title(theme, focused))
            .title_bottom(Line::from(self.position_text()).alignment(Alignment::Right));
        block.render(area, buf);
        let areas = self.areas(area);
        self.render_header(areas.header, buf, theme);
        if let Some(r) = areas.filter {
            self.render_filter(r, areas.filter_error, buf, theme);
        }
        let body = areas.body;
        let dim = Style::default().fg(theme.dim);
        let Some(shown) = &self.shown else {
            Paragraph::new(Line::styled("select a node to inspect it", dim)).render(body, buf);
            return;
        };
        match self.tab {
            Tab::Args => {
                let wrap = self.wrap;
                let (body, doc) = match (&self.tool_doc, &self.args) {
                    (Some(_), Some(t)) if body.height >= 8 => {
                        // The arguments first; the tool's schema under them.
                        let rows = u16::try_from(t.rows().len()).unwrap_or(u16::MAX);
                        let top = rows.clamp(1, body.height / 2);
                        let (a, b) = (
                            Rect::new(body.x, body.y, body.width, top),
                            Rect::new(body.x, body.y + top, body.width, body.height - top),
                        );
                        (a, Some(b))
                    }
                    (Some(_), None) => (Rect::default(), Some(body)),
                    _ => (body, None),
                };
                if let Some(t) = &mut self.args {
                    t.wrap = wrap;
                    t.render(body, buf, theme, focused);
                }
                if let (Some(area), Some((title, doc))) = (doc, &self.tool_doc) {
                    let block = Block::default()
                        .borders(ratatui::widgets::Borders::TOP)
                        .border_style(Style::default().fg(theme.dim))
                        .title(format!(" {title} "));
                    Paragraph::new(
                        doc.lines()
                            .map(|l| Line::raw(l.to_owned()))
                            .collect::<Vec<_>>(),
                    )
                    .block(block)
                    .wrap(Wrap { trim: false })
                    .render(area, buf);
                }
            }
            Tab::Output => {
                let failed_without_output = shown.record.as_ref().is_some_and(|r| {
                    r.output.is_null()
                        && matches!(
                            r.status,
                            NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::Cancelled
                        )
                });
                if shown.record.is_none() {
                    // Before it runs: what its tool is and takes.
                    let mut lines = vec![Line::styled("not run yet: no output", dim)];
                    if let Some((title, doc)) = &self.tool_doc {
                        lines.push(Line::raw(""));
                        lines.push(Line::styled(
                            title.clone(),
                            Style::default().fg(theme.accent),
                        ));
                        lines.extend(doc.lines().map(|l| Line::raw(l.to_owned())));
                    }
                    Paragraph::new(lines)
                        .wrap(Wrap { trim: false })
                        .render(body, buf);
                } else if failed_without_output {
                    let status = shown.record.as_ref().map_or("", |r| r.status.as_str());
                    let msg = format!("no output: the node {status} (see the Error tab, 3)");
                    Paragraph::new(Line::styled(msg, dim))
                        .wrap(Wrap { trim: false })
                        .render(body, buf);
                } else {
                    let wrap = self.wrap;
                    if let Some(t) = self.output_tree_mut() {
                        t.wrap = wrap;
                        t.render(body, buf, theme, focused);
                    } else if self.filter.failed() {
                        let msg = "no result: the filter above fails (fix it, or clear it with / then Ctrl-U)";
                        Paragraph::new(Line::styled(msg, dim))
                            .wrap(Wrap { trim: false })
                            .render(body, buf);
                    }
                }
            }
            Tab::Error => {
                Paragraph::new(details::error_lines(
                    shown,
                    self.live.start_error.as_deref(),
                    theme,
                ))
                .wrap(Wrap { trim: false })
                .scroll((self.error_scroll, 0))
                .render(body, buf);
            }
            Tab::Timing => {
                let mut lines = details::timing_lines(shown, theme);
                lines.extend(task::lines(shown.record.as_deref(), &self.live, theme));
                Paragraph::new(lines).render(body, buf);
            }
            Tab::Iterations => {
                let items = super::iteration_items(Some(shown), &self.live);
                let tick = self.live.tick;
                let ran = shown.record.is_some();
                self.iterations.render(
                    items,
                    shown.for_each.as_deref(),
                    ran,
                    body,
                    buf,
                    theme,
                    focused,
                    tick,
                );
            }
            Tab::Logs => {
                self.logs_page = body.height as usize;
                let text = Paragraph::new(logs::lines(shown.record.as_deref(), &self.live, theme))
                    .scroll((self.logs_scroll, 0));
                match &self.find {
                    // A search draws a line a row so its marks line up.
                    Some(f) => {
                        text.render(body, buf);
                        let top = self.logs_scroll as usize;
                        f.paint(&self.logs_text(), top, body, buf, theme);
                    }
                    None => text.wrap(Wrap { trim: false }).render(body, buf),
                }
            }
            Tab::Raw => {
                if shown.record.is_some() {
                    self.start_raw();
                }
                match &self.raw {
                    RawText::Ready(text) => {
                        self.raw_view.render(text, body, buf, theme, self.wrap);
                        if let Some(f) = &self.find {
                            let rows = self.raw_view.rows();
                            f.paint_rows(&self.raw_lines(), rows, body, buf, theme);
                        }
                    }
                    RawText::Pending => {
                        Paragraph::new(Line::styled("formatting…", dim)).render(body, buf)
                    }
                    RawText::NotStarted => Paragraph::new(Line::styled(
                        "no JSON-RPC exchange recorded (not run, or mocked)",
                        dim,
                    ))
                    .render(body, buf),
                }
            }
        }
    }

    fn title(&self, theme: &Theme, focused: bool) -> Line<'static> {
        let mut spans = vec![Span::styled(
            self.title_prefix(),
            theme.border_style(focused),
        )];
        for (i, t) in Tab::ALL.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" "));
            }
            let style = if *t == self.tab {
                theme.active_tab()
            } else {
                Style::default().fg(theme.dim)
            };
            spans.push(Span::styled(self.tab_label(*t), style));
        }
        spans.push(Span::raw(" "));
        Line::from(spans)
    }

    /// ` 12/340 ` in the bottom border: where the view is.
    pub(super) fn position_text(&self) -> String {
        let tree = |t: &JsonTree| format!(" {}/{} ", t.selected() + 1, t.rows().len());
        match self.tab {
            Tab::Args => self.args.as_ref().map(tree),
            Tab::Output => {
                let t = if self.filter.active() && self.filtered.is_some() {
                    self.filtered.as_ref()
                } else {
                    self.output.as_ref()
                };
                t.map(tree)
            }
            Tab::Iterations => {
                let n = self.iteration_count();
                (n > 0).then(|| format!(" {}/{n} ", self.iterations.selected() + 1))
            }
            Tab::Raw => match &self.raw {
                RawText::Ready(_) if self.find.is_some() => {
                    self.find_status().map(|s| format!(" {s} "))
                }
                RawText::Ready(t) => Some(match self.raw_view.col() {
                    0 => format!(" line {}/{} ", self.raw_view.offset + 1, t.line_count()),
                    c => format!(
                        " line {}/{} · from column {} ",
                        self.raw_view.offset + 1,
                        t.line_count(),
                        c + 1
                    ),
                }),
                _ => None,
            },
            Tab::Logs => self.find_status().map(|s| format!(" {s} ")),
            Tab::Error | Tab::Timing => None,
        }
        .unwrap_or_default()
    }

    fn render_header(&self, r: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(s) = &self.shown else { return };
        let dim = Style::default().fg(theme.dim);
        let mut spans = Vec::new();
        match &s.record {
            Some(rec) => {
                if self.live.stale {
                    spans.push(Span::styled(
                        format!(
                            "{} stale · last run: ",
                            status_glyph(NodeStatus::Stale, false, 0)
                        ),
                        Style::default().fg(theme.status(NodeStatus::Stale)),
                    ));
                }
                spans.push(Span::styled(
                    format!(
                        "{} {}",
                        status_glyph(rec.status, rec.mocked, 0),
                        rec.status.as_str()
                    ),
                    Style::default().fg(theme.status(rec.status)),
                ));
                // Every node that ran shows its time, `0 ms` included (a
                // fast call showed none); a skipped one never started.
                if rec.started_at.is_some() || rec.duration_ms > 0 {
                    spans.push(Span::styled(
                        format!(" · {}", text::duration_text(rec.duration_ms)),
                        dim,
                    ));
                }
            }
            None if let Some(why) = &self.live.not_started => spans.push(Span::styled(
                format!(
                    "{} not started: {why}",
                    status_glyph(NodeStatus::Failed, false, 0)
                ),
                Style::default().fg(theme.status(NodeStatus::Failed)),
            )),
            None if self.live.running => {
                spans.push(Span::styled(
                    format!(
                        "{} running",
                        status_glyph(NodeStatus::Running, false, self.live.tick)
                    ),
                    Style::default().fg(theme.running),
                ));
                // Whole seconds, so a screen drawn twice in a second reads
                // the same.
                if let Some(ms) = self.live.elapsed_ms.filter(|ms| *ms >= 1000) {
                    spans.push(Span::styled(format!(" · {} s", ms / 1000), dim));
                }
            }
            None => spans.push(Span::styled(
                format!(
                    "{} not run yet",
                    status_glyph(NodeStatus::Pending, false, 0)
                ),
                Style::default().fg(theme.pending),
            )),
        }
        // A node that ran names the tool it called (its record's), not the
        // one the file calls now; when those differ, it says so.
        let record = s.record.as_deref().filter(|r| !r.tool.is_empty());
        let called = record.map(|r| r.tool.clone());
        let server = match record {
            Some(r) => &r.server,
            None => &s.server,
        };
        if let Some(tool) = called.as_ref().or(s.tool.as_ref()) {
            spans.push(Span::styled(" · ", dim));
            spans.push(Span::styled(tool.clone(), Style::default().fg(theme.fg)));
            if let Some(server) = server {
                spans.push(Span::styled(format!(" @ {server}"), dim));
                if let Some(rev) = &self.live.protocol {
                    spans.push(Span::styled(format!(" (MCP {rev})"), dim));
                }
            }
            if let (Some(called), Some(now)) = (&called, &s.tool)
                && called != now
            {
                spans.push(Span::styled(
                    format!(" · the file now calls {now}"),
                    Style::default().fg(theme.status(NodeStatus::Stale)),
                ));
            }
        }
        if self.tab == Tab::Args {
            let note = match s.args_source {
                ArgsSource::Resolved => " · resolved args",
                ArgsSource::Preview => " · preview from recorded parents",
                ArgsSource::Live => " · args of the call in flight",
                ArgsSource::AsWritten => " · args as written",
            };
            spans.push(Span::styled(note, dim));
        }
        buf.set_line(r.x, r.y, &Line::from(spans), r.width);
    }

    fn render_filter(&self, r: Rect, error: Option<Rect>, buf: &mut Buffer, theme: &Theme) {
        let dim = Style::default().fg(theme.dim);
        const PROMPT: &str = "jq › ";
        let mut spans = vec![
            Span::styled(PROMPT, Style::default().fg(theme.accent)),
            Span::styled(self.filter.text().to_owned(), Style::default().fg(theme.fg)),
        ];
        let status = match self.filter.state() {
            FilterState::Empty => String::new(),
            FilterState::Running => "  running…".into(),
            FilterState::Ok(1) => "  1 result".into(),
            FilterState::Ok(n) => format!("  {n} results"),
            FilterState::Compile(_) | FilterState::Run(_) => String::new(),
        };
        spans.push(Span::styled(status, dim));
        if !self.filter.editing() {
            spans.push(Span::styled("  (/ to edit)", dim));
        }
        buf.set_line(r.x, r.y, &Line::from(spans), r.width);
        if self.filter.editing() {
            let x = r.x as usize + PROMPT.chars().count() + self.filter.cursor_col();
            if x < r.right() as usize {
                buf[(x as u16, r.y)].set_style(Style::default().add_modifier(Modifier::REVERSED));
            }
        }
        let Some(e) = error else { return };
        let red = Style::default().fg(theme.error);
        let line = match self.filter.state() {
            FilterState::Compile(err) => {
                let p = err.first();
                let col = p.map_or(0, |p| filter::column_of(self.filter.text(), p.offset));
                let msg = p.map_or_else(|| err.to_string(), ToString::to_string);
                let pad = " ".repeat(PROMPT.chars().count() + col);
                Line::styled(format!("{pad}^ col {}: {msg}", col + 1), red)
            }
            FilterState::Run(m) => Line::styled(format!("error: {m}"), red),
            _ => return,
        };
        buf.set_line(e.x, e.y, &line, e.width);
    }
}

/// The inspector's side of the filter: each node's own text, and what
/// the Output tab shows while one is set.
impl super::Inspector {
    /// Keeps the filter typed for the node shown, and takes up `next`'s.
    pub(super) fn switch_filter(&mut self, next: Option<&str>) {
        if let Some(s) = &self.shown {
            let key = (self.context.clone(), s.id.clone());
            if self.filter.active() {
                self.filters.insert(key, self.filter.text().to_owned());
            } else {
                self.filters.remove(&key);
            }
        }
        let text = next
            .and_then(|id| self.filters.get(&(self.context.clone(), id.to_owned())))
            .cloned()
            .unwrap_or_default();
        self.filter.set_text(&text);
        self.filtered = None;
    }

    /// The inspector now shows the live workbench (`""`) or a saved run
    /// (its id): each keeps its own filters per node.
    pub fn set_context(&mut self, context: &str) {
        if self.context != context {
            self.switch_filter(None);
            self.shown = None;
            self.context = context.to_owned();
        }
    }

    /// Sets the jq filter of the Output tab (from history or the command
    /// palette) and runs it; an empty text removes the filter.
    pub fn set_filter(&mut self, text: &str) {
        self.filter.set_text(text);
        self.run_filter();
    }

    /// The jq filter text of the Output tab.
    pub fn filter_text(&self) -> &str {
        self.filter.text()
    }

    /// The tree the Output tab shows: the filtered one while a filter is
    /// set and has produced something.
    pub(super) fn output_tree_mut(&mut self) -> Option<&mut JsonTree> {
        if self.filter.active() && self.filtered.is_some() {
            self.filtered.as_mut()
        } else if self.filter.active() && self.filter.failed() {
            None
        } else {
            self.output.as_mut()
        }
    }

    pub(super) fn run_filter(&mut self) {
        if !self.filter.active() {
            self.filtered = None;
        }
        let input = self
            .shown
            .as_ref()
            .and_then(|s| s.record.as_ref())
            .map(|r| super::shared::SharedValue::Output(std::sync::Arc::clone(r)));
        self.filter.run(input, self.done_tx.clone());
    }
}
