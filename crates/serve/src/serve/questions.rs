//! A served composition's questions, carried to the agent that called it
//! (see [`super::agent`]):
//!
//! - a 2025-11-25 (or older) session whose client declared `elicitation`
//!   or `sampling` gets an `elicitation/create` or `sampling/createMessage`
//!   request from `serve` while its call runs (over HTTP, on the call's
//!   SSE stream), and its result goes to the upstream server;
//! - a 2026-07-28 request gets an input-required result (SEP-2322): the
//!   questions as `inputRequests` and a sealed `requestState`; the run
//!   waits parked ([`super::parked`]) until the agent calls the tool again
//!   with `inputResponses` and that state, and the result (or the next
//!   questions) answers that later call;
//! - otherwise the node's answerers answer, as before: they decline.

use std::sync::Arc;

use futures::StreamExt as _;
use futures::stream::FuturesUnordered;
use rmcp::model::{
    CallToolResponse, ErrorData, InputRequiredResult, InputResponses, ProtocolVersion,
    ServerRequest,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{RoleServer, model::CallToolResult};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::{AgentResponder, Asked, Can, reply_of, request_of};
use super::exec::{Hooks, Job, ToAgent, run_job};
use super::handler::PipelineServer;
use super::logging::Level;
use super::parked::{Live, Parked};
use super::seal::State;
use pipewright_engine::mcp::human::{Answer, Ask, Human, Reply, Source};
use pipewright_engine::run::trace::Trace;

/// The most questions returned in one input-required result; more wait
/// for the next round.
const MAX_AT_ONCE: usize = 16;

impl PipelineServer {
    /// Runs one call of a served composition (the call that starts it),
    /// its nodes' questions going to the calling agent when it can answer.
    pub(super) async fn call_job(
        &self,
        tool: &str,
        mut job: Job,
        context: &RequestContext<RoleServer>,
        level: Option<Level>,
    ) -> Result<CallToolResponse, ErrorData> {
        let can = Can::of(context.client_capabilities().as_ref());
        if !can.any() {
            let trace = run_job(job, Hooks::of_request(context, level)).await;
            return Ok(self.answer_run(tool, trace).into());
        }
        let questions = match job.remote.as_mut() {
            // `serve --on`: the run's questions are read from its journal
            // and answered through Restate.
            Some(rj) => {
                let (tx, questions) = mpsc::channel(16);
                rj.agent = Some(ToAgent { can, tx });
                questions
            }
            None => {
                let (responder, questions) = AgentResponder::new(can, job.cfg.human.0.clone());
                job.cfg.human = Human(Some(Arc::new(responder)));
                questions
            }
        };
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if !modern {
            return Ok(self
                .ask_on_session(job, questions, context, level)
                .await
                .into());
        }
        // The run outlives this request when it asks: it has its own
        // cancellation, which this request's cancels while it waits.
        let cancel = CancellationToken::new();
        let mut hooks = Hooks::of_request(context, level);
        hooks.cancel = cancel.clone();
        let run = tokio::spawn(run_job(job, hooks));
        self.drive(tool, Live::new(questions, run, cancel), context)
            .await
    }

    /// A call again with `inputResponses` and the `requestState` an
    /// input-required result gave: the answers go to the parked run, which
    /// goes on. A state not sealed here for this tool, expired or used
    /// already, or an answer that does not fit its question, is an
    /// invalid-params error (a bad answer leaves the run waiting).
    pub(super) async fn resume(
        &self,
        tool: &str,
        state: Option<String>,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(state) = state else {
            return Err(ErrorData::invalid_params(
                "`inputResponses` came without the `requestState` they answer",
                None,
            ));
        };
        if let Ok(State::Durable(sealed)) = self.parked.open(&state, tool) {
            return self.resume_durable(tool, sealed, responses, context).await;
        }
        let responses = responses.unwrap_or_default();
        let (parked, answers) = self
            .parked
            .take(&state, tool, |asked| {
                asked
                    .iter()
                    .map(|(key, a)| {
                        let given = responses
                            .get(key)
                            .ok_or_else(|| format!("`inputResponses` has no answer to `{key}`"))?;
                        reply_of(&a.question.ask, given)
                            .map(|r| Answer::new(r, Source::Agent))
                            .map_err(|e| format!("`inputResponses.{key}`: {e}"))
                    })
                    .collect::<Result<Vec<Answer>, String>>()
            })
            .map_err(|e| ErrorData::invalid_params(e, None))?;
        let Parked { live, asked, .. } = parked;
        for ((_, a), answer) in asked.into_iter().zip(answers) {
            let _ = a.reply.send(answer);
        }
        self.drive(tool, live, context).await
    }

    /// Waits for the run's end or its next questions: the tool's result,
    /// or the questions as an input-required result with the run parked.
    /// This request being cancelled cancels the run.
    pub(super) async fn drive(
        &self,
        tool: &str,
        mut live: Live,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        loop {
            let first = tokio::select! {
                done = &mut live.run => return Ok(self.finish(tool, done).into()),
                Some(asked) = live.questions.recv() => asked,
                () = context.ct.cancelled() => {
                    live.cancel.cancel();
                    let done = (&mut live.run).await;
                    return Ok(self.finish(tool, done).into());
                }
            };
            let mut asked = vec![first];
            while asked.len() < MAX_AT_ONCE
                && let Ok(more) = live.questions.try_recv()
            {
                asked.push(more);
            }
            let asked: Vec<(String, Asked)> = asked
                .into_iter()
                .enumerate()
                .map(|(i, a)| (format!("q{}", i + 1), a))
                .collect();
            let requests = asked
                .iter()
                .map(|(key, a)| (key.clone(), request_of(&a.question.ask)))
                .collect::<Map<String, Value>>();
            if let Some(state) = self.park_durable(tool, &live, &asked) {
                return input_required(requests, state);
            }
            let (id, round) = (live.id.clone(), live.round + 1);
            let parked = Parked {
                live,
                tool: tool.to_owned(),
                asked,
            };
            match self.parked.park(parked) {
                Ok(state) => {
                    self.expire_later(tool.to_owned(), id, round);
                    return input_required(requests, state);
                }
                Err(back) => {
                    let Parked { live: l, asked, .. } = *back;
                    for (_, a) in asked {
                        let _ = a.reply.send(Answer {
                            reply: Reply::Decline,
                            by: Source::Nobody,
                            error: Some(format!(
                                "declined: {} runs already wait for their agents' answers",
                                super::parked::MAX_PARKED
                            )),
                        });
                    }
                    live = l;
                }
            }
        }
    }

    /// After the parking time, a run still waiting on round `round` has
    /// its questions cancelled; it ends on its own and is saved.
    fn expire_later(&self, tool: String, id: String, round: u32) {
        let server = self.clone();
        let ttl = self.parked.ttl();
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            let Some(Parked { live, asked, .. }) = server.parked.expire(&id, round) else {
                return;
            };
            for (_, a) in asked {
                let _ = a.reply.send(Answer {
                    reply: Reply::Cancel,
                    by: Source::Nobody,
                    error: Some(format!(
                        "the agent did not answer within {} s",
                        ttl.as_secs()
                    )),
                });
            }
            let Live { questions, run, .. } = live;
            // Questions asked from now on go to the node's other answerers.
            drop(questions);
            server.finish(&tool, run.await);
        });
    }

    /// The result of a run that went on in the background (saved).
    fn finish(
        &self,
        tool: &str,
        done: Result<Result<Trace, String>, tokio::task::JoinError>,
    ) -> CallToolResult {
        self.answer_run(
            tool,
            done.unwrap_or_else(|e| Err(format!("the run stopped unexpectedly: {e}"))),
        )
    }

    /// Runs the job, sending each question to the agent on its session as
    /// it comes (several may wait at once) while the run goes on.
    async fn ask_on_session(
        &self,
        job: Job,
        mut questions: mpsc::Receiver<Asked>,
        context: &RequestContext<RoleServer>,
        level: Option<Level>,
    ) -> CallToolResult {
        // Sent from this request's own task, so rmcp delivers them on the
        // call's stream (it knows the originating request only here).
        let tool = job.tool.clone();
        let run = run_job(job, Hooks::of_request(context, level));
        tokio::pin!(run);
        let mut asking = FuturesUnordered::new();
        loop {
            tokio::select! {
                trace = &mut run => return self.answer_run(&tool, trace),
                Some(asked) = questions.recv() => asking.push(ask_peer(context.peer.clone(), asked)),
                Some(()) = asking.next(), if !asking.is_empty() => {}
            }
        }
    }
}

