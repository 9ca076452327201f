//! What a pipeline was written against, pinned: each server's name,
//! version and MCP revision, and each tool the file uses as a normalised
//! definition with its digest (`pipewright.lock`). A tool definition in,
//! its canonical form and `sha256:` digest out; the same digest names a
//! tool in a served result's provenance. The lock file is read and written
//! by [`Lock`]; [`check`] compares it with live servers and lists each
//! [`Drift`] (a server or tool and its [`Change`]s).

mod definition;
mod drift;
mod file;
mod pinned;

pub use definition::{canonical, definition, digest, digest_bytes};
pub use drift::{Change, Drift, check, tool_drift};
pub use file::{FILE_NAME, FORMAT, Lock, LockError, LockedServer, LockedTool, ServerInfo};
pub use pinned::{Pinned, uses};
