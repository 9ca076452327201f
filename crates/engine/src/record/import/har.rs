//! A HAR 1.2 file of Streamable HTTP traffic (what a browser's or a
//! proxy's network log saves) read as sessions: each POST's JSON-RPC body
//! is what the client sent, its JSON or SSE answer what the server sent,
//! a GET stream's events what the server sent on its own, a DELETE the
//! end. One session per `Mcp-Session-Id`. Entries to other URLs (a login,
//! a page) are skipped.
//!
//! Credential headers (`Authorization`, `Proxy-Authorization`, `Cookie`,
//! `X-Api-Key`) are never kept: their values are masked in every message,
//! and the pipeline written from the file reads them from `${env.NAME}`.
//! Positions in errors are entry numbers (1-based, in the file's order).

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use crate::json::Json;
use crate::record::calls::{self, Recording, SessionError};
use crate::record::infer::rank;
use crate::record::session::{End, Header, Line, Server, Side, VERSION};
use crate::redact::Redactor;

/// The largest HAR file read, in bytes.
pub const MAX_HAR_BYTES: u64 = 256 << 20;

/// Headers whose values are credentials.
const CREDENTIALS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
];

/// Reads the HAR file at `path`: one recording per MCP session in it.
/// `name` names the server (else the URL's host does).
pub fn open(path: &Path, name: Option<&str>) -> Result<Vec<Recording>, SessionError> {
    let file = path.display().to_string();
    let err = |what: String| SessionError {
        file: file.clone(),
        line: 0,
        what,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot read it: {e}")))?
        .len();
    if size > MAX_HAR_BYTES {
        return Err(err(format!(
            "it is {size} bytes; a HAR file is read up to {MAX_HAR_BYTES}"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    read(&text, &file, name)
}

/// Reads a HAR file's text (`file` names it in errors).
pub fn read(text: &str, file: &str, name: Option<&str>) -> Result<Vec<Recording>, SessionError> {
    let err = |line: usize, what: String| SessionError {
        file: file.to_owned(),
        line,
        what,
    };
    let har: Value = serde_json::from_str(text).map_err(|e| err(0, format!("not JSON ({e})")))?;
    let Some(entries) = har.pointer("/log/entries").and_then(Value::as_array) else {
        return Err(err(0, "not a HAR file: it has no `log.entries`".to_owned()));
    };
    let creator = har
        .pointer("/log/creator/name")
        .and_then(Value::as_str)
        .unwrap_or("a HAR file");
    // The MCP endpoint: the first URL a JSON-RPC body was POSTed to.
    let Some(endpoint) = entries.iter().find_map(|e| {
        let req = e.get("request")?;
        (req.get("method")?.as_str()? == "POST"
            && body_messages(req.pointer("/postData/text")?.as_str()?).is_some())
        .then(|| req.get("url")?.as_str().map(strip_query))?
    }) else {
        return Err(err(
            0,
            "no entry POSTs a JSON-RPC message: this is not MCP traffic".to_owned(),
        ));
    };
    let server = name.map_or_else(|| server_name(&endpoint), str::to_owned);
    let redactor = Redactor::default();
    let mut headers: Vec<(String, String)> = Vec::new();
    // Sessions by id, in the order they appear, each with its lines.
    let mut sessions: IndexMap<String, Session> = IndexMap::new();
    let mut start: Option<i128> = None;
    for (n, e) in entries.iter().enumerate() {
        let at = n + 1;
        let Some(req) = e.get("request") else {
            return Err(err(at, "an entry with no `request`".to_owned()));
        };
        let url = req.get("url").and_then(Value::as_str).unwrap_or_default();
        if strip_query(url) != endpoint {
            continue;
        }
        let method = req
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let req_headers = header_list(req);
        let res = e.get("response").cloned().unwrap_or(Value::Null);
        let res_headers = header_list(&res);
        for (h, v) in &req_headers {
            if CREDENTIALS.contains(&h.to_ascii_lowercase().as_str()) {
                redactor.add(v.clone());
                if let Some(token) = v
                    .strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
                {
                    redactor.add(token);
                }
                if !headers.iter().any(|(x, _)| x.eq_ignore_ascii_case(h)) {
                    headers.push((h.clone(), env_for(&server, h, v)));
                }
            }
        }
        let when = e
            .get("startedDateTime")
            .and_then(Value::as_str)
            .and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            })
            .map(|t| t.unix_timestamp_nanos() / 1_000_000);
        let begun = *start.get_or_insert(when.unwrap_or(0));
        let at_ms = when.map_or(n as f64, |w| (w - begun) as f64);
        let took = e
            .get("time")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
            .max(0.0);
        let id = find(&req_headers, "mcp-session-id")
            .or_else(|| find(&res_headers, "mcp-session-id"))
            .unwrap_or_default();
        let s = sessions.entry(id.clone()).or_insert_with(|| Session {
            started: e
                .get("startedDateTime")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            lines: Vec::new(),
        });
        match method {
            "POST" => {
                let body = req
                    .pointer("/postData/text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let Some(sent) = body_messages(body) else {
                    return Err(err(
                        at,
                        "a POST whose body is not a JSON-RPC message".to_owned(),
                    ));
                };
                for m in sent {
                    s.lines
                        .push((message(&redactor, Side::Client, m, at_ms), at));
                }
                for m in answer(&res).map_err(|w| err(at, w))? {
                    s.lines
                        .push((message(&redactor, Side::Server, m, at_ms + took), at));
                }
            }
            "GET" => {
                for m in answer(&res).map_err(|w| err(at, w))? {
                    s.lines
                        .push((message(&redactor, Side::Server, m, at_ms + took), at));
                }
            }
            "DELETE" => s.lines.push((
                Line::End {
                    at_ms,
                    end: End {
                        reason: "DELETE".to_owned(),
                        exit_code: None,
                        signal: None,
                    },
                },
                at,
            )),
            _ => {}
        }
    }
    let url = redactor.text(&endpoint);
    let mut out = Vec::new();
    for (id, s) in sessions {
        let header = Header {
            version: VERSION,
            started: s.started,
            recorder: format!("{creator} (HAR)"),
            server: Server::Http {
                name: server.clone(),
                url: url.clone(),
            },
            session_id: (!id.is_empty()).then_some(id),
        };
        let mut lines = s.lines;
        lines.sort_by(|a, b| a.0.at_ms().total_cmp(&b.0.at_ms()).then(a.1.cmp(&b.1)));
        let mut rec = calls::pair(header, file, lines)?;
        rec.headers.insert(server.clone(), headers.clone());
        out.push(rec);
    }
    // A session the client only opened (no call) says nothing.
    if out.len() > 1 {
        out.retain(|r| !r.calls.is_empty());
    }
    Ok(out)
}

struct Session {
    started: String,
    lines: Vec<(Line, usize)>,
}

fn message(redactor: &Redactor, from: Side, m: Value, at_ms: f64) -> Line {
    Line::Message {
        at_ms,
        from,
        message: redactor.json(&Json::from_value(m)),
        http: None,
    }
}

/// The JSON-RPC messages of a POST body (one, or a batch).
fn body_messages(text: &str) -> Option<Vec<Value>> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(items) if items.iter().all(is_rpc) => Some(items),
        m if is_rpc(&m) => Some(vec![m]),
        _ => None,
    }
}

fn is_rpc(v: &Value) -> bool {
    v.get("jsonrpc").is_some() && (v.get("method").is_some() || v.get("id").is_some())
}

/// The messages of a response: its JSON, or each SSE event's data.
fn answer(res: &Value) -> Result<Vec<Value>, String> {
    let content = res.get("content").cloned().unwrap_or(Value::Null);
    let mut text = content
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    if content.get("encoding").and_then(Value::as_str) == Some("base64") {
        text = base64_decode(&text).ok_or("a response body that is not valid base64")?;
    }
    let mime = content
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if mime.contains("text/event-stream")
        || text.trim_start().starts_with("event:")
        || text.trim_start().starts_with("data:")
    {
        return Ok(sse(&text));
    }
    Ok(body_messages(&text).unwrap_or_default())
}

/// Each SSE event's data, read as JSON (events that are not are skipped).
fn sse(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut data = String::new();
    let mut flush = |data: &mut String| {
        if !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(data) {
                match v {
                    Value::Array(items) => out.extend(items),
                    v => out.push(v),
                }
            }
            data.clear();
        }
    };
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            flush(&mut data);
        } else if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    flush(&mut data);
    out
}

