//! The committed JSON Schema is what `pipewright schema` prints, and every
//! example validates against it and tells editors where it is. CI runs this
//! test before the others (`.ci/run`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use pipewright::engine::file::{schema, yaml};

mod common;

const SCHEMA_LINE: &str = "# yaml-language-server: $schema=../schema/pipewright.schema.json";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn committed() -> String {
    std::fs::read_to_string(root().join("schema/pipewright.schema.json")).unwrap_or_default()
}

fn examples() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    out.sort();
    out
}

#[test]
fn committed_schema_is_current() {
    assert!(
        committed() == schema::json_schema(),
        "schema/pipewright.schema.json is stale; regenerate it with `cargo run -- schema > schema/pipewright.schema.json`"
    );
}

#[test]
fn the_schema_command_prints_the_committed_schema() {
    let out = Command::from_std(common::pipewright())
        .arg("schema")
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), committed());
}

#[test]
fn examples_validate_against_the_schema_and_name_it() {
    let schema: serde_json::Value = serde_json::from_str(&schema::json_schema()).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let files = examples();
    assert!(files.len() >= 8, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).expect("reads");
        assert!(
            text.starts_with(SCHEMA_LINE),
            "{} lacks the schema line",
            path.display()
        );
        let doc = yaml::parse(&text).expect("parses").to_json();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn the_schema_rejects_what_the_loader_rejects() {
    let schema: serde_json::Value = serde_json::from_str(&schema::json_schema()).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    for bad in [
        "pipe:\n  - { id: a, tool: echo, nede: [x] }\n",
        "pipe:\n  - { id: a, tool: echo, on_error: sometimes }\n",
        "pipe:\n  - { tool: echo }\n",
        "pipe:\n  - { id: a, tool: echo, needs: [x] }\n",
        "servers: { a: { url: 'http://x', colour: red } }\npipe: []\n",
        "pipe:\n  - { id: a, tool: echo, answers: [maybe] }\n",
        "pipe:\n  - { id: a, tool: echo, answers: [{ accept: {}, sample: x }] }\n",
        "compositions:\n  - name: c\n    nodes: [{ id: a, tool: echo }]\n    eval: { provider: { url: 'http://x', model: m, api_key: sk-123 } }\n",
        "compositions:\n  - name: c\n    nodes: [{ id: a, tool: echo }]\n    eval: { rubric: { threshold: 1.5, criteria: [a] } }\n",
        "compositions:\n  - name: c\n    nodes: [{ id: a, tool: echo }]\n    eval: { helpfulness: {} }\n",
    ] {
        let doc = yaml::parse(bad).expect("parses").to_json();
        assert!(!validator.is_valid(&doc), "accepted: {bad}");
    }
}

#[test]
fn the_schema_accepts_what_the_loader_accepts() {
    let schema: serde_json::Value = serde_json::from_str(&schema::json_schema()).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    for good in [
        // A mocked node calls nothing, so it needs no tool; `needs` may be
        // one id; `when` may be a constant.
        "compositions:\n  - name: c\n    nodes:\n      - { id: a, mock: { result: 1 } }\n      - { id: b, needs: a, tool: echo, when: true }\n",
        "pipe:\n  - { id: a, mock: { result: 1 }, when: false }\n",
        // A node's answers, in the answers file's entry form.
        "pipe:\n  - { id: a, tool: confirm_send, answers: [decline, accept, { accept: { send: true } }, { sample: hi }, { sample: { text: yo, model: m } }] }\n",
        // The judged metrics: criteria as names or mappings, a decision
        // tree with bare scores, a provider, a metric with no settings.
        "compositions:\n  - name: c\n    nodes: [{ id: a, tool: echo }]\n    eval:\n      provider: { url: 'http://127.0.0.1:9/v1', model: m, api_key: '${env.K}', timeout: 30s }\n      mcp_task_completion: { threshold: 0.8 }\n      mcp_use: { threshold: 0.7, expect: [echo] }\n      plan_quality:\n      rubric:\n        criteria: [{ name: covers query, weight: 1.0 }, terse]\n",
        "compositions:\n  - name: c\n    nodes: [{ id: a, tool: echo }]\n    eval:\n      rubric:\n        tree:\n          question: q\n          options: { yes: { question: r, options: { yes: 1, no: { score: 0.4, label: l } } }, no: 0 }\n",
        // The assertion grants: a workload's token file or command, an
        // enterprise identity provider's ID-JAG.
        "servers:\n  s:\n    url: https://mcp.example/mcp\n    auth: { grant: jwt_bearer, client_id: w, assertion: { file: /var/run/secrets/tokens/mcp } }\npipe:\n  - { id: a, tool: echo }\n",
        "servers:\n  s:\n    url: https://mcp.example/mcp\n    auth: { grant: jwt_bearer, assertion: { command: [print-token, --aud, x] } }\npipe:\n  - { id: a, tool: echo }\n",
        "servers:\n  s:\n    url: https://mcp.example/mcp\n    auth:\n      grant: id_jag\n      client_id: c\n      client_secret: '${env.S}'\n      identity_provider: { issuer: 'https://idp.example', client_id: pw, id_token: '${env.ID_TOKEN}' }\npipe:\n  - { id: a, tool: echo }\n",
    ] {
        let loaded = pipewright::engine::file::open::load_str(good);
        assert!(!loaded.has_errors(), "the loader rejects: {good}");
        let doc = yaml::parse(good).expect("parses").to_json();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "the schema rejects {good}: {errors:?}");
    }
}

