//! What an agent did, kept and read back: a live MCP session between a
//! client and a server, as `pipewright record` saves it, in, and the calls
//! it made out (the front half of `pipewright new --from`).
//!
//! - [`session`]: the session file (JSON Lines, versioned): its header,
//!   one line per message each way with its time, the server's stderr, and
//!   how the session ended; a writer that masks secrets and streams to
//!   disk, and a reader that checks every line and says where one is bad.
//! - [`calls`]: a session's messages paired into the calls the agent made,
//!   input-required rounds, questions and task polls folded into them.
//! - [`import`]: a HAR file and a saved run read as recordings.
//! - [`infer`]: the calls of a session as the pipeline's steps, with the
//!   references the value-flow rules find; [`draft`]: that pipeline
//!   before it is written; [`merge`]: one or several recordings to that
//!   draft (repeated runs of a task merged: what differs becomes inputs).
//! - [`emit`]: the draft written as the pipeline's YAML, with its
//!   cassette; [`prove`]: the draft resolved and replayed against the
//!   recording before it is written, what does not replay demoted;
//!   [`savings`]: what serving the pipeline saves an agent.
//! - [`write`]: all of `new --from` but the files: recordings in, the
//!   proved pipeline, its cassette and a summary out.

pub mod calls;
pub mod draft;
pub(crate) mod emit;
pub mod import;
pub(crate) mod infer;
pub(crate) mod merge;
pub(crate) mod prove;
pub mod savings;
pub mod session;
pub mod write;

#[cfg(test)]
pub(crate) mod testing;
