//! Reading a pipeline file: its bytes in through [`open`] (native YAML/JSON,
//! or Fibe and Discord JSON through [`import`]), the [`loader`] checking
//! every key of [`keys`] section by section, the validated [`model`] with
//! its [`graph`] out, and every diagnostic with its line and column; the
//! [`scaffold`] a new file starts from, `write`, the YAML writer every
//! file pipewright writes goes through, and the MCP revisions a server's
//! `protocol:` names (`protocol`).

pub(crate) mod graph;
pub mod import;
pub mod keys;
pub mod loader;
pub mod model;
pub mod open;
pub(crate) mod protocol;
pub mod scaffold;
pub mod schema;
pub(crate) mod write;
pub mod yaml;
