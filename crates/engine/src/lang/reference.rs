//! The `${...}` reference language: templates in node arguments, parsed into
//! literal text and references, and resolved against node outputs, variables,
//! the environment and the current `for_each` item.
//!
//! # Grammar
//!
//! ```text
//! template  := ( literal | "$${" | reference )*
//! reference := "${" ws* root path ws* "}"
//! root      := node-id | "var" name path | "env" name | "item"
//! name      := "." bare | "[" quoted "]"
//! path      := ( "." bare | "[" index "]" | "[*]" | "[" quoted "]" )*
//! node-id   := [A-Za-z_] [A-Za-z0-9_-]*        (not var, env or item)
//! bare      := ( alphanumeric | "_" | "-" )+    (Unicode letters and digits)
//! index     := "-"? [0-9]+                      (fits in an i64)
//! quoted    := '"' ... '"' | "'" ... "'"        (escapes: \" \' \\)
//! ```
//!
//! Decisions a caller must know:
//!
//! - **Whole string keeps its type.** A string that is exactly one reference
//!   resolves to the referenced JSON value. Anything else, including text
//!   that is only whitespace around the reference (`" ${a}"`), interpolates
//!   as text: strings as they are, other values as compact JSON.
//! - **Whitespace** (ASCII) is allowed right after `${` and right before `}`
//!   (`${ find.users }`), nowhere else: not around `.`, not inside `[...]`.
//! - **Escapes.** `$${` is the literal text `${`. Nothing else is an escape:
//!   a `$` not followed by `{` is literal, and in a run of dollars before `{`
//!   only the last two form the escape, so `$$${x}` is the literal text
//!   `$${x}`. A literal `$` directly before a reference cannot be written.
//!   [`escape_literal`] turns any text into a template that means that text.
//! - **Bare fields** after `.` may start with a digit: `${a.0}` reads the
//!   field `"0"`, not index 0 (the error on an array says to write `[0]`).
//! - **`${env.NAME}`** takes no path; environment values are strings.
//! - **Wildcards** map: `${a[*].b}` is the array of every element's `.b`;
//!   `${a[*]}` is `a` itself. Each `[*]` adds one level of nesting and
//!   nothing is flattened, so `${a[*].b[*].c}` is an array of arrays. Every
//!   element must have the rest of the path; an element that lacks it is an
//!   error naming that element's index.
//! - **Negative indexes** count from the end: `[-1]` is the last element.
//! - **Object keys are never templates**; only string values are parsed.
//! - **Offsets** in [`Reference`] and [`SyntaxError`] are byte offsets into
//!   the one string that was parsed, always on character boundaries.

mod ast;
mod parse;
mod resolve;

pub use ast::{
    Part, PathDisplay, RESERVED_ROOTS, Reference, Root, Segment, Template, is_valid_node_id,
    location_text,
};
pub use parse::{
    Located, SyntaxError, collect_refs, escape_literal, parse_template, parse_template_all,
};
pub use resolve::{
    JsonType, NodeLookup, Partial, PathError, PathErrorKind, ResolveError, Scope, resolve_path,
    resolve_reference, resolve_reference_shared, resolve_template, resolve_template_partial,
    resolve_value, resolve_value_partial,
};
