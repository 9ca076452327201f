//! JSON text read without building a tree: checking it (grammar by
//! serde_json, nesting here, iteratively), making it compact, finding the
//! `id` of a message too broken to parse, and quoting what arrived.

use std::fmt;

use serde::de::IgnoredAny;

/// How deeply a value may nest (`[]` is one level). serde_json builds trees
/// recursively and stops at 128; a value pipewright keeps can always be
/// parsed into one.
pub const MAX_DEPTH: usize = 127;

/// Why text is not a JSON value pipewright keeps, and the byte it failed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// What is wrong, e.g. `expected value` or `nested more than 127 levels deep`.
    pub what: String,
    /// Byte offset (from 0) into the text where it went wrong.
    pub at: usize,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

impl std::error::Error for Invalid {}

/// Checks that `text` is one JSON value nested at most [`MAX_DEPTH`] deep,
/// and returns it compact: as it is when it has no whitespace between
/// tokens (no copy), else with that whitespace removed.
pub fn compact(text: String) -> Result<String, Invalid> {
    let shape = shape(text.as_bytes())?;
    if let Err(e) = serde_json::from_str::<IgnoredAny>(&text) {
        return Err(from_serde(&text, &e));
    }
    if !shape.spaced {
        return Ok(text);
    }
    Ok(strip_spaces(&text))
}

/// Checks a slice serde_json has already read as one value (a `RawValue`:
/// its grammar is known good) the same way, without copying it when it is
/// compact: only the nesting, the numbers and the spaces are looked at, in
/// one pass; `None` when it may be kept as it is, `Some` with its compact
/// form.
pub fn check_read(text: &str) -> Result<Option<String>, Invalid> {
    let shape = shape(text.as_bytes())?;
    Ok(shape.spaced.then(|| strip_spaces(text)))
}

/// A serde_json error as a byte offset into `text`.
pub fn from_serde(text: &str, e: &serde_json::Error) -> Invalid {
    let what = e.to_string();
    // serde_json says "… at line L column C"; keep the sentence, move the
    // position to a byte offset.
    let what = what
        .rsplit_once(" at line ")
        .map_or(what.clone(), |(head, _)| head.to_owned());
    Invalid {
        what,
        at: offset_of(text, e.line(), e.column()),
    }
}

/// The byte offset of 1-based `line` and `column` (serde_json counts
/// columns in bytes).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

struct Shape {
    /// Whitespace between tokens.
    spaced: bool,
}

/// Walks the bytes once, keeping only whether it is inside a string and how
/// deep it is: refuses nesting past [`MAX_DEPTH`], notes whitespace.
fn shape(bytes: &[u8]) -> Result<Shape, Invalid> {
    let mut depth = 0usize;
    let mut spaced = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Invalid {
                        what: format!("the value is nested more than {MAX_DEPTH} levels deep"),
                        at: i,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b' ' | b'\t' | b'\n' | b'\r' => spaced = true,
            b'-' | b'0'..=b'9' => {
                let len = bytes[i..]
                    .iter()
                    .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .unwrap_or(bytes.len() - i);
                if !finite(&bytes[i..i + len]) {
                    return Err(Invalid {
                        what: "a number too large for a 64-bit float".to_owned(),
                        at: i,
                    });
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(Shape { spaced })
}

/// True when the number token `n` reads as a finite 64-bit float (what a
/// tree can hold): short plain numbers always do.
fn finite(n: &[u8]) -> bool {
    if n.len() <= 15 && !n.iter().any(|b| matches!(b, b'e' | b'E')) {
        return true;
    }
    std::str::from_utf8(n)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .is_none_or(f64::is_finite)
}

/// The index of the quote that ends the string opening at `start` (or the
/// last byte, for a string that never ends).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    bytes.len().saturating_sub(1)
}

/// `text` (valid JSON) without whitespace between tokens.
fn strip_spaces(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut run = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                i = end;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.push_str(&text[run..i]);
                run = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[run..]);
    out
}

/// The `id` of a JSON-RPC message that cannot be parsed: the value of the
/// first `"id"` key of the outer object, read past whatever is broken
/// elsewhere (invalid UTF-8, `NaN`, a cut-off end, any depth). A number or
/// a string; `None` when there is none to be found.
pub fn find_id(bytes: &[u8]) -> Option<serde_json::Value> {
    top_members(bytes)
        .filter(|(name, _)| *name == b"\"id\"")
        .find_map(|(_, value)| id_value(value))
}

/// True when the outer object of a message that cannot be parsed has a
/// member `name` (e.g. `method`: it is a request or a notification).
pub fn has_member(bytes: &[u8], name: &str) -> bool {
    top_members(bytes)
        .any(|(key, _)| key.len() == name.len() + 2 && &key[1..key.len() - 1] == name.as_bytes())
}

/// The members of the outer object, as (quoted name, the bytes from its
/// value on), found by walking the bytes without parsing them.
fn top_members(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut depth = 0usize;
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    let start = i;
                    let end = string_end(bytes, i);
                    i = end + 1;
                    if depth != 1 {
                        continue;
                    }
                    let mut j = i;
                    while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if bytes.get(j) == Some(&b':') {
                        return Some((&bytes[start..=end.min(bytes.len() - 1)], &bytes[j + 1..]));
                    }
                    continue;
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        None
    })
}

