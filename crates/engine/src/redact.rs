//! Secrets never reach a trace, a cassette or a log: every value that came
//! from a header or `${env.X}` is replaced by `***` wherever it appears.

use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::json::Json;

/// Text written instead of a secret.
pub const MASK: &str = "***";

/// Secrets shorter than this are not masked: masking `a` would mangle every
/// word that holds the letter.
const MIN_SECRET_LEN: usize = 4;

/// The set of secret values of a run; cheap to clone and share.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Arc<RwLock<Vec<String>>>,
}

impl Redactor {
    /// Adds a value to mask from now on.
    pub fn add(&self, secret: impl Into<String>) {
        let secret = secret.into();
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        if let Ok(mut s) = self.secrets.write()
            && !s.contains(&secret)
        {
            s.push(secret);
            // Longest first, so a secret that contains another is masked whole.
            s.sort_by_key(|x| std::cmp::Reverse(x.len()));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.read().map_or(true, |s| s.is_empty())
    }

    /// `text` with every secret masked.
    pub fn text(&self, text: &str) -> String {
        let Ok(secrets) = self.secrets.read() else {
            return text.to_owned();
        };
        let mut out = text.to_owned();
        for s in secrets.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), MASK);
            }
        }
        out
    }

    /// `v` with every secret masked; `v` itself (shared, not copied) when
    /// it cannot hold one. Text that shows no secret, in any of the forms
    /// JSON may give it (escapes), is known clean without being parsed.
    pub fn json(&self, v: &Json) -> Json {
        let Ok(secrets) = self.secrets.read() else {
            return v.clone();
        };
        if secrets.is_empty() {
            return v.clone();
        }
        if let Some(text) = v.as_text()
            && !text.contains('\\')
            && !secrets.iter().any(|s| text.contains(s.as_str()))
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
}
