//! Resolving references against what a run knows so far: node outputs,
//! variables, the environment and the current `for_each` item.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use serde_json::{Map, Value};
use thiserror::Error;

use super::ast::{Part, PathDisplay, Reference, Root, Segment, Template, location_text};
use super::parse::{SyntaxError, parse_template, parse_template_all};
use crate::diag::suggest;

/// What the resolver can read. The executor implements it over a run's
/// recorded outputs; the dry run over whatever has run so far.
pub trait Scope {
    /// The state of node `id`, with its output once it has one.
    fn node(&self, id: &str) -> NodeLookup<'_>;
    /// The value of `${var.NAME}` (`--var` over a case row over `vars:`).
    fn var(&self, name: &str) -> Option<&Value>;
    /// The value of the environment variable `NAME`.
    fn env(&self, name: &str) -> Option<String>;
    /// The current `for_each` element, or `None` outside a fan-out.
    fn item(&self) -> Option<&Value>;
    /// True when an undefined `${var.X}` resolves to its own text.
    fn passes_vars_through(&self) -> bool {
        false
    }
    /// Every node id, for "did you mean" hints on unknown nodes.
    fn node_ids(&self) -> Vec<&str> {
        Vec::new()
    }
    /// Every defined variable name, for "did you mean" hints.
    fn var_names(&self) -> Vec<&str> {
        Vec::new()
    }
}

/// The state of a node as seen by a reference to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeLookup<'a> {
    /// The node ran and this is its output (after its `transform`).
    Output(&'a Value),
    /// The node exists but has not run yet.
    NotRun,
    /// The node was skipped (`when:` was falsy, or a parent did not run).
    Skipped,
    /// The node failed.
    Failed,
    /// There is no node with this id.
    Unknown,
}

/// The JSON type of a value. `Display` prints it as used in a sentence:
/// `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    /// The type of `v`.
    pub fn of(v: &Value) -> Self {
        match v {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Bool,
            Value::Number(_) => Self::Number,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Null => "null",
            Self::Bool => "a boolean",
            Self::Number => "a number",
            Self::String => "a string",
            Self::Array => "an array",
            Self::Object => "an object",
        })
    }
}

/// How many object keys a "has no field" message lists.
const MAX_LISTED_FIELDS: usize = 8;

/// Why a path does not lead to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathErrorKind {
    /// The object has no such field.
    MissingField {
        field: String,
        /// The first few keys of the object, in its order.
        available: Vec<String>,
        /// How many keys the object has in all.
        total: usize,
        /// The key closest to `field`, when it looks like a typo.
        suggestion: Option<String>,
    },
    /// The index is past either end of the array.
    IndexOutOfRange { index: i64, len: usize },
    /// `.field` on something that is not an object.
    NotAnObject { field: String, actual: JsonType },
    /// `[n]` on something that is not an array.
    NotAnArray { index: i64, actual: JsonType },
    /// `[*]` on something that is not an array.
    WildcardOnNonArray { actual: JsonType },
}

/// A path that does not lead to a value. `at` is the path to the value on
/// which the failing step was taken, with the element index in place of each
/// `[*]` that was crossed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.describe(""))]
pub struct PathError {
    pub at: Vec<Segment>,
    pub kind: PathErrorKind,
}

