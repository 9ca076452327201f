//! Runs in progress. `pipewright run` reserves a run's id by creating
//! `ID.running` in the runs directory and appends each node's record to it
//! as the node finishes; once the finished trace is saved the file goes.
//! Nothing can run in a process that gets SIGKILL (or crashes, or loses its
//! machine), so a `.running` file whose process is gone is such a run: it
//! is listed as `interrupted`, with the nodes that had finished.
//!
//! The file is JSON lines: a header (`pid`, process start, the trace
//! without nodes), then one `{id, record}` line per finished node. A line
//! cut short by the kill does not parse and is skipped.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Entry, Runs};
use crate::run::trace::{NodeRecord, NodeStatus, RunStatus, Trace, new_run_id};

/// The suffix of a run-in-progress file.
const RUNNING: &str = ".running";

/// How many fresh ids [`Runs::begin`] draws when the one it has is taken.
const ID_TRIES: usize = 32;

/// True for the name of a run-in-progress file.
fn is_running_file(name: &str) -> bool {
    name.ends_with(RUNNING)
}

impl Entry {
    /// True for a run whose process died before it ended: its trace is
    /// the `.running` file, not a saved trace (and not in the index).
    pub fn is_interrupted(&self) -> bool {
        is_running_file(&self.path)
    }
}

/// Starts the record of a run in progress (see [`Live`]) in the runs of
/// `data_dir`, reserving a fresh id as `trace.run_id`; `None` when the runs
/// directory cannot be written (saving the finished run then says so).
pub fn begin(data_dir: Option<&std::path::Path>, trace: &mut Trace) -> Option<Live> {
    Runs::open(data_dir)?.begin(trace).ok()
}

/// The first line of a `.running` file.
#[derive(Serialize, Deserialize)]
struct Header {
    pid: u32,
    /// When the process started (Linux: clock ticks after boot), so that
    /// a process id reused after a reboot is not taken for the run's.
    #[serde(default)]
    started: Option<u64>,
    trace: Trace,
}

/// Every further line: a node that finished.
#[derive(Deserialize)]
struct Finished {
    id: String,
    record: NodeRecord,
}

/// A run in progress, written as it goes. Dropping it removes the file
/// (after the finished trace is saved, or when the run is not kept); only a
/// process that dies without unwinding leaves it behind.
#[derive(Debug)]
pub struct Live {
    path: PathBuf,
    file: std::fs::File,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Live {
    /// Adds a node that finished. A failed write costs only the record of
    /// an interruption, never the run, so it is ignored.
    pub fn node(&mut self, id: &str, record: &NodeRecord) {
        #[derive(serde::Serialize)]
        struct Line<'a> {
            id: &'a str,
            record: &'a NodeRecord,
        }
        let record = super::disk::shrink(record);
        // Streamed, not built as one string first: a reader that comes
        // upon a line not written whole yet skips it.
        let _ = super::disk::append_line(
            &Line {
                id,
                record: &record,
            },
            &mut self.file,
        );
    }
}

impl Runs {
    /// Starts the record of `trace`'s run: takes an id that no run here has
    /// (in progress, interrupted or saved; two processes starting in the
    /// same second may draw the same one), sets it as `trace.run_id`, and
    /// writes the header.
    pub fn begin(&self, trace: &mut Trace) -> std::io::Result<Live> {
        std::fs::create_dir_all(&self.dir)?;
        let saved = self.indexed();
        for _ in 0..ID_TRIES {
            if !saved.iter().any(|e| e.id == trace.run_id) {
                let path = self.dir.join(format!("{}{RUNNING}", trace.run_id));
                let opened = std::fs::OpenOptions::new()
                    .create_new(true)
                    .append(true)
                    .open(&path);
                match opened {
                    Ok(file) => return Live::start(path, file, trace),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(e),
                }
            }
            trace.run_id = new_run_id();
        }
        Err(std::io::Error::other("every run id drawn was taken"))
    }

    /// The runs whose `.running` file outlived its process.
    pub(super) fn interrupted(&self) -> Vec<Entry> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| is_running_file(name))
            .filter_map(|name| {
                let (header, trace) = self.read_running(&name)?;
                let gone = !alive(header.pid, header.started);
                gone.then(|| Entry::of(&trace, &name))
            })
            .collect()
    }

    /// The trace of an interrupted run, as far as it got.
    pub(super) fn load_interrupted(&self, name: &str) -> Result<Trace, String> {
        self.read_running(name).map(|(_, t)| t).ok_or_else(|| {
            format!(
                "cannot read the interrupted run `{}`",
                name.trim_end_matches(RUNNING)
            )
        })
    }

    /// A `.running` file read back: its header, and the trace with every
    /// node that finished.
    fn read_running(&self, name: &str) -> Option<(Header, Trace)> {
        let path = self.dir.join(name);
        let text = std::fs::read_to_string(&path).ok()?;
        let mut lines = text.lines();
        let mut header: Header = serde_json::from_str(lines.next()?).ok()?;
        let mut trace = std::mem::take(&mut header.trace);
        for mut f in lines.filter_map(|l| serde_json::from_str::<Finished>(l).ok()) {
            super::disk::grow(&mut f.record);
            add_node(&mut trace, f);
        }
        trace.composition.ran = !trace.nodes.is_empty();
        trace.composition.duration_ms = written_after_start(&path, &trace).unwrap_or(0);
        Some((header, trace))
    }
}

