//! Token counts of what a pipeline produces, with OpenAI's `o200k_base`
//! encoding (shipped inside the `bpe-openai` crate; nothing is downloaded),
//! so an author sees what a node's output would put into an agent's context.

use serde_json::Value;

/// Tokens of `text`.
pub fn count(text: &str) -> u64 {
    bpe_openai::o200k_base().count(text) as u64
}

/// Tokens of a JSON value as an agent would receive it: a string as its
/// text, anything else as compact JSON; `null` (nothing) is zero.
pub fn count_value(v: &Value) -> u64 {
    match v {
        Value::Null => 0,
        Value::String(s) => count(s),
        other => count(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert_eq!(count_value(&Value::Null), 0);
        assert_eq!(count_value(&json!("hello world")), 2);
        let long = "word ".repeat(1000);
        let n = count(&long);
        assert!((900..=1100).contains(&n), "{n}");
        assert!(count_value(&json!({"a": [1, 2, 3]})) > 3);
    }
}
