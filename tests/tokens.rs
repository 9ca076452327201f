//! pipewright's own o200k token counter against the `bpe-openai` crate
//! (itself held to tiktoken): the same count on real text and on generated
//! strings that mix scripts, digits, contractions and every kind of space.

use pipewright::engine::cost::tokens::count;
use proptest::prelude::*;

fn reference(text: &str) -> u64 {
    bpe_openai::o200k_base().count(text) as u64
}

#[test]
fn same_counts_as_bpe_openai_on_the_projects_own_text() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in [
        "docs/src",
        "docs/src/reference",
        "examples",
        "crates/engine/src/cost",
        "crates/engine/src/run",
        "crates/engine/src/mcp",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).expect("the folder exists") {
            let path = entry.expect("readable").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    let mut total = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("utf-8 text");
        assert_eq!(count(&text), reference(&text), "{}", path.display());
        for line in text.lines() {
            assert_eq!(
                count(line),
                reference(line),
                "{line:?} in {}",
                path.display()
            );
        }
        total += text.len();
    }
    assert!(total > 100_000, "only {total} bytes compared");
}

#[test]
fn same_counts_on_edge_cases() {
    let cases = [
        "",
        " ",
        "   ",
        "a   b",
        "a \t b",
        "\n\n\n",
        "  \n  x",
        "x\r\n\r\n  y  ",
        "I'LL DON'T we'd You'Re",
        "12345678901 3.14159 -42 1,000,000",
        "日本語のテキストと English mixed 🎉🎉 emoji",
        "Ünïcödé façade naïve coöperate",
        "{\"users\":[{\"id\":\"u_1\",\"email\":\"alice@example.com\"}]}",
        "\u{00a0}\u{2003}word\u{3000}\u{2028}next",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "//// ---- ==== !!!! ???? \n\n//",
        "x  ",
        "\t\tindented\n\t\tcode();\n",
    ];
    for text in cases {
        assert_eq!(count(text), reference(text), "{text:?}");
    }
    let blob: String = (0..20_000)
        .map(|i| {
            char::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/"[i * 7919 % 54])
        })
        .collect();
    assert_eq!(count(&blob), reference(&blob), "a long base64-like piece");
}

fn palette() -> impl Strategy<Value = String> {
    let parts = prop::sample::select(vec![
        " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}", "a", "Z", "word", "Word", "WORD",
        "'s", "'LL", "'re", "0", "123", "4567", ".", ",", "!?", "/", "-", "_", "\"", "{", "}", "é",
        "ß", "Ω", "日本", "語", "한국", "🎉", "👍🏽", "\u{301}", "μ", "ı", "İ", "x\u{308}",
    ]);
    prop::collection::vec(parts, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]
    #[test]
    fn same_counts_on_generated_text(text in palette()) {
        prop_assert_eq!(count(&text), reference(&text), "{:?}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]
    /// ASCII is cut by hand rather than by the pattern: every byte of it,
    /// control characters included.
    #[test]
    fn same_counts_on_any_ascii(text in "[\\x00-\\x7f]{0,60}") {
        prop_assert_eq!(count(&text), reference(&text), "{:?}", text);
    }

    /// Where ASCII meets wider characters the hand-written cut hands over.
    #[test]
    fn same_counts_where_ascii_meets_unicode(text in "[ a-zA-Z0-9'\\n\\t.,/\u{a0}\u{2000}éÉ\u{301}ſ١٢日]{0,40}") {
        prop_assert_eq!(count(&text), reference(&text), "{:?}", text);
    }
}
