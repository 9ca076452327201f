//! What changed between two runs, node by node: status, resolved args,
//! output (a structural JSON diff with paths), error, attempts, cost, and
//! with `timing` the durations; plus nodes added or removed, and the judged
//! metrics' verdicts and scores.

use serde::Serialize;
use serde_json::Value;

use crate::run::trace::{NodeRecord, Trace};

mod eval;
pub mod source;

/// One difference: where, and the value before and after (`null` when the
/// place did not exist on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// `composition.status`, `output.users[0]`, `details.output.email`,
    /// `details` (a node added or removed) …
    pub path: String,
    /// The node the change is in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub before: Value,
    pub after: Value,
}

/// The differences as `runs diff` prints them (and the workbench's History
/// shows them): grouped by node, one line per field, and a count.
pub fn text(a: &str, b: &str, changes: &[Change]) -> String {
    let mut out = format!("runs {a} → {b}\n");
    if changes.is_empty() {
        out.push_str("no differences\n");
        return out;
    }
    let mut node: Option<&str> = None;
    for c in changes {
        if c.node.as_deref() != node {
            node = c.node.as_deref();
            if let Some(n) = node {
                out.push_str(&format!("node {n}\n"));
            }
        }
        let indent = if c.node.is_some() { "  " } else { "" };
        let line = match (&c.before, &c.after) {
            (Value::Null, after) if c.node.as_deref() == Some(c.path.as_str()) => {
                format!("{indent}+ {} added ({})", c.path, short(after, 40))
            }
            (before, Value::Null) if c.node.as_deref() == Some(c.path.as_str()) => {
                format!("{indent}- {} removed (was {})", c.path, short(before, 40))
            }
            (before, after) => format!(
                "{indent}{}: {} → {}",
                c.path,
                short(before, 60),
                short(after, 60)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!("{} difference(s)\n", changes.len()));
    out
}

/// [`text`] with the file's line diff ([`source::text`]) right under its
/// first line: the edit first, then what it changed in the run.
pub fn report(a: &str, b: &str, changes: &[Change], file: &str) -> String {
    let all = text(a, b, changes);
    let (head, rest) = all.split_once('\n').unwrap_or((&all, ""));
    format!("{head}\n{file}{rest}")
}

/// Every difference between run `a` and run `b`.
pub fn diff(a: &Trace, b: &Trace, timing: bool) -> Vec<Change> {
    let mut out = Vec::new();
    let run = |out: &mut Vec<Change>, path: &str, x: Value, y: Value| {
        walk(out, None, path.to_owned(), &x, &y);
    };
    run(
        &mut out,
        "composition.status",
        Value::from(a.composition.status.as_str()),
        Value::from(b.composition.status.as_str()),
    );
    run(
        &mut out,
        "composition.budget_tripped",
        a.composition.budget_tripped.clone().into(),
        b.composition.budget_tripped.clone().into(),
    );
    run(
        &mut out,
        "composition.cost_total",
        a.composition.cost_total.into(),
        b.composition.cost_total.into(),
    );
    if timing {
        run(
            &mut out,
            "composition.duration_ms",
            a.composition.duration_ms.into(),
            b.composition.duration_ms.into(),
        );
    }
    for (id, ra) in &a.nodes {
        match b.nodes.get(id) {
            Some(rb) => node(&mut out, id, ra, rb, timing),
            None => out.push(Change {
                path: id.clone(),
                node: Some(id.clone()),
                before: Value::from(ra.status.as_str()),
                after: Value::Null,
            }),
        }
    }
    for (id, rb) in &b.nodes {
        if !a.nodes.contains_key(id) {
            out.push(Change {
                path: id.clone(),
                node: Some(id.clone()),
                before: Value::Null,
                after: Value::from(rb.status.as_str()),
            });
        }
    }
    walk(
        &mut out,
        None,
        "output".to_owned(),
        a.output.tree(),
        b.output.tree(),
    );
    let mut judged = Vec::new();
    eval::changes(&mut judged, a, b);
    out.extend(judged.into_iter().map(|(path, before, after)| Change {
        path,
        node: None,
        before,
        after,
    }));
    out
}

fn node(out: &mut Vec<Change>, id: &str, a: &NodeRecord, b: &NodeRecord, timing: bool) {
    let n = Some(id);
    let at = |field: &str| format!("{id}.{field}");
    walk(
        out,
        n,
        at("status"),
        &Value::from(a.status.as_str()),
        &Value::from(b.status.as_str()),
    );
    walk(out, n, at("args"), a.args.tree(), b.args.tree());
    walk(out, n, at("output"), a.output.tree(), b.output.tree());
    walk(
        out,
        n,
        at("error"),
        &a.error.clone().into(),
        &b.error.clone().into(),
    );
    walk(
        out,
        n,
        at("attempts"),
        &a.attempts.into(),
        &b.attempts.into(),
    );
    walk(
        out,
        n,
        at("cost_usd"),
        &a.cost_usd.into(),
        &b.cost_usd.into(),
    );
    if timing {
        walk(
            out,
            n,
            at("duration_ms"),
            &a.duration_ms.into(),
            &b.duration_ms.into(),
        );
    }
}

/// Descends into objects (by key) and arrays (by index) so a change is
/// reported at the deepest place it happens.
fn walk(out: &mut Vec<Change>, node: Option<&str>, path: String, a: &Value, b: &Value) {
    if a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}{}", key(k));
                walk(out, node, p, va, y.get(k).unwrap_or(&Value::Null));
            }
            for (k, vb) in y {
                if !x.contains_key(k) {
                    walk(out, node, format!("{path}{}", key(k)), &Value::Null, vb);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                walk(
                    out,
                    node,
                    format!("{path}[{i}]"),
                    x.get(i).unwrap_or(&Value::Null),
                    y.get(i).unwrap_or(&Value::Null),
                );
            }
        }
        _ => out.push(Change {
            path,
            node: node.map(str::to_owned),
            before: a.clone(),
            after: b.clone(),
        }),
    }
}

