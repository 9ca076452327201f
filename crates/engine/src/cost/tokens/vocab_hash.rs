//! The hash of the o200k vocabulary's lookup table, shared with `build.rs`,
//! which lays the table out at build time.

/// Slots in the table: a power of two a little over twice the vocabulary.
pub const TABLE_BITS: u32 = 19;

/// The table slot of a token's bytes (FNV-1a, then a multiplicative mix so
/// the top bits spread).
pub fn slot(bytes: &[u8]) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - TABLE_BITS)) as usize
}
