//! The questions of a durable run (see
//! [`durable::ask`](pipewright_engine::run::durable::ask)): each new one is
//! journaled, listed in the workflow's state for `runs answer` to find, and
//! waits on a durable promise that the workflow's `answer` handler
//! resolves. A worker that takes the run over reads the questions back
//! from the journal and waits on the same promises, so a question asked
//! before a crash is answered after it.

use std::collections::{HashMap, VecDeque};

use restate_sdk::context::{DurableFuture, DurableFuturesUnordered};
use restate_sdk::prelude::*;
use tokio::sync::oneshot;

use pipewright_engine::mcp::human::{Answer, Reply, Source};
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::durable::ask::{AskRequest, Asked, Given, MAX_QUESTIONS};
use pipewright_engine::run::exec::now_rfc3339;

/// The workflow state key listing every question the run asked.
pub const STATE: &str = "questions";

/// The promise names, `q0` … : a promise's name must live as long as the
/// workflow's context, so they are made once per execution.
pub fn names() -> Vec<String> {
    (0..MAX_QUESTIONS).map(|i| format!("q{i}")).collect()
}

/// The durable promise a question's answer resolves.
pub fn promise<'c>(
    ctx: &'c WorkflowContext<'c>,
    name: &'c str,
) -> impl DurableFuture<Output = Result<Json<Given>, TerminalError>> + Send + 'c {
    ctx.promise::<Json<Given>>(name)
}

/// The questions of one execution of a run; `P` is the type of
/// [`promise`].
///
/// The promises are awaited through Restate's own select
/// ([`DurableFuturesUnordered`]), made afresh at every wait: a Restate
/// future left waiting for input while another one (a journal write)
/// reads that input would never see its notification, and a
/// `futures::FuturesUnordered` would never poll it again.
pub(crate) struct Questions<'c, P> {
    ctx: &'c WorkflowContext<'c>,
    names: &'c [String],
    promise: fn(&'c WorkflowContext<'c>, &'c str) -> P,
    worker: String,
    /// Every question journaled, in journal order (index = promise).
    asked: Vec<Asked>,
    by_key: HashMap<String, usize>,
    answers: HashMap<usize, Answer>,
    /// The promises of the questions that wait; `slots` says which
    /// question each one answers, by its index in `waiting`.
    waiting: DurableFuturesUnordered<P>,
    slots: Vec<usize>,
    /// Who waits for each question's answer.
    waiters: HashMap<usize, Vec<oneshot::Sender<Answer>>>,
    /// Asked, not yet journaled, in the order they will be.
    fresh: VecDeque<Asked>,
}

