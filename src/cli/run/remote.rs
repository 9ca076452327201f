//! `run FILE --on restate://HOST:PORT` and `runs attach ID`: a durable run
//! submitted to Restate and followed to its end.
//!
//! The run goes to Restate's ingress as a `Pipewright` workflow keyed by a
//! new run id; a worker (`pipewright worker`) runs it. The client follows
//! the run's journal through Restate's admin SQL API (one line per call
//! outcome, one per worker that picked the run up), waits for the
//! workflow's output — the trace — and reports it as a local run is
//! reported: same formats, same history, same exit codes. The client can
//! die without the run noticing; `runs attach ID` follows it again.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::engine::file::model::Pipeline;
use crate::engine::run::durable::{Entry, Recorded};
use crate::engine::run::store;
use crate::engine::run::trace::{RunStatus, Trace};
use crate::options::exit;

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

/// What `run --on` submits, after the file was checked.
pub struct Submission<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub pipeline: &'a Pipeline,
    pub tool: String,
    pub args: serde_json::Map<String, Value>,
}

/// How the report goes out.
pub struct Report<'a> {
    pub format: crate::cli::output::Format,
    pub save: bool,
    pub otlp: Option<&'a std::path::Path>,
    pub otlp_endpoint: Option<&'a str>,
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default()
}

/// Starts run `id` in Restate: the invocation id, or an exit code and why.
async fn send(r: &Restate, id: &str, req: &RunRequest) -> Result<Option<String>, (u8, String)> {
    let url = format!("{}/{SERVICE}/{id}/run/send", r.ingress);
    let res = client().post(&url).json(req).send().await.map_err(|e| {
        (
            exit::UNREACHABLE,
            format!(
                "cannot reach Restate's ingress at {}: {:#}",
                r.ingress,
                anyhow::Error::from(e)
            ),
        )
    })?;
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        // 404: no worker registered the service yet.
        let code = if status.as_u16() == 404 {
            exit::UNREACHABLE
        } else {
            exit::INVALID
        };
        return Err((
            code,
            format!("Restate refused the run ({status}): {}", message_of(&body)),
        ));
    }
    Ok(body["invocationId"].as_str().map(str::to_owned))
}

/// Submits the run and follows it; returns the exit code.
pub async fn submit(r: &Restate, s: Submission<'_>, report: Report<'_>) -> u8 {
    let id = crate::engine::run::trace::new_run_id();
    let req = RunRequest {
        tool: s.tool.clone(),
        args: s.args,
        file_sha256: file_hash(s.source.as_bytes()),
    };
    let invocation = match send(r, &id, &req).await {
        Ok(inv) => inv,
        Err((code, sentence)) => {
            eprintln!("error: {sentence}");
            return code;
        }
    };
    eprintln!(
        "run {id} on {}: follow it again with `pipewright runs attach {id} --on {}`",
        r.on, r.on
    );
    follow(
        r,
        &id,
        invocation,
        Some((s.file, s.source, s.pipeline)),
        report,
    )
    .await
}

