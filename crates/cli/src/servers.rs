//! `pipewright servers list [--servers-from PATH]`: the MCP servers other
//! clients' config files declare (Claude Desktop, Claude Code, Cursor, VS
//! Code, Windsurf), as pipewright would start or reach them.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use indexmap::IndexMap;

use pipewright_engine::environment::Environment;
use pipewright_engine::file::model::ServerSource;
use pipewright_engine::mcp::client_config::{self, FoundServer};
use pipewright_engine::mcp::{ConnectOptions, Connection, ServerSpec};
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;

/// Connects every server of `specs`, in order. On the first that fails it
/// says why on stderr (masked), then `hint` for a server it could not
/// reach (unless the error already names the command to run: a login),
/// closes the ones already open and gives the exit code: unreachable, or
/// invalid.
pub(crate) async fn connect_each(
    specs: &IndexMap<String, ServerSpec>,
    redactor: &Redactor,
    opts: &ConnectOptions,
    hint: Option<String>,
) -> Result<Vec<Connection>, u8> {
    let mut conns = Vec::new();
    for (name, spec) in specs {
        match Connection::connect(name, spec, opts).await {
            Ok(c) => conns.push(c),
            Err(e) => {
                let said = e.to_string();
                eprintln!("error: {}", redactor.text(&said));
                if let Some(hint) =
                    hint.filter(|_| e.is_unreachable() && !said.contains("auth login"))
                {
                    eprintln!("{}", redactor.text(&hint));
                }
                for c in conns {
                    c.close().await;
                }
                return Err(if e.is_unreachable() {
                    exit::UNREACHABLE
                } else {
                    exit::INVALID
                });
            }
        }
    }
    Ok(conns)
}

/// The `servers` subcommands.
#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// List the servers of a client config file, or of every config file
    /// found in the usual places when none is named.
    List(ListArgs),
}

/// Arguments of `servers list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// A client config file (`mcpServers` or VS Code `servers`); without it,
    /// the project's `.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json` and
    /// the user's Claude Desktop, Claude Code, Cursor, VS Code and Windsurf
    /// files are searched.
    #[arg(long, value_name = "PATH")]
    pub servers_from: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `servers` subcommand; `env` says where the user's client config
/// files are and what their substitutions read.
pub fn servers(cmd: &ServersCommand, env: &Environment) -> u8 {
    match cmd {
        ServersCommand::List(args) => list(args, env),
    }
}

fn list(args: &ListArgs, env: &Environment) -> u8 {
    let files: Vec<PathBuf> = match &args.servers_from {
        Some(p) => vec![p.clone()],
        None => {
            let cwd = std::env::current_dir().unwrap_or_default();
            client_config::default_locations(&cwd, env)
                .into_iter()
                .filter(|p| p.is_file())
                .collect()
        }
    };
    if files.is_empty() {
        let cwd = std::env::current_dir().unwrap_or_default();
        eprintln!("no MCP client config found; looked in:");
        for p in client_config::default_locations(&cwd, env) {
            eprintln!("  {}", p.display());
        }
        return exit::OK;
    }
    let mut code = exit::OK;
    let mut all = Vec::new();
    for file in &files {
        match client_config::read(file, env) {
            Ok(found) => {
                if !args.json {
                    println!("{}", file.display());
                    for f in &found {
                        println!("  {}", line(f));
                    }
                }
                all.extend(found.iter().map(|f| describe(f, file)));
            }
            Err(e) => {
                // A searched user file may hold no servers; only a named one is an error.
                if args.servers_from.is_some() {
                    eprintln!("error: {e}");
                    code = exit::INVALID;
                } else if !e.contains("has no `mcpServers`") {
                    eprintln!("warning: {e}");
                }
            }
        }
    }
    if args.json {
        println!("{}", crate::json::pretty(&Value::from(all)));
    }
    code
}

/// One text line: name, transport, what is run or reached; env and header
/// values are not shown.
fn line(f: &FoundServer) -> String {
    match &f.source {
        ServerSource::Stdio {
            command, args, env, ..
        } => {
            let mut l = format!("{:<16} stdio  {command}", f.name);
            for a in args {
                l.push(' ');
                l.push_str(a);
            }
            if !env.is_empty() {
                let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                l.push_str(&format!("  (env: {})", keys.join(", ")));
            }
            l
        }
        ServerSource::Http { url, headers } => {
            let mut l = format!("{:<16} http   {url}", f.name);
            if !headers.is_empty() {
                let keys: Vec<&str> = headers.keys().map(String::as_str).collect();
                l.push_str(&format!("  (headers: {})", keys.join(", ")));
            }
            l
        }
        ServerSource::Import { from, .. } => format!("{:<16} import {from}", f.name),
    }
}

fn describe(f: &FoundServer, file: &std::path::Path) -> Value {
    let base = json!({ "name": f.name, "file": file.display().to_string() });
    let mut v = base;
    match &f.source {
        ServerSource::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            v["transport"] = "stdio".into();
            v["command"] = command.clone().into();
            v["args"] = json!(args);
            v["env"] = json!(env.keys().collect::<Vec<_>>());
            v["cwd"] = json!(cwd);
        }
        ServerSource::Http { url, headers } => {
            v["transport"] = "http".into();
            v["url"] = url.clone().into();
            v["headers"] = json!(headers.keys().collect::<Vec<_>>());
        }
        ServerSource::Import { from, .. } => v["from"] = from.clone().into(),
    }
    v
}
