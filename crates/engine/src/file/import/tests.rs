//! Tests of the Fibe and Discord imports: detection, translation, and one
//! test per validation rule, each checking the message and its position.

use rstest::rstest;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::shared::jq_path;
use super::*;
use crate::diag::Severity;
use crate::file::open::load_str_as;

/// The errors of loading `src` as `dialect`, as (line, col, message).
fn errors(src: &str, dialect: Dialect) -> Vec<(u32, u32, String)> {
    load_str_as(src, dialect)
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.span.start.line, d.span.start.col, d.message.clone()))
        .collect()
}

/// Asserts exactly one error, on `line`, whose message contains `needle`.
fn one_error(src: &str, dialect: Dialect, line: u32, needle: &str) {
    let errs = errors(src, dialect);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, line, "{errs:?}");
    assert!(errs[0].2.contains(needle), "{errs:?}");
}

fn yaml_of(src: &str) -> String {
    let c = convert(src, Dialect::Auto, FibeLimits::default()).expect("parses");
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    c.yaml
}

#[rstest]
#[case::native("pipe:\n  - {id: a, tool: echo}\n", Dialect::Native)]
#[case::fibe_ref(
    r#"{"steps":[{"id":"a","tool":"t","args":{"x":"$.b"}}]}"#,
    Dialect::Fibe
)]
#[case::fibe_parallel(r#"{"steps":[{"parallel":[{"tool":"t"}]}]}"#, Dialect::Fibe)]
#[case::fibe_return(r#"{"steps":[{"tool":"t"}],"return":"$"}"#, Dialect::Fibe)]
#[case::discord_braces(r#"{"steps":[{"tool":"t","args":{"x":"{{a.b}}"}}]}"#, Dialect::Discord)]
#[case::discord_save_as(r#"{"steps":[{"tool":"t","save_as":"x"}]}"#, Dialect::Discord)]
#[case::plain_steps_read_as_fibe(r#"{"steps":[{"tool":"t"}]}"#, Dialect::Fibe)]
fn detects_the_dialect_from_content(#[case] src: &str, #[case] want: Dialect) {
    assert_eq!(detect(&yaml::parse(src).expect("parses")), want);
}