fn base64_decode(text: &str) -> Option<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for b in text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
    {
        let v = ALPHABET.iter().position(|a| *a == b)? as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    String::from_utf8(out).ok()
}

fn header_list(v: &Value) -> Vec<(String, String)> {
    v.get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| {
            Some((
                h.get("name")?.as_str()?.to_owned(),
                h.get("value")?.as_str()?.to_owned(),
            ))
        })
        .collect()
}

fn find(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(h, _)| h.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

fn strip_query(url: &str) -> String {
    url.split(['?', '#']).next().unwrap_or(url).to_owned()
}

/// A server's name from its URL: the host's first meaningful word.
fn server_name(url: &str) -> String {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    if host.parse::<std::net::IpAddr>().is_ok() || host == "localhost" || host.is_empty() {
        return "server".to_owned();
    }
    let word = host
        .split('.')
        .find(|w| !matches!(*w, "www" | "api" | "mcp"))
        .unwrap_or(host);
    crate::file::loader::id_from(&word.to_ascii_lowercase())
}

/// The value written for a credential header: `Bearer ${env.X_TOKEN}` for
/// a bearer token, else `${env.X_HEADER_NAME}`.
fn env_for(server: &str, header: &str, value: &str) -> String {
    let base = rank::var_name(server);
    if value.starts_with("Bearer ") || value.starts_with("bearer ") {
        format!("Bearer ${{env.{base}_TOKEN}}")
    } else {
        format!("${{env.{base}_{}}}", rank::var_name(header))
    }
}

#[cfg(test)]
mod tests;
