//! JSON superset with binary data and non-string object keys.
//!
//! This crate provides a few macros for formatting / writing;
//! this is done in order to function with both
//! [`core::fmt::Write`] and [`std::io::Write`].
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod funs;
mod heap;
mod num;
#[macro_use]
pub mod write;
pub mod read;

use alloc::{borrow::ToOwned, boxed::Box, string::String, vec::Vec};
use bstr::{BStr, ByteSlice};
use bytes::{BufMut, Bytes, BytesMut};
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use jaq_core::box_iter::box_once;
use jaq_core::mem::{self, Refusal};
use jaq_core::{load, ops, path, val, Exn};
use num_bigint::BigInt;
use num_traits::{cast::ToPrimitive, Signed};

pub use funs::{bytes_valrs, funs};
pub use heap::{Entries, List, Object, Str, Vals};
pub use num::{Big, Dec, Num};

#[cfg(not(feature = "sync"))]
pub use alloc::rc::Rc;
#[cfg(feature = "sync")]
pub use alloc::sync::Arc as Rc;

#[cfg(feature = "serde")]
mod serde;

/// JSON superset with binary data and non-string object keys.
///
/// This is the default value type for jaq.
#[derive(Clone, Debug, Default)]
pub enum Val {
    #[default]
    /// Null
    Null,
    /// Boolean
    Bool(bool),
    /// Number
    Num(Num),
    /// Byte string
    BStr(Str),
    /// Text string (interpreted as UTF-8)
    ///
    /// Note that this does not require the actual bytes to be all valid UTF-8;
    /// this just means that the bytes are interpreted as UTF-8.
    /// An effort is made to preserve invalid UTF-8 as is, else
    /// replace invalid UTF-8 by the Unicode replacement character.
    TStr(Str),
    /// Array
    Arr(Rc<List>),
    /// Object
    Obj(Rc<Object>),
}

#[cfg(feature = "sync")]
#[test]
fn val_send_sync() {
    fn send_sync<T: Send + Sync>(_: T) {}
    send_sync(Val::default())
}

#[cfg(target_arch = "x86_64")]
const _: () = {
    assert!(core::mem::size_of::<Val>() == 16);
};

/// Types and sets of types.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Type {
    /// `[] | .["a"]` or `limit("a"; 0)` or `range(0; "a")`
    Int,
    /*
    /// `"1" | sin` or `pow(2; "3")` or `fma(2; 3; "4")`
    Float,
    */
    /// `-"a"`, `"a" | round`
    Num,
    /// `{(0): 1}` or `0 | fromjson` or `0 | explode` or `"a b c" | split(0)`
    Str,
    /// `0 | sort` or `0 | implode` or `[] | .[0:] = 0`
    Arr,
    /// `0 | .[]` or `0 | .[0]` or `0 | keys` (array or object)
    Iter,
    /// `{}[0:1]` (string or array)
    Range,
}

impl Type {
    fn as_str(&self) -> &'static str {
        match self {
            Self::Int => "integer",
            //Self::Float => "floating-point number",
            Self::Num => "number",
            Self::Str => "string",
            Self::Arr => "array",
            Self::Iter => "iterable (array or object)",
            Self::Range => "rangeable (array or string)",
        }
    }
}

/// Order-preserving map
pub type Map<K = Val, V = K> = indexmap::IndexMap<K, V, foldhash::fast::RandomState>;

/// Error that can occur during filter execution.
pub type Error = jaq_core::Error<Val>;
/// A value or an eRror.
pub type ValR = jaq_core::ValR<Val>;
/// A value or an eXception.
pub type ValX<'a> = jaq_core::ValX<'a, Val>;

/// The error of an operation the budget refused (see `jaq_core::mem`).
fn refused(r: Refusal) -> Error {
    Error::str(r)
}

impl jaq_core::ValT for Val {
    fn from_num(n: &str) -> ValR {
        Ok(Self::Num(Num::from_str(n)))
    }

    fn from_map<I: IntoIterator<Item = (Self, Self)>>(iter: I) -> ValR {
        let obj = Object::collect(iter.into_iter().map(Ok), refused)?;
        Ok(Self::Obj(obj.into()))
    }

