//! Behaviour of the editor pane: keys, validation, saving, recovery and
//! changes on disk, and what it draws (with insta snapshots of styled frames).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

use super::undo::Kind;
use super::*;
use crate::msg::RecoveryAnswer;
use crate::theme::Theme;
use pipewright_engine::diag::{Pos, Span};

const PIPE: &str = "pipe:
  - id: find
    tool: search_users
    args:
      query: carol
  - id: details
    tool: get_user_details
    args:
      user_id: ${find.users[0].id}
";

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn file(&self) -> PathBuf {
        self.dir.path().join("p.yml")
    }
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    fn write(&self, text: &str) -> PathBuf {
        std::fs::write(self.file(), text).unwrap();
        self.file()
    }
    fn open(&self) -> Editor {
        Editor::open(&self.file(), Some(&self.data())).unwrap()
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn shift(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::SHIFT)
}

fn type_str(e: &mut Editor, s: &str) {
    for c in s.chars() {
        let k = if c == '\n' {
            key(KeyCode::Enter)
        } else {
            key(KeyCode::Char(c))
        };
        assert!(e.handle_key(k));
    }
}

/// Ticks (far enough ahead to pass every debounce) until `pred` accepts an
/// event, collecting everything seen.
fn tick_until(e: &mut Editor, pred: impl Fn(&EditorEvent) -> bool) -> Vec<EditorEvent> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut step = 1;
    while Instant::now() < deadline {
        let events = e.tick(Instant::now() + Duration::from_secs(step));
        step += 1;
        let done = events.iter().any(&pred);
        seen.extend(events);
        if done {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no matching event; saw {seen:?}");
}

fn render(e: &mut Editor, w: u16, h: u16, focused: bool) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    e.render(area, &mut buf, &Theme::dark(), focused);
    buf
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

fn screen(buf: &Buffer) -> Vec<String> {
    (0..buf.area.height).map(|y| row_text(buf, y)).collect()
}

// --- keys ---

#[test]
fn typing_edits_and_marks_dirty() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    assert!(!e.is_dirty());
    type_str(&mut e, "b: 2\n");
    assert_eq!(e.text(), "b: 2\na: 1\n");
    assert!(e.is_dirty());
    assert_eq!(e.cursor(), (2, 1));
    let buf = render(&mut e, 30, 6, true);
    assert!(
        row_text(&buf, 0).contains("p.yml [+]"),
        "{:?}",
        screen(&buf)
    );
}

#[test]
fn undo_and_redo() {
    let f = Fixture::new();
    f.write("");
    let mut e = f.open();
    type_str(&mut e, "ab");
    assert!(e.handle_key(ctrl('z')));
    assert_eq!(e.text(), "", "a typed word is one step");
    assert!(e.handle_key(ctrl('y')));
    assert_eq!(e.text(), "ab");
    e.handle_key(ctrl('z'));
    e.handle_key(KeyEvent::new(
        KeyCode::Char('z'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    ));
    assert_eq!(e.text(), "ab", "Ctrl-Shift-Z redoes too");
}

#[test]
fn typing_coalesces_into_words_and_other_edits_are_steps_of_their_own() {
    let f = Fixture::new();
    f.write("");
    let mut e = f.open();
    type_str(&mut e, "one two");
    e.handle_key(key(KeyCode::Backspace));
    e.handle_key(key(KeyCode::Backspace));
    type_str(&mut e, "en");
    e.paste_text("\rthree\r\nfour");
    assert_eq!(e.text(), "one ten\nthree\nfour");
    let steps = ["one ten", "one t", "one two", "one ", ""];
    for want in steps {
        e.handle_key(ctrl('z'));
        assert_eq!(e.text(), want);
    }
    assert!(!e.history(false), "nothing more to undo");
    for want in steps.iter().rev().skip(1) {
        e.handle_key(ctrl('y'));
        assert_eq!(e.text(), *want);
    }
    e.handle_key(ctrl('y'));
    assert_eq!(e.text(), "one ten\nthree\nfour");
}

#[test]
fn pasting_nothing_over_a_selection_is_an_undoable_edit() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    e.handle_key(ctrl('a'));
    e.handle_key(ctrl('v'));
    assert_eq!(e.text(), "");
    assert!(e.is_dirty());
    e.handle_key(ctrl('z'));
    assert_eq!(e.text(), "a: 1\n");
}

