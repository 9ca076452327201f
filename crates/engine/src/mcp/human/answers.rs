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
use crate::file::model::{Answer, Composition};

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

    /// The `answers:` of every node of `comp` that has some, fresh for one
    /// run of it.
    pub fn of_nodes(comp: &Composition) -> Answers {
        let queues = comp
            .nodes
            .iter()
            .filter(|n| !n.answers.is_empty())
            .map(|n| (n.id.clone(), n.answers.iter().map(Reply::from).collect()))
            .collect();
        Answers {
            queues: Mutex::new(queues),
        }
    }

    /// True when no node has a reply left.
    pub fn is_empty(&self) -> bool {
        self.queues
            .lock()
            .map_or(true, |q| q.values().all(VecDeque::is_empty))
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

fn reply_of(item: Item) -> Result<Reply, String> {
    let value = match item {
        Item::Word(w) => Value::String(w),
        Item::Map(map) => Value::Object(map.into_iter().collect()),
    };
    Answer::from_json(&value).map(|a| Reply::from(&a))
}

impl From<&Answer> for Reply {
    fn from(a: &Answer) -> Reply {
        match a {
            Answer::Accept(None) => Reply::Accept(Value::Null),
            Answer::Accept(Some(fields)) => Reply::Accept(Value::Object(fields.clone())),
            Answer::Decline => Reply::Decline,
            Answer::Cancel => Reply::Cancel,
            Answer::Sample { text, model } => Reply::Sampled {
                text: text.clone(),
                model: model.clone(),
            },
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
