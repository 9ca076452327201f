//! The parts of a value that live on the heap, counted against the budget
//! of the running program (pipewright's patch; see `jaq_core::mem`).
//!
//! Each part counts itself while it lives: a string its handle and, when it
//! made a new buffer, the buffer's length; an array or object its header
//! and its capacity. Growing a part asks the budget first and counts the
//! growth; a part gives its bytes back when it is dropped. A string buffer
//! shared by several strings (`.[2:]` shares its input's) is given back by
//! the last of them, and only for the length that one sees: bytes of a
//! buffer whose last holder is a slice of it stay counted (too much, never
//! too little).
//!
//! Arrays and objects also know how deeply they nest, so that building one
//! deeper than `jaq_core::mem::max_depth` is refused in constant time, and
//! every operation that recurses into a value (printing, comparing,
//! dropping) recurses a bounded number of times.

use crate::{Map, Rc, Val};
use alloc::{boxed::Box, vec::Vec};
use bytes::Bytes;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::mem::size_of;
use core::ops::Deref;
use jaq_core::mem::{self, Refusal};

const VAL: usize = size_of::<Val>();
/// The two reference counts in front of an `Rc`'s value.
const RC: usize = 2 * size_of::<usize>();
/// What an object holds per entry it has room for: the entry (a hash, a
/// key and a value) and its share of the index table, rounded up.
const ENTRY: usize = 2 * VAL + 3 * size_of::<usize>() + size_of::<u64>();
/// The handle of a string (the boxed `Bytes`).
const STR: usize = size_of::<Bytes>();

/// Runs `f` where there is stack for it: operations on values recurse once
/// per level of nesting, which is bounded, but may start anywhere.
#[inline]
pub(crate) fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 1024 * 1024, f)
}

/// Values nested at most this deep are recursed into on the stack there is:
/// [`grow`]'s margin has room for that many levels of any operation. Only
/// deeper ones ask, which spares the common case the asking.
pub(crate) const SHALLOW: usize = 16;

/// [`grow`] when `depth` is more than [`SHALLOW`], else `f` as it is.
#[inline]
pub(crate) fn grow_past<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth > SHALLOW {
        grow(f)
    } else {
        f()
    }
}

/// The capacity a growing vector asks for, at most: twice what it had.
fn grown(cap: usize, need: usize) -> usize {
    need.max(cap.saturating_mul(2)).max(4)
}

/// Refuses `depth` when it is deeper than the budget allows.
fn check_depth(depth: usize) -> Result<(), Refusal> {
    match mem::max_depth() {
        Some(max) if depth > max => Err(mem::refuse_depth()),
        _ => Ok(()),
    }
}

/// The bytes of a string, counted while held.
pub struct Str(Box<Bytes>);

impl Str {
    /// A string over `b`: counts the buffer when nothing else holds it (a
    /// new buffer), and only the handle when something does (a slice of
    /// another string) or when it is static (a literal), which is how its
    /// last holder will give it back.
    pub fn new(b: Bytes) -> Self {
        let buf = if b.is_unique() { b.len() } else { 0 };
        mem::add(STR + buf, "a string");
        Self(Box::new(b))
    }

    /// A string over (part of) a buffer that another string holds and
    /// counts already.
    pub(crate) fn share(b: Bytes) -> Self {
        mem::add(STR, "a string");
        Self(Box::new(b))
    }

    /// The bytes, given back to the budget as if this string was dropped.
    pub fn into_bytes(mut self) -> Bytes {
        let b = core::mem::take(&mut *self.0);
        if b.is_unique() {
            mem::credit(b.len());
        }
        b
    }

    /// The bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }
}

impl Drop for Str {
    fn drop(&mut self) {
        let buf = if self.0.is_unique() { self.0.len() } else { 0 };
        mem::credit(STR + buf);
    }
}

impl Clone for Str {
    fn clone(&self) -> Self {
        Self::share((*self.0).clone())
    }
}

