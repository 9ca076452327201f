//! How the command line reports a load's diagnostics and a usage error on
//! stderr, compiler style.

use crate::engine::file::loader::Loaded;
use crate::options::exit;

/// Prints every diagnostic of a load to stderr; true when there were errors.
pub fn report_diagnostics(file: &str, source: &str, loaded: &Loaded) -> bool {
    for d in &loaded.diagnostics {
        eprintln!("{}\n", d.render(file, Some(source)));
    }
    loaded.has_errors()
}

/// Prints a usage error and gives its exit code.
pub(crate) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {}", super::output::printable(&msg.to_string()));
    exit::INVALID
}
