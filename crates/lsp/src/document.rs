//! One open file: its text as the editor has it, what loading it gave,
//! and the marks last published for it (load diagnostics, then
//! preflight's problems and destructive calls once the servers' tool lists
//! are known).

use std::collections::HashMap;
use std::sync::Arc;

use lsp_types::TextDocumentContentChangeEvent;

use pipewright_engine::author::fix::preflight_marks;
use pipewright_engine::diag::{Diagnostic, Severity};
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::file::open::{LoadOptions, load_str_with};
use pipewright_engine::json::Json;
use pipewright_engine::plan::preflight;

use super::position::Lines;
use super::tools::{self, Fetched};

/// How documents load and are checked: the driver's limits, the
/// environment their `${env.X}` read and where its saved runs are.
#[derive(Debug, Clone)]
pub struct Setup {
    pub load: LoadOptions,
    pub env: pipewright_engine::environment::Environment,
    pub data_dir: Option<std::path::PathBuf>,
}

impl Setup {
    /// As the driver's settings say.
    pub fn of(settings: &pipewright_engine::settings::Settings) -> Setup {
        Setup {
            load: settings.load_options(Vec::new()),
            env: settings.env.clone(),
            data_dir: settings.data_dir.clone(),
        }
    }
}

/// An open file.
pub struct Document {
    pub text: String,
    pub version: i32,
    /// The pipeline loaded from `text` (it may hold errors), `None` when
    /// none could be built: what navigation reads.
    pub pipeline: Option<Pipeline>,
    /// Whether `text` loaded with errors: preflight waits until it does not.
    pub has_errors: bool,
    /// Load-time diagnostics of `text`.
    pub loaded: Vec<Diagnostic>,
    /// The last pipeline that loaded, maybe from an earlier text: what
    /// completion and the tool lists go by while the text is half typed.
    pub last: Option<Pipeline>,
    /// The marks published last.
    pub marks: Vec<Diagnostic>,
    /// What the newest saved run of this file returned, by node id (read
    /// when the file opens and when it is saved): hover shows a
    /// reference's value from it, completion its paths.
    pub recorded: HashMap<String, Json>,
    /// Where the file is, for a `file:` URI: its `pipewright.lock` is
    /// beside it.
    pub path: Option<std::path::PathBuf>,
    /// How the text loads and is checked (the driver's limits and
    /// environment).
    setup: Arc<Setup>,
}

impl Document {
    pub fn new(text: String, version: i32, setup: Arc<Setup>) -> Self {
        let mut doc = Self {
            text: String::new(),
            version,
            pipeline: None,
            has_errors: false,
            loaded: Vec::new(),
            last: None,
            marks: Vec::new(),
            recorded: HashMap::new(),
            path: None,
            setup,
        };
        doc.set_text(text, version);
        doc
    }

    /// Reads the outputs of the newest saved run of the file at `uri` (a
    /// `file:` URI; nothing for others or without a data directory).
    pub fn read_recorded(&mut self, uri: &str) {
        self.path = file_path(uri);
        self.recorded = file_path(uri)
            .zip(pipewright_engine::run::store::Runs::open(
                self.setup.data_dir.as_deref(),
            ))
            .map(|(path, runs)| runs.latest_outputs(&path))
            .unwrap_or_default();
    }

    /// Takes the editor's changes (whole texts, or ranges replaced) and
    /// loads the result.
    pub fn change(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32) {
        let mut text = std::mem::take(&mut self.text);
        for c in changes {
            match c.range {
                None => text = c.text,
                Some(r) => {
                    let lines = Lines::new(&text);
                    let (from, to) = (lines.offset(r.start), lines.offset(r.end));
                    let (from, to) = (from.min(to), from.max(to));
                    text.replace_range(from..to, &c.text);
                }
            }
        }
        self.set_text(text, version);
    }

    fn set_text(&mut self, text: String, version: i32) {
        let loaded = load_str_with(&text, Dialect::Auto, &self.setup.load);
        self.has_errors = loaded.has_errors();
        self.loaded = loaded.diagnostics;
        self.pipeline = loaded.pipeline;
        if self.pipeline.is_some() {
            self.last = self.pipeline.clone();
        }
        self.text = text;
        self.version = version;
    }

    /// The key of the tool lists this file's servers give.
    pub fn tools_key(&self) -> Option<String> {
        self.last.as_ref().map(tools::key)
    }