#[test]
fn fibe_references_become_native_references_and_escapes_stay_literal() {
    let y = yaml_of(
        r#"{"steps":[
  {"id":"find","tool":"search_users","args":{"query":"a"}},
  {"id":"who","tool":"get_user_details","args":{"user_id":"$.find.users[0].id","note":"$$.kept","t":"${not.a.ref}"}}
]}"#,
    );
    assert!(y.contains(r#""user_id": "${find.users[0].id}""#), "{y}");
    assert!(y.contains(r#""note": "$.kept""#), "{y}");
    assert!(y.contains(r#""t": "$${not.a.ref}""#), "{y}");
    assert!(y.starts_with("# Converted from a Fibe pipeline"), "{y}");
    assert!(
        y.contains("pipe:"),
        "a file without parallel stays linear: {y}"
    );
}

#[test]
fn parallel_blocks_become_a_dag_whose_members_follow_the_previous_step() {
    let src = r#"{"steps":[
  {"id":"a","tool":"echo","args":{"message":"x"}},
  {"parallel":[{"id":"b","tool":"echo"},{"id":"c","tool":"echo"}]},
  {"id":"d","tool":"add","args":{"a":"$.a","b":1}}
]}"#;
    let loaded = load_str_as(src, Dialect::Auto);
    let p = loaded.valid().expect("valid");
    let comp = &p.compositions[0];
    let needs = |id: &str| -> Vec<String> {
        comp.node(id)
            .expect("node")
            .needs
            .iter()
            .map(|n| n.id.clone())
            .collect()
    };
    assert_eq!(needs("b"), ["a"]);
    assert_eq!(needs("c"), ["a"]);
    assert_eq!(needs("d"), ["b", "c", "a"]);
    assert_eq!(comp.waves.len(), 3, "b and c run in one wave");
    assert!(
        loaded.warnings().next().is_none(),
        "order-only needs are not warned about"
    );
}

#[test]
fn for_each_with_two_inner_steps_chains_fan_outs_and_collect_becomes_a_transform() {
    let y = yaml_of(
        r#"{"steps":[
  {"id":"people","tool":"search_users","args":{"query":"a"}},
  {"id":"mails","for_each":"$.people.users","as":"u","steps":[
    {"id":"d","tool":"get_user_details","args":{"user_id":"$.u.id"},"output_path":"$.email"},
    {"id":"s","tool":"send_email","args":{"to":"$.d","subject":"x","body":"y"}}
  ],"collect":"$.s.message_id"}
]}"#,
    );
    assert!(y.contains(r#"for_each: "${people.users}""#), "{y}");
    assert!(y.contains(r#""user_id": "${item.id}""#), "{y}");
    assert!(
        y.contains(r#"for_each: "${d}""#),
        "the second fans over the first: {y}"
    );
    assert!(
        y.contains(r#"- id: "mails""#),
        "the last inner step carries the block id: {y}"
    );
    assert!(y.contains(r#"transform: ".message_id""#), "{y}");
    assert!(y.contains(r#"transform: ".email""#), "{y}");
}

#[test]
fn return_input_path_and_output_path_translate() {
    let src = r#"{"steps":[
  {"id":"a","tool":"add","args":{"wrap":{"a":1,"b":"$.z"}},"input_path":"$.wrap"},
  {"id":"b","tool":"add","args":{"a":2,"b":3},"output_path":"$.sum"}
],"return":{"first":"$.a.sum","second":"$.b","k":[1,"$$.x"]}}"#;
    let errs = errors(src, Dialect::Fibe);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].2.contains("unknown step `z`"), "{errs:?}");
    let y = yaml_of(&src.replace("\"$.z\"", "5"));
    assert!(
        y.contains("\"a\": 1\n") && !y.contains("wrap"),
        "input_path narrowed args: {y}"
    );
    assert!(y.contains(r#"transform: ".sum""#), "{y}");
    assert!(y.contains(r#"(.nodes[\"a\"] | .sum)"#), "{y}");
    assert!(y.contains(r#"[(1), (\"$.x\")]"#), "{y}");
}

#[test]
fn input_path_that_lands_on_a_reference_is_reported() {
    // Fibe would narrow the resolved value; native args must be an object
    // written in the file, so the narrowed `$.a['payload']` cannot be args.
    let errs = errors(
        r#"{"steps":[{"id":"a","tool":"add","args":{"a":1,"b":2}},
  {"id":"b","tool":"add","args":{"x":"$.a"},"input_path":"$.x.payload"}]}"#,
        Dialect::Fibe,
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].2.contains("`args` must be an object"), "{errs:?}");
}

#[test]
fn idempotency_key_becomes_sha256_of_key_and_step_id_in_meta() {
    let src = r#"{"idempotency_key":"k-42","steps":[{"id":"a","tool":"echo"},{"tool":"echo"}]}"#;
    let loaded = load_str_as(src, Dialect::Fibe);
    let comp = &loaded.valid().expect("valid").compositions[0];
    let want = |id: &str| hex::encode(Sha256::digest(format!("k-42:{id}").as_bytes()));
    assert_eq!(
        comp.nodes[0].meta,
        Some(json!({"idempotencyKey": want("a")}))
    );
    assert_eq!(comp.nodes[1].id, "step_1");
    assert_eq!(
        comp.nodes[1].meta,
        Some(json!({"idempotencyKey": want("step_1")}))
    );
}

#[test]
fn spans_of_the_model_point_into_the_imported_file() {
    let src = "{\"steps\": [\n  {\"id\": \"a\", \"tool\": \"echo\"},\n\n  {\"id\": \"b\",\n   \"tool\": \"add\"}\n]}";
    let loaded = load_str_as(src, Dialect::Fibe);
    let comp = &loaded.valid().expect("valid").compositions[0];
    assert_eq!(comp.nodes[0].tool_span.start.line, 2);
    assert_eq!(comp.nodes[1].span.start.line, 4);
    assert_eq!(comp.nodes[1].tool_span.start.line, 5);
}

// Fibe's validation rules, one test each.

#[test]
fn fibe_rule_step_needs_one_of_tool_parallel_for_each() {
    one_error(
        r#"{"steps":[
  {"id":"a","args":{}}
]}"#,
        Dialect::Fibe,
        2,
        "needs one of `tool`, `parallel` or `for_each`",
    );
    one_error(
        r#"{"steps":[
  {"id":"a","tool":"echo","parallel":[{"tool":"echo"}]}
]}"#,
        Dialect::Fibe,
        2,
        "exactly one of",
    );
}

#[test]
fn fibe_rule_unknown_on_error() {
    one_error(
        r#"{"steps":[
  {"id":"a","tool":"echo",
   "on_error":"retry"}
]}"#,
        Dialect::Fibe,
        3,
        "unknown `on_error` `retry`",
    );
}

#[test]
fn fibe_rule_duplicate_ids() {
    let errs = errors(
        r#"{"steps":[
  {"id":"a","tool":"echo"},
  {"parallel":[{"id":"a","tool":"echo"}]}
]}"#,
        Dialect::Fibe,
    );
    assert!(
        errs.iter().any(|e| e.0 == 3
            && e.2
                .contains("duplicate step id `a` (first defined at line 2)")),
        "{errs:?}"
    );
}

#[test]
fn fibe_rule_parallel_member_depends_on_sibling() {
    one_error(
        r#"{"steps":[
  {"parallel":[
    {"id":"a","tool":"echo"},
    {"id":"b","tool":"echo","args":{"message":"$.a"}}
  ]}
]}"#,
        Dialect::Fibe,
        4,
        "parallel member `b` depends on its sibling `a`",
    );
}