    fn key_values(self) -> Box<dyn Iterator<Item = Result<(Val, Val), Error>>> {
        let arr_idx = |(i, x)| Ok((Self::from(i as isize), x));
        match self {
            Self::Arr(a) => Box::new(List::into_vals(a).enumerate().map(arr_idx)),
            Self::Obj(o) => Box::new(Object::into_entries(o).map(Ok)),
            _ => box_once(Err(Error::typ(self, Type::Iter.as_str()))),
        }
    }

    fn values(self) -> Box<dyn Iterator<Item = ValR>> {
        match self {
            Self::Arr(a) => Box::new(List::into_vals(a).map(Ok)),
            Self::Obj(o) => Box::new(Object::into_entries(o).map(|(_k, v)| Ok(v))),
            _ => box_once(Err(Error::typ(self, Type::Iter.as_str()))),
        }
    }

    fn index(self, index: &Self) -> ValR {
        self.index_opt(index).map(|o| o.unwrap_or(Val::Null))
    }

    fn range(self, range: val::Range<&Self>) -> ValR {
        let fs = |b: &Bytes, range, skip_take: SkipTakeFn| {
            Self::range_int(range)
                .map(|range_char| skip_take(range_char, b))
                .map(|(skip, take)| Str::share(b.slice(skip..skip + take)))
        };
        match self {
            Val::BStr(b) => fs(&b, range, skip_take_bytes).map(Val::BStr),
            Val::TStr(b) => fs(&b, range, skip_take_chars).map(Val::TStr),
            Val::Arr(a) => {
                let (skip, take) = skip_take(Self::range_int(range)?, a.len());
                Self::collect_arr(a.iter().skip(skip).take(take).cloned())
            }
            _ => Err(Error::typ(self, Type::Range.as_str())),
        }
    }

