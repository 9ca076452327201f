//! The judge's reply, read as untrusted input: the chat completion's first
//! choice (a refusal, a reply cut off at `max_tokens` or held back by a
//! content filter is an error, not a verdict), its text as one JSON object
//! (a code fence around it is tolerated, nothing else), and each field
//! checked: scores are numbers from 0 to 1, reasoning is text and is cut to
//! a bound, every criterion, question or call asked about is answered once.
//! Whatever fails is a sentence for the metric's `error` row.

use serde_json::{Map, Value};

use crate::json::Json;

/// The judge's reasoning for a metric is kept up to this many characters.
pub const REASONING_CHARS: usize = 4000;
/// An item's reasoning (a criterion, a call) up to this many.
pub const ITEM_REASONING_CHARS: usize = 1000;

/// What the chat completion holds.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The reply's JSON object.
    pub verdict: Map<String, Value>,
    /// The model the endpoint says answered.
    pub model: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// Reads a chat completion; `Err` says why it holds no verdict.
pub fn read(body: &Value) -> Result<Reply, String> {
    let choice = body.pointer("/choices/0").ok_or(
        "the judge's answer has no `choices[0]` (is the URL a chat-completions endpoint?)",
    )?;
    let message = choice.get("message");
    if let Some(refusal) = message
        .and_then(|m| m.get("refusal"))
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
    {
        return Err(format!(
            "the judge refused to grade: {}",
            super::client::cut(refusal.trim(), 300)
        ));
    }
    match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => {
            return Err(
                "the judge's reply was cut off at its `max_tokens` before the verdict ended; raise the provider's `max_tokens`"
                    .into(),
            );
        }
        Some("content_filter") => {
            return Err("the judge's reply was held back by the endpoint's content filter".into());
        }
        _ => {}
    }
    let content = message
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .ok_or("the judge's answer has no text in `choices[0].message.content`")?;
    let verdict = object_in(content)?;
    let usage = body.get("usage");
    let count = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    Ok(Reply {
        verdict,
        model: body
            .get("model")
            .and_then(Value::as_str)
            .map(|m| super::client::cut(m, 100)),
        input_tokens: count("prompt_tokens"),
        output_tokens: count("completion_tokens"),
    })
}

/// The JSON object a reply's text holds: the whole text, or the inside of
/// one code fence around it.
pub fn object_in(text: &str) -> Result<Map<String, Value>, String> {
    let t = text.trim();
    let inner = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(t)
        .trim();
    if inner.is_empty() {
        return Err("the judge's reply is empty".into());
    }
    let quoted = || super::client::cut(t, 120);
    match Json::parse(inner.to_owned()).map(Json::into_value) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "the judge's reply is {}, not the JSON object asked for: `{}`",
            a_type(&other),
            quoted()
        )),
        Err(e) => Err(format!(
            "the judge's reply is not the JSON object asked for ({e}): `{}`",
            quoted()
        )),
    }
}

/// `v`'s JSON type with its article: `a string`, `an array`, `null`.
fn a_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A score under `key` of `m`: a number from 0 to 1.
pub fn score(m: &Map<String, Value>, key: &str, whose: &str) -> Result<f64, String> {
    match m.get(key) {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if (0.0..=1.0).contains(&s) => Ok(s),
            _ => Err(format!("{whose} `{key}` is {n}, outside 0 to 1")),
        },
        Some(other) => Err(format!(
            "{whose} `{key}` is {}, not a number",
            a_type(other)
        )),
        None => Err(format!("{whose} has no `{key}`")),
    }
}

/// Text under `key`, cut to `max` characters; missing is empty, another
/// type is an error.
pub fn text(m: &Map<String, Value>, key: &str, max: usize, whose: &str) -> Result<String, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(super::client::cut(s.trim(), max)),
        Some(other) => Err(format!("{whose} `{key}` is {}, not text", a_type(other))),
    }
}

