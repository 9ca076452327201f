//! Servers declared in other MCP clients' config files: the `mcpServers`
//! map of Claude Desktop, Claude Code (`.mcp.json`, `~/.claude.json`),
//! Cursor and Windsurf, and the `servers` map of VS Code's `mcp.json`.
//!
//! Entries become [`ServerSource`]s whose strings are native templates:
//! `${env:X}` (VS Code) and `${X}` (Claude Code) become `${env.X}`, so the
//! values are read, and masked as secrets, when the run connects;
//! `${X:-default}` takes the default when X is unset in the driver's
//! [`Environment`]; `${workspaceFolder}` and `${userHome}` are filled in
//! here. VS Code `${input:…}` prompts have no terminal equivalent and are
//! reported.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use crate::environment::Environment;
use crate::file::model::{Pipeline, ServerDecl, ServerSource};
use crate::lang::reference::escape_literal;

/// One server found in a client config file.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundServer {
    pub name: String,
    pub source: ServerSource,
}

/// Expands a leading `~` to the home directory (`env`'s).
pub fn expand_home(path: &str, env: &Environment) -> PathBuf {
    let home = || env.dirs().home.clone();
    match (path.strip_prefix("~/").or(path.strip_prefix("~\\")), home()) {
        (Some(rest), Some(h)) => h.join(rest),
        _ if path == "~" => home().unwrap_or_else(|| PathBuf::from(path)),
        _ => PathBuf::from(path),
    }
}

/// The files the usual MCP clients keep their servers in, for this
/// platform: project files in `cwd` first, then the user's (in `env`'s
/// home and config directories).
pub fn default_locations(cwd: &Path, env: &Environment) -> Vec<PathBuf> {
    let mut out = vec![
        cwd.join(".mcp.json"),
        cwd.join(".vscode").join("mcp.json"),
        cwd.join(".cursor").join("mcp.json"),
    ];
    if let (Some(config), Some(home)) = (&env.dirs().config, &env.dirs().home) {
        out.push(config.join("Claude").join("claude_desktop_config.json"));
        out.push(home.join(".claude.json"));
        out.push(home.join(".cursor").join("mcp.json"));
        out.push(config.join("Code").join("User").join("mcp.json"));
        out.push(
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        );
    }
    out
}

/// Reads every server of a config file, in file order.
pub fn read(path: &Path, env: &Environment) -> Result<Vec<FoundServer>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    parse(&text, path, env)
}

/// Parses config text; `path` places `${workspaceFolder}` and messages,
/// `env` answers `${X:-default}` and `${userHome}`.
pub fn parse(text: &str, path: &Path, env: &Environment) -> Result<Vec<FoundServer>, String> {
    let shown = path.display();
    let doc: Value = serde_json::from_str(&strip_jsonc(text))
        .map_err(|e| format!("`{shown}` is not valid JSON: {e}"))?;
    let map = doc
        .get("mcpServers")
        .or_else(|| doc.get("servers"))
        .and_then(Value::as_object)
        .ok_or_else(|| format!("`{shown}` has no `mcpServers` or `servers` object"))?;
    let workspace = workspace_of(path);
    map.iter()
        .map(|(name, entry)| {
            entry_source(entry, &workspace, env)
                .map(|source| FoundServer {
                    name: name.clone(),
                    source,
                })
                .map_err(|e| format!("`{shown}`, server `{name}`: {e}"))
        })
        .collect()
}

/// The entry called `name` in the config file at `from` (`~` expanded).
pub fn lookup(from: &str, name: &str, env: &Environment) -> Result<ServerSource, String> {
    let path = expand_home(from, env);
    let found = read(&path, env)?;
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    found
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.source.clone())
        .ok_or_else(|| {
            format!(
                "`{}` has no server `{name}`; it has: {}",
                path.display(),
                names.join(", ")
            )
        })
}

/// Adds every server of the config file at `path` to the pipeline's
/// `servers:`; servers the file declares itself keep their declaration.
pub fn add_to(pipeline: &mut Pipeline, path: &Path, env: &Environment) -> Result<(), String> {
    for f in read(path, env)? {
        if !pipeline.servers.contains_key(&f.name) {
            pipeline.servers.insert(
                f.name.clone(),
                ServerDecl {
                    name: f.name,
                    source: f.source,
                    span: Default::default(),
                    auth: None,
                    protocol: None,
                },
            );
        }
    }
    Ok(())
}

