//! Colours of the workbench. Themes are small YAML files: three ship inside
//! the binary (from `themes/`), and more can be dropped into the user's config
//! directory under `themes/NAME.yaml`. A theme also names the syntect theme
//! the editor colours YAML with, so the two always agree.

pub(crate) mod contrast;

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use pipewright_engine::run::trace::NodeStatus;

/// The themes compiled into the binary, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../../themes/dark.yaml")),
    ("light", include_str!("../../../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.yaml"),
    ),
];

/// A loaded theme: every colour the panes use.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// A theme name from syntect's default set (`base16-ocean.dark`, …).
    pub syntax: String,
    pub bg: Color,
    pub fg: Color,
    pub dim: Color,
    pub accent: Color,
    pub border: Color,
    pub border_focused: Color,
    pub selection_bg: Color,
    pub status_bar_bg: Color,
    pub status_bar_fg: Color,
    pub pending: Color,
    pub running: Color,
    pub ok: Color,
    pub failed: Color,
    pub skipped: Color,
    pub stale: Color,
    pub cancelled: Color,
    pub mocked: Color,
    pub breakpoint: Color,
    pub json_key: Color,
    pub json_string: Color,
    pub json_number: Color,
    pub json_bool: Color,
    pub json_null: Color,
    pub error: Color,
    pub warning: Color,
    pub line_number: Color,
    /// No colour at all (`NO_COLOR`): focus, selection and the active tab
    /// are shown with bold and reverse video only.
    pub mono: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    syntax: String,
    colors: Colors,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Colors {
    bg: String,
    fg: String,
    dim: String,
    accent: String,
    border: String,
    border_focused: String,
    selection_bg: String,
    status_bar_bg: String,
    status_bar_fg: String,
    pending: String,
    running: String,
    ok: String,
    failed: String,
    skipped: String,
    stale: String,
    cancelled: String,
    mocked: String,
    breakpoint: String,
    json_key: String,
    json_string: String,
    json_number: String,
    json_bool: String,
    json_null: String,
    error: String,
    warning: String,
    line_number: String,
}

/// Why a theme could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("theme {name}: {message}")]
    Invalid { name: String, message: String },
    #[error("no theme named {0:?} (built in: dark, light, high-contrast)")]
    Unknown(String),
}

fn color(theme: &str, key: &str, text: &str) -> Result<Color, ThemeError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("reset") || t.eq_ignore_ascii_case("default") {
        return Ok(Color::Reset);
    }
    t.parse::<Color>().map_err(|_| ThemeError::Invalid {
        name: theme.to_string(),
        message: format!("colors.{key}: {text:?} is not a colour (use #rrggbb, a name or 0-255)"),
    })
}

impl Theme {
    /// Parses a theme file's text.
    pub fn parse(text: &str) -> Result<Theme, ThemeError> {
        let f: ThemeFile = serde_saphyr::from_str(text).map_err(|e| ThemeError::Invalid {
            name: "?".into(),
            message: e.to_string(),
        })?;
        let n = f.name.clone();
        let c = &f.colors;
        let k = |key: &str, v: &str| color(&n, key, v);
        Ok(Theme {
            name: f.name.clone(),
            syntax: f.syntax.clone(),
            bg: k("bg", &c.bg)?,
            fg: k("fg", &c.fg)?,
            dim: k("dim", &c.dim)?,
            accent: k("accent", &c.accent)?,
            border: k("border", &c.border)?,
            border_focused: k("border_focused", &c.border_focused)?,
            selection_bg: k("selection_bg", &c.selection_bg)?,
            status_bar_bg: k("status_bar_bg", &c.status_bar_bg)?,
            status_bar_fg: k("status_bar_fg", &c.status_bar_fg)?,
            pending: k("pending", &c.pending)?,
            running: k("running", &c.running)?,
            ok: k("ok", &c.ok)?,
            failed: k("failed", &c.failed)?,
            skipped: k("skipped", &c.skipped)?,
            stale: k("stale", &c.stale)?,
            cancelled: k("cancelled", &c.cancelled)?,
            mocked: k("mocked", &c.mocked)?,
            breakpoint: k("breakpoint", &c.breakpoint)?,
            json_key: k("json_key", &c.json_key)?,
            json_string: k("json_string", &c.json_string)?,
            json_number: k("json_number", &c.json_number)?,
            json_bool: k("json_bool", &c.json_bool)?,
            json_null: k("json_null", &c.json_null)?,
            error: k("error", &c.error)?,
            warning: k("warning", &c.warning)?,
            line_number: k("line_number", &c.line_number)?,
            mono: false,
        })
    }

