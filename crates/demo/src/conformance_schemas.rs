//! The conformance fixtures whose input schema is what is under test (the
//! suite's `pending` server scenarios of 2026-07-28):
//!
//! | tool | what the suite checks |
//! |---|---|
//! | `json_schema_2020_12_tool` | `tools/list` keeps JSON Schema 2020-12 keywords whole: `$schema`, `$defs` (with an `$anchor`), `additionalProperties`, `allOf`/`anyOf`, `if`/`then`/`else` (SEP-1613, SEP-2106) |
//! | `test_custom_header` | its `region` argument is mirrored in the `Mcp-Param-Region` header (`x-mcp-header`, SEP-2243); a header missing, malformed or not matching the body is refused with HTTP 400 and `-32020` |
//!
//! Both answer with what they were given, so a caller sees the arguments
//! the server validated.

use std::sync::Arc;

use rmcp::{
    ErrorData,
    model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, Tool},
};
use serde_json::{Value, json};

use super::conformance_parts::{complete, text};

/// The tool whose schema uses the 2020-12 vocabulary.
const SCHEMA_TOOL: &str = "json_schema_2020_12_tool";
/// The tool with a header-mapped argument.
const HEADER_TOOL: &str = "test_custom_header";

/// An input schema in the 2020-12 dialect: a contact with a name, a
/// postal address defined once under `$defs` (found by its anchor too),
/// and a way to reach them; `phone` is required only when that way is
/// `phone`, and at least one of `email` or `phone` must be given.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "postal",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"},
                },
                "required": ["city"],
            },
        },
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "address": {"$ref": "#/$defs/address"},
            "reach": {"enum": ["email", "phone"]},
            "email": {"type": "string", "format": "email"},
            "phone": {"type": "string"},
        },
        "allOf": [
            {"required": ["name"]},
            {"anyOf": [{"required": ["email"]}, {"required": ["phone"]}]},
        ],
        "if": {"properties": {"reach": {"const": "phone"}}, "required": ["reach"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

/// An input schema with one argument carried in a header as well.
fn schema_custom_header() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "Where to run; sent in the Mcp-Param-Region header too.",
                "x-mcp-header": "Region",
            },
        },
        "required": ["region"],
    })
}

fn object(value: Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// The two tools' `tools/list` entries.
pub(crate) fn definitions() -> Vec<Tool> {
    vec![
        Tool::new(
            SCHEMA_TOOL,
            "Conformance-suite fixture. Its input schema uses JSON Schema 2020-12 keywords; \
             answers with the arguments it was given.",
            object(schema_2020_12()),
        ),
        Tool::new(
            HEADER_TOOL,
            "Conformance-suite fixture. Its `region` argument is mirrored in the \
             Mcp-Param-Region header; answers with the region.",
            object(schema_custom_header()),
        ),
    ]
}

/// Whether `name` is one of these tools.
pub(crate) fn is_fixture(name: &str) -> bool {
    name == SCHEMA_TOOL || name == HEADER_TOOL
}

/// Runs one of these tools. The header was checked against the body by
/// the HTTP layer before the call got here (rmcp reads the tool's schema
/// through the server's `get_tool`).
pub(crate) fn call(request: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let answer = if request.name == HEADER_TOOL {
        let region = arguments
            .get("region")
            .and_then(Value::as_str)
            .unwrap_or_default();
        format!("region: {region}")
    } else {
        format!("arguments: {arguments}")
    };
    Ok(complete::<CallToolResult>(json!({"content": [text(&answer)]}))?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_2020_12_schema_compiles_and_means_what_it_says() {
        let validator = jsonschema::validator_for(&schema_2020_12()).unwrap();
        let ok = json!({"name": "Ada", "reach": "phone", "phone": "1", "address": {"city": "X"}});
        assert!(validator.is_valid(&ok));
        // `reach: phone` without a phone; no way to reach; an unknown key;
        // an address without its required city.
        for bad in [
            json!({"name": "Ada", "reach": "phone", "email": "a@b.c"}),
            json!({"name": "Ada"}),
            json!({"name": "Ada", "email": "a@b.c", "extra": 1}),
            json!({"name": "Ada", "email": "a@b.c", "address": {"street": "Y"}}),
        ] {
            assert!(!validator.is_valid(&bad), "{bad} passed");
        }
    }

    #[test]
    fn the_header_annotation_sits_on_a_string_property() {
        let tools = definitions();
        let header = tools.iter().find(|t| t.name == HEADER_TOOL).unwrap();
        let region = &header.input_schema["properties"]["region"];
        assert_eq!(region["x-mcp-header"], "Region");
        assert_eq!(region["type"], "string");
        assert!(is_fixture(SCHEMA_TOOL) && is_fixture(HEADER_TOOL) && !is_fixture("echo"));
    }
}
