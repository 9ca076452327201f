//! `pipewright completions SHELL`: shell completion scripts (clap_complete).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> u8 {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "pipewright", &mut std::io::stdout());
    super::exit::OK
}
