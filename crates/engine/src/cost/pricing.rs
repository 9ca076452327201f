//! The pricing table: what a call costs and how many tokens it uses, when
//! the server does not say so itself in the result's `_meta`.
//!
//! The bundled table is `pricing.yaml` at the repository root (compiled in);
//! `--pricing-table PATH` replaces it and a pipeline file's `pricing:` block
//! is laid over either. Its shape and the order in which figures are taken
//! (`_meta`, then this table, then zero) are documented in that file.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cost::reported;
use crate::cost::tokens;
use crate::json::Json;

/// The table compiled into the binary.
pub const BUNDLED: &str = include_str!("../../../../pricing.yaml");

/// The price of calling one tool (or every tool a pattern matches).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPrice {
    /// Flat price of one call, in US dollars.
    pub cost_usd: Option<f64>,
    /// A key of `models:` whose token prices apply to the call.
    pub model: Option<String>,
    /// Expected tokens of one call, to project a call before it runs.
    pub tokens: Option<u64>,
}

/// Token prices of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    #[serde(default)]
    pub input_per_mtok: f64,
    #[serde(default)]
    pub output_per_mtok: f64,
}

impl ModelPrice {
    /// What `input` and `output` tokens cost.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_mtok + output as f64 * self.output_per_mtok) / 1e6
    }
}

/// A whole pricing table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PricingTable {
    /// By tool name or `server/tool`, with `*` / `?` globs.
    #[serde(default)]
    pub tools: IndexMap<String, ToolPrice>,
    #[serde(default)]
    pub models: IndexMap<String, ModelPrice>,
}

/// Why a table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    #[error("cannot read pricing table {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("pricing table {path}: {message}")]
    Invalid { path: String, message: String },
}

/// Where a figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The server reported it in the result's `_meta`.
    Meta,
    /// The pricing table.
    Table,
    /// An earlier run of the same node (a saved trace).
    Recorded,
    /// The call is answered from a cassette: free.
    Cassette,
    /// Nothing says: zero.
    #[default]
    None,
}

/// Cost, tokens and model of one call (actual or projected).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    pub cost_usd: f64,
    pub tokens: u64,
    pub model: Option<String>,
    pub source: Source,
}

impl PricingTable {
    /// The bundled table.
    pub fn bundled() -> Self {
        // The bundled file is tested to parse; an empty table is the safe
        // fallback should it ever not.
        Self::parse(BUNDLED, "pricing.yaml").unwrap_or_default()
    }

