//! The file's settings sections: `servers:` (declared, from a client
//! config, or the demo server), `vars:` and `budget:`.

use super::*;
use crate::file::keys::*;
use crate::file::protocol::Protocol;

impl<'s> Loader<'s> {
    pub(super) fn servers(&mut self, v: &YNode) -> IndexMap<String, ServerDecl> {
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
                let auth = self.server_auth(&name, &source, decl);
                let protocol = self.server_protocol(&name, decl);
                out.insert(
                    name.clone(),
                    ServerDecl {
                        name,
                        source,
                        span: k.span,
                        auth,
                        protocol,
                    },
                );
            }
        }
        out
    }

    /// A server's `protocol:`, checked against the revisions pipewright
    /// can be told to speak.
    fn server_protocol(&mut self, name: &str, decl: &YNode) -> Option<Protocol> {
        let v = decl.as_map().and(decl.get("protocol"))?;
        let what = format!("`protocol` of server `{name}`");
        let text = self.string(v, &what)?;
        if let Some(protocol) = Protocol::parse(&text) {
            return Some(protocol);
        }
        let msg = format!("{what} is `{text}`, not an MCP revision pipewright speaks");
        let names = || Protocol::ALL.iter().map(|p| p.name());
        let one_of = names().collect::<Vec<_>>().join(", ");
        let hint = match suggest(&text, names()) {
            Some(s) => format!("did you mean `{s}`? (one of: {one_of})"),
            None => format!("use one of: {one_of}"),
        };
        self.err_hint(v.span, msg, hint);
        None
    }

    pub(super) fn server(&mut self, name: &str, v: &YNode) -> Option<ServerSource> {
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

    pub(super) fn vars(&mut self, v: &YNode, what: &str) -> IndexMap<String, Value> {
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

    pub(super) fn budget(&mut self, v: &YNode) -> Budget {
        let mut b = Budget::default();
        let Some(pairs) = self.mapping(v, BUDGET_KEYS, "`budget`") else {
            return b;
        };
        for (key, _, val) in pairs {
            match &*key {
                "max_cost_usd" => b.max_cost_usd = self.number(val, "`max_cost_usd`"),
                "max_tokens" => b.max_tokens = self.count(val, "`max_tokens`"),
                "max_duration" => b.max_duration = self.duration(val, "`max_duration`"),
                "max_iterations" => b.max_iterations = self.count(val, "`max_iterations`"),
                _ => {
                    let ms = self.count(val, "`max_duration_ms`");
                    b.max_duration = ms.and_then(|ms| {
                        let parsed = bounded_duration(Duration::from_millis(ms));
                        self.checked_duration(val, "`max_duration_ms`", parsed)
                    });
                }
            }
        }
        b
    }
}
