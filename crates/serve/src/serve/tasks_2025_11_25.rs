//! Served compositions as tasks for 2025-11-25 clients over Streamable
//! HTTP: a `tools/call` whose params carry `task` answers
//! `{ task: { taskId, status, … } }` at once; `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel` answer in that revision's shapes, and
//! `tools/list` marks every composition `execution.taskSupport: "optional"`.
//!
//! rmcp 3.9 models only the 2026-07-28 Tasks extension: it drops the
//! `task` field of `tools/call` while parsing and answers `tasks/*` in the
//! new shapes. So an HTTP layer in front of rmcp renames these requests of
//! a pre-2026 client to `pipewright/2025/…` methods, which rmcp hands to
//! `on_custom_request`
//! untouched (see `rename.rs`), and they are answered here as plain JSON.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CustomRequest, CustomResult, TaskPayload};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, ServerHandler as _};
use serde_json::{Map, Value, json};

use super::handler::PipelineServer;
use super::rename::PREFIX;

/// A task in 2025-11-25's shape (`ttl`, `pollInterval`).
fn task_json(t: &rmcp::model::Task) -> Value {
    let mut v = json!({
        "taskId": t.task_id,
        "status": t.status,
        "createdAt": t.created_at,
        "lastUpdatedAt": t.last_updated_at,
        "ttl": t.ttl_ms,
    });
    if let Some(p) = t.poll_interval_ms {
        v["pollInterval"] = json!(p);
    }
    if let Some(m) = &t.status_message {
        v["statusMessage"] = json!(m);
    }
    v
}

fn task_id(params: &Option<Value>) -> Result<String, ErrorData> {
    params
        .as_ref()
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ErrorData::invalid_params("`taskId` is required", None))
}

impl PipelineServer {
    /// Answers a renamed 2025-11-25 request; `None` for any other method.
    pub(super) async fn legacy_request(
        &self,
        request: &CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        let method = request.method.strip_prefix(PREFIX)?;
        let tasks = self.tasks();
        let answer = match method {
            "tools/call" => self.legacy_call(&request.params, &context),
            "tools/list" => self
                .list_tools(None, context)
                .await
                .map(|listed| with_task_support(&self.tool_names(), listed)),
            "tasks/get" => task_id(&request.params)
                .and_then(|id| tasks.get_task(&id))
                .map(|d| task_json(&d.task)),
            "tasks/cancel" => task_id(&request.params).and_then(|id| {
                let d = tasks.get_task(&id)?;
                if d.status().is_terminal() {
                    return Err(ErrorData::invalid_params(
                        format!("task {id} has already ended"),
                        None,
                    ));
                }
                tasks.cancel_task(&id)?;
                tasks.get_task(&id).map(|d| task_json(&d.task))
            }),
            "tasks/result" => match task_id(&request.params) {
                Ok(id) => self.legacy_result(&id).await,
                Err(e) => Err(e),
            },
            "tasks/list" => {
                let list: Vec<Value> = self
                    .started_tasks()
                    .iter()
                    .filter_map(|id| tasks.get_task(id).ok())
                    .map(|d| task_json(&d.task))
                    .collect();
                Ok(json!({ "tasks": list }))
            }
            _ => return None,
        };
        Some(answer.map(CustomResult))
    }

    /// `tools/call` with `task`: the run starts as a task; its handle.
    fn legacy_call(
        &self,
        params: &Option<Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let params = params.as_ref().and_then(Value::as_object);
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("`name` is required", None))?;
        if !self.tool_names().iter().any(|n| n == name) {
            return Err(ErrorData::invalid_params(
                format!("`{name}` cannot run as a task (only compositions can)"),
                None,
            ));
        }
        let args: Map<String, Value> = match params.and_then(|p| p.get("arguments")) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "`arguments` must be an object",
                    None,
                ));
            }
        };
        let job = self.job(name, &args)?;
        let level = self.level_for(context);
        let task = self.spawn_task(self.tasks(), job, context, level)?.0;
        self.note_started(&task.task_id);
        Ok(json!({ "task": task_json(&task) }))
    }

    /// `tasks/result`: waits for the task to end; its tool result, or the
    /// error it failed with.
    async fn legacy_result(&self, id: &str) -> Result<Value, ErrorData> {
        loop {
            let d = self.tasks().get_task(id)?;
            match d.payload {
                TaskPayload::Completed { mut result } => {
                    result.remove("resultType");
                    let meta = result.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(m) = meta.as_object_mut() {
                        m.insert(
                            "io.modelcontextprotocol/related-task".into(),
                            json!({ "taskId": id }),
                        );
                    }
                    return Ok(Value::Object(result));
                }
                TaskPayload::Failed { error } => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the task failed")
                        .to_owned();
                    return Err(ErrorData::internal_error(message, None));
                }
                TaskPayload::Cancelled => {
                    return Err(ErrorData::invalid_params(
                        format!("task {id} was cancelled: it has no result"),
                        None,
                    ));
                }
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

/// `tools/list` with `execution.taskSupport: "optional"` on every served
/// composition.
fn with_task_support(compositions: &[String], listed: rmcp::model::ListToolsResult) -> Value {
    let mut v = serde_json::to_value(&listed).unwrap_or_else(|_| json!({ "tools": [] }));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("resultType");
        obj.remove("ttlMs");
        obj.remove("cacheScope");
    }
    if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for t in tools {
            let served = t
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| compositions.iter().any(|c| c == n));
            if served {
                t["execution"] = json!({ "taskSupport": "optional" });
            }
        }
    }
    v
}
