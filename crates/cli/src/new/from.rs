//! `pipewright new FILE --from SESSION…` (and `--har FILE`, `--run ID`):
//! reads what an agent did, writes the pipeline its calls make with the
//! references inferred and proved, and its cassette beside it, then says
//! what it inferred and what serving it saves.

use std::path::{Path, PathBuf};

use pipewright_engine::file::model::{ServerDecl, ServerSource};
use pipewright_engine::mcp::DEFAULT_MAX_MESSAGE_MB;
use pipewright_engine::options::exit;
use pipewright_engine::record::calls::{self, Recording};
use pipewright_engine::record::import::{har, runs};
use pipewright_engine::record::session::Server;
use pipewright_engine::record::write;
use pipewright_engine::run::store::Runs;
use pipewright_engine::settings::Settings;

/// What `new --from` is asked: the recordings and where to write.
pub struct Sources {
    /// The pipeline file to write (its cassette goes beside it).
    pub file: PathBuf,
    /// Session files (`--from`).
    pub from: Vec<PathBuf>,
    /// HAR files (`--har`).
    pub har: Vec<PathBuf>,
    /// Saved runs (`--run`).
    pub runs: Vec<String>,
    /// `--force`: overwrite the file and its cassette.
    pub force: bool,
}

impl Sources {
    /// Whether any recording is named.
    pub fn any(&self) -> bool {
        !self.from.is_empty() || !self.har.is_empty() || !self.runs.is_empty()
    }
}

/// Runs `new --from`; returns the exit code.
pub async fn new_from(args: Sources, settings: &Settings) -> u8 {
    let cassette = write::cassette_path(&args.file);
    for path in [&args.file, &cassette] {
        if path.exists() && !args.force {
            eprintln!(
                "error: `{}` exists; not overwritten (pass --force to replace it)",
                path.display()
            );
            return exit::INVALID;
        }
    }
    let recs = match read_all(&args, settings) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}", crate::output::printable(&e));
            return exit::INVALID;
        }
    };
    let name = name_of(&args.file);
    let cassette_name = cassette
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let at = settings.env.absolute(&args.file);
    let written = match write::write(recs, &name, &cassette_name, at.as_deref()).await {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {}", crate::output::printable(&e.to_string()));
            return exit::INVALID;
        }
    };
    if let Err(e) = written.save(&args.file, args.force) {
        eprintln!("error: {}", crate::output::printable(&e));
        return exit::FAILED;
    }
    let file = args.file.display();
    println!("wrote {file} and {}", cassette.display());
    for line in written.summary() {
        println!("  {}", crate::output::printable(&line));
    }
    println!(
        "next: pipewright run {file} --replay {}",
        cassette.display()
    );
    exit::OK
}

/// The pipeline's name: FILE's stem, as an id.
fn name_of(file: &Path) -> String {
    let stem = file.file_stem().map_or_else(
        || "recorded".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    pipewright_engine::file::loader::id_from(&stem)
}

/// Every recording the flags name, in their order.
fn read_all(args: &Sources, settings: &Settings) -> Result<Vec<Recording>, String> {
    let limit = settings.max_message_mb.unwrap_or(DEFAULT_MAX_MESSAGE_MB) * (1 << 20) + 64 * 1024;
    let mut out = Vec::new();
    for path in &args.from {
        out.push(calls::open(path, limit).map_err(|e| e.to_string())?);
    }
    for path in &args.har {
        out.extend(har::open(path, None).map_err(|e| e.to_string())?);
    }
    if !args.runs.is_empty() {
        let store = Runs::open(settings.data_dir.as_deref())
            .ok_or("no user data directory for saved runs (set PIPEWRIGHT_DATA_DIR)")?;
        for id in &args.runs {
            let entry = store.find(id)?;
            let trace = store.load(&entry)?;
            let servers = store
                .source(&entry)
                .and_then(|text| {
                    pipewright_engine::file::open::load_str_with(
                        &text,
                        pipewright_engine::file::import::Dialect::Auto,
                        &settings.load_options(Vec::new()),
                    )
                    .pipeline
                })
                .map(|p| p.servers.values().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            let mut rec = runs::recording(
                &trace,
                servers.iter().filter_map(server_of).collect(),
                &format!("run {}", trace.run_id),
            );
            for decl in &servers {
                if let ServerSource::Http { headers, .. } = &decl.source {
                    let kept = headers
                        .iter()
                        .map(|(h, v)| (h.clone(), header_value(&decl.name, h, v)))
                        .collect();
                    rec.headers.insert(decl.name.clone(), kept);
                }
            }
            out.push(rec);
        }
    }
    Ok(out)
}

/// A server a saved run's file declared, as a recording names it.
fn server_of(decl: &ServerDecl) -> Option<Server> {
    match &decl.source {
        ServerSource::Stdio { command, args, .. } => Some(Server::Stdio {
            name: decl.name.clone(),
            command: command.clone(),
            args: args.clone(),
        }),
        ServerSource::Http { url, .. } => Some(Server::Http {
            name: decl.name.clone(),
            url: url.clone(),
        }),
        ServerSource::Import { .. } => None,
    }
}

/// A header as the saved run's file wrote it when that reads an
/// environment variable, else `${env.SERVER_HEADER}`: a value written in
/// the file is not copied.
fn header_value(server: &str, header: &str, value: &str) -> String {
    if value.contains("${env.") {
        return value.to_owned();
    }
    let name = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!("${{env.{}_{}}}", name(server), name(header))
}
