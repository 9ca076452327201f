//! `pipewright edit FILE` (and `pipewright FILE`): the flags of the
//! workbench, read and checked here, and the workbench's outcome turned
//! into an exit code. The workbench crate takes the values and knows no
//! command line.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::flags::FileFlags;
use pipewright_engine::options::exit;
use pipewright_engine::settings::Settings;
use pipewright_workbench::{EditError, EditOptions};

/// Arguments of `edit`.
#[derive(Debug, Args)]
pub struct EditArgs {
    /// The pipeline file to open (created on the first save if missing;
    /// with --record, `pipeline.yml` when none is given).
    #[arg(required_unless_present = "record")]
    pub file: Option<PathBuf>,
    /// Open following a recording: a session file `pipewright record` is
    /// writing, or a folder of them (its newest session, then each new
    /// one). Each call is drawn as a node as it is answered, with the
    /// references inferred so far; W writes the pipeline.
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,
    #[command(flatten)]
    pub flags: FileFlags,
    /// Colour theme: dark, light, high-contrast, or a file in the config
    /// directory's themes/.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Offer "durable run" in the palette: run the saved file on Restate
    /// (its ingress at `restate://HOST:PORT`), where a `pipewright worker`
    /// holds it.
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: Option<String>,
    /// With --on: Restate's admin API (default port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

impl EditArgs {
    /// `pipewright FILE`: the workbench with Fibe's caps and the servers'
    /// flags as given, every other option at its default.
    pub fn from_file(
        file: PathBuf,
        fibe: crate::flags::FibeFlags,
        connect: crate::flags::ConnectFlags,
    ) -> EditArgs {
        EditArgs {
            file: Some(file),
            record: None,
            fibe,
            connect,
            flags: FileFlags::default(),
            theme: None,
            on: None,
            restate_admin: None,
        }
    }

    /// The workbench's options: `Err` is a usage error, said in a sentence.
    fn options(self) -> Result<EditOptions, String> {
        let flags = self.flags;
        let vars = pipewright_engine::options::parse_vars(&flags.vars)?;
        let timeout =
            pipewright_engine::options::duration_flag("timeout", flags.timeout.as_deref())?;
        let restate = self
            .on
            .as_deref()
            .map(|on| {
                pipewright_engine::run::durable::client::Restate::parse(
                    on,
                    self.restate_admin.as_deref(),
                )
            })
            .transpose()?;
        Ok(EditOptions {
            file: self.file.unwrap_or_else(|| PathBuf::from("pipeline.yml")),
            record: self.record,
            composition: flags.composition,
            case: flags.case,
            vars,
            url: flags.server.url,
            servers: flags.server.servers,
            timeout,
            theme: self.theme,
            restate,
            // A new file starts from the built-in demo server's tools.
            scaffold_tools: pipewright_demo::tool_definitions(),
        })
    }
}

/// Opens the workbench; returns the exit code.
pub async fn edit(args: EditArgs, settings: Settings) -> u8 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "pipewright edit: needs a terminal (use `pipewright run {}` in scripts and CI)",
            args.file
                .as_deref()
                .unwrap_or(std::path::Path::new("FILE"))
                .display()
        );
        return exit::INVALID;
    }
    let options = match args.options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    match pipewright_workbench::edit(options, settings).await {
        Ok(code) => code,
        Err(EditError::Invalid(e)) => {
            eprintln!("error: {e}");
            exit::INVALID
        }
        Err(e @ EditError::Terminal(_)) => {
            eprintln!("pipewright edit: {e}");
            exit::FAILED
        }
    }
}
