//! How the DAG pane draws: the composition's layout as glyph rows with
//! status colours, fan-out progress, breakpoints and the selection (only
//! the cells on screen), and the pane before any plan loaded.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, StatefulWidget, Widget, Wrap};

use super::DagState;
use super::layout::{self, DagLayout};
use crate::state::NodeVisual;
use crate::theme::{Theme, status_glyph};
use pipewright_engine::file::model::Composition;
use pipewright_engine::run::trace::NodeStatus;

/// Draws one composition with its live node states.
pub struct DagView<'a> {
    /// The composition drawn; node ids come from here.
    pub comp: &'a Composition,
    /// Its layout, made once with [`DagLayout::new`].
    pub layout: &'a DagLayout,
    /// Indexed like `comp.nodes`; missing entries draw as pending.
    pub nodes: &'a [NodeVisual],
    /// Colours of every glyph, edge and border.
    pub theme: &'a Theme,
    /// Animation tick for the running spinner.
    pub tick: u64,
    /// The pane has the focus: its border is drawn brighter.
    pub focused: bool,
}

impl DagView<'_> {
    fn title(&self, width: u16) -> String {
        let full = self.full_title();
        if full.chars().count() + 2 <= width as usize {
            return full;
        }
        // Narrow: the counts as glyphs.
        let mark = if self.focused { "▶ " } else { "" };
        let mut t = format!(" {mark}DAG {} · {}", self.comp.name, self.comp.nodes.len());
        for (c, glyph, _) in self.counts() {
            t.push_str(&format!(" {glyph}{c}"));
        }
        t.push(' ');
        t
    }

    /// How many nodes are ok, running and failed (the ones there are),
    /// with their glyph and word.
    fn counts(&self) -> Vec<(usize, &'static str, &'static str)> {
        [
            (NodeStatus::Ok, "✓", "ok"),
            (NodeStatus::Running, "●", "running"),
            (NodeStatus::Failed, "✗", "failed"),
        ]
        .into_iter()
        .map(|(s, g, w)| (self.nodes.iter().filter(|v| v.status == s).count(), g, w))
        .filter(|(c, _, _)| *c > 0)
        .collect()
    }

    fn full_title(&self) -> String {
        let mark = if self.focused { "▶ " } else { "" };
        let mut t = format!(
            " {mark}DAG {} · {} nodes",
            self.comp.name,
            self.comp.nodes.len()
        );
        for (c, _, word) in self.counts() {
            t.push_str(&format!(" · {c} {word}"));
        }
        t.push(' ');
        t
    }

    /// Arrows on the bottom border saying where more content lies.
    fn more_hint(state: &DagState, l: &DagLayout, area: Rect) -> String {
        let (w, h) = l.size();
        let mut s = String::new();
        if state.scroll_x > 0 {
            s.push('◀');
        }
        if state.scroll_x + (area.width as usize) < w {
            s.push('▶');
        }
        if state.scroll_y > 0 {
            s.push('▲');
        }
        if state.scroll_y + (area.height as usize) < h {
            s.push('▼');
        }
        if s.is_empty() { s } else { format!(" {s} ") }
    }

    /// Re-colours, on content row `y`, the edge cells of the selected node.
    fn light_edges(
        &self,
        cells: &[(usize, usize)],
        buf: &mut Buffer,
        inner: Rect,
        (x0, y0): (usize, usize),
        y: usize,
    ) {
        let from = cells.partition_point(|c| c.0 < y);
        let to = x0 + inner.width as usize;
        for &(_, x) in cells[from..].iter().take_while(|c| c.0 == y) {
            if x >= x0 && x < to {
                let at = (inner.x + (x - x0) as u16, inner.y + (y - y0) as u16);
                if let Some(cell) = buf.cell_mut(at) {
                    // Heavy lines in the accent colour: the selected node's
                    // edges stand out in a dense graph, and without colour.
                    let heavy = heavy_glyph(cell.symbol());
                    cell.set_symbol(heavy);
                    cell.set_fg(self.theme.accent);
                    cell.modifier.insert(Modifier::BOLD);
                }
            }
        }
    }

    /// The pieces of node `i`'s text and their styles.
    fn node_pieces(&self, i: usize, selected: bool) -> Vec<(String, Style)> {
        let t = self.theme;
        let default = NodeVisual::default();
        let v = self.nodes.get(i).unwrap_or(&default);
        let base = Style::default().fg(t.fg);
        let (marker, marker_style) = match (v.breakpoint, v.paused_before) {
            (true, true) => ("◉", base.fg(t.breakpoint).add_modifier(Modifier::BOLD)),
            (true, false) => ("●", base.fg(t.breakpoint)),
            (false, true) => ("▸", base.fg(t.accent).add_modifier(Modifier::BOLD)),
            // Differs from the run it was compared with (History `D`).
            (false, false) if v.changed => ("Δ", base.fg(t.warning).add_modifier(Modifier::BOLD)),
            (false, false) => (" ", base),
        };
        let glyph_color = if v.mocked && v.status == NodeStatus::Ok {
            t.mocked
        } else {
            t.status(v.status)
        };
        let mut name = base;
        match v.status {
            NodeStatus::Failed => name = name.fg(t.failed),
            NodeStatus::Stale => name = name.fg(t.stale).add_modifier(Modifier::ITALIC),
            NodeStatus::Skipped | NodeStatus::Cancelled => name = name.fg(t.dim),
            _ => {}
        }
        if v.paused_before {
            name = name.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
        }
        // A server's question waits for the person: `?` instead of the
        // spinner.
        let glyph = if v.asking {
            (
                "?".to_string(),
                base.fg(t.warning).add_modifier(Modifier::BOLD),
            )
        } else {
            (
                status_glyph(v.status, v.mocked, self.tick).to_string(),
                base.fg(glyph_color),
            )
        };
        let mut pieces = vec![
            (marker.to_string(), marker_style),
            glyph,
            (" ".to_string(), base),
        ];
        let id = &self.comp.nodes[i].id;
        // The server's progress report fills the id from the left like a
        // bar while the call runs.
        let filled = match (&v.note, v.status) {
            (Some(n), NodeStatus::Running) => n.fraction().map(|f| {
                ((f * id.chars().count() as f64).round() as usize).min(id.chars().count())
            }),
            _ => None,
        };
        match filled {
            Some(k) if k > 0 => {
                let bar = name.fg(t.running).add_modifier(Modifier::REVERSED);
                pieces.push((id.chars().take(k).collect(), bar));
                pieces.push((id.chars().skip(k).collect(), name));
            }
            _ => pieces.push((id.clone(), name)),
        }
        // A breakpoint or the step marker holds the marker column: `Δ`
        // goes right after the id instead, in the column the layout keeps
        // free there (a fan-out's counter then follows it).
        let late_delta = v.changed && (v.breakpoint || v.paused_before);
        if late_delta {
            pieces.push((
                "Δ".to_string(),
                base.fg(t.warning).add_modifier(Modifier::BOLD),
            ));
        }
        if let Some((done, total)) = v.progress {
            let c = if v.status == NodeStatus::Running {
                t.running
            } else {
                t.dim
            };
            let lead = if late_delta { "" } else { " " };
            pieces.push((format!("{lead}{done}/{total}"), base.fg(c)));
            // Failed iterations right after the counter (`4/4✗4`), in the
            // columns the layout keeps for it, so `4/4` never hides them.
            if v.failed_iterations > 0 {
                pieces.push((
                    format!("✗{}", v.failed_iterations),
                    base.fg(t.failed).add_modifier(Modifier::BOLD),
                ));
            }
            pieces.push((" ".to_string(), base));
        }
        if selected {
            for (_, s) in pieces.iter_mut().skip(1) {
                *s = s.patch(t.selected());
            }
            if let Some(last) = pieces.last_mut().filter(|p| p.0 == " ") {
                last.1 = base;
            }
        }
        pieces
    }
}

