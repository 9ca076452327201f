//! From a raw `tools/call` result to a node's output (SPEC §1, "What a node's
//! output is") and to the text of a failed call.

use serde_json::Value;

/// The node output of a raw `CallToolResult`:
///
/// 1. `structuredContent` when present (and not `null`);
/// 2. else, when `content` holds exactly one text item, that text parsed as
///    JSON if it parses;
/// 3. else that text as a JSON string;
/// 4. else the `content` array itself (`[]` when absent).
pub fn output_of(result: &Value) -> Value {
    if let Some(structured) = result.get("structuredContent")
        && !structured.is_null()
    {
        return structured.clone();
    }
    let content = result.get("content");
    if let Some(text) = single_text(content) {
        return match serde_json::from_str::<Value>(text) {
            Ok(parsed) => parsed,
            Err(_) => Value::String(text.to_owned()),
        };
    }
    match content {
        Some(content @ Value::Array(_)) => content.clone(),
        _ => Value::Array(Vec::new()),
    }
}

/// The text of the only content item, when there is exactly one and it is text.
fn single_text(content: Option<&Value>) -> Option<&str> {
    match content?.as_array()?.as_slice() {
        [item] if item.get("type").and_then(Value::as_str) == Some("text") => {
            item.get("text").and_then(Value::as_str)
        }
        _ => None,
    }
}

/// A human-readable message for a result with `isError: true`: its text
/// contents joined by newlines; else its content (or structured content) as
/// compact JSON.
pub fn error_text(result: &Value) -> String {
    let content = result.get("content").and_then(Value::as_array);
    let texts: Vec<&str> = content
        .into_iter()
        .flatten()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    if let Some(content) = content
        && !content.is_empty()
    {
        return Value::Array(content.clone()).to_string();
    }
    match result.get("structuredContent") {
        Some(structured) if !structured.is_null() => structured.to_string(),
        _ => "the tool reported an error without saying what went wrong".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    #[rstest]
    #[case::structured_content_wins(
        json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"b": 2}}),
        json!({"b": 2})
    )]
    #[case::structured_scalar(json!({"content": [], "structuredContent": 7}), json!(7))]
    #[case::null_structured_falls_through(
        json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": null}),
        json!("hi")
    )]
    #[case::single_text_parsed_as_json(
        json!({"content": [{"type": "text", "text": " {\"users\": [1, 2]} "}]}),
        json!({"users": [1, 2]})
    )]
    #[case::single_text_number(json!({"content": [{"type": "text", "text": "42"}]}), json!(42))]
    #[case::single_text_not_json(
        json!({"content": [{"type": "text", "text": "Echo: hello"}]}),
        json!("Echo: hello")
    )]
    #[case::two_texts_give_the_array(
        json!({"content": [{"type": "text", "text": "1"}, {"type": "text", "text": "2"}]}),
        json!([{"type": "text", "text": "1"}, {"type": "text", "text": "2"}])
    )]
    #[case::single_image_gives_the_array(
        json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
        json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    )]
    #[case::empty_content(json!({"content": []}), json!([]))]
    #[case::no_content_at_all(json!({"isError": false}), json!([]))]
    fn output_follows_the_four_rules(#[case] result: Value, #[case] want: Value) {
        assert_eq!(output_of(&result), want);
    }

    #[rstest]
    #[case::joined_texts(
        json!({"isError": true, "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "x", "mimeType": "image/png"},
            {"type": "text", "text": "second"}
        ]}),
        "first\nsecond"
    )]
    #[case::non_text_content_as_json(
        json!({"isError": true, "content": [{"type": "image", "data": "x", "mimeType": "image/png"}]}),
        r#"[{"type":"image","data":"x","mimeType":"image/png"}]"#
    )]
    #[case::structured_only(
        json!({"isError": true, "content": [], "structuredContent": {"code": 3}}),
        r#"{"code":3}"#
    )]
    #[case::nothing_at_all(
        json!({"isError": true}),
        "the tool reported an error without saying what went wrong"
    )]
    fn error_text_reads_well(#[case] result: Value, #[case] want: &str) {
        assert_eq!(error_text(&result), want);
    }
}
