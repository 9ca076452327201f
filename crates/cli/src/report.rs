//! How the command line reports a usage error on stderr; a load's
//! diagnostics and a trace it could not save are reported as `serve`
//! reports them (`pipewright_serve::report`).

pub use pipewright_serve::report::{keep, report_diagnostics};

use pipewright_engine::mcp::ConnectOptions;
use pipewright_engine::options::exit;
use pipewright_engine::settings::Settings;

/// Prints a usage error and gives its exit code.
pub(crate) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {}", super::output::printable(&msg.to_string()));
    exit::INVALID
}

/// The options of the command line's connections: as `settings` say, a
/// login's messages on stderr.
pub fn connect_options(settings: &Settings) -> ConnectOptions {
    settings.connect_options(|text| eprintln!("{text}"))
}
