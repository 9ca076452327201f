//! Running one served composition in its own session, reporting to the
//! client that asked: progress as nodes end, log messages at its level,
//! cancelled with its request (or its task).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use tokio_util::sync::CancellationToken;

use super::logging::RunLog;
use crate::engine::file::model::Composition;
use crate::engine::mcp::caller::Caller;
use crate::engine::redact::Redactor;
use crate::engine::run::events::Event;
use crate::engine::run::session::{self, Command, SessionConfig};
use crate::engine::run::trace::{NodeStatus, Trace};

/// Whether the request's client declared the tasks extension (in its
/// `initialize` capabilities or the request's `_meta`).
pub fn wants_task(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// One composition run (a call's or a task's), with what it runs with.
pub struct Job {
    pub comp: Arc<Composition>,
    pub caller: Arc<dyn Caller>,
    pub cfg: SessionConfig,
    pub redactor: Redactor,
}

/// Where a run reports and what stops it.
pub struct Hooks {
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it asked for progress.
    pub progress: Option<ProgressToken>,
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
