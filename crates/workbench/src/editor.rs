//! The YAML editor pane: a ratatui-textarea buffer drawn with our own
//! syntect colours, line numbers and diagnostics, re-validated as you type,
//! saved atomically, watched for changes on disk, and backed by a recovery
//! copy so typed text survives a crash or a kill.

mod highlight;
mod keys;
mod offer;
pub(crate) mod recovery;
pub(crate) mod search;
mod undo;
mod validate;
mod view;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui_textarea::{CursorMove, TextArea};

use pipewright_engine::diag::{Diagnostic, Severity};
use pipewright_engine::file::loader::Loaded;

use highlight::HighlightCache;
use recovery::{DiskStamp, Recovered, Recovery};
use validate::Validator;

pub use recovery::atomic_write;

/// How long after the last edit the recovery copy is written.
pub const RECOVERY_DEBOUNCE: Duration = Duration::from_millis(1000);

/// How often the file on disk is checked for changes made by others.
const DISK_CHECK_EVERY: Duration = Duration::from_millis(500);

/// What the editor tells the app; [`Editor::tick`] returns them.
#[derive(Debug, Clone)]
pub enum EditorEvent {
    /// A re-validation finished: the loaded pipeline (if it parsed) and all
    /// diagnostics. The editor has already shown the diagnostics itself.
    Validated {
        generation: u64,
        loaded: Arc<Loaded>,
    },
    /// The buffer was written to this file.
    Saved(PathBuf),
    /// The file changed on disk; `dirty` says whether the buffer also has
    /// unsaved edits (then the editor shows an ask bar: [r]eload / [k]eep
    /// mine; without edits it reloads by itself).
    ExternalChange { dirty: bool },
    /// A sentence for the status bar (a failed save, no search match, …).
    Message(String),
}

/// A one-line input at the bottom of the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Prompt {
    /// Ctrl-F: `editing` while the query is typed; after Enter, n/N step.
    Search { query: String, editing: bool },
    /// Ctrl-G: a line number, optionally `:column`.
    Goto { input: String },
}

/// Where the view is and what it drew last (for mouse clicks).
#[derive(Debug, Clone, Default)]
struct ViewState {
    /// First buffer line shown.
    top: usize,
    /// First display column shown (horizontal scroll).
    left: usize,
    /// Whether the view follows the cursor (false after wheel scrolling).
    follow: bool,
    /// Text rows of the last frame: which line (and whether a diagnostic
    /// row under it) each screen row showed.
    rows: Vec<ScreenRow>,
    /// The text area (right of the gutter) of the last frame.
    text: ratatui::layout::Rect,
    /// Diagnostics under their lines wrap instead of being cut.
    wrap: bool,
    /// The text area's width at the last frame: a resize re-fits the
    /// horizontal scroll.
    last_width: usize,
}

/// What one screen row of the text area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScreenRow {
    Line(usize),
    /// The `k`-th diagnostic row under a line.
    Diagnostic(usize, usize),
}

/// The YAML editor pane.
pub struct Editor {
    area: TextArea<'static>,
    path: PathBuf,
    crlf: bool,
    /// Bumped on every change to the buffer.
    version: u64,
    /// The version that matches the file on disk.
    saved_version: u64,
    /// The file's text as last read or written.
    saved_text: String,
    disk: Option<DiskStamp>,
    next_disk_check: Option<Instant>,
    recovery: Option<Recovery>,
    /// A copy found at start that differs from the file, and its slot:
    /// offered until answered (the app asks in a dialog), never written
    /// over meanwhile.
    offer: Option<(Recovery, Recovered)>,
    recovery_due: Option<Instant>,
    /// The buffer version the recovery copy holds.
    recovery_version: Option<u64>,
    /// The app threw the unsaved edits away: do not write them on drop.
    recovery_discarded: bool,
    /// The file's new text when it changed on disk under unsaved edits.
    external: Option<String>,
    validator: Validator,
    diagnostics: Vec<Diagnostic>,
    /// Indices into `diagnostics` by 0-based line, errors first.
    diag_lines: BTreeMap<usize, Vec<usize>>,
    highlight: Option<HighlightCache>,
    prompt: Option<Prompt>,
    view: ViewState,
    events: Vec<EditorEvent>,
    /// Where a mouse drag started.
    drag_from: Option<(usize, usize)>,
    /// Undo steps: typed words, runs of deletions, and every other edit.
    steps: undo::Steps,
    /// The cursor line (1-based) the app last followed into its node.
    followed_line: usize,
}

