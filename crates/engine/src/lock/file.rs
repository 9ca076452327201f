//! The lock file itself, `pipewright.lock`: what it holds (per server its
//! `serverInfo`, the MCP revision spoken and each used tool's digest and
//! definition), written as pretty JSON with sorted keys and a trailing new
//! line so two runs give the same bytes, and read back with errors that
//! say where.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::definition::{definition, digest, digest_bytes, sorted};
use crate::mcp::ToolInfo;

/// The lock's file name, beside the pipeline file(s) it pins.
pub const FILE_NAME: &str = "pipewright.lock";

/// The lock format this pipewright writes and reads (`lockVersion`).
pub const FORMAT: u64 = 1;

/// A lock: every pinned server by name. Keys are kept sorted (the maps are
/// `BTreeMap`s) and nothing in it depends on the machine or the time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Lock {
    /// The format version, [`FORMAT`].
    pub lock_version: u64,
    /// The pinned servers, by the name the file gives them.
    pub servers: BTreeMap<String, LockedServer>,
    /// The digest of the bytes this lock was read from (or would be
    /// written as); not part of the file.
    #[serde(skip)]
    bytes_digest: Option<String>,
}

/// One server as pinned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LockedServer {
    /// The MCP revision spoken with it, e.g. `2025-11-25`.
    pub protocol_version: String,
    /// Its `serverInfo`: name and version as it announced them.
    pub server_info: ServerInfo,
    /// Each tool the file(s) use, by name.
    pub tools: BTreeMap<String, LockedTool>,
}

/// A server's `serverInfo`, as far as the lock keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// One tool as pinned: its normalised definition and that definition's
/// digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// The normalised definition ([`definition`]).
    pub definition: Value,
    /// `sha256:` and the hex digest of the definition's canonical text.
    pub digest: String,
}

