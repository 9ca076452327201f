//! `pipewright record`: an agent's session with one server recorded as it
//! happens, over stdio (`record -- COMMAND ARGS…`) or Streamable HTTP
//! (`record --http LISTEN --to URL`), and a client's config put behind the
//! recorder (`record wrap`) and back (`record unwrap`). The recorder is
//! the record crate; this file reads the flags, prints its notices and
//! the summary, and gives the exit status (the server's, over stdio).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};

use pipewright_engine::mcp::{DEFAULT_SHUTDOWN_GRACE, MessageLimits};
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;
use pipewright_record::lines::Summary;
use pipewright_record::secrets::Secrets;
use pipewright_record::{Notice, Report};

/// Arguments of `record`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct RecordArgs {
    #[command(subcommand)]
    pub command: Option<RecordCommand>,
    /// The folder session files are written to (made if missing).
    #[arg(long, value_name = "DIR", default_value = pipewright_record::DEFAULT_OUT)]
    pub out: PathBuf,
    /// The server's name in the session (default: the command's, or the
    /// upstream's host).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// An environment variable whose value is a secret, masked wherever
    /// it would be written (repeatable). Variables whose names hold KEY,
    /// TOKEN, SECRET, PASSWORD, CREDENTIAL or AUTH are masked anyway.
    #[arg(long = "secret-env", value_name = "NAME")]
    pub secret_env: Vec<String>,
    /// A request header whose value is a credential, never saved
    /// (repeatable; Authorization, Proxy-Authorization, Cookie and
    /// X-Api-Key always are).
    #[arg(long = "secret-header", value_name = "NAME")]
    pub secret_header: Vec<String>,
    /// Record a Streamable HTTP server: listen at this address (e.g.
    /// 127.0.0.1:7400; port 0 picks one) and pass every request on to
    /// --to.
    #[arg(long, value_name = "ADDR", requires = "to", conflicts_with = "server")]
    pub http: Option<SocketAddr>,
    /// The Streamable HTTP server's MCP endpoint, with --http.
    #[arg(long, value_name = "URL", requires = "http")]
    pub to: Option<String>,
    /// Print one line per call and a summary at the end even when stderr
    /// is not a terminal.
    #[arg(long)]
    pub lines: bool,
    /// The stdio server to start and record, after `--`.
    #[arg(last = true, value_name = "COMMAND", id = "server")]
    pub server: Vec<String>,
}

/// `record wrap` and `record unwrap`.
#[derive(Debug, Subcommand)]
pub enum RecordCommand {
    /// Put every server of an MCP client's config file (Claude Desktop,
    /// Claude Code, Cursor, VS Code, Windsurf) behind the recorder,
    /// keeping a backup.
    Wrap(WrapArgs),
    /// Restore a config file wrapped by `record wrap`, byte for byte.
    Unwrap(UnwrapArgs),
}

/// Arguments of `record wrap`.
#[derive(Debug, Args)]
pub struct WrapArgs {
    /// The client's config file.
    #[arg(value_name = "CONFIG")]
    pub config: PathBuf,
    /// The folder the wrapped servers' sessions go to (default:
    /// `recordings` in pipewright's data directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The loopback port of the first HTTP server's recorder; the next
    /// ones count up from it.
    #[arg(long, value_name = "PORT", default_value_t = 7400)]
    pub port: u16,
}

/// Arguments of `record unwrap`.
#[derive(Debug, Args)]
pub struct UnwrapArgs {
    /// The wrapped config file.
    #[arg(value_name = "CONFIG")]
    pub config: PathBuf,
    /// Restore the backup even if the config changed since `wrap`.
    #[arg(long)]
    pub force: bool,
}

