//! The DAG pane: a composition drawn left to right as glyph rows
//! (`✓ find ─▶ ● details`) with status colours, fan-out progress,
//! breakpoints and the selection; scrolls to keep the selection in view and
//! draws only the cells it shows. The layout is computed in [`layout`] and
//! drawn by [`DagView`]. [`Dag`] is the pane as a component: it owns the
//! plan's layout, the selection and the scroll, and turns keys and clicks
//! into messages.

mod layout;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, StatefulWidget, Widget, Wrap};

pub use layout::DagLayout;

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::state::{Focus, NodeVisual};
use crate::theme::{Theme, status_glyph};
use pipewright_engine::file::model::Composition;
use pipewright_engine::run::trace::NodeStatus;

/// The DAG pane: the layout of the composition on screen, and where the
/// pane's selection and scroll are.
#[derive(Debug, Default)]
pub(crate) struct Dag {
    /// The layout of the composition on screen (`None` before a plan
    /// loaded).
    layout: Option<DagLayout>,
    /// The selection and scroll.
    state: DagState,
    /// The selected node's id: selected again when the plan changes.
    selected_id: Option<String>,
}

impl Dag {
    /// Lays out `comp`, the composition now on screen.
    pub(crate) fn show(&mut self, comp: &Composition) {
        self.layout = Some(DagLayout::new(comp));
    }

    /// Exchanges the layout and selection with a stashed plan's (a saved
    /// run goes on screen, or the live plan comes back).
    pub(crate) fn swap_plan(
        &mut self,
        layout: &mut Option<DagLayout>,
        selected: &mut Option<usize>,
    ) {
        std::mem::swap(&mut self.layout, layout);
        let was = self.state.selected;
        self.state.select(*selected);
        *selected = was;
    }

    /// The selected node, indexed like the composition's nodes.
    pub(crate) fn selected(&self) -> Option<usize> {
        self.state.selected
    }

    /// Selects node `i` (or nothing); the next frame scrolls it into view.
    pub(crate) fn select(&mut self, i: Option<usize>) {
        self.state.select(i);
    }

    /// The id of the node last selected, kept so that a new plan selects
    /// it again.
    pub(crate) fn selected_id(&self) -> Option<&str> {
        self.selected_id.as_deref()
    }

    /// Remembers the selected node's id (none: nothing to select again).
    pub(crate) fn remember(&mut self, id: Option<String>) {
        self.selected_id = id;
    }
}

impl Component for Dag {
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.state.on_key(key, self.layout.as_ref()) {
            DagEffect::Ignored => return Handled::Ignored,
            DagEffect::Stay => {}
            DagEffect::Select(sel) => queue.push(Msg::Select(sel)),
            DagEffect::Edit => queue.push(Msg::Focus(Focus::Editor)),
            DagEffect::Inspect => queue.push(Msg::Focus(Focus::Inspector)),
            DagEffect::NoPlan => {
                let k = ctx.keymap.label(Action::Help);
                queue.push(Msg::Say {
                    text: format!("no plan yet: i (or Enter) edits the file; {k} lists the keys"),
                    error: false,
                });
            }
        }
        Handled::Taken
    }

    /// A click selects the node under it; the wheel scrolls.
    fn on_mouse(
        &mut self,
        ev: MouseEvent,
        _area: Rect,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match ev.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(layout) = &self.layout
                    && let Some(i) = self.state.hit(layout, ev.column, ev.row)
                {
                    queue.push(Msg::Select(Some(i)));
                }
            }
            MouseEventKind::ScrollDown => self.state.scroll_by(0, 2),
            MouseEventKind::ScrollUp => self.state.scroll_by(0, -2),
            MouseEventKind::ScrollRight => self.state.scroll_by(4, 0),
            MouseEventKind::ScrollLeft => self.state.scroll_by(-4, 0),
            _ => return Handled::Ignored,
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        match (ctx.comp, &self.layout) {
            (Some(comp), Some(layout)) => {
                let view = DagView {
                    comp,
                    layout,
                    nodes: ctx.visuals,
                    theme: ctx.theme,
                    tick: ctx.tick,
                    focused: ctx.focused,
                };
                view.render(area, buf, &mut self.state);
            }
            _ => empty(area, buf, ctx, ctx.focused),
        }
    }
}

