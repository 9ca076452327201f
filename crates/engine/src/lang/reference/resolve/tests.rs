use std::collections::HashMap;

use rstest::rstest;
use serde_json::{Value, json};

use super::*;
use crate::lang::reference::Reference;

enum State {
    Ran(Value),
    NotRun,
    Skipped,
    Failed,
}

/// A scope over fixed outputs: `find` and `enrich` ran, `pending` has not,
/// `skip` was skipped and `boom` failed.
struct TestScope {
    nodes: Vec<(&'static str, State)>,
    vars: Map<String, Value>,
    env: HashMap<&'static str, &'static str>,
    item: Option<Value>,
}

impl TestScope {
    fn new() -> Self {
        let find = json!({
            "users": [
                { "id": "u1", "name": "Ann", "email": "ann@example.com" },
                { "id": "u2", "name": "Bob" }
            ],
            "count": 2,
            "price": 3.5,
            "ok": true,
            "none": null,
            "meta": { "a": 1, "b": [1, 2] },
            "odd key": "odd",
            "say \"hi\"": "quoted",
            "list": [],
            "empty": {},
            "wide": { "k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9 }
        });
        let enrich = json!([
            { "meta": "first", "tags": [{ "t": "x" }, { "t": "y" }] },
            { "meta": "second", "tags": [] },
            { "meta": "third", "tags": [{ "t": "z" }] }
        ]);
        let mut vars = Map::new();
        vars.insert("USER_QUERY".into(), json!("alice"));
        vars.insert("cfg".into(), json!({ "limit": 5 }));
        Self {
            nodes: vec![
                ("find", State::Ran(find)),
                ("enrich", State::Ran(enrich)),
                ("pending", State::NotRun),
                ("skip", State::Skipped),
                ("boom", State::Failed),
            ],
            vars,
            env: HashMap::from([("TOKEN", "s3cret")]),
            item: None,
        }
    }

    fn with_item(mut self, item: Value) -> Self {
        self.item = Some(item);
        self
    }
}

impl Scope for TestScope {
    fn node(&self, id: &str) -> NodeLookup<'_> {
        match self.nodes.iter().find(|(n, _)| *n == id) {
            Some((_, State::Ran(v))) => NodeLookup::Output(v),
            Some((_, State::NotRun)) => NodeLookup::NotRun,
            Some((_, State::Skipped)) => NodeLookup::Skipped,
            Some((_, State::Failed)) => NodeLookup::Failed,
            None => NodeLookup::Unknown,
        }
    }

    fn var(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }

    fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).map(|v| (*v).to_owned())
    }

    fn item(&self) -> Option<&Value> {
        self.item.as_ref()
    }

    fn node_ids(&self) -> Vec<&str> {
        self.nodes.iter().map(|(n, _)| *n).collect()
    }

    fn var_names(&self) -> Vec<&str> {
        self.vars.keys().map(String::as_str).collect()
    }
}

fn resolve_str(s: &str, scope: &TestScope) -> Result<Value, ResolveError> {
    resolve_value(&Value::String(s.to_owned()), scope)
}

fn resolved(s: &str) -> Value {
    match resolve_str(s, &TestScope::new()) {
        Ok(v) => v,
        Err(e) => panic!("{s:?}: {e}"),
    }
}

fn failure(s: &str) -> ResolveError {
    match resolve_str(s, &TestScope::new()) {
        Ok(v) => panic!("{s:?} resolved to {v}"),
        Err(e) => e,
    }
}

#[rstest]
#[case::array("${find.users[*].id}", json!(["u1", "u2"]))]
#[case::object("${find.meta}", json!({ "a": 1, "b": [1, 2] }))]
#[case::integer("${find.count}", json!(2))]
#[case::float("${find.price}", json!(3.5))]
#[case::boolean("${find.ok}", json!(true))]
#[case::null("${find.none}", Value::Null)]
#[case::string("${find.users[0].name}", json!("Ann"))]
#[case::var_object("${var.cfg}", json!({ "limit": 5 }))]
#[case::var_path("${var.cfg.limit}", json!(5))]
#[case::env("${env.TOKEN}", json!("s3cret"))]
#[case::inner_whitespace("${ find.count }", json!(2))]
fn a_whole_string_reference_keeps_the_json_type(#[case] s: &str, #[case] expected: Value) {
    assert_eq!(resolved(s), expected);
}