    fn map_values<'a, I: Iterator<Item = ValX<'a>>>(
        self,
        opt: path::Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a> {
        let refused = |r| Exn::from(refused(r));
        match self {
            Self::Arr(a) => {
                let iter = List::into_vals(a).flat_map(f);
                Ok(Self::Arr(List::collect(iter, refused)?.into()))
            }
            Self::Obj(o) => {
                let iter = Object::into_entries(o);
                let iter = iter.filter_map(|(k, v)| f(v).next().map(|v| Ok((k, v?))));
                Ok(Self::Obj(Object::collect(iter, refused)?.into()))
            }
            v => opt.fail(v, |v| Exn::from(Error::typ(v, Type::Iter.as_str()))),
        }
    }

    fn map_index<'a, I: Iterator<Item = ValX<'a>>>(
        mut self,
        index: &Self,
        opt: path::Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a> {
        if let (Val::BStr(_) | Val::TStr(_) | Val::Arr(_), Val::Obj(o)) = (&self, index) {
            let range = o.get(&Val::utf8_str("start"))..o.get(&Val::utf8_str("end"));
            return self.map_range(range, opt, f);
        };
        let refused = |r| Exn::from(refused(r));
        match self {
            Val::Obj(ref mut o) => {
                let o = Object::make_mut(o).map_err(refused)?;
                match o.get_mut(index).map(core::mem::take) {
                    Some(v) => match f(v).next().transpose()? {
                        Some(y) => o.set(index, y).map_err(refused)?,
                        // this runs in constant time, at the price of
                        // changing the order of the elements
                        None => drop(o.swap_remove(index)),
                    },
                    None => {
                        if let Some(y) = f(Val::Null).next().transpose()? {
                            o.insert(index.clone(), y).map_err(refused)?;
                        }
                    }
                }
                Ok(self)
            }
            Val::Arr(ref mut a) => {
                let oob = || Error::str(format_args!("index {index} out of bounds"));
                let abs_or = |i| abs_index(i, a.len()).ok_or_else(oob);
                let i = match index.as_pos_usize().and_then(abs_or) {
                    Ok(i) => i,
                    Err(e) => return opt.fail(self, |_| Exn::from(e)),
                };

                let a = List::make_mut(a).map_err(refused)?;
                let x = a.take(i);
                if let Some(y) = f(x).next().transpose()? {
                    a.set(i, y).map_err(refused)?;
                } else {
                    a.remove(i);
                }
                Ok(self)
            }
            _ => opt.fail(self, |v| Exn::from(Error::typ(v, Type::Iter.as_str()))),
        }
    }

    fn map_range<'a, I: Iterator<Item = ValX<'a>>>(
        mut self,
        range: val::Range<&Self>,
        opt: path::Opt,
        f: impl Fn(Self) -> I,
    ) -> ValX<'a> {
        let refused = |r| Exn::from(refused(r));
        // pipewright: the string stays held (and counted) by `self` while
        // `f` runs, and is taken out only to be spliced
        let fs = |v: Val, range, skip_take: SkipTakeFn, from: ValStrFn, into: StrValFn| {
            let b = v.as_str_bytes();
            let (skip, take) = match Self::range_int(range) {
                Ok(range) => skip_take(range, b),
                Err(e) => return opt.fail(v, |_| Exn::from(e)),
            };
            let part = into(Str::share(b.slice(skip..skip + take)));
            let y = f(part).map(|y| from(y?).map_err(Exn::from)).next();
            let y = y.transpose()?;
            let y: &[u8] = y.as_ref().map_or(&[], |y| y);
            let len = b.len() - take + y.len();
            let b = v.into_str().into_bytes();
            mem::check(len, "an update of a string").map_err(refused)?;
            let mut b = BytesMut::from(b);
            bytes_splice(&mut b, skip, take, y);
            Ok(into(Str::new(b.freeze())))
        };
        let stb = skip_take_bytes;
        let stc = skip_take_chars;
        match self {
            Val::Arr(ref mut a) => {
                let (skip, take) = match Self::range_int(range) {
                    Ok(range) => skip_take(range, a.len()),
                    Err(e) => return opt.fail(self, |_| Exn::from(e)),
                };
                let arr = Self::collect_arr(a.iter().skip(skip).take(take).cloned())?;
                let y = f(arr).map(|y| y?.into_arr().map_err(Exn::from)).next();
                let y = y.transpose()?;
                let a = List::make_mut(a).map_err(refused)?;
                a.splice(skip, take, y.as_deref()).map_err(refused)?;
                Ok(self)
            }
            Val::BStr(_) => fs(self, range, stb, Val::into_byte_str, Val::BStr),
            Val::TStr(_) => fs(self, range, stc, Val::into_utf8_str, Val::TStr),
            _ => opt.fail(self, |v| Exn::from(Error::typ(v, Type::Arr.as_str()))),
        }
    }

    /// True if the value is neither null nor false.
    fn as_bool(&self) -> bool {
        !matches!(self, Self::Null | Self::Bool(false))
    }

    fn into_string(self) -> Self {
        match self {
            Self::BStr(b) | Self::TStr(b) => Self::TStr(b),
            // a refusal is remembered and halts the program at its next
            // step, so the `null` standing in is never seen
            _ => self.to_json().map_or(Self::Null, Self::utf8_str),
        }
    }
}

impl jaq_std::ValT for Val {
    fn into_seq<S: FromIterator<Self>>(self) -> Result<S, Self> {
        match self {
            Self::Arr(a) => match List::into_vals(a) {
                // the items stay where they are; the caller holds them now
                Vals::Owned(items, _held) => Ok(items.collect()),
                Vals::Shared(a, _) => {
                    // a refusal halts the program at its next step, so
                    // the empty sequence standing in is never seen
                    let bytes = a.len().saturating_mul(core::mem::size_of::<Val>());
                    match mem::check(bytes, "a copy of an array") {
                        Ok(()) => Ok(a.iter().cloned().collect()),
                        Err(_) => Ok(core::iter::empty().collect()),
                    }
                }
            },
            _ => Err(self),
        }
    }

    fn is_int(&self) -> bool {
        self.as_num().is_some_and(Num::is_int)
    }

    fn as_isize(&self) -> Option<isize> {
        self.as_num().and_then(Num::as_isize)
    }

    fn as_f64(&self) -> Option<f64> {
        self.as_num().map(Num::as_f64)
    }

    fn is_utf8_str(&self) -> bool {
        matches!(self, Self::TStr(_))
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::BStr(b) | Self::TStr(b) => Some(b),
            _ => None,
        }
    }

    fn as_sub_str(&self, sub: &[u8]) -> Self {
        match self {
            Self::BStr(b) => Self::BStr(Str::share(b.slice_ref(sub))),
            Self::TStr(b) => Self::TStr(Str::share(b.slice_ref(sub))),
            _ => panic!(),
        }
    }