impl Deref for Str {
    type Target = Bytes;
    fn deref(&self) -> &Bytes {
        &self.0
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The items of an array, counted while held, with how deep they nest.
///
/// The items are `buf[..len]`; the rest of `buf` is room to grow, filled
/// with `null`. Kept this way rather than as a `Vec` with a depth beside
/// it, which would not fit in the 24 bytes a `Vec` takes: the allocation
/// behind an array's `Rc` would move to a larger size class, which made
/// programs that make many small arrays up to a third slower.
pub struct List {
    buf: Box<[Val]>,
    len: u32,
    depth: u32,
}

impl List {
    fn bytes(cap: usize) -> usize {
        RC + size_of::<Self>() + cap * VAL
    }

    /// An array of `items` (uncounted: the caller counts it).
    fn from_vec(items: Vec<Val>, depth: u32) -> Self {
        let mut list = Self {
            buf: Box::default(),
            len: 0,
            depth,
        };
        list.put_vec(items);
        list
    }

    /// Makes `items` (and their capacity) the items, in place of none.
    fn put_vec(&mut self, mut items: Vec<Val>) {
        self.len = items.len() as u32;
        let cap = items.capacity();
        items.resize_with(cap, Val::default);
        self.buf = items.into_boxed_slice();
    }

    /// The items as a vector (of the same capacity), leaving none.
    fn take_vec(&mut self) -> Vec<Val> {
        let mut items = Vec::from(core::mem::take(&mut self.buf));
        items.truncate(self.len as usize);
        self.len = 0;
        items
    }

    /// An empty array with room for `cap` items, if the budget has it.
    pub(crate) fn with_capacity(cap: usize) -> Result<Self, Refusal> {
        let bytes = cap.saturating_mul(VAL).saturating_add(Self::bytes(0));
        mem::check(bytes, "an array")?;
        let list = Self::from_vec(Vec::with_capacity(cap), 1);
        mem::add(Self::bytes(list.buf.len()), "an array");
        Ok(list)
    }

    /// Collects `iter`, asking the budget before each growth.
    pub(crate) fn collect<E>(
        iter: impl IntoIterator<Item = Result<Val, E>>,
        refused: impl Fn(Refusal) -> E,
    ) -> Result<Self, E> {
        let iter = iter.into_iter();
        let cap = match iter.size_hint() {
            (lower, Some(upper)) if lower == upper => lower,
            _ => 0,
        };
        let mut list = Self::with_capacity(cap).map_err(&refused)?;
        for x in iter {
            list.push(x?).map_err(&refused)?;
        }
        Ok(list)
    }

    /// How many levels the array nests, itself included (at least 1).
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// Makes room for `more` items.
    fn reserve(&mut self, more: usize) -> Result<(), Refusal> {
        let (len, cap) = (self.len as usize, self.buf.len());
        let need = len.saturating_add(more);
        if need <= cap {
            return Ok(());
        }
        let what = "an array";
        let asked = grown(cap, need).saturating_sub(cap).saturating_mul(VAL);
        mem::check(asked, what)?;
        if need > u32::MAX as usize {
            // no budget is armed, or it would have refused
            return Err(mem::Refusal::Memory {
                limit: 0,
                used: 0,
                asked,
                what,
            });
        }
        let mut items = self.take_vec();
        items.reserve(more);
        self.put_vec(items);
        mem::add((self.buf.len() - cap) * VAL, what);
        Ok(())
    }

    /// Notes that an item as deep as `v` joins.
    fn note(&mut self, v: &Val) -> Result<(), Refusal> {
        self.note_depth(v.depth() + 1)
    }

    /// Notes that this array nests `depth` levels now, if that is more.
    fn note_depth(&mut self, depth: usize) -> Result<(), Refusal> {
        if depth > self.depth as usize {
            check_depth(depth)?;
            self.depth = depth as u32;
        }
        Ok(())
    }

    pub(crate) fn push(&mut self, v: Val) -> Result<(), Refusal> {
        self.note(&v)?;
        self.reserve(1)?;
        self.buf[self.len as usize] = v;
        self.len += 1;
        Ok(())
    }

    /// Replaces the item at `i` (which must exist).
    pub(crate) fn set(&mut self, i: usize, v: Val) -> Result<(), Refusal> {
        self.note(&v)?;
        self.buf[..self.len as usize][i] = v;
        Ok(())
    }

    /// Takes the item at `i` (which must exist), leaving `null`.
    pub(crate) fn take(&mut self, i: usize) -> Val {
        core::mem::take(&mut self.buf[..self.len as usize][i])
    }

    /// Removes the item at `i` (which must exist).
    pub(crate) fn remove(&mut self, i: usize) -> Val {
        let len = self.len as usize;
        self.buf[i..len].rotate_left(1);
        self.len -= 1;
        core::mem::take(&mut self.buf[len - 1])
    }

    pub(crate) fn retain(&mut self, f: impl FnMut(&Val) -> bool) {
        let mut items = self.take_vec();
        items.retain(f);
        self.put_vec(items);
    }

    /// Appends clones of the items of `other`.
    pub(crate) fn append(&mut self, other: &List) -> Result<(), Refusal> {
        self.note_depth(other.depth())?;
        self.reserve(other.len())?;
        for x in other.iter() {
            self.buf[self.len as usize] = x.clone();
            self.len += 1;
        }
        Ok(())
    }

    /// Replaces the items in `skip..skip + take` by clones of the items of
    /// `with`, if any.
    pub(crate) fn splice(
        &mut self,
        skip: usize,
        take: usize,
        with: Option<&List>,
    ) -> Result<(), Refusal> {
        let with: &[Val] = match with {
            Some(w) => {
                self.note_depth(w.depth())?;
                w
            }
            None => &[],
        };
        self.reserve(with.len().saturating_sub(take))?;
        let mut items = self.take_vec();
        items.splice(skip..skip + take, with.iter().cloned());
        self.put_vec(items);
        Ok(())
    }

    /// A new array of the items of `l` followed by those of `r`.
    pub(crate) fn concat(l: &List, r: &List) -> Result<Self, Refusal> {
        let mut list = Self::with_capacity(l.len().saturating_add(r.len()))?;
        list.append(l)?;
        list.append(r)?;
        Ok(list)
    }

    /// The array behind `rc`, to change: copied first if others hold it
    /// too, when the budget has room for the copy.
    pub(crate) fn make_mut(rc: &mut Rc<Self>) -> Result<&mut Self, Refusal> {
        if Rc::get_mut(rc).is_none() {
            mem::check(Self::bytes(rc.len()), "a copy of an array")?;
        }
        Ok(Rc::make_mut(rc))
    }

    /// The items of the array behind `rc`, moved out when nobody else holds
    /// it, else cloned one by one as they are taken.
    pub(crate) fn into_vals(rc: Rc<Self>) -> Vals {
        match Rc::try_unwrap(rc) {
            // `list` gives back its header as it drops, the items' memory
            // is held until they are all taken
            Ok(mut list) => {
                let held = mem::Held::adopt(list.buf.len() * VAL);
                Vals::Owned(list.take_vec().into_iter(), held)
            }
            Err(rc) => Vals::Shared(rc, 0),
        }
    }
}

impl Drop for List {
    fn drop(&mut self) {
        mem::credit(Self::bytes(self.buf.len()));
        // dropping the items recurses as deep as they nest, maybe from a
        // point where little stack is left
        if self.depth as usize > SHALLOW {
            let items = core::mem::take(&mut self.buf);
            grow(|| drop(items));
        }
    }
}

impl Clone for List {
    fn clone(&self) -> Self {
        let list = Self::from_vec(self.to_vec(), self.depth);
        mem::add(Self::bytes(list.buf.len()), "a copy of an array");
        list
    }
}

impl Deref for List {
    type Target = [Val];
    fn deref(&self) -> &[Val] {
        &self.buf[..self.len as usize]
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        grow_past(self.depth(), || {
            f.debug_list().entries(self.iter()).finish()
        })
    }
}

impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        grow_past(self.depth(), || **self == **other)
    }
}

