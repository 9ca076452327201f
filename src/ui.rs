//! The workbench: `pipewright edit FILE`. A ratatui app that pairs a YAML
//! editor with a live DAG view and a per-node trace inspector, driving the
//! engine's session. Nothing here is needed by the engine.

pub mod editor;
pub mod state;
pub mod theme;