#[rstest]
#[case::integer("n=${find.count}", "n=2")]
#[case::float("p=${find.price}", "p=3.5")]
#[case::boolean("${find.ok}!", "true!")]
#[case::null("x ${find.none}", "x null")]
#[case::object("m=${find.meta}", r#"m={"a":1,"b":[1,2]}"#)]
#[case::array("l=${find.meta.b}", "l=[1,2]")]
#[case::string("Hi ${find.users[0].name}", "Hi Ann")]
#[case::outer_whitespace(" ${find.count}", " 2")]
#[case::several(
    "${find.users[0].name} <${find.users[0].email}> #${find.count}",
    "Ann <ann@example.com> #2"
)]
#[case::adjacent("${find.count}${find.ok}", "2true")]
#[case::escaped("$${find.count} costs $5", "${find.count} costs $5")]
#[case::escaped_after_dollar("$$${find.count}", "$${find.count}")]
#[case::lone_dollar("$ ${var.USER_QUERY} $", "$ alice $")]
fn a_reference_in_text_interpolates(#[case] s: &str, #[case] expected: &str) {
    assert_eq!(resolved(s), json!(expected));
}

#[rstest]
#[case(r#"${find["odd key"]}"#, json!("odd"))]
#[case(r#"${find['say "hi"']}"#, json!("quoted"))]
#[case(r#"${find["say \"hi\""]}"#, json!("quoted"))]
#[case("${find.users[-1].id}", json!("u2"))]
#[case("${find.users[-2].id}", json!("u1"))]
#[case("${find.users[1].id}", json!("u2"))]
fn quoted_keys_and_indexes(#[case] s: &str, #[case] expected: Value) {
    assert_eq!(resolved(s), expected);
}

#[rstest]
#[case::maps_a_field("${enrich[*].meta}", json!(["first", "second", "third"]))]
#[case::bare_is_identity("${find.users[*]}", json!([
    { "id": "u1", "name": "Ann", "email": "ann@example.com" },
    { "id": "u2", "name": "Bob" }
]))]
#[case::nested_keeps_levels("${enrich[*].tags[*].t}", json!([["x", "y"], [], ["z"]]))]
#[case::index_then_wildcard("${enrich[-1].tags[*].t}", json!(["z"]))]
#[case::wildcard_then_index("${enrich[*].tags}", json!([[{ "t": "x" }, { "t": "y" }], [], [{ "t": "z" }]]))]
#[case::empty_array("${find.list[*]}", json!([]))]
#[case::empty_array_path("${find.list[*].x}", json!([]))]
#[case::in_text("ids: ${find.users[*].id}", json!(r#"ids: ["u1","u2"]"#))]
fn wildcards_map_over_arrays(#[case] s: &str, #[case] expected: Value) {
    assert_eq!(resolved(s), expected);
}

#[test]
fn a_trailing_wildcard_borrows_the_list_instead_of_copying_its_items() {
    let scope = TestScope::new();
    let r = Reference::new(
        Root::Node("find".into()),
        vec![Segment::Field("users".into()), Segment::Wildcard],
    );
    let got = resolve_reference_shared(&r, &scope);
    assert!(matches!(got, Ok(Cow::Borrowed(_))), "{got:?}");
    assert_eq!(got.map(Cow::into_owned), Ok(resolved("${find.users}")));
    // With a path after it, each item is walked and a new list built.
    let r = Reference::new(
        Root::Node("find".into()),
        vec![
            Segment::Field("users".into()),
            Segment::Wildcard,
            Segment::Field("id".into()),
        ],
    );
    assert!(matches!(
        resolve_reference_shared(&r, &scope),
        Ok(Cow::Owned(_))
    ));
}

#[test]
fn wildcard_then_index_is_per_element() {
    assert_eq!(
        resolved("${enrich[*].meta}"),
        json!(["first", "second", "third"])
    );
    // Each element's `.t` is a string, so `[0]` on it fails, naming the element.
    let e = failure("${enrich[*].tags[*].t[0]}");
    assert_eq!(
        e.to_string(),
        "`${enrich[*].tags[*].t[0]}`: cannot take index `[0]`: `enrich[0].tags[0].t` is a string, not an array"
    );
}

