//! `for_each`: consecutive calls of one tool whose varying arguments are,
//! call by call, the items (or the same field of each item) of one earlier
//! array, in its order and covering it, become one fan-out.

use serde_json::Value;

use super::sites::{Sites, get, plain};
use crate::lang::reference::Segment;
use crate::record::calls::Call;
use crate::record::draft::{Piece, leaves_of};

/// A fan-out found.
#[derive(Debug, Clone, PartialEq)]
pub struct Fan {
    /// How many calls it stands for.
    pub n: usize,
    /// The array it goes over.
    pub source: Piece,
    /// Each varying argument leaf and the path in the item it reads.
    pub items: Vec<(Vec<Segment>, Vec<Segment>)>,
}

/// The fan-out the calls at the start of `calls` make, if they make one
/// over an array `sites` holds; the one covering the most calls wins, the
/// latest array on a tie. The arrays tried are the ones whose first item
/// holds the first call's first changing value (found by value, so a long
/// session is not tried array by array).
pub fn detect(calls: &[&Call], sites: &Sites) -> Option<Fan> {
    let first = calls.first()?;
    // No fan-out is longer than the longest earlier list.
    let longest = sites.arrays.iter().map(|a| a.len).max().unwrap_or(0);
    let run = calls
        .iter()
        .take(longest)
        .take_while(|c| c.tool == first.tool && c.server == first.server)
        .count();
    if run < 2 {
        return None;
    }
    let leaves: Vec<Vec<(Vec<Segment>, Value)>> = calls[..run]
        .iter()
        .map(|c| leaves_of(&Value::Object(c.args.clone())))
        .collect();
    // A value the first two calls differ in: item 0 of the array holds it.
    let v0 = leaves[0]
        .iter()
        .zip(&leaves[1])
        .find(|(a, b)| a.0 == b.0 && a.1 != b.1)
        .map(|(a, _)| &a.1)?;
    let mut tried: Vec<(usize, Vec<Segment>)> = Vec::new();
    let mut best: Option<Fan> = None;
    for &i in sites.holding(v0).iter().rev() {
        let site = &sites.sites[i];
        for (at, seg) in site.path.iter().enumerate() {
            if *seg != Segment::Index(0) {
                continue;
            }
            let arr = site.path[..at].to_vec();
            if tried.contains(&(site.doc, arr.clone())) {
                continue;
            }
            tried.push((site.doc, arr.clone()));
            let doc = &sites.docs[site.doc];
            let Some(Value::Array(items)) = get(&doc.value, &arr) else {
                continue;
            };
            let n = items.len();
            if n < 2 || n > run || best.as_ref().is_some_and(|b| b.n >= n) {
                continue;
            }
            let Some(mut path) = plain(&doc.prefix) else {
                continue;
            };
            let Some(mapped) = map_items(&leaves[..n], items) else {
                continue;
            };
            path.extend(arr);
            best = Some(Fan {
                n,
                source: Piece::Out {
                    step: doc.step,
                    path,
                },
                items: mapped,
            });
        }
    }
    best
}

/// For calls whose leaves are `calls`, each varying leaf with the path in
/// the items where call k's value is item k's; `None` unless every varying
/// leaf has one (and at least one varies).
fn map_items(
    calls: &[Vec<(Vec<Segment>, Value)>],
    items: &[Value],
) -> Option<Vec<(Vec<Segment>, Vec<Segment>)>> {
    let first = calls.first()?;
    if calls
        .iter()
        .any(|c| c.len() != first.len() || c.iter().zip(first).any(|(a, b)| a.0 != b.0))
    {
        return None;
    }
    let mut out = Vec::new();
    for (at, (path, v0)) in first.iter().enumerate() {
        if calls.iter().all(|c| &c[at].1 == v0) {
            continue;
        }
        // Where in item 0 the first call's value is, then every item agrees.
        let mut places: Vec<Vec<Segment>> = match &items[0] {
            v if v == v0 => vec![Vec::new()],
            Value::Object(_) | Value::Array(_) => leaves_of(&items[0])
                .into_iter()
                .filter(|(_, v)| v == v0)
                .map(|(p, _)| p)
                .collect(),
            _ => Vec::new(),
        };
        places.sort_by_key(Vec::len);
        let q = places.into_iter().find(|q| {
            calls
                .iter()
                .zip(items)
                .all(|(c, item)| get(item, q) == Some(&c[at].1))
        })?;
        out.push((path.clone(), q));
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::mcp::human::CallExtras;
    use serde_json::json;

    fn call(tool: &str, args: Value) -> Call {
        Call {
            server: "demo".into(),
            tool: tool.into(),
            args: args.as_object().cloned().unwrap_or_default(),
            result: Json::null(),
            output: Json::null(),
            is_error: false,
            at_ms: 0.0,
            duration_ms: 0.0,
            extras: CallExtras::default(),
            rounds: 0,
            line: 1,
        }
    }

    #[test]
    fn calls_over_every_item_in_order_fan_out() {
        let mut sites = Sites::default();
        sites.add(
            0,
            &json!({"users": [{"id": "u1"}, {"id": "u2"}, {"id": "u3"}]}),
            false,
        );
        let calls: Vec<Call> = ["u1", "u2", "u3"]
            .iter()
            .map(|u| call("get", json!({"user_id": u, "verbose": true})))
            .chain([call("send", json!({}))])
            .collect();
        let refs: Vec<&Call> = calls.iter().collect();
        let fan = detect(&refs, &sites).unwrap();
        assert_eq!(fan.n, 3);
        assert_eq!(
            fan.source,
            Piece::Out {
                step: 0,
                path: vec![Segment::Field("users".into())]
            }
        );
        assert_eq!(
            fan.items,
            [(
                vec![Segment::Field("user_id".into())],
                vec![Segment::Field("id".into())]
            )]
        );
    }

    #[test]
    fn out_of_order_partial_or_unvarying_calls_do_not() {
        let mut sites = Sites::default();
        sites.add(0, &json!(["a", "b", "c"]), false);
        let check = |values: &[&str]| {
            let calls: Vec<Call> = values
                .iter()
                .map(|v| call("get", json!({"k": v})))
                .collect();
            let refs: Vec<&Call> = calls.iter().collect();
            detect(&refs, &sites).map(|f| f.n)
        };
        assert_eq!(check(&["a", "b", "c"]), Some(3));
        assert_eq!(check(&["b", "a", "c"]), None);
        assert_eq!(check(&["a", "a", "a"]), None);
        assert_eq!(check(&["a"]), None);
        assert_eq!(check(&["a", "b"]), None);
    }
}