    /// A theme by name: the user's `themes/NAME.yaml` under `config_dir`
    /// first, then the built-in ones.
    pub fn load(name: &str, config_dir: Option<&Path>) -> Result<Theme, ThemeError> {
        if let Some(dir) = config_dir {
            let p = dir.join("themes").join(format!("{name}.yaml"));
            if let Ok(text) = std::fs::read_to_string(&p) {
                return Theme::parse(&text);
            }
        }
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| Theme::parse(text))
            .unwrap_or_else(|| Err(ThemeError::Unknown(name.to_string())))
    }

    /// The default dark theme; it is compiled in and known to parse.
    pub fn dark() -> Theme {
        Theme::parse(BUILTIN[0].1).unwrap_or_else(|e| panic!("built-in theme: {e}"))
    }

    /// This theme without colour, for `NO_COLOR` (<https://no-color.org>)
    /// and monochrome terminals: every colour is the terminal's own, and
    /// what colour showed (focus, selection, the active tab) is carried by
    /// bold, reverse video and markers.
    pub fn monochrome(mut self) -> Theme {
        for c in [
            &mut self.bg,
            &mut self.fg,
            &mut self.dim,
            &mut self.accent,
            &mut self.border,
            &mut self.border_focused,
            &mut self.selection_bg,
            &mut self.status_bar_bg,
            &mut self.status_bar_fg,
            &mut self.pending,
            &mut self.running,
            &mut self.ok,
            &mut self.failed,
            &mut self.skipped,
            &mut self.stale,
            &mut self.cancelled,
            &mut self.mocked,
            &mut self.breakpoint,
            &mut self.json_key,
            &mut self.json_string,
            &mut self.json_number,
            &mut self.json_bool,
            &mut self.json_null,
            &mut self.error,
            &mut self.warning,
            &mut self.line_number,
        ] {
            *c = Color::Reset;
        }
        self.mono = true;
        self
    }

    /// Whether the environment asks for no colour: `NO_COLOR` set to
    /// anything but the empty string.
    pub fn no_color_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }

    /// The selected row or node: its background colour, and reverse video
    /// without colour. Always bold.
    pub fn selected(&self) -> Style {
        if self.mono {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::default()
                .bg(self.selection_bg)
                .add_modifier(Modifier::BOLD)
        }
    }

    /// The active tab of a tab bar: reverse video and bold in every theme,
    /// so it shows without colour too.
    pub fn active_tab(&self) -> Style {
        Style::default()
            .fg(self.accent)
            .add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    /// A pane's title: `▶ ` before it when the pane has the focus, so the
    /// focus shows without colour.
    pub fn pane_title(&self, title: &str, focused: bool) -> String {
        let t = title.trim();
        if focused {
            format!(" ▶ {t} ")
        } else {
            format!(" {t} ")
        }
    }

    /// The colour of a node status (glyphs are in [`status_glyph`]).
    pub fn status(&self, s: NodeStatus) -> Color {
        match s {
            NodeStatus::Pending => self.pending,
            NodeStatus::Running => self.running,
            NodeStatus::Ok => self.ok,
            NodeStatus::Failed => self.failed,
            NodeStatus::Skipped => self.skipped,
            NodeStatus::Stale => self.stale,
            NodeStatus::Cancelled => self.cancelled,
        }
    }

    /// Plain text on the pane background.
    pub fn base(&self) -> Style {
        Style::default().fg(self.fg).bg(self.bg)
    }

    /// A pane border, brighter when the pane has the focus.
    pub fn border_style(&self, focused: bool) -> Style {
        if focused {
            Style::default()
                .fg(self.border_focused)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(self.border)
        }
    }
}

