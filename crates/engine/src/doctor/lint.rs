//! The lint of tool definitions for agents: what makes an agent pick the
//! wrong tool or fill it wrongly, each finding under a rule name.
//!
//! | rule | finds |
//! |---|---|
//! | `missing-description` | a tool, or one of its arguments, without a description |
//! | `unconstrained-string` | a string argument whose name says what it holds (an id, an email, a URL, a date, a kind) with no `enum`, `format` or `pattern` |
//! | `no-required` | a tool with arguments and no `required` list |
//! | `oversized-schema` | an input schema over [`OVERSIZED_TOKENS`] tokens |

use serde::Serialize;
use serde_json::{Map, Value};

use crate::mcp::ToolInfo;

/// The rule names, in the order the table above lists them.
pub const RULES: &[&str] = &[
    "missing-description",
    "unconstrained-string",
    "no-required",
    "oversized-schema",
];

/// Tokens (o200k) of one input schema over which it is oversized.
pub const OVERSIZED_TOKENS: u64 = 1_000;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// One of [`RULES`].
    pub rule: &'static str,
    pub tool: String,
    /// The argument it is about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument: Option<String>,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// The findings for `tools`, tool by tool in listed order.
pub fn lint(tools: &[ToolInfo]) -> Vec<Finding> {
    let mut out = Vec::new();
    for tool in tools {
        let mut find = |rule, argument: Option<&str>, message: String| {
            out.push(Finding {
                rule,
                tool: tool.name.clone(),
                argument: argument.map(str::to_owned),
                message,
            });
        };
        if tool
            .description
            .as_deref()
            .is_none_or(|d| d.trim().is_empty())
        {
            find(
                "missing-description",
                None,
                "the tool has no description: say what it does, when to use it and what it returns"
                    .to_owned(),
            );
        }
        let empty = Map::new();
        let properties = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (name, schema) in properties {
            let described = schema
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !described {
                find(
                    "missing-description",
                    Some(name),
                    format!(
                        "argument `{name}` has no description: say what it holds and in which form"
                    ),
                );
            }
            if let Some(hint) = unconstrained(name, schema) {
                find(
                    "unconstrained-string",
                    Some(name),
                    format!("argument `{name}` is any string: {hint}"),
                );
            }
        }
        let required = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        if !properties.is_empty() && !required {
            find(
                "no-required",
                None,
                "the input schema lists no `required` arguments: name the ones the tool cannot do without, so an agent does not leave them out".to_owned(),
            );
        }
        let tokens = crate::cost::tokens::count(&tool.input_schema.to_string());
        if tokens > OVERSIZED_TOKENS {
            find(
                "oversized-schema",
                None,
                format!(
                    "the input schema is {tokens} tokens (over {OVERSIZED_TOKENS}): an agent reads it on every turn; drop what it need not fill, shorten descriptions, or split the tool"
                ),
            );
        }
    }
    out
}

/// For a string argument without `enum`, `const`, `format` or `pattern`
/// whose name says what it holds, what to add.
fn unconstrained(name: &str, schema: &Value) -> Option<&'static str> {
    let is_string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    let constrained = ["enum", "const", "format", "pattern"]
        .iter()
        .any(|k| schema.get(k).is_some());
    if !is_string || constrained {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    // `sortOrder` and `sort_order` alike: a capital starts a word.
    let mut snake = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    let words: Vec<&str> = snake
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let ends = |s: &str| lower.ends_with(s);
    if has("email") || ends("email") {
        Some("add `format: email`")
    } else if has("url") || has("uri") || has("link") || ends("url") || ends("uri") {
        Some("add `format: uri`")
    } else if has("date") || has("time") || has("timestamp") || has("at") || ends("date") {
        Some("add `format: date` or `format: date-time`")
    } else if has("uuid") || ends("uuid") {
        Some("add `format: uuid`")
    } else if has("id") || ends("id") || ends("ids") {
        Some("add a `pattern` (or `format: uuid`) for the id's shape")
    } else if [
        "status", "state", "kind", "type", "mode", "sort", "order", "level",
    ]
    .iter()
    .any(|w| has(w))
    {
        Some("add an `enum` of the values it takes")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(raw: Value) -> ToolInfo {
        ToolInfo::from_json(raw).unwrap()
    }

    #[test]
    fn each_rule_finds_its_case_and_a_good_tool_passes() {
        let tools = [
            tool(
                json!({"name": "bare", "inputSchema": {"type": "object", "properties": {
                    "user_id": {"type": "string"},
                    "email": {"type": "string", "description": "who"},
                    "created_at": {"type": "string", "description": "when", "format": "date-time"},
                    "sortOrder": {"type": "string", "description": "how"},
                }}}),
            ),
            tool(
                json!({"name": "good", "description": "Finds a user.", "inputSchema": {
                "type": "object", "required": ["q"],
                "properties": {"q": {"type": "string", "description": "a name"}}}}),
            ),
            tool(
                json!({"name": "big", "description": "Big.", "inputSchema": {"type": "object",
                "properties": {"x": {"type": "number", "description": "word ".repeat(2000)}},
                "required": ["x"]}}),
            ),
        ];
        let findings = lint(&tools);
        let found: Vec<(&str, &str, Option<&str>)> = findings
            .iter()
            .map(|f| (f.rule, f.tool.as_str(), f.argument.as_deref()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("missing-description", "bare", None),
                ("missing-description", "bare", Some("user_id")),
                ("unconstrained-string", "bare", Some("user_id")),
                ("unconstrained-string", "bare", Some("email")),
                ("unconstrained-string", "bare", Some("sortOrder")),
                ("no-required", "bare", None),
                ("oversized-schema", "big", None),
            ]
        );
    }
}