#[test]
fn fibe_rule_nesting_deeper_than_eight() {
    let mut step = r#"{"id":"leaf","tool":"echo"}"#.to_owned();
    for _ in 0..8 {
        step = format!(r#"{{"parallel":[{step}]}}"#);
    }
    let src = format!("{{\"steps\":[\n{step}\n]}}");
    one_error(&src, Dialect::Fibe, 2, "nest deeper than 8");
    // Seven wrappers (eight levels) are fine.
    let ok = src
        .replacen(r#"{"parallel":["#, "", 1)
        .replacen("]}", "", 1);
    assert!(
        errors(&ok, Dialect::Fibe).is_empty(),
        "{:?}",
        errors(&ok, Dialect::Fibe)
    );
}

#[test]
fn fibe_rule_for_each_needs_as() {
    one_error(
        r#"{"steps":[
  {"id":"l","tool":"list_items"},
  {"id":"f","for_each":"$.l","steps":[{"id":"e","tool":"echo"}]}
]}"#,
        Dialect::Fibe,
        3,
        "`for_each` needs `as`",
    );
}

#[test]
fn fibe_rule_for_each_value_starts_with_dollar() {
    one_error(
        r#"{"steps":[
  {"id":"l","tool":"list_items"},
  {"id":"f","for_each":"l.items","as":"x","steps":[{"id":"e","tool":"echo"}]}
]}"#,
        Dialect::Fibe,
        3,
        "must be a JSONPath starting with `$`",
    );
}

#[test]
fn fibe_rule_unknown_tools_are_reported_by_the_server_at_run_time() {
    // Fibe checks tool names against its registry; pipewright has no
    // registry at load time: the demo server rejects the call (see
    // tests/imports.rs), and the file itself loads.
    assert!(
        errors(
            r#"{"steps":[{"id":"a","tool":"no_such_tool"}]}"#,
            Dialect::Fibe
        )
        .is_empty()
    );
}

#[test]
fn fibe_rule_at_least_one_step_and_no_nested_pipeline() {
    one_error(
        "{\"steps\": []}",
        Dialect::Fibe,
        1,
        "needs at least one step",
    );
    one_error(
        r#"{"steps":[
  {"id":"a","tool":"fibe_pipeline"}
]}"#,
        Dialect::Fibe,
        2,
        "nested fibe_pipeline is not allowed",
    );
}

#[test]
fn fibe_rule_more_than_25_steps_is_an_error_at_the_steps_list() {
    let steps = |n: usize| {
        let s: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"id":"s{i}","tool":"echo"}}"#))
            .collect();
        format!("{{\"steps\":[{}]}}", s.join(","))
    };
    one_error(&steps(26), Dialect::Fibe, 1, "at most 25");
    assert!(errors(&steps(25), Dialect::Fibe).is_empty());
}

#[test]
fn fibe_references_to_later_or_unknown_steps_are_errors_at_the_string() {
    let errs = errors(
        r#"{"steps":[
  {"id":"a","tool":"echo","args":{"message":"$.b.x"}},
  {"id":"b","tool":"echo","args":{"message":"$.zz"}}
]}"#,
        Dialect::Fibe,
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert_eq!((errs[0].0, errs[0].1), (2, 45));
    assert!(errs[0].2.contains("has not run at this point"), "{errs:?}");
    assert!(errs[1].2.contains("unknown step `zz`"), "{errs:?}");
}

#[test]
fn fibe_unknown_keys_get_a_suggestion() {
    let d = load_str_as(
        r#"{"steps":[{"id":"a","tool":"echo","on_eror":"continue"}]}"#,
        Dialect::Fibe,
    );
    let e = d.errors().next().expect("an error");
    assert!(e.message.contains("unknown key `on_eror`"));
    assert_eq!(e.hint.as_deref(), Some("did you mean `on_error`?"));
}

// Discord rules.

