//! `pipewright check FILE…`: load and validate, print diagnostics.

use std::path::PathBuf;

use clap::Args;

use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::options::exit;
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
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Exit 0 when every file is valid (warnings allowed), 2 otherwise.
pub fn check(args: &CheckArgs, settings: &Settings) -> u8 {
    let mut bad = false;
    for path in &args.files {
        let name = path.display().to_string();
        let (source, loaded) =
            load_file_with(path, args.dialect, &settings.load_options(Vec::new()));
        let errors = pipewright_headless::report_diagnostics(&name, &source, &loaded);
        let warnings = loaded.warnings().count();
        if errors {
            bad = true;
            eprintln!(
                "{name}: {} error(s), {warnings} warning(s)",
                loaded.errors().count()
            );
        } else if let Some(p) = &loaded.pipeline {
            let nodes: usize = p.compositions.iter().map(|c| c.nodes.len()).sum();
            println!(
                "{name}: ok ({} composition(s), {nodes} node(s), {warnings} warning(s))",
                p.compositions.len()
            );
        }
    }
    if bad { exit::INVALID } else { exit::OK }
}
