use serde_json::json;

use super::*;
use crate::file::loader::load_native_str;
use crate::json::Json;
use crate::plan::preflight::ToolLists;

fn tools() -> ToolLists {
    let list = [
        json!({"name": "search_users", "description": "Find users by name.",
            "inputSchema": {"type": "object", "required": ["query"],
                "properties": {"query": {"type": "string", "description": "Part of a name"},
                    "limit": {"type": "integer"},
                    "order": {"type": "string", "enum": ["asc", "desc"]}}},
            "outputSchema": {"type": "object", "properties": {
                "users": {"type": "array", "items": {"type": "object",
                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}},
                "count": {"type": "integer"}}}}),
        json!({"name": "send_email", "annotations": {"destructiveHint": true},
            "inputSchema": {"type": "object", "required": ["to"],
                "properties": {"to": {"type": "string"}, "subject": {"type": "string"}}}}),
        json!({"name": "get_user_details",
            "inputSchema": {"type": "object", "required": ["user_id"],
                "properties": {"user_id": {"type": "string"}}}}),
    ];
    let mut lists = ToolLists::new();
    lists.insert(
        "demo".into(),
        list.into_iter().filter_map(ToolInfo::from_json).collect(),
    );
    lists
}

const FILE: &str = "\
vars:
  who: ada
pipe:
  - id: find
    tool: search_users
    args:
      query: ${var.who}
  - id: details
    for_each: ${find.users[*]}
    tool: get_user_details
    args:
      user_id: ${item.id}
";

/// The labels offered where `¦` stands in `text`.
fn labels(text: &str, k: &Knowledge<'_>) -> Vec<String> {
    complete_at(text, k)
        .map(|c| c.items.into_iter().map(|i| i.label).collect())
        .unwrap_or_default()
}

fn complete_at(text: &str, k: &Knowledge<'_>) -> Option<Completion> {
    let (line, col) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find('¦').map(|b| (i, l[..b].chars().count())))
        .expect("a ¦ marks the place");
    let clean = text.replacen('¦', "", 1);
    complete(&clean, Pos::new(line as u32 + 1, col as u32 + 1), k)
}

fn with<R>(text: &str, f: impl FnOnce(&Knowledge<'_>) -> R) -> R {
    let tools = tools();
    let loaded = load_native_str(&text.replacen('¦', "", 1));
    let none = |_: &str| None;
    let k = Knowledge {
        pipeline: loaded.pipeline.as_ref(),
        tools: &tools,
        default_server: Some("demo"),
        output: &none,
    };
    f(&k)
}

#[test]
fn after_tool_the_servers_tools_are_offered_filtered_by_the_word_typed() {
    let text = FILE.replace("    tool: get_user_details", "    tool: se¦");
    let c = with(&text, |k| complete_at(&text, k)).unwrap();
    let names: Vec<&str> = c.items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(names, ["search_users", "send_email"]);
    assert_eq!((c.line, c.from, c.to), (10, 11, 13));
    assert_eq!(
        c.items[0].detail.as_deref(),
        Some("(query, limit?, order?)")
    );
    let doc = c.items[0].doc.as_deref().unwrap();
    assert!(doc.starts_with("Find users by name.\n\narguments:\n  query: string · required — Part of a name\n  limit: integer"), "{doc}");
    assert!(
        c.items[1]
            .detail
            .as_deref()
            .unwrap()
            .contains("destructive")
    );
}

#[test]
fn a_file_that_does_not_parse_still_gets_tool_names() {
    let text = "pipe:\n  - id: a\n    tool: ¦\n    args: [\n";
    let got = with(text, |k| labels(text, k));
    assert_eq!(got, ["search_users", "send_email", "get_user_details"]);
}

#[test]
fn argument_keys_come_from_the_input_schema_required_first_and_not_twice() {
    let text = FILE.replace("      query: ${var.who}", "      query: x\n      ¦");
    let c = with(&text, |k| complete_at(&text, k)).unwrap();
    let got: Vec<(&str, &str)> = c
        .items
        .iter()
        .map(|i| (i.label.as_str(), i.detail.as_deref().unwrap()))
        .collect();
    assert_eq!(got, [("limit", "integer"), ("order", "string")]);
    assert_eq!(c.items[0].insert, "limit: ");
    let text = FILE.replace("      query: ${var.who}", "      ¦");
    let c = with(&text, |k| complete_at(&text, k)).unwrap();
    assert_eq!(c.items[0].label, "query");
    assert_eq!(c.items[0].detail.as_deref(), Some("string · required"));
    assert_eq!(c.items[0].doc.as_deref(), Some("Part of a name"));
}

#[test]
fn an_enum_argument_offers_its_values() {
    let text = FILE.replace("      query: ${var.who}", "      query: x\n      order: ¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["asc", "desc"]);
}

#[test]
fn a_reference_offers_nodes_roots_and_paths_from_the_output_schema() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${¦");
    let got = with(&text, |k| labels(&text, k));
    assert_eq!(got, ["find", "var", "env", "item"]);
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["users", "count"]);
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.users[¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["0]", "*]"]);
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.users[0].n¦");
    let c = with(&text, |k| complete_at(&text, k)).unwrap();
    assert_eq!(c.items[0].label, "name");
    assert_eq!(c.to - c.from, 1, "only the typed `n` is replaced");
}

#[test]
fn item_paths_are_an_element_of_the_for_each_source() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${item.¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["id", "name"]);
}

