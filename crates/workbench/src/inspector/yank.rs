//! What `y` and `Y` take from the inspector: the selected row of the Args
//! or Output tree, as JSON or as its path.

use super::json_tree::{JsonTree, Label, RowKind, Seg, value_at};
use super::{Inspector, Tab};
use crate::copy::json_path;

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
