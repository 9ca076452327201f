//! Help for an author writing a pipeline file: completion at a place in
//! the text, and where a node is defined and used. The workbench editor and
//! `pipewright lsp` ask these same functions with the text as it is on
//! screen (which need not parse) and what they know besides: the last
//! version of the file that loaded, the servers' tool lists, and the
//! outputs recorded for nodes.
//!
//! Nothing here connects or runs: the callers bring the tool lists.

use serde_json::Value;

use crate::file::model::Pipeline;
use crate::json::Json;
use crate::plan::preflight::ToolLists;

pub mod complete;
pub mod fix;
pub mod navigate;
pub mod place;

/// What a caller knows about the file besides its text.
#[derive(Clone, Copy)]
pub struct Knowledge<'a> {
    /// The last version of the file that loaded: node ids, parents,
    /// `for_each`, variables. `None` when it never loaded.
    pub pipeline: Option<&'a Pipeline>,
    /// What each server listed, by server name.
    pub tools: &'a ToolLists,
    /// The server of nodes that name none.
    pub default_server: Option<&'a str>,
    /// A node's recorded output, by node id (the workbench's last run;
    /// nothing for a language server that has not run the file).
    pub output: &'a dyn Fn(&str) -> Option<Json>,
}

impl<'a> Knowledge<'a> {
    /// What is known without a loaded file, tools or outputs.
    pub fn none(tools: &'a ToolLists) -> Self {
        Self {
            pipeline: None,
            tools,
            default_server: None,
            output: &|_| None,
        }
    }
}

/// A schema's `type` as one word (`string`, `integer|null`, `any`).
pub fn type_word(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.get("enum").is_some() => "enum".into(),
        _ if schema.get("const").is_some() => "const".into(),
        _ => "any".into(),
    }
}