#[test]
fn a_recorded_output_wins_over_the_schema() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.¦");
    let tools = tools();
    let loaded = load_native_str(&text.replacen('¦', "", 1));
    let output = |id: &str| {
        (id == "find").then(|| Json::from_value(json!({"users": [], "total": 0, "page": 1})))
    };
    let k = Knowledge {
        pipeline: loaded.pipeline.as_ref(),
        tools: &tools,
        default_server: Some("demo"),
        output: &output,
    };
    assert_eq!(labels(&text, &k), ["users", "total", "page"]);
}

#[test]
fn variables_and_environment_names_are_those_the_file_declares_or_uses() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${var.¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["who"]);
    let text = format!("{}\n      extra: ${{env.TOKEN}}\n", FILE.trim_end())
        .replace("user_id: ${item.id}", "user_id: ${env.¦");
    assert_eq!(with(&text, |k| labels(&text, k)), ["TOKEN"]);
}

#[test]
fn a_node_never_offers_itself_or_a_node_that_waits_for_it() {
    let text = FILE.replace("      query: ${var.who}", "      query: ${¦");
    let got = with(&text, |k| labels(&text, k));
    assert_eq!(
        got,
        ["var", "env"],
        "find is itself and details waits for it"
    );
}

#[test]
fn keys_of_a_new_node_and_jq_builtins_in_transform() {
    let text = format!("{}  - ¦\n", FILE);
    let got = with(&text, |k| labels(&text, k));
    assert!(
        got.starts_with(&["id".to_owned(), "needs".to_owned()]),
        "{got:?}"
    );
    assert!(got.contains(&"for_each".to_owned()));
    let text = FILE.replace(
        "    tool: search_users\n",
        "    tool: search_users\n    transform: .users | len¦\n",
    );
    assert_eq!(with(&text, |k| labels(&text, k)), ["length"]);
    let text = "pipe:\n  - id: a\n    tool: x\n    t¦\n";
    assert_eq!(
        with(text, |k| labels(text, k)),
        ["transform", "timeout", "task"]
    );
}

#[test]
fn top_level_keys_and_nothing_in_comments() {
    let text = "vars: {}\np¦\n";
    assert_eq!(with(text, |k| labels(text, k)), ["pricing", "pipe"]);
    let text = "# tool: ¦\n";
    assert!(with(text, |k| complete_at(text, k)).is_none());
}

#[test]
fn composition_nodes_are_nodes_too() {
    let text = "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: search_users\n        args:\n          ¦\n";
    assert_eq!(with(text, |k| labels(text, k)), ["query", "limit", "order"]);
}

#[test]
fn a_tools_doc_says_when_it_runs_as_a_task() {
    let lists = tools();
    let plain = &lists["demo"][0];
    assert!(!tool_doc(plain).contains("task"), "{}", tool_doc(plain));
    let task = ToolInfo::from_json(json!({"name": "research", "description": "Researches.",
        "execution": {"taskSupport": "required"}}))
    .expect("a tool");
    assert_eq!(
        tool_doc(&task),
        "Researches.\n\nruns only as a task (`execution.taskSupport: required`)"
    );
}