/// Selection and scroll of the DAG pane, kept between frames.
#[derive(Debug, Default, Clone)]
pub struct DagState {
    /// The selected node, indexed like `Composition::nodes`.
    selected: Option<usize>,
    /// Content column shown at the pane's left edge.
    scroll_x: usize,
    /// Content row shown at the pane's top edge.
    scroll_y: usize,
    /// The inner area of the last render; `hit` maps cells through it.
    area: Rect,
    /// Content size seen at the last render, to clamp `scroll_by`.
    content: (usize, usize),
    /// The selection the last render scrolled into view; a new selection
    /// is revealed once, so wheel scrolling is not undone on the next frame.
    revealed: Option<usize>,
}

/// What a key in the DAG pane does beyond moving its selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DagEffect {
    /// Not a DAG key: the app says what it would do elsewhere.
    Ignored,
    /// Taken; nothing else changes.
    Stay,
    /// The selection moved to this node: the app shows it and moves the
    /// editor to its definition.
    Select(Option<usize>),
    /// The editor takes the keys (`i`, or Enter with no graph).
    Edit,
    /// The inspector takes the keys (Enter).
    Inspect,
    /// A letter with no graph yet: the app says how to start.
    NoPlan,
}

impl DagState {
    /// What a key does in the pane over `layout` (none for a new or
    /// broken file).
    fn on_key(&mut self, key: KeyEvent, layout: Option<&DagLayout>) -> DagEffect {
        // `i` always reaches the editor, and Enter does too while there is
        // no graph to inspect (a new or broken file).
        if key.code == KeyCode::Char('i') && key.modifiers.is_empty()
            || key.code == KeyCode::Enter && layout.is_none()
        {
            return DagEffect::Edit;
        }
        let Some(layout) = layout else {
            return match key.code {
                KeyCode::Char(_) => DagEffect::NoPlan,
                _ => DagEffect::Stay,
            };
        };
        // A chord is not a letter: Ctrl-G is not `g` (the app says what
        // it does elsewhere).
        if matches!(key.code, KeyCode::Char(_))
            && key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return DagEffect::Ignored;
        }
        let before = self.selected;
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => self.move_left(layout),
            KeyCode::Right | KeyCode::Char('l') => self.move_right(layout),
            KeyCode::Up | KeyCode::Char('k') => self.move_up(layout),
            KeyCode::Down | KeyCode::Char('j') => self.move_down(layout),
            // The first and the last node as drawn (lazygit's and k9s's g
            // and G): the top of the first layer, the bottom of the last.
            KeyCode::Home | KeyCode::Char('g') => self.select_first(layout),
            KeyCode::End | KeyCode::Char('G') => self.select_last(layout),
            KeyCode::Enter => return DagEffect::Inspect,
            _ => return DagEffect::Ignored,
        }
        if self.selected != before {
            DagEffect::Select(self.selected)
        } else {
            DagEffect::Stay
        }
    }

    /// Selects node `i` (or nothing); the next render scrolls it into view.
    pub fn select(&mut self, i: Option<usize>) {
        self.selected = i;
    }

    /// The selection if it still names a node of `l`.
    fn current(&self, l: &DagLayout) -> Option<usize> {
        self.selected.filter(|&i| i < l.len())
    }

    /// With nothing selected, the top node of the first layer.
    fn select_first(&mut self, l: &DagLayout) {
        self.selected = l.layer_nodes(0).next();
    }

    /// The bottom node of the last layer.
    fn select_last(&mut self, l: &DagLayout) {
        let last = l.layers().len().saturating_sub(1);
        if let Some(i) = l.layer_nodes(last).last() {
            self.selected = Some(i);
        }
    }

    /// Moves to the parent nearest in row, else to the nearest node of the
    /// previous layer.
    pub fn move_left(&mut self, l: &DagLayout) {
        let Some(i) = self.current(l) else {
            return self.select_first(l);
        };
        let k = l.layer_of(i);
        let target = nearest(l, i, l.parents(i).iter().copied()).or_else(|| {
            k.checked_sub(1)
                .and_then(|p| nearest(l, i, l.layer_nodes(p)))
        });
        if let Some(t) = target {
            self.selected = Some(t);
        }
    }

    /// Moves to the child nearest in row, else to the nearest node of the
    /// next layer.
    pub fn move_right(&mut self, l: &DagLayout) {
        let Some(i) = self.current(l) else {
            return self.select_first(l);
        };
        let k = l.layer_of(i);
        let target = nearest(l, i, l.children(i).iter().copied())
            .or_else(|| nearest(l, i, l.layer_nodes(k + 1)));
        if let Some(t) = target {
            self.selected = Some(t);
        }
    }

    /// Moves to the node above in the same layer.
    pub fn move_up(&mut self, l: &DagLayout) {
        let Some(i) = self.current(l) else {
            return self.select_first(l);
        };
        let above = l.layer_nodes(l.layer_of(i)).take_while(|&n| n != i).last();
        if let Some(t) = above {
            self.selected = Some(t);
        }
    }

    /// Moves to the node below in the same layer.
    pub fn move_down(&mut self, l: &DagLayout) {
        let Some(i) = self.current(l) else {
            return self.select_first(l);
        };
        let below = l.layer_nodes(l.layer_of(i)).skip_while(|&n| n != i).nth(1);
        if let Some(t) = below {
            self.selected = Some(t);
        }
    }

    /// Node under terminal cell (col,row), given the area the view was last
    /// rendered in.
    fn hit(&self, l: &DagLayout, col: u16, row: u16) -> Option<usize> {
        let a = self.area;
        if col < a.x || row < a.y || col >= a.right() || row >= a.bottom() {
            return None;
        }
        let x = (col - a.x) as usize + self.scroll_x;
        let y = (row - a.y) as usize + self.scroll_y;
        l.node_at(x, y)
    }

    /// Scrolls by whole cells (mouse wheel, drag); stops at the content's
    /// edges as last rendered.
    fn scroll_by(&mut self, dx: i32, dy: i32) {
        let max_x = self.content.0.saturating_sub(self.area.width as usize);
        let max_y = self.content.1.saturating_sub(self.area.height as usize);
        self.scroll_x = shift(self.scroll_x, dx, max_x);
        self.scroll_y = shift(self.scroll_y, dy, max_y);
    }

    /// Clamps the scroll to the content and reveals a new selection.
    fn settle(&mut self, l: &DagLayout, area: Rect) {
        self.area = area;
        self.content = l.size();
        let (w, h) = (area.width as usize, area.height as usize);
        let sel = self.current(l);
        if sel != self.revealed {
            if let Some(i) = sel {
                let (x, y) = l.position(i);
                let nw = l.node_width(i);
                if x < self.scroll_x || nw > w {
                    self.scroll_x = x;
                } else if x + nw > self.scroll_x + w {
                    self.scroll_x = x + nw - w;
                }
                if y < self.scroll_y {
                    self.scroll_y = y;
                } else if y >= self.scroll_y + h {
                    self.scroll_y = y + 1 - h.max(1);
                }
            }
            self.revealed = sel;
        }
        self.scroll_x = self.scroll_x.min(self.content.0.saturating_sub(w));
        self.scroll_y = self.scroll_y.min(self.content.1.saturating_sub(h));
    }
}

