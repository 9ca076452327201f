//! Token counts of what a pipeline produces, with OpenAI's `o200k_base`
//! encoding, so an author sees what a node's output would put into an
//! agent's context.
//!
//! The counter is tiktoken's algorithm: split the text with the encoding's
//! pattern, then merge each piece's bytes pair by pair, lowest rank first.
//! The vocabulary is laid out at build time (`build.rs`) and read in place
//! from the binary, so the first count costs nothing to set up and the
//! counter holds no heap of its own: counting is cheap enough to stay on
//! the path of every call. Tests hold it to the `bpe-openai` crate's counts.

mod vocab_hash;

use std::{cmp::Reverse, collections::BinaryHeap, sync::LazyLock};

use regex::Regex;
use serde_json::Value;

// Allowed process-wide: immutable tables built into the binary and a
// compiled regex, not settings.
static TOKENS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_tokens.bin"));
static OFFSETS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_offsets.bin"));
static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_table.bin"));

/// o200k's split pattern. Its `\s+(?!\S)` needs a look-ahead the `regex`
/// crate lacks: plain `\s+` stands in, and [`pieces`] gives back the last
/// whitespace character when a non-space follows, which is what the
/// look-ahead does.
#[expect(
    clippy::expect_used,
    reason = "a constant pattern; every token-count test compiles it"
)]
static SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}",
        r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"|\s*[\r\n]+",
        r"|\s+",
    ))
    .expect("the o200k pattern compiles")
});

/// Tokens of `text`.
pub fn count(text: &str) -> u64 {
    pieces(text)
        .flat_map(|p| p.as_bytes().chunks(LONG_PIECE))
        .map(count_piece)
        .sum::<usize>() as u64
}

/// Tokens of a JSON value as an agent would receive it: a string as its
/// text, anything else as compact JSON; `null` (nothing) is zero.
pub fn count_value(v: &Value) -> u64 {
    match v {
        Value::Null => 0,
        Value::String(s) => count(s),
        other => count(&other.to_string()),
    }
}

/// [`count_value`] of a shared value, from its text: nothing is parsed
/// but a string (whose text is counted, not its JSON).
pub fn count_json(v: &crate::json::Json) -> u64 {
    if v.is_null() {
        return 0;
    }
    match v.as_str() {
        Some(s) => count(&s),
        None => count(&v.text()),
    }
}

/// The pieces the split pattern cuts `text` into: by hand while the text
/// at hand is ASCII (most of what servers return), by the pattern where a
/// wider character could change the cut.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let end = ascii_piece(text.as_bytes(), at).or_else(|| pattern_piece(text, at))?;
        let piece = &text[at..end];
        at = end;
        Some(piece)
    })
}

/// The end of the piece at `at`, by the pattern.
fn pattern_piece(text: &str, at: usize) -> Option<usize> {
    let m = SPLIT.find_at(text, at)?;
    let piece = m.as_str();
    let mut end = m.end();
    if end < text.len()
        && let Some(last) = piece.chars().next_back()
        && last.is_whitespace()
        && !matches!(last, '\r' | '\n')
        && piece.len() > last.len_utf8()
    {
        end -= last.len_utf8();
    }
    Some(end)
}

/// What the split pattern sees in one ASCII byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    End,
    Upper,
    Lower,
    Digit,
    Newline,
    Space,
    Other,
    /// Part of a character beyond ASCII: the hand-written cut gives up.
    Wide,
}

fn class(b: &[u8], i: usize) -> Class {
    match b.get(i) {
        None => Class::End,
        Some(b'A'..=b'Z') => Class::Upper,
        Some(b'a'..=b'z') => Class::Lower,
        Some(b'0'..=b'9') => Class::Digit,
        Some(b'\r' | b'\n') => Class::Newline,
        Some(b' ' | b'\t' | 0x0b | 0x0c) => Class::Space,
        Some(0x80..) => Class::Wide,
        Some(_) => Class::Other,
    }
}

