//! `pipewright record wrap CONFIG` and `record unwrap CONFIG`: every
//! server of an MCP client's config file (the formats
//! `engine::mcp::client_config` reads: Claude Desktop and Claude Code's
//! `mcpServers`, Cursor, Windsurf, VS Code's `servers`) put behind the
//! recorder, and put back.
//!
//! A stdio entry's command becomes `pipewright record --name NAME --out
//! DIR [--secret-env K…] -- COMMAND ARGS…` (`pipewright` as this binary's
//! absolute path, `K` each key of its `env`); an HTTP entry's URL points at
//! a recorder on a loopback port, whose command `wrap` prints (it must be
//! running). The rest of the file is written back as it was: the same
//! keys in the same order, the same indentation (comments of a JSONC
//! file are the one thing lost, and `unwrap` brings them back). The
//! original is kept byte for byte in `CONFIG.pipewright-backup` before
//! anything is written; `unwrap` writes it back and removes it, unless
//! the config changed since (`--force` restores it all the same). A file
//! that cannot be read as a client config (not JSON or JSONC, no servers'
//! map, an entry with neither a command nor a URL) is left untouched, and
//! a wrapped one is not wrapped again.

use std::path::{Path, PathBuf};

use pipewright_engine::mcp::client_config;
use serde::Serialize;
use serde_json::{Map, Value};

/// What the backup's name adds to the config's.
pub const BACKUP_SUFFIX: &str = ".pipewright-backup";

/// What to wrap a config with.
pub struct Wrap {
    pub config: PathBuf,
    /// Where the sessions go (absolute: the client starts servers from a
    /// folder of its own).
    pub out: PathBuf,
    /// This binary, absolute.
    pub exe: PathBuf,
    /// The port of the first HTTP server's recorder; the next ones count
    /// up from it.
    pub port: u16,
}

/// What `wrap` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Wrapped {
    pub backup: PathBuf,
    pub servers: Vec<Entry>,
    /// The file had comments (JSONC), which the wrapped file lacks.
    pub comments_dropped: bool,
}

/// One server of the config, as `wrap` left it.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// Now started through the recorder.
    Stdio { name: String },
    /// Now pointed at a recorder that `command` starts.
    Http {
        name: String,
        url: String,
        command: Vec<String>,
    },
    /// Left as it was, and why.
    Skipped { name: String, why: String },
}

