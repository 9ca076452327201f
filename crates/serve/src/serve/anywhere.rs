//! A 2026-07-28 agent's questions of a durable run (`serve --on`),
//! answered at any instance of the fleet: the input-required result's
//! `requestState` names the run in Restate and the ids of its questions
//! (see [`super::seal`]) and nothing is parked in this process. The
//! instance the answers reach, this one or another holding the same key,
//! reads the questions back from the run, checks the answers against
//! them, resolves their promises in Restate, and follows the run to its
//! next questions or its end, which answer that call.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, ErrorData, InputResponses};
use rmcp::service::RequestContext;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::{Asked, Can, reply_of};
use super::exec::ToAgent;
use super::handler::PipelineServer;
use super::parked::{DURABLE_HERE, GONE, Live, MAX_PARKED, PARK_TTL, Parking};
use super::seal::{Durable, Sealer};
use pipewright_engine::mcp::human::{Reply, Source};
use pipewright_engine::run::durable::ask::Given;
use pipewright_engine::run::durable::client;

impl PipelineServer {
    /// Seals and opens `requestState`s with the fleet's keys
    /// (`--state-key-file`), so any instance opens any instance's state.
    pub(super) fn with_sealer(mut self, sealer: Sealer) -> Self {
        self.parked = Arc::new(Parking::with_sealer(sealer, PARK_TTL, MAX_PARKED));
        self
    }

    /// When `asked` are a durable run's questions: the input-required
    /// result naming them, the run left waiting in Restate (this
    /// instance stops following it; after the parking time, what is
    /// still unanswered is answered `cancel`).
    pub(super) fn park_durable(
        &self,
        tool: &str,
        live: &Live,
        asked: &[(String, Asked)],
    ) -> Option<String> {
        let mut run = None;
        let mut questions = Vec::new();
        for (_, a) in asked {
            let (r, q) = a.durable.as_ref()?;
            if run.is_some_and(|run: &String| run != r) {
                return None;
            }
            run = Some(r);
            questions.push(q.clone());
        }
        let run = run?.clone();
        let state = self.parked.seal_durable(&run, &questions, tool);
        live.run.abort();
        self.expire_durable(tool.to_owned(), run, questions);
        Some(state)
    }

    /// A call again with the answers to a durable run's questions, at
    /// whichever instance it reached: each answer checked against its
    /// question as Restate holds it and given there; then the run's next
    /// questions or its result.
    pub(super) async fn resume_durable(
        &self,
        tool: &str,
        sealed: Durable,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let invalid = |e: String| ErrorData::invalid_params(e, None);
        let Some(remote) = self.remote.clone() else {
            return Err(invalid(DURABLE_HERE.to_owned()));
        };
        let r = &remote.restate;
        let waiting = client::questions(r, &sealed.run).await.map_err(|(_, e)| {
            ErrorData::internal_error(
                format!("the run's questions cannot be read from Restate: {e}"),
                None,
            )
        })?;
        let responses = responses.unwrap_or_default();
        let mut given = Vec::new();
        for (i, id) in sealed.questions.iter().enumerate() {
            let q = waiting
                .iter()
                .find(|q| &q.id == id)
                .ok_or_else(|| invalid(GONE.to_owned()))?;
            let key = format!("q{}", i + 1);
            let answer = responses
                .get(&key)
                .ok_or_else(|| invalid(format!("`inputResponses` has no answer to `{key}`")))?;
            let reply = reply_of(&q.ask(), answer)
                .map_err(|e| invalid(format!("`inputResponses.{key}`: {e}")))?;
            let g = Given::of(&reply, Source::Agent);
            // Checked here against the form as the worker will check it,
            // so that no answer of the round is given when one would be
            // refused.
            g.check(q)
                .map_err(|e| invalid(format!("`inputResponses.{key}`: {e}")))?;
            given.push((id.clone(), g));
        }
        for (id, g) in &given {
            client::answer(r, &sealed.run, id, g)
                .await
                .map_err(|(_, e)| {
                    if e.contains("answered already") {
                        invalid(GONE.to_owned())
                    } else {
                        invalid(format!("the answer to `{id}` was refused: {e}"))
                    }
                })?;
        }
        // Follow the run: the questions it asks from now on, and those
        // still waiting that this call did not answer, go to the agent.
        let answered: HashSet<String> = sealed.questions.iter().cloned().collect();
        let known: HashSet<String> = waiting.iter().map(|q| q.id.clone()).collect();
        let newest = waiting.iter().filter_map(|q| rank(&q.id)).max();
        let fresh = move |id: &str| {
            !answered.contains(id)
                && (known.contains(id) || rank(id).is_some_and(|n| Some(n) > newest))
        };
        let (tx, questions) = mpsc::channel(16);
        let agent = ToAgent {
            can: Can::of(context.client_capabilities().as_ref()),
            tx,
        };
        let cancel = CancellationToken::new();
        let run = {
            let (r, id, cancel) = (r.clone(), sealed.run.clone(), cancel.clone());
            tokio::spawn(async move {
                let over = CancellationToken::new();
                let ended = over.clone();
                let mut on_question =
                    move |id: &str, q: pipewright_engine::run::durable::ask::Asked| {
                        if fresh(&q.id) {
                            agent.forward(&r, id, q, &over);
                        }
                    };
                let got = client::follow(
                    &remote.restate,
                    &id,
                    None,
                    &cancel,
                    &mut |_| {},
                    &mut |_| Box::pin(async {}),
                    &mut on_question,
                )
                .await;
                ended.cancel();
                got
            })
        };
        let mut live = Live::new(questions, run, cancel);
        live.id = sealed.run;
        self.drive(tool, live, context).await
    }

    /// After the parking time, questions `questions` of durable run `run`
    /// still waiting are answered `cancel` (the agent let its state
    /// expire); the run then ends as its nodes decide, and this instance
    /// saves it.
    fn expire_durable(&self, tool: String, run: String, questions: Vec<String>) {
        let Some(remote) = self.remote.clone() else {
            return;
        };
        let server = self.clone();
        let ttl = self.parked.ttl();
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            let r = &remote.restate;
            let Ok(waiting) = client::questions(r, &run).await else {
                return;
            };
            let cancel = Given::of(&Reply::Cancel, Source::Nobody);
            let mut expired = false;
            for id in questions
                .iter()
                .filter(|id| waiting.iter().any(|q| &&q.id == id))
            {
                expired |= client::answer(r, &run, id, &cancel).await.is_ok();
            }
            if expired {
                let trace = client::follow(
                    r,
                    &run,
                    None,
                    &CancellationToken::new(),
                    &mut |_| {},
                    &mut |_| Box::pin(async {}),
                    &mut |_, _| {},
                )
                .await;
                server.answer_run(&tool, trace);
            }
        });
    }
}

/// The rank of question id `q<N>`.
fn rank(id: &str) -> Option<u64> {
    id.strip_prefix('q')?.parse().ok()
}