#[test]
fn a_pause_in_typing_starts_a_new_step() {
    let f = Fixture::new();
    f.write("");
    let mut e = f.open();
    let now = Instant::now();
    e.edit(Kind::Type('a'), |a| {
        a.insert_char('a');
        true
    });
    assert!(e.steps.joins(Kind::Type('b'), e.pos(), false, now));
    let later = now + super::undo::PAUSE + Duration::from_millis(200);
    assert!(!e.steps.joins(Kind::Type('b'), e.pos(), false, later));
    assert!(
        !e.steps.joins(Kind::Delete, e.pos(), false, now),
        "delete after insert"
    );
    assert!(
        !e.steps.joins(Kind::Type('b'), (0, 0), false, now),
        "the cursor moved"
    );
    assert!(
        !e.steps.joins(Kind::Type('b'), e.pos(), true, now),
        "a selection"
    );
}

#[test]
fn undo_back_to_the_saved_text_is_clean_after_validation() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    type_str(&mut e, "x");
    e.handle_key(ctrl('z'));
    assert_eq!(e.text(), "a: 1\n");
    assert!(e.is_dirty(), "dirty until the text is compared");
    tick_until(&mut e, |ev| matches!(ev, EditorEvent::Validated { .. }));
    assert!(!e.is_dirty());
}

#[test]
fn enter_keeps_yaml_indentation() {
    let f = Fixture::new();
    f.write("");
    let mut e = f.open();
    type_str(&mut e, "pipe:\n- id: a\ntool: t");
    assert_eq!(e.text(), "pipe:\n  - id: a\n    tool: t");
}

#[test]
fn app_keys_are_left_to_the_app() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    assert!(!e.handle_key(key(KeyCode::Tab)));
    assert!(!e.handle_key(ctrl('o')));
    assert!(!e.handle_key(ctrl('p')));
    assert!(!e.handle_key(key(KeyCode::F(5))));
    assert_eq!(e.text(), "a: 1\n");
}

#[test]
fn shift_arrows_select_and_typing_replaces_the_selection() {
    let f = Fixture::new();
    f.write("hello world");
    let mut e = f.open();
    for _ in 0..5 {
        e.handle_key(shift(KeyCode::Right));
    }
    type_str(&mut e, "bye");
    assert_eq!(e.text(), "bye world");
    e.handle_key(ctrl('a'));
    e.handle_key(ctrl('x'));
    assert_eq!(e.text(), "");
    e.handle_key(ctrl('v'));
    assert_eq!(e.text(), "bye world");
}

#[test]
fn search_steps_through_matches() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    assert!(e.handle_key(ctrl('f')));
    type_str(&mut e, "tool");
    assert_eq!(
        e.cursor(),
        (3, 5),
        "incremental search lands on the first match"
    );
    e.handle_key(key(KeyCode::Enter));
    assert_eq!(e.cursor(), (7, 5));
    e.handle_key(key(KeyCode::Char('n')));
    assert_eq!(e.cursor(), (3, 5), "wraps around");
    e.handle_key(key(KeyCode::Char('N')));
    assert_eq!(e.cursor(), (7, 5));
    e.handle_key(shift(KeyCode::Enter));
    assert_eq!(e.cursor(), (3, 5));
    assert_eq!(e.search_status(), Some((Some(1), 2)));
    assert_eq!(e.text(), PIPE, "search keys never edit");
    e.handle_key(key(KeyCode::Esc));
    assert!(e.search_status().is_none());
    type_str(&mut e, "x");
    assert!(e.text().contains("    xtool: search_users"));
}

#[test]
fn search_without_match_says_so() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.handle_key(ctrl('f'));
    type_str(&mut e, "zebra");
    let events = e.tick(Instant::now());
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, EditorEvent::Message(m) if m.contains("no match"))),
        "{events:?}"
    );
    assert_eq!(e.cursor(), (1, 1));
}

#[test]
fn goto_line_prompt_and_api() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.handle_key(ctrl('g'));
    type_str(&mut e, "6");
    e.handle_key(key(KeyCode::Enter));
    assert_eq!(e.cursor(), (6, 1));
    e.handle_key(ctrl('g'));
    type_str(&mut e, "2:5");
    e.handle_key(key(KeyCode::Enter));
    assert_eq!(e.cursor(), (2, 5));
    e.goto(99, 99);
    assert_eq!(e.cursor(), (10, 1), "clamped to the last line");
}

