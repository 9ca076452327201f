use proptest::prelude::*;
use rstest::rstest;
use serde_json::{Value, json};

use super::*;
use crate::record::draft::Rule;
use crate::record::testing::{Script, result_of, text_result, tool};

/// One call before and one after: `(tool, args, structured output)`.
type Exchange = (&'static str, Value, Value);

fn inferred(calls: &[Exchange]) -> Inferred {
    let mut s = Script::new(
        "2025-11-25",
        vec![
            tool("search_users", json!({"query": {"type": "string"}})),
            tool(
                "pick",
                json!({"mode": {"type": "string", "enum": ["fast", "slow"]}}),
            ),
        ],
    );
    for (t, args, out) in calls {
        match out {
            Value::String(text) => s.call_raw(t, args.clone(), text_result(text)),
            Value::Array(blocks) => s.call_raw(t, args.clone(), json!({"content": blocks})),
            other => s.call(t, args.clone(), other.clone()),
        }
    }
    session(&s.recording(), 0)
}

/// The inferred references: `(step, argument, rule, written)`.
fn refs(i: &Inferred) -> Vec<(String, String, &'static str, String)> {
    let d = crate::record::draft::Draft {
        steps: i.steps.clone(),
        ..Default::default()
    };
    d.references()
        .into_iter()
        .map(|(s, a, r, t)| (s, a, r.name(), t))
        .collect()
}

fn users(ids: &[(&str, &str)]) -> Value {
    let users: Vec<Value> = ids
        .iter()
        .map(|(id, name)| json!({"id": id, "name": name, "email": format!("{}@example.com", name.to_lowercase())}))
        .collect();
    json!({"users": users, "count": ids.len()})
}

#[rstest]
#[case::exact(
    vec![("search_users", json!({"query": "alice"}), users(&[("u1", "Alice")])),
         ("get_user", json!({"user_id": "u1"}), json!({"ok": true}))],
    ("get_user", "user_id", "exact", "${search_users.users[0].id}"))]
#[case::item_field_first(
    vec![("search_users", json!({"query": "al"}), users(&[("u1", "Alice"), ("u5", "Alicia")])),
         ("get_user", json!({"user_id": "u1"}), json!({"ok": true}))],
    ("get_user", "user_id", "item-field", "${search_users.users[0].id}"))]
#[case::item_field_last(
    vec![("search_users", json!({"query": "al"}), users(&[("u1", "Alice"), ("u3", "Carol"), ("u5", "Alicia")])),
         ("get_user", json!({"user_id": "u5"}), json!({"ok": true}))],
    ("get_user", "user_id", "item-field", "${search_users.users[-1].id}"))]
#[case::item_field_select(
    vec![("search_users", json!({"query": "al"}), users(&[("u1", "Alice"), ("u3", "Carol"), ("u5", "Alicia")])),
         ("get_user", json!({"user_id": "u3"}), json!({"ok": true}))],
    ("get_user", "user_id", "item-field", "${search_users.derived.user_id}"))]
#[case::case(
    vec![("profile", json!({}), json!({"email": "Ada.Lovelace@Example.com"})),
         ("send", json!({"to": "ada.lovelace@example.com"}), json!({"ok": true}))],
    ("send", "to", "case", "${profile.derived.to}"))]
#[case::url_encoded(
    vec![("profile", json!({}), json!({"name": "Ada Lovelace & Co"})),
         ("fetch", json!({"path": "Ada%20Lovelace%20%26%20Co"}), json!({"ok": true}))],
    ("fetch", "path", "url-encoded", "${profile.derived.path}"))]
#[case::embedded(
    vec![("create", json!({}), json!({"id": "usr_8f2a91"})),
         ("fetch", json!({"path": "users/usr_8f2a91/profile"}), json!({"ok": true}))],
    ("fetch", "path", "embedded", "users/${create.id}/profile"))]
#[case::in_text(
    vec![("file", json!({}), json!("Filed your report as ISSUE-4821, thanks.")),
         ("get_issue", json!({"key": "ISSUE-4821"}), json!({"ok": true}))],
    ("get_issue", "key", "in-text", "${file.derived.key}"))]
#[case::in_json_text(
    vec![("create", json!({}), json!([{"type": "text", "text": "Created."}, {"type": "text", "text": "{\"ticket\": \"TCK-99812\"}"}])),
         ("close", json!({"ticket": "TCK-99812"}), json!({"ok": true}))],
    ("close", "ticket", "exact", "${create.derived.ticket}"))]