impl PathError {
    /// The message, naming the failing location as `base` followed by
    /// [`PathError::at`] (e.g. base `find` gives `` `find.users[0]` ``).
    pub fn describe(&self, base: &str) -> String {
        let loc = if base.is_empty() && self.at.is_empty() {
            "the value".to_owned()
        } else {
            format!("`{base}{}`", PathDisplay(&self.at))
        };
        match &self.kind {
            PathErrorKind::MissingField {
                field,
                available,
                total,
                suggestion,
            } => {
                let mut m = format!("{loc} has no field `{field}`");
                if *total == 0 {
                    m.push_str(" (it is an empty object)");
                } else {
                    m.push_str(" (its fields are ");
                    for (i, key) in available.iter().enumerate() {
                        let sep = if i == 0 { "" } else { ", " };
                        let _ = write!(m, "{sep}`{key}`");
                    }
                    if *total > available.len() {
                        let _ = write!(m, " and {} more", total - available.len());
                    }
                    m.push(')');
                }
                if let Some(s) = suggestion {
                    let _ = write!(m, "; did you mean `{s}`?");
                }
                m
            }
            PathErrorKind::IndexOutOfRange { index, len } => match len {
                0 => format!("index {index} is out of range: {loc} is an empty array"),
                1 => format!("index {index} is out of range: {loc} has 1 element"),
                n => format!("index {index} is out of range: {loc} has {n} elements"),
            },
            PathErrorKind::NotAnObject { field, actual } => {
                let mut m =
                    format!("cannot read field `{field}`: {loc} is {actual}, not an object");
                if *actual == JsonType::Array && field.parse::<i64>().is_ok() {
                    let _ = write!(m, "; write `[{field}]` to index an array");
                }
                m
            }
            PathErrorKind::NotAnArray { index, actual } => {
                format!("cannot take index `[{index}]`: {loc} is {actual}, not an array")
            }
            PathErrorKind::WildcardOnNonArray { actual } => {
                format!("`[*]` needs an array, but {loc} is {actual}")
            }
        }
    }
}

/// Why a reference could not be resolved. Every message names the reference
/// as written in canonical form, e.g. `` `${find.users[0].id}` ``.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResolveError {
    /// `${var.NAME}` with no such variable.
    #[error("{}", undefined_var(reference, name, suggestion.as_deref()))]
    UndefinedVar {
        reference: String,
        name: String,
        suggestion: Option<String>,
    },
    /// `${env.NAME}` with `NAME` unset.
    #[error("`{reference}`: the environment variable `{name}` is not set")]
    UnsetEnv { reference: String, name: String },
    /// The node exists but has not run yet.
    #[error("`{reference}`: node `{node}` has not run yet")]
    NodeNotRun { reference: String, node: String },
    /// The node was skipped and has no output.
    #[error("`{reference}`: node `{node}` was skipped, so it has no output")]
    NodeSkipped { reference: String, node: String },
    /// The node failed and has no output.
    #[error("`{reference}`: node `{node}` failed, so it has no output")]
    NodeFailed { reference: String, node: String },
    /// No node has this id.
    #[error("`{reference}`: there is no node `{node}`{}", did_you_mean(suggestion.as_deref()))]
    UnknownNode {
        reference: String,
        node: String,
        suggestion: Option<String>,
    },
    /// `${item}` used where there is no current `for_each` element.
    #[error("`{reference}`: `item` only exists in the args of a node with `for_each`")]
    ItemOutsideForEach { reference: String },
    /// The root resolved but the path does not lead to a value; `base` is the
    /// root as written (`find`, `var.X`, `item`).
    #[error("`{reference}`: {}", error.describe(base))]
    Path {
        reference: String,
        base: String,
        error: Box<PathError>,
    },
    /// A string inside the resolved value is not a valid template; `at` is
    /// where the string sits in that value.
    #[error("{}", syntax_message(at, error))]
    Syntax {
        at: Vec<Segment>,
        error: SyntaxError,
    },
}

impl ResolveError {
    /// The canonical text of the reference that failed, when one did.
    pub fn reference(&self) -> Option<&str> {
        match self {
            Self::UndefinedVar { reference, .. }
            | Self::UnsetEnv { reference, .. }
            | Self::NodeNotRun { reference, .. }
            | Self::NodeSkipped { reference, .. }
            | Self::NodeFailed { reference, .. }
            | Self::UnknownNode { reference, .. }
            | Self::ItemOutsideForEach { reference }
            | Self::Path { reference, .. } => Some(reference),
            Self::Syntax { .. } => None,
        }
    }

    /// Prefixes the location of a syntax error with the key or index that
    /// led to it.
    fn under(mut self, step: impl FnOnce() -> Segment) -> Self {
        if let Self::Syntax { at, .. } = &mut self {
            at.insert(0, step());
        }
        self
    }
}

