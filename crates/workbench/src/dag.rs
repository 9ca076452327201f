//! The DAG pane: a composition drawn left to right as glyph rows
//! (`✓ find ─▶ ● details`) with status colours, fan-out progress,
//! breakpoints and the selection; scrolls to keep the selection in view and
//! draws only the cells it shows. The layout is computed in [`layout`] and
//! drawn by [`view`]. [`Dag`] is the pane as a component: it owns the
//! plan's layout, the selection and the scroll, and turns keys and clicks
//! into messages.

pub mod layout;
mod view;

use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::StatefulWidget;

pub use layout::{DagLayout, Slot};
pub use view::DagView;

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::state::Focus;
use pipewright_engine::file::model::Composition;

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
            _ => view::empty(area, buf, ctx.theme, ctx.errors, ctx.focused),
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
        let before = self.selected;
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => self.move_left(layout),
            KeyCode::Right | KeyCode::Char('l') => self.move_right(layout),
            KeyCode::Up | KeyCode::Char('k') => self.move_up(layout),
            KeyCode::Down | KeyCode::Char('j') => self.move_down(layout),
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

#[cfg(test)]
mod tests;
