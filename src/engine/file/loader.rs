//! Reads a pipeline file into the model, reporting every problem at once,
//! each with its line and column.
//!
//! The loader works in two passes: [`Loader`] turns the spanned YAML tree into
//! nodes (checking each field on its own), then [`crate::engine::file::graph`] checks what
//! only the whole composition shows (needs, references, cycles, output).

use std::collections::HashSet;
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::engine::diag::{Diagnostic, Pos, Span, suggest};
use crate::engine::file::graph;
use crate::engine::file::model::{
    Budget, Case, Compensate, Composition, DEFAULT_BACKOFF, Expectation, ForEach, Kind, Matcher,
    Mock, Need, Node, OnError, OutputSpec, Pipeline, RefSite, ServerDecl, ServerSource, When,
};
use crate::engine::file::yaml::{self, YKind, YNode};
use crate::engine::lang::jq::JqProgram;
use crate::engine::lang::reference::{self, Part, Root};

/// The result of loading: the model when it could be built, and every
/// diagnostic (errors and warnings) in file order.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub pipeline: Option<Pipeline>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// The pipeline if the file has no errors.
    pub fn valid(&self) -> Option<&Pipeline> {
        if self.has_errors() {
            None
        } else {
            self.pipeline.as_ref()
        }
    }
}

/// Loads native pipeline YAML or JSON text (no import detection).
pub fn load_native_str(source: &str) -> Loaded {
    match yaml::parse(source) {
        Ok(root) => load_tree(source, &root),
        Err(d) => Loaded {
            pipeline: None,
            diagnostics: vec![d],
        },
    }
}

/// Loads an already parsed native document.
pub fn load_tree(source: &str, root: &YNode) -> Loaded {
    let mut loader = Loader {
        src: source,
        diags: Vec::new(),
    };
    let pipeline = loader.pipeline(root);
    let mut diagnostics = loader.diags;
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    Loaded {
        pipeline,
        diagnostics,
    }
}

const TOP_KEYS: &[&str] = &[
    "version",
    "name",
    "description",
    "servers",
    "vars",
    "budget",
    "pricing",
    "pipe",
    "compositions",
    "output",
    "expect",
    "cases",
];
/// Sections of an mcptest suite that pipewright does not run; loading such a
/// suite warns instead of failing.
const MCPTEST_SECTIONS: &[&str] = &["agents", "tools", "evals", "eval", "resources", "prompts"];
const COMPOSITION_KEYS: &[&str] = &[
    "name",
    "description",
    "nodes",
    "output",
    "expect",
    "cases",
    "budget",
    "eval",
];
const NODE_KEYS: &[&str] = &[
    "id",
    "needs",
    "server",
    "tool",
    "args",
    "transform",
    "when",
    "on_error",
    "for_each",
    "max_concurrency",
    "mock",
    "timeout",
    "max_cost_per_call_usd",
    "max_tokens_per_call",
    "compensate",
    "meta",
    "description",
];
const SERVER_KEYS: &[&str] = &[
    "url",
    "headers",
    "command",
    "args",
    "env",
    "cwd",
    "from",
    "name",
    "transport",
];
const BUDGET_KEYS: &[&str] = &[
    "max_cost_usd",
    "max_tokens",
    "max_duration",
    "max_duration_ms",
];
const MATCHERS: &[&str] = &[
    "exact", "lte", "lt", "gte", "gt", "contains", "regex", "length", "type", "exists", "jq",
];

struct Loader<'s> {
    src: &'s str,
    diags: Vec<Diagnostic>,
}

/// What the loader knows of the file while it reads one composition.
struct FileScope<'a> {
    servers: &'a IndexMap<String, ServerDecl>,
}

