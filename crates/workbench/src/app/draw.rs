//! Drawing the workbench: the screen laid out (the editor beside the DAG
//! over the inspector, the status bar and the footer), each component drawn
//! into its place with the context it reads, the overlay and a server's
//! question over them, and where each went kept for the mouse.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use super::*;
use crate::component::Ctx;
use crate::timeline::Bar;

impl App {
    /// Draws the whole screen and remembers where each pane went, for the
    /// mouse.
    pub fn draw(&mut self, f: &mut Frame<'_>) {
        let area = f.area();
        // The theme's background under everything (a light theme on a dark
        // terminal stays light).
        f.buffer_mut().set_style(area, self.theme.base());
        // The status bar, and under it the footer with the mode's keys (left
        // out on a screen too short to spare the row); above the bar, while
        // it is fresh, a message too long for the bar on a row or two of its
        // own.
        let footer_rows = if area.height >= 12 { 1 } else { 0 };
        let message_rows = if area.height >= 12 {
            status::message_rows(self, area.width)
        } else {
            0
        };
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Min(3),
                Constraint::Length(message_rows),
                Constraint::Length(1),
                Constraint::Length(footer_rows),
            ])
            .split(area);
        let editor_share = if area.width >= 160 { 42 } else { 50 };
        let cols = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([
                Constraint::Percentage(editor_share),
                Constraint::Percentage(100 - editor_share),
            ])
            .split(rows[0]);
        // The timeline's rows decide the DAG pane's height.
        let timeline_rows =
            (self.timeline.shown() && self.comp.is_some()).then(|| self.timeline_bars().len());
        let dag_rows = self.dag_height(cols[1].height, timeline_rows);
        let right = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Length(dag_rows), Constraint::Min(3)])
            .split(cols[1]);
        let mut areas = Areas {
            editor: cols[0],
            dag: right[0],
            inspector: right[1],
            overlay: Rect::default(),
        };
        // Zoomed, the focused pane has the whole screen and the others none.
        if self.zoom {
            let whole = rows[0];
            areas = Areas::default();
            match self.focus {
                Focus::Editor => areas.editor = whole,
                Focus::Dag => areas.dag = whole,
                Focus::Inspector => areas.inspector = whole,
            }
        }
        self.areas = areas;
        let buf = f.buffer_mut();
        if !areas.editor.is_empty() {
            self.draw_editor(areas.editor, buf);
        }
        if !areas.dag.is_empty() {
            let ctx = ctx!(self).focused(self.focus == Focus::Dag);
            if timeline_rows.is_some() {
                self.timeline.draw(areas.dag, buf, &ctx);
            } else {
                self.dag.draw(areas.dag, buf, &ctx);
            }
        }
        if !areas.inspector.is_empty() {
            let ctx = ctx!(self).focused(self.focus == Focus::Inspector);
            self.inspector.draw(areas.inspector, buf, &ctx);
        }
        // The completion popup over whatever lies under the cursor.
        if self.focus == Focus::Editor && self.viewing.is_none() {
            let ctx = Ctx {
                cursor: self.editor.cursor_on_screen(),
                ..ctx!(self)
            };
            if let Some(popup) = self.completion.as_mut()
                && ctx.cursor.is_some()
            {
                popup.draw(rows[0], buf, &ctx);
            }
        }
        if message_rows > 0 {
            status::message(self, rows[1], buf);
        }
        status::render(self, rows[2], buf, message_rows > 0);
        if footer_rows > 0 {
            status::footer(self, rows[3], buf);
        }
        if self.overlay.is_some() {
            self.draw_overlay(area, buf);
        }
        // A server's question is drawn over everything: it has the keys.
        if !self.asks.is_hidden() {
            let model = self.sampling_model();
            let ctx = Ctx {
                provider: model.as_deref(),
                ..ctx!(self)
            };
            self.asks.draw(area, buf, &ctx);
        }
        // While typing, the terminal's own cursor sits on the editor's, so
        // an input method's window and a screen reader follow the text;
        // elsewhere it stays hidden.
        if self.mode() == Mode::Edit
            && let Some(at) = self.editor.cursor_on_screen()
        {
            f.set_cursor_position(at);
        }
    }

    /// The editor, or in its place the file text of the saved run on
    /// screen.
    fn draw_editor(&mut self, area: Rect, buf: &mut Buffer) {
        let focused = self.focus == Focus::Editor;
        match self
            .viewing
            .as_ref()
            .and_then(|v| v.source.as_deref().map(|s| (v, s)))
        {
            Some((v, source)) => {
                let line = self
                    .dag
                    .selected()
                    .and_then(|i| self.comp.as_ref()?.nodes.get(i))
                    .map_or(1, |n| n.span.start.line as usize);
                let title = match &self.recording {
                    Some(_) => format!(
                        "recording {} · the pipeline {} writes (read-only)",
                        v.entry.id,
                        self.keymap.label(crate::keys::Action::WritePipeline)
                    ),
                    None => format!("run {} · the file as it ran (read-only)", v.entry.id),
                };
                snapshot(source, &title, line, area, buf, &self.theme, focused);
            }
            None => {
                let ctx = ctx!(self).focused(focused);
                self.editor.draw(area, buf, &ctx);
            }
        }
    }

    /// The open overlay over the screen, and the marks of its search.
    fn draw_overlay(&mut self, area: Rect, buf: &mut Buffer) {
        let Some(r) = self.overlay.as_ref().map(|ov| ov.rect(area)) else {
            return;
        };
        self.areas.overlay = r;
        let ctx = Ctx {
            log: self.messages.log(),
            diagnostics: self.editor.diagnostics(),
            ..ctx!(self)
        };
        let Some(ov) = self.overlay.as_mut() else {
            return;
        };
        ov.draw(area, buf, &ctx);
        // The scroll the overlay kept (within what there is): the search
        // marks go on the lines from there.
        let kept = ov.scroll_mut().map(|s| *s);
        let Some(f) = &self.overlay_find else {
            return;
        };
        let Some(lines) = self.overlay_lines() else {
            return;
        };
        match &self.overlay {
            // History's rows sit under its header line; the selection
            // scrolls.
            Some(Overlay::History(h)) => {
                let mut inner = Block::bordered().inner(r);
                inner.y += 1;
                inner.height = inner.height.saturating_sub(1);
                f.paint(&lines, h.skip(r.height), inner, buf, &self.theme);
            }
            Some(Overlay::Messages(m)) if m.wraps() => {}
            _ => {
                if let Some(top) = kept {
                    let inner = Block::bordered().inner(r);
                    f.paint(&lines, top as usize, inner, buf, &self.theme);
                }
            }
        }
    }

    /// The timeline pane's title for what is on screen.
    #[cfg(test)]
    pub(crate) fn timeline_title(&self) -> String {
        let ctx = ctx!(self);
        crate::timeline::Timeline::title(&ctx)
    }

    /// The timeline's rows for what is on screen.
    pub(crate) fn timeline_bars(&self) -> Vec<Bar> {
        let ctx = ctx!(self);
        self.timeline.bars(&ctx)
    }

    /// The DAG pane's height: enough for the graph (`timeline_rows` rows
    /// when it shows the timeline), at most half the column (two thirds
    /// for the timeline), never less than 5.
    fn dag_height(&self, total: u16, timeline_rows: Option<usize>) -> u16 {
        if let Some(rows) = timeline_rows {
            // A row per node and shown iteration, the axis and the borders.
            let rows = u16::try_from(rows).unwrap_or(u16::MAX);
            return rows.saturating_add(3).clamp(5, (total * 2 / 3).max(5));
        }
        let layers_tall = self
            .comp
            .as_ref()
            .map(|c| c.waves.iter().map(Vec::len).max().unwrap_or(1))
            .unwrap_or(1) as u16;
        let want = layers_tall.saturating_mul(2).saturating_add(3);
        want.clamp(5, (total / 2).max(5))
    }
}

/// A saved run's file text in the editor's place: read-only, numbered, the
/// selected node's line in view and marked.
fn snapshot(
    source: &str,
    title: &str,
    line: usize,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    focused: bool,
) {
    let block = Block::bordered()
        .title(theme.pane_title(title, focused))
        .border_style(theme.border_style(focused));
    let inner = block.inner(area);
    block.render(area, buf);
    let rows = inner.height as usize;
    let top = line.saturating_sub(rows / 3).max(1);
    let lines: Vec<Line> = source
        .lines()
        .enumerate()
        .skip(top - 1)
        .take(rows)
        .map(|(i, text)| {
            let n = i + 1;
            let style = if n == line {
                Style::default().fg(theme.fg).add_modifier(Modifier::BOLD)
            } else {
                Style::default().fg(theme.fg)
            };
            Line::from(vec![
                Span::styled(format!("{n:>4} "), Style::default().fg(theme.dim)),
                Span::styled(text.to_owned(), style),
            ])
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}
