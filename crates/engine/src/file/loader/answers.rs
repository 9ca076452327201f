//! A node's `answers:`: the replies to the server's questions during its
//! call, in the answers file's entry form, each checked where it is
//! written.

use super::*;
use crate::file::model::Answer;

impl<'s> Loader<'s> {
    pub(super) fn answers(&mut self, v: &YNode, id: &str) -> Vec<Answer> {
        let Some(items) = v.as_seq() else {
            self.err_hint(
                v.span,
                format!(
                    "`answers` of node `{id}` must be a list, found {}",
                    v.type_name()
                ),
                "write `answers: [decline]` or `answers: [{accept: {field: value}}]`",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (n, item) in items.iter().enumerate() {
            match Answer::from_json(&item.to_json()) {
                Ok(a) => out.push(a),
                Err(e) => self.err(
                    item.span,
                    format!("`answers` of node `{id}`, answer {}: {e}", n + 1),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::file::model::Answer;
    use crate::file::open::load_str;

    #[test]
    fn answers_load_and_a_bad_entry_is_named_where_it_is() {
        let loaded = load_str(
            "pipe:\n  - id: a\n    tool: confirm_send\n    answers: [decline, {sample: hi}]\n",
        );
        assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
        let node = &loaded.pipeline.unwrap().compositions[0].nodes[0];
        assert_eq!(node.answers[0], Answer::Decline);
        let loaded = load_str(
            "pipe:\n  - id: a\n    tool: confirm_send\n    answers:\n      - decline\n      - maybe\n",
        );
        let e = loaded.errors().next().unwrap();
        assert_eq!(e.span.start.line, 6);
        assert!(
            e.message
                .contains("`answers` of node `a`, answer 2: `maybe`"),
            "{}",
            e.message
        );
        let loaded = load_str("pipe:\n  - id: a\n    tool: x\n    answers: yes\n");
        assert!(
            loaded
                .errors()
                .next()
                .unwrap()
                .message
                .contains("must be a list")
        );
    }

    #[test]
    fn answers_change_the_nodes_hash_and_no_answers_keep_it() {
        let hash = |text: &str| {
            load_str(text).pipeline.unwrap().compositions[0].nodes[0]
                .hash
                .clone()
        };
        let plain = hash("pipe:\n  - {id: a, tool: x}\n");
        assert_eq!(plain, hash("pipe:\n  - {id: a, tool: x, answers: []}\n"));
        assert_ne!(
            plain,
            hash("pipe:\n  - {id: a, tool: x, answers: [decline]}\n")
        );
    }
}
