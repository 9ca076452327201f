//! Where `tracing` events go. A command of the CLI writes the warnings of
//! pipewright's own modules to stderr (rmcp's internal errors would be
//! noise there); while the workbench owns the terminal nothing is written
//! to it, and events go to `workbench.log` in the data directory instead.
//! `PIPEWRIGHT_LOG`, a `tracing` filter (`debug`, `pipewright=debug,rmcp=info`
//! …), replaces the default `pipewright=warn`. Control characters in an
//! event (a server's text) are written as `?`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The filter when `PIPEWRIGHT_LOG` is unset: pipewright's own warnings.
pub const DEFAULT_FILTER: &str = "pipewright=warn";

/// The workbench's log, in the data directory.
pub const WORKBENCH_LOG: &str = "workbench.log";

/// A workbench log larger than this when the workbench opens is started
/// afresh, so it cannot grow without end.
const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;

/// Where the events of this process go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// A CLI command: stderr.
    Stderr,
    /// The workbench: [`WORKBENCH_LOG`] in the data directory, or nowhere
    /// when there is none.
    WorkbenchFile,
}

/// Installs the subscriber for this process (once; a later call does
/// nothing); `data_dir` is the settings' data directory.
pub fn install(sink: Sink, data_dir: Option<&std::path::Path>) {
    let (filter, refused) = filter(std::env::var("PIPEWRIGHT_LOG").ok().as_deref());
    let installed = match sink {
        Sink::Stderr => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .without_time()
            .with_writer(|| Printable(io::stderr()))
            .try_init()
            .is_ok(),
        Sink::WorkbenchFile => {
            let Some(file) = workbench_log_path(data_dir).and_then(|p| open_log(&p)) else {
                return;
            };
            tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                .with_writer(Mutex::new(Printable(file)))
                .try_init()
                .is_ok()
        }
    };
    if installed && let Some(why) = refused {
        tracing::warn!("{why}");
    }
}

/// Where the workbench logs: [`WORKBENCH_LOG`] in the data directory.
pub fn workbench_log_path(data_dir: Option<&std::path::Path>) -> Option<PathBuf> {
    data_dir.map(|d| d.join(WORKBENCH_LOG))
}

/// The filter `PIPEWRIGHT_LOG` names, or the default and why it was not
/// taken.
fn filter(var: Option<&str>) -> (EnvFilter, Option<String>) {
    let default = || EnvFilter::new(DEFAULT_FILTER);
    match var.map(str::trim) {
        None | Some("") => (default(), None),
        Some(text) => match EnvFilter::try_new(text) {
            Ok(f) => (f, None),
            Err(e) => (
                default(),
                Some(format!(
                    "PIPEWRIGHT_LOG `{text}` is not a filter ({e}); logging with `{DEFAULT_FILTER}`"
                )),
            ),
        },
    }
}

/// Opens the log for appending, started afresh when it grew too big.
fn open_log(path: &std::path::Path) -> Option<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    let too_big = std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG_BYTES);
    std::fs::OpenOptions::new()
        .create(true)
        .append(!too_big)
        .write(true)
        .truncate(too_big)
        .open(path)
        .ok()
}

/// Writes what it is given with control characters but new lines and
/// tabs as `?`: an event can quote a server, and stderr is a terminal.
struct Printable<W>(W);

impl<W: Write> Write for Printable<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = super::output::printable(&text);
        self.0.write_all(clean.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_is_the_variable_or_the_default_with_a_reason() {
        assert_eq!(filter(None).0.to_string(), DEFAULT_FILTER);
        assert_eq!(filter(Some(" ")).0.to_string(), DEFAULT_FILTER);
        assert_eq!(filter(Some("debug")).0.to_string(), "debug");
        let (f, why) = filter(Some("pipewright=loud"));
        assert_eq!(f.to_string(), DEFAULT_FILTER);
        assert!(
            why.is_some_and(|w| w.starts_with("PIPEWRIGHT_LOG `pipewright=loud` is not a filter")),
        );
    }

    #[test]
    fn control_characters_are_written_as_question_marks() {
        let mut out = Printable(Vec::new());
        let line = "WARN x: a\u{1b}]0;t\u{7}b\u{9b}2J\tc\n";
        assert_eq!(out.write(line.as_bytes()).ok(), Some(line.len()));
        assert_eq!(String::from_utf8_lossy(&out.0), "WARN x: a?]0;t?b?2J\tc\n");
    }
}
