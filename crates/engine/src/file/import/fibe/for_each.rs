//! A Fibe `for_each` block → one fanned-out node per inner step.
//!
//! An inner step that reads only the step just before it fans out over
//! that step's outputs; any other inner step fans out over the list, and
//! reads earlier inner steps element-wise (`aligned:`), so it may read the
//! alias and any earlier inner step together.

use super::*;

impl Fibe<'_, '_> {
    pub(super) fn for_each(
        &mut self,
        s: &YNode,
        fallback: &str,
        depth: usize,
        prev: &[String],
    ) -> Option<Vec<String>> {
        let fe = s.get("for_each")?;
        let alias = match s.get("as").map(|a| (a, a.as_str())) {
            Some((_, Some(a))) if !a.is_empty() => a.to_owned(),
            Some((a, _)) => {
                self.cx.err(a.span, "`as` must be a non-empty name");
                return None;
            }
            None => {
                self.cx.err_hint(
                    fe.span,
                    "`for_each` needs `as`",
                    "name the current element, e.g. `\"as\": \"user\"`, and read it as `$.user`",
                );
                return None;
            }
        };
        let Some(src) = fe.as_str().filter(|t| t.starts_with('$')) else {
            self.cx.err_hint(
                fe.span,
                "the value of `for_each` must be a JSONPath starting with `$`",
                "e.g. `\"for_each\": \"$.list.items\"`",
            );
            return None;
        };
        let Some(inner) = s
            .get("steps")
            .and_then(YNode::as_seq)
            .filter(|i| !i.is_empty())
        else {
            self.cx.err(
                s.get("steps").map_or(fe.span, |x| x.span),
                "`for_each` needs a non-empty `steps` list",
            );
            return None;
        };
        for k in ["tool", "args", "on_error", "input_path", "output_path"] {
            if let Some((key, _)) = s.as_map().and_then(|m| m.iter().find(|(x, _)| x.is_key(k))) {
                self.cx.err(
                    key.span,
                    format!("`{k}` belongs on the steps inside `for_each`, not on the block"),
                );
            }
        }
        if depth + 1 > MAX_DEPTH {
            return self.step(&inner[0], fallback, depth + 1, prev);
        }
        let (source, mut needs) = self.source(fe, src)?;
        let inner_ids: Vec<Option<String>> = inner
            .iter()
            .map(|i| i.get("id").and_then(YNode::as_str).map(str::to_owned))
            .collect();
        let block_id = s.get("id").and_then(YNode::as_str).map(str::to_owned);
        // `collect` must read the last inner step (it becomes a transform).
        let last_id = inner_ids.last().cloned().flatten();
        let collect = match s.get("collect") {
            None => None,
            Some(c) => {
                let parsed = c.as_str().map(|t| parse_path(t).map(split_root));
                match parsed {
                    Some(Ok(Some((root, rest)))) if Some(&root) == last_id.as_ref() => {
                        Some((jq_path(&rest), c.span))
                    }
                    Some(Err(e)) => {
                        self.cx.err(c.span, format!("`collect`: {e}"));
                        return None;
                    }
                    _ => {
                        self.cx.err_hint(
                            c.span,
                            "pipewright converts a `collect` that reads the last inner step",
                            match &last_id {
                                Some(l) => {
                                    format!("write `\"collect\": \"$.{l}\"` (or a path under it)")
                                }
                                None => "give the last inner step an `id` and collect `$.<id>`"
                                    .to_owned(),
                            },
                        );
                        return None;
                    }
                }
            }
        };
        let mut prev_native: Option<String> = None;
        // Native ids of the inner steps translated so far, by Fibe id.
        let mut inner_native: Vec<(String, String)> = Vec::new();
        for (j, st) in inner.iter().enumerate() {
            if st.get("tool").is_none()
                || st.get("parallel").is_some()
                || st.get("for_each").is_some()
            {
                if st.get("parallel").is_some() || st.get("for_each").is_some() {
                    self.cx.err(st.span, "pipewright converts `for_each` blocks whose steps are tool calls; nest the block's work in separate steps");
                } else {
                    self.step(st, fallback, depth + 1, prev);
                }
                return None;
            }
            let roots = roots_of(st.get("args"));
            let prev_fibe = if j > 0 {
                inner_ids[j - 1].clone()
            } else {
                None
            };
            let uses_alias = roots.contains(&alias);
            let uses_prev = prev_fibe.as_ref().is_some_and(|p| roots.contains(p));
            // Earlier inner steps this one reads, other than through `${item}`.
            let reads_inner: Vec<String> = inner_native
                .iter()
                .filter(|(f, _)| roots.contains(f))
                .map(|(_, n)| n.clone())
                .collect();
            // Reading only the step just before: fan out over its outputs.
            // Anything more (the alias too, or an older step): fan out over
            // the list and read the inner steps element-wise (`aligned`).
            let over_prev = uses_prev && !uses_alias && reads_inner.len() == 1;
            let scope = Scope {
                alias: (!over_prev).then(|| alias.clone()),
                fan_prev: if over_prev { prev_fibe.clone() } else { None },
                step: String::new(),
            };
            let is_last = j + 1 == inner.len();
            let fan = match (&prev_native, over_prev) {
                (Some(p), true) => native_ref(Root::Node(p.clone()), Vec::new()),
                _ => source.clone(),
            };
            let mut seq_prev: Vec<String> = match &prev_native {
                Some(p) => vec![p.clone()],
                None => prev.to_vec(),
            };
            if !over_prev {
                for n in needs.iter().chain(&reads_inner) {
                    if !seq_prev.contains(n) {
                        seq_prev.push(n.clone());
                    }
                }
            }
            let rename = if is_last { block_id.clone() } else { None };
            let id = self.tool_step(
                st,
                &format!("{fallback}_{j}"),
                &seq_prev,
                &scope,
                rename.as_deref(),
            )?;
            let step = self.steps.last_mut()?;
            step.for_each = Some((fan, fe.span));
            if !over_prev {
                step.aligned = reads_inner;
            }
            if is_last
                && let Some((jq, span)) = &collect
                && jq != "."
            {
                step.transform = Some(match step.transform.take() {
                    Some((t, _)) => (format!("({t}) | {jq}"), *span),
                    None => (jq.clone(), *span),
                });
            }
            if let Some(f) = &inner_ids[j] {
                inner_native.push((f.clone(), id.clone()));
            }
            prev_native = Some(id);
            needs.clear();
        }
        let last = prev_native?;
        if let Some(b) = &block_id {
            self.bound.insert(b.clone(), last.clone());
        }
        Some(vec![last])
    }
}
