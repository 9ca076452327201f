//! `pipewright doctor [FILE | --url URL | --server NAME=CMD]`: each
//! server's ordered checklist (`engine::doctor`), as a list a person reads
//! (`✓`, `!`, `✗`, `-`; no colour) or as JSON for CI. Exit 1 when a step
//! fails.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use indexmap::IndexMap;
use serde_json::json;

use pipewright_engine::doctor::{self, DoctorOptions, Report};
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::mcp::auth::Prompt;
use pipewright_engine::mcp::{ServerSpec, servers};
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

use super::flags::ServerFlags;
use super::output::printable;

/// How the checklist is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorFormat {
    /// A checklist per server.
    Text,
    /// One JSON document: `{"failed", "servers": [{"server", "transport",
    /// "target", "steps": [{"name", "status", "detail", "fix",
    /// "elapsed_ms"}], "findings": [{"rule", "tool", "argument",
    /// "message"}]}]}`.
    Json,
}

/// Arguments of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// A pipeline file: every server it declares is examined.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerFlags,
    /// `text` (a checklist) or `json` (for CI).
    #[arg(long, value_enum, default_value_t = DoctorFormat::Text)]
    pub format: DoctorFormat,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Examines every server; 0 when no step failed, 1 when one did, 2 for a
/// file or flags that name no server.
pub async fn doctor(args: DoctorArgs, settings: &Settings) -> u8 {
    let pipeline = match &args.file {
        Some(path) => {
            let (source, loaded) =
                load_file_with(path, Dialect::Auto, &settings.load_options(Vec::new()));
            if pipewright_headless::report_diagnostics(
                &path.display().to_string(),
                &source,
                &loaded,
            ) {
                return exit::INVALID;
            }
            match loaded.pipeline {
                Some(p) => p,
                None => return exit::INVALID,
            }
        }
        None => Pipeline::default(),
    };
    let redactor = Redactor::default();
    let specs: IndexMap<String, ServerSpec> = match servers::resolve(
        &pipeline,
        &args.server.servers,
        args.server.url.as_deref(),
        &pipeline.vars,
        &settings.env,
        &redactor,
    ) {
        Ok(specs) if !specs.is_empty() => specs,
        Ok(_) => {
            eprintln!("error: no server to examine: name a FILE, --url URL or --server NAME=CMD");
            return exit::INVALID;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    // The doctor looks; it never opens a browser to log in.
    let mut quiet = settings.clone();
    quiet.prompt = Some(Prompt::Never);
    quiet.auth_prompt = None;
    let opts = DoctorOptions::new(
        pipewright_headless::connect_options(&quiet),
        settings.env.clone(),
        settings.data_dir.clone(),
    );
    let mut reports = Vec::new();
    for (name, spec) in &specs {
        let report = doctor::examine(name, spec, &opts).await;
        if args.format == DoctorFormat::Text {
            print!("{}", redactor.text(&text(&report)));
        }
        reports.push(report);
    }
    let failed = reports.iter().any(Report::failed);
    match args.format {
        DoctorFormat::Json => {
            let v = json!({ "failed": failed, "servers": reports });
            println!("{}", redactor.text(&crate::json::pretty(&v)));
        }
        DoctorFormat::Text => {
            let bad = reports.iter().filter(|r| r.failed()).count();
            println!(
                "{} server{} examined, {bad} with a failing step",
                reports.len(),
                if reports.len() == 1 { "" } else { "s" }
            );
        }
    }
    if failed { exit::FAILED } else { exit::OK }
}

/// The line `tools` and `run` add when a server cannot be reached: the
/// `doctor` command line that examines the same servers.
pub(crate) fn hint(file: Option<&Path>, server: &ServerFlags) -> String {
    let mut line = "pipewright doctor".to_owned();
    if let Some(file) = file {
        line.push(' ');
        line.push_str(&quoted(&file.display().to_string()));
    }
    if let Some(url) = &server.url {
        line.push_str(" --url ");
        line.push_str(&quoted(url));
    }
    for s in &server.servers {
        line.push_str(" --server ");
        line.push_str(&quoted(&format!("{}={}", s.name, s.value)));
    }
    format!("hint: `{line}` checks each server step by step and says what to do")
}

/// `word`, in single quotes when a shell would split or expand it.
fn quoted(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain && !word.is_empty() {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// One server's checklist as text, every line printable.
fn text(report: &Report) -> String {
    report
        .lines()
        .iter()
        .map(|l| format!("{}\n", printable(l)))
        .collect()
}
