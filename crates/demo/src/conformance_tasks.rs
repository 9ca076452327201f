//! The conformance suite's fixtures for the Tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`): tools the server runs as tasks when
//! the request declares the extension, kept by rmcp's task manager (the
//! one `serve` uses), which answers `tasks/get`, `tasks/update` and
//! `tasks/cancel` (rmcp refuses those `-32021` for a client that did not
//! declare the extension).
//!
//! | tool | arguments | as a task | without the extension |
//! |---|---|---|---|
//! | `greet` | `name` | never | `Hello, NAME!` |
//! | `slow_compute` | `seconds`, `label` | sleeps, then its result; `cancelled` when cancelled | the same, synchronously |
//! | `failing_job` | none | a tool error after a second (`completed`, `isError`) | `-32021` (needs the extension) |
//! | `protocol_error_job` | none | `failed`, with a JSON-RPC error | that error |
//! | `confirm_delete` | `filename` | `input_required` (`confirm`, a form), then its answer | an input-required result |
//! | `multi_input` | none | two forms at once (`name`, `confirm`), then both answers | an input-required result |
//! | `test_tool_with_task` | none | asks `user_name` (an input-required result), then a task greeting it | `-32021` |
//! | `confirm_twice` | `filename` | asks `confirm`, works a moment, asks `confirm` again, then both answers | `-32021` |
//! | `refused_answer` | none | asks `code`; `tasks/update` refuses (`-32602`) any answer but `sesame`; `cancelled` when cancelled | `-32021` |
//!
//! The last two are pipewright's own (no scenario calls them): a key asked
//! again in a second `input_required` spell, and a refused `tasks/update`.
//! rmcp's task manager takes each key once in a task's life, so the second
//! `confirm` is kept as `confirm#again` and shown and answered as `confirm`.

use std::time::Duration;

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
        CreateTaskResult, GetTaskParams, GetTaskResult, InputRequest, ServerCapabilities,
        TASKS_EXTENSION_ID, TaskPayload, Tool, UpdateTaskParams,
    },
    service::RequestContext,
    task_manager::{TaskContext, TaskExit, TaskFuture, TaskManager, TaskOptions},
};
use serde_json::{Map, Value, json};

use super::conformance_mrtr::{ask, reply};
use super::conformance_parts::{complete, declared, modern, text, typed};

/// How long a task is kept: ten minutes from its start.
const TTL_MS: u64 = 10 * 60 * 1000;
/// How often a client is asked to poll.
const POLL_MS: u64 = 250;
/// The longest `slow_compute` sleeps.
const MAX_SECONDS: f64 = 600.0;
/// How long `failing_job` works before failing.
const FAILING_AFTER: Duration = Duration::from_secs(1);
/// How long `protocol_error_job` works before failing.
const BREAKING_AFTER: Duration = Duration::from_millis(200);
/// How long `confirm_twice` works between its questions: long enough for
/// a client polling at [`POLL_MS`] to see it `working`.
const BETWEEN_ASKS: Duration = Duration::from_millis(3 * POLL_MS);
/// The suffix of a key asked a second time (see the module's doc).
const AGAIN: &str = "#again";
/// The only answer `refused_answer` takes.
const SESAME: &str = "sesame";

/// The task fixture tools: name, what it does, its arguments (all strings
/// but `seconds`).
const TOOLS: &[(&str, &str, &[&str])] = &[
    ("greet", "Greets `name`; never a task.", &["name"]),
    (
        "slow_compute",
        "Sleeps `seconds`, then returns a result naming `label`; a task when the client declared the tasks extension.",
        &["seconds", "label"],
    ),
    (
        "failing_job",
        "Runs only as a task; ends with a tool error after a second.",
        &[],
    ),
    (
        "protocol_error_job",
        "A task that fails with a JSON-RPC error.",
        &[],
    ),
    (
        "confirm_delete",
        "Asks to confirm deleting `filename` (nothing is deleted), then says what was chosen.",
        &["filename"],
    ),
    (
        "multi_input",
        "Asks two questions at once (`name`, `confirm`), then returns both answers.",
        &[],
    ),
    (
        "test_tool_with_task",
        "Asks for a name (`user_name`), then greets it from a task; needs the tasks extension.",
        &[],
    ),
    (
        "confirm_twice",
        "Asks to confirm deleting `filename`, then asks `confirm` again a moment later (nothing is deleted); needs the tasks extension.",
        &["filename"],
    ),
    (
        "refused_answer",
        "Asks for a `code`; `tasks/update` refuses any answer but `sesame`; needs the tasks extension.",
        &[],
    ),
];

