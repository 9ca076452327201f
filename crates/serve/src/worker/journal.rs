//! The `Pipewright` workflow: one durable run, its calls journaled.
//!
//! An execution first reads the journal back: it appends an attempt entry
//! with a fresh nonce and reads entries until that entry comes back (a
//! journaled step returns what an earlier execution recorded, and runs its
//! closure only past the end of the journal). Then the session runs; each
//! call's outcome is sent here, appended in a batch with the others that
//! ended meanwhile, and acknowledged once Restate has kept it. Only this
//! loop touches the journal, one append at a time, so a resumed execution
//! never depends on the order in which concurrent calls ended.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use restate_sdk::context::DurableFuturesUnordered;
use restate_sdk::endpoint::ServiceOptions;
use restate_sdk::prelude::*;
use restate_sdk::service::{IntoServiceDefinition, ServiceDefinition};
use tokio::sync::{mpsc, oneshot};

use super::questions::{self, Questions};
use super::shared::Shared;
use pipewright_engine::run::durable::ask::{AskRequest, Asked};
use pipewright_engine::run::durable::client::{RunOutput, RunRequest};
use pipewright_engine::run::durable::{
    Attempt, DurableCaller, Entry, Opened, Pending, Recorded, Replay,
};
use pipewright_engine::run::events::Event;
use pipewright_engine::run::exec::now_rfc3339;
use pipewright_engine::run::session::{self, Command};
use pipewright_engine::run::trace::{Durable, Trace};

/// The workflow; Restate names it after the struct.
pub(crate) struct Pipewright(Arc<Shared>);

/// The service with its options: retried quickly after a worker dies,
/// never asked to suspend while a slow call runs (a run waits on its
/// servers, not on Restate, so it cannot suspend).
pub(crate) fn definition(shared: Arc<Shared>) -> ServiceDefinition {
    let options = ServiceOptions::new()
        .inactivity_timeout(Duration::from_secs(24 * 3600))
        .abort_timeout(Duration::from_secs(60))
        .retry_policy_initial_interval(Duration::from_millis(200))
        .retry_policy_exponentiation_factor(2.0)
        .retry_policy_max_interval(Duration::from_secs(5));
    Pipewright(shared)
        .into_service_definition()
        .options(options)
}

