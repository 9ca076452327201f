//! Reading a pipeline file: its bytes in (native YAML/JSON, or Fibe and
//! Discord JSON through [`import`]), the validated [`model`] and every
//! [`diag`]nostic with its line and column out.

pub mod graph;
pub mod import;
pub mod keys;
pub mod loader;
pub mod model;
pub mod open;
pub mod schema;
pub mod yaml;
