use proptest::prelude::*;
use rstest::rstest;
use serde_json::json;

use super::super::{PathDisplay, RESERVED_ROOTS, is_valid_node_id, location_text};
use super::*;

fn field(name: &str) -> Segment {
    Segment::Field(name.to_owned())
}

fn node(id: &str) -> Root {
    Root::Node(id.to_owned())
}

fn only_ref(s: &str) -> Reference {
    match parse_template(s) {
        Ok(t) => match t.single_ref() {
            Some(r) => r.clone(),
            None => panic!("{s:?} is not a single reference: {t:?}"),
        },
        Err(e) => panic!("{s:?} did not parse: {e}"),
    }
}

fn error_of(s: &str) -> SyntaxError {
    match parse_template(s) {
        Ok(t) => panic!("{s:?} parsed: {t:?}"),
        Err(e) => e,
    }
}

#[rstest]
#[case("")]
#[case("hello")]
#[case("$")]
#[case("a$b")]
#[case("$$")]
#[case("cost: $5 or $ 6$")]
#[case("{x}")]
#[case("}")]
#[case("$ {x}")]
#[case("{{find.users}}")]
#[case("héllo ✓ $€")]
fn literal_text_stays_as_is(#[case] s: &str) {
    let t = parse_template(s).expect("literal parses");
    assert_eq!(t.parts, vec![Part::Lit(s.to_owned())]);
    assert!(t.is_literal());
    assert_eq!(t.as_literal(), Some(s));
    assert_eq!(t.single_ref(), None);
}

#[rstest]
#[case("$${x}", "${x}")]
#[case("a $${b.c} d", "a ${b.c} d")]
#[case("$${", "${")]
#[case("$$${x}", "$${x}")]
#[case("$$$${x}", "$$${x}")]
#[case("$${}", "${}")]
#[case("$${ unterminated", "${ unterminated")]
fn dollar_dollar_brace_is_a_literal(#[case] s: &str, #[case] text: &str) {
    assert_eq!(parse_template(s), Ok(Template::literal(text)));
}

#[test]
fn escape_next_to_a_reference() {
    let t = parse_template("$${a} ${b}").expect("parses");
    assert_eq!(t.parts.len(), 2);
    assert_eq!(t.parts[0], Part::Lit("${a} ".to_owned()));
    assert!(matches!(&t.parts[1], Part::Ref(r) if r.root == node("b")));
}

#[rstest]
#[case("${find}", node("find"), vec![])]
#[case("${find.users}", node("find"), vec![field("users")])]
#[case("${find.users[0].id}", node("find"), vec![field("users"), Segment::Index(0), field("id")])]
#[case("${find.users[-1]}", node("find"), vec![field("users"), Segment::Index(-1)])]
#[case("${enrich[*].meta}", node("enrich"), vec![Segment::Wildcard, field("meta")])]
#[case("${a[*].b[*].c}", node("a"), vec![Segment::Wildcard, field("b"), Segment::Wildcard, field("c")])]
#[case(r#"${a["odd key"]}"#, node("a"), vec![field("odd key")])]
#[case("${a['odd key']}", node("a"), vec![field("odd key")])]
#[case(r#"${a["say \"hi\""]}"#, node("a"), vec![field("say \"hi\"")])]
#[case(r"${a['it\'s']}", node("a"), vec![field("it's")])]
#[case(r#"${a['back\\slash']}"#, node("a"), vec![field("back\\slash")])]
#[case(r#"${a["}]."]}"#, node("a"), vec![field("}].")])]
#[case(r#"${a[""]}"#, node("a"), vec![field("")])]
#[case("${a.0}", node("a"), vec![field("0")])]
#[case("${a.名前}", node("a"), vec![field("名前")])]
#[case("${my-node_2.x-y}", node("my-node_2"), vec![field("x-y")])]
#[case("${_a}", node("_a"), vec![])]
#[case("${items}", node("items"), vec![])]
#[case("${var_x}", node("var_x"), vec![])]
#[case("${var.USER_QUERY}", Root::Var("USER_QUERY".into()), vec![])]
#[case("${var.cfg.limit}", Root::Var("cfg".into()), vec![field("limit")])]
#[case(r#"${var["my var"][0]}"#, Root::Var("my var".into()), vec![Segment::Index(0)])]
#[case("${env.TOKEN}", Root::Env("TOKEN".into()), vec![])]
#[case("${item}", Root::Item, vec![])]
#[case("${item.name}", Root::Item, vec![field("name")])]
#[case("${item[0][*]}", Root::Item, vec![Segment::Index(0), Segment::Wildcard])]
#[case("${ find.users }", node("find"), vec![field("users")])]
#[case("${\tfind\n}", node("find"), vec![])]
#[case("${a[9223372036854775807]}", node("a"), vec![Segment::Index(i64::MAX)])]
#[case("${a[-9223372036854775808]}", node("a"), vec![Segment::Index(i64::MIN)])]
fn parses_references(#[case] s: &str, #[case] root: Root, #[case] path: Vec<Segment>) {
    let r = only_ref(s);
    assert_eq!((r.root, r.path), (root, path));
    assert_eq!((r.offset, r.len), (0, s.len()));
}

