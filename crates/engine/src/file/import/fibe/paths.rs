//! Fibe's `$.id.path` bindings: parsing a JSONPath into segments, splitting
//! off the step id it names, and telling a binding from literal text (`$$.`
//! escapes one).

use crate::lang::reference::Segment;

/// Parses a Fibe JSONPath (`$`, `$.a.b`, `$.a[0]`, `$.a[*].b`, `$.a['k']`)
/// into its segments.
pub fn parse_path(s: &str) -> Result<Vec<Segment>, String> {
    let Some(mut rest) = s.strip_prefix('$') else {
        return Err(format!("`{s}` is not a JSONPath (it must start with `$`)"));
    };
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err(format!("empty field name in `{s}`"));
            }
            out.push(Segment::Field(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r
                .find(']')
                .ok_or_else(|| format!("unclosed `[` in `{s}`"))?;
            let inner = r[..end].trim();
            out.push(if inner == "*" {
                Segment::Wildcard
            } else if let Ok(i) = inner.parse::<i64>() {
                Segment::Index(i)
            } else if inner.len() >= 2
                && (inner.starts_with('\'') && inner.ends_with('\'')
                    || inner.starts_with('"') && inner.ends_with('"'))
            {
                Segment::Field(inner[1..inner.len() - 1].to_owned())
            } else {
                return Err(format!("cannot read `[{inner}]` in `{s}`"));
            });
            rest = &r[end + 1..];
        } else {
            return Err(format!("unexpected `{rest}` in `{s}`"));
        }
    }
    Ok(out)
}

/// The root id and the rest of a `$.id.path` string.
pub(super) fn split_root(path: Vec<Segment>) -> Option<(String, Vec<Segment>)> {
    let mut it = path.into_iter();
    match it.next() {
        Some(Segment::Field(id)) => Some((id, it.collect())),
        _ => None,
    }
}

/// How a string in an argument tree is read.
pub(super) enum Str {
    Literal(String),
    Ref(String, Vec<Segment>),
    Bad(String),
}

pub(super) fn classify(s: &str) -> Str {
    if let Some(rest) = s.strip_prefix("$$.") {
        return Str::Literal(format!("$.{rest}"));
    }
    if !s.starts_with("$.") {
        return Str::Literal(s.to_owned());
    }
    match parse_path(s).map(split_root) {
        Ok(Some((id, rest))) => Str::Ref(id, rest),
        Ok(None) => Str::Bad(format!("`{s}` does not name a step")),
        Err(e) => Str::Bad(e),
    }
}