/// The end of the piece starting at `p`, decided the way the pattern's
/// alternatives would decide it, in their order; `None` when that needs a
/// character beyond ASCII (or `p` is the end).
fn ascii_piece(b: &[u8], p: usize) -> Option<usize> {
    use Class::*;
    let first = class(b, p);
    if matches!(first, End | Wide) {
        return None;
    }
    // Letters, after at most one character that is no letter, digit or
    // newline: `[^\r\n\p{L}\p{N}]?` then upper and lower case runs.
    let q = if matches!(first, Space | Other) {
        p + 1
    } else {
        p
    };
    let mut i = q;
    while class(b, i) == Upper {
        i += 1;
    }
    while class(b, i) == Lower {
        i += 1;
    }
    if class(b, i) == Wide {
        return None;
    }
    if i > q {
        return contraction(b, i);
    }
    // `\p{N}{1,3}`
    if first == Digit {
        let mut i = p;
        while i < p + 3 && class(b, i) == Digit {
            i += 1;
        }
        return (i == p + 3 || class(b, i) != Wide).then_some(i);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let punct = match (b[p], class(b, p + 1)) {
        (b' ', Other) => Some(p + 1),
        (b' ', Wide) => return None,
        _ if first == Other => Some(p),
        _ => None,
    };
    if let Some(start) = punct {
        let mut i = start;
        while class(b, i) == Other {
            i += 1;
        }
        if class(b, i) == Wide {
            return None;
        }
        while matches!(b.get(i), Some(b'\r' | b'\n' | b'/')) {
            i += 1;
        }
        return Some(i);
    }
    // Whitespace: `\s*[\r\n]+` up to its last newline; else `\s+(?!\S)`,
    // which leaves the last space to the word after it; else `\s+`.
    let mut w = p;
    let mut last_newline = None;
    loop {
        match class(b, w) {
            Space => {}
            Newline => last_newline = Some(w),
            Wide => return None,
            _ => break,
        }
        w += 1;
    }
    if let Some(n) = last_newline {
        return Some(n + 1);
    }
    Some(if w < b.len() && w - p >= 2 { w - 1 } else { w })
}

/// `i` past an English contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`,
/// `'d`, any case) if one starts there.
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return Some(i);
    }
    let lower = |k: usize| match class(b, k) {
        Class::Wide => None,
        _ => Some(b.get(k).map(u8::to_ascii_lowercase)),
    };
    Some(match (lower(i + 1)?, lower(i + 2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => i + 2,
        (Some(b'r' | b'v'), Some(Some(b'e'))) | (Some(b'l'), Some(Some(b'l'))) => i + 3,
        (Some(b'r' | b'v' | b'l'), None) => return None,
        _ => i,
    })
}

