//! What a jq program may spend: steps, time, stack, memory and nesting.
//!
//! A program from a pipeline file or a `serve` caller can be written never
//! to end (`last(range(1e12))`, `[repeat(1)]`, `def f: f; f`) or to recurse
//! until the thread's stack overflows (`def f: 1 + f; f`), which aborts the
//! whole process. jaq evaluates lazily and has no budget of its own, so
//! pipewright keeps a patched jaq-core (`vendor/jaq-core`) that calls a hook
//! on the evaluating thread before each evaluation step. The hook here
//! counts steps, looks at the clock every [`CLOCK_EVERY`] steps and at the
//! stack every step; past a limit it halts the program. jaq's `try` does not
//! catch a halt, so the program cannot swallow the stop and go on.
//!
//! A few steps can also double a string or an array (`reduce range(40) as
//! $i ("x"; . + .)` asks for a terabyte, and a failed allocation aborts the
//! process), or nest a value a million levels deep (`reduce range(1e6) as
//! $i (null; [.])`, whose drop, printing or comparison would overflow the
//! stack). So each run also arms jaq-core's memory budget
//! (`jaq_core::mem`): the patched jaq-json and jaq-std ask it before every
//! allocation whose size the program controls, count the bytes values hold
//! and give them back as values are freed, and refuse a value nested more
//! than [`MAX_DEPTH`] levels. A refusal fails that operation and halts the
//! program at its next step, as the other limits do.
//!
//! The program text is bounded too: jaq parses and compiles recursively, so
//! [`check_nesting`] refuses brackets nested deeper than [`MAX_NESTING`]
//! before the parser sees them, and [`check_depth`] refuses a syntax tree
//! deeper than [`MAX_TREE_DEPTH`] (a chain of 10,000 `+` is 10,000 deep).

use std::cell::Cell;
use std::time::{Duration, Instant};

use jaq_core::load::lex::{StrPart, Tok, Token};
use jaq_core::load::parse::{BinaryOp, Pattern, Term};
use jaq_core::mem::Refusal;
use jaq_core::path::Part;

/// Steps a program may take, unless `PIPEWRIGHT_JQ_STEPS` says otherwise.
/// A step is one term starting to run on one value: `[range(1e6)]` takes
/// about two million, `map(select(.ok))` over 100,000 items about 400,000.
pub const DEFAULT_STEPS: u64 = 20_000_000;

/// Seconds a program may run, unless `PIPEWRIGHT_JQ_SECONDS` says otherwise.
pub const DEFAULT_SECONDS: u64 = 10;

/// MiB a program's values may hold at once, unless `PIPEWRIGHT_JQ_MEMORY_MB`
/// says otherwise. Far above what a transform of tool results needs (the
/// largest message a server may send is 16 MiB, and a value in jaq takes a
/// few times its JSON text), and low enough that `serve`'s workers, four
/// programs at a time on a small machine, stay within a few GiB. The count
/// is of the values' memory, not the process's: allocator overhead and the
/// evaluation's own bookkeeping come on top.
pub const DEFAULT_MEMORY_MB: u64 = 256;

/// Levels of arrays and objects a value may nest, inside jq and crossing
/// into and out of it. JSON read from the wire nests at most 128 (serde's
/// limit); deeper values come from programs that build them in a loop.
pub const MAX_DEPTH: usize = 512;

/// Brackets (`(`, `[`, `{`, `\(`) nested deeper than this are refused
/// before parsing.
pub const MAX_NESTING: usize = 256;

/// A syntax tree deeper than this is refused before compiling.
pub const MAX_TREE_DEPTH: usize = 2_000;

/// The clock is read once every this many steps.
const CLOCK_EVERY: u64 = 4096;

/// Evaluation stops when less stack than this is left on the thread.
const RED_ZONE: usize = 256 * 1024;

/// Stack a program is given at least, per level of its syntax tree and in
/// all; a thread with less left runs the program on a fresh stack.
const STACK_PER_LEVEL: usize = 32 * 1024;
const STACK_BASE: usize = 1024 * 1024;

