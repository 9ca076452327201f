//! Pipeline files written as YAML: every writer of the engine (an import's
//! native text, a new file's scaffold, a pinned node's `mock:`, and next a
//! recorded run) writes through here, in the style of pipeline files (two-space
//! indents, block style, a string bare only where YAML reads it back as the
//! same string).
//!
//! - [`pipeline`]: a pipeline in native terms ([`NativePlan`]) written out,
//!   each line remembering where in another file it came from (imports).
//! - [`block`]: a JSON value as block-style YAML under a key (pins).
//! - The quoting every writer shares (`quote`): [`quoted`], [`text`],
//!   [`name`].

pub mod block;
pub mod pipeline;
mod quote;

pub use pipeline::{Emitted, NativePlan, Output, Step, emit};
pub use quote::{name, quoted, text};
