//! STUB (lead's local placeholder; replaced by the dag branch)
use crate::engine::model::Composition;
use crate::ui::state::NodeVisual;
use crate::ui::theme::Theme;
use ratatui::{
    buffer::Buffer,
    layout::Rect,
    widgets::{Block, Paragraph, StatefulWidget, Widget},
};
pub struct DagLayout {
    n: usize,
}
impl DagLayout {
    pub fn new(comp: &Composition) -> DagLayout {
        DagLayout {
            n: comp.nodes.len(),
        }
    }
}
#[derive(Default)]
pub struct DagState {
    pub selected: Option<usize>,
}
impl DagState {
    pub fn select(&mut self, i: Option<usize>) {
        self.selected = i;
    }
    pub fn move_left(&mut self, _l: &DagLayout) {}
    pub fn move_right(&mut self, _l: &DagLayout) {}
    pub fn move_up(&mut self, _l: &DagLayout) {
        self.selected = self.selected.map(|s| s.saturating_sub(1));
    }
    pub fn move_down(&mut self, l: &DagLayout) {
        self.selected = Some(
            self.selected
                .map(|s| (s + 1).min(l.n.saturating_sub(1)))
                .unwrap_or(0),
        );
    }
    pub fn hit(&self, _l: &DagLayout, _col: u16, _row: u16) -> Option<usize> {
        None
    }
    pub fn scroll_by(&mut self, _dx: i32, _dy: i32) {}
}
pub struct DagView<'a> {
    pub comp: &'a Composition,
    pub layout: &'a DagLayout,
    pub nodes: &'a [NodeVisual],
    pub theme: &'a Theme,
    pub tick: u64,
    pub focused: bool,
}
impl StatefulWidget for DagView<'_> {
    type State = DagState;
    fn render(self, area: Rect, buf: &mut Buffer, state: &mut DagState) {
        let lines: Vec<String> = self
            .comp
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "{} {} {}",
                    if state.selected == Some(i) { ">" } else { " " },
                    crate::ui::theme::status_glyph(
                        self.nodes[i].status,
                        self.nodes[i].mocked,
                        self.tick
                    ),
                    n.id
                )
            })
            .collect();
        Paragraph::new(lines.join("\n"))
            .block(
                Block::bordered()
                    .title(" DAG ")
                    .border_style(self.theme.border_style(self.focused)),
            )
            .render(area, buf);
    }
}
