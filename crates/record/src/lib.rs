//! The live recorder behind `pipewright record`: an agent's MCP session
//! with one server passed through unchanged and kept as a session file
//! (the engine's `record::session` format), for `pipewright new`
//! to turn into a pipeline.
//!
//! - [`stdio`]: the server started by the recorder, bytes pumped both ways
//!   over its stdin and stdout, its stderr passed on and kept.
//! - [`http`]: a reverse proxy in front of a Streamable HTTP server, one
//!   session file per `Mcp-Session-Id`.
//! - [`wrap`]: a client's config file with every server put behind the
//!   recorder, and put back byte for byte.
//! - [`lines`]: the line per call and the summary a terminal shows.
//! - [`secrets`]: which values are masked before anything is written.
//!
//! The bytes never wait on the recording: the pumps hand copies to one
//! writer thread over a bounded channel (`sink`), which cuts them into
//! messages (`frame`) and writes them.

mod frame;
pub mod http;
pub mod lines;
pub mod secrets;
mod sink;
pub mod stdio;
pub mod wrap;

pub use sink::{Notice, Report, Written};

/// What a session file says wrote it.
pub const RECORDER: &str = concat!("pipewright ", env!("CARGO_PKG_VERSION"));

/// The folder session files go to when none is given.
pub const DEFAULT_OUT: &str = "recordings";

/// Now, RFC 3339 in UTC to the millisecond.
fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now
        .replace_nanosecond(now.millisecond() as u32 * 1_000_000)
        .unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