fn undefined_var(reference: &str, name: &str, suggestion: Option<&str>) -> String {
    let var = Root::Var(name.to_owned());
    let mut m = if reference == format!("${{{var}}}") {
        format!("`{reference}` is not defined")
    } else {
        format!("`{reference}`: `{var}` is not defined")
    };
    if let Some(s) = suggestion {
        let _ = write!(m, " (did you mean `{s}`?)");
    }
    let _ = write!(
        m,
        "; pass it with --var {name}=... or give it a default under `vars:`"
    );
    m
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

fn syntax_message(at: &[Segment], error: &SyntaxError) -> String {
    if at.is_empty() {
        format!("invalid template: {error}")
    } else {
        format!("invalid template in `{}`: {error}", location_text("", at))
    }
}

/// Follows `path` from `root`. Wildcards build new arrays; other steps only
/// borrow, so only the final value is copied.
pub fn resolve_path(root: &Value, path: &[Segment]) -> Result<Value, PathError> {
    walk(root, path).map(Cow::into_owned)
}

fn walk<'v>(v: &'v Value, path: &[Segment]) -> Result<Cow<'v, Value>, PathError> {
    let mut cur = v;
    for (i, segment) in path.iter().enumerate() {
        let fail = |kind| PathError {
            at: path[..i].to_vec(),
            kind,
        };
        cur = match (segment, cur) {
            (Segment::Field(field), Value::Object(map)) => match map.get(field) {
                Some(next) => next,
                None => return Err(fail(missing_field(field, map))),
            },
            (Segment::Field(field), other) => {
                return Err(fail(PathErrorKind::NotAnObject {
                    field: field.clone(),
                    actual: JsonType::of(other),
                }));
            }
            (Segment::Index(index), Value::Array(items)) => {
                match element(items.len(), *index).and_then(|k| items.get(k)) {
                    Some(next) => next,
                    None => {
                        return Err(fail(PathErrorKind::IndexOutOfRange {
                            index: *index,
                            len: items.len(),
                        }));
                    }
                }
            }
            (Segment::Index(index), other) => {
                return Err(fail(PathErrorKind::NotAnArray {
                    index: *index,
                    actual: JsonType::of(other),
                }));
            }
            (Segment::Wildcard, Value::Array(_)) if i + 1 == path.len() => {
                // `list[*]` with nothing after it names the list itself:
                // borrowed, not rebuilt item by item (a fan-out over a
                // million items is counted and refused with no copy).
                return Ok(Cow::Borrowed(cur));
            }
            (Segment::Wildcard, Value::Array(items)) => {
                let rest = &path[i + 1..];
                let mut out = Vec::with_capacity(items.len());
                for (k, item) in items.iter().enumerate() {
                    match walk(item, rest) {
                        Ok(next) => out.push(next.into_owned()),
                        Err(mut e) => {
                            let mut at = Vec::with_capacity(i + 1 + e.at.len());
                            at.extend_from_slice(&path[..i]);
                            at.push(Segment::Index(i64::try_from(k).unwrap_or(i64::MAX)));
                            at.append(&mut e.at);
                            e.at = at;
                            return Err(e);
                        }
                    }
                }
                return Ok(Cow::Owned(Value::Array(out)));
            }
            (Segment::Wildcard, other) => {
                return Err(fail(PathErrorKind::WildcardOnNonArray {
                    actual: JsonType::of(other),
                }));
            }
        };
    }
    Ok(Cow::Borrowed(cur))
}

/// The position of `index` in an array of `len` elements; negative counts
/// from the end.
fn element(len: usize, index: i64) -> Option<usize> {
    if index >= 0 {
        usize::try_from(index).ok().filter(|&k| k < len)
    } else {
        usize::try_from(index.unsigned_abs())
            .ok()
            .filter(|&back| back <= len)
            .map(|back| len - back)
    }
}

fn missing_field(field: &str, map: &Map<String, Value>) -> PathErrorKind {
    PathErrorKind::MissingField {
        field: field.to_owned(),
        available: map.keys().take(MAX_LISTED_FIELDS).cloned().collect(),
        total: map.len(),
        suggestion: suggest(field, map.keys().map(String::as_str)).map(str::to_owned),
    }
}

/// Resolves one reference to the value it names.
pub fn resolve_reference(r: &Reference, scope: &dyn Scope) -> Result<Value, ResolveError> {
    lookup(r, scope).map(Cow::into_owned)
}

