//! A node's content hash: the SHA-256 of its definition written as
//! canonical JSON (object keys sorted), so reformatting the file changes
//! nothing. The text is written straight into a reused buffer: no JSON tree
//! of the definition is built and no key is copied.
//!
//! The hashes are compared with the ones saved beside earlier runs (a
//! changed hash makes a node stale), so the text must stay byte for byte
//! what `canonical(&json!({…}))` wrote: the fields below in sorted order,
//! `null` for what is unset, strings and numbers as serde_json writes them
//! (`loader::tests::node_hashes_stay_as_saved_runs_know_them` pins it).

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::file::model::{Mock, Node, OnError};

/// The hex SHA-256 of `n`'s canonical definition; `buf` is scratch space
/// kept between nodes.
pub(super) fn node_hash(n: &Node, buf: &mut Vec<u8>) -> String {
    buf.clear();
    let mut out = Canon(buf);
    out.raw("{\"aligned\":[");
    for (i, id) in n.aligned.iter().enumerate() {
        out.comma(i);
        out.str(id);
    }
    // Only written when set, so the hash of a node without answers stays
    // what saved runs know.
    if !n.answers.is_empty() {
        out.raw("],\"answers\":[");
        for (i, a) in n.answers.iter().enumerate() {
            out.comma(i);
            out.value(&a.to_json());
        }
    }
    out.raw("],\"args\":");
    out.value(&n.args);
    out.raw(",\"compensate\":");
    match &n.compensate {
        Some(c) => {
            out.raw("{\"args\":");
            out.value(&c.args);
            out.raw(",\"server\":");
            out.opt_str(c.server.as_deref());
            out.raw(",\"tool\":");
            out.str(&c.tool);
            out.raw("}");
        }
        None => out.raw("null"),
    }
    out.raw(",\"for_each\":");
    out.opt_str(n.for_each.as_ref().map(|f| f.source.as_str()));
    out.raw(",\"max_concurrency\":");
    out.scalar(&n.max_concurrency);
    out.raw(",\"max_cost_per_call_usd\":");
    // A non-finite float is `null`, as in a JSON tree.
    out.scalar(&n.max_cost_per_call_usd);
    out.raw(",\"max_tokens_per_call\":");
    out.scalar(&n.max_tokens_per_call);
    out.raw(",\"meta\":");
    match &n.meta {
        Some(m) => out.value(m),
        None => out.raw("null"),
    }
    out.raw(",\"mock\":");
    match &n.mock {
        Some(Mock::Result(v)) => {
            out.raw("{\"result\":");
            out.value(v);
            out.raw("}");
        }
        Some(Mock::Error(v)) => {
            out.raw("{\"error\":");
            out.value(v);
            out.raw("}");
        }
        None => out.raw("null"),
    }
    out.raw(",\"needs\":[");
    for (i, need) in n.needs.iter().enumerate() {
        out.comma(i);
        out.str(&need.id);
    }
    out.raw("],\"on_error\":");
    // `OnError` as serde writes it (tagged by `policy`; a `Duration` is
    // `{secs, nanos}`), keys sorted.
    match n.on_error {
        OnError::Stop => out.raw("{\"policy\":\"stop\"}"),
        OnError::Continue => out.raw("{\"policy\":\"continue\"}"),
        OnError::Retry { max, backoff } => {
            out.raw("{\"backoff\":{\"nanos\":");
            out.scalar(&backoff.subsec_nanos());
            out.raw(",\"secs\":");
            out.scalar(&backoff.as_secs());
            out.raw("},\"max\":");
            out.scalar(&max);
            out.raw(",\"policy\":\"retry\"}");
        }
    }
    out.raw(",\"server\":");
    out.opt_str(n.server.as_deref());
    out.raw(",\"timeout_ms\":");
    out.scalar(&n.timeout.map(|t| t.as_millis() as u64));
    out.raw(",\"tool\":");
    out.str(&n.tool);
    out.raw(",\"transform\":");
    out.opt_str(n.transform.as_ref().map(|t| t.source()));
    out.raw(",\"when\":");
    out.opt_str(n.when.as_ref().map(|w| w.source.as_str()));
    out.raw("}");
    hex::encode(Sha256::digest(&buf[..]))
}

/// Canonical JSON written into a byte buffer.
struct Canon<'b>(&'b mut Vec<u8>);

