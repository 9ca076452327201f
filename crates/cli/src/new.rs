//! `pipewright new [FILE]`: connects to the servers, lists their tools,
//! and writes the engine's scaffold (one node per chosen tool) to FILE;
//! with `--from` (`--har`, `--run`), writes the pipeline a recorded agent
//! session makes instead ([`from`]).

mod from;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;
use indexmap::IndexMap;

use pipewright_engine::environment::Environment;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::file::scaffold::{self, Request, ServerEntry, ToolDef};
use pipewright_engine::mcp::servers::{self, ServerArg};
use pipewright_engine::mcp::{Connection, client_config};
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

/// Arguments of `new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The file to write.
    #[arg(value_name = "FILE", default_value = "pipeline.yml")]
    pub file: PathBuf,
    /// NAME=URL or NAME='COMMAND ARGS': a server of the new file.
    /// Repeatable. With no server given, the built-in demo server.
    #[arg(long = "server", value_name = "NAME=URL|CMD")]
    pub servers: Vec<ServerArg>,
    /// A Streamable HTTP URL: the new file's only server (`default`).
    #[arg(long)]
    pub url: Option<String>,
    /// Also declare every server of this client config file (Claude
    /// Desktop, Cursor, `.mcp.json`, VS Code `mcp.json`) with `from:`.
    /// Repeatable.
    #[arg(long, value_name = "PATH")]
    pub servers_from: Vec<PathBuf>,
    /// A tool to call, one node each, in this order, each after the one
    /// before. Repeatable. Without it: asked on a terminal, else none (one
    /// example node for the first tool, its arguments left empty).
    #[arg(long = "tool", value_name = "TOOL")]
    pub tools: Vec<String>,
    /// A session file `pipewright record` wrote: write the pipeline the
    /// agent's calls make, with the references between them inferred,
    /// proved by replay, and its cassette as FILE.cassette.json.
    /// Repeatable: several recordings of one task (what differs becomes an
    /// input), or one task's sessions with several servers.
    #[arg(long = "from", value_name = "SESSION", conflicts_with_all = ["servers", "url", "servers_from", "tools"])]
    pub from: Vec<PathBuf>,
    /// As --from, from a HAR file of Streamable HTTP traffic (a browser's
    /// or a proxy's network log). Repeatable.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["servers", "url", "servers_from", "tools"])]
    pub har: Vec<PathBuf>,
    /// As --from, from a run pipewright saved (an id `pipewright runs list`
    /// shows). Repeatable.
    #[arg(long = "run", value_name = "RUN_ID", conflicts_with_all = ["servers", "url", "servers_from", "tools"])]
    pub runs: Vec<String>,
    /// Overwrite FILE (and, with --from, its cassette) if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Runs `new`; returns the exit code.
pub async fn new(args: NewArgs, settings: &Settings) -> u8 {
    let sources = from::Sources {
        file: args.file.clone(),
        from: args.from.clone(),
        har: args.har.clone(),
        runs: args.runs.clone(),
        force: args.force,
    };
    if sources.any() {
        return from::new_from(sources, settings).await;
    }
    if args.file.exists() && !args.force {
        eprintln!(
            "error: `{}` exists; not overwritten (pass --force to replace it)",
            args.file.display()
        );
        return exit::INVALID;
    }
    let entries = match entries(&args, &settings.env) {
        Ok(e) => e,
        Err(e) => return super::report::usage(e),
    };
    let conns = match connect(&args, settings).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let listed: Vec<_> = conns
        .iter()
        .map(|c| (c.name().to_owned(), c.tools()))
        .collect();
    for c in conns {
        c.close().await;
    }
    let tools: Vec<ToolDef<'_>> = listed
        .iter()
        .flat_map(|(server, tools)| {
            tools.iter().map(move |t| ToolDef {
                server,
                name: &t.name,
                description: t.description.as_deref(),
                input_schema: &t.input_schema,
            })
        })
        .collect();
    let chosen = if !args.tools.is_empty() {
        match by_name(&args.tools, &tools) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        }
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        ask(&tools)
    } else {
        Vec::new()
    };
    let at = settings.env.absolute(&args.file);
    let text = scaffold::scaffold(&Request {
        name: "main",
        servers: &entries,
        tools: &tools,
        chosen: &chosen,
        file: at.as_deref(),
    });
    if let Err(e) = write(&args, &text) {
        eprintln!("error: cannot write `{}`: {e}", args.file.display());
        return exit::FAILED;
    }
    let file = args.file.display();
    if chosen.is_empty() {
        println!("wrote {file}: no tool chosen; one example node to fill in");
    } else {
        let names: Vec<&str> = chosen.iter().map(|&i| tools[i].name).collect();
        println!(
            "wrote {file}: {} node(s): {}",
            chosen.len(),
            super::output::printable(&names.join(", "))
        );
    }
    println!("next: pipewright edit {file}");
    exit::OK
}

