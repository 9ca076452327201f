//! From a raw `tools/call` result to a node's output (SPEC §1, "What a node's
//! output is") and to the text of a failed call.
//!
//! A result that arrived as text is read without building its tree: the
//! output is cut out of the same text (`structuredContent`, the `content`
//! array, a text item's string), so a big answer is held once.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::json::Json;

/// The node output of a raw `CallToolResult`:
///
/// 1. `structuredContent` when present (and not `null`);
/// 2. else, when `content` holds exactly one text item, that text parsed as
///    JSON if it parses;
/// 3. else that text as a JSON string;
/// 4. else the `content` array itself (`[]` when absent).
pub fn output_of(result: &Json) -> Json {
    match result.cut() {
        Some(cut) => from_text(&cut),
        None => Json::from_value(output_of_value(result.tree())),
    }
}

/// What a text block that only repeats the result's structured content
/// (the JSON text servers send beside it for older clients) is kept as.
pub const REPEATED: &str = r##"{"$ref":"#/raw/structuredContent"}"##;

/// A result, `text[range]` (checked, compact), kept: a text block that only
/// repeats its structured content is replaced in place by [`REPEATED`], so
/// the value is held once; [`grown`] writes it out again. An error result
/// is kept whole.
pub(crate) fn keep(mut text: String, mut range: Range<usize>) -> Json {
    if let Some(block) = repeated_block(&text[range.clone()]) {
        let block = range.start + block.start..range.start + block.end;
        range.end = range.end - block.len() + REPEATED.len();
        text.replace_range(block, REPEATED);
        if text.capacity() > text.len() + text.len() / 4 + 4096 {
            text.shrink_to_fit();
        }
    }
    Json::from_checked(Arc::new(text), range)
}

/// A result rmcp parsed, written out once as the text pipewright keeps.
pub(crate) fn kept_from<T: serde::Serialize>(result: &T) -> Result<Json, String> {
    let text = serde_json::to_string(result).map_err(|e| e.to_string())?;
    let text = crate::json::scan::compact(text).map_err(|e| e.to_string())?;
    let whole = 0..text.len();
    Ok(keep(text, whole))
}

/// [`keep`] of a value held already: the value itself (shared) when it
/// has no text block to replace.
pub fn kept(result: &Json) -> Json {
    let text = result.text();
    match repeated_block(&text) {
        None => result.clone(),
        Some(_) => {
            let text = text.into_owned();
            let whole = 0..text.len();
            keep(text, whole)
        }
    }
}

/// `result` as the server sent it: a kept text block that repeats the
/// structured content is written out again (a copy, for showing or
/// exporting it).
pub fn grown(result: &Json) -> Json {
    let text = result.text();
    let text = text.as_ref();
    if !text.contains(REPEATED) {
        return result.clone();
    }
    let Ok(parts) = serde_json::from_str::<Parts<'_>>(text) else {
        return result.clone();
    };
    let (Some(structured), Some(at)) = (
        parts.structured,
        parts
            .texts()
            .find(|t| t.get() == REPEATED)
            .and_then(|t| span(text, t.get())),
    ) else {
        return result.clone();
    };
    let literal = serde_json::to_string(structured.get()).unwrap_or_default();
    let mut out = String::with_capacity(text.len() + literal.len());
    out.push_str(&text[..at.start]);
    out.push_str(&literal);
    out.push_str(&text[at.end..]);
    let whole = 0..out.len();
    Json::from_checked(Arc::new(out), whole)
}

/// Where in `result` a text block that only repeats its structured content
/// sits (the string literal's bytes), unless it is an error.
fn repeated_block(result: &str) -> Option<Range<usize>> {
    let parts = serde_json::from_str::<Parts<'_>>(result).ok()?;
    if parts.is_error == Some(true) {
        return None;
    }
    let structured = parts.structured?.get();
    let literal = parts
        .texts()
        .find(|t| crate::json::scan::string_equals(t.get(), structured))?;
    span(result, literal.get())
}

/// The parts of a result a kept text block is about.
#[derive(Deserialize)]
struct Parts<'a> {
    #[serde(borrow, rename = "structuredContent")]
    structured: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<Vec<Block<'a>>>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

impl<'a> Parts<'a> {
    fn texts(&self) -> impl Iterator<Item = &'a RawValue> + '_ {
        self.content.iter().flatten().filter_map(|b| b.text)
    }
}

/// Where `part` (a slice of `text`) sits in it.
fn span(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start + part.len();
    (end <= text.len()).then_some(start..end)
}

/// The result's `_meta`, when it has one.
pub fn meta_of(result: &Json) -> Option<Value> {
    if let Some(text) = result.as_text() {
        #[derive(Deserialize)]
        struct Meta {
            #[serde(rename = "_meta")]
            meta: Option<Value>,
        }
        return serde_json::from_str::<Meta>(text).ok()?.meta;
    }
    result.tree().get("_meta").cloned()
}

/// The result's `isError`.
pub fn is_error(result: &Json) -> bool {
    if let Some(text) = result.as_text() {
        #[derive(Deserialize)]
        struct Flag {
            #[serde(rename = "isError")]
            is_error: Option<bool>,
        }
        return serde_json::from_str::<Flag>(text)
            .ok()
            .and_then(|f| f.is_error)
            == Some(true);
    }
    result.tree().get("isError").and_then(Value::as_bool) == Some(true)
}