    /// Parses a table from YAML (or JSON) text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Self, PricingError> {
        serde_saphyr::from_str::<PricingTable>(text)
            .map_err(|e| PricingError::Invalid {
                path: path.to_owned(),
                message: e.to_string(),
            })
            .and_then(|t| t.checked(path))
    }

    /// Reads a table file.
    pub fn load(path: &Path) -> Result<Self, PricingError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PricingError::Read {
            path: name.clone(),
            source,
        })?;
        Self::parse(&text, &name)
    }

    /// Reads an inline `pricing:` block of a pipeline file.
    pub fn from_value(v: &Value) -> Result<Self, PricingError> {
        serde_json::from_value::<PricingTable>(v.clone())
            .map_err(|e| PricingError::Invalid {
                path: "`pricing:`".to_owned(),
                message: e.to_string(),
            })
            .and_then(|t| t.checked("`pricing:`"))
    }

    fn checked(self, path: &str) -> Result<Self, PricingError> {
        let bad = |message: String| PricingError::Invalid {
            path: path.to_owned(),
            message,
        };
        for (pattern, price) in &self.tools {
            if price.cost_usd.is_some_and(|c| c.is_nan() || c < 0.0) {
                return Err(bad(format!("`{pattern}`: cost_usd must be 0 or more")));
            }
        }
        for (name, m) in &self.models {
            if [m.input_per_mtok, m.output_per_mtok]
                .iter()
                .any(|p| p.is_nan() || *p < 0.0)
            {
                return Err(bad(format!("model `{name}`: prices must be 0 or more")));
            }
        }
        Ok(self)
    }

    /// `self` with every entry of `over` added, replacing same-named ones.
    pub fn overlay(mut self, over: PricingTable) -> Self {
        self.tools.extend(over.tools);
        self.models.extend(over.models);
        self
    }

    /// The entry for `tool` on `server`: the most specific matching pattern
    /// (`server/tool` before `tool`, fewer wildcards first, later entries
    /// winning ties so overlays override).
    pub fn tool(&self, server: Option<&str>, tool: &str) -> Option<&ToolPrice> {
        let qualified = server.map(|s| format!("{s}/{tool}"));
        self.tools
            .iter()
            .enumerate()
            .filter_map(|(order, (pattern, price))| {
                let hit = if pattern.contains('/') {
                    qualified.as_deref().is_some_and(|q| glob(pattern, q))
                } else {
                    glob(pattern, tool)
                };
                let wild = pattern.chars().filter(|c| matches!(c, '*' | '?')).count();
                hit.then_some(((pattern.contains('/'), usize::MAX - wild, order), price))
            })
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, price)| price)
    }

    /// The actual figures of a finished call: its result's `_meta` first,
    /// then this table, then zero.
    pub fn actual(
        &self,
        server: Option<&str>,
        tool: &str,
        args: &Map<String, Value>,
        meta: Option<&Value>,
        output: &Json,
    ) -> Figures {
        let (meta_cost, meta_tokens, meta_model) = reported::from_meta(meta);
        let entry = self.tool(server, tool);
        let model = meta_model.or_else(|| entry.and_then(|e| e.model.clone()));
        let price = model.as_ref().and_then(|m| self.models.get(m));
        // Counted only when a model is attached: tokens of a plain tool
        // call are not LLM tokens.
        let counted = || {
            let input = tokens::count_value(&Value::Object(args.clone()));
            (input, tokens::count_json(output))
        };
        let split = reported::meta_token_split(meta);
        let tokens = match meta_tokens {
            Some(t) => t,
            None if model.is_some() => {
                let (i, o) = counted();
                i + o
            }
            None => 0,
        };
        let cost = match meta_cost {
            Some(c) => c,
            None => {
                let flat = entry.and_then(|e| e.cost_usd).unwrap_or(0.0);
                let by_tokens = price.map_or(0.0, |p| {
                    let (i, o) = split.unwrap_or_else(counted);
                    p.cost(i, o)
                });
                flat + by_tokens
            }
        };
        let source = if meta_cost.is_some() || meta_tokens.is_some() {
            Source::Meta
        } else if entry.is_some() || price.is_some() {
            Source::Table
        } else {
            Source::None
        };
        Figures {
            cost_usd: cost,
            tokens,
            model,
            source,
        }
    }

    /// The projected figures of one call that has not run; `args` is what
    /// is known of its arguments.
    pub fn project(&self, server: Option<&str>, tool: &str, args: &Value) -> Figures {
        let Some(entry) = self.tool(server, tool) else {
            return Figures::default();
        };
        let price = entry.model.as_ref().and_then(|m| self.models.get(m));
        let input = if entry.model.is_some() {
            tokens::count_value(args)
        } else {
            0
        };
        let tokens = entry.tokens.unwrap_or(input).max(input);
        let cost =
            entry.cost_usd.unwrap_or(0.0) + price.map_or(0.0, |p| p.cost(input, tokens - input));
        Figures {
            cost_usd: cost,
            tokens,
            model: entry.model.clone(),
            source: Source::Table,
        }
    }
}

/// Calls a run can answer without a server (a cassette being replayed):
/// they are free in budgets and estimates.
pub trait FreeCalls: Send + Sync + std::fmt::Debug {
    /// True when this exact call (server, tool, arguments) is answered
    /// without a server.
    fn answers(&self, server: Option<&str>, tool: &str, args: &Map<String, Value>) -> bool;
}

/// Everything a run prices calls with: the table, the name of the server
/// used when a node names none, figures recorded by an earlier run (by node
/// id, per call) and the calls a cassette answers for free.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    pub table: PricingTable,
    pub default_server: Option<String>,
    pub recorded: HashMap<String, Figures>,
    pub free: Option<Arc<dyn FreeCalls>>,
}

impl Pricing {
    /// Pricing from a table alone.
    pub fn new(table: PricingTable, default_server: Option<String>) -> Self {
        Self {
            table,
            default_server,
            ..Self::default()
        }
    }

    /// The server a call goes to: the node's, or the only one.
    pub fn server<'a>(&'a self, node_server: Option<&'a str>) -> Option<&'a str> {
        node_server.or(self.default_server.as_deref())
    }

