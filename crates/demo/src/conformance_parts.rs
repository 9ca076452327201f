//! What the conformance fixtures (`conformance.rs`,
//! `conformance_mrtr.rs`, `conformance_content.rs`) build their answers
//! from: content blocks, rmcp types made from JSON, and what the client
//! declared.

use rmcp::{
    ErrorData, RoleServer,
    model::{ClientCapabilities, ProtocolVersion},
    service::RequestContext,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A 1×1 red PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// Whether the client declared a capability (`pick` reads it) on this
/// request (2026-07-28) or in its `initialize` (older revisions).
pub(crate) fn declared(
    context: &RequestContext<RoleServer>,
    pick: impl Fn(&ClientCapabilities) -> bool,
) -> bool {
    context.client_capabilities().is_some_and(|c| pick(&c))
}

/// Whether the request came on the 2026-07-28 revision (questions go back
/// as input-required results, not as requests on the stream).
pub(crate) fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// A text content block.
pub(crate) fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// The PNG as an image content block.
pub(crate) fn image() -> Value {
    json!({"type": "image", "data": PNG, "mimeType": "image/png"})
}

/// A complete result (`value` with `resultType: "complete"`, which rmcp
/// takes off again for a client before 2026-07-28) as the rmcp type `T`.
pub(crate) fn complete<T: DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Some(object) = value.as_object_mut() {
        object.insert("resultType".into(), json!("complete"));
    }
    typed(value)
}

/// `value` as the rmcp type `T`; a shape rmcp does not take is an internal
/// error (these values are all written here).
pub(crate) fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|e| ErrorData::internal_error(format!("a fixture's result: {e}"), None))
}
