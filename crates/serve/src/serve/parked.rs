//! Runs waiting for a 2026-07-28 agent's answers. A served composition's
//! node was asked something; `serve` returned the question to the agent as
//! an input-required result and keeps the run going here, its node waiting,
//! until the agent calls again with the answers and the `requestState` it
//! was given. At most [`MAX_PARKED`] runs wait at once, each for at most
//! [`PARK_TTL`]; one that waits longer gets its questions cancelled and
//! ends on its own. A parked run lives in this process only: a state
//! another instance of the fleet sealed (same key, see [`super::seal`])
//! is refused with what to do instead.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::agent::Asked;
use super::seal::{Refused, Sealer, State};
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
    /// Begins every run id this process seals (random), so a state
    /// another instance sealed under the fleet's key is told apart.
    instance: String,
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
        Parking::with_sealer(Sealer::new(), ttl, max)
    }

    /// Parking whose states `sealer` seals (the fleet's key).
    pub fn with_sealer(sealer: Sealer, ttl: Duration, max: usize) -> Self {
        Parking {
            sealer,
            instance: hex::encode(pipewright_engine::random::bytes::<8>()),
            ttl,
            max,
            runs: Mutex::default(),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// What `state` names (either kind), given for `tool`: refused as
    /// forged or expired with the sentence to show.
    pub fn open(&self, state: &str, tool: &str) -> Result<State, String> {
        self.sealer
            .open_any(state, tool, now_ms())
            .map_err(|e: Refused| e.to_string())
    }

    /// Seals questions `questions` of durable run `run` for `tool`, good
    /// for the parking time.
    pub fn seal_durable(&self, run: &str, questions: &[String], tool: &str) -> String {
        self.sealer
            .seal_durable(run, questions, tool, self.expiry())
    }

    fn expiry(&self) -> u64 {
        now_ms().saturating_add(self.ttl.as_millis() as u64)
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
            &format!("{}{}", self.instance, parked.live.id),
            parked.live.round,
            &parked.tool,
            self.expiry(),
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
        let opened = match self.open(state, tool)? {
            State::Parked(opened) => opened,
            State::Durable(_) => return Err(DURABLE_HERE.to_owned()),
        };
        let Some(run) = opened.run.strip_prefix(&self.instance) else {
            return Err(ELSEWHERE.to_owned());
        };
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        let gone = || GONE.to_owned();
        let parked = runs.get(run).ok_or_else(gone)?;
        if parked.live.round != opened.round {
            return Err(gone());
        }
        let checked = check(&parked.asked)?;
        let parked = runs.remove(run).ok_or_else(gone)?;
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

/// A state sealed under the fleet's key by another instance (or by this
/// one before it restarted): its run waits in that process.
pub const ELSEWHERE: &str = "`requestState` was sealed by another `serve` instance (or by this one before it restarted), and the run it answers waits in that process: without `--on`, a question must be answered at the instance that asked it. Route each agent's calls to one instance (sticky on the `Mcp-Session-Id` header; a 2026-07-28 agent sends none, so it needs `--on`), or serve with `--on restate://…` so that any instance takes the answer; call the tool again without it";

/// A state whose questions no longer wait.
pub(super) const GONE: &str = "no run is waiting on this `requestState`: it was answered already, or its question expired; call the tool again without it";

/// A durable run's state at a `serve` without `--on`.
pub(super) const DURABLE_HERE: &str = "`requestState` names a durable run in Restate, and this `serve` runs without `--on restate://…`: serve every instance with the same `--on`; call the tool again without it";

pub(super) fn now_ms() -> u64 {
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

    #[tokio::test]
    async fn a_state_of_another_instance_of_the_fleet_says_where_its_run_waits() {
        let key = || Sealer::with_keys(vec![vec![7; 32]]).expect("a key");
        let (a, b) = (
            Parking::with_sealer(key(), PARK_TTL, 4),
            Parking::with_sealer(key(), PARK_TTL, 4),
        );
        let state = a.park(parked("ask")).ok().expect("parked");
        let e = b.take(&state, "ask", |_| Ok(())).err().expect("elsewhere");
        assert_eq!(e, ELSEWHERE);
        assert!(e.contains("sticky on the `Mcp-Session-Id` header"), "{e}");
        assert!(e.contains("--on restate://"), "{e}");
        // Forged and other-key states stay "not issued by this server".
        let other = Parking::new(PARK_TTL, 4);
        let e = other
            .take(&state, "ask", |_| Ok(()))
            .err()
            .expect("other key");
        assert!(e.contains("not issued by this server"), "{e}");
        // A durable run's state without `--on`.
        let durable = key().seal_durable("run", &["q0".to_owned()], "ask", u64::MAX);
        let e = b.take(&durable, "ask", |_| Ok(())).err().expect("durable");
        assert!(e.contains("without `--on restate://…`"), "{e}");
        // At the instance that asked, it is taken once.
        assert!(a.take(&state, "ask", |_| Ok(())).is_ok());
        let e = a.take(&state, "ask", |_| Ok(())).err().expect("replay");
        assert!(e.contains("answered already"), "{e}");
    }
}
