//! jq programs over JSON values: compiled once with jaq, run many times.
//!
//! Pipewright uses jq for `transform`, composition `when`, pipe
//! `when: ${ref} | filter`, `output: {assemble: …}` and the `jq` expect
//! matcher. All of them go through [`JqProgram`]: the program is compiled when
//! the pipeline file is loaded (so a typo is a load error with a position in
//! the program text) and then run against `serde_json` values.
//!
//! The language is jaq's dialect of jq with its standard library (regexes,
//! `tojson`, `to_entries`, dates, `env` …). Module `include`/`import` is not
//! available, and neither are `input`/`inputs`: a program sees exactly one
//! input value.

use std::fmt;
use std::sync::Arc;

use jaq_core::compile::Undefined;
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::{Num, Val};
use serde_json::{Map, Number, Value};

use crate::engine::diag::suggest;

/// The data kind jaq runs our filters with: plain JSON values, no global data.
type Data = data::JustLut<Val>;

/// How deeply nested a value may be when it crosses the jq boundary.
///
/// Conversion is recursive; JSON read from the wire is at most 128 levels
/// deep (serde_json's limit), so this only stops pathological values that a
/// program builds itself (`reduce range(1e6) as $i (null; [.])`).
const MAX_DEPTH: usize = 512;

/// Runtime error messages longer than this are cut (they may quote a value).
const MAX_MESSAGE_LEN: usize = 500;

/// A jq program compiled once (at load time) and run many times.
///
/// Cloning is cheap (the compiled program is shared), and the program can be
/// run from several threads or tokio tasks at once. Two programs are equal
/// when their source text is equal.
#[derive(Clone)]
pub struct JqProgram {
    inner: Arc<Compiled>,
}

struct Compiled {
    source: String,
    filter: jaq_core::Filter<Data>,
}

/// One problem found while compiling a jq program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JqProblem {
    /// Byte offset in the program text where the problem is.
    pub offset: usize,
    /// Length in bytes of the offending text; 0 for a point such as the end
    /// of the program.
    pub len: usize,
    /// A sentence such as "undefined function `lenght/0`".
    pub message: String,
    /// A suggestion such as "did you mean `length`?".
    pub hint: Option<String>,
}

impl fmt::Display for JqProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

/// A jq program that does not compile: every problem jaq found, in the order
/// they appear in the program text. Never empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct JqCompileError {
    /// The problems, sorted by offset.
    pub problems: Vec<JqProblem>,
}

impl JqCompileError {
    fn new(mut problems: Vec<JqProblem>) -> Self {
        if problems.is_empty() {
            problems.push(JqProblem {
                offset: 0,
                len: 0,
                message: "the jq program does not compile".to_owned(),
                hint: None,
            });
        }
        problems.sort_by_key(|p| (p.offset, p.len));
        problems.dedup();
        Self { problems }
    }

    /// The problem that comes first in the program text.
    pub fn first(&self) -> Option<&JqProblem> {
        self.problems.first()
    }
}

impl fmt::Display for JqCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [] => f.write_str("the jq program does not compile"),
            [one] => one.fmt(f),
            [first, rest @ ..] => write!(f, "{first} (and {} more)", rest.len()),
        }
    }
}

/// A jq program failed while running: `error(…)`, a type error such as
/// indexing a number, `halt_error`, or an input or output that is too deeply
/// nested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JqRunError {
    /// What went wrong, e.g. `cannot index 1 with "b"`. For `error(v)` this is
    /// `v` itself when it is a string, else `v` as JSON.
    pub message: String,
}

impl JqRunError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: truncate(message.into(), MAX_MESSAGE_LEN),
        }
    }
}