    /// Figures of a finished call; see [`PricingTable::actual`].
    pub fn actual(
        &self,
        server: Option<&str>,
        tool: &str,
        args: &Map<String, Value>,
        meta: Option<&Value>,
        output: &Json,
    ) -> Figures {
        self.table
            .actual(self.server(server), tool, args, meta, output)
    }

    /// The projected figures of one call of node `id`: free when a cassette
    /// answers it (`args` fully resolved), else what an earlier run
    /// recorded, else the table.
    pub fn project(
        &self,
        id: &str,
        server: Option<&str>,
        tool: &str,
        args: &Value,
        resolved: bool,
    ) -> Figures {
        let server = self.server(server);
        if resolved
            && let (Some(free), Value::Object(map)) = (&self.free, args)
            && free.answers(server, tool, map)
        {
            return Figures {
                source: Source::Cassette,
                ..Figures::default()
            };
        }
        if let Some(f) = self.recorded.get(id) {
            return f.clone();
        }
        self.table.project(server, tool, args)
    }
}

/// Glob match with `*` (any run of characters) and `?` (one character).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bundled_table_parses() {
        let t = PricingTable::parse(BUNDLED, "pricing.yaml").unwrap_or_else(|e| panic!("{e}"));
        assert!(t.models.contains_key("gpt-4o"));
        assert!(t.tool(Some("demo"), "summarize").is_some());
        assert!(t.tool(Some("other"), "summarize").is_none());
    }

    #[test]
    fn globs_match() {
        assert!(glob("billing/*", "billing/charge"));
        assert!(glob("*", ""));
        assert!(glob("a?c*", "abcdef"));
        assert!(!glob("a?c", "ac"));
        assert!(!glob("billing/*", "billingx/charge"));
    }

    #[test]
    fn most_specific_pattern_wins() {
        let t = PricingTable::parse(
            "tools:\n  \"*\": {cost_usd: 0.5}\n  send_*: {cost_usd: 0.2}\n  send_email: {cost_usd: 0.1}\n  \"mail/*\": {cost_usd: 0.3}\n",
            "t",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let cost = |s: Option<&str>, tool: &str| t.tool(s, tool).and_then(|p| p.cost_usd);
        assert_eq!(cost(None, "send_email"), Some(0.1));
        assert_eq!(cost(None, "send_sms"), Some(0.2));
        assert_eq!(cost(Some("mail"), "send_email"), Some(0.3));
        assert_eq!(cost(None, "other"), Some(0.5));
    }

    #[test]
    fn meta_wins_over_table_then_zero() {
        let t = PricingTable::parse(
            "tools:\n  summarize: {cost_usd: 0.5}\n  llm: {model: m}\nmodels:\n  m: {input_per_mtok: 1000000, output_per_mtok: 2000000}\n",
            "t",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let args = Map::new();
        let meta = json!({"pipewright/cost_usd": 0.002, "pipewright/tokens": 9});
        let f = t.actual(None, "summarize", &args, Some(&meta), &Json::null());
        assert_eq!((f.cost_usd, f.tokens, f.source), (0.002, 9, Source::Meta));
        let f = t.actual(None, "summarize", &args, None, &Json::null());
        assert_eq!((f.cost_usd, f.tokens, f.source), (0.5, 0, Source::Table));
        let f = t.actual(None, "nothing", &args, None, &Json::null());
        assert_eq!((f.cost_usd, f.tokens, f.source), (0.0, 0, Source::None));
        // A model-priced tool: `{}` is 1 input token, "hello world" 2 output.
        let hello = Json::from_value(json!("hello world"));
        let f = t.actual(None, "llm", &args, None, &hello);
        assert_eq!((f.cost_usd, f.tokens), (1.0 + 4.0, 3));
        assert_eq!(f.model.as_deref(), Some("m"));
    }

    #[test]
    fn bad_tables_are_reported() {
        let e = PricingTable::parse("tools:\n  x: {cost: 1}\n", "p.yaml");
        assert!(e.is_err_and(|e| e.to_string().contains("cost")));
        let e = PricingTable::parse("tools:\n  x: {cost_usd: -1}\n", "p.yaml");
        assert!(e.is_err_and(|e| e.to_string().contains("0 or more")));
    }
}
