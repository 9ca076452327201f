//! Engine choices offered on the command line by name: the engine knows
//! nothing of clap, so its enums get their flag values here.

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

impl Named for pipewright_engine::file::import::Dialect {
    const ALL: &'static [Self] = Self::ALL;
    fn name(self) -> &'static str {
        self.name()
    }
    fn help(self) -> Option<&'static str> {
        Some(self.help())
    }
}

impl Named for pipewright_engine::mcp::LogLevel {
    const ALL: &'static [Self] = Self::ALL;
    fn name(self) -> &'static str {
        self.name()
    }
}

/// `--protocol`'s help, naming the revisions as the engine writes them.
pub fn protocol_help() -> String {
    use pipewright_engine::mcp::Protocol;
    let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
    format!(
        "The MCP revision to speak to servers ({}), or to one server: NAME=REVISION \
         (repeatable, comma-separated in the variable). `auto` sends `initialize` ({}) and \
         `server/discover` ({}) only to a server that refuses it. A server's `protocol:` in the \
         file wins over a REVISION for every server; NAME=REVISION wins over both",
        names.join(", "),
        Protocol::V2025_11_25,
        Protocol::V2026_07_28,
    )
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
