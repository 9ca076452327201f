//! A saved run reused from History: exported to a file (`E`, then the
//! format: the same writers as `run --format json|junit` and `runs export
//! --otlp`), its file text restored as the editor's (`R`, one undoable
//! edit), or restored and run (the run key, F5).

use super::{App, Effect, Focus};
use crate::history::export::ExportFormat;
use pipewright_engine::run::session::Command;
use pipewright_engine::run::store::Entry;

impl App {
    /// Writes run `entry` as `what` next to the pipeline file
    /// (`FILE-STEM.RUN-ID.json` …) and says where.
    pub(crate) fn export_saved(&mut self, entry: &Entry, what: ExportFormat) {
        let Some(runs) = self.runs() else {
            self.say("no data directory: runs are not kept", true);
            return;
        };
        let trace = match runs.load(entry) {
            Ok(t) => t,
            Err(e) => return self.say(e, true),
        };
        let text = match what {
            ExportFormat::Json => serde_json::to_string_pretty(&trace.as_sent()),
            ExportFormat::Otlp => serde_json::to_string_pretty(
                &pipewright_engine::run::otlp::export(std::slice::from_ref(&trace)),
            ),
            ExportFormat::Junit => Ok(pipewright_engine::eval::junit::junit(
                &trace.file,
                std::slice::from_ref(&trace),
            )),
            ExportFormat::Cassette => {
                let c = pipewright_engine::run::cassette::export::from_trace(&trace);
                let path = self.export_path(entry, what);
                return match c.save(&path) {
                    Ok(()) => self.say(
                        format!("exported run {} to {}", entry.id, path.display()),
                        false,
                    ),
                    Err(e) => self.say(e.to_string(), true),
                };
            }
        };
        let path = self.export_path(entry, what);
        let written = text
            .map_err(|e| e.to_string())
            .and_then(|t| std::fs::write(&path, t + "\n").map_err(|e| e.to_string()));
        match written {
            Ok(()) => self.say(
                format!("exported run {} to {}", entry.id, path.display()),
                false,
            ),
            Err(e) => self.say(format!("cannot write {}: {e}", path.display()), true),
        }
    }

    /// `FILE-STEM.RUN-ID.SUFFIX` next to the pipeline file.
    fn export_path(&self, entry: &Entry, what: ExportFormat) -> std::path::PathBuf {
        let file = &self.opts.file;
        let stem = file
            .file_stem()
            .map_or("run".into(), |s| s.to_string_lossy().into_owned());
        let dir = file.parent().unwrap_or(std::path::Path::new("."));
        dir.join(format!("{stem}.{}.{}", entry.id, what.suffix()))
    }

    /// Makes run `entry`'s file text the editor's, as one edit (undo
    /// brings the text before back); false when it was not kept.
    pub(crate) fn restore_saved(&mut self, entry: &Entry) -> bool {
        let Some(source) = self.runs().and_then(|r| r.source(entry)) else {
            self.say(
                format!(
                    "run {} was saved without its file text: nothing to restore",
                    entry.id
                ),
                true,
            );
            return false;
        };
        self.leave_viewing();
        self.editor.set_text(&source);
        self.focus = Focus::Editor;
        let undo = "Ctrl-Z takes it back";
        let masked = if source.contains("<redacted>") {
            " · its secrets were masked when it was saved: put them back before running"
        } else {
            ""
        };
        self.say(
            format!(
                "the editor holds run {}'s file text (not saved; {undo}){masked}",
                entry.id
            ),
            false,
        );
        true
    }

    /// Restores run `entry`'s file text and runs it.
    pub(crate) fn rerun_saved(&mut self, entry: &Entry) -> Vec<Effect> {
        if !self.restore_saved(entry) {
            return Vec::new();
        }
        let effects = self.command(Command::Run, true);
        if self.run_in_progress() {
            self.say(format!("running run {}'s file text", entry.id), false);
        }
        effects
    }
}
