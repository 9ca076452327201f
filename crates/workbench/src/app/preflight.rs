//! Preflight as you type: the `tools/list` of the plan's servers, fetched
//! in the background when the file opens (and again when its servers
//! change or a server says its list changed), and the engine's preflight —
//! the function `run` and `plan` call — run against them after every
//! validation. Its problems are marked in the editor, `d` shows them, the
//! run keys call nothing while there are any, and a did-you-mean is one
//! key away. With a `pipewright.lock` beside the file, what changed since
//! it is marked at the nodes too (an error under `lock: strict`).

use super::{App, Effect, session_key};
use pipewright_engine::author::fix::{preflight_marks, replaced, suggestion};
use pipewright_engine::diag::Diagnostic;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::lock::{Lock, Pinned};
use pipewright_engine::plan::preflight::{self, ToolLists};

impl App {
    /// After a plan is adopted: preflight it against the lists kept, or
    /// ask for the lists when they are not for this plan's servers.
    pub(crate) fn live_preflight(&mut self) -> Vec<Effect> {
        let (Some(p), Some(c)) = (self.pipeline.clone(), self.comp.clone()) else {
            return Vec::new();
        };
        let key = session_key(&p, &c);
        let pinned = self.pinned(&p);
        let Some((_, lists, default)) = self.tools.lists().filter(|(k, ..)| *k == key) else {
            self.tools.checked(None);
            if self.tools.asked() == Some(key.as_str()) {
                return Vec::new();
            }
            self.tools.asking(key.clone());
            let vars = self.vars(&p, &c);
            return vec![Effect::FetchTools {
                key,
                pipeline: p,
                comp: c,
                vars,
            }];
        };
        // Lists fetched before the file loaded know no default server.
        let default = default.map(str::to_owned).or_else(|| self.default_server());
        let mut report = preflight::check(
            &[(&*c, self.vars(&p, &c))],
            lists,
            default.as_deref(),
            &self.opts.settings.env,
        );
        if let Some(pinned) = &pinned {
            preflight::pinned::check_lock(&mut report, &[&*c], lists, default.as_deref(), pinned);
        }
        let mut diags = self.editor.diagnostics().to_vec();
        for d in preflight_marks(&c, &report) {
            if !diags.contains(&d) {
                diags.push(d);
            }
        }
        self.editor.set_diagnostics(diags);
        self.tools.checked(Some(report));
        Vec::new()
    }

    /// The tool lists came (or could not be fetched) for the servers `key`
    /// names; lists for servers the file no longer declares are dropped.
    pub(crate) fn on_tools(
        &mut self,
        key: String,
        result: Result<ToolLists, String>,
    ) -> Vec<Effect> {
        // Without a plan, the lists asked for the servers the text
        // declares (for completion) are the current ones.
        let current = match (&self.pipeline, &self.comp) {
            (Some(p), Some(c)) => Some(session_key(p, c)),
            _ => self.tools.asked().map(str::to_owned),
        };
        if current.as_deref() != Some(key.as_str()) {
            return Vec::new();
        }
        match result {
            Ok(lists) => {
                let default = self.default_server();
                self.tools.got(key, lists, default);
                self.completion_after_tools();
                self.refresh_inspector();
                if self.errors == 0 {
                    return self.live_preflight();
                }
            }
            // Said once; F5 says it again when it tries to connect.
            Err(e) => self.log_quietly(format!("preflight as you type: no tool lists: {e}")),
        }
        Vec::new()
    }

    /// The live session's lists (just connected, or read again): kept as
    /// the current plan's.
    pub fn on_session_tools(&mut self, lists: ToolLists) {
        if let (Some(p), Some(c)) = (&self.pipeline, &self.comp) {
            let key = session_key(p, c);
            self.tools.asking(key.clone());
            let default = self.default_server();
            self.tools.got(key, lists, default);
        }
    }

    /// A server said its tool list changed: fetch the lists again.
    pub(crate) fn tools_changed(&mut self) -> Vec<Effect> {
        self.tools.forget();
        self.live_preflight()
    }

    /// The lock beside the file, as the workbench holds the file to it
    /// (strict when the file says `lock: strict`); a lock that cannot be
    /// read is said in Messages.
    pub(crate) fn pinned(&mut self, p: &Pipeline) -> Option<Pinned> {
        match Lock::read_for(self.editor.path()) {
            Ok(lock) => lock.map(|lock| Pinned {
                lock,
                strict: p.lock_strict,
                handshakes: Default::default(),
            }),
            Err(e) => {
                self.log_quietly(format!("the lock is not checked: {e}"));
                None
            }
        }
    }

    fn default_server(&self) -> Option<String> {
        let (p, c) = (self.pipeline.as_deref()?, self.comp.as_deref()?);
        self.pricing(p, c).default_server
    }

    fn log_quietly(&mut self, text: String) {
        self.messages.log_line(text, false);
    }

    /// How many problems preflight (as you type) found that refuse the run
    /// keys: none while the file has errors of its own (preflight waits for
    /// it to load) or a saved run is on screen.
    pub(crate) fn preflight_problems(&self) -> usize {
        match self.tools.report() {
            Some(r) if self.errors == 0 && self.viewing.is_none() => r.problems.len(),
            _ => 0,
        }
    }

    /// The run keys call nothing while preflight (as you type) found a
    /// problem: says so, as `run` does, and returns true.
    pub(crate) fn preflight_refuses(&mut self) -> bool {
        let n = self.preflight_problems();
        if n == 0 {
            return false;
        }
        self.say(
            format!("preflight: {n} problem(s) (see the editor); nothing was called"),
            true,
        );
        true
    }

    /// A did-you-mean on the editor's cursor line, with the names.
    fn fix_here(&self) -> Option<(Diagnostic, (String, String))> {
        let line = self.editor.cursor().0;
        self.editor
            .diagnostics()
            .iter()
            .filter(|d| d.span.start.line as usize == line)
            .find_map(|d| Some((d.clone(), suggestion(d)?)))
    }

    /// Whether the quick-fix key has something to do (the footer says so).
    pub fn quick_fix_here(&self) -> bool {
        self.fix_here().is_some()
    }

    /// The quick fix on the cursor's line: a did-you-mean of preflight
    /// (or of the loader) replaces the name it is about.
    pub(crate) fn quick_fix(&mut self) -> Vec<Effect> {
        let Some((d, (wrong, right))) = self.fix_here() else {
            self.say("no quick fix on this line", true);
            return Vec::new();
        };
        let text = self.editor.text();
        match replaced(&text, &d, &wrong, &right) {
            Some(new) => {
                self.editor.set_text(&new);
                self.say(format!("`{wrong}` → `{right}` (Ctrl-Z undoes)"), false);
            }
            None => self.say(format!("`{wrong}` is not where the mark is"), true),
        }
        Vec::new()
    }
}
