//! `pipewright check FILE…`: load and validate, print diagnostics; a file
//! with a `pipewright.lock` beside it also has its servers compared with
//! the lock (what changed is a warning at the node, or an error with
//! `--locked` or `lock: strict`).

use std::path::{Path, PathBuf};

use clap::Args;

use pipewright_engine::diag::Diagnostic;
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::options::exit;
use pipewright_engine::plan::preflight::Preflight;
use pipewright_engine::plan::preflight::pinned::check_lock;
use pipewright_engine::settings::Settings;

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Pipeline files (YAML or JSON).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Read the files as this dialect instead of detecting it.
    #[arg(long, value_parser = crate::choice::choice::<Dialect>(), default_value = "auto")]
    pub dialect: Dialect,
    /// Hold each file to its `pipewright.lock`: a tool changed since the
    /// lock is an error, and a file without a lock is one too.
    #[arg(long)]
    pub locked: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Exit 0 when every file is valid (warnings allowed), 2 otherwise.
pub async fn check(args: &CheckArgs, settings: &Settings) -> u8 {
    let mut bad = false;
    for path in &args.files {
        let name = path.display().to_string();
        let (source, loaded) =
            load_file_with(path, args.dialect, &settings.load_options(Vec::new()));
        let errors = pipewright_headless::report_diagnostics(&name, &source, &loaded);
        let mut warnings = loaded.warnings().count();
        if errors {
            bad = true;
            eprintln!(
                "{name}: {} error(s), {warnings} warning(s)",
                loaded.errors().count()
            );
        } else if let Some(p) = &loaded.pipeline {
            let marks = match against_lock(path, p, args.locked, settings).await {
                Ok(marks) => marks,
                Err(code) => return code,
            };
            for d in &marks {
                eprintln!("{}\n", d.render(&name, Some(&source)));
            }
            warnings += marks.iter().filter(|d| !d.is_error()).count();
            let lock_errors = marks.iter().filter(|d| d.is_error()).count();
            if lock_errors > 0 {
                bad = true;
                eprintln!("{name}: {lock_errors} error(s), {warnings} warning(s)");
                continue;
            }
            let nodes: usize = p.compositions.iter().map(|c| c.nodes.len()).sum();
            println!(
                "{name}: ok ({} composition(s), {nodes} node(s), {warnings} warning(s))",
                p.compositions.len()
            );
        }
    }
    if bad { exit::INVALID } else { exit::OK }
}

/// What changed since the file's lock, as marks at its nodes; nothing
/// (and no server started) when the file has no lock.
async fn against_lock(
    path: &Path,
    pipeline: &Pipeline,
    locked: bool,
    settings: &Settings,
) -> Result<Vec<Diagnostic>, u8> {
    let Some(mut pinned) = super::lock::pinned(path, pipeline, locked)? else {
        return Ok(Vec::new());
    };
    let mut pipeline = pipeline.clone();
    let live = super::lock::live(&mut pipeline, settings).await?;
    pinned.handshakes = live.handshakes;
    let comps: Vec<&Composition> = pipeline.compositions.iter().collect();
    let mut report = Preflight::default();
    check_lock(&mut report, &comps, &live.tools, None, &pinned);
    Ok(report.problems.into_iter().chain(report.warnings).collect())
}
