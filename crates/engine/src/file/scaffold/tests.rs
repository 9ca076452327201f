use serde_json::json;

use super::*;
use crate::file::open::load_str;

fn loads(text: &str) -> crate::file::model::Pipeline {
    let loaded = load_str(text);
    let errors: Vec<String> = loaded.errors().map(|d| d.message.clone()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    loaded.pipeline.expect("a pipeline")
}

#[test]
fn two_tools_chain_with_their_required_arguments() {
    let search = json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "description": "Text to find." },
            "limit": { "type": "integer" }
        },
        "required": ["query"]
    });
    let add = json!({
        "type": "object",
        "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
        "required": ["a", "b"]
    });
    let tools = [
        ToolDef {
            server: "demo",
            name: "search_users",
            description: Some("Find\nusers."),
            input_schema: &search,
        },
        ToolDef {
            server: "demo",
            name: "add",
            description: None,
            input_schema: &add,
        },
    ];
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[0, 1],
        file: None,
    });
    assert!(text.starts_with(&schema_line(None)), "{text}");
    assert!(!text.contains("servers:"), "{text}");
    assert!(
        text.contains("query: ${var.QUERY}  # string: Text to find."),
        "{text}"
    );
    assert!(
        text.contains("  QUERY: \"\"  # string: Text to find."),
        "{text}"
    );
    assert!(text.contains("a: 0  # number"), "{text}");
    assert!(text.contains("needs: [search_users]"), "{text}");
    assert!(text.contains("# Find users."), "{text}");
    assert!(!text.contains("limit"), "{text}");
    let p = loads(&text);
    let nodes = &p.compositions[0].nodes;
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[1].tool, "add");
}

#[test]
fn odd_names_are_quoted_and_ids_made_valid() {
    let schema = json!({
        "properties": { "a key: #1": { "type": "string" }, "yes": { "type": "boolean" } },
        "required": ["a key: #1", "yes"]
    });
    let tools = [
        ToolDef {
            server: "my server",
            name: "9 lives: \"x\"",
            description: Some("a\u{1b}[31m red"),
            input_schema: &schema,
        },
        ToolDef {
            server: "my server",
            name: "9 lives: \"x\"",
            description: None,
            input_schema: &schema,
        },
    ];
    let servers = [(
        "my server".to_owned(),
        ServerEntry::Command {
            command: "my tool".into(),
            args: vec!["--flag=\"q\"".into()],
        },
    )];
    let text = scaffold(&Request {
        name: "new: one",
        servers: &servers,
        tools: &tools,
        chosen: &[0, 1],
        file: None,
    });
    assert!(
        text.contains("  \"my server\":\n    command: \"my tool\""),
        "{text}"
    );
    assert!(text.contains("- id: _9_lives___x_\n"), "{text}");
    assert!(text.contains("- id: _9_lives___x__2\n"), "{text}");
    assert!(text.contains("tool: \"9 lives: \\\"x\\\"\""), "{text}");
    assert!(text.contains("\"a key: #1\": ${var.A_KEY___1}"), "{text}");
    assert!(text.contains("\"yes\": false  # boolean"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    let p = loads(&text);
    assert_eq!(p.compositions[0].name, "new: one");
    assert_eq!(p.compositions[0].nodes[0].tool, "9 lives: \"x\"");
    assert_eq!(p.vars.len(), 2, "{text}");
}

#[test]
fn a_schema_without_properties_writes_no_args() {
    let bare = json!({});
    let odd = json!({ "type": "object", "required": ["x"] });
    let tools = [
        ToolDef {
            server: "s",
            name: "ping",
            description: None,
            input_schema: &bare,
        },
        ToolDef {
            server: "s",
            name: "odd",
            description: None,
            input_schema: &odd,
        },
    ];
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[0, 1],
        file: None,
    });
    assert!(text.contains("tool: ping\n      - id: odd"), "{text}");
    assert!(text.contains("x: null  # any"), "{text}");
    loads(&text);
}

#[test]
fn an_enum_takes_its_first_value_and_names_the_rest() {
    let schema = json!({
        "properties": { "mode": { "type": "string", "enum": ["fast", "slow"], "description": "How." } },
        "required": ["mode"]
    });
    let tools = [ToolDef {
        server: "s",
        name: "go",
        description: None,
        input_schema: &schema,
    }];
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[0],
        file: None,
    });
    assert!(
        text.contains("mode: \"fast\"  # string (one of \"fast\", \"slow\"): How."),
        "{text}"
    );
    assert!(!text.contains("vars:"), "{text}");
    loads(&text);
}

