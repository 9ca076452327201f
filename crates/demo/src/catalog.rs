//! What the demo server advertises in `tools/list`: every tool's name,
//! description, input and output schemas and behaviour annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Largest `limit` the search tools accept.
pub(crate) const MAX_LIMIT: u64 = 100;
/// Default `limit` of the search tools.
pub(crate) const DEFAULT_LIMIT: u64 = 10;
/// Largest `count` `list_items` accepts.
pub(crate) const MAX_ITEMS: u64 = 1000;
/// Default `count` of `list_items`.
pub(crate) const DEFAULT_ITEMS: u64 = 3;
/// Default `prefix` of `list_items` ids.
pub(crate) const DEFAULT_ITEM_PREFIX: &str = "item-";
/// Largest `failures` `flaky` accepts.
pub(crate) const MAX_FAILURES: u64 = 100;
/// Default `failures` of `flaky`.
pub(crate) const DEFAULT_FAILURES: u64 = 2;
/// Longest sleep `slow` accepts, in milliseconds (10 minutes).
pub(crate) const MAX_SLOW_MS: u64 = 600_000;
/// Largest output `big_output` produces, in KiB (8 MiB).
pub(crate) const MAX_BIG_KB: u64 = 8192;
/// Default exit status of `crash`.
pub(crate) const DEFAULT_EXIT_CODE: i32 = 1;
/// The text of a `fail` error when no `message` is given.
pub(crate) const DEFAULT_FAIL_MESSAGE: &str = "the fail tool always fails";
/// Default `service` of `connect_account`.
pub(crate) const DEFAULT_SERVICE: &str = "calendar";

/// Every tool of the demo server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum DemoTool {
    SearchUsers,
    GetUserDetails,
    SendEmail,
    DeleteUser,
    SearchPackages,
    GetReadme,
    FetchMetadata,
    ListItems,
    Echo,
    Add,
    Flaky,
    Slow,
    BigOutput,
    Fail,
    Crash,
    Summarize,
    ConfirmSend,
    ConnectAccount,
    DraftReply,
    CallCounts,
}

impl DemoTool {
    /// Every tool, in the order `tools/list` gives them.
    pub(crate) const ALL: [DemoTool; 20] = [
        DemoTool::SearchUsers,
        DemoTool::GetUserDetails,
        DemoTool::SendEmail,
        DemoTool::DeleteUser,
        DemoTool::SearchPackages,
        DemoTool::GetReadme,
        DemoTool::FetchMetadata,
        DemoTool::ListItems,
        DemoTool::Echo,
        DemoTool::Add,
        DemoTool::Flaky,
        DemoTool::Slow,
        DemoTool::BigOutput,
        DemoTool::Fail,
        DemoTool::Crash,
        DemoTool::Summarize,
        DemoTool::ConfirmSend,
        DemoTool::ConnectAccount,
        DemoTool::DraftReply,
        DemoTool::CallCounts,
    ];

