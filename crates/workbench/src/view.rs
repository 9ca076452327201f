//! Drawing the workbench: the App's state in, one frame out. The panes,
//! the status bar and the overlays each draw their part; this lays them
//! out and records where each went.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout};

use ratatui::layout::Rect;

use super::app::{App, Areas, Focus};
use super::dag::DagView;
use super::overlay::Overlay;
use super::{overlay, status};

/// Draws the whole screen and remembers where each pane went, for the
/// mouse.
pub fn draw(app: &mut App, f: &mut Frame<'_>) {
    let area = f.area();
    // The theme's background under everything (a light theme on a dark
    // terminal stays light).
    f.buffer_mut().set_style(area, app.theme.base());
    // The status bar, and under it the footer with the mode's keys (left
    // out on a screen too short to spare the row).
    let footer_rows = if area.height >= 12 { 1 } else { 0 };
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Min(3),
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
    // The timeline's rows are worked out once per frame.
    let bars = (app.timeline.shown && app.comp.is_some()).then(|| app.timeline_bars());
    let dag_rows = app.dag_height(cols[1].height, bars.as_ref().map(Vec::len));
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
    if app.zoom {
        let whole = rows[0];
        areas = Areas {
            editor: Rect::default(),
            dag: Rect::default(),
            inspector: Rect::default(),
            overlay: Rect::default(),
        };
        match app.focus {
            Focus::Editor => areas.editor = whole,
            Focus::Dag => areas.dag = whole,
            Focus::Inspector => areas.inspector = whole,
        }
    }
    app.areas = areas;
    let buf = f.buffer_mut();
    if !areas.editor.is_empty() {
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
                let focused = app.focus == Focus::Editor;
                snapshot(
                    source,
                    &v.entry.id,
                    line,
                    areas.editor,
                    buf,
                    &app.theme,
                    focused,
                );
            }
            None => app
                .editor
                .render(areas.editor, buf, &app.theme, app.focus == Focus::Editor),
        }
    }
    if areas.dag.is_empty() {
        // Zoomed on another pane: the DAG is not drawn.
    } else if let Some(bars) = &bars {
        let view = super::timeline::TimelineView {
            bars,
            selected: app.dag.selected,
            theme: &app.theme,
            focused: app.focus == Focus::Dag,
            title: app.timeline_title(),
            pauses: app.timeline_pauses(),
        };
        ratatui::widgets::Widget::render(view, areas.dag, buf);
    } else if let (Some(comp), Some(layout)) = (&app.comp, &app.layout) {
        let view = DagView {
            comp,
            layout,
            nodes: &app.visuals,
            theme: &app.theme,
            tick: app.tick,
            focused: app.focus == Focus::Dag,
        };
        ratatui::widgets::StatefulWidget::render(view, areas.dag, buf, &mut app.dag);
    } else {
        overlay::empty_dag(
            areas.dag,
            buf,
            &app.theme,
            app.errors,
            app.focus == Focus::Dag,
        );
    }
    if !areas.inspector.is_empty() {
        app.inspector.render(
            areas.inspector,
            buf,
            &app.theme,
            app.focus == Focus::Inspector,
        );
    }
    // The completion popup over whatever lies under the cursor.
    if app.focus == Focus::Editor
        && app.viewing.is_none()
        && let (Some(popup), Some(at)) = (&app.editor.completion, app.editor.cursor_on_screen())
    {
        popup.render(at, rows[0], buf, &app.theme);
    }
    status::render(app, rows[1], buf);
    if footer_rows > 0 {
        status::footer(app, rows[2], buf);
    }
    if let Some(ov) = &app.overlay {
        app.areas.overlay = overlay::rect_of(ov, area);
        let kept = match ov {
            Overlay::Messages { scroll, wrap } => Some(super::messages::view::render(
                &app.messages.log,
                app.editor.diagnostics(),
                *scroll,
                *wrap,
                &app.theme,
                area,
                buf,
            )),
            other => overlay::render(other, &app.theme, &app.keymap, area, buf),
        };
        // The scroll stays within what there is: the next key moves it
        // from what is on screen.
        if let (Some(kept), Some(s)) = (kept, app.overlay.as_mut().and_then(Overlay::scroll_mut)) {
            *s = kept;
        }
        // History's rows sit under its header line; the selection scrolls.
        if let (Some(f), Some(ov @ Overlay::History(h))) = (&app.overlay_find, &app.overlay)
            && let Some(lines) = app.overlay_text(ov)
        {
            let mut inner = ratatui::widgets::Block::bordered().inner(app.areas.overlay);
            inner.y += 1;
            inner.height = inner.height.saturating_sub(1);
            f.paint(
                &lines,
                h.skip(app.areas.overlay.height),
                inner,
                buf,
                &app.theme,
            );
        }
        let wrapped = matches!(app.overlay, Some(Overlay::Messages { wrap: true, .. }));
        if let (Some(f), Some(ov), Some(top)) = (&app.overlay_find, &app.overlay, kept)
            && !wrapped
            && let Some(lines) = app.overlay_text(ov)
        {
            let inner = ratatui::widgets::Block::bordered().inner(app.areas.overlay);
            f.paint(&lines, top as usize, inner, buf, &app.theme);
        }
    }
    // A server's question is drawn over everything: it has the keys.
    if !app.asks.hidden {
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
    focused: bool,
) {
    use ratatui::style::{Modifier, Style};
    use ratatui::text::{Line, Span};
    use ratatui::widgets::{Block, Paragraph, Widget};
    let block = Block::bordered()
        .title(theme.pane_title(
            &format!("run {run} · the file as it ran (read-only)"),
            focused,
        ))
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