#[rstest]
#[case("${ find.users }", "${find.users}")]
#[case("${a['x']}", "${a.x}")]
#[case(r#"${a["odd key"]}"#, r#"${a["odd key"]}"#)]
#[case(r"${a['q\'s']}", r#"${a["q's"]}"#)]
#[case(r#"${a['say "hi"']}"#, r#"${a["say \"hi\""]}"#)]
#[case(r#"${a["back\\slash"]}"#, r#"${a["back\\slash"]}"#)]
#[case(r#"${var["NAME"]}"#, "${var.NAME}")]
#[case(r#"${env["A B"]}"#, r#"${env["A B"]}"#)]
#[case("${find.users[0].id}", "${find.users[0].id}")]
#[case("${x[*].y[-2]}", "${x[*].y[-2]}")]
fn displays_the_canonical_form(#[case] s: &str, #[case] canonical: &str) {
    let r = only_ref(s);
    assert_eq!(r.to_string(), canonical);
    assert_eq!(r.bare().to_string(), canonical[2..canonical.len() - 1]);
}

#[test]
fn path_display_and_locations() {
    let path = [
        field("users"),
        Segment::Index(0),
        field("odd key"),
        Segment::Wildcard,
    ];
    assert_eq!(PathDisplay(&path).to_string(), r#".users[0]["odd key"][*]"#);
    assert_eq!(location_text("args", &path[..2]), "args.users[0]");
    assert_eq!(location_text("", &path[..2]), "users[0]");
    assert_eq!(location_text("", &[Segment::Index(3)]), "[3]");
    assert_eq!(location_text("", &[]), "(the whole value)");
}

#[test]
fn references_embedded_in_text_record_their_byte_range() {
    let s = "Hi ${details.name}, é ${ c }!";
    let t = parse_template(s).expect("parses");
    assert!(!t.is_literal());
    assert_eq!(t.single_ref(), None);
    assert_eq!(t.parts.len(), 5);
    assert_eq!(t.parts[0], Part::Lit("Hi ".into()));
    assert_eq!(t.parts[2], Part::Lit(", é ".into()));
    assert_eq!(t.parts[4], Part::Lit("!".into()));
    let ranges: Vec<&str> = t.refs().map(|r| &s[r.offset..r.offset + r.len]).collect();
    assert_eq!(ranges, ["${details.name}", "${ c }"]);
}

#[test]
fn adjacent_references_have_no_empty_literals() {
    let t = parse_template("${a}${b.c}").expect("parses");
    assert_eq!(t.parts.len(), 2);
    assert_eq!(t.refs().count(), 2);
    assert_eq!(
        t.refs().filter_map(Reference::node_id).collect::<Vec<_>>(),
        ["a", "b"]
    );
}

#[test]
fn reserved_roots_and_node_ids() {
    for reserved in RESERVED_ROOTS {
        assert!(!is_valid_node_id(reserved));
    }
    assert!(is_valid_node_id("find"));
    assert!(is_valid_node_id("_x-1"));
    assert!(!is_valid_node_id("1x"));
    assert!(!is_valid_node_id(""));
    assert!(!is_valid_node_id("a.b"));
    assert_eq!(only_ref("${item}").node_id(), None);
}

#[rstest]
#[case::unterminated("${find.users", 0, 12, "unterminated reference")]
#[case::unterminated_in_text("ab ${x", 3, 3, "unterminated reference")]
#[case::unterminated_after_quote(r#"${a["}"]"#, 0, 8, "unterminated reference")]
#[case::empty("${}", 0, 3, "empty reference")]
#[case::empty_with_spaces("x ${  }", 2, 5, "empty reference")]
#[case::no_root(".. ${.x}", 5, 1, "starts with a node id")]
#[case::bracket_root("${[0]}", 2, 1, "found `[`")]
#[case::nested_braces("${{x}}", 2, 1, "found `{`")]
#[case::digit_node_id("${1abc.x}", 2, 4, "`1abc` is not a valid node id")]
#[case::unicode_node_id("${é}", 2, 2, "`é` is not a valid node id")]
#[case::dot_then_brace("${find.}", 7, 1, "expected a field name after `.`, found `}`")]
#[case::double_dot("${find..x}", 7, 1, "expected a field name after `.`")]
#[case::space_after_dot("${find. x}", 7, 1, "expected a field name after `.`")]
#[case::dot_bracket("${find.[0]}", 7, 1, "expected a field name after `.`")]
#[case::bracket_then_brace("${find[}", 6, 1, "unterminated `[`")]
#[case::unclosed_index("${find[1}", 6, 1, "unterminated `[`")]
#[case::space_in_index("${find[1 ]}", 8, 1, "expected `]`, found ` `")]
#[case::bare_word_index("${find[abc]}", 6, 5, "`[abc]` is not a valid index")]
#[case::empty_brackets("${find[]}", 6, 2, "empty brackets")]
#[case::lone_minus("${find[-]}", 6, 3, "`[-]` is not a valid index")]
#[case::float_index("${find[1.5]}", 8, 1, "expected `]`, found `.`")]
#[case::huge_index(
    "${find[99999999999999999999]}",
    7,
    20,
    "index `99999999999999999999` is too large"
)]
#[case::unterminated_quote(
    r#"${find["abc}"#,
    7,
    5,
    "unterminated quoted key: missing closing `\"`"
)]
#[case::unterminated_single_quote("${find['abc]}", 7, 6, "missing closing `'`")]
#[case::unknown_escape(r#"${find["a\nb"]}"#, 9, 2, r"unknown escape `\n`")]
#[case::quote_without_bracket(
    r#"${find"x"}"#,
    6,
    1,
    "expected `.`, `[` or `}` in the reference, found `\"`"
)]
#[case::env_without_name("${env}", 0, 5, "`env` needs a variable name")]
#[case::env_with_index(
    "${env[0]}",
    5,
    3,
    "`env` must be followed by a variable name, not `[0]`"
)]
#[case::env_with_path("${env.HOME.x}", 10, 1, "`${env.HOME}` takes no path")]
#[case::env_with_index_path("${env.A[0]}", 7, 1, "takes no path")]
#[case::var_without_name("${ var }", 0, 6, "`var` needs a variable name")]
#[case::var_with_wildcard("${var[*]}", 5, 3, "not `[*]`")]
#[case::trailing_junk("${find x}", 7, 1, "expected `}` to close the reference, found `x`")]
#[case::junk_after_path(
    "${find.users)}",
    12,
    1,
    "expected `.`, `[` or `}` in the reference, found `)`"
)]
#[case::nested_reference("${a ${b}", 4, 1, "expected `}` to close the reference, found `$`")]
fn syntax_errors_point_at_the_problem(
    #[case] s: &str,
    #[case] offset: usize,
    #[case] len: usize,
    #[case] message: &str,
) {
    let e = error_of(s);
    assert_eq!((e.offset, e.len), (offset, len), "{s:?}: {e}");
    assert!(e.to_string().contains(message), "{s:?}: {e}");
}