    /// The name clients call the tool by.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            DemoTool::SearchUsers => "search_users",
            DemoTool::GetUserDetails => "get_user_details",
            DemoTool::SendEmail => "send_email",
            DemoTool::DeleteUser => "delete_user",
            DemoTool::SearchPackages => "search_packages",
            DemoTool::GetReadme => "get_readme",
            DemoTool::FetchMetadata => "fetch_metadata",
            DemoTool::ListItems => "list_items",
            DemoTool::Echo => "echo",
            DemoTool::Add => "add",
            DemoTool::Flaky => "flaky",
            DemoTool::Slow => "slow",
            DemoTool::BigOutput => "big_output",
            DemoTool::Fail => "fail",
            DemoTool::Crash => "crash",
            DemoTool::Summarize => "summarize",
            DemoTool::ConfirmSend => "confirm_send",
            DemoTool::ConnectAccount => "connect_account",
            DemoTool::DraftReply => "draft_reply",
            DemoTool::CallCounts => "call_counts",
        }
    }

    /// The tool called `name`, if the demo server has one.
    pub(crate) fn from_name(name: &str) -> Option<DemoTool> {
        DemoTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The tool's `tools/list` entry.
    pub(crate) fn definition(self) -> Tool {
        let spec = self.spec();
        let mut tool = Tool::new(self.name(), spec.description, object(spec.input))
            .with_title(spec.title)
            .with_annotations(spec.hints.annotations());
        if let Some(output) = spec.output {
            tool = tool.with_raw_output_schema(Arc::new(object(output)));
        }
        tool
    }

    fn spec(self) -> Spec {
        match self {
            DemoTool::SearchUsers => Spec {
                title: "Search users",
                description: "Search the demo user directory (8 made-up people) for users whose \
                    name or email contains `query`, case-insensitively, in id order. Returns \
                    `{users: [{id, name, email}], count}`.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "Text to find in a name or email; empty matches everyone."
                        },
                        "limit": limit_schema("users"),
                    },
                    "required": ["query"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "users": { "type": "array", "items": user_summary_schema() },
                        "count": { "type": "integer", "description": "Number of users returned." },
                    },
                    "required": ["users", "count"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::GetUserDetails => Spec {
                title: "Get user details",
                description: "Look up one user of the demo directory by id (as returned by \
                    `search_users`). An unknown id is a tool error.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "user_id": { "type": "string", "description": "A user id such as `u1`." },
                    },
                    "required": ["user_id"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "id": { "type": "string" },
                        "name": { "type": "string" },
                        "email": { "type": "string", "format": "email" },
                        "plan": { "type": "string", "enum": ["free", "pro", "team", "enterprise"] },
                        "created": { "type": "string", "format": "date-time" },
                        "last_login": { "type": "string", "format": "date-time" },
                        "teams": { "type": "array", "items": { "type": "string" } },
                    },
                    "required": ["id", "name", "email", "plan", "created", "last_login", "teams"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::SendEmail => Spec {
                title: "Send email",
                description: "Queue an email (simulated: nothing leaves the machine). The \
                    message id is derived from the arguments, so the same email always gets \
                    the same id. A `to` without an `@` is a tool error.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "to": { "type": "string", "format": "email", "description": "Recipient address." },
                        "subject": { "type": "string" },
                        "body": { "type": "string" },
                    },
                    "required": ["to", "subject", "body"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "message_id": { "type": "string", "pattern": "^msg-[0-9]{6}$" },
                        "status": { "const": "queued" },
                        "to": { "type": "string" },
                    },
                    "required": ["message_id", "status", "to"],
                })),
                hints: Hints {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                    open_world: true,
                },
            },
            DemoTool::DeleteUser => Spec {
                title: "Delete user",
                description: "Delete a user from the demo directory. Marked destructive so \
                    clients ask before calling it; the demo directory is not actually changed, \
                    so the server stays deterministic. An unknown id is a tool error.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "user_id": { "type": "string", "description": "A user id such as `u1`." },
                    },
                    "required": ["user_id"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": { "deleted": { "type": "string" } },
                    "required": ["deleted"],
                })),
                hints: Hints {
                    read_only: false,
                    destructive: true,
                    idempotent: true,
                    open_world: false,
                },
            },
            DemoTool::SearchPackages => Spec {
                title: "Search packages",
                description: "Search a fixed built-in catalogue of 10 made-up packages by name, \
                    description and keywords, best match first. Returns `{result: {hits: \
                    [{name, score, version}]}, count, top_hit, hits}` (`hits` repeats \
                    `result.hits`, `top_hit` is null when nothing matched). Give `query` or its \
                    alias `q`, not both.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "Words to find; the whole name scores highest. Empty matches everything."
                        },
                        "q": { "type": "string", "description": "Same as `query`." },
                        "limit": limit_schema("hits"),
                    },
                    "oneOf": [{ "required": ["query"] }, { "required": ["q"] }],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "result": {
                            "type": "object",
                            "properties": { "hits": { "type": "array", "items": hit_schema() } },
                            "required": ["hits"],
                        },
                        "count": { "type": "integer", "description": "Number of hits returned." },
                        "top_hit": { "anyOf": [hit_schema(), { "type": "null" }] },
                        "hits": { "type": "array", "items": hit_schema() },
                    },
                    "required": ["result", "count", "top_hit", "hits"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::GetReadme => Spec {
                title: "Get README",
                description: "Fetch the Markdown README of a package from the built-in \
                    catalogue. An unknown package is a tool error.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "package": { "type": "string", "description": "Exact package name." },
                    },
                    "required": ["package"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "package": { "type": "string" },
                        "body": { "type": "string", "description": "Markdown, starting with `# <name>`." },
                    },
                    "required": ["package", "body"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::FetchMetadata => Spec {
                title: "Fetch package metadata",
                description: "Fetch the metadata of a package from the built-in catalogue: \
                    version, description, license, stars, downloads, keywords, homepage. An \
                    unknown package is a tool error.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "description": "Exact package name." },
                    },
                    "required": ["name"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "meta": {
                            "type": "object",
                            "properties": {
                                "version": { "type": "string" },
                                "description": { "type": "string" },
                                "license": { "type": "string" },
                                "stars": { "type": "integer" },
                                "downloads": { "type": "integer" },
                                "keywords": { "type": "array", "items": { "type": "string" } },
                                "homepage": { "type": "string", "format": "uri" },
                            },
                            "required": ["version", "description", "license", "stars", "downloads", "keywords", "homepage"],
                        },
                    },
                    "required": ["name", "meta"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::ListItems => Spec {
                title: "List items",
                description: "Return a plain JSON array `[{id, index}, ...]` as the only text \
                    content (no structured content): a source to fan out over. Ids are \
                    `prefix` followed by the 0-based index.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "count": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": MAX_ITEMS,
                            "default": DEFAULT_ITEMS,
                            "description": "How many items."
                        },
                        "prefix": {
                            "type": "string",
                            "default": DEFAULT_ITEM_PREFIX,
                            "description": "Start of every id."
                        },
                    },
                    "additionalProperties": false,
                }),
                output: None,
                hints: Hints::READ_ONLY,
            },
            DemoTool::Echo => Spec {
                title: "Echo",
                description: "Return `message` unchanged as the only text content (no \
                    structured content).",
                input: json!({
                    "type": "object",
                    "properties": { "message": { "type": "string" } },
                    "required": ["message"],
                    "additionalProperties": false,
                }),
                output: None,
                hints: Hints::READ_ONLY,
            },
            DemoTool::Add => Spec {
                title: "Add",
                description: "Add two numbers. The sum is an integer when both are integers.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "a": { "type": "number" },
                        "b": { "type": "number" },
                    },
                    "required": ["a", "b"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": { "sum": { "type": "number" } },
                    "required": ["sum"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::Flaky => Spec {
                title: "Flaky",
                description: "Fail (tool error `transient failure k/n for key ...`) on the \
                    first `failures` calls with a given `key`, then succeed with `{key, \
                    attempts}`. Counters live as long as the server process; use a fresh key \
                    per test.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "key": { "type": "string", "description": "Which counter to use." },
                        "failures": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": MAX_FAILURES,
                            "default": DEFAULT_FAILURES,
                            "description": "How many calls fail before the first success."
                        },
                    },
                    "required": ["key"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "key": { "type": "string" },
                        "attempts": { "type": "integer", "description": "Calls with this key so far, this one included." },
                    },
                    "required": ["key", "attempts"],
                })),
                hints: Hints {
                    read_only: false,
                    destructive: false,
                    idempotent: false,
                    open_world: false,
                },
            },
            DemoTool::Slow => Spec {
                title: "Slow",
                description: "Sleep `ms` milliseconds, then return `{slept_ms}`. Stops at once \
                    when the client cancels the request.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "ms": { "type": "integer", "minimum": 0, "maximum": MAX_SLOW_MS },
                    },
                    "required": ["ms"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": { "slept_ms": { "type": "integer" } },
                    "required": ["slept_ms"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::BigOutput => Spec {
                title: "Big output",
                description: "Return `{kb, count, records: [{index, id, payload}]}` where the \
                    records serialise to `kb` KiB of JSON (4 records of 256 bytes per KiB, \
                    commas aside). The content is the same on every call.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "kb": { "type": "integer", "minimum": 0, "maximum": MAX_BIG_KB },
                    },
                    "required": ["kb"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "kb": { "type": "integer" },
                        "count": { "type": "integer" },
                        "records": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "index": { "type": "integer" },
                                    "id": { "type": "string" },
                                    "payload": { "type": "string" },
                                },
                                "required": ["index", "id", "payload"],
                            },
                        },
                    },
                    "required": ["kb", "count", "records"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::Fail => Spec {
                title: "Fail",
                description: "Always return a tool error whose text is `message`. With `code` \
                    or `status`, the text is `{error: {code, status, message}}` as JSON, the \
                    way REST-backed servers report a failed request.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "message": { "type": "string", "default": DEFAULT_FAIL_MESSAGE },
                        "code": { "type": "string", "description": "A machine-readable error code." },
                        "status": { "type": "integer", "minimum": 100, "maximum": 599, "description": "An HTTP status." },
                    },
                    "additionalProperties": false,
                }),
                output: None,
                hints: Hints::READ_ONLY,
            },
            DemoTool::Crash => Spec {
                title: "Crash the server",
                description: "DESTRUCTIVE: terminate the whole demo server process at once \
                    with `exit_code`, without replying, to test how a client copes with a \
                    server that dies mid-run. Over HTTP this stops the server for every \
                    client.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "exit_code": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 255,
                            "default": DEFAULT_EXIT_CODE
                        },
                    },
                    "additionalProperties": false,
                }),
                output: None,
                hints: Hints {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: false,
                },
            },
            DemoTool::Summarize => Spec {
                title: "Summarize",
                description: "Summarise `text` (its first 12 words) as a stand-in for a paid \
                    model call. The result's `_meta` reports `pipewright/cost_usd` (0.002), \
                    `pipewright/tokens` `{input, output}` (word counts of the text and the \
                    summary) and `pipewright/model` (`demo-small`).",
                input: json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"],
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": { "summary": { "type": "string" } },
                    "required": ["summary"],
                })),
                hints: Hints::READ_ONLY,
            },
            DemoTool::ConfirmSend => Spec {
                title: "Confirm sending",
                description: "Ask the user, with a form, whether to send an email to `to`: \
                    `signature` (text), `tone` (brief, friendly or formal) and `send` \
                    (yes/no). Returns `{to, action, signature?, tone?, send?}`: the answered \
                    fields when the form is accepted, else just the action (`decline`, \
                    `cancel`). Sends nothing.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "to": { "type": "string", "description": "Who the email is for." },
                        "subject": { "type": "string", "description": "Shown in the question." },
                    },
                    "required": ["to"],
                    "additionalProperties": false,
                }),
                output: Some(asked_schema(json!({
                    "signature": { "type": "string" },
                    "tone": { "type": "string", "enum": ["brief", "friendly", "formal"] },
                    "send": { "type": "boolean" },
                }))),
                hints: Hints::READ_ONLY,
            },
            DemoTool::ConnectAccount => Spec {
                title: "Connect an account",
                description: "Ask the user to open a made-up sign-in page \
                    (https://example.org/pipewright-demo/connect?service=…, a URL-mode \
                    question) and come back. Returns `{service, action, connected}` once \
                    the client says it is done (`connected` when it accepted).",
                input: json!({
                    "type": "object",
                    "properties": {
                        "service": {
                            "type": "string",
                            "default": DEFAULT_SERVICE,
                            "description": "Letters, digits and dashes; part of the URL.",
                        },
                    },
                    "additionalProperties": false,
                }),
                output: Some(asked_schema(json!({
                    "service": { "type": "string" },
                    "connected": { "type": "boolean" },
                }))),
                hints: Hints::READ_ONLY,
            },
            DemoTool::DraftReply => Spec {
                title: "Draft a reply",
                description: "Ask the client's model (a sampling request) for a two-line \
                    reply to `to` about `topic`. Returns `{to, action, text?, model?}`: the \
                    model's text when it answered, else `action: decline`.",
                input: json!({
                    "type": "object",
                    "properties": {
                        "to": { "type": "string" },
                        "topic": { "type": "string" },
                    },
                    "required": ["to", "topic"],
                    "additionalProperties": false,
                }),
                output: Some(asked_schema(json!({
                    "text": { "type": "string" },
                    "model": { "type": "string" },
                }))),
                hints: Hints::READ_ONLY,
            },
            DemoTool::CallCounts => Spec {
                title: "Call counts",
                description: "Report `{counts: {tool: n}, in_flight}`: how many times each \
                    other tool was called since the server started (every tool is listed, \
                    alphabetically; failed calls count too) and how many other calls are \
                    running right now.",
                input: json!({
                    "type": "object",
                    "properties": {},
                    "additionalProperties": false,
                }),
                output: Some(json!({
                    "type": "object",
                    "properties": {
                        "counts": { "type": "object", "additionalProperties": { "type": "integer" } },
                        "in_flight": { "type": "integer" },
                    },
                    "required": ["counts", "in_flight"],
                })),
                hints: Hints::READ_ONLY,
            },
        }
    }
}