/// A number or string at the start of `bytes` (after whitespace).
fn id_value(bytes: &[u8]) -> Option<serde_json::Value> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = &bytes[start..];
    let len = match rest.first()? {
        b'"' => string_end(rest, 0) + 1,
        b'-' | b'0'..=b'9' => rest
            .iter()
            .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            .unwrap_or(rest.len()),
        _ => return None,
    };
    let text = std::str::from_utf8(rest.get(..len)?).ok()?;
    match serde_json::from_str::<serde_json::Value>(text).ok()? {
        v @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => Some(v),
        _ => None,
    }
}

/// True when `literal`, a JSON string literal (quotes included, as it
/// sits in checked text), spells exactly `target`: compared escape by
/// escape, without unescaping it into a copy.
pub fn string_equals(literal: &str, target: &str) -> bool {
    let Some(inner) = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else {
        return false;
    };
    let (mut a, mut t) = (inner.as_bytes(), target.as_bytes());
    while !a.is_empty() {
        if a[0] != b'\\' {
            let plain = a.iter().position(|b| *b == b'\\').unwrap_or(a.len());
            if t.len() < plain || a[..plain] != t[..plain] {
                return false;
            }
            (a, t) = (&a[plain..], &t[plain..]);
            continue;
        }
        let (c, used) = match a.get(1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'/') => ('/', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'u') => match unicode_escape(a) {
                Some(decoded) => decoded,
                None => return false,
            },
            _ => return false,
        };
        let mut buf = [0u8; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        if !t.starts_with(bytes) {
            return false;
        }
        (a, t) = (&a[used..], &t[bytes.len()..]);
    }
    t.is_empty()
}

/// The character of a `\uXXXX` escape (a surrogate pair takes two) at the
/// start of `a`, and how many bytes it took.
fn unicode_escape(a: &[u8]) -> Option<(char, usize)> {
    let hex = |at: usize| -> Option<u32> {
        let digits = std::str::from_utf8(a.get(at..at + 4)?).ok()?;
        u32::from_str_radix(digits, 16).ok()
    };
    let first = hex(2)?;
    if (0xD800..0xDC00).contains(&first) {
        if a.get(6..8)? != b"\\u" {
            return None;
        }
        let second = hex(8)?;
        let c = 0x10000 + ((first - 0xD800) << 10) + (second.checked_sub(0xDC00)?);
        return Some((char::from_u32(c)?, 12));
    }
    Some((char::from_u32(first)?, 6))
}

/// What arrived, fit to be shown and kept: at most `max` bytes around
/// `at`, printable ASCII and valid UTF-8 kept, everything else (control
/// characters, invalid bytes) as `\xNN`; `…` where text was left out.
pub fn quote(bytes: &[u8], at: usize, max: usize) -> String {
    let start = at.saturating_sub(max / 2).min(bytes.len());
    let end = start.saturating_add(max).min(bytes.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut rest = &bytes[start..end];
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_visible(&mut out, text);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                push_visible(&mut out, std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                for b in &bad[..n] {
                    out.push_str(&format!("\\x{b:02x}"));
                }
                rest = &bad[n..];
            }
        }
    }
    if end < bytes.len() {
        out.push('…');
    }
    out
}

