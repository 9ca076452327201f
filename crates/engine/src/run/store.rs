//! Where runs are kept: one JSON trace per run under the user data directory
//! (`runs/`), and a small index (`runs/index.jsonl`, one line per run) so
//! runs can be listed, found by id and pruned without reading every trace.
//!
//! Ids are `YYYYMMDD-HHMMSS-xxxx` (UTC start time, then random hex), so they
//! sort by time. `latest` is the newest run, `latest~N` the one N before it,
//! and any unique prefix of an id names that run. A run held open (the
//! workbench showing it) is never pruned: holding writes a marker file named
//! after the run and the holder's process id, removed on release.
//!
//! Several processes write here at once (parallel `pipewright run`s): every
//! change of the index (a save's append, a prune's rewrite) happens under
//! one lock file, `runs/.lock`. A run in progress is a `.running` file (see
//! [`live`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::file::model::Pipeline;
use crate::run::trace::Trace;

mod disk;
pub mod live;
mod prune;
mod update;

/// How many runs are kept when nothing else is said
/// (`PIPEWRIGHT_MAX_RUNS` changes it; 0 keeps every run).
pub const DEFAULT_MAX_RUNS: usize = 500;

const INDEX: &str = "index.jsonl";
const LOCK: &str = ".lock";

/// True when `name` is a plain file name, which is all an index line may
/// point at: a `/`, a `..` or an absolute path in a copied or tampered
/// index would read (or prune) a file outside the runs directory.
fn is_plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(parts.next(), Some(std::path::Component::Normal(_)))
        && parts.next().is_none()
        && !name.contains(['/', '\\'])
}

/// Ids echoed in an error are cut to this many characters.
const SHOWN_ID: usize = 64;

/// `spec` as an error message quotes it: at most [`SHOWN_ID`] characters.
fn shown(spec: &str) -> String {
    if spec.chars().count() <= SHOWN_ID {
        return spec.to_owned();
    }
    let head: String = spec.chars().take(SHOWN_ID).collect();
    format!("{head}…")
}

/// A run's name as the reports print it: the composition, and its case in
/// brackets.
pub fn label(t: &Trace) -> String {
    match &t.composition.case {
        Some(c) => format!("{} [{c}]", t.composition.name),
        None => t.composition.name.clone(),
    }
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pruned {
    pub removed: Vec<String>,
    /// Runs that would have gone but are held open.
    pub held: Vec<String>,
    pub kept: usize,
}

/// A run marked as open (by a workbench) until this is dropped; prune
/// leaves it alone.
#[derive(Debug)]
pub struct Hold {
    marker: PathBuf,
}

/// One line of the index: what `runs list` shows of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Entry {
    pub id: String,
    pub started_at: Option<String>,
    /// The start as Unix nanoseconds, which orders runs (ids share a
    /// second).
    pub started_ns: u64,
    /// The file as the run was given it, and made absolute.
    pub file: String,
    pub file_abs: String,
    pub composition: String,
    pub case: Option<String>,
    pub status: String,
    pub duration_ms: u64,
    pub cost_usd: f64,
    pub tokens: u64,
    pub failed_step: Option<String>,
    /// The trace's file name in the runs directory.
    pub path: String,
}

