//! The palette's "new pipeline": choose tools from the servers' lists,
//! one node each in the order chosen, and the buffer becomes the scaffold
//! `pipewright new` writes (one undoable edit).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::{Msg, ToolOffer};
use crate::theme::Theme;
use crate::window::{centred, frame};

/// The chooser's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScaffoldChooser {
    tools: Vec<ToolOffer>,
    /// Indices into `tools`, in the order chosen.
    chosen: Vec<usize>,
    /// Typed to narrow the list.
    filter: String,
    /// The row under the cursor, among the shown ones.
    cursor: usize,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq)]
enum Chosen {
    /// Still choosing.
    Open,
    /// Write the scaffold with these tools (indices, in order).
    Write(Vec<usize>),
    /// Esc.
    Close,
}

impl ScaffoldChooser {
    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 80, 70)
    }

    /// The chooser over `tools`, nothing chosen.
    pub(crate) fn new(tools: Vec<ToolOffer>) -> Self {
        Self {
            tools,
            chosen: Vec::new(),
            filter: String::new(),
            cursor: 0,
        }
    }

    /// The tools the filter lets through, as indices.
    fn shown(&self) -> Vec<usize> {
        let f = self.filter.to_lowercase();
        (0..self.tools.len())
            .filter(|&i| f.is_empty() || self.tools[i].name.to_lowercase().contains(&f))
            .collect()
    }

    fn key(&mut self, key: KeyEvent) -> Chosen {
        let shown = self.shown();
        match key.code {
            KeyCode::Esc => return Chosen::Close,
            KeyCode::Enter => {
                // Enter with nothing marked takes the tool under the cursor.
                if self.chosen.is_empty()
                    && let Some(&i) = shown.get(self.cursor)
                {
                    self.chosen.push(i);
                }
                return Chosen::Write(self.chosen.clone());
            }
            KeyCode::Down => self.cursor = (self.cursor + 1).min(shown.len().saturating_sub(1)),
            KeyCode::Up => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Char(' ') | KeyCode::Tab => {
                if let Some(&i) = shown.get(self.cursor) {
                    match self.chosen.iter().position(|&c| c == i) {
                        Some(at) => {
                            self.chosen.remove(at);
                        }
                        None => self.chosen.push(i),
                    }
                }
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.cursor = 0;
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.clear();
                self.cursor = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c);
                self.cursor = 0;
            }
            _ => {}
        }
        Chosen::Open
    }

    fn render(&self, t: &Theme, area: Rect, block: Block<'_>, buf: &mut Buffer) {
        let inner = block.inner(area);
        block.render(area, buf);
        let dim = Style::default().fg(t.dim);
        let mut lines = vec![
            Line::from(vec![
                Span::raw("› "),
                Span::raw(self.filter.clone()),
                Span::styled("█", dim),
            ]),
            Line::styled(
                "Space marks a tool (a node each, in the order marked) · Enter writes the scaffold into the buffer (Ctrl-Z takes it back) · Esc",
                dim,
            ),
        ];
        let shown = self.shown();
        let rows = usize::from(inner.height.saturating_sub(2)).max(1);
        let top = self.cursor.saturating_sub(rows - 1);
        for (row, &i) in shown.iter().enumerate().skip(top).take(rows) {
            let tool = &self.tools[i];
            let mark = match self.chosen.iter().position(|&c| c == i) {
                Some(n) => format!("[{}]", n + 1),
                None => "[ ]".to_owned(),
            };
            let style = if row == self.cursor {
                t.selected()
            } else {
                t.base()
            };
            let mut spans = vec![
                Span::styled(format!("{mark} {}", tool.name), style),
                Span::styled(format!("  {}", tool.server), dim),
            ];
            if let Some(d) = &tool.description {
                let short: String = d.chars().take(80).collect();
                spans.push(Span::styled(format!("  {short}"), dim));
            }
            lines.push(Line::from(spans));
        }
        if shown.is_empty() {
            lines.push(Line::styled("no tool matches", dim));
        }
        Paragraph::new(lines).render(inner, buf);
    }
}

impl Component for ScaffoldChooser {
    /// Typing narrows the list, Space marks a tool, Enter writes the
    /// scaffold of those marked (or of the one under the cursor), Esc
    /// closes it.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key(key) {
            Chosen::Open => {}
            Chosen::Close => queue.push(Msg::CloseOverlay),
            Chosen::Write(chosen) => {
                queue.push(Msg::CloseOverlay);
                queue.push(Msg::WriteScaffold {
                    tools: self.tools.clone(),
                    chosen,
                });
            }
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        let t = ctx.theme;
        self.render(t, r, frame("new pipeline: a node per tool".into(), t), buf);
    }
}
