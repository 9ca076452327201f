//! What every headless driver of the engine shares — the command line's
//! commands, `serve` and `worker` — so that none borrows it from another:
//! the stop signals ([`Signals`]), what is reported on stderr (a load's
//! diagnostics, a trace that could not be saved, a login's messages) and
//! the judge a command builds from its flags ([`grader`]). No clap here:
//! the flags are the command line's, their values arrive as values.

mod judge;
mod report;
mod signals;

pub use judge::grader;
pub use report::{connect_options, keep, report_diagnostics};
pub use signals::{Signals, Stop};
