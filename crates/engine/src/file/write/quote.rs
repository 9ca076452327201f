//! How a string is written in a pipeline file: bare where YAML reads it
//! back as the same string, double-quoted elsewhere; the rules every writer
//! of `file::write` shares.

use serde_json::Value;

/// A string as a YAML double-quoted scalar (JSON string syntax is valid
/// YAML).
pub fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A string as a key or value: bare when YAML reads it back as the same
/// string ([`plain`]), double-quoted otherwise.
pub fn text(s: &str) -> String {
    if plain(s) { s.to_owned() } else { quoted(s) }
}

/// A name (a composition, a server, a tool, an argument): bare when it is
/// an identifier (letters, digits, `_` and `-`, not a word YAML reads as
/// something else), double-quoted otherwise.
pub fn name(s: &str) -> String {
    let bare = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if bare { s.to_owned() } else { quoted(s) }
}

/// Whether `s` written bare reads back as the same string: letters,
/// digits and a few marks, not a word YAML reads as something else, not
/// number-like, no `: `, ` #`, `${` or edge spaces.
fn plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let ok_chars = s
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '/' | '@' | '+' | ','));
    let special = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ]
    .contains(&s.to_ascii_lowercase().as_str());
    let numeric = s.parse::<f64>().is_ok()
        || s.starts_with("0x")
        || s.starts_with("0o")
        || s.to_ascii_lowercase()
            .trim_start_matches(['+', '-'])
            .starts_with(".inf")
        || s.eq_ignore_ascii_case(".nan");
    ok_chars
        && !special
        && !numeric
        && (first.is_alphanumeric() || first == '_' || first == '/' || first == '.')
        && !s.ends_with(' ')
        && !s.contains(" #")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_texts_are_bare_only_where_they_read_back_the_same() {
        assert_eq!(name("get_user-2"), "get_user-2");
        assert_eq!(name("yes"), "\"yes\"");
        assert_eq!(name("a.b"), "\"a.b\"");
        assert_eq!(text("a.b"), "a.b");
        assert_eq!(text("007"), "\"007\"");
        assert_eq!(text("a: b"), "\"a: b\"");
        assert_eq!(quoted("say \"hi\""), "\"say \\\"hi\\\"\"");
    }
}
