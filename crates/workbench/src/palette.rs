//! The command palette: every action, theme, composition, case and node,
//! found by typing. It owns its input and selection and turns keys into a
//! [`PaletteEffect`]; the app builds its list and does what a row says
//! (`app/palette.rs`); `view` draws it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::centred;

mod view;

/// What a key in the palette does.
#[derive(Debug, Clone, PartialEq)]
enum PaletteEffect {
    /// Keep it open (the input or the selection changed, or nothing).
    Stay,
    /// Close it.
    Close,
    /// Close it and do what this row says.
    Run(PaletteItem),
}

/// One thing the palette can do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PaletteItem {
    /// An action and its key label.
    Action(Action, String),
    Theme(String),
    Composition(String),
    /// Use this case row of the composition.
    Case(String),
    /// Jump to a node.
    Node(String),
    /// Run the composition durably on Restate (`edit --on`).
    Durable(String),
    /// A new pipeline: choose tools, the buffer becomes their scaffold.
    Scaffold,
    /// Follow the recordings of this folder (the recording view).
    Follow(std::path::PathBuf),
}

impl PaletteItem {
    /// The short name typed to find it.
    fn name(&self) -> String {
        match self {
            PaletteItem::Action(a, _) => a.name().to_owned(),
            PaletteItem::Theme(t) => format!("theme {t}"),
            PaletteItem::Composition(c) => format!("composition {c}"),
            PaletteItem::Case(c) => format!("case {c}"),
            PaletteItem::Node(n) => format!("node {n}"),
            PaletteItem::Durable(_) => "durable run".to_owned(),
            PaletteItem::Scaffold => "new pipeline".to_owned(),
            PaletteItem::Follow(_) => "follow a recording".to_owned(),
        }
    }

    pub(crate) fn text(&self) -> String {
        match self {
            PaletteItem::Action(a, _) => format!("{} — {}", a.name(), a.describe()),
            PaletteItem::Theme(t) => format!("theme {t}"),
            PaletteItem::Composition(c) => format!("composition {c}"),
            PaletteItem::Case(c) => format!("case {c}: run with this case row's vars"),
            PaletteItem::Node(n) => format!("go to node {n}"),
            PaletteItem::Durable(on) => {
                format!("durable run — run the saved file on {on}, where a worker holds it")
            }
            PaletteItem::Scaffold => {
                "new pipeline — choose tools; the buffer becomes a node per tool, as `pipewright new` writes".to_owned()
            }
            PaletteItem::Follow(dir) => format!(
                "follow a recording… — {}: its newest session, then each new one, drawn call by call",
                dir.display()
            ),
        }
    }
}

/// The command palette: type to filter, arrows to choose, Enter to do.
#[derive(Debug, Clone)]
pub(crate) struct Palette {
    /// What was typed to find a row.
    input: String,
    items: Vec<PaletteItem>,
    /// The rows the input lets through, best first (indices into
    /// `items`).
    shown: Vec<usize>,
    /// The highlighted row, among the shown ones.
    selected: usize,
}

impl Palette {
    pub(crate) fn new(items: Vec<PaletteItem>) -> Palette {
        let mut p = Palette {
            input: String::new(),
            shown: Vec::new(),
            items,
            selected: 0,
        };
        p.filter();
        p
    }

    /// Items whose text holds the typed characters in order, best first
    /// (see [`rank`]); ties keep the palette's own order.
    fn filter(&mut self) {
        let query = self.input.to_lowercase();
        let mut scored: Vec<((u8, usize), usize)> = self
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| {
                let name = it.name().to_lowercase();
                let text = it.text().to_lowercase();
                rank(&query, &name, &text).map(|r| (r, i))
            })
            .collect();
        scored.sort_by_key(|(r, i)| (*r, *i));
        self.shown = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    /// What a key does in the open palette: Esc closes it, Enter runs the
    /// highlighted row (closes when none is left), others type and move.
    fn key_effect(&mut self, key: KeyEvent) -> PaletteEffect {
        match key.code {
            KeyCode::Esc => PaletteEffect::Close,
            KeyCode::Enter => match self.chosen() {
                Some(item) => PaletteEffect::Run(item.clone()),
                None => PaletteEffect::Close,
            },
            _ => {
                self.key(key);
                PaletteEffect::Stay
            }
        }
    }

