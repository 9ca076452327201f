//! A budget of memory and of nesting for one program run (a patch kept by
//! pipewright).
//!
//! A jq program decides how much memory its values take, and a few steps
//! can double a string or an array (`reduce range(40) as $i ("x"; . + .)`
//! asks for a terabyte), so counting steps does not bound memory. Neither
//! does it bound nesting: `reduce range(1e6) as $i (null; [.])` builds a
//! value a million levels deep, which every recursive walk over it (drop,
//! print, compare) would overflow the stack on.
//!
//! An embedder that runs programs it did not write [`arm`]s a budget on the
//! evaluating thread. The value type (jaq-json's `Val`) and the native
//! filters then ask the budget before each allocation whose size the
//! program controls ([`check`]), count what they hold while they hold it
//! ([`add`], given back with [`credit`] when freed), and refuse a value
//! nested deeper than [`max_depth`]. A refused operation fails with an
//! error, and the refusal is remembered ([`refusal`]): the embedder's step
//! hook (see [`crate::step`]) halts the program at its next step, so `try`
//! cannot swallow the refusal and go on.
//!
//! Without an armed budget every check passes and nothing is counted.

use core::cell::Cell;
use core::fmt;

/// Why an operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `what` asked for `asked` more bytes while `used` of `limit` were held.
    Memory {
        /// The budget, in bytes.
        limit: usize,
        /// Bytes held when the operation asked.
        used: usize,
        /// Bytes the operation asked for.
        asked: usize,
        /// The operation, e.g. ``"`+` on strings"``.
        what: &'static str,
    },
    /// A value nested deeper than `limit` levels would have been built.
    Depth {
        /// The most levels a value may nest.
        limit: usize,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Self::Memory { limit, what, .. } => write!(
                f,
                "{what} would take the values of this program past their {limit} bytes"
            ),
            Self::Depth { limit } => {
                write!(f, "the value would be nested more than {limit} levels deep")
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Budget {
    used: usize,
    limit: usize,
    max_depth: usize,
    refused: Option<Refusal>,
    /// Bytes given back beyond those counted: a mistake in the counting,
    /// which tests look for.
    over_credited: usize,
}

std::thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// The budget that was in force before [`arm`]; dropping it restores that.
#[must_use = "the budget is disarmed when this is dropped"]
pub struct Armed(Option<Budget>);

impl Drop for Armed {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.0));
    }
}

/// Arms a budget of `limit` bytes and `max_depth` levels of nesting on the
/// current thread, with nothing used and nothing refused yet, until the
/// returned guard is dropped.
pub fn arm(limit: usize, max_depth: usize) -> Armed {
    let budget = Budget {
        used: 0,
        limit,
        max_depth,
        refused: None,
        over_credited: 0,
    };
    Armed(BUDGET.with(|b| b.replace(Some(budget))))
}

fn with<T>(f: impl FnOnce(&mut Budget) -> T) -> Option<T> {
    BUDGET.with(|cell| {
        let mut b = cell.get()?;
        let out = f(&mut b);
        cell.set(Some(b));
        Some(out)
    })
}

/// Whether `bytes` more would fit; when they would not, the refusal is
/// remembered and `Err` returned. Nothing is counted: call this before an
/// allocation, and [`add`] once it is made (or not at all for memory that
/// is freed before the next step).
#[inline]
pub fn check(bytes: usize, what: &'static str) -> Result<(), Refusal> {
    with(|b| {
        if b.used.saturating_add(bytes) <= b.limit {
            return Ok(());
        }
        let refusal = Refusal::Memory {
            limit: b.limit,
            used: b.used,
            asked: bytes,
            what,
        };
        b.refused.get_or_insert(refusal);
        Err(refusal)
    })
    .unwrap_or(Ok(()))
}

/// Counts `bytes` as held, after the fact; past the limit, the refusal is
/// remembered (the program is halted at its next step).
#[inline]
pub fn add(bytes: usize, what: &'static str) {
    with(|b| {
        let used = b.used.saturating_add(bytes);
        if used > b.limit && b.refused.is_none() {
            b.refused = Some(Refusal::Memory {
                limit: b.limit,
                used: b.used,
                asked: bytes,
                what,
            });
        }
        b.used = used;
    });
}

/// [`check`], then [`add`].
#[inline]
pub fn charge(bytes: usize, what: &'static str) -> Result<(), Refusal> {
    check(bytes, what)?;
    add(bytes, what);
    Ok(())
}

/// Gives back `bytes` that were counted with [`add`] and are freed now.
#[inline]
pub fn credit(bytes: usize) {
    with(|b| {
        b.over_credited += bytes.saturating_sub(b.used);
        b.used = b.used.saturating_sub(bytes);
    });
}

/// Bytes counted as held, and bytes given back that were never counted
/// (which should be none), when a budget is armed.
pub fn used() -> Option<(usize, usize)> {
    with(|b| (b.used, b.over_credited))
}

/// The most levels a value may nest, when a budget is armed.
#[inline]
pub fn max_depth() -> Option<usize> {
    with(|b| b.max_depth)
}

/// Remembers that a value nested more than [`max_depth`] levels was
/// refused, and returns the refusal.
pub fn refuse_depth() -> Refusal {
    with(|b| {
        let refusal = Refusal::Depth { limit: b.max_depth };
        *b.refused.get_or_insert(refusal)
    })
    .unwrap_or(Refusal::Depth { limit: usize::MAX })
}

/// The first refusal since the budget was armed, if any.
#[inline]
pub fn refusal() -> Option<Refusal> {
    with(|b| b.refused).flatten()
}

/// Memory held for as long as this lives: counted when made, given back
/// when dropped. For a buffer a native filter keeps while it runs other
/// filters (the keys of `sort_by(f)`), which the program could otherwise
/// use to hold memory the budget does not see.
pub struct Held(usize);

impl Held {
    /// Counts `bytes` held until the returned value is dropped.
    pub fn new(bytes: usize, what: &'static str) -> Self {
        add(bytes, what);
        Self(bytes)
    }

    /// Holds `bytes` that are counted already (by a value whose memory
    /// this takes over), until the returned value is dropped.
    pub fn adopt(bytes: usize) -> Self {
        Self(bytes)
    }

    /// Counts `more` bytes held, too.
    pub fn grow(&mut self, more: usize, what: &'static str) {
        add(more, what);
        self.0 = self.0.saturating_add(more);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        credit(self.0);
    }
}
