//! Completion at a place in a pipeline file's text.

use crate::engine::diag::Pos;

use super::Knowledge;

/// What a completion item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A tool a server listed (`tool:`).
    Tool,
    /// An argument key from the tool's `inputSchema`.
    Argument,
    /// An `enum` or `const` value of an argument.
    Value,
    /// A node id in a `${…}` reference or `needs:`.
    Node,
    /// A path into a node's output (`${find.users`).
    Path,
    /// `${var.X}`.
    Variable,
    /// `${env.X}`.
    Env,
    /// `${item…}` inside `for_each`.
    Item,
    /// A jq builtin in `transform:` or `when:`.
    Builtin,
    /// A key of the file format.
    Key,
}

/// One thing that may be written at the place.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What the list shows and filters on.
    pub label: String,
    pub kind: Kind,
    /// One line beside the label: a type, `required`, a server.
    pub detail: Option<String>,
    /// A longer description (a tool's or an argument's).
    pub doc: Option<String>,
    /// The text that replaces the range.
    pub insert: String,
}

/// The items for a place and the range of its line they replace (the word
/// typed so far).
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// 1-based line of the place.
    pub line: u32,
    /// 1-based columns (in characters) of the range replaced: `from` is
    /// where the typed word starts, `to` the place itself.
    pub from: u32,
    pub to: u32,
    pub items: Vec<Item>,
}

/// What may be written at `at` in `text`, filtered by the word typed
/// before it. `None` when nothing is known for the place.
pub fn complete(text: &str, at: Pos, k: &Knowledge<'_>) -> Option<Completion> {
    let _ = (text, at, k);
    None
}