impl Canon<'_> {
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    fn comma(&mut self, i: usize) {
        if i > 0 {
            self.0.push(b',');
        }
    }

    /// A scalar (or a string) as serde_json writes it.
    fn scalar<T: serde::Serialize + ?Sized>(&mut self, v: &T) {
        // Writing into a Vec cannot fail, and these types always serialise.
        let _ = serde_json::to_writer(&mut *self.0, v);
    }

    fn str(&mut self, s: &str) {
        self.scalar(s);
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw("null"),
        }
    }

    /// `v` with every object's keys in byte order.
    fn value(&mut self, v: &Value) {
        match v {
            Value::Object(map) => {
                self.0.push(b'{');
                if map.keys().is_sorted() {
                    for (i, (k, item)) in map.iter().enumerate() {
                        self.entry(i, k, item);
                    }
                } else {
                    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
                    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    for (i, (k, item)) in pairs.into_iter().enumerate() {
                        self.entry(i, k, item);
                    }
                }
                self.0.push(b'}');
            }
            Value::Array(items) => {
                self.0.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    self.comma(i);
                    self.value(item);
                }
                self.0.push(b']');
            }
            other => self.scalar(other),
        }
    }

    fn entry(&mut self, i: usize, key: &str, item: &Value) {
        self.comma(i);
        self.str(key);
        self.0.push(b':');
        self.value(item);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::diag::Span;
    use crate::file::model::{Compensate, Need};

    /// The hash as it was first written: a `json!` tree of the node, then
    /// canonical text with sorted keys.
    fn reference_hash(n: &Node) -> String {
        let def = json!({
            "needs": n.needs.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
            "server": n.server,
            "tool": n.tool,
            "args": n.args,
            "transform": n.transform.as_ref().map(|t| t.source()),
            "when": n.when.as_ref().map(|w| w.source.as_str()),
            "on_error": n.on_error,
            "for_each": n.for_each.as_ref().map(|f| f.source.as_str()),
            "max_concurrency": n.max_concurrency,
            "aligned": n.aligned,
            "mock": n.mock.as_ref().map(|m| match m {
                Mock::Result(v) => json!({"result": v}),
                Mock::Error(v) => json!({"error": v}),
            }),
            "timeout_ms": n.timeout.map(|t| t.as_millis() as u64),
            "max_cost_per_call_usd": n.max_cost_per_call_usd,
            "max_tokens_per_call": n.max_tokens_per_call,
            "compensate": n.compensate.as_ref().map(|c| json!({"server": c.server, "tool": c.tool, "args": c.args})),
            "meta": n.meta,
        });
        fn canonical(v: &Value, out: &mut String) {
            match v {
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    out.push('{');
                    for (i, k) in keys.into_iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&Value::String(k.clone()).to_string());
                        out.push(':');
                        canonical(&map[k.as_str()], out);
                    }
                    out.push('}');
                }
                Value::Array(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        canonical(item, out);
                    }
                    out.push(']');
                }
                other => out.push_str(&other.to_string()),
            }
        }
        let mut text = String::new();
        canonical(&def, &mut text);
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// A node with a transform, a `when` and a `for_each`, whose other
    /// fields the cases below replace.
    fn base() -> Node {
        let loaded = crate::file::open::load_str(
            "pipe:\n  - {id: a, tool: t}\n  - id: b\n    tool: t\n    transform: '{x: .y}'\n    when: '${a} | length > 0'\n    for_each: '${a[*]}'\n",
        );
        let Some(p) = loaded.pipeline else {
            panic!("{:?}", loaded.diagnostics)
        };
        p.compositions[0].nodes[1].clone()
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::from),
            "[\\x00-\\x20\"\\\\\u{7f}\u{2028}é😀]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-cA-C0-9_é\"\\\\\\x01]{0,4}", inner), 0..6)
                    .prop_map(|kvs| Value::Object(kvs.into_iter().collect())),
            ]
        })
    }

    fn on_error() -> impl Strategy<Value = OnError> {
        prop_oneof![
            Just(OnError::Stop),
            Just(OnError::Continue),
            (any::<u32>(), any::<u64>(), 0u32..1_000_000_000).prop_map(|(max, s, n)| {
                OnError::Retry {
                    max,
                    backoff: Duration::new(s, n),
                }
            }),
        ]
    }

    proptest! {
        #[test]
        fn the_streamed_hash_is_the_json_tree_hash(
            args in json_value(),
            meta in proptest::option::of(json_value()),
            mock in proptest::option::of((any::<bool>(), json_value())),
            compensate in proptest::option::of((proptest::option::of("\\PC{0,6}"), "\\PC{0,6}", json_value())),
            tool in "\\PC{0,10}",
            server in proptest::option::of("\\PC{0,6}"),
            needs in proptest::collection::vec("[a-z\"é]{1,4}", 0..4),
            aligned in proptest::collection::vec("[a-z\\\\]{1,4}", 0..3),
            max_concurrency in any::<usize>(),
            cost in proptest::option::of(any::<f64>()),
            tokens in proptest::option::of(any::<u64>()),
            timeout in proptest::option::of(any::<u64>()),
            policy in on_error(),
        ) {
            let mut n = base();
            n.args = args;
            n.meta = meta;
            n.mock = mock.map(|(ok, v)| if ok { Mock::Result(v) } else { Mock::Error(v) });
            n.compensate = compensate.map(|(server, tool, args)| Compensate {
                server,
                tool,
                args,
                arg_refs: Vec::new(),
            });
            n.tool = tool;
            n.server = server;
            n.needs = needs.into_iter().map(|id| Need { id, span: Span::default() }).collect();
            n.aligned = aligned;
            n.max_concurrency = max_concurrency;
            n.max_cost_per_call_usd = cost;
            n.max_tokens_per_call = tokens;
            n.timeout = timeout.map(Duration::from_millis);
            n.on_error = policy;
            prop_assert_eq!(node_hash(&n, &mut Vec::new()), reference_hash(&n));
        }
    }

    #[test]
    fn a_bare_node_hashes_as_before() {
        let mut n = base();
        n.transform = None;
        n.when = None;
        n.for_each = None;
        assert_eq!(node_hash(&n, &mut Vec::new()), reference_hash(&n));
    }
}