/// Which key table of the loader each object of the schema restates.
fn tables() -> Vec<(&'static str, Vec<&'static str>)> {
    use pipewright::engine::file::keys::*;
    let top: Vec<&str> = TOP_KEYS.iter().chain(MCPTEST_SECTIONS).copied().collect();
    vec![
        ("(top level)", top),
        ("ServerObject", SERVER_KEYS.to_vec()),
        ("BudgetEntry", BUDGET_KEYS.to_vec()),
        ("CompositionEntry", COMPOSITION_KEYS.to_vec()),
        ("NodeEntry", NODE_KEYS.to_vec()),
        ("PipeStepEntry", pipe_step_keys()),
        ("JqObject", TRANSFORM_KEYS.to_vec()),
        ("RetryObject", ON_ERROR_KEYS.to_vec()),
        ("RetryFull", RETRY_KEYS.to_vec()),
        ("MockEntry", MOCK_KEYS.to_vec()),
        ("CompensateEntry", COMPENSATE_KEYS.to_vec()),
        ("AnswerObject", ANSWER_KEYS.to_vec()),
        ("SampleObject", SAMPLE_KEYS.to_vec()),
        ("AssembleObject", OUTPUT_KEYS.to_vec()),
        ("ExpectEntry", EXPECTATION_KEYS.to_vec()),
        ("MatcherEntry", MATCHERS.to_vec()),
        ("CaseEntry", CASE_KEYS.to_vec()),
        ("EvalEntry", EVAL_KEYS.to_vec()),
        ("JudgeProvider", JUDGE_KEYS.to_vec()),
        ("RubricEntry", RUBRIC_KEYS.to_vec()),
        ("CriterionEntry", CRITERION_KEYS.to_vec()),
        ("TreeNodeEntry", TREE_KEYS.to_vec()),
        ("TaskCompletionEntry", TASK_COMPLETION_KEYS.to_vec()),
        ("McpUseEntry", MCP_USE_KEYS.to_vec()),
        ("ThresholdEntry", THRESHOLD_KEYS.to_vec()),
        ("SamplingEntry", SAMPLING_KEYS.to_vec()),
        ("AuthEntry", AUTH_KEYS.to_vec()),
        ("IdentityProviderEntry", IDENTITY_PROVIDER_KEYS.to_vec()),
        ("AssertionSourceEntry", ASSERTION_SOURCE_KEYS.to_vec()),
    ]
}

#[test]
fn the_schema_and_the_loader_accept_the_same_keys_object_by_object() {
    let schema: serde_json::Value =
        serde_json::from_str(&schema::json_schema()).expect("the schema is JSON");
    let defs = schema["$defs"].as_object().expect("$defs");
    let tables = tables();
    let mut drift = Vec::new();
    for (object, keys) in &tables {
        let node = if *object == "(top level)" {
            &schema
        } else {
            &defs[*object]
        };
        let Some(props) = node["properties"].as_object() else {
            drift.push(format!(
                "{object}: no such object with properties in the schema"
            ));
            continue;
        };
        for k in props.keys() {
            if !keys.contains(&k.as_str()) {
                drift.push(format!(
                    "{object}: `{k}` is in the schema, the loader rejects it"
                ));
            }
        }
        for k in keys {
            if !props.contains_key(*k) {
                drift.push(format!(
                    "{object}: `{k}` is accepted by the loader, missing from the schema"
                ));
            }
        }
    }
    for (name, def) in defs {
        if def.get("properties").is_some() && !tables.iter().any(|(o, _)| o == name) {
            drift.push(format!(
                "{name}: an object in the schema with no key table in the loader"
            ));
        }
    }
    assert!(
        drift.is_empty(),
        "schema and loader disagree:\n{}",
        drift.join("\n")
    );
}