/// The backup of `config`.
pub fn backup_of(config: &Path) -> PathBuf {
    let mut name = config.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// Puts every server of the config behind the recorder; an error is a
/// sentence, and then the config is untouched.
pub fn wrap(w: &Wrap) -> Result<Wrapped, String> {
    let shown = w.config.display();
    let (bytes, text) = read(&w.config)?;
    let backup = backup_of(&w.config);
    if backup.exists() {
        return Err(format!(
            "`{shown}` is wrapped already (its backup `{}` exists); `pipewright record unwrap {shown}` first",
            backup.display()
        ));
    }
    let bare = client_config::strip_jsonc(&text);
    let mut doc: Value = serde_json::from_str(&bare)
        .map_err(|e| format!("`{shown}` is not valid JSON: {e}; it is left untouched"))?;
    let servers = servers_mut(&mut doc).ok_or_else(|| {
        format!("`{shown}` has no `mcpServers` or `servers` object; it is left untouched")
    })?;
    // Every entry must be one the client can start: a command or a URL
    // (their `${…}` substitutions are the client's to fill in, prompts
    // included, so they are not read here).
    for (name, entry) in servers.iter() {
        let ok = entry.as_object().is_some_and(|o| {
            o.get("command").is_some_and(Value::is_string)
                || o.get("url")
                    .or(o.get("serverUrl"))
                    .is_some_and(Value::is_string)
        });
        if !ok {
            return Err(format!(
                "server `{name}` of `{shown}` has neither a `command` nor a `url`; the file is left untouched"
            ));
        }
    }
    let exe = w.exe.to_string_lossy().into_owned();
    let out = w.out.to_string_lossy().into_owned();
    let mut entries = Vec::new();
    let mut port = w.port;
    for (name, entry) in servers.iter_mut() {
        let Some(obj) = entry.as_object_mut() else {
            continue;
        };
        if is_wrapped(obj) {
            return Err(format!(
                "server `{name}` of `{shown}` already runs behind `pipewright record`; wrapping twice is refused"
            ));
        }
        entries.push(if obj.contains_key("command") {
            wrap_stdio(name, obj, &exe, &out)
        } else {
            let e = wrap_http(name, obj, &exe, &out, port);
            if let Entry::Http { .. } = e {
                port = port.saturating_add(1);
            }
            e
        });
    }
    let mut written = pretty(&doc, indent_of(&text))?;
    if text.ends_with('\n') {
        written.push('\n');
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&backup)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .map_err(|e| {
            format!(
                "cannot write the backup `{}`: {e}; `{shown}` is left untouched",
                backup.display()
            )
        })?;
    if let Err(e) = std::fs::write(&w.config, written) {
        let _ = std::fs::write(&w.config, &bytes);
        let _ = std::fs::remove_file(&backup);
        return Err(format!("cannot write `{shown}`: {e}"));
    }
    Ok(Wrapped {
        backup,
        servers: entries,
        comments_dropped: bare.trim() != text.trim() && has_comments(&text),
    })
}

/// Puts the config back as it was before `wrap`, byte for byte, and
/// removes the backup. Refuses (a sentence) when the config changed since
/// `wrap`, unless `force`.
pub fn unwrap(config: &Path, force: bool) -> Result<PathBuf, String> {
    let shown = config.display();
    let backup = backup_of(config);
    let original = std::fs::read(&backup).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "`{shown}` is not wrapped: there is no backup `{}`",
                backup.display()
            )
        } else {
            format!("cannot read the backup `{}`: {e}", backup.display())
        }
    })?;
    if !force {
        let changed = match (read(config), String::from_utf8(original.clone())) {
            (Ok((_, now)), Ok(before)) => !same_but_wrapping(&now, &before),
            _ => true,
        };
        if changed {
            return Err(format!(
                "`{shown}` changed since `pipewright record wrap`; `--force` restores the backup `{}` anyway, and those changes are lost",
                backup.display()
            ));
        }
    }
    std::fs::write(config, &original).map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    std::fs::remove_file(&backup)
        .map_err(|e| format!("cannot remove the backup `{}`: {e}", backup.display()))?;
    Ok(backup)
}

fn read(path: &Path) -> Result<(Vec<u8>, String), String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| format!("`{shown}` is not UTF-8 text; it is left untouched"))?;
    Ok((bytes, text))
}

/// The servers' map, as `client_config` reads it: `mcpServers`, else
/// `servers`.
fn servers_mut(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    let key = if doc.get("mcpServers").is_some_and(Value::is_object) {
        "mcpServers"
    } else {
        "servers"
    };
    doc.get_mut(key)?.as_object_mut()
}

