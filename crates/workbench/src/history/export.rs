//! The formats History's `E` exports a saved run as (the same writers as
//! `run --format json|junit` and `runs export --otlp|--cassette`), and the
//! suffix of the file each is written to.

/// What `E` writes a saved run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// The trace envelope, as `run --format json` prints it.
    Json,
    /// JUnit XML, as `run --format junit` prints it.
    Junit,
    /// OTLP/JSON, as `runs export --otlp` writes it.
    Otlp,
    /// A cassette for `run --replay`, as `runs export --cassette` writes it.
    Cassette,
}

impl ExportFormat {
    /// The format a key after `E` picks.
    pub fn of_key(c: char) -> Option<ExportFormat> {
        match c {
            'j' => Some(ExportFormat::Json),
            'u' => Some(ExportFormat::Junit),
            'o' => Some(ExportFormat::Otlp),
            'c' => Some(ExportFormat::Cassette),
            _ => None,
        }
    }

    /// What the exported file's name ends with.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Junit => "junit.xml",
            ExportFormat::Otlp => "otlp.json",
            ExportFormat::Cassette => "cassette.json",
        }
    }
}