impl Eq for List {}

impl PartialOrd for List {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for List {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        grow_past(self.depth(), || (**self).cmp(&**other))
    }
}

impl Hash for List {
    fn hash<H: Hasher>(&self, state: &mut H) {
        grow_past(self.depth(), || (**self).hash(state))
    }
}

/// The entries of an object, counted while held, with how deep they nest.
pub struct Object {
    map: Map,
    depth: usize,
}

impl Object {
    fn bytes(cap: usize) -> usize {
        RC + size_of::<Self>() + cap * ENTRY
    }

    /// An empty object.
    pub(crate) fn new() -> Self {
        mem::add(Self::bytes(0), "an object");
        Self {
            map: Map::default(),
            depth: 1,
        }
    }

    /// An object of `map`, which is allocated already.
    pub(crate) fn from_map(map: Map) -> Result<Self, Refusal> {
        let depth = map.iter().map(|(k, v)| k.depth().max(v.depth()));
        let depth = 1 + depth.max().unwrap_or(0);
        check_depth(depth)?;
        mem::add(Self::bytes(map.capacity()), "an object");
        Ok(Self { map, depth })
    }

    /// Collects `iter`, asking the budget before each growth.
    pub(crate) fn collect<E>(
        iter: impl IntoIterator<Item = Result<(Val, Val), E>>,
        refused: impl Fn(Refusal) -> E,
    ) -> Result<Self, E> {
        let mut obj = Self::new();
        for kv in iter {
            let (k, v) = kv?;
            obj.insert(k, v).map_err(&refused)?;
        }
        Ok(obj)
    }

    /// How many levels the object nests, itself included (at least 1).
    pub fn depth(&self) -> usize {
        self.depth
    }

    fn note(&mut self, k: &Val, v: &Val) -> Result<(), Refusal> {
        let depth = k.depth().max(v.depth()) + 1;
        if depth > self.depth {
            check_depth(depth)?;
            self.depth = depth;
        }
        Ok(())
    }