/// The tasks the fixtures started, shared by every session of one server.
#[derive(Clone, Default)]
pub(crate) struct Tasks(TaskManager);

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tasks")
    }
}

impl Tasks {
    /// `tasks/get`: the task as it is now, its result or error inlined.
    /// A question asked again shows under its first key.
    pub(crate) fn get(&self, request: &GetTaskParams) -> Result<GetTaskResult, ErrorData> {
        let mut task = self.0.get_task(&request.task_id)?;
        if let TaskPayload::InputRequired { input_requests } = &mut task.payload {
            *input_requests = std::mem::take(input_requests)
                .into_iter()
                .map(|(key, asked)| match key.strip_suffix(AGAIN) {
                    Some(first) => (first.to_owned(), asked),
                    None => (key, asked),
                })
                .collect();
        }
        Ok(GetTaskResult::new(task))
    }

    /// `tasks/update`: answers to the task's questions (unknown keys are
    /// ignored); an answer to a question asked again goes to it, and a
    /// wrong `code` is refused.
    pub(crate) fn update(&self, request: UpdateTaskParams) -> Result<(), ErrorData> {
        let pending = match self.0.get_task(&request.task_id)?.payload {
            TaskPayload::InputRequired { input_requests } => input_requests,
            _ => Default::default(),
        };
        let mut responses = request.input_responses;
        if let (true, Some(answer)) = (pending.contains_key("code"), responses.get("code")) {
            let code = answer.pointer("/content/code").and_then(Value::as_str);
            if code != Some(SESAME) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "refused_answer takes only the code `{SESAME}`, not {}; the answer was not taken",
                        code.map_or_else(|| "no code".to_owned(), |c| format!("`{c}`"))
                    ),
                    None,
                ));
            }
        }
        responses = responses
            .into_iter()
            .map(|(key, answer)| {
                let again = format!("{key}{AGAIN}");
                if !pending.contains_key(&key) && pending.contains_key(&again) {
                    (again, answer)
                } else {
                    (key, answer)
                }
            })
            .collect();
        self.0.update_task(&request.task_id, responses)
    }

    /// `tasks/cancel`: the task's work stops and it settles `cancelled`.
    pub(crate) fn cancel(&self, request: &CancelTaskParams) -> Result<(), ErrorData> {
        self.0.cancel_task(&request.task_id)
    }
}

/// Declares the tasks extension in `capabilities`.
pub(crate) fn advertise(capabilities: &mut ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_default()
        .insert(TASKS_EXTENSION_ID.to_owned(), Map::new());
}

/// Every task fixture's `tools/list` entry, in a fixed order.
pub(crate) fn definitions() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|(name, description, args)| {
            let properties: Map<String, Value> = args
                .iter()
                .map(|a| {
                    let kind = if *a == "seconds" { "number" } else { "string" };
                    ((*a).to_owned(), json!({ "type": kind }))
                })
                .collect();
            let schema = json!({"type": "object", "properties": properties});
            Tool::new(
                *name,
                format!("Conformance-suite fixture (tasks extension). {description}"),
                std::sync::Arc::new(schema.as_object().cloned().unwrap_or_default()),
            )
        })
        .collect()
}

/// Whether `name` is a task fixture tool.
pub(crate) fn is_fixture(name: &str) -> bool {
    TOOLS.iter().any(|(n, _, _)| *n == name)
}