    fn from_utf8_bytes(b: impl Into<Vec<u8>>) -> Self {
        Self::utf8_str(b.into())
    }
}

/// Definitions of the standard library.
pub fn defs() -> impl Iterator<Item = load::parse::Def<&'static str>> {
    load::parse(include_str!("defs.jq"), |p| p.defs())
        .unwrap()
        .into_iter()
}

type ValStrFn = fn(Val) -> Result<Str, Error>;
type StrValFn = fn(Str) -> Val;
type SkipTakeFn = fn(val::Range<num::PosUsize>, &[u8]) -> (usize, usize);

fn skip_take(range: val::Range<num::PosUsize>, len: usize) -> (usize, usize) {
    let from = abs_bound(range.start, len, 0);
    let upto = abs_bound(range.end, len, len);
    (from, upto.saturating_sub(from))
}

fn skip_take_bytes(range: val::Range<num::PosUsize>, b: &[u8]) -> (usize, usize) {
    skip_take(range, b.len())
}

fn skip_take_chars(range: val::Range<num::PosUsize>, b: &[u8]) -> (usize, usize) {
    let byte_index = |num::PosUsize(pos, c)| {
        let mut chars = b.char_indices().map(|(start, ..)| start);
        if pos {
            chars.nth(c).unwrap_or(b.len())
        } else {
            chars.nth_back(c - 1).unwrap_or(0)
        }
    };
    let from_byte = range.start.map_or(0, byte_index);
    let upto_byte = range.end.map_or(b.len(), byte_index);
    (from_byte, upto_byte.saturating_sub(from_byte))
}

fn bytes_splice(b: &mut BytesMut, skip: usize, take: usize, replace: &[u8]) {
    let final_len = b.len() - take + replace.len();
    let post_take = skip + take..b.len();

    if replace.len() > take {
        b.resize(final_len, 0);
    }
    b.copy_within(post_take, skip + replace.len());
    b[skip..skip + replace.len()].copy_from_slice(replace);
    if replace.len() < take {
        b.truncate(final_len);
    }
}

/// If a range bound is given, absolutise and clip it between 0 and `len`,
/// else return `default`.
fn abs_bound(i: Option<num::PosUsize>, len: usize, default: usize) -> usize {
    i.map_or(default, |i| core::cmp::min(i.wrap(len).unwrap_or(0), len))
}

/// Absolutise an index and return result if it is inside [0, len).
fn abs_index(i: num::PosUsize, len: usize) -> Option<usize> {
    i.wrap(len).filter(|i| *i < len)
}

impl Val {
    /// Construct an object value.
    ///
    /// When a budget is armed (see `jaq_core::mem`) and the object would
    /// nest too deeply, this is `null` and the refusal is remembered.
    pub fn obj(m: Map) -> Self {
        Object::from_map(m).map_or(Self::Null, |o| Self::Obj(o.into()))
    }

    /// Construct a string that is interpreted as UTF-8.
    pub fn utf8_str(s: impl Into<Bytes>) -> Self {
        Self::TStr(Str::new(s.into()))
    }

    /// Construct a string that is interpreted as bytes.
    pub fn byte_str(s: impl Into<Bytes>) -> Self {
        Self::BStr(Str::new(s.into()))
    }

    /// How many levels of arrays and objects the value nests: 0 for a
    /// number, 1 for `[1]`, 2 for `{"a": []}`.
    pub fn depth(&self) -> usize {
        match self {
            Self::Arr(a) => a.depth(),
            Self::Obj(o) => o.depth(),
            _ => 0,
        }
    }

    /// An array of the values of `iter`, asking the budget as it grows.
    pub fn collect_arr(iter: impl IntoIterator<Item = Val>) -> ValR {
        let list = List::collect(iter.into_iter().map(Ok), refused)?;
        Ok(Self::Arr(list.into()))
    }

    /// The bytes of a string (which `self` must be).
    fn as_str_bytes(&self) -> &Bytes {
        match self {
            Self::BStr(b) | Self::TStr(b) => b,
            _ => panic!(),
        }
    }

    /// The string (which `self` must be).
    fn into_str(self) -> Str {
        match self {
            Self::BStr(b) | Self::TStr(b) => b,
            _ => panic!(),
        }
    }

