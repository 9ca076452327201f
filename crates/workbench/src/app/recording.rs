//! The app's side of the recording view (`edit --record PATH`, the
//! palette's "follow a recording…"): a session being recorded on screen
//! read-only, as a saved run is (the live workbench waits behind it, kept
//! current), each view the follower (`ui::recording`) leaves put on screen
//! as it comes, `W` writing the pipeline, Esc leaving.

use std::path::{Path, PathBuf};

use super::{App, Effect, Focus};
use crate::recording::{self, Following};
use crate::viewing::{Stash, Viewing};

/// Numbers each following, so a message of one stopped since is dropped.
static FOLLOWINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl App {
    /// Follows the session file or folder of session files at `path`: the
    /// view opens now and fills in as calls are recorded.
    pub(crate) fn follow_recording(&mut self, path: &Path) -> Vec<Effect> {
        // Back to the live state first when a run or another recording is
        // on screen.
        self.recording = None;
        if let Some(mut v) = self.viewing.take() {
            self.swap_stash(&mut v.stash);
        }
        let generation = FOLLOWINGS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let (following, job) = recording::follow(path, generation, self.message_limit());
        let entry = pipewright_engine::run::store::Entry {
            id: shown_name(path),
            started_at: None,
            started_ns: 0,
            file: path.display().to_string(),
            file_abs: path.display().to_string(),
            composition: String::new(),
            case: None,
            status: "recording".into(),
            duration_ms: 0,
            cost_usd: 0.0,
            tokens: 0,
            failed_step: None,
            path: String::new(),
        };
        let mut stash = Stash::default();
        self.swap_stash(&mut stash);
        self.inspector.set_context(&entry.id);
        self.viewing = Some(Viewing {
            entry,
            trace: pipewright_engine::run::trace::Trace::default(),
            _hold: None,
            stash,
            source: Some(format!(
                "# following {}\n# nothing recorded yet: each call the agent makes becomes a node here\n",
                path.display()
            )),
        });
        self.recording = Some(following);
        self.focus = Focus::Dag;
        self.say(
            format!(
                "following {} · W writes the pipeline · Esc (in the DAG) leaves",
                path.display()
            ),
            false,
        );
        vec![Effect::Follow(Box::new(job))]
    }

    /// How far the recording on screen is: the calls drawn, and of them
    /// the ones the inference has not reached yet (none when no recording
    /// is followed). benches/recording.rs watches it.
    pub fn recording_progress(&self) -> Option<(usize, usize)> {
        self.recording
            .as_ref()
            .map(|r| (r.counts.calls, r.counts.waiting))
    }

    /// The largest line a session file may hold: a message and its keys.
    fn message_limit(&self) -> usize {
        self.opts
            .settings
            .max_message_mb
            .unwrap_or(pipewright_engine::mcp::DEFAULT_MAX_MESSAGE_MB)
            * (1 << 20)
            + 64 * 1024
    }

    /// The follower of `generation` left a view: it goes on screen, the
    /// selection kept (or moved to the newest call when it was on the
    /// newest before).
    pub(crate) fn on_recording(&mut self, generation: u64) {
        let Some(snap) = self
            .recording
            .as_ref()
            .filter(|f| f.generation == generation)
            .and_then(Following::take)
        else {
            return;
        };
        for (text, error) in snap.notes {
            self.say(text, error);
        }
        let Some(f) = self.recording.as_mut() else {
            return;
        };
        let was_ended = f.ended.is_some();
        f.ended = snap.ended.clone();
        let file_changed = f.file.as_ref() != Some(&snap.file);
        f.file = Some(snap.file.clone());
        if let Some(view) = &snap.view {
            f.counts = view.counts;
        }
        if snap.ended.is_some() && !was_ended {
            let text = format!(
                "the session ended ({}): {}",
                snap.ended.as_deref().unwrap_or_default(),
                f.summary()
            );
            self.say(text, false);
        }
        let Some(view) = snap.view else {
            return;
        };
        // The newest node stays selected as new ones come, as `tail -f`.
        let before = self.dag.selected();
        let last_before = self.comp.as_ref().map(|c| c.nodes.len());
        let kept = before
            .and_then(|i| self.comp.as_ref()?.nodes.get(i))
            .map(|n| n.id.clone());
        let follow_tail =
            file_changed || before.is_none() || last_before.map(|n| n.saturating_sub(1)) == before;
        let selected = if follow_tail {
            view.comp.nodes.len().checked_sub(1)
        } else {
            kept.and_then(|id| view.comp.index_of(&id))
        };
        self.pipeline = Some(view.pipeline);
        self.comp = Some(view.comp);
        self.visuals = view.visuals;
        let mut layout = Some(view.layout);
        let mut sel = selected;
        self.dag.swap_plan(&mut layout, &mut sel);
        if let Some(v) = self.viewing.as_mut() {
            v.trace = view.trace;
            v.source = Some(view.text);
            v.entry.id = shown_name(&snap.file);
            v.entry.file = snap.file.display().to_string();
            v.entry.status = if snap.ended.is_some() {
                "ended".into()
            } else {
                "recording".into()
            };
        }
        if file_changed {
            self.inspector.set_context(&shown_name(&snap.file));
        }
        self.select(selected, false);
    }

    /// `W`: writes the pipeline of what is recorded so far, as `pipewright
    /// new --from` does, beside the file open in the workbench.
    pub(crate) fn write_recording(&mut self) -> Vec<Effect> {
        let limit = self.message_limit();
        let dir = self
            .opts
            .file
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let Some(f) = self.recording.as_mut() else {
            let key = self.keymap.label(crate::keys::Action::WritePipeline);
            self.say(
                format!("{key} writes a pipeline from a recording: follow one first (edit --record, or the palette's \"follow a recording…\")"),
                true,
            );
            return Vec::new();
        };
        let (Some(session), true) = (f.file.clone(), f.counts.calls > 0) else {
            self.say("nothing recorded yet: no call to write", true);
            return Vec::new();
        };
        if f.writing {
            self.say("the pipeline is being written", false);
            return Vec::new();
        }
        f.writing = true;
        let file = recording::free_file(&dir, &session);
        self.say(
            format!(
                "writing {} from what {} holds so far…",
                file.display(),
                session.display()
            ),
            false,
        );
        let at = self.opts.settings.env.absolute(&file);
        vec![Effect::WriteRecording(Box::new(recording::WriteJob {
            session,
            file,
            at,
            limit,
        }))]
    }

    /// A pipeline was written from the recording (or not, and why).
    pub(crate) fn on_recording_written(&mut self, result: recording::Written) {
        if let Some(f) = self.recording.as_mut() {
            f.writing = false;
        }
        match result {
            Ok((file, summary)) => {
                for line in summary {
                    self.messages.log_line(line, false);
                }
                self.messages.log_line(
                    format!(
                        "next: pipewright edit {} (or run it with --replay {})",
                        file.display(),
                        pipewright_engine::record::write::cassette_path(&file).display()
                    ),
                    false,
                );
                self.say(
                    format!(
                        "wrote {} and its cassette (m: what was inferred)",
                        file.display()
                    ),
                    false,
                );
            }
            Err(e) => self.say(format!("no pipeline written: {e}"), true),
        }
    }
}

impl App {
    /// The footer's keys while a recording is on screen.
    pub(crate) fn recording_keys(&self) -> Vec<(String, &'static str)> {
        use crate::keys::Action;
        let k = |a| self.keymap.label(a);
        vec![
            ("Esc".into(), "stop following"),
            (k(Action::WritePipeline), "write the pipeline"),
            ("↑↓".into(), "move"),
            ("Enter".into(), "inspect"),
            (k(Action::Timeline), "timeline"),
            (k(Action::Zoom), "zoom"),
            (k(Action::Messages), "messages"),
            (k(Action::Help), "help"),
            (k(Action::Quit), "quit"),
        ]
    }
}

/// How a followed path is named on screen: its file name.
fn shown_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