impl Live {
    /// Writes the header to a file just created; a failure removes it.
    fn start(path: PathBuf, file: std::fs::File, trace: &Trace) -> std::io::Result<Live> {
        let header = Header {
            pid: std::process::id(),
            started: start_time(std::process::id()),
            trace: Trace {
                nodes: Default::default(),
                composition: crate::run::trace::RunSummary {
                    status: RunStatus::Interrupted,
                    ..trace.composition.clone()
                },
                ..trace.clone()
            },
        };
        let mut text = serde_json::to_string(&header).map_err(std::io::Error::other)?;
        text.push('\n');
        let mut live = Live { path, file };
        live.file.write_all(text.as_bytes())?;
        Ok(live)
    }
}

fn add_node(trace: &mut Trace, f: Finished) {
    let s = &mut trace.composition;
    s.cost_total += f.record.cost_usd;
    s.tokens_total += f.record.tokens;
    match f.record.status {
        NodeStatus::Ok => trace.completed_step_ids.push(f.id.clone()),
        NodeStatus::Failed if trace.failed_step.is_none() => {
            trace.failed_step = Some(f.id.clone());
        }
        _ => {}
    }
    trace.nodes.insert(f.id, f.record);
}

/// How long after the run's start its file was last written (when its
/// last node finished): how far the run is known to have got.
fn written_after_start(path: &std::path::Path, trace: &Trace) -> Option<u64> {
    let written = std::fs::metadata(path).ok()?.modified().ok()?;
    let written = time::OffsetDateTime::from(written);
    let started = time::OffsetDateTime::parse(
        trace.composition.started_at.as_deref()?,
        &time::format_description::well_known::Rfc3339,
    )
    .ok()?;
    u64::try_from((written - started).whole_milliseconds()).ok()
}

/// The start time of process `pid` (Linux: field 22 of `/proc/PID/stat`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses.
    let rest = stat.rsplit_once(") ")?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process that wrote a `.running` file still runs: it exists,
/// is no zombie, and started when the file says. Without `/proc`, a unix
/// signal 0 tells whether the id exists; elsewhere it is taken as alive,
/// so a run in progress is never called interrupted.
fn alive(pid: u32, started: Option<u64>) -> bool {
    if std::path::Path::new("/proc/self/stat").exists() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat.rsplit_once(") ").map(|(_, r)| r.trim_start());
        if state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X')) {
            return false;
        }
        return started.is_none() || start_time(pid) == started;
    }
    signal_zero(pid)
}

#[cfg(unix)]
fn signal_zero(pid: u32) -> bool {
    use nix::errno::Errno;
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
        Err(Errno::ESRCH)
    )
}

#[cfg(not(unix))]
fn signal_zero(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::RunSummary;

    fn trace(id: &str) -> Trace {
        Trace {
            run_id: id.to_owned(),
            file: "p.yml".to_owned(),
            composition: RunSummary {
                name: "c".to_owned(),
                started_at: Some("2026-11-25T10:00:00Z".to_owned()),
                ..RunSummary::default()
            },
            ..Trace::default()
        }
    }

    fn record(status: NodeStatus) -> NodeRecord {
        NodeRecord {
            status,
            cost_usd: 0.5,
            ..NodeRecord::default()
        }
    }

    #[test]
    fn a_run_whose_process_is_gone_is_listed_as_interrupted_with_its_finished_nodes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs"));
        let mut t = trace("20261125-100000-aaaa");
        let mut live = runs.begin(&mut t).unwrap_or_else(|e| panic!("{e}"));
        live.node("a", &record(NodeStatus::Ok));
        live.node("b", &record(NodeStatus::Failed));
        assert!(runs.entries().is_empty(), "this process is alive");
        // A process id that cannot be running stands for a killed one.
        let path = runs.dir.join("20261125-100000-aaaa.running");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let pid = std::process::id().to_string();
        let dead = text.replacen(&format!("\"pid\":{pid}"), "\"pid\":4294967295", 1);
        std::mem::forget(live);
        std::fs::write(&path, format!("{dead}{{\"id\":\"c\",\"rec")).unwrap_or_default();
        let entries = runs.entries();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0].status, "interrupted");
        assert_eq!(entries[0].id, "20261125-100000-aaaa");
        let back = runs
            .load(&runs.find("latest").unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.composition.status, RunStatus::Interrupted);
        assert_eq!(back.nodes.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(back.completed_step_ids, ["a"]);
        assert_eq!(back.failed_step.as_deref(), Some("b"));
        assert!((back.composition.cost_total - 1.0).abs() < 1e-9);
        // A prune removes it like any run, and leaves the index clean.
        runs.prune(Some(0), None).unwrap_or_else(|e| panic!("{e}"));
        assert!(runs.entries().is_empty());
        assert!(!path.exists());
    }

    #[test]
    fn an_id_taken_by_a_saved_run_or_a_run_in_progress_is_drawn_again() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs"));
        runs.save(&trace("20261125-100000-aaaa"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut second = trace("20261125-100000-aaaa");
        let _a = runs.begin(&mut second).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(second.run_id, "20261125-100000-aaaa");
        let mut third = trace(&second.run_id);
        let _b = runs.begin(&mut third).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(third.run_id, second.run_id);
    }

    #[test]
    fn a_finished_run_leaves_no_running_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = Runs::at(dir.path().join("runs"));
        let mut t = trace("20261125-100000-aaaa");
        let live = runs.begin(&mut t).unwrap_or_else(|e| panic!("{e}"));
        runs.save(&t).unwrap_or_else(|e| panic!("{e}"));
        drop(live);
        let names: Vec<String> = std::fs::read_dir(&runs.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| is_running_file(n))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        assert_eq!(runs.entries().len(), 1);
    }
}
