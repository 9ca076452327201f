//! `pipewright convert FILE`: print the native YAML of a Fibe or Discord
//! pipeline file.

use pipewright_engine::settings::Settings;
use std::path::PathBuf;

use clap::Args;

use pipewright_engine::file::import::{self, Dialect};
use pipewright_engine::options::exit;

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// A Fibe `fibe_pipeline` or Discord `mcp_pipeline` JSON (or YAML) file.
    pub file: PathBuf,
    /// Read the file as this dialect instead of detecting it.
    #[arg(long, value_parser = crate::choice::choice::<Dialect>(), default_value = "auto")]
    pub dialect: Dialect,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Prints the native YAML on stdout; exit 2 with diagnostics when the file
/// cannot be converted or the result would not load.
pub fn convert(args: &ConvertArgs, settings: &Settings) -> u8 {
    let name = args.file.display().to_string();
    let source = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot read `{name}`: {e}");
            return exit::INVALID;
        }
    };
    let conv = match import::convert(&source, args.dialect, settings.fibe) {
        Ok(c) => c,
        Err(d) => {
            eprintln!("{}", d.render(&name, Some(&source)));
            return exit::INVALID;
        }
    };
    if conv.dialect == Dialect::Native {
        eprintln!("{name}: already a native pipewright file; nothing to convert");
        return exit::INVALID;
    }
    // Load through the importer so problems the native loader finds are
    // shown at their place in the original file too.
    let loaded = pipewright_engine::file::open::load_str_with(
        &source,
        conv.dialect,
        &settings.load_options(Vec::new()),
    );
    if pipewright_headless::report_diagnostics(&name, &source, &loaded) {
        eprintln!("{name}: not converted: the file has errors");
        return exit::INVALID;
    }
    print!("{}", conv.yaml);
    exit::OK
}
