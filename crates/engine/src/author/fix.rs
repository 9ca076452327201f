//! Preflight's verdict as marks in the text, and the did-you-mean quick
//! fix: which name is wrong, which is right, and where the replacement
//! goes. The workbench editor and `pipewright lsp` use these same
//! functions.

use crate::diag::{Diagnostic, Pos, Severity, Span};
use crate::file::model::Composition;
use crate::plan::preflight::Preflight;

/// Preflight's verdict as editor marks: each problem and warning (a tool
/// changed since the lock) at its place, and each destructive call as a
/// warning at its tool.
pub fn preflight_marks(c: &Composition, report: &Preflight) -> Vec<Diagnostic> {
    let mut out = report.problems.clone();
    out.extend(report.warnings.iter().cloned());
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

/// Where `wrong` is written for the diagnostic: the first `wrong` from its
/// column on its line (1-based, columns in characters).
pub fn fix_span(text: &str, d: &Diagnostic, wrong: &str) -> Option<Span> {
    let row = (d.span.start.line as usize).checked_sub(1)?;
    let line = text.split('\n').nth(row)?;
    let col = (d.span.start.col as usize).saturating_sub(1);
    let from = line.char_indices().nth(col).map_or(line.len(), |(b, _)| b);
    let at = line[from..].find(wrong).map(|o| from + o)?;
    let start = Pos::new(d.span.start.line, line[..at].chars().count() as u32 + 1);
    Some(Span::new(start, start.shifted(wrong.chars().count())))
}

/// `text` with `wrong` replaced by `right` at the diagnostic's place (see
/// [`fix_span`]).
pub fn replaced(text: &str, d: &Diagnostic, wrong: &str, right: &str) -> Option<String> {
    let span = fix_span(text, d, wrong)?;
    let row = span.start.line as usize - 1;
    let mut out = String::with_capacity(text.len() + right.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i != row {
            out.push_str(line);
            continue;
        }
        let at = line
            .char_indices()
            .nth(span.start.col as usize - 1)
            .map_or(line.len(), |(b, _)| b);
        out.push_str(&line[..at]);
        out.push_str(right);
        out.push_str(&line[at + wrong.len()..]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            fix_span(text, &d, &wrong),
            Some(Span::new(Pos::new(2, 11), Pos::new(2, 22)))
        );
        assert_eq!(
            replaced(text, &d, &wrong, &right).unwrap(),
            "search_user:\n    tool: search_users\n"
        );
        let other = Diagnostic::error(Span::at(Pos::new(1, 1)), "x").with_hint("its tools: a");
        assert!(suggestion(&other).is_none());
    }

    #[test]
    fn the_fix_counts_characters_not_bytes() {
        let d = Diagnostic::error(Span::at(Pos::new(1, 1)), "has no tool `srch`")
            .with_hint("did you mean `search`?");
        let text = "é: ü, tool: srch\n";
        assert_eq!(
            fix_span(text, &d, "srch"),
            Some(Span::new(Pos::new(1, 13), Pos::new(1, 17)))
        );
        assert_eq!(
            replaced(text, &d, "srch", "search").unwrap(),
            "é: ü, tool: search\n"
        );
        assert!(fix_span(text, &Diagnostic::error(Span::at(Pos::new(9, 1)), "x"), "a").is_none());
    }
}
