//! Key bindings: every workbench action, its default keys (SPEC §5) and the
//! user's overrides from the config file.
//!
//! A binding with Ctrl or Alt, a function key, Tab or Esc works in every pane.
//! A plain character (`p`, `R`, `?` …) is a command key: it acts while the
//! DAG or the inspector has the focus, and is typed as text in the editor.

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Run,
    Step,
    Continue,
    Pause,
    Breakpoint,
    Rerun,
    RerunFrom,
    Skip,
    Cancel,
    Pin,
    DryRun,
    Estimate,
    NextPane,
    PrevPane,
    Save,
    ExternalEditor,
    Palette,
    Help,
    Quit,
    Timeline,
    History,
    /// The Results view: each case run, PASS or FAIL, its expectations and
    /// the composition's output.
    Results,
    /// Judge again: grade the run on screen (or the one chosen in History,
    /// or every run in Results) with the file's `eval:`, calling no tool.
    Judge,
    /// Run every case of the composition, one after another.
    RunCases,
    /// Use the composition's next case for the next run.
    NextCase,
    /// The Messages pane: every message, server error and diagnostic in
    /// full, with times.
    Messages,
    /// The focused pane fills the screen, and back.
    Zoom,
    /// Wrap long lines in the inspector and the editor's diagnostics, or
    /// cut them.
    Wrap,
    /// Show a server's question again after hiding it.
    Questions,
    /// In a server's question: hide it, to look at the nodes first.
    AskHide,
    /// In a server's question: the next form field.
    AskNextField,
    /// In a server's question: the previous form field.
    AskPrevField,
    /// In a server's question: the next choice of an enum field, or flip a
    /// yes/no field.
    AskChoose,
    /// In a server's question: the previous choice of an enum field.
    AskChooseBack,
    /// In a server's question: accept (send the form, or say the link was
    /// opened).
    AskAccept,
    /// In a server's sampling request: send the written reply.
    AskSend,
    /// In a server's sampling request: ask the configured provider to write
    /// the reply (shown for approval before it is sent).
    AskProvider,
    /// In a server's URL question: open the link in the browser.
    AskOpenUrl,
    /// In a server's question: decline.
    AskDecline,
    /// In a server's question: cancel (dismiss without choosing).
    AskCancel,
    /// Apply the did-you-mean of the mark on the editor's cursor line.
    QuickFix,
    /// Open completion at the editor's cursor.
    Complete,
    /// Copy what is selected: a tree's value as JSON (Args, Output), else
    /// the selected node's args as JSON.
    Yank,
    /// Copy where it is: a tree value's path (`.users[0].name`), else a
    /// `pipewright tools call` line that repeats the node's call.
    YankPath,
    /// In a server's URL question: copy the link.
    AskCopyUrl,
    /// In the recording view: write the pipeline of what is recorded so
    /// far (`pipewright new --from`) beside the file.
    WritePipeline,
}

impl Action {
    /// Every action, in the order the help lists them.
    pub const ALL: &[Action] = &[
        Action::Run,
        Action::Step,
        Action::Continue,
        Action::Pause,
        Action::Breakpoint,
        Action::Rerun,
        Action::RerunFrom,
        Action::Skip,
        Action::Cancel,
        Action::Pin,
        Action::DryRun,
        Action::Estimate,
        Action::QuickFix,
        Action::Complete,
        Action::Timeline,
        Action::History,
        Action::Results,
        Action::Judge,
        Action::RunCases,
        Action::NextCase,
        Action::Messages,
        Action::Zoom,
        Action::Wrap,
        Action::Yank,
        Action::YankPath,
        Action::WritePipeline,
        Action::Questions,
        Action::NextPane,
        Action::PrevPane,
        Action::Save,
        Action::ExternalEditor,
        Action::Palette,
        Action::Help,
        Action::Quit,
        Action::AskNextField,
        Action::AskPrevField,
        Action::AskChoose,
        Action::AskChooseBack,
        Action::AskAccept,
        Action::AskSend,
        Action::AskProvider,
        Action::AskOpenUrl,
        Action::AskCopyUrl,
        Action::AskDecline,
        Action::AskCancel,
        Action::AskHide,
    ];

