//! What `pipewright run` prints while a run goes on, from session events
//! alone: one plain line per finished, skipped or retried node, and — on a
//! terminal — one live line below them (spinner, nodes done of total, the
//! node running, its fan-out, elapsed time, cost) that is rewritten in place
//! and cleared at the end.

use std::io::Write;
use std::time::{Duration, Instant};

use pipewright_engine::run::events::{Event, PauseReason};
use pipewright_engine::run::trace::NodeStatus;
use pipewright_workbench::SPINNER;

/// Erase the current terminal line and go to its start.
const CLEAR_LINE: &str = "\r\x1b[K";

/// Renders a run's events to a writer (stderr in the CLI).
pub struct Progress {
    out: Box<dyn Write + Send>,
    /// Draw the live line (the writer is a terminal).
    live: bool,
    /// Whether a live line is on screen now.
    drawn: bool,
    started: Instant,
    tick: usize,
    total: usize,
    done: usize,
    current: Option<String>,
    fan_out: Option<(String, usize, usize)>,
    /// Lines that came while a question was on the terminal, printed once
    /// it is answered.
    held: Vec<String>,
    /// The running node's last progress report: percent and message.
    note: Option<(String, String)>,
    cost: f64,
}

impl Progress {
    /// Progress on stderr, live when stderr is a terminal.
    pub fn stderr() -> Progress {
        use std::io::IsTerminal;
        let live = std::io::stderr().is_terminal();
        Progress::new(Box::new(std::io::stderr()), live)
    }

    /// Progress on any writer; `live` draws the updating line.
    pub fn new(out: Box<dyn Write + Send>, live: bool) -> Progress {
        Progress {
            out,
            live,
            drawn: false,
            started: Instant::now(),
            tick: 0,
            total: 0,
            done: 0,
            current: None,
            fan_out: None,
            held: Vec::new(),
            note: None,
            cost: 0.0,
        }
    }

    /// Whether the live line is drawn (and so wants [`Progress::tick`]s).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Takes one event: prints its plain line, if it has one, and redraws
    /// the live line.
    pub fn event(&mut self, ev: &Event) {
        self.track(ev);
        if let Some(line) = plain_line(ev) {
            if super::ask::asking() {
                self.held.push(line);
            } else {
                for held in std::mem::take(&mut self.held) {
                    self.println(&held);
                }
                self.println(&line);
            }
        }
        self.redraw();
    }

    /// Prints the lines held back while a question was asked.
    pub fn flush_held(&mut self) {
        for held in std::mem::take(&mut self.held) {
            self.println(&held);
        }
    }

    /// Advances the spinner and the clock.
    pub fn tick(&mut self) {
        self.tick = self.tick.wrapping_add(1);
        self.redraw();
    }

    /// Prints a line of its own above the live line.
    pub fn println(&mut self, line: &str) {
        self.clear();
        let _ = writeln!(self.out, "{}", super::output::printable(line));
    }

