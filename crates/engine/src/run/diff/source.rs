//! What changed in the file text between two saved runs: a compact line
//! diff (the changed lines, with their line numbers on each side), so a
//! run diff shows the edit that caused it (`tool: search_user →
//! search_users`) beside the trace fields it changed.

/// Lines of context kept around a change.
const CONTEXT: usize = 1;
/// Above this many cells (lines × lines of the changed middle) the texts
/// are not compared line by line: the diff says they differ.
const MAX_CELLS: usize = 4_000_000;

/// One line of the diff.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Line {
    /// Only in the earlier run's text, at this line (1-based).
    Removed { line: usize, text: String },
    /// Only in the later run's text, at this line (1-based).
    Added { line: usize, text: String },
    /// In both, kept around a change as context: its line in the later text.
    Same { line: usize, text: String },
    /// Unchanged lines left out.
    Gap,
}

/// The line diff of `a` → `b`: `None` when they are the same, else the
/// changed lines with a line of context around each run of changes.
pub fn diff(a: &str, b: &str) -> Option<Vec<Line>> {
    if a == b {
        return None;
    }
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    // The common head and tail are cut first: an edit is usually small.
    let head = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
    let room = x.len().min(y.len()) - head;
    let tail = x
        .iter()
        .rev()
        .zip(y.iter().rev())
        .take(room)
        .take_while(|(p, q)| p == q)
        .count();
    let (mx, my) = (&x[head..x.len() - tail], &y[head..y.len() - tail]);
    let ops = if mx.len().saturating_mul(my.len()) > MAX_CELLS {
        // Too big to align: all of the middle out, all of it in.
        let mut ops: Vec<Op> = (0..mx.len()).map(Op::Del).collect();
        ops.extend((0..my.len()).map(Op::Ins));
        ops
    } else {
        lcs(mx, my)
    };
    // Whole-text script: the head and tail as kept lines around the middle.
    let mut script: Vec<Op> = (0..head).map(|i| Op::Keep(i, i)).collect();
    script.extend(ops.into_iter().map(|op| match op {
        Op::Keep(i, j) => Op::Keep(head + i, head + j),
        Op::Del(i) => Op::Del(head + i),
        Op::Ins(j) => Op::Ins(head + j),
    }));
    script.extend((0..tail).map(|k| Op::Keep(x.len() - tail + k, y.len() - tail + k)));
    Some(compact(&script, &x, &y))
}

/// One step of an edit script: indices into the two line lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep(usize, usize),
    Del(usize),
    Ins(usize),
}

/// The shortest edit script by longest common subsequence.
fn lcs(x: &[&str], y: &[&str]) -> Vec<Op> {
    let (n, m) = (x.len(), y.len());
    // len[i][j]: the LCS of x[i..] and y[j..].
    let mut len = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[at(i, j)] = if x[i] == y[j] {
                len[at(i + 1, j + 1)] + 1
            } else {
                len[at(i + 1, j)].max(len[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            out.push(Op::Keep(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || len[at(i, j + 1)] >= len[at(i + 1, j)]) {
            out.push(Op::Ins(j));
            j += 1;
        } else {
            out.push(Op::Del(i));
            i += 1;
        }
    }
    // Removals before additions inside each run of changes, as a reader
    // expects (`- old` then `+ new`).
    let mut k = 0;
    while k < out.len() {
        let end = (k..out.len())
            .find(|&e| matches!(out[e], Op::Keep(..)))
            .unwrap_or(out.len());
        out[k..end].sort_by_key(|op| matches!(op, Op::Ins(_)));
        k = end + 1;
    }
    out
}

/// The script as lines: changes, `CONTEXT` kept lines around them, a gap
/// for what is left out.
fn compact(script: &[Op], x: &[&str], y: &[&str]) -> Vec<Line> {
    let near = |k: usize| {
        let lo = k.saturating_sub(CONTEXT);
        let hi = (k + CONTEXT).min(script.len().saturating_sub(1));
        (lo..=hi).any(|c| !matches!(script[c], Op::Keep(..)))
    };
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, op) in script.iter().enumerate() {
        match *op {
            Op::Keep(_, j) if near(k) => {
                if skipped && !out.is_empty() {
                    out.push(Line::Gap);
                }
                skipped = false;
                out.push(Line::Same {
                    line: j + 1,
                    text: y[j].to_owned(),
                });
            }
            Op::Keep(..) => skipped = true,
            Op::Del(i) | Op::Ins(i) => {
                if skipped && !out.is_empty() {
                    out.push(Line::Gap);
                }
                skipped = false;
                let text = if matches!(op, Op::Del(_)) { x[i] } else { y[i] }.to_owned();
                out.push(match op {
                    Op::Del(_) => Line::Removed { line: i + 1, text },
                    _ => Line::Added { line: i + 1, text },
                });
            }
        }
    }
    out
}

/// The diff as text, a line each: `- 9 │ tool: search_user`,
/// `+ 9 │ tool: search_users`, context as `  8 │ …`, `  ⋮` for a gap.
/// `a` and `b` are the two runs' kept texts (`None`: saved without it).
pub fn text(a: Option<&str>, b: Option<&str>) -> String {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return "file: neither run kept its text\n".to_owned(),
        (None, Some(_)) => return "file: the earlier run was saved without its text\n".to_owned(),
        (Some(_), None) => return "file: the later run was saved without its text\n".to_owned(),
    };
    let Some(lines) = diff(a, b) else {
        return "file: the same text\n".to_owned();
    };
    let (removed, added) = lines.iter().fold((0, 0), |(r, d), l| match l {
        Line::Removed { .. } => (r + 1, d),
        Line::Added { .. } => (r, d + 1),
        _ => (r, d),
    });
    let width = lines
        .iter()
        .filter_map(|l| match l {
            Line::Removed { line, .. } | Line::Added { line, .. } | Line::Same { line, .. } => {
                Some(line.to_string().len())
            }
            Line::Gap => None,
        })
        .max()
        .unwrap_or(1);
    let mut out = format!("file: {removed} line(s) removed, {added} added\n");
    for l in &lines {
        let row = match l {
            Line::Removed { line, text } => format!("  - {line:>width$} │ {text}"),
            Line::Added { line, text } => format!("  + {line:>width$} │ {text}"),
            Line::Same { line, text } => format!("    {line:>width$} │ {text}"),
            Line::Gap => format!("    {:>width$} ┆", "⋮"),
        };
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_word_edit_is_two_lines_with_their_numbers() {
        let a = "pipe:\n  - id: find\n    tool: search_user\n    args: {}\n";
        let b = "pipe:\n  - id: find\n    tool: search_users\n    args: {}\n";
        assert_eq!(diff(a, a), None);
        let t = text(Some(a), Some(b));
        assert_eq!(
            t,
            "file: 1 line(s) removed, 1 added\n    2 │   - id: find\n  - 3 │     tool: search_user\n  + 3 │     tool: search_users\n    4 │     args: {}\n"
        );
    }

    #[test]
    fn far_apart_changes_are_separated_by_a_gap_and_insertions_number_the_new_text() {
        let a: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let b = a.replace("l3\n", "l3\nnew\n").replace("l18\n", "");
        let lines = diff(&a, &b).expect("differs");
        assert!(lines.contains(&Line::Added {
            line: 4,
            text: "new".into()
        }));
        assert!(lines.contains(&Line::Removed {
            line: 18,
            text: "l18".into()
        }));
        assert!(lines.contains(&Line::Gap), "{lines:?}");
        assert_eq!(
            text(None, Some("x")),
            "file: the earlier run was saved without its text\n"
        );
    }
}
