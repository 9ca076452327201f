//! How the command line reports a usage error on stderr; a load's
//! diagnostics, a trace it could not save and a login's messages are
//! reported as every headless driver reports them (`pipewright_headless`).

use pipewright_engine::options::exit;

/// Prints a usage error and gives its exit code.
pub(crate) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {}", super::output::printable(&msg.to_string()));
    exit::INVALID
}