/// Asks the agent on its session and hands the answer on; gives up when
/// the node stops waiting.
async fn ask_peer(peer: Peer<RoleServer>, asked: Asked) {
    let Asked {
        question,
        mut reply,
        ..
    } = asked;
    let answer = tokio::select! {
        a = ask_agent(&peer, &question.ask) => a,
        () = reply.closed() => return,
    };
    let answer = match answer {
        Ok(r) => Answer::new(r, Source::Agent),
        Err(e) => Answer {
            reply: Reply::Cancel,
            by: Source::Agent,
            error: Some(e),
        },
    };
    let _ = reply.send(answer);
}

/// One request to the agent's client, and its result as a reply.
async fn ask_agent(peer: &Peer<RoleServer>, ask: &Ask) -> Result<Reply, String> {
    let request: ServerRequest = serde_json::from_value(request_of(ask))
        .map_err(|e| format!("the question cannot be sent to the agent: {e}"))?;
    let result = peer
        .send_request(request)
        .await
        .map_err(|e| format!("the agent's client did not answer: {e}"))?;
    let result = serde_json::to_value(&result)
        .map_err(|e| format!("the agent's answer cannot be read: {e}"))?;
    reply_of(ask, &result).map_err(|e| format!("the agent's answer was refused: {e}"))
}

/// The input-required result carrying `requests` and `state`.
fn input_required(
    requests: Map<String, Value>,
    state: String,
) -> Result<CallToolResponse, ErrorData> {
    let v = json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    });
    serde_json::from_value::<InputRequiredResult>(v)
        .map(CallToolResponse::from)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode the questions: {e}"), None))
}
