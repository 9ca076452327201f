//! A node's `answers:` and the entries of an `--answers` file: the reply to
//! give a server's question (a form's fields, decline, cancel, or a
//! model's message), in the entry form both write.

use serde_json::{Map, Value};

/// One answer, as an entry of `answers:` or of an answers file says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `accept` (no fields: a URL question, or a form's defaults) or
    /// `accept: {fields}`.
    Accept(Option<Map<String, Value>>),
    /// `decline`.
    Decline,
    /// `cancel`.
    Cancel,
    /// `sample: TEXT` (model `human`) or `sample: {text, model}`.
    Sample { text: String, model: String },
}

/// The shapes an entry may have, for error messages.
pub const SHAPES: &str = "expected `accept`, `accept: {fields}`, `decline`, `cancel`, `sample: TEXT` or `sample: {text, model}`";

impl Answer {
    /// Reads one entry; the error says what is wrong with it.
    pub fn from_json(v: &Value) -> Result<Answer, String> {
        match v {
            Value::String(w) => match w.as_str() {
                "accept" => Ok(Answer::Accept(None)),
                "decline" => Ok(Answer::Decline),
                "cancel" => Ok(Answer::Cancel),
                other => Err(format!("`{other}`: {SHAPES}")),
            },
            Value::Object(map) => {
                let mut it = map.iter();
                let (Some((key, value)), None) = (it.next(), it.next()) else {
                    return Err(format!("an entry has one key; {SHAPES}"));
                };
                match (key.as_str(), value) {
                    ("accept", Value::Object(fields)) => Ok(Answer::Accept(Some(fields.clone()))),
                    ("accept", Value::Null) => Ok(Answer::Accept(None)),
                    ("accept", _) => {
                        Err("`accept:` takes a mapping of the form's fields".to_owned())
                    }
                    ("sample", Value::String(text)) => Ok(Answer::Sample {
                        text: text.clone(),
                        model: "human".to_owned(),
                    }),
                    ("sample", Value::Object(o)) => {
                        let text = o
                            .get("text")
                            .and_then(Value::as_str)
                            .ok_or("`sample:` needs `text`")?;
                        let model = o.get("model").and_then(Value::as_str).unwrap_or("human");
                        Ok(Answer::Sample {
                            text: text.to_owned(),
                            model: model.to_owned(),
                        })
                    }
                    ("sample", _) => Err("`sample:` takes a text or {text, model}".to_owned()),
                    (other, _) => Err(format!("`{other}`: {SHAPES}")),
                }
            }
            other => Err(format!("`{other}`: {SHAPES}")),
        }
    }

    /// The entry as the file writes it.
    pub fn to_json(&self) -> Value {
        let one = |k: &str, v: Value| {
            let mut m = Map::new();
            m.insert(k.to_owned(), v);
            Value::Object(m)
        };
        match self {
            Answer::Accept(None) => Value::from("accept"),
            Answer::Accept(Some(fields)) => one("accept", Value::Object(fields.clone())),
            Answer::Decline => Value::from("decline"),
            Answer::Cancel => Value::from("cancel"),
            Answer::Sample { text, model } if model == "human" => {
                one("sample", Value::from(text.clone()))
            }
            Answer::Sample { text, model } => {
                one("sample", serde_json::json!({"text": text, "model": model}))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_read_and_write_back() {
        for v in [
            json!("accept"),
            json!({"accept": {"name": "Ada"}}),
            json!("decline"),
            json!("cancel"),
            json!({"sample": "hi"}),
            json!({"sample": {"text": "yo", "model": "m1"}}),
        ] {
            let a = Answer::from_json(&v).unwrap();
            assert_eq!(a.to_json(), v);
        }
        assert_eq!(
            Answer::from_json(&json!({"accept": null})),
            Ok(Answer::Accept(None))
        );
        assert!(
            Answer::from_json(&json!("maybe"))
                .unwrap_err()
                .contains("`maybe`")
        );
        assert!(
            Answer::from_json(&json!({"accept": 3}))
                .unwrap_err()
                .contains("mapping")
        );
        assert!(
            Answer::from_json(&json!({"a": 1, "b": 2}))
                .unwrap_err()
                .contains("one key")
        );
        assert!(Answer::from_json(&json!(3)).is_err());
    }
}
