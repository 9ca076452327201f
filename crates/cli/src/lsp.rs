//! `pipewright lsp`: the language server over stdin and stdout, for
//! editors (VS Code, Neovim, Helix …). Its tool-list fetches run on this
//! command's runtime; the server loop runs beside it.

use std::time::Duration;

use clap::Args;

/// Arguments of `lsp`.
#[derive(Debug, Args)]
pub struct LspArgs {
    /// Talk over stdin and stdout (the only transport; accepted because
    /// editors' clients often pass it).
    #[arg(long)]
    pub stdio: bool,
    /// Never connect a file's servers: no tool lists, so no preflight
    /// diagnostics and no tool completion, and no server process started.
    #[arg(long)]
    pub no_connect: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Runs the server until the editor says `exit` or closes stdin; returns
/// the exit code. Fetches still under way get a moment to close their
/// servers, then are dropped (which stops them).
pub async fn lsp(args: LspArgs, settings: pipewright_engine::settings::Settings) -> u8 {
    let options = pipewright_lsp::Options {
        connect: !args.no_connect,
        settings,
    };
    let runtime = tokio::runtime::Handle::current();
    let ended =
        match tokio::task::spawn_blocking(move || pipewright_lsp::serve(options, runtime)).await {
            Ok(ended) => ended,
            Err(e) => {
                eprintln!("pipewright lsp: the server stopped: {e}");
                return 1;
            }
        };
    for task in ended.fetches {
        let abort = task.abort_handle();
        if tokio::time::timeout(Duration::from_secs(3), task)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    ended.code
}
