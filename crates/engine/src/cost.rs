//! What a call costs and how many tokens it uses: the figures a server
//! [`reported`] in `_meta`, the [`pricing`] table, and [`tokens`] counted
//! with a real tokenizer.

pub mod pricing;
pub(crate) mod reported;
pub mod tokens;
