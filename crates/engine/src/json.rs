//! A JSON value held once and shared: the one way the engine keeps a
//! server's output, a node's record and everything built from them.
//!
//! A value arrives as text (a tool's result, cut out of the message it came
//! in without a copy, or a saved trace) or is built as a tree (a `transform`,
//! a `mock:`, a value pipewright makes). [`Json`] keeps whichever it got and
//! makes the other on first need: the tree is parsed once, when a reference,
//! jq or a view first walks it, and kept; the text of a tree is written on
//! the fly (into a file, a socket, a token count) and not kept. A fan-out's
//! output is the list of its iterations' outputs, each shared with its
//! iteration's record. Cloning a [`Json`] copies a pointer: the session, its
//! events, the trace, a cassette and the workbench all hold the same value.
//!
//! Serialising writes the text as it is (compact, validated when it was
//! received), so a big output goes to a run's file once, streamed.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

pub(crate) mod scan;

/// A shared JSON value; cloning it is cheap. See the module's page.
#[derive(Clone)]
pub struct Json(Arc<Held>);

struct Held {
    source: Source,
    /// The parsed tree: set from the start for a tree, on first need for
    /// text and lists.
    tree: OnceLock<Value>,
}

enum Source {
    /// Compact JSON text: `buf[range]`, where `buf` may be the whole
    /// message the value was cut from.
    Text {
        buf: Arc<String>,
        range: Range<usize>,
    },
    /// An array of shared values (a fan-out's outputs).
    List(Vec<Json>),
    /// An object of shared values (a call's request and response).
    Object(Vec<(String, Json)>),
    /// The tree is the value.
    Tree,
}

impl Json {
    /// `null`.
    pub fn null() -> Json {
        Json::from_value(Value::Null)
    }

    /// A value built as a tree.
    pub fn from_value(value: Value) -> Json {
        let tree = OnceLock::new();
        let _ = tree.set(value);
        Json(Arc::new(Held {
            source: Source::Tree,
            tree,
        }))
    }

    /// An array of shared values, kept as they are (no copy of the items).
    pub fn list(items: Vec<Json>) -> Json {
        Json(Arc::new(Held {
            source: Source::List(items),
            tree: OnceLock::new(),
        }))
    }

    /// An object of shared values, in this order (no copy of the values).
    pub fn object(members: Vec<(String, Json)>) -> Json {
        Json(Arc::new(Held {
            source: Source::Object(members),
            tree: OnceLock::new(),
        }))
    }

    /// Member `key` of a value held as an object of shared values; any
    /// other value is looked at in its tree.
    pub fn member(&self, key: &str) -> Option<&Value> {
        match &self.0.source {
            Source::Object(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.tree()),
            _ => self.tree().get(key),
        }
    }

    /// A copy of member `key` of an object, read from the text alone when
    /// the value is held as text (the rest is skipped, not parsed).
    pub fn pick(&self, key: &str) -> Option<Value> {
        match self.as_text() {
            Some(text) => pick_member(text, key),
            None => self.member(key).cloned(),
        }
    }

    /// `text`, already checked to be one compact JSON value (see
    /// [`scan::compact`]).
    pub(crate) fn from_checked(buf: Arc<String>, range: Range<usize>) -> Json {
        Json(Arc::new(Held {
            source: Source::Text { buf, range },
            tree: OnceLock::new(),
        }))
    }

    /// Reads JSON text: checked (nesting up to serde_json's 128 levels) and
    /// made compact, but not parsed into a tree until one is needed.
    pub fn parse(text: String) -> Result<Json, scan::Invalid> {
        let text = scan::compact(text)?;
        let range = 0..text.len();
        Ok(Json::from_checked(Arc::new(text), range))
    }