#[test]
fn set_text_is_one_more_undoable_change() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    let changed = PIPE.replace("carol", "dave");
    e.set_text(&changed);
    assert_eq!(e.text(), changed);
    assert!(e.is_dirty());
    let mut steps = 0;
    while e.text() != PIPE && steps < 4 {
        e.handle_key(ctrl('z'));
        steps += 1;
    }
    assert_eq!(e.text(), PIPE);
    assert!(steps <= 2, "{steps} undo steps");
    e.set_text("");
    assert_eq!(e.text(), "");
    e.set_text("a\nb");
    assert_eq!(e.text(), "a\nb");
}

#[test]
fn crlf_files_keep_their_line_endings() {
    let f = Fixture::new();
    f.write("a: 1\r\nb: 2\r\n");
    let mut e = f.open();
    e.goto(2, 1);
    type_str(&mut e, "c");
    assert_eq!(e.text(), "a: 1\r\ncb: 2\r\n");
}

// --- validation ---

#[test]
fn validation_is_debounced_and_reports_diagnostics() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    let first = tick_until(&mut e, |ev| matches!(ev, EditorEvent::Validated { .. }));
    let EditorEvent::Validated { loaded, .. } = first.last().unwrap() else {
        unreachable!()
    };
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);

    // Break the reference on line 9: `find` → `fnd`.
    e.goto(9, 20);
    e.handle_key(key(KeyCode::Backspace));
    let now = Instant::now();
    assert!(
        e.tick(now)
            .iter()
            .all(|ev| !matches!(ev, EditorEvent::Validated { .. })),
        "nothing is validated inside the debounce"
    );
    let events = tick_until(&mut e, |ev| matches!(ev, EditorEvent::Validated { .. }));
    let Some(EditorEvent::Validated { generation, loaded }) = events
        .iter()
        .rev()
        .find(|ev| matches!(ev, EditorEvent::Validated { .. }))
    else {
        unreachable!()
    };
    assert!(*generation >= 2);
    let errors: Vec<_> = loaded.errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].span.start.line, 9);
    assert!(
        errors[0].message.contains("unknown node `fnd`"),
        "{}",
        errors[0].message
    );
    assert_eq!(
        e.diagnostics(),
        loaded.diagnostics.as_slice(),
        "applied to the pane"
    );
}

// --- saving ---

#[test]
fn save_writes_atomically_and_reports() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    type_str(&mut e, "#");
    assert!(e.handle_key(ctrl('s')));
    assert_eq!(std::fs::read_to_string(f.file()).unwrap(), "#a: 1\n");
    assert!(!e.is_dirty());
    let events = e.tick(Instant::now());
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, EditorEvent::Saved(p) if p == &f.file()))
    );
    let names: Vec<_> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn a_missing_file_opens_empty_and_save_creates_it() {
    let f = Fixture::new();
    let mut e = f.open();
    assert_eq!(e.text(), "");
    type_str(&mut e, "pipe: []\n");
    e.save().unwrap();
    assert_eq!(std::fs::read_to_string(f.file()).unwrap(), "pipe: []\n");
}

#[test]
fn a_failed_save_leaves_the_file_intact() {
    let f = Fixture::new();
    f.write("a: 1\n");
    let mut e = f.open();
    type_str(&mut e, "x");
    // Occupy the temporary file's name with a directory, so creating it
    // fails the way a full disk or a read-only directory would (this works
    // even for root, whom permissions do not stop).
    let blocker = f
        .dir
        .path()
        .join(format!(".p.yml.pipewright-{}.tmp", std::process::id()));
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("keep"), "x").unwrap();
    assert!(e.save().is_err());
    assert_eq!(std::fs::read_to_string(f.file()).unwrap(), "a: 1\n");
    assert!(e.is_dirty());
    assert!(e.handle_key(ctrl('s')));
    let events = e.tick(Instant::now());
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, EditorEvent::Message(m) if m.starts_with("cannot save"))),
        "{events:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_fails_the_save_without_damage() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let sub = f.dir.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    let file = sub.join("p.yml");
    std::fs::write(&file, "a: 1\n").unwrap();
    let mut e = Editor::open(&file, None).unwrap();
    type_str(&mut e, "x");
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = std::fs::write(sub.join("probe"), "");
    if probe.is_ok() {
        // Running as root: permissions do not stop writes; the test above
        // covers the failure path.
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    assert!(e.save().is_err());
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a: 1\n");
}

