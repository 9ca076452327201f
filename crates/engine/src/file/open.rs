//! The front door of the file room: text or a path in, a loaded pipeline
//! out, whatever the dialect. Native files go straight to the loader; Fibe
//! and Discord files are translated by the import first, and their
//! diagnostics and spans mapped back to the imported file.

use std::path::Path;

use crate::diag::{Diagnostic, Pos, Span};
use crate::file::import::{self, Dialect, FibeLimits};
use crate::file::loader::{self, Loaded};
use crate::file::yaml;
use crate::lang::jq::JqLimits;

/// How files are loaded, as the driver's settings and command line say;
/// the default is every limit at its default and no command-line server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// `PIPEWRIGHT_MAX_FILE_MB` (`None`: [`DEFAULT_MAX_FILE_MB`]).
    pub max_file_mb: Option<u64>,
    /// `PIPEWRIGHT_MAX_ALIAS_MB` (`None`: the YAML reader's default).
    pub max_alias_mb: Option<usize>,
    /// `--fibe-max-steps` / `--fibe-max-iterations`: Fibe's caps.
    pub fibe: FibeLimits,
    /// The servers the command line adds (`--server NAME=…`,
    /// `--servers-from`): nodes may name them.
    pub cli_servers: Vec<String>,
    /// What each jq program of the file may spend.
    pub jq: JqLimits,
}

impl LoadOptions {
    /// The size limit in force, in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_mb
            .unwrap_or(DEFAULT_MAX_FILE_MB)
            .saturating_mul(1024 * 1024)
    }
}

/// Reads and loads a file (any dialect, detected from its content) with
/// the default options; an unreadable file is an error diagnostic too.
pub fn load_file(path: &Path) -> (String, Loaded) {
    load_file_with(path, Dialect::Auto, &LoadOptions::default())
}

/// Pipeline files (and inline pipelines sent to `serve`) larger than this
/// many MiB are refused before they are parsed; `PIPEWRIGHT_MAX_FILE_MB`
/// raises it.
pub const DEFAULT_MAX_FILE_MB: u64 = 8;

/// The error for a text of `len` bytes over the limit.
fn too_large(what: &str, len: u64, limit: u64) -> Loaded {
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    Loaded {
        pipeline: None,
        diagnostics: vec![
            Diagnostic::error(
                Span::at(Pos::new(1, 1)),
                format!(
                    "{what} is {:.1} MiB; pipeline files are read up to {:.0} MiB, so it is refused unread",
                    mb(len),
                    mb(limit)
                ),
            )
            .with_hint("raise the limit with PIPEWRIGHT_MAX_FILE_MB=N if the file is meant to be this big"),
        ],
    }
}

/// Reads and loads a file written in `dialect` (`Auto` detects it), with
/// the default options.
pub fn load_file_as(path: &Path, dialect: Dialect) -> (String, Loaded) {
    load_file_with(path, dialect, &LoadOptions::default())
}

/// Reads and loads a file written in `dialect` (`Auto` detects it) as
/// `opts` say.
pub fn load_file_with(path: &Path, dialect: Dialect, opts: &LoadOptions) -> (String, Loaded) {
    let limit = opts.max_file_bytes();
    // Refused before it is read: a huge file costs neither time nor memory.
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.len() > limit
    {
        let what = format!("`{}`", path.display());
        return (String::new(), too_large(&what, meta.len(), limit));
    }
    let read = std::fs::File::open(path).and_then(|f| {
        use std::io::Read;
        let mut text = String::new();
        // A file that grew since it was measured is read up to the limit.
        f.take(limit + 1).read_to_string(&mut text)?;
        Ok(text)
    });
    match read {
        Ok(source) if source.len() as u64 > limit => {
            let what = format!("`{}`", path.display());
            (String::new(), too_large(&what, source.len() as u64, limit))
        }
        Ok(source) => {
            let loaded = load_str_with(&source, dialect, opts);
            (source, loaded)
        }
        Err(e) => (
            String::new(),
            Loaded {
                pipeline: None,
                diagnostics: vec![Diagnostic::error(
                    Span::at(Pos::new(1, 1)),
                    format!("cannot read `{}`: {e}", path.display()),
                )],
            },
        ),
    }
}

/// Loads a pipeline from YAML or JSON text: a native file, or a Fibe or
/// Discord pipeline detected from its content (see [`import`]), with the
/// default options.
pub fn load_str(source: &str) -> Loaded {
    load_str_with(source, Dialect::Auto, &LoadOptions::default())
}

/// [`load_str_with`] with the default options.
pub fn load_str_as(source: &str, dialect: Dialect) -> Loaded {
    load_str_with(source, dialect, &LoadOptions::default())
}

/// Loads any pipeline file as `opts` say: native files go to the native
/// loader, imports are converted first and their diagnostics and spans
/// mapped back.
pub fn load_str_with(source: &str, dialect: Dialect, opts: &LoadOptions) -> Loaded {
    let limit = opts.max_file_bytes();
    if source.len() as u64 > limit {
        return too_large("the pipeline text", source.len() as u64, limit);
    }
    let root = match yaml::parse_limited(source, opts.max_alias_mb) {
        Ok(root) => root,
        Err(d) => {
            return Loaded {
                pipeline: None,
                diagnostics: vec![d],
            };
        }
    };
    let dialect = match dialect {
        Dialect::Auto => import::detect(&root),
        d => d,
    };
    if dialect == Dialect::Native {
        return loader::load_tree_with(source, &root, (&opts.cli_servers, opts.jq));
    }
    let conv = import::convert_tree(source, &root, dialect, opts.fibe);
    if conv.has_errors() || conv.yaml.is_empty() {
        return Loaded {
            pipeline: None,
            diagnostics: conv.diagnostics,
        };
    }
    let native =
        loader::load_native_with(&conv.yaml, opts.max_alias_mb, (&opts.cli_servers, opts.jq));
    let mut diagnostics = conv.diagnostics.clone();
    for d in native.diagnostics {
        diagnostics.push(Diagnostic {
            span: conv.origin(d.span),
            ..d
        });
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    let pipeline = native.pipeline.map(|mut p| {
        import::remap(&mut p, &|s| conv.origin(s));
        p
    });
    Loaded {
        pipeline,
        diagnostics,
    }
}
