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

use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::{Num, Val};
use serde_json::{Map, Number, Value};

mod limits;
mod problems;

pub use problems::{JqCompileError, JqProblem};
use problems::{check_depth, check_nesting, load_errors, undefined_problem};

/// The data kind jaq runs our filters with: plain JSON values, no global data.
type Data = data::JustLut<Val>;

pub use limits::JqLimits;
/// How deeply nested a value may be when it crosses the jq boundary: as
/// deeply as jaq lets a program nest one (see [`limits::MAX_DEPTH`]).
/// Conversion recurses once per level.
use limits::MAX_DEPTH;

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
    /// What one evaluation may spend ([`JqProgram::with_limits`]).
    limits: JqLimits,
}

struct Compiled {
    source: String,
    filter: jaq_core::Filter<Data>,
    /// How deep the program's syntax tree is: evaluation gets a stack with
    /// room for it.
    depth: usize,
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
    /// Compiles `src` with every filter, to run within the default limits.
    /// Lex, parse and name-resolution problems are all reported, each with
    /// a byte range in `src`.
    pub fn compile(src: &str) -> Result<JqProgram, JqCompileError> {
        Self::compile_within(src, JqLimits::default())
    }

    /// Compiles `src` to run within `limits` (the driver's settings); a
    /// [`JqLimits::sandboxed`] program compiles without the filters that
    /// read the environment, end the process or write to its stderr.
    pub fn compile_within(src: &str, limits: JqLimits) -> Result<JqProgram, JqCompileError> {
        let tokens = check_nesting(src)?;
        limits::with_stack(tokens, || {
            let depth = check_depth(src)?;
            Self::compile_pruned(src, depth, limits.sandboxed)
        })
        .map(|p| p.with_limits(limits))
    }

    fn compile_pruned(
        src: &str,
        depth: usize,
        sandboxed: bool,
    ) -> Result<JqProgram, JqCompileError> {
        // Compiling jaq's whole library costs ~0.4 ms a program; a program
        // only needs the definitions it can reach. Should that pruning ever
        // miss one (a name the compiler inserts itself), the full library
        // decides, so results never depend on the shortcut.
        Self::compile_with(src, depth, reachable_prelude(src), sandboxed)
            .or_else(|_| Self::compile_with(src, depth, prelude().collect(), sandboxed))
    }

    fn compile_with(
        src: &str,
        depth: usize,
        defs: Vec<load::parse::Def<&'static str>>,
        sandboxed: bool,
    ) -> Result<JqProgram, JqCompileError> {
        let arena = Arena::default();
        let loader = Loader::new(defs);
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
            .with_funs(natives(sandboxed))
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
                depth,
            }),
            limits: JqLimits::default(),
        })
    }

    /// The same program, evaluated within `limits` (the driver's
    /// settings) instead of the defaults.
    pub fn with_limits(mut self, limits: JqLimits) -> JqProgram {
        self.limits = limits;
        self
    }

    /// The program text, as given to [`JqProgram::compile`].
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// Every output of the program on `input`, or the first runtime error.
    ///
    /// `halt` ends the outputs early (what came before it is kept). A program
    /// that would never stop (`repeat(.)`), run too long or recurse past the
    /// stack is stopped with an error (see [`limits`]).
    pub fn run(&self, input: &Value) -> Result<Vec<Value>, JqRunError> {
        limits::guarded(
            (self.inner.depth, self.limits),
            || self.run_all(input),
            JqRunError::new,
        )
    }

    fn run_all(&self, input: &Value) -> Result<Vec<Value>, JqRunError> {
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
        limits::guarded(
            (self.inner.depth, self.limits),
            || self.run_first(input),
            JqRunError::new,
        )
    }

    fn run_first(&self, input: &Value) -> Result<Option<Value>, JqRunError> {
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

/// The library parsed once, with the names each definition's body mentions.
struct Library {
    defs: Vec<load::parse::Def<&'static str>>,
    mentions: Vec<Vec<String>>,
}

fn library() -> &'static Library {
    // Allowed process-wide: jaq's definitions, compiled once, never changed.
    static LIBRARY: std::sync::OnceLock<Library> = std::sync::OnceLock::new();
    LIBRARY.get_or_init(|| {
        let defs: Vec<_> = prelude().collect();
        let mentions = defs
            .iter()
            .map(|d| words(&format!("{:?}", d.body)))
            .collect();
        Library { defs, mentions }
    })
}

