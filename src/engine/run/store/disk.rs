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

use crate::engine::json::{Json, scan};
use crate::engine::run::trace::{NodeRecord, Trace};

/// A record's reference to its result's structured content.
const STRUCTURED_REF: &str = "#/raw/structuredContent";
/// The text of that reference, as a value is written (compact).
const STRUCTURED_REF_TEXT: &str = r##"{"$ref":"#/raw/structuredContent"}"##;
/// A trace up to this size is written pretty-printed (readable), a bigger
/// one compact.
const PRETTY_UP_TO: usize = 1 << 20;

/// The parts of a result the references are about.
#[derive(Deserialize)]
struct Parts<'a> {
    #[serde(borrow, rename = "structuredContent")]
    structured: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<Vec<Block<'a>>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

/// Where `part` (a slice of `text`) sits in it.
fn span(text: &str, part: &str) -> Option<std::ops::Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start + part.len();
    (end <= text.len()).then_some(start..end)
}

/// `text` with `range` replaced by `with`, as a value.
fn splice(text: &str, range: std::ops::Range<usize>, with: &str) -> Json {
    let mut out = String::with_capacity(text.len() - range.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    Json::parse(out).unwrap_or_default()
}

/// `rec` as it is written: its output and its result's text block that
/// repeat the structured content become references to it.
pub(super) fn shrink(rec: &NodeRecord) -> NodeRecord {
    let mut out = rec.clone();
    let raw = rec.raw.text();
    let Ok(parts) = serde_json::from_str::<Parts<'_>>(&raw) else {
        return out;
    };
    let Some(structured) = parts.structured.map(RawValue::get).filter(|s| *s != "null") else {
        return out;
    };
    if rec.output.text() == structured {
        out.output = Json::parse(STRUCTURED_REF_TEXT.to_owned()).unwrap_or_default();
    }
    let repeated = parts
        .content
        .iter()
        .flatten()
        .filter_map(|b| b.text)
        .find(|literal| scan::string_equals(literal.get(), structured));
    if let Some(range) = repeated.and_then(|literal| span(&raw, literal.get())) {
        out.raw = splice(&raw, range, STRUCTURED_REF_TEXT);
    }
    out
}

/// Puts back what [`shrink`] left out.
pub(super) fn grow(rec: &mut NodeRecord) {
    let raw = rec.raw.clone();
    let Some(cut) = raw.cut() else {
        return;
    };
    let Ok(parts) = serde_json::from_str::<Parts<'_>>(cut.text()) else {
        return;
    };
    let Some(structured) = parts.structured.map(RawValue::get) else {
        return;
    };
    if rec.output.as_text() == Some(STRUCTURED_REF_TEXT) {
        rec.output = cut.part(structured);
    }
    let reference = parts
        .content
        .iter()
        .flatten()
        .filter_map(|b| b.text)
        .find(|t| t.get() == STRUCTURED_REF_TEXT);
    if let Some(range) = reference.and_then(|r| span(cut.text(), r.get())) {
        let literal = serde_json::to_string(structured).unwrap_or_default();
        rec.raw = splice(cut.text(), range, &literal);
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
    let suffix = format!("/{}", STRUCTURED_REF.trim_start_matches("#/"));
    let pointer = reference
        .and_then(|v| v.as_object())
        .filter(|m| m.len() == 1)
        .and_then(|m| m.get("$ref"))
        .and_then(|r| r.as_str())
        .and_then(|r| r.strip_prefix("#/nodes/"))
        .and_then(|r| r.strip_suffix(suffix.as_str()))
        .map(|id| id.replace("~1", "/").replace("~0", "~"));
    if let Some(id) = pointer
        && let Some(rec) = trace.nodes.get(&id)
    {
        trace.output = rec.output.clone();
    }
    Ok(trace)
}

/// A value as the one line it is appended as (the `.running` record).
pub(super) fn line<T: serde::Serialize>(value: &T) -> io::Result<Vec<u8>> {
    let mut out = serde_json::to_vec(value).map_err(io::Error::other)?;
    out.push(b'\n');
    Ok(out)
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
            output: crate::engine::mcp::output_of(&raw),
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
        assert_eq!(back.nodes["n/1"].raw, rec.raw);
        assert_eq!(back.nodes["n/1"].output, rec.output);
        assert_eq!(back.output, rec.output);
        // The output is cut from the result read back, not a copy.
        assert!(back.nodes["n/1"].output.tree_if_built().is_none());
    }

    #[test]
    fn a_record_without_structured_content_is_written_as_it_is() {
        let raw = json(r#"{"content":[{"type":"text","text":"hello"}]}"#);
        let rec = NodeRecord {
            output: crate::engine::mcp::output_of(&raw),
            raw,
            ..NodeRecord::default()
        };
        let shrunk = shrink(&rec);
        assert_eq!(shrunk.raw, rec.raw);
        assert_eq!(shrunk.output, rec.output);
    }

    #[test]
    fn a_line_ends_with_one_newline() {
        let line = line(&json!({"a": 1})).unwrap();
        assert_eq!(line, b"{\"a\":1}\n");
    }
}