impl JqProgram {
    /// Compiles `src`. Lex, parse and name-resolution problems are all
    /// reported, each with a byte range in `src`.
    pub fn compile(src: &str) -> Result<JqProgram, JqCompileError> {
        let arena = Arena::default();
        let loader = Loader::new(prelude());
        let modules = loader
            .load(
                &arena,
                File {
                    code: src,
                    path: (),
                },
            )
            .map_err(|errs| load_errors(src, errs))?;
        // `import "x" as $x;` would bind a data file we never provide.
        load::import(&modules, |_| {
            Err("importing data files is not supported".to_owned())
        })
        .map_err(|errs| load_errors(src, errs))?;
        let filter = Compiler::default()
            .with_funs(natives())
            .compile(modules)
            .map_err(|errs| {
                let problems = errs
                    .into_iter()
                    .flat_map(|(_file, undefined)| undefined)
                    .map(|(name, what)| undefined_problem(src, name, &what));
                JqCompileError::new(problems.collect())
            })?;
        Ok(JqProgram {
            inner: Arc::new(Compiled {
                source: src.to_owned(),
                filter,
            }),
        })
    }

    /// The program text, as given to [`JqProgram::compile`].
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// Every output of the program on `input`, or the first runtime error.
    ///
    /// `halt` ends the outputs early (what came before it is kept). A program
    /// that never stops (`repeat(.)`) makes this never return: callers that
    /// run untrusted programs should do so off the async runtime with a
    /// timeout.
    pub fn run(&self, input: &Value) -> Result<Vec<Value>, JqRunError> {
        let input = to_val(input, 0)?;
        let lut = &self.inner.filter.lut;
        let ctx = Ctx::<Data>::new(lut, Vars::new([]));
        let mut outputs = Vec::new();
        for out in self.inner.filter.id.run((ctx, input)) {
            match exception(out)? {
                Some(v) => outputs.push(from_val(&v, 0)?),
                None => break,
            }
        }
        Ok(outputs)
    }

    /// The single value a `transform` or `output: {assemble: …}` produces:
    /// the program's first output.
    ///
    /// - No output (`empty`, `select(false)`, `halt`) gives `null`, the value
    ///   a node has when it produced nothing.
    /// - Later outputs are not computed: `.hits[]` gives the first hit. Wrap
    ///   the program in `[…]` to keep them all.
    /// - An error raised before the first output is returned.
    pub fn run_one(&self, input: &Value) -> Result<Value, JqRunError> {
        self.first(input).map(|first| first.unwrap_or(Value::Null))
    }

    /// Whether a `when` predicate holds: the jq truthiness (see [`truthy`])
    /// of the program's first output. No output is false; later outputs are
    /// not computed.
    pub fn test(&self, input: &Value) -> Result<bool, JqRunError> {
        self.first(input)
            .map(|first| first.as_ref().is_some_and(truthy))
    }

    /// The first output, if any, without running the program any further.
    fn first(&self, input: &Value) -> Result<Option<Value>, JqRunError> {
        let input = to_val(input, 0)?;
        let lut = &self.inner.filter.lut;
        let ctx = Ctx::<Data>::new(lut, Vars::new([]));
        match self.inner.filter.id.run((ctx, input)).next() {
            None => Ok(None),
            Some(out) => exception(out)?.map(|v| from_val(&v, 0)).transpose(),
        }
    }
}

impl fmt::Debug for JqProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JqProgram").field(&self.source()).finish()
    }
}

impl PartialEq for JqProgram {
    fn eq(&self, other: &Self) -> bool {
        self.source() == other.source()
    }
}

impl Eq for JqProgram {}

/// jq truthiness: `false` and `null` are false, every other value (including
/// `0`, `""`, `[]` and `{}`) is true.
pub fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
}

/// The definitions every program can call: jaq's core, standard and JSON
/// libraries.
fn prelude() -> impl Iterator<Item = load::parse::Def<&'static str>> {
    jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
}

/// The natively implemented filters that go with [`prelude`].
fn natives() -> impl Iterator<Item = jaq_core::native::Fun<Data>> {
    jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
}