// --- recovery ---

fn recovery_files(f: &Fixture) -> usize {
    std::fs::read_dir(f.data().join("recovery"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn typed_text_survives_a_crash() {
    let f = Fixture::new();
    f.write(PIPE);
    {
        let mut e = f.open();
        e.goto(1, 1);
        type_str(&mut e, "# unsaved\n");
        e.tick(Instant::now() + RECOVERY_DEBOUNCE + Duration::from_millis(10));
        assert_eq!(recovery_files(&f), 2, "text and its side file");
        // Dropped without saving: a crash, as far as the file knows.
    }
    let mut e = f.open();
    assert!(e.recovery_pending());
    assert_eq!(e.text(), PIPE, "the file is shown until the user answers");
    assert!(
        !e.handle_key(key(KeyCode::Char('x'))),
        "edits wait for the answer"
    );
    // The app's dialog answers (`r` there).
    let said = e.answer_recovery(RecoveryAnswer::Recover);
    assert!(said.starts_with("recovered"), "{said}");
    assert!(!e.recovery_pending());
    assert_eq!(e.text(), format!("# unsaved\n{PIPE}"));
    assert!(e.is_dirty());
    e.handle_key(ctrl('z'));
    e.handle_key(ctrl('z'));
    assert_eq!(e.text(), PIPE, "recovering is undoable");
}

#[test]
fn edits_newer_than_the_last_copy_are_written_when_the_editor_drops() {
    let f = Fixture::new();
    f.write(PIPE);
    {
        let mut e = f.open();
        type_str(&mut e, "a");
        e.tick(Instant::now() + Duration::from_secs(2));
        type_str(&mut e, "b");
        // Dropped (a panic unwinding, say) before the next debounce.
    }
    let mut e = f.open();
    assert!(e.recovery_pending());
    e.answer_recovery(RecoveryAnswer::Recover);
    assert_eq!(e.text(), format!("ab{PIPE}"));
    // A clean quit that throws the edits away leaves nothing behind.
    e.discard_recovery();
    drop(e);
    assert_eq!(recovery_files(&f), 0);
    assert!(!f.open().recovery_pending());
}

#[test]
fn diagnostics_move_with_inserted_lines() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.set_diagnostics(vec![diag(9, 17, 20, "unknown node `fnd`")]);
    e.goto(2, 1);
    type_str(&mut e, "# note\n");
    assert_eq!(e.diagnostics()[0].span.start.line, 10);
    e.handle_key(key(KeyCode::Backspace));
    assert_eq!(e.diagnostics()[0].span.start.line, 9);
}

#[test]
fn quitting_before_answering_keeps_the_offer() {
    let f = Fixture::new();
    f.write(PIPE);
    {
        let mut e = f.open();
        type_str(&mut e, "zzz");
        e.tick(Instant::now() + Duration::from_secs(2));
    }
    {
        let mut e = f.open();
        assert!(e.recovery_pending());
        // The app saves and quits cleanly without the user answering.
        assert!(!e.handle_key(ctrl('s')), "Ctrl-S waits for the answer too");
        e.save().unwrap();
        e.discard_recovery();
    }
    let mut e = f.open();
    assert!(e.recovery_pending());
    e.answer_recovery(RecoveryAnswer::Recover);
    assert_eq!(e.text(), format!("zzz{PIPE}"));
}

#[test]
fn discarding_the_recovery_copy_deletes_it() {
    let f = Fixture::new();
    f.write(PIPE);
    {
        let mut e = f.open();
        type_str(&mut e, "zzz");
        e.tick(Instant::now() + Duration::from_secs(2));
    }
    let mut e = f.open();
    assert!(e.recovery_pending());
    e.answer_recovery(RecoveryAnswer::Discard);
    assert!(!e.recovery_pending());
    assert_eq!(e.text(), PIPE);
    assert_eq!(recovery_files(&f), 0);
    drop(e);
    assert!(!f.open().recovery_pending());
}

#[test]
fn saving_and_clean_quit_remove_the_recovery_copy() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    type_str(&mut e, "a");
    e.tick(Instant::now() + Duration::from_secs(2));
    assert_eq!(recovery_files(&f), 2);
    e.save().unwrap();
    assert_eq!(recovery_files(&f), 0);
    type_str(&mut e, "b");
    e.tick(Instant::now() + Duration::from_secs(4));
    assert_eq!(recovery_files(&f), 2);
    e.discard_recovery();
    assert_eq!(recovery_files(&f), 0);
}

#[test]
fn a_copy_equal_to_the_file_is_not_offered() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    type_str(&mut e, "a");
    e.tick(Instant::now() + Duration::from_secs(2));
    drop(e);
    f.write(&format!("a{PIPE}"));
    assert!(!f.open().recovery_pending());
    assert_eq!(recovery_files(&f), 0);
}

