//! A JSON value written as block-style YAML in the style of pipeline files
//! (two-space indents, plain scalars where YAML reads them back as the same
//! string, double quotes elsewhere): what `P` pins as a node's `mock:`.

use serde_json::Value;

use super::quote::text;

/// `key:` and `v` under it, each line indented by `indent` spaces; ends
/// with a newline.
pub fn entry(key: &str, v: &Value, indent: usize) -> String {
    let mut out = String::new();
    member(&mut out, indent, &text(key), v);
    out
}

fn member(out: &mut String, indent: usize, lead: &str, v: &Value) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push_str(&format!("{pad}{lead}:\n"));
            for (k, val) in m {
                member(out, indent + 2, &text(k), val);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push_str(&format!("{pad}{lead}:\n"));
            for item in a {
                list_item(out, indent + 2, item);
            }
        }
        _ => out.push_str(&format!("{pad}{lead}: {}\n", scalar(v))),
    }
}

/// `- value`; a mapping's first key goes on the dash's line.
fn list_item(out: &mut String, indent: usize, v: &Value) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut first = true;
            for (k, val) in m {
                let mut one = String::new();
                member(&mut one, indent + 2, &text(k), val);
                if first {
                    // `  key: …` → `- key: …`
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&one[indent + 2..]);
                    first = false;
                } else {
                    out.push_str(&one);
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push_str(&format!("{pad}-\n"));
            for item in a {
                list_item(out, indent + 2, item);
            }
        }
        _ => out.push_str(&format!("{pad}- {}\n", scalar(v))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => text(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_written_block_style_and_read_back_the_same() {
        let v = json!({
            "users": [{"id": "u3", "name": "Carol Nguyen", "tags": ["a", "b"], "age": 41},
                      {"id": "u4", "name": "yes", "note": "a: b", "empty": {}}],
            "count": 2, "ok": true, "none": null, "n": "007", "list": [], "weird key": "${x}",
            "nested": [[1, 2], []]
        });
        let text = entry("result", &v, 2);
        assert!(
            text.starts_with("  result:\n    users:\n      - id: u3\n        name: Carol Nguyen\n"),
            "{text}"
        );
        assert!(text.contains("        name: \"yes\"\n"), "{text}");
        assert!(text.contains("    count: 2\n"), "{text}");
        assert!(text.contains("    weird key: \"${x}\"\n"), "{text}");
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, json!({"result": v}));
    }
}