#[test]
fn item_resolves_inside_a_for_each() {
    let scope = TestScope::new().with_item(json!({ "name": "mcptest", "n": [7] }));
    assert_eq!(resolve_str("${item.name}", &scope), Ok(json!("mcptest")));
    assert_eq!(resolve_str("${item.n[0]}", &scope), Ok(json!(7)));
    assert_eq!(
        resolve_str("${item}", &scope),
        Ok(json!({ "name": "mcptest", "n": [7] }))
    );
    assert_eq!(
        resolve_str("pkg ${item.name}", &scope),
        Ok(json!("pkg mcptest"))
    );
}

#[test]
fn resolves_every_string_in_a_value_but_never_keys() {
    let args = json!({
        "${find.count}": "${find.count}",
        "list": ["${find.ok}", 1, null, { "b": "x ${find.count}" }],
        "plain": "no refs",
    });
    assert_eq!(
        resolve_value(&args, &TestScope::new()),
        Ok(json!({
            "${find.count}": 2,
            "list": [true, 1, null, { "b": "x 2" }],
            "plain": "no refs",
        }))
    );
}

#[test]
fn resolves_parsed_templates_and_single_references() {
    let scope = TestScope::new();
    let t = parse_template("${find.users}").expect("parses");
    assert_eq!(
        resolve_template(&t, &scope).map(|v| v.as_array().map(Vec::len)),
        Ok(Some(2))
    );
    let r = Reference::new(
        Root::Node("find".into()),
        vec![Segment::Field("count".into())],
    );
    assert_eq!(resolve_reference(&r, &scope), Ok(json!(2)));
    assert_eq!(
        resolve_template(&Template::literal("${x}"), &scope),
        Ok(json!("${x}"))
    );
}