/// Runs `req` in Restate for `serve --on`: each journaled call is handed to
/// `on_call`; `cancel` cancels the invocation in Restate (the worker then
/// compensates) and the trace of the cancelled run still comes back.
pub async fn run_quiet(
    r: &Restate,
    req: &RunRequest,
    cancel: &CancellationToken,
    on_call: &mut (dyn FnMut(Recorded) -> futures::future::BoxFuture<'static, ()> + Send),
) -> Result<Trace, String> {
    let id = crate::engine::run::trace::new_run_id();
    let invocation = send(r, &id, req).await.map_err(|(_, s)| s)?;
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
                    if let Entry::Calls { calls } = e {
                        for c in calls {
                            on_call(c).await;
                        }
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
fn ticker() -> tokio::time::Interval {
    let period = Duration::from_millis(250);
    let mut t = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    t
}

/// Asks Restate to cancel an invocation (best effort).
async fn cancel_invocation(r: &Restate, invocation: &str) {
    let url = format!("{}/invocations/{invocation}/cancel", r.admin);
    if let Err(e) = client().patch(&url).send().await {
        eprintln!(
            "warning: could not cancel {invocation} in Restate: {:#}",
            anyhow::Error::from(e)
        );
    }
}

/// Follows run `id` to its end and reports it; returns the exit code.
pub async fn follow(
    r: &Restate,
    id: &str,
    invocation: Option<String>,
    file: Option<(&str, &str, &Pipeline)>,
    report: Report<'_>,
) -> u8 {
    let mut signals = super::watch::Signals::listen();
    // Progress lines go with the text report, as `run` prints them.
    let progress = report.format == crate::cli::output::Format::Text;
    let mut journal = Some(Journal {
        invocation,
        next: 0,
    });
    type Poll<'a> =
        std::pin::Pin<Box<dyn std::future::Future<Output = (Journal, Vec<Entry>)> + Send + 'a>>;
    let mut polling: Option<Poll<'_>> = None;
    let mut tick = ticker();
    let output = attach(r, id);
    tokio::pin!(output);
    let got = loop {
        tokio::select! {
            got = &mut output => break got,
            _ = tick.tick(), if progress && polling.is_none() => {
                if let Some(mut j) = journal.take() {
                    polling = Some(Box::pin(async move {
                        let e = j.poll(r, id).await;
                        (j, e)
                    }));
                }
            }
            (j, e) = async { polling.as_mut().expect("guarded").await }, if polling.is_some() => {
                polling = None;
                show(e);
                journal = Some(j);
            }
            stop = signals.next() => {
                eprintln!(
                    "\n{}: run {id} goes on in Restate; follow it again with `pipewright runs attach {id} --on {}`",
                    stop.notice(),
                    r.on
                );
                return stop.code();
            }
        }
    };
    if progress {
        // The lines of the last calls, if no poll had seen them.
        let j = match polling.take() {
            Some(p) => {
                let (j, e) = p.await;
                show(e);
                Some(j)
            }
            None => journal.take(),
        };
        if let Some(mut j) = j {
            show(j.poll(r, id).await);
        }
    }
    let mut trace = match got {
        Ok(t) => t,
        Err((code, sentence)) => {
            eprintln!("error: run {id}: {sentence}");
            return code;
        }
    };
    trace.run_id = id.to_owned();
    if let Some(d) = trace.durable.as_mut() {
        d.restate = r.on.clone();
    }
    let name = file.map_or_else(|| trace.file.clone(), |f| f.0.to_owned());
    if report.save {
        match file {
            Some((_, source, _)) => store::save_with_source(&trace, source),
            None => store::save(&trace),
        }
    }
    let traces = [trace];
    crate::cli::output::print(
        report.format,
        &traces,
        &name,
        file.map(|(_, source, p)| (p, source, crate::engine::file::import::Dialect::Auto)),
    );
    if let Some(code) =
        crate::cli::output::export_otlp(&traces, report.otlp, report.otlp_endpoint).await
    {
        return code;
    }
    let t = &traces[0];
    match t.composition.status {
        RunStatus::Cancelled => exit::CANCELLED,
        RunStatus::BudgetExceeded => exit::BUDGET,
        _ if t.passed() => exit::OK,
        _ => exit::FAILED,
    }
}

/// Waits for the workflow's output: the trace, or an exit code and why.
async fn attach(r: &Restate, id: &str) -> Result<Trace, (u8, String)> {
    let url = format!("{}/restate/workflow/{SERVICE}/{id}/attach", r.ingress);
    let mut lost = 0u32;
    loop {
        let res = match client().get(&url).send().await {
            Ok(res) => res,
            Err(e) => {
                // The ingress went away (restarted, say): the run did not.
                lost += 1;
                if lost == 1 {
                    eprintln!(
                        "warning: lost Restate's ingress ({:#}); trying again",
                        anyhow::Error::from(e)
                    );
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let status = res.status();
        let body: Value = match res.json().await {
            Ok(v) => v,
            Err(_) if status.is_success() => {
                return Err((exit::FAILED, "Restate's answer was not JSON".into()));
            }
            Err(_) => Value::Null,
        };
        if status.is_success() {
            return serde_json::from_value::<Trace>(body["trace"].clone()).map_err(|e| {
                (
                    exit::FAILED,
                    format!("the worker's answer is not a trace: {e}"),
                )
            });
        }
        if status.as_u16() == 404 {
            return Err((
                exit::INVALID,
                format!("Restate knows no run with this id ({})", message_of(&body)),
            ));
        }
        // A terminal failure: the worker refused the run.
        return Err((exit::INVALID, message_of(&body)));
    }
}

fn message_of(body: &Value) -> String {
    body["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| body.to_string())
}

/// Prints journal entries as `run` prints finished nodes.
fn show(entries: Vec<Entry>) {
    for e in entries {
        match e {
            Entry::Attempt(a) => eprintln!("↻ {} picked the run up at {}", a.worker, a.at),
            Entry::Calls { calls } => {
                for c in calls {
                    let mark = match &c.outcome {
                        Ok(o) if !o.is_error => "✓",
                        _ => "✗",
                    };
                    let ms = c.outcome.as_ref().map_or(0, |o| o.duration_ms);
                    eprintln!(
                        "{mark} {} · {} · {ms}ms · journaled by {}",
                        c.node.as_deref().unwrap_or("-"),
                        c.tool,
                        c.worker
                    );
                }
            }
        }
    }
}

/// Where the client is in the run's journal.
struct Journal {
    invocation: Option<String>,
    /// The next journal index to read.
    next: u64,
}

impl Journal {
    /// The invocation of run `id`, looked up by its key.
    async fn find(&self, r: &Restate, id: &str) -> Option<String> {
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
    async fn poll(&mut self, r: &Restate, id: &str) -> Vec<Entry> {
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
        let entry = Entry::Calls { calls: vec![] };
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