// --- changes on disk ---

#[test]
fn an_unedited_buffer_follows_the_file() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.tick(Instant::now());
    f.write("pipe:\n  - id: other\n    tool: t\n");
    let events = tick_until(&mut e, |ev| {
        matches!(ev, EditorEvent::ExternalChange { .. })
    });
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, EditorEvent::ExternalChange { dirty: false }))
    );
    assert_eq!(e.text(), "pipe:\n  - id: other\n    tool: t\n");
    assert!(!e.is_dirty());
    assert!(!e.external_change_pending());
}

#[test]
fn an_edited_buffer_asks_before_reloading() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.tick(Instant::now());
    type_str(&mut e, "mine ");
    f.write("theirs: 1\n");
    let events = tick_until(&mut e, |ev| {
        matches!(ev, EditorEvent::ExternalChange { .. })
    });
    assert!(
        events
            .iter()
            .any(|ev| matches!(ev, EditorEvent::ExternalChange { dirty: true }))
    );
    assert!(e.external_change_pending());
    assert_eq!(
        e.text(),
        format!("mine {PIPE}"),
        "nothing is lost while asking"
    );
    let buf = render(&mut e, 60, 8, true);
    assert!(
        row_text(&buf, 6).contains("[r]eload [k]eep mine"),
        "{:?}",
        screen(&buf)
    );
    assert!(e.handle_key(key(KeyCode::Char('r'))));
    assert_eq!(e.text(), "theirs: 1\n");
    assert!(!e.is_dirty());
}

#[test]
fn keeping_mine_after_an_external_change() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.tick(Instant::now());
    type_str(&mut e, "mine ");
    f.write("theirs: 1\n");
    tick_until(&mut e, |ev| {
        matches!(ev, EditorEvent::ExternalChange { .. })
    });
    assert!(e.handle_key(key(KeyCode::Char('k'))));
    assert!(!e.external_change_pending());
    assert_eq!(e.text(), format!("mine {PIPE}"));
    assert!(e.is_dirty());
    e.save().unwrap();
    assert_eq!(
        std::fs::read_to_string(f.file()).unwrap(),
        format!("mine {PIPE}")
    );
}

// --- drawing ---

fn diag(line: u32, col: u32, end_col: u32, msg: &str) -> Diagnostic {
    Diagnostic::error(Span::new(Pos::new(line, col), Pos::new(line, end_col)), msg)
}

#[test]
fn gutter_marks_and_messages_sit_at_their_lines() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    e.set_diagnostics(vec![
        diag(9, 17, 20, "unknown node `fnd`"),
        Diagnostic::warning(Span::at(Pos::new(3, 5)), "tool not listed"),
    ]);
    let buf = render(&mut e, 50, 16, false);
    let s = screen(&buf);
    // Row 0 is the border; line N is at row N until the warning row under line 3.
    assert!(s[3].starts_with("│▲  3     tool: search_users"), "{s:#?}");
    assert!(s[4].starts_with("│         └ tool not listed"), "{s:#?}");
    assert!(s[10].starts_with("│!  9       user_id:"), "{s:#?}");
    // The message's corner sits under column 17 of line 9 (the text starts
    // at x = 6: border, marker, two digits and two spaces).
    assert_eq!(
        s[11].find('└').map(|i| s[11][..i].chars().count()),
        Some(6 + 16)
    );
    assert!(s[11].contains("unknown node `fnd`"));
    assert_eq!(buf[(1, 10)].fg, Theme::dark().error);
    assert_eq!(buf[(1, 3)].fg, Theme::dark().warning);
    // The span is underlined.
    assert!(buf[(6 + 16, 10)].modifier.contains(Modifier::UNDERLINED));
    assert!(!buf[(6 + 15, 10)].modifier.contains(Modifier::UNDERLINED));
}