#[rstest]
#[case::undefined_var(
    "${var.NOPE}",
    "`${var.NOPE}` is not defined; pass it with --var NOPE=... or give it a default under `vars:`"
)]
#[case::undefined_var_typo(
    "${var.USER_QUERI}",
    "`${var.USER_QUERI}` is not defined (did you mean `USER_QUERY`?); pass it with --var USER_QUERI=... or give it a default under `vars:`"
)]
#[case::undefined_var_with_path(
    "${var.NOPE.x}",
    "`${var.NOPE.x}`: `var.NOPE` is not defined; pass it with --var NOPE=... or give it a default under `vars:`"
)]
#[case::unset_env(
    "${env.MISSING}",
    "`${env.MISSING}`: the environment variable `MISSING` is not set"
)]
#[case::not_run("${pending.x}", "`${pending.x}`: node `pending` has not run yet")]
#[case::skipped("${skip}", "`${skip}`: node `skip` was skipped, so it has no output")]
#[case::failed("${boom.a}", "`${boom.a}`: node `boom` failed, so it has no output")]
#[case::unknown_typo(
    "${fnd.users}",
    "`${fnd.users}`: there is no node `fnd`; did you mean `find`?"
)]
#[case::unknown("${zzz}", "`${zzz}`: there is no node `zzz`")]
#[case::item_outside(
    "${item.name}",
    "`${item.name}`: `item` only exists in the args of a node with `for_each`"
)]
#[case::missing_field(
    "${find.users[0].nme}",
    "`${find.users[0].nme}`: `find.users[0]` has no field `nme` (its fields are `id`, `name`, `email`); did you mean `name`?"
)]
#[case::missing_field_no_suggestion(
    "${find.meta.zzz}",
    "`${find.meta.zzz}`: `find.meta` has no field `zzz` (its fields are `a`, `b`)"
)]
#[case::missing_field_many_keys(
    "${find.wide.k}",
    "`${find.wide.k}`: `find.wide` has no field `k` (its fields are `k0`, `k1`, `k2`, `k3`, `k4`, `k5`, `k6`, `k7` and 2 more); did you mean `k0`?"
)]
#[case::missing_field_empty_object(
    "${find.empty.x}",
    "`${find.empty.x}`: `find.empty` has no field `x` (it is an empty object)"
)]
#[case::missing_quoted_field(
    r#"${find["odd  key"]}"#,
    r#"`${find["odd  key"]}`: `find` has no field `odd  key` (its fields are `users`, `count`, `price`, `ok`, `none`, `meta`, `odd key`, `say "hi"` and 3 more); did you mean `odd key`?"#
)]
#[case::index_out_of_range(
    "${find.users[5].id}",
    "`${find.users[5].id}`: index 5 is out of range: `find.users` has 2 elements"
)]
#[case::negative_out_of_range(
    "${find.users[-3]}",
    "`${find.users[-3]}`: index -3 is out of range: `find.users` has 2 elements"
)]
#[case::one_element(
    "${find.meta.b[2]}",
    "`${find.meta.b[2]}`: index 2 is out of range: `find.meta.b` has 2 elements"
)]
#[case::empty_array(
    "${find.list[0]}",
    "`${find.list[0]}`: index 0 is out of range: `find.list` is an empty array"
)]
#[case::field_of_array(
    "${find.users.0}",
    "`${find.users.0}`: cannot read field `0`: `find.users` is an array, not an object; write `[0]` to index an array"
)]
#[case::field_of_number(
    "${find.count.x}",
    "`${find.count.x}`: cannot read field `x`: `find.count` is a number, not an object"
)]
#[case::field_of_string(
    "${find.users[0].id.x}",
    "`${find.users[0].id.x}`: cannot read field `x`: `find.users[0].id` is a string, not an object"
)]
#[case::field_of_null(
    "${find.none.x}",
    "`${find.none.x}`: cannot read field `x`: `find.none` is null, not an object"
)]
#[case::index_of_object(
    "${find.meta[0]}",
    "`${find.meta[0]}`: cannot take index `[0]`: `find.meta` is an object, not an array"
)]
#[case::index_of_boolean(
    "${find.ok[-1]}",
    "`${find.ok[-1]}`: cannot take index `[-1]`: `find.ok` is a boolean, not an array"
)]
#[case::wildcard_on_null(
    "${find.none[*]}",
    "`${find.none[*]}`: `[*]` needs an array, but `find.none` is null"
)]
#[case::wildcard_on_object(
    "${find[*]}",
    "`${find[*]}`: `[*]` needs an array, but `find` is an object"
)]
#[case::inside_wildcard(
    "${enrich[*].tags[0].t}",
    "`${enrich[*].tags[0].t}`: index 0 is out of range: `enrich[1].tags` is an empty array"
)]
#[case::var_path(
    "${var.cfg.limit.x}",
    "`${var.cfg.limit.x}`: cannot read field `x`: `var.cfg.limit` is a number, not an object"
)]
#[case::embedded(
    "Hi ${find.users[9].name}!",
    "`${find.users[9].name}`: index 9 is out of range: `find.users` has 2 elements"
)]
#[case::canonical_form(
    "${ find['meta'].zzz }",
    "`${find.meta.zzz}`: `find.meta` has no field `zzz` (its fields are `a`, `b`)"
)]
fn resolve_errors_name_the_reference(#[case] s: &str, #[case] message: &str) {
    assert_eq!(failure(s).to_string(), message);
}

#[test]
fn resolve_errors_are_typed() {
    assert!(matches!(
        failure("${find.users[0].nme}"),
        ResolveError::Path { base, error, .. }
            if base == "find"
                && matches!(&error.kind, PathErrorKind::MissingField { suggestion: Some(s), .. } if s == "name")
    ));
    assert!(matches!(
        failure("${find.list[0]}"),
        ResolveError::Path { error, .. }
            if error.kind == PathErrorKind::IndexOutOfRange { index: 0, len: 0 }
    ));
    assert_eq!(failure("${pending}").reference(), Some("${pending}"));
    assert_eq!(
        failure("${var.NOPE}"),
        ResolveError::UndefinedVar {
            reference: "${var.NOPE}".into(),
            name: "NOPE".into(),
            suggestion: None
        }
    );
}

#[test]
fn syntax_errors_found_while_resolving_say_where() {
    let args = json!({ "a": { "b": ["ok", "${find.count"] } });
    let e = resolve_value(&args, &TestScope::new()).expect_err("invalid");
    assert!(matches!(&e, ResolveError::Syntax { error, .. } if error.offset == 0));
    assert_eq!(e.reference(), None);
    assert_eq!(
        e.to_string(),
        "invalid template in `a.b[1]`: unterminated reference: `${` is never closed by `}`"
    );
    assert_eq!(
        failure("${}").to_string(),
        "invalid template: empty reference `${}`; write a node id, `var.NAME`, `env.NAME` or `item` inside"
    );
}

