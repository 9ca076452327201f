//! YAML colours for the editor, cached per line together with syntect's parse
//! state at the start of each line, so an edit re-colours only the edited line
//! (or, when it changes how later lines parse, the lines from it onward) and
//! only as far down as the screen shows.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme as SyntectTheme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};

/// Lines longer than this (in bytes) are drawn uncoloured: syntect's regexes
/// can take very long on them, and typing must stay fast.
const MAX_COLOURED_LINE: usize = 4096;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// syntect's themes, each scope's colour raised to 4.5:1 against the
/// theme's background (WCAG AA for text): InspiredGitHub's keys and
/// comments read at about 3:1 on white as shipped.
fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = ThemeSet::load_defaults();
        for theme in set.themes.values_mut() {
            readable(theme);
        }
        set
    })
}

/// Raises every foreground of `theme` to [`TEXT_CONTRAST`] against its
/// background.
fn readable(theme: &mut SyntectTheme) {
    use crate::theme::contrast;
    let rgb = |c: syntect::highlighting::Color| (c.r, c.g, c.b);
    let bg = theme.settings.background.map_or((255, 255, 255), rgb);
    let lift = |c: &mut syntect::highlighting::Color| {
        let (r, g, b) = contrast::readable(rgb(*c), bg, TEXT_CONTRAST);
        (c.r, c.g, c.b) = (r, g, b);
    };
    if let Some(fg) = theme.settings.foreground.as_mut() {
        lift(fg);
    }
    for item in &mut theme.scopes {
        if let Some(fg) = item.style.foreground.as_mut() {
            lift(fg);
        }
    }
}

/// The contrast every syntax colour reaches against the editor's
/// background (WCAG AA for text).
pub const TEXT_CONTRAST: f64 = 4.5;

/// The syntect theme of that name, or the first default one when the name is
/// unknown (a user theme may name one we do not ship).
fn syntect_theme(name: &str) -> &'static SyntectTheme {
    let set = themes();
    set.themes
        .get(name)
        .or_else(|| set.themes.get("base16-ocean.dark"))
        .or_else(|| set.themes.values().next())
        .unwrap_or_else(|| panic!("syntect ships default themes"))
}

/// The colour runs of one line: byte ranges into the line with their style
/// (foreground and font style only; the pane supplies the background).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineColors {
    pub runs: Vec<(Range<usize>, Style)>,
}

impl LineColors {
    /// The style at byte `at`, given a hint index into `runs` that only moves
    /// forward while a caller walks a line from left to right.
    pub fn style_at(&self, at: usize, hint: &mut usize) -> Style {
        while *hint < self.runs.len() && self.runs[*hint].0.end <= at {
            *hint += 1;
        }
        match self.runs.get(*hint) {
            Some((r, s)) if r.contains(&at) => *s,
            _ => Style::default(),
        }
    }
}

#[derive(Clone, PartialEq)]
struct LineState {
    parse: ParseState,
    highlight: HighlightState,
}

/// Per-line colours with the parse state at each line start.
pub struct HighlightCache {
    theme_name: String,
    highlighter: Highlighter<'static>,
    /// `starts[i]` is the state at the start of line `i`; there is always
    /// one more than `colors`.
    starts: Vec<LineState>,
    colors: Vec<LineColors>,
    /// A hash of the text each entry of `colors` was made from.
    hashes: Vec<u64>,
    /// Lines below `colors.len()` whose text changed but whose line count did
    /// not: they are re-coloured first, and the cache after them survives when
    /// the state at their end is unchanged.
    stale: BTreeSet<usize>,
    /// How many lines have been coloured in total (tests read it).
    pub lines_coloured: usize,
}

impl HighlightCache {
    /// An empty cache colouring with the named syntect theme.
    pub fn new(theme_name: &str) -> Self {
        let highlighter = Highlighter::new(syntect_theme(theme_name));
        let mut cache = Self {
            theme_name: theme_name.to_string(),
            highlighter,
            starts: Vec::new(),
            colors: Vec::new(),
            hashes: Vec::new(),
            stale: BTreeSet::new(),
            lines_coloured: 0,
        };
        cache.starts.push(cache.initial_state());
        cache
    }