/// The halt code the hook stops a program with; [`take_stop`] tells a stop
/// from a `halt_error` the program raised itself.
pub const HALT_CODE: i32 = 0x7077_6a71;

/// What one program may spend, as the driver's settings say
/// (`PIPEWRIGHT_JQ_STEPS`, `PIPEWRIGHT_JQ_SECONDS`,
/// `PIPEWRIGHT_JQ_MEMORY_MB`; `None` is the default), and whether it may
/// reach outside its input. The loader compiles each program within them
/// (`JqProgram::compile_within`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JqLimits {
    pub steps: Option<u64>,
    pub seconds: Option<u64>,
    pub memory_mb: Option<u64>,
    /// The program comes from a caller that is not trusted (`serve`'s
    /// `run_pipeline`): it compiles without the filters that read the
    /// process's environment, end the process or write to its stderr
    /// (`env`, `halt`, `debug`, `stderr`), so a program that calls one
    /// does not compile.
    pub sandboxed: bool,
}

/// Why a program was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Steps(u64),
    Time(Duration),
    Stack,
    /// jaq refused memory or nesting (see `jaq_core::mem`).
    Refused(jaq_core::mem::Refusal),
}

#[derive(Clone, Copy)]
struct Budget {
    steps_left: u64,
    steps: u64,
    started: Instant,
    time: Duration,
    stop: Option<Stop>,
}

// The budget of the program being evaluated on this thread (set from the
// program's own limits by `guarded`, restored after): not configuration,
// so it may be thread-local.
thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
    /// Limits a test sets for its own thread, over the program's.
    #[cfg(test)]
    static TEST_LIMITS: Cell<Option<(u64, Duration)>> = const { Cell::new(None) };
    /// The memory limit a test sets for its own thread, in bytes.
    #[cfg(test)]
    static TEST_MEMORY: Cell<Option<usize>> = const { Cell::new(None) };
    /// What jaq's memory count was at the end of the last run on this
    /// thread, with every value of the run dropped: (held, over-credited).
    #[cfg(test)]
    static LAST_COUNT: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// The steps and time of `given` (else the defaults).
fn limits(given: JqLimits) -> (u64, Duration) {
    #[cfg(test)]
    if let Some(limits) = TEST_LIMITS.with(Cell::get) {
        return limits;
    }
    (
        given.steps.unwrap_or(DEFAULT_STEPS),
        Duration::from_secs(given.seconds.unwrap_or(DEFAULT_SECONDS)),
    )
}

/// The memory limit of `given` (else the default), in bytes.
fn memory_limit(given: JqLimits) -> usize {
    #[cfg(test)]
    if let Some(bytes) = TEST_MEMORY.with(Cell::get) {
        return bytes;
    }
    let mb = given.memory_mb.unwrap_or(DEFAULT_MEMORY_MB);
    usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

/// Called by jaq before each step; `Some(HALT_CODE)` stops the program.
fn hook() -> Option<i32> {
    BUDGET.with(|cell| {
        let mut b = cell.get()?;
        if b.stop.is_some() {
            return Some(HALT_CODE);
        }
        b.steps_left = b.steps_left.saturating_sub(1);
        let stop = if let Some(refusal) = jaq_core::mem::refusal() {
            Some(Stop::Refused(refusal))
        } else if b.steps_left == 0 {
            Some(Stop::Steps(b.steps))
        } else if b.steps_left.is_multiple_of(CLOCK_EVERY) && b.started.elapsed() > b.time {
            Some(Stop::Time(b.time))
        } else if stacker::remaining_stack().is_some_and(|left| left < RED_ZONE) {
            Some(Stop::Stack)
        } else {
            None
        };
        b.stop = stop;
        cell.set(Some(b));
        stop.map(|_| HALT_CODE)
    })
}

/// Runs `f` (one evaluation of a program whose syntax tree is `depth`
/// deep) under the limits `given`, on a stack with room for it. When a limit
/// stopped the program, `stopped` of its message replaces what `f`
/// returned: a refusal of memory fails one operation, which the program may
/// have caught, and halts the program only at its next step, which it may
/// not have taken.
pub fn guarded<T, E>(
    (depth, given): (usize, JqLimits),
    f: impl FnOnce() -> Result<T, E>,
    stopped: impl FnOnce(String) -> E,
) -> Result<T, E> {
    struct Restore(Option<Budget>, Option<jaq_core::step::Hook>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|cell| cell.set(self.0));
            jaq_core::step::set_hook(self.1);
        }
    }
    let (steps, time) = limits(given);
    let budget = Budget {
        steps_left: steps,
        steps,
        started: Instant::now(),
        time,
        stop: None,
    };
    let _restore = Restore(
        BUDGET.with(|cell| cell.replace(Some(budget))),
        jaq_core::step::set_hook(Some(hook)),
    );
    let _memory = jaq_core::mem::arm(memory_limit(given), MAX_DEPTH);
    let out = with_stack(depth, f);
    #[cfg(test)]
    LAST_COUNT.with(|c| c.set(jaq_core::mem::used()));
    match take_stop() {
        Some(stop) => Err(stopped(stop)),
        None => out,
    }
}

