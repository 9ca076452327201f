//! The parsed shape of the reference language: templates, references,
//! roots and path segments, and how each prints. The parser builds these;
//! the resolver reads them.

use std::fmt;

/// Root names that are not node ids: `${var.X}`, `${env.X}` and `${item}`.
/// The loader must reject nodes with these ids.
pub const RESERVED_ROOTS: [&str; 3] = ["var", "env", "item"];

/// Whether `id` can be referenced as `${id}`: an ASCII letter or `_`, then
/// letters, digits, `_` or `-`, and not one of [`RESERVED_ROOTS`].
pub fn is_valid_node_id(id: &str) -> bool {
    is_node_id_shape(id) && !RESERVED_ROOTS.contains(&id)
}

pub(super) fn is_node_id_shape(id: &str) -> bool {
    let mut bytes = id.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Characters that may appear in a field name written after a `.`.
pub(super) fn is_bare_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// A parsed template string: literal text and references in source order.
///
/// A template without references is exactly one [`Part::Lit`] (empty for
/// the empty string); otherwise literal parts are never empty and never
/// adjacent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<Part>,
}

/// One piece of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text, with `$${` escapes already turned into `${`.
    Lit(String),
    /// A `${...}` reference.
    Ref(Reference),
}

impl Template {
    /// A template holding only `text`.
    pub fn literal(text: impl Into<String>) -> Self {
        Self {
            parts: vec![Part::Lit(text.into())],
        }
    }

    /// True when the template contains no reference.
    pub fn is_literal(&self) -> bool {
        !self.parts.iter().any(|p| matches!(p, Part::Ref(_)))
    }

    /// The text of a template without references.
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Lit(text)] => Some(text),
            _ => None,
        }
    }

    /// The reference when the whole string is exactly one reference; such a
    /// template resolves to the referenced value with its JSON type.
    pub fn single_ref(&self) -> Option<&Reference> {
        match self.parts.as_slice() {
            [Part::Ref(r)] => Some(r),
            _ => None,
        }
    }

    /// Every reference, in source order.
    pub fn refs(&self) -> impl Iterator<Item = &Reference> {
        self.parts.iter().filter_map(|p| match p {
            Part::Ref(r) => Some(r),
            Part::Lit(_) => None,
        })
    }
}

/// One `${...}` reference. `offset` and `len` are the byte range of the whole
/// `${...}` (whitespace and braces included) in the parsed string.
///
/// `Display` prints the canonical form (`${find.users[0].id}`), which parses
/// back to the same root and path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    pub root: Root,
    pub path: Vec<Segment>,
    pub offset: usize,
    pub len: usize,
}

impl Reference {
    /// A reference not tied to a source position (offset and len are 0).
    pub fn new(root: Root, path: Vec<Segment>) -> Self {
        Self {
            root,
            path,
            offset: 0,
            len: 0,
        }
    }

    /// The node this reference reads, if it reads a node: the id that must be
    /// among the node's `needs`.
    pub fn node_id(&self) -> Option<&str> {
        self.root.node_id()
    }

    /// The reference without `${` and `}`, e.g. `find.users[0].id`.
    pub fn bare(&self) -> impl fmt::Display + '_ {
        Bare(self)
    }
}

struct Bare<'a>(&'a Reference);

impl fmt::Display for Bare<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0.root, PathDisplay(&self.0.path))
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${{{}}}", self.bare())
    }
}

/// What a reference starts from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Root {
    /// `${id...}`: the output of the node `id`.
    Node(String),
    /// `${var.NAME...}`: a variable from `vars:`, a case or `--var`.
    Var(String),
    /// `${env.NAME}`: an environment variable, always a string.
    Env(String),
    /// `${item...}`: the current element of a `for_each` fan-out.
    Item,
}

impl Root {
    /// The node id, when this root is a node.
    pub fn node_id(&self) -> Option<&str> {
        match self {
            Root::Node(id) => Some(id),
            _ => None,
        }
    }
}

/// Prints the root as written in a reference: `find`, `var.NAME`,
/// `env["odd name"]`, `item`.
impl fmt::Display for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Root::Node(id) => f.write_str(id),
            Root::Var(name) => {
                f.write_str("var")?;
                write_field(f, name)
            }
            Root::Env(name) => {
                f.write_str("env")?;
                write_field(f, name)
            }
            Root::Item => f.write_str("item"),
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// `.name` or `["name"]`: a field of an object.
    Field(String),
    /// `[n]`: an array element; negative counts from the end.
    Index(i64),
    /// `[*]`: every element of an array.
    Wildcard,
}

/// Prints `.name` when the name is bare and `["name"]` otherwise.
impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Field(name) => write_field(f, name),
            Segment::Index(i) => write!(f, "[{i}]"),
            Segment::Wildcard => f.write_str("[*]"),
        }
    }
}

/// Displays a path in reference syntax: `.users[0]["odd key"]`.
#[derive(Debug, Clone, Copy)]
pub struct PathDisplay<'a>(pub &'a [Segment]);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|s| write!(f, "{s}"))
    }
}

/// Displays a location inside a JSON value for humans: `args.user_id`,
/// `items[0]`, or `(the whole value)` for the empty path. `base` is printed
/// first (`args`), and may be empty.
pub fn location_text(base: &str, at: &[Segment]) -> String {
    let path = PathDisplay(at).to_string();
    match (base.is_empty(), path.strip_prefix('.')) {
        (true, _) if path.is_empty() => "(the whole value)".to_owned(),
        (true, Some(rest)) => rest.to_owned(),
        _ => format!("{base}{path}"),
    }
}

fn write_field(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    if !name.is_empty() && name.chars().all(is_bare_char) {
        write!(f, ".{name}")
    } else {
        f.write_str("[\"")?;
        for c in name.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c => fmt::Write::write_char(f, c)?,
            }
        }
        f.write_str("\"]")
    }
}
