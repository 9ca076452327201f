//! The value-flow rules: for one argument leaf, every candidate source an
//! earlier output (or an input) offers, each scored for ranking and with
//! how sure it is.

use std::collections::HashMap;

use serde_json::Value;

use super::rank::{self, Distinct, affinity, count_named, distinct, last_field};
use super::sites::{Hop, Sites, get, jq_path, key, plain};
use crate::lang::reference::Segment;
use crate::record::draft::{Confidence, Piece, Rule, Template};

/// The most references one embedded string is split into.
const MAX_EMBEDDED: usize = 4;
/// The most earlier strings (the latest first) one leaf is compared with
/// by the rules that look inside strings, so a long session stays linear.
const MAX_SCAN: usize = 20_000;

/// What an inputs map says of a value: the variable and the argument it
/// was first written for.
#[derive(Debug, Clone)]
pub struct InputOf {
    pub var: String,
    pub arg: String,
    pub value: Value,
}

/// What a leaf's candidates are looked for in.
pub struct Ctx<'a> {
    pub sites: &'a Sites,
    /// Every earlier step's id, by index.
    pub ids: &'a [String],
    /// The step being inferred (every site is of an earlier one).
    pub step: usize,
    /// Which earlier steps fan out (no `transform:` is added to those).
    pub fans: &'a [bool],
    /// Inputs so far, by value key.
    pub inputs: &'a HashMap<String, InputOf>,
    /// Values known before this leaf: earlier arguments and this call's.
    pub known: &'a [Value],
}

/// How a candidate is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Build {
    /// As it is.
    Template(Template),
    /// A value step `step`'s `transform:` adds: the jq `expr` over its
    /// output.
    Derive { step: usize, expr: String },
}

/// One possible source of a leaf's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub rule: Rule,
    pub confidence: Confidence,
    pub score: i64,
    pub build: Build,
    /// What it reads, in words.
    pub how: String,
}

/// Every candidate for `v`, the value of argument `arg`, best first.
pub fn candidates(ctx: &Ctx<'_>, arg: &str, v: &Value) -> Vec<Candidate> {
    let d = distinct(v);
    if d == Distinct::None {
        return Vec::new();
    }
    let mut out = Vec::new();
    same_input(ctx, arg, v, d, &mut out);
    exact(ctx, arg, v, d, &mut out);
    if let Value::String(s) = v {
        embedded(ctx, s, &mut out);
        if d >= Distinct::Mid {
            case_and_uri(ctx, s, &mut out);
            in_text(ctx, s, &mut out);
        }
    }
    length(ctx, arg, v, &mut out);
    // A fan-out's `transform:` runs per iteration: nothing is added there.
    out.retain(|c| match c.build {
        Build::Derive { step, .. } => !ctx.fans.get(step).copied().unwrap_or(true),
        Build::Template(_) => true,
    });
    out.sort_by_key(|c| std::cmp::Reverse(c.score));
    out
}

/// Where in an earlier step, in words: `search_users.users[0].id`.
fn named(ctx: &Ctx<'_>, step: usize, hops: &[Hop]) -> String {
    let id = ctx.ids.get(step).map_or("?", String::as_str);
    match jq_path(hops).as_str() {
        "." => id.to_owned(),
        path if path.starts_with(".[") => format!("{id}{}", &path[1..]),
        path => format!("{id}{path}"),
    }
}

fn recency(ctx: &Ctx<'_>, step: usize) -> i64 {
    20 - (ctx.step.saturating_sub(step) as i64).min(20)
}

fn same_input(ctx: &Ctx<'_>, arg: &str, v: &Value, d: Distinct, out: &mut Vec<Candidate>) {
    let Some(input) = key(v).and_then(|k| ctx.inputs.get(&k)) else {
        return;
    };
    let near = affinity(arg, &input.arg);
    if d == Distinct::Low && !near {
        return;
    }
    let confidence = if d == Distinct::Low {
        Confidence::Likely
    } else {
        Confidence::Sure
    };
    out.push(Candidate {
        rule: Rule::SameInput,
        confidence,
        score: 100 + if near { 15 } else { 0 },
        build: Build::Template(Template::one(Piece::Var(input.var.clone()))),
        how: format!("the input {} ({})", input.var, input.arg),
    });
}

