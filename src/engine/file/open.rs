//! The front door of the file room: text or a path in, a loaded pipeline
//! out, whatever the dialect. Native files go straight to the loader; Fibe
//! and Discord files are translated by the import first, and their
//! diagnostics and spans mapped back to the imported file.

use std::path::Path;

use crate::engine::diag::{Diagnostic, Pos, Span};
use crate::engine::file::import::{self, Dialect};
use crate::engine::file::loader::{self, Loaded};
use crate::engine::file::yaml;

/// Reads and loads a file (any dialect, detected from its content); an
/// unreadable file is an error diagnostic too.
pub fn load_file(path: &Path) -> (String, Loaded) {
    load_file_as(path, Dialect::Auto)
}

/// Reads and loads a file written in `dialect` (`Auto` detects it).
pub fn load_file_as(path: &Path, dialect: Dialect) -> (String, Loaded) {
    match std::fs::read_to_string(path) {
        Ok(source) => {
            let loaded = load_str_as(&source, dialect);
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
/// Discord pipeline detected from its content (see [`import`]).
pub fn load_str(source: &str) -> Loaded {
    load_str_as(source, Dialect::Auto)
}

/// Loads any pipeline file: native files go to the native loader, imports
/// are converted first and their diagnostics and spans mapped back.
pub fn load_str_as(source: &str, dialect: Dialect) -> Loaded {
    let root = match yaml::parse(source) {
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
        return loader::load_tree(source, &root);
    }
    let conv = import::convert_tree(source, &root, dialect);
    if conv.has_errors() || conv.yaml.is_empty() {
        return Loaded {
            pipeline: None,
            diagnostics: conv.diagnostics,
        };
    }
    let native = loader::load_native_str(&conv.yaml);
    let mut diagnostics = conv.diagnostics.clone();
    for d in native.diagnostics {
        // Order-only parents are how steps are sequenced; not a problem here.
        if !d.is_error() && d.message.contains("only orders the two") {
            continue;
        }
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