#[test]
fn one_of_takes_the_first_alternative() {
    let schema = json!({
        "properties": { "query": { "type": "string" }, "q": { "type": "string" } },
        "oneOf": [{ "required": ["query"] }, { "required": ["q"] }]
    });
    let tools = [ToolDef {
        server: "s",
        name: "find",
        description: None,
        input_schema: &schema,
    }];
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[0],
        file: None,
    });
    assert!(text.contains("query: ${var.QUERY}"), "{text}");
    assert!(!text.contains(" q:"), "{text}");
}

#[test]
fn none_chosen_writes_an_example_node_that_loads() {
    let schema =
        json!({ "properties": { "message": { "type": "string" } }, "required": ["message"] });
    let tools = [ToolDef {
        server: "demo",
        name: "echo",
        description: None,
        input_schema: &schema,
    }];
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[],
        file: None,
    });
    assert!(text.contains("# demo's tools: echo\n"), "{text}");
    assert!(
        text.contains("      - id: echo\n        tool: echo\n"),
        "{text}"
    );
    assert!(
        text.contains("          message: \"\"  # string\n"),
        "{text}"
    );
    assert!(!text.contains("vars:"), "{text}");
    let p = loads(&text);
    assert_eq!(p.compositions[0].nodes.len(), 1);
}

#[test]
fn servers_with_no_tools_get_a_node_that_loads() {
    let servers = [(
        "empty".to_owned(),
        ServerEntry::Url("http://127.0.0.1:9/mcp".into()),
    )];
    let text = scaffold(&Request {
        name: "main",
        servers: &servers,
        tools: &[],
        chosen: &[],
        file: None,
    });
    assert!(
        text.contains("      - id: first\n        mock:\n"),
        "{text}"
    );
    let p = loads(&text);
    assert_eq!(p.compositions[0].nodes[0].id, "first");
}

/// The `$schema` modeline is a path from the file's folder to a schema
/// found there or above it; with none, a comment says how to get one and
/// names no path that does not exist.
#[test]
fn the_schema_modeline_resolves_from_where_the_file_is() {
    let repo = tempfile::tempdir().expect("a temp dir");
    let root = repo.path();
    std::fs::create_dir_all(root.join("schema")).expect("mkdir");
    std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
    std::fs::write(root.join(REPO_SCHEMA), "{}").expect("write");
    let line = |file: &Path| schema_line(Some(file));
    assert_eq!(
        line(&root.join("new.yml")),
        "# yaml-language-server: $schema=schema/pipewright.schema.json"
    );
    assert_eq!(
        line(&root.join("a/b/new.yml")),
        "# yaml-language-server: $schema=../../schema/pipewright.schema.json"
    );
    assert_eq!(
        line(&root.join("a/b/../new.yml")),
        "# yaml-language-server: $schema=../schema/pipewright.schema.json"
    );
    // The copy `pipewright schema >` wrote beside the file comes first.
    std::fs::write(root.join("a").join(LOCAL_SCHEMA), "{}").expect("write");
    assert_eq!(
        line(&root.join("a/b/new.yml")),
        "# yaml-language-server: $schema=../pipewright.schema.json"
    );
    let alone = tempfile::tempdir().expect("a temp dir");
    let mut lines = vec![
        schema_line(Some(Path::new("relative.yml"))),
        schema_line(None),
    ];
    // (Unless the temp dir is inside a checkout of this repository.)
    if !alone
        .path()
        .ancestors()
        .any(|a| a.join(REPO_SCHEMA).is_file() || a.join(LOCAL_SCHEMA).is_file())
    {
        lines.push(schema_line(Some(&alone.path().join("new.yml"))));
    }
    for text in lines {
        assert!(!text.contains("$schema="), "{text}");
        assert!(
            text.contains("`pipewright schema > pipewright.schema.json`"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
    }
}

#[test]
fn several_servers_name_theirs_on_each_node() {
    let schema = json!({});
    let tools = [
        ToolDef {
            server: "a",
            name: "one",
            description: None,
            input_schema: &schema,
        },
        ToolDef {
            server: "b",
            name: "two",
            description: None,
            input_schema: &schema,
        },
    ];
    let servers = [
        (
            "a".to_owned(),
            ServerEntry::Url("http://localhost:1/mcp".into()),
        ),
        (
            "b".to_owned(),
            ServerEntry::From {
                path: "/x/.mcp.json".into(),
                name: "b".into(),
            },
        ),
    ];
    let text = scaffold(&Request {
        name: "main",
        servers: &servers,
        tools: &tools,
        chosen: &[1, 0],
        file: None,
    });
    assert!(text.contains("server: b\n        tool: two"), "{text}");
    assert!(text.contains("needs: [two]\n        server: a"), "{text}");
    assert!(
        text.contains("    url: \"http://localhost:1/mcp\""),
        "{text}"
    );
    assert!(
        text.contains("    from: \"/x/.mcp.json\"\n    name: \"b\""),
        "{text}"
    );
}