#[case::length(
    vec![("list", json!({}), json!({"items": [1, 2, 3, 4, 5]})),
         ("page", json!({"count": 5}), json!({"ok": true}))],
    ("page", "count", "length", "${list.derived.count}"))]
#[case::same_input(
    vec![("search_users", json!({"query": "alice"}), json!({"users": []})),
         ("log", json!({"note": "alice"}), json!({"ok": true}))],
    ("log", "note", "same-input", "${var.QUERY}"))]
fn each_rule_finds_its_source(
    #[case] calls: Vec<Exchange>,
    #[case] want: (&str, &str, &str, &str),
) {
    let i = inferred(&calls);
    let got = refs(&i);
    let want = (
        want.0.to_owned(),
        want.1.to_owned(),
        want.2,
        want.3.to_owned(),
    );
    assert!(got.contains(&want), "{got:#?}");
}

#[test]
fn derived_values_are_jq_the_source_step_adds_and_text_outputs_are_wrapped() {
    let i = inferred(&[
        (
            "file",
            json!({}),
            json!("Filed your report as ISSUE-4821, thanks."),
        ),
        (
            "get_issue",
            json!({"key": "ISSUE-4821"}),
            json!({"ok": true}),
        ),
    ]);
    let file = &i.steps[0];
    assert!(file.wrapped);
    assert_eq!(file.derived.len(), 1);
    assert_eq!(file.derived[0].rule, Rule::InText);
    let program = JqProgram::compile(&file.derived[0].expr).unwrap();
    assert_eq!(
        program
            .run_one(&json!("Filed your report as ISSUE-4821, thanks."))
            .unwrap(),
        json!("ISSUE-4821")
    );
    let i = inferred(&[
        (
            "search_users",
            json!({"query": "al"}),
            users(&[("u1", "Alice"), ("u3", "Carol"), ("u5", "Alicia")]),
        ),
        ("get_user", json!({"user_id": "u3"}), json!({"ok": true})),
    ]);
    assert!(!i.steps[0].wrapped);
    assert_eq!(
        i.steps[0].derived[0].expr,
        "first(.users[] | select(.name == \"Carol\")) | .id"
    );
}

#[test]
fn what_has_no_source_becomes_an_input_a_literal_or_a_flag() {
    let i = inferred(&[
        (
            "search_users",
            json!({"query": "alice", "limit": 5, "exact": true}),
            users(&[("u1", "Alice")]),
        ),
        (
            "get_user",
            json!({"user_id": "u9", "note": "alice"}),
            json!({"ok": true}),
        ),
        (
            "pick",
            json!({"mode": "fast", "query": "bob"}),
            json!({"ok": true}),
        ),
    ]);
    let choices: Vec<(String, &Choice)> = i
        .steps
        .iter()
        .flat_map(|s| {
            s.leaves.iter().map(move |l| {
                (
                    format!("{}.{}", s.id, crate::record::draft::arg_path(&l.path)),
                    &l.choice,
                )
            })
        })
        .collect();
    let of = |k: &str| {
        choices
            .iter()
            .find(|(p, _)| p == k)
            .map(|(_, c)| *c)
            .unwrap()
    };
    assert!(matches!(of("search_users.query"), Choice::Input { var, .. } if var == "QUERY"));
    assert_eq!(of("search_users.limit"), &Choice::Literal);
    assert_eq!(of("search_users.exact"), &Choice::Literal);
    assert_eq!(of("get_user.user_id"), &Choice::Flagged);
    assert!(matches!(
        of("get_user.note"),
        Choice::Inferred {
            rule: Rule::SameInput,
            ..
        }
    ));
    assert_eq!(of("pick.mode"), &Choice::Literal);
    assert!(matches!(of("pick.query"), Choice::Input { var, .. } if var == "QUERY_2"));
    assert_eq!(i.vars["QUERY"].value, json!("alice"));
    assert_eq!(i.vars["QUERY"].from, "search_users.query");
    assert_eq!(i.vars["QUERY_2"].value, json!("bob"));
}