/// Every glyph the workbench draws, with what it means: the help (`?`)
/// and docs/src/workbench.md list it.
pub const GLYPHS: &[(&str, &str)] = &[
    ("○", "DAG: a node not run yet"),
    ("⠋", "DAG: a node running (the spinner turns)"),
    ("✓", "DAG: a node that succeeded"),
    ("◆", "DAG: a node that answered from its mock"),
    ("✗", "DAG: a node that failed"),
    (
        "⊘",
        "DAG: a node skipped (its `when` was false, or a parent failed)",
    ),
    (
        "◌",
        "DAG: stale: the file changed since it ran (r re-runs it)",
    ),
    ("■", "DAG: a node cancelled"),
    ("?", "DAG: a server's question waits for you"),
    (
        "3/10",
        "DAG: a fan-out's iterations done of all; ✗4 after it: 4 failed",
    ),
    ("●", "DAG: a breakpoint: the run pauses before the node"),
    ("◉", "DAG: paused at this node's breakpoint"),
    (
        "▸",
        "DAG: paused before this node (a step); History: the run shown",
    ),
    (
        "Δ",
        "DAG: differs from the run it is compared with (History D)",
    ),
    ("!", "editor gutter: an error on the line"),
    ("▲", "editor gutter: a warning on the line"),
    (
        "★",
        "timeline: on the critical path (the chain that ended last)",
    ),
];