    /// Removes the live line (before a prompt, and at the end of a run).
    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(self.out, "{CLEAR_LINE}");
            let _ = self.out.flush();
            self.drawn = false;
        }
    }

    fn track(&mut self, ev: &Event) {
        match ev {
            Event::RunStarted { nodes, .. } => {
                self.started = Instant::now();
                self.total = *nodes;
                self.done = 0;
                self.current = None;
                self.fan_out = None;
            }
            Event::NodeStatus {
                id,
                status: NodeStatus::Running,
                ..
            } => self.current = Some(id.clone()),
            Event::NodeStatus {
                status: NodeStatus::Skipped,
                ..
            } => self.done += 1,
            Event::Iteration {
                id, done, total, ..
            } => self.fan_out = Some((id.clone(), *done, *total)),
            Event::Progress { id, note, .. } => {
                let mut shown = match note.fraction() {
                    Some(f) => format!("{:.0}%", f * 100.0),
                    None => format!("{}", note.progress),
                };
                if let Some(m) = &note.message {
                    shown.push(' ');
                    shown.push_str(m);
                }
                self.note = Some((id.clone(), shown));
            }
            Event::Task { id, note, .. } => self.note = Some((id.clone(), note.text())),
            Event::NodeFinished { id, record } => {
                self.done += 1;
                self.cost += record.cost_usd;
                if self.current.as_ref() == Some(id) {
                    self.current = None;
                }
                if self.fan_out.as_ref().is_some_and(|(f, _, _)| f == id) {
                    self.fan_out = None;
                }
                if self.note.as_ref().is_some_and(|(n, _)| n == id) {
                    self.note = None;
                }
            }
            _ => {}
        }
    }

    fn redraw(&mut self) {
        // A question on the terminal owns the screen until it is answered.
        if !self.live || self.total == 0 || super::ask::asking() {
            return;
        }
        let line = self.status_line(self.started.elapsed());
        let _ = write!(self.out, "{CLEAR_LINE}{}", super::output::printable(&line));
        let _ = self.out.flush();
        self.drawn = true;
    }

    /// The live line: `⠹ 3/7 · fetch 12/40 · 2.4s · $0.0040`.
    pub fn status_line(&self, elapsed: Duration) -> String {
        let spin = SPINNER[self.tick % SPINNER.len()];
        let mut line = format!("{spin} {}/{}", self.done.min(self.total), self.total);
        match (&self.current, &self.fan_out) {
            (_, Some((id, done, total))) => line.push_str(&format!(" · {id} {done}/{total}")),
            (Some(id), None) => line.push_str(&format!(" · {id}")),
            (None, None) => {}
        }
        if let Some((_, note)) = &self.note {
            line.push_str(&format!(" · {note}"));
        }
        line.push_str(&format!(" · {:.1}s", elapsed.as_secs_f64()));
        if self.cost > 0.0 {
            line.push_str(&format!(" · ${:.4}", self.cost));
        }
        line
    }
}

/// The status glyph of a finished node in plain output.
pub fn glyph(status: NodeStatus) -> &'static str {
    match status {
        NodeStatus::Ok => "✓",
        NodeStatus::Failed => "✗",
        NodeStatus::Skipped => "-",
        NodeStatus::Cancelled => "⊘",
        NodeStatus::Running => "●",
        NodeStatus::Stale => "~",
        NodeStatus::Pending => "○",
    }
}