/// `${workspaceFolder}`: the folder holding `.vscode/` (or `.cursor/`), else
/// the config file's folder.
fn workspace_of(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(".vscode" | ".cursor") => dir.parent().unwrap_or(dir).to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

fn entry_source(
    entry: &Value,
    workspace: &Path,
    env: &Environment,
) -> Result<ServerSource, String> {
    let obj = entry.as_object().ok_or("the entry is not an object")?;
    let s = |v: &Value| -> Result<String, String> {
        match v {
            Value::String(t) => substitute(t, workspace, env),
            other => Ok(other.to_string()),
        }
    };
    let map = |key: &str| -> Result<IndexMap<String, String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(IndexMap::new()),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| Ok((k.clone(), s(v)?))).collect(),
            Some(_) => Err(format!("`{key}` must be an object")),
        }
    };
    if let Some(url) = obj.get("url").or(obj.get("serverUrl")) {
        return Ok(ServerSource::Http {
            url: s(url)?,
            headers: map("headers")?,
        });
    }
    let Some(command) = obj.get("command") else {
        return Err("the entry has neither `command` nor `url`".into());
    };
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().map(s).collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` must be a list".into()),
    };
    Ok(ServerSource::Stdio {
        command: s(command)?,
        args,
        env: map("env")?,
        cwd: obj.get("cwd").map(s).transpose()?,
    })
}

/// Rewrites a config string's `${…}` substitutions into a native template
/// (`env` says which variables are set, and where home is).
pub fn substitute(text: &str, workspace: &Path, env: &Environment) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("${") {
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&escape_literal(&rest[..open]));
        let inner = &rest[open + 2..open + len];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match name {
            "workspaceFolder" | "workspaceRoot" => {
                out.push_str(&escape_literal(&workspace.to_string_lossy()));
            }
            "userHome" => {
                let h = env.dirs().home.clone().unwrap_or_default();
                out.push_str(&escape_literal(&h.to_string_lossy()));
            }
            "pathSeparator" => out.push(std::path::MAIN_SEPARATOR),
            _ if name.starts_with("input:") => {
                return Err(format!(
                    "`${{{name}}}` asks the editor to prompt for a value; set it in the environment and write `${{env:NAME}}` instead"
                ));
            }
            _ => {
                let var = name.strip_prefix("env:").unwrap_or(name);
                if var.is_empty()
                    || !var
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
                {
                    return Err(format!("cannot read the substitution `${{{inner}}}`"));
                }
                match default {
                    Some(d) if env.var_os(var).is_none() => out.push_str(&escape_literal(d)),
                    _ => out.push_str(&format!("${{env.{var}}}")),
                }
            }
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(&escape_literal(rest));
    Ok(out)
}

/// JSON with comments and trailing commas (VS Code's `mcp.json`) as JSON:
/// comments go first, then commas that close nothing.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut bare = Vec::with_capacity(chars.len());
    let mut i = 0;
    let mut in_str = false;
    while i < chars.len() {
        let c = chars[i];
        if in_str {
            bare.push(c);
            if c == '\\' && i + 1 < chars.len() {
                bare.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        } else {
            in_str = c == '"';
            bare.push(c);
        }
        i += 1;
    }
    let mut out = String::with_capacity(bare.len());
    let mut in_str = false;
    let mut escaped = false;
    for (k, &c) in bare.iter().enumerate() {
        if in_str {
            in_str = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_str = true;
        } else if c == ',' {
            let next = bare[k + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_become_env_references_and_literals_stay_literal() {
        let ws = Path::new("/proj");
        assert_eq!(
            substitute("Bearer ${env:TOKEN}", ws, &Environment::default()).as_deref(),
            Ok("Bearer ${env.TOKEN}")
        );
        assert_eq!(
            substitute("${API_KEY}", ws, &Environment::default()).as_deref(),
            Ok("${env.API_KEY}")
        );
        assert_eq!(
            substitute(
                "${PIPEWRIGHT_SURELY_UNSET_VAR:-fallback}",
                ws,
                &Environment::default()
            )
            .as_deref(),
            Ok("fallback")
        );
        assert_eq!(
            substitute("${workspaceFolder}/data", ws, &Environment::default()).as_deref(),
            Ok("/proj/data")
        );
        assert_eq!(
            substitute("no subs $HOME", ws, &Environment::default()).as_deref(),
            Ok("no subs $HOME")
        );
        assert!(
            substitute("${input:token}", ws, &Environment::default())
                .unwrap_err()
                .contains("prompt")
        );
    }

    #[test]
    fn defaults_and_the_home_come_from_the_drivers_environment() {
        let ws = Path::new("/proj");
        let env = Environment::with_vars([("REGION", "eu")]).with_dirs(
            crate::environment::PlatformDirs {
                home: Some("/home/u".into()),
                ..Default::default()
            },
        );
        assert_eq!(
            substitute("${REGION:-us}/${OTHER:-us}", ws, &env).as_deref(),
            Ok("${env.REGION}/us")
        );
        assert_eq!(
            substitute("${userHome}/x", ws, &env).as_deref(),
            Ok("/home/u/x")
        );
        assert_eq!(expand_home("~/a.json", &env), Path::new("/home/u/a.json"));
    }

    #[test]
    fn comments_and_trailing_commas_are_tolerated() {
        let text = "{ // servers\n \"servers\": { \"a\": { \"url\": \"http://x/mcp\", /* c */ }, }, \"note\": \"a // b, }\" }";
        let found = parse(
            text,
            Path::new("/p/.vscode/mcp.json"),
            &Environment::default(),
        )
        .expect("parses");
        assert_eq!(found[0].name, "a");
    }
}
