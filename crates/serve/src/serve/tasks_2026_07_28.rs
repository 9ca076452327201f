//! Served compositions as tasks (the 2026-07-28 Tasks extension, SEP-2663):
//! a client that declares `io.modelcontextprotocol/tasks` gets a task
//! handle from `tools/call` at once, polls `tasks/get` for the run's
//! result, and `tasks/cancel` stops the run, whose compensations then run.
//! The task's status message is its progress (the extension has no
//! progress notifications): the nodes done as each ends, then how the run
//! ended and what its compensations undid.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CreateTaskResult, ErrorData};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use tokio_util::sync::CancellationToken;

use super::exec::{Hooks, Job, run_job};
use super::handler::PipelineServer;
use super::logging::{Level, RunLog};
use pipewright_engine::run::trace::{RunStatus, Trace};

/// How long a task and its result are kept: an hour from its start.
const TTL_MS: u64 = 60 * 60 * 1000;
/// How often a client is asked to poll.
const POLL_MS: u64 = 250;
/// The most task runs going at once, over every session: a task answers at
/// once, so the per-session limit on calls in flight does not hold it.
pub const MAX_RUNNING_TASKS: usize = 64;

/// One task run's place among [`MAX_RUNNING_TASKS`]; given back, and the
/// cancel watcher stopped, when the run ends or is dropped (rmcp aborts a
/// run still going when its task expires).
struct Slot {
    running: Arc<AtomicUsize>,
    watcher: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
    }
}

impl PipelineServer {
    /// Starts the run as a task and answers with its handle at once. The
    /// run's log messages go to the session at `level`; `tasks/cancel`
    /// cancels it (compensations run), and the run is saved like any other.
    pub(super) fn spawn_task(
        &self,
        tasks: &TaskManager,
        job: Job,
        context: &RequestContext<RoleServer>,
        level: Option<Level>,
    ) -> Result<Spawned, ErrorData> {
        let running = self.running_tasks.clone();
        let taken = running.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < MAX_RUNNING_TASKS).then_some(n + 1)
        });
        if taken.is_err() {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::INTERNAL_ERROR,
                format!(
                    "{MAX_RUNNING_TASKS} compositions are already running as tasks on this server; \
                     wait for one to end, or cancel one (`tasks/cancel`)"
                ),
                None,
            ));
        }
        let mut slot = Slot {
            running,
            watcher: None,
        };
        let server = self.clone();
        let tool = job.tool.clone();
        let peer = context.peer.clone();
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_MS)
            .with_status_message(format!("running `{}`", job.comp.name));
        let task = tasks.spawn(options, move |tc| {
            Box::pin(async move {
                let cancel = CancellationToken::new();
                slot.watcher = Some({
                    let (tc, cancel) = (tc.clone(), cancel.clone());
                    tokio::spawn(async move {
                        tc.cancelled().await;
                        cancel.cancel();
                    })
                });
                let name = job.comp.name.clone();
                let hooks = Hooks {
                    peer: peer.clone(),
                    progress: None,
                    task: Some(tc.clone()),
                    cancel: cancel.clone(),
                    log: RunLog { peer, min: level },
                };
                let trace = run_job(job, hooks).await;
                drop(slot);
                tc.set_status_message(match &trace {
                    Ok(t) => ended(&name, t),
                    Err(why) => format!("`{name}`: {why}"),
                });
                let stopped = trace
                    .as_ref()
                    .is_ok_and(|t| t.composition.status == RunStatus::Cancelled);
                let result = server.answer_run(&tool, trace);
                if stopped {
                    return Err(TaskExit::Cancelled);
                }
                Ok(result)
            })
        });
        Ok(Spawned(task))
    }
}

/// A task just started: its seed state.
pub struct Spawned(pub rmcp::model::Task);

impl Spawned {
    /// The 2026-07-28 answer: a `CreateTaskResult`.
    pub fn into_response(self) -> CallToolResponse {
        CallToolResponse::Task(CreateTaskResult::new(self.0))
    }
}

/// A task's last status message: how its run ended, where it failed, and
/// what its compensations undid (or failed to).
fn ended(name: &str, t: &Trace) -> String {
    let mut said = match (
        &t.composition.status,
        &t.failed_step,
        &t.composition.budget_tripped,
    ) {
        (_, _, Some(cap)) => format!("`{name}` stopped: budget cap `{cap}` was exceeded"),
        (RunStatus::Cancelled, _, _) => format!("`{name}` cancelled"),
        (_, Some(step), _) => format!("`{name}` failed at `{step}`"),
        (status, None, None) => format!("`{name}` {}", status.as_str()),
    };
    let nodes = |ok: bool| {
        t.compensations
            .iter()
            .filter(|c| (c.status == "ok") == ok)
            .map(|c| format!("`{}`", c.node))
            .collect::<Vec<_>>()
    };
    let (undone, not) = (nodes(true), nodes(false));
    if !undone.is_empty() {
        said.push_str(&format!("; compensated {}", undone.join(", ")));
    }
    if !not.is_empty() {
        said.push_str(&format!("; compensating {} failed", not.join(", ")));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::run::trace::Compensation;

    fn undo(node: &str, status: &str) -> Compensation {
        Compensation {
            node: node.to_owned(),
            status: status.to_owned(),
            ..Compensation::default()
        }
    }

    fn trace(status: RunStatus, failed: Option<&str>, undone: Vec<Compensation>) -> Trace {
        let mut t = Trace::default();
        t.composition.status = status;
        t.failed_step = failed.map(str::to_owned);
        t.compensations = undone;
        t
    }

    #[test]
    fn the_last_status_message_says_how_the_run_ended_and_what_it_undid() {
        let done = trace(RunStatus::Completed, None, vec![]);
        assert_eq!(ended("sync", &done), "`sync` completed");
        let failed = trace(
            RunStatus::Partial,
            Some("boom"),
            vec![undo("b", "ok"), undo("a", "failed"), undo("c", "ok")],
        );
        assert_eq!(
            ended("sync", &failed),
            "`sync` failed at `boom`; compensated `b`, `c`; compensating `a` failed"
        );
        let cancelled = trace(RunStatus::Cancelled, None, vec![undo("create", "ok")]);
        assert_eq!(
            ended("sync", &cancelled),
            "`sync` cancelled; compensated `create`"
        );
        let mut capped = trace(RunStatus::BudgetExceeded, Some("b"), vec![]);
        capped.composition.budget_tripped = Some("max_usd".into());
        assert_eq!(
            ended("sync", &capped),
            "`sync` stopped: budget cap `max_usd` was exceeded"
        );
    }
}
