//! Which servers a run talks to and the live connections to them: the
//! file's `servers:`, overridden by `--server NAME=…` and `--url`, or the
//! built-in demo server when nothing is declared.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::{BoxFuture, join_all};
use indexmap::IndexMap;
use serde_json::Value;

use crate::environment::Environment;
use crate::file::model::{Composition, Pipeline, ServerSource};
use crate::lang::reference;
use crate::lang::snapshot::Snapshot;
use crate::mcp::caller::{CallRequest, Caller};
use crate::mcp::{CallOutcome, ConnectOptions, Connection, McpError, ServerSpec, ToolInfo};
use crate::redact::Redactor;

/// The name the built-in demo server gets when a file declares no server.
pub const DEMO: &str = "demo";

/// A server named on the command line: `NAME=URL` or `NAME=COMMAND ARGS…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerArg {
    pub name: String,
    pub value: String,
}

impl std::str::FromStr for ServerArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
                Ok(ServerArg {
                    name: name.trim().to_owned(),
                    value: value.trim().to_owned(),
                })
            }
            _ => Err(format!("`{s}` is not NAME=URL or NAME='COMMAND ARGS'")),
        }
    }
}

/// Splits a command line on whitespace, honouring single and double quotes
/// (no other shell syntax: nothing is run through a shell).
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in `{line}`"));
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn spec_from_arg(value: &str) -> Result<ServerSpec, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        return Ok(ServerSpec::Http {
            url: value.to_owned(),
            headers: BTreeMap::new(),
            auth: None,
            protocol: None,
        });
    }
    let mut words = split_command(value)?.into_iter();
    let command = words.next().ok_or("an empty server command")?;
    Ok(ServerSpec::Stdio {
        command,
        args: words.collect(),
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    })
}

/// The name of the server nodes call when they name none: the only one.
pub fn default_server(specs: &IndexMap<String, ServerSpec>) -> Option<String> {
    (specs.len() == 1)
        .then(|| specs.keys().next().cloned())
        .flatten()
}

/// The built-in demo server: this very executable (`env`'s program), over
/// stdio.
pub fn demo_spec(env: &Environment) -> ServerSpec {
    let command = env
        .program()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pipewright".to_owned());
    ServerSpec::Stdio {
        command,
        args: vec!["demo-server".to_owned()],
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    }
}

/// A setting's text with its `${env.X}` and `${var.X}` resolved against
/// `scope`; every env value it reads becomes a secret of `redactor`.
pub fn setting_text(s: &str, scope: &Snapshot, redactor: &Redactor) -> Result<String, String> {
    if !s.contains("${") {
        return Ok(s.to_owned());
    }
    let t = reference::parse_template(s).map_err(|e| e.to_string())?;
    for r in t.refs() {
        if let reference::Root::Env(name) = &r.root
            && let Some(v) = reference::Scope::env(scope, name)
        {
            redactor.add(v);
        }
    }
    Ok(
        match reference::resolve_template(&t, scope).map_err(|e| e.to_string())? {
            Value::String(s) => s,
            other => other.to_string(),
        },
    )
}

