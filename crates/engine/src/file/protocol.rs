//! The MCP revisions pipewright can be told to speak (a server's
//! `protocol:`, `--protocol`), named by their dates. Each date is written
//! here once; the loader, the schema, the handshake (`mcp::revision`) and
//! the command line's help name them through [`Protocol`].

use std::fmt;

/// Which MCP revision to speak. A revision is named by its date, so a
/// newer one adds a name and leaves these right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// `initialize` first; `server/discover` for a server that refuses it.
    #[default]
    Auto,
    /// Only 2026-07-28 (`server/discover`, per-request `_meta`): a server
    /// that does not speak it is an error.
    V2026_07_28,
    /// Only 2025-11-25 and older (`initialize`).
    V2025_11_25,
}

impl Protocol {
    /// Every choice, in the order a flag's help lists them.
    pub const ALL: &[Protocol] = &[Protocol::Auto, Protocol::V2026_07_28, Protocol::V2025_11_25];

    /// The value as written in a file and on the command line: `auto`, or
    /// the revision's date.
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::V2026_07_28 => "2026-07-28",
            Protocol::V2025_11_25 => "2025-11-25",
        }
    }

    /// The revision named `name` (one of [`Protocol::ALL`]'s names).
    pub fn parse(name: &str) -> Option<Protocol> {
        Protocol::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// Every name, for a sentence: `auto, 2026-07-28 or 2025-11-25`.
    pub fn listed() -> String {
        let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_values_are_the_revisions() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::parse(p.name()), Some(*p), "own name parses");
        }
        assert_eq!(Protocol::parse("2024-11-05"), None);
        assert_eq!(Protocol::default(), Protocol::Auto);
        assert_eq!(Protocol::listed(), "auto, 2026-07-28 or 2025-11-25");
    }
}
