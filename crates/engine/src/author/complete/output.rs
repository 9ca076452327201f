//! What a reference's root holds while it is typed — a node's recorded
//! output, or its tool's `outputSchema` — and the next steps into it along
//! a path (`.users[0].`), each with its type: a recorded value's own, or
//! the schema's (`integer`, `string · email`, its description).

use serde_json::Value;

use crate::author::type_word;

/// What is known of a node's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Known {
    /// The output recorded by a run.
    Value(Value),
    /// What the tool's `outputSchema` says: `top` is the schema of the
    /// reference's root (the output, or a list of outputs for a fan-out),
    /// `doc` the tool's whole schema, which `$ref`s point into.
    Schema { doc: Value, top: Value },
}

/// One step that may follow the path: its label (`count`, `0]`), its
/// type, and a description when the schema has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub label: String,
    pub detail: String,
    pub doc: Option<String>,
}

/// How many `$ref`s are followed in a row (a schema may point at itself).
const MAX_REFS: usize = 16;

impl Known {
    /// A node's output as its tool's `outputSchema` describes it; a
    /// fan-out's output is the list of its calls' outputs.
    pub fn schema(schema: &Value, fan_out: bool) -> Self {
        let top = if fan_out {
            serde_json::json!({"type": "array", "items": schema})
        } else {
            schema.clone()
        };
        Known::Schema {
            doc: schema.clone(),
            top,
        }
    }

    /// One element of the list at `path` (what `${item}` holds in a
    /// `for_each` over it).
    pub fn element(&self, path: &str) -> Option<Known> {
        match self {
            Known::Value(v) => Some(Known::Value(walk(v, path)?.as_array()?.first()?.clone())),
            Known::Schema { doc, top } => {
                let list = walk_schema(doc, top, path)?;
                Some(Known::Schema {
                    top: items(doc, list)?.clone(),
                    doc: doc.clone(),
                })
            }
        }
    }

    /// The next steps at `path`: the fields after a `.`, `0]` and `*]`
    /// after a `[` into a list.
    pub fn steps(&self, path: &str) -> Vec<Step> {
        let (base, after_dot) = match (path.strip_suffix('.'), path.strip_suffix('[')) {
            (Some(b), _) => (b, true),
            (_, Some(b)) => (b, false),
            _ => return Vec::new(),
        };
        match self {
            Known::Value(v) => walk(v, base).map_or_else(Vec::new, |at| value_steps(at, after_dot)),
            Known::Schema { doc, top } => walk_schema(doc, top, base)
                .map_or_else(Vec::new, |at| schema_steps(doc, at, after_dot)),
        }
    }
}

fn step(label: impl Into<String>, detail: String, doc: Option<String>) -> Step {
    Step {
        label: label.into(),
        detail,
        doc,
    }
}

fn value_steps(at: &Value, after_dot: bool) -> Vec<Step> {
    match at {
        Value::Object(m) if after_dot => m
            .iter()
            .map(|(key, val)| step(key, json_type(val), None))
            .collect(),
        Value::Array(a) if !after_dot => match a.first() {
            Some(first) => vec![
                step(
                    "0]",
                    format!("first of {} · {}", a.len(), json_type(first)),
                    None,
                ),
                step("*]", "every element".into(), None),
            ],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn schema_steps(doc: &Value, at: &Value, after_dot: bool) -> Vec<Step> {
    if after_dot {
        return properties(doc, at)
            .into_iter()
            .map(|(name, s)| step(name, describe(doc, s), description(doc, s)))
            .collect();
    }
    match items(doc, at) {
        Some(item) => vec![
            step(
                "0]",
                format!("first element · {}", describe(doc, item)),
                description(doc, item),
            ),
            step("*]", "every element".into(), None),
        ],
        None => Vec::new(),
    }
}

/// `v` at `path` (`.users[0].name`, `[*]` read as the first element).
pub fn walk<'v>(mut v: &'v Value, path: &str) -> Option<&'v Value> {
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Some(v);
            }
            v = v.get(&r[..end])?;
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = r[..end].trim_matches(['"', '\'']);
            v = match (inner, v) {
                ("*", Value::Array(a)) => a.first()?,
                (i, Value::Array(a)) => {
                    let i: i64 = i.parse().ok()?;
                    let i = if i < 0 { a.len() as i64 + i } else { i };
                    a.get(usize::try_from(i).ok()?)?
                }
                (key, Value::Object(_)) => v.get(key)?,
                _ => return None,
            };
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(v)
}

