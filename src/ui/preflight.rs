//! What preflight as you type keeps between validations: the tool lists
//! of the plan's servers and the latest verdict, and the pure parts of its
//! marks and quick fix (the app's side is `ui::app::tools`).

use std::time::Duration;

use crate::engine::diag::{Diagnostic, Severity};
use crate::engine::file::model::Composition;
use crate::engine::plan::preflight::{Preflight, ToolLists};

/// The tool lists kept for preflight as you type, and its latest verdict.
#[derive(Debug, Default)]
pub struct LiveTools {
    /// The lists, for the plan's servers as the key names them, and the
    /// server of nodes that name none.
    pub lists: Option<(String, ToolLists, Option<String>)>,
    /// The key a fetch was asked for (under way, or failed: not asked
    /// again until the servers change).
    pub asked: Option<String>,
    /// What preflight found on the plan adopted last (`None`: the lists
    /// have not come yet).
    pub report: Option<Preflight>,
    /// How long that check took.
    pub took: Option<Duration>,
    /// Completion was asked for before the lists came.
    pub want_completion: bool,
}

/// Preflight's verdict as editor marks: each problem at its place, and each
/// destructive call as a warning at its tool.
pub fn preflight_marks(c: &Composition, report: &Preflight) -> Vec<Diagnostic> {
    let mut out = report.problems.clone();
    for d in &report.destructive {
        if let Some(node) = c.nodes.iter().find(|n| n.id == d.node) {
            out.push(Diagnostic::warning(
                node.tool_span,
                format!(
                    "node `{}` calls `{}` on server `{}`, which marks it destructive (the run asks first)",
                    d.node, d.tool, d.server
                ),
            ));
        }
    }
    out
}

/// The name a diagnostic is about and the one its hint suggests: the first
/// and the last `…` quoted names of "… `wrong` …" with "did you mean
/// `right`?".
pub fn suggestion(d: &Diagnostic) -> Option<(String, String)> {
    if d.severity != Severity::Error {
        return None;
    }
    let hint = d.hint.as_deref()?;
    let right = hint.strip_prefix("did you mean `")?.split('`').next()?;
    let wrong = d.message.rsplit('`').nth(1)?;
    (!wrong.is_empty() && wrong != right).then(|| (wrong.to_owned(), right.to_owned()))
}

/// `text` with `wrong` replaced by `right` at the diagnostic's place (the
/// first `wrong` from its column on its line).
pub fn replaced(text: &str, d: &Diagnostic, wrong: &str, right: &str) -> Option<String> {
    let row = (d.span.start.line as usize).checked_sub(1)?;
    let col = (d.span.start.col as usize).saturating_sub(1);
    let mut out = String::with_capacity(text.len() + right.len());
    let mut found = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i != row {
            out.push_str(line);
            continue;
        }
        let from = line.char_indices().nth(col).map_or(line.len(), |(b, _)| b);
        let at = line[from..].find(wrong).map(|o| from + o)?;
        out.push_str(&line[..at]);
        out.push_str(right);
        out.push_str(&line[at + wrong.len()..]);
        found = true;
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::diag::{Pos, Span};

    #[test]
    fn a_did_you_mean_replaces_the_name_at_its_place() {
        let d = Diagnostic::error(
            Span::at(Pos::new(2, 11)),
            "node `a`: server `demo` has no tool `search_user`",
        )
        .with_hint("did you mean `search_users`?");
        let (wrong, right) = suggestion(&d).unwrap();
        assert_eq!(
            (wrong.as_str(), right.as_str()),
            ("search_user", "search_users")
        );
        let text = "search_user:\n    tool: search_user\n";
        assert_eq!(
            replaced(text, &d, &wrong, &right).unwrap(),
            "search_user:\n    tool: search_users\n"
        );
        let other = Diagnostic::error(Span::at(Pos::new(1, 1)), "x").with_hint("its tools: a");
        assert!(suggestion(&other).is_none());
    }
}