#[restate_sdk::workflow]
impl Pipewright {
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        Json(req): Json<RunRequest>,
    ) -> Result<Json<RunOutput>, HandlerError> {
        let worker = self.0.name.clone();
        // A Restate future nobody completes: awaiting it is how this
        // execution hears that the run was cancelled while a call is in
        // flight (no journaled step is awaited then). An awakeable writes
        // nothing to the journal, so a resumed execution replays the same
        // steps; made first, so every execution numbers its awakeables
        // alike. Awaited, like the questions' promises, through Restate's
        // select made afresh at each wait (see questions.rs): a Restate
        // future left waiting while a journal write read the input would
        // not hear what that input brought.
        let (_, stop) = ctx.awakeable::<()>();
        let mut stop: DurableFuturesUnordered<_> = std::iter::once(stop).collect();
        let mut watching = true;
        let nonce = nonce();
        let mut replay = Replay::default();
        let mut cancelled = false;
        // Questions (see questions.rs): read back in journal order with the
        // rest, and awaited on their promises.
        let names = questions::names();
        let mut questions = Questions::new(&ctx, &names, questions::promise, worker.clone());
        loop {
            let mine = Entry::Attempt(Attempt {
                nonce: nonce.clone(),
                worker: worker.clone(),
                at: now_rfc3339(),
                calls: 0,
                replayed_calls: 0,
                last_at: None,
            });
            let read = ctx
                .run(|| async move { Ok(Json(mine)) })
                .name("journal")
                .await;
            let Json(entry): Json<Entry> = match read {
                Ok(e) => e,
                // Cancelled (while no worker held the run, say): the run
                // replays what the journal holds, then stops at its first
                // new call and compensates everything it had done.
                Err(e) if is_cancel(&e) => {
                    cancelled = true;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let last = matches!(&entry, Entry::Attempt(a) if a.nonce == nonce);
            if let Entry::Question { question } = &entry {
                questions.journaled(question.clone());
            }
            replay.push(entry);
            if last {
                break;
            }
        }
        let job = match self.0.job(&req) {
            Ok(job) => job,
            // A run this worker cannot take: refused for good when it is
            // new; when another worker began it (an upgrade in progress, a
            // file that differs), left for Restate to retry elsewhere.
            Err(e) if replay.attempts.len() > 1 => return Err(HandlerError::from(e)),
            Err(e) => return Err(TerminalError::new_with_code(400, e).into()),
        };
        let mut attempts = replay.attempts.clone();
        let (tx, mut rx) = mpsc::unbounded_channel::<Pending>();
        let (asks, mut asked) = mpsc::unbounded_channel::<AskRequest>();
        // Calls made live, journaled with the next entry so a client that
        // follows the run shows them in flight.
        let (opens, mut opening) = mpsc::unbounded_channel::<Opened>();
        let caller = Arc::new(
            DurableCaller::new(
                job.caller.clone(),
                worker.clone(),
                replay,
                tx,
                job.redactor.clone(),
            )
            .with_questions(asks)
            .with_opens(opens),
        );
        let redactor = job.redactor.clone();
        let mut s = session::start(job.comp.clone(), caller.clone(), job.cfg, job.redactor);
        // Whatever ends this handler (a lost stream, a journal error, a
        // suspension), the session must not go on calling servers nor
        // compensate on its own: Restate will run the run again.
        let _held = Held {
            caller: caller.clone(),
            session: s.task.abort_handle(),
        };
        s.handle.send(Command::Run);
        let missed = caller.missed();
        if cancelled {
            caller.cancel_at_first_miss();
        }

        type Append<'a> =
            Pin<Box<dyn Future<Output = Result<Json<Entry>, TerminalError>> + Send + 'a>>;
        let mut queued: Vec<Pending> = Vec::new();
        let mut opened: Vec<Opened> = Vec::new();
        type Batch = Vec<Option<Recorded>>;
        // A write in flight: the calls it keeps, who waits for them and how
        // many calls this execution had replayed when it was made; or the
        // question it journals.
        type Writing<'a> = (
            Append<'a>,
            Batch,
            Vec<oneshot::Sender<()>>,
            usize,
            Option<Asked>,
        );
        let mut writing: Option<Writing<'_>> = None;
        let mut written = 0usize;
        // How many replayed calls the journal says this execution made.
        let mut told = 0usize;
        let trace: Trace = loop {
            tokio::select! {
                Some(p) = rx.recv() => queued.push(p),
                Some(o) = opening.recv() => opened.push(o),
                Some(a) = asked.recv() => questions.ask(a, &redactor),
                // Like every Restate future here, awaited only while no
                // other one is (no append in flight).
                stop = questions.answered(), if questions.waits() && writing.is_none() => {
                    if stop {
                        s.handle.send(Command::Cancel);
                    }
                }
                r = async {
                    match writing.as_mut() {
                        Some(w) => w.0.as_mut().await,
                        None => std::future::pending().await,
                    }
                }, if writing.is_some() => {
                    let Some((_, batch, dones, replayed, question)) = writing.take() else {
                        continue;
                    };
                    match (r, question) {
                        // Listed and awaited right after its entry, before
                        // anything else is written.
                        (Ok(_), Some(q)) => questions.journaled(q),
                        (Err(e), Some(q)) if is_cancel(&e) => {
                            questions.unwritten(q);
                            s.handle.send(Command::Cancel);
                        }
                        (Err(e), Some(_)) => return Err(e.into()),
                        (Ok(_), None) => {
                            written += batch.iter().flatten().count();
                            told = replayed;
                            for d in dones {
                                let _ = d.send(());
                            }
                        }
                        // Restate cancelled the run: nothing was written;
                        // the outcomes go into the next append, and the
                        // session stops and compensates (its undo calls are
                        // journaled like any other).
                        (Err(e), None) if is_cancel(&e) => {
                            cancelled = false;
                            s.handle.send(Command::Cancel);
                            queued.splice(0..0, batch.into_iter().zip(dones).map(|(recorded, done)| Pending { recorded, done }));
                        }
                        (Err(e), None) => return Err(e.into()),
                    }
                }
                // Polled only while no append is: two of Restate's futures
                // awaited at once would each read the other's input.
                r = stop.next(), if watching && writing.is_none() && !questions.waits() => {
                    watching = false;
                    // Restate's select fails only when the run is cancelled.
                    if r.is_err() || matches!(r, Ok(Some((_, Err(ref e)))) if is_cancel(e)) {
                        cancelled = false;
                        s.handle.send(Command::Cancel);
                    }
                }
                () = missed.notified(), if cancelled => {
                    cancelled = false;
                    s.handle.send(Command::Cancel);
                }
                ev = s.events.recv() => match ev {
                    Some(Event::RunFinished { trace, .. }) => break *trace,
                    Some(_) => {}
                    None => {
                        let from_task = s.task.await.ok().flatten();
                        match from_task {
                            Some(t) => break t,
                            None => return Err(TerminalError::new("the run ended without a trace").into()),
                        }
                    }
                },
            }
            if writing.is_none()
                && let Some(q) = questions.next_fresh()
            {
                let entry = Entry::Question {
                    question: q.clone(),
                };
                let append = ctx.run(|| async move { Ok(Json(entry)) }).name("journal");
                writing = Some((Box::pin(append), Vec::new(), Vec::new(), told, Some(q)));
            }
            if writing.is_none() && !(queued.is_empty() && opened.is_empty()) {
                let (batch, dones): (Batch, Vec<oneshot::Sender<()>>) = std::mem::take(&mut queued)
                    .into_iter()
                    .map(|p| (p.recorded, p.done))
                    .unzip();
                let replayed = caller.answered();
                let entry = Entry::Calls {
                    calls: batch.iter().flatten().cloned().collect(),
                    opened: std::mem::take(&mut opened),
                    replayed: (replayed > told).then_some(replayed),
                };
                let append = ctx.run(|| async move { Ok(Json(entry)) }).name("journal");
                writing = Some((Box::pin(append), batch, dones, replayed, None));
            }
        };
        if let Some(me) = attempts.last_mut() {
            me.calls = written;
            me.replayed_calls = caller.answered();
        }
        let mut trace = trace;
        caller.restore_times(&mut trace, attempts.first().map(|a| a.at.as_str()));
        trace.durable = Some(Durable {
            restate: String::new(),
            run: ctx.key().to_owned(),
            attempts,
        });
        Ok(Json(RunOutput { trace }))
    }

    /// The run's questions that wait for an answer (`runs answer`).
    #[handler]
    async fn questions(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> Result<Json<Vec<Asked>>, HandlerError> {
        questions::pending(&ctx).await.map(Json)
    }

    /// Answers one of the run's questions (`runs answer`).
    #[handler]
    async fn answer(
        &self,
        ctx: SharedWorkflowContext<'_>,
        Json(req): Json<questions::AnswerRequest>,
    ) -> Result<(), HandlerError> {
        questions::answer(&ctx, req).await
    }
}

/// Stops a run's session when its handler ends, however it ends.
struct Held {
    caller: Arc<DurableCaller>,
    session: tokio::task::AbortHandle,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.caller.halt();
        self.session.abort();
    }
}

/// Restate's answer to a journaled step of a cancelled invocation.
fn is_cancel(e: &TerminalError) -> bool {
    e.code() == 409
}

/// A value no other execution will pick.
fn nonce() -> String {
    use pipewright_engine::random::number;
    format!("{:016x}{:016x}", number(), number())
}
