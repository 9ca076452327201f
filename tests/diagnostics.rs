//! Malformed pipeline files, each with the diagnostic it must produce:
//! severity, line, column and the words of the message.

use pipewright::engine::diag::Severity;
use pipewright::engine::file::open::load_str;
use rstest::rstest;

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;

#[rstest]
// --- YAML and the top level ---
#[case::empty_file("", E, 1, 1, "the file is empty")]
#[case::root_is_a_list(
    "- a\n- b\n",
    E,
    1,
    1,
    "must be a mapping with `pipe:` or `compositions:`"
)]
#[case::yaml_syntax(
    "pipe:\n  - id: a\n    tool: [x, y\n",
    E,
    3,
    11,
    "YAML syntax error: unclosed bracket"
)]
#[case::unknown_top_key(
    "pipe:\n  - id: a\n    tool: t\nfoo: 1\n",
    E,
    4,
    1,
    "unknown key `foo` in the pipeline file"
)]
#[case::top_key_typo("pipes:\n  - id: a\n    tool: t\n", E, 1, 1, "unknown key `pipes`")]
#[case::nothing_to_run("vars: {a: 1}\n", E, 1, 1, "neither `pipe:` nor `compositions:`")]
#[case::empty_pipe("pipe: []\n", E, 1, 7, "`pipe` is empty")]
#[case::pipe_not_a_list("pipe: {id: a}\n", E, 1, 7, "`pipe` must be a list of steps")]
#[case::empty_compositions("compositions: []\n", E, 1, 15, "`compositions` is empty")]
#[case::unsupported_version(
    "version: 2\npipe:\n  - id: a\n    tool: t\n",
    E,
    1,
    10,
    "unsupported version 2"
)]
#[case::duplicate_top_key(
    "pipe:\n  - id: a\n    tool: t\npipe:\n  - id: b\n    tool: t\n",
    E,
    4,
    1,
    "duplicate key `pipe`"
)]
// --- nodes ---
#[case::node_key_typo(
    "pipe:\n  - id: a\n    tol: t\n",
    E,
    3,
    5,
    "unknown key `tol` in node `a`"
)]
#[case::node_without_tool("pipe:\n  - id: a\n    args: {}\n", E, 2, 9, "node `a` has no `tool`")]
#[case::node_without_id("pipe:\n  - tool: t\n", E, 2, 5, "a node needs an `id`")]
#[case::invalid_id(
    "pipe:\n  - id: 2fast\n    tool: t\n",
    E,
    2,
    9,
    "`2fast` is not a valid id"
)]
#[case::reserved_id("pipe:\n  - id: item\n    tool: t\n", E, 2, 9, "`item` is reserved")]
#[case::duplicate_ids(
    "pipe:\n  - id: a\n    tool: t\n  - id: a\n    tool: u\n",
    E,
    4,
    9,
    "duplicate id `a` (first defined at line 2)"
)]
#[case::duplicate_node_key(
    "pipe:\n  - id: a\n    tool: t\n    tool: u\n",
    E,
    4,
    5,
    "duplicate key `tool` in node `a`"
)]
#[case::needs_on_pipe_step(
    "pipe:\n  - id: a\n    tool: t\n  - id: b\n    needs: [a]\n    tool: t\n",
    E,
    5,
    5,
    "`needs` is not allowed on pipe step `b`"
)]
#[case::args_not_a_mapping(
    "pipe:\n  - id: a\n    tool: t\n    args: [1, 2]\n",
    E,
    4,
    11,
    "`args` must be a mapping"
)]
#[case::invalid_on_error(
    "pipe:\n  - id: a\n    tool: t\n    on_error: abort\n",
    E,
    4,
    15,
    "invalid `on_error` value `abort`"
)]
#[case::retry_without_max(
    "pipe:\n  - id: a\n    tool: t\n    on_error: {retry: {backoff: 1s}}\n",
    E,
    4,
    23,
    "`retry` needs `max`"
)]
#[case::invalid_timeout(
    "pipe:\n  - id: a\n    tool: t\n    timeout: 3 parsecs\n",
    E,
    4,
    14,
    "invalid duration `3 parsecs` for `timeout`"
)]
#[case::invalid_backoff(
    "pipe:\n  - id: a\n    tool: t\n    on_error: {retry: {max: 2, backoff: soon}}\n",
    E,
    4,
    41,
    "invalid duration `soon`"
)]
#[case::mock_result_and_error(
    "pipe:\n  - id: a\n    tool: t\n    mock: {result: 1, error: x}\n",
    E,
    4,
    11,
    "not both"
)]
#[case::mock_empty(
    "pipe:\n  - id: a\n    tool: t\n    mock: {}\n",
    E,
    4,
    11,
    "`mock` needs `result` or `error`"
)]
#[case::zero_concurrency(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        needs: [a]\n        for_each: ${a}\n        max_concurrency: 0\n        tool: t\n",
    E,
    9,
    26,
    "`max_concurrency` must be at least 1"
)]
#[case::transform_without_jq(
    "pipe:\n  - id: a\n    tool: t\n    transform: {program: .}\n",
    E,
    4,
    17,
    "unknown key `program` in `transform`"
)]
// --- references ---
#[case::reference_to_unknown_step(
    "pipe:\n  - id: find\n    tool: t\n  - id: b\n    tool: t\n    args: {q: \"${fnd.users}\"}\n",
    E,
    6,
    16,
    "refers to unknown node `fnd`"
)]
#[case::reference_to_later_step(
    "pipe:\n  - id: a\n    tool: t\n    args: {q: \"${b.x}\"}\n  - id: b\n    tool: t\n",
    E,
    4,
    16,
    "refers to step `b`, which runs later"
)]
#[case::unterminated_reference(
    "pipe:\n  - id: a\n    tool: t\n    args:\n      q: \"hello ${name\"\n",
    E,
    5,
    17,
    "in `args.q`"
)]
#[case::empty_reference(
    "pipe:\n  - id: a\n    tool: t\n    args:\n      q: \"${}\"\n",
    E,
    5,
    11,
    "in `args.q`"
)]
#[case::item_outside_for_each(
    "pipe:\n  - id: a\n    tool: t\n    args: {q: \"${item.name}\"}\n",
    E,
    4,
    16,
    "used outside a `for_each` node"
)]
#[case::reference_outside_needs(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        tool: t\n        args: {x: \"${a.y}\"}\n",
    E,
    8,
    20,
    "`${a.y}` refers to `a`, which is not in the `needs` of node `b`"
)]
// --- graph ---
#[case::unknown_need(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        needs: [z]\n        tool: t\n",
    E,
    7,
    17,
    "needs unknown node `z`"
)]
#[case::need_typo_hint(
    "compositions:\n  - name: c\n    nodes:\n      - id: search\n        tool: t\n      - id: b\n        needs: [serch]\n        tool: t\n",
    E,
    7,
    17,
    "needs unknown node `serch`"
)]
#[case::cycle(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        needs: [b]\n        tool: t\n      - id: b\n        needs: [a]\n        tool: t\n",
    E,
    8,
    17,
    "cycle in `needs`: b → a → b"
)]
#[case::self_need(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        needs: [a]\n        tool: t\n",
    E,
    5,
    17,
    "node `a` needs itself"
)]
#[case::for_each_parent_not_in_needs(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        for_each: \"${a}\"\n        tool: t\n",
    E,
    7,
    20,
    "`for_each` parent `a` of node `b` is not in its `needs`"
)]
#[case::for_each_not_a_reference(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        needs: [a]\n        for_each: every a\n        tool: t\n",
    E,
    8,
    19,
    "`for_each` must be exactly one reference"
)]
#[case::unknown_output(
    "compositions:\n  - name: c\n    nodes:\n      - id: readme\n        tool: t\n    output: redme\n",
    E,
    6,
    13,
    "`output` names unknown node `redme`"
)]
#[case::composition_without_name(
    "compositions:\n  - nodes:\n      - id: a\n        tool: t\n",
    E,
    2,
    5,
    "a composition needs a `name`"
)]
#[case::composition_without_nodes(
    "compositions:\n  - name: c\n",
    E,
    2,
    5,
    "composition `c` has no `nodes`"
)]
#[case::duplicate_compositions(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n  - name: c\n    nodes: [{id: a, tool: t}]\n",
    E,
    4,
    5,
    "duplicate composition name `c`"
)]
// --- servers ---
#[case::unknown_server(
    "servers:\n  users: {url: \"http://127.0.0.1:1/mcp\"}\npipe:\n  - id: a\n    server: user\n    tool: t\n",
    E,
    5,
    13,
    "unknown server `user`"
)]
#[case::missing_server(
    "servers:\n  a: {url: \"http://127.0.0.1:1/mcp\"}\n  b: {command: x}\npipe:\n  - id: s\n    tool: t\n",
    E,
    5,
    9,
    "does not say which server to call"
)]
#[case::server_url_and_command(
    "servers:\n  x: {url: \"http://h/mcp\", command: y}\npipe:\n  - id: a\n    tool: t\n",
    E,
    2,
    6,
    "has both `url` and `command`"
)]
#[case::server_without_transport(
    "servers:\n  x: {headers: {}}\npipe:\n  - id: a\n    tool: t\n",
    E,
    2,
    6,
    "needs one of `url`, `command` or `from`"
)]
// --- jq ---
#[case::jq_error_in_transform(
    "pipe:\n  - id: a\n    tool: t\n    transform: \".a | lenght\"\n",
    E,
    4,
    22,
    "jq error in `transform`: undefined function `lenght/0`"
)]
#[case::jq_error_in_when(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        needs: [a]\n        when: \".parents.a.n >\"\n        tool: t\n",
    E,
    8,
    30,
    "jq error in `when`: expected a filter"
)]
#[case::jq_error_in_pipe_when(
    "pipe:\n  - id: a\n    tool: t\n  - id: b\n    tool: t\n    when: ${a.users} | lenght > 0\n",
    E,
    6,
    24,
    "jq error in `when`"
)]
#[case::pipe_when_without_bar(
    "pipe:\n  - id: a\n    tool: t\n  - id: b\n    tool: t\n    when: ${a.users} length\n",
    E,
    6,
    22,
    "expected `|` after the reference"
)]
#[case::jq_error_in_assemble(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    output: {assemble: \"{x: .nodes.a\"}\n",
    E,
    4,
    25,
    "jq error in `output.assemble`: unclosed `{`"
)]
// --- budgets, expectations, cases ---
#[case::budget_typo(
    "budget: {max_cost: 1}\npipe:\n  - id: a\n    tool: t\n",
    E,
    1,
    10,
    "unknown key `max_cost` in `budget`"
)]
#[case::negative_budget(
    "budget: {max_cost_usd: -1}\npipe:\n  - id: a\n    tool: t\n",
    E,
    1,
    24,
    "`max_cost_usd` must be a non-negative number"
)]
#[case::unknown_matcher(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    expect:\n      - target: nodes.a.status\n        matcher: {equals: ok}\n",
    E,
    6,
    19,
    "unknown key `equals` in `matcher`"
)]
#[case::invalid_regex(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    expect:\n      - target: output\n        matcher: {regex: \"(\"}\n",
    E,
    6,
    26,
    "invalid regex"
)]
#[case::unknown_target(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    expect:\n      - target: result.x\n        matcher: {exists: true}\n",
    E,
    5,
    17,
    "unknown expectation target `result.x`"
)]
#[case::case_without_name(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    cases:\n      - vars: {q: 1}\n",
    E,
    5,
    9,
    "a case needs a `name`"
)]
#[case::unknown_type_matcher(
    "compositions:\n  - name: c\n    nodes: [{id: a, tool: t}]\n    expect:\n      - target: output\n        matcher: {type: list}\n",
    E,
    6,
    25,
    "unknown JSON type `list`"
)]
// --- warnings ---
#[case::never_runs(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        when: \"false\"\n        tool: t\n      - id: b\n        needs: [a]\n        tool: t\n        args: {x: \"${a}\"}\n",
    W,
    5,
    15,
    "never runs"
)]
#[case::unreachable_child(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        when: \"false\"\n        tool: t\n      - id: b\n        needs: [a]\n        tool: t\n        args: {x: \"${a}\"}\n",
    W,
    7,
    13,
    "node `b` is unreachable"
)]
#[case::concurrency_without_fan_out(
    "pipe:\n  - id: a\n    tool: t\n    max_concurrency: 4\n",
    W,
    4,
    5,
    "`max_concurrency` has no effect"
)]
#[case::expect_every_case_overrides(
    "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n    expect:\n      - { target: \"nodes.a.status\", matcher: { exact: ok } }\n    cases:\n      - name: one\n        expect: []\n      - name: two\n        expect:\n          - { target: \"nodes.a.status\", matcher: { exact: ok } }\n",
    W,
    6,
    5,
    "the `expect` of composition `c` never runs: each of its 2 case(s) has its own `expect:`"
)]
#[case::pipe_expect_every_case_overrides(
    "pipe:\n  - id: a\n    tool: t\nexpect:\n  - { target: \"nodes.a.status\", matcher: { exact: ok } }\ncases:\n  - name: one\n    expect: []\n",
    W,
    4,
    1,
    "never runs: each of its 1 case(s)"
)]
#[case::mcptest_section(
    "agents: []\npipe:\n  - id: a\n    tool: t\n",
    W,
    1,
    1,
    "mcptest section"
)]
fn malformed_files_are_diagnosed(
    #[case] source: &str,
    #[case] severity: Severity,
    #[case] line: u32,
    #[case] col: u32,
    #[case] message: &str,
) {
    let loaded = load_str(source);
    let found = loaded.diagnostics.iter().any(|d| {
        d.severity == severity
            && d.span.start.line == line
            && d.span.start.col == col
            && d.message.contains(message)
    });
    assert!(
        found,
        "expected {severity} at {line}:{col} containing {message:?}; got:\n{}",
        loaded
            .diagnostics
            .iter()
            .map(|d| d.render("test.yml", Some(source)))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A composition `expect:` that some case inherits runs, so it is not
/// warned about.
#[test]
fn a_composition_expect_a_case_inherits_is_not_warned_about() {
    let loaded = load_str(
        "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n    expect:\n      - { target: \"nodes.a.status\", matcher: { exact: ok } }\n    cases:\n      - name: one\n        expect: []\n      - name: two\n",
    );
    assert!(
        !loaded
            .diagnostics
            .iter()
            .any(|d| d.message.contains("never runs")),
        "{:#?}",
        loaded.diagnostics
    );
}

/// A `needs:` entry no reference reads orders the two nodes, which is
/// what `needs:` is for: nothing to warn about (issue 48, item 17; a
/// 2,000-node chain had 3,980 warnings).
#[test]
fn a_need_used_only_for_ordering_is_not_warned_about() {
    let loaded = load_str(
        "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: t\n      - id: b\n        needs: [a]\n        tool: t\n",
    );
    assert!(loaded.pipeline.is_some());
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
}

#[test]
fn every_error_is_reported_at_once() {
    let source = "pipe:\n  - id: a\n    tol: t\n  - id: a\n    tool: t\n    on_error: never\n    timeout: soon\n";
    let loaded = load_str(source);
    let errors: Vec<_> = loaded.errors().collect();
    assert!(errors.len() >= 4, "{errors:#?}");
}

#[test]
fn hints_suggest_the_nearest_name() {
    let loaded = load_str("pipe:\n  - id: a\n    tol: t\n");
    let d = loaded
        .errors()
        .find(|d| d.message.contains("`tol`"))
        .cloned();
    assert_eq!(
        d.and_then(|d| d.hint).as_deref(),
        Some("did you mean `tool`?")
    );
}