#[test]
fn long_lines_scroll_horizontally_with_the_cursor() {
    let f = Fixture::new();
    let long = format!("key: {}END", "x".repeat(60));
    f.write(&long);
    let mut e = f.open();
    e.goto(1, long.chars().count() + 1);
    let buf = render(&mut e, 30, 4, true);
    let row = row_text(&buf, 1);
    assert!(row.contains("xxEND"), "{row}");
    assert!(!row.contains("key"), "{row}");
    // The cursor is drawn after the last character.
    let end = row.find("END").unwrap() + 3;
    let x = row[..end].chars().count() as u16;
    assert!(buf[(x, 1)].modifier.contains(Modifier::REVERSED));
    e.goto(1, 1);
    let row = row_text(&render(&mut e, 30, 4, true), 1);
    assert!(row.contains("key: xx"), "{row}");
}

#[test]
fn the_view_follows_the_cursor_down_and_the_wheel_scrolls() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let f = Fixture::new();
    let text: String = (1..=100).map(|i| format!("k{i}: {i}\n")).collect();
    f.write(&text);
    let mut e = f.open();
    e.goto(80, 1);
    let s = screen(&render(&mut e, 30, 10, true));
    assert!(s.iter().any(|r| r.contains(" 80 k80: 80")), "{s:#?}");
    let area = Rect::new(0, 0, 30, 10);
    let wheel = |kind| MouseEvent {
        kind,
        column: 5,
        row: 5,
        modifiers: KeyModifiers::NONE,
    };
    for _ in 0..3 {
        assert!(e.handle_mouse(wheel(MouseEventKind::ScrollUp), area));
    }
    let s = screen(&render(&mut e, 30, 10, true));
    assert!(
        !s.iter().any(|r| r.contains("k80:")),
        "the wheel leaves the cursor: {s:#?}"
    );
    // A click puts the cursor where it lands.
    let click = MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 9,
        row: 2,
        modifiers: KeyModifiers::NONE,
    };
    assert!(e.handle_mouse(click, area));
    let (line, col) = e.cursor();
    assert_eq!(col, 3);
    assert!(s[2].contains(&format!(" {line} k{line}:")), "{s:#?} {line}");
}

#[test]
fn only_visible_lines_are_coloured() {
    let f = Fixture::new();
    let text: String = (1..=500).map(|i| format!("k{i}: {i}\n")).collect();
    f.write(&text);
    let mut e = f.open();
    render(&mut e, 30, 10, true);
    let coloured = e.highlight.as_ref().unwrap().lines_coloured;
    assert!(coloured <= 10, "{coloured}");
    type_str(&mut e, "z");
    render(&mut e, 30, 10, true);
    assert_eq!(
        e.highlight.as_ref().unwrap().lines_coloured,
        coloured + 1,
        "a keystroke re-colours its line only"
    );
}

// --- snapshots (styles included: the Debug form of a Buffer lists them) ---

fn snapshot_editor(f: &Fixture, text: &str) -> Editor {
    f.write(text);
    Editor::open(&f.file(), None).unwrap()
}

/// The buffer's Debug form names the temporary directory nowhere: the
/// title shows the path, so tests render with a fixed relative one.
fn with_fixed_path(e: &mut Editor) {
    e.path = Path::new("examples/p.yml").to_path_buf();
}

#[test]
fn snapshot_coloured_file_with_line_numbers() {
    let f = Fixture::new();
    let mut e = snapshot_editor(&f, PIPE);
    with_fixed_path(&mut e);
    let buf = render(&mut e, 44, 12, true);
    insta::assert_debug_snapshot!(buf);
}

#[test]
fn snapshot_diagnostic_under_a_line() {
    let f = Fixture::new();
    let mut e = snapshot_editor(&f, &PIPE.replace("find.users", "fnd.users"));
    with_fixed_path(&mut e);
    e.set_diagnostics(vec![
        diag(9, 17, 20, "unknown node `fnd`").with_hint("did you mean `find`?"),
    ]);
    e.goto(9, 17);
    let buf = render(&mut e, 56, 13, true);
    insta::assert_debug_snapshot!(buf);
}

