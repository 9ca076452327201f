//! The `requestState` `serve` hands an agent with a question (SEP-2322):
//! which run, which questions, when it expires, and an HMAC-SHA256 tag
//! over all of it and the tool's name. The key is random to the process,
//! or the fleet's (`--state-key-file`, `--state-key-env`): then any
//! instance checks any instance's state, the first key seals and every
//! key opens (rotation). An agent can read a state but not forge it, move
//! it to another run or tool, or keep it past its time.
//!
//! Two kinds: `pw1.<run>.<round>.<expiry>.<tag>` names a run parked in
//! one `serve` process; `pwr1.<run>.<q…>.<expiry>.<tag>` (`serve --on`)
//! names a durable run in Restate and the ids of the questions it answers
//! (joined by `-`), which any instance can answer there.

use pipewright_engine::mac::{hmac_sha256, same};

/// The prefix of a state naming a run parked in one process.
const VERSION: &str = "pw1";
/// The prefix of a state naming questions of a durable run in Restate.
const DURABLE: &str = "pwr1";
/// Mixed into every tag, so no other HMAC made with the key could pass.
const DOMAIN: &[u8] = b"pipewright/serve/requestState/v1";
/// The shortest key taken (HMAC-SHA256's output size).
pub const MIN_KEY_BYTES: usize = 32;

/// What a `pw1` state names, once its tag is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The parked run.
    pub run: String,
    /// Which round of questions of that run it answers.
    pub round: u32,
}

/// What a `pwr1` state names, once its tag is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Durable {
    /// The durable run's id in Restate.
    pub run: String,
    /// The ids of the questions it answers, in the order of the agent's
    /// keys (`q1`, `q2`, …).
    pub questions: Vec<String>,
}

/// Either kind of state, once its tag is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Parked(Opened),
    Durable(Durable),
}

/// Why a state is refused; each says what the agent should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not a state this server (or its fleet) wrote, changed, or for
    /// another tool.
    Forged,
    /// Its time to answer is over.
    Expired,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Forged => {
                "`requestState` was not issued by this server for this tool (changed, forged, from another tool, or sealed under a key this server does not hold, e.g. by a server since restarted without a shared `--state-key-file`); call the tool again without it"
            }
            Refused::Expired => {
                "`requestState` has expired: the question it answers is no longer waiting; call the tool again without it"
            }
        })
    }
}

/// Seals states with its first key and opens them with any of its keys.
pub struct Sealer {
    keys: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealer({} key(s))", self.keys.len())
    }
}

impl Default for Sealer {
    fn default() -> Self {
        Sealer::new()
    }
}

impl Sealer {
    /// A sealer with a fresh random key.
    pub fn new() -> Self {
        Sealer {
            keys: vec![pipewright_engine::random::bytes::<32>().to_vec()],
        }
    }

    /// A sealer with the fleet's keys: the first seals, every one opens.
    /// `None` when there is none or one is shorter than [`MIN_KEY_BYTES`].
    pub fn with_keys(keys: Vec<Vec<u8>>) -> Option<Self> {
        if keys.is_empty() || keys.iter().any(|k| k.len() < MIN_KEY_BYTES) {
            return None;
        }
        Some(Sealer { keys })
    }

    /// The state for round `round` of run `run`, asked by tool `tool`,
    /// good until `expires_ms` (Unix milliseconds).
    pub fn seal(&self, run: &str, round: u32, tool: &str, expires_ms: u64) -> String {
        self.sealed(format!("{VERSION}.{run}.{round}.{expires_ms}"), tool)
    }

    /// The state for questions `questions` of durable run `run`, asked by
    /// tool `tool`, good until `expires_ms`. Run and question ids are
    /// letters, digits and `-` (question ids without `-`).
    pub fn seal_durable(
        &self,
        run: &str,
        questions: &[String],
        tool: &str,
        expires_ms: u64,
    ) -> String {
        let questions = questions.join("-");
        self.sealed(format!("{DURABLE}.{run}.{questions}.{expires_ms}"), tool)
    }

    fn sealed(&self, body: String, tool: &str) -> String {
        let key = self.keys.first().map_or(&[][..], Vec::as_slice);
        let tag = tag(key, &body, tool);
        format!("{body}.{}", hex::encode(tag))
    }

    /// What a `pw1` `state` names, when a key of this sealer wrote it for
    /// `tool` and it has not expired at `now_ms`.
    #[cfg(test)]
    pub fn open(&self, state: &str, tool: &str, now_ms: u64) -> Result<Opened, Refused> {
        match self.open_any(state, tool, now_ms)? {
            State::Parked(opened) => Ok(opened),
            State::Durable(_) => Err(Refused::Forged),
        }
    }

    /// What `state` names (either kind), when a key of this sealer wrote
    /// it for `tool` and it has not expired at `now_ms`.
    pub fn open_any(&self, state: &str, tool: &str, now_ms: u64) -> Result<State, Refused> {
        let (body, given) = state.rsplit_once('.').ok_or(Refused::Forged)?;
        let given = hex::decode(given).map_err(|_| Refused::Forged)?;
        if !self.keys.iter().any(|k| same(&tag(k, body, tool), &given)) {
            return Err(Refused::Forged);
        }
        let mut parts = body.split('.');
        let (Some(version), Some(run), Some(middle), Some(expires), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(Refused::Forged);
        };
        let expires: u64 = expires.parse().map_err(|_| Refused::Forged)?;
        let opened = match version {
            VERSION => State::Parked(Opened {
                run: run.to_owned(),
                round: middle.parse().map_err(|_| Refused::Forged)?,
            }),
            DURABLE if !run.is_empty() && !middle.is_empty() => State::Durable(Durable {
                run: run.to_owned(),
                questions: middle.split('-').map(str::to_owned).collect(),
            }),
            _ => return Err(Refused::Forged),
        };
        if now_ms >= expires {
            return Err(Refused::Expired);
        }
        Ok(opened)
    }
}

