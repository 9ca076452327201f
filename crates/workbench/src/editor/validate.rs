//! Re-validation as you type: a debounced load of the buffer on a worker
//! thread, latest wins. The input and render thread only hands over a copy of
//! the text and later picks up the result.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use pipewright_engine::diag::{Diagnostic, Pos, Span};
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::open::{LoadOptions, load_str_with};

/// How long after the last edit the buffer is re-validated.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Schedules loads of the buffer and collects their results.
pub struct Validator {
    /// When the next load should start, if one is wanted.
    due: Option<Instant>,
    /// The generation of the load now running, if any.
    in_flight: Option<u64>,
    /// The last generation handed out.
    generation: u64,
    /// The newest generation whose result was delivered.
    delivered: u64,
    tx: Sender<(u64, Arc<Loaded>)>,
    rx: Receiver<(u64, Arc<Loaded>)>,
    /// How the text is loaded (the driver's limits, its `--server` names).
    pub options: Arc<LoadOptions>,
}

impl Default for Validator {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self {
            due: None,
            in_flight: None,
            generation: 0,
            delivered: 0,
            options: Arc::default(),
            tx,
            rx,
        }
    }
}

impl Validator {
    /// Asks for a load at `at` (replacing any later or earlier wish: the
    /// newest edit decides).
    pub fn schedule(&mut self, at: Instant) {
        self.due = Some(at);
    }

    /// The newest finished result not delivered before, if any.
    pub fn collect(&mut self) -> Option<(u64, Arc<Loaded>)> {
        let mut fresh = None;
        while let Ok((generation, loaded)) = self.rx.try_recv() {
            if self.in_flight == Some(generation) {
                self.in_flight = None;
            }
            if generation > self.delivered {
                self.delivered = generation;
                fresh = Some((generation, loaded));
            }
        }
        fresh
    }

    /// Whether a load is wanted or running: the last edit's result has not
    /// been delivered yet.
    pub fn busy(&self) -> bool {
        self.due.is_some() || self.in_flight.is_some()
    }

    /// Whether a load should start now (its debounce passed and no other
    /// load is running).
    pub fn due(&self, now: Instant) -> bool {
        self.in_flight.is_none() && self.due.is_some_and(|d| now >= d)
    }

    /// A load of the text made on this thread replaces whatever is
    /// scheduled or running: nothing older than it is delivered after it.
    pub fn supersede(&mut self) {
        self.due = None;
        self.in_flight = None;
        self.generation += 1;
        self.delivered = self.generation;
    }

    /// Starts loading `source` on a worker thread.
    pub fn start(&mut self, source: String, now: Instant) {
        self.due = None;
        self.generation += 1;
        let generation = self.generation;
        self.in_flight = Some(generation);
        let tx = self.tx.clone();
        let options = self.options.clone();
        let spawned = std::thread::Builder::new()
            .name("pipewright-validate".into())
            .spawn(move || {
                let _ = tx.send((generation, Arc::new(load(&source, &options))));
            });
        if spawned.is_err() {
            // No thread to spare: try again on a later tick.
            self.in_flight = None;
            self.due = Some(now + DEBOUNCE);
        }
    }
}

/// Loads `source` as `options` say; a panic in the loader is an error at
/// 1:1, never a crash.
pub fn load(source: &str, options: &LoadOptions) -> Loaded {
    let load = || load_str_with(source, Dialect::Auto, options);
    std::panic::catch_unwind(AssertUnwindSafe(load)).unwrap_or_else(|_| Loaded {
        pipeline: None,
        diagnostics: vec![Diagnostic::error(
            Span::at(Pos::new(1, 1)),
            "internal error while checking this file",
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(v: &mut Validator, generation: u64) -> Vec<(u64, Arc<Loaded>)> {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(r) = v.collect() {
                let done = r.0 >= generation;
                got.push(r);
                if done {
                    return got;
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("generation {generation} never arrived; got {}", got.len());
    }

    #[test]
    fn waits_for_the_debounce_and_one_load_at_a_time() {
        let mut v = Validator::default();
        let now = Instant::now();
        v.schedule(now + DEBOUNCE);
        assert!(!v.due(now));
        assert!(v.due(now + DEBOUNCE));
        v.start("pipe:\n  - id: a\n    tool: t\n".into(), now);
        v.schedule(now);
        assert!(!v.due(now + DEBOUNCE), "a second load waits for the first");
        let got = wait(&mut v, 1);
        assert!(!got[0].1.has_errors(), "{:?}", got[0].1.diagnostics);
        assert!(v.due(now + DEBOUNCE), "and starts once it is done");
    }

    #[test]
    fn an_older_result_never_replaces_a_newer_one() {
        let mut v = Validator::default();
        let now = Instant::now();
        v.start("pipe: []\n".into(), now);
        // Pretend the first load finished long ago so a second can start.
        v.in_flight = None;
        v.start("pipe:\n  - id: a\n    tool: t\n".into(), now);
        let got = wait(&mut v, 2);
        let generations: Vec<u64> = got.iter().map(|r| r.0).collect();
        assert!(
            generations.windows(2).all(|w| w[0] < w[1]),
            "{generations:?}"
        );
        assert!(!got.last().unwrap().1.has_errors());
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            v.collect().is_none(),
            "generation 1 arriving late is dropped"
        );
    }
}