impl Entry {
    fn of(trace: &Trace, path: &str) -> Entry {
        let abs = std::path::absolute(&trace.file)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| trace.file.clone());
        let started_ns = trace
            .composition
            .started_at
            .as_deref()
            .and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
            .and_then(|t| u64::try_from(t.unix_timestamp_nanos()).ok())
            .unwrap_or(0);
        Entry {
            id: trace.run_id.clone(),
            started_at: trace.composition.started_at.clone(),
            started_ns,
            file: trace.file.clone(),
            file_abs: abs,
            composition: trace.composition.name.clone(),
            case: trace.composition.case.clone(),
            status: trace.composition.status.as_str().to_owned(),
            duration_ms: trace.composition.duration_ms,
            cost_usd: trace.composition.cost_total,
            tokens: trace.composition.tokens_total,
            failed_step: trace.failed_step.clone(),
            path: path.to_owned(),
        }
    }

    /// The start time as `2026-11-23 10:30:12` (UTC), or empty.
    pub fn time(&self) -> String {
        self.started_at
            .as_deref()
            .map(|t| t.get(..19).unwrap_or(t).replace('T', " "))
            .unwrap_or_default()
    }

    /// The composition, and its case in brackets.
    pub fn label(&self) -> String {
        match &self.case {
            Some(c) => format!("{} [{c}]", self.composition),
            None => self.composition.clone(),
        }
    }

    /// True when the run was of `file` (as given, or the same file).
    pub fn is_of(&self, file: &Path) -> bool {
        if Path::new(&self.file) == file {
            return true;
        }
        std::path::absolute(file).is_ok_and(|a| a.display().to_string() == self.file_abs)
    }
}

/// The suffix of the file text kept beside a saved run.
pub const SOURCE: &str = ".source";

/// A saved run's file name: its id and label.
fn file_name(trace: &Trace) -> String {
    let safe: String = label(trace)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{}-{safe}.json", trace.run_id)
}

/// A pipeline file's text as it is kept beside a saved run: every literal
/// header value, server `env:` value and sampling `api_key` masked, since
/// they are secrets and the copy lives in the data directory.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptSource(String);

impl KeptSource {
    /// `text` masked with what its loaded pipeline says is secret; nothing
    /// is parsed again. `pipeline` is the file's own, as loaded from `text`
    /// (before `--servers-from` adds servers).
    pub fn of(text: &str, pipeline: &Pipeline) -> KeptSource {
        KeptSource(masked_source(text, pipeline))
    }