/// `exact` and `item-field`: the value itself at a path.
fn exact(ctx: &Ctx<'_>, arg: &str, v: &Value, d: Distinct, out: &mut Vec<Candidate>) {
    let held = ctx.sites.holding(v);
    let mut steps: Vec<usize> = held
        .iter()
        .map(|&i| ctx.sites.step(&ctx.sites.sites[i]))
        .collect();
    steps.dedup();
    let unique = steps.len() == 1;
    for &i in held {
        let site = &ctx.sites.sites[i];
        let step = ctx.sites.step(site);
        let near = last_field(&site.path).is_some_and(|f| affinity(arg, f));
        if d == Distinct::Low && !near {
            continue;
        }
        let mut confidence = if d == Distinct::Low {
            Confidence::Likely
        } else {
            Confidence::Sure
        };
        if !unique {
            confidence = confidence.down();
        }
        let mut score = 90 + recency(ctx, step) - site.path.len() as i64;
        score += if unique {
            10
        } else {
            -3 * (steps.len() as i64 - 1)
        };
        score += if near { 15 } else { 0 };
        let doc = &ctx.sites.docs[site.doc];
        // The last index into an array of several items decides item-field.
        let item = site
            .path
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, s)| match s {
                Segment::Index(k) => {
                    let len = get(&doc.value, &site.path[..at])
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    (len > 1).then_some((at, *k, len))
                }
                _ => None,
            });
        let hops = ctx.sites.hops(site.doc, &site.path);
        let Some((at, k, len)) = item else {
            out.push(write(step, &hops, Rule::Exact, confidence, score, || {
                named(ctx, step, &hops)
            }));
            continue;
        };
        let arr = ctx.sites.hops(site.doc, &site.path[..at]);
        let rest = &site.path[at + 1..];
        if k == 0 || k as usize == len - 1 {
            let mut path = site.path.clone();
            let which = if k == 0 {
                "the first"
            } else {
                path[at] = Segment::Index(-1);
                "the last"
            };
            let hops = ctx.sites.hops(site.doc, &path);
            let how = format!("{which} of {}", named(ctx, step, &arr));
            out.push(write(
                step,
                &hops,
                Rule::ItemField,
                confidence.min(Confidence::Likely),
                score - 5,
                || how,
            ));
            continue;
        }
        // Another item: the one whose other field holds a known value, or
        // a distinctive one; else the index as recorded.
        let items = get(&doc.value, &site.path[..at]).and_then(Value::as_array);
        let picked = items.and_then(|items| pick_by(ctx, items, k as usize));
        if let Some((field, w, known)) = picked {
            let expr = format!(
                "first({}[] | select(.{} == {})) | {}",
                jq_path(&arr),
                jq_field(&field),
                w,
                jq_path(&rest.iter().cloned().map(Hop::Seg).collect::<Vec<_>>())
            );
            out.push(Candidate {
                rule: Rule::ItemField,
                confidence: if known {
                    Confidence::Likely
                } else {
                    Confidence::Guess
                },
                score: score - if known { 20 } else { 30 },
                build: Build::Derive { step, expr },
                how: format!(
                    "the item of {} whose {field} is {w}",
                    named(ctx, step, &arr)
                ),
            });
        } else {
            let how = format!("item {k} of {}, as recorded", named(ctx, step, &arr));
            out.push(write(
                step,
                &hops,
                Rule::ItemField,
                Confidence::Guess,
                score - 60,
                || how,
            ));
        }
    }
}

