//! `P`: a node's recorded output becomes its `mock:` in the file, as one
//! edit of the buffer (one Ctrl-Z takes it back), so the next run answers
//! from it without a call.

use super::*;

impl App {
    /// Writes `yaml` (`mock:` and its value, indented by two) under node
    /// `id` in the buffer, replacing a `mock:` it has. Files the block
    /// cannot go into (JSON, a node written as a flow mapping) get the
    /// text to paste instead.
    pub(super) fn write_pin(&mut self, id: &str, yaml: &str) {
        let text = self.editor.text();
        // Where the node is in the buffer (another composition may have a
        // node of the same id).
        let at = self
            .comp
            .as_ref()
            .and_then(|c| c.nodes.iter().find(|n| n.id == id))
            .map_or(0, |n| (n.id_span.start.line as usize).saturating_sub(1));
        match pinned_text(&text, id, yaml, at) {
            Some(new) => {
                self.editor.set_text(&new);
                self.say(
                    format!(
                        "pinned: `mock:` written under node `{id}`; the next run answers from it (Ctrl-Z undoes, Ctrl-S saves)"
                    ),
                    false,
                );
            }
            None => {
                let mut body = vec![
                    format!(
                        "# the file has no block mapping for node `{id}` to write into: paste this under it"
                    ),
                    String::new(),
                ];
                body.extend(yaml.lines().map(str::to_owned));
                self.overlay = Some(Overlay::text(format!("mock for {id}"), body));
            }
        }
    }
}

/// The buffer `text` with `yaml` as node `id`'s `mock:`, or `None` when
/// the node is not a block mapping in a YAML list (`- id: NAME`). The
/// node is looked for from line `from` (0-based) on, then from the top.
pub(crate) fn pinned_text(text: &str, id: &str, yaml: &str, from: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    // The line `- id: NAME` (or `id: NAME` under a `-` line).
    let is_id = |l: &str| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        let Some(rest) = t.strip_prefix("id:") else {
            return false;
        };
        let v = rest.split(" #").next().unwrap_or_default().trim();
        v.trim_matches(|c| c == '"' || c == '\'') == id
    };
    let at = lines
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, l)| is_id(l))
        .or_else(|| lines.iter().enumerate().find(|(_, l)| is_id(l)))
        .map(|(i, _)| i)?;
    let line = lines[at];
    let key_col = line.find("id:")?;
    if line[..key_col].contains('{') {
        return None;
    }
    // The node's first line: the `- ` item line at or above the id line.
    let mut first = at;
    while !lines[first].trim_start().starts_with("- ") && first > 0 {
        first -= 1;
        if indent(lines[first]) < key_col.saturating_sub(2) {
            return None;
        }
    }
    // Its keys are at `key_col`; it ends before a line indented less, or
    // the next item.
    let mut end = at + 1;
    while end < lines.len() {
        let l = lines[end];
        let blank = l.trim().is_empty() || l.trim_start().starts_with('#');
        if !blank && indent(l) < key_col {
            break;
        }
        end += 1;
    }
    while end > at + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    // A `mock:` it has already is replaced.
    let mut keep: Vec<&str> = Vec::new();
    let mut k = first;
    while k < end {
        let l = lines[k];
        if indent(l) == key_col && l.trim_start().starts_with("mock:") {
            k += 1;
            while k < end && (lines[k].trim().is_empty() || indent(lines[k]) > key_col) {
                k += 1;
            }
            continue;
        }
        keep.push(l);
        k += 1;
    }
    let pad = " ".repeat(key_col);
    let mut out: Vec<String> = lines[..first].iter().map(|s| (*s).to_owned()).collect();
    out.extend(keep.iter().map(|s| (*s).to_owned()));
    for l in yaml.lines() {
        out.push(format!("{pad}{l}"));
    }
    out.extend(lines[end..].iter().map(|s| (*s).to_owned()));
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Some(joined)
}

#[cfg(test)]
mod tests {
    use super::pinned_text;

    const YAML: &str = "mock:\n  result: {\"a\": 1}\n";

    #[test]
    fn the_mock_goes_under_the_node_at_its_keys_indent() {
        let text =
            "pipe:\n  - id: find\n    tool: t\n    args: {q: 1}\n  - id: next\n    tool: u\n";
        let out = pinned_text(text, "find", YAML, 0).unwrap();
        assert_eq!(
            out,
            "pipe:\n  - id: find\n    tool: t\n    args: {q: 1}\n    mock:\n      result: {\"a\": 1}\n  - id: next\n    tool: u\n"
        );
        let last = pinned_text(text, "next", YAML, 0).unwrap();
        assert!(
            last.ends_with("    tool: u\n    mock:\n      result: {\"a\": 1}\n"),
            "{last}"
        );
    }

    #[test]
    fn an_existing_mock_is_replaced_and_flow_nodes_are_refused() {
        let text = "pipe:\n  - id: find\n    mock:\n      result: 0\n    tool: t\n";
        let out = pinned_text(text, "find", YAML, 0).unwrap();
        assert_eq!(
            out,
            "pipe:\n  - id: find\n    tool: t\n    mock:\n      result: {\"a\": 1}\n"
        );
        assert!(pinned_text("pipe:\n  - {id: find, tool: t}\n", "find", YAML, 0).is_none());
        assert!(pinned_text("pipe:\n  - id: other\n", "find", YAML, 0).is_none());
    }

    #[test]
    fn the_node_of_the_composition_on_screen_gets_it() {
        let text = "compositions:\n  - name: a\n    nodes:\n      - id: n\n        tool: t\n  - name: b\n    nodes:\n      - id: n\n        tool: u\n";
        let out = pinned_text(text, "n", YAML, 7).unwrap();
        assert!(
            out.ends_with("        tool: u\n        mock:\n          result: {\"a\": 1}\n"),
            "{out}"
        );
        assert!(out.starts_with(
            "compositions:\n  - name: a\n    nodes:\n      - id: n\n        tool: t\n  - name"
        ));
    }
}