#[test]
fn snapshot_search_box() {
    let f = Fixture::new();
    let mut e = snapshot_editor(&f, PIPE);
    with_fixed_path(&mut e);
    e.handle_key(ctrl('f'));
    type_str(&mut e, "tool");
    let buf = render(&mut e, 60, 12, true);
    insta::assert_debug_snapshot!(buf);
}

/// Review item 3: a copy on offer is asked about in the app's dialog,
/// not on the editor's last row (where the bar said `EDIT` and swallowed
/// keys): the pane draws the file as it is.
#[test]
fn a_copy_on_offer_draws_no_bar_in_the_pane() {
    let f = Fixture::new();
    f.write(PIPE);
    let slot = recovery::Recovery::for_file(&f.file(), &f.data());
    slot.write(&format!("# unsaved\n{PIPE}")).unwrap();
    let mut e = f.open();
    assert!(e.recovery_pending());
    assert_eq!(
        e.recovery_offer().map(|r| r.text.clone()),
        Some(format!("# unsaved\n{PIPE}"))
    );
    let buf = render(&mut e, 64, 8, true);
    let text = screen(&buf).join("\n");
    assert!(!text.contains("ecover"), "{text}");
    // Later keeps the copy for the next start; this session writes apart.
    e.answer_recovery(RecoveryAnswer::Later);
    type_str(&mut e, "x");
    e.tick(Instant::now() + Duration::from_secs(2));
    assert_eq!(
        slot.read().map(|r| r.text),
        Some(format!("# unsaved\n{PIPE}")),
        "the copy kept for later is not written over"
    );
}

#[test]
fn dragging_the_mouse_selects() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let f = Fixture::new();
    f.write("hello world\n");
    let mut e = f.open();
    let area = Rect::new(0, 0, 30, 5);
    render(&mut e, 30, 5, true);
    // Text starts at x = 5: border, marker, one digit, two spaces.
    let at = |kind, column| MouseEvent {
        kind,
        column,
        row: 1,
        modifiers: KeyModifiers::NONE,
    };
    assert!(e.handle_mouse(at(MouseEventKind::Down(MouseButton::Left), 5), area));
    assert!(e.handle_mouse(at(MouseEventKind::Drag(MouseButton::Left), 10), area));
    assert!(e.handle_mouse(at(MouseEventKind::Up(MouseButton::Left), 10), area));
    e.handle_key(ctrl('c'));
    e.handle_key(key(KeyCode::End));
    e.handle_key(ctrl('v'));
    assert_eq!(e.text(), "hello worldhello\n");
    assert!(!e.handle_mouse(at(MouseEventKind::Down(MouseButton::Left), 40), area));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn any_key() -> impl Strategy<Value = KeyEvent> {
        prop_oneof![
            proptest::char::range('a', 'e').prop_map(|c| key(KeyCode::Char(c))),
            Just(key(KeyCode::Char(':'))),
            Just(key(KeyCode::Char(' '))),
            Just(key(KeyCode::Char('日'))),
            Just(key(KeyCode::Char('\t'))),
            Just(key(KeyCode::Enter)),
            Just(key(KeyCode::Backspace)),
            Just(key(KeyCode::Delete)),
            Just(key(KeyCode::Left)),
            Just(key(KeyCode::Right)),
            Just(key(KeyCode::Up)),
            Just(key(KeyCode::Down)),
            Just(key(KeyCode::PageDown)),
            Just(key(KeyCode::Home)),
            Just(shift(KeyCode::Right)),
            Just(shift(KeyCode::Down)),
            Just(ctrl('z')),
            Just(ctrl('y')),
            Just(ctrl('x')),
            Just(ctrl('v')),
            Just(ctrl('a')),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any key sequence keeps the cursor inside the text, draws
        /// without panicking at any size, and undoing everything gives the
        /// original text back.
        #[test]
        fn keys_never_break_the_buffer(
            keys in proptest::collection::vec(any_key(), 0..60),
            w in 1u16..50,
            h in 1u16..12,
        ) {
            let f = Fixture::new();
            f.write("a: 1\nb:\n  - c\n");
            let mut e = Editor::open(&f.file(), None).unwrap();
            e.set_diagnostics(vec![diag(2, 1, 3, "a problem")]);
            for k in keys {
                e.handle_key(k);
                let (line, col) = e.cursor();
                let text = e.text();
                let lines: Vec<&str> = text.split('\n').collect();
                prop_assert!(line <= lines.len());
                prop_assert!(col <= lines[line - 1].chars().count() + 1);
                render(&mut e, w, h, true);
            }
            for _ in 0..200 {
                e.handle_key(ctrl('z'));
            }
            prop_assert_eq!(e.text(), "a: 1\nb:\n  - c\n");
        }

        /// Undo and redo round-trip exactly: after any keys, each undo
        /// goes back to a text seen before, an undo then a redo changes
        /// nothing, and undoing everything then redoing as many steps
        /// gives the last text back.
        #[test]
        fn undo_and_redo_round_trip(
            keys in proptest::collection::vec(any_key(), 0..80),
        ) {
            let f = Fixture::new();
            f.write("a: 1\nb:\n  - c\n");
            let mut e = Editor::open(&f.file(), None).unwrap();
            let mut seen = vec![e.text()];
            for k in keys {
                e.handle_key(k);
                let now = e.text();
                if k == ctrl('z') {
                    prop_assert!(seen.contains(&now), "undo to a text never typed: {now:?}");
                }
                seen.push(now.clone());
                if e.history(false) {
                    e.history(true);
                }
                prop_assert_eq!(e.text(), now);
            }
            let last = e.text();
            let mut undone = 0;
            while e.history(false) {
                undone += 1;
            }
            prop_assert_eq!(e.text(), "a: 1\nb:\n  - c\n");
            for _ in 0..undone {
                prop_assert!(e.history(true));
            }
            prop_assert_eq!(e.text(), last);
        }
    }
}