/// Resolves one reference, borrowing the value from `scope` when the
/// reference names a value that is there (no copy of a fan-out's items).
pub fn resolve_reference_shared<'s>(
    r: &Reference,
    scope: &'s dyn Scope,
) -> Result<Cow<'s, Value>, ResolveError> {
    lookup(r, scope)
}

fn lookup<'s>(r: &Reference, scope: &'s dyn Scope) -> Result<Cow<'s, Value>, ResolveError> {
    let base: Cow<'s, Value> = match &r.root {
        Root::Node(id) => {
            let node = || id.clone();
            match scope.node(id) {
                NodeLookup::Output(v) => Cow::Borrowed(v),
                NodeLookup::NotRun => {
                    return Err(ResolveError::NodeNotRun {
                        reference: r.to_string(),
                        node: node(),
                    });
                }
                NodeLookup::Skipped => {
                    return Err(ResolveError::NodeSkipped {
                        reference: r.to_string(),
                        node: node(),
                    });
                }
                NodeLookup::Failed => {
                    return Err(ResolveError::NodeFailed {
                        reference: r.to_string(),
                        node: node(),
                    });
                }
                NodeLookup::Unknown => {
                    return Err(ResolveError::UnknownNode {
                        reference: r.to_string(),
                        node: node(),
                        suggestion: suggest(id, scope.node_ids()).map(str::to_owned),
                    });
                }
            }
        }
        Root::Var(name) => match scope.var(name) {
            Some(v) => Cow::Borrowed(v),
            None if scope.passes_vars_through() => {
                return Ok(Cow::Owned(Value::String(r.to_string())));
            }
            None => {
                return Err(ResolveError::UndefinedVar {
                    reference: r.to_string(),
                    name: name.clone(),
                    suggestion: suggest(name, scope.var_names()).map(str::to_owned),
                });
            }
        },
        Root::Env(name) => match scope.env(name) {
            Some(value) => Cow::Owned(Value::String(value)),
            None => {
                return Err(ResolveError::UnsetEnv {
                    reference: r.to_string(),
                    name: name.clone(),
                });
            }
        },
        Root::Item => match scope.item() {
            Some(v) => Cow::Borrowed(v),
            None => {
                return Err(ResolveError::ItemOutsideForEach {
                    reference: r.to_string(),
                });
            }
        },
    };
    if r.path.is_empty() {
        return Ok(base);
    }
    let walked = match base {
        Cow::Borrowed(v) => walk(v, &r.path),
        Cow::Owned(v) => walk(&v, &r.path).map(|w| Cow::Owned(w.into_owned())),
    };
    walked.map_err(|error| ResolveError::Path {
        reference: r.to_string(),
        base: r.root.to_string(),
        error: Box::new(error),
    })
}

