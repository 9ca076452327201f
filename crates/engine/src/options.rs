//! What both drivers read from the user, in one place: `--var` values,
//! duration flags and the exit codes of SPEC §4. The command line and the
//! workbench both import this; neither imports the other for it.

use indexmap::IndexMap;
use serde_json::Value;

/// Exit codes shared by every subcommand and by the workbench.
pub mod exit {
    pub const OK: u8 = 0;
    /// A step or an expectation failed.
    pub const FAILED: u8 = 1;
    /// Invalid file or usage.
    pub const INVALID: u8 = 2;
    pub const BUDGET: u8 = 3;
    /// A server could not be reached.
    pub const UNREACHABLE: u8 = 4;
    pub const CANCELLED: u8 = 130;
}

/// Reads an optional duration flag (`--timeout 30s`); the error names the
/// flag and the text.
pub fn duration_flag(
    flag: &str,
    value: Option<&str>,
) -> Result<Option<std::time::Duration>, String> {
    match value {
        None => Ok(None),
        Some(t) => crate::file::loader::parse_duration(t)
            .map(Some)
            .map_err(|e| format!("--{flag} `{t}` {e}")),
    }
}

/// `--var NAME=VALUE` pairs: a value that parses as JSON keeps its type,
/// anything else is a string.
pub fn parse_vars(raw: &[String]) -> Result<IndexMap<String, Value>, String> {
    let mut out = IndexMap::new();
    for item in raw {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("--var `{item}` is not NAME=VALUE"));
        };
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
        out.insert(k.trim().to_owned(), value);
    }
    Ok(out)
}