/// Whether an entry runs behind the recorder already.
fn is_wrapped(obj: &Map<String, Value>) -> bool {
    let by_us = obj
        .get("command")
        .and_then(Value::as_str)
        .and_then(|c| {
            Path::new(c)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .is_some_and(|stem| stem.starts_with("pipewright"));
    let recording = obj
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        == Some("record");
    by_us && recording
}

fn wrap_stdio(name: &str, obj: &mut Map<String, Value>, exe: &str, out: &str) -> Entry {
    let command = obj.get("command").cloned().unwrap_or(Value::Null);
    let args = match obj.get("args") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let mut new_args = vec![
        Value::from("record"),
        Value::from("--name"),
        Value::from(name),
        Value::from("--out"),
        Value::from(out),
    ];
    if let Some(env) = obj.get("env").and_then(Value::as_object) {
        for key in env.keys() {
            new_args.push(Value::from("--secret-env"));
            new_args.push(Value::from(key.as_str()));
        }
    }
    new_args.push(Value::from("--"));
    new_args.push(command);
    new_args.extend(args);
    obj.insert("command".into(), Value::from(exe));
    obj.insert("args".into(), Value::Array(new_args));
    Entry::Stdio {
        name: name.to_owned(),
    }
}

fn wrap_http(name: &str, obj: &mut Map<String, Value>, exe: &str, out: &str, port: u16) -> Entry {
    let skipped = |why: &str| Entry::Skipped {
        name: name.to_owned(),
        why: why.to_owned(),
    };
    if obj.get("type").and_then(Value::as_str) == Some("sse") {
        return skipped("it uses the old HTTP+SSE transport, which the recorder does not speak");
    }
    let key = if obj.contains_key("url") {
        "url"
    } else {
        "serverUrl"
    };
    let Some(to) = obj.get(key).and_then(Value::as_str).map(str::to_owned) else {
        return skipped("it has neither `command` nor a `url`");
    };
    let Ok(parsed) = reqwest::Url::parse(&to) else {
        return skipped("its URL cannot be read (a substitution in it?)");
    };
    let listen = format!("127.0.0.1:{port}");
    let mut path = parsed.path().to_owned();
    if let Some(q) = parsed.query() {
        path.push('?');
        path.push_str(q);
    }
    let url = format!("http://{listen}{path}");
    obj.insert(key.into(), Value::from(url.as_str()));
    Entry::Http {
        name: name.to_owned(),
        url,
        command: [
            exe, "record", "--http", &listen, "--to", &to, "--name", name, "--out", out,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
    }
}

/// The indentation of a JSON text's first indented line (two spaces when
/// there is none).
fn indent_of(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

fn pretty(doc: &Value, indent: String) -> Result<String, String> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    doc.serialize(&mut ser)
        .map_err(|e| format!("cannot write the config: {e}"))?;
    String::from_utf8(out).map_err(|e| format!("cannot write the config: {e}"))
}

fn has_comments(text: &str) -> bool {
    client_config::strip_jsonc(text).len() != text.len()
}

/// Whether `now` is what `wrap` made of `before`: the same document but
/// for the wrapped servers' commands and URLs.
fn same_but_wrapping(now: &str, before: &str) -> bool {
    let parse = |t: &str| serde_json::from_str::<Value>(&client_config::strip_jsonc(t)).ok();
    let (Some(mut now), Some(mut before)) = (parse(now), parse(before)) else {
        return false;
    };
    let (Some(servers), Some(originals)) = (servers_mut(&mut now), servers_mut(&mut before)) else {
        return false;
    };
    for (name, entry) in servers.iter_mut() {
        let (Some(obj), Some(orig)) = (
            entry.as_object_mut(),
            originals.get(name).and_then(Value::as_object),
        ) else {
            continue;
        };
        if is_wrapped(obj) {
            unwrap_stdio(obj, orig);
        } else {
            for key in ["url", "serverUrl"] {
                if let (Some(url), Some(was)) = (obj.get(key), orig.get(key))
                    && url
                        .as_str()
                        .is_some_and(|u| u.starts_with("http://127.0.0.1:"))
                {
                    let _ = url;
                    obj.insert(key.into(), was.clone());
                }
            }
        }
    }
    now == before
}

/// A wrapped stdio entry as it was: the command after `--`, the
/// arguments after it.
fn unwrap_stdio(obj: &mut Map<String, Value>, orig: &Map<String, Value>) {
    let Some(args) = obj.get("args").and_then(Value::as_array).cloned() else {
        return;
    };
    let Some(dash) = args.iter().position(|a| a == "--") else {
        return;
    };
    let mut rest = args[dash + 1..].iter().cloned();
    if let Some(command) = rest.next() {
        obj.insert("command".into(), command);
    }
    let rest: Vec<Value> = rest.collect();
    if rest.is_empty() && !orig.contains_key("args") {
        obj.remove("args");
    } else {
        obj.insert("args".into(), Value::Array(rest));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap_in(dir: &Path, name: &str, text: &str) -> (PathBuf, Result<Wrapped, String>) {
        let config = dir.join(name);
        std::fs::write(&config, text).unwrap();
        let w = Wrap {
            config: config.clone(),
            out: dir.join("recordings"),
            exe: PathBuf::from("/opt/bin/pipewright"),
            port: 7400,
        };
        let r = wrap(&w);
        (config, r)
    }

    const CLAUDE: &str = r#"{
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "demo": {
            "command": "pipewright",
            "args": ["demo-server"],
            "env": {"DEMO_TOKEN": "t0k3n-value"}
        },
        "remote": {
            "url": "https://mcp.example.com/mcp?x=1",
            "headers": {"Authorization": "Bearer abc"}
        },
        "plain": {"command": "my-server"}
    },
    "zLast": true
}
"#;

    #[test]
    fn wrap_keeps_the_rest_and_unwrap_restores_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let (config, wrapped) = wrap_in(dir.path(), "claude_desktop_config.json", CLAUDE);
        let wrapped = wrapped.unwrap();
        assert_eq!(wrapped.servers.len(), 3);
        let text = std::fs::read_to_string(&config).unwrap();
        // Same keys, same order, same indentation.
        let keys: Vec<usize> = [
            "globalShortcut",
            "mcpServers",
            "\"demo\"",
            "\"remote\"",
            "\"plain\"",
            "zLast",
        ]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(text.contains("\n    \"globalShortcut\""), "{text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let demo = &doc["mcpServers"]["demo"];
        assert_eq!(demo["command"], "/opt/bin/pipewright");
        let args: Vec<&str> = demo["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let out = dir.path().join("recordings");
        assert_eq!(
            args,
            [
                "record",
                "--name",
                "demo",
                "--out",
                out.to_str().unwrap(),
                "--secret-env",
                "DEMO_TOKEN",
                "--",
                "pipewright",
                "demo-server"
            ]
        );
        assert_eq!(
            doc["mcpServers"]["remote"]["url"],
            "http://127.0.0.1:7400/mcp?x=1"
        );
        assert_eq!(
            doc["mcpServers"]["remote"]["headers"]["Authorization"],
            "Bearer abc"
        );
        assert!(
            matches!(&wrapped.servers[1], Entry::Http { command, .. } if command.contains(&"https://mcp.example.com/mcp?x=1".to_string()))
        );
        // The wrapped file is still a config pipewright reads.
        client_config::parse(
            &text,
            &config,
            &pipewright_engine::environment::Environment::default(),
        )
        .unwrap();

        // Twice is refused; the file stays as it is.
        let again = wrap(&Wrap {
            config: config.clone(),
            out: out.clone(),
            exe: PathBuf::from("/opt/bin/pipewright"),
            port: 7400,
        });
        assert!(again.unwrap_err().contains("wrapped already"));
        assert_eq!(std::fs::read_to_string(&config).unwrap(), text);

        unwrap(&config, false).unwrap();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), CLAUDE);
        assert!(!backup_of(&config).exists());
    }

    #[test]
    fn a_changed_config_is_restored_only_by_force() {
        let dir = tempfile::tempdir().unwrap();
        let (config, wrapped) = wrap_in(dir.path(), ".mcp.json", CLAUDE);
        wrapped.unwrap();
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, text.replace("Ctrl+Space", "Alt+Space")).unwrap();
        let e = unwrap(&config, false).unwrap_err();
        assert!(e.contains("changed since"), "{e}");
        unwrap(&config, true).unwrap();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), CLAUDE);
    }

    #[test]
    fn jsonc_is_wrapped_and_comes_back_with_its_comments() {
        let dir = tempfile::tempdir().unwrap();
        let vscode = "{\n\t// my servers\n\t\"servers\": {\n\t\t\"demo\": { \"type\": \"stdio\", \"command\": \"pipewright\", \"args\": [\"demo-server\"], },\n\t\t\"old\": { \"type\": \"sse\", \"url\": \"http://localhost:9/sse\" }\n\t}\n}";
        let (config, wrapped) = wrap_in(dir.path(), "mcp.json", vscode);
        let wrapped = wrapped.unwrap();
        assert!(wrapped.comments_dropped);
        assert!(
            matches!(&wrapped.servers[1], Entry::Skipped { why, .. } if why.contains("HTTP+SSE"))
        );
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains("\n\t\"servers\""), "{text}");
        assert!(!text.ends_with('\n'));
        unwrap(&config, false).unwrap();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), vscode);
    }

    #[test]
    fn an_unreadable_config_is_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("broken.json", "{ \"mcpServers\": { \"a\": "),
            ("none.json", "{ \"other\": 1 }"),
            (
                "bad-entry.json",
                "{ \"mcpServers\": { \"a\": { \"args\": [] } } }",
            ),
        ] {
            let (config, r) = wrap_in(dir.path(), name, text);
            let e = r.unwrap_err();
            assert!(e.contains("left untouched"), "{e}");
            assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
            assert!(!backup_of(&config).exists());
        }
        let e = unwrap(&dir.path().join("none.json"), false).unwrap_err();
        assert!(e.contains("not wrapped"), "{e}");
    }
}
