//! STUB (lead's local placeholder; replaced by the inspector branch)
use crate::engine::{model::Node, trace::NodeRecord};
use crate::ui::theme::Theme;
use ratatui::{
    buffer::Buffer,
    layout::Rect,
    widgets::{Block, Paragraph, Widget},
};
use serde_json::Value;
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tab {
    Args,
    Output,
    Error,
    Timing,
    Iterations,
    Raw,
}
pub struct Inspector {
    id: String,
    text: String,
    tab: Tab,
}
impl Default for Inspector {
    fn default() -> Self {
        Self::new()
    }
}
impl Inspector {
    pub fn new() -> Inspector {
        Inspector {
            id: String::new(),
            text: String::new(),
            tab: Tab::Output,
        }
    }
    pub fn set_node(
        &mut self,
        id: &str,
        _node: Option<&Node>,
        record: Option<&NodeRecord>,
        preview: Option<&Value>,
    ) {
        self.id = id.into();
        self.text = match (record, preview) {
            (Some(r), _) => format!("{}\n{}", r.output, r.error.clone().unwrap_or_default()),
            (None, Some(p)) => p.to_string(),
            _ => String::new(),
        };
    }
    pub fn clear(&mut self) {
        self.id.clear();
        self.text.clear();
    }
    pub fn tab(&self) -> Tab {
        self.tab
    }
    pub fn set_tab(&mut self, t: Tab) {
        self.tab = t;
    }
    pub fn handle_key(&mut self, _key: crossterm::event::KeyEvent) -> bool {
        false
    }
    pub fn handle_mouse(&mut self, _ev: crossterm::event::MouseEvent, _area: Rect) -> bool {
        false
    }
    pub fn poll(&mut self) -> bool {
        false
    }
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        Paragraph::new(self.text.clone())
            .block(
                Block::bordered()
                    .title(format!(" {} ─ {:?} ", self.id, self.tab))
                    .border_style(theme.border_style(focused)),
            )
            .render(area, buf);
    }
}
