//! Random numbers for ids and keys, from the system: a leaf every stage
//! may use (run ids, the durable workflow's ids, `requestState` keys,
//! parked runs' ids) without importing the stage that needed one first.

use std::hash::{BuildHasher, Hasher};

/// 64 bits no other call picks: the clock and the process, hashed with a
/// randomly keyed hasher.
pub fn number() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i128(time::OffsetDateTime::now_utc().unix_timestamp_nanos());
    h.write_u32(std::process::id());
    h.finish()
}

/// `N` random bytes from the system's generator; where it cannot be read,
/// from std's randomly keyed hasher (itself seeded by the system).
pub fn bytes<const N: usize>() -> [u8; N] {
    use std::io::Read;
    let mut out = [0u8; N];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut out));
    if read.is_err() {
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            h.write_u64(number());
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        assert_ne!(super::number(), super::number());
        assert_ne!(super::bytes::<16>(), super::bytes::<16>());
    }
}
