//! One node of a pipe or composition: its call, `args` references, jq
//! `transform` and `when`, `on_error`, `for_each`, `mock` and `compensate`.

use std::fmt::Write as _;

use super::*;
use crate::file::keys::*;

/// Where each value under `args` is written, by JSON pointer (`/a`,
/// `/to/0`; `""` is `args` itself, at its key): a scalar at its value, a
/// mapping or a list at its key (or its first line), so a problem found
/// in the value can be marked on the argument's own line. Walked with a
/// stack: the depth is the file's.
fn arg_spans(key: &YNode, args: &YNode) -> Vec<(String, Span)> {
    let mut out = vec![(String::new(), key.span)];
    let mut stack: Vec<(String, &YNode, Span)> = vec![(String::new(), args, key.span)];
    while let Some((at, v, label)) = stack.pop() {
        if !at.is_empty() {
            let span = match v.kind {
                YKind::Map(_) | YKind::Seq(_) => label,
                _ => v.span,
            };
            out.push((at.clone(), span));
        }
        match &v.kind {
            YKind::Map(pairs) => {
                for (k, item) in pairs.iter().rev() {
                    let name = k.key_str().unwrap_or_default();
                    let pointer = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
                    stack.push((pointer, item, k.span));
                }
            }
            YKind::Seq(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{at}/{i}"), item, Span::at(item.span.start)));
                }
            }
            _ => {}
        }
    }
    out
}