    fn initial_state(&self) -> LineState {
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_extension("yaml")
            .unwrap_or_else(|| set.find_syntax_plain_text());
        LineState {
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&self.highlighter, ScopeStack::new()),
        }
    }

    /// Switches the syntect theme; everything is re-coloured lazily.
    pub fn set_theme(&mut self, name: &str) {
        if name != self.theme_name {
            *self = Self {
                lines_coloured: self.lines_coloured,
                ..Self::new(name)
            };
        }
    }

    /// How many leading lines hold valid colours (stale ones included).
    #[cfg(test)]
    pub fn valid_lines(&self) -> usize {
        self.colors.len()
    }

    /// Line `row` changed but no line was added or removed.
    pub fn invalidate_line(&mut self, row: usize) {
        if row < self.colors.len() {
            self.stale.insert(row);
        }
    }

    /// Lines from `row` on may all have changed or moved.
    pub fn invalidate_from(&mut self, row: usize) {
        if row < self.colors.len() {
            self.colors.truncate(row);
            self.hashes.truncate(row);
            self.starts.truncate(row + 1);
        }
        self.stale.retain(|r| *r < row);
    }

    /// After an edit anywhere (undo, redo): keeps the colours of the leading
    /// lines whose text is unchanged and drops the rest.
    pub fn invalidate_changed(&mut self, lines: &[String]) {
        let same = self
            .hashes
            .iter()
            .zip(lines)
            .take_while(|(h, l)| **h == hash(l))
            .count();
        self.invalidate_from(same);
    }

    /// Makes the colours of lines `0..upto` valid, colouring only what edits
    /// invalidated and what was never coloured.
    pub fn ensure(&mut self, lines: &[String], upto: usize) {
        let upto = upto.min(lines.len());
        while let Some(row) = self.stale.pop_first() {
            if row >= self.colors.len() || row >= lines.len() {
                continue;
            }
            let mut state = self.starts[row].clone();
            let colors = self.colour_line(&mut state, &lines[row]);
            self.colors[row] = colors;
            self.hashes[row] = hash(&lines[row]);
            if self.starts[row + 1] != state {
                // Later lines parse differently now: drop them.
                self.colors.truncate(row + 1);
                self.hashes.truncate(row + 1);
                self.starts.truncate(row + 1);
                self.starts.push(state);
                self.stale.clear();
            }
        }
        while self.colors.len() < upto {
            let row = self.colors.len();
            let mut state = self.starts[row].clone();
            let colors = self.colour_line(&mut state, &lines[row]);
            self.colors.push(colors);
            self.hashes.push(hash(&lines[row]));
            self.starts.push(state);
        }
    }

    /// The colours of line `row`, if [`Self::ensure`] reached it.
    pub fn line(&self, row: usize) -> Option<&LineColors> {
        if self.stale.contains(&row) {
            return None;
        }
        self.colors.get(row)
    }

    fn colour_line(&mut self, state: &mut LineState, line: &str) -> LineColors {
        self.lines_coloured += 1;
        if line.len() > MAX_COLOURED_LINE {
            return LineColors::default();
        }
        let text = format!("{line}\n");
        let Ok(ops) = state.parse.parse_line(&text, syntaxes()) else {
            return LineColors::default();
        };
        let mut runs = Vec::new();
        let mut at = 0;
        for (style, piece) in
            HighlightIterator::new(&mut state.highlight, &ops, &text, &self.highlighter)
        {
            let end = (at + piece.len()).min(line.len());
            if end > at {
                runs.push((at..end, convert(style)));
            }
            at += piece.len();
        }
        LineColors { runs }
    }
}

fn hash(line: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    line.hash(&mut h);
    h.finish()
}

