//! The whole of `new --from` short of the files: recordings in, the
//! proved pipeline's text, its cassette, what was inferred and what
//! serving it saves out. A driver writes the two files and prints the
//! summary; a test goes from a session file to a checked, replayable
//! pipeline in one call.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::calls::{Call, Recording};
use super::draft::{Choice, Draft};
use super::emit;
use super::infer;
use super::merge::{self, MergeError};
use super::prove::{self, Proof, ProveError};
use super::savings::{self, Savings};
use crate::file::model::Answer;
use crate::run::cassette::Cassette;

/// A pipeline written from recordings.
#[derive(Debug, Clone)]
pub struct Written {
    /// The pipeline file's text.
    pub text: String,
    /// The cassette to write beside it.
    pub cassette: Cassette,
    /// What was inferred (after the proof).
    pub draft: Draft,
    pub proof: Proof,
    pub savings: Savings,
    /// The recordings as read (several servers' sessions made one).
    pub recordings: Vec<Recording>,
}

/// Why no pipeline was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    Prove(#[from] ProveError),
}

/// Writes the pipeline named `name` from `recs`, proved against them;
/// `cassette` is the name the file's header gives its cassette, `file`
/// where the pipeline will be saved (absolute), for its `$schema`
/// modeline.
pub async fn write(
    recs: Vec<Recording>,
    name: &str,
    cassette: &str,
    file: Option<&Path>,
) -> Result<Written, WriteError> {
    let (mut draft, recordings) = merge::draft(recs, name)?;
    let proof = prove::prove(&mut draft, &recordings).await?;
    let text = emit::pipeline(&draft, cassette, file);
    let tape = emit::cassette(&draft, &recordings);
    let savings = savings::of_draft(&draft, &recordings);
    Ok(Written {
        text,
        cassette: tape,
        draft,
        proof,
        savings,
        recordings,
    })
}

/// The draft `recs` make before the proof, and the recordings as its
/// `CallRef`s count them: what a live view draws while a session is still
/// being recorded (the proof runs when the pipeline is written).
pub fn infer(recs: Vec<Recording>, name: &str) -> Result<(Draft, Vec<Recording>), WriteError> {
    Ok(merge::draft(recs, name)?)
}

/// The pipeline text of draft `d`, as [`write`] writes it (`cassette` and
/// `file` as there).
pub fn text(d: &Draft, cassette: &str, file: Option<&Path>) -> String {
    emit::pipeline(d, cassette, file)
}

/// The answers a folded call's questions got, in the form of a node's
/// `answers:` (a reply that is not one, such as an error, is left out).
pub fn answers(c: &Call) -> Vec<Answer> {
    c.extras
        .interactions
        .iter()
        .filter_map(|i| infer::answer_of(&i.reply, &i.kind))
        .collect()
}

/// Where the cassette of pipeline `file` goes: `FILE.cassette.json`.
pub fn cassette_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".cassette.json");
    PathBuf::from(name)
}

impl Written {
    /// Writes the pipeline to `file` and its cassette beside it; neither
    /// replaces a file that exists unless `force`. The error is a
    /// sentence naming the file.
    pub fn save(&self, file: &Path, force: bool) -> Result<PathBuf, String> {
        let cassette = cassette_path(file);
        if !force {
            for path in [file, cassette.as_path()] {
                if path.exists() {
                    return Err(format!(
                        "`{}` exists; not overwritten (pass --force to replace it)",
                        path.display()
                    ));
                }
            }
        }
        let mut open = std::fs::OpenOptions::new();
        open.write(true);
        if force {
            open.create(true).truncate(true);
        } else {
            open.create_new(true);
        }
        open.open(file)
            .and_then(|mut f| f.write_all(self.text.as_bytes()))
            .map_err(|e| format!("cannot write `{}`: {e}", file.display()))?;
        self.cassette.save(&cassette).map_err(|e| e.to_string())?;
        Ok(cassette)
    }

