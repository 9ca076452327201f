//! `--answers FILE`: the replies to give servers' questions when nobody is
//! at the keyboard (CI), per node id (or `*` for any node), in order.
//!
//! ```yaml
//! signup:                         # node id
//!   - accept: {name: Ada, age: 36}  # a form's fields
//!   - decline
//! summarize:
//!   - sample: "A one-line summary"  # a sampling reply (model: "human")
//!   - sample: {text: "…", model: "gpt-4o"}
//! "*":                            # any node, after its own list runs out
//!   - cancel
//!   - accept                      # a URL-mode question: accept, no content
//! ```
//!
//! A node's question takes the next entry of its own list, else of `*`.
//! Nothing left: the next responder (the terminal, the provider) answers,
//! or the question is declined.

use std::collections::VecDeque;
use std::sync::Mutex;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use super::Reply;

/// The replies of an answers file, used up in order.
#[derive(Debug, Default)]
pub struct Answers {
    queues: Mutex<IndexMap<String, VecDeque<Reply>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Item {
    Word(String),
    Map(IndexMap<String, Value>),
}

impl Answers {
    /// Reads an answers file; errors name the file, the node and the entry.
    pub fn load(path: &std::path::Path) -> Result<Answers, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read answers file {}: {e}", path.display()))?;
        Answers::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the text of an answers file.
    pub fn parse(text: &str) -> Result<Answers, String> {
        if text.trim().is_empty() {
            return Ok(Answers::default());
        }
        let raw: IndexMap<String, Vec<Item>> =
            serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let mut queues = IndexMap::new();
        for (node, items) in raw {
            let mut q = VecDeque::new();
            for (n, item) in items.into_iter().enumerate() {
                let reply =
                    reply_of(item).map_err(|e| format!("`{node}`, answer {}: {e}", n + 1))?;
                q.push_back(reply);
            }
            queues.insert(node, q);
        }
        Ok(Answers {
            queues: Mutex::new(queues),
        })
    }

    /// The next reply for a question of `node`: its own list first, then
    /// `*`'s.
    pub fn next(&self, node: Option<&str>) -> Option<Reply> {
        let mut queues = self.queues.lock().ok()?;
        if let Some(node) = node
            && let Some(r) = queues.get_mut(node).and_then(VecDeque::pop_front)
        {
            return Some(r);
        }
        queues.get_mut("*").and_then(VecDeque::pop_front)
    }
}

const SHAPES: &str = "expected `accept`, `accept: {fields}`, `decline`, `cancel`, `sample: TEXT` or `sample: {text, model}`";

fn reply_of(item: Item) -> Result<Reply, String> {
    match item {
        Item::Word(w) => match w.as_str() {
            "accept" => Ok(Reply::Accept(Value::Null)),
            "decline" => Ok(Reply::Decline),
            "cancel" => Ok(Reply::Cancel),
            other => Err(format!("`{other}`: {SHAPES}")),
        },
        Item::Map(map) => {
            let mut it = map.into_iter();
            let (Some((key, value)), None) = (it.next(), it.next()) else {
                return Err(format!("an entry has one key; {SHAPES}"));
            };
            match (key.as_str(), value) {
                ("accept", Value::Object(fields)) => Ok(Reply::Accept(Value::Object(fields))),
                ("accept", Value::Null) => Ok(Reply::Accept(Value::Null)),
                ("accept", _) => Err("`accept:` takes a mapping of the form's fields".to_owned()),
                ("sample", Value::String(text)) => Ok(Reply::Sampled {
                    text,
                    model: "human".to_owned(),
                }),
                ("sample", Value::Object(o)) => {
                    let text = o
                        .get("text")
                        .and_then(Value::as_str)
                        .ok_or("`sample:` needs `text`")?;
                    let model = o.get("model").and_then(Value::as_str).unwrap_or("human");
                    Ok(Reply::Sampled {
                        text: text.to_owned(),
                        model: model.to_owned(),
                    })
                }
                ("sample", _) => Err("`sample:` takes a text or {text, model}".to_owned()),
                (other, _) => Err(format!("`{other}`: {SHAPES}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_come_per_node_then_from_the_star() {
        let a = Answers::parse(
            "signup:\n  - accept: {name: Ada, age: 36}\n  - decline\nsum:\n  - sample: hi\n  - sample: {text: yo, model: m1}\n'*':\n  - cancel\n  - accept\n",
        )
        .unwrap();
        assert_eq!(
            a.next(Some("signup")),
            Some(Reply::Accept(json!({"name": "Ada", "age": 36})))
        );
        assert_eq!(a.next(Some("signup")), Some(Reply::Decline));
        assert_eq!(a.next(Some("signup")), Some(Reply::Cancel));
        assert_eq!(
            a.next(Some("sum")),
            Some(Reply::Sampled {
                text: "hi".into(),
                model: "human".into()
            })
        );
        assert_eq!(
            a.next(Some("sum")),
            Some(Reply::Sampled {
                text: "yo".into(),
                model: "m1".into()
            })
        );
        assert_eq!(a.next(None), Some(Reply::Accept(Value::Null)));
        assert_eq!(a.next(Some("sum")), None);
    }

    #[test]
    fn bad_entries_are_named() {
        let e = Answers::parse("signup:\n  - maybe\n").unwrap_err();
        assert!(
            e.contains("`signup`, answer 1") && e.contains("`maybe`"),
            "{e}"
        );
        let e = Answers::parse("x:\n  - accept: 3\n").unwrap_err();
        assert!(e.contains("mapping"), "{e}");
        assert!(Answers::parse("- a\n").is_err());
    }
}