    /// Whether the action belongs to the modal a server's question opens:
    /// those keys act only there, and the others never do.
    pub fn is_modal(self) -> bool {
        matches!(
            self,
            Action::AskNextField
                | Action::AskPrevField
                | Action::AskChoose
                | Action::AskChooseBack
                | Action::AskAccept
                | Action::AskSend
                | Action::AskProvider
                | Action::AskOpenUrl
                | Action::AskCopyUrl
                | Action::AskDecline
                | Action::AskCancel
                | Action::AskHide
        )
    }

    /// The name used in the config file and the palette.
    pub fn name(self) -> &'static str {
        match self {
            Action::Run => "run",
            Action::Step => "step",
            Action::Continue => "continue",
            Action::Pause => "pause",
            Action::Breakpoint => "breakpoint",
            Action::Rerun => "rerun",
            Action::RerunFrom => "rerun-from",
            Action::Skip => "skip",
            Action::Cancel => "cancel",
            Action::Pin => "pin",
            Action::DryRun => "dry-run",
            Action::Estimate => "estimate",
            Action::NextPane => "next-pane",
            Action::PrevPane => "prev-pane",
            Action::Save => "save",
            Action::ExternalEditor => "external-editor",
            Action::Palette => "palette",
            Action::Help => "help",
            Action::Quit => "quit",
            Action::Timeline => "timeline",
            Action::History => "history",
            Action::Results => "results",
            Action::Judge => "judge",
            Action::RunCases => "run-cases",
            Action::NextCase => "next-case",
            Action::Messages => "messages",
            Action::Zoom => "zoom",
            Action::Wrap => "wrap",
            Action::Questions => "questions",
            Action::AskHide => "ask-hide",
            Action::AskNextField => "ask-next-field",
            Action::AskPrevField => "ask-prev-field",
            Action::AskChoose => "ask-choose",
            Action::AskChooseBack => "ask-choose-back",
            Action::AskAccept => "ask-accept",
            Action::AskSend => "ask-send",
            Action::AskProvider => "ask-provider",
            Action::AskOpenUrl => "ask-open-url",
            Action::AskDecline => "ask-decline",
            Action::AskCancel => "ask-cancel",
            Action::QuickFix => "quick-fix",
            Action::Complete => "complete",
            Action::Yank => "yank",
            Action::YankPath => "yank-path",
            Action::AskCopyUrl => "ask-copy-url",
            Action::WritePipeline => "write-pipeline",
        }
    }

    /// What it does, for the help overlay and the palette.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Run => "run the composition from the start",
            Action::Step => "dispatch one ready node, then pause",
            Action::Continue => "continue after a pause or breakpoint",
            Action::Pause => "pause: in-flight calls finish, nothing new starts",
            Action::Breakpoint => "toggle a breakpoint on the selected node",
            Action::Rerun => "re-run the selected node on its parents' outputs",
            Action::RerunFrom => "re-run the selected node and its descendants",
            Action::Skip => "skip the selected node",
            Action::Cancel => "cancel the run (in-flight calls are cancelled)",
            Action::Pin => "pin: write the selected node's output into the file as its mock:",
            Action::DryRun => "show the plan: waves and resolved args",
            Action::Estimate => "show the plan with projected cost",
            Action::NextPane => "focus the next pane",
            Action::PrevPane => "focus the previous pane",
            Action::Save => "save the file",
            Action::ExternalEditor => "edit the buffer in $EDITOR",
            Action::Palette => "command palette",
            Action::Help => "this help",
            Action::Quit => "quit (asks when there are unsaved edits)",
            Action::Timeline => "switch the DAG pane to the timeline and back",
            Action::History => "the saved runs of this file (open, diff)",
            Action::Results => {
                "results: each case's PASS/FAIL, expectations, judged metrics and output"
            }
            Action::Judge => {
                "judge again: grade the run on screen (in History the chosen run, in Results each run) with the file's eval:, calling no tool"
            }
            Action::RunCases => "run every case of the composition, one after another",
            Action::NextCase => "use the composition's next case for the next run",
            Action::Messages => "messages: every status line, server error and diagnostic in full",
            Action::Zoom => "zoom: the focused pane fills the screen, and back",
            Action::Wrap => "wrap long lines in the inspector and the diagnostics, or cut them",
            Action::Questions => "show the server's question again (after hiding it)",
            Action::AskHide => {
                "server's question: hide it to look at the nodes (F2 brings it back)"
            }
            Action::AskNextField => "server's question: next form field",
            Action::AskPrevField => "server's question: previous form field",
            Action::AskChoose => "server's question: next choice, or flip yes/no",
            Action::AskChooseBack => "server's question: previous choice",
            Action::AskAccept => "server's question: accept (send the form; the link is done)",
            Action::AskSend => "sampling request: send the reply written (Enter is a new line)",
            Action::AskProvider => {
                "sampling request: let the configured provider write it, to approve or edit"
            }
            Action::AskOpenUrl => "server's URL question: open the link in the browser",
            Action::AskDecline => "server's question: decline",
            Action::AskCancel => "server's question: cancel (dismiss without choosing)",
            Action::QuickFix => {
                "quick fix: apply the did-you-mean of the mark on the editor's cursor line"
            }
            Action::Yank => {
                "copy: the selected Args/Output value as JSON, else the node's args (OSC 52)"
            }
            Action::YankPath => {
                "copy the value's path (.users[0].name), else a `pipewright tools call` line"
            }
            Action::AskCopyUrl => "server's URL question: copy the link (OSC 52)",
            Action::WritePipeline => {
                "recording view: write the pipeline of what is recorded so far, as `pipewright new --from` does"
            }
            Action::Complete => {
                "complete at the editor's cursor: tools, arguments, references, values (Tab too, where there is something to complete)"
            }
        }
    }

    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
    }
}

