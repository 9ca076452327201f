//! Pipeline files written as YAML: every writer of the engine (an import's
//! native text, a new file's scaffold, a pinned node's `mock:`, and next a
//! recorded run) writes through here, in the style of pipeline files (two-space
//! indents, block style, a string bare only where YAML reads it back as the
//! same string).
//!
//! - [`pipeline`]: a pipeline in native terms ([`NativePlan`]) written out,
//!   each line remembering where in another file it came from (imports).
//! - [`block`]: a JSON value as block-style YAML under a key (pins).
//! - The quoting every writer shares (`quote`): [`quoted`], [`name`], and
//!   a string bare only where it reads back the same.

pub(crate) mod block;
pub(crate) mod pipeline;
mod quote;

pub use pipeline::{NativePlan, Output, Step, emit};
pub use quote::{name, quoted};