/// Spinner frames for running nodes; pick with `tick % SPINNER.len()`.
pub const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The glyph of a node status. `tick` animates the running spinner;
/// `mocked` nodes that ran show their own glyph.
pub fn status_glyph(s: NodeStatus, mocked: bool, tick: u64) -> &'static str {
    match s {
        NodeStatus::Running => SPINNER[(tick as usize) % SPINNER.len()],
        NodeStatus::Ok if mocked => "◆",
        NodeStatus::Ok => "✓",
        NodeStatus::Pending => "○",
        NodeStatus::Failed => "✗",
        NodeStatus::Skipped => "⊘",
        NodeStatus::Stale => "◌",
        NodeStatus::Cancelled => "■",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_parses_and_names_a_syntect_theme() {
        let set = syntect::highlighting::ThemeSet::load_defaults();
        for (name, text) in BUILTIN {
            let t = Theme::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&t.name, name);
            assert!(set.themes.contains_key(&t.syntax), "{name}: {}", t.syntax);
        }
    }

    /// WCAG AA for the light theme: every text colour at 4.5:1 on the
    /// background and on the selection, every state colour on the status
    /// bar both ways, every border at 3:1 (the issue measured keys 3.0,
    /// line numbers 2.75 and borders 1.47 on white).
    #[test]
    fn the_light_theme_meets_wcag_aa() {
        use contrast::ratio;
        let t = Theme::load("light", None).expect("light");
        let rgb = |c: Color| match c {
            Color::Rgb(r, g, b) => (r, g, b),
            other => panic!("light theme colours are #rrggbb, found {other:?}"),
        };
        let texts = [
            ("fg", t.fg),
            ("dim", t.dim),
            ("accent", t.accent),
            ("pending", t.pending),
            ("running", t.running),
            ("ok", t.ok),
            ("failed", t.failed),
            ("skipped", t.skipped),
            ("stale", t.stale),
            ("cancelled", t.cancelled),
            ("mocked", t.mocked),
            ("breakpoint", t.breakpoint),
            ("json_key", t.json_key),
            ("json_string", t.json_string),
            ("json_number", t.json_number),
            ("json_bool", t.json_bool),
            ("json_null", t.json_null),
            ("error", t.error),
            ("warning", t.warning),
            ("line_number", t.line_number),
        ];
        let mut low = Vec::new();
        for (name, c) in texts {
            for (on, bg) in [("bg", t.bg), ("selection_bg", t.selection_bg)] {
                let r = ratio(rgb(c), rgb(bg));
                if r < 4.5 {
                    low.push(format!("{name} on {on}: {r:.2}:1"));
                }
            }
        }
        // The status bar: its text, and every colour it shows a state in,
        // both as text on the bar (`3 stale`, `1 failed`, a message) and
        // as the badge the bar's colour is written on (`RUNNING`, `DONE
        // FAILED`): the same pair, so one ratio each (review item 9
        // measured 4.45 to 4.49 here).
        for (name, c) in [
            ("status_bar_fg", t.status_bar_fg),
            ("dim", t.dim),
            ("accent", t.accent),
            ("pending", t.pending),
            ("running", t.running),
            ("ok", t.ok),
            ("failed", t.failed),
            ("skipped", t.skipped),
            ("stale", t.stale),
            ("cancelled", t.cancelled),
            ("mocked", t.mocked),
            ("breakpoint", t.breakpoint),
            ("error", t.error),
            ("warning", t.warning),
        ] {
            let r = ratio(rgb(c), rgb(t.status_bar_bg));
            if r < 4.5 {
                low.push(format!(
                    "{name} on status_bar_bg (and status_bar_bg on {name}): {r:.2}:1"
                ));
            }
        }
        for (name, c) in [("border", t.border), ("border_focused", t.border_focused)] {
            let r = ratio(rgb(c), rgb(t.bg));
            if r < 3.0 {
                low.push(format!("{name} on bg: {r:.2}:1"));
            }
        }
        assert!(low.is_empty(), "below WCAG AA: {low:#?}");
    }

    #[test]
    fn a_bad_colour_is_named() {
        let text = BUILTIN[0]
            .1
            .replace("ok: \"#a3be8c\"", "ok: chartreuse-ish");
        let err = Theme::parse(&text).unwrap_err().to_string();
        assert!(err.contains("colors.ok"), "{err}");
    }

    #[test]
    fn unknown_theme_is_an_error() {
        assert!(matches!(
            Theme::load("nope", None),
            Err(ThemeError::Unknown(_))
        ));
    }

    /// The legend names every glyph a node's status can take.
    #[test]
    fn the_glyph_legend_explains_every_status_glyph() {
        let legend: Vec<&str> = GLYPHS.iter().map(|(g, _)| *g).collect();
        for s in [
            NodeStatus::Pending,
            NodeStatus::Running,
            NodeStatus::Ok,
            NodeStatus::Failed,
            NodeStatus::Skipped,
            NodeStatus::Stale,
            NodeStatus::Cancelled,
        ] {
            let g = status_glyph(s, false, 0);
            assert!(legend.contains(&g), "{s:?}'s {g} is not in the legend");
        }
        assert!(legend.contains(&status_glyph(NodeStatus::Ok, true, 0)));
        let mut seen = legend.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), legend.len(), "a glyph with two meanings");
    }

    #[test]
    fn glyphs_differ_per_status() {
        let all = [
            NodeStatus::Pending,
            NodeStatus::Ok,
            NodeStatus::Failed,
            NodeStatus::Skipped,
            NodeStatus::Stale,
            NodeStatus::Cancelled,
        ];
        let mut g: Vec<_> = all.iter().map(|s| status_glyph(*s, false, 0)).collect();
        g.push(status_glyph(NodeStatus::Ok, true, 0));
        g.push(status_glyph(NodeStatus::Running, false, 0));
        let n = g.len();
        g.sort();
        g.dedup();
        assert_eq!(g.len(), n);
    }
}
