//! `pipewright completions SHELL`: shell completion scripts (clap_complete).

use clap::Args;
use clap_complete::Shell;

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script of `cmd` (the whole command line) on
/// stdout.
pub fn completions(args: &CompletionsArgs, mut cmd: clap::Command) -> u8 {
    clap_complete::generate(args.shell, &mut cmd, "pipewright", &mut std::io::stdout());
    pipewright_engine::options::exit::OK
}