/// Runs the task fixture `request.name` (one [`is_fixture`] accepts): as
/// a task in `tasks` when the request declared the extension.
pub(crate) async fn call(
    tasks: &Tasks,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let as_task = declared(&context, |c| c.supports_tasks());
    let args = request.arguments.clone().unwrap_or_default();
    let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let spawn = |what: String,
                 work: Box<dyn FnOnce(TaskContext) -> TaskFuture>|
     -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_MS)
            .with_status_message(what);
        let task = tasks.0.spawn(options, work);
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    };
    match request.name.as_ref() {
        "greet" => done(&format!(
            "Hello, {}!",
            arg("name").unwrap_or_else(|| "World".into())
        )),
        "slow_compute" => {
            let seconds = args
                .get("seconds")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite())
                .unwrap_or(1.0)
                .clamp(0.0, MAX_SECONDS);
            let label = arg("label").unwrap_or_else(|| "compute".into());
            let answer = format!("computed `{label}` in {seconds} s");
            let sleep = Duration::from_secs_f64(seconds);
            if !as_task {
                tokio::select! {
                    () = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled", None)),
                    () = tokio::time::sleep(sleep) => {}
                }
                return done(&answer);
            }
            spawn(
                format!("computing `{label}`"),
                Box::new(move |tc| {
                    Box::pin(async move {
                        work(&tc, sleep).await?;
                        Ok(CallToolResult::success(vec![ContentBlock::text(answer)]))
                    })
                }),
            )
        }
        "failing_job" => {
            if !as_task {
                return Err(needs_tasks()?);
            }
            spawn(
                "working, and about to fail".into(),
                Box::new(|tc| {
                    Box::pin(async move {
                        work(&tc, FAILING_AFTER).await?;
                        Ok(CallToolResult::error(vec![ContentBlock::text(
                            "failing_job failed, as it always does",
                        )]))
                    })
                }),
            )
        }
        "protocol_error_job" => {
            let broke = || {
                ErrorData::internal_error(
                    "protocol_error_job broke, as it always does (a protocol error, not a tool error)",
                    None,
                )
            };
            if !as_task {
                return Err(broke());
            }
            spawn(
                "working, and about to break".into(),
                Box::new(move |tc| {
                    Box::pin(async move {
                        work(&tc, BREAKING_AFTER).await?;
                        Err(TaskExit::Error(broke()))
                    })
                }),
            )
        }
        "confirm_delete" => {
            let file = arg("filename").unwrap_or_else(|| "the file".into());
            let question = confirm(&format!("Delete {file}?"));
            if !as_task {
                let responses = request.input_responses.as_ref();
                return match reply(responses, "confirm")? {
                    Some(r) => done(&verdict(&file, r)),
                    None if modern(&context) => ask([("confirm", question)], None),
                    None => Err(needs_tasks()?),
                };
            }
            let question: InputRequest = typed(question)?;
            spawn(
                format!("waiting to confirm deleting {file}"),
                Box::new(move |tc| {
                    Box::pin(async move {
                        let answer = tc.request_input("confirm", question).await?;
                        Ok(CallToolResult::success(vec![ContentBlock::text(verdict(
                            &file, &answer,
                        ))]))
                    })
                }),
            )
        }
        "multi_input" => {
            let name = form("What is your name?", "name");
            let sure = confirm("Go ahead?");
            if !as_task {
                let responses = request.input_responses.as_ref();
                return match (reply(responses, "name")?, reply(responses, "confirm")?) {
                    (Some(n), Some(c)) => done(&both(n, c)),
                    _ if modern(&context) => ask([("name", name), ("confirm", sure)], None),
                    _ => Err(needs_tasks()?),
                };
            }
            let (name, sure): (InputRequest, InputRequest) = (typed(name)?, typed(sure)?);
            spawn(
                "waiting for two answers".into(),
                Box::new(move |tc| {
                    Box::pin(async move {
                        let (n, c) = tokio::join!(
                            tc.request_input("name", name),
                            tc.request_input("confirm", sure)
                        );
                        let text = both(&n?, &c?);
                        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
                    })
                }),
            )
        }
        "test_tool_with_task" => {
            if !as_task {
                return Err(needs_tasks()?);
            }
            let Some(r) = reply(request.input_responses.as_ref(), "user_name")? else {
                return ask([("user_name", form("What is your name?", "name"))], None);
            };
            let name = r
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("whoever you are")
                .to_owned();
            spawn(
                format!("greeting {name}"),
                Box::new(move |tc| {
                    Box::pin(async move {
                        work(&tc, Duration::from_millis(100)).await?;
                        let text = format!("Hello, {name}!");
                        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
                    })
                }),
            )
        }
        "confirm_twice" => {
            if !as_task {
                return Err(needs_tasks()?);
            }
            let file = arg("filename").unwrap_or_else(|| "the file".into());
            let first: InputRequest = typed(confirm(&format!("Delete {file}?")))?;
            let second: InputRequest = typed(confirm(&format!("Really delete {file}?")))?;
            spawn(
                format!("waiting to confirm deleting {file}, twice"),
                Box::new(move |tc| {
                    Box::pin(async move {
                        let one = tc.request_input("confirm", first).await?;
                        work(&tc, BETWEEN_ASKS).await?;
                        let key = format!("confirm{AGAIN}");
                        let two = tc.request_input(key, second).await?;
                        let text = if confirmed(&one) && confirmed(&two) {
                            format!("confirmed twice: {file} would be deleted (nothing was)")
                        } else {
                            format!("kept {file}")
                        };
                        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
                    })
                }),
            )
        }
        "refused_answer" => {
            if !as_task {
                return Err(needs_tasks()?);
            }
            let question: InputRequest = typed(form("The code?", "code"))?;
            spawn(
                "waiting for the code".into(),
                Box::new(move |tc| {
                    Box::pin(async move {
                        tc.request_input("code", question).await?;
                        Ok(CallToolResult::success(vec![ContentBlock::text("opened")]))
                    })
                }),
            )
        }
        other => Err(ErrorData::invalid_params(
            format!("unknown tasks fixture `{other}`"),
            None,
        )),
    }
}