    /// Notes that values as deep as an object of `depth` levels join.
    pub(crate) fn note_depth(&mut self, depth: usize) -> Result<(), Refusal> {
        if depth > self.depth {
            check_depth(depth)?;
            self.depth = depth;
        }
        Ok(())
    }

    /// Sets `k` to `v`, at the end when `k` is new.
    pub(crate) fn insert(&mut self, k: Val, v: Val) -> Result<(), Refusal> {
        self.note(&k, &v)?;
        let (len, cap) = (self.map.len(), self.map.capacity());
        if len == cap && !self.map.contains_key(&k) {
            let more = grown(cap, len + 1) - cap;
            mem::check(more.saturating_mul(ENTRY), "an object")?;
            self.map.reserve(1);
            mem::add((self.map.capacity() - cap) * ENTRY, "an object");
        }
        self.map.insert(k, v);
        Ok(())
    }

    /// The value of `k`, to change in place.
    pub(crate) fn get_mut(&mut self, k: &Val) -> Option<&mut Val> {
        self.map.get_mut(k)
    }

    /// Replaces the value of an existing `k`.
    pub(crate) fn set(&mut self, k: &Val, v: Val) -> Result<(), Refusal> {
        self.note(k, &v)?;
        if let Some(old) = self.map.get_mut(k) {
            *old = v;
        }
        Ok(())
    }

    /// Removes `k`, moving the last entry in its place.
    pub(crate) fn swap_remove(&mut self, k: &Val) -> Option<Val> {
        self.map.swap_remove(k)
    }

    /// The object behind `rc`, to change: copied first if others hold it
    /// too, when the budget has room for the copy.
    pub(crate) fn make_mut(rc: &mut Rc<Self>) -> Result<&mut Self, Refusal> {
        if Rc::get_mut(rc).is_none() {
            mem::check(Self::bytes(rc.len()), "a copy of an object")?;
        }
        Ok(Rc::make_mut(rc))
    }

    /// The entries of the object behind `rc`, moved out when nobody else
    /// holds it, else cloned one by one as they are taken.
    pub(crate) fn into_entries(rc: Rc<Self>) -> Entries {
        match Rc::try_unwrap(rc) {
            Ok(mut obj) => {
                let map = core::mem::take(&mut obj.map);
                let held = mem::Held::adopt(map.capacity() * ENTRY);
                Entries::Owned(map.into_iter(), held)
            }
            Err(rc) => Entries::Shared(rc, 0),
        }
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        mem::credit(Self::bytes(self.map.capacity()));
        if self.depth > SHALLOW {
            let map = core::mem::take(&mut self.map);
            grow(|| drop(map));
        }
    }
}

impl Clone for Object {
    fn clone(&self) -> Self {
        let map = self.map.clone();
        mem::add(Self::bytes(map.capacity()), "a copy of an object");
        Self {
            map,
            depth: self.depth,
        }
    }
}

impl Deref for Object {
    type Target = Map;
    fn deref(&self) -> &Map {
        &self.map
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        grow_past(self.depth, || f.debug_map().entries(self.iter()).finish())
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        grow_past(self.depth, || self.map == other.map)
    }
}

impl Eq for Object {}

/// The items of an array, taken one by one: moved out of a vector that
/// stays counted until it drops, or cloned from an array others hold too.
pub enum Vals {
    /// Moved out.
    Owned(alloc::vec::IntoIter<Val>, mem::Held),
    /// Cloned from the array, from the given position on.
    Shared(Rc<List>, usize),
}

impl Iterator for Vals {
    type Item = Val;
    fn next(&mut self) -> Option<Val> {
        match self {
            Self::Owned(iter, _) => iter.next(),
            Self::Shared(list, i) => {
                let v = list.get(*i)?.clone();
                *i += 1;
                Some(v)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            Self::Owned(iter, _) => iter.len(),
            Self::Shared(list, i) => list.len() - *i,
        };
        (n, Some(n))
    }
}

/// The entries of an object, taken one by one: moved out of a map that
/// stays counted until it drops, or cloned from an object others hold too.
pub enum Entries {
    /// Moved out.
    Owned(indexmap::map::IntoIter<Val, Val>, mem::Held),
    /// Cloned from the object, from the given position on.
    Shared(Rc<Object>, usize),
}

impl Iterator for Entries {
    type Item = (Val, Val);
    fn next(&mut self) -> Option<(Val, Val)> {
        match self {
            Self::Owned(iter, _) => iter.next(),
            Self::Shared(obj, i) => {
                let (k, v) = obj.get_index(*i)?;
                *i += 1;
                Some((k.clone(), v.clone()))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            Self::Owned(iter, _) => iter.len(),
            Self::Shared(obj, i) => obj.len() - *i,
        };
        (n, Some(n))
    }
}