/// Every filter name the prelude and natives define, with its arity, for
/// "did you mean" hints. Internal helpers (`scan_`, `error_empty`) are left
/// out.
fn known_filters() -> Vec<(&'static str, usize)> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .map(|def| (def.name, def.args.len()));
    let natives = jaq_core::funs::<Data>()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .map(|(name, args, _)| (name, args.len()));
    let mut all: Vec<_> = defs
        .chain(natives)
        .filter(|(name, _)| {
            name.starts_with(|c: char| c.is_ascii_alphabetic())
                && !name.ends_with('_')
                && !name.ends_with("_empty")
        })
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

// ---------------------------------------------------------------------------
// Compile errors

/// The byte range of `part` inside `whole`, when `part` is a slice of it.
fn span_in(whole: &str, part: &str) -> Option<(usize, usize)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some((start, part.len()))
}

/// A problem at `part` of `src`; a part that is not in `src` (it came from
/// the standard library) is put at the start of the program.
fn problem_at(src: &str, part: &str, message: String, hint: Option<String>) -> JqProblem {
    let (offset, len) = span_in(src, part).unwrap_or((0, 0));
    JqProblem {
        offset,
        len,
        message,
        hint,
    }
}

/// The first character of `rest`, as a slice of it (empty at the end).
fn first_char(rest: &str) -> &str {
    let n = rest.chars().next().map_or(0, char::len_utf8);
    &rest[..n]
}

/// How a found token is named in a message: "`}`" or "the end of the
/// program". Long tokens (a whole `( … )` block) are shortened.
fn describe(found: &str) -> String {
    if found.is_empty() {
        return "the end of the program".to_owned();
    }
    let line = found.lines().next().unwrap_or(found);
    let short: String = line.chars().take(20).collect();
    if short.len() < found.len() {
        format!("`{short}…`")
    } else {
        format!("`{short}`")
    }
}

fn load_errors(src: &str, errs: load::Errors<&str, ()>) -> JqCompileError {
    let mut problems = Vec::new();
    for (_file, err) in errs {
        match err {
            load::Error::Io(items) => {
                for (path, why) in items {
                    problems.push(problem_at(
                        src,
                        path,
                        format!("cannot load module `{path}`: {why}"),
                        None,
                    ));
                }
            }
            load::Error::Lex(items) => {
                problems.extend(
                    items
                        .into_iter()
                        .map(|(expect, rest)| lex_problem(src, &expect, rest)),
                );
            }
            load::Error::Parse(items) => {
                problems.extend(
                    items
                        .into_iter()
                        .map(|(expect, found)| parse_problem(src, &expect, found)),
                );
            }
        }
    }
    JqCompileError::new(problems)
}

/// A lexer error: `rest` is the program text from where lexing failed.
fn lex_problem(src: &str, expect: &load::lex::Expect<&str>, rest: &str) -> JqProblem {
    use load::lex::Expect;
    let at = first_char(rest);
    let found = describe(at);
    match expect {
        // An unclosed string or block: at the end of the program, point at
        // the opening delimiter, which is what needs fixing.
        Expect::Delim(open) => {
            let close = match *open {
                "(" => ")",
                "[" => "]",
                "{" => "}",
                _ => "\"",
            };
            if close == "\"" {
                problem_at(
                    src,
                    open,
                    "unterminated string".to_owned(),
                    Some("add the closing `\"`".to_owned()),
                )
            } else if rest.is_empty() {
                problem_at(
                    src,
                    open,
                    format!("unclosed `{open}`"),
                    Some(format!("add the closing `{close}`")),
                )
            } else {
                problem_at(
                    src,
                    at,
                    format!("expected `{close}` to close `{open}`, found {found}"),
                    None,
                )
            }
        }
        Expect::Digit => problem_at(src, at, format!("expected a digit, found {found}"), None),
        Expect::Ident => problem_at(src, at, format!("expected a name, found {found}"), None),
        Expect::Escape => {
            // `rest` starts after the backslash; include it in the span.
            let (offset, len) = span_in(src, at).unwrap_or((0, 0));
            let backslash = offset
                .checked_sub(1)
                .filter(|before| src.as_bytes().get(*before) == Some(&b'\\'));
            let (offset, len) = backslash.map_or((offset, len), |start| (start, len + 1));
            JqProblem {
                offset,
                len,
                message: format!("invalid escape sequence `\\{at}` in a string"),
                hint: Some(
                    "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX and \\(…)"
                        .to_owned(),
                ),
            }
        }
        Expect::Unicode => problem_at(
            src,
            at,
            "invalid `\\u` escape: expected 4 hexadecimal digits of a Unicode code point"
                .to_owned(),
            None,
        ),
        Expect::Token => {
            let message = match at {
                ")" => "unexpected `)` with no matching `(`".to_owned(),
                "]" => "unexpected `]` with no matching `[`".to_owned(),
                "}" => "unexpected `}` with no matching `{`".to_owned(),
                _ => format!("unexpected character {found}"),
            };
            problem_at(src, at, message, None)
        }
        _ => problem_at(src, at, format!("syntax error at {found}"), None),
    }
}