/// The `servers:` the new file declares, in the order `servers::resolve`
/// reads them; empty for the built-in demo server.
fn entries(args: &NewArgs, env: &Environment) -> Result<Vec<(String, ServerEntry)>, String> {
    let mut out: IndexMap<String, ServerEntry> = IndexMap::new();
    for path in &args.servers_from {
        let shown = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        for found in client_config::read(path, env)? {
            out.entry(found.name.clone()).or_insert(ServerEntry::From {
                path: shown.display().to_string(),
                name: found.name,
            });
        }
    }
    let entry = |value: &str| -> Result<ServerEntry, String> {
        if value.starts_with("http://") || value.starts_with("https://") {
            return Ok(ServerEntry::Url(value.to_owned()));
        }
        let mut words = servers::split_command(value)?.into_iter();
        let command = words.next().ok_or("an empty server command")?;
        Ok(ServerEntry::Command {
            command,
            args: words.collect(),
        })
    };
    for s in &args.servers {
        out.insert(s.name.clone(), entry(&s.value)?);
    }
    if let Some(url) = &args.url {
        match out.len() {
            0 => {
                out.insert("default".to_owned(), entry(url)?);
            }
            1 => {
                if let Some((_, e)) = out.first_mut() {
                    *e = entry(url)?;
                }
            }
            n => {
                return Err(format!(
                    "--url is ambiguous: {n} servers are given; use --server NAME=URL"
                ));
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Connects every server the arguments name (the demo server when none),
/// resolved as `run` resolves them.
async fn connect(args: &NewArgs, settings: &Settings) -> Result<Vec<Connection>, u8> {
    let mut pipeline = Pipeline::default();
    for p in &args.servers_from {
        if let Err(e) = client_config::add_to(&mut pipeline, p, &settings.env) {
            return Err(super::report::usage(e));
        }
    }
    let redactor = Redactor::default();
    let specs = servers::resolve(
        &pipeline,
        &args.servers,
        args.url.as_deref(),
        &IndexMap::new(),
        &settings.env,
        &redactor,
    )
    .map_err(super::report::usage)?;
    let connect = pipewright_headless::connect_options(settings);
    let conns = super::servers::connect_each(&specs, &redactor, &connect, None).await?;
    Ok(conns)
}

/// The indices of the tools `names` name, in their order; a name no server
/// lists is an error with the closest one.
fn by_name(names: &[String], tools: &[ToolDef<'_>]) -> Result<Vec<usize>, String> {
    names
        .iter()
        .map(|n| {
            tools.iter().position(|t| t.name == n).ok_or_else(|| {
                let hint = pipewright_engine::diag::suggest(n, tools.iter().map(|t| t.name))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                format!(
                    "no server lists a tool `{}`{hint} (`pipewright tools list` shows them)",
                    super::output::printable(n)
                )
            })
        })
        .collect()
}

/// Asks on the terminal which tools, by number, in order.
fn ask(tools: &[ToolDef<'_>]) -> Vec<usize> {
    let several = tools.windows(2).any(|w| w[0].server != w[1].server);
    let mut err = std::io::stderr();
    for (i, t) in tools.iter().enumerate() {
        let name = if several {
            format!("{}: {}", t.server, t.name)
        } else {
            t.name.to_owned()
        };
        let _ = writeln!(err, "{:>3}  {}", i + 1, super::output::printable(&name));
    }
    let stdin = std::io::stdin();
    loop {
        let _ = write!(
            err,
            "Which tools, in order? Numbers separated by spaces (Enter for none): "
        );
        let _ = err.flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return Vec::new();
        }
        let picked: Result<Vec<usize>, ()> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .map(|w| match w.parse::<usize>() {
                Ok(n) if (1..=tools.len()).contains(&n) => Ok(n - 1),
                _ => Err(()),
            })
            .collect();
        match picked {
            Ok(p) => return p,
            Err(()) => {
                let _ = writeln!(err, "numbers from 1 to {}, please", tools.len());
            }
        }
    }
}

fn write(args: &NewArgs, text: &str) -> std::io::Result<()> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if args.force {
        open.create(true).truncate(true);
    } else {
        open.create_new(true);
    }
    open.open(&args.file)?.write_all(text.as_bytes())
}
