//! The fleet's `requestState` keys, read once at start from
//! `--state-key-file PATH` or the environment variable `--state-key-env
//! NAME` names: one key per line (or separated by spaces or commas), each
//! 64 or more hex digits (32 bytes or more, e.g. `openssl rand -hex 32`),
//! `#` starting a comment. The first key seals, every key opens, so a
//! fleet rotates by putting a new key first and dropping the old one once
//! the states it sealed have expired. Keys are never printed: an error
//! names the line, never its text.

use std::path::Path;

use super::seal::{MIN_KEY_BYTES, Sealer};
use pipewright_engine::environment::Environment;

/// Where the keys come from, as the command line says.
pub struct Source<'a> {
    pub file: Option<&'a Path>,
    pub env: Option<&'a str>,
}

/// The sealer of the fleet's keys (`None`: neither flag was given, a
/// random key of this process seals), and warnings to print; or why the
/// keys cannot be used.
pub fn load(from: &Source<'_>, env: &Environment) -> Result<(Option<Sealer>, Vec<String>), String> {
    let mut warnings = Vec::new();
    let (text, what) = match (from.file, from.env) {
        (Some(_), Some(_)) => {
            return Err("--state-key-file and --state-key-env do not go together: give one".into());
        }
        (Some(path), None) => {
            let what = format!("--state-key-file {}", path.display());
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("{what}: cannot be read ({e})"))?;
            if let Some(w) = readable_by_others(path) {
                warnings.push(format!("{what}: {w}"));
            }
            (text, what)
        }
        (None, Some(name)) => {
            let what = format!("--state-key-env {name}");
            let text = env.var(name).unwrap_or_default().to_owned();
            if text.trim().is_empty() {
                return Err(format!(
                    "{what}: the environment variable `{name}` is not set (or empty)"
                ));
            }
            (text, what)
        }
        (None, None) => return Ok((None, warnings)),
    };
    let keys = parse(&text).map_err(|e| format!("{what}: {e}"))?;
    let sealer = Sealer::with_keys(keys).ok_or_else(|| format!("{what}: holds no key"))?;
    Ok((Some(sealer), warnings))
}

/// The keys in `text`, in order; an error names the line (1-based) of
/// the first bad one, never its text.
pub fn parse(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default();
        for word in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
        {
            let Ok(key) = hex::decode(word) else {
                return Err(format!(
                    "line {}: not a key: a key is 64 or more hex digits (e.g. from `openssl rand -hex 32`)",
                    n + 1
                ));
            };
            if key.len() < MIN_KEY_BYTES {
                return Err(format!(
                    "line {}: the key has {} byte(s); at least {MIN_KEY_BYTES} are needed (64 hex digits, e.g. from `openssl rand -hex 32`)",
                    n + 1,
                    key.len()
                ));
            }
            keys.push(key);
        }
    }
    if keys.is_empty() {
        return Err(
            "holds no key (one per line: 64 or more hex digits, e.g. from `openssl rand -hex 32`)"
                .into(),
        );
    }
    Ok(keys)
}

/// Why the key file's mode is too open, when others than its owner may
/// read it.
#[cfg(unix)]
fn readable_by_others(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o044 != 0).then(|| {
        format!(
            "can be read by users other than its owner (mode {mode:03o}): anyone who reads the key can answer any agent's question; `chmod 600` it"
        )
    })
}

#[cfg(not(unix))]
fn readable_by_others(_: &Path) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn keys_are_read_one_per_line_with_comments_and_refused_by_line() {
        let text = format!("# new key first\n{A}  # current\n\n{}\n", A.to_uppercase());
        assert_eq!(parse(&text).map(|k| k.len()), Ok(2));
        assert_eq!(parse(&format!("{A},{A} {A}")).map(|k| k.len()), Ok(3));
        let e = parse(&format!("{A}\nnot-hex-secret")).unwrap_err();
        assert!(e.starts_with("line 2: not a key"), "{e}");
        assert!(!e.contains("secret"), "the text is never shown: {e}");
        let e = parse(&format!("# c\n{}", &A[..40])).unwrap_err();
        assert!(
            e.starts_with("line 2: the key has 20 byte(s); at least 32"),
            "{e}"
        );
        assert!(
            parse("# only a comment\n")
                .unwrap_err()
                .contains("holds no key")
        );
    }

    #[test]
    fn keys_come_from_a_file_or_a_variable_never_both() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("key");
        std::fs::write(&path, format!("{A}\n")).expect("write");
        let env = Environment::with_vars([("KEYS", A), ("EMPTY", " ")]);
        let file = Source {
            file: Some(&path),
            env: None,
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
            let (sealer, warnings) = load(&file, &env).expect("loaded");
            assert!(sealer.is_some());
            assert!(warnings[0].contains("mode 644"), "{warnings:?}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
        let (sealer, warnings) = load(&file, &env).expect("loaded");
        assert!(sealer.is_some() && warnings.is_empty(), "{warnings:?}");
        let var = |name| Source {
            file: None,
            env: Some(name),
        };
        assert!(load(&var("KEYS"), &env).expect("loaded").0.is_some());
        for name in ["EMPTY", "NOPE"] {
            let e = load(&var(name), &env).expect_err("refused");
            assert!(e.contains("is not set (or empty)"), "{e}");
        }
        let both = Source {
            file: Some(&path),
            env: Some("KEYS"),
        };
        assert!(load(&both, &env).is_err());
        let none = Source {
            file: None,
            env: None,
        };
        assert!(load(&none, &env).expect("none").0.is_none());
        let e = load(
            &Source {
                file: Some(&dir.path().join("missing")),
                env: None,
            },
            &env,
        )
        .expect_err("missing");
        assert!(e.contains("cannot be read"), "{e}");
    }
}
