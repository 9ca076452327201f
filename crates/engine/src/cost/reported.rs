//! Cost and token figures of a call, as a server reports them in the
//! result's `_meta`.
//!
//! Accepted keys (the `pipewright/` prefix is preferred, bare names are
//! accepted too): `cost_usd` (number), `tokens` (a number, or
//! `{input, output}`), `model` (string).

use serde_json::Value;

/// `(cost_usd, tokens, model)` reported by a result's `_meta`, each if
/// present.
pub fn from_meta(meta: Option<&Value>) -> (Option<f64>, Option<u64>, Option<String>) {
    let Some(meta) = meta.and_then(Value::as_object) else {
        return (None, None, None);
    };
    let get = |key: &str| {
        meta.get(&format!("pipewright/{key}"))
            .or_else(|| meta.get(key))
    };
    let cost = get("cost_usd")
        .and_then(Value::as_f64)
        .filter(|c| *c >= 0.0);
    let tokens = get("tokens").and_then(|t| match t {
        Value::Number(n) => n.as_u64(),
        Value::Object(m) => {
            let part = |k: &str| m.get(k).and_then(Value::as_u64).unwrap_or(0);
            Some(part("input") + part("output"))
        }
        _ => None,
    });
    let model = get("model").and_then(Value::as_str).map(str::to_owned);
    (cost, tokens, model)
}

/// The `{input, output}` split of `_meta` tokens, when reported that way.
pub fn meta_token_split(meta: Option<&Value>) -> Option<(u64, u64)> {
    let meta = meta?.as_object()?;
    let t = meta
        .get("pipewright/tokens")
        .or_else(|| meta.get("tokens"))?;
    let part = |k: &str| t.get(k).and_then(Value::as_u64);
    match (part("input"), part("output")) {
        (None, None) => None,
        (i, o) => Some((i.unwrap_or(0), o.unwrap_or(0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_prefixed_and_bare_keys() {
        let r = json!({"pipewright/cost_usd": 0.002, "pipewright/tokens": {"input": 10, "output": 5}, "pipewright/model": "m"});
        assert_eq!(
            from_meta(Some(&r)),
            (Some(0.002), Some(15), Some("m".into()))
        );
        let r = json!({"cost_usd": 1.5, "tokens": 7});
        assert_eq!(from_meta(Some(&r)), (Some(1.5), Some(7), None));
        assert_eq!(from_meta(None), (None, None, None));
    }
}
