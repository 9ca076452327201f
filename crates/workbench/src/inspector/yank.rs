//! What `y` and `Y` take from the inspector: the selected row of the Args
//! or Output tree, as JSON or as its path (jq-style).

use super::json_tree::{JsonTree, Label, RowKind, Seg, value_at};
use super::{Inspector, Tab};

impl Inspector {
    /// The selected tree row's value as pretty JSON, or (`path`) its path,
    /// with a few words saying what it is; `None` outside the Args and
    /// Output tabs or when they show nothing.
    pub fn yank(&self, path: bool) -> Option<(String, String)> {
        let tree = match self.tab {
            Tab::Args => self.args.as_ref()?,
            Tab::Output if self.filter.active() && self.filtered.is_some() => {
                self.filtered.as_ref()?
            }
            Tab::Output => self.output.as_ref()?,
            _ => return None,
        };
        let segs = selected_path(tree)?;
        let at = json_path(&segs);
        if path {
            return Some((at.clone(), format!("the path {at}")));
        }
        let value = value_at(tree.value(), &segs)?;
        let text = serde_json::to_string_pretty(value).ok()?;
        Some((text, format!("{} {at}", self.tab.name())))
    }
}

/// Where the selected row's value is: a container's row knows its path; a
/// scalar's is its parent's path and its own label; a closing bracket's is
/// its opening row's.
fn selected_path(t: &JsonTree) -> Option<Vec<Seg>> {
    let rows = t.rows();
    let i = t.selected();
    let row = rows.get(i)?;
    match &row.kind {
        RowKind::Open { .. } | RowKind::Bucket { .. } => Some(row.path.clone()),
        RowKind::Close { .. } => rows[..i]
            .iter()
            .rev()
            .find(|r| r.depth == row.depth && matches!(r.kind, RowKind::Open { .. }))
            .map(|r| r.path.clone()),
        RowKind::Scalar { .. } => {
            let mut p = match row.depth {
                0 => Vec::new(),
                d => rows[..i]
                    .iter()
                    .rev()
                    .find(|r| r.depth + 1 == d)?
                    .path
                    .clone(),
            };
            match &row.label {
                Label::Key(k) => p.push(Seg::Key(k.clone())),
                Label::Index(n) => p.push(Seg::Index(*n)),
                Label::Root => {}
            }
            Some(p)
        }
    }
}

/// A jq-style path to a value: `.users[0].name`, `.["odd key"]`; `.` for
/// the root. Groups of a big container are not steps and are left out.
pub fn json_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if is_ident(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => {
                let quoted = serde_json::to_string(k).unwrap_or_default();
                out.push_str(&format!(".[{quoted}]"));
            }
            Seg::Index(i) => {
                if out.is_empty() {
                    out.push('.');
                }
                out.push_str(&format!("[{i}]"));
            }
            Seg::Bucket(..) => {}
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

fn is_ident(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_jq() {
        let p = [
            Seg::Key("users".into()),
            Seg::Bucket(0, 100),
            Seg::Index(0),
            Seg::Key("first name".into()),
        ];
        assert_eq!(json_path(&p), r#".users[0].["first name"]"#);
        assert_eq!(json_path(&[]), ".");
        assert_eq!(json_path(&[Seg::Index(2)]), ".[2]");
    }
}