/// Runs `f` where at least enough stack for a tree `depth` deep is left.
pub fn with_stack<T>(depth: usize, f: impl FnOnce() -> T) -> T {
    let need = STACK_BASE + depth.saturating_mul(STACK_PER_LEVEL);
    stacker::maybe_grow(need, need * 2, f)
}

/// Why the [`guarded`] run on this thread was stopped, as the error a user
/// reads; `None` when no limit stopped it.
pub fn take_stop() -> Option<String> {
    let stop = BUDGET.with(|cell| {
        let mut b = cell.get()?;
        let stop = b.stop.take();
        cell.set(Some(b));
        stop
    });
    let stop = stop.or_else(|| jaq_core::mem::refusal().map(Stop::Refused))?;
    Some(match stop {
        Stop::Steps(n) => format!(
            "the jq program was stopped after {n} steps (an endless `repeat`, `range` or recursion?); PIPEWRIGHT_JQ_STEPS=N raises the limit"
        ),
        Stop::Time(t) => format!(
            "the jq program was stopped after {} s; PIPEWRIGHT_JQ_SECONDS=N raises the limit",
            t.as_secs()
        ),
        Stop::Stack => "the jq program recursed too deeply and was stopped before the stack ran out (a recursive `def` without an end?)".to_owned(),
        Stop::Refused(Refusal::Memory {
            limit,
            used,
            asked,
            what,
        }) => format!(
            "the jq program was stopped: it would use more than {} of memory ({what} asked for {} more, with {} held); PIPEWRIGHT_JQ_MEMORY_MB=N raises the limit",
            mib(limit),
            mib(asked),
            mib(used),
        ),
        Stop::Refused(Refusal::Depth { limit }) => format!(
            "the jq program was stopped: it built a value nested more than {limit} levels deep (an array or object wrapped in itself in a loop?)"
        ),
    })
}

/// `bytes` in MiB, as a user reads them: `256 MiB`, `0.5 MiB`, `12.3 MiB`.
fn mib(bytes: usize) -> String {
    let mib = bytes as f64 / f64::from(1 << 20);
    if mib.fract() == 0.0 {
        format!("{mib:.0} MiB")
    } else if mib >= 0.1 {
        format!("{mib:.1} MiB")
    } else {
        format!("{} bytes", bytes)
    }
}

/// The byte offset of the first bracket nested deeper than [`MAX_NESTING`],
/// counting `(`, `[`, `{` and string interpolations `\(` outside strings'
/// plain text. jaq's lexer and parser recurse on each level.
pub fn check_nesting(src: &str) -> Option<usize> {
    // Each open level remembers whether it is a `\(` inside a string, so
    // its `)` returns to the string.
    let mut stack: Vec<bool> = Vec::new();
    let mut in_string = false;
    let mut chars = src.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let opened = if in_string {
            match c {
                '"' => {
                    in_string = false;
                    None
                }
                '\\' => match chars.next() {
                    Some((_, '(')) => {
                        in_string = false;
                        Some(true)
                    }
                    _ => None,
                },
                _ => None,
            }
        } else {
            match c {
                '"' => {
                    in_string = true;
                    None
                }
                '#' => {
                    for (_, c) in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                    None
                }
                '(' | '[' | '{' => Some(false),
                ')' | ']' | '}' => {
                    if stack.pop() == Some(true) {
                        in_string = true;
                    }
                    None
                }
                _ => None,
            }
        };
        if let Some(interpolation) = opened {
            stack.push(interpolation);
            if stack.len() > MAX_NESTING {
                return Some(at);
            }
        }
    }
    None
}