    /// Load diagnostics and, when the text loaded cleanly and the lists
    /// are known, preflight's marks for every composition and case row,
    /// with what changed since the file's `pipewright.lock` (an error
    /// under `lock: strict`).
    pub fn compute_marks(&self, fetched: Option<&Fetched>) -> Vec<Diagnostic> {
        let mut out = self.loaded.clone();
        let (Some(p), Some(f), false) = (&self.pipeline, fetched, self.has_errors) else {
            return out;
        };
        let pinned = self
            .path
            .as_deref()
            .and_then(|path| pipewright_engine::lock::Lock::read_for(path).ok().flatten())
            .map(|lock| pipewright_engine::lock::Pinned {
                lock,
                strict: p.lock_strict,
                handshakes: Default::default(),
            });
        for comp in &p.compositions {
            let runs: Vec<_> = if comp.cases.is_empty() {
                vec![(comp, p.vars.clone())]
            } else {
                comp.cases
                    .iter()
                    .map(|row| {
                        let mut vars = p.vars.clone();
                        vars.extend(row.vars.clone());
                        (comp, vars)
                    })
                    .collect()
            };
            let mut report = preflight::check(
                &runs,
                &f.lists,
                f.default_server.as_deref(),
                &self.setup.env,
            );
            if let Some(pinned) = &pinned {
                preflight::pinned::check_lock(
                    &mut report,
                    &[comp],
                    &f.lists,
                    f.default_server.as_deref(),
                    pinned,
                );
            }
            for d in preflight_marks(comp, &report) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
        out
    }
}

/// An engine diagnostic as the editor's.
pub fn diagnostic(lines: &Lines<'_>, d: &Diagnostic) -> lsp_types::Diagnostic {
    let message = match &d.hint {
        Some(h) => format!("{}\nhint: {h}", d.message),
        None => d.message.clone(),
    };
    lsp_types::Diagnostic {
        range: lines.visible_range(d.span),
        severity: Some(match d.severity {
            Severity::Error => lsp_types::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp_types::DiagnosticSeverity::WARNING,
        }),
        source: Some("pipewright".into()),
        message,
        ..lsp_types::Diagnostic::default()
    }
}

/// The path of a `file:` URI, percent-escapes decoded.
pub fn file_path(uri: &str) -> Option<std::path::PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(std::path::PathBuf::from(String::from_utf8(out).ok()?))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use pipewright_engine::diag::Severity;
    use pipewright_engine::lock::{Lock, LockedServer};
    use pipewright_engine::mcp::ToolInfo;

    /// With a `pipewright.lock` beside the file, a tool changed since it
    /// is marked at its node's `tool:` line with the diff; none without.
    #[test]
    fn a_tool_changed_since_the_lock_is_marked_at_its_node() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("pipe.yaml");
        let text = "servers:\n  users: {command: users-server}\npipe:\n  - id: find\n    tool: find_user\n";
        std::fs::write(&file, text).expect("write");
        let tool = |args: serde_json::Value| {
            ToolInfo::from_json(
                json!({"name": "find_user", "inputSchema": {"type": "object", "properties": args}}),
            )
            .expect("a tool")
        };
        let hello = json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "users"}});
        let settings = pipewright_engine::settings::Settings::default();
        let mut doc = Document::new(text.to_owned(), 1, Arc::new(Setup::of(&settings)));
        doc.read_recorded(&format!("file://{}", file.display()));
        let mut fetched = Fetched::default();
        fetched.lists.insert(
            "users".into(),
            vec![tool(json!({"q": {"type": "integer"}}))],
        );
        fetched.default_server = Some("users".into());
        let changed = |doc: &Document| -> Vec<Diagnostic> {
            doc.compute_marks(Some(&fetched))
                .into_iter()
                .filter(|d| d.message.contains("since the lock"))
                .collect()
        };
        assert!(changed(&doc).is_empty(), "no lock, no mark");
        let mut lock = Lock::default();
        lock.insert(
            "users",
            LockedServer::of(
                &hello,
                &[tool(json!({"q": {"type": "string"}}))],
                &["find_user"],
            ),
        );
        lock.write(dir.path()).expect("the lock is written");
        let found = changed(&doc);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!((found[0].span.start.line, found[0].span.start.col), (5, 11));
        assert!(
            found[0]
                .message
                .ends_with("argument `q` changed type from string to integer"),
            "{}",
            found[0].message
        );
        assert!(
            found[0]
                .hint
                .as_deref()
                .unwrap_or_default()
                .contains("+ q: integer")
        );
    }
}
