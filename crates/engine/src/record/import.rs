//! Recordings made by something other than `pipewright record`, read as
//! sessions are: a HAR file of Streamable HTTP traffic ([`har`]) and a run
//! pipewright saved ([`runs`]).

pub mod har;
pub mod runs;