/// The schema at `path` under `top` (`.users[0]`: the `users` property's
/// `items`), `$ref`s resolved in `doc`.
fn walk_schema<'v>(doc: &'v Value, top: &'v Value, path: &str) -> Option<&'v Value> {
    let mut s = resolve(doc, top);
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Some(s);
            }
            s = property(doc, s, &r[..end])?;
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = r[..end].trim_matches(['"', '\'']);
            s = if inner == "*" || inner.parse::<i64>().is_ok() {
                items(doc, s)?
            } else {
                property(doc, s, inner)?
            };
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(s)
}

/// `s` with its `$ref` (a pointer into `doc`, `#/$defs/User`) followed.
fn resolve<'v>(doc: &'v Value, mut s: &'v Value) -> &'v Value {
    for _ in 0..MAX_REFS {
        let Some(target) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| doc.pointer(p))
        else {
            break;
        };
        s = target;
    }
    s
}

/// `s` resolved and the branches of its `allOf`/`anyOf`/`oneOf`, each
/// resolved: the schemas a value at this place may match.
fn variants<'v>(doc: &'v Value, s: &'v Value) -> Vec<&'v Value> {
    let s = resolve(doc, s);
    let mut out = vec![s];
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = s.get(key) {
            out.extend(branches.iter().map(|b| resolve(doc, b)));
        }
    }
    out
}

/// The properties an object at `s` may have, in the schema's order.
fn properties<'v>(doc: &'v Value, s: &'v Value) -> Vec<(&'v String, &'v Value)> {
    let mut out: Vec<(&String, &Value)> = Vec::new();
    for v in variants(doc, s) {
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (name, p) in props {
                if !out.iter().any(|(n, _)| *n == name) {
                    out.push((name, p));
                }
            }
        }
    }
    out
}

fn property<'v>(doc: &'v Value, s: &'v Value, name: &str) -> Option<&'v Value> {
    variants(doc, s)
        .into_iter()
        .find_map(|v| v.get("properties")?.get(name))
        .map(|p| resolve(doc, p))
}

/// The schema of a list's elements at `s`.
fn items<'v>(doc: &'v Value, s: &'v Value) -> Option<&'v Value> {
    variants(doc, s)
        .into_iter()
        .find_map(|v| match v.get("items")? {
            Value::Array(tuple) => tuple.first(),
            one => Some(one),
        })
        .map(|i| resolve(doc, i))
}

/// A schema's type in a few words: `integer`, `string · email`,
/// `string · one of "a", "b"`, `array of object`, `string|null`.
fn describe(doc: &Value, s: &Value) -> String {
    let r = resolve(doc, s);
    let mut out = type_of(doc, r);
    if out == "array"
        && let Some(item) = items(doc, r)
    {
        out = format!("array of {}", type_of(doc, item));
    }
    if let Some(f) = r.get("format").and_then(Value::as_str) {
        out.push_str(&format!(" · {f}"));
    }
    if let Some(Value::Array(values)) = r.get("enum") {
        let shown: Vec<String> = values.iter().take(5).map(Value::to_string).collect();
        let more = if values.len() > 5 { ", …" } else { "" };
        out.push_str(&format!(" · one of {}{more}", shown.join(", ")));
    } else if let Some(c) = r.get("const") {
        out.push_str(&format!(" · always {c}"));
    }
    out
}

/// The `type` a schema names, else what its branches or keywords imply.
fn type_of(doc: &Value, s: &Value) -> String {
    let s = resolve(doc, s);
    if s.get("type").is_some() {
        return type_word(s);
    }
    let mut kinds: Vec<String> = Vec::new();
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = s.get(key) {
            for b in branches {
                let b = resolve(doc, b);
                if b.get("type").is_some() {
                    let word = type_word(b);
                    if !kinds.contains(&word) {
                        kinds.push(word);
                    }
                }
            }
        }
    }
    if let Some(c) = s.get("const") {
        kinds.push(kind_of(c).into());
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        for v in values {
            if !kinds.iter().any(|k| k == kind_of(v)) {
                kinds.push(kind_of(v).into());
            }
        }
    }
    if !kinds.is_empty() {
        return kinds.join("|");
    }
    if s.get("properties").is_some() {
        "object".into()
    } else if s.get("items").is_some() {
        "array".into()
    } else {
        type_word(s)
    }
}

/// The schema's `description` (the place's own before its `$ref`'s).
fn description(doc: &Value, s: &Value) -> Option<String> {
    s.get("description")
        .or_else(|| resolve(doc, s).get("description"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
}

/// A value's JSON type as a schema names it.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_type(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "boolean".into(),
        Value::Number(_) => "number".into(),
        Value::String(s) => {
            let short: String = s.chars().take(30).collect();
            format!(
                "string \"{short}{}\"",
                if s.chars().count() > 30 { "…" } else { "" }
            )
        }
        Value::Array(a) => format!("array [{}]", a.len()),
        Value::Object(m) => format!("object {{{}}}", m.len()),
    }
}
