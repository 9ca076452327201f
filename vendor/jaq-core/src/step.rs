//! A hook called before every evaluation step (a patch kept by pipewright).
//!
//! jaq evaluates a program lazily, through iterators, and offers no way to
//! stop one that never ends (`last(range(1e12))`, `[repeat(1)]`) or that
//! recurses until the thread's stack overflows (`def f: 1 + f; f`), which
//! aborts the whole process. An embedder that runs programs it did not
//! write sets a hook on the evaluating thread: it is called each time a
//! term starts to run, and when it returns an exit code the term yields
//! `halt` with that code instead. `halt` is not caught by `try`, so the
//! program cannot swallow the stop and go on.

use core::cell::Cell;

/// A check run before each evaluation step: `None` lets the step run,
/// `Some(code)` halts the program with `code`.
pub type Hook = fn() -> Option<i32>;

std::thread_local! {
    static HOOK: Cell<Option<Hook>> = const { Cell::new(None) };
}

/// Sets the hook of the current thread, returning the previous one.
pub fn set_hook(hook: Option<Hook>) -> Option<Hook> {
    HOOK.with(|h| h.replace(hook))
}

/// The halt code the hook asks for, if any.
#[inline]
pub(crate) fn check() -> Option<i32> {
    HOOK.with(Cell::get).and_then(|hook| hook())
}
