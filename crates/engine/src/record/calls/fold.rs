//! What is folded into a call besides its answer: the notifications that
//! belong to it (progress, log lines, task status), the questions the
//! server asked during it with the client's replies, and a task's polls
//! and result.

use serde_json::{Map, Value};

use super::{Pairing, Pending, id_key};
use crate::mcp::human::{Interaction, LogLine, ProgressNote, Source, TaskNote};
use crate::record::session::Side;

impl Pairing {
    pub(super) fn notification(&mut self, from: Side, method: &str, params: &Value) {
        let kept = match (from, method) {
            (Side::Server, "notifications/progress") => {
                let token = params.get("progressToken").map(id_key);
                let note = ProgressNote {
                    progress: params
                        .get("progress")
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0),
                    total: params.get("total").and_then(Value::as_f64),
                    message: params
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                };
                match self
                    .calls
                    .values_mut()
                    .rev()
                    .find(|c| c.progress.is_some() && c.progress == token)
                {
                    Some(call) => {
                        call.extras.progress(note);
                        true
                    }
                    None => false,
                }
            }
            (Side::Server, "notifications/message") => {
                let line = LogLine {
                    level: params
                        .get("level")
                        .and_then(Value::as_str)
                        .unwrap_or("info")
                        .to_owned(),
                    logger: params
                        .get("logger")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    data: params.get("data").cloned().unwrap_or(Value::Null),
                };
                match self.calls.values_mut().last() {
                    Some(call) => {
                        call.extras.log(line);
                        true
                    }
                    None => false,
                }
            }
            (Side::Server, "notifications/tasks/status") => {
                let id = params.get("taskId").and_then(Value::as_str).unwrap_or("");
                match self.tasks.get_mut(id) {
                    Some(open) => {
                        open.extras.task(&Self::task_note(id, params));
                        true
                    }
                    None => false,
                }
            }
            (Side::Client, "notifications/cancelled") => {
                let id = params.get("requestId").map(id_key).unwrap_or_default();
                if let Some(open) = self.calls.shift_remove(&id) {
                    let line = open.line;
                    self.note(
                        line,
                        format!(
                            "the client cancelled `{}` before it was answered; left out",
                            open.tool
                        ),
                    );
                }
                false
            }
            _ => false,
        };
        if !kept {
            self.rec.dropped.notifications += 1;
        }
    }

    pub(super) fn task_answer(
        &mut self,
        pending: &Pending,
        result: Option<&Value>,
        error: Option<&Value>,
        at_ms: f64,
    ) {
        let id = pending
            .params
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(open) = self.tasks.get_mut(&id) else {
            return;
        };
        let Some(result) = result else {
            if pending.method == "tasks/result" {
                let why = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
                    .to_owned();
                if let Some(open) = self.tasks.shift_remove(&id) {
                    self.note(
                        open.line,
                        format!("the task of `{}` failed ({why}); left out", open.tool),
                    );
                }
            }
            return;
        };
        if pending.method == "tasks/get" {
            open.extras.task(&Self::task_note(&id, result));
            // 2026-07-28: the result comes with the completed task.
            if result.get("status").and_then(Value::as_str) == Some("completed")
                && let Some(inline) = result.get("result").filter(|r| r.is_object())
            {
                let inline = inline.clone();
                if let Some(open) = self.tasks.shift_remove(&id) {
                    self.finish_call(open, inline, at_ms);
                }
            }
            return;
        }
        if let Some(mut open) = self.tasks.shift_remove(&id) {
            if open
                .extras
                .task
                .as_ref()
                .is_some_and(|t| t.status != "completed")
            {
                open.extras.task(&TaskNote {
                    task: id,
                    status: "completed".into(),
                    message: None,
                });
            }
            self.finish_call(open, result.clone(), at_ms);
        }
    }

    /// The client's answer to a server request: a question's reply is
    /// kept with the call it was asked during.
    pub(super) fn client_answer(&mut self, id: &Value, m: &Map<String, Value>) {
        let Some(asked) = self.asked.remove(&id_key(id)) else {
            return;
        };
        match asked.method.as_str() {
            "elicitation/create" | "sampling/createMessage" => {}
            "ping" => {
                self.rec.dropped.pings += 1;
                return;
            }
            _ => {
                self.rec.dropped.listings += 1;
                return;
            }
        }
        // A refusal (an error answer) is a decline.
        let reply = m
            .get("result")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"action": "decline"}));
        let request = serde_json::json!({"method": asked.method, "params": asked.params});
        let Some(i) = Self::interaction(&self.server, &request, &reply) else {
            return;
        };
        let task = asked
            .params
            .pointer("/_meta/io.modelcontextprotocol~1related-task/taskId")
            .and_then(Value::as_str);
        let open = match task {
            Some(t) if self.tasks.contains_key(t) => self.tasks.get_mut(t),
            _ => match self.calls.values_mut().last() {
                Some(c) => Some(c),
                None => self.tasks.values_mut().last(),
            },
        };
        match open {
            Some(open) => open.extras.interactions.push(i),
            None => {
                let line = asked.line;
                let at = asked.at_ms;
                self.note(
                    line,
                    format!("a question asked outside any call (at {at:.0} ms) was left out"),
                );
            }
        }
    }

    /// The task handle a `tools/call` was answered with, if it was: 2025-11-25
    /// `{task: {taskId, status…}}`, or the 2026-07-28 extension's
    /// `resultType: "task"`.
    pub(super) fn task_of(result: &Value) -> Option<&Value> {
        if let Some(task) = result.get("task").filter(|t| t.get("taskId").is_some())
            && result.get("content").is_none()
        {
            return Some(task);
        }
        (result.get("resultType").and_then(Value::as_str) == Some("task")
            && result.get("taskId").is_some())
        .then_some(result)
    }

    pub(super) fn task_note(id: &str, task: &Value) -> TaskNote {
        TaskNote {
            task: id.to_owned(),
            status: task
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("working")
                .to_owned(),
            message: task
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }

    /// A question (`{method, params}`) and the reply the client gave, as a run
    /// keeps them; `None` for what is not elicitation or sampling (roots are
    /// the client's own, not an answer).
    pub(super) fn interaction(server: &str, asked: &Value, reply: &Value) -> Option<Interaction> {
        let kind = match asked.get("method").and_then(Value::as_str)? {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            _ => return None,
        };
        let mut request = asked.get("params").cloned().unwrap_or(Value::Null);
        if let Some(map) = request.as_object_mut() {
            map.remove("_meta");
        }
        Some(Interaction {
            kind: kind.to_owned(),
            server: server.to_owned(),
            request,
            reply: reply.clone(),
            by: Source::Answers,
            error: None,
        })
    }
}
