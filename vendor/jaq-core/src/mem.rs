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

/// The budget of the current thread. Kept in separate cells (each read or
/// written whole) so that counting a value, done for every one made or
/// freed, touches a few words: `count` is `(used, limit)`, and `limit` is 0
/// while no budget is armed.
#[derive(Clone, Copy)]
struct Saved {
    count: (usize, usize),
    max_depth: usize,
    refused: Option<Refusal>,
    over_credited: usize,
}

std::thread_local! {
    static COUNT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    static MAX_DEPTH: Cell<usize> = const { Cell::new(usize::MAX) };
    static REFUSED: Cell<Option<Refusal>> = const { Cell::new(None) };
    /// Bytes given back beyond those counted: a mistake in the counting,
    /// which tests look for.
    static OVER_CREDITED: Cell<usize> = const { Cell::new(0) };
}

fn save() -> Saved {
    Saved {
        count: COUNT.with(Cell::get),
        max_depth: MAX_DEPTH.with(Cell::get),
        refused: REFUSED.with(Cell::get),
        over_credited: OVER_CREDITED.with(Cell::get),
    }
}

fn restore(s: Saved) {
    COUNT.with(|c| c.set(s.count));
    MAX_DEPTH.with(|c| c.set(s.max_depth));
    REFUSED.with(|c| c.set(s.refused));
    OVER_CREDITED.with(|c| c.set(s.over_credited));
}

/// The budget that was in force before [`arm`]; dropping it restores that.
#[must_use = "the budget is disarmed when this is dropped"]
pub struct Armed(Saved);

impl Drop for Armed {
    fn drop(&mut self) {
        restore(self.0);
    }
}

/// Arms a budget of `limit` bytes (at least 1) and `max_depth` levels of
/// nesting on the current thread, with nothing used and nothing refused
/// yet, until the returned guard is dropped.
pub fn arm(limit: usize, max_depth: usize) -> Armed {
    let saved = save();
    restore(Saved {
        count: (0, limit.max(1)),
        max_depth,
        refused: None,
        over_credited: 0,
    });
    Armed(saved)
}

/// Remembers `refusal` unless an earlier one is, and returns the first.
fn refuse(refusal: Refusal) -> Refusal {
    REFUSED.with(|r| {
        let first = r.get().unwrap_or(refusal);
        r.set(Some(first));
        first
    })
}

/// Whether `bytes` more would fit; when they would not, the refusal is
/// remembered and `Err` returned. Nothing is counted: call this before an
/// allocation, and [`add`] once it is made (or not at all for memory that
/// is freed before the next step).
#[inline]
pub fn check(bytes: usize, what: &'static str) -> Result<(), Refusal> {
    let (used, limit) = COUNT.with(Cell::get);
    if limit == 0 || used.saturating_add(bytes) <= limit {
        return Ok(());
    }
    let refusal = Refusal::Memory {
        limit,
        used,
        asked: bytes,
        what,
    };
    refuse(refusal);
    Err(refusal)
}

/// Counts `bytes` as held, after the fact; past the limit, the refusal is
/// remembered (the program is halted at its next step).
#[inline]
pub fn add(bytes: usize, what: &'static str) {
    let (used, limit) = COUNT.with(Cell::get);
    if limit == 0 {
        return;
    }
    let now = used.saturating_add(bytes);
    COUNT.with(|c| c.set((now, limit)));
    if now > limit {
        refuse(Refusal::Memory {
            limit,
            used,
            asked: bytes,
            what,
        });
    }
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
    let (used, limit) = COUNT.with(Cell::get);
    if limit == 0 {
        return;
    }
    if bytes > used {
        OVER_CREDITED.with(|o| o.set(o.get() + (bytes - used)));
    }
    COUNT.with(|c| c.set((used.saturating_sub(bytes), limit)));
}

/// Bytes counted as held, and bytes given back that were never counted
/// (which should be none), when a budget is armed.
pub fn used() -> Option<(usize, usize)> {
    let (used, limit) = COUNT.with(Cell::get);
    (limit != 0).then(|| (used, OVER_CREDITED.with(Cell::get)))
}

/// The most levels a value may nest, when a budget is armed.
#[inline]
pub fn max_depth() -> Option<usize> {
    let max = MAX_DEPTH.with(Cell::get);
    (max != usize::MAX).then_some(max)
}

/// Remembers that a value nested more than [`max_depth`] levels was
/// refused, and returns the refusal.
pub fn refuse_depth() -> Refusal {
    refuse(Refusal::Depth {
        limit: MAX_DEPTH.with(Cell::get),
    })
}

/// The first refusal since the budget was armed, if any.
#[inline]
pub fn refusal() -> Option<Refusal> {
    REFUSED.with(Cell::get)
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