#[test]
fn coincidences_are_not_inferred() {
    let i = inferred(&[
        (
            "a",
            json!({}),
            json!({"flag": "x", "n": 1, "code": "ab", "limit": 7}),
        ),
        (
            "b",
            json!({"letter": "x", "page": 1, "word": "ab", "size": 7}),
            json!({"ok": true}),
        ),
    ]);
    assert!(refs(&i).is_empty(), "{:?}", refs(&i));
}

#[test]
fn calls_over_an_earlier_array_become_one_fan_out() {
    let i = inferred(&[
        (
            "search_users",
            json!({"query": "a"}),
            users(&[("u1", "Ann"), ("u2", "Abe")]),
        ),
        (
            "get_user",
            json!({"user_id": "u1"}),
            json!({"id": "u1", "email": "ann@example.com"}),
        ),
        (
            "get_user",
            json!({"user_id": "u2"}),
            json!({"id": "u2", "email": "abe@example.com"}),
        ),
        (
            "send",
            json!({"to": "abe@example.com"}),
            json!({"ok": true}),
        ),
    ]);
    assert_eq!(i.steps.len(), 3);
    let fan = &i.steps[1];
    assert_eq!(fan.calls.len(), 2);
    let d = crate::record::draft::Draft {
        steps: i.steps.clone(),
        ..Default::default()
    };
    assert_eq!(
        fan.for_each
            .as_ref()
            .unwrap()
            .render(&d.ids(), &d.wrapped()),
        "${search_users.users}"
    );
    assert_eq!(
        fan.leaves[0].choice,
        Choice::Item(vec![Segment::Field("id".into())])
    );
    let got = refs(&i);
    assert!(
        got.contains(&(
            "send".into(),
            "to".into(),
            "exact",
            "${get_user[1].email}".into()
        )),
        "{got:?}"
    );
}

#[test]
fn answers_and_tasks_come_with_their_step_and_failed_calls_are_left_out() {
    let mut s = Script::new("2026-07-28", Vec::new());
    s.call_input_required(
        "confirm_send",
        json!({"to": "ada@example.com"}),
        json!({"answer": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}}),
        json!({"answer": {"action": "accept", "content": {"send": true}}}),
        result_of(json!({"action": "accept"})),
    );
    s.call_raw(
        "get_user",
        json!({"user_id": "nope"}),
        json!({"content": [{"type": "text", "text": "no such user\nat all"}], "isError": true}),
    );
    s.call_task(
        "research",
        json!({"q": "rust"}),
        1,
        result_of(json!({"answer": 42})),
    );
    let i = session(&s.recording(), 0);
    assert_eq!(i.steps.len(), 2);
    assert_eq!(
        i.steps[0].answers,
        [Answer::Accept(json!({"send": true}).as_object().cloned())]
    );
    assert!(i.steps[1].task);
    assert_eq!(i.left_out.len(), 1);
    assert!(
        i.left_out[0].contains("`get_user` failed (no such user); left out"),
        "{:?}",
        i.left_out
    );
}

#[rstest]
#[case(json!({"a": 1, "id": "usr_123456", "tags": ["x"], "m": {}}), vec![
    ("output.a", json!({"exact": 1})),
    ("output.id", json!({"type": "string"})),
    ("output.tags", json!({"length": 1})),
    ("output.m", json!({"type": "object"})),
])]
#[case(json!("done"), vec![("output", json!({"exact": "done"}))])]
#[case(json!([1, 2]), vec![("output", json!({"length": 2}))])]
fn expectations_follow_the_recorded_output(#[case] out: Value, #[case] want: Vec<(&str, Value)>) {
    let got = expect_of(&out);
    let want: Vec<(String, Value)> = want.into_iter().map(|(t, m)| (t.to_owned(), m)).collect();
    assert_eq!(got, want);
}

fn small_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..2000).prop_map(Value::from),
        "[a-zA-Z0-9 _%@./{}\\[\\]\"-]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// No recorded values panic inference.
    #[test]
    fn no_calls_panic_inference(calls in prop::collection::vec(
        (prop_oneof![Just("a"), Just("b")], small_json(), small_json()), 0..6)
    ) {
        let mut s = Script::new("2025-11-25", Vec::new());
        for (t, args, out) in calls {
            let args = if args.is_object() { args } else { json!({"v": args}) };
            match out {
                Value::String(text) => s.call_raw(t, args, text_result(&text)),
                other => s.call(t, args, other),
            }
        }
        let _ = session(&s.recording(), 0);
    }
}
