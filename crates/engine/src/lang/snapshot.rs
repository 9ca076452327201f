//! What a node's references can see at dispatch: its parents' outputs, the
//! run's variables, the environment and the fan-out item; and a node's
//! `args` resolved against that.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::reference::{self, NodeLookup, ResolveError, Scope};
use crate::environment::Environment;
use crate::json::Json;

/// What a node's references can see: its parents' outputs (a snapshot taken
/// at dispatch), the run's variables, the environment and the fan-out item.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub nodes: HashMap<String, Seen>,
    pub vars: Arc<IndexMap<String, Value>>,
    pub item: Option<Value>,
    /// An undefined `${var.X}` stays as written (a composition with no
    /// cases, as mcptest's compositions page says) instead of failing.
    pub pass_vars: bool,
    /// What `${env.X}` reads (the default: nothing is set).
    pub env: Environment,
}

/// A node as a snapshot saw it: its output is shared with the session's
/// record, not copied.
#[derive(Debug, Clone)]
pub enum Seen {
    Output(Json),
    NotRun,
    Skipped,
    Failed,
}

impl Scope for Snapshot {
    fn node(&self, id: &str) -> NodeLookup<'_> {
        match self.nodes.get(id) {
            Some(Seen::Output(v)) => NodeLookup::Output(v.tree()),
            Some(Seen::NotRun) => NodeLookup::NotRun,
            Some(Seen::Skipped) => NodeLookup::Skipped,
            Some(Seen::Failed) => NodeLookup::Failed,
            None => NodeLookup::Unknown,
        }
    }

    fn var(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }

    fn env(&self, name: &str) -> Option<String> {
        self.env.var(name).map(str::to_owned)
    }

    fn item(&self) -> Option<&Value> {
        self.item.as_ref()
    }

    fn passes_vars_through(&self) -> bool {
        self.pass_vars
    }

    fn node_ids(&self) -> Vec<&str> {
        self.nodes.keys().map(String::as_str).collect()
    }

    fn var_names(&self) -> Vec<&str> {
        self.vars.keys().map(String::as_str).collect()
    }
}

/// A node's snapshot seen from one fan-out iteration: the same parents and
/// variables, and this iteration's `${item}` (borrowed, so starting an
/// iteration copies no parent output).
pub struct ItemScope<'a> {
    pub base: &'a Snapshot,
    pub item: &'a Value,
    /// This iteration's position, and the parents read element-wise at it.
    pub index: usize,
    pub aligned: &'a [String],
}

impl Scope for ItemScope<'_> {
    fn node(&self, id: &str) -> NodeLookup<'_> {
        if !self.aligned.iter().any(|a| a == id) {
            return self.base.node(id);
        }
        // A parent read element-wise: a fan-out's list gives its item as
        // it is, without building the whole list's tree.
        if let Some(Seen::Output(out)) = self.base.nodes.get(id)
            && let Some(items) = out.as_list()
        {
            return NodeLookup::Output(items.get(self.index).map_or(&Value::Null, Json::tree));
        }
        match self.base.node(id) {
            NodeLookup::Output(Value::Array(items)) => match items.get(self.index) {
                Some(v) => NodeLookup::Output(v),
                None => NodeLookup::Output(&Value::Null),
            },
            other => other,
        }
    }

    fn var(&self, name: &str) -> Option<&Value> {
        self.base.var(name)
    }

    fn env(&self, name: &str) -> Option<String> {
        self.base.env(name)
    }

    fn item(&self) -> Option<&Value> {
        Some(self.item)
    }

    fn passes_vars_through(&self) -> bool {
        self.base.passes_vars_through()
    }

    fn node_ids(&self) -> Vec<&str> {
        self.base.node_ids()
    }

    fn var_names(&self) -> Vec<&str> {
        self.base.var_names()
    }
}

/// Resolves a node's `args` into the object sent to the tool.
pub fn resolve_args(args: &Value, scope: &dyn Scope) -> Result<Map<String, Value>, ResolveError> {
    match reference::resolve_value(args, scope)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            Ok(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn env_references_read_the_snapshots_environment_only() {
        let args = json!({"token": "${env.PW_SNAPSHOT_TOKEN}"});
        let scope = Snapshot {
            env: Environment::with_vars([("PW_SNAPSHOT_TOKEN", "t-1")]),
            ..Snapshot::default()
        };
        assert_eq!(
            resolve_args(&args, &scope).map(Value::Object),
            Ok(json!({"token": "t-1"}))
        );
        let err = resolve_args(&args, &Snapshot::default()).expect_err("unset");
        assert!(err.to_string().contains("is not set"), "{err}");
    }
}
