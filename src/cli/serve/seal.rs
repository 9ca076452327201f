//! The `requestState` `serve` hands an agent with a question (SEP-2322):
//! which parked run, which round of questions, when it expires, and an
//! HMAC-SHA256 tag over all of it and the tool's name, keyed by a random
//! key of this process. An agent can read it but not forge it, move it to
//! another run or tool, or keep it past its time; a `serve` started again
//! holds another key, so an old state is refused there too.

use sha2::{Digest, Sha256};

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
            key: random_bytes(),
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

/// HMAC-SHA256 (RFC 2104) of `msg` under `key` (at most 64 bytes).
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Whether two tags are equal, in time that does not depend on where
/// they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `N` random bytes from the system's generator; where it cannot be read,
/// from std's randomly keyed hasher (itself seeded by the system).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    use std::io::Read;
    let mut out = [0u8; N];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut out));
    if read.is_err() {
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            h.write_u64(crate::engine::run::trace::random_u64());
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let tag = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(tag),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        let tag = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex::encode(tag),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

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