/// The servers a run may use, by name. `${env.X}` (read in `env`) and
/// `${var.X}` in declarations are resolved here; header values and every
/// resolved `${env.X}` become secrets of `redactor`.
pub fn resolve(
    pipeline: &Pipeline,
    overrides: &[ServerArg],
    url: Option<&str>,
    vars: &IndexMap<String, Value>,
    env: &Environment,
    redactor: &Redactor,
) -> Result<IndexMap<String, ServerSpec>, String> {
    let scope = Snapshot {
        vars: Arc::new(vars.clone()),
        env: env.clone(),
        ..Snapshot::default()
    };
    let text = |s: &str, secret: bool| -> Result<String, String> {
        let out = setting_text(s, &scope, redactor)?;
        if secret {
            redactor.add(out.clone());
        }
        Ok(out)
    };
    let mut out = IndexMap::new();
    for (name, decl) in &pipeline.servers {
        // An entry of a client config file stands for the server it names.
        let source = match &decl.source {
            ServerSource::Import { from, name: entry } => {
                crate::mcp::client_config::lookup(from, entry.as_deref().unwrap_or(name), env)
                    .map_err(|e| format!("server `{name}`: {e}"))?
            }
            other => other.clone(),
        };
        // The `auth:` block goes with this file's spec of the server, so
        // another file served by the same process keeps its own.
        let auth = match (&decl.auth, &source) {
            (Some(a), ServerSource::Http { .. }) => Some(
                a.resolved(&text)
                    .map_err(|e| format!("server `{name}`: `auth`: {e}"))?,
            ),
            _ => None,
        };
        let protocol = decl.protocol;
        let spec = match &source {
            ServerSource::Http { url, headers } => ServerSpec::Http {
                protocol,
                auth,
                url: text(url, false).map_err(|e| format!("server `{name}`: {e}"))?,
                headers: headers
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), text(v, true)?)))
                    .collect::<Result<_, String>>()
                    .map_err(|e| format!("server `{name}`: {e}"))?,
            },
            ServerSource::Stdio {
                command,
                args,
                env,
                cwd,
            } => ServerSpec::Stdio {
                command: text(command, false).map_err(|e| format!("server `{name}`: {e}"))?,
                args: args
                    .iter()
                    .map(|a| text(a, false))
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("server `{name}`: {e}"))?,
                env: env
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), text(v, v.contains("${env."))?)))
                    .collect::<Result<_, String>>()
                    .map_err(|e| format!("server `{name}`: {e}"))?,
                cwd: cwd.clone().map(Into::into),
                protocol,
            },
            ServerSource::Import { from, .. } => {
                return Err(format!(
                    "server `{name}`: `{from}` points at another import; only `command:` or `url:` entries can be used"
                ));
            }
        };
        out.insert(name.clone(), spec);
    }
    for o in overrides {
        out.insert(o.name.clone(), spec_from_arg(&o.value)?);
    }
    if let Some(url) = url {
        let spec = spec_from_arg(url)?;
        match out.len() {
            0 => {
                out.insert("default".to_owned(), spec);
            }
            1 => {
                if let Some((_, s)) = out.first_mut() {
                    *s = spec;
                }
            }
            _ => {
                return Err(format!(
                    "--url is ambiguous: the file declares {} servers; use --server NAME=URL",
                    out.len()
                ));
            }
        }
    }
    if out.is_empty() {
        out.insert(DEMO.to_owned(), demo_spec(env));
    }
    Ok(out)
}

/// Gives every node that names no server the one it calls: the server the
/// file declares when it declares exactly one (`file_only`), else the only
/// server configured. Servers added on the command line are then nameable
/// and never change what an unnamed node calls.
pub fn assign_default(
    pipeline: &mut Pipeline,
    file_only: Option<String>,
    specs: &IndexMap<String, ServerSpec>,
) {
    let default = file_only.filter(|n| specs.contains_key(n)).or_else(|| {
        (specs.len() == 1)
            .then(|| specs.keys().next().cloned())
            .flatten()
    });
    let Some(default) = default else {
        return;
    };
    for comp in &mut pipeline.compositions {
        for node in &mut comp.nodes {
            if node.server.is_none() {
                node.server = Some(default.clone());
            }
        }
    }
}

/// The server a file declares when it declares exactly one.
pub fn only_declared(pipeline: &Pipeline) -> Option<String> {
    (pipeline.servers.len() == 1)
        .then(|| pipeline.servers.keys().next().cloned())
        .flatten()
}

/// The names of the servers the command line adds (`--server`, every
/// `--servers-from` file), for the loader (`LoadOptions::cli_servers`).
pub fn cli_server_names(
    servers: &[ServerArg],
    from: &[std::path::PathBuf],
    env: &Environment,
) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    for path in from {
        for f in crate::mcp::client_config::read(path, env)? {
            if !names.contains(&f.name) {
                names.push(f.name);
            }
        }
    }
    Ok(names)
}