/// A field of item `k` that tells it apart: its value is known (an input,
/// an earlier argument) or is distinctive and held by no other item.
fn pick_by(ctx: &Ctx<'_>, items: &[Value], k: usize) -> Option<(String, Value, bool)> {
    let item = items.get(k)?.as_object()?;
    let unique = |f: &str, w: &Value| {
        items
            .iter()
            .enumerate()
            .all(|(i, x)| i == k || x.get(f) != Some(w))
    };
    let mut fallback = None;
    for (f, w) in item {
        if !(w.is_string() || w.is_number()) || !unique(f, w) {
            continue;
        }
        if ctx.known.contains(w) {
            return Some((f.clone(), w.clone(), true));
        }
        if fallback.is_none() && distinct(w) >= Distinct::Mid && !rank::id_named(f) {
            fallback = Some((f.clone(), w.clone(), false));
        }
    }
    fallback
}

fn jq_field(f: &str) -> String {
    let s = jq_path(&[Hop::Seg(Segment::Field(f.to_owned()))]);
    s.trim_start_matches('.').to_owned()
}

/// A plain reference when the path parses no JSON, else a derived value.
fn write(
    step: usize,
    hops: &[Hop],
    rule: Rule,
    confidence: Confidence,
    score: i64,
    how: impl FnOnce() -> String,
) -> Candidate {
    let build = match plain(hops) {
        Some(path) => Build::Template(Template::one(Piece::Out { step, path })),
        None => Build::Derive {
            step,
            expr: jq_path(hops),
        },
    };
    let penalty = if matches!(build, Build::Derive { .. }) {
        5
    } else {
        0
    };
    Candidate {
        rule,
        confidence,
        score: score - penalty,
        build,
        how: how(),
    }
}

/// Whether `text[at..at + len]` stands as a word of its own: the
/// characters around it are not letters or digits (or the value itself
/// starts or ends with punctuation).
fn bounded(text: &str, at: usize, len: usize) -> bool {
    let inner = &text[at..at + len];
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    let starts = inner.chars().next().is_some_and(char::is_alphanumeric);
    let ends = inner.chars().next_back().is_some_and(char::is_alphanumeric);
    (!starts || before.is_none_or(|c| !c.is_alphanumeric()))
        && (!ends || after.is_none_or(|c| !c.is_alphanumeric()))
}

