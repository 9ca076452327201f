//! The order in which a run's answerers are tried for each question.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Answer, Ask, Question, Reply, Responder, Source, answers, provider};

/// How a run answers: an entry of the answers file when one is left for
/// the node, else the person (terminal or workbench) when there is one,
/// else — for sampling — the provider, else decline.
#[derive(Default)]
pub struct Chain {
    pub answers: Option<answers::Answers>,
    pub person: Option<Arc<dyn Responder>>,
    pub provider: Option<provider::Provider>,
}

impl Responder for Chain {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            if let Some(reply) = self
                .answers
                .as_ref()
                .and_then(|a| a.next(question.node.as_deref()))
            {
                return Answer::new(reply, Source::Answers);
            }
            if let Some(person) = &self.person {
                return person.respond(question).await;
            }
            if let (Ask::Sample { request }, Some(p)) = (&question.ask, &self.provider) {
                return match p.complete(request).await {
                    Ok((text, model)) => {
                        Answer::new(Reply::Sampled { text, model }, Source::Provider)
                    }
                    Err(e) => Answer {
                        reply: Reply::Decline,
                        by: Source::Provider,
                        error: Some(e),
                    },
                };
            }
            Answer::new(Reply::Decline, Source::Nobody)
        })
    }
}
