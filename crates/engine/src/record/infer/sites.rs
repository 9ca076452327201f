//! Where earlier outputs hold values: every scalar of every step's output
//! (a fan-out's by iteration), JSON found inside text parsed and walked as
//! well, indexed by value, bounded in count and depth.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::lang::reference::Segment;

/// The most scalars indexed per output.
const MAX_SITES: usize = 20_000;
/// The deepest a value is walked.
const MAX_DEPTH: usize = 64;
/// The longest text parsed for JSON inside it.
const MAX_EMBEDDED_JSON: usize = 1 << 20;

/// One step on the way from a step's output to a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Hop {
    Seg(Segment),
    /// The string here, parsed as JSON.
    Json,
}

/// A value walked: a step's output, or JSON found in a string of it.
#[derive(Debug, Clone)]
pub struct Doc {
    pub step: usize,
    /// From the step's output to this value.
    pub prefix: Vec<Hop>,
    pub value: Value,
}

/// A scalar (string or number) at `path` in doc `doc`.
#[derive(Debug, Clone)]
pub struct Site {
    pub doc: usize,
    pub path: Vec<Segment>,
}

/// An array of `len` elements at `path` in doc `doc`.
#[derive(Debug, Clone)]
pub struct ArraySite {
    pub doc: usize,
    pub path: Vec<Segment>,
    pub len: usize,
}

/// Every earlier output, indexed.
#[derive(Debug, Default)]
pub struct Sites {
    pub docs: Vec<Doc>,
    pub sites: Vec<Site>,
    pub arrays: Vec<ArraySite>,
    by_value: HashMap<String, Vec<usize>>,
    /// Sites holding strings, in order, each with its text (read by the
    /// rules that look inside strings without walking to it again).
    pub strings: Vec<(usize, std::sync::Arc<str>)>,
}

/// The index key of a scalar: its type and text (`1` and `1.0` alike).
pub fn key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(format!("s{s}")),
        Value::Number(n) => n.as_f64().map(|x| format!("n{x}")),
        _ => None,
    }
}

impl Sites {
    /// Adds step `step`'s output; `fan` when it is a fan-out's list of
    /// iteration outputs.
    pub fn add(&mut self, step: usize, output: &Value, fan: bool) {
        match (fan, output) {
            (true, Value::Array(items)) => {
                self.add_doc(step, Vec::new(), output.clone(), false);
                for (k, item) in items.iter().enumerate() {
                    let prefix = vec![Hop::Seg(Segment::Index(k as i64))];
                    self.add_doc(step, prefix, item.clone(), true);
                }
            }
            _ => self.add_doc(step, Vec::new(), output.clone(), true),
        }
    }

    fn add_doc(&mut self, step: usize, prefix: Vec<Hop>, value: Value, walk: bool) {
        let doc = self.docs.len();
        self.docs.push(Doc {
            step,
            prefix,
            value,
        });
        let mut found: Vec<(Vec<Segment>, String)> = Vec::new();
        let mut count = 0;
        let mut stack: Vec<(Vec<Segment>, &Value)> = vec![(Vec::new(), &self.docs[doc].value)];
        while let Some((path, v)) = stack.pop() {
            match v {
                Value::Object(m) if path.len() < MAX_DEPTH && walk => {
                    for (k, x) in m.iter().rev() {
                        let mut p = path.clone();
                        p.push(Segment::Field(k.clone()));
                        stack.push((p, x));
                    }
                }
                Value::Array(a) if path.len() < MAX_DEPTH => {
                    self.arrays.push(ArraySite {
                        doc,
                        path: path.clone(),
                        len: a.len(),
                    });
                    if walk {
                        for (i, x) in a.iter().enumerate().rev() {
                            let mut p = path.clone();
                            p.push(Segment::Index(i as i64));
                            stack.push((p, x));
                        }
                    }
                }
                Value::String(_) | Value::Number(_) if walk && count < MAX_SITES => {
                    count += 1;
                    if let Value::String(s) = v
                        && embeds_json(s)
                    {
                        found.push((path.clone(), s.clone()));
                    }
                    let at = self.sites.len();
                    if let Value::String(t) = v {
                        self.strings.push((at, std::sync::Arc::from(t.as_str())));
                    }
                    if let Some(k) = key(v) {
                        self.by_value.entry(k).or_default().push(at);
                    }
                    self.sites.push(Site { doc, path });
                }
                _ => {}
            }
        }
        // JSON inside text (one level: JSON inside that is not walked again).
        if self.docs[doc].prefix.contains(&Hop::Json) {
            return;
        }
        for (path, text) in found {
            if let Ok(inner) = serde_json::from_str::<Value>(&text) {
                let mut prefix = self.docs[doc].prefix.clone();
                prefix.extend(path.into_iter().map(Hop::Seg));
                prefix.push(Hop::Json);
                self.add_doc(step, prefix, inner, true);
            }
        }
    }