impl StatefulWidget for DagView<'_> {
    type State = DagState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut DagState) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Plain)
            .border_style(self.theme.border_style(self.focused))
            .style(self.theme.base())
            .title(self.title(area.width));
        let inner = block.inner(area);
        state.settle(self.layout, inner);
        let hint = Self::more_hint(state, self.layout, inner);
        let block = if hint.is_empty() {
            block
        } else {
            block.title_bottom(Line::from(hint).right_aligned())
        };
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        if self.layout.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                "no nodes",
                inner.width as usize,
                Style::default().fg(self.theme.dim),
            );
            return;
        }

        let (x0, y0) = (state.scroll_x, state.scroll_y);
        let (w, h) = (inner.width as usize, inner.height as usize);
        let edge = Style::default().fg(self.theme.dim);
        let arrow = Style::default().fg(self.theme.border_focused);
        let sel = state.current(self.layout);
        let lit = sel.map(|i| self.layout.edges_of(i)).unwrap_or_default();
        for dy in 0..h {
            let y = y0 + dy;
            let sy = inner.y + dy as u16;
            for &(x, bits) in self.layout.edge_cells(y, x0, x0 + w) {
                if let Some(cell) = buf.cell_mut((inner.x + (x - x0) as u16, sy)) {
                    cell.set_symbol(layout::edge_glyph(bits));
                    cell.set_style(if bits & layout::ARROW != 0 {
                        arrow
                    } else {
                        edge
                    });
                }
            }
            self.light_edges(&lit, buf, inner, (x0, y0), y);
            for &i in self.layout.row_nodes(y) {
                let (nx, _) = self.layout.position(i);
                if nx >= x0 + w {
                    break;
                }
                if nx + self.layout.node_width(i) < x0 {
                    continue;
                }
                let mut cx = nx;
                for (text, style) in self.node_pieces(i, sel == Some(i)) {
                    for ch in text.chars() {
                        let on_screen = cx >= x0 && cx < x0 + w;
                        let at = (inner.x + cx.saturating_sub(x0) as u16, sy);
                        if let Some(cell) = buf.cell_mut(at).filter(|_| on_screen) {
                            cell.set_char(ch);
                            cell.set_style(style);
                        }
                        cx += 1;
                    }
                }
            }
        }
    }
}

/// The heavy box-drawing glyph of a light one (the selected node's edges).
fn heavy_glyph(light: &str) -> &'static str {
    match light {
        "─" => "━",
        "│" => "┃",
        "┼" => "╋",
        "┴" => "┻",
        "┬" => "┳",
        "┤" => "┫",
        "├" => "┣",
        "┌" => "┏",
        "┐" => "┓",
        "└" => "┗",
        "┘" => "┛",
        "▶" => "▶",
        _ => "━",
    }
}

/// The DAG pane before any plan loaded.
pub(crate) fn empty(area: Rect, buf: &mut Buffer, t: &Theme, errors: usize, focused: bool) {
    let text = if errors > 0 {
        format!("no plan: the file has {errors} error(s); see the editor (i edits, m lists them)")
    } else {
        "no plan yet: i (or Enter) edits the file".to_owned()
    };
    Paragraph::new(Span::styled(text, Style::default().fg(t.dim)))
        .wrap(Wrap { trim: true })
        .block(
            Block::bordered()
                .title(t.pane_title("DAG", focused))
                .border_style(t.border_style(focused))
                .style(t.base()),
        )
        .render(area, buf);
}