#[test]
fn syntax_errors_carry_hints() {
    let e = error_of("${find[name]}");
    assert_eq!(
        e.hint.as_deref(),
        Some("write `[0]`, `[-1]` or `[*]` for arrays, or `.name` or `[\"name\"]` for a key")
    );
    assert!(error_of("${}").hint.is_some());
    assert!(
        error_of("${env}")
            .hint
            .is_some_and(|h| h.contains("${env.NAME}"))
    );
    assert!(
        error_of("${find.[\"x\"]}")
            .hint
            .is_some_and(|h| h.contains("without a dot"))
    );
    let full = error_of("${find x}").to_string();
    assert!(
        full.ends_with("whitespace is only allowed right inside `${` and `}`"),
        "{full}"
    );
}

#[test]
fn every_error_in_a_string_is_reported() {
    let errors = parse_template_all("${} and ${find.} and ${ok} and ${x").expect_err("invalid");
    let spots: Vec<(usize, usize)> = errors.iter().map(|e| (e.offset, e.len)).collect();
    assert_eq!(spots, [(0, 3), (15, 1), (31, 3)]);
    assert_eq!(parse_template("${} and ${find.}"), Err(errors[0].clone()));
}

#[test]
fn collects_references_from_string_values_only() {
    let v = json!({
        "user_id": "${find.users[0].id}",
        "${not.a.template}": 1,
        "nested": { "list": ["plain", "Hi ${a} and ${var.X}", 3, null] },
        "cost": "$5",
    });
    let refs = collect_refs(&v).expect("all valid");
    let found: Vec<(String, String)> = refs
        .iter()
        .map(|l| (location_text("args", &l.at), l.value.to_string()))
        .collect();
    assert_eq!(
        found,
        [
            ("args.user_id".to_owned(), "${find.users[0].id}".to_owned()),
            ("args.nested.list[1]".to_owned(), "${a}".to_owned()),
            ("args.nested.list[1]".to_owned(), "${var.X}".to_owned()),
        ]
    );
    assert_eq!(collect_refs(&json!("${item}")).map(|r| r.len()), Ok(1));
    assert_eq!(collect_refs(&json!({"a": [1, true]})), Ok(vec![]));
}