fn push_visible(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compact_text_is_kept_and_spaced_text_stripped() {
        let text = r#"{"a":[1,2],"s":"x y"}"#.to_owned();
        let ptr = text.as_ptr();
        let out = compact(text).unwrap();
        assert_eq!(out.as_ptr(), ptr, "no copy of compact text");
        assert_eq!(
            compact("{ \"a\" : [1, 2],\n \"s\": \"x  y\\\" z\" }".to_owned()).unwrap(),
            r#"{"a":[1,2],"s":"x  y\" z"}"#
        );
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let parsed: serde_json::Value = serde_json::from_str(&compact(ok).unwrap()).unwrap();
        assert!(parsed.is_array());
        let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
        let e = compact(deep).unwrap_err();
        assert_eq!(e.at, MAX_DEPTH);
        assert!(e.what.contains("nested more than 127 levels"), "{e}");
        // Brackets inside strings do not count.
        let text = format!("[\"{}\"]", "[".repeat(500));
        assert!(compact(text).is_ok());
    }

    #[test]
    fn numbers_a_tree_cannot_hold_are_refused() {
        for text in ["1e999", "[-1e400]", &"9".repeat(400)] {
            let e = compact(text.to_owned()).unwrap_err();
            assert!(e.what.contains("too large"), "{text}: {e}");
        }
        for text in [
            "99999999999999999999",
            "1e308",
            "-0",
            "0.5e-300",
            "[1,2.5,-3e10]",
        ] {
            let kept = compact(text.to_owned()).unwrap();
            assert!(
                serde_json::from_str::<serde_json::Value>(&kept).is_ok(),
                "{text}"
            );
        }
    }

    #[test]
    fn broken_text_names_the_byte() {
        let e = compact(r#"{"score": NaN}"#.to_owned()).unwrap_err();
        assert_eq!(e.at, 10, "{e}");
        assert!(e.what.contains("expected value"), "{e}");
        let e = compact("[1,2".to_owned()).unwrap_err();
        assert!(e.what.contains("EOF"), "{e}");
    }

    #[test]
    fn the_id_of_a_broken_message_is_found() {
        let cases: [(&[u8], Option<serde_json::Value>); 6] = [
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":NaN}}",
                Some(json!(7)),
            ),
            (
                b"{\"result\":{\"text\":\"\xff\xfe\",\"id\":9},\"id\":\"a-1\"}",
                Some(json!("a-1")),
            ),
            (b"{\"jsonrpc\":\"2.0\",\"id\": 12 , \"res", Some(json!(12))),
            (b"{\"params\":{\"id\":3}}", None),
            (b"[[[[[[", None),
            (b"not json", None),
        ];
        for (bytes, want) in cases {
            assert_eq!(find_id(bytes), want, "{}", String::from_utf8_lossy(bytes));
        }
        assert!(has_member(
            b"{\"id\":1,\"method\":\"x\",\"params\":{\"a\":\xff}}",
            "method"
        ));
        assert!(!has_member(
            b"{\"id\":1,\"result\":{\"method\":1}}",
            "method"
        ));
    }

    #[test]
    fn a_literal_is_compared_escape_by_escape() {
        for target in [
            "",
            "plain",
            "a \"q\" \\ /",
            "tab\tnew\nline",
            "é 😀 \u{1}",
            r#"{"k":[1,"x"]}"#,
        ] {
            let literal = serde_json::to_string(target).unwrap();
            assert!(string_equals(&literal, target), "{literal}");
            assert!(!string_equals(&literal, &format!("{target}!")), "{literal}");
        }
        assert!(string_equals(r#""\u00e9\ud83d\ude00\/""#, "é😀/"));
        assert!(!string_equals(r#""ab""#, "a"));
        assert!(!string_equals("nope", "nope"));
    }

    #[test]
    fn quotes_escape_what_a_terminal_would_act_on() {
        let q = quote(b"ab\x1b[2J\xffcd\xc2\x9b", 0, 100);
        assert_eq!(q, "ab\\x1b[2J\\xffcd\\xc2\\x9b");
        let long = vec![b'x'; 1000];
        let q = quote(&long, 500, 10);
        assert_eq!(q, format!("…{}…", "x".repeat(10)));
    }
}