/// The parts of a tool definition that differ from tool to tool.
struct Spec {
    title: &'static str,
    description: &'static str,
    input: Value,
    output: Option<Value>,
    hints: Hints,
}

/// The four behaviour annotations, always all set.
#[derive(Debug, Clone, Copy)]
struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

impl Hints {
    /// Reads built-in data and changes nothing.
    const READ_ONLY: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    fn annotations(self) -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(self.read_only)
            .destructive(self.destructive)
            .idempotent(self.idempotent)
            .open_world(self.open_world)
    }
}

fn limit_schema(what: &str) -> Value {
    json!({
        "type": "integer",
        "minimum": 0,
        "maximum": MAX_LIMIT,
        "default": DEFAULT_LIMIT,
        "description": format!("Most {what} to return."),
    })
}

fn user_summary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "name": { "type": "string" },
            "email": { "type": "string", "format": "email" },
        },
        "required": ["id", "name", "email"],
    })
}

fn hit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "score": { "type": "number" },
            "version": { "type": "string" },
        },
        "required": ["name", "score", "version"],
    })
}

/// The output schema of an asking tool: `action` and `extra` fields.
fn asked_schema(extra: Value) -> Value {
    let mut properties = json!({
        "action": { "type": "string", "enum": ["accept", "decline", "cancel"] },
        "to": { "type": "string" },
    });
    if let (Some(all), Value::Object(more)) = (properties.as_object_mut(), extra) {
        all.extend(more);
    }
    json!({ "type": "object", "properties": properties, "required": ["action"] })
}