fn shift(v: usize, d: i32, max: usize) -> usize {
    let moved = v as i64 + d as i64;
    moved.clamp(0, max as i64) as usize
}

/// Among `candidates`, the node whose row is closest to node `from`'s
/// (the upper one on a tie).
fn nearest(l: &DagLayout, from: usize, candidates: impl Iterator<Item = usize>) -> Option<usize> {
    let y = l.position(from).1;
    candidates.min_by_key(|&c| {
        let cy = l.position(c).1;
        (cy.abs_diff(y), cy)
    })
}

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
        for (c, status, _) in self.counts() {
            // The node's own glyph (the spinner for running: `●` is a
            // breakpoint's).
            t.push_str(&format!(" {}{c}", status_glyph(status, false, self.tick)));
        }
        t.push(' ');
        t
    }

    /// How many nodes are ok, running and failed (the ones there are),
    /// with their status and word.
    fn counts(&self) -> Vec<(usize, NodeStatus, &'static str)> {
        [
            (NodeStatus::Ok, "ok"),
            (NodeStatus::Running, "running"),
            (NodeStatus::Failed, "failed"),
        ]
        .into_iter()
        .map(|(s, w)| (self.nodes.iter().filter(|v| v.status == s).count(), s, w))
        .filter(|(c, _, _)| *c > 0)
        .collect()
    }

    fn full_title(&self) -> String {
        let mark = if self.focused { "▶ " } else { "" };
        let n = self.comp.nodes.len();
        let mut t = format!(
            " {mark}DAG {} · {n} {}",
            self.comp.name,
            if n == 1 { "node" } else { "nodes" }
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
            // Failed iterations after the counter (`4/4 ✗4`), in the
            // columns the layout keeps for it, so `4/4` never hides them.
            if v.failed_iterations > 0 {
                pieces.push((
                    format!(" ✗{}", v.failed_iterations),
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
fn empty(area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>, focused: bool) {
    let (t, errors) = (ctx.theme, ctx.errors);
    let text = if ctx.viewing.is_some() {
        // Only a recording is on screen before it has a node.
        "no call recorded yet: each call the agent makes becomes a node as its answer comes"
            .to_owned()
    } else if errors > 0 {
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

#[cfg(test)]
mod tests;
