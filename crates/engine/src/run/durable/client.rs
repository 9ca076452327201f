//! The client side of a durable run: submitting a run to Restate's
//! ingress, waiting for its trace, reading its journal through the admin
//! SQL API as it grows, and cancelling it. Used by `run --on`, `runs
//! attach`, `serve --on` and the workbench.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{Entry, Recorded};
use crate::file::model::Composition;
use crate::mcp::human::{Answer, Question};
use crate::run::trace::Trace;

/// The name `serve` gives a composition as a tool, and a durable run
/// names its composition by: a `pipe:` file (or a file with one unnamed pipeline) is
/// named after the file; characters outside `[A-Za-z0-9_.-]` become `_`.
pub fn tool_name(comp: &Composition, single: bool, stem: &str) -> String {
    let unnamed = matches!(comp.name.as_str(), "pipe" | "fibe" | "discord");
    let raw = if single && unnamed {
        stem
    } else {
        comp.name.as_str()
    };
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Why a durable run could not be followed to its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Restate's ingress could not be reached, or no worker serves runs.
    Unreachable,
    /// Restate or the worker refused the run (an unknown composition, a
    /// file that differs, bad arguments), or knows no run by that id.
    Refused,
    /// The worker's answer made no sense.
    Failed,
}

/// The Restate service every worker serves: a workflow whose key is the
/// run id and whose `run` handler runs the composition.
pub const SERVICE: &str = "Pipewright";

/// What a client submits: the composition to run (by the tool name
/// `serve` would give it), its arguments, and the hash of the client's
/// copy of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    pub tool: String,
    #[serde(default)]
    pub args: Map<String, Value>,
    pub file_sha256: String,
}

/// What a durable run returns: its trace, secrets masked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutput {
    pub trace: Trace,
}

/// The hex SHA-256 of a file's bytes.
pub fn file_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Where a durable run goes: Restate's ingress and admin API.
#[derive(Debug, Clone)]
pub struct Restate {
    /// `restate://HOST:PORT`, as given.
    pub on: String,
    pub ingress: String,
    pub admin: String,
}