impl<'c, P> Questions<'c, P>
where
    P: DurableFuture<Output = Result<Json<Given>, TerminalError>> + Send,
{
    pub fn new(
        ctx: &'c WorkflowContext<'c>,
        names: &'c [String],
        promise: fn(&'c WorkflowContext<'c>, &'c str) -> P,
        worker: String,
    ) -> Self {
        Questions {
            ctx,
            names,
            promise,
            worker,
            asked: Vec::new(),
            by_key: HashMap::new(),
            answers: HashMap::new(),
            waiting: DurableFuturesUnordered::new(),
            slots: Vec::new(),
            waiters: HashMap::new(),
            fresh: VecDeque::new(),
        }
    }

    /// A question is in the journal (read back, or just written): it is
    /// listed in the state and its promise awaited. Called in journal
    /// order, right after the entry, so a resumed execution issues the same
    /// commands at the same places.
    pub fn journaled(&mut self, q: Asked) {
        let at = self.asked.len();
        let Some(name) = self.names.get(at) else {
            return;
        };
        self.by_key.insert(q.key.clone(), at);
        self.asked.push(q);
        self.ctx.set(STATE, Json(self.asked.clone()));
        let slot = self.waiting.push((self.promise)(self.ctx, name));
        debug_assert_eq!(slot, self.slots.len());
        self.slots.push(at);
    }

    /// A call asks: answered at once when the journal holds the answer,
    /// else it waits, and a question the journal does not hold yet is
    /// queued to be written ([`next_fresh`](Self::next_fresh)).
    pub fn ask(&mut self, req: AskRequest, redactor: &Redactor) {
        if let Some(&at) = self.by_key.get(&req.key) {
            match self.answers.get(&at) {
                Some(a) => {
                    let _ = req.reply.send(a.clone());
                }
                None => self.waiters.entry(at).or_default().push(req.reply),
            }
            return;
        }
        let at = self.asked.len() + self.fresh.len();
        let Some(id) = self.names.get(at) else {
            let _ = req.reply.send(Answer {
                reply: Reply::Cancel,
                by: Source::Nobody,
                error: Some(format!(
                    "the run asked {MAX_QUESTIONS} questions already; no more are kept"
                )),
            });
            return;
        };
        let q = &req.question;
        self.fresh.push_back(Asked {
            id: id.clone(),
            key: req.key,
            node: q.node.clone(),
            server: q.server.clone(),
            kind: q.ask.kind().to_owned(),
            request: redactor.json(&q.ask.request_json().into()).into_value(),
            worker: self.worker.clone(),
            at: now_rfc3339(),
        });
        self.waiters.entry(at).or_default().push(req.reply);
    }

    /// The next question to write into the journal.
    pub fn next_fresh(&mut self) -> Option<Asked> {
        self.fresh.pop_front()
    }

    /// Puts back a question whose write did not happen.
    pub fn unwritten(&mut self, q: Asked) {
        self.fresh.push_front(q);
    }

    /// True while a question waits for its answer.
    pub fn waits(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Waits for the next answer and hands it to the calls waiting for it;
    /// true when the run was cancelled meanwhile (every waiting question
    /// is then answered `cancel`). Dropped before it ends, it loses
    /// nothing: the next wait asks Restate afresh.
    pub async fn answered(&mut self) -> bool {
        let (at, answer) = match self.waiting.next().await {
            Ok(None) => return false,
            Ok(Some((slot, got))) => {
                let at = self.slots[slot];
                let answer = match got {
                    Ok(Json(given)) => match given.check(&self.asked[at]) {
                        Ok(reply) => Answer::new(reply, given.by),
                        Err(e) => Answer {
                            reply: Reply::Cancel,
                            by: given.by,
                            error: Some(e),
                        },
                    },
                    Err(e) => Answer {
                        reply: Reply::Cancel,
                        by: Source::Nobody,
                        error: Some(format!("the question got no answer: {}", e.message())),
                    },
                };
                (at, answer)
            }
            // Restate's select fails only when the run is cancelled: no
            // question of it will be answered.
            Err(_) => {
                let answer = Answer {
                    reply: Reply::Cancel,
                    by: Source::Nobody,
                    error: Some("the run was cancelled while the question waited".to_owned()),
                };
                self.waiting = DurableFuturesUnordered::new();
                for at in std::mem::take(&mut self.slots) {
                    if !self.answers.contains_key(&at) {
                        self.settle(at, answer.clone());
                    }
                }
                return true;
            }
        };
        self.settle(at, answer);
        false
    }

    /// Gives a question's answer to the calls waiting for it, and to those
    /// that will ask it again.
    fn settle(&mut self, at: usize, answer: Answer) {
        for w in self.waiters.remove(&at).unwrap_or_default() {
            let _ = w.send(answer.clone());
        }
        self.answers.insert(at, answer);
    }
}

/// What the workflow's `questions` handler returns: the questions that
/// wait for an answer.
pub async fn pending(ctx: &SharedWorkflowContext<'_>) -> Result<Vec<Asked>, HandlerError> {
    let asked: Vec<Asked> = ctx
        .get::<Json<Vec<Asked>>>(STATE)
        .await?
        .map(|j| j.into_inner())
        .unwrap_or_default();
    let mut out = Vec::new();
    for q in asked {
        let name = q.id.clone();
        let given = peek(ctx, &name).await?;
        if given.is_none() {
            out.push(q);
        }
    }
    Ok(out)
}

async fn peek(ctx: &SharedWorkflowContext<'_>, name: &str) -> Result<Option<Given>, HandlerError> {
    Ok(ctx
        .peek_promise::<Json<Given>>(name)
        .await?
        .map(|j| j.into_inner()))
}

/// What the workflow's `answer` handler takes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AnswerRequest {
    /// The question's id (`q0`…).
    pub question: String,
    pub answer: Given,
}

/// The `answer` handler: checks the answer against its question and
/// resolves the question's promise; a terminal error (400) says why not.
pub async fn answer(
    ctx: &SharedWorkflowContext<'_>,
    req: AnswerRequest,
) -> Result<(), HandlerError> {
    let asked: Vec<Asked> = ctx
        .get::<Json<Vec<Asked>>>(STATE)
        .await?
        .map(|j| j.into_inner())
        .unwrap_or_default();
    let refuse = |m: String| -> HandlerError { TerminalError::new_with_code(400, m).into() };
    let Some(q) = asked.iter().find(|q| q.id == req.question) else {
        return Err(refuse(format!(
            "the run asked no question `{}`",
            req.question
        )));
    };
    if peek(ctx, &q.id).await?.is_some() {
        return Err(refuse(format!("question `{}` was answered already", q.id)));
    }
    req.answer.check(q).map_err(refuse)?;
    ctx.resolve_promise(&q.id, Json(req.answer));
    Ok(())
}
