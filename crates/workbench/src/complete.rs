//! The editor's completion popup: the items `engine::author::complete`
//! offers at the cursor, filtered as you type, and beside them what the
//! chosen one is (a tool's description and arguments, an argument's type).
//! It owns its state and turns keys into messages; the app asks the engine
//! again after every edit (`app/completion.rs`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use pipewright_engine::author::complete::{Completion, Item, Kind};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::theme::Theme;

/// Rows of items shown at once.
const ROWS: usize = 8;
/// The widest the list grows, in cells.
const MAX_WIDTH: usize = 56;

/// An open popup.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Popup {
    /// What the engine offers, and where the word it completes starts.
    completion: Completion,
    /// The chosen item.
    selected: usize,
    /// The first item shown.
    top: usize,
}

/// What a key did to the popup.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// It moved the choice.
    Moved,
    /// Write this item (Enter or Tab).
    Accept(Item),
    /// Esc: close, nothing written.
    Close,
    /// Not a popup key: the editor takes it (then the app asks again).
    Pass,
}

impl Popup {
    pub(crate) fn new(completion: Completion) -> Self {
        Self {
            completion,
            selected: 0,
            top: 0,
        }
    }

    /// New items for the same place: the choice stays on the same label
    /// when it is still offered.
    pub(crate) fn update(&mut self, completion: Completion) {
        let label = self.item().map(|i| i.label.clone());
        self.selected = label
            .and_then(|l| completion.items.iter().position(|i| i.label == l))
            .unwrap_or(0);
        self.completion = completion;
        self.scroll();
    }

    fn item(&self) -> Option<&Item> {
        self.completion.items.get(self.selected)
    }