#[test]
fn collects_every_syntax_error_with_its_location() {
    let v = json!({ "a": "${}", "b": ["ok ${x}", "${y.} ${z["], "odd key": "${env}" });
    let errors = collect_refs(&v).expect_err("invalid");
    let found: Vec<(String, usize)> = errors
        .iter()
        .map(|l| (location_text("", &l.at), l.value.offset))
        .collect();
    assert_eq!(
        found,
        [
            ("a".to_owned(), 0),
            ("b[1]".to_owned(), 4),
            ("b[1]".to_owned(), 6),
            (r#"["odd key"]"#.to_owned(), 0),
        ]
    );
}

#[rstest]
#[case("plain", "plain")]
#[case("${x}", "$${x}")]
#[case("a ${b} $${c} $", "a $${b} $$${c} $")]
fn escape_literal_escapes_every_reference_start(#[case] text: &str, #[case] escaped: &str) {
    assert_eq!(escape_literal(text), escaped);
    assert_eq!(parse_template(escaped), Ok(Template::literal(text)));
}

/// Strings made of the characters the grammar cares about, to reach deep
/// into the scanner more often than arbitrary text would.
fn grammar_soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("${"),
            Just("$"),
            Just("}"),
            Just("{"),
            Just("["),
            Just("]"),
            Just("."),
            Just("*"),
            Just("-"),
            Just("\""),
            Just("'"),
            Just("\\"),
            Just(" "),
            Just("a"),
            Just("var"),
            Just("env"),
            Just("item"),
            Just("7"),
            Just("é"),
        ],
        0..24,
    )
    .prop_map(|pieces| pieces.concat())
}

