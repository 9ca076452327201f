//! The pipeline loader never panics on a broken file (issue 25's sweep).
//! Every example file, and every pipeline text the fidelity and diagnostics
//! tests hold, is mutated (byte ranges deleted, duplicated and swapped,
//! YAML-significant characters and tokens inserted, the text truncated,
//! lines re-indented, deep nesting and huge numbers inserted) and loaded
//! the way `check` loads it, in every dialect. Whatever comes in, every
//! diagnostic has a position inside the text and reads as a sentence, not
//! a Debug dump; a smaller number of cases go through the `pipewright
//! check` binary itself. The cases and the random generator are fixed, so
//! a run in CI is the run on your machine.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use regex::Regex;

use pipewright::engine::diag::Diagnostic;
use pipewright::engine::file::import::Dialect;
use pipewright::engine::file::open::load_str_as;

mod common;

/// Cases loaded in-process, and through the binary; `PIPEWRIGHT_FUZZ_CASES`
/// multiplies both for a longer hunt by hand (CI runs the fixed numbers).
const LIBRARY_CASES: u32 = 2000;
const BINARY_CASES: u32 = 200;

fn cases(base: u32) -> u32 {
    std::env::var("PIPEWRIGHT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(base, |times| base.saturating_mul(times.max(1)))
}

// --- the seeds ---

/// Every file under `examples/`.
fn example_files() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(common::root().join("examples"))
        .expect("examples/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("read")))
        .collect();
    out.sort();
    out
}

/// The pipeline texts written inside a test source file: raw strings, and
/// plain strings that hold a top-level pipeline key.
fn texts_in(path: &Path) -> Vec<(String, Vec<u8>)> {
    let src = std::fs::read_to_string(path).expect("read a test file");
    let raw = Regex::new(r##"(?s)r#"(.*?)"#"##).expect("regex");
    let plain = Regex::new(r#""((?:[^"\\]|\\.)*)""#).expect("regex");
    let mut out = Vec::new();
    for c in raw.captures_iter(&src) {
        out.push(c[1].to_owned());
    }
    for c in plain.captures_iter(&src) {
        let t = unescape(&c[1]);
        if ["pipe:", "compositions:", "\"steps\"", "servers:"]
            .iter()
            .any(|k| t.contains(k))
        {
            out.push(t);
        }
    }
    out.into_iter()
        .filter(|t| t.len() > 10)
        .enumerate()
        .map(|(i, t)| (format!("{}#{i}", path.display()), t.into_bytes()))
        .collect()
}

/// A Rust string literal's text with its common escapes undone.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The seed corpus: examples, the fidelity tests' reference-system
/// files, and the diagnostics tests' broken files.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = example_files();
    let tests = common::root().join("tests");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(tests.join("fidelity"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    sources.sort();
    sources.push(tests.join("diagnostics.rs"));
    for s in sources {
        out.extend(texts_in(&s));
    }
    out
}

// --- the mutations ---

/// Single characters and tokens that mean something to YAML, JSON, the
/// reference syntax or a terminal.
const INSERTS: &[&str] = &[
    "&",
    "*",
    ":",
    "{",
    "}",
    "[",
    "]",
    "-",
    "|",
    ">",
    "!",
    "%",
    "@",
    "`",
    "\"",
    "'",
    "#",
    ",",
    "?",
    "\t",
    "\r",
    "\n",
    "\0",
    "\u{FEFF}",
    "\u{202E}",
    "é",
    "🦀",
    "&a ",
    "*a",
    "<<: *a\n",
    "!!binary ",
    "!tag ",
    "!!map ",
    "%YAML 1.2\n---\n",
    "\n---\n",
    "\n...\n",
    "? ",
    "- ",
    ": ",
    "|-\n",
    ">+\n",
    "${",
    "${env.",
    "${var.",
    "${a.b[",
    "}}",
    "{{",
    "$.",
    "$$",
    "[*]",
    "\\u0000",
    "\"\\x",
    "'''",
];

/// Numbers no field expects.
const HUGE: &[&str] = &[
    "99999999999999999999999999999999",
    "-99999999999999999999999999999999",
    "18446744073709551616",
    "4294967296",
    "1e999999",
    "-1e-999999",
    "0x7fffffffffffffffffffffff",
    "0o7777777777777777777777777",
    ".inf",
    "-.inf",
    ".nan",
    "1_000_000_000_000_000_000_000",
    "123456789012345678901234567890.5e-400",
];

/// Lines that put a huge number where a field reads one.
const HUGE_FIELDS: &[&str] = &[
    "timeout",
    "max_concurrency",
    "on_error: retry",
    "max_iterations",
    "max_cost_usd",
    "version",
    "max_tokens",
    "limit",
    "retry",
];

/// One change to a text; positions are fractions of its length, so a
/// mutation means something whatever the seed.
#[derive(Debug, Clone)]
enum Mutation {
    Delete {
        at: f64,
        len: usize,
    },
    Duplicate {
        at: f64,
        len: usize,
        to: f64,
    },
    Swap {
        a: f64,
        b: f64,
        len: usize,
    },
    Insert {
        at: f64,
        text: &'static str,
        times: usize,
    },
    Truncate {
        at: f64,
    },
    Indent {
        line: f64,
        delta: i8,
    },
    Nest {
        at: f64,
        depth: usize,
        kind: u8,
    },
    HugeNumber {
        at: f64,
        which: usize,
    },
    HugeField {
        line: f64,
        field: usize,
        which: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0f64..=1.0;
    prop_oneof![
        (at.clone(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (at.clone(), 1usize..128, at.clone()).prop_map(|(at, len, to)| Mutation::Duplicate {
            at,
            len,
            to
        }),
        (at.clone(), at.clone(), 1usize..48).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
        (at.clone(), prop::sample::select(INSERTS), 1usize..4)
            .prop_map(|(at, text, times)| Mutation::Insert { at, text, times }),
        at.clone().prop_map(|at| Mutation::Truncate { at }),
        (at.clone(), -8i8..=8).prop_map(|(line, delta)| Mutation::Indent { line, delta }),
        (
            at.clone(),
            prop::sample::select(vec![3usize, 100, 255, 256, 257, 600, 5000]),
            0u8..5
        )
            .prop_map(|(at, depth, kind)| Mutation::Nest { at, depth, kind }),
        (at.clone(), 0..HUGE.len()).prop_map(|(at, which)| Mutation::HugeNumber { at, which }),
        (at, 0..HUGE_FIELDS.len(), 0..HUGE.len())
            .prop_map(|(line, field, which)| Mutation::HugeField { line, field, which }),
    ]
}

/// The byte index `frac` of the way into `len`.
fn index(frac: f64, len: usize) -> usize {
    ((frac * len as f64) as usize).min(len)
}

/// The byte offsets where each line of `text` starts.
fn line_starts(text: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            text.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect()
}

fn nesting(depth: usize, kind: u8) -> String {
    match kind {
        0 => "[".repeat(depth),
        1 => format!("{}1{}", "[".repeat(depth), "]".repeat(depth)),
        2 => "{a: ".repeat(depth),
        3 => (0..depth.min(600))
            .map(|i| format!("{}- k{i}:\n", " ".repeat(2 * i)))
            .collect(),
        _ => format!("\"${{a{}}}\"", "[0]".repeat(depth)),
    }
}

fn apply(text: &mut Vec<u8>, m: &Mutation) {
    let n = text.len();
    match *m {
        Mutation::Delete { at, len } => {
            let i = index(at, n);
            text.drain(i..(i + len).min(n));
        }
        Mutation::Duplicate { at, len, to } => {
            let i = index(at, n);
            let piece = text[i..(i + len).min(n)].to_vec();
            let j = index(to, n);
            text.splice(j..j, piece);
        }
        Mutation::Swap { a, b, len } => {
            let (i, j) = (index(a, n), index(b, n));
            let (lo, hi) = (i.min(j), i.max(j));
            let len = len.min(hi - lo).min(n - hi);
            for k in 0..len {
                text.swap(lo + k, hi + k);
            }
        }
        Mutation::Insert { at, text: t, times } => {
            let i = index(at, n);
            text.splice(i..i, t.repeat(times).into_bytes());
        }
        Mutation::Truncate { at } => text.truncate(index(at, n)),
        Mutation::Indent { line, delta } => {
            let starts = line_starts(text);
            let s = starts[index(line, starts.len().saturating_sub(1))];
            if delta >= 0 {
                text.splice(s..s, vec![b' '; delta as usize]);
            } else {
                let spaces = text[s..].iter().take_while(|b| **b == b' ').count();
                text.drain(s..s + spaces.min(delta.unsigned_abs() as usize));
            }
        }
        Mutation::Nest { at, depth, kind } => {
            let i = index(at, n);
            text.splice(i..i, nesting(depth, kind).into_bytes());
        }
        Mutation::HugeNumber { at, which } => {
            // Over the next run of digits, or inserted where there is none.
            let i = index(at, n);
            let start = text[i..]
                .iter()
                .position(u8::is_ascii_digit)
                .map_or(i, |p| i + p);
            let end = start
                + text[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
            text.splice(start..end, HUGE[which].bytes());
        }
        Mutation::HugeField { line, field, which } => {
            let starts = line_starts(text);
            let s = starts[index(line, starts.len().saturating_sub(1))];
            let indent = text[s..].iter().take_while(|b| **b == b' ').count();
            let value = format!(
                "{}{}: {}\n",
                " ".repeat(indent),
                HUGE_FIELDS[field].trim_end_matches(": retry"),
                if HUGE_FIELDS[field].ends_with("retry") {
                    format!("retry:{}", HUGE[which])
                } else {
                    HUGE[which].to_owned()
                }
            );
            text.splice(s..s, value.into_bytes());
        }
    }
}

/// A mutated seed: which seed, the changes, and the dialect it is read as.
#[derive(Debug, Clone)]
struct Case {
    seed: usize,
    mutations: Vec<Mutation>,
    dialect: u8,
}

fn case(seeds: usize) -> impl Strategy<Value = Case> {
    (
        0..seeds,
        // Mostly one change, so that most files stay close enough to a
        // pipeline to reach the checks after the YAML parse.
        prop_oneof![
            3 => prop::collection::vec(mutation(), 1..2),
            1 => prop::collection::vec(mutation(), 2..6),
        ],
        prop::sample::select(vec![0u8, 0, 0, 0, 0, 1, 2, 3]),
    )
        .prop_map(|(seed, mutations, dialect)| Case {
            seed,
            mutations,
            dialect,
        })
}

fn build(seeds: &[(String, Vec<u8>)], c: &Case) -> Vec<u8> {
    let mut text = seeds[c.seed].1.clone();
    for m in &c.mutations {
        apply(&mut text, m);
    }
    text
}

fn dialect(d: u8) -> Dialect {
    match d {
        1 => Dialect::Native,
        2 => Dialect::Fibe,
        3 => Dialect::Discord,
        _ => Dialect::Auto,
    }
}

// --- what every answer must be ---

/// Debug shapes a message must not hold (unless the file itself holds the
/// same text, which a message may quote).
fn debug_dumps(message: &str, input: &str) -> Vec<String> {
    let patterns = [
        r"\b[A-Z][A-Za-z]*\s*\{\s*[a-z_]+:",
        r#"\b[A-Z][A-Za-z]*\("#,
        r"\bkind:",
        r"\bNone\b",
        r"\\n",
    ];
    patterns
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .flat_map(|re| {
            re.find_iter(message)
                .map(|m| m.as_str().to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|found| !input.contains(found.as_str()))
        .collect()
}

/// How many lines YAML sees in `text`: `\n`, `\r\n` and a lone `\r` each
/// end one.
fn yaml_lines(text: &str) -> usize {
    let lone_cr = text.matches('\r').count() - text.matches("\r\n").count();
    text.matches('\n').count() + lone_cr + 1
}

/// A diagnostic points inside the text and reads as a sentence.
fn check_diagnostic(d: &Diagnostic, text: &str) -> Result<(), String> {
    let lines = yaml_lines(text);
    let p = d.span.start;
    if p.line < 1 || p.col < 1 || p.line as usize > lines.max(1) {
        return Err(format!(
            "{p} is outside the text ({lines} lines): {}",
            d.message
        ));
    }
    if d.message.trim().is_empty() {
        return Err(format!("an empty message at {p}"));
    }
    let all = format!("{} {}", d.message, d.hint.clone().unwrap_or_default());
    let dumps = debug_dumps(&all, text);
    if !dumps.is_empty() {
        return Err(format!("a Debug dump {dumps:?} in `{all}`"));
    }
    let rendered = d.render("f.yml", Some(text));
    if !rendered.starts_with(&format!("f.yml:{}:{}: ", p.line, p.col)) {
        return Err(format!("rendered without its position: {rendered}"));
    }
    Ok(())
}

/// Loads one case as `check` does and checks every diagnostic; whether
/// the file loaded without errors.
fn load_and_check(bytes: &[u8], d: Dialect) -> Result<bool, String> {
    let text = String::from_utf8_lossy(bytes);
    let loaded = load_str_as(&text, d);
    if !loaded.has_errors() && loaded.pipeline.is_none() {
        return Err("no error and no pipeline".into());
    }
    for diag in &loaded.diagnostics {
        check_diagnostic(diag, &text)?;
    }
    Ok(!loaded.has_errors())
}

/// A runner with a fixed generator (`stream` picks which): the same cases
/// on every machine.
fn runner(cases: u32, stream: u8) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[stream; 32]),
    )
}

fn fail_with(seeds: &[(String, Vec<u8>)], e: TestError<Case>) -> ! {
    match e {
        TestError::Fail(why, c) => {
            let text = build(seeds, &c);
            panic!(
                "{why}\nseed {}, read as {:?}, after {:?}:\n{}",
                seeds[c.seed].0,
                dialect(c.dialect),
                c.mutations,
                String::from_utf8_lossy(&text)
            )
        }
        TestError::Abort(why) => panic!("aborted: {why}"),
    }
}

#[test]
fn no_mutated_pipeline_file_panics_the_loader_or_loses_an_error_position() {
    let seeds = seeds();
    assert!(seeds.len() > 40, "only {} seeds", seeds.len());
    let started = Instant::now();
    let slowest = Cell::new(Duration::ZERO);
    let valid = Cell::new(0usize);
    let n = cases(LIBRARY_CASES);
    let result = runner(n, 1).run(&case(seeds.len()), |c| {
        let text = build(&seeds, &c);
        let t = Instant::now();
        let r = load_and_check(&text, dialect(c.dialect));
        slowest.set(slowest.get().max(t.elapsed()));
        valid.set(valid.get() + usize::from(r == Ok(true)));
        r.map(|_| ()).map_err(TestCaseError::fail)
    });
    eprintln!(
        "{n} cases over {} seeds in {:.1?} ({} still valid; slowest {:.1?})",
        seeds.len(),
        started.elapsed(),
        valid.get(),
        slowest.get()
    );
    if let Err(e) = result {
        fail_with(&seeds, e);
    }
}

/// What `pipewright check FILE` says of a file: exit code and stderr.
fn check_binary(dir: &Path, bytes: &[u8], d: Dialect) -> (i32, String, String) {
    let file = dir.join("fuzzed.yml");
    std::fs::write(&file, bytes).expect("write");
    let dialect = format!("{d:?}").to_lowercase();
    let out = assert_cmd::Command::from_std(common::pipewright_in(dir))
        .arg("check")
        .arg(&file)
        .args(["--dialect", &dialect])
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("XDG_STATE_HOME", dir.join("xdg-state"))
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(60))
        .output()
        .expect("check runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `check`'s answer: exit 0 or 2, and every diagnostic line starts with
/// `FILE:LINE:COL: `.
fn judge_check(dir: &Path, bytes: &[u8], d: Dialect) -> Result<(), String> {
    let (code, stdout, stderr) = check_binary(dir, bytes, d);
    let name = dir.join("fuzzed.yml").display().to_string();
    if code != 0 && code != 2 {
        return Err(format!("exit {code}:\n{stderr}"));
    }
    let lines = yaml_lines(&String::from_utf8_lossy(bytes));
    let at = Regex::new(r"^:(\d+):(\d+): (error|warning): ").expect("regex");
    for line in stderr.lines().filter(|l| l.starts_with(&name)) {
        let rest = &line[name.len()..];
        if rest.starts_with(": ") && (rest.contains(" error(s), ") || rest.contains("ok (")) {
            continue;
        }
        let Some(c) = at.captures(rest) else {
            return Err(format!("a diagnostic without a position: {line}"));
        };
        let l: usize = c[1].parse().unwrap_or(0);
        if l < 1 || l > lines {
            return Err(format!("line {l} is outside the file: {line}"));
        }
    }
    let all = format!("{stdout}{stderr}");
    if all.contains("panicked") || all.contains("RUST_BACKTRACE") {
        return Err(format!("a panic:\n{all}"));
    }
    let dumps = debug_dumps(&all, &String::from_utf8_lossy(bytes));
    if !dumps.is_empty() {
        return Err(format!("a Debug dump {dumps:?}:\n{all}"));
    }
    Ok(())
}

#[test]
fn pipewright_check_answers_every_mutated_file_with_positions_and_no_panic() {
    let seeds = seeds();
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    // Its own generator stream: these are not the library test's first
    // cases again.
    let n = cases(BINARY_CASES);
    let result = runner(n, 2).run(&case(seeds.len()), |c| {
        let bytes = build(&seeds, &c);
        judge_check(dir.path(), &bytes, dialect(c.dialect)).map_err(TestCaseError::fail)
    });
    eprintln!(
        "{n} files checked by the binary in {:.1?}",
        started.elapsed()
    );
    if let Err(e) = result {
        fail_with(&seeds, e);
    }
}

/// The judge can say no: a Debug dump, a position outside the text and no
/// position at all are each refused, and a plain sentence passes.
#[test]
fn the_judge_refuses_a_debug_dump_and_a_position_outside_the_text() {
    use pipewright::engine::diag::{Pos, Span};
    let text = "pipe:\n  - id: a\n";
    let at = |line, col, msg: &str| Diagnostic::error(Span::at(Pos::new(line, col)), msg);
    for bad in [
        at(1, 1, "Error { kind: Eof, line: 3 }"),
        at(1, 1, "expected Some(\"x\")"),
        at(1, 1, "got None"),
        at(9, 1, "`pipe` must be a list of steps"),
        Diagnostic::error(Span::default(), "`pipe` must be a list of steps"),
    ] {
        assert!(check_diagnostic(&bad, text).is_err(), "{bad:?} passed");
    }
    assert_eq!(
        check_diagnostic(&at(2, 5, "`pipe` must be a list of steps"), text),
        Ok(())
    );
    // A message may quote the file, whatever the file holds.
    assert_eq!(
        check_diagnostic(&at(1, 1, "unknown key `Some(x`"), "Some(x: 1\n"),
        Ok(())
    );
}