/// The parts of a result held as text.
#[derive(Deserialize)]
struct View<'a> {
    /// `None` when absent or `null`.
    #[serde(borrow, rename = "structuredContent")]
    structured: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

/// One content item, as far as rule 2 looks at it.
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

/// The items of `content`: how many, and the first.
struct Items<'a> {
    count: usize,
    first: Option<Item<'a>>,
}

impl<'de> Deserialize<'de> for Items<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Items<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
                // A first item that is not an object is no text item.
                let first = match seq.next_element::<&'de RawValue>()? {
                    None => {
                        return Ok(Items {
                            count: 0,
                            first: None,
                        });
                    }
                    Some(raw) => serde_json::from_str::<Item<'de>>(raw.get()).ok(),
                };
                let mut count = 1;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    count += 1;
                }
                Ok(Items { count, first })
            }
        }
        d.deserialize_seq(V)
    }
}

fn from_text(cut: &crate::json::Cut<'_>) -> Json {
    let text = cut.text();
    let Ok(view) = serde_json::from_str::<View<'_>>(text) else {
        return Json::from_value(Value::Array(Vec::new()));
    };
    if let Some(structured) = view.structured {
        return cut.part(structured.get());
    }
    let Some(content) = view.content else {
        return Json::from_value(Value::Array(Vec::new()));
    };
    if !content.get().starts_with('[') {
        return Json::from_value(Value::Array(Vec::new()));
    }
    if let Ok(Items {
        count: 1,
        first: Some(item),
    }) = serde_json::from_str::<Items<'_>>(content.get())
        && item.kind.as_deref() == Some("text")
        && let Some(literal) = item.text
        && let Ok(string) = serde_json::from_str::<Cow<'_, str>>(literal.get())
    {
        // Rule 2: the text parsed as JSON. Rule 3: the text itself, which
        // is the string literal already in the result.
        return match Json::parse(string.into_owned()) {
            Ok(parsed) => parsed,
            Err(_) => cut.part(literal.get()),
        };
    }
    cut.part(content.get())
}

/// The four rules over a result held as a tree.
fn output_of_value(result: &Value) -> Value {
    if let Some(structured) = result.get("structuredContent")
        && !structured.is_null()
    {
        return structured.clone();
    }
    let content = result.get("content");
    if let Some(text) = single_text(content) {
        return match Json::parse(text.to_owned()) {
            Ok(parsed) => parsed.tree().clone(),
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
pub fn error_text(result: &Json) -> String {
    let result = result.tree();
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
    #[case::escaped_text_not_json(
        json!({"content": [{"type": "text", "text": "line 1\n\"quoted\" é"}]}),
        json!("line 1\n\"quoted\" é")
    )]
    #[case::two_texts_give_the_array(
        json!({"content": [{"type": "text", "text": "1"}, {"type": "text", "text": "2"}]}),
        json!([{"type": "text", "text": "1"}, {"type": "text", "text": "2"}])
    )]
    #[case::single_image_gives_the_array(
        json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
        json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    )]
    #[case::a_first_item_that_is_no_object(json!({"content": [3]}), json!([3]))]
    #[case::empty_content(json!({"content": []}), json!([]))]
    #[case::no_content_at_all(json!({"isError": false}), json!([]))]
    fn output_follows_the_four_rules(#[case] result: Value, #[case] want: Value) {
        // The same four rules whether the result is held as a tree or as
        // the text it arrived as.
        assert_eq!(output_of(&Json::from_value(result.clone())).tree(), &want);
        let text = Json::parse(result.to_string()).unwrap();
        let out = output_of(&text);
        assert_eq!(out.tree(), &want, "from text");
    }

    #[test]
    fn a_text_block_that_repeats_the_structured_content_is_kept_once() {
        let structured = json!({"rows": [{"id": 1, "s": "a \"q\" é"}]});
        let result = json!({
            "content": [{"type": "text", "text": structured.to_string()}],
            "structuredContent": structured,
        });
        let text = result.to_string();
        let range = 0..text.len();
        let kept = keep(text, range);
        assert_eq!(kept.as_text().unwrap().matches("rows").count(), 1, "{kept}");
        assert_eq!(output_of(&kept), structured);
        assert_eq!(grown(&kept), result);
        // An error result, or a text that differs, is kept whole.
        let mut error = result.clone();
        error["isError"] = json!(true);
        let text = error.to_string();
        let range = 0..text.len();
        assert_eq!(keep(text, range), error);
        let mut other = result.clone();
        other["content"][0]["text"] = json!("a summary");
        let text = other.to_string();
        let range = 0..text.len();
        assert_eq!(keep(text, range), other);
    }

    #[test]
    fn an_output_cut_from_text_shares_it() {
        let result = Json::parse(
            r#"{"content":[{"type":"text","text":"x"},{"type":"text","text":"y"}],"_meta":{"k":1}}"#
                .to_owned(),
        )
        .unwrap();
        let out = output_of(&result);
        assert_eq!(
            out.as_text(),
            Some(r#"[{"type":"text","text":"x"},{"type":"text","text":"y"}]"#)
        );
        assert!(out.tree_if_built().is_none(), "no tree was built");
        assert_eq!(meta_of(&result), Some(json!({"k": 1})));
        assert!(!is_error(&result));
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
        assert_eq!(error_text(&Json::from_value(result)), want);
    }
}
