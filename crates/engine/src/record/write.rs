//! The whole of `new --from` short of the files: recordings in, the
//! proved pipeline's text, its cassette, what was inferred and what
//! serving it saves out. A driver writes the two files and prints the
//! summary; a test goes from a session file to a checked, replayable
//! pipeline in one call.

use super::calls::Recording;
use super::draft::{Choice, Draft};
use super::emit;
use super::merge::{self, MergeError};
use super::prove::{self, Proof, ProveError};
use super::savings::{self, Savings};
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
/// `cassette` is the name the file's header gives its cassette.
pub async fn write(
    recs: Vec<Recording>,
    name: &str,
    cassette: &str,
) -> Result<Written, WriteError> {
    let (mut draft, recordings) = merge::draft(recs, name)?;
    let proof = prove::prove(&mut draft, &recordings).await?;
    let text = emit::pipeline(&draft, cassette);
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

impl Written {
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