/// The permanent line an event prints, if any.
pub fn plain_line(ev: &Event) -> Option<String> {
    Some(match ev {
        Event::RunStarted {
            composition,
            case,
            nodes,
        } => {
            let case = case.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default();
            format!("▶ {composition}{case} · {nodes} node(s)")
        }
        Event::NodeFinished { id, record } => {
            let detail = match record.status {
                NodeStatus::Ok => {
                    let mut d = format!("{} ms", record.duration_ms);
                    if record.mocked {
                        d.push_str(", mocked");
                    }
                    if record.replayed {
                        d.push_str(", replayed");
                    }
                    if record.cost_usd > 0.0 || record.tokens > 0 {
                        d.push_str(&format!(", ${:.4}, {} tok", record.cost_usd, record.tokens));
                    }
                    if record.output_tokens > 0 {
                        d.push_str(&format!(", output {} tok", record.output_tokens));
                    }
                    if record.attempts > 1 {
                        d.push_str(&format!(", {} attempts", record.attempts));
                    }
                    if !record.iterations.is_empty() {
                        d.push_str(&format!(", {} iterations", record.iterations.len()));
                    }
                    d
                }
                _ => record.error.clone().unwrap_or_default(),
            };
            format!("  {} {id}  {detail}", glyph(record.status))
        }
        Event::NodeStatus {
            id,
            status: NodeStatus::Skipped,
            reason,
        } => format!("  - {id}  skipped: {}", reason.as_deref().unwrap_or("")),
        Event::Retrying { id, attempt, error } => {
            format!("  ↻ {id}  attempt {attempt} failed: {error}; retrying")
        }
        Event::Task { id, note, .. } => format!("  ◷ {id}  {}", note.text()),
        Event::BudgetTripped { cap, detail } => format!("  $ budget `{cap}` exceeded: {detail}"),
        Event::Compensated { id, ok: true, .. } => format!("  ↶ {id}  undone (compensate)"),
        Event::Compensated { id, error, .. } => {
            format!(
                "  ↶ {id}  compensate failed: {}",
                error.as_deref().unwrap_or("")
            )
        }
        Event::Paused {
            reason: PauseReason::Breakpoint,
            before: Some(id),
        } => format!("  ⏸ paused before {id} (breakpoint)"),
        Event::Rejected { command, reason } => format!("  ! {command}: {reason}"),
        Event::Answered { id, kind, action } => format!("  ? {id}  {kind}: {action}"),
        Event::ToolsChanged { added, removed } => {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "-".to_owned()
                } else {
                    v.join(", ")
                }
            };
            format!(
                "  ⟳ the tool list changed: added {}; removed {}",
                list(added),
                list(removed)
            )
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::run::trace::NodeRecord;
    use std::sync::{Arc, Mutex};

    /// A writer tests can read back.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().map(|v| v.clone()).unwrap_or_default())
                .into_owned()
        }
    }

    fn finished(id: &str, cost: f64) -> Event {
        Event::NodeFinished {
            id: id.into(),
            record: Box::new(NodeRecord {
                status: NodeStatus::Ok,
                cost_usd: cost,
                duration_ms: 3,
                ..NodeRecord::default()
            }),
        }
    }

    fn run(live: bool) -> (Sink, Progress) {
        let sink = Sink::default();
        let mut p = Progress::new(Box::new(sink.clone()), live);
        p.event(&Event::RunStarted {
            composition: "c".into(),
            case: None,
            nodes: 2,
        });
        p.event(&Event::NodeStatus {
            id: "fetch".into(),
            status: NodeStatus::Running,
            reason: None,
        });
        p.event(&Event::Iteration {
            id: "fetch".into(),
            index: 0,
            status: NodeStatus::Ok,
            done: 1,
            total: 4,
        });
        (sink, p)
    }

    #[test]
    fn the_live_line_counts_nodes_fan_out_and_cost() {
        let (_, mut p) = run(true);
        let line = p.status_line(Duration::from_millis(2400));
        assert!(line.ends_with("0/2 · fetch 1/4 · 2.4s"), "{line}");
        p.event(&finished("fetch", 0.002));
        let line = p.status_line(Duration::from_millis(2400));
        assert!(line.ends_with("1/2 · 2.4s · $0.0020"), "{line}");
        p.tick();
        assert_ne!(
            p.status_line(Duration::ZERO).chars().next(),
            line.chars().next(),
            "the spinner turns"
        );
    }

    #[test]
    fn on_a_terminal_the_line_is_rewritten_in_place_and_cleared() {
        let (sink, mut p) = run(true);
        p.event(&finished("fetch", 0.0));
        p.clear();
        let text = sink.text();
        // Every redraw starts by erasing the line; the plain line of the
        // finished node sits on a line of its own.
        assert!(text.contains("\r\x1b[K⠋ 0/2 · fetch 1/4"), "{text:?}");
        assert!(text.contains("\r\x1b[K  ✓ fetch  3 ms\n"), "{text:?}");
        assert!(text.ends_with(CLEAR_LINE), "cleared at the end: {text:?}");
    }

    #[test]
    fn off_a_terminal_only_plain_lines_are_written() {
        let (sink, mut p) = run(false);
        p.event(&finished("fetch", 0.0));
        p.tick();
        p.clear();
        assert_eq!(sink.text(), "▶ c · 2 node(s)\n  ✓ fetch  3 ms\n");
    }
}