/// A task's work: `how_long` of sleep, cut short by `tasks/cancel`.
async fn work(tc: &TaskContext, how_long: Duration) -> Result<(), TaskExit> {
    tokio::select! {
        () = tc.cancelled() => Err(TaskExit::Cancelled),
        () = tokio::time::sleep(how_long) => Ok(()),
    }
}

/// The `-32021` refusal of a tool that runs only as a task, naming the
/// extension the client must declare.
fn needs_tasks() -> Result<ErrorData, ErrorData> {
    Ok(ErrorData::missing_required_client_capability(typed(
        json!({"extensions": {TASKS_EXTENSION_ID: {}}}),
    )?))
}

/// A complete result of one text block.
fn done(message: &str) -> Result<CallToolResponse, ErrorData> {
    Ok(complete::<CallToolResult>(json!({"content": [text(message)]}))?.into())
}

/// A form asking for one string field.
fn form(message: &str, field: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": "string"}},
                "required": [field],
            },
        },
    })
}

/// A form asking yes or no (`confirm`).
fn confirm(message: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            },
        },
    })
}

/// Whether an answer accepted the form with `confirm: true`.
fn confirmed(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer.pointer("/content/confirm").and_then(Value::as_bool) == Some(true)
}

/// What `confirm_delete` says for `answer`.
fn verdict(file: &str, answer: &Value) -> String {
    if confirmed(answer) {
        format!("confirmed: {file} would be deleted (nothing was)")
    } else {
        format!("kept {file}")
    }
}

/// What `multi_input` says for its two answers.
fn both(name: &Value, sure: &Value) -> String {
    let who = name
        .pointer("/content/name")
        .and_then(Value::as_str)
        .unwrap_or("whoever you are");
    format!("{who}, confirmed: {}", confirmed(sure))
}
