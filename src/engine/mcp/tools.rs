//! What a server's `tools/list` says about one tool, read once per connection.

use serde_json::Value;

/// One tool as the server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    /// `title`, or `annotations.title` when only that is given.
    pub title: Option<String>,
    pub description: Option<String>,
    /// The JSON Schema of the arguments (`inputSchema`).
    pub input_schema: Value,
    /// The JSON Schema of `structuredContent` (`outputSchema`), if declared.
    pub output_schema: Option<Value>,
    pub annotations: ToolAnnotations,
    /// The tool entry exactly as listed, for the inspector.
    pub raw: Value,
}

/// The behaviour hints of a tool; `None` when the server did not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolAnnotations {
    /// `readOnlyHint`: the tool does not change its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may destroy or overwrite data; pipewright
    /// asks before calling it.
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling twice with the same arguments has no extra effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool reaches outside systems.
    pub open_world: Option<bool>,
}

impl ToolInfo {
    /// Reads a tool entry from its `tools/list` JSON. Entries without a
    /// string `name` are not tools and give `None`.
    pub fn from_json(raw: Value) -> Option<Self> {
        let name = raw.get("name")?.as_str()?.to_owned();
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let annotations = raw.get("annotations");
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        Some(Self {
            title: text(raw.get("title"))
                .or_else(|| text(annotations.and_then(|a| a.get("title")))),
            description: text(raw.get("description")),
            input_schema: raw
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            output_schema: raw.get("outputSchema").filter(|s| !s.is_null()).cloned(),
            annotations: ToolAnnotations {
                read_only: hint("readOnlyHint"),
                destructive: hint("destructiveHint"),
                idempotent: hint("idempotentHint"),
                open_world: hint("openWorldHint"),
            },
            name,
            raw,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_every_field_of_a_listed_tool() {
        let raw = json!({
            "name": "delete_user",
            "description": "Deletes a user",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"title": "Delete user", "destructiveHint": true, "readOnlyHint": false}
        });
        let tool = ToolInfo::from_json(raw.clone()).expect("a tool");
        assert_eq!(tool.name, "delete_user");
        assert_eq!(tool.title.as_deref(), Some("Delete user"));
        assert_eq!(tool.description.as_deref(), Some("Deletes a user"));
        assert_eq!(tool.input_schema["properties"]["id"]["type"], "string");
        assert_eq!(tool.output_schema, Some(json!({"type": "object"})));
        assert_eq!(
            tool.annotations,
            ToolAnnotations {
                read_only: Some(false),
                destructive: Some(true),
                idempotent: None,
                open_world: None,
            }
        );
        assert_eq!(tool.raw, raw);
    }

    #[test]
    fn a_bare_tool_gets_an_object_schema_and_no_hints() {
        let tool = ToolInfo::from_json(json!({"name": "ping"})).expect("a tool");
        assert_eq!(tool.input_schema, json!({"type": "object"}));
        assert_eq!(tool.output_schema, None);
        assert_eq!(tool.annotations, ToolAnnotations::default());
        assert!(ToolInfo::from_json(json!({"description": "no name"})).is_none());
    }
}
