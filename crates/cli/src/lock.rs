//! `pipewright lock [FILE…]` (pins the servers the files use in
//! `pipewright.lock` beside them; `--update` accepts what changed) and
//! `pipewright tools diff [FILE]` (what changed since the lock); and for
//! `run`, `plan` and `check`, the lock a file is held to ([`pinned`]) and
//! the live servers read to compare with it ([`live`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use indexmap::IndexMap;
use serde_json::Value;

use super::report::usage;
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::lock::{Change, Drift, Lock, LockedServer};
use pipewright_engine::lock::{Pinned, uses};
use pipewright_engine::mcp::servers::{self, ServerPool};
use pipewright_engine::options::exit;
use pipewright_engine::plan::preflight::ToolLists;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

/// Arguments of `lock`.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// Pipeline files; `pipewright.lock` is written in each one's folder.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Accept what changed in a pinned server or tool (prints what did);
    /// without it, `lock` only adds what is not pinned yet and refuses a
    /// change.
    #[arg(long)]
    pub update: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Arguments of `tools diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The pipeline file whose `pipewright.lock` is compared.
    pub file: PathBuf,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// The live servers a file calls, as read for the lock: each one's tools
/// and handshake result.
pub(crate) struct Live {
    pub tools: ToolLists,
    pub handshakes: IndexMap<String, Value>,
}

/// The lock `file` is held to: `None` when there is none (and `--locked`
/// is not given); strict with `--locked` or the file's `lock: strict`.
/// `Err` is exit code 2, the reason printed.
pub(crate) fn pinned(file: &Path, pipeline: &Pipeline, locked: bool) -> Result<Option<Pinned>, u8> {
    match Lock::read_for(file) {
        Ok(Some(lock)) => Ok(Some(Pinned {
            lock,
            strict: locked || pipeline.lock_strict,
            handshakes: IndexMap::new(),
        })),
        Ok(None) if locked => Err(usage(format!(
            "--locked: there is no {} beside {}; run `pipewright lock {}` first",
            pipewright_engine::lock::FILE_NAME,
            file.display(),
            file.display()
        ))),
        Ok(None) => Ok(None),
        Err(e) => Err(usage(e)),
    }
}

/// Each connection's handshake result, by server name.
pub(crate) fn handshakes(pool: &ServerPool) -> IndexMap<String, Value> {
    pool.connections()
        .map(|c| (c.name().to_owned(), c.server_info()))
        .collect()
}

/// Loads `path` (diagnostics printed), its nodes pointed at their server:
/// `Err` is the exit code.
fn load(path: &Path, settings: &Settings) -> Result<Pipeline, u8> {
    let (source, loaded) = load_file_with(path, Dialect::Auto, &settings.load_options(Vec::new()));
    let name = path.display().to_string();
    if pipewright_headless::report_diagnostics(&name, &source, &loaded) {
        eprintln!("{name}: not locked: the file has errors");
        return Err(exit::INVALID);
    }
    loaded.pipeline.ok_or(exit::INVALID)
}

/// Connects the servers `pipeline`'s nodes call (resolved as `tools` and
/// `run` resolve them, nodes that name none pointed at theirs), reads
/// their tools and handshakes, and closes them. `Err` is the exit code,
/// the reason printed.
pub(crate) async fn live(pipeline: &mut Pipeline, settings: &Settings) -> Result<Live, u8> {
    let redactor = Redactor::default();
    let file_only = servers::only_declared(pipeline);
    let specs = servers::resolve(
        pipeline,
        &[],
        None,
        &pipeline.vars,
        &settings.env,
        &redactor,
    )
    .map_err(usage)?;
    servers::assign_default(pipeline, file_only, &specs);
    let mut needed: Vec<String> = Vec::new();
    for c in &pipeline.compositions {
        for n in servers::needed(c, &specs) {
            if !needed.contains(&n) {
                needed.push(n);
            }
        }
    }
    let connect = pipewright_headless::connect_options(settings);
    let pool = ServerPool::connect(&specs, &needed, &connect)
        .await
        .map_err(|e| {
            eprintln!("error: {}", redactor.text(&e.to_string()));
            if e.is_unreachable() {
                exit::UNREACHABLE
            } else {
                exit::INVALID
            }
        })?;
    let tools = pool
        .connections()
        .map(|c| (c.name().to_owned(), c.tools().to_vec()))
        .collect();
    let out = Live {
        tools,
        handshakes: handshakes(&pool),
    };
    pool.close().await;
    Ok(out)
}

/// `drift` without what is only new (a tool or server not pinned yet).
fn changed(drift: Vec<Drift>) -> Vec<Drift> {
    drift
        .into_iter()
        .filter(|d| {
            !matches!(
                d.changes.as_slice(),
                [Change::NotLocked] | [Change::ServerNotLocked]
            )
        })
        .collect()
}

fn print_drift(d: &Drift) {
    let text = format!("{}\n{}", d.summary(), d.diff_text());
    println!("{}", super::output::printable(&text));
}

/// `pipewright lock`: exit 0 when written, 1 when a pinned server or tool
/// changed and `--update` was not given, 2 for a bad file or lock, 4 when
/// a server could not be reached.
pub async fn lock(args: LockArgs, settings: &Settings) -> u8 {
    let mut by_dir: BTreeMap<PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    for f in &args.files {
        let lock = Lock::path_for(f);
        let dir = lock.parent().map(Path::to_path_buf).unwrap_or_default();
        by_dir.entry(dir).or_default().push(f);
    }
    let mut code = exit::OK;
    for (dir, files) in by_dir {
        let c = lock_dir(&dir, &files, args.update, settings).await;
        code = code.max(c);
    }
    code
}

async fn lock_dir(dir: &Path, files: &[&PathBuf], update: bool, settings: &Settings) -> u8 {
    let read_dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let old = match Lock::read(read_dir) {
        Ok(l) => l,
        Err(e) => return usage(e),
    };
    let mut new = old.clone().unwrap_or_default();
    let mut met: BTreeMap<String, LockedServer> = BTreeMap::new();
    let mut drift = Vec::new();
    for path in files {
        let mut pipeline = match load(path, settings) {
            Ok(p) => p,
            Err(code) => return code,
        };
        let live = match live(&mut pipeline, settings).await {
            Ok(l) => l,
            Err(code) => return code,
        };
        let comps: Vec<&Composition> = pipeline.compositions.iter().collect();
        for (server, used) in uses(&comps, None) {
            let (Some(tools), Some(hello)) =
                (live.tools.get(&server), live.handshakes.get(&server))
            else {
                continue;
            };
            let used: Vec<&str> = used.iter().map(String::as_str).collect();
            if let Some(old) = &old {
                drift.extend(changed(pipewright_engine::lock::check(
                    old,
                    &server,
                    tools,
                    Some(hello),
                    &used,
                )));
            }
            let entry = LockedServer::of(hello, tools, &used);
            match met.get_mut(&server) {
                Some(seen) => seen.tools.extend(entry.tools),
                None => {
                    met.insert(server, entry);
                }
            }
        }
    }
    let mut seen: Vec<&Drift> = Vec::new();
    for d in &drift {
        if !seen.contains(&d) {
            seen.push(d);
        }
    }
    let lock_path = dir.join(pipewright_engine::lock::FILE_NAME);
    if !seen.is_empty() && !update {
        for d in &seen {
            print_drift(d);
        }
        eprintln!(
            "{}: not written: {} change(s) since the lock; `pipewright lock --update` accepts them",
            lock_path.display(),
            seen.len()
        );
        return exit::FAILED;
    }
    for d in &seen {
        print_drift(d);
    }
    for (name, server) in met {
        new.insert(&name, server);
    }
    if old.as_ref().is_some_and(|o| o.to_text() == new.to_text()) {
        return exit::OK;
    }
    match new.write(read_dir) {
        Ok(_) => {
            let tools: usize = new.servers.values().map(|s| s.tools.len()).sum();
            eprintln!(
                "{}: {} server(s), {tools} tool(s) pinned{}",
                lock_path.display(),
                new.servers.len(),
                if seen.is_empty() {
                    String::new()
                } else {
                    format!("; {} change(s) accepted", seen.len())
                }
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::FAILED
        }
    }
}

/// `pipewright tools diff FILE`: prints each change since the lock; exit
/// 0 when there is none, 1 when there is, 2 without a lock.
pub async fn diff(args: DiffArgs, settings: &Settings) -> u8 {
    let mut pipeline = match load(&args.file, settings) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Some(mut pinned) = (match pinned(&args.file, &pipeline, true) {
        Ok(p) => p,
        Err(code) => return code,
    }) else {
        return exit::INVALID;
    };
    let live = match live(&mut pipeline, settings).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    pinned.handshakes = live.handshakes;
    let comps: Vec<&Composition> = pipeline.compositions.iter().collect();
    let drift =
        pipewright_engine::plan::preflight::pinned::drift(&comps, &live.tools, None, &pinned);
    for d in &drift {
        print_drift(d);
    }
    if drift.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    }
}
