//! JSON as pipewright prints it: serde_json's text with DEL and the C1
//! controls (U+007F–U+009F) escaped as `\u00XX` too. serde_json escapes
//! only C0, and a terminal that reads 8-bit controls acts on a raw U+009B
//! (CSI) or U+009D (OSC) as it would on ESC `[` or ESC `]`.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};

/// `value` as indented JSON, every control character escaped.
pub fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    to_string(value, Inert(PrettyFormatter::new()))
}

/// Prints `value` as indented JSON and a newline to stdout, every control
/// character escaped, streamed (a big trace is never one string first).
pub fn print_pretty<T: Serialize + ?Sized>(value: &T) {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Inert(PrettyFormatter::new()));
    if value.serialize(&mut ser).is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn to_string<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    if value.serialize(&mut ser).is_err() {
        // As `serde_json::to_string(…).unwrap_or_default()` did: a value
        // that cannot be JSON (a map with non-string keys) prints nothing.
        return String::new();
    }
    // The formatter writes only what serde_json gave it, which is UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Whether a terminal could act on `c` though serde_json leaves it raw.
fn unescaped_control(c: char) -> bool {
    ('\u{7f}'..='\u{9f}').contains(&c)
}

/// `text` with DEL and every C1 control written as its `\u00XX` escape.
/// In valid JSON text such a character can only stand inside a string
/// (JSON's whitespace is space, tab, CR and LF), so the result is valid
/// JSON with the same meaning.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.contains(unescaped_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unescaped_control(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A formatter that writes as `F` does, but DEL and the C1 controls in
/// strings and in raw fragments (`RawValue`) as `\u00XX` escapes.
pub struct Inert<F>(pub F);

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $name<W: ?Sized + Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.0.$name(writer $(, $arg)*)
            }
        )*
    };
}

impl<F: Formatter> Formatter for Inert<F> {
    forward! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        begin_string();
        end_string();
        write_char_escape(char_escape: CharEscape);
        write_byte_array(value: &[u8]);
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.0
            .write_string_fragment(writer, &escape_controls(fragment))
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.0
            .write_raw_fragment(writer, &escape_controls(fragment))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::ser::CompactFormatter;

    /// `value` as one line of JSON, every control character escaped.
    fn compact<T: Serialize + ?Sized>(value: &T) -> String {
        to_string(value, Inert(CompactFormatter))
    }

    #[test]
    fn c1_controls_and_del_are_escaped_and_the_json_means_the_same() {
        let v = json!({"t\u{9d}k": ["a\u{9b}2J", "\u{7f}\u{80}\u{9f}\u{a0}é\u{1b}"]});
        for text in [pretty(&v), compact(&v)] {
            assert!(!text.contains(unescaped_control), "{text:?}");
            assert!(!text.contains('\u{1b}'), "{text:?}");
            assert!(text.contains(r"t\u009dk"), "{text}");
            assert!(text.contains(r"a\u009b2J"), "{text}");
            assert!(text.contains(r"\u007f\u0080\u009f"), "{text}");
            assert!(text.contains("\u{a0}é"), "not a control: {text:?}");
            let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(back, v);
        }
        assert_eq!(
            compact(&json!([1, "x"])),
            serde_json::to_string(&json!([1, "x"])).unwrap()
        );
        assert_eq!(
            pretty(&v).lines().count(),
            serde_json::to_string_pretty(&v).unwrap().lines().count()
        );
    }

    /// What `RawValue` hands the formatter (serde_json's `raw_value`).
    #[test]
    fn raw_fragments_are_escaped_and_stay_valid() {
        let raw = "{\"a\": \"x\u{9b}y\u{7f}\", \"b\": [1, \"\u{85}\"]}";
        let mut out = Vec::new();
        Inert(CompactFormatter)
            .write_raw_fragment(&mut out, raw)
            .expect("written");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(!text.contains(unescaped_control), "{text:?}");
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, json!({"a": "x\u{9b}y\u{7f}", "b": [1, "\u{85}"]}));
    }
}