/// Identifier-like words (and `@format` names) in `text`; an
/// over-approximation of the filters it calls, which is all pruning needs.
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' || (c == '@' && cur.is_empty()) {
            cur.push(c);
        } else if !cur.is_empty() {
            let w = std::mem::take(&mut cur);
            if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '@') {
                out.push(w);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The library definitions reachable from the names `src` mentions.
fn reachable_prelude(src: &str) -> Vec<load::parse::Def<&'static str>> {
    let lib = library();
    let mut wanted: std::collections::HashSet<String> = words(src).into_iter().collect();
    let mut keep = vec![false; lib.defs.len()];
    loop {
        let mut grew = false;
        for (i, d) in lib.defs.iter().enumerate() {
            if !keep[i] && wanted.contains(d.name) {
                keep[i] = true;
                grew = true;
                wanted.extend(lib.mentions[i].iter().cloned());
            }
        }
        if !grew {
            break;
        }
    }
    lib.defs
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(d, _)| d.clone())
        .collect()
}

/// The filters a program can call, by name and arity, sorted: jaq's
/// library definitions and natives, without the internal `_` ones. What
/// completion offers in `transform:` and `when:`.
pub fn builtins() -> &'static [(String, usize)] {
    // Allowed process-wide: a cache of the immutable library's names.
    static NAMES: std::sync::OnceLock<Vec<(String, usize)>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut out: Vec<(String, usize)> = library()
            .defs
            .iter()
            .map(|d| (d.name.to_owned(), d.args.len()))
            .chain(natives(false).map(|(name, args, _)| (name.to_owned(), args.len())))
            .filter(|(n, _)| !n.starts_with('_') && !UNTRUSTED_OFF.contains(&n.as_str()))
            .collect();
        out.sort();
        out.dedup();
        out
    })
}

/// The natively implemented filters that go with [`prelude`]; for a
/// `sandboxed` program, without [`UNTRUSTED_OFF`].
fn natives(sandboxed: bool) -> impl Iterator<Item = jaq_core::native::Fun<Data>> {
    jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .filter(move |(name, _, _)| !(sandboxed && UNTRUSTED_OFF.contains(name)))
}

/// Filters a program from an untrusted caller may not use: `env` reads the
/// process's environment, `halt` ends the process, and the `debug` and
/// `stderr` natives write to its standard error.
const UNTRUSTED_OFF: &[&str] = &["env", "halt", "debug_empty", "stderr_empty"];

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
            // Only the start of the message is kept; the value may be huge
            // (`error("x" * 100000000)`), so it is cut before it is copied.
            let cut = MAX_MESSAGE_LEN + 1;
            return Err(JqRunError::new(match err.into_val() {
                Val::TStr(s) | Val::BStr(s) => {
                    String::from_utf8_lossy(&s[..s.len().min(cut + 3)]).into_owned()
                }
                other => jaq_json::write::cut(&other, cut),
            }));
        }
        Err(exn) => exn,
    };
    match exn.get_halt() {
        Ok(limits::HALT_CODE) if let Some(stop) = limits::take_stop() => Err(JqRunError::new(stop)),
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
/// object key order is kept. `depth` is how many arrays and objects hold
/// `v`. The values made are counted against the program's memory budget.
fn to_val(v: &Value, depth: usize) -> Result<Val, JqRunError> {
    if depth >= MAX_DEPTH && matches!(v, Value::Array(_) | Value::Object(_)) {
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
            .map(|item| nested(|| to_val(item, depth + 1)))
            .collect::<Result<Val, _>>()?,
        Value::Object(map) => Val::obj(
            map.iter()
                .map(|(k, item)| Ok((Val::from(k.clone()), nested(|| to_val(item, depth + 1))?)))
                .collect::<Result<jaq_json::Map, JqRunError>>()?,
        ),
    })
}

