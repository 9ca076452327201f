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
    /// `execution.taskSupport`: whether the tool may be (or must be) called
    /// as a task.
    pub task_support: TaskSupport,
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

/// Whether a tool runs as an MCP task (`execution.taskSupport`, 2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Not said (as rmcp lists tools, always: it drops `execution`). Per
    /// the spec a plain call only; pipewright learns `required` from the
    /// server's refusal.
    #[default]
    Unstated,
    /// `forbidden`: a plain call only.
    Forbidden,
    /// `optional`: either way.
    Optional,
    /// `required`: only as a task.
    Required,
}

impl TaskSupport {
    /// The word the server used.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Unstated => "unstated",
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
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
            task_support: match raw
                .pointer("/execution/taskSupport")
                .and_then(Value::as_str)
            {
                Some("required") => TaskSupport::Required,
                Some("optional") => TaskSupport::Optional,
                Some("forbidden") => TaskSupport::Forbidden,
                _ => TaskSupport::Unstated,
            },
            name,
            raw,
        })
    }
}

/// `tools` with `tool` marked as runnable only as a task.
pub(crate) fn task_required(tools: &[ToolInfo], tool: &str) -> Vec<ToolInfo> {
    let mut list = tools.to_vec();
    if let Some(t) = list.iter_mut().find(|t| t.name == tool) {
        t.task_support = TaskSupport::Required;
    }
    list
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
        assert_eq!(tool.task_support, TaskSupport::Unstated);
        let task =
            ToolInfo::from_json(json!({"name": "t", "execution": {"taskSupport": "required"}}));
        assert_eq!(task.map(|t| t.task_support), Some(TaskSupport::Required));
        assert!(ToolInfo::from_json(json!({"description": "no name"})).is_none());
    }
}
