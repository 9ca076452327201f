//! Compile errors of a jq program, each with a byte range in its text and,
//! where one is near, a "did you mean".

use jaq_core::compile::Undefined;
use jaq_core::load;

use std::fmt;

use jaq_core::data;
use jaq_json::Val;

use super::limits;
use crate::diag::suggest;

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
    pub(super) fn new(mut problems: Vec<JqProblem>) -> Self {
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

/// Every filter name the prelude and natives define, with its arity, for
/// "did you mean" hints. Internal helpers (`scan_`, `error_empty`) are left
/// out.
fn known_filters() -> Vec<(&'static str, usize)> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .map(|def| (def.name, def.args.len()));
    let natives = jaq_core::funs::<data::JustLut<Val>>()
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

/// Refuses a program nested too deeply for jaq's recursive lexer, parser
/// and compiler (see [`limits`]). `Ok` carries how many tokens the program
/// has, an upper bound on how deep its syntax tree can be.
pub(super) fn check_nesting(src: &str) -> Result<usize, JqCompileError> {
    if let Some(at) = limits::check_nesting(src) {
        return Err(JqCompileError::new(vec![JqProblem {
            offset: at,
            len: first_char(&src[at..]).len(),
            message: format!(
                "the program nests brackets more than {} levels deep",
                limits::MAX_NESTING
            ),
            hint: None,
        }]));
    }
    // A program that does not lex gets its errors from the loader.
    Ok(load::lex::Lexer::new(src)
        .lex()
        .map_or(0, |tokens| limits::count_tokens(&tokens)))
}

/// How deep `src`'s syntax tree is, or the error that it is too deep to
/// compile. Runs on a stack with room for the parse.
pub(super) fn check_depth(src: &str) -> Result<usize, JqCompileError> {
    // A program that does not parse as a term gets its errors from the
    // loader, which parses it again.
    let depth = load::parse(src, |p| p.term()).map_or(0, |t| limits::tree_depth(&t));
    if depth > limits::MAX_TREE_DEPTH {
        return Err(JqCompileError::new(vec![JqProblem {
            offset: 0,
            len: src.len(),
            message: format!(
                "the program is {depth} terms deep (a chain of that many operators, keys or branches?); programs are compiled up to {} deep",
                limits::MAX_TREE_DEPTH
            ),
            hint: Some("split it into several nodes or `def`s".to_owned()),
        }]));
    }
    Ok(depth)
}

pub(super) fn load_errors(src: &str, errs: load::Errors<&str, ()>) -> JqCompileError {
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
pub(super) fn undefined_problem(src: &str, name: &str, what: &Undefined) -> JqProblem {
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