/// jaq → serde_json. Integers that fit `i64`/`u64` stay integers, floats stay
/// floats; NaN becomes `null` and infinities the largest finite floats, as in
/// jq. Non-string object keys (a jaq extension) become their JSON text.
///
/// `depth` is how many arrays and objects hold `v`. The values made leave
/// the program, so they are counted against its memory budget and never
/// given back: a program's outputs, all together, fit in it too.
fn from_val(v: &Val, depth: usize) -> Result<Value, JqRunError> {
    if depth >= MAX_DEPTH && matches!(v, Val::Arr(_) | Val::Obj(_)) {
        return Err(too_deep("output"));
    }
    let node = std::mem::size_of::<Value>();
    Ok(match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => num_to_json(n),
        Val::TStr(s) | Val::BStr(s) => Value::String(output_string(s)?),
        Val::Arr(items) => {
            output_bytes(items.len().saturating_mul(node))?;
            Value::Array(
                items
                    .iter()
                    .map(|item| nested(|| from_val(item, depth + 1)))
                    .collect::<Result<_, _>>()?,
            )
        }
        Val::Obj(map) => {
            // an entry: its key, its value, and its slot in the index
            let entry = node + std::mem::size_of::<String>() + 2 * std::mem::size_of::<usize>();
            output_bytes(map.len().saturating_mul(entry))?;
            let mut out = Map::with_capacity(map.len());
            for (k, item) in map.iter() {
                let key = match k {
                    Val::TStr(s) | Val::BStr(s) => output_string(s)?,
                    other => {
                        let key = other
                            .to_json()
                            .map_err(|e| JqRunError::new(e.to_string()))?;
                        output_bytes(key.len())?;
                        String::from_utf8_lossy(&key).into_owned()
                    }
                };
                out.insert(key, nested(|| from_val(item, depth + 1))?);
            }
            Value::Object(out)
        }
    })
}

/// Runs `f`, a conversion one level deeper, where there is stack for it:
/// the levels are at most [`MAX_DEPTH`], but a level may take more stack
/// than a small thread has left.
fn nested<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, f)
}

/// Asks the memory budget for `bytes` of output, and counts them.
fn output_bytes(bytes: usize) -> Result<(), JqRunError> {
    jaq_core::mem::charge(bytes, "the output").map_err(|_| {
        // the refusal is remembered; `limits::guarded` turns it into the
        // error a user reads
        JqRunError::new("the output is too large")
    })
}

