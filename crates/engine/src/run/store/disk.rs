//! A trace as it is written to disk and read back: each big value once,
//! streamed, without building a tree of the trace.
//!
//! A record's `output` that is its result's `structuredContent` is written
//! as `{"$ref": "#/raw/structuredContent"}`, and so is a text block of the
//! result that is that same value as JSON text (what a server that follows
//! the spec sends beside structured content); the composition's output,
//! when it is a node's, refers to that node's. Reading puts the values back,
//! cut from the same text again.

use std::io::{self, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json::Json;
use crate::mcp::kept;
use crate::run::trace::{NodeRecord, Trace};

/// A record's reference to its result's structured content: the text of
/// a kept text block that repeats it, and of an output that is it.
const STRUCTURED_REF_TEXT: &str = crate::mcp::REPEATED;
/// A trace up to this size is written pretty-printed (readable), a bigger
/// one compact.
const PRETTY_UP_TO: usize = 1 << 20;

/// The structured content of a result held as text.
#[derive(Deserialize)]
struct Structured<'a> {
    #[serde(borrow, rename = "structuredContent")]
    structured: Option<&'a RawValue>,
}

/// `rec` as it is written: its result kept (a text block that repeats the
/// structured content replaced by a reference, as the connection keeps
/// it), and an output that is the structured content a reference to it.
pub(super) fn shrink(rec: &NodeRecord) -> NodeRecord {
    let mut out = rec.clone();
    out.raw = kept(&rec.raw);
    let raw = out.raw.text();
    let structured = serde_json::from_str::<Structured<'_>>(&raw)
        .ok()
        .and_then(|s| s.structured)
        .map(RawValue::get)
        .filter(|s| *s != "null");
    if let Some(structured) = structured
        && rec.output.text() == structured
    {
        out.output = Json::parse(STRUCTURED_REF_TEXT.to_owned()).unwrap_or_default();
    }
    out
}

/// Puts back an output [`shrink`] wrote as a reference, cut from the
/// result again (no copy).
pub(super) fn grow(rec: &mut NodeRecord) {
    if rec.output.as_text() != Some(STRUCTURED_REF_TEXT) {
        return;
    }
    let raw = rec.raw.clone();
    let Some(cut) = raw.cut() else {
        return;
    };
    if let Some(structured) = serde_json::from_str::<Structured<'_>>(cut.text())
        .ok()
        .and_then(|s| s.structured)
    {
        rec.output = cut.part(structured.get());
    }
}

/// Writes `trace` to `w`, each big value once (see the module's page):
/// pretty-printed when it is small, compact when it is big, never built
/// as one tree or one string first.
pub(super) fn write<W: Write>(trace: &Trace, w: W) -> io::Result<()> {
    // Records hold their values shared: this copy copies pointers (and
    // the small parts: arguments, requests).
    let mut t = trace.clone();
    let mut size = 0;
    let mut output_ref = None;
    for (id, rec) in t.nodes.iter_mut() {
        let shrunk = shrink(rec);
        let same = Json::same(&rec.output, &trace.output)
            || matches!((rec.output.as_text(), trace.output.as_text()), (Some(a), Some(b)) if a == b);
        if output_ref.is_none()
            && !trace.output.is_null()
            && shrunk.output.as_text() == Some(STRUCTURED_REF_TEXT)
            && same
        {
            let id = id.replace('~', "~0").replace('/', "~1");
            output_ref = Some(format!("#/nodes/{id}/raw/structuredContent"));
        }
        size += shrunk.raw.text_len().unwrap_or(0) + shrunk.output.text_len().unwrap_or(0);
        *rec = shrunk;
    }
    if let Some(to) = output_ref {
        let mut reference = serde_json::Map::new();
        reference.insert("$ref".into(), serde_json::Value::from(to));
        t.output = Json::from_value(serde_json::Value::Object(reference));
    }
    size += t.output.text_len().unwrap_or(0);
    let mut w = io::BufWriter::with_capacity(64 * 1024, w);
    if size > PRETTY_UP_TO {
        serde_json::to_writer(&mut w, &t)?;
    } else {
        serde_json::to_writer_pretty(&mut w, &t)?;
    }
    w.flush()
}