    fn as_num(&self) -> Option<&Num> {
        match self {
            Self::Num(n) => Some(n),
            _ => None,
        }
    }

    /// If the value is an integer in [-usize::MAX, +usize::MAX], return it, else fail.
    fn as_pos_usize(&self) -> Result<num::PosUsize, Error> {
        let fail = || Error::typ(self.clone(), Type::Int.as_str());
        self.as_num().and_then(Num::as_pos_usize).ok_or_else(fail)
    }

    fn into_byte_str(self) -> Result<Str, Error> {
        match self {
            Self::BStr(b) => Ok(b),
            _ => Err(Error::typ(self, Type::Str.as_str())),
        }
    }

    fn into_utf8_str(self) -> Result<Str, Error> {
        match self {
            Self::TStr(b) => Ok(b),
            _ => Err(Error::typ(self, Type::Str.as_str())),
        }
    }

    /// If the value is an array, return it, else fail.
    fn into_arr(self) -> Result<Rc<List>, Error> {
        match self {
            Self::Arr(a) => Ok(a),
            _ => Err(Error::typ(self, Type::Arr.as_str())),
        }
    }

    fn as_arr(&self) -> Result<&Rc<List>, Error> {
        match self {
            Self::Arr(a) => Ok(a),
            _ => Err(Error::typ(self.clone(), Type::Arr.as_str())),
        }
    }

    fn range_int(range: val::Range<&Self>) -> Result<val::Range<num::PosUsize>, Error> {
        let f = |i: Option<&Self>| {
            i.as_ref()
                .filter(|i| !matches!(i, Val::Null))
                .map(|i| i.as_pos_usize())
                .transpose()
        };
        Ok(f(range.start)?..f(range.end)?)
    }

    /// The value as JSON, unless the budget refuses the memory for it.
    pub fn to_json(&self) -> Result<Vec<u8>, Error> {
        let mut buf = write::Buf(Vec::new());
        match write::write_buf(&mut buf, &write::Pp::default(), 0, self) {
            Ok(()) => Ok(buf.0),
            Err(_) => Err(refused(mem::refusal().unwrap_or(Refusal::Memory {
                limit: 0,
                used: 0,
                asked: 0,
                what: "printing a value",
            }))),
        }
    }

    fn index_opt(self, index: &Self) -> Result<Option<Val>, Error> {
        Ok(match (self, index) {
            (Val::Null, _) => None,
            (Val::BStr(a), Val::Num(i @ (Num::Int(_) | Num::BigInt(_)))) => i
                .as_pos_usize()
                .and_then(|i| abs_index(i, a.len()))
                .map(|i| usize::from(a[i]).into()),
            (Val::Arr(a), Val::Num(i @ (Num::Int(_) | Num::BigInt(_)))) => i
                .as_pos_usize()
                .and_then(|i| abs_index(i, a.len()))
                .map(|i| a[i].clone()),
            (Val::Arr(_), Val::Arr(y)) if y.is_empty() => Some(Val::collect_arr([])?),
            (Val::Arr(x), Val::Arr(y)) => {
                // adapted from the implementation of the `indices` filter
                let iw = x.windows(y.len()).enumerate();
                let indices = iw.filter_map(|(i, w)| (w == &y[..]).then_some(i));
                Some(Val::collect_arr(indices.map(Val::from))?)
            }
            (Val::Obj(o), i) => o.get(i).cloned(),
            (v @ (Val::BStr(_) | Val::TStr(_) | Val::Arr(_)), Val::Obj(o)) => {
                use jaq_core::ValT;
                let start = o.get(&Val::utf8_str("start"));
                let end = o.get(&Val::utf8_str("end"));
                return v.range(start..end).map(Some);
            }
            (s, _) => return Err(Error::index(s, index.clone())),
        })
    }
}

