//! A JSON value the inspector shows without copying it: a value of its own,
//! or a part of a node record it shares with the app.

use std::sync::Arc;

use serde_json::Value;

use pipewright_engine::run::trace::NodeRecord;

/// A shared JSON value; cloning it is cheap.
#[derive(Debug, Clone)]
pub enum SharedValue {
    Own(Arc<Value>),
    /// The record's `output`.
    Output(Arc<NodeRecord>),
}

impl SharedValue {
    /// The value.
    pub fn get(&self) -> &Value {
        match self {
            SharedValue::Own(v) => v,
            SharedValue::Output(r) => r.output.tree(),
        }
    }
}

impl From<Value> for SharedValue {
    fn from(v: Value) -> Self {
        SharedValue::Own(Arc::new(v))
    }
}

impl From<Arc<Value>> for SharedValue {
    fn from(v: Arc<Value>) -> Self {
        SharedValue::Own(v)
    }
}