    /// The sites holding exactly `v`, earliest first.
    pub fn holding(&self, v: &Value) -> &[usize] {
        key(v)
            .and_then(|k| self.by_value.get(&k))
            .map_or(&[], Vec::as_slice)
    }

    /// The step a site belongs to.
    pub fn step(&self, site: &Site) -> usize {
        self.docs[site.doc].step
    }

    /// The whole path from the step's output to a place in a doc.
    pub fn hops(&self, doc: usize, path: &[Segment]) -> Vec<Hop> {
        let mut out = self.docs[doc].prefix.clone();
        out.extend(path.iter().cloned().map(Hop::Seg));
        out
    }
}

/// Whether `s` may hold JSON worth walking.
fn embeds_json(s: &str) -> bool {
    let t = s.trim_start();
    s.len() <= MAX_EMBEDDED_JSON && (t.starts_with('{') || t.starts_with('['))
}

/// The value at `path` in `v`.
pub fn get<'a>(v: &'a Value, path: &[Segment]) -> Option<&'a Value> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (Segment::Field(f), Value::Object(m)) => m.get(f)?,
            (Segment::Index(i), Value::Array(a)) => a.get(usize::try_from(*i).ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Hops as a path of plain segments, when none parses JSON.
pub fn plain(hops: &[Hop]) -> Option<Vec<Segment>> {
    hops.iter()
        .map(|h| match h {
            Hop::Seg(s) => Some(s.clone()),
            Hop::Json => None,
        })
        .collect()
}

/// Hops as a jq expression over the step's output: `.users[0].id`,
/// `.content[0].text | fromjson | .id`.
pub fn jq_path(hops: &[Hop]) -> String {
    let mut out = String::new();
    let mut open = true;
    for h in hops {
        match h {
            Hop::Seg(Segment::Field(f)) => {
                if is_jq_ident(f) {
                    let _ = write!(out, ".{f}");
                } else {
                    let _ = write!(out, ".[{}]", Value::String(f.clone()));
                }
                open = false;
            }
            Hop::Seg(Segment::Index(i)) => {
                if open {
                    out.push('.');
                }
                let _ = write!(out, "[{i}]");
                open = false;
            }
            Hop::Seg(Segment::Wildcard) => {
                if open {
                    out.push('.');
                }
                out.push_str("[]");
                open = false;
            }
            Hop::Json => {
                if open {
                    out.push('.');
                }
                out.push_str(" | fromjson | ");
                open = true;
            }
        }
    }
    if open {
        out.push('.');
    }
    out
}

fn is_jq_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outputs_are_indexed_with_json_inside_text() {
        let mut s = Sites::default();
        s.add(
            0,
            &json!({"users": [{"id": "u1"}, {"id": "u2"}], "count": 2}),
            false,
        );
        s.add(
            1,
            &json!([{"type": "text", "text": "{\"id\": \"u1\", \"n\": 7}"}]),
            false,
        );
        s.add(2, &json!([{"id": "a"}, {"id": "b"}]), true);
        let held: Vec<(usize, String)> = s
            .holding(&json!("u1"))
            .iter()
            .map(|&i| {
                let site = &s.sites[i];
                (s.step(site), jq_path(&s.hops(site.doc, &site.path)))
            })
            .collect();
        assert_eq!(
            held,
            [
                (0, ".users[0].id".to_owned()),
                (1, ".[0].text | fromjson | .id".to_owned())
            ]
        );
        assert_eq!(s.holding(&json!(2.0)).len(), 1);
        let fan: Vec<String> = s
            .holding(&json!("b"))
            .iter()
            .map(|&i| jq_path(&s.hops(s.sites[i].doc, &s.sites[i].path)))
            .collect();
        assert_eq!(fan, [".[1].id"]);
        assert!(
            s.arrays
                .iter()
                .any(|a| a.len == 2 && s.docs[a.doc].step == 2 && a.path.is_empty())
        );
        assert_eq!(
            jq_path(&[Hop::Seg(Segment::Field("odd key".into()))]),
            ".[\"odd key\"]"
        );
        assert_eq!(jq_path(&[]), ".");
    }
}