impl From<bool> for Val {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<isize> for Val {
    fn from(i: isize) -> Self {
        Self::Num(Num::Int(i))
    }
}

impl From<usize> for Val {
    fn from(i: usize) -> Self {
        Self::Num(Num::from_integral(i))
    }
}

impl From<f64> for Val {
    fn from(f: f64) -> Self {
        Self::Num(Num::Float(f))
    }
}

impl From<String> for Val {
    fn from(s: String) -> Self {
        Self::utf8_str(s)
    }
}

impl From<val::Range<Val>> for Val {
    fn from(r: val::Range<Val>) -> Self {
        let kv = |(k, v): (&str, Option<_>)| v.map(|v| (k.to_owned().into(), v));
        let kvs = [("start", r.start), ("end", r.end)];
        Val::obj(kvs.into_iter().flat_map(kv).collect())
    }
}

/// An array of the values; when a budget is armed and refuses the memory
/// or the nesting, `null`, and the refusal is remembered (it halts the
/// program at its next step, so the `null` is never seen).
impl FromIterator<Self> for Val {
    fn from_iter<T: IntoIterator<Item = Self>>(iter: T) -> Self {
        Self::collect_arr(iter).unwrap_or_default()
    }
}

fn bigint_to_int_saturated(i: &BigInt) -> isize {
    let (min, max) = (isize::MIN, isize::MAX);
    i.to_isize()
        .unwrap_or_else(|| if i.is_negative() { min } else { max })
}

/// `l` followed by `r`: in place when `l` is the only holder of its buffer
/// and there is room, else in a new buffer; either asked of the budget.
fn concat(l: Str, r: &[u8]) -> Result<Str, Refusal> {
    if r.is_empty() {
        return Ok(l);
    }
    let len = l.len().saturating_add(r.len());
    let what = "`+` on strings";
    if l.is_unique() {
        let mut buf = BytesMut::from(l.into_bytes());
        if buf.capacity() < len {
            let cap = buf.capacity();
            mem::check(len.max(cap.saturating_mul(2)), what)?;
        }
        buf.put(r);
        Ok(Str::new(buf.freeze()))
    } else {
        mem::check(len, what)?;
        let mut buf = Vec::with_capacity(len);
        buf.extend_from_slice(&l);
        buf.extend_from_slice(r);
        Ok(Str::new(buf.into()))
    }
}

/// Asks the budget for the result of `op` on two numbers, if it may be big.
fn check_num(l: &Num, op: ops::Math, r: &Num) -> Result<(), Error> {
    match l.result_bytes(op, r) {
        0 => Ok(()),
        bytes => mem::check(bytes, "arithmetic on big integers").map_err(refused),
    }
}

impl core::ops::Add for Val {
    type Output = ValR;
    fn add(self, rhs: Self) -> Self::Output {
        use Val::*;
        match (self, rhs) {
            // `null` is a neutral element for addition
            (Null, x) | (x, Null) => Ok(x),
            (Num(x), Num(y)) => {
                check_num(&x, ops::Math::Add, &y)?;
                Ok(Num(x + y))
            }
            (BStr(l), BStr(r)) => Ok(BStr(concat(l, &r).map_err(refused)?)),
            (TStr(l), TStr(r)) => Ok(TStr(concat(l, &r).map_err(refused)?)),
            (Arr(mut l), Arr(r)) => {
                if Rc::get_mut(&mut l).is_some() {
                    List::make_mut(&mut l).and_then(|l| l.append(&r))
                } else {
                    List::concat(&l, &r).map(|list| l = list.into())
                }
                .map_err(refused)?;
                Ok(Arr(l))
            }
            (Obj(mut l), Obj(r)) => {
                let l_ = Object::make_mut(&mut l).map_err(refused)?;
                for (k, v) in r.iter() {
                    l_.insert(k.clone(), v.clone()).map_err(refused)?;
                }
                Ok(Obj(l))
            }
            (l, r) => Err(Error::math(l, ops::Math::Add, r)),
        }
    }
}

impl core::ops::Sub for Val {
    type Output = ValR;
    fn sub(self, rhs: Self) -> Self::Output {
        match (self, rhs) {
            (Self::Num(x), Self::Num(y)) => {
                check_num(&x, ops::Math::Sub, &y)?;
                Ok(Self::Num(x - y))
            }
            (Self::Arr(mut l), Self::Arr(r)) => {
                // a set of references: a node of a few of them per item
                let bytes = r.len().saturating_mul(4 * core::mem::size_of::<usize>());
                mem::check(bytes, "`-` on arrays").map_err(refused)?;
                let r = r.iter().collect::<alloc::collections::BTreeSet<_>>();
                List::make_mut(&mut l)
                    .map_err(refused)?
                    .retain(|x| !r.contains(x));
                Ok(Self::Arr(l))
            }
            (l, r) => Err(Error::math(l, ops::Math::Sub, r)),
        }
    }
}

/// Merges `r` into `l`, deeply.
fn obj_merge(l: &mut Rc<Object>, r: Rc<Object>) -> Result<(), Refusal> {
    let l = Object::make_mut(l)?;
    l.note_depth(r.depth())?;
    for (k, v) in Object::into_entries(r) {
        match (l.get_mut(&k), v) {
            (Some(Val::Obj(l)), Val::Obj(r)) => heap::grow_past(r.depth(), || obj_merge(l, r))?,
            (Some(slot), v) => *slot = v,
            (None, v) => l.insert(k, v)?,
        }
    }
    Ok(())
}

/// `s` repeated `n` times, when the budget has room for it.
fn repeat(s: &[u8], n: usize) -> Result<Str, Error> {
    let len = s.len().saturating_mul(n);
    mem::check(len, "`*` repeating a string").map_err(refused)?;
    Ok(Str::new(s.repeat(n).into()))
}

impl core::ops::Mul for Val {
    type Output = ValR;
    fn mul(self, rhs: Self) -> Self::Output {
        use crate::Num::{BigInt, Int};
        use Val::*;
        match (self, rhs) {
            (Num(x), Num(y)) => {
                check_num(&x, ops::Math::Mul, &y)?;
                Ok(Num(x * y))
            }
            (s @ (BStr(_) | TStr(_)), Num(BigInt(i)))
            | (Num(BigInt(i)), s @ (BStr(_) | TStr(_))) => {
                s * Num(Int(bigint_to_int_saturated(&i)))
            }
            (BStr(s), Num(Int(i))) | (Num(Int(i)), BStr(s)) if i > 0 => {
                Ok(BStr(repeat(&s, i as usize)?))
            }
            (TStr(s), Num(Int(i))) | (Num(Int(i)), TStr(s)) if i > 0 => {
                Ok(TStr(repeat(&s, i as usize)?))
            }
            // string multiplication with negatives or 0 results in null
            // <https://jqlang.github.io/jq/manual/#Builtinoperatorsandfunctions>
            (BStr(_) | TStr(_), Num(Int(_))) | (Num(Int(_)), BStr(_) | TStr(_)) => Ok(Null),
            (Obj(mut l), Obj(r)) => {
                obj_merge(&mut l, r).map_err(refused)?;
                Ok(Obj(l))
            }
            (l, r) => Err(Error::math(l, ops::Math::Mul, r)),
        }
    }
}

/// Split a string by a given separator string.
fn split<'a>(s: &'a [u8], sep: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a> {
    if s.is_empty() {
        Box::new(core::iter::empty())
    } else if sep.is_empty() {
        // Rust's `split` function with an empty separator ("")
        // yields an empty string as first and last result
        // to prevent this, we are using `chars` instead
        Box::new(s.char_indices().map(|(start, end, _)| &s[start..end]))
    } else {
        Box::new(s.split_str(sep))
    }
}

impl core::ops::Div for Val {
    type Output = ValR;
    fn div(self, rhs: Self) -> Self::Output {
        let fs = |x: Str, y: Str, into: StrValFn| {
            Val::collect_arr(split(&x, &y).map(|s| into(Str::share(x.slice_ref(s)))))
        };
        match (self, rhs) {
            (Self::Num(x), Self::Num(y)) => Ok(Self::Num(x / y)),
            (Self::TStr(x), Self::TStr(y)) => fs(x, y, Val::TStr),
            (Self::BStr(x), Self::BStr(y)) => fs(x, y, Val::BStr),
            (l, r) => Err(Error::math(l, ops::Math::Div, r)),
        }
    }
}

impl core::ops::Rem for Val {
    type Output = ValR;
    fn rem(self, rhs: Self) -> Self::Output {
        match (self, rhs) {
            (Self::Num(x), Self::Num(y)) if !(x.is_int() && y.is_int() && y == Num::Int(0)) => {
                check_num(&x, ops::Math::Rem, &y)?;
                Ok(Self::Num(x % y))
            }
            (l, r) => Err(Error::math(l, ops::Math::Rem, r)),
        }
    }
}

impl core::ops::Neg for Val {
    type Output = ValR;
    fn neg(self) -> Self::Output {
        match self {
            Self::Num(n) => Ok(Self::Num(-n)),
            x => Err(Error::typ(x, Type::Num.as_str())),
        }
    }
}

impl PartialOrd for Val {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Val {
    fn cmp(&self, other: &Self) -> Ordering {
        use Ordering::{Equal, Greater, Less};
        match (self, other) {
            (Self::Null, Self::Null) => Equal,
            (Self::Bool(x), Self::Bool(y)) => x.cmp(y),
            (Self::Num(x), Self::Num(y)) => x.cmp(y),
            (Self::BStr(x) | Self::TStr(x), Self::BStr(y) | Self::TStr(y)) => x.bytes().cmp(y),
            (Self::Arr(x), Self::Arr(y)) => x.cmp(y),
            (Self::Obj(x), Self::Obj(y)) => match (x.len(), y.len()) {
                (0, 0) => Equal,
                (0, _) => Less,
                (_, 0) => Greater,
                _ => heap::grow_past(x.depth(), || {
                    let mut l: Vec<_> = x.iter().collect();
                    let mut r: Vec<_> = y.iter().collect();
                    l.sort_by_key(|(k, _v)| *k);
                    r.sort_by_key(|(k, _v)| *k);
                    // TODO: make this nicer
                    let kl = l.iter().map(|(k, _v)| k);
                    let kr = r.iter().map(|(k, _v)| k);
                    let vl = l.iter().map(|(_k, v)| v);
                    let vr = r.iter().map(|(_k, v)| v);
                    kl.cmp(kr).then_with(|| vl.cmp(vr))
                }),
            },

            // nulls are smaller than anything else
            (Self::Null, _) => Less,
            (_, Self::Null) => Greater,
            // bools are smaller than anything else, except for nulls
            (Self::Bool(_), _) => Less,
            (_, Self::Bool(_)) => Greater,
            // numbers are smaller than anything else, except for nulls and bools
            (Self::Num(_), _) => Less,
            (_, Self::Num(_)) => Greater,
            // etc.
            (Self::BStr(_) | Self::TStr(_), _) => Less,
            (_, Self::BStr(_) | Self::TStr(_)) => Greater,
            (Self::Arr(_), _) => Less,
            (_, Self::Arr(_)) => Greater,
        }
    }
}

impl PartialEq for Val {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Null, Self::Null) => true,
            (Self::Bool(x), Self::Bool(y)) => x == y,
            (Self::Num(x), Self::Num(y)) => x == y,
            (Self::BStr(x) | Self::TStr(x), Self::BStr(y) | Self::TStr(y)) => {
                x.bytes() == y.bytes()
            }
            (Self::Arr(x), Self::Arr(y)) => x == y,
            (Self::Obj(x), Self::Obj(y)) => x == y,
            _ => false,
        }
    }
}