    /// The value as a tree, parsed on the first call and kept.
    pub fn tree(&self) -> &Value {
        self.0.tree.get_or_init(|| match &self.0.source {
            // Checked when it was made: it parses. A failure here could
            // only be memory, and `null` is the safe reading.
            Source::Text { buf, range } => {
                serde_json::from_str(&buf[range.clone()]).unwrap_or(Value::Null)
            }
            Source::List(items) => Value::Array(items.iter().map(|j| j.tree().clone()).collect()),
            Source::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.tree().clone()))
                    .collect(),
            ),
            Source::Tree => Value::Null,
        })
    }

    /// The value as a tree of its own: moved out when this is the only
    /// holder of a built tree, parsed or copied otherwise.
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(held) => match held.tree.into_inner() {
                Some(tree) => tree,
                None => Json(Arc::new(Held {
                    source: held.source,
                    tree: OnceLock::new(),
                }))
                .tree()
                .clone(),
            },
            Err(shared) => Json(shared).tree().clone(),
        }
    }

    /// The tree if it was built already; `None` for text not parsed yet.
    pub fn tree_if_built(&self) -> Option<&Value> {
        self.0.tree.get()
    }

    /// The compact JSON text: borrowed when the value is text, written out
    /// otherwise.
    pub fn text(&self) -> Cow<'_, str> {
        match &self.0.source {
            Source::Text { buf, range } => Cow::Borrowed(&buf[range.clone()]),
            _ => {
                let mut out = Vec::new();
                let _ = self.write_to(&mut out);
                Cow::Owned(String::from_utf8(out).unwrap_or_default())
            }
        }
    }

    /// The text when the value is held as text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0.source {
            Source::Text { buf, range } => Some(&buf[range.clone()]),
            _ => None,
        }
    }

    /// The value held as text, to cut parts out of without a copy.
    pub fn cut(&self) -> Option<Cut<'_>> {
        match &self.0.source {
            Source::Text { buf, range } => Some(Cut {
                buf,
                range: range.clone(),
            }),
            _ => None,
        }
    }

    /// The items of a value held as a list of shared values.
    pub fn as_list(&self) -> Option<&[Json]> {
        match &self.0.source {
            Source::List(items) => Some(items),
            _ => None,
        }
    }

    /// Writes the compact JSON text to `w`, streamed: a tree or a list is
    /// never turned into one string first.
    pub fn write_to<W: io::Write>(&self, w: &mut W) -> io::Result<()> {
        match &self.0.source {
            Source::Text { buf, range } => w.write_all(buf[range.clone()].as_bytes()),
            Source::List(items) => {
                w.write_all(b"[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        w.write_all(b",")?;
                    }
                    item.write_to(w)?;
                }
                w.write_all(b"]")
            }
            Source::Object(members) => {
                w.write_all(b"{")?;
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        w.write_all(b",")?;
                    }
                    serde_json::to_writer(&mut *w, key).map_err(io::Error::other)?;
                    w.write_all(b":")?;
                    value.write_to(w)?;
                }
                w.write_all(b"}")
            }
            Source::Tree => serde_json::to_writer(w, self.tree()).map_err(io::Error::other),
        }
    }

    /// True for `null`, without parsing text.
    pub fn is_null(&self) -> bool {
        match &self.0.source {
            Source::Text { buf, range } => &buf[range.clone()] == "null",
            Source::List(_) | Source::Object(_) => false,
            Source::Tree => self.tree().is_null(),
        }
    }

    /// The string a value is, without parsing anything else: `Some` only
    /// for a JSON string.
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match &self.0.source {
            Source::Text { buf, range } if buf[range.clone()].starts_with('"') => {
                self.tree().as_str().map(Cow::Borrowed)
            }
            Source::Tree => self.tree().as_str().map(Cow::Borrowed),
            _ => None,
        }
    }

    /// Bytes of the value's compact text, when known without writing it.
    pub fn text_len(&self) -> Option<usize> {
        match &self.0.source {
            Source::Text { range, .. } => Some(range.len()),
            _ => None,
        }
    }

    /// True when both hold the very same value (one was cloned from the
    /// other).
    pub fn same(a: &Json, b: &Json) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