/// Runs `record`.
pub async fn record(args: RecordArgs, settings: &Settings) -> u8 {
    match args.command {
        Some(RecordCommand::Wrap(w)) => return wrap(&w, settings),
        Some(RecordCommand::Unwrap(u)) => return unwrap(&u),
        None => {}
    }
    let lines = args.lines || std::io::stderr().is_terminal();
    let secrets = Secrets::new(Redactor::default()).with_headers(&args.secret_header);
    let limit = MessageLimits {
        max_message_mb: settings.max_message_mb,
        max_tool_list_mb: None,
    }
    .max_message_bytes();
    let report = report(secrets.redactor().clone(), lines);
    let summary = match (args.http, args.to) {
        (Some(listen), Some(to)) => {
            secrets.env(
                env_pairs().iter().map(|(k, v)| (k.as_str(), v.as_str())),
                &args.secret_env,
                false,
            );
            let http = pipewright_record::http::Http {
                listen,
                to,
                name: args.name,
                out: args.out,
                secrets,
                limit,
                report,
                lines,
            };
            // Listening before the address is printed: whoever reads it
            // may stop the recorder at once.
            let stop = stop();
            let proxy = match http.bind().await {
                Ok(p) => p,
                Err(e) => return failed(&e),
            };
            eprintln!("pipewright record listening on {}", proxy.url());
            match proxy.serve(stop).await {
                Ok(written) => (exit::OK, written),
                Err(e) => return failed(&e),
            }
        }
        _ => {
            let Some((command, rest)) = args.server.split_first() else {
                return crate::report::usage(
                    "`pipewright record` needs a server: `record -- COMMAND ARGS…`, or `record --http ADDR --to URL`",
                );
            };
            secrets.env(
                env_pairs().iter().map(|(k, v)| (k.as_str(), v.as_str())),
                &args.secret_env,
                true,
            );
            let stdio = pipewright_record::stdio::Stdio {
                command: command.clone(),
                args: rest.to_vec(),
                name: args.name,
                out: args.out,
                secrets,
                limit,
                grace: settings.shutdown_grace.unwrap_or(DEFAULT_SHUTDOWN_GRACE),
                report,
                lines,
            };
            let io = match pipewright_record::stdio::ClientIo::process() {
                Ok(io) => io,
                Err(e) => return failed(&format!("cannot use this process's stdio: {e}")),
            };
            match stdio.run(io).await {
                Ok(done) => (done.code, done.written),
                Err(e) => return failed(&e),
            }
        }
    };
    let (code, written) = summary;
    if lines {
        for line in summary_lines(&written.summary, &written.files, limit + 64 * 1024) {
            eprintln!("{}", crate::output::printable(&line));
        }
    }
    code
}

/// The environment as text pairs (variables that are not UTF-8 hold no
/// secret we could match in JSON).
fn env_pairs() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The most calls whose savings the summary works out: past them the
/// inference would hold the exit up; `new --from` says it instead.
const SAVINGS_UP_TO: usize = 5_000;

/// The summary at the end: the calls and what serving each session as one
/// pipeline would save an agent (the engine's savings, as `new --from` and
/// `plan` count them), the files, and how to write that pipeline. `limit`
/// is the longest line of a session file.
fn summary_lines(summary: &Summary, files: &[PathBuf], limit: usize) -> Vec<String> {
    let mut text = format!("pipewright record: {summary}");
    let with_calls: Vec<&PathBuf> = if summary.calls == 0 {
        Vec::new()
    } else {
        files.iter().collect()
    };
    if summary.calls > 1
        && summary.calls <= SAVINGS_UP_TO
        && let Some(saved) = savings(&with_calls, limit)
    {
        text.push_str("; ");
        text.push_str(&saved);
    }
    let mut out = vec![text];
    out.extend(files.iter().map(|f| format!("  {}", f.display())));
    if let [one] = with_calls.as_slice() {
        out.push(format!(
            "next: pipewright new pipeline.yml --from {}",
            one.display()
        ));
    } else if !with_calls.is_empty() {
        out.push(
            "next: pipewright new pipeline.yml --from SESSION (one of the files above)".into(),
        );
    }
    out
}

