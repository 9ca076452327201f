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
    /// The JSON-RPC exchange of the record (`rpc`), or its raw result
    /// when the exchange was not kept.
    Exchange(Arc<NodeRecord>),
}

impl SharedValue {
    /// The value.
    pub fn get(&self) -> &Value {
        match self {
            SharedValue::Own(v) => v,
            SharedValue::Output(r) => r.output.tree(),
            SharedValue::Exchange(r) if r.rpc.is_null() => r.raw.tree(),
            SharedValue::Exchange(r) => r.rpc.tree(),
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