/// The names of the servers `comp` calls (mocked nodes call nothing).
pub fn needed(comp: &Composition, servers: &IndexMap<String, ServerSpec>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for node in &comp.nodes {
        let calls = node.mock.is_none() || node.compensate.is_some();
        if !calls {
            continue;
        }
        let name = match &node.server {
            Some(s) => s.clone(),
            None => match servers.keys().next() {
                Some(s) if servers.len() == 1 => s.clone(),
                _ => continue,
            },
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Live connections, one per server, opened once per run.
#[derive(Debug, Default)]
pub struct ServerPool {
    conns: IndexMap<String, Connection>,
}

impl ServerPool {
    /// Connects to every server in `names` at once; the first failure wins.
    pub async fn connect(
        specs: &IndexMap<String, ServerSpec>,
        names: &[String],
        opts: &ConnectOptions,
    ) -> Result<ServerPool, McpError> {
        let attempts = names.iter().filter_map(|n| {
            let spec = specs.get(n)?;
            Some(async move { (n.clone(), Connection::connect(n, spec, opts).await) })
        });
        let mut pool = ServerPool::default();
        let mut first_err = None;
        for (name, res) in join_all(attempts).await {
            match res {
                Ok(c) => {
                    pool.conns.insert(name, c);
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => {
                pool.close().await;
                Err(e)
            }
            None => Ok(pool),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Connection> {
        self.conns.get(name)
    }

    pub fn connections(&self) -> impl Iterator<Item = &Connection> {
        self.conns.values()
    }

    /// Closes every connection (stdio children are stopped).
    pub async fn close(self) {
        join_all(self.conns.into_values().map(Connection::close)).await;
    }
}

impl Caller for ServerPool {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        let CallRequest {
            server,
            tool,
            args,
            meta,
            timeout,
            cancel,
            scope,
        } = request;
        Box::pin(async move {
            let conn = match server {
                Some(name) => self.conns.get(name),
                None if self.conns.len() == 1 => self.conns.values().next(),
                None => None,
            };
            let Some(conn) = conn else {
                let Some(name) = server else {
                    // No `server:` on the node, and not exactly one server.
                    let names: Vec<&str> = self.conns.keys().map(String::as_str).collect();
                    let reason = if names.is_empty() {
                        "no server was opened for the run".to_owned()
                    } else {
                        format!(
                            "the node names no `server:` and the run has {} servers ({}): name one of them",
                            names.len(),
                            names.join(", ")
                        )
                    };
                    return Err(McpError::Transport {
                        server: "(none named)".to_owned(),
                        reason,
                    });
                };
                return Err(McpError::Transport {
                    server: name.to_owned(),
                    reason: "no connection to this server was opened for the run".to_owned(),
                });
            };
            conn.call_scoped(tool, args, meta, timeout, cancel, scope)
                .await
        })
    }

    fn logs(&self) -> IndexMap<String, String> {
        self.conns
            .iter()
            .map(|(k, c)| (k.clone(), c.log().text()))
            .filter(|(_, t)| !t.is_empty())
            .collect()
    }

    fn protocols(&self) -> IndexMap<String, String> {
        let revision = |c: &Connection| c.protocol_version().to_owned();
        self.conns
            .iter()
            .map(|(k, c)| (k.clone(), revision(c)))
            .collect()
    }

    fn tool_lists(&self) -> IndexMap<String, Vec<ToolInfo>> {
        self.conns
            .iter()
            .map(|(name, c)| (name.clone(), c.tools().to_vec()))
            .collect()
    }

    fn tools_changed(&self) -> bool {
        self.conns.values().any(Connection::tools_changed)
    }

    fn reread_tools(&self) -> BoxFuture<'_, Option<IndexMap<String, Vec<ToolInfo>>>> {
        Box::pin(async move {
            let mut changed = false;
            for conn in self.conns.values() {
                changed |= conn.reread_tools().await.is_some();
            }
            changed.then(|| self.tool_lists())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_careful_shell() {
        assert_eq!(
            split_command("npx -y '@scope/pkg name' \"a b\""),
            Ok(vec![
                "npx".into(),
                "-y".into(),
                "@scope/pkg name".into(),
                "a b".into()
            ])
        );
        assert!(split_command("x 'open").is_err());
    }

    #[test]
    fn server_args_parse() {
        let a: ServerArg = "mem=npx -y x".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.name, "mem");
        assert!("novalue".parse::<ServerArg>().is_err());
    }

    #[test]
    fn each_file_keeps_its_own_auth_block_for_a_shared_url() {
        // Two files one `serve` serves, naming the same server URL with
        // different client ids and scopes: each resolves to its own block
        // (one process-wide map used to let the last file win for both).
        let file = |client: &str, scope: &str| {
            let text = format!(
                "servers:\n  api:\n    url: http://127.0.0.1:9/mcp\n    auth:\n      client_id: {client}\n      scopes: [{scope}]\npipe:\n  - id: e\n    tool: echo\n"
            );
            let loaded = crate::file::open::load_str(&text);
            let pipeline = loaded
                .pipeline
                .unwrap_or_else(|| panic!("loads: {:?}", loaded.diagnostics));
            resolve(
                &pipeline,
                &[],
                None,
                &pipeline.vars,
                &Environment::default(),
                &Redactor::default(),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let first = file("client-a", "read");
        let second = file("client-b", "write");
        let auth_of = |specs: &IndexMap<String, ServerSpec>| match specs.get("api") {
            Some(ServerSpec::Http { auth: Some(a), .. }) => {
                (a.client_id.clone().unwrap_or_default(), a.scopes.clone())
            }
            other => panic!("an HTTP server with an auth block, got {other:?}"),
        };
        assert_eq!(
            auth_of(&first),
            ("client-a".to_owned(), vec!["read".to_owned()])
        );
        assert_eq!(
            auth_of(&second),
            ("client-b".to_owned(), vec!["write".to_owned()])
        );
        let plain = resolve(
            &crate::file::open::load_str("servers:\n  api:\n    url: http://127.0.0.1:9/mcp\npipe:\n  - id: e\n    tool: echo\n")
                .pipeline
                .expect("loads"),
            &[],
            None,
            &IndexMap::new(),
            &Environment::default(),
            &Redactor::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            plain.get("api"),
            Some(ServerSpec::Http { auth: None, .. })
        ));
    }
}