    fn key(&mut self, key: KeyEvent) -> Outcome {
        let n = self.completion.items.len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter | KeyCode::Tab if key.modifiers.is_empty() => {
                return self.item().cloned().map_or(Outcome::Close, Outcome::Accept);
            }
            KeyCode::Down => self.selected = (self.selected + 1) % n.max(1),
            KeyCode::Char('n') if ctrl => self.selected = (self.selected + 1) % n.max(1),
            KeyCode::Up => self.selected = (self.selected + n.max(1) - 1) % n.max(1),
            KeyCode::Char('p') if ctrl => {
                self.selected = (self.selected + n.max(1) - 1) % n.max(1);
            }
            KeyCode::PageDown => self.selected = (self.selected + ROWS).min(n.saturating_sub(1)),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(ROWS),
            _ => return Outcome::Pass,
        }
        self.scroll();
        Outcome::Moved
    }

    fn scroll(&mut self) {
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + ROWS {
            self.top = self.selected + 1 - ROWS;
        }
    }

    /// Draws the list under the cursor at `at` (above it when there is no
    /// room below), inside `bounds`, and the chosen item's description
    /// beside it.
    fn render(&self, at: Position, bounds: Rect, buf: &mut Buffer, theme: &Theme) {
        let items = &self.completion.items;
        let shown = items.len().min(ROWS);
        let label_w = items
            .iter()
            .map(|i| i.label.chars().count())
            .max()
            .unwrap_or(0);
        let detail_w = items
            .iter()
            .map(|i| i.detail.as_deref().map_or(0, |d| d.chars().count() + 2))
            .max()
            .unwrap_or(0);
        let width = (label_w + detail_w + 4).clamp(16, MAX_WIDTH);
        let width = u16::try_from(width).unwrap_or(u16::MAX).min(bounds.width);
        let height = u16::try_from(shown + 2).unwrap_or(u16::MAX);
        if width < 8 || bounds.height < 3 {
            return;
        }
        let below = bounds.bottom().saturating_sub(at.y + 1);
        let y = if below >= height || below >= at.y.saturating_sub(bounds.y) {
            at.y + 1
        } else {
            at.y.saturating_sub(height)
        };
        let height = height.min(bounds.bottom().saturating_sub(y));
        let x = at.x.min(bounds.right().saturating_sub(width)).max(bounds.x);
        let area = Rect::new(x, y, width, height);
        let title = format!(" {}/{} ", self.selected + 1, items.len());
        let block = Block::bordered()
            .title(title)
            .border_style(theme.border_style(true))
            .style(theme.base());
        let inner = block.inner(area);
        Clear.render(area, buf);
        block.render(area, buf);
        for (row, (i, item)) in items
            .iter()
            .enumerate()
            .skip(self.top)
            .take(usize::from(inner.height))
            .enumerate()
        {
            let style = if i == self.selected {
                theme.selected()
            } else {
                theme.base()
            };
            let mut spans = vec![
                Span::styled(glyph(item.kind), Style::default().fg(theme.accent)),
                Span::raw(" "),
                Span::styled(item.label.clone(), style),
            ];
            if let Some(d) = &item.detail {
                spans.push(Span::raw("  "));
                spans.push(Span::styled(d.clone(), Style::default().fg(theme.dim)));
            }
            let line_area = Rect::new(inner.x, inner.y + row as u16, inner.width, 1);
            buf.set_style(line_area, style);
            Line::from(spans).style(style).render(line_area, buf);
        }
        self.render_doc(area, bounds, buf, theme);
    }

    /// The chosen item's description in a box beside the list (right, or
    /// left when there is no room), when it has one.
    fn render_doc(&self, list: Rect, bounds: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(item) = self.item() else { return };
        let Some(doc) = item.doc.as_deref() else {
            return;
        };
        let room_right = bounds.right().saturating_sub(list.right());
        let room_left = list.x.saturating_sub(bounds.x);
        let width = room_right.max(room_left).min(48);
        if width < 16 {
            return;
        }
        let x = if room_right >= width {
            list.right()
        } else {
            list.x - width
        };
        // As tall as the text wants (wrapped), within the screen.
        let inner_w = usize::from(width.saturating_sub(2)).max(1);
        let wanted: usize = item
            .detail
            .iter()
            .map(String::as_str)
            .chain(doc.lines())
            .map(|l| l.chars().count().div_ceil(inner_w).max(1))
            .sum::<usize>()
            + 2;
        let room = bounds.bottom().saturating_sub(list.y);
        let height = u16::try_from(wanted.min(16))
            .unwrap_or(16)
            .max(list.height)
            .min(room);
        let area = Rect::new(x, list.y, width, height);
        let block = Block::bordered()
            .title(format!(" {} ", item.label))
            .border_style(theme.border_style(false))
            .style(theme.base());
        Clear.render(area, buf);
        let mut lines = Vec::new();
        if let Some(d) = &item.detail {
            lines.push(Line::styled(
                d.clone(),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        lines.extend(doc.lines().map(|l| Line::raw(l.to_owned())));
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: true })
            .render(area, buf);
    }
}

impl Component for Popup {
    /// The popup's keys while it is open: arrows choose, Enter or Tab
    /// write the choice, Esc closes it; any other key is the editor's.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key(key) {
            Outcome::Moved => {}
            Outcome::Close => queue.push(Msg::CloseCompletion),
            // The popup follows every edit, so its range is the word at
            // the cursor now.
            Outcome::Accept(item) => queue.push(Msg::Complete {
                from: self.completion.from.saturating_sub(1) as usize,
                text: item.insert,
            }),
            Outcome::Pass => return Handled::Ignored,
        }
        Handled::Taken
    }

    /// Drawn under the editor's cursor, within `area`.
    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        if let Some(at) = ctx.cursor {
            self.render(at, area, buf, ctx.theme);
        }
    }
}

/// One letter saying what an item is.
fn glyph(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => "ƒ",
        Kind::Argument => "a",
        Kind::Value => "=",
        Kind::Node => "◆",
        Kind::Path => ".",
        Kind::Variable => "v",
        Kind::Env => "e",
        Kind::Item => "i",
        Kind::Builtin => "j",
        Kind::Key => "k",
        Kind::Server => "s",
    }
}