/// Appends a value as text: strings as they are, everything else as
/// compact JSON.
fn interpolate(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => out.push_str(s),
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Resolves a template: a single whole-string reference keeps the JSON type
/// of its value; anything else becomes a string.
pub fn resolve_template(t: &Template, scope: &dyn Scope) -> Result<Value, ResolveError> {
    if let Some(r) = t.single_ref() {
        return resolve_reference(r, scope);
    }
    let mut out = String::new();
    for part in &t.parts {
        match part {
            Part::Lit(text) => out.push_str(text),
            Part::Ref(r) => interpolate(&mut out, lookup(r, scope)?.as_ref()),
        }
    }
    Ok(Value::String(out))
}

/// Resolves every string inside `v` as a template (object keys are left as
/// they are), stopping at the first error.
pub fn resolve_value(v: &Value, scope: &dyn Scope) -> Result<Value, ResolveError> {
    match v {
        Value::String(s) if s.contains('$') => {
            let t = parse_template(s).map_err(|error| ResolveError::Syntax {
                at: Vec::new(),
                error,
            })?;
            resolve_template(&t, scope)
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                resolve_value(item, scope)
                    .map_err(|e| e.under(|| Segment::Index(i64::try_from(i).unwrap_or(i64::MAX))))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(key, item)| {
                resolve_value(item, scope)
                    .map(|resolved| (key.clone(), resolved))
                    .map_err(|e| e.under(|| Segment::Field(key.clone())))
            })
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// The outcome of a partial resolution (dry run).
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    /// The value with every resolvable reference resolved. A reference that
    /// waits on a node that has not run (or on the `for_each` item) reads
    /// `<from find.users[0].id>`; a set `${env.X}` reads `<env.X>` so that
    /// secrets never reach a plan; a reference that failed is left as its
    /// canonical `${...}` text and reported in `errors`.
    pub value: Value,
    /// How many references wait on a node that has not run or on the item.
    pub pending: usize,
    /// Errors that running would not fix: undefined vars, unset env, paths
    /// that do not exist in outputs already known, skipped or failed nodes,
    /// unknown nodes and syntax errors.
    pub errors: Vec<ResolveError>,
}

impl Partial {
    /// True when every reference resolved.
    pub fn is_complete(&self) -> bool {
        self.pending == 0 && self.errors.is_empty()
    }
}

/// Resolves what can be resolved now in `v`, for a dry run or a preview.
/// Never fails; see [`Partial`] for what stands in for the rest.
pub fn resolve_value_partial(v: &Value, scope: &dyn Scope) -> Partial {
    let mut acc = Partial {
        value: Value::Null,
        pending: 0,
        errors: Vec::new(),
    };
    acc.value = partial_value(v, scope, &mut acc, &mut Vec::new());
    acc
}

/// [`resolve_value_partial`] for one parsed template.
pub fn resolve_template_partial(t: &Template, scope: &dyn Scope) -> Partial {
    let mut acc = Partial {
        value: Value::Null,
        pending: 0,
        errors: Vec::new(),
    };
    acc.value = partial_template(t, scope, &mut acc);
    acc
}

fn partial_value(v: &Value, scope: &dyn Scope, acc: &mut Partial, at: &mut Vec<Segment>) -> Value {
    match v {
        Value::String(s) if s.contains('$') => match parse_template_all(s) {
            Ok(t) => partial_template(&t, scope, acc),
            Err(errors) => {
                acc.errors
                    .extend(errors.into_iter().map(|error| ResolveError::Syntax {
                        at: at.clone(),
                        error,
                    }));
                v.clone()
            }
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    at.push(Segment::Index(i64::try_from(i).unwrap_or(i64::MAX)));
                    let resolved = partial_value(item, scope, acc, at);
                    at.pop();
                    resolved
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| {
                    at.push(Segment::Field(key.clone()));
                    let resolved = partial_value(item, scope, acc, at);
                    at.pop();
                    (key.clone(), resolved)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A reference's stand-in in a partial resolution.
enum Got<'s> {
    Value(Cow<'s, Value>),
    Text(String),
}

fn partial_template(t: &Template, scope: &dyn Scope, acc: &mut Partial) -> Value {
    if let Some(r) = t.single_ref() {
        return match partial_ref(r, scope, acc) {
            Got::Value(v) => v.into_owned(),
            Got::Text(text) => Value::String(text),
        };
    }
    let mut out = String::new();
    for part in &t.parts {
        match part {
            Part::Lit(text) => out.push_str(text),
            Part::Ref(r) => match partial_ref(r, scope, acc) {
                Got::Value(v) => interpolate(&mut out, &v),
                Got::Text(text) => out.push_str(&text),
            },
        }
    }
    Value::String(out)
}

fn partial_ref<'s>(r: &Reference, scope: &'s dyn Scope, acc: &mut Partial) -> Got<'s> {
    if let Root::Env(name) = &r.root
        && scope.env(name).is_some()
    {
        return Got::Text(format!("<{}>", r.bare()));
    }
    match lookup(r, scope) {
        Ok(v) => Got::Value(v),
        Err(ResolveError::NodeNotRun { .. } | ResolveError::ItemOutsideForEach { .. }) => {
            acc.pending += 1;
            Got::Text(format!("<from {}>", r.bare()))
        }
        Err(e) => {
            acc.errors.push(e);
            Got::Text(r.to_string())
        }
    }
}

#[cfg(test)]
mod tests;