fn convert(s: syntect::highlighting::Style) -> Style {
    let mut style = Style::default().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    if s.font_style.contains(FontStyle::UNDERLINE) {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every syntax colour of the light theme's syntect theme reads at
    /// 4.5:1 on the light theme's background; the shipped InspiredGitHub
    /// has colours below it.
    #[test]
    fn syntax_colours_reach_aa_on_the_light_background() {
        use crate::theme::contrast::ratio;
        let light = crate::theme::Theme::load("light", None).expect("light");
        let ratatui::style::Color::Rgb(r, g, b) = light.bg else {
            panic!("light bg is #rrggbb");
        };
        let bg = (r, g, b);
        let shipped = ThemeSet::load_defaults();
        let before = &shipped.themes[&light.syntax];
        assert!(
            before
                .scopes
                .iter()
                .filter_map(|i| i.style.foreground)
                .any(|c| ratio((c.r, c.g, c.b), bg) < 4.5),
            "the shipped theme had nothing to raise"
        );
        let theme = syntect_theme(&light.syntax);
        for item in &theme.scopes {
            if let Some(c) = item.style.foreground {
                let r = ratio((c.r, c.g, c.b), bg);
                assert!(r >= 4.5, "{:?}: {r:.2}:1", item.scope);
            }
        }
    }

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(String::from).collect()
    }

    const DOC: &str = "name: demo\npipe:\n  - id: find\n    tool: search\n    args: { q: \"x\" }\n  - id: next\n    tool: t\n";

    #[test]
    fn colours_keys_and_values_differently() {
        let l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        let first = c.line(0).unwrap();
        let mut hint = 0;
        let key = first.style_at(0, &mut hint);
        let value = first.style_at(7, &mut hint);
        assert!(key.fg.is_some());
        assert_ne!(key.fg, value.fg, "{first:?}");
    }

    #[test]
    fn colours_only_what_is_asked() {
        let l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, 3);
        assert_eq!(c.lines_coloured, 3);
        assert!(c.line(3).is_none());
        c.ensure(&l, 3);
        assert_eq!(c.lines_coloured, 3, "a second ensure recolours nothing");
    }

    #[test]
    fn an_edit_within_a_line_recolours_that_line_only() {
        let mut l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        let before = c.lines_coloured;
        l[3] = "    tool: searchx".into();
        c.invalidate_line(3);
        assert!(
            c.line(3).is_none(),
            "a stale line is not drawn from the cache"
        );
        c.ensure(&l, l.len());
        assert_eq!(c.lines_coloured, before + 1);
        assert!(c.line(3).is_some());
    }

    #[test]
    fn an_edit_that_changes_later_parsing_recolours_onward() {
        let mut l = lines("a: |\n  text\nb: 1\nc: 2\n");
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        let plain = c.line(2).unwrap().clone();
        let before = c.lines_coloured;
        // Opening a quote that never closes changes the state at line end.
        l[0] = "a: \"open".into();
        c.invalidate_line(0);
        c.ensure(&l, l.len());
        assert_eq!(c.lines_coloured, before + l.len());
        assert_ne!(c.line(2).unwrap(), &plain, "line 3 is now inside a string");
    }

    #[test]
    fn inserted_lines_shift_the_cache() {
        let mut l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        let last = c.line(6).unwrap().clone();
        l.insert(1, "# comment".into());
        c.invalidate_from(1);
        assert_eq!(c.valid_lines(), 1);
        c.ensure(&l, l.len());
        assert_eq!(c.line(7).unwrap(), &last, "the old line 7 moved down");
        let mut hint = 0;
        let comment = c.line(1).unwrap().style_at(2, &mut hint);
        let mut hint = 0;
        assert_ne!(comment, c.line(0).unwrap().style_at(0, &mut hint));
    }

    #[test]
    fn undo_like_edits_keep_the_unchanged_prefix() {
        let mut l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        l[4] = "    args: {}".into();
        c.invalidate_changed(&l);
        assert_eq!(c.valid_lines(), 4);
    }

    #[test]
    fn theme_change_recolours_everything() {
        let l = lines(DOC);
        let mut c = HighlightCache::new("base16-ocean.dark");
        c.ensure(&l, l.len());
        let dark = c.line(0).unwrap().clone();
        c.set_theme("InspiredGitHub");
        assert_eq!(c.valid_lines(), 0);
        c.ensure(&l, l.len());
        assert_ne!(c.line(0).unwrap(), &dark);
    }
}
