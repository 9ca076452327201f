//! How much a value says on its own, whether an argument's name and a
//! source's path belong together, whether a value looks made by a server,
//! and what an input is called: the judgements ranking rests on.

use serde_json::Value;

use crate::lang::reference::Segment;

/// How unlikely a value is to turn up by coincidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distinct {
    /// Never inferred: a 1-character string, a boolean, `0`, `1`, null.
    None,
    /// 2–3 characters, or a number below 100: inferred only when the names
    /// agree.
    Low,
    /// 4–5 characters, or a number below 1000.
    Mid,
    High,
}

/// How distinctive a string is: by its length in characters.
pub fn distinct_str(s: &str) -> Distinct {
    match s.chars().take(6).count() {
        0 | 1 => Distinct::None,
        2 | 3 => Distinct::Low,
        4 | 5 => Distinct::Mid,
        _ => Distinct::High,
    }
}

/// How distinctive `v` is.
pub fn distinct(v: &Value) -> Distinct {
    match v {
        Value::String(s) => distinct_str(s),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x == 0.0 || x == 1.0 => Distinct::None,
            Some(x) if x.fract() != 0.0 => Distinct::High,
            Some(x) if x.abs() < 100.0 => Distinct::Low,
            Some(x) if x.abs() < 1000.0 => Distinct::Mid,
            Some(_) => Distinct::High,
            None => Distinct::None,
        },
        _ => Distinct::None,
    }
}

/// The words of a name: `userId`, `user_id` and `user-id` all give
/// `[user, id]`.
pub fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The last field name on a path.
pub fn last_field(path: &[Segment]) -> Option<&str> {
    path.iter().rev().find_map(|s| match s {
        Segment::Field(f) => Some(f.as_str()),
        _ => None,
    })
}

/// Whether an argument called `arg` and a source field called `field`
/// name the same thing: equal, one the other's ending (`user_id` and
/// `id`), or sharing a word that is not just `id`.
pub fn affinity(arg: &str, field: &str) -> bool {
    let a = words(arg);
    let f = words(field);
    if a.is_empty() || f.is_empty() {
        return false;
    }
    if a.ends_with(&f) || f.ends_with(&a) {
        return true;
    }
    a.iter().any(|w| w != "id" && f.contains(w))
}

/// Whether a name says it holds an identifier or a token.
pub fn id_named(key: &str) -> bool {
    let w = words(key);
    w.last().is_some_and(|l| {
        matches!(
            l.as_str(),
            "id" | "ids" | "uuid" | "guid" | "token" | "cursor" | "handle" | "key" | "sid" | "ref"
        )
    })
}

/// Whether a name says it holds a count.
pub fn count_named(key: &str) -> bool {
    words(key).iter().any(|w| {
        matches!(
            w.as_str(),
            "count" | "n" | "num" | "number" | "total" | "size" | "length" | "len"
        )
    })
}

/// Whether `v`, under argument `key`, looks made by a server: a UUID, a
/// long hex or base64 string, a prefixed id (`usr_8f2a…`), a timestamp,
/// a number of six or more digits, or an id-named key whose value holds a
/// digit.
pub fn server_made(key: &str, v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.as_u64().is_some_and(|x| x >= 100_000) || n.as_i64().is_some_and(|x| x <= -100_000)
        }
        Value::String(s) => {
            let s = s.as_str();
            if s.chars().any(char::is_whitespace) || s.is_empty() {
                return false;
            }
            uuid(s)
                || hex(s)
                || base64ish(s)
                || prefixed(s)
                || timestamp(s)
                || (s.len() >= 6 && s.bytes().all(|b| b.is_ascii_digit()))
                || (id_named(key) && s.bytes().any(|b| b.is_ascii_digit()) && s.len() <= 128)
        }
        _ => false,
    }
}