#[test]
fn resolve_path_works_on_any_value() {
    let v = json!({ "users": [{ "id": 1 }, { "id": 2 }] });
    let path = [
        Segment::Field("users".into()),
        Segment::Wildcard,
        Segment::Field("id".into()),
    ];
    assert_eq!(resolve_path(&v, &path), Ok(json!([1, 2])));
    assert_eq!(resolve_path(&v, &[]), Ok(v.clone()));
    let e = resolve_path(
        &v,
        &[
            Segment::Field("users".into()),
            Segment::Index(0),
            Segment::Field("x".into()),
        ],
    )
    .expect_err("no field x");
    assert_eq!(
        e.to_string(),
        "`.users[0]` has no field `x` (its fields are `id`)"
    );
    assert_eq!(
        e.describe("out"),
        "`out.users[0]` has no field `x` (its fields are `id`)"
    );
    let e = resolve_path(&json!(3), &[Segment::Wildcard]).expect_err("not an array");
    assert_eq!(
        e.to_string(),
        "`[*]` needs an array, but the value is a number"
    );
}

#[test]
fn partial_resolution_leaves_placeholders_for_what_has_not_run() {
    let args = json!({
        "q": "${var.USER_QUERY}",
        "id": "${pending.users[0].id}",
        "msg": "Hi ${pending.name}, n=${find.count}",
        "users": "${find.users[*].id}",
        "it": "${item.name}",
        "bad": "${var.NOPE}",
        "broken": ["${x"],
    });
    let p = resolve_value_partial(&args, &TestScope::new());
    assert_eq!(
        p.value,
        json!({
            "q": "alice",
            "id": "<from pending.users[0].id>",
            "msg": "Hi <from pending.name>, n=2",
            "users": ["u1", "u2"],
            "it": "<from item.name>",
            "bad": "${var.NOPE}",
            "broken": ["${x"],
        })
    );
    assert_eq!(p.pending, 3);
    assert!(!p.is_complete());
    let messages: Vec<String> = p.errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].starts_with("`${var.NOPE}` is not defined"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("invalid template in `broken[0]`"),
        "{messages:?}"
    );
}

#[test]
fn partial_resolution_never_shows_environment_values() {
    let args =
        json!({ "auth": "Bearer ${env.TOKEN}", "token": "${env.TOKEN}", "x": "${env.UNSET}" });
    let p = resolve_value_partial(&args, &TestScope::new());
    assert_eq!(
        p.value,
        json!({ "auth": "Bearer <env.TOKEN>", "token": "<env.TOKEN>", "x": "${env.UNSET}" })
    );
    assert!(!p.value.to_string().contains("s3cret"));
    assert_eq!(p.pending, 0);
    assert!(
        matches!(p.errors.as_slice(), [ResolveError::UnsetEnv { name, .. }] if name == "UNSET")
    );
}

#[test]
fn partial_resolution_of_resolvable_values_is_complete() {
    let scope = TestScope::new();
    let args = json!({ "n": "${find.count}", "t": "${find.users[0].name}!", "k": [1, "$5"] });
    let p = resolve_value_partial(&args, &scope);
    assert!(p.is_complete());
    assert_eq!(Ok(p.value), resolve_value(&args, &scope));
    let t = parse_template("${skip.x} ${pending}").expect("parses");
    let p = resolve_template_partial(&t, &scope);
    assert_eq!(p.value, json!("${skip.x} <from pending>"));
    assert_eq!((p.pending, p.errors.len()), (1, 1));
}

#[rstest]
#[case(json!(null), JsonType::Null, "null")]
#[case(json!(false), JsonType::Bool, "a boolean")]
#[case(json!(1), JsonType::Number, "a number")]
#[case(json!("s"), JsonType::String, "a string")]
#[case(json!([]), JsonType::Array, "an array")]
#[case(json!({}), JsonType::Object, "an object")]
fn json_types_read_as_words(#[case] v: Value, #[case] ty: JsonType, #[case] text: &str) {
    assert_eq!(JsonType::of(&v), ty);
    assert_eq!(ty.to_string(), text);
}