    /// `text` loaded (as `load` says, the way the driver loaded it) to
    /// learn its secrets, for a caller that holds no loaded pipeline; a
    /// text that does not load is kept as it is.
    pub fn parse(text: &str, load: &crate::file::open::LoadOptions) -> KeptSource {
        let dialect = crate::file::import::Dialect::Auto;
        match crate::file::open::load_str_with(text, dialect, load).pipeline {
            Some(p) => KeptSource::of(text, &p),
            None => KeptSource(text.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The file text with the values [`KeptSource`] names masked.
fn masked_source(text: &str, p: &Pipeline) -> String {
    let mut values: Vec<&String> = p.sampling.iter().flat_map(|s| &s.api_key).collect();
    for decl in p.servers.values() {
        match &decl.source {
            crate::file::model::ServerSource::Http { headers, .. } => {
                values.extend(headers.values())
            }
            crate::file::model::ServerSource::Stdio { env, .. } => values.extend(env.values()),
            crate::file::model::ServerSource::Import { .. } => {}
        }
    }
    let mut out = text.to_owned();
    for v in values {
        if v.len() >= 4 && !v.starts_with("${") {
            out = out.replace(v.as_str(), "<redacted>");
        }
    }
    out
}

/// The runs directory.
#[derive(Debug, Clone)]
pub struct Runs {
    pub dir: PathBuf,
    /// Saved runs kept (`PIPEWRIGHT_MAX_RUNS` as the driver's settings
    /// give it; `None`: [`DEFAULT_MAX_RUNS`]; 0: no cap).
    pub max_runs: Option<usize>,
}

impl Runs {
    /// `runs/` under the data directory (`data_dir`: the driver's
    /// `Settings::data_dir`), when there is one.
    pub fn open(data_dir: Option<&Path>) -> Option<Runs> {
        data_dir.map(|d| Runs::at(d.join("runs")))
    }

    pub fn at(dir: PathBuf) -> Runs {
        Runs {
            dir,
            max_runs: None,
        }
    }

    /// The newest saved trace of `file`'s composition `comp` (and case), as
    /// JSON: what a plan reads its recorded figures from (`plan` and the
    /// workbench's estimate alike).
    pub fn latest_of(
        &self,
        file: &str,
        comp: &str,
        case: Option<&str>,
    ) -> Option<serde_json::Value> {
        // An interrupted run's figures are partial: plans read finished runs.
        let entry = self.entries().into_iter().rev().take(500).find(|e| {
            e.is_of(Path::new(file))
                && e.composition == comp
                && e.case.as_deref() == case
                && !e.is_interrupted()
        })?;
        let trace = self.load(&entry).ok()?;
        serde_json::to_value(trace).ok()
    }

    /// What each node of `file`'s newest saved run (finished, not cut
    /// short) returned, by node id: only nodes that ended ok. What a
    /// language server shows a reference's value from.
    pub fn latest_outputs(
        &self,
        file: &Path,
    ) -> std::collections::HashMap<String, crate::json::Json> {
        let Some(entry) = self
            .entries()
            .into_iter()
            .rev()
            .take(500)
            .find(|e| e.is_of(file) && !e.is_interrupted())
        else {
            return std::collections::HashMap::new();
        };
        let Ok(trace) = self.load(&entry) else {
            return std::collections::HashMap::new();
        };
        trace
            .nodes
            .into_iter()
            .filter(|(_, r)| r.status == crate::run::trace::NodeStatus::Ok)
            .map(|(id, r)| (id, r.output))
            .collect()
    }

    /// The same store, keeping at most `max_runs` saved runs (`None`:
    /// [`DEFAULT_MAX_RUNS`]; 0: no cap).
    pub fn capped(mut self, max_runs: Option<usize>) -> Runs {
        self.max_runs = max_runs;
        self
    }

    /// Writes the trace and its index line, then keeps the directory under
    /// its cap ([`Runs::max_runs`]); returns the trace's path.
    pub fn save(&self, trace: &Trace) -> std::io::Result<PathBuf> {
        let cap = self.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        self.save_capped(trace, cap)
    }

    /// [`Runs::save`], with the text of the file the run ran kept beside it
    /// (header and `env:` values masked), so History can show the run on
    /// its own DAG after the file changed. The text is loaded again to
    /// learn its secrets, as the driver's `LoadOptions` say:
    /// [`Runs::save_with_kept_source`] takes it masked.
    pub fn save_with_source(
        &self,
        trace: &Trace,
        source: Option<(&str, &crate::file::open::LoadOptions)>,
    ) -> std::io::Result<PathBuf> {
        let kept = source.map(|(text, load)| KeptSource::parse(text, load));
        self.save_with_kept_source(trace, kept.as_ref())
    }

    /// [`Runs::save_with_source`] with the text already masked.
    pub fn save_with_kept_source(
        &self,
        trace: &Trace,
        source: Option<&KeptSource>,
    ) -> std::io::Result<PathBuf> {
        if let Some(kept) = source {
            std::fs::create_dir_all(&self.dir)?;
            let path = self.dir.join(format!("{}{SOURCE}", file_name(trace)));
            std::fs::write(path, kept.as_str())?;
        }
        self.save(trace)
    }

    /// The file text a run was saved with, if it was.
    pub fn source(&self, entry: &Entry) -> Option<String> {
        std::fs::read_to_string(self.dir.join(format!("{}{SOURCE}", entry.path))).ok()
    }

    /// [`Runs::save`] with the cap given (0: no cap).
    pub fn save_capped(&self, trace: &Trace, cap: usize) -> std::io::Result<PathBuf> {
        let _lock = self.lock()?;
        let name = file_name(trace);
        let path = self.dir.join(&name);
        disk::write(trace, std::fs::File::create(&path)?)?;
        let mut line = serde_json::to_string(&Entry::of(trace, &name)).unwrap_or_default();
        line.push('\n');
        // One write of one line, appended: concurrent runs do not interleave.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(INDEX))?
            .write_all(line.as_bytes())?;
        // Counting lines is enough to know; only a prune parses the index.
        let lines = std::fs::read(self.dir.join(INDEX))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0);
        if cap > 0 && lines > cap {
            self.prune_locked(Some(cap), None)?;
        }
        Ok(path)
    }

    /// Takes the runs directory's lock (creating the directory), held
    /// until the file is dropped. Where the file system has no locks, the
    /// writes go unlocked, as they would without this.
    fn lock(&self) -> std::io::Result<std::fs::File> {
        std::fs::create_dir_all(&self.dir)?;
        let file = self.lock_file()?;
        match file.lock() {
            Err(e) if e.kind() != std::io::ErrorKind::Unsupported => Err(e),
            _ => Ok(file),
        }
    }

    /// The lock if nobody holds it now (never waits: a holder in this
    /// process would wait forever).
    fn try_lock(&self) -> Option<std::fs::File> {
        let file = self.lock_file().ok()?;
        match file.try_lock() {
            Ok(()) => Some(file),
            Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                Some(file)
            }
            Err(_) => None,
        }
    }

    fn lock_file(&self) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(LOCK))
    }