/// A parser error: `found` is the offending token (empty at the end).
fn parse_problem(src: &str, expect: &load::parse::Expect<&str>, found: &str) -> JqProblem {
    use load::parse::Expect;
    let what = match expect {
        Expect::Just(s) => format!("`{s}`"),
        Expect::Var => "a variable".to_owned(),
        Expect::Pattern => "a variable or destructuring pattern".to_owned(),
        Expect::ElseOrEnd => "`else` or `end`".to_owned(),
        Expect::CommaOrRBrack => "`,` or `]`".to_owned(),
        Expect::CommaOrRBrace => "`,` or `}`".to_owned(),
        Expect::SemicolonOrRParen => "`;` or `)`".to_owned(),
        Expect::Term => "a filter".to_owned(),
        Expect::Key => "a key".to_owned(),
        Expect::Ident => "a name".to_owned(),
        Expect::Arg => "an argument".to_owned(),
        Expect::Str => "a string".to_owned(),
        Expect::Nothing => {
            let message = if found.is_empty() {
                "unexpected end of the program".to_owned()
            } else {
                format!("unexpected token {}", describe(found))
            };
            return problem_at(src, found, message, None);
        }
        _ => "something else".to_owned(),
    };
    let message = format!("expected {what}, found {}", describe(found));
    problem_at(src, found, message, None)
}

/// A name that does not resolve: a filter, `$variable`, label or module.
fn undefined_problem(src: &str, name: &str, what: &Undefined) -> JqProblem {
    match what {
        Undefined::Filter(arity) => {
            let known = known_filters();
            let arities: Vec<usize> = known
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, a)| *a)
                .collect();
            let hint = if arities.is_empty() {
                let names = known.iter().filter(|(_, a)| a == arity).map(|(n, _)| *n);
                suggest(name, names).map(|s| format!("did you mean `{s}`?"))
            } else {
                Some(format!("`{name}` takes {}", arguments(&arities)))
            };
            let message = format!("undefined function `{name}/{arity}`");
            problem_at(src, name, message, hint)
        }
        Undefined::Var => {
            let shown = if name.starts_with('$') {
                name.to_owned()
            } else {
                format!("${name}")
            };
            let hint =
                (shown == "$ENV").then(|| "use `env` to read environment variables".to_owned());
            problem_at(src, name, format!("undefined variable `{shown}`"), hint)
        }
        Undefined::Label => problem_at(src, name, format!("undefined label `{name}`"), None),
        Undefined::Mod => problem_at(src, name, format!("undefined module `{name}`"), None),
        _ => problem_at(src, name, format!("undefined name `{name}`"), None),
    }
}

/// "1 argument", "no arguments", "1 or 2 arguments".
fn arguments(arities: &[usize]) -> String {
    let nums: Vec<String> = arities
        .iter()
        .map(|a| {
            if *a == 0 {
                "no".to_owned()
            } else {
                a.to_string()
            }
        })
        .collect();
    let plural = arities.len() > 1 || arities.first() != Some(&1);
    let list = match nums.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, init)) => format!("{} or {last}", init.join(", ")),
        None => "no".to_owned(),
    };
    format!("{list} argument{}", if plural { "s" } else { "" })
}

// ---------------------------------------------------------------------------
// Runtime