    /// What was done, a line each: calls to steps, references by rule,
    /// inputs, flags, demotions, what was left out, the proof and the
    /// savings.
    pub fn summary(&self) -> Vec<String> {
        let d = &self.draft;
        let calls: usize = d.steps.iter().map(|s| s.calls_of(0).count()).sum();
        let mut out = vec![format!(
            "{calls} call(s) → {} node(s){}",
            d.steps.len(),
            if self.recordings.len() > 1 {
                format!(" (from {} recordings)", self.recordings.len())
            } else {
                String::new()
            }
        )];
        let rules = d.by_rule();
        if rules.is_empty() {
            out.push("references: none inferred".to_owned());
        } else {
            let parts: Vec<String> = rules
                .iter()
                .map(|(r, n)| format!("{} {n}", r.name()))
                .collect();
            out.push(format!("references: {}", parts.join(", ")));
        }
        let fans = d.steps.iter().filter(|s| s.for_each.is_some()).count();
        if fans > 0 {
            out.push(format!("for_each: {fans} node(s) over an earlier list"));
        }
        if !d.vars.is_empty() {
            let names: Vec<&str> = d.vars.keys().map(String::as_str).collect();
            out.push(format!("inputs: {}", names.join(", ")));
        }
        let mut flagged = Vec::new();
        for s in &d.steps {
            for l in &s.leaves {
                if l.choice == Choice::Flagged {
                    flagged.push(format!("{}.{}", s.id, super::draft::arg_path(&l.path)));
                }
            }
        }
        if !flagged.is_empty() {
            out.push(format!(
                "flagged (look made by a server, no earlier result holds them): {}",
                flagged.join(", ")
            ));
        }
        let answered = d.steps.iter().filter(|s| !s.answers.is_empty()).count();
        if answered > 0 {
            out.push(format!(
                "answers: {answered} node(s) keep the agent's replies to the server's questions"
            ));
        }
        for x in &self.proof.demoted {
            out.push(format!("demoted: {x}"));
        }
        if let Some(why) = &self.proof.fallback {
            out.push(format!(
                "the inferred pipeline did not replay ({why}): written with the recorded arguments instead"
            ));
        }
        for l in &d.left_out {
            out.push(format!("left out: {l}"));
        }
        for r in &self.recordings {
            for n in &r.notes {
                out.push(format!("note: {n}"));
            }
        }
        out.push(format!(
            "proved: replayed offline {} time(s), {} call(s) made in the recorded order with the recorded results",
            self.proof.replays, self.proof.calls
        ));
        out.push(self.savings.line());
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::file::open::load_str;
    use crate::record::testing::{Script, result_of, tool};

    /// One scripted session with everything `new --from` folds and infers:
    /// a fan-out, inputs, a flagged id, a 2025 question answered during a
    /// call, a task, and an email built from earlier results.
    fn everything() -> Recording {
        let mut s = Script::new(
            "2025-11-25",
            vec![tool("search_users", json!({"query": {"type": "string"}}))],
        );
        s.call(
            "search_users",
            json!({"query": "ali"}),
            json!({"users": [{"id": "u1"}, {"id": "u5"}], "count": 2}),
        );
        s.call(
            "get_user_details",
            json!({"user_id": "u1"}),
            json!({"id": "u1", "name": "Alice Anders", "email": "alice@example.com"}),
        );
        s.call(
            "get_user_details",
            json!({"user_id": "u5"}),
            json!({"id": "u5", "name": "Alicia Romero", "email": "alicia@example.com"}),
        );
        s.call(
            "get_user_details",
            json!({"user_id": "u3"}),
            json!({"id": "u3", "name": "Carol", "email": "carol@example.org"}),
        );
        s.call_asking(
            "confirm_send",
            json!({"to": "alice@example.com"}),
            &[(
                "elicitation/create",
                json!({"message": "Send?", "requestedSchema": {"type": "object"}}),
                json!({"action": "accept", "content": {"send": true}}),
            )],
            result_of(json!({"to": "alice@example.com", "action": "accept", "send": true})),
        );
        s.call_task(
            "research",
            json!({"topic": "Alice Anders"}),
            2,
            result_of(json!({"summary": "Likes tea."})),
        );
        s.call(
            "send_email",
            json!({"to": "alice@example.com", "subject": "Tea", "body": "Hi Alice Anders: Likes tea."}),
            json!({"message_id": "msg-000001", "status": "queued"}),
        );
        s.recording()
    }

    #[tokio::test]
    async fn a_session_becomes_a_proved_pipeline_in_one_call() {
        let w = write(vec![everything()], "tea", "tea.yml.cassette.json", None)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let loaded = load_str(&w.text);
        assert!(!loaded.has_errors(), "{}\n{:?}", w.text, loaded.diagnostics);
        let refs: Vec<(String, String, &str, String)> = w
            .draft
            .references()
            .into_iter()
            .map(|(s, a, r, t)| (s, a, r.name(), t))
            .collect();
        let has = |s: &str, a: &str, r: &str, t: &str| {
            refs.contains(&(s.to_owned(), a.to_owned(), r, t.to_owned()))
        };
        assert!(
            has(
                "confirm_send",
                "to",
                "exact",
                "${get_user_details[0].email}"
            ),
            "{refs:#?}"
        );
        assert!(
            has("research", "topic", "exact", "${get_user_details[0].name}"),
            "{refs:#?}"
        );
        assert!(
            has(
                "send_email",
                "body",
                "embedded",
                "Hi ${get_user_details[0].name}: ${research.summary}"
            ),
            "{refs:#?}"
        );
        let d = &w.draft;
        assert_eq!(d.steps.len(), 6);
        assert!(d.steps[1].for_each.is_some());
        assert_eq!(d.flagged(), 1);
        assert_eq!(d.steps[3].answers.len(), 1);
        assert!(d.steps[4].task);
        assert!(w.text.contains("task: true"), "{}", w.text);
        assert_eq!(w.proof.fallback, None);
        assert_eq!((w.proof.replays, w.proof.calls), (1, 7));
        assert!(w.cassette.calls.iter().any(|e| e.task.is_some()));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tea.yml");
        let tape = w.save(&file, false).unwrap();
        assert_eq!(tape, dir.path().join("tea.yml.cassette.json"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), w.text);
        assert!(Cassette::load(&tape).is_ok());
        let again = w.save(&file, false).unwrap_err();
        assert!(
            again.ends_with("exists; not overwritten (pass --force to replace it)"),
            "{again}"
        );
        assert!(w.save(&file, true).is_ok());
        let summary = w.summary().join("\n");
        for want in [
            "7 call(s) → 6 node(s)",
            "references: exact ",
            "for_each: 1 node(s) over an earlier list",
            "inputs: QUERY, SUBJECT",
            "flagged (look made by a server, no earlier result holds them): get_user_details_2.user_id",
            "answers: 1 node(s) keep the agent's replies",
            "proved: replayed offline 1 time(s), 7 call(s)",
            "served as one tool it saves an agent 7 → 1 calls",
        ] {
            assert!(summary.contains(want), "missing {want:?} in\n{summary}");
        }
    }

    fn small_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            (-3i64..300).prop_map(serde_json::Value::from),
            prop_oneof![
                Just("u1"),
                Just("alice@example.com"),
                Just("Alice Anders"),
                Just("ALICE@EXAMPLE.COM"),
                Just("Alice%20Anders"),
                Just("see u1 here"),
                Just("${x}"),
                Just("usr_8f2a91"),
                Just("a"),
                Just("{\"id\": \"u1\"}"),
                Just("$"),
                Just("x$${y}"),
            ]
            .prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 20, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map("[a-z_]{1,5}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever was recorded, writing a pipeline from it does not
        /// panic, and what it writes loads without errors and was proved.
        #[test]
        fn any_session_is_written_and_proved_or_refused_in_words(
            calls in proptest::collection::vec(
                (proptest::prelude::prop_oneof![proptest::prelude::Just("a"), proptest::prelude::Just("b")], small_json(), small_json()),
                0..6,
            )
        ) {
            let mut s = Script::new("2025-11-25", Vec::new());
            for (t, args, out) in calls {
                let args = if args.is_object() { args } else { json!({"v": args}) };
                match out {
                    serde_json::Value::String(text) => s.call_raw(t, args, crate::record::testing::text_result(&text)),
                    other => s.call(t, args, other),
                }
            }
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            match rt.block_on(write(vec![s.recording()], "p", "p.yml.cassette.json", None)) {
                Ok(w) => {
                    let loaded = load_str(&w.text);
                    proptest::prop_assert!(!loaded.has_errors(), "{}\n{:?}", w.text, loaded.diagnostics);
                    proptest::prop_assert!(w.proof.replays >= 1);
                }
                Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
