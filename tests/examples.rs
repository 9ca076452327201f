//! Every file in `examples/` loads with no error and no warning, and the
//! shapes of the mcptest reference (pipe, composition anatomy, transform,
//! control flow, fan-out, cases, assembly, budget, mocks, judged eval) load.

use pipewright::engine::file::model::Kind;
use pipewright::engine::file::open::load_str;

fn examples() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yml" | "yaml" | "json")
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_loads_cleanly() {
    let files = examples();
    assert!(
        files.len() >= 8,
        "expected the example set, found {files:?}"
    );
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        let loaded = load_str(&source);
        // The one note allowed: where an import deliberately differs from
        // Fibe (the idempotency key travels in `_meta`).
        let shown: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_error() || !d.message.contains("_meta.idempotencyKey"))
            .map(|d| d.render(&path.display().to_string(), Some(&source)))
            .collect();
        assert!(shown.is_empty(), "{}", shown.join("\n"));
        assert!(loaded.valid().is_some(), "{}", path.display());
    }
}

#[test]
fn the_pipe_example_is_a_three_step_line() {
    let src = include_str!("../examples/search-then-update.yml");
    let loaded = load_str(src);
    let p = loaded
        .valid()
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    let c = &p.compositions[0];
    assert_eq!(c.kind, Kind::Pipe);
    assert_eq!(c.waves.len(), 3);
    assert_eq!(c.parents[2], vec![1]);
    let when = c.nodes[1]
        .when
        .as_ref()
        .unwrap_or_else(|| panic!("no when"));
    assert_eq!(
        when.subject
            .as_ref()
            .map(|s| s.reference.to_string())
            .as_deref(),
        Some("${find.users}")
    );
    assert_eq!(
        when.filter.as_ref().map(|f| f.source().trim()),
        Some("length > 0")
    );
}

#[test]
fn a_judged_eval_block_loads_and_its_metrics_are_kept() {
    let src = "compositions:\n  - name: judged\n    nodes:\n      - id: search\n        tool: search_packages\n        args: { query: \"${var.query}\" }\n    output: search\n    eval:\n      rubric:\n        criteria:\n          - { name: \"covers query\", weight: 1.0 }\n";
    let loaded = load_str(src);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    // The one warning: `${var.query}` has no default outside a case.
    let warnings: Vec<_> = loaded.warnings().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].message.contains("${var.query}"), "{warnings:?}");
    let p = loaded.valid().expect("valid");
    let names: Vec<&str> = p.compositions[0].eval.names().collect();
    assert_eq!(names, ["rubric"]);
}

#[test]
fn waves_group_independent_nodes() {
    let src = "compositions:\n  - name: diamond\n    nodes:\n      - {id: a, tool: t}\n      - {id: b, tool: t, needs: [a], args: {x: \"${a}\"}}\n      - {id: c, tool: t, needs: [a], args: {x: \"${a}\"}}\n      - {id: d, tool: t, needs: [b, c], args: {x: \"${b} ${c}\"}}\n    output:\n      assemble: \"{ stars: .nodes.b, release: .nodes.c }\"\n";
    let loaded = load_str(src);
    let p = loaded
        .valid()
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
    let c = &p.compositions[0];
    let names = |w: &Vec<usize>| w.iter().map(|&i| c.nodes[i].id.clone()).collect::<Vec<_>>();
    assert_eq!(
        c.waves.iter().map(names).collect::<Vec<_>>(),
        vec![vec!["a"], vec!["b", "c"], vec!["d"]]
    );
}

#[test]
fn hashes_ignore_formatting_but_see_changes() {
    let a = load_str("pipe:\n  - {id: a, tool: t, args: {x: 1, y: 2}}\n");
    let b = load_str("pipe:\n  - id: a\n    tool: t\n    args:\n      y: 2\n      x: 1\n");
    let c = load_str("pipe:\n  - {id: a, tool: t, args: {x: 1, y: 3}}\n");
    let h = |l: &pipewright::engine::file::loader::Loaded| {
        l.valid().map(|p| p.compositions[0].nodes[0].hash.clone())
    };
    assert_eq!(h(&a), h(&b));
    assert_ne!(h(&a), h(&c));
}

#[test]
fn json_pipelines_load() {
    let src = r#"{"pipe": [{"id": "find", "tool": "search_users", "args": {"query": "ada"}},
                          {"id": "details", "tool": "get_user_details", "args": {"user_id": "${find.users[0].id}"}}]}"#;
    let loaded = load_str(src);
    assert!(loaded.valid().is_some(), "{:?}", loaded.diagnostics);
}
