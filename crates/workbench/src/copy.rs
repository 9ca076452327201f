//! Copying text out of the workbench (what `y` and `Y` copy is the app's,
//! `app/yank.rs`): the OSC 52 sequence that puts it on the terminal's
//! clipboard, and the `pipewright tools call` line a yank copies, quoted
//! for a POSIX shell.
//!
//! OSC 52 is written to the terminal by the event loop, so it works over
//! SSH and inside tmux (with `set-clipboard on`) without a clipboard crate;
//! a terminal that ignores it copies nothing, which the status line cannot
//! know.

use pipewright_engine::mcp::auth::encode::base64;

/// `ESC ] 52 ; c ; BASE64 BEL`: the terminal puts `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes(), false))
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
    fn shell_words_survive_quotes() {
        assert_eq!(shell_quote("search_users"), "search_users");
        assert_eq!(shell_quote(r#"{"q":"it's"}"#), r#"'{"q":"it'\''s"}'"#);
        assert_eq!(
            tools_call_line("get", "a b.yml", Some("demo"), "{}"),
            "pipewright tools call get --file 'a b.yml' --on demo --args '{}'"
        );
    }
}