impl<'s> Loader<'s> {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    fn err_hint(&mut self, span: Span, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(span, msg).with_hint(hint));
    }

    fn warn(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(span, msg));
    }

    /// The pairs of a mapping, after reporting unknown and duplicate keys.
    /// Unknown keys are dropped from the result.
    fn mapping<'n>(
        &mut self,
        node: &'n YNode,
        allowed: &[&str],
        what: &str,
    ) -> Option<Vec<(String, &'n YNode, &'n YNode)>> {
        let Some(pairs) = node.as_map() else {
            self.err(
                node.span,
                format!("{what} must be a mapping, found {}", node.type_name()),
            );
            return None;
        };
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let Some(key) = k.key_text() else {
                self.err(k.span, format!("keys of {what} must be plain names"));
                continue;
            };
            if !seen.insert(key.clone()) {
                self.err(k.span, format!("duplicate key `{key}` in {what}"));
                continue;
            }
            if !allowed.contains(&key.as_str()) {
                let msg = format!("unknown key `{key}` in {what}");
                match suggest(&key, allowed.iter().copied()) {
                    Some(s) => self.err_hint(k.span, msg, format!("did you mean `{s}`?")),
                    None => self.err_hint(
                        k.span,
                        msg,
                        format!("expected one of: {}", allowed.join(", ")),
                    ),
                }
                continue;
            }
            out.push((key, k, v));
        }
        Some(out)
    }

    fn string(&mut self, v: &YNode, what: &str) -> Option<String> {
        match &v.kind {
            YKind::Str(s, _) => Some(s.clone()),
            YKind::Int(i) => Some(i.to_string()),
            YKind::Float(f) => Some(f.to_string()),
            YKind::Bool(b) => Some(b.to_string()),
            _ => {
                self.err(
                    v.span,
                    format!("{what} must be a string, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A non-empty name such as an id or a tool.
    fn name(&mut self, v: &YNode, what: &str) -> Option<String> {
        let s = self.string(v, what)?;
        if s.trim().is_empty() {
            self.err(v.span, format!("{what} must not be empty"));
            return None;
        }
        Some(s)
    }

    fn number(&mut self, v: &YNode, what: &str) -> Option<f64> {
        match v.kind {
            YKind::Int(i) if i >= 0 => Some(i as f64),
            YKind::Float(f) if f >= 0.0 && f.is_finite() => Some(f),
            _ => {
                self.err(
                    v.span,
                    format!(
                        "{what} must be a non-negative number, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    fn count(&mut self, v: &YNode, what: &str) -> Option<u64> {
        match v.kind {
            YKind::Int(i) if i >= 0 => Some(i as u64),
            _ => {
                self.err(
                    v.span,
                    format!(
                        "{what} must be a non-negative integer, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    fn duration(&mut self, v: &YNode, what: &str) -> Option<Duration> {
        let parsed = match &v.kind {
            YKind::Int(i) if *i >= 0 => Some(Duration::from_secs(*i as u64)),
            YKind::Str(s, _) => parse_duration(s),
            _ => None,
        };
        if parsed.is_none() {
            self.err_hint(
                v.span,
                format!("invalid duration {} for {what}", describe(v)),
                "write a number with a unit: 500ms, 30s, 2m, 1h (a bare number means seconds)",
            );
        }
        parsed
    }

    fn string_map(&mut self, v: &YNode, what: &str) -> IndexMap<String, String> {
        let mut out = IndexMap::new();
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!("{what} must be a mapping, found {}", v.type_name()),
            );
            return out;
        };
        for (k, val) in pairs {
            if let (Some(key), Some(s)) = (k.key_text(), self.string(val, what)) {
                out.insert(key, s);
            }
        }
        out
    }

    fn string_list(&mut self, v: &YNode, what: &str) -> Vec<String> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("{what} must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        items.iter().filter_map(|i| self.string(i, what)).collect()
    }

    fn pipeline(&mut self, root: &YNode) -> Option<Pipeline> {
        if matches!(root.kind, YKind::Null) {
            self.err_hint(
                Span::at(Pos::new(1, 1)),
                "the file is empty",
                "a pipeline file needs a `pipe:` list or a `compositions:` list",
            );
            return None;
        }
        let Some(pairs) = root.as_map() else {
            self.err(
                root.span,
                format!(
                    "a pipeline file must be a mapping with `pipe:` or `compositions:`, found {}",
                    root.type_name()
                ),
            );
            return None;
        };
        // mcptest suite sections are tolerated with a warning.
        let mut allowed: Vec<&str> = TOP_KEYS.to_vec();
        for (k, _) in pairs {
            if let Some(key) = k.key_text()
                && MCPTEST_SECTIONS.contains(&key.as_str())
            {
                self.warn(
                    k.span,
                    format!(
                        "`{key}:` is an mcptest section that pipewright does not run; it is ignored"
                    ),
                );
                allowed.push(MCPTEST_SECTIONS[MCPTEST_SECTIONS.iter().position(|s| *s == key)?]);
            }
        }
        let pairs = self.mapping(root, &allowed, "the pipeline file")?;
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _, _)| k == name)
                .map(|(_, k, v)| (*k, *v))
        };

        let version = get("version").and_then(|(_, v)| {
            let n = self.count(v, "`version`")?;
            if n != 1 {
                self.err(
                    v.span,
                    format!("unsupported version {n}; this pipewright reads version 1"),
                );
            }
            Some(n)
        });
        let servers = get("servers").map_or_else(IndexMap::new, |(_, v)| self.servers(v));
        let vars = get("vars").map_or_else(IndexMap::new, |(_, v)| self.vars(v, "`vars`"));
        let budget = get("budget").map_or_else(Budget::default, |(_, v)| self.budget(v));
        let pricing = get("pricing").map(|(_, v)| {
            if v.as_map().is_none() {
                self.err(
                    v.span,
                    "`pricing` must be a mapping with `tools:` and/or `models:`",
                );
            }
            v.to_json()
        });
        let scope = FileScope { servers: &servers };

        let mut compositions = Vec::new();
        if let Some((key, pipe)) = get("pipe") {
            let name = get("name")
                .and_then(|(_, v)| self.name(v, "`name`"))
                .unwrap_or_else(|| "pipe".to_owned());
            let description = get("description").and_then(|(_, v)| self.string(v, "`description`"));
            let comp = self.pipe(key, pipe, name, description, &get, &scope);
            compositions.extend(comp);
        } else {
            for key in ["output", "expect", "cases", "name", "description"] {
                if let Some((k, _)) = get(key) {
                    self.err_hint(
                        k.span,
                        format!("top-level `{key}:` belongs to a `pipe:`, and this file has none"),
                        "move it into the composition it describes",
                    );
                }
            }
        }
        if let Some((_, comps)) = get("compositions") {
            match comps.as_seq() {
                Some([]) => self.err(
                    comps.span,
                    "`compositions` is empty; add at least one composition",
                ),
                Some(items) => {
                    for item in items {
                        compositions.extend(self.composition(item, &scope));
                    }
                }
                None => self.err(
                    comps.span,
                    format!("`compositions` must be a list, found {}", comps.type_name()),
                ),
            }
        }
        if get("pipe").is_none() && get("compositions").is_none() {
            self.err_hint(
                root.span,
                "the file declares neither `pipe:` nor `compositions:`",
                "add a `pipe:` list of steps or a `compositions:` list",
            );
        }
        let mut names: IndexMap<&str, Span> = IndexMap::new();
        let mut dupes = Vec::new();
        for c in &compositions {
            if let Some(first) = names.insert(&c.name, c.span) {
                dupes.push((c.span, c.name.clone(), first));
            }
        }
        for (span, name, first) in dupes {
            self.err(
                span,
                format!(
                    "duplicate composition name `{name}` (first used at line {})",
                    first.start.line
                ),
            );
        }
        Some(Pipeline {
            version,
            servers,
            vars,
            budget,
            pricing,
            compositions,
        })
    }

    fn servers(&mut self, v: &YNode) -> IndexMap<String, ServerDecl> {
        let mut out = IndexMap::new();
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!(
                    "`servers` must be a mapping of names to servers, found {}",
                    v.type_name()
                ),
            );
            return out;
        };
        for (k, decl) in pairs {
            let Some(name) = k.key_text() else { continue };
            if out.contains_key(&name) {
                self.err(k.span, format!("duplicate server name `{name}`"));
                continue;
            }
            if let Some(source) = self.server(&name, decl) {
                out.insert(
                    name.clone(),
                    ServerDecl {
                        name,
                        source,
                        span: k.span,
                    },
                );
            }
        }
        out
    }

    fn server(&mut self, name: &str, v: &YNode) -> Option<ServerSource> {
        // A bare string is a URL or a command line.
        if let Some(s) = v.as_str() {
            return Some(if s.starts_with("http://") || s.starts_with("https://") {
                ServerSource::Http {
                    url: s.to_owned(),
                    headers: IndexMap::new(),
                }
            } else {
                let mut words = s.split_whitespace().map(str::to_owned);
                ServerSource::Stdio {
                    command: words.next().unwrap_or_default(),
                    args: words.collect(),
                    env: IndexMap::new(),
                    cwd: None,
                }
            });
        }
        let what = format!("server `{name}`");
        let pairs = self.mapping(v, SERVER_KEYS, &what)?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let kinds: Vec<&str> = ["url", "command", "from"]
            .into_iter()
            .filter(|k| get(k).is_some())
            .collect();
        if kinds.len() != 1 {
            self.err_hint(
                v.span,
                if kinds.is_empty() {
                    format!("{what} needs one of `url`, `command` or `from`")
                } else {
                    format!("{what} has both `{}` and `{}`", kinds[0], kinds[1])
                },
                "use `url:` for Streamable HTTP, `command:` (+ `args:`) for stdio, `from:` to import a client config entry",
            );
            return None;
        }
        if let Some(t) = get("transport") {
            let t_str = self.string(t, "`transport`").unwrap_or_default();
            let ok = match kinds[0] {
                "url" => matches!(
                    t_str.as_str(),
                    "http" | "streamable-http" | "streamable_http" | "sse"
                ),
                "command" => t_str == "stdio",
                _ => true,
            };
            if !ok {
                self.err(
                    t.span,
                    format!(
                        "transport `{t_str}` does not fit a server with `{}`",
                        kinds[0]
                    ),
                );
            }
        }
        Some(match kinds[0] {
            "url" => ServerSource::Http {
                url: get("url")
                    .and_then(|u| self.name(u, "`url`"))
                    .unwrap_or_default(),
                headers: get("headers")
                    .map(|h| self.string_map(h, "`headers`"))
                    .unwrap_or_default(),
            },
            "command" => ServerSource::Stdio {
                command: get("command")
                    .and_then(|c| self.name(c, "`command`"))
                    .unwrap_or_default(),
                args: get("args")
                    .map(|a| self.string_list(a, "`args`"))
                    .unwrap_or_default(),
                env: get("env")
                    .map(|e| self.string_map(e, "`env`"))
                    .unwrap_or_default(),
                cwd: get("cwd").and_then(|c| self.string(c, "`cwd`")),
            },
            _ => ServerSource::Import {
                from: get("from")
                    .and_then(|f| self.name(f, "`from`"))
                    .unwrap_or_default(),
                name: get("name").and_then(|n| self.name(n, "`name`")),
            },
        })
    }

    fn vars(&mut self, v: &YNode, what: &str) -> IndexMap<String, Value> {
        let mut out = IndexMap::new();
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!(
                    "{what} must be a mapping of names to values, found {}",
                    v.type_name()
                ),
            );
            return out;
        };
        for (k, val) in pairs {
            match k.key_text() {
                Some(key) if out.contains_key(&key) => {
                    self.err(k.span, format!("duplicate variable `{key}`"));
                }
                Some(key) => {
                    out.insert(key, val.to_json());
                }
                None => self.err(k.span, "variable names must be plain names"),
            }
        }
        out
    }

    fn budget(&mut self, v: &YNode) -> Budget {
        let mut b = Budget::default();
        let Some(pairs) = self.mapping(v, BUDGET_KEYS, "`budget`") else {
            return b;
        };
        for (key, _, val) in pairs {
            match key.as_str() {
                "max_cost_usd" => b.max_cost_usd = self.number(val, "`max_cost_usd`"),
                "max_tokens" => b.max_tokens = self.count(val, "`max_tokens`"),
                "max_duration" => b.max_duration = self.duration(val, "`max_duration`"),
                _ => {
                    b.max_duration = self
                        .count(val, "`max_duration_ms`")
                        .map(Duration::from_millis)
                }
            }
        }
        b
    }

    #[allow(clippy::too_many_arguments)]
    fn pipe<'n>(
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
        Some(self.finish(Composition {
            name,
            description,
            kind: Kind::Pipe,
            nodes,
            output,
            expect,
            cases,
            budget: Budget::default(),
            span: key.span,
            parents: Vec::new(),
            children: Vec::new(),
            order: Vec::new(),
            waves: Vec::new(),
        }))
    }

    fn composition(&mut self, v: &YNode, scope: &FileScope<'_>) -> Option<Composition> {
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
        if let Some((k, _)) = get("eval") {
            self.warn(
                k.span,
                "`eval:` (judged metrics) needs a model provider, which pipewright does not use; it is ignored",
            );
        }
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
        let budget = get("budget").map_or_else(Budget::default, |(_, b)| self.budget(b));
        Some(self.finish(Composition {
            name,
            description,
            kind: Kind::Dag,
            nodes,
            output,
            expect,
            cases,
            budget,
            span: v.span,
            parents: Vec::new(),
            children: Vec::new(),
            order: Vec::new(),
            waves: Vec::new(),
        }))
    }

    fn finish(&mut self, mut comp: Composition) -> Composition {
        graph::build(&mut comp, &mut self.diags);
        comp
    }

    fn node(&mut self, v: &YNode, kind: Kind, scope: &FileScope<'_>) -> Option<Node> {
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
                    && !scope.servers.contains_key(n)
                {
                    let msg = format!("node `{id}` names unknown server `{n}`");
                    match suggest(n, scope.servers.keys().map(String::as_str)) {
                        Some(s2) => self.err_hint(s.span, msg, format!("did you mean `{s2}`?")),
                        None if scope.servers.is_empty() => self.err_hint(
                            s.span,
                            msg,
                            "declare it under `servers:` (or pass --server NAME=URL)",
                        ),
                        None => self.err_hint(
                            s.span,
                            msg,
                            format!(
                                "declared servers: {}",
                                scope.servers.keys().cloned().collect::<Vec<_>>().join(", ")
                            ),
                        ),
                    }
                }
                (name, s.span)
            }
            None => {
                if scope.servers.len() > 1 && get("mock").is_none() {
                    self.err_hint(
                        id_span,
                        format!("node `{id}` does not say which server to call, and the file declares {}", scope.servers.len()),
                        format!("add `server:` with one of: {}", scope.servers.keys().cloned().collect::<Vec<_>>().join(", ")),
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
            transform,
            when,
            on_error,
            for_each,
            max_concurrency,
            mock,
            timeout,
            max_cost_per_call_usd,
            max_tokens_per_call,
            compensate,
            meta,
            hash: String::new(),
        };
        node.hash = node_hash(&node);
        Some(node)
    }

    /// Parses every string under `v` as a template, collecting references
    /// and reporting syntax errors at their place.
    fn refs_in(&mut self, v: &YNode, at: &str, out: &mut Vec<RefSite>) {
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
                                    at: at.to_owned(),
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
                for (i, item) in items.iter().enumerate() {
                    self.refs_in(item, &format!("{at}[{i}]"), out);
                }
            }
            YKind::Map(pairs) => {
                for (k, item) in pairs {
                    let key = k.key_text().unwrap_or_default();
                    self.refs_in(item, &format!("{at}.{key}"), out);
                }
            }
            _ => {}
        }
    }

    /// Compiles a jq program written in scalar `v`, starting at byte `from`
    /// of its text; errors point into the file.
    fn jq(&mut self, v: &YNode, text: &str, from: usize, what: &str) -> Option<JqProgram> {
        match JqProgram::compile(text) {
            Ok(p) => Some(p),
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

    fn transform(&mut self, v: &YNode) -> Option<JqProgram> {
        let target = match &v.kind {
            YKind::Str(..) => v,
            YKind::Map(_) => {
                let pairs = self.mapping(v, &["jq"], "`transform`")?;
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

    fn when(&mut self, v: &YNode) -> Option<When> {
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

    fn on_error(&mut self, v: &YNode) -> OnError {
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
                let Some(pairs) = self.mapping(v, &["retry"], "`on_error`") else {
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
                let Some(pairs) = self.mapping(r, &["max", "backoff"], "`on_error.retry`") else {
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

    fn for_each(&mut self, v: &YNode) -> Option<ForEach> {
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

    fn mock(&mut self, v: &YNode) -> Option<Mock> {
        let pairs = self.mapping(v, &["result", "error"], "`mock`")?;
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

    fn compensate(&mut self, v: &YNode, scope: &FileScope<'_>) -> Option<Compensate> {
        let pairs = self.mapping(v, &["server", "tool", "args"], "`compensate`")?;
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _, _)| key == k)
                .map(|(_, _, v)| *v)
        };
        let server = get("server").and_then(|s| {
            let n = self.name(s, "`compensate.server`")?;
            if !scope.servers.contains_key(&n) {
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

    fn output(&mut self, v: &YNode) -> Option<OutputSpec> {
        match &v.kind {
            YKind::Str(s, _) => Some(OutputSpec::Node {
                id: s.clone(),
                span: v.span,
            }),
            YKind::Map(_) => {
                let pairs = self.mapping(v, &["assemble"], "`output`")?;
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

    fn expectations(&mut self, v: &YNode) -> Vec<Expectation> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("`expect` must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        items.iter().filter_map(|i| self.expectation(i)).collect()
    }

    fn expectation(&mut self, v: &YNode) -> Option<Expectation> {
        let pairs = self.mapping(v, &["target", "matcher"], "an expectation")?;
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
        let matcher = match kind.as_str() {
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

    fn signed(&mut self, v: &YNode, what: &str) -> Option<f64> {
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

    fn cases(&mut self, v: &YNode) -> Vec<Case> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("`cases` must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out: Vec<Case> = Vec::new();
        for item in items {
            let Some(pairs) = self.mapping(item, &["name", "vars", "golden", "expect"], "a case")
            else {
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

fn describe(v: &YNode) -> String {
    match &v.kind {
        YKind::Str(s, _) => format!("`{s}`"),
        YKind::Int(i) => format!("`{i}`"),
        YKind::Float(f) => format!("`{f}`"),
        YKind::Bool(b) => format!("`{b}`"),
        _ => v.type_name().to_owned(),
    }
}

/// Whether `id` can be a node id that references can name.
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Byte length of the `${…}` reference at the start of `s`, quotes inside
/// brackets respected.
fn reference_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(2) {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '}' => return Some(i + 1),
                _ => {}
            },
        }
    }
    None
}

/// Parses `500ms`, `30s`, `2m`, `1h`, `1m30s`, `1.5s` or bare seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(secs) = s.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs));
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match rest[..unit_len].trim() {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * factor;
        rest = &rest[unit_len..];
    }
    total.is_finite().then(|| Duration::from_secs_f64(total))
}

/// The content hash of a node's definition: its fields as canonical JSON
/// (object keys sorted), so reformatting the file changes nothing.
fn node_hash(n: &Node) -> String {
    let def = serde_json::json!({
        "needs": n.needs.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
        "server": n.server,
        "tool": n.tool,
        "args": n.args,
        "transform": n.transform.as_ref().map(JqProgram::source),
        "when": n.when.as_ref().map(|w| w.source.as_str()),
        "on_error": n.on_error,
        "for_each": n.for_each.as_ref().map(|f| f.source.as_str()),
        "max_concurrency": n.max_concurrency,
        "mock": n.mock.as_ref().map(|m| match m {
            Mock::Result(v) => serde_json::json!({"result": v}),
            Mock::Error(v) => serde_json::json!({"error": v}),
        }),
        "timeout_ms": n.timeout.map(|t| t.as_millis() as u64),
        "max_cost_per_call_usd": n.max_cost_per_call_usd,
        "max_tokens_per_call": n.max_tokens_per_call,
        "compensate": n.compensate.as_ref().map(|c| serde_json::json!({"server": c.server, "tool": c.tool, "args": c.args})),
        "meta": n.meta,
    });
    let mut text = String::new();
    canonical(&def, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Writes `v` as JSON with object keys sorted.
pub fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("12"), Some(Duration::from_secs(12)));
        assert_eq!(parse_duration("3x"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration(""), None);
        assert_eq!(parse_duration("-1s"), None);
    }

    #[test]
    fn reference_end_respects_quotes() {
        assert_eq!(reference_end("${a.b} | x"), Some(6));
        assert_eq!(reference_end(r#"${a["}"]} | x"#), Some(9));
        assert_eq!(reference_end("${a"), None);
    }

    #[test]
    fn ids() {
        assert!(valid_id("find_user-2"));
        assert!(!valid_id("2find"));
        assert!(!valid_id("a.b"));
        assert!(!valid_id(""));
    }
}