fn uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && [8, 4, 4, 4, 12]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn hex(s: &str) -> bool {
    s.len() >= 16
        && s.bytes().all(|b| b.is_ascii_hexdigit())
        && s.bytes().any(|b| b.is_ascii_digit())
}

fn base64ish(s: &str) -> bool {
    s.len() >= 20
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-' | b'.')
        })
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
}

/// `usr_8f2a91`, `msg-000123`, `cus_NffrFeUfNV2Hib`: a short word, `_` or
/// `-`, then letters and digits with at least one digit.
fn prefixed(s: &str) -> bool {
    let Some(at) = s.find(['_', '-']) else {
        return false;
    };
    let (head, tail) = (&s[..at], &s[at + 1..]);
    (2..=8).contains(&head.len())
        && head.bytes().all(|b| b.is_ascii_alphabetic())
        && tail.len() >= 4
        && tail.bytes().all(|b| b.is_ascii_alphanumeric())
        && tail.bytes().any(|b| b.is_ascii_digit())
}

fn timestamp(s: &str) -> bool {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
}

/// An input's name from the argument's key: upper snake case
/// (`userQuery` → `USER_QUERY`), `VALUE` when the key gives none.
pub fn var_name(key: &str) -> String {
    let w = words(key);
    if w.is_empty() {
        return "VALUE".to_owned();
    }
    let mut name = w.join("_").to_uppercase();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case(json!("a"), Distinct::None)]
    #[case(json!(true), Distinct::None)]
    #[case(json!(0), Distinct::None)]
    #[case(json!(1), Distinct::None)]
    #[case(json!("u1"), Distinct::Low)]
    #[case(json!(42), Distinct::Low)]
    #[case(json!("alice"), Distinct::Mid)]
    #[case(json!(250), Distinct::Mid)]
    #[case(json!("alice@example.com"), Distinct::High)]
    #[case(json!(123456), Distinct::High)]
    #[case(json!(0.5), Distinct::High)]
    fn distinctiveness(#[case] v: Value, #[case] want: Distinct) {
        assert_eq!(distinct(&v), want);
    }

    #[rstest]
    #[case("user_id", "id", true)]
    #[case("userId", "user_id", true)]
    #[case("to", "email", false)]
    #[case("recipient_email", "email", true)]
    #[case("user_id", "team_id", false)]
    #[case("query", "name", false)]
    fn names_that_belong_together(#[case] arg: &str, #[case] field: &str, #[case] want: bool) {
        assert_eq!(affinity(arg, field), want, "{arg} ~ {field}");
    }

    #[rstest]
    #[case("x", json!("3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f60"), true)]
    #[case("x", json!("9f86d081884c7d659a2feaa0c55ad015"), true)]
    #[case("x", json!("eyJhbGciOiJIUzI1NiJ9Abc123xyz"), true)]
    #[case("x", json!("usr_8f2a91"), true)]
    #[case("x", json!("msg-000123"), true)]
    #[case("x", json!("2026-11-29T02:00:00Z"), true)]
    #[case("x", json!(1234567), true)]
    #[case("user_id", json!("u2"), true)]
    #[case("query", json!("u2"), false)]
    #[case("query", json!("alice"), false)]
    #[case("name", json!("Alice Anders"), false)]
    #[case("x", json!(42), false)]
    #[case("x", json!("2026-11-29"), false)]
    #[case("x", json!("deadbeef"), false)]
    fn values_that_look_made_by_a_server(#[case] key: &str, #[case] v: Value, #[case] want: bool) {
        assert_eq!(server_made(key, &v), want, "{key}={v}");
    }

    #[rstest]
    #[case("query", "QUERY")]
    #[case("userQuery", "USER_QUERY")]
    #[case("max-results", "MAX_RESULTS")]
    #[case("2fa", "_2FA")]
    #[case("", "VALUE")]
    fn input_names(#[case] key: &str, #[case] want: &str) {
        assert_eq!(var_name(key), want);
    }
}