/// A saved trace read back, its references filled in again.
pub(super) fn read(text: &str) -> Result<Trace, serde_json::Error> {
    let mut trace: Trace = serde_json::from_str(text)?;
    for rec in trace.nodes.values_mut() {
        grow(rec);
    }
    // Only a small object can be the reference: nothing big is parsed.
    let reference = trace
        .output
        .as_text()
        .filter(|t| t.len() < 1024 && t.starts_with("{\"$ref\":\"#/nodes/"))
        .map(|_| trace.output.tree());
    let suffix = "/raw/structuredContent";
    let pointer = reference
        .and_then(|v| v.as_object())
        .filter(|m| m.len() == 1)
        .and_then(|m| m.get("$ref"))
        .and_then(|r| r.as_str())
        .and_then(|r| r.strip_prefix("#/nodes/"))
        .and_then(|r| r.strip_suffix(suffix))
        .map(|id| id.replace("~1", "/").replace("~0", "~"));
    if let Some(id) = pointer
        && let Some(rec) = trace.nodes.get(&id)
    {
        trace.output = rec.output.clone();
    }
    Ok(trace)
}

/// Appends `value` as one line of compact JSON (a `.running` record),
/// streamed through a small buffer.
pub(super) fn append_line<T: serde::Serialize, W: Write>(value: &T, w: W) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(8 * 1024, w);
    serde_json::to_writer(&mut w, value)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// A shared text, for tests: `text` checked.
#[cfg(test)]
fn json(text: &str) -> Json {
    Json::parse(text.to_owned()).unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn big_record() -> NodeRecord {
        let structured = json!({"records": [{"id": 1, "s": "a \"quoted\" é"}]});
        let text = structured.to_string();
        let raw = json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": false
        });
        let raw = json(&raw.to_string());
        NodeRecord {
            output: crate::mcp::output_of(&raw),
            raw,
            ..NodeRecord::default()
        }
    }

    #[test]
    fn the_structured_content_is_written_once_and_read_back_whole() {
        let rec = big_record();
        let mut trace = Trace {
            output: rec.output.clone(),
            ..Trace::default()
        };
        trace.nodes.insert("n/1".into(), rec.clone());
        let mut bytes = Vec::new();
        write(&trace, &mut bytes).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.matches("quoted").count(), 1, "{text}");
        assert!(
            text.contains("#/nodes/n~11/raw/structuredContent"),
            "{text}"
        );
        let back = read(&text).unwrap();
        // The result is read back as the connection keeps it: the text
        // block that repeated the structured content is a reference.
        assert_eq!(crate::mcp::grown(&back.nodes["n/1"].raw), rec.raw);
        assert_eq!(back.nodes["n/1"].output, rec.output);
        assert_eq!(back.output, rec.output);
        // The output is cut from the result read back, not a copy.
        assert!(back.nodes["n/1"].output.tree_if_built().is_none());
    }

    #[test]
    fn a_record_without_structured_content_is_written_as_it_is() {
        let raw = json(r#"{"content":[{"type":"text","text":"hello"}]}"#);
        let rec = NodeRecord {
            output: crate::mcp::output_of(&raw),
            raw,
            ..NodeRecord::default()
        };
        let shrunk = shrink(&rec);
        assert_eq!(shrunk.raw, rec.raw);
        assert_eq!(shrunk.output, rec.output);
    }

    #[test]
    fn a_line_ends_with_one_newline() {
        let mut line = Vec::new();
        append_line(&json!({"a": 1}), &mut line).unwrap();
        assert_eq!(line, b"{\"a\":1}\n");
    }
}