/// A little-endian `u32` at index `i` of `table`.
fn u32_at(table: &[u8], i: usize) -> u32 {
    let b = &table[4 * i..4 * i + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The bytes of the token of rank `rank`.
fn token(rank: u32) -> &'static [u8] {
    let i = rank as usize;
    &TOKENS[u32_at(OFFSETS, i) as usize..u32_at(OFFSETS, i + 1) as usize]
}

/// The rank of `bytes` if they are one token.
fn rank(bytes: &[u8]) -> Option<u32> {
    let mask = (1usize << vocab_hash::TABLE_BITS) - 1;
    let mut slot = vocab_hash::slot(bytes);
    loop {
        let entry = u32_at(TABLE, slot);
        if entry == 0 {
            return None;
        }
        if token(entry - 1) == bytes {
            return Some(entry - 1);
        }
        slot = (slot + 1) & mask;
    }
}

/// A piece longer than this (no word is: a server's one-line blob can be)
/// is counted in chunks of this size, each merged on its own. The merge
/// holds some 50 bytes per byte of its piece, so a 16 MiB run of letters
/// would take most of a GiB; in chunks it takes a few MiB, and the count
/// may be off by a token or so per chunk.
const LONG_PIECE: usize = 64 * 1024;

/// Pieces up to this long merge in place, without a heap.
const SHORT: usize = 24;

/// [`count_piece`] for a short piece: tiktoken's loop, on the stack. Part
/// `k` starts at `starts[k]`; `ranks[k]` is the rank of part `k` joined
/// with part `k + 1`.
fn count_short(piece: &[u8]) -> usize {
    let n = piece.len();
    let mut starts = [0usize; SHORT + 1];
    let mut ranks = [u32::MAX; SHORT + 1];
    for (k, start) in starts.iter_mut().enumerate().take(n + 1) {
        *start = k;
    }
    for k in 0..n - 1 {
        ranks[k] = rank(&piece[k..k + 2]).unwrap_or(u32::MAX);
    }
    // Parts, plus the end marker.
    let mut m = n + 1;
    loop {
        let (k, best) = ranks[..m - 1]
            .iter()
            .enumerate()
            .fold(
                (0, u32::MAX),
                |acc, (k, &r)| if r < acc.1 { (k, r) } else { acc },
            );
        if best == u32::MAX {
            return m - 1;
        }
        starts.copy_within(k + 2..m, k + 1);
        ranks.copy_within(k + 2..m, k + 1);
        m -= 1;
        ranks[k] = match starts.get(k + 2) {
            Some(&end) if k + 2 < m => rank(&piece[starts[k]..end]).unwrap_or(u32::MAX),
            _ => u32::MAX,
        };
        if k > 0 {
            ranks[k - 1] = rank(&piece[starts[k - 1]..starts[k + 1]]).unwrap_or(u32::MAX);
        }
    }
}

/// Tokens of one piece: merge the adjacent pair of lowest rank (the
/// leftmost among equals) until no pair is a token. Parts are a linked list
/// by start offset and candidate pairs a heap, so a long piece (a base64
/// blob) costs `n log n`, not `n²`.
fn count_piece(piece: &[u8]) -> usize {
    let n = piece.len();
    if n <= 1 || rank(piece).is_some() {
        return n.min(1);
    }
    if n <= SHORT {
        return count_short(piece);
    }
    // `next[i]` is where the part starting at `i` ends; `prev[i]` where the
    // part before it starts.
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.saturating_sub(1)).collect();
    let mut heap = BinaryHeap::new();
    for i in 0..n - 1 {
        if let Some(r) = rank(&piece[i..i + 2]) {
            heap.push(Reverse((r, i, i + 2)));
        }
    }
    let mut parts = n;
    while let Some(Reverse((_, i, end))) = heap.pop() {
        // Stale unless the pair still spans exactly `i..end`.
        let j = next[i];
        if j >= n || next[j] != end || prev[j] != i {
            continue;
        }
        next[i] = end;
        prev[j] = usize::MAX;
        if end < n {
            prev[end] = i;
        }
        parts -= 1;
        if end < n
            && let Some(r) = rank(&piece[i..next[end]])
        {
            heap.push(Reverse((r, i, next[end])));
        }
        if i > 0 {
            let p = prev[i];
            if let Some(r) = rank(&piece[p..end]) {
                heap.push(Reverse((r, p, end)));
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert_eq!(count_value(&Value::Null), 0);
        assert_eq!(count_value(&json!("hello world")), 2);
        let long = "word ".repeat(1000);
        let n = count(&long);
        assert!((900..=1100).contains(&n), "{n}");
        assert!(count_value(&json!({"a": [1, 2, 3]})) > 3);
    }

    #[test]
    fn every_token_is_found_by_its_bytes() {
        let total = OFFSETS.len() / 4 - 1;
        assert!(total > 199_000, "{total}");
        for r in (0..total as u32).step_by(7) {
            assert_eq!(rank(token(r)), Some(r));
        }
        assert_eq!(rank(b"\xff\xfe\xfd\xfc not a token"), None);
    }

    #[test]
    fn a_piece_longer_than_a_chunk_is_counted_in_chunks() {
        let blob = "x".repeat(3 * LONG_PIECE + 5);
        let chunked = 3 * count("x".repeat(LONG_PIECE).as_str()) + count("xxxxx");
        assert_eq!(count(&blob), chunked);
    }

    #[test]
    fn whitespace_before_a_word_goes_with_the_word() {
        let split: Vec<&str> = pieces("a   b\n  c  ").collect();
        assert_eq!(split, ["a", "  ", " b", "\n", " ", " c", "  "]);
    }
}
