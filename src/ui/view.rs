//! Drawing the workbench: the App's state in, one frame out. The panes,
//! the status bar and the overlays each draw their part; this lays them
//! out and records where each went.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout};

use super::app::{App, Areas, Focus};
use super::dag::DagView;
use super::{overlay, status};

/// Draws the whole screen and remembers where each pane went, for the
/// mouse.
pub fn draw(app: &mut App, f: &mut Frame<'_>) {
    let area = f.area();
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Min(3), Constraint::Length(1)])
        .split(area);
    let editor_share = if area.width >= 160 { 42 } else { 50 };
    let cols = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([
            Constraint::Percentage(editor_share),
            Constraint::Percentage(100 - editor_share),
        ])
        .split(rows[0]);
    // The timeline's rows are worked out once per frame.
    let bars = (app.timeline && app.comp.is_some()).then(|| app.timeline_bars());
    let dag_rows = app.dag_height(cols[1].height, bars.as_ref().map(Vec::len));
    let right = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(dag_rows), Constraint::Min(3)])
        .split(cols[1]);
    app.areas = Areas {
        editor: cols[0],
        dag: right[0],
        inspector: right[1],
    };
    let buf = f.buffer_mut();
    match app
        .viewing
        .as_ref()
        .and_then(|v| v.source.as_deref().map(|s| (v, s)))
    {
        Some((v, source)) => {
            let line = app
                .dag
                .selected
                .and_then(|i| app.comp.as_ref()?.nodes.get(i))
                .map_or(1, |n| n.span.start.line as usize);
            snapshot(source, &v.entry.id, line, cols[0], buf, &app.theme);
        }
        None => app
            .editor
            .render(cols[0], buf, &app.theme, app.focus == Focus::Editor),
    }
    if let Some(bars) = &bars {
        let view = super::timeline::TimelineView {
            bars,
            selected: app.dag.selected,
            theme: &app.theme,
            focused: app.focus == Focus::Dag,
            title: app.timeline_title(),
        };
        ratatui::widgets::Widget::render(view, right[0], buf);
    } else if let (Some(comp), Some(layout)) = (&app.comp, &app.layout) {
        let view = DagView {
            comp,
            layout,
            nodes: &app.visuals,
            theme: &app.theme,
            tick: app.tick,
            focused: app.focus == Focus::Dag,
        };
        ratatui::widgets::StatefulWidget::render(view, right[0], buf, &mut app.dag);
    } else {
        overlay::empty_dag(
            right[0],
            buf,
            &app.theme,
            app.errors,
            app.focus == Focus::Dag,
        );
    }
    app.inspector
        .render(right[1], buf, &app.theme, app.focus == Focus::Inspector);
    status::render(app, rows[1], buf);
    if let Some(ov) = &app.overlay {
        overlay::render(ov, &app.theme, &app.keymap, area, buf);
    }
    // A server's question is drawn over everything: it has the keys.
    let provider = app.sampling_provider().map(|p| p.model.clone());
    super::ask::view::render(
        &app.asks,
        provider.as_deref(),
        &app.theme,
        &app.keymap,
        area,
        buf,
    );
}

/// A saved run's file text in the editor's place: read-only, numbered, the
/// selected node's line in view and marked.
fn snapshot(
    source: &str,
    run: &str,
    line: usize,
    area: ratatui::layout::Rect,
    buf: &mut ratatui::buffer::Buffer,
    theme: &super::theme::Theme,
) {
    use ratatui::style::{Modifier, Style};
    use ratatui::text::{Line, Span};
    use ratatui::widgets::{Block, Paragraph, Widget};
    let block = Block::bordered()
        .title(format!(" run {run} · the file as it ran (read-only) "))
        .border_style(theme.border_style(false));
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