impl Eq for Val {}

impl Hash for Val {
    fn hash<H: Hasher>(&self, state: &mut H) {
        fn hash_with(u: u8, x: impl Hash, state: &mut impl Hasher) {
            state.write_u8(u);
            x.hash(state)
        }
        match self {
            Self::Num(n) => n.hash(state),
            // Num::hash() starts its hash with a 0 or 1, so we start with 2 here
            Self::Null => state.write_u8(2),
            Self::Bool(b) => state.write_u8(if *b { 3 } else { 4 }),
            Self::BStr(b) | Self::TStr(b) => hash_with(5, b.bytes(), state),
            Self::Arr(a) => hash_with(6, &**a, state),
            Self::Obj(o) => heap::grow_past(o.depth(), || {
                state.write_u8(7);
                // this is similar to what happens in `Val::cmp`
                let mut kvs: Vec<_> = o.iter().collect();
                kvs.sort_by_key(|(k, _v)| *k);
                kvs.iter().for_each(|(k, v)| (k, v).hash(state));
            }),
        }
    }
}

/// Display bytes as valid UTF-8 string.
///
/// This maps invalid UTF-8 to the Unicode replacement character.
pub fn bstr(s: &(impl core::convert::AsRef<[u8]> + ?Sized)) -> impl fmt::Display + '_ {
    BStr::new(s)
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write::format(f, &write::Pp::default(), 0, self)
    }
}