/// The object inside a `json!({...})` literal.
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for tool in DemoTool::ALL {
            assert_eq!(DemoTool::from_name(tool.name()), Some(tool));
        }
        assert_eq!(DemoTool::from_name("get_sum"), None);
    }

    #[test]
    fn every_schema_is_a_closed_object_whose_required_fields_exist() {
        for tool in DemoTool::ALL {
            let definition = tool.definition();
            let schema = definition.input_schema.as_ref();
            assert_eq!(
                schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name()
            );
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&json!(false)),
                "{}",
                tool.name()
            );
            let properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or_else(|| panic!("{} has no properties", tool.name()));
            let mut required: Vec<&Value> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().collect())
                .unwrap_or_default();
            for alternative in schema
                .get("oneOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                required.extend(alternative["required"].as_array().into_iter().flatten());
            }
            for field in required {
                let field = field.as_str().unwrap_or_default();
                assert!(properties.contains_key(field), "{}: {field}", tool.name());
            }
        }
    }

    #[test]
    fn every_tool_has_a_description_title_and_all_four_hints() {
        for tool in DemoTool::ALL {
            let definition = tool.definition();
            assert!(definition.description.is_some_and(|d| !d.is_empty()));
            assert!(definition.title.is_some());
            let hints = definition.annotations.unwrap_or_default();
            assert!(hints.read_only_hint.is_some());
            assert!(hints.destructive_hint.is_some());
            assert!(hints.idempotent_hint.is_some());
            assert!(hints.open_world_hint.is_some());
        }
    }
}
