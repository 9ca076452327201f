//! Secrets never reach a trace, a cassette or a log: every value that came
//! from a header or `${env.X}` is replaced by `***` wherever it appears,
//! and so is every form a server can trivially make of it — base64 and
//! base64url (at any alignment, so `base64("user:" + SECRET)` is caught
//! too), hex, percent- and form-encoding as the usual libraries write
//! them, and the value reversed — as CI systems mask derived forms of
//! their secrets. The plain, reversed, hex and percent forms are matched
//! in any ASCII case; base64 is case-sensitive by nature.

use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde_json::Value;

use crate::json::Json;

/// Text written instead of a secret.
pub const MASK: &str = "***";

/// Secrets shorter than this are not masked: masking `a` would mangle every
/// word that holds the letter.
const MIN_SECRET_LEN: usize = 4;

/// A derived form shorter than this is not masked: a few base64 letters
/// turn up by chance in any image or hash a server returns.
const MIN_FORM_LEN: usize = 8;

/// The set of secret values of a run; cheap to clone and share.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Arc<RwLock<Secrets>>,
}

/// The secrets as given, and the automata that find them and their forms.
#[derive(Debug, Default)]
struct Secrets {
    given: Vec<String>,
    /// The plain, reversed, hex and percent forms, any ASCII case.
    folded: Option<AhoCorasick>,
    /// The base64 forms.
    exact: Option<AhoCorasick>,
}

impl Secrets {
    fn rebuild(&mut self) {
        let mut folded = Vec::new();
        let mut exact = Vec::new();
        for s in &self.given {
            folded.push(s.clone());
            for form in folded_forms(s) {
                if form.len() >= MIN_FORM_LEN && !folded.contains(&form) {
                    folded.push(form);
                }
            }
            for form in base64_forms(s) {
                if form.len() >= MIN_FORM_LEN && !exact.contains(&form) {
                    exact.push(form);
                }
            }
        }
        let build = |patterns: &[String], fold: bool| {
            if patterns.is_empty() {
                return None;
            }
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .ascii_case_insensitive(fold)
                .build(patterns)
                .ok()
        };
        self.folded = build(&folded, true);
        self.exact = build(&exact, false);
    }

    fn automata(&self) -> impl Iterator<Item = &AhoCorasick> {
        self.folded.iter().chain(self.exact.iter())
    }

    fn found_in(&self, text: &str) -> bool {
        self.automata().any(|a| a.is_match(text))
    }

    fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for a in self.automata() {
            if a.is_match(&out) {
                out = a.replace_all(&out, &vec![MASK; a.patterns_len()]);
            }
        }
        out
    }
}