/// A hash of a buffer's lines.
fn text_hash(lines: &[String]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    lines.hash(&mut h);
    h.finish()
}

impl Drop for Editor {
    /// A last recovery copy of edits made since the latest one (the app
    /// unwinding from a panic drops the editor too); nothing after a save
    /// or [`Editor::discard_recovery`].
    fn drop(&mut self) {
        if self.recovery.is_some()
            && !self.recovery_discarded
            && self.offer.is_none()
            && self.is_dirty()
            && self.recovery_version != Some(self.version)
        {
            self.write_recovery();
        }
    }
}

/// The text's lines, and whether it ends them with CRLF. A CR alone ends a
/// line too (old Mac files, and what terminals send in a paste): the buffer
/// never holds a CR.
fn split_lines(text: &str) -> (Vec<String>, bool) {
    let crlf = text.contains("\r\n");
    let lines = normalize_newlines(text)
        .split('\n')
        .map(str::to_string)
        .collect();
    (lines, crlf)
}

/// "\r\n" and a lone "\r" both become "\n".
fn normalize_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        text.into()
    }
}

fn new_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_tab_length(2);
    area.set_hard_tab_indent(false);
    area.set_max_histories(10_000);
    area
}

impl Editor {
    /// Opens FILE (a missing file gives an empty buffer that Ctrl-S creates).
    /// With a `data_dir`, this session claims the file's recovery slot, and
    /// a copy left by an earlier session that ended without saving (one
    /// whose writer is gone) that differs from the file is offered (see
    /// [`Editor::recovery_offer`]); while another workbench holds the
    /// file's slot, nothing is offered and the copy is kept beside it.
    pub fn open(path: &Path, data_dir: Option<&Path>) -> std::io::Result<Editor> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let (lines, crlf) = split_lines(&text);
        let recovery = data_dir.map(|d| Recovery::claim(path, d));
        let offer = recovery.as_ref().and_then(|r| r.offer(&text));
        let mut validator = Validator::default();
        validator.schedule(Instant::now());
        Ok(Editor {
            area: new_area(lines),
            path: path.to_path_buf(),
            crlf,
            version: 0,
            saved_version: 0,
            saved_text: text,
            disk: DiskStamp::of(path),
            next_disk_check: None,
            recovery,
            offer,
            recovery_due: None,
            recovery_version: None,
            recovery_discarded: false,
            external: None,
            validator,
            diagnostics: Vec::new(),
            diag_lines: BTreeMap::new(),
            highlight: None,
            prompt: None,
            view: ViewState {
                follow: true,
                ..ViewState::default()
            },
            events: Vec::new(),
            drag_from: None,
            steps: undo::Steps::default(),
            followed_line: 0,
        })
    }

    /// The whole buffer, with the file's own line endings.
    pub fn text(&self) -> String {
        self.area
            .lines()
            .join(if self.crlf { "\r\n" } else { "\n" })
    }

    /// Replaces the buffer's text as one more edit, so undo brings the old
    /// text back. Only the lines that differ are replaced.
    pub fn set_text(&mut self, text: &str) {
        let (new, _) = split_lines(text);
        let old = self.area.lines();
        if old == new.as_slice() {
            return;
        }
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let room = old.len().min(new.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        let cursor = self.pos();
        let (start, end, replacement) = if suffix > 0 {
            let end_row = old.len() - suffix;
            let mut s = String::new();
            for l in &new[prefix..new.len() - suffix] {
                s.push_str(l);
                s.push('\n');
            }
            ((prefix, 0), (end_row, 0), s)
        } else {
            let start = prefix.min(old.len() - 1).min(new.len() - 1);
            let last = old.len() - 1;
            (
                (start, 0),
                (last, old[last].chars().count()),
                new[start..].join("\n"),
            )
        };
        // The text area records a replacement as a deletion and an
        // insertion: one undo step takes back both.
        let before = text_hash(old);
        self.area.cancel_selection();
        self.jump(start.0, start.1);
        self.area.start_selection();
        self.jump(end.0, end.1);
        self.area.insert_str(replacement);
        self.area.cancel_selection();
        self.steps
            .record(undo::Kind::Other, Some(before), self.pos(), Instant::now());
        self.jump(cursor.0, cursor.1);
        if let Some(h) = &mut self.highlight {
            h.invalidate_from(start.0);
        }
        self.changed(Instant::now());
    }

    /// The file this buffer edits.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a re-validation of the latest edit is still to come (the
    /// app has not seen the buffer's newest plan yet).
    pub fn validating(&self) -> bool {
        self.validator.busy()
    }

    /// How the text is loaded from now on: the driver's limits and the
    /// servers its command line adds.
    pub fn set_load_options(&mut self, options: pipewright_engine::file::open::LoadOptions) {
        self.validator.options = Arc::new(options);
    }

    /// Brings validation up to the buffer's current text, for the keys that
    /// run the file: they run what is on screen, never the last debounced
    /// parse. When an edit's validation is still scheduled or running, the
    /// text is loaded now on this thread (its diagnostics are shown, and no
    /// older result is delivered after it); a finished result not yet picked
    /// up is taken as it is. Returns the result to adopt, if there is a new
    /// one.
    pub fn validate_now(&mut self) -> Option<Arc<Loaded>> {
        let collected = self.validator.collect();
        if !self.validator.busy() {
            let (_, loaded) = collected?;
            self.set_diagnostics(loaded.diagnostics.clone());
            return Some(loaded);
        }
        let text = self.text();
        if self.is_dirty() && text == self.saved_text {
            self.saved_version = self.version;
        }
        let loaded = Arc::new(validate::load(&text, &self.validator.options));
        self.validator.supersede();
        self.set_diagnostics(loaded.diagnostics.clone());
        Some(loaded)
    }

    /// Whether the buffer has edits the file does not.
    pub fn is_dirty(&self) -> bool {
        self.version != self.saved_version
    }

    /// Writes the buffer to its file atomically (a temporary file in the same
    /// directory renamed over it; permissions kept) and deletes the recovery
    /// copy. On error the file on disk is untouched.
    pub fn save(&mut self) -> std::io::Result<()> {
        let text = self.text();
        atomic_write(&self.path, text.as_bytes())?;
        self.saved_text = text;
        self.saved_version = self.version;
        self.disk = DiskStamp::of(&self.path);
        self.external = None;
        self.drop_recovery_copy();
        self.events.push(EditorEvent::Saved(self.path.clone()));
        Ok(())
    }

    /// Re-reads the file into the buffer (as an undoable edit), for example
    /// after `$EDITOR` changed it. A missing file leaves the buffer alone.
    pub fn reload(&mut self) -> std::io::Result<()> {
        let text = std::fs::read_to_string(&self.path)?;
        self.take_disk_text(text);
        Ok(())
    }

    fn take_disk_text(&mut self, text: String) {
        self.set_text(&text);
        self.crlf = text.contains("\r\n");
        self.saved_text = text;
        self.saved_version = self.version;
        self.disk = DiskStamp::of(&self.path);
        self.external = None;
        self.drop_recovery_copy();
    }

    /// Deletes the recovery copy; the app calls it on a clean quit (and
    /// when the user chose to throw unsaved edits away). A copy from an
    /// earlier session that the user has not answered for yet is kept for
    /// the next start.
    pub fn discard_recovery(&mut self) {
        if self.offer.is_none() {
            self.recovery_discarded = true;
            self.drop_recovery_copy();
        }
    }

    /// Deletes this session's recovery copy (never one still on offer).
    fn drop_recovery_copy(&mut self) {
        if self.offer.is_some() {
            return;
        }
        self.recovery_due = None;
        self.recovery_version = None;
        if let Some(r) = &self.recovery {
            r.remove();
        }
    }

    /// Moves the cursor to a 1-based line and column and scrolls it into view.
    pub fn goto(&mut self, line: usize, col: usize) {
        self.area.cancel_selection();
        self.steps.close();
        self.jump(line.saturating_sub(1), col.saturating_sub(1));
        self.view.follow = true;
        let row = self.pos().0;
        let height = self.view.rows.len().max(1);
        let shown = self.view.rows.contains(&ScreenRow::Line(row));
        // Before the first frame the view simply follows the cursor.
        if !shown && !self.view.rows.is_empty() {
            self.view.top = row.saturating_sub(height / 3);
        }
    }

    /// The cursor as a 1-based line and column (columns count characters).
    pub fn cursor(&self) -> (usize, usize) {
        let (r, c) = self.pos();
        (r + 1, c + 1)
    }

    /// The cursor's line when it is on another line than the last one
    /// followed (the app selects the node defined there); the line counts
    /// as followed from now on.
    pub fn moved_to_line(&mut self) -> Option<usize> {
        let line = self.cursor().0;
        (line != std::mem::replace(&mut self.followed_line, line)).then_some(line)
    }

    /// The diagnostics shown now.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Shows these diagnostics in the gutter and under their lines. Results
    /// of the editor's own re-validation are applied without this call.
    pub fn set_diagnostics(&mut self, diags: Vec<Diagnostic>) {
        let last = self.area.lines().len().saturating_sub(1);
        let mut by_line: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, d) in diags.iter().enumerate() {
            let row = (d.span.start.line.max(1) as usize - 1).min(last);
            by_line.entry(row).or_default().push(i);
        }
        for list in by_line.values_mut() {
            list.sort_by_key(|i| (diags[*i].severity, diags[*i].span.start.col));
        }
        self.diagnostics = diags;
        self.diag_lines = by_line;
    }

    /// The worst severity on a 0-based line, if any diagnostic is there.
    fn line_severity(&self, row: usize) -> Option<Severity> {
        self.diag_lines
            .get(&row)
            .and_then(|l| l.first())
            .map(|i| self.diagnostics[*i].severity)
    }

    /// Diagnostics under their lines wrap (`true`) or are cut at the
    /// pane's edge.
    pub fn set_wrap(&mut self, on: bool) {
        self.view.wrap = on;
    }

    /// A recovery copy that differs from the file was found at open and
    /// waits for an answer ([`Editor::answer_recovery`]); edits wait too.
    pub fn recovery_pending(&self) -> bool {
        self.offer.is_some()
    }

    /// Fills a new file's empty buffer with `text` as one edit (undo
    /// empties it, Ctrl-S creates the file), validated at once as a file
    /// read from disk is, not after the typing pause.
    pub fn start_new(&mut self, text: &str) {
        self.set_text(text);
        self.validator.schedule(Instant::now());
    }

    /// The file changed on disk while the buffer had unsaved edits: the pane
    /// asks "[r]eload / [k]eep mine" until answered.
    pub fn external_change_pending(&self) -> bool {
        self.external.is_some()
    }

    /// Inserts pasted text (a terminal bracketed paste) at the cursor, as
    /// one undo step. Line ends may be CRLF or a CR alone (xterm, VTE and
    /// tmux send CR): both end a line, and no CR reaches the buffer.
    pub fn paste_text(&mut self, text: &str) -> bool {
        if self.modal() {
            return false;
        }
        let text = normalize_newlines(text);
        self.edit(undo::Kind::Other, |a| a.insert_str(&text))
    }

    /// Replaces the cursor line's text from char column `from` (0-based)
    /// to the cursor with `text`, as one undo step; the cursor ends after
    /// it (a completion accepted).
    pub fn replace_before_cursor(&mut self, from: usize, text: &str) -> bool {
        if self.modal() {
            return false;
        }
        self.steps.close();
        let (row, col) = self.pos();
        let from = from.min(col);
        let row16 = u16::try_from(row).unwrap_or(u16::MAX);
        let changed = self.edit(undo::Kind::Other, |a| {
            a.cancel_selection();
            a.move_cursor(CursorMove::Jump(row16, u16::try_from(from).unwrap_or(0)));
            let cut = a.delete_str(col - from);
            let inserted = a.insert_str(text);
            cut || inserted
        });
        self.steps.close();
        changed
    }

    /// Where the cursor was drawn in the last frame (the cell it is on),
    /// when its line was shown.
    pub fn cursor_on_screen(&self) -> Option<ratatui::layout::Position> {
        let (row, col) = self.pos();
        let i = self
            .view
            .rows
            .iter()
            .position(|r| *r == ScreenRow::Line(row))?;
        let line = self.area.lines().get(row)?;
        let before: String = line.chars().take(col).collect();
        let x =
            unicode_width::UnicodeWidthStr::width(before.as_str()).checked_sub(self.view.left)?;
        let text = self.view.text;
        let x = text.x.saturating_add(u16::try_from(x).ok()?);
        let y = text.y.saturating_add(u16::try_from(i).ok()?);
        (x < text.right() && y < text.bottom()).then_some(ratatui::layout::Position::new(x, y))
    }

    /// [`Editor::tick`], with what happened since put in `queue` as the
    /// app's messages.
    pub(crate) fn tick_into(&mut self, now: Instant, queue: &mut crate::component::Queue) {
        use crate::msg::Msg;
        for ev in self.tick(now) {
            queue.push(match ev {
                EditorEvent::Validated { loaded, .. } => Msg::Validated(loaded),
                EditorEvent::Saved(p) => Msg::Saved(p),
                EditorEvent::ExternalChange { dirty } => Msg::ExternalChange { dirty },
                EditorEvent::Message(text) => Msg::Say { text, error: false },
            });
        }
    }

    /// Call every tick: starts a debounced re-validation off this thread,
    /// collects finished ones, checks the file on disk for changes and
    /// writes the recovery copy when due. Returns what happened since.
    pub fn tick(&mut self, now: Instant) -> Vec<EditorEvent> {
        if let Some((generation, loaded)) = self.poll_validation(now) {
            self.set_diagnostics(loaded.diagnostics.clone());
            self.events
                .push(EditorEvent::Validated { generation, loaded });
        }
        if self.next_disk_check.is_none_or(|t| now >= t) {
            self.next_disk_check = Some(now + DISK_CHECK_EVERY);
            self.check_disk();
        }
        if self.recovery_due.is_some_and(|t| now >= t) {
            self.recovery_due = None;
            self.write_recovery();
        }
        std::mem::take(&mut self.events)
    }

    fn poll_validation(&mut self, now: Instant) -> Option<(u64, Arc<Loaded>)> {
        let result = self.validator.collect();
        if self.validator.due(now) {
            let text = self.text();
            // The text is in hand anyway: an undo back to the saved text
            // makes the buffer clean again.
            if self.is_dirty() && text == self.saved_text {
                self.saved_version = self.version;
            }
            self.validator.start(text, now);
        }
        result
    }

    fn check_disk(&mut self) {
        let stamp = DiskStamp::of(&self.path);
        if stamp == self.disk {
            return;
        }
        self.disk = stamp;
        if stamp.is_none() {
            self.events.push(EditorEvent::Message(format!(
                "{} was removed on disk; Ctrl-S writes it again",
                self.path.display()
            )));
            return;
        }
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return;
        };
        if text == self.saved_text {
            return;
        }
        if self.is_dirty() && text != self.text() {
            self.external = Some(text);
            self.events
                .push(EditorEvent::ExternalChange { dirty: true });
        } else {
            self.take_disk_text(text);
            self.events
                .push(EditorEvent::ExternalChange { dirty: false });
        }
    }

    fn write_recovery(&mut self) {
        let Some(r) = &self.recovery else { return };
        if self.offer.is_some() {
            // Never overwrite a copy the user has not answered for.
            return;
        }
        if self.is_dirty() {
            if self.recovery_version == Some(self.version) {
                return;
            }
            match r.write(&self.text()) {
                Ok(()) => self.recovery_version = Some(self.version),
                Err(e) => self.events.push(EditorEvent::Message(format!(
                    "cannot write the recovery copy {}: {e}",
                    r.text_path().display()
                ))),
            }
        } else {
            r.remove();
            self.recovery_version = None;
        }
    }

    /// The buffer changed: count it and schedule validation and recovery.
    fn changed(&mut self, now: Instant) {
        self.version += 1;
        self.recovery_discarded = false;
        self.validator.schedule(now + validate::DEBOUNCE);
        self.recovery_due = Some(now + RECOVERY_DEBOUNCE);
        self.view.follow = true;
    }

    /// Whether an ask bar is waiting for an answer (edits wait too).
    fn modal(&self) -> bool {
        self.offer.is_some() || self.external.is_some()
    }

    /// Runs an edit of `kind` on the text area, as part of the undo step
    /// being typed or as a new one, and re-colours what it touched: just
    /// the cursor's line when the line count and cursor row stayed, else
    /// everything from the first row involved.
    fn edit(&mut self, kind: undo::Kind, f: impl FnOnce(&mut TextArea<'static>) -> bool) -> bool {
        let now = Instant::now();
        let row_before = self.pos().0;
        let sel_row = self.area.selection_range().map(|(s, _)| s.0);
        let joins = self.steps.joins(kind, self.pos(), sel_row.is_some(), now);
        let before = (!joins).then(|| text_hash(self.area.lines()));
        let count_before = self.area.lines().len();
        // Some textarea edits report no change though they deleted the
        // selection (a paste of nothing over it): the text decides.
        let modified = f(&mut self.area)
            || before.is_some_and(|b| sel_row.is_some() && text_hash(self.area.lines()) != b);
        if modified {
            self.steps.record(kind, before, self.pos(), now);
            let row_after = self.pos().0;
            let same_line = count_before == self.area.lines().len()
                && row_before == row_after
                && sel_row.is_none_or(|r| r == row_before);
            let first = row_before.min(row_after).min(sel_row.unwrap_or(usize::MAX));
            if let Some(h) = &mut self.highlight {
                if same_line {
                    h.invalidate_line(row_after);
                } else {
                    h.invalidate_from(first);
                }
            }
            let delta = self.area.lines().len() as i64 - count_before as i64;
            if delta != 0 {
                self.shift_diagnostics(first, delta);
            }
            self.changed(Instant::now());
        }
        modified
    }

    /// Keeps diagnostics below an edit that added or removed lines on their
    /// lines until the next validation replaces them.
    fn shift_diagnostics(&mut self, first_row: usize, delta: i64) {
        if self.diagnostics.is_empty() {
            return;
        }
        let after = u32::try_from(first_row + 1).unwrap_or(u32::MAX);
        let mut diags = std::mem::take(&mut self.diagnostics);
        for d in &mut diags {
            for pos in [&mut d.span.start, &mut d.span.end] {
                if pos.line > after {
                    let moved = (i64::from(pos.line) + delta).max(i64::from(after));
                    pos.line = u32::try_from(moved).unwrap_or(after);
                }
            }
        }
        self.set_diagnostics(diags);
    }

    /// Undo or redo one step (a typed word, a paste, …): the textarea's
    /// edits one at a time until the text is the step's text before (or
    /// after) it. It may touch any line: the cache finds out which.
    fn history(&mut self, redo: bool) -> bool {
        let step = if redo {
            self.steps.redo()
        } else {
            let now = text_hash(self.area.lines());
            self.steps.undo(now)
        };
        let Some(step) = step else {
            return false;
        };
        let target = if redo { step.after } else { step.before };
        let mut modified = false;
        loop {
            let moved = if redo {
                self.area.redo()
            } else {
                self.area.undo()
            };
            if !moved {
                break;
            }
            modified = true;
            if text_hash(self.area.lines()) == target {
                break;
            }
        }
        if modified {
            if let Some(h) = &mut self.highlight {
                h.invalidate_changed(self.area.lines());
            }
            self.changed(Instant::now());
        }
        modified
    }

    /// The cursor as a 0-based (row, char column).
    fn pos(&self) -> (usize, usize) {
        let c = self.area.cursor();
        (c.0, c.1)
    }

    fn jump(&mut self, row: usize, col: usize) {
        let row = u16::try_from(row).unwrap_or(u16::MAX);
        let col = u16::try_from(col).unwrap_or(u16::MAX);
        self.area.move_cursor(CursorMove::Jump(row, col));
    }
}