    /// Typing and moving in the list.
    fn key(&mut self, key: KeyEvent) {
        use crossterm::event::KeyModifiers;
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            // Line editing as in a shell; other chords are not text.
            match key.code {
                KeyCode::Char('u') => self.input.clear(),
                KeyCode::Char('w') => {
                    let keep = self.input.trim_end().rfind(' ').map_or(0, |i| i + 1);
                    self.input.truncate(keep);
                }
                KeyCode::Char('n') if self.selected + 1 < self.shown.len() => self.selected += 1,
                KeyCode::Char('p') => self.selected = self.selected.saturating_sub(1),
                _ => return,
            }
            self.filter();
            return;
        }
        match key.code {
            KeyCode::Char(c) => {
                self.input.push(c);
                self.selected = 0;
                self.filter();
            }
            KeyCode::Backspace => {
                self.input.pop();
                self.filter();
            }
            KeyCode::Down | KeyCode::Tab if self.selected + 1 < self.shown.len() => {
                self.selected += 1;
            }
            KeyCode::Up | KeyCode::BackTab => self.selected = self.selected.saturating_sub(1),
            _ => {}
        }
    }

    /// The highlighted item.
    fn chosen(&self) -> Option<&PaletteItem> {
        self.shown.get(self.selected).map(|&i| &self.items[i])
    }

    /// Makes the `row`-th item shown the highlighted one (a click).
    pub(crate) fn select_shown(&mut self, row: usize) -> bool {
        if row < self.shown.len() {
            self.selected = row;
            true
        } else {
            false
        }
    }

    /// The first item drawn when `room` rows show items.
    pub(crate) fn first_drawn(&self, room: usize) -> usize {
        self.selected.saturating_sub(room.saturating_sub(1))
    }

    /// The items shown now, in order.
    fn shown(&self) -> impl Iterator<Item = &PaletteItem> {
        self.shown.iter().map(|&i| &self.items[i])
    }
}

impl Palette {
    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 60, 60)
    }

    /// What was typed.
    #[cfg(test)]
    pub(crate) fn input(&self) -> &str {
        &self.input
    }
}

impl Component for Palette {
    /// Esc closes it; Enter closes it and does what the highlighted row
    /// says; other keys type and move.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key_effect(key) {
            PaletteEffect::Stay => {}
            PaletteEffect::Close => queue.push(Msg::CloseOverlay),
            PaletteEffect::Run(item) => {
                queue.push(Msg::CloseOverlay);
                queue.push(match item {
                    PaletteItem::Action(a, _) => Msg::Act(a),
                    PaletteItem::Theme(name) => Msg::Theme(name),
                    PaletteItem::Composition(name) => Msg::Composition(name),
                    PaletteItem::Case(name) => Msg::Case(name),
                    PaletteItem::Durable(_) => Msg::Durable,
                    PaletteItem::Scaffold => Msg::OpenScaffold,
                    PaletteItem::Node(id) => Msg::SelectNode(id),
                    PaletteItem::Follow(dir) => Msg::FollowRecording(dir),
                });
            }
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        self.render(ctx.theme, r, buf);
    }
}