#[test]
fn discord_references_paths_and_unnamed_steps() {
    let y = yaml_of(
        r#"{"steps":[
  {"id":"find","tool":"search_users","args":{"query":"a"}},
  {"tool":"get_user_details","args":{"user_id":"{{find.users.0.id}}","same":"{{ find.users[0].id }}"},"save_as":"m"},
  {"tool":"echo","if":"m.email","args":{"message":"hi {{m.name}} on {{step_1.plan}}"},"continue_on_error":true}
]}"#,
    );
    assert!(y.contains(r#""user_id": "${find.users[0].id}""#), "{y}");
    assert!(y.contains(r#""same": "${find.users[0].id}""#), "{y}");
    assert!(
        y.contains(r#"- id: "step_1""#) && y.contains(r#"- id: "step_2""#),
        "{y}"
    );
    assert!(
        y.contains(r#""message": "hi ${step_1.name} on ${step_1.plan}""#),
        "{y}"
    );
    assert!(
        y.contains(r#"when: "[.parents[\"step_1\"] | .[\"email\"]?] | .[0] | "#),
        "{y}"
    );
    assert!(y.contains("on_error: continue"), "{y}");
}

#[test]
fn discord_if_with_and_without_braces_is_the_same() {
    let with = yaml_of(r#"{"steps":[{"id":"a","tool":"echo"},{"tool":"echo","if":"{{a.ok}}"}]}"#);
    let without = yaml_of(r#"{"steps":[{"id":"a","tool":"echo"},{"tool":"echo","if":"a.ok"}]}"#);
    assert_eq!(with, without);
}

#[test]
fn discord_rule_references_must_name_an_earlier_step() {
    let errs = errors(
        r#"{"steps":[
  {"id":"a","tool":"echo","args":{"message":"x {{b.id}}"}},
  {"id":"b","tool":"echo","args":{"message":"{{nope.id}}"}},
  {"id":"c","tool":"echo","args":{"message":"{{c.id}}"}}
]}"#,
        Dialect::Discord,
    );
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert_eq!((errs[0].0, errs[0].1), (2, 48), "at the braces: {errs:?}");
    assert!(errs[0].2.contains("runs later"));
    assert!(errs[1].2.contains("unknown step `nope`"));
    assert!(errs[2].2.contains("reads the step itself"));
}

#[test]
fn discord_rule_names_are_unique_across_ids_save_as_and_step_n() {
    let errs = errors(
        r#"{"steps":[
  {"tool":"echo"},
  {"id":"step_0","tool":"echo"},
  {"id":"x","tool":"echo","save_as":"x"}
]}"#,
        Dialect::Discord,
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs.iter().all(|e| e.2.contains("duplicate step name")),
        "{errs:?}"
    );
}

#[test]
fn discord_rule_every_step_has_a_tool_and_flags_are_booleans() {
    one_error(
        r#"{"steps":[
  {"id":"a","args":{}, "save_as":"q"}
]}"#,
        Dialect::Discord,
        2,
        "has no `tool`",
    );
    one_error(
        r#"{"steps":[
  {"id":"a","tool":"echo","continue_on_error":"yes"}
]}"#,
        Dialect::Discord,
        2,
        "must be true or false",
    );
    one_error(
        r#"{"steps":[
  {"id":"a","tool":"echo","retry":3}
]}"#,
        Dialect::Discord,
        2,
        "unknown key `retry`",
    );
}

#[test]
fn discord_rule_a_dollar_before_braces_cannot_be_expressed() {
    one_error(
        r#"{"steps":[{"id":"a","tool":"add"},
  {"tool":"echo","args":{"message":"cost ${{a.sum}}"}}
]}"#,
        Dialect::Discord,
        2,
        "a `$` right before",
    );
}

#[test]
fn a_forced_dialect_wins_over_detection() {
    // `{{…}}` is plain text to Fibe.
    let y = convert(
        r#"{"steps":[{"tool":"echo","args":{"message":"{{x}}"}}]}"#,
        Dialect::Fibe,
        FibeLimits::default(),
    )
    .expect("parses");
    assert_eq!(y.dialect, Dialect::Fibe);
    assert!(y.yaml.contains(r#""message": "{{x}}""#), "{}", y.yaml);
}

#[test]
fn jq_paths_quote_odd_keys_and_map_wildcards() {
    use crate::lang::reference::Segment::{Field, Index, Wildcard};
    assert_eq!(jq_path(&[]), ".");
    assert_eq!(jq_path(&[Field("a".into()), Index(0)]), ".a[0]");
    assert_eq!(jq_path(&[Field("odd key".into())]), r#".["odd key"]"#);
    assert_eq!(
        jq_path(&[Field("a".into()), Wildcard, Field("b".into())]),
        "[.a.[] | .b]"
    );
}

#[test]
fn fibe_parallel_of_more_than_8_is_warned_at_the_block() {
    let members: Vec<String> = (0..9)
        .map(|i| format!(r#"{{"id":"p{i}","tool":"echo"}}"#))
        .collect();
    let src = format!("{{\"steps\":[\n{{\"parallel\":[{}]}}]}}", members.join(","));
    let loaded = load_str_as(&src, Dialect::Fibe);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let w: Vec<_> = loaded.warnings().collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].span.start.line, 2);
    assert!(w[0].message.contains("at most 8"), "{w:?}");
    let eight = src.replace(r#",{"id":"p8","tool":"echo"}"#, "");
    assert_eq!(load_str_as(&eight, Dialect::Fibe).warnings().count(), 0);
}
