//! Copying text out of the workbench (`apply`: what `y` and `Y` copy from
//! the focused pane): the OSC 52 sequence that puts it on
//! the terminal's clipboard, and the texts a yank copies (a JSON path, a
//! `pipewright tools call` line quoted for a POSIX shell).
//!
//! OSC 52 is written to the terminal by the event loop, so it works over
//! SSH and inside tmux (with `set-clipboard on`) without a clipboard crate;
//! a terminal that ignores it copies nothing, which the status line cannot
//! know.

use crate::inspector::json_tree::Seg;
use pipewright_engine::mcp::auth::encode::base64;

mod apply;

/// `ESC ] 52 ; c ; BASE64 BEL`: the terminal puts `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes(), false))
}

/// A jq-style path to a value: `.users[0].name`, `.["odd key"]`; `.` for
/// the root. Groups of a big container are not steps and are left out.
pub fn json_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if is_ident(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => {
                let quoted = serde_json::to_string(k).unwrap_or_default();
                out.push_str(&format!(".[{quoted}]"));
            }
            Seg::Index(i) => {
                if out.is_empty() {
                    out.push('.');
                }
                out.push_str(&format!("[{i}]"));
            }
            Seg::Bucket(..) => {}
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

fn is_ident(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `s` as one word of a POSIX shell: bare when it is only safe
/// characters, else in single quotes (a `'` inside becomes `'\''`).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c));
    if safe {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The command line that makes the same call again:
/// `pipewright tools call TOOL --file FILE [--on SERVER] --args 'JSON'`.
pub fn tools_call_line(tool: &str, file: &str, server: Option<&str>, args_json: &str) -> String {
    let mut words = vec![
        "pipewright".to_owned(),
        "tools".into(),
        "call".into(),
        shell_quote(tool),
        "--file".into(),
        shell_quote(file),
    ];
    if let Some(s) = server {
        words.push("--on".into());
        words.push(shell_quote(s));
    }
    words.push("--args".into());
    words.push(shell_quote(args_json));
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_is_the_base64_of_the_text_between_esc_52_and_bel() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }

    #[test]
    fn paths_read_like_jq() {
        let p = [
            Seg::Key("users".into()),
            Seg::Bucket(0, 100),
            Seg::Index(0),
            Seg::Key("first name".into()),
        ];
        assert_eq!(json_path(&p), r#".users[0].["first name"]"#);
        assert_eq!(json_path(&[]), ".");
        assert_eq!(json_path(&[Seg::Index(2)]), ".[2]");
    }

    #[test]
    fn shell_words_survive_quotes() {
        assert_eq!(shell_quote("search_users"), "search_users");
        assert_eq!(shell_quote(r#"{"q":"it's"}"#), r#"'{"q":"it'\''s"}'"#);
        assert_eq!(
            tools_call_line("get", "a b.yml", Some("demo"), "{}"),
            "pipewright tools call get --file 'a b.yml' --on demo --args '{}'"
        );
    }
}