fn tag(key: &[u8], body: &str, tool: &str) -> [u8; 32] {
    let mut msg = Vec::with_capacity(DOMAIN.len() + body.len() + tool.len() + 2);
    msg.extend_from_slice(DOMAIN);
    msg.push(0);
    msg.extend_from_slice(body.as_bytes());
    msg.push(0);
    msg.extend_from_slice(tool.as_bytes());
    hmac_sha256(key, &msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_unchanged_for_its_tool_and_in_time() {
        let s = Sealer::new();
        let state = s.seal("abc123", 2, "ask", 1_000);
        assert_eq!(
            s.open(&state, "ask", 999),
            Ok(Opened {
                run: "abc123".into(),
                round: 2
            })
        );
        assert_eq!(s.open(&state, "ask", 1_000), Err(Refused::Expired));
        assert_eq!(s.open(&state, "other", 999), Err(Refused::Forged));
        // Another run, round or expiry under the same tag.
        for changed in [
            state.replace("abc123", "abc124"),
            state.replace(".2.", ".3."),
            state.replace(".1000.", ".9000."),
        ] {
            assert_eq!(
                s.open(&changed, "ask", 999),
                Err(Refused::Forged),
                "{changed}"
            );
        }
        // Another process's key.
        assert_eq!(Sealer::new().open(&state, "ask", 999), Err(Refused::Forged));
        for junk in [
            "",
            ".",
            "pw1",
            "pw1.a.b.c.zz",
            "pw1.a.1.5.00",
            "\u{1F600}.\u{1F600}",
        ] {
            assert_eq!(s.open(junk, "ask", 0), Err(Refused::Forged), "{junk}");
        }
    }

    fn key(b: u8) -> Vec<u8> {
        vec![b; MIN_KEY_BYTES]
    }

    #[test]
    fn a_fleet_key_opens_at_every_instance_and_a_rotated_one_still_opens_old_states() {
        let (a, b) = (
            Sealer::with_keys(vec![key(1)]).unwrap(),
            Sealer::with_keys(vec![key(1)]).unwrap(),
        );
        let state = a.seal("run1", 1, "ask", 1_000);
        assert_eq!(b.open(&state, "ask", 5).map(|o| o.run), Ok("run1".into()));
        // Rotated: the new key first, the old one still opens.
        let rotated = Sealer::with_keys(vec![key(2), key(1)]).unwrap();
        assert!(rotated.open(&state, "ask", 5).is_ok());
        assert_eq!(rotated.open(&state, "ask", 1_000), Err(Refused::Expired));
        let new = rotated.seal("run2", 1, "ask", 1_000);
        assert!(
            new != a.seal("run2", 1, "ask", 1_000),
            "the first key seals"
        );
        assert!(
            Sealer::with_keys(vec![key(2)])
                .unwrap()
                .open(&new, "ask", 5)
                .is_ok()
        );
        // The old key alone does not open what the new one sealed; another
        // fleet's key opens nothing.
        assert_eq!(a.open(&new, "ask", 5), Err(Refused::Forged));
        let other = Sealer::with_keys(vec![key(3)]).unwrap();
        assert_eq!(other.open(&state, "ask", 5), Err(Refused::Forged));
        // Keys are never shown.
        assert_eq!(format!("{rotated:?}"), "Sealer(2 key(s))");
        assert!(Sealer::with_keys(vec![]).is_none());
        assert!(Sealer::with_keys(vec![key(1), vec![1; MIN_KEY_BYTES - 1]]).is_none());
    }

    #[test]
    fn a_durable_state_names_its_run_and_questions() {
        let s = Sealer::with_keys(vec![key(1)]).unwrap();
        let qs = vec!["q0".to_owned(), "q3".to_owned()];
        let state = s.seal_durable("20261129-ab12", &qs, "ask", 1_000);
        assert!(
            state.starts_with("pwr1.20261129-ab12.q0-q3.1000."),
            "{state}"
        );
        assert_eq!(
            s.open_any(&state, "ask", 999),
            Ok(State::Durable(Durable {
                run: "20261129-ab12".into(),
                questions: qs,
            }))
        );
        assert_eq!(
            s.open(&state, "ask", 999),
            Err(Refused::Forged),
            "not a pw1"
        );
        assert_eq!(s.open_any(&state, "ask", 1_000), Err(Refused::Expired));
        assert_eq!(s.open_any(&state, "tell", 999), Err(Refused::Forged));
        for changed in [
            state.replace("q0-q3", "q0"),
            state.replace("ab12", "ab13"),
            state.replace("pwr1", "pw1"),
        ] {
            assert_eq!(
                s.open_any(&changed, "ask", 999),
                Err(Refused::Forged),
                "{changed}"
            );
        }
        let parked = s.seal("r", 1, "ask", 1_000);
        assert!(matches!(
            s.open_any(&parked, "ask", 0),
            Ok(State::Parked(_))
        ));
    }
}