/// `(label, detail)` of each item offered where `¦` stands.
fn details(text: &str, k: &Knowledge<'_>) -> Vec<(String, String)> {
    complete_at(text, k)
        .map(|c| {
            c.items
                .into_iter()
                .map(|i| (i.label, i.detail.unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(got: &[(&str, &str)]) -> Vec<(String, String)> {
    got.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn a_paths_type_is_the_output_schemas_not_null() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.¦");
    assert_eq!(
        with(&text, |k| details(&text, k)),
        pairs(&[("users", "array of object"), ("count", "integer")])
    );
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.users[¦");
    assert_eq!(
        with(&text, |k| details(&text, k)),
        pairs(&[("0]", "first element · object"), ("*]", "every element")])
    );
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.users[0].¦");
    assert_eq!(
        with(&text, |k| details(&text, k)),
        pairs(&[("id", "string"), ("name", "string")])
    );
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${item.¦");
    assert_eq!(
        with(&text, |k| details(&text, k)),
        pairs(&[("id", "string"), ("name", "string")])
    );
}

#[test]
fn a_schema_types_detail_has_its_format_and_enum_and_its_doc_the_description() {
    let list = [json!({"name": "list_orders",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "$defs": {
            "Order": {"type": "object", "description": "One order.", "properties": {
                "placed": {"type": "string", "format": "date-time"},
                "state": {"type": "string", "enum": ["open", "paid"]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "kind": {"const": "order"}}}},
            "properties": {
                "orders": {"type": "array", "items": {"$ref": "#/$defs/Order"}},
                "count": {"type": "integer", "description": "Orders returned"}}}})];
    let mut tools = ToolLists::new();
    tools.insert(
        "demo".into(),
        list.into_iter().filter_map(ToolInfo::from_json).collect(),
    );
    let file = "pipe:\n  - id: o\n    tool: list_orders\n  - id: b\n    for_each: ${o.orders[*]}\n    tool: list_orders\n    args:\n      x: ${REF}\n";
    let at = |reference: &str| {
        let text = file.replace("REF", reference);
        let loaded = load_native_str(&text.replacen('¦', "", 1));
        let none = |_: &str| None;
        let k = Knowledge {
            pipeline: loaded.pipeline.as_ref(),
            tools: &tools,
            default_server: Some("demo"),
            output: &none,
        };
        complete_at(&text, &k).map(|c| c.items).unwrap_or_default()
    };
    let top = at("o.¦");
    assert_eq!(top[1].label, "count");
    assert_eq!(top[1].detail.as_deref(), Some("integer"));
    assert_eq!(top[1].doc.as_deref(), Some("Orders returned"));
    assert_eq!(top[0].detail.as_deref(), Some("array of object"));
    let first = at("o.orders[¦");
    assert_eq!(first[0].detail.as_deref(), Some("first element · object"));
    assert_eq!(first[0].doc.as_deref(), Some("One order."));
    let order: Vec<(String, String)> = at("o.orders[0].¦")
        .into_iter()
        .map(|i| (i.label, i.detail.unwrap_or_default()))
        .collect();
    let want = pairs(&[
        ("placed", "string · date-time"),
        ("state", "string · one of \"open\", \"paid\""),
        ("note", "string|null"),
        ("kind", "string · always \"order\""),
    ]);
    assert_eq!(order, want);
    // A fan-out's output is a list of its calls' outputs; `${item}` is
    // one element of its source.
    let fan = at("b[0].¦");
    assert_eq!(fan[0].label, "orders");
    let item: Vec<String> = at("item.¦").into_iter().map(|i| i.label).collect();
    assert_eq!(item, ["placed", "state", "note", "kind"]);
}

#[test]
fn a_recorded_value_still_says_its_own_type() {
    let text = FILE.replace("user_id: ${item.id}", "user_id: ${find.¦");
    let tools = tools();
    let loaded = load_native_str(&text.replacen('¦', "", 1));
    let output = |id: &str| {
        (id == "find").then(|| Json::from_value(json!({"users": [{"id": "u1"}], "total": 2})))
    };
    let k = Knowledge {
        pipeline: loaded.pipeline.as_ref(),
        tools: &tools,
        default_server: Some("demo"),
        output: &output,
    };
    assert_eq!(
        details(&text, &k),
        pairs(&[("users", "array [1]"), ("total", "number")])
    );
}
