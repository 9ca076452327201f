//! Running one served composition in its own session, reporting to the
//! client that asked: progress as nodes end (or its task's status
//! message), log messages at its level, cancelled with its request (or its
//! task).

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use rmcp::task_manager::TaskContext;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::{Asked, Can};
use super::logging::RunLog;
use pipewright_engine::file::model::Composition;
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::durable::{ask, client};
use pipewright_engine::run::events::Event;
use pipewright_engine::run::session::{self, Command, SessionConfig};
use pipewright_engine::run::trace::{NodeStatus, Trace};

/// Whether the request's client declared the tasks extension (in its
/// `initialize` capabilities or the request's `_meta`).
pub fn wants_task(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// One composition run (a call's or a task's), with what it runs with.
pub struct Job {
    /// The served tool's name (its provenance is looked up by it).
    pub tool: String,
    pub comp: Arc<Composition>,
    pub caller: Arc<dyn Caller>,
    pub cfg: SessionConfig,
    pub redactor: Redactor,
    /// `serve --on restate://…`: the run goes there instead.
    pub remote: Option<RemoteJob>,
}

/// `serve --on restate://…`: the Restate that runs the calls, and the hash
/// of each served tool's file (a worker runs a composition only for a
/// client holding the same file).
pub struct Remote {
    pub restate: client::Restate,
    pub hashes: std::collections::HashMap<String, String>,
}

impl Remote {
    /// The request a call of tool `name` submits.
    pub fn request(
        &self,
        name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> client::RunRequest {
        client::RunRequest {
            tool: name.to_owned(),
            args: args.clone(),
            file_sha256: self.hashes.get(name).cloned().unwrap_or_default(),
        }
    }
}

/// One call's durable run.
pub struct RemoteJob {
    pub remote: Arc<Remote>,
    pub request: client::RunRequest,
    /// Where the run's questions go when the calling agent answers them.
    pub agent: Option<ToAgent>,
}

/// The calling agent, as the one who answers a durable run's questions:
/// what it said it answers, and who carries questions to it (see
/// [`super::questions`]).
#[derive(Clone)]
pub struct ToAgent {
    pub can: Can,
    pub tx: mpsc::Sender<Asked>,
}

impl ToAgent {
    /// Carries question `q` of durable run `id` to the agent when it
    /// answers questions of that kind, and its answer (recorded as the
    /// agent's, or `cancel` when it let the question expire) back to the
    /// run. A question the agent does not answer, or whose call ends
    /// first, keeps waiting in Restate for `pipewright runs answer`.
    pub(super) fn forward(
        &self,
        r: &client::Restate,
        id: &str,
        q: ask::Asked,
        over: &CancellationToken,
    ) {
        if !self.can.answers(&q.ask()) {
            return;
        }
        let tx = self.tx.clone();
        let durable = Some((id.to_owned(), q.id.clone()));
        let give = move |question, reply| -> BoxFuture<'static, bool> {
            Box::pin(async move {
                let asked = Asked {
                    question,
                    reply,
                    durable,
                };
                tx.send(asked).await.is_ok()
            })
        };
        client::relay(r, id, q, give, |_| true, over);
    }
}

/// Runs a job where it runs: in Restate (`--on`), else here; the trace,
/// or why there is none.
pub async fn run_job(job: Job, hooks: Hooks) -> Result<Trace, String> {
    let Some(rj) = job.remote else {
        return run(job.comp, job.caller, job.cfg, job.redactor, hooks)
            .await
            .ok_or_else(|| "the run ended without a trace".to_owned());
    };
    // Progress counts journaled calls: retries, iterations and undo calls
    // each count, so there is no total.
    let mut done = 0usize;
    let peer = hooks.peer.clone();
    let progress = hooks.progress.clone();
    let (task, name) = (hooks.task.clone(), job.comp.name.clone());
    let mut on_call =
        move |c: pipewright_engine::run::durable::Recorded| -> futures::future::BoxFuture<'static, ()> {
            done += 1;
            if let Some(tc) = &task {
                let node = c.node.as_deref().unwrap_or(&c.tool);
                tc.set_status_message(format!("`{name}`: {done} calls done (`{node}`)"));
            }
            let (peer, progress) = (peer.clone(), progress.clone());
            Box::pin(async move {
                if let Some(t) = progress {
                    let p = ProgressNotificationParam::new(t, done as f64)
                        .with_message(c.node.unwrap_or(c.tool));
                    let _ = peer.notify_progress(p).await;
                }
            })
        };
    let restate = rj.remote.restate.clone();
    let agent = rj.agent.clone();
    let over = CancellationToken::new();
    let ended = over.clone();
    let mut on_question = move |id: &str, q: ask::Asked| {
        if let Some(a) = &agent {
            a.forward(&restate, id, q, &over);
        }
    };
    let got = client::run_quiet(
        &rj.remote.restate,
        &rj.request,
        &hooks.cancel,
        // Progress counts outcomes: a call begun is not one.
        &mut |_| {},
        &mut on_call,
        &mut on_question,
    )
    .await;
    ended.cancel();
    got
}

/// Where a run reports and what stops it.
pub struct Hooks {
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it asked for progress.
    pub progress: Option<ProgressToken>,
    /// The run's task, when it runs as one (the Tasks extension has no
    /// progress notifications: its status message says how far it is).
    pub task: Option<TaskContext>,
    pub cancel: CancellationToken,
    pub log: RunLog,
}

impl Hooks {
    /// The hooks of a plain `tools/call`: its progress token, its
    /// cancellation, the log level of its request or session.
    pub fn of_request(
        context: &RequestContext<RoleServer>,
        level: Option<super::logging::Level>,
    ) -> Self {
        Hooks {
            peer: context.peer.clone(),
            progress: context.meta.get_progress_token(),
            task: None,
            cancel: context.ct.clone(),
            log: RunLog {
                peer: context.peer.clone(),
                min: level,
            },
        }
    }
}

/// Runs the composition in its own session until it ends; `redactor`
/// holds the servers' secrets. A cancelled run still ends (its
/// compensations run first) and returns its trace.
pub async fn run(
    comp: Arc<Composition>,
    caller: Arc<dyn Caller>,
    cfg: SessionConfig,
    redactor: Redactor,
    hooks: Hooks,
) -> Option<Trace> {
    let total = comp.nodes.len();
    let name = comp.name.clone();
    let mut s = session::start(comp, caller, cfg, redactor);
    s.handle.send(Command::Run);
    let mut cancelled = false;
    let mut done = 0usize;
    loop {
        tokio::select! {
            ev = s.events.recv() => {
                let ev = ev?;
                hooks.log.event(&ev).await;
                match ev {
                    Event::NodeFinished { id, .. } | Event::NodeStatus { id, status: NodeStatus::Skipped, .. } => {
                        done += 1;
                        if let Some(tc) = &hooks.task {
                            tc.set_status_message(format!("`{name}`: {done} of {total} nodes done (`{id}`)"));
                        }
                        if let Some(t) = &hooks.progress {
                            let p = ProgressNotificationParam::new(t.clone(), done as f64)
                                .with_total(total as f64)
                                .with_message(id);
                            let _ = hooks.peer.notify_progress(p).await;
                        }
                    }
                    Event::RunFinished { trace, .. } => {
                        // Let rmcp's send tasks write the notifications
                        // before the response goes out.
                        for _ in 0..4 {
                            tokio::task::yield_now().await;
                        }
                        return Some(*trace);
                    }
                    _ => {}
                }
            }
            () = hooks.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                s.handle.send(Command::Cancel);
            }
        }
    }
}