impl Redactor {
    /// Adds a value to mask from now on (and its derived forms).
    pub fn add(&self, secret: impl Into<String>) {
        let secret = secret.into();
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        if let Ok(mut s) = self.secrets.write()
            && !s.given.contains(&secret)
        {
            s.given.push(secret);
            s.rebuild();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.read().map_or(true, |s| s.given.is_empty())
    }

    /// `text` with every secret, in every form, masked.
    pub fn text(&self, text: &str) -> String {
        let Ok(secrets) = self.secrets.read() else {
            return text.to_owned();
        };
        secrets.mask(text)
    }

    /// `v` with every secret masked; `v` itself (shared, not copied) when
    /// it cannot hold one. Text that shows no secret, in any of the forms
    /// JSON may give it (escapes), is known clean without being parsed.
    pub fn json(&self, v: &Json) -> Json {
        let Ok(secrets) = self.secrets.read() else {
            return v.clone();
        };
        if secrets.given.is_empty() {
            return v.clone();
        }
        if let Some(text) = v.as_text()
            && !text.contains('\\')
            && !secrets.found_in(text)
        {
            return v.clone();
        }
        drop(secrets);
        Json::from_value(self.value(v.tree()))
    }

    /// `v` with every secret masked in every string (keys included).
    pub fn value(&self, v: &Value) -> Value {
        if self.is_empty() {
            return v.clone();
        }
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.value(i)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, val)| (self.text(k), self.value(val)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// The forms of `secret` matched in any ASCII case: reversed, hex, and
/// percent-encoded as RFC 3986 strictly, JavaScript's
/// `encodeURIComponent`, Python's `quote` (which keeps `/`) and HTML forms
/// (`+` for a space) write it.
fn folded_forms(secret: &str) -> Vec<String> {
    let strict = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    let js = |b: u8| strict(b) || b"!'()*".contains(&b);
    let python = |b: u8| strict(b) || b == b'/';
    let mut out = vec![
        secret.chars().rev().collect(),
        hex::encode(secret.as_bytes()),
        percent(secret, strict, false),
        percent(secret, js, false),
        percent(secret, python, false),
        percent(secret, strict, true),
    ];
    out.retain(|f| f != secret);
    out
}

fn percent(secret: &str, keep: impl Fn(u8) -> bool, form: bool) -> String {
    let mut out = String::with_capacity(secret.len() * 3);
    for b in secret.bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else if b == b' ' && form {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

const B64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 and base64url characters that encode only `secret`'s bytes,
/// for each of the three places it can start in a longer encoded text:
/// what any base64 holding the secret holds, whatever surrounds it.
fn base64_forms(secret: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(6);
    for offset in 0..3 {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret.as_bytes());
        let first = (8 * offset).div_ceil(6);
        let last = 8 * bytes.len() / 6;
        for alphabet in [B64_STD, B64_URL] {
            let enc = base64(&bytes, alphabet);
            if let Some(core) = enc.get(first..last) {
                out.push(core.to_owned());
            }
        }
    }
    out
}

/// Base64 of `bytes`, no padding.
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_everywhere() {
        let r = Redactor::default();
        r.add("s3cret-token");
        r.add("ab");
        let v = json!({"auth": "Bearer s3cret-token", "list": ["x s3cret-token y"], "s3cret-token": 1, "ab": "ab"});
        assert_eq!(
            r.value(&v),
            json!({"auth": "Bearer ***", "list": ["x *** y"], "***": 1, "ab": "ab"})
        );
    }

    #[test]
    fn shared_values_are_masked_and_clean_ones_kept() {
        let r = Redactor::default();
        r.add("s3cret-token");
        let clean = Json::parse(r#"{"a":"nothing here"}"#.to_owned()).unwrap();
        assert!(Json::same(&r.json(&clean), &clean));
        let dirty = Json::parse(r#"{"a":"x s3cret-token"}"#.to_owned()).unwrap();
        assert_eq!(r.json(&dirty), json!({"a": "x ***"}));
        // An escape could spell the secret: the value is read to be sure.
        let escaped = Json::parse(r#"{"a":"s3cret-token"}"#.to_owned()).unwrap();
        assert_eq!(r.json(&escaped), json!({"a": "***"}));
    }

    /// Standard base64 with padding, as a server's library writes it.
    fn b64(bytes: &[u8]) -> String {
        let mut s = base64(bytes, B64_STD);
        while !s.len().is_multiple_of(4) {
            s.push('=');
        }
        s
    }

    #[test]
    fn forms_a_server_can_make_of_a_secret_are_masked() {
        let secret = "s3cr3t URL/key+Zq7w05=&x";
        let r = Redactor::default();
        r.add(secret);
        let reversed: String = secret.chars().rev().collect();
        let url_safe = base64(format!("id:{secret}").as_bytes(), B64_URL);
        let cases = [
            ("as is", secret.to_owned()),
            ("upper case", secret.to_uppercase()),
            ("reversed", reversed),
            ("hex", hex::encode(secret)),
            ("HEX", hex::encode_upper(secret)),
            (
                "percent (strict)",
                percent(
                    secret,
                    |b| b.is_ascii_alphanumeric() || b"-._~".contains(&b),
                    false,
                ),
            ),
            (
                "encodeURIComponent",
                "s3cr3t%20URL%2Fkey%2BZq7w05%3D%26x".to_owned(),
            ),
            (
                "python quote",
                "s3cr3t%20URL/key%2BZq7w05%3D%26x".to_owned(),
            ),
            ("form", "s3cr3t+URL%2Fkey%2BZq7w05%3D%26x".to_owned()),
            (
                "lower-case escapes",
                "s3cr3t%20url%2fkey%2bzq7w05%3d%26x".to_owned(),
            ),
            ("base64", b64(secret.as_bytes())),
            (
                "base64 of user:SECRET",
                b64(format!("user:{secret}").as_bytes()),
            ),
            (
                "base64 after two bytes",
                b64(format!("ab{secret}").as_bytes()),
            ),
            ("base64url, no padding", url_safe),
        ];
        for (what, form) in cases {
            let text = format!("before {form} after");
            let masked = r.text(&text);
            assert!(
                masked.contains(MASK) && !masked.contains(&form),
                "{what}: {text} → {masked}"
            );
            let json = Json::parse(serde_json::to_string(&json!({"v": text})).unwrap()).unwrap();
            let got = r.json(&json);
            assert!(!got.text().contains(&form), "{what} in JSON: {got}");
        }
    }

    #[test]
    fn short_forms_are_not_masked_by_chance() {
        let r = Redactor::default();
        r.add("abcd");
        // The base64 cores of a 4-byte secret are 4 or 5 letters: common
        // in any base64; they are left alone, the secret itself is not.
        let image = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";
        assert_eq!(r.text(image), image);
        assert_eq!(r.text("x abcd y"), "x *** y");
    }
}
