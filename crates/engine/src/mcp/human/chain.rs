//! The order in which a run's answerers are tried for each question.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Answer, Ask, Human, Question, Reply, Responder, Source, answers, provider};
use crate::file::model::Composition;

/// How a run answers: an entry of the answers file when one is left for
/// the node, else the person (terminal or workbench) when there is one,
/// else — for sampling — the provider, else decline.
#[derive(Default)]
pub struct Chain {
    pub answers: Option<answers::Answers>,
    pub person: Option<Arc<dyn Responder>>,
    pub provider: Option<provider::Provider>,
}

impl Chain {
    /// The responder of one run of `comp`: this chain with the nodes'
    /// `answers:` tried after the answers file's entries and before the
    /// person (fresh for each run, so every case row gets them all).
    pub fn for_run(chain: &Arc<Chain>, comp: &Composition) -> Human {
        let file = answers::Answers::of_nodes(comp);
        if file.is_empty() {
            return Human(Some(chain.clone()));
        }
        Human(Some(Arc::new(WithFile {
            chain: chain.clone(),
            file,
        })))
    }

    async fn answer(&self, question: &Question, file: Option<&answers::Answers>) -> Answer {
        if let Some(reply) = self
            .answers
            .as_ref()
            .and_then(|a| a.next(question.node.as_deref()))
        {
            return Answer::new(reply, Source::Answers);
        }
        if let Some(reply) = file.and_then(|a| a.next(question.node.as_deref())) {
            return Answer::new(reply, Source::Answers);
        }
        if let Some(person) = &self.person {
            return person.respond(question).await;
        }
        if let (Ask::Sample { request }, Some(p)) = (&question.ask, &self.provider) {
            return match p.complete(request).await {
                Ok((text, model)) => Answer::new(Reply::Sampled { text, model }, Source::Provider),
                Err(e) => Answer {
                    reply: Reply::Decline,
                    by: Source::Provider,
                    error: Some(e),
                },
            };
        }
        Answer::new(Reply::Decline, Source::Nobody)
    }
}

impl Responder for Chain {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(self.answer(question, None))
    }
}

/// A chain with the file's `answers:` of one run.
struct WithFile {
    chain: Arc<Chain>,
    file: answers::Answers,
}

impl Responder for WithFile {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(self.chain.answer(question, Some(&self.file)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Person;

    impl Responder for Person {
        fn respond<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, Answer> {
            Box::pin(async { Answer::new(Reply::Cancel, Source::Terminal) })
        }
    }

    fn question(node: &str) -> Question {
        Question {
            server: "demo".into(),
            node: Some(node.into()),
            candidates: Vec::new(),
            ask: Ask::Form {
                message: "?".into(),
                schema: json!({}),
            },
        }
    }

    /// `--answers` first, then the node's `answers:`, then the person; a
    /// second run gets the node's answers again.
    #[tokio::test]
    async fn the_files_answers_come_after_the_answers_file_and_before_the_person() {
        let loaded = crate::file::open::load_str(
            "pipe:\n  - id: ask\n    tool: confirm_send\n    answers: [decline, {accept: {send: true}}]\n",
        );
        let pipeline = loaded.pipeline.unwrap();
        let comp = &pipeline.compositions[0];
        let chain = Arc::new(Chain {
            answers: Some(answers::Answers::parse("ask:\n  - cancel\n").unwrap()),
            person: Some(Arc::new(Person)),
            provider: None,
        });
        let Human(Some(run)) = Chain::for_run(&chain, comp) else {
            panic!("a responder");
        };
        let q = question("ask");
        let got: Vec<(Reply, Source)> = {
            let mut out = Vec::new();
            for _ in 0..4 {
                let a = run.respond(&q).await;
                out.push((a.reply, a.by));
            }
            out
        };
        assert_eq!(
            got,
            [
                (Reply::Cancel, Source::Answers),
                (Reply::Decline, Source::Answers),
                (Reply::Accept(json!({"send": true})), Source::Answers),
                (Reply::Cancel, Source::Terminal),
            ]
        );
        let Human(Some(again)) = Chain::for_run(&chain, comp) else {
            panic!("a responder");
        };
        assert_eq!(again.respond(&q).await.reply, Reply::Decline);
    }
}