/// How many tokens `tokens` holds, those inside brackets and string
/// interpolations included: a bound on how deep the syntax tree can be.
pub fn count_tokens(tokens: &[Token<&str>]) -> usize {
    tokens
        .iter()
        .map(|Token(_, tok)| {
            1 + match tok {
                Tok::Block(inner) => count_tokens(inner),
                Tok::Str(parts) => parts
                    .iter()
                    .map(|p| match p {
                        StrPart::Term(t) => count_tokens(std::slice::from_ref(t)),
                        _ => 1,
                    })
                    .sum(),
                _ => 0,
            }
        })
        .sum()
}

/// How deep the syntax tree of `term` is once compiled, walked without
/// recursion (the tree may be deeper than the stack allows to recurse).
/// The entries of an object, the parts of a string and the branches of an
/// `if` compile to a chain, so each counts as one level more than the last.
pub fn tree_depth(term: &Term<&str>) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(term, 1usize)];
    while let Some((t, d)) = todo.pop() {
        deepest = deepest.max(d);
        let mut nth = 0;
        children(t, &mut |child| {
            nth += 1;
            let chained = matches!(t, Term::Obj(_) | Term::Str(..) | Term::IfThenElse(..));
            todo.push((child, d + if chained { nth } else { 1 }));
        });
    }
    deepest
}

/// Calls `push` with every direct sub-term of `t`.
fn children<'t, 's>(t: &'t Term<&'s str>, push: &mut impl FnMut(&'t Term<&'s str>)) {
    match t {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Var(_) | Term::Break(_) => {}
        Term::Str(_, parts) => {
            for part in parts {
                if let StrPart::Term(t) = part {
                    push(t);
                }
            }
        }
        Term::Arr(t) => t.iter().for_each(|t| push(t)),
        Term::Obj(kvs) => {
            for (k, v) in kvs {
                push(k);
                v.iter().for_each(&mut *push);
            }
        }
        Term::Neg(t) | Term::Label(_, t) => push(t),
        Term::BinOp(l, op, r) => {
            push(l);
            push(r);
            if let BinaryOp::Pipe(Some(p)) = op {
                pattern_terms(p, push);
            }
        }
        Term::Fold(_, xs, p, args) => {
            push(xs);
            pattern_terms(p, push);
            args.iter().for_each(&mut *push);
        }
        Term::TryCatch(t, c) => {
            push(t);
            c.iter().for_each(|c| push(c));
        }
        Term::IfThenElse(branches, otherwise) => {
            for (c, t) in branches {
                push(c);
                push(t);
            }
            otherwise.iter().for_each(|t| push(t));
        }
        Term::Def(defs, t) => {
            defs.iter().for_each(|d| push(&d.body));
            push(t);
        }
        Term::Call(_, args) => args.iter().for_each(&mut *push),
        Term::Path(t, path) => {
            push(t);
            for (part, _) in &path.0 {
                match part {
                    Part::Index(i) => push(i),
                    Part::Range(from, to) => {
                        from.iter().for_each(&mut *push);
                        to.iter().for_each(&mut *push);
                    }
                }
            }
        }
    }
}