/// Member `key` of the object `text`, parsed alone.
fn pick_member(text: &str, key: &str) -> Option<Value> {
    struct Pick<'k>(&'k str);
    impl<'de> serde::de::Visitor<'de> for Pick<'_> {
        type Value = Option<Value>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if k == self.0 && found.is_none() {
                    found = Some(map.next_value::<Value>()?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde::Deserializer::deserialize_map(&mut de, Pick(key))
        .ok()
        .flatten()
}

/// A value held as text, seen as the text it is cut from (see [`Json::cut`]).
pub struct Cut<'a> {
    buf: &'a Arc<String>,
    range: Range<usize>,
}

impl Cut<'_> {
    /// The value's text.
    pub fn text(&self) -> &str {
        &self.buf[self.range.clone()]
    }

    /// `part`, a slice of [`Cut::text`] that is one JSON value (a value
    /// inside it), as a value sharing the text. Anything else is read anew.
    pub fn part(&self, part: &str) -> Json {
        let start = (part.as_ptr() as usize).wrapping_sub(self.buf.as_ptr() as usize);
        let range = start..start.saturating_add(part.len());
        let inside = self.range.start <= range.start && range.end <= self.range.end;
        match self.buf.get(range.clone()) {
            Some(slice) if inside && slice.as_ptr() == part.as_ptr() => {
                Json::from_checked(Arc::clone(self.buf), range)
            }
            _ => Json::parse(part.to_owned()).unwrap_or_default(),
        }
    }
}

impl Default for Json {
    fn default() -> Self {
        Json::null()
    }
}

impl From<Value> for Json {
    fn from(value: Value) -> Self {
        Json::from_value(value)
    }
}

impl<I: serde_json::value::Index> std::ops::Index<I> for Json {
    type Output = Value;

    /// Indexes the tree, as `Value` does (`null` for what is not there).
    fn index(&self, index: I) -> &Value {
        &self.tree()[index]
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        if Json::same(self, other) {
            return true;
        }
        match (self.as_text(), other.as_text()) {
            (Some(a), Some(b)) if a == b => true,
            _ => self.tree() == other.tree(),
        }
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        self.tree() == other
    }
}

impl PartialEq<&str> for Json {
    fn eq(&self, other: &&str) -> bool {
        self.tree() == other
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 200;
        let text = self.text();
        match text.char_indices().nth(SHOWN) {
            Some((cut, _)) => write!(f, "Json({}…)", &text[..cut]),
            None => write!(f, "Json({text})"),
        }
    }
}

impl fmt::Display for Json {
    /// The compact JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.source {
            Source::Text { buf, range } => {
                // serde_json writes a raw value as it is; the text was
                // checked when it came in, and is checked again here
                // (without allocating) so no serializer is ever handed
                // broken JSON.
                let raw: &RawValue =
                    serde_json::from_str(&buf[range.clone()]).map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
            Source::List(items) => items.serialize(serializer),
            Source::Object(members) => {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Source::Tree => self.tree().serialize(serializer),
        }
    }
}