impl Restate {
    /// Reads `restate://HOST:PORT` (the ingress); the admin API is `admin`
    /// when given, else port 9070 of the same host.
    pub fn parse(on: &str, admin: Option<&str>) -> Result<Restate, String> {
        let Some(rest) = on.strip_prefix("restate://") else {
            return Err(format!(
                "--on `{on}`: expected restate://HOST:PORT (Restate's ingress)"
            ));
        };
        let hostport = rest.trim_end_matches('/');
        let Some((host, port)) = hostport.rsplit_once(':') else {
            return Err(format!("--on `{on}`: expected restate://HOST:PORT"));
        };
        if host.is_empty() || port.parse::<u16>().is_err() || hostport.contains('/') {
            return Err(format!("--on `{on}`: expected restate://HOST:PORT"));
        }
        let admin = match admin {
            Some(a) if a.starts_with("http://") || a.starts_with("https://") => {
                a.trim_end_matches('/').to_owned()
            }
            Some(a) => return Err(format!("--restate-admin `{a}`: expected an http:// URL")),
            None => format!("http://{host}:9070"),
        };
        Ok(Restate {
            on: format!("restate://{hostport}"),
            ingress: format!("http://{hostport}"),
            admin,
        })
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default()
}

/// Starts run `id` in Restate: the invocation id, or an exit code and why.
pub async fn send(
    r: &Restate,
    id: &str,
    req: &RunRequest,
) -> Result<Option<String>, (Failure, String)> {
    let url = format!("{}/{SERVICE}/{id}/run/send", r.ingress);
    // A balancer in front of a cluster's ingresses answers 502, 503 or 504
    // while a node is down or not yet serving, and a node 503 while its
    // partition's leader moves: the submission is tried again for a while.
    // The run's id keys it, so a try that did reach Restate makes the next
    // one `PreviouslyAccepted`: that run is this one.
    let started = std::time::Instant::now();
    let mut retried = false;
    let (status, body) = loop {
        let res = client()
            .post(&url)
            .json(req)
            .send()
            .await
            .map_err(|e| unreachable(r, e))?;
        let status = res.status();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if matches!(status.as_u16(), 502..=504) && started.elapsed() <= Duration::from_secs(60) {
            retried = true;
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        break (status, body);
    };
    if !status.is_success() {
        // 404: no worker registered the service yet.
        let code = if status.as_u16() == 404 {
            Failure::Unreachable
        } else {
            Failure::Refused
        };
        return Err((
            code,
            format!(
                "Restate refused the run ({status}): {}",
                message_of(&body, status)
            ),
        ));
    }
    if body["status"].as_str() == Some("PreviouslyAccepted") && !retried {
        return Err((
            Failure::Refused,
            format!("Restate already holds a run with the id {id}"),
        ));
    }
    Ok(body["invocationId"].as_str().map(str::to_owned))
}

/// A new run id for a durable run: a local run's id (time, then random)
/// with more randomness, since many clients submit to one Restate.
pub fn new_durable_id() -> String {
    use crate::run::trace::new_run_id;
    format!(
        "{}{:012x}",
        new_run_id(),
        crate::random::number() & 0xffff_ffff_ffff
    )
}

/// Starts a new run of `req`: its id and invocation. An id Restate
/// already holds (two clients drew the same) is drawn again.
pub async fn start(
    r: &Restate,
    req: &RunRequest,
) -> Result<(String, Option<String>), (Failure, String)> {
    let mut last = None;
    for _ in 0..3 {
        let id = new_durable_id();
        match send(r, &id, req).await {
            Ok(inv) => return Ok((id, inv)),
            Err((f, s)) if s.starts_with("Restate already holds") => last = Some((f, s)),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or((Failure::Failed, "no run id could be drawn".into())))
}

/// True when `id` can be a run id: letters, digits and `-` (it goes into
/// a URL and a query).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Runs `req` in Restate for `serve --on`: each call journaled as begun is
/// handed to `on_open`, each journaled outcome to `on_call` (a call's
/// `on_open` comes first), each question the run journals to
/// `on_question` with the
/// run's id (once each, as the journal is read: the answer goes to
/// [`answer`]); `cancel` cancels the invocation in Restate (the worker then
/// compensates) and the trace of the cancelled run still comes back.
pub async fn run_quiet(
    r: &Restate,
    req: &RunRequest,
    cancel: &CancellationToken,
    on_open: &mut (dyn FnMut(super::Opened) + Send),
    on_call: &mut (dyn FnMut(Recorded) -> futures::future::BoxFuture<'static, ()> + Send),
    on_question: &mut (dyn FnMut(&str, super::ask::Asked) + Send),
) -> Result<Trace, String> {
    let (id, invocation) = start(r, req).await.map_err(|(_, s)| s)?;
    follow(r, &id, invocation, cancel, on_open, on_call, on_question).await
}

/// Follows run `id`, started by anyone (`serve --on` taking a question's
/// answer at another instance than the one that started it), as
/// [`run_quiet`] does once the run is started: the journal from its
/// start, handed to the same callbacks, until the trace comes back.
pub async fn follow(
    r: &Restate,
    id: &str,
    invocation: Option<String>,
    cancel: &CancellationToken,
    on_open: &mut (dyn FnMut(super::Opened) + Send),
    on_call: &mut (dyn FnMut(Recorded) -> futures::future::BoxFuture<'static, ()> + Send),
    on_question: &mut (dyn FnMut(&str, super::ask::Asked) + Send),
) -> Result<Trace, String> {
    let id = id.to_owned();
    let mut journal = Journal {
        invocation,
        next: 0,
    };
    let mut tick = ticker();
    let output = attach(r, &id);
    tokio::pin!(output);
    let mut cancelled = false;
    let got = loop {
        tokio::select! {
            got = &mut output => break got,
            _ = tick.tick() => {
                for e in journal.poll(r, &id).await {
                    match e {
                        Entry::Calls { calls, opened, .. } => {
                            for o in opened {
                                on_open(o);
                            }
                            for c in calls {
                                on_call(c).await;
                            }
                        }
                        Entry::Question { question } => on_question(&id, question),
                        Entry::Attempt(_) => {}
                    }
                }
            }
            () = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                if let Some(inv) = journal.invocation.clone().or(journal.find(r, &id).await) {
                    cancel_invocation(r, &inv).await;
                }
            }
        }
    };
    let mut trace = got.map_err(|(_, s)| s)?;
    trace.run_id = id.clone();
    if let Some(d) = trace.durable.as_mut() {
        d.restate = r.on.clone();
    }
    Ok(trace)
}

/// Ticks every 250 ms, the first one 250 ms from now: a run that ends
/// sooner is never slowed by a journal query.
pub fn ticker() -> tokio::time::Interval {
    let period = Duration::from_millis(250);
    let mut t = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    t
}

/// Asks Restate to cancel an invocation (best effort).
pub async fn cancel_invocation(r: &Restate, invocation: &str) {
    let url = format!("{}/invocations/{invocation}/cancel", r.admin);
    if let Err(e) = client().patch(&url).send().await {
        tracing::warn!(
            "could not cancel {invocation} in Restate: {:#}",
            anyhow::Error::from(e)
        );
    }
}

/// Waits for the workflow's output: the trace, or an exit code and why.
pub async fn attach(r: &Restate, id: &str) -> Result<Trace, (Failure, String)> {
    let url = format!("{}/restate/workflow/{SERVICE}/{id}/attach", r.ingress);
    // The ingress may restart under a long run: try again for a while.
    let mut lost: Option<std::time::Instant> = None;
    loop {
        let res = match client().get(&url).send().await {
            Ok(res) => res,
            Err(e) => {
                let since = *lost.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() > Duration::from_secs(60) {
                    return Err((
                        Failure::Unreachable,
                        format!(
                            "cannot reach Restate's ingress at {} (for a minute now): {:#}",
                            r.ingress,
                            anyhow::Error::from(e)
                        ),
                    ));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let status = res.status();
        // A balancer in front of a cluster's ingresses answers 502, 503 or
        // 504 while the node it sent the call to dies, and a node answers
        // 503 while its partition's leader moves: the run goes on in the
        // cluster, so wait as for a lost connection.
        if matches!(status.as_u16(), 502..=504) {
            let since = *lost.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() <= Duration::from_secs(60) {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        }
        let body: Value = match res.json().await {
            Ok(v) => v,
            Err(_) if status.is_success() => {
                return Err((Failure::Failed, "Restate's answer was not JSON".into()));
            }
            Err(_) => Value::Null,
        };
        if status.is_success() {
            return serde_json::from_value::<Trace>(body["trace"].clone()).map_err(|e| {
                (
                    Failure::Failed,
                    format!("the worker's answer is not a trace: {e}"),
                )
            });
        }
        let why = message_of(&body, status);
        return Err(match status.as_u16() {
            404 => (
                Failure::Refused,
                format!("Restate knows no run with this id ({why})"),
            ),
            // The worker refused the run (a terminal error of the handler).
            400..=499 => (Failure::Refused, why),
            _ => (
                Failure::Failed,
                format!("the run failed in Restate ({status}): {why}"),
            ),
        });
    }
}

fn message_of(body: &Value, status: reqwest::StatusCode) -> String {
    match body["message"].as_str() {
        Some(m) if !m.is_empty() => m.to_owned(),
        _ => status
            .canonical_reason()
            .unwrap_or("no reason given")
            .to_owned(),
    }
}

/// The questions of run `id` that wait for an answer, oldest first (the
/// workflow's `questions` handler).
pub async fn questions(r: &Restate, id: &str) -> Result<Vec<super::ask::Asked>, (Failure, String)> {
    let url = format!("{}/{SERVICE}/{id}/questions", r.ingress);
    let body = ingress_call(r, &url, None).await?;
    serde_json::from_value(body).map_err(|e| {
        (
            Failure::Failed,
            format!("the worker's list of questions makes no sense: {e}"),
        )
    })
}

/// Answers question `question` of run `id` (the workflow's `answer`
/// handler, which checks the answer against the question).
pub async fn answer(
    r: &Restate,
    id: &str,
    question: &str,
    given: &super::ask::Given,
) -> Result<(), (Failure, String)> {
    let url = format!("{}/{SERVICE}/{id}/answer", r.ingress);
    let req = json!({ "question": question, "answer": given });
    ingress_call(r, &url, Some(&req)).await.map(|_| ())
}

/// Hands question `q` of durable run `id` to whoever answers it and its
/// answer back to Restate, in a task of its own: `give` passes the
/// question on with where its answer goes (false when nobody takes it);
/// the answer resolves the question (as [`answer`] does) unless `given`
/// says it is none (the answerer went away). A question nobody answers
/// keeps waiting in Restate for `pipewright runs answer`; once `over` (the
/// run ended) the answerer's question is dropped.
pub fn relay<G>(
    r: &Restate,
    id: &str,
    q: super::ask::Asked,
    give: G,
    given: fn(&Answer) -> bool,
    over: &CancellationToken,
) where
    G: FnOnce(Question, oneshot::Sender<Answer>) -> futures::future::BoxFuture<'static, bool>
        + Send
        + 'static,
{
    let (reply, answered) = oneshot::channel();
    let (r, id, over) = (r.clone(), id.to_owned(), over.clone());
    tokio::spawn(async move {
        if !give(q.question(), reply).await {
            return;
        }
        let a = tokio::select! {
            a = answered => a,
            () = over.cancelled() => return,
        };
        let Ok(a) = a else {
            return;
        };
        if !given(&a) {
            return;
        }
        let g = super::ask::Given::of(&a.reply, a.by);
        if let Err((_, e)) = answer(&r, &id, &q.id, &g).await {
            // Answered meanwhile (`runs answer`), or the run ended.
            tracing::info!("the answer to {} of run {id} was not taken: {e}", q.id);
        }
    });
}

/// A request-response call through the ingress: the handler's JSON answer.
async fn ingress_call(
    r: &Restate,
    url: &str,
    body: Option<&Value>,
) -> Result<Value, (Failure, String)> {
    let mut req = client().post(url).timeout(Duration::from_secs(30));
    if let Some(b) = body {
        req = req.json(b);
    }
    let res = req.send().await.map_err(|e| unreachable(r, e))?;
    let status = res.status();
    let text = res.text().await.unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(v);
    }
    let why = message_of(&v, status);
    Err(match status.as_u16() {
        404 => (
            Failure::Unreachable,
            format!("no worker serves durable runs at {} ({why})", r.ingress),
        ),
        400..=499 => (Failure::Refused, why),
        _ => (Failure::Failed, format!("Restate answered {status}: {why}")),
    })
}

/// Where the client is in the run's journal.
pub struct Journal {
    pub invocation: Option<String>,
    /// The next journal index to read.
    pub next: u64,
}

impl Journal {
    /// The invocation of run `id`, looked up by its key.
    pub async fn find(&self, r: &Restate, id: &str) -> Option<String> {
        let q = format!(
            "SELECT id FROM sys_invocation WHERE target_service_name = '{SERVICE}' AND target_service_key = '{}' AND target_handler_name = 'run'",
            id.replace('\'', "''")
        );
        let rows = query(r, &q).await?;
        rows.first()
            .and_then(|row| row["id"].as_str())
            .map(str::to_owned)
    }

    /// What the journal gained since the last poll. Best effort: a failed
    /// query is tried again at the next tick.
    pub async fn poll(&mut self, r: &Restate, id: &str) -> Vec<Entry> {
        if self.invocation.is_none() {
            self.invocation = self.find(r, id).await;
        }
        let Some(inv) = &self.invocation else {
            return Vec::new();
        };
        let q = format!(
            "SELECT index, entry_json FROM sys_journal WHERE id = '{}' AND index >= {} ORDER BY index",
            inv.replace('\'', "''"),
            self.next
        );
        let Some(rows) = query(r, &q).await else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for row in rows {
            let index = row["index"].as_u64().unwrap_or(self.next);
            self.next = self.next.max(index + 1);
            if let Some(entry) = row["entry_json"].as_str().and_then(entry_of) {
                out.push(entry);
            }
        }
        out
    }
}

/// Runs a query on Restate's admin SQL API.
async fn query(r: &Restate, q: &str) -> Option<Vec<Value>> {
    let res = client()
        .post(format!("{}/query", r.admin))
        .header("accept", "application/json")
        .json(&json!({ "query": q }))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    if !res.status().is_success() {
        return None;
    }
    let body: Value = res.json().await.ok()?;
    body["rows"].as_array().cloned()
}

/// The journal entry in a `Run` completion as the admin API shows it
/// (`{"Notification":{"Completion":{"Run":{"result":{"Success":[bytes]}}}}}`).
fn entry_of(entry_json: &str) -> Option<Entry> {
    let v: Value = serde_json::from_str(entry_json).ok()?;
    let bytes = v
        .pointer("/Notification/Completion/Run/result/Success")?
        .as_array()?;
    let bytes: Vec<u8> = bytes
        .iter()
        .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
        .collect::<Option<_>>()?;
    serde_json::from_slice(&bytes).ok()
}

/// Restate's ingress did not answer a request.
fn unreachable(r: &Restate, e: reqwest::Error) -> (Failure, String) {
    (
        Failure::Unreachable,
        format!(
            "cannot reach Restate's ingress at {}: {:#}",
            r.ingress,
            anyhow::Error::from(e)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_restate_urls() {
        let r = Restate::parse("restate://127.0.0.1:8080", None).unwrap();
        assert_eq!(r.ingress, "http://127.0.0.1:8080");
        assert_eq!(r.admin, "http://127.0.0.1:9070");
        let r = Restate::parse("restate://h:1/", Some("http://a:2/")).unwrap();
        assert_eq!(
            (r.on.as_str(), r.admin.as_str()),
            ("restate://h:1", "http://a:2")
        );
        for bad in [
            "http://h:1",
            "restate://h",
            "restate://:1",
            "restate://h:x",
            "restate://h:1/p",
        ] {
            assert!(Restate::parse(bad, None).is_err(), "{bad}");
        }
        assert!(Restate::parse("restate://h:1", Some("a:2")).is_err());
    }

    #[test]
    fn reads_a_journal_entry_as_the_admin_api_shows_it() {
        let entry = Entry::Calls {
            calls: vec![],
            opened: Vec::new(),
            replayed: None,
        };
        let bytes: Vec<Value> = serde_json::to_vec(&entry)
            .unwrap()
            .into_iter()
            .map(Value::from)
            .collect();
        let shown = json!({"Notification": {"Completion": {"Run": {"completion_id": 2, "result": {"Success": bytes}}}}});
        assert_eq!(entry_of(&shown.to_string()), Some(entry));
        assert_eq!(entry_of(r#"{"Command":{"Run":{"name":"journal"}}}"#), None);
    }
}