fn pattern_terms<'t, 's>(p: &'t Pattern<&'s str>, push: &mut impl FnMut(&'t Term<&'s str>)) {
    let mut todo = vec![p];
    while let Some(p) = todo.pop() {
        match p {
            Pattern::Var(_) => {}
            Pattern::Arr(ps) => todo.extend(ps),
            Pattern::Obj(kvs) => kvs.iter().for_each(|(k, p)| {
                push(k);
                todo.push(p);
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::jq::JqProgram;
    use serde_json::json;

    /// Runs `src` on `null` with `steps` and `secs` as the limits.
    fn run_with(src: &str, steps: u64, secs: u64) -> Result<serde_json::Value, String> {
        TEST_LIMITS.with(|l| l.set(Some((steps, Duration::from_secs(secs)))));
        let out = JqProgram::compile(src)
            .map_err(|e| e.to_string())?
            .run_one(&json!(null))
            .map_err(|e| e.to_string());
        TEST_LIMITS.with(|l| l.set(None));
        out
    }

    #[rstest::rstest]
    #[case::range("last(range(1e12))")]
    #[case::repeat("[repeat(1)] | length")]
    #[case::tail_recursion("def f: f; f")]
    #[case::recurse("[1 | recurse(. + 1)] | length")]
    #[case::while_("[0 | while(true; . + 1)] | length")]
    #[case::zero_step_range("last(range(0; 1; 0))")]
    #[case::try_cannot_swallow_the_stop("try last(range(1e12)) catch \"caught\"")]
    #[case::nor_can_alternative("last(range(1e12)) // \"other\"")]
    #[case::nor_a_retry_loop("def f: try last(range(1e12)) catch f; f")]
    fn an_endless_program_is_stopped_after_its_steps(#[case] src: &str) {
        let err = run_with(src, 100_000, 600).unwrap_err();
        assert!(err.contains("stopped after 100000 steps"), "{src}: {err}");
        assert!(err.contains("PIPEWRIGHT_JQ_STEPS"), "{err}");
    }

    #[test]
    fn a_program_past_its_time_is_stopped() {
        let err = run_with("def f: f; f", u64::MAX, 1).unwrap_err();
        assert!(err.contains("stopped after 1 s"), "{err}");
        assert!(err.contains("PIPEWRIGHT_JQ_SECONDS"), "{err}");
    }

    #[test]
    fn a_program_within_its_limits_runs_to_the_end() {
        let sum = run_with("reduce range(1000) as $i (0; . + $i)", 100_000, 600);
        assert_eq!(sum, Ok(json!(499_500)));
        // The stop of one run does not stay behind for the next.
        assert!(run_with("last(range(1e12))", 1000, 600).is_err());
        assert_eq!(
            run_with("[limit(3; repeat(1))]", 1000, 600),
            Ok(json!([1, 1, 1]))
        );
    }

    /// `def f: 1 + f; f` aborted the whole process with a stack overflow;
    /// it is an error now, on the main thread's 8 MiB and on a tokio
    /// worker's 2 MiB alike.
    #[rstest::rstest]
    #[case::plus("def f: 1 + f; f")]
    #[case::in_an_array("def f: [f]; f")]
    #[case::caught("def f: try (1 + f) catch f; f")]
    #[case::nested("def g: def h: 1 + g; 2 + h; g")]
    fn unbounded_recursion_is_an_error_not_a_crash(#[case] src: &str) {
        for stack in [2 << 20, 8 << 20] {
            let src = src.to_owned();
            let err = std::thread::Builder::new()
                .stack_size(stack)
                .spawn(move || run_with(&src, u64::MAX, 600))
                .unwrap()
                .join()
                .expect("the thread did not crash")
                .unwrap_err();
            assert!(err.contains("recursed too deeply"), "{err}");
        }
    }

    #[rstest::rstest]
    #[case::parens("(".repeat(100_000) + "1" + &")".repeat(100_000), "nests brackets more than 256", 256)]
    #[case::arrays("[".repeat(300) + &"]".repeat(300), "nests brackets more than 256", 256)]
    #[case::interpolation("\"\\(".repeat(300) + "1" + &")\"".repeat(300), "nests brackets", 769)]
    #[case::chain(vec!["1"; 100_000].join("+"), "100000 terms deep", 0)]
    #[case::pipes(vec!["."; 100_000].join("|"), "terms deep", 0)]
    #[case::ifs("if . then ".repeat(3000) + "1" + &" else 2 end".repeat(3000), "terms deep", 0)]
    #[case::object(format!("{{{}}}", (0..5000).map(|i| format!("a{i}: {i}")).collect::<Vec<_>>().join(", ")), "terms deep", 0)]
    fn a_program_too_deep_to_compile_is_refused_with_a_position(
        #[case] src: String,
        #[case] message: &str,
        #[case] offset: usize,
    ) {
        let err = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || JqProgram::compile(&src).map(|_| ()))
            .unwrap()
            .join()
            .expect("the thread did not crash")
            .unwrap_err();
        let first = err.first().unwrap();
        assert!(first.message.contains(message), "{}", first.message);
        assert_eq!(first.offset, offset);
    }

    #[test]
    fn long_but_shallow_programs_still_compile_and_run() {
        let fields = (0..300).map(|i| format!("k{i}: {i}")).collect::<Vec<_>>();
        let src = format!("{{{}}} | length", fields.join(", "));
        assert_eq!(run_with(&src, u64::MAX, 600), Ok(json!(300)));
        let chain = format!("[{}] | length", vec!["1"; 1500].join(", "));
        assert_eq!(run_with(&chain, u64::MAX, 600), Ok(json!(1500)));
    }
}

/// Memory and nesting: what a few steps can build.
#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::lang::jq::JqProgram;
    use serde_json::{Value, json};

    const MIB: usize = 1 << 20;

    /// The start of `v`'s text, for a failure's message.
    fn start(v: &impl std::fmt::Debug) -> String {
        let text = format!("{v:?}");
        text.chars().take(300).collect()
    }

    /// The error of `out`, failing with the start of the value when there
    /// is none.
    fn error(src: &str, out: Result<Value, String>) -> String {
        match out {
            Ok(v) => panic!("{src} gave {}", start(&v)),
            Err(e) => e,
        }
    }

    /// Runs `src` on `null` on a fresh thread with `stack` bytes of stack,
    /// with no step or time limit to speak of and `memory` bytes of memory.
    fn run_on(stack: usize, memory: usize, src: &str) -> Result<Value, String> {
        let src = src.to_owned();
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || {
                TEST_LIMITS.with(|l| l.set(Some((u64::MAX, Duration::from_secs(600)))));
                TEST_MEMORY.with(|m| m.set(Some(memory)));
                JqProgram::compile(&src)
                    .map_err(|e| e.to_string())?
                    .run_one(&json!(null))
                    .map_err(|e| e.to_string())
            })
            .unwrap()
            .join()
            .expect("the thread did not crash")
    }

    /// What jaq's memory count was when `src` ended, its values dropped:
    /// (still counted, given back without having been counted).
    fn count_after(src: &str, input: &Value) -> (usize, usize) {
        TEST_LIMITS.with(|l| l.set(Some((u64::MAX, Duration::from_secs(600)))));
        TEST_MEMORY.with(|m| m.set(Some(64 * MIB)));
        let program = JqProgram::compile(src).unwrap();
        let out = program.run(input);
        assert!(out.is_ok(), "{src}: {}", start(&out));
        LAST_COUNT.with(Cell::get).unwrap()
    }

    /// Each of these built a value a million levels deep, whose drop,
    /// printing, comparison or parsing overflowed the stack and aborted
    /// the whole process (`serve` included); now the value is refused as
    /// it passes 512 levels, on a tokio worker's 2 MiB and on 8 MiB.
    #[rstest::rstest]
    #[case::length("reduce range(1000000) as $i (null; [.]) | length")]
    #[case::tojson("reduce range(1000000) as $i (null; [.]) | tojson")]
    #[case::interpolation("reduce range(1000000) as $i (null; [.]) | \"\\(.)\"")]
    #[case::equal("reduce range(1000000) as $i (null; [.]) | . == .")]
    #[case::sort("reduce range(1000000) as $i (null; [.]) | [., [.]] | sort")]
    #[case::unique("reduce range(1000000) as $i (null; [.]) | [., .] | unique")]
    #[case::objects("reduce range(1000000) as $i (null; {a: .}) | tostring")]
    #[case::update("reduce range(1000000) as $i ([0]; .[0] = .) | length")]
    #[case::assign("reduce range(1000000) as $i ({}; .a = .) | length")]
    #[case::merge("reduce range(1000000) as $i ({}; {a: .} * {b: .}) | length")]
    #[case::fromjson("\"[\" * 100000 | fromjson")]
    #[case::fromjson_objects("\"{\\\"a\\\":\" * 100000 | fromjson")]
    #[case::caught("try (reduce range(1000000) as $i (null; [.])) catch 0")]
    fn a_value_nested_past_the_limit_is_an_error_not_a_crash(#[case] src: &str) {
        for stack in [2 * MIB, 8 * MIB] {
            let err = error(src, run_on(stack, 64 * MIB, src));
            assert!(
                err.contains("nested more than 512 levels deep"),
                "{src}: {err}"
            );
        }
    }

    /// Values as deep as the limit are fine, in and out of jq.
    #[test]
    fn a_value_as_deep_as_the_limit_still_works() {
        let src =
            "reduce range(511) as $i (0; [.]) | [., (tojson | length), (. == .), ([..] | length)]";
        let out = run_on(2 * MIB, 64 * MIB, src).unwrap();
        assert_eq!(out[1], json!(511 * 2 + 1));
        assert_eq!(out[2], json!(true));
        assert_eq!(out[3], json!(512));
        let mut inner = &out[0];
        let mut depth = 0;
        while let Some(next) = inner.get(0) {
            inner = next;
            depth += 1;
        }
        assert_eq!((depth, inner), (511, &json!(0)));
    }

    /// Each of these asked for gigabytes or more in a few steps: a single
    /// allocation that failed aborted the whole process. Now the operation
    /// is refused before it allocates, whatever `try` says.
    #[rstest::rstest]
    #[case::string_doubling("reduce range(40) as $i (\"x\"; . + .)")]
    #[case::array_doubling("reduce range(40) as $i ([1]; . + .)")]
    #[case::object_doubling("reduce range(40) as $i ({a: 1}; . * {b: ., c: .}) | tojson")]
    #[case::repeat("\"x\" * 10000000000")]
    #[case::repeat_caught("try (\"x\" * 10000000000) catch \"caught\"")]
    #[case::repeat_optional("[(\"x\" * 10000000000)?]")]
    #[case::range("[range(1e9)]")]
    #[case::repeat_limit("[limit(1e9; repeat(\"x\"))]")]
    #[case::explode("\"x\" * 2000000 | explode")]
    #[case::join("\"x\" * 3000000 | [., ., ., ., ., ., ., .] | join(\"\")")]
    #[case::tojson_shared("reduce range(40) as $i ([1]; [., .]) | tojson")]
    #[case::tostring_shared("reduce range(40) as $i (\"xx\"; [., .]) | \"\\(.)\"")]
    #[case::ascii_downcase("reduce range(40) as $i (\"X\"; . + . | ascii_downcase)")]
    #[case::base64("reduce range(80) as $i (\"x\"; @base64)")]
    #[case::split("\"x\" * 1000000 | split(\"\")")]
    #[case::to_entries("[range(300000)] | to_entries")]
    fn an_allocation_past_the_budget_is_refused_not_a_crash(#[case] src: &str) {
        for stack in [2 * MIB, 8 * MIB] {
            let err = error(src, run_on(stack, 16 * MIB, src));
            assert!(err.contains("more than 16 MiB of memory"), "{src}: {err}");
            assert!(err.contains("PIPEWRIGHT_JQ_MEMORY_MB=N"), "{err}");
        }
    }

    /// Squaring an integer doubles its digits: big integers are counted
    /// too (with a small budget, as squaring megabytes takes long).
    #[test]
    fn big_integers_past_the_budget_are_refused() {
        let src = "reduce range(40) as $i (3; . * .)";
        let err = error(src, run_on(2 * MIB, MIB / 4, src));
        assert!(
            err.contains("arithmetic on big integers asked for"),
            "{err}"
        );
    }

    #[test]
    fn the_memory_limit_names_the_operation_and_can_be_raised() {
        let src = "reduce range(22) as $i (\"x\"; . + .) | length";
        let err = error(src, run_on(2 * MIB, MIB, src));
        assert!(
            err.starts_with("the jq program was stopped: it would use more than 1 MiB of memory (`+` on strings asked for"),
            "{err}"
        );
        assert_eq!(run_on(2 * MIB, 64 * MIB, src), Ok(json!(1 << 22)));
    }

    /// `"x" * 1e10` was never a crash: `1e10` is not an integer to jaq.
    #[test]
    fn a_string_times_a_float_is_an_error() {
        let err = error("", run_on(2 * MIB, 64 * MIB, "\"x\" * 1e10"));
        assert!(err.contains("cannot calculate"), "{err}");
    }

    /// The outputs leave the program, so they count until it ends: ten
    /// outputs of 8 MiB do not fit in 64 MiB.
    #[test]
    fn outputs_count_against_the_budget() {
        let program = JqProgram::compile("range(10) | \"x\" * 8000000").unwrap();
        TEST_MEMORY.with(|m| m.set(Some(64 * MIB)));
        let err = program.run(&json!(null)).unwrap_err().message;
        assert!(err.contains("more than 64 MiB"), "{err}");
        TEST_MEMORY.with(|m| m.set(Some(128 * MIB)));
        assert_eq!(program.run(&json!(null)).map(|o| o.len()), Ok(10));
    }

    /// Memory is counted while values live and given back as they go: a
    /// program that builds and drops far more than the budget over its run
    /// is not stopped, and ends with nothing counted and nothing given back
    /// that was not counted (which would let a program hold more than its
    /// budget).
    #[rstest::rstest]
    #[case::string_churn("[range(100) | \"x\" * 1000000 | length] | add")]
    #[case::array_churn("[range(100) | [range(10000)] | length] | add")]
    #[case::concat("reduce range(10000) as $i (\"\"; . + \"x\") | length")]
    #[case::append("reduce range(10000) as $i ([]; . + [$i]) | length")]
    #[case::objects("reduce range(1000) as $i ({}; . + {(\"k\\($i)\"): $i}) | length")]
    #[case::merge("reduce range(1000) as $i ({}; . * {a: {(\"k\\($i)\"): [$i]}}) | length")]
    #[case::update(
        "[range(1000)] | .[10] = \"x\" | .[20:30] = [1] | del(.[0]) | .[] |= . | length"
    )]
    #[case::paths("[paths] | length")]
    #[case::keys(
        "{a: 1, b: [1, {c: 2}]} | [keys, to_entries, with_entries(.), tojson, tostring] | length"
    )]
    #[case::sort(
        "[range(1000) | -.] | sort | sort_by(-.) | group_by(. % 7) | unique_by(length) | min_by(length) | length"
    )]
    #[case::strings(
        "\"a,b,c\" * 1000 | split(\",\") | join(\"-\") | ascii_upcase | explode | implode | @base64 | @base64d | length"
    )]
    #[case::regex("\"abc123\" * 100 | [match(\"[0-9]+\"; \"g\")] | length")]
    #[case::fromjson("[range(1000)] | tojson | fromjson | length")]
    #[case::numbers("[range(100) | 100000000000000000000 * .] | add | tostring | length")]
    #[case::slices("[range(1000) | tostring | .[1:] ] | length")]
    #[case::recurse("[{a: [1, {b: 2}]} | .., walk(.)] | length")]
    #[case::input(".[1].a")]
    fn memory_is_given_back_as_values_are_freed(#[case] src: &str) {
        let input = json!([1, {"a": "x", "b": [1, 2]}, "s".repeat(100)]);
        let (held, over_credited) = count_after(src, &input);
        assert_eq!(
            over_credited, 0,
            "{src}: bytes given back that were never counted"
        );
        assert!(held <= 64 * 1024, "{src}: {held} bytes still counted");
    }
}