    /// Every run, oldest first: the index (rebuilt from the traces when it
    /// is missing), and the runs whose process died before they ended.
    pub fn entries(&self) -> Vec<Entry> {
        let mut out = self.indexed();
        out.extend(self.interrupted());
        // Appends from parallel runs may land slightly out of order.
        out.sort_by(|a, b| (a.started_ns, &a.id).cmp(&(b.started_ns, &b.id)));
        out
    }

    /// The runs the index lists.
    fn indexed(&self) -> Vec<Entry> {
        match std::fs::read_to_string(self.dir.join(INDEX)) {
            Ok(text) => parse_index(&text),
            Err(_) => self.rebuild_index(),
        }
    }

    /// Reads every trace to write the index again (for a directory written
    /// before the index existed). It is written only under the lock, and
    /// only if no save made it meanwhile: an index rebuilt from an older
    /// look at the directory would drop a parallel run's line. When the
    /// lock is taken (by a save, maybe this process's own), the traces
    /// are read without writing anything.
    fn rebuild_index(&self) -> Vec<Entry> {
        if !self.dir.is_dir() {
            return Vec::new();
        }
        let lock = self.try_lock();
        if lock.is_some()
            && let Ok(text) = std::fs::read_to_string(self.dir.join(INDEX))
        {
            return parse_index(&text);
        }
        let out = self.scan_traces();
        if lock.is_some() {
            let _ = self.write_index(&out);
        }
        out
    }

    /// Every trace in the directory, as index lines, oldest first.
    fn scan_traces(&self) -> Vec<Entry> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let Ok(mut t) = serde_json::from_str::<Trace>(&text) else {
                continue;
            };
            if t.run_id.is_empty() {
                t.run_id = name.trim_end_matches(".json").to_owned();
            }
            out.push(Entry::of(&t, &name));
        }
        out.sort_by(|a, b| (a.started_ns, &a.id).cmp(&(b.started_ns, &b.id)));
        out
    }

    fn write_index(&self, entries: &[Entry]) -> std::io::Result<()> {
        let mut text = String::new();
        for e in entries {
            text.push_str(&serde_json::to_string(e).unwrap_or_default());
            text.push('\n');
        }
        let tmp = self.dir.join(format!("{INDEX}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, self.dir.join(INDEX))
    }

    /// The run `spec` names: `latest`, `latest~N`, an id or a unique prefix.
    pub fn find(&self, spec: &str) -> Result<Entry, String> {
        let entries = self.entries();
        find_in(&entries, spec)
    }

    /// The saved trace of a run.
    pub fn load(&self, entry: &Entry) -> Result<Trace, String> {
        if !is_plain_name(&entry.path) {
            return Err(format!(
                "run `{}`: its trace `{}` is not a file of the runs directory",
                entry.id, entry.path
            ));
        }
        if entry.is_interrupted() {
            return self.load_interrupted(&entry.path);
        }
        let path = self.dir.join(&entry.path);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read run `{}` ({}): {e}", entry.id, path.display()))?;
        disk::read(&text).map_err(|e| {
            format!(
                "run `{}` ({}) is not a trace: {e} at line {}, column {}",
                entry.id,
                path.display(),
                e.line(),
                e.column()
            )
        })
    }
}

/// The index's lines; a line whose trace is not a plain file name here is
/// dropped.
fn parse_index(text: &str) -> Vec<Entry> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Entry>(l).ok())
        .filter(|e| is_plain_name(&e.path))
        .collect()
}