/// Why a lock could not be read or written, as a sentence with the place.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl ServerInfo {
    /// The `serverInfo` of a connection's handshake result
    /// (`{"protocolVersion", "serverInfo": {"name", "version"}, …}`).
    pub fn of(handshake: &Value) -> Self {
        let text = |key: &str| {
            handshake
                .pointer(&format!("/serverInfo/{key}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Self {
            name: text("name"),
            version: text("version"),
        }
    }
}

impl LockedTool {
    /// A tool as the server lists it now, pinned.
    pub fn of(tool: &ToolInfo) -> Self {
        let definition = definition(tool);
        Self {
            digest: digest(&definition),
            definition,
        }
    }
}

impl LockedServer {
    /// A server as met now: its handshake result (see
    /// `Connection::server_info`), and of its tools those named in `used`
    /// (a used tool the server does not list is left out).
    pub fn of(handshake: &Value, tools: &[ToolInfo], used: &[&str]) -> Self {
        Self {
            protocol_version: handshake
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
            server_info: ServerInfo::of(handshake),
            tools: tools
                .iter()
                .filter(|t| used.contains(&t.name.as_str()))
                .map(|t| (t.name.clone(), LockedTool::of(t)))
                .collect(),
        }
    }
}

impl Default for Lock {
    fn default() -> Self {
        Self {
            lock_version: FORMAT,
            servers: BTreeMap::new(),
            bytes_digest: None,
        }
    }
}

impl Lock {
    /// Where the lock of a pipeline file lives: `pipewright.lock` in the
    /// file's folder.
    pub fn path_for(file: &Path) -> PathBuf {
        match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(FILE_NAME),
            _ => PathBuf::from(FILE_NAME),
        }
    }

    /// The lock in `dir`, or `None` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Self>, LockError> {
        let path = dir.join(FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => Self::parse(&bytes, &path.display().to_string()).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(LockError::Read {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// The lock of the pipeline file `file` (see [`Lock::path_for`]), or
    /// `None` when there is none.
    pub fn read_for(file: &Path) -> Result<Option<Self>, LockError> {
        let path = Self::path_for(file);
        Self::read(path.parent().unwrap_or(Path::new(".")))
    }

    /// A lock from its bytes; `path` names it in errors. Every tool's
    /// digest is checked against its definition, so a hand-edited
    /// definition is not trusted silently.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Self, LockError> {
        let mut lock: Lock = serde_json::from_slice(bytes).map_err(|e| LockError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or_default()
                .to_owned(),
        })?;
        let invalid = |message: String| LockError::Invalid {
            path: path.to_owned(),
            message,
        };
        if lock.lock_version != FORMAT {
            return Err(invalid(format!(
                "`lockVersion` is {}; this pipewright reads version {FORMAT} (run `pipewright lock` again)",
                lock.lock_version
            )));
        }
        for (server, s) in &lock.servers {
            for (name, tool) in &s.tools {
                if digest(&tool.definition) != tool.digest {
                    return Err(invalid(format!(
                        "server `{server}`, tool `{name}`: the digest does not match the definition (was it edited by hand? run `pipewright lock --update`)"
                    )));
                }
            }
        }
        lock.bytes_digest = Some(digest_bytes(bytes));
        Ok(lock)
    }

    /// The lock as its file's text: pretty JSON, keys sorted, a new line
    /// at the end.
    pub fn to_text(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let mut text = serde_json::to_string_pretty(&sorted(&value)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the lock into `dir`; returns the file's path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, LockError> {
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, self.to_text()).map_err(|source| LockError::Write {
            path: path.display().to_string(),
            source,
        })?;
        Ok(path)
    }

    /// `sha256:` and the hex digest of the lock file's bytes (of the bytes
    /// it was read from, or of [`Lock::to_text`] for a lock built here).
    pub fn digest(&self) -> String {
        self.bytes_digest
            .clone()
            .unwrap_or_else(|| digest_bytes(self.to_text().as_bytes()))
    }

    /// The pinned server `name`, if any.
    pub fn server(&self, name: &str) -> Option<&LockedServer> {
        self.servers.get(name)
    }

    /// Pins `server` under `name`, replacing what was pinned there, and
    /// forgets the bytes it was read from.
    pub fn insert(&mut self, name: &str, server: LockedServer) {
        self.servers.insert(name.to_owned(), server);
        self.bytes_digest = None;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(raw: Value) -> ToolInfo {
        ToolInfo::from_json(raw).expect("a tool")
    }

    #[test]
    fn a_lock_round_trips_byte_for_byte_and_keeps_only_used_tools() {
        let hello = json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "demo", "version": "1.2"}});
        let tools = [
            tool(json!({"name": "b", "inputSchema": {"type": "object"}})),
            tool(json!({"name": "a", "description": "A", "inputSchema": {"type": "object"}})),
        ];
        let mut lock = Lock::default();
        lock.insert("demo", LockedServer::of(&hello, &tools, &["a"]));
        let text = lock.to_text();
        assert!(text.ends_with("}\n"), "{text}");
        assert!(
            text.starts_with("{\n  \"lockVersion\": 1,\n  \"servers\""),
            "{text}"
        );
        assert!(!text.contains("\"b\""), "{text}");
        let back = Lock::parse(text.as_bytes(), "x").unwrap();
        assert_eq!(back.to_text(), text);
        assert_eq!(back.digest(), lock.digest());
        assert_eq!(back.digest(), digest_bytes(text.as_bytes()));
    }

    #[test]
    fn a_bad_lock_is_an_error_with_its_place() {
        let e =
            Lock::parse(b"{\n  \"lockVersion\": 1,\n  \"servers\": 3\n}\n", "p.lock").unwrap_err();
        assert!(e.to_string().starts_with("p.lock:3:"), "{e}");
        let e = Lock::parse(b"{\"lockVersion\": 9, \"servers\": {}}", "p.lock").unwrap_err();
        assert!(e.to_string().contains("version 1"), "{e}");
        let text = "{\"lockVersion\":1,\"servers\":{\"s\":{\"protocolVersion\":\"x\",\"serverInfo\":{},\"tools\":{\"t\":{\"definition\":{\"name\":\"t\"},\"digest\":\"sha256:00\"}}}}}";
        let e = Lock::parse(text.as_bytes(), "p.lock").unwrap_err();
        assert!(e.to_string().contains("tool `t`"), "{e}");
    }

    #[test]
    fn the_lock_of_a_file_sits_beside_it() {
        assert_eq!(
            Lock::path_for(Path::new("a/b/pipe.yaml")),
            PathBuf::from("a/b/pipewright.lock")
        );
        assert_eq!(
            Lock::path_for(Path::new("pipe.yaml")),
            PathBuf::from("pipewright.lock")
        );
    }
}
