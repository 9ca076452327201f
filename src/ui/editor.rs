//! STUB (lead's local placeholder; replaced by the editor branch)
use crate::engine::{
    diag::Diagnostic,
    loader::{self, Loaded},
};
use crate::ui::theme::Theme;
use ratatui::{
    buffer::Buffer,
    layout::Rect,
    widgets::{Block, Widget},
};
use ratatui_textarea::TextArea;
use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Instant,
};
pub enum EditorEvent {
    Validated {
        generation: u64,
        loaded: Arc<Loaded>,
    },
    Saved(PathBuf),
    ExternalChange {
        dirty: bool,
    },
    Message(String),
}
pub struct Editor {
    path: PathBuf,
    ta: TextArea<'static>,
    saved: String,
    version: u64,
    validated: u64,
}
impl Editor {
    pub fn open(path: &Path, _data_dir: Option<&Path>) -> std::io::Result<Editor> {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let ta = TextArea::from(text.lines().map(String::from).collect::<Vec<_>>());
        Ok(Editor {
            path: path.into(),
            ta,
            saved: text,
            version: 1,
            validated: 0,
        })
    }
    pub fn text(&self) -> String {
        self.ta.lines().join("\n") + "\n"
    }
    pub fn set_text(&mut self, text: &str) {
        self.ta = TextArea::from(text.lines().map(String::from).collect::<Vec<_>>());
        self.version += 1;
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn is_dirty(&self) -> bool {
        self.text() != self.saved
    }
    pub fn save(&mut self) -> std::io::Result<()> {
        let t = self.text();
        std::fs::write(&self.path, &t)?;
        self.saved = t;
        Ok(())
    }
    pub fn discard_recovery(&mut self) {}
    pub fn handle_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        if key.code == crossterm::event::KeyCode::Esc {
            return false;
        }
        if self.ta.input(key) {
            self.version += 1;
        }
        true
    }
    pub fn handle_mouse(&mut self, _ev: crossterm::event::MouseEvent, _area: Rect) -> bool {
        false
    }
    pub fn goto(&mut self, line: usize, col: usize) {
        self.ta.move_cursor(ratatui_textarea::CursorMove::Jump(
            line.saturating_sub(1) as u16,
            col.saturating_sub(1) as u16,
        ));
    }
    pub fn cursor(&self) -> (usize, usize) {
        (1, 1)
    }
    pub fn set_diagnostics(&mut self, _diags: Vec<Diagnostic>) {}
    pub fn tick(&mut self, _now: Instant) -> Vec<EditorEvent> {
        if self.validated == self.version {
            return vec![];
        }
        self.validated = self.version;
        vec![EditorEvent::Validated {
            generation: self.version,
            loaded: Arc::new(loader::load_str(&self.text())),
        }]
    }
    pub fn recovery_pending(&self) -> bool {
        false
    }
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.ta.set_block(
            Block::bordered()
                .title(format!(" {} ", self.path.display()))
                .border_style(theme.border_style(focused)),
        );
        (&self.ta).render(area, buf);
    }
}