impl<'s> Loader<'s> {
    pub(super) fn node(&mut self, v: &YNode, kind: Kind, scope: &FileScope<'_>) -> Option<Node> {
        let what = match v.get("id").and_then(YNode::as_str) {
            Some(id) => format!("node `{id}`"),
            None => "a node".to_owned(),
        };
        let pairs = self.mapping(v, NODE_KEYS, &what)?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, k, v)| (*k, *v))
        };

        let (id, id_span) = match get("id") {
            Some((_, idv)) => {
                let id = self.name(idv, "`id`")?;
                if !valid_id(&id) {
                    self.err_hint(
                        idv.span,
                        format!("`{id}` is not a valid id"),
                        "ids start with a letter or `_` and hold letters, digits, `_` and `-`",
                    );
                } else if matches!(id.as_str(), "var" | "env" | "item") {
                    self.err(
                        idv.span,
                        format!(
                            "`{id}` is reserved for `${{{id}.…}}` references; choose another id"
                        ),
                    );
                }
                (id, idv.span)
            }
            None => {
                self.err_hint(
                    v.span,
                    "a node needs an `id`",
                    "add `id: some_name`; later nodes refer to it as `${some_name.field}`",
                );
                return None;
            }
        };
        let mut needs = Vec::new();
        if let Some((k, nv)) = get("needs") {
            if kind == Kind::Pipe {
                self.err_hint(
                    k.span,
                    format!("`needs` is not allowed on pipe step `{id}`"),
                    "pipe steps run in order; use `compositions:` for a DAG",
                );
            } else {
                let items: Vec<&YNode> = match &nv.kind {
                    YKind::Seq(items) => items.iter().collect(),
                    YKind::Str(..) => vec![nv],
                    _ => {
                        self.err(
                            nv.span,
                            format!(
                                "`needs` must be a list of node ids, found {}",
                                nv.type_name()
                            ),
                        );
                        Vec::new()
                    }
                };
                for item in items {
                    if let Some(need) = self.name(item, "an entry of `needs`") {
                        if needs.iter().any(|n: &Need| n.id == need) {
                            self.warn(item.span, format!("`{need}` is listed twice in `needs`"));
                        } else {
                            needs.push(Need {
                                id: need,
                                span: item.span,
                            });
                        }
                    }
                }
            }
        }
        let (server, server_span) = match get("server") {
            Some((_, s)) => {
                let name = self.name(s, "`server`");
                if let Some(n) = &name
                    && !scope.knows(n)
                {
                    let msg = format!("node `{id}` names unknown server `{n}`");
                    match suggest(n, scope.names()) {
                        Some(s2) => self.err_hint(s.span, msg, format!("did you mean `{s2}`?")),
                        None if scope.names().is_empty() => self.err_hint(
                            s.span,
                            msg,
                            "declare it under `servers:` (or pass --server NAME=URL)",
                        ),
                        None => self.err_hint(
                            s.span,
                            msg,
                            format!("declared servers: {}", scope.names().join(", ")),
                        ),
                    }
                }
                (name, s.span)
            }
            None => {
                if scope.ambiguous() && get("mock").is_none() {
                    let what = if scope.cli.is_empty() {
                        format!("the file declares {}", scope.servers.len())
                    } else {
                        format!(
                            "{} are configured (the file's and the command line's)",
                            scope.names().len()
                        )
                    };
                    self.err_hint(
                        id_span,
                        format!("node `{id}` does not say which server to call, and {what}"),
                        format!("add `server:` with one of: {}", scope.names().join(", ")),
                    );
                }
                (None, id_span)
            }
        };
        let (tool, tool_span) = match get("tool") {
            Some((_, t)) => (self.name(t, "`tool`").unwrap_or_default(), t.span),
            None if get("mock").is_some() => (String::new(), id_span),
            None => {
                self.err_hint(
                    id_span,
                    format!("node `{id}` has no `tool`"),
                    "add `tool: <tool name>` (or a `mock:` fixture)",
                );
                (String::new(), id_span)
            }
        };
        let mut arg_refs = Vec::new();
        let arg_spans = get("args").map_or_else(Vec::new, |(k, a)| arg_spans(k, a));
        let args = match get("args") {
            Some((_, a)) => {
                if a.as_map().is_none() && !matches!(a.kind, YKind::Null) {
                    self.err(
                        a.span,
                        format!(
                            "`args` must be a mapping of argument names to values, found {}",
                            a.type_name()
                        ),
                    );
                }
                self.refs_in(a, "args", &mut arg_refs);
                match a.to_json() {
                    Value::Null => Value::Object(Default::default()),
                    j => j,
                }
            }
            None => Value::Object(Default::default()),
        };
        let transform = get("transform").and_then(|(_, t)| self.transform(t));
        let when = get("when").and_then(|(_, w)| self.when(w));
        let on_error = get("on_error").map_or(OnError::Stop, |(_, o)| self.on_error(o));
        let for_each = get("for_each").and_then(|(_, f)| self.for_each(f));
        let aligned = match get("aligned") {
            Some((k, a)) => {
                let ids = self.string_list(a, "`aligned`");
                if for_each.is_none() {
                    self.err(
                        k.span,
                        format!("`aligned` needs a `for_each`: node `{id}` does not fan out"),
                    );
                }
                for (item, name) in a.as_seq().unwrap_or_default().iter().zip(&ids) {
                    // A pipe step reads earlier steps without `needs`.
                    if kind == Kind::Dag && !needs.iter().any(|n| &n.id == name) {
                        self.err_hint(
                            item.span,
                            format!(
                                "`aligned` names `{name}`, which is not in the `needs` of `{id}`"
                            ),
                            format!("add `{name}` to `needs`"),
                        );
                    }
                }
                ids
            }
            None => Vec::new(),
        };
        let max_concurrency = match get("max_concurrency") {
            Some((k, m)) => {
                if for_each.is_none() {
                    self.warn(
                        k.span,
                        format!("`max_concurrency` has no effect: node `{id}` has no `for_each`"),
                    );
                }
                match self.count(m, "`max_concurrency`") {
                    Some(0) => {
                        self.err(m.span, "`max_concurrency` must be at least 1");
                        1
                    }
                    Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                    None => 1,
                }
            }
            None => 1,
        };
        let mock = get("mock").and_then(|(_, m)| self.mock(m));
        let timeout = get("timeout").and_then(|(_, t)| self.duration(t, "`timeout`"));
        let task = get("task").and_then(|(_, t)| match &t.kind {
            YKind::Bool(b) => Some(*b),
            YKind::Str(s, _) if s == "auto" => None,
            _ => {
                self.err(
                    t.span,
                    format!(
                        "`task` must be true, false or auto, found {}",
                        t.type_name()
                    ),
                );
                None
            }
        });
        let task_span = get("task").map_or(v.span, |(_, t)| t.span);
        let max_cost_per_call_usd = get("max_cost_per_call_usd")
            .and_then(|(_, c)| self.number(c, "`max_cost_per_call_usd`"));
        let max_tokens_per_call =
            get("max_tokens_per_call").and_then(|(_, c)| self.count(c, "`max_tokens_per_call`"));
        let compensate = get("compensate").and_then(|(_, c)| self.compensate(c, scope));
        let meta = get("meta").map(|(_, m)| {
            if m.as_map().is_none() {
                self.err(m.span, "`meta` must be a mapping of request `_meta` fields");
            }
            m.to_json()
        });
        if let Some((_, d)) = get("description") {
            self.string(d, "`description`");
        }
        let answers = get("answers").map_or_else(Vec::new, |(_, a)| self.answers(a, &id));

        let mut node = Node {
            id,
            span: v.span,
            id_span,
            needs,
            server,
            server_span,
            tool,
            tool_span,
            args,
            arg_refs,
            arg_spans,
            transform,
            when,
            on_error,
            for_each,
            aligned,
            max_concurrency,
            mock,
            timeout,
            task,
            task_span,
            max_cost_per_call_usd,
            max_tokens_per_call,
            compensate,
            meta,
            answers,
            hash: String::new(),
        };
        node.hash = super::hash::node_hash(&node, &mut self.scratch);
        Some(node)
    }

    /// Parses every string under `v` as a template, collecting references
    /// and reporting syntax errors at their place.
    pub(super) fn refs_in(&mut self, v: &YNode, at: &str, out: &mut Vec<RefSite>) {
        let mut path = at.to_owned();
        self.refs_at(v, &mut path, out);
    }

    /// [`Loader::refs_in`] with the path to `v` in one buffer that each
    /// level extends and cuts back: a key or an index costs no new string
    /// unless a reference is found under it.
    fn refs_at(&mut self, v: &YNode, at: &mut String, out: &mut Vec<RefSite>) {
        match &v.kind {
            YKind::Str(s, _) => {
                if !s.contains('$') {
                    return;
                }
                match reference::parse_template(s) {
                    Ok(t) => {
                        for part in t.parts {
                            if let Part::Ref(r) = part {
                                let pos = v.pos_in_str(self.src, r.offset);
                                out.push(RefSite {
                                    reference: r,
                                    pos,
                                    at: at.clone(),
                                });
                            }
                        }
                    }
                    Err(e) => {
                        let start = v.pos_in_str(self.src, e.offset);
                        let end = v.pos_in_str(self.src, e.offset + e.len.max(1));
                        self.diags.push(
                            Diagnostic::error(
                                Span::new(start, end),
                                format!("in `{at}`: {}", e.message),
                            )
                            .with_hint("write `$${` for a literal `${`"),
                        );
                    }
                }
            }
            YKind::Seq(items) => {
                let len = at.len();
                for (i, item) in items.iter().enumerate() {
                    let _ = write!(at, "[{i}]");
                    self.refs_at(item, at, out);
                    at.truncate(len);
                }
            }
            YKind::Map(pairs) => {
                let len = at.len();
                for (k, item) in pairs {
                    at.push('.');
                    at.push_str(&k.key_str().unwrap_or_default());
                    self.refs_at(item, at, out);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// Compiles a jq program written in scalar `v`, starting at byte `from`
    /// of its text; errors point into the file. A text the file repeats
    /// (the same `transform` on many nodes) is compiled once and shared:
    /// compiling depends on the text alone (and on the load's jq limits,
    /// which hold for a whole load), and a program is cheap to clone.
    pub(super) fn jq(
        &mut self,
        v: &YNode,
        text: &str,
        from: usize,
        what: &str,
    ) -> Option<JqProgram> {
        if let Some(p) = self.programs.get(text) {
            return Some(p.clone());
        }
        match JqProgram::compile_within(text, self.jq) {
            Ok(p) => {
                self.programs.insert(text.to_owned(), p.clone());
                Some(p)
            }
            Err(e) => {
                for problem in e.problems {
                    let start = v.pos_in_str(self.src, from + problem.offset);
                    let end = v.pos_in_str(self.src, from + problem.offset + problem.len.max(1));
                    let d = Diagnostic::error(
                        Span::new(start, end),
                        format!("jq error in {what}: {}", problem.message),
                    );
                    self.diags.push(match problem.hint {
                        Some(h) => d.with_hint(h),
                        None => d,
                    });
                }
                None
            }
        }
    }

    pub(super) fn transform(&mut self, v: &YNode) -> Option<JqProgram> {
        let target = match &v.kind {
            YKind::Str(..) => v,
            YKind::Map(_) => {
                let pairs = self.mapping(v, TRANSFORM_KEYS, "`transform`")?;
                match pairs.into_iter().find(|(k, _, _)| k == "jq") {
                    Some((_, _, jq)) => jq,
                    None => {
                        self.err_hint(
                            v.span,
                            "`transform` needs a `jq` program",
                            "write `transform: {jq: \".field\"}`",
                        );
                        return None;
                    }
                }
            }
            _ => {
                self.err(
                    v.span,
                    format!(
                        "`transform` must be a jq program string or `{{jq: …}}`, found {}",
                        v.type_name()
                    ),
                );
                return None;
            }
        };
        let text = self.string(target, "`transform.jq`")?;
        self.jq(target, &text, 0, "`transform`")
    }

    pub(super) fn when(&mut self, v: &YNode) -> Option<When> {
        let source = match &v.kind {
            YKind::Str(s, _) => s.clone(),
            YKind::Bool(b) => b.to_string(),
            _ => {
                self.err(
                    v.span,
                    format!("`when` must be a string, found {}", v.type_name()),
                );
                return None;
            }
        };
        let lead = source.len() - source.trim_start().len();
        let body = &source[lead..];
        if body.starts_with("${") {
            let Some(end) = reference_end(body) else {
                let at = v.pos_in_str(self.src, lead);
                self.err(
                    Span::at(at),
                    "in `when`: unterminated reference: `${` has no closing `}`",
                );
                return None;
            };
            let ref_text = &body[..end];
            let subject = match reference::parse_template(ref_text) {
                Ok(t) => match t.parts.into_iter().next() {
                    Some(Part::Ref(r)) => RefSite {
                        reference: r,
                        pos: v.pos_in_str(self.src, lead),
                        at: "when".into(),
                    },
                    _ => return None,
                },
                Err(e) => {
                    let at = v.pos_in_str(self.src, lead + e.offset);
                    self.err(Span::at(at), format!("in `when`: {}", e.message));
                    return None;
                }
            };
            let rest = &body[end..];
            let rest_trim = rest.trim_start();
            let filter = if rest_trim.is_empty() {
                None
            } else if let Some(filter) = rest_trim.strip_prefix('|') {
                let from = lead + end + (rest.len() - rest_trim.len()) + 1;
                Some(self.jq(v, filter, from, "`when`")?)
            } else {
                let at = v.pos_in_str(self.src, lead + end + (rest.len() - rest_trim.len()));
                self.err_hint(
                    Span::at(at),
                    "in `when`: expected `|` after the reference",
                    "write `${step.field} | jq-filter`, e.g. `${find.users} | length > 0`",
                );
                return None;
            };
            Some(When {
                source,
                subject: Some(subject),
                filter,
                span: v.span,
            })
        } else {
            let filter = self.jq(v, &source, 0, "`when`")?;
            Some(When {
                source,
                subject: None,
                filter: Some(filter),
                span: v.span,
            })
        }
    }

    pub(super) fn on_error(&mut self, v: &YNode) -> OnError {
        let hint = "use `stop`, `continue`, `retry:<n>` or `{retry: {max: n, backoff: 500ms}}`";
        match &v.kind {
            YKind::Str(s, _) => match s.trim() {
                "stop" => OnError::Stop,
                "continue" => OnError::Continue,
                t => {
                    if let Some(n) = t.strip_prefix("retry:")
                        && let Ok(max) = n.trim().parse::<u32>()
                    {
                        return OnError::Retry {
                            max,
                            backoff: DEFAULT_BACKOFF,
                        };
                    }
                    let msg = format!("invalid `on_error` value `{t}`");
                    match suggest(t, ["stop", "continue", "retry:3"]) {
                        Some(s2) => {
                            self.err_hint(v.span, msg, format!("did you mean `{s2}`? ({hint})"))
                        }
                        None => self.err_hint(v.span, msg, hint),
                    }
                    OnError::Stop
                }
            },
            YKind::Map(_) => {
                let Some(pairs) = self.mapping(v, ON_ERROR_KEYS, "`on_error`") else {
                    return OnError::Stop;
                };
                let Some((_, _, r)) = pairs.into_iter().next() else {
                    self.err_hint(v.span, "`on_error` mapping needs `retry`", hint);
                    return OnError::Stop;
                };
                if let YKind::Int(n) = r.kind {
                    return match u32::try_from(n) {
                        Ok(max) => OnError::Retry {
                            max,
                            backoff: DEFAULT_BACKOFF,
                        },
                        Err(_) => {
                            self.err(r.span, "`retry` must be a non-negative integer");
                            OnError::Stop
                        }
                    };
                }
                let Some(pairs) = self.mapping(r, RETRY_KEYS, "`on_error.retry`") else {
                    return OnError::Stop;
                };
                let mut max = None;
                let mut backoff = DEFAULT_BACKOFF;
                for (k, _, val) in pairs {
                    if k == "max" {
                        max = self.count(val, "`retry.max`");
                    } else if let Some(d) = self.duration(val, "`retry.backoff`") {
                        backoff = d;
                    }
                }
                match max {
                    Some(m) => OnError::Retry {
                        max: u32::try_from(m).unwrap_or(u32::MAX),
                        backoff,
                    },
                    None => {
                        self.err_hint(
                            r.span,
                            "`retry` needs `max`",
                            "write `{retry: {max: 3, backoff: 500ms}}`",
                        );
                        OnError::Stop
                    }
                }
            }
            _ => {
                self.err_hint(
                    v.span,
                    format!("invalid `on_error`: found {}", v.type_name()),
                    hint,
                );
                OnError::Stop
            }
        }
    }

    pub(super) fn for_each(&mut self, v: &YNode) -> Option<ForEach> {
        let text = self.string(v, "`for_each`")?;
        let mut sites = Vec::new();
        self.refs_in(v, "for_each", &mut sites);
        let single = reference::parse_template(&text)
            .ok()
            .and_then(|t| t.single_ref().cloned());
        match (single, sites.pop()) {
            (Some(r), Some(site)) if matches!(r.root, Root::Node(_) | Root::Var(_)) => {
                Some(ForEach { source: text, site })
            }
            (Some(_), Some(_)) => {
                self.err_hint(
                    v.span,
                    "`for_each` must name a parent node (or a var)",
                    "write `for_each: \"${parent}\"`",
                );
                None
            }
            _ => {
                // A syntax error inside the reference was reported already.
                let reported = self
                    .diags
                    .last()
                    .is_some_and(|d| d.span.start.line == v.span.start.line);
                if !reported {
                    self.err_hint(
                        v.span,
                        format!("`for_each` must be exactly one reference, found `{text}`"),
                        "write `for_each: \"${parent}\"`, `\"${parent[*]}\"` or `\"${parent.items}\"`",
                    );
                }
                None
            }
        }
    }

    pub(super) fn mock(&mut self, v: &YNode) -> Option<Mock> {
        let pairs = self.mapping(v, MOCK_KEYS, "`mock`")?;
        match pairs.as_slice() {
            [(k, _, val)] if k == "result" => Some(Mock::Result(val.to_json())),
            [(_, _, val)] => Some(Mock::Error(val.to_json())),
            [] => {
                self.err_hint(
                    v.span,
                    "`mock` needs `result` or `error`",
                    "write `mock: {result: {...}}`",
                );
                None
            }
            _ => {
                self.err(v.span, "`mock` takes `result` or `error`, not both");
                None
            }
        }
    }

    pub(super) fn compensate(&mut self, v: &YNode, scope: &FileScope<'_>) -> Option<Compensate> {
        let pairs = self.mapping(v, COMPENSATE_KEYS, "`compensate`")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let server = get("server").and_then(|s| {
            let n = self.name(s, "`compensate.server`")?;
            if !scope.knows(&n) {
                self.err(s.span, format!("`compensate` names unknown server `{n}`"));
            }
            Some(n)
        });
        let Some(tool) = get("tool").and_then(|t| self.name(t, "`compensate.tool`")) else {
            self.err_hint(
                v.span,
                "`compensate` needs a `tool`",
                "write `compensate: {tool: undo_thing, args: {...}}`",
            );
            return None;
        };
        let mut arg_refs = Vec::new();
        let args = match get("args") {
            Some(a) => {
                self.refs_in(a, "compensate.args", &mut arg_refs);
                a.to_json()
            }
            None => Value::Object(Default::default()),
        };
        Some(Compensate {
            server,
            tool,
            args,
            arg_refs,
        })
    }
}