/// Finds `spec` among `entries` (oldest first).
pub fn find_in(entries: &[Entry], spec: &str) -> Result<Entry, String> {
    if spec.is_empty() {
        return Err("give a run id, a prefix of one, `latest` or `latest~N`".to_owned());
    }
    if entries.is_empty() {
        return Err("there are no saved runs yet".to_owned());
    }
    let said = shown(spec);
    if let Some(rest) = spec.strip_prefix("latest") {
        let back = match rest.strip_prefix('~') {
            None if rest.is_empty() => 0,
            // More digits than a usize holds: further back than any run.
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse::<usize>().unwrap_or(usize::MAX)
            }
            Some(_) => return Err(format!("`{said}`: write `latest~N` with a number N")),
            None => return Err(format!("`{said}`: write `latest` or `latest~N`")),
        };
        return entries
            .len()
            .checked_sub(back.saturating_add(1))
            .map(|i| entries[i].clone())
            .ok_or_else(|| format!("`{said}`: there are only {} saved runs", entries.len()));
    }
    let matching: Vec<&Entry> = entries.iter().filter(|e| e.id.starts_with(spec)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!(
            "no saved run has the id `{said}` (see `pipewright runs list`)"
        )),
        many => Err(format!(
            "`{said}` names {} runs; give more of the id (e.g. `{}`)",
            many.len(),
            many[0].id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> Entry {
        Entry {
            id: id.to_owned(),
            ..Entry::default()
        }
    }

    fn run(id: &str) -> Trace {
        Trace {
            run_id: id.to_owned(),
            file: "f.yml".into(),
            composition: crate::run::trace::RunSummary {
                name: "pipe".into(),
                started_at: Some("2026-11-25T10:00:00Z".into()),
                ..Default::default()
            },
            ..Trace::default()
        }
    }

    #[test]
    fn a_kept_file_is_loaded_as_the_driver_loads_it() {
        // 1.5 MiB of comment: within the default file limit, over a 1 MiB
        // one. The driver's options decide whether the text loads (and so
        // whether its header value can be masked).
        let text = format!(
            "# {}\nservers:\n  api:\n    url: http://127.0.0.1:9/mcp\n    headers: {{ X-Key: sk-literal-123 }}\npipe:\n  - {{id: a, server: extra, tool: echo}}\n",
            "x".repeat(1536 * 1024)
        );
        let load = crate::file::open::LoadOptions {
            cli_servers: vec!["extra".into()],
            ..Default::default()
        };
        assert!(
            !KeptSource::parse(&text, &load)
                .as_str()
                .contains("sk-literal-123")
        );
        let small = crate::file::open::LoadOptions {
            max_file_mb: Some(1),
            ..load
        };
        assert_eq!(
            KeptSource::parse(&text, &small).as_str(),
            text,
            "not loaded: kept as it is"
        );
    }

    #[test]
    fn the_cap_is_the_stores_own_not_the_environments() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs")).capped(Some(1));
        runs.save(&run("20261125-100000-aaaa"))
            .unwrap_or_else(|e| panic!("{e}"));
        runs.save(&run("20261125-100001-bbbb"))
            .unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<String> = runs.entries().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["20261125-100001-bbbb"]);
        // Uncapped by the caller: the default keeps both.
        let other = Runs::at(dir.path().join("other"));
        other
            .save(&run("20261125-100000-aaaa"))
            .unwrap_or_else(|e| panic!("{e}"));
        other
            .save(&run("20261125-100001-bbbb"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(other.entries().len(), 2);
    }

    #[test]
    fn a_run_keeps_its_file_with_secrets_masked_and_old_runs_have_none() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs"));
        let text = "servers:\n  api:\n    url: http://127.0.0.1:9/mcp\n    headers: { X-Key: sk-literal-123 }\npipe:\n  - id: a\n    tool: echo\n";
        runs.save_with_source(
            &run("20261125-100000-aaaa"),
            Some((text, &Default::default())),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        runs.save(&run("20261125-100001-bbbb"))
            .unwrap_or_else(|e| panic!("{e}"));
        let entries = runs.entries();
        let kept = runs.source(&entries[0]).unwrap_or_default();
        assert!(kept.contains("id: a"), "{kept}");
        assert!(
            !kept.contains("sk-literal-123"),
            "a header value was copied: {kept}"
        );
        assert!(runs.source(&entries[1]).is_none());
        // A prune takes the file text along with its run.
        runs.prune(Some(1), None).unwrap_or_else(|e| panic!("{e}"));
        let left: Vec<_> = std::fs::read_dir(dir.path().join("runs"))
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(SOURCE))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// The copy masked with the pipeline a run loaded is the copy masked
    /// by loading the text again.
    #[test]
    fn a_kept_source_masks_the_same_with_the_loaded_pipeline() {
        let text = "sampling: {url: \"http://127.0.0.1:9/v1\", model: m, api_key: sk-sampling-9}\nservers:\n  api:\n    url: http://127.0.0.1:9/mcp\n    headers: { X-Key: sk-literal-123, X-Env: \"${env.KEY}\", X-Short: abc }\n  local:\n    command: x\n    env: { TOKEN: tok-4567 }\npipe:\n  - {id: a, server: api, tool: echo, args: {message: sk-literal-123}}\n";
        let loaded = crate::file::open::load_str(text);
        let p = loaded
            .pipeline
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let kept = KeptSource::of(text, &p);
        assert_eq!(kept, KeptSource::parse(text, &Default::default()));
        let kept = kept.as_str();
        for secret in ["sk-literal-123", "sk-sampling-9", "tok-4567"] {
            assert!(!kept.contains(secret), "{secret} in {kept}");
        }
        assert!(
            kept.contains("${env.KEY}") && kept.contains("X-Short: abc"),
            "{kept}"
        );
        assert_eq!(
            KeptSource::parse("pipe: [", &Default::default()).as_str(),
            "pipe: ["
        );
    }

    #[test]
    fn latest_tilde_n_prefixes_and_errors() {
        let e = vec![
            entry("20261123-100000-aaaa"),
            entry("20261123-100001-bbbb"),
            entry("20261123-110000-cccc"),
        ];
        assert_eq!(find_in(&e, "latest").unwrap().id, "20261123-110000-cccc");
        assert_eq!(find_in(&e, "latest~2").unwrap().id, "20261123-100000-aaaa");
        assert!(find_in(&e, "latest~3").unwrap_err().contains("only 3"));
        assert!(find_in(&e, "latest~x").is_err());
        assert_eq!(
            find_in(&e, "20261123-11").unwrap().id,
            "20261123-110000-cccc"
        );
        assert!(
            find_in(&e, "20261123-10")
                .unwrap_err()
                .contains("names 2 runs")
        );
        assert!(find_in(&e, "nope").unwrap_err().contains("no saved run"));
        // "" would be a prefix of every id: it names none.
        assert!(find_in(&e[..1], "").unwrap_err().contains("give a run id"));
        assert!(
            find_in(&e, "latest~99999999999999999999999")
                .unwrap_err()
                .contains("only 3")
        );
        let long = find_in(&e, &"x".repeat(5000)).unwrap_err();
        assert!(long.len() < 200, "{long}");
        assert!(
            find_in(&[], "latest")
                .unwrap_err()
                .contains("no saved runs")
        );
    }
}
