//! `pipe:` and `compositions:`: each becomes a composition with its nodes,
//! `output`, `expect:` assertions and `cases:`.

use super::*;
use crate::file::keys::*;

impl<'s> Loader<'s> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pipe<'n>(
        &mut self,
        key: &YNode,
        pipe: &YNode,
        name: String,
        description: Option<String>,
        get: &dyn Fn(&str) -> Option<(&'n YNode, &'n YNode)>,
        scope: &FileScope<'_>,
    ) -> Option<Composition> {
        let steps = match pipe.as_seq() {
            Some([]) => {
                self.err_hint(
                    pipe.span,
                    "`pipe` is empty",
                    "add at least one step with `id` and `tool`",
                );
                return None;
            }
            Some(steps) => steps,
            None => {
                self.err(
                    pipe.span,
                    format!("`pipe` must be a list of steps, found {}", pipe.type_name()),
                );
                return None;
            }
        };
        let nodes: Vec<Node> = steps
            .iter()
            .filter_map(|s| self.node(s, Kind::Pipe, scope))
            .collect();
        let output = get("output").and_then(|(_, v)| self.output(v));
        let expect = get("expect")
            .map(|(_, v)| self.expectations(v))
            .unwrap_or_default();
        let cases = get("cases").map(|(_, v)| self.cases(v)).unwrap_or_default();
        self.expect_overridden(&name, get("expect").map(|(k, _)| k), &expect, &cases);
        Some(self.finish(Composition {
            name,
            description,
            kind: Kind::Pipe,
            nodes,
            output,
            expect,
            cases,
            eval: crate::file::model::EvalSpec::default(),
            budget: Budget::default(),
            span: key.span,
            parents: Vec::new(),
            children: Vec::new(),
            order: Vec::new(),
            waves: Vec::new(),
        }))
    }

    pub(super) fn composition(&mut self, v: &YNode, scope: &FileScope<'_>) -> Option<Composition> {
        let pairs = self.mapping(v, COMPOSITION_KEYS, "a composition")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, k, v)| (*k, *v))
        };
        let name = match get("name") {
            Some((_, n)) => self.name(n, "composition `name`")?,
            None => {
                self.err_hint(
                    v.span,
                    "a composition needs a `name`",
                    "add `name: my-composition`",
                );
                return None;
            }
        };
        let eval = get("eval").map_or_else(Default::default, |(_, v)| self.eval(v));
        let description = get("description").and_then(|(_, d)| self.string(d, "`description`"));
        let nodes = match get("nodes") {
            None => {
                self.err_hint(
                    v.span,
                    format!("composition `{name}` has no `nodes`"),
                    "add a `nodes:` list",
                );
                Vec::new()
            }
            Some((_, n)) => match n.as_seq() {
                Some([]) => {
                    self.err(
                        n.span,
                        format!("composition `{name}` has an empty `nodes` list"),
                    );
                    Vec::new()
                }
                Some(items) => items
                    .iter()
                    .filter_map(|i| self.node(i, Kind::Dag, scope))
                    .collect(),
                None => {
                    self.err(
                        n.span,
                        format!("`nodes` must be a list, found {}", n.type_name()),
                    );
                    Vec::new()
                }
            },
        };
        let output = get("output").and_then(|(_, o)| self.output(o));
        let expect = get("expect")
            .map(|(_, e)| self.expectations(e))
            .unwrap_or_default();
        let cases = get("cases").map(|(_, c)| self.cases(c)).unwrap_or_default();
        self.expect_overridden(&name, get("expect").map(|(k, _)| k), &expect, &cases);
        let budget = get("budget").map_or_else(Budget::default, |(_, b)| self.budget(b));
        let comp = self.finish(Composition {
            name,
            description,
            kind: Kind::Dag,
            nodes,
            output,
            expect,
            cases,
            eval,
            budget,
            span: v.span,
            parents: Vec::new(),
            children: Vec::new(),
            order: Vec::new(),
            waves: Vec::new(),
        });
        if comp.passes_vars_through() {
            self.warn_passthrough_vars(&comp, scope);
        }
        Some(comp)
    }

    /// Warns at each `${var.X}` with no default under `vars:` in a
    /// composition with no cases: unless `--var` gives it, it is passed on
    /// as written, not an error.
    fn warn_passthrough_vars(&mut self, comp: &Composition, scope: &FileScope<'_>) {
        let mut warned: Vec<&str> = Vec::new();
        for site in comp.nodes.iter().flat_map(Node::refs) {
            if let crate::lang::reference::Root::Var(name) = &site.reference.root
                && !scope.vars.contains_key(name)
                && !warned.contains(&name.as_str())
            {
                warned.push(name);
                self.warn(
                    Span::at(site.pos),
                    format!(
                        "`${{var.{name}}}` has no default under `vars:`; unless --var {name}=… is given it is passed on as written (mcptest compositions pass an undefined var through)"
                    ),
                );
            }
        }
    }

    pub(super) fn finish(&mut self, mut comp: Composition) -> Composition {
        graph::build(&mut comp, &mut self.diags);
        comp
    }

    pub(super) fn output(&mut self, v: &YNode) -> Option<OutputSpec> {
        match &v.kind {
            YKind::Str(s, _) => Some(OutputSpec::Node {
                id: s.clone(),
                span: v.span,
            }),
            YKind::Map(_) => {
                let pairs = self.mapping(v, OUTPUT_KEYS, "`output`")?;
                let Some((_, _, a)) = pairs.into_iter().next() else {
                    self.err_hint(
                        v.span,
                        "`output` mapping needs `assemble`",
                        "write `output: {assemble: \"{a: .nodes.x}\"}`",
                    );
                    return None;
                };
                let text = self.string(a, "`output.assemble`")?;
                self.jq(a, &text, 0, "`output.assemble`")
                    .map(OutputSpec::Assemble)
            }
            _ => {
                self.err(
                    v.span,
                    format!(
                        "`output` must be a node id or `{{assemble: jq}}`, found {}",
                        v.type_name()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn expectations(&mut self, v: &YNode) -> Vec<Expectation> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("`expect` must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        items.iter().filter_map(|i| self.expectation(i)).collect()
    }

    pub(super) fn expectation(&mut self, v: &YNode) -> Option<Expectation> {
        let pairs = self.mapping(v, EXPECTATION_KEYS, "an expectation")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let Some(target) = get("target").and_then(|t| self.name(t, "`target`")) else {
            self.err_hint(
                v.span,
                "an expectation needs a `target`",
                "e.g. `target: nodes.find.status`",
            );
            return None;
        };
        let t_node = get("target")?;
        let root = target.split(['.', '[']).next().unwrap_or_default();
        if ![
            "composition",
            "output",
            "nodes",
            "cost",
            "tokens",
            "completed_step_ids",
            "failed_step",
        ]
        .contains(&root)
        {
            let msg = format!("unknown expectation target `{target}`");
            self.err_hint(
                t_node.span,
                msg,
                "targets start with composition., output, nodes.<id>., cost.total or tokens.total",
            );
        }
        let Some(m) = get("matcher") else {
            self.err_hint(
                v.span,
                "an expectation needs a `matcher`",
                "e.g. `matcher: {exact: ok}`",
            );
            return None;
        };
        let pairs = self.mapping(m, MATCHERS, "`matcher`")?;
        let [(kind, _, val)] = pairs.as_slice() else {
            self.err(m.span, "a `matcher` holds exactly one of: exact, lte, lt, gte, gt, contains, regex, length, type, exists, jq");
            return None;
        };
        let matcher = match &**kind {
            "exact" => Matcher::Exact(val.to_json()),
            "contains" => Matcher::Contains(val.to_json()),
            "lte" => Matcher::Lte(self.signed(val, "`lte`")?),
            "lt" => Matcher::Lt(self.signed(val, "`lt`")?),
            "gte" => Matcher::Gte(self.signed(val, "`gte`")?),
            "gt" => Matcher::Gt(self.signed(val, "`gt`")?),
            "length" => Matcher::Length(self.count(val, "`length`")?),
            "exists" => match val.kind {
                YKind::Bool(b) => Matcher::Exists(b),
                _ => {
                    self.err(val.span, "`exists` must be true or false");
                    return None;
                }
            },
            "type" => {
                let t = self.name(val, "`type`")?;
                const TYPES: [&str; 6] = ["null", "boolean", "number", "string", "array", "object"];
                if !TYPES.contains(&t.as_str()) {
                    let hint = suggest(&t, TYPES).map_or_else(
                        || format!("one of: {}", TYPES.join(", ")),
                        |s| format!("did you mean `{s}`?"),
                    );
                    self.err_hint(val.span, format!("unknown JSON type `{t}`"), hint);
                    return None;
                }
                Matcher::Type(t)
            }
            "regex" => {
                let text = self.string(val, "`regex`")?;
                match regex::Regex::new(&text) {
                    Ok(r) => Matcher::Regex(r),
                    Err(e) => {
                        let first = e.to_string();
                        let line = first.lines().last().unwrap_or("invalid regular expression");
                        self.err(
                            val.span,
                            format!("invalid regex: {}", line.trim_start_matches("error: ")),
                        );
                        return None;
                    }
                }
            }
            _ => {
                let text = self.string(val, "`jq`")?;
                Matcher::Jq(self.jq(val, &text, 0, "the `jq` matcher")?)
            }
        };
        Some(Expectation {
            target,
            matcher,
            span: v.span,
        })
    }

    pub(super) fn signed(&mut self, v: &YNode, what: &str) -> Option<f64> {
        match v.kind {
            YKind::Int(i) => Some(i as f64),
            YKind::Float(f) => Some(f),
            _ => {
                self.err(
                    v.span,
                    format!("{what} must be a number, found {}", describe(v)),
                );
                None
            }
        }
    }

    /// A case's `expect:` replaces the composition's (the reference calls
    /// them overrides): when every case has its own, the composition's
    /// assertions never run, which is worth a warning at its `expect`.
    fn expect_overridden(
        &mut self,
        name: &str,
        key: Option<&YNode>,
        expect: &[Expectation],
        cases: &[Case],
    ) {
        let Some(key) = key else { return };
        if expect.is_empty() || cases.is_empty() || cases.iter().any(|c| c.expect.is_none()) {
            return;
        }
        let message = format!(
            "the `expect` of composition `{name}` never runs: each of its {} case(s) has its own `expect:`, which replaces it",
            cases.len()
        );
        self.diags.push(Diagnostic::warning(key.span, message).with_hint(
            "copy the assertions every case needs into each case's `expect:`, or drop `expect:` from the cases that should use these",
        ));
    }

    pub(super) fn cases(&mut self, v: &YNode) -> Vec<Case> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("`cases` must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out: Vec<Case> = Vec::new();
        for item in items {
            let Some(pairs) = self.mapping(item, CASE_KEYS, "a case") else {
                continue;
            };
            let get = |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _, _)| key == k)
                    .map(|(_, _, v)| *v)
            };
            let Some(name) = get("name").and_then(|n| self.name(n, "case `name`")) else {
                self.err_hint(item.span, "a case needs a `name`", "add `name: my-case`");
                continue;
            };
            if out.iter().any(|c| c.name == name) {
                self.err(item.span, format!("duplicate case name `{name}`"));
                continue;
            }
            let vars = get("vars")
                .map(|x| self.vars(x, "case `vars`"))
                .unwrap_or_default();
            let golden = get("golden").map(YNode::to_json);
            let expect = get("expect").map(|e| self.expectations(e));
            out.push(Case {
                name,
                vars,
                golden,
                expect,
                span: item.span,
            });
        }
        out
    }
}
