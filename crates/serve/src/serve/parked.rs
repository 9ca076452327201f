//! Runs waiting for a 2026-07-28 agent's answers. A served composition's
//! node was asked something; `serve` returned the question to the agent as
//! an input-required result and keeps the run going here, its node waiting,
//! until the agent calls again with the answers and the `requestState` it
//! was given. At most [`MAX_PARKED`] runs wait at once, each for at most
//! [`PARK_TTL`]; one that waits longer gets its questions cancelled and
//! ends on its own.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::agent::Asked;
use super::seal::{Refused, Sealer};
use pipewright_engine::run::trace::Trace;

/// How long a parked run waits for its agent.
pub const PARK_TTL: Duration = Duration::from_secs(10 * 60);
/// The most runs parked at once, over every session.
pub const MAX_PARKED: usize = 64;

/// A served run going on in the background, and the questions it asks.
pub struct Live {
    /// The run's handle for its agent (random, 128 bits).
    pub id: String,
    /// How many rounds of questions it has asked.
    pub round: u32,
    pub questions: mpsc::Receiver<Asked>,
    pub run: JoinHandle<Result<Trace, String>>,
    /// Cancels the run (its compensations run).
    pub cancel: CancellationToken,
}

impl Live {
    pub fn new(
        questions: mpsc::Receiver<Asked>,
        run: JoinHandle<Result<Trace, String>>,
        cancel: CancellationToken,
    ) -> Self {
        Live {
            id: hex::encode(pipewright_engine::random::bytes::<16>()),
            round: 0,
            questions,
            run,
            cancel,
        }
    }
}

/// A run waiting for the answers to `asked`, each under the key the agent
/// got it by.
pub struct Parked {
    pub live: Live,
    pub tool: String,
    pub asked: Vec<(String, Asked)>,
}

/// The parked runs of one `serve`.
pub struct Parking {
    sealer: Sealer,
    ttl: Duration,
    max: usize,
    runs: Mutex<HashMap<String, Parked>>,
}

impl Default for Parking {
    fn default() -> Self {
        Parking::new(PARK_TTL, MAX_PARKED)
    }
}

impl Parking {
    pub fn new(ttl: Duration, max: usize) -> Self {
        Parking {
            sealer: Sealer::new(),
            ttl,
            max,
            runs: Mutex::default(),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Parks the run until its questions are answered: the state to hand
    /// the agent. When [`MAX_PARKED`] runs already wait, the run comes back.
    pub fn park(&self, mut parked: Parked) -> Result<String, Box<Parked>> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.len() >= self.max {
            return Err(Box::new(parked));
        }
        parked.live.round += 1;
        let state = self.sealer.seal(
            &parked.live.id,
            parked.live.round,
            &parked.tool,
            now_ms().saturating_add(self.ttl.as_millis() as u64),
        );
        runs.insert(parked.live.id.clone(), parked);
        Ok(state)
    }

    /// Takes out the run `state` (given for `tool`) names, once `check`
    /// accepts the answers for its questions; a run whose answers `check`
    /// refuses stays parked, so the agent may answer again.
    pub fn take<T>(
        &self,
        state: &str,
        tool: &str,
        check: impl FnOnce(&[(String, Asked)]) -> Result<T, String>,
    ) -> Result<(Parked, T), String> {
        let opened = self
            .sealer
            .open(state, tool, now_ms())
            .map_err(|e: Refused| e.to_string())?;
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let gone = || {
            "no run is waiting on this `requestState`: it was answered already, or its question expired; call the tool again without it".to_owned()
        };
        let parked = runs.get(&opened.run).ok_or_else(gone)?;
        if parked.live.round != opened.round {
            return Err(gone());
        }
        let checked = check(&parked.asked)?;
        let parked = runs.remove(&opened.run).ok_or_else(gone)?;
        Ok((parked, checked))
    }

    /// Takes out run `id` if it still waits on round `round` (its time is
    /// over).
    pub fn expire(&self, id: &str, round: u32) -> Option<Parked> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.get(id).is_some_and(|p| p.live.round == round) {
            return runs.remove(id);
        }
        None
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> Live {
        let (_tx, rx) = mpsc::channel(1);
        Live::new(
            rx,
            tokio::spawn(async { Err("never ran".to_owned()) }),
            CancellationToken::new(),
        )
    }

    fn waiting(p: &Parking) -> usize {
        p.runs.lock().map(|r| r.len()).unwrap_or_default()
    }

    fn parked(tool: &str) -> Parked {
        Parked {
            live: live(),
            tool: tool.to_owned(),
            asked: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_state_takes_its_run_once_and_only_for_its_tool() {
        let p = Parking::new(PARK_TTL, 4);
        let state = p.park(parked("ask")).ok().expect("parked");
        let e = p.take(&state, "other", |_| Ok(())).err().expect("refused");
        assert!(e.contains("not issued by this server"), "{e}");
        let e = p
            .take(&state, "ask", |_| Err::<(), _>("bad answer".to_owned()))
            .err()
            .expect("refused");
        assert_eq!(e, "bad answer");
        assert_eq!(waiting(&p), 1, "a refused answer leaves the run parked");
        let (run, ()) = p.take(&state, "ask", |_| Ok(())).expect("taken");
        assert_eq!(run.live.round, 1);
        let e = p.take(&state, "ask", |_| Ok(())).err().expect("replay");
        assert!(e.contains("answered already"), "{e}");
        // Parked again, the old round's state no longer takes it.
        let id = run.live.id.clone();
        let again = p.park(run).ok().expect("parked again");
        assert!(p.take(&state, "ask", |_| Ok(())).is_err());
        assert!(p.expire(&id, 1).is_none());
        assert!(p.expire(&id, 2).is_some());
        assert!(p.take(&again, "ask", |_| Ok(())).is_err());
    }

    #[tokio::test]
    async fn parking_is_capped_and_states_expire() {
        let p = Parking::new(Duration::from_millis(0), 1);
        let state = p.park(parked("a")).ok().expect("parked");
        assert!(p.park(parked("a")).is_err(), "the cap holds");
        let e = p.take(&state, "a", |_| Ok(())).err().expect("expired");
        assert!(e.contains("expired"), "{e}");
    }
}