/// One key with its modifiers, as written in the config (`ctrl-s`, `F5`,
/// `shift-r`, `R`, `?`, `tab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn new(code: KeyCode, mods: KeyModifiers) -> Key {
        Key { code, mods }
    }

    const fn plain(c: char) -> Key {
        Key::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    const fn ctrl(c: char) -> Key {
        Key::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// Reads a key from a crossterm event, folding Shift into the
    /// character for letters and symbols so `R` and `shift-r` are one key.
    pub fn from_event(ev: &KeyEvent) -> Key {
        let mut mods =
            ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match ev.code {
            KeyCode::Char(c) => {
                mods.remove(KeyModifiers::SHIFT);
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            KeyCode::BackTab => {
                mods.insert(KeyModifiers::SHIFT);
                KeyCode::Tab
            }
            other => other,
        };
        Key { code, mods }
    }

    /// A key that works in every pane (see the module docs).
    pub fn is_global(&self) -> bool {
        self.mods
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            || matches!(self.code, KeyCode::F(_) | KeyCode::Tab)
    }

    /// Parses `ctrl-s`, `alt-x`, `shift-tab`, `F5`, `R`, `shift-r`, `?`,
    /// `space`, `enter`, `esc`.
    pub fn parse(text: &str) -> Result<Key, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("empty key".into());
        }
        let mut mods = KeyModifiers::NONE;
        let mut rest = t;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (m, len) = if lower.starts_with("ctrl-") || lower.starts_with("ctrl+") {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt-") || lower.starts_with("alt+") {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift-") || lower.starts_with("shift+") {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            if rest.len() == len {
                break;
            }
            mods |= m;
            rest = &rest[len..];
        }
        let lower = rest.to_ascii_lowercase();
        let code = match lower.as_str() {
            "tab" => KeyCode::Tab,
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            f if f.len() >= 2
                && f.starts_with('f')
                && f[1..].chars().all(|c| c.is_ascii_digit()) =>
            {
                let n: u8 = f[1..]
                    .parse()
                    .map_err(|_| format!("bad function key `{rest}`"))?;
                if !(1..=24).contains(&n) {
                    return Err(format!("no function key F{n}"));
                }
                KeyCode::F(n)
            }
            _ if rest.chars().count() == 1 => {
                let c = rest.chars().next().unwrap_or(' ');
                if mods.contains(KeyModifiers::SHIFT) && c.is_ascii_alphabetic() {
                    mods.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(c.to_ascii_uppercase())
                } else if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            _ => return Err(format!("unknown key `{rest}`")),
        };
        if matches!(code, KeyCode::Char(_)) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Ok(Key { code, mods })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                write!(f, "{}", c.to_ascii_uppercase())
            }
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Which action each key triggers.
#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<Key>>,
}

impl Default for Keymap {
    fn default() -> Self {
        use Action::*;
        let f = |n| Key::new(KeyCode::F(n), KeyModifiers::NONE);
        let mut b = BTreeMap::new();
        b.insert(Run, vec![f(5)]);
        b.insert(Step, vec![f(10)]);
        b.insert(Continue, vec![f(8)]);
        b.insert(Pause, vec![Key::plain('p'), f(6)]);
        b.insert(Breakpoint, vec![Key::plain('b'), f(9)]);
        b.insert(Rerun, vec![Key::plain('r')]);
        b.insert(RerunFrom, vec![Key::plain('R')]);
        b.insert(Skip, vec![Key::plain('s')]);
        b.insert(Cancel, vec![Key::plain('x'), Key::ctrl('c')]);
        b.insert(Pin, vec![Key::plain('P')]);
        b.insert(DryRun, vec![Key::plain('d')]);
        b.insert(Estimate, vec![Key::plain('e')]);
        b.insert(
            QuickFix,
            vec![Key::new(KeyCode::Enter, KeyModifiers::ALT), Key::ctrl('.')],
        );
        b.insert(Complete, vec![Key::ctrl(' ')]);
        b.insert(Timeline, vec![Key::plain('T')]);
        b.insert(History, vec![Key::plain('H')]);
        b.insert(Results, vec![Key::plain('v')]);
        b.insert(Judge, vec![Key::plain('J')]);
        b.insert(RunCases, vec![Key::plain('A')]);
        b.insert(NextCase, vec![Key::plain('c')]);
        b.insert(Messages, vec![Key::plain('m')]);
        b.insert(Zoom, vec![Key::plain('z')]);
        b.insert(Wrap, vec![Key::plain('w')]);
        b.insert(Yank, vec![Key::plain('y')]);
        b.insert(YankPath, vec![Key::plain('Y')]);
        b.insert(WritePipeline, vec![Key::plain('W')]);
        b.insert(Questions, vec![f(2)]);
        b.insert(NextPane, vec![Key::new(KeyCode::Tab, KeyModifiers::NONE)]);
        b.insert(PrevPane, vec![Key::new(KeyCode::Tab, KeyModifiers::SHIFT)]);
        b.insert(Save, vec![Key::ctrl('s')]);
        b.insert(ExternalEditor, vec![Key::ctrl('o')]);
        b.insert(Palette, vec![Key::plain(':'), Key::ctrl('p')]);
        b.insert(Help, vec![Key::plain('?'), f(1)]);
        b.insert(Quit, vec![Key::plain('q'), Key::ctrl('q')]);
        let key = |code| Key::new(code, KeyModifiers::NONE);
        b.insert(AskNextField, vec![key(KeyCode::Tab)]);
        b.insert(
            AskPrevField,
            vec![Key::new(KeyCode::Tab, KeyModifiers::SHIFT)],
        );
        b.insert(AskChoose, vec![Key::plain(' '), key(KeyCode::Right)]);
        b.insert(AskChooseBack, vec![key(KeyCode::Left)]);
        b.insert(AskAccept, vec![key(KeyCode::Enter)]);
        b.insert(
            AskSend,
            vec![Key::ctrl('s'), Key::new(KeyCode::Enter, KeyModifiers::ALT)],
        );
        b.insert(AskProvider, vec![Key::ctrl('g')]);
        b.insert(AskOpenUrl, vec![Key::plain('o')]);
        b.insert(AskCopyUrl, vec![Key::plain('y')]);
        b.insert(AskDecline, vec![key(KeyCode::Esc)]);
        b.insert(AskCancel, vec![Key::ctrl('c')]);
        b.insert(AskHide, vec![f(2)]);
        Keymap { bindings: b }
    }
}

impl Keymap {
    /// The defaults with the user's overrides applied: each entry replaces
    /// that action's keys. Unknown actions and bad keys are errors naming
    /// the entry.
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (name, keys) in overrides {
            let action = Action::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                format!("keys.{name}: no such action (one of: {})", names.join(", "))
            })?;
            let parsed = keys
                .iter()
                .map(|k| Key::parse(k).map_err(|e| format!("keys.{name}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            map.bindings.insert(action, parsed);
        }
        Ok(map)
    }

    /// The action of a key press. `in_editor` drops command keys (plain
    /// characters), which the editor takes as text.
    pub fn action(&self, ev: &KeyEvent, in_editor: bool) -> Option<Action> {
        let key = Key::from_event(ev);
        if in_editor && !key.is_global() {
            return None;
        }
        self.find(key, false)
    }

    /// The action of a key press in a server's question (the modal): only
    /// the `ask-*` actions. `typing` (a text field or the reply area has
    /// the keys) drops plain characters, which are typed.
    pub fn modal_action(&self, ev: &KeyEvent, typing: bool) -> Option<Action> {
        let key = Key::from_event(ev);
        if typing && matches!(key.code, KeyCode::Char(_)) && !key.is_global() {
            return None;
        }
        self.find(key, true)
    }

    fn find(&self, key: Key, modal: bool) -> Option<Action> {
        self.bindings
            .iter()
            .find(|(a, keys)| a.is_modal() == modal && keys.contains(&key))
            .map(|(a, _)| *a)
    }

    /// The keys of an action, for the help and the status bar.
    pub fn keys(&self, action: Action) -> &[Key] {
        self.bindings.get(&action).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first key of an action as text (`F5`), or `-` when unbound.
    pub fn label(&self, action: Action) -> String {
        self.keys(action)
            .first()
            .map(ToString::to_string)
            .unwrap_or_else(|| "-".into())
    }
}

/// `crossterm`'s key, folded like the keymap does.
impl From<KeyEvent> for Key {
    fn from(ev: KeyEvent) -> Key {
        Key::from_event(&ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[rstest]
    #[case("F5", KeyCode::F(5), KeyModifiers::NONE)]
    #[case("ctrl-s", KeyCode::Char('s'), KeyModifiers::CONTROL)]
    #[case("Ctrl+S", KeyCode::Char('s'), KeyModifiers::CONTROL)]
    #[case("shift-r", KeyCode::Char('R'), KeyModifiers::NONE)]
    #[case("R", KeyCode::Char('R'), KeyModifiers::NONE)]
    #[case("?", KeyCode::Char('?'), KeyModifiers::NONE)]
    #[case("shift-tab", KeyCode::Tab, KeyModifiers::SHIFT)]
    #[case("alt-x", KeyCode::Char('x'), KeyModifiers::ALT)]
    #[case("space", KeyCode::Char(' '), KeyModifiers::NONE)]
    #[case("-", KeyCode::Char('-'), KeyModifiers::NONE)]
    fn parses_keys(#[case] text: &str, #[case] code: KeyCode, #[case] mods: KeyModifiers) {
        assert_eq!(Key::parse(text).unwrap(), Key::new(code, mods));
    }

    #[rstest]
    #[case("")]
    #[case("F99")]
    #[case("ctrl-banana")]
    #[case("hyper-x")]
    fn rejects_bad_keys(#[case] text: &str) {
        assert!(Key::parse(text).is_err(), "{text}");
    }

    #[test]
    fn shift_letter_from_terminal_is_the_capital() {
        let k = Key::from_event(&ev(KeyCode::Char('R'), KeyModifiers::SHIFT));
        assert_eq!(k, Key::parse("R").unwrap());
        let k = Key::from_event(&ev(KeyCode::BackTab, KeyModifiers::SHIFT));
        assert_eq!(k, Key::parse("shift-tab").unwrap());
    }

    #[test]
    fn defaults_follow_the_spec() {
        let m = Keymap::default();
        let a = |c, mods| m.action(&ev(c, mods), false);
        assert_eq!(a(KeyCode::F(5), KeyModifiers::NONE), Some(Action::Run));
        assert_eq!(a(KeyCode::F(10), KeyModifiers::NONE), Some(Action::Step));
        assert_eq!(a(KeyCode::F(8), KeyModifiers::NONE), Some(Action::Continue));
        assert_eq!(
            a(KeyCode::Char('p'), KeyModifiers::NONE),
            Some(Action::Pause)
        );
        assert_eq!(
            a(KeyCode::Char('b'), KeyModifiers::NONE),
            Some(Action::Breakpoint)
        );
        assert_eq!(
            a(KeyCode::Char('R'), KeyModifiers::SHIFT),
            Some(Action::RerunFrom)
        );
        assert_eq!(
            a(KeyCode::Char('s'), KeyModifiers::NONE),
            Some(Action::Skip)
        );
        assert_eq!(
            a(KeyCode::Char('x'), KeyModifiers::NONE),
            Some(Action::Cancel)
        );
        assert_eq!(
            a(KeyCode::Char('d'), KeyModifiers::NONE),
            Some(Action::DryRun)
        );
        assert_eq!(
            a(KeyCode::Char('e'), KeyModifiers::NONE),
            Some(Action::Estimate)
        );
        assert_eq!(a(KeyCode::Tab, KeyModifiers::NONE), Some(Action::NextPane));
        assert_eq!(
            a(KeyCode::Char('s'), KeyModifiers::CONTROL),
            Some(Action::Save)
        );
        assert_eq!(
            a(KeyCode::Char('?'), KeyModifiers::NONE),
            Some(Action::Help)
        );
        assert_eq!(
            a(KeyCode::Char('q'), KeyModifiers::NONE),
            Some(Action::Quit)
        );
    }

    #[test]
    fn command_keys_type_text_in_the_editor() {
        let m = Keymap::default();
        assert_eq!(
            m.action(&ev(KeyCode::Char('q'), KeyModifiers::NONE), true),
            None
        );
        assert_eq!(
            m.action(&ev(KeyCode::Char('s'), KeyModifiers::NONE), true),
            None
        );
        assert_eq!(
            m.action(&ev(KeyCode::Char('s'), KeyModifiers::CONTROL), true),
            Some(Action::Save)
        );
        assert_eq!(
            m.action(&ev(KeyCode::F(5), KeyModifiers::NONE), true),
            Some(Action::Run)
        );
    }

    #[test]
    fn overrides_replace_an_actions_keys() {
        let mut o = BTreeMap::new();
        o.insert("run".to_string(), vec!["ctrl-r".to_string()]);
        let m = Keymap::with_overrides(&o).unwrap();
        assert_eq!(
            m.action(&ev(KeyCode::F(5), KeyModifiers::NONE), false),
            None
        );
        assert_eq!(
            m.action(&ev(KeyCode::Char('r'), KeyModifiers::CONTROL), false),
            Some(Action::Run)
        );
        assert_eq!(m.label(Action::Run), "Ctrl-R");
    }

    #[test]
    fn the_modal_keys_act_only_in_the_modal() {
        let m = Keymap::default();
        let tab = ev(KeyCode::Tab, KeyModifiers::NONE);
        let ctrl_c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
        let ctrl_s = ev(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(m.action(&tab, false), Some(Action::NextPane));
        assert_eq!(m.modal_action(&tab, true), Some(Action::AskNextField));
        assert_eq!(m.action(&ctrl_c, false), Some(Action::Cancel));
        assert_eq!(m.modal_action(&ctrl_c, true), Some(Action::AskCancel));
        assert_eq!(m.action(&ctrl_s, true), Some(Action::Save));
        assert_eq!(m.modal_action(&ctrl_s, true), Some(Action::AskSend));
        let enter = ev(KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(m.action(&enter, false), None);
        // Typing: letters and Space are text; without a text field, `o`
        // opens the link and Space chooses.
        let o = ev(KeyCode::Char('o'), KeyModifiers::NONE);
        let space = ev(KeyCode::Char(' '), KeyModifiers::NONE);
        assert_eq!(m.modal_action(&o, true), None);
        assert_eq!(m.modal_action(&o, false), Some(Action::AskOpenUrl));
        assert_eq!(m.modal_action(&space, true), None);
        assert_eq!(m.modal_action(&space, false), Some(Action::AskChoose));
    }

    #[test]
    fn bad_overrides_name_the_entry() {
        let mut o = BTreeMap::new();
        o.insert("launch".to_string(), vec!["F5".to_string()]);
        let e = Keymap::with_overrides(&o).unwrap_err();
        assert!(e.contains("keys.launch"), "{e}");
        let mut o = BTreeMap::new();
        o.insert("run".to_string(), vec!["F77".to_string()]);
        let e = Keymap::with_overrides(&o).unwrap_err();
        assert!(e.contains("keys.run") && e.contains("F77"), "{e}");
    }
}
