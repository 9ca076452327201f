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
        Some(t) => crate::engine::file::loader::parse_duration(t)
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

/// An engine choice offered on the command line by name (the engine knows
/// nothing of clap, so the flags name its values here).
pub trait Named: Copy + Send + Sync + 'static {
    /// Every value, in the order the help lists them.
    const ALL: &'static [Self];
    /// The value as written on the command line.
    fn name(self) -> &'static str;
    /// What the value means, shown in `--help`.
    fn help(self) -> Option<&'static str> {
        None
    }
}

impl Named for crate::engine::file::import::Dialect {
    const ALL: &'static [Self] = Self::ALL;
    fn name(self) -> &'static str {
        self.name()
    }
    fn help(self) -> Option<&'static str> {
        Some(self.help())
    }
}

impl Named for crate::engine::mcp::Protocol {
    const ALL: &'static [Self] = Self::ALL;
    fn name(self) -> &'static str {
        self.name()
    }
    fn help(self) -> Option<&'static str> {
        Some(self.help())
    }
}

impl Named for crate::engine::mcp::LogLevel {
    const ALL: &'static [Self] = Self::ALL;
    fn name(self) -> &'static str {
        self.name()
    }
}

/// The value parser of a [`Named`] flag: its values in `--help` and in
/// completions, and clap's own error for any other.
pub fn choice<T: Named>() -> Choice<T> {
    Choice(std::marker::PhantomData)
}

/// See [`choice`].
#[derive(Clone)]
pub struct Choice<T>(std::marker::PhantomData<T>);

impl<T: Named> clap::builder::TypedValueParser for Choice<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let names = T::ALL.iter().map(|v| v.name());
        let name = clap::builder::PossibleValuesParser::new(names).parse_ref(cmd, arg, value)?;
        T::ALL
            .iter()
            .copied()
            .find(|v| v.name() == name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(T::ALL.iter().map(|v| {
            clap::builder::PossibleValue::new(v.name()).help(v.help())
        })))
    }
}