/// The name under which serde_json hands out a value's raw text (what
/// its `RawValue` asks for): a reader of JSON text gives the text, any
/// other deserializer (a `Value`, an enum serde buffered) gives the value.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for Json {
    /// Keeps the text as it is when reading JSON text (a saved trace's
    /// outputs are not parsed until they are looked at); builds the tree
    /// from any other deserializer.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_TOKEN, JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Value::deserialize(d).map(Json::from_value)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Json::from_value(Value::Object(serde_json::Map::new())));
        };
        if first == RAW_TOKEN {
            let text: String = map.next_value()?;
            return Json::parse(text).map_err(serde::de::Error::custom);
        }
        let mut object = serde_json::Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        Ok(Json::from_value(Value::Object(object)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Json::from_value(Value::Array(items)))
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::null())
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::null())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::from_value(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::from_value(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::from_value(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::from_value(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::from_value(Value::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::from_value(Value::String(v)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_is_kept_and_parsed_once_on_need() {
        let j = Json::parse("{\"a\": [1, 2], \"b\": \"x y\"}".to_owned()).unwrap();
        assert!(j.tree_if_built().is_none());
        assert_eq!(j.text(), r#"{"a":[1,2],"b":"x y"}"#);
        assert_eq!(j.tree()["a"][1], 2);
        assert!(j.tree_if_built().is_some());
        let again = j.clone();
        assert!(Json::same(&j, &again));
    }

    #[test]
    fn a_list_writes_its_items_without_a_tree() {
        let items = vec![
            Json::parse("{\"n\":1}".to_owned()).unwrap(),
            Json::from_value(json!("two")),
            Json::null(),
        ];
        let list = Json::list(items.clone());
        assert_eq!(list.text(), r#"[{"n":1},"two",null]"#);
        assert!(list.tree_if_built().is_none());
        assert_eq!(list.tree(), &json!([{"n": 1}, "two", null]));
        assert!(Json::same(&list.as_list().unwrap()[0], &items[0]));
    }

    #[test]
    fn an_object_writes_its_members_without_a_tree() {
        let request = Json::parse(r#"{"id":1}"#.to_owned()).unwrap();
        let rpc = Json::object(vec![
            ("request".into(), request.clone()),
            ("response".into(), Json::from_value(json!({"id": 1}))),
        ]);
        assert_eq!(rpc.text(), r#"{"request":{"id":1},"response":{"id":1}}"#);
        assert_eq!(serde_json::to_string(&rpc).unwrap(), rpc.text());
        assert!(rpc.tree_if_built().is_none());
        assert_eq!(rpc.member("request"), Some(&json!({"id": 1})));
        assert_eq!(
            rpc.tree(),
            &json!({"request": {"id": 1}, "response": {"id": 1}})
        );
    }

    #[test]
    fn serialises_as_the_value_it_holds() {
        #[derive(Serialize, Deserialize)]
        struct Rec {
            out: Json,
        }
        let rec = Rec {
            out: Json::parse("[1, {\"k\": null}]".to_owned()).unwrap(),
        };
        let text = serde_json::to_string(&rec).unwrap();
        assert_eq!(text, r#"{"out":[1,{"k":null}]}"#);
        let pretty = serde_json::to_string_pretty(&rec).unwrap();
        let back: Rec = serde_json::from_str(&pretty).unwrap();
        assert_eq!(back.out.text(), r#"[1,{"k":null}]"#);
        assert_eq!(
            serde_json::to_value(&rec).unwrap(),
            json!({"out": [1, {"k": null}]})
        );
    }

    #[test]
    fn reads_from_any_deserializer() {
        // Inside an internally tagged enum serde buffers the value first:
        // no raw text to keep, the tree is built.
        #[derive(Serialize, Deserialize, Debug)]
        #[serde(tag = "kind")]
        enum Tagged {
            A { out: Json },
        }
        let text = r#"{"kind":"A","out":{"x":[1,"two",null,true,1.5]}}"#;
        let Tagged::A { out } = serde_json::from_str(text).unwrap();
        assert_eq!(out, json!({"x": [1, "two", null, true, 1.5]}));
        let back = serde_json::to_string(&Tagged::A { out }).unwrap();
        assert_eq!(back, text);
        let from_value: Json = serde_json::from_value(json!({"a": [1]})).unwrap();
        assert_eq!(from_value.text(), r#"{"a":[1]}"#);
        let from_reader: Json = serde_json::from_reader(&b"[1, 2]"[..]).unwrap();
        assert_eq!(from_reader.as_text(), Some("[1,2]"));
    }

    #[test]
    fn equality_is_by_value() {
        let a = Json::parse("{\"x\":1}".to_owned()).unwrap();
        let b = Json::from_value(json!({"x": 1}));
        assert_eq!(a, b);
        assert_ne!(a, Json::null());
        assert!(Json::null().is_null() && Json::parse("null".into()).unwrap().is_null());
    }

    #[test]
    fn bad_text_is_refused() {
        assert!(Json::parse("{\"a\":".to_owned()).is_err());
        assert!(Json::parse("NaN".to_owned()).is_err());
        assert!(Json::parse(format!("{}1{}", "[".repeat(200), "]".repeat(200))).is_err());
    }
}