/// `embedded`: earlier values (or inputs) inside a longer string.
fn embedded(ctx: &Ctx<'_>, s: &str, out: &mut Vec<Candidate>) {
    if s.chars().count() < 5 {
        return;
    }
    // Every source text with the best place it is held.
    let mut sources: Vec<(String, Piece, usize, bool)> = Vec::new();
    for (i, t) in ctx.sites.strings.iter().rev().take(MAX_SCAN) {
        if t.len() < 2 || t.len() >= s.len() || !s.contains(&**t) {
            continue;
        }
        let site = &ctx.sites.sites[*i];
        let ok = match rank::distinct_str(t) {
            Distinct::High | Distinct::Mid => true,
            Distinct::Low => last_field(&site.path).is_some_and(rank::id_named),
            Distinct::None => false,
        };
        if !ok {
            continue;
        }
        let step = ctx.sites.step(site);
        let Some(path) = plain(&ctx.sites.hops(site.doc, &site.path)) else {
            continue;
        };
        let piece = Piece::Out { step, path };
        match sources.iter_mut().find(|(x, ..)| x.as_str() == &**t) {
            // The nearest step wins; two steps holding it make it less sure.
            Some(found) => {
                if step > found.2 {
                    found.1 = piece;
                    found.2 = step;
                }
                found.3 = false;
            }
            None => sources.push((t.to_string(), piece, step, true)),
        }
    }
    for input in ctx.inputs.values() {
        if let Value::String(t) = &input.value
            && t.chars().count() >= 3
            && t.len() < s.len()
            && s.contains(t.as_str())
        {
            sources.push((t.clone(), Piece::Var(input.var.clone()), ctx.step, true));
        }
    }
    if sources.is_empty() {
        return;
    }
    sources.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
    // Cut the string at each source, longest first, at word boundaries.
    let mut parts: Vec<(String, Option<(Piece, bool)>)> = vec![(s.to_owned(), None)];
    let mut used = 0;
    for (t, piece, _, unique) in &sources {
        if used >= MAX_EMBEDDED {
            break;
        }
        let mut next = Vec::new();
        for (text, done) in parts {
            if done.is_some() {
                next.push((text, done));
                continue;
            }
            let mut rest = text.as_str();
            let mut cut = false;
            while let Some(at) = rest.find(t.as_str()) {
                if !bounded(rest, at, t.len()) {
                    break;
                }
                if at > 0 {
                    next.push((rest[..at].to_owned(), None));
                }
                next.push((t.clone(), Some((piece.clone(), *unique))));
                rest = &rest[at + t.len()..];
                cut = true;
            }
            if !rest.is_empty() {
                next.push((rest.to_owned(), None));
            }
            if cut {
                used += 1;
            }
        }
        parts = next;
    }
    let refs = parts.iter().filter(|(_, p)| p.is_some()).count();
    if refs == 0 {
        return;
    }
    // A literal `$` right before a reference cannot be written.
    let mut pieces = Vec::new();
    let mut all_unique = true;
    let mut what = Vec::new();
    for (text, p) in parts {
        match p {
            Some((piece, unique)) => {
                if matches!(pieces.last(), Some(Piece::Lit(l)) if l.ends_with('$')) {
                    return;
                }
                all_unique &= unique;
                what.push(text);
                pieces.push(piece);
            }
            None => match pieces.last_mut() {
                Some(Piece::Lit(l)) => l.push_str(&text),
                _ => pieces.push(Piece::Lit(text)),
            },
        }
    }
    let covered: usize = what.iter().map(String::len).sum();
    out.push(Candidate {
        rule: Rule::Embedded,
        confidence: if all_unique {
            Confidence::Likely
        } else {
            Confidence::Guess
        },
        score: 60 + (10 * covered / s.len().max(1)) as i64,
        build: Build::Template(Template(pieces)),
        how: format!(
            "{} inside the text",
            what.iter()
                .map(|w| Value::String(w.clone()).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
}

/// Percent-encoding as jq's `@uri` writes it: every byte but
/// `A-Za-z0-9-._~`.
pub fn uri_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `case` and `url-encoded`: an earlier string changed.
fn case_and_uri(ctx: &Ctx<'_>, s: &str, out: &mut Vec<Candidate>) {
    let mut seen: Vec<(Rule, usize)> = Vec::new();
    let encoded = s.contains('%');
    for (i, t) in ctx.sites.strings.iter().rev().take(MAX_SCAN) {
        let t: &str = t;
        if t == s {
            continue;
        }
        // A case change keeps the length; an encoding only lengthens.
        let (rule, filter, what) = if t.len() == s.len() && t.eq_ignore_ascii_case(s) {
            if s.bytes().all(|b| !b.is_ascii_uppercase()) {
                (Rule::Case, "ascii_downcase", "lower-cased")
            } else if s.bytes().all(|b| !b.is_ascii_lowercase()) {
                (Rule::Case, "ascii_upcase", "upper-cased")
            } else {
                continue;
            }
        } else if encoded && t.len() < s.len() && uri_encode(t) == s {
            (Rule::UrlEncoded, "@uri", "URL-encoded")
        } else {
            continue;
        };
        let site = &ctx.sites.sites[*i];
        let step = ctx.sites.step(site);
        if seen.iter().any(|(r, st)| *r == rule && *st == step) {
            continue;
        }
        seen.push((rule, step));
        let hops = ctx.sites.hops(site.doc, &site.path);
        out.push(Candidate {
            rule,
            confidence: Confidence::Likely,
            score: 65 + recency(ctx, step),
            build: Build::Derive {
                step,
                expr: then(&hops, filter),
            },
            how: format!("{} {what}", named(ctx, step, &hops)),
        });
    }
}

/// The regex a piece of text like `v` is cut out with: its kind of
/// characters, ending as `v` ends (so a full stop after it stays out).
fn class_of(v: &str) -> String {
    let body = if v.bytes().all(|b| b.is_ascii_digit()) {
        "[0-9]"
    } else if v.bytes().all(|b| b.is_ascii_alphanumeric()) {
        "[A-Za-z0-9]"
    } else if v
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        "[A-Za-z0-9_.-]"
    } else {
        r"\S"
    };
    let punctuated = body == "[A-Za-z0-9_.-]" || body == r"\S";
    if punctuated
        && v.chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    {
        format!("{body}*[A-Za-z0-9]")
    } else {
        format!("{body}+")
    }
}

/// `PATH | FILTER`, or the filter alone on the whole output.
fn then(hops: &[Hop], filter: &str) -> String {
    match jq_path(hops).as_str() {
        "." => filter.to_owned(),
        path => format!("{path} | {filter}"),
    }
}

/// `in-text`: a piece of an earlier text, cut out with a regular
/// expression anchored on the words before it.
fn in_text(ctx: &Ctx<'_>, s: &str, out: &mut Vec<Candidate>) {
    if s.chars().any(char::is_whitespace) {
        return;
    }
    for (i, t) in ctx.sites.strings.iter().rev().take(MAX_SCAN) {
        let t: &str = t;
        if t.len() <= s.len() {
            continue;
        }
        let site = &ctx.sites.sites[*i];
        let Some(at) = t.find(s) else {
            continue;
        };
        if !bounded(t, at, s.len()) || t[at + s.len()..].contains(s) {
            continue;
        }
        let step = ctx.sites.step(site);
        // The words before it on its line (at most 30 bytes, from a word's
        // start) anchor the cut.
        let line_start = t[..at].rfind('\n').map_or(0, |n| n + 1);
        let before = &t[line_start..at];
        let mut from = before.len().saturating_sub(30);
        while !before.is_char_boundary(from) {
            from += 1;
        }
        let mut anchor = &before[from..];
        if from > 0
            && let Some(space) = anchor.find(char::is_whitespace)
        {
            anchor = &anchor[space..];
        }
        let anchor = if anchor.is_empty() {
            "(?m)^".to_owned()
        } else {
            regex::escape(anchor)
        };
        let class = class_of(s);
        let re = format!("{anchor}(?<v>{class})");
        let hops = ctx.sites.hops(site.doc, &site.path);
        let expr = then(&hops, &format!("capture({}).v", Value::String(re.clone())));
        out.push(Candidate {
            rule: Rule::InText,
            confidence: Confidence::Likely,
            score: 55 + recency(ctx, step),
            build: Build::Derive { step, expr },
            how: format!(
                "cut out of {} with the pattern {}",
                named(ctx, step, &hops),
                Value::String(re)
            ),
        });
        return;
    }
}

/// `length`: the length of an earlier array.
fn length(ctx: &Ctx<'_>, arg: &str, v: &Value, out: &mut Vec<Candidate>) {
    let Some(n) = v.as_u64().filter(|n| *n >= 2) else {
        return;
    };
    let named_count = count_named(arg);
    if n < 10 && !named_count {
        return;
    }
    let found: Vec<_> = ctx
        .sites
        .arrays
        .iter()
        .filter(|a| a.len as u64 == n && !ctx.sites.docs[a.doc].prefix.contains(&Hop::Json))
        .collect();
    let Some(a) = found.last() else {
        return;
    };
    let step = ctx.sites.docs[a.doc].step;
    let hops = ctx.sites.hops(a.doc, &a.path);
    let confidence = if named_count && found.len() == 1 {
        Confidence::Likely
    } else {
        Confidence::Guess
    };
    out.push(Candidate {
        rule: Rule::Length,
        confidence,
        score: 40 + recency(ctx, step),
        build: Build::Derive {
            step,
            expr: then(&hops, "length"),
        },
        how: format!("the length of {}", named(ctx, step, &hops)),
    });
}