#[test]
fn crowded_lines_show_three_messages_and_a_count() {
    let f = Fixture::new();
    f.write("a: 1\nb: 2\n");
    let mut e = f.open();
    let mut diags: Vec<_> = (1..=5)
        .map(|i| diag(1, i, i + 1, &format!("problem {i}")))
        .collect();
    diags.push(Diagnostic::warning(Span::at(Pos::new(1, 1)), "a warning"));
    e.set_diagnostics(diags);
    let s = screen(&render(&mut e, 40, 8, false));
    assert!(
        s[1].starts_with("│! 1 a: 1"),
        "errors win the marker: {s:#?}"
    );
    assert!(s[2].contains("└ problem 1"), "{s:#?}");
    assert!(s[3].contains("└ problem 2"), "{s:#?}");
    assert!(s[4].contains("└ problem 3 (+3 more)"), "{s:#?}");
    assert!(s[5].starts_with("│  2 b: 2"), "{s:#?}");
}

#[test]
fn keys_turn_into_effects_for_the_app() {
    use super::keys::EditorEffect;
    let f = Fixture::new();
    f.write(PIPE);
    {
        let mut e = f.open();
        e.goto(1, 1);
        type_str(&mut e, "# unsaved\n");
        e.tick(Instant::now() + RECOVERY_DEBOUNCE + Duration::from_millis(10));
    }
    let mut e = f.open();
    assert!(e.recovery_pending());
    // A key while the copy is on offer is the editor's, and types nothing.
    assert_eq!(e.key_effect(key(KeyCode::Char('x'))), EditorEffect::Typed);
    assert!(!e.text().contains('x'));
    e.answer_recovery(RecoveryAnswer::Recover);
    assert_eq!(e.key_effect(key(KeyCode::Char('a'))), EditorEffect::Typed);
    assert_eq!(e.key_effect(key(KeyCode::Esc)), EditorEffect::Leave);
    // Esc that closes the editor's own prompt stays in the editor.
    e.key_effect(ctrl('f'));
    assert_eq!(e.key_effect(key(KeyCode::Esc)), EditorEffect::Typed);
    assert_eq!(e.key_effect(key(KeyCode::Esc)), EditorEffect::Leave);
}

#[test]
fn a_move_to_another_line_is_reported_once() {
    let f = Fixture::new();
    f.write(PIPE);
    let mut e = f.open();
    assert_eq!(e.moved_to_line(), Some(1), "the first line is new");
    assert_eq!(e.moved_to_line(), None);
    e.key_effect(key(KeyCode::Right));
    assert_eq!(e.moved_to_line(), None, "same line");
    e.key_effect(key(KeyCode::Down));
    assert_eq!(e.moved_to_line(), Some(2));
    assert_eq!(e.moved_to_line(), None);
}