/// `.name` for a plain key, `["odd key"]` otherwise.
fn key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!(".{k}")
    } else {
        format!("[{}]", Value::from(k))
    }
}

/// A value for one line of text: compact JSON, cut to `max` characters.
pub fn short(v: &Value, max: usize) -> String {
    let s = match v {
        Value::Null => "(none)".to_owned(),
        other => other.to_string(),
    };
    if s.chars().count() <= max {
        s
    } else {
        let cut: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::NodeStatus;
    use serde_json::json;

    fn t(email: &str, status: NodeStatus, extra: bool, ms: u64) -> Trace {
        let mut tr = Trace::default();
        tr.nodes.insert(
            "details".into(),
            NodeRecord {
                status,
                output: json!({"email": email, "teams": ["a", "b"]}).into(),
                duration_ms: ms,
                ..NodeRecord::default()
            },
        );
        if extra {
            tr.nodes.insert("notify".into(), NodeRecord::default());
        }
        tr
    }

    #[test]
    fn paths_point_at_the_deepest_change_and_timing_is_opt_in() {
        let a = t("alice@example.com", NodeStatus::Ok, false, 5);
        assert!(diff(&a, &a, true).is_empty());
        let same_but_slower = t("alice@example.com", NodeStatus::Ok, false, 50);
        assert!(diff(&a, &same_but_slower, false).is_empty());
        assert_eq!(
            diff(&a, &same_but_slower, true)[0].path,
            "details.duration_ms"
        );
        let b = t("bob@example.com", NodeStatus::Failed, true, 5);
        let paths: Vec<String> = diff(&a, &b, false).into_iter().map(|c| c.path).collect();
        assert_eq!(
            paths,
            ["details.status", "details.output.email", "notify"],
            "{paths:?}"
        );
        let c = &diff(&a, &b, false)[1];
        assert_eq!(c.before, json!("alice@example.com"));
        assert_eq!(c.after, json!("bob@example.com"));
        assert_eq!(key("odd key"), "[\"odd key\"]");
    }
}