fn check_error_ranges(s: &str, errors: &[SyntaxError]) {
    assert!(!errors.is_empty());
    for e in errors {
        let end = e.offset + e.len;
        assert!(end <= s.len(), "{s:?}: {e:?}");
        assert!(
            s.is_char_boundary(e.offset) && s.is_char_boundary(end),
            "{s:?}: {e:?}"
        );
        assert!(!e.message.is_empty());
    }
}

fn check_parse(s: &str) {
    match parse_template_all(s) {
        Ok(t) => {
            for r in t.refs() {
                let source = &s[r.offset..r.offset + r.len];
                assert!(source.starts_with("${") && source.ends_with('}'), "{s:?}");
            }
            assert_eq!(parse_template(s), Ok(t));
        }
        Err(errors) => {
            check_error_ranges(s, &errors);
            assert_eq!(parse_template(s).as_ref().err(), errors.first());
        }
    }
}

/// A node id that is not reserved.
fn node_id() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_-]{0,10}".prop_filter("reserved", |id| is_valid_node_id(id))
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        "[a-z_][a-z0-9_-]{0,6}".prop_map(Segment::Field),
        any::<String>().prop_map(Segment::Field),
        any::<i64>().prop_map(Segment::Index),
        (-3i64..10).prop_map(Segment::Index),
        Just(Segment::Wildcard),
    ]
}

fn reference() -> impl Strategy<Value = Reference> {
    let path = || proptest::collection::vec(segment(), 0..5);
    prop_oneof![
        (node_id(), path()).prop_map(|(id, p)| Reference::new(Root::Node(id), p)),
        (any::<String>(), path()).prop_map(|(n, p)| Reference::new(Root::Var(n), p)),
        "[A-Z_]{1,8}".prop_map(|n| Reference::new(Root::Env(n), vec![])),
        any::<String>().prop_map(|n| Reference::new(Root::Env(n), vec![])),
        path().prop_map(|p| Reference::new(Root::Item, p)),
    ]
}

proptest! {
    #[test]
    fn no_string_makes_the_parser_panic(s in any::<String>()) {
        check_parse(&s);
    }

    #[test]
    fn no_grammar_soup_makes_the_parser_panic(s in grammar_soup()) {
        check_parse(&s);
    }

    #[test]
    fn text_without_dollar_is_one_literal(s in "[^$]*") {
        prop_assert_eq!(parse_template(&s), Ok(Template::literal(s.clone())));
    }

    #[test]
    fn displayed_references_parse_back(r in reference()) {
        let text = r.to_string();
        let parsed = only_ref(&text);
        prop_assert_eq!(&parsed.root, &r.root);
        prop_assert_eq!(&parsed.path, &r.path);
        prop_assert_eq!((parsed.offset, parsed.len), (0, text.len()));
    }

    #[test]
    fn references_embedded_in_text_parse_back(
        before in "[^$]{0,5}", r in reference(), after in "[^$]{0,5}",
    ) {
        let text = format!("{before}{r}{after}");
        let t = parse_template(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let refs: Vec<&Reference> = t.refs().collect();
        prop_assert_eq!(refs.len(), 1);
        prop_assert_eq!(&refs[0].root, &r.root);
        prop_assert_eq!(&refs[0].path, &r.path);
        prop_assert_eq!(refs[0].offset, before.len());
    }

    #[test]
    fn escaped_text_parses_to_itself(s in any::<String>()) {
        let escaped = s.replace("${", "$${");
        prop_assert_eq!(parse_template(&escaped), Ok(Template::literal(s.clone())));
    }

    #[test]
    fn escaped_grammar_soup_parses_to_itself(s in grammar_soup()) {
        prop_assert_eq!(parse_template(&escape_literal(&s)), Ok(Template::literal(s.clone())));
    }
}