/// The text of a jaq string, counted as output.
fn output_string(s: &[u8]) -> Result<String, JqRunError> {
    output_bytes(s.len())?;
    Ok(String::from_utf8_lossy(s).into_owned())
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;
    use serde_json::json;

    fn jq(src: &str) -> JqProgram {
        match JqProgram::compile(src) {
            Ok(p) => p,
            Err(e) => panic!("{src:?} should compile: {e}"),
        }
    }

    fn compile_err(src: &str) -> JqCompileError {
        match JqProgram::compile(src) {
            Ok(_) => panic!("{src:?} should not compile"),
            Err(e) => e,
        }
    }

    /// The program text a problem points at.
    fn pointed(src: &str, p: &JqProblem) -> String {
        src[p.offset..p.offset + p.len].to_owned()
    }

    fn search_result() -> Value {
        json!({"result": {"hits": [
            {"name": "alpha", "score": 0.9, "tags": ["a"], "stars": 10},
            {"name": "beta", "score": 0.4, "tags": [], "stars": 3},
            {"name": "gamma", "score": 0.7, "tags": ["a", "b"], "stars": 0}
        ]}})
    }

    #[rstest]
    #[case::identity(".", json!({"a": 1}), json!({"a": 1}))]
    #[case::field(".result.hits[1].name", search_result(), json!("beta"))]
    #[case::missing_field(".nope.deeper", json!({}), json!(null))]
    #[case::reshape(".result.hits[0] | {name, score}", search_result(), json!({"name": "alpha", "score": 0.9}))]
    #[case::map_select(
        ".result.hits | map(select(.score > 0.5)) | map(.name)",
        search_result(),
        json!(["alpha", "gamma"])
    )]
    #[case::length_cmp(".result.hits | length > 0", search_result(), json!(true))]
    #[case::to_entries("to_entries", json!({"a": 1, "b": 2}), json!([{"key": "a", "value": 1}, {"key": "b", "value": 2}]))]
    #[case::ascii_downcase("ascii_downcase", json!("MiXeD"), json!("mixed"))]
    #[case::regex_test("map(test(\"^a.p\"))", json!(["alpha", "beta", "ALPHA"]), json!([true, false, false]))]
    #[case::regex_flags("test(\"ALP\"; \"i\")", json!("alpha"), json!(true))]
    #[case::tostring("map(tostring)", json!([1, "s", null, {"a": [1]}]), json!(["1", "s", "null", "{\"a\":[1]}"]))]
    #[case::tojson("tojson", json!({"b": 1, "a": [1.5, true]}), json!("{\"b\":1,\"a\":[1.5,true]}"))]
    #[case::fromjson("fromjson", json!("{\"x\": [1, 2]}"), json!({"x": [1, 2]}))]
    #[case::alternative("(.count // 0) > 0", json!({}), json!(false))]
    #[case::interpolation("\"\\(.name) has \\(.stars)\"", json!({"name": "a", "stars": 2}), json!("a has 2"))]
    #[case::reduce("reduce .[] as $x (0; . + $x)", json!([1, 2, 3]), json!(6))]
    #[case::keys_sorted("keys", json!({"b": 1, "a": 2}), json!(["a", "b"]))]
    #[case::sort_by("sort_by(.n) | map(.n)", json!([{"n": 3}, {"n": 1}, {"n": 2}]), json!([1, 2, 3]))]
    #[case::parents_context(".parents.search.count > 0", json!({"parents": {"search": {"count": 2}}}), json!(true))]
    fn runs_programs(#[case] src: &str, #[case] input: Value, #[case] want: Value) {
        assert_eq!(jq(src).run_one(&input).unwrap(), want);
    }

    #[rstest]
    #[case::small_int("1", json!(null), "1")]
    #[case::negative_int("-7", json!(null), "-7")]
    #[case::i64_max(".", json!(i64::MAX), "9223372036854775807")]
    #[case::i64_min(".", json!(i64::MIN), "-9223372036854775808")]
    #[case::u64_max(".", json!(u64::MAX), "18446744073709551615")]
    #[case::float(".", json!(1.5), "1.5")]
    #[case::whole_float(".", json!(2.0), "2.0")]
    #[case::int_arith(". + 1", json!(41), "42")]
    #[case::float_arith(". + 1", json!(0.5), "1.5")]
    #[case::length("length", json!([1, 2, 3]), "3")]
    fn numbers_keep_their_kind(#[case] src: &str, #[case] input: Value, #[case] want: &str) {
        // Compared as text: `1` must not come back as `1.0`.
        assert_eq!(jq(src).run_one(&input).unwrap().to_string(), want);
    }

    #[test]
    fn integers_stay_integers_and_floats_stay_floats() {
        let out = jq("[.i, .f, .i * 2, .f * 2, .u]")
            .run_one(&json!({"i": 3, "f": 1.0, "u": u64::MAX}))
            .unwrap();
        assert_eq!(out.to_string(), format!("[3,1.0,6,2.0,{}]", u64::MAX));
    }

    #[test]
    fn decimal_literals_and_special_floats() {
        let out = jq("[1.5, 1e2, nan, infinite, -infinite]")
            .run_one(&Value::Null)
            .unwrap();
        assert_eq!(out, json!([1.5, 100.0, null, f64::MAX, f64::MIN]));
        let big = jq("18446744073709551615 + 1")
            .run_one(&Value::Null)
            .unwrap();
        assert_eq!(big, json!(18446744073709551616.0));
    }

    #[test]
    fn object_key_order_is_kept_both_ways() {
        let input = json!({"zeta": 1, "alpha": 2, "mid": 3});
        let out = jq(". + {beta: 4}").run_one(&input).unwrap();
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["zeta", "alpha", "mid", "beta"]);
    }

    #[test]
    fn run_returns_every_output() {
        let out = jq(".result.hits[] | .name").run(&search_result()).unwrap();
        assert_eq!(out, [json!("alpha"), json!("beta"), json!("gamma")]);
        assert_eq!(jq("empty").run(&json!(1)).unwrap(), Vec::<Value>::new());
    }

    #[test]
    fn run_one_takes_the_first_output_and_stops() {
        // The error after the first output is never reached.
        assert_eq!(
            jq("1, error(\"later\")").run_one(&Value::Null).unwrap(),
            json!(1)
        );
        // `range(infinite)` would never end if later outputs were computed.
        assert_eq!(
            jq("range(infinite)").run_one(&Value::Null).unwrap(),
            json!(0)
        );
    }

    #[rstest]
    #[case::empty("empty")]
    #[case::select_false("select(false)")]
    #[case::halt("halt")]
    fn run_one_without_output_is_null(#[case] src: &str) {
        assert_eq!(jq(src).run_one(&json!({"a": 1})).unwrap(), Value::Null);
    }

    #[test]
    fn halt_keeps_earlier_outputs() {
        assert_eq!(
            jq("1, 2, halt, 3").run(&Value::Null).unwrap(),
            [json!(1), json!(2)]
        );
    }

    #[rstest]
    #[case::zero(json!(0), true)]
    #[case::empty_string(json!(""), true)]
    #[case::empty_array(json!([]), true)]
    #[case::empty_object(json!({}), true)]
    #[case::true_(json!(true), true)]
    #[case::string(json!("no"), true)]
    #[case::false_(json!(false), false)]
    #[case::null(json!(null), false)]
    fn truthiness(#[case] v: Value, #[case] want: bool) {
        assert_eq!(truthy(&v), want);
        assert_eq!(jq(".").test(&v).unwrap(), want);
    }

    #[rstest]
    #[case::no_output("empty", false)]
    #[case::first_output_counts("false, true", false)]
    #[case::first_true("true, false", true)]
    #[case::comparison(".count > 0", true)]
    #[case::absent_field(".missing", false)]
    fn test_uses_the_first_output(#[case] src: &str, #[case] want: bool) {
        assert_eq!(jq(src).test(&json!({"count": 2})).unwrap(), want);
    }

    #[rstest]
    #[case::index_number(".a.b", json!({"a": 1}), "cannot index 1 with \"b\"")]
    #[case::error_string("error(\"boom\")", json!(null), "boom")]
    #[case::error_object("error({code: 7})", json!(null), "{\"code\":7}")]
    #[case::iterate_number(".[]", json!(5), "cannot use 5 as iterable (array or object)")]
    #[case::add_mismatch(". + 1", json!("s"), "cannot calculate \"s\" + 1")]
    #[case::halt_error("halt_error", json!("bye"), "the program stopped with `halt_error` (exit code 5)")]
    fn runtime_errors_read_well(#[case] src: &str, #[case] input: Value, #[case] want: &str) {
        let program = jq(src);
        assert_eq!(program.run_one(&input).unwrap_err().message, want);
        assert_eq!(program.run(&input).unwrap_err().to_string(), want);
    }

    #[test]
    fn a_test_error_is_an_error() {
        assert!(jq(".a.b > 0").test(&json!({"a": 1})).is_err());
    }

    #[test]
    fn long_runtime_messages_are_cut() {
        let input = json!({"a": "x".repeat(10_000)});
        let err = jq(".a.b").run(&json!([input])).unwrap_err();
        assert!(
            err.message.len() <= MAX_MESSAGE_LEN + '…'.len_utf8(),
            "{}",
            err.message.len()
        );
        assert!(err.message.ends_with('…'));
    }

    #[test]
    fn pathologically_deep_values_are_errors_not_crashes() {
        let err = jq("reduce range(2000) as $i (null; [.])")
            .run_one(&Value::Null)
            .unwrap_err();
        assert!(err.message.contains("nested more than"), "{}", err.message);
    }

    #[test]
    fn too_deep_inputs_are_errors() {
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH + 1 {
            deep = json!([deep]);
        }
        let err = jq(".").run(&deep).unwrap_err();
        assert!(err.message.contains("input is nested"), "{}", err.message);
    }

    #[test]
    fn unknown_function_points_at_its_name_with_a_hint() {
        let src = ".items | lenght > 0";
        let err = compile_err(src);
        let [p] = err.problems.as_slice() else {
            panic!("{err:?}")
        };
        assert_eq!(pointed(src, p), "lenght");
        assert_eq!(p.offset, 9);
        assert_eq!(p.message, "undefined function `lenght/0`");
        assert_eq!(p.hint.as_deref(), Some("did you mean `length`?"));
        assert_eq!(
            err.to_string(),
            "undefined function `lenght/0` (did you mean `length`?)"
        );
    }

    #[test]
    fn wrong_arity_says_what_the_function_takes() {
        let src = "map";
        let p = compile_err(src).problems.remove(0);
        assert_eq!(p.message, "undefined function `map/0`");
        assert_eq!(p.hint.as_deref(), Some("`map` takes 1 argument"));
        let p = compile_err(". | test").problems.remove(0);
        assert_eq!(p.hint.as_deref(), Some("`test` takes 1 or 2 arguments"));
    }

    #[test]
    fn undefined_variable_points_at_it() {
        let src = ".a as $x | [$x, $y]";
        let err = compile_err(src);
        let [p] = err.problems.as_slice() else {
            panic!("{err:?}")
        };
        assert_eq!(pointed(src, p), "$y");
        assert_eq!(p.offset, 16);
        assert_eq!(p.message, "undefined variable `$y`");
    }

    #[test]
    fn several_problems_are_all_reported_in_order() {
        let src = "[$b, foo, $a]";
        let err = compile_err(src);
        let pointed: Vec<String> = err.problems.iter().map(|p| pointed(src, p)).collect();
        assert_eq!(pointed, ["$b", "foo", "$a"]);
        assert!(err.to_string().ends_with("(and 2 more)"), "{err}");
    }

    #[rstest]
    #[case::stray_brace(".a | } | .b", "}", "unexpected `}` with no matching `{`")]
    #[case::missing_then("if . 1 else 2 end", "1", "expected `then`, found `1`")]
    #[case::missing_comma("{a: 1 b: 2} | .a", "b", "expected `,` or `}`, found `b`")]
    #[case::extra_token(".a; .b", ";", "unexpected token `;`")]
    #[case::trailing_pipe(".a |", "", "expected a filter, found the end of the program")]
    #[case::bad_char(".a & .b", "&", "unexpected character `&`")]
    #[case::wrong_close("[1, 2)", ")", "expected `]` to close `[`, found `)`")]
    #[case::unclosed_paren(".a | (1 + 2", "(", "unclosed `(`")]
    #[case::unterminated_string(".a + \"abc", "\"", "unterminated string")]
    #[case::bad_escape("\"a\\qb\"", "\\q", "invalid escape sequence `\\q` in a string")]
    fn syntax_errors_point_into_the_program(
        #[case] src: &str,
        #[case] at: &str,
        #[case] message: &str,
    ) {
        let err = compile_err(src);
        let p = err.first().unwrap();
        assert_eq!(p.message, message, "{err:?}");
        assert_eq!(pointed(src, p), at, "{err:?}");
    }

    #[test]
    fn offsets_are_bytes_after_multibyte_text() {
        let src = "\"héllo ✓\" | nope";
        let p = compile_err(src).problems.remove(0);
        assert_eq!(p.offset, src.find("nope").unwrap());
        assert_eq!(pointed(src, &p), "nope");
    }

    #[test]
    fn modules_and_inputs_are_not_available() {
        assert!(
            compile_err("include \"lib\"; .")
                .to_string()
                .contains("cannot load module `lib`")
        );
        assert!(
            compile_err("import \"data\" as $d; $d")
                .to_string()
                .contains("not supported")
        );
        assert_eq!(
            compile_err("input").first().unwrap().message,
            "undefined function `input/0`"
        );
    }

    #[test]
    fn a_sandboxed_program_cannot_read_the_environment_or_halt() {
        let sandboxed = |src: &str| {
            let limits = JqLimits {
                sandboxed: true,
                ..JqLimits::default()
            };
            JqProgram::compile_within(src, limits)
        };
        for src in [
            "env.HOME",
            "env | keys",
            "halt",
            "[env[]] | tostring | explode",
            "debug",
        ] {
            let err = sandboxed(src).err();
            let err = err.unwrap_or_else(|| panic!("`{src}` compiled in the sandbox"));
            assert!(
                err.problems.iter().all(|p| p.offset <= src.len()),
                "{src}: {err:?}"
            );
        }
        // Everything else compiles as before, and outside the sandbox `env`
        // is back.
        assert!(sandboxed(".a | tostring | explode").is_ok());
        assert!(JqProgram::compile("env | length").is_ok());
    }

    #[test]
    fn env_var_hint() {
        let p = compile_err("$ENV.HOME").problems.remove(0);
        assert_eq!(
            p.hint.as_deref(),
            Some("use `env` to read environment variables")
        );
    }

    #[test]
    fn keeps_its_source_and_compares_by_it() {
        let p = jq(".a | {b}");
        assert_eq!(p.source(), ".a | {b}");
        assert_eq!(p.clone(), jq(".a | {b}"));
        assert_ne!(p, jq(".a"));
        assert_eq!(format!("{p:?}"), "JqProgram(\".a | {b}\")");
    }

    #[test]
    fn program_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync::<JqProgram>();
        assert_send_sync::<JqCompileError>();
        assert_send_sync::<JqRunError>();
    }

    #[test]
    fn runs_concurrently_from_several_threads() {
        let program = jq("[.[] | select(. % 3 == 0)] | length");
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let program = program.clone();
                std::thread::spawn(move || {
                    (0..50)
                        .map(|i| {
                            let n: u64 = 30 * (t + 1) + i;
                            let input = Value::Array((0..n).map(Value::from).collect());
                            (n, program.run_one(&input))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            for (n, out) in handle.join().unwrap() {
                assert_eq!(out.unwrap(), json!(n.div_ceil(3)));
            }
        }
    }

    #[test]
    fn large_inputs_convert_in_linear_time() {
        let big = Value::Array(
            (0..200_000)
                .map(|i| json!({"id": i, "name": format!("item-{i}")}))
                .collect(),
        );
        let out = jq("map(.id) | add").run_one(&big).unwrap();
        assert_eq!(out, json!((0..200_000_i64).sum::<i64>()));
        let wide: Map<String, Value> = (0..100_000).map(|i| (format!("k{i}"), json!(i))).collect();
        let out = jq(".").run_one(&Value::Object(wide.clone())).unwrap();
        assert_eq!(out, Value::Object(wide));
    }

    /// Arbitrary JSON, a few levels deep.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((".{0,6}", inner), 0..6)
                    .prop_map(|kvs| Value::Object(kvs.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn compile_never_panics_and_points_inside_the_program(
            src in r#"[.a-z$@()\[\]{}|,;:"\\ 0-9?=<>+*/%é-]{0,30}"#
        ) {
            if let Err(err) = JqProgram::compile(&src) {
                prop_assert!(!err.problems.is_empty());
                for p in &err.problems {
                    prop_assert!(p.offset + p.len <= src.len(), "{p:?} in {src:?}");
                    prop_assert!(src.is_char_boundary(p.offset), "{p:?} in {src:?}");
                    prop_assert!(src.is_char_boundary(p.offset + p.len), "{p:?} in {src:?}");
                    prop_assert!(!p.message.is_empty());
                }
            }
        }

        #[test]
        fn identity_round_trips_exactly(v in json_value()) {
            let out = jq(".").run_one(&v).unwrap();
            prop_assert_eq!(out.to_string(), v.to_string());
        }
    }
}
