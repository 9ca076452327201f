//! A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1:
//! it answers pipewright's judge the way the test says (a grade, a reply
//! that is not a verdict, a refusal, an HTTP status, no answer at all) and
//! keeps every request it was sent, with its `Authorization` header.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// How the endpoint answers one metric.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The verdict each metric asks for, every score this one.
    Grade(f64),
    /// This JSON object as the reply's text.
    Object(Value),
    /// This text as the reply (not necessarily JSON).
    Text(String),
    /// A refusal (`message.refusal`).
    Refuse(String),
    /// An HTTP status with an OpenAI-style error body.
    Status(u16, String),
    /// Never answer.
    Hang,
    /// A verdict whose reasoning is this many bytes long.
    Big(usize),
}

/// A request the endpoint was sent.
#[derive(Debug, Clone)]
pub struct Seen {
    pub metric: String,
    pub body: Value,
    /// The `material` the user message holds, as JSON.
    pub material: Value,
    pub auth: Option<String>,
}

#[derive(Default)]
struct Script {
    default: Option<Reply>,
    by_metric: HashMap<String, Reply>,
    seen: Vec<Seen>,
}

/// The endpoint, running on its own thread until dropped or stopped.
pub struct Judge {
    /// The API's base URL (`…/v1`).
    pub url: String,
    script: Arc<Mutex<Script>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Which metric a request is for, from its instructions.
fn metric_of(system: &str) -> &'static str {
    for (phrase, metric) in [
        ("against a rubric", "rubric"),
        ("questions of a decision tree", "rubric_tree"),
        ("accomplished its task", "mcp_task_completion"),
        ("used the MCP tools", "mcp_use"),
        ("arguments of the tool calls", "argument_correctness"),
        ("the plan of the pipeline", "plan_quality"),
    ] {
        if system.contains(phrase) {
            return metric;
        }
    }
    "unknown"
}

fn material_of(user: &str) -> Value {
    let inner = user
        .trim()
        .trim_start_matches("<material>")
        .trim_end_matches("</material>");
    serde_json::from_str(inner).unwrap_or(Value::Null)
}

/// The verdict a metric asks for, every score `s`.
fn verdict(metric: &str, material: &Value, s: f64) -> Value {
    let names = |key: &str, field: &str| -> Vec<Value> {
        material[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| x[field].clone())
            .collect()
    };
    match metric {
        "rubric" => json!({
            "criteria": names("criteria", "name").into_iter().map(|n| json!({"name": n, "score": s, "reasoning": "scripted"})).collect::<Vec<_>>(),
            "reasoning": format!("scripted rubric verdict {s}")
        }),
        "rubric_tree" => json!({
            "answers": material["questions"].as_array().into_iter().flatten().map(|q| json!({"question": q["id"], "answer": q["answers"][0], "reasoning": "scripted"})).collect::<Vec<_>>(),
            "reasoning": "scripted tree"
        }),
        "argument_correctness" => json!({
            "calls": names("calls", "call").into_iter().map(|c| json!({"call": c, "score": s, "reasoning": "scripted"})).collect::<Vec<_>>(),
            "reasoning": "scripted arguments"
        }),
        _ => json!({ "score": s, "reasoning": format!("scripted {metric} verdict {s}") }),
    }
}

fn completion(content: Value, refusal: Value) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "judge-1",
        "choices": [{ "index": 0, "finish_reason": "stop",
            "message": { "role": "assistant", "content": content, "refusal": refusal } }],
        "usage": { "prompt_tokens": 800, "completion_tokens": 60, "total_tokens": 860 }
    })
}

async fn chat(
    State(script): State<Arc<Mutex<Script>>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let metric = metric_of(system);
    let material = material_of(body["messages"][1]["content"].as_str().unwrap_or_default());
    let reply = {
        let mut s = script.lock().expect("script");
        s.seen.push(Seen {
            metric: metric.to_owned(),
            body: body.clone(),
            material: material.clone(),
            auth: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        });
        s.by_metric
            .get(metric)
            .or(s.default.as_ref())
            .cloned()
            .unwrap_or(Reply::Grade(0.9))
    };
    match reply {
        Reply::Grade(s) => axum::Json(completion(
            Value::from(verdict(metric, &material, s).to_string()),
            Value::Null,
        ))
        .into_response(),
        Reply::Object(v) => {
            axum::Json(completion(Value::from(v.to_string()), Value::Null)).into_response()
        }
        Reply::Text(t) => axum::Json(completion(Value::from(t), Value::Null)).into_response(),
        Reply::Refuse(r) => axum::Json(completion(Value::Null, Value::from(r))).into_response(),
        Reply::Status(code, msg) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (
                status,
                axum::Json(json!({"error": {"message": msg, "type": "scripted"}})),
            )
                .into_response();
            resp.headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from_static("0"));
            resp
        }
        Reply::Hang => std::future::pending().await,
        Reply::Big(n) => {
            let mut v = verdict(metric, &material, 0.9);
            v["reasoning"] = Value::from("x".repeat(n));
            axum::Json(completion(Value::from(v.to_string()), Value::Null)).into_response()
        }
    }
}

impl Judge {
    /// Starts the endpoint on a free port of 127.0.0.1.
    pub fn start() -> Judge {
        let script = Arc::new(Mutex::new(Script::default()));
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = script.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr")).expect("send");
                let app = Router::new()
                    .route("/v1/chat/completions", post(chat))
                    .with_state(state);
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
            rt.shutdown_background();
        });
        let addr = rx.recv().expect("the endpoint starts");
        Judge {
            url: format!("http://{addr}/v1"),
            script,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// How every metric not scripted otherwise is answered.
    pub fn answer_all(&self, r: Reply) {
        self.script.lock().expect("script").default = Some(r);
    }

    /// How `metric` is answered.
    pub fn answer(&self, metric: &str, r: Reply) {
        self.script
            .lock()
            .expect("script")
            .by_metric
            .insert(metric.to_owned(), r);
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.script.lock().expect("script").seen.clone()
    }

    /// The request for `metric`.
    pub fn request(&self, metric: &str) -> Seen {
        self.seen()
            .into_iter()
            .find(|s| s.metric == metric)
            .unwrap_or_else(|| panic!("no request for {metric}: {:?}", self.seen()))
    }

    /// Stops answering: the port is closed.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Judge {
    fn drop(&mut self) {
        self.stop();
    }
}
