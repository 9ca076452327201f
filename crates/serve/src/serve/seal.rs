//! The `requestState` `serve` hands an agent with a question (SEP-2322):
//! which parked run, which round of questions, when it expires, and an
//! HMAC-SHA256 tag over all of it and the tool's name, keyed by a random
//! key of this process. An agent can read it but not forge it, move it to
//! another run or tool, or keep it past its time; a `serve` started again
//! holds another key, so an old state is refused there too.

use pipewright_engine::mac::{hmac_sha256, same};

/// The prefix of every state this version of `serve` writes.
const VERSION: &str = "pw1";
/// Mixed into every tag, so no other HMAC made with the key could pass.
const DOMAIN: &[u8] = b"pipewright/serve/requestState/v1";

/// What a state names, once its tag is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The parked run.
    pub run: String,
    /// Which round of questions of that run it answers.
    pub round: u32,
}

/// Why a state is refused; each says what the agent should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not a state this server wrote, changed, or for another tool.
    Forged,
    /// Its time to answer is over.
    Expired,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Forged => {
                "`requestState` was not issued by this server for this tool (changed, forged, from another tool, or from a server since restarted); call the tool again without it"
            }
            Refused::Expired => {
                "`requestState` has expired: the question it answers is no longer waiting; call the tool again without it"
            }
        })
    }
}

/// Seals and opens states with one random key.
pub struct Sealer {
    key: [u8; 32],
}

impl Sealer {
    /// A sealer with a fresh random key.
    pub fn new() -> Self {
        Sealer {
            key: pipewright_engine::random::bytes(),
        }
    }

    /// The state for round `round` of run `run`, asked by tool `tool`,
    /// good until `expires_ms` (Unix milliseconds).
    pub fn seal(&self, run: &str, round: u32, tool: &str, expires_ms: u64) -> String {
        let body = format!("{VERSION}.{run}.{round}.{expires_ms}");
        let tag = self.tag(&body, tool);
        format!("{body}.{}", hex::encode(tag))
    }

    /// What `state` names, when this sealer wrote it for `tool` and it has
    /// not expired at `now_ms`.
    pub fn open(&self, state: &str, tool: &str, now_ms: u64) -> Result<Opened, Refused> {
        let (body, tag) = state.rsplit_once('.').ok_or(Refused::Forged)?;
        let tag = hex::decode(tag).map_err(|_| Refused::Forged)?;
        if !same(&self.tag(body, tool), &tag) {
            return Err(Refused::Forged);
        }
        let mut parts = body.split('.');
        let (Some(VERSION), Some(run), Some(round), Some(expires), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(Refused::Forged);
        };
        let round = round.parse().map_err(|_| Refused::Forged)?;
        let expires: u64 = expires.parse().map_err(|_| Refused::Forged)?;
        if now_ms >= expires {
            return Err(Refused::Expired);
        }
        Ok(Opened {
            run: run.to_owned(),
            round,
        })
    }

    fn tag(&self, body: &str, tool: &str) -> [u8; 32] {
        let mut msg = Vec::with_capacity(DOMAIN.len() + body.len() + tool.len() + 2);
        msg.extend_from_slice(DOMAIN);
        msg.push(0);
        msg.extend_from_slice(body.as_bytes());
        msg.push(0);
        msg.extend_from_slice(tool.as_bytes());
        hmac_sha256(&self.key, &msg)
    }
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
}