/// What serving each recorded session as one pipeline saves an agent, in
/// a sentence; `None` when no session makes a pipeline.
fn savings(files: &[&PathBuf], limit: usize) -> Option<String> {
    use pipewright_engine::record::{calls, write};
    let mut each = Vec::new();
    for file in files {
        let Ok(rec) = calls::open(file, limit) else {
            continue;
        };
        // A session whose every call failed makes no pipeline.
        if let Ok((draft, recs)) = write::infer(vec![rec], "recorded") {
            each.push(pipewright_engine::record::savings::of_draft(&draft, &recs));
        }
    }
    match each.as_slice() {
        [] => None,
        [one] => Some(one.line()),
        many => {
            let calls: usize = many.iter().map(|s| s.calls).sum();
            let trips: usize = many.iter().map(|s| s.round_trips).sum();
            let tokens: i64 = many.iter().map(|s| s.tokens_saved).sum();
            let n = many.len();
            Some(format!(
                "served as {n} tools (one per session) they save an agent {calls} → {n} calls, {trips} → {n} round trips and {tokens} tokens"
            ))
        }
    }
}

/// Where the recorder's notices go: stderr, the call lines only when
/// asked for.
fn report(redactor: Redactor, lines: bool) -> Report {
    Arc::new(move |notice| match notice {
        Notice::Recording(path) if lines => {
            eprintln!("pipewright record: recording to {}", path.display());
        }
        Notice::Recording(_) => {}
        Notice::Call(line) => eprintln!("{}", crate::output::printable(&line.to_string())),
        Notice::Warning(text) => eprintln!(
            "pipewright record: {}",
            crate::output::printable(&redactor.text(&text))
        ),
    })
}

/// Resolves on Ctrl-C or SIGTERM; the handlers are in place once this
/// returns (not when the future is first polled).
fn stop() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let int = signal(SignalKind::interrupt()).ok();
        let term = signal(SignalKind::terminate()).ok();
        async move {
            async fn one(s: Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = one(int) => {}
                () = one(term) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn failed(text: &str) -> u8 {
    eprintln!("pipewright record: {}", crate::output::printable(text));
    exit::FAILED
}

fn wrap(args: &WrapArgs, settings: &Settings) -> u8 {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let out = match &args.out {
        Some(o) => absolute(o),
        None => match settings.data_dir.as_deref() {
            Some(d) => d.join(pipewright_record::DEFAULT_OUT),
            None => absolute(Path::new(pipewright_record::DEFAULT_OUT)),
        },
    };
    let Some(exe) = settings.env.program().map(Path::to_path_buf) else {
        return failed("cannot find this program's path");
    };
    let done = pipewright_record::wrap::wrap(&pipewright_record::wrap::Wrap {
        config: args.config.clone(),
        out: out.clone(),
        exe,
        port: args.port,
    });
    let wrapped = match done {
        Ok(w) => w,
        Err(e) => return failed(&e),
    };
    use pipewright_record::wrap::Entry;
    let mut starts = Vec::new();
    for entry in &wrapped.servers {
        match entry {
            Entry::Stdio { name } => println!("{name}: recorded through `pipewright record`"),
            Entry::Http { name, url, command } => {
                println!("{name}: now {url}, a recorder that must be running (below)");
                starts.push(shell_words(command));
            }
            Entry::Skipped { name, why } => println!("{name}: left as it was: {why}"),
        }
    }
    println!("sessions go to {}", out.display());
    println!(
        "backup: {} (`pipewright record unwrap {}` restores it)",
        wrapped.backup.display(),
        args.config.display()
    );
    if wrapped.comments_dropped {
        println!("the wrapped file has no comments; unwrap brings them back");
    }
    if !starts.is_empty() {
        println!("start the HTTP recorders before the client:");
        for s in starts {
            println!("  {s}");
        }
    }
    println!("restart the client to pick the change up");
    exit::OK
}

fn unwrap(args: &UnwrapArgs) -> u8 {
    match pipewright_record::wrap::unwrap(&args.config, args.force) {
        Ok(_) => {
            println!("{} restored", args.config.display());
            exit::OK
        }
        Err(e) => failed(&e),
    }
}

/// A command line as a shell reads it back.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