/// `text` padded or cut to `width` columns, a cut one ending in `…`.
pub(crate) fn fit(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let full = unicode_width::UnicodeWidthStr::width(text);
    if full <= width {
        return format!("{text}{}", " ".repeat(width - full));
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    used += 1;
    out.push_str(&" ".repeat(width.saturating_sub(used)));
    out
}

/// How well `query` (lower case) finds an item with this `name` and
/// `text` (its name and its line in the palette): a tier, then how spread
/// out the match is; `None` when it does not match. Tiers, best first:
/// each typed word starts a word of the name, in order; the same in the
/// text; the name holds the query; the name holds its letters in order;
/// the text does. So `go det` finds `go to node details` (two word starts)
/// before `wrap`, whose description only holds the letters somewhere.
fn rank(query: &str, name: &str, text: &str) -> Option<(u8, usize)> {
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.is_empty() {
        return Some((0, 0));
    }
    let letters: Vec<char> = words.iter().flat_map(|w| w.chars()).collect();
    if let Some(spread) = word_starts(&words, name) {
        return Some((0, spread));
    }
    if let Some(spread) = word_starts(&words, text) {
        return Some((1, spread));
    }
    let compact: String = letters.iter().collect();
    if name.contains(&compact) {
        return Some((2, compact.len()));
    }
    if let Some(spread) = subsequence(&letters, name) {
        return Some((3, spread));
    }
    subsequence(&letters, text).map(|spread| (4, spread))
}

/// Whether each of `words` starts a word of `text`, in order; the number of
/// words of `text` from the first matched to the last.
fn word_starts(words: &[&str], text: &str) -> Option<usize> {
    let mut hay = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate();
    let mut first = None;
    let mut last = 0;
    for w in words {
        let (at, _) = hay.find(|(_, h)| h.starts_with(w))?;
        first.get_or_insert(at);
        last = at;
    }
    Some(last - first.unwrap_or(0))
}

/// Whether `text` holds the letters `q` in order; the characters from the
/// first to the last, searched from each place the first letter occurs so
/// the tightest is found.
fn subsequence(q: &[char], text: &str) -> Option<usize> {
    let chars: Vec<char> = text.chars().collect();
    let first = *q.first()?;
    let mut best: Option<usize> = None;
    for start in (0..chars.len()).filter(|&i| chars[i] == first) {
        let mut want = q.iter().skip(1).peekable();
        let mut end = start;
        for (i, c) in chars.iter().enumerate().skip(start + 1) {
            if want.peek() == Some(&c) {
                want.next();
                end = i;
            }
            if want.peek().is_none() {
                break;
            }
        }
        if want.peek().is_none() {
            let spread = end - start;
            best = Some(best.map_or(spread, |b| b.min(spread)));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn palette_ranks_word_starts_above_scattered_letters() {
        let mut p = Palette::new(vec![
            PaletteItem::Action(Action::Wrap, "w".into()),
            PaletteItem::Theme("dark".into()),
            PaletteItem::Node("details".into()),
        ]);
        for c in "go det".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(p.chosen(), Some(&PaletteItem::Node("details".into())));
        // The letters alone still find an item, after the word matches.
        assert_eq!(
            rank("gdt", "node details", "go to node details").map(|r| r.0),
            Some(4)
        );
        assert_eq!(
            rank("det", "node details", "go to node details").map(|r| r.0),
            Some(0)
        );
        assert_eq!(rank("xyz", "node details", "go to node details"), None);
    }

    #[test]
    fn palette_text_is_cut_to_leave_the_key_column_in_view() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(
            unicode_width::UnicodeWidthStr::width(fit("日本語のテキスト", 7).as_str()),
            7
        );
    }

    #[test]
    fn palette_filters_by_subsequence_and_chooses() {
        let mut p = Palette::new(vec![
            PaletteItem::Action(Action::Run, "F5".into()),
            PaletteItem::Action(Action::RerunFrom, "R".into()),
            PaletteItem::Theme("light".into()),
        ]);
        assert_eq!(p.shown().count(), 3);
        for c in "rrf".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(
            p.chosen(),
            Some(&PaletteItem::Action(Action::RerunFrom, "R".into()))
        );
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        for c in "theme".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(p.chosen(), Some(&PaletteItem::Theme("light".into())));
        for c in "zzz".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(p.chosen(), None);
    }

    #[test]
    fn enter_runs_the_chosen_row_and_esc_or_an_empty_list_closes() {
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let mut p = Palette::new(vec![
            PaletteItem::Action(Action::Run, "F5".into()),
            PaletteItem::Theme("light".into()),
        ]);
        assert_eq!(p.key_effect(key(KeyCode::Down)), PaletteEffect::Stay);
        assert_eq!(
            p.key_effect(key(KeyCode::Enter)),
            PaletteEffect::Run(PaletteItem::Theme("light".into()))
        );
        assert_eq!(p.key_effect(key(KeyCode::Esc)), PaletteEffect::Close);
        for c in "zzz".chars() {
            assert_eq!(p.key_effect(key(KeyCode::Char(c))), PaletteEffect::Stay);
        }
        assert_eq!(p.key_effect(key(KeyCode::Enter)), PaletteEffect::Close);
    }
}
