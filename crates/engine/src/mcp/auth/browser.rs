//! Opening the authorization URL: the command in `$BROWSER` when set (the
//! Unix convention: a `:`-separated list of commands, tried in order, each
//! given the URL as its last argument or in place of `%s`), else the
//! system's opener (`xdg-open`, `open`, `start`).

use std::process::Stdio;

use tokio::process::{Child, Command};

/// The command lines that could open `url`, best first.
pub(crate) fn candidates(browser_env: Option<&str>, url: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for entry in browser_env.unwrap_or_default().split(':') {
        let words = split_words(entry.trim());
        if words.is_empty() {
            continue;
        }
        let placeholder = words.iter().any(|w| w.contains("%s"));
        let mut line: Vec<String> = words.iter().map(|w| w.replace("%s", url)).collect();
        if !placeholder {
            line.push(url.to_owned());
        }
        out.push(line);
    }
    if out.is_empty() {
        let system: &[&str] = if cfg!(target_os = "macos") {
            &["open"]
        } else if cfg!(windows) {
            // Not `cmd /c start`: cmd would read each `&` of the URL as a
            // command separator.
            &["rundll32", "url.dll,FileProtocolHandler"]
        } else {
            &["xdg-open"]
        };
        let mut line: Vec<String> = system.iter().map(|s| (*s).to_owned()).collect();
        line.push(url.to_owned());
        out.push(line);
    }
    out
}

/// A command line's words, split on whitespace, honouring single and
/// double quotes (no other shell syntax: nothing runs through a shell).
fn split_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Starts the first opener of [`candidates`] (`browser_env`: `$BROWSER` as
/// the driver's environment gives it) that can be started; `None` when
/// none can. Its output goes nowhere: a browser's chatter must not reach
/// the terminal or the workbench.
pub(crate) fn spawn(url: &str, browser_env: Option<&str>) -> Option<Child> {
    candidates(browser_env, url).into_iter().find_map(|line| {
        let (program, args) = line.split_first()?;
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(false)
            .spawn()
            .ok()
    })
}

/// Resolves when `child` exits unsuccessfully (the browser could not be
/// opened); never resolves while it runs or after it succeeded.
pub(crate) async fn failure(child: Option<Child>) {
    if let Some(mut child) = child
        && let Ok(status) = child.wait().await
        && status.success()
    {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_stay_whole() {
        assert_eq!(
            split_words(r#"py -c 'import a; b("x y")' "two words""#),
            ["py", "-c", r#"import a; b("x y")"#, "two words"]
        );
        assert!(split_words("   ").is_empty());
    }

    #[test]
    fn browser_commands_take_the_url_last_or_at_the_placeholder() {
        let url = "http://as/authorize?a=1";
        assert_eq!(
            candidates(Some("curl -sL -o /dev/null"), url),
            vec![vec!["curl", "-sL", "-o", "/dev/null", url]]
        );
        assert_eq!(
            candidates(Some("firefox --new-tab %s:lynx"), url),
            vec![vec!["firefox", "--new-tab", url], vec!["lynx", url]]
        );
        let system = candidates(Some(" : "), url);
        assert_eq!(system.len(), 1);
        assert_eq!(system[0].last().map(String::as_str), Some(url));
        assert_eq!(candidates(None, url), system);
    }
}