/// The list under `key`, each element an object; `Err` when it is missing
/// or not such a list.
pub fn objects<'a>(
    m: &'a Map<String, Value>,
    key: &str,
) -> Result<Vec<&'a Map<String, Value>>, String> {
    let list = m
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the judge's reply has no `{key}` list"))?;
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_object()
                .ok_or_else(|| format!("`{key}[{i}]` of the judge's reply is not an object"))
        })
        .collect()
}

/// Finds, for each name asked about, the one element of `items` whose
/// `field` names it (case and surrounding spaces ignored). `Err` names
/// what is missing or answered twice.
pub fn match_names<'a>(
    asked: &[String],
    items: &[&'a Map<String, Value>],
    field: &str,
    what: &str,
) -> Result<Vec<&'a Map<String, Value>>, String> {
    let norm = |s: &str| s.trim().to_lowercase();
    let mut out = Vec::with_capacity(asked.len());
    for name in asked {
        let found: Vec<&&Map<String, Value>> = items
            .iter()
            .filter(|i| {
                i.get(field)
                    .and_then(Value::as_str)
                    .is_some_and(|n| norm(n) == norm(name))
            })
            .collect();
        match found.as_slice() {
            [one] => out.push(**one),
            [] => {
                return Err(format!(
                    "the judge's reply does not score the {what} `{}`",
                    super::client::cut(name, 80)
                ));
            }
            _ => {
                return Err(format!(
                    "the judge's reply scores the {what} `{}` {} times",
                    super::client::cut(name, 80),
                    found.len()
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn completion(content: &str) -> Value {
        json!({"model": "m-1", "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
    }

    #[test]
    fn a_reply_is_one_object_perhaps_fenced() {
        let r = read(&completion(
            "```json\n{\"score\": 0.5, \"reasoning\": \"ok\"}\n```",
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(score(&r.verdict, "score", "the reply"), Ok(0.5));
        assert_eq!(r.input_tokens, Some(10));
        assert_eq!(r.model.as_deref(), Some("m-1"));
    }

    #[test]
    fn what_is_not_a_verdict_is_an_error_saying_why() {
        for (body, want) in [
            (completion("I think it is fine."), "not the JSON object"),
            (completion("[1, 2]"), "an array, not the JSON object"),
            (completion(""), "empty"),
            (
                json!({"choices": [{"message": {"content": null, "refusal": "I can't help with that."}}]}),
                "refused to grade: I can't help with that.",
            ),
            (
                json!({"choices": [{"message": {"content": "{\"sco"}, "finish_reason": "length"}]}),
                "cut off at its `max_tokens`",
            ),
            (json!({"data": []}), "no `choices[0]`"),
            (completion(&"[".repeat(300)), "nested"),
        ] {
            let e = read(&body).err().unwrap_or_default();
            assert!(e.contains(want), "{body}: {e}");
        }
        let m = object_in("{\"score\": 8, \"r\": 1}").unwrap_or_default();
        assert!(score(&m, "score", "the reply").is_err_and(|e| e.contains("outside 0 to 1")));
        assert!(text(&m, "r", 10, "the reply").is_err());
        let m = object_in("{\"score\": \"0.9\"}").unwrap_or_default();
        assert!(score(&m, "score", "the reply").is_err_and(|e| e.contains("a string")));
    }

    #[test]
    fn every_name_asked_is_answered_once() {
        let m = object_in(r#"{"criteria": [{"name": "Covers Query ", "score": 1}, {"name": "b", "score": 0}, {"name": "b", "score": 1}]}"#)
            .unwrap_or_default();
        let items = objects(&m, "criteria").unwrap_or_default();
        let asked = vec!["covers query".to_owned()];
        assert_eq!(
            match_names(&asked, &items, "name", "criterion").map(|v| v.len()),
            Ok(1)
        );
        let twice = vec!["b".to_owned()];
        assert!(
            match_names(&twice, &items, "name", "criterion").is_err_and(|e| e.contains("2 times"))
        );
        let missing = vec!["c".to_owned()];
        assert!(
            match_names(&missing, &items, "name", "criterion")
                .is_err_and(|e| e.contains("does not score"))
        );
    }
}