/// Turns one jaq output into a value, `None` for `halt` (end of outputs), or
/// an error.
fn exception(out: jaq_core::ValX<'_, Val>) -> Result<Option<Val>, JqRunError> {
    let exn = match out {
        Ok(v) => return Ok(Some(v)),
        Err(exn) => exn,
    };
    let exn = match exn.get_err() {
        Ok(err) => {
            return Err(JqRunError::new(match err.into_val() {
                Val::TStr(s) | Val::BStr(s) => String::from_utf8_lossy(&s).into_owned(),
                other => other.to_string(),
            }));
        }
        Err(exn) => exn,
    };
    match exn.get_halt() {
        Ok(0) => Ok(None),
        Ok(code) => Err(JqRunError::new(format!(
            "the program stopped with `halt_error` (exit code {code})"
        ))),
        Err(_) => Err(JqRunError::new(
            "jaq reported an internal control-flow error",
        )),
    }
}

/// Cuts `s` to at most `max` bytes, at a character boundary, marking the cut.
fn truncate(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
    s
}

fn too_deep(what: &str) -> JqRunError {
    JqRunError::new(format!(
        "the {what} is nested more than {MAX_DEPTH} levels deep"
    ))
}

/// serde_json → jaq. Integers stay integers (beyond `isize`, big integers),
/// object key order is kept.
fn to_val(v: &Value, depth: usize) -> Result<Val, JqRunError> {
    if depth > MAX_DEPTH {
        return Err(too_deep("input"));
    }
    Ok(match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => Val::Num(if let Some(i) = n.as_i64() {
            Num::from_integral(i)
        } else if let Some(u) = n.as_u64() {
            Num::from_integral(u)
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        Value::String(s) => Val::from(s.clone()),
        Value::Array(items) => items
            .iter()
            .map(|item| to_val(item, depth + 1))
            .collect::<Result<Val, _>>()?,
        Value::Object(map) => Val::obj(
            map.iter()
                .map(|(k, item)| Ok((Val::from(k.clone()), to_val(item, depth + 1)?)))
                .collect::<Result<jaq_json::Map, JqRunError>>()?,
        ),
    })
}

/// jaq → serde_json. Integers that fit `i64`/`u64` stay integers, floats stay
/// floats; NaN becomes `null` and infinities the largest finite floats, as in
/// jq. Non-string object keys (a jaq extension) become their JSON text.
fn from_val(v: &Val, depth: usize) -> Result<Value, JqRunError> {
    if depth > MAX_DEPTH {
        return Err(too_deep("output"));
    }
    Ok(match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => num_to_json(n),
        Val::TStr(s) | Val::BStr(s) => Value::String(String::from_utf8_lossy(s).into_owned()),
        Val::Arr(items) => Value::Array(
            items
                .iter()
                .map(|item| from_val(item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Val::Obj(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, item) in map.iter() {
                let key = match k {
                    Val::TStr(s) | Val::BStr(s) => String::from_utf8_lossy(s).into_owned(),
                    other => other.to_string(),
                };
                out.insert(key, from_val(item, depth + 1)?);
            }
            Value::Object(out)
        }
    })
}

fn num_to_json(n: &Num) -> Value {
    match n {
        Num::Int(i) => i64::try_from(*i).map_or_else(|_| float_to_json(*i as f64), Value::from),
        Num::Float(f) => float_to_json(*f),
        // Big integers and decimal literals (`1.50`, `1e3`) print exactly;
        // parse that text back into the best serde_json number.
        Num::BigInt(_) | Num::Dec(_) => {
            let text = n.to_string();
            if let Ok(i) = text.parse::<i64>() {
                Value::from(i)
            } else if let Ok(u) = text.parse::<u64>() {
                Value::from(u)
            } else {
                float_to_json(text.parse::<f64>().unwrap_or(f64::NAN))
            }
        }
    }
}

fn float_to_json(f: f64) -> Value {
    let f = if f == f64::INFINITY {
        f64::MAX
    } else if f == f64::NEG_INFINITY {
        f64::MIN
    } else {
        f
    };
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

