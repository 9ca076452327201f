//! How the command line reports a usage error on stderr; a load's
//! diagnostics and a trace it could not save are reported as `serve`
//! reports them (`pipewright_serve::report`).

pub use crate::serve::report::{keep, report_diagnostics};

use crate::engine::options::exit;

/// Prints a usage error and gives its exit code.
pub(crate) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {}", super::output::printable(&msg.to_string()));
    exit::INVALID
}
